//! After a trial was played: hand what happened to the judge stage
//! ([`crate::judge::stage`]), asking the judge model first where the case needs it, and
//! build the trial's record from the [`Judgement`].
//!
//! Every trial ends here with exactly one record: scored, or an error that says why.

use super::judged::{self, Judge, LoopRubric, SingleTurn};
use super::matrix::{Plan, PlannedTrial};
use super::play::Played;
use super::{Slot, breaker::Breakers};
use crate::episode::EpisodeOutcome;
use crate::judge::stage::{LoopTrial, judge_loop_rubric, judge_played_episode, judge_turn};
use crate::judge::{CaseScorer, Judgement, Reason};
use crate::provider::{Response, TrialKey};
use crate::score::prices::Price;
use crate::score::record::EpisodeRecord;
use crate::score::{TrialRecord, Verdict, tokens};

/// What judging one played trial needs.
pub(super) struct Finish<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The trial.
    pub t: PlannedTrial,
    /// Its case's call checks.
    pub scorer: &'a CaseScorer<'a>,
    /// The target's price, if it has one.
    pub price: Option<Price>,
    /// The judge model, when the run has one.
    pub judge: Option<&'a Judge>,
    /// The run's breakers (a judge model is stopped as a target is).
    pub breakers: &'a Breakers,
    /// The trial's key, for the judge model's requests.
    pub key: &'a TrialKey,
}

/// The record of a trial that was played (or not run), and the slot to give back once it
/// was told; `None` when it did not start.
pub(super) async fn finish(f: &Finish<'_>, played: Played) -> Option<(TrialRecord, Option<Slot>)> {
    let mut record = new_record(f.plan, f.t);
    match played {
        Played::NotStarted => None,
        Played::NotRun {
            request,
            reason,
            slot,
        } => {
            record.reasons.push(reason);
            record.messages = request.messages;
            Some((record, Some(slot)))
        }
        Played::Turn {
            request,
            result,
            slot,
        } => {
            match result {
                Ok(response) => turn(f, &request, *response, &mut record).await,
                Err(message) => record.reasons.push(Reason::new("provider_error", message)),
            }
            record.messages = request.messages;
            distractor_facts(f.plan, f.t, &mut record);
            Some((record, slot))
        }
        Played::Episode {
            tools,
            outcome,
            slot,
        } => {
            episode(f, &tools, *outcome, &mut record).await;
            distractor_facts(f.plan, f.t, &mut record);
            Some((record, Some(slot)))
        }
    }
}

/// The record of a trial whose task failed (a panic): an error that says so.
pub(super) fn task_failed(plan: &Plan, t: PlannedTrial, message: String) -> TrialRecord {
    let mut record = new_record(plan, t);
    record.reasons.push(Reason::new("provider_error", message));
    record.messages = plan.request(t).0.messages;
    distractor_facts(plan, t, &mut record);
    record
}

/// A trial of one round: its usage (estimated when the provider gave none), the judge
/// model's verdicts where the case needs them, the judgement, its cost.
async fn turn(
    f: &Finish<'_>,
    request: &crate::provider::Request,
    mut response: Response,
    record: &mut TrialRecord,
) {
    if response.usage.is_none() {
        let tool_tokens = f.plan.trial_tool_tokens(f.t);
        response.usage = Some(tokens::estimate_usage(request, &response, tool_tokens));
    }
    let case = &f.plan.suite.cases[f.t.case];
    let cell = &f.plan.cells[f.t.cell];
    let asked = SingleTurn::new(case, f.scorer, &cell.tool_choice, request, &response, f.key);
    let judged = judged::single_turn(f.judge, &asked, f.breakers).await;
    record.judge = judged.calls;
    let model = match judged.error {
        Some(reason) => Err(reason),
        None => Ok(judged.verdicts.as_ref()),
    };
    let distractors = f.plan.distractors_of(f.t);
    let judgement = judge_turn(
        f.scorer,
        &cell.variant,
        &distractors,
        &cell.tool_choice,
        &response,
        model,
    );
    apply(record, judgement);
    if let (Some(p), Some(u)) = (f.price, response.usage) {
        record.cost_usd = Some(p.cost_of(&u));
    }
    record.response = Some(response);
}

