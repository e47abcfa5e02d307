//! BFCL's multi-turn categories end to end: the imported sample suites replayed from
//! result files of our own making (`fixtures/bfcl/multi_turn_results/`, both model
//! styles, 13 variants) through `toolgauge run -t bfcl-result:DIR`, each trial played as
//! a tool loop on the Rust backends and judged by the `bfcl` profile, must get the
//! verdict and error type that BFCL's own `bfcl evaluate` gave the same files
//! (`fixtures/bfcl/multi_turn_verdicts.jsonl`, made by tests/bfcl_multi/generate.py).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{OK, Toolgauge, fixtures_dir};

/// (style, variant, id) → (valid, error type), as BFCL scored them.
type Verdicts = BTreeMap<(String, String, String), (bool, Option<String>)>;

fn bfcl_verdicts() -> Verdicts {
    let text =
        std::fs::read_to_string(fixtures_dir().join("bfcl/multi_turn_verdicts.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (
                (s("style"), s("variant"), s("id")),
                (
                    v["valid"].as_bool().unwrap(),
                    v["error_type"].as_str().map(str::to_string),
                ),
            )
        })
        .collect()
}

/// Import the four multi-turn sample categories into `suites/`.
fn import(t: &Toolgauge) -> Vec<String> {
    let data = fixtures_dir().join("bfcl/data");
    t.run(&[
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "--category",
        "multi_turn_base,multi_turn_miss_func,multi_turn_miss_param,multi_turn_long_context",
        "--out",
        "suites",
    ])
    .expect_code(OK);
    [
        "multi_turn_base",
        "multi_turn_miss_func",
        "multi_turn_miss_param",
        "multi_turn_long_context",
    ]
    .iter()
    .map(|c| format!("suites/bfcl_{c}.json"))
    .collect()
}

/// Every trial of the runs under `dir`, by case id.
fn trials(dir: &std::path::Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path().join("trials.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for l in text.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            out.insert(v["case_id"].as_str().unwrap().to_string(), v);
        }
    }
    out
}

/// The trials of each (style, variant) run, by case id.
type Runs = BTreeMap<(String, String), BTreeMap<String, Value>>;

/// Replay every (style, variant) result directory; the verdicts BFCL gave must all be
/// toolgauge's.
fn replay_all(strict: bool) -> (usize, Vec<String>, Runs) {
    let t = Toolgauge::new();
    let suites = import(&t);
    let want = bfcl_verdicts();
    let results = fixtures_dir().join("bfcl/multi_turn_results");
    let mut runs = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut compared = 0;
    for style in ["fc", "prompt"] {
        for variant in std::fs::read_dir(results.join(style)).unwrap() {
            let variant = variant.unwrap().file_name().to_string_lossy().to_string();
            let dir = results.join(style).join(&variant);
            let target = format!("bfcl-result:{}", dir.display());
            let reports = format!(
                "runs/{style}-{variant}{}",
                if strict { "-strict" } else { "" }
            );
            let mut args: Vec<&str> = vec!["run"];
            args.extend(suites.iter().map(String::as_str));
            // Items a variant has no result for are error trials ("missing"), by design.
            args.extend([
                "-t",
                &target,
                "--reports-dir",
                &reports,
                "--max-error-rate",
                "1",
                "-q",
            ]);
            if strict {
                args.push("--bfcl-strict");
            }
            t.run(&args).expect_code(OK);
            let got = trials(&t.path().join(&reports));
            for ((s, v, id), (valid, error_type)) in &want {
                if s != style || *v != variant {
                    continue;
                }
                compared += 1;
                let Some(trial) = got.get(id) else {
                    wrong.push(format!("{style}/{variant}/{id}: no trial"));
                    continue;
                };
                let code = trial["reasons"][0]["code"].as_str().map(str::to_string);
                let passed = trial["verdict"] == "pass";
                if passed != *valid || (!valid && code != *error_type) {
                    wrong.push(format!(
                        "{style}/{variant}/{id}: BFCL says {valid} {error_type:?}, toolgauge {} {code:?}: {}",
                        trial["verdict"], trial["reasons"]
                    ));
                }
            }
            runs.insert((style.to_string(), variant), got);
        }
    }
    (compared, wrong, runs)
}

