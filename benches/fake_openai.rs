//! Live-run bench: `toolgauge run --live` against a local fake OpenAI-compatible server
//! that answers every chat completion after a fixed delay, to see how close the runner
//! gets to the latency floor (trials × delay / concurrency) and how much memory it takes.
//!
//! The server is wiremock (already a dev-dependency: hyper 1 on a thread of its own), with
//! a responder that notes when each request arrives and answers `POST
//! /v1/chat/completions` after `--delay-ms` (50) with the recorded OpenAI body of
//! `src/provider/testdata/openai/chat_single_tool_call_recorded.json` (one tool call,
//! usage included), its call turned into a `get_weather` call. Clients see about 52 ms:
//! tokio's millisecond timer rounds the delay up, plus the round trip; the server check
//! below shows what that costs (its "lean" ratio).
//!
//! Steps: generate a suite (the 15 tools of `benches/data/tools.yaml`, `--cases` cases
//! from `benches/common`, variants vague and clear, tool_choice auto and required, 2
//! repeats: 250 cases give 2,000 trials); check the server at each concurrency with two
//! in-process clients (a lean reqwest client posting one fixed body: what the server and
//! HTTP allow; and toolgauge's own OpenAI provider without scoring or journal); then
//! time `target/release/toolgauge run SUITE --target openai-compatible:fake@URL --live
//! -j N --quiet --out DIR` under `/usr/bin/time -v`, `--runs` times per concurrency
//! (interleaved), check that every trial was written and reached the server, and print
//! the medians.
//!
//! Goal: at `-j 64`, wall time at most 1.15 × the floor and peak RSS under 100 MB.
//!
//! ```sh
//! cargo bench --bench fake_openai                        # -j 8, 64, 256; 3 runs each
//! cargo bench --bench fake_openai -- -j 64 --runs 5
//! cargo bench --bench fake_openai -- --serve             # only serve; print the URL
//! ```
//!
//! Options (after `--`): `-j`/`--concurrency LIST` (8,64,256), `--runs N` (3), `--cases N`
//! (250), `--delay-ms N` (50), `--no-probe`, `--keep` (keep the temporary directory),
//! `--serve`. Environment: `TOOLGAUGE` (binary to time instead of the one cargo built),
//! `TIME_BIN` (`/usr/bin/time`). Exit status 1 when a run fails or the goal is missed.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use toolgauge::provider::config::ProviderConfig;
use toolgauge::provider::http::{Http, HttpSettings, install_crypto};
use toolgauge::provider::openai::OpenAiProvider;
use toolgauge::provider::registry::{LiveSettings, live_provider};
use toolgauge::provider::{Target, ToolChoice};
use toolgauge::runner::Plan;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The concurrency the goal is set for.
const GOAL_CONCURRENCY: usize = 64;
/// Highest wall time over the floor at [`GOAL_CONCURRENCY`].
const GOAL_RATIO: f64 = 1.15;
/// Peak resident memory limit in MB at [`GOAL_CONCURRENCY`].
const GOAL_RSS_MB: f64 = 100.0;

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

struct Options {
    concurrency: Vec<usize>,
    runs: usize,
    cases: usize,
    delay: Duration,
    probe: bool,
    keep: bool,
    serve: bool,
}

fn usage_exit(message: &str) -> ! {
    eprintln!("error: {message}");
    eprintln!(
        "usage: cargo bench --bench fake_openai -- [-j 8,64,256] [--runs 3] [--cases 250] [--delay-ms 50] [--no-probe] [--keep] [--serve]"
    );
    std::process::exit(2);
}

fn parse_args() -> Options {
    let mut o = Options {
        concurrency: vec![8, 64, 256],
        runs: 3,
        cases: 250,
        delay: Duration::from_millis(50),
        probe: true,
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
            "-j" | "--concurrency" => {
                let v = value(&a);
                o.concurrency = v.split(',').map(|n| number(&a, n.to_string())).collect();
            }
            // --runs 0 only checks the server.
            "--runs" => {
                o.runs = value(&a)
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--runs takes a number"))
            }
            "--cases" => o.cases = number(&a, value(&a)),
            "--delay-ms" => o.delay = Duration::from_millis(number(&a, value(&a)) as u64),
            "--no-probe" => o.probe = false,
            "--keep" => o.keep = true,
            "--serve" => o.serve = true,
            other => usage_exit(&format!("unknown argument `{other}`")),
        }
    }
    o
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
    rss_mb: f64,
    cpu: f64,
    /// Process start to the first request at the server.
    startup: f64,
    /// First request to the last answer (last arrival + delay).
    serving: f64,
    /// Last answer to process exit.
    teardown: f64,
    /// Share of the wall time some task on the machine waited for a CPU (PSI), in %.
    stall: f64,
}

