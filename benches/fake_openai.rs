//! Live-run bench: `toolgauge run --live` against local fake OpenAI-compatible servers
//! that answer every chat completion after a fixed delay, side by side with bare clients
//! sending the same requests to the same server in the same run, to see how much
//! toolgauge adds per request over what the server and the network allow.
//!
//! Server kinds (`--server`, all three by default):
//! - `wiremock`: hyper 1 (wiremock, already a dev-dependency) on a thread of its own; keeps
//!   connections alive and writes each answer in one send.
//! - `close`: Python's `http.server` (`benches/fake_openai_server.py`): HTTP/1.1, the
//!   headers and then the body in two writes with Nagle's algorithm on, and the connection
//!   closed after each reply without a `Connection: close` header.
//! - `keepalive`: the same Python server keeping connections alive (still two writes).
//! - `onesend` (not in the default set): the `close` server writing headers and body in
//!   one send.
//!
//! Each answers `POST /v1/chat/completions` after `--delay-ms` (50) with the recorded
//! OpenAI body of `src/provider/testdata/openai/chat_single_tool_call_recorded.json` (one
//! tool call, usage included), its call turned into a `get_weather` call.
//!
//! For each server kind and each concurrency the bench generates a suite (the 15 tools of
//! `benches/data/tools.yaml`, cases from `benches/common`, variants vague and clear,
//! tool_choice auto and required, 2 repeats: 8 trials a case; 5 cases at -j 1, 25 × j / 8
//! above, so -j 16 sends 400 requests and -j 64 1,600) and times, `--runs` times
//! (interleaved, medians reported):
//! - `bare`: a lean Rust client in this process (tokio, hand-written HTTP/1.1, each
//!   request in one write; a new connection per request for `close`/`onesend`, one
//!   connection per slot otherwise) posting the bodies toolgauge sends, with the same
//!   concurrency: what the server and the kernel allow;
//! - `python`: for the Python servers, a bare `http.client` loop
//!   (`benches/fake_openai_client.py`, threads, one connection per request, or kept
//!   alive for `keepalive`);
//! - `toolgauge`: `target/release/toolgauge run SUITE --target
//!   openai-compatible:fake@URL --live -j N --quiet --out DIR`, the whole process (start,
//!   suite load, every trial scored and written, reports, exit) and its CPU time (from
//!   `wait4`); every trial must be written and must have reached the server exactly once.
//!
//! Beside the walls, the table gives the mean time of one request as the bare Rust client
//! and toolgauge saw it (toolgauge's `latency_ms` of each trial, from sending the request to
//! the parsed answer) and both clients' CPU time: equal request times with a longer wall put
//! toolgauge's difference outside the requests (start, suite, reports, exit); longer ones
//! mean the server answered it more slowly, as a server sharing the cores with a busier
//! client does.
//!
//! Goal: toolgauge's wall ≤ 1.10 × the fastest bare client's at every concurrency on every
//! server kind (exit status 1 otherwise, or when a run fails). The last lines are a
//! Markdown table (the README's; `benches/live_overhead.sh` reruns it).
//!
//! ```sh
//! cargo bench --bench fake_openai                        # 3 kinds × -j 1,16,64; 5 runs
//! cargo bench --bench fake_openai -- --server close -j 16 --runs 5
//! cargo bench --bench fake_openai -- --serve --server close   # only serve; print the URL
//! ```
//!
//! Options (after `--`): `--server LIST` (wiremock,close,keepalive), `-j`/`--concurrency
//! LIST` (1,16,64), `--runs N` (5; 0 only checks the servers), `--cases N` (cases at every
//! concurrency instead of the default), `--delay-ms N` (50), `--probe` (also time the
//! in-process lean reqwest client and toolgauge's provider without the CLI), `--no-probe`
//! (the default), `--keep` (keep the temporary directory), `--serve`. Environment:
//! `TOOLGAUGE` (binary to time instead of the one cargo built), `PYTHON` (python3).

mod common;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgauge::provider::config::ProviderConfig;
use toolgauge::provider::http::{Http, HttpSettings, install_crypto};
use toolgauge::provider::openai::OpenAiProvider;
use toolgauge::provider::registry::{LiveSettings, live_provider};
use toolgauge::provider::{Target, ToolChoice};
use toolgauge::runner::Plan;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Highest toolgauge wall over the fastest bare client's, at every concurrency and kind.
const GOAL_RATIO: f64 = 1.10;

