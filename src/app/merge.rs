//! `toolgauge merge DIR… --out DIR`: join the run directories of `run --shard K/N` into
//! one run directory whose trials, summary and reports equal those of the same run made
//! unsharded (timestamps and latencies aside).
//!
//! Before writing anything the shards are checked to be parts of one run: the same suite
//! (unchanged since), matrix, settings and `--case`/`--tag` selection, the same N, each
//! shard given once, each trial in the shard its identity hashes to and in the plan, no
//! trial twice. Missing or unfinished shards are refused unless `--allow-partial`, which
//! records the result as a partial run (its thresholds are then not gated, as on a shard).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AppError;
use super::outcome::{exit_code, print_summary};
use super::paths::{self, SuiteLookup};
use super::run::check_formats;
use crate::cli::MergeArgs;
use crate::provider::{Target, ToolChoice};
use crate::report::{self, RunMeta, RunPaths, RunReport, Summary, VariantTokens};
use crate::runner::Plan;
use crate::runner::journal::Journal;
use crate::runner::select::{MergedShard, Selection, ShardSet};
use crate::score::TrialRecord;
use crate::suite::Suite;

/// Most missing trials named in an error.
const NAMED: usize = 5;

/// The hint of every "these are not shards of one run" error.
const SAME_RUN: &str = "merge the run directories of one `toolgauge run --shard K/N` command \
                        (same suite, matrix, settings, --case/--tag and N), one per K";

/// One shard's run directory, read.
struct ShardRun {
    dir: PathBuf,
    meta: RunMeta,
    shards: ShardSet,
    trials: Vec<TrialRecord>,
}

use crate::score::record::TrialId;

/// Merge as `args` asks; the exit code is the one `run` would give the merged run.
pub(crate) fn merge(args: &MergeArgs) -> Result<u8, AppError> {
    check_formats(&args.format)?;
    if !(0.0..=1.0).contains(&args.max_error_rate) {
        return Err(AppError::bad(
            format!(
                "--max-error-rate must be between 0 and 1, got {}",
                args.max_error_rate
            ),
            None,
        ));
    }
    check_out(&args.out)?;
    let runs = args
        .dirs
        .iter()
        .map(|d| read_shard(d))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &runs[0];
    for r in &runs[1..] {
        same_run(first, r)?;
    }
    let count = first.shards.count;
    let held = coverage(&runs, count, args.allow_partial)?;
    let unfinished = unfinished(&runs, args.allow_partial)?;
    let (suite, suite_path) = load_suite(&runs)?;
    let selection = first.meta.selection.clone().unwrap_or_default();
    let (mut merged_selection, mask) = Selection::new(
        &suite,
        &selection.cases,
        &selection.tags,
        (!held.is_all()).then(|| held.clone()),
    )
    .map_err(|e| AppError::bad(e.to_string(), Some(&e.hint())))?;
    let plan = plan_of(&suite, &first.meta, mask, merged_selection.shards.clone())?;
    let trials = check_trials(
        &runs,
        &plan,
        count,
        args.allow_partial || unfinished.is_some(),
    )?;
    merged_selection.shards = (!held.is_all()).then_some(held);

    let meta = merged_meta(&runs, merged_selection, unfinished, trials.len());
    write(args, meta, trials, &suite, |dir| {
        merged_paths(&runs, &suite_path, dir)
    })
}

/// Refuse an `--out` that holds anything: a merge never overwrites a run.
fn check_out(out: &Path) -> Result<(), AppError> {
    let occupied = match std::fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
    };
    if occupied {
        return Err(AppError::bad(
            format!("--out `{}` already exists and is not empty", out.display()),
            Some("merge into a new directory; a merge never overwrites a run"),
        ));
    }
    Ok(())
}

