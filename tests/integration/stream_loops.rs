//! Streamed answers end to end through the CLI (issue 31):
//!
//! - a tool loop against fake Anthropic and Gemini servers that answer every round with
//!   server-sent events of the providers' recorded shapes (see
//!   `src/provider/testdata/*/stream_*.sse`), recorded with `--stream --record`, then
//!   replayed from the cassette with no server and no key: the same verdicts, calls,
//!   results and rounds;
//! - the time to first token against a server that pauses a known time before its first
//!   event and again before the rest.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::live::{Fake, Seen};
use crate::support::{OK, Toolgauge, read_back};

const KEY: &str = "sk-test-stream-loop-000111222333";

/// A dependent loop: the shipment id the first call returns is the second call's
/// argument, and the final answer states the date the second result gave.
const SUITE: &str = r#"
name: stream-loop
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
    prompt: "Where is my order A123?"
    expect:
      calls: [{tool: get_order, args: {order_id: A123}}]
      trajectory:
        steps:
          - {tool: get_order, args: {order_id: A123}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.shipment_id}}}
      final: {contains: ["12-03"], grounded: true}
      stop: answered
"#;

const ANSWER: &str = "Your order A123 is in transit and arrives on 2026-12-03.";

/// What the fake model says in a round, decided by how many tool results the request
/// carries: ask for the order, then for the shipment the order's result names, then
/// answer.
enum Turn {
    Call(&'static str, &'static str, Value),
    Text(&'static str),
}

fn turn(results: usize, body: &Value) -> Turn {
    match results {
        0 => Turn::Call("toolu_order", "get_order", json!({"order_id": "A123"})),
        1 => {
            // The shipment id comes from the result sent back (S9 from the mock).
            let shipment = if body.to_string().contains("S9") {
                "S9"
            } else {
                "no-result-seen"
            };
            Turn::Call(
                "toolu_ship",
                "get_shipment",
                json!({"shipment_id": shipment}),
            )
        }
        _ => Turn::Text(ANSWER),
    }
}

/// `text` in pieces of at most 5 characters, as a stream delivers it.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(5).map(|c| c.iter().collect()).collect()
}

fn sse_reply(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// An Anthropic Messages stream of the recorded shape (`stream_text_then_tool_use.sse`):
/// `message_start`, one content block in deltas, `message_delta` with the stop reason
/// and output usage, `message_stop`.
fn anthropic_sse(turn: &Turn) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_loop", "type": "message", "role": "assistant",
            "model": "claude-haiku-4-5", "content": [], "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": 50, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1}}}),
    )];
    let (block, deltas, stop) = match turn {
        Turn::Call(id, name, args) => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            pieces(&args.to_string())
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect::<Vec<_>>(),
            "tool_use",
        ),
        Turn::Text(text) => (
            json!({"type": "text", "text": ""}),
            pieces(text)
                .into_iter()
                .map(|p| json!({"type": "text_delta", "text": p}))
                .collect(),
            "end_turn",
        ),
    };
    events.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
    ));
    events.push(("ping", json!({"type": "ping"})));
    for d in deltas {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": d}),
        ));
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A Gemini `streamGenerateContent?alt=sse` stream of the recorded shape
/// (`stream_function_call_short.sse`): a call comes whole in one chunk; a text in
/// several, the last with the finish reason and the usage.
fn gemini_sse(turn: &Turn) -> String {
    let usage = json!({"promptTokenCount": 50, "candidatesTokenCount": 10, "totalTokenCount": 60});
    let chunk = |parts: Value, last: bool| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        let mut c = json!({"candidates": [], "modelVersion": "gemini-2.5-flash"});
        if last {
            candidate["finishReason"] = json!("STOP");
            c["usageMetadata"] = usage.clone();
        }
        c["candidates"] = json!([candidate]);
        format!("data: {c}\r\n\r\n")
    };
    match turn {
        Turn::Call(_, name, args) => chunk(
            json!([{"functionCall": {"name": name, "args": args}}]),
            true,
        ),
        Turn::Text(text) => {
            let parts = pieces(text);
            let n = parts.len();
            parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| chunk(json!([{"text": p}]), i + 1 == n))
                .collect()
        }
    }
}

/// Tool results in an Anthropic request: its `tool_result` blocks.
fn anthropic_results(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count()
}

/// Tool results in a Gemini request: its `functionResponse` parts.
fn gemini_results(body: &Value) -> usize {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter(|p| p.get("functionResponse").is_some())
        .count()
}

