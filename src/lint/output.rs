//! The terminal and JSON renderings of a lint's findings.
//!
//! JSON is the contract: `findings`, each with `rule`, `severity`, `tool`, `parameter`
//! (when it is about one), `message`, `hint`, `file`, `line`, `column` (`null` when the
//! tools came from a live server), and `variants` when the finding holds under some of a
//! suite's description variants only.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::model::{Finding, Severity};

/// What was linted, for the header of each rendering.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The target as given (a file path or a server spec).
    pub target: &'a str,
    /// The file findings are located in (`None` for a live server).
    pub file: Option<&'a str>,
    /// How many tools were linted.
    pub tools: usize,
    /// The findings, sorted.
    pub findings: &'a [Finding],
}

/// `N errors, N warnings, N info`.
pub fn counts(findings: &[Finding]) -> BTreeMap<Severity, usize> {
    let mut out = BTreeMap::new();
    for f in findings {
        *out.entry(f.severity).or_insert(0) += 1;
    }
    out
}

/// The summary line's counts, e.g. `1 error, 3 warnings, 2 info`.
fn summary(findings: &[Finding]) -> String {
    let c = counts(findings);
    let n = |s| c.get(&s).copied().unwrap_or(0);
    format!(
        "{}, {}, {} info",
        crate::util::plural(n(Severity::Error), "error", "errors"),
        crate::util::plural(n(Severity::Warning), "warning", "warnings"),
        n(Severity::Info)
    )
}

/// The terminal rendering: findings grouped by tool (in the order the tools are first
/// found), each `file:line:column: severity[rule]: message` and its hint; the set's
/// findings last.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let mut groups: Vec<(Option<&str>, Vec<&Finding>)> = Vec::new();
    for f in report.findings {
        let key = f.tool.as_deref();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(f),
            None => groups.push((key, vec![f])),
        }
    }
    groups.sort_by_key(|(k, _)| k.is_none());
    for (tool, findings) in &groups {
        let _ = writeln!(
            out,
            "{}",
            tool.map_or("(all tools)".to_string(), |t| format!("{t}:"))
        );
        for f in findings {
            let at = match (report.file, f.at) {
                (Some(file), Some(p)) => format!("{file}:{}:{}: ", p.line, p.column),
                (Some(file), None) => format!("{file}: "),
                _ => String::new(),
            };
            let variants = if f.variants.is_empty() {
                String::new()
            } else {
                format!(" (variants: {})", f.variants.join(", "))
            };
            let _ = writeln!(
                out,
                "  {at}{}[{}]: {}{variants}",
                f.severity.as_str(),
                f.rule,
                f.message
            );
            let _ = writeln!(out, "    hint: {}", f.hint);
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{}: {}, {} ({})",
        report.target,
        crate::util::plural(report.tools, "tool", "tools"),
        crate::util::plural(report.findings.len(), "finding", "findings"),
        summary(report.findings)
    );
    out
}

/// One finding as JSON.
pub fn finding_json(f: &Finding, file: Option<&str>) -> Value {
    let mut v = json!({
        "rule": f.rule,
        "severity": f.severity.as_str(),
        "tool": f.tool,
        "message": f.message,
        "hint": f.hint,
        "file": f.at.and(file),
        "line": f.at.map(|p| p.line),
        "column": f.at.map(|p| p.column),
    });
    if let Some(p) = &f.parameter {
        v["parameter"] = json!(p);
    }
    if !f.variants.is_empty() {
        v["variants"] = json!(f.variants);
    }
    v
}

/// The JSON rendering.
pub fn json(report: &Report) -> String {
    let c = counts(report.findings);
    let n = |s| c.get(&s).copied().unwrap_or(0);
    let out = json!({
        "target": report.target,
        "tools": report.tools,
        "counts": {
            "error": n(Severity::Error),
            "warning": n(Severity::Warning),
            "info": n(Severity::Info),
        },
        "findings": report.findings.iter().map(|f| finding_json(f, report.file)).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&out).unwrap_or_default()
}
