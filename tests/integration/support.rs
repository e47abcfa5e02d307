//! Test support: [`Toolgauge`] runs the binary in a scratch directory and returns its
//! exit code and output; [`RunDir`] reads the files of a run directory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Exit codes, as documented in `src/exit.rs`.
pub const OK: i32 = 0;
/// A threshold failed.
pub const THRESHOLD_FAILED: i32 = 1;
/// Bad input.
pub const BAD_INPUT: i32 = 2;
/// The run could not complete.
pub const RUN_INCOMPLETE: i32 = 3;

/// How long any single invocation may take before the test fails (a debug binary on a
/// busy 2-core CI machine; real runs here take well under a second).
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// Whether this run asked for the tests that need real peers (`cargo test --
/// --include-ignored`, as `.ci/run` does): a missing peer is then a failure, not a skip.
pub fn peers_requested() -> bool {
    std::env::args().any(|a| a == "--include-ignored" || a == "--ignored")
}

/// Whether a missing peer fails the test: when the peer tests were asked for, or when
/// the peer's `TOOLGAUGE_REQUIRE_*` variable is `1`.
pub fn peer_required(var: &str) -> bool {
    peers_requested() || std::env::var_os(var).is_some_and(|v| v == "1")
}

/// The repository root (the current directory of the README's commands).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixtures directory of this test binary.
pub fn fixtures_dir() -> PathBuf {
    repo_root().join("tests/integration/fixtures")
}

/// The text of fixture `name` (a path under `fixtures/`).
pub fn fixture_text(name: &str) -> String {
    let path = fixtures_dir().join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("failed to read fixture {}: {e}", path.display()))
}

/// The `toolgauge` binary run in its own temporary directory.
pub struct Toolgauge {
    dir: tempfile::TempDir,
}

impl Toolgauge {
    /// A fresh scratch directory.
    pub fn new() -> Toolgauge {
        Toolgauge {
            dir: tempfile::tempdir().expect("failed to create a temporary directory"),
        }
    }

    /// A scratch directory under Cargo's `CARGO_TARGET_TMPDIR`, for a run shared by
    /// several tests through a `static` (statics are never dropped, so it is left for
    /// `cargo clean` rather than deleted while another test still reads it).
    pub fn shared() -> Toolgauge {
        Toolgauge {
            dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
                .expect("failed to create a directory in CARGO_TARGET_TMPDIR"),
        }
    }

    /// The scratch directory (the binary's current directory).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copy fixture `name` (a path under `fixtures/`) into the scratch directory under its
    /// file name, and return that file name (what the tests pass on the command line).
    pub fn fixture(&self, name: &str) -> String {
        let file = Path::new(name)
            .file_name()
            .expect("fixture names a file")
            .to_string_lossy()
            .into_owned();
        let from = fixtures_dir().join(name);
        std::fs::copy(&from, self.path().join(&file))
            .unwrap_or_else(|e| panic!("failed to copy fixture {}: {e}", from.display()));
        file
    }

    /// Write `contents` to `name` in the scratch directory.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) {
        std::fs::write(self.path().join(name), contents)
            .unwrap_or_else(|e| panic!("failed to write {name}: {e}"));
    }

    /// The text of `name` in the scratch directory.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name))
            .unwrap_or_else(|e| panic!("failed to read {name}: {e}"))
    }

    /// The run directory `name` inside the scratch directory.
    pub fn run_dir(&self, name: &str) -> RunDir {
        RunDir::new(self.path().join(name))
    }

    /// Run `toolgauge ARGS` in the scratch directory.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in(self.path(), args)
    }

    /// Run `toolgauge ARGS` with `cwd` as the current directory.
    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        execute(self.command_in(cwd, args), args)
    }

    /// Run `toolgauge ARGS` in the scratch directory with the variables `env` set (after
    /// the provider key variables are removed, so a test sets its key explicitly).
    pub fn run_env(&self, env: &[(&str, &str)], args: &[&str]) -> Output {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        execute(cmd, args)
    }

    /// The command `toolgauge ARGS` in the scratch directory, with the clean environment
    /// of [`Toolgauge::run`], for tests that start and signal the process themselves.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_in(self.path(), args)
    }

    pub fn command_in(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgauge"));
        cmd.args(args)
            .current_dir(cwd)
            // Colour must be decided by "is stdout a terminal" alone (it is a pipe here).
            .env_remove("NO_COLOR")
            // Live targets must not find a developer's real keys.
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("FORCE_COLOR")
            .env("RUST_BACKTRACE", "0");
        cmd
    }
}

