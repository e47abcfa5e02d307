//! Bad input: every broken suite or flag exits 2 with a message that names the file,
//! line and column, the field where there is one, and a hint; no run directory is made.

use crate::support::{BAD_INPUT, OK, Output, Toolgauge};

/// What the message about a bad suite must say.
struct Expect<'a> {
    /// `LINE:COLUMN` after the file name (`None`: the problem has no single place).
    at: Option<&'a str>,
    /// The `field:` line, where the problem has a field path.
    field: Option<&'a str>,
    /// Text the message must contain (the user's values, what is wrong).
    says: &'a [&'a str],
    /// Text the `hint:` line must contain.
    hint: &'a str,
}

/// Run fixture `bad/NAME` and check the diagnostic.
#[track_caller]
fn refuse(name: &str, e: Expect<'_>) -> Output {
    let t = Toolgauge::new();
    let file = t.fixture(&format!("bad/{name}"));
    let o = t
        .run(&["run", &file, "--out", "out"])
        .expect_code(BAD_INPUT);
    let place = match e.at {
        Some(at) => format!("error: {file}:{at}: "),
        None => format!("error: {file}: "),
    };
    o.stderr_has(&[&place]);
    if let Some(field) = e.field {
        let line = o
            .stderr
            .lines()
            .find(|l| l.trim_start().starts_with("field: "))
            .unwrap_or_else(|| panic!("no `field:` line in:\n{}", o.stderr));
        assert!(
            line.contains(field),
            "field line {line:?} should name {field:?}; stderr:\n{}",
            o.stderr
        );
    }
    o.stderr_has(e.says);
    let hint = o
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("hint: "))
        .unwrap_or_else(|| panic!("no `hint:` line for {name}:\n{}", o.stderr));
    assert!(
        hint.contains(e.hint),
        "hint {hint:?} should contain {:?}",
        e.hint
    );
    o.stderr_has(&["1 problem found; the suite was not loaded"]);
    assert!(
        !t.path().join("out").exists(),
        "bad input must not create a run directory"
    );
    o
}

#[test]
fn yaml_syntax_error_is_located_and_has_a_hint() {
    refuse(
        "yaml_syntax.yaml",
        Expect {
            // The unclosed `{` on line 5 is noticed where the next key starts.
            at: Some("6:1"),
            field: None,
            says: &["did not find expected ',' or '}'"],
            hint: "",
        },
    );
}

#[test]
fn unknown_top_level_key_names_the_key_and_the_accepted_keys() {
    refuse(
        "unknown_key_top.yaml",
        Expect {
            at: Some("16:1"),
            field: None,
            says: &["unknown field `matrx`", "expected one of name,", "matrix"],
            hint: "check the spelling",
        },
    );
}

#[test]
fn unknown_key_inside_a_case_names_the_key_and_the_case_keys() {
    refuse(
        "unknown_key_case.yaml",
        Expect {
            at: Some("12:5"),
            field: None,
            says: &["unknown field `promt`", "expected one of id, kind, prompt"],
            hint: "check the spelling",
        },
    );
}

#[test]
fn wrong_type_points_at_the_value() {
    let o = refuse(
        "wrong_type.yaml",
        Expect {
            at: Some("17:12"),
            field: None,
            says: &["expected a whole number", "repeats: three"],
            hint: "check the value's type",
        },
    );
    assert!(
        o.stderr.contains("^"),
        "a caret marks the value:\n{}",
        o.stderr
    );
}

#[test]
fn duplicate_case_id_mentions_the_first_line() {
    refuse(
        "duplicate_id.yaml",
        Expect {
            at: Some("19:9"),
            field: Some("cases[2].id"),
            says: &["duplicate case id `beijing`"],
            hint: "first used on line 10",
        },
    );
}

#[test]
fn expectation_naming_an_unknown_tool_lists_the_tools() {
    refuse(
        "unknown_tool.yaml",
        Expect {
            at: Some("15:19"),
            field: Some("cases[0].expect.calls[0].tool"),
            says: &["expectation names unknown tool `get_wether`"],
            hint: "the suite's tools are: `get_weather`",
        },
    );
}

