//! Compiling what the run varies: the variants (the tools' wordings and the top-level
//! `variants`' system prompts), tool choices, and the `matrix` of targets, variants, tool
//! choices and repeats.

use std::collections::HashSet;
use std::sync::Arc;

use indexmap::IndexMap;

use super::Checker;
use super::tools::ToolLists;
use crate::chat::ToolChoice;
use crate::suite::model::{SuiteFile, ToolChoiceSpec, ToolSpec, ToolVariantSpec};
use crate::suite::span::Spanned;
use crate::suite::{MatrixDefaults, Tool};
use crate::util::limits::MAX_REPEATS;
use crate::util::suggest;

/// Every variant name the tools define, in order of first appearance (a tool several
/// cases share is looked at once), then those only the top-level `variants` declares;
/// `default` alone when there are none.
pub(super) fn variant_names(model: &SuiteFile, lists: &ToolLists) -> Vec<String> {
    let mut variants: Vec<String> = Vec::new();
    // Shared tools are looked at once.
    let mut seen: HashSet<*const Tool> = HashSet::new();
    for t in lists
        .tools
        .iter()
        .chain(
            lists
                .case_tools
                .iter()
                .flatten()
                .flat_map(|(t, _)| t.iter()),
        )
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
    if variants.is_empty() {
        variants.push("default".into());
    }
    variants
}

/// The top-level `variants`: each variant's system prompt.
pub(super) fn compile_suite_variants(
    c: &mut Checker<'_>,
    model: &SuiteFile,
) -> IndexMap<String, String> {
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

/// The tool choice a suite's `tool_choice` value names.
pub(super) fn mode(spec: &ToolChoiceSpec) -> ToolChoice {
    match spec {
        ToolChoiceSpec::None => ToolChoice::None,
        ToolChoiceSpec::Auto => ToolChoice::Auto,
        ToolChoiceSpec::Required => ToolChoice::Required,
        ToolChoiceSpec::Function(f) => ToolChoice::Function(f.clone()),
    }
}

/// The tool choices `specs` name, each `function` one checked against the known tools
/// (`tools` says whether a name is one).
pub(super) fn check_modes(
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

/// The `matrix` the suite declares: tool choices, variants (each tool worded under
/// every variant that runs), targets and repeats, checked.
pub(super) fn compile_matrix(
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
        if let Err(e) = crate::suite::targets::check_target(&t.value) {
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
