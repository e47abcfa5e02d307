//! The paired bootstrap by case behind `toolgauge compare`'s intervals of rates and means,
//! and what any paired test with the case as its unit can detect: the smallest p-value a
//! number of changed cases can reach, and the number of cases a drop of a given size
//! needs. docs/metrics.md ("Comparing runs") gives the reasoning.
//!
//! Resampling is by case because repeats of a case are not independent samples (as in
//! the paired test of accuracy). Each resample draws as many cases as there are, with
//! replacement, from a ChaCha8 stream seeded with [`SEED`] using 32-bit draws, so the
//! same comparison gives the same interval on every machine and every run. A drawn case
//! brings both of its sides: the pairing survives the resampling.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::stats::percentile;

/// Resamples per bootstrap: enough for the 2.5th and 97.5th percentiles to be stable to
/// about a tenth of the interval's width, and cheap (a 1,000-case comparison of every
/// metric takes a few tens of milliseconds).
pub const RESAMPLES: u32 = 1000;

/// Seed of the bootstrap's ChaCha8 stream (31, the issue that brought it).
pub const SEED: u64 = 31;

/// A bootstrap result for one statistic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bootstrap {
    /// Nearest-rank 2.5th percentile of the resampled statistic; `None` when no
    /// resample defined it.
    pub low: Option<f64>,
    /// Nearest-rank 97.5th percentile.
    pub high: Option<f64>,
    /// Two-sided percentile-bootstrap p-value of "the statistic is 0": twice the
    /// smaller share of resamples at or below 0 and at or above 0, at most 1. It is not
    /// floored here: see [`smallest_p`].
    pub p_value: f64,
    /// Resamples that defined the statistic.
    pub resamples: u32,
}

/// Bootstrap `statistics` paired statistics over `cases` cases: for each of
/// [`RESAMPLES`] resamples, `stat(weights, out)` gets how often each case was drawn and
/// writes each statistic (`None` when the resample leaves it undefined) into `out`.
pub fn paired_bootstrap(
    cases: usize,
    statistics: usize,
    mut stat: impl FnMut(&[u32], &mut [Option<f64>]),
) -> Vec<Bootstrap> {
    let none = Bootstrap {
        low: None,
        high: None,
        p_value: 1.0,
        resamples: 0,
    };
    let Ok(n) = u32::try_from(cases) else {
        return vec![none; statistics];
    };
    if n == 0 {
        return vec![none; statistics];
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut weights = vec![0u32; cases];
    let mut out = vec![None; statistics];
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES as usize); statistics];
    for _ in 0..RESAMPLES {
        weights.fill(0);
        for _ in 0..n {
            weights[rng.random_range(0..n) as usize] += 1;
        }
        out.fill(None);
        stat(&weights, &mut out);
        for (d, v) in draws.iter_mut().zip(&out) {
            d.extend(v.filter(|v| v.is_finite()));
        }
    }
    draws
        .into_iter()
        .map(|mut d| {
            let len = d.len();
            if len == 0 {
                return none;
            }
            let below = d.iter().filter(|v| **v <= 0.0).count();
            let above = d.iter().filter(|v| **v >= 0.0).count();
            Bootstrap {
                low: percentile(&mut d, 2.5),
                high: percentile(&mut d, 97.5),
                p_value: (2.0 * below.min(above) as f64 / len as f64).min(1.0),
                resamples: len as u32,
            }
        })
        .collect()
}

/// The smallest two-sided p-value any paired test with the case as its unit can give
/// when `changed` cases changed: `2 / 2^changed`, at most 1. Swapping baseline and
/// candidate within each changed case gives `2^changed` equally likely outcomes under
/// "no difference", and at least two of them (the one seen and its mirror) are as
/// extreme. Exact McNemar with `k` discordant pairs, all one way, gives exactly this
/// (3 discordant: 0.25); so does the exact sign-flip test with `changed` cases.
pub fn smallest_p(changed: u64) -> f64 {
    match i32::try_from(changed) {
        Ok(k) => (2.0 * 0.5f64.powi(k)).min(1.0),
        Err(_) => 0.0,
    }
}

/// The fewest changed cases with which a paired test by case can reach `p < alpha`
/// (6 at 0.05: 2/2⁶ = 0.031, while 2/2⁵ = 0.0625).
pub fn changed_cases_needed(alpha: f64) -> u64 {
    (1..=1100).find(|k| smallest_p(*k) < alpha).unwrap_or(1100)
}

