//! Loop metrics: what the trials of a set that ran as episodes (tool loops) add to its
//! metrics: task success, rounds and calls per task, why loops stopped, recovery per
//! error kind, duplicate side effects, data flow, grounded answers, input tokens per
//! round, model against tool time, and pass@k / pass^k for every k up to the repeats.
//!
//! Every definition is in `docs/metrics.md` ("Loop metrics"); the unit tests compute
//! each one by hand on a small example. The figures come from the trial records'
//! [`EpisodeRecord`]s (rounds, stop reason) and the
//! judge's facts ([`EpisodeChecks`](crate::judge::EpisodeChecks)).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::record::{EpisodeRecord, TrialRecord, Verdict};
use super::stats::{Rate, pass_at_k, pass_hat_k, percentile};
use crate::suite::trajectory::StopReason;
use crate::util::limits::MAX_REPEATS;

/// A per-task count (rounds, tool calls) over the scored loop trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PerTask {
    /// Mean per trial.
    pub mean: Option<f64>,
    /// Nearest-rank median.
    pub p50: Option<f64>,
    /// Nearest-rank 95th percentile.
    pub p95: Option<f64>,
    /// Largest.
    pub max: Option<u64>,
}

impl PerTask {
    fn of(values: &[u64]) -> PerTask {
        let mut v: Vec<f64> = values.iter().map(|&x| x as f64).collect();
        PerTask {
            mean: (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
            p50: percentile(&mut v, 50.0),
            p95: percentile(&mut v, 95.0),
            max: values.iter().copied().max(),
        }
    }
}

/// How many scored loop trials stopped for each reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StopCounts {
    /// The model answered in text after the last scripted user turn.
    pub answered: u64,
    /// The `max_rounds` limit stopped the loop.
    pub max_rounds: u64,
    /// The `max_tool_calls` limit stopped the loop.
    pub max_tool_calls: u64,
    /// The same call was repeated more than `max_identical_calls` times.
    pub repeated_call: u64,
}

impl StopCounts {
    fn add(&mut self, stop: StopReason) {
        let n = match stop {
            StopReason::Answered => &mut self.answered,
            StopReason::MaxRounds => &mut self.max_rounds,
            StopReason::MaxToolCalls => &mut self.max_tool_calls,
            StopReason::RepeatedCall => &mut self.repeated_call,
        };
        *n += 1;
    }

    /// The counts by name, in the order of the limits (`answered` first).
    pub fn named(&self) -> [(&'static str, u64); 4] {
        [
            (StopReason::Answered.as_str(), self.answered),
            (StopReason::MaxRounds.as_str(), self.max_rounds),
            (StopReason::MaxToolCalls.as_str(), self.max_tool_calls),
            (StopReason::RepeatedCall.as_str(), self.repeated_call),
        ]
    }
}

/// Recovery from the errors of one kind: recovered / errors received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recovery {
    /// Every error of the kind.
    pub all: Rate,
    /// The errors a fault rule injected (`fail:`).
    pub injected: Rate,
    /// The others (a mock's `error:`, an approval denial).
    pub not_injected: Rate,
}

/// Mean input tokens of one round number over the trials that played it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundTokens {
    /// Round number, from 1.
    pub round: u32,
    /// Scored loop trials that played this round with a usage.
    pub trials: u64,
    /// Mean input tokens of the round over those trials.
    pub mean: f64,
}

/// Where a loop's time went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopTime {
    /// Total time waiting for the model (every round's response latency), ms.
    pub model_ms: f64,
    /// Total time answering tool calls (every round's wall time of its calls), ms.
    pub tool_ms: f64,
    /// tool_ms / (model_ms + tool_ms); undefined when both are 0.
    pub tool_share: Option<f64>,
}

/// pass@k and pass^k of the loop cases for one k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PassK {
    /// k.
    pub k: u32,
    /// Cases with at least k scored repeats (the others are left out for this k).
    pub cases: u64,
    /// Mean over those cases of pass@k; undefined when there are none.
    pub pass_at_k: Option<f64>,
    /// Mean over those cases of pass^k; undefined when there are none.
    pub pass_hat_k: Option<f64>,
}

