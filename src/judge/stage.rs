//! The judge stage: a played trial in, a [`Judgement`] out.
//!
//! Every trial is judged here, by pure functions, one rule each: [`judge_turn`] for a
//! trial of one round, [`judge_played_episode`] for a tool loop, [`judge_loop_rubric`] for
//! the judge model's verdict on a loop's final answer. The runner plays the trial (and
//! asks a judge model, which is I/O), hands what happened to these functions, and builds
//! the trial's record from the judgement they return; the metrics read the records.
//!
//! The case judges behind them are the call checks ([`super::calls`], with a benchmark
//! profile's [`super::profile::CaseJudge`] deciding in its place when the suite declares
//! one), the episode judge ([`super::judge_episode`]: trajectory, `never`, `final`,
//! `stop`, behaviours) and the judge model's verdicts ([`super::model`]).

use super::calls::{CaseScorer, Reason, TrialChecks};
use super::model::JudgeVerdicts;
use super::{EpisodeChecks, FinalAnswer, JudgeInput, judge_episode};
use crate::chat::{Message, ToolDefinition};
use crate::episode::{EpisodeError, EpisodeOutcome, tool_traits};
use crate::provider::{Response, ToolChoice};
use crate::suite::trajectory::LoopExpectation;
use crate::suite::{Case, Expectation, Suite};

/// What the judge stage decided about one trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Judged: it passed when `reasons` is empty.
    Scored {
        /// Why it failed (none when it passed).
        reasons: Vec<Reason>,
        /// The call checks of its first round.
        checks: Option<TrialChecks>,
        /// The episode judge's facts, for a tool loop.
        episode: Option<EpisodeChecks>,
    },
    /// No verdict, and not the model's failure: the provider, the tool host or the judge
    /// model failed. `checks` keeps what was checked before the failure, where a record
    /// keeps it.
    Failed {
        /// Why (`provider_error`, `tool_error`, `judge_error`).
        reason: Reason,
        /// The call checks made before the failure, if any are kept.
        checks: Option<TrialChecks>,
        /// The episode judge's facts made before the failure, if any.
        episode: Option<EpisodeChecks>,
    },
}

impl Judgement {
    /// Whether the trial passed (false for a failure without a verdict).
    pub fn passed(&self) -> bool {
        matches!(self, Judgement::Scored { reasons, .. } if reasons.is_empty())
    }
}

/// A trial of one round: the call checks on `response` under `variant` and `mode` (the
/// trial offered `distractors` beside the case's tools, none outside `distractors:`),
/// with the judge model's verdicts when it was asked (`model`: its verdicts, or the
/// reason it gave none, which makes the trial a failure without a verdict: a verdict the
/// judge did not give is never assumed).
pub fn judge_turn(
    scorer: &CaseScorer<'_>,
    variant: &str,
    distractors: &[&ToolDefinition],
    mode: &ToolChoice,
    response: &Response,
    model: Result<Option<&JudgeVerdicts>, Reason>,
) -> Judgement {
    let verdicts = match model {
        Ok(v) => v,
        Err(reason) => {
            return Judgement::Failed {
                reason,
                checks: None,
                episode: None,
            };
        }
    };
    let (checks, reasons) = scorer.score_offered(variant, distractors, mode, response, verdicts);
    Judgement::Scored {
        reasons,
        checks: Some(checks),
        episode: None,
    }
}

/// What judging a tool loop needs besides the episode.
pub struct LoopTrial<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// The case.
    pub case: &'a Case,
    /// The case's call checks (first round, and every call of later rounds).
    pub scorer: &'a CaseScorer<'a>,
    /// The trial's description variant.
    pub variant: &'a str,
    /// The trial's tool_choice mode.
    pub mode: &'a ToolChoice,
    /// The distractors the trial offered beside the case's tools (`distractors:`;
    /// empty elsewhere).
    pub distractors: &'a [&'a ToolDefinition],
}

