//! The keys that name a text answer's behaviour, end to end: `toolgauge run` replays a
//! hand-written cassette (`fixtures/behaviour/`), and every trial's verdict, reasons and
//! `checks.behaviour` in trials.jsonl are what the built-in classifier makes of the
//! answers; the scripted text behaviours and the oracle run the same suite; a bad
//! `behaviour:` exits 2 with its place.

use serde_json::{Value, json};

use crate::support::{BAD_INPUT, OK, RunDir, Toolgauge};

/// Run the behaviour fixture against `target` (`None`: the suite's cassette) and return
/// its trials, by case id in suite order.
fn run(target: Option<&str>) -> Vec<(String, Value)> {
    let t = Toolgauge::new();
    let suite = t.fixture("behaviour/behaviour.yaml");
    t.fixture("behaviour/behaviour.cassette.jsonl");
    let mut args = vec!["run", &suite, "--out", "out", "--quiet"];
    if let Some(target) = target {
        args.extend(["--target", target]);
    }
    t.run(&args).assert_code(OK);
    let dir = RunDir::new(t.path().join("out"));
    dir.assert_complete();
    let order = [
        "weather-paris",
        "flight",
        "flight-asks",
        "capital",
        "vague",
        "vague-refusal",
        "mars",
        "hello",
    ];
    let mut trials: Vec<(String, Value)> = dir
        .trials()
        .into_iter()
        .map(|t| (t["case_id"].as_str().unwrap().to_string(), t))
        .collect();
    trials.sort_by_key(|(id, _)| order.iter().position(|o| o == id));
    trials
}

fn codes(t: &Value) -> Vec<&str> {
    t["reasons"]
        .as_array()
        .map(|r| r.iter().map(|r| r["code"].as_str().unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn replayed_answers_are_scored_by_their_behaviour() {
    let trials = run(None);
    let got: Vec<(&str, &str, Vec<&str>, &Value)> = trials
        .iter()
        .map(|(id, t)| {
            (
                id.as_str(),
                t["verdict"].as_str().unwrap(),
                codes(t),
                &t["checks"]["behaviour"],
            )
        })
        .collect();
    let want = [
        (
            "weather-paris",
            "pass",
            vec![],
            json!({"expected": "tool_call", "observed": "tool_call", "by": "call"}),
        ),
        // A polite refusal that offers more help is a refusal.
        (
            "flight",
            "pass",
            vec![],
            json!({"expected": "cannot_answer", "observed": "cannot_answer", "by": "classifier", "why": "I can't"}),
        ),
        (
            "flight-asks",
            "fail",
            vec!["wrong_behaviour"],
            json!({"expected": "cannot_answer", "observed": "request_for_info", "by": "classifier", "why": "Which airline do you"}),
        ),
        (
            "capital",
            "pass",
            vec![],
            json!({"expected": "direct", "observed": "direct", "by": "classifier"}),
        ),
        // "Please tell me which city." clarifies without a question mark; clarify or a
        // call: no one behaviour is expected.
        (
            "vague",
            "pass",
            vec![],
            json!({"observed": "request_for_info", "by": "classifier", "why": "Please tell"}),
        ),
        // "... Anything else?" is no clarifying question.
        (
            "vague-refusal",
            "fail",
            vec!["no_acceptable_outcome"],
            json!({"observed": "cannot_answer", "by": "classifier", "why": "I can't"}),
        ),
        (
            "mars",
            "pass",
            vec![],
            json!({"observed": "direct", "by": "classifier"}),
        ),
        (
            "hello",
            "pass",
            vec![],
            json!({"observed": "direct", "by": "classifier", "why": "How can I help"}),
        ),
    ];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.0, g.1, &g.2, g.3), (w.0, w.1, &w.2, &w.3));
    }
    let message = |id: &str| {
        trials.iter().find(|(i, _)| i == id).unwrap().1["reasons"][0]["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        message("flight-asks"),
        "expected a text answer that is `cannot_answer` (says it cannot help); the classifier \
         read it as `clarify` (asks for the missing information) on the words \"Which airline do you\""
    );
    assert_eq!(
        message("vague-refusal"),
        "no acceptable outcome held: clarify: the classifier read it as `cannot_answer` (says it \
         cannot help) on the words \"I can't\" | calls: expected a call to `get_weather` with \
         {city: a value of type string}, none matched"
    );
}

#[test]
fn the_oracle_passes_and_each_scripted_behaviour_passes_its_own_cases() {
    let verdicts = |target: &str| -> Vec<(String, String)> {
        run(Some(target))
            .into_iter()
            .map(|(id, t)| (id, t["verdict"].as_str().unwrap().to_string()))
            .collect()
    };
    let passed = |target: &str| -> Vec<String> {
        verdicts(target)
            .into_iter()
            .filter(|(_, v)| v == "pass")
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(passed("scripted:oracle").len(), 8);
    // Refusing passes the cases that want a refusal, the mars case (cannot_answer or
    // direct) and the plain should_not_call one.
    assert_eq!(
        passed("scripted:cannot"),
        ["flight", "flight-asks", "mars", "hello"]
    );
    // A direct answer without "Paris" fails `capital` on its words.
    assert_eq!(passed("scripted:direct"), ["mars", "hello"]);
    assert_eq!(
        passed("scripted:clarify"),
        ["vague", "vague-refusal", "hello"]
    );
}

#[test]
fn an_unknown_behaviour_exits_2_with_its_place_and_the_three_names() {
    let t = Toolgauge::new();
    t.write(
        "bad.yaml",
        "tools:\n  - {name: t, description: d, parameters: {type: object}}\ncases:\n  - id: n\n    kind: should_not_call\n    prompt: Hi\n    expect: {behaviour: refuse}\n",
    );
    let o = t
        .run(&["run", "bad.yaml", "--out", "out"])
        .expect_code(BAD_INPUT);
    o.stderr_has(&[
        "bad.yaml:7:25",
        "cases[0].expect.behaviour",
        "unknown behaviour `refuse`",
        "`direct`",
        "`cannot_answer`",
        "`clarify`",
    ]);
    assert!(!t.path().join("out").exists());
}
