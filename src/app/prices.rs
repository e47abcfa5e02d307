//! The prices of a run as `run.json` keeps them, and the prices a resumed run charges.
//!
//! A run stores the price it charged each target (`settings.prices`, with the
//! `--prices` file's path as given and its SHA-256) and where the file was
//! (`settings.paths.prices`). `run --resume` charges the new trials those stored prices,
//! not the built-in table of this version nor the file as it is now, so a resumed run
//! costs what an uninterrupted one would have, from any working directory. Given
//! `--prices` again, the file must charge the run's targets the same: a file that changes
//! them is refused (resuming would price half the trials one way and half the other).
//! Without it, a stored file that changed since gets a note (its new prices are not used).

use std::path::{Path, PathBuf};

use super::AppError;
use super::paths;
use crate::provider::Target;
use crate::report::RunMeta;
use crate::score::prices::{PriceTable, RunPrices};

/// The largest price file whose change is noted on `--resume`.
const MAX_NOTED_BYTES: u64 = 16 * 1024 * 1024;

/// The `(provider, model)` of each target as written (a resumed `scripted:FILE` target
/// opens its file by another path, but is priced by the name it was written with).
fn models(targets: &[String]) -> Vec<(String, String)> {
    targets
        .iter()
        .filter_map(|spec| Target::parse(spec).ok())
        .map(|t| (t.provider, t.model))
        .collect()
}

/// What `run.json` keeps of the prices `table` charges the targets of `meta`.
pub(crate) fn kept(meta: &RunMeta, table: &PriceTable) -> RunPrices {
    let models = models(&meta.matrix.targets);
    RunPrices::of(table, models.iter().map(|(p, m)| (p.as_str(), m.as_str())))
}

/// The `--prices` file a run used, found from `run_dir` (relative to it, absolute, or
/// as given), if it still exists.
pub(crate) fn file_of(meta: &RunMeta, run_dir: &Path) -> Option<PathBuf> {
    let given = meta.settings.prices.as_ref()?.file.as_ref()?;
    paths::candidates(given, meta.settings.paths.prices.as_ref(), run_dir)
        .into_iter()
        .find(|p| p.is_file())
}

/// The prices the run in `dir` (described by `old`) charges as it resumes: those it kept.
/// `targets` are the run's targets as resolved now; `flag` is `--prices` as given again,
/// read into `flagged` (the built-in table without it). A `run.json` written before
/// prices were kept resumes with `flagged`, as it always did.
pub(crate) fn for_resume(
    old: &RunMeta,
    dir: &Path,
    targets: &[Target],
    flag: Option<&Path>,
    flagged: &PriceTable,
) -> Result<PriceTable, AppError> {
    let Some(kept_prices) = &old.settings.prices else {
        return Ok(flagged.clone());
    };
    let run_json = dir.join("run.json");
    let problems = kept_prices.problems();
    if !problems.is_empty() {
        return Err(AppError::bad(
            format!(
                "`{}` holds prices that are not prices: {}",
                run_json.display(),
                problems.join("; ")
            ),
            Some(
                "run.json was edited; restore it, or start a new run (with --prices for your prices)",
            ),
        ));
    }
    if let Some(flag) = flag {
        let now = kept(old, flagged);
        let changes = kept_prices.changes(&now);
        if !changes.is_empty() {
            let began = match &kept_prices.file {
                Some(f) => format!("the prices of `{f}` as the run began"),
                None => "the built-in prices".to_string(),
            };
            return Err(AppError::bad(
                format!(
                    "--prices `{}` charges the run in `{}` differently from {began}: {}",
                    flag.display(),
                    dir.display(),
                    changes.join("; ")
                ),
                Some(
                    "a resumed run charges its new trials what it charged the first ones (run.json keeps those prices); drop --prices to resume with them, or start a new run to use the new prices",
                ),
            ));
        }
    } else if let Some(note) = changed_note(old, dir, kept_prices) {
        warnln!("note: {note}");
    }
    // The runner looks a target up by its provider and model as resolved now.
    let aliases = targets.iter().filter_map(|t| {
        let written = Target::parse(&t.spec).ok()?;
        Some((
            format!("{}:{}", t.provider, t.model),
            format!("{}:{}", written.provider, written.model),
        ))
    });
    Ok(kept_prices.table(aliases))
}

/// A note when the run's price file is still found but its bytes changed since the run
/// began: the user may expect the new prices, which a resumed run does not charge.
fn changed_note(old: &RunMeta, dir: &Path, kept_prices: &RunPrices) -> Option<String> {
    let was = kept_prices.file_sha256.as_ref()?;
    let path = file_of(old, dir)?;
    // run.json is input too: a path to a huge file is not read (a price file is small).
    if std::fs::metadata(&path).ok()?.len() > MAX_NOTED_BYTES {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    let path = path.canonicalize().unwrap_or(path);
    let now = crate::util::digest::sha256_hex(&bytes);
    (&now != was).then(|| {
        format!(
            "price file `{}` changed since the run began; the resumed trials are charged the prices the run began with (kept in `{}`), so every trial is priced alike",
            path.display(),
            dir.join("run.json").display()
        )
    })
}
