//! Gemini's streamed answer (`models/{model}:streamGenerateContent?alt=sse`), assembled
//! into the `generateContent` response it stands for and read by the same parser
//! ([`GeminiProvider::parse_response`]), so text, calls, finish reason, usage and state
//! are what a non-streamed answer gives.
//!
//! Every `data:` event is a whole `GenerateContentResponse` chunk. Only the first
//! candidate (`index` 0) is read, as in a non-streamed answer. Its parts accumulate
//! across chunks: a text part continues the previous part when both are plain text
//! (`text`, `thought`, a signature on the earlier one only) of the same kind (thought
//! summary or answer), since Gemini streams one text in pieces; a part with a
//! `thoughtSignature` of its own starts a new part, so every signature stays on the part
//! it came with (Gemini 3 may send it at the end, on an empty text part), and is sent
//! back there. Each `functionCall` part is a whole call, its `args` a JSON value, so the
//! raw arguments are those of the non-streamed answer. A call streamed in pieces
//! (`partialArgs`, `willContinue`: only sent when a request asks for it with
//! `streamFunctionCallArguments`) is refused with that hint rather than read as a
//! shortened call. `finishReason` comes with the last chunk, and `usageMetadata` is read
//! from the last chunk that has it (every chunk repeats the running totals).
//!
//! There is no terminal event: the body's end is the stream's end, so a stream that
//! ends before any chunk carried a `finishReason` has ended early and is an error, never
//! a shortened answer. A chunk holding a Google RPC error (`{"error": {code, message,
//! status}}`) or a prompt blocked before any candidate (`promptFeedback.blockReason`)
//! ends the answer as an error naming it; a chunk whose data is not a JSON object is
//! malformed. A `[DONE]` line, which some gateways add, ends the reading too (the
//! finish reason is still required).

use serde_json::{Map, Value, json};

use super::Response;
use super::gemini::{GeminiProvider, api_error};
use super::stream::{Assembler, Marks, SseEvent, Step};
use crate::util::json_kind::json_kind;

/// Reads a Gemini event stream, one event at a time, as the provider's assembler for the
/// shared stream reader ([`super::stream`]); [`assemble`] reads recorded events.
#[derive(Debug, Default)]
pub struct GeminiAssembler {
    /// The first candidate's parts so far, text pieces joined.
    parts: Vec<Value>,
    /// The latest `finishReason`.
    finish_reason: Option<Value>,
    /// The latest `usageMetadata`.
    usage: Option<Value>,
    /// Chunks read.
    chunks: u32,
    /// The error a chunk carried.
    error: Option<String>,
}

/// Whether a part is a thought summary.
fn is_thought(part: &Map<String, Value>) -> bool {
    part.get("thought").and_then(Value::as_bool) == Some(true)
}

/// Whether a part is plain text: a `text` string and at most `thought` and
/// `thoughtSignature` beside it.
fn is_plain_text(part: &Map<String, Value>) -> bool {
    part.get("text").is_some_and(Value::is_string)
        && part
            .keys()
            .all(|k| matches!(k.as_str(), "text" | "thought" | "thoughtSignature"))
}

impl GeminiAssembler {
    /// An assembler that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one part of the first candidate.
    fn part(&mut self, i: usize, part: &Value, marks: &mut Marks) -> Result<(), String> {
        let Value::Object(part) = part else {
            return Err(format!(
                "`candidates[0].content.parts[{i}]` is {}, not an object",
                json_kind(part)
            ));
        };
        if let Some(call) = part.get("functionCall") {
            if call.get("partialArgs").is_some()
                || call.get("willContinue").and_then(Value::as_bool) == Some(true)
            {
                return Err(
                    "a `functionCall` streamed in pieces (`partialArgs`/`willContinue`), which toolgauge does not read: drop `streamFunctionCallArguments` from the extra request fields"
                        .into(),
                );
            }
            marks.tool();
        } else if let Some(text) = part.get("text").and_then(Value::as_str)
            && !text.is_empty()
            && !is_thought(part)
        {
            marks.token();
        }
        // A piece of the text before it: joined, unless it brings a signature of its own.
        let joins = is_plain_text(part) && !part.contains_key("thoughtSignature");
        if joins
            && let Some(Value::Object(last)) = self.parts.last_mut()
            && is_plain_text(last)
            && is_thought(last) == is_thought(part)
            && let (Some(Value::String(text)), Some(more)) = (
                last.get_mut("text"),
                part.get("text").and_then(Value::as_str),
            )
        {
            text.push_str(more);
            return Ok(());
        }
        self.parts.push(Value::Object(part.clone()));
        Ok(())
    }

