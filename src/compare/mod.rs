//! Comparing two sets of trials: a baseline and a candidate (two runs, or two description
//! variants inside one run).
//!
//! # Pairing
//!
//! Trials are first grouped into cells. By default a cell is `target × variant ×
//! tool_choice` and a baseline cell is matched with the candidate cell of the same name;
//! a [`CellKey`] can leave dimensions out of the match, which is how a live model is
//! compared with a new one (ignore `target`) or one variant with another (ignore
//! `variant`). Inside a matched cell, a trial is identified by `(case_id, tool_choice,
//! repeat)`; the baseline and candidate trials with the same identity form a pair.
//!
//! Only pairs where both trials were scored (verdict pass or fail) enter the test. Nothing
//! is dropped silently: trials with no partner on the other side are counted as
//! `only_baseline` / `only_candidate`, pairs where either side errored as
//! `unscored_pairs`, and a second trial with an identity already seen on the same side
//! (possible when a [`CellKey`] merges several targets into one cell) as a duplicate.
//!
//! # The test
//!
//! Each scored pair is one of: both pass (`n11`), pass → fail (`n10`), fail → pass
//! (`n01`), both fail (`n00`). Accuracies and the delta (in percentage points) are
//! computed on the scored pairs only, so both sides are measured on the same trials.
//!
//! The unit of the test and of the interval is the *case* (a case id with its
//! tool_choice, in one cell): repeats of a case are not independent samples, since a case
//! that a model gets wrong tends to be wrong in every repeat. When every case has one
//! scored pair the test is the exact McNemar test ([`mcnemar_exact`]: under "no
//! difference" `n10` ~ Binomial(`n10 + n01`, ½)); with repeats it is the exact sign-flip
//! test on the per-case differences of pass rates ([`crate::score::stats::paired_test`]),
//! which equals McNemar when each case has one pair. The 95% interval of the delta is
//! cluster-robust with cases as clusters
//! ([`crate::score::stats::paired_delta_interval`]). A cell is `significant` when
//! p < 0.05; [`Paired::test`] says which test ran. The pooled (`overall`) row treats the
//! same case in two cells as two units.
//!
//! Per-metric deltas (every metric in [`METRIC_NAMES`], and the behaviour metrics when a
//! side has them, see [`behaviour`]) are computed with [`Metrics::of`] over all of each
//! side's trials in the cell, paired or not.

pub mod behaviour;
pub mod html;

use std::collections::HashSet;
use std::fmt::{self, Write as _};

use comfy_table::{Cell, CellAlignment, Table, presets};
use indexmap::IndexMap;
use serde::Serialize;

use crate::report::summary::{CellSummary, OUTCOME_ERROR, OUTCOME_FAIL, OUTCOME_PASS};
use crate::score::metrics::Metrics;
use crate::score::record::{TrialRecord, Verdict};
pub use crate::score::stats::{CaseDiff, PairedTest, mcnemar_exact};
use crate::score::stats::{paired_delta_interval, paired_test};
use crate::util::metric_names::METRIC_NAMES;

/// Significance level of the paired test.
pub const ALPHA: f64 = 0.05;

/// Pass → fail flips listed by [`render_markdown`] before "and N more".
const MAX_MARKDOWN_FLIPS: usize = 50;

/// Which dimensions must be equal for a baseline cell to match a candidate cell. A
/// dimension left out is the one being compared: its values may differ between the sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct CellKey {
    /// Match on target.
    pub target: bool,
    /// Match on description variant.
    pub variant: bool,
    /// Match on tool_choice.
    pub tool_choice: bool,
    /// Match on the stream mode (streamed or not); left out of the JSON when kept, so
    /// comparisons of runs without streaming print as before.
    #[serde(skip_serializing_if = "is_true")]
    pub stream: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl CellKey {
    /// Match on all three dimensions (two runs of the same matrix).
    pub const ALL: CellKey = CellKey {
        target: true,
        variant: true,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the target (a model against another model).
    pub const IGNORE_TARGET: CellKey = CellKey {
        target: false,
        variant: true,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the variant (one description variant against another).
    pub const IGNORE_VARIANT: CellKey = CellKey {
        target: true,
        variant: false,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the stream mode (streamed answers against unstreamed ones).
    pub const IGNORE_STREAM: CellKey = CellKey {
        target: true,
        variant: true,
        tool_choice: true,
        stream: false,
    };

    /// This key, ignoring the stream mode as well.
    pub fn across_stream(self) -> CellKey {
        CellKey {
            stream: false,
            ..self
        }
    }
}

impl Default for CellKey {
    fn default() -> Self {
        CellKey::ALL
    }
}

/// One side's cell. A dimension the [`CellKey`] ignores shows that side's values, joined
/// with `+` if the cell holds several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellId {
    /// Target(s).
    pub target: String,
    /// Variant(s).
    pub variant: String,
    /// tool_choice(s).
    pub tool_choice: String,
    /// `stream` when the cell's trials were streamed, `no stream` when not, both joined
    /// with `+` when the cell holds both; empty (and absent from the JSON) when no
    /// trial on this side was streamed, as before the axis existed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stream: String,
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} × {} × {}",
            self.target, self.variant, self.tool_choice
        )?;
        if !self.stream.is_empty() {
            write!(f, " × {}", self.stream)?;
        }
        Ok(())
    }
}

/// The direction of a flip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlipDirection {
    /// Passed in the baseline, failed in the candidate (a regression).
    PassToFail,
    /// Failed in the baseline, passed in the candidate (an improvement).
    FailToPass,
}

impl fmt::Display for FlipDirection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FlipDirection::PassToFail => "pass → fail",
            FlipDirection::FailToPass => "fail → pass",
        })
    }
}

/// A scored pair whose verdict changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flip {
    /// Case id.
    pub case_id: String,
    /// tool_choice as text.
    pub tool_choice: String,
    /// Repeat index.
    pub repeat: u32,
    /// Which way it flipped.
    pub direction: FlipDirection,
}

/// Paired counts, the accuracy of each side on the pairs, the paired test and the 95%
/// interval of the delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    /// Scored pairs (`n11 + n10 + n01 + n00`).
    pub n: u64,
    /// Both pass.
    pub n11: u64,
    /// Pass → fail.
    pub n10: u64,
    /// Fail → pass.
    pub n01: u64,
    /// Both fail.
    pub n00: u64,
    /// Cases with at least one scored pair: the units of the test and the interval (a
    /// case is a case id with its tool_choice, in one cell).
    pub cases: u64,
    /// Most scored pairs of one case (1 when every case ran once; the repeats otherwise).
    pub max_pairs_per_case: u64,
    /// Baseline accuracy on the pairs, `(n11 + n10) / n`; `None` without pairs.
    pub baseline_accuracy: Option<f64>,
    /// Candidate accuracy on the pairs, `(n11 + n01) / n`; `None` without pairs.
    pub candidate_accuracy: Option<f64>,
    /// Candidate minus baseline accuracy, in percentage points (negative: worse).
    pub delta_points: Option<f64>,
    /// Lower end of the 95% interval of the delta, in points, cases as clusters
    /// ([`paired_delta_interval`]).
    pub delta_low_points: Option<f64>,
    /// Upper end of that interval, in points.
    pub delta_high_points: Option<f64>,
    /// The test behind `p_value`: `mcnemar_exact` when every case has one pair,
    /// `sign_flip_exact` (or `sign_flip_normal` for very many cases) on per-case pass
    /// rates when cases have repeats, `none` without pairs.
    pub test: PairedTest,
    /// Two-sided p-value of `test` ([`paired_test`]).
    pub p_value: f64,
    /// `p_value < 0.05`.
    pub significant: bool,
}

impl Paired {
    /// Accuracies, delta, test and interval from the four counts, each pair its own case
    /// (one repeat): the test is exact McNemar.
    pub fn from_counts(n11: u64, n10: u64, n01: u64, n00: u64) -> Paired {
        let one = |diff: i64, k: u64| (0..k).map(move |_| CaseDiff { pairs: 1, diff });
        let cases: Vec<CaseDiff> = one(-1, n10)
            .chain(one(1, n01))
            .chain(one(0, n11 + n00))
            .collect();
        Paired::from_cases(n11, n10, n01, n00, &cases)
    }

    /// Accuracies and delta from the four counts; the test and interval from the same
    /// pairs grouped by case (`cases`, whose pairs add up to the counts' total).
    pub fn from_cases(n11: u64, n10: u64, n01: u64, n00: u64, cases: &[CaseDiff]) -> Paired {
        let n = n11 + n10 + n01 + n00;
        let (baseline_accuracy, candidate_accuracy) = if n == 0 {
            (None, None)
        } else {
            (
                Some((n11 + n10) as f64 / n as f64),
                Some((n11 + n01) as f64 / n as f64),
            )
        };
        let delta_points = baseline_accuracy
            .zip(candidate_accuracy)
            .map(|(b, c)| (c - b) * 100.0);
        let (p_value, test) = paired_test(cases);
        let interval = paired_delta_interval(cases);
        Paired {
            n,
            n11,
            n10,
            n01,
            n00,
            cases: cases.iter().filter(|c| c.pairs > 0).count() as u64,
            max_pairs_per_case: cases.iter().map(|c| c.pairs).max().unwrap_or(0),
            baseline_accuracy,
            candidate_accuracy,
            delta_points,
            delta_low_points: interval.map(|i| i.0 * 100.0),
            delta_high_points: interval.map(|i| i.1 * 100.0),
            test,
            p_value,
            significant: p_value < ALPHA,
        }
    }

    /// True when the candidate is worse on the pairs.
    pub fn is_regression(&self) -> bool {
        self.delta_points.is_some_and(|d| d < 0.0)
    }
}

/// One metric on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    /// Name from [`METRIC_NAMES`].
    pub metric: String,
    /// Baseline value; `None` when undefined or the side has no trials in the cell.
    pub baseline: Option<f64>,
    /// Candidate value; `None` likewise.
    pub candidate: Option<f64>,
    /// `candidate - baseline` (in the metric's own unit), when both are defined.
    pub delta: Option<f64>,
}

