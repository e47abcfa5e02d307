//! The 2026-07-28 Streamable HTTP routing headers (SEP-2243): `Mcp-Method`, `Mcp-Name` and
//! the `Mcp-Param-*` headers a tool's `x-mcp-header` annotations ask for, with the
//! spec's value encoding.
//!
//! Intermediaries route on these headers without reading the body, and a modern server
//! rejects a request whose headers disagree with its body (JSON-RPC -32020), so every
//! value here is derived from the body actually sent, never from a separate field.

use std::collections::HashSet;

use base64::Engine;
use serde_json::{Map, Value};

/// Header carrying the JSON-RPC method.
pub const MCP_METHOD: &str = "mcp-method";
/// Header carrying the tool or prompt name, or the resource URI.
pub const MCP_NAME: &str = "mcp-name";
/// Prefix of the headers that mirror annotated tool arguments.
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// The key that annotates an input-schema property as mirrored into a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

const B64_PREFIX: &str = "=?base64?";
const B64_SUFFIX: &str = "?=";

/// The params field mirrored in `Mcp-Name` for `method`, if the method names something.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// A header value as the spec's value encoding wants it: printable ASCII without edge
/// whitespace travels verbatim; anything else (non-ASCII, control characters, leading or
/// trailing space or tab, or text that already looks like the sentinel) is wrapped as
/// `=?base64?…?=` so the receiver recovers the exact bytes.
pub fn encode_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let edge_space = value.starts_with(' ') || value.ends_with(' ');
    let looks_wrapped = value.starts_with(B64_PREFIX) && value.ends_with(B64_SUFFIX);
    if printable && !edge_space && !looks_wrapped {
        value.to_string()
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{B64_PREFIX}{b64}{B64_SUFFIX}")
    }
}

/// Reverse [`encode_value`]; `None` when the sentinel wraps invalid Base64 or UTF-8.
pub fn decode_value(value: &str) -> Option<String> {
    match value
        .strip_prefix(B64_PREFIX)
        .and_then(|v| v.strip_suffix(B64_SUFFIX))
    {
        Some(inner) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(inner)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_string()),
    }
}

/// One `x-mcp-header` annotation: the property path from the schema root (through
/// `properties` keys only) and the header token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// Property names from the root to the annotated property.
    pub path: Vec<String>,
    /// The token after `Mcp-Param-`.
    pub token: String,
}

/// Why a tool's `x-mcp-header` annotations are invalid, or `None` when they are fine
/// (or absent). The spec says a client must not use such a tool, so the client drops
/// it from the list; the reason goes to the user.
///
/// Valid means: on a property reached from the root through `properties` keys alone,
/// a non-empty RFC 9110 token, on a `string`/`integer`/`boolean` property, and unique
/// case-insensitively across the schema.
pub fn x_mcp_header_problem(input_schema: &Value) -> Option<String> {
    annotations(input_schema).err()
}

/// The tool's valid annotations, or why they are invalid (see [`x_mcp_header_problem`]).
pub fn annotations(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(input_schema, Some(Vec::new()), &mut found)?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (path, schema) in found {
        let Some(path) = path.filter(|p| !p.is_empty()) else {
            return Err(format!(
                "{X_MCP_HEADER} sits where only a `properties` chain from the root may put it"
            ));
        };
        let prop = path.join(".");
        let token = match schema.get(X_MCP_HEADER) {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(format!(
                    "property `{prop}`: {X_MCP_HEADER} must be a string"
                ));
            }
        };
        if token.is_empty() || !token.chars().all(is_tchar) {
            return Err(format!(
                "property `{prop}`: {X_MCP_HEADER} `{}` is not an HTTP header token",
                token.escape_default()
            ));
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                return Err(format!(
                    "property `{prop}`: {X_MCP_HEADER} is allowed on string, integer or \
                     boolean properties only (type is {})",
                    other.map_or("missing".to_string(), |t| format!("`{t}`"))
                ));
            }
        }
        if !seen.insert(token.to_ascii_lowercase()) {
            return Err(format!(
                "property `{prop}`: {X_MCP_HEADER} `{token}` is used twice (names are case-insensitive)"
            ));
        }
        out.push(ParamHeader { path, token });
    }
    Ok(out)
}

