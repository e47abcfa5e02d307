//! The behaviour metrics (`score::behaviour`) in every text format: the terminal block,
//! the Markdown section, `behaviour.csv`, the `trials.csv` columns and the JUnit
//! properties, so each says the same figures the same way. Every part is empty when no
//! trial of the run expects a behaviour, so reports of other suites are unchanged.

use std::fmt::Write as _;

use super::summary::{CellSummary, Summary};
use crate::behaviour::{Behaviour, ObservedBy};
use crate::score::TrialRecord;
use crate::score::behaviour::{BehaviourMetrics, MacroF1};
use crate::score::stats::Rate;

/// Macro-F1 with its bootstrap interval: `0.63 [0.29–0.90]`; `none` when undefined.
pub fn macro_f1(m: &MacroF1, dash: &str, none: &str) -> String {
    match (m.value, m.low, m.high) {
        (Some(v), Some(lo), Some(hi)) => format!("{v:.2} [{lo:.2}{dash}{hi:.2}]"),
        (Some(v), _, _) => format!("{v:.2}"),
        _ => none.to_string(),
    }
}

/// A rate with its Wilson interval and counts: `25% [5–70] (1/4)`; `none` when its
/// denominator is 0.
pub fn rate(r: &Rate, dash: &str, none: &str) -> String {
    match (r.value, r.low, r.high) {
        (Some(v), Some(lo), Some(hi)) => format!(
            "{:.0}% [{:.0}{dash}{:.0}] ({}/{})",
            v * 100.0,
            lo * 100.0,
            hi * 100.0,
            r.num,
            r.den
        ),
        _ => none.to_string(),
    }
}

/// The recall of each expected behaviour as counts: `tool_call 3/4, cannot_answer 2/4`.
pub fn recalls(m: &BehaviourMetrics) -> String {
    m.scores
        .iter()
        .filter(|(_, s)| s.support > 0)
        .map(|(b, s)| format!("{} {}/{}", b.label(), s.correct, s.support))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who decided the observed behaviours: `4 calls, 8 classifier, 0 judge`.
pub fn decided(m: &BehaviourMetrics) -> String {
    let d = &m.decided_by;
    format!(
        "{} call, {} classifier, {} judge",
        d.call, d.classifier, d.judge
    )
}

/// The cells with behaviour metrics, labelled for a text line (`variant × mode` when the
/// run has one target), then `overall` when there are several.
pub fn groups(s: &Summary) -> Vec<(String, &BehaviourMetrics)> {
    let one_target = s
        .cells
        .iter()
        .all(|c| Some(&c.target) == s.cells.first().map(|f| &f.target));
    let mut out: Vec<(String, &BehaviourMetrics)> = s
        .cells
        .iter()
        .filter_map(|c| {
            let b = c.metrics.behaviour.as_ref()?;
            let mode = super::summary::cell_mode(c);
            let label = if one_target {
                format!("{} × {mode}", c.variant)
            } else {
                format!("{} × {} × {mode}", c.target, c.variant)
            };
            Some((label, b))
        })
        .collect();
    if out.len() > 1
        && let Some(b) = &s.overall.behaviour
    {
        out.push(("overall".into(), b));
    }
    out
}

/// One group's figures on one line (the terminal wraps it).
fn line(label: &str, m: &BehaviourMetrics) -> String {
    format!(
        "  {label}: {} trials, macro-F1 {}, tool hallucination {}, answer hallucination {}, right: {} (decided by {})",
        m.trials,
        macro_f1(&m.macro_f1, "-", "-"),
        rate(&m.tool_hallucination_rate, "-", "-"),
        rate(&m.answer_hallucination_rate, "-", "-"),
        recalls(m),
        decided(m),
    )
}

/// The terminal's behaviour block, as lines to wrap: a heading and a line per group;
/// empty when no trial expects a behaviour.
pub fn terminal_lines(s: &Summary, printable: impl Fn(&str) -> String) -> Vec<String> {
    let groups = groups(s);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "behaviour (expected vs observed; macro-F1 95% bootstrap CI, rates 95% Wilson CI; summary.json has the matrix):"
            .to_string(),
    ];
    out.extend(groups.iter().map(|(l, m)| line(&printable(l), m)));
    out
}

/// A confusion matrix as a Markdown table with row percentages.
fn markdown_matrix(m: &BehaviourMetrics, cell_text: &dyn Fn(&str) -> String) -> String {
    let mut out = String::from("| expected ↓ / observed → |");
    for b in Behaviour::ALL {
        let _ = write!(out, " {} |", b.label());
    }
    out.push_str(" n |\n|---|---:|---:|---:|---:|---:|\n");
    for (e, row) in m.confusion.iter() {
        let n: u64 = row.iter().map(|(_, v)| *v).sum();
        if n == 0 {
            continue;
        }
        let _ = write!(out, "| {} |", cell_text(e.label()));
        for (_, v) in row.iter() {
            let _ = write!(out, " {v} ({:.0}%) |", *v as f64 * 100.0 / n as f64);
        }
        let _ = writeln!(out, " {n} |");
    }
    out
}

