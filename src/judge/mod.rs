//! Verdicts. [`calls`] checks the calls of a turn against a case's expectation (every
//! trial's first round); [`judge_episode`] judges whole episodes (a trial that runs as a
//! loop of rounds); [`model`] asks a judge model; [`profile`] holds benchmark judges.
//!
//! [`judge_episode`] applies a case's loop expectations
//! ([`crate::suite::trajectory::LoopExpectation`]) to the transcript of one episode
//! ([`Episode`]) and returns the reasons it failed, in the shape today's verdicts use
//! ([`Reason`]: a stable code and a message), with the facts behind them for metrics.
//!
//! Reason codes: `missing_step`, `wrong_order`, `data_flow_broken` and `extra_calls`
//! (the trajectory, see [`steps`]); `forbidden_call` (`never`);
//! `unconfirmed_risky_call`, `duplicate_side_effect`, `no_recovery` (always checked;
//! see [`behaviour`]); `success_claimed_after_error` (`final.no_success_after_error`);
//! `ungrounded_answer` (`final.grounded`, see [`ground`]); `text_mismatch`
//! (`final.contains` / `final.regex`); `loop_stopped` (the stop reason differs from
//! `stop`, which defaults to `answered`).

pub mod behaviour;
pub mod call_check;
pub mod calls;
pub mod claims;
pub mod ground;
pub mod model;
mod observed;
pub mod profile;
pub mod sentences;
pub mod stage;
pub mod steps;

pub use crate::episode::view::{
    ApprovalAnswer, CallOutcome, CallRecord, Episode, FinalAnswer, Placed, Round, StopReason,
    ToolTraits,
};
pub use behaviour::ErrorFact;
pub use calls::{CaseScorer, Reason, TrialChecks};
pub use stage::Judgement;
pub use steps::StepFacts;

use crate::suite::Normalizer;
use crate::suite::trajectory::LoopExpectation;

/// The facts an episode's verdict rests on (what loop metrics aggregate).
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EpisodeChecks {
    /// Rounds played.
    pub rounds: u32,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Trajectory facts, when the case has a trajectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<StepFacts>,
    /// Each error the model received, in call order, and whether it recovered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorFact>,
    /// Repeated executions of non-idempotent calls.
    #[serde(default)]
    pub duplicate_side_effects: u32,
    /// Whether the final answer is grounded (`None`: not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounded: Option<bool>,
    /// The case's checks as sentences, each with whether it held and the rounds its
    /// failure points at (what the report's round view lists; see [`sentences`]).
    /// Absent from records written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<sentences::CheckLine>,
}

/// What the judge needs besides the episode.
pub struct JudgeInput<'a> {
    /// The case's loop expectations.
    pub expect: &'a LoopExpectation,
    /// Traits of the tools offered (tools not listed are plain).
    pub tools: &'a [ToolTraits],
    /// The suite's normalisation, for `final.contains` and `final.regex`.
    pub norm: Normalizer,
}

