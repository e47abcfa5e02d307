//! Aggregate metrics per matrix cell and overall. Every definition here is stated in
//! `docs/metrics.md`; the unit tests compute each one by hand on a small example.

use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use super::behaviour::BehaviourMetrics;
use super::loops::LoopMetrics;
use super::record::{TrialRecord, Verdict};
use super::stats::{Rate, pass_at_k, pass_hat_k, percentile};
use crate::judge::calls::InvalidReason;
use crate::suite::CaseKind;

/// Trigger decision counts and rates: should_call trials are positives, should_not_call
/// trials negatives, "a call was made" the prediction. Ambiguous trials are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InvalidBreakdown {
    /// Arguments not valid JSON.
    pub invalid_json: u64,
    /// Tool not in the suite.
    pub unknown_tool: u64,
    /// Arguments violate the schema.
    pub schema_violation: u64,
}

/// Token totals.
///
/// The three detail counts are parts of `input` and `output` that providers bill at
/// other rates (see `docs/metrics.md`); each is left out of `summary.json` when 0, so
/// summaries of runs whose providers reported none are as before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tokens {
    /// Input tokens over scored trials (the whole prompts: fresh, cached and written
    /// to the cache).
    pub input: u64,
    /// Output tokens over scored trials (reasoning included).
    pub output: u64,
    /// Trials whose usage was estimated offline (the provider reported none).
    pub estimated_trials: u64,
    /// The part of `input` read from the providers' prompt caches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input: u64,
    /// The part of `input` written to the providers' prompt caches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
    /// The part of `output` the models spent reasoning.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Tokens {
    /// True when some trial reported cached, cache-write or reasoning tokens: the
    /// reports show the detail counts only then.
    pub fn has_details(&self) -> bool {
        self.cached_input > 0 || self.cache_write > 0 || self.reasoning > 0
    }
}

/// Latency percentiles over scored trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    /// Median, ms.
    pub p50_ms: Option<f64>,
    /// 95th percentile, ms.
    pub p95_ms: Option<f64>,
}

/// Consistency over repeats: each case's `n` repeats give pass@k and pass^k with k = n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Time to first token and to the first tool-call byte of the streamed answers;
    /// absent when none was streamed (so summaries of other runs are as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<super::stream::StreamMetrics>,
    /// pass@k and pass^k, when trials were repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
    /// The metrics of the trials that ran as tool loops; absent when none did (so a
    /// single-turn run's summary is as before loops existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<LoopMetrics>,
    /// The behaviour metrics (confusion matrix, macro-F1, hallucination rates) of the
    /// trials whose case expects one behaviour; absent when none does (so summaries of
    /// suites without behaviours are as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<BehaviourMetrics>,
}

