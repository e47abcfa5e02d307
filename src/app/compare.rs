//! `toolgauge compare`: two runs (or two variants of one run) trial by trial, with the
//! paired test and the regression gates of [`crate::compare`]. The failing gate is named
//! in the last line of output and the exit code is 1.

use std::path::{Path, PathBuf};

use super::AppError;
use super::report::read_journal;
use crate::cli::CompareArgs;
use std::collections::HashMap;

use serde::Deserialize;

use crate::compare::{self, CellKey, Comparison, Gate, Side};
use crate::exit;
use crate::report::RunMeta;
use crate::report::summary::{CellSummary, SUMMARY_VERSION};
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

/// One side as loaded: every trial from the journal when there is one (full metrics for
/// any pairing), else the cells of a `summary.json`.
enum Loaded {
    Trials(Vec<TrialRecord>),
    Cells(Vec<CellSummary>),
}

impl Loaded {
    fn side(&self) -> Side<'_> {
        match self {
            Loaded::Trials(t) => Side::Trials(t),
            Loaded::Cells(c) => Side::Cells(c),
        }
    }
}

/// The parts of `summary.json` compare reads.
#[derive(Deserialize)]
struct SummaryFile {
    summary_version: u32,
    cells: Vec<CellSummary>,
}

/// Largest `summary.json` read (the 10,000-trial run's is well under 1 MB).
const MAX_SUMMARY_BYTES: u64 = 256 * 1024 * 1024;

fn read_summary(path: &Path) -> Result<Vec<CellSummary>, AppError> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| AppError::bad(format!("failed to read `{shown}`: {e}"), None))?
        .len();
    if size > MAX_SUMMARY_BYTES {
        return Err(AppError::bad(
            format!("`{shown}` is {size} bytes, more than a summary.json can be"),
            None,
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| AppError::bad(format!("failed to read `{shown}`: {e}"), None))?;
    let file: SummaryFile = serde_json::from_str(&text).map_err(|e| {
        AppError::bad(
            format!(
                "`{shown}` is not a toolgauge summary.json (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
            Some("give a run directory or the summary.json that `toolgauge run` wrote"),
        )
    })?;
    if file.summary_version < SUMMARY_VERSION {
        return Err(AppError::bad(
            format!(
                "`{shown}` is summary version {}, which has no per-trial outcomes to pair",
                file.summary_version
            ),
            Some(
                "regenerate it with `toolgauge report RUN_DIR --format json` (needs the run's trials.jsonl), or compare the run directories",
            ),
        ));
    }
    if file.summary_version > SUMMARY_VERSION {
        return Err(AppError::bad(
            format!(
                "`{shown}` is summary version {}; this toolgauge reads up to {SUMMARY_VERSION}",
                file.summary_version
            ),
            Some("use the toolgauge version that wrote it, or a newer one"),
        ));
    }
    Ok(file.cells)
}

/// The journal is in completion order, which varies from run to run; cells are compared
/// and listed in the matrix order of the run's `run.json` (as its summary lists them).
/// Without a readable `run.json` the journal order stays.
fn in_matrix_order(trials: &mut [TrialRecord], dir: &Path) {
    let Some(meta) = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<RunMeta>(&t).ok())
    else {
        return;
    };
    let mut order: HashMap<(String, String, String), usize> = HashMap::new();
    for cell in meta.matrix.cells() {
        let next = order.len();
        order.entry(cell).or_insert(next);
    }
    // Stable: within a cell the journal order stays.
    trials.sort_by_cached_key(|t| {
        let cell = (
            t.target.clone(),
            t.variant.clone(),
            t.tool_choice.to_string(),
        );
        order.get(&cell).copied().unwrap_or(usize::MAX)
    });
}

/// Say so when the run in `dir` covers part of its suite (`--case`, `--tag`, `--shard`):
/// only the trials both sides hold are paired, the rest are counted as unpaired.
fn note_partial(dir: &Path) {
    let part = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<RunMeta>(&t).ok())
        .and_then(|m| m.selection)
        .and_then(|s| s.describe());
    if let Some(part) = part {
        warnln!(
            "note: `{}` is a partial run ({part}); only trials both runs hold are paired",
            dir.display()
        );
    }
}

