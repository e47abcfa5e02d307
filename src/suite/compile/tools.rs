//! Compiling tool declarations: names, descriptions, variants (each one's wording and
//! schema edits) and argument schemas, for the suite's list, the server's and each case's.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::Checker;
use super::schema::check_schema;
use crate::suite::model::{SuiteFile, ToolSpec, ToolVariantSpec};
use crate::suite::{Tool, ToolVariant};

/// Suites with at most this many tool declarations compile every schema when they load.
pub const EAGER_SCHEMAS: usize = 500;

/// Tools compiled so far, by the [`ToolSpec`] they come from: cases that share a spec
/// (see `model::CaseTools`) share the compiled tool, so its schema is checked, compiled
/// and later scored against once. `None`: the spec did not compile (reported once).
type Shared = HashMap<*const ToolSpec, Option<Arc<Tool>>>;

/// A compiled tool list: the tools, and the names of those that did not compile.
pub(super) type ToolList = (Vec<Arc<Tool>>, Vec<String>);

/// The tool lists of a suite, compiled: the suite's own (then the server's) and each
/// case's.
pub(super) struct ToolLists {
    /// The suite's tools in order: its own, then those `tools_from` lists.
    pub(super) tools: Vec<Arc<Tool>>,
    /// Names of the suite's tools that did not compile.
    pub(super) broken: Vec<String>,
    /// Each case's own tools (`None`: the case offers the suite's).
    pub(super) case_tools: Vec<Option<ToolList>>,
}

/// Compile the suite's tools, the server's (`mcp_specs`, checked for clashes with the
/// suite's) and each case's own, in that order. A spec several cases share is compiled
/// once; every schema is compiled now unless the suite declares more than
/// [`EAGER_SCHEMAS`] tools.
pub(super) fn compile_tool_lists(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    mcp_specs: &[ToolSpec],
) -> ToolLists {
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
    let (mut tools, mut broken) = compile_tools(c, &suite_specs, "tools", eager, &mut shared);
    if !mcp_specs.is_empty() {
        let specs: Vec<&ToolSpec> = mcp_specs.iter().collect();
        let (from_server, server_broken) =
            compile_tools(c, &specs, "tools_from.tools", eager, &mut shared);
        crate::suite::tools_from::report_clashes(c, &suite_specs, mcp_specs);
        tools.extend(from_server);
        broken.extend(server_broken);
    }
    // Each case's own tools, compiled up front (variants are collected over all tools).
    let case_tools: Vec<Option<ToolList>> = model
        .cases
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            spec.tools.as_ref().map(|t| {
                let specs: Vec<&ToolSpec> = t.0.iter().map(|s| &**s).collect();
                let field = format!("cases[{i}].tools");
                compile_tools(c, &specs, &field, eager, &mut shared)
            })
        })
        .collect();
    ToolLists {
        tools,
        broken,
        case_tools,
    }
}

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
        effects: crate::suite::loop_compile::effects(t),
        mcp: t.mcp.clone(),
    })
}

/// Whether `name` is a tool name providers accept: 1-64 characters from A-Z, a-z, 0-9,
/// `_`, `-` and `.`.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
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
            if !crate::suite::variants::try_set_description(&mut edited, &path.value, text) {
                unknown += 1;
                // A few are enough to see the mistake; a hostile list is not worth a
                // suggestion each.
                if unknown > MAX_PATH_PROBLEMS {
                    continue;
                }
                let known = known.get_or_insert_with(|| crate::suite::variants::paths(&edited));
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
                    Some(crate::suite::variants::hint(&path.value, known)),
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::suite::SuiteError;

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
}
