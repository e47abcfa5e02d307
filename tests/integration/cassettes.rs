//! Cassettes: `cassette write` from a script, replay that reproduces the scripted run,
//! misses when a request changes, and a torn last line.

use serde_json::Value;

use crate::support::{OK, RUN_INCOMPLETE, THRESHOLD_FAILED, Toolgauge, verdicts};

const TARGET: &str = "openai:gpt-4o-mini";

/// Copy the weather suite and its script into `t` and write `cassette.jsonl` for
/// [`TARGET`]; returns the suite's file name.
fn write_cassette(t: &Toolgauge) -> String {
    let suite = t.fixture("weather.yaml");
    let script = t.fixture("weather_script.yaml");
    t.run(&[
        "cassette",
        "write",
        &suite,
        "--script",
        &script,
        "--out",
        "cassette.jsonl",
        "--target",
        TARGET,
    ])
    .expect_code(OK)
    .stdout_has(&["wrote 16 entries to cassette.jsonl"]);
    suite
}

#[test]
fn cassette_write_from_a_script_is_marked_hand_written() {
    let t = Toolgauge::new();
    write_cassette(&t);
    let text = t.read("cassette.jsonl");
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).unwrap();
    assert_eq!(header["toolgauge_cassette"], 1);
    assert_eq!(header["source"], "hand-written");
    assert_eq!(header["provider"], "openai");
    assert_eq!(header["model"], "gpt-4o-mini");
    let entries: Vec<Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(entries.len(), 16, "one entry per trial");
    for e in &entries {
        assert_eq!(e["target"], TARGET);
        assert_eq!(
            e["key"].as_str().map(str::len),
            Some(64),
            "a SHA-256 key: {e}"
        );
    }
}

#[test]
fn replaying_a_written_cassette_reproduces_the_scripted_verdicts() {
    let t = Toolgauge::new();
    let suite = write_cassette(&t);
    // The script passes some trials and fails others, so the accuracy gate fails: both
    // runs exit 1, and the comparison covers passes and failures alike.
    let scripted = t
        .run(&[
            "run",
            &suite,
            "--out",
            "scripted",
            "--target",
            "scripted:weather_script.yaml",
        ])
        .expect_code(THRESHOLD_FAILED);
    let replayed = t
        .run(&[
            "run",
            &suite,
            "--out",
            "replayed",
            "--target",
            TARGET,
            "--cassette",
            "cassette.jsonl",
        ])
        .expect_code(THRESHOLD_FAILED);
    assert!(!replayed.stderr.contains("warning"), "{}", replayed.stderr);
    let a = verdicts(&t.run_dir("scripted").trials());
    let b = verdicts(&t.run_dir("replayed").trials());
    assert_eq!(a.len(), 16);
    let passed = a.iter().filter(|(_, v)| v["verdict"] == "pass").count();
    assert!(
        0 < passed && passed < a.len(),
        "the script mixes passes and failures ({passed} passed)"
    );
    assert_eq!(a, b, "replay must give exactly the scripted verdicts");
    let overall = |dir: &str| t.run_dir(dir).json("summary.json")["overall"]["accuracy"].clone();
    assert_eq!(overall("scripted"), overall("replayed"));
    // The same messages, apart from progress lines, which a slow machine prints and a
    // fast one does not.
    let messages = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| !l.starts_with("progress: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(messages(&scripted.stderr), messages(&replayed.stderr));
    let meta = t.run_dir("replayed").json("run.json");
    assert!(
        meta["sources"][TARGET]
            .as_str()
            .is_some_and(|s| s.contains("hand-written")),
        "run.json says the responses are hand-written: {}",
        meta["sources"]
    );
}

#[test]
fn changed_tool_description_misses_the_cassette_and_names_case_and_cell() {
    let t = Toolgauge::new();
    let suite = write_cassette(&t);
    let changed = t
        .read(&suite)
        .replace(r#"vague: "Weather.""#, r#"vague: "Weather for a city.""#);
    assert_ne!(
        changed,
        t.read(&suite),
        "the fixture has the vague description"
    );
    t.write("changed.yaml", changed);
    let o = t
        .run(&[
            "run",
            "changed.yaml",
            "--out",
            "out",
            "--target",
            TARGET,
            "--cassette",
            "cassette.jsonl",
        ])
        .expect_code(RUN_INCOMPLETE);
    o.stderr_has(&[
        "8 of 16 trials could not be completed",
        "no cassette entry for case `beijing-today` in cell openai:gpt-4o-mini × vague × auto",
        "request hash",
    ]);
    // The clear variant's requests are unchanged and still replay.
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), 16, "no trial is lost");
    for x in &trials {
        let missed = x["verdict"] == "error";
        assert_eq!(missed, x["variant"] == "vague", "{x}");
    }
}

#[test]
fn torn_last_cassette_line_is_ignored_with_a_warning() {
    let t = Toolgauge::new();
    let suite = write_cassette(&t);
    // A crash mid-append leaves a partial line with no newline.
    let torn = t.read("cassette.jsonl") + r#"{"key":"0123abcd","repeat":0,"resp"#;
    t.write("torn.jsonl", torn);
    // Exit 1 (not 2 or 3): the cassette loads and every trial replays; only the script's
    // deliberate failures trip the accuracy gate.
    let o = t
        .run(&[
            "run",
            &suite,
            "--out",
            "out",
            "--target",
            TARGET,
            "--cassette",
            "torn.jsonl",
        ])
        .expect_code(THRESHOLD_FAILED);
    o.stderr_has(&["warning: cassette `torn.jsonl` ends with a torn line"]);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), 16);
    assert!(trials.iter().all(|x| x["verdict"] != "error"));
}
