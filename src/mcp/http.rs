//! The Streamable HTTP transport: every JSON-RPC message is POSTed to the one endpoint
//! URL; a request's answer comes back as a JSON body or as a `text/event-stream` whose
//! events may carry server notifications and server requests before the response.
//!
//! Legacy era: the session id the server hands out on `initialize` (`Mcp-Session-Id`)
//! goes on every later request, `MCP-Protocol-Version` once negotiated, and the session
//! ends with a DELETE. Modern era (2026-07-28): no session; each request carries
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers its
//! tool's schema asks for, all derived from the body sent (see [`super::http_headers`]).
//!
//! A stream that ends before the response is resumed by GET with `Last-Event-ID` after
//! the server's `retry` delay (SEP-1699), so a server that drops long calls' streams on
//! purpose still answers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::http_headers::{self, ParamHeader};
use super::http_reply::{self, Incoming};
use super::input;
use super::transport::{Direction, Outgoing, Transport};
use super::{ExchangeLog, InputPolicy, McpError, ServerSpec};

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";
/// The `_meta` key a modern request names its protocol version with.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Wait before resuming a stream when the server gave no `retry` (the SDKs' default).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Resumptions in a row that bring no new event before giving up.
const MAX_IDLE_RESUMES: u32 = 3;
/// Longest `retry` honoured: a hostile server cannot park a call past its timeout
/// anyway, but a sane cap keeps the wait readable in the log.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Bound for notifications and the closing DELETE, which have no caller-given timeout.
const SIDE_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of a body quoted in an error message.
const EXCERPT: usize = 200;

/// One endpoint, its session and protocol headers.
#[derive(Debug)]
pub struct HttpTransport {
    /// The server as the user wrote it (error messages name it).
    server: String,
    url: reqwest::Url,
    client: reqwest::Client,
    state: Mutex<State>,
    log: ExchangeLog,
}

/// What later requests depend on.
#[derive(Debug, Default)]
struct State {
    session: Option<HeaderValue>,
    protocol: Option<String>,
    modern: bool,
    closed: bool,
    /// Each listed tool's `x-mcp-header` annotations, learnt from `tools/list` replies
    /// as they pass, so `tools/call` can mirror arguments into `Mcp-Param-*` headers
    /// (a modern server rejects a call that leaves them out).
    param_headers: HashMap<String, Vec<ParamHeader>>,
    /// How the server's own requests are answered (see [`Transport::set_input_policy`]).
    policy: InputPolicy,
    /// The task reading the legacy session's standalone GET stream, aborted on close.
    standalone: Option<tokio::task::JoinHandle<()>>,
}

/// How one POST or GET ended, before it is turned into the caller's answer.
enum Reply {
    /// The JSON-RPC response to the request.
    Answer(Value),
    /// An event stream ended without the response; resume from this event id.
    Resume { last_id: String, retry: Duration },
}

