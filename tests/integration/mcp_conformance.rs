//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run on Node 22)
//! against toolgauge's client: every non-auth, non-extension client scenario, at every
//! protocol version the suite lists for it, runs `toolgauge mcp-conformance` and must pass.
//!
//! A scenario passes when the suite exits 0 (it exits 1 on any FAILURE or WARNING check,
//! a client timeout, or a client error the scenario does not allow) and its `checks.json`
//! holds no FAILURE or WARNING. Each scenario also names the checks that must have
//! SUCCEEDED and the results the client must have printed, so a scenario that passed
//! because nothing happened (no tool called, no request seen) still fails here.
//!
//! `tests/mcp/conformance-baseline.yml` is the suite's `--expected-failures` baseline: a
//! temporary list of checks known to fail because of the client or transport (each with
//! its reason and fix in a comment). The suite fails a run whose baseline lists a check
//! that now passes, so an entry cannot outlive its fix.
//!
//! The peers are optional locally (the tests say what is missing and pass) and required in
//! CI (`TOOLGAUGE_REQUIRE_MCP=1`, see `mcp_peers.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mcp_peers::{Peers, peers};
use crate::support::repo_root;

/// The client scenarios toolgauge plays, with the protocol versions the suite lists for
/// each (`conformance list`). Auth scenarios are left out (they test an OAuth client;
/// toolgauge's client has no OAuth), and so are extension scenarios (outside the core
/// protocol). `list_matches_the_suite` keeps this table equal to the suite's list.
const SCENARIOS: &[(&str, &[&str])] = &[
    ("initialize", &["2025-06-18", "2025-11-25"]),
    ("tools_call", &["2025-06-18", "2025-11-25", "2026-07-28"]),
    ("elicitation-sep1034-client-defaults", &["2025-11-25"]),
    ("sse-retry", &["2025-11-25"]),
    ("request-metadata", &["2026-07-28"]),
    ("sep-2322-client-request-state", &["2026-07-28"]),
    ("http-standard-headers", &["2026-07-28"]),
    ("http-custom-headers", &["2026-07-28"]),
    ("http-invalid-tool-headers", &["2026-07-28"]),
    ("json-schema-ref-no-deref", &["2026-07-28"]),
    (
        "json-schema-2020-12-preservation",
        &["2025-11-25", "2026-07-28"],
    ),
];

/// The baseline of expected failures, relative to the repository.
const BASELINE: &str = "tests/mcp/conformance-baseline.yml";

/// A bound on one scenario run, so a wedged suite fails the test instead of hanging it
/// (the suite's own client timeout, 60 s, comes first).
const RUN_BOUND: Duration = Duration::from_secs(180);

/// What one scenario run left behind.
struct Outcome {
    output: Output,
    checks: Vec<Value>,
    /// The client's stdout as the suite saved it.
    client_stdout: String,
    client_stderr: String,
}

impl Outcome {
    fn describe(&self) -> String {
        format!(
            "suite stdout:\n{}\nsuite stderr:\n{}\nclient stderr (tail):\n{}",
            String::from_utf8_lossy(&self.output.stdout),
            tail(&String::from_utf8_lossy(&self.output.stderr), 6000),
            tail(&self.client_stderr, 6000),
        )
    }
}

fn tail(text: &str, n: usize) -> &str {
    let start = text.len().saturating_sub(n);
    let start = (start..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    &text[start..]
}

/// Kills the suite (and so its scenario server and our client) if the test panics.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn toolgauge_command() -> String {
    let bin = env!("CARGO_BIN_EXE_toolgauge");
    // The suite splits `--command` on spaces before it appends the server URL.
    assert!(
        !bin.contains(char::is_whitespace),
        "the suite splits --command on spaces; the toolgauge binary's path `{bin}` has one"
    );
    format!("{bin} mcp-conformance")
}

fn run_scenario(p: &Peers, scenario: &str, version: &str) -> Outcome {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(&p.node);
    cmd.arg(p.conformance())
        .args(["client", "--command", &toolgauge_command()])
        .args(["--scenario", scenario, "--spec-version", version])
        .args(["--timeout", "60000", "--expected-failures"])
        .arg(repo_root().join(BASELINE))
        .arg("-o")
        .arg(out.path())
        .current_dir(repo_root())
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = KillOnDrop(cmd.spawn().expect("failed to start the conformance suite"));
    let output = wait_bounded(child, scenario);
    let dir = result_dir(out.path(), scenario, &output);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let checks: Vec<Value> = serde_json::from_str(&read("checks.json")).unwrap_or_else(|e| {
        panic!(
            "{scenario}@{version}: checks.json unreadable ({e}); suite stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    Outcome {
        output,
        checks,
        client_stdout: read("stdout.txt"),
        client_stderr: read("stderr.txt"),
    }
}

fn wait_bounded(mut child: KillOnDrop, scenario: &str) -> Output {
    // Drain the pipes on threads so a chatty suite cannot block on a full pipe.
    let mut stdout = child.0.stdout.take().unwrap();
    let mut stderr = child.0.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).ok();
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).ok();
        b
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < RUN_BOUND,
            "{scenario}: the conformance suite did not finish within {RUN_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

/// The suite writes `<out>/<scenario>-<timestamp>/` (a `/` in the name makes subfolders).
fn result_dir(out: &Path, scenario: &str, output: &Output) -> PathBuf {
    let (parent, leaf) = match scenario.rsplit_once('/') {
        Some((p, l)) => (out.join(p), l),
        None => (out.to_path_buf(), scenario),
    };
    let found: Vec<PathBuf> = std::fs::read_dir(&parent)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    let found: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{leaf}-")))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{scenario}: expected one result directory under {}, found {found:?}; suite stderr:\n{}",
        parent.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    found.into_iter().next().unwrap()
}

/// The baseline's entries for `scenario` (`scenario` or `scenario:check-id`).
fn baseline_for(scenario: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo_root().join(BASELINE)).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc.get("client")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|e| {
            if e == scenario {
                Some("*".to_string())
            } else {
                e.strip_prefix(scenario)?
                    .strip_prefix(':')
                    .map(str::to_string)
            }
        })
        .collect()
}

