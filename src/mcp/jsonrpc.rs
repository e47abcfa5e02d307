//! JSON-RPC 2.0 as MCP uses it: building requests and notifications, telling the kinds
//! of incoming message apart, and reading a response's `result` or `error`.

use serde_json::{Map, Value, json};

/// The method is not offered (the answer to server requests toolgauge does not serve).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// 2026-07-28: an HTTP header disagrees with the body (`MCP-Protocol-Version`, `Mcp-Method`).
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the server needs a client capability the request did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not supported (`data.supported` lists them).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A request object with `id`, `method` and (when given) `params`.
pub fn request(id: u64, method: &str, params: Option<Value>) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        body["params"] = p;
    }
    body
}

/// A notification object (no `id`).
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        body["params"] = p;
    }
    body
}

/// A success response to a request the server sent.
pub fn result_response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response to a request the server sent.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What one incoming JSON value is.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming<'a> {
    /// A response (`result` or `error`) to the request with this `id` (`null` when the
    /// server could not read which request it answers).
    Response {
        /// The `id` as sent back.
        id: &'a Value,
    },
    /// A request from the server (it expects an answer).
    Request {
        /// Its `id`.
        id: &'a Value,
        /// Its method.
        method: &'a str,
    },
    /// A notification from the server.
    Notification {
        /// Its method.
        method: &'a str,
    },
    /// Not a JSON-RPC message.
    Invalid,
}

/// Classify one incoming JSON value.
pub fn classify(v: &Value) -> Incoming<'_> {
    let Some(obj) = v.as_object() else {
        return Incoming::Invalid;
    };
    match (obj.get("method").and_then(Value::as_str), obj.get("id")) {
        (Some(method), Some(id)) if !id.is_null() => Incoming::Request { id, method },
        (Some(method), None) => Incoming::Notification { method },
        (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
            Incoming::Response { id }
        }
        _ => Incoming::Invalid,
    }
}

/// The key a response is matched to its request by: the `id`'s JSON text, so `1` and
/// `"1"` stay different ids as JSON-RPC says.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A JSON-RPC error object, read leniently (a missing message reads as empty).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// `code` (0 when absent or not an integer).
    pub code: i64,
    /// `message`.
    pub message: String,
    /// `data`, if any.
    pub data: Option<Value>,
}

/// What a response carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `result`.
    Result(Value),
    /// `error`.
    Error(RpcError),
}

/// Read a response's `result` or `error`; `None` when it has neither.
pub fn reply(response: &Value) -> Option<Reply> {
    let obj = response.as_object()?;
    if let Some(e) = obj.get("error") {
        let field = |k: &str| e.get(k);
        return Some(Reply::Error(RpcError {
            code: field("code").and_then(Value::as_i64).unwrap_or(0),
            message: match field("message") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
            data: field("data").cloned(),
        }));
    }
    obj.get("result").map(|r| Reply::Result(r.clone()))
}

/// The first `max` characters of `text` (on a character boundary), with `…` when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A `params` object with `_meta` set to `meta` (merged over any `_meta` already there).
pub fn with_meta(params: Option<Map<String, Value>>, meta: &Map<String, Value>) -> Value {
    let mut params = params.unwrap_or_default();
    let slot = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(m) = slot {
        for (k, v) in meta {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_four_kinds() {
        let resp = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        assert_eq!(classify(&resp), Incoming::Response { id: &json!(3) });
        let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700}});
        assert_eq!(classify(&err), Incoming::Response { id: &Value::Null });
        let req = json!({"jsonrpc": "2.0", "id": "a", "method": "ping"});
        assert_eq!(
            classify(&req),
            Incoming::Request {
                id: &json!("a"),
                method: "ping"
            }
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message"});
        assert_eq!(
            classify(&note),
            Incoming::Notification {
                method: "notifications/message"
            }
        );
        for bad in [json!([1]), json!({"id": 1}), json!("x"), json!({"foo": 1})] {
            assert_eq!(classify(&bad), Incoming::Invalid, "{bad}");
        }
    }

    #[test]
    fn ids_of_different_types_differ() {
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
        assert_eq!(id_key(&json!(7)), "7");
    }

    #[test]
    fn reads_errors_leniently() {
        let r = reply(
            &json!({"id": 1, "error": {"code": -32022, "message": "no", "data": {"supported": ["x"]}}}),
        );
        assert_eq!(
            r,
            Some(Reply::Error(RpcError {
                code: -32022,
                message: "no".into(),
                data: Some(json!({"supported": ["x"]}))
            }))
        );
        let odd = reply(&json!({"id": 1, "error": {"message": 5}}));
        assert_eq!(
            odd,
            Some(Reply::Error(RpcError {
                code: 0,
                message: "5".into(),
                data: None
            }))
        );
        assert_eq!(reply(&json!({"id": 1})), None);
    }

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("héllo", 2), "hé…");
        assert_eq!(excerpt("hi", 2), "hi");
    }

    #[test]
    fn meta_merges_into_params() {
        let mut meta = Map::new();
        meta.insert("k".into(), json!(1));
        let p = with_meta(
            json!({"name": "t", "_meta": {"progressToken": 2}})
                .as_object()
                .cloned(),
            &meta,
        );
        assert_eq!(
            p,
            json!({"name": "t", "_meta": {"progressToken": 2, "k": 1}})
        );
        assert_eq!(with_meta(None, &meta), json!({"_meta": {"k": 1}}));
    }
}
