//! The description variants side by side: each variant's size and accuracy, the accuracy
//! of each target × tool_choice under each variant, the tools' wording and system prompts
//! per variant, and the cases that pass under one variant and fail under another.

use indexmap::IndexMap;
use serde::Serialize;

use super::cells::{CellRow, RateView, variant_tokens};
use crate::report::{RunMeta, RunReport, format};
use crate::score::Verdict;
use crate::score::metrics::Metrics;
use crate::score::stats::Rate;

/// Rows of the flip table before "and N more".
const MAX_FLIPS: usize = 500;

/// One variant: its size, what it changes and its accuracy over all of its trials.
#[derive(Serialize)]
pub(super) struct VariantRow {
    pub(super) variant: String,
    tokens: u64,
    /// System-prompt tokens (when some variant sets its own system prompt).
    pub(super) system_tokens: Option<u64>,
    /// What the variant changes, in words ("" for nothing).
    pub(super) changes: String,
    trials: u64,
    accuracy: RateView,
    /// Input / output tokens with their cached, cache-write and reasoning parts, and
    /// the cost, over all of the variant's trials: set only when some trial of the
    /// run reported such parts (the table then gains the columns), so the cost of a
    /// wording can be read at the rates the providers bill.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<VariantUsage>,
}

/// What a variant's trials used and cost (see [`VariantRow::usage`]).
#[derive(Serialize)]
pub(super) struct VariantUsage {
    tokens: String,
    cost: String,
}

/// The system prompt a variant sends (when some variant sets its own).
#[derive(Serialize)]
pub(super) struct SystemPromptRow {
    variant: String,
    text: Option<String>,
}

/// One tool's description under each variant (only tools whose wording differs).
#[derive(Serialize)]
pub(super) struct DescriptionRow {
    tool: String,
    /// One per variant of `View::description_variants`; `None` when absent there.
    texts: Vec<Option<String>>,
}

/// One target × tool_choice: the accuracy under each variant.
#[derive(Serialize)]
pub(super) struct SideBySide {
    group: String,
    accuracy: Vec<Option<RateView>>,
}

/// A case's outcome under one variant: `✓ 2/2`, `✗ 0/2`, `~ 1/2` or `–`.
#[derive(Serialize)]
struct Outcome {
    text: String,
    class: &'static str,
}

/// A case that passes under one variant and fails under another.
#[derive(Serialize)]
pub(super) struct Flip {
    group: String,
    case: String,
    outcomes: Vec<Outcome>,
}

/// The variants with their accuracy over all of their trials, against their token size:
/// the rows of the table and the points of the chart. A variant the matrix names but no
/// trial ran is left out unless the summary records it.
pub(super) fn variant_rows(
    report: &RunReport,
    cells: &[CellRow],
) -> (Vec<VariantRow>, Vec<(String, u64, Rate)>) {
    let s = &report.summary;
    let mut variant_names: Vec<String> = s.variants.iter().map(|v| v.variant.clone()).collect();
    for v in report
        .meta
        .matrix
        .variants
        .iter()
        .chain(cells.iter().map(|c| &c.variant))
    {
        if !variant_names.contains(v) {
            variant_names.push(v.clone());
        }
    }
    let mut variants = Vec::new();
    let mut variant_points = Vec::new();
    for name in &variant_names {
        let vm = Metrics::of(report.trials.iter().filter(|t| &t.variant == name));
        let tokens = variant_tokens(report, name);
        if vm.trials == 0 && !s.variants.iter().any(|v| &v.variant == name) {
            continue;
        }
        variant_points.push((name.clone(), tokens, vm.accuracy));
        let recorded = s.variants.iter().find(|v| &v.variant == name);
        let usage = s.overall.tokens.has_details().then(|| VariantUsage {
            tokens: format!(
                "{} / {}{}",
                vm.tokens.input,
                vm.tokens.output,
                format::token_details(&vm.tokens).map_or(String::new(), |d| format!(" ({d})"))
            ),
            cost: format::usd_or(vm.cost_usd, "–"),
        });
        variants.push(VariantRow {
            variant: name.clone(),
            tokens,
            system_tokens: recorded.and_then(|v| v.system_prompt_tokens),
            changes: recorded.map(|v| v.changes.describe()).unwrap_or_default(),
            trials: vm.trials,
            accuracy: RateView::of(&vm.accuracy),
            usage,
        });
    }
    (variants, variant_points)
}

