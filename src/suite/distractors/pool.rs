//! Distractor pools: where the extra tools of the tool-count axis come from, each read
//! into provider tool definitions the same way suite tools are (name, description,
//! argument schema).
//!
//! The kind is told from the value itself, never from a guess: `stdio:` or an
//! `http(s)://` URL is a server (its tools are listed when the suite loads); a `.yaml`/`.yml` file is a suite; a JSON file is a
//! snapshot (`format` + `server` + `tools`), a LiveMCPTool-style catalogue (an array of
//! servers, each with `tools: {KEY: {tools: [...]}}`), a `tools/list` result
//! (`{"tools": [...]}`) or a bare array of MCP tools, or a suite in JSON (`cases`). A
//! file that is none of these is an error naming the forms accepted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::chat::ToolDefinition;
use crate::suite::mcp::McpTool;
use crate::suite::servers::ServerTools;

/// What kind of source a pool was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// A `toolgauge mcp snapshot` file.
    Snapshot,
    /// A LiveMCPTool-style catalogue (servers with their `tools/list` results).
    Catalogue,
    /// A `tools/list` result or a bare JSON array of MCP tools.
    ToolList,
    /// A suite file (YAML or JSON): its tools and its cases' own tools.
    Suite,
    /// An MCP server's `tools/list`, read when the suite loads.
    Server,
}

impl PoolKind {
    /// The kind in words, for messages and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolKind::Snapshot => "MCP snapshot",
            PoolKind::Catalogue => "MCP tool catalogue",
            PoolKind::ToolList => "MCP tool list",
            PoolKind::Suite => "suite",
            PoolKind::Server => "MCP server",
        }
    }
}

/// The tools of a pool, ready to add to requests.
#[derive(Debug, Clone)]
pub struct Pool {
    /// What it was read as.
    pub kind: PoolKind,
    /// The file, resolved against the suite's directory (a server: as written).
    pub path: PathBuf,
    /// The tools, in the source's order, each name once.
    pub tools: Vec<ToolDefinition>,
    /// Names that appeared more than once in the source: the first definition is kept,
    /// since a request may not offer two tools of one name.
    pub duplicates: Vec<String>,
}

/// Why a pool could not be read: what, and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PoolError {
    /// What failed, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

fn err(message: impl Into<String>, hint: impl Into<String>) -> PoolError {
    PoolError {
        message: message.into(),
        hint: hint.into(),
    }
}

/// True when `from` names an MCP server rather than a file.
pub fn is_server(from: &str) -> bool {
    from.starts_with("stdio:") || from.starts_with("http://") || from.starts_with("https://")
}

/// Read the pool `from` names, a path relative to `base` (the suite's directory); a
/// server's tools are taken from `servers`, listed before compiling.
pub fn load(from: &str, base: &Path, servers: &ServerTools) -> Result<Pool, PoolError> {
    if is_server(from) {
        return server_pool(from, base, servers);
    }
    if from.trim().is_empty() {
        return Err(err(
            "`from` is empty",
            "name a snapshot, a tool catalogue, a suite file or an MCP server",
        ));
    }
    let path = base.join(from);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        err(
            format!("cannot read distractor pool `{}`: {e}", path.display()),
            "`from` is a path relative to the suite's directory (or `stdio:…` / an http(s) URL for a server)",
        )
    })?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("yaml" | "yml")) {
        return suite_pool(&path, servers);
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        err(
            format!(
                "distractor pool `{}` is neither YAML (by its name) nor JSON: {e}",
                path.display()
            ),
            "use a snapshot (`toolgauge mcp snapshot`), a tool catalogue (JSON), or a suite (.yaml)",
        )
    })?;
    let shown = path.display().to_string();
    let (kind, raw) = match &value {
        Value::Object(o) if o.contains_key("cases") => return suite_pool(&path, servers),
        Value::Object(o) if o.contains_key("format") && o.contains_key("server") => {
            let tools = o.get("tools").and_then(Value::as_array).ok_or_else(|| {
                err(
                    format!("snapshot `{shown}` has no `tools` array"),
                    "write it again with `toolgauge mcp snapshot SERVER FILE`",
                )
            })?;
            (PoolKind::Snapshot, listed(tools, &shown, "")?)
        }
        Value::Object(o) if o.get("tools").is_some_and(Value::is_array) => {
            let tools = o["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            (PoolKind::ToolList, listed(tools, &shown, "")?)
        }
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("tools").is_some_and(Value::is_object))
                && !items.is_empty() =>
        {
            (PoolKind::Catalogue, catalogue(items, &shown)?)
        }
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("inputSchema").is_some() || i.get("name").is_some())
                && !items.is_empty() =>
        {
            (PoolKind::ToolList, listed(items, &shown, "")?)
        }
        _ => {
            return Err(err(
                format!("`{shown}` is not a distractor pool this toolgauge reads"),
                "accepted: a snapshot (`toolgauge mcp snapshot`), a catalogue (array of servers with `tools: {KEY: {tools: [...]}}`, as LiveMCPTool), a `tools/list` result (`{\"tools\": [...]}`) or an array of MCP tools, or a suite file",
            ));
        }
    };
    Ok(finish(
        kind,
        path,
        raw.into_iter().map(|t| definition(&t)).collect(),
    ))
}

