//! Loop metrics in every report: a small loop suite run offline against a script, and
//! each figure of `summary.json`, the CSV columns, the JUnit properties and the Markdown
//! and terminal tables checked against values derived by hand from the script.

use serde_json::Value;

use crate::support::{OK, Toolgauge};

/// One single-turn case (`plain`) and three loop cases with their own mocks:
/// - `flow`: get_order then get_shipment, whose first call of each trial fails with an
///   injected rate limit; the script calls both in every round, so the loop runs to
///   `max_rounds` (3) as expected: 6 calls, the rate limit recovered (called again in
///   round 2), the data flow from get_order's result held (round 2). Passes.
/// - `note`: send_note (idempotent: false) in every round: executed in rounds 1 and 2
///   with the same arguments (one duplicate side effect); round 3's call is not run.
///   Fails (duplicate_side_effect, loop_stopped).
/// - `answer`: answers in text at once; repeat 0 states a date and a name found nowhere
///   (not grounded, fails), repeat 1 only the order id from the prompt (grounded, passes).
const SUITE: &str = r#"
name: loops
tools:
  - name: get_order
    description: Look up an order by id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  - name: get_shipment
    description: Track a shipment.
    parameters: {type: object, properties: {shipment_id: {type: string}}, required: [shipment_id]}
  - name: send_note
    description: Send a note.
    idempotent: false
    parameters: {type: object, properties: {text: {type: string}}}
cases:
  - {id: plain, kind: should_not_call, prompt: hi}
  - id: flow
    kind: should_call
    prompt: "Where is order A123?"
    mocks:
      get_order:
        - when: {order_id: A123}
          result: {order_id: A123, shipment_id: S9}
      get_shipment:
        - fail: {kind: rate_limit, times: 1}
          when: {shipment_id: S9}
        - result: {status: in_transit}
    limits: {max_rounds: 3, max_identical_calls: 10}
    expect:
      trajectory:
        mode: in_order
        steps:
          - {tool: get_order, args: {order_id: A123}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.shipment_id}}}
      stop: max_rounds
  - id: note
    kind: should_call
    prompt: "Send the note hello"
    mocks: {send_note: [{result: sent}]}
    limits: {max_rounds: 3, max_identical_calls: 10}
    expect:
      calls: [{tool: send_note}]
  - id: answer
    kind: should_not_call
    prompt: "When does order A123 arrive?"
    mocks: {get_order: [{error: {kind: not_found, message: no such order}}]}
    expect:
      final: {grounded: true}
"#;

/// Every round of a case gets the same answer, with this usage and latency.
const SCRIPT: &str = r#"
responses:
  - case: plain
    text: "Hello."
    usage: {input_tokens: 10, output_tokens: 2}
    latency_ms: 40
  - case: flow
    calls:
      - {name: get_order, arguments: {order_id: A123}}
      - {name: get_shipment, arguments: {shipment_id: S9}}
    usage: {input_tokens: 50, output_tokens: 5}
    latency_ms: 100
  - case: note
    calls: [{name: send_note, arguments: {text: hello}}]
    usage: {input_tokens: 30, output_tokens: 5}
    latency_ms: 60
  - case: answer
    repeat: 0
    text: "It arrives on 12-05 with DHL."
    usage: {input_tokens: 20, output_tokens: 9}
    latency_ms: 80
  - case: answer
    text: "Order A123 has no delivery date yet."
    usage: {input_tokens: 20, output_tokens: 9}
    latency_ms: 80
"#;

const TARGET: &str = "scripted:script.yaml";

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[track_caller]
fn rate(r: &Value, num: u64, den: u64) {
    assert_eq!(
        (r["num"].as_u64(), r["den"].as_u64()),
        (Some(num), Some(den)),
        "{r}"
    );
    assert!(close(&r["value"], num as f64 / den as f64), "{r}");
}

