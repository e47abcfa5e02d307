//! The tool-count section of the reports (suites with `distractors:`): per series
//! (target × variant × tool_choice) and count N, the trials, selection accuracy,
//! false-call rate and mean tool-definition tokens per request, as a table and as an
//! inline SVG chart of the three against N.
//!
//! Definitions (docs/distractors.md):
//! - selection accuracy = trials whose first call named an expected tool / scored
//!   `should_call` trials;
//! - false-call rate = scored trials with a false call (a call of a distractor, or any
//!   call in a `should_not_call` trial) / scored trials;
//! - tool tokens = mean over the trials of the o200k_base size of the tool definitions
//!   each request offered.
//!
//! Errored trials count in `trials` and in the token mean (the request was built) but
//! not in either rate: they have no response to judge.

use std::fmt::Write as _;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::score::{TrialRecord, Verdict};

/// One series at one count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DistractorRow {
    /// Target as written.
    pub target: String,
    /// Variant.
    pub variant: String,
    /// tool_choice.
    pub tool_choice: String,
    /// Distractors added to each request.
    pub n: u32,
    /// Trials (errors included).
    pub trials: u32,
    /// Scored `should_call` trials.
    pub should_call: u32,
    /// Of those, the trials whose first call named an expected tool.
    pub selected: u32,
    /// `selected / should_call`; absent without scored `should_call` trials.
    pub selection_accuracy: Option<f64>,
    /// Scored trials.
    pub scored: u32,
    /// Scored trials with a false call.
    pub false_calls: u32,
    /// `false_calls / scored`; absent without scored trials.
    pub false_call_rate: Option<f64>,
    /// Calls of distractors, over all trials.
    pub distractor_calls: u32,
    /// Mean o200k_base tokens of the tool definitions per request.
    pub mean_tool_definition_tokens: f64,
}

impl DistractorRow {
    /// The series label, `target × variant × tool_choice`.
    pub fn series(&self) -> String {
        format!("{} × {} × {}", self.target, self.variant, self.tool_choice)
    }
}

fn ratio(num: u32, den: u32) -> Option<f64> {
    (den > 0).then(|| f64::from(num) / f64::from(den))
}

/// The rows of `trials` (records without tool-count facts are left out): series in
/// order of first appearance, counts ascending in each. Empty for runs without the axis.
pub fn rows(trials: &[TrialRecord]) -> Vec<DistractorRow> {
    type Key = (String, String, String);
    let mut series: IndexMap<Key, std::collections::BTreeMap<u32, DistractorRow>> = IndexMap::new();
    let mut tokens: std::collections::HashMap<(Key, u32), u64> = Default::default();
    for t in trials {
        let Some(f) = t.distractors else { continue };
        let key = (
            t.target.clone(),
            t.variant.clone(),
            t.tool_choice.to_string(),
        );
        let row = series
            .entry(key.clone())
            .or_default()
            .entry(f.n)
            .or_insert_with(|| DistractorRow {
                target: key.0.clone(),
                variant: key.1.clone(),
                tool_choice: key.2.clone(),
                n: f.n,
                trials: 0,
                should_call: 0,
                selected: 0,
                selection_accuracy: None,
                scored: 0,
                false_calls: 0,
                false_call_rate: None,
                distractor_calls: 0,
                mean_tool_definition_tokens: 0.0,
            });
        row.trials += 1;
        *tokens.entry((key, f.n)).or_default() += f.tool_definition_tokens;
        row.distractor_calls += f.distractor_calls;
        if t.verdict == Verdict::Error {
            continue;
        }
        row.scored += 1;
        row.false_calls += u32::from(f.false_call);
        if let Some(s) = f.selected {
            row.should_call += 1;
            row.selected += u32::from(s);
        }
    }
    let mut out = Vec::new();
    for (key, by_n) in series {
        for (n, mut row) in by_n {
            row.selection_accuracy = ratio(row.selected, row.should_call);
            row.false_call_rate = ratio(row.false_calls, row.scored);
            row.mean_tool_definition_tokens =
                tokens[&(key.clone(), n)] as f64 / f64::from(row.trials.max(1));
            out.push(row);
        }
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{:.1}%", v * 100.0))
}

/// The rows as plain-text lines for the terminal (one per series and count).
pub fn text(rows: &[DistractorRow]) -> String {
    let mut s = String::from("Tool-count scaling (distractors per request):\n");
    let width = rows
        .iter()
        .map(|r| r.series().chars().count())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        s,
        "  {:width$}  {:>5}  {:>6}  {:>9}  {:>10}  {:>11}",
        "series", "N", "trials", "selection", "false-call", "tool tokens"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "  {:width$}  {:>5}  {:>6}  {:>9}  {:>10}  {:>11.0}",
            r.series(),
            r.n,
            r.trials,
            pct(r.selection_accuracy),
            pct(r.false_call_rate),
            r.mean_tool_definition_tokens
        );
    }
    s
}

