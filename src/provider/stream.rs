//! Streamed answers: reading a provider's server-sent events, timing them, and handing
//! each to the provider's assembler, which builds the same [`Response`] a non-streamed
//! answer gives.
//!
//! The reading is shared; what an event means is the provider's (OpenAI chunks with
//! `delta.tool_calls[]` by index, Anthropic content blocks, Gemini candidate chunks).
//! A stream never ends in a silently shortened answer: a body that stops before the
//! provider's terminal event, an event that is not what the API documents, or a break in
//! the connection is a [`ProviderError::Stream`], so the trial is an error with the
//! reason. Event lines are split by `sse-stream`, which buffers bytes until a line is
//! complete, so a chunk boundary inside a UTF-8 character or a JSON string is harmless.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;

use super::{Exchange, ProviderError, Response, StreamTiming, http};

/// One server-sent event with data (comments and empty keep-alives are skipped before an
/// assembler sees anything).
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` field, if any (Anthropic names every event; OpenAI and Gemini don't).
    pub event: Option<String>,
    /// The `data:` field, lines joined with `\n`, secrets already scrubbed.
    pub data: String,
}

/// What an assembler wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Read on.
    More,
    /// The provider's terminal event arrived (`[DONE]`, `message_stop`): stop reading.
    Done,
}

/// The moments an assembler marks while reading, measured from the attempt's start.
#[derive(Debug, Clone, Copy)]
pub struct Marks {
    started: Instant,
    first_token: Option<Duration>,
    first_tool: Option<Duration>,
}

impl Marks {
    /// Marks measured from `started`.
    pub fn new(started: Instant) -> Marks {
        Marks {
            started,
            first_token: None,
            first_tool: None,
        }
    }

    /// The current event carries output (text or any part of a tool call); the first
    /// such event sets the time to first token.
    pub fn token(&mut self) {
        if self.first_token.is_none() {
            self.first_token = Some(self.started.elapsed());
        }
    }

    /// The current event carries part of a tool call (its id, name or an argument
    /// fragment); also a token.
    pub fn tool(&mut self) {
        self.token();
        if self.first_tool.is_none() {
            self.first_tool = Some(self.started.elapsed());
        }
    }

    fn timing(&self, events: u32) -> StreamTiming {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        StreamTiming {
            first_token_ms: self.first_token.map(ms),
            first_tool_byte_ms: self.first_tool.map(ms),
            events,
        }
    }
}

/// A provider's reading of its event stream.
pub(crate) trait Assembler {
    /// Take one event. An `Err` is a malformed or unexpected event: the message says
    /// what was wrong (the reader adds the event's number and start).
    fn event(&mut self, event: &SseEvent, marks: &mut Marks) -> Result<Step, String>;

    /// The assembled answer once reading stopped. `terminated` is true when
    /// [`Assembler::event`] returned [`Step::Done`], false when the body simply ended:
    /// an assembler whose API has a terminal event must then fail (the stream ended
    /// early); one whose API ends with the body (Gemini) checks it saw a finish.
    fn finish(self, terminated: bool) -> Result<Response, String>;
}

/// The start of `text` for messages.
fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

impl Exchange<'_> {
    /// POST `payload` asking for a stream, feed every event to `assembler`, and return
    /// its answer with latency (to the end of the stream), attempts, the raw events
    /// (`{"sse": [{"event", "data"}, …]}`, for cassettes) and the stream's timing.
    pub(crate) async fn stream<A: Assembler>(
        &self,
        payload: Vec<u8>,
        mut assembler: A,
    ) -> Result<Response, ProviderError> {
        let reply = self
            .http
            .post_stream(self.url, self.headers, payload, self.secrets)
            .await
            .map_err(|source| ProviderError::Http {
                provider: self.provider.to_string(),
                source,
            })?;
        let fail = |message: String| ProviderError::Stream {
            provider: self.provider.to_string(),
            message: http::redact(&message, self.secrets),
        };
        // A server that ignores `stream: true` answers with one JSON body; say so
        // instead of "invalid line" from the event parser.
        let json_body = reply
            .response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().starts_with("application/json"));
        if json_body {
            let body = reply.response.bytes().await.unwrap_or_default();
            let text = http::redact(&String::from_utf8_lossy(&body), self.secrets);
            return Err(fail(format!(
                "the server answered with one JSON body (`application/json`) instead of an \
                 event stream: does it support `stream: true`? Run without --stream for this \
                 target. The body starts: {}",
                excerpt(&text)
            )));
        }
        let mut marks = Marks::new(reply.started);
        // The body ends with one more blank line: an event whose closing blank line is
        // missing at the very end (a fixture of Anthropic's own SDK ends so) still
        // reaches the assembler, where a parser would drop it. An event cut inside a line
        // then arrives incomplete and fails as malformed, never as a shorter answer.
        // Whether that added line has been read: an event that fails after it was
        // completed by it, so the body ended inside that event (it was cut off).
        let body_ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = body_ended.clone();
        let body =
            reply
                .response
                .bytes_stream()
                .chain(futures::stream::iter(std::iter::once_with(move || {
                    ended.store(true, std::sync::atomic::Ordering::Relaxed);
                    Ok(bytes::Bytes::from_static(b"\n\n"))
                })));
        let mut events = sse_stream::SseStream::from_bytes_stream(body);
        let mut raw = Vec::new();
        let mut count: u32 = 0;
        let mut terminated = false;
        while let Some(next) = events.next().await {
            let sse = match next {
                Ok(sse) => sse,
                Err(e) => {
                    return Err(fail(format!(
                        "the event stream broke off after {count} event(s): {e}{}",
                        source_chain(&e)
                    )));
                }
            };
            count += 1;
            // Comments, ids and retry hints alone carry nothing to assemble.
            let Some(data) = sse.data.filter(|d| !d.is_empty()) else {
                continue;
            };
            let data = http::redact(&data, self.secrets);
            let event = SseEvent {
                event: sse.event,
                data,
            };
            raw.push(serde_json::json!({
                "event": event.event,
                "data": serde_json::from_str::<Value>(&event.data)
                    .unwrap_or_else(|_| Value::String(event.data.clone())),
            }));
            match assembler.event(&event, &mut marks) {
                Ok(Step::More) => {}
                Ok(Step::Done) => {
                    terminated = true;
                    break;
                }
                Err(why) if body_ended.load(std::sync::atomic::Ordering::Relaxed) => {
                    return Err(fail(format!(
                        "the body ended inside event {count}, which was cut off ({why}); its \
                         data starts: {}",
                        excerpt(&event.data)
                    )));
                }
                Err(why) => {
                    return Err(fail(format!(
                        "event {count} is malformed: {why}; its data starts: {}",
                        excerpt(&event.data)
                    )));
                }
            }
        }
        let latency = reply.started.elapsed();
        let mut response = assembler
            .finish(terminated)
            .map_err(|why| fail(format!("{why} (after {count} event(s))")))?;
        response.latency_ms = latency.as_secs_f64() * 1000.0;
        response.attempts = reply.attempts;
        response.stream = Some(marks.timing(count));
        response.raw = Some(serde_json::json!({ "sse": raw }));
        Ok(response)
    }
}

/// `: cause: cause…` of an error's sources (reqwest's own text is often just "error
/// decoding response body").
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = String::new();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A local HTTP server for stream tests: it answers each connection with a status line,
/// headers and then the given body chunks, one write each with a pause between them (so
/// the client sees every boundary), then closes.
#[cfg(test)]
pub(crate) mod test_server {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    /// Serve `chunks` of an `text/event-stream` 200 answer to `connections` requests;
    /// returns the base URL (`http://127.0.0.1:PORT`) and the bodies of the requests
    /// received.
    pub(crate) fn serve(
        chunks: Vec<Vec<u8>>,
        connections: usize,
    ) -> (String, std::thread::JoinHandle<Vec<String>>) {
        serve_status(200, chunks, connections)
    }

    /// As [`serve`], with another status.
    pub(crate) fn serve_status(
        status: u16,
        chunks: Vec<Vec<u8>>,
        connections: usize,
    ) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut bodies = Vec::new();
            for _ in 0..connections {
                let (mut conn, _) = listener.accept().unwrap();
                conn.set_nodelay(true).unwrap();
                bodies.push(read_request(&mut conn));
                let kind = if status == 200 {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\nconnection: close\r\n\r\n"
                );
                let _ = conn.write_all(head.as_bytes());
                for c in &chunks {
                    let _ = conn.write_all(c);
                    let _ = conn.flush();
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            bodies
        });
        (url, handle)
    }

    /// Read one request (headers, then `content-length` bytes of body); the body.
    fn read_request(conn: &mut std::net::TcpStream) -> String {
        let mut buf = Vec::new();
        let mut byte = [0u8; 4096];
        let head_end = loop {
            let n = conn.read(&mut byte).unwrap_or(0);
            if n == 0 {
                return String::new();
            }
            buf.extend_from_slice(&byte[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let n = conn.read(&mut byte).unwrap_or(0);
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&byte[..n]);
        }
        String::from_utf8_lossy(&buf[head_end..]).into_owned()
    }

    /// `body` cut at every given byte offset (offsets past the end are ignored), so a
    /// test can put a boundary inside a UTF-8 character or a JSON string.
    pub(crate) fn split_at(body: &[u8], offsets: &[usize]) -> Vec<Vec<u8>> {
        let mut cuts: Vec<usize> = offsets
            .iter()
            .copied()
            .filter(|&o| o > 0 && o < body.len())
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut out = Vec::new();
        let mut from = 0;
        for c in cuts {
            out.push(body[from..c].to_vec());
            from = c;
        }
        out.push(body[from..].to_vec());
        out
    }

    /// Offsets inside every multi-byte UTF-8 character of `body` (one byte into it) and
    /// just after every `"` (inside a JSON string or at its end): the hostile points.
    pub(crate) fn hostile_offsets(body: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, b) in body.iter().enumerate() {
            // A leading byte of a multi-byte character: cut after it.
            if *b >= 0xC0 {
                out.push(i + 1);
            }
            if *b == b'"' {
                out.push(i + 1);
            }
        }
        out
    }

    /// A tool call as the providers parse one.
    pub(crate) fn call(id: Option<&str>, name: &str, arguments: &str) -> crate::provider::ToolCall {
        crate::provider::ToolCall {
            id: id.map(str::to_string),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Usage a provider reported (not estimated).
    pub(crate) fn usage(input: u64, output: u64) -> Option<crate::provider::Usage> {
        Some(crate::provider::Usage {
            input_tokens: input,
            output_tokens: output,
            estimated: false,
            ..Default::default()
        })
    }

    /// Usage a provider reported with its detail counts: `cached` and `write` input
    /// tokens read from and written to the prompt cache, `reasoning` output tokens.
    pub(crate) fn detailed(
        input: u64,
        output: u64,
        cached: u64,
        write: u64,
        reasoning: u64,
    ) -> Option<crate::provider::Usage> {
        Some(crate::provider::Usage {
            cached_input_tokens: cached,
            cache_write_tokens: write,
            reasoning_tokens: reasoning,
            ..crate::provider::Usage::new(input, output)
        })
    }

    /// What a streamed and a non-streamed answer share (no timing, attempts or body).
    pub(crate) fn answer(r: &crate::provider::Response) -> crate::provider::Response {
        crate::provider::Response {
            latency_ms: 0.0,
            attempts: 0,
            raw: None,
            stream: None,
            ..r.clone()
        }
    }

    /// The trial key the stream tests send under `target`.
    pub(crate) fn trial(target: &str) -> crate::provider::TrialKey {
        crate::provider::TrialKey {
            case_id: "weather".into(),
            target: target.into(),
            variant: "base".into(),
            tool_choice: crate::provider::ToolChoice::Auto,
            repeat: 0,
        }
    }

    /// A streamed answer's timing holds together: `events` events; output before the
    /// first tool-call byte (when a call came), both within the total latency.
    pub(crate) fn assert_timing(r: &crate::provider::Response, events: u32) {
        let t = r.stream.as_ref().expect("a streamed answer has timing");
        assert_eq!(t.events, events);
        let first = t.first_token_ms.expect("output arrived");
        assert!(first >= 0.0);
        match t.first_tool_byte_ms {
            Some(tool) => {
                assert!(!r.tool_calls.is_empty());
                assert!(
                    first <= tool && tool <= r.latency_ms,
                    "{t:?} {}",
                    r.latency_ms
                );
            }
            None => assert!(r.tool_calls.is_empty()),
        }
        assert!(first <= r.latency_ms);
    }
}
