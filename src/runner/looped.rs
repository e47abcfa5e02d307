//! Running and scoring one loop trial: the case's episode ([`crate::episode::run_episode`])
//! against the suite's tool host, then its verdict.
//!
//! The verdict combines, and every part must hold:
//! - the first round, scored as a single-turn trial is, on `expect.calls`; a case with
//!   loop expectations that gives no `calls` needs some call anywhere in the episode
//!   instead (a careful model may ask the user before its first call);
//! - every later round's calls, checked per call as the first round's are (not JSON,
//!   unknown tool, schema violation), the reason naming its round;
//! - the episode judge ([`crate::judge::judge_episode`]): trajectory, `never`, `final`,
//!   `stop`, and the behaviours always checked (risky calls without approval,
//!   duplicate side effects, recovery after errors).
//!
//! An episode ended by the provider or the tool host is an error (infrastructure, never
//! the model's), and keeps the rounds it played.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::events::Note;
use crate::episode::{
    EpisodeError, EpisodeOutcome, RoundRecord, run_episode_observed, tool_traits,
};
use crate::judge::CaseScorer;
use crate::judge::calls::Reason;
use crate::judge::{JudgeInput, judge_episode};
use crate::provider::{Provider, ProviderError, Request, TrialKey};
use crate::score::prices::Price;
use crate::score::record::EpisodeRecord;
use crate::score::{TrialRecord, Verdict, tokens};
use crate::suite::trajectory::LoopExpectation;
use crate::suite::{Case, Expectation, Suite};
use crate::tools::ToolHost;

/// Play the episode of `case` from `request` on its own task (so the answers of a wave
/// are handled in parallel) and return its outcome ([`provider_error`] tells the
/// target's breaker what ended it). Each finished round is told to the run's observers
/// through `notes`, as trial `index`. An error only when the task itself failed.
pub(super) async fn play(
    provider: Arc<dyn Provider>,
    host: Arc<dyn ToolHost>,
    case: &Case,
    request: Request,
    key: TrialKey,
    (index, notes): (usize, UnboundedSender<Note>),
) -> Result<EpisodeOutcome, String> {
    let Some(spec) = case.episode.clone() else {
        return Err(format!("case `{}` has no tool loop", case.id));
    };
    let task = tokio::spawn(async move {
        let mut round = 0;
        let on_round = |r: &RoundRecord| {
            round += 1;
            // The driver outlives every trial; a send can only fail once it has gone.
            let _ = notes.send(Note::Round {
                index,
                round,
                calls: r.response.tool_calls.len(),
                errors: r.outcomes.iter().filter(|o| o.is_error).count(),
                usage: r.response.usage,
            });
        };
        run_episode_observed(
            provider.as_ref(),
            host.as_ref(),
            spec,
            request,
            &key,
            on_round,
        )
        .await
    });
    task.await
        .map_err(|e| format!("the episode task failed: {e}"))
}

/// The provider error that ended `outcome`, if one did.
pub(super) fn provider_error(outcome: &EpisodeOutcome) -> Option<&ProviderError> {
    match &outcome.end {
        Err(EpisodeError::Provider { source, .. }) => Some(source),
        _ => None,
    }
}

/// What scoring a loop trial needs besides the episode.
pub(super) struct LoopScoring<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// The case.
    pub case: &'a Case,
    /// The case's scorer (first round and per-call checks).
    pub scorer: &'a CaseScorer<'a>,
    /// The tool-definition tokens of the trial's variant (to estimate missing usage).
    pub tool_tokens: u64,
    /// The target's price, if it has one.
    pub price: Option<Price>,
}

/// Fill `record` (created as an error with the trial's identity) from `outcome`.
pub(super) fn score(s: &LoopScoring<'_>, mut outcome: EpisodeOutcome, record: &mut TrialRecord) {
    // Usage a provider did not report is estimated per round from what that round sent.
    for i in 0..outcome.rounds.len() {
        if outcome.rounds[i].response.usage.is_none() {
            let usage = tokens::estimate_usage_of(
                outcome.sent(i),
                &outcome.rounds[i].response,
                s.tool_tokens,
            );
            outcome.rounds[i].response.usage = Some(usage);
        }
    }
    let mut reasons: Vec<Reason> = Vec::new();
    let mut checks = None;
    // A case with loop expectations that gives no `calls` expects some call in the
    // episode, not in its first round: a careful model may first ask the user (a
    // risky first step) and call after the answer.
    let episode_wide = s.case.loop_expect.is_some()
        && matches!(
            s.case.effective(&record.tool_choice).1,
            Expectation::Calls(e) if e.calls.is_empty()
        );
    if let Some(first) = outcome.rounds.first() {
        let (c, r) = s
            .scorer
            .score_variant(&record.variant, &record.tool_choice, &first.response);
        if episode_wide {
            reasons.extend(
                s.scorer
                    .invalid_calls(&record.variant, &first.response.tool_calls),
            );
            if outcome
                .rounds
                .iter()
                .all(|r| r.response.tool_calls.is_empty())
            {
                reasons.push(Reason::new(
                    "missed_call",
                    format!(
                        "expected a call to any tool in the episode; none was made in {} round(s)",
                        outcome.rounds.len()
                    ),
                ));
            }
        } else {
            reasons.extend(r);
        }
        checks = Some(c);
        record.response = Some(first.response.clone());
    }
    for (i, round) in outcome.rounds.iter().enumerate().skip(1) {
        for mut r in s
            .scorer
            .invalid_calls(&record.variant, &round.response.tool_calls)
        {
            r.message = format!("round {}: {}", i + 1, r.message);
            reasons.push(r);
        }
    }
    let mut episode_checks = None;
    match outcome.transcript() {
        Ok(transcript) => {
            let none = LoopExpectation::default();
            let traits = tool_traits(s.suite, s.case);
            let input = JudgeInput {
                expect: s.case.loop_expect.as_ref().unwrap_or(&none),
                tools: &traits,
                norm: s.suite.norm,
            };
            let (r, c) = judge_episode(&input, &transcript);
            reasons.extend(r);
            episode_checks = Some(c);
            record.verdict = if reasons.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            record.reasons = reasons;
            record.checks = checks;
        }
        Err(e) => {
            // Not the model's failure: no verdict, whatever the rounds before showed.
            let code = match e {
                EpisodeError::Provider { .. } => "provider_error",
                EpisodeError::Host { .. } => "tool_error",
            };
            record.verdict = Verdict::Error;
            record.reasons = vec![Reason::new(code, e.to_string())];
        }
    }
    let stop = outcome.stop();
    let rounds = std::mem::take(&mut outcome.rounds);
    let episode = EpisodeRecord {
        rounds,
        stop,
        checks: episode_checks,
    };
    record.messages = outcome.messages;
    record.episode = Some(episode);
    if let (Some(p), Some(u)) = (s.price, record.usage()) {
        record.cost_usd = Some(p.cost(u.input_tokens, u.output_tokens));
    }
}
