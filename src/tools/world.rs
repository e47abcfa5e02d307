//! The world host: a case's built-in stateful world (`world:`) answers its calls, with
//! the mock rules in front of it.
//!
//! Each episode opens a fresh instance of the case's world ([`ToolHost::open_episode`]),
//! so trials never see each other's changes. A world answers a call when it is prepared,
//! in call order, under a lock: the world's state then moves in the order the model made
//! the calls, whatever order a turn's executions would finish in, as the host contract
//! asks of every state change. A tool a `result` or `error` mock rule pins is answered
//! by the rules instead; a case without a world is answered by the mocks alone, exactly
//! as [`MockHost`] answers it.

use std::sync::Mutex;

use async_trait::async_trait;

use super::{
    Approval, Decision, EpisodeState, HostError, Invocation, MockHost, Session, ToolHost,
    ToolOutcome,
};
use crate::suite::world::WorldInstance;

/// The mocks, then the case's world.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorldHost;

/// One episode's world instance, kept in its session.
struct Open(Mutex<Box<dyn WorldInstance>>);

impl WorldHost {
    /// The call of `call` on the session's world, if the session has one and no mock
    /// rule pins the tool.
    fn on_world(session: &Session, call: &Invocation) -> Option<ToolOutcome> {
        if session.spec().mocks.pins(&call.name) {
            return None;
        }
        let open = session.state::<Open>()?;
        let mut world = open.0.lock().unwrap_or_else(|e| e.into_inner());
        let answer = world.call(&call.name, &call.arguments);
        Some(ToolOutcome {
            content: answer.content,
            is_error: answer.is_error,
            error_kind: None,
            fault: false,
            approval: Approval::NotRequired,
            executed: true,
            rule_line: None,
            elapsed_ms: 0.0,
            mcp: None,
        })
    }
}

#[async_trait]
impl ToolHost for WorldHost {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        MockHost.list(session).await
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        match Self::on_world(session, call) {
            Some(outcome) => Decision::Settled(outcome),
            None => MockHost.prepare(session, call),
        }
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        MockHost.execute(call).await
    }

    /// The suite's own calls after the episode (`expect.end_state`) run on the world.
    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        match Self::on_world(session, call) {
            Some(outcome) => Ok(outcome),
            None => Err(HostError::Failed {
                host: "world",
                tool: call.name.clone(),
                message: "the case has no world to answer this call".into(),
            }),
        }
    }

    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        let Some(world) = session.spec().world.clone() else {
            return Ok(());
        };
        let instance = world.open().map_err(|message| HostError::Unavailable {
            host: "world",
            message: format!("the `{}` world could not start: {message}", world.name()),
        })?;
        session.set_state(EpisodeState(std::sync::Arc::new(Open(Mutex::new(
            instance,
        )))));
        Ok(())
    }

    async fn close_episode(&self, session: &mut Session) {
        session.take_state();
    }

    fn world_state(&self, session: &Session) -> Option<serde_json::Value> {
        let open = session.state::<Open>()?;
        let world = open.0.lock().unwrap_or_else(|e| e.into_inner());
        Some(world.state())
    }
}
