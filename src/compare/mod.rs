//! Comparing two sets of trials: a baseline and a candidate (two runs, or two description
//! variants inside one run).
//!
//! # Pairing
//!
//! Trials are first grouped into cells. By default a cell is `target × variant ×
//! tool_choice` and a baseline cell is matched with the candidate cell of the same name;
//! a [`CellKey`] can leave dimensions out of the match, which is how a live model is
//! compared with a new one (ignore `target`) or one variant with another (ignore
//! `variant`). Inside a matched cell, a trial is identified by `(case_id, tool_choice,
//! repeat)`; the baseline and candidate trials with the same identity form a pair.
//!
//! Only pairs where both trials were scored (verdict pass or fail) enter the test. Nothing
//! is dropped silently: trials with no partner on the other side are counted as
//! `only_baseline` / `only_candidate`, pairs where either side errored as
//! `unscored_pairs`, and a second trial with an identity already seen on the same side
//! (possible when a [`CellKey`] merges several targets into one cell) as a duplicate.
//!
//! # The test
//!
//! Each scored pair is one of: both pass (`n11`), pass → fail (`n10`), fail → pass
//! (`n01`), both fail (`n00`). Accuracies and the delta (in percentage points) are
//! computed on the scored pairs only, so both sides are measured on the same trials.
//!
//! The unit of the test and of the interval is the *case* (a case id with its
//! tool_choice, in one cell): repeats of a case are not independent samples, since a case
//! that a model gets wrong tends to be wrong in every repeat. When every case has one
//! scored pair the test is the exact McNemar test ([`mcnemar_exact`]: under "no
//! difference" `n10` ~ Binomial(`n10 + n01`, ½)); with repeats it is the exact sign-flip
//! test on the per-case differences of pass rates ([`crate::score::stats::paired_test`]),
//! which equals McNemar when each case has one pair. The 95% interval of the delta is
//! cluster-robust with cases as clusters
//! ([`crate::score::stats::paired_delta_interval`]). A cell is `significant` when
//! p < 0.05; [`Paired::test`] says which test ran. The pooled (`overall`) row treats the
//! same case in two cells as two units.
//!
//! Per-metric deltas (every metric in
//! [`METRIC_NAMES`](crate::util::metric_names::METRIC_NAMES), and the loop, behaviour and
//! stream metrics when a side has them, see [`behaviour`]) are computed with
//! [`Metrics::of`](crate::score::metrics::Metrics::of) over all of each side's trials in
//! the cell, paired or not. Each gets a [`MetricTest`] over the cases both sides ran: the
//! paired test above for the pass/fail metrics (`accuracy`, `task_success`), the paired
//! bootstrap by case ([`crate::score::resample`]) for the others, with the smallest
//! p-value its changed cases could reach.
//!
//! # Layout
//!
//! `key` says which cells match ([`CellKey`]), `pairing` pairs the trials of matched cells
//! into the results of `comparison`, `metric_tests` tests every metric's delta, `gate`
//! defines a [`Gate`] and its failures and `checks` applies it (with what each gated row
//! could detect, [`GateCheck`]), and `terminal`, `markdown` and [`html`] render it (with
//! the figures of `text` and the metric tables of `metrics_view` they share).

pub mod behaviour;
mod checks;
mod comparison;
mod gate;
pub mod html;
mod key;
mod markdown;
mod metric_tests;
mod metrics_view;
mod pairing;
mod terminal;
mod text;

pub use self::checks::{GateCheck, GateVerdict, check_gates, gate_checks};
pub use self::comparison::{
    Better, CellComparison, Comparison, Flip, FlipDirection, Method, MetricDelta, MetricTest,
    Paired,
};
pub use self::gate::{Gate, GateFailure, Limit};
pub use self::key::{CellId, CellKey};
pub use self::markdown::render_markdown;
pub use self::pairing::{
    Side, compare_runs, compare_runs_by, compare_sides, compare_streamed, compare_streamed_cells,
    compare_variants, compare_variants_of_cells,
};
pub use self::terminal::render_terminal;
pub use self::text::test_note;
pub use crate::score::stats::{CaseDiff, PairedTest, mcnemar_exact};

/// Significance level of the paired test.
pub const ALPHA: f64 = 0.05;

#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod tests;