/// A chat.completion recorded from OpenAI by the official Python SDK's tests (one tool
/// call, usage included).
const RECORDED: &str =
    include_str!("../src/provider/testdata/openai/chat_single_tool_call_recorded.json");

/// The answer to every request: [`RECORDED`] with its call turned into a valid
/// `get_weather` call of the bench suite.
fn answer_body() -> String {
    let mut body: serde_json::Value = serde_json::from_str(RECORDED).expect("recorded JSON");
    let function = body
        .pointer_mut("/choices/0/message/tool_calls/0/function")
        .expect("the recorded body has a tool call");
    *function = serde_json::json!({
        "name": "get_weather",
        "arguments": r#"{"city":"Paris","date":"2025-03-04"}"#,
    });
    body.to_string()
}

/// A fake server's kind: how it writes answers and handles connections.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Wiremock,
    Close,
    KeepAlive,
    OneSend,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Wiremock, Kind::Close, Kind::KeepAlive, Kind::OneSend];

    fn name(self) -> &'static str {
        match self {
            Kind::Wiremock => "wiremock",
            Kind::Close => "close",
            Kind::KeepAlive => "keepalive",
            Kind::OneSend => "onesend",
        }
    }

    /// What the README table says about the server.
    fn describe(self) -> &'static str {
        match self {
            Kind::Wiremock => "hyper (wiremock), keep-alive, one write",
            Kind::Close => "Python http.server, headers and body in two writes, closes",
            Kind::KeepAlive => "Python http.server, two writes, keep-alive",
            Kind::OneSend => "Python http.server, one write, closes",
        }
    }

    /// The `--mode` of `fake_openai_server.py`; `None` for wiremock.
    fn python_mode(self) -> Option<&'static str> {
        match self {
            Kind::Wiremock => None,
            Kind::Close => Some("close"),
            Kind::KeepAlive => Some("keepalive"),
            Kind::OneSend => Some("onesend"),
        }
    }

    /// Whether the server keeps connections open for the next request.
    fn keeps_alive(self) -> bool {
        matches!(self, Kind::Wiremock | Kind::KeepAlive)
    }
}

struct Options {
    kinds: Vec<Kind>,
    concurrency: Vec<usize>,
    runs: usize,
    cases: Option<usize>,
    delay: Duration,
    probe: bool,
    keep: bool,
    serve: bool,
}

fn usage_exit(message: &str) -> ! {
    eprintln!("error: {message}");
    eprintln!(
        "usage: cargo bench --bench fake_openai -- [--server wiremock,close,keepalive,onesend] [-j 1,16,64] [--runs 5] [--cases N] [--delay-ms 50] [--probe | --no-probe] [--keep] [--serve]"
    );
    std::process::exit(2);
}

fn parse_args() -> Options {
    let mut o = Options {
        kinds: vec![Kind::Wiremock, Kind::Close, Kind::KeepAlive],
        concurrency: vec![1, 16, 64],
        runs: 5,
        cases: None,
        delay: Duration::from_millis(50),
        probe: false,
        keep: false,
        serve: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage_exit(&format!("{name} needs a value")))
        };
        let number = |name: &str, v: String| -> usize {
            v.parse()
                .ok()
                .filter(|n| *n > 0)
                .unwrap_or_else(|| usage_exit(&format!("{name} takes a positive number")))
        };
        match a.as_str() {
            // `cargo bench` passes --bench to every harness = false target.
            "--bench" => {}
            "--server" => {
                let v = value(&a);
                o.kinds = v
                    .split(',')
                    .map(|name| {
                        Kind::ALL
                            .into_iter()
                            .find(|k| k.name() == name.trim())
                            .unwrap_or_else(|| {
                                usage_exit(&format!(
                                    "unknown server kind `{name}` (wiremock, close, keepalive, onesend)"
                                ))
                            })
                    })
                    .collect();
            }
            "-j" | "--concurrency" => {
                let v = value(&a);
                o.concurrency = v.split(',').map(|n| number(&a, n.to_string())).collect();
            }
            // --runs 0 only checks the servers.
            "--runs" => {
                o.runs = value(&a)
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--runs takes a number"))
            }
            "--cases" => o.cases = Some(number(&a, value(&a))),
            "--delay-ms" => o.delay = Duration::from_millis(number(&a, value(&a)) as u64),
            "--probe" => o.probe = true,
            "--no-probe" => o.probe = false,
            "--keep" => o.keep = true,
            "--serve" => o.serve = true,
            other => usage_exit(&format!("unknown argument `{other}`")),
        }
    }
    o
}

