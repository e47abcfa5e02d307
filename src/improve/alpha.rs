//! How much of the significance level each round of a search may spend.
//!
//! A search tests one candidate against the current wording on the held-out set in every
//! round. Testing each at the full `alpha` would accept a wording that is no better with
//! probability close to `1 - (1 - alpha)^rounds` over a long search. Round `r` (from 1)
//! therefore tests at `alpha / 2^r`: the levels sum to less than `alpha` however many
//! rounds run (a Bonferroni split over an unbounded number of rounds), so the whole
//! search keeps its false-acceptance rate at most `alpha`, and early rounds, where the
//! largest gains are found, get the largest share.

/// The level round `round` (1, 2, 3, …) tests at, for a search at `alpha`. Round 0 is
/// treated as round 1.
pub fn level(alpha: f64, round: u32) -> f64 {
    // 2^-r underflows to 0 past r ≈ 1074, which only makes a hopeless round stricter.
    alpha * 0.5f64.powi(round.max(1) as i32)
}

/// Whether a held-out p-value is significant in round `round` of a search at `alpha`.
pub fn significant(p: f64, alpha: f64, round: u32) -> bool {
    p.is_finite() && p <= level(alpha, round)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_levels_halve_and_never_sum_to_alpha() {
        assert_eq!(level(0.05, 1), 0.025);
        assert_eq!(level(0.05, 2), 0.0125);
        assert_eq!(level(0.05, 0), level(0.05, 1));
        // 0.05 × (1 − 2^−30): below alpha, and nearly all of it is spendable.
        let spent: f64 = (1..=30).map(|r| level(0.05, r)).sum();
        assert!(spent < 0.05 && spent > 0.0499, "{spent}");
        // However many rounds (past about 50 the sum rounds to alpha in floating point).
        let spent: f64 = (1..=10_000).map(|r| level(0.05, r)).sum();
        assert!(spent <= 0.05, "{spent}");
    }

    #[test]
    fn a_p_value_is_judged_at_its_rounds_level() {
        assert!(significant(0.02, 0.05, 1));
        assert!(!significant(0.02, 0.05, 2));
        assert!(significant(0.0125, 0.05, 2), "the bound itself counts");
        assert!(!significant(f64::NAN, 0.05, 1));
    }
}
