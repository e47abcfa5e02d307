//! The Anthropic Messages API (`POST {base_url}/messages`; with `config.stream`, the
//! same request with `"stream": true`, read by [`super::anthropic_stream`]).
//!
//! Request mapping from the neutral [`Request`]:
//! - system messages, wherever they are, are joined with a blank line into the top-level
//!   `system` string (the API has no system role);
//! - user and assistant messages become content blocks; an assistant's earlier tool calls
//!   become `tool_use` blocks `{id, name, input}`, where `input` is the parsed arguments
//!   (arguments that are not a JSON object, or a call without an id, can not be sent:
//!   [`ProviderError::Unsupported`]);
//! - tool results become `tool_result` blocks `{tool_use_id, content}` in a user message,
//!   with `is_error: true` for a failed call (the field is left out otherwise);
//!   consecutive messages of the same role (several tool results, a tool result followed
//!   by a user message) are merged into one message, since the API wants the roles to
//!   alternate, and within a user message the `tool_result` blocks come first, in the
//!   order of the calls they answer;
//! - an assistant turn with Anthropic state (see below) is sent as the API gave it:
//!   its saved `content` verbatim (thinking blocks with their signatures, server tool
//!   blocks, `caller` fields) while the turn's text and calls still match it, else the
//!   rebuilt text and `tool_use` blocks behind the saved thinking blocks; the latest
//!   turn's code-execution container id is sent as `container`;
//! - empty text blocks are dropped (the API rejects them), and a message left without
//!   blocks is dropped with them;
//! - tools become `{name, description, input_schema}`; tool_choice `auto`, `required`,
//!   `function:NAME` and `none` become `{type: auto}`, `{type: any}`,
//!   `{type: tool, name}` and `{type: none}`; with no tools, neither `tools` nor
//!   `tool_choice` is sent;
//! - `max_tokens` is required by the API: the configured value or
//!   [`DEFAULT_MAX_TOKENS`]; `temperature` when set; the API has no `seed`, so a
//!   configured seed is ignored; `parallel_tool_calls = false` becomes
//!   `tool_choice.disable_parallel_tool_use: true` (not under `none`, where the field does
//!   not exist); the configured extra fields are merged last and win.
//!
//! Response parsing is lenient with fields it does not know: `text` blocks are
//! concatenated, with nothing in between, into the text answer (the API splits one answer
//! into several blocks, e.g. around citations); `tool_use` blocks become tool calls with
//! the `input` object serialised as the arguments string; `server_tool_use` blocks (tools
//! Anthropic runs itself, such as web search or code execution), their result blocks and
//! `thinking` blocks are not client tool calls or answer text. When an answer holds any
//! such block, or ran in a `container`, the response's `state` is
//! `{"anthropic": {"content": [every block, verbatim], "container": id}}` (each part
//! only when present), so the next round can send them back; otherwise it is `None`.
//! `stop_reason` is the finish reason. The input token count is
//! `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`: Anthropic's
//! `input_tokens` counts only the uncached part of the prompt, and the sum is the whole
//! prompt, as other providers count it. A usage with an implausible count (negative,
//! fractional, not a number, above [`usage::MAX_TOKENS_PER_REQUEST`]) is dropped with a
//! warning on the response. A `tool_use` block's arguments are its `input` value written
//! as compact JSON (the wire carries a JSON value, not text, so "raw" means that value
//! unchanged: key order, `null` and non-object values kept). An error body (`"type": "error"`) that arrives
//! with a success status is a decode error naming the error type and message.

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::Exchange;
use super::anthropic_stream::AnthropicAssembler;
use super::config::ProviderConfig;
use super::http::{Header, Http};
use super::usage::{self, UsageReading};
use super::{
    Message, Provider, ProviderError, Request, Response, ToolCall, ToolChoice, TrialKey, Usage,
};

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The key of Anthropic's part in an assistant turn's state.
const STATE_KEY: &str = "anthropic";

/// `max_tokens` when the target sets none (the API requires the field).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// A live Anthropic Messages API target.
pub struct AnthropicProvider {
    config: ProviderConfig,
    http: Http,
}

/// The start of a body, for error messages.
fn snippet(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// Append `blocks` as a turn of `role`, merging into the previous turn when it has the
/// same role. Turns without blocks are dropped.
fn push_turn(turns: &mut Vec<(&'static str, Vec<Value>)>, role: &'static str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some((last, existing)) if *last == role => existing.extend(blocks),
        _ => turns.push((role, blocks)),
    }
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

/// The part of an assistant turn's state that is Anthropic's: `{content, container}`.
fn saved_state(state: Option<&Value>) -> Option<&Map<String, Value>> {
    state?.get(STATE_KEY)?.as_object()
}

/// The state of an answer: its whole `content` when it holds blocks the neutral turn
/// can not carry (`thinking` and `redacted_thinking` with their signatures,
/// `server_tool_use` and its results, anything newer), and the id of the code-execution
/// `container` it ran in; `None` for plain text and `tool_use` answers.
fn turn_state(content: &[Value], container: Option<&Value>) -> Option<Value> {
    let opaque = content.iter().any(|b| {
        !matches!(
            b.get("type").and_then(Value::as_str),
            Some("text" | "tool_use")
        )
    });
    let container = container
        .and_then(|c| c.get("id").or(Some(c)))
        .and_then(Value::as_str);
    if !opaque && container.is_none() {
        return None;
    }
    let mut state = Map::new();
    if opaque {
        state.insert("content".into(), Value::Array(content.to_vec()));
    }
    if let Some(id) = container {
        state.insert("container".into(), Value::from(id));
    }
    Some(json!({ STATE_KEY: state }))
}

/// The blocks of an assistant turn sent again: the saved `content` verbatim when its
/// text and `tool_use` blocks still say what the turn says (the API wants thinking
/// blocks back unmodified, and server tool blocks where they were); otherwise the
/// rebuilt blocks, with the saved thinking blocks first, as the API requires.
fn turn_blocks(saved: Option<&Map<String, Value>>, rebuilt: Vec<Value>) -> Vec<Value> {
    let Some(saved) = saved
        .and_then(|s| s.get("content"))
        .and_then(Value::as_array)
    else {
        return rebuilt;
    };
    let essential = |blocks: &[Value]| -> (String, Vec<Value>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("tool_use") => calls.push(json!([b.get("id"), b.get("name"), b.get("input")])),
                _ => {}
            }
        }
        (text, calls)
    };
    // A block without a type (a damaged cassette or journal) would be refused by the
    // API: the turn is rebuilt instead, and only well-formed thinking blocks kept.
    let well_formed = saved
        .iter()
        .all(|b| b.get("type").and_then(Value::as_str).is_some());
    if well_formed && essential(saved) == essential(&rebuilt) {
        return saved.clone();
    }
    saved
        .iter()
        .filter(|b| {
            matches!(
                b.get("type").and_then(Value::as_str),
                Some("thinking" | "redacted_thinking")
            )
        })
        .cloned()
        .chain(rebuilt)
        .collect()
}

