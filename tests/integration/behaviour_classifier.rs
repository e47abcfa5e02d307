//! The built-in text-answer classifier, measured: per-class accuracy on the When2Call
//! example answers (development half, held-out half, all 900) and on the Chinese sets
//! of `tests/data/` must not fall below the figures documented in docs/behaviour.md
//! ("Classifier"); and `toolgauge classify` on one text, on a labelled file, and on
//! bad input.

use std::path::PathBuf;

use serde_json::Value;
use toolgauge::behaviour::Behaviour;
use toolgauge::behaviour::measure::{self, Half, Measurement};

use crate::support::{BAD_INPUT, OK, Toolgauge, repo_root};

fn when2call() -> PathBuf {
    repo_root().join("datasets/when2call/when2call_test_llm_judge.jsonl")
}

/// Fail unless each class has at least the documented number of correct answers out
/// of the documented total (`floors`: request_for_info, cannot_answer, direct).
#[track_caller]
fn at_least(set: &str, m: &Measurement, floors: [(usize, usize); 3]) {
    for (b, (hit, total)) in Behaviour::TEXT.into_iter().zip(floors) {
        let (got, n) = m.confusion.class(b);
        assert_eq!(n, total, "{set}: {b} answers");
        assert!(
            got >= hit,
            "{set}: {b} accuracy fell below the documented {hit}/{total} ({:.1}%): now {got}/{n}\nmisses: {:#?}",
            100.0 * hit as f64 / total as f64,
            m.misses
        );
    }
}

#[test]
fn when2call_accuracy_per_class_holds_the_documented_figures() {
    let m = |half| measure::measure(&measure::when2call_examples(&when2call(), half).unwrap());
    // docs/behaviour.md: dev 100 / 100 / 98.7 %, held-out 100 / 100 / 94.7 %,
    // all 100 / 100 / 96.7 %.
    at_least("dev", &m(Half::Dev), [(150, 150), (150, 150), (148, 150)]);
    at_least(
        "held-out",
        &m(Half::HeldOut),
        [(150, 150), (150, 150), (142, 150)],
    );
    at_least("all", &m(Half::All), [(300, 300), (300, 300), (290, 300)]);
}

#[test]
fn chinese_accuracy_per_class_holds_the_documented_figures() {
    let m = |name: &str| {
        measure::measure(
            &measure::labelled_examples(&repo_root().join("tests/data").join(name)).unwrap(),
        )
    };
    at_least(
        "zh set A",
        &m("behaviour_zh.jsonl"),
        [(23, 23), (20, 20), (23, 23)],
    );
    at_least(
        "zh set B",
        &m("behaviour_zh_b.jsonl"),
        [(12, 12), (12, 12), (12, 12)],
    );
}

#[test]
fn classify_prints_the_behaviour_and_its_cue() {
    let t = Toolgauge::shared();
    t.run(&["classify", "Please tell me which city."])
        .expect_code(OK)
        .stdout_has(&["request_for_info (cue: \"Please tell\")"]);
    t.run(&[
        "classify",
        "I'm sorry, but I can't check prices. Is there anything else I can help you with?",
    ])
    .expect_code(OK)
    .stdout_has(&["cannot_answer (cue: \"I can't\")"]);
    let out = t
        .run(&[
            "classify",
            "--json",
            "抱歉，我无法查询天气。请问您要查询哪个城市？",
        ])
        .expect_code(OK);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["behaviour"], "request_for_info");
    assert_eq!(v["suite_name"], "clarify");
    assert_eq!(v["cue"], "请问");
    t.run(&["classify", ""])
        .expect_code(OK)
        .stdout_has(&["direct (cue: \"empty answer\")"]);
}

#[test]
fn classify_reads_the_answer_from_standard_input() {
    use std::io::Write as _;
    let t = Toolgauge::shared();
    let mut child = t
        .command(&["classify", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("The weather in Paris is 18°C.".as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(OK));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "direct (no cue)\n");
}

#[test]
fn classify_measures_the_when2call_held_out_half_as_documented() {
    let t = Toolgauge::shared();
    let file = when2call();
    let out = t
        .run(&[
            "classify",
            "--when2call",
            file.to_str().unwrap(),
            "--half",
            "held-out",
            "--json",
        ])
        .expect_code(OK);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["answers"], 450);
    assert_eq!(
        v["labels"],
        serde_json::json!(["request_for_info", "cannot_answer", "direct"])
    );
    // The held-out matrix of docs/behaviour.md, rows expected, columns observed.
    assert_eq!(
        v["confusion"],
        serde_json::json!([[150, 0, 0], [0, 150, 0], [1, 7, 142]])
    );
    assert_eq!(v["accuracy"]["direct"]["correct"], 142);
    let text = t
        .run(&[
            "classify",
            "--when2call",
            file.to_str().unwrap(),
            "--half",
            "dev",
            "--misses",
        ])
        .expect_code(OK);
    text.stdout_has(&[
        "development half (even items): 450 answers",
        "direct                              0                  2                148  98.7% (148/150)",
        "miss 1:answers.direct: expected direct, observed cannot_answer (cue: I can't)",
    ]);
}

#[test]
fn classify_measures_a_labelled_jsonl_file() {
    let t = Toolgauge::new();
    t.write(
        "set.jsonl",
        concat!(
            "{\"text\": \"Which city?\", \"label\": \"clarify\"}\n",
            "\n",
            "{\"text\": \"I can't do that.\", \"label\": \"cannot_answer\", \"note\": \"extra fields are ignored\"}\n",
            "{\"text\": \"It is 5 PM.\", \"label\": \"request_for_info\"}\n",
        ),
    );
    let out = t
        .run(&["classify", "--jsonl", "set.jsonl", "--json", "--misses"])
        .expect_code(OK);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["confusion"],
        serde_json::json!([[1, 0, 1], [0, 1, 0], [0, 0, 0]])
    );
    assert_eq!(v["accuracy"]["request_for_info"]["percent"], 50.0);
    assert_eq!(v["accuracy"]["direct"]["percent"], Value::Null);
    assert_eq!(v["misses"][0]["example"]["source"], "4");
    assert_eq!(v["misses"][0]["observed"], "direct");
}

#[test]
fn classify_refuses_bad_input_with_exit_2() {
    let t = Toolgauge::new();
    t.write(
        "bad.jsonl",
        "{\"text\": \"hi\", \"label\": \"direct\"}\n{\"text\": \"x\", \"label\": \"maybe\"}\n",
    );
    t.write("notjson.jsonl", "{\"text\": \"hi\",\n");
    t.write(
        "items.jsonl",
        "{\"uuid\": \"u1\", \"answers\": {\"direct\": 3}}\n",
    );
    t.run(&["classify", "--jsonl", "bad.jsonl"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "bad.jsonl:2: field `label`: unknown label \"maybe\"",
            "hint:",
        ]);
    t.run(&["classify", "--jsonl", "notjson.jsonl"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["notjson.jsonl:1: not a JSON object"]);
    t.run(&["classify", "--when2call", "items.jsonl"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["items.jsonl:1: field `answers.request_for_info`: missing"]);
    t.run(&["classify", "--when2call", "missing.jsonl"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["cannot read missing.jsonl"]);
    t.run(&["classify"]).expect_code(BAD_INPUT);
    t.run(&["classify", "hello", "--half", "dev"])
        .expect_code(BAD_INPUT);
    t.run(&["classify", "--when2call", "items.jsonl", "--half", "odd"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["held-out"]);
    t.run(&["classify", "hello", "--jsonl", "bad.jsonl"])
        .expect_code(BAD_INPUT);
}