/// A tool loop: usage estimated per round where the provider gave none, the judgement of
/// the episode and of its final answer's rubric, and the record of its rounds.
async fn episode(
    f: &Finish<'_>,
    tools: &[crate::chat::ToolDefinition],
    mut outcome: EpisodeOutcome,
    record: &mut TrialRecord,
) {
    // Counted only when some round needs an estimate: a case's own tools can be large,
    // and a replay that reports every round's usage never needs their size.
    let mut tool_tokens = None;
    for i in 0..outcome.rounds.len() {
        if outcome.rounds[i].response.usage.is_none() {
            let tool_tokens = *tool_tokens.get_or_insert_with(|| f.plan.trial_tool_tokens(f.t));
            let usage = tokens::estimate_usage_of(
                outcome.sent(i),
                &outcome.rounds[i].response,
                tool_tokens,
            );
            outcome.rounds[i].response.usage = Some(usage);
        }
    }
    let suite = &f.plan.suite;
    let case = &suite.cases[f.t.case];
    let distractors = f.plan.distractors_of(f.t);
    let trial = LoopTrial {
        suite,
        case,
        scorer: f.scorer,
        variant: &record.variant,
        mode: &record.tool_choice,
        distractors: &distractors,
    };
    let mut judgement = judge_played_episode(&trial, &outcome);
    if matches!(judgement, Judgement::Scored { .. }) {
        let rubric = LoopRubric {
            case,
            tools,
            context: outcome.context,
            key: f.key,
        };
        if let Some((mut calls, said)) =
            judged::ask_rubric(f.judge, &rubric, &outcome.messages, f.breakers).await
        {
            record.judge.append(&mut calls);
            judgement = judge_loop_rubric(judgement, said);
        }
    }
    record.response = outcome.rounds.first().map(|r| r.response.clone());
    let stop = outcome.stop();
    record.episode = Some(EpisodeRecord {
        rounds: std::mem::take(&mut outcome.rounds),
        stop,
        checks: None,
        end_state: std::mem::take(&mut outcome.end_state),
    });
    record.messages = outcome.messages;
    apply(record, judgement);
    if let (Some(p), Some(u)) = (f.price, record.usage()) {
        record.cost_usd = Some(p.cost_of(&u));
    }
}

/// Write `judgement` into `record`: its verdict, reasons and checks (the episode's into
/// its episode record).
fn apply(record: &mut TrialRecord, judgement: Judgement) {
    let (verdict, reasons, checks, episode) = match judgement {
        Judgement::Scored {
            reasons,
            checks,
            episode,
        } => {
            let verdict = if reasons.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            (verdict, reasons, checks, episode)
        }
        Judgement::Failed {
            reason,
            checks,
            episode,
        } => (Verdict::Error, vec![reason], checks, episode),
    };
    record.verdict = verdict;
    record.reasons = reasons;
    record.checks = checks;
    if let Some(e) = record.episode.as_mut() {
        e.checks = episode;
    }
}

/// A trial's record before it is judged: its identity, and an error until then.
fn new_record(plan: &Plan, t: PlannedTrial) -> TrialRecord {
    let cell = &plan.cells[t.cell];
    let case = &plan.suite.cases[t.case];
    let (kind, _) = case.effective(&cell.tool_choice);
    TrialRecord {
        judge: Vec::new(),
        case_id: case.id.clone(),
        kind,
        tags: case.tags.clone(),
        target: cell.target.spec.clone(),
        variant: cell.variant.clone(),
        tool_choice: cell.tool_choice.clone(),
        repeat: t.repeat,
        stream: cell.target.stream,
        messages: Vec::new(),
        response: None,
        checks: None,
        verdict: Verdict::Error,
        reasons: Vec::new(),
        cost_usd: None,
        distractors: None,
        episode: None,
    }
}

/// Fill in the tool-count facts of a trial in a cell with distractors (see
/// [`crate::score::distractors`]); records of other cells stay without them.
fn distractor_facts(plan: &Plan, t: PlannedTrial, record: &mut TrialRecord) {
    let cell = &plan.cells[t.cell];
    let (Some(n), Some(d)) = (cell.distractors, &plan.suite.distractors) else {
        return;
    };
    let case = &plan.suite.cases[t.case];
    let (kind, expect) = case.effective(&cell.tool_choice);
    // An error has no response to judge; its facts carry only the count and size.
    let response = (record.verdict != Verdict::Error)
        .then_some(record.response.as_ref())
        .flatten();
    record.distractors = Some(crate::score::distractors::facts(
        n,
        plan.trial_tool_tokens(t),
        kind,
        expect,
        response,
        |name| d.is_distractor(t.case, n, name),
    ));
}
