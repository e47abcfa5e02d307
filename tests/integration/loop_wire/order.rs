//! A turn of three parallel calls whose executions finish out of call order: the
//! results still go back in call order, each with its own call's id, on every
//! provider's wire.
//!
//! The host ([`OutOfOrder`]) wraps the suite's mock host and holds each answer back
//! until its turn to finish comes, in a set order (call 3, then 1, then 2): no timing
//! is involved, so the order never depends on the machine. Were the calls executed one
//! after another, call 1 would wait for ever for call 3: a time limit far above the
//! test's real length turns that into a failure rather than a hang.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolgauge::episode::EpisodeOutcome;
use toolgauge::provider::Provider;
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::{
    Decision, HostError, Invocation, Session, ToolHost, ToolOutcome, suite_host,
};

use super::gemini::text_answer;
use super::ollama::{ollama_calls, ollama_text};
use super::*;

/// The order the first turn's calls (episode call numbers 1 to 3) finish in.
const RELEASE: [u32; 3] = [3, 1, 2];

/// Answers as `inner` decides, but finishes the calls numbered in `release` in that
/// order: each waits for the one released before it.
#[derive(Debug)]
struct OutOfOrder {
    inner: Arc<dyn ToolHost>,
    release: Vec<u32>,
    gates: HashMap<u32, Arc<Notify>>,
    held: Mutex<HashMap<u32, ToolOutcome>>,
    finished: Mutex<Vec<u32>>,
}

impl OutOfOrder {
    fn new(inner: Arc<dyn ToolHost>, release: &[u32]) -> OutOfOrder {
        let gates: HashMap<u32, Arc<Notify>> = release
            .iter()
            .map(|seq| (*seq, Arc::new(Notify::new())))
            .collect();
        // The first to finish may go at once (the permit waits for it).
        gates[&release[0]].notify_one();
        OutOfOrder {
            inner,
            release: release.to_vec(),
            gates,
            held: Mutex::default(),
            finished: Mutex::default(),
        }
    }
}

#[async_trait]
impl ToolHost for OutOfOrder {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        self.inner.list(session).await
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        match self.inner.prepare(session, call) {
            Decision::Settled(out) if self.gates.contains_key(&call.seq) => {
                self.held.lock().unwrap().insert(call.seq, out);
                Decision::Execute
            }
            other => other,
        }
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        let Some(gate) = self.gates.get(&call.seq) else {
            return self.inner.execute(call).await;
        };
        gate.notified().await;
        let out = self
            .held
            .lock()
            .unwrap()
            .remove(&call.seq)
            .expect("an answer held for this call");
        let mut finished = self.finished.lock().unwrap();
        finished.push(call.seq);
        if let Some(next) = self.release.get(finished.len()) {
            self.gates[next].notify_one();
        }
        Ok(out)
    }
}

const SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather in a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
  - name: sum
    description: Add two integers.
    parameters: {type: object, properties: {x: {type: integer}, y: {type: integer}}, required: [x, y]}
mocks:
  get_weather:
    - when: {city: Tokyo}
      result: {temp_c: 25}
    - when: {city: Paris}
      result: {temp_c: 18}
    - when: {city: Oslo}
      result: {temp_c: 4}
  sum:
    - when: {x: 2, y: 1}
      result: {sum: 3}
    - when: {x: 4, y: 3}
      result: {sum: 7}
    - when: {x: 6, y: 5}
      result: {sum: 11}
cases:
  - id: three-at-once
    kind: should_call
    prompt: "Three things at once, please."
    expect:
      trajectory:
        mode: subset
        steps:
          - {tool: get_weather}
"#;

/// Play the case with `provider` through the out-of-order host; returns the outcome
/// and the order the calls finished in.
async fn play(target: &str, provider: &dyn Provider) -> (EpisodeOutcome, Vec<u32>) {
    let trial = Trial::new(SUITE, "three-at-once", target);
    let host = OutOfOrder::new(suite_host(), &RELEASE);
    let outcome = tokio::time::timeout(Duration::from_secs(120), trial.play_with(provider, &host))
        .await
        .expect("the turn's calls did not run concurrently (the out-of-order host deadlocked)");
    let finished = host.finished.lock().unwrap().clone();
    (outcome, finished)
}

