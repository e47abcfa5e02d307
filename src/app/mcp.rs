//! `toolgauge mcp tools`, `toolgauge mcp snapshot` and `toolgauge import mcp`: look at an
//! MCP server's tools, pin them to a snapshot, and start a suite from them.
//!
//! Each command takes the server as `stdio:CMD ARGS…` or an `http(s)://` URL; `mcp tools`
//! and `import mcp` also take a snapshot file, so they work offline on a pinned server.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::AppError;
use crate::cli::{ImportMcpArgs, McpSnapshotArgs, McpToolsArgs};
use crate::exit;
use crate::mcp::fetch::{LIST_BOUND, Listing, list_tools_blocking};
use crate::mcp::{ClientOptions, Era, McpTool, ServerSpec, Snapshot};
use crate::provider::types::ToolDefinition;
use crate::score::tokens::tool_definition_tokens;
use crate::suite::placeholder::PLACEHOLDER;
use crate::suite::tools_from::shell_word;

/// Where a command's tools came from.
pub(super) enum Source {
    /// A live server.
    Live(ServerSpec),
    /// A snapshot file.
    File(PathBuf),
}

/// Read SERVER as a server spec, or (when `files` and it names an existing file) as a
/// snapshot file.
pub(super) fn source(server: &str, files: bool) -> Result<Source, AppError> {
    let t = server.trim();
    let lower = t.to_ascii_lowercase();
    let looks_like_server = lower.starts_with("stdio:")
        || lower.starts_with("http://")
        || lower.starts_with("https://");
    if files && !looks_like_server && Path::new(t).is_file() {
        return Ok(Source::File(PathBuf::from(t)));
    }
    t.parse::<ServerSpec>().map(Source::Live).map_err(|e| {
        AppError::bad(
            e.to_string(),
            Some(if files {
                "quote the whole server as one argument: \"stdio:npx -y @modelcontextprotocol/server-everything\"; or give a snapshot file that exists"
            } else {
                "quote the whole server as one argument: \"stdio:npx -y @modelcontextprotocol/server-everything\""
            }),
        )
    })
}

/// List the tools of a live server, as a command's bad input when it fails (the user named
/// a server that does not work: exit 2).
pub(super) fn list_live(spec: &ServerSpec) -> Result<Listing, AppError> {
    list_tools_blocking(spec, ClientOptions::default(), LIST_BOUND).map_err(|e| {
        AppError::bad(
            e.to_string(),
            Some("check that the command starts an MCP server on its stdio (or that the URL is a Streamable HTTP endpoint), e.g. run it by hand"),
        )
    })
}

/// Read a snapshot file as a command's bad input when it fails.
fn read_snapshot(path: &Path) -> Result<Snapshot, AppError> {
    Snapshot::read(path).map_err(|e| {
        AppError::bad(
            e.to_string(),
            Some("write one with `toolgauge mcp snapshot SERVER FILE`"),
        )
    })
}

/// The listing of `source`, and the server as it is named (a snapshot names the server it
/// was taken of).
fn listing_of(source: &Source) -> Result<(Listing, String), AppError> {
    match source {
        Source::Live(spec) => Ok((list_live(spec)?, spec.to_string())),
        Source::File(path) => {
            let snap = read_snapshot(path)?;
            Ok((Listing::from_snapshot(&snap), snap.server))
        }
    }
}

/// The definition a suite built from `tool` offers the model (what
/// `tools_from` compiles it to under the server's wording), so counted tokens equal a run's.
fn definition(tool: &McpTool) -> ToolDefinition {
    ToolDefinition {
        name: tool.name().to_string(),
        description: tool.description().unwrap_or_default().to_string(),
        parameters: Arc::new(tool.input_schema()),
    }
}

/// The era as printed.
fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "2026-07-28 (modern: server/discover)",
        Era::Legacy => "legacy (initialize)",
    }
}