/// The metrics of the loop trials of a set (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopMetrics {
    /// Loop trials in the set.
    pub trials: u64,
    /// Loop trials that ended with a verdict.
    pub scored: u64,
    /// Loop trials that ended with an error.
    pub errors: u64,
    /// Loop trials that passed.
    pub passed: u64,
    /// passed / scored.
    pub task_success: Rate,
    /// Rounds played per scored loop trial.
    pub rounds: PerTask,
    /// Tool calls the model made per scored loop trial (a limit may have stopped the
    /// loop before the last round's calls ran).
    pub tool_calls: PerTask,
    /// Why the scored loop trials stopped.
    pub stop: StopCounts,
    /// Recovered errors / errors received, every kind together.
    pub recovery: Rate,
    /// The same by error kind (`rate_limit`, `not_found`, `denied`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub recovery_by_kind: BTreeMap<String, Recovery>,
    /// Judged loop trials with at least one duplicate side effect / judged loop trials.
    pub duplicate_side_effect_rate: Rate,
    /// Duplicate side effects in all.
    pub duplicate_side_effects: u64,
    /// Data flows that held / data flows checked (trajectory steps with `from:`).
    pub data_flow_accuracy: Rate,
    /// Grounded final answers / final answers checked (`final.grounded`).
    pub grounded_answer_rate: Rate,
    /// Mean input tokens of round 1, 2, 3, ... (how the conversation grows).
    pub input_tokens_per_round: Vec<RoundTokens>,
    /// Mean input tokens over every round with a usage.
    pub input_tokens_per_round_mean: Option<f64>,
    /// Model time against tool time.
    pub time: LoopTime,
    /// pass@k and pass^k for k = 1..repeats, when trials were repeated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_k: Vec<PassK>,
}

/// The loop rates a threshold or a comparison may name, in report order.
pub const LOOP_METRICS: &[&str] = &[
    "task_success",
    "recovery",
    "duplicate_side_effect_rate",
    "data_flow_accuracy",
    "grounded_answer_rate",
];

/// The tool calls the model made in an episode, over every round (including calls a
/// limit stopped before they ran; [`EpisodeRecord::tool_calls`] counts the answered ones).
pub fn calls_made(e: &EpisodeRecord) -> u64 {
    e.rounds
        .iter()
        .map(|r| r.response.tool_calls.len() as u64)
        .sum()
}

/// Add `ms` to `sum` when it is a time at all: a negative or non-finite latency (only an
/// edited journal has one) must not turn a total negative or NaN.
fn add_ms(sum: &mut f64, ms: f64) {
    if ms.is_finite() && ms >= 0.0 {
        *sum = (*sum + ms).min(f64::MAX);
    }
}

#[derive(Default)]
struct Acc {
    trials: u64,
    scored: u64,
    errors: u64,
    passed: u64,
    rounds: Vec<u64>,
    calls: Vec<u64>,
    stop: StopCounts,
    /// Per kind: (recovered, errors) injected and not.
    kinds: BTreeMap<String, [(u64, u64); 2]>,
    judged: u64,
    with_duplicates: u64,
    duplicates: u64,
    flow_ok: u64,
    flow_checked: u64,
    grounded: u64,
    grounding_checked: u64,
    /// Per round index: (trials, input tokens).
    per_round: Vec<(u64, u64)>,
    model_ms: f64,
    tool_ms: f64,
}

