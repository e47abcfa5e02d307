//! Claiming a run directory, so a new run never writes over another run's files.
//!
//! `--out DIR` must be new or empty. A directory holding a run (its `run.json` or
//! `trials.jsonl`) is refused with a pointer to `--resume DIR`; with `--overwrite` that
//! run's files (and only those) are deleted once the new run is set up, so a run that
//! fails to start leaves the old one whole. A directory holding files no run wrote is
//! refused even with `--overwrite`: toolgauge deletes only files it writes (and the
//! staging directory of a report refresh a killed run left behind).
//! Default directories (`REPORTS_DIR/SUITE-TIMESTAMP`) are created atomically, with a
//! `-2`, `-3`, ... suffix when two runs start in the same second, so they never share
//! one. The journal is then created exclusively ([`crate::runner::journal::Journal::create_new`]),
//! so two runs racing for the same empty `--out` cannot both write into it.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::AppError;
use super::report_writer::STAGING_DIR;
use crate::report::RunMeta;

/// The files a run writes into its directory: the ones `--overwrite` deletes.
pub(crate) const RUN_FILES: &[&str] = &[
    "run.json",
    "trials.jsonl",
    "summary.json",
    "trials.csv",
    "summary.csv",
    "junit.xml",
    "summary.md",
    "report.html",
    // The raw MCP tools of a `tools_from` suite (see `app::mcp::RUN_TOOLS_FILE`).
    super::mcp::RUN_TOOLS_FILE,
];

/// Most suffixes tried for a default run directory before giving up.
const MAX_SUFFIX: u32 = 10_000;

/// A run directory this run may write into.
#[derive(Debug)]
pub(crate) struct Claimed {
    /// The directory.
    pub(crate) path: PathBuf,
    /// True when this run created it (so it is removed again if the run never starts).
    created: bool,
    /// True when it holds a run that `--overwrite` replaces (deleted by
    /// [`Claimed::clear`] once the new run is ready to start).
    replaces_run: bool,
}

impl Claimed {
    /// Delete the files of the run being replaced (`--overwrite`); nothing otherwise.
    /// Called only once the new run is set up, so a run that fails to start (a missing
    /// key, a bad cassette) leaves the old one whole.
    pub(crate) fn clear(&self) -> Result<(), AppError> {
        if !self.replaces_run {
            return Ok(());
        }
        for name in run_files_in(&self.path)? {
            let path = self.path.join(name);
            std::fs::remove_file(&path).map_err(|e| io_error(&path, "delete", e))?;
        }
        let staging = self.path.join(STAGING_DIR);
        if staging.is_dir() {
            std::fs::remove_dir_all(&staging).map_err(|e| io_error(&staging, "delete", e))?;
        }
        Ok(())
    }

    /// The run could not start: remove the directory if this run created it and it is
    /// still empty.
    pub(crate) fn release(self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

fn io_error(dir: &Path, what: &str, e: std::io::Error) -> AppError {
    AppError::bad(
        format!("failed to {what} `{}`: {e}", dir.display()),
        Some(
            "check that the parent directory exists and is writable, or choose another --out / --reports-dir",
        ),
    )
}

/// Claim `dir`, named with `--out`.
pub(crate) fn claim_out(dir: &Path, overwrite: bool) -> Result<Claimed, AppError> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, "create", e))?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {
            return Ok(Claimed {
                path: dir.to_path_buf(),
                created: true,
                replaces_run: false,
            });
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_error(dir, "create the run directory", e)),
    }
    if !dir.is_dir() {
        return Err(AppError::bad(
            format!("--out `{}` exists and is not a directory", dir.display()),
            Some("name a new directory with --out"),
        ));
    }
    let shown = dir.display();
    let holds_run = ["run.json", "trials.jsonl"]
        .iter()
        .any(|f| dir.join(f).exists());
    if holds_run && !overwrite {
        return Err(AppError::bad(
            format!(
                "`{shown}` already holds a run{}; a new run would overwrite it",
                describe_run(dir)
            ),
            Some(&format!(
                "finish it with `toolgauge run --resume {shown}`, write the new run elsewhere with another --out, or replace it with --overwrite"
            )),
        ));
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| io_error(dir, "read", e))?
        .count();
    // A report refresh's staging directory, left by a run killed while writing one,
    // is the run's too.
    let staging = usize::from(dir.join(STAGING_DIR).is_dir());
    if holds_run && entries > run_files_in(dir)?.len() + staging {
        return Err(AppError::bad(
            format!(
                "--out `{shown}` holds a run and files no run wrote; --overwrite deletes only run files, so it is refused"
            ),
            Some("move your own files out of it, or choose another --out"),
        ));
    }
    if !holds_run && entries > 0 {
        return Err(AppError::bad(
            format!("--out `{shown}` is not empty and holds no run"),
            Some(
                "a run is written into a new or empty directory (toolgauge deletes only files it wrote, even with --overwrite); choose another --out",
            ),
        ));
    }
    Ok(Claimed {
        path: dir.to_path_buf(),
        created: false,
        replaces_run: holds_run,
    })
}

