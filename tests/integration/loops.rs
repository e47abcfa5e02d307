//! Tool-loop suites (`mocks`, `limits`, `policy`, `turns`): validated, and run as
//! episodes of rounds whose every round is in the trial's record.

use crate::support::{BAD_INPUT, OK, Toolgauge, repo_root};

/// The example of docs/suite-format.md's "Tool loops" section.
fn documented_example() -> String {
    let doc = std::fs::read_to_string(repo_root().join("docs/suite-format.md")).unwrap();
    let section = &doc[doc
        .find("## Tool loops (mocks, limits, policy)")
        .expect("the Tool loops section")..];
    let start = section.find("```yaml\n").expect("a YAML example") + "```yaml\n".len();
    let end = start + section[start..].find("```").unwrap();
    section[start..end].to_string()
}

/// `trials.jsonl` of the run in `dir`, one value per line.
fn journal(t: &Toolgauge, dir: &str) -> Vec<serde_json::Value> {
    t.read(&format!("{dir}/trials.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_documented_loop_suite_validates_and_runs_as_an_episode() {
    let t = Toolgauge::new();
    t.write("loop.yaml", documented_example());
    let o = t.run(&["validate", "loop.yaml"]).expect_code(OK);
    assert_eq!(
        o.stdout.trim_end(),
        "loop.yaml: ok (3 tools, 1 case: 1 loop; variants: default)"
    );
    // A model that never calls: one round, answered; `expect.calls` fails on it.
    t.run(&[
        "run",
        "loop.yaml",
        "--target",
        "scripted:no_call",
        "--out",
        "out",
    ])
    .expect_code(OK);
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 1);
    let trial = &trials[0];
    // A loop trial's line stores its conversation once (format 3): the case's own
    // messages, the rest rebuilt from the rounds when read back.
    assert_eq!(trial["format"], 3);
    assert_eq!(trial["messages"].as_array().unwrap().len(), 1);
    let whole = &crate::support::read_back(&t.path().join("out/trials.jsonl"))[0];
    assert_eq!(trial["verdict"], "fail");
    let episode = &trial["episode"];
    // The scripted user turn follows the first text answer, so there are two rounds.
    let rounds = episode["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{episode}");
    assert_eq!(rounds[1]["user"], "那什么时候到？");
    assert_eq!(episode["stop"], "answered");
    // The conversation: prompt, answer, follow-up, answer.
    let roles: Vec<&str> = whole["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let codes: Vec<&str> = trial["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["missed_call"], "{trial}");
}

#[test]
fn a_loop_trial_answers_calls_from_the_mocks_and_sends_the_results_back() {
    let t = Toolgauge::new();
    t.write(
        "mixed.yaml",
        r#"
tools:
  - name: ping
    description: Ping
    parameters: {type: object}
cases:
  - {id: plain, kind: should_not_call, prompt: hi}
  - id: looped
    kind: should_call
    prompt: ping it
    mocks: {ping: [{result: pong}]}
    limits: {max_rounds: 3, max_identical_calls: 10}
    expect: {calls: [{tool: ping}], stop: max_rounds}
"#,
    );
    // `loop_forever` calls ping in every round: the loop runs until max_rounds.
    t.run(&[
        "run",
        "mixed.yaml",
        "--target",
        "scripted:loop_forever",
        "--out",
        "out",
    ]);
    let trials = journal(&t, "out");
    let plain = trials.iter().find(|x| x["case_id"] == "plain").unwrap();
    assert!(
        plain.get("episode").is_none(),
        "single-turn trials have no episode"
    );
    let looped = trials.iter().find(|x| x["case_id"] == "looped").unwrap();
    let rounds = looped["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "{looped}");
    assert_eq!(looped["episode"]["stop"], "max_rounds");
    // Rounds 1 and 2 were answered (one result each); round 3's call was not run.
    let answered: Vec<usize> = rounds
        .iter()
        .map(|r| r.get("outcomes").map_or(0, |o| o.as_array().unwrap().len()))
        .collect();
    assert_eq!(answered, [1, 1, 0]);
    assert_eq!(rounds[0]["outcomes"][0]["content"], "\"pong\"");
    let whole = crate::support::read_back(&t.path().join("out/trials.jsonl"));
    let looped_whole = whole.iter().find(|x| x["case_id"] == "looped").unwrap();
    let tool_messages = looped_whole["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(tool_messages, 2);
    // Each round's request is the conversation so far: 1, then 3, then 5 messages.
    let sent: Vec<u64> = rounds.iter().map(|r| r["sent"].as_u64().unwrap()).collect();
    assert_eq!(sent, [1, 3, 5]);
}

#[test]
fn every_problem_of_a_loop_suite_is_located() {
    let t = Toolgauge::new();
    let bad = documented_example()
        .replace("kind: rate_limit, times: 1", "kind: rate_limt, times: 1")
        .replace("confirm: [cancel_order]", "confirm: [cancel_ordr]");
    t.write("bad.yaml", &bad);
    // A misspelt kind is a shape problem, reported first (with the closest kind).
    t.run(&["validate", "bad.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "bad.yaml:19:20: unknown kind `rate_limt`",
            "did you mean `rate_limit`?",
        ]);
    t.write(
        "bad2.yaml",
        bad.replace("rate_limt", "rate_limit")
            .replace("max_rounds: 8", "max_rounds: 0"),
    );
    let o = t.run(&["validate", "bad2.yaml"]).expect_code(BAD_INPUT);
    o.stderr_has(&[
        "bad2.yaml:23:22: `max_rounds` must be between 1 and 100, got 0",
        "bad2.yaml:24:20: `confirm` names unknown tool `cancel_ordr`",
        "hint: did you mean `cancel_order`?",
        "2 problems found",
    ]);
}

#[test]
fn loop_expectations_without_mocks_are_an_error_at_the_case_and_cassette_write_tapes_every_round() {
    let t = Toolgauge::new();
    // No mocks: the trajectory could never be judged on a single round.
    t.write(
        "traj.yaml",
        r#"
tools:
  - name: ping
    description: Ping
    parameters: {type: object}
cases:
  - id: pinged
    kind: should_call
    prompt: ping it
    expect: {trajectory: {steps: [{tool: ping}]}, stop: answered}
"#,
    );
    let refused = [
        "traj.yaml:7:9: case `pinged` has loop expectations (trajectory, never, final or stop) but no tool loop: neither the suite nor the case gives `mocks`",
        "field: cases[0].expect",
        "hint: add `mocks:`",
    ];
    t.run(&["validate", "traj.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&refused);
    t.run(&[
        "run",
        "traj.yaml",
        "--target",
        "scripted:oracle",
        "--out",
        "out",
    ])
    .expect_code(BAD_INPUT)
    .stderr_has(&refused);
    assert!(!t.path().join("out").exists());
    // A cassette written from a script plays each loop trial's episode against the mocks
    // and keeps every round: here a text answer, the scripted follow-up, another answer.
    t.write("loop.yaml", documented_example());
    t.write(
        "script.yaml",
        "responses:\n  - {case: order-then-shipment, text: \"It is on its way.\"}\n",
    );
    t.run(&[
        "cassette",
        "write",
        "loop.yaml",
        "--script",
        "script.yaml",
        "--out",
        "c.jsonl",
        "--target",
        "openai:gpt-4o-mini",
    ])
    .expect_code(OK)
    .stdout_has(&["wrote 2 entries to c.jsonl"]);
    // Replayed, the recorded rounds give the same episode.
    t.run(&[
        "run",
        "loop.yaml",
        "--target",
        "openai:gpt-4o-mini",
        "--cassette",
        "c.jsonl",
        "--out",
        "out",
    ])
    .expect_code(OK);
    let trials = journal(&t, "out");
    assert_eq!(trials[0]["verdict"], "fail", "{}", trials[0]);
    assert_eq!(trials[0]["episode"]["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(trials[0]["episode"]["stop"], "answered");
}

#[test]
fn invalid_calls_of_later_rounds_are_scored_per_call_with_their_round() {
    let t = Toolgauge::new();
    t.write(
        "bad.yaml",
        r#"
tools:
  - name: ping
    description: Ping
    parameters: {type: object}
  - name: pong
    description: Pong
    parameters: {type: object}
cases:
  - id: looped
    kind: should_call
    prompt: ping it
    mocks: {ping: [{result: pong}]}
    expect: {calls: [{tool: ping}]}
"#,
    );
    // A script: round 1 calls `ping`, round 2 calls a tool that does not exist (the
    // host answers it with an unknown-tool error). Only round 2's call is invalid.
    t.write(
        "script.yaml",
        r#"responses:
  - {case: looped, round: 1, calls: [{name: ping, arguments: {}}]}
  - {case: looped, round: 2, calls: [{name: nonexistent_tool, arguments: {}}]}
  - {case: looped, round: 3, text: "Sorry, that tool does not exist."}
"#,
    );
    t.run(&[
        "run",
        "bad.yaml",
        "--target",
        "scripted:script.yaml",
        "--out",
        "out",
    ])
    .expect_code(OK);
    let trial = &journal(&t, "out")[0];
    let reasons: Vec<(String, String)> = trial["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["code"].as_str().unwrap().to_string(),
                r["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let unknown: Vec<&str> = reasons
        .iter()
        .filter(|(c, _)| c == "unknown_tool")
        .map(|(_, m)| m.as_str())
        .collect();
    assert_eq!(
        unknown,
        ["round 2: called `nonexistent_tool`, which is not one of the tools"],
        "{trial}"
    );
    // The only reason: round 1 is right, and the model owned up to the failure.
    assert_eq!(reasons.len(), 1, "{trial}");
    assert_eq!(trial["verdict"], "fail");
    let outcome = &trial["episode"]["rounds"][1]["outcomes"][0];
    assert_eq!(outcome["is_error"], true);
    assert_eq!(outcome["error_kind"], "unknown_tool");
}

#[test]
fn a_call_no_mock_answers_leaves_a_would_be_pass_without_a_verdict_and_a_failure_stands() {
    // Issue 31: a trial whose tool never ran (the harness answered `no_mock`) passed
    // when the model owned up to the error. A pass there rests on an answer the suite
    // never gave, so it is an error; what the model did wrong is still a failure.
    let t = Toolgauge::new();
    t.write(
        "pinned.yaml",
        r#"
tools:
  - name: add
    description: Add two integers
    parameters: {type: object, properties: {a: {type: integer}, b: {type: integer}}}
mocks:
  add:
    - when: {a: 1}
      result: 3
cases:
  - {id: honest, kind: should_call, prompt: add 2 and 40, expect: {stop: answered}}
  - {id: boasts, kind: should_call, prompt: add 2 and 40, expect: {stop: answered}}
  - {id: covered, kind: should_call, prompt: add 1 and 2, expect: {stop: answered}}
"#,
    );
    t.write(
        "script.yaml",
        r#"responses:
  - {case: honest, round: 1, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: honest, round: 2, text: "The tool failed, so I have no sum."}
  - {case: boasts, round: 1, calls: [{name: add, arguments: {a: 2, b: 40}}]}
  - {case: boasts, round: 2, text: "It is 42."}
  - {case: covered, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}]}
  - {case: covered, round: 2, text: "It is 3."}
"#,
    );
    t.run(&[
        "run",
        "pinned.yaml",
        "--target",
        "scripted:script.yaml",
        "--out",
        "out",
        "--format",
        "json",
    ])
    .expect_code(crate::support::RUN_INCOMPLETE)
    .stderr_has(&["1 of 3 trials could not be completed"]);
    let trials = journal(&t, "out");
    let of = |id: &str| trials.iter().find(|x| x["case_id"] == id).unwrap();
    let honest = of("honest");
    assert_eq!(honest["verdict"], "error", "{honest}");
    assert_eq!(honest["reasons"][0]["code"], "tool_error");
    let why = honest["reasons"][0]["message"].as_str().unwrap();
    assert!(
        why.starts_with(r#"round 1: the call of `add` with arguments {"a":2,"b":40} got no answer (tool `add` has no answer for these arguments in this test): the tool never ran"#),
        "{why}"
    );
    assert!(
        why.ends_with("give `add` a `result` or `error` mock rule that matches these arguments (or one without `when`)"),
        "{why}"
    );
    // The episode is kept whole: the model read the harness's error and answered.
    let o = &honest["episode"]["rounds"][0]["outcomes"][0];
    assert_eq!(o["error_kind"], "no_mock", "{o}");
    assert_eq!(o["executed"], false);
    assert_eq!(honest["episode"]["stop"], "answered");
    // Claiming a sum it never got is the model's failure, whatever the suite lacked.
    let boasts = of("boasts");
    assert_eq!(boasts["verdict"], "fail", "{boasts}");
    assert_eq!(boasts["reasons"][0]["code"], "no_recovery", "{boasts}");
    assert_eq!(of("covered")["verdict"], "pass");
}
