//! The judge model end to end: a fake OpenAI-compatible server (wiremock, as in
//! `live.rs`) is both the model under test and its judge; the judge's verdicts decide
//! text behaviours and rubrics, its failures end trials as errors, its requests are
//! recorded into and replayed from the run's cassette, and its tokens count in the
//! budget.

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::live::Fake;
use crate::support::{BAD_INPUT, OK, RUN_INCOMPLETE, Toolgauge};

const KEY: &str = "sk-judge-test-9f8e7d6c5b4a";

const OPENAI_TEXT: &str =
    include_str!("../../src/provider/testdata/openai/chat_text_answer_recorded.json");

/// The suite: single-turn cases whose text answers the judge decides, and one per way a
/// judge can fail. The suite's own judge is the scripted one; runs here override it.
const SUITE: &str = r#"
name: judged
judge: {target: scripted:judge}
tools:
  - name: get_weather
    description: Current weather for one named city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - id: vague
    kind: ambiguous
    tags: [ok]
    prompt: "Weather?"
    expect: {any_of: [{clarify: true}]}
  - id: asks
    kind: ambiguous
    tags: [ok]
    prompt: "Weather, please?"
    expect: {any_of: [{clarify: true}]}
  - id: capital
    kind: should_not_call
    tags: [ok]
    prompt: "What is the capital of France?"
    expect: {final: {rubric: 'Names "Paris" as the capital.'}}
  - id: capital-wrong
    kind: should_not_call
    tags: [ok]
    prompt: "What is the capital of Italy?"
    expect: {final: {rubric: "Names Rome as the capital."}}
  - id: judge-500
    kind: ambiguous
    tags: [fault]
    prompt: "Fault 500"
    expect: {any_of: [{clarify: true}]}
  - id: judge-429
    kind: ambiguous
    tags: [fault]
    prompt: "Fault 429"
    expect: {any_of: [{clarify: true}]}
  - id: judge-prose
    kind: ambiguous
    tags: [fault]
    prompt: "Fault prose"
    expect: {any_of: [{clarify: true}]}
  - id: judge-label
    kind: ambiguous
    tags: [fault]
    prompt: "Fault label"
    expect: {any_of: [{clarify: true}]}
  - id: judge-slow
    kind: ambiguous
    tags: [slow]
    prompt: "Fault slow"
    expect: {any_of: [{clarify: true}]}
"#;

/// The model's text answer to each prompt.
fn model_answer(prompt: &str) -> String {
    match prompt {
        // No question mark: a "contains ?" rule calls it direct; the judge disagrees.
        "Weather?" => "Happy to help - just name the city and I will look it up.".into(),
        // A question: the judge says it is a direct answer.
        "Weather, please?" => "Which city do you mean?".into(),
        "What is the capital of France?" => "The capital of France is Paris.".into(),
        "What is the capital of Italy?" => "The capital of Italy is Milan.".into(),
        other => format!("answer to: {other}"),
    }
}

/// The text between `<tag>` and the last `</tag>` of a judge prompt.
fn block(prompt: &str, tag: &str) -> Option<String> {
    let end = prompt.rfind(&format!("</{tag}>"))?;
    let start = prompt[..end].rfind(&format!("<{tag}>"))? + tag.len() + 2;
    Some(prompt[start..end].trim().to_string())
}

