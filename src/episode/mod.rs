//! The episode runner: a trial as a loop of rounds.
//!
//! [`run_episode`] sends the conversation to a [`Provider`](crate::provider::Provider),
//! appends the assistant turn, has a [`ToolHost`](crate::tools::ToolHost) answer the
//! turn's calls ([`crate::tools::run_turn`]: concurrent, results in call order), appends
//! one tool message per call and asks again, until the model answers in text after the
//! last scripted user turn (`turns:`) or a limit stops it ([`limits`]).
//!
//! The history is shared, not copied per round: the first
//! [`Request`](crate::provider::Request) is moved in and
//! its `messages` grow in place (the tool definitions stay one shared `Arc`), so a round
//! costs the messages it adds; a round's record keeps how many messages were sent, not
//! a copy of them ([`EpisodeOutcome::sent`] slices the final conversation). Live
//! providers still serialise the whole conversation on every request, as the stateless
//! APIs require.
//!
//! The outcome keeps every round (the response with its usage and latency, the tool
//! outcomes with their times) and why the loop ended: a [`StopReason`], or an
//! [`EpisodeError`] when the provider or the tool host failed (an infrastructure
//! failure, never the model's; the rounds before it are kept). [`EpisodeOutcome::transcript`]
//! builds the judge's [`Episode`](crate::judge::Episode).

pub mod limits;
mod run;
pub mod transcript;
pub mod view;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod world_tests;

use serde::{Deserialize, Serialize};

use crate::chat::Message;
use crate::provider::{ProviderError, Response, Usage};
use crate::suite::trajectory::StopReason;
use crate::tools::{HostError, ToolOutcome};

pub use run::{LARGE_RESULT_CHARS, run_episode, run_episode_observed};
pub use transcript::tool_traits;

/// One round: one provider request, its answer and the answers to its calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// How many messages the request of this round carried (the conversation so far);
    /// [`EpisodeOutcome::sent`] gives them.
    pub sent: usize,
    /// The scripted user turn appended before this round (`None` for the first round
    /// and for rounds that continue after tool results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The provider's answer, its calls' missing ids assigned
    /// ([`Response::assign_missing_ids`]) and the ids an earlier round used replaced
    /// ([`Response::rename_reused_ids`], with a warning); usage and latency as reported.
    pub response: Response,
    /// The answers to the response's calls, in call order; empty when the turn made no
    /// calls or a limit stopped the loop before they were executed (see [`limits`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<ToolOutcome>,
    /// Wall time of answering the turn's calls in milliseconds (they run concurrently,
    /// so this can be less than the sum of the outcomes' times); 0 when none ran.
    pub tool_ms: f64,
}

impl RoundRecord {
    /// Whether this round's calls were executed (false when it made none, or a limit
    /// stopped the loop before them).
    pub fn executed(&self) -> bool {
        !self.outcomes.is_empty()
    }
}

/// Why an episode could not finish: an infrastructure failure, never the model's.
#[derive(Debug, thiserror::Error)]
pub enum EpisodeError {
    /// The provider failed to answer the request of round `round`.
    #[error("round {round}: {source}")]
    Provider {
        /// 1-based number of the round whose request failed.
        round: usize,
        /// The provider's error.
        source: ProviderError,
    },
    /// The tool host failed to answer the calls of round `round`.
    #[error("round {round}: {source}")]
    Host {
        /// 1-based number of the round whose calls the host could not answer.
        round: usize,
        /// The host's error.
        source: HostError,
    },
}

/// Everything one episode produced.
#[derive(Debug)]
pub struct EpisodeOutcome {
    /// The whole conversation: the case's messages, then every message the episode
    /// added (assistant turns, tool results, scripted user turns), in order.
    pub messages: Vec<Message>,
    /// How many of `messages` the case started with.
    pub context: usize,
    /// Every round that got an answer, in order.
    pub rounds: Vec<RoundRecord>,
    /// Why the loop stopped, or the failure that ended it.
    pub end: Result<StopReason, EpisodeError>,
    /// The `expect.end_state` calls made on the session after the episode (none when
    /// a failure ended it).
    pub end_state: Vec<view::EndStateResult>,
}

impl EpisodeOutcome {
    /// The messages the request of round `round` (0-based) sent.
    pub fn sent(&self, round: usize) -> &[Message] {
        &self.messages[..self.rounds[round].sent]
    }

    /// The messages round `round` (0-based) added after its answer: the assistant turn
    /// and its tool results (a following scripted user turn belongs to the next round).
    pub fn added(&self, round: usize) -> &[Message] {
        let start = self.rounds[round].sent;
        let end = match self.rounds.get(round + 1) {
            Some(next) => next.sent - usize::from(next.user.is_some()),
            None => self.messages.len(),
        };
        &self.messages[start..end.max(start)]
    }

    /// The stop reason, when the episode was not ended by a failure.
    pub fn stop(&self) -> Option<StopReason> {
        self.end.as_ref().ok().copied()
    }

    /// Tool calls answered (executed by the host, denied or refused) in the episode.
    pub fn tool_calls(&self) -> usize {
        self.rounds.iter().map(|r| r.outcomes.len()).sum()
    }

    /// The summed usage of every round, `None` when no round reported one.
    pub fn usage(&self) -> Option<Usage> {
        self.rounds
            .iter()
            .filter_map(|r| r.response.usage)
            .reduce(Usage::plus)
    }

    /// Time spent waiting for the model and for the tools, in milliseconds.
    pub fn times_ms(&self) -> (f64, f64) {
        self.rounds.iter().fold((0.0, 0.0), |(m, t), r| {
            (m + r.response.latency_ms, t + r.tool_ms)
        })
    }
}
