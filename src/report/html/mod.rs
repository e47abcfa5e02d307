//! `report.html`: one self-contained page to explore a run, offline.
//!
//! The page holds its CSS and its little JavaScript inline and loads nothing from
//! anywhere: no stylesheet, script, font or image by URL. It shows the headline (suite,
//! counts, where each target's responses came from, thresholds), per-cell metrics with
//! their 95% Wilson intervals drawn as error bars, the description variants side by side
//! (accuracy against tool-definition tokens, and the cases that flip between variants),
//! a confusion matrix of expected against called tool, invalid calls by reason,
//! ungrounded arguments, and a table of every trial with filters, sorting and a
//! transcript per row. When the run has loop trials, a tool-loop section (stop reasons
//! and tokens per round per cell, built in `loop_view`), loop columns in the trial table
//! and round-by-round transcripts are added; a page without loop trials is unchanged.
//!
//! Safety: the page is rendered with minijinja under HTML auto-escaping (the template
//! name ends in `.html.j2`), so every text from models, tools and suites is escaped. The
//! charts are SVG strings built here from numbers and escaped labels; they are the only
//! values marked safe, with the trial data for the JavaScript: it is embedded once, as
//! JSON that escapes `<`, `>`, `&` and `'` (written by `html_json`, byte for byte what
//! minijinja's `tojson` filter writes), in a `<script type="application/json">` block,
//! read with `JSON.parse` and inserted with `textContent` only.
//!
//! Size: transcripts are not rendered as HTML up front; the script builds one when its
//! row is opened. Conversations shared by several trials (the same case in every cell
//! and repeat) are embedded once.
//!
//! # Layout
//!
//! This file writes the page: the template environment, the trial table and the embedded
//! data streamed around the rendered template. `view` precomputes what the template
//! shows, in steps kept in their own files: the cells and their rates (`cells`), the
//! description variants and the cases that flip between them (`variants`), the confusion
//! matrix (`confusion`), invalid-call and ungrounded-argument examples (`examples`) and the
//! tool-loop section (`loops`). `charts` draws the SVG charts and `data` builds the trial
//! data for the script.

mod cells;
mod charts;
mod confusion;
mod data;
mod examples;
mod loops;
mod variants;
mod view;

use std::io::Write;
use std::path::{Path, PathBuf};

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Serde, Value};
use minijinja::{Environment, UndefinedBehavior, context};

use self::charts::{cell_chart, variant_chart};
use self::data::Data;
use self::view::View;
use super::loop_view;
use super::{Exporter, ReportError, RunReport};
use crate::score::Verdict;

/// The page template (minijinja, HTML auto-escaping).
const TEMPLATE: &str = include_str!("../report.html.j2");
/// Its name: the `.html` before `.j2` turns HTML auto-escaping on.
const TEMPLATE_NAME: &str = "report.html.j2";
/// Characters of a reason shown in the trial table (the transcript has all of it).
const REASON_CHARS: usize = 160;

/// Writes `report.html`.
pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let html = render_html(report)?;
        Ok(vec![(FILE_NAME.to_string(), html.into_bytes())])
    }

    /// Writes the page as it is put together: the trial data (megabytes for a big run)
    /// goes from the records to the file through a buffer, never whole in memory. The
    /// page is written between a run's last answer and its exit, and building it whole
    /// first touched that many megabytes of fresh memory (a page fault and a zeroed page
    /// each) and copied them twice.
    fn write_into(&self, report: &RunReport, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let mut file = super::ReportFile::create(dir, FILE_NAME)?;
        let path = dir.join(FILE_NAME);
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        write_page(report, file.out(), &io)?;
        Ok(vec![file.finish()?])
    }
}

/// The file the HTML exporter writes.
const FILE_NAME: &str = "report.html";

fn render_error(e: impl std::fmt::Display) -> ReportError {
    ReportError::Render {
        format: "html",
        message: e.to_string(),
    }
}

/// Render the page.
pub fn render_html(report: &RunReport) -> Result<String, ReportError> {
    let mut out = Vec::new();
    // A `Vec` takes every write.
    write_page(report, &mut out, &render_error)?;
    String::from_utf8(out).map_err(render_error)
}

/// An environment with the settings of toolgauge's HTML pages (this one and the compare
/// page): undefined values are errors, and block tags take their line's indentation and
/// newline with them.
pub(crate) fn page_environment() -> Result<Environment<'static>, minijinja::Error> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()?,
    );
    Ok(env)
}

/// The template environment, the page's template compiled: once per process, since
/// compiling the page's template (its script and styles included) is a good part of
/// rendering it. [`warm_up`] compiles it ahead of time.
fn environment() -> Result<&'static Environment<'static>, ReportError> {
    static ENV: std::sync::OnceLock<Result<Environment<'static>, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = page_environment().map_err(|e| e.to_string())?;
        env.add_template(TEMPLATE_NAME, TEMPLATE)
            .map_err(|e| e.to_string())?;
        Ok(env)
    })
    .as_ref()
    .map_err(render_error)
}

/// Compile the page's template now, in the background, so that a run writing
/// `report.html` after its last answer does not wait for it.
pub fn warm_up() {
    std::thread::spawn(|| {
        let _ = environment();
    });
}

