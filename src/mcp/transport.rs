//! Moving JSON-RPC messages to and from one server, and the verbatim log of everything
//! that crossed. Two transports implement [`Transport`]: a spawned process's stdio and a
//! Streamable HTTP endpoint.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use super::McpError;

/// One message to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The JSON-RPC method (HTTP mirrors it in `Mcp-Method`).
    pub method: String,
    /// The tool (or prompt, resource) the request names (HTTP: `Mcp-Name`).
    pub name: Option<String>,
    /// The whole JSON-RPC object (with `id` for a request, without for a notification).
    pub body: Value,
}

/// Which way a logged message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client to server.
    Sent,
    /// Server to client.
    Received,
    /// A line the server process wrote to stderr (kept as a log, never parsed).
    Stderr,
    /// Something the client did that is not a message (respawn, fallback, shutdown).
    Note,
}

/// One logged message, verbatim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exchange {
    /// Milliseconds since the log started.
    pub at_ms: f64,
    /// Which way.
    pub direction: Direction,
    /// The bytes as sent or received (an HTTP reply: its body; SSE: one event's data).
    pub text: String,
}

/// The log of every exchange with one server, shared by the transport and the client.
#[derive(Clone)]
pub struct ExchangeLog {
    started: Instant,
    entries: Arc<Mutex<Vec<Exchange>>>,
}

impl fmt::Debug for ExchangeLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExchangeLog")
            .field("entries", &self.len())
            .finish()
    }
}

impl Default for ExchangeLog {
    fn default() -> ExchangeLog {
        ExchangeLog::new()
    }
}

impl ExchangeLog {
    /// An empty log starting now.
    pub fn new() -> ExchangeLog {
        ExchangeLog {
            started: Instant::now(),
            entries: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Append one entry.
    pub fn push(&self, direction: Direction, text: impl Into<String>) {
        let at_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let entry = Exchange {
            at_ms,
            direction,
            text: text.into(),
        };
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry);
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the entries from index `from` on (to attach one trial's part).
    pub fn since(&self, from: usize) -> Vec<Exchange> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }
}

/// Moves JSON-RPC messages to one server.
///
/// Requests the server sends the client (sampling, elicitation, roots, ping) are
/// answered by the transport itself by the input policy given with
/// [`Transport::set_input_policy`] (see [`super::input::answer_server_request`]: `ping`
/// with an empty result, elicitations by the policy, anything else with JSON-RPC error
/// -32601) and logged; notifications are logged and otherwise ignored.
#[async_trait]
pub trait Transport: Send + Sync + fmt::Debug {
    /// Send a request (`out.body` has an `id`) and return the whole JSON-RPC response
    /// with that id (a `result` or an `error` object), or a transport error.
    async fn request(&self, out: &Outgoing, timeout: Duration) -> Result<Value, McpError>;

    /// Send a notification (no answer expected).
    async fn notify(&self, out: &Outgoing) -> Result<(), McpError>;

    /// The protocol version later messages carry (HTTP: `MCP-Protocol-Version`; the
    /// modern era also sends `Mcp-Method`/`Mcp-Name`). Stdio ignores it.
    fn set_protocol(&self, version: &str, modern: bool);

    /// How to answer the server's own requests from now on (before `initialize`, so a
    /// request arriving at any point is answered the same way). The default ignores it,
    /// leaving every server request but `ping` unanswered with -32601.
    fn set_input_policy(&self, _policy: &super::InputPolicy) {}

    /// Whether the peer still looks alive (a stdio process that has not exited).
    fn alive(&self) -> bool;

    /// Shut down: stdio closes stdin, then SIGTERM, then SIGKILL, each after a grace
    /// period; HTTP ends its session (DELETE) when it has one.
    async fn close(&self);

    /// The log of this transport's exchanges.
    fn log(&self) -> &ExchangeLog;
}

/// Open a transport to `spec` (spawn the process, or prepare the HTTP endpoint), logging
/// into `log`.
pub async fn open(
    spec: &super::ServerSpec,
    log: &ExchangeLog,
) -> Result<Box<dyn Transport>, McpError> {
    match spec {
        super::ServerSpec::Stdio { program, args, dir } => Ok(Box::new(
            super::stdio::StdioTransport::spawn(spec, program, args, dir.as_deref(), log.clone())
                .await?,
        )),
        super::ServerSpec::Http { url } => Ok(Box::new(super::http::HttpTransport::new(
            spec,
            url,
            log.clone(),
        )?)),
    }
}