/// The statuses of the checks `want` names: `id`, or `id#Name` where one id covers
/// several checks (one per method, say) and only the named one is meant.
fn status_of<'a>(checks: &'a [Value], want: &str) -> Vec<&'a str> {
    let (id, name) = match want.split_once('#') {
        Some((id, name)) => (id, Some(name)),
        None => (want, None),
    };
    checks
        .iter()
        .filter(|c| c["id"] == id && name.is_none_or(|n| c["name"] == n))
        .filter_map(|c| c["status"].as_str())
        .collect()
}

/// Run `scenario` at `version` and assert it passes: the suite's verdict, no failing or
/// warning check outside the baseline, each of `must` present and SUCCESS (see
/// [`status_of`]), and each of `printed` in the client's stdout.
fn check_scenario(scenario: &str, version: &str, must: &[&str], printed: &[&str]) {
    let Some(p) = peers() else { return };
    let outcome = run_scenario(&p, scenario, version);
    let baseline = baseline_for(scenario);
    let whole_scenario_expected = baseline.contains("*");
    let bad: Vec<String> = outcome
        .checks
        .iter()
        .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
        .filter(|c| !baseline.contains(c["id"].as_str().unwrap_or("")))
        .map(|c| {
            format!(
                "{} {} ({}): {}",
                c["status"].as_str().unwrap_or("?"),
                c["id"].as_str().unwrap_or("?"),
                c["name"].as_str().unwrap_or("?"),
                c["errorMessage"].as_str().unwrap_or("")
            )
        })
        .collect();
    if !whole_scenario_expected {
        assert!(
            bad.is_empty(),
            "{scenario}@{version}: failing checks:\n  {}\n{}",
            bad.join("\n  "),
            outcome.describe()
        );
        let listed = |want: &str| baseline.contains(want.split('#').next().unwrap_or(want));
        for id in must.iter().filter(|id| !listed(id)) {
            let statuses = status_of(&outcome.checks, id);
            assert!(
                !statuses.is_empty() && statuses.iter().all(|s| *s == "SUCCESS"),
                "{scenario}@{version}: check `{id}` should be SUCCESS, is {statuses:?}\n{}",
                outcome.describe()
            );
        }
        for text in printed {
            assert!(
                outcome.client_stdout.contains(text),
                "{scenario}@{version}: the client should have printed `{text}`; it printed:\n{}\n{}",
                outcome.client_stdout,
                outcome.describe()
            );
        }
    }
    // Last, so the messages above explain a failure first: with the baseline, the suite
    // exits 0 exactly when the failures are those listed and none listed now passes.
    assert!(
        outcome.output.status.success(),
        "{scenario}@{version}: the suite failed (exit {:?}); a baseline entry that now passes must be removed\n{}",
        outcome.output.status.code(),
        outcome.describe()
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn list_matches_the_suite() {
    let Some(p) = peers() else { return };
    let out = Command::new(&p.node)
        .arg(p.conformance())
        .arg("list")
        .output()
        .expect("failed to run the conformance suite");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let section = text
        .split("Client scenarios")
        .nth(1)
        .expect("`list` has a client section")
        .split("\n\n")
        .next()
        .unwrap();
    let listed: Vec<(String, Vec<String>)> = section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| {
            let (name, versions) = l.split_once(" [")?;
            let versions = versions.trim_end_matches(']');
            Some((
                name.to_string(),
                versions.split(',').map(str::to_string).collect::<Vec<_>>(),
            ))
        })
        .filter(|(name, versions)| {
            !name.starts_with("auth/") && !versions.iter().any(|v| v == "extension")
        })
        .collect();
    let ours: Vec<(String, Vec<String>)> = SCENARIOS
        .iter()
        .map(|(n, vs)| (n.to_string(), vs.iter().map(|v| v.to_string()).collect()))
        .collect();
    assert_eq!(
        listed, ours,
        "the suite's non-auth, non-extension client scenarios changed: update SCENARIOS here \
         and the entry's plans in src/app/mcp_conformance.rs"
    );
}

/// One test per scenario and version, so they run (and fail) independently.
macro_rules! scenario {
    ($test:ident, $scenario:literal, $version:literal, must: [$($must:literal),* $(,)?], printed: [$($printed:literal),* $(,)?]) => {
        #[test]
        #[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
        fn $test() {
            check_scenario($scenario, $version, &[$($must),*], &[$($printed),*]);
        }
    };
}

scenario!(initialize_2025_06_18, "initialize", "2025-06-18",
    must: ["mcp-client-initialization"], printed: ["\"step\":\"tools\""]);
scenario!(initialize_2025_11_25, "initialize", "2025-11-25",
    must: ["mcp-client-initialization"], printed: ["\"era\":\"legacy\""]);
scenario!(tools_call_2025_06_18, "tools_call", "2025-06-18",
    must: ["tool-add-numbers", "wire-schema-valid"],
    printed: ["\"era\":\"legacy\"", "The sum of 2 and 3 is 5"]);
scenario!(tools_call_2025_11_25, "tools_call", "2025-11-25",
    must: ["tool-add-numbers", "wire-schema-valid"],
    printed: ["\"era\":\"legacy\"", "The sum of 2 and 3 is 5"]);
scenario!(tools_call_2026_07_28, "tools_call", "2026-07-28",
    must: ["tool-add-numbers", "wire-schema-valid"],
    printed: ["\"era\":\"modern\"", "The sum of 2 and 3 is 5"]);
scenario!(elicitation_defaults, "elicitation-sep1034-client-defaults", "2025-11-25",
    must: [
        "client-elicitation-sep1034-string-default",
        "client-elicitation-sep1034-integer-default",
        "client-elicitation-sep1034-number-default",
        "client-elicitation-sep1034-enum-default",
        "client-elicitation-sep1034-boolean-default",
    ],
    printed: ["John Doe"]);
scenario!(sse_retry, "sse-retry", "2025-11-25",
    must: ["client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"],
    printed: ["Reconnection test completed successfully"]);
scenario!(request_metadata, "request-metadata", "2026-07-28",
    must: [
        "sep-2575-http-client-sends-version-header",
        "sep-2575-client-populates-meta",
        "sep-2575-client-sends-client-info",
        "sep-2575-http-version-header-matches-meta",
        "sep-2575-client-retry-supported-version",
    ],
    printed: ["\"era\":\"modern\""]);
scenario!(mrtr_request_state, "sep-2322-client-request-state", "2026-07-28",
    must: [
        "sep-2322-client-request-state-echoed",
        "sep-2322-client-jsonrpc-id-different",
        "sep-2322-client-no-state-omitted",
        "sep-2322-client-parallel-isolation",
        "sep-2322-default-result-type-complete",
    ],
    printed: ["echo-state-ok", "unrelated-ok", "no-state-ok", "no-result-type-test-ok"]);
scenario!(http_standard_headers, "http-standard-headers", "2026-07-28",
    must: [
        "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_tools_list",
        "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_tools_call",
        "sep-2243-client-includes-standard-headers#ClientMcpNameHeader_tools_call",
    ],
    printed: ["\"tool\":\"my-hyphenated-tool\""]);
scenario!(http_custom_headers, "http-custom-headers", "2026-07-28",
    must: [
        "sep-2243-client-supports-custom-headers",
        "sep-2243-client-mirrors-designated-params",
        "sep-2243-client-encode-values",
        "sep-2243-client-base64-unsafe",
        "sep-2243-client-omit-null",
    ],
    printed: ["Custom headers test completed"]);
scenario!(http_invalid_tool_headers, "http-invalid-tool-headers", "2026-07-28",
    must: [
        "sep-2243-client-reject-invalid-tool",
        "sep-2243-x-mcp-header-not-empty",
        "sep-2243-x-mcp-header-primitive-only",
        "sep-2243-x-mcp-header-unique",
        "sep-2243-x-mcp-header-charset",
    ],
    printed: ["\"tool\":\"valid_tool\""]);
scenario!(json_schema_ref_no_deref, "json-schema-ref-no-deref", "2026-07-28",
    must: ["sep-2106-no-network-ref-deref"], printed: ["lookup_user"]);
scenario!(json_schema_preservation_2025_11_25, "json-schema-2020-12-preservation", "2025-11-25",
    must: [
        "json-schema-2020-12-client-tool-found",
        "json-schema-2020-12-client-echo-completed",
        "json-schema-2020-12-client-$schema-preserved",
        "json-schema-2020-12-client-$defs-preserved",
        "json-schema-2020-12-client-additionalProperties-preserved",
    ],
    printed: ["echoed"]);
scenario!(json_schema_preservation_2026_07_28, "json-schema-2020-12-preservation", "2026-07-28",
    must: [
        "json-schema-2020-12-client-echo-completed",
        "json-schema-2020-12-client-$schema-preserved",
        "json-schema-2020-12-client-$defs-preserved",
        "json-schema-2020-12-client-additionalProperties-preserved",
        "sep-2106-client-composition-keywords-preserved",
        "sep-2106-client-conditional-keywords-preserved",
        "sep-2106-client-anchor-keyword-preserved",
    ],
    printed: ["echoed"]);