    /// Read the first candidate of a chunk.
    fn candidate(&mut self, candidate: &Value, marks: &mut Marks) -> Result<(), String> {
        match candidate.get("content").and_then(|c| c.get("parts")) {
            None | Some(Value::Null) => {}
            Some(Value::Array(parts)) => {
                for (i, part) in parts.iter().enumerate() {
                    self.part(i, part, marks)?;
                }
            }
            Some(other) => {
                return Err(format!(
                    "`candidates[0].content.parts` is {}, not a list",
                    json_kind(other)
                ));
            }
        }
        if let Some(reason) = candidate.get("finishReason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        Ok(())
    }
}

/// The answer of a whole recorded stream (`{"sse": [...]}` events of a cassette's raw
/// body, or a test's), read as a live stream is: `Err` says what was wrong, as for a
/// live stream. Timing is not measured.
pub fn assemble(events: &[SseEvent]) -> Result<Response, String> {
    let mut assembler = GeminiAssembler::new();
    let mut marks = Marks::new(std::time::Instant::now());
    for event in events {
        if assembler.event(event, &mut marks)? == Step::Done {
            return assembler.finish(true);
        }
    }
    assembler.finish(false)
}

impl Assembler for GeminiAssembler {
    fn event(&mut self, event: &SseEvent, marks: &mut Marks) -> Result<Step, String> {
        if event.data.trim() == "[DONE]" {
            return Ok(Step::Done);
        }
        let chunk: Value =
            serde_json::from_str(&event.data).map_err(|e| format!("its data is not JSON ({e})"))?;
        let Value::Object(obj) = &chunk else {
            return Err(format!(
                "its data is {}, not a JSON object",
                json_kind(&chunk)
            ));
        };
        self.chunks += 1;
        if let Some(error) = obj.get("error") {
            self.error = Some(format!("the stream sent {}", api_error(error)));
            return Ok(Step::Done);
        }
        match obj.get("candidates") {
            None | Some(Value::Null) => {
                let blocked = obj
                    .get("promptFeedback")
                    .and_then(|f| f.get("blockReason"))
                    .is_some_and(|r| !r.is_null());
                if blocked {
                    // The non-streamed parser's words for a blocked prompt.
                    self.error = GeminiProvider::parse_response(&chunk).err();
                    if self.error.is_some() {
                        return Ok(Step::Done);
                    }
                }
                // Otherwise a chunk with usage or metadata only.
            }
            Some(Value::Array(list)) => {
                let first = list
                    .iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
                if let Some(candidate) = first {
                    self.candidate(candidate, marks)?;
                }
            }
            Some(other) => {
                return Err(format!("`candidates` is {}, not a list", json_kind(other)));
            }
        }
        if let Some(usage) = obj.get("usageMetadata").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        Ok(Step::More)
    }

