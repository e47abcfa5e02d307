//! The limits of an episode (`limits:`), checked before a turn's calls are executed.
//!
//! - `max_rounds` bounds the provider requests. A turn of the last allowed round that
//!   makes calls is not executed (no round is left in which the model could read the
//!   results) and the loop stops at `max_rounds`; so does a text answer of the last
//!   round when a scripted user turn remains.
//! - `max_tool_calls` bounds the calls answered in the episode. A turn is answered whole
//!   or not at all: a turn whose calls would take the total above the limit is not
//!   executed and the loop stops at `max_tool_calls` (so the count never exceeds the
//!   limit; a turn that reaches it exactly is executed and the loop goes on).
//! - `max_identical_calls` bounds how often one tool is called with the same arguments
//!   (compared as JSON values, key order ignored). A turn that would make some call one
//!   time too many is not executed and the loop stops at `repeated_call`.
//!
//! When a turn breaks several limits, the reason reported is the most specific one:
//! `repeated_call`, then `max_tool_calls`, then `max_rounds`. Calls that were not
//! executed stay in the transcript without an outcome.

use serde_json::{Map, Value};

use crate::chat::ToolCall;
use crate::suite::loops::Limits;
use crate::suite::trajectory::StopReason;
use crate::tools::Counters;

/// Whether the turn `calls` of round `round` (1-based) may be executed, given the
/// session's counters so far; `Some(reason)` when a limit stops the loop instead.
pub fn check_turn(
    limits: &Limits,
    counters: &Counters,
    round: usize,
    calls: &[ToolCall],
) -> Option<StopReason> {
    if repeats_too_often(limits.max_identical_calls, counters, calls) {
        return Some(StopReason::RepeatedCall);
    }
    if counters.calls as usize + calls.len() > limits.max_tool_calls as usize {
        return Some(StopReason::MaxToolCalls);
    }
    if round >= limits.max_rounds as usize {
        return Some(StopReason::MaxRounds);
    }
    None
}

/// Whether executing `calls` would make one (tool, arguments) more than `max` times.
/// Calls whose arguments are not a JSON object are refused before reaching the tool
/// and are not counted, as the session does not count them.
fn repeats_too_often(max: u32, counters: &Counters, calls: &[ToolCall]) -> bool {
    let mut seen: Vec<(&str, Map<String, Value>, u32)> = Vec::new();
    for call in calls {
        let Some(args) = object(&call.arguments) else {
            continue;
        };
        let before = counters.identical_count(&call.name, &args);
        let n = match seen
            .iter_mut()
            .find(|(t, a, _)| *t == call.name && *a == args)
        {
            Some((_, _, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((&call.name, args, before + 1));
                before + 1
            }
        };
        if n > max {
            return true;
        }
    }
    false
}

/// The arguments as the session counts them: a JSON object, an empty string being none.
fn object(raw: &str) -> Option<Map<String, Value>> {
    if raw.trim().is_empty() {
        return Some(Map::new());
    }
    match serde_json::from_str(raw) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}