impl LoopMetrics {
    /// The loop metrics of `trials` (single-turn ones are skipped); `None` when none of
    /// them is a loop trial.
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Option<LoopMetrics> {
        let mut a = Acc::default();
        let mut by_case: HashMap<(&str, &str, String, &str), (u64, u64)> = HashMap::new();
        let mut max_repeat = 0;
        for t in trials {
            let Some(e) = &t.episode else { continue };
            a.trials += 1;
            if t.verdict == Verdict::Error {
                a.errors += 1;
                continue;
            }
            a.scored += 1;
            let passed = t.passed();
            a.passed += u64::from(passed);
            // A run never has more repeats; a larger index only comes from an edited
            // journal and must not size the list of k.
            if t.repeat < MAX_REPEATS {
                max_repeat = max_repeat.max(t.repeat);
                let c = by_case
                    .entry((
                        t.target.as_str(),
                        t.variant.as_str(),
                        t.tool_choice.to_string(),
                        t.case_id.as_str(),
                    ))
                    .or_default();
                c.0 += 1;
                c.1 += u64::from(passed);
            }
            a.rounds.push(e.rounds.len() as u64);
            a.calls.push(calls_made(e));
            if let Some(s) = e.stop {
                a.stop.add(s);
            }
            for (i, r) in e.rounds.iter().enumerate() {
                add_ms(&mut a.model_ms, r.response.latency_ms);
                add_ms(&mut a.tool_ms, r.tool_ms);
                if let Some(u) = r.response.usage {
                    if a.per_round.len() <= i {
                        a.per_round.resize(i + 1, (0, 0));
                    }
                    let slot = &mut a.per_round[i];
                    slot.0 += 1;
                    slot.1 = slot.1.saturating_add(u.input_tokens);
                }
            }
            let Some(c) = &e.checks else { continue };
            a.judged += 1;
            a.duplicates += u64::from(c.duplicate_side_effects);
            a.with_duplicates += u64::from(c.duplicate_side_effects > 0);
            if let Some(s) = &c.steps {
                a.flow_ok += u64::from(s.data_flow_ok);
                a.flow_checked += u64::from(s.data_flow_checked);
            }
            if let Some(g) = c.grounded {
                a.grounding_checked += 1;
                a.grounded += u64::from(g);
            }
            for f in &c.errors {
                let slot =
                    &mut a.kinds.entry(f.kind.clone()).or_default()[usize::from(!f.injected)];
                slot.0 += u64::from(f.recovered);
                slot.1 += 1;
            }
        }
        if a.trials == 0 {
            return None;
        }
        let (recovered, received) = a
            .kinds
            .values()
            .flatten()
            .fold((0, 0), |(r, n), (x, y)| (r + x, n + y));
        let recovery_by_kind = a
            .kinds
            .iter()
            .map(|(kind, [inj, not])| {
                (
                    kind.clone(),
                    Recovery {
                        all: Rate::new(inj.0 + not.0, inj.1 + not.1),
                        injected: Rate::new(inj.0, inj.1),
                        not_injected: Rate::new(not.0, not.1),
                    },
                )
            })
            .collect();
        let input_tokens_per_round: Vec<RoundTokens> = a
            .per_round
            .iter()
            .enumerate()
            .filter(|(_, (n, _))| *n > 0)
            .map(|(i, (n, sum))| RoundTokens {
                round: u32::try_from(i + 1).unwrap_or(u32::MAX),
                trials: *n,
                mean: *sum as f64 / *n as f64,
            })
            .collect();
        let (rounds_with_usage, tokens) = a
            .per_round
            .iter()
            .fold((0u64, 0f64), |(n, s), (k, sum)| (n + k, s + *sum as f64));
        let total_ms = a.model_ms + a.tool_ms;
        Some(LoopMetrics {
            trials: a.trials,
            scored: a.scored,
            errors: a.errors,
            passed: a.passed,
            task_success: Rate::new(a.passed, a.scored),
            rounds: PerTask::of(&a.rounds),
            tool_calls: PerTask::of(&a.calls),
            stop: a.stop,
            recovery: Rate::new(recovered, received),
            recovery_by_kind,
            duplicate_side_effect_rate: Rate::new(a.with_duplicates, a.judged),
            duplicate_side_effects: a.duplicates,
            data_flow_accuracy: Rate::new(a.flow_ok, a.flow_checked),
            grounded_answer_rate: Rate::new(a.grounded, a.grounding_checked),
            input_tokens_per_round,
            input_tokens_per_round_mean: (rounds_with_usage > 0)
                .then(|| tokens / rounds_with_usage as f64),
            time: LoopTime {
                model_ms: a.model_ms,
                tool_ms: a.tool_ms,
                tool_share: (total_ms > 0.0).then(|| a.tool_ms / total_ms),
            },
            pass_k: pass_k(&by_case, max_repeat),
        })
    }
}

impl LoopMetrics {
    /// The value of a loop rate of [`LOOP_METRICS`], if defined.
    pub fn value(&self, name: &str) -> Option<f64> {
        match name {
            "task_success" => self.task_success.value,
            "recovery" => self.recovery.value,
            "duplicate_side_effect_rate" => self.duplicate_side_effect_rate.value,
            "data_flow_accuracy" => self.data_flow_accuracy.value,
            "grounded_answer_rate" => self.grounded_answer_rate.value,
            _ => None,
        }
    }
}

/// pass@k and pass^k for k = 1..=max_repeat + 1, each over the cases with at least k
/// scored repeats; empty without repeats.
fn pass_k<K>(by_case: &HashMap<K, (u64, u64)>, max_repeat: u32) -> Vec<PassK> {
    if max_repeat == 0 {
        return Vec::new();
    }
    (1..=max_repeat + 1)
        .map(|k| {
            let k64 = u64::from(k);
            let mut full: Vec<(u64, u64)> = by_case
                .values()
                .copied()
                .filter(|(n, _)| *n >= k64)
                .collect();
            // Summed in a fixed order, so the same trials give the same bits.
            full.sort_unstable();
            let cases = full.len() as u64;
            let mean = |f: fn(u64, u64, u64) -> f64| {
                (cases > 0)
                    .then(|| full.iter().map(|(n, c)| f(*n, *c, k64)).sum::<f64>() / cases as f64)
            };
            PassK {
                k,
                cases,
                pass_at_k: mean(pass_at_k),
                pass_hat_k: mean(pass_hat_k),
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
