//! Checking a run's metrics against the suite's thresholds (the exit code's input). Which
//! metrics and bounds a threshold may name is decided in [`crate::util::metric_names`].

use serde::Serialize;

use super::metrics::Metrics;
use crate::suite::Threshold;

/// One threshold checked on one scope.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ThresholdResult {
    /// The metric.
    pub metric: String,
    /// `overall`, or the cell (`target × variant × tool_choice`).
    pub scope: String,
    /// The measured value (`None`: not defined for this scope, e.g. no calls made).
    pub value: Option<f64>,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// True when the bound holds. An undefined value fails: a gate that can not be
    /// measured must not pass silently.
    pub ok: bool,
}

/// A cell's identity and metrics, as thresholds see them.
pub struct CellView<'a> {
    /// Target as written.
    pub target: &'a str,
    /// Variant.
    pub variant: &'a str,
    /// tool_choice as text.
    pub tool_choice: String,
    /// Metrics.
    pub metrics: &'a Metrics,
    /// Token size of the cell's variant's tool definitions.
    pub tool_definition_tokens: u64,
    /// The cell's answers were streamed (its scope then says so).
    pub stream: bool,
}

/// The value of threshold metric `name` in a set of trials with these metrics and
/// tool-definition size.
fn value_of(name: &str, metrics: &Metrics, tool_definition_tokens: Option<u64>) -> Option<f64> {
    match name {
        "tool_definition_tokens" => tool_definition_tokens.map(|t| t as f64),
        // Rates of the loop trials: undefined without any, so such a gate never passes
        // on a run that had nothing to measure.
        "task_success"
        | "recovery"
        | "duplicate_side_effect_rate"
        | "data_flow_accuracy"
        | "grounded_answer_rate" => metrics.loops.as_ref()?.value(name),
        // Behaviour rates: undefined without a trial expecting a behaviour (or, for a
        // hallucination rate, without one expecting its behaviour), so they fail there.
        "macro_f1" | "tool_hallucination_rate" | "answer_hallucination_rate" => {
            metrics.behaviour.as_ref()?.value(name)
        }
        // Timing of streamed answers: undefined in a set without any, so such a gate
        // fails on a run that did not stream.
        "first_token_p50_ms"
        | "first_token_p95_ms"
        | "first_tool_byte_p50_ms"
        | "first_tool_byte_p95_ms" => metrics.stream.as_ref()?.value(name),
        _ => metrics.value(name),
    }
}

