//! The terminal summary: one table row per cell (metrics as columns, 95% intervals on
//! the headline rates), variant token sizes, failures in brief, and thresholds.
//! Colour only when stdout is a terminal and `NO_COLOR` is unset.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table, presets};

use super::RunReport;
use crate::score::metrics::Metrics;
use crate::score::stats::Rate;

/// How the summary is printed.
#[derive(Debug, Clone, Copy)]
pub struct TerminalOptions {
    /// Use ANSI colours.
    pub color: bool,
    /// Failures listed before "and N more".
    pub max_failures: usize,
    /// Table width when not a terminal.
    pub width: u16,
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.0}%", x * 100.0))
}

fn pct_ci(r: &Rate) -> String {
    match (r.value, r.low, r.high) {
        (Some(v), Some(lo), Some(hi)) => {
            format!("{:.0}% [{:.0}-{:.0}]", v * 100.0, lo * 100.0, hi * 100.0)
        }
        _ => "-".to_string(),
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"))
}

fn cost(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("${x:.4}"))
}

fn row(label: Vec<String>, m: &Metrics, color: bool) -> Vec<Cell> {
    let mut cells: Vec<Cell> = label.into_iter().map(Cell::new).collect();
    let mut acc = Cell::new(pct_ci(&m.accuracy));
    if color && let Some(v) = m.accuracy.value {
        acc = acc.fg(if v >= 0.9 {
            Color::Green
        } else if v >= 0.7 {
            Color::Yellow
        } else {
            Color::Red
        });
    }
    // Only the reasons that occurred, e.g. "7% (schema 1)".
    let b = &m.invalid_by_reason;
    let parts: Vec<String> = [
        ("json", b.invalid_json),
        ("tool", b.unknown_tool),
        ("schema", b.schema_violation),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k} {n}"))
    .collect();
    let invalid = if parts.is_empty() {
        pct(m.invalid_call_rate.value)
    } else {
        format!("{} ({})", pct(m.invalid_call_rate.value), parts.join(", "))
    };
    let tokens = format!(
        "{}/{}{}",
        m.tokens.input,
        m.tokens.output,
        if m.tokens.estimated_trials > 0 {
            " est"
        } else {
            ""
        }
    );
    let mut rest = vec![
        Cell::new(m.scored).set_alignment(CellAlignment::Right),
        acc,
        Cell::new(pct_ci(&m.trigger.precision)),
        Cell::new(pct_ci(&m.trigger.recall)),
        Cell::new(m.trigger.f1.map_or("-".into(), |f| format!("{f:.2}"))),
        Cell::new(pct(m.tool_selection_accuracy.value)),
        Cell::new(pct(m.param_completeness.value)),
        Cell::new(pct(m.arg_match_rate.value)),
        Cell::new(invalid),
        Cell::new(pct(m.ungrounded_rate.value)),
        Cell::new(tokens),
        Cell::new(cost(m.cost_usd)),
        Cell::new(format!("{}/{}", ms(m.latency.p50_ms), ms(m.latency.p95_ms))),
    ];
    if let Some(c) = &m.consistency {
        rest.push(Cell::new(format!(
            "{:.0}%/{:.0}%",
            c.pass_at_k * 100.0,
            c.pass_hat_k * 100.0
        )));
    }
    if m.errors > 0 {
        let mut e = Cell::new(format!("{} errors", m.errors));
        if color {
            e = e.fg(Color::Red);
        }
        rest.push(e);
    }
    cells.extend(rest);
    cells
}

