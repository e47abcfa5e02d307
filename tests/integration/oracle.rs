//! `run -t scripted:oracle` as a suite's self-test: it passes every trial of correct
//! suites that use every matcher, case kind and tool_choice mode (and of the shipped
//! suites), and names every expectation no model can meet, in the trial and on stderr.

use serde_json::Value;

use crate::support::{OK, Output, Toolgauge, repo_root};

/// Run `suite` against the oracle into `out`; the run's trials.
fn oracle_run(t: &Toolgauge, suite: &str) -> (Output, Vec<Value>) {
    let o = t.run(&["run", suite, "-t", "scripted:oracle", "--out", "out"]);
    o.assert_code(OK);
    let trials = t.run_dir("out").trials();
    (o, trials)
}

/// The failing trials as `case × mode`, sorted (the journal is in completion order).
fn failing(trials: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = trials
        .iter()
        .filter(|x| x["verdict"] != "pass")
        .map(|x| {
            format!(
                "{} × {}",
                x["case_id"].as_str().unwrap(),
                x["tool_choice"].as_str().unwrap()
            )
        })
        .collect();
    out.sort();
    out
}

fn assert_all_pass(suite: &str, trials: usize, o: &Output, got: &[Value]) {
    assert_eq!(got.len(), trials, "{suite}");
    assert_eq!(failing(got), Vec::<String>::new(), "{suite}");
    assert!(
        !o.stderr.contains("scripted:oracle can not satisfy"),
        "{suite}: {}",
        o.stderr
    );
}

/// No string argument is made up: every one appears in the conversation.
fn assert_grounded(suite: &str, trials: &[Value]) {
    for x in trials {
        for c in x["checks"]["calls"].as_array().into_iter().flatten() {
            assert!(c.get("ungrounded").is_none(), "{suite}: {x}");
        }
    }
}

#[test]
fn every_matcher_kind_against_tricky_schemas_passes() {
    let t = Toolgauge::new();
    let suite = t.fixture("oracle/matchers.yaml");
    let (o, trials) = oracle_run(&t, &suite);
    o.stdout_has(&["oracle-matchers: 42 trials, 42 passed, 0 failed, 0 errors"]);
    assert_all_pass(&suite, 42, &o, &trials);
    // The regex `X$` under the pattern `^[A-Z]{3}$`, the regex `^2026-1[0-2]-` under a
    // date pattern and format.
    let call = trials
        .iter()
        .find(|x| x["case_id"] == "regex-and-pattern")
        .map(|x| &x["response"]["tool_calls"][0]["arguments"])
        .and_then(Value::as_str)
        .unwrap();
    let args: Value = serde_json::from_str(call).unwrap();
    assert_eq!(
        (&args["to"], &args["date"]),
        (&Value::from("AAX"), &Value::from("2026-10-01"))
    );
}