/// The Markdown "Behaviour" section: a row per group, then the overall confusion matrix;
/// empty when no trial expects a behaviour.
pub fn markdown(s: &Summary, cell_text: &dyn Fn(&str) -> String) -> String {
    let rows: Vec<(&CellSummary, &BehaviourMetrics)> = s
        .cells
        .iter()
        .filter_map(|c| c.metrics.behaviour.as_ref().map(|b| (c, b)))
        .collect();
    let Some(overall) = &s.overall.behaviour else {
        return String::new();
    };
    let mut out = String::from(
        "\n**Behaviour** (expected vs observed)\n\n| target | variant | tool_choice | n | macro-F1 (95% CI) | tool hallucination (95% CI) | answer hallucination (95% CI) | right |\n|---|---|---|---:|---|---|---|---|\n",
    );
    for (c, b) in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell_text(&c.target),
            cell_text(&c.variant),
            cell_text(&super::summary::cell_mode(c)),
            b.trials,
            macro_f1(&b.macro_f1, "–", "–"),
            rate(&b.tool_hallucination_rate, "–", "–"),
            rate(&b.answer_hallucination_rate, "–", "–"),
            recalls(b),
        );
    }
    let _ = writeln!(
        out,
        "\nOverall confusion matrix ({} trials; rows: expected, with row percentages):\n",
        overall.trials
    );
    out.push_str(&markdown_matrix(overall, cell_text));
    out
}

/// Columns of `behaviour.csv` before the per-behaviour and matrix columns.
pub const CSV_COLUMNS: &[&str] = &[
    "target",
    "variant",
    "tool_choice",
    "distractors",
    "trials",
    "macro_f1",
    "macro_f1_low",
    "macro_f1_high",
    "bootstrap_unit",
    "tool_hallucination_rate",
    "tool_hallucination_low",
    "tool_hallucination_high",
    "tool_hallucination_num",
    "tool_hallucination_den",
    "answer_hallucination_rate",
    "answer_hallucination_low",
    "answer_hallucination_high",
    "answer_hallucination_num",
    "answer_hallucination_den",
    "decided_by_call",
    "decided_by_classifier",
    "decided_by_judge",
];

/// Every column of `behaviour.csv`: [`CSV_COLUMNS`], then per behaviour `B_support`,
/// `B_precision`, `B_recall`, `B_f1`, then the matrix as `n_E_as_O` (expected E,
/// observed O), in [`Behaviour::ALL`] order.
pub fn csv_header() -> Vec<String> {
    let mut h: Vec<String> = CSV_COLUMNS.iter().map(|c| c.to_string()).collect();
    for b in Behaviour::ALL {
        for what in ["support", "precision", "recall", "f1"] {
            h.push(format!("{}_{what}", b.label()));
        }
    }
    for e in Behaviour::ALL {
        for o in Behaviour::ALL {
            h.push(format!("n_{}_as_{}", e.label(), o.label()));
        }
    }
    h
}

/// One `behaviour.csv` row; `opt` formats a number the way the other CSV files do.
pub fn csv_row(
    cell: [&str; 3],
    distractors: Option<u32>,
    m: &BehaviourMetrics,
    opt: impl Fn(Option<f64>) -> String,
) -> Vec<String> {
    let mut row: Vec<String> = cell.iter().map(|s| s.to_string()).collect();
    row.push(distractors.map(|n| n.to_string()).unwrap_or_default());
    row.push(m.trials.to_string());
    row.extend([
        opt(m.macro_f1.value),
        opt(m.macro_f1.low),
        opt(m.macro_f1.high),
    ]);
    row.push(
        match m.macro_f1.unit {
            crate::score::behaviour::BootstrapUnit::Trial => "trial",
            crate::score::behaviour::BootstrapUnit::Case => "case",
        }
        .into(),
    );
    for r in [&m.tool_hallucination_rate, &m.answer_hallucination_rate] {
        row.extend([opt(r.value), opt(r.low), opt(r.high)]);
        row.extend([r.num.to_string(), r.den.to_string()]);
    }
    let d = &m.decided_by;
    row.extend([d.call, d.classifier, d.judge].map(|n| n.to_string()));
    for (_, s) in m.scores.iter() {
        row.push(s.support.to_string());
        row.extend([opt(s.precision.value), opt(s.recall.value), opt(s.f1)]);
    }
    for (_, r) in m.confusion.iter() {
        row.extend(r.iter().map(|(_, v)| v.to_string()));
    }
    row
}

/// Columns added at the end of `trials.csv` when some trial has behaviour facts.
pub const TRIAL_COLUMNS: &[&str] = &["expected_behaviour", "observed_behaviour", "behaviour_by"];

