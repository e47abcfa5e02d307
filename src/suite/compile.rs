//! Checking a parsed suite's meaning and building the compiled [`Suite`].
//!
//! Every problem is collected (not only the first), each with the file, line, column,
//! field path and a hint, so a user fixes a suite in one pass.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::Profile;
use super::error::{Diagnostic, SuiteError};
use super::matcher::{CompileContext, Matcher};
use super::model::{
    CaseSpec, CountMode, ExpectSpec, ExpectedCallSpec, ExtraArgs, MessageSpec, OutcomeSpec, Role,
    SuiteFile, ToolChoiceSpec, ToolSpec, ToolVariantSpec,
};
use super::normalize::Normalizer;
use super::span::Spanned;
use super::{
    CallsExpectation, Case, CaseKind, Expectation, ExpectedCall, MatrixDefaults, ModeOverride,
    Outcome, Suite, TextChecks, Threshold, Tool, ToolVariant,
};
use crate::chat::{Message, ToolCall, ToolChoice};
use crate::util::digest::sha256_hex;
use crate::util::limits::MAX_REPEATS;
use crate::util::parse_error::source_line;
use crate::util::suggest;

pub(super) struct Checker<'a> {
    path: &'a Path,
    text: &'a str,
    diags: Vec<Diagnostic>,
    /// The tool lists of the MCP servers the suite names, listed before compiling.
    pub(super) servers: &'a super::servers::ServerTools,
}

impl Checker<'_> {
    /// How many problems were reported so far.
    pub(super) fn diag_count(&self) -> usize {
        self.diags.len()
    }

    pub(super) fn report(
        &mut self,
        at: (u32, u32),
        field: impl Into<String>,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.diags.push(Diagnostic {
            file: self.path.to_path_buf(),
            line: at.0,
            column: at.1,
            field: field.into(),
            message: message.into(),
            hint,
            source_line: source_line(self.text, at.0),
        });
    }

    /// A located problem to report later (when the run knows whether it is one).
    pub(super) fn diagnostic(
        &self,
        at: (u32, u32),
        field: impl Into<String>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Diagnostic {
        Diagnostic {
            file: self.path.to_path_buf(),
            line: at.0,
            column: at.1,
            field: field.into(),
            message: message.into(),
            hint,
            source_line: source_line(self.text, at.0),
        }
    }
}

/// Check `model` (parsed from `text`) and build the suite.
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
    let name = model
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "suite".into())
        });

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
    // `tools_from`: the server's tools (from its snapshot or the live server) join the
    // suite's own below; resolved first so the checks of an empty `tools` know of them.
    // Whether loop cases run on a server: read before `tools_from` is taken below.
    let server_named = model
        .tools_from
        .as_ref()
        .is_some_and(|t| t.value.mcp.is_some());
    let mut tools_from = model
        .tools_from
        .take()
        .map(|spec| (spec.at(), super::tools_from::resolve(&mut c, spec, path)));
    if model.tools.is_empty()
        && tools_from.is_none()
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

    let mcp_specs: Vec<ToolSpec> = tools_from
        .as_mut()
        .and_then(|(_, r)| r.as_mut())
        .map(|r| std::mem::take(&mut r.specs))
        .unwrap_or_default();
    let declared = model.tools.len()
        + mcp_specs.len()
        + model
            .cases
            .iter()
            .map(|c| c.tools.as_ref().map_or(0, |t| t.0.len()))
            .sum::<usize>();
    let eager = declared <= EAGER_SCHEMAS;
    let mut shared = Shared::new();
    let suite_specs: Vec<&ToolSpec> = model.tools.iter().collect();
    let (mut tools, mut broken) = compile_tools(&mut c, &suite_specs, "tools", eager, &mut shared);
    if !mcp_specs.is_empty() {
        let specs: Vec<&ToolSpec> = mcp_specs.iter().collect();
        let (from_server, server_broken) =
            compile_tools(&mut c, &specs, "tools_from.tools", eager, &mut shared);
        super::tools_from::report_clashes(&mut c, &suite_specs, &mcp_specs);
        tools.extend(from_server);
        broken.extend(server_broken);
    }
    let tool_index: HashMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_str(), &**t)).collect();
    // Each case's own tools, compiled up front (variants are collected over all tools).
    let case_tools: Vec<Option<ToolList>> = model
        .cases
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            spec.tools.as_ref().map(|t| {
                let specs: Vec<&ToolSpec> = t.0.iter().map(|s| &**s).collect();
                let field = format!("cases[{i}].tools");
                compile_tools(&mut c, &specs, &field, eager, &mut shared)
            })
        })
        .collect();
    drop(shared);
    let mut all_tools: HashMap<&str, &Tool> = tool_index.clone();
    let mut all_broken = broken.clone();
    for (t, b) in case_tools.iter().flatten() {
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
    let loops = super::loop_compile::suite_loops(&mut c, &model, &suite_scope, norm, server_named);

    let mut variants: Vec<String> = Vec::new();
    // Shared tools are looked at once.
    let mut seen: HashSet<*const Tool> = HashSet::new();
    for t in tools
        .iter()
        .chain(case_tools.iter().flatten().flat_map(|(t, _)| t.iter()))
        .filter(|t| seen.insert(Arc::as_ptr(t)))
    {
        for v in t.variants.keys() {
            if !variants.contains(v) {
                variants.push(v.clone());
            }
        }
    }
    // Variants only the top-level `variants` declares (a system prompt) come after.
    for v in model.variants.keys() {
        if !variants.contains(&v.value) {
            variants.push(v.value.clone());
        }
    }
    let variant_systems = compile_suite_variants(&mut c, &model);
    if variants.is_empty() {
        variants.push("default".into());
    }

    let matrix = compile_matrix(&mut c, &model, &tools, &variants);
    compile_sampling(&mut c, &model);
    let defaults_count = model.defaults.count.unwrap_or_default();
    let defaults_extra = model.defaults.extra_args.unwrap_or_default();
    let profile = compile_profile(&mut c, &model);
    let ctx = CaseContext {
        tools: &tool_index,
        profile: &profile,
        own_tools: false,
        broken: &broken,
        norm,
        count: defaults_count,
        extra: defaults_extra,
    };

    let mut cases = Vec::with_capacity(model.cases.len());
    let mut seen: HashMap<String, u32> = HashMap::new();
    for ((i, spec), own) in model.cases.iter().enumerate().zip(case_tools) {
        let field = format!("cases[{i}]");
        if spec.id.value.trim().is_empty() {
            c.report(
                spec.id.at(),
                format!("{field}.id"),
                "case id is empty",
                Some("give every case a short unique id".into()),
            );
        }
        if let Some(first) = seen.get(&spec.id.value) {
            c.report(
                spec.id.at(),
                format!("{field}.id"),
                format!("duplicate case id `{}`", spec.id.value),
                Some(format!(
                    "the id is first used on line {first}; case ids must be unique"
                )),
            );
        } else {
            seen.insert(spec.id.value.clone(), spec.id.line);
        }
        let own_index: Option<HashMap<&str, &Tool>> = own
            .as_ref()
            .map(|(t, _)| t.iter().map(|t| (t.name.as_str(), &**t)).collect());
        let scope = match (&own, &own_index) {
            (Some((_, b)), Some(index)) => super::loop_compile::ToolScope {
                tools: index,
                broken: b,
                owner: "case's",
            },
            _ => super::loop_compile::ToolScope {
                tools: &tool_index,
                broken: &broken,
                owner: "suite's",
            },
        };
        let episode = super::loop_compile::case_episode(&mut c, spec, &field, &loops, &scope, norm);
        let compiled = match &own {
            None => compile_case(&mut c, spec, &field, &ctx, model.system.as_deref()),
            Some((own_tools, own_broken)) => {
                if own_tools.is_empty() && own_broken.is_empty() {
                    // A case may offer no tools at all (e.g. an irrelevance item), but
                    // then nothing can be expected of a call.
                    if spec.kind == CaseKind::ShouldCall {
                        c.report(
                            spec.id.at(),
                            format!("{field}.tools"),
                            format!("case `{}` expects a call but offers no tools", spec.id.value),
                            Some("list the tools this case offers, or drop `tools:` to offer the suite's".into()),
                        );
                    }
                }
                let index: HashMap<&str, &Tool> =
                    own_tools.iter().map(|t| (t.name.as_str(), &**t)).collect();
                let own_ctx = CaseContext {
                    tools: &index,
                    profile: ctx.profile,
                    own_tools: true,
                    broken: own_broken,
                    norm: ctx.norm,
                    count: ctx.count,
                    extra: ctx.extra,
                };
                compile_case(&mut c, spec, &field, &own_ctx, model.system.as_deref())
            }
        };
        if let Some(mut case) = compiled {
            // Loop expectations judge an episode, which only a case with a tool host
            // plays: without one they could never be checked.
            if episode.is_none() && case.loop_expect.is_some() {
                c.report(
                    spec.id.at(),
                    format!("{field}.expect"),
                    format!(
                        "case `{}` has loop expectations (trajectory, never, final or stop) but no tool loop: neither the suite nor the case gives `mocks`",
                        spec.id.value
                    ),
                    Some("add `mocks:` for the tools it calls (suite-wide or in the case), or drop the loop expectations and use `calls`".into()),
                );
            }
            case.tools = own.map(|(t, _)| t);
            case.episode = episode;
            cases.push(case);
        }
    }

    let tool_known = |f: &str| {
        tool_index.contains_key(f)
            || model
                .cases
                .iter()
                .flat_map(|c| c.tools.iter().flat_map(|t| t.0.iter()))
                .any(|t| t.name.value == f)
    };
    let thresholds = compile_thresholds(&mut c, &model, &variants, &tool_known);
    let (distractors, problems) =
        super::distractors::compile(model.distractors.as_ref(), path, &tools, &cases, servers);
    for (at, field, message, hint) in problems {
        c.report(at, field, message, hint);
    }

    // The run talks to the live server when loop cases execute their calls there; it
    // then lists the server's tools once and warns when they drifted from the snapshot.
    let mcp = tools_from.and_then(|(_, r)| r).map(|r| {
        let mut source = r.source;
        source.live_at_run = source.server.is_some() && cases.iter().any(|k| k.episode.is_some());
        Arc::new(source)
    });

    let judge = super::judge::compile_judge(&mut c, model.judge.as_ref(), path, &cases);
    super::placeholder::report(&mut c, text);
    if !c.diags.is_empty() {
        return Err(SuiteError::Invalid(c.diags));
    }
    let cassette = model
        .cassette
        .as_ref()
        .map(|p| lexical_join(path.parent().unwrap_or_else(|| Path::new("")), p));
    let names_behaviours = cases.iter().any(|k| {
        std::iter::once(&k.expect)
            .chain(k.per_mode.iter().map(|o| &o.expect))
            .any(names_behaviour)
    });
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

/// Check `sampling`'s values against their ranges ([`super::sampling`]).
fn compile_sampling(c: &mut Checker<'_>, model: &SuiteFile) {
    use super::sampling::{
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
            Some(super::stream::SUITE_HINT.into()),
        );
    }
}

