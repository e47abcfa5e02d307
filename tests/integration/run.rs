//! `toolgauge run` against scripted targets: exit codes, stdout, and every file of the
//! run directory.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::support::{
    BAD_INPUT, OK, Output, RUN_INCOMPLETE, THRESHOLD_FAILED, Toolgauge, fixture_text,
};

/// Trials of `fixtures/weather.yaml` as declared: 4 cases × 2 variants × 2 modes × 1.
const WEATHER_TRIALS: usize = 16;

/// Run the weather fixture with `extra` arguments into run directory `out`.
fn run_weather(t: &Toolgauge, out: &str, extra: &[&str]) -> Output {
    let suite = t.fixture("weather.yaml");
    let mut args = vec!["run", suite.as_str(), "--out", out];
    args.extend_from_slice(extra);
    t.run(&args)
}

/// The plain oracle run of the weather fixture, made once and read by several tests.
fn oracle() -> &'static (Toolgauge, Output) {
    static RUN: OnceLock<(Toolgauge, Output)> = OnceLock::new();
    RUN.get_or_init(|| {
        let t = Toolgauge::shared();
        let o = run_weather(&t, "out", &[]);
        (t, o)
    })
}

/// The one expectation of the weather fixture no model can meet: `capital-of-france`
/// expects no call, also under `required`, which forces one.
fn forced_capital(x: &serde_json::Value) -> bool {
    x["case_id"] == "capital-of-france" && x["tool_choice"] == "required"
}

#[test]
fn oracle_passes_every_satisfiable_trial_names_the_rest_and_exits_0() {
    let (t, o) = oracle();
    o.assert_code(OK);
    o.stdout_has(&[
        "weather: 16 trials, 14 passed, 2 failed, 0 errors",
        "scripted:oracle",
        "accuracy >= 0.8 (overall)",
        "run written to out",
    ]);
    o.stderr_has(&[
        "warning: scripted:oracle can not satisfy 1 trial expectation(s) of suite `weather`, so no model can pass them (check these cases): capital-of-france",
        "  - capital-of-france under required: tool_choice `required` forces a call, but the case expects no call under `required`",
    ]);
    let dir = t.run_dir("out");
    dir.assert_complete();
    let trials = dir.trials();
    assert_eq!(trials.len(), WEATHER_TRIALS);
    for x in &trials {
        let want = if forced_capital(x) { "fail" } else { "pass" };
        assert_eq!(x["verdict"], want, "{x}");
    }
    // The failing trials say why in the response itself.
    let forced = trials.iter().find(|x| forced_capital(x)).unwrap();
    assert!(
        forced["response"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[scripted:oracle could not satisfy this expectation: tool_choice `required` forces a call")),
        "{forced}"
    );
}

#[test]
fn quiet_prints_exactly_one_line() {
    let t = Toolgauge::new();
    let o = run_weather(&t, "out", &["--quiet"]).expect_code(OK);
    assert_eq!(o.stdout.lines().count(), 1, "stdout:\n{}", o.stdout);
    o.stdout_has(&["weather: 14/16 passed (88%), 0 errors, thresholds ok -> out"]);
    t.run_dir("out").assert_complete();
}

#[test]
fn format_json_writes_summary_json_and_no_csv() {
    let t = Toolgauge::new();
    run_weather(&t, "out", &["--format", "json"]).expect_code(OK);
    let dir = t.run_dir("out");
    for f in ["run.json", "trials.jsonl", "summary.json"] {
        assert!(dir.has(f), "--format json still writes {f}");
    }
    for f in ["trials.csv", "summary.csv"] {
        assert!(!dir.has(f), "--format json must not write {f}");
    }
}

#[test]
fn trials_csv_starts_with_the_documented_columns_and_has_one_row_per_trial() {
    let (t, o) = oracle();
    o.assert_code(OK);
    let (header, rows) = t.run_dir("out").csv("trials.csv");
    // The columns the run directory promises first, in this order (`verdict` sits
    // between `passed` and `reasons`, as docs/reports.md documents).
    let documented = [
        "case_id",
        "kind",
        "target",
        "variant",
        "tool_choice",
        "repeat",
        "passed",
        "verdict",
        "reasons",
    ];
    assert_eq!(
        &header[..documented.len().min(header.len())],
        &documented[..],
        "trials.csv must start with these columns in this order; header is {header:?}"
    );
    assert_eq!(rows.len(), WEATHER_TRIALS, "one row per trial");
    for row in &rows {
        assert_eq!(
            row.len(),
            header.len(),
            "every row has every column: {row:?}"
        );
        assert_eq!(row[2], "scripted:oracle");
        let forced = row[0] == "capital-of-france" && row[4] == "required";
        assert_eq!(row[6], if forced { "false" } else { "true" }, "{row:?}");
    }
    let first: Vec<&str> = rows[0][..6].iter().map(String::as_str).collect();
    assert_eq!(
        first,
        [
            "beijing-today",
            "should_call",
            "scripted:oracle",
            "vague",
            "auto",
            "0"
        ]
    );
}

#[test]
fn trials_jsonl_has_one_line_per_trial_with_verdict_and_checks() {
    let (t, o) = oracle();
    o.assert_code(OK);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), WEATHER_TRIALS);
    for x in &trials {
        assert!(x["case_id"].is_string(), "{x}");
        let want = if forced_capital(x) { "fail" } else { "pass" };
        assert_eq!(x["verdict"], want, "{x}");
        assert!(
            x["checks"].is_object(),
            "a scored trial records its checks: {x}"
        );
        assert!(x["checks"]["called"].is_boolean(), "{x}");
        assert!(x["response"].is_object(), "{x}");
    }
    let two = trials
        .iter()
        .find(|x| x["case_id"] == "two-cities")
        .expect("two-cities was run");
    assert_eq!(two["checks"]["calls"].as_array().map(Vec::len), Some(2));
}