/// The comparison of one matched cell (or of a cell present on one side only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellComparison {
    /// Label: `target × variant × tool_choice`, with `baseline → candidate` where the
    /// sides differ.
    pub cell: String,
    /// The baseline's cell; `None` when the baseline has no trials in it.
    pub baseline: Option<CellId>,
    /// The candidate's cell; `None` when the candidate has no trials in it.
    pub candidate: Option<CellId>,
    /// Counts, accuracies and the McNemar test over the scored pairs.
    pub paired: Paired,
    /// Scored pairs whose verdict changed, sorted by case, tool_choice and repeat.
    pub flips: Vec<Flip>,
    /// Baseline trials with no candidate trial of the same identity.
    pub only_baseline: u64,
    /// Candidate trials with no baseline trial of the same identity.
    pub only_candidate: u64,
    /// Identities on both sides where at least one trial errored (left out of the test).
    pub unscored_pairs: u64,
    /// Baseline trials repeating an identity already seen in this cell (left out).
    pub duplicates_baseline: u64,
    /// Candidate trials repeating an identity already seen in this cell (left out).
    pub duplicates_candidate: u64,
    /// Every metric of [`METRIC_NAMES`], over all of each side's trials in the cell.
    pub metrics: Vec<MetricDelta>,
    /// The scored pairs grouped by case, for the pooled test (not serialised: `paired`
    /// holds the result).
    #[serde(skip)]
    pub case_diffs: Vec<CaseDiff>,
}

impl CellComparison {
    /// The delta of one metric, if it is in [`METRIC_NAMES`].
    pub fn metric(&self, name: &str) -> Option<&MetricDelta> {
        self.metrics.iter().find(|m| m.metric == name)
    }

    /// Candidate accuracy over all of its scored trials in the cell (paired or not).
    pub fn candidate_accuracy_all(&self) -> Option<f64> {
        self.metric("accuracy").and_then(|m| m.candidate)
    }

    fn flips(&self, direction: FlipDirection) -> impl Iterator<Item = &Flip> {
        self.flips.iter().filter(move |f| f.direction == direction)
    }
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The dimensions cells were matched on.
    pub key: CellKey,
    /// One entry per cell, in order of first appearance (baseline first).
    pub cells: Vec<CellComparison>,
    /// All cells' pairs pooled.
    pub overall: Paired,
    /// Sum over cells of `only_baseline`.
    pub only_baseline: u64,
    /// Sum over cells of `only_candidate`.
    pub only_candidate: u64,
    /// Sum over cells of `unscored_pairs`.
    pub unscored_pairs: u64,
    /// Sum over cells of both sides' duplicates.
    pub duplicates: u64,
}

/// Compare two runs, matching cells on target, variant and tool_choice.
pub fn compare_runs(baseline: &[TrialRecord], candidate: &[TrialRecord]) -> Comparison {
    compare_runs_by(baseline, candidate, CellKey::ALL)
}

/// One side of a comparison: the trials of a journal, or the cells of a `summary.json`
/// (their per-trial outcomes and metrics).
#[derive(Debug, Clone, Copy)]
pub enum Side<'a> {
    /// Trials (a run's `trials.jsonl`).
    Trials(&'a [TrialRecord]),
    /// Summary cells (a run's `summary.json`, version 2 or later).
    Cells(&'a [CellSummary]),
}

/// Where an [`Item`] came from, for its side's metrics.
#[derive(Debug, Clone, Copy)]
enum Origin<'a> {
    Trial(&'a TrialRecord),
    /// Index into the side's summary cells.
    Cell(usize),
}

/// One trial of either side, as pairing sees it.
#[derive(Debug, Clone)]
struct Item<'a> {
    target: &'a str,
    variant: &'a str,
    tool_choice: String,
    /// The trial was streamed.
    stream: bool,
    case_id: &'a str,
    repeat: u32,
    verdict: Verdict,
    origin: Origin<'a>,
}

impl<'a> Side<'a> {
    fn items(self) -> Vec<Item<'a>> {
        match self {
            Side::Trials(trials) => trials
                .iter()
                .map(|t| Item {
                    target: &t.target,
                    variant: &t.variant,
                    // A distractor count joins the mode: trials at two counts are two
                    // cells, and never pair with each other.
                    tool_choice: crate::report::distractors::mode_label(
                        &t.tool_choice.to_string(),
                        crate::score::distractors::record_n(t),
                    ),
                    stream: t.stream,
                    case_id: &t.case_id,
                    repeat: t.repeat,
                    verdict: t.verdict,
                    origin: Origin::Trial(t),
                })
                .collect(),
            Side::Cells(cells) => {
                let mut out = Vec::new();
                for (i, c) in cells.iter().enumerate() {
                    for (case, chars) in &c.outcomes {
                        for (repeat, ch) in chars.chars().enumerate() {
                            let verdict = match ch {
                                OUTCOME_PASS => Verdict::Pass,
                                OUTCOME_FAIL => Verdict::Fail,
                                OUTCOME_ERROR => Verdict::Error,
                                _ => continue,
                            };
                            out.push(Item {
                                target: &c.target,
                                variant: &c.variant,
                                tool_choice: crate::report::distractors::mode_label(
                                    &c.tool_choice,
                                    c.distractors,
                                ),
                                stream: c.stream,
                                case_id: case,
                                repeat: repeat as u32,
                                verdict,
                                origin: Origin::Cell(i),
                            });
                        }
                    }
                }
                out
            }
        }
    }

    /// The metrics of the items of one matched cell: computed from trials, or the summary
    /// cell's own when the items are exactly one summary cell. `None` when summary cells
    /// were merged (their metrics can not be combined) or there are no items.
    fn metrics(self, items: &[&Item<'_>]) -> Option<Metrics> {
        let first = items.first()?;
        match (self, first.origin) {
            (Side::Cells(cells), Origin::Cell(i)) => items
                .iter()
                .all(|t| matches!(t.origin, Origin::Cell(j) if j == i))
                .then(|| cells[i].metrics.clone()),
            _ => Some(Metrics::of(items.iter().filter_map(|t| match t.origin {
                Origin::Trial(r) => Some(r),
                Origin::Cell(_) => None,
            }))),
        }
    }
}

/// Compare two runs, matching cells on the dimensions `key` keeps.
pub fn compare_runs_by(
    baseline: &[TrialRecord],
    candidate: &[TrialRecord],
    key: CellKey,
) -> Comparison {
    compare_sides(Side::Trials(baseline), Side::Trials(candidate), key)
}

/// Compare two sides of any kind, matching cells on the dimensions `key` keeps.
pub fn compare_sides(baseline: Side<'_>, candidate: Side<'_>, key: CellKey) -> Comparison {
    type Sides<'a, 'b> = (Vec<&'b Item<'a>>, Vec<&'b Item<'a>>);
    let project = |t: &Item<'_>| {
        (
            key.target.then(|| t.target.to_string()),
            key.variant.then(|| t.variant.to_string()),
            key.tool_choice.then(|| t.tool_choice.clone()),
            key.stream.then_some(t.stream),
        )
    };
    let (b_items, c_items) = (baseline.items(), candidate.items());
    let mut cells: IndexMap<_, Sides<'_, '_>> = IndexMap::new();
    for t in &b_items {
        cells.entry(project(t)).or_default().0.push(t);
    }
    for t in &c_items {
        cells.entry(project(t)).or_default().1.push(t);
    }
    let cells: Vec<CellComparison> = cells
        .into_values()
        .map(|(b, c)| compare_cell(&b, &c, baseline.metrics(&b), candidate.metrics(&c)))
        .collect();
    let sum = |f: fn(&CellComparison) -> u64| cells.iter().map(f).sum::<u64>();
    // A case in two cells (two targets, variants or tool_choices) is two units, as its
    // pairs are two pairs to McNemar with one repeat.
    let all_cases: Vec<CaseDiff> = cells
        .iter()
        .flat_map(|c| c.case_diffs.iter().copied())
        .collect();
    let overall = Paired::from_cases(
        sum(|c| c.paired.n11),
        sum(|c| c.paired.n10),
        sum(|c| c.paired.n01),
        sum(|c| c.paired.n00),
        &all_cases,
    );
    Comparison {
        key,
        overall,
        only_baseline: sum(|c| c.only_baseline),
        only_candidate: sum(|c| c.only_candidate),
        unscored_pairs: sum(|c| c.unscored_pairs),
        duplicates: sum(|c| c.duplicates_baseline + c.duplicates_candidate),
        cells,
    }
}

/// Compare description variant `a` (baseline) with variant `b` (candidate) inside one
/// run: trials pair when they differ only in variant.
pub fn compare_variants(trials: &[TrialRecord], a: &str, b: &str) -> Comparison {
    let side = |v: &str| -> Vec<TrialRecord> {
        trials.iter().filter(|t| t.variant == v).cloned().collect()
    };
    compare_runs_by(&side(a), &side(b), CellKey::IGNORE_VARIANT)
}

/// [`compare_variants`] over a summary's cells.
pub fn compare_variants_of_cells(cells: &[CellSummary], a: &str, b: &str) -> Comparison {
    let side = |v: &str| -> Vec<CellSummary> {
        cells.iter().filter(|c| c.variant == v).cloned().collect()
    };
    let (sa, sb) = (side(a), side(b));
    compare_sides(Side::Cells(&sa), Side::Cells(&sb), CellKey::IGNORE_VARIANT)
}

/// The unstreamed trials of one run (baseline) against its streamed ones (candidate),
/// made with `--stream both`: trials pair when they differ only in the stream mode.
pub fn compare_streamed(trials: &[TrialRecord]) -> Comparison {
    let side = |stream: bool| -> Vec<TrialRecord> {
        trials
            .iter()
            .filter(|t| t.stream == stream)
            .cloned()
            .collect()
    };
    compare_runs_by(&side(false), &side(true), CellKey::IGNORE_STREAM)
}

