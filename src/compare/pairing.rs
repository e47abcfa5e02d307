//! Pairing the two sides: trials (or summary cells) grouped into cells by the dimensions a
//! [`CellKey`] keeps, matched cell to cell, and paired inside a cell by `(case_id,
//! tool_choice, repeat)` (see the module documentation of `compare`).

use std::collections::HashSet;

use indexmap::IndexMap;

use super::comparison::{BinaryPairs, Unit};
use super::{
    CaseDiff, CellComparison, CellId, CellKey, Comparison, Flip, FlipDirection, MetricDelta,
    Paired, behaviour, metric_tests,
};
use crate::report::summary::{CellSummary, OUTCOME_ERROR, OUTCOME_FAIL, OUTCOME_PASS};
use crate::score::metrics::Metrics;
use crate::score::parts::CaseParts;
use crate::score::record::{TrialRecord, Verdict};
use crate::util::metric_names::METRIC_NAMES;

/// Compare two runs, matching cells on target, variant and tool_choice.
pub fn compare_runs(baseline: &[TrialRecord], candidate: &[TrialRecord]) -> Comparison {
    compare_runs_by(baseline, candidate, CellKey::ALL)
}

/// One side of a comparison: the trials of a journal, or the cells of a `summary.json`
/// (their per-trial outcomes and metrics).
#[derive(Debug, Clone, Copy)]
pub enum Side<'a> {
    /// Trials (a run's `trials.jsonl`).
    Trials(&'a [TrialRecord]),
    /// Summary cells (a run's `summary.json`, version 2 or later).
    Cells(&'a [CellSummary]),
}

/// Where an [`Item`] came from, for its side's metrics.
#[derive(Debug, Clone, Copy)]
enum Origin<'a> {
    Trial(&'a TrialRecord),
    /// Index into the side's summary cells.
    Cell(usize),
}

/// One trial of either side, as pairing sees it.
#[derive(Debug, Clone)]
struct Item<'a> {
    target: &'a str,
    variant: &'a str,
    tool_choice: String,
    /// The trial was streamed.
    stream: bool,
    case_id: &'a str,
    repeat: u32,
    verdict: Verdict,
    origin: Origin<'a>,
}

impl<'a> Item<'a> {
    /// The trial record behind the item, when the side is a journal.
    fn record(&self) -> Option<&'a TrialRecord> {
        match self.origin {
            Origin::Trial(t) => Some(t),
            Origin::Cell(_) => None,
        }
    }
}

impl<'a> Side<'a> {
    /// Whether the side has every trial's record (a journal), so metrics can be tested
    /// case by case.
    fn has_trials(self) -> bool {
        matches!(self, Side::Trials(_))
    }

    fn items(self) -> Vec<Item<'a>> {
        match self {
            Side::Trials(trials) => trials
                .iter()
                .map(|t| Item {
                    target: &t.target,
                    variant: &t.variant,
                    // A distractor count joins the mode: trials at two counts are two
                    // cells, and never pair with each other.
                    tool_choice: crate::report::distractors::mode_label(
                        &t.tool_choice.to_string(),
                        crate::score::distractors::record_n(t),
                    ),
                    stream: t.stream,
                    case_id: &t.case_id,
                    repeat: t.repeat,
                    verdict: t.verdict,
                    origin: Origin::Trial(t),
                })
                .collect(),
            Side::Cells(cells) => {
                let mut out = Vec::new();
                for (i, c) in cells.iter().enumerate() {
                    for (case, chars) in &c.outcomes {
                        for (repeat, ch) in chars.chars().enumerate() {
                            let verdict = match ch {
                                OUTCOME_PASS => Verdict::Pass,
                                OUTCOME_FAIL => Verdict::Fail,
                                OUTCOME_ERROR => Verdict::Error,
                                _ => continue,
                            };
                            out.push(Item {
                                target: &c.target,
                                variant: &c.variant,
                                tool_choice: crate::report::distractors::mode_label(
                                    &c.tool_choice,
                                    c.distractors,
                                ),
                                stream: c.stream,
                                case_id: case,
                                repeat: repeat as u32,
                                verdict,
                                origin: Origin::Cell(i),
                            });
                        }
                    }
                }
                out
            }
        }
    }

    /// The metrics of the items of one matched cell: computed from trials, or the summary
    /// cell's own when the items are exactly one summary cell. `None` when summary cells
    /// were merged (their metrics can not be combined) or there are no items.
    fn metrics(self, items: &[&Item<'_>]) -> Option<Metrics> {
        let first = items.first()?;
        match (self, first.origin) {
            (Side::Cells(cells), Origin::Cell(i)) => items
                .iter()
                .all(|t| matches!(t.origin, Origin::Cell(j) if j == i))
                .then(|| cells[i].metrics.clone()),
            _ => Some(Metrics::of(items.iter().filter_map(|t| match t.origin {
                Origin::Trial(r) => Some(r),
                Origin::Cell(_) => None,
            }))),
        }
    }
}