fn weather(temp: u32) -> String {
    format!(r#"{{"temp_c":{temp}}}"#)
}

#[tokio::test]
async fn ollama_results_go_back_in_call_order_with_their_ids() {
    let calls = [
        ("call_t0ky0aaa", "get_weather", json!({"city": "Tokyo"})),
        ("call_par1sbbb", "get_weather", json!({"city": "Paris"})),
        ("call_0sl0cccc", "get_weather", json!({"city": "Oslo"})),
    ];
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&ollama_calls(&calls))],
            vec![ok(&ollama_text("25, 18 and 4 °C."))],
        ],
    )
    .await;
    let target = format!("ollama:llama3.2@{}/v1", server.uri());
    let (outcome, finished) = play(&target, keyless(&target, fast()).as_ref()).await;
    assert_eq!(finished, RELEASE);
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    let expected = [
        tool("call_t0ky0aaa", "get_weather", &weather(25), false),
        tool("call_par1sbbb", "get_weather", &weather(18), false),
        tool("call_0sl0cccc", "get_weather", &weather(4), false),
    ];
    assert_eq!(tool_messages(&outcome), expected);
    let seen = bodies(&server).await;
    let sent: Vec<(&Value, &Value)> = seen[1]["messages"].as_array().unwrap()[2..]
        .iter()
        .map(|m| (&m["tool_call_id"], &m["content"]))
        .collect();
    assert_eq!(
        sent,
        [
            (&json!("call_t0ky0aaa"), &json!(weather(25))),
            (&json!("call_par1sbbb"), &json!(weather(18))),
            (&json!("call_0sl0cccc"), &json!(weather(4))),
        ]
    );
}

#[tokio::test]
async fn anthropic_results_go_back_in_call_order_in_one_user_message() {
    // Three calls of the recorded `tool_use` shape (the recording holds one).
    let mut answer = testdata("anthropic/msg_single_tool_use.json");
    let recorded = answer["content"][0].clone();
    let block = |id: &str, city: &str| {
        let mut b = recorded.clone();
        b["id"] = json!(id);
        b["input"] = json!({"city": city});
        b
    };
    answer["content"] = json!([
        block("toolu_01Tokyo", "Tokyo"),
        block("toolu_02Paris", "Paris"),
        block("toolu_03Oslo", "Oslo")
    ]);
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&answer)],
            vec![ok(&testdata("anthropic/msg_text_end_turn.json"))],
        ],
    )
    .await;
    let target = format!("anthropic:claude-haiku-4-5-20251001@{}/v1", server.uri());
    let (outcome, finished) = play(&target, keyed(&target, fast()).as_ref()).await;
    assert_eq!(finished, RELEASE);
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(
        tool_messages(&outcome),
        [
            tool("toolu_01Tokyo", "get_weather", &weather(25), false),
            tool("toolu_02Paris", "get_weather", &weather(18), false),
            tool("toolu_03Oslo", "get_weather", &weather(4), false),
        ]
    );
    let seen = bodies(&server).await;
    let result = |id: &str, temp: u32| json!({"type": "tool_result", "tool_use_id": id, "content": weather(temp)});
    assert_eq!(
        seen[1]["messages"][2],
        json!({"role": "user", "content": [
            result("toolu_01Tokyo", 25),
            result("toolu_02Paris", 18),
            result("toolu_03Oslo", 4)
        ]})
    );
    assert_eq!(seen[1]["messages"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn gemini_results_without_ids_go_back_by_position_in_call_order() {
    // The recorded three same-named calls: only the position tells their results
    // apart, so a result out of place would answer the wrong sum.
    let server = serve(
        model_turns,
        vec![
            vec![ok(&testdata("gemini/function_call_parallel.json"))],
            vec![ok(&text_answer("3, 7 and 11."))],
        ],
    )
    .await;
    let target = format!("gemini:gemini-2.5-pro@{}/v1beta", server.uri());
    let (outcome, finished) = play(&target, keyed(&target, fast()).as_ref()).await;
    assert_eq!(finished, RELEASE);
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(
        tool_messages(&outcome),
        [
            tool("call_r0_0", "sum", r#"{"sum":3}"#, false),
            tool("call_r0_1", "sum", r#"{"sum":7}"#, false),
            tool("call_r0_2", "sum", r#"{"sum":11}"#, false),
        ]
    );
    let seen = bodies(&server).await;
    let response = |n: u32| json!({"functionResponse": {"name": "sum", "response": {"sum": n}}});
    assert_eq!(
        seen[1]["contents"][2],
        json!({"role": "user", "parts": [response(3), response(7), response(11)]})
    );
}
