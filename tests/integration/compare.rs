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
    let mut full: serde_json::Value = serde_json::from_str(&full.stdout).unwrap();
    let mut bare: serde_json::Value = serde_json::from_str(&bare.stdout).unwrap();
    // A summary has no per-trial data: no failure reasons, no tests of metrics other
    // than accuracy (its outcomes are enough for that), no pooled metric values over
    // several cells. Everything else is the same from the summaries alone.
    for cell in full["cells"].as_array_mut().unwrap() {
        for flip in cell["flips"].as_array_mut().unwrap() {
            assert!(flip["reason"]["code"].is_string(), "{flip}");
            flip.as_object_mut().unwrap().remove("reason");
        }
        for m in cell["metrics"].as_array_mut().unwrap() {
            assert!(m["test"]["method"].is_string(), "{m}");
            if m["metric"] != "accuracy" {
                m.as_object_mut().unwrap().remove("test");
            }
        }
    }
    let full_overall = full
        .as_object_mut()
        .unwrap()
        .remove("overall_metrics")
        .unwrap();
    let bare_overall = bare
        .as_object_mut()
        .unwrap()
        .remove("overall_metrics")
        .unwrap();
    assert_eq!(full_overall[0]["test"], bare_overall[0]["test"]);
    assert_eq!(bare_overall[0]["metric"], "accuracy");
    assert!(bare_overall[1]["test"].is_null() && full_overall[1]["test"].is_object());
    // Same pairs, flips, p-values and metric deltas.
    assert_eq!(full, bare);
    // 16 pairs: the oracle passes all but capital-of-france under `required` (2 trials),
    // wrong_tool fails all, so 14 pass → fail and 2 fail → fail.
    let o = &full["overall"];
    assert_eq!(
        [&o["n"], &o["n11"], &o["n10"], &o["n01"], &o["n00"]],
        [16, 0, 14, 0, 2],
        "{full}"
    );

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

/// The last line of stderr.
fn last_line(o: &crate::support::Output) -> String {
    o.stderr.lines().last().unwrap_or_default().to_string()
}

#[test]
fn an_unknown_variant_is_bad_input_named_last() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    let o = t.run(&[
        "compare",
        "base",
        "--variants",
        "vague,nonexistent",
        "--fail-on-regression",
        "5",
    ]);
    o.assert_code(BAD_INPUT);
    let last = last_line(&o);
    assert!(
        last.contains("`nonexistent`") && last.contains("vague, clear"),
        "{}",
        o.stderr
    );
    // The same variant twice compares nothing either.
    let o = t.run(&["compare", "base", "--variants", "clear,clear"]);
    o.assert_code(BAD_INPUT);
    assert!(last_line(&o).contains("twice"), "{}", o.stderr);
}

#[test]
fn every_unknown_name_is_named_in_one_error_with_a_suggestion_each() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    // Three variants, two unknown (one a typo), one known: the count and both names.
    let o = t.run(&[
        "compare",
        "base",
        "--variants",
        "vague,claer,nonexistent",
        "--fail-on-regression",
        "5",
    ]);
    o.assert_code(BAD_INPUT);
    assert_eq!(
        last_line(&o),
        "error: --variants takes two variant names (e.g. --variants vague,clear), got 3; \
         --variants names variants `claer` (did you mean `clear`?) and `nonexistent`, which \
         are not in the compared runs (they have: vague, clear)"
    );
    // Every flag's unknown names together, each flag once, a name given twice once.
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--target",
        "scripted:orcale,scripted:oracle,scripted:nocall,scripted:gpt",
        "--tool-choice",
        "requird,auto,requird",
    ]);
    o.assert_code(BAD_INPUT);
    assert_eq!(
        last_line(&o),
        "error: --target names targets `scripted:orcale` (did you mean `scripted:oracle`?), \
         `scripted:nocall` (did you mean `scripted:no_call`?) and `scripted:gpt`, which are not \
         in the compared runs (they have: scripted:oracle, scripted:no_call); --tool-choice \
         names tool_choice mode `requird` (did you mean `required`?), which is not in the \
         compared runs (they have: auto, required)"
    );
    assert!(o.stdout.is_empty(), "nothing compared: {}", o.stdout);
}

