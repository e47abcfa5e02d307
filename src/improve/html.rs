//! `improve.html`: one self-contained page telling the story of a search for better tool
//! wordings: what was searched and how (header), the objective per round (inline SVG line
//! chart of the current wording and the best candidate on the training and held-out sets,
//! with their 95% intervals, accepted rounds marked), every round's candidates and
//! held-out decision, and each accepted wording as a word-level diff against the wording
//! it replaced, then the final wording against the original. Rendered with minijinja and
//! HTML auto-escaping; nothing on the page loads anything by URL.

use std::time::Duration;

use indexmap::IndexMap;
use minijinja::context;
use minijinja::value::{Serde, Value};
use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::report::html::esc;

use super::report::{ImproveReport, RoundReport, Score, ToolText};
use super::text::{Scale, best_candidate, no_acceptance, p_against_level};

const TEMPLATE: &str = include_str!("improve.html.j2");

/// Why the page could not be rendered (a template defect, never user input).
#[derive(Debug, thiserror::Error)]
#[error("failed to render the improve page: {0}")]
pub struct RenderError(String);

/// A run of words with the same fate in a diff.
#[derive(Debug, Serialize, PartialEq)]
struct Segment {
    /// `same`, `del` or `ins`.
    kind: &'static str,
    text: String,
}

/// One text of a tool (its description or one parameter's), before and after.
#[derive(Debug, Serialize)]
struct FieldDiff {
    /// `description` or the parameter's name.
    field: String,
    parameter: bool,
    changed: bool,
    segments: Vec<Segment>,
}

#[derive(Debug, Serialize)]
struct ToolDiff {
    tool: String,
    fields: Vec<FieldDiff>,
}

#[derive(Serialize)]
struct AcceptedView {
    round: u32,
    variant: String,
    delta: String,
    p_value: String,
    tools: Vec<ToolDiff>,
}

#[derive(Serialize)]
struct CandidateRow {
    variant: String,
    rationale: String,
    training: String,
    tokens: u64,
    best: bool,
    tools: Vec<String>,
    dropped: Vec<String>,
}

#[derive(Serialize)]
struct DecisionRow {
    held_out: String,
    delta: String,
    p: String,
    cases: u64,
    why: String,
}

#[derive(Serialize)]
struct RoundRow {
    round: u32,
    current: String,
    current_training: String,
    current_held_out: String,
    accepted: bool,
    candidates: Vec<CandidateRow>,
    decision: Option<DecisionRow>,
    untested: Option<String>,
    /// Guards that blocked the best candidate, with how much worse they got.
    blocked: Vec<String>,
    attempts: u32,
    errors: Vec<String>,
    cost_so_far: String,
}

#[derive(Serialize)]
struct View {
    suite: String,
    suite_path: String,
    target: String,
    proposer: String,
    base_variant: String,
    objective: String,
    alpha: String,
    guards: String,
    training: usize,
    held_out: usize,
    source: String,
    seed: u64,
    stop: String,
    cost: String,
    tokens_before: u64,
    tokens_after: u64,
    tokens_change: String,
    final_variant: String,
    /// The plain sentence when nothing was accepted.
    no_acceptance: Option<String>,
    rounds: Vec<RoundRow>,
    accepted: Vec<AcceptedView>,
    final_diff: Vec<ToolDiff>,
    unchanged: Vec<String>,
    version: String,
}

/// `s` cut into words, runs of whitespace and single other characters, so that a word
/// followed by punctuation (`weather.`) still matches the same word elsewhere (`weather`).
fn tokens(s: &str) -> Vec<&str> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in s.char_indices() {
        let k = class(c);
        // A punctuation mark is a token of its own; words and spaces run on.
        if let Some(p) = prev
            && (p != k || k == Class::Other)
        {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// The word-level diff of `old` and `new`: adjacent tokens of the same fate merged, and
/// the whitespace at the edges of a deletion or insertion left outside it, so a change
/// reads `weather <ins>forecast for a city</ins>.` rather than marking the spaces.
fn word_diff(old: &str, new: &str) -> Vec<Segment> {
    let old_tokens = tokens(old);
    let new_tokens = tokens(new);
    // Descriptions are short, but one is model text: bound the diff's time and take the
    // coarser answer past it rather than stall the page.
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_slices(&old_tokens, &new_tokens);
    let mut merged: Vec<Segment> = Vec::new();
    for change in diff.iter_all_changes() {
        let kind = match change.tag() {
            ChangeTag::Equal => "same",
            ChangeTag::Delete => "del",
            ChangeTag::Insert => "ins",
        };
        match merged.last_mut() {
            Some(last) if last.kind == kind => last.text.push_str(change.value()),
            _ => merged.push(Segment {
                kind,
                text: change.value().to_string(),
            }),
        }
    }
    let mut out: Vec<Segment> = Vec::new();
    let mut push = |kind: &'static str, text: &str| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(last) if last.kind == kind => last.text.push_str(text),
            _ => out.push(Segment {
                kind,
                text: text.to_string(),
            }),
        }
    };
    for s in merged {
        if s.kind == "same" {
            push("same", &s.text);
            continue;
        }
        let core = s.text.trim();
        if core.is_empty() {
            // A change of whitespace alone: shown as it is, there is no word to mark.
            push(s.kind, &s.text);
            continue;
        }
        let lead = &s.text[..s.text.len() - s.text.trim_start().len()];
        let trail = &s.text[s.text.trim_end().len()..];
        push("same", lead);
        push(s.kind, core);
        push("same", trail);
    }
    out
}

