//! The built-in classifier of a text answer into `direct`, `request_for_info` or
//! `cannot_answer`, in English and Chinese.
//!
//! BASE PLACEHOLDER: the real classifier replaces this (see the issue 13 brief).

use super::Behaviour;

/// A classified text answer: the behaviour and the cue it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// One of [`Behaviour::TEXT`].
    pub behaviour: Behaviour,
    /// The words of the answer the decision keyed on, if any.
    pub cue: Option<String>,
}

/// Classify a text answer (never [`Behaviour::ToolCall`]).
pub fn classify(text: &str) -> Classified {
    let behaviour = if text.contains('?') || text.contains('？') {
        Behaviour::RequestForInfo
    } else {
        Behaviour::Direct
    };
    Classified {
        behaviour,
        cue: None,
    }
}
