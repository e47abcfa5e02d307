//! The terminal summary: one table row per cell (metrics as columns, 95% intervals on
//! the headline rates), variant token sizes, failures in brief, and thresholds.
//! Colour only when stdout is a terminal and `NO_COLOR` is unset.
//!
//! The table fits the terminal: columns are added in order of importance (the cell,
//! n, errors, accuracy with its interval, precision, recall, invalid calls, tokens,
//! cost, pass@k/pass^k, latency, then the rest) while they fit the width, and a cell's
//! text is never wrapped, so no number is split across lines. Columns left out are
//! named under the table; `--wide` shows them all, and the files have every metric.
//! Long target, variant and tool_choice names are cut in the middle, keeping what
//! differs between rows.
//!
//! A run with tool loops adds a compact block under the table: per cell with loop trials,
//! task success with its interval, rounds and calls per task, stop reasons, recovery,
//! duplicates, data flow, grounding, input tokens per round, tool time and pass^k.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table, presets};

use super::RunReport;
use super::format::{self, cut_distinct, cut_end, width};
use super::loop_text;
use crate::score::metrics::Metrics;
use crate::score::stats::Rate;

/// Width assumed when stdout is not a terminal and `COLUMNS` is not set: wide enough
/// for the main columns in a CI log, narrow enough for its viewer.
pub const DEFAULT_WIDTH: u16 = 120;

/// Characters of a failure's reason shown with `--wide` (the files have all of it).
const WIDE_REASON_CHARS: usize = 160;

/// Widest a label column (target, variant, tool_choice) grows before its names are cut
/// (without `--wide`): a fifth of the width for targets, a sixth for the others, within
/// these bounds.
fn label_cap(column: usize, width: usize) -> usize {
    if column == 0 {
        (width / 5).clamp(12, 30)
    } else {
        (width / 6).clamp(8, 24)
    }
}

/// Narrowest a label column is cut to when even the main columns do not fit.
const LABEL_MIN: usize = 8;

/// Distinct warnings listed under "N trials had warnings" (report.html shows every
/// trial's, trials.jsonl keeps them all).
const MAX_WARNINGS: usize = 3;

/// Characters of one warning shown (a hand-edited journal can hold any text).
const WARNING_CHARS: usize = 300;

/// How the summary is printed.
#[derive(Debug, Clone, Copy)]
pub struct TerminalOptions {
    /// Use ANSI colours.
    pub color: bool,
    /// Failures listed before "and N more".
    pub max_failures: usize,
    /// Width in columns that the table and the lines fit (see [`detect_width`]).
    pub width: u16,
    /// Show every column and whole failure reasons, whatever the width.
    pub wide: bool,
}

/// The width to fit: `COLUMNS` when set to a positive number, else the terminal's
/// width when stdout is a terminal, else [`DEFAULT_WIDTH`].
pub fn detect_width() -> u16 {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<u16>().ok())
        .filter(|w| *w > 0)
    {
        return w;
    }
    // comfy-table asks the terminal when stdout is one.
    Table::new()
        .width()
        .filter(|w| *w > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{:.0}%", x * 100.0))
}

