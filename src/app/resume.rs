//! `toolgauge run --resume DIR`: continue a run with the suite (unchanged), matrix,
//! settings and prices it began with, running only the trials its journal lacks or that
//! ended in errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::paths::{self, SuiteLookup};
use super::prepare::{Answers, Prepared, apply_bfcl_flags, bfcl_style, prepare};
use super::run::{execute, plan_index, select};
use super::settings::{Source, live_settings, resolve};
use super::{AppError, load_suite};
use crate::cli::RunArgs;
use crate::provider::registry::LiveSettings;
use crate::report::RunMeta;
use crate::runner::RunOptions;
use crate::runner::journal::{self, trial_id};
use crate::runner::select::Selection;
use crate::score::{TrialRecord, Verdict};

/// Continue the run in `dir`: same suite (unchanged), matrix and settings; run only the
/// trials its journal lacks or that ended in errors.
pub(super) fn resume(dir: &Path, args: &RunArgs, options: &RunOptions) -> Result<u8, AppError> {
    let old = super::report::read_meta(
        dir,
        "--resume takes a run directory written by `toolgauge run`",
    )?;
    let path = resume_suite_path(&old, dir)?;
    let mut suite = load_suite(&path)?;
    let flag = |key: &str| {
        let v = old.settings.plugins.get(key);
        v.and_then(serde_json::Value::as_bool).unwrap_or(false)
    };
    apply_bfcl_flags(
        &mut suite,
        flag(crate::bfcl::profile::STRICT_KEY),
        flag(crate::bfcl::profile::UNDERSCORE_KEY),
    )?;
    crate::suite::mcp_calls::allow_destructive(&mut suite, args.allow_destructive);
    let suite = Arc::new(suite);
    if suite.hash != old.suite.hash {
        // Found unchanged a moment ago: it changed while being read.
        return Err(suite_changed(&path, dir));
    }
    let mut r = resolve(
        &suite,
        &old.matrix.targets,
        &old.matrix.variants,
        &old.matrix.tool_choice,
        Some(old.matrix.repeats),
    )?;
    let s = &old.settings;
    // Targets that name files (`bfcl-result:FILE`, `scripted:FILE`) keep their spec (it
    // is the trials' identity) and open the file found from the run's working directory.
    for t in &mut r.targets {
        let script = [".yaml", ".yml", ".json"]
            .iter()
            .any(|e| t.model.ends_with(e));
        if (t.provider == "bfcl-result" || (t.provider == "scripted" && script))
            && let Some(p) = paths::from_working_dir(&t.model, s.paths.working_dir.as_deref())
        {
            t.model = p.display().to_string();
        }
    }
    let source = Source::parse(&s.source).ok_or_else(|| {
        AppError::bad(
            format!(
                "`{}` names an unknown source `{}`",
                dir.join("run.json").display(),
                s.source
            ),
            Some("the source is replay, live or record; start a new run"),
        )
    })?;
    let live = LiveSettings {
        temperature: s.temperature,
        max_tokens: s.max_tokens,
        seed: s.seed,
        parallel_tool_calls: s.parallel_tool_calls,
        extra: s.extra.clone(),
        api_key_env: s.api_key_env.clone(),
        ..live_settings(args, &Default::default())?
    };
    // run.json is input too: an edited one must not send a NaN to every request.
    let in_run_json =
        |field: &str| format!("`settings.{field}` of `{}`", dir.join("run.json").display());
    super::settings::check_sampling(
        live.temperature,
        live.max_tokens,
        [&in_run_json("temperature"), &in_run_json("max_tokens")],
    )?;
    // The cassette as the run used it, found from this working directory.
    let cassette = s.cassette.as_ref().and_then(|c| {
        paths::existing_or_first(&paths::candidates(c, s.paths.cassette.as_ref(), dir))
    });
    // The stream mode the run began with.
    let stream = match &s.stream {
        None => crate::suite::stream::StreamMode::Off,
        Some(m) => crate::suite::stream::StreamMode::parse_flag(m).map_err(|_| {
            AppError::bad(
                format!(
                    "`settings.stream` of `{}` is `{m}`: not on or both",
                    dir.join("run.json").display()
                ),
                Some("restore the run.json the run wrote, or start a new run"),
            )
        })?,
    };
    let answers = Answers {
        live,
        source,
        cassette,
        bfcl_style: bfcl_style(
            s.plugins
                .get(crate::bfcl::result::STYLE_KEY)
                .and_then(serde_json::Value::as_str),
        )?,
        // The judge the run began with.
        judge: s.judge.clone(),
        stream,
    };
    // The same cases and shards as the run being resumed (the suite is unchanged).
    let old_selection = old.selection.clone().unwrap_or_default();
    let (selection, mask) = Selection::new(
        &suite,
        &old_selection.cases,
        &old_selection.tags,
        old_selection.shards.clone(),
    )
    .map_err(|e| {
        AppError::bad(
            format!("{}: {e}", dir.join("run.json").display()),
            Some(&e.hint()),
        )
    })?;
    let journal_path = dir.join("trials.jsonl");
    let contents = read_resumable_journal(&journal_path)?;
    // The prices the run began with, not the built-in table or the file as it is now.
    let options = &RunOptions {
        judge: None,
        concurrency: options.concurrency,
        prices: super::prices::for_resume(
            &old,
            dir,
            &r.targets,
            args.prices.as_deref(),
            &options.prices,
        )?,
    };
    let mut prepared = prepare(&path, suite, r, answers, args, dir.to_path_buf())?;
    prepared.meta.started_at = old.started_at.clone();
    if old.settings.prices.is_some() {
        prepared.meta.settings.paths.prices = old.settings.paths.prices.clone();
    }
    // The paths as first given stay; `settings.paths` now locates the files found.
    prepared.meta.suite.path = old.suite.path.clone();
    prepared.meta.settings.cassette = old.settings.cassette.clone();
    // So does the description of each target's source, which names the cassette as
    // given: the found path (`s2/../fixtures/...`) depends on where resume ran, and
    // `merge` compares shards' sources.
    if prepared.meta.sources.keys().eq(old.sources.keys()) {
        prepared.meta.sources = old.sources.clone();
    }
    prepared.meta.merged_from = old.merged_from.clone();
    select(&mut prepared, selection, mask)?;
    check_in_plan(&contents.trials, &prepared, &journal_path)?;

    // Keep every scored trial; errored ones run again. The journal is rewritten with
    // what is kept (a torn last line and duplicates are dropped, see
    // `runner::journal`), atomically, then appended to.
    let kept: Vec<TrialRecord> = contents
        .trials
        .into_iter()
        .filter(|t| t.verdict != Verdict::Error)
        .collect();
    let journal =
        journal::rewrite(&journal_path, &kept).map_err(|e| AppError::Incomplete(e.to_string()))?;
    execute(prepared, journal, kept, args, options)
}

