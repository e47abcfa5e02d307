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

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Serde, Value};
use minijinja::{Environment, UndefinedBehavior, context};
use serde::Serialize;

use super::loop_view::{self, StopCounts};
use super::{Exporter, ReportError, RunMeta, RunReport, format};
use crate::judge::calls::{InvalidReason, Reason, TrialChecks};
use crate::provider::{Message, Response};
use crate::score::metrics::Metrics;
use crate::score::record::EpisodeRecord;
use crate::score::stats::Rate;
use crate::score::{TrialRecord, Verdict};
use crate::suite::CaseKind;

/// The page template (minijinja, HTML auto-escaping).
const TEMPLATE: &str = include_str!("report.html.j2");
/// Its name: the `.html` before `.j2` turns HTML auto-escaping on.
const TEMPLATE_NAME: &str = "report.html.j2";
/// Rows of the flip table before "and N more".
const MAX_FLIPS: usize = 500;
/// Examples of invalid calls and of ungrounded arguments listed, each.
const MAX_EXAMPLES: usize = 200;
/// Characters of a reason shown in the trial table (the transcript has all of it).
const REASON_CHARS: usize = 160;
/// Characters of raw arguments shown in an invalid-call example.
const ARGS_CHARS: usize = 240;
/// Characters of a cell's label in the cell chart (its tooltip has all of it).
const CHART_LABEL_CHARS: usize = 40;
/// Bytes of a response's text or of a call's raw arguments embedded in the page; the
/// rest is left out with a note (trials.jsonl keeps every byte).
const MAX_EMBEDDED_BYTES: usize = 64 * 1024;
/// Label shown for "no tool call" in the confusion matrix.
const NO_CALL: &str = "no call";

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

fn cell_label(target: &str, variant: &str, tool_choice: &str) -> String {
    format!("{target} × {variant} × {tool_choice}")
}

/// A rate as shown in tables.
#[derive(Clone, Serialize)]
struct RateView {
    /// Value, e.g. `85.0%`, or `–` when undefined.
    v: String,
    /// 95% interval, e.g. `72–93%`.
    ci: String,
    /// `num/den`.
    frac: String,
}

