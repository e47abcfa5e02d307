//! Behaviour metrics (When2Call's view of a set of trials): the 4 × 4 confusion matrix of
//! the behaviour a case expects against the one its answer showed, precision, recall and
//! F1 per behaviour, macro-F1 with a seeded bootstrap interval, and the two hallucination
//! rates with Wilson intervals. `docs/metrics.md` ("Behaviour metrics") states every
//! definition; the tests below compute each one by hand.
//!
//! Only scored trials whose [`BehaviourFacts`](crate::behaviour::BehaviourFacts) name an
//! expected behaviour count. A set without one has no block at all, so summaries of
//! suites that name no behaviour stay as they were.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::record::{TrialRecord, Verdict};
use super::stats::{Rate, percentile};
use crate::behaviour::{Behaviour, ObservedBy};

/// Bootstrap resamples behind the macro-F1 interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 1000;

/// Seed of the bootstrap's ChaCha8 stream: a fixed seed and a portable generator give the
/// same interval on every machine and every run of the same trials.
pub const BOOTSTRAP_SEED: u64 = 13;

/// One value per behaviour, named by its When2Call label (in JSON too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ByBehaviour<T> {
    /// `tool_call`.
    pub tool_call: T,
    /// `request_for_info` (suites say `clarify`).
    pub request_for_info: T,
    /// `cannot_answer`.
    pub cannot_answer: T,
    /// `direct`.
    pub direct: T,
}

impl<T> ByBehaviour<T> {
    /// Build from one value per behaviour.
    pub fn from_fn(mut f: impl FnMut(Behaviour) -> T) -> ByBehaviour<T> {
        ByBehaviour {
            tool_call: f(Behaviour::ToolCall),
            request_for_info: f(Behaviour::RequestForInfo),
            cannot_answer: f(Behaviour::CannotAnswer),
            direct: f(Behaviour::Direct),
        }
    }

    /// The value of `b`.
    pub fn get(&self, b: Behaviour) -> &T {
        match b {
            Behaviour::ToolCall => &self.tool_call,
            Behaviour::RequestForInfo => &self.request_for_info,
            Behaviour::CannotAnswer => &self.cannot_answer,
            Behaviour::Direct => &self.direct,
        }
    }

    /// Every behaviour with its value, in [`Behaviour::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Behaviour, &T)> {
        Behaviour::ALL.into_iter().map(move |b| (b, self.get(b)))
    }
}

/// The confusion matrix: rows are the expected behaviour, columns the observed one
/// (`confusion.cannot_answer.tool_call` = trials that should have said they cannot and
/// called a tool).
pub type Confusion = ByBehaviour<ByBehaviour<u64>>;

/// One behaviour's scores, read off the confusion matrix (one-vs-rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClassScores {
    /// Trials expecting it (its row's sum).
    pub support: u64,
    /// Trials showing it (its column's sum).
    pub predicted: u64,
    /// Trials expecting and showing it (the diagonal cell).
    pub correct: u64,
    /// correct / predicted.
    pub precision: Rate,
    /// correct / support.
    pub recall: Rate,
    /// 2·correct / (support + predicted): the harmonic mean of precision and recall, 0
    /// when either is 0 or undefined while the other side is not empty; undefined when
    /// the behaviour was neither expected nor shown.
    pub f1: Option<f64>,
}

/// What the bootstrap resampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BootstrapUnit {
    /// Each trial (no case was repeated).
    Trial,
    /// Each case in its cell, with all of its repeats (repeats of a case are not
    /// independent samples).
    Case,
}

/// Macro-F1 with its 95% bootstrap percentile interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MacroF1 {
    /// The mean F1 over the behaviours some trial expected.
    pub value: Option<f64>,
    /// The 2.5th percentile (nearest rank) of the resampled macro-F1s.
    pub low: Option<f64>,
    /// The 97.5th percentile (nearest rank) of the resampled macro-F1s.
    pub high: Option<f64>,
    /// The behaviours averaged over (those with `support` > 0), in report order.
    pub behaviours: Vec<String>,
    /// What was resampled.
    pub unit: BootstrapUnit,
    /// How many units there were.
    pub units: u64,
    /// How many resamples were drawn ([`BOOTSTRAP_RESAMPLES`]).
    pub resamples: u32,
}

