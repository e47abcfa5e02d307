//! Ollama's OpenAI-compatible `/v1` endpoint, through the registry's `ollama` target
//! (no key): its answer shape and a loop over it.

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;

use super::*;

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
async fn ollama_v1_loop_through_the_registry_sends_empty_content_and_a_tool_error_as_json() {
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
    // Ollama's empty `content` goes back as `""` beside the calls (its /v1 layer reads
    // an empty content as calls only), the thinking as `reasoning` (which
    // it reads back as the turn's thinking); `index` is not sent back.
    assert_eq!(
        seen[2]["messages"],
        json!([
            {"role": "user", "content": "What is the weather in Tokyo?"},
            {"role": "assistant", "content": "", "reasoning": OLLAMA_THINKING,
             "tool_calls": [call("call_x3kq9m2a", "Tokyo")]},
            {"role": "tool", "tool_call_id": "call_x3kq9m2a", "content": "{\"temp_c\":25,\"condition\":\"sunny\"}"},
            {"role": "assistant", "content": "", "tool_calls": [call("call_p0w7c1zd", "Atlantis")]},
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