/// The fewest cases in which a drop of `points` percentage points can be significant at
/// `alpha`: a drop of `points` in a rate averaged over `G` cases, each changing by at
/// most 1, moves at least `G · points / 100` cases, and that must be at least
/// [`changed_cases_needed`]. So `G ≥ changed_cases_needed · 100 / points` (120 cases for
/// 5 points, 16 for 37.5); a limit of 0 needs the changed cases alone. A lower bound:
/// drops spread over cases, or cases that move both ways, need more.
pub fn cases_needed(points: f64, alpha: f64) -> u64 {
    let k = changed_cases_needed(alpha);
    if !(points.is_finite() && points > 0.0) {
        return k;
    }
    // The small tolerance keeps 600 / 5 at 120 whatever the rounding of points.
    let needed = (k as f64 * 100.0 / points - 1e-9).ceil();
    (needed as u64).max(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::stats::{mcnemar_exact, sign_flip_exact};

    #[test]
    fn smallest_p_of_k_changed_cases() {
        assert_eq!(smallest_p(0), 1.0);
        assert_eq!(smallest_p(1), 1.0);
        assert_eq!(smallest_p(2), 0.5);
        // The example: 3 discordant cases can never be significant.
        assert_eq!(smallest_p(3), 0.25);
        assert_eq!(smallest_p(5), 0.0625);
        assert_eq!(smallest_p(6), 0.03125);
        assert_eq!(smallest_p(u64::MAX), 0.0);
        // Exactly what the exact tests give when every changed case moved the same way.
        for k in 0..40u64 {
            assert_eq!(mcnemar_exact(k, 0), smallest_p(k), "{k}");
            let values: Vec<i64> = (0..k as i64).map(|i| -(1 + i % 3)).collect();
            assert_eq!(sign_flip_exact(&values), Some(smallest_p(k)), "{k}");
        }
    }

    #[test]
    fn cases_a_drop_needs() {
        assert_eq!(changed_cases_needed(0.05), 6);
        assert_eq!(changed_cases_needed(0.01), 8);
        assert_eq!(cases_needed(5.0, 0.05), 120);
        assert_eq!(cases_needed(37.5, 0.05), 16);
        assert_eq!(cases_needed(30.0, 0.05), 20);
        assert_eq!(cases_needed(7.0, 0.05), 86);
        assert_eq!(cases_needed(100.0, 0.05), 6);
        assert_eq!(cases_needed(0.0, 0.05), 6);
        // Consistent with the test: 16 cases with 6 of them down is significant, 15
        // cases can not hold a 37.5-point drop of 6 cases.
        assert!(mcnemar_exact(6, 0) < 0.05 && 6.0 / 16.0 >= 0.375);
        assert!(5.0 / 15.0 < 0.375 && mcnemar_exact(5, 0) > 0.05);
    }

    /// A statistic per case: the mean of `cand[i] - base[i]` over the drawn cases.
    fn mean_delta(base: &[f64], cand: &[f64]) -> Vec<Bootstrap> {
        paired_bootstrap(base.len(), 1, |w, out| {
            let n: u32 = w.iter().sum();
            let s: f64 = w
                .iter()
                .zip(base.iter().zip(cand))
                .map(|(w, (b, c))| f64::from(*w) * (c - b))
                .sum();
            out[0] = (n > 0).then(|| s / f64::from(n));
        })
    }

    #[test]
    fn bootstrap_interval_of_hand_built_data() {
        // 20 cases, half unchanged, half up by 1: delta 0.5, per-case sd 0.5, standard
        // error 0.5 / √20 = 0.112, so about [0.28, 0.72].
        let base = vec![0.0; 20];
        let cand: Vec<f64> = (0..20).map(|i| f64::from(i % 2)).collect();
        let b = mean_delta(&base, &cand)[0];
        let (lo, hi) = (b.low.unwrap(), b.high.unwrap());
        assert!(
            (0.2..0.35).contains(&lo) && (0.65..0.8).contains(&hi),
            "{b:?}"
        );
        assert_eq!(b.resamples, RESAMPLES);
        // Every resample is above 0: p is 0 before any floor.
        assert_eq!(b.p_value, 0.0);
        // Deterministic: the same data gives the same bits.
        assert_eq!(mean_delta(&base, &cand)[0], b);
        // Every case changed alike: the interval is a point.
        let b = mean_delta(&[0.0; 5], &[0.5; 5])[0];
        assert_eq!((b.low, b.high), (Some(0.5), Some(0.5)));
        // Nothing changed: p is 1.
        let b = mean_delta(&[0.3; 8], &[0.3; 8])[0];
        assert_eq!((b.low, b.high, b.p_value), (Some(0.0), Some(0.0), 1.0));
        // Changes both ways that cancel: p near 1, the interval around 0.
        let cand: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let b = mean_delta(&[0.0; 40], &cand)[0];
        assert!(b.p_value > 0.5, "{b:?}");
        assert!(b.low.unwrap() < 0.0 && b.high.unwrap() > 0.0, "{b:?}");
        // No case: nothing to resample.
        assert_eq!(mean_delta(&[], &[])[0].low, None);
    }

    #[test]
    fn a_bootstrap_of_few_cases_is_overconfident_so_its_p_is_floored() {
        // 8 cases, 3 of them down by 1: a resample shows no drop only when it draws none
        // of the 3, (5/8)^8 = 2.3% of the time, so the raw p is about 0.047, "significant",
        // while no test by case can go below 2/2^3 = 0.25 with 3 changed cases.
        let cand = [-1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let b = mean_delta(&[0.0; 8], &cand)[0];
        assert!((0.025..0.07).contains(&b.p_value), "{b:?}");
        assert_eq!(b.p_value.max(smallest_p(3)), 0.25);
    }
}
