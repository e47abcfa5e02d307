//! `toolgauge compare`: paired comparison of two runs or two variants, and its gates.

use crate::support::{BAD_INPUT, OK, THRESHOLD_FAILED, Toolgauge};

fn two_runs(t: &Toolgauge, baseline: &str, candidate: &str) {
    let suite = t.fixture("weather.yaml");
    for (target, out) in [(baseline, "base"), (candidate, "cand")] {
        t.run(&["run", &suite, "--target", target, "--out", out, "--quiet"]);
    }
}

#[test]
fn a_significant_regression_fails_the_gate_naming_it_last() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    let o = t.run(&["compare", "base", "cand", "--fail-on-regression", "5"]);
    o.assert_code(THRESHOLD_FAILED);
    let last = o.stderr.lines().last().unwrap_or_default().to_string();
    assert!(
        last.starts_with("gate failed: accuracy fell") && last.contains("McNemar p"),
        "{}",
        o.stderr
    );
    // A drop of exactly the limit does not exceed it.
    t.run(&["compare", "base", "cand", "--fail-on-regression", "100"])
        .assert_code(OK);
}

#[test]
fn identical_runs_compare_clean() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:oracle");
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "0",
        "--strict",
    ]);
    o.assert_code(OK);
    o.stdout_has(&["n paired", "+0.0"]);
}

#[test]
fn variants_of_one_run_compare_in_markdown() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:oracle");
    let o = t.run(&[
        "compare",
        "base",
        "--variants",
        "vague,clear",
        "--format",
        "md",
    ]);
    o.assert_code(OK);
    o.stdout_has(&["| cell | n paired |", "vague → clear"]);
}

#[test]
fn a_directory_without_trials_is_bad_input() {
    let t = Toolgauge::new();
    std::fs::create_dir_all(t.path().join("empty")).unwrap();
    let o = t.run(&["compare", "empty", "empty"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["holds no trials.jsonl", "hint:"]);
}
