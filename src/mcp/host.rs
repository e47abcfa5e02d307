//! [`McpHost`]: a [`ToolHost`] that executes a loop case's calls on a real MCP server.
//!
//! It stacks under the suite's own rules: `fail:` rules are injected by the [`Faults`]
//! wrapper, which sits in front of everything; a tool the suite pins with `result` or
//! `error` rules is answered by them ([`crate::suite::loops::MockTable::pins`]). A tool with no rules, or
//! with `fail:` rules only, is the server's: after its injected failures its calls go
//! on to the server, so a suite can pin one tool, break another for a few calls, and
//! run the rest live. Every call of a server tool the case offers is decided here, in
//! call order:
//! - a tool the server does not offer is answered as an unknown tool, not sent;
//! - a tool whose annotations say it may change the world
//!   ([`super::Annotations::may_destroy`]: not read-only and not declared harmless) is
//!   refused unless the suite allows it (`tools_from.allow_destructive`,
//!   `tools_from.allow`) or the run passes `--allow-destructive`: the model reads a
//!   plain tool error, the record says why. Annotations are the server's own, untrusted
//!   hints: this is a safety net against running a delete by accident, not a sandbox;
//! - anything else is executed with `tools/call`. A result with `isError`, or whose
//!   `structuredContent` does not satisfy the tool's `outputSchema`, goes back to the
//!   model as a tool error (that is the tool's answer); a JSON-RPC error or a transport
//!   failure is a [`HostError`], which ends the trial as an error (the harness's
//!   failure, never the model's).
//!
//! Connections: with `isolation: suite` the first episode that needs the server connects
//! and every later one shares that connection (one server process over stdio) until
//! [`ToolHost::shutdown`]; a server process that died is started again for the next
//! call. A failed connection is kept as failed, so each trial that needs it ends with
//! the same stated error rather than retrying the server each time. When the shared
//! server dies under several trials' calls at once, the call that was alone on it, or
//! that kills it again when retried alone on a fresh server, is named as the one that
//! killed it; the others were innocent and are retried once (see `McpHost::on_shared`).
//! With `isolation: trial` each episode connects afresh (a new process over stdio) and
//! [`ToolHost::close_episode`] shuts it down. An episode whose offered tools are all
//! pinned by mocks never connects, so such cases run offline.
//!
//! Each executed call keeps its exchanges with the server, verbatim, in its outcome
//! ([`McpCallLog`]): the trial record's transcript of the call.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{Mutex, RwLock};

use super::host_conn::Connection;
use super::host_log::{InputRound, LoggedExchange, McpCallLog};
use super::{CallResult, ClientOptions, McpClient, McpError, ServerSpec};
use crate::suite::Suite;
use crate::suite::mcp_calls::{Isolation, McpCalls};
use crate::suite::tools_from::McpSource;
use crate::tools::{
    Decision, EpisodeState, Faults, HostError, Invocation, MockHost, Session, ToolErrorKind,
    ToolHost, ToolOutcome,
};

/// The host name in [`HostError`]s.
const HOST: &str = "mcp";

/// Executes loop calls on an MCP server (see the module documentation).
#[derive(Debug)]
pub struct McpHost {
    server: ServerSpec,
    calls: McpCalls,
    /// The run's `--allow-destructive`.
    allow_flag: bool,
    options: ClientOptions,
    /// The connection trials share under `isolation: suite`: not yet made (`None`), made,
    /// or failed (the error text every trial that needs it reports).
    shared: Mutex<Option<Result<Arc<Connection>, String>>>,
    /// Calls on the shared connection hold it for reading; a call retried after the
    /// server died under it holds it for writing, so it runs alone on the fresh server
    /// and a second death is its own.
    gate: RwLock<()>,
}

/// What an episode keeps in its session: its connection, and whether the episode owns
/// it (`isolation: trial`: closed when the episode ends).
#[derive(Debug)]
struct Link {
    conn: Arc<Connection>,
    owned: bool,
}

impl McpHost {
    /// A host for `server`, executing as `calls` says; `allow_flag` is the run's
    /// `--allow-destructive`.
    pub fn new(server: ServerSpec, calls: McpCalls, allow_flag: bool) -> McpHost {
        let options = ClientOptions {
            input: calls.input.clone(),
            ..ClientOptions::default()
        };
        McpHost {
            server,
            calls,
            allow_flag,
            options,
            shared: Mutex::new(None),
            gate: RwLock::new(()),
        }
    }

