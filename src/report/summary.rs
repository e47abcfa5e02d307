//! The run summary: metrics per cell and overall, the token size of each variant's tool
//! definitions, and threshold results. Serialised as `summary.json` (schema versioned by
//! [`SUMMARY_VERSION`]).

use rustc_hash::FxHashMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::score::metrics::Metrics;
use crate::score::thresholds::{self, CellView, ThresholdResult};
use crate::score::{TrialRecord, Verdict};
use crate::suite::{Suite, Threshold};
use crate::util::limits::MAX_REPEATS;

/// Version of the `summary.json` format. 2 added each cell's `outcomes`.
pub const SUMMARY_VERSION: u32 = 2;

/// Character of a passed trial in [`CellSummary::outcomes`].
pub const OUTCOME_PASS: char = 'P';
/// Character of a failed trial.
pub const OUTCOME_FAIL: char = 'F';
/// Character of a trial that ended with an error.
pub const OUTCOME_ERROR: char = 'E';
/// Character of a repeat with no trial (a run stopped early).
pub const OUTCOME_MISSING: char = '-';

/// Metrics of one cell.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CellSummary {
    /// Target as written.
    pub target: String,
    /// Variant.
    pub variant: String,
    /// tool_choice.
    pub tool_choice: String,
    /// Distractors added to each request (`distractors:`); absent without the axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractors: Option<u32>,
    /// The cell's answers were streamed (`--stream`); absent when not, so summaries
    /// of runs without streaming are as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Token size of this variant's tool definitions (o200k_base).
    pub tool_definition_tokens: u64,
    /// Metrics.
    pub metrics: Metrics,
    /// Every trial's verdict, by case id: one character per repeat, in repeat order
    /// (`P` pass, `F` fail, `E` error, `-` not run). Enough for `toolgauge compare` to
    /// pair two runs from their summaries alone.
    #[serde(default)]
    pub outcomes: IndexMap<String, String>,
}

/// The token size of one variant's tool definitions and system prompt, and what the
/// variant changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariantTokens {
    /// Variant.
    pub variant: String,
    /// Tokens of all tool definitions under this variant (descriptions, parameter
    /// descriptions and schemas as sent).
    pub tool_definition_tokens: u64,
    /// Tokens of the system prompt this variant sends to cases without one of their
    /// own; present when some variant of the run sets its own system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<u64>,
    /// What the variant changes, as the suite declares it; absent when it changes
    /// nothing (and in runs written before variants recorded it).
    #[serde(default, skip_serializing_if = "VariantChanges::is_empty")]
    pub changes: VariantChanges,
}

/// What one variant changes, as the suite declares it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VariantChanges {
    /// Tools whose description the variant words itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub descriptions: Vec<String>,
    /// Parameter descriptions the variant sets: the parameter paths by tool.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameter_descriptions: IndexMap<String, Vec<String>>,
    /// Tools whose argument schema the variant replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schemas: Vec<String>,
    /// The variant sets its own system prompt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub system_prompt: bool,
}

impl VariantChanges {
    /// True when the variant changes nothing.
    pub fn is_empty(&self) -> bool {
        self.descriptions.is_empty()
            && self.parameter_descriptions.is_empty()
            && self.schemas.is_empty()
            && !self.system_prompt
    }

    /// What `variant` changes in `suite` (the suite's tools and the cases' own, each
    /// tool once by name).
    pub fn of(suite: &Suite, variant: &str) -> VariantChanges {
        let mut out = VariantChanges {
            system_prompt: suite.variant_systems.contains_key(variant),
            ..VariantChanges::default()
        };
        let tools = suite
            .tools
            .iter()
            .chain(suite.cases.iter().flat_map(|c| c.tools.iter().flatten()));
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for t in tools.filter(|t| !t.variants.is_empty()) {
            let Some(v) = t.variant(variant) else {
                continue;
            };
            if !seen.insert(t.name.as_str()) {
                continue;
            }
            if v.description.is_some() {
                out.descriptions.push(t.name.clone());
            }
            if !v.parameter_descriptions.is_empty() {
                out.parameter_descriptions
                    .insert(t.name.clone(), v.parameter_descriptions.clone());
            }
            if v.replaces_schema {
                out.schemas.push(t.name.clone());
            }
        }
        out
    }