/// The rows as a Markdown section.
pub fn markdown(rows: &[DistractorRow]) -> String {
    let mut s = String::from(
        "**Tool-count scaling**\n\nSelection accuracy (first call names an expected tool, of `should_call` trials), false-call rate (a distractor called, or any call where none is due, of scored trials) and mean tool-definition tokens per request, by the number N of distractors added.\n\n| series | N | trials | selection accuracy | false-call rate | tool tokens |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({}/{}) | {} ({}/{}) | {:.0} |",
            r.series().replace('|', "\\|"),
            r.n,
            r.trials,
            pct(r.selection_accuracy),
            r.selected,
            r.should_call,
            pct(r.false_call_rate),
            r.false_calls,
            r.scored,
            r.mean_tool_definition_tokens
        );
    }
    s
}

/// Series colours. A series is also told apart by its marker's shape, its line's dash
/// and a small sideways offset, so lines that coincide (two series with the same rates)
/// stay visible and the chart reads without colour.
const COLOURS: [&str; 6] = [
    "#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2",
];

/// Line dashes per series (none, dashed, dotted, dash-dot), cycled.
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// The marker of series `si` at (`x`, `y`): circle, square, triangle, diamond, cycled.
fn marker(si: usize, x: f64, y: f64, colour: &str) -> String {
    match si % 4 {
        0 => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" style="fill:{colour}"/>"#),
        1 => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" style="fill:{colour}"/>"#,
            x - 3.5,
            y - 3.5
        ),
        2 => format!(
            r#"<path d="M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z" style="fill:{colour}"/>"#,
            y - 4.5,
            x + 4.5,
            y + 3.5,
            x - 4.5,
            y + 3.5
        ),
        _ => format!(
            r#"<path d="M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}Z" style="fill:{colour}"/>"#,
            y - 4.5,
            x + 4.5,
            y + 4.5,
            x - 4.5
        ),
    }
}

/// The 95% Wilson interval of `num` of `den` (`None` without a denominator).
pub fn interval(num: u32, den: u32) -> Option<(f64, f64)> {
    (den > 0).then(|| crate::score::stats::wilson(num.into(), den.into(), crate::score::stats::Z95))
}

/// An interval as the page shows it next to a rate: `[12.3–45.6%]`, or empty.
pub fn interval_text(num: u32, den: u32) -> String {
    interval(num, den).map_or_else(String::new, |(lo, hi)| {
        format!("[{:.1}–{:.1}%]", lo * 100.0, hi * 100.0)
    })
}

/// A panel's value of a row: the value, and for a rate its numerator and denominator.
type Get = fn(&DistractorRow) -> Option<(f64, Option<(u32, u32)>)>;

/// A drawn point: x, y, its row, its value, and for a rate its numerator and denominator.
type Point<'a> = (f64, f64, &'a DistractorRow, f64, Option<(u32, u32)>);