#[test]
fn expectation_naming_an_unknown_parameter_lists_the_parameters() {
    refuse(
        "unknown_param.yaml",
        Expect {
            at: Some("16:40"),
            field: Some("cases[0].expect.calls[0].args.town"),
            says: &["unknown parameter `town` of tool `get_weather`"],
            hint: "`get_weather` parameters are: `city`, `date`",
        },
    );
}

#[test]
fn parameter_schema_that_does_not_compile_names_the_tool_and_the_bad_property() {
    refuse(
        "bad_schema.yaml",
        Expect {
            // The caret points at the bad `type` key on line 8, not at the whole schema.
            at: Some("8:17"),
            // The field leads to `properties.city.type` (where `strin` is), not to a path
            // inside the JSON Schema meta-schema.
            field: Some("tools[0].parameters.properties.city.type"),
            says: &[
                "the parameter schema of `get_weather` does not compile",
                "\"strin\"",
            ],
            hint: "valid JSON Schema (draft 2020-12)",
        },
    );
}

#[test]
fn unknown_matcher_suggests_the_closest_one() {
    refuse(
        "unknown_matcher.yaml",
        Expect {
            at: Some("17:19"),
            field: Some("cases[0].expect.calls[0].args.city"),
            says: &["unknown matcher `oneof`"],
            hint: "did you mean `one_of`",
        },
    );
}

#[test]
fn empty_file_is_refused_with_a_hint() {
    refuse(
        "empty.yaml",
        Expect {
            at: None,
            field: None,
            says: &["the suite file is empty"],
            hint: "a suite needs at least `tools:` and `cases:`",
        },
    );
}

#[test]
fn suite_with_no_cases_is_refused() {
    refuse(
        "no_cases.yaml",
        Expect {
            // The problem is the whole file's; it is reported at its start.
            at: Some("1:1"),
            field: Some("cases"),
            says: &["`cases` has no entries"],
            hint: "add at least one case",
        },
    );
}

#[test]
fn should_call_case_without_expected_calls_is_refused() {
    refuse(
        "should_call_without_calls.yaml",
        Expect {
            at: Some("10:9"),
            field: Some("cases[0].expect.calls"),
            says: &["a `should_call` case needs `expect.calls`"],
            hint: "list the expected calls",
        },
    );
}

#[test]
fn case_with_both_prompt_and_messages_is_refused() {
    refuse(
        "prompt_and_messages.yaml",
        Expect {
            at: Some("10:9"),
            field: Some("cases[0]"),
            says: &["case `beijing` has both `prompt` and `messages`"],
            hint: "use `prompt` for one user turn or `messages` for a conversation",
        },
    );
}

#[test]
fn invalid_regex_in_a_matcher_is_located() {
    refuse(
        "bad_regex.yaml",
        Expect {
            at: Some("17:19"),
            field: Some("cases[0].expect.calls[0].args.city.regex"),
            says: &["invalid regex `^(北京|Beijing`", "unclosed group"],
            hint: "Rust's `regex` crate",
        },
    );
}

#[test]
fn unknown_metric_in_thresholds_lists_the_metrics() {
    refuse(
        "unknown_metric.yaml",
        Expect {
            at: Some("17:15"),
            field: Some("thresholds[0].metric"),
            says: &["unknown metric `acuracy`"],
            hint: "metrics are: accuracy,",
        },
    );
}

/// Run the good weather fixture with bad flags `args`; expect exit 2 and no run directory.
#[track_caller]
fn refuse_flags(args: &[&str]) -> Output {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let mut all = vec!["run", suite.as_str(), "--out", "out"];
    all.extend_from_slice(args);
    let o = t.run(&all).expect_code(BAD_INPUT);
    assert!(
        !t.path().join("out").exists(),
        "bad flags must not create a run directory"
    );
    o
}