    /// The changes in words, e.g. `get_weather: description, parameter descriptions
    /// (city, date); system prompt`; empty when there are none.
    pub fn describe(&self) -> String {
        let mut tools: IndexMap<&str, Vec<String>> = IndexMap::new();
        for t in &self.descriptions {
            tools.entry(t).or_default().push("description".into());
        }
        for (t, paths) in &self.parameter_descriptions {
            tools
                .entry(t)
                .or_default()
                .push(format!("parameter descriptions ({})", paths.join(", ")));
        }
        for t in &self.schemas {
            tools.entry(t).or_default().push("schema".into());
        }
        let mut parts: Vec<String> = tools
            .into_iter()
            .map(|(t, what)| format!("{t}: {}", what.join(", ")))
            .collect();
        if self.system_prompt {
            parts.push("system prompt".into());
        }
        parts.join("; ")
    }
}

/// What `run.json` keeps of one variant beyond its tool definitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantDetails {
    /// The system prompt sent to cases without one of their own (kept when some variant
    /// sets its own; `None`: none is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Its o200k_base token size (see [`VariantTokens::system_prompt_tokens`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<u64>,
    /// What the variant changes.
    #[serde(default, skip_serializing_if = "VariantChanges::is_empty")]
    pub changes: VariantChanges,
}

impl VariantTokens {
    /// The variants of a run from its `run.json`, in matrix order.
    pub fn from_meta(meta: &super::RunMeta) -> Vec<VariantTokens> {
        meta.matrix
            .variants
            .iter()
            .map(|v| {
                let details = meta.variant_details.get(v).cloned().unwrap_or_default();
                VariantTokens {
                    variant: v.clone(),
                    tool_definition_tokens: meta
                        .tool_definition_tokens
                        .get(v)
                        .copied()
                        .unwrap_or(0),
                    system_prompt_tokens: details.system_prompt_tokens,
                    changes: details.changes,
                }
            })
            .collect()
    }
}

/// A short failure line for the terminal and reports.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FailureLine {
    /// Case id.
    pub case_id: String,
    /// Cell as `target × variant × tool_choice`.
    pub cell: String,
    /// Repeat.
    pub repeat: u32,
    /// `fail` or `error`.
    pub verdict: String,
    /// The first reason.
    pub reason: String,
}

/// How many of `lines` failed and how many ended in an error, as a heading says it:
/// `failures (3)`, `errors (10)` or `failures (3) and errors (7)` (an error is not the
/// model's failure, so it is not counted as one).
pub fn failure_heading(lines: &[FailureLine]) -> String {
    let errors = lines.iter().filter(|f| f.verdict == "error").count();
    let failed = lines.len() - errors;
    match (failed, errors) {
        (f, 0) => format!("failures ({f})"),
        (0, e) => format!("errors ({e})"),
        (f, e) => format!("failures ({f}) and errors ({e})"),
    }
}

/// A trial whose response carried warnings: it was scored as usual, but something the
/// server or a file sent was not trusted (an implausible usage, ignored and counted
/// offline instead; a call id an earlier round of its loop used, given one of its own).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WarningLine {
    /// Case id.
    pub case_id: String,
    /// Cell as `target × variant × tool_choice`.
    pub cell: String,
    /// Repeat.
    pub repeat: u32,
    /// The response's warnings, in order.
    pub warnings: Vec<String>,
}

/// Everything a summary report shows.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Summary {
    /// Format version.
    pub summary_version: u32,
    /// Suite name.
    pub suite: String,
    /// Cells in matrix order.
    pub cells: Vec<CellSummary>,
    /// All trials together.
    pub overall: Metrics,
    /// Tool-definition size per variant.
    pub variants: Vec<VariantTokens>,
    /// Threshold checks.
    pub thresholds: Vec<ThresholdResult>,
    /// Failed and errored trials, briefly.
    pub failures: Vec<FailureLine>,
    /// Why the run stopped before every planned trial ran, with the counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The part of the suite a partial run covers (`7 of 13 cases: --tag smoke`, `shard
    /// 2/3`); absent when every trial of the matrix ran. Thresholds of a partial run hold
    /// for that part only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<String>,
    /// Trials whose response carried warnings, in journal order; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningLine>,
    /// Tool-count scaling (suites with `distractors:`): selection accuracy, false-call
    /// rate and tool tokens per series and count; absent without the axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distractors: Vec<super::distractors::DistractorRow>,
}