/// What one invocation produced.
#[derive(Debug)]
pub struct Output {
    /// The command line, for messages.
    pub args: String,
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// Fail unless the exit code is `code` and the binary did not panic; returns `self`.
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Output {
        self.assert_code(code);
        self
    }

    /// Fail unless the exit code is `code` and the binary did not panic, showing the output.
    #[track_caller]
    pub fn assert_code(&self, code: i32) {
        assert_eq!(
            self.code,
            Some(code),
            "`toolgauge {}` exited with {:?}, expected {code}\n--- stdout\n{}\n--- stderr\n{}",
            self.args,
            self.code,
            self.stdout,
            self.stderr
        );
        assert!(
            !self.stderr.contains("panicked"),
            "`toolgauge {}` panicked:\n{}",
            self.args,
            self.stderr
        );
    }

    /// Fail unless stderr contains every one of `needles`.
    #[track_caller]
    pub fn stderr_has(&self, needles: &[&str]) -> &Output {
        for n in needles {
            assert!(
                self.stderr.contains(n),
                "stderr of `toolgauge {}` lacks {n:?}:\n{}",
                self.args,
                self.stderr
            );
        }
        self
    }

    /// Fail unless stdout contains every one of `needles`.
    #[track_caller]
    pub fn stdout_has(&self, needles: &[&str]) -> &Output {
        for n in needles {
            assert!(
                self.stdout.contains(n),
                "stdout of `toolgauge {}` lacks {n:?}:\n{}",
                self.args,
                self.stdout
            );
        }
        self
    }
}

/// Run `cmd`, reading both pipes on threads so neither can fill and block; kill it if it
/// outlives [`COMMAND_LIMIT`].
pub fn execute(cmd: Command, args: &[&str]) -> Output {
    Running::start(cmd, args).finish()
}

/// A started `toolgauge` process whose output is being collected.
pub struct Running {
    child: Child,
    shown: String,
    start: Instant,
    done: mpsc::Receiver<()>,
    out: JoinHandle<Vec<u8>>,
    err: JoinHandle<Vec<u8>>,
}

impl Running {
    /// Start `cmd` (stdin closed, stdout and stderr read on threads).
    pub fn start(mut cmd: Command, args: &[&str]) -> Running {
        let start = Instant::now();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("failed to start toolgauge: {e}"));
        let (tx, done) = mpsc::channel::<()>();
        let reader = |mut pipe: Box<dyn Read + Send>, tx: mpsc::Sender<()>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                let _ = tx.send(());
                buf
            })
        };
        let out = reader(
            Box::new(child.stdout.take().expect("stdout is piped")),
            tx.clone(),
        );
        let err = reader(Box::new(child.stderr.take().expect("stderr is piped")), tx);
        Running {
            child,
            shown: args.join(" "),
            start,
            done,
            out,
            err,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait for the process to exit (killing it past [`COMMAND_LIMIT`]) and collect its
    /// output.
    pub fn finish(mut self) -> Output {
        for _ in 0..2 {
            let left = COMMAND_LIMIT.saturating_sub(self.start.elapsed());
            if self.done.recv_timeout(left).is_err() {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "`toolgauge {}` did not finish within {COMMAND_LIMIT:?}",
                    self.shown
                );
            }
        }
        let status = self.child.wait().expect("failed to wait for toolgauge");
        let text = |h: JoinHandle<Vec<u8>>| {
            String::from_utf8_lossy(&h.join().expect("pipe reader panicked")).into_owned()
        };
        Output {
            args: self.shown,
            code: status.code(),
            stdout: text(self.out),
            stderr: text(self.err),
        }
    }
}

/// The files of a run directory.
pub struct RunDir {
    /// The directory.
    pub path: PathBuf,
}

/// The files of a complete run directory (default formats).
pub const RUN_FILES: &[&str] = &[
    "run.json",
    "trials.jsonl",
    "summary.json",
    "trials.csv",
    "summary.csv",
    "junit.xml",
    "summary.md",
    "report.html",
];