/// Render the full summary.
pub fn render(report: &RunReport, opts: TerminalOptions) -> String {
    let s = &report.summary;
    let m = &s.overall;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} trials, {} passed, {} failed, {} errors",
        s.suite,
        m.trials,
        m.passed,
        m.scored - m.passed,
        m.errors
    );
    for (target, source) in &report.meta.sources {
        let _ = writeln!(out, "  {target}: {source}");
    }
    if let Some(why) = &s.stopped {
        let _ = writeln!(out, "  stopped early: {why}");
    }
    if let Some(part) = &s.selection {
        let _ = writeln!(out, "  partial run: {part}");
    }
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    if !opts.color {
        table.force_no_tty();
        table.set_width(opts.width);
    }
    let repeats = s.cells.iter().any(|c| c.metrics.consistency.is_some());
    let any_errors = m.errors > 0;
    // One target: its name is in the heading above, so the table drops the column.
    let one_target = s
        .cells
        .iter()
        .all(|c| Some(&c.target) == s.cells.first().map(|f| &f.target));
    let mut header = vec![
        "target",
        "variant",
        "tool_choice",
        "n",
        "accuracy [95% CI]",
        "precision",
        "recall",
        "F1",
        "tool sel",
        "params",
        "args",
        "invalid",
        "ungrounded",
        "tokens in/out",
        "cost",
        "p50/p95 ms",
    ];
    if repeats {
        header.push("pass@k/pass^k");
    }
    if any_errors {
        header.push("errors");
    }
    if one_target {
        header.remove(0);
    }
    table.set_header(header);
    let label = |target: &str, variant: &str, mode: &str| {
        let mut l = vec![target.to_string(), variant.to_string(), mode.to_string()];
        if one_target {
            l.remove(0);
        }
        l
    };
    for c in &s.cells {
        let mut r = row(
            label(&c.target, &c.variant, &c.tool_choice),
            &c.metrics,
            opts.color,
        );
        if any_errors && c.metrics.errors == 0 {
            r.push(Cell::new(""));
        }
        table.add_row(r);
    }
    if s.cells.len() > 1 {
        let mut l = label("overall", "", "");
        if one_target {
            l[0] = "overall".into();
        }
        let mut r = row(l, m, opts.color);
        if any_errors && m.errors == 0 {
            r.push(Cell::new(""));
        }
        table.add_row(r);
    }
    let _ = writeln!(out, "{table}");
    if !s.variants.is_empty() {
        let sizes: Vec<String> = s
            .variants
            .iter()
            .map(|v| format!("{} {} tokens", v.variant, v.tool_definition_tokens))
            .collect();
        let _ = writeln!(
            out,
            "tool definitions ({}): {}",
            crate::score::tokens::TOKENIZER,
            sizes.join(", ")
        );
    }
    if !s.failures.is_empty() {
        let _ = writeln!(out, "\nfailures ({}):", s.failures.len());
        for f in s.failures.iter().take(opts.max_failures) {
            let reason: String = f.reason.chars().take(160).collect();
            let _ = writeln!(
                out,
                "  {} [{}{}] {}",
                f.case_id,
                f.cell,
                if f.repeat > 0 {
                    format!(" #{}", f.repeat)
                } else {
                    String::new()
                },
                reason
            );
        }
        if s.failures.len() > opts.max_failures {
            let _ = writeln!(
                out,
                "  ... and {} more (see trials.csv)",
                s.failures.len() - opts.max_failures
            );
        }
    }
    if !s.thresholds.is_empty() {
        match &s.selection {
            Some(part) => {
                let _ = writeln!(out, "\nthresholds (on a partial run: {part}):");
            }
            None => {
                let _ = writeln!(out, "\nthresholds:");
            }
        }
        for t in &s.thresholds {
            let bound = match (t.min, t.max) {
                (Some(lo), Some(hi)) => format!("in [{lo}, {hi}]"),
                (Some(lo), None) => format!(">= {lo}"),
                (None, Some(hi)) => format!("<= {hi}"),
                (None, None) => String::new(),
            };
            let value = t.value.map_or("undefined".into(), |v| format!("{v:.3}"));
            let mark = match (t.ok, opts.color) {
                (true, true) => "\x1b[32mok\x1b[0m",
                (true, false) => "ok",
                (false, true) => "\x1b[31mFAIL\x1b[0m",
                (false, false) => "FAIL",
            };
            let _ = writeln!(out, "  {mark}  {} {bound} ({}): {value}", t.metric, t.scope);
        }
    }
    out
}

/// The one-line summary printed with `--quiet`.
pub fn one_line(report: &RunReport, dir: &std::path::Path) -> String {
    let s = &report.summary;
    let m = &s.overall;
    let gates = if s.thresholds.is_empty() {
        String::new()
    } else if s.thresholds_ok() {
        ", thresholds ok".into()
    } else {
        format!(
            ", {} threshold(s) failed",
            s.thresholds.iter().filter(|t| !t.ok).count()
        )
    };
    format!(
        "{}: {}/{} passed ({}), {} errors{gates} -> {}",
        s.suite,
        m.passed,
        m.scored,
        pct(m.accuracy.value),
        m.errors,
        dir.display()
    )
}
