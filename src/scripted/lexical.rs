//! `scripted:lexical`: a simulated model that picks a tool by the words it shares with
//! the user's request, so a tool's wording changes its answers. It gives `toolgauge
//! improve` and its tests a target whose accuracy a better description really raises,
//! offline and with no key; it simulates a reader of words, not any model's result.
//!
//! For a request it reads the last user message and every offered tool:
//! - [`words`] lowercases a text and splits it on every character that is not a letter
//!   or digit; a CJK character (Han, kana, Hangul) is a word of its own, since those
//!   scripts do not separate words with spaces. Words of fewer than 3 characters (CJK
//!   characters excepted) and the English words of [`STOP_WORDS`] are dropped.
//! - A tool's text ([`tool_words`]) is its name split on `_`, `-` and camelCase, its
//!   description, and every `description` inside its parameter schema.
//! - A tool's score is the number of distinct request words found in its text; the best
//!   tool is the one with the highest score (ties: the first offered).
//!
//! Under `auto` it calls the best tool when its score is at least 1 and answers in text
//! otherwise; under `none` it answers in text; under `required` it calls the best tool
//! even at score 0; under `function:NAME` it calls NAME. A call carries the oracle's
//! arguments when the oracle calls that tool in the trial (all of the oracle's calls to
//! it, so a case expecting parallel calls of one tool can pass), otherwise arguments
//! built to fit the tool's schema as the oracle builds them, so a wrong pick fails as a
//! wrong tool and not as a schema violation.

use std::collections::HashSet;

use serde_json::Value;

use super::oracle::ground::Grounding;
use super::oracle::regex_gen::seed_of;
use super::oracle::value::Values;
use crate::provider::{Message, Request, Response, ToolCall, ToolChoice, ToolDefinition};
use crate::suite::{Case, ExtraArgs, Suite};

/// What the lexical model says when no tool matches (or the mode forbids calls): the
/// same words as `scripted:no_call`, read as a plain answer.
pub const TEXT: &str = "I can answer that without a tool.";

/// English words too common to tell tools apart; shorter words are dropped anyway.
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    "about", "above", "after", "again", "against", "all", "also", "and", "any", "are",
    "because", "been", "before", "being", "below", "between", "both", "but", "can",
    "could", "did", "does", "doing", "down", "during", "each", "few", "for", "from",
    "further", "had", "has", "have", "having", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "into", "its", "itself", "just", "let", "like", "may",
    "more", "most", "must", "myself", "nor", "not", "now", "off", "once", "only",
    "other", "our", "ours", "ourselves", "out", "over", "own", "please", "same", "she",
    "should", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "too",
    "under", "until", "very", "was", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "would", "yes", "you", "your", "yours",
    "yourself", "yourselves",
];

/// Whether `c` belongs to a script written without spaces between words (Han, kana,
/// Hangul), so each character is a word of its own.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0x20000..=0x3134F // CJK Extensions B to G
    )
}

/// The distinct words of `text`, as the lexical model reads them (module docs).
pub fn words(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let keep = |w: &mut String, out: &mut HashSet<String>| {
        if w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()) {
            out.insert(std::mem::take(w));
        }
        w.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if is_cjk(c) {
            keep(&mut word, &mut out);
            out.insert(c.to_string());
        } else if c.is_alphanumeric() {
            word.push(c);
        } else {
            keep(&mut word, &mut out);
        }
    }
    keep(&mut word, &mut out);
    out
}

/// `name` with a space at each camelCase boundary (`getWeather` → `get Weather`,
/// `HTTPRequest` → `HTTP Request`); `_` and `-` already split words in [`words`].
fn split_camel(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

/// Every string under a `description` key of `schema`, at any depth.
fn schema_descriptions<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s) if k == "description" => out.push(s),
                    _ => schema_descriptions(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_descriptions(v, out)),
        _ => {}
    }
}

/// The words of a tool's text: its name, description and parameter descriptions.
pub fn tool_words(tool: &ToolDefinition) -> HashSet<String> {
    let mut text = split_camel(&tool.name);
    text.push(' ');
    text.push_str(&tool.description);
    let mut descriptions = Vec::new();
    schema_descriptions(&tool.parameters, &mut descriptions);
    for d in descriptions {
        text.push(' ');
        text.push_str(d);
    }
    words(&text)
}

/// The text of the last user message of `messages` (empty when there is none).
fn last_user(messages: &[Message]) -> &str {
    messages
        .iter()
        .rev()
        .find(|m| matches!(m, Message::User { .. }))
        .and_then(Message::text)
        .unwrap_or("")
}

