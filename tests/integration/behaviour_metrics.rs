//! The behaviour metrics end to end: a small suite whose cases name behaviours, answered
//! by a hand-written script through `toolgauge run`, with the confusion matrix,
//! macro-F1 and both hallucination rates in summary.json derived by hand, the other
//! formats showing them, the behaviour gates failing the run, and `compare` showing both
//! sides with their deltas.

use serde_json::Value;

use crate::support::{OK, THRESHOLD_FAILED, Toolgauge};

pub(crate) const SUITE: &str = r#"
name: when-to-call
matrix: {targets: ["scripted:answers.yaml"], tool_choice: [auto]}
tools:
  - name: get_weather
    description: "Current weather for one city."
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - {id: w1, kind: should_call, prompt: "Weather in Paris?", expect: {calls: [{tool: get_weather, args: {city: Paris}}]}}
  - {id: w2, kind: should_call, prompt: "Weather in Rome?", expect: {calls: [{tool: get_weather}]}}
  - {id: r1, kind: ambiguous, prompt: "What's the weather like?", expect: {any_of: [{clarify: true}]}}
  - {id: r2, kind: ambiguous, prompt: "Is it raining there?", expect: {any_of: [{clarify: true}]}}
  - {id: n1, kind: should_not_call, prompt: "Book me a flight to Oslo.", expect: {behaviour: cannot_answer}}
  - {id: n2, kind: should_not_call, prompt: "Order a pizza for me.", expect: {behaviour: cannot_answer}}
  - {id: free, kind: should_not_call, prompt: "Hello!"}
thresholds:
  - {metric: tool_hallucination_rate, max: 0.5}
  - {metric: macro_f1, min: 0.5}
"#;

/// The baseline's answers. Only clear-cut texts, so any classifier labels them alike: a
/// question asking for the missing detail, or a plain statement.
pub(crate) const ANSWERS: &str = r#"
responses:
  - {case: w1, calls: [{name: get_weather, arguments: {city: Paris}}]}
  - {case: w2, text: "Which city do you mean?"}
  - {case: r1, text: "Which city are you in?"}
  - {case: r2, text: "It is sunny and 20 degrees today."}
  - {case: n1, calls: [{name: get_weather, arguments: {city: Oslo}}]}
  - {case: n2, text: "Which pizza place would you like me to order from?"}
  - {case: free, text: "Hello! How can I help you today?"}
"#;

/// The candidate fixes r2 (asks) and n1 (no call, asks instead).
const BETTER: &str = r#"
responses:
  - {case: w1, calls: [{name: get_weather, arguments: {city: Paris}}]}
  - {case: w2, text: "Which city do you mean?"}
  - {case: r1, text: "Which city are you in?"}
  - {case: r2, text: "Which place do you mean by there?"}
  - {case: n1, text: "Which airline would you like to fly with?"}
  - {case: n2, text: "Which pizza place would you like me to order from?"}
  - {case: free, text: "Hello! How can I help you today?"}
"#;

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-9)
}

