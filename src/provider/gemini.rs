//! Google Gemini: the unary `generateContent` method of the Gemini API
//! (`POST {base_url}/models/{model}:generateContent`, default base URL
//! `https://generativelanguage.googleapis.com/v1beta`); with `config.stream`, the same
//! body to `:streamGenerateContent?alt=sse`, read by [`super::gemini_stream`].
//!
//! The key travels in the `x-goog-api-key` header (marked sensitive), never in the URL,
//! so it can not leak through logged URLs or error texts.
//!
//! # Request mapping
//!
//! | neutral | Gemini |
//! |---|---|
//! | `system` messages (wherever they occur) | `systemInstruction: {parts: [{text}, …]}`, one part each, in order |
//! | `user` | `{role: "user", parts: [{text}]}` |
//! | `assistant` | `{role: "model", parts: [{text}?, {functionCall: {name, args}}, …]}` |
//! | `tool` (a run of them) | one `{role: "user", parts: [{functionResponse: {name, response}}, …]}`, in call order |
//! | tools | `tools: [{functionDeclarations: [{name, description, parametersJsonSchema}]}]` |
//! | tool_choice | `toolConfig.functionCallingConfig` (table below) |
//! | temperature / max_tokens / seed | `generationConfig.{temperature, maxOutputTokens, seed}` |
//! | parallel_tool_calls | ignored: Gemini has no such switch |
//! | extra | merged into the top level last; an extra key replaces ours whole |
//!
//! | tool_choice | `functionCallingConfig` |
//! |---|---|
//! | `none` | `{mode: "NONE"}` (declarations still sent) |
//! | `auto` | `{mode: "AUTO"}` |
//! | `required` | `{mode: "ANY"}` |
//! | `function:NAME` | `{mode: "ANY", allowedFunctionNames: ["NAME"]}` |
//!
//! Details and quirks:
//! - Function results use role `user`, as the current function-calling guide and the
//!   google-genai SDKs do (the cookbook's gemini-pro-era REST notebook used `function`).
//! - Gemini pairs results with calls by name and position, not by id: the name of a
//!   `functionResponse` is that of the earlier assistant call with that `tool_call_id`
//!   (the result's own `name` when no such call is in the conversation), and the
//!   results answering one turn go back in the order of its calls. Ids are not sent,
//!   except an id Gemini itself put on a call, which is echoed on the call and its
//!   `functionResponse`: the API rejects ids on several endpoints ("Unknown name
//!   \"id\" … Cannot find field"), and the ids this crate assigns mean nothing to it.
//! - A result that parses as a JSON object is sent as `response`; another JSON value
//!   is wrapped as `{"result": <the value>}`, and text that is not JSON as
//!   `{"result": "<the text>"}`. An error result is sent as
//!   `{"error": …}` (the content's JSON or text; an object that already has an `error`
//!   key as it is).
//! - An assistant turn with Gemini state (see below) is sent as its saved parts,
//!   verbatim, while its text and calls still match them: thought summaries and
//!   `thoughtSignature`s stay on the parts they came with, as Gemini requires.
//! - Call arguments must be a JSON object (an empty string counts as `{}`); anything
//!   else is [`ProviderError::Unsupported`], since `args` is a `Struct`.
//! - Gemini 3 rejects replayed function calls without a `thoughtSignature`. The calls in
//!   a case's history were not produced by this model, so the first `functionCall` part
//!   of every model turn carries [`DUMMY_THOUGHT_SIGNATURE`], the value Google documents
//!   for such history; models that do not validate signatures ignore it.
//! - Schemas go to `parametersJsonSchema` (full JSON Schema; mutually exclusive with the
//!   OpenAPI-subset `parameters`, which rejects `additionalProperties`, `$schema`,
//!   `const`, …). The schema is sent unchanged except for a root-level `$schema`,
//!   which is dropped; `null` parameters send no schema. `parametersJsonSchema` is a
//!   `v1beta` field.
//! - `required`/`function:NAME` with no tools is [`ProviderError::Unsupported`]; with no
//!   tools, `none`/`auto` send neither `tools` nor `toolConfig`.
//! - Gemini's seed is an int32: a larger seed is [`ProviderError::Unsupported`].
//! - Assistant messages with neither text nor calls are skipped (Gemini rejects empty
//!   `parts`).
//!
//! # Response parsing
//!
//! Only the first candidate is read. Text parts are joined without separator (Gemini
//! splits one text across parts); parts with `thought: true` are thinking summaries and
//! are skipped; other part kinds (`executableCode`, `inlineData`, …) are ignored. Each
//! `functionCall` part becomes a [`ToolCall`] whose id is `functionCall.id` (or a
//! part-level `id`) when given, else `None` in [`GeminiProvider::parse_response`] (a
//! live answer then gets [`crate::chat::assigned_call_id`]s, by round and position, so
//! every call of a loop has one), and whose arguments are `args` serialised
//! as JSON (key order and `null` values kept; `{}` when `args` is absent, `null` when it
//! is an explicit `null`: "raw" for Gemini is the `args` value as sent, never repaired).
//! `finishReason` becomes the finish reason. When a part carries a `thoughtSignature`,
//! is a `thought` summary, has a Gemini call id, or text follows a call, the response's
//! `state` is `{"gemini": {"parts": [the parts, verbatim]}}`; otherwise it is `None`. Usage: `promptTokenCount` is the input;
//! `candidatesTokenCount + thoughtsTokenCount` is the output, because thinking tokens
//! are billed as output (`toolUsePromptTokenCount`, for server-side tools, is not
//! counted); `cachedContentTokenCount` (inside `promptTokenCount`) is kept apart as the
//! cached input, `thoughtsTokenCount` as the reasoning part of the output. A usage with an implausible count (negative, fractional, not a number,
//! above [`usage::MAX_TOKENS_PER_REQUEST`]) is dropped with a warning on the response.
//! A body without candidates is a decode error naming
//! `promptFeedback.blockReason`; a 200 whose body is a Google RPC error object
//! (`{error: {code, message, status}}`) is a decode error too. A candidate without
//! content (e.g. `finishReason: "MALFORMED_FUNCTION_CALL"` or `"SAFETY"`) is an
//! ordinary response with no text and no calls.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::Exchange;
use super::config::ProviderConfig;
use super::gemini_stream::GeminiAssembler;
use super::http::{Header, Http};
use super::types::{Message, Request, Response, ToolCall, ToolChoice, Usage, error_object};
use super::usage::{self, UsageReading};
use super::{Provider, ProviderError, TrialKey};