/// [`compare_streamed`] over a summary's cells.
pub fn compare_streamed_cells(cells: &[CellSummary]) -> Comparison {
    let side = |stream: bool| -> Vec<CellSummary> {
        cells
            .iter()
            .filter(|c| c.stream == stream)
            .cloned()
            .collect()
    };
    let (sa, sb) = (side(false), side(true));
    compare_sides(Side::Cells(&sa), Side::Cells(&sb), CellKey::IGNORE_STREAM)
}

/// A trial's identity inside a cell.
type TrialId<'a> = (&'a str, &'a str, u32);

/// Index one side's items by identity, counting repeats of an identity.
fn index<'a, 'b>(items: &[&'b Item<'a>]) -> (IndexMap<TrialId<'b>, &'b Item<'a>>, u64) {
    let mut map = IndexMap::new();
    let mut duplicates = 0;
    for t in items {
        let id = (t.case_id, t.tool_choice.as_str(), t.repeat);
        if map.contains_key(&id) {
            duplicates += 1;
        } else {
            map.insert(id, *t);
        }
    }
    (map, duplicates)
}

/// The values of one dimension on one side, distinct, in order, joined with `+`.
fn joined<'a: 'b, 'b>(items: &[&'b Item<'a>], f: impl Fn(&'b Item<'a>) -> &'b str) -> String {
    let mut seen = HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for t in items {
        let v = f(t);
        if seen.insert(v) {
            out.push(v);
        }
    }
    out.join("+")
}

fn cell_id(items: &[&Item<'_>]) -> Option<CellId> {
    use crate::score::stream::{NO_STREAM_LABEL, STREAM_LABEL};
    let streamed = items.iter().any(|t| t.stream);
    (!items.is_empty()).then(|| CellId {
        target: joined(items, |t| t.target),
        variant: joined(items, |t| t.variant),
        tool_choice: joined(items, |t| &t.tool_choice),
        stream: if streamed {
            joined(items, |t| {
                if t.stream {
                    STREAM_LABEL
                } else {
                    NO_STREAM_LABEL
                }
            })
        } else {
            String::new()
        },
    })
}

fn label(b: Option<&CellId>, c: Option<&CellId>) -> String {
    match (b, c) {
        (Some(b), Some(c)) => {
            let part = |x: &str, y: &str| {
                if x == y {
                    x.to_string()
                } else {
                    format!("{x} → {y}")
                }
            };
            let mut s = format!(
                "{} × {} × {}",
                part(&b.target, &c.target),
                part(&b.variant, &c.variant),
                part(&b.tool_choice, &c.tool_choice)
            );
            // The stream mode, when either side streamed: an unstreamed side (no mode
            // shown on its own) reads `no stream` next to a streamed one.
            if !(b.stream.is_empty() && c.stream.is_empty()) {
                let shown = |x: &str| {
                    if x.is_empty() {
                        crate::score::stream::NO_STREAM_LABEL.to_string()
                    } else {
                        x.to_string()
                    }
                };
                s.push_str(" × ");
                s.push_str(&part(&shown(&b.stream), &shown(&c.stream)));
            }
            s
        }
        (Some(x), None) | (None, Some(x)) => x.to_string(),
        (None, None) => String::new(),
    }
}

fn compare_cell(
    baseline: &[&Item<'_>],
    candidate: &[&Item<'_>],
    mb: Option<Metrics>,
    mc: Option<Metrics>,
) -> CellComparison {
    let (bi, duplicates_baseline) = index(baseline);
    let (ci, duplicates_candidate) = index(candidate);
    let (mut n11, mut n10, mut n01, mut n00) = (0, 0, 0, 0);
    let (mut only_baseline, mut unscored_pairs) = (0, 0);
    let mut flips = Vec::new();
    // Per case (case id and tool_choice): scored pairs and candidate-minus-baseline passes.
    let mut by_case: IndexMap<(&str, &str), CaseDiff> = IndexMap::new();
    for (id, bt) in &bi {
        let Some(ct) = ci.get(id) else {
            only_baseline += 1;
            continue;
        };
        if bt.verdict == Verdict::Error || ct.verdict == Verdict::Error {
            unscored_pairs += 1;
            continue;
        }
        let passed = |t: &Item<'_>| t.verdict == Verdict::Pass;
        let unit = by_case.entry((id.0, id.1)).or_default();
        unit.pairs += 1;
        unit.diff += i64::from(passed(ct)) - i64::from(passed(bt));
        let direction = match (passed(bt), passed(ct)) {
            (true, true) => {
                n11 += 1;
                continue;
            }
            (false, false) => {
                n00 += 1;
                continue;
            }
            (true, false) => {
                n10 += 1;
                FlipDirection::PassToFail
            }
            (false, true) => {
                n01 += 1;
                FlipDirection::FailToPass
            }
        };
        flips.push(Flip {
            case_id: id.0.to_string(),
            tool_choice: id.1.to_string(),
            repeat: id.2,
            direction,
        });
    }
    flips.sort_by(|x, y| {
        (&x.case_id, &x.tool_choice, x.repeat).cmp(&(&y.case_id, &y.tool_choice, y.repeat))
    });
    let only_candidate = ci.keys().filter(|id| !bi.contains_key(*id)).count() as u64;

    let mut metrics: Vec<MetricDelta> = METRIC_NAMES
        .iter()
        .map(|name| {
            let b = mb.as_ref().and_then(|m| m.value(name));
            let c = mc.as_ref().and_then(|m| m.value(name));
            MetricDelta {
                metric: name.to_string(),
                baseline: b,
                candidate: c,
                delta: b.zip(c).map(|(b, c)| c - b),
            }
        })
        .collect();
    metrics.extend(behaviour::deltas(mb.as_ref(), mc.as_ref()));
    metrics.extend(stream_deltas(mb.as_ref(), mc.as_ref()));

    let case_diffs: Vec<CaseDiff> = by_case.into_values().collect();
    let (b_id, c_id) = (cell_id(baseline), cell_id(candidate));
    CellComparison {
        cell: label(b_id.as_ref(), c_id.as_ref()),
        baseline: b_id,
        candidate: c_id,
        paired: Paired::from_cases(n11, n10, n01, n00, &case_diffs),
        flips,
        only_baseline,
        only_candidate,
        unscored_pairs,
        duplicates_baseline,
        duplicates_candidate,
        metrics,
        case_diffs,
    }
}

/// The timing deltas of streamed answers (time to first token and to the first
/// tool-call byte, [`crate::score::stream::STREAM_METRICS`]); empty when neither side
/// streamed, so comparisons of other runs list the metrics they always did. Against an
/// unstreamed side the values of that side are undefined, and so are the deltas: total
/// latency (`latency_p50_ms`) is the figure both sides share.
fn stream_deltas(b: Option<&Metrics>, c: Option<&Metrics>) -> Vec<MetricDelta> {
    let (bs, cs) = (
        b.and_then(|m| m.stream.as_ref()),
        c.and_then(|m| m.stream.as_ref()),
    );
    if bs.is_none() && cs.is_none() {
        return Vec::new();
    }
    crate::score::stream::STREAM_METRICS
        .iter()
        .map(|name| {
            let b = bs.and_then(|m| m.value(name));
            let c = cs.and_then(|m| m.value(name));
            MetricDelta {
                metric: name.to_string(),
                baseline: b,
                candidate: c,
                delta: b.zip(c).map(|(b, c)| c - b),
            }
        })
        .collect()
}

/// Pass/fail gates on a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Gate {
    /// Fail when a cell's paired accuracy drops by more than this many percentage points
    /// (e.g. `5.0`) and the drop is significant (or `strict`).
    pub fail_on_regression: Option<f64>,
    /// Count a drop beyond `fail_on_regression` even when the paired test finds it not
    /// significant.
    pub strict: bool,
    /// Fail any cell where the candidate's accuracy over all of its scored trials in the
    /// cell is below this fraction (e.g. `0.8`). A candidate cell with no scored trial
    /// fails too: a gate that can not be measured must not pass silently.
    pub min_accuracy: Option<f64>,
}

/// A gate that did not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "gate", rename_all = "snake_case")]
pub enum GateFailure {
    /// `fail_on_regression`: the candidate's paired accuracy fell too far.
    Regression {
        /// Cell label.
        cell: String,
        /// Baseline accuracy on the pairs.
        baseline_accuracy: f64,
        /// Candidate accuracy on the pairs.
        candidate_accuracy: f64,
        /// The drop, in points (positive).
        drop_points: f64,
        /// The gate's limit, in points.
        limit_points: f64,
        /// The paired test's p-value.
        p_value: f64,
        /// The test (`mcnemar_exact`, `sign_flip_exact`, ...).
        test: PairedTest,
        /// Its units: cases with a scored pair.
        cases: u64,
        /// Whether p < 0.05 (false only in strict mode).
        significant: bool,
    },
    /// `fail_on_regression`: a cell both sides have holds no scored pair (every pair
    /// errored, or the trials did not match), so the drop can not be measured there.
    Unmeasured {
        /// Cell label.
        cell: String,
        /// Pairs left out because a side errored.
        unscored_pairs: u64,
        /// Baseline trials without a candidate partner.
        only_baseline: u64,
        /// Candidate trials without a baseline partner.
        only_candidate: u64,
    },
    /// Always checked: the comparison holds no scored pair at all, so it compared
    /// nothing and must not pass.
    NoPairs {
        /// Baseline trials without a candidate partner.
        only_baseline: u64,
        /// Candidate trials without a baseline partner.
        only_candidate: u64,
        /// Pairs left out because a side errored.
        unscored_pairs: u64,
    },
    /// `min_accuracy`: the candidate's accuracy in a cell is below the minimum.
    MinAccuracy {
        /// Cell label.
        cell: String,
        /// The candidate's accuracy over its scored trials; `None` when none was scored.
        accuracy: Option<f64>,
        /// The minimum (a fraction).
        min: f64,
    },
}

/// Why nothing was paired, as `; `-separated counts.
fn unpaired_reason(only_baseline: u64, only_candidate: u64, unscored_pairs: u64) -> String {
    let mut parts = Vec::new();
    if only_baseline > 0 {
        parts.push(format!(
            "{only_baseline} baseline trials had no candidate partner"
        ));
    }
    if only_candidate > 0 {
        parts.push(format!(
            "{only_candidate} candidate trials had no baseline partner"
        ));
    }
    if unscored_pairs > 0 {
        parts.push(format!("{unscored_pairs} pairs had an errored side"));
    }
    if parts.is_empty() {
        "neither side has a trial".to_string()
    } else {
        parts.join("; ")
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("= {p:.3}")
    }
}

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateFailure::Regression {
                cell,
                baseline_accuracy,
                candidate_accuracy,
                drop_points,
                limit_points,
                p_value,
                test,
                cases,
                significant,
            } => {
                let unit = match test {
                    PairedTest::SignFlipExact | PairedTest::SignFlipNormal => {
                        format!(" over {cases} cases")
                    }
                    _ => String::new(),
                };
                write!(
                    f,
                    "accuracy fell {drop_points:.1} points in {cell} ({:.1}% → {:.1}%, \
                     {} p {}{unit}), more than the {limit_points:.1} points fail_on_regression allows",
                    baseline_accuracy * 100.0,
                    candidate_accuracy * 100.0,
                    test.short(),
                    fmt_p(*p_value),
                )?;
                if !significant {
                    f.write_str(" (strict: not significant)")?;
                }
                Ok(())
            }
            GateFailure::MinAccuracy {
                cell,
                accuracy: Some(a),
                min,
            } => write!(
                f,
                "accuracy {:.1}% in {cell} is below min_accuracy {:.1}%",
                a * 100.0,
                min * 100.0
            ),
            GateFailure::MinAccuracy {
                cell,
                accuracy: None,
                min,
            } => write!(
                f,
                "accuracy undefined in {cell} (no scored candidate trial), min_accuracy {:.1}%",
                min * 100.0
            ),
            GateFailure::Unmeasured {
                cell,
                unscored_pairs,
                only_baseline,
                only_candidate,
            } => write!(
                f,
                "no scored pairs in {cell} ({}), so fail_on_regression can not be checked there",
                unpaired_reason(*only_baseline, *only_candidate, *unscored_pairs)
            ),
            GateFailure::NoPairs {
                only_baseline,
                only_candidate,
                unscored_pairs,
            } => write!(
                f,
                "nothing was compared: 0 scored pairs ({}); check that both sides ran the \
                 same suite, cases, variants, targets and tool_choice modes",
                unpaired_reason(*only_baseline, *only_candidate, *unscored_pairs)
            ),
        }
    }
}

