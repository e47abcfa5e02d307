//! OpenAI-compatible servers that are stricter or richer than OpenAI, each played by
//! a fake server that refuses what the real one refuses: DeepSeek wants the
//! `reasoning_content` of every tool-calling turn back, llama-cpp-python's chat template
//! reads every assistant turn's `content` as a string, servers that give parallel
//! calls one shared id refuse a repeated `tool_call_id`, and vLLM and Ollama's `/v1`
//! parse an earlier call's arguments for their chat template. The answers are the
//! recorded OpenAI bodies of [`super::openai`], changed only as each test says.

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::ToolErrorKind;

use super::openai::{RATE_LIMITED, STOCK, SUITE, WEATHER, answers};
use super::*;

/// The recorded answers with DeepSeek's `reasoning_content` beside the message's
/// content, as its thinking mode (on by default) returns it.
fn deepseek_answers() -> [Value; 3] {
    let mut answers = answers();
    for (answer, reasoning) in answers.iter_mut().zip(REASONING) {
        answer["choices"][0]["message"]["reasoning_content"] = json!(reasoning);
    }
    answers
}

const REASONING: [&str; 3] = [
    "Two lookups: the weather in Edinburgh and the AAPL price. Call both tools.",
    "The weather lookup hit a rate limit; call it again.",
    "Both results are in; answer.",
];

/// DeepSeek's documented rule: every earlier assistant turn that made tool calls must
/// carry its `reasoning_content` (else the API answers 400).
fn deepseek_check(_round: usize, body: &Value) -> Result<(), String> {
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        if m["role"] == "assistant"
            && m.get("tool_calls").is_some()
            && !m["reasoning_content"].is_string()
        {
            return Err(format!(
                "messages[{i}]: the reasoning_content of a tool-calling turn must be passed back"
            ));
        }
    }
    Ok(())
}

