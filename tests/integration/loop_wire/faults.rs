//! Server faults in the middle of a loop: round 1 is answered, then round 2 meets a
//! rate limit that clears (retried, the episode goes on), a server error that persists
//! or a refused key (the episode ends as an infrastructure error, round 1 kept), a
//! malformed body (an error, never a panic) or an answer that never comes (a timeout).

use std::time::Duration;

use serde_json::{Value, json};
use toolgauge::episode::{EpisodeError, EpisodeOutcome};
use toolgauge::provider::ProviderError;
use toolgauge::provider::http::{HttpError, HttpSettings};
use toolgauge::suite::trajectory::StopReason;
use wiremock::ResponseTemplate;

use super::gemini::text_answer;
use super::*;

const SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for a location.
    parameters: {type: object, properties: {location: {type: string}, city: {type: string}}}
  - name: GetWeatherArgs
    description: Current weather in a city.
    parameters: {type: object, properties: {city: {type: string}, country: {type: string}, units: {type: string}}}
  - name: get_stock_price
    description: Latest price of a stock.
    parameters: {type: object, properties: {ticker: {type: string}, exchange: {type: string}}}
  - name: sum
    description: Add two integers.
    parameters: {type: object, properties: {x: {type: integer}, y: {type: integer}}}
mocks:
  GetWeatherArgs:
    - result: {temp_c: 9}
  get_stock_price:
    - result: {price: 227.52}
  get_weather:
    - result: {temp_c: 17}
  sum:
    - result: {sum: 0}
cases:
  - id: weather
    kind: should_call
    prompt: "Weather?"
    expect:
      trajectory:
        steps:
          - {tool: get_weather}
"#;

/// The provider error that ended `outcome` in round `round`, after checking that the
/// rounds before it were kept with their tool results.
fn provider_error(outcome: &EpisodeOutcome, round: usize) -> &ProviderError {
    match &outcome.end {
        Err(EpisodeError::Provider { round: r, source }) if *r == round => {
            assert_eq!(outcome.rounds.len(), round - 1);
            assert!(outcome.rounds.iter().all(|r| r.executed()));
            assert!(
                outcome.transcript().is_err(),
                "a failed episode has no verdict"
            );
            source
        }
        other => panic!("expected a provider error in round {round}, got {other:?}"),
    }
}

/// OpenAI's recorded parallel answer as round 1 and `round2` as the second round's
/// replies, played against the OpenAI provider with `http`.
async fn openai_loop(
    round2: Vec<ResponseTemplate>,
    http: HttpSettings,
) -> (EpisodeOutcome, Vec<Value>) {
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&testdata("openai/chat_parallel_tool_calls.json"))],
            round2,
        ],
    )
    .await;
    let target = format!("openai:gpt-4o@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather", &target)
        .play(keyed(&target, http).as_ref())
        .await;
    (outcome, bodies(&server).await)
}

#[tokio::test]
async fn a_rate_limit_in_round_2_is_retried_after_its_wait_and_the_loop_goes_on() {
    // Anthropic's recorded 429 (with its `retry-after` and `x-should-retry` headers),
    // then the recorded text answer. The wait asked for (1 s) is capped by the test's
    // `max_delay` (20 ms).
    let limited = ResponseTemplate::new(429)
        .set_body_json(testdata("anthropic/error_429_rate_limit.json"))
        .insert_header("retry-after", "1")
        .insert_header("x-should-retry", "true");
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&testdata("anthropic/msg_single_tool_use.json"))],
            vec![limited, ok(&testdata("anthropic/msg_text_end_turn.json"))],
        ],
    )
    .await;
    let target = format!("anthropic:claude-haiku-4-5-20251001@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather", &target)
        .play(keyed(&target, fast()).as_ref())
        .await;
    assert_eq!(
        outcome.stop(),
        Some(StopReason::Answered),
        "{:?}",
        outcome.end
    );
    assert_eq!(outcome.rounds.len(), 2);
    assert_eq!(outcome.rounds[0].response.attempts, 1);
    assert_eq!(outcome.rounds[1].response.attempts, 2);
    assert!(outcome.rounds[1].response.text.is_some());
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 3);
    // The retry sent the same conversation: the call and its result.
    assert_eq!(seen[1], seen[2]);
    assert_eq!(
        seen[2]["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
               "content": "{\"temp_c\":17}"})
    );
}

