//! Loop metrics computed by hand on small sets of trial records.

use super::*;
use crate::episode::RoundRecord;
use crate::judge::{EpisodeChecks, ErrorFact, StepFacts};
use crate::provider::{Response, ToolCall, ToolChoice, Usage};
use crate::score::record::EpisodeRecord;
use crate::suite::CaseKind;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[track_caller]
fn assert_rate(r: &Rate, num: u64, den: u64) {
    assert_eq!((r.num, r.den), (num, den), "{r:?}");
    if den == 0 {
        assert_eq!(r.value, None, "{r:?}");
    } else {
        assert!(close(r.value.unwrap(), num as f64 / den as f64), "{r:?}");
    }
}

/// One round: `calls` calls to `t`, then `input` tokens in, `latency` and `tool_ms`.
fn round(calls: usize, input: u64, latency: f64, tool_ms: f64) -> RoundRecord {
    RoundRecord {
        sent: 1,
        user: None,
        response: Response {
            text: (calls == 0).then(|| "done".to_string()),
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: Some(format!("c{i}")),
                    name: "t".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            usage: Some(Usage {
                input_tokens: input,
                output_tokens: 5,
                estimated: false,
                ..Default::default()
            }),
            latency_ms: latency,
            ..Response::default()
        },
        outcomes: vec![],
        tool_ms,
    }
}

fn error(kind: &str, injected: bool, recovered: bool) -> ErrorFact {
    ErrorFact {
        tool: "t".into(),
        kind: kind.into(),
        injected,
        recovered,
    }
}

fn trial(
    case: &str,
    verdict: Verdict,
    rounds: Vec<RoundRecord>,
    stop: Option<StopReason>,
    checks: Option<EpisodeChecks>,
) -> TrialRecord {
    TrialRecord {
        judge: Vec::new(),
        case_id: case.into(),
        kind: CaseKind::ShouldCall,
        tags: vec![],
        target: "scripted:x".into(),
        variant: "default".into(),
        tool_choice: ToolChoice::Auto,
        repeat: 0,
        stream: false,
        messages: vec![],
        response: rounds.first().map(|r| r.response.clone()),
        checks: None,
        verdict,
        reasons: vec![],
        cost_usd: None,
        distractors: None,
        episode: Some(EpisodeRecord {
            end_state: Vec::new(),
            rounds,
            stop,
            checks,
        }),
    }
}

fn single_turn() -> TrialRecord {
    let mut t = trial(
        "plain",
        Verdict::Pass,
        vec![round(1, 7, 9.0, 0.0)],
        None,
        None,
    );
    t.episode = None;
    t
}

/// Three scored loop trials, one errored loop trial and a single-turn trial.
pub(crate) fn sample() -> Vec<TrialRecord> {
    let a = trial(
        "a",
        Verdict::Pass,
        vec![
            round(1, 100, 200.0, 10.0),
            round(1, 150, 300.0, 30.0),
            round(0, 220, 100.0, 0.0),
        ],
        Some(StopReason::Answered),
        Some(EpisodeChecks {
            rounds: 3,
            tool_calls: 2,
            steps: Some(StepFacts {
                steps: 2,
                matched: 2,
                data_flow_checked: 1,
                data_flow_ok: 1,
            }),
            errors: vec![error("rate_limit", true, true)],
            duplicate_side_effects: 0,
            grounded: Some(true),
            lines: Vec::new(),
        }),
    );
    let b = trial(
        "b",
        Verdict::Fail,
        vec![round(2, 120, 250.0, 0.0), round(2, 200, 250.0, 0.0)],
        Some(StopReason::MaxToolCalls),
        Some(EpisodeChecks {
            rounds: 2,
            tool_calls: 4,
            steps: Some(StepFacts {
                steps: 2,
                matched: 1,
                data_flow_checked: 1,
                data_flow_ok: 0,
            }),
            errors: vec![
                error("not_found", false, false),
                error("rate_limit", true, false),
            ],
            duplicate_side_effects: 2,
            grounded: None,
            lines: Vec::new(),
        }),
    );
    let c = trial(
        "c",
        Verdict::Fail,
        vec![round(0, 80, 150.0, 0.0)],
        Some(StopReason::Answered),
        Some(EpisodeChecks {
            rounds: 1,
            grounded: Some(false),
            ..EpisodeChecks::default()
        }),
    );
    // An infrastructure failure in round 2: no verdict, nothing of it counts.
    let d = trial(
        "d",
        Verdict::Error,
        vec![round(3, 999, 500.0, 70.0)],
        None,
        None,
    );
    vec![a, b, c, d, single_turn()]
}

