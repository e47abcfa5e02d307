//! The behaviour a text answer showed, as the call checks read it: a call was made, or
//! the judge model's verdict, or the built-in classifier's reading; and how a reason
//! says who read it as what.

use super::calls::clip;
use crate::behaviour::{Behaviour, ObservedBy, classify};

/// The behaviour a response showed, who decided it, and on what.
pub(super) struct Observed {
    pub(super) behaviour: Behaviour,
    pub(super) by: ObservedBy,
    pub(super) why: Option<String>,
    /// The response has no text at all (the classifier's cue then names no words).
    pub(super) empty: bool,
}

impl Observed {
    /// `tool_call` when a call was made; else the judge's verdict when there is one,
    /// else the built-in classifier's reading of `text`.
    pub(super) fn of(called: bool, judged: Option<&(Behaviour, String)>, text: &str) -> Observed {
        let empty = text.trim().is_empty();
        if called {
            return Observed {
                behaviour: Behaviour::ToolCall,
                by: ObservedBy::Call,
                why: None,
                empty,
            };
        }
        if let Some((behaviour, why)) = judged {
            let why = why.trim();
            return Observed {
                behaviour: *behaviour,
                by: ObservedBy::Judge,
                why: (!why.is_empty()).then(|| clip(why)),
                empty,
            };
        }
        let c = classify(text);
        Observed {
            behaviour: c.behaviour,
            by: ObservedBy::Classifier,
            why: c.cue.map(|cue| clip(&cue)),
            empty,
        }
    }

    /// Who read the answer as what, and why: ``the classifier read it as `direct`
    /// (answers directly) on the words "..."``.
    pub(super) fn describe(&self) -> String {
        let who = match self.by {
            ObservedBy::Call => return "a tool was called".to_string(),
            ObservedBy::Classifier => "the classifier",
            ObservedBy::Judge => "the judge",
        };
        let why = match (&self.why, self.by) {
            (Some(w), ObservedBy::Judge) => format!(": {w:?}"),
            _ if self.empty => ": the answer is empty".to_string(),
            (Some(w), _) => format!(" on the words {w:?}"),
            (None, _) => String::new(),
        };
        format!(
            "{who} read it as `{}` ({}){why}",
            self.behaviour.suite_name(),
            meaning(self.behaviour)
        )
    }
}

/// What a behaviour means, in a few words (for reasons).
pub(super) fn meaning(b: Behaviour) -> &'static str {
    match b {
        Behaviour::ToolCall => "calls a tool",
        Behaviour::RequestForInfo => "asks for the missing information",
        Behaviour::CannotAnswer => "says it cannot help",
        Behaviour::Direct => "answers directly",
    }
}