/// Compare two runs, matching cells on the dimensions `key` keeps.
pub fn compare_runs_by(
    baseline: &[TrialRecord],
    candidate: &[TrialRecord],
    key: CellKey,
) -> Comparison {
    compare_sides(Side::Trials(baseline), Side::Trials(candidate), key)
}

/// Compare two sides of any kind, matching cells on the dimensions `key` keeps.
pub fn compare_sides(baseline: Side<'_>, candidate: Side<'_>, key: CellKey) -> Comparison {
    type Sides<'a, 'b> = (Vec<&'b Item<'a>>, Vec<&'b Item<'a>>);
    let project = |t: &Item<'_>| {
        (
            key.target.then(|| t.target.to_string()),
            key.variant.then(|| t.variant.to_string()),
            key.tool_choice.then(|| t.tool_choice.clone()),
            key.stream.then_some(t.stream),
        )
    };
    let (b_items, c_items) = (baseline.items(), candidate.items());
    let mut cells: IndexMap<_, Sides<'_, '_>> = IndexMap::new();
    for t in &b_items {
        cells.entry(project(t)).or_default().0.push(t);
    }
    for t in &c_items {
        cells.entry(project(t)).or_default().1.push(t);
    }
    let per_case = baseline.has_trials() && candidate.has_trials();
    let cells: Vec<CellComparison> = cells
        .into_values()
        .map(|(b, c)| {
            let metrics = (baseline.metrics(&b), candidate.metrics(&c));
            compare_cell(&b, &c, metrics, per_case)
        })
        .collect();
    let sum = |f: fn(&CellComparison) -> u64| cells.iter().map(f).sum::<u64>();
    // A case in two cells (two targets, variants or tool_choices) is two units, as its
    // pairs are two pairs to McNemar with one repeat.
    let all_cases: Vec<CaseDiff> = cells
        .iter()
        .flat_map(|c| c.case_diffs.iter().copied())
        .collect();
    let overall = Paired::from_cases(
        sum(|c| c.paired.n11),
        sum(|c| c.paired.n10),
        sum(|c| c.paired.n01),
        sum(|c| c.paired.n00),
        &all_cases,
    );
    let overall_metrics = match cells.as_slice() {
        [one] => one.metrics.clone(),
        _ => {
            let b: Vec<&Item<'_>> = b_items.iter().collect();
            let c: Vec<&Item<'_>> = c_items.iter().collect();
            let mut metrics = metric_deltas(
                baseline.metrics(&b).as_ref(),
                candidate.metrics(&c).as_ref(),
            );
            let mut loop_pairs = BinaryPairs::default();
            let mut units = Vec::new();
            for cell in &cells {
                loop_pairs.extend(&cell.loop_pairs);
                units.extend(cell.units.iter().cloned());
            }
            let units = per_case.then_some(units.as_slice());
            metric_tests::attach(&mut metrics, &overall, &all_cases, &loop_pairs, units);
            metrics
        }
    };
    Comparison {
        key,
        overall,
        overall_metrics,
        suite_thresholds: Vec::new(),
        gates: Vec::new(),
        only_baseline: sum(|c| c.only_baseline),
        only_candidate: sum(|c| c.only_candidate),
        unscored_pairs: sum(|c| c.unscored_pairs),
        duplicates: sum(|c| c.duplicates_baseline + c.duplicates_candidate),
        cells,
    }
}

