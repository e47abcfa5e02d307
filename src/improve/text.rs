//! The terminal summary of a search (`toolgauge improve`): one line per round with the
//! current wording's scores, the best candidate's and the held-out decision, then the
//! accepted wordings, the definition tokens' change, the cost and why the search stopped.
//! Plain text, no colours, so it reads the same in a log file; [`super::html`] shares its
//! number formatting so the page and the terminal show the same figures.

use std::fmt::Write as _;

use super::report::{CandidateReport, ImproveReport, RoundReport, Score};

/// Characters of an accepted description shown before it is cut with `…`.
const DESCRIPTION_CHARS: usize = 100;

/// How a report's objective values read: as percentages when every value and interval
/// end lies in [0, 1] (all the default objectives are rates), otherwise as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// Fractions shown as percentages, deltas in percentage points.
    Percent,
    /// Any other unit, shown as it is.
    Plain,
}

impl Scale {
    /// The scale of every objective figure in `report`. A report with no figure at all
    /// reads as percent, the default objectives' unit.
    pub(crate) fn of(report: &ImproveReport) -> Scale {
        let all_fractions = report
            .rounds
            .iter()
            .flat_map(round_scores)
            .flat_map(|s| [s.value, s.low, s.high])
            .flatten()
            .all(|v| (0.0..=1.0).contains(&v));
        if all_fractions {
            Scale::Percent
        } else {
            Scale::Plain
        }
    }

    /// A value: `62.5%` or `0.6250`; `–` when undefined.
    pub(crate) fn value(self, v: Option<f64>) -> String {
        match (self, v) {
            (_, None) => "–".to_string(),
            (Scale::Percent, Some(v)) => format!("{:.1}%", v * 100.0),
            (Scale::Plain, Some(v)) => format!("{v:.4}"),
        }
    }

    /// A signed difference: `+15.0 pts` or `+0.1500`; `–` when undefined.
    pub(crate) fn delta(self, d: Option<f64>) -> String {
        match (self, d) {
            (_, None) => "–".to_string(),
            (Scale::Percent, Some(d)) => format!("{:+.1} pts", d * 100.0),
            (Scale::Plain, Some(d)) => format!("{d:+.4}"),
        }
    }
}

/// Every score a round reports: the current wording's two, each candidate's training
/// score and the best candidate's held-out score.
fn round_scores(r: &RoundReport) -> impl Iterator<Item = &Score> {
    [&r.current_training, &r.current_held_out]
        .into_iter()
        .chain(r.candidates.iter().map(|c| &c.training))
        .chain(r.best_held_out.as_ref())
}

/// The round's candidate tested on the held-out cases, if any (an index out of range,
/// from a hand-edited file, reads as none rather than panicking).
pub(crate) fn best_candidate(r: &RoundReport) -> Option<&CandidateReport> {
    r.best.and_then(|i| r.candidates.get(i))
}

/// A p-value against the round's level: `p = 0.0156 ≤ 0.0250` or `p = 0.0313 > 0.0250`,
/// so the reader sees which side of the line it fell without doing the comparison.
pub(crate) fn p_against_level(p: Option<f64>, level: f64) -> String {
    match p {
        Some(p) if p <= level => format!("p = {p:.4} ≤ {level:.4}"),
        Some(p) => format!("p = {p:.4} > {level:.4}"),
        None => format!("no p-value (level {level:.4})"),
    }
}

/// Why nothing was accepted: the last held-out decision's sentence, or, when no round
/// got that far, why the search stopped.
pub(crate) fn no_acceptance(report: &ImproveReport) -> String {
    let last_why = report
        .rounds
        .iter()
        .rev()
        .find_map(|r| r.decision.as_ref().map(|d| (r.round, d.why.as_str())));
    match last_why {
        Some((round, why)) => format!("No wording was accepted: {why} (round {round})."),
        None => format!(
            "No wording was accepted: no round reached a held-out decision ({}).",
            report.stop
        ),
    }
}

