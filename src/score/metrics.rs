//! Aggregate metrics per matrix cell and overall. Every definition here is stated in
//! `docs/metrics.md`; the unit tests compute each one by hand on a small example.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::record::{TrialRecord, Verdict};
use super::stats::{Rate, pass_at_k, pass_hat_k, percentile};
use super::trial::InvalidReason;
use crate::suite::CaseKind;

/// Metric names accepted by thresholds.
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

/// Trigger decision counts and rates: should_call trials are positives, should_not_call
/// trials negatives, "a call was made" the prediction. Ambiguous trials are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    /// should_call, called.
    pub tp: u64,
    /// should_not_call, called.
    pub fp: u64,
    /// should_not_call, not called.
    pub tn: u64,
    /// should_call, not called.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// tp / (tp + fp).
    pub precision: Rate,
    /// tp / (tp + fn).
    pub recall: Rate,
    /// Harmonic mean of precision and recall.
    pub f1: Option<f64>,
    /// fp / (fp + tn).
    pub false_call_rate: Rate,
    /// fn / (tp + fn).
    pub miss_rate: Rate,
}

/// Invalid calls by reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InvalidBreakdown {
    /// Arguments not valid JSON.
    pub invalid_json: u64,
    /// Tool not in the suite.
    pub unknown_tool: u64,
    /// Arguments violate the schema.
    pub schema_violation: u64,
}

/// Token totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens over scored trials.
    pub input: u64,
    /// Output tokens over scored trials.
    pub output: u64,
    /// Trials whose usage was estimated offline (the provider reported none).
    pub estimated_trials: u64,
}

/// Latency percentiles over scored trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median, ms.
    pub p50_ms: Option<f64>,
    /// 95th percentile, ms.
    pub p95_ms: Option<f64>,
}

/// Consistency over repeats: each case's `n` repeats give pass@k and pass^k with k = n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Consistency {
    /// k (the number of repeats).
    pub k: u32,
    /// Cases with k scored repeats.
    pub cases: u64,
    /// Mean over cases of pass@k.
    pub pass_at_k: f64,
    /// Mean over cases of pass^k.
    pub pass_hat_k: f64,
}

/// All metrics of a set of trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Trials in the set.
    pub trials: u64,
    /// Trials that ended with a verdict.
    pub scored: u64,
    /// Trials that ended with an error.
    pub errors: u64,
    /// Trials that passed.
    pub passed: u64,
    /// passed / scored.
    pub accuracy: Rate,
    /// errors / trials.
    pub error_rate: Rate,
    /// Trigger decision.
    pub trigger: Trigger,
    /// should_call trials with a call whose distinct called tools equal the expected ones,
    /// over should_call trials with a call.
    pub tool_selection_accuracy: Rate,
    /// Required parameters present, over required parameters of calls to expected tools.
    pub param_completeness: Rate,
    /// Expected arguments matched, over expected arguments of calls paired with an
    /// expected call of the same tool.
    pub arg_match_rate: Rate,
    /// Invalid calls over all calls.
    pub invalid_call_rate: Rate,
    /// Invalid calls by reason.
    pub invalid_by_reason: InvalidBreakdown,
    /// Ungrounded string values over string values checked.
    pub ungrounded_rate: Rate,
    /// Scored trials with at least one ungrounded value.
    pub trials_with_ungrounded: u64,
    /// Token totals.
    pub tokens: Tokens,
    /// Total cost, when every scored trial's model has a price.
    pub cost_usd: Option<f64>,
    /// Latency percentiles.
    pub latency: Latency,
    /// pass@k and pass^k, when trials were repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
}