#[test]
fn unknown_targets_and_tool_choice_modes_are_bad_input() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    let o = t.run(&["compare", "base", "cand", "--target", "scripted:orcale"]);
    o.assert_code(BAD_INPUT);
    let last = last_line(&o);
    assert!(
        last.contains("`scripted:orcale`") && last.contains("scripted:oracle, scripted:no_call"),
        "{}",
        o.stderr
    );
    let o = t.run(&["compare", "base", "cand", "--tool-choice", "none"]);
    o.assert_code(BAD_INPUT);
    assert!(
        last_line(&o).contains("tool_choice mode `none`")
            && last_line(&o).contains("auto, required"),
        "{}",
        o.stderr
    );
    // A known mode filters both sides: 4 cases × 2 variants under `required` only.
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--tool-choice",
        "required",
        "--format",
        "json",
    ]);
    o.assert_code(OK);
    let j: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(j["overall"]["n"], 8, "{j}");
    assert!(
        j["cells"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["cell"].as_str().unwrap().ends_with("× required")),
        "{j}"
    );
}

#[test]
fn a_comparison_that_pairs_nothing_fails() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    // Only the baseline has this target: nothing is left to pair, even without a gate.
    let o = t.run(&["compare", "base", "cand", "--target", "scripted:oracle"]);
    o.assert_code(THRESHOLD_FAILED);
    let last = last_line(&o);
    assert!(
        last.starts_with("gate failed: nothing was compared: 0 scored pairs (16 baseline trials had no candidate partner)"),
        "{}",
        o.stderr
    );
}

#[test]
fn runs_of_different_suites_are_bad_input() {
    let t = Toolgauge::new();
    let weather = t.fixture("weather.yaml");
    let other = t.fixture("per_case_tools.yaml");
    t.run(&["run", &weather, "--out", "base", "--quiet"]);
    t.run(&["run", &other, "--out", "cand", "--quiet"]);
    let o = t.run(&["compare", "base", "cand", "--fail-on-regression", "5"]);
    o.assert_code(BAD_INPUT);
    let last = last_line(&o);
    assert!(
        last.contains("different suites")
            && last.contains("`weather`")
            && last.contains("`per-case-tools`"),
        "{}",
        o.stderr
    );
    // Bare summaries carry the suite name too.
    let b = summary_only(&t, "base", "only-base");
    let c = summary_only(&t, "cand", "only-cand");
    t.run(&["compare", &b, &c]).assert_code(BAD_INPUT);
}

#[test]
fn rates_and_points_out_of_range_are_bad_input() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:oracle");
    let o = t.run(&["compare", "base", "cand", "--min-accuracy", "80"]);
    o.assert_code(BAD_INPUT);
    assert_eq!(
        last_line(&o),
        "error: --min-accuracy takes a fraction in [0, 1]; did you mean 0.8?",
        "{}",
        o.stderr
    );
    for bad in ["-0.1", "NaN", "1000"] {
        let o = t.run(&["compare", "base", "cand", &format!("--min-accuracy={bad}")]);
        o.assert_code(BAD_INPUT);
        o.stderr_has(&["--min-accuracy takes a fraction in [0, 1]"]);
    }
    let o = t.run(&["compare", "base", "cand", "--fail-on-regression=-5"]);
    o.assert_code(BAD_INPUT);
    assert!(last_line(&o).contains("did you mean 5?"), "{}", o.stderr);
    let o = t.run(&["compare", "base", "cand", "--fail-on-regression", "250"]);
    o.assert_code(BAD_INPUT);
    // In range: accepted (identical runs hold every gate). The oracle's lowest cells are
    // at 75%: under `required` it must call, so both should_not_call cases fail there.
    t.run(&[
        "compare",
        "base",
        "cand",
        "--min-accuracy",
        "0.75",
        "--fail-on-regression",
        "0",
    ])
    .assert_code(OK);
}

#[test]
fn repeats_are_tested_with_the_case_as_unit() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    for (target, out, repeats) in [
        ("scripted:oracle", "base1", "1"),
        ("scripted:no_call", "cand1", "1"),
        ("scripted:oracle", "base3", "3"),
        ("scripted:no_call", "cand3", "3"),
    ] {
        t.run(&[
            "run",
            &suite,
            "--target",
            target,
            "--repeats",
            repeats,
            "--out",
            out,
            "--quiet",
        ]);
    }
    let json = |b: &str, c: &str| -> serde_json::Value {
        let o = t.run(&["compare", b, c, "--format", "json"]);
        o.assert_code(OK);
        serde_json::from_str(&o.stdout).unwrap()
    };
    let one = json("base1", "cand1");
    let three = json("base3", "cand3");
    assert_eq!(one["overall"]["test"], "mcnemar_exact", "{one}");
    assert_eq!(three["overall"]["test"], "sign_flip_exact", "{three}");
    // Scripted targets repeat themselves: three times the flips, but the same cases.
    let flips = one["overall"]["n10"].as_u64().unwrap();
    assert!(flips > 0);
    assert_eq!(three["overall"]["n10"].as_u64().unwrap(), 3 * flips);
    assert_eq!(three["overall"]["cases"], one["overall"]["cases"]);
    assert_eq!(three["overall"]["max_pairs_per_case"], 3);
    // Every changed case moved by -3/3 = -1, so the sign-flip p-value over cases equals
    // the McNemar p-value of the one-repeat run, not that of 3 × as many pairs.
    assert_eq!(three["overall"]["p_value"], one["overall"]["p_value"]);
    for out in [&one, &three] {
        let (lo, hi) = (
            out["overall"]["delta_low_points"].as_f64().unwrap(),
            out["overall"]["delta_high_points"].as_f64().unwrap(),
        );
        let d = out["overall"]["delta_points"].as_f64().unwrap();
        assert!(lo <= d && d < hi && hi <= 100.0 && lo >= -100.0, "{out}");
    }
    // The terminal and Markdown outputs name the test.
    let o = t.run(&["compare", "base3", "cand3", "--format", "terminal,md"]);
    o.stdout_has(&[
        "sign-flip p",
        "exact sign-flip test on per-case differences",
    ]);
}

