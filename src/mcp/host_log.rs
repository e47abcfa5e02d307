//! What a trial record keeps of one tool call an MCP server host handled: the exchanges
//! with the server during the call, verbatim (JSON-RPC lines as sent and received, the
//! server's stderr lines), how its requests for input were answered, and why the call
//! was refused when it was not executed.
//!
//! The record types themselves ([`McpCallLog`] and its parts) are defined with the tool
//! results that carry them, in [`crate::tools::call_log`]; this module fills them from
//! the client's own log.

use serde_json::Value;

pub use crate::tools::call_log::{InputRound, LoggedExchange, McpCallLog};

use super::client::InputAnswer;
use super::transport::{Direction, Exchange};

impl From<&InputAnswer> for InputRound {
    fn from(a: &InputAnswer) -> InputRound {
        InputRound {
            round: a.round,
            by: a.by.clone(),
            answers: a.answers.clone(),
        }
    }
}

impl From<&Exchange> for LoggedExchange {
    fn from(e: &Exchange) -> LoggedExchange {
        let direction = match e.direction {
            Direction::Sent => "sent",
            Direction::Received => "received",
            Direction::Stderr => "stderr",
            Direction::Note => "note",
        };
        LoggedExchange {
            at_ms: e.at_ms,
            direction: direction.to_string(),
            text: e.text.clone(),
        }
    }
}

/// The entries of `window` (what the connection logged while a call of `tool` with
/// `arguments` was in flight) that belong to that call.
///
/// One connection may carry other calls at the same time (the turn's other calls, other
/// trials on a suite-wide connection), so the window is filtered by JSON-RPC id: the
/// call's own requests are the `tools/call` requests of this tool with these arguments
/// (its `input_required` retries carry the same ones; the host lets identical calls on
/// one connection take turns, so no other call sends those). Requests with other ids,
/// and responses to them (also to requests sent before the window), are left out.
/// Everything else is kept: the server's own requests and notifications, the client's
/// answers to them, stderr lines and client notes, which can not be told apart per call
/// and are better shown twice than lost.
pub fn call_exchanges(
    window: &[Exchange],
    tool: &str,
    arguments: &serde_json::Map<String, Value>,
) -> Vec<LoggedExchange> {
    let parsed: Vec<Option<Value>> = window
        .iter()
        .map(|e| match e.direction {
            Direction::Sent | Direction::Received => serde_json::from_str(&e.text).ok(),
            _ => None,
        })
        .collect();
    let no_args = serde_json::Map::new();
    let own: Vec<&Value> = window
        .iter()
        .zip(&parsed)
        .filter_map(|(e, v)| {
            let v = v.as_ref().filter(|_| e.direction == Direction::Sent)?;
            if v.get("method").and_then(Value::as_str) != Some("tools/call") {
                return None;
            }
            let params = v.get("params")?;
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .unwrap_or(&no_args);
            let same =
                params.get("name").and_then(Value::as_str) == Some(tool) && args == arguments;
            same.then(|| v.get("id")).flatten()
        })
        .collect();
    window
        .iter()
        .zip(&parsed)
        .filter(|(e, v)| {
            let Some(v) = v else { return true };
            let Some(id) = v.get("id") else { return true };
            let has_method = v.get("method").is_some();
            // Our requests and the server's responses are per call; the server's
            // requests and our answers to them are not.
            let per_call = match e.direction {
                Direction::Sent => has_method,
                Direction::Received => !has_method,
                _ => false,
            };
            !per_call || own.contains(&id)
        })
        .map(|(e, _)| LoggedExchange::from(e))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ex(direction: Direction, text: &str) -> Exchange {
        Exchange {
            at_ms: 0.0,
            direction,
            text: text.to_string(),
        }
    }

    #[test]
    fn other_calls_on_the_same_connection_are_left_out_with_their_answers() {
        let window = vec![
            // The answer to a request sent before the call began.
            ex(
                Direction::Received,
                r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
            ),
            ex(
                Direction::Sent,
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
            ),
            ex(
                Direction::Sent,
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","arguments":{"a":5,"b":5}}}"#,
            ),
            ex(Direction::Stderr, "processing request"),
            ex(
                Direction::Received,
                r#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"10"}]}}"#,
            ),
            ex(
                Direction::Received,
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            ),
            ex(
                Direction::Received,
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3"}]}}"#,
            ),
        ];
        let args = json!({"b": 2, "a": 1}).as_object().unwrap().clone();
        let got: Vec<String> = call_exchanges(&window, "add", &args)
            .into_iter()
            .map(|e| format!("{}: {}", e.direction, e.text))
            .collect();
        assert_eq!(
            got,
            vec![
                format!("sent: {}", window[1].text),
                "stderr: processing request".to_string(),
                format!("received: {}", window[5].text),
                format!("received: {}", window[6].text),
            ]
        );
    }
}