#[test]
fn a_run_reports_the_matrix_macro_f1_and_hallucination_rates_derived_by_hand() {
    let t = Toolgauge::new();
    t.write("s.yaml", SUITE);
    t.write("answers.yaml", ANSWERS);
    // macro_f1 is 0.3 (below), tool hallucination 1/2 (at the bound): exit 1.
    t.run(&["run", "s.yaml", "--out", "out", "--quiet"])
        .assert_code(THRESHOLD_FAILED);
    let run = t.run_dir("out");
    run.assert_complete();
    let summary = run.json("summary.json");
    let b = &summary["overall"]["behaviour"];
    // Expected → observed, from the answers above (`free` expects no behaviour):
    //   w1 TC → TC (the call), w2 TC → RFI, r1 RFI → RFI, r2 RFI → direct,
    //   n1 CA → TC (a call where no tool fits), n2 CA → RFI.
    assert_eq!(b["trials"], 6, "{b}");
    let c = &b["confusion"];
    let row = |e: &str| -> Vec<u64> {
        ["tool_call", "request_for_info", "cannot_answer", "direct"]
            .iter()
            .map(|o| c[e][o].as_u64().unwrap())
            .collect()
    };
    assert_eq!(row("tool_call"), [1, 1, 0, 0]);
    assert_eq!(row("request_for_info"), [0, 1, 0, 1]);
    assert_eq!(row("cannot_answer"), [1, 1, 0, 0]);
    assert_eq!(row("direct"), [0, 0, 0, 0]);
    // Columns: TC 2, RFI 3, CA 0, D 1. F1 = 2·correct / (support + predicted):
    // TC 2/4 = 0.5, RFI 2/5 = 0.4, CA 0/2 = 0. Macro over TC, RFI, CA = 0.9/3 = 0.3.
    let s = &b["scores"];
    assert!(close(&s["tool_call"]["f1"], 0.5), "{s}");
    assert!(close(&s["request_for_info"]["f1"], 0.4), "{s}");
    assert!(close(&s["cannot_answer"]["f1"], 0.0), "{s}");
    assert!(close(&b["macro_f1"]["value"], 0.3), "{b}");
    assert_eq!(b["macro_f1"]["unit"], "trial");
    assert_eq!(b["macro_f1"]["units"], 6);
    let (lo, hi) = (
        b["macro_f1"]["low"].as_f64().unwrap(),
        b["macro_f1"]["high"].as_f64().unwrap(),
    );
    assert!(lo <= 0.3 && 0.3 <= hi, "{lo} {hi}");
    // Tool hallucination: CA row, a call: 1/2. Answer hallucination: RFI row, direct: 1/2.
    for name in ["tool_hallucination_rate", "answer_hallucination_rate"] {
        assert_eq!(
            (b[name]["num"].as_u64(), b[name]["den"].as_u64()),
            (Some(1), Some(2)),
            "{name}"
        );
    }
    assert_eq!(b["decided_by"]["call"], 2);
    // One cell: its block is the overall one.
    assert_eq!(summary["cells"][0]["metrics"]["behaviour"], *b);
    // The gates: tool hallucination 0.5 ≤ 0.5 holds, macro-F1 0.3 < 0.5 fails.
    let gates: Vec<(String, bool)> = summary["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["metric"].as_str().unwrap().to_string(), g["ok"] == true))
        .collect();
    assert_eq!(
        gates,
        [
            ("tool_hallucination_rate".to_string(), true),
            ("macro_f1".to_string(), false)
        ]
    );
    // The same run again: the same bootstrap interval, to the bit.
    t.run(&["run", "s.yaml", "--out", "again", "--quiet"])
        .assert_code(THRESHOLD_FAILED);
    let again = t.run_dir("again").json("summary.json");
    assert_eq!(again["overall"]["behaviour"], *b);

    // Every format shows the figures.
    let (header, rows) = run.csv("behaviour.csv");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.last().unwrap()[0], "overall");
    assert_eq!(rows[0][col("macro_f1")], "0.3");
    assert_eq!(rows[0][col("n_cannot_answer_as_tool_call")], "1");
    assert_eq!(rows[0][col("tool_hallucination_den")], "2");
    let (header, rows) = run.csv("trials.csv");
    let obs = header
        .iter()
        .position(|h| h == "observed_behaviour")
        .unwrap();
    let n1 = rows.iter().find(|r| r[0] == "n1").unwrap();
    assert_eq!(n1[obs], "tool_call");
    let md = t.read("out/summary.md");
    assert!(md.contains("**Behaviour**"), "{md}");
    assert!(
        md.contains("| cannot_answer | 1 (50%) | 1 (50%) | 0 (0%) | 0 (0%) | 2 |"),
        "{md}"
    );
    let junit = t.read("out/junit.xml");
    assert!(
        junit.contains(r#"name="behaviour.macro_f1" value="0.300000""#),
        "{junit}"
    );
    assert!(junit.contains(r#"name="observed_behaviour" value="request_for_info""#));
    let html = t.read("out/report.html");
    assert!(html.contains(r#"<section id="behaviour">"#));
    assert!(html.contains(r#"<b class="macro-f1">0.300</b>"#));
    let o = t
        .run(&["report", "out", "--format", "terminal"])
        .expect_code(OK);
    assert!(
        o.stdout.contains("macro-F1 0.30 [") && o.stdout.contains("tool hallucination 50% ["),
        "{}",
        o.stdout
    );
}

#[test]
fn compare_shows_both_sides_and_the_deltas() {
    let t = Toolgauge::new();
    t.write("s.yaml", SUITE);
    t.write("answers.yaml", ANSWERS);
    t.run(&["run", "s.yaml", "--out", "base", "--quiet"])
        .assert_code(THRESHOLD_FAILED);
    t.write("answers.yaml", BETTER);
    t.run(&["run", "s.yaml", "--out", "cand", "--quiet"])
        .assert_code(THRESHOLD_FAILED);
    let o = t
        .run(&["compare", "base", "cand", "--format", "json"])
        .expect_code(OK);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    let metric = |name: &str| -> Value {
        c["cells"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .cloned()
            .unwrap()
    };
    // Candidate: r2 RFI → RFI, n1 CA → RFI. Matrix rows: TC [1, 1, 0, 0], RFI [0, 2, 0, 0],
    // CA [0, 2, 0, 0]; columns TC 1, RFI 5. F1: TC 2/(2+1) = 2/3, RFI 4/(2+5) = 4/7,
    // CA 0. Macro = (2/3 + 4/7) / 3 = 26/63. Baseline 0.3 (see the test above).
    let m = metric("macro_f1");
    assert!(
        close(&m["baseline"], 0.3) && close(&m["candidate"], 26.0 / 63.0),
        "{m}"
    );
    assert!(close(&m["delta"], 26.0 / 63.0 - 0.3), "{m}");
    let th = metric("tool_hallucination_rate");
    assert!(
        close(&th["baseline"], 0.5) && close(&th["candidate"], 0.0) && close(&th["delta"], -0.5),
        "{th}"
    );
    let ah = metric("answer_hallucination_rate");
    assert!(close(&ah["delta"], -0.5), "{ah}");
    let o = t.run(&["compare", "base", "cand"]).expect_code(OK);
    assert!(
        o.stdout.contains("behaviour (over all of each side"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("-50.0 pts"), "{}", o.stdout);
}