fn load(path: &Path) -> Result<Loaded, AppError> {
    let dir = run_dir(path);
    note_partial(&dir);
    let journal = dir.join("trials.jsonl");
    if journal.is_file() {
        let mut trials = read_journal(&journal)?;
        in_matrix_order(&mut trials, &dir);
        return Ok(Loaded::Trials(trials));
    }
    let summary = if path.is_file() {
        path.to_path_buf()
    } else {
        dir.join("summary.json")
    };
    if summary.is_file() {
        return read_summary(&summary).map(Loaded::Cells);
    }
    Err(AppError::bad(
        format!(
            "`{}` holds neither trials.jsonl nor summary.json",
            path.display()
        ),
        Some("compare takes run directories written by `toolgauge run`, or their summary.json"),
    ))
}

/// Compare as `args` asks; 1 when a gate fails.
pub(crate) fn compare(args: &CompareArgs) -> Result<u8, AppError> {
    for f in &args.format {
        if !["terminal", "md", "json", "html"].contains(&f.as_str()) {
            return Err(AppError::bad(
                format!("unknown format `{f}`"),
                Some("formats are: terminal, md, json, html"),
            ));
        }
    }
    let baseline = load(&args.baseline)?;
    let comparison: Comparison = match (&args.candidate, args.variants.as_slice()) {
        (None, [a, b]) => match &baseline {
            Loaded::Trials(t) => compare::compare_variants(t, a, b),
            Loaded::Cells(c) => compare::compare_variants_of_cells(c, a, b),
        },
        (None, _) => {
            return Err(AppError::bad(
                "--variants takes two variant names",
                Some("e.g. --variants vague,clear"),
            ));
        }
        (Some(candidate), _) => {
            let candidate = load(candidate)?;
            let (baseline, candidate) = (baseline.side(), candidate.side());
            let key = if args.across_targets {
                CellKey::IGNORE_TARGET
            } else {
                CellKey::ALL
            };
            let c = compare::compare_sides(baseline, candidate, key);
            // Runs of different models share no target: pair across targets then.
            if !args.across_targets && c.overall.n == 0 {
                let across = compare::compare_sides(baseline, candidate, CellKey::IGNORE_TARGET);
                if across.overall.n > 0 {
                    warnln!("note: the runs share no target; trials are paired across targets");
                    across
                } else {
                    c
                }
            } else {
                c
            }
        }
    };
    let gate = Gate {
        fail_on_regression: args.fail_on_regression,
        strict: args.strict,
        min_accuracy: args.min_accuracy,
    };
    let failures = compare::check_gates(&comparison, &gate);
    let (base_name, cand_name) = match (&args.candidate, args.variants.as_slice()) {
        (Some(c), _) => (args.baseline.display().to_string(), c.display().to_string()),
        (None, [a, b]) => (
            format!("{} variant {a}", args.baseline.display()),
            format!("variant {b}"),
        ),
        (None, _) => unreachable!("checked above"),
    };
    let html = || {
        compare::html::render_html(&comparison, &base_name, &cand_name, &failures)
            .map_err(|e| AppError::Incomplete(e.to_string()))
    };
    if let Some(path) = &args.html {
        std::fs::write(path, html()?).map_err(|e| {
            AppError::bad(
                format!("failed to write `{}`: {e}", path.display()),
                Some("check that the directory exists and is writable"),
            )
        })?;
    }
    for f in &args.format {
        match f.as_str() {
            "terminal" => say!("{}", compare::render_terminal(&comparison)),
            "md" => say!("{}", compare::render_markdown(&comparison)),
            "html" => say!("{}", html()?),
            _ => sayln!(
                "{}",
                serde_json::to_string_pretty(&comparison)
                    .map_err(|e| AppError::Incomplete(e.to_string()))?
            ),
        }
    }
    if failures.is_empty() {
        return Ok(exit::OK);
    }
    for f in &failures {
        warnln!("gate failed: {f}");
    }
    Ok(exit::THRESHOLD_FAILED)
}
