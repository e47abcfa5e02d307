//! Running a plan: every trial takes the same path, and every finished trial is streamed
//! to the caller (journal, progress) as it completes.
//!
//! 1. **Play** (`play`): take a slot of `-j`, check the target's breaker, and have the
//!    target answer: one round for a case without a tool loop, an episode of rounds
//!    against the suite's tool host for one with `mocks`.
//! 2. **Judge** (`trial`): hand what happened to the judge stage
//!    ([`crate::judge::stage`], asking the judge model first where the case needs it),
//!    which returns a [`crate::judge::Judgement`].
//! 3. **Record**: build the trial's record from the judgement, and tell the observers.
//!
//! A target whose failures will repeat for every trial is stopped ([`breaker`]).

pub mod breaker;
pub mod events;
#[cfg(test)]
mod events_tests;
pub mod journal;
pub mod judged;
pub mod matrix;
mod play;
pub mod select;
mod trial;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use events::{RunEvent, RunObserver};
pub use matrix::{Cell, Plan, PlannedTrial};

use crate::judge::CaseScorer;
use crate::provider::Provider;
use crate::score::TrialRecord;
use crate::score::prices::PriceTable;

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
        let cell = &plan.cells[t.cell];
        let case = &suite.cases[t.case];
        let provider = providers
            .get(
                crate::score::stream::identity_target(&cell.target.spec, cell.target.stream)
                    .as_ref(),
            )
            .cloned();
        // One host answers every loop trial of the suite; each episode opens its own
        // session. A trial of one round needs none.
        let episode = case.episode.clone().map(|spec| (spec, host.clone()));
        let scorer = &scorers[t.case];
        let price = prices[t.cell];
        let (request, key) = plan.request(t);
        // The judge model's requests are stored under the trial's key too.
        let judge_key = key.clone();
        let play = play::Play {
            provider,
            spec: cell.target.spec.clone(),
            request,
            key,
            index,
            claim: Claim::new(&slots),
            control: control.clone(),
            notes: notes.clone(),
            // An episode keeps its slot until it was told, as a paced trial does.
            keep_slot: paced || episode.is_some(),
            episode,
        };
        async move {
            // Played on a task of its own (building the body, HTTP, parsing the answer,
            // the rounds of an episode), so the answers of a wave are handled in parallel
            // on a multi-thread runtime instead of one after another in this task.
            let played = match tokio::spawn(play::play(play)).await {
                Ok(played) => played,
                Err(e) => {
                    let what = if case.episode.is_some() {
                        "episode"
                    } else {
                        "provider"
                    };
                    let message = format!("the {what} task failed: {e}");
                    return Some((index, trial::task_failed(plan, t, message), None));
                }
            };
            let finish = trial::Finish {
                plan,
                t,
                scorer,
                price,
                judge: options.judge.as_deref(),
                breakers: &control.breakers,
                key: &judge_key,
            };
            let (record, slot) = trial::finish(&finish, played).await?;
            Some((index, record, slot))
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