#[test]
fn summary_json_has_version_2_and_one_cell_per_matrix_cell() {
    let (t, o) = oracle();
    o.assert_code(OK);
    let s = t.run_dir("out").json("summary.json");
    assert_eq!(s["summary_version"], 2);
    assert_eq!(s["suite"], "weather");
    let cells = s["cells"].as_array().expect("cells is a list");
    let names: Vec<String> = cells
        .iter()
        .map(|c| format!("{} {} {}", c["target"], c["variant"], c["tool_choice"]))
        .collect();
    assert_eq!(
        names,
        [
            r#""scripted:oracle" "vague" "auto""#,
            r#""scripted:oracle" "vague" "required""#,
            r#""scripted:oracle" "clear" "auto""#,
            r#""scripted:oracle" "clear" "required""#,
        ]
    );
    for c in cells {
        assert!(c["metrics"].is_object(), "{c}");
        // The fixture's one tool as sent (`[{"type":"function","function":{"name":
        // "get_weather","description":"Weather.","parameters":{...}}}]`), in o200k_base
        // tokens as tiktoken-rs counts them: 74 with the vague description, 85 with the
        // clear one (11 more tokens of description).
        let want = if c["variant"] == "vague" { 74 } else { 85 };
        assert_eq!(c["tool_definition_tokens"], want, "{c}");
        // The oracle passes every trial it can: one `P` per repeat for each of the 4
        // cases, but `F` for the capital question under `required`.
        let outcomes = c["outcomes"].as_object().expect("outcomes per case");
        assert_eq!(outcomes.len(), 4, "{c}");
        for (case, v) in outcomes {
            let forced = case == "capital-of-france" && c["tool_choice"] == "required";
            assert_eq!(v, if forced { "F" } else { "P" }, "{c}");
        }
    }
    assert!(s["overall"].is_object());
    assert_eq!(s["thresholds"][0]["metric"], "accuracy");
    assert_eq!(s["thresholds"][0]["ok"], true);
}

#[test]
fn run_json_records_the_suite_hash_and_matrix() {
    let (t, o) = oracle();
    o.assert_code(OK);
    let meta = t.run_dir("out").json("run.json");
    let bytes = std::fs::read(t.path().join("weather.yaml")).unwrap();
    let hash: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        meta["suite"]["hash"],
        hash.as_str(),
        "SHA-256 of the suite file"
    );
    assert_eq!(meta["suite"]["name"], "weather");
    assert_eq!(
        meta["matrix"],
        serde_json::json!({
            "targets": ["scripted:oracle"],
            "variants": ["vague", "clear"],
            "tool_choice": ["auto", "required"],
            "repeats": 1,
        })
    );
    assert_eq!(meta["trials_planned"], WEATHER_TRIALS);
    assert_eq!(meta["trials_written"], WEATHER_TRIALS);
    assert!(meta["finished_at"].is_string());
}

