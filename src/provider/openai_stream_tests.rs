//! Tests of the streamed Chat Completions reader: the recorded OpenAI streams, Ollama
//! `/v1`-style streams with their quirks, streamed against non-streamed answers, and the
//! whole provider over HTTP with bodies split at hostile points.

use std::sync::Arc;
use std::time::{Duration, Instant};

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::*;
use crate::provider::config::ProviderConfig;
use crate::provider::http::{Http, HttpSettings};
use crate::provider::openai::OpenAiProvider;
use crate::provider::stream::test_server::{
    call, detailed, hostile_offsets, serve, split_at, trial, usage,
};
use crate::provider::types::assigned_call_id;
use crate::provider::{
    Message, Provider, ProviderError, Request, ToolCall, ToolChoice, ToolDefinition,
};

const STREAM_SINGLE: &str = include_str!("testdata/openai/stream_single_tool_call.sse");
const STREAM_PARALLEL: &str = include_str!("testdata/openai/stream_parallel_tool_calls.sse");
const STREAM_TEXT: &str = include_str!("testdata/openai/stream_text.sse");
const OLLAMA_CHUNK: &str =
    include_str!("testdata/openai/ollama_api_chat_stream_tool_call_chunk.json");

const SINGLE_RECORDED: &str = include_str!("testdata/openai/chat_single_tool_call_recorded.json");
const SINGLE_APIREF: &str = include_str!("testdata/openai/chat_single_tool_call_apiref.json");
const PARALLEL: &str = include_str!("testdata/openai/chat_parallel_tool_calls.json");
const TEXT_RECORDED: &str = include_str!("testdata/openai/chat_text_answer_recorded.json");
const TEXT_USAGE_DETAILS: &str =
    include_str!("testdata/openai/chat_text_answer_usage_details.json");
const FINISH_LENGTH: &str = include_str!("testdata/openai/chat_finish_length.json");
const OLLAMA_NATIVE: &str = include_str!("testdata/openai/ollama_api_chat_tool_call.json");

const KEY: &str = "sk-test-STREAMSECRET987";

// ---- reading events without HTTP ----

/// The `data:` payloads of an SSE text (events split at blank lines).
fn events(sse: &str) -> Vec<String> {
    sse.split("\n\n")
        .filter_map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

/// Feed `datas` to an assembler of round `round` until it says done; its answer.
fn assemble_round<S: AsRef<str>>(datas: &[S], round: usize) -> Result<Response, String> {
    let mut a = OpenAiAssembler::new(round);
    let mut marks = Marks::new(Instant::now());
    let mut terminated = false;
    for d in datas {
        let event = SseEvent {
            event: None,
            data: d.as_ref().to_string(),
        };
        if a.event(&event, &mut marks)? == Step::Done {
            terminated = true;
            break;
        }
    }
    a.finish(terminated)
}

fn assemble<S: AsRef<str>>(datas: &[S]) -> Result<Response, String> {
    assemble_round(datas, 0)
}

/// The non-streamed reading of `body`, as the provider gives it (ids assigned).
fn non_streamed(body: &Value, round: usize) -> Response {
    let mut r = parse_response(body).unwrap();
    r.assign_missing_ids(round);
    r
}

// ---- the recorded OpenAI streams ----

#[test]
fn recorded_single_call_stream_assembles_byte_for_byte() {
    let r = assemble(&events(STREAM_SINGLE)).unwrap();
    assert_eq!(
        r.tool_calls,
        vec![call(
            Some("call_4XzlGBLtUe9dy3GVNV4jhq7h"),
            "get_weather",
            r#"{"city":"New York City"}"#
        )]
    );
    assert_eq!(r.text, None);
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(r.usage, usage(44, 16));
    assert_eq!(r.state, None);
    assert!(r.warnings.is_empty());
}

#[test]
fn recorded_parallel_stream_keeps_calls_apart_by_index() {
    let r = assemble(&events(STREAM_PARALLEL)).unwrap();
    assert_eq!(
        r.tool_calls,
        vec![
            call(
                Some("call_JMW1whyEaYG438VE1OIflxA2"),
                "GetWeatherArgs",
                r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
            ),
            call(
                Some("call_DNYTawLBoN8fj3KN6qU9N1Ou"),
                "get_stock_price",
                r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#
            ),
        ]
    );
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(r.usage, usage(149, 60));
}

#[test]
fn recorded_text_stream_joins_the_deltas() {
    let r = assemble(&events(STREAM_TEXT)).unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some(
            "I'm unable to provide real-time weather updates. To get the current weather in \
             San Francisco, I recommend checking a reliable weather website or a weather app."
        )
    );
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(r.usage, usage(14, 30));
}

