//! Small statistics: Wilson score intervals, nearest-rank percentiles, pass@k and pass^k,
//! and the paired tests and interval of `toolgauge compare` (exact McNemar, the exact
//! sign-flip test on per-case differences, the cluster-robust interval of a paired delta).
//! docs/metrics.md ("Comparing runs") gives the formulas.

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

/// The two-sided exact McNemar p-value for `b` pass → fail and `c` fail → pass pairs:
/// `min(1, 2 · P(X ≤ min(b, c)))` with `X ~ Binomial(b + c, ½)`; 1 when `b + c = 0`.
///
/// Exact integer sums for `b + c ≤ 120`; above that, log space from the largest tail term
/// downwards, accurate to about 1e-11 relative for `b + c` in the hundreds of thousands. A p-value below the
/// smallest positive `f64` (only for extremely lopsided counts in the thousands) is 0.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // Balanced counts: P(X ≤ k) is exactly ½ (n odd) or above it (n even).
    if 2 * k + 1 >= n {
        return 1.0;
    }
    // Small n: exact integer sums, one rounding.
    if n <= 120 {
        let (mut term, mut tail) = (1u128, 1u128);
        for i in 1..=u128::from(k) {
            term = term * (u128::from(n) + 1 - i) / i;
            tail += term;
        }
        return (tail as f64 * 2f64.powi(1 - n as i32)).min(1.0);
    }
    // ln P(X = k) = ln C(n, k) - n ln 2 = Σ_{i=1..k} ln((n - k + i) / i) - n ln 2, the
    // largest term of the lower tail since k ≤ n / 2. Compensated (Neumaier) summation
    // keeps the rounding of up to 50,000 terms near 1e-12 instead of 1e-9.
    let mut sum = -(n as f64) * std::f64::consts::LN_2;
    let mut carry = 0.0;
    for i in 1..=k {
        let term = ((n - k) as f64 / i as f64).ln_1p();
        let t = sum + term;
        carry += if sum.abs() >= term.abs() {
            (sum - t) + term
        } else {
            (term - t) + sum
        };
        sum = t;
    }
    let ln_top = sum + carry;
    // Σ_{i ≤ k} P(X = i) / P(X = k), walking down with P(i-1)/P(i) = i / (n - i + 1).
    let mut ratio = 1.0;
    let mut rel = 1.0;
    let mut i = k;
    while i > 0 {
        ratio *= i as f64 / (n - i + 1) as f64;
        rel += ratio;
        if ratio < rel * 1e-17 {
            break;
        }
        i -= 1;
    }
    let tail = (ln_top + rel.ln()).exp();
    (2.0 * tail).min(1.0)
}

/// One case's scored pairs in a paired comparison: the unit of the test and interval when
/// a case has several repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaseDiff {
    /// Scored pairs of the case (its repeats that both sides scored).
    pub pairs: u64,
    /// Candidate passes minus baseline passes over those pairs, in `-pairs..=pairs`.
    pub diff: i64,
}

/// The test behind a paired p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedTest {
    /// No scored pair: nothing was tested, the p-value is 1.
    None,
    /// Exact McNemar test on the discordant pairs; every case has one pair (one repeat),
    /// so pairs are the independent units.
    McnemarExact,
    /// Exact sign-flip (permutation) test on the per-case differences of pass rates;
    /// cases are the units, their repeats are not independent samples.
    SignFlipExact,
    /// The same sign-flip test with its normal approximation, for comparisons with too
    /// many cases to enumerate (see [`SIGN_FLIP_BUDGET`]).
    SignFlipNormal,
}

impl PairedTest {
    /// The name used in JSON (`mcnemar_exact`, ...).
    pub fn key(self) -> &'static str {
        match self {
            PairedTest::None => "none",
            PairedTest::McnemarExact => "mcnemar_exact",
            PairedTest::SignFlipExact => "sign_flip_exact",
            PairedTest::SignFlipNormal => "sign_flip_normal",
        }
    }

    /// A short name for tables and gate messages (`McNemar`, `sign-flip`).
    pub fn short(self) -> &'static str {
        match self {
            PairedTest::None => "no test",
            PairedTest::McnemarExact => "McNemar",
            PairedTest::SignFlipExact | PairedTest::SignFlipNormal => "sign-flip",
        }
    }

    /// A sentence fragment naming the test and its unit.
    pub fn describe(self) -> &'static str {
        match self {
            PairedTest::None => "no test (no scored pairs)",
            PairedTest::McnemarExact => {
                "exact McNemar test on the discordant pairs (one pair per case)"
            }
            PairedTest::SignFlipExact => {
                "exact sign-flip test on per-case differences of pass rates (cases are the unit, repeats are not independent)"
            }
            PairedTest::SignFlipNormal => {
                "sign-flip test on per-case differences of pass rates, normal approximation (cases are the unit)"
            }
        }
    }
}

