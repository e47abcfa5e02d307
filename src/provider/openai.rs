//! The OpenAI Chat Completions provider: `POST {base_url}/chat/completions`.
//!
//! One wire format serves OpenAI itself and every OpenAI-compatible server (vLLM,
//! Ollama's `/v1`, LM Studio, OpenRouter, DeepSeek, DashScope compatible mode): only
//! `base_url` and the key differ.
//!
//! The request is built from the neutral [`Request`] ([`OpenAiProvider::build_body`]);
//! the answer is read leniently ([`parse_response`]): vendor extras are ignored, the
//! first choice is used, and tool call `arguments` are kept exactly as sent, invalid
//! JSON included, because that is measured later. Quirks handled:
//!
//! - `arguments` given as a JSON value instead of a string (an object, Ollama native
//!   style) is serialised; `null` is kept as the text `null`, and a missing `arguments`
//!   as the empty text: nothing is turned into valid JSON that the server did not send.
//! - a missing or empty call `id` becomes `None` in [`parse_response`]; a live answer
//!   then gets [`crate::chat::assigned_call_id`]s (by round and position), since a tool
//!   loop pairs each result with its call by id; so do the repeats of an id that
//!   several calls of one answer share ([`Response::assign_missing_ids`]).
//! - empty or whitespace-only `content` (sent alongside tool calls by Ollama and vLLM)
//!   counts as no text; `content` as an array of parts is joined; a `refusal` stands in
//!   for missing `content`.
//! - the deprecated `function_call` field is read when there are no `tool_calls`.
//! - a missing `usage` gives no usage (not zero); `input_tokens`/`output_tokens` are
//!   accepted in place of `prompt_tokens`/`completion_tokens`; the cached part of the
//!   prompt (`prompt_tokens_details.cached_tokens`) and the reasoning part of the
//!   completion (`completion_tokens_details.reasoning_tokens`) are kept apart; an
//!   implausible count (negative, fractional, a string, above
//!   [`usage::MAX_TOKENS_PER_REQUEST`], or a part above its total) drops the usage with
//!   a warning on the response.
//! - a body without `choices` is a decode error that quotes an `error` object if the
//!   server put one in a 200 answer, and names Responses API and Ollama native bodies.
//! - `tools`, `tool_choice` and `parallel_tool_calls` are omitted when no tools are
//!   offered (OpenAI rejects `parallel_tool_calls` without `tools`).
//! - `max_tokens` is not sent when `extra` sets `max_completion_tokens` (the o-series
//!   and newer models accept only the latter).
//! - an earlier call whose arguments are not a JSON object (invalid JSON, `null`, the
//!   empty text) is sent back with `{}` as its arguments: vLLM and Ollama's `/v1` parse
//!   them and refuse the request otherwise (the neutral conversation keeps them raw).
//!
//! With `stream` set in the config the body also asks for `"stream": true` and
//! `"stream_options": {"include_usage": true}` (`extra` still wins), and the answer's
//! chunks are assembled by `openai_stream` into the same [`Response`].
//!
//! Tool results go back as `{"role": "tool", "tool_call_id", "content"}` messages (Ollama's
//! `/v1` and the other compatible servers take the same form). The API has neither an
//! error flag nor a tool name on them: an error result's content is sent as a JSON
//! object `{"error": …}` (the content's JSON, or its text; content that already is an
//! object with an `error` key goes as written).
//!
//! OpenAI itself has no opaque turn state, but compatible servers of reasoning models
//! return the reasoning beside the answer and some require it back: DeepSeek answers a
//! request whose earlier tool-calling turn lacks its `reasoning_content` with a 400, and
//! Kimi, Ollama (`reasoning`), vLLM and OpenRouter (`reasoning_details`) keep their
//! reasoning in context the same way. When the answer's message holds any of
//! [`REASONING_FIELDS`], the response's `state` is `{"openai": {"message": {field:
//! value, …}}}` (each field verbatim) and the assistant turn is sent back with those
//! fields; answers without them (OpenAI's own) have no state and go back as before. A
//! turn's state of another provider is not sent.

use crate::util::json_kind::json_kind;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Exchange;
use super::config::ProviderConfig;
use super::http::{Header, Http, redact};
use super::openai_stream::OpenAiAssembler;
use super::types::{error_object, is_error_object};
use super::usage::{self, UsageReading};
use super::{
    Message, Provider, ProviderError, Request, Response, ToolCall, ToolChoice, ToolDefinition,
    TrialKey,
};

/// A live OpenAI Chat Completions (or compatible) endpoint.
pub struct OpenAiProvider {
    config: ProviderConfig,
    http: Http,
    url: String,
    /// The serialised `tools` array of each shared definition set, by the set's
    /// address (the `Arc` held here keeps the address from being reused). Every trial of
    /// a variant sends the same set; writing its schemas once instead of per request is
    /// most of the CPU a live run spends building bodies.
    tools_json: Mutex<HashMap<usize, CachedTools>>,
}

type CachedTools = (Arc<Vec<ToolDefinition>>, Arc<RawValue>);

/// The wire body: the built fields, plus the cached `tools` array when it is not among
/// them.
#[derive(Serialize)]
struct WireBody<'a> {
    #[serde(flatten)]
    fields: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
}

/// The endpoint for `base_url`: `{base_url}/chat/completions`, or `base_url` itself when
/// it already names that endpoint.
fn chat_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        base.to_string()
    } else {
        format!("{base}/chat/completions")
    }
}

impl OpenAiProvider {
    /// A provider sending to `config.base_url` with `http`.
    pub fn new(config: ProviderConfig, http: Http) -> Self {
        let url = chat_url(&config.base_url);
        OpenAiProvider {
            config,
            http,
            url,
            tools_json: Mutex::new(HashMap::new()),
        }
    }

