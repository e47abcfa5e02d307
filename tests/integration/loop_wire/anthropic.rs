//! Anthropic Messages over three rounds: a thinking turn with the recorded `tool_use`
//! (its call meets the suite's injected server error), the recorded text + `tool_use`
//! answer (the same call again, now answered), the recorded text answer.
//!
//! No recorded answer holds thinking blocks, so the first answer is the recorded
//! single `tool_use` body with a `thinking` and a `redacted_thinking` block of the
//! documented shape put in front of its call (as `src/provider/loop_tests.rs` does).

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::ToolErrorKind;

use super::*;

const SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for a location.
    parameters:
      type: object
      properties: {location: {type: string}, units: {type: string, enum: [c, f]}}
      required: [location]
mocks:
  get_weather:
    - fail: {kind: server_error, times: 1}
      when: {location: "San Francisco, CA"}
    - when: {location: "San Francisco, CA"}
      result: {temp_f: 61, condition: fog}
cases:
  - id: san-francisco
    kind: should_call
    prompt: "What's the weather in San Francisco?"
    expect:
      trajectory:
        steps:
          - {tool: get_weather, args: {location: "San Francisco, CA"}}
"#;

const SERVER_ERROR: &str = r#"{"error":{"kind":"server_error","message":"internal server error"}}"#;
const FOG: &str = r#"{"temp_f":61,"condition":"fog"}"#;

/// The first answer: thinking blocks of the documented shape, then the recorded call.
fn thinking_answer() -> Value {
    let mut answer = testdata("anthropic/msg_single_tool_use.json");
    let call = answer["content"][0].clone();
    answer["content"] = json!([
        {"type": "thinking",
         "thinking": "The user wants the weather in San Francisco: call get_weather.",
         "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
        {"type": "redacted_thinking",
         "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
        call
    ]);
    answer
}

#[tokio::test]
async fn thinking_goes_back_verbatim_and_an_injected_fault_is_a_flagged_tool_result() {
    let first = thinking_answer();
    let second = testdata("anthropic/msg_text_and_tool_use.json");
    let last = testdata("anthropic/msg_text_end_turn.json");
    let server = serve(
        assistant_turns,
        vec![vec![ok(&first)], vec![ok(&second)], vec![ok(&last)]],
    )
    .await;
    let target = format!("anthropic:claude-haiku-4-5-20251001@{}/v1", server.uri());
    let trial = Trial::new(SUITE, "san-francisco", &target);
    let outcome = trial.play(keyed(&target, fast()).as_ref()).await;

    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    assert_eq!(final_text(&outcome), last["content"][0]["text"].as_str());
    assert_eq!(
        outcome.rounds[1].response.text.as_deref(),
        Some(
            "I'll get the weather for each of those cities. Let me start by checking San Francisco."
        )
    );
    let fault = &outcome.rounds[0].outcomes[0];
    assert!(fault.fault && fault.is_error);
    assert_eq!(fault.error_kind, Some(ToolErrorKind::ServerError));
    // Input counts the cached parts too (all 0 here): 656 + 701 + 760; output 74 + 93 + 63.
    let usage = outcome.usage().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (2117, 230));
    assert_eq!(trial.judge(&outcome), Vec::<String>::new());

    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    let user = json!({"role": "user", "content": [
        {"type": "text", "text": "What's the weather in San Francisco?"}
    ]});
    let failed = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
         "content": SERVER_ERROR, "is_error": true}
    ]});
    // Round 2: the thinking turn exactly as the API gave it (signature, redacted data,
    // the call's `caller`), then the error result flagged `is_error`.
    assert_eq!(
        seen[1]["messages"],
        json!([user, {"role": "assistant", "content": first["content"]}, failed])
    );
    // Round 3: the text + call turn had nothing opaque, so it is rebuilt from the
    // neutral turn (without the default `caller`); the thinking turn is still verbatim.
    assert_eq!(
        seen[2]["messages"],
        json!([
            user,
            {"role": "assistant", "content": first["content"]},
            failed,
            {"role": "assistant", "content": [
                {"type": "text", "text": second["content"][0]["text"]},
                {"type": "tool_use", "id": "toolu_01LRanfq6DmHn1yDTB4d1SAh",
                 "name": "get_weather", "input": {"location": "San Francisco, CA", "units": "f"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01LRanfq6DmHn1yDTB4d1SAh",
                 "content": FOG}
            ]}
        ])
    );
    for request in received(&server).await {
        assert_eq!(request.url.path(), "/v1/messages");
        assert_eq!(request.headers.get("x-api-key").unwrap(), KEY);
        assert_eq!(
            request.headers.get("anthropic-version").unwrap(),
            "2023-06-01"
        );
        assert_no_key(&String::from_utf8_lossy(&request.body));
    }
    assert_no_key(&format!("{outcome:?}"));
    assert_eq!(
        tool_messages(&outcome),
        [
            tool(
                "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
                "get_weather",
                SERVER_ERROR,
                true
            ),
            tool("toolu_01LRanfq6DmHn1yDTB4d1SAh", "get_weather", FOG, false),
        ]
    );
}