fn suite_changed(path: &Path, dir: &Path) -> AppError {
    AppError::bad(
        format!(
            "suite `{}` changed since the run in `{}` began",
            path.display(),
            dir.display()
        ),
        Some(
            "resuming would mix results of two different suites; restore the suite, or start a new run",
        ),
    )
}

/// The suite of the run in `dir`, found from any working directory (see
/// [`paths::find_suite`]); a changed or missing suite is refused.
fn resume_suite_path(old: &RunMeta, dir: &Path) -> Result<PathBuf, AppError> {
    match paths::find_suite(old, dir) {
        SuiteLookup::Found(p) => Ok(p),
        SuiteLookup::Changed(p) => Err(suite_changed(&p, dir)),
        missing @ SuiteLookup::Missing(_) => Err(AppError::bad(
            format!(
                "the suite of the run in `{}` is missing (tried {})",
                dir.display(),
                missing.describe()
            ),
            Some("restore the suite file the run used, or start a new run"),
        )),
    }
}

/// The journal of a run to resume: a missing one is empty, a damaged one is refused
/// (resume rewrites it and must not drop lines it cannot read), and a torn last line or
/// duplicates are reported before they are dropped.
fn read_resumable_journal(path: &Path) -> Result<journal::JournalContents, AppError> {
    let contents = match journal::load(path) {
        Ok(c) => c,
        Err(e) if e.is_not_found() => journal::JournalContents::default(),
        Err(e) => {
            return Err(AppError::bad(
                e.to_string(),
                Some(
                    "resume rewrites the journal and will not drop lines it cannot read; repair or delete the damaged line (its trial then runs again), or start a new run",
                ),
            ));
        }
    };
    for w in contents.warnings(path) {
        warnln!("warning: {w}");
    }
    Ok(contents)
}

/// Refuse a journal holding trials that are not in the run's plan (another run's
/// journal, or one merged by hand): resuming would keep them in the journal and leave
/// them out of the reports.
fn check_in_plan(trials: &[TrialRecord], p: &Prepared, path: &Path) -> Result<(), AppError> {
    let index = plan_index(&p.plan);
    let foreign: Vec<&TrialRecord> = trials
        .iter()
        .filter(|t| !index.contains_key(&trial_id(t)))
        .collect();
    let Some(first) = foreign.first() else {
        return Ok(());
    };
    Err(AppError::bad(
        format!(
            "`{}` holds {} trial(s) that are not in this run's plan (first: {} × {} × {} × {} #{})",
            path.display(),
            foreign.len(),
            first.case_id,
            first.target,
            first.variant,
            first.tool_choice,
            first.repeat
        ),
        Some("the journal belongs to another run or was edited; resume only the run that wrote it"),
    ))
}
