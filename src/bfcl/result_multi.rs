//! Replaying BFCL multi-turn result lines through the tool loop, step by step.
//!
//! A multi-turn line's `result` is a list of turns, each a list of steps, each step what
//! the model produced in one query (a list of `{name: "<JSON arguments>"}` for
//! function-calling models, text for prompt-mode ones). The loop sends the conversation
//! each round; where the conversation stands says which recorded step to serve:
//!
//! * the turn is the number of user messages after the first assistant message (0
//!   before any), the step the number of assistant messages after the last user message;
//! * the k-th step served in a turn is the k-th step BFCL's evaluation keeps: one that
//!   decodes to a non-empty call list (BFCL drops the others silently);
//! * when the turn has no such step left, the turn's last recorded step is served as is
//!   if it is not decodable (usually the model's closing text), else an empty answer:
//!   either way without tool calls, so the loop goes on to the next user turn;
//! * a turn beyond the recorded ones (BFCL stopped the item: force terminated) and a
//!   `result` that is not a list (BFCL's inference error) are empty answers whose `raw`
//!   says so, for the judge to give BFCL's verdict.
//!
//! Every served step carries `raw = {bfcl_result, bfcl_style, bfcl_turn, bfcl_step}` (the
//! step's index in the recorded turn) so the judge re-decodes exactly what BFCL would.
//! BFCL stores token counts and latencies per turn and step; each served step gets its
//! own.

use serde_json::{Value, json};

use super::decode::python_json_loads;
use super::profile::decode_response;
use super::pyfmt::py_repr;
use super::result::{RAW_KEY, ResultStyle, STYLE_KEY, response_of};
use super::value::{Decoded, PyValue};
use crate::chat::Message;
use crate::provider::usage::{self, UsageReading};
use crate::provider::{Response, Usage};

/// `raw` key: the recorded turn of a served step.
pub const TURN_KEY: &str = "bfcl_turn";
/// `raw` key: the step's index in its recorded turn.
pub const STEP_KEY: &str = "bfcl_step";
/// `raw` key of the answer to a turn beyond the recorded ones: how many were recorded.
pub const TURNS_RECORDED_KEY: &str = "bfcl_turns_recorded";
/// `raw` key of the answer to a line whose `result` is not a list (BFCL's
/// `multi_turn:inference_error`).
pub const INFERENCE_ERROR_KEY: &str = "bfcl_inference_error";

/// True when a line is replayed as a multi-turn line: its `result` is a non-empty list
/// of lists, or its id is a multi-turn id (`multi_turn_...`), or the conversation is
/// already past a first answer while the result is not a list (a multi-turn request).
pub fn is_multi_turn(id: &str, result: &Value, messages: &[Message]) -> bool {
    let list_of_lists = result
        .as_array()
        .is_some_and(|turns| !turns.is_empty() && turns.iter().all(Value::is_array));
    list_of_lists
        || id.starts_with("multi_turn_")
        || (!result.is_array()
            && messages
                .iter()
                .any(|m| matches!(m, Message::Assistant { .. })))
}

/// True when `result` shows a function-calling model: a single-turn result that is a
/// list, or a multi-turn result (a non-empty list of lists) with a step that is a list.
pub fn shows_fc(result: &Value) -> bool {
    match result.as_array() {
        Some(turns) if !turns.is_empty() && turns.iter().all(Value::is_array) => turns
            .iter()
            .filter_map(Value::as_array)
            .flatten()
            .any(Value::is_array),
        Some(_) => true,
        None => false,
    }
}

/// Where a conversation stands: the recorded turn and the step within it to serve next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 0-based turn: user messages after the first assistant message.
    pub turn: usize,
    /// 0-based step: assistant messages after the last user message.
    pub step: usize,
}

impl Position {
    /// The position of the conversation `messages`.
    pub fn of(messages: &[Message]) -> Position {
        let is_assistant = |m: &Message| matches!(m, Message::Assistant { .. });
        let is_user = |m: &Message| matches!(m, Message::User { .. });
        let turn = messages.iter().position(is_assistant).map_or(0, |first| {
            messages[first..].iter().filter(|m| is_user(m)).count()
        });
        let last_user = messages.iter().rposition(is_user).map_or(0, |i| i + 1);
        let step = messages[last_user..]
            .iter()
            .filter(|m| is_assistant(m))
            .count();
        Position { turn, step }
    }
}

/// The per-turn, per-step token counts and latencies of a line, as BFCL stores them.
#[derive(Debug, Clone, Default)]
pub struct StepUsage {
    input: Option<Value>,
    output: Option<Value>,
    latency: Option<Value>,
}

impl StepUsage {
    /// The nested lists of line `v` (`input_token_count`, `output_token_count`, `latency`).
    pub fn of_line(v: &Value) -> StepUsage {
        StepUsage {
            input: v.get("input_token_count").cloned(),
            output: v.get("output_token_count").cloned(),
            latency: v.get("latency").cloned(),
        }
    }

