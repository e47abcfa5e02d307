//! What one case contributes to each metric, so a metric can be computed again over any
//! multiset of cases: the paired bootstrap of `toolgauge compare` resamples cases (a case
//! with all of its repeats) and needs every metric of each resample without scoring a
//! trial twice.
//!
//! A case's [`CaseParts`] hold the numerators and denominators of its rates, its trigger
//! counts, its behaviour confusion matrix, its sums (tokens, cost), its raw timings (for
//! the percentiles) and its repeats (for pass@k). [`Pool::values`] adds the parts of the
//! cases with integer weights (how often a resample drew each) and computes each metric
//! exactly as [`Metrics::of`] does over the same trials; the tests check that the two agree
//! on every metric.

use rustc_hash::FxHashMap;

use super::behaviour::{self, Grid};
use super::metrics::Metrics;
use super::record::{TrialRecord, Verdict};
use super::stats::{pass_at_k, pass_hat_k};
use crate::behaviour::Behaviour;

/// The counts a case contributes, by position in [`CaseParts::counts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    Trials,
    Scored,
    Errors,
    Passed,
    Tp,
    Fp,
    Tn,
    Fn,
    SelNum,
    SelDen,
    ReqPresent,
    ReqTotal,
    ArgsMatched,
    ArgsExpected,
    Invalid,
    Calls,
    Ungrounded,
    GroundChecked,
    Input,
    Output,
    LoopTrials,
    LoopPassed,
    LoopScored,
    Recovered,
    Received,
    WithDuplicates,
    Judged,
    FlowOk,
    FlowChecked,
    Grounded,
    GroundingChecked,
    StreamTrials,
    /// Trials in the behaviour confusion matrix (not a metric's part: it lets sums skip
    /// an empty matrix).
    BehaviourTrials,
}

/// How many [`Count`]s there are.
const COUNTS: usize = Count::BehaviourTrials as usize + 1;

/// The rates among the compared metrics: numerator, denominator, and whether it is a
/// rate of the loop trials (undefined in a set without any).
const RATIOS: &[(&str, Count, Count, bool)] = &[
    ("accuracy", Count::Passed, Count::Scored, false),
    ("error_rate", Count::Errors, Count::Trials, false),
    (
        "tool_selection_accuracy",
        Count::SelNum,
        Count::SelDen,
        false,
    ),
    (
        "param_completeness",
        Count::ReqPresent,
        Count::ReqTotal,
        false,
    ),
    (
        "arg_match_rate",
        Count::ArgsMatched,
        Count::ArgsExpected,
        false,
    ),
    ("invalid_call_rate", Count::Invalid, Count::Calls, false),
    (
        "ungrounded_rate",
        Count::Ungrounded,
        Count::GroundChecked,
        false,
    ),
    ("task_success", Count::LoopPassed, Count::LoopScored, true),
    ("recovery", Count::Recovered, Count::Received, true),
    (
        "duplicate_side_effect_rate",
        Count::WithDuplicates,
        Count::Judged,
        true,
    ),
    (
        "data_flow_accuracy",
        Count::FlowOk,
        Count::FlowChecked,
        true,
    ),
    (
        "grounded_answer_rate",
        Count::Grounded,
        Count::GroundingChecked,
        true,
    ),
];

/// The timings kept as values, for percentiles: latency, time to first token and to the
/// first tool-call byte.
const TIMINGS: usize = 3;

/// The percentile metrics: which timing, which percentile.
const PERCENTILES: &[(&str, usize, f64)] = &[
    ("latency_p50_ms", 0, 50.0),
    ("latency_p95_ms", 0, 95.0),
    ("first_token_p50_ms", 1, 50.0),
    ("first_token_p95_ms", 1, 95.0),
    ("first_tool_byte_p50_ms", 2, 50.0),
    ("first_tool_byte_p95_ms", 2, 95.0),
];

