//! Playing one trial: take its slot, and have its target answer it, on a task of its own
//! (so the answers of a wave are handled in parallel).
//!
//! Every trial is played the same way: a slot, the target's breaker, then the trial
//! itself. A case without a tool loop is one round: one request to the provider, no tool
//! host. A case with a tool loop is an episode of rounds ([`crate::episode`]) against the
//! suite's tool host, each finished round told to the run's observers. Either way the
//! breaker hears how the provider did, and what happened goes to the judge stage
//! ([`super::trial`]).

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::events::Note;
use super::{Claim, RunControl, Slot, breaker, take_slot};
use crate::chat::ToolDefinition;
use crate::episode::{EpisodeError, EpisodeOutcome, RoundRecord, run_episode_observed};
use crate::judge::Reason;
use crate::provider::{Provider, ProviderError, Request, Response, TrialKey};
use crate::suite::loops::EpisodeSpec;
use crate::tools::ToolHost;

/// One trial to play, with what its task needs.
pub(super) struct Play {
    /// The target's provider (`None`: the run has none for it).
    pub provider: Option<Arc<dyn Provider>>,
    /// The target as written, for the breaker.
    pub spec: String,
    /// The first request.
    pub request: Request,
    /// The trial.
    pub key: TrialKey,
    /// Its index among the run's trials, for events.
    pub index: usize,
    /// Its claim on a slot.
    pub claim: Claim,
    /// The run's control (stop flag, breakers).
    pub control: Arc<RunControl>,
    /// Where events are told.
    pub notes: UnboundedSender<Note>,
    /// The case's tool loop and the suite's tool host, for an episode; `None` for a
    /// trial of one round.
    pub episode: Option<(Arc<EpisodeSpec>, Arc<dyn ToolHost>)>,
    /// Return the slot with the outcome (paced: given back only once the trial was
    /// told), rather than give it back as soon as the provider answered. An episode
    /// always keeps it.
    pub keep_slot: bool,
}

/// What playing a trial came to.
pub(super) enum Played {
    /// The run was stopped before the trial got its slot: it did not start.
    NotStarted,
    /// It was not played: its target was stopped by the breaker, or has no provider.
    NotRun {
        /// The request it would have sent.
        request: Request,
        /// Why (`provider_error`).
        reason: Reason,
        /// Its slot.
        slot: Slot,
    },
    /// One round: the provider answered, or failed.
    Turn {
        /// The request sent.
        request: Request,
        /// The answer, or the provider's error as text. Boxed: a response is large
        /// beside the other outcomes.
        result: Result<Box<Response>, String>,
        /// The slot, when it is given back only after the trial was told.
        slot: Option<Slot>,
    },
    /// An episode of rounds.
    Episode {
        /// The tools the episode offered (for the judge model's view of it).
        tools: Arc<Vec<ToolDefinition>>,
        /// What the episode did.
        outcome: Box<EpisodeOutcome>,
        /// Its slot.
        slot: Slot,
    },
}

/// Take a slot, check the target's breaker, play the trial, and tell the breaker how
/// the provider did.
pub(super) async fn play(p: Play) -> Played {
    let Some(slot) = take_slot(p.claim, &p.control, &p.notes, p.index).await else {
        return Played::NotStarted;
    };
    // A stopped target's remaining trials end as errors that say why, at once.
    if let Some(why) = p.control.breakers.stopped(&p.spec) {
        return Played::NotRun {
            request: p.request,
            reason: Reason::new("provider_error", format!("not run: {why}")),
            slot,
        };
    }
    let Some(provider) = p.provider else {
        return Played::NotRun {
            request: p.request,
            reason: Reason::new(
                "provider_error",
                format!("no provider for target `{}`", p.spec),
            ),
            slot,
        };
    };
    let endpoint = provider.endpoint();
    match p.episode {
        None => {
            let result = provider.complete(&p.request, &p.key).await;
            let failure = result
                .as_ref()
                .err()
                .and_then(|e| breaker::classify(e, endpoint.as_ref()));
            p.control.breakers.record(&p.spec, failure.as_ref());
            // Unpaced, the slot is free from here: the next prepared trial's request goes
            // out while this answer is judged.
            Played::Turn {
                request: p.request,
                result: result.map(Box::new).map_err(|e| e.to_string()),
                slot: p.keep_slot.then_some(slot),
            }
        }
        Some((spec, host)) => {
            let tools = p.request.tools.clone();
            let (index, notes) = (p.index, p.notes);
            let mut round = 0;
            let on_round = |r: &RoundRecord| {
                round += 1;
                // The driver outlives every trial; a send can only fail once it has gone.
                let _ = notes.send(Note::Round {
                    index,
                    round,
                    calls: r.response.tool_calls.len(),
                    errors: r.outcomes.iter().filter(|o| o.is_error).count(),
                    usage: r.response.usage,
                });
            };
            let outcome = run_episode_observed(
                provider.as_ref(),
                host.as_ref(),
                spec,
                p.request,
                &p.key,
                on_round,
            )
            .await;
            let failure =
                provider_error(&outcome).and_then(|e| breaker::classify(e, endpoint.as_ref()));
            p.control.breakers.record(&p.spec, failure.as_ref());
            Played::Episode {
                tools,
                outcome: Box::new(outcome),
                slot,
            }
        }
    }
}

/// The provider error that ended `outcome`, if one did.
fn provider_error(outcome: &EpisodeOutcome) -> Option<&ProviderError> {
    match &outcome.end {
        Err(EpisodeError::Provider { source, .. }) => Some(source),
        _ => None,
    }
}
