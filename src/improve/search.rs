//! The search: rounds of propose, score on the training cases, test the best on the
//! held-out cases, keep or discard.
//!
//! Each round runs the current wording on the training cases (answered from the journal
//! after the first round), shows the proposer the failures, the wording and its lint
//! findings, reads its candidates (a malformed answer is asked again once, then the round
//! has none), scores every candidate on the training cases, and tests the best one (ties
//! to fewer definition tokens) against the current wording on the held-out cases with
//! [`decide`]. The search stops after `rounds`, after `patience` rounds in a row that
//! kept nothing, when the proposer has nothing more, or at `max_cost`.

use std::collections::HashMap;

use indexmap::IndexMap;

use super::bench::{Bench, BenchError};
use super::decide::{Decision, decide};
use super::proposal::{Proposal, parse};
use super::proposer::{
    MAX_FAILURES, PromptContext, PromptError, PromptFailure, PromptTemplate, Propose,
    ProposerError, prompt_tool, retry_prompt,
};
use super::report::{
    Accepted, CandidateReport, ImproveReport, ProposerReport, RoundReport, Score, Sets,
    TokensBeforeAfter,
};
use super::wording::{self, Wording};
use crate::compare::{Better, compare_variants};
use crate::score::TrialRecord;
use crate::score::metrics::Metrics;
use crate::score::record::Verdict;

/// How a search runs.
#[derive(Debug, Clone)]
pub struct SearchSettings {
    /// The variant whose wording the search starts from.
    pub base_variant: String,
    /// The metric to improve.
    pub objective: String,
    /// Metrics that may not get worse.
    pub guards: Vec<String>,
    /// How much worse a guard may get, in its unit.
    pub tolerance: f64,
    /// The whole search's significance level.
    pub alpha: f64,
    /// Rounds at most.
    pub rounds: u32,
    /// Rounds in a row without an accepted wording before the search stops.
    pub patience: u32,
    /// Candidates asked for per round.
    pub candidates: usize,
    /// Stop once the search has spent this much, in USD.
    pub max_cost: Option<f64>,
    /// The split's seed (reported).
    pub seed: u64,
}

/// The cases of each set, as masks over the suite's cases and as ids.
#[derive(Debug, Clone)]
pub struct CaseSets {
    /// Training cases.
    pub training: Vec<bool>,
    /// Held-out cases.
    pub held_out: Vec<bool>,
    /// The ids, for the report.
    pub ids: Sets,
}

/// What the search reports to its caller as it goes.
pub trait SearchLog {
    /// A wording got a variant name (to keep, so a resumed search names it alike).
    fn named(&mut self, name: &str, wording: &Wording);
    /// The report so far, after each round.
    fn round_done(&mut self, report: &ImproveReport);
}

/// Why a search stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Trials could not be run or kept.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// The prompt template failed to render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// No trial of the current wording was scored: nothing could be compared.
    #[error(
        "no training trial of wording `{variant}` was scored: every one ended in an error (the first: {first})"
    )]
    NothingScored {
        /// The wording's variant name.
        variant: String,
        /// The first trial's error.
        first: String,
    },
}

/// Who the search is for: names in the report.
#[derive(Debug, Clone)]
pub struct Names {
    /// The suite file as given.
    pub suite_path: String,
    /// The target as written.
    pub target: String,
    /// The proposer as written.
    pub proposer: String,
}

