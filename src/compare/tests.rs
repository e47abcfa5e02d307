//! Pairing, the paired test and the gates, on runs built by hand.

use super::*;
use crate::provider::{Response, ToolChoice};
use crate::score::record::{TrialRecord, Verdict};
use crate::suite::CaseKind;
use crate::util::metric_names::METRIC_NAMES;

pub(super) const T: &str = "openai:gpt-4o-mini";

pub(super) fn trial(
    case: &str,
    target: &str,
    variant: &str,
    repeat: u32,
    verdict: Verdict,
) -> TrialRecord {
    TrialRecord {
        judge: Vec::new(),
        case_id: case.into(),
        kind: CaseKind::ShouldCall,
        tags: vec![],
        target: target.into(),
        variant: variant.into(),
        tool_choice: ToolChoice::Auto,
        repeat,
        stream: false,
        messages: vec![],
        response: (verdict != Verdict::Error).then(Response::default),
        checks: None,
        verdict,
        reasons: vec![],
        cost_usd: None,
        distractors: None,
        episode: None,
    }
}

fn v(pass: bool) -> Verdict {
    if pass { Verdict::Pass } else { Verdict::Fail }
}

/// Two runs of one cell (`T × clear × auto`) with the given paired counts: `n11` both
/// pass, `n10` pass → fail, `n01` fail → pass, `n00` both fail.
pub(super) fn runs(
    variant: &str,
    n11: usize,
    n10: usize,
    n01: usize,
    n00: usize,
) -> (Vec<TrialRecord>, Vec<TrialRecord>) {
    let mut b = Vec::new();
    let mut c = Vec::new();
    let groups = [
        (n11, true, true),
        (n10, true, false),
        (n01, false, true),
        (n00, false, false),
    ];
    let mut i = 0;
    for (count, bp, cp) in groups {
        for _ in 0..count {
            let id = format!("{variant}-case{i:02}");
            b.push(trial(&id, T, variant, 0, v(bp)));
            c.push(trial(&id, T, variant, 0, v(cp)));
            i += 1;
        }
    }
    (b, c)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
}

#[test]
fn mcnemar_hand_values() {
    // No discordant pairs: nothing to test.
    assert_eq!(mcnemar_exact(0, 0), 1.0);
    // One discordant pair: P(X ≤ 0) = 1/2, doubled = 1.
    assert_eq!(mcnemar_exact(1, 0), 1.0);
    assert_eq!(mcnemar_exact(0, 1), 1.0);
    // 6 vs 0: 2 × (1/2)^6 = 2/64 = 0.03125.
    assert!(close(mcnemar_exact(6, 0), 0.03125));
    assert!(close(mcnemar_exact(0, 6), 0.03125));
    // 10 vs 2, n = 12: P(X ≤ 2) = (1 + 12 + 66) / 4096 = 79/4096; p = 158/4096.
    assert!(close(mcnemar_exact(10, 2), 158.0 / 4096.0));
    assert!(close(mcnemar_exact(2, 10), 158.0 / 4096.0));
    assert!((mcnemar_exact(10, 2) - 0.03857).abs() < 1e-5);
    // 10 vs 0: 2/1024.
    assert!(close(mcnemar_exact(10, 0), 2.0 / 1024.0));
    // Balanced: P(X ≤ 5) with n = 10 is over 1/2, so p caps at 1.
    assert_eq!(mcnemar_exact(5, 5), 1.0);
    // 2 vs 1, n = 3: P(X ≤ 1) = 4/8, doubled = 1.
    assert_eq!(mcnemar_exact(2, 1), 1.0);
    // 20 vs 10: Σ_{i ≤ 10} C(30, i) / 2^30, doubled (computed with exact integers).
    assert!(close(mcnemar_exact(20, 10), 0.09873714670538902));
}