/// Largest `clusters × lattice width` the exact sign-flip test enumerates (one addition
/// each); above it the normal approximation is used. With 3 repeats that is from 2,887
/// changed cases when each changed by 3 of 3 (`m (6m + 1)`), 5,000 when by 1 of 3.
pub const SIGN_FLIP_BUDGET: u128 = 50_000_000;

/// Largest common denominator of per-case rates the exact test puts on an integer lattice
/// (the least common multiple of 1..=12 is 27,720; odd mixes of pair counts go normal).
const MAX_LATTICE_DENOMINATOR: u64 = 1 << 16;

/// Most lattice points the exact test holds (two `f64` vectors of this length, 32 MB):
/// hostile pair counts must not size an allocation.
const MAX_LATTICE_WIDTH: u128 = 1 << 21;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The exact two-sided sign-flip p-value of integer `values`: with `S = Σ ε_i v_i` over
/// all `2^m` sign vectors `ε` equally likely, `P(|S| ≥ |Σ v_i|)`. 1 when every value is
/// 0. `None` when the enumeration would exceed [`SIGN_FLIP_BUDGET`] (or its lattice two
/// million points).
///
/// The distribution of `S` is built one value at a time on the lattice
/// `-Σ|v_i| ..= Σ|v_i|` (each step moves half the mass `v` up and half `v` down), so the
/// cost is `m × (2 Σ|v_i| + 1)`, not `2^m`.
pub fn sign_flip_exact(values: &[i64]) -> Option<f64> {
    let nonzero: Vec<u64> = values
        .iter()
        .filter(|v| **v != 0)
        .map(|v| v.unsigned_abs())
        .collect();
    if nonzero.is_empty() {
        return Some(1.0);
    }
    let total: u128 = nonzero.iter().map(|&v| u128::from(v)).sum();
    let width = 2 * total + 1;
    if width > MAX_LATTICE_WIDTH || (nonzero.len() as u128).saturating_mul(width) > SIGN_FLIP_BUDGET
    {
        return None;
    }
    let observed: i128 = values.iter().map(|&v| i128::from(v)).sum();
    let total = total as usize;
    let mut p = vec![0.0f64; 2 * total + 1];
    let mut next = p.clone();
    p[total] = 1.0;
    let mut reach = 0usize;
    for &v in &nonzero {
        let v = v as usize;
        let (lo, hi) = (total - reach, total + reach);
        next[lo - v..=hi + v].fill(0.0);
        for s in lo..=hi {
            let half = p[s] * 0.5;
            next[s - v] += half;
            next[s + v] += half;
        }
        reach += v;
        std::mem::swap(&mut p, &mut next);
    }
    let t = observed.unsigned_abs() as usize;
    // Smallest terms first, for accuracy.
    let mut tail = 0.0;
    for k in (t..=total).rev() {
        tail += p[total + k];
        if k > 0 {
            tail += p[total - k];
        }
    }
    Some(tail.min(1.0))
}

