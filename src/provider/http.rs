//! The HTTP layer shared by live providers: JSON POSTs with a per-request timeout,
//! bounded retries with exponential backoff and jitter on 429, 5xx and connection
//! failures, `Retry-After` honoured (seconds, milliseconds or an HTTP date), and secrets
//! scrubbed from every error text.
//!
//! Retries are a short loop written here rather than a retry crate: the delay of each
//! attempt depends on the previous response's headers (`Retry-After`), and the loop
//! must count attempts and keep the last failure for the trial's error message.

use std::time::{Duration, Instant, SystemTime};

use rand::Rng;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

/// How requests are sent and retried.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Time allowed for one attempt (connect, send, whole body).
    pub timeout: Duration,
    /// Attempts per request, the first included (at least 1).
    pub max_attempts: u32,
    /// Delay before the first retry; doubles each attempt.
    pub base_delay: Duration,
    /// Longest delay between attempts, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            timeout: Duration::from_secs(60),
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

/// A successful exchange.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// The parsed JSON body.
    pub body: Value,
    /// Wall time of the successful attempt.
    pub latency: Duration,
    /// Attempts made, the successful one included.
    pub attempts: u32,
}

/// A 2xx answer whose body is still to be read (a streamed answer).
#[derive(Debug)]
pub struct HttpStream {
    /// The response; read its body with `bytes_stream()`.
    pub response: reqwest::Response,
    /// When the successful attempt started: the origin of every stream timing.
    pub started: Instant,
    /// Attempts made, the successful one included.
    pub attempts: u32,
}

/// What [`Http::exchange`] got: a whole parsed body, or a stream to read.
enum Got {
    Body(HttpReply),
    Stream(HttpStream),
}

/// Why a request failed (after retries, where retrying made sense). Messages never hold
/// a secret: every text taken from a response is scrubbed first.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HttpError {
    /// The server answered with an error status.
    #[error("HTTP {status} after {attempts} attempt(s): {message}")]
    Status {
        /// The status code.
        status: u16,
        /// The start of the error body.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// An attempt took longer than the timeout.
    #[error("timed out after {timeout_s:.1} s on each of {attempts} attempt(s)")]
    Timeout {
        /// The per-attempt timeout in seconds.
        timeout_s: f64,
        /// Attempts made.
        attempts: u32,
    },
    /// The connection failed or broke (refused, reset, truncated body).
    #[error("connection failed after {attempts} attempt(s): {message}")]
    Connection {
        /// What failed.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The body is not the JSON the provider documents.
    #[error("malformed response body: {message}; body starts: {snippet}")]
    InvalidBody {
        /// The parse error.
        message: String,
        /// The start of the body.
        snippet: String,
    },
    /// The client could not be built or the request not formed.
    #[error("invalid request: {0}")]
    Setup(String),
}

/// A header to send; sensitive values (keys) are marked so they never appear in debug
/// output of the HTTP stack.
pub struct Header {
    /// Name, lower case.
    pub name: std::borrow::Cow<'static, str>,
    /// Value.
    pub value: String,
    /// True for credentials.
    pub sensitive: bool,
}

/// A JSON-over-HTTP client with retries.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    /// The same client without a connection pool: every request on a new connection.
    /// Used once the server is seen closing connections after each reply
    /// ([`StaleCount`]), where a pooled connection is dead by the time it is reused.
    fresh: reqwest::Client,
    stale: std::sync::Arc<StaleCount>,
    settings: HttpSettings,
    urls: std::sync::Arc<UrlCache>,
}

/// The URLs this client posted to, parsed once. Given a `&str`, reqwest parses the URL
/// again for every request (3-4% of a live run's CPU at -j 64 by `perf record`); a
/// provider posts to one or two URLs for the whole run.
#[derive(Debug, Default)]
struct UrlCache(std::sync::Mutex<Vec<(String, reqwest::Url)>>);

impl UrlCache {
    /// URLs kept; past it (a provider whose URL changes with every request) parsing
    /// is simply not cached.
    const MAX: usize = 8;

    /// `url` parsed, or `None` when it does not parse (reqwest then reports it as it
    /// always has, from the text).
    fn get(&self, url: &str) -> Option<reqwest::Url> {
        let mut urls = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, parsed)) = urls.iter().find(|(text, _)| text == url) {
            return Some(parsed.clone());
        }
        let parsed = reqwest::Url::parse(url).ok()?;
        if urls.len() < Self::MAX {
            urls.push((url.to_string(), parsed.clone()));
        }
        Some(parsed)
    }
}

