//! `tools_from:`: a suite whose tools come from an MCP server (or a pinned snapshot of
//! its tools), and how loop cases execute calls on that server. Written form (serde),
//! compiled form, and the resolution that turns the server's tools into suite tools.
//!
//! The tools are read from the snapshot when one is given (so CI replays offline and the
//! suite's hash-pinned inputs do not move under it), otherwise from the live server at
//! load time. Each becomes an ordinary suite tool (name, the server's description, its
//! `inputSchema` as `parameters`) that keeps the server's raw JSON for reports.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::compile::Checker;
use super::mcp::{McpTool, ServerSpec, Snapshot};
use super::model::{ToolSpec, ToolVariantSpec};
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
    /// Your wordings of the server's tools, by tool name: each is what a tool's own
    /// `variants` holds (variant name to a description, or to `description`,
    /// `parameter_descriptions` and `parameters`). The server's description is the
    /// wording of every variant a tool does not word itself.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, IndexMap<String, ToolVariantSpec>>")]
    pub variants: IndexMap<Spanned<String>, Wordings>,
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

/// One tool's wordings under `tools_from.variants` (a tool's `variants`, located).
type Wordings = Spanned<IndexMap<String, ToolVariantSpec>>;

/// Where the tools of a `tools_from` suite were read from when it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolsOrigin {
    /// The pinned snapshot file.
    #[default]
    Snapshot,
    /// The live server, at load time.
    Live,
}

/// `tools_from:` compiled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpSource {
    /// The server, when named.
    pub server: Option<ServerSpec>,
    /// The snapshot file, resolved against the suite's directory.
    pub snapshot: Option<PathBuf>,
    /// Where the tools were read from.
    pub origin: ToolsOrigin,
    /// The tools as read (snapshot or server), raw, in the server's order: what
    /// [`McpSource::drift`] compares a live listing against.
    pub tools: Vec<McpTool>,
    /// The run talks to the live server (loop cases execute their calls there), so
    /// `toolgauge run` lists its tools once and warns when they drifted from the
    /// snapshot. False while the suite only takes its tool definitions from it.
    pub live_at_run: bool,
    /// How loop cases execute calls on the server.
    pub calls: super::mcp_calls::McpCalls,
}

impl McpSource {
    /// How the live server's tools `live` differ from the tools the suite was loaded with
    /// (one line per tool added, removed or changed); empty when they agree, or when the
    /// tools were listed live (nothing pinned to drift from).
    pub fn drift(&self, live: &[McpTool]) -> Vec<String> {
        if self.origin == ToolsOrigin::Live {
            return Vec::new();
        }
        let pinned = Snapshot {
            format: super::mcp::snapshot::SNAPSHOT_FORMAT,
            server: String::new(),
            era: super::mcp::Era::Legacy,
            protocol_version: String::new(),
            server_info: None,
            tools: self.tools.clone(),
        };
        pinned.drift(live)
    }

    /// The warning a run prints when the live server drifted from the snapshot; `None`
    /// when it did not.
    pub fn drift_warning(&self, live: &[McpTool]) -> Option<String> {
        let drift = self.drift(live);
        if drift.is_empty() {
            return None;
        }
        let server = self
            .server
            .as_ref()
            .map_or_else(|| "the server".to_string(), |s| format!("`{s}`"));
        let snapshot = self
            .snapshot
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        let refresh = match (&self.server, &self.snapshot) {
            (Some(s), Some(p)) => snapshot_command(s, p),
            _ => format!("toolgauge mcp snapshot SERVER {}", shell_word(&snapshot)),
        };
        Some(format!(
            "MCP server {server} no longer matches snapshot `{snapshot}` ({}); the suite's tools are the snapshot's. Refresh the pin with `{refresh}`",
            drift.join("; "),
        ))
    }
}

/// The command that pins `server`'s tools to `snapshot` (a path as the suite resolved
/// it): run from the suite's directory when the server starts there, since its command's
/// relative paths are the suite's, not the current directory's.
pub fn snapshot_command(server: &ServerSpec, snapshot: &Path) -> String {
    match server.dir() {
        Some(dir) => format!(
            "cd {} && toolgauge mcp snapshot {} {}",
            shell_word(&dir.display().to_string()),
            shell_word(&server.to_string()),
            shell_word(
                &snapshot
                    .strip_prefix(dir)
                    .unwrap_or(snapshot)
                    .display()
                    .to_string()
            )
        ),
        None => format!(
            "toolgauge mcp snapshot {} {}",
            shell_word(&server.to_string()),
            shell_word(&snapshot.display().to_string())
        ),
    }
}

/// `word` quoted for a POSIX shell when it needs quoting (a `stdio:` spec has spaces).
pub fn shell_word(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| word.to_string(), |q| q.into_owned())
}

/// A `tools_from` resolved: the compiled source and the server's tools as tool specs
/// (compiled by the caller like the suite's own).
pub(super) struct Resolved {
    /// The compiled source.
    pub source: McpSource,
    /// One spec per server tool, located at `tools_from`.
    pub specs: Vec<ToolSpec>,
}