#[test]
fn unknown_tool_choice_flag_value_is_refused_with_the_accepted_values() {
    refuse_flags(&["--tool-choice", "sometimes"]).stderr_has(&[
        "unknown tool_choice `sometimes`",
        "none, auto, required or function:NAME",
        "hint: ",
    ]);
}

#[test]
fn unknown_format_is_refused_with_the_accepted_formats() {
    refuse_flags(&["--format", "json,pdf"]).stderr_has(&[
        "unknown format `pdf`",
        "hint: formats are: terminal, json, csv, junit, md, html",
    ]);
}

#[test]
fn unknown_scripted_behaviour_is_refused_with_the_behaviours() {
    refuse_flags(&["--target", "scripted:psychic"]).stderr_has(&[
        "unknown scripted behaviour `psychic`",
        "hint: scripted models are: oracle, no_call,",
    ]);
}

#[test]
fn live_target_without_a_key_is_refused_naming_the_variable() {
    // No cassette: the target runs live, and no key is in the environment.
    refuse_flags(&["--target", "openai:gpt-4o-mini"]).stderr_has(&[
        "target `openai:gpt-4o-mini` needs an API key in the environment variable OPENAI_API_KEY",
        "hint: export the key, or pass --api-key-env NAME",
    ]);
}

#[test]
fn unknown_live_provider_is_refused_with_the_providers() {
    refuse_flags(&["--target", "mystery:model"]).stderr_has(&[
        "unknown provider `mystery`",
        "hint: providers are: scripted, bfcl-result, openai, openai-compatible, ollama, anthropic, gemini",
    ]);
}

#[test]
fn a_json_suite_loads_and_its_errors_name_line_or_field() {
    let t = Toolgauge::new();
    let suite = serde_json::json!({
        "name": "j",
        "tools": [{"name": "get_weather", "description": "Weather.",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "cases": [{"id": "a", "kind": "should_call", "prompt": "Paris?",
                   "expect": {"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}]}}],
        "matrix": {"targets": ["scripted:oracle"]}
    });
    t.write("ok.json", serde_json::to_string_pretty(&suite).unwrap());
    t.run(&["run", "ok.json", "--out", "out", "--quiet"])
        .assert_code(OK);

    // Syntax: line and column from the JSON parser.
    t.write(
        "syntax.json",
        "{\n  \"name\": \"j\",\n  \"tools\": [,]\n}\n",
    );
    let o = t.run(&["validate", "syntax.json"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["syntax.json:3:", "read as JSON"]);

    // Meaning: the field path (JSON carries no locations into the checks).
    let mut bad = suite.clone();
    bad["cases"][0]["expect"]["calls"][0]["tool"] = "get_wether".into();
    t.write("bad.json", serde_json::to_string(&bad).unwrap());
    let o = t.run(&["validate", "bad.json"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["unknown tool `get_wether`", "cases[0].expect.calls[0].tool"]);
}

#[test]
fn a_big_suite_still_reports_a_broken_schema_where_it_is() {
    // Over 500 tool declarations: schemas are checked against the meta-schema when the
    // suite loads and compiled on first use; a broken one is still found at load.
    let t = Toolgauge::new();
    let cases: Vec<serde_json::Value> = (0..501)
        .map(|i| {
            let ty = if i == 321 { "strin" } else { "string" };
            serde_json::json!({
                "id": format!("c{i}"), "kind": "should_call", "prompt": "Paris?",
                "tools": [{"name": "get_weather", "description": "Weather.",
                           "parameters": {"type": "object", "properties": {"city": {"type": ty}}}}],
                "expect": {"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}]}
            })
        })
        .collect();
    let suite = serde_json::json!({"name": "big", "cases": cases,
                                   "matrix": {"targets": ["scripted:oracle"]}});
    t.write("big.json", serde_json::to_string(&suite).unwrap());
    let o = t.run(&["validate", "big.json"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "the parameter schema of `get_weather` does not compile",
        "cases[321].tools[0].parameters.properties.city.type",
    ]);
}
