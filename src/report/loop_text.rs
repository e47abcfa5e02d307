//! Loop metrics in words, shared by the terminal block and the Markdown "Tool loops"
//! table so both say the same thing the same way (`2.0 (max 3)`, `answered 2,
//! max_rounds 1`, `33% (not_found 0/1, rate_limit 1/2)`).

use super::format::cut_end;
use crate::score::loops::{LoopMetrics, PerTask, RoundTokens, StopCounts};
use crate::score::stats::Rate;

/// Rounds of the input-token series written out before `…`.
pub const SERIES_ROUNDS: usize = 6;

/// Error kinds named after the recovery rate before `…` (summary.json has them all).
pub const RECOVERY_KINDS: usize = 4;

/// Characters of an error kind's name shown (an edited journal can hold any text).
pub const KIND_CHARS: usize = 40;

/// A percentage with no decimals, or `none` when undefined.
pub fn pct(v: Option<f64>, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |x| format!("{:.0}%", x * 100.0))
}

/// A per-task count: `2.0 (max 3)`; `none` when no trial was scored.
pub fn per_task(p: &PerTask, none: &str) -> String {
    match (p.mean, p.max) {
        (Some(mean), Some(max)) => format!("{mean:.1} (max {max})"),
        _ => none.to_string(),
    }
}

/// The stop reasons that occurred with their counts: `answered 2, max_rounds 1`.
pub fn stops(s: &StopCounts, none: &str) -> String {
    let parts: Vec<String> = s
        .named()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if parts.is_empty() {
        none.to_string()
    } else {
        parts.join(", ")
    }
}

/// `recovered/received` of a rate.
fn fraction(r: &Rate) -> String {
    format!("{}/{}", r.num, r.den)
}

/// The recovery rate with its kinds: `33% (not_found 0/1, rate_limit 1/2)`; `none`
/// when no error was received. `kind` rewrites a kind's name for the output (escaping).
pub fn recovery(l: &LoopMetrics, none: &str, kind: impl Fn(&str) -> String) -> String {
    if l.recovery.den == 0 {
        return none.to_string();
    }
    let mut kinds: Vec<String> = l
        .recovery_by_kind
        .iter()
        .take(RECOVERY_KINDS)
        .map(|(k, r)| format!("{} {}", kind(&cut_end(k, KIND_CHARS)), fraction(&r.all)))
        .collect();
    if l.recovery_by_kind.len() > RECOVERY_KINDS {
        kinds.push("…".into());
    }
    format!("{} ({})", pct(l.recovery.value, none), kinds.join(", "))
}

/// Trials with duplicate side effects: `33% (2)` (the rate of judged trials with one
/// and the number in all); `none` when no trial was judged.
pub fn duplicates(l: &LoopMetrics, none: &str) -> String {
    match l.duplicate_side_effect_rate.value {
        Some(v) => format!("{:.0}% ({})", v * 100.0, l.duplicate_side_effects),
        None => none.to_string(),
    }
}

/// The input-token series: `100 → 175 → 220`, cut after [`SERIES_ROUNDS`] rounds;
/// `none` when no round had a usage. A round missing from the series shows as `?`.
pub fn tokens_per_round(series: &[RoundTokens], arrow: &str, none: &str) -> String {
    if series.is_empty() {
        return none.to_string();
    }
    let mut parts = Vec::new();
    let mut expected = 1;
    for r in series {
        if parts.len() >= SERIES_ROUNDS {
            parts.push("…".to_string());
            break;
        }
        if r.round != expected {
            parts.push("?".to_string());
        }
        parts.push(format!("{:.0}", r.mean));
        expected = r.round.saturating_add(1);
    }
    parts.join(arrow)
}

