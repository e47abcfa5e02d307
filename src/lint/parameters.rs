//! The parameters family: every property of a tool's argument schema (nested objects
//! and array items included, by path `address.street`, `stops[].city`) is checked for a
//! description, a type, explained enum values, a format where the value has one, a
//! documented default; the tool's description for the required parameters it never
//! mentions and the parameters it names that do not exist.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::model::{Finding, LintTool};
use super::text::{content_stems, identifier_words, mostly_cjk, stem, words};

/// Words of a parameter name that say its value has a format (`start_date`, `userId`,
/// `email`, `currency`…), with what to show in the hint.
const FORMAT_WORDS: &[(&str, &str)] = &[
    ("date", "`format: date` (YYYY-MM-DD)"),
    ("dates", "`format: date` (YYYY-MM-DD)"),
    ("time", "`format: time` or `date-time` (ISO 8601)"),
    ("datetime", "`format: date-time` (ISO 8601)"),
    (
        "timestamp",
        "`format: date-time`, or say seconds or milliseconds since the epoch",
    ),
    ("deadline", "`format: date-time` (ISO 8601)"),
    ("timezone", "an IANA name example, e.g. Europe/Paris"),
    ("tz", "an IANA name example, e.g. Europe/Paris"),
    ("email", "`format: email`"),
    ("mail", "`format: email`"),
    ("url", "`format: uri` and an example"),
    ("uri", "`format: uri` and an example"),
    ("link", "`format: uri` and an example"),
    ("href", "`format: uri` and an example"),
    ("id", "an example id or a `pattern`"),
    ("ids", "an example id or a `pattern`"),
    ("uuid", "`format: uuid`"),
    ("guid", "`format: uuid`"),
    ("phone", "an example in E.164 form, e.g. +14155550100"),
    ("currency", "ISO 4217 codes, e.g. USD, or an `enum`"),
    ("unit", "the units accepted, as an `enum` or examples"),
    ("units", "the units accepted, as an `enum` or examples"),
    ("country", "ISO 3166-1 alpha-2 codes, e.g. FR, or an `enum`"),
    ("language", "BCP 47 tags, e.g. en or zh-CN"),
    ("lang", "BCP 47 tags, e.g. en or zh-CN"),
    ("locale", "BCP 47 tags, e.g. en-US"),
    ("zip", "an example postal code"),
    ("postcode", "an example postal code"),
];

/// Text that shows a format or an example.
const EXAMPLE_CUES: &[&str] = &[
    "e.g",
    "eg.",
    "for example",
    "such as",
    "format",
    "iso",
    "yyyy",
    "rfc",
    "example",
    "like ",
    "例如",
    "格式",
    "比如",
    "如：",
    "如:",
    "`",
    "\"",
    "'",
];

/// Text that says what happens when an optional parameter is left out.
const DEFAULT_CUES: &[&str] = &[
    "default",
    "omit",
    "if not",
    "optional",
    "if absent",
    "when absent",
    "if empty",
    "leave",
    "if unset",
    "if missing",
    "if none",
    "if no ",
    "otherwise",
    "all ",
    "默认",
    "可选",
    "不填",
    "省略",
    "为空",
    "不传",
];

/// Every parameter finding of `tool`; `tool_names` are the set's names (a description
/// that names a sibling tool is not naming a parameter).
pub fn check(tool: &LintTool, tool_names: &BTreeSet<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let schema = &tool.parameters;
    if !has_type(schema) {
        out.push(
            Finding::new(
                "param-missing-type",
                format!("the arguments object of `{}` has no `type`", tool.name),
                "declare `type: object` with `properties`",
            )
            .on(tool, tool.at),
        );
    }
    let mut names = BTreeSet::new();
    walk(tool, schema, "", &mut out, &mut names);
    let description = tool.description.as_deref().unwrap_or("").trim();
    if description.is_empty() {
        return out;
    }
    required_unmentioned(tool, description, &mut out);
    // Compared by words, so `branch_id` names `branchId`.
    let normal = |n: &str| identifier_words(n).join("_");
    let known: BTreeSet<String> = names
        .iter()
        .map(|n| normal(n))
        .chain(tool_names.iter().map(|n| normal(n)))
        .collect();
    for named in named_parameters(description) {
        if !known.contains(&normal(&named)) {
            out.push(
                Finding::new(
                    "description-names-unknown-param",
                    format!(
                        "the description of `{}` names `{named}`, which is not one of its parameters{}",
                        tool.name,
                        list_of(&names)
                    ),
                    "rename it in the description to the parameter's name, or add the parameter",
                )
                .on(tool, tool.description_pos()),
            );
        }
    }
    out
}

