//! `summary.md`: a short summary fit for a pull-request comment: the verdict line,
//! failing thresholds first, then one table row per cell (weakest accuracy first), and
//! the first failures. Model and suite text is escaped for Markdown tables. A run with
//! tool loops adds a "Tool loops" table: one row per cell with loop trials; one whose
//! cases expect behaviours a "Behaviour" table and the overall confusion matrix.

use std::fmt::Write as _;

use super::format::{self, cut_end};
use super::loop_text;
use super::{Exporter, ReportError, RunReport};
use crate::score::stats::Rate;

/// Writes `summary.md`.
pub struct MarkdownExporter;

/// Failures listed before "and N more".
const MAX_FAILURES: usize = 10;
/// Characters of a failure's reason (cut ones end with `…`; trials.csv has all).
const REASON_CHARS: usize = 200;

fn pct(r: &Rate) -> String {
    match (r.value, r.low, r.high) {
        (Some(v), Some(lo), Some(hi)) => {
            format!("{:.0}% ({:.0}–{:.0})", v * 100.0, lo * 100.0, hi * 100.0)
        }
        _ => "–".to_string(),
    }
}

fn plain_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{:.0}%", x * 100.0))
}

/// Text safe inside a Markdown table cell: no pipes, newlines or HTML.
pub fn cell_text(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(['\n', '\r'], " ")
}

impl Exporter for MarkdownExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let s = &report.summary;
        let m = &s.overall;
        let mut out = String::new();
        let failed: Vec<_> = s.thresholds.iter().filter(|t| !t.ok).collect();
        let verdict = if m.errors > 0 {
            "⚠️ incomplete"
        } else if failed.is_empty() {
            "✅ passed"
        } else {
            "❌ failed"
        };
        let _ = writeln!(
            out,
            "### toolgauge: {} {verdict}\n\n{} trials: {} passed, {} failed, {} errors; accuracy {}.\n",
            cell_text(&s.suite),
            m.trials,
            m.passed,
            m.scored - m.passed,
            m.errors,
            pct(&m.accuracy)
        );
        if let Some(why) = &s.stopped {
            let _ = writeln!(out, "Stopped early: {}\n", cell_text(why));
        }
        if let Some(part) = &s.selection {
            let _ = writeln!(out, "Partial run: {}\n", cell_text(part));
        }
        if !s.warnings.is_empty() {
            let n = s.warnings.len();
            let first = &s.warnings[0];
            let _ = writeln!(
                out,
                "⚠️ {n} trial{} had warnings (report.html shows each trial's); the first, `{}` ({}): {}\n",
                if n == 1 { "" } else { "s" },
                first.case_id.replace('`', "'"),
                cell_text(&first.cell),
                cell_text(&cut_end(&first.warnings.join("; "), REASON_CHARS))
            );
        }
        if !failed.is_empty() {
            let _ = writeln!(out, "**Failing thresholds**\n");
            for t in &failed {
                let bound = match (t.min, t.max) {
                    (Some(lo), _) => format!("≥ {lo}"),
                    (None, Some(hi)) => format!("≤ {hi}"),
                    (None, None) => String::new(),
                };
                let value = t
                    .value
                    .map_or("undefined".into(), |v| format::metric_value(&t.metric, v));
                let _ = writeln!(
                    out,
                    "- `{}` {bound} in {}: {value}",
                    t.metric,
                    cell_text(&t.scope)
                );
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "| target | variant | tool_choice | n | accuracy (95% CI) | precision | recall | invalid | ungrounded | tokens in/out | cost |\n|---|---|---|---:|---|---|---|---|---|---|---|"
        );
        let mut cells: Vec<_> = s.cells.iter().collect();
        // Weakest first: the rows a reviewer should read.
        cells.sort_by(|a, b| {
            let key =
                |c: &&crate::report::summary::CellSummary| c.metrics.accuracy.value.unwrap_or(-1.0);
            key(a).total_cmp(&key(b))
        });
        for c in cells {
            let cm = &c.metrics;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{}{} | {} |",
                cell_text(&c.target),
                cell_text(&c.variant),
                cell_text(&super::summary::cell_mode(c)),
                cm.scored,
                pct(&cm.accuracy),
                plain_pct(cm.trigger.precision.value),
                plain_pct(cm.trigger.recall.value),
                plain_pct(cm.invalid_call_rate.value),
                plain_pct(cm.ungrounded_rate.value),
                cm.tokens.input,
                cm.tokens.output,
                format::token_details(&cm.tokens).map_or(String::new(), |d| format!(" ({d})")),
                format::usd_or(cm.cost_usd, "–")
            );
        }
        out.push_str(&super::stream::markdown(s, cell_text));
        out.push_str(&loop_table(&s.cells));
        out.push_str(&super::behaviour::markdown(s, &cell_text));
        if !s.distractors.is_empty() {
            out.push('\n');
            out.push_str(&super::distractors::markdown(&s.distractors));
        }
        out.push_str(&variant_table(&s.variants));
        if !s.failures.is_empty() {
            let _ = writeln!(
                out,
                "\n<details><summary>{}</summary>\n",
                summary_line(&s.failures)
            );
            let repeated = report.meta.matrix.repeats > 1;
            for f in s.failures.iter().take(MAX_FAILURES) {
                let repeat = if repeated || f.repeat > 0 {
                    format!(", repeat {}", f.repeat)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "- `{}` ({}{repeat}): {}",
                    f.case_id.replace('`', "'"),
                    cell_text(&f.cell),
                    cell_text(&cut_end(&f.reason, REASON_CHARS))
                );
            }
            if s.failures.len() > MAX_FAILURES {
                let _ = writeln!(out, "- … and {} more", s.failures.len() - MAX_FAILURES);
            }
            let _ = writeln!(out, "\n</details>");
        }
        Ok(vec![("summary.md".to_string(), out.into_bytes())])
    }
}

