//! Variants beyond tool descriptions: the shipped `suites/variants.yaml` (parameter
//! descriptions, a replaced schema, another system prompt) replayed end to end, with
//! each variant's requests, verdicts, token figures and what it changes.

use serde_json::{Value, json};
use toolgauge::score::tokens::count;

use crate::support::{BAD_INPUT, OK, RunDir, Toolgauge, repo_root};

const VARIANTS: [&str; 4] = ["plain", "documented", "strict", "dated"];

/// Replay the shipped suite from the repository root into a scratch run directory.
fn replay(t: &Toolgauge, extra: &[&str]) -> (crate::support::Output, RunDir) {
    let out = t.path().join("run");
    let out_arg = out.to_string_lossy().into_owned();
    let mut args = vec!["run", "suites/variants.yaml", "--out", &out_arg];
    args.extend_from_slice(extra);
    let o = t.run_in(&repo_root(), &args).expect_code(OK);
    (o, RunDir::new(out))
}

#[test]
fn the_variants_suite_sends_scores_and_reports_each_variant() {
    let t = Toolgauge::new();
    let (o, dir) = replay(&t, &[]);
    dir.assert_complete();
    let meta = dir.json("run.json");
    let summary = dir.json("summary.json");

    // Token figures: the tool definitions as an OpenAI `tools` array and the system
    // prompt text, counted again here from what run.json says was sent.
    let mut figures = Vec::new();
    for (i, v) in VARIANTS.iter().enumerate() {
        let defs: Vec<Value> = meta["tools"][v]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| json!({"type": "function", "function": {"name": d["name"], "description": d["description"], "parameters": d["parameters"]}}))
            .collect();
        let tools = count(&Value::Array(defs).to_string());
        let system = meta["variant_details"][v]["system_prompt"]
            .as_str()
            .unwrap();
        let s = &summary["variants"][i];
        assert_eq!(s["variant"], *v);
        assert_eq!(s["tool_definition_tokens"], tools, "{v}");
        assert_eq!(s["system_prompt_tokens"], count(system), "{v}");
        figures.push((tools, count(system)));
    }
    // Pinned: the documented wording costs 97 tokens more, the strict schema 46, the
    // dated system prompt 16 (o200k_base).
    assert_eq!(figures, [(112, 11), (209, 11), (158, 11), (112, 27)]);
    assert_eq!(
        meta["variant_details"]["dated"]["system_prompt"],
        "You are a helpful travel assistant for trains in China. Today is Saturday, 2026-08-08 (Beijing time)."
    );

    // What each variant changes, as declared.
    let changes: Vec<&Value> = (0..4).map(|i| &summary["variants"][i]["changes"]).collect();
    assert_eq!(*changes[0], Value::Null, "plain changes nothing");
    assert_eq!(
        *changes[1],
        json!({"parameter_descriptions": {"search_trains": ["date", "seat", "passengers[].age"]}})
    );
    assert_eq!(*changes[2], json!({"schemas": ["search_trains"]}));
    assert_eq!(*changes[3], json!({"system_prompt": true}));

    // Every request of a variant carried that variant's schema and system prompt (the
    // cassette stores each request as it was keyed).
    let cassette =
        std::fs::read_to_string(repo_root().join("fixtures/variants.cassette.jsonl")).unwrap();
    let mut seen = 0;
    for line in cassette.lines().skip(1) {
        let e: Value = serde_json::from_str(line).unwrap();
        let v = e["variant"].as_str().unwrap();
        let r = &e["request"];
        assert_eq!(r["tools"], meta["tools"][v], "{v}");
        assert_eq!(
            r["messages"][0],
            json!({"role": "system", "content": meta["variant_details"][v]["system_prompt"]}),
            "{v}"
        );
        seen += 1;
    }
    assert_eq!(seen, 24);
    let date = |v: &str| meta["tools"][v][0]["parameters"]["properties"]["date"].clone();
    assert_eq!(date("plain"), json!({"type": "string"}));
    assert_eq!(
        date("documented")["description"],
        "Travel date as YYYY-MM-DD, e.g. 2026-08-09. Convert words such as 明天 or \"next Monday\" to a date; if you do not know today's date, ask."
    );
    assert_eq!(date("strict")["pattern"], "^[0-9]{4}-[0-9]{2}-[0-9]{2}$");

    // Verdicts as the hand-written story has them (fixtures/variants.script.yaml).
    let passed: Vec<u64> = (0..4)
        .map(|i| summary["cells"][i]["metrics"]["passed"].as_u64().unwrap())
        .collect();
    assert_eq!(passed, [2, 4, 4, 3]);
    let trials = dir.trials();
    let reason = |case: &str, v: &str| -> Vec<String> {
        let t = trials
            .iter()
            .find(|t| t["case_id"] == case && t["variant"] == v)
            .unwrap();
        // A passed trial has no `reasons`.
        t["reasons"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|r| r["code"].as_str().unwrap().to_string())
            .collect()
    };
    // "明天" is a valid date under the tool's schema (only the expectation catches it)
    // and a schema violation under the strict variant's pattern.
    assert_eq!(reason("tomorrow-zh", "plain"), ["args_mismatch"]);
    assert_eq!(
        reason("tomorrow-zh", "strict"),
        ["schema_violation", "args_mismatch"]
    );
    assert_eq!(reason("monday-en", "dated"), Vec::<String>::new());
    assert_eq!(reason("monday-en", "documented"), ["missed_call"]);

    // The terminal, summary.md and report.html show the figures and the changes.
    o.stdout_has(&[
        "tool definitions (o200k_base): plain 112 tokens, documented 209 tokens, strict 158 tokens, dated 112 tokens; system",
        "variants:",
        "  plain       nothing (the suite as written)",
        "  strict      search_trains: schema",
        "  dated       system prompt",
    ]);
    let md = std::fs::read_to_string(dir.path.join("summary.md")).unwrap();
    for row in [
        "| variant | changes | tool-definition tokens | system-prompt tokens |",
        "| plain | – | 112 | 11 |",
        "| documented | search_trains: parameter descriptions (date, seat, passengers[].age) | 209 | 11 |",
        "| strict | search_trains: schema | 158 | 11 |",
        "| dated | system prompt | 112 | 27 |",
    ] {
        assert!(md.contains(row), "summary.md lacks `{row}`:\n{md}");
    }
    let html = std::fs::read_to_string(dir.path.join("report.html")).unwrap();
    assert!(html.contains("<h2>Variants</h2>"));
    assert!(html.contains("<th class=\"n\">system-prompt tokens</th>"));
    assert!(html.contains("<td>search_trains: schema</td>"));
    assert!(html.contains("<h3>System prompts</h3>"));

    // `report` renders the same figures from run.json alone.
    t.run(&["report", dir.path.to_str().unwrap(), "--format", "json"])
        .assert_code(OK);
    assert_eq!(dir.json("summary.json")["variants"], summary["variants"]);
}

