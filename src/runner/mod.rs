//! Running a plan: send each trial's request to its provider, score the response, and
//! stream every finished trial to the caller (journal, progress) as it completes.

pub mod journal;
pub mod matrix;

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;

pub use matrix::{Cell, Plan, PlannedTrial};

use crate::provider::Provider;
use crate::score::prices::PriceTable;
use crate::score::trial::Reason;
use crate::score::{CaseScorer, TrialRecord, Verdict, tokens};

/// How a run executes.
pub struct RunOptions {
    /// Trials in flight at once.
    pub concurrency: usize,
    /// Prices for cost.
    pub prices: PriceTable,
}

/// Run `trials` of `plan`, calling `on_trial` with each trial's index in `trials` and its
/// record as it finishes (in completion order). Every trial produces exactly one record:
/// scored, or an error with its reason.
pub async fn execute(
    plan: &Plan,
    trials: Vec<PlannedTrial>,
    providers: &HashMap<String, Arc<dyn Provider>>,
    options: &RunOptions,
    mut on_trial: impl FnMut(usize, TrialRecord),
) {
    let suite = &plan.suite;
    let scorers: Vec<CaseScorer<'_>> = suite
        .cases
        .iter()
        .map(|c| CaseScorer::new(suite, c))
        .collect();
    let prices: Vec<_> = plan
        .cells
        .iter()
        .map(|c| options.prices.lookup(&c.target.provider, &c.target.model))
        .collect();
    let run_one = |(index, t): (usize, PlannedTrial)| {
        let cell = &plan.cells[t.cell];
        let case = &suite.cases[t.case];
        let provider = providers.get(&cell.target.spec).cloned();
        let scorer = &scorers[t.case];
        let price = prices[t.cell];
        async move {
            let (request, key) = plan.request(t);
            let (kind, _) = case.effective(&cell.tool_choice);
            let mut record = TrialRecord {
                case_id: case.id.clone(),
                kind,
                tags: case.tags.clone(),
                target: cell.target.spec.clone(),
                variant: cell.variant.clone(),
                tool_choice: cell.tool_choice.clone(),
                repeat: t.repeat,
                messages: Vec::new(),
                response: None,
                checks: None,
                verdict: Verdict::Error,
                reasons: Vec::new(),
                cost_usd: None,
            };
            let result = match provider {
                Some(p) => p.complete(&request, &key).await.map_err(|e| e.to_string()),
                None => Err(format!("no provider for target `{}`", cell.target.spec)),
            };
            match result {
                Ok(mut response) => {
                    if response.usage.is_none() {
                        let tool_tokens = plan.tool_tokens(&cell.variant);
                        response.usage =
                            Some(tokens::estimate_usage(&request, &response, tool_tokens));
                    }
                    let (checks, reasons) = scorer.score(&cell.tool_choice, &response);
                    record.verdict = if reasons.is_empty() {
                        Verdict::Pass
                    } else {
                        Verdict::Fail
                    };
                    record.reasons = reasons;
                    record.checks = Some(checks);
                    if let (Some(p), Some(u)) = (price, response.usage) {
                        record.cost_usd = Some(p.cost(u.input_tokens, u.output_tokens));
                    }
                    record.response = Some(response);
                }
                Err(message) => record.reasons.push(Reason::new("provider_error", message)),
            }
            record.messages = request.messages;
            (index, record)
        }
    };
    let mut stream = futures::stream::iter(trials.into_iter().enumerate())
        .map(run_one)
        .buffer_unordered(options.concurrency.max(1));
    while let Some((index, record)) = stream.next().await {
        on_trial(index, record);
    }
}
