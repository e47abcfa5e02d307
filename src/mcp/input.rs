//! Answering a 2026-07-28 `input_required` result (multi-round-trip requests), and a
//! legacy server's own requests (elicitation, ping) sent while a call is pending: the
//! server's questions are answered by the suite's [`InputPolicy`], never by a person and
//! never by a model.

use serde_json::{Map, Value, json};

use super::InputPolicy;
use super::jsonrpc;

/// How one round is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundAnswer {
    /// Send these `inputResponses` (keyed like the requests).
    Responses(Map<String, Value>),
    /// Do not answer: the call ends as a tool error with this text.
    Refused(String),
}

/// Answer `requests` (the `inputRequests` object) by `policy`.
///
/// Refuse answers nothing. Decline declines every elicitation; Accept accepts form
/// elicitations with its content and declines URL ones (nobody will open the page).
/// Both answer `roots/list` with no roots (the test grants none) and refuse sampling
/// (toolgauge has no model of its own to lend the server), as they refuse methods
/// they do not know.
pub fn answer(requests: &Map<String, Value>, policy: &InputPolicy) -> RoundAnswer {
    if let InputPolicy::Refuse = policy {
        let asked: Vec<String> = requests.values().map(describe).collect();
        return RoundAnswer::Refused(format!(
            "the server asked for input that the test does not give ({}); set an input policy that declines or accepts to answer it",
            asked.join("; ")
        ));
    }
    let mut out = Map::new();
    for (key, req) in requests {
        let method = req.get("method").and_then(Value::as_str).unwrap_or("");
        let response = match method {
            "elicitation/create" => elicitation_result(req.get("params"), policy),
            "roots/list" => json!({"roots": []}),
            "sampling/createMessage" => {
                return RoundAnswer::Refused(format!(
                    "the server asked the client's model for a completion ({}), which toolgauge does not give",
                    describe(req)
                ));
            }
            _ => {
                return RoundAnswer::Refused(format!(
                    "the server asked for input toolgauge does not know how to give ({})",
                    describe(req)
                ));
            }
        };
        out.insert(key.clone(), response);
    }
    RoundAnswer::Responses(out)
}

/// The result of one elicitation by `policy` (not Refuse): Accept answers a form
/// elicitation with its content, completed by the `default` of every `requestedSchema`
/// property the content leaves out (SEP-1034: a client that accepts applies the
/// defaults the user did not override); a URL elicitation and Decline are declined.
fn elicitation_result(params: Option<&Value>, policy: &InputPolicy) -> Value {
    let url_mode = params.and_then(|p| p.get("mode")).and_then(Value::as_str) == Some("url");
    match policy {
        InputPolicy::Accept(content) if !url_mode => {
            let mut content = content.clone();
            let properties = params
                .and_then(|p| p.get("requestedSchema"))
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            for (name, property) in properties.into_iter().flatten() {
                if let Some(default) = property.get("default")
                    && !content.contains_key(name)
                {
                    content.insert(name.clone(), default.clone());
                }
            }
            json!({"action": "accept", "content": content})
        }
        _ => json!({"action": "decline"}),
    }
}

/// The JSON-RPC response to a request the server sent on its own (legacy era: on an
/// event stream or stdout, while a call is pending or not). `ping` gets an empty
/// result, as the spec requires; `elicitation/create` is answered by `policy` when it
/// answers elicitations (the client then declared the capability in `initialize`);
/// anything else, Refuse's elicitations included, gets -32601, since the client offers
/// no such capability and must never leave the server waiting.
pub fn answer_server_request(request: &Value, policy: &InputPolicy) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    match method {
        "ping" => jsonrpc::result_response(&id, json!({})),
        "elicitation/create" if answers_elicitation(policy) => {
            jsonrpc::result_response(&id, elicitation_result(request.get("params"), policy))
        }
        _ => jsonrpc::error_response(
            &id,
            jsonrpc::METHOD_NOT_FOUND,
            &format!("toolgauge's MCP client does not serve `{method}`"),
        ),
    }
}

/// Whether `policy` answers elicitations (so the client declares the capability).
pub fn answers_elicitation(policy: &InputPolicy) -> bool {
    !matches!(policy, InputPolicy::Refuse)
}