    /// The settings this provider sends with.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn unsupported(&self, message: String) -> ProviderError {
        ProviderError::Unsupported {
            provider: self.config.provider.clone(),
            message,
        }
    }

    /// The Chat Completions request body for `request`: model, messages, tools and
    /// tool_choice (both omitted without tools), the sampling fields that are set, then
    /// `extra` merged over everything. Fails when tool_choice forces a function that is
    /// not offered, or the temperature is not a finite number.
    pub fn build_body(&self, request: &Request) -> Result<Value, ProviderError> {
        self.body(request, true)
    }

    /// The serialised request body, as [`build_body`](Self::build_body) would give it
    /// but with the `tools` array written from the per-set cache.
    pub fn body_bytes(&self, request: &Request) -> Result<Vec<u8>, ProviderError> {
        let fields = match self.body(request, false)? {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        // `extra` may carry its own `tools`, which wins, as everywhere else.
        let tools = (!request.tools.is_empty() && !fields.contains_key("tools"))
            .then(|| self.cached_tools(&request.tools));
        let wire = WireBody {
            fields: &fields,
            tools: tools.as_deref(),
        };
        // Sized for the tools (nearly all of a body) and the rest, so the buffer is not
        // grown and copied several times on the way.
        let mut out = Vec::with_capacity(tools.as_ref().map_or(0, |t| t.get().len()) + 2048);
        serde_json::to_writer(&mut out, &wire).map_err(|e| self.unsupported(e.to_string()))?;
        Ok(out)
    }

    fn cached_tools(&self, tools: &Arc<Vec<ToolDefinition>>) -> Arc<RawValue> {
        let key = Arc::as_ptr(tools) as usize;
        let mut cache = self.tools_json.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, raw)) = cache.get(&key) {
            return raw.clone();
        }
        let array = Value::Array(tools.iter().map(tool_json).collect());
        let raw: Arc<RawValue> = serde_json::value::to_raw_value(&array)
            .map(Arc::from)
            .unwrap_or_else(|_| Arc::from(RawValue::from_string("[]".into()).expect("valid JSON")));
        cache.insert(key, (tools.clone(), raw.clone()));
        raw
    }

    fn body(&self, request: &Request, with_tools: bool) -> Result<Value, ProviderError> {
        let mut body = Map::new();
        body.insert("model".into(), Value::from(self.config.model.clone()));
        body.insert(
            "messages".into(),
            Value::Array(request.messages.iter().map(message_json).collect()),
        );
        if !request.tools.is_empty() {
            if let ToolChoice::Function(name) = &request.tool_choice
                && !request.tools.iter().any(|t| &t.name == name)
            {
                return Err(self.unsupported(format!(
                    "tool_choice forces function `{name}`, which is not among the tools offered"
                )));
            }
            if with_tools {
                body.insert(
                    "tools".into(),
                    Value::Array(request.tools.iter().map(tool_json).collect()),
                );
            }
            body.insert("tool_choice".into(), tool_choice_json(&request.tool_choice));
            if let Some(parallel) = self.config.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), Value::Bool(parallel));
            }
        }
        if let Some(t) = self.config.temperature {
            let n = serde_json::Number::from_f64(t)
                .ok_or_else(|| self.unsupported(format!("temperature {t} is not a number")))?;
            body.insert("temperature".into(), Value::Number(n));
        }
        if let Some(max) = self.config.max_tokens
            && !self.config.extra.contains_key("max_completion_tokens")
        {
            body.insert("max_tokens".into(), Value::from(max));
        }
        if let Some(seed) = self.config.seed {
            body.insert("seed".into(), Value::from(seed));
        }
        // A streamed answer (see `openai_stream`); usage comes in a last chunk only when
        // asked for. `extra` may still override both.
        if self.config.json_answers && request.tools.is_empty() {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        if self.config.stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        let mut body = Value::Object(body);
        self.config.merge_extra(&mut body);
        Ok(body)
    }
}

/// The fields of an answer's message that a compatible server of a reasoning model
/// wants back on the assistant turn (see the module docs); nothing else of a saved
/// message is ever sent, so a damaged state can not add or replace other fields.
pub const REASONING_FIELDS: &[&str] = &["reasoning_content", "reasoning", "reasoning_details"];

/// The key of this wire's part in an assistant turn's state.
const STATE_KEY: &str = "openai";

/// The state of an answer: its [`REASONING_FIELDS`] that hold something, verbatim;
/// `None` when there are none. `null` and `""` are left out: they carry nothing to
/// keep, and a server whose model does not reason may refuse the field on input (Groq
/// answers 400 to a `reasoning` its model does not support).
fn turn_state(message: &Map<String, Value>) -> Option<Value> {
    let kept: Map<String, Value> = REASONING_FIELDS
        .iter()
        .filter_map(|k| {
            let v = message.get(*k).filter(|v| !is_empty_field(v))?;
            Some((k.to_string(), v.clone()))
        })
        .collect();
    (!kept.is_empty()).then(|| json!({ STATE_KEY: { "message": kept } }))
}

/// The saved reasoning fields of an assistant turn's state, to send back with it.
fn saved_fields(state: Option<&Value>) -> impl Iterator<Item = (&str, &Value)> {
    let saved = state
        .and_then(|s| s.get(STATE_KEY))
        .and_then(|s| s.get("message"))
        .and_then(Value::as_object);
    REASONING_FIELDS
        .iter()
        .filter_map(move |k| Some((*k, saved?.get(*k).filter(|v| !is_empty_field(v))?)))
}

fn is_empty_field(v: &Value) -> bool {
    v.is_null() || v.as_str() == Some("")
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        // Only this wire's saved reasoning goes back: a `state` from another provider
        // is ignored.
        Message::Assistant {
            content,
            tool_calls,
            state,
        } => {
            let mut m = Map::new();
            m.insert("role".into(), Value::from("assistant"));
            // Always a string, `""` when the turn only called tools: OpenAI takes it, and
            // it is the one form every compatible server's chat template reads. A
            // missing key breaks templates that read `message['content']` (llama-cpp-
            // python's chatml-function-calling: "'dict object' has no attribute
            // 'content'", a 500), and null is refused by servers that type it as a
            // string (llama-cpp-python again) or rendered as "None" by templates that
            // print it (vLLM's and llama.cpp's Jinja templates test it for a string).
            let text = content.clone().unwrap_or_default();
            m.insert("content".into(), Value::from(text));
            for (field, value) in saved_fields(state.as_ref()) {
                m.insert(field.into(), value.clone());
            }
            if !tool_calls.is_empty() {
                m.insert(
                    "tool_calls".into(),
                    Value::Array(tool_calls.iter().map(call_json).collect()),
                );
            }
            Value::Object(m)
        }
        // The API has no error flag on a tool message (nor a `name` field): an error
        // result's content is sent as a JSON object `{"error": …}`.
        Message::Tool {
            tool_call_id,
            content,
            is_error,
            ..
        } => {
            // Content that already is an error object goes as written.
            let content = if *is_error && !is_error_object(content) {
                error_object(content).to_string()
            } else {
                content.clone()
            };
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

fn call_json(call: &ToolCall) -> Value {
    let mut c = Map::new();
    if let Some(id) = &call.id {
        c.insert("id".into(), Value::from(id.clone()));
    }
    c.insert("type".into(), Value::from("function"));
    c.insert(
        "function".into(),
        json!({"name": call.name, "arguments": sent_arguments(&call.arguments)}),
    );
    Value::Object(c)
}

/// The arguments of an earlier call as they are sent back: as the model wrote them when
/// they are a JSON object, else `{}`. Servers that render the conversation through a
/// chat template parse them (vLLM's `json.loads`, Ollama's `/v1` "invalid tool call
/// arguments") and refuse the whole request when they are not an object, which would
/// end a tool loop in an error over the model's own malformed call; the model has
/// already read why the call was refused in its tool result, and the transcript keeps
/// the arguments as written.
fn sent_arguments(raw: &str) -> &str {
    let is_object =
        raw.trim_start().starts_with('{') && serde_json::from_str::<&RawValue>(raw).is_ok();
    if is_object { raw } else { "{}" }
}

fn tool_json(tool: &ToolDefinition) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), Value::from(tool.name.clone()));
    f.insert("description".into(), Value::from(tool.description.clone()));
    if !tool.parameters.is_null() {
        f.insert("parameters".into(), (*tool.parameters).clone());
    }
    json!({"type": "function", "function": f})
}

