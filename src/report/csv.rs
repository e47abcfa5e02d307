//! `trials.csv` (one row per trial) and `summary.csv` (one row per cell, then `overall`);
//! `behaviour.csv` too when some trial expects a behaviour (see `report::behaviour`).
//! Column names are stable and documented in `docs/reports.md`.

use std::fmt::Write as _;

use super::format::{MACHINE_DIGITS, round_sig};
use super::{Exporter, ReportError, RunReport};
use crate::score::loops::{LoopMetrics, calls_made};
use crate::score::metrics::Metrics;
use crate::score::stats::Rate;

/// Columns of `trials.csv`.
pub const TRIAL_COLUMNS: &[&str] = &[
    "case_id",
    "kind",
    "target",
    "variant",
    "tool_choice",
    "repeat",
    "passed",
    "verdict",
    "reasons",
    "called",
    "tools_called",
    "invalid_calls",
    "ungrounded_args",
    "input_tokens",
    "output_tokens",
    "usage_estimated",
    "cost_usd",
    "latency_ms",
    "tags",
    "rounds",
    "tool_calls",
    "stop",
];

/// Columns added at the end of `trials.csv` in runs with the tool-count axis
/// (`distractors:`): the count, whether the first call named an expected tool (in
/// `should_call` trials), whether the trial made a false call, and the tokens of the
/// tool definitions sent. `summary.csv` then ends with `distractors` (the count).
pub const DISTRACTOR_TRIAL_COLUMNS: &[&str] = &[
    "distractors",
    "selected",
    "false_call",
    "tool_definition_tokens",
];

/// Columns added at the end of `trials.csv` and `summary.csv` (after every other
/// optional column) when some trial's provider reported cached input, cache-write or
/// reasoning tokens: the parts of `input_tokens` and `output_tokens` billed at other
/// rates (see `docs/metrics.md`). Runs without keep their columns as before.
pub const TOKEN_DETAIL_COLUMNS: &[&str] = &[
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
];

/// Columns of `summary.csv`.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "target",
    "variant",
    "tool_choice",
    "trials",
    "scored",
    "errors",
    "passed",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "trigger_precision",
    "trigger_precision_low",
    "trigger_precision_high",
    "trigger_recall",
    "trigger_recall_low",
    "trigger_recall_high",
    "trigger_f1",
    "false_call_rate",
    "miss_rate",
    "tool_selection_accuracy",
    "param_completeness",
    "arg_match_rate",
    "invalid_call_rate",
    "invalid_json",
    "unknown_tool",
    "schema_violation",
    "ungrounded_rate",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_p50_ms",
    "latency_p95_ms",
    "tool_definition_tokens",
    "pass_at_k",
    "pass_hat_k",
    "loop_trials",
    "task_success",
    "task_success_low",
    "task_success_high",
    "rounds_mean",
    "rounds_p95",
    "tool_calls_mean",
    "tool_calls_p95",
    "stop_answered",
    "stop_max_rounds",
    "stop_max_tool_calls",
    "stop_repeated_call",
    "recovery_rate",
    "duplicate_side_effect_rate",
    "data_flow_accuracy",
    "grounded_answer_rate",
    "input_tokens_per_round",
    "tool_time_share",
];

/// Columns of `summary.csv` from [`LOOP_SUMMARY_START`] on are the loop metrics: empty
/// for a cell without loop trials.
pub const LOOP_SUMMARY_START: usize = 35;

/// Writes `trials.csv` and `summary.csv`.
pub struct CsvExporter;

