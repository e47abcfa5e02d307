//! Checking a parsed suite's meaning and building the compiled [`Suite`].
//!
//! Every problem is collected (not only the first), each with the file, line, column,
//! field path and a hint, so a user fixes a suite in one pass.
//!
//! [`compile`] runs the steps in the order their problems are reported: tools
//! (`tools`, with their variants and schemas), the variants and the `matrix`, cases
//! (`case`, their expectations in `expect` and expected calls in `calls`), then
//! `thresholds`. A `Checker` collects what each step finds.

mod calls;
mod case;
mod checker;
mod expect;
mod matrix;
mod schema;
mod thresholds;
mod tools;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::Profile;
use super::error::SuiteError;
use super::model::{SuiteFile, ToolSpec};
use super::normalize::Normalizer;
use super::tools_from::Resolved;
use super::{Suite, Tool};
use crate::util::digest::sha256_hex;
use case::{CaseContext, compile_cases};
use expect::names_behaviours;
use matrix::{compile_matrix, compile_suite_variants, variant_names};
use thresholds::compile_thresholds;
use tools::{ToolLists, compile_tool_lists};

pub(super) use checker::Checker;
pub use tools::EAGER_SCHEMAS;

/// Check `model` (parsed from `text`) and build the suite; the tools of the MCP servers
/// it names come listed in `servers` (see [`super::servers`]).
pub fn compile(
    mut model: SuiteFile,
    text: &str,
    path: &Path,
    servers: &super::servers::ServerTools,
) -> Result<Suite, SuiteError> {
    let mut c = Checker {
        path,
        text,
        diags: Vec::new(),
        servers,
    };
    let norm = Normalizer::new(&model.normalize);
    let name = suite_name(&model, path);
    check_not_empty(&mut c, &model);
    let server = resolve_tools_from(&mut c, &mut model, path);
    check_tools_offered(&mut c, &model, server.given);
    let lists = compile_tool_lists(&mut c, &model, &server.specs);
    let loops = compile_loops(&mut c, &model, &lists, norm, server.named);
    let variants = variant_names(&model, &lists);
    let ToolLists {
        tools,
        broken,
        case_tools,
    } = lists;
    let tool_index: HashMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_str(), &**t)).collect();
    let variant_systems = compile_suite_variants(&mut c, &model);
    let matrix = compile_matrix(&mut c, &model, &tools, &variants);
    compile_sampling(&mut c, &model);
    let profile = compile_profile(&mut c, &model);
    let ctx = CaseContext {
        tools: &tool_index,
        profile: &profile,
        own_tools: false,
        broken: &broken,
        norm,
        count: model.defaults.count.unwrap_or_default(),
        extra: model.defaults.extra_args.unwrap_or_default(),
    };
    let cases = compile_cases(&mut c, &model, &ctx, &loops, case_tools);

    let thresholds = compile_thresholds(&mut c, &model, &variants, &tool_index);
    let distractors = compile_distractors(&mut c, &model, &tools, &cases);
    let mcp = mcp_source(server.resolved, &cases);
    let judge = super::judge::compile_judge(&mut c, model.judge.as_ref(), path, &cases);
    super::placeholder::report(&mut c, text);
    if !c.diags.is_empty() {
        return Err(SuiteError::Invalid(c.diags));
    }
    let cassette = model
        .cassette
        .as_ref()
        .map(|p| lexical_join(path.parent().unwrap_or_else(|| Path::new("")), p));
    let names_behaviours = names_behaviours(&cases);
    Ok(Suite {
        name,
        description: model.description,
        path: path.to_path_buf(),
        hash: sha256_hex(text.as_bytes()),
        norm,
        tools,
        cases,
        matrix,
        thresholds,
        cassette,
        variants,
        system: model.system,
        variant_systems,
        sampling: model.sampling,
        profile,
        names_behaviours,
        mcp,
        distractors,
        judge,
    })
}

/// The suite's name: its `name`, else the file's stem, else `suite`.
fn suite_name(model: &SuiteFile, path: &Path) -> String {
    model
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "suite".into())
        })
}

/// A suite has cases (and tools, unless it has no cases either: then that is the one
/// problem named).
fn check_not_empty(c: &mut Checker<'_>, model: &SuiteFile) {
    if model.tools.is_empty() && model.cases.is_empty() {
        c.report((1, 1), "", "empty suite: no tools and no cases", Some("a suite needs `tools:` and at least one entry under `cases:`; see docs/suite-format.md".into()));
    } else if model.cases.is_empty() {
        c.report(
            (1, 1),
            "cases",
            "empty suite: `cases` has no entries",
            Some("add at least one case".into()),
        );
    }
}

/// The server's tools that `tools_from` brings, resolved before the suite's own tools
/// are checked.
struct FromServer {
    /// The suite gives `tools_from` (whether or not its tools could be read).
    given: bool,
    /// `tools_from.mcp` names a server, so loop cases may run on it.
    named: bool,
    /// The resolved source (its tool specs moved to `specs`); `None` when not given or
    /// not readable (reported).
    resolved: Option<Resolved>,
    /// The server's tools as tool specs, compiled with the suite's own.
    specs: Vec<ToolSpec>,
}

