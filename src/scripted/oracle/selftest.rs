//! The oracle's self-test of a loop case: play the whole episode against the suite's
//! mocks or the case's built-in world (the same runner and tool host a run uses) and
//! judge it, so what no model can satisfy is named before a model is paid for.
//!
//! Offline means without the suite's MCP server: a call that would go to the server
//! (a tool the case does not pin with mocks, see
//! [`crate::suite::loops::MockTable::pins`]) has no result here, and every check after
//! it would be judged on a result the server never gave. So the episode stops at that
//! call and the self-test says it cannot judge the rest offline ([`LoopCheck::live`]),
//! rather than claiming that no model can pass: the run's own trials, played against
//! the server, are the check of those.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::episode::{Conduct, answer_round};
use super::merge;
use crate::chat::{ToolChoice, ToolDefinition};
use crate::judge::calls::CaseScorer;
use crate::judge::{JudgeInput, judge_episode};
use crate::provider::{Provider, ProviderError, Request, Response, TrialKey};
use crate::suite::trajectory::LoopExpectation;
use crate::suite::{Case, Expectation, Suite};
use crate::tools::{
    Decision, Faults, HostError, Invocation, MockHost, Session, ToolHost, ToolOutcome, WorldHost,
};

/// What the self-test found in one episode of a loop case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopCheck {
    /// What no model can satisfy (empty when the oracle passes, or when nothing it
    /// could judge offline failed).
    pub unmet: Vec<String>,
    /// The first call that would go to the live MCP server (`round N: \`TOOL\``, and
    /// the case's episode checks left unjudged): the episode stopped there, so its
    /// later checks could not be judged offline.
    pub live: Option<String>,
}

/// What the oracle can not satisfy in an episode of loop case `case` under `mode`
/// (and `variant`, `None` for the tools' own schemas), offered `tools`: what it noted
/// while playing, the reasons an explicit `calls` expectation gives its first round,
/// and the judge's reasons against the whole episode. Empty when it passes, and for a
/// case that is not a loop. See [`loop_check`] for episodes that reach a live server.
pub fn loop_unmet(
    suite: &Suite,
    case: &Case,
    variant: Option<&str>,
    mode: &ToolChoice,
    tools: &[ToolDefinition],
) -> Vec<String> {
    loop_check(suite, case, variant, mode, tools).unmet
}

/// [`loop_unmet`], and whether the episode needed the suite's live MCP server. When it
/// did, the episode stopped at that call: what the oracle noted before it and the first
/// round's checks still count; the judge's checks of the episode are not made (they
/// would judge results the server never gave).
pub fn loop_check(
    suite: &Suite,
    case: &Case,
    variant: Option<&str>,
    mode: &ToolChoice,
    tools: &[ToolDefinition],
) -> LoopCheck {
    let Some(spec) = case.episode.clone() else {
        return LoopCheck::default();
    };
    let v = variant.unwrap_or("default");
    let first = Request {
        messages: suite.messages_in(case, v).into_owned(),
        tools: Arc::new(tools.to_vec()),
        tool_choice: mode.clone(),
    };
    let key = TrialKey {
        case_id: case.id.clone(),
        target: "scripted:oracle".into(),
        variant: v.to_string(),
        tool_choice: mode.clone(),
        repeat: 0,
    };
    let player = Player {
        suite,
        case,
        variant: v,
        notes: Mutex::default(),
    };
    let offline = Arc::new(Offline {
        server: suite
            .mcp
            .as_ref()
            .and_then(|m| m.server.as_ref())
            .map(ToString::to_string),
        reached: Mutex::default(),
    });
    let host = Faults::new(offline.clone());
    // The scripted model answers at once and the mock host settles every call when it
    // is prepared (a server's call ends the episode), so the episode needs no
    // runtime's timers or sockets.
    let out = futures::executor::block_on(crate::episode::run_episode(
        &player, &host, spec, first, &key,
    ));
    let reached = offline
        .reached
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let live = reached.map(|tool| {
        let at = match &out.end {
            Err(crate::episode::EpisodeError::Host { round, .. }) => format!("round {round}: "),
            _ => String::new(),
        };
        format!("{at}`{tool}`{}", unjudged(case))
    });
    let mut what = player.notes.into_inner().unwrap_or_else(|e| e.into_inner());
    let (_, expect) = case.effective(mode);
    let explicit = !matches!(expect, Expectation::Calls(c) if c.calls.is_empty());
    if explicit && let Some(r) = out.rounds.first() {
        let scorer = CaseScorer::new(suite, case);
        let (_, reasons) = match variant {
            Some(v) => scorer.score_variant(v, mode, &r.response),
            None => scorer.score(mode, &r.response),
        };
        what = merge(
            what,
            reasons
                .into_iter()
                .map(|r| format!("first round: {}: {}", r.code, r.message))
                .collect(),
        );
    }
    if live.is_some() {
        return LoopCheck { unmet: what, live };
    }
    match out.transcript() {
        Ok(episode) => {
            let none = LoopExpectation::default();
            let traits = crate::episode::tool_traits(suite, case);
            let input = JudgeInput {
                expect: case.loop_expect.as_ref().unwrap_or(&none),
                tools: &traits,
                norm: suite.norm,
            };
            let (mut reasons, _) = judge_episode(&input, &episode);
            // A pass on a call no one answered is no pass (see the judge stage).
            if reasons.is_empty() {
                reasons.extend(crate::judge::stage::unanswered(&out));
            }
            what = merge(
                what,
                reasons
                    .into_iter()
                    .map(|r| format!("{}: {}", r.code, r.message))
                    .collect(),
            );
        }
        Err(e) => what.push(format!("the episode could not be played: {e}")),
    }
    LoopCheck {
        unmet: what,
        live: None,
    }
}