fn opt(v: Option<f64>) -> String {
    v.map(|x| {
        format!("{x:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    })
    .unwrap_or_default()
}

/// A cost: [`MACHINE_DIGITS`] significant digits (six decimals would turn a trial's
/// `$0.0000004` into 0), without the float noise of summed prices.
fn cost(v: Option<f64>) -> String {
    v.map(|x| round_sig(x, MACHINE_DIGITS).to_string())
        .unwrap_or_default()
}

fn rate3(r: &Rate) -> [String; 3] {
    [opt(r.value), opt(r.low), opt(r.high)]
}

fn metric_row(
    target: &str,
    variant: &str,
    mode: &str,
    m: &Metrics,
    def_tokens: Option<u64>,
) -> Vec<String> {
    let mut row = vec![
        target.to_string(),
        variant.to_string(),
        mode.to_string(),
        m.trials.to_string(),
        m.scored.to_string(),
        m.errors.to_string(),
        m.passed.to_string(),
    ];
    row.extend(rate3(&m.accuracy));
    row.extend(rate3(&m.trigger.precision));
    row.extend(rate3(&m.trigger.recall));
    row.push(opt(m.trigger.f1));
    row.push(opt(m.trigger.false_call_rate.value));
    row.push(opt(m.trigger.miss_rate.value));
    row.push(opt(m.tool_selection_accuracy.value));
    row.push(opt(m.param_completeness.value));
    row.push(opt(m.arg_match_rate.value));
    row.push(opt(m.invalid_call_rate.value));
    row.push(m.invalid_by_reason.invalid_json.to_string());
    row.push(m.invalid_by_reason.unknown_tool.to_string());
    row.push(m.invalid_by_reason.schema_violation.to_string());
    row.push(opt(m.ungrounded_rate.value));
    row.push(m.tokens.input.to_string());
    row.push(m.tokens.output.to_string());
    row.push(cost(m.cost_usd));
    row.push(opt(m.latency.p50_ms));
    row.push(opt(m.latency.p95_ms));
    row.push(def_tokens.map(|t| t.to_string()).unwrap_or_default());
    row.push(opt(m.consistency.as_ref().map(|c| c.pass_at_k)));
    row.push(opt(m.consistency.as_ref().map(|c| c.pass_hat_k)));
    row.extend(loop_cells(m.loops.as_ref()));
    row
}

/// The loop columns of a `summary.csv` row: every one empty without loop trials.
fn loop_cells(l: Option<&LoopMetrics>) -> Vec<String> {
    let width = SUMMARY_COLUMNS.len() - LOOP_SUMMARY_START;
    let Some(l) = l else {
        return vec![String::new(); width];
    };
    let mut row = vec![l.trials.to_string()];
    row.extend(rate3(&l.task_success));
    row.push(opt(l.rounds.mean));
    row.push(opt(l.rounds.p95));
    row.push(opt(l.tool_calls.mean));
    row.push(opt(l.tool_calls.p95));
    row.extend(l.stop.named().iter().map(|(_, n)| n.to_string()));
    row.push(opt(l.recovery.value));
    row.push(opt(l.duplicate_side_effect_rate.value));
    row.push(opt(l.data_flow_accuracy.value));
    row.push(opt(l.grounded_answer_rate.value));
    row.push(opt(l.input_tokens_per_round_mean));
    row.push(opt(l.time.tool_share));
    debug_assert_eq!(row.len(), width);
    row
}

/// The [`TOKEN_DETAIL_COLUMNS`] of a `summary.csv` row.
fn token_detail_cells(m: &Metrics) -> [String; 3] {
    [
        m.tokens.cached_input.to_string(),
        m.tokens.cache_write.to_string(),
        m.tokens.reasoning.to_string(),
    ]
}

fn err(e: impl std::fmt::Display) -> ReportError {
    ReportError::Render {
        format: "csv",
        message: e.to_string(),
    }
}

/// Which optional columns a run's CSV files have: the tool-count axis, behaviour facts,
/// streamed trials. Other runs keep the stable columns alone.
#[derive(Clone, Copy)]
struct Columns {
    axis: bool,
    behaviour: bool,
    streamed: bool,
    token_details: bool,
}

impl Columns {
    fn of(report: &RunReport) -> Columns {
        Columns {
            axis: report.trials.iter().any(|t| t.distractors.is_some()),
            behaviour: super::behaviour::any_facts(&report.trials),
            streamed: super::stream::any_streamed(&report.trials),
            token_details: report.summary.overall.tokens.has_details()
                || report
                    .summary
                    .cells
                    .iter()
                    .any(|c| c.metrics.tokens.has_details()),
        }
    }
}

/// The CSV files of `report`, each with the function that writes it; `behaviour.csv`
/// only when some trial expects a behaviour.
type WriteCsv = for<'w> fn(
    &RunReport,
    Columns,
    &mut csv::Writer<&'w mut dyn std::io::Write>,
) -> csv::Result<()>;

fn files(report: &RunReport) -> Vec<(&'static str, WriteCsv)> {
    let mut files: Vec<(&'static str, WriteCsv)> =
        vec![("trials.csv", write_trials), ("summary.csv", write_summary)];
    if report.summary.overall.behaviour.is_some() {
        files.push(("behaviour.csv", write_behaviour));
    }
    files
}

/// `trials.csv`: the header, then a row per trial.
fn write_trials(
    report: &RunReport,
    cols: Columns,
    w: &mut csv::Writer<&mut dyn std::io::Write>,
) -> csv::Result<()> {
    let mut header: Vec<&str> = TRIAL_COLUMNS.to_vec();
    if cols.axis {
        header.extend(DISTRACTOR_TRIAL_COLUMNS);
    }
    if cols.behaviour {
        header.extend(super::behaviour::TRIAL_COLUMNS);
    }
    if cols.streamed {
        header.extend(super::stream::TRIAL_COLUMNS);
    }
    if cols.token_details {
        header.extend(TOKEN_DETAIL_COLUMNS);
    }
    w.write_record(&header)?;
    // One record and one scratch string for every row: a row's two dozen fields are
    // written into them rather than each made a `String` (tens of thousands of small
    // allocations for a big run, written between its last answer and its exit).
    let mut row = Row::default();
    for t in &report.trials {
        let calls = t
            .response
            .as_ref()
            .map(|r| r.tool_calls.as_slice())
            .unwrap_or_default();
        let checks = t.checks.as_ref();
        let usage = t.usage();
        let episode = t.episode.as_ref();
        row.record.clear();
        row.text(&t.case_id);
        row.text(t.kind.as_str());
        row.text(&t.target);
        row.text(&t.variant);
        row.show(&t.tool_choice);
        row.show(t.repeat);
        row.show(t.passed());
        row.text(verdict_name(t.verdict));
        row.joined(" | ", t.reasons.iter(), |out, r| {
            write!(out, "{}: {}", r.code, r.message)
        });
        row.show(!calls.is_empty());
        row.joined(";", calls.iter(), |out, c| out.write_str(&c.name));
        row.show(checks.map_or(0, |c| {
            c.calls.iter().filter(|x| x.invalid.is_some()).count()
        }));
        row.joined(
            ";",
            checks
                .into_iter()
                .flat_map(|c| c.calls.iter().flat_map(|x| x.ungrounded.iter())),
            |out, u| out.write_str(u),
        );
        row.maybe(usage.map(|u| u.input_tokens));
        row.maybe(usage.map(|u| u.output_tokens));
        row.maybe(usage.map(|u| u.estimated));
        row.text(&cost(t.cost_usd));
        row.text(&t.latency_ms().map(|l| opt(Some(l))).unwrap_or_default());
        row.joined(";", t.tags.iter(), |out, tag| out.write_str(tag));
        row.maybe(episode.map(|e| e.rounds.len()));
        row.maybe(episode.map(calls_made));
        row.text(episode.and_then(|e| e.stop).map_or("", |s| s.as_str()));
        if cols.axis {
            let f = t.distractors;
            row.maybe(f.map(|f| f.n));
            row.maybe(f.and_then(|f| f.selected));
            row.maybe(f.map(|f| f.false_call));
            row.maybe(f.map(|f| f.tool_definition_tokens));
        }
        if cols.behaviour {
            for cell in super::behaviour::trial_cells(t) {
                row.text(&cell);
            }
        }
        if cols.streamed {
            for cell in super::stream::trial_cells(t) {
                row.text(&cell);
            }
        }
        if cols.token_details {
            row.maybe(usage.map(|u| u.cached_input_tokens));
            row.maybe(usage.map(|u| u.cache_write_tokens));
            row.maybe(usage.map(|u| u.reasoning_tokens));
        }
        w.write_byte_record(&row.record)?;
    }
    Ok(())
}

/// A verdict as `trials.csv` writes it (its `Debug` name, lower case).
fn verdict_name(v: crate::score::Verdict) -> &'static str {
    match v {
        crate::score::Verdict::Pass => "pass",
        crate::score::Verdict::Fail => "fail",
        crate::score::Verdict::Error => "error",
    }
}

/// A row of `trials.csv` being put together, reused from row to row.
#[derive(Default)]
struct Row {
    record: csv::ByteRecord,
    scratch: String,
}

impl Row {
    /// A field of text as it is.
    fn text(&mut self, text: &str) {
        self.record.push_field(text.as_bytes());
    }

    /// A field of `value` as `Display` writes it.
    fn show(&mut self, value: impl std::fmt::Display) {
        self.scratch.clear();
        let _ = write!(self.scratch, "{value}");
        self.record.push_field(self.scratch.as_bytes());
    }

    /// A field of `value` as `Display` writes it, or empty.
    fn maybe(&mut self, value: Option<impl std::fmt::Display>) {
        match value {
            Some(v) => self.show(v),
            None => self.text(""),
        }
    }

    /// A field of `items`, each written by `each`, separated by `separator`.
    fn joined<T>(
        &mut self,
        separator: &str,
        items: impl Iterator<Item = T>,
        mut each: impl FnMut(&mut String, T) -> std::fmt::Result,
    ) {
        self.scratch.clear();
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.scratch.push_str(separator);
            }
            let _ = each(&mut self.scratch, item);
        }
        self.record.push_field(self.scratch.as_bytes());
    }
}