    /// A host for a suite's `tools_from` source, `None` when it names no server (a
    /// snapshot alone cannot execute anything).
    pub fn for_source(source: &McpSource, allow_flag: bool) -> Option<McpHost> {
        let server = source.server.clone()?;
        Some(McpHost::new(server, source.calls.clone(), allow_flag))
    }

    /// The client options connections are made with (e.g. to shorten timeouts in tests).
    pub fn with_options(mut self, options: ClientOptions) -> McpHost {
        self.options = options;
        self
    }

    /// Connect and read the server's tools.
    async fn connect(&self) -> Result<Connection, String> {
        let client = McpClient::connect(&self.server, self.options.clone())
            .await
            .map_err(|e| e.to_string())?;
        match client.list_tools().await {
            Ok(list) => {
                let tools = list
                    .into_iter()
                    .map(|t| (t.name().to_string(), t))
                    .collect();
                Ok(Connection::new(client, tools))
            }
            Err(e) => {
                client.close().await;
                Err(e.to_string())
            }
        }
    }

    /// The connection shared by the run's trials, made by the first that needs it.
    async fn shared(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.shared.lock().await;
        // A server process that died (in an earlier trial) is started again, so one
        // crash ends one trial, not every trial after it; episodes still holding the
        // dead connection keep it until they end.
        if let Some(Ok(conn)) = slot.as_ref()
            && !conn.client.alive()
        {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(self.connect().await.map(Arc::new));
        }
        match slot.as_ref() {
            Some(made) => made.clone(),
            None => Err("no connection was made".to_string()),
        }
    }

    /// A call on the run's shared server (`isolation: suite`). Several trials' calls run
    /// on it at once, so when the server dies under a call that was not alone on it,
    /// which call killed it is not known, and the others were innocent. Such a call is
    /// retried once, alone, on a fresh server (when its tool may run twice, see
    /// [`retriable`]): an innocent call gets its answer there, and the call that kills
    /// the server kills it again, alone, and its error says so, quoting the server's last
    /// words, which are then its own.
    async fn on_shared(
        &self,
        call: &Invocation,
    ) -> Result<(CallResult, Vec<LoggedExchange>), HostError> {
        let (first, conn) = {
            let _with_others = self.gate.read().await;
            let conn = self.shared().await.map_err(|m| self.fail(call, m))?;
            (conn.attempt(&call.name, &call.arguments).await, conn)
        };
        let died = first.died(&conn);
        let e = match first.result {
            Ok(r) => return Ok((r, first.exchanges)),
            Err(e) => e,
        };
        // A call that died alone on a live server killed it; a call sent to a server
        // that had already died did not, and is retried as an innocent one.
        if !died || (first.alone && first.sent_alive) {
            return Err(self.failed(call, died, first.alone, &e));
        }
        let server = &self.server;
        if !retriable(&conn, &call.name) {
            return Err(self.fail(
                call,
                format!(
                    "the MCP server `{server}` died while this call was in flight together with other calls, so another call may have killed it; it was not retried because `{}` is neither read-only nor idempotent by its annotations (`readOnlyHint`, `idempotentHint`), so the server may have run it already",
                    call.name
                ),
            ));
        }
        let _alone = self.gate.write().await;
        let fresh = self.shared().await.map_err(|m| {
            self.fail(
                call,
                format!(
                    "the MCP server `{server}` died while this call was in flight together with other calls, and could not be started again to retry it: {m}"
                ),
            )
        })?;
        let retry = fresh.attempt(&call.name, &call.arguments).await;
        let died_again = retry.died(&fresh);
        match retry.result {
            Ok(r) => {
                let mut exchanges = first.exchanges;
                exchanges.push(LoggedExchange {
                    at_ms: exchanges.last().map_or(0.0, |x| x.at_ms),
                    direction: "note".into(),
                    text: "the server died while this call was in flight together with other calls (another one killed it); retried once, alone, on a fresh server process".into(),
                });
                exchanges.extend(retry.exchanges);
                Ok((r, exchanges))
            }
            Err(e) if died_again => Err(self.fail(
                call,
                format!(
                    "this call kills the MCP server: the server died during it while other calls were in flight, and again when it was retried alone on a fresh server: {e}"
                ),
            )),
            Err(e) => Err(self.fail(
                call,
                format!(
                    "the MCP server died while this call was in flight together with other calls; retried alone on a fresh server, it failed: {e}"
                ),
            )),
        }
    }

