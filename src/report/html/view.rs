//! The view: everything the page's template shows, precomputed from a report in named
//! steps (the headline and thresholds here; cells, variants, confusion matrix, examples
//! and tool loops in their own files).

use std::collections::BTreeSet;

use serde::Serialize;

use super::cells::{self, CellRow, RateView};
use super::confusion::{self, Confusion, ConfusionRow, TopConfusion};
use super::examples::{Examples, InvalidExample, UngroundedExample};
use super::loops::LoopsView;
use super::variants::{self, DescriptionRow, Flip, SideBySide, SystemPromptRow, VariantRow};
use crate::report::behaviour_view::BehaviourView;
use crate::report::summary::Summary;
use crate::report::{RunReport, format};
use crate::score::stats::Rate;

/// The page's headline: the suite, the verdict, the counts and the run's settings.
#[derive(Serialize)]
struct Headline {
    suite: String,
    description: Option<String>,
    suite_path: String,
    suite_hash: String,
    verdict: &'static str,
    verdict_class: &'static str,
    trials: u64,
    planned: u64,
    passed: u64,
    failed: u64,
    errors: u64,
    accuracy: RateView,
    status: String,
    stopped: Option<String>,
    /// The part of the suite a partial run covers.
    selection: Option<String>,
    started: String,
    finished: String,
    version: String,
    targets: Vec<String>,
    variants: Vec<String>,
    tool_choice: Vec<String>,
    repeats: u32,
    sources: Vec<(String, String)>,
    /// Trials whose response carried warnings.
    warnings: usize,
}

/// One threshold of the suite, its bound and the value measured.
#[derive(Serialize)]
struct ThresholdRow {
    metric: String,
    scope: String,
    bound: String,
    value: String,
    ok: bool,
}

/// Everything the template shows, precomputed.
#[derive(Serialize)]
pub(super) struct View {
    headline: Headline,
    thresholds: Vec<ThresholdRow>,
    pub(super) cells: Vec<CellRow>,
    pub(super) overall: CellRow,
    variants: Vec<VariantRow>,
    /// Some variant records what it changes (the table gains a column).
    variant_changes: bool,
    /// Some variant sets its own system prompt (the table gains a column).
    variant_systems: bool,
    system_prompts: Vec<SystemPromptRow>,
    side_variants: Vec<String>,
    side_by_side: Vec<SideBySide>,
    description_variants: Vec<String>,
    descriptions: Vec<DescriptionRow>,
    same_descriptions: Vec<String>,
    flips: Vec<Flip>,
    flips_total: usize,
    confusion_labels: Vec<String>,
    confusion: Vec<ConfusionRow>,
    confusion_others: usize,
    confusion_top: Vec<TopConfusion>,
    confusion_top_total: usize,
    invalid_examples: Vec<InvalidExample>,
    invalid_total: usize,
    ungrounded_examples: Vec<UngroundedExample>,
    ungrounded_total: usize,
    /// The tool-loop section (stop reasons, tokens per round), when there are loop trials.
    pub(super) loops: Option<LoopsView>,
    /// The behaviour section (confusion matrices, macro-F1, hallucination rates), when
    /// some trial expects a behaviour.
    behaviour: Option<BehaviourView>,
    /// Some trial has behaviour facts or judge calls: its detail shows them.
    trial_behaviour: bool,
    kinds: Vec<&'static str>,
    pub(super) cell_labels: Vec<String>,
    /// For the chart, not serialised.
    #[serde(skip)]
    pub(super) variant_points: Vec<(String, u64, Rate)>,
    /// Cell of each trial, not serialised.
    #[serde(skip)]
    pub(super) cell_index: Vec<usize>,
}