/// Each recorded stream equals the non-streamed body of the same answer, written by
/// hand from the stream (the recorded non-streamed bodies are other samples: other ids
/// and wording).
#[test]
fn recorded_streams_equal_their_non_streamed_bodies() {
    let pairs = [
        (
            STREAM_SINGLE,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_4XzlGBLtUe9dy3GVNV4jhq7h", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\":\"New York City\"}"}}],
                "refusal": null}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 44, "completion_tokens": 16, "total_tokens": 60}}),
        ),
        (
            STREAM_PARALLEL,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_JMW1whyEaYG438VE1OIflxA2", "type": "function", "function": {
                        "name": "GetWeatherArgs",
                        "arguments": "{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}"}},
                    {"id": "call_DNYTawLBoN8fj3KN6qU9N1Ou", "type": "function", "function": {
                        "name": "get_stock_price",
                        "arguments": "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}"}}]},
                "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 149, "completion_tokens": 60}}),
        ),
        (
            STREAM_TEXT,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "refusal": null,
                "content": "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app."},
                "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 14, "completion_tokens": 30}}),
        ),
    ];
    for (sse, body) in pairs {
        assert_eq!(assemble(&events(sse)).unwrap(), non_streamed(&body, 0));
    }
}

// ---- any non-streamed answer, streamed in fragments ----

/// `text` in pieces of `size` characters (one piece when `size` is 0).
fn pieces(text: &str, size: usize) -> Vec<String> {
    if size == 0 || text.is_empty() {
        return vec![text.to_string()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The stream a server following the API would send for the non-streamed `body`:
/// a role chunk, reasoning and text fragments of `size` characters, each call's first entry (index,
/// id, type, name, `""`) and argument fragments, the finish chunk, a usage chunk with
/// `choices: []` and `[DONE]`. Arguments given as a JSON value go whole, as sent.
fn streamed(body: &Value, size: usize) -> Vec<String> {
    let choice = &body["choices"][0];
    let message = &choice["message"];
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-x", "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    for field in REASONING_FIELDS {
        match &message[*field] {
            Value::String(text) => {
                for p in pieces(text, size) {
                    out.push(chunk(json!({ *field: p }), Value::Null));
                }
            }
            Value::Array(items) => {
                for item in items {
                    out.push(chunk(json!({ *field: [item] }), Value::Null));
                }
            }
            _ => {}
        }
    }
    if let Some(text) = message["content"].as_str() {
        for p in pieces(text, size) {
            out.push(chunk(json!({"content": p}), Value::Null));
        }
    }
    if let Some(refusal) = message["refusal"].as_str() {
        for p in pieces(refusal, size) {
            out.push(chunk(json!({"refusal": p}), Value::Null));
        }
    }
    for (i, c) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut first = json!({"index": i, "type": "function",
            "function": {"name": c["function"]["name"], "arguments": ""}});
        if let Some(id) = c.get("id") {
            first["id"] = id.clone();
        }
        out.push(chunk(json!({"tool_calls": [first]}), Value::Null));
        let fragments = match &c["function"]["arguments"] {
            Value::String(s) => pieces(s, size).into_iter().map(Value::from).collect(),
            other => vec![other.clone()],
        };
        for f in fragments {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": f}}]}),
                Value::Null,
            ));
        }
    }
    out.push(chunk(json!({}), choice["finish_reason"].clone()));
    if let Some(u) = body.get("usage") {
        out.push(json!({"id": "chatcmpl-x", "choices": [], "usage": u}).to_string());
    }
    out.push("[DONE]".into());
    out
}

/// Ollama's native answer as a `/v1` body (its `message` in a `choices` entry).
fn ollama_as_choice() -> Value {
    let native: Value = serde_json::from_str(OLLAMA_NATIVE).unwrap();
    json!({"choices": [{"index": 0, "message": native["message"], "finish_reason": "tool_calls"}]})
}

