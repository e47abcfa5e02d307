//! The neutral request and response every provider speaks.
//!
//! Providers translate these to and from their wire formats. The conversation types
//! live in the leaf module [`crate::chat`] and are re-exported here, so code written
//! against `provider::types` keeps compiling.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::chat::{
    AssistantTurn, Message, ToolCall, ToolChoice, ToolDefinition, ToolResult, Usage,
    assigned_call_id,
};

/// What a provider is asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered, with the variant's descriptions. Shared: every trial of a
    /// variant sends the same definitions, and providers may cache work per definition set.
    pub tools: Arc<Vec<ToolDefinition>>,
    /// The tool_choice mode.
    pub tool_choice: ToolChoice,
}

/// What a provider answered.
///
/// Read back from a file (a cassette, a trial journal), the usage is checked like a
/// server's ([`super::usage`]): an implausible count drops the usage with a warning
/// instead of failing the whole file or entering a sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredResponse")]
pub struct Response {
    /// The text answer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Token usage as reported by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the request in milliseconds.
    #[serde(default)]
    pub latency_ms: f64,
    /// The provider's stop reason, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The provider's opaque state for this turn, to be sent back verbatim with it
    /// ([`AssistantTurn::state`]); `None` when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// The provider's raw response body (live calls only; stored in cassettes, not in
    /// trial records), so a parser fix can re-score a recorded run.
    #[serde(skip)]
    pub raw: Option<Value>,
    /// HTTP attempts the response took (1 when the first succeeded; 0 when replayed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// What was wrong with the answer but did not stop it being scored, e.g. an
    /// implausible usage that was ignored (and counted offline instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How a streamed answer arrived (time to first token and to the first tool-call
    /// byte); absent for answers that were not streamed, so their lines are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamTiming>,
}

/// The timing of a streamed answer, measured from the start of the successful attempt
/// (the same origin as [`Response::latency_ms`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamTiming {
    /// Milliseconds to the first event carrying output: a text fragment or any part of
    /// a tool call. Absent when the answer had no output at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<f64>,
    /// Milliseconds to the first byte of a tool call (its name, id or first argument
    /// fragment). Absent when the answer made no call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_tool_byte_ms: Option<f64>,
    /// Server-sent events read, keep-alives included.
    #[serde(default)]
    pub events: u32,
}

/// A [`Response`] as stored in a file, its usage not yet checked.
#[derive(Deserialize)]
struct StoredResponse {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    latency_ms: f64,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    state: Option<Value>,
    #[serde(default)]
    attempts: u32,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    stream: Option<StreamTiming>,
}

impl From<StoredResponse> for Response {
    fn from(s: StoredResponse) -> Response {
        let mut response = Response {
            text: s.text,
            tool_calls: s.tool_calls,
            usage: None,
            latency_ms: s.latency_ms,
            finish_reason: s.finish_reason,
            state: s.state,
            raw: None,
            attempts: s.attempts,
            warnings: s.warnings,
            stream: s.stream,
        };
        stored_usage(s.usage.as_ref()).apply(&mut response, "a stored response");
        response
    }
}