#[test]
fn mcnemar_large_counts() {
    // Either side of the switch from exact integers (n ≤ 120) to log space (n > 120);
    // references from exact integer arithmetic.
    let near = |p: f64, r: f64| (p - r).abs() <= 1e-11 * r;
    assert!(near(mcnemar_exact(70, 50), 0.082_407_479_327_526_55));
    assert!(near(mcnemar_exact(70, 51), 0.101_367_653_533_092_28));
    assert!(near(mcnemar_exact(80, 41), 4.985_619_576_974_204e-4));
    assert!(near(mcnemar_exact(100, 21), 1.606_311_290_539_171_5e-13));
    // Large symmetric case: exactly 1.
    assert_eq!(mcnemar_exact(50_000, 50_000), 1.0);
    // One short of symmetric: 2 · P(X ≤ 49,999) = 1 - P(X = 50,000) with n = 100,000;
    // exact reference 0.99747687378580326011...
    let p = mcnemar_exact(49_999, 50_001);
    assert!((p - 0.997_476_873_785_803_3).abs() < 1e-11, "{p}");
    // n = 100,000, 50,500 vs 49,500; reference from exact integer arithmetic:
    // 0.0015823598788515956444...
    let p = mcnemar_exact(50_500, 49_500);
    assert!(
        (p - 0.001_582_359_878_851_595_6).abs() < 1e-9 * 0.0016,
        "{p:e}"
    );
    // 1,000 vs 800: tiny but positive; exact reference 2.6653428811933197e-06.
    let p = mcnemar_exact(1_000, 800);
    assert!(
        (p - 2.665_342_881_193_319_7e-6).abs() < 1e-9 * 2.7e-6,
        "{p:e}"
    );
    // 40,000 vs 39,000: reference 3.789490097046635e-4.
    let p = mcnemar_exact(40_000, 39_000);
    assert!(
        (p - 3.789_490_097_046_635e-4).abs() < 1e-9 * 3.8e-4,
        "{p:e}"
    );
    // Symmetric in its arguments and never above 1.
    for (b, c) in [(3, 17), (100, 0), (0, 1000), (12_345, 12_000)] {
        assert_eq!(mcnemar_exact(b, c), mcnemar_exact(c, b));
        assert!(mcnemar_exact(b, c) <= 1.0);
    }
    // Extremely lopsided: underflows to 0 rather than anything negative or NaN.
    let p = mcnemar_exact(100_000, 0);
    assert!((0.0..1e-300).contains(&p), "{p:e}");
}

#[test]
fn regression_fails_the_gate() {
    // 40 pairs: 26 both pass, 10 pass → fail, 0 fail → pass, 4 both fail.
    // Baseline 36/40 = 90%, candidate 26/40 = 65%: -25 points, p = 2/1024.
    let (b, c) = runs("clear", 26, 10, 0, 4);
    let cmp = compare_runs(&b, &c);
    assert_eq!(cmp.cells.len(), 1);
    let cell = &cmp.cells[0];
    assert_eq!(cell.cell, format!("{T} × clear × auto"));
    let p = &cell.paired;
    assert_eq!((p.n, p.n11, p.n10, p.n01, p.n00), (40, 26, 10, 0, 4));
    assert!(close(p.baseline_accuracy.unwrap(), 0.9));
    assert!(close(p.candidate_accuracy.unwrap(), 0.65));
    assert!((p.delta_points.unwrap() + 25.0).abs() < 1e-9);
    assert!(close(p.p_value, 2.0 / 1024.0));
    assert!(p.significant);
    assert_eq!(cell.flips.len(), 10);
    assert!(
        cell.flips
            .iter()
            .all(|f| f.direction == FlipDirection::PassToFail)
    );
    assert_eq!(cmp.overall, *p);
    assert_eq!(p.test, PairedTest::McnemarExact);

    let gate = Gate {
        fail_on_regression: Gate::regression(5.0).fail_on_regression,
        ..Gate::default()
    };
    let failures = check_gates(&cmp, &gate);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(
        failures[0].to_string(),
        format!(
            "accuracy fell 25.0 points in {T} × clear × auto (90.0% → 65.0%, \
             McNemar p = 0.002), more than the 5.0 points fail_on_regression allows"
        )
    );
    // A limit above the drop lets it through.
    let lax = Gate {
        fail_on_regression: Gate::regression(30.0).fail_on_regression,
        ..Gate::default()
    };
    assert!(check_gates(&cmp, &lax).is_empty());
    // Serialises with the gate's name.
    let json = serde_json::to_value(&failures[0]).unwrap();
    assert_eq!(json["gate"], "regression");
    assert_eq!(json["metric"], "accuracy");
    assert_eq!(json["change_points"], 25.0);
}

