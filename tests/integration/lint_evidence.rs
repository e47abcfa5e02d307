//! `lint --run` evidence read from real run directories: runs of the shipped suites by
//! the scripted models that call the wrong tool or break the schema, single-turn and
//! loop (trials format 3), read back by `toolgauge::lint::evidence::from_run`.

use toolgauge::lint::evidence::{EvidenceError, from_run};

use crate::support::{Toolgauge, repo_root};

/// Run `suite` (under `suites/`) against `targets` into `out` (thresholds may fail).
fn run(t: &Toolgauge, suite: &str, targets: &[&str], out: &str) {
    let suite = repo_root().join("suites").join(suite);
    let mut args = vec!["run", suite.to_str().unwrap(), "--out", out];
    for target in targets {
        args.extend(["-t", target]);
    }
    let o = t.run(&args);
    assert!(t.run_dir(out).has("trials.jsonl"), "{}", o.stderr);
}

#[test]
fn a_wrong_tool_and_schema_violations_are_evidence() {
    let t = Toolgauge::new();
    run(
        &t,
        "weather.yaml",
        &["scripted:wrong_tool", "scripted:schema_violation"],
        "out",
    );
    let ev = from_run(&t.path().join("out")).unwrap();
    let top = &ev.confusions[0];
    assert_eq!(
        (top.expected.as_str(), top.called.as_str()),
        ("get_weather", "get_stock_price"),
        "{ev:?}"
    );
    assert!(top.count > 0 && top.count <= top.trials, "{top:?}");
    assert!(!top.examples.is_empty() && top.examples.len() <= 3);
    let city = ev
        .parameters
        .iter()
        .find(|p| p.tool == "get_weather" && p.parameter == "city")
        .unwrap_or_else(|| panic!("{ev:?}"));
    assert!(city.invalid > 0 && city.invalid <= city.calls, "{city:?}");
    let symbol = ev
        .parameters
        .iter()
        .find(|p| p.tool == "get_stock_price" && p.parameter == "symbol")
        .unwrap_or_else(|| panic!("{ev:?}"));
    assert!(symbol.missing > 0, "{symbol:?}");
}

#[test]
fn loop_trials_in_the_compact_format_are_read() {
    let t = Toolgauge::new();
    run(&t, "loops.yaml", &["scripted:wrong_tool"], "out");
    assert!(t.read("out/trials.jsonl").starts_with("{\"format\":3,"));
    let ev = from_run(&t.path().join("out")).unwrap();
    assert!(
        ev.confusions
            .iter()
            .any(|c| c.expected == "get_order" && c.called == "get_shipment"),
        "{ev:?}"
    );
}

#[test]
fn a_directory_without_trials_is_an_error_naming_it() {
    let t = Toolgauge::new();
    let e = from_run(t.path()).unwrap_err();
    assert!(matches!(e, EvidenceError::NoTrials { .. }), "{e}");
    assert!(e.to_string().contains("toolgauge run"), "{e}");
}

/// `toolgauge lint SUITE --run DIR`: the run's evidence as findings on the suite's
/// lines, in the JSON contract, allowed like any rule, and a bad directory is exit 2.
#[test]
fn lint_with_a_run_reports_its_evidence_on_the_suites_lines() {
    let t = Toolgauge::new();
    run(&t, "weather.yaml", &["scripted:wrong_tool"], "out");
    let suite = repo_root().join("suites/weather.yaml");
    let suite = suite.to_str().unwrap();
    let o = t.run(&["lint", suite, "--run", "out", "--format", "json"]);
    assert!(o.code == Some(0) || o.code == Some(1), "{}", o.stderr);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let confused = findings
        .iter()
        .find(|f| f["rule"] == "run-confused-tools")
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert_eq!(confused["tool"], "get_weather", "{confused}");
    assert_eq!(confused["severity"], "warning");
    let message = confused["message"].as_str().unwrap();
    assert!(
        message
            .starts_with("the model called `get_stock_price` where `get_weather` was expected in "),
        "{message}"
    );
    // On the line of get_weather's description in the suite.
    let line = confused["line"].as_u64().unwrap() as usize;
    let text = std::fs::read_to_string(suite).unwrap();
    let at = text.lines().nth(line - 1).unwrap();
    assert!(
        at.contains("description") || at.contains("get_weather"),
        "line {line}: {at}"
    );

    let allowed = t.run(&[
        "lint",
        suite,
        "--run",
        "out",
        "--format",
        "json",
        "--allow",
        "run-confused-tools",
    ]);
    assert!(
        !allowed.stdout.contains("run-confused-tools"),
        "{}",
        allowed.stdout
    );

    let missing = t.run(&["lint", suite, "--run", "no-such-run"]);
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
    assert!(missing.stderr.contains("no-such-run"), "{}", missing.stderr);
}