/// The paired test for per-case differences, and which one it was: [`mcnemar_exact`] when
/// every case has one scored pair (then it equals the exact sign-flip test on differences
/// in {-1, 0, 1}); otherwise the exact sign-flip test on per-case differences of pass
/// rates (`diff / pairs`, on a lattice with their common denominator), or its normal
/// approximation `2 (1 - Φ(|Σ d_i| / sqrt(Σ d_i²)))` when too large to enumerate.
pub fn paired_test(cases: &[CaseDiff]) -> (f64, PairedTest) {
    let scored: Vec<&CaseDiff> = cases.iter().filter(|c| c.pairs > 0).collect();
    if scored.is_empty() {
        return (1.0, PairedTest::None);
    }
    if scored.iter().all(|c| c.pairs == 1) {
        let down = scored.iter().filter(|c| c.diff < 0).count() as u64;
        let up = scored.iter().filter(|c| c.diff > 0).count() as u64;
        return (mcnemar_exact(down, up), PairedTest::McnemarExact);
    }
    let changed: Vec<&&CaseDiff> = scored.iter().filter(|c| c.diff != 0).collect();
    // The common denominator of the per-case rates that changed.
    let mut lcm: Option<u64> = Some(1);
    for c in &changed {
        lcm = lcm.and_then(|l| {
            let m = (l / gcd(l, c.pairs)).checked_mul(c.pairs)?;
            (m <= MAX_LATTICE_DENOMINATOR).then_some(m)
        });
    }
    let exact = lcm.and_then(|l| {
        let values: Option<Vec<i64>> = changed
            .iter()
            .map(|c| c.diff.checked_mul(i64::try_from(l / c.pairs).ok()?))
            .collect();
        sign_flip_exact(&values?)
    });
    if let Some(p) = exact {
        return (p, PairedTest::SignFlipExact);
    }
    let rates = changed.iter().map(|c| c.diff as f64 / c.pairs as f64);
    let (sum, squares) = rates.fold((0.0, 0.0), |(s, q), d| (s + d, q + d * d));
    let z = sum.abs() / squares.sqrt();
    let p = statrs::function::erf::erfc(z / std::f64::consts::SQRT_2);
    (p.min(1.0), PairedTest::SignFlipNormal)
}

/// Above this many degrees of freedom [`t975`] uses its expansion (statrs' inverse beta
/// slows down without bound as `df` grows).
const T_EXPANSION_DF: f64 = 200.0;

/// The 97.5% quantile of Student's t with `df` degrees of freedom (`df ≥ 1`), for
/// two-sided 95% intervals.
pub fn t975(df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let df = df.max(1.0);
    if df > T_EXPANSION_DF {
        // Cornish-Fisher expansion around the normal quantile; the next term is below
        // 1e-6 at df = 200.
        let z = Z95;
        let (z3, z5) = (z.powi(3), z.powi(5));
        return z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::INFINITY)
}

