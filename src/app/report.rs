//! `toolgauge report RUN_DIR`: render a finished (or stopped) run's reports again from
//! its `run.json` and `trials.jsonl`, without calling any model. Thresholds come from the
//! suite when it is still there unchanged (found from any working directory, see
//! [`super::paths`]); otherwise the reports are written without them, with a warning
//! that says which paths were tried.

use std::collections::HashMap;
use std::path::Path;

use super::AppError;
use super::outcome::print_summary;
use super::paths::{self, SuiteLookup};
use super::run::check_formats;
use crate::cli::ReportArgs;
use crate::exit;
use crate::report::{self, RunMeta, RunReport, Summary, VariantTokens};
use crate::runner::journal;
use crate::score::TrialRecord;

/// The `run.json` of the run in `dir`; a missing or unreadable one is bad input, with
/// `hint` saying what the command takes (shared by report, `run --resume` and merge).
pub(crate) fn read_meta(dir: &Path, hint: &str) -> Result<RunMeta, AppError> {
    let meta_path = dir.join("run.json");
    let text = std::fs::read_to_string(&meta_path).map_err(|e| {
        AppError::bad(
            format!("failed to read `{}`: {e}", meta_path.display()),
            Some(hint),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        AppError::bad(
            format!("`{}` is not a run.json: {e}", meta_path.display()),
            None,
        )
    })
}

/// Regenerate the reports of `args.run_dir`.
pub(crate) fn report(args: &ReportArgs) -> Result<u8, AppError> {
    check_formats(&args.format)?;
    let dir = &args.run_dir;
    let meta = read_meta(
        dir,
        "`toolgauge report` takes a run directory written by `toolgauge run`",
    )?;
    let mut trials = read_journal(&dir.join("trials.jsonl"))?;
    let suite = match paths::find_suite(&meta, dir) {
        SuiteLookup::Found(p) => match crate::mcp::suites::load(&p) {
            Ok(s) if s.hash == meta.suite.hash => Some(s),
            Ok(_) => {
                warnln!(
                    "warning: suite `{}` changed while it was read; reports are written without its thresholds",
                    p.display()
                );
                None
            }
            Err(e) => {
                warnln!(
                    "warning: suite `{}` no longer loads ({}); reports are written without its thresholds",
                    p.display(),
                    e.to_string().trim_end()
                );
                None
            }
        },
        changed @ SuiteLookup::Changed(_) => {
            warnln!(
                "warning: suite {} changed since the run; reports are written without its thresholds",
                changed.describe()
            );
            None
        }
        missing @ SuiteLookup::Missing(_) => {
            warnln!(
                "warning: the run's suite is missing (tried {}); reports are written without its thresholds",
                missing.describe()
            );
            None
        }
    };
    let m = &meta.matrix;
    let cells = m.cells();
    // The journal is in completion order; reports list trials in plan order (cell, then
    // case, then repeat), as the run itself does.
    let cell_index: HashMap<(String, String, String), usize> = cells
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, c)| (c, i))
        .collect();
    let mut case_index: HashMap<String, usize> = suite
        .iter()
        .flat_map(|s| s.cases.iter().map(|c| c.id.clone()))
        .enumerate()
        .map(|(i, id)| (id, i))
        .collect();
    for t in &trials {
        let next = case_index.len();
        case_index.entry(t.case_id.clone()).or_insert(next);
    }
    // A run with both stream modes runs each target unstreamed, then streamed.
    let target_index: HashMap<&str, usize> = m
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    trials.sort_by_key(|t| {
        let cell = (
            t.target.clone(),
            t.variant.clone(),
            t.tool_choice.to_string(),
        );
        (
            target_index
                .get(t.target.as_str())
                .copied()
                .unwrap_or(usize::MAX),
            t.stream,
            cell_index.get(&cell).copied().unwrap_or(usize::MAX),
            crate::score::distractors::record_n(t),
            case_index[&t.case_id],
            t.repeat,
        )
    });
    let thresholds = suite.map(|s| s.thresholds).unwrap_or_default();
    let variants = VariantTokens::from_meta(&meta);
    let mut summary = Summary::build(&meta.suite.name, &cells, &variants, &trials, &thresholds);
    summary.stopped = meta.stop_reason.as_ref().map(|why| {
        format!(
            "{why} after {} of {} trials",
            trials.len(),
            meta.trials_planned
        )
    });
    summary.selection = meta
        .selection
        .as_ref()
        .and_then(crate::runner::select::Selection::describe);
    let report = RunReport {
        meta,
        trials,
        summary,
    };
    report::write_files(dir, &report, &args.format)
        .map_err(|e| AppError::Incomplete(e.to_string()))?;
    print_summary(&report, dir, &args.format, false, args.no_color, args.wide);
    Ok(exit::OK)
}

/// The trials of the journal at `path`, read by [`journal::load`] (the one reader that
/// `report`, `compare` and `run --resume` share, so they count the same trials): a torn
/// last line or duplicate lines are warnings on stderr; a missing or damaged journal is
/// bad input (exit 2).
pub(crate) fn read_journal(path: &Path) -> Result<Vec<TrialRecord>, AppError> {
    let contents = load_journal(path)?;
    for w in contents.warnings(path) {
        warnln!("warning: {w}");
    }
    Ok(contents.trials)
}

/// [`read_journal`] without printing its warnings, for a caller that treats an
/// irregularity more strictly (`merge` refuses a shard journal holding a trial twice):
/// a missing or damaged journal is bad input (exit 2).
pub(crate) fn load_journal(path: &Path) -> Result<journal::JournalContents, AppError> {
    journal::load(path).map_err(|e| {
        let hint = match e {
            journal::JournalError::Damaged { .. } => {
                "a damaged line is not guessed at: repair or delete it (`toolgauge run --resume RUN_DIR` then runs that trial again)"
            }
            journal::JournalError::Io { .. } => {
                "give a run directory written by `toolgauge run` (it holds trials.jsonl)"
            }
        };
        AppError::bad(e.to_string(), Some(hint))
    })
}