#[test]
fn every_case_kind_under_every_tool_choice_mode_passes() {
    let t = Toolgauge::new();
    let suite = t.fixture("oracle/kinds.yaml");
    let (o, trials) = oracle_run(&t, &suite);
    o.stdout_has(&["oracle-kinds: 39 trials, 39 passed, 0 failed, 0 errors"]);
    assert_all_pass(&suite, 39, &o, &trials);
    for x in &trials {
        let calls: Vec<&str> = x["response"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        match x["tool_choice"].as_str().unwrap() {
            "none" => assert!(calls.is_empty(), "{x}"),
            "auto" => {}
            "required" => assert!(!calls.is_empty(), "{x}"),
            f => {
                let name = f.strip_prefix("function:").unwrap();
                assert!(!calls.is_empty() && calls.iter().all(|c| *c == name), "{x}");
            }
        }
    }
}

#[test]
fn the_same_suite_gets_the_same_answers() {
    // Keyed by trial: the journal is in completion order, which may differ.
    let answers = |t: &Toolgauge| -> Vec<(String, Value)> {
        let suite = t.fixture("oracle/matchers.yaml");
        let (_, trials) = oracle_run(t, &suite);
        let mut out: Vec<(String, Value)> = trials
            .into_iter()
            .map(|x| {
                let key = format!("{} × {}", x["case_id"], x["tool_choice"]);
                (key, x["response"].clone())
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let (a, b) = (Toolgauge::new(), Toolgauge::new());
    assert_eq!(answers(&a), answers(&b));
}

#[test]
fn expectations_no_model_can_meet_are_named() {
    let t = Toolgauge::new();
    let suite = t.fixture("oracle/unsatisfiable.yaml");
    let (o, trials) = oracle_run(&t, &suite);
    o.stdout_has(&["oracle-unsatisfiable: 16 trials, 3 passed, 13 failed, 0 errors"]);
    o.stderr_has(&[
        "warning: scripted:oracle can not satisfy 13 trial expectation(s) of suite `oracle-unsatisfiable`, so no model can pass them (check these cases): empty-regex, regex-outside-enum, regex-against-pattern, range-outside-schema, absent-but-required, text-contradiction, no-call-forced",
        "  - empty-regex under auto: `set_mode` call: `mode`: found no value that is a string matching /[^\\s\\S]/",
        "  - regex-outside-enum under required: `set_mode` call: `mode`: no value is both a string matching /^turbo$/ and valid against the parameter's schema",
        "  - text-contradiction under auto: the text answer: found no text that contains \"hello\" and matches /^bye$/",
        "  - no-call-forced under required: tool_choice `required` forces a call, but the case expects no call under `required`",
    ]);
    assert_eq!(
        failing(&trials),
        [
            "absent-but-required × auto",
            "absent-but-required × required",
            "empty-regex × auto",
            "empty-regex × required",
            "no-call-forced × required",
            "range-outside-schema × auto",
            "range-outside-schema × required",
            "regex-against-pattern × auto",
            "regex-against-pattern × required",
            "regex-outside-enum × auto",
            "regex-outside-enum × required",
            "text-contradiction × auto",
            "text-contradiction × required",
        ]
    );
    // Each failing trial's response says what could not be satisfied.
    for x in trials.iter().filter(|x| x["verdict"] != "pass") {
        let text = x["response"]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("[scripted:oracle could not satisfy this expectation: "),
            "{x}"
        );
    }
}

#[test]
fn shipped_suites_pass_except_where_tool_choice_makes_the_expectation_impossible() {
    for (name, trials) in [
        ("enum", 32),
        ("parallel", 24),
        ("weather", 52),
        ("when_to_call", 26),
    ] {
        let t = Toolgauge::new();
        let suite = repo_root().join(format!("suites/{name}.yaml"));
        let (o, got) = oracle_run(&t, suite.to_str().unwrap());
        assert_all_pass(name, trials, &o, &got);
        assert_grounded(name, &got);
    }
    // tool_choice.yaml measures what forcing a call does: its unrelated questions (and
    // the stock question under `function:get_weather`) expect no call even under the
    // modes that force one, so no model honouring tool_choice can pass those 7 trials.
    let t = Toolgauge::new();
    let suite = repo_root().join("suites/tool_choice.yaml");
    let (o, got) = oracle_run(&t, suite.to_str().unwrap());
    o.stderr_has(&["warning: scripted:oracle can not satisfy 7 trial expectation(s) of suite `tool_choice`, so no model can pass them (check these cases): stock-en, joke-en, unit-conversion-zh, final-answer-zh"]);
    assert_eq!(
        failing(&got),
        [
            "final-answer-zh × function:get_weather",
            "final-answer-zh × required",
            "joke-en × function:get_weather",
            "joke-en × required",
            "stock-en × function:get_weather",
            "unit-conversion-zh × function:get_weather",
            "unit-conversion-zh × required",
        ]
    );
    assert_eq!(got.len(), 36);
}
