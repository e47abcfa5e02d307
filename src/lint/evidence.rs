//! Evidence from a finished run (`toolgauge lint SUITE --run DIR`): which tools the
//! model confused, and which parameters it got wrong, read from the run's trial records.
//!
//! The run is read with the journal reader every command shares
//! ([`crate::runner::journal::load`]), so every trials format (1 to 3, loop trials
//! included) reads here as it does in `toolgauge report`.
//!
//! - **Confusions.** A scored `should_call` trial in which an expected tool was not
//!   called but another tool was: each (expected, called) pair counts once per trial.
//!   For a loop trial the calls of every round count (the episode may have reached the
//!   right tool later; then it is no confusion). Errored trials are not scored, so they
//!   are left out, as are `should_not_call` trials (a call there is a false call, not a
//!   confusion between two tools) and ambiguous ones (any of several tools may be right).
//! - **Parameters.** From the checks of every call of an offered tool: a required
//!   parameter missing, a schema error under a parameter (or one naming it as
//!   unexpected), an ungrounded value under it. Each counts once per call. The checks
//!   of a loop trial are those of its first round (the one `expect.calls` is scored on):
//!   later rounds' calls are not checked against the schema by the judge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::runner::journal::{self, JournalError};
use crate::score::{TrialRecord, Verdict};
use crate::suite::CaseKind;

/// How many example case ids a finding keeps.
const EXAMPLES: usize = 3;

/// What a run says about a suite's tools.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RunEvidence {
    /// Tool confusions, the most frequent first.
    pub confusions: Vec<Confusion>,
    /// Parameters the model got wrong, the most troubled first.
    pub parameters: Vec<ParamTrouble>,
}

/// The model called `called` where the case expected `expected`: `count` trials, example
/// case ids (up to 3, sorted).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Confusion {
    /// The tool the case expected.
    pub expected: String,
    /// The tool called instead.
    pub called: String,
    /// Trials in which `called` was called and `expected` was not.
    pub count: usize,
    /// Scored `should_call` trials expecting `expected` (the denominator of `count`).
    pub trials: usize,
    /// Up to three case ids of those trials, sorted.
    pub examples: Vec<String>,
}

/// Per tool and parameter: how often it was missing, invalid or ungrounded in the
/// model's calls of that tool.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ParamTrouble {
    /// The tool.
    pub tool: String,
    /// The top-level parameter.
    pub parameter: String,
    /// Calls without it, though it is required.
    pub missing: usize,
    /// Calls whose value for it violates the schema (or that passed it unexpected).
    pub invalid: usize,
    /// Calls whose value for it appears nowhere in the conversation.
    pub ungrounded: usize,
    /// Checked calls of `tool` in all (the denominator of the three counts).
    pub calls: usize,
    /// Up to three case ids of the troubled calls, sorted.
    pub examples: Vec<String>,
}

/// Why a run's evidence could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// The run directory does not exist or is not a directory.
    #[error(
        "`{path}` is not a run directory ({reason}): give the directory `toolgauge run --out DIR` wrote"
    )]
    NotADirectory {
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// The directory has no `trials.jsonl`.
    #[error(
        "`{path}` has no trials.jsonl: give a run directory written by `toolgauge run` (a run that wrote no trial has no evidence)"
    )]
    NoTrials {
        /// The run directory.
        path: PathBuf,
    },
    /// `trials.jsonl` could not be read.
    #[error("failed to read `{path}`: {source} (check its permissions)")]
    Unreadable {
        /// The journal.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line of `trials.jsonl` is not a trial record.
    #[error(
        "`{path}` line {line} is damaged: {message} (repair or delete the line; `toolgauge run --resume DIR` runs that trial again)"
    )]
    BadLine {
        /// The journal.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Read the run in `dir` and gather its evidence.
pub fn from_run(dir: &Path) -> Result<RunEvidence, EvidenceError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(EvidenceError::NotADirectory {
                path: dir.to_path_buf(),
                reason: "it is a file".into(),
            });
        }
        Err(e) => {
            return Err(EvidenceError::NotADirectory {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            });
        }
    }
    let path = dir.join("trials.jsonl");
    let contents = journal::load(&path).map_err(|e| match e {
        e if e.is_not_found() => EvidenceError::NoTrials {
            path: dir.to_path_buf(),
        },
        JournalError::Io { path, source, .. } => EvidenceError::Unreadable { path, source },
        JournalError::Damaged {
            path,
            line,
            message,
        } => EvidenceError::BadLine {
            path,
            line,
            message,
        },
    })?;
    Ok(from_trials(&contents.trials))
}

