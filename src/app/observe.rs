//! The observers of `toolgauge run` ([`crate::runner::RunObserver`]): the journal, the
//! progress display and the budget, each told every run event on its own.

use crate::report::progress::{Progress, Spend};
use crate::runner::journal::Journal;
use crate::runner::{RunControl, RunEvent, RunObserver, RunStop};
use crate::score::TrialRecord;

/// Appends each finished trial to the journal; the first write error is kept (the run
/// goes on, and fails as incomplete at its end).
pub(super) struct JournalWriter {
    pub journal: Journal,
    pub error: Option<std::io::Error>,
}

impl RunObserver for JournalWriter {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        if let RunEvent::TrialFinished { record, .. } = event
            && self.error.is_none()
            && let Err(e) = self.journal.append(record)
        {
            self.error = Some(e);
        }
    }

    fn may_stop(&self) -> bool {
        false
    }
}

/// Shows progress: a bar or lines, counting trials (and rounds of loop trials).
pub(super) struct ProgressView<'p>(pub &'p mut Progress);

impl RunObserver for ProgressView<'_> {
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

/// Stops the run once `--max-cost` or `--max-tokens` is exceeded by the finished
/// trials (those of a resumed run's earlier part included).
pub(super) struct Budget {
    max_cost: Option<f64>,
    max_tokens: Option<u64>,
    spent: Spend,
}

impl Budget {
    /// A budget of `max_cost` USD and `max_tokens` tokens, `already` spent by earlier
    /// trials of the run.
    pub fn new(max_cost: Option<f64>, max_tokens: Option<u64>, already: &[TrialRecord]) -> Self {
        let mut spent = Spend::default();
        for t in already {
            spent.add(t);
        }
        Budget {
            max_cost,
            max_tokens,
            spent,
        }
    }
}

impl RunObserver for Budget {
    fn on_event(&mut self, event: &RunEvent<'_>, control: &RunControl) {
        let RunEvent::TrialFinished { record, .. } = event else {
            return;
        };
        self.spent.add(record);
        let Spend { tokens, cost } = self.spent;
        if let Some(max) = self.max_cost
            && cost > max
        {
            control.stop(RunStop::Budget(format!(
                "--max-cost ${max} reached (${cost:.4})"
            )));
        }
        if let Some(max) = self.max_tokens
            && tokens > max
        {
            control.stop(RunStop::Budget(format!(
                "--max-tokens {max} reached ({tokens})"
            )));
        }
    }

    fn may_stop(&self) -> bool {
        self.max_cost.is_some() || self.max_tokens.is_some()
    }
}
