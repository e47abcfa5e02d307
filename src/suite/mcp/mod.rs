//! What a suite says of MCP, as data: server specs (`stdio:CMD ARGS…` or a URL), the
//! tools a server lists ([`McpTool`], kept raw), snapshot files that pin them, the
//! protocol era, how a server's requests for input are answered, and the errors of the
//! MCP layer.
//!
//! These are the suite layer's own types because a suite names servers, reads snapshots
//! and holds the tools it was given; the client that talks to servers ([`crate::mcp`],
//! above the suite) builds on them and re-exports them. Nothing here opens a connection:
//! the tool lists of live servers are fetched before a suite is compiled and handed in
//! ([`super::servers::ServerTools`]).

pub mod error;
pub mod server;
pub mod snapshot;
pub mod tool;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use error::McpError;
pub use server::ServerSpec;
pub use snapshot::Snapshot;
pub use tool::{Annotations, McpTool};

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