/// A few words on the run in `dir`, read from its run.json (empty when unreadable).
fn describe_run(dir: &Path) -> String {
    let Some(meta) = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<RunMeta>(&t).ok())
    else {
        return String::new();
    };
    format!(
        " (suite {}, {}, {} of {} trials, started {})",
        meta.suite.name, meta.status, meta.trials_written, meta.trials_planned, meta.started_at
    )
}

/// The files in `dir` that a run writes (and leftovers of an interrupted journal
/// rewrite): what `--overwrite` deletes.
fn run_files_in(dir: &Path) -> Result<Vec<std::ffi::OsString>, AppError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, "read", e))?;
    Ok(entries
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name())
        .filter(|name| {
            let name = name.to_string_lossy();
            RUN_FILES.contains(&name.as_ref()) || name.starts_with("trials.jsonl.tmp-")
        })
        .collect())
}

/// Create a new directory `base/name` (or `base/name-2`, `-3`, ... when taken).
pub(crate) fn claim_fresh(base: &Path, name: &str) -> Result<Claimed, AppError> {
    std::fs::create_dir_all(base).map_err(|e| io_error(base, "create", e))?;
    for i in 1..=MAX_SUFFIX {
        let path = if i == 1 {
            base.join(name)
        } else {
            base.join(format!("{name}-{i}"))
        };
        match std::fs::create_dir(&path) {
            Ok(()) => {
                return Ok(Claimed {
                    path,
                    created: true,
                    replaces_run: false,
                });
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error(&path, "create the run directory", e)),
        }
    }
    Err(AppError::bad(
        format!(
            "`{}` already holds {MAX_SUFFIX} run directories named `{name}`",
            base.display()
        ),
        Some("choose another --reports-dir or --out"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_directories_never_collide() {
        let base = tempfile::tempdir().unwrap();
        let names: Vec<PathBuf> = (0..3)
            .map(|_| claim_fresh(base.path(), "s-20261201T000000Z").unwrap().path)
            .collect();
        assert_eq!(
            names,
            [
                "s-20261201T000000Z",
                "s-20261201T000000Z-2",
                "s-20261201T000000Z-3"
            ]
            .map(|n| base.path().join(n))
        );
        // A released claim gives its name back.
        claim_fresh(base.path(), "t").unwrap().release();
        assert_eq!(
            claim_fresh(base.path(), "t").unwrap().path,
            base.path().join("t")
        );
    }

    #[test]
    fn out_must_be_new_empty_or_overwritten_only_when_it_holds_a_run() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/out");
        assert!(claim_out(&dir, false).unwrap().created);
        // Empty: taken as is.
        assert!(!claim_out(&dir, false).unwrap().created);
        std::fs::write(dir.join("trials.jsonl"), "").unwrap();
        std::fs::write(dir.join("report.html"), "old").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let e = claim_out(&dir, false).unwrap_err();
        assert_eq!(e.code(), crate::exit::BAD_INPUT);
        assert!(e.to_string().contains("already holds a run"), "{e}");
        let AppError::BadInput { hint: Some(h), .. } = &e else {
            panic!("{e:?}")
        };
        assert!(h.contains("toolgauge run --resume"), "{h}");
        // --overwrite deletes only a run's files: with a file of the user's beside them
        // the directory is refused and nothing is deleted.
        let e = claim_out(&dir, true).unwrap_err();
        assert!(e.to_string().contains("files no run wrote"), "{e}");
        assert!(dir.join("report.html").exists() && dir.join("trials.jsonl").exists());
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        std::fs::write(dir.join("run.json"), "{}").unwrap();
        let claim = claim_out(&dir, true).unwrap();
        // Nothing is deleted until the new run is ready to start.
        assert!(dir.join("run.json").exists());
        claim.clear().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        // An empty directory is not a run: nothing to clear.
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let e = claim_out(&dir, false).unwrap_err();
        assert!(
            e.to_string().contains("is not empty and holds no run"),
            "{e}"
        );
        // A file is not a directory.
        let file = base.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(
            claim_out(&file, true)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
    }

    /// A run killed while refreshing its reports leaves the staging directory behind:
    /// `--overwrite` counts it as the run's and deletes it with the run's files.
    #[test]
    fn overwrite_deletes_a_left_report_staging_directory() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("out");
        std::fs::create_dir_all(dir.join(STAGING_DIR)).unwrap();
        std::fs::write(dir.join(STAGING_DIR).join("summary.json"), "{").unwrap();
        std::fs::write(dir.join("trials.jsonl"), "").unwrap();
        let claim = claim_out(&dir, true).unwrap();
        claim.clear().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
}