/// Read `dir`'s run.json and journal; it must be a shard run.
fn read_shard(dir: &Path) -> Result<ShardRun, AppError> {
    let meta = super::report::read_meta(
        dir,
        "merge takes run directories written by `toolgauge run --shard K/N`",
    )?;
    let Some(shards) = meta.selection.as_ref().and_then(|s| s.shards.clone()) else {
        return Err(AppError::bad(
            format!(
                "`{}` is not a shard: its run was made without --shard",
                dir.display()
            ),
            Some("merge takes run directories written by `toolgauge run --shard K/N`"),
        ));
    };
    shards.check().map_err(|e| {
        AppError::bad(
            format!("`{}` records {e}", dir.join("run.json").display()),
            Some("the run directory was edited; run the shard again with --shard K/N"),
        )
    })?;
    let journal_path = dir.join("trials.jsonl");
    // The reader `report`, `compare` and `--resume` share, so the merge counts what they
    // count; but a trial twice in a shard's journal is refused rather than folded: the
    // journal was edited or appended to by hand, and `run --resume` compacts it first.
    let contents = super::report::load_journal(&journal_path)?;
    if let Some((line, id)) = contents.duplicates.first() {
        return Err(AppError::bad(
            format!(
                "{id} appears twice in `{}` (again at line {line}; {} duplicate line(s) in all)",
                journal_path.display(),
                contents.duplicates.len()
            ),
            Some(&format!(
                "each trial must be in one shard once; `toolgauge run --resume {}` compacts the journal (the later line wins, but a scored trial over an error), then merge again",
                dir.display()
            )),
        ));
    }
    for w in contents.warnings(&journal_path) {
        warnln!("warning: {w}");
    }
    let trials = contents.trials;
    Ok(ShardRun {
        dir: dir.to_path_buf(),
        meta,
        shards,
        trials,
    })
}

/// Refuse `b` unless it is a shard of the same run as `a`.
fn same_run(a: &ShardRun, b: &ShardRun) -> Result<(), AppError> {
    let (ma, mb) = (&a.meta, &b.meta);
    let differ = |what: &str, va: String, vb: String| -> Result<(), AppError> {
        if va == vb {
            return Ok(());
        }
        Err(AppError::bad(
            format!(
                "`{}` and `{}` are not shards of one run: {what} differ ({va} vs {vb})",
                a.dir.display(),
                b.dir.display()
            ),
            Some(SAME_RUN),
        ))
    };
    differ(
        "their suites",
        format!("{} sha256 {}", ma.suite.name, short(&ma.suite.hash)),
        format!("{} sha256 {}", mb.suite.name, short(&mb.suite.hash)),
    )?;
    differ(
        "their toolgauge versions",
        ma.toolgauge_version.clone(),
        mb.toolgauge_version.clone(),
    )?;
    differ("their matrices", json(&ma.matrix), json(&mb.matrix))?;
    // Where each shard found its suite and cassette (`settings.paths`: relative to its
    // run directory, absolute, its working directory) differs per machine and directory
    // by design; the files themselves are compared by the suite hash above.
    let settings = |m: &RunMeta| {
        let mut s = m.settings.clone();
        s.paths = RunPaths::default();
        json(&s)
    };
    differ("their settings", settings(ma), settings(mb))?;
    differ(
        "the sources of their targets",
        json(&ma.sources),
        json(&mb.sources),
    )?;
    let (sa, sb) = (
        ma.selection.clone().unwrap_or_default(),
        mb.selection.clone().unwrap_or_default(),
    );
    let flags = |s: &Selection| match s.flags() {
        f if f.is_empty() => "every case".to_string(),
        f => f,
    };
    differ("their case selections", flags(&sa), flags(&sb))?;
    differ(
        "their shard counts",
        format!("N = {}", a.shards.count),
        format!("N = {}", b.shards.count),
    )
}

/// A run.json part as JSON text, to compare two shards' (all are plain data).
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