/// Microseconds some task has waited for a CPU since boot (`/proc/pressure/cpu`).
fn cpu_stall_us() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/pressure/cpu").ok()?;
    let some = text.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

fn time_field<'a>(report: &'a str, label: &str) -> Option<&'a str> {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(label)?.trim().strip_prefix(':'))
        .map(str::trim)
}

#[allow(clippy::too_many_arguments)]
fn run_cli(
    bin: &Path,
    time_bin: &Path,
    suite: &Path,
    target: &str,
    dir: &Path,
    name: &str,
    concurrency: usize,
    trials: usize,
    server: &Server,
    delay: Duration,
) -> Result<Run, String> {
    let out = dir.join(name);
    let time_file = dir.join(format!("{name}.time"));
    let log = dir.join(format!("{name}.log"));
    server.reset();
    let stall_before = cpu_stall_us();
    let started = Instant::now();
    let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let status = Command::new(time_bin)
        .arg("-v")
        .arg("-o")
        .arg(&time_file)
        .arg(bin)
        .arg("run")
        .arg(suite)
        .args(["--target", target, "--live", "-j", &concurrency.to_string()])
        .args(["--quiet", "--no-color", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .status()
        .map_err(|e| format!("could not start {}: {e}", time_bin.display()))?;
    let wall = started.elapsed().as_secs_f64();
    let stall = match (stall_before, cpu_stall_us()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6 / wall * 100.0,
        _ => f64::NAN,
    };
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    // 0: thresholds met, 1: a threshold failed; anything else: the run did not complete.
    if !matches!(status.code(), Some(0 | 1)) {
        return Err(format!(
            "{name}: toolgauge exited with {status}:\n{log_text}"
        ));
    }
    let journal = std::fs::read_to_string(out.join("trials.jsonl")).map_err(|e| e.to_string())?;
    let written = journal.lines().count();
    let errors = journal
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .map_or(true, |t| t["verdict"] != "pass" && t["verdict"] != "fail")
        })
        .count();
    let arrivals = server.reset();
    if written != trials || errors > 0 || arrivals.len() != trials {
        return Err(format!(
            "{name}: {written} trials written of {trials}, {errors} errors, {} requests at the server:\n{log_text}",
            arrivals.len()
        ));
    }
    let report = std::fs::read_to_string(&time_file).map_err(|e| e.to_string())?;
    let number = |label: &str| -> Result<f64, String> {
        time_field(&report, label)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no `{label}` in {}", time_file.display()))
    };
    let rss_mb = number("Maximum resident set size (kbytes)")? / 1024.0;
    let cpu = number("User time (seconds)")? + number("System time (seconds)")?;
    let first = arrivals.iter().min().copied().unwrap_or(started);
    let last = arrivals.iter().max().copied().unwrap_or(started) + delay;
    let startup = (first - started).as_secs_f64();
    let serving = (last - first).as_secs_f64();
    Ok(Run {
        wall,
        rss_mb,
        cpu,
        startup,
        serving,
        teardown: (wall - startup - serving).max(0.0),
        stall,
    })
}