/// The scoring profile the suite declares, its problems reported.
fn compile_profile(c: &mut Checker<'_>, model: &SuiteFile) -> Profile {
    let mut problems = Vec::new();
    let profile = Profile::compile(model.profile.as_ref(), &mut problems);
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

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Suites with at most this many tool declarations compile every schema when they load.
pub const EAGER_SCHEMAS: usize = 500;

/// Tools compiled so far, by the [`ToolSpec`] they come from: cases that share a spec
/// (see `model::CaseTools`) share the compiled tool, so its schema is checked, compiled
/// and later scored against once. `None`: the spec did not compile (reported once).
type Shared = HashMap<*const ToolSpec, Option<Arc<Tool>>>;

/// A compiled tool list: the tools, and the names of those that did not compile.
type ToolList = (Vec<Arc<Tool>>, Vec<String>);

/// The tools of one tool list that compiled, and the names of those that did not (so
/// expectations naming them are not reported a second time as unknown tools). `eager`:
/// compile each schema now rather than on first use.
fn compile_tools(
    c: &mut Checker<'_>,
    specs: &[&ToolSpec],
    prefix: &str,
    eager: bool,
    shared: &mut Shared,
) -> ToolList {
    let mut tools: Vec<Arc<Tool>> = Vec::new();
    let mut broken = Vec::new();
    // A set, not a scan of the list: a hostile suite may declare 100,000 tools in a list.
    let mut names: HashSet<&str> = HashSet::with_capacity(specs.len());
    for (i, t) in specs.iter().enumerate() {
        let field = format!("{prefix}[{i}]");
        let name = &t.name.value;
        if !names.insert(name.as_str()) {
            c.report(
                t.name.at(),
                format!("{field}.name"),
                format!("duplicate tool name `{name}`"),
                Some("tool names must be unique within a tool list".into()),
            );
        }
        let compiled = shared
            .entry(std::ptr::from_ref(*t))
            .or_insert_with(|| compile_tool(c, t, &field, eager).map(Arc::new));
        match compiled {
            Some(tool) => tools.push(tool.clone()),
            None => broken.push(name.clone()),
        }
    }
    (tools, broken)
}

/// Check one tool declaration and build it; `None` (with the problems reported) when
/// its schema is unusable.
fn compile_tool(c: &mut Checker<'_>, t: &ToolSpec, field: &str, eager: bool) -> Option<Tool> {
    let name = &t.name.value;
    if !valid_tool_name(name) {
        c.report(
            t.name.at(),
            format!("{field}.name"),
            format!("invalid tool name `{name}`"),
            Some("use 1-64 characters from A-Z, a-z, 0-9, `_`, `-` and `.`".into()),
        );
    }
    // `variants: {default: TEXT}` alone is the tool's one description, as before
    // variants could change more than the description.
    let lone_default = match &t.variants {
        Some(v) if t.description.is_none() && v.value.len() == 1 => match v.value.get("default") {
            Some(ToolVariantSpec::Description(d)) => Some(d.clone()),
            _ => None,
        },
        _ => None,
    };
    let description = t.description.clone().or_else(|| lone_default.clone());
    match (&t.description, &t.variants) {
        (_, Some(v)) if v.value.is_empty() => {
            c.report(
                v.at(),
                format!("{field}.variants"),
                "`variants` is empty",
                Some("name at least one variant, e.g. `clear: ...`".into()),
            );
        }
        (None, None) => {
            c.report(
                t.name.at(),
                field,
                format!("tool `{name}` has no description"),
                Some("add `description:` or `variants:`".into()),
            );
        }
        _ => {}
    }
    let params = &t.parameters;
    let pfield = format!("{field}.parameters");
    let validator = check_schema(c, params, &pfield, name, eager)?;
    let mut variants = IndexMap::new();
    let mut ok = true;
    if let (Some(spec), None) = (&t.variants, &lone_default) {
        for (vname, v) in &spec.value {
            let vfield = format!("{field}.variants.{vname}");
            match compile_tool_variant(c, t, v, &vfield, spec.at(), eager) {
                Some(tv) => {
                    variants.insert(vname.clone(), tv);
                }
                None => ok = false,
            }
        }
    }
    if !ok {
        return None;
    }
    Some(Tool {
        name: name.clone(),
        description,
        variants,
        parameters: params.value.clone(),
        validator,
        required: required_of(&params.value),
        effects: super::loop_compile::effects(t),
        mcp: t.mcp.clone(),
    })
}

/// Unknown parameter paths reported one by one per variant; the rest are counted.
const MAX_PATH_PROBLEMS: usize = 20;

/// The names a schema lists in `required`.
fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// One tool's parts under one variant; `None` (with the problems reported) when its
/// schema is unusable.
fn compile_tool_variant(
    c: &mut Checker<'_>,
    t: &ToolSpec,
    spec: &ToolVariantSpec,
    field: &str,
    at: (u32, u32),
    eager: bool,
) -> Option<ToolVariant> {
    let parts = match spec {
        ToolVariantSpec::Description(d) => {
            return Some(ToolVariant {
                description: Some(d.clone()),
                ..ToolVariant::default()
            });
        }
        ToolVariantSpec::Parts(p) => p,
    };
    let mut out = ToolVariant {
        description: parts.description.clone(),
        ..ToolVariant::default()
    };
    let mut schema: Option<Value> = None;
    if let Some(own) = &parts.parameters {
        let validator = check_schema(c, own, &format!("{field}.parameters"), &t.name.value, eager)?;
        out.validator = validator;
        out.replaces_schema = true;
        out.required = required_of(&own.value);
        schema = Some(own.value.as_ref().clone());
    }
    if !parts.parameter_descriptions.is_empty() {
        let mut edited = schema
            .take()
            .unwrap_or_else(|| t.parameters.value.as_ref().clone());
        // The paths the schema has, listed once for every unknown path's hint.
        let mut known: Option<Vec<String>> = None;
        let mut unknown = 0usize;
        for (path, text) in &parts.parameter_descriptions {
            if !super::variants::try_set_description(&mut edited, &path.value, text) {
                unknown += 1;
                // A few are enough to see the mistake; a hostile list is not worth a
                // suggestion each.
                if unknown > MAX_PATH_PROBLEMS {
                    continue;
                }
                let known = known.get_or_insert_with(|| super::variants::paths(&edited));
                let at = if path.line == 0 { at } else { path.at() };
                c.report(
                    at,
                    format!("{field}.parameter_descriptions.{}", path.value),
                    format!(
                        "tool `{}` has no parameter `{}`{}",
                        t.name.value,
                        path.value,
                        if parts.parameters.is_some() {
                            " in this variant's `parameters`"
                        } else {
                            ""
                        }
                    ),
                    Some(super::variants::hint(&path.value, known)),
                );
                continue;
            }
            out.parameter_descriptions.push(path.value.clone());
        }
        if unknown > MAX_PATH_PROBLEMS {
            c.report(
                at,
                format!("{field}.parameter_descriptions"),
                format!(
                    "and {} more unknown parameter paths of tool `{}`",
                    unknown - MAX_PATH_PROBLEMS,
                    t.name.value
                ),
                None,
            );
        }
        schema = Some(edited);
    }
    out.parameters = schema.map(std::sync::Arc::new);
    Some(out)
}

/// Check a tool's argument schema (the tool's own or a variant's) and, in small suites,
/// compile it; `None` (with every problem reported) when it is unusable.
fn check_schema(
    c: &mut Checker<'_>,
    params: &Spanned<Arc<Value>>,
    pfield: &str,
    name: &str,
    eager: bool,
) -> Option<std::sync::OnceLock<Result<jsonschema::Validator, String>>> {
    if !params.value.is_object() {
        c.report(
            params.at(),
            pfield,
            format!(
                "`parameters` must be a JSON Schema object, got {}",
                super::matcher::show(params.value.as_ref())
            ),
            Some("write `parameters: {type: object, properties: {...}}`".into()),
        );
        return None;
    }
    if let Some(ty) = params.value.get("type")
        && ty != "object"
    {
        c.report(
            params.at(),
            format!("{pfield}.type"),
            format!("tool arguments must be an object schema, got type {ty}"),
            Some("set `type: object` and describe arguments under `properties`".into()),
        );
    }
    // Small suites compile every schema now, so every defect is reported with its
    // location. Big ones (imported benchmarks: thousands of tools, most never
    // called) check each schema against the draft 2020-12 meta-schema now and
    // compile it on first use.
    let validator = std::sync::OnceLock::new();
    // The error's instance path points into the user's schema (the schema is the
    // instance its meta-schema validates), e.g. `/properties/city/type`: its keys as
    // they are written in the schema, `~1` and `~0` read back as `/` and `~` (RFC 6901).
    let describe = |e: &jsonschema::ValidationError<'_>| {
        (
            e.instance_path()
                .segments()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            crate::util::parse_error::json_schema(e),
        )
    };
    // Every defect the meta-schema finds is reported; a schema it accepts may still
    // fail to compile (a `pattern` that is not a regex), which compiling reports.
    let meta = jsonschema::draft202012::meta::validator();
    let mut problems: Vec<(Vec<String>, String)> = meta
        .iter_errors(params.value.as_ref())
        .map(|e| describe(&e))
        .collect();
    if problems.is_empty() && eager {
        match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(params.value.as_ref())
        {
            Ok(v) => {
                let _ = validator.set(Ok(v));
            }
            Err(e) => problems.push(describe(&e)),
        }
    }
    for (keys, e) in &problems {
        let segments: Vec<&str> = keys.iter().map(String::as_str).collect();
        let at = locate_path(c.text, params.at(), &segments);
        let field = segments.iter().fold(pfield.to_string(), |f, s| {
            if s.chars().all(|c| c.is_ascii_digit()) {
                format!("{f}[{s}]")
            } else {
                format!("{f}.{s}")
            }
        });
        c.report(
            at,
            field,
            format!("the parameter schema of `{name}` does not compile: {e}"),
            Some("parameters must be valid JSON Schema (draft 2020-12), e.g. `type` is one of string, number, integer, boolean, array, object, null".into()),
        );
    }
    if !problems.is_empty() {
        return None;
    }
    Some(validator)
}

