//! Multi-round conversations on each provider's wire: the body of the third request
//! of a tool loop (user → two parallel calls → their results, one an error → another
//! call → its result), compared whole with a hand-written body; and the whole loop
//! against a local fake server that refuses a request unless it carries the earlier
//! turns' provider state (thinking blocks, thought signatures, assigned call ids).
//!
//! Answers come from the real wire examples in `testdata/`; where no recorded example
//! exists (an Anthropic answer with thinking blocks), a recorded answer is extended
//! with blocks of the documented shape, as the test says.

use std::sync::Arc;

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

use super::anthropic::AnthropicProvider;
use super::config::ProviderConfig;
use super::gemini::{DUMMY_THOUGHT_SIGNATURE, GeminiProvider};
use super::http::{Http, HttpSettings};
use super::openai::OpenAiProvider;
use super::{
    Message, Provider, Request, Response, ToolCall, ToolChoice, ToolDefinition, ToolResult,
    TrialKey,
};

const OPENAI_PARALLEL: &str = include_str!("testdata/openai/chat_parallel_tool_calls.json");
const OPENAI_SINGLE: &str = include_str!("testdata/openai/chat_single_tool_call_recorded.json");
const OPENAI_TEXT: &str = include_str!("testdata/openai/chat_text_answer_recorded.json");
const ANTHROPIC_SINGLE: &str = include_str!("testdata/anthropic/msg_single_tool_use.json");
const ANTHROPIC_SERVER_TOOL: &str =
    include_str!("testdata/anthropic/msg_text_server_tool_use_and_tool_use.json");
const ANTHROPIC_TEXT: &str = include_str!("testdata/anthropic/msg_text_end_turn.json");
const GEMINI_PARALLEL: &str = include_str!("testdata/gemini/function_call_parallel.json");
const GEMINI_SIGNATURE: &str =
    include_str!("testdata/gemini/function_call_thinking_signature_usage.json");
const GEMINI_NULL_ARG: &str = include_str!("testdata/gemini/function_call_null_arg_usage.json");

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn tools() -> Arc<Vec<ToolDefinition>> {
    Arc::new(vec![ToolDefinition {
        name: "get_weather".into(),
        description: "Current weather for a city.".into(),
        parameters: schema().into(),
    }])
}