/// A tool loop. Every part must hold:
/// - the first round, checked as a trial of one round is, on `expect.calls`; a case with
///   loop expectations that gives no `calls` needs some call anywhere in the episode
///   instead (a careful model may ask the user before its first call);
/// - every later round's calls, checked per call as the first round's are (not JSON,
///   unknown tool, schema violation), the reason naming its round;
/// - the episode judge ([`judge_episode`]).
///
/// A declared profile that judges episodes ([`super::profile::CaseJudge::episode_reasons`])
/// gives the verdict in place of all of these.
///
/// An episode ended by the provider or the tool host has no verdict (infrastructure,
/// never the model's), whatever its rounds before showed. So has one that would pass
/// although some call got no answer ([`unanswered`]): a pass there rests on an answer
/// the suite never gave. A failure stands: what the model did wrong is its own.
pub fn judge_played_episode(t: &LoopTrial<'_>, outcome: &EpisodeOutcome) -> Judgement {
    let (checks, mut reasons) = first_round(t, outcome);
    reasons.extend(later_rounds(t, outcome));
    match outcome.transcript() {
        Ok(transcript) => {
            let none = LoopExpectation::default();
            let traits = tool_traits(t.suite, t.case);
            let input = JudgeInput {
                expect: t.case.loop_expect.as_ref().unwrap_or(&none),
                tools: &traits,
                norm: t.suite.norm,
            };
            let (r, c) = judge_episode(&input, &transcript);
            reasons.extend(r);
            // A declared profile that judges whole episodes decides the verdict; the
            // checks above still feed the metrics.
            if let Some(r) = t.scorer.episode_reasons(outcome) {
                reasons = r;
            }
            if reasons.is_empty()
                && let Some(reason) = unanswered(outcome)
            {
                return Judgement::Failed {
                    reason,
                    checks,
                    episode: Some(c),
                };
            }
            Judgement::Scored {
                reasons,
                checks,
                episode: Some(c),
            }
        }
        Err(e) => {
            let code = match e {
                EpisodeError::Provider { .. } => "provider_error",
                EpisodeError::Host { .. } => "tool_error",
            };
            Judgement::Failed {
                reason: Reason::new(code, e.to_string()),
                checks: None,
                episode: None,
            }
        }
    }
}

/// The first call of the episode that no one answered: the harness's `no_mock` error (no
/// mock rule matched, and no MCP server stands behind the mocks for that tool), as a
/// `tool_error` reason naming its round, tool and arguments. The model read an error
/// the tool never gave, so the tool never ran; `None` when every call was answered.
pub fn unanswered(outcome: &EpisodeOutcome) -> Option<Reason> {
    outcome.rounds.iter().enumerate().find_map(|(i, round)| {
        let calls = &round.response.tool_calls;
        calls.iter().zip(&round.outcomes).find_map(|(call, out)| {
            if out.error_kind != Some(crate::tools::ToolErrorKind::NoMock) {
                return None;
            }
            let said = serde_json::from_str::<serde_json::Value>(&out.content)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| out.content.clone());
            Some(Reason::new(
                "tool_error",
                format!(
                    "round {}: the call of `{}` with arguments {} got no answer ({said}): the tool never ran and the model read the harness's `no_mock` error, so a pass would rest on an answer the suite never gave; give `{}` a `result` or `error` mock rule that matches these arguments (or one without `when`)",
                    i + 1,
                    call.name,
                    if call.arguments.trim().is_empty() { "{}" } else { call.arguments.trim() },
                    call.name
                ),
            ))
        })
    })
}

/// The first round's checks and reasons (see [`judge_played_episode`]).
fn first_round(t: &LoopTrial<'_>, outcome: &EpisodeOutcome) -> (Option<TrialChecks>, Vec<Reason>) {
    let Some(first) = outcome.rounds.first() else {
        return (None, Vec::new());
    };
    let (checks, reasons) =
        t.scorer
            .score_offered(t.variant, t.distractors, t.mode, &first.response, None);
    // A case with loop expectations that gives no `calls` expects some call in the
    // episode, not in its first round: a careful model may first ask the user (a risky
    // first step) and call after the answer.
    let episode_wide = t.case.loop_expect.is_some()
        && matches!(
            t.case.effective(t.mode).1,
            Expectation::Calls(e) if e.calls.is_empty()
        );
    if !episode_wide {
        return (Some(checks), reasons);
    }
    let mut reasons = t
        .scorer
        .invalid_calls(t.variant, t.distractors, &first.response.tool_calls);
    if outcome
        .rounds
        .iter()
        .all(|r| r.response.tool_calls.is_empty())
    {
        reasons.push(Reason::new(
            "missed_call",
            format!(
                "expected a call to any tool in the episode; none was made in {} round(s)",
                outcome.rounds.len()
            ),
        ));
    }
    (Some(checks), reasons)
}

/// The invalid calls of every round after the first, each reason naming its round.
fn later_rounds(t: &LoopTrial<'_>, outcome: &EpisodeOutcome) -> Vec<Reason> {
    let mut reasons = Vec::new();
    for (i, round) in outcome.rounds.iter().enumerate().skip(1) {
        for mut r in t
            .scorer
            .invalid_calls(t.variant, t.distractors, &round.response.tool_calls)
        {
            r.message = format!("round {}: {}", i + 1, r.message);
            reasons.push(r);
        }
    }
    reasons
}