/// The `thoughtSignature` Google documents for function calls that the model did not
/// produce itself (history from another model or written by hand); it tells Gemini 3
/// to skip signature validation.
pub const DUMMY_THOUGHT_SIGNATURE: &str = "skip_thought_signature_validator";

/// The key of Gemini's part in an assistant turn's state.
const STATE_KEY: &str = "gemini";

/// The Gemini `generateContent` provider.
pub struct GeminiProvider {
    config: ProviderConfig,
    http: Http,
}

impl GeminiProvider {
    /// A provider for `config.model` at `config.base_url`, sending through `http`.
    pub fn new(config: ProviderConfig, http: Http) -> Self {
        GeminiProvider { config, http }
    }

    /// The endpoint: `{base_url}/models/{model}:generateContent` (a `models/` prefix on
    /// the model name is accepted and not doubled).
    pub fn endpoint(&self) -> String {
        let model = self
            .config
            .model
            .strip_prefix("models/")
            .unwrap_or(&self.config.model);
        format!("{}/models/{model}:generateContent", self.config.base_url)
    }

    /// The streaming endpoint: `{base_url}/models/{model}:streamGenerateContent?alt=sse`
    /// (server-sent events; without `alt=sse` the answer is one JSON array).
    pub fn stream_endpoint(&self) -> String {
        let model = self
            .config
            .model
            .strip_prefix("models/")
            .unwrap_or(&self.config.model);
        format!(
            "{}/models/{model}:streamGenerateContent?alt=sse",
            self.config.base_url
        )
    }

    fn unsupported(&self, message: String) -> ProviderError {
        ProviderError::Unsupported {
            provider: self.config.provider.clone(),
            message,
        }
    }

    /// The `generateContent` body for `request` (pure; see the module docs for the
    /// mapping).
    pub fn build_body(&self, request: &Request) -> Result<Value, ProviderError> {
        let mut system_parts: Vec<Value> = Vec::new();
        let mut contents: Vec<Value> = Vec::new();
        // By call id: the function's name and whether the id is Gemini's own (sent back
        // on the `functionResponse`; assigned ids never reach the wire).
        let mut calls: HashMap<&str, (&str, bool)> = HashMap::new();
        // The ids of the latest model turn's calls, in order: results follow it.
        let mut call_order: Vec<&str> = Vec::new();
        let mut results: Vec<(usize, Value)> = Vec::new();

        for message in &request.messages {
            if !matches!(message, Message::Tool { .. }) && !results.is_empty() {
                contents.push(results_content(&mut results));
            }
            match message {
                Message::System { content } => system_parts.push(json!({"text": content})),
                Message::User { content } => {
                    contents.push(json!({"role": "user", "parts": [{"text": content}]}));
                }
                Message::Assistant {
                    content,
                    tool_calls,
                    state,
                } => {
                    let mut parts = Vec::new();
                    if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                        parts.push(json!({"text": text}));
                    }
                    let mut args_list = Vec::new();
                    for (i, call) in tool_calls.iter().enumerate() {
                        let args = arguments_object(&call.arguments).ok_or_else(|| {
                            self.unsupported(format!(
                                "the arguments of the earlier call to `{}` are not a JSON object, and Gemini's functionCall.args must be one: {}",
                                call.name,
                                preview(&call.arguments)
                            ))
                        })?;
                        let mut part = json!({"functionCall": {"name": call.name, "args": args}});
                        if i == 0 {
                            part["thoughtSignature"] = json!(DUMMY_THOUGHT_SIGNATURE);
                        }
                        parts.push(part);
                        args_list.push(args);
                    }
                    let saved = saved_parts(state.as_ref()).filter(|saved| {
                        same_turn(saved, content.as_deref(), tool_calls, &args_list)
                    });
                    let native_ids: Vec<&str> = saved
                        .map(|saved| {
                            saved
                                .iter()
                                .filter_map(|p| p.get("functionCall"))
                                .filter_map(|c| c.get("id").and_then(Value::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    call_order.clear();
                    for call in tool_calls {
                        if let Some(id) = &call.id {
                            calls.insert(id, (&call.name, native_ids.contains(&id.as_str())));
                            call_order.push(id);
                        }
                    }
                    if let Some(saved) = saved {
                        // The answer as Gemini gave it: thought parts and signatures
                        // exactly where they were.
                        parts = saved.clone();
                    }
                    if !parts.is_empty() {
                        contents.push(json!({"role": "model", "parts": parts}));
                    }
                }
                Message::Tool {
                    tool_call_id,
                    name,
                    content,
                    is_error,
                } => {
                    let known = calls.get(tool_call_id.as_str());
                    // Gemini pairs by name, so the call's own name wins; the result's
                    // name serves when the call is not in the conversation.
                    let name = match (known, name.as_str()) {
                        (Some((called, _)), _) => *called,
                        (None, "") => {
                            return Err(self.unsupported(format!(
                                "the tool result for call id `{tool_call_id}` answers no earlier assistant call and names no tool, and Gemini needs the function's name"
                            )));
                        }
                        (None, name) => name,
                    };
                    let response = if *is_error {
                        error_object(content)
                    } else {
                        // A JSON value that is not an object (a mock's `result: pong`
                        // is the JSON text `"pong"`) is wrapped as itself, so the
                        // model reads `pong`, not an escaped `"\"pong\""`.
                        match serde_json::from_str::<Value>(content) {
                            Ok(Value::Object(obj)) => Value::Object(obj),
                            Ok(value) => json!({ "result": value }),
                            Err(_) => json!({ "result": content }),
                        }
                    };
                    let mut reply = json!({"name": name, "response": response});
                    if let Some((_, true)) = known {
                        reply["id"] = json!(tool_call_id);
                    }
                    let position = call_order
                        .iter()
                        .position(|id| *id == tool_call_id)
                        .unwrap_or(usize::MAX);
                    results.push((position, json!({ "functionResponse": reply })));
                }
            }
        }
        if !results.is_empty() {
            contents.push(results_content(&mut results));
        }

        let mut body = Map::new();
        if !system_parts.is_empty() {
            body.insert("systemInstruction".into(), json!({ "parts": system_parts }));
        }
        body.insert("contents".into(), Value::Array(contents));

        if request.tools.is_empty() {
            if matches!(
                request.tool_choice,
                ToolChoice::Required | ToolChoice::Function(_)
            ) {
                return Err(self.unsupported(format!(
                    "tool_choice {} needs at least one tool",
                    request.tool_choice
                )));
            }
        } else {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    let mut decl = Map::new();
                    decl.insert("name".into(), json!(tool.name));
                    decl.insert("description".into(), json!(tool.description));
                    if let Some(schema) = json_schema(&tool.parameters) {
                        decl.insert("parametersJsonSchema".into(), schema);
                    }
                    Value::Object(decl)
                })
                .collect();
            body.insert(
                "tools".into(),
                json!([{ "functionDeclarations": declarations }]),
            );
            let config = match &request.tool_choice {
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Auto => json!({"mode": "AUTO"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Function(name) => {
                    json!({"mode": "ANY", "allowedFunctionNames": [name]})
                }
            };
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": config }),
            );
        }

        let mut generation = Map::new();
        if let Some(t) = self.config.temperature {
            generation.insert("temperature".into(), json!(t));
        }
        if let Some(m) = self.config.max_tokens {
            generation.insert("maxOutputTokens".into(), json!(m));
        }
        if let Some(seed) = self.config.seed {
            let seed = i32::try_from(seed).map_err(|_| {
                self.unsupported(format!(
                    "seed {seed} is out of range: Gemini's seed is a 32-bit integer (at most {})",
                    i32::MAX
                ))
            })?;
            generation.insert("seed".into(), json!(seed));
        }
        if self.config.json_answers && request.tools.is_empty() {
            generation.insert("responseMimeType".into(), json!("application/json"));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }

        let mut body = Value::Object(body);
        self.config.merge_extra(&mut body);
        Ok(body)
    }

    /// Read a `generateContent` response body (pure; see the module docs). The error
    /// text may quote the body: scrub secrets before showing it.
    pub fn parse_response(body: &Value) -> Result<Response, String> {
        let obj = body
            .as_object()
            .ok_or_else(|| format!("expected a JSON object, got {}", kind(body)))?;
        if let Some(error) = obj.get("error") {
            return Err(describe_error(error));
        }
        let candidate = match obj.get("candidates") {
            None | Some(Value::Null) => None,
            Some(Value::Array(list)) => list.first(),
            Some(other) => return Err(format!("`candidates` is {}, not a list", kind(other))),
        };
        let Some(candidate) = candidate else {
            let feedback = obj.get("promptFeedback");
            let reason = feedback
                .and_then(|f| f.get("blockReason"))
                .and_then(Value::as_str);
            return Err(match reason {
                Some(reason) => {
                    let detail = feedback
                        .and_then(|f| f.get("blockReasonMessage"))
                        .and_then(Value::as_str)
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default();
                    format!("no candidates: the prompt was blocked (blockReason {reason}){detail}")
                }
                None => "no candidates in the response".to_string(),
            });
        };

        let parts: &[Value] = match candidate.get("content").and_then(|c| c.get("parts")) {
            None | Some(Value::Null) => &[],
            Some(Value::Array(parts)) => parts,
            Some(other) => {
                return Err(format!(
                    "`candidates[0].content.parts` is {}, not a list",
                    kind(other)
                ));
            }
        };

        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            if let Some(call) = part.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str).ok_or_else(|| {
                    format!("`candidates[0].content.parts[{i}].functionCall` has no name")
                })?;
                // `args` is a JSON value, kept as sent (written compactly); absent
                // means no arguments (proto3 JSON omits an empty field), an explicit
                // `null` stays `null`.
                let arguments = match call.get("args") {
                    None => "{}".to_string(),
                    Some(args) => serde_json::to_string(args).map_err(|e| e.to_string())?,
                };
                let id = call
                    .get("id")
                    .or_else(|| part.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                tool_calls.push(ToolCall {
                    id,
                    name: name.to_string(),
                    arguments,
                });
            } else if let Some(t) = part.get("text").and_then(Value::as_str) {
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                text.push_str(t);
            }
        }

        let mut response = Response {
            state: turn_state(parts),
            text: (!text.is_empty()).then_some(text),
            tool_calls,
            finish_reason: candidate
                .get("finishReason")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Response::default()
        };
        parse_usage(obj.get("usageMetadata")).apply(&mut response, "gemini");
        Ok(response)
    }
}