#[test]
fn replayed_multi_turn_results_get_bfcl_evaluates_verdict_on_every_line() {
    let (compared, wrong, runs) = replay_all(false);
    assert_eq!(compared, bfcl_verdicts().len());
    assert!(compared >= 500, "{compared}");
    assert!(
        wrong.is_empty(),
        "{} of {compared} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // A replayed item is a played loop: the ground truth in one step per turn is one
    // round of calls and one closing round per turn, on the Rust backends' results.
    let gt = &runs[&("fc".to_string(), "gt".to_string())]["multi_turn_base_0"];
    let rounds = gt["episode"]["rounds"].as_array().unwrap();
    assert!(rounds.len() >= 2, "{gt:#}");
    assert!(!rounds[0]["outcomes"].as_array().unwrap().is_empty());
    assert_eq!(gt["episode"]["stop"], "answered");
    // The step limit stops the loop inside a turn: BFCL's force termination.
    let limited = &runs[&("fc".to_string(), "step_limit".to_string())]["multi_turn_base_0"];
    assert_eq!(limited["episode"]["stop"], "max_rounds");
    assert_eq!(limited["reasons"][0]["code"], "multi_turn:force_terminated");
}

#[test]
fn strict_mode_reproduces_the_same_verdicts() {
    let (compared, wrong, _) = replay_all(true);
    assert_eq!(compared, bfcl_verdicts().len());
    assert!(
        wrong.is_empty(),
        "{} of {compared} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The recorded function-calling answers of `variant` for the miss_func sample, by the
/// text of each item's first user message (how the fake model tells items apart).
fn recorded(variant: &str) -> BTreeMap<String, (String, Value)> {
    let data = fixtures_dir().join("bfcl/data/BFCL_v4_multi_turn_miss_func.json");
    let results = fixtures_dir().join(format!(
        "bfcl/multi_turn_results/fc/{variant}/gpt-4o-2024-11-20-FC/multi_turn/BFCL_v4_multi_turn_miss_func_result.json"
    ));
    let lines: BTreeMap<String, Value> = std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["result"].clone())
        })
        .collect();
    std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .map(|l| {
            let q: Value = serde_json::from_str(l).unwrap();
            let id = q["id"].as_str().unwrap().to_string();
            let first = q["question"][0][0]["content"].as_str().unwrap().to_string();
            (first, (id.clone(), lines[&id].clone()))
        })
        .collect()
}

/// A live OpenAI-compatible model that answers each item as `variant`'s result file
/// says: the turn is the user messages so far, the step the answers since the last one;
/// a step's calls go out as tool calls, and a turn with no step left gets a text answer.
fn fc_model(variant: &str) -> crate::live::Fake {
    use wiremock::ResponseTemplate;
    let recorded = recorded(variant);
    crate::live::Fake::start(move |body, _| {
        let messages = body["messages"].as_array().unwrap();
        let first = messages.iter().find(|m| m["role"] == "user").unwrap();
        let (_, result) = &recorded[first["content"].as_str().unwrap()];
        let users = messages.iter().filter(|m| m["role"] == "user").count();
        let last_user = messages.iter().rposition(|m| m["role"] == "user").unwrap();
        let step = messages[last_user..]
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        let message = match result[users - 1].get(step).and_then(Value::as_array) {
            Some(calls) => {
                let calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let (name, args) = c.as_object().unwrap().iter().next().unwrap();
                        serde_json::json!({"id": format!("call_{users}_{step}_{i}"), "type": "function",
                                           "function": {"name": name, "arguments": args}})
                    })
                    .collect();
                serde_json::json!({"role": "assistant", "content": null, "tool_calls": calls})
            }
            None => serde_json::json!({"role": "assistant", "content": "Done."}),
        };
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-bfcl", "object": "chat.completion", "created": 1_733_000_000,
            "model": "fc-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        }))
    })
}

