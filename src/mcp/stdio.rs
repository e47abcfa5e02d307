//! The stdio transport: a spawned server process speaking newline-delimited JSON-RPC.
//!
//! Three tasks serve one process: a writer that owns its stdin (so the reader can answer
//! the server's own requests without ever waiting on a pipe a request is writing to), a
//! supervisor that owns the child and its stdout (routes responses to the pending
//! requests by id, notices the exit), and a drain for stderr (logged, never parsed).

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::jsonrpc::{self, Incoming};
use super::transport::{Direction, Outgoing, Transport};
use super::{ExchangeLog, InputPolicy, McpError, ServerSpec};

/// How long a server gets to exit by itself once its stdin is closed (the MCP stdio
/// shutdown: closing the input stream is the polite request to stop).
const STDIN_GRACE: Duration = Duration::from_secs(2);
/// How long it gets after SIGTERM (a server that ignores stdin EOF usually handles it).
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the exit after SIGKILL before giving up on it (never hang).
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long, once the process exited or closed stdout, to wait for the other of the two
/// and for the end of stderr, so the error names the exit status and the last stderr
/// lines. Only a grandchild holding the pipes open makes this wait its whole length.
const LINGER: Duration = Duration::from_secs(1);
/// The longest stdout line read (a 10,000-tool page is a few megabytes); a longer one
/// fails the pending requests instead of growing without bound.
const MAX_LINE: usize = 64 << 20;
/// The longest stderr line kept (the rest of the line is dropped).
const MAX_STDERR_LINE: usize = 16 << 10;
/// How many stderr lines an error quotes.
const STDERR_TAIL: usize = 5;
/// How long one quoted stderr line may be.
const STDERR_TAIL_CHARS: usize = 300;

/// A server process and its pipes.
pub struct StdioTransport {
    log: ExchangeLog,
    shared: Arc<Shared>,
    writer: mpsc::UnboundedSender<WriteCmd>,
    signals: mpsc::UnboundedSender<Signal>,
    exit: watch::Receiver<Option<String>>,
    tasks: Vec<JoinHandle<()>>,
    closing: Arc<AtomicBool>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport")
            .field("server", &self.shared.server)
            .field("alive", &self.alive())
            .finish()
    }
}

/// A request waiting for its response.
struct Pending {
    method: String,
    tx: oneshot::Sender<Result<Value, McpError>>,
}

/// What the tasks and the requests share.
struct Shared {
    /// The server as the user wrote it (every error names it).
    server: String,
    log: ExchangeLog,
    state: Mutex<State>,
    stderr_tail: Mutex<VecDeque<String>>,
    writer: mpsc::UnboundedSender<WriteCmd>,
    closing: Arc<AtomicBool>,
    /// How the server's own requests are answered (see [`Transport::set_input_policy`]).
    policy: Mutex<InputPolicy>,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, Pending>,
    /// Why the server is gone (set once; later requests fail with it at once).
    dead: Option<String>,
}