fn call(id: &str, city: &str) -> ToolCall {
    ToolCall {
        id: Some(id.into()),
        name: "get_weather".into(),
        arguments: format!(r#"{{"city":"{city}"}}"#),
    }
}

fn result(id: &str, content: &str, is_error: bool) -> Message {
    ToolResult {
        call_id: id.into(),
        name: "get_weather".into(),
        content: content.into(),
        is_error,
    }
    .into()
}

/// The conversation before the third request: call ids `ids`, the two assistant
/// turns' provider state `states`.
fn three_rounds(ids: [&str; 3], states: [Option<Value>; 2]) -> Request {
    let [s0, s1] = states;
    Request {
        messages: vec![
            Message::System {
                content: "Be brief.".into(),
            },
            Message::User {
                content: "Weather in Paris and Rome?".into(),
            },
            Message::Assistant {
                content: None,
                tool_calls: vec![call(ids[0], "Paris"), call(ids[1], "Rome")],
                state: s0,
            },
            result(ids[0], r#"{"temp_c":18}"#, false),
            result(ids[1], "rate limited: retry later", true),
            Message::Assistant {
                content: Some("Rome failed; retrying.".into()),
                tool_calls: vec![call(ids[2], "Rome")],
                state: s1,
            },
            result(ids[2], r#"{"temp_c":24}"#, false),
        ],
        tools: tools(),
        tool_choice: ToolChoice::Auto,
    }
}

fn http() -> Http {
    Http::new(HttpSettings {
        max_attempts: 1,
        ..HttpSettings::default()
    })
    .unwrap()
}

fn openai(base_url: &str) -> OpenAiProvider {
    OpenAiProvider::new(
        ProviderConfig::new("openai", "gpt-4o-mini", base_url),
        http(),
    )
}

fn anthropic(base_url: &str) -> AnthropicProvider {
    AnthropicProvider::new(
        ProviderConfig::new("anthropic", "claude-sonnet-4-5", base_url),
        http(),
    )
}

fn gemini(base_url: &str) -> GeminiProvider {
    GeminiProvider::new(
        ProviderConfig::new("gemini", "gemini-2.5-pro", base_url),
        http(),
    )
}

// ---- the third request, exactly ----

#[test]
fn openai_three_rounds_send_tool_messages_and_errors_as_json() {
    let body = openai("http://x/v1")
        .build_body(&three_rounds(["call_a", "call_b", "call_c"], [None, None]))
        .unwrap();
    let weather = |id: &str, city: &str| {
        json!({"id": id, "type": "function",
               "function": {"name": "get_weather", "arguments": format!(r#"{{"city":"{city}"}}"#)}})
    };
    let expected = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "content": "",
             "tool_calls": [weather("call_a", "Paris"), weather("call_b", "Rome")]},
            {"role": "tool", "tool_call_id": "call_a", "content": "{\"temp_c\":18}"},
            {"role": "tool", "tool_call_id": "call_b",
             "content": "{\"error\":\"rate limited: retry later\"}"},
            {"role": "assistant", "content": "Rome failed; retrying.",
             "tool_calls": [weather("call_c", "Rome")]},
            {"role": "tool", "tool_call_id": "call_c", "content": "{\"temp_c\":24}"}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather",
                   "description": "Current weather for a city.", "parameters": schema()}}],
        "tool_choice": "auto"
    });
    assert_eq!(body, expected);
}

#[test]
fn openai_error_content_that_is_already_an_error_object_is_not_wrapped_twice() {
    let mut r = three_rounds(["a", "b", "c"], [None, None]);
    r.messages[4] = result("b", r#"{"error": {"kind": "not_found"}}"#, true);
    r.messages[6] = result("c", "[1, 2]", true);
    let body = openai("http://x/v1").build_body(&r).unwrap();
    assert_eq!(
        body["messages"][4]["content"],
        r#"{"error": {"kind": "not_found"}}"#
    );
    assert_eq!(body["messages"][6]["content"], r#"{"error":[1,2]}"#);
}

/// An Anthropic thinking turn of the documented shape (no recorded example exists):
/// the `thinking` block with its signature, a `redacted_thinking` block, then the two
/// calls as the API returns them (with `caller`).
fn anthropic_thinking_content() -> Value {
    json!([
        {"type": "thinking", "thinking": "Two cities: call the tool twice.",
         "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather",
         "input": {"city": "Paris"}, "caller": {"type": "direct"}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_weather",
         "input": {"city": "Rome"}, "caller": {"type": "direct"}}
    ])
}

fn anthropic_expected(first_turn: Value) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
            {"role": "assistant", "content": first_turn},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"temp_c\":18}"},
                {"type": "tool_result", "tool_use_id": "toolu_b",
                 "content": "rate limited: retry later", "is_error": true}
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Rome failed; retrying."},
                {"type": "tool_use", "id": "toolu_c", "name": "get_weather",
                 "input": {"city": "Rome"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_c", "content": "{\"temp_c\":24}"}
            ]}
        ],
        "tools": [{"name": "get_weather", "description": "Current weather for a city.",
                   "input_schema": schema()}],
        "tool_choice": {"type": "auto"}
    })
}

#[test]
fn anthropic_three_rounds_send_thinking_back_verbatim_and_flag_errors() {
    let state = json!({"anthropic": {"content": anthropic_thinking_content()}});
    let body = anthropic("http://x/v1")
        .build_body(&three_rounds(
            ["toolu_a", "toolu_b", "toolu_c"],
            [Some(state), None],
        ))
        .unwrap();
    assert_eq!(body, anthropic_expected(anthropic_thinking_content()));
}

#[test]
fn anthropic_edited_turn_keeps_its_thinking_first_and_rebuilds_the_rest() {
    // The saved content no longer matches the turn (its second call went elsewhere):
    // the calls are rebuilt from the turn, the thinking blocks still lead.
    let mut saved = anthropic_thinking_content();
    saved[3]["input"] = json!({"city": "Milan"});
    let state = json!({"anthropic": {"content": saved}});
    let body = anthropic("http://x/v1")
        .build_body(&three_rounds(
            ["toolu_a", "toolu_b", "toolu_c"],
            [Some(state), None],
        ))
        .unwrap();
    let thinking = anthropic_thinking_content();
    let first = json!([
        thinking[0],
        thinking[1],
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Rome"}}
    ]);
    assert_eq!(body, anthropic_expected(first.clone()));
    // Without any state the turn is rebuilt alone, as before tool loops.
    let body = anthropic("http://x/v1")
        .build_body(&three_rounds(
            ["toolu_a", "toolu_b", "toolu_c"],
            [None, None],
        ))
        .unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!(first.as_array().unwrap()[2..])
    );
}

