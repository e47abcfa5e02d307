//! Shared fixtures of the loop benches (`episodes`, `episode_memory`): the loop suite
//! of `benches/data/episode.yaml`, loaded with the public suite loader, and a bench
//! model that plays a fixed number of rounds.
//!
//! The bench model stands for the scripted model (which learns loops in issue 11): one
//! call per round, alternating an order and its shipment with new arguments every
//! round so no limit fires, then a text answer in the last round. It works out its
//! round from the length of the conversation it is sent (one prompt message, then an
//! assistant turn and a tool result per round), so answering costs the same in every
//! round and the figures show the harness, not the model.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use toolgauge::episode::{EpisodeOutcome, run_episode, tool_traits};
use toolgauge::judge::calls::Reason;
use toolgauge::judge::{JudgeInput, ToolTraits, judge_episode};
use toolgauge::provider::{
    Provider, ProviderError, Request, Response, ToolCall, ToolChoice, TrialKey, Usage,
};
use toolgauge::suite::Suite;
use toolgauge::suite::loops::EpisodeSpec;
use toolgauge::tools::ToolHost;

/// The loop suite (YAML).
pub const SUITE_YAML: &str = include_str!("../data/episode.yaml");

/// The final answer of the 10-round episode: every id and date in it is grounded.
pub const FINAL: &str = "Orders A100 and A102 are in transit (shipments S100 and S102) and \
arrive on 2026-12-03; A104 and A106 were delivered on 2026-11-28 (S104, S106); A108 is archived.";

/// The loop suite, loaded and compiled as `toolgauge run` does.
pub fn suite() -> Suite {
    toolgauge::suite::load_str(SUITE_YAML, Path::new("benches/data/episode.yaml"))
        .unwrap_or_else(|e| panic!("the bench loop suite does not load:\n{e}"))
}

/// Everything one case needs to play and judge episodes, prepared once as a runner
/// would: the loop spec, the first request, the tool traits.
pub struct Prepared {
    /// The suite.
    pub suite: Suite,
    /// The case's loop spec (limits as written, or raised by [`Prepared::with_rounds`]).
    pub spec: Arc<EpisodeSpec>,
    /// The first request (the case's messages, no tool definitions: the bench model
    /// does not read them).
    pub first: Request,
    /// The traits of the case's tools.
    pub traits: Vec<ToolTraits>,
    /// The trial key.
    pub key: TrialKey,
}

impl Prepared {
    /// The suite's one case, limits as written (100 rounds, 1,000 calls).
    pub fn new() -> Prepared {
        let suite = suite();
        let case = &suite.cases[0];
        let spec = case.episode.clone().expect("the bench case is a loop");
        let first = Request {
            messages: case.messages.clone(),
            tools: Arc::new(vec![]),
            tool_choice: ToolChoice::Auto,
        };
        let traits = tool_traits(&suite, case);
        let key = TrialKey {
            case_id: case.id.clone(),
            target: "bench:loop".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        };
        Prepared {
            suite,
            spec,
            first,
            traits,
            key,
        }
    }

    /// The same case with limits that let an episode of `rounds` rounds finish (a
    /// suite may not set more than 100 rounds; the memory bench goes past that).
    pub fn with_rounds(rounds: usize) -> Prepared {
        let mut p = Prepared::new();
        let mut spec = (*p.spec).clone();
        spec.limits.max_rounds = rounds as u32;
        spec.limits.max_tool_calls = rounds as u32;
        p.spec = Arc::new(spec);
        p
    }

    /// Play one episode against `model` with `host`.
    pub async fn play(&self, model: &BenchModel, host: &dyn ToolHost) -> EpisodeOutcome {
        run_episode(
            model,
            host,
            self.spec.clone(),
            self.first.clone(),
            &self.key,
        )
        .await
    }

    /// Judge a finished episode: its failure reasons.
    pub fn judge(&self, outcome: &EpisodeOutcome) -> Vec<Reason> {
        let case = &self.suite.cases[0];
        let input = JudgeInput {
            expect: case.loop_expect.as_ref().expect("loop expectations"),
            tools: &self.traits,
            norm: self.suite.norm,
        };
        let episode = outcome.transcript().expect("the episode finished");
        judge_episode(&input, &episode).0
    }
}

/// The bench model: `rounds - 1` rounds of one call each, then [`FINAL`].
pub struct BenchModel {
    /// Rounds per episode.
    pub rounds: usize,
    /// Called before and after each answer (the memory bench reads its allocation
    /// counter there); `None` in the timing bench.
    pub probe: Option<Box<dyn Fn(Phase) + Send + Sync>>,
}

/// Where the model is when it calls its probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A request arrived (the harness's work for the round before it is done).
    Asked,
    /// The answer is built (what follows is the harness's work for this round).
    Answered,
}

impl BenchModel {
    /// A model that plays `rounds` rounds.
    pub fn new(rounds: usize) -> BenchModel {
        BenchModel {
            rounds,
            probe: None,
        }
    }

    /// The answer of round `round` (0-based).
    pub fn answer(&self, round: usize) -> Response {
        let usage = Some(Usage {
            input_tokens: 120 + 40 * round as u64,
            output_tokens: 20,
            estimated: false,
            ..Default::default()
        });
        if round + 1 >= self.rounds {
            return Response {
                text: Some(FINAL.to_string()),
                usage,
                ..Response::default()
            };
        }
        // Orders A100, A102, ... and after each the shipment the order's result names.
        let n = 100 + round - round % 2;
        let (name, arguments) = if round.is_multiple_of(2) {
            ("get_order", format!(r#"{{"order_id":"A{n}"}}"#))
        } else {
            ("get_shipment", format!(r#"{{"shipment_id":"S{n}"}}"#))
        };
        Response {
            tool_calls: vec![ToolCall {
                id: None,
                name: name.to_string(),
                arguments,
            }],
            usage,
            ..Response::default()
        }
    }
}

#[async_trait]
impl Provider for BenchModel {
    async fn complete(&self, request: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
        if let Some(p) = &self.probe {
            p(Phase::Asked);
        }
        // One prompt message, then an assistant turn and one tool result per round.
        let answer = self.answer((request.messages.len() - 1) / 2);
        if let Some(p) = &self.probe {
            p(Phase::Answered);
        }
        Ok(answer)
    }

    fn source(&self) -> String {
        "bench".into()
    }
}
