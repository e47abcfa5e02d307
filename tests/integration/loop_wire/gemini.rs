//! Gemini `generateContent` over three rounds: the recorded three parallel `sum` calls
//! (no ids; the second meets the suite's injected timeout), the recorded `now` call
//! with a thought summary and a `thoughtSignature`, then a text answer.
//!
//! No recorded Gemini answer is text only, so the last answer is the recorded
//! `function_call_null_arg_usage.json` body with its parts replaced by one text part
//! (its usage and finish reason kept).

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::ToolErrorKind;

use super::*;

const SUITE: &str = r#"
tools:
  - name: sum
    description: Add two integers.
    parameters: {type: object, properties: {x: {type: integer}, y: {type: integer}}, required: [x, y]}
  - name: now
    description: The current date and time.
    parameters: {type: object, properties: {}}
mocks:
  sum:
    - fail: {kind: timeout, times: 1}
      when: {x: 4, y: 3}
    - when: {x: 2, y: 1}
      result: {sum: 3}
    - when: {x: 4, y: 3}
      result: {sum: 7}
    - when: {x: 6, y: 5}
      result: {sum: 11}
  now:
    - result: {now: "2026-12-01T16:00:00Z"}
cases:
  - id: sums-then-now
    kind: should_call
    prompt: "Add 2+1, 4+3 and 6+5, then tell me the date."
    expect:
      trajectory:
        mode: in_order
        steps:
          - {tool: sum, args: {x: 2, y: 1}}
          - {tool: now}
"#;

const FINAL: &str = "2 + 1 = 3 and 6 + 5 = 11; 4 + 3 timed out. Today is 2026-12-01.";

/// A text answer: the recorded body with one text part.
pub fn text_answer(text: &str) -> Value {
    let mut body = testdata("gemini/function_call_null_arg_usage.json");
    body["candidates"][0]["content"]["parts"] = json!([{ "text": text }]);
    body
}

fn sum_response(response: Value) -> Value {
    json!({"functionResponse": {"name": "sum", "response": response}})
}

#[tokio::test]
async fn calls_without_ids_are_answered_by_name_in_call_order_and_signatures_go_back() {
    let parallel = testdata("gemini/function_call_parallel.json");
    let signed = testdata("gemini/function_call_thinking_signature_usage.json");
    let server = serve(
        model_turns,
        vec![
            vec![ok(&parallel)],
            vec![ok(&signed)],
            vec![ok(&text_answer(FINAL))],
        ],
    )
    .await;
    let target = format!("gemini:gemini-2.5-pro@{}/v1beta", server.uri());
    let trial = Trial::new(SUITE, "sums-then-now", &target);
    let outcome = trial.play(keyed(&target, fast()).as_ref()).await;

    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    assert_eq!(final_text(&outcome), Some(FINAL));
    // Round 2's thought summary is not answer text.
    assert_eq!(outcome.rounds[1].response.text, None);
    let fault = &outcome.rounds[0].outcomes[1];
    assert!(fault.fault && fault.is_error);
    assert_eq!(fault.error_kind, Some(ToolErrorKind::Timeout));
    // Round 1 reports no usage; then 38 in, 8 + 501 thinking out; then 774 in, 4176 out.
    let usage = outcome.usage().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (812, 4685));
    assert_eq!(trial.judge(&outcome), Vec::<String>::new());

    // The ids the episode assigned (by round and position) pair the results in the
    // conversation it keeps...
    let timed_out = r#"{"error":{"kind":"timeout","message":"the tool timed out"}}"#;
    assert_eq!(
        tool_messages(&outcome),
        [
            tool("call_r0_0", "sum", r#"{"sum":3}"#, false),
            tool("call_r0_1", "sum", timed_out, true),
            tool("call_r0_2", "sum", r#"{"sum":11}"#, false),
            tool(
                "call_r1_0",
                "now",
                r#"{"now":"2026-12-01T16:00:00Z"}"#,
                false
            ),
        ]
    );
    // ...and never reach Gemini, which pairs results with calls by name and position.
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    for body in &seen {
        assert!(!body.to_string().contains("call_r"), "{body}");
    }
    let user = json!({"role": "user", "parts": [{"text": "Add 2+1, 4+3 and 6+5, then tell me the date."}]});
    // The id-less calls carried no state: the turn is rebuilt, its first call with the
    // signature Google documents for unsigned history; the results follow in call
    // order, the injected fault as an `error` object.
    let first_turn = json!({"role": "model", "parts": [
        {"functionCall": {"name": "sum", "args": {"y": 1, "x": 2}},
         "thoughtSignature": "skip_thought_signature_validator"},
        {"functionCall": {"name": "sum", "args": {"y": 3, "x": 4}}},
        {"functionCall": {"name": "sum", "args": {"y": 5, "x": 6}}}
    ]});
    let results = json!({"role": "user", "parts": [
        sum_response(json!({"sum": 3})),
        sum_response(serde_json::from_str(timed_out).unwrap()),
        sum_response(json!({"sum": 11}))
    ]});
    assert_eq!(seen[1]["contents"], json!([user, first_turn, results]));
    // The signed turn goes back exactly as Gemini sent it: the thought summary and
    // the call with its `thoughtSignature` on the same part.
    assert_eq!(
        seen[2]["contents"],
        json!([
            user,
            first_turn,
            results,
            {"role": "model", "parts": signed["candidates"][0]["content"]["parts"]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "now", "response": {"now": "2026-12-01T16:00:00Z"}}}
            ]}
        ])
    );
    for request in received(&server).await {
        assert_eq!(
            request.url.path(),
            "/v1beta/models/gemini-2.5-pro:generateContent"
        );
        assert_eq!(request.headers.get("x-goog-api-key").unwrap(), KEY);
        // The key travels in the header only, never in the URL.
        assert_no_key(request.url.as_str());
        assert_no_key(&String::from_utf8_lossy(&request.body));
    }
    assert_no_key(&format!("{outcome:?}"));
}

#[tokio::test]
async fn call_ids_gemini_sent_are_echoed_on_the_call_and_its_response() {
    // The recorded parallel answer, its calls given ids as the API's `FunctionCall.id`
    // field carries them.
    let mut parallel = testdata("gemini/function_call_parallel.json");
    for (i, part) in parallel["candidates"][0]["content"]["parts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        part["functionCall"]["id"] = json!(format!("fc-{i}"));
    }
    let server = serve(
        model_turns,
        vec![vec![ok(&parallel)], vec![ok(&text_answer(FINAL))]],
    )
    .await;
    let target = format!("gemini:gemini-2.5-pro@{}/v1beta", server.uri());
    let trial = Trial::new(SUITE, "sums-then-now", &target);
    let outcome = trial.play(keyed(&target, fast()).as_ref()).await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    let ids: Vec<String> = tool_messages(&outcome).into_iter().map(|t| t.0).collect();
    assert_eq!(ids, ["fc-0", "fc-1", "fc-2"]);
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 2);
    // Gemini's own ids make the turn opaque: it goes back verbatim, ids included,
    // and each response carries its call's id.
    assert_eq!(
        seen[1]["contents"][1]["parts"],
        parallel["candidates"][0]["content"]["parts"]
    );
    let echoed: Vec<(&Value, &Value)> = seen[1]["contents"][2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (&p["functionResponse"]["id"], &p["functionResponse"]["name"]))
        .collect();
    assert_eq!(
        echoed,
        [
            (&json!("fc-0"), &json!("sum")),
            (&json!("fc-1"), &json!("sum")),
            (&json!("fc-2"), &json!("sum"))
        ]
    );
}