impl HttpTransport {
    /// Prepare the endpoint `url` (nothing is sent yet).
    pub fn new(spec: &ServerSpec, url: &str, log: ExchangeLog) -> Result<HttpTransport, McpError> {
        let bad = |why: String| McpError::BadSpec {
            spec: spec.to_string(),
            why,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("the URL must start with http:// or https://".into()));
        }
        crate::util::tls::install_crypto();
        // No whole-request timeout on the client: an SSE answer may legitimately take
        // long; each request is bounded by its own timeout instead.
        let mut builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
        if parsed.scheme() == "http" {
            // A local plain-HTTP server needs no root certificates.
            builder = builder.tls_certs_only(Vec::new());
        }
        let client = builder.build().map_err(|e| McpError::Connect {
            server: spec.to_string(),
            why: format!("could not set up the HTTP client: {e}"),
        })?;
        Ok(HttpTransport {
            server: spec.to_string(),
            url: parsed,
            client,
            state: Mutex::new(State::default()),
            log,
        })
    }

    /// The session id the server gave on `initialize`, if any.
    pub fn session_id(&self) -> Option<String> {
        let state = self.lock();
        state.session.as_ref()?.to_str().ok().map(str::to_string)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Headers every message carries: session, negotiated version, and for a modern
    /// request the routing headers derived from `body`.
    fn headers_for(&self, body: Option<&Value>) -> HeaderMap {
        let state = self.lock();
        let mut headers = HeaderMap::new();
        if let Some(session) = &state.session {
            headers.insert(SESSION_ID, session.clone());
        }
        // A body with the modern `_meta` envelope names its own version (the discover
        // probe goes out before any version is agreed); the header must agree with it.
        let meta_version = body
            .and_then(|b| b.get("params")?.get("_meta")?.get(META_VERSION)?.as_str())
            .map(str::to_string);
        let modern = meta_version.is_some() || state.modern;
        if let Some(version) = meta_version.or_else(|| state.protocol.clone()) {
            insert(&mut headers, PROTOCOL_VERSION, &version);
        }
        let Some(body) = body.filter(|_| modern) else {
            return headers;
        };
        for (name, value) in http_headers::standard_headers(body) {
            insert(&mut headers, &name, &value);
        }
        if body.get("method").and_then(Value::as_str) == Some("tools/call") {
            let params = body.get("params");
            let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
            let args = params.and_then(|p| p.get("arguments"));
            if let (Some(ann), Some(args)) = (tool.and_then(|t| state.param_headers.get(t)), args) {
                for (name, value) in http_headers::param_headers(ann, args) {
                    insert(&mut headers, &name, &value);
                }
            }
        }
        headers
    }

    /// POST one message (already serialized as `text`, which is what gets logged); also
    /// says whether it carried a session id (a 404 then means the session expired).
    async fn post(
        &self,
        method: &str,
        text: &str,
        body: &Value,
    ) -> Result<(reqwest::Response, bool), McpError> {
        self.log.push(Direction::Sent, text);
        let sent_session = self.lock().session.is_some();
        let response = self
            .client
            .post(self.url.clone())
            .headers(self.headers_for(Some(body)))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(text.to_string())
            .send()
            .await
            .map_err(|e| self.send_error(method, &e))?;
        Ok((response, sent_session))
    }

    /// A 404 to a request that carried a session: the server forgot the session.
    fn expired(&self, method: &str, text: &str) -> McpError {
        self.closed(
            method,
            format!(
                "the session expired (HTTP 404 to a request with Mcp-Session-Id: {}); connect \
                 again to start a new session",
                http_reply::excerpt(text, EXCERPT)
            ),
        )
    }

    fn send_error(&self, method: &str, e: &reqwest::Error) -> McpError {
        let detail = error_chain(e);
        if e.is_connect() {
            McpError::Connect {
                server: self.server.clone(),
                why: format!(
                    "no connection to {} ({detail}); is the server running and listening on that \
                     host and port?",
                    self.url
                ),
            }
        } else if e.is_timeout() {
            McpError::Connect {
                server: self.server.clone(),
                why: format!("connecting to {} timed out ({detail})", self.url),
            }
        } else {
            McpError::Closed {
                server: self.server.clone(),
                method: method.to_string(),
                why: detail,
            }
        }
    }

    /// The error for a non-2xx status whose body is not a JSON-RPC error. 5xx: the
    /// server failed (`Closed`). 401/403: it wants credentials toolgauge does not send,
    /// so nothing will get through (`Connect`). Other 4xx: an answer that is not
    /// JSON-RPC (`Malformed`), which during the `server/discover` probe means a legacy
    /// endpoint that does not know the method, so the client falls back to `initialize`.
    fn status_error(&self, method: &str, status: StatusCode, text: &str) -> McpError {
        let why = format!("HTTP {status}: {}", http_reply::excerpt(text, EXCERPT));
        match status.as_u16() {
            500.. => self.closed(method, why),
            401 | 403 => McpError::Connect {
                server: self.server.clone(),
                why: format!(
                    "`{method}` was refused with {why}; the server wants authorization, which \
                     toolgauge does not send"
                ),
            },
            404 | 405 => self.malformed(
                method,
                format!("{why}; check that the URL is the server's MCP endpoint (often `/mcp`)"),
            ),
            _ => self.malformed(method, why),
        }
    }

    fn malformed(&self, method: &str, why: String) -> McpError {
        McpError::Malformed {
            server: self.server.clone(),
            method: method.to_string(),
            why,
        }
    }

    /// The whole exchange for one request, without its timeout.
    async fn exchange(&self, out: &Outgoing, id: &Value) -> Result<Value, McpError> {
        let method = out.method.as_str();
        let text =
            serde_json::to_string(&out.body).map_err(|e| self.malformed(method, e.to_string()))?;
        let (response, sent_session) = self.post(method, &text, &out.body).await?;
        if method == "initialize"
            && let Some(session) = response.headers().get(SESSION_ID)
        {
            self.log.push(
                Direction::Note,
                format!("session {}", session.to_str().unwrap_or("(not text)")),
            );
            self.lock().session = Some(session.clone());
        }
        let mut reply = self.read_reply(method, id, response, sent_session).await?;
        let mut idle = 0;
        loop {
            match reply {
                Reply::Answer(answer) => {
                    if method == "tools/list" {
                        self.learn_tools(&answer);
                    }
                    return Ok(answer);
                }
                Reply::Resume { last_id, retry } => {
                    idle += 1;
                    if idle > MAX_IDLE_RESUMES {
                        return Err(McpError::Closed {
                            server: self.server.clone(),
                            method: method.to_string(),
                            why: format!(
                                "the event stream ended {MAX_IDLE_RESUMES} times in a row without \
                                 the response (last event id `{last_id}`)"
                            ),
                        });
                    }
                    reply = self.resume(method, id, &last_id, retry).await?;
                    if let Reply::Resume { last_id: next, .. } = &reply
                        && *next != last_id
                    {
                        idle = 0;
                    }
                }
            }
        }
    }

    /// Wait the server's `retry`, then GET the stream again from `last_id`.
    async fn resume(
        &self,
        method: &str,
        id: &Value,
        last_id: &str,
        retry: Duration,
    ) -> Result<Reply, McpError> {
        self.log.push(
            Direction::Note,
            format!(
                "stream ended before the response; resuming from event `{last_id}` in {} ms",
                retry.as_millis()
            ),
        );
        tokio::time::sleep(retry).await;
        let mut headers = self.headers_for(None);
        insert(&mut headers, LAST_EVENT_ID, last_id);
        let response = self
            .client
            .get(self.url.clone())
            .headers(headers)
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| self.send_error(method, &e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(McpError::Closed {
                server: self.server.clone(),
                method: method.to_string(),
                why: format!(
                    "the event stream ended before the response and resuming it was refused \
                     (GET with Last-Event-ID `{last_id}`: HTTP {status}: {})",
                    http_reply::excerpt(&text, EXCERPT)
                ),
            });
        }
        let resumed = self
            .read_stream(method, id, response, Some(last_id.to_string()), retry)
            .await?;
        Ok(resumed)
    }

    /// Turn a reply to a POSTed request into the response, a resumption, or an error.
    async fn read_reply(
        &self,
        method: &str,
        id: &Value,
        response: reqwest::Response,
        sent_session: bool,
    ) -> Result<Reply, McpError> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status.is_success() && content_type.starts_with("text/event-stream") {
            return self
                .read_stream(method, id, response, None, DEFAULT_RETRY)
                .await;
        }
        let text = response.text().await.map_err(|e| {
            self.closed(method, format!("the reply broke off: {}", error_chain(&e)))
        })?;
        if !text.is_empty() {
            self.log.push(Direction::Received, text.clone());
        }
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        if !status.is_success() {
            // A JSON-RPC error at a 4xx/5xx is the server's answer (modern servers map
            // error codes to statuses, e.g. -32601 to 404): hand it to the client as a
            // response, like stdio would, so era detection reads the same codes.
            if let Some(answer) = parsed.as_ref().and_then(|b| http_reply::scan(b, id).0) {
                return Ok(Reply::Answer(answer));
            }
            // Not this request's answer: a 404 to a request that carried a session means
            // the server forgot it, whatever the body says ("Session not found", id null).
            if status == StatusCode::NOT_FOUND && sent_session {
                return Err(self.expired(method, &text));
            }
            if let Some(error) = parsed.as_ref().and_then(|b| http_reply::error_for(b, id)) {
                return Ok(Reply::Answer(error));
            }
            return Err(self.status_error(method, status, &text));
        }
        let Some(body) = parsed else {
            let what = if text.trim().is_empty() {
                format!("HTTP {status} with an empty body instead of the response")
            } else {
                format!(
                    "the body ({}) is not JSON: {}",
                    if content_type.is_empty() {
                        "no content type"
                    } else {
                        &content_type
                    },
                    http_reply::excerpt(&text, EXCERPT)
                )
            };
            return Err(self.malformed(method, what));
        };
        let (answer, requests) = http_reply::scan(&body, id);
        for request in requests {
            self.answer_server(&request).await;
        }
        match answer {
            Some(answer) => Ok(Reply::Answer(answer)),
            None => Err(self.malformed(
                method,
                format!(
                    "the body holds no response with id {id}: {}",
                    http_reply::excerpt(&text, EXCERPT)
                ),
            )),
        }
    }

    /// Read an event stream until the response to `id` arrives, answering server
    /// requests on the way. `last_id`/`retry` carry over from an earlier stream.
    async fn read_stream(
        &self,
        method: &str,
        id: &Value,
        response: reqwest::Response,
        mut last_id: Option<String>,
        mut retry: Duration,
    ) -> Result<Reply, McpError> {
        let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
        let mut broke = None;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    broke = Some(e.to_string());
                    break;
                }
            };
            if let Some(eid) = event.id.as_ref().filter(|i| !i.is_empty()) {
                last_id = Some(eid.clone());
            }
            if let Some(ms) = event.retry {
                retry = Duration::from_millis(ms).min(MAX_RETRY);
            }
            // Priming events (an id and retry with empty data) and comments carry nothing.
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            self.log.push(Direction::Received, data.clone());
            // MCP's messages are default or `message` events; other event types
            // (keep-alives, vendor extras) are logged and not read as JSON-RPC.
            if event.event.as_deref().is_some_and(|e| e != "message") {
                continue;
            }
            let message: Value = serde_json::from_str(&data).map_err(|e| {
                self.malformed(
                    method,
                    format!(
                        "an event's data is not JSON ({e}): {}",
                        http_reply::excerpt(&data, EXCERPT)
                    ),
                )
            })?;
            let (answer, requests) = http_reply::scan(&message, id);
            for request in requests {
                self.answer_server(&request).await;
            }
            if let Some(answer) = answer {
                return Ok(Reply::Answer(answer));
            }
            if matches!(http_reply::classify(&message, id), Incoming::NotJsonRpc)
                && !message.is_array()
            {
                return Err(self.malformed(
                    method,
                    format!(
                        "an event is not a JSON-RPC message: {}",
                        http_reply::excerpt(&data, EXCERPT)
                    ),
                ));
            }
        }
        match last_id {
            Some(last_id) => Ok(Reply::Resume { last_id, retry }),
            None => Err(self.closed(
                method,
                match broke {
                    Some(e) => format!("the event stream broke off before the response: {e}"),
                    None => "the event stream ended before the response (and gave no event id to resume from)"
                        .to_string(),
                },
            )),
        }
    }

    /// Answer a server request by the input policy and POST the answer.
    async fn answer_server(&self, request: &Value) {
        let policy = self.lock().policy.clone();
        let answer = input::answer_server_request(request, &policy);
        post_answer(
            &self.client,
            &self.url,
            self.headers_for(None),
            &self.log,
            request,
            &answer,
        )
        .await;
    }

    /// Legacy era, once `notifications/initialized` went out: open the standalone GET
    /// stream and read it in a background task, since a server may send requests (an
    /// elicitation during a call, a ping) there rather than on a POST's reply, and wait
    /// for the answer. The GET is sent before this returns, so the stream is there
    /// before the first request (a server that treats any later GET as the resumption
    /// of a call's stream would otherwise hand that call's response to it). A 405
    /// means the server offers no such stream, which is fine.
    async fn open_standalone(&self) {
        let (headers, policy) = {
            let state = self.lock();
            if state.modern || state.closed || state.standalone.is_some() {
                return;
            }
            (self.headers_for_locked(&state), state.policy.clone())
        };
        let reader = Standalone {
            client: self.client.clone(),
            url: self.url.clone(),
            headers,
            log: self.log.clone(),
            policy,
        };
        let sent = self
            .client
            .get(self.url.clone())
            .headers(reader.headers.clone())
            .header(ACCEPT, "text/event-stream");
        let response = match tokio::time::timeout(SIDE_TIMEOUT, sent.send()).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                reader.note(format!(
                    "could not open the standalone stream: {}",
                    error_chain(&e)
                ));
                return;
            }
            Err(_) => {
                reader.note(format!(
                    "the standalone stream did not answer within {} s: not opened",
                    SIDE_TIMEOUT.as_secs()
                ));
                return;
            }
        };
        let task = tokio::spawn(reader.run(response));
        let mut state = self.lock();
        if state.closed {
            task.abort();
        } else {
            state.standalone = Some(task);
        }
    }

    /// Remember the `x-mcp-header` annotations of the tools in a `tools/list` result.
    /// Tools whose annotations are invalid get none (the client drops them anyway).
    fn learn_tools(&self, answer: &Value) {
        let Some(tools) = answer
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let mut state = self.lock();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match http_headers::annotations(schema) {
                Ok(ann) if !ann.is_empty() => {
                    state.param_headers.insert(name.to_string(), ann);
                }
                _ => {
                    state.param_headers.remove(name);
                }
            }
        }
    }

    fn closed(&self, method: &str, why: String) -> McpError {
        McpError::Closed {
            server: self.server.clone(),
            method: method.to_string(),
            why,
        }
    }
}

