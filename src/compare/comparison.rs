//! What a comparison finds: per matched cell the paired counts and test ([`Paired`]), the
//! flips and every metric's delta ([`CellComparison`]), and the whole [`Comparison`].

use std::fmt;

use serde::Serialize;

use super::{ALPHA, CellId, CellKey, GateCheck};
use crate::judge::Reason;
use crate::score::parts::CaseParts;
use crate::score::stats::{CaseDiff, PairedTest, paired_delta_interval, paired_test};

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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    /// Case id.
    pub case_id: String,
    /// tool_choice as text.
    pub tool_choice: String,
    /// Repeat index.
    pub repeat: u32,
    /// Which way it flipped.
    pub direction: FlipDirection,
    /// Why the candidate failed (its first reason), for a pass → fail flip whose
    /// candidate trial is at hand (not from a bare `summary.json`): what a reviewer
    /// reads first. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
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

/// Which way a metric is better ([`lower_is_better`](crate::util::metric_names::lower_is_better)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Higher is better (accuracy, recall, task success, ...): a regression is a drop.
    Higher,
    /// Lower is better (error and hallucination rates, amounts): a regression is a rise.
    Lower,
}

impl Better {
    /// The direction of `metric`.
    pub fn of(metric: &str) -> Better {
        if crate::util::metric_names::lower_is_better(metric) {
            Better::Lower
        } else {
            Better::Higher
        }
    }

    /// How far `delta` (candidate − baseline) goes in the worse direction: positive for a
    /// regression.
    pub fn worsening(self, delta: f64) -> f64 {
        match self {
            Better::Higher => -delta,
            Better::Lower => delta,
        }
    }
}

/// The test behind one metric's delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// No case measured the metric on both sides.
    None,
    /// Exact McNemar on the discordant pairs (a pass/fail metric, one pair per case).
    McnemarExact,
    /// Exact sign-flip test on per-case differences (a pass/fail metric with repeats).
    SignFlipExact,
    /// The sign-flip test's normal approximation (very many cases).
    SignFlipNormal,
    /// Paired bootstrap by case (rates, means, percentiles and sums).
    Bootstrap,
}

impl Method {
    /// The method of a paired pass/fail test.
    pub fn of(test: PairedTest) -> Method {
        match test {
            PairedTest::None => Method::None,
            PairedTest::McnemarExact => Method::McnemarExact,
            PairedTest::SignFlipExact => Method::SignFlipExact,
            PairedTest::SignFlipNormal => Method::SignFlipNormal,
        }
    }

    /// A short name for tables and gate messages (`McNemar`, `sign-flip`, `bootstrap`).
    pub fn short(self) -> &'static str {
        match self {
            Method::None => "no test",
            Method::McnemarExact => "McNemar",
            Method::SignFlipExact | Method::SignFlipNormal => "sign-flip",
            Method::Bootstrap => "bootstrap",
        }
    }
}

/// A metric's paired test: its delta over the cases both sides ran, the 95% interval,
/// the p-value and what the comparison could detect at all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricTest {
    /// The test: a case-level paired test for pass/fail metrics (`accuracy`,
    /// `task_success`), the paired bootstrap by case for the others.
    pub method: Method,
    /// Cases (a case id with its tool_choice, in one cell) that measure the metric on
    /// both sides: the units of the test.
    pub cases: u64,
    /// Cases whose contribution to the metric differs between the sides: only they can
    /// move a paired statistic.
    pub changed_cases: u64,
    /// The baseline's value over the tested cases (for a pass/fail metric: over the
    /// scored pairs).
    pub baseline: Option<f64>,
    /// The candidate's value over the same.
    pub candidate: Option<f64>,
    /// `candidate - baseline`, in the metric's own unit (a fraction for rates).
    pub delta: Option<f64>,
    /// Lower end of the 95% interval of `delta` (cluster-robust for pass/fail metrics,
    /// percentile bootstrap for the others).
    pub low: Option<f64>,
    /// Upper end.
    pub high: Option<f64>,
    /// Two-sided p-value of "no change"; for the bootstrap never below `smallest_p`.
    pub p_value: f64,
    /// The smallest p-value any paired test by case can reach with `changed_cases`
    /// changed cases (`2 / 2^changed_cases`): at 0.05 or above, the comparison can not
    /// detect any change of this metric.
    pub smallest_p: f64,
    /// `p_value < 0.05`.
    pub significant: bool,
}