impl RateView {
    fn of(r: &Rate) -> RateView {
        let frac = format!("{}/{}", r.num, r.den);
        match (r.value, r.low, r.high) {
            (Some(v), Some(lo), Some(hi)) => RateView {
                v: format!("{:.1}%", v * 100.0),
                ci: format!("{:.0}–{:.0}%", lo * 100.0, hi * 100.0),
                frac,
            },
            _ => RateView {
                v: "–".into(),
                ci: String::new(),
                frac,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------
// The view: everything the template shows, precomputed

#[derive(Serialize)]
struct Headline {
    suite: String,
    description: Option<String>,
    suite_path: String,
    suite_hash: String,
    verdict: &'static str,
    verdict_class: &'static str,
    trials: u64,
    planned: u64,
    passed: u64,
    failed: u64,
    errors: u64,
    accuracy: RateView,
    status: String,
    stopped: Option<String>,
    /// The part of the suite a partial run covers.
    selection: Option<String>,
    started: String,
    finished: String,
    version: String,
    targets: Vec<String>,
    variants: Vec<String>,
    tool_choice: Vec<String>,
    repeats: u32,
    sources: Vec<(String, String)>,
    /// Trials whose response carried warnings.
    warnings: usize,
}

#[derive(Serialize)]
struct ThresholdRow {
    metric: String,
    scope: String,
    bound: String,
    value: String,
    ok: bool,
}

#[derive(Serialize)]
struct CellRow {
    label: String,
    target: String,
    variant: String,
    tool_choice: String,
    tool_definition_tokens: u64,
    trials: u64,
    scored: u64,
    errors: u64,
    accuracy: RateView,
    precision: RateView,
    recall: RateView,
    param: RateView,
    arg_match: RateView,
    invalid: RateView,
    ungrounded: RateView,
    tokens_in: u64,
    tokens_out: u64,
    estimated: u64,
    cost: String,
    p50: String,
    invalid_json: u64,
    unknown_tool: u64,
    schema_violation: u64,
    trials_with_ungrounded: u64,
    /// For the chart, not serialised.
    #[serde(skip)]
    rates: [Rate; 6],
}

impl CellRow {
    fn of(
        label: String,
        target: &str,
        variant: &str,
        mode: &str,
        tokens: u64,
        m: &Metrics,
    ) -> Self {
        CellRow {
            label,
            target: target.to_string(),
            variant: variant.to_string(),
            tool_choice: mode.to_string(),
            tool_definition_tokens: tokens,
            trials: m.trials,
            scored: m.scored,
            errors: m.errors,
            accuracy: RateView::of(&m.accuracy),
            precision: RateView::of(&m.trigger.precision),
            recall: RateView::of(&m.trigger.recall),
            param: RateView::of(&m.param_completeness),
            arg_match: RateView::of(&m.arg_match_rate),
            invalid: RateView::of(&m.invalid_call_rate),
            ungrounded: RateView::of(&m.ungrounded_rate),
            tokens_in: m.tokens.input,
            tokens_out: m.tokens.output,
            estimated: m.tokens.estimated_trials,
            cost: format::usd_or(m.cost_usd, "–"),
            p50: m
                .latency
                .p50_ms
                .map_or("–".into(), |l| format!("{l:.0} ms")),
            invalid_json: m.invalid_by_reason.invalid_json,
            unknown_tool: m.invalid_by_reason.unknown_tool,
            schema_violation: m.invalid_by_reason.schema_violation,
            trials_with_ungrounded: m.trials_with_ungrounded,
            rates: [
                m.accuracy,
                m.trigger.precision,
                m.trigger.recall,
                m.param_completeness,
                m.invalid_call_rate,
                m.ungrounded_rate,
            ],
        }
    }
}

/// Names of [`CellRow::rates`], in order.
const CHART_METRICS: [&str; 6] = [
    "accuracy",
    "trigger precision",
    "trigger recall",
    "param completeness",
    "invalid-call rate",
    "ungrounded rate",
];

#[derive(Serialize)]
struct VariantRow {
    variant: String,
    tokens: u64,
    /// System-prompt tokens (when some variant sets its own system prompt).
    system_tokens: Option<u64>,
    /// What the variant changes, in words ("" for nothing).
    changes: String,
    trials: u64,
    accuracy: RateView,
}

/// The system prompt a variant sends (when some variant sets its own).
#[derive(Serialize)]
struct SystemPromptRow {
    variant: String,
    text: Option<String>,
}

/// One tool's description under each variant (only tools whose wording differs).
#[derive(Serialize)]
struct DescriptionRow {
    tool: String,
    /// One per variant of `View::description_variants`; `None` when absent there.
    texts: Vec<Option<String>>,
}

#[derive(Serialize)]
struct SideBySide {
    group: String,
    accuracy: Vec<Option<RateView>>,
}

#[derive(Serialize)]
struct Outcome {
    text: String,
    class: &'static str,
}

#[derive(Serialize)]
struct Flip {
    group: String,
    case: String,
    outcomes: Vec<Outcome>,
}

#[derive(Serialize)]
struct ConfusionCell {
    n: u64,
    alpha: String,
    diagonal: bool,
}

#[derive(Serialize)]
struct ConfusionRow {
    expected: String,
    cells: Vec<ConfusionCell>,
    total: u64,
}

#[derive(Serialize)]
struct InvalidExample {
    i: usize,
    case: String,
    cell: String,
    repeat: u32,
    tool: String,
    reason: &'static str,
    detail: String,
    arguments: String,
}

#[derive(Serialize)]
struct UngroundedExample {
    i: usize,
    case: String,
    cell: String,
    repeat: u32,
    tool: String,
    values: Vec<String>,
}

/// One cell's row of the stop-reason table.
#[derive(Serialize)]
struct LoopCellRow {
    label: String,
    stops: StopCounts,
}

/// The tool-loop section, when the run has loop trials.
#[derive(Serialize)]
struct LoopsView {
    /// Cells with loop trials, in the cell order of the page.
    cells: Vec<LoopCellRow>,
    /// Over every loop trial.
    overall: StopCounts,
    /// The tokens-per-round chart of each of `cells`, not serialised (the template gets
    /// them as safe strings).
    #[serde(skip)]
    charts: Vec<String>,
}

impl LoopsView {
    /// The section for `trials` (in cell `cell_index[i]` of `labels`), or `None` when
    /// none of them is a loop trial.
    fn build(trials: &[TrialRecord], cell_index: &[usize], labels: &[String]) -> Option<Self> {
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

#[derive(Serialize)]
struct View {
    headline: Headline,
    thresholds: Vec<ThresholdRow>,
    cells: Vec<CellRow>,
    overall: CellRow,
    variants: Vec<VariantRow>,
    /// Some variant records what it changes (the table gains a column).
    variant_changes: bool,
    /// Some variant sets its own system prompt (the table gains a column).
    variant_systems: bool,
    system_prompts: Vec<SystemPromptRow>,
    side_variants: Vec<String>,
    side_by_side: Vec<SideBySide>,
    description_variants: Vec<String>,
    descriptions: Vec<DescriptionRow>,
    same_descriptions: Vec<String>,
    flips: Vec<Flip>,
    flips_total: usize,
    confusion_labels: Vec<String>,
    confusion: Vec<ConfusionRow>,
    confusion_others: usize,
    confusion_top: Vec<TopConfusion>,
    confusion_top_total: usize,
    invalid_examples: Vec<InvalidExample>,
    invalid_total: usize,
    ungrounded_examples: Vec<UngroundedExample>,
    ungrounded_total: usize,
    /// The tool-loop section (stop reasons, tokens per round), when there are loop trials.
    loops: Option<LoopsView>,
    /// The behaviour section (confusion matrices, macro-F1, hallucination rates), when
    /// some trial expects a behaviour.
    behaviour: Option<super::behaviour_view::BehaviourView>,
    /// Some trial has behaviour facts or judge calls: its detail shows them.
    trial_behaviour: bool,
    kinds: Vec<&'static str>,
    cell_labels: Vec<String>,
    /// For the chart, not serialised.
    #[serde(skip)]
    variant_points: Vec<(String, u64, Rate)>,
    /// Cell of each trial, not serialised.
    #[serde(skip)]
    cell_index: Vec<usize>,
}

/// The wording of each tool under each variant, from `run.json`: the variants, one row
/// per tool whose description differs between them, and the tools worded the same in all.
fn descriptions(meta: &RunMeta) -> (Vec<String>, Vec<DescriptionRow>, Vec<String>) {
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

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Error => "error",
    }
}

fn invalid_str(r: InvalidReason) -> &'static str {
    match r {
        InvalidReason::InvalidJson => "invalid_json",
        InvalidReason::UnknownTool => "unknown_tool",
        InvalidReason::SchemaViolation => "schema_violation",
    }
}

impl View {
    fn build(report: &RunReport) -> View {
        let s = &report.summary;
        let meta = &report.meta;
        let m = &s.overall;
        let verdict = if m.errors > 0 {
            ("incomplete", "warn")
        } else if !s.thresholds_ok() {
            ("failed", "bad")
        } else {
            ("passed", "good")
        };
        let headline = Headline {
            suite: s.suite.clone(),
            description: meta.suite.description.clone(),
            suite_path: meta.suite.path.clone(),
            suite_hash: meta.suite.hash.chars().take(12).collect(),
            verdict: verdict.0,
            verdict_class: verdict.1,
            trials: m.trials,
            planned: meta.trials_planned,
            passed: m.passed,
            failed: m.scored - m.passed,
            errors: m.errors,
            accuracy: RateView::of(&m.accuracy),
            status: meta.status.clone(),
            stopped: s.stopped.clone().or_else(|| meta.stop_reason.clone()),
            selection: s.selection.clone(),
            started: meta.started_at.clone(),
            finished: meta.finished_at.clone().unwrap_or_else(|| "–".into()),
            version: meta.toolgauge_version.clone(),
            targets: meta.matrix.targets.clone(),
            variants: meta.matrix.variants.clone(),
            tool_choice: meta.matrix.tool_choice.clone(),
            repeats: meta.matrix.repeats,
            sources: meta
                .sources
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            warnings: s.warnings.len(),
        };
        let thresholds = s
            .thresholds
            .iter()
            .map(|t| ThresholdRow {
                metric: t.metric.clone(),
                scope: t.scope.clone(),
                bound: match (t.min, t.max) {
                    (Some(lo), Some(hi)) => format!("{lo} – {hi}"),
                    (Some(lo), None) => format!("≥ {lo}"),
                    (None, Some(hi)) => format!("≤ {hi}"),
                    (None, None) => String::new(),
                },
                value: t
                    .value
                    .map_or("undefined".into(), |v| format::metric_value(&t.metric, v)),
                ok: t.ok,
            })
            .collect();

        // Cells: the summary's, in matrix order, then any a trial names that it lacks.
        let mut cells: Vec<CellRow> = s
            .cells
            .iter()
            .map(|c| {
                let mode = super::summary::cell_mode(c);
                CellRow::of(
                    cell_label(&c.target, &c.variant, &mode),
                    &c.target,
                    &c.variant,
                    &mode,
                    c.tool_definition_tokens,
                    &c.metrics,
                )
            })
            .collect();
        let mut index: HashMap<(String, String, String), usize> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    (c.target.clone(), c.variant.clone(), c.tool_choice.clone()),
                    i,
                )
            })
            .collect();
        let mut cell_index = Vec::with_capacity(report.trials.len());
        let mut extra: Vec<Vec<&TrialRecord>> = Vec::new();
        let first_extra = cells.len();
        for t in &report.trials {
            let key = (
                t.target.clone(),
                t.variant.clone(),
                super::summary::stream_mode_label(
                    super::distractors::mode_label(
                        &t.tool_choice.to_string(),
                        crate::score::distractors::record_n(t),
                    ),
                    t.stream,
                ),
            );
            let i = match index.get(&key) {
                Some(&i) => i,
                None => {
                    let i = first_extra + extra.len();
                    index.insert(key, i);
                    extra.push(Vec::new());
                    i
                }
            };
            if i >= first_extra {
                extra[i - first_extra].push(t);
            }
            cell_index.push(i);
        }
        for group in extra {
            let t = group[0];
            let mode = super::summary::stream_mode_label(
                super::distractors::mode_label(
                    &t.tool_choice.to_string(),
                    crate::score::distractors::record_n(t),
                ),
                t.stream,
            );
            cells.push(CellRow::of(
                cell_label(&t.target, &t.variant, &mode),
                &t.target,
                &t.variant,
                &mode,
                variant_tokens(report, &t.variant),
                &Metrics::of(group.iter().copied()),
            ));
        }
        let overall = CellRow::of("overall".into(), "", "", "", 0, m);

        // Variants: accuracy over all of a variant's trials, against its token size.
        let mut variant_names: Vec<String> = s.variants.iter().map(|v| v.variant.clone()).collect();
        for v in meta
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
            variants.push(VariantRow {
                variant: name.clone(),
                tokens,
                system_tokens: recorded.and_then(|v| v.system_prompt_tokens),
                changes: recorded.map(|v| v.changes.describe()).unwrap_or_default(),
                trials: vm.trials,
                accuracy: RateView::of(&vm.accuracy),
            });
        }
        let side_variants: Vec<String> = variants.iter().map(|v| v.variant.clone()).collect();
        let mut groups: IndexMap<(String, String), Vec<Option<RateView>>> = IndexMap::new();
        for c in &cells {
            let Some(vi) = side_variants.iter().position(|v| v == &c.variant) else {
                continue;
            };
            let row = groups
                .entry((c.target.clone(), c.tool_choice.clone()))
                .or_insert_with(|| (0..side_variants.len()).map(|_| None).collect());
            row[vi] = Some(c.accuracy.clone());
        }
        let side_by_side = groups
            .into_iter()
            .map(|((target, mode), accuracy)| SideBySide {
                group: format!("{target} × {mode}"),
                accuracy,
            })
            .collect();

        let (flips, flips_total) = flips(report, &side_variants);
        let Confusion {
            labels: confusion_labels,
            rows: confusion,
            others: confusion_others,
            top: confusion_top,
            top_total: confusion_top_total,
        } = confusion(&report.trials);

        // Invalid calls and ungrounded arguments, with examples.
        let mut invalid_examples = Vec::new();
        let mut invalid_total = 0;
        let mut ungrounded_examples = Vec::new();
        let mut ungrounded_total = 0;
        for (i, t) in report.trials.iter().enumerate() {
            let Some(checks) = &t.checks else { continue };
            let label = &cells[cell_index[i]].label;
            for (j, call) in checks.calls.iter().enumerate() {
                if let Some(reason) = call.invalid {
                    invalid_total += 1;
                    if invalid_examples.len() < MAX_EXAMPLES {
                        let raw = t
                            .response
                            .as_ref()
                            .and_then(|r| r.tool_calls.get(j))
                            .map_or("", |c| c.arguments.as_str());
                        invalid_examples.push(InvalidExample {
                            i,
                            case: t.case_id.clone(),
                            cell: label.clone(),
                            repeat: t.repeat,
                            tool: call.tool.clone(),
                            reason: invalid_str(reason),
                            detail: truncate(&call.schema_errors.join("; "), ARGS_CHARS),
                            arguments: truncate(raw, ARGS_CHARS),
                        });
                    }
                }
                if !call.ungrounded.is_empty() {
                    ungrounded_total += 1;
                    if ungrounded_examples.len() < MAX_EXAMPLES {
                        ungrounded_examples.push(UngroundedExample {
                            i,
                            case: t.case_id.clone(),
                            cell: label.clone(),
                            repeat: t.repeat,
                            tool: call.tool.clone(),
                            values: call.ungrounded.clone(),
                        });
                    }
                }
            }
        }

        let kinds: BTreeSet<&'static str> = report.trials.iter().map(|t| t.kind.as_str()).collect();
        let cell_labels: Vec<String> = cells.iter().map(|c| c.label.clone()).collect();
        let loops = LoopsView::build(&report.trials, &cell_index, &cell_labels);
        let (description_variants, descriptions, same_descriptions) = descriptions(meta);
        let system_prompts: Vec<SystemPromptRow> = meta
            .variant_details
            .iter()
            .filter(|(_, d)| d.system_prompt_tokens.is_some())
            .map(|(v, d)| SystemPromptRow {
                variant: v.clone(),
                text: d.system_prompt.clone(),
            })
            .collect();
        View {
            headline,
            thresholds,
            cells,
            overall,
            variant_changes: variants.iter().any(|v| !v.changes.is_empty()),
            variant_systems: variants.iter().any(|v| v.system_tokens.is_some()),
            system_prompts,
            variants,
            side_variants,
            side_by_side,
            description_variants,
            descriptions,
            same_descriptions,
            flips,
            flips_total,
            confusion_labels,
            confusion,
            confusion_others,
            confusion_top,
            confusion_top_total,
            invalid_examples,
            invalid_total,
            ungrounded_examples,
            ungrounded_total,
            loops,
            behaviour: super::behaviour_view::BehaviourView::build(&report.summary),
            trial_behaviour: report.trials.iter().any(|t| {
                !t.judge.is_empty() || t.checks.as_ref().is_some_and(|c| c.behaviour.is_some())
            }),
            kinds: kinds.into_iter().collect(),
            cell_labels,
            variant_points,
            cell_index,
        }
    }
}

