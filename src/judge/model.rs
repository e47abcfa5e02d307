//! The judge model: a target that reads a trial's text answer and says which behaviour
//! it shows, or whether it meets a free-text rubric, as When2Call's own protocol does.
//!
//! Here: the record and verdict types; the prompts ([`prompt`]) and the reading of the
//! judge's answers ([`verdict`]). The requests are sent by the runner
//! ([`crate::runner::judged`]) through the run's providers, so they are recorded,
//! replayed, rate-limited and budgeted as the model's are (docs/judge.md).

pub mod prompt;
pub mod verdict;

use serde::{Deserialize, Serialize};

use crate::behaviour::Behaviour;
use crate::provider::Usage;

/// What the judge was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeQuestion {
    /// Which behaviour the text answer shows.
    Behaviour,
    /// Whether the final answer meets the case's `final.rubric`.
    Rubric,
}

/// One request to the judge, stored with the trial (`judge` in `trials.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeCall {
    /// What it was asked.
    pub question: JudgeQuestion,
    /// The judge target as written.
    pub target: String,
    /// Its behaviour verdict (`question: behaviour`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<Behaviour>,
    /// Its rubric verdict (`question: rubric`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<bool>,
    /// Why, in the judge's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rationale: String,
    /// Why the judge gave no verdict (the trial is then an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The judge's tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The judge's cost in USD, when its model has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Time spent waiting for the judge, in milliseconds.
    #[serde(default)]
    pub latency_ms: f64,
}

/// The judge's verdicts on one trial, handed to the scorer
/// ([`crate::judge::CaseScorer::score_judged`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeVerdicts {
    /// The behaviour of the text answer, with the judge's rationale.
    pub behaviour: Option<(Behaviour, String)>,
    /// The rubric verdict, with the judge's rationale.
    pub rubric: Option<(bool, String)>,
}
