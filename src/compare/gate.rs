//! Pass/fail gates on a comparison: a [`Gate`] (the largest allowed regression of each
//! gated metric, the fewest cases, minimum accuracy) and the [`GateFailure`]s it can
//! give, each with its message; `checks` applies it.

use std::fmt;

use serde::Serialize;

use super::text::{fmt_p, fmt_p_plain, rate};
use super::{Better, Method};

/// A regression limit on one metric (`--fail-on-regression METRIC=POINTS`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    /// The metric, as `summary.json` and thresholds name it; a rate.
    pub metric: String,
    /// The largest change allowed in the worse direction, in percentage points of the
    /// rate (a drop for `accuracy`, a rise for `error_rate`).
    pub points: f64,
}

/// Pass/fail gates on a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Gate {
    /// Fail when a metric of a cell (or of the pooled cells) gets worse by more than its
    /// limit and the change is significant (or `strict`); at most one limit per metric.
    /// A plain `--fail-on-regression N` is `accuracy` (paired accuracy).
    pub fail_on_regression: Vec<Limit>,
    /// Count a change beyond its limit even when the paired test finds it not
    /// significant.
    pub strict: bool,
    /// Fail any cell where the candidate's accuracy over all of its scored trials in the
    /// cell is below this fraction (e.g. `0.8`). A candidate cell with no scored trial
    /// fails too: a gate that can not be measured must not pass silently.
    pub min_accuracy: Option<f64>,
    /// Fail a gated metric in a cell (or the pooled cells) where fewer cases than this
    /// measured it on both sides: "could not tell" is then a failure, not a pass.
    pub min_cases: Option<u64>,
}

impl Gate {
    /// A gate on paired accuracy alone (`--fail-on-regression POINTS`).
    pub fn regression(points: f64) -> Gate {
        Gate {
            fail_on_regression: vec![Limit {
                metric: "accuracy".into(),
                points,
            }],
            ..Gate::default()
        }
    }
}

/// A gate that did not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "gate", rename_all = "snake_case")]
pub enum GateFailure {
    /// `fail_on_regression`: a metric got worse by more than its limit.
    Regression {
        /// The metric.
        metric: String,
        /// Cell label (`overall` for the pooled cells).
        cell: String,
        /// The baseline's value over the tested cases (paired accuracy for `accuracy`).
        baseline: f64,
        /// The candidate's value over the same.
        candidate: f64,
        /// How far it got worse, in points (positive).
        change_points: f64,
        /// The gate's limit, in points.
        limit_points: f64,
        /// Which way is better (a drop or a rise is the regression).
        better: Better,
        /// The test's p-value.
        p_value: f64,
        /// The test (`mcnemar_exact`, `sign_flip_exact`, `bootstrap`, ...).
        method: Method,
        /// Its units: cases measuring the metric on both sides.
        cases: u64,
        /// Whether p < 0.05 (false only in strict mode).
        significant: bool,
    },
    /// `fail_on_regression` on accuracy: a cell both sides have holds no scored pair
    /// (every pair errored, or the trials did not match), so the drop can not be
    /// measured there.
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
    /// `fail_on_regression` on a metric other than accuracy: it is defined on one side
    /// of a cell only, or can not be tested there.
    MetricUnmeasured {
        /// The metric.
        metric: String,
        /// Cell label.
        cell: String,
        /// Why: which side lacks it, or that a side is a bare summary.
        why: String,
    },
    /// `fail_on_regression` on a metric no compared cell measures on either side.
    NotMeasured {
        /// The metric.
        metric: String,
    },
    /// `min_cases`: too few cases measured a gated metric for the comparison to tell.
    TooFewCases {
        /// The metric.
        metric: String,
        /// Cell label.
        cell: String,
        /// Cases measuring it on both sides.
        cases: u64,
        /// The minimum asked for.
        min_cases: u64,
        /// The gate's limit, in points.
        limit_points: f64,
        /// Which way is better (a drop or a rise is the regression).
        better: Better,
        /// Cases a change of the limit's size needs to be detectable.
        cases_needed: u64,
        /// The smallest p-value the cases that changed can reach.
        smallest_p: f64,
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

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateFailure::Regression {
                metric,
                cell,
                baseline,
                candidate,
                change_points,
                limit_points,
                better,
                p_value,
                method,
                cases,
                significant,
            } => {
                let unit = match method {
                    Method::McnemarExact | Method::None => String::new(),
                    _ => format!(" over {cases} cases"),
                };
                let moved = match better {
                    Better::Higher => "fell",
                    Better::Lower => "rose",
                };
                write!(
                    f,
                    "{metric} {moved} {change_points:.1} points in {cell} ({} → {}, \
                     {} p {}{unit}), more than the {limit_points:.1} points fail_on_regression allows",
                    rate(metric, *baseline),
                    rate(metric, *candidate),
                    method.short(),
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
            GateFailure::MetricUnmeasured { metric, cell, why } => write!(
                f,
                "{metric} in {cell} {why}, so fail_on_regression can not be checked there"
            ),
            GateFailure::NotMeasured { metric } => write!(
                f,
                "{metric} is measured in neither run (no compared trial has it), so \
                 fail_on_regression can not be checked"
            ),
            GateFailure::TooFewCases {
                metric,
                cell,
                cases,
                min_cases,
                limit_points,
                better,
                cases_needed,
                smallest_p,
            } => write!(
                f,
                "could not tell: {metric} in {cell} was measured in {cases} cases on both \
                 sides, fewer than min_cases {min_cases} (a {} of {limit_points:.1} points \
                 needs at least {cases_needed} cases; the smallest p these cases can reach \
                 is {})",
                match better {
                    Better::Higher => "drop",
                    Better::Lower => "rise",
                },
                fmt_p_plain(*smallest_p)
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
