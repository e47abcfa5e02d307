//! How a finished run ends for the user: its terminal summary (or one line with
//! `--quiet`) and its exit code, shared by `run` (and `--resume`), `report` and `merge`.

use std::io::IsTerminal;
use std::path::Path;

use crate::exit;
use crate::report::RunReport;
use crate::report::terminal::{self, TerminalOptions};
use crate::runner::select::Selection;
use crate::score::Verdict;

/// Print the terminal summary (or the one-line form) of `report`.
pub(super) fn print_summary(
    report: &RunReport,
    dir: &Path,
    formats: &[String],
    quiet: bool,
    no_color: bool,
    wide: bool,
) {
    let color =
        !no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    if quiet {
        sayln!("{}", terminal::one_line(report, dir));
    } else if formats.iter().any(|f| f == "terminal") {
        say!(
            "{}",
            terminal::render(
                report,
                TerminalOptions {
                    color,
                    max_failures: 20,
                    width: terminal::detect_width(),
                    wide,
                }
            )
        );
        sayln!("\nrun written to {}", dir.display());
    }
}

/// 3 when the run stopped early or errors exceed the allowed rate; 1 when a threshold
/// failed (never for a shard: its thresholds are checked by `toolgauge merge`); else 0.
/// The reason is the last line on stderr.
pub(super) fn exit_code(report: &RunReport, stopped: Option<&str>, max_error_rate: f64) -> u8 {
    if let Some(why) = stopped {
        warnln!("error: the run stopped early: {why}");
        return exit::RUN_INCOMPLETE;
    }
    let errors = report
        .trials
        .iter()
        .filter(|t| t.verdict == Verdict::Error)
        .count();
    let error_rate = errors as f64 / report.trials.len().max(1) as f64;
    if errors > 0 && error_rate > max_error_rate {
        let first = report
            .trials
            .iter()
            .find(|t| t.verdict == Verdict::Error)
            .and_then(|t| t.reasons.first())
            .map(|r| r.message.clone())
            .unwrap_or_default();
        warnln!(
            "error: {errors} of {} trials could not be completed (over --max-error-rate {max_error_rate}); first: {first}",
            report.trials.len()
        );
        return exit::RUN_INCOMPLETE;
    }
    if errors > 0 {
        warnln!(
            "warning: {errors} of {} trials ended in errors (within --max-error-rate {max_error_rate}); see trials.csv",
            report.trials.len()
        );
    }
    let selection = report.meta.selection.as_ref();
    if selection.is_some_and(Selection::is_sharded) && !report.summary.thresholds.is_empty() {
        warnln!(
            "note: thresholds are not checked on a shard ({}); `toolgauge merge` checks them on the whole run",
            report.summary.selection.as_deref().unwrap_or_default()
        );
        return exit::OK;
    }
    if !report.summary.thresholds_ok() {
        let partial = report
            .summary
            .selection
            .as_ref()
            .map(|s| format!(" on a partial run ({s})"))
            .unwrap_or_default();
        let failed: Vec<String> = report
            .summary
            .thresholds
            .iter()
            .filter(|t| !t.ok)
            .map(|t| format!("{} ({})", t.metric, t.scope))
            .collect();
        warnln!("threshold failed: {}{partial}", failed.join(", "));
        return exit::THRESHOLD_FAILED;
    }
    exit::OK
}