/// Run the search. `known` maps variant names a resumed search used to their wording's
/// fingerprint.
#[allow(clippy::too_many_arguments)]
pub fn search(
    bench: &mut Bench,
    proposer: &mut dyn Propose,
    template: &PromptTemplate,
    settings: &SearchSettings,
    sets: &CaseSets,
    names: &Names,
    known: &HashMap<String, String>,
    log: &mut dyn SearchLog,
) -> Result<ImproveReport, SearchError> {
    let s = settings;
    let original = wording::of_suite(bench.suite(), &s.base_variant);
    let shapes = wording::tool_shapes(bench.suite());
    let shapes: Vec<(&str, Vec<&str>)> = shapes
        .iter()
        .map(|(n, ps)| (n.as_str(), ps.iter().map(String::as_str).collect()))
        .collect();
    let mut names_of: HashMap<String, String> = HashMap::new();
    names_of.insert(wording::fingerprint(&original), s.base_variant.clone());
    let original_tokens = definition_tokens(bench, &s.base_variant, &original);
    let mut report = ImproveReport {
        improve_format: super::report::IMPROVE_FORMAT,
        toolgauge_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: bench.suite().name.clone(),
        suite_path: names.suite_path.clone(),
        target: names.target.clone(),
        proposer: names.proposer.clone(),
        base_variant: s.base_variant.clone(),
        objective: s.objective.clone(),
        guards: s.guards.clone(),
        alpha: s.alpha,
        seed: s.seed,
        sets: sets.ids.clone(),
        original: original.clone(),
        rounds: Vec::new(),
        accepted: Vec::new(),
        final_wording: original.clone(),
        final_variant: s.base_variant.clone(),
        stop: String::new(),
        cost_usd: 0.0,
        definition_tokens: TokensBeforeAfter {
            original: original_tokens,
            r#final: original_tokens,
        },
    };
    let mut current = (s.base_variant.clone(), original.clone());
    let mut proposer_spent = 0.0;
    let mut stale = 0;
    let mut tried: Vec<String> = Vec::new();
    let over_budget = |spent: f64| s.max_cost.is_some_and(|m| spent >= m);
    for round in 1..=s.rounds {
        if over_budget(bench.spent_usd() + proposer_spent) {
            report.stop = format!(
                "--max-cost {} reached after round {}",
                s.max_cost.unwrap_or_default(),
                round - 1
            );
            break;
        }
        let asked_before = proposer_spent;
        let budget = move |target_spent: f64| over_budget(target_spent + asked_before);
        let cur = current.0.clone();
        let train = bench.evaluate(&[&cur], &sets.training, "training", &budget)?;
        let held = bench.evaluate(&[&cur], &sets.held_out, "held-out", &budget)?;
        if over_budget(bench.spent_usd() + proposer_spent) {
            report.stop = format!(
                "--max-cost {} reached in round {round}, while the current wording ran",
                s.max_cost.unwrap_or_default()
            );
            break;
        }
        if !train.is_empty() && train.iter().all(|t| t.verdict == Verdict::Error) {
            return Err(SearchError::NothingScored {
                variant: cur,
                first: train[0]
                    .reasons
                    .first()
                    .map_or_else(|| "no reason given".into(), |r| r.message.clone()),
            });
        }
        let current_training = score_of(&train, &cur, &s.objective);
        let current_held_out = score_of(&held, &cur, &s.objective);

        // Ask the proposer.
        let ctx = prompt_context(bench, &current, &train, round, s, &current_training, &tried);
        let prompt = template.render(&ctx)?;
        let (proposal, proposer_report, exhausted) = ask(proposer, round, &prompt);
        proposer_spent += proposer_report.cost_usd.unwrap_or(0.0);
        let asked = proposer_spent;
        let budget = move |target_spent: f64| over_budget(target_spent + asked);
        let mut round_report = RoundReport {
            round,
            current: cur.clone(),
            current_training,
            current_held_out,
            proposer: proposer_report,
            candidates: Vec::new(),
            best: None,
            best_held_out: None,
            decision: None,
            untested: None,
            accepted: false,
            cost_so_far_usd: 0.0,
        };
        if let Some(e) = exhausted {
            // The proposer has nothing more: no round is played.
            report.stop = e;
            break;
        }

        // Name and score the candidates.
        let mut cut = false;
        let mut usable: Vec<(usize, String, Wording)> = Vec::new();
        if let Some(p) = &proposal {
            let rejected = p.check(&shapes);
            for (i, c) in p.candidates.iter().enumerate().take(s.candidates.max(1)) {
                let problems: Vec<String> = rejected
                    .iter()
                    .find(|r| r.index == i)
                    .map(|r| r.problems.clone())
                    .unwrap_or_default();
                let new = if problems.is_empty() {
                    wording::apply(&current.1, c)
                } else {
                    current.1.clone()
                };
                let fp = wording::fingerprint(&new);
                let mut dropped = problems;
                if dropped.is_empty() && fp == wording::fingerprint(&current.1) {
                    dropped.push("it words every tool as the current wording does".into());
                }
                let name = names_of
                    .get(&fp)
                    .cloned()
                    .unwrap_or_else(|| format!("r{round}c{}", i + 1));
                if dropped.is_empty() {
                    if known.get(&name).is_some_and(|k| *k != fp) {
                        // A resumed search whose proposer now answers otherwise: the
                        // journal's trials of this name are of another wording.
                        bench.forget(&name);
                    }
                    names_of.insert(fp, name.clone());
                    bench.add(&name, &new);
                    log.named(&name, &new);
                    usable.push((round_report.candidates.len(), name.clone(), new.clone()));
                }
                round_report.candidates.push(CandidateReport {
                    variant: name,
                    rationale: c.rationale.clone(),
                    tools: if dropped.is_empty() {
                        wording::changed(&current.1, &new)
                    } else {
                        IndexMap::new()
                    },
                    dropped,
                    training: Score::default(),
                    definition_tokens: 0,
                });
            }
        }
        if !usable.is_empty() {
            let vs: Vec<&str> = usable.iter().map(|(_, n, _)| n.as_str()).collect();
            let train_c = bench.evaluate(&vs, &sets.training, "candidates", &budget)?;
            cut = over_budget(bench.spent_usd() + proposer_spent);
            for (slot, name, w) in &usable {
                let c = &mut round_report.candidates[*slot];
                c.training = score_of(&train_c, name, &s.objective);
                c.definition_tokens = definition_tokens(bench, name, w);
                if c.training.n == 0 {
                    // Nothing scored (a cassette without its requests, a provider down):
                    // no score, so not a candidate for the held-out test.
                    let first = train_c
                        .iter()
                        .find(|t| &t.variant == name)
                        .and_then(|t| t.reasons.first())
                        .map_or_else(|| "no reason given".to_string(), |r| r.message.clone());
                    c.dropped.push(format!(
                        "every training trial ended in an error (the first: {first})"
                    ));
                }
            }
            let better = Better::of(&s.objective);
            let best = usable
                .iter()
                .filter(|u| round_report.candidates[u.0].dropped.is_empty())
                .max_by(|a, b| {
                    let (ca, cb) = (&round_report.candidates[a.0], &round_report.candidates[b.0]);
                    rank(ca.training.value, better)
                        .total_cmp(&rank(cb.training.value, better))
                        .then(cb.definition_tokens.cmp(&ca.definition_tokens))
                        // The proposer's first of equals.
                        .then(b.0.cmp(&a.0))
                })
                .cloned();
            if cut {
                round_report.untested = Some(format!(
                    "--max-cost {} was reached (${:.4} spent) before a decision",
                    s.max_cost.unwrap_or_default(),
                    bench.spent_usd() + proposer_spent
                ));
            } else if let Some((slot, name, w)) = best {
                round_report.best = Some(slot);
                let cand_train = round_report.candidates[slot].training.value;
                let gain = match (cand_train, round_report.current_training.value) {
                    (Some(c), Some(b)) => rank(Some(c), better) > rank(Some(b), better),
                    _ => false,
                };
                let held_c = if gain {
                    let h = bench.evaluate(&[&name], &sets.held_out, "held-out", &budget)?;
                    round_report.best_held_out = Some(score_of(&h, &name, &s.objective));
                    cut = over_budget(bench.spent_usd() + proposer_spent);
                    Some(h)
                } else {
                    None
                };
                if cut {
                    round_report.untested = Some(format!(
                        "--max-cost {} was reached (${:.4} spent) while the best candidate ran on the held-out cases: no decision",
                        s.max_cost.unwrap_or_default(),
                        bench.spent_usd() + proposer_spent
                    ));
                } else if let Some(held_c) = held_c {
                    let mut pair = held.clone();
                    pair.extend(held_c);
                    let comparison = compare_variants(&pair, &cur, &name);
                    let guards: Vec<&str> = s.guards.iter().map(String::as_str).collect();
                    let d = decide(
                        &comparison,
                        &s.objective,
                        &guards,
                        s.tolerance,
                        s.alpha,
                        round,
                    );
                    if d.accepted {
                        accept(
                            &mut report,
                            &mut round_report,
                            &d,
                            round,
                            &name,
                            &current.1,
                            &w,
                        );
                        current = (name.clone(), w.clone());
                    }
                    round_report.decision = Some(d);
                } else {
                    round_report.untested = Some(format!(
                        "the best candidate ({name}, {}) did not beat the current wording ({}) on the training cases",
                        show(cand_train),
                        show(round_report.current_training.value)
                    ));
                }
            }
            // What was tried and not kept, for the next rounds' prompts.
            for (slot, c) in round_report.candidates.iter().enumerate() {
                let kept = round_report.accepted && round_report.best == Some(slot);
                if c.dropped.is_empty() && !kept {
                    tried.push(format!(
                        "round {round}, {}: {} on training: {}",
                        c.variant,
                        show(c.training.value),
                        c.tools
                            .iter()
                            .map(|(t, x)| format!("{t}: \"{}\"", x.description))
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
        }
        stale = if round_report.accepted { 0 } else { stale + 1 };
        round_report.cost_so_far_usd = bench.spent_usd() + proposer_spent;
        report.rounds.push(round_report);
        report.cost_usd = bench.spent_usd() + proposer_spent;
        log.round_done(&report);
        if cut {
            report.stop = format!(
                "--max-cost {} reached in round {round}",
                s.max_cost.unwrap_or_default()
            );
            break;
        }
        if round == s.rounds {
            report.stop = format!("all {} rounds played", s.rounds);
        } else if stale >= s.patience.max(1) {
            report.stop = format!(
                "{stale} round(s) in a row kept nothing (--patience {})",
                s.patience
            );
            break;
        }
    }
    if report.stop.is_empty() {
        report.stop = "no round was played".into();
    }
    report.cost_usd = bench.spent_usd() + proposer_spent;
    report.final_variant = current.0.clone();
    report.definition_tokens.r#final = definition_tokens(bench, &current.0, &current.1);
    report.final_wording = current.1;
    log.round_done(&report);
    Ok(report)
}

/// Ask the proposer for round `round`'s candidates: once, and again once with the error
/// when the answer cannot be read. Returns the proposal (none when both answers were
/// unreadable or the proposer failed), the round's proposer report, and why the search
/// must stop (the proposer has no more answers).
fn ask(
    proposer: &mut dyn Propose,
    round: u32,
    prompt: &str,
) -> (Option<Proposal>, ProposerReport, Option<String>) {
    let mut report = ProposerReport::default();
    let mut cost: Option<f64> = None;
    let mut asked = prompt.to_string();
    for attempt in 0..2 {
        report.attempts += 1;
        match proposer.propose(round, attempt, &asked) {
            Ok(a) => {
                if let Some(c) = a.cost_usd {
                    *cost.get_or_insert(0.0) += c;
                }
                match parse(&a.text) {
                    Ok(p) => {
                        report.cost_usd = cost;
                        return (Some(p), report, None);
                    }
                    Err(e) => {
                        let problem = format!("{e} ({})", e.hint());
                        asked = retry_prompt(prompt, &a.text, &problem);
                        report.errors.push(problem);
                    }
                }
            }
            Err(e @ ProposerError::Exhausted { .. }) => {
                report.attempts -= 1;
                report.cost_usd = cost;
                return (None, report, Some(e.to_string()));
            }
            Err(e) => {
                report.errors.push(e.to_string());
                break;
            }
        }
    }
    report.cost_usd = cost;
    (None, report, None)
}

fn accept(
    report: &mut ImproveReport,
    round_report: &mut RoundReport,
    d: &Decision,
    round: u32,
    name: &str,
    old: &Wording,
    new: &Wording,
) {
    round_report.accepted = true;
    report.accepted.push(Accepted {
        round,
        variant: name.to_string(),
        tools: wording::changed(old, new),
        p_value: d.p_value.unwrap_or(1.0),
        delta: d.delta.unwrap_or(0.0),
    });
}

/// `value` oriented so that larger is better; undefined is worst.
fn rank(value: Option<f64>, better: Better) -> f64 {
    match value {
        Some(v) if v.is_finite() => match better {
            Better::Lower => -v,
            _ => v,
        },
        _ => f64::NEG_INFINITY,
    }
}

fn show(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

/// The objective's value for `variant` over `records`, with its 95% Wilson interval
/// when the objective is a rate of trials, calls or cases (the summary's figures).
pub fn score_of(records: &[TrialRecord], variant: &str, objective: &str) -> Score {
    let mine: Vec<&TrialRecord> = records.iter().filter(|t| t.variant == variant).collect();
    if mine.is_empty() {
        return Score::default();
    }
    let n = mine.iter().filter(|t| t.verdict != Verdict::Error).count() as u64;
    let m = Metrics::of(mine.iter().copied());
    let rate = match objective {
        "accuracy" => Some(&m.accuracy),
        "error_rate" => Some(&m.error_rate),
        "trigger_precision" => Some(&m.trigger.precision),
        "trigger_recall" => Some(&m.trigger.recall),
        "false_call_rate" => Some(&m.trigger.false_call_rate),
        "miss_rate" => Some(&m.trigger.miss_rate),
        "tool_selection_accuracy" => Some(&m.tool_selection_accuracy),
        "param_completeness" => Some(&m.param_completeness),
        "arg_match_rate" => Some(&m.arg_match_rate),
        "invalid_call_rate" => Some(&m.invalid_call_rate),
        "ungrounded_rate" => Some(&m.ungrounded_rate),
        _ => None,
    };
    let value = m
        .value(objective)
        .or_else(|| m.loops.as_ref().and_then(|l| l.value(objective)))
        .or_else(|| m.behaviour.as_ref().and_then(|b| b.value(objective)));
    Score {
        value,
        low: rate.and_then(|r| r.low),
        high: rate.and_then(|r| r.high),
        n,
    }
}

fn definition_tokens(bench: &Bench, name: &str, w: &Wording) -> u64 {
    let suite = wording::with_variants(bench.suite(), &[(name.to_string(), w.clone())]);
    let defs: Vec<_> = suite.tools.iter().map(|t| t.definition(name)).collect();
    crate::score::tokens::tool_definition_tokens(&defs)
}

fn prompt_context(
    bench: &Bench,
    current: &(String, Wording),
    train: &[TrialRecord],
    round: u32,
    s: &SearchSettings,
    score: &Score,
    tried: &[String],
) -> PromptContext {
    let suite = wording::with_variants(bench.suite(), std::slice::from_ref(current));
    let defs: Vec<_> = suite
        .tools
        .iter()
        .map(|t| t.definition(&current.0))
        .collect();
    let failures: Vec<PromptFailure> = train
        .iter()
        .filter(|t| t.variant == current.0 && t.verdict == Verdict::Fail)
        .take(MAX_FAILURES)
        .map(failure)
        .collect();
    let lint_tools: Vec<crate::lint::model::LintTool> = defs
        .iter()
        .map(|d| crate::lint::model::LintTool {
            name: d.name.clone(),
            description: (!d.description.is_empty()).then(|| d.description.clone()),
            parameters: (*d.parameters).clone(),
            ..Default::default()
        })
        .collect();
    let lint = crate::lint::check_all(&lint_tools, &Default::default())
        .into_iter()
        .filter(|f| f.severity >= crate::lint::model::Severity::Warning)
        .map(|f| match (&f.tool, &f.parameter) {
            (Some(t), Some(p)) => format!("{t}.{p}: {}", f.message),
            (Some(t), None) => format!("{t}: {}", f.message),
            _ => f.message.clone(),
        })
        .take(30)
        .collect();
    PromptContext {
        suite: bench.suite().name.clone(),
        round,
        objective: s.objective.clone(),
        current_score: show(score.value),
        candidates: s.candidates,
        tools: defs.iter().map(prompt_tool).collect(),
        failures,
        trials: train.iter().filter(|t| t.variant == current.0).count(),
        lint,
        tried: tried.iter().rev().take(10).rev().cloned().collect(),
    }
}

fn failure(t: &TrialRecord) -> PromptFailure {
    let prompt = t
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            crate::chat::Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let called = t
        .response
        .as_ref()
        .map(|r| {
            r.tool_calls
                .iter()
                .map(|c| format!("{}({})", c.name, c.arguments))
                .collect()
        })
        .unwrap_or_default();
    PromptFailure {
        case: t.case_id.clone(),
        kind: t.kind.as_str().to_string(),
        prompt,
        called,
        expected: t
            .checks
            .as_ref()
            .map(|c| c.expected_tools.clone())
            .unwrap_or_default(),
        reasons: t
            .reasons
            .iter()
            .map(|r| format!("{}: {}", r.code, r.message))
            .collect(),
    }
}