/// Compare description variant `a` (baseline) with variant `b` (candidate) inside one
/// run: trials pair when they differ only in variant.
pub fn compare_variants(trials: &[TrialRecord], a: &str, b: &str) -> Comparison {
    let side = |v: &str| -> Vec<TrialRecord> {
        trials.iter().filter(|t| t.variant == v).cloned().collect()
    };
    compare_runs_by(&side(a), &side(b), CellKey::IGNORE_VARIANT)
}

/// [`compare_variants`] over a summary's cells.
pub fn compare_variants_of_cells(cells: &[CellSummary], a: &str, b: &str) -> Comparison {
    let side = |v: &str| -> Vec<CellSummary> {
        cells.iter().filter(|c| c.variant == v).cloned().collect()
    };
    let (sa, sb) = (side(a), side(b));
    compare_sides(Side::Cells(&sa), Side::Cells(&sb), CellKey::IGNORE_VARIANT)
}

/// The unstreamed trials of one run (baseline) against its streamed ones (candidate),
/// made with `--stream both`: trials pair when they differ only in the stream mode.
pub fn compare_streamed(trials: &[TrialRecord]) -> Comparison {
    let side = |stream: bool| -> Vec<TrialRecord> {
        trials
            .iter()
            .filter(|t| t.stream == stream)
            .cloned()
            .collect()
    };
    compare_runs_by(&side(false), &side(true), CellKey::IGNORE_STREAM)
}

/// [`compare_streamed`] over a summary's cells.
pub fn compare_streamed_cells(cells: &[CellSummary]) -> Comparison {
    let side = |stream: bool| -> Vec<CellSummary> {
        cells
            .iter()
            .filter(|c| c.stream == stream)
            .cloned()
            .collect()
    };
    let (sa, sb) = (side(false), side(true));
    compare_sides(Side::Cells(&sa), Side::Cells(&sb), CellKey::IGNORE_STREAM)
}

/// What pairs a trial with its counterpart on the other side: its case, tool_choice
/// and repeat inside a cell. Not a trial's identity in a run
/// ([`crate::score::record::TrialId`], which also names the target and variant): the
/// two sides of a comparison differ in those by design.
type PairKey<'a> = (&'a str, &'a str, u32);

/// Index one side's items by identity, counting repeats of an identity.
fn index<'a, 'b>(items: &[&'b Item<'a>]) -> (IndexMap<PairKey<'b>, &'b Item<'a>>, u64) {
    let mut map = IndexMap::new();
    let mut duplicates = 0;
    for t in items {
        let id = (t.case_id, t.tool_choice.as_str(), t.repeat);
        if map.contains_key(&id) {
            duplicates += 1;
        } else {
            map.insert(id, *t);
        }
    }
    (map, duplicates)
}

/// The values of one dimension on one side, distinct, in order, joined with `+`.
fn joined<'a: 'b, 'b>(items: &[&'b Item<'a>], f: impl Fn(&'b Item<'a>) -> &'b str) -> String {
    let mut seen = HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for t in items {
        let v = f(t);
        if seen.insert(v) {
            out.push(v);
        }
    }
    out.join("+")
}

