//! The SARIF 2.1.0 rendering, for GitHub code scanning: one run of the `toolgauge`
//! driver with the catalogue's rules, one result per finding, located on the suite's or
//! snapshot's line (or, for a live server, at the tool as a logical location).

use serde_json::{Value, json};

use super::model::{Finding, Severity};
use super::output::Report;
use super::rules::RULES;

/// The SARIF schema the output declares.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF's level of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The SARIF log of `report`.
pub fn render(report: &Report) -> String {
    let mut rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.code,
                "shortDescription": {"text": r.summary},
                "help": {"text": format!("See docs/lint.md#{} for the rule's rationale and source.", r.code)},
                "defaultConfiguration": {"level": level(r.severity)},
                "properties": {"family": r.family},
            })
        })
        .chain(super::providers::catalogue().iter().map(|r| {
            json!({
                "id": r.code,
                "name": r.code,
                "shortDescription": {"text": r.summary},
                "help": {"text": format!("Source: {}. See docs/lint.md, provider acceptance.", r.source)},
                "defaultConfiguration": {"level": level(Severity::parse(r.severity).unwrap_or(Severity::Warning))},
                "properties": {"family": "provider", "provider": r.provider},
            })
        }))
        .collect();
    let mut ids: Vec<&str> = RULES
        .iter()
        .map(|r| r.code)
        .chain(super::providers::catalogue().iter().map(|r| r.code))
        .collect();
    for f in report.findings {
        if !ids.contains(&f.rule) {
            ids.push(f.rule);
            rules.push(json!({
                "id": f.rule,
                "name": f.rule,
                "shortDescription": {"text": f.rule},
                "defaultConfiguration": {"level": level(f.severity)},
            }));
        }
    }
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| result(f, report.file, &ids))
        .collect();
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "toolgauge",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

/// One result.
fn result(f: &Finding, file: Option<&str>, ids: &[&str]) -> Value {
    let mut text = f.message.clone();
    text.push_str(". Hint: ");
    text.push_str(&f.hint);
    let mut r = json!({
        "ruleId": f.rule,
        "ruleIndex": ids.iter().position(|i| *i == f.rule).unwrap_or(0),
        "level": level(f.severity),
        "message": {"text": text},
    });
    let mut location = serde_json::Map::new();
    if let (Some(file), Some(at)) = (file, f.at) {
        location.insert(
            "physicalLocation".into(),
            json!({
                "artifactLocation": {"uri": file.replace('\\', "/")},
                "region": {"startLine": at.line, "startColumn": at.column},
            }),
        );
    }
    if let Some(tool) = &f.tool {
        let name = match &f.parameter {
            Some(p) => format!("{tool}.{p}"),
            None => tool.clone(),
        };
        location.insert(
            "logicalLocations".into(),
            json!([{"name": name, "fullyQualifiedName": name, "kind": "function"}]),
        );
    }
    if !location.is_empty() {
        r["locations"] = json!([Value::Object(location)]);
    }
    r
}
