//! Every problem of a suite file that does not parse into the model, listed at once and
//! in plain words.
//!
//! serde stops at the first wrong type, unknown key or unknown value. When that happens
//! the file is read a second time into a plain tree that keeps where every key and value
//! starts, and the tree is checked against the suite's JSON Schema (the one
//! `toolgauge schema` prints, generated from [`super::model`]), which finds every such
//! problem. Each is told in the suite's terms (`unknown field`, `expected a list`,
//! `unknown kind`), never in the words of the libraries that found it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::error::Diagnostic;
use super::span::Spanned;
use crate::util::parse_error::source_line;

/// A YAML (or JSON) value with where each of its keys and values starts.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
}

/// A map key as text (suites only use text keys; others are shown as written).
#[derive(Debug)]
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Node::deserialize(d).map(|n| {
            Key(match n {
                Node::Str(s) => s,
                Node::Null => "null".into(),
                Node::Bool(b) => b.to_string(),
                Node::Int(i) => i.to_string(),
                Node::UInt(u) => u.to_string(),
                Node::Float(f) => f.to_string(),
                Node::Seq(_) | Node::Map(_) => "<a list or map used as a key>".into(),
            })
        })
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Node, E> {
                Ok(Node::Bool(b))
            }
            fn visit_i64<E: de::Error>(self, i: i64) -> Result<Node, E> {
                Ok(Node::Int(i))
            }
            fn visit_u64<E: de::Error>(self, u: u64) -> Result<Node, E> {
                Ok(Node::UInt(u))
            }
            fn visit_f64<E: de::Error>(self, f: f64) -> Result<Node, E> {
                Ok(Node::Float(f))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Node, E> {
                Ok(Node::Str(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Node, E> {
                Ok(Node::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element::<Spanned<Node>>()? {
                    items.push(item);
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = a.next_entry::<Spanned<Key>, Spanned<Node>>()? {
                    entries.push(entry);
                }
                Ok(Node::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// The tree as JSON, with the location of every value (and of every map key) by JSON
/// pointer (`/cases/0/kind`, escaped as jsonschema writes instance paths).
#[derive(Default)]
struct Located {
    values: HashMap<String, (u32, u32)>,
    keys: HashMap<String, (u32, u32)>,
    /// Numbers too large to be finite (`1e400`), by pointer: JSON has no such number,
    /// so they are told apart from the schema's checks.
    non_finite: Vec<String>,
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn to_json(node: &Spanned<Node>, pointer: &str, at: &mut Located) -> Value {
    at.values.insert(pointer.to_string(), node.at());
    match &node.value {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(i) => Value::from(*i),
        Node::UInt(u) => Value::from(*u),
        Node::Float(f) if !f.is_finite() => {
            at.non_finite.push(pointer.to_string());
            Value::Null
        }
        Node::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Node::Str(s) => Value::String(s.clone()),
        Node::Seq(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, n)| to_json(n, &format!("{pointer}/{i}"), at))
                .collect(),
        ),
        Node::Map(entries) => {
            let mut map = serde_json::Map::new();
            for (k, v) in entries {
                let p = format!("{pointer}/{}", escape(&k.value.0));
                at.keys.insert(p.clone(), k.at());
                let value = to_json(v, &p, at);
                map.insert(k.value.0.clone(), value);
            }
            Value::Object(map)
        }
    }
}

/// The value written at `(line, column)` of `text` (a plain scalar: up to a space, a
/// comma, a bracket or a comment).
fn token_at(text: &str, (line, column): (u32, u32)) -> Option<&str> {
    let l = text.lines().nth((line as usize).checked_sub(1)?)?;
    let start = l
        .char_indices()
        .nth((column as usize).checked_sub(1)?)
        .map(|(i, _)| i)?;
    let rest = &l[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | '}' | ']' | '#'))
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|t| !t.is_empty())
}

/// The largest value of each integer `format` schemars writes (`uint32` for a `u32`
/// field): JSON Schema does not check formats, so the bound is made explicit for the
/// validator, and `repeats: 99999999999999999999` is told the range it must fit.
fn bound_integer_formats(node: &mut Value) {
    match node {
        Value::Object(o) => {
            let bounds: Option<(i128, i128)> = match o.get("format").and_then(Value::as_str) {
                Some("uint8") => Some((0, u8::MAX.into())),
                Some("uint16") => Some((0, u16::MAX.into())),
                Some("uint32") => Some((0, u32::MAX.into())),
                Some("uint64" | "uint") => Some((0, u64::MAX.into())),
                Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
                Some("int64" | "int") => Some((i64::MIN.into(), i64::MAX.into())),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                let num = |n: i128| {
                    u64::try_from(n)
                        .map(Value::from)
                        .or_else(|_| i64::try_from(n).map(Value::from))
                        .unwrap_or(Value::Null)
                };
                o.entry("minimum").or_insert_with(|| num(min));
                o.entry("maximum").or_insert_with(|| num(max));
            }
            for v in o.values_mut() {
                bound_integer_formats(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// The suite schema and its validator, built on first use.
fn suite_schema() -> &'static (Value, jsonschema::Validator) {
    static SCHEMA: OnceLock<(Value, jsonschema::Validator)> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema = serde_json::to_value(schemars::schema_for!(super::model::SuiteFile))
            .expect("a generated schema is JSON");
        bound_integer_formats(&mut schema);
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("the generated suite schema compiles");
        (schema, validator)
    })
}

/// Every shape problem of the suite `text` (YAML or JSON), or `None` when the text can
/// not be read into a tree (the caller then reports the parser's own error).
pub(crate) fn shape_problems(text: &str, path: &Path) -> Option<Vec<Diagnostic>> {
    let mut options = crate::util::yaml::options_for(text.len());
    // A number too large to be finite is one more problem to list, not the end of the
    // check: read it as infinity here and name it below.
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    // JSON is YAML's flow style: the YAML reader gives the same tree, with locations.
    let tree: Spanned<Node> = serde_saphyr::from_str_with_options(text, options).ok()?;
    let mut at = Located::default();
    let instance = to_json(&tree, "", &mut at);
    let (schema, validator) = suite_schema();
    let mut out: Vec<Diagnostic> = Vec::new();
    for e in validator.iter_errors(&instance) {
        // A number too large stands as null in the tree: its own problem says so.
        if at
            .non_finite
            .iter()
            .any(|p| p == e.instance_path().as_str())
        {
            continue;
        }
        explain(&e, schema, &instance, &at, text, &mut |p| {
            out.push(p.into_diagnostic(path, text))
        });
    }
    for pointer in &at.non_finite {
        let here = at.values.get(pointer).copied().unwrap_or((0, 0));
        let written = token_at(text, here).unwrap_or("the value");
        let name = last_key(pointer);
        // `.inf` and `.nan` are written as such; `1e400` is a number too large to hold.
        let spelled = written.starts_with(['.', '+', '-'])
            && !written[1..].starts_with(|c: char| c.is_ascii_digit());
        let (message, hint) = if spelled {
            (
                format!("numbers must be finite: `{written}` is not"),
                "write a finite number, or quote the value to make it text",
            )
        } else {
            (
                format!("`{name}` must be a finite number, got `{written}`, which is too large"),
                "numbers here are 64-bit floating point (at most about 1.8e308); see docs/suite-format.md for the key's range, or quote the value to make it text",
            )
        };
        let problem = Problem {
            at: here,
            pointer: pointer.clone(),
            message,
            hint: Some(hint.into()),
        };
        out.push(problem.into_diagnostic(path, text));
    }
    out.sort_by_key(|d| (d.line, d.column));
    out.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.message == b.message);
    Some(out)
}

/// One problem before it is placed in the file.
struct Problem {
    at: (u32, u32),
    pointer: String,
    message: String,
    hint: Option<String>,
}

impl Problem {
    fn into_diagnostic(self, path: &Path, text: &str) -> Diagnostic {
        Diagnostic {
            file: path.to_path_buf(),
            line: self.at.0,
            column: self.at.1,
            field: field_path(&self.pointer),
            message: self.message,
            hint: self.hint,
            source_line: source_line(text, self.at.0),
        }
    }
}

/// `/cases/0/expect/calls/1/tool` as `cases[0].expect.calls[1].tool`.
pub(crate) fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// The last key of a pointer (`kind` of `/cases/0/kind`), for messages.
fn last_key(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap_or("")
        .replace("~1", "/")
        .replace("~0", "~")
}

/// The schema node at `path`, a schema path as jsonschema reports it: a pointer whose
/// `$ref` segments step through references (`/properties/cases/items/$ref/properties`).
fn schema_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = root;
    for seg in path.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        node = if seg == "$ref" {
            resolve(root, node)?
        } else {
            match node {
                Value::Object(m) => m.get(&seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            }
        };
    }
    resolve(root, node)
}

fn resolve<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let mut node = node;
    for _ in 0..16 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => node = root.pointer(r.strip_prefix('#')?)?,
            None => return Some(node),
        }
    }
    None
}

/// How a value appears in a message.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("`{s}`"),
        Value::Object(_) => "a map".into(),
        Value::Array(_) => "a list".into(),
        Value::Null => "nothing (null)".into(),
        other => format!("`{other}`"),
    }
}

