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

/// An answer with empty text, no calls, no usage, and `raw` (none when null).
fn empty(raw: Value) -> Response {
    Response {
        text: Some(String::new()),
        raw: (!raw.is_null()).then_some(raw),
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
mod tests {
    use std::path::Path;

    use super::*;
    use crate::chat::ToolCall;
    use crate::provider::Provider as _;

    fn user(s: &str) -> Message {
        Message::User { content: s.into() }
    }

    fn assistant(calls: usize) -> Message {
        Message::Assistant {
            content: None,
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: Some(format!("c{i}")),
                    name: "ls".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            state: None,
        }
    }

    fn tool() -> Message {
        serde_json::from_value(json!({"role": "tool", "tool_call_id": "c0", "content": "x"}))
            .unwrap()
    }

    #[test]
    fn the_position_counts_users_after_the_first_answer_and_answers_after_the_last_user() {
        let pos = |m: &[Message]| {
            let p = Position::of(m);
            (p.turn, p.step)
        };
        assert_eq!(pos(&[user("a")]), (0, 0));
        assert_eq!(pos(&[user("a"), assistant(1), tool()]), (0, 1));
        assert_eq!(
            pos(&[user("a"), assistant(1), tool(), assistant(1), tool()]),
            (0, 2)
        );
        assert_eq!(
            pos(&[user("a"), assistant(1), tool(), assistant(0), user("b")]),
            (1, 0)
        );
        assert_eq!(
            pos(&[
                user("a"),
                assistant(0),
                user("b"),
                assistant(1),
                tool(),
                assistant(0),
                user("c"),
                assistant(2),
                tool(),
                tool(),
            ]),
            (2, 1)
        );
    }

    /// Play a whole line against a loop that ends a turn on an answer without calls:
    /// (turn, served raw) for every round, until `rounds` or the turns run out.
    fn play(result: Value, style: ResultStyle, turns: usize) -> Vec<Response> {
        let usage = StepUsage::of_line(&json!({}));
        let mut messages = vec![user("t0")];
        let mut out = Vec::new();
        let mut next_turn = 1;
        for _ in 0..100 {
            let r = respond(&result, &usage, style, &messages);
            let calls = r.tool_calls.len();
            out.push(r);
            messages.push(assistant(calls));
            if calls == 0 {
                if next_turn == turns {
                    break;
                }
                messages.push(user(&format!("t{next_turn}")));
                next_turn += 1;
            } else {
                messages.extend((0..calls).map(|_| tool()));
            }
        }
        out
    }

    fn raw_of(r: &Response) -> Value {
        r.raw.clone().unwrap_or(Value::Null)
    }

    #[test]
    fn fc_steps_are_served_in_order_skipping_those_bfcl_drops() {
        let result = json!([
            [
                [{"cd": "{\"folder\": \"docs\"}"}],
                [{"ls": "{not json"}],
                [],
                [{"mkdir": "{\"dir_name\": \"t\"}"}, {"pwd": "{}"}],
                "Done."
            ],
            [[{"pwd": "{}"}]],
            []
        ]);
        let served = play(result.clone(), ResultStyle::Fc, 3);
        let raws: Vec<Value> = served.iter().map(raw_of).collect();
        // Turn 0: steps 0 and 3 (1 and 2 do not decode), then the closing text (4).
        assert_eq!(raws[0]["bfcl_step"], 0);
        assert_eq!(served[0].tool_calls[0].name, "cd");
        assert_eq!(raws[1]["bfcl_step"], 3);
        assert_eq!(served[1].tool_calls.len(), 2);
        assert_eq!(raws[2]["bfcl_step"], 4);
        assert_eq!(raws[2]["bfcl_result"], "Done.");
        assert_eq!(served[2].text.as_deref(), Some("Done."));
        assert!(served[2].tool_calls.is_empty());
        for r in &raws[..3] {
            assert_eq!(r["bfcl_turn"], 0);
            assert_eq!(r["bfcl_style"], "fc");
        }
        // Turn 1: its call, then (its last step decodes) an empty answer.
        assert_eq!(raws[3]["bfcl_turn"], 1);
        assert_eq!(raws[3]["bfcl_result"], json!([{"pwd": "{}"}]));
        assert_eq!(served[4].text.as_deref(), Some(""));
        assert!(served[4].tool_calls.is_empty() && served[4].raw.is_none());
        // Turn 2: no step at all.
        assert_eq!(served[5].text.as_deref(), Some(""));
        assert!(served[5].tool_calls.is_empty());
        assert_eq!(served.len(), 6);
    }

    #[test]
    fn an_undecodable_last_step_ends_the_turn_without_calls() {
        let result = json!([[[{"cd": "{\"folder\": \"docs\"}"}], [{"ls": "{broken"}]]]);
        let served = play(result, ResultStyle::Fc, 1);
        assert_eq!(served.len(), 2);
        assert!(served[1].tool_calls.is_empty());
        assert_eq!(
            raw_of(&served[1])["bfcl_result"],
            json!([{"ls": "{broken"}])
        );
        assert_eq!(raw_of(&served[1])["bfcl_step"], 1);
    }

    #[test]
    fn prompt_steps_decode_from_text() {
        let result = json!([
            [
                "[cd(folder='docs'), ls()]",
                "Let me look: ls(a=",
                "[]",
                "[pwd()]",
                "All done."
            ],
            ["[pwd()]"]
        ]);
        let served = play(result, ResultStyle::Prompt, 2);
        let steps: Vec<(Value, Value)> = served
            .iter()
            .map(|r| {
                (
                    raw_of(r)["bfcl_turn"].clone(),
                    raw_of(r)["bfcl_step"].clone(),
                )
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                (json!(0), json!(0)),
                (json!(0), json!(3)),
                (json!(0), json!(4)),
                (json!(1), json!(0)),
                (Value::Null, Value::Null),
            ]
        );
        assert_eq!(served[0].tool_calls.len(), 2);
        assert_eq!(raw_of(&served[0])["bfcl_style"], "prompt");
        assert_eq!(served[2].text.as_deref(), Some("All done."));
    }

    #[test]
    fn turns_beyond_the_recorded_ones_say_how_many_were_recorded() {
        let result = json!([[[{"pwd": "{}"}], "ok"]]);
        let usage = StepUsage::default();
        let messages = [user("a"), assistant(1), tool(), assistant(0), user("b")];
        let r = respond(&result, &usage, ResultStyle::Fc, &messages);
        assert_eq!(r.text.as_deref(), Some(""));
        assert!(r.tool_calls.is_empty() && r.usage.is_none());
        assert_eq!(r.raw, Some(json!({"bfcl_turns_recorded": 1})));
        // An empty result: no turn at all.
        let r = respond(&json!([]), &usage, ResultStyle::Fc, &[user("a")]);
        assert_eq!(r.raw, Some(json!({"bfcl_turns_recorded": 0})));
    }

    #[test]
    fn a_result_that_is_not_a_list_is_an_inference_error() {
        let result = json!("Error during inference: rate limited");
        let r = respond(
            &result,
            &StepUsage::default(),
            ResultStyle::Fc,
            &[user("a")],
        );
        assert_eq!(r.text.as_deref(), Some(""));
        assert!(r.tool_calls.is_empty());
        assert_eq!(
            r.raw,
            Some(json!({"bfcl_inference_error": true, "bfcl_result": result}))
        );
    }

    #[test]
    fn which_lines_are_multi_turn() {
        let first = [user("a")];
        let later = [user("a"), assistant(1), tool()];
        assert!(is_multi_turn("x", &json!([[]]), &first));
        assert!(is_multi_turn("multi_turn_base_1", &json!("error"), &first));
        assert!(is_multi_turn("multi_turn_base_1", &json!([]), &first));
        assert!(is_multi_turn("simple_1", &json!("[f()]"), &later));
        // Single-turn results stay single-turn.
        assert!(!is_multi_turn("simple_1", &json!([{"f": "{}"}]), &first));
        assert!(!is_multi_turn("simple_1", &json!([{"f": "{}"}]), &later));
        assert!(!is_multi_turn("simple_1", &json!([]), &later));
        assert!(!is_multi_turn("simple_1", &json!("[f()]"), &first));
    }

    #[test]
    fn the_style_shows_in_the_steps_of_multi_turn_results() {
        assert!(shows_fc(&json!([{"f": "{}"}])));
        assert!(shows_fc(&json!([])));
        assert!(shows_fc(&json!([["text", [{"f": "{}"}]]])));
        assert!(!shows_fc(&json!([["[f()]", "done"], []])));
        assert!(!shows_fc(&json!("[f()]")));
    }

    #[test]
    fn each_served_step_has_its_own_usage_and_latency() {
        let line = json!({
            "result": [[[{"pwd": "{}"}], [{"ls": "{bad"}], [{"cd": "{\"folder\": \"a\"}"}], "end"]],
            "input_token_count": [[100, 101, 102, 103]],
            "output_token_count": [[10, 11, 12, 13]],
            "latency": [[0.5, 0.25, 1.5, 2.0]]
        });
        let usage = StepUsage::of_line(&line);
        let at = |m: &[Message]| {
            let r = respond(&line["result"], &usage, ResultStyle::Fc, m);
            (
                r.usage.map(|u| (u.input_tokens, u.output_tokens)),
                r.latency_ms,
            )
        };
        assert_eq!(at(&[user("a")]), (Some((100, 10)), 500.0));
        // The second served step is recorded step 2 (step 1 does not decode).
        assert_eq!(
            at(&[user("a"), assistant(1), tool()]),
            (Some((102, 12)), 1500.0)
        );
        assert_eq!(
            at(&[user("a"), assistant(1), tool(), assistant(1), tool()]),
            (Some((103, 13)), 2000.0)
        );
        // Lists of another shape give no usage; an implausible count warns.
        let flat = StepUsage::of_line(&json!({"input_token_count": 5, "output_token_count": 5}));
        let r = respond(&line["result"], &flat, ResultStyle::Fc, &[user("a")]);
        assert!(r.usage.is_none() && r.latency_ms == 0.0);
        let bad =
            StepUsage::of_line(&json!({"input_token_count": [[-1]], "output_token_count": [[5]]}));
        let r = respond(&line["result"], &bad, ResultStyle::Fc, &[user("a")]);
        assert!(r.usage.is_none());
        assert!(
            r.warnings[0].contains("input_token_count[0][0]"),
            "{:?}",
            r.warnings
        );
    }

    /// Per turn, every response served for a line, the loop moving to the next turn on
    /// an answer without calls (at most 30 rounds a turn).
    fn play_turns(line: &Value, style: ResultStyle, turns: usize) -> Vec<Vec<Response>> {
        let usage = StepUsage::of_line(line);
        let mut messages = vec![user("t0")];
        let mut out = vec![Vec::new()];
        loop {
            let r = respond(&line["result"], &usage, style, &messages);
            let calls = r.tool_calls.len();
            out.last_mut().unwrap().push(r);
            messages.push(assistant(calls));
            if calls > 0 && out.last().unwrap().len() < 30 {
                messages.extend((0..calls).map(|_| tool()));
            } else if out.len() == turns {
                return out;
            } else {
                messages.push(user("next"));
                out.push(Vec::new());
            }
        }
    }

    /// The test data made with `bfcl evaluate` (tests/bfcl_multi/generate.py): every
    /// result line replayed, in both styles, serves exactly the steps BFCL keeps.
    #[test]
    fn the_fixture_results_replay_the_steps_bfcl_keeps() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/bfcl");
        let mut truth = std::collections::HashMap::new();
        for entry in std::fs::read_dir(root.join("data/possible_answer"))
            .unwrap()
            .flatten()
        {
            if entry.file_name().to_string_lossy().contains("multi_turn") {
                for l in std::fs::read_to_string(entry.path()).unwrap().lines() {
                    let v: Value = serde_json::from_str(l).unwrap();
                    truth.insert(
                        v["id"].as_str().unwrap().to_string(),
                        v["ground_truth"].clone(),
                    );
                }
            }
        }
        let name = |call: &Value| {
            call.as_str()
                .unwrap()
                .split('(')
                .next()
                .unwrap()
                .to_string()
        };
        let mut lines = 0;
        for (style, model) in [
            (ResultStyle::Fc, "gpt-4o-2024-11-20-FC"),
            (ResultStyle::Prompt, "gpt-4o-2024-11-20"),
        ] {
            for variant in [
                "gt",
                "gt_split_steps",
                "closing_text",
                "undecodable_steps",
                "extra_read",
                "step_limit",
                "fewer_turns",
                "inference_error",
            ] {
                let dir = root
                    .join("multi_turn_results")
                    .join(style.as_str())
                    .join(variant);
                // The style shows in the steps (inference errors have none).
                if variant != "inference_error" {
                    let provider =
                        super::super::result::BfclResultProvider::open(&dir, None).unwrap();
                    assert!(
                        provider
                            .source()
                            .contains(&format!("{} style", style.as_str())),
                        "{}",
                        provider.source()
                    );
                }
                let files = std::fs::read_dir(dir.join(model).join("multi_turn")).unwrap();
                for file in files.flatten() {
                    for l in std::fs::read_to_string(file.path()).unwrap().lines() {
                        lines += 1;
                        let line: Value = serde_json::from_str(l).unwrap();
                        let id = line["id"].as_str().unwrap();
                        let gt = truth[id].as_array().unwrap();
                        let served = play_turns(&line, style, gt.len());
                        let called: Vec<Vec<String>> = served
                            .iter()
                            .map(|t| {
                                t.iter()
                                    .flat_map(|r| r.tool_calls.iter().map(|c| c.name.clone()))
                                    .collect()
                            })
                            .collect();
                        let want: Vec<Vec<String>> = gt
                            .iter()
                            .map(|t| t.as_array().unwrap().iter().map(name).collect())
                            .collect();
                        let recorded = line["result"].as_array().map_or(0, Vec::len);
                        match variant {
                            "gt" | "gt_split_steps" | "closing_text" | "undecodable_steps" => {
                                assert_eq!(called, want, "{variant} {id}");
                            }
                            "extra_read" => {
                                let extra: usize = called.iter().map(Vec::len).sum::<usize>()
                                    - want.iter().map(Vec::len).sum::<usize>();
                                assert_eq!(extra, 1, "{id}");
                            }
                            "step_limit" => {
                                let last = &served[recorded - 1];
                                assert_eq!(
                                    last.iter().filter(|r| !r.tool_calls.is_empty()).count(),
                                    21,
                                    "{id}"
                                );
                                let beyond = raw_of(&served[recorded][0]);
                                assert_eq!(beyond, json!({"bfcl_turns_recorded": recorded}));
                            }
                            "fewer_turns" => {
                                assert_eq!(recorded, gt.len() - 1);
                                assert_eq!(called[..recorded], want[..recorded], "{id}");
                                let beyond = raw_of(&served[recorded][0]);
                                assert_eq!(beyond, json!({"bfcl_turns_recorded": recorded}));
                            }
                            _ => {
                                assert_eq!(raw_of(&served[0][0])["bfcl_inference_error"], true);
                                assert!(called.iter().all(Vec::is_empty));
                            }
                        }
                        // Every served step with calls has its own counts.
                        for (t, turn) in served.iter().enumerate() {
                            for r in turn.iter().filter(|r| !r.tool_calls.is_empty()) {
                                let s = raw_of(r)["bfcl_step"].as_u64().unwrap();
                                assert_eq!(raw_of(r)["bfcl_turn"], json!(t));
                                assert_eq!(
                                    r.usage.as_ref().map(|u| u.input_tokens),
                                    Some(1000 + 10 * t as u64 + s),
                                    "{id}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(lines, 2 * 8 * 24);
    }

    /// Every line of the test data, replayed through the loop (as [`play_turns`] plays
    /// it), its served steps decoded into call strings and checked by the port of BFCL's
    /// checker, gets the verdict `bfcl evaluate` gave it: what the `bfcl` judge of
    /// multi-turn episodes has to reproduce.
    #[test]
    fn the_fixture_results_replayed_get_bfcl_evaluates_verdicts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/bfcl");
        let mut items = std::collections::HashMap::new();
        for entry in std::fs::read_dir(root.join("data")).unwrap().flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if !(file.starts_with("BFCL_v4_multi_turn_") && file.ends_with(".json")) {
                continue;
            }
            let answers =
                std::fs::read_to_string(root.join("data/possible_answer").join(&file)).unwrap();
            let questions = std::fs::read_to_string(entry.path()).unwrap();
            for (q, a) in questions.lines().zip(answers.lines()) {
                let q: Value = serde_json::from_str(q).unwrap();
                let a: Value = serde_json::from_str(a).unwrap();
                items.insert(
                    q["id"].as_str().unwrap().to_string(),
                    (q, a["ground_truth"].clone()),
                );
            }
        }
        let verdicts = std::fs::read_to_string(root.join("multi_turn_verdicts.jsonl")).unwrap();
        let mut results: std::collections::HashMap<(String, String, String), Value> =
            std::collections::HashMap::new();
        let mut disagree = Vec::new();
        let mut n = 0;
        for v in verdicts.lines() {
            let v: Value = serde_json::from_str(v).unwrap();
            let (style, variant, id) = (
                v["style"].as_str().unwrap(),
                v["variant"].as_str().unwrap(),
                v["id"].as_str().unwrap(),
            );
            let (q, gt) = &items[id];
            let category = id.rsplit_once('_').unwrap().0;
            let key = (style.to_string(), variant.to_string(), id.to_string());
            if !results.contains_key(&key) {
                let dir = root.join("multi_turn_results").join(style).join(variant);
                for file in walk(&dir) {
                    for l in std::fs::read_to_string(file).unwrap().lines() {
                        let line: Value = serde_json::from_str(l).unwrap();
                        let k = (
                            style.to_string(),
                            variant.to_string(),
                            line["id"].as_str().unwrap().to_string(),
                        );
                        results.insert(k, line);
                    }
                }
            }
            let line = &results[&key];
            let style_of: ResultStyle = style.parse().unwrap();
            let truth: Vec<Vec<String>> = serde_json::from_value(gt.clone()).unwrap();
            let served = play_turns(line, style_of, truth.len());
            let got = if raw_of(&served[0][0]).get("bfcl_inference_error").is_some() {
                (false, Some("multi_turn:inference_error".to_string()))
            } else {
                let mut model: Vec<Vec<Vec<String>>> = Vec::new();
                for turn in &served {
                    if turn
                        .iter()
                        .any(|r| raw_of(r).get("bfcl_turns_recorded").is_some())
                    {
                        break;
                    }
                    let steps = turn
                        .iter()
                        .filter_map(|r| match decode_response(r, false) {
                            Decoded::Calls(calls) if !calls.is_empty() => Some(
                                calls
                                    .iter()
                                    .map(|(name, args)| call_string(name, args).unwrap())
                                    .collect(),
                            ),
                            _ => None,
                        })
                        .collect();
                    model.push(steps);
                }
                let classes: Vec<String> =
                    serde_json::from_value(q["involved_classes"].clone()).unwrap();
                let verdict = crate::bfcl::multi_turn::check(
                    &classes,
                    &q["initial_config"],
                    category.contains("long_context"),
                    &model,
                    &truth,
                )
                .unwrap();
                (verdict.valid, verdict.error_type)
            };
            let want = (
                v["valid"].as_bool().unwrap(),
                v["error_type"].as_str().map(str::to_string),
            );
            if got != want {
                disagree.push(format!(
                    "{style} {variant} {id}: got {got:?}, bfcl evaluate {want:?}"
                ));
            }
            n += 1;
        }
        assert_eq!(n, 580);
        assert!(
            disagree.is_empty(),
            "{} of {n} differ:\n{}",
            disagree.len(),
            disagree.join("\n")
        );
    }

    /// The `*_result.json` files under `dir`.
    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if p.to_string_lossy().ends_with("_result.json") {
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn fc_call_strings_are_written_as_bfcl_writes_them() {
        for (args, want) in [
            (r#"{"folder": "docs"}"#, "cd(folder='docs')"),
            (
                r#"{"a": 1, "b": 2.0, "c": true, "d": null}"#,
                "cd(a=1,b=2.0,c=True,d=None)",
            ),
            (
                r#"{"l": [1, "x", {"k": false}], "s": "it's \"q\""}"#,
                r#"cd(l=[1, 'x', {'k': False}],s='it\'s "q"')"#,
            ),
            (
                r#"{"z": 1e400, "n": -0.0, "u": "é\n"}"#,
                "cd(z=inf,n=-0.0,u='é\\n')",
            ),
            ("{}", "cd()"),
            (r#"{"b": 1, "a": 2}"#, "cd(b=1,a=2)"),
        ] {
            assert_eq!(fc_call_string("cd", args).unwrap(), want, "{args}");
        }
        let e = fc_call_string("cd", "{bad").unwrap_err();
        assert!(e.starts_with("the arguments of `cd` are not JSON"), "{e}");
        let e = fc_call_string("cd", "[1]").unwrap_err();
        assert_eq!(e, "the arguments of `cd` are a JSON list, not an object");
    }
}