/// ` (it has `a`, `b`)`, or nothing for no parameters.
fn list_of(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        " (it has none)".to_string()
    } else {
        let l: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        format!(" (it has {})", l.join(", "))
    }
}

/// Whether `schema` says what type its value is (`type`, or a `$ref`, a combinator, an
/// `enum` or a `const` that implies one).
fn has_type(schema: &Value) -> bool {
    ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"]
        .iter()
        .any(|k| schema.get(k).is_some())
}

/// Whether `schema`'s type is (or includes) `t`.
fn is_type(schema: &Value, t: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(t)),
        _ => false,
    }
}

/// The description of a property schema, trimmed ("" for none).
fn description_of(schema: &Value) -> &str {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
}

/// Check the properties of object `schema` at `prefix`, and recurse into nested objects
/// and array items; collect every property name into `names`.
fn walk(
    tool: &LintTool,
    schema: &Value,
    prefix: &str,
    out: &mut Vec<Finding>,
    names: &mut BTreeSet<String>,
) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in props {
        names.insert(name.clone());
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        property(
            tool,
            name,
            &path,
            prop,
            required.contains(name.as_str()),
            out,
        );
        let mut inner = prop;
        let mut inner_path = path.clone();
        while let Some(items) = inner.get("items").filter(|i| i.is_object()) {
            inner = items;
            inner_path.push_str("[]");
        }
        walk(tool, inner, &inner_path, out, names);
    }
}

/// The findings of one property.
fn property(
    tool: &LintTool,
    name: &str,
    path: &str,
    prop: &Value,
    required: bool,
    out: &mut Vec<Finding>,
) {
    let at = tool.parameter_pos(path);
    let mk = |rule: &'static str, message: String, hint: String| {
        Finding::new(rule, message, hint).on(tool, at).param(path)
    };
    let desc = description_of(prop);
    let Some(obj) = prop.as_object() else {
        return;
    };
    if !has_type(prop) {
        out.push(mk(
            "param-missing-type",
            format!("`{}` parameter `{path}` has no `type`", tool.name),
            "declare its `type` (string, integer, number, boolean, array, object)".into(),
        ));
    }
    if desc.is_empty() {
        out.push(mk(
            "param-no-description",
            format!("`{}` parameter `{path}` has no description", tool.name),
            "say what the value means, its unit or format, and an example".into(),
        ));
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array)
        && values.len() >= 2
        && !enum_explained(values, desc)
    {
        let shown: Vec<String> = values.iter().take(6).map(Value::to_string).collect();
        out.push(mk(
            "param-enum-unexplained",
            format!(
                "`{}` parameter `{path}` has values {} that its description does not explain",
                tool.name,
                shown.join(", ")
            ),
            "say in the parameter's description what each value means or when to pick it".into(),
        ));
    }
    if let Some(hint) = format_wanted(name, prop, obj, desc) {
        out.push(mk(
            "param-format-missing",
            format!(
                "`{}` parameter `{path}` looks like a formatted value but gives no format or example",
                tool.name
            ),
            format!("add {hint}, or an example in its description"),
        ));
    }
    if is_type(prop, "object") && free_form(obj) {
        out.push(mk(
            "param-free-form-object",
            format!(
                "`{}` parameter `{path}` is an object with no properties: the model must guess its keys",
                tool.name
            ),
            "declare its `properties` (and `required`), or `additionalProperties` with a schema and an example".into(),
        ));
    }
    if !required && !obj.contains_key("default") && !mentions_default(desc) {
        out.push(mk(
            "param-default-undocumented",
            format!(
                "`{}` parameter `{path}` is optional but does not say what happens when it is left out",
                tool.name
            ),
            "add a `default`, or say in its description what leaving it out does (\"default: 10\")".into(),
        ));
    }
}

