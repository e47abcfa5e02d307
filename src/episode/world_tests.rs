//! Tests of the episode runner with a built-in world (`world:`): tools withheld until a
//! user turn, and the per-turn round limit, answered by BFCL's math backend.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::*;
use crate::chat::{ToolCall, ToolChoice, ToolDefinition};
use crate::provider::{Provider, Request, TrialKey};
use crate::tools::suite_host;

const SUITE: &str = r#"
tools:
  - name: add
    description: Add two numbers.
    parameters: {type: object, properties: {a: {type: number}, b: {type: number}}}
  - name: mean
    description: The mean of numbers.
    parameters: {type: object, properties: {numbers: {type: array, items: {type: number}}}}
cases:
  - id: later
    kind: should_call
    prompt: "1 + 2?"
    turns: ["平均值呢？", "Thanks"]
    withheld: {mean: 2}
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI]}}
  - id: busy
    kind: should_call
    prompt: "1 + 2?"
    turns: ["And again?"]
    limits: {max_rounds_per_turn: 2, max_identical_calls: 10}
    expect: {any_call: true}
    world: {bfcl: {classes: [MathAPI]}}
"#;

/// A model that calls `add` while `calls` lasts, then answers in text; it records the
/// tools offered in every request.
struct Model {
    calls: Mutex<Vec<bool>>,
    offered: Mutex<Vec<Vec<String>>>,
}

#[async_trait]
impl Provider for Model {
    async fn complete(&self, request: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
        self.offered
            .lock()
            .unwrap()
            .push(request.tools.iter().map(|t| t.name.clone()).collect());
        let call = {
            let mut c = self.calls.lock().unwrap();
            if c.is_empty() { false } else { c.remove(0) }
        };
        Ok(Response {
            tool_calls: if call {
                vec![ToolCall {
                    id: None,
                    name: "add".into(),
                    arguments: r#"{"a":1,"b":2}"#.into(),
                }]
            } else {
                Vec::new()
            },
            text: (!call).then(|| "3".to_string()),
            ..Response::default()
        })
    }

    fn source(&self) -> String {
        "test".into()
    }
}

async fn play(id: &str, calls: Vec<bool>) -> (EpisodeOutcome, Vec<Vec<String>>) {
    let suite = crate::suite::load_str(SUITE, Path::new("s.yaml")).unwrap();
    let case = suite.cases.iter().find(|c| c.id == id).unwrap();
    let tools = suite
        .tools
        .iter()
        .map(|t| ToolDefinition {
            name: t.name.clone(),
            description: String::new(),
            parameters: Arc::new(t.parameters.as_ref().clone()),
        })
        .collect();
    let first = Request {
        messages: case.messages.clone(),
        tools: Arc::new(tools),
        tool_choice: ToolChoice::Auto,
    };
    let model = Model {
        calls: Mutex::new(calls),
        offered: Mutex::default(),
    };
    let key = TrialKey {
        case_id: id.into(),
        target: "test:model".into(),
        variant: "default".into(),
        tool_choice: ToolChoice::Auto,
        repeat: 0,
    };
    let host = suite_host();
    let out = run_episode(
        &model,
        host.as_ref(),
        case.episode.clone().unwrap(),
        first,
        &key,
    )
    .await;
    let offered = model.offered.lock().unwrap().clone();
    (out, offered)
}

#[tokio::test]
async fn a_withheld_tool_is_offered_from_its_turn_on_and_the_world_answers() {
    let (out, offered) = play("later", vec![true, false, false, false]).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(
        offered,
        [vec!["add"], vec!["add"], vec!["add"], vec!["add", "mean"]],
        "`mean` comes with the second scripted turn, after the others"
    );
    // BFCL's math backend answered, in BFCL's own text.
    assert_eq!(out.rounds[0].outcomes[0].content, r#"{"result": 3}"#);
}

#[tokio::test]
async fn the_round_over_the_per_turn_limit_is_answered_then_the_loop_stops() {
    let (out, _) = play("busy", vec![true; 10]).await;
    assert_eq!(out.stop(), Some(StopReason::MaxRounds));
    assert_eq!(
        out.rounds.len(),
        3,
        "two rounds allowed, the third goes over"
    );
    assert!(out.rounds.iter().all(|r| r.outcomes.len() == 1));
    // A text answer starts a new turn and the count again.
    let (out, _) = play("busy", vec![true, true, false, true, true, false]).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(out.rounds.len(), 6);
}