/// One user content holding a turn's function responses, in the order of the calls
/// they answer (Gemini pairs them by position and name); results answering no call of
/// the latest turn keep their order, after the rest.
fn results_content(results: &mut Vec<(usize, Value)>) -> Value {
    results.sort_by_key(|(position, _)| *position);
    let parts: Vec<Value> = results.drain(..).map(|(_, part)| part).collect();
    json!({"role": "user", "parts": parts})
}

/// The part of an assistant turn's state that is Gemini's: the answer's parts.
fn saved_parts(state: Option<&Value>) -> Option<&Vec<Value>> {
    state?.get(STATE_KEY)?.get("parts")?.as_array()
}

/// The state of an answer: its parts, verbatim, when any carries something the neutral
/// turn can not (a `thoughtSignature`, a `thought` summary, a call id Gemini assigned,
/// text after a call: the neutral turn puts all text first); `None` otherwise.
fn turn_state(parts: &[Value]) -> Option<Value> {
    let opaque = parts.iter().any(|p| {
        p.get("thoughtSignature").is_some()
            || p.get("thought").and_then(Value::as_bool) == Some(true)
            || p.get("functionCall").and_then(|c| c.get("id")).is_some()
    });
    let first_call = parts.iter().position(|p| p.get("functionCall").is_some());
    let text_after_call = first_call.is_some_and(|first| {
        parts[first..].iter().any(|p| {
            p.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty())
        })
    });
    (opaque || text_after_call).then(|| json!({ STATE_KEY: { "parts": parts } }))
}

/// Whether saved parts still say what the turn says: the same text (thought summaries
/// aside) and the same calls, by name and arguments, in order.
fn same_turn(saved: &[Value], text: Option<&str>, calls: &[ToolCall], args: &[Value]) -> bool {
    let mut saved_text = String::new();
    let mut saved_calls = Vec::new();
    for part in saved {
        if let Some(call) = part.get("functionCall") {
            saved_calls.push((
                call.get("name").and_then(Value::as_str).unwrap_or(""),
                call.get("args").cloned().unwrap_or_else(|| json!({})),
            ));
        } else if let Some(t) = part.get("text").and_then(Value::as_str)
            && part.get("thought").and_then(Value::as_bool) != Some(true)
        {
            saved_text.push_str(t);
        }
    }
    // A part that is not an object (a damaged cassette or journal) would be refused
    // by the API: the turn is rebuilt instead.
    saved.iter().all(Value::is_object)
        && saved_text == text.unwrap_or("")
        && saved_calls.len() == calls.len()
        && saved_calls
            .iter()
            .zip(calls.iter().zip(args))
            .all(|((name, saved_args), (call, args))| *name == call.name && saved_args == args)
}