#[test]
fn anthropic_results_answered_out_of_order_go_back_in_call_order_in_one_message() {
    let mut r = three_rounds(["toolu_a", "toolu_b", "toolu_c"], [None, None]);
    r.messages.swap(3, 4);
    r.messages.truncate(5);
    let body = anthropic("http://x/v1").build_body(&r).unwrap();
    let ids: Vec<&str> = body["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b"]);
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);
}

/// The first turn's parts as Gemini gave them: a thought summary, then the two calls,
/// the first with its thought signature.
fn gemini_saved_parts() -> Value {
    json!([
        {"text": "Two cities, two calls.", "thought": true},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": "CtQOAVSoXO74PmYr9AFurEIJ"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
    ])
}

#[test]
fn gemini_three_rounds_keep_signatures_and_answer_by_name_in_call_order() {
    let state = json!({"gemini": {"parts": gemini_saved_parts()}});
    let body = gemini("http://x/v1beta")
        .build_body(&three_rounds(
            ["call_r0_0", "call_r0_1", "call_r1_0"],
            [Some(state), None],
        ))
        .unwrap();
    let expected = json!({
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
            {"role": "model", "parts": gemini_saved_parts()},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"temp_c": 18}}},
                {"functionResponse": {"name": "get_weather",
                                      "response": {"error": "rate limited: retry later"}}}
            ]},
            {"role": "model", "parts": [
                {"text": "Rome failed; retrying."},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                 "thoughtSignature": DUMMY_THOUGHT_SIGNATURE}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"temp_c": 24}}}
            ]}
        ],
        "tools": [{"functionDeclarations": [{"name": "get_weather",
                   "description": "Current weather for a city.",
                   "parametersJsonSchema": schema()}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}
    });
    assert_eq!(body, expected);
}

#[test]
fn gemini_echoes_its_own_call_ids_and_only_those() {
    let mut parts = gemini_saved_parts();
    parts[1]["functionCall"]["id"] = json!("g-7");
    parts[2]["functionCall"]["id"] = json!("g-8");
    let state = json!({"gemini": {"parts": parts}});
    let mut r = three_rounds(["g-7", "g-8", "call_r1_0"], [Some(state), None]);
    // Answered out of order: back in call order, each with Gemini's id.
    r.messages.swap(3, 4);
    let body = gemini("http://x/v1beta").build_body(&r).unwrap();
    assert_eq!(body["contents"][1]["parts"], parts);
    assert_eq!(
        body["contents"][2]["parts"],
        json!([
            {"functionResponse": {"name": "get_weather", "response": {"temp_c": 18}, "id": "g-7"}},
            {"functionResponse": {"name": "get_weather",
                                  "response": {"error": "rate limited: retry later"},
                                  "id": "g-8"}}
        ])
    );
    // The assigned id of the second turn's call never reaches the wire.
    assert!(!body.to_string().contains("call_r1_0"));
}

#[test]
fn gemini_result_without_a_name_or_a_matching_call_is_unsupported() {
    let mut r = three_rounds(["a", "b", "c"], [None, None]);
    r.messages[6] = Message::Tool {
        tool_call_id: "zzz".into(),
        name: String::new(),
        content: "1".into(),
        is_error: false,
    };
    let e = gemini("http://x/v1beta").build_body(&r).unwrap_err();
    assert!(e.to_string().contains("`zzz`"), "{e}");
    // With the tool's name it can be sent: Gemini pairs by name and position.
    r.messages[6] = result("zzz", "1", false);
    let body = gemini("http://x/v1beta").build_body(&r).unwrap();
    assert_eq!(
        body["contents"][4]["parts"][0]["functionResponse"],
        json!({"name": "get_weather", "response": {"result": 1}})
    );
}