/// Best-effort location of a path of keys inside the YAML under `start`: each key is
/// searched for (as `key:` or `"key":`) after the previous one. Falls back to `start`.
fn locate_path(text: &str, start: (u32, u32), keys: &[&str]) -> (u32, u32) {
    let Some(mut offset) = offset_of(text, start) else {
        return start;
    };
    let mut found = None;
    for key in keys
        .iter()
        .filter(|k| !k.chars().all(|c| c.is_ascii_digit()))
    {
        let hit = [
            format!("{key}:"),
            format!("\"{key}\":"),
            format!("'{key}':"),
        ]
        .iter()
        .filter_map(|pat| text[offset..].find(pat.as_str()))
        .min();
        match hit {
            Some(i) => {
                offset += i;
                found = Some(offset);
                offset += key.len();
            }
            None => return start,
        }
    }
    let Some(at) = found else { return start };
    let line = text[..at].matches('\n').count() as u32 + 1;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].chars().count() as u32 + 1)
}

fn offset_of(text: &str, (line, column): (u32, u32)) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let line_start = if line == 1 {
        0
    } else {
        text.match_indices('\n').nth(line as usize - 2)?.0 + 1
    };
    let col: usize = text[line_start..]
        .chars()
        .take(column.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    Some(line_start + col)
}

