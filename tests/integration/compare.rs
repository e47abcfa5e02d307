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
    o.stderr_has(&["holds neither trials.jsonl nor summary.json", "hint:"]);
}

/// Copy `summary.json` of run directory `run` alone into `dir`.
fn summary_only(t: &Toolgauge, run: &str, dir: &str) -> String {
    std::fs::create_dir_all(t.path().join(dir)).unwrap();
    let to = format!("{dir}/summary.json");
    std::fs::copy(t.path().join(run).join("summary.json"), t.path().join(&to)).unwrap();
    to
}

#[test]
fn bare_summaries_compare_like_their_runs() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:wrong_tool");
    let full = t.run(&["compare", "base", "cand", "--format", "json"]);
    full.assert_code(OK);
    let b = summary_only(&t, "base", "only-base");
    let c = summary_only(&t, "cand", "only-cand");
    let bare = t.run(&["compare", &b, &c, "--format", "json"]);
    bare.assert_code(OK);
    let full: serde_json::Value = serde_json::from_str(&full.stdout).unwrap();
    let bare: serde_json::Value = serde_json::from_str(&bare.stdout).unwrap();
    // Same pairs, flips, p-values and metric deltas, from the summaries alone.
    assert_eq!(full, bare);
    assert!(full["overall"]["n10"].as_u64().unwrap() > 0, "{full}");

    // The gate works on summaries too, and --variants.
    t.run(&["compare", &b, &c, "--fail-on-regression", "5"])
        .assert_code(THRESHOLD_FAILED);
    let o = t.run(&["compare", &b, "--variants", "vague,clear"]);
    o.assert_code(OK);
    o.stdout_has(&["vague → clear"]);
}

#[test]
fn an_old_or_foreign_summary_is_bad_input() {
    let t = Toolgauge::new();
    std::fs::create_dir_all(t.path().join("old")).unwrap();
    t.write(
        "old/summary.json",
        r#"{"summary_version": 1, "suite": "x", "cells": []}"#,
    );
    let o = t.run(&["compare", "old/summary.json", "old/summary.json"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["summary version 1", "toolgauge report"]);
    t.write("old/summary.json", "{\n  \"cells\": 3\n}");
    let o = t.run(&["compare", "old", "old"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["is not a toolgauge summary.json (line 2"]);
}

#[test]
fn html_page_written_alongside_the_table() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--html",
        "compare.html",
        "--fail-on-regression",
        "5",
    ]);
    o.assert_code(THRESHOLD_FAILED);
    o.stdout_has(&["n paired"]);
    let html = t.read("compare.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("gate failed: accuracy fell"),
        "gates on the page"
    );
    assert!(html.contains("pass → fail") && html.contains("<svg"));
    assert!(!html.contains("<script") && !html.contains("https://"));
}