#[test]
fn damaged_or_foreign_state_falls_back_to_the_rebuilt_turn() {
    let rebuilt_gemini = gemini("http://x/v1beta")
        .build_body(&three_rounds(["a", "b", "c"], [None, None]))
        .unwrap();
    let rebuilt_anthropic = anthropic("http://x/v1")
        .build_body(&three_rounds(["a", "b", "c"], [None, None]))
        .unwrap();
    let mut gemini_parts = gemini_saved_parts();
    gemini_parts.as_array_mut().unwrap().push(json!(7));
    for state in [
        json!({"gemini": {"parts": gemini_parts}}),
        json!({"gemini": {"parts": "not a list"}}),
        json!({"gemini": 3}),
        json!({"anthropic": {"content": anthropic_thinking_content()}}),
        json!("text"),
    ] {
        let r = three_rounds(["a", "b", "c"], [Some(state.clone()), None]);
        let body = gemini("http://x/v1beta").build_body(&r).unwrap();
        assert_eq!(body, rebuilt_gemini, "{state}");
    }
    let mut damaged = anthropic_thinking_content();
    damaged.as_array_mut().unwrap().push(json!({"no": "type"}));
    for state in [
        json!({"anthropic": {"content": {"type": "thinking"}, "container": 5}}),
        json!({"gemini": {"parts": gemini_saved_parts()}}),
        json!([]),
    ] {
        let r = three_rounds(["a", "b", "c"], [Some(state.clone()), None]);
        let body = anthropic("http://x/v1").build_body(&r).unwrap();
        assert_eq!(body, rebuilt_anthropic, "{state}");
    }
    // A damaged block is dropped; the well-formed thinking blocks still lead.
    // (Its calls match the turn, so only the damage stops the verbatim copy.)
    let r = three_rounds(
        ["toolu_a", "toolu_b", "toolu_c"],
        [Some(json!({"anthropic": {"content": damaged}})), None],
    );
    let body = anthropic("http://x/v1").build_body(&r).unwrap();
    let first = body["messages"][1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = first.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["thinking", "redacted_thinking", "tool_use", "tool_use"]
    );
    assert!(first[2].get("caller").is_none(), "rebuilt, not verbatim");
}

// ---- parsing the state from real answers ----

#[test]
fn gemini_signature_and_thought_parts_become_the_state() {
    let r = GeminiProvider::parse_response(&json_of(GEMINI_SIGNATURE)).unwrap();
    let parts = &json_of(GEMINI_SIGNATURE)["candidates"][0]["content"]["parts"];
    assert_eq!(r.state, Some(json!({"gemini": {"parts": parts}})));
    // Plain calls carry no state, so their stored form is as before.
    let r = GeminiProvider::parse_response(&json_of(GEMINI_PARALLEL)).unwrap();
    assert_eq!(r.state, None);
}

#[test]
fn anthropic_state_holds_unusual_blocks_and_the_container() {
    let body = json_of(ANTHROPIC_SERVER_TOOL);
    let r = AnthropicProvider::parse_response(&body).unwrap();
    assert_eq!(
        r.state,
        Some(json!({"anthropic": {"content": body["content"],
                                  "container": "container_011CYVPF4iP8oD6Vsz1NhVih"}}))
    );
    let r = AnthropicProvider::parse_response(&json_of(ANTHROPIC_SINGLE)).unwrap();
    assert_eq!(r.state, None);
}

/// Every recorded answer with calls, continued: the answer as the assistant turn, a
/// result for each call. Gives the request of the next round.
fn continued(answer: &Response) -> Request {
    let mut answer = answer.clone();
    answer.assign_missing_ids(0);
    let mut messages = vec![
        Message::User {
            content: "go".into(),
        },
        answer.to_message(),
    ];
    for call in &answer.tool_calls {
        messages.push(result(call.id.as_deref().unwrap(), "{}", false));
    }
    Request {
        messages,
        tools: tools(),
        tool_choice: ToolChoice::Auto,
    }
}

