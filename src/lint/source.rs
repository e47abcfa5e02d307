//! What `toolgauge lint` reads: a suite (its tools under each description variant, its
//! `lint:` settings, with the location of every part), a JSON file of tools (an MCP
//! snapshot, a `tools/list` result, a plain array, or any JSON that holds tool objects,
//! such as the LiveMCPTool catalogue), or the tools a live server lists.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::model::{LintTool, Position};
use super::spans::{Positions, escape, json_positions, yaml_positions};
use crate::suite::mcp::McpTool;

/// Why a target could not be read: bad input (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// What is wrong, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl SourceError {
    fn new(message: String, hint: &str) -> SourceError {
        SourceError {
            message,
            hint: Some(hint.to_string()),
        }
    }
}

/// A rule code a suite or a tool allows, with where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The code as written.
    pub code: String,
    /// Where it is written.
    pub at: Option<Position>,
}

/// The tools of one target, ready to lint.
#[derive(Debug, Default)]
pub struct Target {
    /// The tool sets to lint: one per description variant of a suite (`default` alone
    /// for a suite without variants and for JSON files and servers).
    pub sets: Vec<(String, Vec<LintTool>)>,
    /// Codes allowed for every tool (`lint: {allow: […]}` of a suite).
    pub allow: Vec<Allowed>,
    /// Codes allowed per tool, as written (to check each is a known code).
    pub tool_allow: Vec<Allowed>,
    /// The suite's `lint.max_description_tokens`.
    pub max_description_tokens: Option<u64>,
    /// The suite's `lint.max_total_tokens`.
    pub max_total_tokens: Option<u64>,
}

/// Read a suite: its tools under each variant, with locations. Tools a suite takes from
/// an MCP server or snapshot (`tools_from`) have no location in the suite: they are
/// reported at the `tools_from` key.
pub fn from_suite(path: &Path) -> Result<Target, SourceError> {
    let bad = |e: crate::suite::SuiteError| SourceError {
        message: e.to_string().trim_end().to_string(),
        hint: None,
    };
    let (model, text) = crate::suite::load::read_suite_file(path).map_err(bad)?;
    let suite = crate::mcp::suites::load(path).map_err(bad)?;
    let positions = yaml_positions(&text);
    let pos = |pointer: &str| positions.get(pointer).copied().filter(|p| p.line > 0);
    let spanned = |s: &crate::suite::span::Spanned<String>| Allowed {
        code: s.value.clone(),
        at: Position::known(s.line, s.column),
    };
    let mut target = Target::default();
    if let Some(l) = &model.lint {
        target.allow = l.allow.iter().map(spanned).collect();
        target.max_description_tokens = l.max_description_tokens;
        target.max_total_tokens = l.max_total_tokens;
    }
    // Where each tool of the file is, by name (the first of a name).
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in model.tools.iter().enumerate() {
        index.entry(t.name.value.as_str()).or_insert(i);
        if let Some(l) = &t.lint {
            target.tool_allow.extend(l.allow.iter().map(spanned));
        }
    }
    let tools_from_at = pos("/tools_from");
    // A suite whose cases each offer their own tools (imported benchmarks) is linted on
    // the distinct tools of its cases, the first of each name.
    let mut tools: Vec<&crate::suite::Tool> = suite.tools.iter().map(|t| &**t).collect();
    if tools.is_empty() {
        let mut seen = std::collections::BTreeSet::new();
        for case in &suite.cases {
            for t in case.tools(&suite) {
                if seen.insert(t.name.as_str()) {
                    tools.push(t);
                }
            }
        }
    }
    for variant in &suite.variants {
        let mut set = Vec::new();
        for &tool in &tools {
            let def = tool.definition(variant);
            let mut view = LintTool {
                name: def.name.clone(),
                description: tool.description(variant).map(str::to_string),
                parameters: (*def.parameters).clone(),
                ..LintTool::default()
            };
            match index.get(tool.name.as_str()) {
                Some(&i) => {
                    let base = format!("/tools/{i}");
                    view.at = pos(&format!("{base}/name"));
                    let own = format!("{base}/variants/{}", escape(variant));
                    view.description_at = pos(&format!("{own}/description"))
                        .or_else(|| {
                            tool.variant(variant)
                                .and_then(|v| v.description.as_ref())
                                .and_then(|_| pos(&own))
                        })
                        .or_else(|| pos(&format!("{base}/description")));
                    let schema_base = if tool.variant(variant).is_some_and(|v| v.replaces_schema) {
                        format!("{own}/parameters")
                    } else {
                        format!("{base}/parameters")
                    };
                    view.parameter_at =
                        parameter_positions(&view.parameters, &schema_base, &positions);
                    view.allow = model.tools[i]
                        .lint
                        .as_ref()
                        .map(|l| l.allow.iter().map(|a| a.value.clone()).collect())
                        .unwrap_or_default();
                }
                None => view.at = tools_from_at,
            }
            set.push(view);
        }
        target.sets.push((variant.clone(), set));
    }
    Ok(target)
}