/// Check `gate` on every cell of `c`; empty when everything holds. A comparison without
/// a single scored pair fails whatever the gate ([`GateFailure::NoPairs`], listed last).
pub fn check_gates(c: &Comparison, gate: &Gate) -> Vec<GateFailure> {
    let mut out = Vec::new();
    let regression = |label: &str, p: &Paired, out: &mut Vec<GateFailure>| {
        if let (Some(limit), Some(b), Some(a), Some(d)) = (
            gate.fail_on_regression,
            p.baseline_accuracy,
            p.candidate_accuracy,
            p.delta_points,
        ) && -d > limit
            && (gate.strict || p.significant)
        {
            out.push(GateFailure::Regression {
                cell: label.to_string(),
                baseline_accuracy: b,
                candidate_accuracy: a,
                drop_points: -d,
                limit_points: limit,
                p_value: p.p_value,
                test: p.test,
                cases: p.cases,
                significant: p.significant,
            });
        }
    };
    // Small cells rarely reach significance alone; the pooled pairs can.
    if c.cells.len() > 1 {
        regression("overall", &c.overall, &mut out);
    }
    for cell in &c.cells {
        regression(&cell.cell, &cell.paired, &mut out);
        if gate.fail_on_regression.is_some()
            && c.overall.n > 0
            && cell.paired.n == 0
            && cell.baseline.is_some()
            && cell.candidate.is_some()
        {
            out.push(GateFailure::Unmeasured {
                cell: cell.cell.clone(),
                unscored_pairs: cell.unscored_pairs,
                only_baseline: cell.only_baseline,
                only_candidate: cell.only_candidate,
            });
        }
        if let Some(min) = gate.min_accuracy
            && cell.candidate.is_some()
        {
            let accuracy = cell.candidate_accuracy_all();
            if accuracy.is_none_or(|a| a < min) {
                out.push(GateFailure::MinAccuracy {
                    cell: cell.cell.clone(),
                    accuracy,
                    min,
                });
            }
        }
    }
    if c.overall.n == 0 {
        out.push(GateFailure::NoPairs {
            only_baseline: c.only_baseline,
            only_candidate: c.only_candidate,
            unscored_pairs: c.unscored_pairs,
        });
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.1}%", x * 100.0))
}

fn points(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:+.1}"))
}

fn p_cell(p: &Paired) -> String {
    if p.n == 0 {
        "-".to_string()
    } else if p.p_value < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{:.3}", p.p_value)
    }
}

/// The 95% interval of the delta in points, `[-38.9, -8.7]`; `-` without pairs.
fn interval(p: &Paired) -> String {
    match (p.delta_low_points, p.delta_high_points) {
        (Some(lo), Some(hi)) => format!("[{lo:+.1}, {hi:+.1}]"),
        _ => "-".to_string(),
    }
}

/// The rows that ran a test: cells with pairs, and the pooled row when shown.
fn tested(c: &Comparison) -> impl Iterator<Item = &Paired> {
    let overall = (c.cells.len() > 1).then_some(&c.overall);
    c.cells
        .iter()
        .map(|x| &x.paired)
        .chain(overall)
        .filter(|p| p.test != PairedTest::None)
}

/// The heading of the p-value column: the test's name when every row used the same one.
fn p_header(c: &Comparison) -> String {
    let mut names: Vec<&str> = tested(c).map(|p| p.test.short()).collect();
    names.dedup();
    match names.as_slice() {
        [] => "McNemar p".to_string(),
        [one] => format!("{one} p"),
        _ => "p".to_string(),
    }
}

/// One sentence naming the test(s), the unit and the interval.
pub fn test_note(c: &Comparison) -> String {
    let mut tests: Vec<PairedTest> = Vec::new();
    for p in tested(c) {
        if !tests.contains(&p.test) {
            tests.push(p.test);
        }
    }
    if tests.is_empty() {
        return "Test: none, no scored pairs.".to_string();
    }
    let names: Vec<&str> = tests.iter().map(|t| t.describe()).collect();
    let o = &c.overall;
    format!(
        "Test: {}; significant at p < 0.05. Unit: the case ({} cases, up to {} scored \
         pairs each). 95% CI: interval of the delta in points, cluster-robust with cases as \
         clusters.",
        names.join(" / "),
        o.cases,
        o.max_pairs_per_case
    )
}

fn yes_no(p: &Paired) -> &'static str {
    match (p.n, p.significant) {
        (0, _) => "-",
        (_, true) => "yes",
        (_, false) => "no",
    }
}

/// Notes on trials left out of the pairing, one line each; empty when none was.
fn unpaired_notes(c: &Comparison) -> Vec<String> {
    let mut notes = Vec::new();
    if c.only_baseline > 0 {
        notes.push(format!(
            "{} baseline trials had no candidate partner",
            c.only_baseline
        ));
    }
    if c.only_candidate > 0 {
        notes.push(format!(
            "{} candidate trials had no baseline partner",
            c.only_candidate
        ));
    }
    if c.unscored_pairs > 0 {
        notes.push(format!(
            "{} pairs left out because a side errored",
            c.unscored_pairs
        ));
    }
    if c.duplicates > 0 {
        notes.push(format!(
            "{} duplicate trials left out (same case, tool_choice and repeat in one cell)",
            c.duplicates
        ));
    }
    notes
}

