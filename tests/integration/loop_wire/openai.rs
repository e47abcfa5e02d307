//! OpenAI Chat Completions over three rounds: the recorded parallel calls
//! (`GetWeatherArgs` and `get_stock_price`, with OpenAI's ids), the recorded single
//! call, the recorded text answer; the first weather call meets the suite's injected
//! rate limit. The tool names and arguments are the recorded ones, so every answer is
//! the body OpenAI sent, unchanged.

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::ToolErrorKind;

use super::*;

const SUITE: &str = r#"
tools:
  - name: GetWeatherArgs
    description: Current weather in a city.
    parameters:
      type: object
      properties: {city: {type: string}, country: {type: string}, units: {type: string, enum: [c, f]}}
      required: [city, country, units]
  - name: get_stock_price
    description: Latest price of a stock.
    parameters:
      type: object
      properties: {ticker: {type: string}, exchange: {type: string}}
      required: [ticker, exchange]
mocks:
  GetWeatherArgs:
    - fail: {kind: rate_limit, times: 1}
      when: {city: Edinburgh}
    - when: {city: Edinburgh}
      result: {temp_c: 9, condition: drizzle}
  get_stock_price:
    - when: {ticker: AAPL}
      result: {price: 227.52, currency: USD}
cases:
  - id: weather-and-stock
    kind: should_call
    prompt: "Weather in Edinburgh, and the AAPL price?"
    expect:
      trajectory:
        mode: unordered
        steps:
          - {tool: GetWeatherArgs, args: {city: Edinburgh}}
          - {tool: get_stock_price, args: {ticker: AAPL}}
"#;

const RATE_LIMITED: &str =
    r#"{"error":{"kind":"rate_limit","message":"rate limit exceeded; retry later"}}"#;
const WEATHER: &str = r#"{"temp_c":9,"condition":"drizzle"}"#;
const STOCK: &str = r#"{"price":227.52,"currency":"USD"}"#;

/// The recorded answers of the three rounds.
fn answers() -> [Value; 3] {
    [
        testdata("openai/chat_parallel_tool_calls.json"),
        testdata("openai/chat_single_tool_call_recorded.json"),
        testdata("openai/chat_text_answer_recorded.json"),
    ]
}