/// The shards the runs hold together; refuses a shard given twice, and missing shards
/// unless `allow_partial`.
fn coverage(runs: &[ShardRun], count: u32, allow_partial: bool) -> Result<ShardSet, AppError> {
    let mut owner: BTreeMap<u32, &Path> = BTreeMap::new();
    for r in runs {
        for k in &r.shards.indices {
            if let Some(prev) = owner.insert(*k, &r.dir) {
                return Err(AppError::bad(
                    format!(
                        "shard {k}/{count} is given twice: in `{}` and in `{}`",
                        prev.display(),
                        r.dir.display()
                    ),
                    Some("give each shard's run directory once"),
                ));
            }
        }
    }
    let held = ShardSet {
        count,
        indices: owner.keys().copied().collect(),
    };
    let missing = held.missing();
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let what = if missing.len() == 1 {
            format!("shard {list} of {count} is missing")
        } else {
            format!("shards {list} of {count} are missing")
        };
        if !allow_partial {
            return Err(AppError::bad(
                what,
                Some(
                    "pass every shard's run directory, or --allow-partial to merge these into a run recorded as partial",
                ),
            ));
        }
        warnln!("warning: {what}; the merged run is partial ({held})");
    }
    Ok(held)
}

/// Why the merged run is unfinished (a shard stopped early or never finished), refused
/// unless `allow_partial`.
fn unfinished(runs: &[ShardRun], allow_partial: bool) -> Result<Option<String>, AppError> {
    let mut reasons = Vec::new();
    for r in runs {
        let m = &r.meta;
        if m.status == "complete" && r.trials.len() as u64 >= m.trials_planned {
            continue;
        }
        let why = m.stop_reason.clone().unwrap_or_else(|| {
            if m.status == "complete" {
                "its journal lacks trials".into()
            } else {
                format!("status {}", m.status)
            }
        });
        let text = format!(
            "{} in `{}` is unfinished ({why}; {} of {} trials)",
            r.shards,
            r.dir.display(),
            r.trials.len(),
            m.trials_planned
        );
        if !allow_partial {
            return Err(AppError::bad(
                text,
                Some(&format!(
                    "finish it with `toolgauge run --resume {}`, or pass --allow-partial",
                    r.dir.display()
                )),
            ));
        }
        warnln!("warning: {text}");
        reasons.push(text);
    }
    Ok((!reasons.is_empty()).then(|| reasons.join("; ")))
}

/// The suite the shards ran, unchanged since, and where it was found: the merge checks
/// its thresholds, so a missing suite would be a silent pass. It is looked for as
/// `report` and `run --resume` look for it ([`paths::find_suite`]: relative to a shard's
/// directory, absolute, then as given from this working directory), shard by shard, so
/// the merge works from any directory that reaches the suite.
fn load_suite(runs: &[ShardRun]) -> Result<(Arc<Suite>, PathBuf), AppError> {
    let mut changed = None;
    let mut tried: Vec<PathBuf> = Vec::new();
    for r in runs {
        match paths::find_suite(&r.meta, &r.dir) {
            SuiteLookup::Found(p) => {
                let suite = super::load_suite(&p)?;
                if suite.hash != r.meta.suite.hash {
                    // Found unchanged a moment ago: it changed while being read.
                    return Err(suite_changed(&p));
                }
                return Ok((Arc::new(suite), p));
            }
            SuiteLookup::Changed(p) => {
                changed.get_or_insert(p);
            }
            SuiteLookup::Missing(t) => {
                for p in t {
                    if !tried.contains(&p) {
                        tried.push(p);
                    }
                }
            }
        }
    }
    if let Some(p) = changed {
        return Err(suite_changed(&p));
    }
    Err(AppError::bad(
        format!(
            "suite `{}` of the shards is not found (merge checks its thresholds; tried {})",
            runs[0].meta.suite.path,
            SuiteLookup::Missing(tried).describe()
        ),
        Some(
            "run merge where the suite the shards ran is in place, e.g. in a checkout of the same commit",
        ),
    ))
}

fn suite_changed(path: &Path) -> AppError {
    AppError::bad(
        format!("suite `{}` changed since the shards ran", path.display()),
        Some("merge with the suite as it was when the shards ran (its sha256 is in run.json)"),
    )
}

