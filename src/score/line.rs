//! A trial record as a `trials.jsonl` line, a loop trial's conversation stored once.
//!
//! A loop trial's `messages` (the whole conversation) repeats what its rounds already
//! hold: every assistant turn is a round's response, every tool result a round's
//! outcome, every scripted user turn a round's `user`. Written whole, a tool that
//! returns 3 MB would put 6 MB in the journal. So the line of a loop trial keeps only
//! the case's own messages (those the first round sent) and the reader puts the rest
//! back from the rounds ([`rebuild_conversation`]): the record in memory, and so every
//! reader (the reports, `report`, `merge`, `--resume`, `compare`), has the same whole
//! conversation as before.
//!
//! Such a line is trials format 3 ([`COMPACT_FORMAT`]), so that an older toolgauge
//! refuses it instead of reading a conversation cut short; every other line stays
//! format 2, byte for byte as before. A conversation its rounds would not rebuild
//! exactly is written whole, as format 2 ([`compact_context`]): the episode runner
//! never makes one, except a scripted user turn after which the provider failed (no
//! round holds that turn), and a record read back must never differ from the one
//! written.

use serde::Serialize;

use super::distractors::DistractorFacts;
use super::record::{EpisodeRecord, TrialRecord, Verdict};
use crate::chat::Message;
use crate::episode::RoundRecord;
use crate::judge::{Reason, TrialChecks};
use crate::provider::{Response, ToolChoice};
use crate::suite::CaseKind;

/// The trials format of a line whose conversation is stored once (see the module
/// documentation).
pub const COMPACT_FORMAT: u32 = 3;

/// How many of `record`'s messages its line keeps, when it is a loop trial whose
/// messages after them are exactly what its rounds rebuild ([`rebuild_conversation`]);
/// `None` when the record must be written whole.
pub fn compact_context(record: &TrialRecord) -> Option<usize> {
    let rounds = &record.episode.as_ref()?.rounds;
    let context = rounds.first()?.sent;
    let tail = record.messages.get(context..)?;
    rebuilds(tail, context, rounds).then_some(context)
}

/// Whether `tail` (the messages after the first `context`) is exactly what `rounds`
/// rebuild, each round starting where its `sent` says. Compared in place: a 3 MB
/// result is not copied to be checked.
fn rebuilds(tail: &[Message], context: usize, rounds: &[RoundRecord]) -> bool {
    let mut at = 0;
    let next = |at: &mut usize| {
        *at += 1;
        tail.get(*at - 1)
    };
    for (i, r) in rounds.iter().enumerate() {
        // The first round's user turn, if any, is one of the case's messages.
        if i > 0
            && let Some(turn) = &r.user
        {
            match next(&mut at) {
                Some(Message::User { content }) if content == turn => {}
                _ => return false,
            }
        }
        if context + at != r.sent {
            return false;
        }
        match next(&mut at) {
            Some(Message::Assistant {
                content,
                tool_calls,
                state,
            }) if *content == r.response.text
                && *tool_calls == r.response.tool_calls
                && *state == r.response.state => {}
            _ => return false,
        }
        for (call, out) in r.response.tool_calls.iter().zip(&r.outcomes) {
            match next(&mut at) {
                Some(Message::Tool {
                    tool_call_id,
                    name,
                    content,
                    is_error,
                }) if tool_call_id == call.id.as_deref().unwrap_or_default()
                    && *name == call.name
                    && *content == out.content
                    && *is_error == out.is_error => {}
                _ => return false,
            }
        }
    }
    at == tail.len()
}

/// Put back the conversation of a loop trial read from a line that kept only the case's
/// messages (format [`COMPACT_FORMAT`]): after them, each round's user turn, its answer
/// as the assistant message, and one tool message per answered call, as the episode
/// runner appended them. A record whose messages go beyond the first round's request
/// already holds its whole conversation and is left as it is.
pub fn rebuild_conversation(record: &mut TrialRecord) {
    let Some(episode) = &record.episode else {
        return;
    };
    match episode.rounds.first() {
        Some(first) if record.messages.len() == first.sent => {}
        _ => return,
    }
    for (i, r) in episode.rounds.iter().enumerate() {
        if i > 0
            && let Some(turn) = &r.user
        {
            record.messages.push(Message::User {
                content: turn.clone(),
            });
        }
        record.messages.push(r.response.to_message());
        for (call, out) in r.response.tool_calls.iter().zip(&r.outcomes) {
            record.messages.push(Message::Tool {
                tool_call_id: call.id.clone().unwrap_or_default(),
                name: call.name.clone(),
                content: out.content.clone(),
                is_error: out.is_error,
            });
        }
    }
}

/// A [`TrialRecord`] as a line writes it, borrowing every field and `messages` only as
/// far as the line keeps them. Its fields and their attributes are the record's, so a
/// line with every message serialises exactly as the record does (a test holds it to
/// that); [`TrialLine::new`] names every field, so a field added to the record and
/// forgotten here does not compile.
#[derive(Serialize)]
pub struct TrialLine<'a> {
    case_id: &'a str,
    kind: &'a CaseKind,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    target: &'a str,
    variant: &'a str,
    tool_choice: &'a ToolChoice,
    repeat: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a Response>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<&'a TrialChecks>,
    verdict: Verdict,
    #[serde(skip_serializing_if = "<[Reason]>::is_empty")]
    reasons: &'a [Reason],
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    distractors: Option<&'a DistractorFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    episode: Option<&'a EpisodeRecord>,
    #[serde(skip_serializing_if = "<[crate::judge::model::JudgeCall]>::is_empty")]
    judge: &'a [crate::judge::model::JudgeCall],
}

impl<'a> TrialLine<'a> {
    /// `record` with only its first `keep` messages.
    pub fn new(record: &'a TrialRecord, keep: usize) -> TrialLine<'a> {
        let TrialRecord {
            case_id,
            kind,
            tags,
            target,
            variant,
            tool_choice,
            repeat,
            stream,
            messages,
            response,
            checks,
            verdict,
            reasons,
            cost_usd,
            distractors,
            episode,
            judge,
        } = record;
        TrialLine {
            case_id,
            kind,
            tags,
            target,
            variant,
            tool_choice,
            repeat: *repeat,
            stream: *stream,
            messages: &messages[..keep.min(messages.len())],
            response: response.as_ref(),
            checks: checks.as_ref(),
            verdict: *verdict,
            reasons,
            cost_usd: *cost_usd,
            distractors: distractors.as_ref(),
            episode: episode.as_ref(),
            judge,
        }
    }
}

#[cfg(test)]
#[path = "line_tests.rs"]
mod tests;