/// Who decided, as reports name it.
pub fn by_label(by: ObservedBy) -> &'static str {
    match by {
        ObservedBy::Call => "call",
        ObservedBy::Classifier => "classifier",
        ObservedBy::Judge => "judge",
    }
}

/// A trial's [`TRIAL_COLUMNS`] values (empty without facts).
pub fn trial_cells(t: &TrialRecord) -> [String; 3] {
    match t.checks.as_ref().and_then(|c| c.behaviour.as_ref()) {
        Some(f) => [
            f.expected
                .map(|b| b.label().to_string())
                .unwrap_or_default(),
            f.observed.label().to_string(),
            by_label(f.by).to_string(),
        ],
        None => Default::default(),
    }
}

/// True when some trial has behaviour facts (so `trials.csv` gets their columns).
pub fn any_facts(trials: &[TrialRecord]) -> bool {
    trials
        .iter()
        .any(|t| t.checks.as_ref().is_some_and(|c| c.behaviour.is_some()))
}

/// A JUnit testsuite's properties for its cell's behaviour metrics (`behaviour.` names),
/// as (name, value).
pub fn junit_properties(
    m: &BehaviourMetrics,
    opt: impl Fn(Option<f64>) -> String,
) -> Vec<(String, String)> {
    let mut out = vec![
        ("behaviour.trials".into(), m.trials.to_string()),
        ("behaviour.macro_f1".into(), opt(m.macro_f1.value)),
        ("behaviour.macro_f1_low".into(), opt(m.macro_f1.low)),
        ("behaviour.macro_f1_high".into(), opt(m.macro_f1.high)),
    ];
    for (name, r) in [
        ("tool_hallucination_rate", &m.tool_hallucination_rate),
        ("answer_hallucination_rate", &m.answer_hallucination_rate),
    ] {
        out.push((format!("behaviour.{name}"), opt(r.value)));
        out.push((format!("behaviour.{name}_low"), opt(r.low)));
        out.push((format!("behaviour.{name}_high"), opt(r.high)));
    }
    for (e, row) in m.confusion.iter() {
        for (o, v) in row.iter() {
            if *v > 0 {
                out.push((
                    format!("behaviour.confusion.{}.{}", e.label(), o.label()),
                    v.to_string(),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::behaviour::tests::sample;

    #[test]
    fn figures_read_the_same_everywhere() {
        let m = BehaviourMetrics::of(&sample()).unwrap();
        // Hand values of score::behaviour's sample: macro-F1 53/84 = 0.631, interval
        // pinned there; both rates 1/4 with Wilson [4.6%, 69.9%].
        assert_eq!(macro_f1(&m.macro_f1, "-", "x"), "0.63 [0.29-0.90]");
        assert_eq!(
            rate(&m.tool_hallucination_rate, "–", "x"),
            "25% [5–70] (1/4)"
        );
        assert_eq!(rate(&Rate::new(0, 0), "-", "none"), "none");
        assert_eq!(
            recalls(&m),
            "tool_call 3/4, request_for_info 2/4, cannot_answer 2/4"
        );
        assert_eq!(decided(&m), "4 call, 8 classifier, 0 judge");
        let h = csv_header();
        // 22 + 4 × 4 + 16.
        assert_eq!(h.len(), 54);
        let row = csv_row(["t", "v", "auto"], None, &m, |v| {
            v.map(|x| format!("{x:.3}")).unwrap_or_default()
        });
        assert_eq!(row.len(), h.len());
        let at = |name: &str| &row[h.iter().position(|c| c == name).unwrap()];
        assert_eq!(at("macro_f1"), "0.631");
        assert_eq!(at("tool_hallucination_num"), "1");
        assert_eq!(at("answer_hallucination_den"), "4");
        assert_eq!(at("n_cannot_answer_as_tool_call"), "1");
        assert_eq!(at("n_request_for_info_as_direct"), "1");
        assert_eq!(at("direct_recall"), "");
        assert_eq!(at("request_for_info_f1"), "0.571");
        assert_eq!(at("bootstrap_unit"), "trial");
        let props = junit_properties(&m, |v| v.map(|x| format!("{x:.3}")).unwrap_or_default());
        let find = |n: &str| {
            props
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, value)| value.clone())
        };
        assert_eq!(find("behaviour.macro_f1").as_deref(), Some("0.631"));
        assert_eq!(
            find("behaviour.confusion.cannot_answer.tool_call").as_deref(),
            Some("1")
        );
        // Zero cells are left out.
        assert_eq!(find("behaviour.confusion.direct.direct"), None);
        let md = markdown_matrix(&m, &|s: &str| s.to_string());
        assert!(
            md.contains("| cannot_answer | 1 (25%) | 0 (0%) | 2 (50%) | 1 (25%) | 4 |"),
            "{md}"
        );
        // No direct row: nobody expected it.
        assert!(!md.contains("\n| direct |"), "{md}");
    }
}