/// pass^k at the largest k with cases: `pass^3 0%`; `none` without repeats.
pub fn pass_hat(l: &LoopMetrics, none: &str) -> String {
    l.pass_k
        .iter()
        .rev()
        .find_map(|p| {
            p.pass_hat_k
                .map(|v| format!("pass^{} {:.0}%", p.k, v * 100.0))
        })
        .unwrap_or_else(|| none.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::loops::PassK;

    fn rt(round: u32, mean: f64) -> RoundTokens {
        RoundTokens {
            round,
            trials: 1,
            mean,
        }
    }

    #[test]
    fn texts_of_loop_metrics() {
        let p = PerTask {
            mean: Some(2.0),
            p50: Some(2.0),
            p95: Some(3.0),
            max: Some(3),
        };
        assert_eq!(per_task(&p, "-"), "2.0 (max 3)");
        assert_eq!(per_task(&PerTask::default(), "-"), "-");
        let s = StopCounts {
            answered: 2,
            max_tool_calls: 1,
            ..StopCounts::default()
        };
        assert_eq!(stops(&s, "-"), "answered 2, max_tool_calls 1");
        assert_eq!(stops(&StopCounts::default(), "–"), "–");
        assert_eq!(
            tokens_per_round(&[rt(1, 100.0), rt(2, 175.4), rt(4, 220.0)], " → ", "-"),
            "100 → 175 → ? → 220"
        );
        let long: Vec<RoundTokens> = (1..=9).map(|r| rt(r, f64::from(r))).collect();
        assert_eq!(tokens_per_round(&long, ">", "-"), "1>2>3>4>5>6>…");
        assert_eq!(tokens_per_round(&[], ">", "-"), "-");
        assert_eq!(pct(Some(1.0 / 3.0), "-"), "33%");
    }

    #[test]
    fn recovery_duplicates_and_pass_hat_in_words() {
        let mut m = LoopMetrics {
            trials: 3,
            scored: 3,
            errors: 0,
            passed: 1,
            task_success: Rate::new(1, 3),
            rounds: PerTask::default(),
            tool_calls: PerTask::default(),
            stop: StopCounts::default(),
            recovery: Rate::new(1, 3),
            recovery_by_kind: Default::default(),
            duplicate_side_effect_rate: Rate::new(1, 3),
            duplicate_side_effects: 2,
            data_flow_accuracy: Rate::new(0, 0),
            grounded_answer_rate: Rate::new(0, 0),
            input_tokens_per_round: vec![],
            input_tokens_per_round_mean: None,
            time: Default::default(),
            pass_k: vec![],
        };
        let rec = |all: Rate| crate::score::loops::Recovery {
            all,
            injected: all,
            not_injected: Rate::new(0, 0),
        };
        m.recovery_by_kind
            .insert("rate_limit".into(), rec(Rate::new(1, 2)));
        m.recovery_by_kind
            .insert("not_found".into(), rec(Rate::new(0, 1)));
        assert_eq!(
            recovery(&m, "-", |k| k.to_uppercase()),
            "33% (NOT_FOUND 0/1, RATE_LIMIT 1/2)"
        );
        assert_eq!(duplicates(&m, "-"), "33% (2)");
        assert_eq!(pass_hat(&m, "-"), "-");
        m.pass_k = vec![
            PassK {
                k: 1,
                cases: 1,
                pass_at_k: Some(1.0),
                pass_hat_k: Some(1.0),
            },
            PassK {
                k: 2,
                cases: 0,
                pass_at_k: None,
                pass_hat_k: None,
            },
        ];
        // k = 2 has no case: the largest k with a value is shown.
        assert_eq!(pass_hat(&m, "-"), "pass^1 100%");
        // A kind of any length (an edited journal) is cut.
        let long = "k".repeat(100);
        m.recovery_by_kind.insert(long, rec(Rate::new(1, 1)));
        let text = recovery(&m, "-", str::to_string);
        assert!(text.contains(&format!("{}… 1/1", "k".repeat(39))), "{text}");
        m.recovery = Rate::new(0, 0);
        assert_eq!(recovery(&m, "-", str::to_string), "-");
    }
}