#[test]
fn noise_passes_unless_strict() {
    // 40 pairs: 34 both pass, 2 pass → fail, 1 fail → pass, 3 both fail.
    // Baseline 36/40 = 90%, candidate 35/40 = 87.5%: -2.5 points, p = 1.
    let (b, c) = runs("clear", 34, 2, 1, 3);
    let cmp = compare_runs(&b, &c);
    let p = &cmp.cells[0].paired;
    assert_eq!((p.n10, p.n01), (2, 1));
    assert!((p.delta_points.unwrap() + 2.5).abs() < 1e-9);
    assert_eq!(p.p_value, 1.0);
    assert!(!p.significant);
    // Not significant: passes a 2-point gate, and a 5-point one.
    for limit in [2.0, 5.0] {
        let gate = Gate {
            fail_on_regression: Gate::regression(limit).fail_on_regression,
            ..Gate::default()
        };
        assert!(check_gates(&cmp, &gate).is_empty());
    }
    // Strict, 5 points: the 2.5-point drop is within the limit.
    let strict5 = Gate {
        fail_on_regression: Gate::regression(5.0).fail_on_regression,
        strict: true,
        ..Gate::default()
    };
    assert!(check_gates(&cmp, &strict5).is_empty());
    // Strict, 2 points: the drop exceeds it and fails without significance.
    let strict2 = Gate {
        fail_on_regression: Gate::regression(2.0).fail_on_regression,
        strict: true,
        ..Gate::default()
    };
    let failures = check_gates(&cmp, &strict2);
    assert_eq!(failures.len(), 1);
    assert!(
        matches!(
            failures[0],
            GateFailure::Regression {
                significant: false,
                ..
            }
        ),
        "{failures:?}"
    );
    let text = failures[0].to_string();
    assert!(text.contains("accuracy fell 2.5 points"), "{text}");
    assert!(text.contains("90.0% → 87.5%, McNemar p = 1.000"), "{text}");
    assert!(text.contains("strict"), "{text}");
}

#[test]
fn improvements_never_fail_the_regression_gate() {
    // The mirror of the regression: 10 fail → pass.
    let (b, c) = runs("clear", 26, 0, 10, 4);
    let cmp = compare_runs(&b, &c);
    assert!(cmp.cells[0].paired.significant);
    assert!((cmp.cells[0].paired.delta_points.unwrap() - 25.0).abs() < 1e-9);
    let gate = Gate {
        fail_on_regression: Gate::regression(0.0).fail_on_regression,
        strict: true,
        ..Gate::default()
    };
    assert!(check_gates(&cmp, &gate).is_empty());
}