/// A JSON type in the suite's words.
fn type_words(t: &str) -> &'static str {
    match t {
        "string" => "text",
        "integer" => "a whole number",
        "number" => "a number",
        "boolean" => "true or false",
        "array" => "a list",
        "object" => "a map (`key: value`)",
        "null" => "nothing",
        _ => "another kind of value",
    }
}

/// The alternatives a schema node accepts, as a suite author writes them (`should_call`,
/// `{function: ...}`, `a list`); `null` (an omitted optional value) is left out.
fn alternatives(root: &Value, node: &Value, out: &mut Vec<String>) {
    // A schema path ending in `oneOf` or `anyOf` names the list of branches.
    if let Value::Array(branches) = node {
        for b in branches {
            alternatives(root, b, out);
        }
        return;
    }
    let Some(node) = resolve(root, node) else {
        return;
    };
    if let Some(c) = node.get("const") {
        out.push(match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        return;
    }
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        out.extend(values.iter().filter(|v| !v.is_null()).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }));
        return;
    }
    for k in ["oneOf", "anyOf"] {
        if let Some(branches) = node.get(k).and_then(Value::as_array) {
            for b in branches {
                alternatives(root, b, out);
            }
            return;
        }
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return,
    };
    for t in types {
        if t == "null" {
            continue;
        }
        let required = node.get("required").and_then(Value::as_array);
        match (t, required.map(Vec::as_slice)) {
            ("object", Some([Value::String(k)])) => out.push(format!("{{{k}: ...}}")),
            _ => out.push(type_words(t).to_string()),
        }
    }
}

fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Whether serde reads the quoted scalar `text` as a value of JSON type `t`.
fn reads_as(text: &str, t: &str) -> bool {
    match t {
        "number" => text.trim().parse::<f64>().is_ok_and(f64::is_finite),
        "integer" => text.trim().parse::<i64>().is_ok() || text.trim().parse::<u64>().is_ok(),
        "boolean" => matches!(text, "true" | "false"),
        _ => false,
    }
}

/// Whether a branch's errors say the value has the wrong type for it altogether.
fn wrong_type_for(branch: &[jsonschema::ValidationError<'_>], instance_path: &str) -> bool {
    branch.iter().any(|e| {
        e.instance_path().as_str() == instance_path
            && matches!(
                e.kind(),
                ValidationErrorKind::Type { .. }
                    | ValidationErrorKind::Constant { .. }
                    | ValidationErrorKind::Enum { .. }
            )
    })
}

/// Turn one validation error into the problems a user should see.
fn explain(
    e: &jsonschema::ValidationError<'_>,
    schema: &Value,
    instance: &Value,
    at: &Located,
    text: &str,
    out: &mut dyn FnMut(Problem),
) {
    let pointer = e.instance_path().as_str().to_string();
    let here = at.values.get(&pointer).copied().unwrap_or((0, 0));
    let value = instance.pointer(&pointer).unwrap_or(&Value::Null);
    let name = last_key(&pointer);
    let schema_path = e.schema_path().as_str();
    match e.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            // The keys this map accepts, from the `properties` next to the keyword.
            let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
            let known: Vec<&str> = schema_at(schema, parent)
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for key in unexpected {
                let p = format!("{pointer}/{}", escape(key));
                let suggestion = crate::util::suggest::closest(key, known.iter().copied());
                let hint = match suggestion {
                    Some(s) => format!(
                        "did you mean `{s}`? the keys here are: {}",
                        known.join(", ")
                    ),
                    None => format!("the keys here are: {}", known.join(", ")),
                };
                out(Problem {
                    at: at.keys.get(&p).copied().unwrap_or(here),
                    pointer: p,
                    message: format!("unknown field `{key}`"),
                    hint: Some(hint),
                });
            }
        }
        ValidationErrorKind::Required { property } => {
            let key = property.as_str().unwrap_or_default();
            out(Problem {
                at: here,
                pointer: format!("{pointer}/{}", escape(key)),
                message: format!(
                    "missing field `{key}`{}",
                    if pointer.is_empty() {
                        String::new()
                    } else {
                        format!(" in `{}`", field_path(&pointer))
                    }
                ),
                hint: Some(format!("add `{key}:`; see docs/suite-format.md")),
            });
        }
        ValidationErrorKind::Type { kind } => {
            let wanted: Vec<String> = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect(),
            };
            let words: Vec<String> = wanted
                .iter()
                .filter(|t| *t != "null")
                .map(|t| type_words(t).to_string())
                .collect();
            // A YAML scalar written for text is text (`zip: 010`, `name: 2026`): serde
            // reads it as such, so the schema's "string" is not a problem for scalars.
            let scalar = matches!(value, Value::Number(_) | Value::Bool(_));
            if scalar && wanted.iter().any(|t| t == "string") {
                return;
            }
            // Likewise quoted numbers and booleans (`min: "0.9"`) are read as such.
            if let Value::String(text) = value
                && wanted.iter().any(|t| reads_as(text, t))
            {
                return;
            }
            out(Problem {
                at: here,
                pointer: pointer.clone(),
                message: format!("`{name}` must be {}, got {}", or_list(&words), show(value)),
                hint: Some(type_hint(&words)),
            });
        }
        ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
            let mut alts = Vec::new();
            if let Some(node) =
                schema_at(schema, schema_path.rsplit_once('/').map_or("", |(p, _)| p))
            {
                alternatives(schema, node, &mut alts);
            }
            out(unknown_value(&name, &pointer, here, value, &alts));
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // Branches the value could be meant for (right type); when exactly one is,
            // its own problems are the useful ones (`expect: {calz: 1}` is an unknown
            // field, not "none of the alternatives").
            let candidates: Vec<&Vec<jsonschema::ValidationError<'static>>> = context
                .iter()
                .filter(|b| !wrong_type_for(b, &pointer))
                .collect();
            if let [only] = candidates.as_slice() {
                for sub in only.iter() {
                    explain(sub, schema, instance, at, text, out);
                }
                return;
            }
            let mut alts = Vec::new();
            if let Some(node) = schema_at(schema, schema_path) {
                alternatives(schema, node, &mut alts);
            }
            alts.dedup();
            out(unknown_value(&name, &pointer, here, value, &alts));
        }
        ValidationErrorKind::Minimum { limit } => out(Problem {
            at: here,
            pointer: pointer.clone(),
            message: format!(
                "`{name}` must be at least {limit}, got {}",
                written(text, here, value)
            ),
            hint: None,
        }),
        ValidationErrorKind::Maximum { limit } => out(Problem {
            at: here,
            pointer: pointer.clone(),
            message: format!(
                "`{name}` must be at most {limit}, got {}",
                written(text, here, value)
            ),
            hint: None,
        }),
        _ => out(Problem {
            at: here,
            pointer: pointer.clone(),
            message: format!(
                "`{name}` has a value a suite does not accept here: {}",
                show(value)
            ),
            hint: Some("see docs/suite-format.md for what this key takes".into()),
        }),
    }
}