/// The field-by-field diff of one tool's wording.
fn tool_diff(tool: &str, before: &ToolText, after: &ToolText) -> ToolDiff {
    let mut fields = vec![FieldDiff {
        field: "description".into(),
        parameter: false,
        changed: before.description != after.description,
        segments: word_diff(&before.description, &after.description),
    }];
    // The parameters in the old order, then any the new wording describes first.
    let mut names: Vec<&String> = before.parameters.keys().collect();
    names.extend(
        after
            .parameters
            .keys()
            .filter(|k| !before.parameters.contains_key(*k)),
    );
    for name in names {
        let old = before.parameters.get(name).map_or("", String::as_str);
        let new = after.parameters.get(name).map_or("", String::as_str);
        fields.push(FieldDiff {
            field: name.clone(),
            parameter: true,
            changed: old != new,
            segments: word_diff(old, new),
        });
    }
    ToolDiff {
        tool: tool.to_string(),
        fields,
    }
}

fn round_row(r: &RoundReport, scale: Scale) -> RoundRow {
    let candidates = r
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| CandidateRow {
            variant: c.variant.clone(),
            rationale: c.rationale.clone(),
            training: scale.value(c.training.value),
            tokens: c.definition_tokens,
            best: r.best == Some(i),
            tools: c.tools.keys().cloned().collect(),
            dropped: c.dropped.clone(),
        })
        .collect();
    let decision = r.decision.as_ref().map(|d| DecisionRow {
        held_out: scale.value(r.best_held_out.as_ref().and_then(|s| s.value)),
        delta: scale.delta(d.delta),
        p: p_against_level(d.p_value, d.level),
        cases: d.cases,
        why: d.why.clone(),
    });
    let blocked = r
        .decision
        .iter()
        .flat_map(|d| d.guards.iter())
        .filter(|g| g.blocks)
        .map(|g| match g.worsening {
            Some(w) => format!("{} ({w:+.4} worse)", g.metric),
            None => g.metric.clone(),
        })
        .collect();
    RoundRow {
        round: r.round,
        current: r.current.clone(),
        current_training: scale.value(r.current_training.value),
        current_held_out: scale.value(r.current_held_out.value),
        accepted: r.accepted,
        candidates,
        decision,
        untested: r.untested.clone(),
        blocked,
        attempts: r.proposer.attempts,
        errors: r.proposer.errors.clone(),
        cost_so_far: format!("${:.4}", r.cost_so_far_usd),
    }
}

/// One series of the chart: which score of a round it plots and how it looks.
struct Series {
    key: &'static str,
    label: &'static str,
    /// Held-out series are dashed, training ones solid.
    dashed: bool,
    /// Horizontal nudge in pixels so the error bars of a round do not overlap.
    nudge: f64,
    score: fn(&RoundReport) -> Option<&Score>,
}

const SERIES: [Series; 4] = [
    Series {
        key: "current-training",
        label: "current wording, training",
        dashed: false,
        nudge: -9.0,
        score: |r| Some(&r.current_training),
    },
    Series {
        key: "current-held-out",
        label: "current wording, held-out",
        dashed: true,
        nudge: -3.0,
        score: |r| Some(&r.current_held_out),
    },
    Series {
        key: "best-training",
        label: "best candidate, training",
        dashed: false,
        nudge: 3.0,
        score: |r| best_candidate(r).map(|c| &c.training),
    },
    Series {
        key: "best-held-out",
        label: "best candidate, held-out",
        dashed: true,
        nudge: 9.0,
        score: |r| r.best_held_out.as_ref(),
    },
];

