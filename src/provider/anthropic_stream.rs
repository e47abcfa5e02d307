//! Anthropic's streamed Messages answer (`"stream": true`), assembled into the message
//! the non-streamed API would have returned and read by the same parser
//! ([`AnthropicProvider::parse_response`]), so text, calls, ids, stop reason, usage and
//! state are what a non-streamed answer gives.
//!
//! The documented sequence: `message_start` (the message with empty `content`, its id,
//! model and first usage), then per content block `content_block_start` (the block; a
//! `tool_use` block has `input: {}`), `content_block_delta`s and `content_block_stop`,
//! then `message_delta` (stop reason, cumulative usage), then `message_stop`, the
//! terminal event. `ping` events may come anywhere. Deltas:
//! - `text_delta.text` is appended to a `text` block;
//! - `input_json_delta.partial_json` fragments of a block with an `input` (`tool_use`,
//!   `server_tool_use`, …) are concatenated byte for byte; the first may be `""`. The
//!   concatenation is the call's raw arguments, exactly as sent (the non-streamed API
//!   sends a JSON value instead, written compactly: the two agree byte for byte when the
//!   fragments are compact JSON, and as JSON values always). The block's `input` in the
//!   state is the parsed value; a block with no fragment, or only empty ones, keeps the
//!   `input` it started with (`{}`);
//! - `thinking_delta.thinking` is appended to a `thinking` block and
//!   `signature_delta.signature` sets its signature; `citations_delta.citation` is
//!   appended to the block's `citations`;
//! - other delta types are skipped, as the non-streamed parser skips block types it
//!   does not know.
//!
//! `message_delta.usage` is cumulative: its non-null counts replace those of
//! `message_start` (`output_tokens` always, input and cache counts when sent), and its
//! `delta` fields (`stop_reason`, `stop_sequence`, `container`) are set on the message.
//! Unknown event types are skipped (Anthropic says new ones may be added). An `error`
//! event inside the 200 stream (`overloaded_error`, …) ends the answer as an error
//! naming its type and message. A body that ends before `message_stop`, an event whose
//! data is not a JSON object, a delta for a block that is not open or that does not fit
//! the block (text into a `tool_use`), and events out of order are errors: the trial
//! is an error with the reason, never a shortened answer.

use serde_json::{Map, Value};

use super::Response;
use super::anthropic::{AnthropicProvider, api_error};
use super::stream::{Assembler, Marks, SseEvent, Step};
use crate::util::json_kind::json_kind;

/// One content block as it grows.
#[derive(Debug)]
struct Block {
    /// The block from `content_block_start`, its text, thinking, signature and
    /// citations grown by the deltas.
    value: Map<String, Value>,
    /// The `input_json_delta` fragments, concatenated.
    json: String,
    /// Whether `content_block_stop` arrived.
    closed: bool,
}

impl Block {
    fn kind(&self) -> &str {
        self.value.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The block as the non-streamed API gives it: `input` parsed from the fragments.
    fn into_value(mut self) -> Value {
        if !self.json.trim().is_empty() {
            // Arguments that are not JSON stay visible as text in the state; the raw
            // arguments of the call keep them byte for byte either way.
            let input = serde_json::from_str(&self.json).unwrap_or(Value::String(self.json));
            self.value.insert("input".into(), input);
        }
        Value::Object(self.value)
    }
}

/// Reads an Anthropic event stream, one event at a time, as the provider's assembler for the
/// shared stream reader ([`super::stream`]); [`assemble`] reads recorded events.
#[derive(Debug, Default)]
pub struct AnthropicAssembler {
    /// The message from `message_start`, without its content, updated by
    /// `message_delta`.
    message: Option<Map<String, Value>>,
    blocks: Vec<Block>,
    /// The text of an `error` event.
    error: Option<String>,
    /// The type of the last event, for the message of a stream that ended early.
    last: Option<String>,
}

impl AnthropicAssembler {
    /// An assembler that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The open block at `index` of a delta or stop event.
    fn open_block(&mut self, data: &Map<String, Value>, what: &str) -> Result<&mut Block, String> {
        let index = index(data)?;
        let count = self.blocks.len();
        match self.blocks.get_mut(index) {
            Some(block) if !block.closed => Ok(block),
            Some(_) => Err(format!(
                "{what} for content block {index}, which was already stopped"
            )),
            None => Err(format!(
                "{what} for content block {index}, which was never started ({count} started)"
            )),
        }
    }

    fn message_start(&mut self, data: &Map<String, Value>) -> Result<Step, String> {
        if self.message.is_some() {
            return Err("a second `message_start`".into());
        }
        let Some(Value::Object(message)) = data.get("message") else {
            return Err("`message_start` without a `message` object".into());
        };
        let mut message = message.clone();
        // The content is normally empty; blocks already in it count as whole.
        if let Some(Value::Array(content)) = message.shift_remove("content") {
            for block in content {
                let Value::Object(value) = block else {
                    return Err(format!(
                        "`message.content` holds {}, not a block object",
                        json_kind(&block)
                    ));
                };
                self.blocks.push(Block {
                    value,
                    json: String::new(),
                    closed: true,
                });
            }
        }
        self.message = Some(message);
        Ok(Step::More)
    }