/// A terminal table: one row per cell (pairs, both accuracies, delta in points with its
/// 95% interval, the paired test's p, significance, flips as `↓pass→fail ↑fail→pass`),
/// an overall row when there are several cells, then the test used and notes on
/// unpaired trials.
pub fn render_terminal(c: &Comparison) -> String {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "cell".to_string(),
        "n paired".to_string(),
        "baseline".to_string(),
        "candidate".to_string(),
        "delta (pts)".to_string(),
        "95% CI".to_string(),
        p_header(c),
        "significant".to_string(),
        "flips ↓/↑".to_string(),
    ]);
    let row = |label: &str, p: &Paired| -> Vec<Cell> {
        vec![
            Cell::new(label),
            Cell::new(p.n).set_alignment(CellAlignment::Right),
            Cell::new(pct(p.baseline_accuracy)).set_alignment(CellAlignment::Right),
            Cell::new(pct(p.candidate_accuracy)).set_alignment(CellAlignment::Right),
            Cell::new(points(p.delta_points)).set_alignment(CellAlignment::Right),
            Cell::new(interval(p)).set_alignment(CellAlignment::Right),
            Cell::new(p_cell(p)).set_alignment(CellAlignment::Right),
            Cell::new(yes_no(p)),
            Cell::new(format!("↓{} ↑{}", p.n10, p.n01)),
        ]
    };
    for cell in &c.cells {
        table.add_row(row(&cell.cell, &cell.paired));
    }
    if c.cells.len() > 1 {
        table.add_row(row("overall", &c.overall));
    }
    let mut out = format!("{table}\n{}\n", test_note(c));
    for note in unpaired_notes(c) {
        let _ = writeln!(out, "{note}");
    }
    out.push_str(&behaviour::terminal(c));
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A GitHub-flavoured Markdown report: a table with regressions first (significant ones
/// first, then the largest drops), the pooled result, notes on unpaired trials, and the
/// pass → fail flips.
pub fn render_markdown(c: &Comparison) -> String {
    let mut order: Vec<&CellComparison> = c.cells.iter().collect();
    // Stable: significant regressions, other regressions (largest drop first), the rest in
    // their original order.
    let rank = |x: &CellComparison| match (x.paired.is_regression(), x.paired.significant) {
        (true, true) => 0,
        (true, false) => 1,
        _ => 2,
    };
    order.sort_by(|x, y| {
        rank(x).cmp(&rank(y)).then_with(|| {
            if rank(x) < 2 {
                let d = |c: &CellComparison| c.paired.delta_points.unwrap_or(0.0);
                d(x).total_cmp(&d(y))
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| cell | n paired | baseline | candidate | Δ points | {} | significant \
         | pass→fail | fail→pass | 95% CI (points) |",
        p_header(c)
    );
    out.push_str("|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|\n");
    for cell in &order {
        let p = &cell.paired;
        let mark = if p.is_regression() && p.significant {
            " ⚠️"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {}{mark} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_escape(&cell.cell),
            p.n,
            pct(p.baseline_accuracy),
            pct(p.candidate_accuracy),
            points(p.delta_points),
            p_cell(p),
            yes_no(p),
            p.n10,
            p.n01,
            interval(p)
        );
    }
    let o = &c.overall;
    if o.n == 0 {
        out.push_str("\n**Overall**: 0 pairs: nothing was compared, p undefined.\n");
    } else {
        let _ = writeln!(
            out,
            "\n**Overall**: {} pairs from {} cases, {} → {} ({} points, 95% CI {}), {} p {}.",
            o.n,
            o.cases,
            pct(o.baseline_accuracy),
            pct(o.candidate_accuracy),
            points(o.delta_points),
            interval(o),
            o.test.short(),
            fmt_p(o.p_value)
        );
    }
    let _ = writeln!(out, "\n{}", test_note(c));
    let notes = unpaired_notes(c);
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out.push_str(&behaviour::markdown(c, md_escape));
    let flips: Vec<(&CellComparison, &Flip)> = order
        .iter()
        .flat_map(|cell| {
            cell.flips(FlipDirection::PassToFail)
                .map(move |f| (*cell, f))
        })
        .collect();
    if !flips.is_empty() {
        let _ = writeln!(out, "\n### Pass → fail ({})\n", flips.len());
        for (cell, f) in flips.iter().take(MAX_MARKDOWN_FLIPS) {
            let _ = writeln!(
                out,
                "- `{}` (tool_choice {}, repeat {}) in {}",
                f.case_id,
                f.tool_choice,
                f.repeat,
                md_escape(&cell.cell)
            );
        }
        if flips.len() > MAX_MARKDOWN_FLIPS {
            let _ = writeln!(out, "- and {} more", flips.len() - MAX_MARKDOWN_FLIPS);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Response, ToolChoice};
    use crate::suite::CaseKind;

    const T: &str = "openai:gpt-4o-mini";

    pub(super) fn trial(
        case: &str,
        target: &str,
        variant: &str,
        repeat: u32,
        verdict: Verdict,
    ) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind: CaseKind::ShouldCall,
            tags: vec![],
            target: target.into(),
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

    fn v(pass: bool) -> Verdict {
        if pass { Verdict::Pass } else { Verdict::Fail }
    }

    /// Two runs of one cell (`T × clear × auto`) with the given paired counts: `n11` both
    /// pass, `n10` pass → fail, `n01` fail → pass, `n00` both fail.
    pub(super) fn runs(
        variant: &str,
        n11: usize,
        n10: usize,
        n01: usize,
        n00: usize,
    ) -> (Vec<TrialRecord>, Vec<TrialRecord>) {
        let mut b = Vec::new();
        let mut c = Vec::new();
        let groups = [
            (n11, true, true),
            (n10, true, false),
            (n01, false, true),
            (n00, false, false),
        ];
        let mut i = 0;
        for (count, bp, cp) in groups {
            for _ in 0..count {
                let id = format!("{variant}-case{i:02}");
                b.push(trial(&id, T, variant, 0, v(bp)));
                c.push(trial(&id, T, variant, 0, v(cp)));
                i += 1;
            }
        }
        (b, c)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn mcnemar_hand_values() {
        // No discordant pairs: nothing to test.
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // One discordant pair: P(X ≤ 0) = 1/2, doubled = 1.
        assert_eq!(mcnemar_exact(1, 0), 1.0);
        assert_eq!(mcnemar_exact(0, 1), 1.0);
        // 6 vs 0: 2 × (1/2)^6 = 2/64 = 0.03125.
        assert!(close(mcnemar_exact(6, 0), 0.03125));
        assert!(close(mcnemar_exact(0, 6), 0.03125));
        // 10 vs 2, n = 12: P(X ≤ 2) = (1 + 12 + 66) / 4096 = 79/4096; p = 158/4096.
        assert!(close(mcnemar_exact(10, 2), 158.0 / 4096.0));
        assert!(close(mcnemar_exact(2, 10), 158.0 / 4096.0));
        assert!((mcnemar_exact(10, 2) - 0.03857).abs() < 1e-5);
        // 10 vs 0: 2/1024.
        assert!(close(mcnemar_exact(10, 0), 2.0 / 1024.0));
        // Balanced: P(X ≤ 5) with n = 10 is over 1/2, so p caps at 1.
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        // 2 vs 1, n = 3: P(X ≤ 1) = 4/8, doubled = 1.
        assert_eq!(mcnemar_exact(2, 1), 1.0);
        // 20 vs 10: Σ_{i ≤ 10} C(30, i) / 2^30, doubled (computed with exact integers).
        assert!(close(mcnemar_exact(20, 10), 0.09873714670538902));
    }

    #[test]
    fn mcnemar_large_counts() {
        // Either side of the switch from exact integers (n ≤ 120) to log space (n > 120);
        // references from exact integer arithmetic.
        let near = |p: f64, r: f64| (p - r).abs() <= 1e-11 * r;
        assert!(near(mcnemar_exact(70, 50), 0.082_407_479_327_526_55));
        assert!(near(mcnemar_exact(70, 51), 0.101_367_653_533_092_28));
        assert!(near(mcnemar_exact(80, 41), 4.985_619_576_974_204e-4));
        assert!(near(mcnemar_exact(100, 21), 1.606_311_290_539_171_5e-13));
        // Large symmetric case: exactly 1.
        assert_eq!(mcnemar_exact(50_000, 50_000), 1.0);
        // One short of symmetric: 2 · P(X ≤ 49,999) = 1 - P(X = 50,000) with n = 100,000;
        // exact reference 0.99747687378580326011...
        let p = mcnemar_exact(49_999, 50_001);
        assert!((p - 0.997_476_873_785_803_3).abs() < 1e-11, "{p}");
        // n = 100,000, 50,500 vs 49,500; reference from exact integer arithmetic:
        // 0.0015823598788515956444...
        let p = mcnemar_exact(50_500, 49_500);
        assert!(
            (p - 0.001_582_359_878_851_595_6).abs() < 1e-9 * 0.0016,
            "{p:e}"
        );
        // 1,000 vs 800: tiny but positive; exact reference 2.6653428811933197e-06.
        let p = mcnemar_exact(1_000, 800);
        assert!(
            (p - 2.665_342_881_193_319_7e-6).abs() < 1e-9 * 2.7e-6,
            "{p:e}"
        );
        // 40,000 vs 39,000: reference 3.789490097046635e-4.
        let p = mcnemar_exact(40_000, 39_000);
        assert!(
            (p - 3.789_490_097_046_635e-4).abs() < 1e-9 * 3.8e-4,
            "{p:e}"
        );
        // Symmetric in its arguments and never above 1.
        for (b, c) in [(3, 17), (100, 0), (0, 1000), (12_345, 12_000)] {
            assert_eq!(mcnemar_exact(b, c), mcnemar_exact(c, b));
            assert!(mcnemar_exact(b, c) <= 1.0);
        }
        // Extremely lopsided: underflows to 0 rather than anything negative or NaN.
        let p = mcnemar_exact(100_000, 0);
        assert!((0.0..1e-300).contains(&p), "{p:e}");
    }

    #[test]
    fn regression_fails_the_gate() {
        // 40 pairs: 26 both pass, 10 pass → fail, 0 fail → pass, 4 both fail.
        // Baseline 36/40 = 90%, candidate 26/40 = 65%: -25 points, p = 2/1024.
        let (b, c) = runs("clear", 26, 10, 0, 4);
        let cmp = compare_runs(&b, &c);
        assert_eq!(cmp.cells.len(), 1);
        let cell = &cmp.cells[0];
        assert_eq!(cell.cell, format!("{T} × clear × auto"));
        let p = &cell.paired;
        assert_eq!((p.n, p.n11, p.n10, p.n01, p.n00), (40, 26, 10, 0, 4));
        assert!(close(p.baseline_accuracy.unwrap(), 0.9));
        assert!(close(p.candidate_accuracy.unwrap(), 0.65));
        assert!((p.delta_points.unwrap() + 25.0).abs() < 1e-9);
        assert!(close(p.p_value, 2.0 / 1024.0));
        assert!(p.significant);
        assert_eq!(cell.flips.len(), 10);
        assert!(
            cell.flips
                .iter()
                .all(|f| f.direction == FlipDirection::PassToFail)
        );
        assert_eq!(cmp.overall, *p);
        assert_eq!(p.test, PairedTest::McnemarExact);

        let gate = Gate {
            fail_on_regression: Some(5.0),
            ..Gate::default()
        };
        let failures = check_gates(&cmp, &gate);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(
            failures[0].to_string(),
            format!(
                "accuracy fell 25.0 points in {T} × clear × auto (90.0% → 65.0%, \
                 McNemar p = 0.002), more than the 5.0 points fail_on_regression allows"
            )
        );
        // A limit above the drop lets it through.
        let lax = Gate {
            fail_on_regression: Some(30.0),
            ..Gate::default()
        };
        assert!(check_gates(&cmp, &lax).is_empty());
        // Serialises with the gate's name.
        let json = serde_json::to_value(&failures[0]).unwrap();
        assert_eq!(json["gate"], "regression");
        assert_eq!(json["drop_points"], 25.0);
    }

    #[test]
    fn noise_passes_unless_strict() {
        // 40 pairs: 34 both pass, 2 pass → fail, 1 fail → pass, 3 both fail.
        // Baseline 36/40 = 90%, candidate 35/40 = 87.5%: -2.5 points, p = 1.
        let (b, c) = runs("clear", 34, 2, 1, 3);
        let cmp = compare_runs(&b, &c);
        let p = &cmp.cells[0].paired;
        assert_eq!((p.n10, p.n01), (2, 1));
        assert!((p.delta_points.unwrap() + 2.5).abs() < 1e-9);
        assert_eq!(p.p_value, 1.0);
        assert!(!p.significant);
        // Not significant: passes a 2-point gate, and a 5-point one.
        for limit in [2.0, 5.0] {
            let gate = Gate {
                fail_on_regression: Some(limit),
                ..Gate::default()
            };
            assert!(check_gates(&cmp, &gate).is_empty());
        }
        // Strict, 5 points: the 2.5-point drop is within the limit.
        let strict5 = Gate {
            fail_on_regression: Some(5.0),
            strict: true,
            ..Gate::default()
        };
        assert!(check_gates(&cmp, &strict5).is_empty());
        // Strict, 2 points: the drop exceeds it and fails without significance.
        let strict2 = Gate {
            fail_on_regression: Some(2.0),
            strict: true,
            ..Gate::default()
        };
        let failures = check_gates(&cmp, &strict2);
        assert_eq!(failures.len(), 1);
        assert!(
            matches!(
                failures[0],
                GateFailure::Regression {
                    significant: false,
                    ..
                }
            ),
            "{failures:?}"
        );
        let text = failures[0].to_string();
        assert!(text.contains("accuracy fell 2.5 points"), "{text}");
        assert!(text.contains("90.0% → 87.5%, McNemar p = 1.000"), "{text}");
        assert!(text.contains("strict"), "{text}");
    }

    #[test]
    fn improvements_never_fail_the_regression_gate() {
        // The mirror of the regression: 10 fail → pass.
        let (b, c) = runs("clear", 26, 0, 10, 4);
        let cmp = compare_runs(&b, &c);
        assert!(cmp.cells[0].paired.significant);
        assert!((cmp.cells[0].paired.delta_points.unwrap() - 25.0).abs() < 1e-9);
        let gate = Gate {
            fail_on_regression: Some(0.0),
            strict: true,
            ..Gate::default()
        };
        assert!(check_gates(&cmp, &gate).is_empty());
    }

    #[test]
    fn min_accuracy_applies_to_every_candidate_cell() {
        // Cell clear: candidate 26/40 = 65%. Cell terse: candidate 36/40 = 90%.
        let (mut b, mut c) = runs("clear", 26, 10, 0, 4);
        let (b2, c2) = runs("terse", 36, 0, 0, 4);
        b.extend(b2);
        c.extend(c2);
        // A cell only the candidate has (30% accuracy), and one only the baseline has.
        for i in 0..10 {
            c.push(trial(&format!("n{i}"), T, "new", 0, v(i < 3)));
            b.push(trial(&format!("o{i}"), T, "old", 0, Verdict::Fail));
        }
        // A candidate cell with errors only: accuracy undefined.
        c.push(trial("e", T, "broken", 0, Verdict::Error));
        let cmp = compare_runs(&b, &c);
        let gate = Gate {
            min_accuracy: Some(0.8),
            ..Gate::default()
        };
        let failures = check_gates(&cmp, &gate);
        let cells: Vec<&str> = failures
            .iter()
            .map(|f| match f {
                GateFailure::MinAccuracy { cell, .. } => cell.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            cells,
            [
                format!("{T} × clear × auto"),
                format!("{T} × new × auto"),
                format!("{T} × broken × auto"),
            ]
        );
        assert_eq!(
            failures[0].to_string(),
            format!("accuracy 65.0% in {T} × clear × auto is below min_accuracy 80.0%")
        );
        assert_eq!(
            failures[2].to_string(),
            format!(
                "accuracy undefined in {T} × broken × auto (no scored candidate trial), \
                 min_accuracy 80.0%"
            )
        );
        // The baseline-only cell `old` (0%) is not gated.
        assert!(!cells.iter().any(|c| c.contains("old")));
    }

    #[test]
    fn unpaired_trials_are_counted() {
        let b = vec![
            trial("a", T, "clear", 0, Verdict::Pass),
            trial("b", T, "clear", 0, Verdict::Pass),
            trial("only-b", T, "clear", 0, Verdict::Pass),
            // Repeat 1 of `a` exists only in the baseline.
            trial("a", T, "clear", 1, Verdict::Fail),
        ];
        let c = vec![
            trial("a", T, "clear", 0, Verdict::Fail),
            trial("b", T, "clear", 0, Verdict::Pass),
            trial("only-c1", T, "clear", 0, Verdict::Pass),
            trial("only-c2", T, "clear", 0, Verdict::Fail),
            // A cell the baseline lacks entirely.
            trial("a", T, "terse", 0, Verdict::Pass),
        ];
        let cmp = compare_runs(&b, &c);
        assert_eq!(cmp.cells.len(), 2);
        let clear = &cmp.cells[0];
        assert_eq!(clear.paired.n, 2);
        assert_eq!((clear.paired.n11, clear.paired.n10), (1, 1));
        assert_eq!(clear.only_baseline, 2);
        assert_eq!(clear.only_candidate, 2);
        assert_eq!(
            clear.flips,
            vec![Flip {
                case_id: "a".into(),
                tool_choice: "auto".into(),
                repeat: 0,
                direction: FlipDirection::PassToFail,
            }]
        );
        let terse = &cmp.cells[1];
        assert_eq!(terse.baseline, None);
        assert_eq!(terse.candidate.as_ref().unwrap().variant, "terse");
        assert_eq!(terse.paired.n, 0);
        assert_eq!(terse.paired.delta_points, None);
        assert_eq!(terse.paired.p_value, 1.0);
        assert!(!terse.paired.significant);
        assert_eq!((terse.only_baseline, terse.only_candidate), (0, 1));
        assert_eq!((cmp.only_baseline, cmp.only_candidate), (2, 3));
        // Reported in both renderings.
        assert!(render_terminal(&cmp).contains("3 candidate trials had no baseline partner"));
        assert!(render_markdown(&cmp).contains("2 baseline trials had no candidate partner"));
        // A cell without pairs cannot fail the regression gate.
        let gate = Gate {
            fail_on_regression: Some(0.0),
            strict: true,
            ..Gate::default()
        };
        // The pooled pairs (overall) and the `clear` cell fail; `terse` has no pairs.
        let failures = check_gates(&cmp, &gate);
        assert_eq!(failures.len(), 2);
        assert!(
            failures[0].to_string().contains("in overall"),
            "{}",
            failures[0]
        );
        assert!(failures[1].to_string().contains("clear"));
        assert!(failures.iter().all(|f| !f.to_string().contains("terse")));
    }

    #[test]
    fn error_trials_are_not_paired() {
        let b = vec![
            trial("a", T, "clear", 0, Verdict::Pass),
            trial("b", T, "clear", 0, Verdict::Error),
            trial("c", T, "clear", 0, Verdict::Pass),
            trial("d", T, "clear", 0, Verdict::Error),
        ];
        let c = vec![
            trial("a", T, "clear", 0, Verdict::Pass),
            trial("b", T, "clear", 0, Verdict::Pass),
            trial("c", T, "clear", 0, Verdict::Error),
            trial("d", T, "clear", 0, Verdict::Error),
        ];
        let cmp = compare_runs(&b, &c);
        let cell = &cmp.cells[0];
        // Only `a` is a scored pair; b, c, d each have an error on some side.
        assert_eq!(cell.paired.n, 1);
        assert_eq!(cell.paired.n11, 1);
        assert_eq!(cell.unscored_pairs, 3);
        assert_eq!((cell.only_baseline, cell.only_candidate), (0, 0));
        assert!(cell.flips.is_empty());
        assert_eq!(cmp.unscored_pairs, 3);
        // The metrics see every trial: error_rate 2/4 on both sides.
        let e = cell.metric("error_rate").unwrap();
        assert_eq!(
            (e.baseline, e.candidate, e.delta),
            (Some(0.5), Some(0.5), Some(0.0))
        );
        assert!(render_markdown(&cmp).contains("3 pairs left out because a side errored"));
    }

    #[test]
    fn metric_deltas_cover_every_metric() {
        let (b, c) = runs("clear", 26, 10, 0, 4);
        let cmp = compare_runs(&b, &c);
        let cell = &cmp.cells[0];
        let names: Vec<&str> = cell.metrics.iter().map(|m| m.metric.as_str()).collect();
        assert_eq!(names, METRIC_NAMES);
        let acc = cell.metric("accuracy").unwrap();
        assert_eq!(acc.baseline, Some(0.9));
        assert_eq!(acc.candidate, Some(0.65));
        assert!((acc.delta.unwrap() + 0.25).abs() < 1e-12);
        // No checks in these trials: trigger metrics are undefined on both sides.
        let prec = cell.metric("trigger_precision").unwrap();
        assert_eq!(
            (prec.baseline, prec.candidate, prec.delta),
            (None, None, None)
        );
        // No repeats: no pass@k.
        assert_eq!(cell.metric("pass_at_k").unwrap().delta, None);
        assert!(cell.metric("nonsense").is_none());
    }

    #[test]
    fn repeats_pair_separately() {
        let b = vec![
            trial("a", T, "clear", 0, Verdict::Pass),
            trial("a", T, "clear", 1, Verdict::Fail),
        ];
        let c = vec![
            trial("a", T, "clear", 1, Verdict::Pass),
            trial("a", T, "clear", 0, Verdict::Pass),
        ];
        let cell = &compare_runs(&b, &c).cells[0];
        assert_eq!((cell.paired.n11, cell.paired.n01), (1, 1));
        assert_eq!(cell.flips[0].repeat, 1);
        assert_eq!(cell.flips[0].direction, FlipDirection::FailToPass);
    }

    #[test]
    fn tool_choice_is_part_of_the_identity() {
        let mut req = trial("a", T, "clear", 0, Verdict::Fail);
        req.tool_choice = ToolChoice::Required;
        let b = vec![trial("a", T, "clear", 0, Verdict::Pass), req.clone()];
        let mut req_c = req.clone();
        req_c.verdict = Verdict::Pass;
        let c = vec![trial("a", T, "clear", 0, Verdict::Pass), req_c];
        // Default key: two cells.
        let cmp = compare_runs(&b, &c);
        assert_eq!(cmp.cells.len(), 2);
        assert_eq!(cmp.cells[1].cell, format!("{T} × clear × required"));
        // Ignoring tool_choice: one cell, still paired by tool_choice.
        let key = CellKey {
            tool_choice: false,
            ..CellKey::ALL
        };
        let cmp = compare_runs_by(&b, &c, key);
        assert_eq!(cmp.cells.len(), 1);
        let cell = &cmp.cells[0];
        assert_eq!(cell.cell, format!("{T} × clear × auto+required"));
        assert_eq!((cell.paired.n11, cell.paired.n01), (1, 1));
        assert_eq!(cell.flips[0].tool_choice, "required");
    }

    #[test]
    fn compare_by_ignoring_target() {
        let live = "openai:gpt-4o";
        let new = "openai:gpt-5-mini";
        let b: Vec<_> = (0..4)
            .map(|i| trial(&format!("c{i}"), live, "clear", 0, Verdict::Pass))
            .collect();
        let c: Vec<_> = (0..4)
            .map(|i| trial(&format!("c{i}"), new, "clear", 0, v(i != 0)))
            .collect();
        // Matching on target: two one-sided cells, nothing paired.
        let strict = compare_runs(&b, &c);
        assert_eq!(strict.cells.len(), 2);
        assert_eq!(strict.overall.n, 0);
        assert_eq!((strict.only_baseline, strict.only_candidate), (4, 4));
        // Ignoring target: one cell, four pairs, one flip.
        let cmp = compare_runs_by(&b, &c, CellKey::IGNORE_TARGET);
        assert_eq!(cmp.cells.len(), 1);
        let cell = &cmp.cells[0];
        assert_eq!(cell.cell, format!("{live} → {new} × clear × auto"));
        assert_eq!(cell.baseline.as_ref().unwrap().target, live);
        assert_eq!(cell.candidate.as_ref().unwrap().target, new);
        assert_eq!((cell.paired.n, cell.paired.n10), (4, 1));
        assert_eq!(cell.flips[0].case_id, "c0");

        // Two targets merged into one cell on the candidate side: the second is a duplicate.
        let mut c2 = c.clone();
        c2.extend(
            (0..4).map(|i| trial(&format!("c{i}"), "other:model", "clear", 0, Verdict::Pass)),
        );
        let cmp = compare_runs_by(&b, &c2, CellKey::IGNORE_TARGET);
        let cell = &cmp.cells[0];
        assert_eq!(cell.paired.n, 4);
        assert_eq!(cell.duplicates_candidate, 4);
        assert_eq!(cmp.duplicates, 4);
        assert_eq!(
            cell.candidate.as_ref().unwrap().target,
            format!("{new}+other:model")
        );
        assert!(render_terminal(&cmp).contains("4 duplicate trials"));
    }

    #[test]
    fn streamed_trials_are_a_cell_of_their_own_unless_the_stream_is_ignored() {
        let streamed = |case: &str, verdict| TrialRecord {
            stream: true,
            ..trial(case, T, "clear", 0, verdict)
        };
        // c0 passes both ways, c1 fails only when streamed, c2 fails both ways.
        let trials = vec![
            trial("c0", T, "clear", 0, Verdict::Pass),
            trial("c1", T, "clear", 0, Verdict::Pass),
            trial("c2", T, "clear", 0, Verdict::Fail),
            streamed("c0", Verdict::Pass),
            streamed("c1", Verdict::Fail),
            streamed("c2", Verdict::Fail),
        ];
        let cmp = compare_streamed(&trials);
        assert_eq!(cmp.key, CellKey::IGNORE_STREAM);
        assert_eq!(cmp.cells.len(), 1);
        let c = &cmp.cells[0];
        assert_eq!(c.cell, format!("{T} × clear × auto × no stream → stream"));
        assert_eq!(
            (
                c.paired.n,
                c.paired.n11,
                c.paired.n10,
                c.paired.n01,
                c.paired.n00
            ),
            (3, 1, 1, 0, 1)
        );
        assert_eq!(c.baseline.as_ref().unwrap().stream, "");
        assert_eq!(c.candidate.as_ref().unwrap().stream, "stream");
        // Matching on the stream mode (the default), the two halves pair nothing.
        let (plain, stream): (Vec<_>, Vec<_>) = trials.into_iter().partition(|t| !t.stream);
        let apart = compare_runs(&plain, &stream);
        assert_eq!(apart.overall.n, 0);
        assert_eq!((apart.only_baseline, apart.only_candidate), (3, 3));
        assert_eq!(apart.cells[1].cell, format!("{T} × clear × auto × stream"));
        let across = compare_runs_by(&plain, &stream, CellKey::ALL.across_stream());
        assert_eq!(across.overall.n, 3);
        // The key prints as before unless it ignores the stream mode.
        assert_eq!(
            serde_json::to_value(CellKey::ALL).unwrap(),
            serde_json::json!({"target": true, "variant": true, "tool_choice": true})
        );
        assert_eq!(
            serde_json::to_value(CellKey::IGNORE_STREAM).unwrap()["stream"],
            false
        );
    }

    #[test]
    fn compare_variants_pairs_within_a_run() {
        let other = "anthropic:claude-haiku";
        let mut trials = Vec::new();
        for i in 0..6 {
            let id = format!("c{i}");
            // clear: all pass on T; terse: c0, c1 fail on T.
            trials.push(trial(&id, T, "clear", 0, Verdict::Pass));
            trials.push(trial(&id, T, "terse", 0, v(i >= 2)));
            // On the other target, terse fixes c5.
            trials.push(trial(&id, other, "clear", 0, v(i != 5)));
            trials.push(trial(&id, other, "terse", 0, Verdict::Pass));
            // A third variant that must be ignored.
            trials.push(trial(&id, T, "verbose", 0, Verdict::Fail));
        }
        let cmp = compare_variants(&trials, "clear", "terse");
        assert_eq!(cmp.key, CellKey::IGNORE_VARIANT);
        assert_eq!(cmp.cells.len(), 2);
        let t = &cmp.cells[0];
        assert_eq!(t.cell, format!("{T} × clear → terse × auto"));
        assert_eq!(
            (t.paired.n, t.paired.n11, t.paired.n10, t.paired.n01),
            (6, 4, 2, 0)
        );
        let o = &cmp.cells[1];
        assert_eq!(o.cell, format!("{other} × clear → terse × auto"));
        assert_eq!((o.paired.n11, o.paired.n10, o.paired.n01), (5, 0, 1));
        assert_eq!(o.flips[0].case_id, "c5");
        assert_eq!(
            (cmp.only_baseline, cmp.only_candidate, cmp.duplicates),
            (0, 0, 0)
        );
        assert_eq!(
            (cmp.overall.n, cmp.overall.n10, cmp.overall.n01),
            (12, 2, 1)
        );
        // Unknown variant: everything on one side.
        let none = compare_variants(&trials, "clear", "missing");
        assert_eq!(none.overall.n, 0);
        assert_eq!(none.only_baseline, 12);
    }

    #[test]
    fn markdown_puts_the_regression_first() {
        // First cell in input order improves; the second regresses significantly.
        let (mut b, mut c) = runs("better", 26, 0, 10, 4);
        let (b2, c2) = runs("worse", 26, 10, 0, 4);
        b.extend(b2);
        c.extend(c2);
        let cmp = compare_runs(&b, &c);
        assert!(cmp.cells[0].cell.contains("better"));
        let md = render_markdown(&cmp);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(rows[0].starts_with("| cell |"), "{md}");
        assert!(rows[1].contains("worse"), "{md}");
        assert!(rows[1].contains("⚠️"), "{md}");
        assert!(rows[1].contains("| 40 | 90.0% | 65.0% | -25.0 | 0.002 | yes | 10 | 0 |"));
        assert!(rows[2].contains("better"), "{md}");
        assert!(rows[2].contains("+25.0"), "{md}");
        // The flips list has the ten pass → fail flips of `worse` only.
        assert!(md.contains("### Pass → fail (10)"), "{md}");
        assert!(
            md.contains("- `worse-case26` (tool_choice auto, repeat 0) in"),
            "{md}"
        );
        assert!(!md.contains("`better-case"), "{md}");
        assert!(md.contains("**Overall**: 80 pairs"), "{md}");
    }

    #[test]
    fn markdown_orders_regressions_by_size_and_escapes_pipes() {
        let (mut b, mut c) = runs("small|drop", 36, 2, 0, 2);
        let (b2, c2) = runs("big", 30, 6, 0, 4);
        let (b3, c3) = runs("flat", 40, 0, 0, 0);
        for (x, y) in [(b2, c2), (b3, c3)] {
            b.extend(x);
            c.extend(y);
        }
        let md = render_markdown(&compare_runs(&b, &c));
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| cell"))
            .collect();
        // big (6 vs 0, p = 0.03125) is significant; small|drop is not.
        assert!(rows[0].contains("big"), "{md}");
        assert!(rows[1].contains("small\\|drop"), "{md}");
        assert!(rows[2].contains("flat"), "{md}");
    }

    #[test]
    fn terminal_table() {
        let (mut b, mut c) = runs("clear", 26, 10, 0, 4);
        let (b2, c2) = runs("terse", 34, 2, 1, 3);
        b.extend(b2);
        c.extend(c2);
        let out = render_terminal(&compare_runs(&b, &c));
        for needle in [
            "n paired",
            "McNemar p",
            &format!("{T} × clear × auto"),
            "90.0%",
            "65.0%",
            "-25.0",
            "0.002",
            "yes",
            "↓10 ↑0",
            "87.5%",
            "-2.5",
            "1.000",
            "↓2 ↑1",
            "overall",
        ] {
            assert!(out.contains(needle), "{needle:?} missing from\n{out}");
        }
        // Everything paired: no notes.
        assert!(!out.contains("partner"));
    }

    #[test]
    fn serialises_to_json() {
        let (b, c) = runs("clear", 26, 10, 0, 4);
        let cmp = compare_runs(&b, &c);
        let j = serde_json::to_value(&cmp).unwrap();
        assert_eq!(j["key"]["target"], true);
        assert_eq!(j["cells"][0]["paired"]["n"], 40);
        assert_eq!(j["cells"][0]["paired"]["n10"], 10);
        assert_eq!(j["cells"][0]["paired"]["significant"], true);
        assert_eq!(j["cells"][0]["flips"][0]["direction"], "pass_to_fail");
        assert_eq!(j["cells"][0]["baseline"]["variant"], "clear");
        assert_eq!(j["cells"][0]["metrics"][0]["metric"], "accuracy");
        assert_eq!(j["overall"]["n"], 40);
        let gate = serde_json::to_value(Gate {
            fail_on_regression: Some(5.0),
            strict: false,
            min_accuracy: None,
        })
        .unwrap();
        assert_eq!(gate["fail_on_regression"], 5.0);
    }

    #[test]
    fn empty_inputs() {
        let cmp = compare_runs(&[], &[]);
        assert!(cmp.cells.is_empty());
        assert_eq!(cmp.overall.n, 0);
        assert_eq!(cmp.overall.p_value, 1.0);
        assert_eq!(cmp.overall.test, PairedTest::None);
        let gate = Gate {
            fail_on_regression: Some(1.0),
            strict: true,
            min_accuracy: Some(0.5),
        };
        // Nothing compared is a failure, with or without gates.
        for g in [gate, Gate::default()] {
            let failures = check_gates(&cmp, &g);
            assert_eq!(
                failures,
                vec![GateFailure::NoPairs {
                    only_baseline: 0,
                    only_candidate: 0,
                    unscored_pairs: 0
                }]
            );
            assert!(
                failures[0]
                    .to_string()
                    .starts_with("nothing was compared: 0 scored pairs (neither side has a trial)")
            );
        }
        assert!(render_markdown(&cmp).contains("0 pairs: nothing was compared, p undefined"));
        assert!(render_terminal(&cmp).contains("n paired"));
        assert!(render_terminal(&cmp).contains("Test: none, no scored pairs."));
    }

    #[test]
    fn a_comparison_pairing_nothing_fails_last() {
        // Variant `missing` is on neither side: every baseline trial is unpaired.
        let (b, _) = runs("clear", 3, 0, 0, 1);
        let cmp = compare_variants(&b, "clear", "missing");
        let failures = check_gates(&cmp, &Gate::default());
        assert_eq!(failures.len(), 1);
        assert_eq!(
            failures[0].to_string(),
            "nothing was compared: 0 scored pairs (4 baseline trials had no candidate partner); \
             check that both sides ran the same suite, cases, variants, targets and tool_choice modes"
        );
        // Every pair errored on one side: also nothing compared, listed after the others.
        let b = vec![trial("a", T, "clear", 0, Verdict::Pass)];
        let c = vec![trial("a", T, "clear", 0, Verdict::Error)];
        let cmp = compare_runs(&b, &c);
        let gate = Gate {
            min_accuracy: Some(0.5),
            ..Gate::default()
        };
        let failures = check_gates(&cmp, &gate);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(matches!(
            failures[0],
            GateFailure::MinAccuracy { accuracy: None, .. }
        ));
        assert!(
            failures[1]
                .to_string()
                .contains("0 scored pairs (1 pairs had an errored side)"),
            "{}",
            failures[1]
        );
        let json = serde_json::to_value(&failures[1]).unwrap();
        assert_eq!(json["gate"], "no_pairs");
    }

    #[test]
    fn a_cell_without_scored_pairs_fails_the_regression_gate() {
        // `clear` pairs normally; `terse` is on both sides but every candidate trial errored.
        let (mut b, mut c) = runs("clear", 4, 0, 0, 0);
        for i in 0..3 {
            b.push(trial(&format!("t{i}"), T, "terse", 0, Verdict::Pass));
            c.push(trial(&format!("t{i}"), T, "terse", 0, Verdict::Error));
        }
        let cmp = compare_runs(&b, &c);
        assert!(check_gates(&cmp, &Gate::default()).is_empty());
        let gate = Gate {
            fail_on_regression: Some(5.0),
            ..Gate::default()
        };
        let failures = check_gates(&cmp, &gate);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(
            failures[0].to_string(),
            format!(
                "no scored pairs in {T} × terse × auto (3 pairs had an errored side), so \
                 fail_on_regression can not be checked there"
            )
        );
    }

    #[test]
    fn repeats_are_tested_by_case() {
        // Issue 10: 4 cases × 3 repeats; 11 of the 12 pairs went pass → fail (3, 3, 3, 2).
        let mut b = Vec::new();
        let mut c = Vec::new();
        for case in 0..4 {
            for r in 0..3 {
                let id = format!("c{case}");
                b.push(trial(&id, T, "clear", r, Verdict::Pass));
                c.push(trial(&id, T, "clear", r, v(case == 3 && r == 0)));
            }
        }
        let cmp = compare_runs(&b, &c);
        let p = &cmp.cells[0].paired;
        assert_eq!((p.n, p.n11, p.n10), (12, 1, 11));
        assert_eq!((p.cases, p.max_pairs_per_case), (4, 3));
        // Pairs as units (McNemar, 11 vs 0) would give p = 2/2048 < 0.001. With cases as
        // units only the 2 constant sign vectors of 16 are as extreme: p = 0.125.
        assert_eq!(p.test, PairedTest::SignFlipExact);
        assert_eq!(p.p_value, 0.125);
        assert!(!p.significant);
        // Delta -11/12 = -91.7 points; the interval (score::stats) reaches 0 and beyond.
        assert!((p.delta_points.unwrap() + 1100.0 / 12.0).abs() < 1e-9);
        assert_eq!(p.delta_low_points, Some(-100.0));
        assert!((p.delta_high_points.unwrap() - 22.892_311).abs() < 1e-4);
        // Not significant: the gate holds unless strict, and strict names the test.
        let gate = Gate {
            fail_on_regression: Some(5.0),
            ..Gate::default()
        };
        assert!(check_gates(&cmp, &gate).is_empty());
        let strict = Gate {
            strict: true,
            ..gate
        };
        let failures = check_gates(&cmp, &strict);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0]
                .to_string()
                .contains("(100.0% → 8.3%, sign-flip p = 0.125 over 4 cases)"),
            "{}",
            failures[0]
        );
        // Said in every rendering.
        let term = render_terminal(&cmp);
        assert!(term.contains("sign-flip p"), "{term}");
        assert!(
            term.contains("exact sign-flip test on per-case differences"),
            "{term}"
        );
        assert!(
            term.contains("4 cases, up to 3 scored pairs each"),
            "{term}"
        );
        assert!(term.contains("[-100.0, +22.9]"), "{term}");
        let md = render_markdown(&cmp);
        assert!(md.contains("| sign-flip p |"), "{md}");
        assert!(md.contains("12 pairs from 4 cases"), "{md}");
        let j = serde_json::to_value(&cmp).unwrap();
        assert_eq!(j["cells"][0]["paired"]["test"], "sign_flip_exact");
        assert_eq!(j["cells"][0]["paired"]["cases"], 4);
        assert_eq!(j["overall"]["test"], "sign_flip_exact");
        assert!(j["cells"][0].get("case_diffs").is_none());
    }

    #[test]
    fn one_repeat_is_plain_mcnemar() {
        let (b, c) = runs("clear", 26, 10, 0, 4);
        let cmp = compare_runs(&b, &c);
        let p = &cmp.cells[0].paired;
        assert_eq!(p.test, PairedTest::McnemarExact);
        assert_eq!((p.cases, p.max_pairs_per_case), (40, 1));
        assert_eq!(p.p_value, mcnemar_exact(10, 0));
        // The interval of score::stats' hand example: [-38.9, -8.7] points.
        assert!((p.delta_low_points.unwrap() + 38.903_447).abs() < 1e-4);
        assert!((p.delta_high_points.unwrap() + 8.715_601).abs() < 1e-4);
        let j = serde_json::to_value(&cmp).unwrap();
        assert_eq!(j["overall"]["test"], "mcnemar_exact");
        assert!(render_terminal(&cmp).contains("exact McNemar test"));
    }

    #[test]
    fn the_pooled_test_counts_each_cell_case_once() {
        // Two cells, 3 cases each, 2 repeats; in `clear` every pair of c0..c2 goes
        // pass → fail, in `terse` nothing changes.
        let mut b = Vec::new();
        let mut c = Vec::new();
        for variant in ["clear", "terse"] {
            for case in 0..3 {
                for r in 0..2 {
                    let id = format!("c{case}");
                    b.push(trial(&id, T, variant, r, Verdict::Pass));
                    c.push(trial(&id, T, variant, r, v(variant == "terse")));
                }
            }
        }
        let cmp = compare_runs(&b, &c);
        let o = &cmp.overall;
        assert_eq!((o.n, o.n10, o.cases, o.max_pairs_per_case), (12, 6, 6, 2));
        // Three changed units of -1 each: P(|S| ≥ 3) = 2/8.
        assert_eq!((o.test, o.p_value), (PairedTest::SignFlipExact, 0.25));
        assert_eq!(cmp.cells[0].paired.p_value, 0.25);
        assert_eq!(cmp.cells[1].paired.p_value, 1.0);
    }
}
