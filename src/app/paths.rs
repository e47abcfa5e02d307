//! Finding a run's suite and cassette from any working directory.
//!
//! `run.json` keeps each path as it was given (relative to the working directory of the
//! run) and, in `settings.paths`, two more: relative to the run directory and absolute.
//! `report DIR` and `run --resume DIR` try them in that order: relative to the run
//! directory (it survives moving a checkout together with its run directories, as CI
//! artifacts are), absolute, then as given (run.json files written before the other two
//! were kept). The suite is the first candidate whose bytes still hash to the run's
//! suite hash.

use std::path::{Component, Path, PathBuf};

use crate::report::{FileLocation, RunMeta};
use crate::util::digest::sha256_hex;

/// Locate `file` for a run in `run_dir` (both must exist): its absolute path and its
/// path relative to `run_dir`. Either is `None` when it cannot be written as UTF-8.
pub(crate) fn locate(file: &Path, run_dir: &Path) -> FileLocation {
    let (Ok(file), Ok(dir)) = (file.canonicalize(), run_dir.canonicalize()) else {
        return FileLocation::default();
    };
    FileLocation {
        from_run_dir: relative(&file, &dir).and_then(|p| p.to_str().map(str::to_string)),
        absolute: file.to_str().map(str::to_string),
    }
}

