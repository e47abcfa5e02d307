//! `toolgauge run`: run suites (or resume an interrupted run) into run directories.
//!
//! A run is prepared (suite, matrix, providers, run directory, `run.json`), executed
//! with every finished trial appended to `trials.jsonl` at once and the report files
//! refreshed every few seconds (see [`super::report_writer`]), and reported. Ctrl-C
//! and the `--max-cost` / `--max-tokens` budgets stop new trials, let those in flight
//! finish, and still write everything; `--resume DIR` runs the trials the journal lacks.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use super::outcome::{exit_code, print_summary};
use super::prepare::{Answers, Prepared, apply_bfcl_flags, bfcl_style, in_suite, prepare};
use super::report_writer::{REFRESH_EVERY, ReportWriter, ReportWriterParams, Reporting};
use super::rundir::{self, Claimed};
use super::settings::{live_settings, resolve, source_for};
use super::{AppError, load_suite};
use crate::cli::RunArgs;
use crate::exit;
use crate::report::progress::{Progress, ProgressMode};
use crate::report::{self, VariantTokens};
use crate::runner::journal::{Journal, TrialId, trial_id};
use crate::runner::select::{Selection, ShardSet};
use crate::runner::{self, Plan, RunControl, RunOptions, RunStop};
use crate::score::TrialRecord;
use crate::score::prices::PriceTable;
use crate::suite::Suite;