#[test]
fn a_live_model_plays_multi_turn_items_through_the_loop_and_gets_bfcls_verdict() {
    let t = Toolgauge::new();
    import(&t);
    let want = bfcl_verdicts();
    for variant in ["gt", "wrong_arg"] {
        let fake = fc_model(variant);
        let target = format!("openai-compatible:fc-model@{}/v1", fake.uri());
        let out = format!("live-{variant}");
        t.run(&[
            "run",
            "suites/bfcl_multi_turn_miss_func.json",
            "-t",
            &target,
            "--out",
            &out,
            "-q",
        ])
        .expect_code(OK);
        let trials: Vec<Value> = t
            .read(&format!("{out}/trials.jsonl"))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(trials.len(), 6);
        for tr in &trials {
            let id = tr["case_id"].as_str().unwrap();
            let (valid, error_type) =
                &want[&("fc".to_string(), variant.to_string(), id.to_string())];
            assert_eq!(
                tr["verdict"] == "pass",
                *valid,
                "{variant} {id}: {}",
                tr["reasons"]
            );
            if !valid {
                assert_eq!(tr["reasons"][0]["code"].as_str(), error_type.as_deref());
            }
        }
        if variant == "gt" {
            // Every request of an item whose functions are held back lacks them until
            // BFCL's "I have updated some more functions" turn, and offers them after.
            let seen = fake.seen();
            let suite: Value =
                serde_json::from_str(&t.read("suites/bfcl_multi_turn_miss_func.json")).unwrap();
            let mut checked = 0;
            for case in suite["cases"].as_array().unwrap() {
                let (name, turn) = case["withheld"].as_object().unwrap().iter().next().unwrap();
                let turn = turn.as_u64().unwrap() as usize;
                let prompt = &case["prompt"];
                for s in seen.iter().filter(|s| {
                    s.body["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|m| m["role"] == "user")
                        .is_some_and(|m| &m["content"] == prompt)
                }) {
                    let messages = s.body["messages"].as_array().unwrap();
                    let at = messages.iter().filter(|m| m["role"] == "user").count() - 1;
                    let offered = s.body["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|t| &t["function"]["name"] == name);
                    assert_eq!(
                        offered,
                        at >= turn,
                        "{name} at turn {at} (offered from {turn})"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 20, "{checked}");
            // The model read BFCL's own result texts.
            let texts: Vec<String> = seen
                .iter()
                .flat_map(|s| s.body["messages"].as_array().unwrap().clone())
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap().to_string())
                .collect();
            assert!(
                texts
                    .iter()
                    .any(|c| c.starts_with("{\"") && c.contains("\": ")),
                "{texts:?}"
            );
        }
    }
}

/// A model that makes exactly the ground truth's calls reads, for every call, the text
/// BFCL's own executor gives it (`fixtures/bfcl/multi_turn_gt_results.jsonl`, made by
/// tests/bfcl_multi/generate_gt_results.py), byte for byte, long-context items included.
#[test]
fn the_ground_truths_calls_read_bfcls_own_result_texts() {
    let t = Toolgauge::new();
    let suites = import(&t);
    let target = format!(
        "bfcl-result:{}",
        fixtures_dir()
            .join("bfcl/multi_turn_results/fc/gt")
            .display()
    );
    let mut args: Vec<&str> = vec!["run"];
    args.extend(suites.iter().map(String::as_str));
    args.extend(["-t", &target, "--reports-dir", "runs", "-q"]);
    t.run(&args).expect_code(OK);
    let got = trials(&t.path().join("runs"));
    let want =
        std::fs::read_to_string(fixtures_dir().join("bfcl/multi_turn_gt_results.jsonl")).unwrap();
    let mut compared = 0;
    let mut wrong = Vec::new();
    for line in want.lines() {
        let w: Value = serde_json::from_str(line).unwrap();
        let id = w["id"].as_str().unwrap();
        let read: Vec<&str> = got[id]["episode"]["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["outcomes"].as_array().cloned().unwrap_or_default())
            .map(|o| o["content"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .iter()
            .map(|s| Box::leak(s.clone().into_boxed_str()) as &str)
            .collect();
        let expected: Vec<&str> = w["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(read.len(), expected.len(), "{id}");
        for (i, (a, b)) in expected.iter().zip(&read).enumerate() {
            compared += 1;
            if a != b {
                let cut = |s: &str| s.chars().take(300).collect::<String>();
                wrong.push(format!(
                    "{id} call {i}:\n  BFCL: {}\n  ours: {}",
                    cut(a),
                    cut(b)
                ));
            }
        }
    }
    assert!(compared > 100, "{compared}");
    assert!(
        wrong.is_empty(),
        "{} of {compared} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
