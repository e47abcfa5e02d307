//! The "Behaviour" section of `report.html`: per group (each cell with behaviour
//! metrics, and overall) a confusion-matrix table with counts and row percentages,
//! macro-F1 with its bootstrap interval, the two hallucination rates with their Wilson
//! intervals, and precision / recall / F1 per behaviour. Numbers are formatted here so
//! the template only lays them out.

use std::borrow::Cow;

use serde::Serialize;

use super::summary::Summary;
use crate::behaviour::Behaviour;
use crate::judge::model::JudgeCall;
use crate::score::behaviour::BehaviourMetrics;
use crate::score::stats::Rate;

/// A percentage with one decimal and its interval: (`25.0%`, `5–70%`); dashes when
/// undefined.
fn pct(v: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> (String, String) {
    match (v, lo, hi) {
        (Some(v), Some(lo), Some(hi)) => (
            format!("{:.1}%", v * 100.0),
            format!("{:.0}–{:.0}%", lo * 100.0, hi * 100.0),
        ),
        _ => ("–".into(), String::new()),
    }
}

/// A rate as the page shows it.
#[derive(Debug, Serialize)]
pub struct RateText {
    /// `25.0%` or `–`.
    pub v: String,
    /// `5–70%`, empty when undefined.
    pub ci: String,
    /// `1/4`.
    pub frac: String,
}

impl RateText {
    fn of(r: &Rate) -> RateText {
        let (v, ci) = pct(r.value, r.low, r.high);
        RateText {
            v,
            ci,
            frac: format!("{}/{}", r.num, r.den),
        }
    }
}

/// One matrix cell: its count and its share of the row.
#[derive(Debug, Serialize)]
pub struct MatrixCell {
    /// Trials.
    pub n: u64,
    /// Share of the row, `25%`.
    pub pct: String,
    /// The diagonal (expected = observed).
    pub right: bool,
}

/// One row of the matrix (an expected behaviour some trial had).
#[derive(Debug, Serialize)]
pub struct MatrixRow {
    /// The expected behaviour's label.
    pub expected: &'static str,
    /// One cell per observed behaviour, in [`Behaviour::ALL`] order.
    pub cells: Vec<MatrixCell>,
    /// The row's total.
    pub n: u64,
}

/// One behaviour's scores.
#[derive(Debug, Serialize)]
pub struct ScoreRow {
    /// Its label.
    pub behaviour: &'static str,
    /// Trials expecting it.
    pub support: u64,
    /// Precision.
    pub precision: RateText,
    /// Recall.
    pub recall: RateText,
    /// F1 with three decimals, `–` when undefined.
    pub f1: String,
}

/// One group's section.
#[derive(Debug, Serialize)]
pub struct GroupView {
    /// `target × variant × tool_choice` (with ` × N=n`), or `overall`.
    pub label: String,
    /// Trials in the matrix.
    pub trials: u64,
    /// Macro-F1, three decimals.
    pub macro_f1: String,
    /// Its interval, `0.293–0.896`.
    pub macro_f1_ci: String,
    /// The behaviours averaged over and the resampling, in words.
    pub macro_f1_note: String,
    /// Tool hallucination rate.
    pub tool_hallucination: RateText,
    /// Answer hallucination rate.
    pub answer_hallucination: RateText,
    /// Who decided the observed behaviours, in words.
    pub decided_by: String,
    /// The matrix rows with trials.
    pub matrix: Vec<MatrixRow>,
    /// Scores of the behaviours expected or shown.
    pub scores: Vec<ScoreRow>,
}

/// The section: the observed labels (columns) and one group per cell, then overall.
#[derive(Debug, Serialize)]
pub struct BehaviourView {
    /// Column labels.
    pub labels: Vec<&'static str>,
    /// Groups.
    pub groups: Vec<GroupView>,
}

fn group(label: String, m: &BehaviourMetrics) -> GroupView {
    let f = &m.macro_f1;
    let (macro_f1, macro_f1_ci) = match (f.value, f.low, f.high) {
        (Some(v), Some(lo), Some(hi)) => (format!("{v:.3}"), format!("{lo:.3}–{hi:.3}")),
        (Some(v), _, _) => (format!("{v:.3}"), String::new()),
        _ => ("–".into(), String::new()),
    };
    let unit = match f.unit {
        crate::score::behaviour::BootstrapUnit::Trial => "trials",
        crate::score::behaviour::BootstrapUnit::Case => "cases",
    };
    let matrix = m
        .confusion
        .iter()
        .filter_map(|(e, row)| {
            let n: u64 = row.iter().map(|(_, v)| *v).sum();
            (n > 0).then(|| MatrixRow {
                expected: e.label(),
                cells: row
                    .iter()
                    .map(|(o, v)| MatrixCell {
                        n: *v,
                        pct: format!("{:.0}%", *v as f64 * 100.0 / n as f64),
                        right: o == e,
                    })
                    .collect(),
                n,
            })
        })
        .collect();
    let scores = m
        .scores
        .iter()
        .filter(|(_, s)| s.support > 0 || s.predicted > 0)
        .map(|(b, s)| ScoreRow {
            behaviour: b.label(),
            support: s.support,
            precision: RateText::of(&s.precision),
            recall: RateText::of(&s.recall),
            f1: s.f1.map_or("–".into(), |v| format!("{v:.3}")),
        })
        .collect();
    GroupView {
        label,
        trials: m.trials,
        macro_f1,
        macro_f1_ci,
        macro_f1_note: format!(
            "mean F1 over {}; 95% percentile interval of {} bootstrap resamples of {} {unit}",
            f.behaviours.join(", "),
            f.resamples,
            f.units
        ),
        tool_hallucination: RateText::of(&m.tool_hallucination_rate),
        answer_hallucination: RateText::of(&m.answer_hallucination_rate),
        decided_by: super::behaviour::decided(m),
        matrix,
        scores,
    }
}

impl BehaviourView {
    /// The section of `summary`, or `None` when no trial expects a behaviour.
    pub fn build(summary: &Summary) -> Option<BehaviourView> {
        let overall = summary.overall.behaviour.as_ref()?;
        let mut groups: Vec<GroupView> = summary
            .cells
            .iter()
            .filter_map(|c| {
                let b = c.metrics.behaviour.as_ref()?;
                Some(group(c.label(), b))
            })
            .collect();
        groups.push(group("overall".into(), overall));
        Some(BehaviourView {
            labels: Behaviour::ALL.iter().map(|b| b.label()).collect(),
            groups,
        })
    }
}

/// The judge calls as embedded in a trial's detail: a rationale or error above
/// `too_long` is cut by `cut` (the journal keeps it whole). Copied only when cut.
pub fn embedded_judge<'a>(
    calls: &'a [JudgeCall],
    too_long: fn(&str) -> bool,
    cut: fn(&str) -> Option<String>,
) -> Cow<'a, [JudgeCall]> {
    let long = calls
        .iter()
        .any(|c| too_long(&c.rationale) || c.error.as_deref().is_some_and(too_long));
    if !long {
        return Cow::Borrowed(calls);
    }
    Cow::Owned(
        calls
            .iter()
            .map(|c| {
                let mut c = c.clone();
                if let Some(s) = cut(&c.rationale) {
                    c.rationale = s;
                }
                if let Some(s) = c.error.as_deref().and_then(cut) {
                    c.error = Some(s);
                }
                c
            })
            .collect(),
    )
}
