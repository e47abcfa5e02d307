//! Whether a candidate wording is accepted: the held-out comparison of the current
//! wording (baseline) and the candidate, read by the search's rules.
//!
//! A candidate is accepted only when, on the held-out cases,
//! - the objective metric moved in its better direction, and its case-level paired test
//!   (the one `compare` reports: exact McNemar or sign-flip for pass/fail metrics, the
//!   paired bootstrap by case for rates and means) gives a p-value at or below this
//!   round's level ([`alpha::level`]); and
//! - no guard metric got worse by more than its tolerance: a better wording that makes
//!   the model call tools it should not, or call them malformed, is not better (Hasan et
//!   al. found augmented descriptions made 16.7% of cases worse while the median rose).
//!   A guard the held-out set does not measure (`task_success` without loop cases) does
//!   not block.

use serde::{Deserialize, Serialize};

use super::alpha;
use crate::compare::{Better, Comparison, MetricDelta};

/// The guards every search keeps unless told otherwise: calls where none was due, and
/// malformed calls; and, for suites with loop cases, the episodes' success.
pub const DEFAULT_GUARDS: &[&str] = &["false_call_rate", "invalid_call_rate", "task_success"];

/// A guard's verdict on one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardCheck {
    /// The guarded metric.
    pub metric: String,
    /// Current wording's value on the held-out cases.
    pub baseline: Option<f64>,
    /// The candidate's.
    pub candidate: Option<f64>,
    /// How much worse the candidate is, in the metric's unit (negative or zero: not
    /// worse); `None` when the held-out set does not measure it.
    pub worsening: Option<f64>,
    /// Whether it blocks the candidate.
    pub blocks: bool,
}

/// The decision on one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Whether the candidate replaces the current wording.
    pub accepted: bool,
    /// The objective metric.
    pub objective: String,
    /// Candidate minus current on the objective, in its unit (a fraction for rates).
    pub delta: Option<f64>,
    /// The paired test's two-sided p-value.
    pub p_value: Option<f64>,
    /// The level this round tests at.
    pub level: f64,
    /// Held-out cases both wordings were scored on for the objective.
    pub cases: u64,
    /// Every guard's check.
    pub guards: Vec<GuardCheck>,
    /// One sentence saying why, with the figures.
    pub why: String,
}

