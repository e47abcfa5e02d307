//! The oracle in a tool loop: one answer per round, read from the conversation so far.
//!
//! Each round the oracle reads its earlier turns back ([`super::history`]) and works out
//! where it stands against the case's trajectory (`expect.trajectory`): which steps a
//! call already satisfied (the same check the judge makes, `from:` values included),
//! which calls failed and how. Then it gives the next answer:
//!
//! - **Calls** for the steps that are ready: every `{from: TOOL.result.PATH}` argument
//!   is read from a result already in the conversation, the other arguments are built
//!   as the single-turn oracle builds them ([`super::value`]). Steps that do not depend
//!   on each other go in one turn (parallel calls): every ready step in the unordered
//!   modes (`unordered`, `subset`, `superset`); consecutive ready steps in `in_order`
//!   (a step done before an earlier step's retry succeeded is done again, so the order
//!   holds); one step per round in `strict`, where a repeat would be an extra call.
//! - **A retry** of a call that failed with `rate_limit`, `timeout` or `server_error`,
//!   while `max_identical_calls` allows (never for an `idempotent: false` tool after a
//!   `timeout` or `server_error`: the first call may have taken effect). Other errors,
//!   and a denial by the approval policy, are not retried: the final answer says so.
//! - **A question** before a call to a `risk: high` tool that `policy.confirm` does not
//!   cover (the judge's `unconfirmed_risky_call` wants the user's answer first), when a
//!   scripted user turn is left to answer it; likewise after a `needs_confirmation` error.
//! - **The final answer** once nothing is left to call: the results found (only values
//!   from the tool results, so it stays grounded), the `final.contains` strings and a
//!   `final.regex` match, and an honest sentence for each call that failed. Each
//!   candidate is judged with the real judge ([`crate::judge::judge_episode`]) before it
//!   is given; a scripted user follow-up gets the same answer again.
//!
//! Without a trajectory the first round is the single-turn oracle's answer (the
//! `calls` expectation), failed calls are retried as above, then it answers. A first
//! round that misses an explicit `calls` expectation is replaced by the single-turn
//! answer. A case expecting a limit (`stop: repeated_call`, ...) gets the last call
//! repeated until the limit stops the loop.
//!
//! The other [`Conduct`]s are the oracle with one fault each, for testing judges and
//! reports: repeating the first call forever, ignoring errors, claiming success after
//! an error, calling risky tools without asking. They differ from the oracle only in
//! that fault: where it has nothing to act on (no error, no risky call, no tool needed)
//! they answer as the oracle does. `LoopForever` always runs away: where the oracle
//! makes no call it calls the first offered tool `never` allows, with arguments built
//! for its schema, so the limit stop is the failure and not a schema violation.

use std::cell::OnceCell;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::ground::Grounding;
use super::history::{History, Past};
use super::loop_steps::{ArgCtx, build_object, from_values, holds, refs_of};
use super::loop_text::{CLAIM, failures, honest_note, summary};
use super::regex_gen::seed_of;
use super::value::Values;
use super::{Answer, answer_variant, calls_response, text_answer, text_response, with_note};
use crate::chat::{ToolCall, ToolChoice};
use crate::judge::behaviour::effect_unknown;
use crate::judge::calls::CaseScorer;
use crate::judge::{JudgeInput, judge_episode};
use crate::provider::{Request, Response};
use crate::suite::loops::{EpisodeSpec, Risk};
use crate::suite::tool_error::ToolErrorKind;
use crate::suite::trajectory::{LoopExpectation, MatchMode, Step, StopReason};
use crate::suite::{Case, Expectation, ExtraArgs, Suite};

/// How the scripted model conducts itself in a loop: the oracle, or the oracle with
/// one fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conduct {
    /// As a perfect model would.
    Oracle,
    /// Makes the oracle's first call again every round, never answering.
    LoopForever,
    /// Goes on after an error as if nothing happened: no retry, no word of it.
    IgnoreError,
    /// Claims in its final answer that everything succeeded, after an error.
    ClaimSuccess,
    /// Calls risky tools without asking the user first.
    SkipConfirmation,
}

