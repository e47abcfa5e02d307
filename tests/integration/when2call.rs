//! When2Call: `toolgauge import when2call` on the committed test split (300 items), the
//! written suite validated, the shipped example (examples/when2call) kept equal to a fresh
//! import, and the example's simulated models run offline.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::{BAD_INPUT, OK, RunDir, Toolgauge, repo_root};

const SPLIT: &str = "datasets/when2call/when2call_test_llm_judge.jsonl";
const SUITE: &str = "when2call_test_llm_judge.json";

fn split_items() -> Vec<Value> {
    std::fs::read_to_string(repo_root().join(SPLIT))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn import(t: &Toolgauge) -> Value {
    let split = repo_root().join(SPLIT);
    t.run(&["import", "when2call", split.to_str().unwrap(), "--out", "out"])
        .expect_code(OK)
        .stdout_has(&[
            "when2call: 300 cases (100 tool_call, 100 request_for_info, 100 cannot_answer; 17 without tools)",
        ]);
    serde_json::from_str(&t.read(&format!("out/{SUITE}"))).unwrap()
}

#[test]
fn the_split_imports_as_one_valid_suite_of_uuids_by_label() {
    let t = Toolgauge::new();
    let suite = import(&t);
    let cases = suite["cases"].as_array().unwrap();
    let items = split_items();
    assert_eq!(cases.len(), 300);

    // Ids are the uuids, in the file's order.
    let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let uuids: Vec<&str> = items.iter().map(|i| i["uuid"].as_str().unwrap()).collect();
    assert_eq!(ids, uuids);

    // 100 of each kind, each label mapped to its kind and expectation.
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, it) in cases.iter().zip(&items) {
        *kinds.entry(c["kind"].as_str().unwrap()).or_default() += 1;
        match it["correct_answer"].as_str().unwrap() {
            "tool_call" => assert_eq!(c["kind"], "should_call"),
            "request_for_info" => {
                assert_eq!(c["kind"], "ambiguous");
                assert_eq!(c["expect"], json!({"any_of": [{"clarify": true}]}));
            }
            "cannot_answer" => {
                assert_eq!(c["kind"], "should_not_call");
                assert_eq!(c["expect"], json!({"behaviour": "cannot_answer"}));
            }
            other => panic!("the split has no `{other}` item"),
        }
        // Source and source id kept as tags; the item's own tools offered.
        assert!(c["tags"].as_array().unwrap().contains(&json!(format!(
            "source_id:{}",
            it["source_id"].as_str().unwrap()
        ))));
        assert_eq!(
            c["tools"].as_array().unwrap().len(),
            it["tools"].as_array().unwrap().len()
        );
    }
    assert_eq!(
        kinds,
        BTreeMap::from([
            ("ambiguous", 100),
            ("should_call", 100),
            ("should_not_call", 100)
        ])
    );

    // Spot check, line 264: "Find me a Horror movie with Arthur Lowe in it?"
    let c = cases
        .iter()
        .find(|c| c["id"] == "267a1f5e-ac14-4b4e-a880-f80546739190")
        .unwrap();
    assert_eq!(
        c["prompt"],
        "Find me a Horror movie with Arthur Lowe in it?"
    );
    assert_eq!(
        c["tags"],
        json!([
            "tool_call",
            "source:BFCL v2 Live Multiple",
            "source_id:live_multiple_588-157-9"
        ])
    );
    assert_eq!(
        c["expect"],
        json!({"calls": [{"tool": "Media_3_FindMovies",
            "args": {"genre": "Horror", "starring": "Arthur Lowe"}}]})
    );
    let tool = c["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Media_3_FindMovies")
        .unwrap();
    // BFCL's `dict` became JSON Schema's `object`; the rest as written.
    assert_eq!(tool["parameters"]["type"], "object");
    assert_eq!(tool["parameters"]["required"], json!(["genre"]));
    assert_eq!(tool["parameters"]["properties"]["genre"]["type"], "string");
    assert_eq!(
        tool["parameters"]["properties"]["genre"]["enum"][7],
        "Horror"
    );
    assert_eq!(
        tool["parameters"]["properties"]["starring"]["default"],
        "any"
    );
    let text = t.read(&format!("out/{SUITE}"));
    assert!(!text.contains("\"type\":\"dict\"") && !text.contains("\"type\": \"dict\""));

    t.run(&["validate", &format!("out/{SUITE}")])
        .expect_code(OK)
        .stdout_has(&["300 cases"]);

    // The shipped example is this import, unchanged.
    assert_eq!(
        t.read(&format!("out/{SUITE}")),
        std::fs::read_to_string(repo_root().join("examples/when2call").join(SUITE)).unwrap(),
        "examples/when2call/{SUITE} is stale: rerun `toolgauge import when2call {SPLIT} --out examples/when2call --force`"
    );
}

