//! The stream axis in reports: for every streamed cell, time to first token and to the
//! first tool-call byte next to total latency (median and 95th percentile each), and
//! the CSV columns that carry them. Runs without streamed trials show none of it, so
//! their reports are as before.

use serde::Serialize;

use super::summary::{CellSummary, Summary};
use crate::score::TrialRecord;

/// The trials.csv columns of a run with streamed trials, after the others: whether the
/// trial was streamed and its answer's two times (empty when it had no output, no call,
/// or was not streamed).
pub const TRIAL_COLUMNS: [&str; 3] = ["stream", "first_token_ms", "first_tool_byte_ms"];

/// The summary.csv columns of a run with streamed trials.
pub const SUMMARY_COLUMNS: [&str; 5] = [
    "stream",
    "first_token_p50_ms",
    "first_token_p95_ms",
    "first_tool_byte_p50_ms",
    "first_tool_byte_p95_ms",
];

/// One streamed cell's timing, as every format shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamRow {
    /// `target × variant × tool_choice × stream` (without the target when the run has one).
    pub label: String,
    /// Streamed trials timed.
    pub trials: u64,
    /// Time to first token, median (ms).
    pub first_token_p50: Option<f64>,
    /// Time to first token, 95th percentile (ms).
    pub first_token_p95: Option<f64>,
    /// Time to the first tool-call byte, median (ms).
    pub first_tool_byte_p50: Option<f64>,
    /// Time to the first tool-call byte, 95th percentile (ms).
    pub first_tool_byte_p95: Option<f64>,
    /// Total latency of the same cell, median (ms).
    pub latency_p50: Option<f64>,
    /// Total latency, 95th percentile (ms).
    pub latency_p95: Option<f64>,
}

/// True when some trial of the run was streamed.
pub fn any_streamed(trials: &[TrialRecord]) -> bool {
    trials.iter().any(|t| t.stream)
}

/// A row per streamed cell with timing, in summary order; empty without any.
pub fn rows(s: &Summary) -> Vec<StreamRow> {
    let one_target = s
        .cells
        .iter()
        .all(|c| Some(&c.target) == s.cells.first().map(|f| &f.target));
    s.cells
        .iter()
        .filter_map(|c| {
            let m = c.metrics.stream.as_ref()?;
            let label = if one_target {
                format!("{} × {}", c.variant, super::summary::cell_mode(c))
            } else {
                c.label()
            };
            Some(StreamRow {
                label,
                trials: m.trials,
                first_token_p50: m.first_token.p50_ms,
                first_token_p95: m.first_token.p95_ms,
                first_tool_byte_p50: m.first_tool_byte.p50_ms,
                first_tool_byte_p95: m.first_tool_byte.p95_ms,
                latency_p50: c.metrics.latency.p50_ms,
                latency_p95: c.metrics.latency.p95_ms,
            })
        })
        .collect()
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"))
}

/// `p50/p95 ms`.
fn pair(a: Option<f64>, b: Option<f64>) -> String {
    format!("{}/{} ms", ms(a), ms(b))
}

/// The terminal block: a heading and a line per streamed cell; empty without any.
pub fn terminal_lines(s: &Summary) -> Vec<String> {
    let rows = rows(s);
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["streamed answers (p50/p95; summary.json has every figure):".to_string()];
    out.extend(rows.iter().map(|r| {
        format!(
            "  {}: {} trials, first token {}, first tool-call byte {}, total latency {}",
            r.label,
            r.trials,
            pair(r.first_token_p50, r.first_token_p95),
            pair(r.first_tool_byte_p50, r.first_tool_byte_p95),
            pair(r.latency_p50, r.latency_p95),
        )
    }));
    out
}

/// The Markdown section (a table); empty without streamed cells. `cell_text` escapes a
/// label for a table cell.
pub fn markdown(s: &Summary, cell_text: impl Fn(&str) -> String) -> String {
    let rows = rows(s);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n**Streamed answers** (ms, p50 / p95)\n\n| cell | n | first token | first tool-call byte | total latency |\n|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} / {} | {} / {} | {} / {} |\n",
            cell_text(&r.label),
            r.trials,
            ms(r.first_token_p50),
            ms(r.first_token_p95),
            ms(r.first_tool_byte_p50),
            ms(r.first_tool_byte_p95),
            ms(r.latency_p50),
            ms(r.latency_p95),
        ));
    }
    out
}

/// A number for CSV: one decimal, or empty.
fn csv_ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_default()
}

/// The [`TRIAL_COLUMNS`] of one trial.
pub fn trial_cells(t: &TrialRecord) -> [String; 3] {
    let timing = t.response.as_ref().and_then(|r| r.stream.as_ref());
    [
        t.stream.to_string(),
        csv_ms(timing.and_then(|s| s.first_token_ms)),
        csv_ms(timing.and_then(|s| s.first_tool_byte_ms)),
    ]
}

/// The [`SUMMARY_COLUMNS`] of one cell (`None`: the overall row, whose mode is mixed
/// in a run with both).
pub fn summary_cells(c: Option<&CellSummary>, m: &crate::score::Metrics) -> [String; 5] {
    let s = m.stream.as_ref();
    [
        c.map(|c| c.stream.to_string()).unwrap_or_default(),
        csv_ms(s.and_then(|s| s.first_token.p50_ms)),
        csv_ms(s.and_then(|s| s.first_token.p95_ms)),
        csv_ms(s.and_then(|s| s.first_tool_byte.p50_ms)),
        csv_ms(s.and_then(|s| s.first_tool_byte.p95_ms)),
    ]
}
