//! `compare.html`: one self-contained page for a [`Comparison`]: the verdict and failed
//! gates, the regression gates with what each could detect, a dumbbell chart of paired
//! accuracy per cell (inline SVG, with a legend for the baseline and candidate marks), the
//! paired table with the paired test's p-values and the delta's interval, the flips with
//! the candidate's failure reasons, and every metric's delta with its interval and test
//! (pooled, then per cell). Rendered with minijinja and HTML auto-escaping; nothing on the
//! page loads anything by URL.

use minijinja::context;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use crate::report::html::esc;

use super::text::{interval, p_cell, p_header, pct, points, test_note, unpaired_notes, yes_no};
use super::{
    CellComparison, Comparison, FlipDirection, GateFailure, GateVerdict, MetricDelta, Paired,
    metrics_view,
};

const TEMPLATE: &str = include_str!("compare.html.j2");

/// Flips listed per cell before the rest are counted.
const MAX_FLIPS_PER_CELL: usize = 200;

/// Why the page could not be rendered (a template defect, never user input).
#[derive(Debug, thiserror::Error)]
#[error("failed to render the comparison page: {0}")]
pub struct RenderError(String);

#[derive(Serialize)]
struct Row {
    cell: String,
    overall: bool,
    n: u64,
    baseline: String,
    candidate: String,
    delta: String,
    delta_class: &'static str,
    interval: String,
    test: &'static str,
    p: String,
    significant: &'static str,
    down: u64,
    up: u64,
}

#[derive(Serialize)]
struct FlipRow {
    case_id: String,
    tool_choice: String,
    repeat: u32,
    direction: String,
    class: &'static str,
    /// The candidate's failure reason: code and message (empty without one).
    code: String,
    reason: String,
}

#[derive(Serialize)]
struct FlipCell {
    cell: String,
    flips: Vec<FlipRow>,
}

#[derive(Serialize)]
struct MetricRow {
    metric: String,
    /// A metric the suite's thresholds name.
    threshold: bool,
    baseline: String,
    candidate: String,
    delta: String,
    /// The paired test's figures, formatted ([`metrics_view::rows`]).
    tested: Vec<String>,
    /// `bad` / `good` for a significant change for the worse / better.
    class: &'static str,
}

#[derive(Serialize)]
struct GateRow {
    line: String,
    class: &'static str,
}

#[derive(Serialize)]
struct MetricCell {
    cell: String,
    metrics: Vec<MetricRow>,
}

#[derive(Serialize)]
struct View {
    baseline: String,
    candidate: String,
    key: String,
    verdict: &'static str,
    verdict_class: &'static str,
    gates: Vec<String>,
    notes: Vec<String>,
    test_note: String,
    p_header: String,
    overall: Paired,
    rows: Vec<Row>,
    flip_cells: Vec<FlipCell>,
    metric_cells: Vec<MetricCell>,
    /// The headings of the tested figures of a metric row.
    tested_header: Vec<&'static str>,
    gate_rows: Vec<GateRow>,
    version: &'static str,
}

fn delta_class(p: &Paired) -> &'static str {
    match (p.delta_points, p.significant) {
        (Some(d), true) if d < 0.0 => "bad",
        (Some(d), true) if d > 0.0 => "good",
        _ => "",
    }
}

fn row(cell: &str, p: &Paired, overall: bool) -> Row {
    Row {
        cell: cell.to_string(),
        overall,
        n: p.n,
        baseline: pct(p.baseline_accuracy),
        candidate: pct(p.candidate_accuracy),
        delta: points(p.delta_points),
        delta_class: delta_class(p),
        interval: interval(p),
        test: p.test.key(),
        p: p_cell(p),
        significant: yes_no(p),
        down: p.n10,
        up: p.n01,
    }
}

fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.4}"))
}

