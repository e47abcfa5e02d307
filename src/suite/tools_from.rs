//! `tools_from:`: a suite whose tools come from an MCP server (or a pinned snapshot of
//! its tools), and how loop cases execute calls on that server. Written form (serde)
//! and compiled form.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use super::span::Spanned;

/// `tools_from:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsFromSpec {
    /// The server: `stdio:CMD ARGS…` or an `http(s)://` URL.
    #[serde(default)]
    pub mcp: Option<Spanned<String>>,
    /// A snapshot file (`toolgauge mcp snapshot`), relative to the suite: the tools are
    /// read from it, so runs replay offline.
    #[serde(default)]
    pub snapshot: Option<Spanned<String>>,
    /// Loop cases may execute every tool of the server, even those whose annotations say
    /// they may change the world (default false: such calls are refused).
    #[serde(default)]
    pub allow_destructive: Option<Spanned<bool>>,
    /// Tools loop cases may execute although their annotations say they may change the
    /// world.
    #[serde(default)]
    pub allow: Option<Spanned<Vec<Spanned<String>>>>,
    /// `suite` (default): one server for the run's trials; `trial`: a fresh one per trial.
    #[serde(default)]
    pub isolation: Option<Spanned<super::mcp_calls::Isolation>>,
    /// How the server's requests for input are answered: `refuse` (default), `decline`,
    /// or `{accept: {…}}` with the content to send.
    #[serde(default)]
    pub input: Option<Spanned<super::mcp_calls::InputSpec>>,
}

/// `tools_from:` compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSource {
    /// The server, when named.
    pub server: Option<crate::mcp::ServerSpec>,
    /// The snapshot file, resolved against the suite's directory.
    pub snapshot: Option<PathBuf>,
    /// How loop cases execute calls on the server.
    pub calls: super::mcp_calls::McpCalls,
}
