//! Trial warnings reach the reports: the shipped weather suite replayed from its
//! cassette, edited so that some responses carry implausible usage. Each such trial is
//! scored with its usage counted offline and keeps a warning; the terminal counts them
//! and names the first, `summary.md` counts them, `summary.json` lists them and
//! `report.html` shows each trial's. `report` re-renders the same from the journal.

use serde_json::Value;

use crate::support::{OK, Toolgauge, repo_root};

/// The shipped suite and its cassette under `t` (`suites/`, `fixtures/`), the cassette's
/// `beijing-today` entries (2 variants × 2 repeats) answering `output_tokens: 1e30`
/// and the first `shanghai-umbrella` entry a negative `input_tokens`.
fn hostile_weather(t: &Toolgauge) {
    std::fs::create_dir_all(t.path().join("suites")).unwrap();
    std::fs::create_dir_all(t.path().join("fixtures")).unwrap();
    std::fs::copy(
        repo_root().join("suites/weather.yaml"),
        t.path().join("suites/weather.yaml"),
    )
    .unwrap();
    let text =
        std::fs::read_to_string(repo_root().join("fixtures/weather.cassette.jsonl")).unwrap();
    let (mut huge, mut negative) = (0, 0);
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let Ok(e) = serde_json::from_str::<Value>(l) else {
                return l.to_string();
            };
            match e["case_id"].as_str() {
                Some("beijing-today") => {
                    huge += 1;
                    l.replacen("\"output_tokens\":15", "\"output_tokens\":1e30", 1)
                }
                Some("shanghai-umbrella") if negative == 0 => {
                    negative += 1;
                    l.replacen("\"input_tokens\":", "\"input_tokens\":-", 1)
                }
                _ => l.to_string(),
            }
        })
        .collect();
    assert_eq!((huge, negative), (4, 1));
    t.write("fixtures/weather.cassette.jsonl", edited.join("\n") + "\n");
}

const HUGE: &str = "implausible usage from a stored response ignored: `output_tokens` is 1e+30, above the cap of 1000000000 tokens per request";

#[test]
fn implausible_usage_in_a_cassette_shows_in_every_report() {
    let t = Toolgauge::new();
    hostile_weather(&t);
    let o = t.run_env(
        &[("COLUMNS", "300")],
        &["run", "suites/weather.yaml", "--out", "out", "--no-color"],
    );
    o.assert_code(OK);
    let block = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .skip_while(|l| !l.contains("had warnings"))
            .take_while(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let shown = block(&o.stdout);
    assert_eq!(shown.len(), 3, "{}", o.stdout);
    assert_eq!(
        shown[0],
        "5 trials had warnings (report.html shows each trial's):"
    );
    // The same text in the 4 Beijing trials: one line, naming the first trial.
    assert_eq!(
        shown[1],
        format!("  beijing-today [vague × auto #0] and 3 others: {HUGE}")
    );
    assert!(
        shown[2].starts_with(
            "  shanghai-umbrella [vague × auto #0]: implausible usage from a stored response ignored: `input_tokens` is -"
        ) && shown[2].ends_with(", a negative count"),
        "{}",
        shown[2]
    );

    let dir = t.run_dir("out");
    let md = t.read("out/summary.md");
    assert!(
        md.contains(&format!(
            "⚠️ 5 trials had warnings (report.html shows each trial's); the first, `beijing-today` (openai:gpt-4o-mini × vague × auto): {HUGE}"
        )),
        "{md}"
    );
    let summary = dir.json("summary.json");
    let listed: Vec<(String, String, u64)> = summary["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["case_id"].as_str().unwrap().to_string(),
                w["cell"].as_str().unwrap().to_string(),
                w["repeat"].as_u64().unwrap(),
            )
        })
        .collect();
    let cell = |v: &str| format!("openai:gpt-4o-mini × {v} × auto");
    let mut expected = vec![
        ("beijing-today".to_string(), cell("vague"), 0),
        ("beijing-today".to_string(), cell("vague"), 1),
        ("beijing-today".to_string(), cell("clear"), 0),
        ("beijing-today".to_string(), cell("clear"), 1),
        ("shanghai-umbrella".to_string(), cell("vague"), 0),
    ];
    let mut got = listed.clone();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    // Each warned trial's usage was counted offline instead.
    for x in dir.trials() {
        let warned = x["response"]["warnings"].as_array().is_some();
        let beijing = x["case_id"] == "beijing-today";
        let shanghai0 =
            x["case_id"] == "shanghai-umbrella" && x["variant"] == "vague" && x["repeat"] == 0;
        assert_eq!(warned, beijing || shanghai0, "{x}");
        if warned {
            assert_eq!(x["response"]["usage"]["estimated"], true, "{x}");
        }
    }

    let html = t.read("out/report.html");
    assert!(html.contains("⚠ 5 trials had warnings"));
    assert_eq!(
        html.matches(r#"title="this trial has warnings""#).count(),
        5
    );

    // `report` reads the warnings back from the journal and shows the same.
    let again = t.run_env(&[("COLUMNS", "300")], &["report", "out", "--no-color"]);
    again.assert_code(OK);
    assert_eq!(block(&again.stdout), shown);
}