/// What one case (in practice: a case id with its tool_choice, in one cell, all its
/// repeats) contributes to every metric of one side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseParts {
    counts: [u64; COUNTS],
    /// Sum of the priced trials' costs.
    cost: f64,
    /// A scored trial had no usable price (the set's cost is then undefined).
    unpriced: bool,
    /// Latency, time to first token, time to first tool-call byte of the scored trials
    /// that have one, each sorted.
    timings: [Vec<f64>; TIMINGS],
    /// The behaviour confusion matrix of the trials expecting one behaviour.
    grid: Grid,
    /// Scored repeats and passes per (target, variant, tool_choice, stream) of the case,
    /// for pass@k.
    repeats: Vec<(u64, u64)>,
    /// Highest repeat index of a scored trial; `None` without one.
    max_repeat: Option<u32>,
}

impl CaseParts {
    /// The parts of `trials` (one case's trials on one side). Counts are read off
    /// [`Metrics::of`] over the same trials, so they are the metrics' own.
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> CaseParts {
        let trials: Vec<&TrialRecord> = trials.into_iter().collect();
        let m = Metrics::of(trials.iter().copied());
        let mut counts = [0u64; COUNTS];
        let mut set = |c: Count, v: u64| counts[c as usize] = v;
        set(Count::Trials, m.trials);
        set(Count::Scored, m.scored);
        set(Count::Errors, m.errors);
        set(Count::Passed, m.passed);
        set(Count::Tp, m.trigger.tp);
        set(Count::Fp, m.trigger.fp);
        set(Count::Tn, m.trigger.tn);
        set(Count::Fn, m.trigger.fn_);
        let rates = [
            (Count::SelNum, Count::SelDen, &m.tool_selection_accuracy),
            (Count::ReqPresent, Count::ReqTotal, &m.param_completeness),
            (Count::ArgsMatched, Count::ArgsExpected, &m.arg_match_rate),
            (Count::Invalid, Count::Calls, &m.invalid_call_rate),
            (Count::Ungrounded, Count::GroundChecked, &m.ungrounded_rate),
        ];
        for (num, den, r) in rates {
            set(num, r.num);
            set(den, r.den);
        }
        set(Count::Input, m.tokens.input);
        set(Count::Output, m.tokens.output);
        if let Some(l) = &m.loops {
            set(Count::LoopTrials, l.trials);
            let rates = [
                (Count::LoopPassed, Count::LoopScored, &l.task_success),
                (Count::Recovered, Count::Received, &l.recovery),
                (
                    Count::WithDuplicates,
                    Count::Judged,
                    &l.duplicate_side_effect_rate,
                ),
                (Count::FlowOk, Count::FlowChecked, &l.data_flow_accuracy),
                (
                    Count::Grounded,
                    Count::GroundingChecked,
                    &l.grounded_answer_rate,
                ),
            ];
            for (num, den, r) in rates {
                set(num, r.num);
                set(den, r.den);
            }
        }
        if let Some(s) = &m.stream {
            set(Count::StreamTrials, s.trials);
        }
        let grid = m.behaviour.as_ref().map(|b| b.grid()).unwrap_or_default();
        set(Count::BehaviourTrials, grid.iter().flatten().sum());
        // The raw values behind the percentiles, chosen as `Metrics::of` and
        // `StreamMetrics::of` choose them.
        let mut timings: [Vec<f64>; TIMINGS] = Default::default();
        let mut repeats: FxHashMap<(&str, &str, String, bool), (u64, u64)> = FxHashMap::default();
        let mut max_repeat = None;
        for t in trials.iter().filter(|t| t.verdict != Verdict::Error) {
            timings[0].extend(t.latency_ms());
            let timing = t.response.as_ref().and_then(|r| r.stream.as_ref());
            if let Some(s) = timing.filter(|_| t.stream) {
                let ok = |v: &f64| v.is_finite() && *v >= 0.0;
                timings[1].extend(s.first_token_ms.filter(ok));
                timings[2].extend(s.first_tool_byte_ms.filter(ok));
            }
            let key = (
                t.target.as_str(),
                t.variant.as_str(),
                t.tool_choice.to_string(),
                t.stream,
            );
            let e = repeats.entry(key).or_default();
            e.0 += 1;
            e.1 += u64::from(t.passed());
            max_repeat = max_repeat.max(Some(t.repeat));
        }
        for v in &mut timings {
            v.sort_unstable_by(f64::total_cmp);
        }
        let mut repeats: Vec<(u64, u64)> = repeats.into_values().collect();
        repeats.sort_unstable();
        CaseParts {
            counts,
            cost: m.cost_usd.unwrap_or(0.0),
            unpriced: m.scored > 0 && m.cost_usd.is_none(),
            timings,
            grid,
            repeats,
            max_repeat,
        }
    }