#[test]
fn min_accuracy_applies_to_every_candidate_cell() {
    // Cell clear: candidate 26/40 = 65%. Cell terse: candidate 36/40 = 90%.
    let (mut b, mut c) = runs("clear", 26, 10, 0, 4);
    let (b2, c2) = runs("terse", 36, 0, 0, 4);
    b.extend(b2);
    c.extend(c2);
    // A cell only the candidate has (30% accuracy), and one only the baseline has.
    for i in 0..10 {
        c.push(trial(&format!("n{i}"), T, "new", 0, v(i < 3)));
        b.push(trial(&format!("o{i}"), T, "old", 0, Verdict::Fail));
    }
    // A candidate cell with errors only: accuracy undefined.
    c.push(trial("e", T, "broken", 0, Verdict::Error));
    let cmp = compare_runs(&b, &c);
    let gate = Gate {
        min_accuracy: Some(0.8),
        ..Gate::default()
    };
    let failures = check_gates(&cmp, &gate);
    let cells: Vec<&str> = failures
        .iter()
        .map(|f| match f {
            GateFailure::MinAccuracy { cell, .. } => cell.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        cells,
        [
            format!("{T} × clear × auto"),
            format!("{T} × new × auto"),
            format!("{T} × broken × auto"),
        ]
    );
    assert_eq!(
        failures[0].to_string(),
        format!("accuracy 65.0% in {T} × clear × auto is below min_accuracy 80.0%")
    );
    assert_eq!(
        failures[2].to_string(),
        format!(
            "accuracy undefined in {T} × broken × auto (no scored candidate trial), \
             min_accuracy 80.0%"
        )
    );
    // The baseline-only cell `old` (0%) is not gated.
    assert!(!cells.iter().any(|c| c.contains("old")));
}

#[test]
fn unpaired_trials_are_counted() {
    let b = vec![
        trial("a", T, "clear", 0, Verdict::Pass),
        trial("b", T, "clear", 0, Verdict::Pass),
        trial("only-b", T, "clear", 0, Verdict::Pass),
        // Repeat 1 of `a` exists only in the baseline.
        trial("a", T, "clear", 1, Verdict::Fail),
    ];
    let c = vec![
        trial("a", T, "clear", 0, Verdict::Fail),
        trial("b", T, "clear", 0, Verdict::Pass),
        trial("only-c1", T, "clear", 0, Verdict::Pass),
        trial("only-c2", T, "clear", 0, Verdict::Fail),
        // A cell the baseline lacks entirely.
        trial("a", T, "terse", 0, Verdict::Pass),
    ];
    let cmp = compare_runs(&b, &c);
    assert_eq!(cmp.cells.len(), 2);
    let clear = &cmp.cells[0];
    assert_eq!(clear.paired.n, 2);
    assert_eq!((clear.paired.n11, clear.paired.n10), (1, 1));
    assert_eq!(clear.only_baseline, 2);
    assert_eq!(clear.only_candidate, 2);
    assert_eq!(
        clear.flips,
        vec![Flip {
            case_id: "a".into(),
            tool_choice: "auto".into(),
            repeat: 0,
            direction: FlipDirection::PassToFail,
            reason: None,
        }]
    );
    let terse = &cmp.cells[1];
    assert_eq!(terse.baseline, None);
    assert_eq!(terse.candidate.as_ref().unwrap().variant, "terse");
    assert_eq!(terse.paired.n, 0);
    assert_eq!(terse.paired.delta_points, None);
    assert_eq!(terse.paired.p_value, 1.0);
    assert!(!terse.paired.significant);
    assert_eq!((terse.only_baseline, terse.only_candidate), (0, 1));
    assert_eq!((cmp.only_baseline, cmp.only_candidate), (2, 3));
    // Reported in both renderings.
    assert!(render_terminal(&cmp).contains("3 candidate trials had no baseline partner"));
    assert!(render_markdown(&cmp).contains("2 baseline trials had no candidate partner"));
    // A cell without pairs cannot fail the regression gate.
    let gate = Gate {
        fail_on_regression: Gate::regression(0.0).fail_on_regression,
        strict: true,
        ..Gate::default()
    };
    // The pooled pairs (overall) and the `clear` cell fail; `terse` has no pairs.
    let failures = check_gates(&cmp, &gate);
    assert_eq!(failures.len(), 2);
    assert!(
        failures[0].to_string().contains("in overall"),
        "{}",
        failures[0]
    );
    assert!(failures[1].to_string().contains("clear"));
    assert!(failures.iter().all(|f| !f.to_string().contains("terse")));
}

#[test]
fn error_trials_are_not_paired() {
    let b = vec![
        trial("a", T, "clear", 0, Verdict::Pass),
        trial("b", T, "clear", 0, Verdict::Error),
        trial("c", T, "clear", 0, Verdict::Pass),
        trial("d", T, "clear", 0, Verdict::Error),
    ];
    let c = vec![
        trial("a", T, "clear", 0, Verdict::Pass),
        trial("b", T, "clear", 0, Verdict::Pass),
        trial("c", T, "clear", 0, Verdict::Error),
        trial("d", T, "clear", 0, Verdict::Error),
    ];
    let cmp = compare_runs(&b, &c);
    let cell = &cmp.cells[0];
    // Only `a` is a scored pair; b, c, d each have an error on some side.
    assert_eq!(cell.paired.n, 1);
    assert_eq!(cell.paired.n11, 1);
    assert_eq!(cell.unscored_pairs, 3);
    assert_eq!((cell.only_baseline, cell.only_candidate), (0, 0));
    assert!(cell.flips.is_empty());
    assert_eq!(cmp.unscored_pairs, 3);
    // The metrics see every trial: error_rate 2/4 on both sides.
    let e = cell.metric("error_rate").unwrap();
    assert_eq!(
        (e.baseline, e.candidate, e.delta),
        (Some(0.5), Some(0.5), Some(0.0))
    );
    assert!(render_markdown(&cmp).contains("3 pairs left out because a side errored"));
}

#[test]
fn metric_deltas_cover_every_metric() {
    let (b, c) = runs("clear", 26, 10, 0, 4);
    let cmp = compare_runs(&b, &c);
    let cell = &cmp.cells[0];
    let names: Vec<&str> = cell.metrics.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(names, METRIC_NAMES);
    let acc = cell.metric("accuracy").unwrap();
    assert_eq!(acc.baseline, Some(0.9));
    assert_eq!(acc.candidate, Some(0.65));
    assert!((acc.delta.unwrap() + 0.25).abs() < 1e-12);
    // No checks in these trials: trigger metrics are undefined on both sides.
    let prec = cell.metric("trigger_precision").unwrap();
    assert_eq!(
        (prec.baseline, prec.candidate, prec.delta),
        (None, None, None)
    );
    // No repeats: no pass@k.
    assert_eq!(cell.metric("pass_at_k").unwrap().delta, None);
    assert!(cell.metric("nonsense").is_none());
}

#[test]
fn repeats_pair_separately() {
    let b = vec![
        trial("a", T, "clear", 0, Verdict::Pass),
        trial("a", T, "clear", 1, Verdict::Fail),
    ];
    let c = vec![
        trial("a", T, "clear", 1, Verdict::Pass),
        trial("a", T, "clear", 0, Verdict::Pass),
    ];
    let cell = &compare_runs(&b, &c).cells[0];
    assert_eq!((cell.paired.n11, cell.paired.n01), (1, 1));
    assert_eq!(cell.flips[0].repeat, 1);
    assert_eq!(cell.flips[0].direction, FlipDirection::FailToPass);
}

#[test]
fn tool_choice_is_part_of_the_identity() {
    let mut req = trial("a", T, "clear", 0, Verdict::Fail);
    req.tool_choice = ToolChoice::Required;
    let b = vec![trial("a", T, "clear", 0, Verdict::Pass), req.clone()];
    let mut req_c = req.clone();
    req_c.verdict = Verdict::Pass;
    let c = vec![trial("a", T, "clear", 0, Verdict::Pass), req_c];
    // Default key: two cells.
    let cmp = compare_runs(&b, &c);
    assert_eq!(cmp.cells.len(), 2);
    assert_eq!(cmp.cells[1].cell, format!("{T} × clear × required"));
    // Ignoring tool_choice: one cell, still paired by tool_choice.
    let key = CellKey {
        tool_choice: false,
        ..CellKey::ALL
    };
    let cmp = compare_runs_by(&b, &c, key);
    assert_eq!(cmp.cells.len(), 1);
    let cell = &cmp.cells[0];
    assert_eq!(cell.cell, format!("{T} × clear × auto+required"));
    assert_eq!((cell.paired.n11, cell.paired.n01), (1, 1));
    assert_eq!(cell.flips[0].tool_choice, "required");
}

#[test]
fn compare_by_ignoring_target() {
    let live = "openai:gpt-4o";
    let new = "openai:gpt-5-mini";
    let b: Vec<_> = (0..4)
        .map(|i| trial(&format!("c{i}"), live, "clear", 0, Verdict::Pass))
        .collect();
    let c: Vec<_> = (0..4)
        .map(|i| trial(&format!("c{i}"), new, "clear", 0, v(i != 0)))
        .collect();
    // Matching on target: two one-sided cells, nothing paired.
    let strict = compare_runs(&b, &c);
    assert_eq!(strict.cells.len(), 2);
    assert_eq!(strict.overall.n, 0);
    assert_eq!((strict.only_baseline, strict.only_candidate), (4, 4));
    // Ignoring target: one cell, four pairs, one flip.
    let cmp = compare_runs_by(&b, &c, CellKey::IGNORE_TARGET);
    assert_eq!(cmp.cells.len(), 1);
    let cell = &cmp.cells[0];
    assert_eq!(cell.cell, format!("{live} → {new} × clear × auto"));
    assert_eq!(cell.baseline.as_ref().unwrap().target, live);
    assert_eq!(cell.candidate.as_ref().unwrap().target, new);
    assert_eq!((cell.paired.n, cell.paired.n10), (4, 1));
    assert_eq!(cell.flips[0].case_id, "c0");

    // Two targets merged into one cell on the candidate side: the second is a duplicate.
    let mut c2 = c.clone();
    c2.extend((0..4).map(|i| trial(&format!("c{i}"), "other:model", "clear", 0, Verdict::Pass)));
    let cmp = compare_runs_by(&b, &c2, CellKey::IGNORE_TARGET);
    let cell = &cmp.cells[0];
    assert_eq!(cell.paired.n, 4);
    assert_eq!(cell.duplicates_candidate, 4);
    assert_eq!(cmp.duplicates, 4);
    assert_eq!(
        cell.candidate.as_ref().unwrap().target,
        format!("{new}+other:model")
    );
    assert!(render_terminal(&cmp).contains("4 duplicate trials"));
}

#[test]
fn streamed_trials_are_a_cell_of_their_own_unless_the_stream_is_ignored() {
    let streamed = |case: &str, verdict| TrialRecord {
        stream: true,
        ..trial(case, T, "clear", 0, verdict)
    };
    // c0 passes both ways, c1 fails only when streamed, c2 fails both ways.
    let trials = vec![
        trial("c0", T, "clear", 0, Verdict::Pass),
        trial("c1", T, "clear", 0, Verdict::Pass),
        trial("c2", T, "clear", 0, Verdict::Fail),
        streamed("c0", Verdict::Pass),
        streamed("c1", Verdict::Fail),
        streamed("c2", Verdict::Fail),
    ];
    let cmp = compare_streamed(&trials);
    assert_eq!(cmp.key, CellKey::IGNORE_STREAM);
    assert_eq!(cmp.cells.len(), 1);
    let c = &cmp.cells[0];
    assert_eq!(c.cell, format!("{T} × clear × auto × no stream → stream"));
    assert_eq!(
        (
            c.paired.n,
            c.paired.n11,
            c.paired.n10,
            c.paired.n01,
            c.paired.n00
        ),
        (3, 1, 1, 0, 1)
    );
    assert_eq!(c.baseline.as_ref().unwrap().stream, "");
    assert_eq!(c.candidate.as_ref().unwrap().stream, "stream");
    // Matching on the stream mode (the default), the two halves pair nothing.
    let (plain, stream): (Vec<_>, Vec<_>) = trials.into_iter().partition(|t| !t.stream);
    let apart = compare_runs(&plain, &stream);
    assert_eq!(apart.overall.n, 0);
    assert_eq!((apart.only_baseline, apart.only_candidate), (3, 3));
    assert_eq!(apart.cells[1].cell, format!("{T} × clear × auto × stream"));
    let across = compare_runs_by(&plain, &stream, CellKey::ALL.across_stream());
    assert_eq!(across.overall.n, 3);
    // The key prints as before unless it ignores the stream mode.
    assert_eq!(
        serde_json::to_value(CellKey::ALL).unwrap(),
        serde_json::json!({"target": true, "variant": true, "tool_choice": true})
    );
    assert_eq!(
        serde_json::to_value(CellKey::IGNORE_STREAM).unwrap()["stream"],
        false
    );
}

#[test]
fn compare_variants_pairs_within_a_run() {
    let other = "anthropic:claude-haiku";
    let mut trials = Vec::new();
    for i in 0..6 {
        let id = format!("c{i}");
        // clear: all pass on T; terse: c0, c1 fail on T.
        trials.push(trial(&id, T, "clear", 0, Verdict::Pass));
        trials.push(trial(&id, T, "terse", 0, v(i >= 2)));
        // On the other target, terse fixes c5.
        trials.push(trial(&id, other, "clear", 0, v(i != 5)));
        trials.push(trial(&id, other, "terse", 0, Verdict::Pass));
        // A third variant that must be ignored.
        trials.push(trial(&id, T, "verbose", 0, Verdict::Fail));
    }
    let cmp = compare_variants(&trials, "clear", "terse");
    assert_eq!(cmp.key, CellKey::IGNORE_VARIANT);
    assert_eq!(cmp.cells.len(), 2);
    let t = &cmp.cells[0];
    assert_eq!(t.cell, format!("{T} × clear → terse × auto"));
    assert_eq!(
        (t.paired.n, t.paired.n11, t.paired.n10, t.paired.n01),
        (6, 4, 2, 0)
    );
    let o = &cmp.cells[1];
    assert_eq!(o.cell, format!("{other} × clear → terse × auto"));
    assert_eq!((o.paired.n11, o.paired.n10, o.paired.n01), (5, 0, 1));
    assert_eq!(o.flips[0].case_id, "c5");
    assert_eq!(
        (cmp.only_baseline, cmp.only_candidate, cmp.duplicates),
        (0, 0, 0)
    );
    assert_eq!(
        (cmp.overall.n, cmp.overall.n10, cmp.overall.n01),
        (12, 2, 1)
    );
    // Unknown variant: everything on one side.
    let none = compare_variants(&trials, "clear", "missing");
    assert_eq!(none.overall.n, 0);
    assert_eq!(none.only_baseline, 12);
}

#[test]
fn serialises_to_json() {
    let (b, c) = runs("clear", 26, 10, 0, 4);
    let cmp = compare_runs(&b, &c);
    let j = serde_json::to_value(&cmp).unwrap();
    assert_eq!(j["key"]["target"], true);
    assert_eq!(j["cells"][0]["paired"]["n"], 40);
    assert_eq!(j["cells"][0]["paired"]["n10"], 10);
    assert_eq!(j["cells"][0]["paired"]["significant"], true);
    assert_eq!(j["cells"][0]["flips"][0]["direction"], "pass_to_fail");
    assert_eq!(j["cells"][0]["baseline"]["variant"], "clear");
    assert_eq!(j["cells"][0]["metrics"][0]["metric"], "accuracy");
    assert_eq!(j["overall"]["n"], 40);
    let gate = serde_json::to_value(Gate::regression(5.0)).unwrap();
    assert_eq!(
        gate["fail_on_regression"],
        serde_json::json!([{"metric": "accuracy", "points": 5.0}])
    );
}

#[test]
fn empty_inputs() {
    let cmp = compare_runs(&[], &[]);
    assert!(cmp.cells.is_empty());
    assert_eq!(cmp.overall.n, 0);
    assert_eq!(cmp.overall.p_value, 1.0);
    assert_eq!(cmp.overall.test, PairedTest::None);
    let gate = Gate {
        fail_on_regression: Gate::regression(1.0).fail_on_regression,
        strict: true,
        min_accuracy: Some(0.5),
        min_cases: None,
    };
    // Nothing compared is a failure, with or without gates.
    for g in [gate, Gate::default()] {
        let failures = check_gates(&cmp, &g);
        assert_eq!(
            failures,
            vec![GateFailure::NoPairs {
                only_baseline: 0,
                only_candidate: 0,
                unscored_pairs: 0
            }]
        );
        assert!(
            failures[0]
                .to_string()
                .starts_with("nothing was compared: 0 scored pairs (neither side has a trial)")
        );
    }
    assert!(render_markdown(&cmp).contains("0 pairs: nothing was compared, p undefined"));
    assert!(render_terminal(&cmp).contains("n paired"));
    assert!(render_terminal(&cmp).contains("Test: none, no scored pairs."));
}

#[test]
fn a_comparison_pairing_nothing_fails_last() {
    // Variant `missing` is on neither side: every baseline trial is unpaired.
    let (b, _) = runs("clear", 3, 0, 0, 1);
    let cmp = compare_variants(&b, "clear", "missing");
    let failures = check_gates(&cmp, &Gate::default());
    assert_eq!(failures.len(), 1);
    assert_eq!(
        failures[0].to_string(),
        "nothing was compared: 0 scored pairs (4 baseline trials had no candidate partner); \
         check that both sides ran the same suite, cases, variants, targets and tool_choice modes"
    );
    // Every pair errored on one side: also nothing compared, listed after the others.
    let b = vec![trial("a", T, "clear", 0, Verdict::Pass)];
    let c = vec![trial("a", T, "clear", 0, Verdict::Error)];
    let cmp = compare_runs(&b, &c);
    let gate = Gate {
        min_accuracy: Some(0.5),
        ..Gate::default()
    };
    let failures = check_gates(&cmp, &gate);
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(matches!(
        failures[0],
        GateFailure::MinAccuracy { accuracy: None, .. }
    ));
    assert!(
        failures[1]
            .to_string()
            .contains("0 scored pairs (1 pairs had an errored side)"),
        "{}",
        failures[1]
    );
    let json = serde_json::to_value(&failures[1]).unwrap();
    assert_eq!(json["gate"], "no_pairs");
}

#[test]
fn a_cell_without_scored_pairs_fails_the_regression_gate() {
    // `clear` pairs normally; `terse` is on both sides but every candidate trial errored.
    let (mut b, mut c) = runs("clear", 4, 0, 0, 0);
    for i in 0..3 {
        b.push(trial(&format!("t{i}"), T, "terse", 0, Verdict::Pass));
        c.push(trial(&format!("t{i}"), T, "terse", 0, Verdict::Error));
    }
    let cmp = compare_runs(&b, &c);
    assert!(check_gates(&cmp, &Gate::default()).is_empty());
    let gate = Gate {
        fail_on_regression: Gate::regression(5.0).fail_on_regression,
        ..Gate::default()
    };
    let failures = check_gates(&cmp, &gate);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(
        failures[0].to_string(),
        format!(
            "no scored pairs in {T} × terse × auto (3 pairs had an errored side), so \
             fail_on_regression can not be checked there"
        )
    );
}

#[test]
fn repeats_are_tested_by_case() {
    // Issue 10: 4 cases × 3 repeats; 11 of the 12 pairs went pass → fail (3, 3, 3, 2).
    let mut b = Vec::new();
    let mut c = Vec::new();
    for case in 0..4 {
        for r in 0..3 {
            let id = format!("c{case}");
            b.push(trial(&id, T, "clear", r, Verdict::Pass));
            c.push(trial(&id, T, "clear", r, v(case == 3 && r == 0)));
        }
    }
    let cmp = compare_runs(&b, &c);
    let p = &cmp.cells[0].paired;
    assert_eq!((p.n, p.n11, p.n10), (12, 1, 11));
    assert_eq!((p.cases, p.max_pairs_per_case), (4, 3));
    // Pairs as units (McNemar, 11 vs 0) would give p = 2/2048 < 0.001. With cases as
    // units only the 2 constant sign vectors of 16 are as extreme: p = 0.125.
    assert_eq!(p.test, PairedTest::SignFlipExact);
    assert_eq!(p.p_value, 0.125);
    assert!(!p.significant);
    // Delta -11/12 = -91.7 points; the interval (score::stats) reaches 0 and beyond.
    assert!((p.delta_points.unwrap() + 1100.0 / 12.0).abs() < 1e-9);
    assert_eq!(p.delta_low_points, Some(-100.0));
    assert!((p.delta_high_points.unwrap() - 22.892_311).abs() < 1e-4);
    // Not significant: the gate holds unless strict, and strict names the test.
    let gate = Gate {
        fail_on_regression: Gate::regression(5.0).fail_on_regression,
        ..Gate::default()
    };
    assert!(check_gates(&cmp, &gate).is_empty());
    let strict = Gate {
        strict: true,
        ..gate
    };
    let failures = check_gates(&cmp, &strict);
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0]
            .to_string()
            .contains("(100.0% → 8.3%, sign-flip p = 0.125 over 4 cases)"),
        "{}",
        failures[0]
    );
    // Said in every rendering.
    let term = render_terminal(&cmp);
    assert!(term.contains("sign-flip p"), "{term}");
    assert!(
        term.contains("exact sign-flip test on per-case differences"),
        "{term}"
    );
    assert!(
        term.contains("4 cases, up to 3 scored pairs each"),
        "{term}"
    );
    assert!(term.contains("[-100.0, +22.9]"), "{term}");
    let md = render_markdown(&cmp);
    assert!(md.contains("| sign-flip p |"), "{md}");
    assert!(md.contains("12 pairs from 4 cases"), "{md}");
    let j = serde_json::to_value(&cmp).unwrap();
    assert_eq!(j["cells"][0]["paired"]["test"], "sign_flip_exact");
    assert_eq!(j["cells"][0]["paired"]["cases"], 4);
    assert_eq!(j["overall"]["test"], "sign_flip_exact");
    assert!(j["cells"][0].get("case_diffs").is_none());
}