/// The 95% interval of a paired accuracy delta (candidate minus baseline, as a fraction),
/// with cases as clusters; `None` without scored pairs.
///
/// Two pseudo-cases, one whose pairs all went fail → pass and one whose pairs all went
/// pass → fail (each with the mean number of pairs per case), are added first, as in the
/// Bonett–Price adjusted interval for paired proportions: the interval then never
/// collapses to a point when every case agrees, and few cases give a wide one. With the
/// `G + 2` cases, `N` pairs and `D_i` the candidate-minus-baseline passes of case `i`:
/// `Δ = Σ D_i / N`, `V = (G+2)/(G+1) · Σ (D_i − Δ n_i)² / N²` (the CR1 cluster-robust
/// variance of a ratio) and the interval is `Δ ± t(G+1, 0.975) · √V`, clipped to
/// [-1, 1].
pub fn paired_delta_interval(cases: &[CaseDiff]) -> Option<(f64, f64)> {
    let scored: Vec<&CaseDiff> = cases.iter().filter(|c| c.pairs > 0).collect();
    if scored.is_empty() {
        return None;
    }
    let g = scored.len() as f64;
    let pairs: f64 = scored.iter().map(|c| c.pairs as f64).sum();
    let mean = pairs / g;
    let n = pairs + 2.0 * mean;
    // The pseudo-cases cancel in the sum of differences.
    let delta = scored.iter().map(|c| c.diff as f64).sum::<f64>() / n;
    let residual = |d: f64, k: f64| (d - delta * k).powi(2);
    let squares: f64 = scored
        .iter()
        .map(|c| residual(c.diff as f64, c.pairs as f64))
        .sum::<f64>()
        + residual(mean, mean)
        + residual(-mean, mean);
    let clusters = g + 2.0;
    let var = clusters / (clusters - 1.0) * squares / (n * n);
    let half = t975(clusters - 1.0) * var.sqrt();
    Some(((delta - half).max(-1.0), (delta + half).min(1.0)))
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

    fn case(pairs: u64, diff: i64) -> CaseDiff {
        CaseDiff { pairs, diff }
    }

    #[test]
    fn sign_flip_by_enumeration() {
        // Nothing changed: p = 1.
        assert_eq!(sign_flip_exact(&[0, 0]), Some(1.0));
        assert_eq!(sign_flip_exact(&[]), Some(1.0));
        // ±2 ±1 ±1 has the sums 4, 2, 2, 0, 0, -2, -2, -4: P(|S| ≥ 4) = 2/8.
        assert_eq!(sign_flip_exact(&[2, 1, 1]), Some(0.25));
        // Observed 2 - 1 + 1 = 2: P(|S| ≥ 2) = 6/8.
        assert_eq!(sign_flip_exact(&[2, -1, 1]), Some(0.75));
        // Four cases all down: only the two constant sign vectors reach |S| = 11: 2/16.
        assert_eq!(sign_flip_exact(&[-3, -3, -3, -2]), Some(0.125));
    }

    #[test]
    fn sign_flip_on_single_pairs_is_exact_mcnemar() {
        // Differences in {-1, 0, 1}: P(|n01 - n10| ≥ ...) under Binomial(n10 + n01, ½) is
        // the two-sided exact McNemar p-value.
        for (b, c) in [
            (0, 0),
            (1, 0),
            (6, 0),
            (10, 2),
            (2, 10),
            (5, 5),
            (20, 10),
            (70, 50),
            (80, 41),
        ] {
            let mut values = vec![-1; b];
            values.extend(vec![1; c]);
            values.extend(vec![0; 7]);
            let flip = sign_flip_exact(&values).unwrap();
            let mc = mcnemar_exact(b as u64, c as u64);
            assert!(
                (flip - mc).abs() <= 1e-12 * mc.max(1e-300),
                "{b} {c}: {flip} {mc}"
            );
            // paired_test takes the McNemar route for one pair per case, same value.
            let cases: Vec<CaseDiff> = values.iter().map(|&d| case(1, d)).collect();
            let (p, test) = paired_test(&cases);
            assert_eq!(test, PairedTest::McnemarExact);
            assert_eq!(p, mc);
        }
        // 10 vs 2 by hand: 2 · (1 + 12 + 66) / 4096.
        let (p, _) = paired_test(&[vec![case(1, -1); 10], vec![case(1, 1); 2]].concat());
        assert!((p - 158.0 / 4096.0).abs() < 1e-15);
    }

    #[test]
    fn repeats_make_the_case_the_unit() {
        // Issue 10's example: 4 cases × 3 repeats, 11 pass → fail flips (3, 3, 3, 2).
        // Pairs as units (McNemar 11 vs 0) would give 2/2048 < 0.001; with cases as units
        // only 2 of the 16 sign vectors are as extreme: p = 0.125, not significant.
        let cases = [case(3, -3), case(3, -3), case(3, -3), case(3, -2)];
        assert!(mcnemar_exact(11, 0) < 0.001);
        assert_eq!(paired_test(&cases), (0.125, PairedTest::SignFlipExact));
        // Unequal pairs per case: rates -1, -1/3, +1/2, -1 on the lattice of sixths are
        // -6, -2, +3, -6 (S = -11). The sums of ±6 ±6 ±2 ±3 with |S| ≥ 11 are ±17, ±13,
        // ±11: 6 of 16.
        let uneven = [case(2, -2), case(3, -1), case(2, 1), case(1, -1)];
        assert_eq!(paired_test(&uneven), (0.375, PairedTest::SignFlipExact));
        // Cases with no scored pair are not units; unchanged ones never weigh in.
        let mut padded = cases.to_vec();
        padded.extend([case(0, 0), case(3, 0), case(2, 0)]);
        assert_eq!(paired_test(&padded), (0.125, PairedTest::SignFlipExact));
        assert_eq!(paired_test(&[]), (1.0, PairedTest::None));
        assert_eq!(paired_test(&[case(0, 0)]), (1.0, PairedTest::None));
        assert_eq!(
            paired_test(&[case(3, 0), case(3, 0)]),
            (1.0, PairedTest::SignFlipExact)
        );
    }

    #[test]
    fn many_cases_use_the_normal_approximation() {
        // 6,000 changed cases of 3 pairs: 6,000 × 12,001 lattice points exceed the budget.
        // 3,100 at -1/3 and 2,900 at +1/3: z = (200/3) / sqrt(6000/9) = 200/sqrt(6000),
        // p = erfc(z/√2) = 0.009823274507519254 (Python's math.erfc).
        let mut cases = vec![case(3, -1); 3100];
        cases.extend(vec![case(3, 1); 2900]);
        let (p, test) = paired_test(&cases);
        assert_eq!(test, PairedTest::SignFlipNormal);
        assert!((p - 0.009_823_274_507_519_254).abs() < 1e-12, "{p}");
        // Close to the exact binomial value for equal magnitudes.
        assert!((p - mcnemar_exact(3100, 2900)).abs() < 0.001);
    }

    #[test]
    fn hostile_pair_counts_do_not_size_memory() {
        // One value of a billion: 2e9 lattice points would be 16 GB; refused.
        assert_eq!(sign_flip_exact(&[1_000_000_000]), None);
        assert_eq!(sign_flip_exact(&[i64::MIN, i64::MAX]), None);
        // Pair counts 11, 13, 16 and 17 need a denominator of 38,896 ... then 9 and 7:
        // 2,450,448 > 2^16, so the normal approximation answers.
        let cases: Vec<CaseDiff> = [11, 13, 16, 17, 9, 7]
            .iter()
            .map(|&n| case(n, -1))
            .collect();
        let (p, test) = paired_test(&cases);
        assert_eq!(test, PairedTest::SignFlipNormal);
        assert!(p > 0.0 && p < 1.0, "{p}");
    }

    #[test]
    fn t_quantiles() {
        // Table values of t(df, 0.975).
        for (df, t) in [
            (1.0, 12.706_204_736),
            (3.0, 3.182_446_305),
            (5.0, 2.570_581_836),
            (41.0, 2.019_540_970),
            (200.0, 1.971_896_224),
            (1000.0, 1.962_339_081),
            (1e9, 1.959_963_985),
        ] {
            assert!((t975(df) - t).abs() < 1e-6, "{df}: {}", t975(df));
        }
        // The expansion joins the exact quantile smoothly.
        assert!((t975(200.0) - t975(200.000_001)).abs() < 1e-6);
    }

    #[test]
    fn paired_interval_by_hand() {
        assert_eq!(paired_delta_interval(&[]), None);
        assert_eq!(paired_delta_interval(&[case(0, 0)]), None);
        // Issue 10's 4 cases × 3 repeats (-3, -3, -3, -2), plus pseudo-cases +3 and -3:
        // N = 18, Δ = -11/18; residuals D - Δn: -7/6 (×3), -1/6, 29/6, -7/6, squares
        // 1038/36; V = 6/5 · (1038/36) / 324; half = t(5) · √V = 0.84004.
        // Interval [-1.4511 → -1, +0.2289]: contains 0, like the test (p = 0.125).
        let (lo, hi) =
            paired_delta_interval(&[case(3, -3), case(3, -3), case(3, -3), case(3, -2)]).unwrap();
        assert_eq!(lo, -1.0);
        assert!((hi - 0.228_923_110).abs() < 1e-6, "{hi}");
        // One pair per case: 40 pairs, 10 pass → fail. Pseudo pairs +1 and -1: N = 42,
        // Δ = -10/42; squares (10·32² + 30·10² + 52² + 32²) / 42² = 16968/1764;
        // V = 42/41 · 16968/1764 / 1764; half = t(41) · √V.
        let mut cases = vec![case(1, -1); 10];
        cases.extend(vec![case(1, 0); 30]);
        let (lo, hi) = paired_delta_interval(&cases).unwrap();
        assert!((lo + 0.389_034_469).abs() < 1e-6, "{lo}");
        assert!((hi + 0.087_156_007).abs() < 1e-6, "{hi}");
        // Nothing changed: the interval is centred on 0 and not a point.
        let (lo, hi) = paired_delta_interval(&[case(1, 0); 40]).unwrap();
        assert!(
            lo < -0.05 && hi > 0.05 && (lo + hi).abs() < 1e-12,
            "{lo} {hi}"
        );
        // Fewer cases, wider interval (same changes per case).
        let few = paired_delta_interval(&[case(3, -1); 5]).unwrap();
        let many = paired_delta_interval(&[case(3, -1); 50]).unwrap();
        assert!(few.1 - few.0 > 2.0 * (many.1 - many.0), "{few:?} {many:?}");
    }
}