#[test]
fn failed_threshold_exits_1_and_names_the_metric_and_scope() {
    let t = Toolgauge::new();
    // Add a per-cell gate to the suite's overall accuracy gate.
    let suite =
        fixture_text("weather.yaml") + "  - { metric: trigger_recall, min: 0.9, variant: clear }\n";
    t.write("gated.yaml", suite);
    let o = t
        .run(&[
            "run",
            "gated.yaml",
            "--out",
            "out",
            "--target",
            "scripted:no_call",
        ])
        .expect_code(THRESHOLD_FAILED);
    o.stderr_has(&[
        "threshold failed:",
        "accuracy (overall)",
        "trigger_recall (scripted:no_call × clear × auto)",
        "trigger_recall (scripted:no_call × clear × required)",
    ]);
    assert!(
        !o.stderr
            .contains("trigger_recall (scripted:no_call × vague"),
        "the gate is on variant clear only:\n{}",
        o.stderr
    );
    let s = t.run_dir("out").json("summary.json");
    let failed: Vec<&str> = s["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ok"] == false)
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["accuracy", "trigger_recall", "trigger_recall"]);
}

#[test]
fn provider_errors_exit_3_and_keep_every_trial_in_the_journal() {
    let t = Toolgauge::new();
    let o = run_weather(&t, "out", &["--target", "scripted:error"]).expect_code(RUN_INCOMPLETE);
    o.stderr_has(&[
        "16 of 16 trials could not be completed",
        "scripted provider error",
    ]);
    let dir = t.run_dir("out");
    dir.assert_complete();
    let trials = dir.trials();
    assert_eq!(trials.len(), WEATHER_TRIALS, "no trial is lost");
    for x in &trials {
        assert_eq!(x["verdict"], "error", "{x}");
        assert!(
            x["reasons"][0]["message"].is_string(),
            "an errored trial says why: {x}"
        );
    }
    let meta = dir.json("run.json");
    assert_eq!(meta["trials_written"], WEATHER_TRIALS);
    let (_, rows) = dir.csv("trials.csv");
    assert_eq!(rows.len(), WEATHER_TRIALS);
}

/// Run the weather fixture with `overrides` and check the trial count everywhere.
fn assert_trials(overrides: &[&str], code: i32, expected: usize, matrix: serde_json::Value) {
    let t = Toolgauge::new();
    run_weather(&t, "out", overrides).expect_code(code);
    let dir = t.run_dir("out");
    assert_eq!(
        dir.trials().len(),
        expected,
        "trials.jsonl with {overrides:?}"
    );
    assert_eq!(
        dir.csv("trials.csv").1.len(),
        expected,
        "trials.csv with {overrides:?}"
    );
    let meta = dir.json("run.json");
    assert_eq!(meta["trials_planned"], expected);
    assert_eq!(meta["matrix"], matrix, "run.json matrix with {overrides:?}");
}

#[test]
fn target_override_runs_every_cell_for_each_target() {
    assert_trials(
        &[
            "--target",
            "scripted:oracle",
            "-t",
            "scripted:duplicate",
            "--quiet",
        ],
        // duplicate fails every should_call trial, so the accuracy gate fails.
        THRESHOLD_FAILED,
        2 * WEATHER_TRIALS,
        serde_json::json!({
            "targets": ["scripted:oracle", "scripted:duplicate"],
            "variants": ["vague", "clear"],
            "tool_choice": ["auto", "required"],
            "repeats": 1,
        }),
    );
}

#[test]
fn variant_override_runs_only_the_named_variant() {
    assert_trials(
        &["--variant", "clear", "--quiet"],
        OK,
        WEATHER_TRIALS / 2,
        serde_json::json!({
            "targets": ["scripted:oracle"],
            "variants": ["clear"],
            "tool_choice": ["auto", "required"],
            "repeats": 1,
        }),
    );
}

#[test]
fn tool_choice_override_replaces_the_suite_modes() {
    assert_trials(
        &["--tool-choice", "none,auto,function:get_weather", "--quiet"],
        OK,
        3 * WEATHER_TRIALS / 2,
        serde_json::json!({
            "targets": ["scripted:oracle"],
            "variants": ["vague", "clear"],
            "tool_choice": ["none", "auto", "function:get_weather"],
            "repeats": 1,
        }),
    );
}