/// Keywords whose value is one subschema, a list of them, or a name-to-subschema map.
/// Only `properties` keeps the chain an annotation may sit on; data keywords (`default`,
/// `enum`, `const`, `examples`) and `$ref` are not entered, so the walk never mistakes
/// data for an annotation and never dereferences anything.
const SUB_ONE: &[&str] = &[
    "items",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
const SUB_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
const SUB_MAP: &[&str] = &[
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// A schema position holding `x-mcp-header`: its `properties` path (`None` when off
/// the chain) and the schema object.
type Found<'a> = (Option<Vec<String>>, &'a Map<String, Value>);

/// Collect every schema position holding `x-mcp-header`, with its `properties` path
/// (`None` once the walk left the pure `properties` chain). Depth is bounded so a
/// hostile, deeply nested schema cannot exhaust the stack.
fn walk<'a>(
    node: &'a Value,
    path: Option<Vec<String>>,
    out: &mut Vec<Found<'a>>,
) -> Result<(), String> {
    const MAX_DEPTH: usize = 64;
    let mut stack = vec![(node, path, 0usize)];
    while let Some((node, path, depth)) = stack.pop() {
        let Value::Object(schema) = node else {
            continue;
        };
        if depth > MAX_DEPTH {
            return Err(format!(
                "the input schema nests deeper than {MAX_DEPTH} levels"
            ));
        }
        if schema.contains_key(X_MCP_HEADER) {
            out.push((path.clone(), schema));
        }
        for (key, value) in schema {
            let k = key.as_str();
            if k == "properties" {
                if let Value::Object(props) = value {
                    for (name, sub) in props {
                        let child = path.as_ref().map(|p| {
                            let mut p = p.clone();
                            p.push(name.clone());
                            p
                        });
                        stack.push((sub, child, depth + 1));
                    }
                }
            } else if SUB_ONE.contains(&k) {
                stack.push((value, None, depth + 1));
            } else if SUB_LIST.contains(&k) {
                if let Value::Array(items) = value {
                    stack.extend(items.iter().map(|v| (v, None, depth + 1)));
                }
            } else if SUB_MAP.contains(&k)
                && let Value::Object(map) = value
            {
                stack.extend(map.values().map(|v| (v, None, depth + 1)));
            }
        }
    }
    // The stack visits properties in reverse; restore schema order for stable headers.
    out.reverse();
    Ok(())
}

/// RFC 9110 §5.6.2 token character.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The `Mcp-Param-*` headers for a `tools/call` with `arguments`: each annotated
/// argument that is present, not null and a scalar (booleans as `true`/`false`, numbers
/// as JSON writes them), encoded with [`encode_value`]. Absent or null values get no
/// header, as the spec says.
pub fn param_headers(annotations: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in annotations {
        let value = a.path.iter().try_fold(arguments, |node, key| node.get(key));
        let rendered = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        out.push((
            format!("{MCP_PARAM_PREFIX}{}", a.token),
            encode_value(&rendered),
        ));
    }
    out
}