    fn count(&self, c: Count) -> u64 {
        self.counts[c as usize]
    }

    /// Whether this case has anything to say about `metric` (a trial in its denominator,
    /// a value of its timing, ...).
    pub fn measures(&self, metric: &str) -> bool {
        if let Some((_, _, den, _)) = RATIOS.iter().find(|r| r.0 == metric) {
            return self.count(*den) > 0;
        }
        if let Some((_, i, _)) = PERCENTILES.iter().find(|p| p.0 == metric) {
            return !self.timings[*i].is_empty();
        }
        match metric {
            "trigger_precision" => self.count(Count::Tp) + self.count(Count::Fp) > 0,
            "trigger_recall" | "miss_rate" => self.count(Count::Tp) + self.count(Count::Fn) > 0,
            "false_call_rate" => self.count(Count::Fp) + self.count(Count::Tn) > 0,
            "trigger_f1" => {
                self.count(Count::Tp) + self.count(Count::Fp) + self.count(Count::Fn) > 0
            }
            "macro_f1" => self.grid.iter().flatten().any(|n| *n > 0),
            "tool_hallucination_rate" => row(&self.grid, Behaviour::CannotAnswer) > 0,
            "answer_hallucination_rate" => row(&self.grid, Behaviour::RequestForInfo) > 0,
            // pass@k needs repeats.
            "pass_at_k" | "pass_hat_k" => self.repeats.iter().any(|(n, _)| *n > 1),
            "cost_usd" | "input_tokens" | "output_tokens" => self.count(Count::Scored) > 0,
            _ => false,
        }
    }

    /// Whether `self` and `other` contribute differently to `metric`: swapping two
    /// cases' sides that contribute alike changes nothing, so only the others can move
    /// a paired statistic.
    pub fn differs(&self, other: &CaseParts, metric: &str) -> bool {
        let counts =
            |p: &CaseParts, cs: &[Count]| cs.iter().map(|c| p.count(*c)).collect::<Vec<_>>();
        if let Some((_, num, den, _)) = RATIOS.iter().find(|r| r.0 == metric) {
            return counts(self, &[*num, *den]) != counts(other, &[*num, *den]);
        }
        if let Some((_, i, _)) = PERCENTILES.iter().find(|p| p.0 == metric) {
            return self.timings[*i] != other.timings[*i];
        }
        use Count::{Fn, Fp, Tn, Tp};
        match metric {
            "trigger_precision" | "trigger_recall" | "miss_rate" | "false_call_rate"
            | "trigger_f1" => counts(self, &[Tp, Fp, Tn, Fn]) != counts(other, &[Tp, Fp, Tn, Fn]),
            "macro_f1" | "tool_hallucination_rate" | "answer_hallucination_rate" => {
                self.grid != other.grid
            }
            "pass_at_k" | "pass_hat_k" => {
                (self.measures(metric) || other.measures(metric))
                    && (&self.repeats, self.max_repeat) != (&other.repeats, other.max_repeat)
            }
            "cost_usd" => (self.cost, self.unpriced) != (other.cost, other.unpriced),
            "input_tokens" => self.count(Count::Input) != other.count(Count::Input),
            "output_tokens" => self.count(Count::Output) != other.count(Count::Output),
            _ => false,
        }
    }
}

