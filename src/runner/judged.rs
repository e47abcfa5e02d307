//! The judge model in a run: after a trial's answer, ask the suite's judge (`judge:` or
//! `--judge`) which behaviour a text answer shows and whether the final answer meets
//! the case's `final.rubric`, and turn its answers into verdicts for the scorer.
//!
//! The judge's requests go through the run's providers (built by the same code as the
//! models', so they are recorded into and replayed from the same cassette, and share a
//! run target's rate limits when the judge is one). A judge request is one user message
//! holding the rendered prompt, with no tools and tool_choice `none`; its cassette key is
//! the usual hash of (judge target, request), which differs from any trial's because its
//! conversation is the prompt (which quotes the trial's conversation and answer), and
//! its entry is stored under the trial's case, variant, mode and repeat.
//!
//! Every request is stored with the trial ([`JudgeCall`]). A judge that fails (a
//! provider error, an answer that holds no verdict) makes the trial an error with
//! reason `judge_error`: a verdict the judge did not give is never assumed.

use std::sync::Arc;
use std::time::Instant;

use super::breaker::{self, Breakers};
use crate::chat::{Message, ToolDefinition};
use crate::judge::FinalAnswer;
use crate::judge::calls::Reason;
use crate::judge::model::prompt::{PromptInput, Prompts, conversation_text};
use crate::judge::model::verdict::{parse_behaviour, parse_rubric};
use crate::judge::model::{JudgeCall, JudgeQuestion, JudgeVerdicts};
use crate::judge::stage::{RubricAnswer, final_answer};
use crate::provider::{Provider, Request, Response, Target, ToolChoice, TrialKey};
use crate::score::prices::Price;
use crate::score::tokens;
use crate::suite::Case;

/// A run's judge model: its target, the provider that answers for it, its prompts and
/// its price.
pub struct Judge {
    /// The judge target.
    pub target: Target,
    provider: Arc<dyn Provider>,
    prompts: Prompts,
    price: Option<Price>,
}

impl Judge {
    /// A judge asking `provider` (the run's provider for `target`) with `prompts`;
    /// `price` charges its tokens.
    pub fn new(
        target: Target,
        provider: Arc<dyn Provider>,
        prompts: Prompts,
        price: Option<Price>,
    ) -> Judge {
        Judge {
            target,
            provider,
            prompts,
            price,
        }
    }

    /// Where the judge's answers come from (for run.json).
    pub fn source(&self) -> String {
        self.provider.source()
    }

    /// Ask one question about the trial `trial`; the call records the verdict, or why
    /// there is none.
    pub async fn ask(
        &self,
        input: &PromptInput,
        trial: &TrialKey,
        breakers: &Breakers,
    ) -> JudgeCall {
        let spec = &self.target.spec;
        let mut call = JudgeCall {
            question: input.question,
            target: spec.clone(),
            behaviour: None,
            pass: None,
            rationale: String::new(),
            error: None,
            usage: None,
            cost_usd: None,
            latency_ms: 0.0,
        };
        // A judge stopped for failures that repeat (a refused key) is not asked again.
        if let Some(why) = breakers.stopped(spec) {
            call.error = Some(format!("not asked: {why}"));
            return call;
        }
        let prompt = match self.prompts.render(input) {
            Ok(p) => p,
            Err(e) => {
                call.error = Some(e.to_string());
                return call;
            }
        };
        let request = Request {
            messages: vec![Message::User { content: prompt }],
            tools: Arc::new(Vec::new()),
            tool_choice: ToolChoice::None,
        };
        let key = TrialKey {
            target: spec.clone(),
            ..trial.clone()
        };
        let started = Instant::now();
        let result = self.provider.complete(&request, &key).await;
        let failure = result
            .as_ref()
            .err()
            .and_then(|e| breaker::classify(e, self.provider.endpoint().as_ref()));
        breakers.record(spec, failure.as_ref());
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                call.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                call.error = Some(format!("the judge `{spec}` failed: {e}"));
                return call;
            }
        };
        call.latency_ms = response.latency_ms;
        let usage = response
            .usage
            .unwrap_or_else(|| tokens::estimate_usage(&request, &response, 0));
        call.usage = Some(usage);
        call.cost_usd = self.price.map(|p| p.cost_of(&usage));
        read_verdict(&mut call, &response);
        call
    }
}

/// Fill `call`'s verdict from the judge's `response`, or say why there is none.
fn read_verdict(call: &mut JudgeCall, response: &Response) {
    let text = response.text.as_deref().unwrap_or_default();
    if text.trim().is_empty() {
        call.error = Some(if response.tool_calls.is_empty() {
            format!("the judge `{}` answered with no text", call.target)
        } else {
            format!(
                "the judge `{}` called a tool instead of answering",
                call.target
            )
        });
        return;
    }
    let read = match call.question {
        JudgeQuestion::Behaviour => parse_behaviour(text).map(|(b, why)| {
            call.behaviour = Some(b);
            why
        }),
        JudgeQuestion::Rubric => parse_rubric(text).map(|(pass, why)| {
            call.pass = Some(pass);
            why
        }),
    };
    match read {
        Ok(why) => call.rationale = why,
        Err(e) => call.error = Some(format!("the judge `{}` gave no verdict: {e}", call.target)),
    }
}

/// What the judge said about one trial: every request, the verdicts, and the error
/// that makes the trial an error (the first judge call that failed).
#[derive(Debug, Default)]
pub struct Judged {
    /// The requests, in the order asked.
    pub calls: Vec<JudgeCall>,
    /// The verdicts for the scorer (`None` when nothing was asked).
    pub verdicts: Option<JudgeVerdicts>,
    /// Why the trial is an error (`judge_error`).
    pub error: Option<Reason>,
}

