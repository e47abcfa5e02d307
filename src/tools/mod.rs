//! Tool hosts: what answers the model's tool calls inside an episode.
//!
//! A [`ToolHost`] lists the tools it answers and answers calls. Hosts stack: the
//! [`MockHost`] answers from a suite's `mocks` rules, [`Faults`] wraps any host and
//! injects failures (the suite's `fail:` rules, or "fail the Nth call" set in code);
//! a case's built-in stateful world stands behind the mocks ([`WorldHost`]); an MCP
//! server is one ([`crate::mcp::host::McpHost`]).
//!
//! One host serves a whole suite; each episode (trial) opens a [`Session`] that holds
//! its state (call counts, fault counters). A turn's calls are answered in two phases
//! ([`run_turn`]): each call is first *prepared* in the order the model made them,
//! which is where rules are matched, counters move and faults are decided, so the
//! outcome never depends on timing; the calls that need real work are then *executed*
//! concurrently, and their results come back in call order whatever order they finish in.
//!
//! A host with per-episode resources (a server process per trial) sets them up in
//! [`ToolHost::open_episode`], keeps them in the session ([`EpisodeState`]) and releases
//! them in [`ToolHost::close_episode`]; the mock host has none, so those default to nothing.

pub mod call_log;
mod faults;
mod mock;
mod outcome;
mod session;
mod turn;
mod world;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use faults::{Fault, Faults};
pub use mock::MockHost;
pub use outcome::{Approval, ToolOutcome};
pub use session::{Counters, EpisodeState, Session};
pub use turn::run_turn;
pub use world::WorldHost;

/// The kind of a tool error, owned by the suite layer (whose mock rules declare kinds)
/// and named here too because every host answers with it.
pub use crate::suite::tool_error::ToolErrorKind;

/// One call as a host sees it: the tool, its arguments (already a JSON object), and its
/// place in the episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// 1-based number of this call among all calls of the episode.
    pub seq: u32,
    /// 1-based number of this call among the episode's calls of the same tool.
    pub tool_seq: u32,
    /// 1-based number of this call among the episode's calls of the same tool with the
    /// same arguments (2 and up: a repeat).
    pub repeat: u32,
    /// The tool name the model called.
    pub name: String,
    /// The arguments.
    pub arguments: Map<String, Value>,
}

/// What preparing a call decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The outcome is known now (a mock rule, an injected fault).
    Settled(ToolOutcome),
    /// The host must do real work: call [`ToolHost::execute`].
    Execute,
}

/// Something that answers tool calls.
#[async_trait]
pub trait ToolHost: Send + Sync + fmt::Debug {
    /// The tools this host answers in `session`.
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError>;

    /// Decide `call`, in call order: match rules, move counters, inject faults. This is
    /// the only place session state changes, so outcomes are the same however the
    /// executions of one turn interleave.
    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision;

    /// Carry out a call [`ToolHost::prepare`] left to execute; calls of one turn run
    /// concurrently.
    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError>;

    /// [`ToolHost::execute`] with the episode's session at hand, for hosts whose calls
    /// need what [`ToolHost::open_episode`] set up (an MCP server's connection). The
    /// session is shared, not mutable: state changes belong to `prepare`.
    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        let _ = session;
        self.execute(call).await
    }

    /// Set up what one episode needs before its first round (e.g. a connection to a
    /// server, a fresh server per trial), kept in `session` ([`Session::set_state`]).
    /// Hosts without per-episode resources need nothing.
    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        let _ = session;
        Ok(())
    }

    /// Release what [`ToolHost::open_episode`] set up; called once the episode ended,
    /// however it ended.
    async fn close_episode(&self, session: &mut Session) {
        let _ = session;
    }

    /// Release what the host shares between episodes (a server connection kept for a
    /// whole run); called once, after the run's last episode.
    async fn shutdown(&self) {}

    /// The state of the episode's built-in world as JSON (`expect.end_state`'s `state`
    /// entries); `None` for hosts without one.
    fn world_state(&self, session: &Session) -> Option<Value> {
        let _ = session;
        None
    }
}

/// A host that could not answer at all (an infrastructure failure, never the model's):
/// the episode ends in an error rather than a verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// The host failed to carry out a call.
    #[error("tool host `{host}` failed to answer a call of `{tool}`: {message}")]
    Failed {
        /// Which host.
        host: &'static str,
        /// The tool called.
        tool: String,
        /// What went wrong.
        message: String,
    },
    /// The host could not set up an episode (e.g. its server could not be reached), so
    /// no round was played.
    #[error("tool host `{host}` could not start the episode: {message}")]
    Unavailable {
        /// Which host.
        host: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// The host for suites with `mocks` or `world:` cases: the suite's rules, then the
/// case's world if it has one ([`WorldHost`]), with the `fail:` rules injected in front.
pub fn suite_host() -> Arc<dyn ToolHost> {
    Arc::new(Faults::new(Arc::new(WorldHost)))
}

#[cfg(test)]
mod testutil;
