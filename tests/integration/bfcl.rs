//! BFCL: `toolgauge import bfcl` on a sample of BFCL's data, and replaying BFCL result
//! files through the `bfcl` profile with the verdicts BFCL's own checker gave.
//!
//! `fixtures/bfcl/data` holds 120 items of the 11 single-turn categories (verbatim lines;
//! see `fixtures/bfcl/NOTICE.md`), and `fixtures/bfcl/pairs.jsonl` 2,000 model results
//! built from them (right answers and many kinds of wrong ones), each with BFCL's verdict
//! (`valid`, `error_type`). The results are written as BFCL result files, replayed with
//! `--target bfcl-result:FILE`, and every trial's verdict and reason code must equal BFCL's.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::support::{OK, Toolgauge, fixtures_dir};

/// The 11 single-turn categories with their item counts in the sample.
fn sample_counts() -> BTreeMap<String, usize> {
    let dir = fixtures_dir().join("bfcl/data");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(cat) = name
            .strip_prefix("BFCL_v4_")
            .and_then(|n| n.strip_suffix(".json"))
            .filter(|c| !c.starts_with("multi_turn_"))
        {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            out.insert(
                cat.to_string(),
                text.lines().filter(|l| !l.trim().is_empty()).count(),
            );
        }
    }
    out
}

/// Import the sample into `suites/` of `t` (JSON suites, the default).
fn import(t: &Toolgauge) {
    let data = fixtures_dir().join("bfcl/data");
    let o = t.run(&["import", "bfcl", data.to_str().unwrap(), "--out", "suites"]);
    o.assert_code(OK);
}

#[test]
fn import_writes_one_loadable_suite_per_category_with_bfcl_ids() {
    let t = Toolgauge::new();
    import(&t);
    let data = fixtures_dir().join("bfcl/data");
    let o = t.run(&[
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "--out",
        "yaml",
        "--yaml",
    ]);
    o.assert_code(OK);
    let counts = sample_counts();
    assert_eq!(counts.len(), 11);
    for (cat, n) in &counts {
        // The JSON and YAML forms load to the same suite.
        let o = t.run(&["validate", &format!("suites/bfcl_{cat}.json")]);
        o.assert_code(OK);
        o.stdout_has(&[&format!("{n} cases")]);
        let path = format!("yaml/bfcl_{cat}.yaml");
        let o = t.run(&["validate", &path]);
        o.assert_code(OK);
        o.stdout_has(&[&format!("{n} cases")]);
        let text = t.read(&path);
        assert!(text.contains(&format!("category: {cat}")), "{path}");
    }
    let simple = t.read("yaml/bfcl_simple_python.yaml");
    // BFCL's ids, its types as JSON Schema, possible answers as matchers.
    assert!(simple.contains("- id: simple_python_"));
    assert!(simple.contains("type: object") && !simple.contains("type: dict"));
    assert!(simple.contains("optional: true"));
    let irrelevance = t.read("yaml/bfcl_irrelevance.yaml");
    assert!(irrelevance.contains("kind: should_not_call"));
    let relevance = t.read("yaml/bfcl_live_relevance.yaml");
    assert!(relevance.contains("any_call: true"));

    // A matcher the profile can not read as BFCL's acceptable values is bad input,
    // located in the file.
    let edited = simple.replacen("optional: true", "regex: x\n          optional: true", 1);
    assert_ne!(edited, simple);
    t.write("edited.yaml", edited);
    let o = t.run(&["validate", "edited.yaml"]);
    o.assert_code(crate::support::BAD_INPUT);
    o.stderr_has(&[
        "edited.yaml:",
        "the bfcl profile can not read this matcher",
        "hint:",
    ]);

    // Bad input: an unknown category, a directory without BFCL data.
    let o = t.run(&["import", "bfcl", ".", "--category", "simple", "--out", "x"]);
    o.assert_code(crate::support::BAD_INPUT);
    o.stderr_has(&["unknown BFCL category `simple`", "simple_python"]);
    let o = t.run(&[
        "import",
        "bfcl",
        ".",
        "--category",
        "parallel",
        "--out",
        "x",
    ]);
    o.assert_code(crate::support::BAD_INPUT);
    o.stderr_has(&["no BFCL question file for category `parallel`"]);
}