    /// The host error of a call that failed with `e` on a connection no other trial
    /// shares, or for a reason other than a death that needs telling apart: `died` and
    /// `alone` say whether the server died under it and whether it was the only call
    /// in flight.
    fn failed(&self, call: &Invocation, died: bool, alone: bool, e: &McpError) -> HostError {
        let message = match (died, alone) {
            (true, true) => format!(
                "the MCP server died during this call, the only one in flight on it, so this call killed it: {e}"
            ),
            (true, false) => format!(
                "the MCP server died while this call was in flight together with others of its turn, so any of them may have killed it: {e}"
            ),
            (false, _) => e.to_string(),
        };
        self.fail(call, message)
    }

    /// A host error for `call`.
    fn fail(&self, call: &Invocation, message: String) -> HostError {
        HostError::Failed {
            host: HOST,
            tool: call.name.clone(),
            message,
        }
    }

    /// Why `call` is not sent to the server: (what the model reads, what the record
    /// says), or `None` when it may be executed.
    fn refusal(&self, conn: &Connection, call: &Invocation) -> Option<(ToolOutcome, String)> {
        let Some(tool) = conn.tools.get(&call.name) else {
            let mut names: Vec<&str> = conn.tools.keys().map(String::as_str).collect();
            names.sort_unstable();
            let why = format!(
                "the MCP server `{}` offers no tool named `{}` (its tools: {}); the call was not sent",
                self.server,
                call.name,
                names.join(", ")
            );
            let out = ToolOutcome::error(
                ToolErrorKind::UnknownTool,
                &format!("there is no tool named `{}`", call.name),
                false,
            );
            return Some((out, why));
        };
        let hints = tool.annotations();
        if !hints.may_destroy() || self.calls.allows(&call.name, self.allow_flag) {
            return None;
        }
        let said = match (hints.read_only, hints.destructive) {
            (_, Some(true)) => "its annotations say `destructiveHint: true`",
            (Some(false), _) => "its annotations say `readOnlyHint: false`",
            _ => {
                "its annotations give neither `readOnlyHint: true` nor `destructiveHint: false`, so the protocol assumes it may destroy"
            }
        };
        let why = format!(
            "refused: `{}` may change the world ({said}) and the suite does not allow it; \
             allow it with `tools_from.allow: [{}]`, `tools_from.allow_destructive: true`, or `toolgauge run --allow-destructive`",
            call.name, call.name
        );
        let out = ToolOutcome::error(
            ToolErrorKind::Refused,
            &format!(
                "the call of `{}` was refused: this tool may change data and is not allowed here; it was not executed",
                call.name
            ),
            false,
        );
        Some((out, why))
    }

    /// Whether an episode of `session` may send calls to the server: some tool its case
    /// offers is not pinned by mocks (no rules, or `fail:` rules only).
    fn needs_server(session: &Session) -> bool {
        let spec = session.spec();
        spec.tools.iter().any(|t| !spec.mocks.pins(t))
    }
}

/// Whether `tool` may be sent again after the server died under it: its annotations say
/// it is read-only or idempotent. Anything else may have run before the death (written
/// a file, charged a card), and running it twice is not the harness's call to make.
fn retriable(conn: &Connection, tool: &str) -> bool {
    conn.tools.get(tool).is_some_and(|t| {
        let hints = t.annotations();
        hints.read_only == Some(true) || hints.idempotent == Some(true)
    })
}

/// The tool host for `suite`'s loop cases: its `fail:` rules in front of the MCP server
/// when `tools_from` names one, else in front of its mocks
/// ([`crate::tools::suite_host`]). The run's `--allow-destructive` is already in the
/// suite ([`crate::suite::mcp_calls::allow_destructive`]).
pub fn suite_host(suite: &Suite) -> Arc<dyn ToolHost> {
    match suite
        .mcp
        .as_deref()
        .and_then(|s| McpHost::for_source(s, false))
    {
        Some(host) => Arc::new(Faults::new(Arc::new(host))),
        None => crate::tools::suite_host(),
    }
}