/// `toolgauge mcp tools SERVER [--json]`.
pub(super) fn tools(args: &McpToolsArgs) -> Result<u8, AppError> {
    let src = source(&args.server, true)?;
    let (listing, server) = listing_of(&src)?;
    let defs: Vec<ToolDefinition> = listing.tools.iter().map(definition).collect();
    let per_tool: Vec<u64> = defs
        .iter()
        .map(|d| tool_definition_tokens(std::slice::from_ref(d)))
        .collect();
    let total = tool_definition_tokens(&defs);
    let from = match &src {
        Source::Live(_) => "live".to_string(),
        Source::File(p) => format!("snapshot {}", p.display()),
    };
    if args.json {
        let tools: Vec<Value> = listing
            .tools
            .iter()
            .zip(&per_tool)
            .map(|(t, n)| json!({"name": t.name(), "tokens": n, "raw": t.raw}))
            .collect();
        let out = json!({
            "server": server,
            "source": match &src { Source::Live(_) => "live", Source::File(_) => "snapshot" },
            "era": listing.era,
            "protocol_version": listing.protocol_version,
            "server_info": listing.server_info,
            "tokenizer": "o200k_base",
            "total_tokens": total,
            "tools": tools,
        });
        sayln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(exit::OK);
    }
    sayln!("server: {server} ({from})");
    sayln!(
        "era: {}, protocol version {}",
        era_name(listing.era),
        listing.protocol_version
    );
    if let Some(info) = &listing.server_info {
        let field = |k: &str| info.get(k).and_then(Value::as_str).unwrap_or("?");
        sayln!("server info: {} {}", field("name"), field("version"));
    }
    sayln!(
        "{} tools, {total} tokens of tool definitions (o200k_base, counted as a run counts them)",
        listing.tools.len()
    );
    for (t, n) in listing.tools.iter().zip(&per_tool) {
        sayln!();
        match t.title() {
            Some(title) => sayln!("{} ({title}): {n} tokens", t.name()),
            None => sayln!("{}: {n} tokens", t.name()),
        }
        match t.description() {
            Some(d) => {
                for line in d.lines() {
                    sayln!("  {line}");
                }
            }
            None => sayln!("  (no description)"),
        }
        sayln!("  input: {}", t.input_schema());
        if let Some(out) = t.output_schema() {
            sayln!("  output: {out}");
        }
        let hints = hints(t);
        if !hints.is_empty() {
            sayln!("  annotations (the server's hints, not verified): {hints}");
        }
    }
    Ok(exit::OK)
}