    /// Usage and latency (seconds) of step `step` of turn `turn`, where the lists have
    /// that shape; both counts are needed for usage.
    fn at(&self, turn: usize, step: usize) -> (UsageReading, Option<f64>) {
        let pick = |v: &Option<Value>| v.as_ref().and_then(|v| v.get(turn)?.get(step)).cloned();
        let (input, output) = (pick(&self.input), pick(&self.output));
        let reading = match (input, output) {
            (Some(i), Some(o)) => {
                let field = |f: &str| format!("{f}[{turn}][{step}]");
                match (
                    usage::count(Some(&i), &field("input_token_count")),
                    usage::count(Some(&o), &field("output_token_count")),
                ) {
                    (Ok(Some(i)), Ok(Some(o))) => UsageReading::Counted(Usage {
                        input_tokens: i,
                        output_tokens: o,
                        estimated: false,
                        ..Default::default()
                    }),
                    (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
                    _ => UsageReading::Absent,
                }
            }
            _ => UsageReading::Absent,
        };
        let latency = pick(&self.latency)
            .and_then(|v| v.as_f64())
            .filter(|s| s.is_finite() && *s >= 0.0);
        (reading, latency)
    }
}

/// True when BFCL's evaluation keeps `step`: it decodes to a non-empty call list.
pub fn decodable(step: &Value, style: ResultStyle) -> bool {
    matches!(decode_response(&response_of(step, style), false), Decoded::Calls(c) if !c.is_empty())
}

/// The answer to the conversation `messages` from the multi-turn line with `result`
/// (and its per-step `usage`), written by a `style` model.
pub fn respond(
    result: &Value,
    usage: &StepUsage,
    style: ResultStyle,
    messages: &[Message],
) -> Response {
    let Some(turns) = result.as_array() else {
        return empty(json!({ INFERENCE_ERROR_KEY: true, RAW_KEY: result }));
    };
    let at = Position::of(messages);
    let Some(turn) = turns.get(at.turn) else {
        return empty(json!({ TURNS_RECORDED_KEY: turns.len() }));
    };
    // A turn that is not a list has no step BFCL could keep.
    let steps = turn.as_array().map_or(&[][..], Vec::as_slice);
    let kept = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| decodable(s, style))
        .map(|(i, _)| i)
        .nth(at.step);
    let (index, closing) = match kept {
        Some(i) => (i, false),
        None => match steps.last() {
            Some(last) if !decodable(last, style) => (steps.len() - 1, true),
            _ => return empty(Value::Null),
        },
    };
    let step = &steps[index];
    let mut response = response_of(step, style);
    if closing {
        // Undecodable calls (broken JSON arguments) must not reach the tool host: the
        // turn ends here, as it did for BFCL.
        response.tool_calls.clear();
    }
    response.raw = Some(json!({
        RAW_KEY: step,
        STYLE_KEY: style.as_str(),
        TURN_KEY: at.turn,
        STEP_KEY: index,
    }));
    let (reading, latency) = usage.at(at.turn, index);
    reading.apply(&mut response, "the result file");
    response.latency_ms = latency.map_or(0.0, |s| s * 1000.0);
    response
}

/// An answer with empty text, no calls, and `raw` (none when null): the replay's own
/// filler where the result file has no step, so no tokens (counted as zero, not
/// estimated: BFCL made no such request, and estimating it would charge the model for
/// the whole conversation again).
fn empty(raw: Value) -> Response {
    Response {
        text: Some(String::new()),
        raw: (!raw.is_null()).then_some(raw),
        usage: Some(Usage {
            input_tokens: 0,
            output_tokens: 0,
            estimated: false,
            ..Default::default()
        }),
        ..Response::default()
    }
}

/// BFCL's call string of a function-calling model's call (`convert_to_function_call`):
/// `name(k=repr(v),k2=repr(v2))`, comma without space, each value Python's `repr` of
/// what `json.loads` reads from `args_json`, in the order written. The error says why
/// the arguments are not a JSON object.
pub fn fc_call_string(name: &str, args_json: &str) -> Result<String, String> {
    let args = python_json_loads(args_json)
        .map_err(|e| format!("the arguments of `{name}` are not JSON: {e}"))?;
    call_string(name, &args)
}

/// [`fc_call_string`] of arguments already decoded (a dict; the error names any other
/// type).
pub fn call_string(name: &str, args: &PyValue) -> Result<String, String> {
    let PyValue::Dict(pairs) = args else {
        return Err(format!(
            "the arguments of `{name}` are a JSON {}, not an object",
            args.type_name()
        ));
    };
    let mut out = format!("{name}(");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match k {
            PyValue::Str(k) => out.push_str(k),
            other => out.push_str(&py_repr(other)),
        }
        out.push('=');
        out.push_str(&py_repr(v));
    }
    out.push(')');
    Ok(out)
}

#[cfg(test)]
mod tests;
