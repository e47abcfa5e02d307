//! toolgauge: evaluate and benchmark how language models call tools.
//!
//! A [`suite`] of cases runs across a matrix of targets, description variants and
//! tool_choice modes; a [`provider`] answers each trial (replayed cassettes, a scripted
//! model, later live APIs); [`score`] judges every trial and aggregates metrics;
//! [`report`] writes the run directory and the terminal summary. [`app`] ties them
//! together for the command line.

pub mod app;
pub mod bfcl;
pub mod cli;
pub mod compare;
pub mod exit;
pub mod provider;
pub mod report;
pub mod runner;
pub mod score;
pub mod suite;
