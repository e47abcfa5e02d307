//! `expect.end_state`: the world a loop episode leaves, read on its own MCP session after
//! it ends. The shipped example (`examples/stateful/`: three bank accounts behind a Python
//! SDK server, a fresh one per trial) passes with the oracle and names the balances a
//! runaway transfer loop leaves; suites that cannot have end-state checks are refused.

use serde_json::Value;

use crate::mcp_peers::peers;
use crate::support::{BAD_INPUT, OK, Toolgauge, repo_root};

const BANK: &str = "examples/stateful/bank.yaml";

fn trials(dir: &std::path::Path) -> Vec<Value> {
    let mut v: Vec<Value> = std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    v.sort_by(|a, b| a["case_id"].as_str().cmp(&b["case_id"].as_str()));
    v
}

fn reasons(t: &Value, code: &str) -> Vec<String> {
    t["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["code"] == code)
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_bank_example_checks_the_balances_each_episode_leaves() {
    if peers().is_none() {
        return;
    }
    let t = Toolgauge::new();
    let out = t.path().join("oracle");
    let out_arg = out.display().to_string();
    // The oracle transfers once, for the right amount: every check holds.
    t.run_in(&repo_root(), &["run", BANK, "--out", &out_arg, "-q"])
        .expect_code(OK);
    let all = trials(&out);
    assert_eq!(all.len(), 3);
    for tr in &all {
        assert_eq!(tr["verdict"], "pass", "{tr:#}");
    }
    let t30 = all.iter().find(|t| t["case_id"] == "transfer-30").unwrap();
    let results = t30["episode"]["end_state"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["tool"], "get_balance");
    assert_eq!(results[0]["args"]["account_id"], "ACC-1");
    let read: Value = serde_json::from_str(results[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(read["balance"], 220, "ACC-2 after one transfer of 30");
    let lines = t30["episode"]["checks"]["lines"].as_array().unwrap();
    let end: Vec<&Value> = lines.iter().filter(|l| l["check"] == "end_state").collect();
    assert_eq!(end.len(), 2);
    assert_eq!(
        end[1]["text"],
        "leaves a world where `get_balance(account_id: \"ACC-2\")` returns {balance: 220}"
    );
    assert!(end.iter().all(|l| l["ok"] == true));

    // A model that repeats the transfer until a limit stops it: each trial's fresh bank
    // shows exactly what its own episode did (three transfers of 30 before the limit).
    let out = t.path().join("runaway");
    let out_arg = out.display().to_string();
    t.run_in(
        &repo_root(),
        &[
            "run",
            BANK,
            "-t",
            "scripted:loop_forever",
            "--out",
            &out_arg,
            "-q",
        ],
    )
    // No threshold: the run itself succeeds; the trials say what failed.
    .expect_code(OK);
    let all = trials(&out);
    let t30 = all.iter().find(|t| t["case_id"] == "transfer-30").unwrap();
    assert_eq!(
        reasons(t30, "end_state_mismatch"),
        [
            "after the episode, `get_balance(account_id: \"ACC-1\")` returned {\"account_id\":\"ACC-1\",\"balance\":160}: `result.balance` expected 220, got 160",
            "after the episode, `get_balance(account_id: \"ACC-2\")` returned {\"account_id\":\"ACC-2\",\"balance\":280}: `result.balance` expected 220, got 280",
        ]
    );
    // 190 - 2 × 90 leaves 10; the third transfer fails for want of funds. ACC-3 holds
    // 220, which the `range` matcher accepts.
    let zh = all.iter().find(|t| t["case_id"] == "transfer-zh").unwrap();
    let got = reasons(zh, "end_state_mismatch");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].ends_with("`result.balance` expected 100, got 10"),
        "{}",
        got[0]
    );
    // The question changes nothing: its end state holds though the loop failed.
    let q = all
        .iter()
        .find(|t| t["case_id"] == "balance-question")
        .unwrap();
    assert!(reasons(q, "end_state_mismatch").is_empty());
    assert_eq!(q["verdict"], "fail");
}

#[test]
fn end_state_needs_a_server_and_a_known_tool() {
    let t = Toolgauge::new();
    t.write(
        "mocked.yaml",
        r#"
name: mocked
tools:
  - name: get_balance
    description: Balance of one account.
    parameters: {type: object, properties: {account_id: {type: string}}, required: [account_id]}
mocks:
  get_balance: [{result: {balance: 10}}]
cases:
  - id: q
    kind: should_call
    prompt: "Balance of ACC-1?"
    expect:
      end_state:
        - {call: get_balance, args: {account_id: ACC-1}, result: {balance: 10}}
        - {call: get_balanse, result: 1}
"#,
    );
    t.run(&["validate", "mocked.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "`end_state` calls tools after the episode on its MCP server, but case `q` has none",
            "isolation: trial",
            "cases[0].expect.end_state[1].call",
            "did you mean `get_balance`?",
        ]);
}
