//! Cached input, cache writes and reasoning end to end (issue 31): `toolgauge run`
//! against fake Anthropic and OpenAI servers whose answers are recorded bodies
//! (`src/provider/testdata/`) carrying the usage of a prompt-cache hit. The counts are
//! kept apart in `trials.jsonl`, summed per cell in `summary.json` and the CSV files,
//! shown in the terminal, charged at the list cache rates (or at the input rate by a
//! price file without them), and kept by `report` and `run --resume`, which read the
//! trials back.

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::live::Fake;
use crate::support::{OK, Toolgauge};

const KEY: &str = "sk-test-cache-000111222333";

const ANTHROPIC_CALL: &str =
    include_str!("../../src/provider/testdata/anthropic/msg_single_tool_use.json");
const ANTHROPIC_TEXT: &str =
    include_str!("../../src/provider/testdata/anthropic/msg_text_end_turn.json");
const OPENAI_CALL: &str =
    include_str!("../../src/provider/testdata/openai/chat_single_tool_call_recorded.json");
const OPENAI_TEXT: &str =
    include_str!("../../src/provider/testdata/openai/chat_text_answer_recorded.json");

/// What the fake model does for a `live.yaml` prompt: call `get_weather` for the city
/// asked about, answer the capital question in words. Every trial passes.
fn answer(prompt: &str) -> Option<&'static str> {
    if prompt.contains("Paris") {
        Some("Paris")
    } else if prompt.contains("Rome") {
        Some("Rome")
    } else {
        None
    }
}

/// The text of the last user message of a request, in either wire format.
fn last_user_text(body: &Value) -> String {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .cloned()
        .unwrap_or_default();
    match &last["content"] {
        Value::String(s) => s.clone(),
        blocks => blocks[0]["text"].as_str().unwrap_or_default().to_string(),
    }
}

/// Anthropic answers, each with 1,000 input tokens of which 800 were read from the
/// cache and 100 written to it, and 50 output tokens.
fn anthropic_server() -> Fake {
    Fake::start(|body, _| {
        let mut v: Value;
        match answer(&last_user_text(body)) {
            Some(city) => {
                v = serde_json::from_str(ANTHROPIC_CALL).unwrap();
                v["content"][0]["name"] = json!("get_weather");
                v["content"][0]["input"] = json!({"city": city});
            }
            None => {
                v = serde_json::from_str(ANTHROPIC_TEXT).unwrap();
                v["content"][0]["text"] = json!("The capital of France is Paris.");
            }
        }
        v["usage"] = json!({
            "input_tokens": 100,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 800,
            "output_tokens": 50
        });
        ResponseTemplate::new(200).set_body_json(v)
    })
}

/// OpenAI answers with the usage of OpenAI's prompt caching guide (2,006 prompt
/// tokens, 1,920 cached; 300 completion tokens) of which 120 were reasoning.
fn openai_server() -> Fake {
    Fake::start(|body, _| {
        let mut v: Value;
        match answer(&last_user_text(body)) {
            Some(city) => {
                v = serde_json::from_str(OPENAI_CALL).unwrap();
                let f = &mut v["choices"][0]["message"]["tool_calls"][0]["function"];
                f["name"] = json!("get_weather");
                f["arguments"] = json!(json!({"city": city}).to_string());
            }
            None => {
                v = serde_json::from_str(OPENAI_TEXT).unwrap();
                v["choices"][0]["message"]["content"] = json!("The capital of France is Paris.");
            }
        }
        v["usage"] = json!({
            "prompt_tokens": 2006,
            "completion_tokens": 300,
            "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920},
            "completion_tokens_details": {"reasoning_tokens": 120}
        });
        ResponseTemplate::new(200).set_body_json(v)
    })
}

