//! Tool-loop suites (`mocks`, `limits`, `policy`, `turns`): validated now, refused by
//! `run` until the episode runner lands (never run as single-turn cases by mistake).

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

#[test]
fn the_documented_loop_suite_validates_and_run_refuses_it_without_writing_a_run() {
    let t = Toolgauge::new();
    t.write("loop.yaml", documented_example());
    let o = t.run(&["validate", "loop.yaml"]).expect_code(OK);
    assert_eq!(
        o.stdout.trim_end(),
        "loop.yaml: ok (3 tools, 1 cases, variants: default)"
    );
    let o = t
        .run(&[
            "run",
            "loop.yaml",
            "--target",
            "scripted:oracle",
            "--out",
            "out",
        ])
        .expect_code(BAD_INPUT);
    o.stderr_has(&[
        "error: loop.yaml: case `order-then-shipment` is a tool loop (it has mocks); this version validates loop suites but does not run them yet",
    ]);
    assert!(
        !t.path().join("out").exists(),
        "no run directory for a refused suite"
    );
}

#[test]
fn a_suite_whose_only_loop_case_is_further_down_is_refused_too() {
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
    expect: {calls: [{tool: ping}]}
"#,
    );
    t.run(&[
        "run",
        "mixed.yaml",
        "--target",
        "scripted:oracle",
        "--out",
        "out",
    ])
    .expect_code(BAD_INPUT)
    .stderr_has(&["case `looped` is a tool loop (it has mocks)"]);
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
fn loop_expectations_without_mocks_and_cassette_write_are_refused_too() {
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
    t.run(&["validate", "traj.yaml"]).expect_code(OK);
    t.run(&[
        "run",
        "traj.yaml",
        "--target",
        "scripted:oracle",
        "--out",
        "out",
    ])
    .expect_code(BAD_INPUT)
    .stderr_has(&[
        "case `pinged` is a tool loop (it has loop expectations); this version validates loop suites but does not run them yet",
    ]);
    assert!(!t.path().join("out").exists());
    // A cassette written from a script would hold first rounds only.
    t.write("loop.yaml", documented_example());
    t.write("script.yaml", "{}\n");
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
    .expect_code(BAD_INPUT)
    .stderr_has(&["case `order-then-shipment` is a tool loop (it has mocks)"]);
    assert!(!t.path().join("c.jsonl").exists());
}