#[test]
fn every_recorded_openai_answer_goes_back_as_it_came() {
    for text in [
        OPENAI_PARALLEL,
        OPENAI_SINGLE,
        include_str!("testdata/openai/chat_single_tool_call_apiref.json"),
    ] {
        let body = json_of(text);
        let answer = super::openai::parse_response(&body).unwrap();
        let sent = openai("http://x/v1")
            .build_body(&continued(&answer))
            .unwrap();
        let original = &body["choices"][0]["message"];
        // The text as it came; a turn of calls alone goes back with `""`, which every
        // compatible server's chat template reads (null or no key breaks some).
        let want = match &original["content"] {
            serde_json::Value::Null => serde_json::json!(""),
            c => c.clone(),
        };
        assert_eq!(sent["messages"][1]["content"], want);
        assert_eq!(sent["messages"][1]["tool_calls"], original["tool_calls"]);
        for (i, call) in original["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            assert_eq!(sent["messages"][2 + i]["tool_call_id"], call["id"]);
        }
    }
}

#[test]
fn every_recorded_anthropic_answer_goes_back_as_it_came() {
    for text in [
        ANTHROPIC_SINGLE,
        ANTHROPIC_SERVER_TOOL,
        include_str!("testdata/anthropic/msg_text_and_tool_use.json"),
    ] {
        let body = json_of(text);
        let answer = AnthropicProvider::parse_response(&body).unwrap();
        let sent = anthropic("http://x/v1")
            .build_body(&continued(&answer))
            .unwrap();
        let mut original = body["content"].clone();
        if answer.state.is_none() {
            // Rebuilt from the neutral turn: `caller: direct` is the default and
            // not sent.
            for block in original.as_array_mut().unwrap() {
                block.as_object_mut().unwrap().remove("caller");
            }
        }
        assert_eq!(sent["messages"][1]["content"], original, "{text}");
        let results = sent["messages"][2]["content"].as_array().unwrap();
        assert_eq!(results.len(), answer.tool_calls.len());
        assert_eq!(
            results[0]["tool_use_id"],
            answer.tool_calls[0].id.as_deref().unwrap()
        );
    }
}

#[test]
fn every_recorded_gemini_answer_goes_back_as_it_came() {
    for text in [
        GEMINI_PARALLEL,
        GEMINI_SIGNATURE,
        GEMINI_NULL_ARG,
        include_str!("testdata/gemini/function_call_mixed_text.json"),
        include_str!("testdata/gemini/function_call_single_rest.json"),
    ] {
        let body = json_of(text);
        let answer = GeminiProvider::parse_response(&body).unwrap();
        let sent = gemini("http://x/v1beta")
            .build_body(&continued(&answer))
            .unwrap();
        let mut original = body["candidates"][0]["content"]["parts"].clone();
        if answer.state.is_none() {
            // Rebuilt: the first call carries the signature Google documents for
            // history a model did not sign.
            original[0]["thoughtSignature"] = json!(DUMMY_THOUGHT_SIGNATURE);
        }
        assert_eq!(sent["contents"][1]["parts"], original, "{text}");
        let names: Vec<&Value> = sent["contents"][2]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["functionResponse"]["name"])
            .collect();
        let called: Vec<&str> = answer.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, called, "{text}");
    }
}

// ---- whole loops against a local server ----

/// What request `n` of a loop must carry; `Err` says what it lacks.
type Check = fn(&Value) -> Result<(), String>;

/// Answers request `n` of a loop with `answers[n]` (n counted by the assistant turns
/// the request carries, by `round`) after `checks[n]` passes; a failed check is a 400
/// whose message says what the request lacked, so the provider call fails with it.
struct Loop {
    round: fn(&Value) -> usize,
    checks: Vec<Check>,
    answers: Vec<Value>,
}

impl Respond for Loop {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_string("body is not JSON");
        };
        let n = (self.round)(&body);
        match self.checks.get(n).map(|check| check(&body)) {
            Some(Ok(())) => ResponseTemplate::new(200).set_body_json(&self.answers[n]),
            Some(Err(why)) => ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": format!("round {n}: {why}")}})),
            None => ResponseTemplate::new(400).set_body_string(format!("no round {n}")),
        }
    }
}

fn trial() -> TrialKey {
    TrialKey {
        case_id: "loop".into(),
        target: "t".into(),
        variant: "base".into(),
        tool_choice: ToolChoice::Auto,
        repeat: 0,
    }
}