#[tokio::test]
async fn three_rounds_echo_the_calls_and_answer_each_id_in_call_order() {
    let [parallel, single, text] = answers();
    let server = serve(
        assistant_turns,
        vec![vec![ok(&parallel)], vec![ok(&single)], vec![ok(&text)]],
    )
    .await;
    let target = format!("openai:gpt-4o-2024-08-06@{}/v1", server.uri());
    let trial = Trial::new(SUITE, "weather-and-stock", &target);
    let outcome = trial.play(keyed(&target, fast()).as_ref()).await;

    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    assert_eq!(
        final_text(&outcome),
        Some(
            "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or app like the Weather Channel or a local news station."
        )
    );
    assert_eq!(outcome.tool_calls(), 3);
    // The recorded usages: 149 + 76 + 14 prompt, 60 + 24 + 37 completion tokens.
    let usage = outcome.usage().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (239, 121));
    let first = &outcome.rounds[0].outcomes[0];
    assert!(first.fault && first.is_error);
    assert_eq!(first.error_kind, Some(ToolErrorKind::RateLimit));
    assert_eq!(trial.judge(&outcome), Vec::<String>::new());

    // What the server received, round by round.
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    let user = json!({"role": "user", "content": "Weather in Edinburgh, and the AAPL price?"});
    let recorded_calls = |answer: &Value| answer["choices"][0]["message"]["tool_calls"].clone();
    let third = json!([
        user,
        // The assistant turns go back as OpenAI sent them: ids, argument strings
        // byte for byte (with the recording's spaces), `content: null`.
        {"role": "assistant", "content": null, "tool_calls": recorded_calls(&parallel)},
        {"role": "tool", "tool_call_id": "call_fdNz3vOBKYgOIpMdWotB9MjY", "content": RATE_LIMITED},
        {"role": "tool", "tool_call_id": "call_h1DWI1POMJLb0KwIyQHWXD4p", "content": STOCK},
        {"role": "assistant", "content": null, "tool_calls": recorded_calls(&single)},
        {"role": "tool", "tool_call_id": "call_Y6qJ7ofLgOrBnMD5WbVAeiRV", "content": WEATHER}
    ]);
    assert_eq!(seen[2]["messages"], third);
    // Each request is the previous one plus the turn it answered and its results.
    assert_eq!(seen[0]["messages"], json!(third.as_array().unwrap()[..1]));
    assert_eq!(seen[1]["messages"], json!(third.as_array().unwrap()[..4]));
    for body in &seen {
        assert_eq!(body["model"], "gpt-4o-2024-08-06");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["tools"].as_array().unwrap().len(), 2);
    }
    // The key reached the auth header of every request, and nothing else.
    for request in received(&server).await {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            &format!("Bearer {KEY}")
        );
        assert_no_key(&String::from_utf8_lossy(&request.body));
    }
    assert_no_key(&format!("{outcome:?}"));

    // The conversation the episode kept holds the same pairs, in call order.
    assert_eq!(
        tool_messages(&outcome),
        [
            tool(
                "call_fdNz3vOBKYgOIpMdWotB9MjY",
                "GetWeatherArgs",
                RATE_LIMITED,
                true
            ),
            tool(
                "call_h1DWI1POMJLb0KwIyQHWXD4p",
                "get_stock_price",
                STOCK,
                false
            ),
            tool(
                "call_Y6qJ7ofLgOrBnMD5WbVAeiRV",
                "GetWeatherArgs",
                WEATHER,
                false
            ),
        ]
    );
}

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
            {"role": "assistant", "content": null, "reasoning_content": REASONING[0],
             "tool_calls": calls(&parallel)},
            {"role": "tool", "tool_call_id": "call_fdNz3vOBKYgOIpMdWotB9MjY", "content": RATE_LIMITED},
            {"role": "tool", "tool_call_id": "call_h1DWI1POMJLb0KwIyQHWXD4p", "content": STOCK},
            {"role": "assistant", "content": null, "reasoning_content": REASONING[1],
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

/// Ollama's `/v1` answer to a tool request, as `openai/openai.go` (`ToChatCompletion`)
/// writes it from the native `/api/chat` answer in
/// `testdata/openai/ollama_api_chat_tool_call.json`: `content: ""`, each call with an
/// `index` and a `call_` id of eight lowercase letters and digits (the server's
/// `toolCallId`), arguments as a string, `finish_reason` forced to `tool_calls` (the
/// native `done_reason` says `stop`), `system_fingerprint: "fp_ollama"`, and the
/// eval counts as usage.
pub fn ollama_calls(calls: &[(&str, &str, Value)]) -> Value {
    let native = testdata("openai/ollama_api_chat_tool_call.json");
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            json!({"id": id, "index": i, "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    let prompt = native["prompt_eval_count"].as_u64().unwrap();
    let eval = native["eval_count"].as_u64().unwrap();
    json!({
        "id": "chatcmpl-562",
        "object": "chat.completion",
        "created": 1751920373,
        "model": native["model"],
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0,
                     "message": {"role": "assistant", "content": native["message"]["content"],
                                 "tool_calls": tool_calls},
                     "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": eval,
                  "total_tokens": prompt + eval}
    })
}

/// Ollama's `/v1` text answer (same mapping, `finish_reason: "stop"`).
pub fn ollama_text(text: &str) -> Value {
    let mut body = ollama_calls(&[]);
    let choice = &mut body["choices"][0];
    choice["message"] = json!({"role": "assistant", "content": text});
    choice["finish_reason"] = json!("stop");
    body
}

const OLLAMA_SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather in a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
mocks:
  get_weather:
    - when: {city: Tokyo}
      result: {temp_c: 25, condition: sunny}
    - error: {kind: not_found, message: "no weather station in this city"}
cases:
  - id: tokyo
    kind: should_call
    prompt: "What is the weather in Tokyo?"
    expect:
      trajectory:
        steps:
          - {tool: get_weather, args: {city: Tokyo}}
"#;

const OLLAMA_THINKING: &str = "The user names Tokyo: call get_weather.";

#[tokio::test]
async fn ollama_v1_loop_through_the_registry_sends_content_null_and_a_tool_error_as_json() {
    // The native example's call (Tokyo) from a thinking model (Ollama's `/v1` puts the
    // thinking in `reasoning`), then a call the mocks answer with a declared error,
    // then text.
    let mut first = ollama_calls(&[("call_x3kq9m2a", "get_weather", json!({"city": "Tokyo"}))]);
    first["choices"][0]["message"]["reasoning"] = json!(OLLAMA_THINKING);
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&first)],
            vec![ok(&ollama_calls(&[(
                "call_p0w7c1zd",
                "get_weather",
                json!({"city": "Atlantis"}),
            )]))],
            vec![ok(&ollama_text(
                "Tokyo: 25 °C and sunny. I could not find the weather for Atlantis.",
            ))],
        ],
    )
    .await;
    let target = format!("ollama:llama3.2@{}/v1", server.uri());
    let trial = Trial::new(OLLAMA_SUITE, "tokyo", &target);
    let outcome = trial.play(keyless(&target, fast()).as_ref()).await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 3);
    assert_eq!(
        final_text(&outcome),
        Some("Tokyo: 25 °C and sunny. I could not find the weather for Atlantis.")
    );
    assert_eq!(
        outcome.rounds[0].response.finish_reason.as_deref(),
        Some("tool_calls")
    );
    assert_eq!(trial.judge(&outcome), Vec::<String>::new());

    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    assert_eq!(
        received(&server).await[0].url.path(),
        "/v1/chat/completions"
    );
    let not_found = r#"{"error":{"kind":"not_found","message":"no weather station in this city"}}"#;
    let call = |id: &str, city: &str| {
        json!({"id": id, "type": "function",
               "function": {"name": "get_weather", "arguments": format!(r#"{{"city":"{city}"}}"#)}})
    };
    // Ollama's empty `content` comes back as `null` beside the calls (its /v1 layer
    // reads a turn without content as calls only), the thinking as `reasoning` (which
    // it reads back as the turn's thinking); `index` is not sent back.
    assert_eq!(
        seen[2]["messages"],
        json!([
            {"role": "user", "content": "What is the weather in Tokyo?"},
            {"role": "assistant", "content": null, "reasoning": OLLAMA_THINKING,
             "tool_calls": [call("call_x3kq9m2a", "Tokyo")]},
            {"role": "tool", "tool_call_id": "call_x3kq9m2a", "content": "{\"temp_c\":25,\"condition\":\"sunny\"}"},
            {"role": "assistant", "content": null, "tool_calls": [call("call_p0w7c1zd", "Atlantis")]},
            {"role": "tool", "tool_call_id": "call_p0w7c1zd", "content": not_found}
        ])
    );
    assert_eq!(seen[2]["model"], "llama3.2");
    // No key configured: no auth header at all.
    assert!(
        received(&server).await[0]
            .headers
            .get("authorization")
            .is_none()
    );
}