/// What must be equal between the recorded run and its replay: the verdict and
/// everything the model and the tools said, round by round (timings aside), and the
/// whole conversation as toolgauge reads it back.
fn episode_view(trial: &Value) -> Value {
    let rounds: Vec<Value> = trial["episode"]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!({
                "sent": r["sent"],
                "user": r["user"],
                "text": r["response"]["text"],
                "calls": r["response"]["tool_calls"],
                "results": r["outcomes"].as_array().map(|o| o.iter().map(|x| x["content"].clone()).collect::<Vec<_>>()),
            })
        })
        .collect();
    json!({
        "case": trial["case_id"],
        "stream": trial["stream"],
        "verdict": trial["verdict"],
        "reasons": trial["reasons"],
        "stop": trial["episode"]["stop"],
        "checks": trial["episode"]["checks"],
        "messages": trial["messages"],
        "rounds": rounds,
    })
}

/// Record a streamed loop against `fake` as `target` (key in `key_var`), check the
/// recorded episode, then replay it with no server and no key and check it is the same.
/// Returns the requests the fake received.
fn record_then_replay(fake: Fake, target: &str, key_var: &str) -> Vec<Seen> {
    let t = Toolgauge::new();
    t.write("loop.yaml", SUITE);
    let run = |out: &str, record: bool, env: &[(&str, &str)]| {
        let mut args = vec![
            "run",
            "loop.yaml",
            "--target",
            target,
            "--stream",
            "--out",
            out,
            "--cassette",
            "rec.jsonl",
        ];
        if record {
            args.push("--record");
        }
        t.run_env(env, &args).expect_code(OK)
    };
    let o = run("live", true, &[(key_var, KEY)]);
    o.stdout_has(&["streamed answers", "first token"]);
    let seen = fake.seen();
    assert_eq!(seen.len(), 3, "one streamed request per round");
    drop(fake);

    let live = read_back(&t.path().join("live/trials.jsonl"));
    assert_eq!(live.len(), 1);
    let trial = &live[0];
    assert_eq!(trial["verdict"], "pass", "{trial}");
    assert_eq!(trial["stream"], true);
    assert_eq!(trial["episode"]["stop"], "answered");
    let rounds = trial["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3);
    let calls: Vec<(String, String)> = rounds
        .iter()
        .flat_map(|r| {
            r["response"]["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| (c["name"].to_string(), c["arguments"].to_string()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                r#""get_order""#.to_string(),
                r#""{\"order_id\":\"A123\"}""#.to_string()
            ),
            (
                r#""get_shipment""#.to_string(),
                r#""{\"shipment_id\":\"S9\"}""#.to_string()
            )
        ]
    );
    assert_eq!(rounds[2]["response"]["text"], ANSWER);
    for r in rounds {
        let timing = &r["response"]["stream"];
        assert!(timing["first_token_ms"].as_f64().is_some(), "{r}");
        assert!(timing["events"].as_u64().unwrap() >= 1, "{r}");
    }
    // The tool results went back: the conversation holds both, in order.
    let results: Vec<&str> = trial["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            r#"{"order_id":"A123","shipment_id":"S9"}"#,
            r#"{"status":"in_transit","eta":"2026-12-03"}"#
        ]
    );
    // One cassette entry per round, after the header.
    assert_eq!(t.read("rec.jsonl").lines().count(), 1 + 3);

    // No server, no key: the cassette answers every round, streamed as recorded.
    run("replayed", false, &[]);
    let replayed = read_back(&t.path().join("replayed/trials.jsonl"));
    assert_eq!(replayed.len(), 1);
    assert_eq!(episode_view(&live[0]), episode_view(&replayed[0]));
    seen
}

#[test]
fn a_streamed_anthropic_loop_is_recorded_then_replayed_offline() {
    let fake = Fake::start(|body, _| {
        assert_eq!(body["stream"], true, "a streamed request: {body}");
        sse_reply(anthropic_sse(&turn(anthropic_results(body), body)))
    });
    let target = format!("anthropic:claude-haiku-4-5@{}/v1", fake.uri());
    record_then_replay(fake, &target, "ANTHROPIC_API_KEY");
}

