//! Function definitions in the JSON dialect that BFCL and When2Call share (the Gorilla
//! format: `parameters` typed `dict`, `float`, `tuple`, `any`…), turned into suite tools,
//! and lists of acceptable values turned into matchers and back.
//!
//! Both benchmark importers use it, and the `bfcl` profile and the oracle read matchers
//! back with [`options_of`]; it lives below them so that no benchmark imports another.
//! A type the JSON Schema does not imply is kept as `x-bfcl-type`, the extension key the
//! shipped suites and snapshots already carry.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// One function (its JSON text) as a suite tool (compact JSON text).
pub fn tool(raw: &RawValue) -> Result<Arc<RawValue>, String> {
    let f: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let f = &f;
    let name = f
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("a function has no name: {f}"))?;
    let description = f.get("description").and_then(Value::as_str).unwrap_or("");
    let params = f
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| json!({"type": "dict", "properties": {}}));
    let mut schema = to_json_schema(&params);
    if let Value::Object(o) = &mut schema
        && !o.contains_key("type")
    {
        o.insert("type".into(), json!("object"));
    }
    let tool = json!({"name": name, "description": description, "parameters": schema});
    serde_json::value::to_raw_value(&tool)
        .map(Arc::from)
        .map_err(|e| e.to_string())
}

/// The JSON Schema type standing for a BFCL type; `None` when it has none (`any`).
fn json_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "dict" | "object" => "object",
        "float" | "number" => "number",
        "tuple" | "array" => "array",
        "integer" => "integer",
        "string" => "string",
        "boolean" => "boolean",
        "null" => "null",
        _ => return None,
    })
}

/// The BFCL type a JSON Schema type stands for when no `x-bfcl-type` says otherwise.
pub fn inferred(json: Option<&str>) -> Option<&'static str> {
    Some(match json? {
        "object" => "dict",
        "number" => "float",
        "array" => "array",
        "integer" => "integer",
        "string" => "string",
        "boolean" => "boolean",
        "null" => "null",
        _ => return None,
    })
}

/// BFCL's parameter schema as JSON Schema, BFCL's types kept as `x-bfcl-type` where the
/// JSON type does not imply them (`tuple`, `any`, and any type BFCL may add).
pub fn to_json_schema(node: &Value) -> Value {
    let Value::Object(o) = node else {
        return node.clone();
    };
    let mut out = Map::new();
    for (k, v) in o {
        match (k.as_str(), v) {
            ("type", Value::String(t)) => {
                if let Some(j) = json_type(t) {
                    out.insert("type".into(), json!(j));
                }
                // Only where the JSON type does not say which BFCL type it was.
                if inferred(json_type(t)) != Some(t.as_str()) {
                    out.insert("x-bfcl-type".into(), v.clone());
                }
            }
            ("properties", Value::Object(props)) => {
                out.insert(
                    k.clone(),
                    Value::Object(
                        props
                            .iter()
                            .map(|(p, s)| (p.clone(), to_json_schema(s)))
                            .collect(),
                    ),
                );
            }
            ("items", _) => {
                out.insert(k.clone(), to_json_schema(v));
            }
            // Only a list of names is JSON Schema's `required`; BFCL's own flags are kept
            // under other names so the schema still compiles.
            ("required", Value::Array(_)) => {
                out.insert(k.clone(), v.clone());
            }
            ("required" | "optional", _) => {
                out.insert(format!("x-bfcl-{k}"), v.clone());
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The matcher for one parameter's acceptable values (BFCL's list, where `""` means "may
/// be omitted"; When2Call's one example value).
pub fn matcher(options: &[Value]) -> Value {
    let optional = options.iter().any(|o| o.as_str() == Some(""));
    let values: Vec<Value> = options
        .iter()
        .filter(|o| o.as_str() != Some(""))
        .map(|v| match v {
            Value::Array(_) | Value::Object(_) => json!({"eq": v}),
            _ => v.clone(),
        })
        .collect();
    match (values.as_slice(), optional) {
        ([], true) => json!({"optional": true}),
        ([], false) => json!({"absent": true}),
        ([one], false) => one.clone(),
        (_, false) => json!({"one_of": values}),
        (_, true) => json!({"one_of": values, "optional": true}),
    }
}

/// The acceptable values a matcher written by the importer stands for (BFCL's list,
/// `""` for "may be omitted"); `Err` for matchers the `bfcl` profile can not read.
pub fn options_of(matcher: &Value) -> Result<Vec<Value>, String> {
    let lit = |v: &Value| -> Result<Value, String> {
        match v {
            Value::Object(o) if o.len() == 1 && o.contains_key("eq") => Ok(o["eq"].clone()),
            Value::Object(_) | Value::Array(_) => Err(format!(
                "{v} is not a literal; write lists and maps as {{eq: ...}}"
            )),
            _ => Ok(v.clone()),
        }
    };
    let Value::Object(o) = matcher else {
        return lit(matcher).map(|v| vec![v]);
    };
    let optional = match o.get("optional") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("`optional` must be true or false, got {other}")),
    };
    let mut keys: Vec<&str> = o
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "optional")
        .collect();
    keys.sort_unstable();
    let mut values = match keys.as_slice() {
        [] if optional => Vec::new(),
        ["eq"] => vec![o["eq"].clone()],
        ["one_of"] => o["one_of"]
            .as_array()
            .ok_or("`one_of` must be a list")?
            .iter()
            .map(lit)
            .collect::<Result<_, _>>()?,
        ["absent"] if o["absent"] == json!(true) && !optional => return Ok(Vec::new()),
        _ => {
            return Err(format!(
                "acceptable values are written as literals, `eq`, `one_of`, `optional` and `absent: true`; got {matcher}"
            ));
        }
    };
    if optional {
        values.push(json!(""));
    }
    Ok(values)
}