/// Run every suite of `args` (or resume one run); the most serious exit code wins.
pub(crate) fn run(args: &RunArgs) -> Result<u8, AppError> {
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
    let options = RunOptions {
        concurrency: args.concurrency,
        prices,
        judge: None,
    };
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

/// Refuse unknown `--format` names.
pub(crate) fn check_formats(formats: &[String]) -> Result<(), AppError> {
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
    let judge = judge
        .map(|(target, provider)| super::judge::build(&suite, target, provider, &options.prices))
        .transpose()?;
    let options = &RunOptions {
        concurrency: options.concurrency,
        prices: options.prices.clone(),
        judge,
    };
    let trials = plan.trials();
    meta.trials_planned = trials.len() as u64;
    meta.settings.prices = Some(super::prices::kept(&meta, &options.prices));
    report::write_meta(&dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;
    super::mcp::record_run_tools(&dir, &suite)?;

    // Slots in plan order; trials already done fill theirs.
    let mut slots: Vec<Option<TrialRecord>> = vec![None; trials.len()];
    if !done.is_empty() {
        let index = plan_index(&plan);
        for t in &done {
            if let Some(i) = index.get(&trial_id(t)) {
                slots[*i] = Some(t.clone());
            }
        }
    }
    let todo: Vec<usize> = (0..trials.len()).filter(|i| slots[*i].is_none()).collect();
    let todo_trials: Vec<_> = todo.iter().map(|i| trials[*i]).collect();

    let mode = if args.quiet {
        ProgressMode::Off
    } else if std::io::stderr().is_terminal() {
        ProgressMode::Bar
    } else {
        ProgressMode::Lines
    };
    let mut progress = Progress::new(mode, &suite.name, trials.len() as u64, &done);
    let control = Arc::new(RunControl::default());
    let cells: Vec<(String, String, String)> = plan
        .cells
        .iter()
        .map(|c| {
            (
                c.target.spec.clone(),
                c.variant.clone(),
                c.tool_choice.to_string(),
            )
        })
        .collect();
    let mut reports = ReportWriter::start(
        ReportWriterParams {
            dir: dir.clone(),
            formats: args.format.clone(),
            suite: suite.clone(),
            cells: cells.clone(),
            meta: meta.clone(),
            planned: slots.len(),
            slot_of: todo.clone(),
            every: REFRESH_EVERY,
            collect_after: REFRESH_EVERY,
        },
        &plan,
    );
    let mut journal_error: Option<std::io::Error> = None;
    // One thread drives the trials and the HTTP connections' own tasks alike. A trial's
    // work between answers is small, and with worker threads, every answer was handed
    // from the thread that read it to the one driving the trials (a futex wake and a
    // context switch each): against a local server that closes its connections, about a
    // fifth more CPU, taken from the server's cores, and 3-8% more wall at -j 64
    // (benches/fake_openai.rs), and no faster anywhere.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?;
    let variant_tokens = |plan: &Plan| -> Vec<VariantTokens> {
        meta.matrix
            .variants
            .iter()
            .map(|v| VariantTokens {
                variant: v.clone(),
                tool_definition_tokens: plan.tool_tokens(v),
                system_prompt_tokens: plan.system_tokens(v),
                changes: report::VariantChanges::of(&plan.suite, v),
            })
            .collect()
    };
    let feed = reports.feed();
    let variant_tokens = std::thread::scope(|scope| {
        // Count the variants' tool-definition tokens (up to a hundred cases' tools each)
        // on another thread while the trials run; the reports refreshed meanwhile wait
        // for them.
        let counting = scope.spawn(|| {
            let tokens = variant_tokens(&plan);
            feed.variants(&tokens);
            tokens
        });
        runtime.block_on(async {
            let signal_control = control.clone();
            let listener = tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    warnln!(
                        "\ninterrupted: finishing the trials in flight; no new ones start (Ctrl-C again quits at once)"
                    );
                    signal_control.stop(RunStop::Interrupted);
                }
                // A second Ctrl-C quits now: every finished trial is already in the journal.
                if tokio::signal::ctrl_c().await.is_ok() {
                    warnln!("quit: finished trials are in the journal; resume with --resume");
                    std::process::exit(130);
                }
            });
            let mut writer = super::observe::JournalWriter {
                journal,
                error: None,
            };
            let mut view = super::observe::ProgressView(&mut progress);
            let mut budget = super::observe::Budget::new(args.max_cost, args.max_tokens, &done);
            let finished = runner::execute(
                &plan,
                todo_trials,
                &providers,
                options,
                &control,
                &mut [&mut writer, &mut view, &mut budget, &mut reports],
            )
            .await;
            for (i, record) in finished {
                slots[todo[i]] = Some(record);
            }
            journal_error = writer.error;
            listener.abort();
        });
        // The counting thread only tokenizes; should it ever panic, count again here.
        counting.join().unwrap_or_else(|_| variant_tokens(&plan))
    });
    // No refresh may be written over the final reports.
    let refreshed = reports.stop();
    // The runtime drops its tasks (every pooled connection's among them) on another
    // thread while the reports are put together, without waiting for its blocking
    // threads (a name lookup); `execute` waits for that thread before it returns, so that
    // a process a task still owned (an MCP server's) is ended before toolgauge exits.
    let _runtime_closed = Beside::run(move || runtime.shutdown_background());
    progress.finish();
    if let Some(e) = journal_error {
        return Err(incomplete(&dir, "write the journal", e));
    }
    // Sized up front: a flattened iterator's length is unknown, and growing the vector
    // step by step moved every record again at each growth, after the last answer.
    let mut records: Vec<TrialRecord> = Vec::with_capacity(slots.len());
    records.extend(slots.into_iter().flatten());
    let stopped = control
        .reason()
        .map(|why| {
            format!(
                "{why} after {} of {} trials; resume with `toolgauge run --resume {}`",
                records.len(),
                trials.len(),
                dir.display()
            )
        })
        .or_else(|| {
            control.targets_stopped().map(|why| {
                format!(
                    "{why}; fix that and resume with `toolgauge run --resume {}`",
                    dir.display()
                )
            })
        });
    let reporting = Reporting {
        suite: suite.clone(),
        cells,
        variants: variant_tokens,
    };
    reporting.note_variants(&mut meta);
    meta.trials_written = records.len() as u64;
    meta.finished_at = Some(jiff::Timestamp::now().to_string());
    meta.status = if stopped.is_some() {
        "stopped"
    } else {
        "complete"
    }
    .into();
    meta.stop_reason = control
        .reason()
        .map(|r| r.to_string())
        .or_else(|| control.targets_stopped());
    report::write_meta(&dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;
    let report = reporting.report(meta, records, stopped.clone());
    report::write_files(&dir, &report, &args.format)
        .map_err(|e| AppError::Incomplete(e.to_string()))?;
    print_summary(
        &report,
        &dir,
        &args.format,
        args.quiet,
        args.no_color,
        args.wide,
    );
    let code = exit_code(&report, stopped.as_deref(), args.max_error_rate);
    drop_in_background((report, plan, suite, providers, refreshed, reporting));
    Ok(code)
}

/// Work done on another thread, waited for when this guard is dropped.
struct Beside(Option<std::thread::JoinHandle<()>>);

impl Beside {
    fn run(work: impl FnOnce() + Send + 'static) -> Beside {
        // Should no thread start, `work` is dropped unrun, and what it owns with it.
        Beside(std::thread::Builder::new().spawn(work).ok())
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            let _ = t.join();
        }
    }
}

/// Free `value` on another thread. A finished suite's cases, tool schemas and trials are
/// tens of thousands of allocations; the next suite (or the exit) need not wait for them.
fn drop_in_background<T: Send + 'static>(value: T) {
    // Should no thread start, the value is dropped here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}
