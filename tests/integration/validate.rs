//! `toolgauge validate`: ok for a good suite, every problem of every bad file otherwise.

use crate::support::{BAD_INPUT, OK, Toolgauge};

#[test]
fn validate_good_suite_prints_ok_and_exits_0() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let o = t.run(&["validate", &suite]).expect_code(OK);
    assert_eq!(
        o.stdout.trim_end(),
        "weather.yaml: ok (1 tool, 4 cases: 4 single-turn; variants: vague, clear)"
    );
    assert_eq!(o.stderr, "");
}

#[test]
fn validate_reports_each_bad_file_and_still_checks_the_good_one() {
    let t = Toolgauge::new();
    let unknown_tool = t.fixture("bad/unknown_tool.yaml");
    let good = t.fixture("weather.yaml");
    let duplicate = t.fixture("bad/duplicate_id.yaml");
    let unknown_key = t.fixture("bad/unknown_key_top.yaml");
    let o = t
        .run(&["validate", &unknown_tool, &good, &duplicate, &unknown_key])
        .expect_code(BAD_INPUT);
    o.stdout_has(&["weather.yaml: ok"]);
    o.stderr_has(&[
        "error: unknown_tool.yaml:15:19: expectation names unknown tool `get_wether`",
        "error: duplicate_id.yaml:19:9: duplicate case id `beijing`",
        "error: unknown_key_top.yaml:16:1: unknown field `matrx`",
    ]);
    assert_eq!(
        o.stderr.matches("the suite was not loaded").count(),
        3,
        "one report per bad file:\n{}",
        o.stderr
    );
    // Reported in the order given.
    let pos = |s: &str| o.stderr.find(s).unwrap();
    assert!(pos("unknown_tool.yaml") < pos("duplicate_id.yaml"));
    assert!(pos("duplicate_id.yaml") < pos("unknown_key_top.yaml"));
}

#[test]
fn validate_reports_every_problem_in_one_file() {
    let t = Toolgauge::new();
    let broken = crate::support::fixture_text("bad/unknown_tool.yaml")
        + "thresholds:\n  - { metric: acuracy, min: 0.9 }\n";
    t.write("two_problems.yaml", broken);
    let o = t
        .run(&["validate", "two_problems.yaml"])
        .expect_code(BAD_INPUT);
    o.stderr_has(&[
        "two_problems.yaml:15:19: expectation names unknown tool `get_wether`",
        "two_problems.yaml:17:15: unknown metric `acuracy`",
        "2 problems found; the suite was not loaded",
    ]);
}

/// A small valid suite; `extra` is appended at the top level.
fn suite_with(extra: &str) -> String {
    format!(
        "\
tools:
  - name: get_weather
    variants:
      vague: Weather.
      clear: Live weather for one city.
    parameters: {{type: object, properties: {{city: {{type: string}}}}}}
cases:
  - id: paris
    kind: should_call
    prompt: Weather in Paris?
    expect:
      calls: [{{tool: get_weather, args: {{city: Paris}}}}]
{extra}"
    )
}

#[test]
fn an_unknown_provider_in_the_matrix_is_refused_with_a_suggestion() {
    let t = Toolgauge::new();
    t.write(
        "s.yaml",
        suite_with("matrix:\n  targets: [scripted:oracle, opnai:gpt-4o-mini]\n"),
    );
    let o = t.run(&["validate", "s.yaml"]).expect_code(BAD_INPUT);
    o.stderr_has(&[
        "error: s.yaml:14:30: unknown provider `opnai` in target `opnai:gpt-4o-mini`",
        "field: matrix.targets",
        "hint: did you mean openai? (`openai:gpt-4o-mini`); providers are: scripted, bfcl-result, openai,",
        "1 problem found",
    ]);
}

#[test]
fn an_unknown_provider_given_with_target_is_refused_before_the_run() {
    // Replay would only miss every cassette entry; the name is checked up front.
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let o = t
        .run(&["run", &suite, "--out", "out", "-t", "anthropc:claude-x"])
        .expect_code(BAD_INPUT);
    o.stderr_has(&[
        "unknown provider `anthropc` in target `anthropc:claude-x`",
        "hint: did you mean anthropic? (`anthropic:claude-x`)",
    ]);
    assert!(!t.path().join("out").exists());
}

#[test]
fn threshold_mistakes_are_each_located_with_a_fix() {
    let t = Toolgauge::new();
    t.write(
        "s.yaml",
        suite_with(
            "\
thresholds:
  - {metric: accuracy, min: 90}
  - {metric: trigger_recall, min: 0.9, max: 0.5}
  - {metric: tool_definiton_tokens, max: 500}
  - {metric: latency_p95_ms, max: -5}
  - {metric: accuracy, min: 0.8, variant: clera}
  - {metric: accuracy}
",
        ),
    );
    let o = t.run(&["validate", "s.yaml"]).expect_code(BAD_INPUT);
    o.stderr_has(&[
        "s.yaml:14:29: `min: 90` is outside [0, 1], the range of the rate `accuracy`",
        "hint: rates are fractions in [0, 1]; did you mean 0.9?",
        "s.yaml:15:35: `min: 0.9` is above `max: 0.5`: no value can pass",
        "s.yaml:16:14: unknown metric `tool_definiton_tokens`",
        "hint: did you mean `tool_definition_tokens`?",
        "s.yaml:17:35: `max: -5` is negative, and `latency_p95_ms` never is",
        "s.yaml:18:43: unknown variant `clera`",
        "hint: did you mean `clear`? the variants are: vague, clear",
        "s.yaml:19:14: the threshold on `accuracy` has no `min` or `max`",
        "6 problems found",
    ]);
}