#[async_trait]
impl ToolHost for McpHost {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        let link = session.state::<Link>();
        let spec = session.spec();
        Ok(spec
            .tools
            .iter()
            .filter(|t| {
                spec.mocks.pins(t) || link.as_ref().is_some_and(|l| l.conn.tools.contains_key(*t))
            })
            .cloned()
            .collect())
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        let spec = session.spec();
        // Pinned tools, and names the case does not offer, are the mock host's. A tool
        // whose rules only inject failures is the server's once they are spent (the
        // `Faults` wrapper in front decided those already).
        if spec.mocks.pins(&call.name) || !spec.tools.contains(&call.name) {
            return MockHost.prepare(session, call);
        }
        let Some(link) = session.state::<Link>() else {
            // No connection: `execute_in` says why, as a host error.
            return Decision::Execute;
        };
        match self.refusal(&link.conn, call) {
            None => Decision::Execute,
            Some((mut out, why)) => {
                out.mcp = Some(Box::new(McpCallLog {
                    server: self.server.to_string(),
                    refused: Some(why),
                    input_rounds: Vec::new(),
                    exchanges: Vec::new(),
                }));
                Decision::Settled(out)
            }
        }
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        Err(HostError::Failed {
            host: HOST,
            tool: call.name.clone(),
            message: "an MCP call needs its episode's connection (execute_in)".into(),
        })
    }

    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        let Some(link) = session.state::<Link>() else {
            return Err(HostError::Failed {
                host: HOST,
                tool: call.name.clone(),
                message: format!(
                    "no connection to the MCP server `{}` was opened for this episode",
                    self.server
                ),
            });
        };
        let (r, exchanges) = match self.calls.isolation {
            Isolation::Trial => {
                let first = link.conn.attempt(&call.name, &call.arguments).await;
                let died = first.died(&link.conn);
                match first.result {
                    Ok(r) => (r, first.exchanges),
                    Err(e) => return Err(self.failed(call, died, first.alone, &e)),
                }
            }
            Isolation::Suite => self.on_shared(call).await?,
        };
        let text = r.text_for_model();
        let mut out = if r.is_error {
            ToolOutcome {
                content: text,
                is_error: true,
                error_kind: Some(ToolErrorKind::ToolReported),
                ..ToolOutcome::result(&serde_json::Value::Null)
            }
        } else if let Some(why) = &r.schema_error {
            ToolOutcome::error(
                ToolErrorKind::OutputSchema,
                &format!(
                    "the tool's structured result does not match its output schema: {why}; the result was: {text}"
                ),
                true,
            )
        } else {
            ToolOutcome {
                content: text,
                ..ToolOutcome::result(&serde_json::Value::Null)
            }
        };
        out.mcp = Some(Box::new(McpCallLog {
            server: self.server.to_string(),
            refused: None,
            input_rounds: r.input_rounds.iter().map(InputRound::from).collect(),
            exchanges,
        }));
        Ok(out)
    }

    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        if !McpHost::needs_server(session) {
            return Ok(());
        }
        let (made, owned) = match self.calls.isolation {
            Isolation::Suite => (self.shared().await, false),
            Isolation::Trial => (self.connect().await.map(Arc::new), true),
        };
        let conn = made.map_err(|message| HostError::Unavailable {
            host: HOST,
            message,
        })?;
        session.set_state(EpisodeState(Arc::new(Link { conn, owned })));
        Ok(())
    }

    async fn close_episode(&self, session: &mut Session) {
        let Some(state) = session.take_state() else {
            return;
        };
        let Ok(link) = state.0.downcast::<Link>() else {
            return;
        };
        // The turn's executions are over, so the episode holds the only references to a
        // connection it owns; one still shared is left to drop (and kill its process).
        if let Ok(link) = Arc::try_unwrap(link)
            && link.owned
            && let Ok(conn) = Arc::try_unwrap(link.conn)
        {
            conn.client.close().await;
        }
    }

    async fn shutdown(&self) {
        let made = self.shared.lock().await.take();
        if let Some(Ok(conn)) = made
            && let Ok(conn) = Arc::try_unwrap(conn)
        {
            conn.client.close().await;
        }
    }
}