/// The usage section, its counts checked ([`super::usage`]): input is
/// `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` (absent or
/// null fields count 0), of which `cache_read_input_tokens` is the cached part and
/// `cache_creation_input_tokens` the cache-write part; output is `output_tokens`
/// (Anthropic reports no thinking tokens apart: they are inside it).
fn parse_usage(usage: Option<&Value>) -> UsageReading {
    let Some(usage) = usage.filter(|u| !u.is_null()) else {
        return UsageReading::Absent;
    };
    let Some(obj) = usage.as_object() else {
        return UsageReading::Implausible(format!("`usage` is {usage}, not an object"));
    };
    let input = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| usage::count(obj.get(*k), k))
    .collect::<Result<Vec<_>, _>>();
    match (
        input,
        usage::count(obj.get("output_tokens"), "output_tokens"),
    ) {
        (Ok(input), Ok(output)) => UsageReading::Counted(Usage {
            input_tokens: usage::sum(&input),
            output_tokens: output.unwrap_or(0),
            // The parts are inside the sum by construction, so they always fit.
            cache_write_tokens: input[1].unwrap_or(0),
            cached_input_tokens: input[2].unwrap_or(0),
            ..Default::default()
        }),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
    }
}

/// The text of an error body `{"type": "error", "error": {"type", "message"}}` (also
/// the data of a streamed `error` event).
pub(super) fn api_error(body: &Value) -> String {
    let error = body.get("error");
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("unknown error type");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let mut text = format!("the API returned an error: {kind}: {message}");
    if let Some(id) = body.get("request_id").and_then(Value::as_str) {
        text.push_str(&format!(" (request_id {id})"));
    }
    text
}

impl AnthropicProvider {
    /// A provider for `config` (its `base_url` is normally `https://api.anthropic.com/v1`)
    /// that sends through `http`.
    pub fn new(config: ProviderConfig, http: Http) -> Self {
        AnthropicProvider { config, http }
    }