#[test]
fn every_recorded_answer_streamed_in_fragments_equals_its_non_streamed_reading() {
    let mut bodies: Vec<Value> = [
        SINGLE_RECORDED,
        SINGLE_APIREF,
        PARALLEL,
        TEXT_RECORDED,
        TEXT_USAGE_DETAILS,
        FINISH_LENGTH,
    ]
    .iter()
    .map(|t| serde_json::from_str(t).unwrap())
    .collect();
    bodies.push(ollama_as_choice());
    // Chinese text, emoji and escapes in arguments; a refusal; reasoning kept as state.
    bodies.push(
        json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "content": "好的，我来查一下 🌧️。", "reasoning_content": "用户问北京天气",
        "reasoning_details": [{"type": "reasoning.text", "text": "北京"},
                              {"type": "reasoning.summary", "summary": "天气"}],
        "tool_calls": [{"id": "call_zh", "type": "function", "function": {"name": "get_weather",
            "arguments": "{\"city\": \"北京\", \"note\": \"☔ \\\"雨\\\"\\n🌧️\"}"}}]},
        "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 12, "completion_tokens": 9}}),
    );
    bodies.push(
        json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]}),
    );
    for (n, body) in bodies.iter().enumerate() {
        let expected = non_streamed(body, 2);
        for size in [0, 1, 2, 3, 7] {
            let got = assemble_round(&streamed(body, size), 2)
                .unwrap_or_else(|e| panic!("body {n} in pieces of {size}: {e}"));
            assert_eq!(got, expected, "body {n} in pieces of {size}");
        }
    }
}

#[test]
fn reasoning_fragments_become_the_same_state_as_non_streamed() {
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user "}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"wants weather."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"a"}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"b"}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"Sunny."},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        r.state,
        Some(json!({"openai": {"message": {
            "reasoning_content": "The user wants weather.",
            "reasoning_details": [{"type": "reasoning.text", "text": "a"},
                                  {"type": "reasoning.text", "text": "b"}]}}}))
    );
    assert_eq!(r.text.as_deref(), Some("Sunny."));
}

#[test]
fn a_streamed_legacy_function_call_is_read_like_a_non_streamed_one() {
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","function_call":{"name":"get_time","arguments":""}}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"tz\":"}}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"function_call":{"arguments":"\"UTC\"}"}},"finish_reason":"function_call"}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![call(
            Some(&assigned_call_id(0, 0)),
            "get_time",
            r#"{"tz":"UTC"}"#
        )]
    );
    assert_eq!(r.finish_reason.as_deref(), Some("function_call"));
}

#[test]
fn arguments_that_were_only_null_stay_the_text_null_and_missing_ones_empty() {
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"a","arguments":null}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"b"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"c3","function":{"name":"c","arguments":null}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{}"}}]}}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![
            call(Some("c1"), "a", "null"),
            call(Some("c2"), "b", ""),
            call(Some("c3"), "c", "{}")
        ]
    );
}

#[test]
fn only_choice_zero_is_read() {
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"B"}}]}"#,
        r#"{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(r.text.as_deref(), Some("A"));
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
}

// ---- Ollama /v1-style streams ----