/// Whether `desc` names at least one of the string values, or numbers them; a
/// description that lists none of them does not explain them.
fn enum_explained(values: &[Value], desc: &str) -> bool {
    let lower = desc.to_lowercase();
    values.iter().any(|v| match v {
        Value::String(s) => !s.is_empty() && lower.contains(&s.to_lowercase()),
        other => lower.contains(&other.to_string()),
    })
}

/// The hint of a format-bearing property that shows no format: its name has a word of
/// [`FORMAT_WORDS`] (or ends in `_at`), it is a string (or untyped), and it has no
/// `format`, `pattern`, `enum`, `const` or `examples`, and no example in its description.
fn format_wanted(
    name: &str,
    prop: &Value,
    obj: &Map<String, Value>,
    desc: &str,
) -> Option<&'static str> {
    if prop.get("type").is_some() && !is_type(prop, "string") {
        return None;
    }
    if ["format", "pattern", "enum", "const", "examples", "example"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return None;
    }
    let lower = desc.to_lowercase();
    if EXAMPLE_CUES.iter().any(|c| lower.contains(c)) {
        return None;
    }
    let words = identifier_words(name);
    if words.len() > 1 && words.last().is_some_and(|w| w == "at") {
        return Some("`format: date-time` (ISO 8601)");
    }
    words
        .iter()
        .find_map(|w| FORMAT_WORDS.iter().find(|(f, _)| f == w).map(|(_, h)| *h))
}