/// A tool's annotation hints as `readOnlyHint=true, …`, in the protocol's order.
fn hints(t: &McpTool) -> String {
    let a = t.annotations();
    [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
    .collect::<Vec<_>>()
    .join(", ")
}

/// `toolgauge mcp snapshot SERVER FILE [--check]`.
pub(super) fn snapshot(args: &McpSnapshotArgs) -> Result<u8, AppError> {
    let Source::Live(spec) = source(&args.server, false)? else {
        unreachable!("source() without files only gives live servers")
    };
    if args.check {
        // Read the pin first: a missing or corrupt file is the user's to fix before the
        // server is started at all.
        let pinned = read_snapshot(&args.file)?;
        let listing = list_live(&spec)?;
        let drift = pinned.drift(&listing.tools);
        if drift.is_empty() {
            sayln!(
                "{}: up to date with {spec} ({} tools)",
                args.file.display(),
                listing.tools.len()
            );
            return Ok(exit::OK);
        }
        sayln!(
            "{}: stale, {spec} has changed since it was pinned:",
            args.file.display()
        );
        for d in &drift {
            sayln!("  {d}");
        }
        sayln!(
            "refresh it with `toolgauge mcp snapshot {} {}`",
            shell_word(&spec.to_string()),
            shell_word(&args.file.display().to_string())
        );
        return Ok(exit::THRESHOLD_FAILED);
    }
    let listing = list_live(&spec)?;
    listing
        .snapshot(&spec)
        .write(&args.file)
        .map_err(|e| AppError::bad(e.to_string(), None))?;
    sayln!(
        "wrote {} tools of {spec} ({}, protocol {}) to {}",
        listing.tools.len(),
        era_name(listing.era),
        listing.protocol_version,
        args.file.display()
    );
    Ok(exit::OK)
}

/// `toolgauge import mcp SERVER --out suite.yaml [--force]`.
pub(super) fn import_mcp(args: &ImportMcpArgs) -> Result<u8, AppError> {
    let src = source(&args.server, true)?;
    let snapshot_path = snapshot_path_for(&args.out)?;
    for p in [&args.out, &snapshot_path] {
        if p.exists() && !args.force {
            return Err(AppError::bad(
                format!("{} exists", p.display()),
                Some("give --force to replace it, or another --out"),
            ));
        }
    }
    let (listing, server) = listing_of(&src)?;
    if listing.tools.is_empty() {
        return Err(AppError::bad(
            format!("MCP server `{server}` lists no tools: there is nothing to evaluate"),
            None,
        ));
    }
    // The suite's server starts in the suite's directory, not here: its relative paths
    // are written as seen from there, so the suite works wherever it is run from.
    let cwd = std::env::current_dir().map_err(|e| {
        AppError::bad(
            format!("cannot read the current directory: {e}"),
            Some("run the import from a directory that exists"),
        )
    })?;
    let (spec, moved) = match server.parse::<ServerSpec>() {
        Ok(spec) => {
            let (spec, moved) = for_suite(&spec, &args.out, &cwd);
            (Some(spec), moved)
        }
        Err(_) => (None, Vec::new()),
    };
    let snap = Snapshot {
        format: crate::mcp::snapshot::SNAPSHOT_FORMAT,
        server: server.clone(),
        era: listing.era,
        protocol_version: listing.protocol_version.clone(),
        server_info: listing.server_info.clone(),
        tools: listing.tools.clone(),
    };
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            AppError::bad(
                format!("cannot create directory {}: {e}", dir.display()),
                None,
            )
        })?;
    }
    snap.write(&snapshot_path)
        .map_err(|e| AppError::bad(e.to_string(), None))?;
    let snapshot_name = snapshot_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = suite_name(&args.out);
    let text = suite_text(&name, spec.as_ref(), &server, &snapshot_name, &listing);
    std::fs::write(&args.out, &text)
        .map_err(|e| AppError::bad(format!("cannot write {}: {e}", args.out.display()), None))?;
    // What `validate` will say: only placeholders to fill in, or the import is broken.
    let todo = match crate::mcp::suites::load(&args.out) {
        Ok(_) => 0,
        Err(crate::suite::SuiteError::Invalid(diags))
            if diags.iter().all(crate::suite::placeholder::is_placeholder) =>
        {
            diags.len()
        }
        Err(e) => {
            return Err(AppError::Incomplete(format!(
                "the imported suite {} does not load: {e}",
                args.out.display()
            )));
        }
    };
    sayln!(
        "{}: {} tools of {server}, {} placeholder cases; tools pinned in {}",
        args.out.display(),
        listing.tools.len(),
        listing.tools.len() + 1,
        snapshot_path.display()
    );
    if !moved.is_empty() {
        let pairs: Vec<String> = moved.iter().map(|(a, b)| format!("{a} -> {b}")).collect();
        sayln!(
            "the server's relative paths are written relative to the suite's directory, where a suite's server starts: {}",
            pairs.join(", ")
        );
    }
    sayln!(
        "fill in the {todo} `{PLACEHOLDER}` values, then `toolgauge validate {}`",
        shell_word(&args.out.display().to_string())
    );
    Ok(exit::OK)
}