#[test]
fn repeats_override_multiplies_the_trials() {
    assert_trials(
        &["--repeats", "3", "--quiet"],
        OK,
        3 * WEATHER_TRIALS,
        serde_json::json!({
            "targets": ["scripted:oracle"],
            "variants": ["vague", "clear"],
            "tool_choice": ["auto", "required"],
            "repeats": 3,
        }),
    );
}

#[test]
fn stdout_has_no_ansi_escapes_when_not_a_terminal() {
    // The oracle's 100% accuracy would be printed green on a terminal.
    let (_, o) = oracle();
    o.assert_code(OK);
    assert!(
        o.stdout.contains("overall"),
        "the table is printed:\n{}",
        o.stdout
    );
    assert!(
        !o.stdout.contains('\u{1b}'),
        "stdout is a pipe, so no ANSI escapes:\n{:?}",
        o.stdout
    );
    assert!(!o.stderr.contains('\u{1b}'), "{:?}", o.stderr);
}

#[test]
fn junit_has_one_testcase_per_trial_with_failures_and_errors() {
    let t = Toolgauge::new();
    run_weather(&t, "out", &["--target", "scripted:wrong_tool"]).expect_code(THRESHOLD_FAILED);
    let xml = std::fs::read_to_string(t.path().join("out/junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("junit.xml parses back");
    assert_eq!(report.tests, WEATHER_TRIALS);
    assert_eq!(report.test_suites.len(), 4, "one testsuite per cell");
    // wrong_tool calls `some_other_tool` (the fixture has no other tool) in every trial,
    // which fails all four cases: the three that expect get_weather or a clarification
    // and the one that expects no call. So every testcase of every cell is a failure.
    let failures: Vec<usize> = report.test_suites.iter().map(|s| s.failures).collect();
    assert_eq!(failures, [4, 4, 4, 4], "wrong_tool fails every trial");
    let case = &report.test_suites[0].test_cases[0];
    assert!(
        case.classname
            .as_ref()
            .unwrap()
            .as_str()
            .starts_with("weather.scripted:wrong_tool × ")
    );

    let t = Toolgauge::new();
    run_weather(&t, "out", &["--target", "scripted:error"]).expect_code(RUN_INCOMPLETE);
    let xml = std::fs::read_to_string(t.path().join("out/junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(
        report.errors, WEATHER_TRIALS,
        "every errored trial is a JUnit error"
    );
}

#[test]
fn markdown_summary_names_the_verdict_and_the_cells() {
    let (t, _) = oracle();
    let md = std::fs::read_to_string(t.path().join("out/summary.md")).unwrap();
    assert!(md.starts_with("### toolgauge: weather ✅ passed"), "{md}");
    assert!(
        md.contains("| scripted:oracle | clear | auto | 4 | 100% (51–100) |"),
        "{md}"
    );
}

#[test]
fn report_regenerates_the_files_of_a_run_without_a_model() {
    let t = Toolgauge::new();
    run_weather(&t, "out", &["--target", "scripted:wrong_tool"]).expect_code(THRESHOLD_FAILED);
    let before = std::fs::read_to_string(t.path().join("out/summary.json")).unwrap();
    for f in ["summary.json", "junit.xml", "summary.md", "trials.csv"] {
        std::fs::remove_file(t.path().join("out").join(f)).unwrap();
    }
    // The suite is found where run.json says, so its thresholds apply again.
    let o = t.run(&["report", "out", "--no-color"]);
    o.assert_code(OK);
    o.stdout_has(&["weather: 16 trials", "thresholds:"]);
    let after = std::fs::read_to_string(t.path().join("out/summary.json")).unwrap();
    assert_eq!(before, after, "report reproduces summary.json exactly");
    for f in ["junit.xml", "summary.md", "trials.csv"] {
        assert!(t.path().join("out").join(f).is_file(), "report wrote {f}");
    }
    let o = t.run(&["report", "no-such-dir"]);
    o.assert_code(crate::support::BAD_INPUT);
}

#[test]
fn cases_with_their_own_tools_send_and_score_those_tools() {
    let t = Toolgauge::new();
    let suite = t.fixture("per_case_tools.yaml");
    t.run(&["run", &suite, "--out", "out", "--quiet"])
        .assert_code(OK);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), 3);
    assert!(trials.iter().all(|t| t["verdict"] == "pass"), "{trials:?}");
    // Each request carried its case's tools: the oracle called the one the case expects,
    // and the same name (`math.add`) is a different tool in two cases.
    let by_case = |id: &str| trials.iter().find(|t| t["case_id"] == id).unwrap().clone();
    assert_eq!(
        by_case("add")["response"]["tool_calls"][0]["name"],
        "math.add"
    );
    assert_eq!(
        by_case("weather")["response"]["tool_calls"][0]["name"],
        "get_weather"
    );
    assert_eq!(by_case("chat")["checks"]["called"], false);

    // An expectation naming a tool the case does not offer is located in that case.
    let text = t
        .read(&suite)
        .replace("tool: get_weather, args", "tool: math.sub, args");
    t.write("bad.yaml", text);
    let o = t.run(&["validate", "bad.yaml"]);
    o.assert_code(crate::support::BAD_INPUT);
    o.stderr_has(&[
        "expectation names unknown tool `math.sub`",
        "cases[1].expect.calls[0].tool",
        "the case's tools are: `get_weather`, `math.add`",
    ]);
}

#[test]
fn several_suites_run_in_order_each_reported_and_the_worst_code_wins() {
    // The next suite loads while the current one runs; what is printed, written and
    // returned must not show it: suites are reported in the order given, a suite that
    // does not load is reported in its place, and every other suite still runs.
    let t = Toolgauge::new();
    let weather = t.fixture("weather.yaml");
    t.write("broken.yaml", "tools: [\n");
    let o = t.run(&[
        "run",
        &weather,
        "broken.yaml",
        &weather,
        "--reports-dir",
        "runs",
        "--quiet",
        "--target",
        "scripted:no_call",
    ]);
    o.assert_code(BAD_INPUT);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "stdout:\n{}", o.stdout);
    assert!(
        lines.iter().all(|l| l.starts_with("weather: ")),
        "{lines:?}"
    );
    o.stderr_has(&["broken.yaml"]);
    let runs: Vec<_> = std::fs::read_dir(t.path().join("runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 2, "one run directory per suite that loaded");
    for r in runs {
        t.run_dir(&format!("runs/{}", r.file_name().to_string_lossy()))
            .assert_complete();
    }
    // Without the broken suite, the failed thresholds decide.
    t.run(&[
        "run",
        &weather,
        &weather,
        "--reports-dir",
        "runs2",
        "--quiet",
        "--target",
        "scripted:no_call",
    ])
    .assert_code(THRESHOLD_FAILED);
}

#[test]
fn two_unicode_forms_of_a_string_fail_with_the_difference_or_pass_under_nfc() {
    // The model sends `Zürich` decomposed (u + U+0308); the suite expects it precomposed.
    let t = Toolgauge::new();
    let suite = |normalize: &str| {
        format!(
            "{normalize}tools:
  - {{name: get_weather, description: Weather., parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}}}
cases:
  - id: z
    kind: should_call
    prompt: Weather in Zürich?
    expect: {{calls: [{{tool: get_weather, args: {{city: Zürich}}}}]}}
"
        )
    };
    t.write(
        "nfd.yaml",
        "responses:\n  - case: z\n    calls: [{name: get_weather, arguments: {city: \"Zu\\u0308rich\"}}]\n",
    );
    t.write("plain.yaml", suite(""));
    t.run(&[
        "run",
        "plain.yaml",
        "-t",
        "scripted:nfd.yaml",
        "--out",
        "plain",
        "--quiet",
    ]);
    let trials = t.run_dir("plain").trials();
    let reason = trials[0]["reasons"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("expected [U+00FC], got [U+0075 U+0308]")
            && reason.contains("`normalize: [nfc]` makes them equal"),
        "{reason}"
    );
    t.write("nfc.yaml", suite("normalize: [nfc]\n"));
    t.run(&[
        "run",
        "nfc.yaml",
        "-t",
        "scripted:nfd.yaml",
        "--out",
        "nfc",
        "--quiet",
    ])
    .expect_code(OK);
    assert_eq!(t.run_dir("nfc").trials()[0]["verdict"], "pass");
}