/// The call of Ollama's streamed native chunk (`get_weather`, `{"city": "Tokyo"}` as
/// an object) and its arguments as Ollama's `/v1` layer writes them (compact JSON).
fn ollama_call() -> (String, Value, String) {
    let chunk: Value = serde_json::from_str(OLLAMA_CHUNK).unwrap();
    let function = &chunk["message"]["tool_calls"][0]["function"];
    let name = function["name"].as_str().unwrap().to_string();
    let arguments = function["arguments"].clone();
    let text = serde_json::to_string(&arguments).unwrap();
    assert_eq!(text, r#"{"city":"Tokyo"}"#);
    (name, arguments, text)
}

/// An Ollama `/v1` chunk with `delta` and `finish_reason`.
fn ollama_chunk(delta: Value, finish: Value) -> String {
    json!({"id": "chatcmpl-245", "object": "chat.completion.chunk", "created": 1751919739,
        "model": "llama3.2", "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

#[test]
fn ollama_whole_arguments_in_one_chunk_then_usage() {
    let (name, _, args) = ollama_call();
    let r = assemble(&[
        ollama_chunk(
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_k3cv9o1v",
                "index": 0, "type": "function", "function": {"name": name, "arguments": args}}]}),
            Value::Null,
        ),
        ollama_chunk(
            json!({"role": "assistant", "content": ""}),
            json!("tool_calls"),
        ),
        json!({"id": "chatcmpl-245", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": 169, "completion_tokens": 15, "total_tokens": 184}})
        .to_string(),
        "[DONE]".into(),
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![call(
            Some("call_k3cv9o1v"),
            "get_weather",
            r#"{"city":"Tokyo"}"#
        )]
    );
    assert_eq!(r.text, None);
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(r.usage, usage(169, 15));
}

#[test]
fn ollama_index_zero_for_every_call_does_not_merge_their_arguments() {
    let (name, _, args) = ollama_call();
    let entry = |id: &str, args: &str| {
        json!({"tool_calls": [{"id": id, "index": 0, "type": "function",
            "function": {"name": name, "arguments": args}}]})
    };
    let r = assemble(&[
        ollama_chunk(entry("call_a", &args), Value::Null),
        ollama_chunk(entry("call_b", r#"{"city":"Paris"}"#), Value::Null),
        // A repeat of the current id at the index continues that call.
        ollama_chunk(
            json!({"tool_calls": [{"id": "call_b", "index": 0, "function": {"arguments": ""}}]}),
            Value::Null,
        ),
        ollama_chunk(json!({}), json!("stop")),
        "[DONE]".into(),
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![
            call(Some("call_a"), "get_weather", r#"{"city":"Tokyo"}"#),
            call(Some("call_b"), "get_weather", r#"{"city":"Paris"}"#),
        ]
    );
    // "stop" after tool calls is kept as sent, as non-streamed.
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(r.usage, None);
}

#[test]
fn index_zero_for_every_call_without_ids_splits_on_another_name() {
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_time","arguments":"{\"tz\":\"JST\"}"}}]}}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![
            call(
                Some(&assigned_call_id(0, 0)),
                "get_weather",
                r#"{"city":"Tokyo"}"#
            ),
            call(Some(&assigned_call_id(0, 1)), "get_time", r#"{"tz":"JST"}"#),
        ]
    );
}

#[test]
fn ollama_calls_without_index_start_a_call_per_id_or_name() {
    let (name, object, _) = ollama_call();
    // Old Ollama: no index; ids on each whole call; arguments as an object.
    let with_ids = assemble_round(
        &[
            ollama_chunk(
                json!({"tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": name, "arguments": object}}]}),
                Value::Null,
            ),
            ollama_chunk(
                json!({"tool_calls": [{"id": "call_2", "type": "function",
                    "function": {"name": name, "arguments": {"city": "Paris"}}}]}),
                Value::Null,
            ),
            ollama_chunk(json!({}), json!("tool_calls")),
            "[DONE]".into(),
        ],
        1,
    )
    .unwrap();
    assert_eq!(
        with_ids.tool_calls,
        vec![
            call(Some("call_1"), "get_weather", r#"{"city":"Tokyo"}"#),
            call(Some("call_2"), "get_weather", r#"{"city":"Paris"}"#),
        ]
    );
    // No ids either: the same name twice is two calls; a bare fragment continues the last.
    let bare = assemble_round(
        &[
            ollama_chunk(
                json!({"tool_calls": [{"function": {"name": name, "arguments": object}}]}),
                Value::Null,
            ),
            ollama_chunk(
                json!({"tool_calls": [{"function": {"name": name, "arguments": "{\"city\":"}}]}),
                Value::Null,
            ),
            ollama_chunk(
                json!({"tool_calls": [{"function": {"arguments": "\"Paris\"}"}}]}),
                Value::Null,
            ),
            "[DONE]".into(),
        ],
        1,
    )
    .unwrap();
    assert_eq!(
        bare.tool_calls,
        vec![
            call(
                Some(&assigned_call_id(1, 0)),
                "get_weather",
                r#"{"city":"Tokyo"}"#
            ),
            call(
                Some(&assigned_call_id(1, 1)),
                "get_weather",
                r#"{"city":"Paris"}"#
            ),
        ]
    );
}

/// llama-cpp-python's server (`chatml-function-calling`) repeats the call's id and name
/// in every chunk, sends a legacy `function_call` beside `tool_calls`, `null` for the
/// fields it does not fill, and numbers a second call's entries with the next index.
#[test]
fn llama_cpp_python_repeated_ids_and_names_continue_their_call() {
    let entry = |index: u64, id: &str, args: &str| {
        json!({"choices": [{"index": 0, "finish_reason": null, "logprobs": null, "delta": {
            "role": null, "content": null,
            "function_call": {"name": "get_weather", "arguments": args},
            "tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": "get_weather", "arguments": args}}]}}]})
        .to_string()
    };
    let a = "call__0_get_weather_cmpl-1";
    let b = "call__0_get_weather_cmpl-2";
    let r = assemble(&[
        json!({"choices": [{"index": 0, "finish_reason": null, "logprobs": null, "delta": {
            "role": "assistant", "content": null, "function_call": null, "tool_calls": null}}]})
        .to_string(),
        entry(0, a, "{\"city\": \""),
        entry(0, a, "Paris"),
        entry(0, a, "\"}"),
        entry(1, b, "{\"city\": \"Lyon\"}"),
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null,
            "delta": {"role": null, "content": null, "function_call": null, "tool_calls": null}}]})
        .to_string(),
        "[DONE]".into(),
    ])
    .unwrap();
    assert_eq!(
        r.tool_calls,
        vec![
            call(Some(a), "get_weather", r#"{"city": "Paris"}"#),
            call(Some(b), "get_weather", r#"{"city": "Lyon"}"#),
        ]
    );
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(r.usage, None);
}

#[test]
fn usage_in_every_chunk_or_in_x_groq_is_read_from_the_last() {
    // Cumulative usage on every chunk (vLLM's continuous usage stats): the last wins.
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
        r#"{"choices":[],"usage":null}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(r.usage, usage(5, 2));
    // Groq: only in `x_groq.usage` of the last chunk.
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}],"x_groq":{"id":"req_1"}}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"prompt_tokens":8,"completion_tokens":3}}}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(r.usage, usage(8, 3));
    // An implausible count is dropped with a warning, as non-streamed.
    let r = assemble(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":-4,"completion_tokens":3}}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(r.usage, None);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
}

