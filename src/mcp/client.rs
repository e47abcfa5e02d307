//! The protocol: era discovery (`server/discover`, else legacy `initialize`),
//! `tools/list` with pagination, `tools/call` with `input_required` rounds.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::transport::Transport;
use super::{ExchangeLog, McpError, McpTool, ServerSpec};

/// The two protocol eras a server may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// 2026-07-28: stateless, `server/discover`, `_meta` envelope on every request.
    Modern,
    /// `initialize` + `notifications/initialized` (2025-11-25, 2025-06-18 and older).
    Legacy,
}

/// How `input_required` results are answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum InputPolicy {
    /// Answer none: the call ends as a tool error saying the server asked for input.
    #[default]
    Refuse,
    /// Decline every request for input.
    Decline,
    /// Accept elicitations with this content.
    Accept(Map<String, Value>),
}

/// What answered one `input_required` round (logged in the trial).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputAnswer {
    /// The round (1-based).
    pub round: u32,
    /// Who answered: `policy` or `refused`.
    pub by: String,
    /// The answers sent, as sent.
    pub answers: Value,
}

/// Bounds and identity of a client.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// Every request's timeout.
    pub request_timeout: Duration,
    /// How long to wait for `server/discover` before falling back to legacy.
    pub discover_timeout: Duration,
    /// How many `input_required` rounds one call may take.
    pub max_input_rounds: u32,
    /// How `input_required` is answered.
    pub input: InputPolicy,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            request_timeout: Duration::from_secs(30),
            discover_timeout: Duration::from_secs(3),
            max_input_rounds: 3,
            input: InputPolicy::Refuse,
        }
    }
}

/// The result of one `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallResult {
    /// The final result object, raw.
    pub raw: Value,
    /// `content` blocks.
    pub content: Vec<Value>,
    /// `structuredContent`, if any.
    pub structured: Option<Value>,
    /// `isError`.
    pub is_error: bool,
    /// Why `structuredContent` does not satisfy the tool's `outputSchema`, when it has one.
    pub schema_error: Option<String>,
    /// The `input_required` rounds it took.
    pub input_rounds: Vec<InputAnswer>,
}

impl CallResult {
    /// What the model reads: the text blocks joined, other blocks as JSON, or the
    /// structured content when there are no blocks.
    pub fn text_for_model(&self) -> String {
        unimplemented!("mcp client")
    }
}

/// A connected MCP client.
#[derive(Debug)]
pub struct McpClient {
    spec: ServerSpec,
    transport: Box<dyn Transport>,
    era: Era,
    protocol_version: String,
    server_info: Option<Value>,
    options: ClientOptions,
}

impl McpClient {
    /// Connect to `spec`: spawn or reach it, find its era (discover within
    /// `discover_timeout`, else respawn if it died and `initialize`).
    pub async fn connect(spec: &ServerSpec, options: ClientOptions) -> Result<McpClient, McpError> {
        let _ = (spec, options);
        unimplemented!("mcp client")
    }

    /// The server as named.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// The era it speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol version agreed.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// Its `serverInfo`, raw.
    pub fn server_info(&self) -> Option<&Value> {
        self.server_info.as_ref()
    }

    /// The options it was connected with.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Every tool, following `nextCursor` (an empty string is a real cursor) until the
    /// server stops sending one; tools kept raw.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        unimplemented!("mcp client")
    }

    /// Call `name` with `arguments`. A result with `isError` is `Ok` (the model reads
    /// it as a tool error); JSON-RPC errors and transport failures are `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallResult, McpError> {
        let _ = (name, arguments);
        unimplemented!("mcp client")
    }

    /// The log of every exchange.
    pub fn log(&self) -> &ExchangeLog {
        self.transport.log()
    }

    /// Shut the server down (stdio: close stdin, SIGTERM, SIGKILL).
    pub async fn close(self) {
        self.transport.close().await;
    }
}