    fn finish(self, _terminated: bool) -> Result<Response, String> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let Some(finish_reason) = self.finish_reason else {
            return Err(format!(
                "the stream ended before any chunk carried a `finishReason` ({} chunk(s), {} part(s) read): the answer is incomplete",
                self.chunks,
                self.parts.len()
            ));
        };
        let mut body = json!({
            "candidates": [{
                "content": {"role": "model", "parts": self.parts},
                "finishReason": finish_reason,
            }]
        });
        if let Some(usage) = self.usage {
            body["usageMetadata"] = usage;
        }
        GeminiProvider::parse_response(&body)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use secrecy::SecretString;
    use wiremock::matchers::{header, method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::provider::config::ProviderConfig;
    use crate::provider::http::{Http, HttpSettings};
    use crate::provider::stream::test_server::{
        answer, assert_timing, call, detailed, hostile_offsets, serve, split_at, trial, usage,
    };
    use crate::provider::{Message, Provider, ProviderError, Request, ToolChoice, ToolDefinition};

    const SHORT: &str = include_str!("testdata/gemini/stream_function_call_short.sse");
    const THINKING: &str = include_str!("testdata/gemini/stream_function_call_thinking.sse");

    const KEY: &str = "AIza-test-SECRETSECRET1234";
    const MODEL: &str = "gemini-2.5-flash";

    /// `data: JSON` events, CRLF-ended as Gemini sends them.
    fn sse(chunks: &[Value]) -> String {
        chunks
            .iter()
            .map(|c| format!("data: {c}\r\n\r\n"))
            .collect()
    }

    /// The `data:` payloads of an SSE text.
    fn payloads(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| d.trim_end_matches('\r').to_string())
            .collect()
    }

    /// Feed the events of `text` to an assembler, as the reader does.
    fn feed(text: &str) -> Result<Response, String> {
        let events: Vec<SseEvent> = payloads(text)
            .into_iter()
            .map(|data| SseEvent { event: None, data })
            .collect();
        assemble(&events)
    }