/// The episode checks a case gives, which an episode stopped at a server call leaves
/// unjudged: ` (not judged offline: \`final\`, …)`, or nothing when it gives none (the
/// behaviours every loop is checked for are left unjudged too, and go without saying).
fn unjudged(case: &Case) -> String {
    let Some(e) = &case.loop_expect else {
        return String::new();
    };
    let given = [
        ("trajectory", e.trajectory.is_some()),
        ("never", !e.never.is_empty()),
        ("final", e.final_answer.is_some()),
        ("stop", e.stop.is_some()),
    ];
    let keys: Vec<String> = given
        .iter()
        .filter(|(_, g)| *g)
        .map(|(k, _)| format!("`{k}`"))
        .collect();
    if keys.is_empty() {
        return String::new();
    }
    format!(" (not judged offline: {})", keys.join(", "))
}

/// The self-test's tool host: the suite's mocks, and in place of its MCP server a stop.
/// A call the server would answer is left to execute, and executing it fails, which
/// ends the episode there; `reached` says which call it was.
#[derive(Debug)]
struct Offline {
    /// The suite's server as written, when it names one.
    server: Option<String>,
    /// The tool of the first call left to the server.
    reached: Mutex<Option<String>>,
}

#[async_trait]
impl ToolHost for Offline {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        MockHost.list(session).await
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        let spec = session.spec();
        // The same split as the MCP host's: tools the case pins are the mocks'.
        let servers = self.server.is_some()
            && spec.tools.contains(&call.name)
            && !spec.mocks.pins(&call.name);
        if !servers {
            // A case's built-in world runs offline as in a run (the world host falls
            // back to the mocks for a case without one).
            return WorldHost.prepare(session, call);
        }
        let mut reached = self.reached.lock().unwrap_or_else(|e| e.into_inner());
        if reached.is_none() {
            *reached = Some(call.name.clone());
        }
        Decision::Execute
    }

    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        if session.spec().world.is_some() {
            return WorldHost.execute_in(session, call).await;
        }
        self.execute(call).await
    }

    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        WorldHost.open_episode(session).await
    }

    async fn close_episode(&self, session: &mut Session) {
        WorldHost.close_episode(session).await;
    }

    fn world_state(&self, session: &Session) -> Option<serde_json::Value> {
        WorldHost.world_state(session)
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        Err(HostError::Failed {
            host: "offline",
            tool: call.name.clone(),
            message: format!(
                "the self-test has no MCP server: `{}` would run on `{}`",
                call.name,
                self.server.as_deref().unwrap_or_default()
            ),
        })
    }
}

/// The oracle as a provider, keeping what it could not satisfy in each round.
struct Player<'a> {
    suite: &'a Suite,
    case: &'a Case,
    variant: &'a str,
    notes: Mutex<Vec<String>>,
}

#[async_trait]
impl Provider for Player<'_> {
    async fn complete(&self, request: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
        let a = answer_round(
            self.suite,
            self.case,
            self.variant,
            request,
            Conduct::Oracle,
            false,
        );
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        let merged = merge(std::mem::take(&mut *notes), a.unmet);
        *notes = merged;
        Ok(a.response)
    }

    fn source(&self) -> String {
        "scripted:oracle (self-test)".into()
    }
}
