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
}

/// `tools_from:` compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSource {
    /// The server, when named.
    pub server: Option<crate::mcp::ServerSpec>,
    /// The snapshot file, resolved against the suite's directory.
    pub snapshot: Option<PathBuf>,
}
