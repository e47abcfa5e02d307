//! Every metric's paired test and the regression gate on any metric, on runs built by
//! hand: the direction of each metric, what a comparison could detect, `min_cases`,
//! and the failure reasons of flips.

use super::tests::{T, runs, trial};
use super::*;
use crate::judge::{EpisodeChecks, ErrorFact, Reason};
use crate::score::record::{EpisodeRecord, TrialRecord, Verdict};
use crate::suite::trajectory::StopReason;

fn limit(metric: &str, points: f64) -> Limit {
    Limit {
        metric: metric.into(),
        points,
    }
}

fn gate(limits: Vec<Limit>) -> Gate {
    Gate {
        fail_on_regression: limits,
        ..Gate::default()
    }
}

/// A loop trial of `case` that passed or failed, with one tool error it recovered from
/// or not.
fn loop_trial(case: &str, pass: bool, recovered: bool) -> TrialRecord {
    let mut t = trial(
        case,
        T,
        "clear",
        0,
        if pass { Verdict::Pass } else { Verdict::Fail },
    );
    if !pass {
        t.reasons = vec![Reason::new(
            "no_recovery",
            format!("{case} went on as if nothing failed"),
        )];
    }
    t.episode = Some(EpisodeRecord {
        end_state: Vec::new(),
        rounds: vec![],
        stop: Some(StopReason::Answered),
        checks: Some(EpisodeChecks {
            errors: vec![ErrorFact {
                tool: "t".into(),
                kind: "rate_limit".into(),
                injected: true,
                recovered,
            }],
            ..EpisodeChecks::default()
        }),
    });
    t
}

/// 12 loop cases (baseline all pass and recover; the candidate fails and does not
/// recover in the first `failed`) and 12 single-turn cases passing on both sides.
fn loop_runs(failed: usize) -> (Vec<TrialRecord>, Vec<TrialRecord>) {
    let (mut b, mut c) = runs("clear", 12, 0, 0, 0);
    for i in 0..12 {
        let case = format!("loop{i:02}");
        b.push(loop_trial(&case, true, true));
        c.push(loop_trial(&case, i >= failed, i >= failed));
    }
    (b, c)
}

#[test]
fn task_success_is_gated_on_its_own_test() {
    let (b, c) = loop_runs(10);
    let cmp = compare_runs(&b, &c);
    let cell = &cmp.cells[0];
    let t = cell.metric("task_success").unwrap().test.as_ref().unwrap();
    // 10 of 12 loop pairs went pass → fail: McNemar on the loop pairs alone.
    assert_eq!(t.method, Method::McnemarExact);
    assert_eq!((t.cases, t.changed_cases), (12, 10));
    assert_eq!((t.baseline, t.candidate), (Some(1.0), Some(2.0 / 12.0)));
    assert_eq!(t.p_value, 2.0 / 1024.0);
    assert_eq!(t.smallest_p, 2.0 / 1024.0);
    let (lo, hi) = (t.low.unwrap(), t.high.unwrap());
    assert!(lo < -0.5 && hi < 0.0 && lo >= -1.0, "{lo} {hi}");
    // Accuracy counts the 12 unchanged single-turn cases too.
    let a = cell.metric("accuracy").unwrap().test.as_ref().unwrap();
    assert_eq!(a.cases, 24);
    assert!((a.delta.unwrap() + 10.0 / 24.0).abs() < 1e-12);

    let failures = check_gates(&cmp, &gate(vec![limit("task_success", 50.0)]));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(
        failures[0].to_string(),
        format!(
            "task_success fell 83.3 points in {T} × clear × auto (100.0% → 16.7%, McNemar p \
             = 0.002), more than the 50.0 points fail_on_regression allows"
        )
    );
    // A limit above the drop holds, and the comparison could have told: a 90-point drop
    // needs 7 cases (6 / 0.9 → 7), and 12 were measured.
    let g = gate(vec![limit("task_success", 90.0)]);
    assert!(check_gates(&cmp, &g).is_empty());
    let checks = gate_checks(&cmp, &g);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].verdict, GateVerdict::Ok, "{checks:?}");
    assert_eq!(checks[0].cases_needed, 7);
    assert!((checks[0].worsening_points().unwrap() - 1000.0 / 12.0).abs() < 1e-9);
}