fn cell_id(items: &[&Item<'_>]) -> Option<CellId> {
    use crate::score::stream::{NO_STREAM_LABEL, STREAM_LABEL};
    let streamed = items.iter().any(|t| t.stream);
    (!items.is_empty()).then(|| CellId {
        target: joined(items, |t| t.target),
        variant: joined(items, |t| t.variant),
        tool_choice: joined(items, |t| &t.tool_choice),
        stream: if streamed {
            joined(items, |t| {
                if t.stream {
                    STREAM_LABEL
                } else {
                    NO_STREAM_LABEL
                }
            })
        } else {
            String::new()
        },
    })
}

fn label(b: Option<&CellId>, c: Option<&CellId>) -> String {
    match (b, c) {
        (Some(b), Some(c)) => {
            let part = |x: &str, y: &str| {
                if x == y {
                    x.to_string()
                } else {
                    format!("{x} → {y}")
                }
            };
            let mut s = format!(
                "{} × {} × {}",
                part(&b.target, &c.target),
                part(&b.variant, &c.variant),
                part(&b.tool_choice, &c.tool_choice)
            );
            // The stream mode, when either side streamed: an unstreamed side (no mode
            // shown on its own) reads `no stream` next to a streamed one.
            if !(b.stream.is_empty() && c.stream.is_empty()) {
                let shown = |x: &str| {
                    if x.is_empty() {
                        crate::score::stream::NO_STREAM_LABEL.to_string()
                    } else {
                        x.to_string()
                    }
                };
                s.push_str(" × ");
                s.push_str(&part(&shown(&b.stream), &shown(&c.stream)));
            }
            s
        }
        (Some(x), None) | (None, Some(x)) => x.to_string(),
        (None, None) => String::new(),
    }
}

/// Every metric's delta between `b` and `c`: those of
/// [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES), then the loop, behaviour and
/// stream metrics when a side has them (so comparisons of other runs list what they
/// always did); no test yet.
fn metric_deltas(b: Option<&Metrics>, c: Option<&Metrics>) -> Vec<MetricDelta> {
    let mut metrics: Vec<MetricDelta> = METRIC_NAMES
        .iter()
        .map(|name| {
            MetricDelta::new(
                name,
                b.and_then(|m| m.value(name)),
                c.and_then(|m| m.value(name)),
            )
        })
        .collect();
    metrics.extend(loop_deltas(b, c));
    metrics.extend(behaviour::deltas(b, c));
    metrics.extend(stream_deltas(b, c));
    metrics
}

/// The cases (case id and tool_choice) both sides ran, with every trial of each (errored
/// and duplicate ones too, as the metrics count them), in the baseline's order.
fn common_units(baseline: &[&Item<'_>], candidate: &[&Item<'_>]) -> Vec<Unit> {
    fn by_case<'a>(items: &[&Item<'a>]) -> IndexMap<(&'a str, String), Vec<&'a TrialRecord>> {
        let mut out: IndexMap<(&str, String), Vec<&TrialRecord>> = IndexMap::new();
        for t in items {
            if let Some(r) = t.record() {
                out.entry((t.case_id, t.tool_choice.clone()))
                    .or_default()
                    .push(r);
            }
        }
        out
    }
    let (b, c) = (by_case(baseline), by_case(candidate));
    b.iter()
        .filter_map(|(key, bt)| {
            let ct = c.get(key)?;
            Some(Unit {
                baseline: CaseParts::of(bt.iter().copied()),
                candidate: CaseParts::of(ct.iter().copied()),
            })
        })
        .collect()
}

