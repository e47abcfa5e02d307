//! The tool-loop section, when the run has loop trials: stop reasons per cell and overall,
//! and a tokens-per-round chart per cell (drawn by `report::loop_view`).

use serde::Serialize;

use crate::report::loop_view::{self, StopCounts};
use crate::score::TrialRecord;

/// One cell's row of the stop-reason table.
#[derive(Serialize)]
struct LoopCellRow {
    label: String,
    stops: StopCounts,
}

/// The tool-loop section, when the run has loop trials.
#[derive(Serialize)]
pub(super) struct LoopsView {
    /// Cells with loop trials, in the cell order of the page.
    cells: Vec<LoopCellRow>,
    /// Over every loop trial.
    overall: StopCounts,
    /// The tokens-per-round chart of each of `cells`, not serialised (the template gets
    /// them as safe strings).
    #[serde(skip)]
    pub(super) charts: Vec<String>,
}

impl LoopsView {
    /// The section for `trials` (in cell `cell_index[i]` of `labels`), or `None` when
    /// none of them is a loop trial.
    pub(super) fn build(
        trials: &[TrialRecord],
        cell_index: &[usize],
        labels: &[String],
    ) -> Option<Self> {
        if !trials.iter().any(TrialRecord::is_loop) {
            return None;
        }
        let mut by_cell: Vec<Vec<&TrialRecord>> = vec![Vec::new(); labels.len()];
        for (t, &c) in trials.iter().zip(cell_index) {
            if t.is_loop() {
                by_cell[c].push(t);
            }
        }
        let mut cells = Vec::new();
        let mut charts = Vec::new();
        for (label, group) in labels.iter().zip(&by_cell) {
            if group.is_empty() {
                continue;
            }
            let points = loop_view::tokens_per_round(group.iter().copied());
            charts.push(if points.is_empty() {
                r#"<p class="muted">no round got an answer</p>"#.to_string()
            } else {
                loop_view::tokens_chart(label, &points)
            });
            cells.push(LoopCellRow {
                label: label.clone(),
                stops: loop_view::stop_counts(group.iter().copied()),
            });
        }
        Some(LoopsView {
            cells,
            overall: loop_view::stop_counts(trials),
            charts,
        })
    }
}