fn variant_tokens(report: &RunReport, variant: &str) -> u64 {
    report
        .summary
        .variants
        .iter()
        .find(|v| v.variant == variant)
        .map(|v| v.tool_definition_tokens)
        .or_else(|| report.meta.tool_definition_tokens.get(variant).copied())
        .unwrap_or(0)
}

/// A case in one target × tool_choice: (target, tool_choice, case id).
type CaseKey<'a> = (&'a str, String, &'a str);

/// Cases that pass under one variant and fail under another in the same target ×
/// tool_choice. A case passes under a variant when every scored repeat passed, fails
/// when none did; errored trials are left out. Returns the first [`MAX_FLIPS`] and the
/// total.
fn flips(report: &RunReport, variants: &[String]) -> (Vec<Flip>, usize) {
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

/// Expected tool against called tool over scored trials. Expected: the trial's
/// `expected_tools` (none for should_not_call); called: the distinct called tools; an
/// empty side is "no call". Tools on both sides count on the diagonal; the rest pair
/// up (expected but not called × called but not expected), an unpaired rest against
/// "no call".
fn confusion<'a>(trials: &'a [TrialRecord]) -> Confusion {
    let mut counts: HashMap<(Option<&'a str>, Option<&'a str>), u64> = HashMap::new();
    let mut tools: BTreeSet<&str> = BTreeSet::new();
    for t in trials {
        let Some(c) = &t.checks else { continue };
        let mut expected: Vec<&str> = if t.kind == CaseKind::ShouldNotCall {
            Vec::new()
        } else {
            c.expected_tools.iter().map(String::as_str).collect()
        };
        expected.sort_unstable();
        expected.dedup();
        let mut called: Vec<&str> = c.calls.iter().map(|k| k.tool.as_str()).collect();
        called.sort_unstable();
        called.dedup();
        tools.extend(expected.iter().chain(&called));
        let mut add =
            |e: Option<&'a str>, k: Option<&'a str>| *counts.entry((e, k)).or_default() += 1;
        let only_e: Vec<&str> = expected
            .iter()
            .filter(|e| !called.contains(e))
            .copied()
            .collect();
        let only_c: Vec<&str> = called
            .iter()
            .filter(|k| !expected.contains(k))
            .copied()
            .collect();
        for e in expected.iter().filter(|e| called.contains(e)) {
            add(Some(e), Some(e));
        }
        match (only_e.is_empty(), only_c.is_empty()) {
            (true, true) => {
                if expected.is_empty() {
                    add(None, None);
                }
            }
            (true, false) => only_c.iter().for_each(|k| add(None, Some(k))),
            (false, true) => only_e.iter().for_each(|e| add(Some(e), None)),
            (false, false) => {
                for e in &only_e {
                    for k in &only_c {
                        add(Some(e), Some(k));
                    }
                }
            }
        }
    }
    // Suites with many tools (imported benchmarks offer hundreds) would make a table of
    // hundreds of thousands of cells: the most frequent tools keep their own row and
    // column, the rest share one ("other"), and their confusions are listed instead.
    let mut weight: HashMap<&str, u64> = HashMap::new();
    for ((e, k), n) in &counts {
        for t in [e, k].into_iter().flatten() {
            *weight.entry(t).or_default() += n;
        }
    }
    let shown: BTreeSet<&str> = if tools.len() <= MAX_CONFUSION_TOOLS {
        tools.clone()
    } else {
        let mut by_weight: Vec<&str> = tools.iter().copied().collect();
        by_weight.sort_by_key(|t| std::cmp::Reverse(weight.get(t).copied().unwrap_or(0)));
        by_weight
            .into_iter()
            .take(MAX_CONFUSION_TOOLS - 1)
            .collect()
    };
    let others = tools.len() - shown.len();
    let other_label = format!("other ({others} tools)");
    // The label of a side: a shown tool, "other", or "no call".
    fn label_of<'x>(t: Option<&'x str>, shown: &BTreeSet<&str>, other: &'x str) -> Option<&'x str> {
        match t {
            Some(t) if shown.contains(t) => Some(t),
            Some(_) => Some(other),
            None => None,
        }
    }
    let mut grid: HashMap<(Option<&str>, Option<&str>), u64> = HashMap::new();
    for ((e, k), n) in &counts {
        let side = |t| label_of(t, &shown, &other_label);
        *grid.entry((side(*e), side(*k))).or_default() += n;
    }
    let keys: Vec<Option<&str>> = shown
        .iter()
        .map(|t| Some(*t))
        .chain((others > 0).then_some(Some(other_label.as_str())))
        .chain([None])
        .collect();
    let max = grid.values().copied().max().unwrap_or(0).max(1);
    let labels = keys
        .iter()
        .map(|k| k.unwrap_or(NO_CALL).to_string())
        .collect();
    let rows = keys
        .iter()
        .map(|e| {
            let cells: Vec<ConfusionCell> = keys
                .iter()
                .map(|k| {
                    let n = grid.get(&(*e, *k)).copied().unwrap_or(0);
                    ConfusionCell {
                        n,
                        alpha: format!("{:.2}", n as f64 / max as f64 * 0.85),
                        // "other" against "other" may be two different tools.
                        diagonal: e == k && (others == 0 || *e != Some(other_label.as_str())),
                    }
                })
                .collect();
            ConfusionRow {
                expected: e.unwrap_or(NO_CALL).to_string(),
                total: cells.iter().map(|c| c.n).sum(),
                cells,
            }
        })
        .collect();
    // With "other", the most frequent confusions by name (expected ≠ called).
    let mut top: Vec<TopConfusion> = if others == 0 {
        Vec::new()
    } else {
        counts
            .iter()
            .filter(|((e, k), _)| e != k)
            .map(|((e, k), n)| TopConfusion {
                expected: e.unwrap_or(NO_CALL).to_string(),
                called: k.unwrap_or(NO_CALL).to_string(),
                n: *n,
            })
            .collect()
    };
    top.sort_by(|a, b| {
        b.n.cmp(&a.n)
            .then_with(|| a.expected.cmp(&b.expected))
            .then_with(|| a.called.cmp(&b.called))
    });
    let top_total = top.len();
    top.truncate(MAX_TOP_CONFUSIONS);
    Confusion {
        labels,
        rows,
        others,
        top,
        top_total,
    }
}

/// Tools with a row and column of their own in the confusion matrix.
const MAX_CONFUSION_TOOLS: usize = 24;

/// Confusions listed by name when the matrix groups tools under "other".
const MAX_TOP_CONFUSIONS: usize = 30;

/// The confusion matrix of a report.
struct Confusion {
    labels: Vec<String>,
    rows: Vec<ConfusionRow>,
    /// Tools counted under "other" (0: every tool has its own row and column).
    others: usize,
    /// The most frequent confusions by tool name, when some tools are under "other".
    top: Vec<TopConfusion>,
    /// All distinct confusions (`top` holds at most [`MAX_TOP_CONFUSIONS`]).
    top_total: usize,
}

