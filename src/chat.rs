//! The conversation: messages, tool calls, tool results and the provider state an
//! assistant turn carries.
//!
//! A leaf module (it imports nothing from the crate), so the suite, the providers, the
//! tool hosts, the episode runner and the judges can all speak it without depending on
//! each other. Tool call arguments stay the raw string the model produced, so invalid
//! JSON is measured instead of lost.
//!
//! Every field added for tool loops (a result's tool name and error flag, an assistant
//! turn's provider state) is left out of the serialised form when empty, so cassettes,
//! cassette keys and trial journals of single-turn runs read and hash exactly as before.

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
        /// The provider's opaque state for this turn (see [`AssistantTurn::state`]),
        /// sent back verbatim when the conversation continues.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Value>,
    },
    /// A tool's result, answering one call.
    Tool {
        /// The call this answers.
        tool_call_id: String,
        /// The name of the tool that was called (empty when unknown, e.g. in a
        /// hand-written history; providers then look it up from the call).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        name: String,
        /// The result as text (usually JSON).
        content: String,
        /// True when the call failed and `content` describes the error.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
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
    /// The call id (`tool_call_id`). Live providers always set it, assigning a
    /// deterministic one when the API sent none (Gemini, some OpenAI-compatible
    /// servers); `None` only in hand-written or old recorded answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool name the model chose (possibly not a tool that exists).
    pub name: String,
    /// The arguments exactly as produced, normally a JSON object as a string.
    pub arguments: String,
}

/// One assistant turn: what a provider's answer adds to the conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantTurn {
    /// The text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// What the provider needs back verbatim in the next request, keyed by provider
    /// (`{"anthropic": …}`, `{"gemini": …}`) so another provider ignores it: Anthropic
    /// `thinking` / `redacted_thinking` blocks with their signatures, Gemini parts with a
    /// `thoughtSignature`. `None` when the answer had nothing of the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

impl From<AssistantTurn> for Message {
    fn from(turn: AssistantTurn) -> Message {
        Message::Assistant {
            content: turn.text,
            tool_calls: turn.tool_calls,
            state: turn.state,
        }
    }
}

/// The outcome of executing one tool call, as the model will read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call answered.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The result (or the error description) as text, usually JSON.
    pub content: String,
    /// True when the call failed; each provider signals it in its own way (see
    /// docs/providers.md, "Tool results and multi-round conversations").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl From<ToolResult> for Message {
    fn from(result: ToolResult) -> Message {
        Message::Tool {
            tool_call_id: result.call_id,
            name: result.name,
            content: result.content,
            is_error: result.is_error,
        }
    }
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

/// Token usage of one response.
///
/// `input_tokens` is the whole prompt and `output_tokens` the whole answer; the three
/// detail counts are parts of them that providers bill at other rates, so
/// `cached_input_tokens + cache_write_tokens <= input_tokens` and
/// `reasoning_tokens <= output_tokens` (a provider's usage that breaks this is dropped as
/// implausible, see `provider::usage`). The details are left out of the serialised form
/// when 0, so trial journals and cassettes of providers that report none read and write
/// exactly as before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens: all of them, whether fresh, read from a prompt cache or written
    /// to one.
    pub input_tokens: u64,
    /// Completion tokens, reasoning ("thinking") tokens included.
    pub output_tokens: u64,
    /// True when counted offline with a tokenizer because the provider gave none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// The part of `input_tokens` read from the provider's prompt cache (OpenAI
    /// `cached_tokens`, Anthropic `cache_read_input_tokens`, Gemini
    /// `cachedContentTokenCount`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// The part of `input_tokens` written to the prompt cache (Anthropic
    /// `cache_creation_input_tokens`; the other providers bill no cache writes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// The part of `output_tokens` the model spent reasoning (OpenAI
    /// `reasoning_tokens`, Gemini `thoughtsTokenCount`; Anthropic reports none apart).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// A usage of `input` prompt and `output` answer tokens, with no detail counts.
    pub fn new(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    /// The sum of two usages (every count saturating, so a sum never wraps); estimated
    /// when either is.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            estimated: self.estimated || other.estimated,
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(other.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(other.reasoning_tokens),
        }
    }

    /// The input tokens neither read from nor written to a cache: billed at the plain
    /// input rate.
    pub fn fresh_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_sub(self.cached_input_tokens)
            .saturating_sub(self.cache_write_tokens)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The id a provider gives call `index` of an answer that came without ids, where
/// `round` is the number of assistant turns already in the conversation: the same
/// conversation always gets the same ids (so cassette keys of later rounds are stable),
/// and no two calls of one conversation share one.
pub fn assigned_call_id(round: usize, index: usize) -> String {
    format!("call_r{round}_{index}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
    fn messages_serialise_with_a_role_tag() {
        let m = Message::Tool {
            tool_call_id: "call_1".into(),
            name: String::new(),
            content: "{}".into(),
            is_error: false,
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"tool","tool_call_id":"call_1","content":"{}"}"#
        );
    }

    #[test]
    fn loop_fields_are_written_only_when_set_and_read_back() {
        let plain = Message::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: "f".into(),
                arguments: "{}".into(),
            }],
            state: None,
        };
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]}"#
        );
        let full = vec![
            Message::from(AssistantTurn {
                text: Some("checking".into()),
                tool_calls: vec![],
                state: Some(json!({"anthropic": {"content": [{"type": "thinking"}]}})),
            }),
            Message::from(ToolResult {
                call_id: "c1".into(),
                name: "get_order".into(),
                content: r#"{"error":"no such order"}"#.into(),
                is_error: true,
            }),
        ];
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(
            text,
            r#"[{"role":"assistant","content":"checking","state":{"anthropic":{"content":[{"type":"thinking"}]}}},{"role":"tool","tool_call_id":"c1","name":"get_order","content":"{\"error\":\"no such order\"}","is_error":true}]"#
        );
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, full);
        // A journal line written before the loop fields existed still reads.
        let old: Message =
            serde_json::from_str(r#"{"role":"tool","tool_call_id":"x","content":"1"}"#).unwrap();
        assert_eq!(
            old,
            Message::Tool {
                tool_call_id: "x".into(),
                name: String::new(),
                content: "1".into(),
                is_error: false
            }
        );
    }

    #[test]
    fn assigned_ids_differ_by_round_and_index() {
        assert_eq!(assigned_call_id(0, 0), "call_r0_0");
        assert_eq!(assigned_call_id(2, 1), "call_r2_1");
        assert_ne!(assigned_call_id(1, 0), assigned_call_id(0, 1));
    }
}
