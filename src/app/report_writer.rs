//! Report files refreshed while a run goes on, so a run that dies (SIGKILL, a crash, a CI
//! timeout) still leaves a readable report of the trials that finished.
//!
//! [`ReportWriter`] is an observer of the run ([`crate::runner::RunObserver`]) like the
//! journal: it hands each finished trial to a thread of its own, which rewrites the run
//! directory's report files from the trials finished so far at most every
//! [`REFRESH_EVERY`], through the same [`RunReport`] and exporters as the end of the run.
//! Until the first refresh could be due the observer keeps nothing (a run shorter than
//! that copies no record); from then on the run loop only clones each record into a
//! channel, and the thread reads what finished before from the journal. Rendering never
//! holds the run up, and trials that finish while a refresh is being written wait for
//! the next one.
//!
//! A refreshed report says it is partial: `run.json` still says `running` (it is written
//! only at the start and the end), and the summary's `stopped` reads "in progress: N of M
//! trials", with the command that resumes the run should it never end. Each refresh is
//! rendered into [`STAGING_DIR`] inside the run directory and then renamed over the old
//! files one by one, so a reader never sees a half-written file. The report written when
//! the run ends is built by [`Reporting::report`] from the run's own records and written as
//! before, after the last refresh has finished.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::report::{self, ReportError, RunMeta, RunReport, Summary, VariantTokens};
use crate::runner::select::Selection;
use crate::runner::{Plan, RunControl, RunEvent, RunObserver};
use crate::score::TrialRecord;
use crate::score::record::TrialId;
use crate::suite::Suite;

/// How often, at most, the report files are rewritten while a run goes on.
pub(super) const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// The directory inside a run directory where a refresh is rendered before its files are
/// renamed into place (left behind only by a process killed while writing one).
pub(crate) const STAGING_DIR: &str = ".reports.tmp";

/// What a run's reports are built from besides its metadata and trials: the suite (its
/// name, thresholds and system prompts), the matrix's cells and each variant's tokens.
pub(super) struct Reporting {
    /// The suite.
    pub suite: Arc<Suite>,
    /// `(target, variant, tool_choice)` of each cell, in matrix order.
    pub cells: Vec<(String, String, String)>,
    /// Each variant's token sizes and changes.
    pub variants: Vec<VariantTokens>,
}

impl Reporting {
    /// Record each variant's tool-definition tokens in `meta`, and, when some variant
    /// changes something, its details (runs of suites without variants keep the
    /// `run.json` they had).
    pub fn note_variants(&self, meta: &mut RunMeta) {
        meta.tool_definition_tokens = self
            .variants
            .iter()
            .map(|v| (v.variant.clone(), v.tool_definition_tokens))
            .collect();
        if self
            .variants
            .iter()
            .any(|v| v.system_prompt_tokens.is_some() || !v.changes.is_empty())
        {
            meta.variant_details = self
                .variants
                .iter()
                .map(|v| {
                    let details = report::VariantDetails {
                        system_prompt: v
                            .system_prompt_tokens
                            .and_then(|_| self.suite.system_in(&v.variant).map(str::to_string)),
                        system_prompt_tokens: v.system_prompt_tokens,
                        changes: v.changes.clone(),
                    };
                    (v.variant.clone(), details)
                })
                .collect();
        }
    }

    /// The report of `records` (in plan order) under `meta`; `stopped` says why the run
    /// did not run every planned trial.
    pub fn report(
        &self,
        meta: RunMeta,
        records: Vec<TrialRecord>,
        stopped: Option<String>,
    ) -> RunReport {
        let mut summary = Summary::build(
            &self.suite.name,
            &self.cells,
            &self.variants,
            &records,
            &self.suite.thresholds,
        );
        summary.stopped = stopped;
        summary.selection = meta.selection.as_ref().and_then(Selection::describe);
        RunReport {
            meta,
            trials: records,
            summary,
        }
    }
}

/// What [`ReportWriter::start`] needs.
pub(super) struct ReportWriterParams {
    /// The run directory.
    pub dir: PathBuf,
    /// The `--format` list (`terminal` is skipped; with no file format nothing is written).
    pub formats: Vec<String>,
    /// The suite.
    pub suite: Arc<Suite>,
    /// The matrix's cells, as [`Reporting::cells`].
    pub cells: Vec<(String, String, String)>,
    /// `run.json` as written at the start of the run.
    pub meta: RunMeta,
    /// How many trials the plan holds (one slot each, in plan order; the slots are
    /// made when the writer starts collecting, and a resumed run's earlier trials come
    /// from the journal then).
    pub planned: usize,
    /// The slot of each trial given to the runner, by its index there.
    pub slot_of: Vec<usize>,
    /// How often, at most, to rewrite the files ([`REFRESH_EVERY`]).
    pub every: Duration,
    /// How long into the run the observer starts handing records over ([`REFRESH_EVERY`]
    /// in a run). Until then it keeps nothing: a run shorter than that costs no copy of
    /// its records, and the first refresh reads what finished before from the journal.
    pub collect_after: Duration,
}

