//! What a Streamable HTTP reply holds: sorting the JSON-RPC messages that arrive (the
//! response we wait for, server requests, notifications, stray responses) and short
//! excerpts of bodies for error text.
//!
//! Kept apart from the transport so the rules are plain functions over JSON values,
//! tested without a network.

use serde_json::{Value, json};

/// One JSON-RPC message from the server, sorted by what the client must do with it.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The response (result or error) to the request in flight.
    Answer(Value),
    /// A request from the server (ping, sampling, elicitation, roots): answered.
    ServerRequest {
        /// Its id, echoed in the answer.
        id: Value,
        /// Its method.
        method: String,
    },
    /// A notification or a response to some other id: logged, otherwise ignored.
    Other,
    /// Not a JSON-RPC message at all.
    NotJsonRpc,
}

/// Sort one message against the id of the request in flight.
pub fn classify(message: &Value, want_id: &Value) -> Incoming {
    let Some(obj) = message.as_object() else {
        return Incoming::NotJsonRpc;
    };
    let id = obj.get("id");
    match (obj.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) if !id.is_null() => Incoming::ServerRequest {
            id: id.clone(),
            method: method.to_string(),
        },
        (Some(_), _) => Incoming::Other,
        (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
            if same_id(id, want_id) {
                Incoming::Answer(message.clone())
            } else {
                Incoming::Other
            }
        }
        _ => Incoming::NotJsonRpc,
    }
}

/// Whether `id` answers `want_id`. A sloppy server that turns toolgauge's numeric id
/// into a string (`"7"` for `7`) still answers that request, as over stdio.
fn same_id(id: &Value, want_id: &Value) -> bool {
    id == want_id
        || want_id
            .as_u64()
            .is_some_and(|n| id.as_str().and_then(|s| s.parse::<u64>().ok()) == Some(n))
}

/// The first message in `body` (one object, or a batch array) that answers `want_id`,
/// plus the server requests found on the way (in order, whole: an elicitation's answer
/// depends on its params).
pub fn scan(body: &Value, want_id: &Value) -> (Option<Value>, Vec<Value>) {
    let items: Vec<&Value> = match body {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut requests = Vec::new();
    for item in items {
        match classify(item, want_id) {
            Incoming::Answer(v) => return (Some(v), requests),
            Incoming::ServerRequest { .. } => requests.push(item.clone()),
            Incoming::Other | Incoming::NotJsonRpc => {}
        }
    }
    (None, requests)
}

/// A JSON-RPC error object in `body` (any id, `null` included), re-addressed to
/// `want_id`: servers reject a request before reading its id and answer `id: null`,
/// and the client matches answers by id.
pub fn error_for(body: &Value, want_id: &Value) -> Option<Value> {
    let error = body.as_object()?.get("error")?;
    if !error.is_object() || body.get("result").is_some() {
        return None;
    }
    Some(json!({"jsonrpc": "2.0", "id": want_id, "error": error}))
}

/// The first `max` characters of `text` (on a character boundary), with `…` when cut,
/// whitespace runs collapsed so an HTML error page fits on one line.
pub fn excerpt(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(empty body)".to_string();
    }
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_sorted_by_role() {
        let id = json!(7);
        let answer = json!({"jsonrpc":"2.0","id":7,"result":{"tools":[]}});
        assert_eq!(classify(&answer, &id), Incoming::Answer(answer.clone()));
        let err = json!({"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"x"}});
        assert_eq!(classify(&err, &id), Incoming::Answer(err.clone()));
        // A numeric id that came back as a string still matches; another does not.
        let as_text = json!({"jsonrpc":"2.0","id":"7","result":{}});
        assert_eq!(classify(&as_text, &id), Incoming::Answer(as_text.clone()));
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":"8","result":{}}), &id),
            Incoming::Other
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":"x7","result":{}}), &json!("x")),
            Incoming::Other
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":"s1","method":"ping"}), &id),
            Incoming::ServerRequest {
                id: json!("s1"),
                method: "ping".into()
            }
        );
        assert_eq!(
            classify(
                &json!({"jsonrpc":"2.0","method":"notifications/message","params":{}}),
                &id
            ),
            Incoming::Other
        );
        assert_eq!(classify(&json!([1]), &id), Incoming::NotJsonRpc);
        assert_eq!(classify(&json!({"hello":1}), &id), Incoming::NotJsonRpc);
    }

    #[test]
    fn a_batch_is_scanned_in_order() {
        let body = json!([
            {"jsonrpc":"2.0","id":1,"method":"ping"},
            {"jsonrpc":"2.0","method":"notifications/progress"},
            {"jsonrpc":"2.0","id":2,"result":{"ok":true}}
        ]);
        let (answer, requests) = scan(&body, &json!(2));
        assert_eq!(
            answer,
            Some(json!({"jsonrpc":"2.0","id":2,"result":{"ok":true}}))
        );
        assert_eq!(
            requests,
            vec![json!({"jsonrpc":"2.0","id":1,"method":"ping"})]
        );
        assert_eq!(scan(&body, &json!(3)).0, None);
    }

    #[test]
    fn errors_are_readdressed() {
        let body =
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}});
        assert_eq!(
            error_for(&body, &json!(4)),
            Some(json!({"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"Bad Request"}}))
        );
        assert_eq!(error_for(&json!({"error":"text"}), &json!(4)), None);
    }

    #[test]
    fn excerpts_are_short_and_flat() {
        assert_eq!(
            excerpt("<html>\n  <body>oops</body>\n</html>", 100),
            "<html> <body>oops</body> </html>"
        );
        assert_eq!(excerpt("héllo wörld", 4), "héll…");
        assert_eq!(excerpt("  \n", 10), "(empty body)");
    }
}