#[test]
fn recovery_is_tested_by_the_paired_bootstrap() {
    let (b, c) = loop_runs(10);
    let cmp = compare_runs(&b, &c);
    let t = cmp.cells[0]
        .metric("recovery")
        .unwrap()
        .test
        .as_ref()
        .unwrap();
    assert_eq!(t.method, Method::Bootstrap);
    assert_eq!((t.baseline, t.candidate), (Some(1.0), Some(2.0 / 12.0)));
    assert_eq!((t.cases, t.changed_cases), (12, 10));
    // Every resample drops (p 0 before the floor); the floor is 2/2^10.
    assert_eq!(t.p_value, 2.0 / 1024.0);
    let (lo, hi) = (t.low.unwrap(), t.high.unwrap());
    assert!(
        lo <= -10.0 / 12.0 + 0.3 && hi < 0.0 && lo >= -1.0,
        "{lo} {hi}"
    );
    let failures = check_gates(&cmp, &gate(vec![limit("recovery", 5.0)]));
    assert!(
        failures[0]
            .to_string()
            .starts_with("recovery fell 83.3 points in"),
        "{failures:?}"
    );
    assert!(
        failures[0]
            .to_string()
            .contains("bootstrap p = 0.002 over 12 cases")
    );
}

#[test]
fn a_rise_is_the_regression_where_lower_is_better() {
    // 20 cases; the candidate errors in 8 of them.
    let (b, mut c) = runs("clear", 20, 0, 0, 0);
    for t in c.iter_mut().take(8) {
        t.verdict = Verdict::Error;
        t.response = None;
    }
    let cmp = compare_runs(&b, &c);
    let m = cmp.cells[0].metric("error_rate").unwrap();
    assert_eq!(m.better, Better::Lower);
    let t = m.test.as_ref().unwrap();
    assert_eq!((t.delta, t.changed_cases), (Some(0.4), 8));
    assert_eq!(t.p_value, 2.0 / 256.0);
    let failures = check_gates(&cmp, &gate(vec![limit("error_rate", 10.0)]));
    assert_eq!(
        failures[0].to_string(),
        format!(
            "error_rate rose 40.0 points in {T} × clear × auto (0.0% → 40.0%, bootstrap p = \
             0.008 over 20 cases), more than the 10.0 points fail_on_regression allows"
        )
    );
    // The same change the other way (fewer errors) is no regression.
    let cmp = compare_runs(&c, &b);
    assert!(check_gates(&cmp, &gate(vec![limit("error_rate", 10.0)])).is_empty());
}

#[test]
fn few_cases_could_not_tell_and_min_cases_fails_them() {
    // The issue's example: 8 cases, 3 went pass → fail, a 37.5-point drop.
    let (b, c) = runs("clear", 5, 3, 0, 0);
    let cmp = compare_runs(&b, &c);
    let g = Gate::regression(5.0);
    assert!(check_gates(&cmp, &g).is_empty());
    let checks = gate_checks(&cmp, &g);
    let k = &checks[0];
    assert_eq!(k.verdict, GateVerdict::CouldNotTell);
    assert_eq!((k.cases, k.changed_cases), (8, 3));
    assert_eq!((k.p_value, k.smallest_p), (0.25, 0.25));
    assert_eq!(k.cases_needed, 120);
    assert_eq!(k.delta_points, Some(-37.5));
    // --min-cases turns it into a failure.
    let g = Gate {
        min_cases: Some(10),
        ..Gate::regression(5.0)
    };
    let failures = check_gates(&cmp, &g);
    assert_eq!(failures.len(), 1);
    assert_eq!(
        failures[0].to_string(),
        format!(
            "could not tell: accuracy in {T} × clear × auto was measured in 8 cases on both \
             sides, fewer than min_cases 10 (a drop of 5.0 points needs at least 120 cases; \
             the smallest p these cases can reach is 0.250)"
        )
    );
    assert_eq!(gate_checks(&cmp, &g)[0].verdict, GateVerdict::Failed);
    // --strict counts the drop itself.
    let g = Gate {
        strict: true,
        ..Gate::regression(5.0)
    };
    assert!(
        check_gates(&cmp, &g)[0]
            .to_string()
            .ends_with("(strict: not significant)")
    );
    // 8 cases suffice for min_cases 8; enough changed cases and cases make it ok.
    let g = Gate {
        min_cases: Some(8),
        ..Gate::regression(5.0)
    };
    assert!(check_gates(&cmp, &g).is_empty());
    let (b, c) = runs("clear", 150, 0, 0, 0);
    let checks = gate_checks(&compare_runs(&b, &c), &Gate::regression(5.0));
    // Nothing changed: the smallest reachable p is 1, so still nothing could be told.
    assert_eq!(checks[0].verdict, GateVerdict::CouldNotTell);
    let (b, c) = runs("clear", 140, 3, 7, 0);
    let checks = gate_checks(&compare_runs(&b, &c), &Gate::regression(5.0));
    assert_eq!(checks[0].verdict, GateVerdict::Ok, "{checks:?}");
}

