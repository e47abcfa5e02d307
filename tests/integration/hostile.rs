//! Hostile input: each is refused with exit 2, before the expensive work, and never with
//! a panic; and hostile responses (megabytes in one unbroken word) are scored, with usage
//! estimated exactly, and stored once.

use crate::support::{BAD_INPUT, Output, Toolgauge, fixture_text};

/// Run `toolgauge run FILE` in `t` and check it is refused without a panic and without
/// a run directory. Nothing here is timed: how fast a refusal is depends on the machine.
/// Each test instead checks the message that proves the input was refused before the
/// expensive work (an alias bomb is refused by the parser's budget, not expanded; a huge
/// file by its size), and the harness's own limit on any command (60 s) catches a hang.
#[track_caller]
fn refuse_quickly(t: &Toolgauge, args: &[&str]) -> Output {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", "out"]);
    let o = t.run(&all).expect_code(BAD_INPUT);
    assert!(!t.path().join("out").exists(), "no run directory is made");
    o
}

/// A suite whose first tool's `parameters` is `parameters` (text after `parameters: `).
fn suite_with_parameters(parameters: &str) -> String {
    format!(
        "name: hostile\ntools:\n  - name: t\n    description: d\n    parameters: {parameters}\ncases:\n  - {{ id: a, kind: should_not_call, prompt: hi }}\n"
    )
}

#[test]
fn alias_expansion_bomb_in_parameters_is_refused_quickly() {
    let t = Toolgauge::new();
    // Nine levels of anchors, each repeating the previous one ten times: 10^9 nodes if
    // expanded.
    let mut yaml = String::from(
        "name: bomb\ntools:\n  - name: t\n    description: d\n    parameters:\n      type: object\n",
    );
    yaml.push_str("      x0: &a0 [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n");
    for level in 1..9 {
        let refs = vec![format!("*a{}", level - 1); 10].join(",");
        yaml.push_str(&format!("      x{level}: &a{level} [{refs}]\n"));
    }
    yaml.push_str("cases:\n  - { id: a, kind: should_not_call, prompt: hi }\n");
    t.write("bomb.yaml", yaml);
    refuse_quickly(&t, &["bomb.yaml"]).stderr_has(&[
        "error: bomb.yaml:",
        "too large or too deeply nested",
        "hint: ",
        "anchors that expand into huge documents are refused",
    ]);
}

#[test]
fn nesting_5000_levels_deep_is_refused_quickly() {
    let n = 5000;
    let t = Toolgauge::new();
    t.write(
        "deep_lists.yaml",
        suite_with_parameters(&format!("{}{}", "[".repeat(n), "]".repeat(n))),
    );
    t.write(
        "deep_maps.yaml",
        suite_with_parameters(&format!("{}1{}", "{a: ".repeat(n), "}".repeat(n))),
    );
    for file in ["deep_lists.yaml", "deep_maps.yaml"] {
        refuse_quickly(&t, &[file]).stderr_has(&[
            &format!("error: {file}:5:"),
            "hint: the file is too large or too deeply nested",
        ]);
    }
}

#[test]
fn invalid_utf8_is_refused_with_its_line_and_column() {
    let t = Toolgauge::new();
    t.write(
        "latin1.yaml",
        b"name: weather\ndescription: caf\xc3\xa9 \xff\xfe\ntools: []\n",
    );
    refuse_quickly(&t, &["latin1.yaml"]).stderr_has(&[
        // `description: café ` is 18 characters; the bad byte is the 19th.
        "error: latin1.yaml:2:19: the file is not valid UTF-8 (byte offset 33)",
        "hint: save the suite as UTF-8",
    ]);
}

#[test]
fn file_over_16_mib_is_refused_before_parsing() {
    let t = Toolgauge::new();
    // A valid suite padded with comments: only its size is wrong.
    let mut text = fixture_text("weather.yaml");
    let pad = format!("# {}\n", "x".repeat(1021));
    while text.len() <= 16 * 1024 * 1024 {
        text.push_str(&pad);
    }
    t.write("huge.yaml", &text);
    refuse_quickly(&t, &["huge.yaml"]).stderr_has(&[
        &format!(
            "error: huge.yaml: suite file is {} bytes, over the limit of 16777216 bytes",
            text.len()
        ),
        "hint: split the suite into several files",
    ]);
}