/// A number as the suite wrote it (`99999999999999999999`, not `1e+20`), else as read.
fn written(text: &str, at: (u32, u32), value: &Value) -> String {
    match (value, token_at(text, at)) {
        (Value::Number(_), Some(t)) => format!("`{t}`"),
        _ => show(value),
    }
}

fn unknown_value(
    name: &str,
    pointer: &str,
    at: (u32, u32),
    value: &Value,
    alts: &[String],
) -> Problem {
    // A list item is named by its list: `unknown value `forced` in `modes``.
    let in_list = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
    let name = if in_list {
        pointer
            .rsplit('/')
            .find(|s| !s.chars().all(|c| c.is_ascii_digit()))
            .unwrap_or("")
            .to_string()
    } else {
        name.to_string()
    };
    let name = name.as_str();
    // Alternatives that are kinds of value (`a map`, `{function: ...}`) rather than names.
    let only_shapes = alts.iter().all(|a| a.contains(' ') || a.starts_with('{'));
    let suggestion = value
        .as_str()
        .and_then(|v| crate::util::suggest::closest(v, alts.iter().map(String::as_str)));
    let expected = or_list(
        &alts
            .iter()
            .map(|a| {
                if a.contains(' ') || a.starts_with('{') {
                    a.clone()
                } else {
                    format!("`{a}`")
                }
            })
            .collect::<Vec<_>>(),
    );
    let hint = match suggestion {
        Some(s) => format!("did you mean `{s}`? `{name}` takes {expected}"),
        None => format!("`{name}` takes {expected}"),
    };
    let message = if only_shapes || !value.is_string() {
        format!("`{name}` must be {expected}, got {}", show(value))
    } else if in_list {
        format!("unknown value {} in `{name}`", show(value))
    } else {
        format!("unknown {} {}", name.replace('_', " "), show(value))
    };
    Problem {
        at,
        pointer: pointer.to_string(),
        message,
        hint: Some(hint),
    }
}

