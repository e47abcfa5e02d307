//! The record of one trial, as written to `trials.jsonl` and read back by reports.

use serde::{Deserialize, Serialize};

use super::trial::{Reason, TrialChecks};
use crate::provider::{Message, Response, ToolChoice};
use crate::suite::CaseKind;

/// The outcome of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Scored, and the expectation held.
    Pass,
    /// Scored, and it did not.
    Fail,
    /// Not scored: the provider gave no response (the reason says why).
    Error,
}

/// One trial: the cell, what was asked, what came back, the checks and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Case id.
    pub case_id: String,
    /// The kind in force under this trial's tool_choice.
    pub kind: CaseKind,
    /// The case's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Target as written.
    pub target: String,
    /// Description variant.
    pub variant: String,
    /// tool_choice mode.
    pub tool_choice: ToolChoice,
    /// Repeat index, from 0.
    pub repeat: u32,
    /// The conversation sent (the tools are those of `variant`, listed in `run.json`).
    pub messages: Vec<Message>,
    /// The response, unless the trial errored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Response>,
    /// The checks, when scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<TrialChecks>,
    /// Pass, fail or error.
    pub verdict: Verdict,
    /// Why it failed or errored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// Cost in USD from the price table, when the model has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl TrialRecord {
    /// True when the trial passed.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }
}
