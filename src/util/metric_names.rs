//! The metric vocabulary that suites, scoring, reports and comparisons share: every name
//! a threshold may use, which of them are rates (fractions in [0, 1]) and which amounts,
//! and the bounds a threshold on each may have. A suite checks its thresholds with it
//! when it loads; `score::metrics` computes a value for every name.

use super::suggest;

/// The aggregate metrics of a set of trials, in the order of `docs/metrics.md`:
/// `score::Metrics` has a value for each, and a threshold may name any of them.
pub const METRIC_NAMES: &[&str] = &[
    "accuracy",
    "error_rate",
    "trigger_precision",
    "trigger_recall",
    "trigger_f1",
    "false_call_rate",
    "miss_rate",
    "tool_selection_accuracy",
    "param_completeness",
    "arg_match_rate",
    "invalid_call_rate",
    "ungrounded_rate",
    "pass_at_k",
    "pass_hat_k",
    "latency_p50_ms",
    "latency_p95_ms",
    "cost_usd",
    "input_tokens",
    "output_tokens",
];

/// Metrics a threshold may name besides the per-trial aggregates of [`METRIC_NAMES`]:
/// `tool_definition_tokens` is a property of a variant's tool definitions (per cell: its
/// variant's; overall: the largest of the run's variants); the others are rates of the
/// loop trials (`score::loops`), undefined (so a gate on them fails) in a
/// set without loop trials, and of the behaviour metrics (`score::behaviour`), undefined
/// in a set without a trial expecting a behaviour.
pub const EXTRA_THRESHOLD_METRICS: &[&str] = &[
    "tool_definition_tokens",
    "task_success",
    "recovery",
    "duplicate_side_effect_rate",
    "data_flow_accuracy",
    "grounded_answer_rate",
    "macro_f1",
    "tool_hallucination_rate",
    "answer_hallucination_rate",
    "first_token_p50_ms",
    "first_token_p95_ms",
    "first_tool_byte_p50_ms",
    "first_tool_byte_p95_ms",
];

/// The threshold metrics that are amounts (tokens, milliseconds, dollars), never
/// negative; every other one is a rate, a fraction in [0, 1], so a bound outside it is a
/// mistake (`min: 90` meant 0.9). Listing the few amounts keeps a new rate metric a rate.
pub const AMOUNT_METRICS: &[&str] = &[
    "latency_p50_ms",
    "latency_p95_ms",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "tool_definition_tokens",
    "first_token_p50_ms",
    "first_token_p95_ms",
    "first_tool_byte_p50_ms",
    "first_tool_byte_p95_ms",
];

/// The rates where lower is better: error and hallucination rates, invalid, false and
/// missed calls, ungrounded values, duplicate side effects. For these and every amount
/// ([`AMOUNT_METRICS`]: time, tokens, money) lower is better; for every other metric
/// higher is. `compare` reads a regression as a change in the worse direction: a drop of
/// accuracy, a rise of `error_rate`.
pub const LOWER_IS_BETTER_RATES: &[&str] = &[
    "error_rate",
    "false_call_rate",
    "miss_rate",
    "invalid_call_rate",
    "ungrounded_rate",
    "duplicate_side_effect_rate",
    "tool_hallucination_rate",
    "answer_hallucination_rate",
];

/// Whether a lower value of `metric` is better: a harm rate
/// ([`LOWER_IS_BETTER_RATES`]) or an amount ([`AMOUNT_METRICS`]).
pub fn lower_is_better(metric: &str) -> bool {
    LOWER_IS_BETTER_RATES.contains(&metric) || AMOUNT_METRICS.contains(&metric)
}

/// Every metric name a threshold accepts, in the order of `docs/metrics.md`.
pub fn threshold_metrics() -> Vec<&'static str> {
    METRIC_NAMES
        .iter()
        .chain(EXTRA_THRESHOLD_METRICS)
        .copied()
        .collect()
}

/// Whether `metric` is a rate: a threshold metric that is not an amount (see
/// [`AMOUNT_METRICS`]).
pub fn is_rate(metric: &str) -> bool {
    !AMOUNT_METRICS.contains(&metric) && threshold_metrics().contains(&metric)
}

/// A threshold that can not be meant as written: what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct BoundProblem {
    /// What is wrong, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Check the metric name of a threshold; the problem names the closest metric.
pub fn check_metric(metric: &str) -> Result<(), BoundProblem> {
    let names = threshold_metrics();
    if names.contains(&metric) {
        return Ok(());
    }
    let hint = match suggest::closest(metric, names.iter().copied()) {
        Some(m) => format!("did you mean `{m}`? metrics are: {}", names.join(", ")),
        None => format!("metrics are: {}", names.join(", ")),
    };
    Err(BoundProblem {
        message: format!("unknown metric `{metric}`"),
        hint,
    })
}

/// Check one bound (`which` is `min` or `max`, as written) of a threshold on `metric`:
/// finite, within [0, 1] for a rate, not negative for an amount.
pub fn check_bound(metric: &str, which: &str, value: f64) -> Result<(), BoundProblem> {
    if !value.is_finite() {
        return Err(BoundProblem {
            message: format!("`{which}: {value}` is not a finite number"),
            hint: format!("give `{which}` a number, or drop it"),
        });
    }
    if is_rate(metric) && !(0.0..=1.0).contains(&value) {
        let hint = if value > 1.0 && value <= 100.0 {
            format!(
                "rates are fractions in [0, 1]; did you mean {}?",
                round_percent(value)
            )
        } else {
            "rates are fractions in [0, 1], e.g. 0.9 for 90%".to_string()
        };
        return Err(BoundProblem {
            message: format!(
                "`{which}: {value}` is outside [0, 1], the range of the rate `{metric}`"
            ),
            hint,
        });
    }
    if !is_rate(metric) && value < 0.0 {
        return Err(BoundProblem {
            message: format!("`{which}: {value}` is negative, and `{metric}` never is"),
            hint: format!("`{metric}` is an amount (0 or more)"),
        });
    }
    Ok(())
}

