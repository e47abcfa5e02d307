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