/// `Mcp-Method` and (for methods that name something) `Mcp-Name` for a request body.
pub fn standard_headers(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(method) = body.get("method").and_then(Value::as_str) else {
        return out;
    };
    out.push((MCP_METHOD.to_string(), method.to_string()));
    let name = name_field(method)
        .and_then(|field| body.get("params")?.get(field)?.as_str().map(str::to_string));
    if let Some(name) = name {
        out.push((MCP_NAME.to_string(), encode_value(&name)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_ascii_travels_verbatim_and_the_rest_is_wrapped() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("us west 1"), "us west 1");
        assert_eq!(encode_value(""), "");
        // "Hello, 世界" in UTF-8, Base64 by hand: SGVsbG8sIOS4lueVjA==
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode_value("a\r\nb"), "=?base64?YQ0KYg==?=");
        // Already sentinel-shaped text is wrapped so it is not decoded by mistake.
        assert_eq!(encode_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        for v in ["Hello, 世界", " padded ", "x", "=?base64?x?="] {
            assert_eq!(decode_value(&encode_value(v)).as_deref(), Some(v));
        }
        assert_eq!(decode_value("=?base64?!!?="), None);
    }

    #[test]
    fn standard_headers_follow_the_body() {
        let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"my-tool","arguments":{}}});
        assert_eq!(
            standard_headers(&call),
            vec![
                ("mcp-method".to_string(), "tools/call".to_string()),
                ("mcp-name".to_string(), "my-tool".to_string())
            ]
        );
        let read = json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a b.txt"}});
        assert_eq!(standard_headers(&read)[1].1, "file:///a b.txt");
        let list = json!({"jsonrpc":"2.0","id":3,"method":"tools/list"});
        assert_eq!(standard_headers(&list).len(), 1);
        assert!(standard_headers(&json!({"jsonrpc":"2.0","id":3,"result":{}})).is_empty());
    }

    #[test]
    fn annotated_arguments_become_param_headers() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "priority":{"type":"integer","x-mcp-header":"Priority"},
            "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
            "where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
            "query":{"type":"string"}}});
        let ann = annotations(&schema).unwrap();
        assert_eq!(ann.len(), 4);
        let args = json!({"region":"Région","priority":42,"verbose":null,"where":{"zone":"b"},"query":"q"});
        let mut got = param_headers(&ann, &args);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("mcp-param-Priority".to_string(), "42".to_string()),
                (
                    "mcp-param-Region".to_string(),
                    "=?base64?UsOpZ2lvbg==?=".to_string()
                ),
                ("mcp-param-Zone".to_string(), "b".to_string()),
            ]
        );
    }

    #[test]
    fn invalid_annotations_are_named() {
        let bad = |props: Value| x_mcp_header_problem(&json!({"type":"object","properties":props}));
        assert!(
            bad(json!({"v":{"type":"string","x-mcp-header":""}}))
                .unwrap()
                .contains("token")
        );
        assert!(
            bad(json!({"v":{"type":"string","x-mcp-header":"My Region"}}))
                .unwrap()
                .contains("token")
        );
        assert!(
            bad(json!({"v":{"type":"string","x-mcp-header":"Région"}}))
                .unwrap()
                .contains("token")
        );
        assert!(
            bad(json!({"v":{"type":"string","x-mcp-header":"A:B"}}))
                .unwrap()
                .contains("token")
        );
        assert!(
            bad(json!({"v":{"type":"number","x-mcp-header":"S"}}))
                .unwrap()
                .contains("`number`")
        );
        assert!(bad(json!({"v":{"type":"object","x-mcp-header":"D"}})).is_some());
        assert!(
            bad(json!({"v":{"x-mcp-header":"D"}}))
                .unwrap()
                .contains("missing")
        );
        let dup = bad(json!({"a":{"type":"string","x-mcp-header":"MyField"},
                             "b":{"type":"string","x-mcp-header":"myfield"}}));
        assert!(dup.unwrap().contains("twice"));
        // Off the properties chain (inside items, $defs) or on the root itself.
        assert!(
            bad(json!({"l":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}))
                .is_some()
        );
        assert!(x_mcp_header_problem(&json!({"x-mcp-header":"Root","type":"object"})).is_some());
        assert!(
            x_mcp_header_problem(&json!({"$defs":{"d":{"type":"string","x-mcp-header":"D"}}}))
                .is_some()
        );
        // Data keywords are not schemas: an annotation-shaped default is fine.
        assert_eq!(
            bad(json!({"v":{"type":"object","default":{"x-mcp-header":"X"}}})),
            None
        );
        assert_eq!(
            bad(json!({"v":{"type":"string","x-mcp-header":"Ok-Name_1"}})),
            None
        );
    }
}