/// A stored usage `{input_tokens, output_tokens, estimated}` with the optional detail
/// counts (`cached_input_tokens`, `cache_write_tokens`, `reasoning_tokens`: absent is
/// 0), checked: a bad count, or details that do not fit in their totals, drop it.
fn stored_usage(usage: Option<&Value>) -> super::usage::UsageReading {
    use super::usage::{Details, UsageReading, count, with_details};
    let Some(usage) = usage.filter(|u| !u.is_null()) else {
        return UsageReading::Absent;
    };
    let Some(obj) = usage.as_object() else {
        return UsageReading::Implausible(format!("`usage` is {usage}, not an object"));
    };
    let field = |name: &str| match count(obj.get(name), name) {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err(format!("`usage` has no `{name}`")),
        Err(e) => Err(e),
    };
    let totals = match (field("input_tokens"), field("output_tokens")) {
        (Ok(input_tokens), Ok(output_tokens)) => UsageReading::Counted(Usage {
            input_tokens,
            output_tokens,
            estimated: obj.get("estimated").and_then(Value::as_bool) == Some(true),
            ..Default::default()
        }),
        (Err(a), Err(b)) => UsageReading::Implausible(format!("{a}; {b}")),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
    };
    let detail = |name: &str| count(obj.get(name), name);
    with_details(
        totals,
        Details {
            cached_input: detail("cached_input_tokens"),
            cache_write: detail("cache_write_tokens"),
            reasoning: detail("reasoning_tokens"),
        },
    )
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Response {
    /// The assistant turn this answer adds to the conversation: text, calls and the
    /// provider state to send back.
    pub fn turn(&self) -> AssistantTurn {
        AssistantTurn {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
            state: self.state.clone(),
        }
    }

    /// This answer as the assistant message of the next request.
    pub fn to_message(&self) -> Message {
        self.turn().into()
    }

    /// Give every call without an id (or with an empty one) the id
    /// [`assigned_call_id`]`(round, index)`, `round` being the number of assistant turns
    /// already in the conversation; ids the provider sent are kept, except the repeats
    /// of an id an earlier call of the same answer already has, which are assigned one
    /// too: some compatible servers give parallel calls one shared id, and then neither
    /// the results can be told apart nor will the server take them back (it refuses a
    /// repeated `tool_call_id`).
    pub fn assign_missing_ids(&mut self, round: usize) {
        for i in 0..self.tool_calls.len() {
            let (earlier, rest) = self.tool_calls.split_at_mut(i);
            let call = &mut rest[0];
            let repeated = call
                .id
                .as_deref()
                .is_some_and(|id| earlier.iter().any(|e| e.id.as_deref() == Some(id)));
            if repeated || call.id.as_deref().is_none_or(str::is_empty) {
                call.id = Some(assigned_call_id(round, i));
            }
        }
    }

    /// Give every call whose id an earlier turn of the conversation already used (`used`:
    /// the ids of its earlier calls and results) an id of its own, and return the index
    /// and the old id of each call renamed. A tool result is paired with its call by id,
    /// so a reused id (`c1` in round 1 and again in round 2) is sent back twice and real
    /// APIs pair the results with the wrong call, or refuse them.
    ///
    /// The new id is [`assigned_call_id`]`(round, index)`, as for a repeat within one
    /// answer ([`Response::assign_missing_ids`], which runs first), with `_2`, `_3`, ...
    /// added while that is taken too (by an earlier turn, or by another call of this
    /// answer): no two calls of the conversation end up sharing one.
    pub fn rename_reused_ids(&mut self, round: usize, used: &[&str]) -> Vec<(usize, String)> {
        let mut renamed = Vec::new();
        for i in 0..self.tool_calls.len() {
            let Some(id) = self.tool_calls[i].id.clone() else {
                continue;
            };
            if !used.contains(&id.as_str()) {
                continue;
            }
            let base = assigned_call_id(round, i);
            let taken = |candidate: &str| {
                used.contains(&candidate)
                    || self
                        .tool_calls
                        .iter()
                        .any(|c| c.id.as_deref() == Some(candidate))
            };
            let mut fresh = base.clone();
            let mut n = 1;
            while taken(&fresh) {
                n += 1;
                fresh = format!("{base}_{n}");
            }
            self.tool_calls[i].id = Some(fresh);
            renamed.push((i, id));
        }
        renamed
    }
}

/// The JSON object an error result is sent as where the wire has no error flag
/// (OpenAI's content, Gemini's `functionResponse.response`): content that is already
/// an object with an `error` key goes as it is; other JSON is wrapped as
/// `{"error": value}`, and text that is not JSON as `{"error": "text"}`.
pub fn error_object(content: &str) -> Value {
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(obj)) if obj.contains_key("error") => Value::Object(obj),
        Ok(value) => serde_json::json!({ "error": value }),
        Err(_) => serde_json::json!({ "error": content }),
    }
}

