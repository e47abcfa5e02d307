//! `distractors:`: the tool-count axis end to end (trials per N, the summary section's
//! values derived by hand, the chart), each pool kind, and located errors for bad input.

use serde_json::{Value, json};

use crate::support::{BAD_INPUT, OK, Toolgauge};

/// A `tools/list` result of six tools, none named like the suite's.
fn pool_json() -> String {
    let tools: Vec<Value> = (1..=6)
        .map(|i| json!({"name": format!("pool_{i}"), "description": format!("Pool tool {i}."), "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}))
        .collect();
    json!({"tools": tools}).to_string()
}

fn suite(from: &str, n: &str, targets: &str) -> String {
    format!(
        r#"
distractors: {{from: {from}, n: {n}}}
matrix: {{targets: {targets}, tool_choice: [auto]}}
tools:
  - name: get_weather
    description: "Current weather for one city."
    parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
cases:
  - {{id: c1, kind: should_call, prompt: "Weather in Paris?", expect: {{calls: [{{tool: get_weather, args: {{city: Paris}}}}]}}}}
  - {{id: c2, kind: should_not_call, prompt: "hi"}}
"#
    )
}

#[test]
fn the_axis_runs_every_count_and_the_summary_has_hand_checked_rates() {
    let t = Toolgauge::new();
    t.write("pool.json", pool_json());
    t.write(
        "s.yaml",
        suite(
            "pool.json",
            "[0, 2, 5]",
            r#"["scripted:oracle", "scripted:wrong_tool"]"#,
        ),
    );
    let dir = t.path().join("s.yaml");
    t.run(&["run", dir.to_str().unwrap(), "--out", "out", "--quiet"])
        .assert_code(OK);
    let run = t.run_dir("out");
    run.assert_complete();
    let trials = run.trials();
    // 2 targets × 3 counts × 2 cases.
    assert_eq!(trials.len(), 12);
    for n in [0, 2, 5] {
        assert_eq!(
            trials
                .iter()
                .filter(|r| r["distractors"]["n"] == json!(n))
                .count(),
            4,
            "N={n}"
        );
    }
    let summary = run.json("summary.json");
    let rows = summary["distractors"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    let row = |target: &str, n: u32| {
        rows.iter()
            .find(|r| r["target"] == target && r["n"] == n)
            .unwrap_or_else(|| panic!("no row {target} N={n}: {rows:?}"))
    };
    // The oracle always picks get_weather and never calls in c2.
    for n in [0, 2, 5] {
        let r = row("scripted:oracle", n);
        assert_eq!(r["selection_accuracy"], json!(1.0));
        assert_eq!(r["false_call_rate"], json!(0.0));
        assert_eq!(r["trials"], json!(2));
    }
    // wrong_tool calls the first offered tool that is not the expected one: at N=0
    // there is none (it makes one up), so c1 is not selected and calls no distractor,
    // and c2 (expected: none; "first tool" get_weather) calls the made-up name: a false
    // call (any call where none is due). 1 of 2 trials.
    let r0 = row("scripted:wrong_tool", 0);
    assert_eq!(r0["selection_accuracy"], json!(0.0));
    assert_eq!(r0["false_call_rate"], json!(0.5));
    assert_eq!(r0["distractor_calls"], json!(0));
    // From N=2 the first other tool is a distractor in both cases: 2 of 2.
    for n in [2, 5] {
        let r = row("scripted:wrong_tool", n);
        assert_eq!(r["false_call_rate"], json!(1.0));
        assert_eq!(r["distractor_calls"], json!(2));
    }
    // Issue 31: a call of an offered distractor is a wrong tool (`distractor_call`), not
    // an invalid call: at N=0 wrong_tool's made-up name is unknown (c1 and c2 both call
    // it: 2 invalid of 2 calls), from N=2 it calls a distractor with `{}`, which its
    // schema accepts (0 of 2).
    let cells = summary["cells"].as_array().unwrap();
    let invalid = |n: u32| {
        let c = cells
            .iter()
            .find(|c| c["target"] == "scripted:wrong_tool" && c["distractors"] == n)
            .unwrap();
        let r = &c["metrics"]["invalid_call_rate"];
        (r["num"].as_u64().unwrap(), r["den"].as_u64().unwrap())
    };
    assert_eq!(invalid(0), (2, 2));
    assert_eq!(invalid(2), (0, 2));
    assert_eq!(invalid(5), (0, 2));
    let c1 = trials
        .iter()
        .find(|r| {
            r["target"] == "scripted:wrong_tool"
                && r["case_id"] == "c1"
                && r["distractors"]["n"] == 2
        })
        .unwrap();
    assert_eq!(c1["reasons"][0]["code"], "distractor_call", "{c1}");
    assert_eq!(c1["checks"]["calls"][0]["distractor"], true);
    // More tools, more tokens.
    let tokens = |n| {
        row("scripted:oracle", n)["mean_tool_definition_tokens"]
            .as_f64()
            .unwrap()
    };
    assert!(tokens(0) < tokens(2) && tokens(2) < tokens(5));
    // Cells name their count.
    let cells = summary["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    assert_eq!(cells[1]["distractors"], json!(2));
    let html = std::fs::read_to_string(run.path.join("report.html")).unwrap();
    assert!(html.contains(r#"<svg class="chart distractors""#));
    assert!(html.contains("Tool-count scaling"));
    let md = std::fs::read_to_string(run.path.join("summary.md")).unwrap();
    assert!(md.contains("auto × N=5"), "{md}");
    let (header, _) = run.csv("trials.csv");
    assert!(header.ends_with(&[
        "distractors".to_string(),
        "selected".into(),
        "false_call".into(),
        "tool_definition_tokens".into()
    ]));
}

#[test]
fn runs_without_the_axis_have_no_distractor_fields() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    t.run(&["run", &suite, "--out", "out", "--quiet"]);
    let run = t.run_dir("out");
    assert!(run.trials().iter().all(|r| r.get("distractors").is_none()));
    assert!(run.json("summary.json").get("distractors").is_none());
    let (header, _) = run.csv("trials.csv");
    assert!(!header.contains(&"distractors".to_string()));
}

#[test]
fn every_pool_kind_loads() {
    let t = Toolgauge::new();
    let tools = json!([
        {"name": "a_tool", "description": "A.", "inputSchema": {"type": "object"}},
        {"name": "b_tool", "inputSchema": {"type": "object"}}
    ]);
    t.write(
        "snap.json",
        json!({"format": 1, "server": "stdio:x", "era": "legacy", "protocol_version": "2025-06-18", "tools": tools}).to_string(),
    );
    t.write(
        "cat.json",
        json!([{"name": "S", "tools": {"s": {"tools": tools}}}]).to_string(),
    );
    t.write("list.json", tools.to_string());
    t.write(
        "other.yaml",
        "tools:\n  - {name: a_tool, description: A., parameters: {type: object}}\n  - {name: b_tool, description: B., parameters: {type: object}}\ncases:\n  - {id: x, kind: should_not_call, prompt: hi}\n",
    );
    for pool in ["snap.json", "cat.json", "list.json", "other.yaml"] {
        t.write("s.yaml", suite(pool, "[0, 2]", r#"["scripted:oracle"]"#));
        let s = t.path().join("s.yaml");
        t.run(&["validate", s.to_str().unwrap()]).expect_code(OK);
    }
}

#[test]
fn bad_pools_and_counts_are_located_errors() {
    let t = Toolgauge::new();
    t.write("pool.json", pool_json());
    t.write(
        "noname.json",
        r#"{"tools": [{"name": "ok"}, {"description": "x"}]}"#,
    );
    let cases = [
        ("missing.json", "[0, 2]", "cannot read distractor pool"),
        (
            "pool.json",
            "[0, 7]",
            "count 7 is larger than the MCP tool list pool",
        ),
        ("pool.json", "[2, 2]", "count 2 is listed twice"),
        ("noname.json", "[1]", "tool #2 has no string `name`"),
        (
            "stdio:srv",
            "[1]",
            "toolgauge mcp snapshot stdio:srv pool.json",
        ),
    ];
    for (from, n, needle) in cases {
        t.write("s.yaml", suite(from, n, r#"["scripted:oracle"]"#));
        let s = t.path().join("s.yaml");
        let o = t
            .run(&["validate", s.to_str().unwrap()])
            .expect_code(BAD_INPUT);
        o.stderr_has(&[needle, "s.yaml:2:", "field: distractors."]);
    }
}

/// The (case, N) of every trial of a run, sorted.
fn case_counts(t: &Toolgauge, dir: &str) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = t
        .run_dir(dir)
        .trials()
        .iter()
        .map(|r| {
            (
                r["case_id"].as_str().unwrap().to_string(),
                r["distractors"]["n"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn trials_at_different_counts_are_different_trials_for_compare_resume_and_shards() {
    let t = Toolgauge::new();
    t.write("pool.json", pool_json());
    t.write(
        "s.yaml",
        suite("pool.json", "[0, 2, 5]", r#"["scripted:oracle"]"#),
    );
    let s = t.path().join("s.yaml");
    let s = s.to_str().unwrap();
    t.run(&["run", s, "--out", "whole", "--quiet"])
        .assert_code(OK);
    let all = case_counts(&t, "whole");
    assert_eq!(all.len(), 6);

    // Compare pairs each (case, N) with itself: 6 pairs, none a duplicate.
    let o = t.run(&["compare", "whole", "whole", "--format", "json"]);
    o.assert_code(OK);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], 6, "{c}");
    assert_eq!(c["duplicates"], 0, "{c}");

    // Resume runs exactly the (case, N) trials the journal lacks.
    t.run(&["run", s, "--out", "part", "--quiet"])
        .assert_code(OK);
    let journal = t.read("part/trials.jsonl");
    let kept: Vec<&str> = journal.lines().step_by(2).collect();
    t.write("part/trials.jsonl", kept.join("\n") + "\n");
    t.run(&["run", "--resume", "part", "--quiet"])
        .assert_code(OK);
    assert_eq!(case_counts(&t, "part"), all);

    // Two shards hold every trial once, and merge back into the whole run's summary.
    for k in ["1/2", "2/2"] {
        let out = format!("shard{}", &k[..1]);
        t.run(&["run", s, "--shard", k, "--out", &out, "--quiet"])
            .assert_code(OK);
    }
    let mut union = case_counts(&t, "shard1");
    union.extend(case_counts(&t, "shard2"));
    union.sort();
    assert_eq!(union, all);
    t.run(&["merge", "shard1", "shard2", "--out", "merged"])
        .assert_code(OK);
    assert_eq!(case_counts(&t, "merged"), all);
    assert_eq!(
        t.run_dir("merged").json("summary.json")["distractors"],
        t.run_dir("whole").json("summary.json")["distractors"]
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn a_live_mcp_server_is_a_pool() {
    let Some(p) = crate::mcp_peers::peers() else {
        return;
    };
    let t = Toolgauge::new();
    // The Python SDK server lists at least four tools (add, echo, fail, delete_record).
    let server = format!("\"{}\"", p.sdk_stdio());
    t.write("s.yaml", suite(&server, "[0, 4]", r#"["scripted:oracle"]"#));
    let s = t.path().join("s.yaml");
    let s = s.to_str().unwrap();
    t.run(&["run", s, "--out", "out", "--quiet"])
        .assert_code(OK);
    let rows = t.run_dir("out").json("summary.json")["distractors"].clone();
    assert_eq!(rows[1]["n"], 4);
    assert!(
        rows[1]["mean_tool_definition_tokens"].as_f64()
            > rows[0]["mean_tool_definition_tokens"].as_f64()
    );
    // A thousand is more than the server has.
    t.write("s.yaml", suite(&server, "[1000]", r#"["scripted:oracle"]"#));
    t.run(&["validate", s])
        .expect_code(BAD_INPUT)
        .stderr_has(&["count 1000 is larger than the MCP server pool"]);
}

#[test]
fn pool_tools_named_like_a_case_tool_are_skipped_and_the_run_says_so() {
    let t = Toolgauge::new();
    t.write(
        "pool.json",
        json!({"tools": [
            {"name": "get_weather", "description": "Another weather tool."},
            {"name": "x_tool"}, {"name": "y_tool"}, {"name": "x_tool"}
        ]})
        .to_string(),
    );
    t.write(
        "s.yaml",
        suite("pool.json", "[2]", r#"["scripted:oracle"]"#),
    );
    let s = t.path().join("s.yaml");
    let s = s.to_str().unwrap();
    let o = t.run(&["run", s, "--out", "out", "--quiet"]);
    o.assert_code(OK);
    o.stderr_has(&[
        "not added where a case offers a tool of the same name: `get_weather` (2 cases)",
        "names 1 tool(s) more than once (x_tool)",
    ]);
    // The oracle still calls the case's get_weather: nothing shadowed it.
    let rows = t.run_dir("out").json("summary.json")["distractors"].clone();
    assert_eq!(rows[0]["selection_accuracy"], json!(1.0));
    // Three distinct names, one clashing: two can be added.
    t.write(
        "s.yaml",
        suite("pool.json", "[3]", r#"["scripted:oracle"]"#),
    );
    t.run(&["validate", s]).expect_code(BAD_INPUT).stderr_has(&[
        "which has 2 tools to add to case `c1` (1 of its 3 tools clash with case `c1`'s own)",
        "hint: use counts up to 2, or a larger pool",
    ]);
}

/// The shipped example (`examples/scaling/distractors.yaml`, offline on the simulated
/// `scripted:crowded`) gives the figures per N that docs/distractors.md states ("What
/// the example shows"): the test holds both the run and the doc's table to them, and
/// its page has the section's navigation link, intervals, and no variant chart (the
/// example has one variant).
#[test]
fn the_distractor_example_gives_the_documented_figures_per_n() {
    let t = Toolgauge::new();
    let suite = crate::support::repo_root().join("examples/scaling/distractors.yaml");
    t.run(&["run", suite.to_str().unwrap(), "--out", "out", "--quiet"])
        .assert_code(OK);
    let run = t.run_dir("out");
    run.assert_complete();
    let summary = run.json("summary.json");
    let rows = summary["distractors"].as_array().unwrap();
    // (N, selected / should_call, false calls / scored, distractor calls, tool tokens).
    type Figures = (u32, (u64, u64), (u64, u64), u64, u64);
    let expected: [Figures; 5] = [
        (0, (18, 21), (0, 27), 0, 467),
        (10, (17, 21), (3, 27), 3, 2089),
        (50, (8, 21), (14, 27), 14, 8358),
        (100, (6, 21), (17, 27), 17, 17031),
        (200, (5, 21), (18, 27), 18, 35166),
    ];
    let got: Vec<Figures> = rows
        .iter()
        .map(|r| {
            let u = |k: &str| r[k].as_u64().unwrap();
            (
                u("n") as u32,
                (u("selected"), u("should_call")),
                (u("false_calls"), u("scored")),
                u("distractor_calls"),
                r["mean_tool_definition_tokens"].as_f64().unwrap().round() as u64,
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert!(rows.iter().all(|r| r["trials"] == 27));
    // The doc states the same figures, row by row.
    let doc =
        std::fs::read_to_string(crate::support::repo_root().join("docs/distractors.md")).unwrap();
    let pct = |k: u64, n: u64| format!("{:.1}%", k as f64 * 100.0 / n as f64);
    for (n, (s, sc), (f, sd), d, tok) in expected {
        let line = format!(
            "| {n} | {} ({s}/{sc}) | {} ({f}/{sd}) | {d} | {tok} |",
            pct(s, sc),
            pct(f, sd)
        );
        assert!(doc.contains(&line), "docs/distractors.md lacks `{line}`");
    }
    // The page: a navigation link to the section, each rate with its interval, and no
    // "Description variants" chart for the single variant.
    let html = std::fs::read_to_string(run.path.join("report.html")).unwrap();
    assert!(html.contains(r##"<a href="#distractors">Tool count</a>"##));
    assert!(html.contains(r#"85.7%<span class="ci">[65.4–95.0%]</span> (18/21)"#));
    assert!(!html.contains("Accuracy against tool-definition tokens per variant"));
    assert!(html.contains("One variant only: no chart"));
}