/// Take `tools_from` out of the model and resolve it: the server's tools (from its
/// snapshot or the live server) join the suite's own, so the checks of an empty `tools`
/// know of them.
fn resolve_tools_from(c: &mut Checker<'_>, model: &mut SuiteFile, path: &Path) -> FromServer {
    // Whether loop cases run on a server: read before `tools_from` is taken below.
    let named = model
        .tools_from
        .as_ref()
        .is_some_and(|t| t.value.mcp.is_some());
    let spec = model.tools_from.take();
    let given = spec.is_some();
    let mut resolved = spec.and_then(|spec| super::tools_from::resolve(c, spec, path));
    let specs = resolved
        .as_mut()
        .map(|r| std::mem::take(&mut r.specs))
        .unwrap_or_default();
    FromServer {
        given,
        named,
        resolved,
        specs,
    }
}

/// Some tool is offered to every case: by `tools`, `tools_from` (`from_server`), or the
/// case's own `tools`.
fn check_tools_offered(c: &mut Checker<'_>, model: &SuiteFile, from_server: bool) {
    if model.tools.is_empty()
        && !from_server
        && !model.cases.is_empty()
        && model.cases.iter().any(|c| c.tools.is_none())
    {
        c.report(
            (1, 1),
            "tools",
            "`tools` has no entries",
            Some("offer at least one tool (or give every case its own `tools`), or the suite measures nothing about tool calls".into()),
        );
    }
}

/// The suite's own loop keys (`mocks`, `limits`, `policy`), checked against every tool
/// the suite or any case offers; `server`: `tools_from.mcp` names a server.
fn compile_loops(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    lists: &ToolLists,
    norm: Normalizer,
    server: bool,
) -> super::loop_compile::SuiteLoops {
    let mut all_tools: HashMap<&str, &Tool> = lists
        .tools
        .iter()
        .map(|t| (t.name.as_str(), &**t))
        .collect();
    let mut all_broken = lists.broken.clone();
    for (t, b) in lists.case_tools.iter().flatten() {
        for tool in t {
            all_tools.entry(tool.name.as_str()).or_insert(&**tool);
        }
        all_broken.extend(b.iter().cloned());
    }
    let suite_scope = super::loop_compile::ToolScope {
        tools: &all_tools,
        broken: &all_broken,
        owner: "suite's",
    };
    super::loop_compile::suite_loops(c, model, &suite_scope, norm, server)
}

/// The suite's `distractors` (other tools added to each case's list, to measure tool
/// selection as the tool count grows), their problems reported.
fn compile_distractors(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    tools: &[Arc<Tool>],
    cases: &[super::Case],
) -> Option<Arc<super::distractors::Distractors>> {
    let (distractors, problems) =
        super::distractors::compile(model.distractors.as_ref(), c.path, tools, cases, c.servers);
    for (at, field, message, hint) in problems {
        c.report(at, field, message, hint);
    }
    distractors
}

/// The MCP server the suite's tools came from, if any. The run talks to the live server
/// when loop cases execute their calls there; it then lists the server's tools once and
/// warns when they drifted from the snapshot.
fn mcp_source(
    resolved: Option<Resolved>,
    cases: &[super::Case],
) -> Option<Arc<super::tools_from::McpSource>> {
    resolved.map(|r| {
        let mut source = r.source;
        source.live_at_run = source.server.is_some() && cases.iter().any(|k| k.episode.is_some());
        Arc::new(source)
    })
}

/// Check `sampling`'s values against their ranges ([`crate::suite::sampling`]).
fn compile_sampling(c: &mut Checker<'_>, model: &SuiteFile) {
    use crate::suite::sampling::{
        MAX_OUTPUT_TOKENS_HINT, TEMPERATURE_HINT, max_output_tokens_problem, temperature_problem,
    };
    let s = &model.sampling;
    if let Some(t) = &s.temperature
        && let Some(why) = temperature_problem("`temperature`", t.value)
    {
        c.report(
            t.at(),
            "sampling.temperature",
            why,
            Some(TEMPERATURE_HINT.into()),
        );
    }
    if let Some(n) = &s.max_output_tokens
        && let Some(why) = max_output_tokens_problem("`max_output_tokens`", n.value)
    {
        c.report(
            n.at(),
            "sampling.max_output_tokens",
            why,
            Some(MAX_OUTPUT_TOKENS_HINT.into()),
        );
    }
    if let Some(m) = &s.stream
        && let Err(why) = m.value.mode()
    {
        c.report(
            m.at(),
            "sampling.stream",
            why,
            Some(crate::suite::stream::SUITE_HINT.into()),
        );
    }
}

/// The scoring profile the suite declares, its problems reported.
fn compile_profile(c: &mut Checker<'_>, model: &SuiteFile) -> Profile {
    let mut problems = Vec::new();
    let profile = crate::suite::profile::compile(model.profile.as_ref(), &mut problems);
    for p in problems {
        c.report(p.at, p.field, p.message, p.hint);
    }
    profile
}

/// `base/rel` with `.` and `..` resolved lexically where possible (`suites/../fixtures/x`
/// becomes `fixtures/x`), so messages show the path a user would type.
pub(super) fn lexical_join(base: &Path, rel: &str) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in base.join(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod behaviour_tests;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn cassette_paths_resolve_dot_dot_lexically() {
        let j = |b: &str, r: &str| lexical_join(Path::new(b), r).display().to_string();
        assert_eq!(j("suites", "../fixtures/w.jsonl"), "fixtures/w.jsonl");
        assert_eq!(j("", "../w.jsonl"), "../w.jsonl");
        assert_eq!(j("/a/b", "./c/../d.jsonl"), "/a/b/d.jsonl");
        assert_eq!(j("a", "../../w.jsonl"), "../w.jsonl");
    }
}