#[test]
fn every_loop_metric_of_a_small_set_by_hand() {
    let m = LoopMetrics::of(&sample()).unwrap();
    // Four loop trials (the single-turn one is not), one errored.
    assert_eq!((m.trials, m.scored, m.errors, m.passed), (4, 3, 1, 1));
    assert_rate(&m.task_success, 1, 3);
    // Rounds 3, 2, 1: mean 2, p50 = rank ceil(1.5) = 2 of [1, 2, 3] -> 2, p95 = rank 3.
    assert_eq!(
        m.rounds,
        PerTask {
            mean: Some(2.0),
            p50: Some(2.0),
            p95: Some(3.0),
            max: Some(3)
        }
    );
    // Calls 1+1+0 = 2, 2+2 = 4, 0: mean 2, sorted [0, 2, 4].
    assert_eq!(
        m.tool_calls,
        PerTask {
            mean: Some(2.0),
            p50: Some(2.0),
            p95: Some(4.0),
            max: Some(4)
        }
    );
    assert_eq!(
        m.stop,
        StopCounts {
            answered: 2,
            max_tool_calls: 1,
            ..StopCounts::default()
        }
    );
    // rate_limit: injected twice, recovered once; not_found: once, not injected, not
    // recovered. Together 1 of 3.
    assert_rate(&m.recovery, 1, 3);
    let kinds: Vec<&str> = m.recovery_by_kind.keys().map(String::as_str).collect();
    assert_eq!(kinds, ["not_found", "rate_limit"]);
    let rl = &m.recovery_by_kind["rate_limit"];
    assert_rate(&rl.all, 1, 2);
    assert_rate(&rl.injected, 1, 2);
    assert_rate(&rl.not_injected, 0, 0);
    let nf = &m.recovery_by_kind["not_found"];
    assert_rate(&nf.all, 0, 1);
    assert_rate(&nf.injected, 0, 0);
    assert_rate(&nf.not_injected, 0, 1);
    // One of three judged trials had duplicates (two of them).
    assert_rate(&m.duplicate_side_effect_rate, 1, 3);
    assert_eq!(m.duplicate_side_effects, 2);
    // Data flows: a 1 of 1, b 0 of 1.
    assert_rate(&m.data_flow_accuracy, 1, 2);
    // Grounding checked in a (grounded) and c (not).
    assert_rate(&m.grounded_answer_rate, 1, 2);
    // Round 1: 100, 120, 80 -> 100; round 2: 150, 200 -> 175; round 3: 220.
    assert_eq!(
        m.input_tokens_per_round,
        [
            RoundTokens {
                round: 1,
                trials: 3,
                mean: 100.0
            },
            RoundTokens {
                round: 2,
                trials: 2,
                mean: 175.0
            },
            RoundTokens {
                round: 3,
                trials: 1,
                mean: 220.0
            },
        ]
    );
    // (100 + 150 + 220 + 120 + 200 + 80) / 6 rounds = 870 / 6.
    assert!(close(m.input_tokens_per_round_mean.unwrap(), 145.0));
    // Model 200+300+100+250+250+150 = 1250 ms, tools 10+30 = 40 ms.
    assert!(close(m.time.model_ms, 1250.0) && close(m.time.tool_ms, 40.0));
    assert!(close(m.time.tool_share.unwrap(), 40.0 / 1290.0));
    // No repeats: no pass@k.
    assert!(m.pass_k.is_empty());
}

#[test]
fn no_loop_trials_give_no_loop_metrics() {
    assert_eq!(LoopMetrics::of(&[]), None);
    assert_eq!(LoopMetrics::of(&[single_turn(), single_turn()]), None);
}

#[test]
fn only_errored_loop_trials_define_nothing_but_counts() {
    let trials: Vec<TrialRecord> = sample()
        .into_iter()
        .map(|mut t| {
            t.verdict = Verdict::Error;
            t
        })
        .collect();
    let m = LoopMetrics::of(&trials).unwrap();
    assert_eq!((m.trials, m.scored, m.errors, m.passed), (4, 0, 4, 0));
    assert_rate(&m.task_success, 0, 0);
    assert_eq!(m.rounds, PerTask::default());
    assert_eq!(m.tool_calls, PerTask::default());
    assert_eq!(m.stop, StopCounts::default());
    assert_rate(&m.recovery, 0, 0);
    assert!(m.recovery_by_kind.is_empty());
    assert_rate(&m.duplicate_side_effect_rate, 0, 0);
    assert_rate(&m.data_flow_accuracy, 0, 0);
    assert_rate(&m.grounded_answer_rate, 0, 0);
    assert!(m.input_tokens_per_round.is_empty());
    assert_eq!(m.input_tokens_per_round_mean, None);
    assert_eq!(m.time, LoopTime::default());
    assert!(m.pass_k.is_empty());
}