#[test]
fn one_repeat_is_plain_mcnemar() {
    let (b, c) = runs("clear", 26, 10, 0, 4);
    let cmp = compare_runs(&b, &c);
    let p = &cmp.cells[0].paired;
    assert_eq!(p.test, PairedTest::McnemarExact);
    assert_eq!((p.cases, p.max_pairs_per_case), (40, 1));
    assert_eq!(p.p_value, mcnemar_exact(10, 0));
    // The interval of score::stats' hand example: [-38.9, -8.7] points.
    assert!((p.delta_low_points.unwrap() + 38.903_447).abs() < 1e-4);
    assert!((p.delta_high_points.unwrap() + 8.715_601).abs() < 1e-4);
    let j = serde_json::to_value(&cmp).unwrap();
    assert_eq!(j["overall"]["test"], "mcnemar_exact");
    assert!(render_terminal(&cmp).contains("exact McNemar test"));
}

#[test]
fn the_pooled_test_counts_each_cell_case_once() {
    // Two cells, 3 cases each, 2 repeats; in `clear` every pair of c0..c2 goes
    // pass → fail, in `terse` nothing changes.
    let mut b = Vec::new();
    let mut c = Vec::new();
    for variant in ["clear", "terse"] {
        for case in 0..3 {
            for r in 0..2 {
                let id = format!("c{case}");
                b.push(trial(&id, T, variant, r, Verdict::Pass));
                c.push(trial(&id, T, variant, r, v(variant == "terse")));
            }
        }
    }
    let cmp = compare_runs(&b, &c);
    let o = &cmp.overall;
    assert_eq!((o.n, o.n10, o.cases, o.max_pairs_per_case), (12, 6, 6, 2));
    // Three changed units of -1 each: P(|S| ≥ 3) = 2/8.
    assert_eq!((o.test, o.p_value), (PairedTest::SignFlipExact, 0.25));
    assert_eq!(cmp.cells[0].paired.p_value, 0.25);
    assert_eq!(cmp.cells[1].paired.p_value, 1.0);
}