fn mode(spec: &ToolChoiceSpec) -> ToolChoice {
    match spec {
        ToolChoiceSpec::None => ToolChoice::None,
        ToolChoiceSpec::Auto => ToolChoice::Auto,
        ToolChoiceSpec::Required => ToolChoice::Required,
        ToolChoiceSpec::Function(f) => ToolChoice::Function(f.clone()),
    }
}

fn check_modes(
    c: &mut Checker<'_>,
    specs: &[Spanned<ToolChoiceSpec>],
    tools: &dyn Fn(&str) -> bool,
    field: &str,
) -> Vec<ToolChoice> {
    let mut out = Vec::new();
    for s in specs {
        if let ToolChoiceSpec::Function(f) = &s.value
            && !tools(f)
        {
            c.report(
                s.at(),
                field,
                format!("tool_choice names unknown function `{f}`"),
                Some("name one of the suite's tools".into()),
            );
        }
        out.push(mode(&s.value));
    }
    out
}

fn compile_matrix(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    tools: &[Arc<Tool>],
    variants: &[String],
) -> MatrixDefaults {
    let m = &model.matrix;
    let known = |f: &str| {
        tools.iter().any(|t| t.name == f)
            || model
                .cases
                .iter()
                .flat_map(|c| c.tools.iter().flat_map(|t| t.0.iter()))
                .any(|t| t.name.value == f)
    };
    let modes = check_modes(c, &m.tool_choice, &known, "matrix.tool_choice");
    let mut chosen = Vec::new();
    for v in &m.variants {
        if !variants.contains(&v.value) {
            c.report(
                v.at(),
                "matrix.variants",
                format!("unknown variant `{}`", v.value),
                Some(
                    match suggest::closest(&v.value, variants.iter().map(String::as_str)) {
                        Some(s) => format!(
                            "did you mean `{s}`? the suite's variants are: {}",
                            variants.join(", ")
                        ),
                        None => format!("the suite's variants are: {}", variants.join(", ")),
                    },
                ),
            );
        }
        chosen.push(v.value.clone());
    }
    let all_tools = model
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("tools[{i}]"), t))
        .chain(model.cases.iter().enumerate().flat_map(|(k, case)| {
            case.tools
                .iter()
                .flat_map(|t| t.0.iter())
                .enumerate()
                .map(move |(i, t)| (format!("cases[{k}].tools[{i}]"), &**t))
        }));
    let run_variants = if chosen.is_empty() { variants } else { &chosen };
    for (field, t) in all_tools {
        check_tool_wordings(c, &field, t, variants, run_variants);
    }
    for t in &m.targets {
        if let Err(e) = super::targets::check_target(&t.value) {
            c.report(t.at(), "matrix.targets", e.message, Some(e.hint));
        }
    }
    let repeats = m.repeats.as_ref().map_or(1, |r| r.value);
    if repeats == 0 || repeats > MAX_REPEATS {
        c.report(
            m.repeats.as_ref().map_or((0, 0), Spanned::at),
            "matrix.repeats",
            format!("repeats must be between 1 and {MAX_REPEATS}, got {repeats}"),
            None,
        );
    }
    MatrixDefaults {
        targets: m.targets.iter().map(|t| t.value.clone()).collect(),
        variants: if chosen.is_empty() {
            variants.to_vec()
        } else {
            chosen
        },
        tool_choice: if modes.is_empty() {
            vec![ToolChoice::Auto]
        } else {
            modes
        },
        repeats,
    }
}

/// Whether each tool has a description under every variant it runs in, and uses its
/// `description` under some variant when it has one.
fn check_tool_wordings(
    c: &mut Checker<'_>,
    field: &str,
    t: &ToolSpec,
    variants: &[String],
    run_variants: &[String],
) {
    let Some(tv) = &t.variants else { return };
    let words = |v: &str| match tv.value.get(v) {
        Some(ToolVariantSpec::Description(_)) => true,
        Some(ToolVariantSpec::Parts(p)) => p.description.is_some(),
        None => false,
    };
    let name = &t.name.value;
    if t.description.is_some() {
        if !tv.value.is_empty() && variants.iter().all(|v| words(v)) {
            c.report(
                tv.at(),
                format!("{field}.variants"),
                format!("tool `{name}` has both `description` and `variants`"),
                Some(format!(
                    "`description` words the variants a tool does not word itself, and this tool words every variant ({}): drop `description`, or leave a variant to it",
                    variants.join(", ")
                )),
            );
        }
        return;
    }
    // `variants: {default: TEXT}` alone is a plain description.
    if tv.value.len() == 1
        && matches!(
            tv.value.get("default"),
            Some(ToolVariantSpec::Description(_))
        )
    {
        return;
    }
    for v in run_variants {
        if words(v) {
            continue;
        }
        let message = if tv.value.contains_key(v) {
            format!("variant `{v}` of tool `{name}` has no `description`, and the tool has none")
        } else {
            format!("tool `{name}` has no variant `{v}`")
        };
        c.report(
            tv.at(),
            format!("{field}.variants"),
            message,
            Some(format!(
                "every tool without `description` must word each variant the matrix runs ({}); `description:` gives a default wording for the variants a tool does not word",
                run_variants.join(", ")
            )),
        );
    }
}

