//! The oracle's self-test of a loop case: play the whole episode against the suite's
//! mocks (the same runner and tool host a run uses) and judge it, so what no model can
//! satisfy is named before a model is paid for.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::episode::{Conduct, answer_round};
use super::merge;
use crate::chat::{ToolChoice, ToolDefinition};
use crate::judge::calls::CaseScorer;
use crate::judge::{JudgeInput, judge_episode};
use crate::provider::{Provider, ProviderError, Request, Response, TrialKey};
use crate::suite::trajectory::LoopExpectation;
use crate::suite::{Case, Expectation, Suite};

/// What the oracle can not satisfy in an episode of loop case `case` under `mode`
/// (and `variant`, `None` for the tools' own schemas), offered `tools`: what it noted
/// while playing, the reasons an explicit `calls` expectation gives its first round,
/// and the judge's reasons against the whole episode. Empty when it passes, and for a
/// case that is not a loop.
pub fn loop_unmet(
    suite: &Suite,
    case: &Case,
    variant: Option<&str>,
    mode: &ToolChoice,
    tools: &[ToolDefinition],
) -> Vec<String> {
    let Some(spec) = case.episode.clone() else {
        return Vec::new();
    };
    let v = variant.unwrap_or("default");
    let first = Request {
        messages: suite.messages_in(case, v).into_owned(),
        tools: Arc::new(tools.to_vec()),
        tool_choice: mode.clone(),
    };
    let key = TrialKey {
        case_id: case.id.clone(),
        target: "scripted:oracle".into(),
        variant: v.to_string(),
        tool_choice: mode.clone(),
        repeat: 0,
    };
    let player = Player {
        suite,
        case,
        variant: v,
        notes: Mutex::default(),
    };
    let host = crate::tools::suite_host();
    // The scripted model answers at once and the mock host settles every call when it
    // is prepared, so the episode needs no runtime's timers or sockets.
    let out = futures::executor::block_on(crate::episode::run_episode(
        &player,
        host.as_ref(),
        spec,
        first,
        &key,
    ));
    let mut what = player.notes.into_inner().unwrap_or_else(|e| e.into_inner());
    let (_, expect) = case.effective(mode);
    let explicit = !matches!(expect, Expectation::Calls(c) if c.calls.is_empty());
    if explicit && let Some(r) = out.rounds.first() {
        let scorer = CaseScorer::new(suite, case);
        let (_, reasons) = match variant {
            Some(v) => scorer.score_variant(v, mode, &r.response),
            None => scorer.score(mode, &r.response),
        };
        what = merge(
            what,
            reasons
                .into_iter()
                .map(|r| format!("first round: {}: {}", r.code, r.message))
                .collect(),
        );
    }
    match out.transcript() {
        Ok(episode) => {
            let none = LoopExpectation::default();
            let traits = crate::episode::tool_traits(suite, case);
            let input = JudgeInput {
                expect: case.loop_expect.as_ref().unwrap_or(&none),
                tools: &traits,
                norm: suite.norm,
            };
            let (reasons, _) = judge_episode(&input, &episode);
            what = merge(
                what,
                reasons
                    .into_iter()
                    .map(|r| format!("{}: {}", r.code, r.message))
                    .collect(),
            );
        }
        Err(e) => what.push(format!("the episode could not be played: {e}")),
    }
    what
}

/// The oracle as a provider, keeping what it could not satisfy in each round.
struct Player<'a> {
    suite: &'a Suite,
    case: &'a Case,
    variant: &'a str,
    notes: Mutex<Vec<String>>,
}

#[async_trait]
impl Provider for Player<'_> {
    async fn complete(&self, request: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
        let a = answer_round(
            self.suite,
            self.case,
            self.variant,
            request,
            Conduct::Oracle,
            false,
        );
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        let merged = merge(std::mem::take(&mut *notes), a.unmet);
        *notes = merged;
        Ok(a.response)
    }

    fn source(&self) -> String {
        "scripted:oracle (self-test)".into()
    }
}
