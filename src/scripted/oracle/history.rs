//! The oracle's reading of a loop conversation: what happened in the rounds so far.
//!
//! A scripted model sees only the conversation it is sent (as a live model does), so
//! each round it reads its own earlier turns back from the messages that follow the
//! case's own: assistant turns with their calls, the tool results answering them by
//! call id, and the scripted user turns. It rebuilds them as the judge's
//! [`Episode`] so the answer it is about to give can be judged before it is given.

use serde_json::Value;

use crate::chat::{Message, ToolCall};
use crate::judge::{ApprovalAnswer, CallOutcome, CallRecord, Episode, Round, StopReason};
use crate::suite::loops::Policy;
use crate::suite::tool_error::ToolErrorKind;

/// The rounds of an episode so far, read from its conversation.
#[derive(Debug)]
pub struct History {
    /// The case's messages as context and every finished round (its `stop` is a
    /// placeholder: the episode is still running).
    pub episode: Episode,
    /// A scripted user turn sent after the last round: the turn this round answers.
    pub pending_user: Option<String>,
    /// Scripted user turns sent so far.
    pub turns_used: usize,
}

/// One call of an earlier round with its place and what came of it.
#[derive(Debug, Clone, Copy)]
pub struct Past<'h> {
    /// Round index (0-based).
    pub round: usize,
    /// The call as made.
    pub call: &'h ToolCall,
    /// The answer, when the call was executed.
    pub outcome: Option<&'h CallOutcome>,
}

impl Past<'_> {
    /// The arguments as JSON (`None` when they are not valid JSON).
    pub fn args(&self) -> Option<Value> {
        if self.call.arguments.trim().is_empty() {
            return Some(Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.call.arguments).ok()
    }

    /// The result when the call succeeded.
    pub fn result(&self) -> Option<Value> {
        self.outcome.filter(|o| !o.is_error).map(CallOutcome::value)
    }
}

impl History {
    /// Read `messages`, of which the first `context` are the case's own; `policy` says
    /// which tools went through approval (their results carry the decision).
    pub fn read(messages: &[Message], context: usize, policy: &Policy) -> History {
        let context = context.min(messages.len());
        let mut rounds: Vec<Round> = Vec::new();
        let mut pending_user = None;
        let mut turns_used = 0;
        for m in &messages[context..] {
            match m {
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => rounds.push(Round {
                    user: pending_user.take(),
                    text: content.clone(),
                    calls: tool_calls
                        .iter()
                        .map(|c| CallRecord {
                            call: c.clone(),
                            outcome: None,
                        })
                        .collect(),
                }),
                Message::Tool {
                    tool_call_id,
                    content,
                    is_error,
                    ..
                } => {
                    let Some(record) = rounds.last_mut().and_then(|r| {
                        r.calls.iter_mut().find(|c| {
                            c.outcome.is_none() && c.call.id.as_deref() == Some(tool_call_id)
                        })
                    }) else {
                        continue;
                    };
                    let kind = is_error.then(|| error_kind(content)).flatten();
                    let approval = policy.decide(&record.call.name).map(|_| {
                        if kind.as_deref() == Some(ToolErrorKind::Denied.as_str()) {
                            ApprovalAnswer::Denied
                        } else {
                            ApprovalAnswer::Approved
                        }
                    });
                    record.outcome = Some(CallOutcome {
                        content: content.clone(),
                        is_error: *is_error,
                        error_kind: kind,
                        injected: false,
                        approval,
                    });
                }
                Message::User { content } => {
                    pending_user = Some(content.clone());
                    turns_used += 1;
                }
                Message::System { .. } => {}
            }
        }
        History {
            episode: Episode {
                context: messages[..context]
                    .iter()
                    .filter_map(|m| m.text().map(str::to_string))
                    .collect(),
                rounds,
                stop: StopReason::Answered,
                end_state: Vec::new(),
            },
            pending_user,
            turns_used,
        }
    }

    /// The round being answered, 1-based.
    pub fn round(&self) -> usize {
        self.episode.rounds.len() + 1
    }

    /// Every call of the earlier rounds, in order.
    pub fn calls(&self) -> Vec<Past<'_>> {
        self.episode
            .rounds
            .iter()
            .enumerate()
            .flat_map(|(round, r)| {
                r.calls.iter().map(move |c| Past {
                    round,
                    call: &c.call,
                    outcome: c.outcome.as_ref(),
                })
            })
            .collect()
    }

    /// Whether the user confirmed before this round, as the judge reads it: an earlier
    /// round asked a question and a user turn came after it.
    pub fn confirmed(&self) -> bool {
        let rounds = &self.episode.rounds;
        let asked = rounds
            .iter()
            .position(|r| r.text.as_deref().is_some_and(crate::judge::claims::asks));
        asked.is_some_and(|a| {
            self.pending_user.is_some() || rounds[a + 1..].iter().any(|r| r.user.is_some())
        })
    }

    /// Whether a user turn came after round `round` (0-based).
    pub fn user_after(&self, round: usize) -> bool {
        self.pending_user.is_some()
            || self
                .episode
                .rounds
                .get(round + 1..)
                .is_some_and(|rs| rs.iter().any(|r| r.user.is_some()))
    }

    /// The episode as it would be judged if this round answered `text` and the loop
    /// ended there.
    pub fn ending_with(&self, text: &str) -> Episode {
        let mut episode = self.episode.clone();
        episode.rounds.push(Round {
            user: self.pending_user.clone(),
            text: Some(text.to_string()),
            calls: Vec::new(),
        });
        episode
    }
}

/// The error kind of an error result (`{"error": {"kind": ...}}`), when it names one.
pub fn error_kind(content: &str) -> Option<String> {
    let v: Value = serde_json::from_str(content).ok()?;
    v.get("error")?.get("kind")?.as_str().map(str::to_string)
}

/// The number of the round `messages` asks for (1-based), the first `context` messages
/// being the case's own: one more than the assistant turns after them.
pub fn round_of(messages: &[Message], context: usize) -> usize {
    messages[context.min(messages.len())..]
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count()
        + 1
}