/// How often a pooled connection turned out closed by the server (see
/// `closed_unanswered`), against the requests sent. A server that closes after every
/// reply without saying `Connection: close` (Python's `http.server`) makes this frequent:
/// each reuse is a wasted write, a resend, and under concurrency a burst of them. A server
/// that only drops connections left idle past its keep-alive timeout makes it rare, and
/// keeps its pool (over TLS a new connection costs a handshake).
#[derive(Debug, Default)]
struct StaleCount {
    sent: std::sync::atomic::AtomicU64,
    stale: std::sync::atomic::AtomicU64,
    /// Set once the pool is given up, and never cleared: the share of stale reuses falls
    /// as soon as the pool is no longer used, and returning to it would only bring the
    /// next burst of stale reuses (the client would swing between the two).
    given_up: std::sync::atomic::AtomicBool,
}

impl StaleCount {
    /// Stale reuses before the pool is given up, and their least share of requests.
    const MIN_STALE: u64 = 3;
    const MIN_SHARE_PERCENT: u64 = 5;

    fn note_sent(&self) {
        self.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn note_stale(&self) {
        self.stale
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the server closes connections often enough that pooling only costs.
    /// Once true, true for good (see `given_up`).
    fn pool_given_up(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if self.given_up.load(Relaxed) {
            return true;
        }
        let stale = self.stale.load(Relaxed);
        let sent = self.sent.load(Relaxed);
        let given_up = stale >= Self::MIN_STALE && stale * 100 >= sent * Self::MIN_SHARE_PERCENT;
        if given_up {
            self.given_up.store(true, Relaxed);
        }
        given_up
    }
}

pub use crate::util::tls::install_crypto;

/// Replace every secret (of 8 characters or more) in `text` by `[REDACTED]`.
pub fn redact(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.len() >= 8) {
        if out.contains(*s) {
            out = out.replace(*s, "[REDACTED]");
        }
    }
    out
}

/// The body as text with every secret replaced; borrows when there is none.
fn scrubbed<'a>(bytes: &'a [u8], secrets: &[&str]) -> std::borrow::Cow<'a, str> {
    let text = String::from_utf8_lossy(bytes);
    if secrets.iter().any(|s| s.len() >= 8 && text.contains(*s)) {
        std::borrow::Cow::Owned(redact(&text, secrets))
    } else {
        text
    }
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// The delay a response asks for: `retry-after-ms`, or `Retry-After` in seconds or as an
/// HTTP date.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The `retryDelay` of a Google RPC error body (`{"error": {"details": [{"@type":
/// "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"}]}}`).
pub fn retry_delay_in_body(body: &[u8]) -> Option<Duration> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("error")?
        .get("details")?
        .as_array()?
        .iter()
        .find_map(|d| d.get("retryDelay")?.as_str())
        .and_then(|s| s.trim().strip_suffix('s')?.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// `scheme://host:port` of `url`, for messages (no path, no query: nothing secret).
fn origin(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.to_string(),
    }
}

/// The headers to send, credentials marked sensitive.
fn header_map(headers: &[Header]) -> Result<HeaderMap, HttpError> {
    let mut map = HeaderMap::new();
    for h in headers {
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| HttpError::Setup(format!("`{}` is not a header name", h.name)))?;
        let mut value = HeaderValue::from_str(&h.value)
            .map_err(|_| HttpError::Setup(format!("header `{}` has an invalid value", h.name)))?;
        value.set_sensitive(h.sensitive);
        // Appended, not inserted: a custom header may add to one of ours.
        map.append(name, value);
    }
    Ok(map)
}

/// Whether `e` (from sending a request) says the connection closed before any answer
/// arrived: hyper's "connection closed before message completed".
///
/// That is what a pooled HTTP/1.1 connection looks like when the server closed it after
/// its previous reply without saying `Connection: close` (Python's `http.server` and many
/// small servers do): the client hands the next request to the idle connection in the
/// instant before the server's FIN is read, the write lands on a closed socket, and the
/// read that follows sees the end of the stream. The server never saw the request.
fn closed_unanswered(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            return h.is_incomplete_message();
        }
        source = s.source();
    }
    false
}

fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || (500..=599).contains(&status) && status != 501
}

impl Http {
    /// A client with `settings`.
    pub fn new(settings: HttpSettings) -> Result<Http, HttpError> {
        Http::build(settings, false)
    }

    /// A client for requests to `base_url`: a plain `http://` endpoint (a local server)
    /// skips loading the system's root certificates, which only TLS needs.
    pub fn for_url(settings: HttpSettings, base_url: &str) -> Result<Http, HttpError> {
        Http::build(settings, base_url.starts_with("http://"))
    }

    fn build(settings: HttpSettings, plain: bool) -> Result<Http, HttpError> {
        install_crypto();
        let builder = || {
            let b = reqwest::Client::builder()
                .timeout(settings.timeout)
                .connect_timeout(settings.timeout.min(Duration::from_secs(10)));
            // No roots at all for a plain endpoint: a redirect to https would fail
            // verification (closed).
            if plain {
                b.tls_certs_only(Vec::new())
            } else {
                b
            }
        };
        let fresh = builder()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| HttpError::Setup(e.to_string()))?;
        let client = builder()
            .build()
            .map_err(|e| HttpError::Setup(e.to_string()))?;
        Ok(Http {
            client,
            fresh,
            stale: Default::default(),
            settings,
            urls: Default::default(),
        })
    }

    /// The client for the next request: the pooled one, unless the server has shown
    /// it closes connections after replying ([`StaleCount::pool_given_up`]).
    fn pick_client(&self) -> &reqwest::Client {
        self.stale.note_sent();
        if self.stale.pool_given_up() {
            &self.fresh
        } else {
            &self.client
        }
    }

    /// Whether this client stopped pooling connections because the server closes them.
    pub fn pool_given_up(&self) -> bool {
        self.stale.pool_given_up()
    }

    /// The settings in force.
    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    /// The backoff before retry number `retry` (1-based): base × 2^(retry-1), with full
    /// jitter in its upper half, capped at `max_delay`.
    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .settings
            .base_delay
            .saturating_mul(1u32 << (retry - 1).min(16));
        let capped = exp.min(self.settings.max_delay);
        let jitter = rand::rng().random_range(0.5..=1.0);
        capped.mul_f64(jitter)
    }

    /// POST `body` as JSON to `url` and parse the JSON answer, retrying what is worth
    /// retrying. `secrets` are scrubbed from every error text.
    pub async fn post_json(
        &self,
        url: &str,
        headers: &[Header],
        body: &Value,
        secrets: &[&str],
    ) -> Result<HttpReply, HttpError> {
        let payload = serde_json::to_vec(body).map_err(|e| HttpError::Setup(e.to_string()))?;
        self.post_bytes(url, headers, payload, secrets).await
    }

    /// POST an already serialised JSON `payload`. Providers serialise before awaiting,
    /// so no request tree stays alive (and goes cold) for the length of the call.
    pub async fn post_bytes(
        &self,
        url: &str,
        headers: &[Header],
        payload: Vec<u8>,
        secrets: &[&str],
    ) -> Result<HttpReply, HttpError> {
        match self.exchange(url, headers, payload, secrets, false).await? {
            Got::Body(reply) => Ok(reply),
            Got::Stream(_) => unreachable!("a body was asked for"),
        }
    }

    /// POST `payload` and hand back the answer's body unread, for a streamed answer
    /// ([`super::stream`]). What fails before the body starts (a refused connection, a
    /// 429 or 5xx status, a timeout waiting for the headers) is retried exactly as in
    /// [`Http::post_bytes`]; once a 2xx status arrived nothing is retried, since part of
    /// the answer may already have been read.
    pub async fn post_stream(
        &self,
        url: &str,
        headers: &[Header],
        payload: Vec<u8>,
        secrets: &[&str],
    ) -> Result<HttpStream, HttpError> {
        match self.exchange(url, headers, payload, secrets, true).await? {
            Got::Stream(stream) => Ok(stream),
            Got::Body(_) => unreachable!("a stream was asked for"),
        }
    }

    /// The retry loop of both: send, and on a 2xx either read and parse the whole body
    /// (a body that breaks off is retried) or, for a `stream`, return the body unread.
    async fn exchange(
        &self,
        url: &str,
        headers: &[Header],
        payload: Vec<u8>,
        secrets: &[&str],
        stream: bool,
    ) -> Result<Got, HttpError> {
        let map = header_map(headers)?;
        // Bytes: a retry sends the same buffer without copying it.
        let payload = bytes::Bytes::from(payload);
        let mut max = self.settings.max_attempts.max(1);
        let mut attempt = 0;
        let mut stale_retried = false;
        loop {
            attempt += 1;
            let started = Instant::now();
            // The resend after a stale reuse goes out on a new connection: another idle
            // one from the pool may be just as dead, and a second loss would be an
            // error with a backoff.
            let client = if stale_retried {
                self.stale.note_sent();
                &self.fresh
            } else {
                self.pick_client()
            };
            let request = match self.urls.get(url) {
                Some(parsed) => client.post(parsed),
                None => client.post(url),
            };
            let mut request = request
                .headers(map.clone())
                .header("content-type", "application/json");
            if stream {
                request = request.header("accept", "text/event-stream");
            }
            let sent = request.body(payload.clone()).send().await;
            let (error, wait) = match sent {
                Ok(resp) if stream && resp.status().is_success() => {
                    return Ok(Got::Stream(HttpStream {
                        response: resp,
                        started,
                        attempts: attempt,
                    }));
                }
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let asked = retry_after(resp.headers(), SystemTime::now());
                    match resp.bytes().await {
                        Ok(bytes) if (200..300).contains(&status) => {
                            let latency = started.elapsed();
                            // Scrub before parsing: a server that echoes the key (in an
                            // answer's text, an argument, a vendor field) must not get it
                            // into a trial, a cassette or a message.
                            let text = scrubbed(&bytes, secrets);
                            return match serde_json::from_str::<Value>(&text) {
                                Ok(body) => Ok(Got::Body(HttpReply {
                                    body,
                                    latency,
                                    attempts: attempt,
                                })),
                                Err(e) => Err(HttpError::InvalidBody {
                                    message: e.to_string(),
                                    snippet: snippet(&text),
                                }),
                            };
                        }
                        Ok(bytes) => {
                            // Google puts the wait in the body (RetryInfo) instead of a header.
                            let asked = asked.or_else(|| retry_delay_in_body(&bytes));
                            // Scrub, then cut: a key crossing the cut would not be found.
                            let text = snippet(&scrubbed(&bytes, secrets));
                            let e = HttpError::Status {
                                status,
                                message: text,
                                attempts: attempt,
                            };
                            if !retryable_status(status) {
                                return Err(e);
                            }
                            (e, asked)
                        }
                        Err(e) => (self.transport_error(&e, url, attempt, secrets), asked),
                    }
                }
                Err(e) if closed_unanswered(&e) && !stale_retried => {
                    // A pooled connection the server had already closed (see
                    // `closed_unanswered`): nothing was processed, so send again at once,
                    // outside the attempt budget.
                    self.stale.note_stale();
                    stale_retried = true;
                    max += 1;
                    continue;
                }
                Err(e) => (self.transport_error(&e, url, attempt, secrets), None),
            };
            if attempt >= max {
                return Err(error);
            }
            let delay = wait
                .map(|w| w.max(self.backoff(attempt)))
                .unwrap_or_else(|| self.backoff(attempt))
                .min(self.settings.max_delay);
            tokio::time::sleep(delay).await;
        }
    }

    fn transport_error(
        &self,
        e: &reqwest::Error,
        url: &str,
        attempts: u32,
        secrets: &[&str],
    ) -> HttpError {
        if e.is_timeout() {
            HttpError::Timeout {
                timeout_s: self.settings.timeout.as_secs_f64(),
                attempts,
            }
        } else {
            // Walk the source chain: reqwest's top-level text is often just
            // "error sending request".
            let mut message = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                message.push_str(": ");
                message.push_str(&s.to_string());
                source = s.source();
            }
            // Plain words first: the chain alone reads "error sending request ... client
            // error (Connect)", which does not say what to do.
            if message.to_ascii_lowercase().contains("connection refused") {
                message = format!(
                    "connection refused: is the server at {} still running? ({message})",
                    origin(url)
                );
            }
            HttpError::Connection {
                message: redact(&message, secrets),
                attempts,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_parsed_once_and_a_bad_one_is_left_to_reqwest() {
        let cache = UrlCache::default();
        let url = "http://127.0.0.1:8080/v1/chat/completions?x=1";
        let first = cache.get(url).unwrap();
        assert_eq!(first.as_str(), url);
        assert_eq!(cache.get(url).unwrap(), first);
        assert_eq!(cache.0.lock().unwrap().len(), 1);
        assert!(cache.get("not a url").is_none());
        // Past the limit, URLs are still parsed, only not kept.
        for i in 0..2 * UrlCache::MAX {
            let u = format!("http://localhost/{i}");
            assert_eq!(cache.get(&u).unwrap().as_str(), u);
        }
        assert_eq!(cache.0.lock().unwrap().len(), UrlCache::MAX);
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        h.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(30)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        h.insert("retry-after", HeaderValue::from_str(&earlier).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn google_retry_info_in_the_body() {
        let body = br#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"}]}}"#;
        assert_eq!(retry_delay_in_body(body), Some(Duration::from_secs(27)));
        assert_eq!(retry_delay_in_body(b"{\"error\": {}}"), None);
        assert_eq!(retry_delay_in_body(b"not json"), None);
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for s in [408, 429, 500, 502, 503, 504, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422, 501] {
            assert!(!retryable_status(s), "{s}");
        }
    }

    #[test]
    fn secrets_are_scrubbed() {
        let key = "sk-test-0123456789abcdef";
        assert_eq!(
            redact(&format!("Incorrect API key provided: {key}."), &[key]),
            "Incorrect API key provided: [REDACTED]."
        );
        // Short strings are not treated as secrets (they would scrub ordinary words).
        assert_eq!(redact("a b c", &["b"]), "a b c");
    }

    /// A raw TCP server for faults an HTTP mock can not produce: each connection gets
    /// the next scripted behaviour (`None`: drop the connection at once).
    fn raw_server(script: Vec<Option<&'static str>>) -> (String, std::thread::JoinHandle<usize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/x", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut served = 0;
            for reply in script {
                let (mut conn, _) = listener.accept().unwrap();
                served += 1;
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                if let Some(r) = reply {
                    let _ = conn.write_all(r.as_bytes());
                }
                // Dropping the connection closes it (a reset or a truncated body).
            }
            served
        });
        (url, handle)
    }

    /// Few attempts and short backoff; the timeout is far above any answer of these
    /// servers (which reply or drop at once), so counts never depend on machine speed.
    fn fast() -> Http {
        Http::new(HttpSettings {
            timeout: Duration::from_secs(30),
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
        })
        .unwrap()
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 12\r\nconnection: close\r\n\r\n{\"ok\": true}";
    const TRUNCATED: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\nconnection: close\r\n\r\n{\"choices\": [";

    #[tokio::test]
    async fn a_dropped_connection_is_retried_then_succeeds() {
        let (url, server) = raw_server(vec![None, Some(OK)]);
        let reply = fast()
            .post_json(&url, &[], &Value::Null, &[])
            .await
            .unwrap();
        assert_eq!(reply.body, serde_json::json!({"ok": true}));
        assert_eq!(reply.attempts, 2);
        assert_eq!(server.join().unwrap(), 2);
    }

    #[tokio::test]
    async fn a_truncated_body_is_retried_and_then_reported() {
        let (url, server) = raw_server(vec![Some(TRUNCATED), Some(TRUNCATED)]);
        let e = fast()
            .post_json(&url, &[], &Value::Null, &[])
            .await
            .unwrap_err();
        assert!(
            matches!(e, HttpError::Connection { attempts: 2, .. }),
            "{e:?}"
        );
        assert_eq!(server.join().unwrap(), 2);
    }

    /// An answer that keeps the connection open (no `Connection: close`).
    const KEPT: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n{\"ok\": true}";

    #[tokio::test]
    async fn a_pooled_connection_the_server_closed_is_resent_at_once_outside_the_budget() {
        use std::io::{Read, Write};
        // Connection 1 answers one request and keeps the connection open, then closes it
        // when the second request arrives, unanswered: what a client sees when it reuses
        // a connection the moment before the server's FIN arrives. Connection 2 answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/x", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let (mut first, _) = listener.accept().unwrap();
            let _ = first.read(&mut buf);
            first.write_all(KEPT.as_bytes()).unwrap();
            let n = first.read(&mut buf).unwrap();
            drop(first);
            let (mut second, _) = listener.accept().unwrap();
            let _ = second.read(&mut buf);
            second.write_all(OK.as_bytes()).unwrap();
            n
        });
        // One attempt allowed: the resend must not need the retry budget.
        let http = Http::new(HttpSettings {
            timeout: Duration::from_secs(30),
            max_attempts: 1,
            base_delay: Duration::from_secs(3600),
            max_delay: Duration::from_secs(3600),
        })
        .unwrap();
        let first = http.post_json(&url, &[], &Value::Null, &[]).await.unwrap();
        assert_eq!(first.attempts, 1);
        // A backoff would sleep an hour: a minute means the resend did not wait.
        let second = tokio::time::timeout(
            Duration::from_secs(60),
            http.post_json(&url, &[], &Value::Null, &[]),
        )
        .await
        .expect("the resend waited for a backoff")
        .unwrap();
        assert_eq!(second.body, serde_json::json!({"ok": true}));
        assert_eq!(second.attempts, 2);
        // The second request did reach the first connection before it was closed.
        assert!(server.join().unwrap() > 0);
    }

    #[tokio::test]
    async fn a_server_that_closes_after_each_reply_stops_the_pooling() {
        use std::io::{Read, Write};
        // Each connection answers one request, then closes when the next one arrives
        // unanswered: every reuse of a pooled connection is a stale one. Returns how
        // many stale reuses it saw.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/x", listener.local_addr().unwrap());
        listener.set_nonblocking(false).unwrap();
        let server = std::thread::spawn(move || {
            let mut stale = 0;
            let mut answered = 0;
            while answered < 100 {
                let (mut conn, _) = listener.accept().unwrap();
                // A client that keeps the connection without reusing it must not hang
                // the test: the read gives up after a while.
                conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = [0u8; 4096];
                if conn.read(&mut buf).unwrap_or(0) == 0 {
                    continue;
                }
                conn.write_all(KEPT.as_bytes()).unwrap();
                answered += 1;
                if conn.read(&mut buf).unwrap_or(0) > 0 {
                    stale += 1;
                }
            }
            stale
        });
        let http = fast();
        for _ in 0..100 {
            let reply = http.post_json(&url, &[], &Value::Null, &[]).await.unwrap();
            assert_eq!(reply.body, serde_json::json!({"ok": true}));
            // A stale reuse is resent once, on a new connection, never a second time.
            assert!(reply.attempts <= 2, "{} attempts", reply.attempts);
        }
        // Three stale reuses (requests 2, 3 and 4), then a new connection per request
        // for good: 100 answers on 103 connections. (Once 3 stale reuses were under 5%
        // of the requests, the client used to go back to its pool and lose more.)
        assert!(http.pool_given_up());
        assert_eq!(server.join().unwrap(), 3);
    }

    #[tokio::test]
    async fn a_server_that_drops_every_connection_gets_one_resend_then_the_budget() {
        let (url, server) = raw_server(vec![None, None, None]);
        let e = fast()
            .post_json(&url, &[], &Value::Null, &[])
            .await
            .unwrap_err();
        // 2 attempts allowed, plus the one immediate resend.
        assert!(
            matches!(e, HttpError::Connection { attempts: 3, .. }),
            "{e:?}"
        );
        assert_eq!(server.join().unwrap(), 3);
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connection_error() {
        // A socket bound to the port that never listens, held to the end: every
        // connection is refused, and no other process can take the port meanwhile (as it
        // could one bound and dropped).
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(([127, 0, 0, 1], 0).into()).unwrap();
        let port = socket.local_addr().unwrap().port();
        let e = fast()
            .post_json(
                &format!("http://127.0.0.1:{port}/v1"),
                &[],
                &Value::Null,
                &[],
            )
            .await
            .unwrap_err();
        assert!(
            matches!(e, HttpError::Connection { attempts: 2, .. }),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "connection failed after 2 attempt(s): connection refused: is the server at http://127.0.0.1:{port} still running? (error sending request"
            )),
            "{e}"
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let http = Http::new(HttpSettings {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            ..HttpSettings::default()
        })
        .unwrap();
        for _ in 0..50 {
            let d1 = http.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = http.backoff(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            assert!(http.backoff(10) <= Duration::from_millis(500));
        }
    }
}