struct Pair {
    id: String,
    category: String,
    result: Value,
    style: String,
    valid: bool,
    error_type: Option<String>,
    pair_id: String,
}

/// The pairs of both files: results of function-calling models (`pairs.jsonl`, styles
/// `fc`: scored with dots in names as underscores, and `fc_dot`), and the same results
/// written as prompt-mode Python call text in several spellings (`pairs_prompt.jsonl`).
fn pairs() -> Vec<Pair> {
    ["bfcl/pairs.jsonl", "bfcl/pairs_prompt.jsonl"]
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(fixtures_dir().join(f))
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .map(|l| {
            let v: Value = serde_json::from_str(&l).unwrap();
            Pair {
                id: v["id"].as_str().unwrap().into(),
                category: v["category"].as_str().unwrap().into(),
                result: v["result"].clone(),
                style: v["model_style"].as_str().unwrap().into(),
                valid: v["valid"].as_bool().unwrap(),
                error_type: v["error_type"].as_str().map(str::to_string),
                pair_id: v["pair_id"].as_str().unwrap().into(),
            }
        })
        .collect()
}

/// Per pair id: passed, and the first reason's code.
type Verdicts = HashMap<String, (bool, Option<String>)>;

/// Replay every pair of the sample through `toolgauge run` (strict or default mode) and
/// return each pair's verdict.
fn replay_all(strict: bool) -> (Vec<Pair>, Verdicts) {
    let t = Toolgauge::new();
    import(&t);
    let pairs = pairs();
    // One run per category and name style; the k-th pair of each item goes into result
    // file k, and each file is one target of the run.
    let mut groups: BTreeMap<(String, String), Vec<&Pair>> = BTreeMap::new();
    for p in &pairs {
        groups
            .entry((p.category.clone(), p.style.clone()))
            .or_default()
            .push(p);
    }
    let mut out = HashMap::new();
    for ((cat, style), group) in &groups {
        let mut files: Vec<Vec<&Pair>> = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for p in group {
            let k = seen.entry(p.id.as_str()).or_insert(0);
            if files.len() <= *k {
                files.push(Vec::new());
            }
            files[*k].push(p);
            *k += 1;
        }
        let mut args: Vec<String> = vec![
            "run".into(),
            format!("suites/bfcl_{cat}.json"),
            "--out".into(),
            format!("out-{cat}-{style}-{strict}"),
            "--format".into(),
            "json".into(),
            "--quiet".into(),
            // Items without a line in a file are "missing" error trials.
            "--max-error-rate".into(),
            "1".into(),
            "--bfcl-style".into(),
            if style == "prompt" { "prompt" } else { "fc" }.into(),
        ];
        if strict {
            args.push("--bfcl-strict".into());
        }
        // BFCL converts dots in expected names for function-calling models only.
        if style == "fc" {
            args.push("--bfcl-underscore-names".into());
        }
        let mut by_target: HashMap<String, HashMap<&str, &Pair>> = HashMap::new();
        for (k, file) in files.iter().enumerate() {
            let name = format!("result-{cat}-{style}-{k}.json");
            let text: String = file
                .iter()
                .map(|p| format!("{}\n", json!({"id": p.id, "result": p.result})))
                .collect();
            t.write(&name, text);
            let target = format!("bfcl-result:{name}");
            args.push("-t".into());
            args.push(target.clone());
            by_target.insert(target, file.iter().map(|p| (p.id.as_str(), *p)).collect());
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = t.run(&argv);
        assert!(
            o.code == Some(OK) || o.code == Some(crate::support::THRESHOLD_FAILED),
            "{}",
            o.stderr
        );
        for trial in t.run_dir(&format!("out-{cat}-{style}-{strict}")).trials() {
            let target = trial["target"].as_str().unwrap();
            let id = trial["case_id"].as_str().unwrap();
            let Some(p) = by_target.get(target).and_then(|m| m.get(id)) else {
                assert_eq!(
                    trial["verdict"], "error",
                    "a trial with no result line is missing"
                );
                assert!(
                    trial["reasons"][0]["message"]
                        .as_str()
                        .unwrap()
                        .contains("missing")
                );
                continue;
            };
            let passed = trial["verdict"] == "pass";
            assert_ne!(trial["verdict"], "error", "{trial}");
            // With underscored names, toolgauge's own checks still find the dotted tool
            // an accepted answer called (relevance items accept calls to any name).
            if passed
                && !p.category.contains("relevance")
                && let Some(calls) = trial["checks"]["calls"].as_array()
            {
                for c in calls {
                    assert_eq!(c["known_tool"], true, "{}: {c}", p.pair_id);
                }
            }
            let code = trial["reasons"][0]["code"].as_str().map(str::to_string);
            out.insert(p.pair_id.clone(), (passed, code));
        }
    }
    let _keep = t;
    (pairs, out)
}

#[test]
fn strict_replay_agrees_with_bfcl_on_every_pair() {
    let (pairs, got) = replay_all(true);
    let mut disagree = Vec::new();
    for p in &pairs {
        let (passed, code) = got
            .get(&p.pair_id)
            .unwrap_or_else(|| panic!("pair {} was not scored", p.pair_id));
        let want_code = if p.valid { None } else { p.error_type.clone() };
        if *passed != p.valid || *code != want_code {
            disagree.push(format!(
                "{}: toolgauge {passed} {code:?}, BFCL {} {want_code:?}",
                p.pair_id, p.valid
            ));
        }
    }
    eprintln!(
        "BFCL agreement (strict): {} of {} pairs",
        pairs.len() - disagree.len(),
        pairs.len()
    );
    assert!(
        disagree.is_empty(),
        "{} disagreements:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
}

#[test]
fn default_mode_differs_from_bfcl_only_where_bfcl_is_wrong() {
    let (pairs, got) = replay_all(false);
    let mut flips = Vec::new();
    for p in &pairs {
        let (passed, code) = &got[&p.pair_id];
        let want_code = if p.valid { None } else { p.error_type.clone() };
        if *passed == p.valid && *code == want_code {
            continue;
        }
        // The two documented differences: an optimal pairing of parallel calls passes
        // what BFCL's greedy pairing fails, and a malformed call attempt on an
        // irrelevance item is a call.
        let ok = (p.error_type.as_deref()
            == Some("parallel_function_checker_no_order:cannot_find_match")
            && *passed)
            || (p.category.contains("irrelevance")
                && p.valid
                && !*passed
                && code.as_deref() == Some("irrelevance_error:malformed_call"));
        assert!(
            ok,
            "unexpected difference on {}: {passed} {code:?}",
            p.pair_id
        );
        flips.push(&p.pair_id);
    }
    eprintln!("default mode differs from BFCL on {} pairs", flips.len());
    assert!(
        flips.iter().any(|f| f.contains("parallel_178")),
        "the greedy-pairing defect is fixed"
    );
    assert!(
        flips.iter().any(|f| f.contains("irrelevance")),
        "malformed attempts count as calls"
    );
}

/// The first acceptable value of an option list (`None` when only `""` is), with the
/// dicts inside it (whose values are option lists again) instantiated the same way.
fn first_option(opts: &Value) -> Option<Value> {
    fn instantiate(v: &Value) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter_map(|(k, opts)| Some((k.clone(), first_option(opts)?)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(instantiate).collect()),
            other => other.clone(),
        }
    }
    let first = opts.as_array()?.iter().find(|o| o.as_str() != Some(""))?;
    Some(instantiate(first))
}

/// Items no answer can pass under BFCL's checker (their possible answers are defective);
/// docs/bfcl.md lists them.
const UNPASSABLE: [&str; 5] = [
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    "live_multiple_862-181-3",
    "live_multiple_964-207-0",
    "live_multiple_507-149-4",
];

#[test]
fn every_possible_answer_replayed_as_a_result_passes() {
    let t = Toolgauge::new();
    import(&t);
    let data = fixtures_dir().join("bfcl/data");
    let mut checked = 0;
    for (cat, _) in sample_counts() {
        let questions = std::fs::read_to_string(data.join(format!("BFCL_v4_{cat}.json"))).unwrap();
        let answers: HashMap<String, Value> =
            std::fs::read_to_string(data.join(format!("possible_answer/BFCL_v4_{cat}.json")))
                .map(|text| {
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| {
                            let v: Value = serde_json::from_str(l).unwrap();
                            (
                                v["id"].as_str().unwrap().to_string(),
                                v["ground_truth"].clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
        // The answer itself: the first acceptable value of each parameter (left out when
        // only "" is acceptable); no call for irrelevance, any call for relevance.
        let mut lines = String::new();
        for q in questions.lines().filter(|l| !l.trim().is_empty()) {
            let q: Value = serde_json::from_str(q).unwrap();
            let id = q["id"].as_str().unwrap();
            let result = if cat.contains("irrelevance") {
                json!("I can not help with that using these functions.")
            } else if cat.contains("relevance") {
                json!([{ q["function"][0]["name"].as_str().unwrap(): "{}" }])
            } else {
                let calls: Vec<Value> = answers[id]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|call| {
                        let (name, params) = call.as_object().unwrap().iter().next().unwrap();
                        let args: serde_json::Map<String, Value> = params
                            .as_object()
                            .unwrap()
                            .iter()
                            .filter_map(|(p, opts)| Some((p.clone(), first_option(opts)?)))
                            .collect();
                        json!({ name: Value::Object(args).to_string() })
                    })
                    .collect();
                Value::Array(calls)
            };
            lines.push_str(&format!("{}\n", json!({"id": id, "result": result})));
        }
        let file = format!("answers-{cat}.json");
        t.write(&file, &lines);
        // The same lines in BFCL's result layout, for the run of every suite at once below.
        let group = if cat.starts_with("live") {
            "live"
        } else {
            "non_live"
        };
        std::fs::create_dir_all(t.path().join(format!("result/m/{group}"))).unwrap();
        t.write(
            &format!("result/m/{group}/BFCL_v4_{cat}_result.json"),
            &lines,
        );
        let out = format!("answers-{cat}");
        let o = t.run(&[
            "run",
            &format!("suites/bfcl_{cat}.json"),
            "-t",
            &format!("bfcl-result:{file}"),
            "--bfcl-style",
            "fc",
            "--out",
            &out,
            "--format",
            "csv",
            "--quiet",
        ]);
        assert!(o.code == Some(OK) || o.code == Some(crate::support::THRESHOLD_FAILED));
        // trials.csv: one row per item, with BFCL's id and pass/fail.
        for (id, passed) in passed_by_id(&t, &out) {
            checked += 1;
            assert_eq!(
                passed,
                !UNPASSABLE.contains(&id.as_str()),
                "{id}: passed = {passed}"
            );
        }
    }
    assert_eq!(checked, sample_counts().values().sum::<usize>());

    // Every suite in one run against the result directory: suites then load (and prepare
    // their scoring) on another thread while the previous one runs; the verdicts must be
    // the same item for item.
    let suites: Vec<String> = sample_counts()
        .keys()
        .map(|cat| format!("suites/bfcl_{cat}.json"))
        .collect();
    let mut args: Vec<&str> = vec!["run"];
    args.extend(suites.iter().map(String::as_str));
    args.extend([
        "-t",
        "bfcl-result:result/m",
        "--bfcl-style",
        "fc",
        "--reports-dir",
        "all",
        "--format",
        "csv",
        "--quiet",
    ]);
    let o = t.run(&args);
    assert!(o.code == Some(OK) || o.code == Some(crate::support::THRESHOLD_FAILED));
    let runs: Vec<String> = std::fs::read_dir(t.path().join("all"))
        .unwrap()
        .flatten()
        .map(|e| format!("all/{}", e.file_name().to_string_lossy()))
        .collect();
    assert_eq!(runs.len(), suites.len());
    let mut together = 0;
    for run in runs {
        for (id, passed) in passed_by_id(&t, &run) {
            together += 1;
            assert_eq!(
                passed,
                !UNPASSABLE.contains(&id.as_str()),
                "{id} in one run"
            );
        }
    }
    assert_eq!(together, checked);
}

/// Each row of a run's trials.csv as (BFCL item id, passed).
fn passed_by_id(t: &Toolgauge, run: &str) -> Vec<(String, bool)> {
    let (header, rows) = t.run_dir(run).csv("trials.csv");
    let id_col = header.iter().position(|h| h == "case_id").unwrap();
    let passed_col = header.iter().position(|h| h == "passed").unwrap();
    rows.into_iter()
        .map(|row| (row[id_col].clone(), row[passed_col] == "true"))
        .collect()
}

#[test]
fn the_profiles_flags_are_kept_in_run_json_and_resumed_with() {
    // The profile's flags reach run.json through the profile registry, under the keys
    // run.json always had, and `--resume` runs with them again.
    let t = Toolgauge::new();
    t.write(
        "b.yaml",
        r#"profile: { bfcl: { category: simple_python } }
cases:
  - id: weather
    kind: should_call
    prompt: "Weather in San Francisco?"
    tools:
      - name: weather
        description: The weather in a city.
        parameters: { type: object, properties: { city: { type: string } }, required: [city] }
    expect: { calls: [ { tool: weather, args: { city: "San Francisco" } } ] }
"#,
    );
    let run = |args: &[&str]| {
        let o = t.run(args);
        assert_eq!(o.code, Some(OK), "{}", o.stderr);
    };
    run(&[
        "run",
        "b.yaml",
        "-t",
        "scripted:oracle",
        "--bfcl-strict",
        "--bfcl-underscore-names",
        "--bfcl-style",
        "fc",
        "--out",
        "out",
        "--quiet",
    ]);
    let keys = |dir: &str| -> Vec<(String, serde_json::Value)> {
        let meta = t.run_dir(dir).json("run.json");
        let settings = meta["settings"].as_object().unwrap();
        settings
            .iter()
            .filter(|(k, _)| k.starts_with("bfcl_"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let want = vec![
        ("bfcl_strict".to_string(), serde_json::json!(true)),
        ("bfcl_style".to_string(), serde_json::json!("fc")),
        ("bfcl_underscore_names".to_string(), serde_json::json!(true)),
    ];
    assert_eq!(keys("out"), want);
    run(&["run", "--resume", "out", "--quiet"]);
    assert_eq!(keys("out"), want);
    // Without the flags, none of the keys.
    run(&[
        "run",
        "b.yaml",
        "-t",
        "scripted:oracle",
        "--out",
        "plain",
        "--quiet",
    ]);
    assert!(keys("plain").is_empty());
}

/// The multi-turn sample: 6 items of each of the four categories
/// (`fixtures/bfcl/data/BFCL_v4_multi_turn_*.json`, made by tests/bfcl_multi/generate.py).
const MULTI_TURN: [&str; 4] = [
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
];

#[test]
fn import_writes_multi_turn_suites_in_the_world_case_shape() {
    let t = Toolgauge::new();
    let data = fixtures_dir().join("bfcl/data");
    // Single-turn and multi-turn categories in one call.
    let o = t.run(&[
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "--category",
        &format!("simple_python,{}", MULTI_TURN.join(",")),
        "--out",
        "suites",
    ]);
    o.assert_code(OK);
    o.stdout_has(&["simple_python: ", "multi_turn_miss_func: 6 cases -> "]);
    let o = t.run(&[
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "--category",
        "multi_turn_miss_func",
        "--out",
        "yaml",
        "--yaml",
    ]);
    o.assert_code(OK);
    let yaml = t.read("yaml/bfcl_multi_turn_miss_func.yaml");
    assert!(yaml.contains("withheld:") && yaml.contains("max_rounds_per_turn: 20"));

    for cat in MULTI_TURN {
        let suite: Value =
            serde_json::from_str(&t.read(&format!("suites/bfcl_{cat}.json"))).unwrap();
        assert_eq!(suite["profile"], json!({"bfcl": {"category": cat}}));
        assert_eq!(
            suite["limits"],
            json!({"max_rounds": 100, "max_tool_calls": 1000, "max_identical_calls": 1000,
                   "max_rounds_per_turn": 20})
        );
        let questions = std::fs::read_to_string(data.join(format!("BFCL_v4_{cat}.json"))).unwrap();
        let answers =
            std::fs::read_to_string(data.join(format!("possible_answer/BFCL_v4_{cat}.json")))
                .unwrap();
        let cases = suite["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 6, "{cat}");
        for ((case, q), a) in cases.iter().zip(questions.lines()).zip(answers.lines()) {
            let q: Value = serde_json::from_str(q).unwrap();
            let a: Value = serde_json::from_str(a).unwrap();
            let id = q["id"].as_str().unwrap();
            assert_eq!(case["id"], id);
            let n = q["question"].as_array().unwrap().len();
            assert_eq!(case["turns"].as_array().unwrap().len(), n - 1, "{id}");
            let world = &case["world"]["bfcl"];
            assert_eq!(world["classes"], q["involved_classes"], "{id}");
            assert_eq!(world["initial_config"], q["initial_config"], "{id}");
            assert_eq!(
                world["long_context"],
                cat == "multi_turn_long_context",
                "{id}"
            );
            assert_eq!(world["ground_truth"], a["ground_truth"], "{id}");
            assert_eq!(world["ground_truth"].as_array().unwrap().len(), n, "{id}");
            if cat == "multi_turn_miss_func" {
                let withheld = case["withheld"].as_object().unwrap();
                assert!(!withheld.is_empty(), "{id}");
                for (name, turn) in withheld {
                    let turn = turn.as_u64().unwrap() as usize;
                    assert!(
                        q["missed_function"][turn.to_string()]
                            .as_array()
                            .unwrap()
                            .contains(&json!(name))
                    );
                    assert_eq!(
                        case["turns"][turn - 1],
                        "I have updated some more functions you can choose from. What about now?"
                    );
                }
            } else {
                assert!(case.get("withheld").is_none(), "{id}");
            }
        }
    }

    // An unknown class is bad input naming the item, the class and the known ones.
    let lines = std::fs::read_to_string(data.join("BFCL_v4_multi_turn_base.json")).unwrap();
    let mut first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    first["involved_classes"][0] = json!("WeatherAPI");
    let broken = format!("{first}\n");
    let dir = t.path().join("broken");
    std::fs::create_dir_all(dir.join("possible_answer")).unwrap();
    std::fs::create_dir_all(dir.join("multi_turn_func_doc")).unwrap();
    std::fs::write(dir.join("BFCL_v4_multi_turn_base.json"), broken).unwrap();
    std::fs::copy(
        data.join("possible_answer/BFCL_v4_multi_turn_base.json"),
        dir.join("possible_answer/BFCL_v4_multi_turn_base.json"),
    )
    .unwrap();
    let o = t.run(&[
        "import",
        "bfcl",
        dir.to_str().unwrap(),
        "--category",
        "multi_turn_base",
        "--out",
        "x",
    ]);
    o.assert_code(crate::support::BAD_INPUT);
    o.stderr_has(&[
        &format!("item `{}`", first["id"].as_str().unwrap()),
        "unknown class `WeatherAPI`",
        "GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI",
    ]);
}