/// The y range of the chart: [0, 1] for rates; otherwise the figures' range, padded.
fn y_range(report: &ImproveReport, scale: Scale) -> (f64, f64) {
    if scale == Scale::Percent {
        return (0.0, 1.0);
    }
    let values: Vec<f64> = report
        .rounds
        .iter()
        .flat_map(|r| SERIES.iter().filter_map(move |s| (s.score)(r)))
        .flat_map(|s| [s.value, s.low, s.high])
        .flatten()
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo { (hi - lo) * 0.08 } else { 1.0 };
    (lo - pad, hi + pad)
}

/// The objective per round: one line per series, a point per round where the series has
/// a value, its 95% interval as an error bar where present, accepted rounds shaded.
fn chart(report: &ImproveReport, scale: Scale) -> String {
    const LEFT: f64 = 70.0;
    const PLOT_W: f64 = 640.0;
    const TOP: f64 = 56.0;
    const PLOT_H: f64 = 260.0;
    const BOTTOM: f64 = 46.0;
    let w = LEFT + PLOT_W + 20.0;
    let h = TOP + PLOT_H + BOTTOM;
    let rounds = &report.rounds;
    let slot = PLOT_W / rounds.len().max(1) as f64;
    let x = |i: usize| LEFT + slot * (i as f64 + 0.5);
    let (lo, hi) = y_range(report, scale);
    let y = |v: f64| TOP + PLOT_H * (1.0 - (v - lo) / (hi - lo));
    let unit = if scale == Scale::Percent { " (%)" } else { "" };
    let mut s = format!(
        r#"<svg class="chart" id="objective-chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>{} per round: the current wording and the best candidate, on the training and held-out cases</title>"#,
        esc(&report.objective)
    );
    // The legend: a line sample per series, then the accepted-round shading.
    s.push_str(r#"<g class="legend">"#);
    for (i, series) in SERIES.iter().enumerate() {
        let lx = LEFT + (i % 2) as f64 * 230.0;
        let ly = 12.0 + (i / 2) as f64 * 18.0;
        s.push_str(&format!(
            r#"<line class="line {k}{d}" x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}"/><circle class="pt {k}" cx="{:.1}" cy="{ly:.1}" r="3.5"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx,
            lx + 28.0,
            lx + 14.0,
            lx + 34.0,
            ly + 4.0,
            series.label,
            k = series.key,
            d = if series.dashed { " dashed" } else { "" },
        ));
    }
    s.push_str(&format!(
        r#"<rect class="accepted-band" x="{:.1}" y="4" width="22" height="14"/><text x="{:.1}" y="16">accepted round</text></g>"#,
        LEFT + 460.0,
        LEFT + 488.0
    ));
    // Accepted rounds first, so the lines and points draw over the shading.
    for (i, r) in rounds.iter().enumerate() {
        if r.accepted {
            s.push_str(&format!(
                r#"<g class="accepted-round" data-round="{0}"><title>round {0}: accepted</title><rect class="accepted-band" x="{1:.1}" y="{2:.1}" width="{3:.1}" height="{4:.1}"/><text class="accepted-label" x="{5:.1}" y="{6:.1}" text-anchor="middle">accepted</text></g>"#,
                r.round,
                x(i) - slot / 2.0 + 2.0,
                TOP,
                slot - 4.0,
                PLOT_H,
                x(i),
                TOP + 12.0,
            ));
        }
    }
    // The value axis: five gridlines with their labels.
    for t in 0..=4 {
        let v = lo + (hi - lo) * f64::from(t) / 4.0;
        let label = match scale {
            Scale::Percent => format!("{:.0}%", v * 100.0),
            Scale::Plain => format!("{v:.3}"),
        };
        s.push_str(&format!(
            r#"<line class="grid" x1="{LEFT:.1}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}"/><text class="tick" x="{2:.1}" y="{3:.1}" text-anchor="end">{label}</text>"#,
            y(v),
            LEFT + PLOT_W,
            LEFT - 6.0,
            y(v) + 4.0,
        ));
    }
    for (i, r) in rounds.iter().enumerate() {
        s.push_str(&format!(
            r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(i),
            TOP + PLOT_H + 16.0,
            r.round
        ));
    }
    s.push_str(&format!(
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">round</text><text class="axis-label" x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}{unit}</text>"#,
        LEFT + PLOT_W / 2.0,
        TOP + PLOT_H + 36.0,
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0,
        esc(&report.objective),
    ));
    for series in &SERIES {
        let points: Vec<(usize, &RoundReport, &Score, f64)> = rounds
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let sc = (series.score)(r)?;
                Some((i, r, sc, sc.value.filter(|v| v.is_finite())?))
            })
            .collect();
        let px = |i: usize| x(i) + series.nudge;
        // The line breaks where a round has no value (no best candidate), so it never
        // suggests a figure the search did not measure.
        let mut d = String::new();
        let mut prev: Option<usize> = None;
        for &(i, _, _, v) in &points {
            let cmd = if prev == Some(i.wrapping_sub(1)) {
                'L'
            } else {
                'M'
            };
            d.push_str(&format!("{cmd}{:.1},{:.1} ", px(i), y(v)));
            prev = Some(i);
        }
        s.push_str(&format!(
            r#"<path class="line {}{}" d="{}"/>"#,
            series.key,
            if series.dashed { " dashed" } else { "" },
            d.trim_end()
        ));
        for &(i, r, sc, v) in &points {
            let interval = match (sc.low, sc.high) {
                (Some(l), Some(u)) => {
                    s.push_str(&format!(
                        r#"<path class="err {}" d="M{x:.1},{:.1} L{x:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}"/>"#,
                        series.key,
                        y(l),
                        y(u),
                        px(i) - 3.0,
                        y(l),
                        px(i) + 3.0,
                        y(l),
                        px(i) - 3.0,
                        y(u),
                        px(i) + 3.0,
                        y(u),
                        x = px(i),
                    ));
                    format!(
                        ", 95% CI {} – {}",
                        scale.value(Some(l)),
                        scale.value(Some(u))
                    )
                }
                _ => String::new(),
            };
            s.push_str(&format!(
                r#"<circle class="pt {k}" data-series="{k}" data-round="{round}" cx="{:.1}" cy="{:.1}" r="4"><title>round {round}, {label}: {}{interval} (n = {n})</title></circle>"#,
                px(i),
                y(v),
                scale.value(Some(v)),
                k = series.key,
                round = r.round,
                label = series.label,
                n = sc.n,
            ));
        }
    }
    s.push_str("</svg>");
    s
}

