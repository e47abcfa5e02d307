//! Small statistics: Wilson score intervals, nearest-rank percentiles, pass@k and pass^k.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A proportion with its 95% Wilson interval; `value` is `None` when the denominator is 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rate {
    /// Numerator.
    pub num: u64,
    /// Denominator.
    pub den: u64,
    /// num / den.
    pub value: Option<f64>,
    /// Lower bound of the 95% Wilson interval.
    pub low: Option<f64>,
    /// Upper bound of the 95% Wilson interval.
    pub high: Option<f64>,
}

impl Rate {
    /// `num` out of `den`.
    pub fn new(num: u64, den: u64) -> Rate {
        if den == 0 {
            return Rate {
                num,
                den,
                value: None,
                low: None,
                high: None,
            };
        }
        let (low, high) = wilson(num, den, Z95);
        Rate {
            num,
            den,
            value: Some(num as f64 / den as f64),
            low: Some(low),
            high: Some(high),
        }
    }
}

/// The Wilson score interval for `k` successes in `n` trials.
///
/// Unlike the normal approximation it stays inside [0, 1] and is sensible at 0 and n.
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The nearest-rank percentile `q` (0-100) of `values` (sorted in place).
pub fn percentile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let rank = ((q / 100.0) * values.len() as f64).ceil() as usize;
    Some(values[rank.clamp(1, values.len()) - 1])
}

fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// pass@k: the chance that at least one of `k` samples drawn from `n` attempts with
/// `c` passes passes (the unbiased estimator 1 - C(n-c, k) / C(n, k)).
pub fn pass_at_k(n: u64, c: u64, k: u64) -> f64 {
    if n == 0 || k == 0 || k > n {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    1.0 - choose(n - c, k) / choose(n, k)
}

/// pass^k: the chance that all of `k` samples drawn from `n` attempts with `c` passes
/// pass (C(c, k) / C(n, k)); a measure of consistency.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> f64 {
    if n == 0 || k == 0 || k > n {
        return 0.0;
    }
    choose(c, k) / choose(n, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 8 of 10: p = 0.8, z² = 3.8415; centre = (0.8 + 0.19207) / 1.38415 = 0.71673;
        // half = 1.96 × sqrt(0.016 + 0.0096037) / 1.38415 = 0.22657 -> [0.4902, 0.9433].
        let (lo, hi) = wilson(8, 10, Z95);
        assert!(close(lo, 0.4902) && close(hi, 0.9433), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10, Z95);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(10, 10, Z95);
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
    }

    #[test]
    fn rate_with_no_denominator_is_not_a_number() {
        let r = Rate::new(0, 0);
        assert_eq!(r.value, None);
        assert_eq!(Rate::new(3, 4).value, Some(0.75));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v = vec![50.0, 10.0, 40.0, 20.0, 30.0];
        assert_eq!(percentile(&mut v, 50.0), Some(30.0));
        assert_eq!(percentile(&mut v, 95.0), Some(50.0));
        let mut twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&mut twenty, 95.0), Some(19.0));
        assert_eq!(percentile(&mut [], 50.0), None);
    }

    #[test]
    fn pass_at_k_and_pass_hat_k_by_hand() {
        // n = 4 attempts, c = 2 passes, k = 2:
        // pass@2 = 1 - C(2,2)/C(4,2) = 1 - 1/6 = 5/6; pass^2 = C(2,2)/C(4,2) = 1/6.
        assert!(close(pass_at_k(4, 2, 2), 5.0 / 6.0));
        assert!(close(pass_hat_k(4, 2, 2), 1.0 / 6.0));
        assert!(close(pass_at_k(3, 0, 3), 0.0));
        assert!(close(pass_at_k(3, 1, 3), 1.0));
        assert!(close(pass_hat_k(3, 3, 3), 1.0));
        assert!(close(pass_hat_k(3, 2, 3), 0.0));
        // k = 1 is plain accuracy.
        assert!(close(pass_at_k(4, 3, 1), 0.75) && close(pass_hat_k(4, 3, 1), 0.75));
    }
}
