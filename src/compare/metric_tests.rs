//! The paired test of every metric's delta, each with a test suited to it: the pass/fail
//! metrics (`accuracy`, `task_success`) with the case-level paired test of accuracy
//! (exact McNemar, or the exact sign-flip test with repeats) and its cluster-robust
//! interval; every other metric (rates, F1s, pass@k, percentiles, sums) with the paired
//! bootstrap by case ([`crate::score::resample`]), whose p-value is floored at the
//! smallest p-value a test by case can reach, so that a handful of cases is never
//! called significant.

use super::comparison::{BinaryPairs, Unit};
use super::{ALPHA, Method, MetricDelta, MetricTest, Paired};
use crate::score::parts::{CaseParts, Pool};
use crate::score::resample::{paired_bootstrap, smallest_p};
use crate::score::stats::{CaseDiff, paired_delta_interval, paired_test};

/// The metrics decided trial by trial as pass or fail, tested pair by pair.
pub const PASS_FAIL_METRICS: &[&str] = &["accuracy", "task_success"];

fn changed(cases: &[CaseDiff]) -> u64 {
    cases.iter().filter(|c| c.pairs > 0 && c.diff != 0).count() as u64
}

/// The test of `accuracy` from the paired counts and the cases behind them.
fn accuracy(paired: &Paired, cases: &[CaseDiff]) -> MetricTest {
    let changed = changed(cases);
    MetricTest {
        method: Method::of(paired.test),
        cases: paired.cases,
        changed_cases: changed,
        baseline: paired.baseline_accuracy,
        candidate: paired.candidate_accuracy,
        delta: paired.delta_points.map(|d| d / 100.0),
        low: paired.delta_low_points.map(|d| d / 100.0),
        high: paired.delta_high_points.map(|d| d / 100.0),
        p_value: paired.p_value,
        smallest_p: smallest_p(changed),
        significant: paired.significant,
    }
}

/// The test of a pass/fail metric from its scored pairs.
fn pass_fail(pairs: &BinaryPairs) -> MetricTest {
    let n: u64 = pairs.cases.iter().map(|c| c.pairs).sum();
    let rate = |k: u64| (n > 0).then(|| k as f64 / n as f64);
    let (baseline, candidate) = (rate(pairs.baseline_passed), rate(pairs.candidate_passed));
    let (p_value, test) = paired_test(&pairs.cases);
    let interval = paired_delta_interval(&pairs.cases);
    let changed = changed(&pairs.cases);
    MetricTest {
        method: Method::of(test),
        cases: pairs.cases.iter().filter(|c| c.pairs > 0).count() as u64,
        changed_cases: changed,
        baseline,
        candidate,
        delta: baseline.zip(candidate).map(|(b, c)| c - b),
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        p_value,
        smallest_p: smallest_p(changed),
        significant: p_value < ALPHA,
    }
}

/// The bootstrap tests of `names` over the cases both sides ran.
fn bootstrapped(units: &[Unit], names: &[&str]) -> Vec<MetricTest> {
    let base: Vec<CaseParts> = units.iter().map(|u| u.baseline.clone()).collect();
    let cand: Vec<CaseParts> = units.iter().map(|u| u.candidate.clone()).collect();
    let (pb, pc) = (Pool::new(&base), Pool::new(&cand));
    let (vb, vc) = (pb.values(None, names), pc.values(None, names));
    let boot = paired_bootstrap(units.len(), names.len(), |w, out| {
        let (b, c) = (pb.values(Some(w), names), pc.values(Some(w), names));
        for ((o, b), c) in out.iter_mut().zip(b).zip(c) {
            *o = b.zip(c).map(|(b, c)| c - b);
        }
    });
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let cases = units
                .iter()
                .filter(|u| u.baseline.measures(name) && u.candidate.measures(name))
                .count() as u64;
            let changed = units
                .iter()
                .filter(|u| u.baseline.differs(&u.candidate, name))
                .count() as u64;
            let delta = vb[i].zip(vc[i]).map(|(b, c)| c - b);
            let floor = smallest_p(changed);
            let p_value = match delta {
                Some(_) => boot[i].p_value.max(floor),
                None => 1.0,
            };
            MetricTest {
                method: if units.is_empty() {
                    Method::None
                } else {
                    Method::Bootstrap
                },
                cases,
                changed_cases: changed,
                baseline: vb[i],
                candidate: vc[i],
                delta,
                low: boot[i].low.filter(|_| delta.is_some()),
                high: boot[i].high.filter(|_| delta.is_some()),
                p_value,
                smallest_p: floor,
                significant: p_value < ALPHA,
            }
        })
        .collect()
}

/// Attach its test to every metric of `metrics`: `accuracy` from `paired` (whose cases
/// are `accuracy_cases`) always; the others only when both sides are trials (`units` is
/// `Some`, the cases both ran), `task_success` from `loop_pairs`.
pub(crate) fn attach(
    metrics: &mut [MetricDelta],
    paired: &Paired,
    accuracy_cases: &[CaseDiff],
    loop_pairs: &BinaryPairs,
    units: Option<&[Unit]>,
) {
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m.metric.as_str())
        .filter(|m| !PASS_FAIL_METRICS.contains(m))
        .collect();
    let mut boot = match units {
        Some(units) => bootstrapped(units, &names).into_iter().map(Some).collect(),
        None => vec![None; names.len()],
    }
    .into_iter();
    for m in metrics.iter_mut() {
        m.test = match m.metric.as_str() {
            "accuracy" => Some(accuracy(paired, accuracy_cases)),
            "task_success" => units.map(|_| pass_fail(loop_pairs)),
            _ => boot.next().flatten(),
        };
    }
}