impl Metrics {
    /// Aggregate `trials`.
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Metrics {
        let mut a = Acc::default();
        let mut latencies = Vec::new();
        // A case's repeats, by cell (target, variant, tool_choice, stream mode) and case
        // id: a streamed trial's cell is not its unstreamed twin's.
        type CaseKey<'a> = (&'a str, &'a str, String, bool, &'a str);
        let mut by_case: FxHashMap<CaseKey<'_>, (u64, u64)> = FxHashMap::default();
        let mut max_repeat = 0;
        let mut loop_trials = Vec::new();
        let mut behaviour_trials = Vec::new();
        let mut streamed = Vec::new();
        for t in trials {
            if t.is_loop() {
                loop_trials.push(t);
            }
            if t.stream {
                streamed.push(t);
            }
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
                    t.stream,
                    t.case_id.as_str(),
                ))
                .or_default();
            e.0 += 1;
            e.1 += u64::from(passed);
            // A loop trial counts every round's tokens and model time.
            if let Some(latency) = t.latency_ms() {
                latencies.push(latency);
                if let Some(u) = t.usage() {
                    // Saturating: a count read back from an edited journal is not
                    // checked again here, and a sum must never wrap to a small number.
                    a.input = a.input.saturating_add(u.input_tokens);
                    a.output = a.output.saturating_add(u.output_tokens);
                    a.cached_input = a.cached_input.saturating_add(u.cached_input_tokens);
                    a.cache_write = a.cache_write.saturating_add(u.cache_write_tokens);
                    a.reasoning = a.reasoning.saturating_add(u.reasoning_tokens);
                    a.estimated += u64::from(u.estimated);
                }
            }
            match t.cost_usd {
                // A cost that is no price at all (negative, NaN, infinite: only an
                // edited journal has one) counts as unpriced rather than entering the sum.
                Some(c) if c.is_finite() && c >= 0.0 => a.cost = (a.cost + c).min(f64::MAX),
                Some(_) => a.unpriced += 1,
                None => a.unpriced += 1,
            }
            let Some(c) = &t.checks else { continue };
            if c.behaviour.as_ref().is_some_and(|b| b.expected.is_some()) {
                behaviour_trials.push(t);
            }
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
                k: max_repeat.saturating_add(1),
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
                cached_input: a.cached_input,
                cache_write: a.cache_write,
                reasoning: a.reasoning,
            },
            cost_usd: (a.unpriced == 0 && a.scored > 0).then_some(a.cost),
            latency: Latency {
                p50_ms: percentile(&mut latencies, 50.0),
                p95_ms: percentile(&mut latencies, 95.0),
            },
            stream: super::stream::StreamMetrics::of(streamed),
            consistency,
            loops: LoopMetrics::of(loop_trials),
            behaviour: BehaviourMetrics::of(behaviour_trials),
        }
    }

    /// The value of a metric named in [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES),
    /// if defined for this set.
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
    cached_input: u64,
    cache_write: u64,
    reasoning: u64,
    cost: f64,
    unpriced: u64,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::judge::calls::{CallCheck, CaseScorer, Reason, TrialChecks};
    use crate::provider::{Response, ToolCall, ToolChoice, Usage};
    use crate::util::metric_names::METRIC_NAMES;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[track_caller]
    fn assert_rate(r: &Rate, num: u64, den: u64) {
        assert_eq!((r.num, r.den), (num, den), "{r:?}");
        assert!(close(r.value.unwrap(), num as f64 / den as f64), "{r:?}");
    }

    /// A valid call to `tool` with nothing required and nothing to ground.
    fn cc(tool: &str) -> CallCheck {
        CallCheck {
            tool: tool.into(),
            id: None,
            json_ok: true,
            known_tool: true,
            distractor: false,
            schema_ok: Some(true),
            schema_errors: vec![],
            invalid: None,
            required_present: 0,
            required_total: 0,
            missing_required: vec![],
            grounding_checked: 0,
            ungrounded: vec![],
        }
    }

    fn checks(kind: CaseKind, calls: Vec<CallCheck>, expected: &[&str]) -> TrialChecks {
        TrialChecks {
            kind,
            called: !calls.is_empty(),
            calls,
            expected_tools: expected.iter().map(|s| s.to_string()).collect(),
            right_tools: None,
            args_matched: 0,
            args_expected: 0,
            behaviour: None,
        }
    }

    /// A scored trial of `case` in the default cell.
    fn scored(case: &str, verdict: Verdict, c: TrialChecks) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind: c.kind,
            tags: vec![],
            target: "scripted:oracle".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: vec![],
            response: Some(Response::default()),
            checks: Some(c),
            verdict,
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    fn timed(
        mut t: TrialRecord,
        latency_ms: f64,
        usage: (u64, u64, bool),
        cost: f64,
    ) -> TrialRecord {
        let r = t.response.as_mut().unwrap();
        r.latency_ms = latency_ms;
        r.usage = Some(Usage {
            input_tokens: usage.0,
            output_tokens: usage.1,
            estimated: usage.2,
            ..Default::default()
        });
        t.cost_usd = Some(cost);
        t
    }

    fn errored(case: &str, kind: CaseKind) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind,
            tags: vec![],
            target: "scripted:oracle".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: vec![],
            response: None,
            checks: None,
            verdict: Verdict::Error,
            reasons: vec![Reason::new("provider_error", "timeout")],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    /// Nine trials, one of each situation; every metric below is computed from them by hand.
    fn sample() -> Vec<TrialRecord> {
        use CaseKind::*;
        // T1 should_call, right call: required 2/2, 2 values grounded, args 2/2.
        let mut t1 = checks(
            ShouldCall,
            vec![CallCheck {
                required_present: 2,
                required_total: 2,
                grounding_checked: 2,
                ..cc("get_weather")
            }],
            &["get_weather"],
        );
        t1.right_tools = Some(true);
        (t1.args_matched, t1.args_expected) = (2, 2);
        // T2 should_call, wrong tool: send_email with 0/3 required, 1 of 1 value ungrounded.
        let mut t2 = checks(
            ShouldCall,
            vec![CallCheck {
                required_present: 0,
                required_total: 3,
                missing_required: vec!["to".into(), "subject".into(), "body".into()],
                grounding_checked: 1,
                ungrounded: vec![r#"to = "x""#.into()],
                ..cc("send_email")
            }],
            &["get_weather"],
        );
        t2.right_tools = Some(false);
        // T3, T4 should_call, no call.
        let t3 = checks(ShouldCall, vec![], &["get_weather"]);
        let t4 = checks(ShouldCall, vec![], &["get_weather"]);
        // T5 should_not_call, a call with invalid JSON.
        let t5 = checks(
            ShouldNotCall,
            vec![CallCheck {
                json_ok: false,
                schema_ok: None,
                invalid: Some(InvalidReason::InvalidJson),
                ..cc("get_weather")
            }],
            &[],
        );
        // T6, T7 should_not_call, no call.
        let t6 = checks(ShouldNotCall, vec![], &[]);
        let t7 = checks(ShouldNotCall, vec![], &[]);
        // T8 ambiguous, two calls: get_weather violating its schema (0/1 required, 1 of
        // 1 value ungrounded) and an unknown tool; args 1/2.
        let mut t8 = checks(
            Ambiguous,
            vec![
                CallCheck {
                    schema_ok: Some(false),
                    schema_errors: vec!["/unit: bad".into()],
                    invalid: Some(InvalidReason::SchemaViolation),
                    required_present: 0,
                    required_total: 1,
                    missing_required: vec!["city".into()],
                    grounding_checked: 1,
                    ungrounded: vec![r#"unit = "k""#.into()],
                    ..cc("get_weather")
                },
                CallCheck {
                    known_tool: false,
                    schema_ok: None,
                    invalid: Some(InvalidReason::UnknownTool),
                    ..cc("lookup")
                },
            ],
            &["get_weather"],
        );
        (t8.args_matched, t8.args_expected) = (1, 2);
        vec![
            timed(
                scored("t1", Verdict::Pass, t1),
                100.0,
                (100, 10, false),
                0.001,
            ),
            timed(
                scored("t2", Verdict::Fail, t2),
                700.0,
                (200, 20, true),
                0.002,
            ),
            timed(
                scored("t3", Verdict::Fail, t3),
                300.0,
                (100, 5, false),
                0.001,
            ),
            timed(
                scored("t4", Verdict::Fail, t4),
                200.0,
                (100, 5, true),
                0.001,
            ),
            timed(
                scored("t5", Verdict::Fail, t5),
                500.0,
                (50, 30, false),
                0.0005,
            ),
            timed(
                scored("t6", Verdict::Pass, t6),
                400.0,
                (50, 5, false),
                0.0005,
            ),
            timed(
                scored("t7", Verdict::Pass, t7),
                600.0,
                (50, 5, false),
                0.0005,
            ),
            timed(
                scored("t8", Verdict::Fail, t8),
                800.0,
                (100, 20, false),
                0.001,
            ),
            // T9 errored: no response, no checks, no price.
            errored("t9", ShouldCall),
        ]
    }

    #[test]
    fn counts_accuracy_and_error_rate() {
        let m = Metrics::of(&sample());
        // 9 trials, 1 errored, 8 scored; T1, T6, T7 passed.
        assert_eq!((m.trials, m.scored, m.errors, m.passed), (9, 8, 1, 3));
        // accuracy = passed / scored = 3/8 (the error is not a failure).
        assert_rate(&m.accuracy, 3, 8);
        // error_rate = errors / trials = 1/9.
        assert_rate(&m.error_rate, 1, 9);
        // The Wilson interval of 3/8: z² = 3.84146, denominator 1 + z²/8 = 1.48018,
        // centre (0.375 + z²/16) / 1.48018 = 0.41555, half-width
        // 1.95996 × √(0.375 × 0.625 / 8 + z²/256) / 1.48018 = 0.27871 -> [0.13684, 0.69426].
        let (low, high) = (m.accuracy.low.unwrap(), m.accuracy.high.unwrap());
        assert!(
            (low - 0.13684).abs() < 1e-5 && (high - 0.69426).abs() < 1e-5,
            "{low} {high}"
        );
    }

    #[test]
    fn trigger_decision() {
        let t = Metrics::of(&sample()).trigger;
        // should_call: T1, T2 called (tp = 2), T3, T4 not (fn = 2); T9 errored, not counted.
        // should_not_call: T5 called (fp = 1), T6, T7 not (tn = 2). T8 is ambiguous: left out.
        assert_eq!((t.tp, t.fp, t.tn, t.fn_), (2, 1, 2, 2));
        // precision = tp / (tp + fp) = 2/3.
        assert_rate(&t.precision, 2, 3);
        // recall = tp / (tp + fn) = 2/4.
        assert_rate(&t.recall, 2, 4);
        // F1 = 2·(2/3)·(1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7.
        assert!(close(t.f1.unwrap(), 4.0 / 7.0), "{:?}", t.f1);
        // false_call_rate = fp / (fp + tn) = 1/3.
        assert_rate(&t.false_call_rate, 1, 3);
        // miss_rate = fn / (tp + fn) = 2/4.
        assert_rate(&t.miss_rate, 2, 4);
    }

    #[test]
    fn trigger_edge_cases() {
        // Only should_not_call trials, none called: precision and recall undefined, F1 too.
        let none = checks(CaseKind::ShouldNotCall, vec![], &[]);
        let m = Metrics::of(&[scored("n", Verdict::Pass, none)]);
        assert_eq!(m.trigger.precision.value, None);
        assert_eq!(m.trigger.recall.value, None);
        assert_eq!(m.trigger.f1, None);
        assert_rate(&m.trigger.false_call_rate, 0, 1);
        assert_eq!(m.trigger.miss_rate.value, None);
        // One should_call missed and one should_not_call called: p = 0/1, r = 0/1, F1 = 0.
        let missed = checks(CaseKind::ShouldCall, vec![], &["get_weather"]);
        let called = checks(CaseKind::ShouldNotCall, vec![cc("get_weather")], &[]);
        let m = Metrics::of(&[
            scored("a", Verdict::Fail, missed),
            scored("b", Verdict::Fail, called),
        ]);
        assert_eq!(m.trigger.f1, Some(0.0));
        // Ambiguous trials alone leave every trigger rate undefined.
        let amb = checks(
            CaseKind::Ambiguous,
            vec![cc("get_weather")],
            &["get_weather"],
        );
        let m = Metrics::of(&[scored("c", Verdict::Pass, amb)]);
        let t = &m.trigger;
        assert_eq!((t.tp, t.fp, t.tn, t.fn_), (0, 0, 0, 0));
        assert_eq!(t.miss_rate.value, None);
        assert_eq!(t.false_call_rate.value, None);
    }

    #[test]
    fn call_quality_metrics() {
        let m = Metrics::of(&sample());
        // tool_selection_accuracy: right_tools is set on should_call trials with a call:
        // T1 (true), T2 (false) -> 1/2.
        assert_rate(&m.tool_selection_accuracy, 1, 2);
        // param_completeness: calls to expected tools only (parsed, known):
        // T1 get_weather 2/2, T8 get_weather 0/1 -> 2/3. Excluded: T2's send_email (0/3,
        // not an expected tool; counting it would give 2/6), T5 (invalid JSON), T8's
        // unknown `lookup`.
        assert_rate(&m.param_completeness, 2, 3);
        // arg_match_rate: T1 2/2 + T8 1/2 -> 3/4.
        assert_rate(&m.arg_match_rate, 3, 4);
        // invalid_call_rate: calls T1 1 + T2 1 + T5 1 + T8 2 = 5; invalid: T5 JSON,
        // T8 schema, T8 unknown -> 3/5.
        assert_rate(&m.invalid_call_rate, 3, 5);
        assert_eq!(
            m.invalid_by_reason,
            InvalidBreakdown {
                invalid_json: 1,
                unknown_tool: 1,
                schema_violation: 1
            }
        );
        // ungrounded_rate: checked T1 2 + T2 1 + T8 1 = 4; ungrounded T2 1 + T8 1 = 2 -> 2/4.
        assert_rate(&m.ungrounded_rate, 2, 4);
        // Trials with an ungrounded value: T2, T8.
        assert_eq!(m.trials_with_ungrounded, 2);
    }

    #[test]
    fn tokens_cost_and_latency() {
        let m = Metrics::of(&sample());
        // input: 100 + 200 + 100 + 100 + 50 + 50 + 50 + 100 = 750 (T9 has no response);
        // output: 10 + 20 + 5 + 5 + 30 + 5 + 5 + 20 = 100; estimated: T2, T4.
        assert_eq!(
            m.tokens,
            Tokens {
                input: 750,
                output: 100,
                estimated_trials: 2,
                ..Tokens::default()
            }
        );
        // cost: 0.001 + 0.002 + 0.001 + 0.001 + 3 × 0.0005 + 0.001 = 0.0075; the errored
        // T9 has no price but is not scored, so the total is defined.
        assert!(close(m.cost_usd.unwrap(), 0.0075), "{:?}", m.cost_usd);
        // latency over the 8 scored trials, sorted 100..800:
        // p50 = rank ceil(0.5 × 8) = 4 -> 400; p95 = rank ceil(0.95 × 8) = ceil(7.6) = 8 -> 800.
        assert_eq!(m.latency.p50_ms, Some(400.0));
        assert_eq!(m.latency.p95_ms, Some(800.0));
        // No repeats: no consistency.
        assert_eq!(m.consistency, None);

        // One scored trial without a price makes the total unknown.
        let mut trials = sample();
        trials[3].cost_usd = None;
        assert_eq!(Metrics::of(&trials).cost_usd, None);
        // Errored trials only: no scored trial, no cost.
        assert_eq!(
            Metrics::of(&[errored("x", CaseKind::ShouldCall)]).cost_usd,
            None
        );
        // A negative or non-finite stored cost (an edited journal) is no price at all.
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let mut trials = sample();
            trials[3].cost_usd = Some(bad);
            assert_eq!(Metrics::of(&trials).cost_usd, None, "{bad}");
        }
    }

    #[test]
    fn token_sums_saturate_instead_of_wrapping() {
        // Counts read back from an edited journal are not re-checked here; two near the
        // top of u64 once wrapped to a small total.
        let t = |n: u64| {
            let c = checks(CaseKind::ShouldNotCall, vec![], &[]);
            timed(scored("a", Verdict::Pass, c), 1.0, (n, 7, false), 0.5)
        };
        let m = Metrics::of(&[t(u64::MAX - 1), t(5)]);
        assert_eq!(m.tokens.input, u64::MAX);
        assert_eq!(m.tokens.output, 14);
        // Three latencies 10, 20, 30: p50 = rank ceil(1.5) = 2 -> 20; p95 = rank 3 -> 30.
        let t: Vec<TrialRecord> = [30.0, 10.0, 20.0]
            .iter()
            .map(|l| {
                let c = checks(CaseKind::ShouldNotCall, vec![], &[]);
                timed(scored("l", Verdict::Pass, c), *l, (1, 1, false), 0.0)
            })
            .collect();
        let m = Metrics::of(&t);
        assert_eq!(
            (m.latency.p50_ms, m.latency.p95_ms),
            (Some(20.0), Some(30.0))
        );
    }

    #[test]
    fn loop_metrics_are_present_only_with_loop_trials() {
        // A single-turn set: no `loops`, and the key is left out of the JSON.
        let m = Metrics::of(&sample());
        assert_eq!(m.loops, None);
        assert!(serde_json::to_value(&m).unwrap().get("loops").is_none());
        // One loop trial among them: the block counts it alone, the rest counts it too.
        let mut trials = sample();
        let mut looped = trials[0].clone();
        looped.episode = Some(crate::score::record::EpisodeRecord {
            end_state: Vec::new(),
            rounds: vec![],
            stop: Some(crate::suite::trajectory::StopReason::Answered),
            checks: None,
        });
        trials.push(looped);
        let m = Metrics::of(&trials);
        let l = m.loops.as_ref().unwrap();
        assert_eq!((l.trials, l.scored), (1, 1));
        assert_eq!(l.stop.answered, 1);
        assert_eq!(m.trials, 10);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["loops"]["trials"], 1);
        let back: Metrics = serde_json::from_value(json).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn an_empty_set_defines_nothing_but_counts() {
        let m = Metrics::of(&[]);
        assert_eq!((m.trials, m.scored, m.errors, m.passed), (0, 0, 0, 0));
        for name in METRIC_NAMES {
            let v = m.value(name);
            match *name {
                "input_tokens" | "output_tokens" => assert_eq!(v, Some(0.0), "{name}"),
                _ => assert_eq!(v, None, "{name}"),
            }
        }
    }

    fn repeated(case: &str, variant: &str, repeat: u32, verdict: Verdict) -> TrialRecord {
        let mut t = match verdict {
            Verdict::Error => errored(case, CaseKind::ShouldCall),
            v => scored(
                case,
                v,
                checks(CaseKind::ShouldCall, vec![], &["get_weather"]),
            ),
        };
        t.variant = variant.into();
        t.repeat = repeat;
        t
    }

    #[test]
    fn pass_at_k_and_pass_hat_k_over_repeats() {
        use Verdict::{Error, Fail, Pass};
        // Case a: 3 of 3 passes; case b: 1 of 3.
        let mut trials = vec![
            repeated("a", "default", 0, Pass),
            repeated("a", "default", 1, Pass),
            repeated("a", "default", 2, Pass),
            repeated("b", "default", 0, Fail),
            repeated("b", "default", 1, Pass),
            repeated("b", "default", 2, Fail),
        ];
        let m = Metrics::of(&trials);
        let c = m.consistency.clone().unwrap();
        // k = 3 repeats, 2 cases.
        assert_eq!((c.k, c.cases), (3, 2));
        // pass@3 = mean(1 - C(0,3)/C(3,3), 1 - C(2,3)/C(3,3)) = (1 + 1) / 2 = 1.0.
        assert!(close(c.pass_at_k, 1.0), "{c:?}");
        // pass^3 = mean(C(3,3)/C(3,3), C(1,3)/C(3,3)) = (1 + 0) / 2 = 0.5.
        assert!(close(c.pass_hat_k, 0.5), "{c:?}");
        assert_eq!(m.value("pass_at_k"), Some(c.pass_at_k));
        assert_eq!(m.value("pass_hat_k"), Some(c.pass_hat_k));

        // A case with an errored repeat has only 2 scored of 3: left out.
        trials.extend([
            repeated("c", "default", 0, Pass),
            repeated("c", "default", 1, Error),
            repeated("c", "default", 2, Pass),
        ]);
        let c = Metrics::of(&trials).consistency.unwrap();
        assert_eq!(c.cases, 2);
        assert!(close(c.pass_hat_k, 0.5));

        // The same case id in another cell (variant) is another case: a in `vague` passes
        // 2 of 3 -> pass@3 = 1 (only 1 failure, fewer than k), pass^3 = C(2,3)/C(3,3) = 0.
        // Means over 3 cases: pass@3 = (1 + 1 + 1)/3 = 1, pass^3 = (1 + 0 + 0)/3 = 1/3.
        trials.extend([
            repeated("a", "vague", 0, Pass),
            repeated("a", "vague", 1, Fail),
            repeated("a", "vague", 2, Pass),
        ]);
        let c = Metrics::of(&trials).consistency.unwrap();
        assert_eq!(c.cases, 3);
        assert!(
            close(c.pass_at_k, 1.0) && close(c.pass_hat_k, 1.0 / 3.0),
            "{c:?}"
        );

        // k = 2: d passes 1 of 2 (pass@2 = 1 - C(1,2)/C(2,2) = 1, pass^2 = 0), e 0 of 2
        // (pass@2 = 1 - C(2,2)/C(2,2) = 0, pass^2 = 0): means 0.5 and 0.
        let c = Metrics::of(&[
            repeated("d", "default", 0, Pass),
            repeated("d", "default", 1, Fail),
            repeated("e", "default", 0, Fail),
            repeated("e", "default", 1, Fail),
        ])
        .consistency
        .unwrap();
        assert_eq!((c.k, c.cases), (2, 2));
        assert!(close(c.pass_at_k, 0.5) && close(c.pass_hat_k, 0.0), "{c:?}");
    }

    #[test]
    fn value_answers_every_metric_name() {
        let m = Metrics::of(&sample());
        // Hand values from the tests above.
        let expected: &[(&str, Option<f64>)] = &[
            ("accuracy", Some(3.0 / 8.0)),
            ("error_rate", Some(1.0 / 9.0)),
            ("trigger_precision", Some(2.0 / 3.0)),
            ("trigger_recall", Some(0.5)),
            ("trigger_f1", Some(4.0 / 7.0)),
            ("false_call_rate", Some(1.0 / 3.0)),
            ("miss_rate", Some(0.5)),
            ("tool_selection_accuracy", Some(0.5)),
            ("param_completeness", Some(2.0 / 3.0)),
            ("arg_match_rate", Some(0.75)),
            ("invalid_call_rate", Some(0.6)),
            ("ungrounded_rate", Some(0.5)),
            // No repeats in the sample.
            ("pass_at_k", None),
            ("pass_hat_k", None),
            ("latency_p50_ms", Some(400.0)),
            ("latency_p95_ms", Some(800.0)),
            ("cost_usd", Some(0.0075)),
            ("input_tokens", Some(750.0)),
            ("output_tokens", Some(100.0)),
        ];
        let names: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, METRIC_NAMES, "the table covers every metric name");
        for (name, want) in expected {
            let got = m.value(name);
            match (got, want) {
                (Some(g), Some(w)) => assert!(close(g, *w), "{name}: {g} != {w}"),
                _ => assert_eq!(got, *want, "{name}"),
            }
        }
        assert_eq!(m.value("accuracy_typo"), None);
    }

    #[test]
    fn metrics_of_scored_responses() {
        // End to end: score four responses with the real scorer, then aggregate.
        let suite = crate::suite::load_str(
            r#"
tools:
  - name: get_weather
    description: Weather.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - {id: w, kind: should_call, prompt: 北京天气, expect: {calls: [{tool: get_weather, args: {city: 北京}}]}}
  - {id: n, kind: should_not_call, prompt: 你好}
"#,
            Path::new("t.yaml"),
        )
        .unwrap();
        let call = |city: &str| Response {
            tool_calls: vec![ToolCall {
                id: None,
                name: "get_weather".into(),
                arguments: serde_json::json!({ "city": city }).to_string(),
            }],
            ..Response::default()
        };
        let text = Response {
            text: Some("你好！".into()),
            ..Response::default()
        };
        let runs = [
            (0, call("北京")),
            (0, call("上海")),
            (1, text),
            (1, call("北京")),
        ];
        let trials: Vec<TrialRecord> = runs
            .iter()
            .map(|(i, r)| {
                let case = &suite.cases[*i];
                let (c, reasons) = CaseScorer::new(&suite, case).score(&ToolChoice::Auto, r);
                let mut t = scored(
                    &case.id,
                    if reasons.is_empty() {
                        Verdict::Pass
                    } else {
                        Verdict::Fail
                    },
                    c,
                );
                t.reasons = reasons;
                t
            })
            .collect();
        let m = Metrics::of(&trials);
        // Passes: the right call, the text answer -> 2/4.
        assert_rate(&m.accuracy, 2, 4);
        // tp = 2 (both w calls), fp = 1 (n called), tn = 1, fn = 0.
        let t = &m.trigger;
        assert_eq!((t.tp, t.fp, t.tn, t.fn_), (2, 1, 1, 0));
        // Both w trials called get_weather: 2/2.
        assert_rate(&m.tool_selection_accuracy, 2, 2);
        // city matched once of twice.
        assert_rate(&m.arg_match_rate, 1, 2);
        // Required: the two w calls 1/1 each (n's call is to no expected tool) -> 2/2.
        assert_rate(&m.param_completeness, 2, 2);
        // Grounding: 北京 (grounded), 上海 (not), 北京 on 你好 (not) -> 2/3.
        assert_rate(&m.ungrounded_rate, 2, 3);
        assert_eq!(m.trials_with_ungrounded, 2);
        assert_rate(&m.invalid_call_rate, 0, 3);
    }

    #[test]
    fn detail_tokens_are_summed_apart_and_left_out_when_zero() {
        let detailed = |case: &str, cached, write, reasoning| {
            let mut t = timed(
                scored(
                    case,
                    Verdict::Pass,
                    checks(CaseKind::ShouldNotCall, vec![], &[]),
                ),
                100.0,
                (1000, 100, false),
                0.001,
            );
            let u = t.response.as_mut().unwrap().usage.as_mut().unwrap();
            u.cached_input_tokens = cached;
            u.cache_write_tokens = write;
            u.reasoning_tokens = reasoning;
            t
        };
        let m = Metrics::of(&[detailed("a", 800, 100, 0), detailed("b", 900, 0, 40)]);
        assert_eq!(
            m.tokens,
            Tokens {
                input: 2000,
                output: 200,
                estimated_trials: 0,
                cached_input: 1700,
                cache_write: 100,
                reasoning: 40,
            }
        );
        assert!(m.tokens.has_details());
        let json = serde_json::to_value(&m.tokens).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"input": 2000, "output": 200, "estimated_trials": 0, "cached_input": 1700, "cache_write": 100, "reasoning": 40})
        );
        // Without details the tokens serialise as before.
        let m = Metrics::of(&[detailed("a", 0, 0, 0)]);
        assert!(!m.tokens.has_details());
        assert_eq!(
            serde_json::to_value(&m.tokens).unwrap(),
            serde_json::json!({"input": 1000, "output": 100, "estimated_trials": 0})
        );
    }
}