/// Where the merged run's suite and cassette are, from its own directory (`dir`, which
/// exists): the shards' `settings.paths` locate them from the shards' directories.
fn merged_paths(runs: &[ShardRun], suite: &Path, dir: &Path) -> RunPaths {
    let cassette = runs.iter().find_map(|r| {
        let s = &r.meta.settings;
        let given = s.cassette.as_ref()?;
        paths::candidates(given, s.paths.cassette.as_ref(), &r.dir)
            .into_iter()
            .find(|p| p.is_file())
    });
    RunPaths {
        suite: Some(paths::locate(suite, dir)),
        cassette: cassette.map(|c| paths::locate(&c, dir)),
        working_dir: paths::working_dir(),
        prices: runs
            .iter()
            .find_map(|r| super::prices::file_of(&r.meta, &r.dir))
            .map(|p| paths::locate(&p, dir)),
    }
}

/// The plan of the merged run: the shards' matrix, selected cases and shards.
fn plan_of(
    suite: &Arc<Suite>,
    meta: &RunMeta,
    mask: Option<Vec<bool>>,
    shards: Option<ShardSet>,
) -> Result<Plan, AppError> {
    let bad = |e: String| AppError::bad(format!("run.json: {e}"), Some(SAME_RUN));
    let targets = meta
        .matrix
        .targets
        .iter()
        .map(|t| Target::parse(t).map_err(|e| bad(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    // The shards' stream mode: each target once per mode, as the shards ran it.
    let stream = match &meta.settings.stream {
        None => crate::suite::stream::StreamMode::Off,
        Some(m) => crate::suite::stream::StreamMode::parse_flag(m)
            .map_err(|_| bad(format!("`settings.stream` is `{m}`: not on or both")))?,
    };
    let targets = super::stream::expand(&targets, stream);
    let modes = meta
        .matrix
        .tool_choice
        .iter()
        .map(|m| m.parse::<ToolChoice>().map_err(bad))
        .collect::<Result<Vec<_>, _>>()?;
    let mut plan = Plan::new(
        suite.clone(),
        &targets,
        &meta.matrix.variants,
        &modes,
        meta.matrix.repeats,
    );
    plan.restrict(mask, shards);
    Ok(plan)
}

/// Every trial of every shard, in plan order, after checking each belongs to its shard
/// and to the plan, and none appears twice. Planned trials no shard holds are refused
/// unless `allow_missing`.
fn check_trials(
    runs: &[ShardRun],
    plan: &Plan,
    count: u32,
    allow_missing: bool,
) -> Result<Vec<TrialRecord>, AppError> {
    let order: HashMap<TrialId, usize> = plan
        .trials()
        .into_iter()
        .enumerate()
        .map(|(i, t)| (plan.identity(t), i))
        .collect();
    let mut seen: HashMap<TrialId, &Path> = HashMap::new();
    let mut out: Vec<(usize, TrialRecord)> = Vec::new();
    for r in runs {
        let journal = r.dir.join("trials.jsonl");
        for t in &r.trials {
            let id = TrialId::of(t);
            let k = id.shard(count);
            if !r.shards.contains(k) {
                return Err(AppError::bad(
                    format!(
                        "`{}` holds {}, which belongs to shard {k}/{count}, not to {}",
                        journal.display(),
                        id,
                        r.shards
                    ),
                    Some("the journal was edited or copied from another run; run that shard again"),
                ));
            }
            let Some(&i) = order.get(&id) else {
                return Err(AppError::bad(
                    format!(
                        "`{}` holds {}, which is not in the run's matrix and case selection",
                        journal.display(),
                        id
                    ),
                    Some("the journal was edited or copied from another run; run that shard again"),
                ));
            };
            if let Some(prev) = seen.insert(id.clone(), &r.dir) {
                return Err(AppError::bad(
                    format!(
                        "{} appears twice: in `{}` and in `{}`",
                        id,
                        prev.join("trials.jsonl").display(),
                        journal.display()
                    ),
                    Some(
                        "each trial must be in one shard once; run the shard with the duplicate again",
                    ),
                ));
            }
            out.push((i, t.clone()));
        }
    }
    if out.len() < order.len() && !allow_missing {
        let held: HashSet<&TrialId> = seen.keys().collect();
        let mut missing: Vec<(&TrialId, usize)> = order
            .iter()
            .filter(|(id, _)| !held.contains(id))
            .map(|(id, i)| (id, *i))
            .collect();
        missing.sort_by_key(|(_, i)| *i);
        let named: Vec<String> = missing
            .iter()
            .take(NAMED)
            .map(|(id, _)| id.to_string())
            .collect();
        return Err(AppError::bad(
            format!(
                "{} planned trials are in no shard's journal, e.g. {}",
                missing.len(),
                named.join("; ")
            ),
            Some(
                "resume the shards that lack them with `toolgauge run --resume DIR`, or pass --allow-partial",
            ),
        ));
    }
    out.sort_by_key(|(i, _)| *i);
    Ok(out.into_iter().map(|(_, t)| t).collect())
}

/// The merged run.json: the shards' common parts, their combined counts and times, and
/// where each part came from.
fn merged_meta(
    runs: &[ShardRun],
    selection: Selection,
    unfinished: Option<String>,
    written: usize,
) -> RunMeta {
    let mut meta = runs[0].meta.clone();
    let time = |s: &str| s.parse::<jiff::Timestamp>().ok();
    meta.started_at = runs
        .iter()
        .map(|r| r.meta.started_at.clone())
        .min_by_key(|s| time(s))
        .unwrap_or_default();
    meta.finished_at = if runs.iter().all(|r| r.meta.finished_at.is_some()) {
        runs.iter()
            .filter_map(|r| r.meta.finished_at.clone())
            .max_by_key(|s| time(s))
    } else {
        None
    };
    meta.trials_planned = runs.iter().map(|r| r.meta.trials_planned).sum();
    meta.trials_written = written as u64;
    meta.status = if unfinished.is_some() {
        "stopped"
    } else {
        "complete"
    }
    .into();
    meta.stop_reason = unfinished;
    meta.selection = (!selection.is_everything()).then_some(selection);
    meta.merged_from = runs
        .iter()
        .map(|r| MergedShard {
            dir: r.dir.display().to_string(),
            shards: r.shards.clone(),
            trials: r.trials.len() as u64,
            started_at: r.meta.started_at.clone(),
            finished_at: r.meta.finished_at.clone(),
        })
        .collect();
    meta
}

/// Write the merged run directory and report it as `run` would.
fn write(
    args: &MergeArgs,
    mut meta: RunMeta,
    trials: Vec<TrialRecord>,
    suite: &Suite,
    locate: impl FnOnce(&Path) -> RunPaths,
) -> Result<u8, AppError> {
    let dir = &args.out;
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        AppError::Incomplete(format!("failed to {what} in `{}`: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| failed("create the run directory", &e))?;
    meta.settings.paths = locate(dir);
    let mut journal =
        Journal::create(&dir.join("trials.jsonl")).map_err(|e| failed("write the journal", &e))?;
    for t in &trials {
        journal
            .append(t)
            .map_err(|e| failed("write the journal", &e))?;
    }
    report::write_meta(dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;
    let variants = VariantTokens::from_meta(&meta);
    let mut summary = Summary::build(
        &meta.suite.name,
        &meta.matrix.cells(),
        &variants,
        &trials,
        &suite.thresholds,
    );
    let stopped = meta.stop_reason.as_ref().map(|why| {
        format!(
            "{why}; {} of {} trials; resume with `toolgauge run --resume {}`",
            trials.len(),
            meta.trials_planned,
            dir.display()
        )
    });
    summary.stopped = stopped.clone();
    summary.selection = meta.selection.as_ref().and_then(Selection::describe);
    let report = RunReport {
        meta,
        trials,
        summary,
    };
    report::write_files(dir, &report, &args.format)
        .map_err(|e| AppError::Incomplete(e.to_string()))?;
    print_summary(&report, dir, &args.format, args.quiet, args.no_color, false);
    Ok(exit_code(&report, stopped.as_deref(), args.max_error_rate))
}
