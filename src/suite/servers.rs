//! The MCP servers a suite takes tools from, and their tool lists, handed in.
//!
//! Compiling a suite opens no connection: the suite layer sits below the MCP client.
//! A suite whose `tools_from` names a live server (with no snapshot to read instead), or
//! whose distractor pool is a server, says which servers it needs ([`servers_to_list`]);
//! the caller lists them (`crate::mcp::suites::load` does, for the command line) and
//! hands the lists in ([`ServerTools`]) to [`super::load_with`]. A suite loaded without
//! them ([`super::load()`]) reports each server it needed as a located error.

use std::collections::HashMap;
use std::path::Path;

use super::distractors::pool::is_server;
use super::mcp::{McpTool, ServerSpec};
use super::model::SuiteFile;

/// Tool lists of MCP servers, by the server (as written, and where it starts: the same
/// command in two suites' directories is two servers): each the tools it listed, or why
/// it could not list them.
#[derive(Debug, Clone, Default)]
pub struct ServerTools {
    lists: HashMap<ServerSpec, Result<Vec<McpTool>, String>>,
}

impl ServerTools {
    /// No server listed: what a suite that names none needs.
    pub fn none() -> ServerTools {
        ServerTools::default()
    }

    /// Record what `server` listed (or why it could not).
    pub fn insert(&mut self, server: &ServerSpec, listed: Result<Vec<McpTool>, String>) {
        self.lists.insert(server.clone(), listed);
    }

    /// What `server` listed, or `None` when it was not listed.
    pub fn get(&self, server: &ServerSpec) -> Option<&Result<Vec<McpTool>, String>> {
        self.lists.get(server)
    }
}

/// The error a suite reports for a server whose tools were not handed in.
pub(super) fn not_listed(server: &ServerSpec) -> String {
    format!(
        "the tools of MCP server `{server}` were not listed before the suite was compiled (this loader opens no connection)"
    )
}

/// The hint that goes with [`not_listed`].
pub(super) const NOT_LISTED_HINT: &str = "load the suite with `toolgauge` (or `toolgauge::mcp::suites::load` in the library), which lists its servers first, or pin the tools with `toolgauge mcp snapshot SERVER FILE` and add `snapshot: FILE`";

/// The servers whose tools compiling `model` (the suite at `path`) needs: `tools_from`'s
/// server when no snapshot is given, a distractor pool that is a server, and the
/// `tools_from` server of a distractor pool that is a suite file, each in the directory
/// of the suite that names it ([`ServerSpec::in_suite`]). A spec that does not parse is
/// left out (compiling reports it where it is written).
pub fn servers_to_list(model: &SuiteFile, path: &Path) -> Vec<ServerSpec> {
    let mut out: Vec<ServerSpec> = Vec::new();
    let mut add = |spec: Option<ServerSpec>| {
        if let Some(s) = spec
            && !out.contains(&s)
        {
            out.push(s);
        }
    };
    add(tools_from_server(model, path));
    if let Some(d) = &model.distractors {
        let from = d.from.value.as_str();
        if is_server(from) {
            add(ServerSpec::in_suite(from, path).ok());
        } else if from.ends_with(".yaml") || from.ends_with(".yml") || from.ends_with(".json") {
            // A pool that is a suite takes its tools from its own `tools_from`, maybe a
            // server; its own distractors are never followed (see `distractors`).
            let base = path.parent().unwrap_or_else(|| Path::new(""));
            let pool_path = base.join(from);
            if let Ok((pool, _)) = super::load::read_suite_file(&pool_path) {
                add(tools_from_server(&pool, &pool_path));
            }
        }
    }
    out
}

/// `tools_from`'s server, when the suite at `path` reads its tools from the live server
/// (no snapshot given).
fn tools_from_server(model: &SuiteFile, path: &Path) -> Option<ServerSpec> {
    let t = &model.tools_from.as_ref()?.value;
    if t.snapshot.is_some() {
        return None;
    }
    ServerSpec::in_suite(&t.mcp.as_ref()?.value, path).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::suite::SuiteError;

    const LIVE: &str = "tools_from:\n  mcp: \"stdio:python3 srv.py\"\ncases:\n  - id: c\n    kind: should_not_call\n    prompt: hi\n";

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The server of [`LIVE`] as a suite in `dir` names it (it starts there).
    fn server(dir: &Path) -> ServerSpec {
        "stdio:python3 srv.py"
            .parse::<ServerSpec>()
            .unwrap()
            .in_dir(dir)
    }

    #[test]
    fn the_servers_a_suite_needs_listed_are_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let pool = write(dir.path(), "pool.yaml", LIVE);
        let suite = format!(
            "{LIVE}distractors:\n  from: {}\n  n: [0, 1]\n",
            pool.file_name().unwrap().to_string_lossy()
        );
        let path = write(dir.path(), "s.yaml", &suite);
        let (model, _) = crate::suite::load::read_suite_file(&path).unwrap();
        // The suite's own server, and the pool suite's (the same one): listed once.
        assert_eq!(servers_to_list(&model, &path), vec![server(dir.path())]);
        // A pool suite elsewhere names its own `srv.py`, next to it: another server.
        std::fs::create_dir(dir.path().join("pools")).unwrap();
        write(&dir.path().join("pools"), "pool.yaml", LIVE);
        let path = write(
            dir.path(),
            "s2.yaml",
            &format!("{LIVE}distractors:\n  from: pools/pool.yaml\n  n: [0, 1]\n"),
        );
        let (model, _) = crate::suite::load::read_suite_file(&path).unwrap();
        assert_eq!(
            servers_to_list(&model, &path),
            vec![server(dir.path()), server(&dir.path().join("pools"))]
        );
        // A snapshot is read instead of the server: nothing to list.
        let pinned = LIVE.replace("  mcp:", "  snapshot: s.json\n  mcp:");
        let path = write(dir.path(), "pinned.yaml", &pinned);
        let (model, _) = crate::suite::load::read_suite_file(&path).unwrap();
        assert!(servers_to_list(&model, &path).is_empty());
    }

    #[test]
    fn a_live_server_s_tools_are_handed_in_never_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "s.yaml", LIVE);
        // Without the list, the suite says where it needs one and how to get it.
        let Err(SuiteError::Invalid(d)) = crate::suite::load(&path) else {
            panic!("a live server was loaded without its tools")
        };
        assert_eq!(d[0].field, "tools_from.mcp");
        assert!(d[0].message.contains("were not listed"), "{}", d[0].message);
        assert_eq!((d[0].line, d[0].column), (2, 8));
        // Handed in, its tools are the suite's.
        let mut listed = ServerTools::none();
        let tool: McpTool =
            serde_json::from_value(json!({"name": "lookup", "inputSchema": {"type": "object"}}))
                .unwrap();
        listed.insert(&server(dir.path()), Ok(vec![tool]));
        let suite = crate::suite::load_with(&path, &listed).unwrap();
        assert_eq!(suite.tools[0].name, "lookup");
        // A server that could not be listed is reported where the suite names it.
        let mut failed = ServerTools::none();
        failed.insert(&server(dir.path()), Err("spawn failed".into()));
        let Err(SuiteError::Invalid(d)) = crate::suite::load_with(&path, &failed) else {
            panic!("a failed listing was accepted")
        };
        assert!(
            d[0].message
                .contains("could not list the tools of the suite's MCP server: spawn failed"),
            "{}",
            d[0].message
        );
    }
}
