//! Tests of the episode runner against a test model that answers from prepared
//! responses and records every request it got, on suites compiled from YAML, with
//! expected conversations written out by hand.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::chat::{ToolCall, ToolChoice};
use crate::judge::{JudgeInput, judge_episode};
use crate::provider::{Provider, Request, TrialKey};
use crate::suite::Suite;
use crate::tools::{
    Decision, HostError, Invocation, Session, ToolErrorKind, ToolHost, ToolOutcome, suite_host,
};
use tokio::sync::Notify;

const SUITE: &str = r#"
tools:
  - name: get_order
    description: Look up an order.
    parameters: {type: object, properties: {order_id: {type: string}}}
  - name: get_shipment
    description: Track a shipment.
    parameters: {type: object, properties: {shipment_id: {type: string}}}
  - name: get_weather
    description: Weather in a city.
    parameters: {type: object, properties: {city: {type: string}}}
mocks:
  get_order:
    - when: {order_id: A123}
      result: {order_id: A123, shipment_id: S9}
    - error: {kind: not_found, message: "no such order"}
  get_shipment:
    - fail: {kind: rate_limit, times: 1}
      when: {shipment_id: S7}
    - when: {shipment_id: S9}
      result: {status: in_transit, eta: "2026-12-03"}
    - when: {shipment_id: S7}
      result: {status: delivered}
  get_weather:
    - when: {city: Paris}
      result: {temp: 18}
    - when: {city: Tokyo}
      result: {temp: 25}
cases:
  - id: order-then-shipment
    kind: should_call
    prompt: "我的订单 A123 到哪了？"
    limits: {max_rounds: 8, max_tool_calls: 12, max_identical_calls: 2}
    expect:
      trajectory:
        mode: in_order
        steps:
          - {tool: get_order, args: {order_id: A123}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.shipment_id}}}
      final: {contains: ["12-03"], grounded: true, no_success_after_error: true}
      stop: answered
  - id: follow-ups
    kind: should_call
    prompt: "我的订单 A123 到哪了？"
    turns: ["那什么时候到？", "谢谢"]
    expect:
      trajectory:
        steps:
          - {tool: get_order, args: {order_id: A123}}
  - id: tight
    kind: should_call
    prompt: "Weather?"
    limits: {max_rounds: 3, max_tool_calls: 3, max_identical_calls: 2}
    expect:
      trajectory:
        steps:
          - {tool: get_weather, args: {city: Paris}}
  - id: short-talk
    kind: should_call
    prompt: "Hello"
    turns: ["And then?"]
    limits: {max_rounds: 2}
    expect:
      trajectory:
        steps:
          - {tool: get_weather, args: {city: Paris}}
  - id: order-and-weather
    kind: should_call
    prompt: "Order A123, then the weather in Paris."
    expect:
      trajectory:
        mode: in_order
        steps:
          - {tool: get_order, args: {order_id: A123}}
          - {tool: get_weather, args: {city: Paris}}
"#;

fn suite() -> Suite {
    crate::suite::load_str(SUITE, Path::new("s.yaml"))
        .unwrap_or_else(|e| panic!("test suite does not load: {e}"))
}

/// The loop spec and first request of case `id`.
fn start(suite: &Suite, id: &str) -> (Arc<crate::suite::loops::EpisodeSpec>, Request) {
    let case = suite.cases.iter().find(|c| c.id == id).expect("case");
    let request = Request {
        messages: case.messages.clone(),
        tools: Arc::new(vec![]),
        tool_choice: ToolChoice::Auto,
    };
    (case.episode.clone().expect("a loop case"), request)
}

fn key(id: &str) -> TrialKey {
    TrialKey {
        case_id: id.into(),
        target: "test:model".into(),
        variant: "default".into(),
        tool_choice: ToolChoice::Auto,
        repeat: 0,
    }
}

type Answer = Box<dyn Fn(&Request) -> Result<Response, ProviderError> + Send + Sync>;