    /// The target's settings.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn unsupported(&self, message: String) -> ProviderError {
        ProviderError::Unsupported {
            provider: self.config.provider.clone(),
            message,
        }
    }

    /// The JSON body of `POST /messages` for `request` (pure: no I/O). Fails when the
    /// conversation holds something Anthropic can not represent: an earlier tool call
    /// without an id or whose arguments are not a JSON object.
    pub fn build_body(&self, request: &Request) -> Result<Value, ProviderError> {
        let mut system: Vec<&str> = Vec::new();
        let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
        // The code-execution container of the latest turn that ran in one.
        let mut container: Option<&str> = None;
        for (i, message) in request.messages.iter().enumerate() {
            match message {
                Message::System { content } => {
                    if !content.is_empty() {
                        system.push(content);
                    }
                }
                Message::User { content } => {
                    push_turn(
                        &mut turns,
                        "user",
                        text_block(content).into_iter().collect(),
                    );
                }
                Message::Assistant {
                    content,
                    tool_calls,
                    state,
                } => {
                    let mut rebuilt: Vec<Value> = content
                        .as_deref()
                        .and_then(text_block)
                        .into_iter()
                        .collect();
                    for call in tool_calls {
                        rebuilt.push(self.tool_use_block(i, call)?);
                    }
                    let saved = saved_state(state.as_ref());
                    if let Some(id) = saved
                        .and_then(|s| s.get("container"))
                        .and_then(Value::as_str)
                    {
                        container = Some(id);
                    }
                    let blocks = turn_blocks(saved, rebuilt);
                    push_turn(&mut turns, "assistant", blocks);
                }
                Message::Tool {
                    tool_call_id,
                    content,
                    is_error,
                    ..
                } => {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": tool_call_id,
                        "content": content,
                    });
                    if *is_error {
                        block["is_error"] = Value::Bool(true);
                    }
                    push_turn(&mut turns, "user", vec![block]);
                }
            }
        }
        let mut call_order: Vec<String> = Vec::new();
        let messages: Vec<Value> = turns
            .into_iter()
            .map(|(role, mut blocks)| {
                if role == "user" {
                    // tool_result blocks open a user turn, in the order of the calls they
                    // answer; both sorts are stable, so anything else keeps its order.
                    blocks.sort_by_key(|b| {
                        let id = b.get("tool_use_id").and_then(Value::as_str);
                        id.and_then(|id| call_order.iter().position(|c| c == id))
                            .unwrap_or(usize::MAX)
                    });
                    blocks.sort_by_key(|b| !is_tool_result(b));
                } else {
                    call_order = blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                        .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_string))
                        .collect();
                }
                json!({"role": role, "content": blocks})
            })
            .collect();

        let mut body = Map::new();
        body.insert("model".into(), Value::from(self.config.model.as_str()));
        body.insert(
            "max_tokens".into(),
            Value::from(self.config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        if !system.is_empty() {
            body.insert("system".into(), Value::from(system.join("\n\n")));
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    let mut tool = Map::new();
                    tool.insert("name".into(), Value::from(t.name.as_str()));
                    if !t.description.is_empty() {
                        tool.insert("description".into(), Value::from(t.description.as_str()));
                    }
                    let schema = match &*t.parameters {
                        Value::Null => json!({"type": "object", "properties": {}}),
                        Value::Object(o) if o.is_empty() => {
                            json!({"type": "object", "properties": {}})
                        }
                        other => other.clone(),
                    };
                    tool.insert("input_schema".into(), schema);
                    Value::Object(tool)
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let mut choice = match &request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Function(name) => json!({"type": "tool", "name": name}),
                ToolChoice::None => json!({"type": "none"}),
            };
            if self.config.parallel_tool_calls == Some(false)
                && request.tool_choice != ToolChoice::None
            {
                choice["disable_parallel_tool_use"] = Value::Bool(true);
            }
            body.insert("tool_choice".into(), choice);
        }
        if let Some(t) = self.config.temperature {
            body.insert("temperature".into(), Value::from(t));
        }
        if let Some(id) = container {
            body.insert("container".into(), Value::from(id));
        }
        // `seed`: the Messages API has none; it is ignored.
        let mut body = Value::Object(body);
        self.config.merge_extra(&mut body);
        Ok(body)
    }

    /// The `tool_use` block of an earlier call in message `index`.
    fn tool_use_block(&self, index: usize, call: &ToolCall) -> Result<Value, ProviderError> {
        let Some(id) = call.id.as_deref() else {
            return Err(self.unsupported(format!(
                "messages[{index}]: the earlier call to `{}` has no id, and Anthropic needs one to pair the tool_use with its tool_result",
                call.name
            )));
        };
        match serde_json::from_str::<Value>(&call.arguments) {
            Ok(input @ Value::Object(_)) => Ok(json!({
                "type": "tool_use",
                "id": id,
                "name": call.name,
                "input": input,
            })),
            _ => Err(self.unsupported(format!(
                "messages[{index}]: the arguments of the earlier call `{}` (id `{id}`) are not a JSON object, and Anthropic's tool_use.input must be one; arguments: {}",
                call.name,
                snippet(&call.arguments)
            ))),
        }
    }

    /// Read a Messages API response body (pure). `Err` explains what is missing or
    /// wrong, or carries the API error of an error body.
    pub fn parse_response(body: &Value) -> Result<Response, String> {
        let Some(obj) = body.as_object() else {
            return Err(format!(
                "the body is not a JSON object; body starts: {}",
                snippet(&body.to_string())
            ));
        };
        let kind = obj.get("type").and_then(Value::as_str);
        if kind == Some("error") || (obj.get("error").is_some() && obj.get("content").is_none()) {
            return Err(api_error(body));
        }
        let Some(content) = obj.get("content").and_then(Value::as_array) else {
            return Err(format!(
                "no `content` array; body starts: {}",
                snippet(&body.to_string())
            ));
        };
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for (i, block) in content.iter().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    if let Some(t) = block.get("text").and_then(Value::as_str) {
                        text.push_str(t);
                    }
                }
                Some("tool_use") => {
                    let Some(name) = block.get("name").and_then(Value::as_str) else {
                        return Err(format!("content[{i}]: a tool_use block has no `name`"));
                    };
                    let Some(input) = block.get("input") else {
                        return Err(format!(
                            "content[{i}]: the tool_use block `{name}` has no `input`"
                        ));
                    };
                    tool_calls.push(ToolCall {
                        id: block.get("id").and_then(Value::as_str).map(str::to_string),
                        name: name.to_string(),
                        arguments: input.to_string(),
                    });
                }
                // server_tool_use (tools Anthropic runs), their *_tool_result blocks,
                // thinking, redacted_thinking and anything newer: not client calls.
                _ => {}
            }
        }
        let mut response = Response {
            state: turn_state(content, obj.get("container")),
            text: (!text.is_empty()).then_some(text),
            tool_calls,
            finish_reason: obj
                .get("stop_reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Response::default()
        };
        parse_usage(obj.get("usage")).apply(&mut response, "anthropic");
        Ok(response)
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    async fn complete(
        &self,
        request: &Request,
        _key: &TrialKey,
    ) -> Result<Response, ProviderError> {
        // Serialised before the await: the request tree is freed while it is still hot.
        let payload = {
            let mut body = self.build_body(request)?;
            if self.config.stream {
                // Set after the extra fields: how the answer is read decides.
                body["stream"] = Value::Bool(true);
            }
            serde_json::to_vec(&body).map_err(|e| ProviderError::Unsupported {
                provider: self.config.provider.clone(),
                message: e.to_string(),
            })?
        };
        let url = format!("{}/messages", self.config.base_url);
        let mut headers = vec![Header {
            name: "anthropic-version".into(),
            value: ANTHROPIC_VERSION.to_string(),
            sensitive: false,
        }];
        if let Some(key) = self.config.key() {
            headers.push(Header {
                name: "x-api-key".into(),
                value: key.to_string(),
                sensitive: true,
            });
        }
        headers.extend(self.config.custom_headers());
        let secrets = self.config.secrets();
        let exchange = Exchange {
            http: &self.http,
            provider: &self.config.provider,
            url: &url,
            headers: &headers,
            secrets: &secrets,
        };
        if self.config.stream {
            return exchange.stream(payload, AnthropicAssembler::new()).await;
        }
        exchange.send(payload, Self::parse_response).await
    }

    fn source(&self) -> String {
        format!(
            "live {}:{} at {}",
            self.config.provider, self.config.model, self.config.base_url
        )
    }

    fn endpoint(&self) -> Option<super::Endpoint> {
        Some(self.config.endpoint())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use secrecy::SecretString;
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::provider::ToolDefinition;
    use crate::provider::http::{HttpError, HttpSettings};

    const SINGLE_TOOL_USE: &str = include_str!("testdata/anthropic/msg_single_tool_use.json");
    const TEXT_AND_TOOL_USE: &str = include_str!("testdata/anthropic/msg_text_and_tool_use.json");
    const TEXT_END_TURN: &str = include_str!("testdata/anthropic/msg_text_end_turn.json");
    const SERVER_TOOL_USE: &str =
        include_str!("testdata/anthropic/msg_text_server_tool_use_and_tool_use.json");
    const ERROR_429: &str = include_str!("testdata/anthropic/error_429_rate_limit.json");
    const ERROR_400: &str = include_str!("testdata/anthropic/error_400_invalid_request.json");
    const OVERLOADED_SSE: &str = include_str!("testdata/anthropic/stream_error_overloaded.sse");

    const KEY: &str = "fake-anthropic-key-SECRETSECRET1234";

    /// The `data:` payload of the recorded overloaded error event.
    fn overloaded_body() -> &'static str {
        OVERLOADED_SSE
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("the fixture has a data line")
    }

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn weather_tool() -> ToolDefinition {
        ToolDefinition {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"location": {"type": "string"}, "units": {"enum": ["c", "f"]}},
                "required": ["location"]
            })
            .into(),
        }
    }

    fn request(tool_choice: ToolChoice) -> Request {
        Request {
            messages: vec![Message::User {
                content: "Weather in San Francisco?".into(),
            }],
            tools: Arc::new(vec![weather_tool()]),
            tool_choice,
        }
    }

    fn trial() -> TrialKey {
        TrialKey {
            case_id: "weather".into(),
            target: "anthropic:claude-sonnet-4-5".into(),
            variant: "base".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        }
    }

    fn config(base_url: &str) -> ProviderConfig {
        let mut c = ProviderConfig::new("anthropic", "claude-sonnet-4-5", base_url);
        c.api_key = Some(SecretString::from(KEY.to_string()));
        c
    }

    fn offline(config: ProviderConfig) -> AnthropicProvider {
        AnthropicProvider::new(config, Http::new(HttpSettings::default()).unwrap())
    }

    /// A server that answers at once is far inside this timeout even on a loaded
    /// machine, so attempt counts never depend on the machine's speed; the timeout test
    /// uses a server that does not answer at all.
    fn fast() -> HttpSettings {
        HttpSettings {
            timeout: Duration::from_secs(30),
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(2),
        }
    }

    fn live(server: &MockServer, settings: HttpSettings) -> AnthropicProvider {
        AnthropicProvider::new(
            config(&format!("{}/v1", server.uri())),
            Http::new(settings).unwrap(),
        )
    }

    /// Answer `body` with `status` on `POST /v1/messages` (at most `times` times).
    async fn answer(server: &MockServer, status: u16, body: &str, times: Option<u64>) {
        let mut mock = Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(status)
                    .set_body_raw(body.as_bytes().to_vec(), "application/json"),
            );
        if let Some(n) = times {
            mock = mock.up_to_n_times(n);
        }
        mock.mount(server).await;
    }

    async fn requests(server: &MockServer) -> usize {
        server.received_requests().await.unwrap().len()
    }

    fn assert_no_key(err: &ProviderError) {
        assert!(!err.to_string().contains(KEY), "{err}");
        assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    }

    // ---- build_body ----

    #[test]
    fn every_tool_choice_mode_has_its_wire_value() {
        let p = offline(config("https://api.anthropic.com/v1"));
        let cases = [
            (ToolChoice::Auto, json!({"type": "auto"})),
            (ToolChoice::Required, json!({"type": "any"})),
            (
                ToolChoice::Function("get_weather".into()),
                json!({"type": "tool", "name": "get_weather"}),
            ),
            (ToolChoice::None, json!({"type": "none"})),
        ];
        for (choice, wire) in cases {
            let body = p.build_body(&request(choice.clone())).unwrap();
            assert_eq!(body["tool_choice"], wire, "{choice}");
            assert_eq!(body["tools"][0]["input_schema"], *weather_tool().parameters);
        }
    }

    #[test]
    fn parallel_tool_calls_false_disables_parallel_tool_use_except_under_none() {
        let mut c = config("https://api.anthropic.com/v1");
        c.parallel_tool_calls = Some(false);
        let p = offline(c);
        for (choice, wire) in [
            (
                ToolChoice::Auto,
                json!({"type": "auto", "disable_parallel_tool_use": true}),
            ),
            (
                ToolChoice::Required,
                json!({"type": "any", "disable_parallel_tool_use": true}),
            ),
            (
                ToolChoice::Function("get_weather".into()),
                json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true}),
            ),
            (ToolChoice::None, json!({"type": "none"})),
        ] {
            assert_eq!(p.build_body(&request(choice)).unwrap()["tool_choice"], wire);
        }
        let mut c = config("https://api.anthropic.com/v1");
        c.parallel_tool_calls = Some(true);
        let body = offline(c).build_body(&request(ToolChoice::Auto)).unwrap();
        assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    }

    #[test]
    fn without_tools_neither_tools_nor_tool_choice_is_sent() {
        let p = offline(config("https://api.anthropic.com/v1"));
        let mut r = request(ToolChoice::Required);
        r.tools = Arc::new(Vec::new());
        let body = p.build_body(&r).unwrap();
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
    }

    #[test]
    fn tools_without_description_or_schema_still_form_valid_definitions() {
        let p = offline(config("https://api.anthropic.com/v1"));
        let mut r = request(ToolChoice::Auto);
        r.tools = Arc::new(vec![ToolDefinition {
            name: "ping".into(),
            description: String::new(),
            parameters: Value::Null.into(),
        }]);
        let body = p.build_body(&r).unwrap();
        assert_eq!(
            body["tools"],
            json!([{"name": "ping", "input_schema": {"type": "object", "properties": {}}}])
        );
    }

    #[test]
    fn a_multi_turn_conversation_alternates_roles_with_merged_tool_results() {
        let p = offline(config("https://api.anthropic.com/v1"));
        let r = Request {
            messages: vec![
                Message::System {
                    content: "You are a weather assistant.".into(),
                },
                Message::System {
                    content: "Answer briefly.".into(),
                },
                Message::User {
                    content: "Weather in SF and NYC?".into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some("Checking both.".into()),
                    tool_calls: vec![
                        ToolCall {
                            id: Some("toolu_1".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"location": "San Francisco, CA"}"#.into(),
                        },
                        ToolCall {
                            id: Some("toolu_2".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"location":"New York, NY","units":"f"}"#.into(),
                        },
                    ],
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "toolu_1".into(),
                    content: r#"{"temp": 18}"#.into(),
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "toolu_2".into(),
                    content: r#"{"temp": 75}"#.into(),
                },
                Message::User {
                    content: "And in Celsius?".into(),
                },
            ],
            tools: Arc::new(vec![weather_tool()]),
            tool_choice: ToolChoice::Auto,
        };
        let body = p.build_body(&r).unwrap();
        let expected = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "You are a weather assistant.\n\nAnswer briefly.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in SF and NYC?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                     "input": {"location": "San Francisco, CA"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather",
                     "input": {"location": "New York, NY", "units": "f"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"temp\": 18}"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "{\"temp\": 75}"},
                    {"type": "text", "text": "And in Celsius?"}
                ]}
            ],
            "tools": [{
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": weather_tool().parameters
            }],
            "tool_choice": {"type": "auto"}
        });
        assert_eq!(body, expected);
        // Key order on the wire: model first, as written.
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "model",
                "max_tokens",
                "system",
                "messages",
                "tools",
                "tool_choice"
            ]
        );
    }

    #[test]
    fn tool_results_open_the_user_turn_and_empty_turns_are_dropped() {
        let p = offline(config("https://api.anthropic.com/v1"));
        let r = Request {
            messages: vec![
                Message::User {
                    content: "Go".into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some(String::new()),
                    tool_calls: vec![ToolCall {
                        id: Some("c1".into()),
                        name: "get_weather".into(),
                        arguments: "{}".into(),
                    }],
                },
                Message::Assistant {
                    state: None,
                    content: None,
                    tool_calls: Vec::new(),
                },
                Message::User {
                    content: "note".into(),
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "c1".into(),
                    content: "ok".into(),
                },
            ],
            tools: Arc::new(vec![weather_tool()]),
            tool_choice: ToolChoice::Auto,
        };
        let body = p.build_body(&r).unwrap();
        assert!(body.get("system").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "Go"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "ok"},
                    {"type": "text", "text": "note"}
                ]}
            ])
        );
    }

    #[test]
    fn earlier_calls_need_object_arguments_and_an_id() {
        let p = offline(config("https://api.anthropic.com/v1"));
        for (id, arguments, needle) in [
            (Some("c1"), r#"{"location": "Par"#, "not a JSON object"),
            (Some("c1"), "[1, 2]", "not a JSON object"),
            (Some("c1"), "", "not a JSON object"),
            (None, "{}", "has no id"),
        ] {
            let r = Request {
                messages: vec![
                    Message::User {
                        content: "Go".into(),
                    },
                    Message::Assistant {
                        state: None,
                        content: None,
                        tool_calls: vec![ToolCall {
                            id: id.map(str::to_string),
                            name: "get_weather".into(),
                            arguments: arguments.into(),
                        }],
                    },
                ],
                tools: Arc::new(vec![weather_tool()]),
                tool_choice: ToolChoice::Auto,
            };
            let err = p.build_body(&r).unwrap_err();
            assert!(
                matches!(&err, ProviderError::Unsupported { provider, message }
                    if provider == "anthropic" && message.contains(needle)
                        && message.contains("messages[1]") && message.contains("get_weather")),
                "{err}"
            );
        }
    }

    #[test]
    fn sampling_settings_and_extra_fields() {
        let mut c = config("https://api.anthropic.com/v1");
        c.temperature = Some(0.0);
        c.max_tokens = Some(256);
        c.seed = Some(7);
        c.extra.insert("top_k".into(), json!(5));
        c.extra
            .insert("metadata".into(), json!({"user_id": "eval"}));
        let body = offline(c.clone())
            .build_body(&request(ToolChoice::Auto))
            .unwrap();
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["max_tokens"], 256);
        assert_eq!(body["top_k"], 5);
        assert_eq!(body["metadata"], json!({"user_id": "eval"}));
        assert!(body.get("seed").is_none(), "Anthropic has no seed");
        // Extra fields win over ours.
        c.extra.insert("max_tokens".into(), json!(4096));
        c.extra.insert("tool_choice".into(), json!({"type": "any"}));
        let body = offline(c).build_body(&request(ToolChoice::Auto)).unwrap();
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
        // No temperature unless set.
        let body = offline(config("https://api.anthropic.com/v1"))
            .build_body(&request(ToolChoice::Auto))
            .unwrap();
        assert!(body.get("temperature").is_none());
    }

    // ---- parse_response on the recorded wire examples ----

    #[test]
    fn parses_a_single_tool_use() {
        let r = AnthropicProvider::parse_response(&json(SINGLE_TOOL_USE)).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: Some("toolu_01A9HHF5Ezy3oBrKmSgfASm9".into()),
                name: "get_weather".into(),
                arguments: r#"{"location":"San Francisco, CA","units":"f"}"#.into(),
            }]
        );
        assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 656,
                output_tokens: 74,
                estimated: false,
                ..Default::default()
            })
        );
    }

    #[test]
    fn parses_text_and_tool_use() {
        let r = AnthropicProvider::parse_response(&json(TEXT_AND_TOOL_USE)).unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some(
                "I'll get the weather for each of those cities. Let me start by checking San Francisco."
            )
        );
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(
            r.tool_calls[0].id.as_deref(),
            Some("toolu_01LRanfq6DmHn1yDTB4d1SAh")
        );
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"location":"San Francisco, CA","units":"f"}"#
        );
        assert_eq!(r.usage.unwrap().input_tokens, 701);
        assert_eq!(r.usage.unwrap().output_tokens, 93);
    }

    #[test]
    fn parses_a_text_answer() {
        let r = AnthropicProvider::parse_response(&json(TEXT_END_TURN)).unwrap();
        assert!(r.tool_calls.is_empty());
        assert!(
            r.text
                .unwrap()
                .starts_with("I apologize, but I'm getting an error")
        );
        assert_eq!(r.finish_reason.as_deref(), Some("end_turn"));
        assert_eq!(r.usage.unwrap().input_tokens, 760);
    }

    #[test]
    fn server_tool_use_is_not_a_client_call() {
        let r = AnthropicProvider::parse_response(&json(SERVER_TOOL_USE)).unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some("I'll check the weather for all three cities in Celsius simultaneously.")
        );
        // The code_execution server_tool_use block is skipped; the get_weather call it
        // made (caller code_execution) is a client call and is kept.
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "get_weather");
        assert_eq!(
            r.tool_calls[0].id.as_deref(),
            Some("toolu_011MDRpaZRMRRjtFkJizD6nS")
        );
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"location":"San Francisco, CA","units":"c"}"#
        );
        assert_eq!(r.usage.unwrap().input_tokens, 3182);
        assert_eq!(r.usage.unwrap().output_tokens, 237);
    }

    #[test]
    fn error_bodies_are_errors_naming_type_and_message() {
        let e = AnthropicProvider::parse_response(&json(ERROR_429)).unwrap_err();
        assert!(e.contains("rate_limit_error"), "{e}");
        assert!(e.contains("20,000,000 prompt bytes per hour"), "{e}");
        assert!(e.contains("req_011CYK5mje9HkutJtmfPzzNC"), "{e}");
        let e = AnthropicProvider::parse_response(&json(ERROR_400)).unwrap_err();
        assert!(e.contains("invalid_request_error"), "{e}");
        assert!(e.contains("unexpected `tool_use_id`"), "{e}");
        let e = AnthropicProvider::parse_response(&json(overloaded_body())).unwrap_err();
        assert_eq!(e, "the API returned an error: overloaded_error: Overloaded");
    }

    #[test]
    fn usage_counts_cache_tokens_as_input() {
        let mut body = json(SINGLE_TOOL_USE);
        body["usage"]["cache_creation_input_tokens"] = json!(100);
        body["usage"]["cache_read_input_tokens"] = json!(2000);
        let u = AnthropicProvider::parse_response(&body)
            .unwrap()
            .usage
            .unwrap();
        assert_eq!(u.input_tokens, 656 + 100 + 2000);
        assert_eq!(u.output_tokens, 74);
        // Null and absent cache fields count as 0; no usage at all is None.
        body["usage"] =
            json!({"input_tokens": 5, "cache_read_input_tokens": null, "output_tokens": 1});
        let u = AnthropicProvider::parse_response(&body)
            .unwrap()
            .usage
            .unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (5, 1));
        body.as_object_mut().unwrap().remove("usage");
        assert_eq!(
            AnthropicProvider::parse_response(&body).unwrap().usage,
            None
        );
    }

    #[test]
    fn unknown_blocks_are_skipped_and_broken_shapes_rejected() {
        let body = json!({
            "type": "message",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "abc"},
                {"type": "redacted_thinking", "data": "xyz"},
                {"type": "text", "text": "Sure, ", "citations": []},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "text", "text": "done."},
                {"type": "tool_use", "id": "toolu_9", "name": "noop", "input": {}}
            ],
            "stop_reason": null
        });
        let r = AnthropicProvider::parse_response(&body).unwrap();
        assert_eq!(r.text.as_deref(), Some("Sure, done."));
        assert_eq!(r.tool_calls[0].arguments, "{}");
        assert_eq!(r.finish_reason, None);
        assert_eq!(r.usage, None);

        let e = AnthropicProvider::parse_response(&json!([1])).unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
        let e = AnthropicProvider::parse_response(&json!({"type": "message"})).unwrap_err();
        assert!(e.contains("no `content` array"), "{e}");
        let e = AnthropicProvider::parse_response(
            &json!({"content": [{"type": "tool_use", "id": "t", "input": {}}]}),
        )
        .unwrap_err();
        assert!(e.contains("content[0]") && e.contains("no `name`"), "{e}");
        let e = AnthropicProvider::parse_response(
            &json!({"content": [{"type": "tool_use", "id": "t", "name": "x"}]}),
        )
        .unwrap_err();
        assert!(e.contains("no `input`"), "{e}");
    }

    #[test]
    fn source_names_target_and_endpoint() {
        let p = offline(config("https://api.anthropic.com/v1/"));
        assert_eq!(
            p.source(),
            "live anthropic:claude-sonnet-4-5 at https://api.anthropic.com/v1"
        );
    }

    // ---- the whole provider against a local fake server ----

    #[tokio::test]
    async fn live_single_tool_use() {
        let server = MockServer::start().await;
        answer(&server, 200, SINGLE_TOOL_USE, None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "get_weather");
        assert_eq!(r.attempts, 1);
        assert!(r.latency_ms > 0.0);
        assert_eq!(r.raw, Some(json(SINGLE_TOOL_USE)));
    }

    #[tokio::test]
    async fn live_text_and_tool_use() {
        let server = MockServer::start().await;
        answer(&server, 200, TEXT_AND_TOOL_USE, None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert!(r.text.unwrap().starts_with("I'll get the weather"));
        assert_eq!(
            r.tool_calls[0].id.as_deref(),
            Some("toolu_01LRanfq6DmHn1yDTB4d1SAh")
        );
        assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
    }

    #[tokio::test]
    async fn live_text_answer() {
        let server = MockServer::start().await;
        answer(&server, 200, TEXT_END_TURN, None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert!(r.tool_calls.is_empty());
        assert!(r.text.is_some());
        assert_eq!(r.finish_reason.as_deref(), Some("end_turn"));
    }

    #[tokio::test]
    async fn live_usage_with_cache_tokens() {
        let server = MockServer::start().await;
        let mut body = json(TEXT_END_TURN);
        body["usage"]["cache_creation_input_tokens"] = json!(1200);
        body["usage"]["cache_read_input_tokens"] = json!(3400);
        answer(&server, 200, &body.to_string(), None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        let u = r.usage.unwrap();
        assert_eq!(u.input_tokens, 760 + 1200 + 3400);
        assert_eq!(u.output_tokens, 63);
        assert!(!u.estimated);
    }

    #[tokio::test]
    async fn live_unknown_tool_name_is_passed_through() {
        let server = MockServer::start().await;
        let mut body = json(SINGLE_TOOL_USE);
        body["content"][0]["name"] = json!("launch_rockets");
        answer(&server, 200, &body.to_string(), None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Required), &trial())
            .await
            .unwrap();
        assert_eq!(r.tool_calls[0].name, "launch_rockets");
    }

    #[tokio::test]
    async fn live_429_waits_for_retry_after_then_succeeds() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("retry-after", "1")
                    .insert_header("x-should-retry", "true")
                    .set_body_raw(ERROR_429.as_bytes().to_vec(), "application/json"),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
        answer(&server, 200, SINGLE_TOOL_USE, None).await;
        let started = Instant::now();
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(950),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(r.attempts, 2);
        assert_eq!(requests(&server).await, 2);
        assert_eq!(r.tool_calls[0].name, "get_weather");
    }

    #[tokio::test]
    async fn live_529_overloaded_then_succeeds() {
        let server = MockServer::start().await;
        answer(&server, 529, overloaded_body(), Some(1)).await;
        answer(&server, 200, TEXT_AND_TOOL_USE, None).await;
        let r = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.attempts, 2);
        assert_eq!(requests(&server).await, 2);
        assert_eq!(r.tool_calls.len(), 1);
    }

    #[tokio::test]
    async fn live_529_every_time_fails_after_max_attempts() {
        let server = MockServer::start().await;
        answer(&server, 529, overloaded_body(), None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ProviderError::Http { source: HttpError::Status { status: 529, attempts: 3, message }, .. }
                if message.contains("overloaded_error")),
            "{err}"
        );
        assert_eq!(requests(&server).await, 3);
    }

    #[tokio::test]
    async fn live_400_is_not_retried() {
        let server = MockServer::start().await;
        answer(&server, 400, ERROR_400, None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ProviderError::Http { provider, source: HttpError::Status { status: 400, attempts: 1, .. } }
                if provider == "anthropic"),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains("invalid_request_error"), "{text}");
        assert!(
            text.contains("unexpected `tool_use_id` found in `tool_result` blocks"),
            "{text}"
        );
        assert_eq!(requests(&server).await, 1);
    }

    #[tokio::test]
    async fn live_timeout_fails_after_max_attempts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(SINGLE_TOOL_USE.as_bytes().to_vec(), "application/json")
                    // Never, as far as the test is concerned.
                    .set_delay(Duration::from_secs(600)),
            )
            .mount(&server)
            .await;
        let settings = HttpSettings {
            max_attempts: 2,
            timeout: Duration::from_millis(500),
            ..fast()
        };
        let err = live(&server, settings)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                ProviderError::Http {
                    source: HttpError::Timeout { attempts: 2, .. },
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(requests(&server).await, 2);
    }

    #[tokio::test]
    async fn live_malformed_body_is_an_error_without_the_key() {
        let server = MockServer::start().await;
        answer(
            &server,
            200,
            &format!("<html>upstream proxy error for key {KEY}</html>"),
            None,
        )
        .await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                ProviderError::Http {
                    source: HttpError::InvalidBody { .. },
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("upstream proxy error"), "{err}");
        assert_no_key(&err);
        assert_eq!(requests(&server).await, 1);
    }

    #[tokio::test]
    async fn live_error_in_a_200_is_a_decode_error_without_the_key() {
        let server = MockServer::start().await;
        let body = json!({
            "type": "error",
            "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}
        });
        answer(&server, 200, &body.to_string(), None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ProviderError::Decode { provider, message }
                if provider == "anthropic" && message.contains("authentication_error")
                    && message.contains("invalid x-api-key [REDACTED]")),
            "{err}"
        );
        assert_no_key(&err);

        // The recorded overloaded event, delivered with a 200.
        let server = MockServer::start().await;
        answer(&server, 200, overloaded_body(), None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        // Decode errors quote the start of the body after the reason.
        assert_eq!(
            err.to_string(),
            "anthropic response not understood: the API returned an error: overloaded_error: Overloaded; \
             body starts: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
        );
    }

    #[tokio::test]
    async fn live_echoed_key_never_reaches_error_texts() {
        let server = MockServer::start().await;
        let body = json!({
            "type": "error",
            "error": {"type": "authentication_error", "message": format!("invalid x-api-key: {KEY}")}
        });
        answer(&server, 401, &body.to_string(), None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("authentication_error"), "{err}");
        assert!(err.to_string().contains("[REDACTED]"), "{err}");
        assert_no_key(&err);

        // Retried statuses too: the last attempt's echo is scrubbed.
        let server = MockServer::start().await;
        answer(&server, 500, &format!("internal error; key={KEY}"), None).await;
        let err = live(&server, fast())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("HTTP 500 after 3 attempt(s)"),
            "{err}"
        );
        assert_no_key(&err);
    }

    #[tokio::test]
    async fn live_request_carries_headers_tools_tool_choice_and_tool_results() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("x-api-key", KEY))
            .and(header("anthropic-version", "2023-06-01"))
            .and(header("content-type", "application/json"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(TEXT_END_TURN.as_bytes().to_vec(), "application/json"),
            )
            .expect(1)
            .mount(&server)
            .await;
        let mut c = config(&format!("{}/v1", server.uri()));
        c.parallel_tool_calls = Some(false);
        c.temperature = Some(0.2);
        let p = AnthropicProvider::new(c, Http::new(fast()).unwrap());
        let r = Request {
            messages: vec![
                Message::System {
                    content: "Be brief.".into(),
                },
                Message::User {
                    content: "Weather in SF and NYC?".into(),
                },
                Message::Assistant {
                    state: None,
                    content: None,
                    tool_calls: vec![
                        ToolCall {
                            id: Some("toolu_a".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"location":"SF"}"#.into(),
                        },
                        ToolCall {
                            id: Some("toolu_b".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"location":"NYC"}"#.into(),
                        },
                    ],
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "toolu_a".into(),
                    content: "18 C".into(),
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "toolu_b".into(),
                    content: "24 C".into(),
                },
            ],
            tools: Arc::new(vec![weather_tool()]),
            tool_choice: ToolChoice::Function("get_weather".into()),
        };
        p.complete(&r, &trial()).await.unwrap();
        let received = server.received_requests().await.unwrap();
        assert_eq!(received.len(), 1);
        let sent: Value = received[0].body_json().unwrap();
        assert_eq!(sent["model"], "claude-sonnet-4-5");
        assert_eq!(sent["max_tokens"], 1024);
        assert_eq!(sent["temperature"], 0.2);
        assert_eq!(sent["system"], "Be brief.");
        assert_eq!(
            sent["tools"],
            json!([{
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": weather_tool().parameters
            }])
        );
        assert_eq!(
            sent["tool_choice"],
            json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true})
        );
        let messages = sent["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["role"], "assistant");
        assert_eq!(
            messages[1]["content"][1]["input"],
            json!({"location": "NYC"})
        );
        assert_eq!(
            messages[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "18 C"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "24 C"}
            ]})
        );
        assert!(sent.get("seed").is_none());
    }

    #[tokio::test]
    async fn live_unsupported_history_sends_nothing() {
        let server = MockServer::start().await;
        answer(&server, 200, SINGLE_TOOL_USE, None).await;
        let r = Request {
            messages: vec![
                Message::User {
                    content: "Go".into(),
                },
                Message::Assistant {
                    state: None,
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: Some("c1".into()),
                        name: "get_weather".into(),
                        arguments: "not json".into(),
                    }],
                },
            ],
            tools: Arc::new(vec![weather_tool()]),
            tool_choice: ToolChoice::Auto,
        };
        let err = live(&server, fast())
            .complete(&r, &trial())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Unsupported { .. }), "{err}");
        assert_eq!(requests(&server).await, 0);
    }

    // ---- cache reads and writes ----

    /// The recorded single tool use with the usage of the two calls in Anthropic's
    /// prompt caching docs (docs.claude.com/en/docs/build-with-claude/prompt-caching:
    /// the first call writes the book to the cache, the second reads it).
    fn with_docs_usage(write: u64, read: u64) -> Value {
        let mut body = json(SINGLE_TOOL_USE);
        body["usage"] = serde_json::json!({
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
            "input_tokens": 21,
            "output_tokens": 393
        });
        body
    }

    #[test]
    fn cache_writes_and_reads_are_parts_of_the_input() {
        let first = AnthropicProvider::parse_response(&with_docs_usage(188086, 0)).unwrap();
        assert_eq!(
            first.usage,
            Some(Usage {
                cache_write_tokens: 188086,
                ..Usage::new(21 + 188086, 393)
            })
        );
        let second = AnthropicProvider::parse_response(&with_docs_usage(0, 188086)).unwrap();
        let u = second.usage.unwrap();
        assert_eq!(
            u,
            Usage {
                cached_input_tokens: 188086,
                ..Usage::new(21 + 188086, 393)
            }
        );
        assert_eq!(u.fresh_input_tokens(), 21);
        // The recorded body's zero cache counts (and its nested `cache_creation` split)
        // keep nothing apart.
        let u = AnthropicProvider::parse_response(&json(SINGLE_TOOL_USE))
            .unwrap()
            .usage
            .unwrap();
        assert_eq!(u, Usage::new(656, 74));
        // A bad cache count drops the whole usage, as a bad input count does.
        let mut bad = with_docs_usage(0, 188086);
        bad["usage"]["cache_read_input_tokens"] = serde_json::json!(-3);
        let r = AnthropicProvider::parse_response(&bad).unwrap();
        assert_eq!(r.usage, None);
        assert!(
            r.warnings[0].contains("`cache_read_input_tokens` is -3"),
            "{:?}",
            r.warnings
        );
    }
}
