//! `distractors:`: N other tools added to each case's tool list, as a matrix axis, to
//! measure tool selection as the tool count grows. Written form (serde) and compiled
//! form.

use schemars::JsonSchema;
use serde::Deserialize;

use super::span::Spanned;

/// `distractors:` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistractorsSpec {
    /// Where the extra tools come from: an MCP snapshot file, a LiveMCPTool-style
    /// catalogue, a suite file (its tools), or an MCP server.
    pub from: Spanned<String>,
    /// The counts to run, each a value of the axis (e.g. `[0, 10, 50, 100]`).
    pub n: Vec<Spanned<u32>>,
}

/// `distractors:` compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Distractors {
    /// The counts, in the order written.
    pub n: Vec<u32>,
}