/// Who decided the observed behaviour of the counted trials.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DecidedBy {
    /// A tool call was made.
    pub call: u64,
    /// The built-in classifier labelled the text answer.
    pub classifier: u64,
    /// The judge model labelled it.
    pub judge: u64,
}

/// The behaviour metrics of a set of trials (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BehaviourMetrics {
    /// Scored trials whose case expects one behaviour: the matrix's total.
    pub trials: u64,
    /// Rows expected, columns observed.
    pub confusion: Confusion,
    /// Precision, recall and F1 of each behaviour.
    pub scores: ByBehaviour<ClassScores>,
    /// Mean F1 over the expected behaviours, with its bootstrap interval.
    pub macro_f1: MacroF1,
    /// Trials expecting `cannot_answer` (no tool fits) that called a tool, over trials
    /// expecting `cannot_answer`.
    pub tool_hallucination_rate: Rate,
    /// Trials expecting `request_for_info` (information missing) that answered directly,
    /// over trials expecting `request_for_info`.
    pub answer_hallucination_rate: Rate,
    /// Who decided the observed behaviours.
    pub decided_by: DecidedBy,
}

/// A confusion matrix as plain counts, indexed by position in [`Behaviour::ALL`].
pub type Grid = [[u64; 4]; 4];

/// The row and column of `b` in a [`Grid`].
pub fn pos(b: Behaviour) -> usize {
    match b {
        Behaviour::ToolCall => 0,
        Behaviour::RequestForInfo => 1,
        Behaviour::CannotAnswer => 2,
        Behaviour::Direct => 3,
    }
}

fn row_sum(g: &Grid, r: usize) -> u64 {
    g[r].iter().sum()
}

fn col_sum(g: &Grid, c: usize) -> u64 {
    g.iter().map(|row| row[c]).sum()
}

/// F1 of behaviour `i`: 2·tp / (support + predicted); `None` when both are 0.
fn f1(g: &Grid, i: usize) -> Option<f64> {
    let den = row_sum(g, i) + col_sum(g, i);
    (den > 0).then(|| 2.0 * g[i][i] as f64 / den as f64)
}

/// Macro-F1 over the behaviours with support (rows expected, columns observed, in
/// [`Behaviour::ALL`] order), as [`BehaviourMetrics::of`] computes it.
pub fn macro_f1(g: &Grid) -> Option<f64> {
    let f1s: Vec<f64> = (0..4)
        .filter(|&i| row_sum(g, i) > 0)
        .filter_map(|i| f1(g, i))
        .collect();
    (!f1s.is_empty()).then(|| f1s.iter().sum::<f64>() / f1s.len() as f64)
}

/// A trial's place in the bootstrap: its cell and case (and repeat, when trials are the
/// unit), so units are resampled in an order that does not depend on the journal's.
type UnitKey<'a> = (&'a str, &'a str, String, Option<u32>, &'a str, u32);

/// The 95% percentile interval of macro-F1 over [`BOOTSTRAP_RESAMPLES`] resamples of
/// `units` (each a partial confusion matrix), drawn with replacement from a ChaCha8
/// stream seeded with [`BOOTSTRAP_SEED`]. A resample whose macro-F1 is undefined (it
/// cannot be: every unit holds a trial) would be skipped.
fn bootstrap(units: &[Grid]) -> (Option<f64>, Option<f64>) {
    let Ok(n) = u32::try_from(units.len()) else {
        return (None, None);
    };
    if n == 0 {
        return (None, None);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut draws = Vec::with_capacity(BOOTSTRAP_RESAMPLES as usize);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let mut g: Grid = [[0; 4]; 4];
        for _ in 0..n {
            // u32 draws: the same integers on 32- and 64-bit machines.
            let u = &units[rng.random_range(0..n) as usize];
            for (r, row) in u.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    g[r][c] += v;
                }
            }
        }
        if let Some(v) = macro_f1(&g) {
            draws.push(v);
        }
    }
    (percentile(&mut draws, 2.5), percentile(&mut draws, 97.5))
}