enum WriteCmd {
    /// One message (without its newline); `key` names the pending request it carries.
    Line { text: String, key: Option<String> },
    /// Close stdin.
    Close,
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

impl StdioTransport {
    /// Spawn `program args` in `dir` (`None`: the current directory); stderr is drained
    /// into the log.
    pub async fn spawn(
        spec: &ServerSpec,
        program: &str,
        args: &[String],
        dir: Option<&Path>,
        log: ExchangeLog,
    ) -> Result<StdioTransport, McpError> {
        let server = spec.to_string();
        let (resolved, dir) = match dir {
            Some(d) => {
                let d = std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
                if !d.is_dir() {
                    return Err(McpError::Connect {
                        server,
                        why: format!(
                            "cannot start `{program}` in `{}`: no such directory (a suite's server starts in the suite's directory)",
                            d.display()
                        ),
                    });
                }
                // A relative program path is the suite's, made absolute here: which
                // directory a child resolves it against is not defined once it starts
                // elsewhere. A bare name is looked up on PATH, as always.
                let resolved = if Path::new(program).components().count() > 1
                    && Path::new(program).is_relative()
                {
                    d.join(program).into_os_string()
                } else {
                    program.into()
                };
                (resolved, Some(d))
            }
            None => (program.into(), None),
        };
        let in_dir = dir
            .as_ref()
            .map(|d| {
                format!(
                    " (relative to `{}`, the suite's directory, where the server starts)",
                    d.display()
                )
            })
            .unwrap_or_default();
        let mut command = Command::new(&resolved);
        if let Some(d) = &dir {
            command.current_dir(d);
        }
        let mut child = command
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            // A transport dropped without `close` (a panic, an aborted run) still ends
            // its server rather than leaving it running.
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| McpError::Connect {
                server: server.clone(),
                why: match e.kind() {
                    std::io::ErrorKind::NotFound => format!(
                        "cannot start `{program}`{in_dir}: no such program; is it installed and on PATH (or give its full path)?"
                    ),
                    std::io::ErrorKind::PermissionDenied => {
                        format!("cannot start `{program}`: permission denied; is it executable?")
                    }
                    _ => format!("cannot start `{program}`: {e}"),
                },
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(McpError::Connect {
                server,
                why: "its pipes could not be opened".into(),
            });
        };
        log.push(
            Direction::Note,
            format!(
                "spawned {server} (pid {})",
                child.id().map_or_else(|| "?".into(), |p| p.to_string())
            ),
        );
        let (writer, write_rx) = mpsc::unbounded_channel();
        let (signals, signal_rx) = mpsc::unbounded_channel();
        let (exit_tx, exit) = watch::channel(None);
        let (stderr_done_tx, stderr_done) = watch::channel(false);
        let closing = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            server,
            log: log.clone(),
            state: Mutex::new(State::default()),
            stderr_tail: Mutex::new(VecDeque::new()),
            writer: writer.clone(),
            closing: closing.clone(),
            policy: Mutex::new(InputPolicy::Refuse),
        });
        let tasks = vec![
            tokio::spawn(write_loop(stdin, write_rx, shared.clone(), exit.clone())),
            tokio::spawn(drain_stderr(stderr, shared.clone(), stderr_done_tx)),
            tokio::spawn(supervise(
                child,
                stdout,
                signal_rx,
                shared.clone(),
                exit_tx,
                stderr_done,
            )),
        ];
        Ok(StdioTransport {
            log,
            shared,
            writer,
            signals,
            exit,
            tasks,
            closing,
        })
    }

    /// Wait up to `bound` for the process to exit; whether it did.
    async fn wait_exit(&self, bound: Duration) -> bool {
        let mut exit = self.exit.clone();
        // `Ok` also when the supervisor is gone: there is nothing left to wait for.
        tokio::time::timeout(bound, exit.wait_for(Option::is_some))
            .await
            .is_ok()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Aborting the supervisor drops the child, and `kill_on_drop` ends it.
        for t in &self.tasks {
            t.abort();
        }
    }
}

#[async_trait]
impl Transport for StdioTransport {
    async fn request(&self, out: &Outgoing, timeout: Duration) -> Result<Value, McpError> {
        let shared = &self.shared;
        let method = out.method.clone();
        let Some(id) = out.body.get("id").filter(|id| !id.is_null()) else {
            return Err(McpError::Malformed {
                server: shared.server.clone(),
                method,
                why: "toolgauge built a request without an `id` (a bug in toolgauge)".into(),
            });
        };
        let key = jsonrpc::id_key(id);
        let text = out.body.to_string();
        let (tx, rx) = oneshot::channel();
        {
            let mut state = shared.lock();
            if let Some(why) = &state.dead {
                return Err(McpError::Closed {
                    server: shared.server.clone(),
                    method,
                    why: why.clone(),
                });
            }
            state.pending.insert(
                key.clone(),
                Pending {
                    method: method.clone(),
                    tx,
                },
            );
        }
        self.log.push(Direction::Sent, text.clone());
        if self
            .writer
            .send(WriteCmd::Line {
                text,
                key: Some(key.clone()),
            })
            .is_err()
        {
            shared.lock().pending.remove(&key);
            return Err(McpError::Closed {
                server: shared.server.clone(),
                method,
                why: "its stdin is already closed (the client was shut down)".into(),
            });
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(McpError::Closed {
                server: shared.server.clone(),
                method,
                why: shared
                    .lock()
                    .dead
                    .clone()
                    .unwrap_or_else(|| "the transport stopped".into()),
            }),
            Err(_) => {
                shared.lock().pending.remove(&key);
                Err(McpError::Timeout {
                    server: shared.server.clone(),
                    method,
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                })
            }
        }
    }

