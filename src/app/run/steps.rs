//! The steps of [`super::execute`], in its order: the options with the judge built,
//! `run.json` as the run starts, the trials' slots, the observers, the trials run on one
//! thread (Ctrl-C listened for, the variants' tokens counted beside), and `run.json` and
//! the report files written at the end.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use super::plan_index;
use crate::app::AppError;
use crate::app::observe::{Budget, JournalWriter, ProgressView};
use crate::app::report_writer::{ReportWriter, ReportWriterParams, Reporting};
use crate::cli::RunArgs;
use crate::provider::{Provider, Target};
use crate::report::progress::{Progress, ProgressMode};
use crate::report::{self, RunMeta, RunReport, VariantTokens};
use crate::runner::journal::{Journal, trial_id};
use crate::runner::matrix::PlannedTrial;
use crate::runner::{self, Plan, RunControl, RunOptions, RunStop};
use crate::score::TrialRecord;
use crate::score::prices::PriceTable;
use crate::suite::Suite;

/// `options` with the run's judge model built, when it has one.
pub(super) fn with_judge(
    suite: &Suite,
    judge: Option<(Target, Arc<dyn Provider>)>,
    options: &RunOptions,
) -> Result<RunOptions, AppError> {
    let judge = judge
        .map(|(target, provider)| {
            crate::app::judge::build(suite, target, provider, &options.prices)
        })
        .transpose()?;
    Ok(RunOptions {
        concurrency: options.concurrency,
        prices: options.prices.clone(),
        judge,
    })
}

/// Write `run.json` as the run starts (with its planned trials and the prices it uses),
/// and the tools its MCP servers listed.
pub(super) fn write_started(
    dir: &Path,
    meta: &mut RunMeta,
    suite: &Suite,
    planned: usize,
    prices: &PriceTable,
) -> Result<(), AppError> {
    meta.trials_planned = planned as u64;
    meta.settings.prices = Some(crate::app::prices::kept(meta, prices));
    report::write_meta(dir, meta).map_err(|e| AppError::Incomplete(e.to_string()))?;
    crate::app::mcp::record_run_tools(dir, suite)
}

/// The planned trials' records in plan order: trials already done fill their slots, the
/// others are to run.
pub(super) struct Slots {
    trials: Vec<PlannedTrial>,
    records: Vec<Option<TrialRecord>>,
    /// The empty slots, in plan order: the trials to run.
    todo: Vec<usize>,
}

impl Slots {
    /// The slots of `trials` (those of `plan`), with the `done` trials in theirs.
    pub(super) fn new(plan: &Plan, trials: Vec<PlannedTrial>, done: &[TrialRecord]) -> Slots {
        let mut records: Vec<Option<TrialRecord>> = vec![None; trials.len()];
        if !done.is_empty() {
            let index = plan_index(plan);
            for t in done {
                if let Some(i) = index.get(&trial_id(t)) {
                    records[*i] = Some(t.clone());
                }
            }
        }
        let todo = (0..trials.len())
            .filter(|i| records[*i].is_none())
            .collect();
        Slots {
            trials,
            records,
            todo,
        }
    }

    /// How many trials the plan holds.
    pub(super) fn planned(&self) -> usize {
        self.trials.len()
    }

    /// The slot of each trial to run, in the order they are handed to the runner.
    pub(super) fn todo(&self) -> &[usize] {
        &self.todo
    }

    fn to_run(&self) -> Vec<PlannedTrial> {
        self.todo.iter().map(|i| self.trials[*i]).collect()
    }

    /// Put the `finished` trials (by their index among those to run) in their slots.
    fn fill(&mut self, finished: Vec<(usize, TrialRecord)>) {
        for (i, record) in finished {
            self.records[self.todo[i]] = Some(record);
        }
    }

    /// The records in plan order; slots of trials that did not run are left out.
    pub(super) fn into_records(self) -> Vec<TrialRecord> {
        // Sized up front: a flattened iterator's length is unknown, and growing the vector
        // step by step moved every record again at each growth, after the last answer.
        let mut records: Vec<TrialRecord> = Vec::with_capacity(self.records.len());
        records.extend(self.records.into_iter().flatten());
        records
    }
}

/// `(target, variant, tool_choice)` of each of the plan's cells, in matrix order.
pub(super) fn cells(plan: &Plan) -> Vec<(String, String, String)> {
    plan.cells
        .iter()
        .map(|c| {
            (
                c.target.spec.clone(),
                c.variant.clone(),
                c.tool_choice.to_string(),
            )
        })
        .collect()
}

/// The run's observers, each told every finished trial: the journal, the progress
/// display, the budget and the report writer.
pub(super) struct Observers<'p> {
    journal: JournalWriter,
    progress: Progress,
    budget: Budget,
    reports: ReportWriter<'p>,
}

impl<'p> Observers<'p> {
    /// The observers of a run of `plan` whose `done` trials (a resumed run's) are already
    /// in `journal`, with the reports refreshed as `reports` says.
    pub(super) fn start(
        journal: Journal,
        done: &[TrialRecord],
        args: &RunArgs,
        reports: ReportWriterParams,
        plan: &'p Plan,
    ) -> Observers<'p> {
        let mode = if args.quiet {
            ProgressMode::Off
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            ProgressMode::Lines
        };
        let progress = Progress::new(mode, &reports.suite.name, reports.planned as u64, done);
        Observers {
            progress,
            reports: ReportWriter::start(reports, plan),
            journal: JournalWriter {
                journal,
                error: None,
            },
            budget: Budget::new(args.max_cost, args.max_tokens, done),
        }
    }
}