impl BehaviourMetrics {
    /// The behaviour metrics of `trials`: scored trials with an expected behaviour count;
    /// `None` when there is none (errored trials never count: they have no answer).
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Option<BehaviourMetrics> {
        let mut counted: Vec<(UnitKey<'a>, Behaviour, Behaviour)> = Vec::new();
        let mut decided_by = DecidedBy::default();
        for t in trials {
            if t.verdict == Verdict::Error {
                continue;
            }
            let Some(f) = t.checks.as_ref().and_then(|c| c.behaviour.as_ref()) else {
                continue;
            };
            let Some(expected) = f.expected else {
                continue;
            };
            match f.by {
                ObservedBy::Call => decided_by.call += 1,
                ObservedBy::Classifier => decided_by.classifier += 1,
                ObservedBy::Judge => decided_by.judge += 1,
            }
            let key = (
                t.target.as_str(),
                t.variant.as_str(),
                t.tool_choice.to_string(),
                super::distractors::record_n(t),
                t.case_id.as_str(),
                t.repeat,
            );
            counted.push((key, expected, f.observed));
        }
        if counted.is_empty() {
            return None;
        }
        let mut grid: Grid = [[0; 4]; 4];
        for (_, e, o) in &counted {
            grid[pos(*e)][pos(*o)] += 1;
        }
        // Repeats of a case are resampled together (the case is the unit), as the paired
        // comparison does; without repeats each trial is its own unit.
        let unit = if counted.iter().any(|(k, _, _)| k.5 > 0) {
            BootstrapUnit::Case
        } else {
            BootstrapUnit::Trial
        };
        let mut units: BTreeMap<UnitKey<'a>, Grid> = BTreeMap::new();
        for (mut key, e, o) in counted.iter().cloned() {
            if unit == BootstrapUnit::Case {
                key.5 = 0;
            }
            units.entry(key).or_insert([[0; 4]; 4])[pos(e)][pos(o)] += 1;
        }
        let units: Vec<Grid> = units.into_values().collect();
        let (low, high) = bootstrap(&units);
        let confusion = ByBehaviour::from_fn(|e| ByBehaviour::from_fn(|o| grid[pos(e)][pos(o)]));
        let scores = ByBehaviour::from_fn(|b| {
            let i = pos(b);
            let (support, predicted, correct) = (row_sum(&grid, i), col_sum(&grid, i), grid[i][i]);
            ClassScores {
                support,
                predicted,
                correct,
                precision: Rate::new(correct, predicted),
                recall: Rate::new(correct, support),
                f1: f1(&grid, i),
            }
        });
        let behaviours = Behaviour::ALL
            .into_iter()
            .filter(|b| row_sum(&grid, pos(*b)) > 0)
            .map(|b| b.label().to_string())
            .collect();
        let ca = pos(Behaviour::CannotAnswer);
        let rfi = pos(Behaviour::RequestForInfo);
        Some(BehaviourMetrics {
            trials: counted.len() as u64,
            confusion,
            scores,
            macro_f1: MacroF1 {
                value: macro_f1(&grid),
                low,
                high,
                behaviours,
                unit,
                units: units.len() as u64,
                resamples: BOOTSTRAP_RESAMPLES,
            },
            tool_hallucination_rate: Rate::new(
                grid[ca][pos(Behaviour::ToolCall)],
                row_sum(&grid, ca),
            ),
            answer_hallucination_rate: Rate::new(
                grid[rfi][pos(Behaviour::Direct)],
                row_sum(&grid, rfi),
            ),
            decided_by,
        })
    }

    /// The confusion matrix as a [`Grid`] (rows expected, columns observed).
    pub fn grid(&self) -> Grid {
        let mut g: Grid = [[0; 4]; 4];
        for (e, row) in self.confusion.iter() {
            for (o, n) in row.iter() {
                g[pos(e)][pos(o)] = *n;
            }
        }
        g
    }

    /// The value of a behaviour threshold metric (`macro_f1`, `tool_hallucination_rate`,
    /// `answer_hallucination_rate`), if defined.
    pub fn value(&self, name: &str) -> Option<f64> {
        match name {
            "macro_f1" => self.macro_f1.value,
            "tool_hallucination_rate" => self.tool_hallucination_rate.value,
            "answer_hallucination_rate" => self.answer_hallucination_rate.value,
            _ => None,
        }
    }
}

/// The behaviour metrics a threshold or a comparison may name, in report order.
pub const BEHAVIOUR_METRICS: &[&str] = &[
    "macro_f1",
    "tool_hallucination_rate",
    "answer_hallucination_rate",
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::behaviour::BehaviourFacts;
    use crate::judge::calls::TrialChecks;
    use crate::provider::{Response, ToolChoice};
    use crate::suite::CaseKind;
    use Behaviour::{CannotAnswer as CA, Direct as D, RequestForInfo as RFI, ToolCall as TC};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A scored trial of case `case` whose case expects `expected` and whose answer
    /// showed `observed`.
    pub(crate) fn record(
        case: &str,
        repeat: u32,
        expected: Option<Behaviour>,
        observed: Behaviour,
    ) -> TrialRecord {
        let by = match observed {
            TC => ObservedBy::Call,
            _ => ObservedBy::Classifier,
        };
        let kind = match expected {
            Some(TC) => CaseKind::ShouldCall,
            Some(RFI) | None => CaseKind::Ambiguous,
            _ => CaseKind::ShouldNotCall,
        };
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind,
            tags: vec![],
            target: "scripted:oracle".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat,
            stream: false,
            messages: vec![],
            response: Some(Response::default()),
            checks: Some(TrialChecks {
                kind,
                called: observed == TC,
                calls: vec![],
                expected_tools: vec![],
                right_tools: None,
                args_matched: 0,
                args_expected: 0,
                behaviour: Some(BehaviourFacts {
                    expected,
                    observed,
                    by,
                    why: Some("cue".into()),
                }),
            }),
            verdict: if expected == Some(observed) {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    /// Twelve trials, one repeat each (e = expected, o = observed):
    ///
    /// ```text
    ///  #  e    o        #  e    o        #   e    o
    ///  1  TC   TC       5  RFI  RFI      9  CA   CA
    ///  2  TC   TC       6  RFI  RFI     10  CA   CA
    ///  3  TC   TC       7  RFI  D       11  CA   TC
    ///  4  TC   RFI      8  RFI  CA      12  CA   D
    /// ```
    ///
    /// plus one trial expecting nothing and one errored trial (neither counts).
    pub(crate) fn sample() -> Vec<TrialRecord> {
        let rows = [
            (TC, TC),
            (TC, TC),
            (TC, TC),
            (TC, RFI),
            (RFI, RFI),
            (RFI, RFI),
            (RFI, D),
            (RFI, CA),
            (CA, CA),
            (CA, CA),
            (CA, TC),
            (CA, D),
        ];
        let mut out: Vec<TrialRecord> = rows
            .iter()
            .enumerate()
            .map(|(i, (e, o))| record(&format!("c{:02}", i + 1), 0, Some(*e), *o))
            .collect();
        out.push(record("free", 0, None, D));
        let mut errored = record("err", 0, Some(CA), TC);
        errored.verdict = Verdict::Error;
        errored.response = None;
        out.push(errored);
        out
    }

    #[test]
    fn confusion_scores_and_rates_by_hand() {
        let m = BehaviourMetrics::of(&sample()).unwrap();
        // 12 trials with an expected behaviour; `free` expects none, `err` errored.
        assert_eq!(m.trials, 12);
        let c = &m.confusion;
        assert_eq!(
            c.tool_call,
            ByBehaviour {
                tool_call: 3,
                request_for_info: 1,
                cannot_answer: 0,
                direct: 0
            }
        );
        assert_eq!(
            c.request_for_info,
            ByBehaviour {
                tool_call: 0,
                request_for_info: 2,
                cannot_answer: 1,
                direct: 1
            }
        );
        assert_eq!(
            c.cannot_answer,
            ByBehaviour {
                tool_call: 1,
                request_for_info: 0,
                cannot_answer: 2,
                direct: 1
            }
        );
        assert_eq!(c.direct, ByBehaviour::default());
        // Columns: TC 3+1 = 4, RFI 1+2 = 3, CA 1+2 = 3, D 1+1 = 2.
        // TC: precision 3/4, recall 3/4, F1 = 2·3/(4+4) = 0.75.
        let s = &m.scores;
        assert_eq!(
            (
                s.tool_call.support,
                s.tool_call.predicted,
                s.tool_call.correct
            ),
            (4, 4, 3)
        );
        assert_eq!(
            (s.tool_call.precision.num, s.tool_call.precision.den),
            (3, 4)
        );
        assert!(close(s.tool_call.f1.unwrap(), 0.75));
        // RFI: precision 2/3, recall 2/4, F1 = 2·2/(4+3) = 4/7.
        assert_eq!(
            (
                s.request_for_info.precision.num,
                s.request_for_info.precision.den
            ),
            (2, 3)
        );
        assert_eq!(
            (s.request_for_info.recall.num, s.request_for_info.recall.den),
            (2, 4)
        );
        assert!(close(s.request_for_info.f1.unwrap(), 4.0 / 7.0));
        // CA: precision 2/3, recall 2/4, F1 = 4/7.
        assert!(close(s.cannot_answer.f1.unwrap(), 4.0 / 7.0));
        // D: never expected, shown twice: precision 0/2, recall undefined, F1 = 0/(0+2) = 0,
        // and left out of the macro average.
        assert_eq!((s.direct.precision.num, s.direct.precision.den), (0, 2));
        assert_eq!(s.direct.recall.value, None);
        assert_eq!(s.direct.f1, Some(0.0));
        // Macro-F1 over TC, RFI, CA: (0.75 + 4/7 + 4/7) / 3 = (21/28 + 16/28 + 16/28) / 3
        // = 53/84.
        assert!(
            close(m.macro_f1.value.unwrap(), 53.0 / 84.0),
            "{:?}",
            m.macro_f1
        );
        assert_eq!(
            m.macro_f1.behaviours,
            ["tool_call", "request_for_info", "cannot_answer"]
        );
        assert_eq!(
            (m.macro_f1.unit, m.macro_f1.units, m.macro_f1.resamples),
            (BootstrapUnit::Trial, 12, 1000)
        );
        // Tool hallucination: CA row, called a tool: 1 of 4.
        let t = &m.tool_hallucination_rate;
        assert_eq!((t.num, t.den), (1, 4));
        // Answer hallucination: RFI row, answered directly: 1 of 4.
        let a = &m.answer_hallucination_rate;
        assert_eq!((a.num, a.den), (1, 4));
        // Wilson 1/4: centre (0.25 + 1.9208/4)/(1 + 3.8415/4) = 0.7302/1.9604 = 0.3725,
        // half = 1.96·sqrt(0.25·0.75/4 + 3.8415/64)/1.9604 = 1.96·0.3245/1.9604 = 0.3244.
        assert!((a.low.unwrap() - 0.0456).abs() < 1e-3, "{a:?}");
        assert!((a.high.unwrap() - 0.6994).abs() < 1e-3, "{a:?}");
        // Decided by: 4 calls (#1-3, #11), 8 classifier labels.
        assert_eq!(
            m.decided_by,
            DecidedBy {
                call: 4,
                classifier: 8,
                judge: 0
            }
        );
        assert_eq!(m.value("macro_f1"), m.macro_f1.value);
        assert_eq!(m.value("tool_hallucination_rate"), Some(0.25));
        assert_eq!(m.value("answer_hallucination_rate"), Some(0.25));
        assert_eq!(m.value("accuracy"), None);
    }

    #[test]
    fn the_bootstrap_interval_is_deterministic_and_brackets_the_value() {
        let trials = sample();
        let a = BehaviourMetrics::of(&trials).unwrap().macro_f1;
        // The journal's order varies from run to run; the interval must not.
        let mut reversed = trials.clone();
        reversed.reverse();
        let b = BehaviourMetrics::of(&reversed).unwrap().macro_f1;
        assert_eq!(a, b);
        let (lo, hi) = (a.low.unwrap(), a.high.unwrap());
        assert!(lo < a.value.unwrap() && a.value.unwrap() < hi, "{a:?}");
        assert!((0.0..=1.0).contains(&lo) && (0.0..=1.0).contains(&hi));
        // Pinned: these bits are what every machine computes (ChaCha8, seed 13, u32
        // draws); a change here changes every published interval.
        assert_eq!((lo, hi), (PINNED_LOW, PINNED_HIGH), "{a:?}");
    }

    /// The interval of [`sample`] (macro-F1 53/84 = 0.631): a regression pin of the
    /// generator and the resampling order, not a hand-derived value.
    const PINNED_LOW: f64 = 0.2929292929292929;
    const PINNED_HIGH: f64 = 0.8962962962962964;

    #[test]
    fn all_right_gives_one_and_a_point_interval() {
        let trials: Vec<TrialRecord> = [(TC, TC), (CA, CA), (RFI, RFI), (D, D)]
            .iter()
            .enumerate()
            .map(|(i, (e, o))| record(&format!("c{i}"), 0, Some(*e), *o))
            .collect();
        let m = BehaviourMetrics::of(&trials).unwrap();
        // Every resample is all right too: macro-F1 1 with the interval [1, 1].
        assert_eq!(
            (m.macro_f1.value, m.macro_f1.low, m.macro_f1.high),
            (Some(1.0), Some(1.0), Some(1.0))
        );
        assert_eq!(m.tool_hallucination_rate.num, 0);
        assert_eq!(m.tool_hallucination_rate.den, 1);
    }

    #[test]
    fn repeats_make_the_case_the_unit() {
        // Two cases × 3 repeats: a (CA) calls once of three; b (RFI) is always right.
        let trials = vec![
            record("a", 0, Some(CA), CA),
            record("a", 1, Some(CA), TC),
            record("a", 2, Some(CA), CA),
            record("b", 0, Some(RFI), RFI),
            record("b", 1, Some(RFI), RFI),
            record("b", 2, Some(RFI), RFI),
        ];
        let m = BehaviourMetrics::of(&trials).unwrap();
        assert_eq!(
            (m.macro_f1.unit, m.macro_f1.units),
            (BootstrapUnit::Case, 2)
        );
        // CA: correct 2, support 3, predicted 2 -> F1 = 4/5; RFI: 3, 3, 3 -> 1.
        // Macro over CA and RFI (TC was shown, never expected): (0.8 + 1) / 2 = 0.9.
        assert!(close(m.macro_f1.value.unwrap(), 0.9));
        assert_eq!(m.macro_f1.behaviours, ["request_for_info", "cannot_answer"]);
        // Tool hallucination 1/3; no direct answer to b: answer hallucination 0/3.
        assert_eq!(
            (m.tool_hallucination_rate.num, m.tool_hallucination_rate.den),
            (1, 3)
        );
        assert_eq!(
            (
                m.answer_hallucination_rate.num,
                m.answer_hallucination_rate.den
            ),
            (0, 3)
        );
        // A resample draws whole cases: {a, a} gives CA alone with F1 0.8 (TC shown but
        // not expected stays out), {b, b} gives 1, {a, b} 0.9; so every resample is one
        // of 0.8, 0.9, 1 and the interval's ends are among them.
        for v in [m.macro_f1.low.unwrap(), m.macro_f1.high.unwrap()] {
            assert!([0.8, 0.9, 1.0].iter().any(|x| close(*x, v)), "{v}");
        }
    }

    #[test]
    fn no_expected_behaviour_means_no_block() {
        assert_eq!(BehaviourMetrics::of(&[]), None);
        // Trials whose cases accept several behaviours, and errored ones: still none.
        let mut errored = record("e", 0, Some(CA), CA);
        errored.verdict = Verdict::Error;
        let free = record("f", 0, None, RFI);
        assert_eq!(BehaviourMetrics::of(&[errored, free]), None);
        // No trial expects cannot_answer or request_for_info: both rates are undefined
        // (0/0), not 0.
        let m = BehaviourMetrics::of(&[record("t", 0, Some(TC), D)]).unwrap();
        assert_eq!(m.tool_hallucination_rate.value, None);
        assert_eq!(m.answer_hallucination_rate.value, None);
        // TC expected, never shown: F1 = 0/(1+0) = 0; macro over TC alone = 0.
        assert_eq!(m.macro_f1.value, Some(0.0));
        assert_eq!(m.scores.tool_call.precision.value, None);
    }

    #[test]
    fn the_block_round_trips_through_json_with_labelled_rows() {
        let m = BehaviourMetrics::of(&sample()).unwrap();
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["confusion"]["cannot_answer"]["tool_call"], 1);
        assert_eq!(json["confusion"]["request_for_info"]["direct"], 1);
        assert_eq!(json["macro_f1"]["unit"], "trial");
        let back: BehaviourMetrics = serde_json::from_value(json).unwrap();
        assert_eq!(back, m);
    }
}