/// One confusion between two named sides, and how often it happened.
#[derive(Serialize)]
struct TopConfusion {
    expected: String,
    called: String,
    n: u64,
}

// ---------------------------------------------------------------------------------------
// Embedded data for the script

/// One trial as the script sees it: its conversation by index into `convs`, its cell by
/// index into `cells`.
#[derive(Serialize)]
struct TrialData<'a> {
    case_id: &'a str,
    kind: CaseKind,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tags: &'a [String],
    cell: usize,
    repeat: u32,
    conv: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<Cow<'a, Response>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Cow<'a, TrialChecks>>,
    verdict: Verdict,
    #[serde(skip_serializing_if = "no_reasons")]
    reasons: Cow<'a, [Reason]>,
    /// The trial's cost for people (see [`format::usd`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<String>,
    /// A loop trial's rounds, stop and judge facts; its `conv` is then the context the
    /// first round sent, and `response` is left out (it is the first round's).
    #[serde(skip_serializing_if = "Option::is_none")]
    episode: Option<Cow<'a, EpisodeRecord>>,
    /// The judge model's calls (verdicts and rationales); left out when none was made.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    judge: Cow<'a, [crate::judge::model::JudgeCall]>,
}

#[derive(Serialize)]
struct Data<'a> {
    cells: Vec<String>,
    convs: Vec<&'a [Message]>,
    trials: Vec<TrialData<'a>>,
}

fn no_reasons(r: &[Reason]) -> bool {
    r.is_empty()
}

/// `s` when it fits [`MAX_EMBEDDED_BYTES`]; else its start and a note of the bytes left
/// out.
fn cut_long(s: &str) -> Option<String> {
    let (head, more) = format::cut_bytes(s, MAX_EMBEDDED_BYTES);
    (more > 0).then(|| format!("{head}\n… {more} more bytes, see trials.jsonl"))
}

fn too_long(s: &str) -> bool {
    s.len() > MAX_EMBEDDED_BYTES
}

/// The response as embedded in the page: an answer or raw arguments above
/// [`MAX_EMBEDDED_BYTES`] are cut with a note (a 5 MB answer would make the page
/// unusable; the journal keeps it whole). Copied only when something is cut.
fn embedded_response(r: &Response) -> Cow<'_, Response> {
    let long_text = r.text.as_deref().is_some_and(too_long);
    if !long_text
        && !r.tool_calls.iter().any(|c| too_long(&c.arguments))
        && !r.warnings.iter().any(|w| too_long(w))
    {
        return Cow::Borrowed(r);
    }
    let mut r = r.clone();
    if let Some(t) = &mut r.text
        && let Some(cut) = cut_long(t)
    {
        *t = cut;
    }
    for c in &mut r.tool_calls {
        if let Some(cut) = cut_long(&c.arguments) {
            c.arguments = cut;
        }
    }
    // A warning quotes what the server sent, which a hand-edited journal can make huge.
    for w in &mut r.warnings {
        if let Some(cut) = cut_long(w) {
            *w = cut;
        }
    }
    Cow::Owned(r)
}

/// The checks as embedded: schema errors and ungrounded values quote the arguments, so
/// they are cut like them.
fn embedded_checks(c: &TrialChecks) -> Cow<'_, TrialChecks> {
    let long = c.calls.iter().any(|x| {
        x.schema_errors
            .iter()
            .chain(&x.ungrounded)
            .any(|s| too_long(s))
    });
    // The judge's rationale for the observed behaviour can be as long as it likes.
    let long_why = c
        .behaviour
        .as_ref()
        .and_then(|b| b.why.as_deref())
        .is_some_and(too_long);
    if !long && !long_why {
        return Cow::Borrowed(c);
    }
    let mut c = c.clone();
    if let Some(why) = c.behaviour.as_mut().and_then(|b| b.why.as_mut())
        && let Some(cut) = cut_long(why)
    {
        *why = cut;
    }
    for x in &mut c.calls {
        for s in x.schema_errors.iter_mut().chain(x.ungrounded.iter_mut()) {
            if let Some(cut) = cut_long(s) {
                *s = cut;
            }
        }
    }
    Cow::Owned(c)
}

/// The reasons as embedded: a message may quote a whole argument.
fn embedded_reasons(reasons: &[Reason]) -> Cow<'_, [Reason]> {
    if !reasons.iter().any(|r| too_long(&r.message)) {
        return Cow::Borrowed(reasons);
    }
    Cow::Owned(
        reasons
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if let Some(cut) = cut_long(&r.message) {
                    r.message = cut;
                }
                r
            })
            .collect(),
    )
}

