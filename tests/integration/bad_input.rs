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
            field: Some("matrx"),
            says: &["unknown field `matrx`"],
            hint: "did you mean `matrix`? the keys here are: name, description,",
        },
    );
}

#[test]
fn unknown_key_inside_a_case_names_the_key_and_the_case_keys() {
    refuse(
        "unknown_key_case.yaml",
        Expect {
            at: Some("12:5"),
            field: Some("cases[0].promt"),
            says: &["unknown field `promt`"],
            hint: "did you mean `prompt`? the keys here are: id, kind, prompt,",
        },
    );
}

#[test]
fn wrong_type_points_at_the_value() {
    let o = refuse(
        "wrong_type.yaml",
        Expect {
            at: Some("17:12"),
            field: Some("matrix.repeats"),
            says: &[
                "`repeats` must be a whole number, got `three`",
                "repeats: three",
            ],
            hint: "check the value against docs/suite-format.md",
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
                "`strin` is not a JSON Schema type",
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

/// Texts of the parsing libraries that must never reach a user.
const JARGON: &[&str] = &[
    "DuplicateKeyPolicy",
    "Options",
    "budget breached",
    "Depth {",
    "configured policy",
    "any of the given schemas",
    "listed in the 'anyOf'",
    "additionalProperties",
    "serde",
];

/// `validate FILE` (written from `text`) exits 2; stderr is returned after checking it
/// holds no library jargon.
#[track_caller]
fn problems_of(name: &str, text: &str) -> String {
    let t = Toolgauge::new();
    t.write(name, text);
    let o = t.run(&["validate", name]).expect_code(BAD_INPUT);
    for word in JARGON {
        assert!(
            !o.stderr.contains(word),
            "jargon {word:?} in:\n{}",
            o.stderr
        );
    }
    o.stderr
}

const TOOL: &str = "tools:\n  - name: get_weather\n    description: Weather.\n    parameters: {type: object, properties: {city: {type: string}}}\n";

#[test]
fn every_shape_problem_of_a_file_is_listed_at_once() {
    let text = format!(
        "{TOOL}cases:
  - id: a
    kind: shuold_call
    prompt: hi
    tags: lots
    expect: {{calz: [], count: sometimes}}
  - kind: should_not_call
    prompt: hi
    bogus: 1
matrix: {{targets: [scripted:oracle], repeats: many, tool_choice: [auto, forced]}}
sampling: {{temperature: hot, parallel_tool_calls: yes}}
normalize: [casefold, lowercase]
"
    );
    let err = problems_of("s.yaml", &text);
    let want = [
        "s.yaml:7:11: unknown kind `shuold_call`",
        "hint: did you mean `should_call`? `kind` takes `should_call`, `should_not_call` or `ambiguous`",
        "s.yaml:9:11: `tags` must be a list, got `lots`",
        "s.yaml:10:14: unknown field `calz`",
        "hint: did you mean `calls`? the keys here are: calls, count, any_call,",
        "s.yaml:10:31: unknown count `sometimes`",
        "hint: `count` takes `exact` or `at_least`",
        "s.yaml:11:5: missing field `id` in `cases[1]`",
        "s.yaml:13:5: unknown field `bogus`",
        "s.yaml:14:47: `repeats` must be a whole number, got `many`",
        "s.yaml:14:73: unknown value `forced` in `tool_choice`",
        "s.yaml:15:25: `temperature` must be a number, got `hot`",
        "s.yaml:15:51: `parallel_tool_calls` must be true or false, got `yes`",
        "hint: write `true` or `false` (YAML 1.2: `yes`, `no`, `on` and `off` are text)",
        "s.yaml:16:23: unknown value `lowercase` in `normalize`",
        "11 problems found; the suite was not loaded",
    ];
    for w in want {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    // In file order.
    let pos = |s: &str| err.find(s).unwrap();
    assert!(pos("s.yaml:7:11") < pos("s.yaml:10:14") && pos("s.yaml:14:73") < pos("s.yaml:16:23"));
}

#[test]
fn quoted_numbers_and_booleans_are_not_reported_as_wrong_types() {
    // serde reads `"0.9"` as a number and `prompt: 2026` as text; the full check must not
    // call them problems when another problem sends the file through it.
    let text = format!(
        "{TOOL}cases:
  - {{id: a, kind: should_not_call, prompt: 2026, bogus: 1}}
thresholds:
  - {{metric: accuracy, min: \"0.9\"}}
profile: {{bfcl: {{category: simple_python, strict: \"true\"}}}}
"
    );
    let err = problems_of("s.yaml", &text);
    assert!(err.contains("s.yaml:6:50: unknown field `bogus`"), "{err}");
    assert!(err.contains("1 problem found"), "{err}");
}

#[test]
fn a_profiles_settings_are_checked_where_they_are_written() {
    // `profile:` is read by the registered plugin's own settings type, with the same
    // locations and words as every other field.
    let cases = [
        (
            "profile: {bogus: {}}",
            "s.yaml:7:11: unknown field `bogus`",
            "hint: the keys here are: bfcl",
        ),
        (
            "profile: {bfcl: {category: simple_python, stric: true}}",
            "s.yaml:7:43: unknown field `stric`",
            "hint: did you mean `strict`?",
        ),
        (
            "profile: {bfcl: {category: simple}}",
            "s.yaml:7:28: unknown BFCL category `simple`",
            "hint: the categories are: simple_python,",
        ),
        (
            "profile: {bfcl: {category: simple_python, strict: 1}}",
            "s.yaml:7:51: `strict` must be true or false, got `1`",
            "field: profile.bfcl.strict",
        ),
    ];
    for (profile, at, hint) in cases {
        let text =
            format!("{TOOL}cases:\n  - {{id: a, kind: should_not_call, prompt: hi}}\n{profile}\n");
        let err = problems_of("s.yaml", &text);
        assert!(err.contains(at) && err.contains(hint), "{profile}:\n{err}");
    }
}

#[test]
fn a_json_suite_lists_every_problem_with_its_line() {
    let text = "{
  \"tools\": [{\"name\": \"t\", \"description\": \"d\", \"parameters\": {\"type\": \"object\"}}],
  \"cases\": [
    {\"id\": \"a\", \"kind\": \"shuold_call\", \"prompt\": \"x\",
     \"bogus\": 1}
  ],
  \"matrix\": {\"repeats\": \"many\"}
}
";
    let err = problems_of("s.json", text);
    for w in [
        "s.json:4:25: unknown kind `shuold_call`",
        "s.json:5:6: unknown field `bogus`",
        "s.json:7:25: `repeats` must be a whole number, got `many`",
        "3 problems found",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn a_syntax_error_names_the_bracket_left_open() {
    let text = format!(
        "{TOOL}cases:
  - id: a
    kind: should_call
    prompt: hi
    expect: {{calls: [{{tool: get_weather, args: {{city: Paris}}}}]
  - id: b
    kind: should_not_call
    prompt: hi
"
    );
    let err = problems_of("s.yaml", &text);
    assert!(
        err.contains("s.yaml:10:3: ")
            && err.contains("(inside the `{` opened on line 9, column 13: is it closed?)"),
        "{err}"
    );
    let json = "{\n  \"tools\": [],\n  \"cases\": [\n    {\"id\": \"a\", \"kind\": \"should_not_call\", \"prompt\": \"x\"\n  ]\n}\n";
    let err = problems_of("s.json", json);
    assert!(
        err.contains("s.json:5:3: expected `,` or `}` (inside the `{` opened on line 4, column 5: is it closed?)"),
        "{err}"
    );
    // A file cut short says so, and where the open bracket is.
    let err = problems_of("cut.json", "{\n  \"tools\": [\n");
    assert!(err.contains("the file ends in the middle of a value (inside the `[` opened on line 2, column 12: is it closed?)"), "{err}");
}

#[test]
fn every_duplicate_key_names_its_first_place() {
    let text = format!(
        "{TOOL}cases:
  - id: a
    kind: should_call
    prompt: hi
    expect:
      calls:
        - tool: get_weather
          args:
            city: Paris
            city: Rome
    prompt: again
"
    );
    let err = problems_of("s.yaml", &text);
    for w in [
        "s.yaml:14:13: duplicate key `city` (first at line 13)",
        "s.yaml:15:5: duplicate key `prompt` (first at line 8)",
        "hint: a key may appear once in a map",
        "2 problems found",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn document_level_refusals_are_plain() {
    let deep = format!(
        "{}cases: []\n",
        TOOL.replace(
            "{type: object, properties: {city: {type: string}}}",
            &format!("{}1{}", "{a: ".repeat(70), "}".repeat(70))
        )
    );
    let err = problems_of("deep.yaml", &deep);
    assert!(err.contains("nesting deeper than 64 levels"), "{err}");
    assert!(
        err.contains("hint: the file is too large or too deeply nested"),
        "{err}"
    );

    let nan = format!(
        "{TOOL}cases:\n  - {{id: a, kind: should_call, prompt: hi, expect: {{calls: [{{tool: get_weather, args: {{city: .nan}}}}]}}}}\n"
    );
    let err = problems_of("nan.yaml", &nan);
    assert!(
        err.contains("nan.yaml:6:94: numbers must be finite: `.nan` is not"),
        "{err}"
    );
    assert!(
        err.contains("hint: write a finite number, or quote the value"),
        "{err}"
    );

    let two = format!("{TOOL}cases: []\n---\nname: second\n");
    let err = problems_of("two.yaml", &two);
    assert!(err.contains("more than one YAML document"), "{err}");

    let alias = format!("{TOOL}cases:\n  - {{id: a, kind: should_not_call, prompt: *hello}}\n");
    let err = problems_of("alias.yaml", &alias);
    assert!(
        err.contains("refers to an anchor that is not defined"),
        "{err}"
    );

    let null = format!("{TOOL}cases:\n  - {{id: a, kind: should_not_call, prompt: hi}}\nmatrix:\n");
    let err = problems_of("null.yaml", &null);
    assert!(
        err.contains("null.yaml:7:7: `matrix` must be a map (`key: value`), got nothing (null)"),
        "{err}"
    );
}

#[test]
fn tool_schema_defects_are_each_told_plainly() {
    let text = format!(
        "{}cases:\n  - {{id: a, kind: should_not_call, prompt: hi}}\n",
        TOOL.replace(
            "{type: object, properties: {city: {type: string}}}",
            "{type: object, properties: {city: {type: strin}}, required: city}"
        )
    );
    let err = problems_of("s.yaml", &text);
    for w in [
        "s.yaml:4:52: the parameter schema of `get_weather` does not compile: `strin` is not a JSON Schema type; types are string, number,",
        "s.yaml:4:67: the parameter schema of `get_weather` does not compile: `required` must be a list, got `city`",
        "2 problems found",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn numbers_out_of_range_are_listed_with_every_other_problem_and_their_range() {
    // A 20-digit `repeats`, `1e400` and a bad `tool_choice` are found in one run, each
    // where it is written, as written, with the range it must fit.
    let text = format!(
        "{TOOL}cases:
  - {{id: a, kind: should_not_call, prompt: hi}}
matrix: {{repeats: 99999999999999999999, tool_choice: [auto, forced]}}
sampling: {{temperature: 1e400}}
"
    );
    let err = problems_of("s.yaml", &text);
    for w in [
        "s.yaml:7:19: `repeats` must be at most 4294967295, got `99999999999999999999`",
        "s.yaml:7:61: unknown value `forced` in `tool_choice`",
        "s.yaml:8:25: `temperature` must be a finite number, got `1e400`, which is too large",
        "3 problems found",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn a_tool_call_id_that_answers_no_call_is_shown_where_it_is_written() {
    let text = format!(
        "{TOOL}cases:
  - id: a
    kind: should_not_call
    messages:
      - {{role: user, content: hi}}
      - role: assistant
        tool_calls: [{{id: c1, name: get_weather, arguments: {{}}}}]
      - role: tool
        tool_call_id: c2
        content: ok
      - {{role: user, content: thanks}}
"
    );
    let err = problems_of("s.yaml", &text);
    assert!(
        err.contains(
            "s.yaml:13:23: tool message answers `c2`, but no earlier assistant call has that id"
        ),
        "{err}"
    );
}