/// Each target × tool_choice with the accuracy of its cell under each of `variants`.
pub(super) fn side_by_side(cells: &[CellRow], variants: &[String]) -> Vec<SideBySide> {
    let mut groups: IndexMap<(String, String), Vec<Option<RateView>>> = IndexMap::new();
    for c in cells {
        let Some(vi) = variants.iter().position(|v| v == &c.variant) else {
            continue;
        };
        let row = groups
            .entry((c.target.clone(), c.tool_choice.clone()))
            .or_insert_with(|| (0..variants.len()).map(|_| None).collect());
        row[vi] = Some(c.accuracy.clone());
    }
    groups
        .into_iter()
        .map(|((target, mode), accuracy)| SideBySide {
            group: format!("{target} × {mode}"),
            accuracy,
        })
        .collect()
}

/// The system prompt of each variant that sets its own.
pub(super) fn system_prompts(meta: &RunMeta) -> Vec<SystemPromptRow> {
    meta.variant_details
        .iter()
        .filter(|(_, d)| d.system_prompt_tokens.is_some())
        .map(|(v, d)| SystemPromptRow {
            variant: v.clone(),
            text: d.system_prompt.clone(),
        })
        .collect()
}

/// The wording of each tool under each variant, from `run.json`: the variants, one row
/// per tool whose description differs between them, and the tools worded the same in all.
pub(super) fn descriptions(meta: &RunMeta) -> (Vec<String>, Vec<DescriptionRow>, Vec<String>) {
    let variants: Vec<String> = meta.tools.keys().cloned().collect();
    let mut tools: IndexMap<&str, Vec<Option<&str>>> = IndexMap::new();
    for (i, defs) in meta.tools.values().enumerate() {
        for d in defs {
            tools
                .entry(d.name.as_str())
                .or_insert_with(|| vec![None; variants.len()])[i] = Some(d.description.as_str());
        }
    }
    let (mut rows, mut same) = (Vec::new(), Vec::new());
    for (tool, texts) in tools {
        if texts.windows(2).all(|w| w[0] == w[1]) {
            same.push(tool.to_string());
        } else {
            rows.push(DescriptionRow {
                tool: tool.to_string(),
                texts: texts.iter().map(|t| t.map(str::to_string)).collect(),
            });
        }
    }
    (variants, rows, same)
}

/// A case in one target × tool_choice: (target, tool_choice, case id).
type CaseKey<'a> = (&'a str, String, &'a str);

/// Cases that pass under one variant and fail under another in the same target ×
/// tool_choice. A case passes under a variant when every scored repeat passed, fails
/// when none did; errored trials are left out. Returns the first [`MAX_FLIPS`] and the
/// total.
pub(super) fn flips(report: &RunReport, variants: &[String]) -> (Vec<Flip>, usize) {
    if variants.len() < 2 {
        return (Vec::new(), 0);
    }
    let mut by_case: IndexMap<CaseKey<'_>, Vec<(u32, u32)>> = IndexMap::new();
    for t in &report.trials {
        if t.verdict == Verdict::Error {
            continue;
        }
        let Some(vi) = variants.iter().position(|v| v == &t.variant) else {
            continue;
        };
        let e = by_case
            .entry((
                t.target.as_str(),
                t.tool_choice.to_string(),
                t.case_id.as_str(),
            ))
            .or_insert_with(|| vec![(0, 0); variants.len()]);
        e[vi].0 += u32::from(t.passed());
        e[vi].1 += 1;
    }
    let mut out = Vec::new();
    let mut total = 0;
    for ((target, mode, case), counts) in &by_case {
        let passes = counts.iter().any(|&(p, n)| n > 0 && p == n);
        let fails = counts.iter().any(|&(p, n)| n > 0 && p == 0);
        if !(passes && fails) {
            continue;
        }
        total += 1;
        if out.len() >= MAX_FLIPS {
            continue;
        }
        out.push(Flip {
            group: format!("{target} × {mode}"),
            case: (*case).to_string(),
            outcomes: counts
                .iter()
                .map(|&(p, n)| {
                    let class = match (p, n) {
                        (_, 0) => "none",
                        (p, n) if p == n => "pass",
                        (0, _) => "fail",
                        _ => "mixed",
                    };
                    let mark = match class {
                        "pass" => "✓ ",
                        "fail" => "✗ ",
                        "mixed" => "~ ",
                        _ => "",
                    };
                    Outcome {
                        text: if n == 0 {
                            "–".into()
                        } else {
                            format!("{mark}{p}/{n}")
                        },
                        class,
                    }
                })
                .collect(),
        });
    }
    (out, total)
}