#[test]
fn a_streamed_gemini_loop_is_recorded_then_replayed_offline() {
    let fake = Fake::start(|body, _| sse_reply(gemini_sse(&turn(gemini_results(body), body))));
    let target = format!("gemini:gemini-2.5-flash@{}/v1beta", fake.uri());
    let seen = record_then_replay(fake, &target, "GEMINI_API_KEY");
    // Every round went to the streaming endpoint.
    for s in &seen {
        assert_eq!(
            (s.request.url.path(), s.request.url.query()),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                Some("alt=sse")
            )
        );
    }
}

/// The pause before the first event carrying output, and the pause before the rest.
const FIRST: Duration = Duration::from_millis(400);
const REST: Duration = Duration::from_millis(300);

/// One OpenAI chunk with `delta` (and `finish`), or the usage chunk when `delta` is null.
fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    let mut c = json!({"id": "chatcmpl-paced", "object": "chat.completion.chunk",
                       "created": 1_733_000_000, "model": "gpt-4o-mini"});
    if delta.is_null() {
        c["choices"] = json!([]);
        c["usage"] = json!({"prompt_tokens": 14, "completion_tokens": 3, "total_tokens": 17});
    } else {
        c["choices"] = json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    }
    format!("data: {c}\n\n")
}

/// A server for one streamed OpenAI request that sends its headers at once, then waits
/// [`FIRST`] before the first text fragment and [`REST`] before the rest. The listener
/// is kept from bind to accept (no port to lose). Returns the base URL.
fn paced_server() -> (String, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_nodelay(true).unwrap();
        // The request: headers, then `content-length` bytes of body.
        let mut buf = Vec::new();
        let mut byte = [0u8; 4096];
        let head_end = loop {
            let n = conn.read(&mut byte).unwrap();
            assert!(n > 0, "the client closed before its request was whole");
            buf.extend_from_slice(&byte[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let n = conn.read(&mut byte).unwrap();
            assert!(n > 0);
            buf.extend_from_slice(&byte[..n]);
        }
        let mut send = |text: &str| {
            conn.write_all(text.as_bytes()).unwrap();
            conn.flush().unwrap();
        };
        send("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
        // A role-only event carries no output: it does not end the wait for the first token.
        send(&openai_chunk(
            json!({"role": "assistant", "content": ""}),
            None,
        ));
        std::thread::sleep(FIRST);
        send(&openai_chunk(json!({"content": "Hel"}), None));
        std::thread::sleep(REST);
        let rest = [
            openai_chunk(json!({"content": "lo."}), None),
            openai_chunk(json!({}), Some("stop")),
            openai_chunk(Value::Null, None),
            "data: [DONE]\n\n".to_string(),
        ];
        send(&rest.concat());
    });
    (url, handle)
}

#[test]
fn time_to_first_token_is_the_servers_pause_before_its_first_fragment() {
    let (url, server) = paced_server();
    let t = Toolgauge::new();
    t.write(
        "hello.yaml",
        r#"
name: paced
tools:
  - name: get_weather
    description: Current weather for one named city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - {id: hello, kind: should_not_call, prompt: "Say hello."}
"#,
    );
    let target = format!("openai:gpt-4o-mini@{url}");
    t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "hello.yaml",
            "--target",
            &target,
            "--stream",
            "--max-attempts",
            "1",
            "--out",
            "out",
        ],
    )
    .expect_code(OK);
    server.join().unwrap();
    let trials = t.run_dir("out").trials();
    let response = &trials[0]["response"];
    assert_eq!(response["text"], "Hello.");
    let ms = |v: &Value| {
        v.as_f64()
            .unwrap_or_else(|| panic!("not a number: {response}"))
    };
    let first = ms(&response["stream"]["first_token_ms"]);
    let latency = ms(&response["latency_ms"]);
    // Lower bounds only: a busy machine makes every figure larger, never smaller.
    let (first_floor, total_floor) = (FIRST.as_millis() as f64, (FIRST + REST).as_millis() as f64);
    assert!(
        first >= first_floor,
        "first token at {first} ms, before the {first_floor} ms pause ended"
    );
    assert!(
        latency >= total_floor,
        "latency {latency} ms, under the {total_floor} ms of pauses"
    );
    // The rest came a pause after the first token, so the first token is stamped well
    // before the end (a stamp taken at the end would be `latency`). Not the whole pause:
    // the client stamps the fragment when it has read it, a few ms after the server
    // wrote it (CI saw 295.5 ms of a 300 ms pause), so half the pause is the margin.
    let margin = REST.as_millis() as f64 / 2.0;
    assert!(
        first <= latency - margin,
        "first token at {first} ms is not {margin} ms before the end ({latency} ms)"
    );
}