/// Each offered tool's score for `request`, in the order offered.
pub fn scores(request: &Request) -> Vec<usize> {
    let prompt = words(last_user(&request.messages));
    request
        .tools
        .iter()
        .map(|t| tool_words(t).intersection(&prompt).count())
        .collect()
}

/// The tool the lexical model calls for `request`, by its index among the offered tools,
/// or `None` when it answers in text (module docs).
pub fn choose(request: &Request) -> Option<usize> {
    match &request.tool_choice {
        ToolChoice::None => None,
        ToolChoice::Function(name) => request.tools.iter().position(|t| t.name == *name),
        mode => {
            let scores = scores(request);
            // The first of the highest: `max_by_key` would keep the last of a tie.
            let (best, score) =
                scores
                    .iter()
                    .enumerate()
                    .fold(None, |best: Option<(usize, usize)>, (i, &s)| match best {
                        Some((_, b)) if b >= s => best,
                        _ => Some((i, s)),
                    })?;
            (score >= 1 || *mode == ToolChoice::Required).then_some(best)
        }
    }
}

/// The lexical model's answer to `request` in a trial of `case` (if the suite has it) in
/// `variant`.
pub fn answer(suite: &Suite, case: Option<&Case>, variant: &str, request: &Request) -> Response {
    let Some(i) = choose(request) else {
        return Response {
            text: Some(TEXT.to_string()),
            finish_reason: Some("stop".into()),
            ..Response::default()
        };
    };
    let tool = &request.tools[i];
    let oracle: Vec<(String, String)> = case
        .map(|c| {
            super::oracle::answer_variant(suite, c, variant, &request.tool_choice, &request.tools)
                .response
                .tool_calls
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.name == tool.name)
        .map(|c| (c.name, c.arguments))
        .collect();
    let calls = if oracle.is_empty() {
        vec![(tool.name.clone(), fitting_arguments(tool, request, case))]
    } else {
        oracle
    };
    Response {
        tool_calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| ToolCall {
                id: Some(format!("call_{}", i + 1)),
                name,
                arguments,
            })
            .collect(),
        finish_reason: Some("tool_calls".into()),
        ..Response::default()
    }
}

/// Arguments that validate against `tool`'s schema, built as the oracle builds a call's
/// open arguments (from the conversation where it can), so a wrong pick is scored as a
/// wrong tool rather than as malformed arguments (`scripted:coin`'s wrong-tool failure
/// uses them too).
pub fn fitting_arguments(tool: &ToolDefinition, request: &Request, case: Option<&Case>) -> String {
    let ground = Grounding::new(&request.messages);
    let seed = seed_of(&[case.map_or(tool.name.as_str(), |c| c.id.as_str())]);
    let mut values = Values::new(&tool.parameters, &ground, seed);
    let args = values.object(&[], ExtraArgs::Allow, Some(&tool.parameters), "");
    Value::Object(args).to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::provider::{Provider, TrialKey};
    use crate::scripted::ScriptedProvider;

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            parameters: Arc::new(serde_json::json!({
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"]
            })),
        }
    }

    fn request(prompt: &str, tools: Vec<ToolDefinition>, mode: ToolChoice) -> Request {
        Request {
            messages: vec![Message::User {
                content: prompt.into(),
            }],
            tools: Arc::new(tools),
            tool_choice: mode,
        }
    }

    #[test]
    fn words_drop_stop_words_and_short_ones_and_split_cjk() {
        let w = words("What's the weather FORECAST for Paris, e.g. in 2026? 北京今天");
        let mut got: Vec<&str> = w.iter().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                "2026", "forecast", "paris", "weather", "京", "今", "北", "天"
            ]
        );
    }

    #[test]
    fn a_tool_name_splits_on_underscores_dashes_and_camel_case() {
        let mut t = tool("getWeatherForecast", "");
        t.parameters = Arc::new(serde_json::json!({"type": "object"}));
        let mut got: Vec<String> = tool_words(&t).into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, ["forecast", "get", "weather"]);
        let t = tool("send-HTTPRequest_later", "");
        let w = tool_words(&t);
        for word in ["send", "http", "request", "later", "city", "name"] {
            assert!(w.contains(word), "{word} in {w:?}");
        }
    }

    #[test]
    fn it_calls_the_tool_whose_description_holds_the_prompt_word_and_switches_with_it() {
        let prompt = "Will it rain tomorrow? Show the forecast.";
        let r = request(
            prompt,
            vec![
                tool("lookup", "Look up a city's timezone."),
                tool("lookup_b", "Weather forecast for a city."),
            ],
            ToolChoice::Auto,
        );
        assert_eq!(choose(&r), Some(1));
        // The same tools with the word moved to the other description.
        let r = request(
            prompt,
            vec![
                tool("lookup", "Timezone and forecast of a city."),
                tool("lookup_b", "Weather of a city."),
            ],
            ToolChoice::Auto,
        );
        assert_eq!(choose(&r), Some(0));
    }

    #[test]
    fn ties_go_to_the_first_offered_tool() {
        let r = request(
            "forecast",
            vec![tool("a", "forecast"), tool("b", "forecast")],
            ToolChoice::Auto,
        );
        assert_eq!(choose(&r), Some(0));
    }

    #[test]
    fn no_shared_word_answers_in_text_unless_a_call_is_required() {
        let tools = vec![tool("get_weather", "Weather."), tool("get_time", "Time.")];
        let r = request("Tell me a joke", tools.clone(), ToolChoice::Auto);
        assert_eq!(scores(&r), [0, 0]);
        assert_eq!(choose(&r), None);
        let r = request("Tell me a joke", tools.clone(), ToolChoice::Required);
        assert_eq!(choose(&r), Some(0));
        let r = request("weather please", tools.clone(), ToolChoice::None);
        assert_eq!(choose(&r), None);
        let r = request(
            "weather please",
            tools,
            ToolChoice::Function("get_time".into()),
        );
        assert_eq!(choose(&r), Some(1));
    }

    const SUITE: &str = r#"