/// `spec` (named from `cwd`) as the suite at `out` must name it. A suite's `stdio:`
/// server starts in the suite's directory, so a word of its command that is a relative
/// path to something that exists from `cwd` is rewritten to the same path seen from the
/// suite's directory. Other words stay: options, package names, a bare program name
/// (looked up on PATH), paths that do not exist yet. Returns the server and each word
/// rewritten (as given, as written).
fn for_suite(spec: &ServerSpec, out: &Path, cwd: &Path) -> (ServerSpec, Vec<(String, String)>) {
    let ServerSpec::Stdio { program, args, .. } = spec else {
        return (spec.clone(), Vec::new());
    };
    let here = normal(cwd);
    let suite_dir = normal(&cwd.join(out.parent().unwrap_or_else(|| Path::new(""))));
    if suite_dir == here {
        return (spec.clone(), Vec::new());
    }
    let mut moved = Vec::new();
    let mut seen_from_suite = |word: &str, is_program: bool| -> String {
        let path = Path::new(word);
        let path_like = !word.is_empty()
            && !word.starts_with('-')
            && path.is_relative()
            && (!is_program || path.components().count() > 1);
        if !path_like || !cwd.join(path).exists() {
            return word.to_string();
        }
        let mut rel = relative(&suite_dir, &normal(&cwd.join(path)));
        // A program must stay a path: a bare name would be looked up on PATH instead.
        if is_program && rel.components().count() == 1 {
            rel = Path::new(".").join(rel);
        }
        let rel = rel.display().to_string();
        moved.push((word.to_string(), rel.clone()));
        rel
    };
    let program = seen_from_suite(program, true);
    let args = args.iter().map(|a| seen_from_suite(a, false)).collect();
    let written = ServerSpec::Stdio {
        program,
        args,
        dir: None,
    };
    (written, moved)
}

