//! `toolgauge run`: run suites (or resume an interrupted run) into run directories.
//!
//! A run is prepared (suite, matrix, providers, run directory, `run.json`), executed
//! with every finished trial appended to `trials.jsonl` at once and the report files
//! refreshed every few seconds (see [`super::report_writer`]), and reported. Ctrl-C
//! and the `--max-cost` / `--max-tokens` budgets stop new trials, let those in flight
//! finish, and still write everything; `--resume DIR` runs the trials the journal lacks.

mod steps;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use self::steps::{Observers, Ran, Slots};
use super::outcome::{exit_code, print_summary};
use super::prepare::{Answers, Prepared, apply_bfcl_flags, bfcl_style, in_suite, prepare};
use super::report_writer::{REFRESH_EVERY, ReportWriterParams, Reporting};
use super::rundir::{self, Claimed};
use super::settings::{live_settings, resolve, source_for};
use super::{AppError, load_suite};
use crate::cli::RunArgs;
use crate::exit;
use crate::report;
use crate::runner::journal::{Journal, TrialId};
use crate::runner::select::{Selection, ShardSet};
use crate::runner::{Plan, RunOptions};
use crate::score::TrialRecord;
use crate::score::prices::PriceTable;
use crate::suite::Suite;

/// Run every suite of `args` (or resume one run); the most serious exit code wins.
pub(crate) fn run(args: &RunArgs) -> Result<u8, AppError> {
    let options = run_options(args)?;
    if let Some(dir) = &args.resume {
        return super::resume::resume(dir, args, &options);
    }
    let mut code = exit::OK;
    let mut finish = |c: Result<u8, AppError>| {
        let c = c.unwrap_or_else(|e| {
            e.print();
            e.code()
        });
        code = worst(code, c);
    };
    if args.suites.len() < 2 {
        for path in &args.suites {
            finish(load_suite(path).and_then(|s| run_suite(path, s, args, &options)));
        }
        return Ok(code);
    }
    // Several suites (an imported benchmark is eleven): the next one loads on another
    // thread while the current one runs. The channel holds none, so at most one suite
    // waits loaded beside the one running.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel(0);
        scope.spawn(move || {
            for path in &args.suites {
                let suite = load_suite(path).inspect(crate::judge::calls::prepare_ahead);
                if tx.send(suite).is_err() {
                    break;
                }
            }
        });
        for path in &args.suites {
            // The loader sends one result per suite; should it ever stop (a panic), the
            // suites it did not send are reported rather than silently skipped.
            let suite = rx.recv().unwrap_or_else(|_| {
                Err(AppError::Incomplete(format!(
                    "suite `{}` was not loaded: the thread loading suites stopped",
                    path.display()
                )))
            });
            finish(suite.and_then(|s| run_suite(path, s, args, &options)));
        }
    });
    Ok(code)
}

/// Check the flags every suite's run shares and build the options of its runs (the judge
/// is built per run); what every run needs starts loading meanwhile.
fn run_options(args: &RunArgs) -> Result<RunOptions, AppError> {
    check_formats(&args.format)?;
    // Every run counts tool-definition tokens; load the vocabulary while suites load.
    crate::score::tokens::warm_up();
    // And most write report.html after their last answer: compile its template now.
    if args.format.iter().any(|f| f == "html") {
        crate::report::html::warm_up();
    }
    if args.out.is_some() && args.suites.len() > 1 {
        return Err(AppError::bad(
            "--out names one run directory, but several suites were given",
            Some("drop --out to get one directory per suite under --reports-dir"),
        ));
    }
    for (flag, v) in [("--max-cost", args.max_cost)] {
        if let Some(v) = v
            && !(v.is_finite() && v >= 0.0)
        {
            return Err(AppError::bad(
                format!("{flag} must be a non-negative number, got {v}"),
                None,
            ));
        }
    }
    let prices = match &args.prices {
        Some(p) => PriceTable::with_file(p).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("write a map: MODEL: {input_per_mtok: 0.15, output_per_mtok: 0.6}"),
            )
        })?,
        None => PriceTable::default(),
    };
    Ok(RunOptions {
        concurrency: args.concurrency,
        prices,
        judge: None,
    })
}