/// `live.yaml` under one variant and `auto`: three trials.
fn run(t: &Toolgauge, key_var: &str, target: &str, out: &str, extra: &[&str]) {
    let suite = t.fixture("live.yaml");
    let mut args = vec![
        "run",
        &suite,
        "--target",
        target,
        "--out",
        out,
        "--variant",
        "clear",
        "--tool-choice",
        "auto",
        "--no-color",
    ];
    args.extend(extra);
    t.run_env(&[(key_var, KEY)], &args).assert_code(OK);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// The values of `columns` in a CSV row, by header name.
fn cells<'a>(header: &[String], row: &'a [String], columns: &[&str]) -> Vec<&'a str> {
    columns
        .iter()
        .map(|c| {
            let i = header
                .iter()
                .position(|h| h == c)
                .unwrap_or_else(|| panic!("no column {c} in {header:?}"));
            row[i].as_str()
        })
        .collect()
}

const DETAIL_COLUMNS: [&str; 3] = [
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
];

#[test]
fn anthropic_cache_reads_and_writes_are_kept_apart_and_charged_at_the_list_rates() {
    let fake = anthropic_server();
    let t = Toolgauge::new();
    let target = format!("anthropic:claude-haiku-4-5@{}/v1", fake.uri());
    let suite = t.fixture("live.yaml");
    let o = t.run_env(
        &[("ANTHROPIC_API_KEY", KEY)],
        &[
            "run",
            &suite,
            "--target",
            &target,
            "--out",
            "out",
            "--variant",
            "clear",
            "--tool-choice",
            "auto",
            "--no-color",
            "--wide",
        ],
    );
    o.assert_code(OK);
    // The terminal shows the parts after in/out.
    o.stdout_has(&["3000/150 (2400 cached, 300 cache write)"]);

    // trials.jsonl: each usage with its parts. Cost by hand at Claude Haiku 4.5's list
    // rates ($1 input, $0.10 cache read, $1.25 cache write, $5 output per million):
    // 100 × 1 + 800 × 0.10 + 100 × 1.25 + 50 × 5 = 555 per million = $0.000555 (it was
    // $0.00125 with every input token charged as fresh input).
    let dir = t.run_dir("out");
    let trials = dir.trials();
    assert_eq!(trials.len(), 3);
    for x in &trials {
        assert_eq!(x["verdict"], "pass", "{x}");
        assert_eq!(
            x["response"]["usage"],
            json!({"input_tokens": 1000, "output_tokens": 50, "cached_input_tokens": 800, "cache_write_tokens": 100}),
            "{x}"
        );
        let cost = x["cost_usd"].as_f64().unwrap();
        assert!(close(cost, 0.000555), "{cost}");
    }

    // summary.json: the cell's and the overall sums, and the cost of three trials.
    let summary = dir.json("summary.json");
    let want = json!({"input": 3000, "output": 150, "estimated_trials": 0, "cached_input": 2400, "cache_write": 300});
    assert_eq!(summary["overall"]["tokens"], want);
    assert_eq!(summary["cells"][0]["metrics"]["tokens"], want);
    let cost = summary["overall"]["cost_usd"].as_f64().unwrap();
    assert!(close(cost, 3.0 * 0.000555), "{cost}");
    // run.json keeps the cache rates it charged.
    assert_eq!(
        dir.json("run.json")["settings"]["prices"]["models"]["anthropic:claude-haiku-4-5"],
        json!({"input_per_mtok": 1.0, "output_per_mtok": 5.0, "cached_input_per_mtok": 0.1, "cache_write_per_mtok": 1.25})
    );

    // summary.csv and trials.csv end with the three columns.
    let (header, rows) = dir.csv("summary.csv");
    assert_eq!(&header[header.len() - 3..], DETAIL_COLUMNS);
    assert_eq!(rows.len(), 2, "one cell, then overall");
    for row in &rows {
        assert_eq!(cells(&header, row, &DETAIL_COLUMNS), ["2400", "300", "0"]);
        assert_eq!(cells(&header, row, &["cost_usd"]), ["0.001665"]);
    }
    let (header, rows) = dir.csv("trials.csv");
    assert_eq!(&header[header.len() - 3..], DETAIL_COLUMNS);
    for row in &rows {
        assert_eq!(cells(&header, row, &DETAIL_COLUMNS), ["800", "100", "0"]);
        assert_eq!(
            cells(&header, row, &["input_tokens", "cost_usd"]),
            ["1000", "0.000555"]
        );
    }
    // The Markdown and HTML reports show the parts too.
    assert!(
        t.read("out/summary.md")
            .contains("3000/150 (2400 cached, 300 cache write)"),
        "{}",
        t.read("out/summary.md")
    );
    let html = t.read("out/report.html");
    assert!(html.contains("2400 cached, 300 cache write"));

    // `report` reads the trials back: the same summary.
    let before = t.read("out/summary.json");
    t.run(&["report", "out", "--format", "json"])
        .assert_code(OK);
    assert_eq!(t.read("out/summary.json"), before);

    // A resumed run keeps the counts of the trials it read back and charges the new
    // ones at the same rates.
    let journal = t.read("out/trials.jsonl");
    let first: Vec<&str> = journal.lines().take(1).collect();
    t.write("out/trials.jsonl", first.join("\n") + "\n");
    t.run_env(
        &[("ANTHROPIC_API_KEY", KEY)],
        &["run", "--resume", "out", "--no-color"],
    )
    .assert_code(OK);
    let resumed = t.run_dir("out").json("summary.json");
    assert_eq!(resumed["overall"]["tokens"], want);
    assert!(close(
        resumed["overall"]["cost_usd"].as_f64().unwrap(),
        cost
    ));
}