#[test]
fn a_gate_on_what_nothing_measures_fails() {
    let (b, c) = runs("clear", 10, 0, 0, 0);
    let cmp = compare_runs(&b, &c);
    let failures = check_gates(&cmp, &gate(vec![limit("task_success", 5.0)]));
    assert_eq!(
        failures,
        vec![GateFailure::NotMeasured {
            metric: "task_success".into()
        }]
    );
    assert!(failures[0].to_string().contains("measured in neither run"));
    // Defined on one side only: can not be checked there.
    let (b, _) = loop_runs(0);
    let (c, _) = runs("clear", 12, 0, 0, 0);
    let cmp = compare_runs(&b, &c);
    let failures = check_gates(&cmp, &gate(vec![limit("task_success", 5.0)]));
    assert!(
        failures[0].to_string().contains(
            "task_success in openai:gpt-4o-mini × clear × auto is undefined on the candidate side"
        ),
        "{failures:?}"
    );
}

#[test]
fn flips_carry_the_candidates_first_reason() {
    let (b, c) = loop_runs(2);
    let cmp = compare_runs(&b, &c);
    let flips = &cmp.cells[0].flips;
    assert_eq!(flips.len(), 2);
    let r = flips[0].reason.as_ref().unwrap();
    assert_eq!(r.code, "no_recovery");
    assert_eq!(r.message, "loop00 went on as if nothing failed");
    // An improvement has no failure of the candidate to show.
    let cmp = compare_runs(&c, &b);
    assert!(cmp.cells[0].flips.iter().all(|f| f.reason.is_none()));
    let md = render_markdown(&compare_runs(&b, &c));
    assert!(
        md.contains(&format!(
            "- `loop00` in {T} × clear × auto: `no_recovery` loop00 went on as if nothing failed\n"
        )),
        "{md}"
    );
}

#[test]
fn every_format_shows_every_metric_with_its_interval() {
    let (b, c) = loop_runs(10);
    let (b2, c2) = runs("terse", 10, 2, 0, 0);
    let (mut b, mut c) = (b, c);
    b.extend(b2);
    c.extend(c2);
    let mut cmp = compare_runs(&b, &c);
    cmp.suite_thresholds = vec!["task_success".into()];
    cmp.gates = gate_checks(&cmp, &gate(vec![limit("task_success", 5.0)]));
    // Pooled: the cases of both cells; task_success only has the loop cell's.
    let pooled = |name: &str| {
        cmp.overall_metrics
            .iter()
            .find(|m| m.metric == name)
            .unwrap()
            .test
            .clone()
            .unwrap()
    };
    assert_eq!(pooled("accuracy").cases, 36);
    assert_eq!(pooled("error_rate").cases, 36);
    assert_eq!(pooled("task_success").cases, 12);
    let text = render_terminal(&cmp);
    for needle in [
        "metrics, overall:",
        "task_success *",
        "-83.3 pts",
        "recovery",
        "min p",
        "bootstrap",
        "regression gates:",
        "task_success in overall: -83.3 pts (100.0% → 16.7%), McNemar p = 0.002 over 12 \
         cases (10 changed); limit 5.0 points; smallest reachable p 0.002, a drop of 5.0 \
         points needs at least 120 cases: failed",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    // The threshold metric leads the table.
    let first_row = text
        .lines()
        .skip_while(|l| !l.starts_with("metrics, overall"))
        .nth(4)
        .unwrap();
    assert!(first_row.contains("task_success *"), "{text}");
    let md = render_markdown(&cmp);
    for needle in [
        "### Metrics (overall)",
        "| task\\_success \\* | 100.0% | 16.7% | -83.3 pts |",
        "<details><summary>openai:gpt-4o-mini × terse × auto</summary>",
        "### Regression gates",
    ] {
        assert!(md.contains(needle), "{needle:?} missing from\n{md}");
    }
    let json = serde_json::to_value(&cmp).unwrap();
    assert_eq!(json["gates"][0]["verdict"], "failed");
    assert_eq!(
        json["overall_metrics"][0]["test"]["method"],
        "mcnemar_exact"
    );
    assert!(json["cells"][0]["metrics"][1]["test"]["low"].is_number());
    let html = html::render_html(&cmp, "a", "b", &check_gates(&cmp, &Gate::default())).unwrap();
    for needle in [
        r#"<ul id="gates">"#,
        "smallest reachable p 0.002",
        "<th class=\"n\">95% CI</th>",
        "<th class=\"n\">min p</th>",
        "<summary class=\"mono\">overall</summary>",
        "candidate's failure reason",
        "no_recovery",
    ] {
        assert!(html.contains(needle), "{needle:?} missing from the page");
    }
}
