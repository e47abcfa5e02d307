//! `toolgauge lint`: static checks of tool definitions, offline and deterministic.
//!
//! A lint reads tools (from a suite, an MCP snapshot or `tools/list` JSON file, or the
//! listing of a live server, see [`source`]) into [`LintTool`] views, runs every rule
//! family on them ([`check_all`]), drops what the suite or a tool allows, and renders the
//! findings as text, JSON or SARIF 2.1.0 ([`output`], [`sarif`]). The rules and their
//! codes are in [`rules::RULES`]; docs/lint.md is the catalogue with each rule's
//! rationale and source.

pub mod description;
pub mod evidence;
pub mod model;
pub mod output;
pub mod parameters;
pub mod providers;
pub mod rules;
pub mod sarif;
pub mod set;
pub mod source;
pub mod spans;
pub mod text;

use std::collections::BTreeSet;

pub use model::{Finding, LintConfig, LintTool, Position, Severity};

/// Every finding of `tools`, before allow lists: each family in turn (add a family here).
pub fn check_all(tools: &[LintTool], config: &LintConfig) -> Vec<Finding> {
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut out = Vec::new();
    for tool in tools {
        out.extend(description::check(tool, config));
        out.extend(parameters::check(tool, &names));
        out.extend(provider_findings(tool, config.openai_strict));
    }
    out.extend(set::check(tools, config));
    out
}

/// The prefix of the rules about OpenAI's strict mode (Structured Outputs), reported only
/// with `--openai-strict`: toolgauge does not send `strict: true`, so for most catalogues
/// they would be one info line per tool about a mode nobody asked for.
pub const OPENAI_STRICT_PREFIX: &str = "provider-openai-strict-";

/// The provider-acceptance issues of `tool` ([`providers::check`]) as findings (the
/// strict-mode ones only when `openai_strict`): the
/// pointer's parameter path (`/properties/a/items/properties/b` → `a[].b`) and its
/// location when known.
pub fn provider_findings(tool: &LintTool, openai_strict: bool) -> Vec<Finding> {
    providers::check(
        &tool.name,
        tool.description.as_deref().unwrap_or(""),
        &tool.parameters,
    )
    .into_iter()
    .filter(|issue| openai_strict || !issue.code.starts_with(OPENAI_STRICT_PREFIX))
    .map(|issue| {
        let path = parameter_path(&issue.pointer);
        let at = match &path {
            Some(p) => tool.parameter_pos(p),
            None => tool.at,
        };
        let mut f = Finding::new(
            issue.code,
            format!("{} ({})", issue.message, issue.provider),
            format!("{} (source: {})", issue.hint, issue.source),
        )
        .on(tool, at);
        f.severity = Severity::parse(issue.severity).unwrap_or(Severity::Warning);
        f.parameter = path;
        f
    })
    .collect()
}

