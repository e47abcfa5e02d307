//! A tool loop against a live (fake) OpenAI-compatible server: every round is a request,
//! `--record` tapes each round and the cassette replays the same episode offline, and a
//! run killed in the middle of an episode is finished by `--resume`, which plays that
//! episode again from its start.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::live::Fake;
use crate::support::{OK, Running, Toolgauge};

const SUITE: &str = r#"
name: live-loop
tools:
  - name: get_order
    description: Look up an order by id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  - name: get_shipment
    description: Look up a shipment by id.
    parameters: {type: object, properties: {shipment_id: {type: string}}, required: [shipment_id]}
mocks:
  get_order:
    - when: {order_id: A123}
      result: {order_id: A123, shipment_id: S9}
  get_shipment:
    - when: {shipment_id: S9}
      result: {status: in_transit, eta: "2026-12-03"}
cases:
  - id: order-then-shipment
    kind: should_call
    prompt: "我的订单 A123 到哪了？"
    expect:
      calls: [{tool: get_order, args: {order_id: A123}}]
      trajectory:
        steps:
          - {tool: get_order, args: {order_id: A123}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.shipment_id}}}
      final: {contains: ["12-03"], grounded: true}
"#;

/// An OpenAI chat completion answering with `message`.
fn completion(message: Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-loop",
        "object": "chat.completion",
        "created": 1_733_000_000,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    }))
}

fn call(id: &str, name: &str, args: Value) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function",
             "function": {"name": name, "arguments": args.to_string()}}
        ]}),
        "tool_calls",
    )
}

/// Which round a request is, from its last message: 1 (the prompt), 2 (after the
/// order), 3 (after the shipment).
fn round_of(body: &Value) -> u32 {
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    match (last["role"].as_str(), last["tool_call_id"].as_str()) {
        (Some("user"), _) => 1,
        (Some("tool"), Some("call_order")) => 2,
        (Some("tool"), Some("call_ship")) => 3,
        other => panic!("unexpected last message {other:?}: {last}"),
    }
}

/// A model that follows the trajectory, reading the shipment id from the order's
/// result as sent back in round 2. While `hang` is set, round 2 never answers.
fn model(hang: Arc<AtomicBool>) -> Fake {
    Fake::start(move |body, _| match round_of(body) {
        1 => call("call_order", "get_order", json!({"order_id": "A123"})),
        2 => {
            let messages = body["messages"].as_array().unwrap();
            let result: Value =
                serde_json::from_str(messages.last().unwrap()["content"].as_str().unwrap())
                    .unwrap();
            let answer = call(
                "call_ship",
                "get_shipment",
                json!({"shipment_id": result["shipment_id"]}),
            );
            if hang.load(Ordering::SeqCst) {
                answer.set_delay(Duration::from_secs(120))
            } else {
                answer
            }
        }
        _ => completion(
            json!({"role": "assistant", "content": "Your order A123 is in transit and arrives on 2026-12-03."}),
            "stop",
        ),
    })
}

fn target(fake: &Fake) -> String {
    format!("openai-compatible:loop-model@{}/v1", fake.uri())
}

fn journal(t: &Toolgauge, dir: &str) -> Vec<Value> {
    t.read(&format!("{dir}/trials.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What must be equal between two runs of one episode: the verdict and everything the
/// model and the tools said, round by round (timings aside).
fn episode_view(trial: &Value) -> Value {
    let rounds: Vec<Value> = trial["episode"]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!({
                "sent": r["sent"],
                "text": r["response"]["text"],
                "calls": r["response"]["tool_calls"],
                "results": r["outcomes"].as_array().map(|o| o.iter().map(|x| x["content"].clone()).collect::<Vec<_>>()),
            })
        })
        .collect();
    json!({
        "verdict": trial["verdict"],
        "reasons": trial["reasons"],
        "stop": trial["episode"]["stop"],
        "checks": trial["episode"]["checks"],
        "messages": trial["messages"],
        "rounds": rounds,
    })
}

#[test]
fn a_recorded_live_loop_replays_offline_with_the_same_episode_and_verdict() {
    let t = Toolgauge::new();
    t.write("loop.yaml", SUITE);
    let fake = model(Arc::default());
    let target = target(&fake);
    t.run(&[
        "run",
        "loop.yaml",
        "--target",
        &target,
        "--out",
        "live",
        "--record",
        "--cassette",
        "rec.jsonl",
    ])
    .expect_code(OK);
    // Three rounds, each one request; the tool results went back by call id.
    let seen = fake.seen();
    assert_eq!(seen.len(), 3);
    let round3 = &seen[2].body["messages"];
    assert_eq!(round3[2]["role"], "tool");
    assert_eq!(round3[2]["tool_call_id"], "call_order");
    assert_eq!(round3[4]["tool_call_id"], "call_ship");
    let live = journal(&t, "live");
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["verdict"], "pass", "{}", live[0]);
    assert_eq!(live[0]["episode"]["stop"], "answered");
    assert_eq!(live[0]["episode"]["rounds"].as_array().unwrap().len(), 3);
    // Cost and tokens count every round: 3 × (50 in, 10 out).
    let summary = t.run_dir("live").json("summary.json");
    let tokens = &summary["cells"][0]["metrics"]["tokens"];
    assert_eq!(
        (tokens["input"].as_u64(), tokens["output"].as_u64()),
        (Some(150), Some(30))
    );
    // One cassette entry per round.
    let tape = t.read("rec.jsonl");
    assert_eq!(tape.lines().count(), 1 + 3, "{tape}");
    drop(fake);

    // No server, no key: the cassette answers each round.
    t.run(&[
        "run",
        "loop.yaml",
        "--target",
        &target,
        "--out",
        "replayed",
        "--cassette",
        "rec.jsonl",
    ])
    .expect_code(OK);
    let replayed = journal(&t, "replayed");
    assert_eq!(episode_view(&live[0]), episode_view(&replayed[0]));
}

#[test]
fn a_run_killed_mid_episode_is_resumed_by_playing_the_episode_from_its_start() {
    let t = Toolgauge::new();
    t.write("loop.yaml", SUITE);
    let hang = Arc::new(AtomicBool::new(true));
    let fake = model(hang.clone());
    let target = target(&fake);
    let args = ["run", "loop.yaml", "--target", &target, "--out", "out"];
    let running = Running::start(t.command(&args), &args);
    // Round 2 has been asked (and hangs): kill the process mid-episode.
    let deadline = Instant::now() + Duration::from_secs(30);
    while fake.seen().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the episode never reached round 2"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-KILL", &running.pid().to_string()])
        .status()
        .expect("failed to run kill");
    assert!(status.success());
    let _ = running.finish();
    assert_eq!(
        t.read("out/trials.jsonl"),
        "",
        "an unfinished episode writes nothing"
    );

    hang.store(false, Ordering::SeqCst);
    t.run(&["run", "--resume", "out"]).expect_code(OK);
    let trials = journal(&t, "out");
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0]["verdict"], "pass", "{}", trials[0]);
    assert_eq!(trials[0]["episode"]["rounds"].as_array().unwrap().len(), 3);
    // The resumed run asked round 1 again: the episode was played from its start.
    let rounds: Vec<u32> = fake.seen().iter().map(|s| round_of(&s.body)).collect();
    assert_eq!(rounds, [1, 2, 1, 2, 3]);
}