#[tokio::test]
async fn a_server_error_that_persists_in_round_2_ends_the_episode_and_keeps_round_1() {
    let error = json!({"error": {
        "message": "The server had an error while processing your request. Sorry about that!",
        "type": "server_error", "param": null, "code": null
    }});
    let (outcome, seen) = openai_loop(
        vec![ResponseTemplate::new(500).set_body_json(&error)],
        fast(),
    )
    .await;
    let source = provider_error(&outcome, 2);
    assert!(
        matches!(
            source,
            ProviderError::Http {
                source: HttpError::Status {
                    status: 500,
                    attempts: 3,
                    ..
                },
                ..
            }
        ),
        "{source:?}"
    );
    // Round 1 and the results of its two calls stay in the conversation.
    assert_eq!(outcome.rounds[0].outcomes.len(), 2);
    assert_eq!(outcome.messages.len(), 4);
    assert_eq!(outcome.tool_calls(), 2);
    // One request for round 1, three attempts at round 2, each with the results.
    assert_eq!(seen.len(), 4);
    for body in &seen[1..] {
        assert_eq!(body["messages"].as_array().unwrap().len(), 4);
    }
    let text = outcome.end.as_ref().unwrap_err().to_string();
    assert!(
        text.starts_with("round 2: openai request failed: HTTP 500 after 3 attempt(s)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_refused_key_in_round_2_is_not_retried_and_never_quoted() {
    // A server that echoes the key in its error must not get it into the error text.
    let refused = json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
        "type": "invalid_request_error", "param": null, "code": "invalid_api_key"
    }});
    let (outcome, seen) = openai_loop(
        vec![ResponseTemplate::new(401).set_body_json(&refused)],
        fast(),
    )
    .await;
    let source = provider_error(&outcome, 2);
    assert!(
        matches!(
            source,
            ProviderError::Http {
                source: HttpError::Status {
                    status: 401,
                    attempts: 1,
                    ..
                },
                ..
            }
        ),
        "{source:?}"
    );
    assert_eq!(seen.len(), 2);
    let text = outcome.end.as_ref().unwrap_err().to_string();
    assert!(
        text.contains("Incorrect API key provided: [REDACTED]."),
        "{text}"
    );
    assert_no_key(&text);
    assert_no_key(&format!("{outcome:?}"));
}

#[tokio::test]
async fn a_body_that_is_not_json_in_round_2_is_an_error() {
    let html = ResponseTemplate::new(200).set_body_raw(
        "<html><body><h1>502 Bad Gateway</h1></body></html>",
        "text/html",
    );
    let (outcome, seen) = openai_loop(vec![html], fast()).await;
    let source = provider_error(&outcome, 2);
    match source {
        ProviderError::Http {
            source: HttpError::InvalidBody { snippet, .. },
            ..
        } => assert!(
            snippet.starts_with("<html><body><h1>502 Bad Gateway"),
            "{snippet}"
        ),
        other => panic!("expected a malformed body, got {other:?}"),
    }
    // A 200 that is not JSON is not retried.
    assert_eq!(seen.len(), 2);
}

#[tokio::test]
async fn a_body_in_the_wrong_shape_in_round_2_is_a_decode_error() {
    // Gemini: the recorded parallel calls, then a candidate whose `parts` is an object.
    let mut wrong = text_answer("unused");
    wrong["candidates"][0]["content"]["parts"] = json!({"text": "not a list"});
    let server = serve(
        model_turns,
        vec![
            vec![ok(&testdata("gemini/function_call_parallel.json"))],
            vec![ok(&wrong)],
        ],
    )
    .await;
    let target = format!("gemini:gemini-2.5-pro@{}/v1beta", server.uri());
    let outcome = Trial::new(SUITE, "weather", &target)
        .play(keyed(&target, fast()).as_ref())
        .await;
    match provider_error(&outcome, 2) {
        ProviderError::Decode { provider, message } => {
            assert_eq!(provider, "gemini");
            assert!(
                message.starts_with("`candidates[0].content.parts` is an object, not a list"),
                "{message}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    assert_eq!(outcome.rounds[0].outcomes.len(), 3);
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn an_error_body_with_status_200_in_round_2_is_a_decode_error() {
    // Anthropic's documented `overloaded_error` event payload, arriving as a whole
    // body with status 200.
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = serve(
        assistant_turns,
        vec![
            vec![ok(&testdata("anthropic/msg_single_tool_use.json"))],
            vec![ok(&overloaded)],
        ],
    )
    .await;
    let target = format!("anthropic:claude-haiku-4-5-20251001@{}/v1", server.uri());
    let outcome = Trial::new(SUITE, "weather", &target)
        .play(keyed(&target, fast()).as_ref())
        .await;
    match provider_error(&outcome, 2) {
        ProviderError::Decode { message, .. } => assert!(
            message.starts_with("the API returned an error: overloaded_error: Overloaded"),
            "{message}"
        ),
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_answer_that_never_comes_in_round_2_times_out() {
    // Round 2's answer would take ten minutes; each attempt gives up after 10 s, far
    // above what round 1's immediate answer takes even on a starved 2-core machine (the
    // timeout bounds round 1 too, which must succeed).
    let never =
        ok(&testdata("openai/chat_text_answer_recorded.json")).set_delay(Duration::from_secs(600));
    let http = HttpSettings {
        timeout: Duration::from_secs(10),
        max_attempts: 2,
        ..fast()
    };
    let (outcome, seen) = openai_loop(vec![never], http).await;
    let source = provider_error(&outcome, 2);
    assert!(
        matches!(
            source,
            ProviderError::Http {
                source: HttpError::Timeout { attempts: 2, .. },
                ..
            }
        ),
        "{source:?}"
    );
    assert_eq!(seen.len(), 3);
    let text = outcome.end.as_ref().unwrap_err().to_string();
    assert_eq!(
        text,
        "round 2: openai request failed: timed out after 10.0 s on each of 2 attempt(s)"
    );
}