/// What running the trials leaves besides their records (put in their slots).
pub(super) struct Ran {
    /// The run's control: why it stopped early, if it did.
    pub(super) control: Arc<RunControl>,
    /// Each variant's token sizes, counted while the trials ran.
    pub(super) variants: Vec<VariantTokens>,
    /// The report writer's copy of the records (freed with the rest of the run).
    pub(super) refreshed: Vec<Option<TrialRecord>>,
    /// The first error writing the journal: the run is then incomplete.
    pub(super) journal_error: Option<std::io::Error>,
    /// The runtime closing on another thread; dropping this waits for it.
    pub(super) runtime_closed: Beside,
}

/// Run the trials of `slots` still to run, on one thread, until they finish or the run
/// stops (Ctrl-C, the budget, every target stopped), each finished one told to
/// `observers` and put in its slot; the tokens of `variants` are counted meanwhile.
pub(super) fn run_trials(
    plan: &Plan,
    providers: &HashMap<String, Arc<dyn Provider>>,
    options: &RunOptions,
    slots: &mut Slots,
    mut observers: Observers<'_>,
    variants: &[String],
) -> Result<Ran, AppError> {
    let control = Arc::new(RunControl::default());
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
    let feed = observers.reports.feed();
    let tokens = std::thread::scope(|scope| {
        // Count the variants' tool-definition tokens (up to a hundred cases' tools each)
        // on another thread while the trials run; the reports refreshed meanwhile wait
        // for them.
        let counting = scope.spawn(|| {
            let tokens = variant_tokens(plan, variants);
            feed.variants(&tokens);
            tokens
        });
        runtime.block_on(drive(
            plan,
            providers,
            options,
            &control,
            slots,
            &mut observers,
        ));
        // The counting thread only tokenizes; should it ever panic, count again here.
        counting
            .join()
            .unwrap_or_else(|_| variant_tokens(plan, variants))
    });
    let Observers {
        journal,
        progress,
        reports,
        ..
    } = observers;
    // No refresh may be written over the final reports.
    let refreshed = reports.stop();
    // The runtime drops its tasks (every pooled connection's among them) on another
    // thread while the reports are put together, without waiting for its blocking
    // threads (a name lookup); `execute` holds the guard until it returns, so that a
    // process a task still owned (an MCP server's) is ended before toolgauge exits.
    let runtime_closed = Beside::run(move || runtime.shutdown_background());
    progress.finish();
    Ok(Ran {
        control,
        variants: tokens,
        refreshed,
        journal_error: journal.error,
        runtime_closed,
    })
}

/// Run the trials of `slots` still to run, each finished one told to `observers` and put
/// in its slot, with Ctrl-C listened for meanwhile.
async fn drive(
    plan: &Plan,
    providers: &HashMap<String, Arc<dyn Provider>>,
    options: &RunOptions,
    control: &Arc<RunControl>,
    slots: &mut Slots,
    observers: &mut Observers<'_>,
) {
    let listener = tokio::spawn(on_ctrl_c(control.clone()));
    let Observers {
        journal,
        progress,
        budget,
        reports,
    } = observers;
    let finished = runner::execute(
        plan,
        slots.to_run(),
        providers,
        options,
        control,
        &mut [journal, &mut ProgressView(progress), budget, reports],
    )
    .await;
    slots.fill(finished);
    listener.abort();
}

/// The first Ctrl-C stops the run (no new trial starts, those in flight finish); a
/// second quits at once.
async fn on_ctrl_c(control: Arc<RunControl>) {
    if tokio::signal::ctrl_c().await.is_ok() {
        warnln!(
            "\ninterrupted: finishing the trials in flight; no new ones start (Ctrl-C again quits at once)"
        );
        control.stop(RunStop::Interrupted);
    }
    // A second Ctrl-C quits now: every finished trial is already in the journal.
    if tokio::signal::ctrl_c().await.is_ok() {
        warnln!("quit: finished trials are in the journal; resume with --resume");
        std::process::exit(130);
    }
}

/// The token sizes of each of `variants` (of the run's matrix) and what it changes.
fn variant_tokens(plan: &Plan, variants: &[String]) -> Vec<VariantTokens> {
    variants
        .iter()
        .map(|v| VariantTokens {
            variant: v.clone(),
            tool_definition_tokens: plan.tool_tokens(v),
            system_prompt_tokens: plan.system_tokens(v),
            changes: report::VariantChanges::of(&plan.suite, v),
        })
        .collect()
}

/// Why the run in `dir` ran `written` of its `planned` trials only, and how to resume it;
/// `None` when nothing stopped it.
pub(super) fn stopped(
    control: &RunControl,
    written: usize,
    planned: usize,
    dir: &Path,
) -> Option<String> {
    control
        .reason()
        .map(|why| {
            format!(
                "{why} after {written} of {planned} trials; resume with `toolgauge run --resume {}`",
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
        })
}

/// Finish `meta` (the variants, the trials written, the end, the status and why it
/// stopped), write it to `run.json` and the report of `records` in `formats` to `dir`.
pub(super) fn write_report(
    dir: &Path,
    mut meta: RunMeta,
    reporting: &Reporting,
    control: &RunControl,
    records: Vec<TrialRecord>,
    stopped: Option<String>,
    formats: &[String],
) -> Result<RunReport, AppError> {
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
    report::write_meta(dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;
    let report = reporting.report(meta, records, stopped);
    report::write_files(dir, &report, formats).map_err(|e| AppError::Incomplete(e.to_string()))?;
    Ok(report)
}

/// Work done on another thread, waited for when this guard is dropped.
pub(super) struct Beside(Option<std::thread::JoinHandle<()>>);

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
pub(super) fn drop_in_background<T: Send + 'static>(value: T) {
    // Should no thread start, the value is dropped here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}