/// The top-level `variants`: each variant's system prompt.
fn compile_suite_variants(c: &mut Checker<'_>, model: &SuiteFile) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    for (name, v) in &model.variants {
        if name.value.trim().is_empty() {
            c.report(
                name.at(),
                "variants",
                "a variant name is empty",
                Some("name each variant, e.g. `dated: {system: ...}`".into()),
            );
        }
        if let Some(system) = &v.system {
            out.insert(name.value.clone(), system.clone());
        }
    }
    out
}

struct CaseContext<'a> {
    tools: &'a HashMap<&'a str, &'a Tool>,
    /// The suite's profile (how it reads expectations).
    profile: &'a Profile,
    /// The tools are the case's own (for messages).
    own_tools: bool,
    broken: &'a [String],
    norm: Normalizer,
    count: CountMode,
    extra: ExtraArgs,
}

fn compile_case(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    ctx: &CaseContext<'_>,
    system: Option<&str>,
) -> Option<Case> {
    let at = spec.id.at();
    let mut messages = match (&spec.prompt, &spec.messages) {
        (Some(p), None) => vec![Message::User { content: p.clone() }],
        (None, Some(m)) if !m.is_empty() => compile_messages(c, m, field, at)?,
        (None, Some(_)) => {
            c.report(
                at,
                format!("{field}.messages"),
                "`messages` is empty",
                Some("give at least one user message".into()),
            );
            return None;
        }
        (Some(_), Some(_)) => {
            c.report(
                at,
                field,
                format!("case `{}` has both `prompt` and `messages`", spec.id.value),
                Some("use `prompt` for one user turn or `messages` for a conversation".into()),
            );
            return None;
        }
        (None, None) => {
            c.report(
                at,
                field,
                format!("case `{}` has no `prompt` or `messages`", spec.id.value),
                Some("add `prompt: ...`".into()),
            );
            return None;
        }
    };
    let suite_system =
        system.is_some() && !messages.iter().any(|m| matches!(m, Message::System { .. }));
    if let Some(sys) = system
        && suite_system
    {
        messages.insert(
            0,
            Message::System {
                content: sys.to_string(),
            },
        );
    }
    let known = |f: &str| ctx.tools.contains_key(f);
    let modes = spec
        .modes
        .as_ref()
        .map(|m| check_modes(c, m, &known, &format!("{field}.modes")));
    let empty = ExpectSpec::default();
    let expect = compile_expect(
        c,
        spec.kind,
        spec.expect.as_ref().unwrap_or(&empty),
        spec.expect.is_none(),
        &format!("{field}.expect"),
        at,
        ctx,
    )?;
    let mut per_mode = Vec::new();
    for (j, o) in spec.per_mode.iter().enumerate() {
        let pf = format!("{field}.per_mode[{j}]");
        let modes = check_modes(c, &o.modes, &known, &format!("{pf}.modes"));
        if modes.is_empty() {
            c.report(
                at,
                format!("{pf}.modes"),
                "`per_mode` entry lists no modes",
                None,
            );
        }
        let e = compile_expect(
            c,
            o.kind,
            o.expect.as_ref().unwrap_or(&empty),
            o.expect.is_none(),
            &format!("{pf}.expect"),
            at,
            ctx,
        )?;
        if let Some(e) = &o.expect
            && super::trajectory::given(e)
        {
            c.report(
                at,
                format!("{pf}.expect"),
                "loop expectations (`trajectory`, `never`, `final`, `stop`) can not differ per mode",
                Some("put them in the case's own `expect`".into()),
            );
        }
        per_mode.push(ModeOverride {
            modes,
            kind: o.kind,
            expect: e,
        });
    }
    let loop_expect = match &spec.expect {
        Some(e) if super::trajectory::given(e) => Some(compile_episode(
            c,
            spec.kind,
            e,
            &format!("{field}.expect"),
            at,
            ctx,
        )?),
        _ => None,
    };
    Some(Case {
        id: spec.id.value.clone(),
        kind: spec.kind,
        messages,
        tags: spec.tags.clone(),
        tools: None,
        expect,
        modes,
        per_mode,
        episode: None,
        suite_system,
        loop_expect,
        rubric: super::judge::compile_rubric(c, spec, field),
    })
}

fn compile_messages(
    c: &mut Checker<'_>,
    specs: &[MessageSpec],
    field: &str,
    at: (u32, u32),
) -> Option<Vec<Message>> {
    let mut out = Vec::with_capacity(specs.len());
    let mut ok = true;
    for (i, m) in specs.iter().enumerate() {
        let mf = format!("{field}.messages[{i}]");
        let content = m.content.clone();
        let msg = match m.role {
            Role::System | Role::User => {
                if !m.tool_calls.is_empty() || m.tool_call_id.is_some() {
                    c.report(at, &mf, "only assistant messages carry `tool_calls`, and only tool messages carry `tool_call_id`", None);
                    ok = false;
                }
                let content = content.unwrap_or_default();
                if m.role == Role::System {
                    Message::System { content }
                } else {
                    Message::User { content }
                }
            }
            Role::Assistant => {
                let mut calls = Vec::new();
                for tc in &m.tool_calls {
                    let arguments = match &tc.arguments {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".to_string(),
                        other => other.to_string(),
                    };
                    calls.push(ToolCall {
                        id: Some(tc.id.clone()),
                        name: tc.name.clone(),
                        arguments,
                    });
                }
                Message::Assistant {
                    content,
                    tool_calls: calls,
                    state: None,
                }
            }
            Role::Tool => {
                let Some(id) = m.tool_call_id.clone() else {
                    c.report(
                        at,
                        format!("{mf}.tool_call_id"),
                        "a tool message needs `tool_call_id`",
                        Some("name the id of the assistant tool call it answers".into()),
                    );
                    ok = false;
                    continue;
                };
                let answered = out.iter().any(|prev: &Message| match prev {
                    Message::Assistant { tool_calls, .. } => {
                        tool_calls.iter().any(|t| t.id.as_deref() == Some(&id))
                    }
                    _ => false,
                });
                if !answered {
                    c.report(
                        at,
                        format!("{mf}.tool_call_id"),
                        format!(
                            "tool message answers `{id}`, but no earlier assistant call has that id"
                        ),
                        Some("results must be matched to calls by tool_call_id".into()),
                    );
                    ok = false;
                }
                Message::Tool {
                    tool_call_id: id,
                    name: String::new(),
                    content: content.unwrap_or_default(),
                    is_error: false,
                }
            }
        };
        out.push(msg);
    }
    ok.then_some(out)
}