fn compare_cell(
    baseline: &[&Item<'_>],
    candidate: &[&Item<'_>],
    (mb, mc): (Option<Metrics>, Option<Metrics>),
    per_case: bool,
) -> CellComparison {
    let (bi, duplicates_baseline) = index(baseline);
    let (ci, duplicates_candidate) = index(candidate);
    let (mut n11, mut n10, mut n01, mut n00) = (0, 0, 0, 0);
    let (mut only_baseline, mut unscored_pairs) = (0, 0);
    let mut flips = Vec::new();
    // Per case (case id and tool_choice): scored pairs and candidate-minus-baseline passes.
    let mut by_case: IndexMap<(&str, &str), CaseDiff> = IndexMap::new();
    // The same for the pairs of loop trials (`task_success`), with each side's passes.
    let mut loop_by_case: IndexMap<(&str, &str), CaseDiff> = IndexMap::new();
    let mut loop_pairs = BinaryPairs::default();
    for (id, bt) in &bi {
        let Some(ct) = ci.get(id) else {
            only_baseline += 1;
            continue;
        };
        if bt.verdict == Verdict::Error || ct.verdict == Verdict::Error {
            unscored_pairs += 1;
            continue;
        }
        let passed = |t: &Item<'_>| t.verdict == Verdict::Pass;
        let unit = by_case.entry((id.0, id.1)).or_default();
        unit.pairs += 1;
        unit.diff += i64::from(passed(ct)) - i64::from(passed(bt));
        let is_loop = |t: &Item<'_>| t.record().is_some_and(TrialRecord::is_loop);
        if is_loop(bt) && is_loop(ct) {
            let unit = loop_by_case.entry((id.0, id.1)).or_default();
            unit.pairs += 1;
            unit.diff += i64::from(passed(ct)) - i64::from(passed(bt));
            loop_pairs.baseline_passed += u64::from(passed(bt));
            loop_pairs.candidate_passed += u64::from(passed(ct));
        }
        let direction = match (passed(bt), passed(ct)) {
            (true, true) => {
                n11 += 1;
                continue;
            }
            (false, false) => {
                n00 += 1;
                continue;
            }
            (true, false) => {
                n10 += 1;
                FlipDirection::PassToFail
            }
            (false, true) => {
                n01 += 1;
                FlipDirection::FailToPass
            }
        };
        // What the candidate got wrong, for a regression: the first of its reasons.
        let reason = match direction {
            FlipDirection::PassToFail => ct.record().and_then(|r| r.reasons.first().cloned()),
            FlipDirection::FailToPass => None,
        };
        flips.push(Flip {
            case_id: id.0.to_string(),
            tool_choice: id.1.to_string(),
            repeat: id.2,
            direction,
            reason,
        });
    }
    flips.sort_by(|x, y| {
        (&x.case_id, &x.tool_choice, x.repeat).cmp(&(&y.case_id, &y.tool_choice, y.repeat))
    });
    let only_candidate = ci.keys().filter(|id| !bi.contains_key(*id)).count() as u64;

    let case_diffs: Vec<CaseDiff> = by_case.into_values().collect();
    loop_pairs.cases = loop_by_case.into_values().collect();
    let paired = Paired::from_cases(n11, n10, n01, n00, &case_diffs);
    let units = if per_case {
        common_units(baseline, candidate)
    } else {
        Vec::new()
    };
    let mut metrics = metric_deltas(mb.as_ref(), mc.as_ref());
    metric_tests::attach(
        &mut metrics,
        &paired,
        &case_diffs,
        &loop_pairs,
        per_case.then_some(units.as_slice()),
    );
    let (b_id, c_id) = (cell_id(baseline), cell_id(candidate));
    CellComparison {
        cell: label(b_id.as_ref(), c_id.as_ref()),
        baseline: b_id,
        candidate: c_id,
        paired,
        flips,
        only_baseline,
        only_candidate,
        unscored_pairs,
        duplicates_baseline,
        duplicates_candidate,
        metrics,
        case_diffs,
        units,
        loop_pairs,
    }
}

/// The loop rates ([`crate::score::loops::LOOP_METRICS`]); empty when neither side has
/// loop trials, so comparisons of single-turn runs list the metrics they always did.
fn loop_deltas(b: Option<&Metrics>, c: Option<&Metrics>) -> Vec<MetricDelta> {
    let (bl, cl) = (
        b.and_then(|m| m.loops.as_ref()),
        c.and_then(|m| m.loops.as_ref()),
    );
    if bl.is_none() && cl.is_none() {
        return Vec::new();
    }
    crate::score::loops::LOOP_METRICS
        .iter()
        .map(|name| {
            MetricDelta::new(
                name,
                bl.and_then(|m| m.value(name)),
                cl.and_then(|m| m.value(name)),
            )
        })
        .collect()
}

/// The timing deltas of streamed answers (time to first token and to the first
/// tool-call byte, [`crate::score::stream::STREAM_METRICS`]); empty when neither side
/// streamed, so comparisons of other runs list the metrics they always did. Against an
/// unstreamed side the values of that side are undefined, and so are the deltas: total
/// latency (`latency_p50_ms`) is the figure both sides share.
fn stream_deltas(b: Option<&Metrics>, c: Option<&Metrics>) -> Vec<MetricDelta> {
    let (bs, cs) = (
        b.and_then(|m| m.stream.as_ref()),
        c.and_then(|m| m.stream.as_ref()),
    );
    if bs.is_none() && cs.is_none() {
        return Vec::new();
    }
    crate::score::stream::STREAM_METRICS
        .iter()
        .map(|name| {
            MetricDelta::new(
                name,
                bs.and_then(|m| m.value(name)),
                cs.and_then(|m| m.value(name)),
            )
        })
        .collect()
}