/// A model that answers from a list of prepared answers (then from `after`, if given)
/// and records every request it got.
struct TestModel {
    answers: Mutex<VecDeque<Result<Response, ProviderError>>>,
    after: Option<Answer>,
    seen: Mutex<Vec<Request>>,
}

impl TestModel {
    fn new(answers: Vec<Result<Response, ProviderError>>) -> TestModel {
        TestModel {
            answers: Mutex::new(answers.into()),
            after: None,
            seen: Mutex::default(),
        }
    }

    fn endless(answer: Answer) -> TestModel {
        TestModel {
            after: Some(answer),
            ..TestModel::new(vec![])
        }
    }

    fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for TestModel {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        self.seen.lock().unwrap().push(request.clone());
        if let Some(a) = self.answers.lock().unwrap().pop_front() {
            return a;
        }
        match &self.after {
            Some(f) => f(request),
            None => Err(ProviderError::NoScriptedResponse(Box::new(key.clone()))),
        }
    }

    fn source(&self) -> String {
        "test".into()
    }
}

fn call(id: Option<&str>, name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: id.map(str::to_string),
        name: name.into(),
        arguments: args.into(),
    }
}

fn calls(c: Vec<ToolCall>) -> Result<Response, ProviderError> {
    Ok(Response {
        tool_calls: c,
        usage: Some(Usage {
            input_tokens: 100,
            output_tokens: 10,
            estimated: false,
            ..Default::default()
        }),
        latency_ms: 5.0,
        ..Response::default()
    })
}

fn text(t: &str) -> Result<Response, ProviderError> {
    Ok(Response {
        text: Some(t.into()),
        usage: Some(Usage {
            input_tokens: 200,
            output_tokens: 20,
            estimated: false,
            ..Default::default()
        }),
        latency_ms: 7.0,
        ..Response::default()
    })
}

fn user(t: &str) -> Message {
    Message::User { content: t.into() }
}

fn tool(id: &str, name: &str, content: &str, is_error: bool) -> Message {
    Message::Tool {
        tool_call_id: id.into(),
        name: name.into(),
        content: content.into(),
        is_error,
    }
}

fn assistant(text: Option<&str>, c: Vec<ToolCall>, state: Option<serde_json::Value>) -> Message {
    Message::Assistant {
        content: text.map(str::to_string),
        tool_calls: c,
        state,
    }
}

fn judge(suite: &Suite, id: &str, outcome: &EpisodeOutcome) -> Vec<String> {
    let case = suite.cases.iter().find(|c| c.id == id).unwrap();
    let traits = tool_traits(suite, case);
    let input = JudgeInput {
        expect: case.loop_expect.as_ref().expect("loop expectations"),
        tools: &traits,
        norm: suite.norm,
    };
    let episode = outcome.transcript().expect("a finished episode");
    judge_episode(&input, &episode)
        .0
        .into_iter()
        .map(|r| r.code)
        .collect()
}

