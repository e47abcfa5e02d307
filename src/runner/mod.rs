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
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use events::{RunEvent, RunObserver};
pub use matrix::{Cell, Plan, PlannedTrial};

use crate::judge::CaseScorer;
use crate::judge::calls::Reason;
use crate::provider::{Provider, Request, TrialKey};
use crate::score::prices::PriceTable;
use crate::score::{TrialRecord, Verdict, tokens};

/// Why a run stopped before every trial ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStop {
    /// Ctrl-C (SIGINT).
    Interrupted,
    /// A `--max-cost` or `--max-tokens` budget was exceeded; the text says which.
    Budget(String),
}

impl std::fmt::Display for RunStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunStop::Interrupted => f.write_str("interrupted (Ctrl-C)"),
            RunStop::Budget(what) => write!(f, "budget exceeded: {what}"),
        }
    }
}

/// Lets a run be stopped from outside (a signal, a budget): no new trial starts, the
/// ones in flight finish (or time out) and are written.
#[derive(Debug, Default)]
pub struct RunControl {
    stopped: AtomicBool,
    reason: Mutex<Option<RunStop>>,
    /// Targets stopped for failures that repeat (a refused key, a server that is down).
    pub breakers: breaker::Breakers,
}

impl RunControl {
    /// Stop starting trials; the first reason given is kept.
    pub fn stop(&self, reason: RunStop) {
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
    pub fn reason(&self) -> Option<RunStop> {
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
/// At most `options.concurrency` trials are in flight. When `control` is stopped, no
/// further trial starts; those already started finish and are reported.
///
/// Single-turn trials take their slot in the provider's task and, unless an observer may
/// stop the run or a judge scores the answers, give it back there as soon as the answer
/// is in: a prepared trial's request then goes out at once, while this task scores the
/// answer and tells the observers, instead of after.
pub async fn execute(
    plan: &Plan,
    trials: Vec<PlannedTrial>,
    providers: &HashMap<String, Arc<dyn Provider>>,
    options: &RunOptions,
    control: &Arc<RunControl>,
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
    let concurrency = options.concurrency.max(1);
    let slots = Arc::new(Semaphore::new(concurrency));
    // Paced: a slot is given back only once its trial was told to every observer, so a
    // budget's stop holds back the next trial, and a judge's calls count in the slot.
    let paced = fanout.paces() || options.judge.is_some();
    // Unpaced, as many trials again are prepared and wait for a slot.
    let ahead = if paced { 0 } else { concurrency };
    // One host answers every loop trial of the suite; each episode opens its own session.
    // A suite whose `tools_from` names an MCP server executes its loop calls there.
    let host = crate::mcp::host::suite_host(suite);
    let run_one = |(index, t): (usize, PlannedTrial)| {
        let host = host.clone();
        let notes = notes.clone();
        let slots = slots.clone();
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
            if case.episode.is_none()
                && let Some(p) = provider.clone()
            {
                // The provider's work (building the body, HTTP, parsing the answer) runs
                // as its own task, so on a multi-thread runtime the answers of a wave are
                // handled in parallel instead of one after another in this driver task.
                let judge_key = key.clone();
                let task = tokio::spawn(call(Call {
                    provider: p,
                    request,
                    key,
                    spec: spec.clone(),
                    index,
                    claim: Claim::new(&slots),
                    control: control.clone(),
                    notes,
                    keep_slot: paced,
                }));
                let (request, result, slot) = match task.await {
                    Ok(Called::NotStarted) => return None,
                    Ok(Called::Refused { request, why, slot }) => {
                        not_run(&mut record, why, request);
                        return Some((index, record, Some(slot)));
                    }
                    Ok(Called::Answered {
                        request,
                        result,
                        slot,
                    }) => (request, result, slot),
                    Err(e) => {
                        let (request, _) = plan.request(t);
                        (request, Err(format!("the provider task failed: {e}")), None)
                    }
                };
                match result.map(|r| *r) {
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
                        let judged = judged::single_turn(
                            options.judge.as_deref(),
                            &asked,
                            &control.breakers,
                        )
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
                return Some((index, record, slot));
            }
            // Every other trial takes its slot here and keeps it until it was told.
            let slot = take_slot(Claim::new(&slots), control, &notes, index).await?;
            // A stopped target's remaining trials end as errors that say why, at once.
            if let Some(why) = control.breakers.stopped(spec) {
                not_run(&mut record, why, request);
                return Some((index, record, Some(slot)));
            }
            let Some(p) = provider else {
                record.reasons.push(Reason::new(
                    "provider_error",
                    format!("no provider for target `{}`", cell.target.spec),
                ));
                record.messages = request.messages;
                return Some((index, record, Some(slot)));
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
            Some((index, record, Some(slot)))
        }
    };
    // The source is pulled only when there is room for another trial, so checking the
    // stop flag here (and again when a prepared trial gets its slot) stops new trials
    // without touching the ones in flight.
    let pending = trials
        .into_iter()
        .enumerate()
        .take_while(|_| !control.is_stopped());
    let mut stream = futures::stream::iter(pending)
        .map(run_one)
        .buffer_unordered(concurrency + ahead);
    let mut done = Vec::new();
    loop {
        tokio::select! {
            // Notes first: a trial's rounds are told before it finishes.
            biased;
            Some(note) = heard.recv() => fanout.note(note, control),
            next = stream.next() => {
                let Some(finished) = next else { break };
                // A prepared trial that found the run stopped did not start.
                let Some((index, record, slot)) = finished else { continue };
                while let Ok(note) = heard.try_recv() {
                    fanout.note(note, control);
                }
                fanout.tell(&RunEvent::TrialFinished { index, record: &record }, control);
                // Given back only now, when paced (see above).
                drop(slot);
                done.push((index, record));
            }
        }
    }
    // Release what the host kept for the whole run (a shared server process).
    host.shutdown().await;
    fanout.tell_stop(control);
    done
}

/// A trial's slot: held while it is in flight.
type Slot = OwnedSemaphorePermit;

/// A prepared trial's claim on a slot: one that was free when the trial was prepared, or
/// a place in the queue for the next one.
enum Claim {
    Free(Slot),
    Queued(Arc<Semaphore>),
}

impl Claim {
    /// Claimed when the trial is prepared, so free slots go to trials in the order they
    /// are prepared (at -j 1, plan order) rather than to whichever task runs first.
    fn new(slots: &Arc<Semaphore>) -> Claim {
        match slots.clone().try_acquire_owned() {
            Ok(slot) => Claim::Free(slot),
            Err(_) => Claim::Queued(slots.clone()),
        }
    }
}

/// Take the claimed slot, waiting for one if need be, unless the run was stopped
/// meanwhile (a prepared trial then does not start); tell that the trial started.
async fn take_slot(
    claim: Claim,
    control: &RunControl,
    notes: &UnboundedSender<events::Note>,
    index: usize,
) -> Option<Slot> {
    let slot = match claim {
        Claim::Free(slot) => slot,
        Claim::Queued(slots) => slots.acquire_owned().await.ok()?,
    };
    if control.is_stopped() {
        return None;
    }
    let _ = notes.send(events::Note::Started(index));
    Some(slot)
}

/// End `record` as an error: its target was stopped by its breaker.
fn not_run(record: &mut TrialRecord, why: String, request: Request) {
    record
        .reasons
        .push(Reason::new("provider_error", format!("not run: {why}")));
    record.messages = request.messages;
}

/// A single-turn trial's provider call, run as a task of its own.
struct Call {
    provider: Arc<dyn Provider>,
    request: Request,
    key: TrialKey,
    spec: String,
    index: usize,
    claim: Claim,
    control: Arc<RunControl>,
    notes: UnboundedSender<events::Note>,
    /// Return the slot with the answer (paced) rather than give it back at once.
    keep_slot: bool,
}

/// What a [`Call`] came to.
enum Called {
    /// The run was stopped before the trial got its slot.
    NotStarted,
    /// Its target had been stopped by the breaker.
    Refused {
        request: Request,
        why: String,
        slot: Slot,
    },
    /// The provider answered, or failed.
    Answered {
        request: Request,
        /// Boxed: a response is large beside the other outcomes.
        result: Result<Box<crate::provider::Response>, String>,
        /// The slot, when it is given back only after the trial was told.
        slot: Option<Slot>,
    },
}

/// Take a slot, send the request, and record the outcome with the target's breaker.
async fn call(c: Call) -> Called {
    let Some(slot) = take_slot(c.claim, &c.control, &c.notes, c.index).await else {
        return Called::NotStarted;
    };
    // A stopped target's remaining trials end as errors that say why, at once.
    if let Some(why) = c.control.breakers.stopped(&c.spec) {
        return Called::Refused {
            request: c.request,
            why,
            slot,
        };
    }
    let result = c.provider.complete(&c.request, &c.key).await;
    let failure = result
        .as_ref()
        .err()
        .and_then(|e| breaker::classify(e, c.provider.endpoint().as_ref()));
    c.control.breakers.record(&c.spec, failure.as_ref());
    // Unpaced, the slot is free from here: the next prepared trial's request goes out
    // while this answer is scored.
    let slot = c.keep_slot.then_some(slot);
    Called::Answered {
        request: c.request,
        result: result.map(Box::new).map_err(|e| e.to_string()),
        slot,
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
