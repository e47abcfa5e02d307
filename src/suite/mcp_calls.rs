//! The `tools_from:` keys that say how loop cases execute calls on the MCP server:
//! which world-changing tools may run (`allow_destructive`, `allow`), whether trials
//! share one server or each gets a fresh one (`isolation`), and how the server's
//! requests for input are answered (`input`). Written form (serde, fields at the end of
//! [`super::tools_from::ToolsFromSpec`]) and compiled form ([`McpCalls`], on
//! [`super::tools_from::McpSource`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::compile::Checker;
use super::mcp::InputPolicy;
use super::span::Spanned;

/// `tools_from.isolation`: how the trials of a run share the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// One connection (one server process over stdio) for every trial of the run: fast,
    /// but a stateful server carries what one trial did into the next.
    #[default]
    Suite,
    /// A fresh connection for each trial (over stdio a new server process, shut down when
    /// the trial ends), so no trial sees another's state.
    Trial,
}

/// `tools_from.input` as written: how `input_required` results are answered.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputSpec {
    /// Answer none: the call ends as a tool error saying the server asked for input.
    Refuse,
    /// Decline every request for input.
    Decline,
    /// Accept every request for input with this content.
    Accept(Map<String, Value>),
}

impl From<&InputSpec> for InputPolicy {
    fn from(s: &InputSpec) -> InputPolicy {
        match s {
            InputSpec::Refuse => InputPolicy::Refuse,
            InputSpec::Decline => InputPolicy::Decline,
            InputSpec::Accept(content) => InputPolicy::Accept(content.clone()),
        }
    }
}

/// How loop cases execute calls on the server, compiled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpCalls {
    /// `allow_destructive: true`: every tool may be executed, whatever its annotations.
    pub allow_destructive: bool,
    /// `allow`: tools that may be executed although their annotations say they may
    /// change the world.
    pub allow: Vec<String>,
    /// One server for the run, or one per trial.
    pub isolation: Isolation,
    /// How `input_required` is answered.
    pub input: InputPolicy,
}

/// Check and compile the execution keys of `tools_from` (the fields named here).
pub(super) fn compile(
    c: &mut Checker<'_>,
    allow_destructive: Option<&Spanned<bool>>,
    allow: Option<&Spanned<Vec<Spanned<String>>>>,
    isolation: Option<&Spanned<Isolation>>,
    input: Option<&Spanned<InputSpec>>,
) -> McpCalls {
    let mut names: Vec<String> = Vec::new();
    for (i, name) in allow.iter().flat_map(|a| a.value.iter()).enumerate() {
        if name.value.trim().is_empty() {
            c.report(
                name.at(),
                format!("tools_from.allow[{i}]"),
                "an empty tool name in `allow`",
                Some("list the names of the server's tools that loop cases may execute although they may change the world".into()),
            );
        } else if !names.contains(&name.value) {
            names.push(name.value.clone());
        }
    }
    McpCalls {
        allow_destructive: allow_destructive.is_some_and(|a| a.value),
        allow: names,
        isolation: isolation.map(|i| i.value).unwrap_or_default(),
        input: input.map(|i| (&i.value).into()).unwrap_or_default(),
    }
}

impl McpCalls {
    /// Whether `tool` may be executed although it may change the world (`flag`: the
    /// run's `--allow-destructive`).
    pub fn allows(&self, tool: &str, flag: bool) -> bool {
        flag || self.allow_destructive || self.allow.iter().any(|a| a == tool)
    }
}

/// Apply the run's `--allow-destructive` to `suite`: its loop cases may then execute
/// every tool of its MCP server. Nothing changes without the flag or without a server.
pub fn allow_destructive(suite: &mut super::Suite, flag: bool) {
    if let (true, Some(source)) = (flag, suite.mcp.as_mut()) {
        std::sync::Arc::make_mut(source).calls.allow_destructive = true;
    }
}
