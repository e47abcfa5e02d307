//! `toolgauge validate`: ok for a good suite, every problem of every bad file otherwise.

use crate::support::{BAD_INPUT, OK, Toolgauge};

#[test]
fn validate_good_suite_prints_ok_and_exits_0() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let o = t.run(&["validate", &suite]).expect_code(OK);
    assert_eq!(
        o.stdout.trim_end(),
        "weather.yaml: ok (1 tools, 4 cases, variants: vague, clear)"
    );
    assert_eq!(o.stderr, "");
}

#[test]
fn validate_reports_each_bad_file_and_still_checks_the_good_one() {
    let t = Toolgauge::new();
    let unknown_tool = t.fixture("bad/unknown_tool.yaml");
    let good = t.fixture("weather.yaml");
    let duplicate = t.fixture("bad/duplicate_id.yaml");
    let unknown_key = t.fixture("bad/unknown_key_top.yaml");
    let o = t
        .run(&["validate", &unknown_tool, &good, &duplicate, &unknown_key])
        .expect_code(BAD_INPUT);
    o.stdout_has(&["weather.yaml: ok"]);
    o.stderr_has(&[
        "error: unknown_tool.yaml:15:19: expectation names unknown tool `get_wether`",
        "error: duplicate_id.yaml:19:9: duplicate case id `beijing`",
        "error: unknown_key_top.yaml:16:1: unknown field `matrx`",
    ]);
    assert_eq!(
        o.stderr.matches("the suite was not loaded").count(),
        3,
        "one report per bad file:\n{}",
        o.stderr
    );
    // Reported in the order given.
    let pos = |s: &str| o.stderr.find(s).unwrap();
    assert!(pos("unknown_tool.yaml") < pos("duplicate_id.yaml"));
    assert!(pos("duplicate_id.yaml") < pos("unknown_key_top.yaml"));
}

#[test]
fn validate_reports_every_problem_in_one_file() {
    let t = Toolgauge::new();
    let broken = crate::support::fixture_text("bad/unknown_tool.yaml")
        + "thresholds:\n  - { metric: acuracy, min: 0.9 }\n";
    t.write("two_problems.yaml", broken);
    let o = t
        .run(&["validate", "two_problems.yaml"])
        .expect_code(BAD_INPUT);
    o.stderr_has(&[
        "two_problems.yaml:15:19: expectation names unknown tool `get_wether`",
        "two_problems.yaml:17:15: unknown metric `acuracy`",
        "2 problems found; the suite was not loaded",
    ]);
}