/// Render the page into `out`; `io` says which file a failed write was for.
fn write_page(
    report: &RunReport,
    out: &mut impl Write,
    io: &dyn Fn(std::io::Error) -> ReportError,
) -> Result<(), ReportError> {
    let view = View::build(report);
    let cell_chart = cell_chart(&view.cells, &view.overall);
    let variant_chart = variant_chart(&view.variant_points);
    let distractor_chart = if report.summary.distractors.is_empty() {
        String::new()
    } else {
        super::distractors::chart(&report.summary.distractors)
    };
    // Built by `loop_view::tokens_chart` from numbers and `esc`aped labels.
    let loop_charts: Vec<Value> = view
        .loops
        .iter()
        .flat_map(|l| &l.charts)
        .map(|c| Value::from_safe_string(c.clone()))
        .collect();

    let env = environment()?;
    let tmpl = env.get_template(TEMPLATE_NAME).map_err(render_error)?;
    // The trial table and the trial data (nearly all of the page for a big run) are
    // written straight to `out` between the parts of the page around them, rather than
    // going through the template engine (a value and a loop iteration per cell of every
    // row) and its growing output: the page is rendered with a marker in each place. A
    // marker has control characters and a random part, so no text of the run can be it,
    // and each must come out exactly once.
    let random =
        std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8);
    let rows_marker = format!("\u{1}tg-rows-{random:016x}\u{1}");
    let data_marker = format!("\u{1}tg-data-{random:016x}\u{1}");
    let page = tmpl
        .render(context! {
            v => Value::from(Serde(&view)),
            // Built by `cell_chart` and `variant_chart` from numbers and `esc`aped labels.
            cell_chart => Value::from_safe_string(cell_chart),
            variant_chart => Value::from_safe_string(variant_chart),
            // Built by `distractors::chart` from numbers and `esc`aped labels.
            distractor_chart => Value::from_safe_string(distractor_chart),
            distractor_rows => Value::from(Serde(&report.summary.distractors)),
            // Per row: the 95% intervals of its two rates, as the table shows them.
            distractor_intervals => Value::from(Serde(&report.summary.distractors.iter().map(|r| {
                [
                    super::distractors::interval_text(r.selected, r.should_call),
                    super::distractors::interval_text(r.false_calls, r.scored),
                ]
            }).collect::<Vec<_>>())),
            stream_rows => Value::from(Serde(&super::stream::rows(&report.summary))),
            loop_charts => loop_charts,
            trial_rows => Value::from_safe_string(rows_marker.clone()),
            data_json => Value::from_safe_string(data_marker.clone()),
        })
        .map_err(render_error)?;
    let (head, rest) = split_at_marker(&page, &rows_marker)?;
    let (middle, tail) = split_at_marker(rest, &data_marker)?;
    out.write_all(head.as_bytes()).map_err(io)?;
    write_trial_rows(&mut *out, report, &view).map_err(io)?;
    out.write_all(middle.as_bytes()).map_err(io)?;
    // Written by serde_json exactly as the `tojson` filter would (see `html_json`), and
    // escaped for a script block there.
    let data = Data::build(report, &view.cell_index, view.cell_labels.clone());
    super::html_json::to_writer(&mut *out, &data).map_err(|e| {
        if e.is_io() {
            io(e.into())
        } else {
            render_error(e)
        }
    })?;
    out.write_all(tail.as_bytes()).map_err(io)
}

/// The text before and after the one `marker` in `text`.
fn split_at_marker<'t>(text: &'t str, marker: &str) -> Result<(&'t str, &'t str), ReportError> {
    let mut parts = text.split(marker);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(before), Some(after), None) => Ok((before, after)),
        _ => Err(render_error(
            "a marker of the page's trial table or data did not come out once",
        )),
    }
}

/// The rows of the trial table, one line each, escaped as the template's auto-escape
/// escapes (minijinja's `HtmlEscape`): case, kind, cell, repeat, verdict (with a mark
/// when the response carried warnings), the loop columns when the run has loop trials,
/// and the first reason, cut to [`REASON_CHARS`].
fn write_trial_rows(out: &mut impl Write, report: &RunReport, view: &View) -> std::io::Result<()> {
    use minijinja::HtmlEscape as E;
    for (i, t) in report.trials.iter().enumerate() {
        let cell = &view.cell_labels[view.cell_index[i]];
        let verdict = verdict_str(t.verdict);
        write!(
            out,
            "<tr class=\"trow\" id=\"t-{i}\"><td><details><summary>{}</summary></details></td>\
             <td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}",
            E(&t.case_id),
            E(t.kind.as_str()),
            E(cell),
            t.repeat,
            E(verdict),
            E(verdict),
        )?;
        let warn = t.response.as_ref().is_some_and(|r| !r.warnings.is_empty())
            || t.episode
                .as_ref()
                .is_some_and(|e| e.rounds.iter().any(|r| !r.response.warnings.is_empty()));
        if warn {
            out.write_all(
                " <span class=\"warn\" title=\"this trial has warnings\">⚠</span>".as_bytes(),
            )?;
        }
        out.write_all(b"</td>")?;
        if view.loops.is_some() {
            match loop_view::trial_summary(t) {
                Some((rounds, calls, stop)) => write!(
                    out,
                    "<td class=\"n\">{rounds}</td><td class=\"n\">{calls}</td><td>{}</td>",
                    E(stop)
                )?,
                None => out.write_all(
                    "<td class=\"n\">–</td><td class=\"n\">–</td><td>–</td>".as_bytes(),
                )?,
            }
        }
        let reason = t.reasons.first().map_or(String::new(), |r| {
            truncate(&format!("{}: {}", r.code, r.message), REASON_CHARS)
        });
        writeln!(out, "<td>{}</td></tr>", E(&reason))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Text helpers

/// `s` escaped for SVG text and attribute values (also used by the compare page): the
/// escaping the templates' auto-escape applies, so the page has one rule.
pub(crate) fn esc(s: &str) -> String {
    minijinja::HtmlEscape(s).to_string()
}

/// At most `n` characters of `s`, with `…` when cut.
fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Error => "error",
    }
}

#[cfg(test)]
mod tests;
