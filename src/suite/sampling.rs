//! The ranges of the sampling parameters, checked where they are given: a suite's
//! `sampling` (at load, with the line) and the command-line flags that override it.
//!
//! A value outside them would reach every live request, where the provider refuses it
//! (one 400 per trial) or, worse, a local server takes `NaN` as it comes; and it would
//! enter every cassette key, so a recording made with it matches nothing later.

use std::ops::RangeInclusive;

/// The temperatures accepted: OpenAI and Gemini take 0 to 2 (Anthropic 0 to 1).
pub const TEMPERATURE: RangeInclusive<f64> = 0.0..=2.0;

/// How to write a temperature.
pub const TEMPERATURE_HINT: &str = "a temperature is a number from 0 to 2, e.g. 0 for the most repeatable answers (Anthropic accepts at most 1)";

/// How to write an output token limit.
pub const MAX_OUTPUT_TOKENS_HINT: &str = "give the most tokens one answer may use, at least 1 (e.g. 256), or leave it out for the provider's default";

/// Why `t` is not a temperature, if it is not, as `` `{name}` is {t}: why ``.
pub fn temperature_problem(name: &str, t: f64) -> Option<String> {
    let why = if !t.is_finite() {
        "not a finite number".to_string()
    } else if !TEMPERATURE.contains(&t) {
        format!("outside {} to {}", TEMPERATURE.start(), TEMPERATURE.end())
    } else {
        return None;
    };
    Some(format!("{name} is {t}: {why}"))
}

/// Why `n` is not an output token limit, if it is not, as `` `{name}` is {n}: why ``.
pub fn max_output_tokens_problem(name: &str, n: u32) -> Option<String> {
    (n == 0).then(|| format!("{name} is 0: that leaves no room for an answer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperatures_are_finite_and_within_0_to_2() {
        let t = |v| temperature_problem("`temperature`", v);
        for ok in [0.0, -0.0, 0.7, 1.0, 2.0] {
            assert_eq!(t(ok), None, "{ok}");
        }
        assert_eq!(
            t(f64::NAN).as_deref(),
            Some("`temperature` is NaN: not a finite number")
        );
        assert_eq!(
            t(f64::NEG_INFINITY).as_deref(),
            Some("`temperature` is -inf: not a finite number")
        );
        assert_eq!(
            t(-0.5).as_deref(),
            Some("`temperature` is -0.5: outside 0 to 2")
        );
        assert_eq!(
            t(2.01).as_deref(),
            Some("`temperature` is 2.01: outside 0 to 2")
        );
    }

    #[test]
    fn an_output_limit_is_at_least_one() {
        let n = |v| max_output_tokens_problem("--max-output-tokens", v);
        assert_eq!(n(1), None);
        assert_eq!(n(u32::MAX), None);
        assert_eq!(
            n(0).as_deref(),
            Some("--max-output-tokens is 0: that leaves no room for an answer")
        );
    }
}