fn flip_cell(c: &CellComparison) -> Option<FlipCell> {
    if c.flips.is_empty() {
        return None;
    }
    // Regressions first.
    let mut flips: Vec<_> = c.flips.iter().collect();
    flips.sort_by_key(|f| f.direction != FlipDirection::PassToFail);
    let mut rows: Vec<FlipRow> = flips
        .iter()
        .take(MAX_FLIPS_PER_CELL)
        .map(|f| FlipRow {
            case_id: f.case_id.clone(),
            tool_choice: f.tool_choice.clone(),
            repeat: f.repeat,
            direction: f.direction.to_string(),
            class: match f.direction {
                FlipDirection::PassToFail => "bad",
                FlipDirection::FailToPass => "good",
            },
            code: f
                .reason
                .as_ref()
                .map(|r| r.code.clone())
                .unwrap_or_default(),
            reason: f
                .reason
                .as_ref()
                .map(|r| r.message.clone())
                .unwrap_or_default(),
        })
        .collect();
    if flips.len() > MAX_FLIPS_PER_CELL {
        rows.push(FlipRow {
            case_id: format!("… and {} more", flips.len() - MAX_FLIPS_PER_CELL),
            tool_choice: String::new(),
            repeat: 0,
            direction: String::new(),
            class: "",
            code: String::new(),
            reason: String::new(),
        });
    }
    Some(FlipCell {
        cell: c.cell.clone(),
        flips: rows,
    })
}