/// Run the suite with 2 repeats; returns the scratch directory and the terminal output.
fn run() -> (Toolgauge, String) {
    let t = Toolgauge::new();
    t.write("loops.yaml", SUITE);
    t.write("script.yaml", SCRIPT);
    let o = t
        .run(&[
            "run",
            "loops.yaml",
            "-t",
            TARGET,
            "--repeats",
            "2",
            "--out",
            "out",
            "--no-color",
            "--wide",
        ])
        .expect_code(OK);
    (t, o.stdout)
}

#[test]
fn summary_json_has_every_loop_figure_derived_by_hand() {
    let (t, stdout) = run();
    let s: Value = serde_json::from_str(&t.read("out/summary.json")).unwrap();
    let m = &s["cells"][0]["metrics"];
    // All 8 trials count in the cell's ordinary metrics; the loop block has the 6 loop
    // trials (flow, note, answer × 2 repeats).
    assert_eq!(m["trials"], 8);
    let l = &m["loops"];
    assert_eq!(
        (&l["trials"], &l["scored"], &l["errors"], &l["passed"]),
        (
            &Value::from(6),
            &Value::from(6),
            &Value::from(0),
            &Value::from(3)
        )
    );
    // flow ×2 and answer#1 pass.
    rate(&l["task_success"], 3, 6);
    // Wilson 3 of 6: centre 0.5, half 1.96·sqrt(0.25/6 + 3.8415/144)/1.64 = 0.3124.
    assert!(
        (l["task_success"]["low"].as_f64().unwrap() - 0.1876).abs() < 1e-3,
        "{l}"
    );
    // Rounds 3, 3, 3, 3, 1, 1: mean 14/6; sorted [1, 1, 3, 3, 3, 3]: p50 rank 3 -> 3.
    assert!(close(&l["rounds"]["mean"], 14.0 / 6.0));
    assert_eq!(
        (
            &l["rounds"]["p50"],
            &l["rounds"]["p95"],
            &l["rounds"]["max"]
        ),
        (&Value::from(3.0), &Value::from(3.0), &Value::from(3))
    );
    // Calls 6, 6, 3, 3, 0, 0 (round 3's calls count though a limit kept them from
    // running): mean 3, sorted [0, 0, 3, 3, 6, 6]: p50 3, p95 6.
    assert!(close(&l["tool_calls"]["mean"], 3.0));
    assert_eq!(
        (
            &l["tool_calls"]["p50"],
            &l["tool_calls"]["p95"],
            &l["tool_calls"]["max"]
        ),
        (&Value::from(3.0), &Value::from(6.0), &Value::from(6))
    );
    assert_eq!(
        l["stop"],
        serde_json::json!({"answered": 2, "max_rounds": 4, "max_tool_calls": 0, "repeated_call": 0})
    );
    // One injected rate limit per flow trial, each recovered.
    rate(&l["recovery"], 2, 2);
    let kinds: Vec<&String> = l["recovery_by_kind"].as_object().unwrap().keys().collect();
    assert_eq!(kinds, ["rate_limit"]);
    rate(&l["recovery_by_kind"]["rate_limit"]["injected"], 2, 2);
    assert_eq!(
        l["recovery_by_kind"]["rate_limit"]["not_injected"]["den"],
        0
    );
    // The two note trials, one duplicate each.
    rate(&l["duplicate_side_effect_rate"], 2, 6);
    assert_eq!(l["duplicate_side_effects"], 2);
    rate(&l["data_flow_accuracy"], 2, 2);
    // answer#0 not grounded, answer#1 grounded.
    rate(&l["grounded_answer_rate"], 1, 2);
    // Round 1: (50 + 30 + 20) × 2 / 6; rounds 2 and 3: flow and note only, (50 + 30) / 2.
    let series: Vec<(u64, u64, f64)> = l["input_tokens_per_round"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["round"].as_u64().unwrap(),
                r["trials"].as_u64().unwrap(),
                r["mean"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(series.len(), 3);
    assert_eq!((series[0].0, series[0].1), (1, 6));
    assert!((series[0].2 - 200.0 / 6.0).abs() < 1e-9);
    assert_eq!(&series[1..], [(2, 4, 40.0), (3, 4, 40.0)]);
    // 520 tokens over 14 rounds.
    assert!(close(&l["input_tokens_per_round_mean"], 520.0 / 14.0));
    // Model time: flow 3 × 100, note 3 × 60, answer 80, twice each.
    assert!(close(&l["time"]["model_ms"], 1120.0));
    let tool_ms = l["time"]["tool_ms"].as_f64().unwrap();
    assert!(tool_ms >= 0.0);
    assert!(close(
        &l["time"]["tool_share"],
        tool_ms / (1120.0 + tool_ms)
    ));
    // Cases flow (2 of 2), note (0 of 2), answer (1 of 2).
    // k = 1: pass@1 = pass^1 = (1 + 0 + 0.5) / 3 = 0.5.
    // k = 2: pass@2 = (1 + 0 + (1 - C(1,2)/C(2,2))) / 3 = 2/3; pass^2 = (1 + 0 + 0) / 3.
    let pk = l["pass_k"].as_array().unwrap();
    assert_eq!(pk.len(), 2);
    assert_eq!(
        (&pk[0]["k"], &pk[0]["cases"]),
        (&Value::from(1), &Value::from(3))
    );
    assert!(close(&pk[0]["pass_at_k"], 0.5) && close(&pk[0]["pass_hat_k"], 0.5));
    assert!(close(&pk[1]["pass_at_k"], 2.0 / 3.0) && close(&pk[1]["pass_hat_k"], 1.0 / 3.0));
    // One cell: overall has the same loop figures.
    assert_eq!(s["overall"]["loops"], *l);

    // The terminal block (`--wide`: one line per cell).
    assert!(
        stdout.contains(
            "  default × auto: 6 trials, success 50% [19-81], rounds 2.3 (max 3), calls 3.0 (max 6), \
             stop answered 2, max_rounds 4, recovery 100% (rate_limit 2/2), duplicates 33% (2), \
             data flow 100%, grounded 50%, tokens/round 33>40>40, tool time "
        ),
        "{stdout}"
    );
    assert!(stdout.contains(", pass^2 33%\n"), "{stdout}");
}

#[test]
fn csv_junit_and_markdown_carry_the_loop_figures() {
    let (t, _) = run();
    // trials.csv: rounds, tool_calls and stop come last, empty for the single-turn case.
    let trials = t.read("out/trials.csv");
    let mut rows = csv::Reader::from_reader(trials.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        &header[header.len() - 4..],
        ["tags", "rounds", "tool_calls", "stop"]
    );
    let mut seen: Vec<(String, String, String, String, String)> = rows
        .records()
        .map(|r| {
            let r = r.unwrap();
            let n = r.len();
            (
                r[0].to_string(),
                r[5].to_string(),
                r[n - 3].to_string(),
                r[n - 2].to_string(),
                r[n - 1].to_string(),
            )
        })
        .collect();
    seen.sort();
    let row = |c: &str, rep: &str, rounds: &str, calls: &str, stop: &str| {
        (
            c.to_string(),
            rep.to_string(),
            rounds.into(),
            calls.into(),
            stop.into(),
        )
    };
    assert_eq!(
        seen,
        [
            row("answer", "0", "1", "0", "answered"),
            row("answer", "1", "1", "0", "answered"),
            row("flow", "0", "3", "6", "max_rounds"),
            row("flow", "1", "3", "6", "max_rounds"),
            row("note", "0", "3", "3", "max_rounds"),
            row("note", "1", "3", "3", "max_rounds"),
            row("plain", "0", "", "", ""),
            row("plain", "1", "", "", ""),
        ]
    );

    // summary.csv: the loop columns of the cell row (the overall row is the same).
    let summary = t.read("out/summary.csv");
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    let cell = rows.records().next().unwrap().unwrap();
    let get = |name: &str| {
        let i = header.iter().position(|h| h == name).unwrap();
        cell[i].to_string()
    };
    for (name, want) in [
        ("loop_trials", "6"),
        ("task_success", "0.5"),
        ("rounds_mean", "2.333333"),
        ("rounds_p95", "3"),
        ("tool_calls_mean", "3"),
        ("tool_calls_p95", "6"),
        ("stop_answered", "2"),
        ("stop_max_rounds", "4"),
        ("stop_max_tool_calls", "0"),
        ("stop_repeated_call", "0"),
        ("recovery_rate", "1"),
        ("duplicate_side_effect_rate", "0.333333"),
        ("data_flow_accuracy", "1"),
        ("grounded_answer_rate", "0.5"),
        ("input_tokens_per_round", "37.142857"),
    ] {
        assert_eq!(get(name), want, "{name}");
    }
    // The older columns keep their places: the loop ones start after pass_hat_k.
    assert_eq!(header[34], "pass_hat_k");
    assert_eq!(header[35], "loop_trials");

    // junit.xml: properties on loop testcases, the stop reason in a failure's message.
    let junit = t.read("out/junit.xml");
    let flow = &junit[junit.find(r#"<testcase name="flow#0""#).unwrap()..];
    let flow = &flow[..flow.find("</testcase>").unwrap()];
    for p in [
        r#"<property name="rounds" value="3"/>"#,
        r#"<property name="tool_calls" value="6"/>"#,
        r#"<property name="stop" value="max_rounds"/>"#,
    ] {
        assert!(flow.contains(p), "{flow}");
    }
    assert!(!flow.contains("<failure"), "{flow}");
    let note = &junit[junit.find(r#"<testcase name="note#1""#).unwrap()..];
    let note = &note[..note.find("</testcase>").unwrap()];
    assert!(
        note.contains(r#"type="duplicate_side_effect""#)
            && note.contains("(loop: max_rounds after 3 round(s), 3 tool call(s))\""),
        "{note}"
    );
    let plain = &junit[junit.find(r#"<testcase name="plain#0""#).unwrap()..];
    let plain = &plain[..plain.find("/>").unwrap()];
    assert!(!plain.contains("property"), "{plain}");

    // summary.md: the Tool loops table.
    let md = t.read("out/summary.md");
    assert!(
        md.contains(
            "| scripted:script.yaml | default | auto | 6 | 50% (19–81) | 2.3 (max 3) | 3.0 (max 6) | \
             answered 2, max_rounds 4 | 100% (rate_limit 2/2) | 33% (2) | 100% | 50% | pass^2 33% |\n"
        ),
        "{md}"
    );
}

#[test]
fn a_run_without_loop_trials_has_no_loop_figures() {
    let t = Toolgauge::new();
    t.write(
        "plain.yaml",
        "tools:\n  - {name: ping, description: Ping, parameters: {type: object}}\ncases:\n  - {id: plain, kind: should_not_call, prompt: hi}\n",
    );
    let o = t
        .run(&[
            "run",
            "plain.yaml",
            "-t",
            "scripted:no_call",
            "--out",
            "out",
        ])
        .expect_code(OK);
    assert!(!o.stdout.contains("tool loops"), "{}", o.stdout);
    let s: Value = serde_json::from_str(&t.read("out/summary.json")).unwrap();
    assert!(s["cells"][0]["metrics"].get("loops").is_none(), "{s}");
    assert!(s["overall"].get("loops").is_none());
    assert!(!t.read("out/summary.md").contains("Tool loops"));
    assert!(!t.read("out/junit.xml").contains("property"));
    // The loop columns are there, and empty.
    let summary = t.read("out/summary.csv");
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let n = rows.headers().unwrap().len();
    for r in rows.records() {
        let r = r.unwrap();
        assert!((35..n).all(|i| r[i].is_empty()), "{r:?}");
    }
    let trials = t.read("out/trials.csv");
    let mut rows = csv::Reader::from_reader(trials.as_bytes());
    let r = rows.records().next().unwrap().unwrap();
    assert_eq!(
        (&r[r.len() - 3], &r[r.len() - 2], &r[r.len() - 1]),
        ("", "", "")
    );
}

/// Issue 31: a runaway model that calls a failing tool with new arguments every round
/// until `max_rounds` (50: 49 rounds answered, the 50th stopped before it runs) recovers
/// none of its 49 errors; it was reported as "recovery 100% (not_found 49/49)".
#[test]
fn a_runaway_stopped_by_a_limit_recovers_none_of_its_errors() {
    let t = Toolgauge::new();
    t.write(
        "runaway.yaml",
        r#"
tools:
  - name: get_order
    description: Look up an order by id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
cases:
  - id: runaway
    kind: should_call
    prompt: "Where is order A123?"
    mocks: {get_order: [{error: {kind: not_found, message: no such order}}]}
    limits: {max_rounds: 50, max_tool_calls: 100}
    expect: {calls: [{tool: get_order}], stop: max_rounds}
"#,
    );
    let script: String = (1..=50)
        .map(|r| {
            format!(
                "  - {{case: runaway, round: {r}, calls: [{{name: get_order, arguments: {{order_id: A{r}}}}}]}}\n"
            )
        })
        .collect();
    t.write("script.yaml", format!("responses:\n{script}"));
    let o = t
        .run(&[
            "run",
            "runaway.yaml",
            "-t",
            "scripted:script.yaml",
            "--out",
            "out",
            "--no-color",
            "--wide",
        ])
        .expect_code(OK);
    assert!(
        o.stdout.contains("recovery 0% (not_found 0/49)"),
        "{}",
        o.stdout
    );
    let s: Value = serde_json::from_str(&t.read("out/summary.json")).unwrap();
    let l = &s["cells"][0]["metrics"]["loops"];
    assert_eq!(l["stop"]["max_rounds"], 1, "{l}");
    rate(&l["recovery"], 0, 49);
    rate(&l["recovery_by_kind"]["not_found"]["all"], 0, 49);
}

/// Issue 31: a call id reused across rounds is sent back under an id of its own, and the
/// run says so (summary.json `warnings`, the terminal's warnings block).
#[test]
fn a_call_id_reused_across_rounds_is_renamed_and_the_run_warns() {
    let t = Toolgauge::new();
    t.write(
        "reuse.yaml",
        r#"
tools:
  - name: get_order
    description: Look up an order by id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
cases:
  - id: reuse
    kind: should_call
    prompt: "Where are orders A1 and A2?"
    mocks: {get_order: [{result: {status: shipped}}]}
    expect: {calls: [{tool: get_order}]}
"#,
    );
    t.write(
        "script.yaml",
        r#"
responses:
  - {case: reuse, round: 1, calls: [{id: c1, name: get_order, arguments: {order_id: A1}}]}
  - {case: reuse, round: 2, calls: [{id: c1, name: get_order, arguments: {order_id: A2}}]}
  - {case: reuse, round: 3, text: "Both orders are shipped."}
"#,
    );
    let o = t
        .run(&[
            "run",
            "reuse.yaml",
            "-t",
            "scripted:script.yaml",
            "--out",
            "out",
            "--no-color",
        ])
        .expect_code(OK);
    let warning = "round 2: call id `c1` was already used in round 1; call 1 (`get_order`) was \
                   given the id `call_r1_0` so that its result is not paired with the earlier call";
    assert!(o.stdout.contains("1 trial had warnings"), "{}", o.stdout);
    // The terminal wraps the line; its start is on the first.
    assert!(
        o.stdout
            .contains("reuse [default × auto]: round 2: call id `c1` was already used"),
        "{}",
        o.stdout
    );
    let s: Value = serde_json::from_str(&t.read("out/summary.json")).unwrap();
    assert_eq!(s["warnings"][0]["warnings"][0], warning, "{s}");
    let trial: Value =
        serde_json::from_str(t.read("out/trials.jsonl").lines().next().unwrap()).unwrap();
    let rounds = trial["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds[1]["response"]["tool_calls"][0]["id"], "call_r1_0");
    assert_eq!(trial["verdict"], "pass", "{trial}");
}