#[test]
fn bad_files_are_named_by_line_and_field_and_an_existing_suite_is_kept() {
    let t = Toolgauge::new();
    let good = std::fs::read_to_string(repo_root().join(SPLIT)).unwrap();
    let first_two: String = good.lines().take(2).map(|l| format!("{l}\n")).collect();

    t.write("notjsonl.jsonl", format!("{first_two}{{\"uuid\": \"x\",\n"));
    t.run(&["import", "when2call", "notjsonl.jsonl", "--out", "out"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["`notjsonl.jsonl` line 3: not a JSON object"]);

    let mut item: Value = serde_json::from_str(good.lines().next().unwrap()).unwrap();
    item["correct_answer"] = json!("refuse");
    t.write("label.jsonl", format!("{first_two}{item}\n"));
    t.run(&["import", "when2call", "label.jsonl", "--out", "out"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["line 3, field `correct_answer`: unknown label `refuse`"]);

    item["correct_answer"] = json!("cannot_answer");
    item["tools"][0] = json!("{\"name\": \"broken\", ");
    t.write("tool.jsonl", format!("{item}\n"));
    t.run(&["import", "when2call", "tool.jsonl", "--out", "out"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["line 1, field `tools[0]`: is not valid JSON text"]);
    assert!(!t.path().join("out/tool.json").exists());

    t.write("ok.jsonl", &first_two);
    t.run(&["import", "when2call", "ok.jsonl", "--out", "out"])
        .expect_code(OK);
    t.run(&["import", "when2call", "ok.jsonl", "--out", "out"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["`out/ok.json` already exists", "--force"]);
    t.run(&["import", "when2call", "ok.jsonl", "--out", "out", "--force"])
        .expect_code(OK);
}

/// Run the shipped example under one simulated model, on the cases with one of `tags`
/// (all when empty); its trials by case id.
fn run_sim(t: &Toolgauge, model: &str, tags: &[&str]) -> BTreeMap<String, Value> {
    let out = t.path().join(format!("run-{model}"));
    let suite = format!("examples/when2call/{SUITE}");
    let target = format!("scripted:examples/when2call/sim/{model}.yaml");
    let mut args = vec![
        "run",
        &suite,
        "-t",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    for tag in tags {
        args.extend(["--tag", tag]);
    }
    t.run_in(&repo_root(), &args).expect_code(OK);
    RunDir::new(out)
        .trials()
        .into_iter()
        .map(|r| (r["case_id"].as_str().unwrap().to_string(), r))
        .collect()
}

fn passed(trials: &BTreeMap<String, Value>, items: &[Value], label: &str) -> usize {
    items
        .iter()
        .filter(|i| i["correct_answer"] == label)
        .filter(|i| trials[i["uuid"].as_str().unwrap()]["verdict"] == "pass")
        .count()
}

#[test]
fn the_simulated_models_answer_with_the_splits_own_examples() {
    let t = Toolgauge::new();
    let items = split_items();

    // The oracle's calls are the examples: all pass but four whose example does not fit
    // the tool's own schema (a required argument left out, or a value the schema's enum
    // or type rejects).
    let oracle = run_sim(&t, "oracle", &["tool_call"]);
    assert_eq!(oracle.len(), 100);
    let failing: Vec<&str> = items
        .iter()
        .filter(|i| i["correct_answer"] == "tool_call")
        .map(|i| i["uuid"].as_str().unwrap())
        .filter(|u| oracle[*u]["verdict"] != "pass")
        .collect();
    assert_eq!(
        failing,
        [
            "5f16fb4c-33ae-4e76-8a99-2473d8657d14",
            "5246d248-0fc7-479c-a622-3a4381125762",
            "28791150-19aa-4caa-ae18-a712a672ba65",
            "13e29536-77a7-4c0b-9558-1ab14bc445b5",
        ]
    );

    // always_call: the same 96 calls pass; every request_for_info item is answered by a
    // call, so none passes; the 83 cannot_answer items with tools get a call to a tool
    // they do not offer (the example names one of the original tools).
    let always = run_sim(&t, "always_call", &[]);
    assert_eq!(always.len(), 300);
    assert_eq!(passed(&always, &items, "tool_call"), 96);
    assert_eq!(passed(&always, &items, "request_for_info"), 0);
    let unknown = items
        .iter()
        .filter(|i| i["correct_answer"] == "cannot_answer")
        .filter(|i| {
            always[i["uuid"].as_str().unwrap()]["reasons"]
                .to_string()
                .contains("unknown_tool")
        })
        .count();
    assert_eq!(unknown, 83);
    // ...and the behaviour metrics count those calls as tool hallucinations (README).
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("run-always_call/summary.json")).unwrap(),
    )
    .unwrap();
    let b = &summary["cells"][0]["metrics"]["behaviour"];
    assert_eq!(b["tool_hallucination_rate"]["num"], 83);
    assert_eq!(b["tool_hallucination_rate"]["den"], 100);
    assert_eq!(b["confusion"]["request_for_info"]["tool_call"], 100);
    assert_eq!(b["confusion"]["tool_call"]["tool_call"], 100);
    assert_eq!(b["answer_hallucination_rate"]["num"], 0);

    // cautious never calls: no should_call case passes.
    let cautious = run_sim(&t, "cautious", &["tool_call"]);
    assert_eq!(cautious.len(), 100);
    assert!(
        cautious
            .values()
            .all(|r| r["response"]["tool_calls"].is_null() && r["verdict"] == "fail")
    );
}

#[test]
fn when_to_call_separates_the_vague_wordings_guesses_from_the_clear_ones_questions() {
    let t = Toolgauge::new();
    let out = t.path().join("run");
    t.run_in(
        &repo_root(),
        &[
            "run",
            "suites/when_to_call.yaml",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    )
    .expect_code(OK);
    let trials = RunDir::new(out).trials();
    assert_eq!(trials.len(), 26);
    let failed = |variant: &str| -> std::collections::BTreeSet<&str> {
        trials
            .iter()
            .filter(|r| r["variant"] == variant && r["verdict"] != "pass")
            .map(|r| r["case_id"].as_str().unwrap())
            .collect()
    };
    // The vague wording guesses: a made-up forecast, calls for a guessed city, a date
    // out of range and a climate question, a booking it cannot make, a tool nobody
    // offered, an invented address. The clear wording asks or refuses instead.
    assert_eq!(
        failed("vague"),
        [
            "weather-no-city",
            "rain-no-city",
            "weather-next-month",
            "dubai-summer",
            "book-flight",
            "delete-logs",
            "email-my-boss"
        ]
        .into()
    );
    assert!(failed("clear").is_empty(), "{:?}", failed("clear"));
    let observed = |case: &str, variant: &str| -> Value {
        trials
            .iter()
            .find(|r| r["case_id"] == case && r["variant"] == variant)
            .unwrap()["checks"]["behaviour"]
            .clone()
    };
    // A refusal ending "Is there anything else I can help with?" is not a question back;
    // "Please tell me which city." is one, with no question mark.
    assert_eq!(
        observed("book-flight", "clear")["observed"],
        "cannot_answer"
    );
    assert_eq!(observed("book-flight", "vague")["observed"], "direct");
    assert_eq!(
        observed("rain-no-city", "clear")["observed"],
        "request_for_info"
    );
    assert_eq!(observed("rain-no-city", "vague")["observed"], "tool_call");
    assert_eq!(observed("weather-no-city", "vague")["observed"], "direct");
    assert_eq!(
        observed("weather-no-city", "clear")["observed"],
        "request_for_info"
    );
}

#[test]
fn a_directory_is_read_as_the_dataset_layout_or_refused_with_its_files() {
    let t = Toolgauge::new();
    let text = std::fs::read_to_string(repo_root().join(SPLIT)).unwrap();
    for d in ["W2C/data/test", "two", "empty"] {
        std::fs::create_dir_all(t.path().join(d)).unwrap();
    }
    // The dataset's own layout: data/test/when2call_test_llm_judge.jsonl.
    t.write("W2C/data/test/when2call_test_llm_judge.jsonl", &text);
    t.write("W2C/data/test/when2call_test_mcq.jsonl", "{}\n");
    t.run(&["import", "when2call", "W2C", "--out", "out"])
        .expect_code(OK)
        .stdout_has(&["when2call: 300 cases", "out/when2call_test_llm_judge.json"]);
    // Two JSONL files, neither the test split: refused, naming them.
    t.write("two/a.jsonl", "{}\n");
    t.write("two/b.jsonl", "{}\n");
    t.run(&["import", "when2call", "two", "--out", "o2"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["holds 2 JSONL files", "a.jsonl, b.jsonl", "give the file"]);
    // No data at all.
    t.run(&["import", "when2call", "empty", "--out", "o3"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["no When2Call data in `empty`"]);
}