/// Cases at concurrency `j`: 8 trials a case, 40 trials at -j 1 (a short run), 25
/// requests per slot above.
fn cases_for(j: usize, o: &Options) -> usize {
    o.cases.unwrap_or_else(|| (25 * j).div_ceil(8).max(5))
}

/// Answers every request with [`answer_body`] after the delay, noting when it arrived.
struct Responder {
    template: ResponseTemplate,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Respond for Responder {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.arrivals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Instant::now());
        self.template.clone()
    }
}

/// The fake server: wiremock answering from a thread of its own until dropped.
struct Server {
    /// Sets the mock up (and resets it between runs).
    runtime: tokio::runtime::Runtime,
    server: MockServer,
    template: ResponseTemplate,
    arrivals: Arc<Mutex<Vec<Instant>>>,
    base_url: String,
}

impl Server {
    fn start(delay: Duration) -> Server {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let server = runtime.block_on(async {
            // A deep accept backlog: at -j 256 the client opens 256 connections at once.
            let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
            socket
                .bind("127.0.0.1:0".parse().expect("an address"))
                .expect("bind 127.0.0.1");
            let listener = socket.listen(4096).expect("listen");
            MockServer::builder()
                .listener(listener.into_std().expect("a std listener"))
                .disable_request_recording()
                .start()
                .await
        });
        let server = Server {
            base_url: format!("{}/v1", server.uri()),
            runtime,
            server,
            template: ResponseTemplate::new(200)
                .set_body_raw(answer_body(), "application/json")
                .set_delay(delay),
            arrivals: Arc::new(Mutex::new(Vec::with_capacity(8192))),
        };
        server.mount();
        server
    }

    fn mount(&self) {
        let mock = Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Responder {
                template: self.template.clone(),
                arrivals: self.arrivals.clone(),
            });
        self.runtime.block_on(mock.mount(&self.server));
    }

    /// Forget the requests so far (wiremock keeps a copy of every matched request even
    /// with recording disabled) and return their arrival times.
    fn reset(&self) -> Vec<Instant> {
        self.runtime.block_on(self.server.reset());
        self.mount();
        std::mem::take(&mut *self.arrivals.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The Python interpreter for the Python server and client.
fn python() -> PathBuf {
    PathBuf::from(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()))
}

/// A script of this directory.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(name)
}

/// `fake_openai_server.py` in a child process, killed when dropped.
struct PythonServer {
    child: Child,
    base_url: String,
}

