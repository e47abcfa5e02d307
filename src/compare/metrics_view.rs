//! Every metric's delta with its interval and test, and the regression gates with what
//! each could detect, as text: the terminal and Markdown tables and the gate lines the
//! HTML page shares.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use super::text::{fmt_p, fmt_p_plain, metric_change, metric_interval, metric_value, rate};
use super::{Better, Comparison, GateCheck, GateVerdict, MetricDelta};

/// One metric's figures as shown: name, baseline, candidate, Δ, 95% CI, p, smallest
/// reachable p, cases, test.
pub(super) type Row = [String; 9];

/// The column headings of [`Row`].
pub(super) const HEADER: [&str; 9] = [
    "metric",
    "baseline",
    "candidate",
    "Δ",
    "95% CI",
    "p",
    "min p",
    "cases",
    "test",
];

/// The rows of `metrics`: the suite's threshold metrics first (marked `*`), then the
/// others in report order; a metric undefined on both sides is left out.
pub(super) fn rows(metrics: &[MetricDelta], thresholds: &[String]) -> Vec<Row> {
    let mut order: Vec<&MetricDelta> = metrics
        .iter()
        .filter(|m| {
            let (b, c) = match &m.test {
                Some(t) => (t.baseline.or(m.baseline), t.candidate.or(m.candidate)),
                None => (m.baseline, m.candidate),
            };
            b.is_some() || c.is_some()
        })
        .collect();
    let rank = |m: &MetricDelta| {
        thresholds
            .iter()
            .position(|t| *t == m.metric)
            .unwrap_or(usize::MAX)
    };
    // Stable: the others keep their order.
    order.sort_by_key(|m| rank(m));
    order
        .into_iter()
        .map(|m| {
            let name = &m.metric;
            let shown = if thresholds.contains(name) {
                format!("{name} *")
            } else {
                name.clone()
            };
            match &m.test {
                Some(t) => [
                    shown,
                    metric_value(name, t.baseline),
                    metric_value(name, t.candidate),
                    metric_change(name, t.delta),
                    metric_interval(name, t.low, t.high),
                    if t.delta.is_some() {
                        fmt_p_plain(t.p_value)
                    } else {
                        "-".into()
                    },
                    fmt_p_plain(t.smallest_p),
                    t.cases.to_string(),
                    t.method.short().to_string(),
                ],
                None => [
                    shown,
                    metric_value(name, m.baseline),
                    metric_value(name, m.candidate),
                    metric_change(name, m.delta),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "no test".into(),
                ],
            }
        })
        .collect()
}

/// Which metrics the table shows: the pooled cells' when there are several, else the
/// one cell's, with its label.
fn shown(c: &Comparison) -> (&str, &[MetricDelta]) {
    match c.cells.as_slice() {
        [one] => (one.cell.as_str(), &one.metrics),
        _ => ("overall", &c.overall_metrics),
    }
}

/// The notes under a metric table: the threshold mark, what the figures are over, the
/// tests.
fn notes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if !c.suite_thresholds.is_empty() {
        out.push("* a metric the suite's thresholds name.".to_string());
    }
    out.push(
        "Values over the cases both sides ran; Δ in points for rates. p and 95% CI paired by \
         case: McNemar or sign-flip for pass/fail metrics (accuracy, task_success), a paired \
         bootstrap of cases (1,000 resamples, seeded) for the others, its p never below min p. \
         min p: the smallest p the cases that changed can reach (2/2^changed); 0.05 or more \
         means no change of that metric could be detected here."
            .to_string(),
    );
    out
}

/// The terminal table of every metric (the pooled cells', or the one cell's), with its
/// notes and the regression gates.
pub fn terminal(c: &Comparison) -> String {
    let (label, metrics) = shown(c);
    let rows = rows(metrics, &c.suite_thresholds);
    let mut out = String::new();
    if !rows.is_empty() {
        let mut table = Table::new();
        table.load_style(presets::UTF8_FULL_CONDENSED);
        table.set_header(HEADER.to_vec());
        for r in rows {
            let mut cells = r.into_iter();
            let mut row = vec![Cell::new(cells.next().unwrap_or_default())];
            row.extend(cells.map(|v| Cell::new(v).set_alignment(CellAlignment::Right)));
            table.add_row(row);
        }
        let _ = writeln!(out, "metrics, {label}:\n{table}");
        for note in notes(c) {
            let _ = writeln!(out, "{note}");
        }
        if c.cells.len() > 1 {
            out.push_str("Per cell: --format md, json or html.\n");
        }
    }
    let lines = gate_lines(&c.gates);
    if !lines.is_empty() {
        out.push_str("regression gates:\n");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}

/// A Markdown table of `rows`.
fn markdown_table(out: &mut String, rows: Vec<Row>, escape: &impl Fn(&str) -> String) {
    let _ = writeln!(out, "| {} |", HEADER.join(" | "));
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let cells: Vec<String> = r.iter().map(|v| escape(v)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// The Markdown "Metrics" section (the pooled cells or the one cell, then each cell in a
/// collapsed block when there are several) and the "Regression gates" section.
pub fn markdown(c: &Comparison, escape: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let (label, metrics) = shown(c);
    let pooled = rows(metrics, &c.suite_thresholds);
    if !pooled.is_empty() {
        let _ = writeln!(out, "\n### Metrics ({})\n", escape(label));
        markdown_table(&mut out, pooled, &escape);
        out.push('\n');
        for note in notes(c) {
            let _ = writeln!(out, "{}", escape(&note));
        }
        if c.cells.len() > 1 {
            for cell in &c.cells {
                let cell_rows = rows(&cell.metrics, &c.suite_thresholds);
                if cell_rows.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "\n<details><summary>{}</summary>\n",
                    escape(&cell.cell)
                );
                markdown_table(&mut out, cell_rows, &escape);
                out.push_str("\n</details>\n");
            }
        }
    }
    let lines = gate_lines(&c.gates);
    if !lines.is_empty() {
        out.push_str("\n### Regression gates\n\n");
        for l in lines {
            let _ = writeln!(out, "- {}", escape(&l));
        }
    }
    out
}

/// One line per gated metric and row: the change against the limit, the test, what the
/// comparison could detect, and the verdict (`ok`, `could not tell`, `failed`).
pub fn gate_lines(checks: &[GateCheck]) -> Vec<String> {
    checks
        .iter()
        .map(|g| {
            let m = g.metric.as_str();
            let values = match (g.baseline, g.candidate) {
                (Some(b), Some(c)) => format!(" ({} → {})", rate(m, b), rate(m, c)),
                _ => String::new(),
            };
            let worse = match g.better {
                Better::Higher => "drop",
                Better::Lower => "rise",
            };
            let verdict = match g.verdict {
                GateVerdict::Ok => "ok",
                GateVerdict::CouldNotTell => "could not tell",
                GateVerdict::Failed => "failed",
            };
            format!(
                "{m} in {}: {}{values}, {} p {} over {} cases ({} changed); limit {:.1} points; \
                 smallest reachable p {}, a {worse} of {:.1} points needs at least {} cases: {verdict}",
                g.cell,
                metric_change(m, g.delta_points.map(|d| d / 100.0)),
                g.method.short(),
                fmt_p(g.p_value),
                g.cases,
                g.changed_cases,
                g.limit_points,
                fmt_p_plain(g.smallest_p),
                g.limit_points,
                g.cases_needed,
            )
        })
        .collect()
}
