//! The neutral request and response every provider speaks.
//!
//! Providers translate these to and from their wire formats. Tool call arguments stay
//! the raw string the model produced, so invalid JSON is measured instead of lost.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions.
    System {
        /// Text.
        content: String,
    },
    /// The user's turn.
    User {
        /// Text.
        content: String,
    },
    /// The model's turn, possibly with tool calls.
    Assistant {
        /// Text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Tool calls, if any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's result, answering one call.
    Tool {
        /// The call this answers.
        tool_call_id: String,
        /// The result as text (usually JSON).
        content: String,
    },
}

impl Message {
    /// The text a user could see or the model could ground values on.
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content } | Message::User { content } => Some(content),
            Message::Assistant { content, .. } => content.as_deref(),
            Message::Tool { content, .. } => Some(content),
        }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (`tool_call_id`), if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool name the model chose (possibly not a tool that exists).
    pub name: String,
    /// The arguments exactly as produced, normally a JSON object as a string.
    pub arguments: String,
}

/// A tool definition with the chosen variant's description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Function name.
    pub name: String,
    /// The description wording of the selected variant.
    pub description: String,
    /// JSON Schema of the arguments (shared: every request of a variant, and every
    /// case offering the tool, points at one copy).
    pub parameters: Arc<Value>,
}

/// How the model may use tools.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// Calls are forbidden.
    None,
    /// The model decides.
    Auto,
    /// At least one call is required.
    Required,
    /// This function must be called.
    Function(String),
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolChoice::None => f.write_str("none"),
            ToolChoice::Auto => f.write_str("auto"),
            ToolChoice::Required => f.write_str("required"),
            ToolChoice::Function(name) => write!(f, "function:{name}"),
        }
    }
}

impl FromStr for ToolChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(ToolChoice::None),
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            _ => match s.strip_prefix("function:") {
                Some(name) if !name.is_empty() => Ok(ToolChoice::Function(name.to_string())),
                _ => Err(format!(
                    "unknown tool_choice `{s}`; expected none, auto, required or function:NAME"
                )),
            },
        }
    }
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What a provider is asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered, with the variant's descriptions. Shared: every trial of a
    /// variant sends the same definitions, and providers may cache work per definition set.
    pub tools: Arc<Vec<ToolDefinition>>,
    /// The tool_choice mode.
    pub tool_choice: ToolChoice,
}

/// Token usage of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// True when counted offline with a tokenizer because the provider gave none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// What a provider answered.
///
/// Read back from a file (a cassette, a trial journal), the usage is checked like a
/// server's ([`super::usage`]): an implausible count drops the usage with a warning
/// instead of failing the whole file or entering a sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredResponse")]
pub struct Response {
    /// The text answer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Token usage as reported by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the request in milliseconds.
    #[serde(default)]
    pub latency_ms: f64,
    /// The provider's stop reason, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The provider's raw response body (live calls only; stored in cassettes, not in
    /// trial records), so a parser fix can re-score a recorded run.
    #[serde(skip)]
    pub raw: Option<Value>,
    /// HTTP attempts the response took (1 when the first succeeded; 0 when replayed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// What was wrong with the answer but did not stop it being scored, e.g. an
    /// implausible usage that was ignored (and counted offline instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A [`Response`] as stored in a file, its usage not yet checked.
#[derive(Deserialize)]
struct StoredResponse {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    latency_ms: f64,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    attempts: u32,
    #[serde(default)]
    warnings: Vec<String>,
}

impl From<StoredResponse> for Response {
    fn from(s: StoredResponse) -> Response {
        let mut response = Response {
            text: s.text,
            tool_calls: s.tool_calls,
            usage: None,
            latency_ms: s.latency_ms,
            finish_reason: s.finish_reason,
            raw: None,
            attempts: s.attempts,
            warnings: s.warnings,
        };
        stored_usage(s.usage.as_ref()).apply(&mut response, "a stored response");
        response
    }
}

/// A stored usage `{input_tokens, output_tokens, estimated}`, checked.
fn stored_usage(usage: Option<&Value>) -> super::usage::UsageReading {
    use super::usage::{UsageReading, count};
    let Some(usage) = usage.filter(|u| !u.is_null()) else {
        return UsageReading::Absent;
    };
    let Some(obj) = usage.as_object() else {
        return UsageReading::Implausible(format!("`usage` is {usage}, not an object"));
    };
    let field = |name: &str| match count(obj.get(name), name) {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err(format!("`usage` has no `{name}`")),
        Err(e) => Err(e),
    };
    match (field("input_tokens"), field("output_tokens")) {
        (Ok(input_tokens), Ok(output_tokens)) => UsageReading::Counted(Usage {
            input_tokens,
            output_tokens,
            estimated: obj.get("estimated").and_then(Value::as_bool) == Some(true),
        }),
        (Err(a), Err(b)) => UsageReading::Implausible(format!("{a}; {b}")),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_round_trips_as_text() {
        for s in ["none", "auto", "required", "function:get_weather"] {
            let c: ToolChoice = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
        assert!("function:".parse::<ToolChoice>().is_err());
        assert!(
            "always"
                .parse::<ToolChoice>()
                .unwrap_err()
                .contains("`always`")
        );
    }

    #[test]
    fn stored_usage_is_checked_on_reading() {
        let read = |usage: &str| -> Response {
            serde_json::from_str(&format!(r#"{{"text": "hi", "usage": {usage}}}"#)).unwrap()
        };
        let r = read(r#"{"input_tokens": 12, "output_tokens": 3, "estimated": true}"#);
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 3,
                estimated: true
            })
        );
        assert!(r.warnings.is_empty());
        // Each of these once failed the whole file or entered a sum as 2^64 - 1.
        for (usage, why) in [
            (
                r#"{"input_tokens": 1, "output_tokens": -5}"#,
                "`output_tokens` is -5",
            ),
            (
                r#"{"input_tokens": 1e30, "output_tokens": 1}"#,
                "`input_tokens` is 1e+30",
            ),
            (
                r#"{"input_tokens": 18446744073709551615, "output_tokens": 1}"#,
                "`input_tokens` is 18446744073709551615, above the cap",
            ),
            (r#"{"input_tokens": 1}"#, "`usage` has no `output_tokens`"),
            (r#""lots""#, "`usage` is \"lots\", not an object"),
        ] {
            let r = read(usage);
            assert_eq!(r.usage, None, "{usage}");
            assert_eq!(r.text.as_deref(), Some("hi"));
            assert_eq!(r.warnings.len(), 1, "{usage}");
            assert!(
                r.warnings[0].starts_with("implausible usage from a stored response ignored: ")
                    && r.warnings[0].contains(why),
                "{usage}: {:?}",
                r.warnings
            );
        }
        assert_eq!(read("null").usage, None);
        assert!(read("null").warnings.is_empty());
    }

    #[test]
    fn messages_serialise_with_a_role_tag() {
        let m = Message::Tool {
            tool_call_id: "call_1".into(),
            content: "{}".into(),
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"tool","tool_call_id":"call_1","content":"{}"}"#
        );
    }
}
