//! The confusion matrix: expected tool against called tool over scored trials. Suites
//! with many tools keep the most frequent ones in the matrix, group the rest as "other"
//! and list their confusions by name.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::score::TrialRecord;
use crate::suite::CaseKind;

/// Label shown for "no tool call" in the confusion matrix.
pub(super) const NO_CALL: &str = "no call";

/// One cell of the matrix: a count, its shade, and whether it is on the diagonal.
#[derive(Serialize)]
pub(super) struct ConfusionCell {
    pub(super) n: u64,
    pub(super) alpha: String,
    pub(super) diagonal: bool,
}

/// One expected tool's row of the matrix.
#[derive(Serialize)]
pub(super) struct ConfusionRow {
    pub(super) expected: String,
    pub(super) cells: Vec<ConfusionCell>,
    pub(super) total: u64,
}

/// Expected tool against called tool over scored trials. Expected: the trial's
/// `expected_tools` (none for should_not_call); called: the distinct called tools; an
/// empty side is "no call". Tools on both sides count on the diagonal; the rest pair
/// up (expected but not called × called but not expected), an unpaired rest against
/// "no call".
pub(super) fn confusion(trials: &[TrialRecord]) -> Confusion {
    let (counts, tools) = pair_counts(trials);
    // Suites with many tools (imported benchmarks offer hundreds) would make a table of
    // hundreds of thousands of cells: the most frequent tools keep their own row and
    // column, the rest share one ("other"), and their confusions are listed instead.
    let shown = shown_tools(&counts, &tools);
    let others = tools.len() - shown.len();
    let (labels, rows) = grid(&counts, &shown, others);
    let (top, top_total) = top_confusions(&counts, others);
    Confusion {
        labels,
        rows,
        others,
        top,
        top_total,
    }
}

/// Trials per (expected, called) pair of sides (`None`: no call).
type PairCounts<'a> = HashMap<(Option<&'a str>, Option<&'a str>), u64>;

/// The pairs counted over `trials`, and every tool named on either side.
fn pair_counts<'a>(trials: &'a [TrialRecord]) -> (PairCounts<'a>, BTreeSet<&'a str>) {
    let mut counts: PairCounts<'a> = HashMap::new();
    let mut tools: BTreeSet<&str> = BTreeSet::new();
    for t in trials {
        let Some(c) = &t.checks else { continue };
        let mut expected: Vec<&str> = if t.kind == CaseKind::ShouldNotCall {
            Vec::new()
        } else {
            c.expected_tools.iter().map(String::as_str).collect()
        };
        expected.sort_unstable();
        expected.dedup();
        let mut called: Vec<&str> = c.calls.iter().map(|k| k.tool.as_str()).collect();
        called.sort_unstable();
        called.dedup();
        tools.extend(expected.iter().chain(&called));
        let mut add =
            |e: Option<&'a str>, k: Option<&'a str>| *counts.entry((e, k)).or_default() += 1;
        let only_e: Vec<&str> = expected
            .iter()
            .filter(|e| !called.contains(e))
            .copied()
            .collect();
        let only_c: Vec<&str> = called
            .iter()
            .filter(|k| !expected.contains(k))
            .copied()
            .collect();
        for e in expected.iter().filter(|e| called.contains(e)) {
            add(Some(e), Some(e));
        }
        match (only_e.is_empty(), only_c.is_empty()) {
            (true, true) => {
                if expected.is_empty() {
                    add(None, None);
                }
            }
            (true, false) => only_c.iter().for_each(|k| add(None, Some(k))),
            (false, true) => only_e.iter().for_each(|e| add(Some(e), None)),
            (false, false) => {
                for e in &only_e {
                    for k in &only_c {
                        add(Some(e), Some(k));
                    }
                }
            }
        }
    }
    (counts, tools)
}

/// The tools with a row and column of their own: all of them, or the
/// [`MAX_CONFUSION_TOOLS`]` - 1` counted most often.
fn shown_tools<'a>(counts: &PairCounts<'a>, tools: &BTreeSet<&'a str>) -> BTreeSet<&'a str> {
    let mut weight: HashMap<&str, u64> = HashMap::new();
    for ((e, k), n) in counts {
        for t in [e, k].into_iter().flatten() {
            *weight.entry(t).or_default() += n;
        }
    }
    if tools.len() <= MAX_CONFUSION_TOOLS {
        tools.clone()
    } else {
        let mut by_weight: Vec<&str> = tools.iter().copied().collect();
        by_weight.sort_by_key(|t| std::cmp::Reverse(weight.get(t).copied().unwrap_or(0)));
        by_weight
            .into_iter()
            .take(MAX_CONFUSION_TOOLS - 1)
            .collect()
    }
}