/// The judge's reply to a prompt: by the answer it quotes, or a fault.
fn judge_reply(prompt: &str) -> ResponseTemplate {
    let answer = block(prompt, "answer").unwrap_or_default();
    if let Some(rubric) = block(prompt, "rubric") {
        // The fake judge reads the rubric's city and looks for it in the answer.
        let city = if rubric.contains("Paris") {
            "Paris"
        } else {
            "Rome"
        };
        let pass = answer.contains(city);
        return text(&format!(
            r#"{{"pass": {pass}, "rationale": "the answer {} {city}"}}"#,
            if pass { "names" } else { "does not name" }
        ));
    }
    match answer.as_str() {
        a if a.starts_with("Happy to help") => {
            text(r#"{"behaviour": "request_for_info", "rationale": "it asks for the city"}"#)
        }
        "Which city do you mean?" => text(
            "Verdict:\n```json\n{\"behaviour\": \"direct\", \"rationale\": \"judged direct\"}\n```",
        ),
        "answer to: Fault 500" => ResponseTemplate::new(500).set_body_string("upstream broke"),
        "answer to: Fault 429" => ResponseTemplate::new(429)
            .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests"}})),
        "answer to: Fault prose" => text("I would say this is a direct answer."),
        "answer to: Fault label" => text(r#"{"behaviour": "refusal", "rationale": "?"}"#),
        "answer to: Fault slow" => {
            // Never, as far as the test is concerned (its `--timeout` is 10 s).
            text(r#"{"behaviour": "direct"}"#).set_delay(Duration::from_secs(600))
        }
        other => text(&format!("unexpected answer {other}")),
    }
}

/// An OpenAI chat completion whose message is `content`, with usage 1000 in, 20 out (the
/// judge's prompts are long).
fn text(content: &str) -> ResponseTemplate {
    let mut v: Value = serde_json::from_str(OPENAI_TEXT).unwrap();
    v["choices"][0]["message"]["content"] = json!(content);
    v["usage"] = json!({"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020});
    ResponseTemplate::new(200).set_body_json(v)
}

/// The fake server: model `m` answers the cases (40 in, 10 out), model `judge` judges.
fn server() -> Fake {
    Fake::start(|body, _| {
        let user = body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        if body["model"] == "judge" {
            assert!(
                body.get("tools").is_none(),
                "a judge request offers no tools"
            );
            return judge_reply(&user);
        }
        let mut v: Value = serde_json::from_str(OPENAI_TEXT).unwrap();
        v["choices"][0]["message"]["content"] = json!(model_answer(&user));
        v["usage"] = json!({"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50});
        ResponseTemplate::new(200).set_body_json(v)
    })
}

fn targets(fake: &Fake) -> (String, String) {
    (
        format!("openai:m@{}/v1", fake.uri()),
        format!("openai:judge@{}/v1", fake.uri()),
    )
}

fn by_case(trials: &[Value]) -> std::collections::BTreeMap<String, Value> {
    trials
        .iter()
        .map(|t| (t["case_id"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

fn reason(t: &Value) -> (String, String) {
    let r = &t["reasons"][0];
    (
        r["code"].as_str().unwrap_or_default().to_string(),
        r["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn the_judge_decides_behaviours_and_rubrics_and_its_failures_are_error_trials() {
    let fake = server();
    let t = Toolgauge::new();
    t.write("judged.yaml", SUITE);
    let (model, judge) = targets(&fake);
    let o = t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "judged.yaml",
            "--target",
            &model,
            "--judge",
            &judge,
            "--out",
            "out",
            "--tag",
            "ok,fault",
            "--max-attempts",
            "1",
            "-j",
            "1",
        ],
    );
    // Error trials make the run incomplete (no --max-error-rate).
    o.assert_code(RUN_INCOMPLETE);
    let trials = by_case(&t.run_dir("out").trials());
    assert_eq!(trials.len(), 8, "no trial is lost");

    // Verdicts follow the judge, not the classifier.
    let vague = &trials["vague"];
    assert_eq!(vague["verdict"], "pass", "{vague}");
    assert_eq!(
        vague["judge"],
        json!([{"question": "behaviour", "target": judge, "behaviour": "request_for_info",
                "rationale": "it asks for the city",
                "usage": {"input_tokens": 1000, "output_tokens": 20},
                "latency_ms": vague["judge"][0]["latency_ms"]}])
    );
    // The behaviour facts name the judge as the decider, with its rationale.
    assert_eq!(
        vague["checks"]["behaviour"]["observed"], "request_for_info",
        "{vague}"
    );
    assert_eq!(vague["checks"]["behaviour"]["by"], "judge", "{vague}");
    let asks = &trials["asks"];
    assert_eq!(asks["verdict"], "fail", "{asks}");
    assert_eq!(asks["judge"][0]["behaviour"], "direct");
    assert_eq!(asks["judge"][0]["rationale"], "judged direct");
    // Rubrics: the judge's pass and fail, with its rationale in the reason.
    assert_eq!(trials["capital"]["verdict"], "pass");
    assert_eq!(trials["capital"]["judge"][0]["pass"], true);
    let wrong = &trials["capital-wrong"];
    assert_eq!(wrong["verdict"], "fail");
    assert_eq!(wrong["judge"][0]["pass"], false);
    let (code, message) = reason(wrong);
    assert_eq!(code, "rubric_failed");
    assert!(
        message.contains("the answer does not name Rome"),
        "{message}"
    );

    // Every judge failure is an error trial saying what went wrong, with the call kept.
    for (case, says) in [
        ("judge-500", "500"),
        ("judge-429", "429"),
        (
            "judge-prose",
            "the judge's answer holds no JSON object: `I would say this is a direct answer.`",
        ),
        (
            "judge-label",
            "the judge's `behaviour` is `\"refusal\"`, not one of `direct`, `request_for_info` or `cannot_answer`",
        ),
    ] {
        let x = &trials[case];
        assert_eq!(x["verdict"], "error", "{case}: {x}");
        let (code, message) = reason(x);
        assert_eq!(code, "judge_error", "{case}");
        assert!(
            message.starts_with("no judge verdict on the behaviour of the answer: "),
            "{case}: {message}"
        );
        assert!(message.contains(says), "{case}: {message}");
        assert_eq!(x["judge"][0]["question"], "behaviour", "{case}");
        assert!(
            x["judge"][0]["error"].as_str().unwrap().contains(says),
            "{case}"
        );
        assert!(x["judge"][0].get("behaviour").is_none(), "{case}");
        // The model's answer and its tokens are kept.
        assert_eq!(x["response"]["usage"]["input_tokens"], 40, "{case}");
    }

    // Judge requests: one user message with the rendered prompt, no tools, the model's
    // sampling untouched; the key never reaches a file of the run.
    let judged: Vec<Value> = fake
        .seen()
        .into_iter()
        .map(|s| s.body)
        .filter(|b| b["model"] == "judge")
        .collect();
    assert_eq!(judged.len(), 8, "one judge request per trial");
    let first = judged[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        first.contains("- get_weather: Current weather for one named city."),
        "{first}"
    );
    assert!(
        first.contains("<conversation>\nuser: Weather?\n</conversation>"),
        "{first}"
    );
    for entry in std::fs::read_dir(t.path().join("out")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!text.contains(KEY), "the key is in {}", path.display());
    }
    assert!(!o.stdout.contains(KEY) && !o.stderr.contains(KEY));
}

#[test]
fn a_judge_that_times_out_makes_an_error_trial() {
    let fake = server();
    let t = Toolgauge::new();
    t.write("judged.yaml", SUITE);
    let (model, judge) = targets(&fake);
    let o = t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "judged.yaml",
            "--target",
            &model,
            "--judge",
            &judge,
            "--out",
            "out",
            "--tag",
            "slow",
            "--max-attempts",
            "1",
            // The judge's timeout is the target's too, and the target's answer must
            // come: 10 s, not 1 s, so a starved 2-core machine does not time it out
            // (the judge never answers, so only the test's length depends on it).
            "--timeout",
            "10",
        ],
    );
    o.assert_code(RUN_INCOMPLETE);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0]["verdict"], "error");
    let (code, message) = reason(&trials[0]);
    assert_eq!(code, "judge_error");
    assert!(message.contains("timed out"), "{message}");
}

#[test]
fn a_recorded_judge_replays_with_the_same_verdicts_and_records_offline() {
    let t = Toolgauge::new();
    t.write("judged.yaml", SUITE);
    let (model, judge, recorded) = {
        let fake = server();
        let (model, judge) = targets(&fake);
        let o = t.run_env(
            &[("OPENAI_API_KEY", KEY)],
            &[
                "run",
                "judged.yaml",
                "--target",
                &model,
                "--judge",
                &judge,
                "--out",
                "rec",
                "--tag",
                "ok",
                "--record",
                "--cassette",
                "c.jsonl",
            ],
        );
        o.assert_code(OK);
        (model, judge, t.run_dir("rec").trials())
        // The server stops here.
    };
    // Four model answers and four judge answers, under distinct keys.
    let cassette = t.read("c.jsonl");
    let entries: Vec<Value> = cassette
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 8, "{cassette}");
    let keys: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 8, "every request has its own key");
    assert_eq!(
        entries
            .iter()
            .filter(|e| e["target"] == judge.as_str())
            .count(),
        4
    );
    assert!(!cassette.contains(KEY));

    // Replay: no server, no key.
    let o = t.run(&[
        "run",
        "judged.yaml",
        "--target",
        &model,
        "--judge",
        &judge,
        "--out",
        "replay",
        "--tag",
        "ok",
        "--cassette",
        "c.jsonl",
    ]);
    o.assert_code(OK);
    let replayed = t.run_dir("replay").trials();
    let strip = |trials: &[Value]| -> Vec<(String, Value, Value, Value)> {
        let mut out: Vec<_> = trials
            .iter()
            .map(|x| {
                (
                    x["case_id"].as_str().unwrap().to_string(),
                    x["verdict"].clone(),
                    x["reasons"].clone(),
                    x["judge"].clone(),
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    assert_eq!(strip(&replayed), strip(&recorded));
    assert_eq!(
        strip(&replayed)
            .iter()
            .map(|x| x.1.as_str().unwrap())
            .collect::<Vec<_>>(),
        ["fail", "pass", "fail", "pass"],
        "asks, capital, capital-wrong, vague"
    );
}

#[test]
fn the_judges_tokens_count_in_the_budget() {
    let fake = server();
    let t = Toolgauge::new();
    t.write("judged.yaml", SUITE);
    let (model, judge) = targets(&fake);
    // 50 model tokens a trial would take 11 trials to pass 500; with the judge's 1020 a
    // trial, the first trial does.
    let o = t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "judged.yaml",
            "--target",
            &model,
            "--judge",
            &judge,
            "--out",
            "out",
            "--tag",
            "ok",
            "-j",
            "1",
            "--max-tokens",
            "500",
        ],
    );
    o.assert_code(RUN_INCOMPLETE);
    o.stderr_has(&["budget exceeded: --max-tokens 500 reached (1070) after 1 of 4 trials"]);
}

#[test]
fn the_suites_judge_runs_unless_judge_overrides_it() {
    let fake = server();
    let t = Toolgauge::new();
    t.write("judged.yaml", SUITE);
    let (model, _) = targets(&fake);
    // The suite names scripted:judge: no judge request reaches the server.
    t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "judged.yaml",
            "--target",
            &model,
            "--out",
            "out",
            "--case",
            "capital",
        ],
    )
    .assert_code(OK);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials[0]["judge"][0]["target"], "scripted:judge");
    assert!(fake.seen().iter().all(|s| s.body["model"] != "judge"));
    assert_eq!(
        t.run_dir("out").json("run.json")["settings"]["judge"],
        "scripted:judge"
    );
}

#[test]
fn a_rubric_without_a_judge_and_a_bad_judge_are_refused_before_the_run() {
    let t = Toolgauge::new();
    t.write(
        "judged.yaml",
        SUITE.replace("judge: {target: scripted:judge}\n", ""),
    );
    let o = t.run(&[
        "run",
        "judged.yaml",
        "--target",
        "scripted:no_call",
        "--out",
        "out",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "judged.yaml:22:",
        "case `capital` has `final.rubric`, which needs a judge model, but none is set",
        "field: cases[2].expect.final.rubric",
        "pass --judge TARGET",
    ]);
    let o = t.run(&[
        "run",
        "judged.yaml",
        "--target",
        "scripted:no_call",
        "--judge",
        "opnai:x",
        "--out",
        "out",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "unknown provider `opnai` in target `opnai:x`",
        "did you mean openai?",
    ]);
}

/// A loop case: the oracle plays the episode, the fake judge checks the final answer
/// against the rubric, with the episode's calls in the prompt.
#[test]
fn a_loop_cases_rubric_is_checked_on_its_final_answer_with_the_transcript() {
    let fake = Fake::start(|body, _| {
        let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
        let pass = !block(prompt, "rubric")
            .unwrap_or_default()
            .contains("impossible");
        let has_transcript = prompt.contains("<transcript>\nassistant called get_order(");
        text(&format!(
            r#"{{"pass": {}, "rationale": "checked"}}"#,
            pass && has_transcript
        ))
    });
    let t = Toolgauge::new();
    t.write(
        "loop.yaml",
        r#"
name: loop
tools:
  - name: get_order
    description: Look up one order by its id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
mocks:
  get_order:
    - result: {order_id: A1, status: shipped}
cases:
  - id: met
    kind: should_call
    prompt: "Where is order A1?"
    expect:
      calls: [{tool: get_order, args: {order_id: A1}}]
      final: {rubric: "Says the order shipped."}
  - id: unmet
    kind: should_call
    prompt: "Where is order A1?"
    expect:
      calls: [{tool: get_order, args: {order_id: A1}}]
      final: {rubric: "Something impossible."}
"#,
    );
    let judge = format!("openai:judge@{}/v1", fake.uri());
    let o = t.run_env(
        &[("OPENAI_API_KEY", KEY)],
        &[
            "run",
            "loop.yaml",
            "--target",
            "scripted:oracle",
            "--judge",
            &judge,
            "--out",
            "out",
        ],
    );
    o.assert_code(OK);
    let trials = by_case(&t.run_dir("out").trials());
    assert_eq!(trials["met"]["verdict"], "pass", "{}", trials["met"]);
    assert_eq!(trials["met"]["judge"][0]["question"], "rubric");
    assert_eq!(trials["met"]["judge"][0]["pass"], true);
    let unmet = &trials["unmet"];
    assert_eq!(unmet["verdict"], "fail");
    assert_eq!(
        reason(unmet),
        (
            "rubric_failed".to_string(),
            format!("the judge `{judge}` says the final answer does not meet the rubric: checked")
        )
    );
    assert_eq!(fake.seen().len(), 2, "one judge request per trial");
}