/// The "Tool loops" table: one row per cell with loop trials, in matrix order; empty when
/// no cell has any (a single-turn run's summary is as before loops existed).
fn loop_table(cells: &[super::summary::CellSummary]) -> String {
    let looped: Vec<_> = cells
        .iter()
        .filter_map(|c| c.metrics.loops.as_ref().map(|l| (c, l)))
        .collect();
    if looped.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n**Tool loops**\n\n| target | variant | tool_choice | n | task success (95% CI) | rounds/task | calls/task | stop | recovery | duplicates | data flow | grounded | pass^k |\n|---|---|---|---:|---|---|---|---|---|---|---|---|---|\n",
    );
    for (c, l) in looped {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell_text(&c.target),
            cell_text(&c.variant),
            cell_text(&super::summary::cell_mode(c)),
            l.scored,
            pct(&l.task_success),
            loop_text::per_task(&l.rounds, "–"),
            loop_text::per_task(&l.tool_calls, "–"),
            loop_text::stops(&l.stop, "–"),
            loop_text::recovery(l, "–", cell_text),
            loop_text::duplicates(l, "–"),
            plain_pct(l.data_flow_accuracy.value),
            plain_pct(l.grounded_answer_rate.value),
            loop_text::pass_hat(l, "–"),
        );
    }
    out
}

/// The variants with what each changes and its token figures; empty when no variant
/// records a change (runs written before variants recorded them, too).
fn variant_table(variants: &[super::VariantTokens]) -> String {
    if variants
        .iter()
        .all(|v| v.changes.is_empty() && v.system_prompt_tokens.is_none())
    {
        return String::new();
    }
    let system = variants.iter().any(|v| v.system_prompt_tokens.is_some());
    let mut out = String::from("\n| variant | changes | tool-definition tokens |");
    out.push_str(if system {
        " system-prompt tokens |\n|---|---|---:|---:|\n"
    } else {
        "\n|---|---|---:|\n"
    });
    for v in variants {
        let what = v.changes.describe();
        let _ = write!(
            out,
            "| {} | {} | {} |",
            cell_text(&v.variant),
            if what.is_empty() {
                "–".into()
            } else {
                cell_text(&what)
            },
            v.tool_definition_tokens
        );
        if system {
            let _ = write!(out, " {} |", v.system_prompt_tokens.unwrap_or(0));
        }
        out.push('\n');
    }
    out
}

/// The failures' `<summary>`: failed trials and trials that ended in an error, told
/// apart (an error is not the model's failure).
fn summary_line(lines: &[super::summary::FailureLine]) -> String {
    let errors = lines.iter().filter(|f| f.verdict == "error").count();
    match (lines.len() - errors, errors) {
        (f, 0) => format!("{f} failing trials"),
        (0, e) => format!("{e} trials with errors"),
        (f, e) => format!("{f} failing trials and {e} with errors"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{VariantChanges, VariantTokens};

    #[test]
    fn the_variant_table_shows_changes_and_both_token_figures() {
        let plain = VariantTokens {
            variant: "plain".into(),
            tool_definition_tokens: 120,
            ..VariantTokens::default()
        };
        assert_eq!(variant_table(std::slice::from_ref(&plain)), "");
        let dated = VariantTokens {
            variant: "dated|x".into(),
            tool_definition_tokens: 120,
            system_prompt_tokens: Some(31),
            changes: VariantChanges {
                system_prompt: true,
                schemas: vec!["search".into()],
                ..VariantChanges::default()
            },
        };
        let plain = VariantTokens {
            system_prompt_tokens: Some(8),
            ..plain
        };
        assert_eq!(
            variant_table(&[plain, dated]),
            "\n| variant | changes | tool-definition tokens | system-prompt tokens |\n\
             |---|---|---:|---:|\n\
             | plain | – | 120 | 8 |\n\
             | dated\\|x | search: schema; system prompt | 120 | 31 |\n"
        );
    }

    #[test]
    fn table_cells_can_not_break_the_table_or_inject_html() {
        assert_eq!(
            cell_text("a|b\n<script>alert(1)</script>"),
            "a\\|b &lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(cell_text("北京 ✓"), "北京 ✓");
    }
}