/// The evidence of `trials` (see the module documentation).
pub fn from_trials(trials: &[TrialRecord]) -> RunEvidence {
    RunEvidence {
        confusions: confusions(trials),
        parameters: parameters(trials),
    }
}

/// Counts and example case ids of one finding, as it is gathered.
#[derive(Default)]
struct Tally {
    count: usize,
    examples: BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, case_id: &str) {
        self.count += 1;
        self.examples.insert(case_id.to_string());
    }
}

/// The first [`EXAMPLES`] of `ids` (already sorted).
fn examples(ids: &BTreeSet<String>) -> Vec<String> {
    ids.iter().take(EXAMPLES).cloned().collect()
}

/// The tools a trial called: every round's for a loop trial, else the response's.
fn called_tools(t: &TrialRecord) -> BTreeSet<&str> {
    match &t.episode {
        Some(e) => e
            .rounds
            .iter()
            .flat_map(|r| &r.response.tool_calls)
            .map(|c| c.name.as_str())
            .collect(),
        None => t
            .response
            .iter()
            .flat_map(|r| &r.tool_calls)
            .map(|c| c.name.as_str())
            .collect(),
    }
}

fn confusions(trials: &[TrialRecord]) -> Vec<Confusion> {
    let mut expecting: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pairs: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    for t in trials {
        let Some(checks) = &t.checks else { continue };
        if t.verdict == Verdict::Error || checks.kind != CaseKind::ShouldCall {
            continue;
        }
        let called = called_tools(t);
        for expected in &checks.expected_tools {
            *expecting.entry(expected).or_default() += 1;
            if called.contains(expected.as_str()) {
                continue;
            }
            for c in called
                .iter()
                .filter(|c| !checks.expected_tools.iter().any(|e| e == *c))
            {
                pairs.entry((expected, c)).or_default().add(&t.case_id);
            }
        }
    }
    let mut out: Vec<Confusion> = pairs
        .into_iter()
        .map(|((expected, called), tally)| Confusion {
            expected: expected.to_string(),
            called: called.to_string(),
            count: tally.count,
            trials: expecting.get(expected).copied().unwrap_or(0),
            examples: examples(&tally.examples),
        })
        .collect();
    // Stable over a sort by count: the map already ordered ties by names.
    out.sort_by_key(|c| std::cmp::Reverse(c.count));
    out
}

/// The top-level parameter a schema error is about: the first segment of its instance
/// path (`/city: 12345 is not of type "string"` → `city`), or the names an error at the
/// root calls unexpected (`Additional properties are not allowed ('x' was unexpected)`).
/// Root errors about missing required properties are left out: `missing_required`
/// counts them.
fn error_parameters(error: &str) -> Vec<String> {
    if let Some(rest) = error.strip_prefix('/') {
        let end = rest.find(['/', ':']).unwrap_or(rest.len());
        let name = rest[..end].replace("~1", "/").replace("~0", "~");
        return vec![name];
    }
    if error.contains("unexpected") {
        // The names are quoted before "was/were unexpected": `('a', 'b' were unexpected)`.
        let inside = error
            .rfind('(')
            .map(|i| &error[i + 1..])
            .unwrap_or_default();
        return inside
            .split('\'')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s.to_string())
            .collect();
    }
    Vec::new()
}