fn row(g: &Grid, b: Behaviour) -> u64 {
    g[behaviour::pos(b)].iter().sum()
}

/// The cases of one side, ready to be added up with weights.
#[derive(Debug)]
pub struct Pool<'a> {
    cases: &'a [CaseParts],
    /// Per timing: every value with the index of its case, sorted by value.
    timings: [Vec<(f64, u32)>; TIMINGS],
}

/// The weighted sums of a pool's parts.
struct Sums {
    counts: [u64; COUNTS],
    cost: f64,
    unpriced: bool,
    grid: Grid,
    /// Highest repeat index over the cases drawn.
    max_repeat: Option<u32>,
}

impl<'a> Pool<'a> {
    /// A pool of `cases` (at most `u32::MAX` of them).
    pub fn new(cases: &'a [CaseParts]) -> Pool<'a> {
        let mut timings: [Vec<(f64, u32)>; TIMINGS] = Default::default();
        for (i, c) in cases.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (k, values) in c.timings.iter().enumerate() {
                timings[k].extend(values.iter().map(|v| (*v, i)));
            }
        }
        for t in &mut timings {
            t.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        }
        Pool { cases, timings }
    }

    fn sums(&self, weights: Option<&[u32]>) -> Sums {
        let mut s = Sums {
            counts: [0; COUNTS],
            cost: 0.0,
            unpriced: false,
            grid: [[0; 4]; 4],
            max_repeat: None,
        };
        for (i, c) in self.cases.iter().enumerate() {
            let w = weights.map_or(1, |w| w[i]);
            if w == 0 {
                continue;
            }
            let w64 = u64::from(w);
            for (sum, n) in s.counts.iter_mut().zip(c.counts) {
                *sum = sum.saturating_add(n.saturating_mul(w64));
            }
            s.cost = (s.cost + c.cost * f64::from(w)).min(f64::MAX);
            s.unpriced |= c.unpriced;
            // Most cases expect no behaviour: their matrix adds nothing.
            if c.counts[Count::BehaviourTrials as usize] == 0 {
                s.max_repeat = s.max_repeat.max(c.max_repeat);
                continue;
            }
            for (srow, crow) in s.grid.iter_mut().zip(&c.grid) {
                for (x, n) in srow.iter_mut().zip(crow) {
                    *x += n * w64;
                }
            }
            s.max_repeat = s.max_repeat.max(c.max_repeat);
        }
        s
    }

    /// The nearest-rank 50th and 95th percentiles of one timing over the cases drawn
    /// `weights` times (each value of a case counts as often as its case was drawn), in
    /// one walk over the sorted values.
    fn percentiles(&self, timing: usize, weights: Option<&[u32]>) -> [Option<f64>; 2] {
        let values = &self.timings[timing];
        let w = |case: u32| weights.map_or(1, |w| u64::from(w[case as usize]));
        // The total from the cases' counts, not by walking every value.
        let total: u64 = self
            .cases
            .iter()
            .enumerate()
            .map(|(i, c)| c.timings[timing].len() as u64 * w(i as u32))
            .sum();
        if total == 0 {
            return [None; 2];
        }
        let rank = |q: f64| (((q / 100.0) * total as f64).ceil() as u64).clamp(1, total);
        let ranks = [rank(50.0), rank(95.0)];
        let mut out = [None; 2];
        let (mut seen, mut next) = (0, 0);
        for (v, c) in values {
            seen += w(*c);
            while next < 2 && seen >= ranks[next] {
                out[next] = Some(*v);
                next += 1;
            }
            if next == 2 {
                break;
            }
        }
        out
    }