fn type_hint(words: &[String]) -> String {
    if words.iter().any(|w| w.starts_with("a list")) {
        "write a list as `[a, b]` or as `- ` items on the lines below".into()
    } else if words.iter().any(|w| w.starts_with("a map")) {
        "write a map as `{key: value}` or as `key: value` lines indented below".into()
    } else if words.iter().any(|w| w == "true or false") {
        "write `true` or `false` (YAML 1.2: `yes`, `no`, `on` and `off` are text)".into()
    } else if words.iter().any(|w| w == "text") {
        "quote the value to make it text".into()
    } else {
        "check the value against docs/suite-format.md (quote text that looks like a number or boolean)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<(u32, u32, String, String, String)> {
        shape_problems(text, Path::new("s.yaml"))
            .expect("the tree reads")
            .into_iter()
            .map(|d| {
                (
                    d.line,
                    d.column,
                    d.field,
                    d.message,
                    d.hint.unwrap_or_default(),
                )
            })
            .collect()
    }

    #[test]
    fn alternatives_and_missing_fields_are_named_in_suite_terms() {
        let text = "tools: []\nmatrix:\n  tool_choice: [auto, {functon: f}, 3]\n";
        let s = |v: &str| v.to_string();
        let modes = "`tool_choice` takes `none`, `auto`, `required` or {function: ...}";
        assert_eq!(
            problems(text),
            vec![
                (
                    1,
                    1,
                    s("cases"),
                    s("missing field `cases`"),
                    s("add `cases:`; see docs/suite-format.md")
                ),
                // A map can only be `{function: NAME}`: its own problems are the useful ones.
                (
                    3,
                    23,
                    s("matrix.tool_choice[1].function"),
                    s("missing field `function` in `matrix.tool_choice[1]`"),
                    s("add `function:`; see docs/suite-format.md")
                ),
                (
                    3,
                    24,
                    s("matrix.tool_choice[1].functon"),
                    s("unknown field `functon`"),
                    s("did you mean `function`? the keys here are: function")
                ),
                (
                    3,
                    37,
                    s("matrix.tool_choice[2]"),
                    s(
                        "`tool_choice` must be `none`, `auto`, `required` or {function: ...}, got `3`"
                    ),
                    s(modes)
                ),
            ]
        );
    }

    #[test]
    fn field_paths_read_like_the_suite() {
        assert_eq!(
            field_path("/cases/0/expect/calls/1/tool"),
            "cases[0].expect.calls[1].tool"
        );
        assert_eq!(field_path(""), "");
        assert_eq!(
            field_path("/tools/0/parameters/a~1b"),
            "tools[0].parameters.a/b"
        );
    }
}