/// One request in words: its method and, for an elicitation, its message.
fn describe(req: &Value) -> String {
    let method = match req.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(other) => other.to_string(),
        None => "a request without a method".into(),
    };
    match req
        .get("params")
        .and_then(|p| p.get("message"))
        .and_then(Value::as_str)
    {
        Some(msg) if method == "elicitation/create" => {
            format!("{method}: \"{}\"", super::jsonrpc::excerpt(msg, 200))
        }
        _ => method,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn elicit(msg: &str) -> Value {
        json!({"method": "elicitation/create", "params": {"message": msg, "requestedSchema": {"type": "object", "properties": {}}}})
    }

    #[test]
    fn refuse_names_what_was_asked() {
        let r = answer(
            &requests(json!({"c": elicit("Delete r1?")})),
            &InputPolicy::Refuse,
        );
        assert_eq!(
            r,
            RoundAnswer::Refused(
                "the server asked for input that the test does not give (elicitation/create: \"Delete r1?\"); set an input policy that declines or accepts to answer it".into()
            )
        );
    }

    #[test]
    fn decline_and_accept_answer_every_key() {
        let reqs = requests(json!({
            "a": elicit("ok?"),
            "u": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}},
            "r": {"method": "roots/list"},
        }));
        assert_eq!(
            answer(&reqs, &InputPolicy::Decline),
            RoundAnswer::Responses(requests(json!({
                "a": {"action": "decline"},
                "u": {"action": "decline"},
                "r": {"roots": []},
            })))
        );
        let content = requests(json!({"confirm": true}));
        assert_eq!(
            answer(&reqs, &InputPolicy::Accept(content)),
            RoundAnswer::Responses(requests(json!({
                "a": {"action": "accept", "content": {"confirm": true}},
                "u": {"action": "decline"},
                "r": {"roots": []},
            })))
        );
    }

    #[test]
    fn accept_fills_the_defaults_the_content_lacks() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"},
        }});
        let reqs = requests(json!({"e": {"method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": schema}}}));
        // The policy's own `name` wins over the default; `note` has no default.
        let content = requests(json!({"name": "Ada"}));
        assert_eq!(
            answer(&reqs, &InputPolicy::Accept(content.clone())),
            RoundAnswer::Responses(requests(json!({
                "e": {"action": "accept", "content": {"name": "Ada", "age": 30, "verified": true}},
            })))
        );
        // The legacy path (a server request on a stream) answers the same way.
        let req = json!({"jsonrpc": "2.0", "id": 4, "method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": schema}});
        assert_eq!(
            answer_server_request(&req, &InputPolicy::Accept(content)),
            json!({"jsonrpc": "2.0", "id": 4, "result":
                {"action": "accept", "content": {"name": "Ada", "age": 30, "verified": true}}})
        );
    }

    #[test]
    fn server_requests_are_answered_by_policy() {
        let elicit = json!({"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
        assert_eq!(
            answer_server_request(&elicit, &InputPolicy::Decline),
            json!({"jsonrpc": "2.0", "id": "s1", "result": {"action": "decline"}})
        );
        assert_eq!(
            answer_server_request(&elicit, &InputPolicy::Refuse)["error"]["code"],
            -32601
        );
        let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
        assert_eq!(
            answer_server_request(&ping, &InputPolicy::Refuse),
            json!({"jsonrpc": "2.0", "id": 2, "result": {}})
        );
        // Legacy `roots/list`: the client declares no `roots` capability, so the method
        // is not found (the 2026 era's `input_required` gets an empty list instead).
        let roots = json!({"jsonrpc": "2.0", "id": 4, "method": "roots/list"});
        assert_eq!(
            answer_server_request(&roots, &InputPolicy::Accept(Map::new()))["error"]["code"],
            -32601
        );
        let sampling = json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage"});
        assert_eq!(
            answer_server_request(&sampling, &InputPolicy::Accept(Map::new()))["error"]["code"],
            -32601
        );
    }

    #[test]
    fn sampling_and_unknown_requests_are_refused() {
        let s = requests(json!({"s": {"method": "sampling/createMessage", "params": {}}}));
        assert!(
            matches!(answer(&s, &InputPolicy::Decline), RoundAnswer::Refused(t) if t.contains("sampling/createMessage"))
        );
        let u = requests(json!({"x": {"method": "tasks/get"}}));
        assert!(
            matches!(answer(&u, &InputPolicy::Accept(Map::new())), RoundAnswer::Refused(t) if t.contains("tasks/get"))
        );
    }
}