impl<'a> Data<'a> {
    fn build(report: &'a RunReport, cell_index: &[usize], cells: Vec<String>) -> Data<'a> {
        let mut convs: Vec<&'a [Message]> = Vec::new();
        // Keyed by the conversation's JSON: equal conversations are embedded once.
        let mut seen: HashMap<String, usize> = HashMap::new();
        let trials = report
            .trials
            .iter()
            .zip(cell_index)
            .map(|(t, &cell)| {
                // A loop trial's rounds carry every message after the context, so only
                // the context is embedded (shared by the trials of the case).
                let messages = match &t.episode {
                    Some(e) => {
                        let context = e.rounds.first().map_or(t.messages.len(), |r| r.sent);
                        &t.messages[..context.min(t.messages.len())]
                    }
                    None => &t.messages[..],
                };
                let key = serde_json::to_string(messages).unwrap_or_default();
                let conv = *seen.entry(key).or_insert_with(|| {
                    convs.push(messages);
                    convs.len() - 1
                });
                TrialData {
                    case_id: &t.case_id,
                    kind: t.kind,
                    tags: &t.tags,
                    cell,
                    repeat: t.repeat,
                    conv,
                    response: t
                        .response
                        .as_ref()
                        .filter(|_| !t.is_loop())
                        .map(embedded_response),
                    checks: t.checks.as_ref().map(embedded_checks),
                    verdict: t.verdict,
                    reasons: embedded_reasons(&t.reasons),
                    cost: t.cost_usd.map(format::usd),
                    episode: t
                        .episode
                        .as_ref()
                        .map(|e| loop_view::embedded_episode(e, too_long, cut_long)),
                    judge: super::behaviour_view::embedded_judge(&t.judge, too_long, cut_long),
                }
            })
            .collect();
        Data {
            cells,
            convs,
            trials,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Charts: SVG strings from numbers and escaped labels

/// One row per cell (and overall), one panel per metric: the value as a dot and its 95%
/// interval as an error bar on a 0–100% axis.
fn cell_chart(cells: &[CellRow], overall: &CellRow) -> String {
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
fn variant_chart(points: &[(String, u64, Rate)]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::RoundRecord;
    use crate::judge::calls::CallCheck;
    use crate::provider::{ToolCall, ToolChoice, Usage};
    use crate::report::summary::Summary;
    use crate::report::{MatrixRef, RunMeta, RunSettings, SuiteRef, VariantTokens};
    use crate::suite::trajectory::StopReason;
    use crate::tools::ToolOutcome;

    const SCRIPT: &str = "<script>alert(1)</script>";
    const IMG: &str = "\"><img src=x onerror=alert(1)>";
    const URL: &str = "https://evil.example/x.js";

    fn call_check(
        tool: &str,
        invalid: Option<InvalidReason>,
        ungrounded: Vec<String>,
    ) -> CallCheck {
        CallCheck {
            tool: tool.into(),
            id: Some("c1".into()),
            json_ok: invalid != Some(InvalidReason::InvalidJson),
            known_tool: invalid != Some(InvalidReason::UnknownTool),
            schema_ok: Some(invalid.is_none()),
            schema_errors: if invalid == Some(InvalidReason::SchemaViolation) {
                vec![format!("\"city\" is not a string {SCRIPT}")]
            } else {
                Vec::new()
            },
            invalid,
            required_present: 1,
            required_total: 1,
            missing_required: Vec::new(),
            grounding_checked: 1,
            ungrounded,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn trial(
        case: &str,
        kind: CaseKind,
        target: &str,
        variant: &str,
        repeat: u32,
        text: Option<&str>,
        calls: Vec<(&str, &str, Option<InvalidReason>, Vec<String>)>,
        verdict: Verdict,
    ) -> TrialRecord {
        let tool_calls: Vec<ToolCall> = calls
            .iter()
            .map(|(n, a, _, _)| ToolCall {
                id: Some("c1".into()),
                name: (*n).into(),
                arguments: (*a).into(),
            })
            .collect();
        let checks = (verdict != Verdict::Error).then(|| TrialChecks {
            kind,
            called: !calls.is_empty(),
            calls: calls
                .iter()
                .map(|(n, _, inv, ung)| call_check(n, *inv, ung.clone()))
                .collect(),
            expected_tools: if kind == CaseKind::ShouldNotCall {
                Vec::new()
            } else {
                vec!["get_weather".into()]
            },
            right_tools: None,
            args_matched: 1,
            args_expected: 1,
            behaviour: None,
        });
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind,
            tags: Vec::new(),
            target: target.into(),
            variant: variant.into(),
            tool_choice: ToolChoice::Auto,
            repeat,
            stream: false,
            messages: vec![
                Message::System {
                    content: "You are a helpful assistant.".into(),
                },
                Message::User {
                    content: format!("What is the weather in Beijing? ({case})"),
                },
            ],
            response: (verdict != Verdict::Error).then(|| Response {
                text: text.map(str::to_string),
                tool_calls,
                usage: Some(Usage {
                    input_tokens: 120,
                    output_tokens: 14,
                    estimated: false,
                }),
                latency_ms: 412.0,
                ..Response::default()
            }),
            checks,
            verdict,
            reasons: match verdict {
                Verdict::Pass => Vec::new(),
                Verdict::Fail => vec![Reason {
                    code: "args_mismatch".into(),
                    message: format!("city: expected \"北京\", got {SCRIPT}"),
                }],
                Verdict::Error => vec![Reason {
                    code: "provider_error".into(),
                    message: "HTTP 500".into(),
                }],
            },
            cost_usd: Some(0.0002),
            distractors: None,
            episode: None,
        }
    }

    fn report_of(trials: Vec<TrialRecord>, variants: &[(&str, u64)]) -> RunReport {
        let targets: Vec<String> = {
            let mut t: Vec<String> = trials.iter().map(|t| t.target.clone()).collect();
            t.dedup();
            t.sort();
            t.dedup();
            t
        };
        let variant_tokens: Vec<VariantTokens> = variants
            .iter()
            .map(|(v, n)| VariantTokens {
                variant: (*v).into(),
                tool_definition_tokens: *n,
                ..VariantTokens::default()
            })
            .collect();
        let cells: Vec<(String, String, String)> = targets
            .iter()
            .flat_map(|t| {
                variants
                    .iter()
                    .map(move |(v, _)| (t.clone(), (*v).to_string(), "auto".to_string()))
            })
            .collect();
        let summary = Summary::build(
            &format!("weather {SCRIPT}"),
            &cells,
            &variant_tokens,
            &trials,
            &[],
        );
        let meta = RunMeta {
            run_format: 1,
            toolgauge_version: "0.1.0".into(),
            suite: SuiteRef {
                name: "weather".into(),
                path: "suites/weather.yaml".into(),
                hash: "0123456789abcdef0123".into(),
                description: None,
            },
            matrix: MatrixRef {
                targets: targets.clone(),
                variants: variants.iter().map(|v| v.0.to_string()).collect(),
                tool_choice: vec!["auto".into()],
                repeats: 2,
            },
            sources: targets
                .iter()
                .map(|t| (t.clone(), "replay".to_string()))
                .collect(),
            tools: IndexMap::new(),
            tool_definition_tokens: variants.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
            variant_details: IndexMap::new(),
            trials_planned: trials.len() as u64,
            trials_written: trials.len() as u64,
            started_at: "2025-01-01T00:00:00Z".into(),
            finished_at: Some("2025-01-01T00:01:00Z".into()),
            status: "complete".into(),
            stop_reason: None,
            settings: RunSettings::default(),
            selection: None,
            merged_from: Vec::new(),
        };
        RunReport {
            meta,
            trials,
            summary,
        }
    }

    fn hostile_report() -> RunReport {
        use CaseKind::*;
        use Verdict::*;
        let xss_case = format!("case {SCRIPT} {IMG}");
        let both = format!("{SCRIPT} {IMG}");
        let t = "openai:gpt-x";
        let trials = vec![
            // The text answer carries both payloads and a URL.
            trial(
                "chat",
                ShouldNotCall,
                t,
                "terse",
                0,
                Some(&format!("{both} see {URL}")),
                vec![],
                Pass,
            ),
            trial(
                "chat",
                ShouldNotCall,
                t,
                "verbose",
                0,
                Some("Hello"),
                vec![],
                Pass,
            ),
            // A tool-call argument carries them; ungrounded too.
            trial(
                "weather",
                ShouldCall,
                t,
                "terse",
                0,
                None,
                vec![(
                    "get_weather",
                    &format!(r#"{{"city": "{}"}}"#, both.replace('"', "\\\"")),
                    None,
                    vec![format!("city = {IMG}")],
                )],
                Fail,
            ),
            trial(
                "weather",
                ShouldCall,
                t,
                "verbose",
                0,
                None,
                vec![("get_weather", r#"{"city": "北京"}"#, None, vec![])],
                Pass,
            ),
            // The case id carries them; an invalid call with broken JSON.
            trial(
                &xss_case,
                ShouldCall,
                t,
                "terse",
                0,
                None,
                vec![(
                    &format!("send_{IMG}"),
                    &format!("{{not json {SCRIPT}"),
                    Some(InvalidReason::UnknownTool),
                    vec![],
                )],
                Fail,
            ),
            trial(
                &xss_case,
                ShouldCall,
                t,
                "verbose",
                0,
                None,
                vec![(
                    "get_weather",
                    r#"{"city": 3}"#,
                    Some(InvalidReason::SchemaViolation),
                    vec![],
                )],
                Fail,
            ),
            trial("weather", ShouldCall, t, "terse", 1, None, vec![], Error),
        ];
        report_of(trials, &[("terse", 180), ("verbose", 420)])
    }

    /// The embedded JSON block and the page without it.
    fn split_data(html: &str) -> (&str, String) {
        let open = r#"<script type="application/json" id="tg-data">"#;
        let start = html.find(open).expect("data block") + open.len();
        let end = start + html[start..].find("</script>").expect("end of data block");
        let rest = format!("{}{}", &html[..start], &html[end..]);
        (&html[start..end], rest)
    }

    /// The visible text of each row label of the cell chart, in row order.
    fn chart_row_labels(html: &str) -> Vec<String> {
        html.split(r#"<text class="label""#)
            .skip(1)
            .map(|t| {
                let after_title = &t[t.find("</title>").unwrap() + "</title>".len()..];
                // As a reader sees it: `/` is escaped in the page (`&#x2f;`).
                after_title[..after_title.find("</text>").unwrap()].replace("&#x2f;", "/")
            })
            .collect()
    }

    #[test]
    fn chart_labels_keep_variant_and_tool_choice_and_what_tells_targets_apart() {
        let long = |n: u32| format!("openai-compatible:fake-{n}@http://127.0.0.1:8080/v1");
        let trials = vec![
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(1),
                "terse",
                0,
                None,
                vec![],
                Verdict::Fail,
            ),
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(1),
                "verbose",
                0,
                None,
                vec![],
                Verdict::Fail,
            ),
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(2),
                "terse",
                0,
                None,
                vec![],
                Verdict::Fail,
            ),
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(2),
                "verbose",
                0,
                None,
                vec![],
                Verdict::Fail,
            ),
        ];
        let report = report_of(trials, &[("terse", 10), ("verbose", 20)]);
        let html = render_html(&report).unwrap();
        let labels = chart_row_labels(&html);
        assert_eq!(labels.len(), 5, "{labels:?}");
        assert_eq!(labels[4], "overall");
        for (label, (n, variant)) in
            labels
                .iter()
                .zip([(1, "terse"), (1, "verbose"), (2, "terse"), (2, "verbose")])
        {
            assert!(
                label.ends_with(&format!(" × {variant} × auto")),
                "variant × tool_choice whole: {label}"
            );
            assert!(
                label.contains(&format!("fake-{n}")),
                "the differing part: {label}"
            );
            assert!(format::width(label) <= CHART_LABEL_CHARS, "{label}");
            // The tooltip has the whole label.
            let whole = esc(&format!("{} × {variant} × auto", long(n)));
            assert!(html.contains(&format!("<title>{whole}</title>")));
        }
        // One target: its name is in the headline, the rows are variant × tool_choice.
        let one = report_of(
            vec![
                trial(
                    "a",
                    CaseKind::ShouldCall,
                    &long(1),
                    "terse",
                    0,
                    None,
                    vec![],
                    Verdict::Pass,
                ),
                trial(
                    "a",
                    CaseKind::ShouldCall,
                    &long(1),
                    "verbose",
                    0,
                    None,
                    vec![],
                    Verdict::Pass,
                ),
            ],
            &[("terse", 10), ("verbose", 20)],
        );
        assert_eq!(
            chart_row_labels(&render_html(&one).unwrap()),
            ["terse × auto", "verbose × auto", "overall"]
        );
    }

    #[test]
    fn huge_answers_and_arguments_are_cut_in_the_page_with_a_note() {
        let text = "a".repeat(MAX_EMBEDDED_BYTES + 1000);
        // A multi-byte character across the cut: the cut falls before it.
        let args = format!(
            "{{\"q\": \"{}北{}\"}}",
            "b".repeat(MAX_EMBEDDED_BYTES - 8),
            "c".repeat(5000)
        );
        let t = trial(
            "huge",
            CaseKind::ShouldCall,
            "openai:gpt-4o-mini",
            "v",
            0,
            Some(&text),
            vec![("get_weather", args.as_str(), None, vec![])],
            Verdict::Pass,
        );
        let report = report_of(vec![t], &[("v", 10)]);
        let html = render_html(&report).unwrap();
        let (data, _) = split_data(&html);
        let data: serde_json::Value = serde_json::from_str(data).unwrap();
        let response = &data["trials"][0]["response"];
        let shown = response["text"].as_str().unwrap();
        assert_eq!(
            shown,
            format!(
                "{}\n… 1000 more bytes, see trials.jsonl",
                "a".repeat(MAX_EMBEDDED_BYTES)
            )
        );
        let shown = response["tool_calls"][0]["arguments"].as_str().unwrap();
        // 7 bytes of `{"q": "` and the b's fill 65535 bytes; `北` (3 bytes) does not fit.
        let kept = 7 + MAX_EMBEDDED_BYTES - 8;
        assert_eq!(
            shown,
            format!(
                "{}\n… {} more bytes, see trials.jsonl",
                &args[..kept],
                args.len() - kept
            )
        );
        // The page stays near the limit, not the size of the answer.
        assert!(
            html.len() < 3 * MAX_EMBEDDED_BYTES + 200_000,
            "{}",
            html.len()
        );
        // Small responses are embedded whole.
        let small = trial(
            "s",
            CaseKind::ShouldCall,
            "t",
            "v",
            0,
            Some("fine"),
            vec![],
            Verdict::Pass,
        );
        let html = render_html(&report_of(vec![small], &[("v", 10)])).unwrap();
        let (data, _) = split_data(&html);
        let data: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(data["trials"][0]["response"]["text"], "fine");
        assert_eq!(data["trials"][0]["cost"], "$0.0002");
    }

    #[test]
    fn hostile_text_renders_as_text_and_data_round_trips() {
        let report = hostile_report();
        let html = render_html(&report).unwrap();
        // No payload survives unescaped, anywhere (data block included).
        assert!(!html.contains("<script>alert(1)"));
        assert!(!html.contains("<img src=x"));
        assert!(!html.contains("<img"));
        // ... but they are shown, escaped, as text (minijinja also escapes `/`).
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
        assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
        // Only the page's own scripts: the data block and the inline script.
        assert_eq!(html.matches("<script").count(), 2, "{html}");
        assert!(!html.contains("<script src"));
        assert!(!html.contains("<link"));
        assert!(!html.contains("innerHTML"));

        let (data, rest) = split_data(&html);
        // No URL outside the (escaped) data.
        assert!(!rest.contains("http://") && !rest.contains("https://"));
        assert!(!rest.contains("url("));
        assert!(!rest.contains("@import"));
        // Within the data block nothing can close it or open a tag.
        assert!(!data.contains('<') && !data.contains('>'));

        // Content.
        assert!(rest.contains("<svg"), "SVG charts");
        assert!(rest.contains(r#"id="confusion""#));
        assert!(rest.contains(r#"id="trials""#));
        assert!(rest.contains(r#"id="flips""#));
        assert_eq!(
            rest.matches(r#"<tr class="trow""#).count(),
            report.trials.len()
        );
        assert!(rest.contains("replay"));
        assert!(rest.contains("openai:gpt-x"));
        // Cases flipping between variants: chat passes under both, weather flips.
        let flips = &rest[rest.find(r#"id="flips""#).unwrap()..];
        let flips = &flips[..flips.find("</table>").unwrap()];
        assert!(flips.contains("weather"));
        assert!(!flips.contains(">chat<"));

        // The data parses back and holds the payloads verbatim.
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        let trials = v["trials"].as_array().unwrap();
        assert_eq!(trials.len(), report.trials.len());
        assert_eq!(
            trials[0]["response"]["text"].as_str().unwrap(),
            format!("{SCRIPT} {IMG} see {URL}")
        );
        let args = trials[2]["response"]["tool_calls"][0]["arguments"]
            .as_str()
            .unwrap();
        assert!(args.contains(SCRIPT) && args.contains(IMG), "{args}");
        assert_eq!(
            trials[4]["case_id"].as_str().unwrap(),
            format!("case {SCRIPT} {IMG}")
        );
        assert_eq!(
            trials[4]["checks"]["calls"][0]["invalid"].as_str(),
            Some("unknown_tool")
        );
        // Conversations are shared: two per case, three cases.
        assert_eq!(v["convs"].as_array().unwrap().len(), 3);
        assert_eq!(trials[1]["conv"], trials[0]["conv"]);
        assert_eq!(
            v["cells"][trials[0]["cell"].as_u64().unwrap() as usize],
            "openai:gpt-x × terse × auto"
        );
    }

    #[test]
    fn confusion_matrix_counts_expected_against_called() {
        use CaseKind::*;
        use Verdict::*;
        let t = "m";
        let trials = vec![
            trial(
                "a",
                ShouldCall,
                t,
                "v",
                0,
                None,
                vec![("get_weather", "{}", None, vec![])],
                Pass,
            ),
            trial(
                "b",
                ShouldCall,
                t,
                "v",
                0,
                None,
                vec![("send_email", "{}", None, vec![])],
                Fail,
            ),
            trial("c", ShouldCall, t, "v", 0, Some("no"), vec![], Fail),
            trial("d", ShouldNotCall, t, "v", 0, Some("hi"), vec![], Pass),
            trial(
                "e",
                ShouldNotCall,
                t,
                "v",
                0,
                None,
                vec![("get_weather", "{}", None, vec![])],
                Fail,
            ),
            trial("f", ShouldCall, t, "v", 0, None, vec![], Error),
        ];
        let Confusion {
            labels,
            rows,
            others,
            ..
        } = confusion(&trials);
        assert_eq!(others, 0);
        assert_eq!(labels, vec!["get_weather", "send_email", "no call"]);
        let grid: Vec<Vec<u64>> = rows
            .iter()
            .map(|r| r.cells.iter().map(|c| c.n).collect())
            .collect();
        assert_eq!(grid, vec![vec![1, 1, 1], vec![0, 0, 0], vec![1, 0, 1]]);
    }

    #[test]
    fn a_confusion_matrix_of_many_tools_keeps_the_frequent_ones_and_names_the_rest() {
        // 60 tools (an imported benchmark offers hundreds): tool i is expected in i + 1
        // trials and called right, except one rare confusion and one missed call.
        let mut trials = Vec::new();
        for i in 0..60 {
            let name = format!("tool_{i:02}");
            for _ in 0..=i {
                let mut t = trial(
                    "a",
                    CaseKind::ShouldCall,
                    "m",
                    "v",
                    0,
                    None,
                    vec![(name.as_str(), "{}", None, vec![])],
                    Verdict::Pass,
                );
                t.checks.as_mut().unwrap().expected_tools = vec![name.clone()];
                trials.push(t);
            }
        }
        let mut rare = trial(
            "r",
            CaseKind::ShouldCall,
            "m",
            "v",
            0,
            None,
            vec![("tool_01", "{}", None, vec![])],
            Verdict::Fail,
        );
        rare.checks.as_mut().unwrap().expected_tools = vec!["tool_00".into()];
        let mut missed = trial(
            "s",
            CaseKind::ShouldCall,
            "m",
            "v",
            0,
            Some("no"),
            vec![],
            Verdict::Fail,
        );
        missed.checks.as_mut().unwrap().expected_tools = vec!["tool_59".into()];
        trials.extend([rare, missed]);
        let c = confusion(&trials);
        assert_eq!(c.others, 60 - (MAX_CONFUSION_TOOLS - 1));
        assert_eq!(c.labels.len(), MAX_CONFUSION_TOOLS + 1, "{:?}", c.labels);
        assert_eq!(
            c.labels[MAX_CONFUSION_TOOLS - 1],
            format!("other ({} tools)", c.others)
        );
        assert_eq!(c.labels.last().map(String::as_str), Some(NO_CALL));
        // The most frequent tools keep their own row: tool_59 (60 trials) down to tool_37.
        assert!(
            c.labels.contains(&"tool_59".to_string()) && c.labels.contains(&"tool_37".to_string())
        );
        assert!(!c.labels.contains(&"tool_36".to_string()));
        // Nothing is lost: the cells add up to every pair counted.
        let cells: u64 = c.rows.iter().map(|r| r.total).sum();
        assert_eq!(cells, (1..=60).sum::<u64>() + 2);
        // "other" against "other" is not a diagonal (tool_00 called as tool_01 is in it).
        let other = &c.rows[MAX_CONFUSION_TOOLS - 1];
        assert!(!other.cells[MAX_CONFUSION_TOOLS - 1].diagonal);
        // tool_00 to tool_36 called right (1 + 2 + ... + 37 trials), and the rare one.
        assert_eq!(
            other.cells[MAX_CONFUSION_TOOLS - 1].n,
            (1..=37).sum::<u64>() + 1
        );
        // The confusions by name include the rare one.
        let named: Vec<(&str, &str, u64)> = c
            .top
            .iter()
            .map(|t| (t.expected.as_str(), t.called.as_str(), t.n))
            .collect();
        assert_eq!(
            named,
            vec![("tool_00", "tool_01", 1), ("tool_59", NO_CALL, 1)]
        );
        assert_eq!(c.top_total, 2);
    }

    fn big_report() -> RunReport {
        use CaseKind::*;
        use Verdict::*;
        let variants = [("terse", 180), ("plain", 260), ("verbose", 420)];
        let targets = ["openai:gpt-4.1-mini", "anthropic:claude-haiku"];
        let mut trials = Vec::with_capacity(10_000);
        let mut k = 0usize;
        'outer: for case in 0.. {
            for target in targets {
                for (variant, _) in variants {
                    for repeat in 0..3 {
                        if trials.len() == 10_000 {
                            break 'outer;
                        }
                        k += 1;
                        let id = format!("case_{case:04}");
                        let t = match k % 7 {
                            0 => trial(
                                &id,
                                ShouldNotCall,
                                target,
                                variant,
                                repeat,
                                Some("Sure, no tool is needed here."),
                                vec![],
                                Pass,
                            ),
                            1 => {
                                trial(&id, ShouldCall, target, variant, repeat, None, vec![], Fail)
                            }
                            2 => trial(
                                &id,
                                ShouldCall,
                                target,
                                variant,
                                repeat,
                                None,
                                vec![(
                                    "get_weather",
                                    r#"{"city": "Shanghai", "date": "2024-05-01"}"#,
                                    None,
                                    vec![r#"date = "2024-05-01""#.into()],
                                )],
                                Pass,
                            ),
                            3 => trial(
                                &id,
                                ShouldCall,
                                target,
                                variant,
                                repeat,
                                None,
                                vec![(
                                    "get_weather",
                                    r#"{"city": 3}"#,
                                    Some(InvalidReason::SchemaViolation),
                                    vec![],
                                )],
                                Fail,
                            ),
                            _ => trial(
                                &id,
                                ShouldCall,
                                target,
                                variant,
                                repeat,
                                None,
                                vec![(
                                    "get_weather",
                                    r#"{"city": "Beijing", "unit": "c"}"#,
                                    None,
                                    vec![],
                                )],
                                Pass,
                            ),
                        };
                        trials.push(t);
                    }
                }
            }
        }
        report_of(trials, &variants)
    }

    #[test]
    fn ten_thousand_trials_render_small() {
        let report = big_report();
        let start = std::time::Instant::now();
        let html = render_html(&report).unwrap();
        let took = start.elapsed();
        let (data, _) = split_data(&html);
        println!(
            "10,000 trials: report.html {:.2} MB (data {:.2} MB), rendered in {:.0} ms",
            html.len() as f64 / 1e6,
            data.len() as f64 / 1e6,
            took.as_secs_f64() * 1e3
        );
        assert!(html.len() < 10_000_000, "{} bytes", html.len());
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(v["trials"].as_array().unwrap().len(), 10_000);
    }

    /// `t` turned into a loop trial of two rounds: a call answered by an injected
    /// failure whose message carries markup, then a text answer after a scripted turn.
    fn as_loop(mut t: TrialRecord, stop: Option<StopReason>) -> TrialRecord {
        let call = ToolCall {
            id: Some("c1".into()),
            name: "get_weather".into(),
            arguments: r#"{"city": "Paris"}"#.into(),
        };
        let usage = |input_tokens| {
            Some(Usage {
                input_tokens,
                output_tokens: 5,
                estimated: false,
            })
        };
        let first = Response {
            tool_calls: vec![call.clone()],
            usage: usage(100),
            ..Response::default()
        };
        let context = t.messages.len();
        t.messages.extend([
            Message::Assistant {
                content: None,
                tool_calls: vec![call],
                state: None,
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                name: "get_weather".into(),
                content: format!("down {SCRIPT}"),
                is_error: true,
            },
            Message::User {
                content: "and now?".into(),
            },
        ]);
        t.response = Some(first.clone());
        t.episode = Some(EpisodeRecord {
            rounds: vec![
                RoundRecord {
                    sent: context,
                    user: None,
                    response: first,
                    outcomes: vec![ToolOutcome::fault(
                        crate::suite::loops::ErrorKind::ServerError,
                        &format!("down {SCRIPT}"),
                    )],
                    tool_ms: 1.5,
                },
                RoundRecord {
                    sent: context + 3,
                    user: Some("and now?".into()),
                    response: Response {
                        text: Some(format!("Sorry {IMG}")),
                        usage: usage(160),
                        ..Response::default()
                    },
                    outcomes: Vec::new(),
                    tool_ms: 0.0,
                },
            ],
            stop,
            checks: None,
        });
        t
    }

    #[test]
    fn loop_trials_add_the_loop_section_columns_and_their_episode() {
        use CaseKind::*;
        use Verdict::*;
        let single = trial("chat", ShouldNotCall, "m", "v", 0, Some("hi"), vec![], Pass);
        let looped = |repeat, stop| {
            as_loop(
                trial("w", ShouldCall, "m", "v", repeat, None, vec![], Fail),
                stop,
            )
        };
        let report = report_of(
            vec![
                single.clone(),
                looped(0, Some(StopReason::Answered)),
                looped(1, None),
            ],
            &[("v", 10)],
        );
        let html = render_html(&report).unwrap();
        let (data, rest) = split_data(&html);
        // Nothing of the tool results or answers is markup, and the script count holds.
        assert!(!html.contains("<script>alert") && !html.contains("<img"));
        assert_eq!(html.matches("<script").count(), 2);
        // The section: one cell row and overall, each 2 loop trials, 1 answered, 1 error.
        assert!(rest.contains(r##"<a href="#loops">Tool loops</a>"##));
        let stops = &rest[rest.find(r#"<table id="stops">"#).unwrap()..];
        let stops = &stops[..stops.find("</table>").unwrap()];
        let counts = r#"<td class="n">2</td><td class="n">1</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n">1</td>"#;
        assert_eq!(stops.matches(counts).count(), 2, "{stops}");
        // The chart: rounds 1 and 2, means 100 and 160 over 2 trials each.
        assert!(rest.contains("round 1: 100 input tokens on average over 2 trial(s)"));
        assert!(rest.contains("round 2: 160 input tokens on average over 2 trial(s)"));
        // The table's loop columns: rounds, calls, stop; dashes for the single-turn trial.
        assert!(rest.contains(r#"<td class="n">2</td><td class="n">1</td><td>answered</td>"#));
        assert!(rest.contains(r#"<td class="n">2</td><td class="n">1</td><td>error</td>"#));
        assert!(rest.contains(r#"<td class="n">–</td><td class="n">–</td><td>–</td>"#));
        // The data: the episode whole, the context as the conversation (shared by both
        // loop trials), no separate first response.
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        let t = &v["trials"][1];
        assert!(t.get("response").is_none());
        assert_eq!(t["conv"], v["trials"][2]["conv"]);
        assert_eq!(
            v["convs"][t["conv"].as_u64().unwrap() as usize]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let rounds = t["episode"]["rounds"].as_array().unwrap();
        assert_eq!(rounds[0]["outcomes"][0]["fault"], true);
        assert!(
            rounds[0]["outcomes"][0]["content"]
                .as_str()
                .unwrap()
                .contains(SCRIPT)
        );
        assert_eq!(rounds[1]["user"], "and now?");
        assert_eq!(rounds[1]["response"]["text"], format!("Sorry {IMG}"));
        assert_eq!(t["episode"]["stop"], "answered");
        assert!(v["trials"][2]["episode"].get("stop").is_none());
        // Without loop trials none of it is there (the page is as before loops existed).
        let html = render_html(&report_of(vec![single], &[("v", 10)])).unwrap();
        for loop_only in [
            "id=\"loops\"",
            "Tool loops",
            "details.round",
            "singleTranscript",
            "episode",
        ] {
            assert!(!html.contains(loop_only), "{loop_only}");
        }
    }

    #[test]
    fn behaviour_trials_add_their_matrix_rates_and_each_trials_facts_and_judge() {
        use crate::judge::model::{JudgeCall, JudgeQuestion};
        // The sample of score::behaviour (12 trials with an expected behaviour).
        let mut trials = crate::score::behaviour::tests::sample();
        // A judge decided #12 (CA expected, direct observed), with a hostile rationale.
        let last = trials.iter_mut().find(|t| t.case_id == "c12").unwrap();
        let facts = last.checks.as_mut().unwrap().behaviour.as_mut().unwrap();
        facts.by = crate::behaviour::ObservedBy::Judge;
        facts.why = Some(format!("answers the capital {SCRIPT}"));
        last.judge = vec![JudgeCall {
            question: JudgeQuestion::Behaviour,
            target: "openai:judge".into(),
            behaviour: Some(crate::behaviour::Behaviour::Direct),
            pass: None,
            rationale: format!("it answers {IMG}"),
            error: None,
            usage: None,
            cost_usd: None,
            latency_ms: 1.0,
        }];
        let report = report_of(trials, &[("default", 10)]);
        let html = render_html(&report).unwrap();
        let (data, rest) = split_data(&html);
        assert!(!html.contains("<img") && !html.contains("<script>alert"));
        assert!(rest.contains(r##"<a href="#behaviour">Behaviour</a>"##));
        let section = &rest[rest.find(r#"<section id="behaviour">"#).unwrap()..];
        let section = &section[..section.find("</section>").unwrap()];
        // One cell and overall (the same trials): macro-F1 53/84 = 0.631 with the pinned
        // bootstrap interval, both hallucination rates 1/4 = 25.0% [5–70%].
        assert_eq!(section.matches(r#"<h3 class="mono">"#).count(), 2);
        assert!(
            section.contains(r#"<b class="macro-f1">0.631</b><span class="ci">0.293–0.896</span>"#),
            "{section}"
        );
        assert_eq!(
            section
                .matches(r#"<b title="1&#x2f;4">25.0%</b><span class="ci">5–70%</span> (1&#x2f;4)"#)
                .count(),
            4,
            "{section}"
        );
        // The cannot_answer row: 1 call (25%), 0, 2 right (50%), 1 direct (25%), n 4.
        assert!(section.contains(r#"<tr><td class="mono">cannot_answer</td><td class="n fail">1 <span class="ci">25%</span></td><td class="n">0 <span class="ci">0%</span></td><td class="n pass">2 <span class="ci">50%</span></td><td class="n fail">1 <span class="ci">25%</span></td><td class="n">4</td></tr>"#), "{section}");
        // No trial expected direct: no such row, but its scores (shown twice) are listed.
        let matrix = &section[section.find(r#"<table class="bmatrix">"#).unwrap()..];
        let matrix = &matrix[..matrix.find("</table>").unwrap()];
        assert!(!matrix.contains(r#"mono">direct<"#), "{matrix}");
        assert!(section.contains(r#"<tr><td class="mono">direct</td><td class="n">0</td>"#));
        assert!(
            section.contains("Decided by: 4 call, 7 classifier, 1 judge."),
            "{section}"
        );
        // The detail script and each trial's facts and judge calls in the data.
        assert!(html.contains("plainTranscript"));
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        let t = v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["case_id"] == "c12")
            .unwrap();
        assert_eq!(t["checks"]["behaviour"]["by"], "judge");
        assert_eq!(t["judge"][0]["rationale"], format!("it answers {IMG}"));
        assert_eq!(t["judge"][0]["behaviour"], "direct");
        // Without behaviour facts none of it is there.
        let plain = trial(
            "chat",
            CaseKind::ShouldNotCall,
            "m",
            "v",
            0,
            Some("hi"),
            vec![],
            Verdict::Pass,
        );
        let html = render_html(&report_of(vec![plain], &[("v", 10)])).unwrap();
        for only in ["id=\"behaviour\"", "plainTranscript", "\"judge\""] {
            assert!(!html.contains(only), "{only}");
        }
    }

    #[test]
    fn svg_labels_are_escaped() {
        let r = Rate::new(3, 4);
        let svg = variant_chart(&[(IMG.to_string(), 10, r)]);
        assert!(!svg.contains("<img"));
        assert!(svg.contains("&lt;img"));
        assert_eq!(truncate("北京abc", 2), "北京…");
        assert_eq!(truncate("ab", 2), "ab");
    }

    /// The trial table as the template wrote it before `write_trial_rows` (the loop this
    /// function replaced), kept here as the reference for its bytes.
    const ROWS_TEMPLATE: &str = r#"{% for t in trials %}
<tr class="trow" id="t-{{ t.i }}"><td><details><summary>{{ t.case }}</summary></details></td><td>{{ t.kind }}</td><td>{{ t.cell }}</td><td>{{ t.repeat }}</td><td class="{{ t.verdict }}">{{ t.verdict }}{% if t.warn %} <span class="warn" title="this trial has warnings">⚠</span>{% endif %}</td>{% if loops %}{% if t.stop %}<td class="n">{{ t.rounds }}</td><td class="n">{{ t.calls }}</td><td>{{ t.stop }}</td>{% else %}<td class="n">–</td><td class="n">–</td><td>–</td>{% endif %}{% endif %}<td>{{ t.reason }}</td></tr>
{% endfor %}"#;

    /// `report`'s trial table through [`ROWS_TEMPLATE`], with the page's settings.
    fn rows_by_template(report: &RunReport) -> String {
        let view = View::build(report);
        let trials: Vec<serde_json::Value> = report
            .trials
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let summary = loop_view::trial_summary(t);
                serde_json::json!({
                    "i": i,
                    "case": t.case_id,
                    "kind": t.kind.as_str(),
                    "cell": view.cell_labels[view.cell_index[i]],
                    "repeat": t.repeat,
                    "verdict": verdict_str(t.verdict),
                    "reason": t.reasons.first().map_or(String::new(), |r| {
                        truncate(&format!("{}: {}", r.code, r.message), REASON_CHARS)
                    }),
                    "warn": t.response.as_ref().is_some_and(|r| !r.warnings.is_empty())
                        || t.episode.as_ref().is_some_and(|e| {
                            e.rounds.iter().any(|r| !r.response.warnings.is_empty())
                        }),
                    "rounds": summary.map(|s| s.0),
                    "calls": summary.map(|s| s.1),
                    "stop": summary.map(|s| s.2),
                })
            })
            .collect();
        let mut env = page_environment().unwrap();
        env.add_template("rows.html.j2", ROWS_TEMPLATE).unwrap();
        env.get_template("rows.html.j2")
            .unwrap()
            .render(
                context! { trials => Value::from(Serde(&trials)), loops => view.loops.is_some() },
            )
            .unwrap()
    }

    fn rows_written(report: &RunReport) -> String {
        let mut out = Vec::new();
        write_trial_rows(&mut out, report, &View::build(report)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn trial_rows_are_what_the_template_loop_wrote() {
        use CaseKind::*;
        use Verdict::*;
        // Markup in case ids, targets, variants and reasons; a reason over the cut, in
        // characters of several bytes; warnings on a response and on a loop round.
        let mut hostile = hostile_report();
        let long = format!("{}{SCRIPT}", "北".repeat(REASON_CHARS));
        hostile.trials[0].reasons = vec![Reason {
            code: "x&y".into(),
            message: long,
        }];
        if let Some(r) = hostile.trials[0].response.as_mut() {
            r.warnings.push("usage looked implausible".into());
        }
        let rows = rows_written(&hostile);
        assert_eq!(rows, rows_by_template(&hostile));
        assert_eq!(rows.lines().count(), hostile.trials.len());
        assert!(rows.contains("this trial has warnings") && !rows.contains("<script>"));

        let single = trial(
            "<b>",
            ShouldNotCall,
            "m",
            "v'\"",
            0,
            Some("hi"),
            vec![],
            Pass,
        );
        let mut looped = as_loop(
            trial("w", ShouldCall, "m", "v'\"", 1, None, vec![], Fail),
            Some(StopReason::Answered),
        );
        if let Some(e) = looped.episode.as_mut() {
            e.rounds[0].response.warnings.push("late usage".into());
        }
        let errored = as_loop(
            trial("w", ShouldCall, "m", "v'\"", 2, None, vec![], Error),
            None,
        );
        let loops = report_of(vec![single, looped, errored], &[("v'\"", 10)]);
        let rows = rows_written(&loops);
        assert_eq!(rows, rows_by_template(&loops));
        assert_eq!(rows.matches("<td class=\"n\">").count(), 6);

        // No trial: no row, as the loop wrote none.
        let empty = report_of(Vec::new(), &[("v", 10)]);
        assert_eq!(rows_written(&empty), "");
        assert_eq!(rows_by_template(&empty), "");
    }
}