/// Check every threshold: overall ones against `overall`, filtered ones against each
/// matching cell.
pub fn check(
    thresholds: &[Threshold],
    overall: &Metrics,
    cells: &[CellView<'_>],
) -> Vec<ThresholdResult> {
    let mut out = Vec::new();
    // Overall, the tool definitions are as large as the largest variant's.
    let overall_tokens = cells.iter().map(|c| c.tool_definition_tokens).max();
    for t in thresholds {
        let mut judge = |scope: String, m: &Metrics, tokens: Option<u64>| {
            let value = value_of(&t.metric, m, tokens);
            let ok = value
                .is_some_and(|v| t.min.is_none_or(|lo| v >= lo) && t.max.is_none_or(|hi| v <= hi));
            out.push(ThresholdResult {
                metric: t.metric.clone(),
                scope,
                value,
                min: t.min,
                max: t.max,
                ok,
            });
        };
        if !t.is_per_cell() {
            judge("overall".into(), overall, overall_tokens);
            continue;
        }
        let mut matched = false;
        for c in cells {
            let fits = t.variant.as_deref().is_none_or(|v| v == c.variant)
                && t.target.as_deref().is_none_or(|v| v == c.target)
                && t.tool_choice
                    .as_ref()
                    .is_none_or(|m| m.to_string() == c.tool_choice);
            if fits {
                matched = true;
                judge(
                    format!(
                        "{} × {} × {}{}",
                        c.target,
                        c.variant,
                        c.tool_choice,
                        if c.stream { " × stream" } else { "" }
                    ),
                    c.metrics,
                    Some(c.tool_definition_tokens),
                );
            }
        }
        if !matched {
            out.push(ThresholdResult {
                metric: t.metric.clone(),
                scope: "no cell of this run matches the threshold's filter".into(),
                value: None,
                min: t.min,
                max: t.max,
                ok: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::calls::TrialChecks;
    use crate::provider::{Response, ToolChoice};
    use crate::score::record::{TrialRecord, Verdict};
    use crate::suite::CaseKind;

    fn trial(variant: &str, mode: ToolChoice, pass: bool) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: "c".into(),
            kind: CaseKind::ShouldNotCall,
            tags: vec![],
            target: "scripted:oracle".into(),
            variant: variant.into(),
            tool_choice: mode,
            repeat: 0,
            stream: false,
            messages: vec![],
            response: Some(Response::default()),
            checks: Some(TrialChecks {
                kind: CaseKind::ShouldNotCall,
                called: !pass,
                calls: vec![],
                expected_tools: vec![],
                right_tools: None,
                args_matched: 0,
                args_expected: 0,
                behaviour: None,
            }),
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    fn gate(metric: &str, min: Option<f64>, max: Option<f64>) -> Threshold {
        Threshold {
            metric: metric.into(),
            min,
            max,
            variant: None,
            tool_choice: None,
            target: None,
        }
    }

    /// Two cells: `clear × auto` passes 2 of 2, `vague × required` 1 of 2; overall 3/4.
    fn fixture() -> (Metrics, Metrics, Metrics) {
        let a = [
            trial("clear", ToolChoice::Auto, true),
            trial("clear", ToolChoice::Auto, true),
        ];
        let b = [
            trial("vague", ToolChoice::Required, true),
            trial("vague", ToolChoice::Required, false),
        ];
        (
            Metrics::of(a.iter().chain(&b)),
            Metrics::of(&a),
            Metrics::of(&b),
        )
    }

    fn views<'a>(a: &'a Metrics, b: &'a Metrics) -> Vec<CellView<'a>> {
        vec![
            CellView {
                target: "scripted:oracle",
                variant: "clear",
                tool_choice: "auto".into(),
                metrics: a,
                tool_definition_tokens: 120,
                stream: false,
            },
            CellView {
                target: "scripted:oracle",
                variant: "vague",
                tool_choice: "required".into(),
                metrics: b,
                tool_definition_tokens: 80,
                stream: false,
            },
        ]
    }

    fn summary(r: &[ThresholdResult]) -> Vec<(&str, Option<f64>, bool)> {
        r.iter()
            .map(|r| (r.scope.as_str(), r.value, r.ok))
            .collect()
    }

    #[test]
    fn overall_min_and_max() {
        let (all, a, b) = fixture();
        let cells = views(&a, &b);
        let r = check(
            &[
                gate("accuracy", Some(0.7), None),
                gate("accuracy", Some(0.8), None),
                // Bounds are inclusive.
                gate("accuracy", Some(0.75), Some(0.75)),
                gate("false_call_rate", None, Some(0.2)),
                gate("false_call_rate", None, Some(0.25)),
                gate("accuracy", Some(0.5), Some(0.7)),
            ],
            &all,
            &cells,
        );
        // accuracy overall = 3/4; false_call_rate = 1/4.
        assert_eq!(
            summary(&r),
            vec![
                ("overall", Some(0.75), true),
                ("overall", Some(0.75), false),
                ("overall", Some(0.75), true),
                ("overall", Some(0.25), false),
                ("overall", Some(0.25), true),
                ("overall", Some(0.75), false),
            ]
        );
        assert_eq!(r[1].metric, "accuracy");
        assert_eq!((r[1].min, r[1].max), (Some(0.8), None));
        assert_eq!((r[3].min, r[3].max), (None, Some(0.2)));
    }

    #[test]
    fn per_cell_filters() {
        let (all, a, b) = fixture();
        let cells = views(&a, &b);
        let by_variant = Threshold {
            variant: Some("vague".into()),
            ..gate("accuracy", Some(0.6), None)
        };
        let by_mode = Threshold {
            tool_choice: Some(ToolChoice::Auto),
            ..gate("accuracy", Some(0.6), None)
        };
        let by_target = Threshold {
            target: Some("scripted:oracle".into()),
            ..gate("accuracy", Some(0.6), None)
        };
        let r = check(&[by_variant], &all, &cells);
        assert_eq!(
            summary(&r),
            vec![("scripted:oracle × vague × required", Some(0.5), false)]
        );
        let r = check(&[by_mode], &all, &cells);
        assert_eq!(
            summary(&r),
            vec![("scripted:oracle × clear × auto", Some(1.0), true)]
        );
        // A filter every cell fits: one result per cell, not one overall.
        let r = check(&[by_target], &all, &cells);
        assert_eq!(
            summary(&r),
            vec![
                ("scripted:oracle × clear × auto", Some(1.0), true),
                ("scripted:oracle × vague × required", Some(0.5), false),
            ]
        );
        // Filters combine: both must fit.
        let both = Threshold {
            variant: Some("vague".into()),
            tool_choice: Some(ToolChoice::Required),
            ..gate("accuracy", None, Some(0.5))
        };
        let r = check(&[both], &all, &cells);
        assert_eq!(
            summary(&r),
            vec![("scripted:oracle × vague × required", Some(0.5), true)]
        );
    }

    #[test]
    fn an_undefined_value_fails() {
        let (all, a, b) = fixture();
        let cells = views(&a, &b);
        // No should_call trial and no call in cell a: trigger recall is undefined, and so
        // is pass@k without repeats. A gate that can not be measured does not pass, even
        // with a bound any value would meet.
        let r = check(
            &[
                gate("trigger_recall", Some(0.0), None),
                gate("pass_at_k", None, Some(1.0)),
                Threshold {
                    variant: Some("clear".into()),
                    ..gate("trigger_precision", Some(0.0), None)
                },
            ],
            &all,
            &cells,
        );
        assert_eq!(
            summary(&r),
            vec![
                ("overall", None, false),
                ("overall", None, false),
                ("scripted:oracle × clear × auto", None, false),
            ]
        );
    }

    #[test]
    fn a_filter_matching_no_cell_fails() {
        let (all, a, b) = fixture();
        let cells = views(&a, &b);
        let gates = [
            Threshold {
                variant: Some("clear".into()),
                tool_choice: Some(ToolChoice::Required),
                ..gate("accuracy", Some(0.0), None)
            },
            Threshold {
                target: Some("openai:gpt-4o".into()),
                ..gate("accuracy", Some(0.0), None)
            },
            Threshold {
                tool_choice: Some(ToolChoice::Function("get_weather".into())),
                ..gate("accuracy", Some(0.0), None)
            },
        ];
        let r = check(&gates, &all, &cells);
        assert_eq!(r.len(), 3);
        for x in &r {
            assert_eq!(
                x.scope,
                "no cell of this run matches the threshold's filter"
            );
            assert_eq!(x.value, None);
            assert!(!x.ok);
            assert_eq!(x.min, Some(0.0));
        }
        // And with no cells at all.
        let r = check(&gates[..1], &all, &[]);
        assert_eq!(summary(&r).len(), 1);
        assert!(!r[0].ok);
    }

    #[test]
    fn tool_definition_tokens_per_cell_and_overall() {
        let (all, a, b) = fixture();
        let cells = views(&a, &b);
        let by_variant = Threshold {
            variant: Some("clear".into()),
            ..gate("tool_definition_tokens", None, Some(100.0))
        };
        // Cells: clear 120 tokens, vague 80; overall the largest, 120.
        let r = check(
            &[
                gate("tool_definition_tokens", None, Some(100.0)),
                by_variant,
            ],
            &all,
            &cells,
        );
        assert_eq!(
            summary(&r),
            vec![
                ("overall", Some(120.0), false),
                ("scripted:oracle × clear × auto", Some(120.0), false),
            ]
        );
        let r = check(
            &[gate("tool_definition_tokens", Some(80.0), Some(120.0))],
            &all,
            &cells,
        );
        assert_eq!(summary(&r), vec![("overall", Some(120.0), true)]);
        // No cell: nothing measured, the gate fails.
        let r = check(
            &[gate("tool_definition_tokens", None, Some(1e9))],
            &all,
            &[],
        );
        assert_eq!(summary(&r), vec![("overall", None, false)]);
    }

    #[test]
    fn function_mode_filter_matches_its_cell() {
        let m = Metrics::of(&[trial("default", ToolChoice::Function("f".into()), true)]);
        let cells = [CellView {
            target: "scripted:oracle",
            variant: "default",
            tool_choice: ToolChoice::Function("f".into()).to_string(),
            metrics: &m,
            tool_definition_tokens: 0,
            stream: false,
        }];
        let t = Threshold {
            tool_choice: Some(ToolChoice::Function("f".into())),
            ..gate("accuracy", Some(1.0), None)
        };
        let r = check(&[t], &m, &cells);
        assert_eq!(
            summary(&r),
            vec![("scripted:oracle × default × function:f", Some(1.0), true)]
        );
    }

    #[test]
    fn loop_rates_gate_the_loop_trials_and_fail_without_any() {
        use crate::judge::EpisodeChecks;
        use crate::score::record::EpisodeRecord;
        use crate::suite::trajectory::StopReason;
        let looped = |pass: bool| TrialRecord {
            distractors: None,
            episode: Some(EpisodeRecord {
                end_state: Vec::new(),
                rounds: vec![],
                stop: Some(StopReason::Answered),
                checks: Some(EpisodeChecks::default()),
            }),
            ..trial("default", ToolChoice::Auto, pass)
        };
        // Three loop trials, two passed; a single-turn trial that passed does not count.
        let m = Metrics::of(&[
            looped(true),
            looped(true),
            looped(false),
            trial("default", ToolChoice::Auto, true),
        ]);
        let r = check(
            &[
                gate("task_success", Some(0.6), None),
                gate("task_success", Some(0.7), None),
            ],
            &m,
            &[],
        );
        let two_thirds = Some(2.0 / 3.0);
        assert_eq!(
            summary(&r),
            vec![
                ("overall", two_thirds, true),
                ("overall", two_thirds, false)
            ]
        );
        // No loop trial: nothing measured, so every loop gate fails.
        let single = Metrics::of(&[trial("default", ToolChoice::Auto, true)]);
        for name in [
            "task_success",
            "recovery",
            "duplicate_side_effect_rate",
            "data_flow_accuracy",
            "grounded_answer_rate",
        ] {
            let r = check(&[gate(name, Some(0.0), None)], &single, &[]);
            assert_eq!(summary(&r), vec![("overall", None, false)], "{name}");
        }
    }

    #[test]
    fn behaviour_rates_gate_the_trials_expecting_a_behaviour_and_fail_without_any() {
        // The sample of score::behaviour: macro-F1 53/84 ≈ 0.631, tool and answer
        // hallucination 1/4 each.
        let m = Metrics::of(&crate::score::behaviour::tests::sample());
        let r = check(
            &[
                gate("macro_f1", Some(0.6), None),
                gate("macro_f1", Some(0.65), None),
                gate("tool_hallucination_rate", None, Some(0.25)),
                gate("answer_hallucination_rate", None, Some(0.2)),
            ],
            &m,
            &[],
        );
        let macro_f1 = 53.0 / 84.0;
        let got = summary(&r);
        assert_eq!(got[0].0, "overall");
        assert!((got[0].1.unwrap() - macro_f1).abs() < 1e-12);
        assert_eq!(
            got.iter().map(|x| x.2).collect::<Vec<_>>(),
            [true, false, true, false]
        );
        assert_eq!((got[2].1, got[3].1), (Some(0.25), Some(0.25)));
        // No trial expecting a behaviour: nothing measured, so every behaviour gate
        // fails, whatever its bound.
        let none = Metrics::of(&[trial("default", ToolChoice::Auto, true)]);
        for name in [
            "macro_f1",
            "tool_hallucination_rate",
            "answer_hallucination_rate",
        ] {
            let r = check(&[gate(name, Some(0.0), Some(1.0))], &none, &[]);
            assert_eq!(summary(&r), vec![("overall", None, false)], "{name}");
        }
        // Trials expecting only tool calls: macro-F1 is defined, the two hallucination
        // rates are not (0/0), so their gates fail rather than pass on nothing.
        use crate::behaviour::Behaviour::ToolCall;
        let calls = Metrics::of(&[crate::score::behaviour::tests::record(
            "c",
            0,
            Some(ToolCall),
            ToolCall,
        )]);
        let r = check(
            &[
                gate("macro_f1", Some(1.0), None),
                gate("tool_hallucination_rate", None, Some(1.0)),
            ],
            &calls,
            &[],
        );
        assert_eq!(
            summary(&r),
            vec![("overall", Some(1.0), true), ("overall", None, false)]
        );
    }
}