    async fn notify(&self, out: &Outgoing) -> Result<(), McpError> {
        if let Some(why) = &self.shared.lock().dead {
            return Err(McpError::Closed {
                server: self.shared.server.clone(),
                method: out.method.clone(),
                why: why.clone(),
            });
        }
        let text = out.body.to_string();
        self.log.push(Direction::Sent, text.clone());
        self.writer
            .send(WriteCmd::Line { text, key: None })
            .map_err(|_| McpError::Closed {
                server: self.shared.server.clone(),
                method: out.method.clone(),
                why: "its stdin is already closed (the client was shut down)".into(),
            })
    }

    fn set_protocol(&self, _version: &str, _modern: bool) {}

    fn set_input_policy(&self, policy: &InputPolicy) {
        *self.shared.policy.lock().unwrap_or_else(|p| p.into_inner()) = policy.clone();
    }

    fn alive(&self) -> bool {
        self.exit.borrow().is_none() && self.shared.lock().dead.is_none()
    }

    async fn close(&self) {
        if self.closing.swap(true, Ordering::SeqCst) {
            // A second close waits for the first one's outcome, no more signals.
            self.wait_exit(STDIN_GRACE + TERM_GRACE + KILL_GRACE).await;
            return;
        }
        // 1. Close stdin: the spec's polite shutdown; most servers exit on EOF.
        let _ = self.writer.send(WriteCmd::Close);
        if self.wait_exit(STDIN_GRACE).await {
            return;
        }
        // 2. SIGTERM: a server that ignores EOF (or is busy) gets to clean up.
        self.log.push(
            Direction::Note,
            format!(
                "still running {} ms after stdin closed: sending SIGTERM",
                STDIN_GRACE.as_millis()
            ),
        );
        let _ = self.signals.send(Signal::Term);
        if self.wait_exit(TERM_GRACE).await {
            return;
        }
        // 3. SIGKILL: it cannot be ignored; after it we stop waiting either way.
        self.log.push(
            Direction::Note,
            format!(
                "still running {} ms after SIGTERM: sending SIGKILL",
                TERM_GRACE.as_millis()
            ),
        );
        let _ = self.signals.send(Signal::Kill);
        if !self.wait_exit(KILL_GRACE).await {
            self.log.push(
                Direction::Note,
                "still not reaped after SIGKILL: giving up on it",
            );
        }
    }

    fn log(&self) -> &ExchangeLog {
        &self.log
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fail every pending request with the error `make` builds for its method.
    fn fail_pending(&self, make: impl Fn(String) -> McpError) {
        let pending: Vec<Pending> = self.lock().pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let _ = p.tx.send(Err(make(p.method)));
        }
    }

    /// The server is gone: fail everything pending and everything later with `why`.
    fn die(&self, why: String) {
        let pending: Vec<Pending> = {
            let mut state = self.lock();
            if state.dead.is_none() {
                state.dead = Some(why.clone());
            }
            state.pending.drain().map(|(_, p)| p).collect()
        };
        for p in pending {
            let _ = p.tx.send(Err(McpError::Closed {
                server: self.server.clone(),
                method: p.method,
                why: why.clone(),
            }));
        }
    }

    fn malformed(&self, why: String) {
        let server = self.server.clone();
        self.fail_pending(|method| McpError::Malformed {
            server: server.clone(),
            method,
            why: why.clone(),
        });
    }

