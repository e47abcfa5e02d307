//! What a trial record keeps of one tool call a remote host (an MCP server) handled:
//! the exchanges with the server during the call, verbatim, how its requests for input
//! were answered, and why the call was refused when it was not executed.
//!
//! The types are our own, not the MCP client's log types, because records are read back
//! (`toolgauge report`): they must deserialize, and their shape is a file format that
//! should not change when the client's internals do. They live here, with the tool
//! results that carry them, so that `tools` needs nothing of `mcp` (which builds on
//! `tools`); `mcp::host_log` fills them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The MCP side of one tool call (on [`super::ToolOutcome::mcp`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpCallLog {
    /// The server as the suite names it (`stdio:CMD ARGS…` or a URL).
    pub server: String,
    /// Why the call was not executed on the server (absent when it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The `input_required` rounds the call took, and who answered each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_rounds: Vec<InputRound>,
    /// Every exchange of the call, in order, verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<LoggedExchange>,
}

/// One `input_required` round of a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRound {
    /// The round (1-based).
    pub round: u32,
    /// Who answered: `policy` (the suite's `tools_from.input`) or `refused`.
    pub by: String,
    /// The answers sent, as sent.
    #[serde(default)]
    pub answers: Value,
}

/// One message of a call's exchanges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedExchange {
    /// Milliseconds since the connection's log started.
    pub at_ms: f64,
    /// `sent`, `received`, `stderr` (a line the server process wrote) or `note` (what
    /// the client did that is not a message).
    pub direction: String,
    /// The text exactly as it crossed.
    pub text: String,
}