    fn block_start(
        &mut self,
        data: &Map<String, Value>,
        marks: &mut Marks,
    ) -> Result<Step, String> {
        let index = index(data)?;
        if index != self.blocks.len() {
            return Err(format!(
                "`content_block_start` for block {index}, but the next block is {}",
                self.blocks.len()
            ));
        }
        let Some(Value::Object(value)) = data.get("content_block") else {
            return Err("`content_block_start` without a `content_block` object".into());
        };
        let block = Block {
            value: value.clone(),
            json: String::new(),
            closed: false,
        };
        match block.kind() {
            "tool_use" => marks.tool(),
            "text"
                if block
                    .value
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty()) =>
            {
                marks.token()
            }
            _ => {}
        }
        self.blocks.push(block);
        Ok(Step::More)
    }

    fn block_delta(
        &mut self,
        data: &Map<String, Value>,
        marks: &mut Marks,
    ) -> Result<Step, String> {
        let block = self.open_block(data, "`content_block_delta`")?;
        let Some(Value::Object(delta)) = data.get("delta") else {
            return Err("`content_block_delta` without a `delta` object".into());
        };
        let Some(kind) = delta.get("type").and_then(Value::as_str) else {
            return Err("a `delta` without a `type`".into());
        };
        let block_kind = block.kind().to_string();
        let fits = |ok: bool| -> Result<(), String> {
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "a `{kind}` for content block {}, a `{block_kind}` block",
                    index(data).unwrap_or_default()
                ))
            }
        };
        let field = |name: &str| -> Result<&Value, String> {
            delta
                .get(name)
                .ok_or_else(|| format!("a `{kind}` without `{name}`"))
        };
        let text = |name: &str| -> Result<&str, String> {
            let v = field(name)?;
            v.as_str()
                .ok_or_else(|| format!("`{kind}.{name}` is {}, not a string", json_kind(v)))
        };
        match kind {
            "text_delta" => {
                fits(block_kind == "text")?;
                let t = text("text")?;
                if !t.is_empty() {
                    marks.token();
                }
                append(&mut block.value, "text", t);
            }
            "input_json_delta" => {
                fits(block.value.contains_key("input"))?;
                if block_kind == "tool_use" {
                    marks.tool();
                }
                block.json.push_str(text("partial_json")?);
            }
            "thinking_delta" => {
                fits(block_kind == "thinking")?;
                append(&mut block.value, "thinking", text("thinking")?);
            }
            "signature_delta" => {
                fits(block_kind == "thinking")?;
                let signature = text("signature")?;
                block
                    .value
                    .insert("signature".into(), Value::from(signature));
            }
            "citations_delta" => {
                fits(block_kind == "text")?;
                let citation = field("citation")?.clone();
                match block.value.get_mut("citations") {
                    Some(Value::Array(list)) => list.push(citation),
                    _ => {
                        block
                            .value
                            .insert("citations".into(), Value::Array(vec![citation]));
                    }
                }
            }
            // Newer delta types: skipped, as the non-streamed parser skips block types
            // it does not know.
            _ => {}
        }
        Ok(Step::More)
    }

    fn message_delta(&mut self, data: &Map<String, Value>) -> Result<Step, String> {
        let Some(message) = self.message.as_mut() else {
            return Err("`message_delta` before `message_start`".into());
        };
        if let Some(delta) = data.get("delta") {
            let Value::Object(delta) = delta else {
                return Err(format!(
                    "`message_delta.delta` is {}, not an object",
                    json_kind(delta)
                ));
            };
            for (k, v) in delta.iter().filter(|(_, v)| !v.is_null()) {
                message.insert(k.clone(), v.clone());
            }
        }
        if let Some(usage) = data.get("usage").filter(|u| !u.is_null()) {
            let Value::Object(usage) = usage else {
                return Err(format!(
                    "`message_delta.usage` is {}, not an object",
                    json_kind(usage)
                ));
            };
            // Cumulative counts: each one sent replaces the earlier; one not sent (or
            // null) keeps the `message_start` value.
            let total = message
                .entry("usage")
                .or_insert_with(|| Value::Object(Map::new()));
            if !total.is_object() {
                *total = Value::Object(Map::new());
            }
            if let Value::Object(total) = total {
                for (k, v) in usage.iter().filter(|(_, v)| !v.is_null()) {
                    total.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(Step::More)
    }
}

/// A block event's `index`.
fn index(data: &Map<String, Value>) -> Result<usize, String> {
    match data.get("index") {
        Some(v) => v
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| format!("`index` is {v}, not a block number")),
        None => Err("a block event without an `index`".into()),
    }
}

/// Append `more` to the string field `name` of a block (absent or null counts as "").
fn append(block: &mut Map<String, Value>, name: &str, more: &str) {
    match block.get_mut(name) {
        Some(Value::String(s)) => s.push_str(more),
        _ => {
            block.insert(name.into(), Value::from(more));
        }
    }
}

/// The answer of a whole recorded stream (`{"sse": [...]}` events of a cassette's raw
/// body, or a test's), read as a live stream is: `Err` says what was wrong, as for a
/// live stream. Timing is not measured.
pub fn assemble(events: &[SseEvent]) -> Result<Response, String> {
    let mut assembler = AnthropicAssembler::new();
    let mut marks = Marks::new(std::time::Instant::now());
    for event in events {
        if assembler.event(event, &mut marks)? == Step::Done {
            return assembler.finish(true);
        }
    }
    assembler.finish(false)
}

impl Assembler for AnthropicAssembler {
    fn event(&mut self, event: &SseEvent, marks: &mut Marks) -> Result<Step, String> {
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| format!("its data is not JSON ({e})"))?;
        let Value::Object(data) = data else {
            return Err(format!(
                "its data is {}, not a JSON object",
                json_kind(&data)
            ));
        };
        let name = event.event.as_deref();
        let kind = match (data.get("type"), name) {
            (Some(Value::String(t)), Some(name)) if t != name => {
                return Err(format!(
                    "the event is named `{name}` but its data has type `{t}`"
                ));
            }
            (Some(Value::String(t)), _) => t.clone(),
            (None, Some(name)) => name.to_string(),
            (Some(other), _) => {
                return Err(format!("its `type` is {}, not a string", json_kind(other)));
            }
            (None, None) => return Err("it has neither an event name nor a `type`".into()),
        };
        if self.message.is_none()
            && matches!(
                kind.as_str(),
                "content_block_start" | "content_block_delta" | "content_block_stop"
            )
        {
            return Err(format!("`{kind}` before `message_start`"));
        }
        let step = match kind.as_str() {
            "ping" => Step::More,
            "error" => {
                self.error = Some(format!(
                    "{} (an `error` event in the stream)",
                    api_error(&Value::Object(data))
                ));
                Step::Done
            }
            "message_start" => self.message_start(&data)?,
            "content_block_start" => self.block_start(&data, marks)?,
            "content_block_delta" => self.block_delta(&data, marks)?,
            "content_block_stop" => {
                self.open_block(&data, "`content_block_stop`")?.closed = true;
                Step::More
            }
            "message_delta" => self.message_delta(&data)?,
            "message_stop" => {
                if self.message.is_none() {
                    return Err("`message_stop` before `message_start`".into());
                }
                Step::Done
            }
            // Anthropic may add event types; they carry nothing this answer needs.
            _ => Step::More,
        };
        self.last = Some(kind);
        Ok(step)
    }

    fn finish(self, terminated: bool) -> Result<Response, String> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let message = match (terminated, self.message) {
            (true, Some(message)) => message,
            (_, message) => {
                let seen = match (&message, &self.last) {
                    (None, None) => "no event at all".to_string(),
                    (None, Some(last)) => format!("no `message_start`; last event `{last}`"),
                    (Some(_), last) => format!(
                        "{} content block(s) started; last event `{}`",
                        self.blocks.len(),
                        last.as_deref().unwrap_or("message_start")
                    ),
                };
                return Err(format!(
                    "the stream ended before `message_stop` ({seen}): the answer is incomplete"
                ));
            }
        };
        // The raw arguments of each tool_use block, in order: the concatenated fragments.
        let raw: Vec<Option<String>> = self
            .blocks
            .iter()
            .filter(|b| b.kind() == "tool_use")
            .map(|b| (!b.json.trim().is_empty()).then(|| b.json.clone()))
            .collect();
        let mut message = message;
        message.insert(
            "content".into(),
            Value::Array(self.blocks.into_iter().map(Block::into_value).collect()),
        );
        let mut response = AnthropicProvider::parse_response(&Value::Object(message))?;
        // parse_response makes one call per tool_use block, in order.
        for (call, raw) in response.tool_calls.iter_mut().zip(raw) {
            if let Some(raw) = raw {
                call.arguments = raw;
            }
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use secrecy::SecretString;
    use serde_json::json;
    use wiremock::matchers::{body_partial_json, header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::provider::config::ProviderConfig;
    use crate::provider::http::{Http, HttpSettings};
    use crate::provider::stream::test_server::{
        answer, assert_timing, call, detailed, hostile_offsets, serve, split_at, trial, usage,
    };
    use crate::provider::{
        Message, Provider, ProviderError, Request, ToolCall, ToolChoice, ToolDefinition, Usage,
    };

    const RECORDED: &str = include_str!("testdata/anthropic/stream_tool_use_recorded.sse");
    const TEXT_THEN_TOOL: &str = include_str!("testdata/anthropic/stream_text_then_tool_use.sse");
    const DOCS: &str = include_str!("testdata/anthropic/stream_tool_use_docs.sse");
    const OVERLOADED: &str = include_str!("testdata/anthropic/stream_error_overloaded.sse");
    const SINGLE_TOOL_USE: &str = include_str!("testdata/anthropic/msg_single_tool_use.json");
    const TEXT_AND_TOOL_USE: &str = include_str!("testdata/anthropic/msg_text_and_tool_use.json");
    const TEXT_END_TURN: &str = include_str!("testdata/anthropic/msg_text_end_turn.json");
    const SERVER_TOOL_USE: &str =
        include_str!("testdata/anthropic/msg_text_server_tool_use_and_tool_use.json");

    const KEY: &str = "fake-anthropic-key-SECRETSECRET1234";

    /// `event: NAME` / `data: JSON` events, each closed by a blank line.
    fn sse(events: &[Value]) -> String {
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect()
    }

    /// The events of an SSE text, split by hand (blank lines end events).
    fn parse_sse(text: &str) -> Vec<SseEvent> {
        let text = text.replace("\r\n", "\n");
        text.split("\n\n")
            .filter_map(|block| {
                let mut event = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        event = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(v.to_string());
                    }
                }
                data.map(|data| SseEvent { event, data })
            })
            .collect()
    }

    /// Feed the events of `text` to an assembler, as the reader does.
    fn feed(text: &str) -> Result<Response, String> {
        assemble(&parse_sse(text))
    }

    /// The events kept in a streamed answer's raw body, as an assembler reads them.
    fn raw_events(r: &Response) -> Vec<SseEvent> {
        r.raw.as_ref().unwrap()["sse"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| SseEvent {
                event: e["event"].as_str().map(str::to_string),
                data: match &e["data"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            })
            .collect()
    }

    /// A hand-made answer with Chinese, emoji and an escaped quote in the arguments,
    /// in compact fragments (so the raw arguments equal the non-streamed ones).
    fn cjk_stream() -> String {
        let delta = |index: u32, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
        sse(&[
            json!({"type": "message_start", "message": {"id": "msg_hand1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 20, "cache_read_input_tokens": 100, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            delta(0, json!({"type": "text_delta", "text": "好的，我来查一下"})),
            json!({"type": "ping"}),
            delta(0, json!({"type": "text_delta", "text": "北京的天气🌧️。"})),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_hand1", "name": "get_weather", "input": {}}}),
            delta(1, json!({"type": "input_json_delta", "partial_json": ""})),
            delta(
                1,
                json!({"type": "input_json_delta", "partial_json": "{\"location\":\"北"}),
            ),
            delta(
                1,
                json!({"type": "input_json_delta", "partial_json": "京\",\"note\":\"☔ rain"}),
            ),
            delta(
                1,
                json!({"type": "input_json_delta", "partial_json": " 🌧️ \\\"heavy\\\"\"}"}),
            ),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ])
    }

    /// The non-streamed body of the same answer.
    fn cjk_message() -> Value {
        json!({"id": "msg_hand1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "好的，我来查一下北京的天气🌧️。"},
                {"type": "tool_use", "id": "toolu_hand1", "name": "get_weather", "input": {"location": "北京", "note": "☔ rain 🌧️ \"heavy\""}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 20, "cache_read_input_tokens": 100, "output_tokens": 42}})
    }

    const CJK_ARGUMENTS: &str = r#"{"location":"北京","note":"☔ rain 🌧️ \"heavy\""}"#;

    /// A hand-made answer with a thinking block (signature by delta), an unknown event,
    /// an unknown delta type, a tool_use without fragments and a cumulative usage whose
    /// null count keeps the earlier value.
    fn thinking_stream() -> String {
        let delta = |index: u32, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
        sse(&[
            json!({"type": "message_start", "message": {"id": "msg_think", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 3, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            delta(
                0,
                json!({"type": "thinking_delta", "thinking": "Let me think. "}),
            ),
            delta(
                0,
                json!({"type": "thinking_delta", "thinking": "先想一想。"}),
            ),
            delta(
                0,
                json!({"type": "signature_delta", "signature": "sig-abc"}),
            ),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "future_event", "whatever": [1, 2]}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Check"}}),
            delta(1, json!({"type": "future_delta", "bits": "ignored"})),
            delta(1, json!({"type": "text_delta", "text": "ing."})),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_t", "name": "get_time", "input": {}}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"input_tokens": 30, "cache_creation_input_tokens": null, "output_tokens": 57}}),
            json!({"type": "message_stop"}),
        ])
    }

    fn thinking_message() -> Value {
        json!({"id": "msg_think", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Let me think. 先想一想。", "signature": "sig-abc"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_t", "name": "get_time", "input": {}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 30, "cache_creation_input_tokens": 5, "output_tokens": 57}})
    }

    // ---- the assembler, offline ----

    #[test]
    fn compact_fragments_assemble_to_the_non_streamed_answer_exactly() {
        let streamed = feed(&cjk_stream()).unwrap();
        let unary = AnthropicProvider::parse_response(&cjk_message()).unwrap();
        assert_eq!(streamed, unary);
        assert_eq!(
            streamed.text.as_deref(),
            Some("好的，我来查一下北京的天气🌧️。")
        );
        assert_eq!(
            streamed.tool_calls,
            vec![call(Some("toolu_hand1"), "get_weather", CJK_ARGUMENTS)]
        );
        // 100 of the 120 input tokens were read from the cache.
        assert_eq!(streamed.usage, detailed(120, 42, 100, 0, 0));
        assert_eq!(streamed.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(streamed.state, None);
    }

    #[test]
    fn thinking_blocks_and_cumulative_usage_match_the_non_streamed_answer() {
        let streamed = feed(&thinking_stream()).unwrap();
        let unary = AnthropicProvider::parse_response(&thinking_message()).unwrap();
        assert_eq!(streamed, unary);
        assert_eq!(streamed.text.as_deref(), Some("Checking."));
        // No fragment at all: the input it started with.
        assert_eq!(
            streamed.tool_calls,
            vec![call(Some("toolu_t"), "get_time", "{}")]
        );
        // input_tokens from message_delta; the null cache count keeps message_start's 5.
        // 5 of them written to the cache.
        assert_eq!(streamed.usage, detailed(35, 57, 0, 5, 0));
        assert_eq!(
            streamed.state,
            Some(json!({"anthropic": {"content": [
                {"type": "thinking", "thinking": "Let me think. 先想一想。", "signature": "sig-abc"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_t", "name": "get_time", "input": {}}
            ]}}))
        );
    }

    #[test]
    fn the_recorded_stream_equals_the_recorded_message_for_the_same_answer() {
        let streamed = feed(RECORDED).unwrap();
        // The SDK recorded the same answer non-streamed, under another tool_use id.
        let mut message: Value = serde_json::from_str(SINGLE_TOOL_USE).unwrap();
        message["content"][0]["id"] = json!("toolu_018acGYLtfR52q9yDbWaEdQZ");
        let unary = AnthropicProvider::parse_response(&message).unwrap();
        // The raw arguments are the fragments as sent, spaces included; the non-streamed
        // API sends a JSON value, written compactly. As JSON they are the same.
        assert_eq!(
            streamed.tool_calls[0].arguments,
            r#"{"location": "San Francisco, CA", "units": "f"}"#
        );
        assert_eq!(
            unary.tool_calls[0].arguments,
            r#"{"location":"San Francisco, CA","units":"f"}"#
        );
        let parsed =
            |r: &Response| -> Value { serde_json::from_str(&r.tool_calls[0].arguments).unwrap() };
        assert_eq!(parsed(&streamed), parsed(&unary));
        let mut same = streamed.clone();
        same.tool_calls[0].arguments = unary.tool_calls[0].arguments.clone();
        assert_eq!(same, unary);
        assert_eq!(streamed.usage, usage(656, 74));
    }

    #[test]
    fn a_stream_that_ends_before_message_stop_is_an_error() {
        let cut = &RECORDED[..RECORDED.find("event: message_stop").unwrap()];
        let err = feed(cut).unwrap_err();
        assert_eq!(
            err,
            "the stream ended before `message_stop` (1 content block(s) started; last event `message_delta`): the answer is incomplete"
        );
        assert_eq!(
            feed("").unwrap_err(),
            "the stream ended before `message_stop` (no event at all): the answer is incomplete"
        );
        let only_ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
        assert!(
            feed(only_ping)
                .unwrap_err()
                .contains("(no `message_start`; last event `ping`)")
        );
    }

    #[test]
    fn events_out_of_order_or_out_of_place_are_malformed() {
        let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}});
        let tool = json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}});
        let cases: Vec<(Vec<Value>, &str)> = vec![
            (
                vec![tool.clone()],
                "`content_block_start` before `message_start`",
            ),
            (
                vec![start.clone(), start.clone()],
                "a second `message_start`",
            ),
            (
                vec![
                    start.clone(),
                    json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
                ],
                "`content_block_start` for block 1, but the next block is 0",
            ),
            (
                vec![
                    start.clone(),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}),
                ],
                "`content_block_delta` for content block 0, which was never started (0 started)",
            ),
            (
                vec![
                    start.clone(),
                    tool.clone(),
                    json!({"type": "content_block_stop", "index": 0}),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
                ],
                "`content_block_delta` for content block 0, which was already stopped",
            ),
            (
                vec![
                    start.clone(),
                    tool.clone(),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}),
                ],
                "a `text_delta` for content block 0, a `tool_use` block",
            ),
            (
                vec![
                    start.clone(),
                    tool.clone(),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": 7}}),
                ],
                "`input_json_delta.partial_json` is a number, not a string",
            ),
            (
                vec![
                    start.clone(),
                    tool.clone(),
                    json!({"type": "content_block_delta", "index": "0", "delta": {"type": "input_json_delta", "partial_json": "{"}}),
                ],
                "`index` is \"0\", not a block number",
            ),
            (
                vec![json!({"type": "message_stop"})],
                "`message_stop` before `message_start`",
            ),
        ];
        for (events, want) in cases {
            let err = feed(&sse(&events)).unwrap_err();
            assert_eq!(err, want, "{events:?}");
        }
        let not_json = "event: message_start\ndata: {\"type\": \"message_start\", \"mess\n\n";
        assert!(
            feed(not_json)
                .unwrap_err()
                .starts_with("its data is not JSON")
        );
        let named_wrong = "event: content_block_stop\ndata: {\"type\": \"message_stop\"}\n\n";
        assert_eq!(
            feed(named_wrong).unwrap_err(),
            "the event is named `content_block_stop` but its data has type `message_stop`"
        );
        assert_eq!(
            feed("event: ping\ndata: [1]\n\n").unwrap_err(),
            "its data is an array, not a JSON object"
        );
    }

    #[test]
    fn an_error_event_ends_the_answer_as_an_error() {
        assert_eq!(
            feed(OVERLOADED).unwrap_err(),
            "the API returned an error: overloaded_error: Overloaded (an `error` event in the stream)"
        );
        // Mid-answer, after text: the partial answer is not kept.
        let cut = &RECORDED[..RECORDED.find("event: message_delta").unwrap()];
        let err = feed(&format!("{cut}{OVERLOADED}\n\n")).unwrap_err();
        assert!(err.contains("overloaded_error: Overloaded"), "{err}");
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_byte_for_byte() {
        let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}});
        let text = sse(&[
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Par"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ]);
        let r = feed(&text).unwrap();
        assert_eq!(r.tool_calls, vec![call(Some("t"), "f", "{\"city\": \"Par")]);
        assert_eq!(r.finish_reason.as_deref(), Some("max_tokens"));
    }

    /// `text` in pieces of `n` characters.
    fn pieces(text: &str, n: usize) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(n).map(|c| c.iter().collect()).collect()
    }

    /// The event stream Anthropic sends for a non-streamed `message`, written from its
    /// documented sequence: blocks with an `input` start with `{}` and send it as compact
    /// JSON fragments, text and thinking come in pieces (the signature and citations by
    /// their own deltas), other blocks start whole; usage is cumulative in
    /// `message_delta`, and the container comes with it.
    fn stream_of(message: &Value) -> String {
        let mut start = message.clone();
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        let container = start.as_object_mut().unwrap().shift_remove("container");
        start["usage"]["output_tokens"] = json!(1);
        let mut events = vec![json!({"type": "message_start", "message": start})];
        for (i, block) in message["content"].as_array().unwrap().iter().enumerate() {
            let delta = |d: Value| json!({"type": "content_block_delta", "index": i, "delta": d});
            let mut first = block.clone();
            let mut deltas = Vec::new();
            match block["type"].as_str().unwrap() {
                _ if block.get("input").is_some() => {
                    first["input"] = json!({});
                    deltas.push(delta(
                        json!({"type": "input_json_delta", "partial_json": ""}),
                    ));
                    for p in pieces(&block["input"].to_string(), 5) {
                        deltas.push(delta(
                            json!({"type": "input_json_delta", "partial_json": p}),
                        ));
                    }
                }
                "text" => {
                    first["text"] = json!("");
                    first.as_object_mut().unwrap().shift_remove("citations");
                    for p in pieces(block["text"].as_str().unwrap(), 7) {
                        deltas.push(delta(json!({"type": "text_delta", "text": p})));
                    }
                    for c in block["citations"].as_array().into_iter().flatten() {
                        deltas.push(delta(json!({"type": "citations_delta", "citation": c})));
                    }
                }
                "thinking" => {
                    first["thinking"] = json!("");
                    first.as_object_mut().unwrap().shift_remove("signature");
                    for p in pieces(block["thinking"].as_str().unwrap(), 7) {
                        deltas.push(delta(json!({"type": "thinking_delta", "thinking": p})));
                    }
                    deltas.push(delta(
                        json!({"type": "signature_delta", "signature": block["signature"]}),
                    ));
                }
                _ => {}
            }
            events.push(json!({"type": "content_block_start", "index": i, "content_block": first}));
            events.extend(deltas);
            events.push(json!({"type": "content_block_stop", "index": i}));
        }
        let mut delta = json!({"stop_reason": message["stop_reason"], "stop_sequence": null});
        if let Some(c) = container {
            delta["container"] = c;
        }
        events.push(json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": message["usage"]["output_tokens"]}}));
        events.push(json!({"type": "message_stop"}));
        sse(&events)
    }

    /// Every non-streamed fixture, streamed as Anthropic documents it, gives the same
    /// answer: server-tool blocks, `caller` fields, the container, citations and
    /// thinking included.
    #[test]
    fn every_non_streamed_answer_streams_to_itself() {
        let mut cited: Value = serde_json::from_str(TEXT_END_TURN).unwrap();
        cited["content"][0]["citations"] = json!([{"type": "char_location", "cited_text": "北京", "document_index": 0, "start_char_index": 0, "end_char_index": 2}]);
        let cases = [
            serde_json::from_str(SINGLE_TOOL_USE).unwrap(),
            serde_json::from_str(TEXT_AND_TOOL_USE).unwrap(),
            serde_json::from_str(TEXT_END_TURN).unwrap(),
            serde_json::from_str(SERVER_TOOL_USE).unwrap(),
            cited,
            cjk_message(),
            thinking_message(),
        ];
        for message in cases {
            let streamed = feed(&stream_of(&message)).unwrap();
            let unary = AnthropicProvider::parse_response(&message).unwrap();
            assert_eq!(streamed, unary, "{message}");
        }
        // The server-tool answer keeps its blocks and container as state.
        let server: Value = serde_json::from_str(SERVER_TOOL_USE).unwrap();
        let r = feed(&stream_of(&server)).unwrap();
        let state = &r.state.unwrap()["anthropic"];
        assert_eq!(state["container"], "container_011CYVPF4iP8oD6Vsz1NhVih");
        assert_eq!(state["content"][1]["input"], server["content"][1]["input"]);
        assert_eq!(
            r.tool_calls,
            vec![call(
                Some("toolu_011MDRpaZRMRRjtFkJizD6nS"),
                "get_weather",
                r#"{"location":"San Francisco, CA","units":"c"}"#
            )]
        );
    }

    // ---- through HTTP ----

    fn provider(base_url: &str) -> AnthropicProvider {
        let mut c = ProviderConfig::new("anthropic", "claude-sonnet-4-5", base_url);
        c.api_key = Some(SecretString::from(KEY.to_string()));
        c.stream = true;
        AnthropicProvider::new(
            c,
            Http::new(HttpSettings {
                timeout: Duration::from_secs(30),
                max_attempts: 3,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_secs(2),
            })
            .unwrap(),
        )
    }

    fn request() -> Request {
        Request {
            messages: vec![Message::User {
                content: "Weather in San Francisco?".into(),
            }],
            tools: Arc::new(vec![ToolDefinition {
                name: "get_weather".into(),
                description: "Current weather for a city.".into(),
                parameters:
                    json!({"type": "object", "properties": {"location": {"type": "string"}}}).into(),
            }]),
            tool_choice: ToolChoice::Auto,
        }
    }

    /// Serve `chunks` once and answer the request through the streaming provider.
    async fn through_http(chunks: Vec<Vec<u8>>) -> (Result<Response, ProviderError>, Value) {
        let (url, server) = serve(chunks, 1);
        let r = provider(&format!("{url}/v1"))
            .complete(&request(), &trial("anthropic:claude-sonnet-4-5"))
            .await;
        let bodies = server.join().unwrap();
        (r, serde_json::from_str(&bodies[0]).unwrap())
    }

    /// The three recorded streams, split inside every multi-byte character and after
    /// every `"`, with the values read off the files by hand.
    #[tokio::test]
    async fn the_recorded_streams_assemble_through_http_split_at_hostile_points() {
        struct Want {
            text: Option<&'static str>,
            call: ToolCall,
            usage: Option<Usage>,
            events: u32,
        }
        let cases = [
            (
                RECORDED,
                Want {
                    text: None,
                    call: call(
                        Some("toolu_018acGYLtfR52q9yDbWaEdQZ"),
                        "get_weather",
                        r#"{"location": "San Francisco, CA", "units": "f"}"#,
                    ),
                    usage: usage(656, 74),
                    events: 16,
                },
            ),
            (
                TEXT_THEN_TOOL,
                Want {
                    text: Some("I'll check the current weather in Paris for you."),
                    call: call(
                        Some("toolu_01NRLabsLyVHZPKxbKvkfSMn"),
                        "get_weather",
                        r#"{"location": "Paris"}"#,
                    ),
                    usage: usage(377, 65),
                    events: 15,
                },
            ),
            (
                DOCS,
                Want {
                    text: Some("Okay, let's check the weather for San Francisco, CA:"),
                    call: call(
                        Some("toolu_01T1x1fJ34qAmk2tNTrN7Up6"),
                        "get_weather",
                        r#"{"location": "San Francisco, CA", "unit": "fahrenheit"}"#,
                    ),
                    usage: usage(472, 89),
                    events: 30,
                },
            ),
        ];
        for (body, want) in cases {
            let chunks = split_at(body.as_bytes(), &hostile_offsets(body.as_bytes()));
            assert!(chunks.len() > 50);
            let (r, sent) = through_http(chunks).await;
            let r = r.unwrap();
            assert_eq!(sent["stream"], json!(true));
            assert_eq!(r.text.as_deref(), want.text);
            assert_eq!(r.tool_calls, vec![want.call]);
            assert_eq!(r.usage, want.usage);
            assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
            assert_eq!(r.state, None);
            assert_eq!(r.attempts, 1);
            assert_timing(&r, want.events);
            // The events are kept for the cassette, in order.
            let raw = r.raw.as_ref().unwrap()["sse"].as_array().unwrap().clone();
            assert_eq!(raw.len() as u32, want.events);
            assert_eq!(raw[0]["event"], "message_start");
            assert_eq!(raw[raw.len() - 1]["data"], json!({"type": "message_stop"}));
        }
    }

    #[tokio::test]
    async fn a_stream_split_at_every_byte_gives_the_non_streamed_answer() {
        let body = cjk_stream();
        let offsets: Vec<usize> = (1..body.len()).collect();
        let (r, _) = through_http(split_at(body.as_bytes(), &offsets)).await;
        let r = r.unwrap();
        let unary = AnthropicProvider::parse_response(&cjk_message()).unwrap();
        assert_eq!(answer(&r), unary);
        assert_eq!(r.tool_calls[0].arguments, CJK_ARGUMENTS);
        assert_timing(&r, 14);
        // The events kept for the cassette give the same answer again.
        assert_eq!(assemble(&raw_events(&r)).unwrap(), unary);
    }

    #[tokio::test]
    async fn streamed_and_non_streamed_answers_are_equal_through_http() {
        for (stream, message) in [
            (cjk_stream(), cjk_message()),
            (thinking_stream(), thinking_message()),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .and(path("/v1/messages"))
                .respond_with(ResponseTemplate::new(200).set_body_json(&message))
                .mount(&server)
                .await;
            let mut c = ProviderConfig::new(
                "anthropic",
                "claude-sonnet-4-5",
                &format!("{}/v1", server.uri()),
            );
            c.api_key = Some(SecretString::from(KEY.to_string()));
            let unary = AnthropicProvider::new(c, Http::new(HttpSettings::default()).unwrap())
                .complete(&request(), &trial("anthropic:claude-sonnet-4-5"))
                .await
                .unwrap();
            let sent: Value = server.received_requests().await.unwrap()[0]
                .body_json()
                .unwrap();
            assert!(sent.get("stream").is_none(), "{sent}");

            let bytes = stream.into_bytes();
            let (streamed, _) = through_http(split_at(&bytes, &hostile_offsets(&bytes))).await;
            let streamed = streamed.unwrap();
            assert_eq!(answer(&streamed), answer(&unary));
            assert!(unary.stream.is_none());
        }
    }

    #[tokio::test]
    async fn a_429_before_the_stream_is_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(ResponseTemplate::new(429).set_body_raw(
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
                "application/json",
            ))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("accept", "text/event-stream"))
            .and(header("x-api-key", KEY))
            .and(body_partial_json(
                json!({"stream": true, "model": "claude-sonnet-4-5"}),
            ))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(TEXT_THEN_TOOL, "text/event-stream"),
            )
            .mount(&server)
            .await;
        let r = provider(&format!("{}/v1", server.uri()))
            .complete(&request(), &trial("anthropic:claude-sonnet-4-5"))
            .await
            .unwrap();
        assert_eq!(r.attempts, 2);
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert_eq!(r.tool_calls[0].arguments, r#"{"location": "Paris"}"#);
        assert_timing(&r, 15);
    }

    fn stream_error(r: Result<Response, ProviderError>) -> String {
        match r {
            Err(ProviderError::Stream { provider, message }) => {
                assert_eq!(provider, "anthropic");
                message
            }
            other => panic!("expected a stream error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn broken_streams_are_error_trials_with_the_reason() {
        let bytes = RECORDED.as_bytes();
        // Cut before message_stop, at hostile points too.
        let cut = &bytes[..RECORDED.find("event: message_stop").unwrap()];
        let (r, _) = through_http(split_at(cut, &hostile_offsets(cut))).await;
        assert_eq!(
            stream_error(r),
            "the stream ended before `message_stop` (1 content block(s) started; last event `message_delta`): the answer is incomplete (after 15 event(s))"
        );
        // Cut inside an event's JSON, in the middle of an argument fragment.
        let inside = RECORDED.find("anci").unwrap() + 2;
        let (r, _) = through_http(vec![bytes[..inside].to_vec()]).await;
        let message = stream_error(r);
        assert!(
            message.starts_with(
                "the body ended inside event 10, which was cut off (its data is not JSON"
            ),
            "{message}"
        );
        // A malformed event in the middle of a whole stream.
        let bad = RECORDED.replacen(r#""partial_json":"tio"}"#, r#""partial_json":"tio"},"#, 1);
        let (r, _) = through_http(vec![bad.into_bytes()]).await;
        assert!(stream_error(r).starts_with("event 7 is malformed: its data is not JSON"),);
        // The overloaded error inside a 200, after part of the answer.
        let before = &RECORDED[..RECORDED.find("event: content_block_stop").unwrap()];
        let (r, _) = through_http(vec![
            before.as_bytes().to_vec(),
            OVERLOADED.as_bytes().to_vec(),
        ])
        .await;
        assert_eq!(
            stream_error(r),
            "the API returned an error: overloaded_error: Overloaded (an `error` event in the stream) (after 14 event(s))"
        );
    }

    #[tokio::test]
    async fn a_key_echoed_in_an_error_event_is_scrubbed() {
        let event = format!(
            "event: error\ndata: {}\n\n",
            json!({"type": "error", "error": {"type": "authentication_error", "message": format!("bad key {KEY}")}})
        );
        let (r, _) = through_http(vec![event.into_bytes()]).await;
        let message = stream_error(r);
        assert!(
            message.contains("authentication_error: bad key [REDACTED]"),
            "{message}"
        );
        assert!(!message.contains(KEY));
    }

    /// The recorded stream with the cache counts of the second call in Anthropic's
    /// prompt caching docs (see `anthropic::tests::with_docs_usage`) in both its
    /// `message_start` and its cumulative `message_delta` usage.
    #[test]
    fn a_recorded_stream_with_a_cache_read_keeps_it_apart() {
        let recorded =
            r#""input_tokens":656,"cache_creation_input_tokens":0,"cache_read_input_tokens":0"#;
        assert_eq!(RECORDED.matches(recorded).count(), 2);
        let sse = RECORDED.replace(
            recorded,
            r#""input_tokens":21,"cache_creation_input_tokens":0,"cache_read_input_tokens":188086"#,
        );
        let r = feed(&sse).unwrap();
        assert_eq!(r.usage, detailed(21 + 188086, 74, 188086, 0, 0));
        // Only message_start tells the cache write: message_delta's usage without it
        // keeps it.
        let sse = RECORDED
            .replacen(
                recorded,
                r#""input_tokens":21,"cache_creation_input_tokens":2048,"cache_read_input_tokens":0"#,
                1,
            )
            .replace(
                recorded,
                r#""input_tokens":21,"cache_read_input_tokens":0"#,
            );
        let r = feed(&sse).unwrap();
        assert_eq!(r.usage, detailed(21 + 2048, 74, 0, 2048, 0));
    }
}