#[test]
fn the_oracle_passes_every_variant_of_the_suite() {
    let t = Toolgauge::new();
    let (o, dir) = replay(&t, &["-t", "scripted:oracle"]);
    assert!(!o.stderr.contains("can not satisfy"), "{}", o.stderr);
    let trials = dir.trials();
    assert_eq!(trials.len(), 24);
    let failed: Vec<String> = trials
        .iter()
        .filter(|t| t["verdict"] != "pass")
        .map(|t| format!("{} × {}: {}", t["case_id"], t["variant"], t["reasons"]))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    // Under the strict variant the oracle's calls validate against that variant's schema.
    for t in trials.iter().filter(|t| t["variant"] == "strict") {
        for c in t["checks"]["calls"].as_array().unwrap() {
            assert_eq!(c["schema_ok"], true, "{t}");
        }
    }
}

#[test]
fn a_variant_declared_nowhere_is_refused_on_the_command_line() {
    let t = Toolgauge::new();
    let o = t.run_in(
        &repo_root(),
        &[
            "run",
            "suites/variants.yaml",
            "--variant",
            "datd",
            "--out",
            t.path().join("x").to_str().unwrap(),
        ],
    );
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "unknown variant `datd`",
        "did you mean `dated`? the suite's variants are: documented, strict, plain, dated",
    ]);
}
