//! Loop cases whose calls run on a real MCP server (`tools_from.mcp`): the reference
//! filesystem server pointed at a scratch directory, and the Python SDK server with the
//! loop tools of `tests/mcp/servers/loop_server.py` (a counter, a request for input, a
//! crash). A scripted model plays each episode, so every expected value below follows
//! from the script and the server's documented behaviour.
//!
//! Tests that need a peer use [`peers`] (skipped with a note when missing, a failure
//! under `TOOLGAUGE_REQUIRE_MCP=1`); the suite checks at the end need none.

use serde_json::Value;

use crate::mcp_peers::{Peers, peers};
use crate::support::{BAD_INPUT, OK, RUN_INCOMPLETE, Toolgauge};

/// `trials.jsonl` of the run in `dir`, one value per line, sorted by case id then repeat.
fn journal(t: &Toolgauge, dir: &str) -> Vec<Value> {
    let mut v: Vec<Value> = t
        .read(&format!("{dir}/trials.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    v.sort_by_key(|t| {
        (
            t["case_id"].as_str().unwrap().to_string(),
            t["repeat"].as_u64(),
        )
    });
    v
}

/// The trial of `case` (the first repeat).
fn trial<'a>(trials: &'a [Value], case: &str) -> &'a Value {
    trials
        .iter()
        .find(|t| t["case_id"] == case)
        .unwrap_or_else(|| panic!("no trial of `{case}` in {trials:?}"))
}

/// Outcome `i` of round `round` (0-based) of a trial.
fn outcome(trial: &Value, round: usize, i: usize) -> &Value {
    &trial["episode"]["rounds"][round]["outcomes"][i]
}