// ---- what is an error ----

fn err_of<S: AsRef<str>>(datas: &[S]) -> String {
    assemble(datas).unwrap_err()
}

#[test]
fn an_end_before_done_is_an_error_even_after_a_finish_reason() {
    let all = events(STREAM_SINGLE);
    assert_eq!(all.last().map(String::as_str), Some("[DONE]"));
    // Without [DONE] (finish_reason and usage arrived).
    let e = err_of(&all[..all.len() - 1]);
    assert!(e.contains("`data: [DONE]`"), "{e}");
    assert!(e.contains("finish_reason `tool_calls`"), "{e}");
    // Cut mid-arguments: no finish_reason.
    let e = err_of(&all[..4]);
    assert!(e.contains("before `data: [DONE]`"), "{e}");
    assert!(e.contains("cut off"), "{e}");
    // Nothing at all.
    let e = err_of::<&str>(&[]);
    assert!(e.contains("without a single chunk"), "{e}");
    // The likely cause and what to try (a server that can not stream tool calls).
    assert!(
        e.contains("can not stream tool calls")
            && e.contains("without --stream")
            && e.contains("--tool-choice function:NAME"),
        "{e}"
    );
    let e = err_of(&["[DONE]"]);
    assert!(
        e.contains("held no chunk") && e.contains("without --stream"),
        "{e}"
    );
}

#[test]
fn malformed_events_are_errors_with_the_reason() {
    let e = err_of(&[r#"{"choices":[{"index":0,"delta":{"content":"Hi"#]);
    assert!(e.contains("not JSON"), "{e}");
    for not_object in ["[1,2]", "\"text\"", "42", "null"] {
        let e = err_of(&[not_object]);
        assert!(
            e.contains("instead of a `chat.completion.chunk` object"),
            "{e}"
        );
    }
    let e = err_of(&[r#"{"choices":{"index":0}}"#]);
    assert!(
        e.contains("`choices` is an object instead of an array"),
        "{e}"
    );
    let e = err_of(&[r#"{"choices":[{"index":0,"delta":"x"}]}"#]);
    assert!(e.contains("`choices[0].delta` is"), "{e}");
    let e = err_of(&[r#"{"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}"#]);
    assert!(e.contains("`choices[0].delta.tool_calls` is"), "{e}");
    let e = err_of(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"a","function":{"name":"f"}}]}}]}"#,
    ]);
    assert!(
        e.contains("`choices[0].delta.tool_calls[0].index` is -1"),
        "{e}"
    );
    // A fragment for a call that never started.
    let e = err_of(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}}]}"#,
    ]);
    assert!(e.contains("no call at index 3 was started"), "{e}");
}

