//! Applying a [`Gate`] to a [`Comparison`]: every gated metric judged on the pooled
//! cells (when there are several) and on each cell, with what the comparison could
//! detect there ([`GateCheck`]: the smallest reachable p-value and the cases a change of
//! the limit's size needs), and the [`GateFailure`]s that follow.

use serde::Serialize;

use super::{
    ALPHA, Better, CellComparison, Comparison, Gate, GateFailure, Method, MetricDelta, MetricTest,
};
use crate::compare::gate::Limit;
use crate::score::resample::cases_needed;

/// What a gated metric's comparison in one cell shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    /// No regression beyond the limit, and the comparison could have seen one.
    Ok,
    /// No failing regression, but the comparison could not detect a change of the
    /// limit's size: too few cases, or too few that changed (`smallest_p` ≥ 0.05).
    CouldNotTell,
    /// The gate failed here.
    Failed,
}

/// One gated metric in one cell (or `overall`, the pooled cells), with its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateCheck {
    /// The metric.
    pub metric: String,
    /// Cell label, or `overall`.
    pub cell: String,
    /// The limit, in points.
    pub limit_points: f64,
    /// Which way is better.
    pub better: Better,
    /// The baseline's value over the tested cases.
    pub baseline: Option<f64>,
    /// The candidate's value over the same.
    pub candidate: Option<f64>,
    /// `candidate - baseline`, in points.
    pub delta_points: Option<f64>,
    /// The test.
    pub method: Method,
    /// Its p-value.
    pub p_value: f64,
    /// `p_value < 0.05`.
    pub significant: bool,
    /// Cases measuring the metric on both sides.
    pub cases: u64,
    /// Cases whose contribution changed.
    pub changed_cases: u64,
    /// The smallest p-value `changed_cases` can reach: at 0.05 or above nothing can be
    /// significant here.
    pub smallest_p: f64,
    /// The fewest cases in which a change of `limit_points` can be significant (a lower
    /// bound; see [`cases_needed`]).
    pub cases_needed: u64,
    /// What the row shows.
    pub verdict: GateVerdict,
}

impl GateCheck {
    /// How far the metric got worse, in points (negative: it improved).
    pub fn worsening_points(&self) -> Option<f64> {
        self.delta_points.map(|d| self.better.worsening(d))
    }
}

/// One row of the comparison: the pooled cells or a cell.
struct Row<'a> {
    label: &'a str,
    metrics: &'a [MetricDelta],
    cell: Option<&'a CellComparison>,
}

/// What judging one metric in one row gives.
enum Judged {
    /// The metric does not apply to the row (neither side measures it there).
    Skip,
    /// Judged: the figures, and the failures (none when it held).
    Checked(GateCheck, Vec<GateFailure>),
    /// It applies but can not be judged.
    Failed(GateFailure),
}

fn judge(c: &Comparison, row: &Row<'_>, limit: &Limit, gate: &Gate) -> Judged {
    let delta = row.metrics.iter().find(|m| m.metric == limit.metric);
    if limit.metric == "accuracy" {
        // Paired accuracy, as the gate always read it: a cell both sides have that holds
        // no scored pair fails (the drop can not be measured there).
        let Some(cell) = row.cell.filter(|x| x.paired.n == 0) else {
            let paired = row.cell.map_or(&c.overall, |x| &x.paired);
            return match delta.and_then(|d| d.test.as_ref()) {
                Some(t) if paired.n > 0 => check(row.label, limit, Better::Higher, t, gate),
                _ => Judged::Skip,
            };
        };
        if c.overall.n > 0 && cell.baseline.is_some() && cell.candidate.is_some() {
            return Judged::Failed(GateFailure::Unmeasured {
                cell: cell.cell.clone(),
                unscored_pairs: cell.unscored_pairs,
                only_baseline: cell.only_baseline,
                only_candidate: cell.only_candidate,
            });
        }
        return Judged::Skip;
    }
    let Some(delta) = delta else {
        return Judged::Skip;
    };
    let unmeasured = |why: &str| {
        Judged::Failed(GateFailure::MetricUnmeasured {
            metric: limit.metric.clone(),
            cell: row.label.to_string(),
            why: why.to_string(),
        })
    };
    let Some(test) = &delta.test else {
        if delta.baseline.is_none() && delta.candidate.is_none() {
            return Judged::Skip;
        }
        return unmeasured("can not be tested: a side is a summary.json without its trials.jsonl");
    };
    // Which side lacks it: over the tested cases, else over all of a side's trials.
    let lacks = |tested: Option<f64>, all: Option<f64>| tested.is_none() && all.is_none();
    match (test.baseline, test.candidate) {
        (Some(_), Some(_)) => check(row.label, limit, delta.better, test, gate),
        _ if delta.baseline.is_none() && delta.candidate.is_none() => Judged::Skip,
        _ if lacks(test.candidate, delta.candidate) => {
            unmeasured("is undefined on the candidate side")
        }
        _ if lacks(test.baseline, delta.baseline) => {
            unmeasured("is undefined on the baseline side")
        }
        _ => unmeasured("is not measured on both sides of any case"),
    }
}