#[test]
fn the_compare_chart_has_a_legend() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:no_call");
    t.run(&["compare", "base", "cand", "--html", "c.html"])
        .assert_code(OK);
    let html = t.read("c.html");
    assert!(html.contains(r#"<g class="legend">"#), "legend");
    assert!(html.contains(">baseline</text>") && html.contains(">candidate</text>"));
    assert!(html.contains("mcnemar_exact"));
}

/// `suites/loops.yaml` (10 tool-loop cases) run by `baseline` into `base` and by
/// `candidate` into `cand`, with `extra` run arguments.
fn loop_runs(t: &Toolgauge, baseline: &str, candidate: &str, extra: &[&str]) {
    let suite = crate::support::repo_root().join("suites/loops.yaml");
    let suite = suite.to_str().unwrap();
    for (target, out) in [(baseline, "base"), (candidate, "cand")] {
        let mut args = vec!["run", suite, "--target", target, "--out", out, "--quiet"];
        args.extend_from_slice(extra);
        // The candidates fail the suite's own thresholds; the runs are what matter here.
        let o = t.run(&args);
        assert!(
            [Some(OK), Some(THRESHOLD_FAILED)].contains(&o.code),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_gate_on_task_success_fails_when_it_drops() {
    let t = Toolgauge::new();
    loop_runs(&t, "scripted:oracle", "scripted:loop_forever", &[]);
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "task_success=5",
    ]);
    o.assert_code(THRESHOLD_FAILED);
    assert!(
        last_line(&o).starts_with(
            "gate failed: task_success fell 100.0 points in scripted:oracle → \
             scripted:loop_forever × default × auto (100.0% → 0.0%, McNemar p = 0.002)"
        ),
        "{}",
        o.stderr
    );
    // Every metric with its interval, the loop rates among them, and the gate's row.
    o.stdout_has(&[
        "metrics, scripted:oracle → scripted:loop_forever × default × auto:",
        "task_success",
        "-100.0 pts",
        "recovery",
        "latency_p95_ms",
        "regression gates:",
        "task_success in scripted:oracle → scripted:loop_forever × default × auto: -100.0 pts",
        "smallest reachable p 0.002, a drop of 5.0 points needs at least 120 cases: failed",
    ]);
    // A gate on what the candidate held stays green; recovery is tested by the bootstrap.
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "duplicate_side_effect_rate=5",
        "--format",
        "json",
    ]);
    o.assert_code(OK);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let metrics = json["cells"][0]["metrics"].as_array().unwrap();
    let find = |name: &str| metrics.iter().find(|m| m["metric"] == name).unwrap();
    assert_eq!(find("task_success")["test"]["method"], "mcnemar_exact");
    assert_eq!(find("recovery")["better"], "higher");
    assert_eq!(find("error_rate")["better"], "lower");
    assert_eq!(find("latency_p50_ms")["test"]["method"], "bootstrap");
    assert!(find("latency_p50_ms")["test"]["low"].is_number());
    assert_eq!(json["gates"][0]["metric"], "duplicate_side_effect_rate");
    assert_eq!(json["gates"][0]["better"], "lower");
    // The suite's thresholds (accuracy, invalid_call_rate) are named and can be gated.
    assert_eq!(
        json["suite_thresholds"],
        serde_json::json!(["accuracy", "invalid_call_rate"])
    );
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "thresholds=5",
    ]);
    o.assert_code(THRESHOLD_FAILED);
    o.stdout_has(&["accuracy *", "invalid_call_rate *", "invalid_call_rate in "]);
    o.stderr_has(&["gate failed: accuracy fell 100.0 points"]);
}

