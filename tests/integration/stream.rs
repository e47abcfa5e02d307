//! Streaming as a matrix axis, end to end: `toolgauge run --stream=both --record` (live)
//! against a fake OpenAI-compatible server that answers streamed requests with
//! server-sent events (the recorded stream of `stream_single_tool_call.sse` and
//! `stream_text.sse`, its fragments replaced by the fake model's answer) and the others
//! with one JSON body; then the cassette replayed offline in each mode, the timing in
//! every report, and `compare` across the two modes.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::live::Fake;
use crate::support::{BAD_INPUT, OK, THRESHOLD_FAILED, Toolgauge};

const KEY: &str = "sk-test-stream-000111222333";

/// The recorded streams the answers are built from (copies of
/// `../shared/wire-examples/openai/`).
const SSE_CALL: &str =
    include_str!("../../src/provider/testdata/openai/stream_single_tool_call.sse");
const SSE_TEXT: &str = include_str!("../../src/provider/testdata/openai/stream_text.sse");
const JSON_CALL: &str =
    include_str!("../../src/provider/testdata/openai/chat_single_tool_call_recorded.json");
const JSON_TEXT: &str =
    include_str!("../../src/provider/testdata/openai/chat_text_answer_recorded.json");

/// The prompts of `fixtures/live.yaml` (clear wording, `auto`), and what the fake model
/// answers: the Paris call passes, the text answer to the capital question passes, the
/// Rome call names the wrong city and fails.
fn answer(prompt: &str) -> Result<String, &'static str> {
    match prompt {
        "What's the weather in Paris?" => Ok(json!({"city": "Paris"}).to_string()),
        "How warm is it in Rome today?" => Ok(json!({"city": "Milan"}).to_string()),
        "What is the capital of France?" => Err("The capital of France is Paris."),
        _ => Err("fake: unknown prompt"),
    }
}