/// One metric on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    /// Name from [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES), or a loop,
    /// behaviour or stream metric.
    pub metric: String,
    /// Baseline value; `None` when undefined or the side has no trials in the cell.
    pub baseline: Option<f64>,
    /// Candidate value; `None` likewise.
    pub candidate: Option<f64>,
    /// `candidate - baseline` (in the metric's own unit), when both are defined.
    pub delta: Option<f64>,
    /// Which way is better.
    pub better: Better,
    /// The paired test of the delta; absent when a side is a bare `summary.json` (no
    /// per-case data) for any metric but `accuracy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<MetricTest>,
}

impl MetricDelta {
    /// `metric` with both values and no test yet.
    pub fn new(metric: &str, baseline: Option<f64>, candidate: Option<f64>) -> MetricDelta {
        MetricDelta {
            metric: metric.to_string(),
            baseline,
            candidate,
            delta: baseline.zip(candidate).map(|(b, c)| c - b),
            better: Better::of(metric),
            test: None,
        }
    }
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
    /// Every metric of [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES) (and the
    /// loop, behaviour and stream metrics when a side has them), over all of each side's
    /// trials in the cell, with its paired test.
    pub metrics: Vec<MetricDelta>,
    /// The scored pairs grouped by case, for the pooled test (not serialised: `paired`
    /// holds the result).
    #[serde(skip)]
    pub case_diffs: Vec<CaseDiff>,
    /// What each case both sides ran contributes to every metric, for the pooled tests.
    #[serde(skip)]
    pub(crate) units: Vec<Unit>,
    /// The scored pairs of loop trials, for the pooled test of `task_success`.
    #[serde(skip)]
    pub(crate) loop_pairs: BinaryPairs,
}

/// One case both sides ran: its parts on each side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unit {
    /// The baseline's parts.
    pub baseline: CaseParts,
    /// The candidate's parts.
    pub candidate: CaseParts,
}

/// Scored pairs of a pass/fail metric grouped by case, with each side's passes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BinaryPairs {
    /// Per case: pairs and candidate-minus-baseline passes.
    pub cases: Vec<CaseDiff>,
    /// Baseline passes over the pairs.
    pub baseline_passed: u64,
    /// Candidate passes over the pairs.
    pub candidate_passed: u64,
}

impl BinaryPairs {
    /// Both sides' pairs together.
    pub fn extend(&mut self, other: &BinaryPairs) {
        self.cases.extend(other.cases.iter().copied());
        self.baseline_passed += other.baseline_passed;
        self.candidate_passed += other.candidate_passed;
    }
}

impl CellComparison {
    /// The delta of one metric, if it is in [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES).
    pub fn metric(&self, name: &str) -> Option<&MetricDelta> {
        self.metrics.iter().find(|m| m.metric == name)
    }

    /// Candidate accuracy over all of its scored trials in the cell (paired or not).
    pub fn candidate_accuracy_all(&self) -> Option<f64> {
        self.metric("accuracy").and_then(|m| m.candidate)
    }

    /// The flips of one direction.
    pub(super) fn flips(&self, direction: FlipDirection) -> impl Iterator<Item = &Flip> {
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
    /// Every metric over all cells together, with its pooled paired test (cases of all
    /// cells as units); the values are undefined when the sides are summaries of
    /// several cells, whose metrics can not be combined.
    pub overall_metrics: Vec<MetricDelta>,
    /// The metrics the suite's thresholds name (from either run's `summary.json`), in
    /// order: listed first in the metric tables. Absent when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_thresholds: Vec<String>,
    /// The regression gates asked for, row by row, with what each could detect (set by
    /// the caller from [`gate_checks`](super::gate_checks)). Absent without gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<GateCheck>,
}