/// The tools a server listed, handed in before compiling (see `crate::suite::servers`);
/// a `stdio:` server starts in `base`, the suite's directory.
fn server_pool(from: &str, base: &Path, servers: &ServerTools) -> Result<Pool, PoolError> {
    // The server's relative paths are the suite's: the commands run where it starts.
    let cd = if base.as_os_str().is_empty() {
        String::new()
    } else {
        format!(
            "cd {} && ",
            crate::suite::tools_from::shell_word(&base.display().to_string())
        )
    };
    let hint = format!(
        "check that the server starts and answers `tools/list` (`{cd}toolgauge mcp tools {from}`), or pin its tools once with `{cd}toolgauge mcp snapshot {from} pool.json` and write `from: pool.json`"
    );
    let spec = from
        .parse::<crate::suite::mcp::ServerSpec>()
        .map(|s| s.in_dir(base))
        .map_err(|e| err(e.to_string(), hint.clone()))?;
    let listed = match servers.get(&spec) {
        Some(Ok(tools)) => tools.clone(),
        Some(Err(why)) => {
            return Err(err(
                format!("cannot list the tools of distractor server `{from}`: {why}"),
                hint,
            ));
        }
        None => {
            return Err(err(
                crate::suite::servers::not_listed(&spec),
                crate::suite::servers::NOT_LISTED_HINT,
            ));
        }
    };
    Ok(finish(
        PoolKind::Server,
        PathBuf::from(from),
        listed.iter().map(definition).collect(),
    ))
}

/// MCP tools from a `tools` array; `at` says where the array is, for messages.
fn listed(items: &[Value], shown: &str, at: &str) -> Result<Vec<McpTool>, PoolError> {
    items
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let raw: Map<String, Value> = t.as_object().cloned().unwrap_or_default();
            McpTool::from_raw(raw).ok_or_else(|| {
                err(
                    format!(
                        "distractor pool `{shown}`: {at}tool #{} has no string `name`",
                        i + 1
                    ),
                    "every pool tool needs a name (the name the model calls it by); fix or drop that entry",
                )
            })
        })
        .collect()
}

/// The tools of a LiveMCPTool-style catalogue, server by server.
fn catalogue(servers: &[Value], shown: &str) -> Result<Vec<McpTool>, PoolError> {
    let mut out = Vec::new();
    for (si, server) in servers.iter().enumerate() {
        let name = server
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{}", si + 1), |n| format!("`{n}`"));
        let Some(keys) = server.get("tools").and_then(Value::as_object) else {
            continue;
        };
        for (key, listing) in keys {
            let Some(tools) = listing.get("tools").and_then(Value::as_array) else {
                return Err(err(
                    format!(
                        "distractor pool `{shown}`: server {name}, `tools.{key}` has no `tools` array"
                    ),
                    "a catalogue server's `tools` maps a server key to its `tools/list` result",
                ));
            };
            out.extend(listed(tools, shown, &format!("server {name}, `{key}` "))?);
        }
    }
    Ok(out)
}

/// The tools of a suite file, and of its cases (an imported BFCL suite offers each
/// case its own tools).
fn suite_pool(path: &Path, servers: &ServerTools) -> Result<Pool, PoolError> {
    let suite = crate::suite::load_with(path, servers).map_err(|e| {
        err(
            format!(
                "distractor pool `{}` is not a valid suite:\n{e}",
                path.display()
            ),
            "fix that suite, or point `from` at another pool",
        )
    })?;
    let variant = String::new();
    let tools = suite
        .tools
        .iter()
        .chain(suite.cases.iter().flat_map(|c| c.tools.iter().flatten()))
        .map(|t| t.definition(&variant))
        .collect();
    Ok(finish(PoolKind::Suite, path.to_path_buf(), tools))
}

fn finish(kind: PoolKind, path: PathBuf, all: Vec<ToolDefinition>) -> Pool {
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(all.len());
    let mut duplicates = Vec::new();
    for t in all {
        if seen.insert(t.name.clone()) {
            tools.push(t);
        } else if !duplicates.contains(&t.name) {
            duplicates.push(t.name);
        }
    }
    Pool {
        kind,
        path,
        tools,
        duplicates,
    }
}

/// An MCP tool as a provider tool definition, as suite tools taken from MCP are sent:
/// its name, its description (empty when it has none) and its `inputSchema`.
pub fn definition(tool: &McpTool) -> ToolDefinition {
    ToolDefinition {
        name: tool.name().to_string(),
        description: tool.description().unwrap_or_default().to_string(),
        parameters: Arc::new(tool.input_schema()),
    }
}