#[test]
fn an_error_object_inside_the_stream_is_an_error() {
    let e = err_of(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
        r#"{"error":{"message":"model overloaded, retry later","type":"server_error","code":503}}"#,
        "[DONE]",
    ]);
    assert!(
        e.contains("the server sent an error inside the stream: model overloaded, retry later"),
        "{e}"
    );
}

#[test]
fn an_event_named_error_is_an_error_with_its_text() {
    let mut a = OpenAiAssembler::new(0);
    let mut marks = Marks::new(Instant::now());
    let named = |data: &str| SseEvent {
        event: Some("error".into()),
        data: data.into(),
    };
    let e = a
        .event(&named("upstream timed out"), &mut marks)
        .unwrap_err();
    assert_eq!(e, "the server sent an error event: upstream timed out");
    let e = a
        .event(
            &named(r#"{"error":{"message":"context too long"}}"#),
            &mut marks,
        )
        .unwrap_err();
    assert_eq!(e, "the server sent an error event: context too long");
}

#[test]
fn done_without_any_choice_or_a_call_without_a_name_is_an_error() {
    let e = err_of(&[
        r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}"#,
        "[DONE]",
    ]);
    assert!(e.contains("no chunk for choice 0"), "{e}");
    let e = err_of(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_q","function":{"arguments":"{}"}}]}}]}"#,
        "[DONE]",
    ]);
    assert!(
        e.contains("tool call 0 (id `call_q`) never got a function name"),
        "{e}"
    );
}

// ---- the whole provider over HTTP ----

fn settings(max_attempts: u32) -> HttpSettings {
    HttpSettings {
        timeout: Duration::from_secs(30),
        max_attempts,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(3),
    }
}

fn streaming(base_url: &str, max_attempts: u32) -> OpenAiProvider {
    let mut c = ProviderConfig::new("openai", "gpt-4o", base_url);
    c.api_key = Some(SecretString::from(KEY.to_string()));
    c.stream = true;
    OpenAiProvider::new(c, Http::new(settings(max_attempts)).unwrap())
}

fn request() -> Request {
    Request {
        messages: vec![Message::User {
            content: "北京和东京的天气？🌧️".into(),
        }],
        tools: Arc::new(vec![ToolDefinition {
            name: "get_weather".into(),
            description: "Weather.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                .into(),
        }]),
        tool_choice: ToolChoice::Auto,
    }
}

/// The answer of a streaming provider whose server sends `chunks` (one write each).
async fn over_http(chunks: Vec<Vec<u8>>) -> (Result<Response, ProviderError>, Value) {
    let (url, server) = serve(chunks, 1);
    let result = streaming(&format!("{url}/v1"), 1)
        .complete(&request(), &trial("openai:gpt-4o"))
        .await;
    let bodies = server.join().unwrap();
    (result, serde_json::from_str(&bodies[0]).unwrap())
}

/// A stream with Chinese text and emoji split across fragments, two calls by index.
fn unicode_stream() -> String {
    let datas = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"好的🌧"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"️，查询中"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_bj","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"北"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_tk","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"東京 🗼"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"京\", \"q\": \"\\\"雨\\\"\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":11}}"#,
        "[DONE]",
    ];
    datas.iter().map(|d| format!("data: {d}\n\n")).collect()
}