/// `usageMetadata`, its counts checked ([`super::usage`]): input is
/// `promptTokenCount` (which includes the cached content), of which
/// `cachedContentTokenCount` is the cached part; output is `candidatesTokenCount +
/// thoughtsTokenCount` (absent fields count 0), of which `thoughtsTokenCount` is the
/// reasoning part.
fn parse_usage(usage: Option<&Value>) -> UsageReading {
    let Some(usage) = usage.filter(|u| !u.is_null()) else {
        return UsageReading::Absent;
    };
    let Some(obj) = usage.as_object() else {
        return UsageReading::Implausible(format!(
            "`usageMetadata` is {}, not an object",
            kind(usage)
        ));
    };
    let output = ["candidatesTokenCount", "thoughtsTokenCount"]
        .iter()
        .map(|k| usage::count(obj.get(*k), k))
        .collect::<Result<Vec<_>, _>>();
    let totals = match (
        usage::count(obj.get("promptTokenCount"), "promptTokenCount"),
        output,
    ) {
        (Ok(input), Ok(output)) => UsageReading::Counted(Usage {
            input_tokens: input.unwrap_or(0),
            output_tokens: usage::sum(&output),
            reasoning_tokens: output[1].unwrap_or(0),
            ..Default::default()
        }),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
    };
    let reasoning = match &totals {
        UsageReading::Counted(u) => Ok(Some(u.reasoning_tokens)),
        _ => Ok(None),
    };
    usage::with_details(
        totals,
        usage::Details {
            cached_input: usage::count(
                obj.get("cachedContentTokenCount"),
                "cachedContentTokenCount",
            ),
            cache_write: Ok(None),
            reasoning,
        },
    )
}