/// The position of every property of `schema` by parameter path, read from `positions`
/// under `base` (the schema's pointer).
pub fn parameter_positions(
    schema: &Value,
    base: &str,
    positions: &Positions,
) -> BTreeMap<String, Position> {
    let mut out = BTreeMap::new();
    walk(schema, base, "", positions, &mut out);
    out
}

fn walk(
    schema: &Value,
    pointer: &str,
    prefix: &str,
    positions: &Positions,
    out: &mut BTreeMap<String, Position>,
) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let mut p = format!("{pointer}/properties/{}", escape(name));
        if let Some(at) = positions.get(&p).filter(|a| a.line > 0) {
            out.insert(path.clone(), *at);
        }
        let mut inner = prop;
        let mut inner_path = path;
        while let Some(items) = inner.get("items").filter(|i| i.is_object()) {
            inner = items;
            inner_path.push_str("[]");
            p.push_str("/items");
        }
        walk(inner, &p, &inner_path, positions, out);
    }
}

/// Read a JSON file of tools: an MCP snapshot (`toolgauge mcp snapshot`), a `tools/list`
/// result (`{"tools": […]}`), a plain array of tools, or any JSON that holds tool objects
/// (objects with a string `name` and an `inputSchema`, `input_schema` or `parameters`
/// object, or OpenAI's `{"type": "function", "function": {…}}`), found wherever they are
/// nested, in document order.
pub fn from_json(path: &Path, text: &str) -> Result<Target, SourceError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        SourceError::new(
            format!("failed to read `{}` as JSON: {e}", path.display()),
            "give a suite (YAML), an MCP snapshot, or a JSON file of tools (`{\"tools\": [...]}` or an array)",
        )
    })?;
    let positions = json_positions(text).unwrap_or_default();
    let mut tools = Vec::new();
    find_tools(&value, "", &positions, &mut tools);
    if tools.is_empty() {
        return Err(SourceError::new(
            format!("`{}` holds no tool definitions", path.display()),
            "a tool is an object with a string `name` and an `inputSchema` (MCP) or `parameters` (OpenAI) object",
        ));
    }
    Ok(Target {
        sets: vec![("default".to_string(), tools)],
        ..Target::default()
    })
}

/// Collect the tool objects of `value` (at `pointer`) into `out`.
fn find_tools(value: &Value, pointer: &str, positions: &Positions, out: &mut Vec<LintTool>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(f)) = map.get("function")
                && map.get("type").and_then(Value::as_str) == Some("function")
            {
                let inner = format!("{pointer}/function");
                if let Some(t) = tool_of(&Value::Object(f.clone()), &inner, positions) {
                    out.push(t);
                    return;
                }
            }
            if let Some(t) = tool_of(value, pointer, positions) {
                out.push(t);
                return;
            }
            for (k, v) in map {
                find_tools(v, &format!("{pointer}/{}", escape(k)), positions, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                find_tools(v, &format!("{pointer}/{i}"), positions, out);
            }
        }
        _ => {}
    }
}

/// The tool an object at `pointer` defines, if it is one.
fn tool_of(value: &Value, pointer: &str, positions: &Positions) -> Option<LintTool> {
    let name = value.get("name")?.as_str()?;
    let (key, schema) = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|k| value.get(*k).filter(|v| v.is_object()).map(|v| (*k, v)))?;
    let pos = |p: &str| positions.get(p).copied();
    Some(LintTool {
        name: name.to_string(),
        description: value
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        parameters: schema.clone(),
        at: pos(&format!("{pointer}/name")).or_else(|| pos(pointer)),
        description_at: pos(&format!("{pointer}/description")),
        parameter_at: parameter_positions(schema, &format!("{pointer}/{key}"), positions),
        allow: Vec::new(),
    })
}

/// The tools a live server listed (no file, so no locations).
pub fn from_listing(tools: &[McpTool]) -> Target {
    let set = tools
        .iter()
        .map(|t| LintTool {
            name: t.name().to_string(),
            description: t.description().map(str::to_string),
            parameters: t.input_schema(),
            ..LintTool::default()
        })
        .collect();
    Target {
        sets: vec![("default".to_string(), set)],
        ..Target::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_tools_are_found_wherever_they_are_nested() {
        let text = r#"[{"name": "server", "tools": {"s": {"tools": [
  {"name": "a", "description": "A.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
  {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}}
]}}}]"#;
        let t = from_json(Path::new("t.json"), text).unwrap();
        let tools = &t.sets[0].1;
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(tools[0].at, Some(Position { line: 2, column: 4 }));
        assert_eq!(tools[0].parameter_at["q"].line, 2);
        assert!(tools[1].description.is_none());
    }

    #[test]
    fn json_without_tools_is_bad_input() {
        let e = from_json(Path::new("t.json"), "{\"a\": 1}").unwrap_err();
        assert!(e.message.contains("holds no tool definitions"), "{e:?}");
        assert!(from_json(Path::new("t.json"), "{").is_err());
    }
}
