//! Tests of the multi-turn replay: position arithmetic, the steps served, usage per
//! step, and the test data of tests/bfcl_multi replayed against `bfcl evaluate`'s verdicts.

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
    serde_json::from_value(json!({"role": "tool", "tool_call_id": "c0", "content": "x"})).unwrap()
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
    assert!(r.tool_calls.is_empty());
    // The replay's own filler costs nothing: zero tokens, counted (never estimated).
    let u = r.usage.as_ref().unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.estimated),
        (0, 0, false)
    );
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
                let provider = super::super::result::BfclResultProvider::open(&dir, None).unwrap();
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