    fn chunk(parts: Value) -> Value {
        json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}]})
    }

    /// A hand-made answer: text in pieces with Chinese and emoji, then two calls in
    /// separate chunks, usage and finishReason on the last.
    fn cjk_stream() -> String {
        let mut last =
            chunk(json!([{"functionCall": {"name": "get_weather", "args": {"city": "上海"}}}]));
        last["candidates"][0]["finishReason"] = json!("STOP");
        last["usageMetadata"] =
            json!({"promptTokenCount": 12, "candidatesTokenCount": 30, "totalTokenCount": 42});
        sse(&[
            chunk(json!([{"text": "北京今天"}])),
            chunk(json!([{"text": "有雨🌧️，"}])),
            chunk(
                json!([{"functionCall": {"name": "get_weather", "args": {"city": "北京", "note": "☔ \"heavy\""}}}]),
            ),
            last,
        ])
    }

    /// The `generateContent` body of the same answer.
    fn cjk_unary() -> Value {
        json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "北京今天有雨🌧️，"},
                {"functionCall": {"name": "get_weather", "args": {"city": "北京", "note": "☔ \"heavy\""}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "上海"}}}
            ]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 30, "totalTokenCount": 42}})
    }

    // ---- the assembler, offline ----

    #[test]
    fn text_pieces_and_whole_calls_assemble_to_the_non_streamed_answer() {
        let streamed = feed(&cjk_stream()).unwrap();
        assert_eq!(
            streamed,
            GeminiProvider::parse_response(&cjk_unary()).unwrap()
        );
        assert_eq!(streamed.text.as_deref(), Some("北京今天有雨🌧️，"));
        assert_eq!(
            streamed.tool_calls,
            vec![
                call(
                    None,
                    "get_weather",
                    r#"{"city":"北京","note":"☔ \"heavy\""}"#
                ),
                call(None, "get_weather", r#"{"city":"上海"}"#),
            ]
        );
        assert_eq!(streamed.usage, usage(12, 30));
        assert_eq!(streamed.finish_reason.as_deref(), Some("STOP"));
        assert_eq!(streamed.state, None);
    }

    #[test]
    fn the_recorded_thinking_stream_keeps_thoughts_and_the_signature_in_state() {
        let r = feed(THINKING).unwrap();
        let chunks: Vec<Value> = payloads(THINKING)
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        let thought = |i: usize| {
            chunks[i]["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let call_part = chunks[2]["candidates"][0]["content"]["parts"][0].clone();
        assert!(
            call_part["thoughtSignature"]
                .as_str()
                .unwrap()
                .starts_with("CiIBVKhc7vB+")
        );
        // The unary body of the same answer, built by hand: one thought summary (the
        // two pieces joined), the call with its signature, the last chunk's usage.
        let unary = json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": format!("{}{}", thought(0), thought(1)), "thought": true},
                call_part
            ]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": chunks[2]["usageMetadata"]});
        assert_eq!(r, GeminiProvider::parse_response(&unary).unwrap());
        assert_eq!(r.text, None);
        assert_eq!(r.tool_calls, vec![call(None, "now", "{}")]);
        // promptTokenCount; candidatesTokenCount + thoughtsTokenCount of the last chunk.
        // …of which thoughtsTokenCount is the reasoning part.
        assert_eq!(r.usage, detailed(38, 6 + 168, 0, 0, 168));
        let parts = r.state.as_ref().unwrap()["gemini"]["parts"]
            .as_array()
            .unwrap();
        assert_eq!(parts.len(), 2);
        assert!(
            parts[0]["text"]
                .as_str()
                .unwrap()
                .starts_with("**Calculating the Days**")
        );
        assert!(
            parts[0]["text"]
                .as_str()
                .unwrap()
                .contains("\n\n\n**Determining the Approach**")
        );
        assert_eq!(parts[1]["functionCall"], json!({"name": "now", "args": {}}));
    }

    #[test]
    fn a_one_chunk_stream_is_its_own_non_streamed_answer() {
        let r = feed(SHORT).unwrap();
        let unary: Value = serde_json::from_str(&payloads(SHORT)[0]).unwrap();
        assert_eq!(r, GeminiProvider::parse_response(&unary).unwrap());
        assert_eq!(
            r.tool_calls,
            vec![call(None, "getTemperature", r#"{"city":"San Jose"}"#)]
        );
        assert_eq!(r.usage, None);
    }

    #[test]
    fn a_signature_of_its_own_starts_a_new_part() {
        let text = sse(&[
            chunk(json!([{"text": "Sure", "thoughtSignature": "sigA"}])),
            chunk(json!([{"text": ", done."}])),
            {
                let mut c = chunk(json!([{"text": "", "thoughtSignature": "sigB"}]));
                c["candidates"][0]["finishReason"] = json!("STOP");
                c
            },
        ]);
        let r = feed(&text).unwrap();
        assert_eq!(r.text.as_deref(), Some("Sure, done."));
        assert_eq!(
            r.state,
            Some(json!({"gemini": {"parts": [
                {"text": "Sure, done.", "thoughtSignature": "sigA"},
                {"text": "", "thoughtSignature": "sigB"}
            ]}}))
        );
    }

    #[test]
    fn a_stream_without_a_finish_reason_ended_early() {
        let cut = &THINKING[..THINKING
            .find("data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\"")
            .unwrap()];
        assert_eq!(
            feed(cut).unwrap_err(),
            "the stream ended before any chunk carried a `finishReason` (2 chunk(s), 1 part(s) read): the answer is incomplete"
        );
        assert_eq!(
            feed("").unwrap_err(),
            "the stream ended before any chunk carried a `finishReason` (0 chunk(s), 0 part(s) read): the answer is incomplete"
        );
        // A `[DONE]` some gateway adds does not stand for a finish.
        assert!(
            feed(&format!("{cut}data: [DONE]\r\n\r\n"))
                .unwrap_err()
                .contains("(2 chunk(s), 1 part(s) read)")
        );
    }

    #[test]
    fn errors_blocked_prompts_and_malformed_chunks_are_errors() {
        let error = json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}});
        assert_eq!(
            feed(&sse(&[chunk(json!([{"text": "Hal"}])), error])).unwrap_err(),
            "the stream sent an API error 503 UNAVAILABLE: The model is overloaded."
        );
        let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 9}});
        assert_eq!(
            feed(&sse(&[blocked])).unwrap_err(),
            "no candidates: the prompt was blocked (blockReason PROHIBITED_CONTENT)"
        );
        let partial = chunk(
            json!([{"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.city", "stringValue": "Par", "willContinue": true}], "willContinue": true}}]),
        );
        assert!(
            feed(&sse(&[partial]))
                .unwrap_err()
                .contains("streamFunctionCallArguments")
        );
        assert_eq!(
            feed(&sse(&[chunk(json!(["text"]))])).unwrap_err(),
            "`candidates[0].content.parts[0]` is a string, not an object"
        );
        assert_eq!(
            feed(&sse(&[json!({"candidates": {"index": 0}})])).unwrap_err(),
            "`candidates` is an object, not a list"
        );
        assert_eq!(
            feed("data: [{\"candidates\": []}]\n\n").unwrap_err(),
            "its data is an array, not a JSON object"
        );
        assert!(
            feed("data: {\"candidates\": [\n\n")
                .unwrap_err()
                .starts_with("its data is not JSON")
        );
    }

    #[test]
    fn only_the_first_candidate_is_read_and_usage_only_chunks_count() {
        let mut other = chunk(json!([{"text": "second candidate"}]));
        other["candidates"][0]["index"] = json!(1);
        other["candidates"][0]["finishReason"] = json!("STOP");
        let mut first = chunk(json!([{"text": "first"}]));
        first["candidates"][0]["finishReason"] = json!("MAX_TOKENS");
        let usage_only =
            json!({"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}});
        let r = feed(&sse(&[other, first, usage_only])).unwrap();
        assert_eq!(r.text.as_deref(), Some("first"));
        assert_eq!(r.finish_reason.as_deref(), Some("MAX_TOKENS"));
        assert_eq!(r.usage, usage(4, 2));
    }

    /// The `alt=sse` stream Gemini sends for a unary `body`, one part (or one piece of a
    /// text part) per chunk: text in pieces of 9 characters, the first piece carrying
    /// the part's other fields (thought, signature), calls whole; finishReason on the
    /// last chunk, usage on it too.
    fn stream_of(body: &Value) -> String {
        let candidate = &body["candidates"][0];
        let mut chunks = Vec::new();
        for part in candidate["content"]["parts"].as_array().unwrap() {
            match part.get("text").and_then(Value::as_str) {
                Some(text) => {
                    let chars: Vec<char> = text.chars().collect();
                    for (i, piece) in chars.chunks(9).enumerate() {
                        let mut p = if i == 0 { part.clone() } else { json!({}) };
                        p["text"] = json!(piece.iter().collect::<String>());
                        if part["thought"] == json!(true) {
                            p["thought"] = json!(true);
                        }
                        chunks.push(chunk(json!([p])));
                    }
                }
                None => chunks.push(chunk(json!([part]))),
            }
        }
        let last = chunks.len() - 1;
        chunks[last]["candidates"][0]["finishReason"] = candidate["finishReason"].clone();
        if let Some(usage) = body.get("usageMetadata") {
            chunks[last]["usageMetadata"] = usage.clone();
        }
        sse(&chunks)
    }

    /// Every unary fixture, streamed, gives the same answer: parallel calls, text
    /// between calls, a `null` argument, a thought summary and a signature.
    #[test]
    fn every_non_streamed_answer_streams_to_itself() {
        for fixture in [
            include_str!("testdata/gemini/function_call_single_rest.json"),
            include_str!("testdata/gemini/function_call_parallel.json"),
            include_str!("testdata/gemini/function_call_mixed_text.json"),
            include_str!("testdata/gemini/function_call_null_arg_usage.json"),
            include_str!("testdata/gemini/function_call_thinking_signature_usage.json"),
        ] {
            let unary: Value = serde_json::from_str(fixture).unwrap();
            let text = stream_of(&unary);
            assert!(
                payloads(&text).len()
                    >= unary["candidates"][0]["content"]["parts"]
                        .as_array()
                        .unwrap()
                        .len()
            );
            let streamed = feed(&text).unwrap();
            assert_eq!(
                streamed,
                GeminiProvider::parse_response(&unary).unwrap(),
                "{fixture}"
            );
        }
    }

    // ---- through HTTP ----

    fn config(base_url: &str) -> ProviderConfig {
        let mut c = ProviderConfig::new("gemini", MODEL, base_url);
        c.api_key = Some(SecretString::from(KEY.to_string()));
        c.stream = true;
        c
    }

    fn provider(config: ProviderConfig) -> GeminiProvider {
        GeminiProvider::new(
            config,
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
                content: "北京天气？".into(),
            }],
            tools: Arc::new(vec![ToolDefinition {
                name: "get_weather".into(),
                description: "Current weather for a city.".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                    .into(),
            }]),
            tool_choice: ToolChoice::Auto,
        }
    }

    async fn through_http(chunks: Vec<Vec<u8>>) -> Result<Response, ProviderError> {
        let (url, server) = serve(chunks, 1);
        let r = provider(config(&format!("{url}/v1beta")))
            .complete(&request(), &trial(&format!("gemini:{MODEL}")))
            .await;
        let sent: Value = serde_json::from_str(&server.join().unwrap()[0]).unwrap();
        // The same body as a non-streamed request: the method says "stream".
        assert!(sent.get("stream").is_none(), "{sent}");
        assert_eq!(sent["contents"][0]["parts"][0]["text"], "北京天气？");
        r
    }

    fn stream_error(r: Result<Response, ProviderError>) -> String {
        match r {
            Err(ProviderError::Stream { provider, message }) => {
                assert_eq!(provider, "gemini");
                message
            }
            other => panic!("expected a stream error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn streams_split_at_hostile_points_assemble_through_http() {
        for (body, events) in [
            (THINKING.to_string(), 3),
            (SHORT.to_string(), 1),
            (cjk_stream(), 4),
        ] {
            let bytes = body.as_bytes();
            let r = through_http(split_at(bytes, &hostile_offsets(bytes)))
                .await
                .unwrap();
            assert_eq!(answer(&r), {
                let mut unary = feed(&body).unwrap();
                // A live answer's calls get ids by round and position.
                unary.assign_missing_ids(0);
                unary
            });
            assert_eq!(r.finish_reason.as_deref(), Some("STOP"));
            assert_eq!(r.tool_calls[0].id.as_deref(), Some("call_r0_0"));
            assert_timing(&r, events);
        }
        let r = through_http(vec![cjk_stream().into_bytes()]).await.unwrap();
        assert_eq!(r.tool_calls[1].id.as_deref(), Some("call_r0_1"));
        assert_eq!(
            r.tool_calls[0].arguments,
            r#"{"city":"北京","note":"☔ \"heavy\""}"#
        );
        let t = r.stream.unwrap();
        // The text came two chunks before the first call.
        assert!(t.first_token_ms.unwrap() <= t.first_tool_byte_ms.unwrap());
    }

    #[tokio::test]
    async fn the_recorded_stream_split_at_every_byte_assembles() {
        let bytes = SHORT.as_bytes();
        let offsets: Vec<usize> = (1..bytes.len()).collect();
        let r = through_http(split_at(bytes, &offsets)).await.unwrap();
        assert_eq!(
            r.tool_calls,
            vec![call(
                Some("call_r0_0"),
                "getTemperature",
                r#"{"city":"San Jose"}"#
            )]
        );
        assert_timing(&r, 1);
    }

    #[tokio::test]
    async fn streamed_and_non_streamed_answers_are_equal_through_http() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(format!("/v1beta/models/{MODEL}:generateContent")))
            .respond_with(ResponseTemplate::new(200).set_body_json(cjk_unary()))
            .mount(&server)
            .await;
        let mut c = config(&format!("{}/v1beta", server.uri()));
        c.stream = false;
        let unary = provider(c)
            .complete(&request(), &trial(&format!("gemini:{MODEL}")))
            .await
            .unwrap();
        let bytes = cjk_stream().into_bytes();
        let streamed = through_http(split_at(&bytes, &hostile_offsets(&bytes)))
            .await
            .unwrap();
        assert_eq!(answer(&streamed), answer(&unary));
        assert_eq!(streamed.tool_calls.len(), 2);
    }

    #[tokio::test]
    async fn the_stream_method_is_asked_for_and_a_429_is_retried() {
        let server = MockServer::start().await;
        let stream_path = format!("/v1beta/models/{MODEL}:streamGenerateContent");
        Mock::given(method("POST"))
            .and(path(stream_path.as_str()))
            .respond_with(ResponseTemplate::new(429).set_body_raw(
                r#"{"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}}"#,
                "application/json",
            ))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(stream_path.as_str()))
            .and(query_param("alt", "sse"))
            .and(header("x-goog-api-key", KEY))
            .and(header("accept", "text/event-stream"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(THINKING, "text/event-stream"))
            .mount(&server)
            .await;
        // A `models/` prefix is not doubled.
        let mut c = config(&format!("{}/v1beta", server.uri()));
        c.model = format!("models/{MODEL}");
        let r = provider(c)
            .complete(&request(), &trial(&format!("gemini:{MODEL}")))
            .await
            .unwrap();
        assert_eq!(r.attempts, 2);
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
        assert_eq!(r.tool_calls, vec![call(Some("call_r0_0"), "now", "{}")]);
        assert_timing(&r, 3);
    }

    #[tokio::test]
    async fn broken_streams_are_error_trials_with_the_reason() {
        // Cut before the chunk with the finishReason, at hostile points too.
        let last = THINKING
            .find("data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\"")
            .unwrap();
        let cut = &THINKING.as_bytes()[..last];
        let r = through_http(split_at(cut, &hostile_offsets(cut))).await;
        assert_eq!(
            stream_error(r),
            "the stream ended before any chunk carried a `finishReason` (2 chunk(s), 1 part(s) read): the answer is incomplete (after 2 event(s))"
        );
        // Cut inside the last chunk's JSON (inside the signature string).
        let inside = THINKING.find("M3MB2VEkId1U1lMu5d78n").unwrap();
        let r = through_http(vec![THINKING.as_bytes()[..inside].to_vec()]).await;
        let message = stream_error(r);
        assert!(
            message.starts_with(
                "the body ended inside event 3, which was cut off (its data is not JSON"
            ),
            "{message}"
        );
        // An error chunk after part of the answer, with the key echoed.
        let error = format!(
            "data: {}\r\n\r\n",
            json!({"error": {"code": 503, "message": format!("overloaded for key {KEY}"), "status": "UNAVAILABLE"}})
        );
        let r = through_http(vec![cut.to_vec(), error.into_bytes()]).await;
        let message = stream_error(r);
        assert_eq!(
            message,
            "the stream sent an API error 503 UNAVAILABLE: overloaded for key [REDACTED] (after 3 event(s))"
        );
    }

    /// The recorded thinking stream, whose every chunk repeats the usage so far, with a
    /// cache hit added by hand to the last chunk's: the last usage is the answer's.
    #[test]
    fn the_last_chunks_cached_content_and_thoughts_are_kept_apart() {
        let last = r#""usageMetadata": {"promptTokenCount": 38,"candidatesTokenCount": 6,"#;
        assert_eq!(THINKING.matches(last).count(), 1);
        let sse = THINKING.replace(
            last,
            r#""usageMetadata": {"promptTokenCount": 38,"cachedContentTokenCount": 30,"candidatesTokenCount": 6,"#,
        );
        let r = feed(&sse).unwrap();
        assert_eq!(r.usage, detailed(38, 6 + 168, 30, 0, 168));
        assert!(r.warnings.is_empty());
    }
}