/// A trial's cell as `target × variant × tool_choice`, with ` × N=n` when it has a
/// distractor count and ` × stream` when it was streamed.
pub fn cell_label(t: &TrialRecord) -> String {
    let mut s = format!("{} × {} × {}", t.target, t.variant, t.tool_choice);
    if let Some(n) = crate::score::distractors::record_n(t) {
        s.push_str(&format!(" × N={n}"));
    }
    if t.stream {
        s.push_str(" × stream");
    }
    s
}

/// A cell's tool_choice as the reports' mode column shows it: with its distractor
/// count (` × N=n`) and its stream mode (` × stream`) when it has them.
pub fn cell_mode(c: &CellSummary) -> String {
    stream_mode_label(
        super::distractors::mode_label(&c.tool_choice, c.distractors),
        c.stream,
    )
}

impl CellSummary {
    /// The cell as `target × variant × tool_choice`, with ` × N=n` and ` × stream`
    /// as [`cell_label`] gives its trials'.
    pub fn label(&self) -> String {
        format!("{} × {} × {}", self.target, self.variant, cell_mode(self))
    }
}

/// `mode` with ` × stream` joined when `stream`.
pub fn stream_mode_label(mut mode: String, stream: bool) -> String {
    if stream {
        mode.push_str(" × ");
        mode.push_str(crate::score::stream::STREAM_LABEL);
    }
    mode
}

/// The verdict characters of one cell's trials, by case in order of first appearance.
fn outcomes(trials: &[&TrialRecord]) -> IndexMap<String, String> {
    let mut by_case: IndexMap<&str, Vec<char>> = IndexMap::new();
    for t in trials {
        // A run never has more repeats; a larger index can only come from an edited
        // journal, and must not size a string.
        if t.repeat >= MAX_REPEATS {
            continue;
        }
        let v = by_case.entry(t.case_id.as_str()).or_default();
        let i = t.repeat as usize;
        if v.len() <= i {
            v.resize(i + 1, OUTCOME_MISSING);
        }
        v[i] = match t.verdict {
            Verdict::Pass => OUTCOME_PASS,
            Verdict::Fail => OUTCOME_FAIL,
            Verdict::Error => OUTCOME_ERROR,
        };
    }
    by_case
        .into_iter()
        .map(|(case, v)| (case.to_string(), v.into_iter().collect()))
        .collect()
}