#[tokio::test]
async fn deepseek_reasoning_content_goes_back_with_each_tool_calling_turn() {
    let [parallel, single, text] = deepseek_answers();
    let server = serve_checked(
        assistant_turns,
        deepseek_check,
        vec![vec![ok(&parallel)], vec![ok(&single)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai-compatible:deepseek-v4-pro@{}/v1", server.uri());
    let trial = Trial::new(SUITE, "weather-and-stock", &target);
    let outcome = trial.play(keyless(&target, fast()).as_ref()).await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    // The reasoning is state, not answer text.
    assert_eq!(outcome.rounds[0].response.text, None);
    assert_eq!(
        outcome.rounds[0].response.state,
        Some(json!({"openai": {"message": {"reasoning_content": REASONING[0]}}}))
    );
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    let calls = |answer: &Value| answer["choices"][0]["message"]["tool_calls"].clone();
    assert_eq!(
        seen[2]["messages"],
        json!([
            {"role": "user", "content": "Weather in Edinburgh, and the AAPL price?"},
            {"role": "assistant", "content": "", "reasoning_content": REASONING[0],
             "tool_calls": calls(&parallel)},
            {"role": "tool", "tool_call_id": "call_fdNz3vOBKYgOIpMdWotB9MjY", "content": RATE_LIMITED},
            {"role": "tool", "tool_call_id": "call_h1DWI1POMJLb0KwIyQHWXD4p", "content": STOCK},
            {"role": "assistant", "content": "", "reasoning_content": REASONING[1],
             "tool_calls": calls(&single)},
            {"role": "tool", "tool_call_id": "call_Y6qJ7ofLgOrBnMD5WbVAeiRV", "content": WEATHER}
        ])
    );
}

#[tokio::test]
async fn the_fake_deepseek_refuses_a_tool_turn_sent_back_without_its_reasoning() {
    // The check can fail: OpenAI's own answers carry no reasoning, and a server that
    // demanded it would refuse round 2.
    let [parallel, single, text] = answers();
    let server = serve_checked(
        assistant_turns,
        deepseek_check,
        vec![vec![ok(&parallel)], vec![ok(&single)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai-compatible:deepseek-v4-pro@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather-and-stock", &target)
        .play(keyless(&target, fast()).as_ref())
        .await;
    let error = outcome.end.as_ref().unwrap_err().to_string();
    assert!(
        error.starts_with("round 2: openai-compatible request failed: HTTP 400 after 1 attempt(s)")
            && error.contains(
                "messages[1]: the reasoning_content of a tool-calling turn must be passed back"
            ),
        "{error}"
    );
}

/// A compatible server's rule (as DeepSeek and GLM enforce it): within a request, no
/// two tool messages answer the same `tool_call_id`, and each answers a call of the
/// assistant message before it.
fn unique_results(_round: usize, body: &Value) -> Result<(), String> {
    let mut answered: Vec<&Value> = Vec::new();
    let mut calls: Vec<&Value> = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        if m["role"] == "assistant" {
            calls = m["tool_calls"]
                .as_array()
                .map_or(vec![], |c| c.iter().map(|c| &c["id"]).collect());
        } else if m["role"] == "tool" {
            let id = &m["tool_call_id"];
            if answered.contains(&id) {
                return Err(format!(
                    "Duplicate value for 'tool_call_id' of {id} in message[{i}]"
                ));
            }
            if !calls.contains(&id) {
                return Err(format!("messages[{i}]: tool_call_id {id} answers no call"));
            }
            answered.push(id);
        }
    }
    Ok(())
}

#[tokio::test]
async fn parallel_calls_sharing_one_id_get_ids_of_their_own() {
    // The recorded parallel answer as a server that gives every call of a turn the
    // same id sends it.
    let [mut parallel, _, text] = answers();
    let shared = parallel["choices"][0]["message"]["tool_calls"][0]["id"].clone();
    parallel["choices"][0]["message"]["tool_calls"][1]["id"] = shared;
    let server = serve_checked(
        assistant_turns,
        unique_results,
        vec![vec![ok(&parallel)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai-compatible:glm-4.6@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather-and-stock", &target)
        .play(keyless(&target, fast()).as_ref())
        .await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    // The first call keeps the server's id; the second gets the one its round and
    // position give.
    assert_eq!(
        tool_messages(&outcome),
        [
            tool(
                "call_fdNz3vOBKYgOIpMdWotB9MjY",
                "GetWeatherArgs",
                RATE_LIMITED,
                true
            ),
            tool("call_r0_1", "get_stock_price", STOCK, false),
        ]
    );
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 2);
    let ids: Vec<&Value> = seen[1]["messages"][1]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(
        ids,
        [&json!("call_fdNz3vOBKYgOIpMdWotB9MjY"), &json!("call_r0_1")]
    );
}

/// What vLLM and Ollama's `/v1` do with an earlier call: parse its arguments into an
/// object for the chat template (vLLM `json.loads`, Ollama "invalid tool call
/// arguments"), refusing the request when that fails.
fn template_parses_arguments(_round: usize, body: &Value) -> Result<(), String> {
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
            if !matches!(
                serde_json::from_str::<Value>(arguments),
                Ok(Value::Object(_))
            ) {
                return Err(format!("messages[{i}]: invalid tool call arguments"));
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_malformed_call_is_scored_by_its_result_and_does_not_break_the_next_request() {
    // The recorded single call, its arguments cut off as a model that ran out of
    // tokens leaves them; then the recorded text answer.
    let [_, mut single, text] = answers();
    let cut = r#"{"city":"Edinburgh","country":"UK","un"#;
    single["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json!(cut);
    let server = serve_checked(
        assistant_turns,
        template_parses_arguments,
        vec![vec![ok(&single)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai-compatible:qwen3-8b@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather-and-stock", &target)
        .play(keyless(&target, fast()).as_ref())
        .await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    // The call was refused before reaching the tool: the model reads why.
    let refused = &outcome.rounds[0].outcomes[0];
    assert_eq!(refused.error_kind, Some(ToolErrorKind::InvalidArguments));
    assert!(!refused.executed);
    // The transcript keeps the arguments as the model wrote them...
    assert_eq!(outcome.rounds[0].response.tool_calls[0].arguments, cut);
    // ...and the wire sends `{}` in their place, so the server takes the request.
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 2);
    let sent = &seen[1]["messages"];
    assert_eq!(sent[1]["tool_calls"][0]["function"]["arguments"], "{}");
    assert_eq!(sent[2]["tool_call_id"], "call_Y6qJ7ofLgOrBnMD5WbVAeiRV");
    let content: Value = serde_json::from_str(sent[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["error"]["kind"], "invalid_arguments");
    assert!(
        content["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the arguments are not valid JSON: EOF while parsing"),
        "{content}"
    );
}

/// llama-cpp-python's server (`chatml-function-calling`, the server of the SmolLM2 test):
/// its template reads `message['content']` of every assistant turn, so a turn without the
/// key fails the request (HTTP 500 "'dict object' has no attribute 'content'"), and its
/// request model refuses a null one; `""` works.
fn template_reads_content(_round: usize, body: &Value) -> Result<(), String> {
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        match m.get("content") {
            None => {
                return Err(format!(
                    "messages[{i}]: 'dict object' has no attribute 'content'"
                ));
            }
            Some(Value::String(_)) => {}
            Some(other) => {
                return Err(format!(
                    "messages[{i}].content: input should be a valid string, got {other}"
                ));
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_assistant_turn_goes_back_with_a_string_content_a_chat_template_can_read() {
    let [parallel, single, text] = answers();
    let server = serve_checked(
        assistant_turns,
        template_reads_content,
        vec![vec![ok(&parallel)], vec![ok(&single)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai-compatible:smollm2@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather-and-stock", &target)
        .play(keyless(&target, fast()).as_ref())
        .await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    let seen = bodies(&server).await;
    let contents: Vec<&Value> = seen[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| &m["content"])
        .collect();
    assert_eq!(contents, vec![&json!(""), &json!("")]);
}
