//! `toolgauge compare`: two runs (or two variants of one run) trial by trial, with the
//! paired test and the regression gates of [`crate::compare`]. The failing gate is named
//! in the last line of output and the exit code is 1.

use std::path::{Path, PathBuf};

use super::AppError;
use super::report::read_journal;
use crate::cli::CompareArgs;
use crate::compare::{self, CellKey, Comparison, Gate};
use crate::exit;
use crate::score::TrialRecord;

/// The run directory a path names: the directory itself, or the one holding a
/// `summary.json` / `trials.jsonl` given directly.
fn run_dir(path: &Path) -> PathBuf {
    if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    }
}

fn trials_of(path: &Path) -> Result<Vec<TrialRecord>, AppError> {
    let dir = run_dir(path);
    let journal = dir.join("trials.jsonl");
    if !journal.is_file() {
        return Err(AppError::bad(
            format!("`{}` holds no trials.jsonl", dir.display()),
            Some(
                "compare takes run directories written by `toolgauge run` (pairing needs every trial)",
            ),
        ));
    }
    read_journal(&journal)
}

/// Compare as `args` asks; 1 when a gate fails.
pub(crate) fn compare(args: &CompareArgs) -> Result<u8, AppError> {
    for f in &args.format {
        if !["terminal", "md", "json"].contains(&f.as_str()) {
            return Err(AppError::bad(
                format!("unknown format `{f}`"),
                Some("formats are: terminal, md, json"),
            ));
        }
    }
    let baseline = trials_of(&args.baseline)?;
    let comparison: Comparison = match (&args.candidate, args.variants.as_slice()) {
        (None, [a, b]) => compare::compare_variants(&baseline, a, b),
        (None, _) => {
            return Err(AppError::bad(
                "--variants takes two variant names",
                Some("e.g. --variants vague,clear"),
            ));
        }
        (Some(candidate), _) => {
            let candidate = trials_of(candidate)?;
            let key = if args.across_targets {
                CellKey::IGNORE_TARGET
            } else {
                CellKey::ALL
            };
            let c = compare::compare_runs_by(&baseline, &candidate, key);
            // Runs of different models share no target: pair across targets then.
            if !args.across_targets && c.overall.n == 0 {
                let across =
                    compare::compare_runs_by(&baseline, &candidate, CellKey::IGNORE_TARGET);
                if across.overall.n > 0 {
                    eprintln!("note: the runs share no target; trials are paired across targets");
                    across
                } else {
                    c
                }
            } else {
                c
            }
        }
    };
    for f in &args.format {
        match f.as_str() {
            "terminal" => print!("{}", compare::render_terminal(&comparison)),
            "md" => print!("{}", compare::render_markdown(&comparison)),
            _ => println!(
                "{}",
                serde_json::to_string_pretty(&comparison)
                    .map_err(|e| AppError::Incomplete(e.to_string()))?
            ),
        }
    }
    let gate = Gate {
        fail_on_regression: args.fail_on_regression,
        strict: args.strict,
        min_accuracy: args.min_accuracy,
    };
    let failures = compare::check_gates(&comparison, &gate);
    if failures.is_empty() {
        return Ok(exit::OK);
    }
    for f in &failures {
        eprintln!("gate failed: {f}");
    }
    Ok(exit::THRESHOLD_FAILED)
}
