//! The scripted models made for wording searches, run from the command line:
//! `scripted:lexical` scores each wording by the words it shares with the requests, and
//! `scripted:coin-N` is accepted as a target name.

use serde_json::Value;

use crate::support::{BAD_INPUT, OK, Toolgauge};

/// Two wordings of `get_weather`: only `clear` holds "forecast" and "tomorrow".
const SUITE: &str = r#"
tools:
  - name: get_weather
    variants:
      vague: "Weather for a city."
      clear: "Weather forecast for a city, today or tomorrow."
    parameters:
      type: object
      properties:
        city: {type: string, description: "City name"}
      required: [city]
  - name: get_time
    description: "Current local time in a timezone."
    parameters:
      type: object
      properties:
        zone: {type: string, description: "IANA timezone"}
      required: [zone]
cases:
  - id: paris-forecast
    kind: should_call
    prompt: "What's the forecast for Paris?"
    expect:
      calls:
        - tool: get_weather
          args: {city: Paris}
  - id: rome-forecast
    kind: should_call
    prompt: "Forecast for Rome this weekend?"
    expect:
      calls:
        - tool: get_weather
          args: {city: Rome}
  - id: berlin-weather
    kind: should_call
    prompt: "How is the weather in Berlin?"
    expect:
      calls:
        - tool: get_weather
          args: {city: Berlin}
  - id: plans-tomorrow
    kind: should_not_call
    prompt: "Any ideas for my plans tomorrow?"
"#;

#[test]
fn scripted_lexical_scores_each_wording_by_the_words_it_shares_with_the_prompts() {
    let t = Toolgauge::new();
    t.write("s.yaml", SUITE);
    t.run(&["run", "s.yaml", "-t", "scripted:lexical", "--out", "run"])
        .expect_code(OK);
    let summary = t.run_dir("run").json("summary.json");
    let accuracy = |variant: &str| -> (u64, u64) {
        let cell = summary["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == variant)
            .unwrap_or_else(|| panic!("no cell of {variant}"));
        let a = &cell["metrics"]["accuracy"];
        (a["num"].as_u64().unwrap(), a["den"].as_u64().unwrap())
    };
    // vague: no "forecast", so both forecast cases get a text answer (berlin-weather and
    // plans-tomorrow pass); clear: the forecasts pass, but "tomorrow" now draws a call
    // in the case that needs none.
    assert_eq!(accuracy("vague"), (2, 4));
    assert_eq!(accuracy("clear"), (3, 4));
    let trials = t.run_dir("run").trials();
    let mut failed: Vec<(&str, &str)> = trials
        .iter()
        .filter(|r| r["verdict"] != "pass")
        .map(|r| {
            (
                r["case_id"].as_str().unwrap(),
                r["variant"].as_str().unwrap(),
            )
        })
        .collect();
    failed.sort_unstable();
    assert_eq!(
        failed,
        [
            ("paris-forecast", "vague"),
            ("plans-tomorrow", "clear"),
            ("rome-forecast", "vague"),
        ]
    );
}

#[test]
fn scripted_coin_takes_a_seed_and_a_mistyped_one_is_refused_with_the_list() {
    let t = Toolgauge::new();
    t.write("s.yaml", SUITE);
    t.run(&["run", "s.yaml", "-t", "scripted:coin-7", "--out", "run"])
        .expect_code(OK);
    let summary: Value = t.run_dir("run").json("summary.json");
    assert_eq!(summary["overall"]["accuracy"]["den"], 8);
    t.run(&["run", "s.yaml", "-t", "scripted:coin-x", "--out", "bad"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "unknown scripted behaviour `coin-x`",
            "lexical, coin,",
            "coin-N",
        ]);
}