impl PythonServer {
    fn start(mode: &str, delay: Duration, body: &Path) -> PythonServer {
        let mut child = Command::new(python())
            .arg(script("fake_openai_server.py"))
            .args(["--mode", mode, "--delay-ms"])
            .arg(delay.as_millis().to_string())
            .arg("--body")
            .arg(body)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                eprintln!(
                    "error: could not start {} (python3 is needed): {e}",
                    python().display()
                );
                std::process::exit(2);
            });
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the server's first line");
        let Some(base_url) = line.trim().strip_prefix("listening ") else {
            let _ = child.kill();
            eprintln!("error: fake_openai_server.py --mode {mode} did not start: `{line}`");
            std::process::exit(2);
        };
        PythonServer {
            base_url: base_url.to_string(),
            child,
        }
    }

    /// Chat requests served since the last call (`GET /count`, which resets it).
    fn take_count(&self) -> usize {
        let addr = self
            .base_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        let mut conn = std::net::TcpStream::connect(addr).expect("connect to the Python server");
        conn.write_all(b"GET /count HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n")
            .expect("ask for the count");
        let mut text = String::new();
        conn.read_to_string(&mut text).expect("read the count");
        text.split("\r\n\r\n")
            .nth(1)
            .and_then(|b| b.trim().parse().ok())
            .unwrap_or_else(|| panic!("bad /count answer: {text}"))
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One running fake server of any kind.
enum Fake {
    Wiremock(Box<Server>),
    Python(PythonServer),
}

impl Fake {
    fn start(kind: Kind, delay: Duration, body: &Path) -> Fake {
        match kind.python_mode() {
            None => Fake::Wiremock(Box::new(Server::start(delay))),
            Some(mode) => Fake::Python(PythonServer::start(mode, delay, body)),
        }
    }

    fn base_url(&self) -> &str {
        match self {
            Fake::Wiremock(s) => &s.base_url,
            Fake::Python(s) => &s.base_url,
        }
    }

    /// Requests that reached the server since the last call.
    fn take_count(&self) -> usize {
        match self {
            Fake::Wiremock(s) => s.reset().len(),
            Fake::Python(s) => s.take_count(),
        }
    }
}

fn target_spec(base_url: &str) -> String {
    format!("openai-compatible:fake@{base_url}")
}

/// The bench suite: the shared generator's cases with this bench's matrix.
fn suite_yaml(cases: usize, target: &str) -> String {
    let full = common::suite_yaml(cases);
    let at = full
        .find("\nmatrix:\n")
        .expect("the generated suite has a matrix")
        + 1;
    let mut s = full[..at].to_string();
    writeln!(s, "matrix:\n  targets: [{}]", serde_json::json!(target)).unwrap();
    s.push_str("  variants: [vague, clear]\n  tool_choice: [auto, required]\n  repeats: 2\n");
    s
}

fn plan_for(suite_text: &str, target: &str) -> Plan {
    let suite = toolgauge::suite::load_str(suite_text, Path::new("live-bench.yaml"))
        .unwrap_or_else(|e| panic!("generated suite does not load:\n{e}"));
    let target = Target::parse(target).expect("target");
    Plan::new(
        Arc::new(suite),
        std::slice::from_ref(&target),
        &["vague".to_string(), "clear".to_string()],
        &[ToolChoice::Auto, ToolChoice::Required],
        2,
    )
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The bare Rust client's requests: each a complete HTTP/1.1 request (head and body in
/// one buffer, so one write), and where to send them.
struct BareRequests {
    addr: String,
    requests: Vec<Vec<u8>>,
}

impl BareRequests {
    fn new(base_url: &str, bodies: &[Vec<u8>]) -> BareRequests {
        let url = reqwest::Url::parse(base_url).expect("a base URL");
        let addr = format!(
            "{}:{}",
            url.host_str().unwrap_or("127.0.0.1"),
            url.port_or_known_default().unwrap_or(80)
        );
        let path = format!("{}/chat/completions", url.path().trim_end_matches('/'));
        let requests = bodies
            .iter()
            .map(|body| {
                let mut r = format!(
                    "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                r.extend_from_slice(body);
                r
            })
            .collect();
        BareRequests { addr, requests }
    }
}

/// Read one HTTP/1.1 answer with a `content-length` body; true when the server asked to
/// close the connection.
async fn read_answer(conn: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Result<bool, String> {
    buf.clear();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if conn.read_buf(buf).await.map_err(|e| e.to_string())? == 0 {
            return Err("connection closed before the answer".into());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    if !head.starts_with("http/1.1 200") && !head.starts_with("http/1.0 200") {
        return Err(format!(
            "not a 200: {}",
            head.lines().next().unwrap_or_default()
        ));
    }
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
            .map(str::to_string)
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .ok_or("no content-length")?;
    while buf.len() < head_end + length {
        if conn.read_buf(buf).await.map_err(|e| e.to_string())? == 0 {
            return Err("connection closed inside the body".into());
        }
    }
    Ok(header("connection").is_some_and(|v| v == "close"))
}

/// What one run of the bare Rust client took.
struct BareRun {
    wall: f64,
    /// Mean time of one request, connect (where one is made) to the last byte of the
    /// answer, in ms.
    request_ms: f64,
    /// CPU time (user and system) of the thread that ran it, in seconds.
    cpu: f64,
}

/// CPU time (user and system) the calling thread has used, in seconds.
fn thread_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return f64::NAN;
    }
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Send `count` of `requests` (cycling) with `concurrency` in flight, on a
/// current-thread runtime like toolgauge's.
fn bare_run(
    requests: &BareRequests,
    count: usize,
    concurrency: usize,
    keep_alive: bool,
) -> Result<BareRun, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let next = AtomicUsize::new(0);
    let request_us = AtomicUsize::new(0);
    // The runtime runs every task on this thread, so its CPU time is the client's.
    let cpu_before = thread_cpu();
    runtime.block_on(async {
        let started = Instant::now();
        let slot = || async {
            let mut conn: Option<tokio::net::TcpStream> = None;
            let mut buf = Vec::with_capacity(4096);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), String>(());
                }
                let request = &requests.requests[i % requests.requests.len()];
                let sent = Instant::now();
                let mut c = match conn.take() {
                    Some(c) => c,
                    None => {
                        let c = tokio::net::TcpStream::connect(&requests.addr)
                            .await
                            .map_err(|e| e.to_string())?;
                        c.set_nodelay(true).map_err(|e| e.to_string())?;
                        c
                    }
                };
                c.write_all(request).await.map_err(|e| e.to_string())?;
                let close = read_answer(&mut c, &mut buf).await?;
                request_us.fetch_add(sent.elapsed().as_micros() as usize, Ordering::Relaxed);
                if keep_alive && !close {
                    conn = Some(c);
                }
            }
        };
        let slots: Vec<_> = (0..concurrency).map(|_| slot()).collect();
        for r in futures::future::join_all(slots).await {
            r?;
        }
        Ok(BareRun {
            wall: started.elapsed().as_secs_f64(),
            request_ms: request_us.load(Ordering::Relaxed) as f64 / count.max(1) as f64 / 1000.0,
            cpu: thread_cpu() - cpu_before,
        })
    })
}