/// Decide on a candidate from `held_out`, the comparison of the current wording
/// (baseline side) with the candidate on the held-out cases, in round `round` of a
/// search at `alpha`. `tolerance` is how much worse a guard may get, in its unit.
pub fn decide(
    held_out: &Comparison,
    objective: &str,
    guards: &[&str],
    tolerance: f64,
    alpha: f64,
    round: u32,
) -> Decision {
    let level = alpha::level(alpha, round);
    let metric = |name: &str| -> Option<&MetricDelta> {
        held_out.overall_metrics.iter().find(|m| m.metric == name)
    };
    let guards: Vec<GuardCheck> = guards
        .iter()
        .filter(|g| **g != objective)
        .map(|g| {
            let m = metric(g);
            let worsening = m.and_then(|m| m.delta.map(|d| m.better.worsening(d)));
            GuardCheck {
                metric: g.to_string(),
                baseline: m.and_then(|m| m.baseline),
                candidate: m.and_then(|m| m.candidate),
                worsening,
                blocks: worsening.is_some_and(|w| w > tolerance),
            }
        })
        .collect();
    let m = metric(objective);
    let delta = m.and_then(|m| m.delta);
    let test = m.and_then(|m| m.test.as_ref());
    let p_value = test.map(|t| t.p_value);
    let cases = test.map_or(0, |t| t.cases);
    let better = m.map_or(Better::Higher, |m| m.better);
    let gain = delta.map(|d| -better.worsening(d));
    let blocking: Vec<&GuardCheck> = guards.iter().filter(|g| g.blocks).collect();
    let (accepted, why) = match (gain, p_value) {
        _ if cases == 0 => (
            false,
            format!("no held-out case measured `{objective}` under both wordings"),
        ),
        (Some(g), _) if g <= 0.0 => (
            false,
            format!(
                "`{objective}` did not improve on the held-out cases ({})",
                show(delta)
            ),
        ),
        (Some(_), Some(p)) if !alpha::significant(p, alpha, round) => (
            false,
            format!(
                "`{objective}` improved by {} on {cases} held-out cases, but p = {p:.4} is above this round's level {level:.4}",
                show(delta)
            ),
        ),
        (Some(_), Some(p)) if !blocking.is_empty() => (
            false,
            format!(
                "`{objective}` improved by {} (p = {p:.4}), but {} got worse",
                show(delta),
                blocking
                    .iter()
                    .map(|g| format!("`{}` ({})", g.metric, show(g.worsening)))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ),
        (Some(_), Some(p)) => (
            true,
            format!(
                "`{objective}` improved by {} on {cases} held-out cases (p = {p:.4} ≤ {level:.4}) and no guard got worse",
                show(delta)
            ),
        ),
        _ => (
            false,
            format!("`{objective}` has no paired test on the held-out cases"),
        ),
    };
    Decision {
        accepted,
        objective: objective.to_string(),
        delta,
        p_value,
        level,
        cases,
        guards,
        why,
    }
}

/// A delta for a sentence: signed, to four decimals (`+0.2500`), or `-` when undefined.
fn show(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.4}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare_variants;
    use crate::judge::calls::TrialChecks;
    use crate::provider::{Response, ToolCall, ToolChoice};
    use crate::score::record::{TrialRecord, Verdict};
    use crate::suite::CaseKind;

    /// One held-out trial of `variant`.
    fn trial(case: &str, kind: CaseKind, variant: &str, pass: bool, called: bool) -> TrialRecord {
        let mut response = Response::default();
        if called {
            response.tool_calls.push(ToolCall {
                id: Some("c1".into()),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
            });
        }
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind,
            tags: vec![],
            target: "scripted:oracle".into(),
            variant: variant.into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: vec![],
            response: Some(response),
            checks: Some(TrialChecks {
                kind,
                called,
                calls: vec![],
                expected_tools: vec![],
                right_tools: None,
                args_matched: 0,
                args_expected: 0,
                behaviour: None,
            }),
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    /// `n` should-call cases, of which the current wording passes the first `base` and
    /// the candidate the first `cand`, and `quiet` should-not-call cases the current
    /// wording passes and the candidate fails by calling a tool in the first `false_calls`.
    fn held_out(
        n: usize,
        base: usize,
        cand: usize,
        quiet: usize,
        false_calls: usize,
    ) -> Comparison {
        let mut trials = Vec::new();
        for i in 0..n {
            let id = format!("call-{i:02}");
            trials.push(trial(
                &id,
                CaseKind::ShouldCall,
                "current",
                i < base,
                i < base,
            ));
            trials.push(trial(
                &id,
                CaseKind::ShouldCall,
                "candidate",
                i < cand,
                i < cand,
            ));
        }
        for i in 0..quiet {
            let id = format!("quiet-{i:02}");
            trials.push(trial(&id, CaseKind::ShouldNotCall, "current", true, false));
            let called = i < false_calls;
            trials.push(trial(
                &id,
                CaseKind::ShouldNotCall,
                "candidate",
                !called,
                called,
            ));
        }
        compare_variants(&trials, "current", "candidate")
    }

    #[test]
    fn a_significant_gain_with_quiet_guards_is_accepted() {
        // 10 fail → pass flips, none the other way: McNemar p = 2/2^10 ≈ 0.002.
        let d = decide(
            &held_out(20, 8, 18, 5, 0),
            "accuracy",
            DEFAULT_GUARDS,
            0.0,
            0.05,
            1,
        );
        assert!(d.accepted, "{}", d.why);
        assert!(d.p_value.unwrap() < 0.0025, "{:?}", d.p_value);
        assert_eq!(d.level, 0.025);
        assert_eq!(d.cases, 25);
        assert!(d.why.contains("no guard got worse"), "{}", d.why);
        let g = &d.guards[0];
        assert_eq!((g.metric.as_str(), g.blocks), ("false_call_rate", false));
        assert!(
            d.guards
                .iter()
                .any(|g| g.metric == "task_success" && g.worsening.is_none()),
            "a guard the set does not measure is listed, unmeasured: {:?}",
            d.guards
        );
    }

    #[test]
    fn the_same_gain_is_not_enough_in_a_later_round() {
        // 5 flips: p = 2/2^5 = 0.0625 > 0.025; even 6 (p = 0.03125) fails round 1's
        // level, and 7 (p ≈ 0.0156) passes round 1 but not round 2 (0.0125).
        let c = held_out(20, 8, 15, 5, 0);
        assert!(decide(&c, "accuracy", &[], 0.0, 0.05, 1).accepted);
        let d = decide(&c, "accuracy", &[], 0.0, 0.05, 2);
        assert!(!d.accepted);
        assert!(
            d.why.contains("above this round's level 0.0125"),
            "{}",
            d.why
        );
    }

    #[test]
    fn a_gain_bought_with_false_calls_is_refused() {
        let d = decide(
            &held_out(20, 8, 18, 5, 1),
            "accuracy",
            DEFAULT_GUARDS,
            0.0,
            0.05,
            1,
        );
        assert!(!d.accepted, "{}", d.why);
        assert!(
            d.why.contains("`false_call_rate` (+0.2000) got worse"),
            "{}",
            d.why
        );
        // A tolerance of a quarter lets one false call in five through.
        let d = decide(
            &held_out(20, 8, 18, 5, 1),
            "accuracy",
            DEFAULT_GUARDS,
            0.25,
            0.05,
            1,
        );
        assert!(d.accepted, "{}", d.why);
    }

    #[test]
    fn no_gain_or_nothing_compared_is_never_accepted() {
        let d = decide(&held_out(20, 8, 8, 0, 0), "accuracy", &[], 0.0, 0.05, 1);
        assert!(!d.accepted);
        assert!(d.why.contains("did not improve"), "{}", d.why);
        let worse = decide(&held_out(20, 18, 8, 0, 0), "accuracy", &[], 0.0, 0.05, 1);
        assert!(!worse.accepted, "a significant drop is not a gain");
        let empty = compare_variants(&[], "current", "candidate");
        let d = decide(&empty, "accuracy", &[], 0.0, 0.05, 1);
        assert!(!d.accepted);
        assert_eq!(
            d.why,
            "no held-out case measured `accuracy` under both wordings"
        );
    }
}