/// The dependent loop: the order's shipment id flows into the second call. The first
/// call comes without an id (assigned by round), the second with the provider's id and
/// opaque state, which must be sent back.
fn dependent_answers() -> Vec<Result<Response, ProviderError>> {
    let state = json!({"anthropic": {"content": [{"type": "thinking", "signature": "sig"}]}});
    let mut second = calls(vec![call(
        Some("toolu_2"),
        "get_shipment",
        r#"{"shipment_id":"S9"}"#,
    )])
    .unwrap();
    second.text = Some("Checking the shipment.".into());
    second.state = Some(state);
    vec![
        calls(vec![call(None, "get_order", r#"{"order_id":"A123"}"#)]),
        Ok(second),
        text("Your order A123 is in transit and arrives on 2026-12-03."),
    ]
}

#[tokio::test]
async fn a_dependent_loop_sends_each_result_back_by_call_id_and_passes_the_judge() {
    let suite = suite();
    let (spec, first) = start(&suite, "order-then-shipment");
    let model = TestModel::new(dependent_answers());
    let host = suite_host();
    let out = run_episode(
        &model,
        host.as_ref(),
        spec,
        first,
        &key("order-then-shipment"),
    )
    .await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(out.rounds.len(), 3);
    let seen = model.requests();
    assert_eq!(seen.len(), 3);
    let state = json!({"anthropic": {"content": [{"type": "thinking", "signature": "sig"}]}});
    let round3 = vec![
        user("我的订单 A123 到哪了？"),
        assistant(
            None,
            vec![call(
                Some("call_r0_0"),
                "get_order",
                r#"{"order_id":"A123"}"#,
            )],
            None,
        ),
        tool(
            "call_r0_0",
            "get_order",
            r#"{"order_id":"A123","shipment_id":"S9"}"#,
            false,
        ),
        assistant(
            Some("Checking the shipment."),
            vec![call(
                Some("toolu_2"),
                "get_shipment",
                r#"{"shipment_id":"S9"}"#,
            )],
            Some(state),
        ),
        tool(
            "toolu_2",
            "get_shipment",
            r#"{"status":"in_transit","eta":"2026-12-03"}"#,
            false,
        ),
    ];
    assert_eq!(seen[2].messages, round3);
    assert_eq!(seen[0].messages, round3[..1]);
    assert_eq!(seen[1].messages, round3[..3]);
    // The records point into the one shared conversation.
    assert_eq!(
        out.rounds.iter().map(|r| r.sent).collect::<Vec<_>>(),
        [1, 3, 5]
    );
    assert_eq!(out.sent(2), &round3[..]);
    assert_eq!(out.added(0), &round3[1..3]);
    assert_eq!(out.messages.len(), 6);
    assert_eq!(out.context, 1);
    assert_eq!(out.tool_calls(), 2);
    assert_eq!(
        out.usage(),
        Some(Usage {
            input_tokens: 400,
            output_tokens: 40,
            estimated: false,
            ..Default::default()
        })
    );
    assert_eq!(out.times_ms().0, 17.0);
    assert!(out.rounds[0].executed() && !out.rounds[2].executed());
    assert!(judge(&suite, "order-then-shipment", &out).is_empty());
    let t = out.transcript().unwrap();
    assert_eq!(t.context, ["我的订单 A123 到哪了？"]);
    assert_eq!(
        t.final_text(),
        Some("Your order A123 is in transit and arrives on 2026-12-03.")
    );
}

/// Issue 31: a call id reused across rounds (`c1` in round 1 and round 2) gets an id of
/// its own, and the round says so in its warnings; the results go back under distinct
/// ids.
#[tokio::test]
async fn a_call_id_reused_in_a_later_round_is_renamed_with_a_warning() {
    let suite = suite();
    let (spec, first) = start(&suite, "order-then-shipment");
    let model = TestModel::new(vec![
        calls(vec![call(
            Some("c1"),
            "get_order",
            r#"{"order_id":"A123"}"#,
        )]),
        calls(vec![call(
            Some("c1"),
            "get_shipment",
            r#"{"shipment_id":"S9"}"#,
        )]),
        text("It arrives on 2026-12-03."),
    ]);
    let host = suite_host();
    let out = run_episode(
        &model,
        host.as_ref(),
        spec,
        first,
        &key("order-then-shipment"),
    )
    .await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(
        out.rounds[0].response.tool_calls[0].id.as_deref(),
        Some("c1")
    );
    assert!(out.rounds[0].response.warnings.is_empty());
    let second = &out.rounds[1].response;
    assert_eq!(second.tool_calls[0].id.as_deref(), Some("call_r1_0"));
    assert_eq!(
        second.warnings,
        [
            "round 2: call id `c1` was already used in round 1; call 1 (`get_shipment`) was \
          given the id `call_r1_0` so that its result is not paired with the earlier call"
        ]
    );
    // What the model was sent in round 3: two calls, two results, two ids.
    let seen = model.requests();
    let ids: Vec<&str> = seen[2]
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["c1", "call_r1_0"]);
    assert!(judge(&suite, "order-then-shipment", &out).is_empty());
}

#[tokio::test]
async fn calls_in_the_wrong_order_fail_the_judge_with_wrong_order() {
    let suite = suite();
    let (spec, first) = start(&suite, "order-then-shipment");
    let model = TestModel::new(vec![
        calls(vec![call(None, "get_shipment", r#"{"shipment_id":"S9"}"#)]),
        calls(vec![call(None, "get_order", r#"{"order_id":"A123"}"#)]),
        text("It arrives on 2026-12-03."),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("o")).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    // The second call's id is assigned by its own round, so it differs from the first's.
    assert_eq!(
        out.rounds[1].response.tool_calls[0].id.as_deref(),
        Some("call_r1_0")
    );
    // The shipment id was guessed before any order result held it.
    let codes = judge(&suite, "order-then-shipment", &out);
    assert_eq!(codes, ["data_flow_broken"]);

    // Two independent steps, both made but in the reverse order.
    let (spec, first) = start(&suite, "order-and-weather");
    let model = TestModel::new(vec![
        calls(vec![call(None, "get_weather", r#"{"city":"Paris"}"#)]),
        calls(vec![call(None, "get_order", r#"{"order_id":"A123"}"#)]),
        text("Order A123 ships as S9; Paris is at 18 degrees."),
    ]);
    let out = run_episode(&model, host.as_ref(), spec, first, &key("w")).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(judge(&suite, "order-and-weather", &out), ["wrong_order"]);
}

/// Holds back the suite host's answers until `execute`, where the first call of a turn
/// waits until the second has finished: the executions finish out of call order.
#[derive(Debug)]
struct SecondFirst {
    inner: Arc<dyn ToolHost>,
    held: Mutex<std::collections::HashMap<u32, ToolOutcome>>,
    second_done: Notify,
    finished: Mutex<Vec<u32>>,
}

#[async_trait]
impl ToolHost for SecondFirst {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        self.inner.list(session).await
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        if let Decision::Settled(out) = self.inner.prepare(session, call) {
            self.held.lock().unwrap().insert(call.seq, out);
        }
        Decision::Execute
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        if call.seq == 1 {
            // `notify_one` stores a permit, so this wait can not miss the signal.
            self.second_done.notified().await;
        }
        self.finished.lock().unwrap().push(call.seq);
        if call.seq == 2 {
            self.second_done.notify_one();
        }
        Ok(self.held.lock().unwrap().remove(&call.seq).unwrap())
    }
}

#[tokio::test]
async fn parallel_calls_finishing_out_of_order_are_sent_back_in_call_order() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    let model = TestModel::new(vec![
        calls(vec![
            call(Some("a"), "get_weather", r#"{"city":"Tokyo"}"#),
            call(Some("b"), "get_weather", r#"{"city":"Paris"}"#),
        ]),
        text("Tokyo 25, Paris 18."),
    ]);
    let host = SecondFirst {
        inner: suite_host(),
        held: Mutex::default(),
        second_done: Notify::new(),
        finished: Mutex::default(),
    };
    // Executed one after the other, the first call would wait forever for the second.
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run_episode(&model, &host, spec, first, &key("tight")),
    )
    .await
    .expect("the calls of one turn run concurrently");
    assert_eq!(*host.finished.lock().unwrap(), [2, 1]);
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(
        model.requests()[1].messages[2..],
        [
            tool("a", "get_weather", r#"{"temp":25}"#, false),
            tool("b", "get_weather", r#"{"temp":18}"#, false),
        ]
    );
}

#[tokio::test]
async fn a_scripted_user_turn_left_when_the_rounds_run_out_stops_at_max_rounds() {
    let suite = suite();
    let (spec, first) = start(&suite, "short-talk");
    // A call takes round 1, so the answer of round 2 (the last) leaves the follow-up unsent.
    let model = TestModel::new(vec![
        calls(vec![call(Some("w"), "get_weather", r#"{"city":"Paris"}"#)]),
        text("18 degrees in Paris."),
        text("never asked"),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("short-talk")).await;
    assert_eq!(out.stop(), Some(StopReason::MaxRounds));
    assert_eq!(model.requests().len(), 2);
    // user, assistant call, tool result, assistant text: the follow-up was never sent.
    assert_eq!(out.messages.len(), 4);
    assert!(out.rounds.iter().all(|r| r.user.is_none()));
}

#[tokio::test]
async fn an_injected_rate_limit_reaches_the_model_as_an_error_and_a_retry_succeeds() {
    let suite = suite();
    let (spec, first) = start(&suite, "order-then-shipment");
    let model = TestModel::new(vec![
        calls(vec![call(None, "get_shipment", r#"{"shipment_id":"S7"}"#)]),
        calls(vec![call(None, "get_shipment", r#"{"shipment_id":"S7"}"#)]),
        text("Delivered."),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("o")).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    let failed = &out.rounds[0].outcomes[0];
    assert!(failed.is_error && failed.fault);
    assert_eq!(failed.error_kind, Some(ToolErrorKind::RateLimit));
    let seen = model.requests();
    assert_eq!(
        seen[1].messages[2],
        tool(
            "call_r0_0",
            "get_shipment",
            r#"{"error":{"kind":"rate_limit","message":"rate limit exceeded; retry later"}}"#,
            true
        )
    );
    assert_eq!(
        seen[2].messages[4],
        tool(
            "call_r1_0",
            "get_shipment",
            r#"{"status":"delivered"}"#,
            false
        )
    );
    let t = out.transcript().unwrap();
    let first_call = t.rounds[0].calls[0].outcome.as_ref().unwrap();
    assert!(first_call.injected && first_call.is_error);
    assert_eq!(first_call.error_kind.as_deref(), Some("rate_limit"));
}

#[tokio::test]
async fn scripted_user_turns_follow_each_text_answer() {
    let suite = suite();
    let (spec, first) = start(&suite, "follow-ups");
    let model = TestModel::new(vec![
        calls(vec![call(
            Some("c1"),
            "get_order",
            r#"{"order_id":"A123"}"#,
        )]),
        text("It ships as S9."),
        text("On 2026-12-03."),
        text("不客气。"),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("follow-ups")).await;
    assert_eq!(out.stop(), Some(StopReason::Answered));
    assert_eq!(out.rounds.len(), 4);
    let users: Vec<Option<&str>> = out.rounds.iter().map(|r| r.user.as_deref()).collect();
    assert_eq!(users, [None, None, Some("那什么时候到？"), Some("谢谢")]);
    let seen = model.requests();
    assert_eq!(
        seen[3].messages[3..],
        [
            assistant(Some("It ships as S9."), vec![], None),
            user("那什么时候到？"),
            assistant(Some("On 2026-12-03."), vec![], None),
            user("谢谢"),
        ]
    );
    // A round's added messages stop before the next round's user turn.
    assert_eq!(
        out.added(1),
        [assistant(Some("It ships as S9."), vec![], None)]
    );
    let t = out.transcript().unwrap();
    assert_eq!(t.rounds[2].user.as_deref(), Some("那什么时候到？"));
    assert_eq!(t.final_text(), Some("不客气。"));
    assert!(judge(&suite, "follow-ups", &out).is_empty());
}

#[tokio::test]
async fn an_endless_model_is_stopped_by_max_rounds_without_executing_the_last_turn() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    // A new city every round, so only the round limit (3) can stop it.
    let model = TestModel::endless(Box::new(|r: &Request| {
        calls(vec![call(
            None,
            "get_weather",
            &format!(r#"{{"city":"C{}"}}"#, r.round()),
        )])
    }));
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("tight")).await;
    assert_eq!(out.stop(), Some(StopReason::MaxRounds));
    assert_eq!(model.requests().len(), 3);
    assert_eq!(out.rounds.len(), 3);
    assert!(out.rounds[1].executed() && !out.rounds[2].executed());
    assert_eq!(out.tool_calls(), 2);
    let t = out.transcript().unwrap();
    assert_eq!(t.rounds[2].calls.len(), 1);
    assert!(t.rounds[2].calls[0].outcome.is_none());
    let codes = judge(&suite, "tight", &out);
    assert!(codes.iter().any(|c| c == "loop_stopped"), "{codes:?}");
}

#[tokio::test]
async fn an_endless_model_repeating_one_call_is_stopped_by_max_identical_calls() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    // Same call, keys in another order the second time: still identical.
    let model = TestModel::endless(Box::new(|r: &Request| {
        let args = if r.round() == 1 {
            r#"{ "city" : "Paris" }"#
        } else {
            r#"{"city":"Paris"}"#
        };
        calls(vec![call(None, "get_weather", args)])
    }));
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("tight")).await;
    // Two calls are allowed (max_identical_calls: 2); the third turn is not executed.
    assert_eq!(out.stop(), Some(StopReason::RepeatedCall));
    assert_eq!(out.rounds.len(), 3);
    assert_eq!(out.tool_calls(), 2);
    assert!(!out.rounds[2].executed());
}

#[tokio::test]
async fn a_turn_that_would_cross_max_tool_calls_is_not_executed() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    let model = TestModel::new(vec![
        calls(vec![
            call(Some("a"), "get_weather", r#"{"city":"Tokyo"}"#),
            call(Some("b"), "get_weather", r#"{"city":"Paris"}"#),
        ]),
        calls(vec![
            call(Some("c"), "get_weather", r#"{"city":"Rome"}"#),
            call(Some("d"), "get_weather", r#"{"city":"Oslo"}"#),
        ]),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &key("tight")).await;
    // 2 calls, then 2 more would make 4 > 3.
    assert_eq!(out.stop(), Some(StopReason::MaxToolCalls));
    assert_eq!(out.tool_calls(), 2);
    assert_eq!(out.rounds.len(), 2);
    assert!(!out.rounds[1].executed());
    assert_eq!(
        out.messages.len(),
        5,
        "no tool results after the stopped turn"
    );
}

#[tokio::test]
async fn a_provider_error_mid_episode_ends_it_as_an_error_keeping_earlier_rounds() {
    let suite = suite();
    let (spec, first) = start(&suite, "order-then-shipment");
    let k = key("order-then-shipment");
    let model = TestModel::new(vec![
        calls(vec![call(None, "get_order", r#"{"order_id":"A123"}"#)]),
        Err(ProviderError::Scripted(Box::new(k.clone()))),
        text("never sent"),
    ]);
    let host = suite_host();
    let out = run_episode(&model, host.as_ref(), spec, first, &k).await;
    assert_eq!(out.stop(), None);
    match &out.end {
        Err(e @ EpisodeError::Provider { round: 2, .. }) => assert_eq!(
            e.to_string(),
            "round 2: scripted provider error for case `order-then-shipment` in cell test:model × default × auto (repeat 0)"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(out.rounds.len(), 1);
    assert_eq!(
        out.rounds[0].outcomes[0].content,
        r#"{"order_id":"A123","shipment_id":"S9"}"#
    );
    assert_eq!(out.messages.len(), 3);
    assert_eq!(model.requests().len(), 2);
    assert!(out.transcript().is_err());
}

/// A host that can not answer anything (a crashed server).
#[derive(Debug)]
struct Broken;

#[async_trait]
impl ToolHost for Broken {
    async fn list(&self, _: &Session) -> Result<Vec<String>, HostError> {
        Ok(vec![])
    }

    fn prepare(&self, _: &mut Session, _: &Invocation) -> Decision {
        Decision::Execute
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        Err(HostError::Failed {
            host: "broken",
            tool: call.name.clone(),
            message: "connection reset".into(),
        })
    }
}

#[tokio::test]
async fn a_host_failure_ends_the_episode_as_an_error_and_keeps_the_round() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    let model = TestModel::new(vec![
        calls(vec![call(Some("a"), "get_weather", r#"{"city":"Paris"}"#)]),
        text("never asked"),
    ]);
    let out = run_episode(&model, &Broken, spec, first, &key("tight")).await;
    match &out.end {
        Err(e @ EpisodeError::Host { round: 1, .. }) => assert_eq!(
            e.to_string(),
            "round 1: tool host `broken` failed to answer a call of `get_weather`: connection reset"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(out.rounds.len(), 1);
    assert_eq!(out.rounds[0].response.tool_calls.len(), 1);
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn tool_traits_come_from_the_tools_and_the_policy() {
    let text = r#"
tools:
  - {name: lookup, description: Look up., parameters: {type: object}}
  - {name: cancel_order, description: Cancel., risk: high, idempotent: false, parameters: {type: object}}
mocks:
  lookup: [{result: 1}]
policy: {confirm: [cancel_order], answer: deny}
cases:
  - {id: c, kind: should_not_call, prompt: hi}
"#;
    let suite = crate::suite::load_str(text, Path::new("s.yaml")).unwrap();
    let traits = tool_traits(&suite, &suite.cases[0]);
    assert_eq!(traits[0], crate::judge::ToolTraits::plain("lookup"));
    assert_eq!(
        traits[1],
        crate::judge::ToolTraits {
            name: "cancel_order".into(),
            risky: true,
            idempotent: false,
            confirm: true
        }
    );
}

/// A host with per-episode resources: `open_episode` keeps a token in the session,
/// `execute_in` answers with it, `close_episode` records that it was released.
#[derive(Debug, Default)]
struct Resourced {
    opened: Mutex<u32>,
    closed: Mutex<Vec<String>>,
    refuse_open: bool,
}

#[async_trait]
impl ToolHost for Resourced {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        Ok(session.spec().tools.clone())
    }

    fn prepare(&self, _: &mut Session, _: &Invocation) -> Decision {
        Decision::Execute
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        Err(HostError::Failed {
            host: "resourced",
            tool: call.name.clone(),
            message: "needs the session".into(),
        })
    }

    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        let token = session.state::<String>().expect("opened");
        Ok(ToolOutcome::result(
            &json!({"token": *token, "seq": call.seq}),
        ))
    }

    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        if self.refuse_open {
            return Err(HostError::Unavailable {
                host: "resourced",
                message: "the server is gone".into(),
            });
        }
        let mut n = self.opened.lock().unwrap();
        *n += 1;
        session.set_state(crate::tools::EpisodeState(Arc::new(format!("episode-{n}"))));
        Ok(())
    }

    async fn close_episode(&self, session: &mut Session) {
        if let Some(s) = session.take_state() {
            let token = s.0.downcast::<String>().unwrap();
            self.closed.lock().unwrap().push((*token).clone());
        }
    }
}

#[tokio::test]
async fn a_host_opens_each_episode_its_calls_reach_what_it_opened_and_it_is_released() {
    let suite = suite();
    let inner = Arc::new(Resourced::default());
    // Behind the fault injector, as a suite's host is: the hooks pass through it.
    let host = crate::tools::Faults::new(inner.clone());
    for episode in 1..=2 {
        let (spec, first) = start(&suite, "tight");
        let model = TestModel::new(vec![
            calls(vec![call(Some("a"), "get_weather", r#"{"city":"Oslo"}"#)]),
            text("done"),
        ]);
        let out = run_episode(&model, &host, spec, first, &key("tight")).await;
        assert_eq!(out.stop(), Some(StopReason::Answered));
        assert_eq!(
            out.rounds[0].outcomes[0].content,
            format!(r#"{{"token":"episode-{episode}","seq":1}}"#)
        );
    }
    assert_eq!(*inner.closed.lock().unwrap(), ["episode-1", "episode-2"]);
}

#[tokio::test]
async fn a_host_that_can_not_open_the_episode_ends_it_as_an_error_before_any_round() {
    let suite = suite();
    let (spec, first) = start(&suite, "tight");
    let model = TestModel::new(vec![text("never asked")]);
    let host = Resourced {
        refuse_open: true,
        ..Resourced::default()
    };
    let out = run_episode(&model, &host, spec, first, &key("tight")).await;
    assert!(out.rounds.is_empty());
    assert!(model.requests().is_empty());
    let err = out.end.unwrap_err().to_string();
    assert_eq!(
        err,
        "round 1: tool host `resourced` could not start the episode: the server is gone"
    );
}