/// The final answer of a loop's conversation, with the index of its message: the last
/// assistant turn, when it made no call ([`FinalAnswer::Text`], or
/// [`FinalAnswer::Empty`] when it said nothing); [`FinalAnswer::Missing`] when the
/// episode ended without one (the rubric then fails without asking the judge).
pub fn final_answer(messages: &[Message]) -> (Option<usize>, FinalAnswer<'_>) {
    let last = messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }));
    let answer = match last.map(|i| &messages[i]) {
        Some(Message::Assistant {
            content,
            tool_calls,
            ..
        }) if tool_calls.is_empty() => FinalAnswer::of(content.as_deref()),
        _ => FinalAnswer::Missing,
    };
    (last, answer)
}

/// What the judge model said of a loop's final answer against the case's rubric.
pub enum RubricAnswer<'a> {
    /// The episode ended without a final answer to check.
    NoAnswer,
    /// The final answer is empty: nothing to check.
    EmptyAnswer,
    /// The judge gave no verdict (the reason is `judge_error`).
    NoVerdict(Reason),
    /// The judge's verdict and rationale, and the judge's target for the message.
    Verdict {
        /// Whether the answer meets the rubric.
        pass: bool,
        /// The judge's rationale.
        why: String,
        /// The judge target, as written.
        judge: &'a str,
    },
    /// The judge said nothing of the rubric.
    Silent,
}