/// At most `n` characters of `s` on one line, with `…` when cut.
fn one_line(s: &str, n: usize) -> String {
    // Descriptions may span lines; the summary keeps one line per tool.
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// One round's line.
fn round_line(r: &RoundReport, scale: Scale) -> String {
    let mut line = format!(
        "round {}: current {} train / {} held-out; ",
        r.round,
        scale.value(r.current_training.value),
        scale.value(r.current_held_out.value),
    );
    match best_candidate(r) {
        Some(best) => {
            let _ = write!(
                line,
                "best {} {} train",
                best.variant,
                scale.value(best.training.value)
            );
            match &r.decision {
                Some(d) => {
                    let _ = write!(
                        line,
                        " → held-out {} ({}, {}) {}: {}",
                        scale.value(r.best_held_out.as_ref().and_then(|s| s.value)),
                        scale.delta(d.delta),
                        p_against_level(d.p_value, d.level),
                        if r.accepted { "accepted" } else { "rejected" },
                        d.why
                    );
                }
                None => match &r.untested {
                    Some(why) => {
                        let _ = write!(line, ", not tested on the held-out cases: {why}");
                    }
                    None => line.push_str(", not tested on the held-out cases"),
                },
            }
        }
        None => {
            line.push_str("no usable candidate");
            // Why: the first dropped candidate's first problem stands for the rest.
            let dropped: Vec<_> = r
                .candidates
                .iter()
                .filter(|c| !c.dropped.is_empty())
                .collect();
            if let Some(c) = dropped.first() {
                let _ = write!(line, " ({}: {}", c.variant, c.dropped[0]);
                if dropped.len() > 1 {
                    let _ = write!(line, "; {} more dropped", dropped.len() - 1);
                }
                line.push(')');
            }
        }
    }
    if !r.proposer.errors.is_empty() {
        let _ = write!(
            line,
            "; proposer errors ({} of {} requests): {}",
            r.proposer.errors.len(),
            r.proposer.attempts,
            r.proposer.errors.join("; ")
        );
    }
    line
}

/// The terminal summary of a search: one line per round, the accepted wordings (each
/// changed description cut to about 100 characters), the definition tokens before and
/// after, the cost and the stop reason.
pub fn summary(report: &ImproveReport) -> String {
    let scale = Scale::of(report);
    let mut out = format!(
        "improve {}: target {}, proposer {}, objective {}, alpha {}; {} training / {} held-out cases\n",
        report.suite,
        report.target,
        report.proposer,
        report.objective,
        report.alpha,
        report.sets.training.len(),
        report.sets.held_out.len(),
    );
    for r in &report.rounds {
        out.push_str(&round_line(r, scale));
        out.push('\n');
    }
    if report.accepted.is_empty() {
        out.push_str(&no_acceptance(report));
        out.push('\n');
    }
    for a in &report.accepted {
        let _ = writeln!(
            out,
            "accepted {} (round {}, {}, p = {:.4}):",
            a.variant,
            a.round,
            scale.delta(Some(a.delta)),
            a.p_value
        );
        for (tool, text) in &a.tools {
            let _ = writeln!(
                out,
                "  {tool}: {}",
                one_line(&text.description, DESCRIPTION_CHARS)
            );
        }
    }
    let t = &report.definition_tokens;
    let change = t.r#final as i128 - t.original as i128;
    let _ = writeln!(
        out,
        "final wording {}: definition tokens {} → {} ({change:+}); cost ${:.4}",
        report.final_variant, t.original, t.r#final, report.cost_usd
    );
    let _ = writeln!(out, "stopped: {}", report.stop);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use indexmap::IndexMap;

    use super::*;
    use crate::improve::decide::{Decision, GuardCheck};
    use crate::improve::report::{
        Accepted, IMPROVE_FORMAT, ProposerReport, Sets, TokensBeforeAfter, ToolText,
    };

    /// A rate with a rough interval, over `n` trials.
    fn score(v: f64, n: u64) -> Score {
        Score {
            value: Some(v),
            low: Some((v - 0.2).max(0.0)),
            high: Some((v + 0.2).min(1.0)),
            n,
        }
    }

    fn tool(description: &str, params: &[(&str, &str)]) -> ToolText {
        ToolText {
            description: description.into(),
            parameters: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn candidate(
        variant: &str,
        rationale: &str,
        tools: &[(&str, ToolText)],
        training: f64,
        tokens: u64,
    ) -> CandidateReport {
        CandidateReport {
            variant: variant.into(),
            rationale: rationale.into(),
            tools: tools
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            dropped: vec![],
            training: score(training, 16),
            definition_tokens: tokens,
        }
    }

    /// The accepted weather wording of round 1.
    pub(crate) fn better_weather() -> ToolText {
        tool(
            "Get the weather forecast for a city.",
            &[
                ("city", "The city name, e.g. Paris."),
                ("days", "Days ahead."),
            ],
        )
    }

    /// A search of three rounds: round 1 accepts `r1c2`, round 2's best is blocked by the
    /// false-call guard, round 3's proposer answers are unreadable. Hostile text sits in
    /// a description and a rationale.
    pub(crate) fn sample() -> ImproveReport {
        let mut original = IndexMap::new();
        original.insert(
            "get_weather".to_string(),
            tool("Get the weather.", &[("city", "The city.")]),
        );
        original.insert(
            "search_docs".to_string(),
            tool(
                "Search the docs <script>alert(1)</script>",
                &[("query", "Query.")],
            ),
        );
        let accepted_tools: IndexMap<String, ToolText> =
            [("get_weather".to_string(), better_weather())].into();
        let round1 = RoundReport {
            round: 1,
            current: "base".into(),
            current_training: score(0.625, 16),
            current_held_out: score(0.55, 20),
            proposer: ProposerReport {
                attempts: 1,
                errors: vec![],
                cost_usd: Some(0.02),
            },
            candidates: vec![
                candidate(
                    "r1c1",
                    "shorter",
                    &[("get_weather", tool("Weather.", &[("city", "The city.")]))],
                    0.6875,
                    290,
                ),
                candidate(
                    "r1c2",
                    "<script>alert('r')</script> says what it returns",
                    &[("get_weather", better_weather())],
                    0.75,
                    320,
                ),
            ],
            best: Some(1),
            best_held_out: Some(score(0.70, 20)),
            decision: Some(Decision {
                accepted: true,
                objective: "accuracy".into(),
                delta: Some(0.15),
                p_value: Some(0.015625),
                level: 0.025,
                cases: 20,
                guards: vec![GuardCheck {
                    metric: "false_call_rate".into(),
                    baseline: Some(0.0),
                    candidate: Some(0.0),
                    worsening: Some(0.0),
                    blocks: false,
                }],
                why: "`accuracy` improved by +0.1500 on 20 held-out cases (p = 0.0156 ≤ 0.0250) and no guard got worse".into(),
            }),
            untested: None,
            accepted: true,
            cost_so_far_usd: 0.12,
        };
        let round2 = RoundReport {
            round: 2,
            current: "r1c2".into(),
            current_training: score(0.75, 16),
            current_held_out: score(0.70, 20),
            proposer: ProposerReport {
                attempts: 1,
                errors: vec![],
                cost_usd: Some(0.02),
            },
            candidates: vec![candidate(
                "r2c1",
                "name the units",
                &[(
                    "get_weather",
                    tool(
                        "Get the weather forecast for a city, in Celsius.",
                        &[("city", "The city name.")],
                    ),
                )],
                0.8125,
                330,
            )],
            best: Some(0),
            best_held_out: Some(score(0.80, 20)),
            decision: Some(Decision {
                accepted: false,
                objective: "accuracy".into(),
                delta: Some(0.10),
                p_value: Some(0.0078125),
                level: 0.0125,
                cases: 20,
                guards: vec![
                    GuardCheck {
                        metric: "false_call_rate".into(),
                        baseline: Some(0.0),
                        candidate: Some(0.2),
                        worsening: Some(0.2),
                        blocks: true,
                    },
                    GuardCheck {
                        metric: "invalid_call_rate".into(),
                        baseline: Some(0.0),
                        candidate: Some(0.0),
                        worsening: Some(0.0),
                        blocks: false,
                    },
                ],
                why: "`accuracy` improved by +0.1000 (p = 0.0078), but `false_call_rate` (+0.2000) got worse".into(),
            }),
            untested: None,
            accepted: false,
            cost_so_far_usd: 0.27,
        };
        let round3 = RoundReport {
            round: 3,
            current: "r1c2".into(),
            current_training: score(0.75, 16),
            current_held_out: score(0.70, 20),
            proposer: ProposerReport {
                attempts: 2,
                errors: vec![
                    "not JSON: expected value at line 1 column 1".into(),
                    "no `tools` key".into(),
                ],
                cost_usd: Some(0.03),
            },
            candidates: vec![],
            best: None,
            best_held_out: None,
            decision: None,
            untested: None,
            accepted: false,
            cost_so_far_usd: 0.4213,
        };
        let mut final_wording = original.clone();
        final_wording.insert("get_weather".into(), better_weather());
        ImproveReport {
            improve_format: IMPROVE_FORMAT,
            toolgauge_version: "0.0.0-test".into(),
            suite: "weather".into(),
            suite_path: "suites/weather.yaml".into(),
            target: "openai:gpt-test".into(),
            proposer: "anthropic:proposer-test".into(),
            base_variant: "base".into(),
            objective: "accuracy".into(),
            guards: vec!["false_call_rate".into(), "invalid_call_rate".into()],
            alpha: 0.05,
            seed: 7,
            sets: Sets {
                training: (0..16).map(|i| format!("t{i:02}")).collect(),
                held_out: (0..20).map(|i| format!("h{i:02}")).collect(),
                source: "split".into(),
            },
            original,
            rounds: vec![round1, round2, round3],
            accepted: vec![Accepted {
                round: 1,
                variant: "r1c2".into(),
                tools: accepted_tools,
                p_value: 0.015625,
                delta: 0.15,
            }],
            final_wording,
            final_variant: "r1c2".into(),
            stop: "the proposer gave no usable candidate in round 3".into(),
            cost_usd: 0.4213,
            definition_tokens: TokensBeforeAfter {
                original: 300,
                r#final: 320,
            },
        }
    }

    #[test]
    fn one_line_per_round_with_its_figures() {
        let s = summary(&sample());
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "improve weather: target openai:gpt-test, proposer anthropic:proposer-test, objective accuracy, alpha 0.05; 16 training / 20 held-out cases"
        );
        assert_eq!(
            lines[1],
            "round 1: current 62.5% train / 55.0% held-out; best r1c2 75.0% train → held-out 70.0% (+15.0 pts, p = 0.0156 ≤ 0.0250) accepted: `accuracy` improved by +0.1500 on 20 held-out cases (p = 0.0156 ≤ 0.0250) and no guard got worse"
        );
        assert_eq!(
            lines[2],
            "round 2: current 75.0% train / 70.0% held-out; best r2c1 81.2% train → held-out 80.0% (+10.0 pts, p = 0.0078 ≤ 0.0125) rejected: `accuracy` improved by +0.1000 (p = 0.0078), but `false_call_rate` (+0.2000) got worse"
        );
        assert_eq!(
            lines[3],
            "round 3: current 75.0% train / 70.0% held-out; no usable candidate; proposer errors (2 of 2 requests): not JSON: expected value at line 1 column 1; no `tools` key"
        );
        assert_eq!(lines[4], "accepted r1c2 (round 1, +15.0 pts, p = 0.0156):");
        assert_eq!(
            lines[5],
            "  get_weather: Get the weather forecast for a city."
        );
        assert_eq!(
            lines[6],
            "final wording r1c2: definition tokens 300 → 320 (+20); cost $0.4213"
        );
        assert_eq!(
            lines[7],
            "stopped: the proposer gave no usable candidate in round 3"
        );
        assert_eq!(lines.len(), 8, "{s}");
        assert!(!s.contains('\x1b'), "no colours");
    }

    #[test]
    fn nothing_accepted_says_why_and_long_descriptions_are_cut() {
        let mut r = sample();
        r.accepted.clear();
        r.rounds[0].accepted = false;
        let s = summary(&r);
        assert!(
            s.contains("No wording was accepted: `accuracy` improved by +0.1000 (p = 0.0078), but `false_call_rate` (+0.2000) got worse (round 2).\n"),
            "{s}"
        );
        r.rounds.clear();
        assert!(
            summary(&r).contains("No wording was accepted: no round reached a held-out decision (the proposer gave no usable candidate in round 3).")
        );
        let long = format!("{}\nand more", "word ".repeat(40));
        let cut = one_line(&long, DESCRIPTION_CHARS);
        assert_eq!(cut.chars().count(), DESCRIPTION_CHARS + 1);
        assert!(cut.ends_with('…') && !cut.contains('\n'), "{cut}");
    }

    #[test]
    fn values_outside_zero_one_are_plain_numbers() {
        let mut r = sample();
        assert_eq!(Scale::of(&r), Scale::Percent);
        r.rounds[1].candidates[0].training.value = Some(3.5);
        let scale = Scale::of(&r);
        assert_eq!(scale, Scale::Plain);
        assert_eq!(scale.value(Some(0.625)), "0.6250");
        assert_eq!(scale.delta(Some(0.15)), "+0.1500");
        assert_eq!(Scale::Percent.delta(Some(-0.05)), "-5.0 pts");
        assert_eq!(p_against_level(Some(0.03125), 0.025), "p = 0.0312 > 0.0250");
    }
}