#[test]
fn cassette_with_a_corrupt_middle_line_is_refused_with_its_line_number() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let script = t.fixture("weather_script.yaml");
    t.run(&[
        "cassette",
        "write",
        &suite,
        "--script",
        &script,
        "--out",
        "good.jsonl",
        "--target",
        "openai:gpt-4o-mini",
    ])
    .expect_code(0);
    let corrupt: Vec<String> = t
        .read("good.jsonl")
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 2 {
                l[..l.len() / 2].to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    t.write("corrupt.jsonl", corrupt.join("\n") + "\n");
    refuse_quickly(
        &t,
        &[
            &suite,
            "--target",
            "openai:gpt-4o-mini",
            "--cassette",
            "corrupt.jsonl",
        ],
    )
    .stderr_has(&[
        "cassette `corrupt.jsonl` line 3: invalid entry",
        "hint: see docs/cassettes.md",
    ]);
}

#[test]
fn huge_responses_are_estimated_exactly_and_stored_once() {
    // One answer of 100,000 `a`s and one call whose arguments hold 100,000 `x`s in a
    // field the schema wants an integer, both without usage: the counts are estimated
    // (tiktoken's exactly, at a cost linear in the length: the quadratic merge this
    // replaced took seconds on this in a release build, and hours on megabytes), and
    // trials.jsonl holds each blob once, the quotes in checks and reasons clipped.
    let t = Toolgauge::new();
    let n = 100_000;
    let word = "a".repeat(n);
    let args = format!(r#"{{"city": "Paris", "days": "{}"}}"#, "x".repeat(n));
    t.write(
        "huge.yaml",
        "name: huge\ntools:\n  - name: get_weather\n    description: Weather for one city.\n    parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}, required: [city]}\ncases:\n  - {id: blob, kind: should_call, prompt: Weather in Paris?, expect: {calls: [{tool: get_weather, args: {city: Paris}}]}}\n  - {id: word, kind: should_not_call, prompt: Say one long word.}\n",
    );
    let script = serde_json::json!({"responses": [
        {"case": "blob", "calls": [{"name": "get_weather", "arguments": args}]},
        {"case": "word", "text": word},
    ]});
    // JSON is YAML: the script is written as JSON, quoting the megabytes safely.
    t.write("script.yaml", script.to_string());
    let target = "openai:gpt-4o-mini";
    t.run(&[
        "cassette",
        "write",
        "huge.yaml",
        "--script",
        "script.yaml",
        "--out",
        "cassette.jsonl",
        "--target",
        target,
    ])
    .expect_code(0);
    t.run(&[
        "run",
        "huge.yaml",
        "--target",
        target,
        "--cassette",
        "cassette.jsonl",
        "--out",
        "out",
    ])
    .expect_code(0);
    let journal = t.read("out/trials.jsonl");
    let trials: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(trials.len(), 2);
    // Each blob once, and little else: the rest of both records is a few kilobytes.
    assert!(
        journal.len() < 2 * n + 8_000,
        "trials.jsonl is {} bytes for {} bytes of responses",
        journal.len(),
        2 * n
    );
    let tokens = |s: &str| tiktoken_rs::o200k_base_singleton().encode_ordinary(s).len() as u64;
    for trial in &trials {
        let usage = &trial["response"]["usage"];
        assert_eq!(usage["estimated"], true, "{usage}");
        let want = match trial["case_id"].as_str() {
            Some("word") => {
                assert_eq!(trial["response"]["text"].as_str(), Some(word.as_str()));
                tokens(&word)
            }
            Some("blob") => {
                let call = &trial["response"]["tool_calls"][0];
                assert_eq!(call["arguments"].as_str(), Some(args.as_str()));
                let errors = &trial["checks"]["calls"][0]["schema_errors"];
                assert_eq!(errors.as_array().map(Vec::len), Some(1), "{errors}");
                let error = errors[0].as_str().unwrap_or_default();
                assert!(
                    error.starts_with("/days: \"xxx")
                        && error.ends_with("xxx\" is not of type \"integer\""),
                    "{error}"
                );
                assert!(error.chars().count() < 300, "{error}");
                tokens("get_weather") + tokens(&args)
            }
            other => panic!("unexpected case {other:?}"),
        };
        assert_eq!(
            usage["output_tokens"].as_u64(),
            Some(want),
            "{}",
            trial["case_id"]
        );
    }
}

#[test]
fn markup_in_a_loop_trials_mock_results_turns_and_answers_is_escaped_in_the_page() {
    // A tool loop whose mock result, error message, scripted user turn and model answer
    // all carry markup: report.html shows none of it as markup (the embedded data escapes
    // `<` and `>`), and the data still holds every payload verbatim for the transcript.
    let t = Toolgauge::new();
    let script_tag = "<script>window.pwned=1</script>";
    let img = "<img src=x onerror=alert(1)>";
    t.write(
        "loop.yaml",
        format!(
            r#"name: hostile-loop
tools:
  - name: lookup
    description: Look something up.
    parameters: {{type: object, properties: {{q: {{type: string}}}}}}
mocks:
  lookup:
    - fail: {{kind: server_error, times: 1, message: "down {img}"}}
    - result: {{note: "{script_tag}"}}
limits: {{max_rounds: 4}}
cases:
  - id: hostile
    kind: should_call
    prompt: Look it up.
    expect: {{calls: [{{tool: lookup}}]}}
  - id: chat
    kind: should_not_call
    prompt: Hi.
    turns: ["{script_tag} again"]
"#
        ),
    );
    t.write(
        "script.yaml",
        serde_json::json!({"responses": [
            {"case": "hostile", "calls": [{"name": "lookup", "arguments": {"q": script_tag}}]},
            {"case": "chat", "text": format!("{img} hello")},
        ]})
        .to_string(),
    );
    t.run(&[
        "run",
        "loop.yaml",
        "-t",
        "scripted:script.yaml",
        "--out",
        "out",
        "--quiet",
    ])
    .expect_code(0);
    let journal = t.read("out/trials.jsonl");
    assert!(journal.contains(r#"{\"note\":\"<script>window.pwned=1</script>\"}"#));
    let html = t.read("out/report.html");
    for payload in ["<script>window", "<img", "onerror=alert(1)>"] {
        assert!(!html.contains(payload), "{payload} in the page unescaped");
    }
    // Only the page's data block and script.
    assert_eq!(html.matches("<script").count(), 2);
    let open = r#"<script type="application/json" id="tg-data">"#;
    let start = html.find(open).unwrap() + open.len();
    let data = &html[start..start + html[start..].find("</script>").unwrap()];
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    let trial = |case: &str| {
        data["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["case_id"] == case)
            .unwrap()
            .clone()
    };
    let hostile = trial("hostile");
    let rounds = hostile["episode"]["rounds"].as_array().unwrap();
    // Round 1: the injected server error; rounds 2 and 3: the result; round 4 (the last
    // allowed by max_rounds): not executed.
    assert_eq!(rounds.len(), 4, "{rounds:?}");
    assert!(rounds[3].get("outcomes").is_none());
    let error = rounds[0]["outcomes"][0]["content"].as_str().unwrap();
    assert!(error.contains(&format!("down {img}")), "{error}");
    assert_eq!(rounds[0]["outcomes"][0]["fault"], true);
    assert_eq!(
        rounds[1]["outcomes"][0]["content"],
        format!(r#"{{"note":"{script_tag}"}}"#)
    );
    assert_eq!(
        rounds[0]["response"]["tool_calls"][0]["arguments"],
        format!(r#"{{"q":"{script_tag}"}}"#)
    );
    // The text answers and the scripted user turn between them.
    let chat = trial("chat");
    let rounds = chat["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds[0]["response"]["text"], format!("{img} hello"));
    assert_eq!(rounds[1]["user"], format!("{script_tag} again"));
}