/// Resolve `tools_from` (read at `spec`'s location in the suite at `path`): read the
/// snapshot or take the live server's tools as listed before compiling
/// ([`super::servers`]), and turn each tool into a suite tool spec. Problems
/// are reported on `c`; `None` when the tools could not be read.
pub(super) fn resolve(
    c: &mut Checker<'_>,
    spec: Spanned<ToolsFromSpec>,
    path: &Path,
) -> Option<Resolved> {
    let at = spec.at();
    let ToolsFromSpec {
        mcp,
        snapshot,
        variants,
        allow_destructive,
        allow,
        isolation,
        input,
    } = spec.value;
    let calls = super::mcp_calls::compile(
        c,
        allow_destructive.as_ref(),
        allow.as_ref(),
        isolation.as_ref(),
        input.as_ref(),
    );
    let server = match &mcp {
        None => None,
        Some(m) => match ServerSpec::in_suite(&m.value, path) {
            Ok(s) => Some(s),
            Err(e) => {
                c.report(
                    m.at(),
                    "tools_from.mcp",
                    e.to_string(),
                    Some("e.g. `mcp: \"stdio:npx -y @modelcontextprotocol/server-everything\"` or `mcp: http://127.0.0.1:3001/mcp`".into()),
                );
                return None;
            }
        },
    };
    let snapshot_path = snapshot.as_ref().map(|s| {
        super::compile::lexical_join(path.parent().unwrap_or_else(|| Path::new("")), &s.value)
    });
    let (origin, tools) = match (&snapshot, &snapshot_path, &server) {
        (Some(s), Some(p), _) => match Snapshot::read(p) {
            Ok(snap) => (ToolsOrigin::Snapshot, snap.tools),
            Err(e) => {
                let hint = match &server {
                    Some(srv) => format!(
                        "write it with `{}` (the path is relative to the suite)",
                        snapshot_command(srv, p)
                    ),
                    None => format!(
                        "write it with `toolgauge mcp snapshot SERVER {}` (the path is relative to the suite)",
                        shell_word(&p.display().to_string())
                    ),
                };
                c.report(s.at(), "tools_from.snapshot", e.to_string(), Some(hint));
                return None;
            }
        },
        (_, _, Some(srv)) => {
            let m = mcp.as_ref().map_or(at, Spanned::at);
            // Listed before compiling and handed in (see `super::servers`).
            match c.servers.get(srv) {
                Some(Ok(tools)) => (ToolsOrigin::Live, tools.clone()),
                None => {
                    c.report(
                        m,
                        "tools_from.mcp",
                        super::servers::not_listed(srv),
                        Some(super::servers::NOT_LISTED_HINT.into()),
                    );
                    return None;
                }
                Some(Err(e)) => {
                    c.report(
                        m,
                        "tools_from.mcp",
                        format!("could not list the tools of the suite's MCP server: {e}"),
                        Some(format!(
                            "start the server (or fix the command), or pin its tools once with `{}` and add `snapshot: FILE` so the suite loads offline",
                            snapshot_command(srv, Path::new("FILE"))
                        )),
                    );
                    return None;
                }
            }
        }
        _ => {
            c.report(
                at,
                "tools_from",
                "`tools_from` names no tools: it needs `mcp: SERVER`, `snapshot: FILE`, or both",
                Some("e.g. `tools_from: {mcp: \"stdio:python server.py\", snapshot: server.snapshot.json}`; with both, the snapshot is read and the server is only reached by runs that execute calls on it".into()),
            );
            return None;
        }
    };

    // A problem of a server tool (a name or schema toolgauge cannot offer) points at
    // where the tools were read from: the snapshot, else the server.
    let at = match origin {
        ToolsOrigin::Snapshot => snapshot.as_ref().map_or(at, Spanned::at),
        ToolsOrigin::Live => mcp.as_ref().map_or(at, Spanned::at),
    };
    // By plain name (a located key does not borrow as `str`).
    let mut variants: IndexMap<String, (Spanned<String>, Wordings)> = variants
        .into_iter()
        .map(|(k, v)| (k.value.clone(), (k, v)))
        .collect();
    let specs: Vec<ToolSpec> = tools
        .iter()
        .map(|t| {
            let name = t.name().to_string();
            let wordings = variants.shift_remove(name.as_str()).map(|(_, w)| w);
            ToolSpec {
                name: Spanned {
                    value: name,
                    line: at.0,
                    column: at.1,
                },
                // The server's wording; a tool without one is offered with an empty
                // description, as an MCP client would offer it.
                description: Some(t.description().unwrap_or_default().to_string()),
                variants: wordings,
                parameters: Spanned {
                    value: Arc::new(t.input_schema()),
                    line: at.0,
                    column: at.1,
                },
                risk: None,
                idempotent: None,
                lint: None,
                mcp: Some(Arc::new(t.clone())),
            }
        })
        .collect();
    // Wordings left over name tools the server does not have.
    for (_, (name, _)) in variants {
        c.report(
            name.at(),
            format!("tools_from.variants.{}", name.value),
            format!(
                "`tools_from.variants` words tool `{}`, which the server does not list",
                name.value
            ),
            Some(format!(
                "{}word only tools the server lists: {}",
                match crate::util::suggest::closest(&name.value, tools.iter().map(McpTool::name)) {
                    Some(close) => format!("did you mean `{close}`? "),
                    None => String::new(),
                },
                tools
                    .iter()
                    .map(McpTool::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
    }
    Some(Resolved {
        source: McpSource {
            server,
            snapshot: snapshot_path,
            origin,
            tools,
            live_at_run: false,
            calls,
        },
        specs,
    })
}

/// Report every suite tool whose name a server tool also has, at the suite tool's name:
/// two definitions of one name would make the model's call ambiguous.
pub(super) fn report_clashes(c: &mut Checker<'_>, own: &[&ToolSpec], from_server: &[ToolSpec]) {
    let server_names: std::collections::HashSet<&str> =
        from_server.iter().map(|t| t.name.value.as_str()).collect();
    for (i, t) in own.iter().enumerate() {
        if server_names.contains(t.name.value.as_str()) {
            c.report(
                t.name.at(),
                format!("tools[{i}].name"),
                format!(
                    "tool `{}` is declared in `tools` and also comes from `tools_from` (the MCP server lists a tool of that name)",
                    t.name.value
                ),
                Some("rename or remove the suite's tool; to word the server's tool differently, give it variants under `tools_from.variants`".into()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: serde_json::Value) -> McpTool {
        McpTool::from_raw(v.as_object().unwrap().clone()).unwrap()
    }

    fn source(origin: ToolsOrigin) -> McpSource {
        McpSource {
            server: Some("stdio:srv --x".parse().unwrap()),
            snapshot: Some(PathBuf::from("suites/srv.snapshot.json")),
            origin,
            tools: vec![tool(json!({"name": "a", "description": "x"}))],
            live_at_run: true,
            calls: Default::default(),
        }
    }

    #[test]
    fn drift_is_against_the_pinned_tools_and_names_the_refresh() {
        let pinned = source(ToolsOrigin::Snapshot);
        assert_eq!(pinned.drift_warning(&pinned.tools.clone()), None);
        let live = vec![
            tool(json!({"name": "a", "description": "y"})),
            tool(json!({"name": "b"})),
        ];
        assert_eq!(
            pinned.drift_warning(&live).unwrap(),
            "MCP server `stdio:srv --x` no longer matches snapshot `suites/srv.snapshot.json` \
             (tool `a` changed: description; tool `b` is new on the server); the suite's tools \
             are the snapshot's. Refresh the pin with \
             `toolgauge mcp snapshot 'stdio:srv --x' suites/srv.snapshot.json`"
        );
        // Tools listed live have nothing pinned to drift from.
        assert!(source(ToolsOrigin::Live).drift(&live).is_empty());
    }

    #[test]
    fn server_tools_compile_with_their_wordings_and_raw_json() {
        let dir = tempfile::tempdir().unwrap();
        let snap = Snapshot {
            format: 1,
            server: "stdio:srv".into(),
            era: crate::suite::mcp::Era::Modern,
            protocol_version: "2026-07-28".into(),
            server_info: None,
            tools: vec![
                tool(
                    json!({"name": "a", "description": "Server A.", "_meta": {"v": 1},
                            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}),
                ),
                tool(json!({"name": "b"})),
            ],
        };
        snap.write(&dir.path().join("s.json")).unwrap();
        let path = dir.path().join("suite.yaml");
        let text = "tools_from:\n  snapshot: s.json\n  variants:\n    a:\n      mine: \"Mine A.\"\ncases:\n  - id: c\n    kind: should_not_call\n    prompt: hi\n";
        let suite = crate::suite::load_str(text, &path).unwrap();
        let names: Vec<&str> = suite.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let a = &suite.tools[0];
        assert_eq!(a.description("mine"), Some("Mine A."));
        assert_eq!(a.description("other"), Some("Server A."));
        assert_eq!(a.required, ["q"]);
        assert_eq!(a.mcp.as_ref().unwrap().raw["_meta"], json!({"v": 1}));
        // No description and no schema: empty text and an empty object schema.
        let b = &suite.tools[1];
        assert_eq!(b.description("mine"), Some(""));
        assert_eq!(*b.parameters, json!({"type": "object", "properties": {}}));
        let src = suite.mcp.as_ref().unwrap();
        assert_eq!(src.origin, ToolsOrigin::Snapshot);
        assert_eq!(src.server, None);
        assert_eq!(
            src.snapshot.as_deref(),
            Some(dir.path().join("s.json").as_path())
        );
        assert_eq!(src.tools, snap.tools);
        assert_eq!(suite.variants, ["mine"]);
    }
}