fn pct_ci(r: &Rate) -> String {
    match (r.value, r.low, r.high) {
        (Some(v), Some(lo), Some(hi)) => {
            format!("{:.0}% [{:.0}-{:.0}]", v * 100.0, lo * 100.0, hi * 100.0)
        }
        _ => "-".to_string(),
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"))
}

/// One column: its header (lines split by `\n`), one text per row, and its rank (lower
/// is more important; label columns are always shown).
struct Column {
    header: &'static str,
    rank: u8,
    right: bool,
    cells: Vec<String>,
    /// A longer form of the cells (precision with its interval, invalid calls by
    /// reason), shown with `--wide` or when the width allows once every column is in.
    full: Option<Vec<String>>,
    colors: Vec<Option<Color>>,
}

impl Column {
    fn new(header: &'static str, rank: u8) -> Column {
        Column {
            header,
            rank,
            right: false,
            cells: Vec::new(),
            full: None,
            colors: Vec::new(),
        }
    }

    fn push(&mut self, text: String, color: Option<Color>) {
        self.cells.push(text);
        self.colors.push(color);
    }

    /// Add the row's cell in its short form and its full form.
    fn push_both(&mut self, short: String, full: String) {
        self.cells.push(short);
        self.colors.push(None);
        self.full.get_or_insert_with(Vec::new).push(full);
    }

    /// Show the full form.
    fn widen(&mut self) {
        if let Some(full) = self.full.take() {
            self.cells = full;
        }
    }

    /// Columns the widest line of the header or a cell takes.
    fn width(&self) -> usize {
        self.header
            .lines()
            .chain(self.cells.iter().flat_map(|c| c.lines()))
            .map(width)
            .max()
            .unwrap_or(0)
            .max(1)
    }
}

/// Width of a table of columns of these content widths (UTF8_FULL_CONDENSED: one
/// border column, then each column's content, two padding columns and its right border).
fn table_width(widths: impl IntoIterator<Item = usize>) -> usize {
    1 + widths.into_iter().map(|w| w + 3).sum::<usize>()
}

fn accuracy_color(m: &Metrics) -> Option<Color> {
    m.accuracy.value.map(|v| {
        if v >= 0.9 {
            Color::Green
        } else if v >= 0.7 {
            Color::Yellow
        } else {
            Color::Red
        }
    })
}

/// Invalid calls with only the reasons that occurred, e.g. "7% (schema 1)".
fn invalid(m: &Metrics) -> String {
    let b = &m.invalid_by_reason;
    let parts: Vec<String> = [
        ("json", b.invalid_json),
        ("tool", b.unknown_tool),
        ("schema", b.schema_violation),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k} {n}"))
    .collect();
    if parts.is_empty() {
        pct(m.invalid_call_rate.value)
    } else {
        format!("{} ({})", pct(m.invalid_call_rate.value), parts.join(", "))
    }
}

/// The metric columns in display order, one cell per row of `rows`.
fn metric_columns(rows: &[&Metrics], repeats: bool, errors: bool, color: bool) -> Vec<Column> {
    let mut n = Column::new("n", 1);
    n.right = true;
    let mut err = Column::new("errors", 3);
    err.right = true;
    let mut acc = Column::new("accuracy\n[95% CI]", 2);
    let mut precision = Column::new("precision", 4);
    let mut recall = Column::new("recall", 5);
    let mut f1 = Column::new("F1", 12);
    let mut sel = Column::new("tool\nsel", 13);
    let mut params = Column::new("params", 14);
    let mut args = Column::new("args", 11);
    let mut inv = Column::new("invalid", 6);
    let mut ungrounded = Column::new("ungrounded", 15);
    let mut tokens = Column::new("tokens\nin/out", 7);
    let mut cost = Column::new("cost", 8);
    let mut latency = Column::new("p50/p95\nms", 10);
    let mut consistency = Column::new("pass@k\npass^k", 9);
    for m in rows {
        n.push(m.scored.to_string(), None);
        err.push(
            m.errors.to_string(),
            (color && m.errors > 0).then_some(Color::Red),
        );
        acc.push(pct_ci(&m.accuracy), accuracy_color(m).filter(|_| color));
        precision.push_both(pct(m.trigger.precision.value), pct_ci(&m.trigger.precision));
        recall.push_both(pct(m.trigger.recall.value), pct_ci(&m.trigger.recall));
        f1.push(m.trigger.f1.map_or("-".into(), |f| format!("{f:.2}")), None);
        sel.push(pct(m.tool_selection_accuracy.value), None);
        params.push(pct(m.param_completeness.value), None);
        args.push(pct(m.arg_match_rate.value), None);
        inv.push_both(pct(m.invalid_call_rate.value), invalid(m));
        ungrounded.push(pct(m.ungrounded_rate.value), None);
        tokens.push(
            format!(
                "{}/{}{}{}",
                m.tokens.input,
                m.tokens.output,
                if m.tokens.estimated_trials > 0 {
                    " est"
                } else {
                    ""
                },
                // The cached, cache-write and reasoning parts, only when some were
                // reported (so runs without them print as before).
                format::token_details(&m.tokens).map_or(String::new(), |d| format!(" ({d})"))
            ),
            None,
        );
        cost.push(format::usd_or(m.cost_usd, "-"), None);
        latency.push(
            format!("{}/{}", ms(m.latency.p50_ms), ms(m.latency.p95_ms)),
            None,
        );
        consistency.push(
            m.consistency.as_ref().map_or("-".into(), |c| {
                format!("{:.0}%/{:.0}%", c.pass_at_k * 100.0, c.pass_hat_k * 100.0)
            }),
            None,
        );
    }
    let mut cols = vec![n];
    if errors {
        cols.push(err);
    }
    cols.extend([
        acc, precision, recall, f1, sel, params, args, inv, ungrounded, tokens, cost, latency,
    ]);
    if repeats {
        cols.push(consistency);
    }
    cols
}

/// Rank of the last column that label columns are cut further to make room for.
const LAST_WORTH_CUTTING: u8 = 8;

/// The narrowest a label column may be cut to: [`LABEL_MIN`] (which `overall` fits) or
/// its header.
fn label_floor(col: &Column) -> usize {
    col.header
        .lines()
        .map(width)
        .max()
        .unwrap_or(0)
        .max(LABEL_MIN)
}

/// Columns the label columns could give up.
fn freeable(labels: &[(usize, Column)]) -> usize {
    labels
        .iter()
        .map(|(_, c)| c.width().saturating_sub(label_floor(c)))
        .sum()
}

/// Cut label columns, the widest first, until `need` columns are freed or none can be
/// cut further. `full` holds every label column's uncut names.
fn shrink_labels(
    labels: &mut [(usize, Column)],
    full: &[Vec<&str>; 3],
    with_overall: bool,
    need: usize,
) {
    let start: usize = labels.iter().map(|(_, c)| c.width()).sum();
    while start.saturating_sub(labels.iter().map(|(_, c)| c.width()).sum::<usize>()) < need {
        let Some((i, col)) = labels
            .iter_mut()
            .filter(|(_, c)| c.width() > label_floor(c))
            .max_by_key(|(_, c)| c.width())
        else {
            return;
        };
        let before = col.width();
        let overall = col.cells.last().cloned().filter(|_| with_overall);
        cut_label(col, &full[*i], before - 1, with_overall);
        if let (Some(o), Some(l)) = (overall, col.cells.last_mut()) {
            *l = o;
        }
        if col.width() >= before {
            return;
        }
    }
}

/// Width of the metric columns before `upto` in `order` that are shown.
fn shown_width(metrics: &[Column], shown: &[bool], order: &[usize], upto: usize) -> usize {
    order
        .iter()
        .take_while(|&&i| i != upto)
        .filter(|&&i| metrics[i].rank > 2 && shown[i])
        .map(|&i| metrics[i].width() + 3)
        .sum()
}

/// Cut the label column `col` (whose cells are `full`, then "overall" when `overall`)
/// to `max` columns.
fn cut_label(col: &mut Column, full: &[&str], max: usize, overall: bool) {
    col.cells = cut_distinct(full, max);
    if overall {
        col.cells.push(String::new());
    }
}

/// The summary table, fitted to `opts`; and the headers of the columns left out.
fn table(report: &RunReport, opts: TerminalOptions) -> (Table, Vec<&'static str>) {
    let s = &report.summary;
    let max = usize::from(opts.width);
    let repeats = s.cells.iter().any(|c| c.metrics.consistency.is_some());
    // One target: its name is in the heading above, so the table drops the column.
    let one_target = s
        .cells
        .iter()
        .all(|c| Some(&c.target) == s.cells.first().map(|f| &f.target));
    let with_overall = s.cells.len() > 1;

    // Label columns, kept whole with `--wide`.
    let modes: Vec<String> = s.cells.iter().map(super::summary::cell_mode).collect();
    let full: [Vec<&str>; 3] = [
        s.cells.iter().map(|c| c.target.as_str()).collect(),
        s.cells.iter().map(|c| c.variant.as_str()).collect(),
        modes.iter().map(String::as_str).collect(),
    ];
    let mut labels: Vec<(usize, Column)> = ["target", "variant", "tool\nchoice"]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !(one_target && *i == 0))
        .map(|(i, h)| {
            let mut c = Column::new(h, 0);
            let cap = if opts.wide {
                usize::MAX
            } else {
                label_cap(i, max)
            };
            cut_label(&mut c, &full[i], cap, with_overall);
            c.colors = vec![None; c.cells.len()];
            (i, c)
        })
        .collect();
    if with_overall && let Some(l) = labels[0].1.cells.last_mut() {
        *l = "overall".into();
    }

    let mut rows: Vec<&Metrics> = s.cells.iter().map(|c| &c.metrics).collect();
    if with_overall {
        rows.push(&s.overall);
    }
    let mut metrics = metric_columns(&rows, repeats, s.overall.errors > 0, opts.color);

    let mut shown: Vec<bool> = vec![true; metrics.len()];
    if opts.wide {
        metrics.iter_mut().for_each(Column::widen);
    } else {
        // The columns that are always shown: labels, n and accuracy.
        let core = |labels: &[(usize, Column)]| {
            table_width(
                labels
                    .iter()
                    .map(|(_, c)| c.width())
                    .chain(metrics.iter().filter(|c| c.rank <= 2).map(Column::width)),
            )
        };
        // Too narrow even for those: cut the label columns.
        let over = core(&labels).saturating_sub(max);
        shrink_labels(&mut labels, &full, with_overall, over);
        let mut used = core(&labels);
        let mut order: Vec<usize> = (0..metrics.len()).collect();
        order.sort_by_key(|&i| metrics[i].rank);
        let mut full_so_far = true;
        for &i in order.iter().filter(|&&i| metrics[i].rank > 2) {
            let w = metrics[i].width() + 3;
            // Columns are added in rank order and stop at the first that does not fit, so
            // a less important narrow column never shows while a more important one hides.
            // Up to the cost, a column is worth cutting long names for.
            if full_so_far
                && used + w > max
                && metrics[i].rank <= LAST_WORTH_CUTTING
                && freeable(&labels) >= used + w - max
            {
                shrink_labels(&mut labels, &full, with_overall, used + w - max);
                used = core(&labels) + shown_width(&metrics, &shown, &order, i);
            }
            if full_so_far && used + w <= max {
                used += w;
            } else {
                full_so_far = false;
                shown[i] = false;
            }
        }
        // Every column in and room left: the full forms, most important first.
        for &i in order.iter().filter(|_| full_so_far) {
            let c = &mut metrics[i];
            let Some(full) = &c.full else { continue };
            let wider = full
                .iter()
                .flat_map(|x| x.lines())
                .map(width)
                .chain(c.header.lines().map(width))
                .max()
                .unwrap_or(0);
            if shown[i] && used - c.width() + wider <= max {
                used = used - c.width() + wider;
                c.widen();
            }
        }
    }

    let columns: Vec<&Column> = labels
        .iter()
        .map(|(_, c)| c)
        .chain(
            metrics
                .iter()
                .zip(&shown)
                .filter(|(_, s)| **s)
                .map(|(c, _)| c),
        )
        .collect();
    let hidden: Vec<&'static str> = metrics
        .iter()
        .zip(&shown)
        .filter(|(_, s)| !**s)
        .map(|(c, _)| c.header)
        .collect();

    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED);
    // Widths are chosen above; comfy-table must not wrap a cell (a number split across
    // lines is unreadable).
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.force_no_tty();
    if opts.color {
        t.enforce_styling();
    }
    t.set_header(columns.iter().map(|c| Cell::new(c.header)));
    for r in 0..rows.len() {
        t.add_row(columns.iter().map(|c| {
            let mut cell = Cell::new(&c.cells[r]);
            if c.right {
                cell = cell.set_alignment(CellAlignment::Right);
            }
            if let Some(color) = c.colors[r] {
                cell = cell.fg(color);
            }
            cell
        }));
    }
    (t, hidden)
}