    /// One line from stdout.
    fn on_line(&self, line: Result<Vec<u8>, Vec<u8>>) {
        let bytes = match line {
            Ok(b) => b,
            Err(start) => {
                let text = String::from_utf8_lossy(&start);
                self.log.push(
                    Direction::Received,
                    format!(
                        "{}… (line cut: longer than {MAX_LINE} bytes)",
                        jsonrpc::excerpt(&text, 2000)
                    ),
                );
                self.malformed(format!(
                    "a stdout line is longer than {} MiB, starting `{}`",
                    MAX_LINE >> 20,
                    jsonrpc::excerpt(&text, 200)
                ));
                return;
            }
        };
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        self.log.push(Direction::Received, text.to_string());
        match serde_json::from_slice::<Value>(bytes) {
            Err(e) => self.malformed(format!(
                "a stdout line is not JSON ({e}): `{}`; an MCP server must write only JSON-RPC messages to stdout (logs belong on stderr)",
                jsonrpc::excerpt(text.trim(), 200)
            )),
            // JSON-RPC batches (allowed by 2025-03-26): each element is a message.
            Ok(Value::Array(items)) if !items.is_empty() => {
                for item in &items {
                    self.on_message(item);
                }
            }
            Ok(v) => self.on_message(&v),
        }
    }

    fn on_message(&self, v: &Value) {
        match jsonrpc::classify(v) {
            Incoming::Response { id } if id.is_null() => {
                // The server could not tell which request it answers (a parse error on
                // its side): every pending request gets it, none would get another.
                let pending: Vec<Pending> = self.lock().pending.drain().map(|(_, p)| p).collect();
                for p in pending {
                    let _ = p.tx.send(Ok(v.clone()));
                }
            }
            Incoming::Response { id } => {
                let found = {
                    let mut state = self.lock();
                    match state.pending.remove(&jsonrpc::id_key(id)) {
                        Some(p) => Some(p),
                        // A sloppy server that turns the numeric id into a string (or
                        // back) still answers that request; toolgauge's ids are numbers.
                        None => jsonrpc::loose_id_key(id).and_then(|k| state.pending.remove(&k)),
                    }
                };
                match found {
                    Some(p) => {
                        let _ = p.tx.send(Ok(v.clone()));
                    }
                    None => self.log.push(
                        Direction::Note,
                        format!("a response to no pending request (id {id}; timed out?): ignored"),
                    ),
                }
            }
            Incoming::Request { .. } => {
                // Answered like over HTTP: `ping` keeps the session alive, elicitations
                // go by the input policy (the capability `initialize` declared), the
                // rest (sampling, roots: not offered) get "method not found".
                let policy = self
                    .policy
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                let reply = super::input::answer_server_request(v, &policy);
                let text = reply.to_string();
                self.log.push(Direction::Sent, text.clone());
                let _ = self.writer.send(WriteCmd::Line { text, key: None });
            }
            Incoming::Notification { .. } => {} // logged as received; nothing to do
            Incoming::Invalid => self.malformed(format!(
                "a stdout line is JSON but not a JSON-RPC message: `{}`",
                jsonrpc::excerpt(&v.to_string(), 200)
            )),
        }
    }

    /// The last stderr lines, quoted for an error message.
    fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        if tail.is_empty() {
            return "it wrote nothing to stderr".into();
        }
        let lines: Vec<String> = tail.iter().map(|l| format!("`{l}`")).collect();
        format!("its last stderr lines: {}", lines.join(" | "))
    }
}