/// Whether `content` already is a JSON object with an `error` key.
pub fn is_error_object(content: &str) -> bool {
    matches!(serde_json::from_str::<Value>(content), Ok(Value::Object(obj)) if obj.contains_key("error"))
}

impl Request {
    /// How many assistant turns the conversation already holds: the round an answer to
    /// this request belongs to, counted from 0.
    pub fn round(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_usage_is_checked_on_reading() {
        let read = |usage: &str| -> Response {
            serde_json::from_str(&format!(r#"{{"text": "hi", "usage": {usage}}}"#)).unwrap()
        };
        let r = read(r#"{"input_tokens": 12, "output_tokens": 3, "estimated": true}"#);
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 3,
                estimated: true,
                ..Default::default()
            })
        );
        assert!(r.warnings.is_empty());
        // Each of these once failed the whole file or entered a sum as 2^64 - 1.
        for (usage, why) in [
            (
                r#"{"input_tokens": 1, "output_tokens": -5}"#,
                "`output_tokens` is -5",
            ),
            (
                r#"{"input_tokens": 1e30, "output_tokens": 1}"#,
                "`input_tokens` is 1e+30",
            ),
            (
                r#"{"input_tokens": 18446744073709551615, "output_tokens": 1}"#,
                "`input_tokens` is 18446744073709551615, above the cap",
            ),
            (r#"{"input_tokens": 1}"#, "`usage` has no `output_tokens`"),
            (r#""lots""#, "`usage` is \"lots\", not an object"),
        ] {
            let r = read(usage);
            assert_eq!(r.usage, None, "{usage}");
            assert_eq!(r.text.as_deref(), Some("hi"));
            assert_eq!(r.warnings.len(), 1, "{usage}");
            assert!(
                r.warnings[0].starts_with("implausible usage from a stored response ignored: ")
                    && r.warnings[0].contains(why),
                "{usage}: {:?}",
                r.warnings
            );
        }
        assert_eq!(read("null").usage, None);
        assert!(read("null").warnings.is_empty());
    }

    #[test]
    fn a_stored_state_reads_back_and_is_absent_when_none() {
        let r: Response = serde_json::from_str(
            r#"{"tool_calls": [{"name": "f", "arguments": "{}"}], "state": {"gemini": {"parts": []}}}"#,
        )
        .unwrap();
        assert_eq!(r.state, Some(serde_json::json!({"gemini": {"parts": []}})));
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.contains(r#""state":{"gemini":{"parts":[]}}"#),
            "{text}"
        );
        let plain = Response {
            text: Some("hi".into()),
            ..Response::default()
        };
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"text":"hi","latency_ms":0.0}"#
        );
    }

    #[test]
    fn ids_an_earlier_turn_used_are_renamed_without_colliding() {
        let call = |id: &str| ToolCall {
            id: Some(id.to_string()),
            name: "f".into(),
            arguments: "{}".into(),
        };
        let ids = |r: &Response| -> Vec<String> {
            r.tool_calls.iter().map(|c| c.id.clone().unwrap()).collect()
        };
        // `c1` was used in the first answer; the second (one assistant turn before it)
        // reuses it: the repeat gets the id a repeat within one answer would get.
        let mut r = Response {
            tool_calls: vec![call("c1"), call("c2")],
            ..Response::default()
        };
        assert_eq!(r.rename_reused_ids(1, &["c1"]), vec![(0, "c1".to_string())]);
        assert_eq!(ids(&r), ["call_r1_0", "c2"]);
        // The assigned id is taken too, by an earlier turn and by another call of this
        // answer: suffixes until it is free.
        let mut r = Response {
            tool_calls: vec![call("c1"), call("call_r1_0_2")],
            ..Response::default()
        };
        r.rename_reused_ids(1, &["c1", "call_r1_0"]);
        assert_eq!(ids(&r), ["call_r1_0_3", "call_r1_0_2"]);
        // Nothing reused, nothing renamed.
        let mut r = Response {
            tool_calls: vec![call("c3")],
            ..Response::default()
        };
        assert!(r.rename_reused_ids(2, &["c1", "c2"]).is_empty());
        assert_eq!(ids(&r), ["c3"]);
    }

    #[test]
    fn missing_ids_are_assigned_by_round_and_position() {
        let call = |id: Option<&str>| ToolCall {
            id: id.map(str::to_string),
            name: "f".into(),
            arguments: "{}".into(),
        };
        let mut r = Response {
            tool_calls: vec![call(None), call(Some("g1")), call(Some(""))],
            state: Some(serde_json::json!({"gemini": {}})),
            ..Response::default()
        };
        r.assign_missing_ids(3);
        let ids: Vec<_> = r.tool_calls.iter().map(|c| c.id.clone().unwrap()).collect();
        assert_eq!(ids, ["call_r3_0", "g1", "call_r3_2"]);
        // A repeated id keeps its first call; the repeats get assigned ones.
        let mut shared = Response {
            tool_calls: vec![
                call(Some("x")),
                call(Some("x")),
                call(None),
                call(Some("x")),
            ],
            ..Response::default()
        };
        shared.assign_missing_ids(1);
        let ids: Vec<_> = shared
            .tool_calls
            .iter()
            .map(|c| c.id.clone().unwrap())
            .collect();
        assert_eq!(ids, ["x", "call_r1_1", "call_r1_2", "call_r1_3"]);
        match r.to_message() {
            Message::Assistant {
                content,
                tool_calls,
                state,
            } => {
                assert_eq!(content, None);
                assert_eq!(tool_calls, r.tool_calls);
                assert_eq!(state, r.state);
            }
            other => panic!("{other:?}"),
        }
        let request = Request {
            messages: vec![
                Message::User {
                    content: "q".into(),
                },
                r.to_message(),
                Message::from(ToolResult {
                    call_id: "call_r3_0".into(),
                    name: "f".into(),
                    content: "1".into(),
                    is_error: false,
                }),
            ],
            tools: Arc::new(vec![]),
            tool_choice: ToolChoice::Auto,
        };
        assert_eq!(request.round(), 1);
    }

    #[test]
    fn stored_detail_counts_round_trip_and_are_checked() {
        let u = Usage {
            cached_input_tokens: 800,
            cache_write_tokens: 100,
            reasoning_tokens: 20,
            ..Usage::new(1000, 50)
        };
        let r = Response {
            usage: Some(u),
            ..Response::default()
        };
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(
            line,
            r#"{"usage":{"input_tokens":1000,"output_tokens":50,"cached_input_tokens":800,"cache_write_tokens":100,"reasoning_tokens":20},"latency_ms":0.0}"#
        );
        let back: Response = serde_json::from_str(&line).unwrap();
        assert_eq!(back.usage, Some(u));
        // Without details a usage is written as before.
        let plain = Response {
            usage: Some(Usage::new(3, 4)),
            ..Response::default()
        };
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"usage":{"input_tokens":3,"output_tokens":4},"latency_ms":0.0}"#
        );
        // An edited file whose details do not fit, or are no counts, loses the usage
        // with a warning (as a bad total does).
        for (usage, why) in [
            (
                r#"{"input_tokens": 10, "output_tokens": 1, "cached_input_tokens": 8, "cache_write_tokens": 3}"#,
                "8 cached and 3 cache-write input tokens are more than the 10 input tokens",
            ),
            (
                r#"{"input_tokens": 10, "output_tokens": 1, "reasoning_tokens": 1e30}"#,
                "`reasoning_tokens` is 1e+30, above the cap",
            ),
        ] {
            let r: Response = serde_json::from_str(&format!(r#"{{"usage": {usage}}}"#)).unwrap();
            assert_eq!(r.usage, None, "{usage}");
            assert!(r.warnings[0].contains(why), "{:?}", r.warnings);
        }
    }
}
