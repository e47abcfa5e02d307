//! The matrix's cells as the page shows them: one [`CellRow`] per cell with its rates
//! ([`RateView`]), and which cell each trial belongs to.

use std::collections::HashMap;

use serde::Serialize;

use crate::report::{RunReport, distractors, format, summary};
use crate::score::TrialRecord;
use crate::score::metrics::Metrics;
use crate::score::stats::Rate;

/// A rate as shown in tables.
#[derive(Clone, Serialize)]
pub(super) struct RateView {
    /// Value, e.g. `85.0%`, or `–` when undefined.
    v: String,
    /// 95% interval, e.g. `72–93%`.
    ci: String,
    /// `num/den`.
    frac: String,
}

impl RateView {
    /// `r` as the tables show it.
    pub(super) fn of(r: &Rate) -> RateView {
        let frac = format!("{}/{}", r.num, r.den);
        match (r.value, r.low, r.high) {
            (Some(v), Some(lo), Some(hi)) => RateView {
                v: format!("{:.1}%", v * 100.0),
                ci: format!("{:.0}–{:.0}%", lo * 100.0, hi * 100.0),
                frac,
            },
            _ => RateView {
                v: "–".into(),
                ci: String::new(),
                frac,
            },
        }
    }
}

/// One cell of the matrix (or the overall row) with its metrics.
#[derive(Serialize)]
pub(super) struct CellRow {
    pub(super) label: String,
    pub(super) target: String,
    pub(super) variant: String,
    pub(super) tool_choice: String,
    tool_definition_tokens: u64,
    trials: u64,
    scored: u64,
    errors: u64,
    pub(super) accuracy: RateView,
    precision: RateView,
    recall: RateView,
    param: RateView,
    arg_match: RateView,
    invalid: RateView,
    ungrounded: RateView,
    tokens_in: u64,
    tokens_out: u64,
    /// The cached, cache-write and reasoning parts in words; absent (so the report is
    /// as before) when none were reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_detail: Option<String>,
    estimated: u64,
    cost: String,
    p50: String,
    invalid_json: u64,
    unknown_tool: u64,
    schema_violation: u64,
    trials_with_ungrounded: u64,
    /// For the chart, not serialised.
    #[serde(skip)]
    pub(super) rates: [Rate; 6],
}

impl CellRow {
    /// The row of a cell named `label` with metrics `m`.
    pub(super) fn of(
        label: String,
        target: &str,
        variant: &str,
        mode: &str,
        tokens: u64,
        m: &Metrics,
    ) -> Self {
        CellRow {
            label,
            target: target.to_string(),
            variant: variant.to_string(),
            tool_choice: mode.to_string(),
            tool_definition_tokens: tokens,
            trials: m.trials,
            scored: m.scored,
            errors: m.errors,
            accuracy: RateView::of(&m.accuracy),
            precision: RateView::of(&m.trigger.precision),
            recall: RateView::of(&m.trigger.recall),
            param: RateView::of(&m.param_completeness),
            arg_match: RateView::of(&m.arg_match_rate),
            invalid: RateView::of(&m.invalid_call_rate),
            ungrounded: RateView::of(&m.ungrounded_rate),
            tokens_in: m.tokens.input,
            tokens_out: m.tokens.output,
            tokens_detail: format::token_details(&m.tokens),
            estimated: m.tokens.estimated_trials,
            cost: format::usd_or(m.cost_usd, "–"),
            p50: m
                .latency
                .p50_ms
                .map_or("–".into(), |l| format!("{l:.0} ms")),
            invalid_json: m.invalid_by_reason.invalid_json,
            unknown_tool: m.invalid_by_reason.unknown_tool,
            schema_violation: m.invalid_by_reason.schema_violation,
            trials_with_ungrounded: m.trials_with_ungrounded,
            rates: [
                m.accuracy,
                m.trigger.precision,
                m.trigger.recall,
                m.param_completeness,
                m.invalid_call_rate,
                m.ungrounded_rate,
            ],
        }
    }
}

/// Names of [`CellRow::rates`], in order.
pub(super) const CHART_METRICS: [&str; 6] = [
    "accuracy",
    "trigger precision",
    "trigger recall",
    "param completeness",
    "invalid-call rate",
    "ungrounded rate",
];

/// The cell rows and the cell of each trial: the summary's cells, in matrix order, then
/// any a trial names that the summary lacks (their metrics computed from their trials).
pub(super) fn cell_rows(report: &RunReport) -> (Vec<CellRow>, Vec<usize>) {
    let mut cells: Vec<CellRow> = report
        .summary
        .cells
        .iter()
        .map(|c| {
            let mode = summary::cell_mode(c);
            CellRow::of(
                cell_label(&c.target, &c.variant, &mode),
                &c.target,
                &c.variant,
                &mode,
                c.tool_definition_tokens,
                &c.metrics,
            )
        })
        .collect();
    let mut index: HashMap<(String, String, String), usize> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                (c.target.clone(), c.variant.clone(), c.tool_choice.clone()),
                i,
            )
        })
        .collect();
    let mut cell_index = Vec::with_capacity(report.trials.len());
    let mut extra: Vec<Vec<&TrialRecord>> = Vec::new();
    let first_extra = cells.len();
    for t in &report.trials {
        let key = (t.target.clone(), t.variant.clone(), trial_mode(t));
        let i = match index.get(&key) {
            Some(&i) => i,
            None => {
                let i = first_extra + extra.len();
                index.insert(key, i);
                extra.push(Vec::new());
                i
            }
        };
        if i >= first_extra {
            extra[i - first_extra].push(t);
        }
        cell_index.push(i);
    }
    for group in extra {
        let t = group[0];
        let mode = trial_mode(t);
        cells.push(CellRow::of(
            cell_label(&t.target, &t.variant, &mode),
            &t.target,
            &t.variant,
            &mode,
            variant_tokens(report, &t.variant),
            &Metrics::of(group.iter().copied()),
        ));
    }
    (cells, cell_index)
}

/// A trial's tool_choice as its cell names it: with the distractor count and the stream
/// mode, as the summary's cells are named.
fn trial_mode(t: &TrialRecord) -> String {
    summary::stream_mode_label(
        distractors::mode_label(
            &t.tool_choice.to_string(),
            crate::score::distractors::record_n(t),
        ),
        t.stream,
    )
}

/// A cell's label: `target × variant × tool_choice`.
pub(super) fn cell_label(target: &str, variant: &str, tool_choice: &str) -> String {
    format!("{target} × {variant} × {tool_choice}")
}

/// A variant's tool-definition tokens: the summary's, else `run.json`'s, else 0.
pub(super) fn variant_tokens(report: &RunReport, variant: &str) -> u64 {
    report
        .summary
        .variants
        .iter()
        .find(|v| v.variant == variant)
        .map(|v| v.tool_definition_tokens)
        .or_else(|| report.meta.tool_definition_tokens.get(variant).copied())
        .unwrap_or(0)
}
