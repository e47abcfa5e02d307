//! Sampling values outside their range are refused where they are given: a suite's
//! `sampling` (located, every problem at once), the flags that override it, and the
//! settings of a `run.json` being resumed. All exit 2 with a hint and make no run.

use crate::support::{BAD_INPUT, OK, Toolgauge, fixture_text};

/// The weather fixture with `sampling` set to `lines`, inserted after `name:` on line 2
/// (so `sampling:` is line 3 and its first key line 4).
fn with_sampling(t: &Toolgauge, lines: &str) -> String {
    let text = fixture_text("weather.yaml");
    let (head, rest) = text.split_once("\nname: weather\n").unwrap();
    assert_eq!(head.lines().count(), 1, "{head}");
    t.write(
        "s.yaml",
        format!("{head}\nname: weather\nsampling:\n{lines}{rest}"),
    );
    "s.yaml".to_string()
}

#[test]
fn a_suite_with_a_non_finite_or_out_of_range_temperature_is_refused_with_its_line() {
    for (value, why) in [
        (".nan", "`temperature` is NaN: not a finite number"),
        (".inf", "`temperature` is inf: not a finite number"),
        ("-.inf", "`temperature` is -inf: not a finite number"),
        ("-0.1", "`temperature` is -0.1: outside 0 to 2"),
        ("2.5", "`temperature` is 2.5: outside 0 to 2"),
    ] {
        let t = Toolgauge::new();
        let suite = with_sampling(
            &t,
            &format!("  temperature: {value}\n  max_output_tokens: 0\n"),
        );
        for cmd in [&["validate", &suite][..], &["run", &suite, "--out", "out"]] {
            let o = t.run(cmd);
            o.assert_code(BAD_INPUT);
            // Both problems at once, each where it is: lines 4 and 5, at the value.
            o.stderr_has(&[
                &format!("error: s.yaml:4:16: {why}"),
                "field: sampling.temperature",
                "hint: a temperature is a number from 0 to 2",
                "s.yaml:5:22: `max_output_tokens` is 0: that leaves no room for an answer",
                "field: sampling.max_output_tokens",
                "hint: give the most tokens one answer may use, at least 1",
                "2 problems found; the suite was not loaded",
            ]);
            assert!(!t.path().join("out").exists());
        }
    }
}

#[test]
fn values_in_range_load_and_reach_run_json() {
    let t = Toolgauge::new();
    let suite = with_sampling(&t, "  temperature: 2\n  max_output_tokens: 1\n");
    t.run(&["validate", &suite]).assert_code(OK);
    t.run(&["run", &suite, "--out", "out", "--quiet"])
        .assert_code(OK);
    let meta = t.run_dir("out").json("run.json");
    assert_eq!(meta["settings"]["temperature"], 2.0);
    assert_eq!(meta["settings"]["max_tokens"], 1);
}

#[test]
fn flags_outside_their_range_are_refused() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    for (flags, says, hint) in [
        (
            &["--temperature", "nan"][..],
            "error: --temperature is NaN: not a finite number",
            "hint: a temperature is a number from 0 to 2",
        ),
        (
            &["--temperature", "inf"],
            "error: --temperature is inf: not a finite number",
            "hint: a temperature is a number from 0 to 2",
        ),
        (
            // A negative value is the flag's value, not another flag.
            &["--temperature", "-1"],
            "error: --temperature is -1: outside 0 to 2",
            "hint: a temperature is a number from 0 to 2",
        ),
        (
            &["--temperature", "2.0001"],
            "error: --temperature is 2.0001: outside 0 to 2",
            "hint: a temperature is a number from 0 to 2",
        ),
        (
            &["--max-output-tokens", "0"],
            "error: --max-output-tokens is 0: that leaves no room for an answer",
            "hint: give the most tokens one answer may use, at least 1",
        ),
        (
            &["--max-output-tokens", "-3"],
            "invalid value '-3' for '--max-output-tokens <N>'",
            "",
        ),
    ] {
        let mut args = vec!["run", &suite, "--out", "out"];
        args.extend_from_slice(flags);
        let o = t.run(&args);
        o.assert_code(BAD_INPUT);
        o.stderr_has(&[says, hint]);
        assert!(!t.path().join("out").exists(), "{flags:?}");
    }
}

#[test]
fn resume_refuses_an_edited_temperature_in_run_json() {
    let t = Toolgauge::new();
    let suite = with_sampling(&t, "  temperature: 0.5\n");
    t.run(&["run", &suite, "--out", "out", "--quiet"])
        .assert_code(OK);
    let text = t.read("out/run.json");
    t.write(
        "out/run.json",
        text.replacen("\"temperature\": 0.5", "\"temperature\": -7.0", 1),
    );
    let journal = t.read("out/trials.jsonl");
    let o = t.run(&["run", "--resume", "out"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "error: `settings.temperature` of `out/run.json` is -7: outside 0 to 2",
        "hint: a temperature is a number from 0 to 2",
    ]);
    assert_eq!(t.read("out/trials.jsonl"), journal);
}