fn main() {
    let o = parse_args();
    let server = Server::start(o.delay);
    let target = target_spec(&server.base_url);
    if o.serve {
        println!("fake OpenAI-compatible server: {}", server.base_url);
        println!("target: {target}   (Ctrl-C stops it)");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    let bin = std::env::var_os("TOOLGAUGE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_toolgauge")));
    let time_bin =
        PathBuf::from(std::env::var_os("TIME_BIN").unwrap_or_else(|| "/usr/bin/time".into()));
    if !time_bin.is_file() {
        eprintln!(
            "error: {} is missing (GNU time reports peak memory; Debian package `time`)",
            time_bin.display()
        );
        std::process::exit(2);
    }
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
    let suite_text = suite_yaml(o.cases, &target);
    let suite_path = dir.join("live-bench.yaml");
    std::fs::write(&suite_path, &suite_text).expect("write the suite");
    let plan = plan_for(&suite_text, &target);
    let trials = plan.trials().len();
    let delay_s = o.delay.as_secs_f64();
    println!(
        "live bench: {} cases × 2 variants × 2 tool_choice × 2 repeats = {trials} trials, server {} answering after {} ms",
        o.cases,
        server.base_url,
        o.delay.as_millis()
    );
    println!("binary: {}", bin.display());

    // What the server and the HTTP stack allow at each concurrency (NaN: not checked).
    let mut lean = vec![f64::NAN; o.concurrency.len()];
    if o.probe {
        println!("server check (clients in this process, 20 requests per slot):");
        for (k, &j) in o.concurrency.iter().enumerate() {
            lean[k] = probe(&plan, &target, j, o.delay, Client::Lean);
            probe(&plan, &target, j, o.delay, Client::Provider);
        }
        server.reset();
    }

    let mut results: Vec<Vec<Run>> = o.concurrency.iter().map(|_| Vec::new()).collect();
    let mut failed = false;
    // Interleaved, so a slow spell on the shared machine does not hit one setting only.
    for r in 1..=o.runs {
        for (k, &j) in o.concurrency.iter().enumerate() {
            let name = format!("run-j{j}-{r}");
            match run_cli(
                &bin,
                &time_bin,
                &suite_path,
                &target,
                &dir,
                &name,
                j,
                trials,
                &server,
                o.delay,
            ) {
                Ok(run) => {
                    let floor = trials as f64 * delay_s / j as f64;
                    println!(
                        "run {r} -j {j:>3}: wall {:.3} s = {:.3} × floor, peak RSS {:.1} MB, cpu {:.2} s; startup {:.3} s, serving {:.3} s, teardown {:.3} s; cpu stall {:.0}%",
                        run.wall,
                        run.wall / floor,
                        run.rss_mb,
                        run.cpu,
                        run.startup,
                        run.serving,
                        run.teardown,
                        run.stall
                    );
                    results[k].push(run);
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    failed = true;
                }
            }
        }
    }

    println!();
    println!(
        "median of {} run(s); floor = {trials} × {} ms / concurrency; goal at -j {GOAL_CONCURRENCY}: ratio ≤ {GOAL_RATIO}, peak RSS < {GOAL_RSS_MB} MB",
        o.runs,
        o.delay.as_millis()
    );
    println!(
        "(lean: the ratio of the lean client of the server check; cpu: user + sys of toolgauge; startup: to the first request at the server; serving: first request to last answer; eff.j: requests in flight on average meanwhile; teardown: last answer to exit; stall: PSI share of the wall time some task on the machine waited for a CPU)"
    );
    println!(
        "{:>4} {:>6} {:>7} {:>7} {:>6} {:>5} {:>7} {:>6} {:>7} {:>7} {:>6} {:>8} {:>6}  goal",
        "-j",
        "trials",
        "wall s",
        "floor s",
        "ratio",
        "lean",
        "RSS MB",
        "cpu s",
        "startup",
        "serving",
        "eff.j",
        "teardown",
        "stall"
    );
    for (k, &j) in o.concurrency.iter().enumerate() {
        let runs = &results[k];
        if runs.is_empty() {
            println!("{j:>4} (no successful run)");
            continue;
        }
        let m = |f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let floor = trials as f64 * delay_s / j as f64;
        let wall = m(|r| r.wall);
        let ratio = wall / floor;
        let rss = m(|r| r.rss_mb);
        let serving = m(|r| r.serving);
        // Requests in flight on average while serving (j when the runner keeps up).
        let effective = trials as f64 * delay_s / serving;
        let goal = if j == GOAL_CONCURRENCY {
            let ok = ratio <= GOAL_RATIO && rss < GOAL_RSS_MB;
            failed |= !ok;
            if ok { "met" } else { "MISSED" }
        } else {
            "-"
        };
        println!(
            "{j:>4} {trials:>6} {wall:>7.3} {floor:>7.3} {ratio:>6.2} {:>5} {rss:>7.1} {:>6.2} {:>7.3} {serving:>7.3} {effective:>6.1} {:>8.3} {:>5.0}%  {goal}",
            if lean[k].is_nan() {
                "-".to_string()
            } else {
                format!("{:.2}", lean[k])
            },
            m(|r| r.cpu),
            m(|r| r.startup),
            m(|r| r.teardown),
            m(|r| r.stall)
        );
    }
    drop(server);
    drop(tmp);
    if failed {
        std::process::exit(1);
    }
}