/// `path` with `.` and `..` resolved by name (the paths here come from the command line
/// and are joined to the current directory, so this is where they point).
fn normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `target` seen from `dir` (both absolute and [`normal`]).
fn relative(dir: &Path, target: &Path) -> PathBuf {
    let d: Vec<_> = dir.components().collect();
    let t: Vec<_> = target.components().collect();
    let common = d.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..d.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `DIR/NAME.snapshot.json` for suite `DIR/NAME.yaml`.
fn snapshot_path_for(out: &Path) -> Result<PathBuf, AppError> {
    let stem = out.file_stem().filter(|s| !s.is_empty()).ok_or_else(|| {
        AppError::bad(
            format!("--out {} names no file", out.display()),
            Some("e.g. --out suites/my-server.yaml"),
        )
    })?;
    Ok(out.with_file_name(format!("{}.snapshot.json", stem.to_string_lossy())))
}

/// The suite's name: the file stem.
fn suite_name(out: &Path) -> String {
    out.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mcp".into())
}

/// `text` as a YAML scalar (JSON's double-quoted form is valid YAML).
fn q(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// A case id made of a tool name: the characters ids keep well in file names and
/// cassette keys.
fn case_id(tool: &str) -> String {
    format!("call-{}", crate::util::file_name::safe_name(tool))
}

/// The first line of `text`, at most `n` characters.
fn excerpt(text: &str, n: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() <= n {
        return line.to_string();
    }
    let cut: String = line.chars().take(n).collect();
    format!("{cut}…")
}

/// The placeholder of a required argument: what kind of value goes there.
fn arg_placeholder(schema: &Value, name: &str) -> String {
    let prop = schema.get("properties").and_then(|p| p.get(name));
    let kind = prop
        .and_then(|p| p.get("type"))
        .map(|t| match t {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "value".into());
    let about = prop
        .and_then(|p| p.get("description"))
        .and_then(Value::as_str)
        .map(|d| format!(" ({})", excerpt(d, 60)))
        .unwrap_or_default();
    format!("{PLACEHOLDER}: the {kind} `{name}` the request implies{about}")
}

/// The suite `import mcp` writes.
fn suite_text(
    name: &str,
    spec: Option<&ServerSpec>,
    server: &str,
    snapshot_name: &str,
    listing: &Listing,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Imported by `toolgauge import mcp` from MCP server `{server}`\n\
         # ({} tools; era {}, protocol {}).\n\
         #\n\
         # The tools are the server's, read from the snapshot {snapshot_name} next to this file\n\
         # (each tool's raw JSON as the server listed it), so runs replay offline. After the\n\
         # server changes, `toolgauge mcp snapshot --check SERVER {snapshot_name}` says how,\n\
         # and `toolgauge mcp snapshot SERVER {snapshot_name}` pins it again.\n\
         #\n\
         # Replace every `{PLACEHOLDER}` value (`toolgauge validate` lists those left), then run\n\
         # it with `toolgauge run THIS_FILE --target PROVIDER:MODEL`.",
        listing.tools.len(),
        era_name(listing.era),
        listing.protocol_version,
    );
    let _ = writeln!(s, "name: {}", q(name));
    let _ = writeln!(
        s,
        "description: {}",
        q(&format!(
            "Tool selection on the tools of MCP server `{server}`."
        ))
    );
    s.push_str("\ntools_from:\n");
    match spec {
        Some(spec) => {
            let _ = writeln!(s, "  mcp: {}", q(&spec.to_string()));
        }
        None => {
            let _ = writeln!(
                s,
                "  # mcp: \"stdio:CMD ARGS\"   # the server, for drift checks and loops"
            );
        }
    }
    let _ = writeln!(s, "  snapshot: {}", q(snapshot_name));
    let first = &listing.tools[0];
    let _ = writeln!(
        s,
        "  # Your wordings of the server's tools, compared with the server's own (variant\n  \
         # `server`): per tool, variant name to a description (or to `description`,\n  \
         # `parameter_descriptions`, `parameters`, as in a tool's `variants`).\n  \
         # variants:\n  \
         #   {}:\n  \
         #     mine: \"Your description of {}.\"",
        q(first.name()),
        first.name().replace('"', "")
    );
    s.push_str(
        "\n# Variant `server`: the server's descriptions as listed. Variants you add under\n\
         # `tools_from.variants` change the tools they word; the others keep the server's text.\n\
         variants:\n  server: {}\n",
    );
    s.push_str("\ncases:\n");
    // Two tool names may map to one id (`a.b`, `a-b`): number the later ones.
    let mut ids = std::collections::HashSet::new();
    ids.insert("no-tool-needed".to_string());
    for t in &listing.tools {
        let base = case_id(t.name());
        let id = (1..)
            .map(|n| {
                if n == 1 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                }
            })
            .find(|id| !ids.contains(id))
            .unwrap_or(base);
        ids.insert(id.clone());
        let schema = t.input_schema();
        let about = t
            .description()
            .map(|d| format!(" ({})", excerpt(d, 80)))
            .unwrap_or_default();
        let _ = writeln!(s, "  - id: {}", q(&id));
        s.push_str("    kind: should_call\n");
        let _ = writeln!(
            s,
            "    prompt: {}",
            q(&format!(
                "{PLACEHOLDER}: a request that needs `{}`{about}",
                t.name()
            ))
        );
        s.push_str("    expect:\n      calls:\n");
        let _ = writeln!(s, "        - tool: {}", q(t.name()));
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !required.is_empty() {
            s.push_str("          args:\n");
            for r in required {
                let _ = writeln!(
                    s,
                    "            {}: {}",
                    q(r),
                    q(&arg_placeholder(&schema, r))
                );
            }
        }
    }
    s.push_str("  - id: no-tool-needed\n    kind: should_not_call\n");
    let _ = writeln!(
        s,
        "    prompt: {}",
        q(&format!(
            "{PLACEHOLDER}: a request none of the server's tools should answer"
        ))
    );
    s
}

/// The file of a run directory that keeps the raw MCP tools a `tools_from` suite ran with.
pub const RUN_TOOLS_FILE: &str = "mcp_tools.json";

/// For a `tools_from` suite: write the server's raw tools into the run directory (reports
/// show definitions as sent; this keeps what the server listed, vendor fields included),
/// and, when the run reaches the live server anyway, warn when it drifted from the
/// snapshot the suite was loaded with.
pub(super) fn record_run_tools(dir: &Path, suite: &crate::suite::Suite) -> Result<(), AppError> {
    let Some(source) = &suite.mcp else {
        return Ok(());
    };
    let doc = json!({
        "server": source.server.as_ref().map(ToString::to_string),
        "snapshot": source.snapshot.as_ref().map(|p| p.display().to_string()),
        "origin": match source.origin {
            crate::suite::tools_from::ToolsOrigin::Snapshot => "snapshot",
            crate::suite::tools_from::ToolsOrigin::Live => "live",
        },
        "tools": source.tools,
    });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    std::fs::write(dir.join(RUN_TOOLS_FILE), text).map_err(|e| {
        AppError::Incomplete(format!(
            "failed to write {} in `{}`: {e}",
            RUN_TOOLS_FILE,
            dir.display()
        ))
    })?;
    if source.live_at_run
        && source.origin == crate::suite::tools_from::ToolsOrigin::Snapshot
        && let Some(server) = &source.server
    {
        // A listing that fails is the loop's problem to report (its calls fail as
        // harness errors); here it only means drift cannot be checked.
        match list_tools_blocking(server, ClientOptions::default(), LIST_BOUND) {
            Ok(listing) => {
                if let Some(w) = source.drift_warning(&listing.tools) {
                    warnln!("warning: {w}");
                }
            }
            Err(e) => warnln!("warning: cannot check the snapshot against the live server: {e}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(spec: &str, out: &str, cwd: &Path) -> (String, Vec<(String, String)>) {
        let (spec, moved) = for_suite(&spec.parse().unwrap(), Path::new(out), cwd);
        (spec.to_string(), moved)
    }

    #[test]
    fn a_command_s_existing_relative_paths_are_rewritten_as_seen_from_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::create_dir_all(cwd.join("srv/.venv/bin")).unwrap();
        std::fs::write(cwd.join("srv/.venv/bin/python"), "").unwrap();
        std::fs::write(cwd.join("srv/server.py"), "").unwrap();
        std::fs::create_dir(cwd.join("data")).unwrap();
        let spec = "stdio:srv/.venv/bin/python srv/server.py --root data -y @scope/pkg stdio";
        let (written, pairs) = moved(spec, "suites/mine.yaml", cwd);
        assert_eq!(
            written,
            "stdio:../srv/.venv/bin/python ../srv/server.py --root ../data -y @scope/pkg stdio"
        );
        assert_eq!(pairs.len(), 3);
        assert_eq!(
            pairs[1],
            ("srv/server.py".into(), "../srv/server.py".into())
        );
        // A suite in the current directory keeps the command as given, and a bare
        // program name stays a PATH lookup.
        assert_eq!(moved(spec, "mine.yaml", cwd).0, spec);
        assert_eq!(
            moved("stdio:python srv/server.py", "./x/../mine.yaml", cwd).1,
            []
        );
        // Next to the suite, a program keeps a path (`./`), not a bare name.
        let (written, _) = moved("stdio:srv/server.py", "srv/s.yaml", cwd);
        assert_eq!(written, "stdio:./server.py");
        // Absolute paths and URLs are left alone.
        let abs = format!("stdio:python {}", cwd.join("srv/server.py").display());
        assert_eq!(moved(&abs, "suites/s.yaml", cwd).1, []);
        assert_eq!(
            moved("http://127.0.0.1:1/mcp", "suites/s.yaml", cwd).0,
            "http://127.0.0.1:1/mcp"
        );
    }
}