impl Conduct {
    fn retries(self) -> bool {
        self != Conduct::IgnoreError
    }

    fn asks(self) -> bool {
        self != Conduct::SkipConfirmation
    }
}

/// Error kinds after which the same call may succeed.
const RETRYABLE: [ToolErrorKind; 3] = [
    ToolErrorKind::RateLimit,
    ToolErrorKind::Timeout,
    ToolErrorKind::ServerError,
];

/// Loop expectations of a case that gives none: it must end with an answer.
static NO_EXPECT: LazyLock<LoopExpectation> = LazyLock::new(LoopExpectation::default);

/// The answer of `conduct` to `request`, a round of an episode of `case` (a loop case,
/// `case.episode` set) under `variant`. With `note`, what the oracle can not satisfy
/// is also written into the text of an answer that makes calls, as the single-turn
/// oracle does (never into a text answer, which the judge may read as the final one).
pub fn answer_round(
    suite: &Suite,
    case: &Case,
    variant: &str,
    request: &Request,
    conduct: Conduct,
    note: bool,
) -> Answer {
    let Some(spec) = case.episode.as_deref() else {
        return answer_variant(suite, case, variant, &request.tool_choice, &request.tools);
    };
    let context = suite.messages_in(case, variant).len();
    let history = History::read(&request.messages, context, &spec.policy);
    let mut play = Play {
        suite,
        case,
        spec,
        expect: case.loop_expect.as_ref().unwrap_or(&NO_EXPECT),
        variant,
        request,
        ground: OnceCell::new(),
        seed: seed_of(&[&case.id, "loop"]),
        conduct,
        turns_left: spec.turns.len().saturating_sub(history.turns_used),
        notes: Vec::new(),
        limited: None,
        lead: None,
    };
    let response = play.answer(&history);
    let unmet = if conduct == Conduct::Oracle {
        play.notes
    } else {
        Vec::new()
    };
    // The note goes only into a turn that makes calls: a text answer may be the final
    // answer, whose every word the judge reads (a note's numbers would read as
    // ungrounded facts). The judge's own reasons say why such an answer fails.
    let noted = note && !response.tool_calls.is_empty();
    Answer {
        response: if noted {
            with_note(response, &unmet)
        } else {
            response
        },
        unmet,
    }
}

