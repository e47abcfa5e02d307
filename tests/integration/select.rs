//! `run --case` and `run --tag`: part of the shipped weather suite, replayed from its
//! cassette. The selection is checked against the suite's ids and tags by hand, kept by
//! `--resume` and `report`, shown in the summary, and compared as a partial run.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{BAD_INPUT, OK, RUN_INCOMPLETE, Toolgauge, repo_root};

/// The shipped weather suite and its cassette at their repository paths.
fn weather() -> Toolgauge {
    let t = Toolgauge::new();
    for dir in ["suites", "fixtures"] {
        std::fs::create_dir_all(t.path().join(dir)).unwrap();
    }
    for f in ["suites/weather.yaml", "fixtures/weather.cassette.jsonl"] {
        std::fs::copy(repo_root().join(f), t.path().join(f)).unwrap();
    }
    t
}

fn cases(trials: &[Value]) -> BTreeSet<String> {
    trials
        .iter()
        .map(|t| t["case_id"].as_str().unwrap().to_string())
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

#[test]
fn tags_are_a_union_and_case_patterns_narrow_them() {
    let t = weather();
    // weather.yaml tags beijing-today and tokyo-now `direct`, why-rain and pe-ratio
    // `knowledge`: 4 cases × 2 variants × 2 repeats.
    let o = t.run(&[
        "run",
        "suites/weather.yaml",
        "--tag",
        "knowledge",
        "--tag",
        "direct",
        "--out",
        "tags",
    ]);
    o.assert_code(OK);
    o.stdout_has(&[
        "weather: 16 trials",
        "partial run: 4 of 13 cases: --tag knowledge --tag direct",
        "thresholds (on a partial run: 4 of 13 cases: --tag knowledge --tag direct):",
    ]);
    let d = t.run_dir("tags");
    assert_eq!(d.trials().len(), 16);
    assert_eq!(
        cases(&d.trials()),
        set(&["beijing-today", "tokyo-now", "why-rain", "pe-ratio"])
    );
    let meta = d.json("run.json");
    assert_eq!(
        meta["selection"],
        serde_json::json!({"tags": ["knowledge", "direct"], "cases_selected": 4, "cases_total": 13})
    );
    assert_eq!(meta["trials_planned"], 16);
    assert_eq!(
        d.json("summary.json")["selection"],
        "4 of 13 cases: --tag knowledge --tag direct"
    );
    assert!(
        std::fs::read_to_string(d.path.join("summary.md"))
            .unwrap()
            .contains("Partial run: 4 of 13 cases")
    );

    // Comma-separated patterns, a glob among them; with --tag zh only the zh cases stay
    // (tokyo-now is `en`).
    let o = t.run(&[
        "run",
        "suites/weather.yaml",
        "--case",
        "*-today,tokyo-now",
        "--case",
        "why-rain",
        "--tag",
        "zh",
        "--out",
        "both",
        "-q",
    ]);
    o.assert_code(OK);
    assert_eq!(
        cases(&t.run_dir("both").trials()),
        set(&["beijing-today", "why-rain"])
    );
}

#[test]
fn a_selection_matching_nothing_is_bad_input_with_a_near_name() {
    let t = weather();
    let refuse = |flags: &[&str], needles: &[&str]| {
        let mut args = vec!["run", "suites/weather.yaml", "--out", "x"];
        args.extend_from_slice(flags);
        let o = t.run(&args);
        o.assert_code(BAD_INPUT);
        o.stderr_has(needles);
        assert!(!t.path().join("x").exists(), "nothing is written");
    };
    refuse(
        &["--case", "tokyo-nwo"],
        &[
            "error: suites/weather.yaml: --case `tokyo-nwo` matches no case of suite `weather`",
            "hint: did you mean `tokyo-now`?",
        ],
    );
    refuse(
        &["--case", "shangai-*"],
        &["hint: did you mean `shanghai-*`?"],
    );
    refuse(
        &["--case", "beijing"],
        &["hint: did you mean `beijing*`? (a pattern without * matches a whole id)"],
    );
    refuse(
        &["--tag", "knowlege"],
        &[
            "--tag `knowlege` is on no case of suite `weather`",
            "hint: did you mean `knowledge`?",
        ],
    );
    refuse(
        &["--tag", "en", "--case", "beijing-*"],
        &[
            "no case of suite `weather` matches both --case beijing-* --tag en",
            "intersection",
        ],
    );
    refuse(
        &["--tag", "en", "--tag", "nightly"],
        &[
            "--tag `nightly` is on no case",
            "the suite's tags are: advice, climate",
        ],
    );
}

#[test]
fn resume_report_and_compare_keep_the_selection() {
    let t = weather();
    t.run(&["run", "suites/weather.yaml", "--out", "whole", "-q"])
        .assert_code(OK);
    // Stops after its first trial on a token budget, then resumes the same selection.
    t.run(&[
        "run",
        "suites/weather.yaml",
        "--tag",
        "zh",
        "--out",
        "zh",
        "-j",
        "1",
        "--max-tokens",
        "1",
    ])
    .assert_code(RUN_INCOMPLETE);
    let o = t.run(&["run", "--resume", "zh"]);
    o.assert_code(OK);
    o.stdout_has(&["partial run: 6 of 13 cases: --tag zh"]);
    let zh = t.run_dir("zh");
    // The six `zh` cases of weather.yaml, 2 variants × 2 repeats each.
    let expected = set(&[
        "beijing-today",
        "shanghai-umbrella",
        "why-rain",
        "translate-weather",
        "no-city",
        "chengdu-next-month",
    ]);
    assert_eq!(zh.trials().len(), 24);
    assert_eq!(cases(&zh.trials()), expected);
    assert_eq!(
        zh.json("run.json")["selection"]["tags"],
        serde_json::json!(["zh"])
    );

    let o = t.run(&["report", "zh", "--format", "terminal"]);
    o.assert_code(OK);
    o.stdout_has(&["partial run: 6 of 13 cases: --tag zh"]);

    // Compare pairs the 24 common trials; the other 28 of the whole run are unpaired.
    let o = t.run(&["compare", "zh", "whole", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&["note: `zh` is a partial run (6 of 13 cases: --tag zh)"]);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], 24);
    assert_eq!(c["only_baseline"], 0);
    assert_eq!(c["only_candidate"], 28);
    assert_eq!(
        (c["overall"]["n10"].as_u64(), c["overall"]["n01"].as_u64()),
        (Some(0), Some(0))
    );
    // --resume takes its selection from run.json only.
    let o = t.run(&["run", "--resume", "zh", "--tag", "en"]);
    o.assert_code(BAD_INPUT);
}
