//! `world: {bfcl: ...}` cases run as tool loops: BFCL's backends answer the model's calls,
//! tools withheld until a turn are offered from it on, BFCL's step limit ends a turn, and
//! the `bfcl` profile judges the whole episode with BFCL's multi-turn checker (its error
//! types as reason codes). Bad world settings are refused at load with the field.

use serde_json::Value;

use crate::support::{BAD_INPUT, OK, Toolgauge};

const SUITE: &str = r#"
name: bfcl-world
profile: {bfcl: {category: multi_turn_base}}
limits: {max_rounds: 100, max_tool_calls: 1000, max_identical_calls: 1000, max_rounds_per_turn: 2}
tools:
  - name: add
    description: Add two numbers.
    parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}
  - name: mean
    description: The mean of a list of numbers.
    parameters: {type: object, properties: {numbers: {type: array, items: {type: number}}}, required: [numbers]}
cases:
  - id: right
    kind: should_call
    prompt: "Add 1 and 2."
    turns: ["现在算 1、2、3 的平均值。"]
    withheld: {mean: 1}
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI], ground_truth: [["add(a=1,b=2)"], ["mean(numbers=[1,2,3])"]]}}
  - id: wrong-mean
    kind: should_call
    prompt: "Add 1 and 2."
    turns: ["And the mean of 1, 2 and 3?"]
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI], ground_truth: [["add(a=1,b=2)"], ["mean(numbers=[1,2,3])"]]}}
  - id: silent-turn
    kind: should_call
    prompt: "Add 1 and 2."
    turns: ["And the mean of 1, 2 and 3?"]
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI], ground_truth: [["add(a=1,b=2)"], ["mean(numbers=[1,2,3])"]]}}
  - id: runaway
    kind: should_call
    prompt: "Add 1 and 2."
    turns: ["And the mean of 1, 2 and 3?"]
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI], ground_truth: [["add(a=1,b=2)"], ["mean(numbers=[1,2,3])"]]}}
"#;

const SCRIPT: &str = r#"
responses:
  - {case: right, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}]}
  - {case: right, round: 2, text: "3"}
  - {case: right, round: 3, calls: [{name: mean, arguments: {numbers: [1, 2, 3]}}]}
  - {case: right, round: 4, text: "2"}
  - {case: wrong-mean, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}]}
  - {case: wrong-mean, round: 2, text: "3"}
  - {case: wrong-mean, round: 3, calls: [{name: mean, arguments: {numbers: [1, 2]}}]}
  - {case: wrong-mean, round: 4, text: "1.5"}
  - {case: silent-turn, round: 1, calls: [{name: add, arguments: {a: 1, b: 2}}]}
  - {case: silent-turn, round: 2, text: "3"}
  - {case: silent-turn, round: 3, text: "I cannot compute a mean."}
  - {case: runaway, calls: [{name: add, arguments: {a: 1, b: 2}}]}
"#;

fn trials(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn trial<'a>(all: &'a [Value], id: &str) -> &'a Value {
    all.iter().find(|t| t["case_id"] == id).unwrap()
}

