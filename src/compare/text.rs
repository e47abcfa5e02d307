//! The figures of a comparison as text, shared by the terminal table, the Markdown report
//! and the HTML page: percentages, points, p-values, intervals, the note naming the test
//! and the notes on unpaired trials.

use super::{Comparison, Paired, PairedTest};

/// A p-value as `= 0.123`, or `< 0.001`.
pub(super) fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("= {p:.3}")
    }
}

/// A fraction as a percentage, `-` when undefined.
pub(super) fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.1}%", x * 100.0))
}

/// Points with their sign, `-` when undefined.
pub(super) fn points(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:+.1}"))
}

/// The p-value column: `<0.001`, `0.123`, or `-` without pairs.
pub(super) fn p_cell(p: &Paired) -> String {
    if p.n == 0 {
        "-".to_string()
    } else if p.p_value < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{:.3}", p.p_value)
    }
}

/// The 95% interval of the delta in points, `[-38.9, -8.7]`; `-` without pairs.
pub(super) fn interval(p: &Paired) -> String {
    match (p.delta_low_points, p.delta_high_points) {
        (Some(lo), Some(hi)) => format!("[{lo:+.1}, {hi:+.1}]"),
        _ => "-".to_string(),
    }
}

/// The rows that ran a test: cells with pairs, and the pooled row when shown.
pub(super) fn tested(c: &Comparison) -> impl Iterator<Item = &Paired> {
    let overall = (c.cells.len() > 1).then_some(&c.overall);
    c.cells
        .iter()
        .map(|x| &x.paired)
        .chain(overall)
        .filter(|p| p.test != PairedTest::None)
}

/// The heading of the p-value column: the test's name when every row used the same one.
pub(super) fn p_header(c: &Comparison) -> String {
    let mut names: Vec<&str> = tested(c).map(|p| p.test.short()).collect();
    names.dedup();
    match names.as_slice() {
        [] => "McNemar p".to_string(),
        [one] => format!("{one} p"),
        _ => "p".to_string(),
    }
}

/// One sentence naming the test(s), the unit and the interval.
pub fn test_note(c: &Comparison) -> String {
    let mut tests: Vec<PairedTest> = Vec::new();
    for p in tested(c) {
        if !tests.contains(&p.test) {
            tests.push(p.test);
        }
    }
    if tests.is_empty() {
        return "Test: none, no scored pairs.".to_string();
    }
    let names: Vec<&str> = tests.iter().map(|t| t.describe()).collect();
    let o = &c.overall;
    format!(
        "Test: {}; significant at p < 0.05. Unit: the case ({} cases, up to {} scored \
         pairs each). 95% CI: interval of the delta in points, cluster-robust with cases as \
         clusters.",
        names.join(" / "),
        o.cases,
        o.max_pairs_per_case
    )
}

/// The significance column: `yes`, `no`, or `-` without pairs.
pub(super) fn yes_no(p: &Paired) -> &'static str {
    match (p.n, p.significant) {
        (0, _) => "-",
        (_, true) => "yes",
        (_, false) => "no",
    }
}

/// Notes on trials left out of the pairing, one line each; empty when none was.
pub(super) fn unpaired_notes(c: &Comparison) -> Vec<String> {
    let mut notes = Vec::new();
    if c.only_baseline > 0 {
        notes.push(format!(
            "{} baseline trials had no candidate partner",
            c.only_baseline
        ));
    }
    if c.only_candidate > 0 {
        notes.push(format!(
            "{} candidate trials had no baseline partner",
            c.only_candidate
        ));
    }
    if c.unscored_pairs > 0 {
        notes.push(format!(
            "{} pairs left out because a side errored",
            c.unscored_pairs
        ));
    }
    if c.duplicates > 0 {
        notes.push(format!(
            "{} duplicate trials left out (same case, tool_choice and repeat in one cell)",
            c.duplicates
        ));
    }
    notes
}

/// A p-value as `0.250`, or `< 0.001`.
pub(super) fn fmt_p_plain(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// F1 scores read as scores (`0.631`), not as percentages.
fn is_score(metric: &str) -> bool {
    metric.ends_with("f1")
}

/// A rate's value as people read it: `90.0%`, or `0.800` for an F1 score.
pub(super) fn rate(metric: &str, v: f64) -> String {
    if is_score(metric) {
        format!("{v:.3}")
    } else {
        format!("{:.1}%", v * 100.0)
    }
}

/// A metric's value in its unit: a rate as [`rate`], a cost in dollars, milliseconds
/// and tokens whole; `-` when undefined.
pub(super) fn metric_value(metric: &str, v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".to_string();
    };
    if crate::util::metric_names::is_rate(metric) {
        rate(metric, v)
    } else if metric.ends_with("_ms") {
        format!("{v:.0}")
    } else {
        crate::report::format::metric_value(metric, v)
    }
}

/// A difference of `metric` in its unit, signed: points for a rate (`-30.0 pts`), and
/// the amount's own unit otherwise; `-` when undefined.
pub(super) fn metric_change(metric: &str, d: Option<f64>) -> String {
    let Some(d) = d else {
        return "-".to_string();
    };
    if crate::util::metric_names::is_rate(metric) {
        format!("{:+.1} pts", d * 100.0)
    } else if metric == "cost_usd" {
        let s = crate::report::format::usd(d.abs());
        format!("{}{s}", if d < 0.0 { "-" } else { "+" })
    } else {
        format!("{d:+.0}")
    }
}

/// The 95% interval of a metric's delta, `[-64.5, +14.5]` (points for a rate); `-` when
/// undefined.
pub(super) fn metric_interval(metric: &str, low: Option<f64>, high: Option<f64>) -> String {
    let (Some(lo), Some(hi)) = (low, high) else {
        return "-".to_string();
    };
    if crate::util::metric_names::is_rate(metric) {
        format!("[{:+.1}, {:+.1}]", lo * 100.0, hi * 100.0)
    } else if metric == "cost_usd" {
        format!("[{lo:+.5}, {hi:+.5}]")
    } else {
        format!("[{lo:+.0}, {hi:+.0}]")
    }
}