/// The bare Python client: `fake_openai_client.py` (wall measured inside it, interpreter
/// start excluded).
fn python_run(
    base_url: &str,
    body: &Path,
    count: usize,
    concurrency: usize,
    keep_alive: bool,
) -> Result<f64, String> {
    let out = Command::new(python())
        .arg(script("fake_openai_client.py"))
        .arg(base_url)
        .arg(body)
        .arg(count.to_string())
        .arg(concurrency.to_string())
        .args(keep_alive.then_some("keepalive"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not start {}: {e}", python().display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.split_whitespace();
    let wall: f64 = fields.next().and_then(|w| w.parse().ok()).ok_or_else(|| {
        format!(
            "python client: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    match fields.next() {
        Some("0") => Ok(wall),
        other => Err(format!("python client: {} errors", other.unwrap_or("?"))),
    }
}

/// How the server check sends its requests.
#[derive(Clone, Copy)]
enum Client {
    /// reqwest posting one pre-serialised request body, on a 2-thread runtime: what the
    /// server and the HTTP stack allow.
    Lean,
    /// toolgauge's OpenAI provider (request body built per trial, response parsed) on a
    /// current-thread runtime like the CLI's, without scoring, journal or reports.
    Provider,
}

/// Send `concurrency × 20` of the plan's requests at `concurrency`, print the wall time
/// over the floor and the latency percentiles the client saw, and return the ratio.
fn probe(plan: &Plan, target: &str, concurrency: usize, delay: Duration, client: Client) -> f64 {
    let requests = concurrency * 20;
    let runtime = match client {
        Client::Lean => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
        Client::Provider => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .expect("a tokio runtime");
    let target = Target::parse(target).expect("target");
    let provider = live_provider(&target, &LiveSettings::default()).expect("the provider");
    let trials = plan.trials();
    let (first, _) = plan.request(trials[0]);
    let lean_body = OpenAiProvider::new(
        ProviderConfig::new(
            "openai-compatible",
            "fake",
            target.base_url.as_deref().unwrap_or_default(),
        ),
        Http::new(HttpSettings::default()).expect("an HTTP client"),
    )
    .build_body(&first)
    .map(|b| serde_json::to_vec(&b).expect("JSON"))
    .expect("a request body");
    let url = format!(
        "{}/chat/completions",
        target.base_url.as_deref().unwrap_or_default()
    );
    install_crypto();
    let lean = reqwest::Client::new();
    let (wall, mut latencies, errors) = runtime.block_on(async {
        let started = Instant::now();
        let (provider, lean, lean_body, url) = (&provider, &lean, &lean_body, &url);
        let results: Vec<Result<f64, String>> =
            futures::stream::iter((0..requests).map(|i| trials[i % trials.len()]))
                .map(|t| async move {
                    match client {
                        Client::Lean => {
                            let sent = Instant::now();
                            let response = lean
                                .post(url)
                                .header("content-type", "application/json")
                                .body(lean_body.clone())
                                .send()
                                .await
                                .map_err(|e| e.to_string())?;
                            let ok = response.status().is_success();
                            let body = response.bytes().await.map_err(|e| e.to_string())?;
                            if !ok || body.is_empty() {
                                return Err("bad answer".to_string());
                            }
                            Ok(sent.elapsed().as_secs_f64() * 1000.0)
                        }
                        Client::Provider => {
                            let (request, key) = plan.request(t);
                            provider
                                .complete(&request, &key)
                                .await
                                .map(|r| r.latency_ms)
                                .map_err(|e| e.to_string())
                        }
                    }
                })
                .buffer_unordered(concurrency)
                .collect()
                .await;
        let wall = started.elapsed();
        let errors = results.iter().filter(|r| r.is_err()).count();
        let latencies: Vec<f64> = results.into_iter().filter_map(Result::ok).collect();
        (wall, latencies, errors)
    });
    latencies.sort_by(f64::total_cmp);
    let floor = requests as f64 * delay.as_secs_f64() / concurrency as f64;
    let name = match client {
        Client::Lean => "lean client",
        Client::Provider => "provider path",
    };
    println!(
        "  -j {concurrency:>3}, {name:<13}: {requests:>5} requests in {:.3} s = {:.3} × floor {floor:.3} s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms{}",
        wall.as_secs_f64(),
        wall.as_secs_f64() / floor,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(f64::NAN),
        if errors > 0 {
            format!("; {errors} ERRORS")
        } else {
            String::new()
        }
    );
    wall.as_secs_f64() / floor
}

/// One timed run of the CLI.
struct Run {
    wall: f64,
    cpu: f64,
    /// Mean `latency_ms` of the trials (from sending the request to the parsed answer), in ms.
    request_ms: f64,
}

/// Wait for `child` and return its resource use (`wait4`: the CPU time of this child
/// alone, without a timing tool). Its `ru_maxrss` is not used: Linux carries the peak
/// RSS of the forking process (this bench, holding every request body) across `exec`.
fn wait_with_rusage(child: Child) -> Result<(i32, libc::rusage), String> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; both pointers are valid for writes.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    // The child is reaped: `Child` must not wait for it again (dropping it does not).
    drop(child);
    if r != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Ok((code, usage))
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

#[allow(clippy::too_many_arguments)]
fn run_cli(
    bin: &Path,
    suite: &Path,
    target: &str,
    dir: &Path,
    name: &str,
    concurrency: usize,
    trials: usize,
    server: &Fake,
) -> Result<Run, String> {
    let out = dir.join(name);
    let log = dir.join(format!("{name}.log"));
    server.take_count();
    let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let child = Command::new(bin)
        .arg("run")
        .arg(suite)
        .args(["--target", target, "--live", "-j", &concurrency.to_string()])
        .args(["--quiet", "--no-color", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", bin.display()))?;
    let (code, usage) = wait_with_rusage(child)?;
    let wall = started.elapsed().as_secs_f64();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    // 0: thresholds met, 1: a threshold failed; anything else: the run did not complete.
    if !matches!(code, 0 | 1) {
        return Err(format!("{name}: toolgauge exited with {code}:\n{log_text}"));
    }
    let journal = std::fs::read_to_string(out.join("trials.jsonl")).map_err(|e| e.to_string())?;
    let written = journal.lines().count();
    // Each trial once: a line that does not parse counts as an error.
    let trials_read: Vec<Option<serde_json::Value>> = journal
        .lines()
        .map(|l| serde_json::from_str(l).ok())
        .collect();
    let retried = trials_read
        .iter()
        .filter(|t| {
            t.as_ref()
                .is_none_or(|t| t["verdict"] != "pass" && t["verdict"] != "fail")
        })
        .count();
    let latencies: Vec<f64> = trials_read
        .iter()
        .flatten()
        .filter_map(|t| t["response"]["latency_ms"].as_f64())
        .collect();
    let request_ms = latencies.iter().sum::<f64>() / latencies.len().max(1) as f64;
    let arrived = server.take_count();
    if written != trials || retried > 0 || arrived != trials {
        return Err(format!(
            "{name}: {written} trials written of {trials}, {retried} errors, {arrived} requests at the server:\n{log_text}"
        ));
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(Run {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        request_ms,
    })
}

/// Everything one (server kind, concurrency) cell needs.
struct Cell {
    kind: usize,
    j: usize,
    trials: usize,
    target: String,
    suite_path: PathBuf,
    plan: Plan,
    bare: BareRequests,
    body_path: PathBuf,
    bare_walls: Vec<f64>,
    bare_request_ms: Vec<f64>,
    bare_cpu: Vec<f64>,
    python_walls: Vec<f64>,
    runs: Vec<Run>,
}

/// The request bodies toolgauge sends for `plan`'s trials, in plan order.
fn bodies(plan: &Plan, target: &Target) -> Vec<Vec<u8>> {
    let provider = OpenAiProvider::new(
        ProviderConfig::new(
            "openai-compatible",
            "fake",
            target.base_url.as_deref().unwrap_or_default(),
        ),
        Http::new(HttpSettings::default()).expect("an HTTP client"),
    );
    plan.trials()
        .into_iter()
        .map(|t| {
            let body = provider
                .build_body(&plan.request(t).0)
                .expect("a request body");
            serde_json::to_vec(&body).expect("JSON")
        })
        .collect()
}

fn main() {
    let o = parse_args();
    install_crypto();
    let tmp = tempfile::Builder::new()
        .prefix("toolgauge-live.")
        .tempdir()
        .expect("a temporary directory");
    // Held until the end: removing the directory (process::exit skips destructors).
    let (tmp, dir) = if o.keep {
        let p = tmp.keep();
        eprintln!("keeping {}", p.display());
        (None, p)
    } else {
        let p = tmp.path().to_path_buf();
        (Some(tmp), p)
    };
    let answer_path = dir.join("answer.json");
    std::fs::write(&answer_path, answer_body()).expect("write the answer");
    let servers: Vec<Fake> = o
        .kinds
        .iter()
        .map(|&k| Fake::start(k, o.delay, &answer_path))
        .collect();
    if o.serve {
        for (k, s) in o.kinds.iter().zip(&servers) {
            println!(
                "fake OpenAI-compatible server ({}): {}",
                k.describe(),
                s.base_url()
            );
            println!("target: {}", target_spec(s.base_url()));
        }
        println!("(Ctrl-C stops them)");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    let bin = std::env::var_os("TOOLGAUGE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_toolgauge")));
    println!("binary: {}", bin.display());
    println!(
        "servers answer after {} ms; 8 trials a case; runs interleaved",
        o.delay.as_millis()
    );
    let mut cells = Vec::new();
    for (k, server) in servers.iter().enumerate() {
        for &j in &o.concurrency {
            let target = target_spec(server.base_url());
            let cases = cases_for(j, &o);
            let suite_text = suite_yaml(cases, &target);
            let suite_path = dir.join(format!("suite-{}-j{j}.yaml", o.kinds[k].name()));
            std::fs::write(&suite_path, &suite_text).expect("write the suite");
            let plan = plan_for(&suite_text, &target);
            let bodies = bodies(&plan, &Target::parse(&target).expect("target"));
            let body_path = dir.join(format!("body-{}-j{j}.json", o.kinds[k].name()));
            std::fs::write(&body_path, &bodies[0]).expect("write a body");
            cells.push(Cell {
                kind: k,
                j,
                trials: bodies.len(),
                bare: BareRequests::new(server.base_url(), &bodies),
                target,
                suite_path,
                plan,
                body_path,
                bare_walls: Vec::new(),
                bare_request_ms: Vec::new(),
                bare_cpu: Vec::new(),
                python_walls: Vec::new(),
                runs: Vec::new(),
            });
        }
    }

    if o.probe {
        println!("in-process check (20 requests per slot):");
        for c in &cells {
            println!(" {}", o.kinds[c.kind].name());
            probe(&c.plan, &c.target, c.j, o.delay, Client::Lean);
            probe(&c.plan, &c.target, c.j, o.delay, Client::Provider);
        }
        for s in &servers {
            s.take_count();
        }
    }

    let mut failed = false;
    // Interleaved, so a slow spell on the shared machine does not hit one cell only.
    for r in 1..=o.runs {
        for c in &mut cells {
            let kind = o.kinds[c.kind];
            let server = &servers[c.kind];
            let mut line = format!("run {r} {:<9} -j {:>3}:", kind.name(), c.j);
            server.take_count();
            match bare_run(&c.bare, c.trials, c.j, kind.keeps_alive()) {
                Ok(b) if server.take_count() == c.trials => {
                    write!(
                        line,
                        " bare {:.3} s (request {:.1} ms, cpu {:.2} s)",
                        b.wall, b.request_ms, b.cpu
                    )
                    .unwrap();
                    c.bare_walls.push(b.wall);
                    c.bare_request_ms.push(b.request_ms);
                    c.bare_cpu.push(b.cpu);
                }
                Ok(_) => {
                    eprintln!("error: the bare client's requests did not all reach the server");
                    failed = true;
                }
                Err(e) => {
                    eprintln!("error: bare client: {e}");
                    failed = true;
                }
            }
            if kind.python_mode().is_some() {
                match python_run(
                    server.base_url(),
                    &c.body_path,
                    c.trials,
                    c.j,
                    kind.keeps_alive(),
                ) {
                    Ok(w) if server.take_count() == c.trials => {
                        write!(line, ", python {w:.3} s").unwrap();
                        c.python_walls.push(w);
                    }
                    Ok(_) => {
                        eprintln!(
                            "error: the python client's requests did not all reach the server"
                        );
                        failed = true;
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        failed = true;
                    }
                }
            }
            let name = format!("run-{}-j{}-{r}", kind.name(), c.j);
            match run_cli(
                &bin,
                &c.suite_path,
                &c.target,
                &dir,
                &name,
                c.j,
                c.trials,
                server,
            ) {
                Ok(run) => {
                    write!(
                        line,
                        ", toolgauge {:.3} s (request {:.1} ms, cpu {:.2} s)",
                        run.wall, run.request_ms, run.cpu
                    )
                    .unwrap();
                    c.runs.push(run);
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    failed = true;
                }
            }
            println!("{line}");
        }
    }

    println!();
    println!(
        "median of {} run(s); answer delay {} ms; floor = requests × delay / concurrency; ratio = toolgauge / the fastest bare client (goal ≤ {GOAL_RATIO})",
        o.runs,
        o.delay.as_millis()
    );
    let mut table = String::new();
    writeln!(
        table,
        "| server | -j | requests | floor s | bare Rust s | bare Python s | toolgauge s | toolgauge / fastest bare | toolgauge / bare Python | request ms, bare Rust / toolgauge | cpu s, bare Rust / toolgauge | goal |"
    )
    .unwrap();
    writeln!(table, "|---|---|---|---|---|---|---|---|---|---|---|---|").unwrap();
    let cell_text = |v: f64| {
        if v.is_nan() {
            "-".to_string()
        } else {
            format!("{v:.3}")
        }
    };
    for c in &cells {
        let kind = o.kinds[c.kind];
        let bare = median(&c.bare_walls);
        let py = median(&c.python_walls);
        let wall = median(&c.runs.iter().map(|r| r.wall).collect::<Vec<_>>());
        let cpu = median(&c.runs.iter().map(|r| r.cpu).collect::<Vec<_>>());
        // Mean time of one request as each client saw it: equal times with a wider wall
        // put toolgauge's difference outside the requests (start, suite, reports, exit).
        let request_ms = format!(
            "{:.1} / {:.1}",
            median(&c.bare_request_ms),
            median(&c.runs.iter().map(|r| r.request_ms).collect::<Vec<_>>())
        );
        // f64::min skips NaN: the faster of the clients that ran.
        let reference = bare.min(py);
        let ratio = wall / reference;
        // Next to the goal's ratio, the one against the reference the issue started from
        // (a bare Python client), for the servers it runs against.
        let ratio_py = if py.is_nan() {
            "-".to_string()
        } else {
            format!("{:.2}", wall / py)
        };
        let ok = ratio <= GOAL_RATIO;
        failed |= !ok;
        let floor = c.trials as f64 * o.delay.as_secs_f64() / c.j as f64;
        writeln!(
            table,
            "| {} | {} | {} | {floor:.2} | {} | {} | {} | {ratio:.2} | {ratio_py} | {request_ms} | {:.2} / {cpu:.2} | {} |",
            kind.name(),
            c.j,
            c.trials,
            cell_text(bare),
            cell_text(py),
            cell_text(wall),
            median(&c.bare_cpu),
            if ok { "met" } else { "MISSED" }
        )
        .unwrap();
    }
    print!("{table}");
    println!();
    for k in &o.kinds {
        println!("{}: {}", k.name(), k.describe());
    }
    drop(servers);
    drop(tmp);
    if failed {
        std::process::exit(1);
    }
}