/// Apply the rubric's outcome to a loop's `judgement`: a missing final answer or a
/// failed rubric fails the trial (`rubric_failed`); a judge without a verdict makes it a
/// failure without a verdict (`judge_error`), keeping its checks. A trial that is already
/// a failure without a verdict is left alone.
pub fn judge_loop_rubric(judgement: Judgement, answer: RubricAnswer<'_>) -> Judgement {
    let Judgement::Scored {
        mut reasons,
        checks,
        episode,
    } = judgement
    else {
        return judgement;
    };
    match answer {
        RubricAnswer::NoAnswer => reasons.push(Reason::new(
            "rubric_failed",
            "the episode ended without a final answer to check against the rubric",
        )),
        RubricAnswer::EmptyAnswer => reasons.push(Reason::new(
            "rubric_failed",
            "the final answer is empty (the last round made no call and said nothing): there \
             is nothing to check against the rubric",
        )),
        RubricAnswer::NoVerdict(reason) => {
            return Judgement::Failed {
                reason,
                checks,
                episode,
            };
        }
        RubricAnswer::Verdict {
            pass: false,
            why,
            judge,
        } => reasons.push(Reason::new(
            "rubric_failed",
            format!("the judge `{judge}` says the final answer does not meet the rubric: {why}"),
        )),
        RubricAnswer::Verdict { pass: true, .. } | RubricAnswer::Silent => {}
    }
    Judgement::Scored {
        reasons,
        checks,
        episode,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::provider::ToolCall;

    const SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters:
      type: object
      properties: {city: {type: string}}
      required: [city]
cases:
  - id: weather
    kind: should_call
    prompt: 北京今天天气怎么样？
    expect: {calls: [{tool: get_weather, args: {city: 北京}}]}
"#;

    fn suite() -> Suite {
        crate::suite::load_str(SUITE, Path::new("t.yaml")).unwrap()
    }

    fn called(city: &str) -> Response {
        Response {
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: "get_weather".into(),
                arguments: format!(r#"{{"city":"{city}"}}"#),
            }],
            ..Response::default()
        }
    }

    fn codes(j: &Judgement) -> Vec<&str> {
        match j {
            Judgement::Scored { reasons, .. } => reasons.iter().map(|r| r.code.as_str()).collect(),
            Judgement::Failed { reason, .. } => vec![reason.code.as_str()],
        }
    }

    #[test]
    fn a_turn_is_judged_by_the_call_checks() {
        let s = suite();
        let scorer = CaseScorer::new(&s, &s.cases[0]);
        let mode = ToolChoice::Auto;
        let right = judge_turn(&scorer, "default", &[], &mode, &called("北京"), Ok(None));
        assert!(right.passed(), "{right:?}");
        let wrong = judge_turn(&scorer, "default", &[], &mode, &called("上海"), Ok(None));
        assert!(!wrong.passed());
        assert_eq!(codes(&wrong), vec!["args_mismatch"]);
        // The same facts the call checks give on their own.
        let Judgement::Scored { checks, .. } = &wrong else {
            panic!("{wrong:?}")
        };
        assert_eq!(
            checks.as_ref(),
            Some(&scorer.score_variant("default", &mode, &called("上海")).0)
        );
    }

    #[test]
    fn a_judge_model_without_a_verdict_leaves_the_turn_without_one() {
        let s = suite();
        let scorer = CaseScorer::new(&s, &s.cases[0]);
        let reason = Reason::new("judge_error", "no judge verdict on the rubric: timeout");
        let j = judge_turn(
            &scorer,
            "default",
            &[],
            &ToolChoice::Auto,
            &called("北京"),
            Err(reason.clone()),
        );
        assert_eq!(
            j,
            Judgement::Failed {
                reason,
                checks: None,
                episode: None
            }
        );
        assert!(!j.passed());
    }

    fn scored(reasons: Vec<Reason>) -> Judgement {
        Judgement::Scored {
            reasons,
            checks: None,
            episode: Some(EpisodeChecks {
                rounds: 2,
                ..EpisodeChecks::default()
            }),
        }
    }

    #[test]
    fn a_loop_rubric_fails_adds_to_or_leaves_the_judgement() {
        let no_answer = judge_loop_rubric(scored(vec![]), RubricAnswer::NoAnswer);
        assert_eq!(codes(&no_answer), vec!["rubric_failed"]);
        let failed = judge_loop_rubric(
            scored(vec![Reason::new("missing_step", "x")]),
            RubricAnswer::Verdict {
                pass: false,
                why: "it invents an order number".into(),
                judge: "scripted:judge",
            },
        );
        assert_eq!(codes(&failed), vec!["missing_step", "rubric_failed"]);
        let Judgement::Scored { reasons, .. } = &failed else {
            panic!("{failed:?}")
        };
        assert!(
            reasons[1].message.contains("`scripted:judge`")
                && reasons[1].message.contains("invents an order number"),
            "{}",
            reasons[1].message
        );
        for said in [
            RubricAnswer::Silent,
            RubricAnswer::Verdict {
                pass: true,
                why: String::new(),
                judge: "j",
            },
        ] {
            assert_eq!(judge_loop_rubric(scored(vec![]), said), scored(vec![]));
        }
    }

    #[test]
    fn a_loop_judge_without_a_verdict_keeps_what_was_checked() {
        let reason = Reason::new("judge_error", "no judge verdict on the rubric: 500");
        let j = judge_loop_rubric(scored(vec![]), RubricAnswer::NoVerdict(reason.clone()));
        let Judgement::Failed {
            reason: r, episode, ..
        } = j
        else {
            panic!("{j:?}")
        };
        assert_eq!(r, reason);
        assert_eq!(episode.map(|e| e.rounds), Some(2));
        // A trial already without a verdict (the provider failed) stays as it was.
        let failed = Judgement::Failed {
            reason: Reason::new("provider_error", "round 1: 503"),
            checks: None,
            episode: None,
        };
        assert_eq!(
            judge_loop_rubric(failed.clone(), RubricAnswer::NoAnswer),
            failed
        );
    }

    #[test]
    fn an_empty_final_answer_fails_the_rubric_as_empty_not_as_missing() {
        let scored = Judgement::Scored {
            reasons: Vec::new(),
            checks: None,
            episode: None,
        };
        let Judgement::Scored { reasons, .. } =
            judge_loop_rubric(scored.clone(), RubricAnswer::EmptyAnswer)
        else {
            panic!("still scored")
        };
        assert_eq!(codes_of(&reasons), vec!["rubric_failed"]);
        assert_eq!(
            reasons[0].message,
            "the final answer is empty (the last round made no call and said nothing): there is \
             nothing to check against the rubric"
        );
        let Judgement::Scored { reasons, .. } = judge_loop_rubric(scored, RubricAnswer::NoAnswer)
        else {
            panic!("still scored")
        };
        assert_eq!(
            reasons[0].message,
            "the episode ended without a final answer to check against the rubric"
        );
    }

    fn codes_of(reasons: &[Reason]) -> Vec<&str> {
        reasons.iter().map(|r| r.code.as_str()).collect()
    }

    #[test]
    fn the_final_answer_is_the_last_assistant_turn_with_text_and_no_call() {
        let assistant = |text: Option<&str>, calls: usize| Message::Assistant {
            content: text.map(str::to_string),
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: Some(format!("c{i}")),
                    name: "t".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            state: None,
        };
        let user = Message::User {
            content: "hi".into(),
        };
        let m = vec![user.clone(), assistant(Some("done"), 0)];
        assert_eq!(final_answer(&m), (Some(1), FinalAnswer::Text("done")));
        let m = vec![user.clone(), assistant(Some("calling"), 1)];
        assert_eq!(final_answer(&m), (Some(1), FinalAnswer::Missing));
        // An empty answer is an answer that said nothing, not a turn that made calls.
        for text in [Some("  "), Some(""), None] {
            let m = vec![user.clone(), assistant(text, 0)];
            assert_eq!(final_answer(&m), (Some(1), FinalAnswer::Empty), "{text:?}");
        }
        assert_eq!(final_answer(&[user]), (None, FinalAnswer::Missing));
    }
}