/// Owns stdin: writes each message as one line, in order.
async fn write_loop(
    mut stdin: ChildStdin,
    mut rx: mpsc::UnboundedReceiver<WriteCmd>,
    shared: Arc<Shared>,
    mut exit: watch::Receiver<Option<String>>,
) {
    let mut broken: Option<String> = None;
    while let Some(cmd) = rx.recv().await {
        let (mut text, key) = match cmd {
            WriteCmd::Line { text, key } => (text, key),
            WriteCmd::Close => break,
        };
        if broken.is_none() {
            text.push('\n');
            let written = async {
                stdin.write_all(text.as_bytes()).await?;
                stdin.flush().await
            }
            .await;
            if let Err(e) = written {
                broken = Some(e.to_string());
            }
        }
        if let (Some(e), Some(key)) = (&broken, key) {
            // The process stopped reading: most likely it is exiting, and then the
            // supervisor fails this request saying why (exit status, stderr). Only a
            // process that closed stdin and lives on gets the write error instead.
            let exited = tokio::time::timeout(LINGER * 2, exit.wait_for(Option::is_some))
                .await
                .is_ok();
            let found = if exited {
                None
            } else {
                shared.lock().pending.remove(&key)
            };
            if let Some(p) = found {
                let _ = p.tx.send(Err(McpError::Closed {
                    server: shared.server.clone(),
                    method: p.method,
                    why: format!("it closed its stdin and stopped reading ({e})"),
                }));
            }
        }
    }
    // Dropping stdin closes the pipe: the server reads EOF.
    drop(stdin);
}

/// Drains stderr into the log and keeps its last lines for error messages.
async fn drain_stderr(
    stderr: tokio::process::ChildStderr,
    shared: Arc<Shared>,
    done: watch::Sender<bool>,
) {
    let mut reader = LineReader::new(BufReader::new(stderr), MAX_STDERR_LINE);
    while let Ok(Some(line)) = reader.next_line().await {
        let (bytes, cut) = match line {
            Ok(b) => (b, false),
            Err(b) => (b, true),
        };
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if cut {
            text.push_str("… (line cut)");
        }
        shared.log.push(Direction::Stderr, text.clone());
        if !text.trim().is_empty() {
            let mut tail = shared.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(jsonrpc::excerpt(text.trim_end(), STDERR_TAIL_CHARS));
        }
    }
    let _ = done.send(true);
}