fn codes(t: &Value) -> Vec<String> {
    t["reasons"]
        .as_array()
        .map(|r| {
            r.iter()
                .map(|r| r["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn bfcl_world_cases_are_judged_by_bfcls_multi_turn_checker() {
    let t = Toolgauge::new();
    t.write("suite.yaml", SUITE);
    t.write("script.yaml", SCRIPT);
    t.run(&[
        "run",
        "suite.yaml",
        "-t",
        "scripted:script.yaml",
        "--out",
        "out",
        "-q",
    ])
    .expect_code(OK);
    let all = trials(&t.path().join("out"));
    assert_eq!(all.len(), 4);
    let right = trial(&all, "right");
    assert_eq!(right["verdict"], "pass", "{right:#}");
    // BFCL's math backend answered the model, in BFCL's own text.
    let rounds = right["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds[0]["outcomes"][0]["content"], r#"{"result": 3}"#);
    assert_eq!(rounds[2]["outcomes"][0]["content"], r#"{"result": 2.0}"#);

    let wrong = trial(&all, "wrong-mean");
    assert_eq!(codes(wrong), ["multi_turn:execution_response_mismatch"]);
    let message = wrong["reasons"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("for turn 1") && message.contains(r#"{"result": 2.0}"#),
        "{message}"
    );

    assert_eq!(
        codes(trial(&all, "silent-turn")),
        ["multi_turn:empty_turn_model_response"]
    );

    // Two rounds of calls are allowed per turn; the third is answered, then the episode
    // stops in turn 0 of 2: BFCL's force termination.
    let runaway = trial(&all, "runaway");
    assert_eq!(runaway["episode"]["rounds"].as_array().unwrap().len(), 3);
    assert_eq!(codes(runaway), ["multi_turn:force_terminated"]);
}

#[test]
fn bad_world_settings_are_refused_with_their_field() {
    let t = Toolgauge::new();
    t.write(
        "suite.yaml",
        SUITE
            .replace(
                "classes: [MathAPI], ground_truth",
                "classes: [MathApi], ground_truth",
            )
            .replace("withheld: {mean: 1}", "withheld: {mean: 5}"),
    );
    let out = t.run(&["validate", "suite.yaml"]).expect_code(BAD_INPUT);
    let err = &out.stderr;
    for needle in [
        "cases[0].world.bfcl.classes",
        "unknown BFCL backend class `MathApi`",
        "did you mean `MathAPI`",
        "cases[0].withheld.mean",
        "the case has 1 scripted user turn(s)",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
}

const FILES: &str = r#"
name: bfcl-files
tools:
  - name: mkdir
    description: Make a directory in the current one.
    parameters: {type: object, properties: {dir_name: {type: string}}, required: [dir_name]}
cases:
  - id: make-docs
    kind: should_call
    prompt: "在当前目录下建一个 docs 文件夹。"
    expect:
      any_call: true
      end_state:
        - {state: {GorillaFileSystem: {root: {name: alex, contents: {docs: {contents: {}}}}}}}
        - {call: mkdir, args: {dir_name: docs}, result: {error: {regex: "File exists"}}}
    world: {bfcl: {classes: [GorillaFileSystem], initial_config: {GorillaFileSystem: {root: {alex: {type: directory, contents: {}}}}}}}
  - id: make-nothing
    kind: should_call
    prompt: "Make a docs folder."
    expect:
      any_call: true
      end_state:
        - {state: {GorillaFileSystem: {root: {contents: {docs: {contents: {}}}}}}}
    world: {bfcl: {classes: [GorillaFileSystem], initial_config: {GorillaFileSystem: {root: {alex: {type: directory, contents: {}}}}}}}
"#;

const FILES_SCRIPT: &str = r#"
responses:
  - {case: make-docs, round: 1, calls: [{name: mkdir, arguments: {dir_name: docs}}]}
  - {case: make-docs, round: 2, text: "Done."}
  - {case: make-nothing, round: 1, calls: [{name: mkdir, arguments: {dir_name: doc}}]}
  - {case: make-nothing, round: 2, text: "Done."}
"#;

#[test]
fn end_state_reads_a_built_in_worlds_state_with_matchers() {
    let t = Toolgauge::new();
    t.write("files.yaml", FILES);
    t.write("script.yaml", FILES_SCRIPT);
    t.run(&[
        "run",
        "files.yaml",
        "-t",
        "scripted:script.yaml",
        "--out",
        "out",
        "-q",
    ])
    .expect_code(OK);
    let all = trials(&t.path().join("out"));
    let made = trial(&all, "make-docs");
    assert_eq!(made["verdict"], "pass", "{made:#}");
    let end = made["episode"]["end_state"].as_array().unwrap();
    assert_eq!(end[0]["state"], true);
    let state: Value = serde_json::from_str(end[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        state["GorillaFileSystem"]["root"]["contents"]["docs"]["name"],
        "docs"
    );
    let lines = made["episode"]["checks"]["lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| l["check"] == "end_state"
            && l["text"]
                .as_str()
                .unwrap()
                .starts_with("leaves a world whose state holds")),
        "{lines:#?}"
    );
    // The wrong directory: the state check names the path it missed.
    let wrong = trial(&all, "make-nothing");
    assert_eq!(codes(wrong), ["end_state_mismatch"]);
    let message = wrong["reasons"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("after the episode, the world's state was ")
            && message.contains("`state.GorillaFileSystem.root.contents.docs`"),
        "{message}"
    );
}

/// The shipped example: BFCL's file system as a built-in world, offline. The oracle
/// passes every case (and its self-test plays the world too, so it warns of nothing); a
/// model that repeats its first call is stopped.
#[test]
fn the_shipped_files_example_runs_offline_on_the_built_in_world() {
    let t = Toolgauge::new();
    let example = crate::support::repo_root().join("examples/stateful/files.yaml");
    let example = example.to_str().unwrap();
    let o = t.run(&["run", example, "--out", "oracle"]).expect_code(OK);
    assert!(!o.stderr.contains("can not satisfy"), "{}", o.stderr);
    let all = trials(&t.path().join("oracle"));
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|t| t["verdict"] == "pass"), "{all:#?}");
    let made = trial(&all, "make-docs-zh");
    assert_eq!(made["episode"]["end_state"][0]["state"], true);
    t.run(&[
        "run",
        example,
        "-t",
        "scripted:loop_forever",
        "--out",
        "runaway",
        "-q",
    ])
    .expect_code(OK);
    for tr in trials(&t.path().join("runaway")) {
        assert_eq!(codes(&tr), ["loop_stopped"], "{tr:#}");
    }
}
