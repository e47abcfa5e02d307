//! The comparison as a terminal table.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Table, presets};

use super::text::{interval, p_cell, p_header, pct, points, test_note, unpaired_notes, yes_no};
use super::{Comparison, Paired, behaviour, metrics_view};

/// A terminal table: one row per cell (pairs, both accuracies, delta in points with its
/// 95% interval, the paired test's p, significance, flips as `↓pass→fail ↑fail→pass`),
/// an overall row when there are several cells, then the test used, notes on unpaired
/// trials, the behaviour table, every metric's delta with its test, and the regression
/// gates with what each could detect.
pub fn render_terminal(c: &Comparison) -> String {
    let mut table = Table::new();
    table.load_style(presets::UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "cell".to_string(),
        "n paired".to_string(),
        "baseline".to_string(),
        "candidate".to_string(),
        "delta (pts)".to_string(),
        "95% CI".to_string(),
        p_header(c),
        "significant".to_string(),
        "flips ↓/↑".to_string(),
    ]);
    let row = |label: &str, p: &Paired| -> Vec<Cell> {
        vec![
            Cell::new(label),
            Cell::new(p.n).set_alignment(CellAlignment::Right),
            Cell::new(pct(p.baseline_accuracy)).set_alignment(CellAlignment::Right),
            Cell::new(pct(p.candidate_accuracy)).set_alignment(CellAlignment::Right),
            Cell::new(points(p.delta_points)).set_alignment(CellAlignment::Right),
            Cell::new(interval(p)).set_alignment(CellAlignment::Right),
            Cell::new(p_cell(p)).set_alignment(CellAlignment::Right),
            Cell::new(yes_no(p)),
            Cell::new(format!("↓{} ↑{}", p.n10, p.n01)),
        ]
    };
    for cell in &c.cells {
        table.add_row(row(&cell.cell, &cell.paired));
    }
    if c.cells.len() > 1 {
        table.add_row(row("overall", &c.overall));
    }
    let mut out = format!("{table}\n{}\n", test_note(c));
    for note in unpaired_notes(c) {
        let _ = writeln!(out, "{note}");
    }
    out.push_str(&behaviour::terminal(c));
    out.push_str(&metrics_view::terminal(c));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare_runs;
    use crate::compare::tests::{T, runs};

    #[test]
    fn terminal_table() {
        let (mut b, mut c) = runs("clear", 26, 10, 0, 4);
        let (b2, c2) = runs("terse", 34, 2, 1, 3);
        b.extend(b2);
        c.extend(c2);
        let out = render_terminal(&compare_runs(&b, &c));
        for needle in [
            "n paired",
            "McNemar p",
            &format!("{T} × clear × auto"),
            "90.0%",
            "65.0%",
            "-25.0",
            "0.002",
            "yes",
            "↓10 ↑0",
            "87.5%",
            "-2.5",
            "1.000",
            "↓2 ↑1",
            "overall",
        ] {
            assert!(out.contains(needle), "{needle:?} missing from\n{out}");
        }
        // Everything paired: no notes.
        assert!(!out.contains("partner"));
    }
}