/// A call's arguments as a JSON object, if they are one (blank counts as `{}`).
fn arguments_object(arguments: &str) -> Option<Value> {
    if arguments.trim().is_empty() {
        return Some(json!({}));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

/// The schema to send as `parametersJsonSchema`: unchanged but for a root `$schema`.
fn json_schema(parameters: &Value) -> Option<Value> {
    match parameters {
        Value::Null => None,
        Value::Object(obj) => {
            let mut obj = obj.clone();
            obj.shift_remove("$schema");
            Some(Value::Object(obj))
        }
        other => Some(other.clone()),
    }
}

/// A Google RPC error object as one line.
fn describe_error(error: &Value) -> String {
    format!("the body is {}", api_error(error))
}

/// A Google RPC error object in words: `an API error 400 INVALID_ARGUMENT: message
/// (details)` (also the error of a streamed chunk).
pub(super) fn api_error(error: &Value) -> String {
    let Some(obj) = error.as_object() else {
        return format!("an API error: {error}");
    };
    let mut out = String::from("an API error");
    if let Some(code) = obj.get("code").and_then(Value::as_i64) {
        out.push_str(&format!(" {code}"));
    }
    if let Some(status) = obj.get("status").and_then(Value::as_str) {
        out.push_str(&format!(" {status}"));
    }
    let message = obj
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    out.push_str(&format!(": {message}"));
    let details: Vec<&str> = obj
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            ["detail", "reason", "description"]
                .iter()
                .find_map(|k| d.get(*k).and_then(Value::as_str))
        })
        .collect();
    if !details.is_empty() {
        out.push_str(&format!(" ({})", details.join("; ")));
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn preview(text: &str) -> String {
    let t: String = text.chars().take(80).collect();
    if t.len() < text.len() {
        format!("`{t}…`")
    } else {
        format!("`{t}`")
    }
}

#[async_trait]
impl Provider for GeminiProvider {
    async fn complete(
        &self,
        request: &Request,
        _key: &TrialKey,
    ) -> Result<Response, ProviderError> {
        // Serialised before the await: the request tree is freed while it is still hot.
        let payload = serde_json::to_vec(&self.build_body(request)?).map_err(|e| {
            ProviderError::Unsupported {
                provider: self.config.provider.clone(),
                message: e.to_string(),
            }
        })?;
        let round = request.round();
        let secrets = self.config.secrets();
        let headers: Vec<Header> = self
            .config
            .key()
            .map(|k| Header {
                name: "x-goog-api-key".into(),
                value: k.to_string(),
                sensitive: true,
            })
            .into_iter()
            .chain(self.config.custom_headers())
            .collect();
        let url = if self.config.stream {
            self.stream_endpoint()
        } else {
            self.endpoint()
        };
        let exchange = Exchange {
            http: &self.http,
            provider: &self.config.provider,
            url: &url,
            headers: &headers,
            secrets: &secrets,
        };
        if self.config.stream {
            let mut response = exchange.stream(payload, GeminiAssembler::new()).await?;
            response.assign_missing_ids(round);
            return Ok(response);
        }
        exchange
            .send(payload, |body| {
                // Gemini usually sends calls without ids; a loop pairs results by id.
                Self::parse_response(body).map(|mut r| {
                    r.assign_missing_ids(round);
                    r
                })
            })
            .await
    }

    fn source(&self) -> String {
        format!(
            "live gemini:{} at {}",
            self.config.model, self.config.base_url
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
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::provider::http::{HttpError, HttpSettings};
    use crate::provider::types::ToolDefinition;

    const KEY: &str = "AIza-test-SECRETSECRET1234";
    const MODEL: &str = "gemini-2.5-flash";

    const SINGLE: &str = include_str!("testdata/gemini/function_call_single_rest.json");
    const PARALLEL: &str = include_str!("testdata/gemini/function_call_parallel.json");
    const MIXED: &str = include_str!("testdata/gemini/function_call_mixed_text.json");
    const NULL_ARG: &str = include_str!("testdata/gemini/function_call_null_arg_usage.json");
    const THINKING: &str =
        include_str!("testdata/gemini/function_call_thinking_signature_usage.json");
    const ERROR_400: &str = include_str!("testdata/gemini/error_400_http.json");

    fn config(base_url: &str) -> ProviderConfig {
        let mut c = ProviderConfig::new("gemini", MODEL, base_url);
        c.api_key = Some(SecretString::from(KEY.to_string()));
        c
    }

    /// A server that answers at once is far inside this timeout even on a loaded
    /// machine, so attempt counts never depend on the machine's speed; the timeout test
    /// uses a server that does not answer at all.
    fn settings() -> HttpSettings {
        HttpSettings {
            timeout: Duration::from_secs(30),
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(2),
        }
    }

    fn offline(config: ProviderConfig) -> GeminiProvider {
        GeminiProvider::new(config, Http::new(settings()).unwrap())
    }

    fn weather_tools() -> Arc<Vec<ToolDefinition>> {
        Arc::new(vec![
            ToolDefinition {
                name: "get_weather".into(),
                description: "Current weather for a city.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": false
                })
                .into(),
            },
            ToolDefinition {
                name: "get_time".into(),
                description: "Local time in a city.".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                    .into(),
            },
        ])
    }

    fn ask(choice: ToolChoice) -> Request {
        Request {
            messages: vec![Message::User {
                content: "Weather in Paris?".into(),
            }],
            tools: weather_tools(),
            tool_choice: choice,
        }
    }

    /// System prompt, a turn with text and two calls, their results (object, plain
    /// text) and a follow-up question.
    fn multi_turn() -> Request {
        Request {
            messages: vec![
                Message::System {
                    content: "Be brief.".into(),
                },
                Message::User {
                    content: "Weather and time in Paris?".into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some("Checking.".into()),
                    tool_calls: vec![
                        ToolCall {
                            id: Some("call_w".into()),
                            name: "get_weather".into(),
                            arguments: r#"{"city":"Paris"}"#.into(),
                        },
                        ToolCall {
                            id: Some("call_t".into()),
                            name: "get_time".into(),
                            arguments: r#"{"city":"Paris"}"#.into(),
                        },
                    ],
                },
                // Answered out of order: names come from the ids, not the position.
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "call_t".into(),
                    content: "14:05".into(),
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "call_w".into(),
                    content: r#"{"temp_c": 21, "sky": "clear"}"#.into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some("21 °C and clear; 14:05.".into()),
                    tool_calls: vec![],
                },
                Message::System {
                    content: "Answer in French.".into(),
                },
                Message::User {
                    content: "And Lyon?".into(),
                },
            ],
            tools: weather_tools(),
            tool_choice: ToolChoice::Auto,
        }
    }

    fn trial() -> TrialKey {
        TrialKey {
            case_id: "weather".into(),
            target: format!("gemini:{MODEL}"),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        }
    }

    fn parse(text: &str) -> Response {
        GeminiProvider::parse_response(&serde_json::from_str(text).unwrap()).unwrap()
    }

    // ---- build_body ----

    #[test]
    fn every_tool_choice_mode_maps_to_a_function_calling_config() {
        let p = offline(config("http://x/v1beta"));
        let cases = [
            (ToolChoice::None, json!({"mode": "NONE"})),
            (ToolChoice::Auto, json!({"mode": "AUTO"})),
            (ToolChoice::Required, json!({"mode": "ANY"})),
            (
                ToolChoice::Function("get_time".into()),
                json!({"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
            ),
        ];
        for (choice, expected) in cases {
            let body = p.build_body(&ask(choice.clone())).unwrap();
            assert_eq!(
                body["toolConfig"],
                json!({ "functionCallingConfig": expected }),
                "{choice}"
            );
            // Declarations are sent in every mode, `none` included.
            let decls = body["tools"][0]["functionDeclarations"].as_array().unwrap();
            assert_eq!(decls.len(), 2, "{choice}");
            assert_eq!(
                body["contents"],
                json!([{"role": "user", "parts": [{"text": "Weather in Paris?"}]}])
            );
            assert!(body.get("systemInstruction").is_none());
            assert!(body.get("generationConfig").is_none());
        }
    }

    #[test]
    fn without_tools_only_none_and_auto_can_be_sent() {
        let p = offline(config("http://x"));
        for choice in [ToolChoice::None, ToolChoice::Auto] {
            let mut r = ask(choice);
            r.tools = Arc::new(vec![]);
            let body = p.build_body(&r).unwrap();
            assert!(body.get("tools").is_none() && body.get("toolConfig").is_none());
        }
        for choice in [ToolChoice::Required, ToolChoice::Function("f".into())] {
            let mut r = ask(choice);
            r.tools = Arc::new(vec![]);
            let e = p.build_body(&r).unwrap_err();
            assert!(matches!(e, ProviderError::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains("at least one tool"), "{e}");
        }
    }

    #[test]
    fn a_multi_turn_request_maps_roles_calls_and_results() {
        let body = offline(config("http://x"))
            .build_body(&multi_turn())
            .unwrap();
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}, {"text": "Answer in French."}]})
        );
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "Weather and time in Paris?"}]},
                {"role": "model", "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                     "thoughtSignature": DUMMY_THOUGHT_SIGNATURE},
                    {"functionCall": {"name": "get_time", "args": {"city": "Paris"}}}
                ]},
                // Back in the order of the calls: Gemini pairs same-named calls by
                // position.
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get_weather",
                                          "response": {"temp_c": 21, "sky": "clear"}}},
                    {"functionResponse": {"name": "get_time", "response": {"result": "14:05"}}}
                ]},
                {"role": "model", "parts": [{"text": "21 °C and clear; 14:05."}]},
                {"role": "user", "parts": [{"text": "And Lyon?"}]}
            ])
        );
        // No call ids on the wire: the API rejects them.
        assert!(!body.to_string().contains("call_w"));
    }

    #[test]
    fn non_object_results_are_wrapped_and_blank_arguments_are_empty_objects() {
        let r = Request {
            messages: vec![
                Message::User {
                    content: "go".into(),
                },
                Message::Assistant {
                    state: None,
                    content: Some(String::new()),
                    tool_calls: vec![ToolCall {
                        id: Some("c1".into()),
                        name: "now".into(),
                        arguments: "".into(),
                    }],
                },
                Message::Tool {
                    name: String::new(),
                    is_error: false,
                    tool_call_id: "c1".into(),
                    content: "[1, 2]".into(),
                },
                // An empty assistant turn is dropped.
                Message::Assistant {
                    state: None,
                    content: None,
                    tool_calls: vec![],
                },
            ],
            tools: weather_tools(),
            tool_choice: ToolChoice::Auto,
        };
        let body = offline(config("http://x")).build_body(&r).unwrap();
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3);
        assert_eq!(
            contents[1]["parts"],
            json!([{"functionCall": {"name": "now", "args": {}},
                    "thoughtSignature": DUMMY_THOUGHT_SIGNATURE}])
        );
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"]["response"],
            json!({"result": [1, 2]})
        );
    }

    #[test]
    fn unanswerable_history_is_unsupported() {
        let p = offline(config("http://x"));
        for args in ["[1, 2]", "not json", "\"a\""] {
            let mut r = multi_turn();
            if let Message::Assistant { tool_calls, .. } = &mut r.messages[2] {
                tool_calls[1].arguments = args.into();
            }
            let e = p.build_body(&r).unwrap_err();
            assert!(matches!(e, ProviderError::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains("`get_time`"), "{e}");
        }
        let mut r = multi_turn();
        r.messages[3] = Message::Tool {
            name: String::new(),
            is_error: false,
            tool_call_id: "call_unknown".into(),
            content: "x".into(),
        };
        let e = p.build_body(&r).unwrap_err();
        assert!(matches!(e, ProviderError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("call_unknown"), "{e}");
    }

    #[test]
    fn schemas_go_to_parameters_json_schema_minus_the_root_dollar_schema() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "$schema": {"type": "string"},
                "unit": {"anyOf": [{"const": "C"}, {"const": "F"}]},
                "where": {"$ref": "#/$defs/place"}
            },
            "$defs": {"place": {"type": "string", "minLength": 1}},
            "additionalProperties": false
        });
        let r = Request {
            messages: vec![Message::User {
                content: "hi".into(),
            }],
            tools: Arc::new(vec![
                ToolDefinition {
                    name: "convert".into(),
                    description: "Convert.".into(),
                    parameters: schema.clone().into(),
                },
                ToolDefinition {
                    name: "ping".into(),
                    description: "No arguments.".into(),
                    parameters: Value::Null.into(),
                },
            ]),
            tool_choice: ToolChoice::Auto,
        };
        let body = offline(config("http://x")).build_body(&r).unwrap();
        let decls = &body["tools"][0]["functionDeclarations"];
        let mut expected = schema;
        expected.as_object_mut().unwrap().shift_remove("$schema");
        assert_eq!(
            decls[0],
            json!({"name": "convert", "description": "Convert.", "parametersJsonSchema": expected})
        );
        assert!(decls[0].get("parameters").is_none());
        assert_eq!(
            decls[1],
            json!({"name": "ping", "description": "No arguments."})
        );
    }

    #[test]
    fn json_answers_set_the_response_mime_type_without_tools() {
        let mut c = config("http://x");
        c.json_answers = true;
        c.temperature = Some(0.5);
        let p = offline(c);
        let with_tools = p.build_body(&ask(ToolChoice::Auto)).unwrap();
        assert_eq!(with_tools["generationConfig"], json!({"temperature": 0.5}));
        let mut r = ask(ToolChoice::Auto);
        r.tools = std::sync::Arc::new(vec![]);
        let body = p.build_body(&r).unwrap();
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.5, "responseMimeType": "application/json"})
        );
    }

    #[test]
    fn sampling_settings_and_extra_fields() {
        let mut c = config("http://x");
        c.temperature = Some(0.0);
        c.max_tokens = Some(256);
        c.seed = Some(7);
        c.parallel_tool_calls = Some(false);
        let body = offline(c.clone())
            .build_body(&ask(ToolChoice::Auto))
            .unwrap();
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.0, "maxOutputTokens": 256, "seed": 7})
        );
        // parallel_tool_calls has no Gemini equivalent.
        assert!(!body.to_string().contains("arallel"));

        c.extra.insert(
            "safetySettings".into(),
            json!([{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]),
        );
        c.extra.insert(
            "generationConfig".into(),
            json!({"thinkingConfig": {"thinkingBudget": 0}}),
        );
        let body = offline(c.clone())
            .build_body(&ask(ToolChoice::Auto))
            .unwrap();
        assert_eq!(body["safetySettings"][0]["threshold"], "BLOCK_NONE");
        // Extra wins, whole: it replaces our generationConfig.
        assert_eq!(
            body["generationConfig"],
            json!({"thinkingConfig": {"thinkingBudget": 0}})
        );

        c.seed = Some(u64::from(u32::MAX));
        let e = offline(c).build_body(&ask(ToolChoice::Auto)).unwrap_err();
        assert!(matches!(e, ProviderError::Unsupported { .. }), "{e}");
    }

    #[test]
    fn endpoint_and_source() {
        let p = offline(config("https://generativelanguage.googleapis.com/v1beta/"));
        assert_eq!(
            p.endpoint(),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            p.source(),
            "live gemini:gemini-2.5-flash at https://generativelanguage.googleapis.com/v1beta"
        );
        let mut c = config("http://x");
        c.model = "models/gemini-2.0-flash".into();
        assert_eq!(
            offline(c).endpoint(),
            "http://x/models/gemini-2.0-flash:generateContent"
        );
    }

    // ---- parse_response on the wire examples ----

    #[test]
    fn parses_the_single_call_rest_example() {
        let r = parse(SINGLE);
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: None,
                name: "find_theaters".into(),
                arguments: r#"{"movie":"Barbie","location":"Mountain View, CA"}"#.into(),
            }]
        );
        assert_eq!(r.text, None);
        assert_eq!(r.finish_reason.as_deref(), Some("STOP"));
        assert_eq!(r.usage, None);
    }

    #[test]
    fn parses_three_parallel_calls_in_order() {
        let r = parse(PARALLEL);
        let args: Vec<&str> = r.tool_calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(
            args,
            [r#"{"y":1,"x":2}"#, r#"{"y":3,"x":4}"#, r#"{"y":5,"x":6}"#]
        );
        assert!(
            r.tool_calls
                .iter()
                .all(|c| c.name == "sum" && c.id.is_none())
        );
        assert_eq!(r.text, None);
    }

    #[test]
    fn parses_interleaved_text_and_calls() {
        let r = parse(MIXED);
        assert_eq!(r.text.as_deref(), Some("The sum of [1, 2,3] is"));
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[1].arguments, r#"{"y":3,"x":3}"#);
    }

    #[test]
    fn parses_a_null_argument_and_usage() {
        let r = parse(NULL_ARG);
        assert_eq!(r.tool_calls[0].name, "functionName");
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"original_title":"String","season":null}"#
        );
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 774,
                output_tokens: 4176,
                estimated: false,
                ..Default::default()
            })
        );
    }

    #[test]
    fn parses_thinking_with_a_signature_and_counts_thoughts_as_output() {
        let r = parse(THINKING);
        // The thought summary is not the answer.
        assert_eq!(r.text, None);
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: None,
                name: "now".into(),
                arguments: "{}".into(),
            }]
        );
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 38,
                output_tokens: 8 + 501,
                estimated: false,
                reasoning_tokens: 501,
                ..Default::default()
            })
        );
    }

    #[test]
    fn the_google_rpc_error_body_is_an_error() {
        let e =
            GeminiProvider::parse_response(&serde_json::from_str(ERROR_400).unwrap()).unwrap_err();
        assert!(e.contains("400 FAILED_PRECONDITION"), "{e}");
        assert!(e.contains("User location is not supported"), "{e}");
    }

    #[test]
    fn missing_candidates_name_the_block_reason() {
        let e = GeminiProvider::parse_response(&json!({
            "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
            "usageMetadata": {"promptTokenCount": 9}
        }))
        .unwrap_err();
        assert!(e.contains("blockReason SAFETY"), "{e}");
        let e = GeminiProvider::parse_response(&json!({"candidates": []})).unwrap_err();
        assert_eq!(e, "no candidates in the response");
        let e = GeminiProvider::parse_response(&json!([{"candidates": []}])).unwrap_err();
        assert!(e.contains("a list"), "{e}");
        let e = GeminiProvider::parse_response(&json!({"candidates": [{"content": {
            "parts": [{"functionCall": {"args": {}}}]}}]}))
        .unwrap_err();
        assert!(e.contains("no name"), "{e}");
    }

    #[test]
    fn lenient_with_missing_content_ids_and_extra_fields() {
        let r = GeminiProvider::parse_response(&json!({
            "candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0,
                            "finishMessage": "Malformed function call: ..."}],
            "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12},
            "modelVersion": "gemini-2.5-flash"
        }))
        .unwrap();
        assert_eq!(r.finish_reason.as_deref(), Some("MALFORMED_FUNCTION_CALL"));
        assert!(r.text.is_none() && r.tool_calls.is_empty());
        assert_eq!(r.usage.unwrap().output_tokens, 0);

        let r =
            GeminiProvider::parse_response(&json!({"candidates": [{"content": {"role": "model",
            "parts": [
                {"functionCall": {"id": "fc_1", "name": "a"}, "thoughtSignature": "xyz"},
                {"id": "fc_2", "functionCall": {"name": "b", "args": null}},
                {"text": "", "thoughtSignature": "abc"},
                {"executableCode": {"code": "print(1)"}}
            ]}}]}))
            .unwrap();
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("fc_1"));
        assert_eq!(r.tool_calls[0].arguments, "{}");
        assert_eq!(r.tool_calls[1].id.as_deref(), Some("fc_2"));
        // An explicit `null` is kept as sent (absent `args` above means no arguments).
        assert_eq!(r.tool_calls[1].arguments, "null");
        assert_eq!(r.text, None);
        assert_eq!(r.usage, None);
    }

    // ---- the whole provider against a local fake server ----

    fn endpoint_path() -> String {
        format!("/v1beta/models/{MODEL}:generateContent")
    }

    async fn live(server: &MockServer, settings: HttpSettings) -> GeminiProvider {
        GeminiProvider::new(
            config(&format!("{}/v1beta", server.uri())),
            Http::new(settings).unwrap(),
        )
    }

    fn json_reply(status: u16, body: &str) -> ResponseTemplate {
        ResponseTemplate::new(status).set_body_raw(body.as_bytes().to_vec(), "application/json")
    }

    async fn serve_once(body: &str) -> (MockServer, Result<Response, ProviderError>) {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(200, body))
            .mount(&server)
            .await;
        let result = live(&server, settings())
            .await
            .complete(&ask(ToolChoice::Auto), &trial())
            .await;
        (server, result)
    }

    fn assert_no_key(e: &ProviderError) {
        let text = e.to_string();
        assert!(!text.contains(KEY), "{text}");
        assert!(!format!("{e:?}").contains(KEY), "{e:?}");
    }

    #[tokio::test]
    async fn live_single_call() {
        let (_server, r) = serve_once(SINGLE).await;
        let r = r.unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "find_theaters");
        assert_eq!(r.attempts, 1);
        assert!(r.latency_ms > 0.0);
        assert_eq!(r.raw, Some(serde_json::from_str(SINGLE).unwrap()));
    }

    #[tokio::test]
    async fn live_three_parallel_calls() {
        let (_server, r) = serve_once(PARALLEL).await;
        assert_eq!(r.unwrap().tool_calls.len(), 3);
    }

    #[tokio::test]
    async fn live_mixed_text_and_call() {
        let (_server, r) = serve_once(MIXED).await;
        let r = r.unwrap();
        assert_eq!(r.text.as_deref(), Some("The sum of [1, 2,3] is"));
        assert_eq!(r.tool_calls.len(), 2);
    }

    #[tokio::test]
    async fn live_thinking_signature_and_usage() {
        let (_server, r) = serve_once(THINKING).await;
        let r = r.unwrap();
        assert_eq!(r.text, None);
        assert_eq!(r.tool_calls[0].arguments, "{}");
        assert_eq!(r.usage.unwrap().output_tokens, 509);
        assert_eq!(r.finish_reason.as_deref(), Some("STOP"));
    }

    #[tokio::test]
    async fn live_null_argument() {
        let (_server, r) = serve_once(NULL_ARG).await;
        assert_eq!(
            r.unwrap().tool_calls[0].arguments,
            r#"{"original_title":"String","season":null}"#
        );
    }

    #[tokio::test]
    async fn live_429_resource_exhausted_waits_for_retry_after() {
        let server = MockServer::start().await;
        // Written for this test: no recorded 429 body was found (see testdata README).
        let exhausted = r#"{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}"#;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(429, exhausted).insert_header("retry-after", "1"))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(200, SINGLE))
            .mount(&server)
            .await;
        let started = Instant::now();
        let r = live(&server, settings())
            .await
            .complete(&ask(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(950),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(r.attempts, 2);
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert_eq!(r.tool_calls[0].name, "find_theaters");
    }

    #[tokio::test]
    async fn live_503_then_success() {
        let server = MockServer::start().await;
        let unavailable = r#"{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}"#;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(503, unavailable))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(200, PARALLEL))
            .mount(&server)
            .await;
        let r = live(&server, settings())
            .await
            .complete(&ask(ToolChoice::Auto), &trial())
            .await
            .unwrap();
        assert_eq!(r.attempts, 2);
        assert_eq!(r.tool_calls.len(), 3);
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn live_recorded_400_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(400, ERROR_400))
            .mount(&server)
            .await;
        let e = live(&server, settings())
            .await
            .complete(&ask(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        match &e {
            ProviderError::Http {
                provider,
                source:
                    HttpError::Status {
                        status,
                        message,
                        attempts,
                    },
            } => {
                assert_eq!(provider, "gemini");
                assert_eq!((*status, *attempts), (400, 1));
                assert!(message.contains("FAILED_PRECONDITION"), "{message}");
                assert!(
                    message.contains("User location is not supported"),
                    "{message}"
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn live_timeout_fails_after_max_attempts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            // Never, as far as the test is concerned.
            .respond_with(json_reply(200, SINGLE).set_delay(Duration::from_secs(600)))
            .mount(&server)
            .await;
        let s = HttpSettings {
            max_attempts: 2,
            timeout: Duration::from_millis(500),
            ..settings()
        };
        let e = live(&server, s)
            .await
            .complete(&ask(ToolChoice::Auto), &trial())
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                ProviderError::Http {
                    source: HttpError::Timeout { attempts: 2, .. },
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn live_malformed_bodies() {
        // Not JSON at all: the HTTP layer's InvalidBody.
        let (_server, r) = serve_once(r#"{"candidates": [{"content": "#).await;
        let e = r.unwrap_err();
        assert!(
            matches!(
                e,
                ProviderError::Http {
                    source: HttpError::InvalidBody { .. },
                    ..
                }
            ),
            "{e:?}"
        );
        // JSON, but not a generateContent response: a decode error.
        let (_server, r) = serve_once(r#"{"candidates": {"oops": true}}"#).await;
        let e = r.unwrap_err();
        assert!(matches!(e, ProviderError::Decode { .. }), "{e:?}");
        assert!(e.to_string().contains("not a list"), "{e}");
        // A 200 carrying a Google RPC error.
        let (_server, r) = serve_once(ERROR_400).await;
        let e = r.unwrap_err();
        assert!(matches!(e, ProviderError::Decode { .. }), "{e:?}");
        assert!(e.to_string().contains("FAILED_PRECONDITION"), "{e}");
    }

    #[tokio::test]
    async fn live_errors_never_show_the_key() {
        let echo = format!(
            r#"{{"error": {{"code": 400, "message": "API key not valid: {KEY}", "status": "INVALID_ARGUMENT"}}}}"#
        );
        // As an error status, as a 200 error object, and inside a malformed body.
        for (status, body) in [
            (400, echo.clone()),
            (200, echo.clone()),
            (200, format!("<html>{KEY}")),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(json_reply(status, &body))
                .mount(&server)
                .await;
            let e = live(&server, settings())
                .await
                .complete(&ask(ToolChoice::Auto), &trial())
                .await
                .unwrap_err();
            assert!(e.to_string().contains("[REDACTED]"), "{e}");
            assert_no_key(&e);
        }
        // An echoed key does not reach the stored raw body either.
        let body = SINGLE.replace("Barbie", KEY);
        let (_server, r) = serve_once(&body).await;
        let r = r.unwrap();
        assert!(!r.raw.unwrap().to_string().contains(KEY));
    }

    #[tokio::test]
    async fn live_request_body_and_headers() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(endpoint_path()))
            .respond_with(json_reply(200, MIXED))
            .mount(&server)
            .await;
        let mut r = multi_turn();
        r.tool_choice = ToolChoice::Function("get_weather".into());
        live(&server, settings())
            .await
            .complete(&r, &trial())
            .await
            .unwrap();
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 1);
        let req = &requests[0];
        assert_eq!(
            req.headers.get("x-goog-api-key").unwrap().to_str().unwrap(),
            KEY
        );
        assert!(req.headers.get("authorization").is_none());
        assert!(!req.url.as_str().contains(KEY), "{}", req.url);
        assert_eq!(req.url.query(), None);
        assert_eq!(req.url.path(), endpoint_path());
        assert_eq!(
            req.headers.get("content-type").unwrap().to_str().unwrap(),
            "application/json"
        );
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let decls = body["tools"][0]["functionDeclarations"].as_array().unwrap();
        assert_eq!(decls[0]["name"], "get_weather");
        assert_eq!(
            decls[0]["parametersJsonSchema"]["additionalProperties"],
            false
        );
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}})
        );
        let results = &body["contents"][2];
        assert_eq!(results["role"], "user");
        assert_eq!(
            results["parts"][0],
            json!({"functionResponse": {"name": "get_weather",
                                        "response": {"temp_c": 21, "sky": "clear"}}})
        );
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Be brief.");
        assert!(!body.to_string().contains(KEY));
    }

    // ---- cached content and thoughts ----

    #[test]
    fn cached_content_and_thoughts_are_kept_apart() {
        // The recorded thinking answer: its thoughts are the reasoning part of the output.
        let u = parse(THINKING).usage.unwrap();
        assert_eq!((u.output_tokens, u.reasoning_tokens), (8 + 501, 501));
        assert_eq!(u.cached_input_tokens, 0);
        // The same answer with a cache hit (`cachedContentTokenCount` set by hand: no
        // recorded body with one was found); it is inside `promptTokenCount`.
        let mut body: Value = serde_json::from_str(THINKING).unwrap();
        body["usageMetadata"]["cachedContentTokenCount"] = json!(32);
        let u = GeminiProvider::parse_response(&body)
            .unwrap()
            .usage
            .unwrap();
        assert_eq!(
            u,
            Usage {
                cached_input_tokens: 32,
                reasoning_tokens: 501,
                ..Usage::new(38, 8 + 501)
            }
        );
        assert_eq!(u.fresh_input_tokens(), 6);
        // More cached than the whole prompt is implausible: the usage is dropped.
        body["usageMetadata"]["cachedContentTokenCount"] = json!(39);
        let r = GeminiProvider::parse_response(&body).unwrap();
        assert_eq!(r.usage, None);
        assert_eq!(
            r.warnings,
            vec![
                "implausible usage from gemini ignored: 39 cached and 0 cache-write input tokens are more than the 38 input tokens"
            ]
        );
    }
}