/// Three panels side by side against N (selection accuracy, false-call rate, mean
/// tool-definition tokens), one line per series; an inline SVG with escaped labels.
///
/// The N axis is categorical: the counts sit evenly spaced in ascending order, so 0 and
/// 10 do not collide beside 200 (a linear axis put them 2 px apart) and the uneven gaps
/// of a log scale are not needed; the tick labels say which N each place is. Rates
/// carry their 95% Wilson interval as an error bar.
pub fn chart(rows: &[DistractorRow]) -> String {
    let esc = super::html::esc;
    let mut series: IndexMap<String, Vec<&DistractorRow>> = IndexMap::new();
    for r in rows {
        series.entry(r.series()).or_default().push(r);
    }
    let ns: Vec<u32> = {
        let mut v: Vec<u32> = rows.iter().map(|r| r.n).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let max_tokens = rows
        .iter()
        .map(|r| r.mean_tool_definition_tokens)
        .fold(0.0, f64::max)
        .max(1.0);
    let (pw, ph, gap, ml, mt, mb) = (240.0, 180.0, 60.0, 56.0, 24.0, 40.0);
    let legend_h = 18.0 * series.len() as f64 + 8.0;
    let w = ml + 3.0 * pw + 2.0 * gap + 16.0;
    let h = mt + ph + mb + legend_h;
    // The width of one N's place, and each series' offset in it (centred on the tick,
    // at most a third of the place for all series together).
    let slot = pw / ns.len().max(1) as f64;
    let step = (slot / 3.0 / series.len().max(1) as f64).min(5.0);
    let offset = |si: usize| (si as f64 - (series.len() as f64 - 1.0) / 2.0) * step;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart distractors" role="img" aria-label="Selection accuracy, false-call rate and tool-definition tokens against the number of distractors" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}">"#
    );
    s.push_str("<title>Selection accuracy, false-call rate (with 95% Wilson intervals) and mean tool-definition tokens per request against N, the distractors added</title>");
    let panels: [(&str, Get, f64, bool); 3] = [
        (
            "selection accuracy",
            |r| {
                r.selection_accuracy
                    .map(|v| (v, Some((r.selected, r.should_call))))
            },
            1.0,
            true,
        ),
        (
            "false-call rate",
            |r| {
                r.false_call_rate
                    .map(|v| (v, Some((r.false_calls, r.scored))))
            },
            1.0,
            true,
        ),
        (
            "tool tokens / request",
            |r| Some((r.mean_tool_definition_tokens, None)),
            max_tokens,
            false,
        ),
    ];
    for (pi, (title, get, top, is_rate)) in panels.iter().enumerate() {
        let x0 = ml + pi as f64 * (pw + gap);
        let x = |n: u32| {
            let i = ns.iter().position(|&m| m == n).unwrap_or(0);
            x0 + (i as f64 + 0.5) * slot
        };
        let y = |v: f64| mt + (1.0 - v / top) * ph;
        let _ = write!(
            s,
            r#"<text class="ptitle" x="{:.1}" y="{:.1}" text-anchor="middle">{title}</text>"#,
            x0 + pw / 2.0,
            mt - 8.0
        );
        for k in 0..=4 {
            let v = top * f64::from(k) / 4.0;
            let label = if *is_rate {
                format!("{:.0}%", v * 100.0)
            } else {
                format!("{v:.0}")
            };
            let _ = write!(
                s,
                r#"<line class="grid" x1="{x0:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#,
                x0 + pw,
                x0 - 6.0,
                y(v) + 4.0,
                yy = y(v)
            );
        }
        for &n in &ns {
            let _ = write!(
                s,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{n}</text>"#,
                x(n),
                mt + ph + 16.0
            );
        }
        let _ = write!(
            s,
            r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">N distractors</text>"#,
            x0 + pw / 2.0,
            mt + ph + 32.0
        );
        for (si, (name, points)) in series.iter().enumerate() {
            let colour = COLOURS[si % COLOURS.len()];
            let dash = DASHES[si % DASHES.len()];
            let dx = offset(si);
            let pts: Vec<Point<'_>> = points
                .iter()
                .filter_map(|r| get(r).map(|(v, frac)| (x(r.n) + dx, y(v), *r, v, frac)))
                .collect();
            if pts.len() > 1 {
                let path: Vec<String> = pts
                    .iter()
                    .map(|(px, py, ..)| format!("{px:.1},{py:.1}"))
                    .collect();
                let dash = if dash.is_empty() {
                    String::new()
                } else {
                    format!(r#" stroke-dasharray="{dash}""#)
                };
                let _ = write!(
                    s,
                    r#"<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{}"/>"#,
                    path.join(" ")
                );
            }
            for (px, py, r, v, frac) in pts {
                let (value, bar) = match frac.and_then(|(k, n)| Some((k, n, interval(k, n)?))) {
                    Some((k, n, (lo, hi))) => (
                        format!(
                            "{:.1}% ({k}/{n}), 95% interval {:.1}–{:.1}%",
                            v * 100.0,
                            lo * 100.0,
                            hi * 100.0
                        ),
                        format!(
                            r#"<path class="ci" d="M{px:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}M{:.1},{:.1}H{:.1}" style="stroke:{colour}" fill="none"/>"#,
                            y(lo),
                            y(hi),
                            px - 3.0,
                            y(lo),
                            px + 3.0,
                            px - 3.0,
                            y(hi),
                            px + 3.0
                        ),
                    ),
                    None => (format!("{v:.0}"), String::new()),
                };
                let _ = write!(
                    s,
                    r#"<g class="pt"><title>{}: N={} {title} {value}</title>{bar}{}</g>"#,
                    esc(name),
                    r.n,
                    marker(si, px, py, colour)
                );
            }
        }
    }
    for (si, name) in series.keys().enumerate() {
        let colour = COLOURS[si % COLOURS.len()];
        let dash = DASHES[si % DASHES.len()];
        let ly = mt + ph + mb + 12.0 + 18.0 * si as f64;
        let _ = write!(
            s,
            r#"<line x1="{ml:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>{}<text x="{:.1}" y="{:.1}">{}</text>"#,
            ml + 24.0,
            marker(si, ml + 12.0, ly, colour),
            ml + 30.0,
            ly + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// A cell's tool_choice as reports show it: with ` × N=n` when the cell has a
/// distractor count, so every per-cell line names its count without a new column.
pub fn mode_label(tool_choice: &str, n: Option<u32>) -> String {
    match n {
        Some(n) => format!("{tool_choice} × N={n}"),
        None => tool_choice.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolChoice;
    use crate::score::distractors::DistractorFacts;
    use crate::suite::CaseKind;

    fn trial(
        n: u32,
        verdict: Verdict,
        selected: Option<bool>,
        false_call: bool,
        tokens: u64,
    ) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: "c".into(),
            kind: CaseKind::ShouldCall,
            tags: Vec::new(),
            target: "scripted:oracle".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: Vec::new(),
            response: None,
            checks: None,
            verdict,
            reasons: Vec::new(),
            cost_usd: None,
            distractors: Some(DistractorFacts {
                n,
                tool_definition_tokens: tokens,
                selected,
                distractor_calls: u32::from(false_call),
                false_call,
            }),
            episode: None,
        }
    }

    #[test]
    fn rows_count_rates_over_scored_trials_and_tokens_over_all() {
        let trials = [
            // N=10: 3 should_call trials scored (2 selected), 1 should_not_call with a
            // false call, 1 error (counted in trials and tokens only).
            trial(10, Verdict::Pass, Some(true), false, 100),
            trial(10, Verdict::Pass, Some(true), false, 100),
            trial(10, Verdict::Fail, Some(false), true, 100),
            trial(10, Verdict::Fail, None, true, 100),
            trial(10, Verdict::Error, None, false, 200),
            // N=0 listed after, sorted first.
            trial(0, Verdict::Pass, Some(true), false, 40),
        ];
        let r = rows(&trials);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].n, 0);
        assert_eq!(r[0].selection_accuracy, Some(1.0));
        let r10 = &r[1];
        assert_eq!(
            (r10.trials, r10.scored, r10.should_call, r10.selected),
            (5, 4, 3, 2)
        );
        assert_eq!(r10.selection_accuracy, Some(2.0 / 3.0));
        // 2 false calls of 4 scored trials.
        assert_eq!(r10.false_call_rate, Some(0.5));
        // (4 × 100 + 200) / 5.
        assert_eq!(r10.mean_tool_definition_tokens, 120.0);
        let svg = chart(&r);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // One polyline per panel for the one series (two points each).
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert!(markdown(&r).contains(
            "| scripted:oracle × default × auto | 10 | 5 | 66.7% (2/3) | 50.0% (2/4) | 120 |"
        ));
    }

    #[test]
    fn the_n_axis_is_categorical_rates_have_intervals_and_series_are_told_apart() {
        let mut trials = Vec::new();
        for n in [0, 10, 200] {
            trials.push(trial(n, Verdict::Pass, Some(true), false, 10));
            trials.push(trial(n, Verdict::Fail, Some(false), true, 10));
            // A second series with the very same rates: its line must not hide the first.
            let mut t = trial(n, Verdict::Pass, Some(true), false, 10);
            t.target = "scripted:other".into();
            trials.push(t);
            let mut t = trial(n, Verdict::Fail, Some(false), true, 10);
            t.target = "scripted:other".into();
            trials.push(t);
        }
        let svg = chart(&rows(&trials));
        // Evenly spaced places (80 px each in the first panel, from x = 56): 0 and 10 do
        // not collide beside 200.
        for (n, x) in [(0, "96.0"), (10, "176.0"), (200, "256.0")] {
            assert!(
                svg.contains(&format!(
                    r#"<text class="tick" x="{x}" y="220.0" text-anchor="middle">{n}</text>"#
                )),
                "N={n}"
            );
        }
        // Each series sits 2.5 px to its side of the tick: a circle, then a square.
        assert!(svg.contains(r#"<circle cx="93.5" "#));
        assert!(svg.contains(r#"<rect x="95.0" "#));
        // A dashed line for the second series.
        assert!(svg.contains(r#"stroke-dasharray="6 3" points="#));
        // An error bar per rate point: 2 series × 3 counts × 2 rate panels.
        assert_eq!(svg.matches(r#"class="ci""#).count(), 12);
        // 1 of 2 selected: Wilson 95% interval 9.5–90.5%.
        assert!(
            svg.contains("N=10 selection accuracy 50.0% (1/2), 95% interval 9.5–90.5%"),
            "{svg}"
        );
        assert_eq!(interval_text(1, 2), "[9.5–90.5%]");
        assert_eq!(interval_text(0, 0), "");
    }

    #[test]
    fn chart_labels_are_escaped() {
        let mut t = trial(1, Verdict::Pass, Some(true), false, 1);
        t.target = "<img src=x>".into();
        let svg = chart(&rows(&[t]));
        assert!(!svg.contains("<img"));
        assert!(svg.contains("&lt;img"));
    }
}