/// Insert a header, skipping values HTTP cannot carry (they come from the server or the
/// body and were encoded already; a broken one must not abort the request).
fn insert(headers: &mut HeaderMap, name: &str, value: &str) {
    if let (Ok(name), Ok(value)) = (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        headers.insert(name, value);
    }
}

/// A reqwest error with its sources ("error sending request: connection refused").
fn error_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

#[async_trait]
impl Transport for HttpTransport {
    async fn request(&self, out: &Outgoing, timeout: Duration) -> Result<Value, McpError> {
        if self.lock().closed {
            return Err(self.closed(&out.method, "the transport was closed".into()));
        }
        let id = out.body.get("id").cloned().unwrap_or(Value::Null);
        match tokio::time::timeout(timeout, self.exchange(out, &id)).await {
            Ok(result) => result,
            Err(_) => Err(McpError::Timeout {
                server: self.server.clone(),
                method: out.method.clone(),
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    async fn notify(&self, out: &Outgoing) -> Result<(), McpError> {
        let method = out.method.as_str();
        if self.lock().closed {
            return Err(self.closed(method, "the transport was closed".into()));
        }
        let text =
            serde_json::to_string(&out.body).map_err(|e| self.malformed(method, e.to_string()))?;
        let sent = tokio::time::timeout(SIDE_TIMEOUT, async {
            let (response, sent_session) = self.post(method, &text, &out.body).await?;
            let status = response.status();
            // 202 Accepted is the spec's answer; a server that sends a body anyway is
            // logged and tolerated.
            let body = response.text().await.unwrap_or_default();
            if !body.is_empty() {
                self.log.push(Direction::Received, body.clone());
            }
            if status.is_success() {
                if method == "notifications/initialized" {
                    self.open_standalone().await;
                }
                return Ok(());
            }
            if status == StatusCode::NOT_FOUND && sent_session {
                return Err(self.expired(method, &body));
            }
            match serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|b| http_reply::error_for(&b, &Value::Null))
            {
                Some(error) => Err(McpError::Rpc {
                    server: self.server.clone(),
                    method: method.to_string(),
                    code: error["error"]["code"].as_i64().unwrap_or(0),
                    message: error["error"]["message"].as_str().unwrap_or("").to_string(),
                    data: error["error"].get("data").cloned().map(Into::into),
                }),
                None => Err(self.status_error(method, status, &body)),
            }
        })
        .await;
        sent.unwrap_or_else(|_| {
            Err(McpError::Timeout {
                server: self.server.clone(),
                method: method.to_string(),
                timeout_ms: u64::try_from(SIDE_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
            })
        })
    }

    fn set_protocol(&self, version: &str, modern: bool) {
        let mut state = self.lock();
        state.protocol = Some(version.to_string());
        state.modern = modern;
        if modern {
            // The modern era is stateless: a session from an earlier legacy attempt
            // must not leak into its requests.
            state.session = None;
        }
    }

    fn set_input_policy(&self, policy: &InputPolicy) {
        self.lock().policy = policy.clone();
    }

    fn alive(&self) -> bool {
        !self.lock().closed
    }

    async fn close(&self) {
        let session = {
            let mut state = self.lock();
            if state.closed {
                return;
            }
            let session = state.session.is_some();
            let headers = self.headers_for_locked(&state);
            state.closed = true;
            if let Some(task) = state.standalone.take() {
                task.abort();
            }
            session.then_some(headers)
        };
        let Some(headers) = session else {
            return;
        };
        let sent = self
            .client
            .request(Method::DELETE, self.url.clone())
            .headers(headers)
            .timeout(SIDE_TIMEOUT)
            .send()
            .await;
        let note = match sent {
            Ok(r) if r.status().is_success() => "session ended (DELETE)".to_string(),
            // 405: the server does not let clients end sessions; nothing to do.
            Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                "the server does not end sessions on DELETE (405)".to_string()
            }
            Ok(r) => format!("ending the session got HTTP {}", r.status()),
            Err(e) => format!("ending the session failed: {}", error_chain(&e)),
        };
        self.log.push(Direction::Note, note);
    }

    fn log(&self) -> &ExchangeLog {
        &self.log
    }
}

impl HttpTransport {
    /// Session and version headers from an already locked state (for `close`).
    fn headers_for_locked(&self, state: &State) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(session) = &state.session {
            headers.insert(SESSION_ID, session.clone());
        }
        if let Some(version) = &state.protocol {
            insert(&mut headers, PROTOCOL_VERSION, version);
        }
        headers
    }
}

impl Drop for HttpTransport {
    /// A transport dropped without `close` must not leave its stream reader running.
    fn drop(&mut self) {
        if let Some(task) = self.lock().standalone.take() {
            task.abort();
        }
    }
}

/// What the standalone stream's task needs (owned: it outlives no borrow of the
/// transport, which aborts it on close or drop).
struct Standalone {
    client: reqwest::Client,
    url: reqwest::Url,
    /// Session and protocol headers, fixed once the session is up.
    headers: HeaderMap,
    log: ExchangeLog,
    policy: InputPolicy,
}

impl Standalone {
    /// Read the stream the GET opened and answer each server request on it until it
    /// ends. Nothing here fails a call: what goes wrong is logged as a note.
    async fn run(self, response: reqwest::Response) {
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            self.note("the server offers no standalone stream (GET: 405)".into());
            return;
        }
        let event_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
        if !status.is_success() || !event_stream {
            let text = response.text().await.unwrap_or_default();
            self.note(format!(
                "the standalone stream was not opened (GET: HTTP {status}): {}",
                http_reply::excerpt(&text, EXCERPT)
            ));
            return;
        }
        self.note("standalone stream open (GET)".into());
        let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    self.note(format!("the standalone stream broke off: {e}"));
                    return;
                }
            };
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            self.log.push(Direction::Received, data.clone());
            if event.event.as_deref().is_some_and(|e| e != "message") {
                continue;
            }
            let Ok(message) = serde_json::from_str::<Value>(&data) else {
                self.note("a standalone stream event is not JSON: ignored".into());
                continue;
            };
            // No request is in flight on this stream: only server requests need work.
            let (_, requests) = http_reply::scan(&message, &Value::Null);
            for request in requests {
                let answer = input::answer_server_request(&request, &self.policy);
                post_answer(
                    &self.client,
                    &self.url,
                    self.headers.clone(),
                    &self.log,
                    &request,
                    &answer,
                )
                .await;
            }
        }
        self.note("the standalone stream ended".into());
    }

    fn note(&self, text: String) {
        self.log.push(Direction::Note, text);
    }
}

/// POST the answer to a server request. Failures are logged, not raised: the request
/// in flight may still be answered.
async fn post_answer(
    client: &reqwest::Client,
    url: &reqwest::Url,
    headers: HeaderMap,
    log: &ExchangeLog,
    request: &Value,
    answer: &Value,
) {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let text = answer.to_string();
    log.push(Direction::Sent, text.clone());
    let sent = client
        .post(url.clone())
        .headers(headers)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(text)
        .timeout(SIDE_TIMEOUT)
        .send()
        .await;
    match sent {
        Ok(r) if r.status().is_success() => {}
        Ok(r) => log.push(
            Direction::Note,
            format!(
                "the answer to server request `{method}` got HTTP {}",
                r.status()
            ),
        ),
        Err(e) => log.push(
            Direction::Note,
            format!(
                "the answer to server request `{method}` failed: {}",
                error_chain(&e)
            ),
        ),
    }
}