/// What the observer tells the thread that writes.
enum Note {
    /// A trial finished, into this slot (boxed: a record is most of a kilobyte, the
    /// other notes a few words).
    Trial(usize, Box<TrialRecord>),
    /// The variants' tokens were counted (no report is written before).
    Variants(Vec<VariantTokens>),
    /// The observer starts handing records over from now on: read the trials that
    /// finished before from the journal, placed by the plan position of each identity.
    CatchUp(HashMap<TrialId, usize>),
    /// Stop: the run has ended (handles on the thread may outlive the observer, so
    /// the channel closing cannot be the signal).
    Stop,
    /// Write now, if a trial finished since the last write, then answer.
    #[cfg(test)]
    Flush(Sender<()>),
}

/// The observer that refreshes the report files while the run goes on.
pub(super) struct ReportWriter<'p> {
    /// The plan, to place the journal's trials when collecting starts.
    plan: &'p Plan,
    feed: Option<Sender<Note>>,
    slot_of: Vec<usize>,
    worker: Option<std::thread::JoinHandle<Vec<Option<TrialRecord>>>>,
    /// When the observer starts handing records over (see
    /// [`ReportWriterParams::collect_after`]); `None` once it has.
    collect_from: Option<Instant>,
}

/// A handle on a [`ReportWriter`]'s thread, for the thread counting the variants' tokens
/// (and for tests).
#[derive(Clone)]
pub(super) struct ReportFeed(Option<Sender<Note>>);

impl ReportFeed {
    /// Hand over the variants' tokens: refreshes wait for them.
    pub fn variants(&self, variants: &[VariantTokens]) {
        if let Some(feed) = &self.0 {
            let _ = feed.send(Note::Variants(variants.to_vec()));
        }
    }

    /// Write the trials finished so far now (if any finished since the last write), and
    /// wait until written.
    #[cfg(test)]
    pub fn flush(&self) {
        let (done, written) = mpsc::channel();
        if let Some(feed) = &self.0
            && feed.send(Note::Flush(done)).is_ok()
        {
            let _ = written.recv();
        }
    }
}

impl<'p> ReportWriter<'p> {
    /// Start the thread that writes (none when the run writes no report file).
    pub fn start(params: ReportWriterParams, plan: &'p Plan) -> ReportWriter<'p> {
        let slot_of = params.slot_of.clone();
        let collect_from = Some(Instant::now() + params.collect_after);
        let formats: Vec<String> = params
            .formats
            .iter()
            .filter(|f| report::FILE_FORMATS.contains(&f.as_str()))
            .cloned()
            .collect();
        if formats.is_empty() {
            return ReportWriter {
                plan,
                feed: None,
                slot_of,
                worker: None,
                collect_from,
            };
        }
        let (feed, notes) = mpsc::channel();
        let state = Refresh {
            formats,
            ..Refresh::new(params)
        };
        // Should no thread start, the run goes on without refreshes.
        let worker = std::thread::Builder::new()
            .name("reports".into())
            .spawn(move || state.run(notes))
            .ok();
        ReportWriter {
            plan,
            feed: worker.as_ref().map(|_| feed),
            slot_of,
            worker,
            collect_from,
        }
    }

    /// A handle to hand the variants' tokens over from another thread.
    pub fn feed(&self) -> ReportFeed {
        ReportFeed(self.feed.clone())
    }

    /// Stop refreshing: wait for a refresh being written (so it cannot overwrite the
    /// final report) and return what the thread held, to be dropped where it costs
    /// nothing.
    pub fn stop(mut self) -> Vec<Option<TrialRecord>> {
        if let Some(feed) = self.feed.take() {
            let _ = feed.send(Note::Stop);
        }
        self.worker
            .take()
            .and_then(|w| w.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for ReportWriter<'_> {
    /// A run that ends early (an error) lets the thread end too, without waiting for it.
    fn drop(&mut self) {
        if let Some(feed) = self.feed.take() {
            let _ = feed.send(Note::Stop);
        }
    }
}

impl RunObserver for ReportWriter<'_> {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        let RunEvent::TrialFinished { index, record } = event else {
            return;
        };
        let Some(feed) = &self.feed else {
            return;
        };
        if let Some(from) = self.collect_from {
            // Nothing is kept before the first refresh could be due: a short run copies
            // no record. The journal (told before this observer) holds every trial that
            // finished until now, this one included, and the thread reads it back.
            if Instant::now() < from {
                return;
            }
            self.collect_from = None;
            let _ = feed.send(Note::CatchUp(super::run::plan_index(self.plan)));
        }
        if let Some(slot) = self.slot_of.get(*index) {
            let _ = feed.send(Note::Trial(*slot, Box::new((*record).clone())));
        }
    }

    fn may_stop(&self) -> bool {
        false
    }
}