/// Refuse unknown `--format` names.
pub(super) fn check_formats(formats: &[String]) -> Result<(), AppError> {
    for f in formats {
        if f != "terminal" && !report::FILE_FORMATS.contains(&f.as_str()) {
            return Err(AppError::bad(
                format!("unknown format `{f}`"),
                Some(&format!(
                    "formats are: terminal, {}",
                    report::FILE_FORMATS.join(", ")
                )),
            ));
        }
    }
    Ok(())
}

/// The more serious of two exit codes (2 and 3 outrank 1, which outranks 0).
fn worst(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        exit::OK => 0,
        exit::THRESHOLD_FAILED => 1,
        _ => 2 + c,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn run_dir_name(suite: &str) -> String {
    let safe = crate::util::file_name::safe_name(suite);
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    format!("{safe}-{stamp}")
}

fn incomplete(dir: &Path, what: &str, e: impl std::fmt::Display) -> AppError {
    AppError::Incomplete(format!("failed to {what} in `{}`: {e}", dir.display()))
}

/// Run `suite`, loaded from `path`.
fn run_suite(
    path: &Path,
    mut suite: Suite,
    args: &RunArgs,
    options: &RunOptions,
) -> Result<u8, AppError> {
    apply_bfcl_flags(&mut suite, args.bfcl_strict, args.bfcl_underscore_names)?;
    crate::suite::mcp_calls::allow_destructive(&mut suite, args.allow_destructive);
    let suite = Arc::new(suite);
    let r = resolve(
        &suite,
        &args.targets,
        &args.variants,
        &args.tool_choice,
        args.repeats,
    )
    .map_err(in_suite(path))?;
    let live = live_settings(args, &suite.sampling)?;
    let stream = super::stream::mode(args.stream.as_deref(), &suite)?;
    super::stream::check_targets(&r.targets, stream, args.stream.is_some(), &suite)?;
    let cassette = args.cassette.clone().or_else(|| suite.cassette.clone());
    let source = source_for(args.live, args.record, cassette.as_deref());
    let answers = Answers {
        live,
        source,
        cassette,
        bfcl_style: bfcl_style(args.bfcl_style.as_deref())?,
        judge: args
            .judge
            .clone()
            .or_else(|| suite.judge.as_ref().map(|j| j.target.clone())),
        stream,
    };
    let (selection, mask) = Selection::new(
        &suite,
        &args.cases,
        &args.tags,
        args.shard.map(ShardSet::one),
    )
    .map_err(|e| AppError::bad(format!("{}: {e}", path.display()), Some(&e.hint())))?;
    let claimed = match &args.out {
        Some(d) => rundir::claim_out(d, args.overwrite)?,
        None => rundir::claim_fresh(&args.reports_dir, &run_dir_name(&suite.name))?,
    };
    let started = start_in(&claimed, path, suite, r, answers, args, selection, mask);
    let (prepared, journal) = match started {
        Ok(started) => started,
        Err(e) => {
            claimed.release();
            return Err(e);
        }
    };
    execute(prepared, journal, Vec::new(), args, options)
}

/// Prepare the run in the claimed directory, restricted to the selected cases and
/// shards, and create its journal (exclusively: a run that raced this one into the same
/// directory makes this one stop).
#[allow(clippy::too_many_arguments)]
fn start_in(
    claimed: &Claimed,
    path: &Path,
    suite: Arc<Suite>,
    r: super::settings::Resolved,
    answers: Answers,
    args: &RunArgs,
    selection: Selection,
    mask: Option<Vec<bool>>,
) -> Result<(Prepared, Journal), AppError> {
    let dir = &claimed.path;
    let mut prepared = prepare(path, suite, r, answers, args, dir.clone())?;
    select(&mut prepared, selection, mask)?;
    claimed.clear()?;
    let journal = Journal::create_new(&dir.join("trials.jsonl")).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            AppError::bad(
                format!("another run started writing into `{}`", dir.display()),
                Some("give each run its own --out"),
            )
        } else {
            incomplete(dir, "create the journal", e)
        }
    })?;
    Ok((prepared, journal))
}

