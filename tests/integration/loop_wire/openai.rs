//! OpenAI Chat Completions over three rounds: the recorded parallel calls
//! (`GetWeatherArgs` and `get_stock_price`, with OpenAI's ids), the recorded single
//! call, the recorded text answer; the first weather call meets the suite's injected
//! rate limit. The tool names and arguments are the recorded ones, so every answer is
//! the body OpenAI sent, unchanged.

use serde_json::{Value, json};
use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::ToolErrorKind;

use super::*;

pub const SUITE: &str = r#"
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

pub const RATE_LIMITED: &str =
    r#"{"error":{"kind":"rate_limit","message":"rate limit exceeded; retry later"}}"#;
pub const WEATHER: &str = r#"{"temp_c":9,"condition":"drizzle"}"#;
pub const STOCK: &str = r#"{"price":227.52,"currency":"USD"}"#;

/// The recorded answers of the three rounds.
pub fn answers() -> [Value; 3] {
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
        // byte for byte (with the recording's spaces), and `content: ""` (not left out:
        // llama-cpp-python's template reads the key; not null: it refuses a null one).
        {"role": "assistant", "content": "", "tool_calls": recorded_calls(&parallel)},
        {"role": "tool", "tool_call_id": "call_fdNz3vOBKYgOIpMdWotB9MjY", "content": RATE_LIMITED},
        {"role": "tool", "tool_call_id": "call_h1DWI1POMJLb0KwIyQHWXD4p", "content": STOCK},
        {"role": "assistant", "content": "", "tool_calls": recorded_calls(&single)},
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

#[tokio::test]
async fn a_forcing_tool_choice_forces_the_first_round_only() {
    // Forced on every round, the model could never answer: `required` and a named
    // function go with the first request, and every later one asks `auto`.
    let named = json!({"type": "function", "function": {"name": "get_stock_price"}});
    for (mode, first) in [
        (ToolChoice::Required, json!("required")),
        (ToolChoice::Function("get_stock_price".into()), named),
    ] {
        let [parallel, single, text] = answers();
        let server = serve(
            assistant_turns,
            vec![vec![ok(&parallel)], vec![ok(&single)], vec![ok(&text)]],
        )
        .await;
        let target = format!("openai:gpt-4o-2024-08-06@{}/v1", server.uri());
        let trial = Trial::new(SUITE, "weather-and-stock", &target).with_mode(mode.clone());
        let outcome = trial.play(keyed(&target, fast()).as_ref()).await;
        assert_eq!(
            outcome.stop(),
            Some(StopReason::Answered),
            "{mode:?}: {:?}",
            outcome.end
        );
        let choices: Vec<Value> = bodies(&server)
            .await
            .iter()
            .map(|b| b["tool_choice"].clone())
            .collect();
        assert_eq!(
            choices,
            vec![first, json!("auto"), json!("auto")],
            "{mode:?}"
        );
    }
}