impl RunDir {
    /// The run directory at `path`.
    pub fn new(path: PathBuf) -> RunDir {
        RunDir { path }
    }

    /// True when the directory holds `name`.
    pub fn has(&self, name: &str) -> bool {
        self.path.join(name).is_file()
    }

    /// Fail unless all five run files are present.
    #[track_caller]
    pub fn assert_complete(&self) {
        for f in RUN_FILES {
            assert!(self.has(f), "{} lacks {f}", self.path.display());
        }
    }

    fn text(&self, name: &str) -> String {
        let p = self.path.join(name);
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("failed to read {}: {e}", p.display()))
    }

    /// A JSON file, parsed.
    pub fn json(&self, name: &str) -> Value {
        serde_json::from_str(&self.text(name)).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
    }

    /// `trials.jsonl`, one value per line (every line must parse).
    pub fn trials(&self) -> Vec<Value> {
        self.text("trials.jsonl")
            .lines()
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("trials.jsonl line {} is not JSON: {e}", i + 1))
            })
            .collect()
    }

    /// `trials.jsonl` as toolgauge reads it back, one value per trial: a loop trial's
    /// line keeps only the case's messages (trials format 3) and the reader rebuilds
    /// the whole conversation from its rounds, so this is what `report`, `merge` and
    /// `--resume` see (without the line's `format`).
    pub fn trials_read_back(&self) -> Vec<Value> {
        read_back(&self.path.join("trials.jsonl"))
    }

    /// A CSV file: its header and rows.
    pub fn csv(&self, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
        let text = self.text(name);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r
            .headers()
            .unwrap_or_else(|e| panic!("{name}: bad header: {e}"))
            .iter()
            .map(str::to_string)
            .collect();
        let rows = r
            .records()
            .map(|rec| {
                rec.unwrap_or_else(|e| panic!("{name}: bad row: {e}"))
                    .iter()
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        (header, rows)
    }
}

/// A trial's key across runs: `case × variant × tool_choice #repeat` (not its target).
pub fn trial_key(t: &Value) -> String {
    format!(
        "{} × {} × {} #{}",
        t["case_id"].as_str().unwrap_or_default(),
        t["variant"].as_str().unwrap_or_default(),
        t["tool_choice"].as_str().unwrap_or_default(),
        t["repeat"]
    )
}

/// The verdict of each trial keyed by case, variant, tool_choice and repeat (not target),
/// with its reasons and checks: what must agree between two runs of the same responses.
pub fn verdicts(trials: &[Value]) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = trials
        .iter()
        .map(|t| {
            let key = trial_key(t);
            let facts = serde_json::json!({
                "verdict": t["verdict"],
                "reasons": t["reasons"],
                "checks": t["checks"],
            });
            (key, facts)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Run the loop fixture (`fixtures/loops/`) under its script and under a target whose
/// every request fails, so the page has every stop reason; returns the scratch directory.
pub fn loop_run() -> Toolgauge {
    let t = Toolgauge::new();
    let suite = t.fixture("loops/orders.yaml");
    let script = t.fixture("loops/orders.script.yaml");
    t.run(&[
        "run",
        &suite,
        "-t",
        &format!("scripted:{script}"),
        "-t",
        "scripted:error",
        "--max-error-rate",
        "1",
        "--out",
        "out",
        "--quiet",
    ])
    .assert_code(OK);
    t
}

/// A CI run (`CI=true`, as every hosted CI sets it) must run the tests that need real
/// peers: a plain `cargo test` lists them as ignored, and CI is where they must not be.
#[test]
fn a_ci_run_runs_the_peer_tests() {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        assert!(
            peers_requested(),
            "CI=true, but the tests that need real peers were not asked for: run \
             tests/install-peers.sh, then cargo test -- --include-ignored (as .ci/run does)"
        );
    }
}

/// The journal at `path` as toolgauge reads it back ([`RunDir::trials_read_back`]).
pub fn read_back(path: &Path) -> Vec<Value> {
    toolgauge::runner::journal::read(path)
        .unwrap_or_else(|e| panic!("{} does not read back: {e}", path.display()))
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect()
}