/// The parameter path of a JSON pointer into a schema: `properties/NAME` steps become
/// names joined by `.`, `items` steps `[]`; `None` when it names no property.
pub fn parameter_path(pointer: &str) -> Option<String> {
    let mut path = String::new();
    let mut steps = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"));
    while let Some(step) = steps.next() {
        match step.as_str() {
            "properties" => {
                let name = steps.next()?;
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            "items" => path.push_str("[]"),
            _ => {}
        }
    }
    (!path.is_empty()).then_some(path)
}

/// Drop the findings whose rule is allowed: suite-wide by `allow`, or by their tool's own
/// allow list; then sort by location, tool and rule, so output is stable.
pub fn apply_allow(findings: Vec<Finding>, tools: &[LintTool], allow: &[String]) -> Vec<Finding> {
    let mut out: Vec<Finding> = findings
        .into_iter()
        .filter(|f| !allow.iter().any(|a| a == f.rule))
        .filter(|f| {
            let Some(name) = &f.tool else { return true };
            !tools
                .iter()
                .filter(|t| &t.name == name)
                .any(|t| t.allow.iter().any(|a| a == f.rule))
        })
        .collect();
    out.sort_by(|a, b| {
        (a.at.is_none(), a.at, &a.tool, a.rule, &a.parameter).cmp(&(
            b.at.is_none(),
            b.at,
            &b.tool,
            b.rule,
            &b.parameter,
        ))
    });
    out
}

/// Join the findings of each description variant of a suite (`(variant, findings)`,
/// in the suite's variant order) into one list: a finding found under every variant is
/// reported once with no variants; one found under some is reported once, naming them.
pub fn merge_variants(per_variant: Vec<(String, Vec<Finding>)>) -> Vec<Finding> {
    let all = per_variant.len();
    if all == 1 {
        return per_variant.into_iter().flat_map(|(_, f)| f).collect();
    }
    let mut out: Vec<Finding> = Vec::new();
    for (variant, findings) in per_variant {
        for f in findings {
            match out.iter_mut().find(|o| {
                o.rule == f.rule
                    && o.tool == f.tool
                    && o.parameter == f.parameter
                    && o.message == f.message
                    && o.at == f.at
            }) {
                Some(o) => o.variants.push(variant.clone()),
                None => {
                    let mut f = f;
                    f.variants = vec![variant.clone()];
                    out.push(f);
                }
            }
        }
    }
    for f in &mut out {
        if f.variants.len() == all {
            f.variants.clear();
        }
    }
    out
}

/// The evidence of a finished run ([`evidence::from_run`]) as findings on `tools`: one
/// `run-confused-tools` per tool pair the model confused (on the expected tool) and one
/// `run-param-trouble` per parameter whose calls went wrong, with counts and example
/// case ids. A tool of the run that `tools` lacks (the suite changed since) is reported
/// without a location.
pub fn run_findings(run: &evidence::RunEvidence, tools: &[LintTool]) -> Vec<Finding> {
    let locate = |name: &str, parameter: Option<&str>, f: Finding| -> Finding {
        match tools.iter().find(|t| t.name == name) {
            Some(t) => {
                let at = parameter.map_or(t.at, |p| t.parameter_pos(p));
                f.on(t, at)
            }
            None => Finding {
                tool: Some(name.to_string()),
                ..f
            },
        }
    };
    let examples = |ids: &[String]| -> String {
        if ids.is_empty() {
            String::new()
        } else {
            format!(" (e.g. {})", ids.join(", "))
        }
    };
    let mut out = Vec::new();
    for c in &run.confusions {
        let f = Finding::new(
            "run-confused-tools",
            format!(
                "the model called `{}` where `{}` was expected in {} of {} scored trials{}",
                c.called,
                c.expected,
                c.count,
                c.trials,
                examples(&c.examples)
            ),
            format!(
                "say in `{}`'s description when to use it rather than `{}` (and in `{}`'s, the reverse)",
                c.expected, c.called, c.called
            ),
        );
        out.push(locate(&c.expected, None, f));
    }
    for p in &run.parameters {
        let mut parts = Vec::new();
        for (n, what) in [
            (p.missing, "missing"),
            (p.invalid, "invalid"),
            (p.ungrounded, "ungrounded"),
        ] {
            if n > 0 {
                parts.push(format!("{what} in {n}"));
            }
        }
        let f = Finding::new(
            "run-param-trouble",
            format!(
                "`{}` of `{}` was {} of {} calls{}",
                p.parameter,
                p.tool,
                parts.join(", "),
                p.calls,
                examples(&p.examples)
            ),
            "describe the parameter's format with an example, and where its value comes from (the user, or another tool's result)",
        )
        .param(&p.parameter);
        out.push(locate(&p.tool, Some(&p.parameter), f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_merge_into_one_finding() {
        let f = |m: &str| Finding::new("description-no-purpose", m.into(), "h");
        let merged = merge_variants(vec![
            ("vague".into(), vec![f("a"), f("b")]),
            ("clear".into(), vec![f("a")]),
        ]);
        assert_eq!(merged.len(), 2);
        assert!(merged[0].variants.is_empty());
        assert_eq!(merged[1].variants, ["vague"]);
    }

    #[test]
    fn pointers_become_parameter_paths() {
        assert_eq!(parameter_path(""), None);
        assert_eq!(parameter_path("/properties/city").as_deref(), Some("city"));
        assert_eq!(
            parameter_path("/properties/stops/items/properties/city").as_deref(),
            Some("stops[].city")
        );
        assert_eq!(parameter_path("/properties/a~1b").as_deref(), Some("a/b"));
    }

    #[test]
    fn allow_lists_drop_findings_suite_wide_and_per_tool() {
        let t = LintTool {
            name: "w".into(),
            allow: vec!["description-no-purpose".into()],
            ..LintTool::default()
        };
        let f = vec![
            Finding::new("description-no-purpose", "m".into(), "h").on(&t, None),
            Finding::new("param-missing-type", "m".into(), "h").on(&t, None),
            Finding::new("set-total-tokens", "m".into(), "h"),
        ];
        let kept = apply_allow(f, std::slice::from_ref(&t), &["set-total-tokens".into()]);
        assert_eq!(
            kept.iter().map(|f| f.rule).collect::<Vec<_>>(),
            ["param-missing-type"]
        );
    }
}
