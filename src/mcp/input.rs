//! Answering a 2026-07-28 `input_required` result (multi-round-trip requests): the
//! server's `inputRequests` (elicitation, sampling, roots) are answered by the suite's
//! [`InputPolicy`], never by a person and never by a model.

use serde_json::{Map, Value, json};

use super::client::InputPolicy;

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
            "elicitation/create" => {
                let url_mode = req
                    .get("params")
                    .and_then(|p| p.get("mode"))
                    .and_then(Value::as_str)
                    == Some("url");
                match policy {
                    InputPolicy::Accept(content) if !url_mode => {
                        json!({"action": "accept", "content": content})
                    }
                    _ => json!({"action": "decline"}),
                }
            }
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