#[test]
fn rounds_without_usage_and_impossible_times_are_left_out() {
    let mut r2 = round(0, 0, f64::NAN, -5.0);
    r2.response.usage = None;
    let t = trial(
        "a",
        Verdict::Pass,
        vec![round(1, 40, 100.0, f64::INFINITY), r2],
        Some(StopReason::Answered),
        Some(EpisodeChecks::default()),
    );
    let m = LoopMetrics::of(&[t]).unwrap();
    // Round 2 has no usage: the series has round 1 only, and the mean is over 1 round.
    assert_eq!(
        m.input_tokens_per_round,
        [RoundTokens {
            round: 1,
            trials: 1,
            mean: 40.0
        }]
    );
    assert_eq!(m.input_tokens_per_round_mean, Some(40.0));
    // NaN, negative and infinite times (an edited journal) do not enter the sums.
    assert_eq!(
        m.time,
        LoopTime {
            model_ms: 100.0,
            tool_ms: 0.0,
            tool_share: Some(0.0)
        }
    );
    // No round of a gap: round 2 alone has a usage in a second trial.
    let mut r1 = round(1, 0, 1.0, 0.0);
    r1.response.usage = None;
    let gap = trial(
        "b",
        Verdict::Pass,
        vec![r1, round(0, 60, 1.0, 0.0)],
        Some(StopReason::Answered),
        None,
    );
    let m = LoopMetrics::of(&[gap]).unwrap();
    assert_eq!(
        m.input_tokens_per_round,
        [RoundTokens {
            round: 2,
            trials: 1,
            mean: 60.0
        }]
    );
    // Not judged: no denominator for duplicates.
    assert_rate(&m.duplicate_side_effect_rate, 0, 0);
}

fn repeat(case: &str, r: u32, verdict: Verdict) -> TrialRecord {
    let mut t = trial(
        case,
        verdict,
        vec![round(0, 10, 1.0, 0.0)],
        (verdict != Verdict::Error).then_some(StopReason::Answered),
        None,
    );
    t.repeat = r;
    t
}

#[test]
fn pass_at_k_and_pass_hat_k_for_every_k_up_to_the_repeats() {
    use Verdict::{Error, Fail, Pass};
    let trials = vec![
        // a: 2 of 3; b: 1 of 3; c: 2 of 2 scored (its repeat 1 errored).
        repeat("a", 0, Pass),
        repeat("a", 1, Pass),
        repeat("a", 2, Fail),
        repeat("b", 0, Pass),
        repeat("b", 1, Fail),
        repeat("b", 2, Fail),
        repeat("c", 0, Pass),
        repeat("c", 1, Error),
        repeat("c", 2, Pass),
        // A single-turn trial of another case is not a loop case.
        single_turn(),
    ];
    let m = LoopMetrics::of(&trials).unwrap();
    let ks: Vec<(u32, u64)> = m.pass_k.iter().map(|p| (p.k, p.cases)).collect();
    // c has n = 2 < 3: left out for k = 3.
    assert_eq!(ks, [(1, 3), (2, 3), (3, 2)]);
    let want = [
        // k = 1: pass@1 = pass^1 = c/n: (2/3 + 1/3 + 1) / 3 = 2/3.
        (2.0 / 3.0, 2.0 / 3.0),
        // k = 2: pass@2 = 1 - C(n-c,2)/C(n,2): a 1 - 0/3 = 1, b 1 - 1/3, c 1 - 0/1 = 1
        // -> 8/9; pass^2 = C(c,2)/C(n,2): a 1/3, b 0, c 1/1 -> 4/9.
        (8.0 / 9.0, 4.0 / 9.0),
        // k = 3 over a and b: pass@3 = 1 - C(1,3) = 1 and 1 - C(2,3) = 1; pass^3 =
        // C(2,3) = 0 and C(1,3) = 0.
        (1.0, 0.0),
    ];
    for (p, (at, hat)) in m.pass_k.iter().zip(want) {
        assert!(
            close(p.pass_at_k.unwrap(), at) && close(p.pass_hat_k.unwrap(), hat),
            "{p:?}"
        );
    }
    // Only a case with fewer scored repeats than k: that k has no case, so no value.
    let m = LoopMetrics::of(&trials[6..9]).unwrap();
    assert_eq!(m.pass_k.len(), 3);
    assert_eq!(
        m.pass_k[2],
        PassK {
            k: 3,
            cases: 0,
            pass_at_k: None,
            pass_hat_k: None
        }
    );
    assert!(close(m.pass_k[1].pass_hat_k.unwrap(), 1.0));
    // The same case id in another variant is another case.
    let mut other = repeat("a", 1, Fail);
    other.variant = "vague".into();
    let m = LoopMetrics::of(&[repeat("a", 0, Pass), other]).unwrap();
    assert_eq!(m.pass_k[0].cases, 2);
    assert_eq!(m.pass_k[1].cases, 0);
    // A repeat index no run has (an edited journal) does not size the list of k.
    let m = LoopMetrics::of(&[repeat("a", 0, Pass), repeat("a", u32::MAX, Pass)]).unwrap();
    assert!(m.pass_k.is_empty());
    assert_eq!(m.scored, 2);
}

#[test]
fn stop_counts_are_named_in_limit_order() {
    let s = StopCounts {
        answered: 4,
        max_rounds: 3,
        max_tool_calls: 2,
        repeated_call: 1,
    };
    assert_eq!(
        s.named(),
        [
            ("answered", 4),
            ("max_rounds", 3),
            ("max_tool_calls", 2),
            ("repeated_call", 1)
        ]
    );
}