fn tool_choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::None => Value::from("none"),
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::Required => Value::from("required"),
        ToolChoice::Function(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The message of an `error` object some servers return with status 200 (or send as
/// an event inside a stream).
pub(super) fn embedded_error(obj: &Map<String, Value>) -> Option<String> {
    match obj.get("error")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Object(e) => Some(match e.get("message") {
            Some(Value::String(m)) => m.clone(),
            _ => Value::Object(e.clone()).to_string(),
        }),
        other => Some(other.to_string()),
    }
}

fn missing_choices(obj: &Map<String, Value>) -> String {
    if let Some(e) = embedded_error(obj) {
        format!("no `choices`; the body holds an error: {e}")
    } else if obj.contains_key("output") {
        "no `choices`; this looks like a Responses API body (`output`), not Chat Completions"
            .to_string()
    } else if obj.contains_key("message") && obj.contains_key("done") {
        "no `choices`; this looks like Ollama's native /api/chat body: use a base_url ending in /v1"
            .to_string()
    } else {
        "no `choices` in the response".to_string()
    }
}

/// The message's text: a string, or the text parts of an array; empty or
/// whitespace-only text counts as none; a refusal stands in for missing content.
fn message_text(message: &Map<String, Value>) -> Option<String> {
    let text = match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect::<String>(),
        ),
        _ => None,
    }
    .filter(|t| !t.trim().is_empty());
    text.or_else(|| {
        message
            .get("refusal")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .map(str::to_string)
    })
}