impl Judged {
    fn take(&mut self, call: JudgeCall) {
        if let Some(e) = &call.error
            && self.error.is_none()
        {
            let question = match call.question {
                JudgeQuestion::Behaviour => "the behaviour of the answer",
                JudgeQuestion::Rubric => "the rubric",
            };
            self.error = Some(Reason::new(
                "judge_error",
                format!("no judge verdict on {question}: {e}"),
            ));
        }
        let v = self.verdicts.get_or_insert_with(JudgeVerdicts::default);
        if let Some(b) = call.behaviour {
            v.behaviour = Some((b, call.rationale.clone()));
        }
        if let Some(p) = call.pass {
            v.rubric = Some((p, call.rationale.clone()));
        }
        self.calls.push(call);
    }
}

/// What a single-turn trial's answer needs from the judge.
pub struct SingleTurn<'a> {
    /// The case.
    pub case: &'a Case,
    /// Whether the judge reads the behaviour of this answer: a text answer whose
    /// verdict depends on it, or that the suite records (a text answer to a
    /// `should_call` case of a suite naming behaviours, for the confusion matrix); see
    /// [`crate::judge::CaseScorer::wants_judged_behaviour`].
    pub names_behaviour: bool,
    /// The request the model answered.
    pub request: &'a Request,
    /// Its answer.
    pub response: &'a Response,
    /// The trial.
    pub key: &'a TrialKey,
}

impl<'a> SingleTurn<'a> {
    /// The facts of trial `key` of `case` (scored by `scorer`) under `mode`, answered
    /// `response` to `request`.
    pub fn new(
        case: &'a Case,
        scorer: &crate::judge::CaseScorer<'_>,
        mode: &ToolChoice,
        request: &'a Request,
        response: &'a Response,
        key: &'a TrialKey,
    ) -> SingleTurn<'a> {
        SingleTurn {
            case,
            names_behaviour: scorer.wants_judged_behaviour(mode, response),
            request,
            response,
            key,
        }
    }
}

/// Ask the judge what a single-turn answer needs: the behaviour of a text answer (no
/// call) of a case that names one, and the case's rubric. An answer with no text
/// fails a rubric without a request (there is nothing to judge).
pub async fn single_turn(judge: Option<&Judge>, t: &SingleTurn<'_>, breakers: &Breakers) -> Judged {
    let mut judged = Judged::default();
    let Some(judge) = judge else {
        return judged;
    };
    let answer = t.response.text.as_deref().unwrap_or_default();
    if t.names_behaviour && t.response.tool_calls.is_empty() {
        let input = PromptInput::new(
            JudgeQuestion::Behaviour,
            &t.request.tools,
            &t.request.messages,
            answer,
        );
        judged.take(judge.ask(&input, t.key, breakers).await);
    }
    if let Some(rubric) = &t.case.rubric {
        if answer.trim().is_empty() {
            judged.verdicts.get_or_insert_with(Default::default).rubric = Some((
                false,
                "the answer has no text to check against the rubric".into(),
            ));
        } else {
            let mut input = PromptInput::new(
                JudgeQuestion::Rubric,
                &t.request.tools,
                &t.request.messages,
                answer,
            );
            input.rubric = rubric.text.clone();
            judged.take(judge.ask(&input, t.key, breakers).await);
        }
    }
    judged
}

/// What a loop trial's rubric needs besides the record.
pub struct LoopRubric<'a> {
    /// The case.
    pub case: &'a Case,
    /// The tools the episode offered.
    pub tools: &'a [ToolDefinition],
    /// How many messages of the record's conversation were the case's own (the rest
    /// the episode added).
    pub context: usize,
    /// The trial.
    pub key: &'a TrialKey,
}

/// Ask the judge whether a loop's final answer meets the case's rubric; `messages` is the
/// episode's whole conversation. Returns the requests made and what the judge said, for
/// [`crate::judge::stage::judge_loop_rubric`] to apply; `None` when there is nothing to
/// ask (no judge, or no rubric).
pub async fn ask_rubric<'j>(
    judge: Option<&'j Judge>,
    l: &LoopRubric<'_>,
    messages: &[Message],
    breakers: &Breakers,
) -> Option<(Vec<JudgeCall>, RubricAnswer<'j>)> {
    let (Some(judge), Some(rubric)) = (judge, &l.case.rubric) else {
        return None;
    };
    let (last, answer) = match final_answer(messages) {
        (last, FinalAnswer::Text(t)) => (last, t.to_string()),
        (_, FinalAnswer::Empty) => return Some((Vec::new(), RubricAnswer::EmptyAnswer)),
        (_, FinalAnswer::Missing) => return Some((Vec::new(), RubricAnswer::NoAnswer)),
    };
    let context = l.context.min(messages.len());
    let end = last.unwrap_or(context).max(context);
    let mut input = PromptInput::new(
        JudgeQuestion::Rubric,
        l.tools,
        &messages[..context],
        &answer,
    );
    input.rubric = rubric.text.clone();
    input.transcript = conversation_text(&messages[context..end]);
    let mut judged = Judged::default();
    judged.take(judge.ask(&input, l.key, breakers).await);
    let said = if let Some(reason) = judged.error {
        RubricAnswer::NoVerdict(reason)
    } else if let Some((pass, why)) = judged.verdicts.and_then(|v| v.rubric) {
        RubricAnswer::Verdict {
            pass,
            why,
            judge: &judge.target.spec,
        }
    } else {
        RubricAnswer::Silent
    };
    Some((judged.calls, said))
}