#[test]
fn openai_cached_and_reasoning_tokens_with_and_without_cache_rates() {
    let fake = openai_server();
    let t = Toolgauge::new();
    let target = format!("openai:gpt-4o-mini@{}/v1", fake.uri());

    // The built-in list price of gpt-4o-mini: $0.15 input, $0.075 cached, $0.60
    // output. Per trial: 86 × 0.15 + 1,920 × 0.075 + 300 × 0.60 = 336.9 per million;
    // the 120 reasoning tokens are output and cost nothing more.
    run(&t, "OPENAI_API_KEY", &target, "listed", &[]);
    let dir = t.run_dir("listed");
    for x in dir.trials() {
        assert_eq!(
            x["response"]["usage"],
            json!({"input_tokens": 2006, "output_tokens": 300, "cached_input_tokens": 1920, "reasoning_tokens": 120})
        );
        assert!(close(x["cost_usd"].as_f64().unwrap(), 0.0003369), "{x}");
    }
    let summary = dir.json("summary.json");
    assert_eq!(
        summary["overall"]["tokens"],
        json!({"input": 6018, "output": 900, "estimated_trials": 0, "cached_input": 5760, "reasoning": 360})
    );
    let (header, rows) = dir.csv("summary.csv");
    assert_eq!(
        cells(&header, &rows[1], &DETAIL_COLUMNS),
        ["5760", "0", "360"]
    );

    // A price file without cache rates charges cached tokens as fresh input (the cost
    // before the rates were apart): 2,006 × 1 + 300 × 2 = 2,606 per million.
    t.write(
        "plain.yaml",
        "gpt-4o-mini: {input_per_mtok: 1, output_per_mtok: 2}\n",
    );
    run(
        &t,
        "OPENAI_API_KEY",
        &target,
        "plain",
        &["--prices", "plain.yaml"],
    );
    let cost = t.run_dir("plain").json("summary.json")["overall"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(close(cost, 3.0 * 0.002606), "{cost}");
    // With one: 86 × 1 + 1,920 × 0.25 + 300 × 2 = 1,166 per million.
    t.write(
        "cached.yaml",
        "gpt-4o-mini: {input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.25}\n",
    );
    run(
        &t,
        "OPENAI_API_KEY",
        &target,
        "cached",
        &["--prices", "cached.yaml"],
    );
    let cost = t.run_dir("cached").json("summary.json")["overall"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(close(cost, 3.0 * 0.001166), "{cost}");
}