impl Summary {
    /// Summarise `trials` of `cells` (in matrix order).
    pub fn build(
        suite: &str,
        cells: &[(String, String, String)],
        variants: &[VariantTokens],
        trials: &[TrialRecord],
        gates: &[Threshold],
    ) -> Summary {
        type CellKey<'a> = (&'a str, &'a str, String, Option<u32>, bool);
        let mut by_cell: FxHashMap<CellKey<'_>, Vec<&TrialRecord>> = FxHashMap::default();
        for t in trials {
            by_cell
                .entry((
                    t.target.as_str(),
                    t.variant.as_str(),
                    t.tool_choice.to_string(),
                    crate::score::distractors::record_n(t),
                    t.stream,
                ))
                .or_default()
                .push(t);
        }
        // The stream modes the trials carry (unstreamed first): a run with both has
        // each cell twice, side by side; a run without streaming one as before.
        let streams: Vec<bool> = {
            let (off, on) = (
                trials.iter().any(|t| !t.stream),
                trials.iter().any(|t| t.stream),
            );
            match (off, on) {
                (_, false) => vec![false],
                (false, true) => vec![true],
                (true, true) => vec![false, true],
            }
        };
        // With the tool-count axis each cell is one per count the trials carry
        // (ascending); without it, one with no count, as before.
        let counts: Vec<Option<u32>> = {
            let mut n: Vec<u32> = trials
                .iter()
                .filter_map(crate::score::distractors::record_n)
                .collect();
            n.sort_unstable();
            n.dedup();
            if n.is_empty() {
                vec![None]
            } else {
                n.into_iter().map(Some).collect()
            }
        };
        // A plan lists a cell once per count; the counts come from the trials instead.
        let mut unique: Vec<&(String, String, String)> = Vec::with_capacity(cells.len());
        for c in cells {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        // The overall metrics and the failure and warning lines go over every trial
        // once more; they are worked out on another thread while the cells are (this
        // runs between a big run's last answer and its reports).
        let (cell_summaries, (overall, failures, warnings)) = std::thread::scope(|scope| {
            let side = scope.spawn(|| {
                (
                    Metrics::of(trials),
                    failure_lines(trials),
                    warning_lines(trials),
                )
            });
            let mut cell_summaries =
                Vec::with_capacity(unique.len() * counts.len() * streams.len());
            for (((target, variant, mode), n), stream) in unique
                .into_iter()
                .flat_map(|c| counts.iter().map(move |n| (c, *n)))
                .flat_map(|c| streams.iter().map(move |s| (c, *s)))
            {
                let key = (target.as_str(), variant.as_str(), mode.clone(), n, stream);
                let in_cell = by_cell.get(&key).map(Vec::as_slice).unwrap_or_default();
                let metrics = Metrics::of(in_cell.iter().copied());
                cell_summaries.push(CellSummary {
                    target: target.clone(),
                    variant: variant.clone(),
                    tool_choice: mode.clone(),
                    distractors: n,
                    stream,
                    tool_definition_tokens: variants
                        .iter()
                        .find(|v| &v.variant == variant)
                        .map_or(0, |v| v.tool_definition_tokens),
                    metrics,
                    outcomes: outcomes(in_cell),
                });
            }
            let side = side.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (cell_summaries, side)
        });
        let views: Vec<CellView<'_>> = cell_summaries
            .iter()
            .map(|c| CellView {
                target: &c.target,
                variant: &c.variant,
                tool_choice: c.tool_choice.clone(),
                metrics: &c.metrics,
                tool_definition_tokens: c.tool_definition_tokens,
                stream: c.stream,
            })
            .collect();
        let thresholds = thresholds::check(gates, &overall, &views);
        Summary {
            summary_version: SUMMARY_VERSION,
            suite: suite.to_string(),
            cells: cell_summaries,
            overall,
            variants: variants.to_vec(),
            thresholds,
            failures,
            stopped: None,
            selection: None,
            warnings,
            distractors: super::distractors::rows(trials),
        }
    }

    /// True when every threshold holds.
    pub fn thresholds_ok(&self) -> bool {
        self.thresholds.iter().all(|t| t.ok)
    }
}

/// A line per trial that did not pass, for the terminal and `summary.json`.
fn failure_lines(trials: &[TrialRecord]) -> Vec<FailureLine> {
    trials
        .iter()
        .filter(|t| !t.passed())
        .map(|t| FailureLine {
            case_id: t.case_id.clone(),
            cell: cell_label(t),
            repeat: t.repeat,
            verdict: if t.verdict == Verdict::Error {
                "error"
            } else {
                "fail"
            }
            .into(),
            reason: t
                .reasons
                .iter()
                .map(|r| r.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect()
}

/// A line per trial whose response carried warnings: a loop trial's are those of every
/// round (the first round's response is the record's `response`, so it is read once).
fn warning_lines(trials: &[TrialRecord]) -> Vec<WarningLine> {
    trials
        .iter()
        .filter_map(|t| {
            let mut w = t
                .response
                .as_ref()
                .map(|r| r.warnings.clone())
                .unwrap_or_default();
            if let Some(e) = &t.episode {
                for r in e.rounds.iter().skip(1) {
                    w.extend(r.response.warnings.iter().cloned());
                }
            }
            (!w.is_empty()).then(|| WarningLine {
                case_id: t.case_id.clone(),
                cell: cell_label(t),
                repeat: t.repeat,
                warnings: w,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_failure_heading_tells_failures_from_errors() {
        let line = |verdict: &str| FailureLine {
            case_id: "c".into(),
            cell: "t × v × auto".into(),
            repeat: 0,
            verdict: verdict.into(),
            reason: "r".into(),
        };
        let fails = vec![line("fail"), line("fail")];
        assert_eq!(failure_heading(&fails), "failures (2)");
        assert_eq!(failure_heading(&[line("error")]), "errors (1)");
        let mixed = vec![line("fail"), line("error"), line("error")];
        assert_eq!(failure_heading(&mixed), "failures (1) and errors (2)");
    }

    use super::*;
    use crate::provider::{Response, ToolChoice};
    use crate::suite::CaseKind;

    fn trial(case: &str, variant: &str, repeat: u32, verdict: Verdict) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind: CaseKind::ShouldCall,
            tags: vec![],
            target: "t".into(),
            variant: variant.into(),
            tool_choice: ToolChoice::Auto,
            repeat,
            stream: false,
            messages: vec![],
            response: (verdict != Verdict::Error).then(Response::default),
            checks: None,
            verdict,
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    #[test]
    fn outcomes_keep_every_verdict_by_case_and_repeat() {
        let trials = vec![
            trial("b", "v", 1, Verdict::Fail),
            trial("a", "v", 0, Verdict::Pass),
            trial("b", "v", 0, Verdict::Pass),
            // Repeat 1 of `a` never ran (a stopped run).
            trial("a", "v", 2, Verdict::Error),
            trial("a", "w", 0, Verdict::Fail),
            // Beyond any real run: left out rather than sizing a string.
            trial("c", "v", u32::MAX, Verdict::Pass),
        ];
        let cells = vec![
            ("t".to_string(), "v".to_string(), "auto".to_string()),
            ("t".to_string(), "w".to_string(), "auto".to_string()),
        ];
        let s = Summary::build("s", &cells, &[], &trials, &[]);
        let v: Vec<(&str, &str)> = s.cells[0]
            .outcomes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(v, [("b", "PF"), ("a", "P-E")]);
        assert_eq!(s.cells[1].outcomes["a"], "F");
        assert_eq!(s.summary_version, 2);
    }

    #[test]
    fn warnings_list_each_trial_whose_response_carried_some() {
        let mut warned = trial("b", "v", 1, Verdict::Pass);
        warned.response.as_mut().unwrap().warnings = vec![
            "implausible usage from the server ignored: x".into(),
            "y".into(),
        ];
        let trials = vec![
            trial("a", "v", 0, Verdict::Pass),
            warned,
            // An errored trial has no response, so no warnings.
            trial("c", "v", 0, Verdict::Error),
        ];
        let cells = vec![("t".to_string(), "v".to_string(), "auto".to_string())];
        let s = Summary::build("s", &cells, &[], &trials, &[]);
        assert_eq!(s.warnings.len(), 1);
        let w = &s.warnings[0];
        assert_eq!((w.case_id.as_str(), w.repeat), ("b", 1));
        assert_eq!(w.cell, "t × v × auto");
        assert_eq!(
            w.warnings,
            ["implausible usage from the server ignored: x", "y"]
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["warnings"][0]["case_id"], "b");

        // A loop trial's warnings are every round's, the first round's (its `response`)
        // once.
        let mut looped = trial("d", "v", 0, Verdict::Pass);
        let round = |warnings: &[&str]| crate::episode::RoundRecord {
            sent: 1,
            user: None,
            response: crate::provider::Response {
                warnings: warnings.iter().map(|w| w.to_string()).collect(),
                ..Default::default()
            },
            outcomes: Vec::new(),
            tool_ms: 0.0,
        };
        looped.response.as_mut().unwrap().warnings = vec!["first".into()];
        looped.episode = Some(crate::score::record::EpisodeRecord {
            end_state: Vec::new(),
            rounds: vec![
                round(&["first"]),
                round(&[]),
                round(&["round 3: reused id"]),
            ],
            stop: None,
            checks: None,
        });
        let s = Summary::build("s", &cells, &[], &[looped], &[]);
        assert_eq!(s.warnings[0].warnings, ["first", "round 3: reused id"]);

        // None: the field is left out, so summaries without warnings are unchanged.
        let clean = Summary::build("s", &cells, &[], &trials[..1], &[]);
        assert!(
            serde_json::to_value(&clean)
                .unwrap()
                .get("warnings")
                .is_none()
        );
    }
}