const DENY_SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for a location.
    parameters:
      type: object
      properties: {location: {type: string}, units: {type: string, enum: [c, f]}}
      required: [location]
    risk: high
mocks:
  get_weather:
    - result: {temp_f: 61}
cases:
  - id: denied-then-follow-up
    kind: should_call
    prompt: "What's the weather in San Francisco?"
    turns: ["Never mind, thanks."]
    policy: {confirm: [get_weather], answer: deny}
    expect:
      never: [get_weather]
"#;

#[tokio::test]
async fn a_denied_call_and_a_scripted_user_turn_keep_the_roles_alternating() {
    // The recorded call, denied by the policy; the recorded apology; then, after the
    // scripted user turn, the recorded apology again.
    let call = testdata("anthropic/msg_single_tool_use.json");
    let apology = testdata("anthropic/msg_text_end_turn.json");
    let server = serve(
        assistant_turns,
        vec![vec![ok(&call)], vec![ok(&apology)], vec![ok(&apology)]],
    )
    .await;
    let target = format!("anthropic:claude-haiku-4-5-20251001@{}/v1", server.uri());
    let trial = Trial::new(DENY_SUITE, "denied-then-follow-up", &target);
    let outcome = trial.play(keyed(&target, fast()).as_ref()).await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    assert_eq!(
        outcome.rounds[2].user.as_deref(),
        Some("Never mind, thanks.")
    );
    let denied = &outcome.rounds[0].outcomes[0];
    assert_eq!(denied.error_kind, Some(ToolErrorKind::Denied));
    assert!(!denied.executed);
    // The call was made, so `never` fails: the judge reads the transcript, denial and all.
    assert_eq!(trial.judge(&outcome), ["forbidden_call"]);

    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    let apology_text = apology["content"][0]["text"].clone();
    assert_eq!(
        seen[2]["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "What's the weather in San Francisco?"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01A9HHF5Ezy3oBrKmSgfASm9", "name": "get_weather",
                 "input": {"location": "San Francisco, CA", "units": "f"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
                 "content": "{\"error\":{\"kind\":\"denied\",\"message\":\"denied by the user: the call of `get_weather` was not executed\"}}",
                 "is_error": true}
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": apology_text}]},
            {"role": "user", "content": [{"type": "text", "text": "Never mind, thanks."}]}
        ])
    );
}

/// The Messages API's rule: `tool_use` ids are unique in a request, and every
/// `tool_result` answers one of the turn before it.
fn unique_tool_use_ids(_round: usize, body: &Value) -> Result<(), String> {
    let mut ids: Vec<&Value> = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        for (j, block) in m["content"].as_array().into_iter().flatten().enumerate() {
            if block["type"] == "tool_use" {
                if ids.contains(&&block["id"]) {
                    return Err(format!(
                        "messages.{i}.content.{j}: `tool_use` ids must be unique"
                    ));
                }
                ids.push(&block["id"]);
            }
            if block["type"] == "tool_result" && !ids.contains(&&block["tool_use_id"]) {
                return Err(format!(
                    "messages.{i}.content.{j}: unexpected `tool_use_id`"
                ));
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn tool_use_blocks_sharing_one_id_get_ids_of_their_own_behind_the_thinking() {
    // The thinking answer with a second call of the recorded shape that repeats the
    // first call's id, as some Anthropic-compatible endpoints send parallel calls.
    let mut first = thinking_answer();
    let mut again = first["content"][2].clone();
    again["input"] = json!({"location": "Oakland, CA", "units": "f"});
    first["content"].as_array_mut().unwrap().push(again);
    let server = serve_checked(
        assistant_turns,
        unique_tool_use_ids,
        vec![
            vec![ok(&first)],
            vec![ok(&testdata("anthropic/msg_text_end_turn.json"))],
        ],
    )
    .await;
    let target = format!("anthropic:kimi-k2@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "san-francisco", &target)
        .play(keyed(&target, fast()).as_ref())
        .await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    let ids: Vec<String> = tool_messages(&outcome).into_iter().map(|t| t.0).collect();
    assert_eq!(ids, ["toolu_01A9HHF5Ezy3oBrKmSgfASm9", "call_r0_1"]);
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 2);
    // The saved turn no longer matches the calls' ids, so it is rebuilt: the thinking
    // blocks first, verbatim, then the calls with their ids.
    let turn = &seen[1]["messages"][1]["content"];
    assert_eq!(turn[0], first["content"][0]);
    assert_eq!(turn[1], first["content"][1]);
    assert_eq!(
        (&turn[2]["id"], &turn[3]["id"]),
        (
            &json!("toolu_01A9HHF5Ezy3oBrKmSgfASm9"),
            &json!("call_r0_1")
        )
    );
    let results: Vec<&Value> = seen[1]["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["tool_use_id"])
        .collect();
    assert_eq!(
        results,
        [
            &json!("toolu_01A9HHF5Ezy3oBrKmSgfASm9"),
            &json!("call_r0_1")
        ]
    );
}
