//! The search's test bench: runs wordings on sets of cases through the runner, each
//! trial appended to the search's journal as it finishes, and every trial run once. A
//! wording the search meets again (the current wording in every round, a candidate the
//! proposer repeats, a resumed search) is answered from what the journal holds, not paid
//! twice.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::wording::{Wording, with_variants};
use crate::provider::{Provider, Target, ToolChoice};
use crate::report::progress::{Progress, ProgressMode};
use crate::runner::events::{RunEvent, RunObserver};
use crate::runner::journal::{Journal, trial_id};
use crate::runner::{Plan, RunControl, RunOptions};
use crate::score::TrialRecord;
use crate::score::record::TrialId;
use crate::suite::Suite;

/// Why the bench could not run trials.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The journal could not be written: the search stops rather than lose trials.
    #[error("failed to write the search's journal `{path}`: {source}")]
    Journal {
        /// The journal.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The async runtime did not start.
    #[error("failed to start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// The bench: the suite, the target's cells, and every trial run so far.
pub struct Bench {
    suite: Suite,
    targets: Vec<Target>,
    modes: Vec<ToolChoice>,
    repeats: u32,
    providers: HashMap<String, Arc<dyn Provider>>,
    options: RunOptions,
    journal: Journal,
    journal_path: String,
    done: HashMap<TrialId, TrialRecord>,
    /// The wordings added to the suite so far, by variant name.
    wordings: Vec<(String, Wording)>,
    runtime: Arc<tokio::runtime::Runtime>,
    progress: ProgressMode,
    spent_usd: f64,
}

/// What a bench needs to start.
pub struct BenchSetup {
    /// The suite (held-out cases of another file already added).
    pub suite: Suite,
    /// The target (in each stream mode it runs in).
    pub targets: Vec<Target>,
    /// The tool_choice modes.
    pub modes: Vec<ToolChoice>,
    /// Repeats per trial.
    pub repeats: u32,
    /// The targets' providers, by key.
    pub providers: HashMap<String, Arc<dyn Provider>>,
    /// Concurrency, prices, judge.
    pub options: RunOptions,
    /// The journal, and what it already holds (a resumed search's trials).
    pub journal: Journal,
    /// Its path, for errors.
    pub journal_path: String,
    /// Trials already run.
    pub done: Vec<TrialRecord>,
    /// The runtime trials (and the proposer's requests) run on.
    pub runtime: Arc<tokio::runtime::Runtime>,
    /// How progress shows.
    pub progress: ProgressMode,
}

impl Bench {
    /// A bench from `setup`.
    pub fn new(setup: BenchSetup) -> Bench {
        let spent_usd = setup.done.iter().filter_map(|t| t.cost_usd).sum();
        let done = setup.done.into_iter().map(|t| (trial_id(&t), t)).collect();
        Bench {
            suite: setup.suite,
            targets: setup.targets,
            modes: setup.modes,
            repeats: setup.repeats,
            providers: setup.providers,
            options: setup.options,
            journal: setup.journal,
            journal_path: setup.journal_path,
            done,
            wordings: Vec::new(),
            runtime: setup.runtime,
            progress: setup.progress,
            spent_usd,
        }
    }

    /// The suite as loaded.
    pub fn suite(&self) -> &Suite {
        &self.suite
    }

    /// What the trials run so far cost, in USD (those a resumed search found included).
    pub fn spent_usd(&self) -> f64 {
        self.spent_usd
    }

    /// Add `wording` as variant `name` (a name already added keeps its first wording:
    /// the search names each distinct wording once).
    pub fn add(&mut self, name: &str, wording: &Wording) {
        if !self.wordings.iter().any(|(n, _)| n == name) {
            self.wordings.push((name.to_string(), wording.clone()));
        }
    }

    /// Forget the trials of `variant` the journal held (a resumed search whose variant
    /// of that name is now worded otherwise).
    pub fn forget(&mut self, variant: &str) {
        self.done.retain(|id, _| id.variant != variant);
    }

    /// The records of `variants` on the cases `selected` marks (by index into the
    /// suite's cases), running the trials not run yet. Stops early (with the trials
    /// that finished) when `stop` says so between trials.
    pub fn evaluate(
        &mut self,
        variants: &[&str],
        selected: &[bool],
        label: &str,
        stop: &dyn Fn(f64) -> bool,
    ) -> Result<Vec<TrialRecord>, BenchError> {
        let suite = Arc::new(with_variants(&self.suite, &self.wordings));
        let names: Vec<String> = variants.iter().map(|v| v.to_string()).collect();
        let mut plan = Plan::new(suite, &self.targets, &names, &self.modes, self.repeats);
        plan.restrict(Some(selected.to_vec()), None);
        let all = plan.trials();
        let todo: Vec<_> = all
            .iter()
            .copied()
            .filter(|t| !self.done.contains_key(&plan.identity(*t)))
            .collect();
        if !todo.is_empty() {
            let control = Arc::new(RunControl::default());
            let mut writer = Writer {
                journal: &mut self.journal,
                error: None,
                spent: self.spent_usd,
                stop,
            };
            let mut progress = Progress::new(self.progress, label, todo.len() as u64, &[]);
            let mut view = View(&mut progress);
            let finished = self.runtime.block_on(crate::runner::execute(
                &plan,
                todo,
                &self.providers,
                &self.options,
                &control,
                &mut [&mut writer, &mut view],
            ));
            progress.finish();
            if let Some(source) = writer.error {
                return Err(BenchError::Journal {
                    path: self.journal_path.clone(),
                    source,
                });
            }
            for (_, record) in finished {
                self.spent_usd += record.cost_usd.unwrap_or(0.0);
                self.done.insert(trial_id(&record), record);
            }
        }
        Ok(all
            .iter()
            .filter_map(|t| self.done.get(&plan.identity(*t)).cloned())
            .collect())
    }

    /// The journal's path.
    pub fn journal_path(&self) -> &Path {
        Path::new(&self.journal_path)
    }
}

/// Appends each finished trial to the journal and stops the run once `stop` says the
/// cost so far is too much.
struct Writer<'a> {
    journal: &'a mut Journal,
    error: Option<std::io::Error>,
    spent: f64,
    stop: &'a dyn Fn(f64) -> bool,
}

impl RunObserver for Writer<'_> {
    fn on_event(&mut self, event: &RunEvent<'_>, control: &RunControl) {
        if let RunEvent::TrialFinished { record, .. } = event {
            if self.error.is_none()
                && let Err(e) = self.journal.append(record)
            {
                self.error = Some(e);
                control.stop(crate::runner::RunStop::Interrupted);
            }
            self.spent += record.cost_usd.unwrap_or(0.0);
            if (self.stop)(self.spent) {
                control.stop(crate::runner::RunStop::Budget(format!(
                    "--max-cost reached (${:.4} spent)",
                    self.spent
                )));
            }
        }
    }
}

/// Shows the trials as they finish.
struct View<'p>(&'p mut Progress);

impl RunObserver for View<'_> {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        match event {
            RunEvent::TrialFinished { record, .. } => self.0.trial(record),
            RunEvent::RoundFinished { .. } => self.0.round(),
            _ => {}
        }
    }

    fn may_stop(&self) -> bool {
        false
    }
}
