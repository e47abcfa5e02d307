//! Run events: what happens while trials run, told to every observer of the run.
//!
//! [`super::execute`] tells each [`RunObserver`] (the journal, the progress display, the
//! budget, ...) every event in order: a trial started, each round of a loop trial
//! finished, a trial finished (with its record), the run was told to stop. Observers
//! are independent of one another and of the runner: adding one (an exporter that
//! streams, a live view) touches neither the runner nor the other observers.
//!
//! Order: for one trial, `TrialStarted` comes first, then its `RoundFinished` events in
//! round order, then `TrialFinished`. Events of different trials interleave (trials run
//! concurrently). `Stopped` comes once, at the first event after the run was stopped.

use super::{RunControl, RunStop};
use crate::provider::Usage;
use crate::score::TrialRecord;

/// Something that happened while the run went on.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The trial `index` (of the trials given to `execute`) was started.
    TrialStarted {
        /// Index of the trial.
        index: usize,
    },
    /// A round of the loop trial `index` finished: its answer came and its calls were
    /// answered (or a limit stopped them).
    RoundFinished {
        /// Index of the trial.
        index: usize,
        /// 1-based number of the round.
        round: usize,
        /// Calls the model made in the round.
        calls: usize,
        /// Of the answered calls, those answered with an error.
        errors: usize,
        /// The round's usage, when the provider reported it.
        usage: Option<Usage>,
    },
    /// The trial `index` finished: scored, or an error saying why.
    TrialFinished {
        /// Index of the trial.
        index: usize,
        /// Its record.
        record: &'a TrialRecord,
    },
    /// The run was stopped: no new trial starts; those in flight finish.
    Stopped {
        /// Why.
        reason: &'a RunStop,
    },
}

/// Receives every event of a run, in order.
pub trait RunObserver {
    /// Handle `event`. `control` lets an observer stop the run (a budget).
    fn on_event(&mut self, event: &RunEvent<'_>, control: &RunControl);

    /// Whether this observer may stop the run when told a trial finished (a budget with
    /// a limit). While any observer may, a finished trial's slot goes to the next trial
    /// only after every observer was told, so a stop it causes holds back the very next
    /// trial. An observer that never stops the run says `false`: the next request then
    /// goes out as soon as an answer is in, before the answer is scored and told.
    fn may_stop(&self) -> bool {
        true
    }
}

/// What a trial's task tells the driver while it runs (owned, sent across tasks).
#[derive(Debug)]
pub(super) enum Note {
    /// The trial started.
    Started(usize),
    /// A round of a loop trial finished.
    Round {
        index: usize,
        round: usize,
        calls: usize,
        errors: usize,
        usage: Option<Usage>,
    },
}

/// Tells observers the events of one run, and `Stopped` once.
pub(super) struct Fanout<'o, 'a> {
    observers: &'o mut [&'a mut dyn RunObserver],
    stop_told: bool,
}

impl<'o, 'a> Fanout<'o, 'a> {
    pub(super) fn new(observers: &'o mut [&'a mut dyn RunObserver]) -> Self {
        Fanout {
            observers,
            stop_told: false,
        }
    }

    /// Whether some observer may stop the run on a finished trial
    /// ([`RunObserver::may_stop`]).
    pub(super) fn paces(&self) -> bool {
        self.observers.iter().any(|o| o.may_stop())
    }

    /// Tell every observer `event`, then `Stopped` if the run has just been stopped.
    pub(super) fn tell(&mut self, event: &RunEvent<'_>, control: &RunControl) {
        for o in self.observers.iter_mut() {
            o.on_event(event, control);
        }
        self.tell_stop(control);
    }

    /// Tell `Stopped` once, if the run was stopped.
    pub(super) fn tell_stop(&mut self, control: &RunControl) {
        if self.stop_told || !control.is_stopped() {
            return;
        }
        self.stop_told = true;
        if let Some(reason) = control.reason() {
            let event = RunEvent::Stopped { reason: &reason };
            for o in self.observers.iter_mut() {
                o.on_event(&event, control);
            }
        }
    }

    /// Tell the event a task's note stands for.
    pub(super) fn note(&mut self, note: Note, control: &RunControl) {
        let event = match note {
            Note::Started(index) => RunEvent::TrialStarted { index },
            Note::Round {
                index,
                round,
                calls,
                errors,
                usage,
            } => RunEvent::RoundFinished {
                index,
                round,
                calls,
                errors,
                usage,
            },
        };
        self.tell(&event, control);
    }
}