/// Text checks; the regex is matched against the normalised answer, case-insensitively
/// when the suite folds case.
fn compile_text_checks(
    c: &mut Checker<'_>,
    contains: &[String],
    regex: &Option<Spanned<String>>,
    field: &str,
    norm: Normalizer,
) -> TextChecks {
    let regex = regex.as_ref().and_then(|r| {
        match crate::util::regex_cache::build(&r.value, norm.casefolds()) {
            Ok(re) => Some(re),
            Err(e) => {
                c.report(
                    r.at(),
                    format!("{field}.regex"),
                    format!(
                        "invalid regex `{}`: {}",
                        r.value,
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                    Some("the syntax is Rust's `regex` crate".into()),
                );
                None
            }
        }
    });
    TextChecks {
        contains: contains.to_vec(),
        regex,
        behaviour: None,
    }
}

/// Whether `e` uses a key that makes the whole suite record behaviour facts:
/// `behaviour:`, or a `cannot_answer` or `direct` outcome (`clarify` outcomes predate
/// them and record facts for their own case only, so existing suites keep their records).
fn names_behaviour(e: &Expectation) -> bool {
    match e {
        Expectation::NoCall(t) => t.behaviour.is_some(),
        Expectation::AnyOf(o) => o
            .iter()
            .any(|o| matches!(o, Outcome::CannotAnswer(_) | Outcome::Direct(_))),
        Expectation::Calls(_) => false,
    }
}

/// The names `behaviour:` takes, as suites write them.
const BEHAVIOUR_NAMES: [&str; 3] = ["direct", "cannot_answer", "clarify"];

/// `behaviour:` of a `should_not_call` case: one of [`BEHAVIOUR_NAMES`].
fn compile_behaviour(
    c: &mut Checker<'_>,
    b: &Spanned<String>,
    field: &str,
) -> Option<crate::behaviour::Behaviour> {
    use crate::behaviour::Behaviour;
    let name = b.value.as_str();
    let found = match name {
        "direct" => Some(Behaviour::Direct),
        "cannot_answer" => Some(Behaviour::CannotAnswer),
        "clarify" => Some(Behaviour::RequestForInfo),
        _ => None,
    };
    if found.is_none() {
        let hint = match Behaviour::parse(name) {
            Some(Behaviour::ToolCall) => {
                "a `should_not_call` case expects no call: use kind `should_call` to expect one"
                    .to_string()
            }
            Some(Behaviour::RequestForInfo) => "suites write it `clarify`".to_string(),
            _ => {
                let mean = suggest::did_you_mean(name, BEHAVIOUR_NAMES);
                format!(
                    "use `direct` (answers without a tool), `cannot_answer` (says it cannot help) or `clarify` (asks for the missing information){}",
                    if mean.is_empty() {
                        String::new()
                    } else {
                        format!("; {mean}")
                    }
                )
            }
        };
        c.report(
            b.at(),
            format!("{field}.behaviour"),
            format!("unknown behaviour `{name}`"),
            Some(hint),
        );
    }
    found
}

fn compile_expect(
    c: &mut Checker<'_>,
    kind: CaseKind,
    e: &ExpectSpec,
    missing: bool,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Expectation> {
    let has_text = !e.contains.is_empty() || e.regex.is_some();
    if let Some(b) = e
        .behaviour
        .as_ref()
        .filter(|_| kind != CaseKind::ShouldNotCall)
    {
        c.report(
            b.at(),
            format!("{field}.behaviour"),
            format!(
                "`behaviour` applies to `should_not_call` cases, not to `{}` ones",
                kind.as_str()
            ),
            Some(if kind == CaseKind::Ambiguous {
                "list the acceptable answers in `any_of`: `{clarify: true}`, `{cannot_answer: true}` or `{direct: true}`".into()
            } else {
                "a `should_call` case expects a call; use kind `should_not_call` with `behaviour: direct | cannot_answer | clarify` for a text answer".into()
            }),
        );
        return None;
    }
    match kind {
        CaseKind::ShouldCall if e.any_call => {
            if e.calls.is_some() || e.any_of.is_some() || e.count.is_some() || has_text {
                c.report(
                    at,
                    field,
                    "`any_call: true` takes no other expectation",
                    Some("use `calls` to expect particular calls".into()),
                );
                return None;
            }
            Some(Expectation::Calls(CallsExpectation {
                calls: Vec::new(),
                count: CountMode::AtLeast,
            }))
        }
        // A loop case may leave the first round open: it must make some call.
        CaseKind::ShouldCall if e.calls.is_none() && super::trajectory::given(e) => {
            if e.any_of.is_some() || e.count.is_some() || has_text {
                c.report(
                    at,
                    field,
                    "a `should_call` case takes only `calls`, `count` and the loop keys",
                    Some("put checks on the final answer under `final:`".into()),
                );
            }
            Some(Expectation::Calls(CallsExpectation {
                calls: Vec::new(),
                count: CountMode::AtLeast,
            }))
        }
        CaseKind::ShouldCall => {
            if missing || e.calls.as_ref().is_none_or(Vec::is_empty) {
                c.report(
                    at,
                    format!("{field}.calls"),
                    "a `should_call` case needs `expect.calls` with at least one call",
                    Some("list the expected calls: `calls: [{tool: NAME, args: {...}}]`".into()),
                );
                return None;
            }
            if e.any_of.is_some() || has_text {
                c.report(
                    at,
                    field,
                    "a `should_call` case takes only `calls` and `count`",
                    Some(
                        "use kind `ambiguous` with `any_of` for several acceptable outcomes".into(),
                    ),
                );
            }
            let calls = compile_calls(
                c,
                e.calls.as_deref().unwrap_or_default(),
                e.count,
                field,
                ctx,
            )?;
            Some(Expectation::Calls(calls))
        }
        CaseKind::ShouldNotCall => {
            if e.calls.is_some() || e.any_of.is_some() || e.count.is_some() || e.any_call {
                c.report(at, field, "a `should_not_call` case takes only `behaviour`, `contains` and `regex` (checks on the text answer)", Some("use kind `should_call` or `ambiguous` to expect calls".into()));
                return None;
            }
            let behaviour = match &e.behaviour {
                Some(b) => Some(compile_behaviour(c, b, field)?),
                None => None,
            };
            let mut text = compile_text_checks(c, &e.contains, &e.regex, field, ctx.norm);
            text.behaviour = behaviour;
            Some(Expectation::NoCall(text))
        }
        CaseKind::Ambiguous => {
            let Some(options) = e.any_of.as_ref().filter(|o| !o.is_empty()) else {
                c.report(
                    at,
                    format!("{field}.any_of"),
                    "an `ambiguous` case needs `expect.any_of` with at least one outcome",
                    Some("e.g. `any_of: [{clarify: true}, {calls: [...]}]`; the text outcomes are `clarify`, `cannot_answer`, `direct` and `no_call`".into()),
                );
                return None;
            };
            if e.calls.is_some() || has_text || e.count.is_some() || e.any_call {
                c.report(
                    at,
                    field,
                    "an `ambiguous` case takes only `any_of`",
                    Some("put calls and text checks inside the outcomes".into()),
                );
            }
            let mut outcomes = Vec::new();
            for (i, o) in options.iter().enumerate() {
                if let Some(out) = compile_outcome(c, o, &format!("{field}.any_of[{i}]"), at, ctx) {
                    outcomes.push(out);
                }
            }
            (outcomes.len() == options.len()).then_some(Expectation::AnyOf(outcomes))
        }
    }
}

/// The loop expectations of a case (see [`super::trajectory`]).
fn compile_episode(
    c: &mut Checker<'_>,
    kind: CaseKind,
    e: &ExpectSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<super::trajectory::LoopExpectation> {
    use super::trajectory::{
        FinalChecks, LoopContext, LoopExpectation, compile_never, compile_trajectory,
    };
    let lookup = |n: &str| ctx.tools.get(n).map(|t| t.parameters.as_ref());
    let lctx = LoopContext {
        tools: &lookup,
        tool_names: ctx.tools.keys().copied().collect(),
        broken: ctx.broken,
        norm: ctx.norm,
        extra: ctx.extra,
        at,
    };
    let mut problems = Vec::new();
    if kind == CaseKind::ShouldNotCall && e.trajectory.is_some() {
        c.report(
            at,
            format!("{field}.trajectory"),
            "a `should_not_call` case expects no calls, so it has no trajectory",
            Some("use kind `should_call` for a case whose episode calls tools".into()),
        );
    }
    let trajectory = e
        .trajectory
        .as_ref()
        .map(|t| compile_trajectory(t, &format!("{field}.trajectory"), &lctx, &mut problems));
    let never = compile_never(&e.never, &format!("{field}.never"), &lctx, &mut problems);
    let ok = problems.is_empty();
    for p in problems {
        c.report(p.at, p.field, p.message, p.hint);
    }
    let final_answer = e.final_answer.as_ref().map(|f| FinalChecks {
        text: compile_text_checks(
            c,
            &f.contains,
            &f.regex,
            &format!("{field}.final"),
            ctx.norm,
        ),
        grounded: f.grounded,
        no_success_after_error: f.no_success_after_error,
    });
    Some(LoopExpectation {
        trajectory: match trajectory {
            Some(Some(t)) => Some(t),
            Some(None) => return None,
            None => None,
        },
        never,
        final_answer,
        stop: e.stop,
    })
    .filter(|_| ok)
}

fn compile_outcome(
    c: &mut Checker<'_>,
    o: &OutcomeSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Outcome> {
    let named: Vec<&str> = [
        (o.clarify, "clarify"),
        (o.cannot_answer, "cannot_answer"),
        (o.direct, "direct"),
        (o.no_call, "no_call"),
        (o.calls.is_some(), "calls"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if named.len() != 1 {
        c.report(
            at,
            field,
            if named.is_empty() {
                "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, and names none".to_string()
            } else {
                format!(
                    "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, but names {}",
                    named
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                )
            },
            Some(if named.is_empty() {
                "`clarify` asks for the missing information, `cannot_answer` says it cannot help, `direct` answers without a tool, `no_call` accepts any text answer, `calls` lists the calls".into()
            } else {
                "give each acceptable answer its own `any_of` entry, e.g. `any_of: [{clarify: true}, {cannot_answer: true}]`".into()
            }),
        );
        return None;
    }
    let text = compile_text_checks(c, &o.contains, &o.regex, field, ctx.norm);
    if let Some(calls) = &o.calls {
        if !text.is_empty() {
            c.report(
                at,
                field,
                "text checks apply to the text outcomes (`clarify`, `cannot_answer`, `direct`, `no_call`)",
                Some("check a call's arguments in `calls` instead".into()),
            );
        }
        if calls.is_empty() {
            c.report(
                at,
                format!("{field}.calls"),
                "`calls` is empty",
                Some("use `no_call: true` for an outcome without calls".into()),
            );
            return None;
        }
        return compile_calls(c, calls, o.count, field, ctx).map(Outcome::Calls);
    }
    Some(if o.clarify {
        Outcome::Clarify(text)
    } else if o.cannot_answer {
        Outcome::CannotAnswer(text)
    } else if o.direct {
        Outcome::Direct(text)
    } else {
        Outcome::NoCall(text)
    })
}

fn compile_calls(
    c: &mut Checker<'_>,
    calls: &[ExpectedCallSpec],
    count: Option<CountMode>,
    field: &str,
    ctx: &CaseContext<'_>,
) -> Option<CallsExpectation> {
    let mut out = Vec::with_capacity(calls.len());
    let mut ok = true;
    for (i, call) in calls.iter().enumerate() {
        let cf = format!("{field}.calls[{i}]");
        let Some(tool) = ctx.tools.get(call.tool.value.as_str()) else {
            ok = false;
            if ctx.broken.contains(&call.tool.value) {
                continue;
            }
            let names: Vec<&str> = ctx.tools.keys().copied().collect();
            c.report(
                call.tool.at(),
                format!("{cf}.tool"),
                format!("expectation names unknown tool `{}`", call.tool.value),
                Some(format!(
                    "the {} tools are: {}",
                    if ctx.own_tools { "case's" } else { "suite's" },
                    sorted_list(&names)
                )),
            );
            continue;
        };
        let extra = call.extra_args.unwrap_or(ctx.extra);
        let props = tool.parameters.get("properties").and_then(Value::as_object);
        let mut args = Vec::with_capacity(call.args.len());
        for (name, value) in &call.args {
            let af = format!("{cf}.args.{}", name.value);
            // A profile may read arguments the schema does not list.
            if let Some(p) = props
                && !p.contains_key(&name.value)
                && !ctx.profile.reads_unlisted_args()
            {
                let known: Vec<&str> = p.keys().map(String::as_str).collect();
                let hint = match crate::suite::matcher::closest_keyword(&name.value) {
                    Some(kw) => format!(
                        "`{}` looks like the matcher `{kw}`; matchers go inside a parameter: `param: {{{kw}: ...}}`",
                        name.value
                    ),
                    None => format!("`{}` parameters are: {}", tool.name, sorted_list(&known)),
                };
                c.report(
                    name.at(),
                    &af,
                    format!(
                        "expectation names unknown parameter `{}` of tool `{}`",
                        name.value, tool.name
                    ),
                    Some(hint),
                );
                ok = false;
                continue;
            }
            // A profile may read matchers its own way (and refuse some).
            if let Err(e) = ctx.profile.check_expected_value(&value.value) {
                c.report(value.at(), &af, e.message, Some(e.hint));
                ok = false;
                continue;
            }
            // Only a clear reference is refused: `{from: X}` was an ordinary nested
            // object matcher before loops existed.
            if super::trajectory::uses_from(&value.value, tool.property(&name.value))
                && value.value.to_string().contains(".result")
            {
                c.report(
                    value.at(),
                    &af,
                    "`from:` refers to an earlier tool result, which only `trajectory` steps have",
                    Some("`calls` checks the first round, before any result; move the check to `trajectory.steps`".into()),
                );
                ok = false;
                continue;
            }
            let mctx = CompileContext {
                norm: ctx.norm,
                extra,
                schema: tool.property(&name.value),
            };
            match Matcher::compile(&value.value, &name.value, mctx) {
                Ok(m) => args.push((name.value.clone(), m)),
                Err(e) => {
                    let path = if e.path == name.value {
                        af.clone()
                    } else {
                        format!("{cf}.args.{}", e.path)
                    };
                    c.report(value.at(), path, e.message, e.hint);
                    ok = false;
                }
            }
        }
        out.push(ExpectedCall {
            tool: tool.name.clone(),
            args,
            raw_args: call
                .args
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.clone()))
                .collect(),
            extra,
        });
    }
    ok.then_some(CallsExpectation {
        calls: out,
        count: count.unwrap_or(ctx.count),
    })
}

fn sorted_list(names: &[&str]) -> String {
    let mut v = names.to_vec();
    v.sort_unstable();
    v.iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn compile_thresholds(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    variants: &[String],
    tool_known: &dyn Fn(&str) -> bool,
) -> Vec<Threshold> {
    use crate::util::metric_names::{check_bound, check_metric, check_range};
    let mut out = Vec::new();
    for (i, t) in model.thresholds.iter().enumerate() {
        let f = format!("thresholds[{i}]");
        let mut ok = true;
        if let Err(e) = check_metric(&t.metric.value) {
            c.report(
                t.metric.at(),
                format!("{f}.metric"),
                e.message,
                Some(e.hint),
            );
            ok = false;
        }
        if t.min.is_none() && t.max.is_none() {
            c.report(
                t.metric.at(),
                &f,
                format!(
                    "the threshold on `{}` has no `min` or `max`",
                    t.metric.value
                ),
                Some("add `min: VALUE` (at least) or `max: VALUE` (at most)".into()),
            );
            ok = false;
        }
        for (which, bound) in [("min", &t.min), ("max", &t.max)] {
            if let Some(b) = bound
                && let Err(e) = check_bound(&t.metric.value, which, b.value)
            {
                c.report(b.at(), format!("{f}.{which}"), e.message, Some(e.hint));
                ok = false;
            }
        }
        if let (Some(lo), Some(hi)) = (&t.min, &t.max)
            && let Err(e) = check_range(lo.value, hi.value)
        {
            c.report(lo.at(), format!("{f}.min"), e.message, Some(e.hint));
            ok = false;
        }
        if let Some(v) = &t.variant
            && !variants.contains(&v.value)
        {
            let hint = match suggest::closest(&v.value, variants.iter().map(String::as_str)) {
                Some(s) => format!(
                    "did you mean `{s}`? the variants are: {}",
                    variants.join(", ")
                ),
                None => format!("the variants are: {}", variants.join(", ")),
            };
            c.report(
                v.at(),
                format!("{f}.variant"),
                format!("unknown variant `{}`", v.value),
                Some(hint),
            );
            ok = false;
        }
        if let Some(target) = &t.target
            && let Err(e) = super::targets::check_target(&target.value)
        {
            c.report(target.at(), format!("{f}.target"), e.message, Some(e.hint));
            ok = false;
        }
        if let Some(m) = &t.tool_choice {
            let before = c.diags.len();
            check_modes(
                c,
                std::slice::from_ref(m),
                tool_known,
                &format!("{f}.tool_choice"),
            );
            ok &= c.diags.len() == before;
        }
        if ok {
            out.push(Threshold {
                metric: t.metric.value.clone(),
                min: t.min.as_ref().map(|b| b.value),
                max: t.max.as_ref().map(|b| b.value),
                variant: t.variant.as_ref().map(|v| v.value.clone()),
                tool_choice: t.tool_choice.as_ref().map(|m| mode(&m.value)),
                target: t.target.as_ref().map(|v| v.value.clone()),
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "behaviour_tests.rs"]
mod behaviour_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cassette_paths_resolve_dot_dot_lexically() {
        let j = |b: &str, r: &str| lexical_join(Path::new(b), r).display().to_string();
        assert_eq!(j("suites", "../fixtures/w.jsonl"), "fixtures/w.jsonl");
        assert_eq!(j("", "../w.jsonl"), "../w.jsonl");
        assert_eq!(j("/a/b", "./c/../d.jsonl"), "/a/b/d.jsonl");
        assert_eq!(j("a", "../../w.jsonl"), "../w.jsonl");
    }

    #[test]
    fn duplicate_tool_names_are_reported_in_each_list() {
        let text = "\
tools:
  - {name: t, description: a, parameters: {type: object}}
  - {name: u, description: b, parameters: {type: object}}
  - {name: t, description: c, parameters: {type: object}}
cases:
  - id: c1
    kind: should_not_call
    prompt: hi
    tools:
      - {name: v, description: a, parameters: {type: object}}
      - {name: v, description: a, parameters: {type: object}}
      - {name: t, description: a, parameters: {type: object}}
";
        let Err(SuiteError::Invalid(diags)) = crate::suite::load_str(text, Path::new("s.yaml"))
        else {
            panic!("duplicate names must be refused");
        };
        let dups: Vec<(&str, u32)> = diags
            .iter()
            .filter(|d| d.message.starts_with("duplicate tool name"))
            .map(|d| (d.field.as_str(), d.line))
            .collect();
        // The suite's second `t` and the case's second `v`; a case's `t` is its own tool.
        assert_eq!(
            dups,
            vec![("tools[2].name", 4), ("cases[0].tools[1].name", 11)]
        );
    }

    #[test]
    fn a_schema_error_points_at_the_bad_key() {
        let text = "tools:\n  - name: t\n    parameters:\n      type: object\n      properties:\n        city: { type: strin }\n";
        assert_eq!(
            locate_path(text, (4, 7), &["properties", "city", "type"]),
            (6, 17)
        );
        // A key that is not found falls back to the schema's own location.
        assert_eq!(locate_path(text, (4, 7), &["properties", "town"]), (4, 7));
    }

    /// A schema error under a property whose name has `/` or `~` (escaped `~1` and `~0`
    /// in the error's JSON pointer) names the property as written and points at it.
    #[test]
    fn a_schema_error_under_a_key_with_a_slash_or_tilde_names_the_key() {
        // `~1` (written `~01`) checks the order: `~01` is `~1`, not `/`.
        for (key, line, column) in [("a/b", 7, 16), ("m~n", 8, 16), ("~1", 9, 17)] {
            // `strin` (not a type) under `key` alone.
            let ty = |k: &str| if k == key { "strin" } else { "string" };
            let text = format!(
                "tools:\n  - name: t\n    description: T.\n    parameters:\n      type: object\n      properties:\n        a/b: {{ type: {} }}\n        m~n: {{ type: {} }}\n        \"~1\": {{ type: {} }}\ncases: []\n",
                ty("a/b"),
                ty("m~n"),
                ty("~1"),
            );
            let Err(SuiteError::Invalid(diags)) =
                crate::suite::load_str(&text, Path::new("s.yaml"))
            else {
                panic!("`strin` under `{key}` must be refused");
            };
            let found: Vec<(&str, u32, u32)> = diags
                .iter()
                .filter(|d| d.message.contains("does not compile"))
                .map(|d| (d.field.as_str(), d.line, d.column))
                .collect();
            let field = format!("tools[0].parameters.properties.{key}.type");
            assert_eq!(found, vec![(field.as_str(), line, column)], "{diags:?}");
        }
    }
}
