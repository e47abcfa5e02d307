//! Progress while trials run: a bar on a terminal (done/total, ETA, running accuracy,
//! tokens, cost), plain lines when stderr is not a terminal (CI logs), nothing with
//! `--quiet`. Plain lines start only after a couple of seconds, so fast replays print none.

use std::io::Write as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::score::{TrialRecord, Verdict};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// An animated bar (stderr is a terminal).
    Bar,
    /// A line now and then.
    Lines,
    /// Nothing.
    Off,
}

/// Running totals and their display.
pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    scored: u64,
    passed: u64,
    errors: u64,
    spent: Spend,
    rounds: u64,
    started: Instant,
    last_line: Option<Instant>,
}

/// What finished trials spent: tokens (input + output, every round of a loop trial, and
/// the judge model's requests) and cost in USD. The progress display and the run's
/// budget both count with it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Tokens, input and output.
    pub tokens: u64,
    /// Cost in USD (trials without a price add nothing).
    pub cost: f64,
}

impl Spend {
    /// Add what `t` spent.
    pub fn add(&mut self, t: &TrialRecord) {
        if let Some(u) = t.usage() {
            // Saturating: budget accounting must never wrap around.
            self.tokens = self
                .tokens
                .saturating_add(u.input_tokens.saturating_add(u.output_tokens));
        }
        // A cost that is no price (only an edited journal has one) adds nothing.
        if let Some(c) = t.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            self.cost = (self.cost + c).min(f64::MAX);
        }
        // The judge model's requests are spent by the run too (`--max-cost`/`--max-tokens`).
        for j in &t.judge {
            if let Some(u) = j.usage {
                self.tokens = self
                    .tokens
                    .saturating_add(u.input_tokens.saturating_add(u.output_tokens));
            }
            if let Some(c) = j.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
                self.cost = (self.cost + c).min(f64::MAX);
            }
        }
    }
}

/// Plain lines: the first after this long, then at most one per interval.
const FIRST_LINE_AFTER: Duration = Duration::from_secs(2);
const LINE_INTERVAL: Duration = Duration::from_secs(5);

impl Progress {
    /// Progress over `total` trials of which `already` are done (a resumed run).
    pub fn new(mode: ProgressMode, label: &str, total: u64, already: &[TrialRecord]) -> Progress {
        let bar = (mode == ProgressMode::Bar).then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} eta {eta} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_prefix(label.to_string());
            b
        });
        let mut p = Progress {
            mode,
            bar,
            total,
            done: 0,
            scored: 0,
            passed: 0,
            errors: 0,
            spent: Spend::default(),
            rounds: 0,
            started: Instant::now(),
            last_line: None,
        };
        for t in already {
            p.count(t);
        }
        if let Some(b) = &p.bar {
            b.set_position(p.done);
        }
        p
    }

    fn count(&mut self, t: &TrialRecord) {
        self.done += 1;
        match t.verdict {
            Verdict::Pass => {
                self.scored += 1;
                self.passed += 1;
            }
            Verdict::Fail => self.scored += 1,
            Verdict::Error => self.errors += 1,
        }
        self.spent.add(t);
    }

    /// What the finished trials spent so far.
    pub fn spent(&self) -> Spend {
        self.spent
    }

    fn message(&self) -> String {
        let acc = if self.scored > 0 {
            format!(
                "acc {:.0}%",
                100.0 * self.passed as f64 / self.scored as f64
            )
        } else {
            "acc -".to_string()
        };
        let errors = if self.errors > 0 {
            format!(" · {} errors", self.errors)
        } else {
            String::new()
        };
        // Rounds of loop trials, counted as they finish (a long episode shows life).
        let rounds = if self.rounds > 0 {
            format!(" · {} rounds", self.rounds)
        } else {
            String::new()
        };
        format!(
            "{acc} · {} tok · ${:.4}{rounds}{errors}",
            self.spent.tokens, self.spent.cost
        )
    }

    /// Count a finished round of a loop trial.
    pub fn round(&mut self) {
        self.rounds += 1;
        if let Some(b) = &self.bar {
            b.set_message(self.message());
        }
    }

    /// Count a finished trial and update the display.
    pub fn trial(&mut self, t: &TrialRecord) {
        self.count(t);
        match self.mode {
            ProgressMode::Bar => {
                if let Some(b) = &self.bar {
                    b.set_position(self.done);
                    b.set_message(self.message());
                }
            }
            ProgressMode::Lines => {
                let now = Instant::now();
                let due = match self.last_line {
                    None => now.duration_since(self.started) >= FIRST_LINE_AFTER,
                    Some(last) => now.duration_since(last) >= LINE_INTERVAL,
                };
                if due {
                    self.last_line = Some(now);
                    // Never panics on a closed stderr (the run goes on).
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "progress: {}/{} trials, {}",
                        self.done,
                        self.total,
                        self.message()
                    );
                }
            }
            ProgressMode::Off => {}
        }
    }

    /// Remove the bar (the summary follows).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Response, ToolChoice, Usage};
    use crate::suite::CaseKind;

    fn record(verdict: Verdict, tokens: (u64, u64), cost: Option<f64>) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: "a".into(),
            kind: CaseKind::ShouldCall,
            tags: vec![],
            target: "t:m".into(),
            variant: "v".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: vec![],
            response: (verdict != Verdict::Error).then(|| Response {
                usage: Some(Usage {
                    input_tokens: tokens.0,
                    output_tokens: tokens.1,
                    estimated: false,
                    ..Default::default()
                }),
                ..Response::default()
            }),
            checks: None,
            verdict,
            reasons: vec![],
            cost_usd: cost,
            distractors: None,
            episode: None,
        }
    }

    #[test]
    fn totals_count_resumed_and_new_trials() {
        let before = [record(Verdict::Pass, (100, 10), Some(0.001))];
        let mut p = Progress::new(ProgressMode::Off, "s", 4, &before);
        p.trial(&record(Verdict::Fail, (200, 20), Some(0.002)));
        p.trial(&record(Verdict::Error, (0, 0), None));
        assert_eq!(p.spent().tokens, 330);
        assert!((p.spent().cost - 0.003).abs() < 1e-12);
        // 1 pass of 2 scored; the error is counted apart.
        assert_eq!(p.message(), "acc 50% · 330 tok · $0.0030 · 1 errors");
    }
}