fn unicode_expected() -> (Option<String>, Vec<ToolCall>) {
    (
        Some("好的🌧️，查询中".into()),
        vec![
            call(
                Some("call_bj"),
                "get_weather",
                r#"{"city": "北京", "q": "\"雨\""}"#,
            ),
            call(Some("call_tk"), "get_weather", r#"{"city": "東京 🗼"}"#),
        ],
    )
}

#[tokio::test]
async fn recorded_streams_split_at_hostile_points_assemble_as_unsplit() {
    for sse in [STREAM_SINGLE, STREAM_PARALLEL, STREAM_TEXT] {
        let body = sse.as_bytes();
        let (result, sent) = over_http(split_at(body, &hostile_offsets(body))).await;
        let r = result.unwrap();
        let mut expected = assemble(&events(sse)).unwrap();
        assert_eq!(r.attempts, 1);
        let timing = r.stream.clone().unwrap();
        // Every event counted: the data events, [DONE] included.
        assert_eq!(timing.events as usize, events(sse).len());
        let raw = r.raw.clone().unwrap();
        assert_eq!(raw["sse"].as_array().unwrap().len(), events(sse).len());
        // The raw events (stored in cassettes) assemble to the same answer again.
        let replayed: Vec<String> = raw["sse"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| match &e["data"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        assert_eq!(replayed.last().map(String::as_str), Some("[DONE]"));
        assert_eq!(
            assemble(&replayed).unwrap(),
            assemble(&events(sse)).unwrap()
        );
        expected.latency_ms = r.latency_ms;
        expected.attempts = r.attempts;
        expected.stream = r.stream.clone();
        expected.raw = r.raw.clone();
        assert_eq!(r, expected);
        assert_eq!(sent["stream"], json!(true));
        assert_eq!(sent["stream_options"], json!({"include_usage": true}));
    }
}

#[tokio::test]
async fn unicode_arguments_survive_a_split_at_every_byte() {
    let body = unicode_stream();
    let offsets: Vec<usize> = (1..body.len()).collect();
    let (result, _) = over_http(split_at(body.as_bytes(), &offsets)).await;
    let r = result.unwrap();
    let (text, calls) = unicode_expected();
    assert_eq!(r.text, text);
    assert_eq!(r.tool_calls, calls);
    assert_eq!(r.usage, usage(20, 11));
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn timing_marks_are_set_and_ordered() {
    let body = unicode_stream();
    let (result, _) = over_http(split_at(body.as_bytes(), &hostile_offsets(body.as_bytes()))).await;
    let r = result.unwrap();
    let t = r.stream.unwrap();
    let token = t.first_token_ms.unwrap();
    let tool = t.first_tool_byte_ms.unwrap();
    assert!(
        0.0 <= token && token <= tool && tool <= r.latency_ms,
        "{t:?} {}",
        r.latency_ms
    );
    // A text answer has a first token but no tool byte.
    let (result, _) = over_http(vec![STREAM_TEXT.as_bytes().to_vec()]).await;
    let t = result.unwrap().stream.unwrap();
    assert!(t.first_token_ms.is_some());
    assert_eq!(t.first_tool_byte_ms, None);
}

fn stream_error(result: Result<Response, ProviderError>) -> String {
    match result {
        Err(ProviderError::Stream { provider, message }) => {
            assert_eq!(provider, "openai");
            assert!(!message.contains(KEY));
            message
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_early_end_is_an_error_trial() {
    let body = STREAM_PARALLEL.as_bytes();
    let done = STREAM_PARALLEL.find("data: [DONE]").unwrap();
    // Cut before [DONE] (after the usage chunk).
    let (result, _) = over_http(vec![body[..done].to_vec()]).await;
    let e = stream_error(result);
    assert!(e.contains("ended before `data: [DONE]`"), "{e}");
    assert!(e.contains("finish_reason `tool_calls`"), "{e}");
    // Cut in the middle of an event inside a call's arguments.
    let mid = STREAM_PARALLEL.find("urgh").unwrap();
    let (result, _) = over_http(split_at(&body[..mid], &hostile_offsets(&body[..mid]))).await;
    let e = stream_error(result);
    assert!(e.contains("cut off"), "{e}");
}

#[tokio::test]
async fn a_malformed_event_or_an_error_event_is_an_error_trial() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"}\n\n\
                data: [DONE]\n\n";
    let (result, _) = over_http(vec![body.as_bytes().to_vec()]).await;
    let e = stream_error(result);
    assert!(
        e.contains("event 2 is malformed: the event is not JSON"),
        "{e}"
    );
    // A server that echoes the key in its error event: scrubbed.
    let body = format!(
        "data: {{\"error\":{{\"message\":\"bad key {KEY}\",\"type\":\"auth\"}}}}\n\ndata: [DONE]\n\n"
    );
    let (result, _) = over_http(vec![body.into_bytes()]).await;
    let e = stream_error(result);
    assert!(
        e.contains("the server sent an error inside the stream: bad key"),
        "{e}"
    );
}

#[tokio::test]
async fn a_429_before_the_stream_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(429).set_body_json(
            json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(STREAM_SINGLE.as_bytes().to_vec(), "text/event-stream"),
        )
        .mount(&server)
        .await;
    let r = streaming(&format!("{}/v1", server.uri()), 3)
        .complete(&request(), &trial("openai:gpt-4o"))
        .await
        .unwrap();
    assert_eq!(r.attempts, 2);
    assert_eq!(
        r.tool_calls,
        vec![call(
            Some("call_4XzlGBLtUe9dy3GVNV4jhq7h"),
            "get_weather",
            r#"{"city":"New York City"}"#
        )]
    );
}

#[test]
fn the_stream_fields_are_sent_and_extra_still_wins() {
    let p = streaming("http://127.0.0.1:9/v1", 1);
    let body = p.build_body(&request()).unwrap();
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let mut c = p.config().clone();
    c.extra
        .insert("stream_options".into(), json!({"include_usage": false}));
    let p = OpenAiProvider::new(c, Http::new(settings(1)).unwrap());
    let body = p.build_body(&request()).unwrap();
    assert_eq!(body["stream_options"], json!({"include_usage": false}));
    // Not streaming: neither field.
    let mut c = p.config().clone();
    c.stream = false;
    c.extra.clear();
    let body = OpenAiProvider::new(c, Http::new(settings(1)).unwrap())
        .build_body(&request())
        .unwrap();
    assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
}

/// The same answer through the whole provider, streamed (split at hostile points) and
/// not: equal responses, and request bodies that differ only in the stream fields.
#[tokio::test]
async fn streamed_and_non_streamed_answers_are_equal_through_the_provider() {
    let answers = [
        serde_json::from_str::<Value>(PARALLEL).unwrap(),
        ollama_as_choice(),
        // No ids (assigned by round), Chinese text and emoji arguments.
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "稍等 🙏",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather",
                    "arguments": "{\"city\": \"北京\", \"emoji\": \"🌧️\"}"}},
                {"type": "function", "function": {"name": "get_weather",
                    "arguments": "{\"city\": \"東京\""}}]},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 30, "completion_tokens": 12}}),
    ];
    for answer in answers {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(answer.to_string().into_bytes(), "application/json"),
            )
            .mount(&server)
            .await;
        let mut plain = streaming(&format!("{}/v1", server.uri()), 1)
            .config()
            .clone();
        plain.stream = false;
        let want = OpenAiProvider::new(plain, Http::new(settings(1)).unwrap())
            .complete(&request(), &trial("openai:gpt-4o"))
            .await
            .unwrap();
        let sent_plain: Value =
            serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();

        let body: String = streamed(&answer, 3)
            .iter()
            .map(|d| format!("data: {d}\n\n"))
            .collect();
        let (got, mut sent_streamed) =
            over_http(split_at(body.as_bytes(), &hostile_offsets(body.as_bytes()))).await;
        let mut got = got.unwrap();
        assert!(got.stream.is_some() && want.stream.is_none());
        got.latency_ms = want.latency_ms;
        got.stream = None;
        got.raw = want.raw.clone();
        assert_eq!(got, want, "{answer}");
        let fields = sent_streamed.as_object_mut().unwrap();
        assert_eq!(fields.remove("stream"), Some(json!(true)));
        assert!(fields.remove("stream_options").is_some());
        assert_eq!(sent_streamed, sent_plain);
    }
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_json_is_named() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                         "finish_reason": "stop"}]
        })))
        .mount(&server)
        .await;
    let e = streaming(&format!("{}/v1", server.uri()), 1)
        .complete(&request(), &trial("openai:gpt-4o"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("answered with one JSON body (`application/json`) instead of an event stream")
            && e.contains("Run without --stream")
            && e.contains(r#""content":"hi""#),
        "{e}"
    );
}

/// The recorded single-call stream with the usage chunk of a cache hit (the usage of
/// the example in OpenAI's prompt caching guide, see `openai::tests`) and reasoning.
#[test]
fn a_usage_chunk_with_cached_and_reasoning_tokens_keeps_them_apart() {
    let usage_details = r#""usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":64}}"#;
    let recorded = r#""usage":{"prompt_tokens":44,"completion_tokens":16,"total_tokens":60,"completion_tokens_details":{"reasoning_tokens":0}}"#;
    assert!(STREAM_SINGLE.contains(recorded));
    let sse = STREAM_SINGLE.replace(recorded, usage_details);
    let r = assemble(&events(&sse)).unwrap();
    assert_eq!(r.usage, detailed(2006, 300, 1920, 0, 64));
    assert!(r.warnings.is_empty());
}