/// The accepted wordings, each against the wording it replaced (the original for the
/// first acceptance of a tool, the previous acceptance's after that), so each diff shows
/// what that round changed; the final section shows the sum against the original.
fn accepted_views(report: &ImproveReport, scale: Scale) -> Vec<AcceptedView> {
    let mut current: IndexMap<String, ToolText> = report.original.clone();
    report
        .accepted
        .iter()
        .map(|a| {
            let tools = a
                .tools
                .iter()
                .map(|(name, after)| {
                    let before = current.get(name).cloned().unwrap_or_default();
                    let diff = tool_diff(name, &before, after);
                    current.insert(name.clone(), after.clone());
                    diff
                })
                .collect();
            AcceptedView {
                round: a.round,
                variant: a.variant.clone(),
                delta: scale.delta(Some(a.delta)),
                p_value: format!("{:.4}", a.p_value),
                tools,
            }
        })
        .collect()
}

/// Render `report` as `improve.html`.
pub fn render(report: &ImproveReport) -> Result<String, RenderError> {
    let scale = Scale::of(report);
    let empty = ToolText::default();
    let mut final_diff = Vec::new();
    let mut unchanged = Vec::new();
    // Every tool of either wording: the original's order, then any only the final has.
    let names = report.original.keys().chain(
        report
            .final_wording
            .keys()
            .filter(|k| !report.original.contains_key(*k)),
    );
    for name in names {
        let before = report.original.get(name).unwrap_or(&empty);
        let after = report.final_wording.get(name).unwrap_or(&empty);
        if before == after {
            unchanged.push(name.clone());
        } else {
            final_diff.push(tool_diff(name, before, after));
        }
    }
    let t = &report.definition_tokens;
    let view = View {
        suite: report.suite.clone(),
        suite_path: report.suite_path.clone(),
        target: report.target.clone(),
        proposer: report.proposer.clone(),
        base_variant: report.base_variant.clone(),
        objective: report.objective.clone(),
        alpha: format!("{}", report.alpha),
        guards: if report.guards.is_empty() {
            "none".into()
        } else {
            report.guards.join(", ")
        },
        training: report.sets.training.len(),
        held_out: report.sets.held_out.len(),
        source: report.sets.source.clone(),
        seed: report.seed,
        stop: report.stop.clone(),
        cost: format!("${:.4}", report.cost_usd),
        tokens_before: t.original,
        tokens_after: t.r#final,
        tokens_change: format!("{:+}", t.r#final as i128 - t.original as i128),
        final_variant: report.final_variant.clone(),
        no_acceptance: report.accepted.is_empty().then(|| no_acceptance(report)),
        rounds: report.rounds.iter().map(|r| round_row(r, scale)).collect(),
        accepted: accepted_views(report, scale),
        final_diff,
        unchanged,
        version: report.toolgauge_version.clone(),
    };
    let chart = chart(report, scale);
    let err = |e: minijinja::Error| RenderError(e.to_string());
    let mut env = crate::report::html::page_environment().map_err(err)?;
    // The `.html` name turns on HTML auto-escaping.
    env.add_template("improve.html", TEMPLATE).map_err(err)?;
    env.get_template("improve.html")
        .map_err(err)?
        .render(context! {
            v => Value::from(Serde(&view)),
            // Built by `chart` from numbers, fixed labels and `esc`aped names.
            chart => Value::from_safe_string(chart),
        })
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::improve::text::tests::sample;

    fn seg(kind: &'static str, text: &str) -> Segment {
        Segment {
            kind,
            text: text.into(),
        }
    }

    #[test]
    fn the_diff_marks_the_inserted_and_deleted_words() {
        assert_eq!(
            word_diff("Get the weather.", "Get the weather forecast for a city."),
            vec![
                seg("same", "Get the weather "),
                seg("ins", "forecast for a city"),
                seg("same", "."),
            ]
        );
        assert_eq!(
            word_diff("Search the old docs quickly.", "Search the docs."),
            vec![
                seg("same", "Search the "),
                seg("del", "old"),
                seg("same", " docs "),
                seg("del", "quickly"),
                seg("same", "."),
            ]
        );
        assert_eq!(word_diff("", "New text."), vec![seg("ins", "New text.")]);
        assert_eq!(tokens("a, b"), vec!["a", ",", " ", "b"]);
    }

    #[test]
    fn the_page_tells_the_search() {
        let html = render(&sample()).unwrap();
        // Header.
        for needle in [
            "<span class=\"mono\">weather</span>",
            "openai:gpt-test",
            "anthropic:proposer-test",
            "false_call_rate, invalid_call_rate",
            "16 training cases, 20 held-out cases (split, seed 7)",
            "the proposer gave no usable candidate in round 3",
            "$0.4213",
            "300 → 320 (+20)",
        ] {
            assert!(html.contains(needle), "{needle} missing");
        }
        // The table: the best candidate marked, the decision, the blocking guard, the
        // proposer's errors.
        assert!(
            html.contains(r#"<li class="best"><span class="mono">r1c2</span> 75.0% · 320 tokens"#)
        );
        assert!(html.contains(r#"<li><span class="mono">r1c1</span> 68.8% · 290 tokens"#));
        assert!(html.contains("+15.0 pts · p = 0.0156 ≤ 0.0250 · 20 cases"));
        assert!(html.contains(r#"<li class="bad">false_call_rate (+0.2000 worse)</li>"#));
        assert!(html.contains("no `tools` key"));
        assert!(html.contains(r#"<tr id="round-1" class="accepted">"#));
        assert!(!html.contains("No wording was accepted"));
        // The diffs: round 1's acceptance and the final wording.
        assert!(html.contains(r#"Get the weather <ins>forecast for a city</ins>."#));
        assert!(
            html.contains(r#"The city<ins> name, e.g. Paris</ins>."#)
                || html.contains(r#"The city <ins>name, e.g. Paris</ins>."#),
            "{html}"
        );
        assert!(html.contains(r#"<ins>Days ahead.</ins>"#));
        assert_eq!(
            html.matches("forecast for a city</ins>").count(),
            2,
            "accepted and final"
        );
        assert!(html.contains("Unchanged: <span class=\"mono\">search_docs</span>"));
        // Nothing loaded, no script.
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<link") && !html.contains("url("));
    }

    #[test]
    #[ignore = "writes the sample page for a look: TOOLGAUGE_IMPROVE_HTML=path"]
    fn write_sample_page() {
        if let Ok(path) = std::env::var("TOOLGAUGE_IMPROVE_HTML") {
            std::fs::write(path, render(&sample()).unwrap()).unwrap();
        }
    }

    #[test]
    fn hostile_text_is_escaped() {
        let mut r = sample();
        r.final_wording.get_mut("search_docs").unwrap().description =
            "Search <b>all</b> the docs <script>alert(2)</script>".into();
        r.objective = "<i>acc</i>".into();
        let html = render(&r).unwrap();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b>") && !html.contains("<i>"));
        // The rationale, and the description in the final diff.
        assert!(html.contains(
            "&lt;script&gt;alert(&#x27;r&#x27;)&lt;&#x2f;script&gt; says what it returns"
        ));
        // The description in the final diff: escaped words around the marked change.
        assert!(
            html.contains("Search <ins>&lt;b&gt;all&lt;&#x2f;b&gt;</ins> the docs &lt;script&gt;alert(<del>1</del><ins>2</ins>)&lt;&#x2f;script&gt;"),
            "{html}"
        );
        // The objective in the chart's axis label and title.
        assert!(html.contains("&lt;i&gt;acc&lt;&#x2f;i&gt; (%)</text>"));
    }

    #[test]
    fn the_chart_has_a_point_per_round_per_series() {
        let html = render(&sample()).unwrap();
        let count = |s: &str| html.matches(&format!(r#"data-series="{s}""#)).count();
        assert_eq!(count("current-training"), 3);
        assert_eq!(count("current-held-out"), 3);
        // Round 3 had no candidate.
        assert_eq!(count("best-training"), 2);
        assert_eq!(count("best-held-out"), 2);
        // 4 series × 3 rounds, minus round 3's best: an error bar for each.
        assert_eq!(html.matches(r#"<path class="err "#).count(), 10);
        assert_eq!(html.matches(r#"class="accepted-round""#).count(), 1);
        assert!(html.contains(r#"<g class="accepted-round" data-round="1">"#));
        assert!(html.contains(
            r#"<title>round 1, best candidate, held-out: 70.0%, 95% CI 50.0% – 90.0% (n = 20)</title>"#
        ));
        // Percent axis with its labels, and the legend.
        assert!(html.contains(">100%</text>") && html.contains(">0%</text>"));
        assert!(html.contains(">round</text>") && html.contains(">accuracy (%)</text>"));
        for label in [
            "current wording, training",
            "current wording, held-out",
            "best candidate, training",
            "best candidate, held-out",
            "accepted round",
        ] {
            assert!(html.contains(&format!(">{label}</text>")), "{label}");
        }
        // The best candidate's lines break at round 3 rather than inventing a value.
        let best = html
            .split(r#"<path class="line best-training" d=""#)
            .nth(1)
            .unwrap();
        let d = &best[..best.find('"').unwrap()];
        assert_eq!(d.matches('M').count(), 1, "{d}");
        assert_eq!(d.matches('L').count(), 1, "{d}");
    }

    #[test]
    fn nothing_accepted_is_said_plainly() {
        let mut r = sample();
        r.accepted.clear();
        r.rounds[0].accepted = false;
        r.final_wording = r.original.clone();
        r.final_variant = "base".into();
        let html = render(&r).unwrap();
        assert!(html.contains(
            "No wording was accepted: `accuracy` improved by +0.1000 (p = 0.0078), but `false_call_rate` (+0.2000) got worse (round 2)."
        ), "{html}");
        assert!(!html.contains("class=\"accepted-round\""));
        assert!(html.contains("The final wording is the original."));
        // A search that played no round still renders, and says why nothing came of it.
        r.rounds.clear();
        let html = render(&r).unwrap();
        assert!(html.contains(
            "No wording was accepted: no round reached a held-out decision (the proposer gave no usable candidate in round 3)."
        ));
        assert!(!html.contains("data-series="));
    }

    #[test]
    fn plain_values_get_a_fitted_axis() {
        let mut r = sample();
        for round in &mut r.rounds {
            for s in [&mut round.current_training, &mut round.current_held_out] {
                s.value = s.value.map(|v| v * 10.0);
                s.low = None;
                s.high = None;
            }
        }
        assert_eq!(Scale::of(&r), Scale::Plain);
        let (lo, hi) = y_range(&r, Scale::Plain);
        assert!(lo < 0.5 && hi > 7.5, "{lo} {hi}");
        let html = render(&r).unwrap();
        assert!(html.contains(">accuracy</text>"));
        assert!(html.contains("<td class=\"n\">6.2500</td>"), "{html}");
    }
}