/// Judge `episode`: the reasons it failed (none when it passed) and the facts.
pub fn judge_episode(input: &JudgeInput<'_>, episode: &Episode) -> (Vec<Reason>, EpisodeChecks) {
    let expect = input.expect;
    let calls = episode.calls();
    let mut reasons = Vec::new();
    let mut checks = EpisodeChecks {
        rounds: episode.rounds.len() as u32,
        tool_calls: calls.len() as u32,
        ..EpisodeChecks::default()
    };
    if let Some(t) = &expect.trajectory {
        let (r, facts) = steps::judge_steps(t, &calls);
        reasons.extend(r);
        checks.steps = Some(facts);
    }
    reasons.extend(behaviour::forbidden(&expect.never, &calls));
    reasons.extend(behaviour::unconfirmed_risky(episode, input.tools, &calls));
    let (dups, count) = behaviour::duplicates(input.tools, &calls);
    reasons.extend(dups);
    checks.duplicate_side_effects = count;
    let (unrecovered, errors) = behaviour::recovery(episode, &calls);
    reasons.extend(unrecovered);
    checks.errors = errors;
    // The final answer's checks and the stop are about the last round: the reasons from
    // here on that name no round of their own are pinned there (below).
    let final_from = reasons.len();
    if let Some(f) = &expect.final_answer {
        let answer = episode.final_answer();
        if f.no_success_after_error
            && let Some(r) = behaviour::success_after_error(episode, &calls)
        {
            reasons.push(r);
        }
        if f.grounded {
            // An empty answer states no fact, so none of its facts is ungrounded; an
            // episode without a final answer (a limit stopped it) is not grounded.
            let stated = match answer {
                FinalAnswer::Text(t) => Some(ground::Sources::of(episode).ungrounded(t)),
                FinalAnswer::Empty => Some(Vec::new()),
                FinalAnswer::Missing => None,
            };
            checks.grounded = Some(stated.as_ref().is_some_and(Vec::is_empty));
            match stated {
                Some(s) if !s.is_empty() => reasons.push(Reason::new(
                    "ungrounded_answer",
                    format!(
                        "the final answer states {} found in no tool result, prompt or user turn",
                        s.iter()
                            .take(10)
                            .map(|x| format!("`{}`", steps::clip(x)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
                _ => {}
            }
        }
        if !f.text.is_empty() {
            match answer {
                FinalAnswer::Text(t) => reasons.extend(text_checks(&f.text, t, input.norm)),
                // One reason that says why, rather than each check failing on nothing.
                FinalAnswer::Empty if !text_checks(&f.text, "", input.norm).is_empty() => {
                    reasons.push(Reason::new(
                        "text_mismatch",
                        "the final answer is empty (the last round made no call and said \
                         nothing), so it holds none of the `final` text checks",
                    ));
                }
                FinalAnswer::Empty => {}
                FinalAnswer::Missing => reasons.push(Reason::new(
                    "text_mismatch",
                    "there is no final answer to check (the last round made calls)",
                )),
            }
        }
    }
    let want = expect.stop.unwrap_or(StopReason::Answered);
    if episode.stop != want {
        reasons.push(Reason::new(
            "loop_stopped",
            if episode.stop == StopReason::Answered {
                format!(
                    "the model answered after {} round(s), but the loop was expected to stop at `{}`",
                    episode.rounds.len(),
                    want.as_str()
                )
            } else {
                format!(
                    "the loop stopped at the `{}` limit after {} round(s) and {} call(s) (expected: `{}`)",
                    episode.stop.as_str(),
                    episode.rounds.len(),
                    calls.len(),
                    want.as_str()
                )
            },
        ));
    }
    // The world the episode left, read after it: about the episode as a whole, so
    // pinned to no round (its reasons come after the last round's are pinned below).
    let last = episode.rounds.len().checked_sub(1);
    for r in reasons[final_from..].iter_mut() {
        if r.rounds.is_empty() {
            *r = std::mem::replace(r, Reason::new("", "")).in_rounds(last);
        }
    }
    reasons.extend(end_state(expect, episode));
    checks.lines = sentences::check_lines(expect, input.tools, &reasons, &checks);
    (reasons, checks)
}

/// `expect.end_state`: each call's result against its matcher. An episode that carries
/// no results at all was not played on a host (the oracle judging an answer it is about
/// to give): there is no world to check, so nothing is said.
fn end_state(expect: &LoopExpectation, episode: &Episode) -> Vec<Reason> {
    if expect.end_state.is_empty() || episode.end_state.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, check) in expect.end_state.iter().enumerate() {
        let call = end_state_target(&check.call);
        let Some(got) = episode.end_state.get(i) else {
            out.push(Reason::new(
                "end_state_mismatch",
                format!("after the episode, {call} was not made"),
            ));
            continue;
        };
        if let Some(why) = &got.failure {
            out.push(Reason::new(
                "end_state_mismatch",
                format!("after the episode, {call} could not be made: {why}"),
            ));
            continue;
        }
        let content = got.content.as_deref().unwrap_or_default();
        let value = crate::suite::end_state::result_value(content);
        let read = if check.call.state { "state" } else { "result" };
        if let Err(m) = check.result.check(Some(&value), read) {
            let error = if got.is_error {
                " (an error result)"
            } else {
                ""
            };
            let returned = if check.call.state { "was" } else { "returned" };
            out.push(Reason::new(
                "end_state_mismatch",
                format!(
                    "after the episode, {call} {returned}{error} {}: `{}` expected {}, got {}",
                    steps::clip(&crate::suite::matcher::show(&value)),
                    m.path,
                    m.expected,
                    m.actual
                ),
            ));
        }
    }
    out
}

/// What an end-state check reads, as its sentences and reasons name it: a call
/// ([`end_state_call`]) or `the world's state`.
pub fn end_state_target(call: &crate::suite::end_state::EndStateCall) -> String {
    if call.state {
        "the world's state".to_string()
    } else {
        end_state_call(&call.tool, &call.args)
    }
}

/// `tool(arg: value, …)`, as the end-state sentences and reasons name a call.
pub fn end_state_call(tool: &str, args: &serde_json::Map<String, serde_json::Value>) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|(k, v)| format!("{k}: {}", crate::suite::matcher::show(v)))
        .collect();
    format!("`{tool}({})`", args.join(", "))
}

/// `final.contains` and `final.regex`, compared as today's text checks are: after the
/// suite's normalisation (the regex was compiled case-insensitive when it folds case).
fn text_checks(t: &crate::suite::TextChecks, text: &str, norm: Normalizer) -> Vec<Reason> {
    let hay = norm.apply(text);
    let mut out: Vec<Reason> = t
        .contains
        .iter()
        .filter(|c| !hay.contains(norm.apply(c).as_ref()))
        .map(|c| {
            Reason::new(
                "text_mismatch",
                format!("the final answer does not contain {c:?}"),
            )
        })
        .collect();
    if let Some(re) = &t.regex
        && !re.is_match(&hay)
    {
        out.push(Reason::new(
            "text_mismatch",
            format!("the final answer does not match /{}/", re.as_str()),
        ));
    }
    out
}

#[cfg(test)]
mod tests;