/// The figures of a tested metric against its limit, and the failures.
fn check(label: &str, limit: &Limit, better: Better, t: &MetricTest, gate: &Gate) -> Judged {
    let needed = cases_needed(limit.points, ALPHA);
    let delta_points = t.delta.map(|d| d * 100.0);
    let worse = delta_points.map(|d| better.worsening(d));
    let mut failures = Vec::new();
    if let (Some(w), Some(b), Some(c)) = (worse, t.baseline, t.candidate)
        && w > limit.points
        && (gate.strict || t.significant)
    {
        failures.push(GateFailure::Regression {
            metric: limit.metric.clone(),
            cell: label.to_string(),
            baseline: b,
            candidate: c,
            change_points: w,
            limit_points: limit.points,
            better,
            p_value: t.p_value,
            method: t.method,
            cases: t.cases,
            significant: t.significant,
        });
    }
    if let Some(min) = gate.min_cases
        && t.cases < min
    {
        failures.push(GateFailure::TooFewCases {
            metric: limit.metric.clone(),
            cell: label.to_string(),
            cases: t.cases,
            min_cases: min,
            limit_points: limit.points,
            better,
            cases_needed: needed,
            smallest_p: t.smallest_p,
        });
    }
    let verdict = if !failures.is_empty() {
        GateVerdict::Failed
    } else if t.smallest_p >= ALPHA || t.cases < needed {
        GateVerdict::CouldNotTell
    } else {
        GateVerdict::Ok
    };
    let check = GateCheck {
        metric: limit.metric.clone(),
        cell: label.to_string(),
        limit_points: limit.points,
        better,
        baseline: t.baseline,
        candidate: t.candidate,
        delta_points,
        method: t.method,
        p_value: t.p_value,
        significant: t.significant,
        cases: t.cases,
        changed_cases: t.changed_cases,
        smallest_p: t.smallest_p,
        cases_needed: needed,
        verdict,
    };
    Judged::Checked(check, failures)
}

/// Judge `gate` on `c`: the gated metrics' rows with their figures, and every failure
/// (in order: per row its regressions, then min_accuracy per cell; metrics measured
/// nowhere; a comparison without pairs last).
fn evaluate(c: &Comparison, gate: &Gate) -> (Vec<GateCheck>, Vec<GateFailure>) {
    let mut rows: Vec<Row<'_>> = Vec::new();
    // Small cells rarely reach significance alone; the pooled pairs can.
    if c.cells.len() > 1 {
        rows.push(Row {
            label: "overall",
            metrics: &c.overall_metrics,
            cell: None,
        });
    }
    rows.extend(c.cells.iter().map(|x| Row {
        label: &x.cell,
        metrics: &x.metrics,
        cell: Some(x),
    }));
    let (mut checks, mut failures) = (Vec::new(), Vec::new());
    let mut seen = vec![false; gate.fail_on_regression.len()];
    for row in &rows {
        for (limit, seen) in gate.fail_on_regression.iter().zip(seen.iter_mut()) {
            match judge(c, row, limit, gate) {
                Judged::Skip => {}
                Judged::Checked(check, fails) => {
                    *seen = true;
                    checks.push(check);
                    failures.extend(fails);
                }
                Judged::Failed(f) => {
                    *seen = true;
                    failures.push(f);
                }
            }
        }
        if let (Some(min), Some(cell)) = (gate.min_accuracy, row.cell)
            && cell.candidate.is_some()
        {
            let accuracy = cell.candidate_accuracy_all();
            if accuracy.is_none_or(|a| a < min) {
                failures.push(GateFailure::MinAccuracy {
                    cell: cell.cell.clone(),
                    accuracy,
                    min,
                });
            }
        }
    }
    // A gate on a metric nothing measured must not pass on nothing (accuracy: see
    // `NoPairs`).
    for (limit, seen) in gate.fail_on_regression.iter().zip(seen) {
        if !seen && limit.metric != "accuracy" {
            failures.push(GateFailure::NotMeasured {
                metric: limit.metric.clone(),
            });
        }
    }
    if c.overall.n == 0 {
        failures.push(GateFailure::NoPairs {
            only_baseline: c.only_baseline,
            only_candidate: c.only_candidate,
            unscored_pairs: c.unscored_pairs,
        });
    }
    (checks, failures)
}

/// Check `gate` on every cell of `c`; empty when everything holds. A comparison without
/// a single scored pair fails whatever the gate ([`GateFailure::NoPairs`], listed last).
pub fn check_gates(c: &Comparison, gate: &Gate) -> Vec<GateFailure> {
    evaluate(c, gate).1
}

/// Every gated metric in every row the gate judges, with what the comparison could
/// detect there; empty without `fail_on_regression`.
pub fn gate_checks(c: &Comparison, gate: &Gate) -> Vec<GateCheck> {
    evaluate(c, gate).0
}