impl Metrics {
    /// Aggregate `trials`.
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Metrics {
        let mut a = Acc::default();
        let mut latencies = Vec::new();
        let mut by_case: HashMap<(&str, &str, String, &str), (u64, u64)> = HashMap::new();
        let mut max_repeat = 0;
        for t in trials {
            a.trials += 1;
            if t.verdict == Verdict::Error {
                a.errors += 1;
                continue;
            }
            a.scored += 1;
            max_repeat = max_repeat.max(t.repeat);
            let passed = t.passed();
            a.passed += u64::from(passed);
            let e = by_case
                .entry((
                    t.target.as_str(),
                    t.variant.as_str(),
                    t.tool_choice.to_string(),
                    t.case_id.as_str(),
                ))
                .or_default();
            e.0 += 1;
            e.1 += u64::from(passed);
            if let Some(r) = &t.response {
                latencies.push(r.latency_ms);
                if let Some(u) = r.usage {
                    a.input += u.input_tokens;
                    a.output += u.output_tokens;
                    a.estimated += u64::from(u.estimated);
                }
            }
            match t.cost_usd {
                Some(c) => a.cost += c,
                None => a.unpriced += 1,
            }
            let Some(c) = &t.checks else { continue };
            match (c.kind, c.called) {
                (CaseKind::ShouldCall, true) => a.tp += 1,
                (CaseKind::ShouldCall, false) => a.fn_ += 1,
                (CaseKind::ShouldNotCall, true) => a.fp += 1,
                (CaseKind::ShouldNotCall, false) => a.tn += 1,
                (CaseKind::Ambiguous, _) => {}
            }
            if let Some(right) = c.right_tools {
                a.sel_den += 1;
                a.sel_num += u64::from(right);
            }
            a.args_matched += u64::from(c.args_matched);
            a.args_expected += u64::from(c.args_expected);
            let mut ungrounded_here = false;
            for call in &c.calls {
                a.calls += 1;
                match call.invalid {
                    Some(InvalidReason::InvalidJson) => a.invalid.invalid_json += 1,
                    Some(InvalidReason::UnknownTool) => a.invalid.unknown_tool += 1,
                    Some(InvalidReason::SchemaViolation) => a.invalid.schema_violation += 1,
                    None => {}
                }
                if call.json_ok && call.known_tool && c.expected_tools.contains(&call.tool) {
                    a.req_present += u64::from(call.required_present);
                    a.req_total += u64::from(call.required_total);
                }
                a.ground_checked += u64::from(call.grounding_checked);
                a.ungrounded += call.ungrounded.len() as u64;
                ungrounded_here |= !call.ungrounded.is_empty();
            }
            a.trials_ungrounded += u64::from(ungrounded_here);
        }
        let invalid_total =
            a.invalid.invalid_json + a.invalid.unknown_tool + a.invalid.schema_violation;
        let precision = Rate::new(a.tp, a.tp + a.fp);
        let recall = Rate::new(a.tp, a.tp + a.fn_);
        let f1 = match (precision.value, recall.value) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        let consistency = (max_repeat > 0).then(|| {
            let k = u64::from(max_repeat) + 1;
            let full: Vec<(u64, u64)> =
                by_case.values().copied().filter(|(n, _)| *n >= k).collect();
            let cases = full.len() as u64;
            let mean = |f: &dyn Fn(u64, u64) -> f64| {
                if cases == 0 {
                    0.0
                } else {
                    full.iter().map(|(n, c)| f(*n, *c)).sum::<f64>() / cases as f64
                }
            };
            Consistency {
                k: max_repeat + 1,
                cases,
                pass_at_k: mean(&|n, c| pass_at_k(n, c, k)),
                pass_hat_k: mean(&|n, c| pass_hat_k(n, c, k)),
            }
        });
        Metrics {
            trials: a.trials,
            scored: a.scored,
            errors: a.errors,
            passed: a.passed,
            accuracy: Rate::new(a.passed, a.scored),
            error_rate: Rate::new(a.errors, a.trials),
            trigger: Trigger {
                tp: a.tp,
                fp: a.fp,
                tn: a.tn,
                fn_: a.fn_,
                precision,
                recall,
                f1,
                false_call_rate: Rate::new(a.fp, a.fp + a.tn),
                miss_rate: Rate::new(a.fn_, a.tp + a.fn_),
            },
            tool_selection_accuracy: Rate::new(a.sel_num, a.sel_den),
            param_completeness: Rate::new(a.req_present, a.req_total),
            arg_match_rate: Rate::new(a.args_matched, a.args_expected),
            invalid_call_rate: Rate::new(invalid_total, a.calls),
            invalid_by_reason: a.invalid,
            ungrounded_rate: Rate::new(a.ungrounded, a.ground_checked),
            trials_with_ungrounded: a.trials_ungrounded,
            tokens: Tokens {
                input: a.input,
                output: a.output,
                estimated_trials: a.estimated,
            },
            cost_usd: (a.unpriced == 0 && a.scored > 0).then_some(a.cost),
            latency: Latency {
                p50_ms: percentile(&mut latencies, 50.0),
                p95_ms: percentile(&mut latencies, 95.0),
            },
            consistency,
        }
    }

    /// The value of a metric named in [`METRIC_NAMES`], if defined for this set.
    pub fn value(&self, name: &str) -> Option<f64> {
        match name {
            "accuracy" => self.accuracy.value,
            "error_rate" => self.error_rate.value,
            "trigger_precision" => self.trigger.precision.value,
            "trigger_recall" => self.trigger.recall.value,
            "trigger_f1" => self.trigger.f1,
            "false_call_rate" => self.trigger.false_call_rate.value,
            "miss_rate" => self.trigger.miss_rate.value,
            "tool_selection_accuracy" => self.tool_selection_accuracy.value,
            "param_completeness" => self.param_completeness.value,
            "arg_match_rate" => self.arg_match_rate.value,
            "invalid_call_rate" => self.invalid_call_rate.value,
            "ungrounded_rate" => self.ungrounded_rate.value,
            "pass_at_k" => self.consistency.as_ref().map(|c| c.pass_at_k),
            "pass_hat_k" => self.consistency.as_ref().map(|c| c.pass_hat_k),
            "latency_p50_ms" => self.latency.p50_ms,
            "latency_p95_ms" => self.latency.p95_ms,
            "cost_usd" => self.cost_usd,
            "input_tokens" => Some(self.tokens.input as f64),
            "output_tokens" => Some(self.tokens.output as f64),
            _ => None,
        }
    }
}

#[derive(Default)]
struct Acc {
    trials: u64,
    scored: u64,
    errors: u64,
    passed: u64,
    tp: u64,
    fp: u64,
    tn: u64,
    fn_: u64,
    sel_num: u64,
    sel_den: u64,
    req_present: u64,
    req_total: u64,
    args_matched: u64,
    args_expected: u64,
    calls: u64,
    invalid: InvalidBreakdown,
    ground_checked: u64,
    ungrounded: u64,
    trials_ungrounded: u64,
    input: u64,
    output: u64,
    estimated: u64,
    cost: f64,
    unpriced: u64,
}
