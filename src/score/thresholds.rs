//! Checking a run's metrics against the suite's thresholds (the exit code's input).

use serde::Serialize;

use super::metrics::Metrics;
use crate::suite::Threshold;

/// One threshold checked on one scope.
#[derive(Debug, Clone, Serialize)]
pub struct ThresholdResult {
    /// The metric.
    pub metric: String,
    /// `overall`, or the cell (`target × variant × tool_choice`).
    pub scope: String,
    /// The measured value (`None`: not defined for this scope, e.g. no calls made).
    pub value: Option<f64>,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// True when the bound holds. An undefined value fails: a gate that can not be
    /// measured must not pass silently.
    pub ok: bool,
}

/// A cell's identity and metrics, as thresholds see them.
pub struct CellView<'a> {
    /// Target as written.
    pub target: &'a str,
    /// Variant.
    pub variant: &'a str,
    /// tool_choice as text.
    pub tool_choice: String,
    /// Metrics.
    pub metrics: &'a Metrics,
}

/// Check every threshold: overall ones against `overall`, filtered ones against each
/// matching cell.
pub fn check(
    thresholds: &[Threshold],
    overall: &Metrics,
    cells: &[CellView<'_>],
) -> Vec<ThresholdResult> {
    let mut out = Vec::new();
    for t in thresholds {
        let mut judge = |scope: String, m: &Metrics| {
            let value = m.value(&t.metric);
            let ok = value
                .is_some_and(|v| t.min.is_none_or(|lo| v >= lo) && t.max.is_none_or(|hi| v <= hi));
            out.push(ThresholdResult {
                metric: t.metric.clone(),
                scope,
                value,
                min: t.min,
                max: t.max,
                ok,
            });
        };
        if !t.is_per_cell() {
            judge("overall".into(), overall);
            continue;
        }
        let mut matched = false;
        for c in cells {
            let fits = t.variant.as_deref().is_none_or(|v| v == c.variant)
                && t.target.as_deref().is_none_or(|v| v == c.target)
                && t.tool_choice
                    .as_ref()
                    .is_none_or(|m| m.to_string() == c.tool_choice);
            if fits {
                matched = true;
                judge(
                    format!("{} × {} × {}", c.target, c.variant, c.tool_choice),
                    c.metrics,
                );
            }
        }
        if !matched {
            out.push(ThresholdResult {
                metric: t.metric.clone(),
                scope: "no cell of this run matches the threshold's filter".into(),
                value: None,
                min: t.min,
                max: t.max,
                ok: false,
            });
        }
    }
    out
}
