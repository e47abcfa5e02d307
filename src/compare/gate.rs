//! Pass/fail gates on a comparison: a [`Gate`] (largest allowed regression, minimum
//! accuracy) checked cell by cell into [`GateFailure`]s, each with its message.

use std::fmt;

use serde::Serialize;

use super::text::fmt_p;
use super::{Comparison, Paired, PairedTest};

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
