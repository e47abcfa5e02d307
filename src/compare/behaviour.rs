//! The behaviour metrics in a comparison: macro-F1 and the two hallucination rates of
//! both sides and their deltas, per cell. They join a cell's metric deltas only when a
//! side has trials expecting a behaviour, so comparisons of other suites are unchanged,
//! and get a table of their own in the terminal and Markdown output.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use super::{CellComparison, Comparison, MetricDelta};
use crate::score::behaviour::BEHAVIOUR_METRICS;
use crate::score::metrics::Metrics;

/// The behaviour metric deltas of a cell with metrics `b` (baseline) and `c`
/// (candidate); empty when neither side has behaviour metrics.
pub fn deltas(b: Option<&Metrics>, c: Option<&Metrics>) -> Vec<MetricDelta> {
    let (bb, cb) = (
        b.and_then(|m| m.behaviour.as_ref()),
        c.and_then(|m| m.behaviour.as_ref()),
    );
    if bb.is_none() && cb.is_none() {
        return Vec::new();
    }
    BEHAVIOUR_METRICS
        .iter()
        .map(|name| {
            MetricDelta::new(
                name,
                bb.and_then(|m| m.value(name)),
                cb.and_then(|m| m.value(name)),
            )
        })
        .collect()
}

/// The cells with behaviour metrics on some side.
fn cells(c: &Comparison) -> Vec<&CellComparison> {
    c.cells
        .iter()
        .filter(|x| x.metric(BEHAVIOUR_METRICS[0]).is_some())
        .collect()
}

/// A value as shown: macro-F1 with three decimals, a rate as a percentage.
fn value(metric: &str, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if metric == "macro_f1" => format!("{v:.3}"),
        Some(v) => format!("{:.1}%", v * 100.0),
    }
}

/// A delta as shown: macro-F1 signed with three decimals, a rate in signed points.
fn delta(metric: &str, d: Option<f64>) -> String {
    match d {
        None => "-".into(),
        Some(d) if metric == "macro_f1" => format!("{d:+.3}"),
        Some(d) => format!("{:+.1} pts", d * 100.0),
    }
}

/// The three figures of one cell: `[baseline, candidate, delta]` per metric.
fn row(cell: &CellComparison) -> Vec<String> {
    let mut out = Vec::new();
    for name in BEHAVIOUR_METRICS {
        let m = cell.metric(name);
        out.push(value(name, m.and_then(|m| m.baseline)));
        out.push(value(name, m.and_then(|m| m.candidate)));
        out.push(delta(name, m.and_then(|m| m.delta)));
    }
    out
}

const HEADER: [&str; 10] = [
    "cell",
    "macro-F1 base",
    "cand",
    "Δ",
    "tool halluc. base",
    "cand",
    "Δ",
    "answer halluc. base",
    "cand",
    "Δ",
];

/// The terminal table of behaviour metrics (a row per cell with them); empty when no
/// cell has any.
pub fn terminal(c: &Comparison) -> String {
    let rows = cells(c);
    if rows.is_empty() {
        return String::new();
    }
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_header(HEADER.to_vec());
    for cell in rows {
        let mut r = vec![Cell::new(&cell.cell)];
        r.extend(
            row(cell)
                .into_iter()
                .map(|v| Cell::new(v).set_alignment(CellAlignment::Right)),
        );
        table.add_row(r);
    }
    format!(
        "behaviour (over all of each side's trials expecting a behaviour; lower hallucination is better):\n{table}\n"
    )
}

/// The Markdown "Behaviour" table; empty when no cell has behaviour metrics.
pub fn markdown(c: &Comparison, escape: impl Fn(&str) -> String) -> String {
    let rows = cells(c);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n### Behaviour\n\nOver all of each side's trials expecting a behaviour; lower hallucination is better.\n\n| cell | macro-F1 baseline | candidate | Δ | tool hallucination baseline | candidate | Δ | answer hallucination baseline | candidate | Δ |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for cell in rows {
        let _ = writeln!(
            out,
            "| {} | {} |",
            escape(&cell.cell),
            row(cell).join(" | ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::Behaviour::{CannotAnswer as CA, RequestForInfo as RFI, ToolCall as TC};
    use crate::score::behaviour::tests::record;

    #[test]
    fn both_sides_and_deltas_by_hand() {
        // Baseline: a CA case that called (tool hallucination 1/1), an RFI case asked
        // (answer hallucination 0/1). Candidate: both right.
        let baseline = vec![record("a", 0, Some(CA), TC), record("b", 0, Some(RFI), RFI)];
        let candidate = vec![record("a", 0, Some(CA), CA), record("b", 0, Some(RFI), RFI)];
        let c = super::super::compare_runs(&baseline, &candidate);
        let cell = &c.cells[0];
        // Baseline macro-F1 over CA (F1 = 0/(1+0) = 0) and RFI (2/(1+1) = 1): 0.5;
        // candidate 1; delta +0.5.
        let m = cell.metric("macro_f1").unwrap();
        assert_eq!(
            (m.baseline, m.candidate, m.delta),
            (Some(0.5), Some(1.0), Some(0.5))
        );
        let t = cell.metric("tool_hallucination_rate").unwrap();
        assert_eq!(
            (t.baseline, t.candidate, t.delta),
            (Some(1.0), Some(0.0), Some(-1.0))
        );
        let a = cell.metric("answer_hallucination_rate").unwrap();
        assert_eq!(
            (a.baseline, a.candidate, a.delta),
            (Some(0.0), Some(0.0), Some(0.0))
        );
        let text = terminal(&c);
        assert!(text.contains("0.500"), "{text}");
        assert!(text.contains("+0.500"), "{text}");
        assert!(text.contains("-100.0 pts"), "{text}");
        let md = markdown(&c, |s| s.to_string());
        assert!(
            md.contains(
                "| 0.500 | 1.000 | +0.500 | 100.0% | 0.0% | -100.0 pts | 0.0% | 0.0% | +0.0 pts |"
            ),
            "{md}"
        );
        // In the JSON, after the other metrics.
        let json = serde_json::to_value(&c).unwrap();
        let names: Vec<&str> = json["cells"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["metric"].as_str().unwrap())
            .collect();
        assert_eq!(
            &names[names.len() - 3..],
            [
                "macro_f1",
                "tool_hallucination_rate",
                "answer_hallucination_rate"
            ]
        );
    }

    #[test]
    fn comparisons_without_behaviours_are_unchanged() {
        let plain = vec![super::super::tests::trial(
            "a",
            "t",
            "v",
            0,
            crate::score::Verdict::Pass,
        )];
        let c = super::super::compare_runs(&plain, &plain);
        assert!(c.cells[0].metric("macro_f1").is_none());
        assert_eq!(terminal(&c), "");
        assert_eq!(markdown(&c, |s| s.to_string()), "");
        // One side only: the other's values are undefined and the delta too.
        let b = vec![record("a", 0, Some(CA), TC)];
        let c = super::super::compare_runs(&b, &[]);
        let m = c.cells[0].metric("tool_hallucination_rate").unwrap();
        assert_eq!((m.baseline, m.candidate, m.delta), (Some(1.0), None, None));
    }
}