/// `path` relative to the directory `base` (both absolute, without `.` or `..`); `None`
/// when they share no root (another drive).
fn relative(path: &Path, base: &Path) -> Option<PathBuf> {
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    if p.first() != b.first() {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// The current directory, absolute, as run.json stores it (`None` if unknown).
pub(crate) fn working_dir() -> Option<String> {
    std::env::current_dir()
        .ok()
        .and_then(|d| d.to_str().map(str::to_string))
}

/// A path `given` relative to the run's working directory, found from this one: as
/// given when it exists here, else joined to `working_dir` when that exists.
pub(crate) fn from_working_dir(given: &str, working_dir: Option<&str>) -> Option<PathBuf> {
    let path = Path::new(given);
    if path.is_absolute() || path.exists() {
        return None;
    }
    let joined = Path::new(working_dir?).join(path);
    joined.exists().then_some(joined)
}

/// Where to look for a file recorded as `given` with `location`, best first, without
/// repeats.
pub(crate) fn candidates(
    given: &str,
    location: Option<&FileLocation>,
    run_dir: &Path,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(l) = location {
        if let Some(rel) = &l.from_run_dir {
            add(run_dir.join(rel));
        }
        if let Some(abs) = &l.absolute {
            add(PathBuf::from(abs));
        }
    }
    if !given.is_empty() {
        add(PathBuf::from(given));
    }
    out
}

/// The first of `candidates` that exists, else the first one (for a file still to be
/// created, such as a cassette being recorded).
pub(crate) fn existing_or_first(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates
        .iter()
        .find(|p| p.is_file())
        .or_else(|| candidates.first())
        .cloned()
}

/// Where a run's suite is.
pub(crate) enum SuiteLookup {
    /// The suite, unchanged since the run.
    Found(PathBuf),
    /// Files exist, but none hashes to the run's suite (the first one named).
    Changed(PathBuf),
    /// No candidate exists; the paths tried.
    Missing(Vec<PathBuf>),
}

impl SuiteLookup {
    /// The paths tried or found, for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            SuiteLookup::Found(p) | SuiteLookup::Changed(p) => format!("`{}`", p.display()),
            SuiteLookup::Missing(tried) => tried
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Find the suite of the run in `run_dir` described by `meta`.
pub(crate) fn find_suite(meta: &RunMeta, run_dir: &Path) -> SuiteLookup {
    let tried = candidates(
        &meta.suite.path,
        meta.settings.paths.suite.as_ref(),
        run_dir,
    );
    let mut changed = None;
    for p in &tried {
        // Only regular files of a suite's size are read: run.json is input too, and a
        // path to a device or a huge file must not hang or exhaust memory.
        let readable = std::fs::metadata(p)
            .is_ok_and(|m| m.is_file() && m.len() <= crate::suite::load::MAX_SUITE_BYTES);
        let Some(bytes) = readable.then(|| std::fs::read(p).ok()).flatten() else {
            continue;
        };
        if sha256_hex(&bytes) == meta.suite.hash {
            return SuiteLookup::Found(p.clone());
        }
        changed.get_or_insert_with(|| p.clone());
    }
    match changed {
        Some(p) => SuiteLookup::Changed(p),
        None => SuiteLookup::Missing(tried),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_directory() {
        let rel = |p: &str, b: &str| relative(Path::new(p), Path::new(b)).unwrap();
        assert_eq!(
            rel("/w/suites/a.yaml", "/w/reports/run-1"),
            Path::new("../../suites/a.yaml")
        );
        assert_eq!(rel("/w/out/a.yaml", "/w/out"), Path::new("a.yaml"));
        assert_eq!(rel("/a.yaml", "/w/x"), Path::new("../../a.yaml"));
    }

    fn meta(path: &str, hash: &str, location: Option<FileLocation>) -> RunMeta {
        let mut m: RunMeta = serde_json::from_value(serde_json::json!({
            "run_format": 1, "toolgauge_version": "0", "started_at": "", "finished_at": null,
            "suite": {"name": "s", "path": path, "hash": hash},
            "matrix": {"targets": [], "variants": [], "tool_choice": [], "repeats": 1},
            "sources": {}, "tools": {}, "tool_definition_tokens": {},
            "trials_planned": 0, "trials_written": 0,
        }))
        .unwrap();
        m.settings.paths.suite = location;
        m
    }

    #[test]
    fn the_suite_is_the_first_candidate_with_the_runs_hash() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let suite = dir.path().join("s.yaml");
        std::fs::write(&suite, "name: s\n").unwrap();
        let hash = sha256_hex(b"name: s\n");
        let loc = locate(&suite, &run);
        assert_eq!(loc.from_run_dir.as_deref(), Some("../s.yaml"));
        let found = |m: &RunMeta| match find_suite(m, &run) {
            SuiteLookup::Found(p) => format!("found {}", p.display()),
            SuiteLookup::Changed(p) => format!("changed {}", p.display()),
            SuiteLookup::Missing(t) => format!("missing {}", t.len()),
        };
        let rel = format!("found {}", run.join("../s.yaml").display());
        assert_eq!(found(&meta("nowhere.yaml", &hash, Some(loc.clone()))), rel);
        // A changed file at the first candidate gives way to an unchanged one further
        // down the list.
        std::fs::write(run.join("s.yaml"), "name: changed\n").unwrap();
        let first = FileLocation {
            from_run_dir: Some("s.yaml".into()),
            absolute: loc.absolute.clone(),
        };
        let abs = format!("found {}", loc.absolute.as_deref().unwrap());
        assert_eq!(found(&meta("", &hash, Some(first.clone()))), abs);
        std::fs::write(&suite, "name: edited\n").unwrap();
        let changed = format!("changed {}", run.join("s.yaml").display());
        assert_eq!(found(&meta("", &hash, Some(first))), changed);
        assert_eq!(found(&meta("nowhere.yaml", &hash, None)), "missing 1");
        // A device is never read (it would never end).
        assert_eq!(found(&meta("/dev/zero", &hash, None)), "missing 1");
    }

    #[test]
    fn a_located_file_is_found_from_its_run_directory_first() {
        let dir = tempfile::tempdir().unwrap();
        let suites = dir.path().join("suites");
        let run = dir.path().join("reports/r");
        std::fs::create_dir_all(&suites).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(suites.join("s.yaml"), "x").unwrap();
        let loc = locate(&suites.join("s.yaml"), &run);
        assert_eq!(loc.from_run_dir.as_deref(), Some("../../suites/s.yaml"));
        let abs = suites.join("s.yaml").canonicalize().unwrap();
        assert_eq!(loc.absolute.as_deref(), abs.to_str());
        let c = candidates("suites/s.yaml", Some(&loc), Path::new("elsewhere/r"));
        assert_eq!(
            c,
            [
                Path::new("elsewhere/r/../../suites/s.yaml").to_path_buf(),
                abs,
                PathBuf::from("suites/s.yaml")
            ]
        );
        // A run.json written before locations were kept: the path as given.
        assert_eq!(candidates("s.yaml", None, &run), [PathBuf::from("s.yaml")]);
        // Nothing exists: the first candidate (a cassette still to be recorded).
        let missing = [PathBuf::from("m1"), PathBuf::from("m2")];
        assert_eq!(existing_or_first(&missing), Some(PathBuf::from("m1")));
        assert_eq!(existing_or_first(&[]), None);
    }
}