/// The top-level parameter of an ungrounded value (`address.city = "Paris"` →
/// `address`, `tags[0] = "x"` → `tags`).
fn ungrounded_parameter(entry: &str) -> &str {
    let path = entry.split(" = ").next().unwrap_or(entry);
    let end = path.find(['.', '[']).unwrap_or(path.len());
    &path[..end]
}

/// What is gathered for one (tool, parameter).
#[derive(Default)]
struct ParamTally {
    missing: usize,
    invalid: usize,
    ungrounded: usize,
    examples: BTreeSet<String>,
}

fn parameters(trials: &[TrialRecord]) -> Vec<ParamTrouble> {
    let mut calls: BTreeMap<&str, usize> = BTreeMap::new();
    let mut params: BTreeMap<(&str, String), ParamTally> = BTreeMap::new();
    for t in trials {
        let Some(checks) = &t.checks else { continue };
        if t.verdict == Verdict::Error {
            continue;
        }
        // Calls of a tool nobody offered, or whose arguments are not JSON, say nothing
        // about a parameter.
        for call in checks.calls.iter().filter(|c| c.known_tool && c.json_ok) {
            *calls.entry(&call.tool).or_default() += 1;
            // Each kind of trouble counts once per call and parameter.
            let missing: BTreeSet<String> = call.missing_required.iter().cloned().collect();
            let invalid: BTreeSet<String> = call
                .schema_errors
                .iter()
                .flat_map(|e| error_parameters(e))
                .collect();
            let ungrounded: BTreeSet<String> = call
                .ungrounded
                .iter()
                .map(|u| ungrounded_parameter(u).to_string())
                .collect();
            for (set, kind) in [(&missing, 0), (&invalid, 1), (&ungrounded, 2)] {
                for p in set {
                    let tally = params.entry((&call.tool, p.clone())).or_default();
                    match kind {
                        0 => tally.missing += 1,
                        1 => tally.invalid += 1,
                        _ => tally.ungrounded += 1,
                    }
                    tally.examples.insert(t.case_id.clone());
                }
            }
        }
    }
    let mut out: Vec<ParamTrouble> = params
        .into_iter()
        .map(|((tool, parameter), t)| ParamTrouble {
            tool: tool.to_string(),
            parameter,
            missing: t.missing,
            invalid: t.invalid,
            ungrounded: t.ungrounded,
            calls: calls.get(tool).copied().unwrap_or(0),
            examples: examples(&t.examples),
        })
        .collect();
    // Stable: ties keep the map's order, by tool then parameter.
    out.sort_by_key(|p| std::cmp::Reverse(p.missing + p.invalid + p.ungrounded));
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A scored single-turn trial of `case` that expected `expected` and made `calls`,
    /// each `(tool, checks)` where checks hold the call check's fields to override.
    fn trial(
        case: &str,
        kind: &str,
        expected: &[&str],
        calls: &[(&str, serde_json::Value)],
    ) -> TrialRecord {
        let checks: Vec<serde_json::Value> = calls
            .iter()
            .map(|(tool, extra)| {
                let mut c = json!({
                    "tool": tool, "json_ok": true, "known_tool": true,
                    "required_present": 0, "required_total": 0, "grounding_checked": 0
                });
                for (k, v) in extra.as_object().unwrap() {
                    c[k] = v.clone();
                }
                c
            })
            .collect();
        let tool_calls: Vec<serde_json::Value> = calls
            .iter()
            .map(|(tool, _)| json!({"name": tool, "arguments": "{}"}))
            .collect();
        serde_json::from_value(json!({
            "case_id": case, "kind": kind, "target": "scripted:x", "variant": "clear",
            "tool_choice": "auto", "repeat": 0,
            "messages": [{"role": "user", "content": "hi"}],
            "response": {"tool_calls": tool_calls, "latency_ms": 1.0},
            "checks": {"kind": kind, "called": !calls.is_empty(), "calls": checks,
                       "expected_tools": expected, "args_matched": 0, "args_expected": 0},
            "verdict": "fail"
        }))
        .unwrap()
    }

    #[test]
    fn a_wrong_tool_is_a_confusion_counted_against_the_trials_expecting() {
        let trials = vec![
            trial(
                "b",
                "should_call",
                &["get_weather"],
                &[("get_stock_price", json!({}))],
            ),
            trial(
                "a",
                "should_call",
                &["get_weather"],
                &[("get_stock_price", json!({}))],
            ),
            trial(
                "c",
                "should_call",
                &["get_weather"],
                &[("get_weather", json!({}))],
            ),
            trial("d", "should_call", &["get_weather"], &[]),
            trial(
                "e",
                "should_call",
                &["get_weather"],
                &[("get_time", json!({}))],
            ),
            // A call where none was expected is a false call, not a confusion.
            trial("f", "should_not_call", &[], &[("get_time", json!({}))]),
            // The expected tool called beside another: no confusion.
            trial(
                "g",
                "should_call",
                &["get_weather"],
                &[("get_weather", json!({})), ("get_time", json!({}))],
            ),
        ];
        let ev = from_trials(&trials);
        assert_eq!(
            ev.confusions,
            vec![
                Confusion {
                    expected: "get_weather".into(),
                    called: "get_stock_price".into(),
                    count: 2,
                    trials: 6,
                    examples: vec!["a".into(), "b".into()],
                },
                Confusion {
                    expected: "get_weather".into(),
                    called: "get_time".into(),
                    count: 1,
                    trials: 6,
                    examples: vec!["e".into()],
                },
            ]
        );
    }

    #[test]
    fn errored_trials_are_not_evidence() {
        let mut t = trial("a", "should_call", &["x"], &[("y", json!({}))]);
        t.verdict = Verdict::Error;
        assert_eq!(from_trials(&[t]), RunEvidence::default());
    }

    #[test]
    fn a_loop_trial_counts_the_calls_of_every_round() {
        let mut t = trial("loop", "should_call", &["book"], &[("search", json!({}))]);
        let round = |name: &str| json!({"sent": 1, "response": {"tool_calls": [{"name": name, "arguments": "{}"}], "latency_ms": 1.0}, "tool_ms": 0.0});
        // The first round searched, a later one booked: no confusion.
        t.episode = Some(
            serde_json::from_value(json!({"rounds": [round("search"), round("book")]})).unwrap(),
        );
        assert!(from_trials(std::slice::from_ref(&t)).confusions.is_empty());
        t.episode = Some(
            serde_json::from_value(json!({"rounds": [round("search"), round("cancel")]})).unwrap(),
        );
        let c = from_trials(&[t]).confusions;
        let pairs: Vec<(&str, &str, usize)> = c
            .iter()
            .map(|c| (c.expected.as_str(), c.called.as_str(), c.count))
            .collect();
        assert_eq!(pairs, vec![("book", "cancel", 1), ("book", "search", 1)]);
    }

    #[test]
    fn parameter_trouble_from_missing_invalid_and_ungrounded() {
        let trials = vec![
            trial(
                "a",
                "should_call",
                &["get_weather"],
                &[(
                    "get_weather",
                    json!({
                        "schema_errors": ["/city: 12345 is not of type \"string\"", "/city/x: also", "\"date\" is a required property"],
                        "missing_required": ["date"],
                    }),
                )],
            ),
            trial(
                "b",
                "should_call",
                &["get_weather"],
                &[(
                    "get_weather",
                    json!({
                        "ungrounded": ["city = \"Paris\"", "place.zip = \"75001\"", "tags[0] = \"x\""],
                        "schema_errors": ["Additional properties are not allowed ('extra', 'more' were unexpected)"],
                    }),
                )],
            ),
            trial(
                "c",
                "should_call",
                &["get_weather"],
                &[("get_weather", json!({}))],
            ),
            // Unknown tools and unparsable arguments say nothing about parameters.
            trial(
                "d",
                "should_call",
                &["get_weather"],
                &[(
                    "nope",
                    json!({"known_tool": false, "missing_required": ["q"]}),
                )],
            ),
        ];
        let ev = from_trials(&trials);
        // (tool, parameter, [missing, invalid, ungrounded, calls], examples)
        type Row<'a> = (&'a str, &'a str, [usize; 4], Vec<String>);
        let rows: Vec<Row> = ev
            .parameters
            .iter()
            .map(|p| {
                (
                    p.tool.as_str(),
                    p.parameter.as_str(),
                    [p.missing, p.invalid, p.ungrounded, p.calls],
                    p.examples.clone(),
                )
            })
            .collect();
        let ab = vec!["a".to_string(), "b".to_string()];
        let b = vec!["b".to_string()];
        assert_eq!(
            rows,
            vec![
                ("get_weather", "city", [0, 1, 1, 3], ab),
                ("get_weather", "date", [1, 0, 0, 3], vec!["a".to_string()]),
                ("get_weather", "extra", [0, 1, 0, 3], b.clone()),
                ("get_weather", "more", [0, 1, 0, 3], b.clone()),
                ("get_weather", "place", [0, 0, 1, 3], b.clone()),
                ("get_weather", "tags", [0, 0, 1, 3], b),
            ]
        );
    }

    #[test]
    fn error_and_ungrounded_paths_name_the_top_level_parameter() {
        assert_eq!(error_parameters("/a~1b/c: bad"), vec!["a/b"]);
        assert_eq!(error_parameters("/n: 3 is less than 5"), vec!["n"]);
        assert!(error_parameters("\"x\" is a required property").is_empty());
        assert_eq!(
            error_parameters("Additional properties are not allowed ('zz' was unexpected)"),
            vec!["zz"]
        );
        assert_eq!(ungrounded_parameter("a.b[2] = \"x\""), "a");
        assert_eq!(ungrounded_parameter("q = \"x = y\""), "q");
    }

    #[test]
    fn examples_are_at_most_three_sorted() {
        let trials: Vec<TrialRecord> = ["e", "d", "c", "b", "a"]
            .iter()
            .map(|c| trial(c, "should_call", &["x"], &[("y", json!({}))]))
            .collect();
        let c = &from_trials(&trials).confusions[0];
        assert_eq!((c.count, c.trials), (5, 5));
        assert_eq!(c.examples, vec!["a", "b", "c"]);
    }

    #[test]
    fn a_run_directory_is_read_with_the_journal_reader() {
        let dir = tempfile::tempdir().unwrap();
        let missing = from_run(&dir.path().join("nope")).unwrap_err();
        assert!(
            matches!(missing, EvidenceError::NotADirectory { .. }),
            "{missing}"
        );
        let e = from_run(dir.path()).unwrap_err();
        assert!(matches!(e, EvidenceError::NoTrials { .. }), "{e}");
        assert!(e.to_string().contains("toolgauge run"), "{e}");

        let t = trial("a", "should_call", &["x"], &[("y", json!({}))]);
        let line = serde_json::to_string(&t).unwrap();
        std::fs::write(dir.path().join("trials.jsonl"), format!("{line}\n")).unwrap();
        let ev = from_run(dir.path()).unwrap();
        assert_eq!(ev.confusions.len(), 1);

        std::fs::write(
            dir.path().join("trials.jsonl"),
            format!("{line}\nnot json\n{line}\n"),
        )
        .unwrap();
        let e = from_run(dir.path()).unwrap_err();
        assert!(matches!(e, EvidenceError::BadLine { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");

        let file = dir.path().join("trials.jsonl");
        let e = from_run(&file).unwrap_err();
        assert!(e.to_string().contains("it is a file"), "{e}");
    }
}
