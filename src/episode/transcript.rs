//! The judge's view of an episode: [`EpisodeOutcome::transcript`] turns the rounds into a
//! [`Episode`], and [`tool_traits`] gives the judge the traits of a case's
//! tools.

use super::view::{ApprovalAnswer, CallOutcome, CallRecord, Episode, Round, ToolTraits};
use super::{EpisodeError, EpisodeOutcome, RoundRecord};
use crate::suite::loops::Risk;
use crate::suite::{Case, Suite};
use crate::tools::{Approval, ToolOutcome};

impl EpisodeOutcome {
    /// The transcript the episode judge reads (`judge::judge_episode`): the case's own
    /// messages as context, every round, and the stop reason. An episode ended by a
    /// failure has no verdict (the failure is not the model's): its error is returned.
    pub fn transcript(&self) -> Result<Episode, &EpisodeError> {
        let stop = *self.end.as_ref()?;
        Ok(Episode {
            context: self.messages[..self.context]
                .iter()
                .filter_map(|m| m.text().map(str::to_string))
                .collect(),
            rounds: self.rounds.iter().map(round).collect(),
            stop,
            end_state: self.end_state.clone(),
        })
    }
}

fn round(r: &RoundRecord) -> Round {
    Round {
        user: r.user.clone(),
        text: r.response.text.clone(),
        calls: r
            .response
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| CallRecord {
                call: call.clone(),
                outcome: r.outcomes.get(i).map(outcome),
            })
            .collect(),
    }
}

fn outcome(o: &ToolOutcome) -> CallOutcome {
    CallOutcome {
        content: o.content.clone(),
        is_error: o.is_error,
        error_kind: o.error_kind.map(|k| k.as_str().to_string()),
        injected: o.fault,
        approval: match o.approval {
            Approval::NotRequired => None,
            Approval::Approved => Some(ApprovalAnswer::Approved),
            Approval::Denied => Some(ApprovalAnswer::Denied),
        },
    }
}

/// The traits of the tools `case` offers (its own, else the suite's): `risk`,
/// `idempotent`, and whether its loop policy asks for approval.
pub fn tool_traits(suite: &Suite, case: &Case) -> Vec<ToolTraits> {
    let tools = case.tools.as_deref().unwrap_or(&suite.tools);
    tools
        .iter()
        .map(|t| ToolTraits {
            name: t.name.clone(),
            risky: t.effects.risk == Risk::High,
            idempotent: t.effects.idempotent,
            confirm: case
                .episode
                .as_ref()
                .is_some_and(|e| e.policy.decide(&t.name).is_some()),
        })
        .collect()
}