/// An object schema that says nothing of its keys.
fn free_form(obj: &Map<String, Value>) -> bool {
    let props_empty = obj
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    let additional = obj
        .get("additionalProperties")
        .is_some_and(Value::is_object);
    props_empty
        && !additional
        && !["patternProperties", "$ref", "anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// Whether `desc` says what leaving the parameter out does.
fn mentions_default(desc: &str) -> bool {
    let lower = desc.to_lowercase();
    DEFAULT_CUES.iter().any(|c| lower.contains(c))
}

/// Required top-level parameters the tool's description never mentions: neither the
/// name, nor all its words (stemmed), nor (for a CJK description) a character bigram
/// of the parameter's own description.
fn required_unmentioned(tool: &LintTool, description: &str, out: &mut Vec<Finding>) {
    let required: Vec<&str> = tool
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let lower = description.to_lowercase();
    let stems: BTreeSet<String> = content_stems(description).into_iter().collect();
    let cjk = mostly_cjk(description);
    let desc_words: BTreeSet<String> = words(description).into_iter().collect();
    for name in required {
        let name_words = identifier_words(name);
        let mentioned = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == name.to_lowercase())
            || (name_words.len() > 1 && lower.contains(&name_words.join(" ")))
            || (!name_words.is_empty() && name_words.iter().all(|w| stems.contains(&stem(w))))
            || (cjk && {
                let own = tool
                    .parameters
                    .pointer(&format!(
                        "/properties/{}/description",
                        name.replace('~', "~0").replace('/', "~1")
                    ))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                words(own)
                    .iter()
                    .any(|w| w.chars().count() == 2 && desc_words.contains(w))
            });
        if !mentioned {
            out.push(
                Finding::new(
                    "param-required-unmentioned",
                    format!(
                        "the description of `{}` never mentions its required parameter `{name}`",
                        tool.name
                    ),
                    "say in the tool's description what the tool needs, e.g. \"… for one `city`\"",
                )
                .on(tool, tool.parameter_pos(name))
                .param(name),
            );
        }
    }
}

/// The identifiers a description names as parameters: `backticked` ones, and the word
/// before "parameter", "argument" or "param". Sentences (cut at `.`, `;` and new lines)
/// that say what the tool returns are skipped: the names there are result fields.
/// Bare snake_case words are not taken: descriptions name result fields that way too.
pub fn named_parameters(description: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    };
    for sentence in description.split(['.', ';', '\n']) {
        if sentence.to_lowercase().contains("return") {
            continue;
        }
        for (i, part) in sentence.split('`').enumerate() {
            if i % 2 == 1 && ident(part) {
                out.insert(part.to_string());
            }
        }
        let tokens: Vec<&str> = sentence
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|t| !t.is_empty())
            .collect();
        for pair in tokens.windows(2) {
            let (t, next) = (pair[0], pair[1].to_lowercase());
            if ["parameter", "argument", "param"].contains(&next.as_str())
                && ident(t)
                && t.chars().any(|c| c == '_' || c.is_ascii_uppercase())
            {
                out.insert(t.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(description: &str, parameters: Value) -> LintTool {
        LintTool {
            name: "get_weather".into(),
            description: Some(description.into()),
            parameters,
            ..LintTool::default()
        }
    }

    fn found(t: &LintTool) -> Vec<(&'static str, Option<String>)> {
        let names = BTreeSet::from(["get_weather", "get_forecast"]);
        check(t, &names)
            .into_iter()
            .map(|f| (f.rule, f.parameter))
            .collect()
    }

    fn p(rule: &'static str, path: &str) -> (&'static str, Option<String>) {
        (rule, Some(path.to_string()))
    }

    #[test]
    fn a_clean_schema_has_no_findings() {
        let t = tool(
            "Returns the current weather for one city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["c", "f"], "description": "c for Celsius, f for Fahrenheit; default c"}
            }, "required": ["city"]}),
        );
        assert_eq!(found(&t), []);
    }

    #[test]
    fn each_parameter_smell_is_found() {
        let t = tool(
            "Returns the weather for one city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "date": {"type": "string", "description": "The day."},
                "unit": {"type": "string", "enum": ["metric", "imperial"], "description": "Which units to use."},
                "extra": {"type": "object", "description": "More options; optional."},
                "mode": {"description": "How; default fast."},
            }, "required": ["city", "date", "unit"]}),
        );
        assert_eq!(
            found(&t),
            [
                p("param-no-description", "city"),
                p("param-format-missing", "date"),
                p("param-enum-unexplained", "unit"),
                p("param-free-form-object", "extra"),
                p("param-missing-type", "mode"),
                p("param-required-unmentioned", "date"),
                p("param-required-unmentioned", "unit"),
            ]
        );
    }

    #[test]
    fn nested_paths_and_items() {
        let t = tool(
            "Plans a trip through the stops.",
            json!({"type": "object", "properties": {
                "stops": {"type": "array", "description": "The stops.", "items": {"type": "object", "properties": {
                    "city": {"type": "string"}
                }, "required": ["city"]}}
            }, "required": ["stops"]}),
        );
        assert_eq!(found(&t), [p("param-no-description", "stops[].city")]);
    }

    #[test]
    fn optional_without_a_default() {
        let t = tool(
            "Returns the weather for one city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "days": {"type": "integer", "description": "How many days ahead."}
            }, "required": ["city"]}),
        );
        assert_eq!(found(&t), [p("param-default-undocumented", "days")]);
    }

    #[test]
    fn a_description_naming_a_missing_parameter() {
        let t = tool(
            "Looks up the weather for `city` on `target_date`; see get_forecast for later days. Returns `status` and `temp_c`.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"}
            }, "required": ["city"]}),
        );
        assert_eq!(found(&t), [("description-names-unknown-param", None)]);
    }

    #[test]
    fn chinese_descriptions_mention_parameters_by_meaning() {
        let mut t = tool(
            "使用必应搜索指定的关键词，并返回搜索结果列表",
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "搜索关键词"}
            }, "required": ["query"]}),
        );
        t.name = "bing_search".into();
        assert_eq!(found(&t), []);
    }

    #[test]
    fn a_missing_root_type() {
        let t = tool("Returns the time.", json!({"properties": {}}));
        assert_eq!(found(&t), [("param-missing-type", None)]);
    }
}
