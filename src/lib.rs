//! toolgauge: evaluate and benchmark how language models call tools.
//!
//! A [`suite`] of cases is compiled into plan-ready values (its MCP servers' tool lists
//! are listed first by [`mcp::suites::load`]); the [`runner`] plays every trial the same
//! way, a [`provider`] answering it (live OpenAI-compatible, Anthropic and Gemini APIs,
//! replayed cassettes) in one round, or in an [`episode`] of rounds against a tool host
//! ([`tools`], [`mcp`]); the [`judge`] stage turns what happened into a verdict; [`score`]
//! computes metrics from the trial records; [`report`] writes the run directory and the
//! terminal summary; [`compare`] pairs two runs; [`lint`] checks tool definitions statically. Benchmarks ([`bfcl`], [`when2call`]) and
//! the [`scripted`] models (the oracle) are plugins on that core, and [`app`] ties it
//! together for the command line. [`layers`] says which module may use which, and a test
//! keeps it so; `docs/architecture.md` follows one trial from suite file to report.

#![warn(missing_docs)]

pub mod app;
pub mod behaviour;
pub mod bfcl;
pub mod chat;
pub mod cli;
pub mod compare;
pub mod episode;
pub mod exit;
pub mod functions;
pub mod improve;
pub mod judge;
pub mod layers;
pub mod lint;
pub mod mcp;
pub mod provider;
pub mod report;
pub mod runner;
pub mod score;
pub mod scripted;
pub mod suite;
pub mod tools;
pub mod util;
pub mod when2call;
