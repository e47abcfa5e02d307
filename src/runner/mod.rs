//! Running a plan: send each trial's request to its provider, score the response, and
//! stream every finished trial to the caller (journal, progress) as it completes. A
//! target whose failures will repeat for every trial is stopped ([`breaker`]).
//!
//! A trial of a case with a tool loop (`mocks`) is an episode of rounds against the
//! suite's tool host, scored as a whole (`looped`); every other trial is one request,
//! scored as it always was.

pub mod breaker;
pub mod events;
#[cfg(test)]
mod events_tests;
pub mod journal;
pub mod judged;
mod looped;
pub mod matrix;
pub mod select;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;

pub use events::{RunEvent, RunObserver};
pub use matrix::{Cell, Plan, PlannedTrial};

use crate::provider::Provider;
use crate::score::prices::PriceTable;
use crate::score::trial::Reason;
use crate::score::{CaseScorer, TrialRecord, Verdict, tokens};

/// Why a run stopped before every trial ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Ctrl-C (SIGINT).
    Interrupted,
    /// A `--max-cost` or `--max-tokens` budget was exceeded; the text says which.
    Budget(String),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Interrupted => f.write_str("interrupted (Ctrl-C)"),
            StopReason::Budget(what) => write!(f, "budget exceeded: {what}"),
        }
    }
}

/// Lets a run be stopped from outside (a signal, a budget): no new trial starts, the
/// ones in flight finish (or time out) and are written.
#[derive(Debug, Default)]
pub struct RunControl {
    stopped: AtomicBool,
    reason: Mutex<Option<StopReason>>,
    /// Targets stopped for failures that repeat (a refused key, a server that is down).
    pub breakers: breaker::Breakers,
}

impl RunControl {
    /// Stop starting trials; the first reason given is kept.
    pub fn stop(&self, reason: StopReason) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            *r = Some(reason);
        }
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// True once stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Why targets were stopped by their breakers, joined, if any was: the run could not
    /// complete even though every trial has a record.
    pub fn targets_stopped(&self) -> Option<String> {
        let all = self.breakers.all_stopped();
        (!all.is_empty()).then(|| {
            let why: Vec<String> = all.into_iter().map(|(_, why)| why).collect();
            format!(
                "{}; its remaining trials were not run (errors saying why)",
                why.join("; ")
            )
        })
    }

    /// Why it stopped, if it did.
    pub fn reason(&self) -> Option<StopReason> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// How a run executes.
pub struct RunOptions {
    /// Trials in flight at once.
    pub concurrency: usize,
    /// Prices for cost.
    pub prices: PriceTable,
    /// The judge model, when the suite or `--judge` sets one.
    pub judge: Option<Arc<judged::Judge>>,
}