/// The writing thread's state.
struct Refresh {
    dir: PathBuf,
    formats: Vec<String>,
    meta: RunMeta,
    slots: Vec<Option<TrialRecord>>,
    suite: Arc<Suite>,
    cells: Vec<(String, String, String)>,
    /// Known once the variants' tokens are.
    reporting: Option<Reporting>,
    /// How many trials the plan holds.
    planned: usize,
    every: Duration,
    /// Whether the warning on a failed refresh was given.
    warned: bool,
}

impl Refresh {
    fn new(p: ReportWriterParams) -> Refresh {
        Refresh {
            dir: p.dir,
            formats: p.formats,
            meta: p.meta,
            slots: Vec::new(),
            planned: p.planned,
            suite: p.suite,
            cells: p.cells,
            reporting: None,
            every: p.every,
            warned: false,
        }
    }

    /// Take notes until the observer is gone, writing at most every `self.every` while
    /// some trial finished since the last write.
    fn run(mut self, notes: Receiver<Note>) -> Vec<Option<TrialRecord>> {
        let mut last = Instant::now();
        let mut dirty = false;
        loop {
            let ready = dirty && self.reporting.is_some();
            // Checked before waiting: trials finishing faster than the interval must not
            // keep the refresh from ever coming due.
            if ready && due(last, self.every, Instant::now()) {
                self.write();
                last = Instant::now();
                dirty = false;
                continue;
            }
            let note = if ready {
                match notes
                    .recv_timeout((last + self.every).saturating_duration_since(Instant::now()))
                {
                    Ok(note) => note,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match notes.recv() {
                    Ok(note) => note,
                    Err(_) => break,
                }
            };
            match note {
                Note::Trial(slot, record) => {
                    if let Some(s) = self.slots.get_mut(slot) {
                        *s = Some(*record);
                        dirty = true;
                    }
                }
                Note::Variants(variants) => self.know_variants(variants),
                Note::CatchUp(ids) => {
                    self.catch_up(&ids);
                    dirty = true;
                }
                Note::Stop => break,
                #[cfg(test)]
                Note::Flush(written) => {
                    if dirty && self.reporting.is_some() {
                        self.write();
                        last = Instant::now();
                        dirty = false;
                    }
                    let _ = written.send(());
                }
            }
        }
        self.slots
    }

    /// Put the journal's trials into their slots: those that finished before the
    /// observer handed records over (and a resumed run's earlier ones, again). A journal
    /// that cannot be read leaves the slots as they are; the refresh shows what it has.
    fn catch_up(&mut self, ids: &HashMap<TrialId, usize>) {
        self.slots = vec![None; self.planned];
        let Ok(journal) = crate::runner::journal::load(&self.dir.join("trials.jsonl")) else {
            return;
        };
        for record in journal.trials {
            if let Some(&slot) = ids.get(&TrialId::of(&record))
                && let Some(s) = self.slots.get_mut(slot)
            {
                *s = Some(record);
            }
        }
    }

    fn know_variants(&mut self, variants: Vec<VariantTokens>) {
        let reporting = Reporting {
            suite: self.suite.clone(),
            cells: std::mem::take(&mut self.cells),
            variants,
        };
        reporting.note_variants(&mut self.meta);
        self.reporting = Some(reporting);
    }

    /// Write the report of the trials finished so far; a failure is told once and the
    /// run goes on (the report of its end is written, or fails, on its own).
    fn write(&mut self) {
        let Some(reporting) = &self.reporting else {
            return;
        };
        let records: Vec<TrialRecord> = self.slots.iter().flatten().cloned().collect();
        let mut meta = self.meta.clone();
        meta.trials_written = records.len() as u64;
        let stopped = in_progress(records.len(), self.planned, &self.dir);
        let report = reporting.report(meta, records, Some(stopped));
        if let Err(e) = write_staged(&self.dir, &report, &self.formats)
            && !std::mem::replace(&mut self.warned, true)
        {
            warnln!("warning: failed to refresh the reports of the running run: {e}");
        }
    }
}

/// Whether a refresh last written at `last` is due again at `now`.
fn due(last: Instant, every: Duration, now: Instant) -> bool {
    now.saturating_duration_since(last) >= every
}

/// What a partial report says in place of why the run stopped.
fn in_progress(finished: usize, planned: usize, dir: &Path) -> String {
    format!(
        "in progress: {finished} of {planned} trials finished when this report was written; should the run have died, resume it with `toolgauge run --resume {}`",
        dir.display()
    )
}

/// Write `report` into [`STAGING_DIR`] under `dir`, then rename each file into `dir`.
fn write_staged(dir: &Path, report: &RunReport, formats: &[String]) -> Result<(), ReportError> {
    let staging = dir.join(STAGING_DIR);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    std::fs::create_dir_all(&staging).map_err(io(&staging))?;
    for path in report::write_files(&staging, report, formats)? {
        let Some(name) = path.file_name() else {
            continue;
        };
        let to = dir.join(name);
        std::fs::rename(&path, &to).map_err(io(&to))?;
    }
    std::fs::remove_dir(&staging).map_err(io(&staging))
}

#[cfg(test)]
#[path = "report_writer_tests.rs"]
mod tests;