#[test]
fn every_metric_of_docs_metrics_md_is_accepted_as_a_threshold() {
    // The metric names are read from the tables of docs/metrics.md whose first column is
    // `metric`: each backticked name in that column must make a valid threshold.
    let doc = std::fs::read_to_string(crate::support::repo_root().join("docs/metrics.md"))
        .expect("docs/metrics.md");
    let mut names = Vec::new();
    let mut in_metric_table = false;
    for line in doc.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_metric_table = false;
            continue;
        }
        let first = line
            .trim_start_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if first == "metric" {
            in_metric_table = true;
            continue;
        }
        if in_metric_table {
            names.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    for must in [
        "accuracy",
        "tool_definition_tokens",
        "pass_hat_k",
        "cost_usd",
    ] {
        assert!(
            names.iter().any(|n| n == must),
            "{must} not parsed from {names:?}"
        );
    }
    let gates: String = names
        .iter()
        .map(|n| format!("  - {{metric: {n}, min: 0}}\n"))
        .collect();
    let t = Toolgauge::new();
    t.write("s.yaml", suite_with(&format!("thresholds:\n{gates}")));
    let o = t.run(&["validate", "s.yaml"]);
    assert_eq!(
        o.code,
        Some(OK),
        "a metric of docs/metrics.md is refused as a threshold:\n{}",
        o.stderr
    );
}

#[test]
fn a_tool_definition_tokens_threshold_gates_the_run() {
    // The vague variant's definitions are smaller than the clear one's; a bound between
    // them fails on the clear cell only.
    let t = Toolgauge::new();
    let suite = crate::support::fixture_text("weather.yaml")
        + "  - {metric: tool_definition_tokens, max: 1000000}\n";
    assert!(
        suite.contains("\nthresholds:\n"),
        "the fixture has thresholds"
    );
    t.write("w.yaml", suite);
    let o = t.run(&[
        "run", "w.yaml", "--out", "out", "--format", "json", "--quiet",
    ]);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("out/summary.json")).expect("summary.json"),
    )
    .unwrap();
    let gate = summary["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metric"] == "tool_definition_tokens")
        .unwrap_or_else(|| panic!("no tool_definition_tokens gate: {summary}"));
    let largest = summary["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["tool_definition_tokens"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(largest > 0);
    assert_eq!(gate["value"].as_f64(), Some(largest as f64), "{o:?}");
    assert_eq!(gate["ok"], true);
}

#[test]
fn a_field_named_like_a_matcher_is_read_by_the_tool_schema() {
    // `type` is a declared field of `person`: `{type: adult}` expects that field. Under
    // `pet`, whose schema declares no `type`, `{type: object}` is the type matcher.
    let t = Toolgauge::new();
    t.write(
        "s.yaml",
        "\
tools:
  - name: book
    description: Book a ticket.
    parameters:
      type: object
      properties:
        person:
          type: object
          properties:
            type: {type: string, enum: [adult, child]}
            name: {type: string}
        pet: {type: object, properties: {name: {type: string}}}
cases:
  - id: adult
    kind: should_call
    prompt: One adult ticket for Ann, with her cat.
    expect:
      calls: [{tool: book, args: {person: {type: adult}, pet: {type: object}}}]
matrix:
  targets: [scripted:oracle]
",
    );
    t.write(
        "child.yaml",
        "\
responses:
  - case: adult
    calls: [{name: book, arguments: {person: {type: child, name: Ann}, pet: {name: Tom}}}]
",
    );
    t.run(&["validate", "s.yaml"]).expect_code(OK);
    let accuracy = |out: &str, target: &str| {
        t.run(&[
            "run", "s.yaml", "--out", out, "-t", target, "--quiet", "--format", "json",
        ])
        .expect_code(OK);
        let s: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(t.path().join(out).join("summary.json")).unwrap(),
        )
        .unwrap();
        s["overall"]["accuracy"]["value"].as_f64()
    };
    // The oracle answers what the expectation says: the field `type` is `adult`.
    assert_eq!(accuracy("o1", "scripted:oracle"), Some(1.0));
    // A child ticket fails the field.
    assert_eq!(accuracy("o2", "scripted:child.yaml"), Some(0.0));
}

#[test]
fn validate_says_which_cases_are_loops_and_counts_every_tool_once() {
    // One case has `mocks` (a loop), one does not; the second case's own tool counts
    // beside the suite's, and the suite's tool it repeats counts once.
    let t = Toolgauge::new();
    t.write(
        "mixed.yaml",
        "tools:
  - {name: get_weather, description: Weather., parameters: {type: object, properties: {city: {type: string}}}}
cases:
  - id: looped
    kind: should_call
    prompt: weather in Paris
    mocks: {get_weather: [{result: {temp: 20}}]}
    expect: {calls: [{tool: get_weather}]}
  - id: plain
    kind: should_not_call
    prompt: hello
    tools:
      - {name: get_weather, description: Weather., parameters: {type: object, properties: {city: {type: string}}}}
      - {name: get_time, description: Time., parameters: {type: object}}
",
    );
    let o = t.run(&["validate", "mixed.yaml"]).expect_code(OK);
    assert_eq!(
        o.stdout.trim_end(),
        "mixed.yaml: ok (2 tools, 2 cases: 1 loop, 1 single-turn; variants: default)"
    );
}