/// `summary.csv`: a row per cell, then `overall`.
fn write_summary(
    report: &RunReport,
    cols: Columns,
    w: &mut csv::Writer<&mut dyn std::io::Write>,
) -> csv::Result<()> {
    let mut header: Vec<&str> = SUMMARY_COLUMNS.to_vec();
    if cols.axis {
        header.push("distractors");
    }
    if cols.streamed {
        header.extend(super::stream::SUMMARY_COLUMNS);
    }
    if cols.token_details {
        header.extend(TOKEN_DETAIL_COLUMNS);
    }
    w.write_record(&header)?;
    for c in &report.summary.cells {
        let mut row = metric_row(
            &c.target,
            &c.variant,
            &c.tool_choice,
            &c.metrics,
            Some(c.tool_definition_tokens),
        );
        if cols.axis {
            row.push(c.distractors.map(|n| n.to_string()).unwrap_or_default());
        }
        if cols.streamed {
            row.extend(super::stream::summary_cells(Some(c), &c.metrics));
        }
        if cols.token_details {
            row.extend(token_detail_cells(&c.metrics));
        }
        w.write_record(&row)?;
    }
    let mut row = metric_row("overall", "", "", &report.summary.overall, None);
    if cols.axis {
        row.push(String::new());
    }
    if cols.streamed {
        row.extend(super::stream::summary_cells(None, &report.summary.overall));
    }
    if cols.token_details {
        row.extend(token_detail_cells(&report.summary.overall));
    }
    w.write_record(&row)?;
    Ok(())
}