/// Restrict the plan to the selected cases and shards, and record the selection.
pub(super) fn select(
    p: &mut Prepared,
    selection: Selection,
    mask: Option<Vec<bool>>,
) -> Result<(), AppError> {
    // Selected cases that run under none of the matrix's tool_choice modes plan nothing;
    // an empty shard is fine (a small suite split many ways).
    if mask.is_some() {
        p.plan.restrict(mask.clone(), None);
        if p.plan.trials().is_empty() {
            return Err(AppError::bad(
                format!(
                    "the selected cases ({}) run under none of the run's tool_choice modes ({})",
                    selection.flags(),
                    p.meta.matrix.tool_choice.join(", ")
                ),
                Some(
                    "their `modes:` exclude these modes; select other cases or pass --tool-choice",
                ),
            ));
        }
    }
    p.plan.restrict(mask, selection.shards.clone());
    p.meta.selection = (!selection.is_everything()).then_some(selection);
    super::prepare::self_test_warnings(p);
    Ok(())
}

/// Each planned trial's index in `plan.trials()`, by identity.
pub(super) fn plan_index(plan: &Plan) -> HashMap<TrialId, usize> {
    plan.trials()
        .iter()
        .enumerate()
        .map(|(i, t)| (plan.identity(*t), i))
        .collect()
}

/// Run the prepared run's trials that `done` (the kept trials of a resumed run) lacks,
/// each appended to `journal` as it finishes, then write `run.json` and the reports and
/// print the summary: the settings in `p` to the runner to the exporters. Returns the
/// exit code.
pub(super) fn execute(
    p: Prepared,
    journal: Journal,
    done: Vec<TrialRecord>,
    args: &RunArgs,
    options: &RunOptions,
) -> Result<u8, AppError> {
    let Prepared {
        suite,
        plan,
        providers,
        judge,
        dir,
        mut meta,
    } = p;
    let options = &steps::with_judge(&suite, judge, options)?;
    let trials = plan.trials();
    steps::write_started(&dir, &mut meta, &suite, trials.len(), &options.prices)?;
    let mut slots = Slots::new(&plan, trials, &done);
    let cells = steps::cells(&plan);
    let refresh = ReportWriterParams {
        dir: dir.clone(),
        formats: args.format.clone(),
        suite: suite.clone(),
        cells: cells.clone(),
        meta: meta.clone(),
        planned: slots.planned(),
        slot_of: slots.todo().to_vec(),
        every: REFRESH_EVERY,
        collect_after: REFRESH_EVERY,
    };
    let observers = Observers::start(journal, &done, args, refresh, &plan);
    let in_matrix = &meta.matrix.variants;
    // `_runtime_closed` is held until this returns: the runtime's tasks end first.
    let Ran {
        control,
        variants,
        refreshed,
        journal_error,
        runtime_closed: _runtime_closed,
    } = steps::run_trials(&plan, &providers, options, &mut slots, observers, in_matrix)?;
    if let Some(e) = journal_error {
        return Err(incomplete(&dir, "write the journal", e));
    }
    let planned = slots.planned();
    let records = slots.into_records();
    let stopped = steps::stopped(&control, records.len(), planned, &dir);
    let reporting = Reporting {
        suite: suite.clone(),
        cells,
        variants,
    };
    let report = steps::write_report(
        &dir,
        meta,
        &reporting,
        &control,
        records,
        stopped.clone(),
        &args.format,
    )?;
    print_summary(
        &report,
        &dir,
        &args.format,
        args.quiet,
        args.no_color,
        args.wide,
    );
    let code = exit_code(&report, stopped.as_deref(), args.max_error_rate);
    steps::drop_in_background((report, plan, suite, providers, refreshed, reporting));
    Ok(code)
}
