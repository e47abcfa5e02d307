//! What a search leaves behind: `improve.json` (the contract keys `rounds`, `accepted`
//! and `final`), the data of `improve.html` and of the terminal summary.
//!
//! Every figure is the search's own: scores on the training set of the wordings it
//! tried, the held-out decision on the best of each round, the search's cost.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::decide::Decision;

/// `improve.json`'s format; raised when a key changes meaning.
pub const IMPROVE_FORMAT: u32 = 1;

/// One tool's wording: its description and the descriptions of its top-level
/// parameters (only those that have one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolText {
    /// The tool's description (`""` when it has none).
    pub description: String,
    /// Parameter descriptions, by top-level parameter name, in schema order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameters: IndexMap<String, String>,
}

/// A metric's value on a set of cases, with its 95% interval where one is defined.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// The value (a fraction for rates); `None` when no case measured it.
    pub value: Option<f64>,
    /// Lower end of the 95% Wilson interval (pass/fail metrics only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// Upper end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// Trials that measured it.
    pub n: u64,
}

/// One candidate wording of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateReport {
    /// The variant name it ran under in the search's run (`r2c1`: round 2, candidate 1).
    pub variant: String,
    /// The proposer's reason for it.
    pub rationale: String,
    /// The tools it words differently from the round's current wording, in full.
    pub tools: IndexMap<String, ToolText>,
    /// What of the proposal was left out (unknown tools or parameters, empty text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// The objective on the training cases.
    pub training: Score,
    /// Tokens of the whole tool list under this wording.
    pub definition_tokens: u64,
}

/// The proposer's part of a round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProposerReport {
    /// Requests made (a malformed answer is asked again once).
    pub attempts: u32,
    /// What was wrong with each answer that could not be read, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Cost of the proposer's requests in this round, in USD, when priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// One round of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundReport {
    /// From 1.
    pub round: u32,
    /// The variant name of the wording the round started from.
    pub current: String,
    /// The current wording's objective on the training cases.
    pub current_training: Score,
    /// And on the held-out cases.
    pub current_held_out: Score,
    /// The proposer's requests.
    pub proposer: ProposerReport,
    /// The candidates, in the proposer's order.
    pub candidates: Vec<CandidateReport>,
    /// Index into `candidates` of the one tested on the held-out cases: the best on the
    /// training set (ties to fewer definition tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<usize>,
    /// The best candidate's objective on the held-out cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_held_out: Option<Score>,
    /// The held-out decision on the best candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Why the best candidate was not tested on the held-out cases (it did not beat
    /// the current wording on the training cases), when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested: Option<String>,
    /// Whether the best candidate became the current wording.
    pub accepted: bool,
    /// What the search had spent once this round ended, in USD (target and proposer).
    pub cost_so_far_usd: f64,
}

/// A wording the search accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accepted {
    /// The round that accepted it.
    pub round: u32,
    /// Its variant name in the search's run.
    pub variant: String,
    /// The tools it changed, in full, as accepted.
    pub tools: IndexMap<String, ToolText>,
    /// The held-out paired test's two-sided p-value.
    pub p_value: f64,
    /// The objective's held-out gain (candidate minus current).
    pub delta: f64,
}

/// The two case sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sets {
    /// Training case ids, in suite order.
    pub training: Vec<String>,
    /// Held-out case ids, in suite order.
    pub held_out: Vec<String>,
    /// Where the held-out cases came from: `split` (seeded, stratified by kind) or the
    /// `--holdout-suite` file.
    pub source: String,
}

/// `improve.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImproveReport {
    /// [`IMPROVE_FORMAT`].
    pub improve_format: u32,
    /// The toolgauge version that searched.
    pub toolgauge_version: String,
    /// The suite's name.
    pub suite: String,
    /// The suite file as given.
    pub suite_path: String,
    /// The target whose calls are scored.
    pub target: String,
    /// The model proposing wordings.
    pub proposer: String,
    /// The variant the search started from.
    pub base_variant: String,
    /// The objective metric.
    pub objective: String,
    /// The guard metrics.
    pub guards: Vec<String>,
    /// The whole search's significance level.
    pub alpha: f64,
    /// The split's seed.
    pub seed: u64,
    /// The training and held-out cases.
    pub sets: Sets,
    /// The wording the search started from, per tool (every tool of the suite).
    pub original: IndexMap<String, ToolText>,
    /// One entry per round played.
    pub rounds: Vec<RoundReport>,
    /// The accepted wordings, in order.
    pub accepted: Vec<Accepted>,
    /// The final wording per tool (every tool of the suite).
    #[serde(rename = "final")]
    pub final_wording: IndexMap<String, ToolText>,
    /// The final wording's variant name in the search's run (`base` when nothing was
    /// accepted).
    pub final_variant: String,
    /// Why the search stopped.
    pub stop: String,
    /// The whole search's cost in USD (target and proposer), when priced.
    pub cost_usd: f64,
    /// Definition tokens of the whole tool list: as it started, and as it ends.
    pub definition_tokens: TokensBeforeAfter,
}

/// A before and after in tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokensBeforeAfter {
    /// The starting wording's.
    pub original: u64,
    /// The final wording's.
    pub r#final: u64,
}