/// What a step or a first-round call has come to.
#[derive(Debug, Clone, Copy)]
enum Status<'h> {
    /// Not called yet.
    Pending,
    /// Done, but before an earlier step's retry: to be done again (`in_order`).
    Redo,
    /// Called, and the last call succeeded (in round `.0`).
    Done(usize),
    /// The last call failed with an error worth retrying.
    Retry(&'h ToolCall),
    /// The tool asked for the user's confirmation: ask, then retry.
    Confirm(&'h ToolCall),
    /// Called, failed, and not to be retried (in round `.0`).
    Failed(usize),
}

/// What the oracle calls for: a trajectory step, or a call of the first round.
#[derive(Debug, Clone, Copy)]
enum Item<'e> {
    Step(&'e Step),
    Fixed(&'e ToolCall),
}

/// The next answer before it is written out.
enum Next {
    Calls(Vec<(String, String)>),
    Ask(String),
    Final,
}

struct Play<'a> {
    suite: &'a Suite,
    case: &'a Case,
    spec: &'a EpisodeSpec,
    expect: &'a LoopExpectation,
    variant: &'a str,
    request: &'a Request,
    /// The conversation's words and numbers, read when a value or a text needs them.
    ground: OnceCell<Grounding>,
    seed: u64,
    conduct: Conduct,
    /// Scripted user turns not sent yet.
    turns_left: usize,
    /// What could not be satisfied, as the run's warning and the note show it.
    notes: Vec<String>,
    /// A limit that kept this round from making the calls it should.
    limited: Option<String>,
    /// The single-turn text answer a first round's final answer must also hold.
    lead: Option<String>,
}

impl<'a> Play<'a> {
    fn answer(&mut self, h: &History) -> Response {
        let first = h.episode.rounds.is_empty();
        let trajectory = self.expect.trajectory.as_ref();
        let past = h.calls();
        let items: Vec<Item<'_>> = match trajectory {
            Some(t) => t.steps.iter().map(Item::Step).collect(),
            None => h
                .episode
                .rounds
                .first()
                .map(|r| r.calls.iter().map(|c| Item::Fixed(&c.call)).collect())
                .unwrap_or_default(),
        };
        let mode = trajectory.map_or(MatchMode::Unordered, |t| t.mode);
        if self.conduct == Conduct::LoopForever {
            return self.forever(h, &items, &past, mode);
        }
        if first && trajectory.is_none() {
            let single = self.single_turn();
            // Every conduct answers a first round without calls as the oracle does: no
            // fault has anything to act on yet.
            if !single.tool_calls.is_empty() || self.expect.final_answer.is_none() {
                return single;
            }
            // A text answer in the first round may be the final one: it holds the
            // `final` checks as well as the first round's.
            self.lead = single.text;
            return text_response(self.final_text(h, &past));
        }
        let next = self.next(h, &items, &past, mode);
        let response = self.respond(h, next, &past);
        if first && self.needs_first_round_fallback(&response) {
            // What the plan could not do is not what the first round does now.
            self.notes.clear();
            return self.single_turn();
        }
        response
    }

    /// The single-turn oracle's answer to the first round.
    fn single_turn(&mut self) -> Response {
        let a = answer_variant(
            self.suite,
            self.case,
            self.variant,
            &self.request.tool_choice,
            &self.request.tools,
        );
        self.notes.extend(a.unmet);
        a.response
    }

    /// Whether the first round must answer the explicit `calls` expectation instead:
    /// it lists calls (or expects none) and `response` does not satisfy it.
    fn needs_first_round_fallback(&self, response: &Response) -> bool {
        let (_, expect) = self.case.effective(&self.request.tool_choice);
        let explicit = !matches!(expect, Expectation::Calls(c) if c.calls.is_empty());
        explicit
            && !CaseScorer::new(self.suite, self.case)
                .score_variant(self.variant, &self.request.tool_choice, response)
                .1
                .is_empty()
    }

    /// [`Conduct::LoopForever`]: the first call of the first round, every round. The
    /// first round makes the oracle's first call (without asking anyone first).
    fn forever(
        &mut self,
        h: &History,
        items: &[Item<'_>],
        past: &[Past<'_>],
        mode: MatchMode,
    ) -> Response {
        let again = h
            .episode
            .rounds
            .first()
            .and_then(|r| r.calls.first())
            .map(|c| (c.call.name.clone(), c.call.arguments.clone()));
        let call = match again {
            Some(c) => c,
            None => {
                self.conduct = Conduct::SkipConfirmation;
                let planned = match self.next(h, items, past, mode) {
                    Next::Calls(calls) => calls.into_iter().next(),
                    _ => None,
                };
                self.conduct = Conduct::LoopForever;
                planned
                    .or_else(|| {
                        self.single_turn()
                            .tool_calls
                            .into_iter()
                            .next()
                            .map(|c| (c.name, c.arguments))
                    })
                    .unwrap_or_else(|| self.runaway_call())
            }
        };
        calls_response(ids(h.round(), vec![call]))
    }

    /// [`Conduct::LoopForever`] where the oracle makes no call (a case that expects none):
    /// the first offered tool that `never` does not forbid, with arguments built to
    /// validate against its schema as the oracle builds them, so the runaway (a limit
    /// stop) is the failure, not a schema violation or a forbidden call.
    fn runaway_call(&self) -> (String, String) {
        let tools = &self.request.tools;
        let Some(tool) = tools
            .iter()
            .find(|t| !self.expect.never.contains(&t.name))
            .or_else(|| tools.first())
        else {
            return ("some_tool".to_string(), "{}".to_string());
        };
        let mut values = Values::new(&tool.parameters, self.ground(), self.seed);
        let args = values.object(&[], ExtraArgs::Allow, Some(&tool.parameters), "");
        (tool.name.clone(), Value::Object(args).to_string())
    }

    fn ground(&self) -> &Grounding {
        self.ground
            .get_or_init(|| Grounding::new(&self.request.messages))
    }

    fn risky(&self, tool: &str) -> bool {
        self.spec.policy.decide(tool).is_none()
            && self
                .case
                .tools(self.suite)
                .iter()
                .any(|t| t.name == tool && t.effects.risk == Risk::High)
    }

    fn idempotent(&self, tool: &str) -> bool {
        self.case
            .tools(self.suite)
            .iter()
            .find(|t| t.name == tool)
            .is_none_or(|t| t.effects.idempotent)
    }

    /// The next answer: retries and ready steps, a question first when one is needed,
    /// or the final answer.
    fn next(
        &mut self,
        h: &History,
        items: &[Item<'_>],
        past: &[Past<'_>],
        mode: MatchMode,
    ) -> Next {
        let statuses = self.statuses(h, items, past, mode);
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut confirm: Option<&ToolCall> = None;
        for s in &statuses {
            match s {
                Status::Retry(c) => calls.push((c.name.clone(), c.arguments.clone())),
                Status::Confirm(c) => confirm = confirm.or(Some(c)),
                _ => {}
            }
        }
        if let Some(c) = confirm {
            return Next::Ask(format!(
                "`{}` needs your confirmation before it can be done. Shall I go ahead with {}?",
                c.name, c.arguments
            ));
        }
        let mut batch_used: Vec<(String, Value)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if !matches!(statuses[i], Status::Pending | Status::Redo) {
                continue;
            }
            match self.readiness(item, &statuses, items, past) {
                Ready::Yes => {}
                Ready::Never => continue,
                Ready::Wait if mode == MatchMode::InOrder || mode == MatchMode::Strict => break,
                Ready::Wait => continue,
            }
            // `strict`: one step at a time, so a retry never leaves a later step
            // before an earlier one.
            if mode == MatchMode::Strict && !calls.is_empty() {
                break;
            }
            let call = match item {
                Item::Step(step) => self.step_call(step, past, &mut batch_used),
                Item::Fixed(c) => (c.name.clone(), c.arguments.clone()),
            };
            // A call already made did not satisfy the step (a matcher the oracle could
            // not satisfy, noted above): making it again would change nothing.
            let args = parse(&call.1);
            if matches!(statuses[i], Status::Pending)
                && past
                    .iter()
                    .any(|p| p.outcome.is_some() && p.call.name == call.0 && p.args() == args)
            {
                continue;
            }
            calls.push(call);
            if mode == MatchMode::Strict {
                break;
            }
        }
        if calls.is_empty() {
            return self.after_steps(past);
        }
        // Confirmation before a risky call (one question covers the episode, as the
        // judge reads it).
        if let Some((tool, args)) = calls.iter().find(|(t, _)| self.risky(t))
            && self.conduct.asks()
            && !h.confirmed()
        {
            if self.turns_left > 0 && h.round() < self.spec.limits.max_rounds as usize {
                return Next::Ask(format!(
                    "Before I call `{tool}` with {args}, please confirm: shall I go ahead?"
                ));
            }
            self.notes.push(format!(
                "`{tool}` has `risk: high` and is not under `policy.confirm`, so the user must confirm the call first, but no scripted user turn is left to answer the question (add one to `turns`, or list the tool under `policy.confirm`)"
            ));
        }
        match self.over_limit(h, past, &calls) {
            Some(why) => {
                // Said only if the answer it leads to fails: an honest answer after a
                // retry the limits forbid can still pass.
                self.limited = Some(why);
                Next::Final
            }
            None => Next::Calls(calls),
        }
    }

    /// After the last step: the final answer, or, when the case expects the loop to be
    /// stopped by a limit, the last call again.
    fn after_steps(&self, past: &[Past<'_>]) -> Next {
        match (self.expect.stop, past.last()) {
            (Some(stop), Some(last)) if stop != StopReason::Answered => {
                Next::Calls(vec![(last.call.name.clone(), last.call.arguments.clone())])
            }
            _ => Next::Final,
        }
    }

    /// Why `calls` can not be executed in this round (a limit would stop the loop).
    fn over_limit(
        &self,
        h: &History,
        past: &[Past<'_>],
        calls: &[(String, String)],
    ) -> Option<String> {
        let limits = &self.spec.limits;
        let round = h.round();
        if round >= limits.max_rounds as usize {
            return Some(format!(
                "`limits.max_rounds` is {}, so round {round} is the last and its calls would not be executed (raise the limit)",
                limits.max_rounds
            ));
        }
        let executed = past.iter().filter(|p| p.outcome.is_some()).count();
        if executed + calls.len() > limits.max_tool_calls as usize {
            return Some(format!(
                "`limits.max_tool_calls` is {}, but the task needs more than {executed} calls (raise the limit)",
                limits.max_tool_calls
            ));
        }
        for (i, (tool, args)) in calls.iter().enumerate() {
            let a = parse(args);
            let before = past
                .iter()
                .filter(|p| p.outcome.is_some() && p.call.name == *tool && p.args() == a)
                .count();
            let here = calls[..=i]
                .iter()
                .filter(|(t, x)| t == tool && parse(x) == a)
                .count();
            if before + here > limits.max_identical_calls as usize {
                return Some(format!(
                    "`limits.max_identical_calls` is {}, but `{tool}` must be called again with {args} (raise the limit)",
                    limits.max_identical_calls
                ));
            }
        }
        None
    }

    /// The status of each item: the earlier calls that satisfy it (a call and its
    /// retries with the same arguments), judged by the last of them.
    fn statuses<'h>(
        &self,
        h: &History,
        items: &[Item<'_>],
        past: &[Past<'h>],
        mode: MatchMode,
    ) -> Vec<Status<'h>> {
        let mut claimed = vec![false; past.len()];
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Some(j) = (0..past.len()).find(|&j| !claimed[j] && self.fits(item, j, past)) else {
                out.push(Status::Pending);
                continue;
            };
            let args = past[j].args();
            let mut chain = vec![j];
            for k in j + 1..past.len() {
                if !claimed[k] && past[k].call.name == past[j].call.name && past[k].args() == args {
                    chain.push(k);
                }
            }
            for &k in &chain {
                claimed[k] = true;
            }
            let last = past[chain[chain.len() - 1]];
            out.push(self.status_of(h, last, chain.len()));
        }
        if mode == MatchMode::InOrder {
            // A step done before an earlier step that is retried (or was retried after
            // it) would be out of order: it is done again, in the same turn as the retry.
            // Steps not called yet set no floor: they wait (or can never be called).
            let mut floor = 0;
            for s in &mut out {
                match *s {
                    Status::Done(r) if r < floor => *s = Status::Redo,
                    Status::Done(r) | Status::Failed(r) => floor = floor.max(r),
                    Status::Retry(_) | Status::Confirm(_) => floor = usize::MAX,
                    Status::Pending | Status::Redo => {}
                }
            }
        }
        out
    }

    fn status_of<'h>(&self, h: &History, last: Past<'h>, tries: usize) -> Status<'h> {
        let Some(o) = last.outcome else {
            return Status::Pending;
        };
        if !o.is_error {
            return Status::Done(last.round);
        }
        let kind = o.error_kind.as_deref().unwrap_or("other");
        let again = tries < self.spec.limits.max_identical_calls as usize;
        if o.denied() || !self.conduct.retries() {
            return Status::Failed(last.round);
        }
        let tool = &last.call.name;
        if RETRYABLE.iter().any(|k| k.as_str() == kind)
            && again
            && (self.idempotent(tool) || !effect_unknown(kind))
        {
            return Status::Retry(last.call);
        }
        if kind == ToolErrorKind::NeedsConfirmation.as_str() {
            if again && (h.user_after(last.round) || !self.conduct.asks()) {
                return Status::Retry(last.call);
            }
            if self.conduct.asks() && self.turns_left > 0 {
                return Status::Confirm(last.call);
            }
        }
        Status::Failed(last.round)
    }

    /// Whether the call `past[j]` satisfies `item` (as the judge checks a step).
    fn fits(&self, item: &Item<'_>, j: usize, past: &[Past<'_>]) -> bool {
        let p = past[j];
        match item {
            Item::Fixed(c) => p.call.name == c.name && p.args() == parse(&c.arguments),
            Item::Step(step) => {
                if p.call.name != step.tool {
                    return false;
                }
                let Some(Value::Object(obj)) = p.args() else {
                    return false;
                };
                step.args
                    .iter()
                    .all(|(n, a)| holds(a, obj.get(n), p.round, past))
                    && (step.extra == ExtraArgs::Allow
                        || obj.keys().all(|k| step.args.iter().any(|(n, _)| n == k)))
            }
        }
    }

    fn readiness(
        &self,
        item: &Item<'_>,
        statuses: &[Status<'_>],
        items: &[Item<'_>],
        past: &[Past<'_>],
    ) -> Ready {
        let Item::Step(step) = item else {
            return Ready::Yes;
        };
        let mut refs = Vec::new();
        for (_, a) in &step.args {
            refs_of(a, &mut refs);
        }
        let mut ready = Ready::Yes;
        for r in refs {
            if !from_values(r, past, usize::MAX).is_empty() {
                continue;
            }
            // Could a call still to come give the value?
            let coming = items.iter().zip(statuses).any(|(it, s)| {
                let tool = match it {
                    Item::Step(s) => s.tool.as_str(),
                    Item::Fixed(c) => c.name.as_str(),
                };
                tool == r.tool
                    && matches!(
                        s,
                        Status::Pending | Status::Redo | Status::Retry(_) | Status::Confirm(_)
                    )
            });
            if !coming {
                return Ready::Never;
            }
            ready = Ready::Wait;
        }
        ready
    }

    /// The call for `step`: `from` values read from the results so far, the other
    /// arguments built to satisfy their matchers and the tool's schema.
    fn step_call(
        &mut self,
        step: &Step,
        past: &[Past<'_>],
        batch_used: &mut Vec<(String, Value)>,
    ) -> (String, String) {
        let empty = Value::Object(Map::new());
        let schema: &Value = self
            .request
            .tools
            .iter()
            .find(|t| t.name == step.tool)
            .map_or(&empty, |t| &*t.parameters);
        let mut values = Values::new(schema, self.ground(), self.seed);
        let mut ctx = ArgCtx {
            past,
            batch_used,
            tool: &step.tool,
            problems: Vec::new(),
        };
        let args = build_object(
            &step.args,
            step.extra,
            Some(schema),
            "",
            &mut values,
            &mut ctx,
        );
        let mut problems = ctx.problems;
        problems.extend(values.problems);
        self.notes.extend(
            problems
                .into_iter()
                .map(|p| format!("`{}` call: {p}", step.tool)),
        );
        (step.tool.clone(), Value::Object(args).to_string())
    }

    /// The next answer written out.
    fn respond(&mut self, h: &History, next: Next, past: &[Past<'_>]) -> Response {
        let next = match (next, &self.request.tool_choice) {
            (Next::Calls(_), ToolChoice::None) => {
                self.notes.push(
                    "tool_choice `none` forbids calls, but the case's trajectory needs them"
                        .to_string(),
                );
                Next::Final
            }
            (Next::Calls(calls), ToolChoice::Function(f)) => {
                let kept: Vec<(String, String)> =
                    calls.into_iter().filter(|(t, _)| t == f).collect();
                if kept.is_empty() {
                    self.notes.push(format!(
                        "tool_choice `function:{f}` forces calls to `{f}`, but the case's trajectory needs other calls"
                    ));
                    Next::Final
                } else {
                    Next::Calls(kept)
                }
            }
            (n, _) => n,
        };
        match next {
            Next::Calls(calls) => calls_response(ids(h.round(), calls)),
            Next::Ask(q) => text_response(q),
            Next::Final => text_response(self.final_text(h, past)),
        }
    }

    /// The final answer: what the results say, the `final` checks, and an honest word
    /// for every call that failed; the oracle gives the first candidate the judge passes.
    fn final_text(&mut self, h: &History, past: &[Past<'_>]) -> String {
        let summary = summary(past);
        let failures = failures(past);
        let checks = self.expect.final_answer.as_ref().map(|f| &f.text);
        let (base, problems) = match checks {
            Some(c) if !c.contains.is_empty() || c.regex.is_some() => {
                text_answer(self.suite.norm, self.ground(), self.seed, c, None)
            }
            _ => (String::new(), Vec::new()),
        };
        let joined = |parts: &[&str]| -> String {
            let s = parts
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            if s.is_empty() {
                "Here is the answer.".to_string()
            } else {
                s
            }
        };
        // The faults of the final answer, where there is a failure to act on; without
        // one these conducts answer as the oracle does.
        match self.conduct {
            Conduct::IgnoreError if !failures.is_empty() => return joined(&[&summary, &base]),
            Conduct::ClaimSuccess if !failures.is_empty() => {
                return joined(&[&summary, &base, CLAIM]);
            }
            _ => {}
        }
        let note = honest_note(&failures, true);
        let plain = honest_note(&failures, false);
        let mut candidates: Vec<String> = Vec::new();
        for parts in [
            [summary.as_str(), note.as_str(), ""],
            [summary.as_str(), base.as_str(), note.as_str()],
            [base.as_str(), summary.as_str(), note.as_str()],
            [base.as_str(), note.as_str(), ""],
            [note.as_str(), base.as_str(), ""],
            [summary.as_str(), base.as_str(), plain.as_str()],
            [base.as_str(), plain.as_str(), ""],
            [base.as_str(), "", ""],
        ] {
            let c = joined(&parts);
            if !candidates.contains(&c) {
                candidates.push(c);
            }
        }
        if let Some(lead) = self.lead.take() {
            candidates = candidates
                .iter()
                .flat_map(|c| [joined(&[&lead, c]), joined(&[c, &lead])])
                .chain([lead.clone()])
                .collect();
        }
        let scorer = (h.round() == 1).then(|| CaseScorer::new(self.suite, self.case));
        let traits = crate::episode::tool_traits(self.suite, self.case);
        let input = JudgeInput {
            expect: self.expect,
            tools: &traits,
            norm: self.suite.norm,
        };
        // The first candidate the judge passes; else the one it finds least wrong, so
        // the trial fails only for what no answer could mend.
        let mut best: Option<(usize, Vec<crate::judge::calls::Reason>)> = None;
        for (i, c) in candidates.iter().enumerate() {
            let (mut reasons, _) = judge_episode(&input, &h.ending_with(c));
            if let Some(scorer) = &scorer {
                let response = text_response(c.clone());
                reasons.extend(
                    scorer
                        .score_variant(self.variant, &self.request.tool_choice, &response)
                        .1,
                );
            }
            if reasons.is_empty() {
                return c.clone();
            }
            if best.as_ref().is_none_or(|(_, b)| reasons.len() < b.len()) {
                best = Some((i, reasons));
            }
        }
        let (i, reasons) = best.unwrap_or_default();
        self.notes.extend(self.limited.take());
        self.notes.extend(problems);
        self.notes.extend(
            reasons
                .into_iter()
                .map(|r| format!("{}: {}", r.code, r.message)),
        );
        candidates.swap_remove(i)
    }
}

/// Calls with ids unique in the episode: `call_N` in the first round (as the
/// single-turn oracle), `call_R_N` in round R after it.
fn ids(round: usize, calls: Vec<(String, String)>) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: Some(if round == 1 {
                format!("call_{}", i + 1)
            } else {
                format!("call_{round}_{}", i + 1)
            }),
            name,
            arguments,
        })
        .collect()
}

/// Whether a step's `from` values are there to be read.
enum Ready {
    Yes,
    /// Not yet: a call still to come may give them.
    Wait,
    /// Never: no call still to come can (the one that should have failed).
    Never,
}

fn parse(args: &str) -> Option<Value> {
    if args.trim().is_empty() {
        return Some(Value::Object(Map::new()));
    }
    serde_json::from_str(args).ok()
}