/// Owns the child and its stdout: routes what arrives, notices the end, and sends the
/// signals `close` asks for (only here, where the child is known not to be reaped yet,
/// so a signal can never reach a recycled pid).
async fn supervise(
    mut child: Child,
    stdout: ChildStdout,
    mut signals: mpsc::UnboundedReceiver<Signal>,
    shared: Arc<Shared>,
    exit_tx: watch::Sender<Option<String>>,
    mut stderr_done: watch::Receiver<bool>,
) {
    let mut reader = LineReader::new(BufReader::new(stdout), MAX_LINE);
    let mut stdout_open = true;
    let mut stdout_error: Option<String> = None;
    let mut status: Option<String> = None;
    let mut stderr_open = true;
    let mut finalize_at: Option<Instant> = None;
    let mut finalized = false;
    let mut signals_open = true;
    loop {
        tokio::select! {
            line = reader.next_line(), if stdout_open => match line {
                Ok(Some(line)) => shared.on_line(line),
                Ok(None) => stdout_open = false,
                Err(e) => {
                    stdout_error = Some(e.to_string());
                    stdout_open = false;
                }
            },
            st = child.wait(), if status.is_none() => {
                let text = match st {
                    Ok(st) => describe_exit(st),
                    Err(e) => format!("could not be waited for ({e})"),
                };
                shared.log.push(Direction::Note, format!("the server process {text}"));
                status = Some(text.clone());
                let _ = exit_tx.send(Some(text));
            },
            sig = signals.recv(), if signals_open => match sig {
                Some(sig) if status.is_none() => send_signal(&mut child, sig),
                Some(_) => {}
                None => signals_open = false,
            },
            changed = stderr_done.changed(), if stderr_open => {
                if changed.is_err() || *stderr_done.borrow() {
                    stderr_open = false;
                }
            },
            _ = sleep_until_opt(finalize_at), if finalize_at.is_some() && !finalized => {
                finalize_at = None;
                finalized = true;
                shared.die(death_reason(&shared, status.as_deref(), stdout_open, stdout_error.as_deref()));
            },
        }
        if (!stdout_open || status.is_some()) && finalize_at.is_none() && !finalized {
            finalize_at = Some(Instant::now() + LINGER);
        }
        if !finalized && !stdout_open && status.is_some() && !stderr_open {
            finalized = true;
            shared.die(death_reason(
                &shared,
                status.as_deref(),
                stdout_open,
                stdout_error.as_deref(),
            ));
        }
        if finalized && status.is_some() {
            break;
        }
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn send_signal(child: &mut Child, sig: Signal) {
    match sig {
        // Elsewhere than unix there is no SIGTERM: the last step (kill) comes early.
        #[cfg(not(unix))]
        Signal::Term => {
            let _ = child.start_kill();
        }
        #[cfg(unix)]
        Signal::Term => {
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: kill(2) with a pid we spawned and have not reaped (the
                // supervisor owns the child and only signals before seeing its exit), so
                // the pid cannot belong to another process. tokio has no SIGTERM of its
                // own (`start_kill` is SIGKILL), hence libc.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
        }
        Signal::Kill => {
            let _ = child.start_kill();
        }
    }
}

fn describe_exit(st: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&st);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    match (st.code(), signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => format!("ended ({st})"),
    }
}

fn death_reason(
    shared: &Shared,
    status: Option<&str>,
    stdout_open: bool,
    stdout_error: Option<&str>,
) -> String {
    let what = match (status, stdout_open) {
        (Some(st), _) => format!("the server process {st}"),
        (None, false) => match stdout_error {
            Some(e) => format!("reading its stdout failed ({e})"),
            None => "the server process closed its stdout".into(),
        },
        (None, true) => "the server process ended".into(),
    };
    let after = if shared.closing.load(Ordering::SeqCst) {
        " after toolgauge closed it"
    } else {
        ""
    };
    format!("{what}{after}; {}", shared.stderr_tail())
}

/// Newline-delimited lines with a length bound: `Ok(line)` without its `\n`, or
/// `Err(start)` for a line longer than the bound (its first bytes; the rest is skipped).
struct LineReader<R> {
    inner: R,
    max: usize,
    cur: Vec<u8>,
    over: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    fn new(inner: R, max: usize) -> LineReader<R> {
        LineReader {
            inner,
            max,
            cur: Vec::new(),
            over: false,
        }
    }

    /// The next line; `None` at the end. A last line without `\n` still counts.
    /// Cancel-safe: a partly read line stays in `cur` for the next call.
    async fn next_line(&mut self) -> std::io::Result<Option<Result<Vec<u8>, Vec<u8>>>> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if self.cur.is_empty() && !self.over {
                    return Ok(None);
                }
                return Ok(Some(self.take()));
            }
            let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = self.max.saturating_sub(self.cur.len());
            if chunk.len() > room {
                self.over = true;
            }
            let keep = chunk.len().min(room);
            self.cur.extend_from_slice(&chunk[..keep]);
            self.inner.consume(used);
            if done {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> Result<Vec<u8>, Vec<u8>> {
        let line = std::mem::take(&mut self.cur);
        if std::mem::take(&mut self.over) {
            Err(line)
        } else {
            Ok(line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut r = LineReader::new(BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(
                l.map(|b| String::from_utf8(b).unwrap())
                    .map_err(|b| String::from_utf8(b).unwrap()),
            );
        }
        out
    }

    #[tokio::test]
    async fn lines_split_on_newlines_and_keep_a_last_partial_line() {
        assert_eq!(
            lines(b"ab\n\ncdefgh\nij", 100).await,
            vec![
                Ok("ab".into()),
                Ok("".into()),
                Ok("cdefgh".into()),
                Ok("ij".into())
            ]
        );
        assert!(lines(b"", 100).await.is_empty());
    }

    #[tokio::test]
    async fn an_overlong_line_is_cut_and_the_next_one_read_whole() {
        assert_eq!(
            lines(b"0123456789\nok\n", 4).await,
            vec![Err("0123".into()), Ok("ok".into())]
        );
    }
}
