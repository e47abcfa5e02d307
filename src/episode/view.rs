//! The judge's input: the transcript of one episode, in neutral types of its own.
//!
//! They belong to the episode layer, below the judge that reads them: the episode
//! runner builds an [`Episode`] from what happened (rounds of an assistant
//! turn and the tool host's answers); the judge needs no provider, tool host or record
//! type to read it. Tool metadata that the judge relies on (risk, idempotency, whether
//! the harness asks for approval) comes as plain [`ToolTraits`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::ToolCall;
pub use crate::suite::trajectory::StopReason;

/// One episode: the conversation the case starts with, every round, and why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The texts of the case's own messages (system, prompt, earlier turns and tool
    /// results): what the model was told before the first round.
    pub context: Vec<String>,
    /// The rounds in order.
    pub rounds: Vec<Round>,
    /// Why the loop stopped.
    pub stop: StopReason,
    /// The `expect.end_state` calls made after the episode, in the case's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end_state: Vec<EndStateResult>,
}

/// One call of `expect.end_state`, made on the episode's session after it ended, and
/// what it returned (the judge checks it; the model never saw it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndStateResult {
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub args: serde_json::Map<String, Value>,
    /// What it returned (`None` when the host failed to answer: see `failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool answered with an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Why the host could not answer the call at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// A read of the built-in world's state (no tool called): `content` is the state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub state: bool,
}

/// One round: an optional scripted user turn, then the model's turn and its calls' outcomes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// A scripted user turn (`turns:`) sent before this round; `None` for the first
    /// round (its prompt is in [`Episode::context`]) and for rounds that continue after
    /// tool results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The model's text in this round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The model's calls in this round, in the order it made them.
    #[serde(default)]
    pub calls: Vec<CallRecord>,
}

/// A call and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The tool host's answer; `None` when the call was not executed (the loop stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
}

/// What the model received for one call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The result as sent to the model (normally JSON text).
    pub content: String,
    /// The result is an error.
    #[serde(default)]
    pub is_error: bool,
    /// The error kind, when known: the name of a
    /// [`ToolErrorKind`](crate::suite::tool_error::ToolErrorKind) (`rate_limit`,
    /// `denied`, ...). Text rather than the type, because a transcript is also rebuilt
    /// from what the model read (the scripted model parses it from the error's content,
    /// which may name any kind), and the judge reads any word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The error was injected by a fault rule (not the tool's own answer).
    #[serde(default)]
    pub injected: bool,
    /// The user's answer, for a call the approval policy put to them; `None` when the
    /// tool needs no approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalAnswer>,
}

/// The answer to a call that was put to the user because its tool is under the
/// approval policy. The tool host's [`crate::tools::Approval`] carries the same fact
/// with a third value for calls that needed no approval; here that is a missing answer
/// (`Option::None`), so the judge cannot meet an answer for a call nobody was asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// The call was executed.
    Approved,
    /// The call was not executed; the model received a "denied by the user" error.
    Denied,
}

/// What the judge needs to know about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTraits {
    /// Tool name.
    pub name: String,
    /// `risk: high`: calling it without confirmation is a failure.
    pub risky: bool,
    /// Calling it twice with the same arguments is harmless (`idempotent: false` says
    /// it is not).
    pub idempotent: bool,
    /// The harness asks for approval before running it (`policy.confirm`).
    pub confirm: bool,
}

impl ToolTraits {
    /// A tool with no special traits (not risky, idempotent, no approval).
    pub fn plain(name: &str) -> ToolTraits {
        ToolTraits {
            name: name.to_string(),
            risky: false,
            idempotent: true,
            confirm: false,
        }
    }
}

impl CallOutcome {
    /// The result parsed as JSON (a plain-text result is a JSON string).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.content).unwrap_or_else(|_| Value::String(self.content.clone()))
    }

    /// The call was denied by the approval policy.
    pub fn denied(&self) -> bool {
        self.approval == Some(ApprovalAnswer::Denied)
    }
}

/// One call with its place in the episode.
#[derive(Debug, Clone, Copy)]
pub struct Placed<'e> {
    /// Round index (0-based).
    pub round: usize,
    /// The call and its outcome.
    pub record: &'e CallRecord,
}

impl Placed<'_> {
    /// Tool name.
    pub fn tool(&self) -> &str {
        &self.record.call.name
    }

    /// The outcome was an error.
    pub fn failed(&self) -> bool {
        self.record.outcome.as_ref().is_some_and(|o| o.is_error)
    }
}

impl Episode {
    /// Every call in order (round by round, in call order within a round).
    pub fn calls(&self) -> Vec<Placed<'_>> {
        self.rounds
            .iter()
            .enumerate()
            .flat_map(|(round, r)| r.calls.iter().map(move |record| Placed { round, record }))
            .collect()
    }

    /// The model's final answer: the text of the last round, when that round made no
    /// calls (a loop stopped by a limit has none) and said something (not blank).
    pub fn final_text(&self) -> Option<&str> {
        match self.final_answer() {
            FinalAnswer::Text(t) => Some(t),
            FinalAnswer::Empty | FinalAnswer::Missing => None,
        }
    }

    /// What the episode ended with: the last round's text when it made no calls, an
    /// empty answer when that round made no calls and said nothing, or no answer at all.
    pub fn final_answer(&self) -> FinalAnswer<'_> {
        match self.rounds.last() {
            Some(r) if r.calls.is_empty() => FinalAnswer::of(r.text.as_deref()),
            _ => FinalAnswer::Missing,
        }
    }
}

/// The final answer of an episode or a conversation, told apart from its absence: an
/// answer that is empty is an answer (the model stopped without calling or saying
/// anything), not a round that made calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalAnswer<'e> {
    /// There is none: the last round made calls (a limit stopped the loop before the
    /// model could answer), or no round was played.
    Missing,
    /// The last round made no call, and its text is absent (`null`), empty or blank.
    Empty,
    /// The last round's text.
    Text(&'e str),
}

impl<'e> FinalAnswer<'e> {
    /// The answer of a turn that made no calls and whose text is `text`.
    pub fn of(text: Option<&'e str>) -> Self {
        match text {
            Some(t) if !t.trim().is_empty() => FinalAnswer::Text(t),
            _ => FinalAnswer::Empty,
        }
    }
}