/// The exchanges of an outcome's MCP log, parsed: (direction, JSON) for messages.
fn messages(outcome: &Value) -> Vec<(String, Value)> {
    outcome["mcp"]["exchanges"]
        .as_array()
        .unwrap_or_else(|| panic!("no exchanges in {outcome}"))
        .iter()
        .filter(|e| e["direction"] == "sent" || e["direction"] == "received")
        .map(|e| {
            let text = e["text"].as_str().unwrap();
            let v: Value = serde_json::from_str(text)
                .unwrap_or_else(|err| panic!("not a JSON-RPC line ({err}): {text}"));
            (e["direction"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// The `tools/call` request of an outcome's log and the response with its id.
fn call_and_answer(outcome: &Value) -> (Value, Value) {
    let msgs = messages(outcome);
    let (_, sent) = msgs
        .iter()
        .find(|(d, v)| d == "sent" && v["method"] == "tools/call")
        .unwrap_or_else(|| panic!("no tools/call sent in {outcome}"))
        .clone();
    let (_, answer) = msgs
        .iter()
        .find(|(d, v)| d == "received" && v["id"] == sent["id"] && v.get("method").is_none())
        .unwrap_or_else(|| panic!("no answer to {sent} in {outcome}"))
        .clone();
    (sent, answer)
}

/// A snapshot (`toolgauge mcp snapshot`) of a server with one tool, `add`.
const ADD_SNAPSHOT: &str = r#"{"format": 1, "server": "stdio:server", "era": "legacy", "protocol_version": "2025-06-18",
  "tools": [{"name": "add", "description": "Add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}]}"#;

/// Run `suite` under the scripted model `script` into `out`; the exit code must be `code`.
fn run(t: &Toolgauge, suite: &str, script: &str, out: &str, extra: &[&str], code: i32) {
    let target = format!("scripted:{script}");
    let mut args = vec![
        "run",
        suite,
        "--target",
        &target,
        "--out",
        out,
        "--format",
        "json,html",
    ];
    args.extend_from_slice(extra);
    t.run(&args).expect_code(code);
}

/// The filesystem suite: two of the server's tools, offered to two loop cases.
fn filesystem_suite(p: &Peers, data: &str) -> String {
    format!(
        r#"name: fs-loops
tools_from:
  mcp: "stdio:{node} {fs} {data}"
cases:
  - id: read-notes
    kind: should_call
    prompt: What is the launch code written in notes.txt?
    expect:
      calls: [{{tool: read_text_file}}]
      trajectory: {{mode: strict, steps: [{{tool: read_text_file, args: {{path: "{data}/notes.txt"}}}}]}}
      final: {{contains: ["7421"], grounded: true}}
  - id: write-outside
    kind: should_call
    prompt: Save the word hello to a file outside the data folder.
    expect:
      final: {{no_success_after_error: true}}
"#,
        node = p.node.display(),
        fs = p.filesystem().display(),
    )
}

fn filesystem_script(data: &str, outside: &str) -> String {
    format!(
        r#"responses:
  - {{case: read-notes, round: 1, calls: [{{name: read_text_file, arguments: {{path: "{data}/notes.txt"}}}}]}}
  - {{case: read-notes, round: 2, text: "The launch code is 7421."}}
  - {{case: write-outside, round: 1, calls: [{{name: write_file, arguments: {{path: "{outside}", content: hello}}}}]}}
  - {{case: write-outside, round: 2, text: "I could not save the file: the write failed."}}
"#
    )
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_filesystem_server_reads_inside_its_dir_and_a_write_outside_is_refused_twice_over() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let data = t.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("notes.txt"), "launch code: 7421\n").unwrap();
    // The server resolves symlinks; the scratch dir may sit under one (/tmp on macOS).
    let data = data.canonicalize().unwrap().display().to_string();
    let outside = t.path().canonicalize().unwrap().join("evil.txt");
    let outside = outside.display().to_string();
    t.write("fs.yaml", filesystem_suite(&p, &data));
    t.write("script.yaml", filesystem_script(&data, &outside));

    // Without allowing: the write is refused by its annotations, never sent.
    run(&t, "fs.yaml", "script.yaml", "out", &[], OK);
    let trials = journal(&t, "out");
    let read = trial(&trials, "read-notes");
    assert_eq!(read["verdict"], "pass", "{read}");
    let o = outcome(read, 0, 0);
    assert_eq!(o["content"], "launch code: 7421\n", "{o}");
    assert_eq!(o["is_error"], false);
    assert_eq!(o["executed"], true);
    let (sent, answer) = call_and_answer(o);
    assert_eq!(sent["jsonrpc"], "2.0");
    assert_eq!(sent["params"]["name"], "read_text_file");
    assert_eq!(
        sent["params"]["arguments"],
        serde_json::json!({"path": format!("{data}/notes.txt")})
    );
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "launch code: 7421\n"
    );
    assert_eq!(
        answer["result"]["structuredContent"]["content"],
        "launch code: 7421\n"
    );
    // Only this call's messages: no tools/list or handshake in a call's transcript.
    assert!(
        messages(o)
            .iter()
            .all(|(_, v)| v["method"] != "tools/list" && v["method"] != "initialize"),
        "{o}"
    );
    let write = trial(&trials, "write-outside");
    assert_eq!(write["verdict"], "pass", "{write}");
    let o = outcome(write, 0, 0);
    assert_eq!(o["error_kind"], "refused", "{o}");
    assert_eq!(o["executed"], false);
    assert_eq!(
        o["content"],
        r#"{"error":{"kind":"refused","message":"the call of `write_file` was refused: this tool may change data and is not allowed here; it was not executed"}}"#
    );
    let why = o["mcp"]["refused"].as_str().unwrap();
    assert!(why.contains("`destructiveHint: true`"), "{why}");
    assert!(why.contains("--allow-destructive"), "{why}");
    assert!(o["mcp"].get("exchanges").is_none(), "{o}");
    assert!(!std::path::Path::new(&outside).exists());
    // Single-turn lines are untouched: no `mcp` anywhere outside the outcomes.
    assert!(read.get("mcp").is_none() && read["episode"].get("mcp").is_none());

    // Allowed by the flag: the server itself refuses a path outside its directory, and
    // the model reads the server's error (a tool error, not a harness failure).
    run(
        &t,
        "fs.yaml",
        "script.yaml",
        "out2",
        &["--allow-destructive"],
        OK,
    );
    let trials = journal(&t, "out2");
    let write = trial(&trials, "write-outside");
    assert_eq!(write["verdict"], "pass", "{write}");
    let o = outcome(write, 0, 0);
    assert_eq!(o["error_kind"], "tool_reported", "{o}");
    assert_eq!(o["is_error"], true);
    assert_eq!(o["executed"], true);
    let (sent, answer) = call_and_answer(o);
    assert_eq!(sent["params"]["name"], "write_file");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let said = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(o["content"].as_str().unwrap().contains(said), "{o}");
    assert!(said.contains("outside allowed directories"), "{said}");
    assert!(!std::path::Path::new(&outside).exists());
    // The HTML report carries the transcript for the loop view.
    let html = t.read("out2/report.html");
    assert!(html.contains("outside allowed directories"));
}

/// A suite on the SDK loop server with `extra` under `tools_from` and the given cases.
fn sdk_suite(p: &Peers, extra: &str, cases: &str) -> String {
    format!(
        r#"name: sdk-loops
tools_from:
  mcp: "stdio:{python} {script} stdio"
{extra}
cases:
{cases}"#,
        python = p.python.display(),
        script = p.server_script("loop_server.py").display(),
    )
}

/// A loop case that calls `tool` with `args` in round 1 and answers `text` in round 2.
fn one_call_case(id: &str) -> String {
    format!(
        "  - id: {id}\n    kind: should_call\n    prompt: do it\n    expect: {{stop: answered}}\n"
    )
}

fn one_call_script(id: &str, tool: &str, args: &str, text: &str) -> String {
    format!(
        "  - {{case: {id}, round: 1, calls: [{{name: {tool}, arguments: {args}}}]}}\n  - {{case: {id}, round: 2, text: \"{text}\"}}\n"
    )
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn sdk_tool_errors_reach_the_model_and_destructive_tools_run_only_when_allowed() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let cases = ["adds", "fails", "deletes"].map(one_call_case).concat();
    let script = format!(
        "responses:\n{}{}{}",
        one_call_script("adds", "add", "{a: 2, b: 40}", "It is 42."),
        one_call_script(
            "fails",
            "fail",
            "{reason: disk on fire}",
            "The tool failed."
        ),
        one_call_script(
            "deletes",
            "delete_record",
            "{record_id: R1}",
            "Not deleted."
        ),
    );
    t.write("script.yaml", script);
    t.write("default.yaml", sdk_suite(&p, "", &cases));
    run(&t, "default.yaml", "script.yaml", "a", &[], OK);
    let trials = journal(&t, "a");
    let o = outcome(trial(&trials, "adds"), 0, 0);
    assert_eq!(o["content"], "42", "{o}");
    let (_, answer) = call_and_answer(o);
    assert_eq!(answer["result"]["structuredContent"]["result"], 42);
    // isError: the tool's answer, read by the model as an error; the trial is judged.
    let failed = trial(&trials, "fails");
    assert_eq!(failed["verdict"], "pass", "{failed}");
    let o = outcome(failed, 0, 0);
    assert_eq!(o["error_kind"], "tool_reported", "{o}");
    assert_eq!(o["executed"], true);
    assert!(
        o["content"].as_str().unwrap().contains("disk on fire"),
        "{o}"
    );
    // delete_record says destructiveHint: true: refused, never sent.
    let o = outcome(trial(&trials, "deletes"), 0, 0);
    assert_eq!(o["error_kind"], "refused", "{o}");
    assert!(o["mcp"].get("exchanges").is_none());

    // `allow: [delete_record]` lets it run.
    t.write(
        "allowed.yaml",
        sdk_suite(&p, "  allow: [delete_record]", &cases),
    );
    run(&t, "allowed.yaml", "script.yaml", "b", &[], OK);
    let trials = journal(&t, "b");
    let o = outcome(trial(&trials, "deletes"), 0, 0);
    assert_eq!(o["content"], "deleted R1", "{o}");
    assert_eq!(o["executed"], true);
    let (sent, _) = call_and_answer(o);
    assert_eq!(sent["params"]["arguments"]["record_id"], "R1");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn fail_rules_alone_put_faults_in_front_of_a_live_tool_whose_retry_reaches_the_server() {
    // Issue 31: a case mock with only `fail:` in front of a live tool answered the retry
    // with `no_mock`, never reaching the server, and the trial passed. Mocks, faults and
    // the server stack: after its injected failures the call goes on to the server. A
    // tool pinned by `result` rules stays the mocks' (its other calls never reach the
    // server), and a pass on a call no one answered has no verdict.
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let cases = "  - id: retried
    kind: should_call
    prompt: add 2 and 40
    mocks:
      add:
        - fail: {kind: rate_limit, times: 2}
          when: {a: 2}
    expect: {stop: answered, final: {contains: [\"42\"], grounded: true}}
  - id: pinned
    kind: should_call
    prompt: add 2 and 40
    mocks:
      add:
        - when: {a: 1}
          result: 3
    expect: {stop: answered}
";
    t.write("stack.yaml", sdk_suite(&p, "", cases));
    let script = "responses:
  - {case: retried, round: 1, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: retried, round: 2, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: retried, round: 3, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: retried, round: 4, text: \"It is 42.\"}
  - {case: pinned, round: 1, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: pinned, round: 2, text: \"The tool failed, so I have no sum.\"}
";
    t.write("script.yaml", script);
    run(&t, "stack.yaml", "script.yaml", "out", &[], RUN_INCOMPLETE);
    let trials = journal(&t, "out");
    let retried = trial(&trials, "retried");
    assert_eq!(retried["verdict"], "pass", "{retried}");
    for round in 0..2 {
        let o = outcome(retried, round, 0);
        assert_eq!(o["error_kind"], "rate_limit", "{o}");
        assert_eq!((&o["fault"], &o["executed"]), (&true.into(), &false.into()));
        assert!(
            o.get("mcp").is_none(),
            "an injected fault never reaches the server: {o}"
        );
    }
    // The third call went on to the server, which answered it.
    let o = outcome(retried, 2, 0);
    assert_eq!(o["content"], "42", "{o}");
    assert_eq!(o["executed"], true);
    let (sent, answer) = call_and_answer(o);
    assert_eq!(
        sent["params"]["arguments"],
        serde_json::json!({"a": 2, "b": 40})
    );
    assert_eq!(answer["result"]["structuredContent"]["result"], 42);

    // `add` pinned by a `result` rule: a call it does not match is not sent; the model
    // read `no_mock` and owned up, which is no pass (the tool never ran).
    let pinned = trial(&trials, "pinned");
    assert_eq!(pinned["verdict"], "error", "{pinned}");
    assert_eq!(pinned["reasons"][0]["code"], "tool_error");
    let why = pinned["reasons"][0]["message"].as_str().unwrap();
    assert!(why.contains("the call of `add`"), "{why}");
    assert!(why.contains("the tool never ran"), "{why}");
    let o = outcome(pinned, 0, 0);
    assert_eq!(o["error_kind"], "no_mock", "{o}");
    assert!(o.get("mcp").is_none(), "{o}");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_oracle_self_test_says_what_it_cannot_judge_offline_and_only_for_selected_cases() {
    // Issue 31: the self-test played loops against the mocks alone, so a check on the
    // server's result (`final: {grounded: true}`) read "no model can pass"; the run,
    // played on the server, then passed it. It also warned about cases `--case` left out.
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let cases = r#"  - id: sum
    kind: should_call
    prompt: What is 2 + 40?
    expect:
      calls: [{tool: add, args: {a: 2, b: 40}}]
      final: {contains: ["42"], grounded: true}
  - id: unsatisfiable
    kind: should_call
    prompt: Echo something.
    expect:
      calls: [{tool: echo, args: {text: {regex: "^$x"}}}]
"#;
    t.write("oracle.yaml", sdk_suite(&p, "", cases));
    let target = ["--target", "scripted:oracle"];
    let o = t
        .run(
            &[
                &["run", "oracle.yaml", "--out", "one", "--case", "sum"][..],
                &target[..],
            ]
            .concat(),
        )
        .expect_code(OK);
    let server = format!(
        "MCP server `stdio:{} {} stdio`",
        p.python.display(),
        p.server_script("loop_server.py").display()
    );
    let said = format!(
        "warning: scripted:oracle can not judge offline the checks of 1 loop trial expectation(s) of suite `sdk-loops` whose calls run on {server} (sum): the self-test has no server, so it stopped at the first call the server answers and judged only what comes before; this run's trials of them are played on the server and judged on its real results\n  - sum under auto: round 1: `add` (not judged offline: `final`)\n"
    );
    assert!(o.stderr.contains(&said), "{}", o.stderr);
    // Nothing it could judge fails, and the case `--case` left out is not mentioned.
    assert!(!o.stderr.contains("no model can pass"), "{}", o.stderr);
    assert!(!o.stderr.contains("unsatisfiable"), "{}", o.stderr);
    let trials = journal(&t, "one");
    assert_eq!(trials.len(), 1);
    assert_eq!(
        trial(&trials, "sum")["verdict"],
        "pass",
        "the server's result grounds the answer"
    );

    // Every case: the impossible one is named, the server's loop still only noted.
    let o = t
        .run(&[&["run", "oracle.yaml", "--out", "all"][..], &target[..]].concat())
        .expect_code(OK);
    o.stderr_has(&[
        "scripted:oracle can not satisfy 1 trial expectation(s) of suite `sdk-loops`, so no model can pass them (check these cases): unsatisfiable\n",
        &said,
    ]);
    assert!(
        !o.stderr.contains("(check these cases): sum"),
        "{}",
        o.stderr
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn input_required_is_answered_by_the_suite_policy_and_logged() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    t.write(
        "script.yaml",
        format!(
            "responses:\n{}",
            one_call_script("confirm", "confirm_order", "{order_id: A1}", "Done.")
        ),
    );
    let cases = one_call_case("confirm");
    let runs = [
        ("decline", "  input: decline", "order A1: decline None"),
        (
            "accept",
            "  input: {accept: {ok: true}}",
            "order A1: accept {'ok': True}",
        ),
    ];
    for (name, key, content) in runs {
        t.write(&format!("{name}.yaml"), sdk_suite(&p, key, &cases));
        run(&t, &format!("{name}.yaml"), "script.yaml", name, &[], OK);
        let trials = journal(&t, name);
        let o = outcome(&trials[0], 0, 0);
        assert_eq!(o["content"], content, "{name}: {o}");
        let rounds = o["mcp"]["input_rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), 1, "{o}");
        assert_eq!(rounds[0]["round"], 1);
        assert_eq!(rounds[0]["by"], "policy");
        // The retry carried the answers the policy gave, as logged.
        let retry = messages(o)
            .into_iter()
            .filter(|(d, v)| d == "sent" && v["method"] == "tools/call")
            .nth(1)
            .unwrap_or_else(|| panic!("no retry in {o}"))
            .1;
        assert_eq!(
            retry["params"]["inputResponses"], rounds[0]["answers"],
            "{o}"
        );
    }
    // Refused (the default): the model reads a tool error saying input was asked for.
    t.write("refuse.yaml", sdk_suite(&p, "", &cases));
    run(&t, "refuse.yaml", "script.yaml", "refuse", &[], OK);
    let trials = journal(&t, "refuse");
    let o = outcome(&trials[0], 0, 0);
    assert_eq!(o["is_error"], true, "{o}");
    let rounds = o["mcp"]["input_rounds"].as_array().unwrap();
    assert_eq!(rounds[0]["by"], "refused", "{o}");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn isolation_trial_gives_each_trial_a_fresh_server_and_suite_shares_one() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    t.write(
        "script.yaml",
        "responses:\n  - {case: counts, round: 1, calls: [{name: count, arguments: {}}]}\n  - {case: counts, round: 2, calls: [{name: count, arguments: {}}]}\n  - {case: counts, round: 3, text: counted}\n",
    );
    let cases = "  - id: counts\n    kind: should_call\n    prompt: count twice\n    expect: {stop: answered}\n";
    let counts = |dir: &str| -> Vec<Vec<String>> {
        journal(&t, dir)
            .iter()
            .map(|tr| {
                (0..2)
                    .map(|r| outcome(tr, r, 0)["content"].as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    };
    let repeats = ["--repeats", "3", "-j", "1"];
    t.write("trial.yaml", sdk_suite(&p, "  isolation: trial", cases));
    run(&t, "trial.yaml", "script.yaml", "t", &repeats, OK);
    assert_eq!(counts("t"), vec![vec!["count=1", "count=2"]; 3]);
    // One server for the run: the counter goes on from trial to trial.
    t.write("suite.yaml", sdk_suite(&p, "  isolation: suite", cases));
    run(&t, "suite.yaml", "script.yaml", "s", &repeats, OK);
    let mut all: Vec<String> = counts("s").concat();
    all.sort();
    assert_eq!(
        all,
        [
            "count=1", "count=2", "count=3", "count=4", "count=5", "count=6"
        ]
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn a_server_that_dies_mid_episode_ends_the_trial_as_an_error_keeping_its_rounds() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    t.write(
        "script.yaml",
        "responses:\n  - {case: dies, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}]}\n  - {case: dies, round: 2, calls: [{name: crash, arguments: {}}]}\n  - {case: dies, round: 3, text: never}\n",
    );
    t.write(
        "dies.yaml",
        sdk_suite(
            &p,
            "  isolation: trial",
            "  - id: dies\n    kind: should_call\n    prompt: add then crash\n    expect: {stop: answered}\n",
        ),
    );
    // An error trial is over `--max-error-rate 0`: the run is incomplete.
    run(&t, "dies.yaml", "script.yaml", "out", &[], RUN_INCOMPLETE);
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 1);
    let tr = &trials[0];
    assert_eq!(tr["verdict"], "error", "{tr}");
    assert_eq!(tr["reasons"][0]["code"], "tool_error");
    let why = tr["reasons"][0]["message"].as_str().unwrap();
    assert!(why.starts_with("round 2: "), "{why}");
    assert!(why.contains("`crash`"), "{why}");
    // The server's last words (its stderr) say what happened.
    assert!(why.contains("crashing on purpose"), "{why}");
    // The round before the crash is kept, with its transcript.
    assert_eq!(outcome(tr, 0, 0)["content"], "3");
    assert_eq!(tr["episode"]["rounds"].as_array().unwrap().len(), 2);
    let (sent, _) = call_and_answer(outcome(tr, 0, 0));
    assert_eq!(sent["params"]["name"], "add");

    // On a server shared by the run, the next trial gets a server started again: its
    // first round succeeds before it, too, crashes the server.
    t.write(
        "shared.yaml",
        sdk_suite(
            &p,
            "  isolation: suite",
            "  - id: dies\n    kind: should_call\n    prompt: add then crash\n    expect: {stop: answered}\n",
        ),
    );
    run(
        &t,
        "shared.yaml",
        "script.yaml",
        "shared",
        &["--repeats", "2", "-j", "1"],
        RUN_INCOMPLETE,
    );
    let trials = journal(&t, "shared");
    assert_eq!(trials.len(), 2);
    for tr in &trials {
        assert_eq!(tr["verdict"], "error", "{tr}");
        assert_eq!(outcome(tr, 0, 0)["content"], "3", "{tr}");
        let why = tr["reasons"][0]["message"].as_str().unwrap();
        assert!(why.starts_with("round 2: "), "{why}");
    }
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn a_call_that_kills_a_shared_server_is_named_and_the_innocent_calls_in_flight_are_retried() {
    // Issue 31: with `isolation: suite` and `-j 8`, one trial whose call killed the server
    // turned every trial in flight into an error, each blaming its own tool and quoting
    // the other trial's stderr. Now the calls in flight are retried once, alone, on a
    // fresh server: the innocent ones get their answers, and the call that kills the
    // server kills it again, alone, and says so. A call whose tool may change data is not
    // sent twice: its error says another call may have killed the server.
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let waits = ["w1", "w2", "w3", "w4"];
    let mut cases = String::new();
    let mut script = String::from("responses:\n");
    let mut add = |id: &str, call: &str| {
        cases.push_str(&one_call_case(id));
        script.push_str(&format!(
            "  - {{case: {id}, round: 1, calls: [{call}]}}\n  - {{case: {id}, round: 2, text: done}}\n"
        ));
    };
    // The crash comes 800 ms into its call, while the others (1.5 s each) are in flight;
    // their arguments differ, since identical calls on one connection take turns.
    for (i, id) in waits.iter().enumerate() {
        add(
            id,
            &format!("{{name: wait, arguments: {{ms: {}}}}}", 1500 + i),
        );
    }
    add("counts", "{name: slow_count, arguments: {ms: 1500}}");
    add("kills", "{name: crash, arguments: {after_ms: 800}}");
    t.write("script.yaml", script);
    t.write("shared.yaml", sdk_suite(&p, "  isolation: suite", &cases));
    run(
        &t,
        "shared.yaml",
        "script.yaml",
        "out",
        &["-j", "8"],
        RUN_INCOMPLETE,
    );
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 6);
    for (i, id) in waits.iter().enumerate() {
        let tr = trial(&trials, id);
        assert_eq!(tr["verdict"], "pass", "{tr}");
        let o = outcome(tr, 0, 0);
        assert_eq!(o["content"], format!("waited {} ms", 1500 + i), "{o}");
        // Its transcript: the call that died, a note, and the retry that answered.
        let sent: Vec<Value> = messages(o)
            .into_iter()
            .filter(|(d, v)| d == "sent" && v["method"] == "tools/call")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(sent.len(), 2, "{o}");
        let notes: Vec<&str> = o["mcp"]["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["direction"] == "note")
            .filter_map(|e| e["text"].as_str())
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("retried once, alone, on a fresh server process")),
            "{notes:?}"
        );
    }
    let kills = trial(&trials, "kills");
    assert_eq!(kills["verdict"], "error", "{kills}");
    let why = kills["reasons"][0]["message"].as_str().unwrap();
    assert!(
        why.starts_with("round 1: tool host `mcp` failed to answer a call of `crash`: this call kills the MCP server: the server died during it while other calls were in flight, and again when it was retried alone on a fresh server: "),
        "{why}"
    );
    // Alone on the fresh server, the last words are its own.
    assert!(why.contains("crashing on purpose"), "{why}");
    let counts = trial(&trials, "counts");
    assert_eq!(counts["verdict"], "error", "{counts}");
    let why = counts["reasons"][0]["message"].as_str().unwrap();
    assert!(
        why.contains("died while this call was in flight together with other calls, so another call may have killed it; it was not retried because `slow_count` is neither read-only nor idempotent"),
        "{why}"
    );
    assert!(
        !why.contains("crashing on purpose"),
        "another trial's stderr: {why}"
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn import_from_another_directory_writes_the_server_relative_to_the_suite_which_runs_from_anywhere()
{
    // Issue 31: `import mcp` from another directory kept a cwd-relative server command in
    // the suite, which then worked only from that directory. A suite's `stdio:` server
    // now starts in the suite's directory, and the import writes the command's relative
    // paths as seen from there.
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let root = t.path();
    let srv = root.join("work/srv");
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::create_dir_all(root.join("elsewhere")).unwrap();
    for f in ["sdk_server.py", "loop_server.py"] {
        std::fs::copy(p.server_script(f), srv.join(f)).unwrap();
    }
    let python = p.python.display().to_string();
    let server = format!("stdio:{python} srv/loop_server.py stdio");
    let o = t
        .run_in(
            &root.join("work"),
            &["import", "mcp", &server, "--out", "../suites/mine.yaml"],
        )
        .expect_code(OK);
    o.stdout_has(&["the server's relative paths are written relative to the suite's directory, where a suite's server starts: srv/loop_server.py -> ../work/srv/loop_server.py\n"]);
    let imported = t.read("suites/mine.yaml");
    let written = format!("  mcp: \"stdio:{python} ../work/srv/loop_server.py stdio\"\n");
    assert!(imported.contains(&written), "{imported}");
    // The snapshot keeps the server as it was named.
    let snap: Value = serde_json::from_str(&t.read("suites/mine.snapshot.json")).unwrap();
    assert_eq!(snap["server"], server.as_str());

    // The imported `tools_from`, with a loop case in place of the placeholders, runs
    // against the server from any directory.
    let tools_from =
        &imported[imported.find("tools_from:").unwrap()..imported.find("\nvariants:").unwrap()];
    t.write(
        "suites/mine.yaml",
        format!(
            "name: mine\n{tools_from}\ncases:\n{}",
            one_call_case("adds")
        ),
    );
    t.write(
        "suites/script.yaml",
        format!(
            "responses:\n{}",
            one_call_script("adds", "add", "{a: 2, b: 40}", "It is 42.")
        ),
    );
    for (cwd, suite, script) in [
        (
            "elsewhere",
            "../suites/mine.yaml",
            "scripted:../suites/script.yaml",
        ),
        ("suites", "mine.yaml", "scripted:script.yaml"),
    ] {
        t.run_in(
            &root.join(cwd),
            &[
                "run",
                suite,
                "-t",
                script,
                "--out",
                "../out",
                "--overwrite",
                "--format",
                "json",
            ],
        )
        .expect_code(OK);
        let trials = journal(&t, "out");
        let o = outcome(trial(&trials, "adds"), 0, 0);
        assert_eq!(o["content"], "42", "from {cwd}: {o}");
    }

    // Without a snapshot the suite lists the server's tools when it loads: from there too.
    t.write(
        "suites/live.yaml",
        format!("tools_from:\n  mcp: \"stdio:{python} ../work/srv/loop_server.py stdio\"\n{CASES}"),
    );
    t.run_in(
        &root.join("elsewhere"),
        &["validate", "../suites/live.yaml"],
    )
    .expect_code(OK);
    // A command that does not start says where it was started.
    t.write(
        "suites/gone.yaml",
        format!("tools_from:\n  mcp: \"stdio:./no-such-server\"\n{CASES}"),
    );
    let e = t
        .run_in(
            &root.join("elsewhere"),
            &["validate", "../suites/gone.yaml"],
        )
        .expect_code(BAD_INPUT)
        .stderr;
    assert!(
        e.contains("cannot start `./no-such-server` (relative to `")
            && e.contains(
                "suites`, the suite's directory, where the server starts): no such program"
            ),
        "{e}"
    );
    assert!(
        e.contains("pin its tools once with `cd ../suites && toolgauge mcp snapshot stdio:./no-such-server FILE`"),
        "{e}"
    );
}

/// Cases of a suite the tests only validate.
const CASES: &str = "cases:\n  - id: a\n    kind: should_not_call\n    prompt: hi\n";

#[test]
fn an_unreachable_server_ends_each_loop_trial_with_a_stated_error() {
    // No peer needed: the server command does not exist.
    let t = Toolgauge::new();
    t.write("gone.snapshot.json", ADD_SNAPSHOT);
    t.write(
        "gone.yaml",
        r#"name: gone
tools_from:
  mcp: "stdio:/nonexistent/toolgauge-no-such-server --flag"
  # The tools are pinned, so the suite loads; the loop trials need the server itself.
  snapshot: gone.snapshot.json
cases:
  - id: loop-a
    kind: should_call
    prompt: add
    expect: {stop: answered}
  - id: loop-b
    kind: should_call
    prompt: add
    expect: {stop: answered}
  - id: single
    kind: should_call
    prompt: add
    expect: {calls: [{tool: add}]}
"#,
    );
    t.run(&[
        "run",
        "gone.yaml",
        "--target",
        "scripted:oracle",
        "--out",
        "out",
        "--format",
        "json",
    ])
    .expect_code(RUN_INCOMPLETE);
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 3, "no trial is lost");
    for id in ["loop-a", "loop-b"] {
        let tr = trial(&trials, id);
        assert_eq!(tr["verdict"], "error", "{tr}");
        assert_eq!(tr["reasons"][0]["code"], "tool_error");
        let why = tr["reasons"][0]["message"].as_str().unwrap();
        assert!(why.contains("could not start the episode"), "{why}");
        assert!(
            why.contains("/nonexistent/toolgauge-no-such-server"),
            "{why}"
        );
        assert_eq!(tr["episode"]["rounds"], serde_json::json!([]));
    }
    // A case without loop keys stays a single request: no server needed.
    assert_eq!(trial(&trials, "single")["verdict"], "pass");
}

#[test]
fn the_execution_keys_are_checked_where_they_are_written() {
    let t = Toolgauge::new();
    t.write("k.snapshot.json", ADD_SNAPSHOT);
    let suite = |extra: &str| {
        format!(
            "name: k\n# The server's tools are pinned in k.snapshot.json,\n# so these suites load without the server;\n# only loop trials would start it.\n#\ntools_from:\n  mcp: \"stdio:server\"\n{extra}  snapshot: k.snapshot.json\ncases:\n  - id: c\n    kind: should_call\n    prompt: p\n    expect: {{stop: answered}}\n"
        )
    };
    t.write(
        "ok.yaml",
        suite("  isolation: trial\n  allow: [add]\n  allow_destructive: false\n  input: {accept: {ok: true}}\n"),
    );
    t.run(&["validate", "ok.yaml"]).expect_code(OK);
    t.write("iso.yaml", suite("  isolation: process\n"));
    t.run(&["validate", "iso.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["iso.yaml:8", "isolation", "suite", "trial"]);
    t.write("input.yaml", suite("  input: maybe\n"));
    t.run(&["validate", "input.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["input.yaml:8", "refuse", "decline", "accept"]);
    t.write("allow.yaml", suite("  allow: [add, \" \"]\n"));
    t.run(&["validate", "allow.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["allow.yaml:8", "tools_from.allow[1]", "empty tool name"]);
    t.write("spec.yaml", suite("").replace("stdio:server", "ftp://x"));
    t.run(&["validate", "spec.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["spec.yaml:7", "tools_from.mcp", "ftp://x"]);
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_shipped_filesystem_example_runs_against_the_server() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let root = crate::support::repo_root();
    let dir = t.path().join("examples/mcp/data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root.join("examples/mcp/data/notes.txt"),
        dir.join("notes.txt"),
    )
    .unwrap();
    // The example spawns the server with npx (a download); here the installed copy.
    let suite = std::fs::read_to_string(root.join("examples/mcp/filesystem.yaml")).unwrap();
    let npx = "stdio:npx -y @modelcontextprotocol/server-filesystem";
    assert!(suite.contains(npx));
    let local = format!("stdio:{} {}", p.node.display(), p.filesystem().display());
    t.write("examples/mcp/filesystem.yaml", suite.replace(npx, &local));
    t.write(
        "examples/mcp/filesystem.script.yaml",
        std::fs::read_to_string(root.join("examples/mcp/filesystem.script.yaml")).unwrap(),
    );
    t.run(&[
        "run",
        "examples/mcp/filesystem.yaml",
        "--target",
        "scripted:examples/mcp/filesystem.script.yaml",
        "--out",
        "out",
        "--format",
        "json",
    ])
    .expect_code(OK);
    let trials = journal(&t, "out");
    assert_eq!(trial(&trials, "read-notes")["verdict"], "pass");
    let write = trial(&trials, "write-outside");
    assert_eq!(write["verdict"], "pass", "{write}");
    assert_eq!(outcome(write, 0, 0)["error_kind"], "refused");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn concurrent_calls_on_one_shared_server_keep_only_their_own_exchanges() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    // Two calls per turn, three trials at once, one server: six calls in flight together.
    t.write(
        "script.yaml",
        "responses:\n  - {case: two, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}, {name: add, arguments: {a: 5, b: 5}}]}\n  - {case: two, round: 2, text: \"3 and 10\"}\n",
    );
    t.write(
        "two.yaml",
        sdk_suite(
            &p,
            "  isolation: suite",
            "  - id: two\n    kind: should_call\n    prompt: add twice\n    expect: {stop: answered}\n",
        ),
    );
    run(
        &t,
        "two.yaml",
        "script.yaml",
        "out",
        &["--repeats", "3", "-j", "3"],
        OK,
    );
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 3);
    for tr in &trials {
        for (i, (args, sum)) in [((1, 2), 3), ((5, 5), 10)].into_iter().enumerate() {
            let o = outcome(tr, 0, i);
            assert_eq!(o["content"], sum.to_string(), "{o}");
            let calls: Vec<Value> = messages(o)
                .into_iter()
                .filter(|(d, v)| d == "sent" && v["method"] == "tools/call")
                .map(|(_, v)| v)
                .collect();
            assert_eq!(calls.len(), 1, "only this call's request: {o}");
            assert_eq!(
                calls[0]["params"]["arguments"],
                serde_json::json!({"a": args.0, "b": args.1})
            );
            let (_, answer) = call_and_answer(o);
            assert_eq!(answer["result"]["structuredContent"]["result"], sum);
            // Every response in the transcript answers this call's request.
            for (d, v) in messages(o) {
                if d == "received" && v.get("method").is_none() {
                    assert_eq!(v["id"], calls[0]["id"], "{o}");
                }
            }
        }
    }
}
