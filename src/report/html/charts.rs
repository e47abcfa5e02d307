//! The page's SVG charts, built as strings from numbers and escaped labels: metrics per
//! cell with their 95% intervals, and accuracy against tool-definition tokens per variant.

use std::fmt::Write as _;

use super::cells::{CHART_METRICS, CellRow};
use super::{esc, truncate};
use crate::report::format;
use crate::score::stats::Rate;

/// Characters of a cell's label in the cell chart (its tooltip has all of it).
pub(super) const CHART_LABEL_CHARS: usize = 40;

/// One row per cell (and overall), one panel per metric: the value as a dot and its 95%
/// interval as an error bar on a 0–100% axis.
pub(super) fn cell_chart(cells: &[CellRow], overall: &CellRow) -> String {
    let rows: Vec<&CellRow> = cells.iter().chain([overall]).collect();
    let short: Vec<String> = chart_labels(cells)
        .into_iter()
        .chain([overall.label.clone()])
        .collect();
    let label_w = 250.0;
    let panel_w = 140.0;
    let gap = 22.0;
    let row_h = 20.0;
    let top = 30.0;
    let bottom = 22.0;
    let width = label_w + CHART_METRICS.len() as f64 * (panel_w + gap);
    let height = top + rows.len() as f64 * row_h + bottom;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" role="img" aria-label="Metrics per cell with 95% intervals" viewBox="0 0 {width:.0} {height:.0}" width="{width:.0}" height="{height:.0}">"#
    );
    s.push_str("<title>Metrics per cell: dots are values, bars 95% Wilson intervals</title>");
    for (i, row) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        if i % 2 == 0 {
            let _ = write!(
                s,
                r#"<rect class="stripe" x="0" y="{y:.1}" width="{width:.0}" height="{row_h:.0}"/>"#
            );
        }
        let _ = write!(
            s,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end"><title>{}</title>{}</text>"#,
            label_w - 8.0,
            y + row_h * 0.68,
            esc(&row.label),
            esc(&short[i])
        );
    }
    for (p, name) in CHART_METRICS.iter().enumerate() {
        let x0 = label_w + p as f64 * (panel_w + gap);
        let _ = write!(
            s,
            r#"<text class="ptitle" x="{:.1}" y="16" text-anchor="middle">{}</text>"#,
            x0 + panel_w / 2.0,
            esc(name)
        );
        for (tick, text, anchor) in [
            (0.0, "0%", "start"),
            (0.5, "50%", "middle"),
            (1.0, "100%", "end"),
        ] {
            let x = x0 + tick * panel_w;
            let _ = write!(
                s,
                r#"<line class="grid" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{text}</text>"#,
                top - 4.0,
                height - bottom,
                height - 8.0
            );
        }
        for (i, row) in rows.iter().enumerate() {
            let cy = top + i as f64 * row_h + row_h / 2.0;
            let r = &row.rates[p];
            match (r.value, r.low, r.high) {
                (Some(v), Some(lo), Some(hi)) => {
                    let (xl, xv, xh) = (x0 + lo * panel_w, x0 + v * panel_w, x0 + hi * panel_w);
                    let _ = write!(
                        s,
                        r#"<g class="pt"><title>{}: {}: {:.1}% (95% CI {:.1}–{:.1}%), {}/{}</title><line class="ci" x1="{xl:.1}" y1="{cy:.1}" x2="{xh:.1}" y2="{cy:.1}"/><line class="ci" x1="{xl:.1}" y1="{:.1}" x2="{xl:.1}" y2="{:.1}"/><line class="ci" x1="{xh:.1}" y1="{:.1}" x2="{xh:.1}" y2="{:.1}"/><circle cx="{xv:.1}" cy="{cy:.1}" r="3.5"/></g>"#,
                        esc(&row.label),
                        esc(name),
                        v * 100.0,
                        lo * 100.0,
                        hi * 100.0,
                        r.num,
                        r.den,
                        cy - 4.0,
                        cy + 4.0,
                        cy - 4.0,
                        cy + 4.0,
                    );
                }
                _ => {
                    let _ = write!(
                        s,
                        r#"<text class="na" x="{:.1}" y="{:.1}">n/a</text>"#,
                        x0 + 4.0,
                        cy + 4.0
                    );
                }
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// The cell chart's row labels, at most [`CHART_LABEL_CHARS`] wide: `variant ×
/// tool_choice` whole, after the target only when the cells have several, each part cut
/// where needed so that rows which differ still read differently (the full label is the
/// row's tooltip). Cutting labels at their end made every row of a long target read the
/// same (`openai-compatible:fake-1@http://127.0.0.…`).
fn chart_labels(cells: &[CellRow]) -> Vec<String> {
    let rest: Vec<String> = cells
        .iter()
        .map(|c| format!("{} × {}", c.variant, c.tool_choice))
        .collect();
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let targets: Vec<&str> = cells.iter().map(|c| c.target.as_str()).collect();
    if targets.iter().all(|t| Some(t) == targets.first()) {
        return format::cut_distinct(&rest, CHART_LABEL_CHARS);
    }
    let widest_rest = rest.iter().map(|r| format::width(r)).max().unwrap_or(0);
    // The target gets what `variant × tool_choice` leaves, but never less than a third.
    let target_room = CHART_LABEL_CHARS
        .saturating_sub(widest_rest + 3)
        .max(CHART_LABEL_CHARS / 3);
    let targets = format::cut_distinct(&targets, target_room);
    let widest_target = targets.iter().map(|t| format::width(t)).max().unwrap_or(0);
    let rest = format::cut_distinct(&rest, CHART_LABEL_CHARS.saturating_sub(widest_target + 3));
    targets
        .iter()
        .zip(rest)
        .map(|(t, r)| format!("{t} × {r}"))
        .collect()
}

/// A round axis step (1, 2 or 5 times a power of ten) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.max(1.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// Accuracy (with its 95% interval) against tool-definition tokens, one point per
/// variant.
pub(super) fn variant_chart(points: &[(String, u64, Rate)]) -> String {
    let (w, h) = (600.0, 320.0);
    let (ml, mr, mt, mb) = (56.0, 110.0, 16.0, 46.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let lo = points.iter().map(|p| p.1).min().unwrap_or(0) as f64;
    let hi = points.iter().map(|p| p.1).max().unwrap_or(0) as f64;
    let pad = ((hi - lo) * 0.1).max(1.0);
    let (x_min, x_max) = ((lo - pad).max(0.0), hi + pad);
    let x = |t: f64| ml + (t - x_min) / (x_max - x_min) * pw;
    let y = |v: f64| mt + (1.0 - v) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" role="img" aria-label="Accuracy against tool-definition tokens per variant" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}">"#
    );
    s.push_str("<title>Accuracy against tool-definition tokens, per description variant</title>");
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{ml:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{:.0}%</text>"#,
            ml + pw,
            ml - 6.0,
            y(tick) + 4.0,
            tick * 100.0,
            yy = y(tick)
        );
    }
    let step = nice_step((x_max - x_min) / 4.0);
    let mut t = (x_min / step).ceil() * step;
    while t <= x_max {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{xx:.1}" y1="{mt:.1}" x2="{xx:.1}" y2="{:.1}"/><text class="tick" x="{xx:.1}" y="{:.1}" text-anchor="middle">{:.0}</text>"#,
            mt + ph,
            mt + ph + 16.0,
            t,
            xx = x(t)
        );
        t += step;
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">tool-definition tokens</text><text class="axis" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">accuracy</text>"#,
        ml + pw / 2.0,
        h - 8.0,
        mt + ph / 2.0
    );
    for (name, tokens, r) in points {
        let cx = x(*tokens as f64);
        match (r.value, r.low, r.high) {
            (Some(v), Some(l), Some(u)) => {
                let _ = write!(
                    s,
                    r#"<g class="pt"><title>{}: {tokens} tokens, accuracy {:.1}% (95% CI {:.1}–{:.1}%), {}/{}</title><line class="ci" x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}"/><line class="ci" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><line class="ci" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><circle cx="{cx:.1}" cy="{:.1}" r="4.5"/><text class="plabel" x="{:.1}" y="{:.1}">{}</text></g>"#,
                    esc(name),
                    v * 100.0,
                    l * 100.0,
                    u * 100.0,
                    r.num,
                    r.den,
                    y(l),
                    y(u),
                    cx - 4.0,
                    y(l),
                    cx + 4.0,
                    y(l),
                    cx - 4.0,
                    y(u),
                    cx + 4.0,
                    y(u),
                    y(v),
                    cx + 8.0,
                    y(v) + 4.0,
                    esc(&truncate(name, 20))
                );
            }
            _ => {
                let _ = write!(
                    s,
                    r#"<text class="na" x="{cx:.1}" y="{:.1}" text-anchor="middle"><title>{}: no scored trials</title>{} n/a</text>"#,
                    mt + ph - 6.0,
                    esc(name),
                    esc(&truncate(name, 20))
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}