    /// pass@k and pass^k over the cases drawn, with k the most repeats any of them ran.
    fn consistency(&self, weights: Option<&[u32]>, max_repeat: Option<u32>) -> Option<(f64, f64)> {
        let k = u64::from(max_repeat.filter(|r| *r > 0)?) + 1;
        let (mut at, mut hat, mut cases) = (0.0, 0.0, 0u64);
        for (i, c) in self.cases.iter().enumerate() {
            let w = weights.map_or(1, |w| u64::from(w[i]));
            for (n, passed) in c.repeats.iter().filter(|(n, _)| *n >= k) {
                at += pass_at_k(*n, *passed, k) * w as f64;
                hat += pass_hat_k(*n, *passed, k) * w as f64;
                cases += w;
            }
        }
        Some(if cases == 0 {
            (0.0, 0.0)
        } else {
            (at / cases as f64, hat / cases as f64)
        })
    }

    /// The value of each metric of `names` over the cases, each drawn `weights[i]` times
    /// (once each without weights); `None` where a metric is undefined, as in
    /// [`Metrics::of`] and the loop, behaviour and stream metrics.
    pub fn values(&self, weights: Option<&[u32]>, names: &[&str]) -> Vec<Option<f64>> {
        let s = self.sums(weights);
        let c = |x: Count| s.counts[x as usize];
        let ratio = |num: u64, den: u64| (den > 0).then(|| num as f64 / den as f64);
        let needs_consistency = names.iter().any(|n| n.starts_with("pass_"));
        let consistency = needs_consistency
            .then(|| self.consistency(weights, s.max_repeat))
            .flatten();
        let mut timings: [Option<[Option<f64>; 2]>; TIMINGS] = Default::default();
        names
            .iter()
            .map(|name| {
                if let Some((_, num, den, loop_rate)) = RATIOS.iter().find(|r| r.0 == *name) {
                    // Loop rates are undefined in a set without loop trials.
                    if *loop_rate && c(Count::LoopTrials) == 0 {
                        return None;
                    }
                    return ratio(c(*num), c(*den));
                }
                if let Some((_, i, q)) = PERCENTILES.iter().find(|p| p.0 == *name) {
                    // Stream timings exist only in a set with streamed trials.
                    if *i > 0 && c(Count::StreamTrials) == 0 {
                        return None;
                    }
                    let both = timings[*i].get_or_insert_with(|| self.percentiles(*i, weights));
                    return both[usize::from(*q > 50.0)];
                }
                let (tp, fp, fn_) = (c(Count::Tp), c(Count::Fp), c(Count::Fn));
                let grid_rate = |b: Behaviour, shown: Behaviour| {
                    let r = behaviour::pos(b);
                    ratio(s.grid[r][behaviour::pos(shown)], row(&s.grid, b))
                };
                let any_behaviour = s.grid.iter().flatten().any(|n| *n > 0);
                match *name {
                    "trigger_precision" => ratio(tp, tp + fp),
                    "trigger_recall" => ratio(tp, tp + fn_),
                    "false_call_rate" => ratio(fp, fp + c(Count::Tn)),
                    "miss_rate" => ratio(fn_, tp + fn_),
                    "trigger_f1" => match (ratio(tp, tp + fp), ratio(tp, tp + fn_)) {
                        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
                        (Some(_), Some(_)) => Some(0.0),
                        _ => None,
                    },
                    "macro_f1" => behaviour::macro_f1(&s.grid),
                    "tool_hallucination_rate" if any_behaviour => {
                        grid_rate(Behaviour::CannotAnswer, Behaviour::ToolCall)
                    }
                    "answer_hallucination_rate" if any_behaviour => {
                        grid_rate(Behaviour::RequestForInfo, Behaviour::Direct)
                    }
                    "pass_at_k" => consistency.map(|c| c.0),
                    "pass_hat_k" => consistency.map(|c| c.1),
                    "cost_usd" => (!s.unpriced && c(Count::Scored) > 0).then_some(s.cost),
                    "input_tokens" => Some(c(Count::Input) as f64),
                    "output_tokens" => Some(c(Count::Output) as f64),
                    _ => None,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
