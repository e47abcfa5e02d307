//! BFCL's own verdicts (`fixtures/bfcl_worlds/verdicts.jsonl`, written by
//! `tests/bfcl_worlds/generate_verdicts.py` with bfcl-eval's `multi_turn_checker`) on 40
//! real items, each with the ground truth and model results of our own making: every
//! verdict, error type, message and missing response must be BFCL's.

use serde_json::Value;

use super::check;

const VERDICTS: &str = include_str!("../../../fixtures/bfcl_worlds/verdicts.jsonl");

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|s| s.as_str().expect("a call string").to_string())
        .collect()
}

#[test]
fn every_verdict_is_bfcls() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (n, line) in VERDICTS.lines().enumerate() {
        let l: Value = serde_json::from_str(line).expect("a JSON line");
        let classes: Vec<String> = strings(&l["involved_classes"]);
        let truth: Vec<Vec<String>> = l["ground_truth"]
            .as_array()
            .expect("turns")
            .iter()
            .map(strings)
            .collect();
        let model: Vec<Vec<Vec<String>>> = l["model_result_decoded"]
            .as_array()
            .expect("turns")
            .iter()
            .map(|t| t.as_array().expect("steps").iter().map(strings).collect())
            .collect();
        let got = check(&classes, &l["initial_config"], false, &model, &truth).expect("set up");
        let want = &l["verdict"];
        let what = format!(
            "line {} ({} {})",
            n + 1,
            l["id"].as_str().unwrap_or("?"),
            l["variant"].as_str().unwrap_or("?")
        );
        // BFCL's runner reports fewer turns as `force_terminated` before its checker
        // runs (the checker itself would raise IndexError on them).
        if want.get("exception").is_some() {
            if got.error_type.as_deref() != Some("multi_turn:force_terminated") {
                failures.push(format!("{what}: expected force_terminated, got {got:?}"));
            }
            checked += 1;
            continue;
        }
        let same = got.valid == want["valid"].as_bool().expect("valid")
            && got.error_type.as_deref() == want["error_type"].as_str()
            && got.message.as_deref() == want["error_message"].as_str();
        if !same {
            failures.push(format!(
                "{what}: BFCL {} {}, ours {:?} {:?}: {:?}",
                want["error_type"], want["error_message"], got.error_type, got.message, got.details
            ));
        } else if got.error_type.as_deref() == Some("multi_turn:execution_response_mismatch") {
            let missing = strings(&want["details"]["missing_items"]);
            if got.details != missing {
                failures.push(format!(
                    "{what}: missing {:?}, ours {:?}",
                    missing, got.details
                ));
            }
        }
        checked += 1;
    }
    assert_eq!(checked, VERDICTS.lines().count(), "every line checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} verdicts differ from BFCL's:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