/// Run the loop as the episode runner will: append each answer as the assistant turn,
/// answer its calls (the second call of the first turn fails), until a text answer.
async fn drive(provider: &dyn Provider) -> Result<(Vec<Response>, Request), String> {
    let mut request = Request {
        messages: vec![Message::User {
            content: "Weather in Paris and Rome?".into(),
        }],
        tools: tools(),
        tool_choice: ToolChoice::Auto,
    };
    let mut answers = Vec::new();
    for round in 0..4 {
        let answer = provider
            .complete(&request, &trial())
            .await
            .map_err(|e| e.to_string())?;
        request.messages.push(answer.to_message());
        for (i, call) in answer.tool_calls.iter().enumerate() {
            let failed = round == 0 && i == 1;
            request.messages.push(
                ToolResult {
                    call_id: call.id.clone().expect("live providers always set an id"),
                    name: call.name.clone(),
                    content: if failed {
                        "rate limited".into()
                    } else {
                        format!(r#"{{"n":"r{round}c{i}"}}"#)
                    },
                    is_error: failed,
                }
                .into(),
            );
        }
        let done = answer.tool_calls.is_empty();
        answers.push(answer);
        if done {
            return Ok((answers, request));
        }
    }
    Err("the loop did not end".into())
}

async fn serve(responder: Loop) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

fn count_role(messages: &Value, role: &str) -> usize {
    messages
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == role).count())
        .unwrap_or(0)
}

#[tokio::test]
async fn openai_loop_pairs_results_with_assigned_and_given_ids() {
    // A compatible server that sends the parallel calls without ids (as some vLLM and
    // Ollama versions do), then a recorded single call, then a recorded text answer.
    let mut first = json_of(OPENAI_PARALLEL);
    for c in first["choices"][0]["message"]["tool_calls"]
        .as_array_mut()
        .unwrap()
    {
        c.as_object_mut().unwrap().remove("id");
    }
    let server = serve(Loop {
        round: |b| count_role(&b["messages"], "assistant"),
        checks: vec![
            |_| Ok(()),
            |b| {
                let m = &b["messages"];
                let ids = (&m[1]["tool_calls"][0]["id"], &m[1]["tool_calls"][1]["id"]);
                if ids != (&json!("call_r0_0"), &json!("call_r0_1")) {
                    return Err(format!("the first turn's calls lost their ids: {}", m[1]));
                }
                if m[2] != json!({"role": "tool", "tool_call_id": "call_r0_0", "content": "{\"n\":\"r0c0\"}"})
                    || m[3]
                        != json!({"role": "tool", "tool_call_id": "call_r0_1",
                                  "content": "{\"error\":\"rate limited\"}"})
                {
                    return Err(format!("results not paired by id: {} {}", m[2], m[3]));
                }
                Ok(())
            },
            |b| {
                let m = &b["messages"];
                (m[5]["tool_call_id"] == "call_Y6qJ7ofLgOrBnMD5WbVAeiRV")
                    .then_some(())
                    .ok_or_else(|| format!("the recorded id was not kept: {}", m[5]))
            },
        ],
        answers: vec![first, json_of(OPENAI_SINGLE), json_of(OPENAI_TEXT)],
    })
    .await;
    let provider = openai(&format!("{}/v1", server.uri()));
    let (answers, request) = drive(&provider).await.unwrap();
    assert_eq!(answers.len(), 3);
    assert!(answers[2].text.is_some());
    assert_eq!(request.messages.len(), 7);
}