impl View {
    /// The view of `report`, one named step per part of the page.
    pub(super) fn build(report: &RunReport) -> View {
        let (cells, cell_index) = cells::cell_rows(report);
        let cell_labels: Vec<String> = cells.iter().map(|c| c.label.clone()).collect();
        let overall = CellRow::of("overall".into(), "", "", "", 0, &report.summary.overall);
        let (variants, variant_points) = variants::variant_rows(report, &cells);
        let side_variants: Vec<String> = variants.iter().map(|v| v.variant.clone()).collect();
        let side_by_side = variants::side_by_side(&cells, &side_variants);
        let (flips, flips_total) = variants::flips(report, &side_variants);
        let (description_variants, descriptions, same_descriptions) =
            variants::descriptions(&report.meta);
        let Confusion {
            labels: confusion_labels,
            rows: confusion,
            others: confusion_others,
            top: confusion_top,
            top_total: confusion_top_total,
        } = confusion::confusion(&report.trials);
        let Examples {
            invalid: invalid_examples,
            invalid_total,
            ungrounded: ungrounded_examples,
            ungrounded_total,
        } = Examples::collect(report, &cell_labels, &cell_index);
        let kinds: BTreeSet<&'static str> = report.trials.iter().map(|t| t.kind.as_str()).collect();
        View {
            headline: headline(report),
            thresholds: thresholds(&report.summary),
            loops: LoopsView::build(&report.trials, &cell_index, &cell_labels),
            cells,
            overall,
            variant_changes: variants.iter().any(|v| !v.changes.is_empty()),
            variant_systems: variants.iter().any(|v| v.system_tokens.is_some()),
            system_prompts: variants::system_prompts(&report.meta),
            variants,
            side_variants,
            side_by_side,
            description_variants,
            descriptions,
            same_descriptions,
            flips,
            flips_total,
            confusion_labels,
            confusion,
            confusion_others,
            confusion_top,
            confusion_top_total,
            invalid_examples,
            invalid_total,
            ungrounded_examples,
            ungrounded_total,
            behaviour: BehaviourView::build(&report.summary),
            trial_behaviour: report.trials.iter().any(|t| {
                !t.judge.is_empty() || t.checks.as_ref().is_some_and(|c| c.behaviour.is_some())
            }),
            kinds: kinds.into_iter().collect(),
            cell_labels,
            variant_points,
            cell_index,
        }
    }
}

/// The headline: the verdict is `incomplete` when a trial errored, `failed` when a
/// threshold does not hold, else `passed`.
fn headline(report: &RunReport) -> Headline {
    let s = &report.summary;
    let meta = &report.meta;
    let m = &s.overall;
    let verdict = if m.errors > 0 {
        ("incomplete", "warn")
    } else if !s.thresholds_ok() {
        ("failed", "bad")
    } else {
        ("passed", "good")
    };
    Headline {
        suite: s.suite.clone(),
        description: meta.suite.description.clone(),
        suite_path: meta.suite.path.clone(),
        suite_hash: meta.suite.hash.chars().take(12).collect(),
        verdict: verdict.0,
        verdict_class: verdict.1,
        trials: m.trials,
        planned: meta.trials_planned,
        passed: m.passed,
        failed: m.scored - m.passed,
        errors: m.errors,
        accuracy: RateView::of(&m.accuracy),
        status: meta.status.clone(),
        stopped: s.stopped.clone().or_else(|| meta.stop_reason.clone()),
        selection: s.selection.clone(),
        started: meta.started_at.clone(),
        finished: meta.finished_at.clone().unwrap_or_else(|| "–".into()),
        version: meta.toolgauge_version.clone(),
        targets: meta.matrix.targets.clone(),
        variants: meta.matrix.variants.clone(),
        tool_choice: meta.matrix.tool_choice.clone(),
        repeats: meta.matrix.repeats,
        sources: meta
            .sources
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        warnings: s.warnings.len(),
    }
}

/// The suite's thresholds with their bounds and the values measured.
fn thresholds(s: &Summary) -> Vec<ThresholdRow> {
    s.thresholds
        .iter()
        .map(|t| ThresholdRow {
            metric: t.metric.clone(),
            scope: t.scope.clone(),
            bound: match (t.min, t.max) {
                (Some(lo), Some(hi)) => format!("{lo} – {hi}"),
                (Some(lo), None) => format!("≥ {lo}"),
                (None, Some(hi)) => format!("≤ {hi}"),
                (None, None) => String::new(),
            },
            value: t
                .value
                .map_or("undefined".into(), |v| format::metric_value(&t.metric, v)),
            ok: t.ok,
        })
        .collect()
}