tools:
  - name: get_weather
    variants:
      vague: "Weather for a city."
      clear: "Weather forecast for a city: today's or a coming day's."
    parameters:
      type: object
      properties:
        city: {type: string, description: "City name"}
      required: [city]
  - name: get_time
    description: "Current local clock time."
    parameters:
      type: object
      properties:
        zone: {type: string}
      required: [zone]
cases:
  - id: forecast
    kind: should_call
    prompt: "What is the forecast in Paris tomorrow?"
    expect:
      calls:
        - tool: get_weather
          args: {city: Paris}
  - id: joke
    kind: should_not_call
    prompt: "Tell me a joke."
"#;

    async fn run(case: &str, variant: &str, mode: ToolChoice) -> Response {
        let suite = Arc::new(crate::suite::load_str(SUITE, Path::new("s.yaml")).unwrap());
        let c = suite.cases.iter().find(|c| c.id == case).unwrap();
        let request = Request {
            messages: suite.messages_in(c, variant).into_owned(),
            tools: Arc::new(
                c.tools(&suite)
                    .iter()
                    .map(|t| t.definition(variant))
                    .collect(),
            ),
            tool_choice: mode.clone(),
        };
        let key = TrialKey {
            case_id: case.into(),
            target: "scripted:lexical".into(),
            variant: variant.into(),
            tool_choice: mode,
            repeat: 0,
        };
        let p = ScriptedProvider::new("lexical", suite.clone()).unwrap();
        p.complete(&request, &key).await.unwrap()
    }

    #[tokio::test]
    async fn a_wording_with_the_prompts_word_turns_a_text_answer_into_the_oracles_call() {
        let vague = run("forecast", "vague", ToolChoice::Auto).await;
        assert!(vague.tool_calls.is_empty(), "{vague:?}");
        assert_eq!(vague.text.as_deref(), Some(TEXT));
        let clear = run("forecast", "clear", ToolChoice::Auto).await;
        assert_eq!(clear.tool_calls.len(), 1, "{clear:?}");
        assert_eq!(clear.tool_calls[0].name, "get_weather");
        let args: Value = serde_json::from_str(&clear.tool_calls[0].arguments).unwrap();
        assert_eq!(args["city"], "Paris");
    }

    #[tokio::test]
    async fn a_forced_call_of_an_unexpected_tool_gets_arguments_that_fit_its_schema() {
        let r = run("joke", "clear", ToolChoice::Required).await;
        assert_eq!(r.tool_calls.len(), 1, "{r:?}");
        assert_eq!(r.tool_calls[0].name, "get_weather");
        let args: Value = serde_json::from_str(&r.tool_calls[0].arguments).unwrap();
        assert!(args["city"].is_string(), "{args}");
        let r = run("forecast", "clear", ToolChoice::Function("get_time".into())).await;
        let args: Value = serde_json::from_str(&r.tool_calls[0].arguments).unwrap();
        assert_eq!(r.tool_calls[0].name, "get_time");
        assert!(args["zone"].is_string(), "{args}");
        let r = run("forecast", "clear", ToolChoice::None).await;
        assert!(r.tool_calls.is_empty());
    }
}