#[test]
fn a_small_suite_could_not_tell_and_min_cases_fails_it() {
    let t = Toolgauge::new();
    // 8 of the 10 cases; ignore_error fails 3 of them: a 37.5-point drop that the
    // paired test can not call significant (3 discordant cases: p ≥ 0.25).
    let cases = [
        "--case", "order-*", "--case", "refund-*", "--case", "rate-*",
    ];
    loop_runs(&t, "scripted:oracle", "scripted:ignore_error", &cases);
    let o = t.run(&["compare", "base", "cand", "--fail-on-regression", "5"]);
    o.assert_code(OK);
    o.stdout_has(&[
        "accuracy in scripted:oracle → scripted:ignore_error × default × auto: -37.5 pts \
         (100.0% → 62.5%), McNemar p = 0.250 over 8 cases (3 changed); limit 5.0 points; \
         smallest reachable p 0.250, a drop of 5.0 points needs at least 120 cases: could \
         not tell",
    ]);
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "5",
        "--min-cases",
        "10",
    ]);
    o.assert_code(THRESHOLD_FAILED);
    assert_eq!(
        last_line(&o),
        "gate failed: could not tell: accuracy in scripted:oracle → scripted:ignore_error × \
         default × auto was measured in 8 cases on both sides, fewer than min_cases 10 (a \
         drop of 5.0 points needs at least 120 cases; the smallest p these cases can reach \
         is 0.250)",
        "{}",
        o.stderr
    );
    // --strict fails the drop itself, as before.
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "5",
        "--strict",
    ]);
    o.assert_code(THRESHOLD_FAILED);
    assert!(
        last_line(&o).ends_with("(strict: not significant)"),
        "{}",
        o.stderr
    );
}

#[test]
fn the_flips_list_gives_the_candidates_failure_reason() {
    let t = Toolgauge::new();
    loop_runs(&t, "scripted:oracle", "scripted:ignore_error", &[]);
    let o = t.run(&[
        "compare", "base", "cand", "--format", "md", "--html", "c.html",
    ]);
    o.assert_code(OK);
    o.stdout_has(&[
        "### Pass → fail (3)",
        "- `order-not-found-en` in scripted:oracle → scripted:ignore\\_error × default × auto: \
         `no_recovery` \\`get\\_order\\` failed in round 1 (not\\_found)",
        "### Metrics (scripted:oracle → scripted:ignore\\_error × default × auto)",
        "| task\\_success | 100.0% | 70.0% | -30.0 pts |",
    ]);
    // The mode is in the cell label, not repeated on the line.
    assert!(!o.stdout.contains("(tool_choice"), "{}", o.stdout);
    let html = t.read("c.html");
    assert!(html.contains("no_recovery") && html.contains("candidate's failure reason"));
}

#[test]
fn bad_regression_gates_are_bad_input_with_a_hint() {
    let t = Toolgauge::new();
    two_runs(&t, "scripted:oracle", "scripted:oracle");
    let cases: [(&str, &str, &str); 5] = [
        (
            "foo=x",
            "error: --fail-on-regression foo=x: unknown metric `foo`, and `x` is not a number of points",
            "hint: the gate takes: thresholds",
        ),
        (
            "task_sucess=5",
            "error: --fail-on-regression task_sucess=5: unknown metric `task_sucess`",
            "hint: did you mean `task_success`?",
        ),
        (
            "recovery=-5",
            "error: --fail-on-regression recovery takes the largest allowed drop in percentage points, in [0, 100]; did you mean 5?",
            "",
        ),
        (
            "latency_p95_ms=10",
            "error: --fail-on-regression latency_p95_ms=10: `latency_p95_ms` is an amount",
            "hint: gate it with a suite threshold",
        ),
        (
            "5,accuracy=3",
            "error: --fail-on-regression names `accuracy` twice (5 and accuracy=3)",
            "",
        ),
    ];
    for (value, message, hint) in cases {
        let o = t.run(&[
            "compare",
            "base",
            "cand",
            &format!("--fail-on-regression={value}"),
        ]);
        o.assert_code(BAD_INPUT);
        o.stderr_has(&[message, hint]);
    }
    // A metric other than accuracy needs the trials, which a bare summary lacks.
    let b = summary_only(&t, "base", "only-base");
    let o = t.run(&[
        "compare",
        &b,
        "cand",
        "--fail-on-regression",
        "error_rate=5",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "needs every trial",
        "is a summary.json without its run's trials.jsonl",
    ]);
    // --min-cases needs a regression gate, and a number of cases.
    let o = t.run(&["compare", "base", "cand", "--min-cases", "5"]);
    o.assert_code(BAD_INPUT);
    let o = t.run(&[
        "compare",
        "base",
        "cand",
        "--fail-on-regression",
        "5",
        "--min-cases",
        "0",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["--min-cases takes the fewest cases"]);
}