/// `min` and `max` together: a range no value can be in is refused.
pub fn check_range(min: f64, max: f64) -> Result<(), BoundProblem> {
    if min > max {
        return Err(BoundProblem {
            message: format!("`min: {min}` is above `max: {max}`: no value can pass"),
            hint: "swap the two bounds, or drop one".into(),
        });
    }
    Ok(())
}

/// `percent / 100` without binary noise (`57` gives 0.57, not 0.5700000000000001).
fn round_percent(percent: f64) -> f64 {
    (percent * 1e6).round() / 1e8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_that_can_not_be_meant_are_refused_with_a_fix() {
        let e = check_bound("accuracy", "min", 90.0).unwrap_err();
        assert_eq!(
            e.message,
            "`min: 90` is outside [0, 1], the range of the rate `accuracy`"
        );
        assert_eq!(e.hint, "rates are fractions in [0, 1]; did you mean 0.9?");
        let e = check_bound("trigger_recall", "max", 57.0).unwrap_err();
        assert_eq!(e.hint, "rates are fractions in [0, 1]; did you mean 0.57?");
        let e = check_bound("miss_rate", "max", -0.1).unwrap_err();
        assert_eq!(e.hint, "rates are fractions in [0, 1], e.g. 0.9 for 90%");
        let e = check_bound("accuracy", "min", 250.0).unwrap_err();
        assert_eq!(e.hint, "rates are fractions in [0, 1], e.g. 0.9 for 90%");
        // Amounts are any non-negative number.
        assert_eq!(check_bound("latency_p95_ms", "max", 2500.0), Ok(()));
        assert_eq!(check_bound("tool_definition_tokens", "max", 900.0), Ok(()));
        let e = check_bound("cost_usd", "max", -1.0).unwrap_err();
        assert_eq!(e.message, "`max: -1` is negative, and `cost_usd` never is");
        let e = check_bound("cost_usd", "max", f64::INFINITY).unwrap_err();
        assert_eq!(e.message, "`max: inf` is not a finite number");
        // The edges of a rate are fine.
        assert_eq!(check_bound("accuracy", "min", 0.0), Ok(()));
        assert_eq!(check_bound("accuracy", "max", 1.0), Ok(()));
        let e = check_range(0.9, 0.5).unwrap_err();
        assert_eq!(
            e.message,
            "`min: 0.9` is above `max: 0.5`: no value can pass"
        );
        assert_eq!(check_range(0.5, 0.5), Ok(()));
    }

    #[test]
    fn metric_names_get_a_suggestion() {
        assert_eq!(check_metric("tool_definition_tokens"), Ok(()));
        for m in METRIC_NAMES {
            assert_eq!(check_metric(m), Ok(()));
        }
        let e = check_metric("acuracy").unwrap_err();
        assert_eq!(e.message, "unknown metric `acuracy`");
        assert!(
            e.hint
                .starts_with("did you mean `accuracy`? metrics are: accuracy, error_rate,"),
            "{}",
            e.hint
        );
        let e = check_metric("speed").unwrap_err();
        assert!(e.hint.starts_with("metrics are: "), "{}", e.hint);
        // Every amount is a metric, and the rates are exactly the rest.
        for a in AMOUNT_METRICS {
            assert!(threshold_metrics().contains(a), "{a}");
        }
        let rates: Vec<&str> = threshold_metrics()
            .into_iter()
            .filter(|m| is_rate(m))
            .collect();
        let mut expected = METRIC_NAMES[..14].to_vec();
        // The loop and behaviour rates come after them (tool_definition_tokens, first of
        // the extras, is an amount).
        expected.extend(&EXTRA_THRESHOLD_METRICS[1..9]);
        assert_eq!(rates, expected);
        // The timings of streamed answers are amounts, last.
        assert_eq!(
            &EXTRA_THRESHOLD_METRICS[9..],
            crate::score::stream::STREAM_METRICS
        );
        assert_eq!(
            &EXTRA_THRESHOLD_METRICS[1..6],
            crate::score::loops::LOOP_METRICS
        );
        assert_eq!(
            &EXTRA_THRESHOLD_METRICS[6..9],
            crate::score::behaviour::BEHAVIOUR_METRICS
        );
        assert_eq!(
            &EXTRA_THRESHOLD_METRICS[1..9],
            [
                "task_success",
                "recovery",
                "duplicate_side_effect_rate",
                "data_flow_accuracy",
                "grounded_answer_rate",
                "macro_f1",
                "tool_hallucination_rate",
                "answer_hallucination_rate"
            ]
        );
        assert!(rates.contains(&"pass_hat_k") && !is_rate("cost_usd") && !is_rate("speed"));
    }

    #[test]
    fn every_amount_and_every_harm_is_lower_is_better() {
        for m in LOWER_IS_BETTER_RATES {
            assert!(threshold_metrics().contains(m) && lower_is_better(m), "{m}");
        }
        for a in AMOUNT_METRICS {
            assert!(lower_is_better(a), "{a}");
        }
        for higher in [
            "accuracy",
            "trigger_recall",
            "task_success",
            "recovery",
            "macro_f1",
            "pass_hat_k",
        ] {
            assert!(!lower_is_better(higher), "{higher}");
        }
        for lower in ["error_rate", "tool_hallucination_rate", "miss_rate"] {
            assert!(lower_is_better(lower), "{lower}");
        }
    }
}