/// The `data:` payloads of a recorded stream, `[DONE]` left out.
fn events(sse: &str) -> Vec<Value> {
    sse.split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// `text` cut into pieces of at most 4 characters (never inside one).
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

/// A stream of the recorded shape carrying `answer`: for a call, the recorded first
/// event (name `get_weather`, the suite's tool; the id of the JSON answer's call), the arguments in pieces, the
/// finish and usage events; for a text, the role event, the text in pieces, finish and
/// usage. Usage is 40 in, 10 out, as in the JSON answers.
fn sse(answer: &Result<String, &'static str>) -> String {
    let (recorded, parts) = match answer {
        Ok(args) => (events(SSE_CALL), pieces(args)),
        Err(text) => (events(SSE_TEXT), pieces(text)),
    };
    let (first, fragment) = (&recorded[0], &recorded[1]);
    let (finish, usage) = (&recorded[recorded.len() - 2], &recorded[recorded.len() - 1]);
    let mut first = first.clone();
    if answer.is_ok() {
        // The call id of the JSON answer, so both modes give the same call.
        let json: Value = serde_json::from_str(JSON_CALL).unwrap();
        first["choices"][0]["delta"]["tool_calls"][0]["id"] =
            json["choices"][0]["message"]["tool_calls"][0]["id"].clone();
    }
    let mut out = vec![first];
    for p in parts {
        let mut e = fragment.clone();
        match answer {
            Ok(_) => e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = json!(p),
            Err(_) => e["choices"][0]["delta"]["content"] = json!(p),
        }
        out.push(e);
    }
    out.push(finish.clone());
    let mut usage = usage.clone();
    usage["usage"] = json!({"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50});
    out.push(usage);
    let mut text: String = out.iter().map(|e| format!("data: {e}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    text
}

/// The same answer as one Chat Completions body.
fn body(answer: &Result<String, &'static str>) -> Value {
    let mut v: Value;
    match answer {
        Ok(args) => {
            v = serde_json::from_str(JSON_CALL).unwrap();
            let f = &mut v["choices"][0]["message"]["tool_calls"][0]["function"];
            f["name"] = json!("get_weather");
            f["arguments"] = json!(args);
        }
        Err(text) => {
            v = serde_json::from_str(JSON_TEXT).unwrap();
            v["choices"][0]["message"]["content"] = json!(text);
        }
    }
    v["usage"] = json!({"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50});
    v
}

/// The fake server: a stream when the request asks for one, else a JSON body.
fn server() -> Fake {
    Fake::start(|req, _| {
        let prompt = req["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let a = answer(prompt);
        if req["stream"] == true {
            ResponseTemplate::new(200).set_body_raw(sse(&a), "text/event-stream")
        } else {
            ResponseTemplate::new(200).set_body_json(body(&a))
        }
    })
}

/// Each trial's verdict, reasons and calls by `case [stream]`.
fn outcomes(trials: &[Value]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for t in trials {
        let key = format!(
            "{}{}",
            t["case_id"].as_str().unwrap(),
            if t["stream"] == true { " stream" } else { "" }
        );
        let calls: Vec<String> = t["response"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{}({})", c["name"], c["arguments"]))
            .collect();
        let facts = json!({
            "verdict": t["verdict"],
            "reasons": t["reasons"],
            "checks": t["checks"],
            "calls": calls,
            "text": t["response"]["text"],
        });
        assert!(out.insert(key.clone(), facts).is_none(), "{key} twice");
    }
    out
}

/// The run arguments: `live.yaml` against `target`, clear wording under `auto`.
fn run_args<'a>(suite: &'a str, target: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        suite,
        "--target",
        target,
        "--variant",
        "clear",
        "--tool-choice",
        "auto",
        "--out",
        out,
        "--cassette",
        "rec.jsonl",
    ]
}

#[test]
fn a_streamed_and_unstreamed_run_records_replays_and_compares() {
    let t = Toolgauge::new();
    let suite = t.fixture("live.yaml");
    let fake = server();
    let target = format!("openai:gpt-4o-mini@{}/v1", fake.uri());

    // 1. Live, both modes, recorded.
    let mut args = run_args(&suite, &target, "recorded");
    args.extend(["--stream=both", "--record"]);
    let o = t.run_env(&[("OPENAI_API_KEY", KEY)], &args);
    o.assert_code(OK);
    o.stdout_has(&["streamed answers", "first token", "first tool-call byte"]);
    let seen = fake.seen();
    assert_eq!(seen.len(), 6, "3 cases × 2 modes");
    let streamed: Vec<&Value> = seen
        .iter()
        .map(|s| &s.body)
        .filter(|b| b["stream"] == true)
        .collect();
    assert_eq!(streamed.len(), 3);
    for b in &streamed {
        assert_eq!(b["stream_options"], json!({"include_usage": true}), "{b}");
    }
    drop(fake);

    let run = t.run_dir("recorded");
    let trials = run.trials();
    let recorded = outcomes(&trials);
    let expected_verdicts: Vec<(&str, &str)> = vec![
        ("capital", "pass"),
        ("capital stream", "pass"),
        ("paris", "pass"),
        ("paris stream", "pass"),
        ("rome", "fail"),
        ("rome stream", "fail"),
    ];
    assert_eq!(
        recorded
            .iter()
            .map(|(k, v)| (k.as_str(), v["verdict"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        expected_verdicts
    );
    // A streamed answer is assembled into the same calls, text and checks.
    for case in ["capital", "paris", "rome"] {
        assert_eq!(
            recorded[case],
            recorded[&format!("{case} stream")],
            "{case}: streamed and unstreamed differ"
        );
    }
    assert_eq!(
        recorded["rome stream"]["calls"],
        json!([r#""get_weather"("{\"city\":\"Milan\"}")"#])
    );
    // Streamed records say so and carry the timing; the others are as before.
    let text = t.read("recorded/trials.jsonl");
    for (line, trial) in text.lines().zip(&trials) {
        let timing = &trial["response"]["stream"];
        if trial["stream"] == true {
            assert!(timing["first_token_ms"].as_f64().is_some(), "{line}");
            assert!(timing["events"].as_u64().unwrap() >= 4, "{line}");
            let tool = timing["first_tool_byte_ms"].as_f64();
            assert_eq!(tool.is_some(), trial["case_id"] != "capital", "{line}");
        } else {
            assert!(!line.contains("\"stream\""), "{line}");
        }
    }
    assert_eq!(run.json("run.json")["settings"]["stream"], "both");
    assert_eq!(
        run.json("run.json")["matrix"]["targets"],
        json!([target.clone()])
    );

    // The summary: each cell twice, the streamed one with its timing.
    let summary = run.json("summary.json");
    let cells = summary["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert!(cells[0].get("stream").is_none(), "{}", cells[0]);
    assert!(cells[0]["metrics"].get("stream").is_none());
    assert_eq!(cells[1]["stream"], true);
    let timing = &cells[1]["metrics"]["stream"];
    assert_eq!(timing["trials"], 3);
    for k in ["first_token", "first_tool_byte"] {
        for p in ["p50_ms", "p95_ms"] {
            assert!(timing[k][p].as_f64().is_some(), "{k}.{p}: {timing}");
        }
    }
    assert_eq!(summary["overall"]["stream"]["trials"], 3);

    // Every other format shows the timing.
    let (header, rows) = run.csv("trials.csv");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let streamed_rows: Vec<&Vec<String>> =
        rows.iter().filter(|r| r[col("stream")] == "true").collect();
    assert_eq!(streamed_rows.len(), 3);
    assert!(
        streamed_rows
            .iter()
            .all(|r| !r[col("first_token_ms")].is_empty())
    );
    let (header, rows) = run.csv("summary.csv");
    let p50 = header
        .iter()
        .position(|h| h == "first_token_p50_ms")
        .unwrap();
    assert!(rows[0][p50].is_empty() && !rows[1][p50].is_empty());
    assert!(
        t.read("recorded/summary.md")
            .contains("**Streamed answers**")
    );
    assert!(
        t.read("recorded/report.html")
            .contains("id=\"stream-rows\"")
    );
    let junit = t.read("recorded/junit.xml");
    assert!(junit.contains("first_token_ms"), "{junit}");
    assert!(junit.contains("stream.first_token_p50_ms"), "{junit}");

    // The cassette: six entries, the streamed keys apart from the others.
    let cassette = t.read("rec.jsonl");
    let entries: Vec<Value> = cassette
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 6);
    let keys: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 6);
    assert_eq!(
        entries
            .iter()
            .filter(|e| e["response"]["stream"].is_object())
            .count(),
        3
    );
    assert!(!cassette.contains(KEY));

    // 2. Offline replay (no server, no key): the same verdicts and timing.
    let mut args = run_args(&suite, &target, "replayed");
    args.push("--stream=both");
    t.run(&args).assert_code(OK);
    let replayed = t.run_dir("replayed");
    assert_eq!(outcomes(&replayed.trials()), recorded);
    assert_eq!(
        replayed.json("summary.json")["cells"],
        summary["cells"],
        "replayed timing differs from the recording's"
    );

    // Resumed after losing trials of both modes: the same trials, none twice.
    let journal = t.read("replayed/trials.jsonl");
    let first_two: String = journal.lines().take(2).map(|l| format!("{l}\n")).collect();
    t.write("replayed/trials.jsonl", &first_two);
    t.run(&["run", "--resume", "replayed"]).assert_code(OK);
    assert_eq!(outcomes(&t.run_dir("replayed").trials()), recorded);

    // Shards of a run with both modes merge into the whole run.
    for (k, out) in [("1/2", "s1"), ("2/2", "s2")] {
        let mut args = run_args(&suite, &target, out);
        args.extend(["--stream=both", "--shard", k]);
        t.run(&args).assert_code(OK);
    }
    t.run(&["merge", "s1", "s2", "--out", "merged"])
        .assert_code(OK);
    assert_eq!(outcomes(&t.run_dir("merged").trials()), recorded);
    assert_eq!(
        t.run_dir("merged").json("summary.json")["cells"],
        summary["cells"]
    );

    // Each mode alone replays its half of the recording.
    t.run(&run_args(&suite, &target, "plain")).assert_code(OK);
    let mut args = run_args(&suite, &target, "streamed");
    args.push("--stream");
    t.run(&args).assert_code(OK);
    let plain = outcomes(&t.run_dir("plain").trials());
    let streamed = outcomes(&t.run_dir("streamed").trials());
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        ["capital", "paris", "rome"]
    );
    for (k, v) in &plain {
        assert_eq!(&recorded[k], v);
        assert_eq!(&streamed[&format!("{k} stream")], v);
    }

    // 3. compare: within the run, streamed against not streamed: every trial pairs.
    let o = t.run(&["compare", "replayed", "--streamed", "--format", "json"]);
    o.assert_code(OK);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], 3);
    assert_eq!(c["overall"]["n11"], 2);
    assert_eq!(c["overall"]["n00"], 1);
    assert_eq!(c["only_baseline"], 0);
    assert_eq!(c["only_candidate"], 0);
    assert_eq!(c["key"]["stream"], false);
    let cell = &c["cells"][0];
    assert!(
        cell["cell"]
            .as_str()
            .unwrap()
            .ends_with("× clear × auto × no stream → stream"),
        "{cell}"
    );
    let metric = |name: &str| {
        cell["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {cell}"))
    };
    assert!(metric("first_token_p50_ms")["candidate"].as_f64().is_some());
    assert!(metric("first_token_p50_ms")["baseline"].is_null());
    assert!(metric("latency_p50_ms")["delta"].as_f64().is_some());

    // Two runs: by default nothing pairs, the gate fails and says how to pair them.
    let o = t.run(&["compare", "plain", "streamed"]);
    o.assert_code(THRESHOLD_FAILED);
    o.stderr_has(&["pass --across-stream"]);
    let o = t.run(&[
        "compare",
        "plain",
        "streamed",
        "--across-stream",
        "--format",
        "json",
    ]);
    o.assert_code(OK);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], 3);

    // --streamed on a run with one mode compares nothing: refused.
    let o = t.run(&["compare", "plain", "--streamed"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["has unstreamed trials only", "--stream=both"]);
}

#[test]
fn scripted_targets_can_not_stream_and_bad_modes_are_refused() {
    let t = Toolgauge::new();
    let suite = t.fixture("live.yaml");
    let o = t.run(&["run", &suite, "--stream", "--out", "x"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "--stream=on, but target `scripted:oracle` can not stream",
        "only live targets stream",
    ]);
    assert!(!t.path().join("x/trials.jsonl").exists());
    let o = t.run(&["run", &suite, "--stream=sometimes", "--out", "x"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["--stream is `sometimes`: not one of on, off, both"]);
    // `--stream=off` overrides a suite that streams.
    let yaml = t
        .read("live.yaml")
        .replace("thresholds:", "sampling: {stream: both}\nthresholds:");
    t.write("streams.yaml", &yaml);
    let o = t.run(&["run", "streams.yaml", "--out", "y"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["sets `sampling.stream: both`", "--stream=off"]);
    t.run(&["run", "streams.yaml", "--out", "z", "--stream=off"])
        .assert_code(OK);
    // A value the suite can not mean is an error at its line.
    t.write(
        "bad.yaml",
        yaml.replace("{stream: both}", "{stream: always}"),
    );
    let o = t.run(&["validate", "bad.yaml"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "sampling.stream",
        "`stream` is `always`: not true, false or both",
    ]);
}