/// `behaviour.csv`: a row per cell with behaviour metrics, then `overall`.
fn write_behaviour(
    report: &RunReport,
    _: Columns,
    w: &mut csv::Writer<&mut dyn std::io::Write>,
) -> csv::Result<()> {
    let Some(overall) = &report.summary.overall.behaviour else {
        return Ok(());
    };
    w.write_record(super::behaviour::csv_header())?;
    for c in &report.summary.cells {
        if let Some(b) = &c.metrics.behaviour {
            // A streamed cell says so, as the other formats do.
            let mode = super::summary::stream_mode_label(c.tool_choice.clone(), c.stream);
            let cell = [c.target.as_str(), c.variant.as_str(), mode.as_str()];
            w.write_record(super::behaviour::csv_row(cell, c.distractors, b, opt))?;
        }
    }
    w.write_record(super::behaviour::csv_row(
        ["overall", "", ""],
        None,
        overall,
        opt,
    ))?;
    Ok(())
}

/// Write one CSV file into `out` through the csv crate's own buffer.
fn write_one(
    report: &RunReport,
    cols: Columns,
    write: WriteCsv,
    out: &mut dyn std::io::Write,
) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    write(report, cols, &mut w)?;
    w.flush()?;
    Ok(())
}

impl Exporter for CsvExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let cols = Columns::of(report);
        files(report)
            .into_iter()
            .map(|(name, write)| {
                let mut bytes = Vec::new();
                write_one(report, cols, write, &mut bytes).map_err(err)?;
                Ok((name.to_string(), bytes))
            })
            .collect()
    }

    /// Writes each file as its rows are made (see `report::ReportFile`).
    fn write_into(
        &self,
        report: &RunReport,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, ReportError> {
        let cols = Columns::of(report);
        files(report)
            .into_iter()
            .map(|(name, write)| {
                let mut file = super::ReportFile::create(dir, name)?;
                write_one(report, cols, write, file.out()).map_err(|e| {
                    if !e.is_io_error() {
                        return err(e);
                    }
                    match e.into_kind() {
                        csv::ErrorKind::Io(source) => file.io_error(source),
                        other => err(format!("{other:?}")),
                    }
                })?;
                file.finish()
            })
            .collect()
    }
}