#[tokio::test]
async fn anthropic_loop_sends_thinking_and_the_container_back() {
    // Round 1: the recorded single call, extended with a second call and the thinking
    // blocks of the documented shape in front. Round 2: the recorded answer that ran
    // code execution in a container. Round 3: the recorded text answer.
    let mut first = json_of(ANTHROPIC_SINGLE);
    let mut content = anthropic_thinking_content();
    content[2] = first["content"][0].clone();
    first["content"] = content;
    let server = serve(Loop {
        round: |b| count_role(&b["messages"], "assistant"),
        checks: vec![
            |_| Ok(()),
            |b| {
                let first = &b["messages"][1]["content"];
                if first[0]["signature"] != "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
                    || first[1]["type"] != "redacted_thinking"
                {
                    return Err(format!(
                        "the thinking blocks did not come back first: {first}"
                    ));
                }
                let results = &b["messages"][2]["content"];
                if results[1]["is_error"] != true || results[0].get("is_error").is_some() {
                    return Err(format!("the error result is not flagged: {results}"));
                }
                Ok(())
            },
            |b| {
                if b["container"] != "container_011CYVPF4iP8oD6Vsz1NhVih" {
                    return Err("the container id was not sent".into());
                }
                let second = &b["messages"][3]["content"];
                if second[1]["type"] != "server_tool_use" {
                    return Err(format!("the server tool block was dropped: {second}"));
                }
                Ok(())
            },
        ],
        answers: vec![
            first.clone(),
            json_of(ANTHROPIC_SERVER_TOOL),
            json_of(ANTHROPIC_TEXT),
        ],
    })
    .await;
    let provider = anthropic(&format!("{}/v1", server.uri()));
    let (answers, request) = drive(&provider).await.unwrap();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0].tool_calls.len(), 2);
    // The third request carried both turns exactly as the API gave them.
    let received = server.received_requests().await.unwrap();
    let third: Value = serde_json::from_slice(&received[2].body).unwrap();
    assert_eq!(third["messages"][1]["content"], first["content"]);
    assert_eq!(
        third["messages"][3]["content"],
        json_of(ANTHROPIC_SERVER_TOOL)["content"]
    );
    assert_eq!(request.messages.len(), 7);
}

#[tokio::test]
async fn gemini_loop_assigns_ids_keeps_signatures_and_answers_in_call_order() {
    // Round 1: three same-named calls without ids; round 2: the recorded call with a
    // thought signature; round 3: a text answer.
    let mut text = json_of(GEMINI_NULL_ARG);
    text["candidates"][0]["content"]["parts"] = json!([{"text": "Done: 3, 7 and 11."}]);
    let server = serve(Loop {
        round: |b| count_role(&b["contents"], "model"),
        checks: vec![
            |_| Ok(()),
            |b| {
                let results = &b["contents"][2]["parts"];
                let want = json!([
                    {"functionResponse": {"name": "sum", "response": {"n": "r0c0"}}},
                    {"functionResponse": {"name": "sum", "response": {"error": "rate limited"}}},
                    {"functionResponse": {"name": "sum", "response": {"n": "r0c2"}}}
                ]);
                (results == &want)
                    .then_some(())
                    .ok_or_else(|| format!("results not in call order: {results}"))
            },
            |b| {
                let parts = &b["contents"][3]["parts"];
                let want = &json_of(GEMINI_SIGNATURE)["candidates"][0]["content"]["parts"];
                if parts != want {
                    return Err(format!(
                        "the signed turn was not sent back verbatim: {parts}"
                    ));
                }
                (b["contents"][4]["parts"][0]["functionResponse"]["name"] == "now")
                    .then_some(())
                    .ok_or_else(|| "the result of `now` is missing".into())
            },
        ],
        answers: vec![json_of(GEMINI_PARALLEL), json_of(GEMINI_SIGNATURE), text],
    })
    .await;
    let provider = gemini(&format!("{}/v1beta", server.uri()));
    let (answers, _) = drive(&provider).await.unwrap();
    let ids: Vec<_> = answers
        .iter()
        .flat_map(|a| &a.tool_calls)
        .map(|c| c.id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["call_r0_0", "call_r0_1", "call_r0_2", "call_r1_0"]);
    assert_eq!(answers[2].text.as_deref(), Some("Done: 3, 7 and 11."));
}

#[tokio::test]
async fn a_loop_missing_its_state_is_refused_by_the_fake_server() {
    // The checks can fail: a turn sent back without its thinking blocks is refused.
    let server = serve(Loop {
        round: |b| count_role(&b["messages"], "assistant"),
        checks: vec![|_| Ok(()), |b| {
            (b["messages"][1]["content"][0]["type"] == "thinking")
                .then_some(())
                .ok_or_else(|| "no thinking block".to_string())
        }],
        answers: vec![json_of(ANTHROPIC_SINGLE), json_of(ANTHROPIC_TEXT)],
    })
    .await;
    let provider = anthropic(&format!("{}/v1", server.uri()));
    let err = drive(&provider).await.unwrap_err();
    assert!(err.contains("round 1: no thinking block"), "{err}");
}