/// `label` in at most `max` characters: its start and end with `…` between, so the
/// variant and tool_choice at the end of `target × variant × tool_choice` stay visible.
fn shorten_middle(label: &str, max: usize) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= max {
        return label.to_string();
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// One line per cell from baseline to candidate accuracy on the pairs (0–100%).
fn chart(rows: &[Row], c: &Comparison) -> String {
    const LABEL_W: f64 = 360.0;
    const PLOT_W: f64 = 480.0;
    const ROW_H: f64 = 24.0;
    let mut paired: Vec<(&str, &Paired)> = c
        .cells
        .iter()
        .map(|x| (x.cell.as_str(), &x.paired))
        .collect();
    if rows.iter().any(|r| r.overall) {
        paired.push(("overall", &c.overall));
    }
    // Rows start below the legend (LEGEND_H) and the axis labels.
    const LEGEND_H: f64 = 22.0;
    let h = LEGEND_H + 30.0 + ROW_H * paired.len() as f64 + 20.0;
    let w = LABEL_W + PLOT_W + 30.0;
    let x = |a: f64| LABEL_W + a * PLOT_W;
    let mut s = format!(
        r#"<svg class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>Paired accuracy per cell, baseline (grey) to candidate (blue)</title>"#
    );
    // The legend: what each mark and line colour means.
    let lx = LABEL_W;
    s.push_str(&format!(
        r#"<g class="legend"><circle class="base" cx="{:.1}" cy="10" r="4"/><text x="{:.1}" y="14">baseline</text><circle class="cand" cx="{:.1}" cy="10" r="5"/><text x="{:.1}" y="14">candidate</text><line class="down" x1="{:.1}" y1="10" x2="{:.1}" y2="10"/><text x="{:.1}" y="14">significant drop</text><line class="up" x1="{:.1}" y1="10" x2="{:.1}" y2="10"/><text x="{:.1}" y="14">significant gain</text></g>"#,
        lx + 4.0,
        lx + 12.0,
        lx + 84.0,
        lx + 92.0,
        lx + 170.0,
        lx + 190.0,
        lx + 196.0,
        lx + 310.0,
        lx + 330.0,
        lx + 336.0,
    ));
    let top = LEGEND_H;
    for i in 0..=4 {
        let a = f64::from(i) / 4.0;
        s.push_str(&format!(
            r#"<line class="grid" x1="{0:.1}" y1="{3:.1}" x2="{0:.1}" y2="{1:.1}"/><text class="tick" x="{0:.1}" y="{4:.1}" text-anchor="middle">{2}%</text>"#,
            x(a),
            h - 20.0,
            i * 25,
            top + 20.0,
            top + 14.0,
        ));
    }
    for (i, (label, p)) in paired.iter().enumerate() {
        let y = top + 30.0 + ROW_H * i as f64 + ROW_H / 2.0;
        if i % 2 == 0 {
            s.push_str(&format!(
                r#"<rect class="stripe" x="0" y="{:.1}" width="{w}" height="{ROW_H}"/>"#,
                y - ROW_H / 2.0
            ));
        }
        let short = shorten_middle(label, 56);
        s.push_str(&format!(
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + 4.0,
            esc(&short)
        ));
        let (Some(b), Some(c)) = (p.baseline_accuracy, p.candidate_accuracy) else {
            s.push_str(&format!(
                r#"<text class="tick" x="{:.1}" y="{:.1}">no scored pairs</text>"#,
                x(0.0) + 4.0,
                y + 4.0
            ));
            continue;
        };
        let class = match delta_class(p) {
            "bad" => "down",
            "good" => "up",
            _ => "same",
        };
        s.push_str(&format!(
            r#"<g><title>{}: {:.1}% → {:.1}% ({} p {})</title><line class="{class}" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><circle class="base" cx="{:.1}" cy="{y:.1}" r="4"/><circle class="cand" cx="{:.1}" cy="{y:.1}" r="5"/></g>"#,
            esc(label),
            b * 100.0,
            c * 100.0,
            p.test.short(),
            p_cell(p),
            x(b),
            x(c),
            x(b),
            x(c),
        ));
    }
    s.push_str("</svg>");
    s
}

/// One metric's row: every side's value over all of its trials in the cell (as before
/// tests existed), then the paired test's figures.
fn metric_row(m: &MetricDelta, thresholds: &[String]) -> MetricRow {
    let tested = metrics_view::rows(std::slice::from_ref(m), &[])
        .pop()
        .map(|r| r[3..].to_vec())
        .unwrap_or_else(|| vec!["–".to_string(); metrics_view::HEADER.len() - 3]);
    let class = match &m.test {
        Some(t) if t.significant => match t.delta.map(|d| m.better.worsening(d)) {
            Some(w) if w > 0.0 => "bad",
            Some(w) if w < 0.0 => "good",
            _ => "",
        },
        _ => "",
    };
    MetricRow {
        metric: m.metric.clone(),
        threshold: thresholds.contains(&m.metric),
        baseline: number(m.baseline),
        candidate: number(m.candidate),
        delta: m
            .delta
            .map_or_else(|| "–".to_string(), |d| format!("{d:+.4}")),
        tested,
        class,
    }
}

/// The metric tables: the pooled cells first when there are several, then each cell.
fn metric_cells(c: &Comparison) -> Vec<MetricCell> {
    let t = &c.suite_thresholds;
    let mut out = Vec::new();
    if c.cells.len() > 1 {
        out.push(MetricCell {
            cell: "overall".to_string(),
            metrics: c.overall_metrics.iter().map(|m| metric_row(m, t)).collect(),
        });
    }
    out.extend(c.cells.iter().map(|x| MetricCell {
        cell: x.cell.clone(),
        metrics: x.metrics.iter().map(|m| metric_row(m, t)).collect(),
    }));
    out
}

/// Render the comparison of `baseline` and `candidate` (names shown on the page) with
/// the gates that failed.
pub fn render_html(
    c: &Comparison,
    baseline: &str,
    candidate: &str,
    failures: &[GateFailure],
) -> Result<String, RenderError> {
    let mut rows: Vec<Row> = c
        .cells
        .iter()
        .map(|x| row(&x.cell, &x.paired, false))
        .collect();
    if c.cells.len() > 1 {
        rows.push(row("overall", &c.overall, true));
    }
    let regressed = c
        .cells
        .iter()
        .any(|x| x.paired.is_regression() && x.paired.significant);
    let (verdict, verdict_class) = if !failures.is_empty() {
        ("gate failed", "bad")
    } else if regressed {
        ("significant regression", "warn")
    } else {
        ("no significant regression", "good")
    };
    let key = [
        (c.key.target, "target"),
        (c.key.variant, "variant"),
        (c.key.tool_choice, "tool_choice"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, n)| *n)
    .collect::<Vec<_>>()
    .join(", ");
    let chart = chart(&rows, c);
    let view = View {
        baseline: baseline.to_string(),
        candidate: candidate.to_string(),
        key: if key.is_empty() {
            "nothing".into()
        } else {
            key
        },
        verdict,
        verdict_class,
        gates: failures.iter().map(ToString::to_string).collect(),
        notes: unpaired_notes(c),
        test_note: test_note(c),
        p_header: p_header(c),
        overall: c.overall.clone(),
        rows,
        flip_cells: c.cells.iter().filter_map(flip_cell).collect(),
        metric_cells: metric_cells(c),
        tested_header: metrics_view::HEADER[3..].to_vec(),
        gate_rows: c
            .gates
            .iter()
            .zip(metrics_view::gate_lines(&c.gates))
            .map(|(g, line)| GateRow {
                line,
                class: match g.verdict {
                    GateVerdict::Ok => "good",
                    GateVerdict::CouldNotTell => "warn",
                    GateVerdict::Failed => "bad",
                },
            })
            .collect(),
        version: env!("CARGO_PKG_VERSION"),
    };
    let err = |e: minijinja::Error| RenderError(e.to_string());
    let mut env = crate::report::html::page_environment().map_err(err)?;
    env.add_template("compare.html", TEMPLATE).map_err(err)?;
    env.get_template("compare.html")
        .map_err(err)?
        .render(context! {
            v => Value::from(Serde(&view)),
            // Built by `chart` from numbers and `esc`aped labels.
            chart => Value::from_safe_string(chart),
        })
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::runs;
    use crate::compare::{Gate, check_gates, compare_runs};

    #[test]
    fn page_shows_cells_flips_metrics_and_gates_escaped() {
        let evil = "<script>alert(1)</script>";
        let (mut base, mut cand) = runs("clear", 18, 12, 0, 0);
        base[18].case_id = evil.into();
        cand[18].case_id = evil.into();
        let c = compare_runs(&base, &cand);
        let gate = Gate {
            fail_on_regression: Gate::regression(5.0).fail_on_regression,
            ..Gate::default()
        };
        let failures = check_gates(&c, &gate);
        assert!(!failures.is_empty());
        let html = render_html(&c, "runs/a \"<b>", "runs/b", &failures).unwrap();
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("<b>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
        assert!(html.contains("gate failed: accuracy fell 40.0 points"));
        assert!(html.contains(r#"<svg class="chart""#));
        assert!(
            html.contains(r#"class="down""#),
            "a significant drop is red"
        );
        assert!(html.contains("pass → fail"));
        assert!(html.contains("trigger_recall"));
        assert!(!html.contains("<script"), "the page needs no script");
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<link") && !html.contains("url("));
        // The chart's legend names both marks and both line colours.
        for needle in [
            r#"<g class="legend">"#,
            ">baseline</text>",
            ">candidate</text>",
            ">significant drop</text>",
            ">significant gain</text>",
        ] {
            assert!(html.contains(needle), "{needle} missing");
        }
        // The test is named in the table and the note.
        assert!(html.contains(">mcnemar_exact<"));
        assert!(html.contains("exact McNemar test on the discordant pairs"));
        assert!(html.contains("95% CI (pts)"));
    }

    #[test]
    fn long_labels_keep_both_ends() {
        assert_eq!(shorten_middle("abc", 5), "abc");
        assert_eq!(shorten_middle("abcdefghij", 5), "ab…ij");
        let label = "openai-compatible:fake-1@http://127.0.0.1:8080/v1 × terse × required";
        let short = shorten_middle(label, 56);
        assert_eq!(short.chars().count(), 56);
        // 28 characters of the start, `…`, 27 of the end.
        assert_eq!(
            short,
            "openai-compatible:fake-1@htt…:8080/v1 × terse × required"
        );
        assert!(short.ends_with("× terse × required"), "{short}");
    }
}