/// Render the full summary.
pub fn render(report: &RunReport, opts: TerminalOptions) -> String {
    let s = &report.summary;
    let m = &s.overall;
    let max = if opts.wide {
        usize::MAX
    } else {
        usize::from(opts.width)
    };
    let mut out = String::new();
    let line = |out: &mut String, text: &str| {
        let _ = writeln!(out, "{}", cut_end(text, max));
    };
    line(
        &mut out,
        &format!(
            "{}: {} trials, {} passed, {} failed, {} errors",
            s.suite,
            m.trials,
            m.passed,
            m.scored - m.passed,
            m.errors
        ),
    );
    for (target, source) in &report.meta.sources {
        // Wrapped, not cut: the end says whether the answers were hand-written.
        for l in format::wrap(&format!("  {target}: {source}"), max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    if let Some(why) = &s.stopped {
        for l in format::wrap(&format!("  stopped early: {why}"), max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    if let Some(part) = &s.selection {
        line(&mut out, &format!("  partial run: {part}"));
    }
    let (table, hidden) = table(report, opts);
    let _ = writeln!(out, "{table}");
    if !hidden.is_empty() {
        let names: Vec<String> = hidden.iter().map(|h| h.replace('\n', " ")).collect();
        let note = format!(
            "left out to fit {} columns: {} (--wide shows them; summary.csv has every metric)",
            opts.width,
            names.join(", ")
        );
        for l in format::wrap(&note, max, 2) {
            let _ = writeln!(out, "{l}");
        }
    }
    for text in super::stream::terminal_lines(s) {
        for l in format::wrap(&printable(&text), max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    loop_block(&mut out, report, max);
    for text in super::behaviour::terminal_lines(s, printable) {
        for l in format::wrap(&text, max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    if !s.variants.is_empty() {
        let sizes: Vec<String> = s
            .variants
            .iter()
            .map(|v| format!("{} {} tokens", v.variant, v.tool_definition_tokens))
            .collect();
        let mut text = format!(
            "tool definitions ({}): {}",
            crate::score::tokens::TOKENIZER,
            sizes.join(", ")
        );
        // System prompts count only when a variant sets its own (see VariantTokens).
        let systems: Vec<String> = s
            .variants
            .iter()
            .filter_map(|v| {
                v.system_prompt_tokens
                    .map(|n| format!("{} {n} tokens", v.variant))
            })
            .collect();
        if !systems.is_empty() {
            text.push_str(&format!("; system prompt: {}", systems.join(", ")));
        }
        for l in format::wrap(&text, max, 2) {
            let _ = writeln!(out, "{l}");
        }
        for l in variant_lines(&s.variants, max) {
            let _ = writeln!(out, "{l}");
        }
    }
    if !s.distractors.is_empty() {
        let _ = write!(out, "\n{}", super::distractors::text(&s.distractors));
    }
    warnings(&mut out, report, max);
    if !s.failures.is_empty() {
        let _ = writeln!(out, "\n{}:", super::summary::failure_heading(&s.failures));
        let repeated = report.meta.matrix.repeats > 1;
        let first_target = s.cells.first().map(|c| format!("{} × ", c.target));
        let one_target = s
            .cells
            .iter()
            .all(|c| Some(format!("{} × ", c.target)) == first_target);
        for f in s.failures.iter().take(opts.max_failures) {
            // With one target the heading names it; the cell is variant × tool_choice.
            let cell = match (&first_target, one_target) {
                (Some(p), true) => f.cell.strip_prefix(p.as_str()).unwrap_or(&f.cell),
                _ => &f.cell,
            };
            let repeat = if repeated || f.repeat > 0 {
                format!(" #{}", f.repeat)
            } else {
                String::new()
            };
            let reason = f.reason.replace(['\n', '\r'], " ");
            let text = if opts.wide {
                format!(
                    "  {} [{cell}{repeat}] {}",
                    f.case_id,
                    cut_end(&reason, WIDE_REASON_CHARS)
                )
            } else {
                format!("  {} [{cell}{repeat}] {reason}", f.case_id)
            };
            line(&mut out, &text);
        }
        if s.failures.len() > opts.max_failures {
            let _ = writeln!(
                out,
                "  ... and {} more (see trials.csv)",
                s.failures.len() - opts.max_failures
            );
        }
    }
    if !s.thresholds.is_empty() {
        match &s.selection {
            Some(part) => {
                let _ = writeln!(out, "\nthresholds (on a partial run: {part}):");
            }
            None => {
                let _ = writeln!(out, "\nthresholds:");
            }
        }
        for t in &s.thresholds {
            let bound = match (t.min, t.max) {
                (Some(lo), Some(hi)) => format!("in [{lo}, {hi}]"),
                (Some(lo), None) => format!(">= {lo}"),
                (None, Some(hi)) => format!("<= {hi}"),
                (None, None) => String::new(),
            };
            let value = t
                .value
                .map_or("undefined".into(), |v| format::metric_value(&t.metric, v));
            let (plain, mark) = match (t.ok, opts.color) {
                (true, true) => ("ok", "\x1b[32mok\x1b[0m"),
                (true, false) => ("ok", "ok"),
                (false, true) => ("FAIL", "\x1b[31mFAIL\x1b[0m"),
                (false, false) => ("FAIL", "FAIL"),
            };
            let text = format!("  {plain}  {} {bound} ({}): {value}", t.metric, t.scope);
            for (i, l) in format::wrap(&text, max, 6).into_iter().enumerate() {
                // The mark is coloured after wrapping, so widths count only visible text.
                let l = if i == 0 {
                    l.replacen(plain, mark, 1)
                } else {
                    l
                };
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out
}

/// Text from a journal without control characters (an edited journal can hold any).
fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

/// One cell's loop metrics on one (wrapped) line; a cell with no scored trial says so
/// (its figures would all be `-`), and errors are counted beside the scored trials.
fn loop_line(label: &str, l: &crate::score::loops::LoopMetrics) -> String {
    if l.scored == 0 {
        return format!(
            "  {label}: no trial scored ({})",
            crate::util::plural(l.errors as usize, "error", "errors")
        );
    }
    let errors = if l.errors > 0 {
        format!(
            " ({})",
            crate::util::plural(l.errors as usize, "error", "errors")
        )
    } else {
        String::new()
    };
    format!(
        "  {label}: {} trials{errors}, success {}, rounds {}, calls {}, stop {}, recovery {}, duplicates {}, data flow {}, grounded {}, tokens/round {}, tool time {}, {}",
        l.scored,
        pct_ci(&l.task_success),
        loop_text::per_task(&l.rounds, "-"),
        loop_text::per_task(&l.tool_calls, "-"),
        loop_text::stops(&l.stop, "-"),
        loop_text::recovery(l, "-", printable),
        loop_text::duplicates(l, "-"),
        pct(l.data_flow_accuracy.value),
        pct(l.grounded_answer_rate.value),
        loop_text::tokens_per_round(&l.input_tokens_per_round, ">", "-"),
        pct(l.time.tool_share),
        loop_text::pass_hat(l, "pass^k -"),
    )
}

/// The tool-loop block: a line per cell with loop trials (and `overall` when there are
/// several); nothing when the run has no loop trial.
fn loop_block(out: &mut String, report: &RunReport, max: usize) {
    let s = &report.summary;
    let looped: Vec<_> = s
        .cells
        .iter()
        .filter_map(|c| c.metrics.loops.as_ref().map(|l| (c, l)))
        .collect();
    if looped.is_empty() {
        return;
    }
    let one_target = s
        .cells
        .iter()
        .all(|c| Some(&c.target) == s.cells.first().map(|f| &f.target));
    let _ = writeln!(out, "tool loops (summary.json has every figure):");
    let mut lines: Vec<String> = looped
        .iter()
        .map(|(c, l)| {
            let mode = super::summary::cell_mode(c);
            let label = if one_target {
                format!("{} × {mode}", c.variant)
            } else {
                format!("{} × {} × {mode}", c.target, c.variant)
            };
            loop_line(&label, l)
        })
        .collect();
    if looped.len() > 1
        && let Some(l) = &s.overall.loops
    {
        lines.push(loop_line("overall", l));
    }
    for line in lines {
        for l in format::wrap(&line, max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
}

/// "N trials had warnings", then the first [`MAX_WARNINGS`] distinct warnings, each with
/// the first trial that had it and how many others did: a server that sends the same
/// absurd usage every time fills one line, not one per trial.
fn warnings(out: &mut String, report: &RunReport, max: usize) {
    let s = &report.summary;
    if s.warnings.is_empty() {
        return;
    }
    // Each distinct text, its first trial and how many trials had it, in journal order.
    let mut distinct: indexmap::IndexMap<&str, (&super::summary::WarningLine, usize)> =
        indexmap::IndexMap::new();
    for w in &s.warnings {
        for text in &w.warnings {
            let e = distinct.entry(text.as_str()).or_insert((w, 0));
            e.1 += 1;
        }
    }
    let trials = s.warnings.len();
    let _ = writeln!(
        out,
        "\n{trials} trial{} had warnings (report.html shows each trial's):",
        if trials == 1 { "" } else { "s" }
    );
    let repeated = report.meta.matrix.repeats > 1;
    let one_target = match s.cells.first() {
        Some(c) if s.cells.iter().all(|x| x.target == c.target) => Some(format!("{} × ", c.target)),
        _ => None,
    };
    for (text, (first, n)) in distinct.iter().take(MAX_WARNINGS) {
        let repeat = if repeated || first.repeat > 0 {
            format!(" #{}", first.repeat)
        } else {
            String::new()
        };
        let others = match n - 1 {
            0 => String::new(),
            1 => " and 1 other".to_string(),
            k => format!(" and {k} others"),
        };
        let text = cut_end(&text.replace(['\n', '\r'], " "), WARNING_CHARS);
        // With one target the heading names it; the cell is variant × tool_choice.
        let cell = match &one_target {
            Some(p) => first.cell.strip_prefix(p.as_str()).unwrap_or(&first.cell),
            None => &first.cell,
        };
        let line = format!("  {} [{cell}{repeat}]{others}: {text}", first.case_id);
        // Wrapped, not cut: the value the server sent comes last.
        for l in format::wrap(&line, max, 4) {
            let _ = writeln!(out, "{l}");
        }
    }
    if distinct.len() > MAX_WARNINGS {
        let _ = writeln!(
            out,
            "  ... and {} more distinct (see trials.jsonl)",
            distinct.len() - MAX_WARNINGS
        );
    }
}

/// The one-line summary printed with `--quiet`.
pub fn one_line(report: &RunReport, dir: &std::path::Path) -> String {
    let s = &report.summary;
    let m = &s.overall;
    let gates = if s.thresholds.is_empty() {
        String::new()
    } else if s.thresholds_ok() {
        ", thresholds ok".into()
    } else {
        format!(
            ", {} threshold(s) failed",
            s.thresholds.iter().filter(|t| !t.ok).count()
        )
    };
    format!(
        "{}: {}/{} passed ({}), {} errors{gates} -> {}",
        s.suite,
        m.passed,
        m.scored,
        pct(m.accuracy.value),
        m.errors,
        dir.display()
    )
}

/// What each variant changes, one line per variant under `variants:` (none when no
/// variant records any change, as in runs written before variants recorded them).
fn variant_lines(variants: &[super::VariantTokens], max: usize) -> Vec<String> {
    if variants.iter().all(|v| v.changes.is_empty()) {
        return Vec::new();
    }
    let name_width = variants
        .iter()
        .map(|v| format::width(&v.variant))
        .max()
        .unwrap_or(0);
    let mut out = vec!["variants:".to_string()];
    for v in variants {
        let what = v.changes.describe();
        let what = if what.is_empty() {
            "nothing (the suite as written)".to_string()
        } else {
            what
        };
        // The changes wrap in their own column, so the names stay aligned.
        let indent = name_width + 4;
        for (i, part) in format::wrap(&what, max.saturating_sub(indent).max(20), 0)
            .into_iter()
            .enumerate()
        {
            if i == 0 {
                let pad = " ".repeat(name_width - format::width(&v.variant));
                out.push(format!("  {}{pad}  {part}", v.variant));
            } else {
                out.push(format!("{}{part}", " ".repeat(indent)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{VariantChanges, VariantTokens};

    #[test]
    fn variant_lines_say_what_each_variant_changes_and_wrap_to_the_width() {
        let v = |name: &str, changes: VariantChanges| VariantTokens {
            variant: name.into(),
            changes,
            ..VariantTokens::default()
        };
        let plain = v("plain", VariantChanges::default());
        // Runs that record no change show no lines.
        assert!(variant_lines(std::slice::from_ref(&plain), 80).is_empty());
        let documented = v(
            "documented",
            VariantChanges {
                parameter_descriptions: [(
                    "search".to_string(),
                    vec!["date".into(), "seat".into()],
                )]
                .into_iter()
                .collect(),
                ..VariantChanges::default()
            },
        );
        let strict = v(
            "strict",
            VariantChanges {
                descriptions: vec!["search".into()],
                schemas: vec!["search".into()],
                system_prompt: true,
                ..VariantChanges::default()
            },
        );
        let all = [plain, documented, strict];
        assert_eq!(
            variant_lines(&all, 80),
            [
                "variants:",
                "  plain       nothing (the suite as written)",
                "  documented  search: parameter descriptions (date, seat)",
                "  strict      search: description, schema; system prompt",
            ]
        );
        assert_eq!(
            variant_lines(&all[1..2], 40),
            [
                "variants:",
                "  documented  search: parameter",
                "              descriptions (date, seat)",
            ]
        );
    }
}
