//! When (not) to call: the four behaviours an answer can show (call a tool, ask for the
//! missing information, say it cannot, answer directly), the built-in classifier of a
//! text answer into the last three ([`classify()`]), and the facts a trial's verdict and
//! the behaviour metrics rest on ([`BehaviourFacts`]).
//!
//! The labels are When2Call's (`tool_call`, `request_for_info`, `cannot_answer`,
//! `direct`); suites name the text behaviours `clarify`, `cannot_answer` and `direct`.

pub mod classify;
pub mod lexicon;
pub mod measure;
pub mod sentences;

use serde::{Deserialize, Serialize};

pub use classify::{Classified, classify};

/// What an answer does about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// It calls a tool.
    ToolCall,
    /// It asks the user for missing information (a clarifying question).
    RequestForInfo,
    /// It says it cannot help (no tool fits, or it is not allowed).
    CannotAnswer,
    /// It answers in text without a tool.
    Direct,
}

impl Behaviour {
    /// Every behaviour, in report order (rows and columns of the confusion matrix).
    pub const ALL: [Behaviour; 4] = [
        Behaviour::ToolCall,
        Behaviour::RequestForInfo,
        Behaviour::CannotAnswer,
        Behaviour::Direct,
    ];

    /// The three behaviours of a text answer (what [`classify()`] returns).
    pub const TEXT: [Behaviour; 3] = [
        Behaviour::RequestForInfo,
        Behaviour::CannotAnswer,
        Behaviour::Direct,
    ];

    /// The When2Call label (`tool_call`, `request_for_info`, `cannot_answer`, `direct`).
    pub fn label(self) -> &'static str {
        match self {
            Behaviour::ToolCall => "tool_call",
            Behaviour::RequestForInfo => "request_for_info",
            Behaviour::CannotAnswer => "cannot_answer",
            Behaviour::Direct => "direct",
        }
    }

    /// The name suites use for a text behaviour (`clarify`, `cannot_answer`, `direct`);
    /// `tool_call` for a call.
    pub fn suite_name(self) -> &'static str {
        match self {
            Behaviour::RequestForInfo => "clarify",
            other => other.label(),
        }
    }

    /// Parse a When2Call label or a suite name (`clarify` is `request_for_info`).
    pub fn parse(s: &str) -> Option<Behaviour> {
        match s.trim() {
            "tool_call" => Some(Behaviour::ToolCall),
            "request_for_info" | "clarify" => Some(Behaviour::RequestForInfo),
            "cannot_answer" => Some(Behaviour::CannotAnswer),
            "direct" => Some(Behaviour::Direct),
            _ => None,
        }
    }
}

impl std::fmt::Display for Behaviour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Who decided the observed behaviour of a text answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedBy {
    /// A tool call was made: no text to classify.
    Call,
    /// The built-in classifier ([`classify()`]).
    Classifier,
    /// The suite's judge model (`judge:` or `--judge`).
    Judge,
}

/// The behaviour facts of one scored trial: what the case expected (when it names one
/// behaviour), what the answer did, and who said so. Absent from records of cases that
/// name no text behaviour and trials that were not scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BehaviourFacts {
    /// The one behaviour the case expects (`None`: the case accepts several, or names
    /// none; such trials stay out of the confusion matrix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Behaviour>,
    /// What the answer did.
    pub observed: Behaviour,
    /// Who decided `observed`.
    pub by: ObservedBy,
    /// The words the classifier keyed on, or the judge's rationale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}