/// Run `trials` of `plan`, telling every observer each event as it happens
/// ([`events`]: trial started, round finished, trial finished, stopped), and return the
/// records with each trial's index in `trials`, in completion order. Every trial
/// produces exactly one record: scored, or an error with its reason.
///
/// When `control` is stopped, no further trial starts; those already started finish and
/// are reported.
pub async fn execute(
    plan: &Plan,
    trials: Vec<PlannedTrial>,
    providers: &HashMap<String, Arc<dyn Provider>>,
    options: &RunOptions,
    control: &RunControl,
    observers: &mut [&mut dyn RunObserver],
) -> Vec<(usize, TrialRecord)> {
    let mut fanout = events::Fanout::new(observers);
    let (notes, mut heard) = tokio::sync::mpsc::unbounded_channel::<events::Note>();
    let suite = &plan.suite;
    let scorers = CaseScorer::for_suite(suite);
    let prices: Vec<_> = plan
        .cells
        .iter()
        .map(|c| options.prices.lookup(&c.target.provider, &c.target.model))
        .collect();
    // One host answers every loop trial of the suite; each episode opens its own session.
    // A suite whose `tools_from` names an MCP server executes its loop calls there.
    let host = crate::mcp::host::suite_host(suite);
    let run_one = |(index, t): (usize, PlannedTrial)| {
        let host = host.clone();
        let notes = notes.clone();
        let cell = &plan.cells[t.cell];
        let case = &suite.cases[t.case];
        let provider = providers
            .get(
                crate::score::stream::identity_target(&cell.target.spec, cell.target.stream)
                    .as_ref(),
            )
            .cloned();
        let scorer = &scorers[t.case];
        let price = prices[t.cell];
        async move {
            let _ = notes.send(events::Note::Started(index));
            let (request, key) = plan.request(t);
            let spec = &cell.target.spec;
            let (kind, _) = case.effective(&cell.tool_choice);
            let mut record = TrialRecord {
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
            };
            // A stopped target's remaining trials end as errors that say why, at once.
            if let Some(why) = control.breakers.stopped(spec) {
                record
                    .reasons
                    .push(Reason::new("provider_error", format!("not run: {why}")));
                record.messages = request.messages;
                return (index, record);
            }
            if case.episode.is_some() {
                let Some(p) = provider else {
                    record.reasons.push(Reason::new(
                        "provider_error",
                        format!("no provider for target `{}`", cell.target.spec),
                    ));
                    record.messages = request.messages;
                    return (index, record);
                };
                let endpoint = p.endpoint();
                let tools = request.tools.clone();
                let context = request.messages.len();
                let judge_key = key.clone();
                match looped::play(p, host, case, request, key, (index, notes)).await {
                    Ok(outcome) => {
                        let failure = looped::provider_error(&outcome)
                            .and_then(|e| breaker::classify(e, endpoint.as_ref()));
                        control.breakers.record(spec, failure.as_ref());
                        let scoring = looped::LoopScoring {
                            suite,
                            case,
                            scorer,
                            tool_tokens: plan.trial_tool_tokens(t),
                            price,
                        };
                        looped::score(&scoring, outcome, &mut record);
                        let rubric = judged::LoopRubric {
                            case,
                            tools: &tools,
                            context,
                            key: &judge_key,
                        };
                        judged::loop_rubric(
                            options.judge.as_deref(),
                            &rubric,
                            &mut record,
                            &control.breakers,
                        )
                        .await;
                    }
                    Err(message) => {
                        record.reasons.push(Reason::new("provider_error", message));
                        record.messages = plan.request(t).0.messages;
                    }
                }
                distractor_facts(plan, t, &mut record);
                return (index, record);
            }
            // The provider's work (building the body, HTTP, parsing the answer) runs as
            // its own task, so on a multi-thread runtime the answers of a wave are
            // handled in parallel instead of one after another in this driver task.
            let judge_key = key.clone();
            let (request, result) = match provider {
                Some(p) => {
                    let task = tokio::spawn(async move {
                        let result = p.complete(&request, &key).await;
                        let failure = result
                            .as_ref()
                            .err()
                            .and_then(|e| breaker::classify(e, p.endpoint().as_ref()));
                        (request, result, failure)
                    });
                    match task.await {
                        Ok((request, result, failure)) => {
                            control.breakers.record(spec, failure.as_ref());
                            (request, result.map_err(|e| e.to_string()))
                        }
                        Err(e) => {
                            let (request, _) = plan.request(t);
                            (request, Err(format!("the provider task failed: {e}")))
                        }
                    }
                }
                None => (
                    request,
                    Err(format!("no provider for target `{}`", cell.target.spec)),
                ),
            };
            match result {
                Ok(mut response) => {
                    if response.usage.is_none() {
                        let tool_tokens = plan.trial_tool_tokens(t);
                        response.usage =
                            Some(tokens::estimate_usage(&request, &response, tool_tokens));
                    }
                    let asked = judged::SingleTurn::new(
                        case,
                        scorer,
                        &cell.tool_choice,
                        &request,
                        &response,
                        &judge_key,
                    );
                    let judged =
                        judged::single_turn(options.judge.as_deref(), &asked, &control.breakers)
                            .await;
                    record.judge = judged.calls;
                    let (checks, reasons) = scorer.score_judged(
                        &cell.variant,
                        &cell.tool_choice,
                        &response,
                        judged.verdicts.as_ref(),
                    );
                    if let Some(reason) = judged.error {
                        // No verdict without the judge's: the answer is kept (its
                        // tokens were spent), the trial is an error.
                        record.reasons = vec![reason];
                    } else {
                        record.verdict = if reasons.is_empty() {
                            Verdict::Pass
                        } else {
                            Verdict::Fail
                        };
                        record.reasons = reasons;
                        record.checks = Some(checks);
                    }
                    if let (Some(p), Some(u)) = (price, response.usage) {
                        record.cost_usd = Some(p.cost(u.input_tokens, u.output_tokens));
                    }
                    record.response = Some(response);
                }
                Err(message) => record.reasons.push(Reason::new("provider_error", message)),
            }
            record.messages = request.messages;
            distractor_facts(plan, t, &mut record);
            (index, record)
        }
    };
    // The source is pulled only when a slot frees up, so checking the stop flag here
    // stops new trials without touching the ones in flight.
    let pending = trials
        .into_iter()
        .enumerate()
        .take_while(|_| !control.is_stopped());
    let mut stream = futures::stream::iter(pending)
        .map(run_one)
        .buffer_unordered(options.concurrency.max(1));
    let mut done = Vec::new();
    loop {
        tokio::select! {
            // Notes first: a trial's rounds are told before it finishes.
            biased;
            Some(note) = heard.recv() => fanout.note(note, control),
            next = stream.next() => {
                let Some((index, record)) = next else { break };
                while let Ok(note) = heard.try_recv() {
                    fanout.note(note, control);
                }
                fanout.tell(&RunEvent::TrialFinished { index, record: &record }, control);
                done.push((index, record));
            }
        }
    }
    // Release what the host kept for the whole run (a shared server process).
    host.shutdown().await;
    fanout.tell_stop(control);
    done
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