/// The matrix's labels and rows over the `shown` tools, then "other" (when `others`
/// tools are grouped) and "no call".
fn grid(
    counts: &PairCounts<'_>,
    shown: &BTreeSet<&str>,
    others: usize,
) -> (Vec<String>, Vec<ConfusionRow>) {
    let other_label = format!("other ({others} tools)");
    // The label of a side: a shown tool, "other", or "no call".
    fn label_of<'x>(t: Option<&'x str>, shown: &BTreeSet<&str>, other: &'x str) -> Option<&'x str> {
        match t {
            Some(t) if shown.contains(t) => Some(t),
            Some(_) => Some(other),
            None => None,
        }
    }
    let mut grid: HashMap<(Option<&str>, Option<&str>), u64> = HashMap::new();
    for ((e, k), n) in counts {
        let side = |t| label_of(t, shown, &other_label);
        *grid.entry((side(*e), side(*k))).or_default() += n;
    }
    let keys: Vec<Option<&str>> = shown
        .iter()
        .map(|t| Some(*t))
        .chain((others > 0).then_some(Some(other_label.as_str())))
        .chain([None])
        .collect();
    let max = grid.values().copied().max().unwrap_or(0).max(1);
    let labels = keys
        .iter()
        .map(|k| k.unwrap_or(NO_CALL).to_string())
        .collect();
    let rows = keys
        .iter()
        .map(|e| {
            let cells: Vec<ConfusionCell> = keys
                .iter()
                .map(|k| {
                    let n = grid.get(&(*e, *k)).copied().unwrap_or(0);
                    ConfusionCell {
                        n,
                        alpha: format!("{:.2}", n as f64 / max as f64 * 0.85),
                        // "other" against "other" may be two different tools.
                        diagonal: e == k && (others == 0 || *e != Some(other_label.as_str())),
                    }
                })
                .collect();
            ConfusionRow {
                expected: e.unwrap_or(NO_CALL).to_string(),
                total: cells.iter().map(|c| c.n).sum(),
                cells,
            }
        })
        .collect();
    (labels, rows)
}

/// With "other" (`others > 0`), the most frequent confusions by name (expected ≠ called),
/// at most [`MAX_TOP_CONFUSIONS`], and how many there are in all.
fn top_confusions(counts: &PairCounts<'_>, others: usize) -> (Vec<TopConfusion>, usize) {
    let mut top: Vec<TopConfusion> = if others == 0 {
        Vec::new()
    } else {
        counts
            .iter()
            .filter(|((e, k), _)| e != k)
            .map(|((e, k), n)| TopConfusion {
                expected: e.unwrap_or(NO_CALL).to_string(),
                called: k.unwrap_or(NO_CALL).to_string(),
                n: *n,
            })
            .collect()
    };
    top.sort_by(|a, b| {
        b.n.cmp(&a.n)
            .then_with(|| a.expected.cmp(&b.expected))
            .then_with(|| a.called.cmp(&b.called))
    });
    let top_total = top.len();
    top.truncate(MAX_TOP_CONFUSIONS);
    (top, top_total)
}

/// Tools with a row and column of their own in the confusion matrix.
pub(super) const MAX_CONFUSION_TOOLS: usize = 24;

/// Confusions listed by name when the matrix groups tools under "other".
const MAX_TOP_CONFUSIONS: usize = 30;

/// The confusion matrix of a report.
pub(super) struct Confusion {
    pub(super) labels: Vec<String>,
    pub(super) rows: Vec<ConfusionRow>,
    /// Tools counted under "other" (0: every tool has its own row and column).
    pub(super) others: usize,
    /// The most frequent confusions by tool name, when some tools are under "other".
    pub(super) top: Vec<TopConfusion>,
    /// All distinct confusions (`top` holds at most [`MAX_TOP_CONFUSIONS`]).
    pub(super) top_total: usize,
}

/// One confusion between two named sides, and how often it happened.
#[derive(Serialize)]
pub(super) struct TopConfusion {
    pub(super) expected: String,
    pub(super) called: String,
    pub(super) n: u64,
}
