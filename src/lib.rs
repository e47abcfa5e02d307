//! toolgauge: evaluate and benchmark how language models call tools.
//!
//! A [`suite`] of cases runs across a matrix of targets, description variants and
//! tool_choice modes; a [`provider`] answers each trial (replayed cassettes, a scripted
//! model, live OpenAI-compatible, Anthropic and Gemini APIs, BFCL result files);
//! [`score`] judges every trial and aggregates metrics (or a declared profile such as
//! [`bfcl`]'s checker does); [`report`] writes the run directory and the terminal
//! summary; [`compare`] pairs two runs. [`app`] ties them together for the command line.

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
pub mod judge;
pub mod layers;
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