/// One call from a `tool_calls` entry (`{id, type, function: {name, arguments}}`) or a
/// legacy `function_call` (`{name, arguments}`).
fn parse_call(entry: &Value, at: &str) -> Result<ToolCall, String> {
    let obj = entry
        .as_object()
        .ok_or_else(|| format!("`{at}` is {} instead of an object", json_kind(entry)))?;
    let function = match obj.get("function") {
        Some(Value::Object(f)) => f,
        Some(other) => {
            return Err(format!(
                "`{at}.function` is {} instead of an object",
                json_kind(other)
            ));
        }
        None => obj,
    };
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{at}` has no function name"))?
        .to_string();
    // Kept as sent: `null` stays the text `null` (valid JSON, but not an object, so it
    // fails an object schema) and a missing field is the empty text (invalid JSON).
    let arguments = match function.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        None => String::new(),
        Some(other) => other.to_string(),
    };
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_string);
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

/// The usage section, its counts checked ([`super::usage`]); `input_tokens` and
/// `output_tokens` are accepted in place of `prompt_tokens` and `completion_tokens`.
/// The cached part of the prompt is `prompt_tokens_details.cached_tokens` (or
/// `input_tokens_details.cached_tokens`, the Responses API's name, or DeepSeek's
/// `prompt_cache_hit_tokens`), the reasoning part of the completion
/// `completion_tokens_details.reasoning_tokens` (or `output_tokens_details.…`): both are
/// already inside the totals. OpenAI bills no cache writes.
fn parse_usage(usage: Option<&Value>) -> UsageReading {
    let Some(usage) = usage.filter(|u| !u.is_null()) else {
        return UsageReading::Absent;
    };
    let Some(usage) = usage.as_object() else {
        return UsageReading::Implausible(format!(
            "`usage` is {}, not an object",
            json_kind(usage)
        ));
    };
    let totals = usage::reading(
        usage::first_count(usage, &["prompt_tokens", "input_tokens"]),
        usage::first_count(usage, &["completion_tokens", "output_tokens"]),
    );
    usage::with_details(
        totals,
        usage::Details {
            cached_input: usage::first_nested_count(
                usage,
                &[
                    &["prompt_tokens_details", "cached_tokens"],
                    &["input_tokens_details", "cached_tokens"],
                    &["prompt_cache_hit_tokens"],
                ],
            ),
            cache_write: Ok(None),
            reasoning: usage::first_nested_count(
                usage,
                &[
                    &["completion_tokens_details", "reasoning_tokens"],
                    &["output_tokens_details", "reasoning_tokens"],
                ],
            ),
        },
    )
}

/// Read a Chat Completions response body: the first choice's text and tool calls (in
/// order, `arguments` kept as sent), its `finish_reason`, and `usage`. Latency,
/// attempts and `raw` are left for the caller. The error names what is missing.
pub fn parse_response(body: &Value) -> Result<Response, String> {
    let obj = body
        .as_object()
        .ok_or_else(|| format!("the body is {} instead of an object", json_kind(body)))?;
    let choices = match obj.get("choices") {
        Some(Value::Array(choices)) => choices,
        None | Some(Value::Null) => return Err(missing_choices(obj)),
        Some(other) => {
            return Err(format!(
                "`choices` is {} instead of an array",
                json_kind(other)
            ));
        }
    };
    let Some(choice) = choices.first() else {
        return Err(match embedded_error(obj) {
            Some(e) => format!("`choices` is empty; the body holds an error: {e}"),
            None => "`choices` is empty (no completion returned)".to_string(),
        });
    };
    let choice = choice
        .as_object()
        .ok_or_else(|| format!("`choices[0]` is {} instead of an object", json_kind(choice)))?;
    let message = match choice.get("message") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => return Err("`choices[0]` has no `message`".to_string()),
        Some(other) => {
            return Err(format!(
                "`choices[0].message` is {} instead of an object",
                json_kind(other)
            ));
        }
    };
    let mut tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| parse_call(c, &format!("choices[0].message.tool_calls[{i}]")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(format!(
                "`choices[0].message.tool_calls` is {} instead of an array",
                json_kind(other)
            ));
        }
    };
    if tool_calls.is_empty()
        && let Some(legacy) = message.get("function_call").filter(|f| f.is_object())
    {
        tool_calls.push(parse_call(legacy, "choices[0].message.function_call")?);
    }
    let mut response = Response {
        state: turn_state(message),
        text: message_text(message),
        tool_calls,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Response::default()
    };
    parse_usage(obj.get("usage")).apply(&mut response, "the server");
    Ok(response)
}

#[async_trait]
impl Provider for OpenAiProvider {
    async fn complete(
        &self,
        request: &Request,
        _key: &TrialKey,
    ) -> Result<Response, ProviderError> {
        // Serialised before the await: the request tree is freed while it is still hot.
        let payload = self.body_bytes(request)?;
        let round = request.round();
        let secrets = self.config.secrets();
        let headers: Vec<Header> = self
            .config
            .key()
            .filter(|k| !k.is_empty())
            .map(|k| Header {
                name: "authorization".into(),
                value: format!("Bearer {k}"),
                sensitive: true,
            })
            .into_iter()
            .chain(self.config.custom_headers())
            .collect();
        let exchange = Exchange {
            http: &self.http,
            provider: &self.config.provider,
            url: &self.url,
            headers: &headers,
            secrets: &secrets,
        };
        if self.config.stream {
            return exchange.stream(payload, OpenAiAssembler::new(round)).await;
        }
        exchange
            .send(payload, |body| {
                // Some compatible servers send calls without ids; a loop needs one to
                // pair each result with its call.
                parse_response(body).map(|mut r| {
                    r.assign_missing_ids(round);
                    r
                })
            })
            .await
    }

    fn source(&self) -> String {
        redact(
            &format!(
                "live {}:{} at {}",
                self.config.provider, self.config.model, self.config.base_url
            ),
            &self.config.secrets(),
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
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

    use super::*;
    use crate::provider::Usage;

    #[test]
    fn wire_bytes_equal_the_built_body_and_reuse_the_tools_text() {
        let config = ProviderConfig::new("openai", "gpt-4o-mini", "http://127.0.0.1:9/v1");
        let p = OpenAiProvider::new(config, Http::new(Default::default()).unwrap());
        let tools = Arc::new(vec![ToolDefinition {
            name: "get_weather".into(),
            description: "Weather.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                .into(),
        }]);
        let request = Request {
            messages: vec![Message::User {
                content: "北京？".into(),
            }],
            tools: tools.clone(),
            tool_choice: ToolChoice::Required,
        };
        let wire: Value = serde_json::from_slice(&p.body_bytes(&request).unwrap()).unwrap();
        assert_eq!(wire, p.build_body(&request).unwrap());
        let first = p.cached_tools(&tools);
        assert!(Arc::ptr_eq(&first, &p.cached_tools(&tools)));
        // Without tools nothing is added.
        let bare = Request {
            tools: Arc::new(vec![]),
            ..request
        };
        let wire: Value = serde_json::from_slice(&p.body_bytes(&bare).unwrap()).unwrap();
        assert_eq!(wire, p.build_body(&bare).unwrap());
        assert!(wire.get("tools").is_none());
    }
    use crate::provider::http::{HttpError, HttpSettings};

    const KEY: &str = "sk-test-SECRETSECRET1234";

    const TEXT_USAGE_DETAILS: &str =
        include_str!("testdata/openai/chat_text_answer_usage_details.json");
    const TEXT_RECORDED: &str = include_str!("testdata/openai/chat_text_answer_recorded.json");
    const SINGLE_APIREF: &str = include_str!("testdata/openai/chat_single_tool_call_apiref.json");
    const SINGLE_RECORDED: &str =
        include_str!("testdata/openai/chat_single_tool_call_recorded.json");
    const PARALLEL: &str = include_str!("testdata/openai/chat_parallel_tool_calls.json");
    const FINISH_LENGTH: &str = include_str!("testdata/openai/chat_finish_length.json");
    const RESPONSES_API: &str = include_str!("testdata/openai/responses_function_call.json");
    const OLLAMA_NATIVE: &str = include_str!("testdata/openai/ollama_api_chat_tool_call.json");

    fn json_of(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn weather_tools() -> Arc<Vec<ToolDefinition>> {
        Arc::new(vec![
            ToolDefinition {
                name: "get_weather".into(),
                description: "Current weather for a city.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name"},
                        "units": {"type": "string", "enum": ["c", "f"]}
                    },
                    "required": ["city"],
                    "additionalProperties": false
                })
                .into(),
            },
            ToolDefinition {
                name: "get_time".into(),
                description: "Local time in a timezone.".into(),
                parameters: json!({"type": "object", "properties": {"tz": {"type": "string"}}})
                    .into(),
            },
        ])
    }

    fn request(choice: ToolChoice) -> Request {
        Request {
            messages: vec![
                Message::System {
                    content: "You are helpful.".into(),
                },
                Message::User {
                    content: "Weather in Paris?".into(),
                },
            ],
            tools: weather_tools(),
            tool_choice: choice,
        }
    }

    fn multi_turn() -> Request {
        Request {
            messages: vec![
                Message::System {
                    content: "Be brief.".into(),
                },
                Message::User {
                    content: "Weather in Paris and the time in Tokyo?".into(),
                },
                Message::Assistant {
                    state: None,
                    content: None,
                    tool_calls: vec![
                        ToolCall {
                            id: Some("call_1".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"city":"Paris"}"#.into(),
                        },
                        ToolCall {
                            id: Some("call_2".into()),
                            name: "get_time".into(),
                            arguments: r#"{"tz": "Asia/Tokyo"}"#.into(),
                        },
                    ],
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "call_1".into(),
                    content: r#"{"temp": 18}"#.into(),
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "call_2".into(),
                    content: "09:30".into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some("18 °C; 09:30.".into()),
                    tool_calls: vec![],
                },
                Message::User {
                    content: "Thanks".into(),
                },
            ],
            tools: weather_tools(),
            tool_choice: ToolChoice::Auto,
        }
    }

    fn trial() -> TrialKey {
        TrialKey {
            case_id: "weather".into(),
            target: "openai:gpt-4o-mini".into(),
            variant: "base".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        }
    }

    fn offline(config: ProviderConfig) -> OpenAiProvider {
        OpenAiProvider::new(config, Http::new(HttpSettings::default()).unwrap())
    }

    fn config(base_url: &str) -> ProviderConfig {
        let mut c = ProviderConfig::new("openai", "gpt-4o-mini", base_url);
        c.api_key = Some(SecretString::from(KEY.to_string()));
        c
    }

    // ---- build_body ----

    #[test]
    fn build_body_maps_every_tool_choice_mode() {
        let p = offline(config("http://x/v1"));
        let cases = [
            (ToolChoice::None, json!("none")),
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::Required, json!("required")),
            (
                ToolChoice::Function("get_weather".into()),
                json!({"type": "function", "function": {"name": "get_weather"}}),
            ),
        ];
        for (choice, wire) in cases {
            let body = p.build_body(&request(choice.clone())).unwrap();
            assert_eq!(body["tool_choice"], wire, "{choice}");
            assert_eq!(body["tools"].as_array().unwrap().len(), 2);
        }
    }

    #[test]
    fn build_body_rejects_forcing_a_function_not_offered() {
        let p = offline(config("http://x/v1"));
        let err = p
            .build_body(&request(ToolChoice::Function("book_flight".into())))
            .unwrap_err();
        assert!(matches!(err, ProviderError::Unsupported { .. }));
        assert!(err.to_string().contains("`book_flight`"), "{err}");
    }

    #[test]
    fn build_body_omits_tool_fields_without_tools() {
        let mut c = config("http://x/v1");
        c.parallel_tool_calls = Some(false);
        let p = offline(c);
        let mut r = request(ToolChoice::Required);
        r.tools = Arc::new(vec![]);
        let body = p.build_body(&r).unwrap();
        let obj = body.as_object().unwrap();
        for absent in [
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "temperature",
            "max_tokens",
            "seed",
        ] {
            assert!(!obj.contains_key(absent), "{absent} in {body}");
        }
        assert_eq!(body["model"], "gpt-4o-mini");
    }

    #[test]
    fn json_answers_ask_for_json_only_in_requests_without_tools() {
        let mut c = config("http://x/v1");
        c.json_answers = true;
        let p = offline(c);
        let with_tools = p.build_body(&request(ToolChoice::Auto)).unwrap();
        assert!(with_tools.get("response_format").is_none(), "{with_tools}");
        let mut r = request(ToolChoice::Auto);
        r.tools = Arc::new(vec![]);
        let body = p.build_body(&r).unwrap();
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
        let plain = offline(config("http://x/v1")).build_body(&r).unwrap();
        assert!(plain.get("response_format").is_none(), "{plain}");
    }

    #[test]
    fn build_body_maps_a_multi_turn_conversation() {
        let p = offline(config("http://x/v1"));
        let body = p.build_body(&multi_turn()).unwrap();
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris and the time in Tokyo?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "get_time", "arguments": "{\"tz\": \"Asia/Tokyo\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 18}"},
                {"role": "tool", "tool_call_id": "call_2", "content": "09:30"},
                {"role": "assistant", "content": "18 °C; 09:30."},
                {"role": "user", "content": "Thanks"}
            ])
        );
    }

    #[test]
    fn build_body_sends_an_assistant_turn_without_content_or_calls_as_empty_text() {
        let p = offline(config("http://x/v1"));
        let mut r = request(ToolChoice::Auto);
        r.messages.push(Message::Assistant {
            state: None,
            content: None,
            tool_calls: vec![],
        });
        let body = p.build_body(&r).unwrap();
        assert_eq!(
            body["messages"][2],
            json!({"role": "assistant", "content": ""})
        );
    }

    #[test]
    fn build_body_sends_tool_definitions_with_their_parameters() {
        let p = offline(config("http://x/v1"));
        let body = p.build_body(&request(ToolChoice::Auto)).unwrap();
        let tools = weather_tools();
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": tools[0].parameters
            }})
        );
        // Key order of the schema is kept as written (preserve_order).
        let sent = serde_json::to_string(&body["tools"][0]["function"]["parameters"]).unwrap();
        assert_eq!(sent, serde_json::to_string(&tools[0].parameters).unwrap());
        assert_eq!(body["tools"][1]["function"]["name"], "get_time");
    }

    #[test]
    fn build_body_sets_sampling_fields_and_extra_wins() {
        let mut c = config("http://x/v1");
        c.temperature = Some(0.0);
        c.max_tokens = Some(256);
        c.seed = Some(7);
        c.parallel_tool_calls = Some(false);
        c.extra.insert("temperature".into(), json!(0.3));
        c.extra.insert("top_p".into(), json!(0.9));
        let body = offline(c).build_body(&request(ToolChoice::Auto)).unwrap();
        assert_eq!(body["temperature"], 0.3);
        assert_eq!(body["top_p"], 0.9);
        assert_eq!(body["max_tokens"], 256);
        assert_eq!(body["seed"], 7);
        assert_eq!(body["parallel_tool_calls"], false);

        let mut c = config("http://x/v1");
        c.max_tokens = Some(256);
        c.extra.insert("max_completion_tokens".into(), json!(512));
        let body = offline(c).build_body(&request(ToolChoice::Auto)).unwrap();
        assert!(body.get("max_tokens").is_none(), "{body}");
        assert_eq!(body["max_completion_tokens"], 512);

        let mut c = config("http://x/v1");
        c.temperature = Some(f64::NAN);
        let err = offline(c)
            .build_body(&request(ToolChoice::Auto))
            .unwrap_err();
        assert!(matches!(err, ProviderError::Unsupported { .. }));
    }

    #[test]
    fn url_and_source_come_from_base_url() {
        let p = offline(config("https://api.openai.com/v1/"));
        assert_eq!(p.url(), "https://api.openai.com/v1/chat/completions");
        assert_eq!(
            p.source(),
            "live openai:gpt-4o-mini at https://api.openai.com/v1"
        );
        let p = offline(config("http://localhost:8000/v1/chat/completions"));
        assert_eq!(p.url(), "http://localhost:8000/v1/chat/completions");
    }

    // ---- parse_response on the wire examples ----

    #[test]
    fn parses_a_text_answer_with_usage_details() {
        let r = parse_response(&json_of(TEXT_USAGE_DETAILS)).unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some("Hello! How can I assist you today?")
        );
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 19,
                output_tokens: 10,
                estimated: false,
                ..Default::default()
            })
        );
    }

    #[test]
    fn parses_a_recorded_text_answer() {
        let r = parse_response(&json_of(TEXT_RECORDED)).unwrap();
        assert!(
            r.text
                .as_deref()
                .unwrap()
                .starts_with("I'm unable to provide real-time weather")
        );
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.usage.unwrap().input_tokens, 14);
        assert_eq!(r.usage.unwrap().output_tokens, 37);
    }

    #[test]
    fn parses_a_single_call_keeping_pretty_printed_arguments() {
        let r = parse_response(&json_of(SINGLE_APIREF)).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: Some("call_abc123".into()),
                name: "get_current_weather".into(),
                arguments: "{\n\"location\": \"Boston, MA\"\n}".into(),
            }]
        );
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(r.usage.unwrap().input_tokens, 82);
        assert_eq!(r.usage.unwrap().output_tokens, 17);
    }

    #[test]
    fn parses_a_recorded_single_call() {
        let r = parse_response(&json_of(SINGLE_RECORDED)).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(
            r.tool_calls[0].id.as_deref(),
            Some("call_Y6qJ7ofLgOrBnMD5WbVAeiRV")
        );
        assert_eq!(r.tool_calls[0].name, "GetWeatherArgs");
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"city":"Edinburgh","country":"UK","units":"c"}"#
        );
    }

    #[test]
    fn parses_parallel_calls_in_order() {
        let r = parse_response(&json_of(PARALLEL)).unwrap();
        let names: Vec<_> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["GetWeatherArgs", "get_stock_price"]);
        assert_eq!(
            r.tool_calls[1].id.as_deref(),
            Some("call_h1DWI1POMJLb0KwIyQHWXD4p")
        );
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
        );
        assert_eq!(r.usage.unwrap().input_tokens, 149);
    }

    #[test]
    fn parses_a_truncated_answer_with_finish_length() {
        let r = parse_response(&json_of(FINISH_LENGTH)).unwrap();
        assert_eq!(r.text.as_deref(), Some("{\""));
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
        assert_eq!(r.usage.unwrap().output_tokens, 1);
    }

    #[test]
    fn serialises_object_arguments_and_tolerates_missing_ids_and_empty_content() {
        // Ollama's native message (object arguments, no id, content "") in a choice.
        let native = json_of(OLLAMA_NATIVE);
        let body = json!({
            "choices": [{"index": 0, "message": native["message"], "finish_reason": "stop"}]
        });
        let r = parse_response(&body).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: None,
                name: "get_weather".into(),
                arguments: r#"{"city":"Tokyo"}"#.into(),
            }]
        );
        assert_eq!(r.usage, None);
        // The native body itself is named as such.
        let err = parse_response(&native).unwrap_err();
        assert!(err.contains("native /api/chat"), "{err}");
    }

    #[test]
    fn keeps_malformed_arguments_raw_and_ignores_vendor_extras() {
        let body = json!({
            "id": "x", "object": "chat.completion", "x_vendor": {"a": 1},
            "choices": [{"index": 0, "finish_reason": "tool_calls", "stop_reason": null,
                "message": {"role": "assistant", "content": "\n\n", "reasoning_content": "hmm",
                    "tool_calls": [
                        {"id": "", "type": "function", "index": 0,
                         "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}},
                        {"id": "c2", "function": {"name": "get_time", "arguments": null}},
                        {"id": "c3", "function": {"name": "nope"}}
                    ]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "prompt_cache_hit_tokens": 0}
        });
        let r = parse_response(&body).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(r.tool_calls[0].id, None);
        assert_eq!(r.tool_calls[0].arguments, "{\"city\": \"Par");
        // Raw, as sent: `null` stays `null`, a missing field is empty (neither is `{}`).
        assert_eq!(r.tool_calls[1].arguments, "null");
        assert_eq!(r.tool_calls[2].arguments, "");
        assert_eq!(r.usage.unwrap().input_tokens, 5);
    }

    #[test]
    fn reads_content_parts_refusals_and_legacy_function_calls() {
        let parts = json!({"choices": [{"message": {"content": [
            {"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]}}]});
        assert_eq!(
            parse_response(&parts).unwrap().text.as_deref(),
            Some("Hello, world")
        );
        let refusal = json!({"choices": [{"message": {"content": null, "refusal": "I can't."}}]});
        assert_eq!(
            parse_response(&refusal).unwrap().text.as_deref(),
            Some("I can't.")
        );
        let legacy = json!({"choices": [{"message": {"content": null,
            "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}}]});
        let r = parse_response(&legacy).unwrap();
        assert_eq!(r.tool_calls[0].name, "get_weather");
        assert_eq!(r.tool_calls[0].arguments, r#"{"city":"Oslo"}"#);
        assert_eq!(r.tool_calls[0].id, None);
    }

    #[test]
    fn usage_is_none_when_missing_or_empty() {
        for usage in [None, Some(Value::Null), Some(json!({}))] {
            let mut body = json!({"choices": [{"message": {"content": "hi"}}]});
            if let Some(u) = usage {
                body["usage"] = u;
            }
            assert_eq!(parse_response(&body).unwrap().usage, None, "{body}");
        }
        let alt = json!({"choices": [{"message": {"content": "hi"}}],
            "usage": {"input_tokens": 4, "output_tokens": 2}});
        assert_eq!(
            parse_response(&alt).unwrap().usage.unwrap().output_tokens,
            2
        );
    }

    #[test]
    fn missing_parts_are_named() {
        let cases = [
            (json!({"choices": []}), "`choices` is empty"),
            (json!({"id": "x"}), "no `choices`"),
            (json!({"choices": [{"index": 0}]}), "has no `message`"),
            (json!({"choices": [{"message": null}]}), "has no `message`"),
            (json!({"choices": "x"}), "`choices` is a string"),
            (json!([1]), "the body is an array"),
            (
                json!({"error": {"message": "Provider returned error", "code": 502}}),
                "Provider returned error",
            ),
            (
                json!({"choices": [{"message": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]}),
                "tool_calls[0]` has no function name",
            ),
            (json_of(RESPONSES_API), "Responses API"),
        ];
        for (body, want) in cases {
            let err = parse_response(&body).unwrap_err();
            assert!(err.contains(want), "{err} (wanted {want})");
        }
    }

    // ---- the whole provider against a local fake server ----

    /// A server that answers at once is far inside this timeout even on a loaded
    /// machine, so attempt counts never depend on the machine's speed; the timeout test
    /// uses a server that does not answer at all ([`NEVER`]).
    fn settings(max_attempts: u32) -> HttpSettings {
        HttpSettings {
            timeout: Duration::from_secs(30),
            max_attempts,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(3),
        }
    }

    /// A delay no test waits out: the server effectively never answers.
    const NEVER: Duration = Duration::from_secs(600);

    fn live(server: &MockServer, max_attempts: u32) -> OpenAiProvider {
        OpenAiProvider::new(
            config(&format!("{}/v1", server.uri())),
            Http::new(settings(max_attempts)).unwrap(),
        )
    }

    fn ok(body: &str) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_raw(body.as_bytes().to_vec(), "application/json")
    }

    async fn serve_once(server: &MockServer, template: ResponseTemplate) {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(template)
            .up_to_n_times(1)
            .mount(server)
            .await;
    }

    fn assert_no_key(err: &ProviderError) {
        let text = format!("{err} {err:?}");
        assert!(!text.contains(KEY), "key leaked: {text}");
    }

    /// Answers 401 with the Authorization header it received echoed in the message.
    struct EchoKey(u16);

    impl Respond for EchoKey {
        fn respond(&self, req: &wiremock::Request) -> ResponseTemplate {
            let auth = req
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            ResponseTemplate::new(self.0).set_body_json(json!({"error": {
                "message": format!("Incorrect API key provided: {auth}"),
                "type": "invalid_request_error", "code": "invalid_api_key"}}))
        }
    }

    #[tokio::test]
    async fn live_single_call_fills_latency_attempts_and_raw() {
        let server = MockServer::start().await;
        serve_once(&server, ok(SINGLE_RECORDED)).await;
        let r = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "GetWeatherArgs");
        assert_eq!(r.attempts, 1);
        assert!(r.latency_ms > 0.0);
        assert_eq!(r.raw, Some(json_of(SINGLE_RECORDED)));
    }

    #[tokio::test]
    async fn live_parallel_calls() {
        let server = MockServer::start().await;
        serve_once(&server, ok(PARALLEL)).await;
        let r = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[1].name, "get_stock_price");
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[tokio::test]
    async fn live_text_answer_with_usage() {
        let server = MockServer::start().await;
        serve_once(&server, ok(TEXT_USAGE_DETAILS)).await;
        let r = live(&server, 3)
            .complete(&request(ToolChoice::None), &trial())
            .await
            .unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some("Hello! How can I assist you today?")
        );
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.usage.unwrap().input_tokens, 19);
        assert_eq!(r.usage.unwrap().output_tokens, 10);
    }

    #[tokio::test]
    async fn live_malformed_arguments_and_unknown_tools_pass_through() {
        let server = MockServer::start().await;
        let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{'city': Paris,}"}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "launch_rocket", "arguments": "{}"}}]}}]});
        serve_once(&server, ResponseTemplate::new(200).set_body_json(body)).await;
        let r = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.tool_calls[0].arguments, "{'city': Paris,}");
        assert_eq!(r.tool_calls[1].name, "launch_rocket");
        assert_eq!(r.usage, None);
    }

    #[tokio::test]
    async fn live_429_waits_for_retry_after_then_succeeds() {
        let server = MockServer::start().await;
        serve_once(
            &server,
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"error": {"message": "Rate limit reached",
                    "type": "requests", "code": "rate_limit_exceeded"}})),
        )
        .await;
        serve_once(&server, ok(SINGLE_APIREF)).await;
        let started = Instant::now();
        let r = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert!(started.elapsed() >= Duration::from_secs(1), "no wait");
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert_eq!(r.attempts, 2);
        assert_eq!(r.tool_calls[0].name, "get_current_weather");
    }

    #[tokio::test]
    async fn live_500_then_success() {
        let server = MockServer::start().await;
        serve_once(&server, ResponseTemplate::new(500).set_body_string("oops")).await;
        serve_once(&server, ok(TEXT_RECORDED)).await;
        let r = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert_eq!(r.attempts, 2);
        assert!(r.text.is_some());
    }

    #[tokio::test]
    async fn live_400_is_not_retried_and_quotes_the_body() {
        let server = MockServer::start().await;
        let message = "Invalid schema for function 'get_weather': 'object' is not valid";
        serve_once(
            &server,
            ResponseTemplate::new(400).set_body_json(json!({"error": {"message": message,
                "type": "invalid_request_error", "param": "tools[0].function.parameters",
                "code": "invalid_function_parameters"}})),
        )
        .await;
        let err = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
        match &err {
            ProviderError::Http {
                provider,
                source:
                    HttpError::Status {
                        status, attempts, ..
                    },
            } => {
                assert_eq!(provider, "openai");
                assert_eq!((*status, *attempts), (400, 1));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains(message), "{err}");
    }

    #[tokio::test]
    async fn live_timeout_counts_each_attempt() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok(TEXT_RECORDED).set_delay(NEVER))
            .mount(&server)
            .await;
        let provider = OpenAiProvider::new(
            config(&format!("{}/v1", server.uri())),
            Http::new(HttpSettings {
                timeout: Duration::from_millis(500),
                ..settings(2)
            })
            .unwrap(),
        );
        let err = provider
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ProviderError::Http {
                    source: HttpError::Timeout { attempts: 2, .. },
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert!(err.to_string().contains("2 attempt(s)"), "{err}");
    }

    #[tokio::test]
    async fn live_non_json_body_is_an_invalid_body_error() {
        let server = MockServer::start().await;
        serve_once(
            &server,
            ResponseTemplate::new(200).set_body_string("<html>Bad gateway</html>"),
        )
        .await;
        let err = live(&server, 3)
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
            "{err:?}"
        );
        assert!(err.to_string().contains("<html>Bad gateway"), "{err}");
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn live_empty_choices_is_a_decode_error() {
        let server = MockServer::start().await;
        serve_once(
            &server,
            ResponseTemplate::new(200).set_body_json(json!({"id": "x", "choices": []})),
        )
        .await;
        let err = live(&server, 3)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Decode { .. }), "{err:?}");
        assert!(err.to_string().contains("`choices` is empty"), "{err}");
    }

    #[tokio::test]
    async fn live_request_body_and_bearer_header() {
        let server = MockServer::start().await;
        serve_once(&server, ok(TEXT_RECORDED)).await;
        let mut req = multi_turn();
        req.tool_choice = ToolChoice::Function("get_time".into());
        live(&server, 3).complete(&req, &trial()).await.unwrap();
        let received = server.received_requests().await.unwrap();
        assert_eq!(received.len(), 1);
        let r = &received[0];
        assert_eq!(r.url.path(), "/v1/chat/completions");
        assert_eq!(
            r.headers.get("authorization").unwrap().to_str().unwrap(),
            format!("Bearer {KEY}")
        );
        assert_eq!(
            r.headers.get("content-type").unwrap().to_str().unwrap(),
            "application/json"
        );
        let body: Value = r.body_json().unwrap();
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "get_time"}})
        );
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            *weather_tools()[0].parameters
        );
        assert_eq!(body["messages"][2]["tool_calls"][1]["id"], "call_2");
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 18}"})
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 7);
    }

    #[tokio::test]
    async fn live_without_a_key_sends_no_authorization() {
        let server = MockServer::start().await;
        serve_once(&server, ok(TEXT_RECORDED)).await;
        let mut c = config(&format!("{}/v1", server.uri()));
        c.api_key = None;
        OpenAiProvider::new(c, Http::new(settings(1)).unwrap())
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        let received = server.received_requests().await.unwrap();
        assert!(received[0].headers.get("authorization").is_none());
    }

    #[tokio::test]
    async fn live_errors_never_contain_the_key() {
        // A 401 (not retried) and a 500 (retried to the end) echoing the header.
        for status in [401, 500] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(EchoKey(status))
                .mount(&server)
                .await;
            let err = live(&server, 2)
                .complete(&request(ToolChoice::Auto), &trial())
                .await
                .unwrap_err();
            assert_no_key(&err);
            assert!(err.to_string().contains("[REDACTED]"), "{err}");
        }
        // A 200 without choices echoing the key: a decode error, scrubbed.
        let server = MockServer::start().await;
        serve_once(
            &server,
            ResponseTemplate::new(200)
                .set_body_json(json!({"error": {"message": format!("bad key {KEY}")}})),
        )
        .await;
        let err = live(&server, 2)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Decode { .. }), "{err:?}");
        assert_no_key(&err);
        // A good answer that happens to echo the key: the stored raw body is scrubbed.
        let server = MockServer::start().await;
        serve_once(
            &server,
            ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message":
                {"content": "ok"}}], "echo": KEY})),
        )
        .await;
        let r = live(&server, 2)
            .complete(&request(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        let raw = r.raw.unwrap();
        assert!(!raw.to_string().contains(KEY));
        assert_eq!(raw["echo"], "[REDACTED]");
    }

    #[test]
    fn reasoning_fields_are_state_and_go_back_verbatim_and_nothing_else_does() {
        let body = json!({"choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "", "reasoning_content": "think",
            "reasoning": "", "reasoning_details": [{"type": "reasoning.text", "text": "t"}],
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]}}]});
        let r = parse_response(&body).unwrap();
        // Empty fields are not kept; the others verbatim.
        let state = json!({"openai": {"message": {
            "reasoning_content": "think",
            "reasoning_details": [{"type": "reasoning.text", "text": "t"}]}}});
        assert_eq!(r.state, Some(state.clone()));
        assert_eq!(r.text, None);
        let sent = message_json(&r.to_message());
        assert_eq!(
            sent,
            json!({"role": "assistant", "content": "", "reasoning_content": "think",
                   "reasoning_details": [{"type": "reasoning.text", "text": "t"}],
                   "tool_calls": [{"id": "c1", "type": "function",
                                   "function": {"name": "f", "arguments": "{}"}}]})
        );
        // OpenAI's own answers carry none: no state, and the turn goes back as before.
        let plain = json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}]});
        assert_eq!(parse_response(&plain).unwrap().state, None);
        let blank = json!({"choices": [{"message": {"role": "assistant", "content": "hi",
            "reasoning": null, "reasoning_content": ""}}]});
        assert_eq!(parse_response(&blank).unwrap().state, None);
        // A damaged or foreign state sends only known reasoning fields, never others.
        for state in [
            json!({"openai": {"message": {"role": "system", "content": "x", "reasoning": "r"}}}),
            json!({"openai": {"message": "not an object"}}),
            json!({"anthropic": {"content": [{"type": "thinking"}]}}),
        ] {
            let m = Message::Assistant {
                content: Some("hi".into()),
                tool_calls: vec![],
                state: Some(state.clone()),
            };
            let sent = message_json(&m);
            assert_eq!(sent["role"], "assistant", "{state}");
            assert_eq!(sent["content"], "hi", "{state}");
            let extra: Vec<&String> = sent
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| !["role", "content"].contains(&k.as_str()))
                .collect();
            let expected: Vec<&str> = if state["openai"]["message"]["reasoning"] == "r" {
                vec!["reasoning"]
            } else {
                vec![]
            };
            assert_eq!(extra, expected, "{state}");
        }
    }

    #[test]
    fn earlier_calls_whose_arguments_are_not_an_object_go_back_with_empty_ones() {
        let call = |arguments: &str| ToolCall {
            id: Some("c".into()),
            name: "f".into(),
            arguments: arguments.into(),
        };
        let raw = [
            "{\"city\": \"Par",
            "null",
            "",
            "[1]",
            "\"x\"",
            "{\"a\": 1} trailing",
            " {\"a\": 1} ",
            "{}",
        ];
        let m = Message::Assistant {
            content: None,
            tool_calls: raw.iter().map(|a| call(a)).collect(),
            state: None,
        };
        let sent: Vec<String> = message_json(&m)["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["arguments"].as_str().unwrap().to_string())
            .collect();
        // Objects go back byte for byte (spaces included); everything else as `{}`.
        assert_eq!(
            sent,
            ["{}", "{}", "{}", "{}", "{}", "{}", " {\"a\": 1} ", "{}"]
        );
    }

    // ---- cached input and reasoning tokens ----

    /// The usage section of the example response in OpenAI's prompt caching guide
    /// (platform.openai.com/docs/guides/prompt-caching, as quoted verbatim by several
    /// SDKs' tests): 1,920 of 2,006 prompt tokens read from the cache.
    fn caching_guide_usage() -> Value {
        json!({
            "prompt_tokens": 2006,
            "completion_tokens": 300,
            "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920},
            "completion_tokens_details": {"reasoning_tokens": 0}
        })
    }

    #[test]
    fn keeps_cached_and_reasoning_tokens_apart() {
        // The recorded gpt-4o tool call, with the caching guide's usage.
        let mut body = json_of(SINGLE_RECORDED);
        body["usage"] = caching_guide_usage();
        let u = parse_response(&body).unwrap().usage.unwrap();
        assert_eq!(
            u,
            Usage {
                cached_input_tokens: 1920,
                ..Usage::new(2006, 300)
            }
        );
        assert_eq!(u.fresh_input_tokens(), 86);
        // A reasoning model's usage: reasoning is part of the completion, not added.
        body["usage"]["completion_tokens_details"]["reasoning_tokens"] = json!(256);
        let u = parse_response(&body).unwrap().usage.unwrap();
        assert_eq!((u.output_tokens, u.reasoning_tokens), (300, 256));
        // The recorded bodies carry the details as 0: nothing kept apart, and the
        // usage serialises exactly as before.
        for text in [TEXT_USAGE_DETAILS, SINGLE_RECORDED] {
            let u = parse_response(&json_of(text)).unwrap().usage.unwrap();
            assert_eq!(
                (
                    u.cached_input_tokens,
                    u.cache_write_tokens,
                    u.reasoning_tokens
                ),
                (0, 0, 0)
            );
            assert_eq!(
                serde_json::to_string(&u).unwrap(),
                format!(
                    r#"{{"input_tokens":{},"output_tokens":{}}}"#,
                    u.input_tokens, u.output_tokens
                )
            );
        }
    }

    #[test]
    fn reads_the_responses_and_deepseek_names_of_the_details() {
        let body = |usage: Value| json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": usage});
        // The Responses API's names (an OpenAI-compatible server may send them).
        let u = parse_response(&body(json!({
            "input_tokens": 120, "output_tokens": 30,
            "input_tokens_details": {"cached_tokens": 100},
            "output_tokens_details": {"reasoning_tokens": 12}
        })))
        .unwrap()
        .usage
        .unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.cached_input_tokens,
                u.output_tokens,
                u.reasoning_tokens
            ),
            (120, 100, 30, 12)
        );
        // DeepSeek's flat cache-hit count.
        let u = parse_response(&body(json!({
            "prompt_tokens": 120, "completion_tokens": 3,
            "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 56
        })))
        .unwrap()
        .usage
        .unwrap();
        assert_eq!(u.cached_input_tokens, 64);
        // A null details section is no details.
        let u = parse_response(&body(json!({
            "prompt_tokens": 5, "completion_tokens": 3, "prompt_tokens_details": null
        })))
        .unwrap()
        .usage
        .unwrap();
        assert_eq!(u, Usage::new(5, 3));
    }

    #[test]
    fn a_detail_above_its_total_or_implausible_drops_the_usage() {
        let mut body = json_of(SINGLE_RECORDED);
        for (usage, why) in [
            (
                json!({"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 11}}),
                "11 cached and 0 cache-write input tokens are more than the 10 input tokens",
            ),
            (
                json!({"prompt_tokens": 10, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 4}}),
                "4 reasoning tokens are more than the 3 output tokens",
            ),
            (
                json!({"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": -1}}),
                "`prompt_tokens_details.cached_tokens` is -1, a negative count",
            ),
            (
                json!({"prompt_tokens": 10, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": "2"}}),
                "`completion_tokens_details.reasoning_tokens` is \"2\", a string, not a number",
            ),
        ] {
            body["usage"] = usage;
            let r = parse_response(&body).unwrap();
            assert_eq!(r.usage, None, "{why}");
            assert_eq!(
                r.warnings,
                vec![format!("implausible usage from the server ignored: {why}")]
            );
        }
    }
}
