//! Reading a judge's answer: the JSON object it was asked for, found even when the
//! model wraps it in a code fence or in prose, and checked. Anything else (no object,
//! a missing field, a label that is not one of the three text behaviours) is an error
//! the trial reports, never a verdict guessed from the words.

use serde_json::{Map, Value};

use crate::behaviour::Behaviour;

/// Why a judge's answer gave no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    /// The answer holds no JSON object.
    #[error("the judge's answer holds no JSON object: {0}")]
    NoObject(String),
    /// The object lacks the verdict field.
    #[error("the judge's answer has no `{field}` field: {object}")]
    Missing {
        /// The field asked for.
        field: &'static str,
        /// The object found (clipped).
        object: String,
    },
    /// The verdict field holds something else than asked.
    #[error("the judge's `{field}` is {value}, not one of {expected}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What it held.
        value: String,
        /// What was asked for.
        expected: &'static str,
    },
}

/// How much of a bad answer an error quotes.
const QUOTE_CHARS: usize = 200;

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("`{}…`", &text[..i]),
        None => format!("`{text}`"),
    }
}

/// How much of a judge's answer is searched for the verdict, and from how many `{`: a
/// verdict is a short object near the start, and a hostile answer (megabytes of
/// unclosed objects) must not make the search quadratic.
const MAX_SEARCH_BYTES: usize = 64 * 1024;
const MAX_STARTS: usize = 64;

/// The first JSON object in `text` that holds `field`, else the first object at all:
/// the whole text, a fenced block, or an object inside prose.
fn find_object(text: &str, field: &str) -> Option<Map<String, Value>> {
    let mut end = text.len().min(MAX_SEARCH_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let mut first = None;
    for (i, _) in text.match_indices('{').take(MAX_STARTS) {
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(map))) = stream.next() {
            if map.contains_key(field) || (field == "behaviour" && map.contains_key("behavior")) {
                return Some(map);
            }
            first.get_or_insert(map);
        }
    }
    first
}

/// The text-behaviour verdict and rationale in a judge's answer to the behaviour
/// question: `{"behaviour": "direct" | "request_for_info" | "cannot_answer",
/// "rationale": "..."}` (`behavior` and the suite name `clarify` are accepted too).
pub fn parse_behaviour(text: &str) -> Result<(Behaviour, String), VerdictError> {
    const EXPECTED: &str = "`direct`, `request_for_info` or `cannot_answer`";
    let map = find_object(text, "behaviour").ok_or_else(|| VerdictError::NoObject(clip(text)))?;
    let value = map
        .get("behaviour")
        .or_else(|| map.get("behavior"))
        .ok_or_else(|| VerdictError::Missing {
            field: "behaviour",
            object: clip(&Value::Object(map.clone()).to_string()),
        })?;
    let behaviour = value
        .as_str()
        .and_then(|s| Behaviour::parse(&s.to_ascii_lowercase()))
        .filter(|b| Behaviour::TEXT.contains(b))
        .ok_or_else(|| VerdictError::Invalid {
            field: "behaviour",
            value: clip(&value.to_string()),
            expected: EXPECTED,
        })?;
    Ok((behaviour, rationale(&map)))
}

/// The rubric verdict and rationale in a judge's answer to the rubric question:
/// `{"pass": true | false, "rationale": "..."}` (the strings `"true"`/`"false"`,
/// `"pass"`/`"fail"` and `"yes"`/`"no"` are accepted too).
pub fn parse_rubric(text: &str) -> Result<(bool, String), VerdictError> {
    let map = find_object(text, "pass").ok_or_else(|| VerdictError::NoObject(clip(text)))?;
    let value = map.get("pass").ok_or_else(|| VerdictError::Missing {
        field: "pass",
        object: clip(&Value::Object(map.clone()).to_string()),
    })?;
    let pass = match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "pass" | "yes" => Some(true),
            "false" | "fail" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| VerdictError::Invalid {
        field: "pass",
        value: clip(&value.to_string()),
        expected: "`true` or `false`",
    })?;
    Ok((pass, rationale(&map)))
}

fn rationale(map: &Map<String, Value>) -> String {
    match map.get("rationale").or_else(|| map.get("reason")) {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_fenced_or_embedded_object_is_read() {
        assert_eq!(
            parse_behaviour(r#"{"behaviour": "direct", "rationale": "It answers."}"#),
            Ok((Behaviour::Direct, "It answers.".into()))
        );
        assert_eq!(
            parse_behaviour(
                "Here is my verdict:\n```json\n{\n  \"behavior\": \"Request_For_Info\",\n  \"rationale\": \"asks which city\"\n}\n```\nThanks."
            ),
            Ok((Behaviour::RequestForInfo, "asks which city".into()))
        );
        // A brace in the prose before the object does not hide it.
        assert_eq!(
            parse_rubric(
                "The answer {mostly} holds. {\"pass\": false, \"rationale\": \"no city\"}"
            ),
            Ok((false, "no city".into()))
        );
        assert_eq!(
            parse_rubric(r#"{"pass": "yes"}"#),
            Ok((true, String::new()))
        );
    }

    #[test]
    fn anything_but_a_known_verdict_is_an_error() {
        assert_eq!(
            parse_behaviour("It is a direct answer."),
            Err(VerdictError::NoObject("`It is a direct answer.`".into()))
        );
        assert_eq!(
            parse_behaviour(r#"{"behaviour": "refusal"}"#)
                .unwrap_err()
                .to_string(),
            "the judge's `behaviour` is `\"refusal\"`, not one of `direct`, `request_for_info` or `cannot_answer`"
        );
        // A call is not a behaviour a text answer can show.
        assert!(parse_behaviour(r#"{"behaviour": "tool_call"}"#).is_err());
        assert_eq!(
            parse_rubric(r#"{"verdict": true}"#),
            Err(VerdictError::Missing {
                field: "pass",
                object: "`{\"verdict\":true}`".into()
            })
        );
        assert!(parse_rubric(r#"{"pass": 1}"#).is_err());
        assert!(parse_rubric(r#"{"pass": "maybe"}"#).is_err());
        assert!(parse_behaviour("{\"behaviour\": \"direct\"").is_err());
        // A hostile answer: megabytes of unclosed objects, then a verdict too late to
        // count. The search stays bounded and finds nothing.
        let hostile = format!(
            "{}{}",
            "{\"a\": \"".repeat(200_000),
            r#"{"behaviour": "direct"}"#
        );
        assert!(matches!(
            parse_behaviour(&hostile),
            Err(VerdictError::NoObject(_))
        ));
    }
}
