//! Command-line integration tests: one test binary that runs the debug `toolgauge`
//! binary in scratch directories and checks exit codes, messages and run directories.
//!
//! Fixtures live in `tests/integration/fixtures/`; tests copy what they need into a
//! temporary directory so messages name short relative paths.

mod bad_input;
mod behaviour;
mod behaviour_classifier;
mod behaviour_metrics;
mod bfcl;
mod bfcl_multi;
mod bfcl_world;
mod browser;
mod cache_cost;
mod cassettes;
mod ci_recipe;
mod compare;
mod distractors;
mod end_state;
mod hostile;
mod http2;
mod improve;
mod judge;
mod large_results;
mod lint;
mod lint_evidence;
mod live;
mod loop_live;
mod loop_reports;
mod loop_suites;
mod loop_wire;
mod loops;
mod mcp_client;
mod mcp_commands;
mod mcp_conformance;
mod mcp_http;
mod mcp_loops;
mod mcp_peers;
mod mcp_snapshot_drift;
mod oracle;
mod ports;
mod prices;
mod readme;
mod resume;
mod run;
mod sampling;
mod schema;
mod scripted;
mod select;
mod shard;
mod smollm2;
mod snapshots;
mod stream;
mod stream_loops;
mod support;
mod validate;
mod variants;
mod warnings;
mod when2call;
