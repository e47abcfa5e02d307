//! `report.html` opened in headless Chromium (Debian's `chromium` package, driven by
//! `playwright-core` from `tests/browser/`): no console errors, no requests, the charts
//! and trial table present and working, a screenshot taken, and hostile text shown as
//! text without ever running.
//!
//! `.ci/run` installs Chromium and the npm package and sets `TOOLGAUGE_REQUIRE_BROWSER=1`,
//! which turns a missing browser into a failure. Elsewhere the tests say what is missing
//! and pass without a browser, so `cargo test` still works on a bare machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{OK, Toolgauge, loop_run, repo_root};

/// What the browser run needs, or why it cannot run here.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let scripts = repo_root().join("tests/browser");
    let missing = if !chromium.is_file() {
        Some(format!("no Chromium at {}", chromium.display()))
    } else if !scripts.join("node_modules/playwright-core").is_dir() {
        Some("playwright-core is not installed in tests/browser".to_string())
    } else if Command::new("node").arg("--version").output().is_err() {
        Some("node is not on PATH".to_string())
    } else {
        None
    };
    match missing {
        None => Some((chromium, scripts)),
        Some(why) => {
            let how = "install them with `tests/install-peers.sh` (as .ci/run does)";
            if crate::support::peer_required("TOOLGAUGE_REQUIRE_BROWSER") {
                panic!("browser test required but {why}; {how}");
            }
            eprintln!("skipping the browser test: {why}; {how}");
            None
        }
    }
}

/// Open `report` in Chromium; the screenshot goes to `shots` (kept after the test, under
/// Cargo's target directory, for CI to upload).
fn open(report: &Path, shots: &Path) -> Option<Value> {
    let (chromium, scripts) = browser()?;
    std::fs::create_dir_all(shots).expect("failed to create the screenshot directory");
    let out = Command::new("node")
        .arg(scripts.join("check_report.mjs"))
        .arg(report)
        .arg(shots)
        .env("CHROMIUM", &chromium)
        .current_dir(&scripts)
        .output()
        .expect("failed to start node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "check_report.mjs failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let v: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("check_report.mjs printed no JSON ({e}):\n{stdout}\n{stderr}"));
    assert!(
        v.get("failure").is_none(),
        "browser run failed: {}",
        v["failure"]
    );
    let png = std::fs::read(v["screenshot"].as_str().expect("a screenshot path"))
        .expect("the screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a real screenshot"
    );
    eprintln!("screenshot: {}", v["screenshot"]);
    Some(v)
}

/// The page behaved: nothing logged, thrown, asked or fetched, and nothing executed.
fn assert_quiet(v: &Value) {
    for key in ["console_errors", "page_errors", "dialogs", "requests"] {
        assert_eq!(v[key], serde_json::json!([]), "{key}: {}", v[key]);
    }
    assert_eq!(v["pwned"], false, "a payload ran");
    assert_eq!(v["title"], v["title_after"], "the title changed");
}

fn run_dir_trials(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .expect("trials.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a trial line"))
        .collect()
}

fn shots_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("browser")
        .join(name)
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn hostile_report_shows_every_payload_as_text_and_runs_none() {
    let t = Toolgauge::new();
    let suite = t.fixture("xss.yaml");
    t.fixture("xss.cassette.jsonl");
    t.run(&["run", &suite, "--out", "out", "--quiet"])
        .assert_code(OK);
    let dir = t.path().join("out");
    let Some(v) = open(&dir.join("report.html"), &shots_dir("xss")) else {
        return;
    };
    assert_quiet(&v);
    let name = "xss <script>window.pwned=1;alert(1)</script>";
    assert_eq!(v["title"], format!("toolgauge: {name}"));

    let trials = run_dir_trials(&dir);
    let page = &v["page"];
    assert_eq!(page["trial_rows"], trials.len());
    assert_eq!(page["scripts"], 2, "only the page's data block and script");
    assert_eq!(page["images"], 0);
    let shown = page["body_text"].as_str().unwrap();
    // Suite, variant and case texts are on the page before any transcript opens.
    for payload in [
        name,
        "\"><img src=x onerror=\"window.pwned=1;alert(1)\">",
        "<b>bold</b>",
        "<img src=x onerror=\"window.pwned=1;alert(1)\"> weather",
        "script-<script>alert(1)</script>",
    ] {
        assert!(shown.contains(payload), "{payload:?} not shown as text");
    }

    // Every transcript opens (built lazily) and shows the model's payloads verbatim.
    let tr = &v["transcripts"];
    assert_eq!(tr["open"], trials.len());
    assert_eq!(tr["scripts"], 2);
    assert_eq!(tr["images"], 0);
    let text = tr["text"].as_str().unwrap();
    for payload in [
        "<script>window.pwned=1;alert(1)</script>",
        "<svg onload=alert(1)>",
        "<img src=x onerror=alert(1)>",
        "<iframe src=javascript:alert(1)>",
        r#"{"city": "</script><script>window.pwned=1</script>"#,
    ] {
        assert!(text.contains(payload), "{payload:?} not in any transcript");
    }

    // Of the 16 trials, the cassette's answers fail 8: broken-json's 4, and 2 each of
    // img-onerror and the script case.
    let failed = trials.iter().filter(|t| t["verdict"] == "fail").count();
    assert_eq!((failed, trials.len()), (8, 16));
    assert_eq!(v["filtered"]["visible"], failed, "verdict filter");
    assert_eq!(v["sorted"], 1, "a column sort marks its header");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn shipped_weather_report_draws_its_charts() {
    let t = Toolgauge::new();
    let suite = repo_root().join("suites/weather.yaml");
    t.run(&["run", suite.to_str().unwrap(), "--out", "out", "--quiet"])
        .assert_code(OK);
    let dir = t.path().join("out");
    let Some(v) = open(&dir.join("report.html"), &shots_dir("weather")) else {
        return;
    };
    assert_quiet(&v);
    let page = &v["page"];
    for section in [
        "summary",
        "cells",
        "variants",
        "confusion-h",
        "invalid",
        "ungrounded",
        "trials-h",
    ] {
        assert!(
            page["sections"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == section),
            "section {section} missing: {}",
            page["sections"]
        );
    }
    assert!(page["svg_charts"].as_u64().unwrap() >= 2, "charts: {page}");
    assert!(page["svg_marks"].as_u64().unwrap() > 20, "charts are drawn");
    assert!(page["confusion_cells"].as_u64().unwrap() > 0);
    // One row per case that passes every scored repeat under one wording and none under
    // the other (docs/reports.md), counted here from the journal.
    let trials = run_dir_trials(&dir);
    let mut by_case: std::collections::BTreeMap<(String, String), [u32; 2]> = Default::default();
    for t in trials.iter().filter(|t| t["verdict"] != "error") {
        let key = (t["case_id"].to_string(), t["variant"].to_string());
        by_case.entry(key).or_default()[usize::from(t["verdict"] == "pass")] += 1;
    }
    let all = |case: &str, variant: &str, pass: bool| {
        by_case
            .get(&(format!("{case:?}"), format!("{variant:?}")))
            .is_some_and(|[fail, passed]| if pass { *fail == 0 } else { *passed == 0 })
    };
    let cases: std::collections::BTreeSet<String> = trials
        .iter()
        .map(|t| t["case_id"].as_str().unwrap().to_string())
        .collect();
    let flips = cases
        .iter()
        .filter(|c| {
            (all(c, "vague", true) && all(c, "clear", false))
                || (all(c, "clear", true) && all(c, "vague", false))
        })
        .count();
    assert!(flips > 0, "the shipped weather run has vague → clear flips");
    // The table has no <tbody> of its own: the browser puts its header row in the one it adds.
    assert_eq!(
        page["flip_rows"],
        flips + 1,
        "vague → clear flips and the header"
    );
    assert_eq!(page["trial_rows"], run_dir_trials(&dir).len());
    assert_eq!(v["transcripts"]["open"], page["trial_rows"]);
    // Both wordings of get_weather side by side; the control tool listed once.
    let shown = page["body_text"].as_str().unwrap();
    assert!(shown.contains("Tool descriptions"));
    assert!(shown.contains("Weather.") && shown.contains("Look up live weather for ONE city"));
    assert!(shown.contains("Worded the same in every variant: get_stock_price"));
}

/// The label of a trial's cell in the page.
fn cell_of(trial: &Value) -> String {
    format!(
        "{} × {} × {}",
        trial["target"].as_str().unwrap(),
        trial["variant"].as_str().unwrap(),
        trial["tool_choice"].as_str().unwrap()
    )
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn loop_report_shows_each_round_and_counts_how_episodes_stopped() {
    let t = loop_run();
    let dir = t.path().join("out");
    let Some(v) = open(&dir.join("report.html"), &shots_dir("loops")) else {
        return;
    };
    assert_quiet(&v);
    let trials = run_dir_trials(&dir);
    let loops = &v["loops"];
    assert!(loops.is_object(), "the page has a tool-loop section: {v}");

    // The stop-reason table: one row per cell with loop trials and overall, each count
    // equal to the journal's.
    let mut want: std::collections::BTreeMap<String, [u64; 6]> = Default::default();
    for tr in trials.iter().filter(|tr| tr.get("episode").is_some()) {
        let col = match tr["episode"]["stop"].as_str() {
            Some("answered") => 1,
            Some("max_rounds") => 2,
            Some("max_tool_calls") => 3,
            Some("repeated_call") => 4,
            None => 5,
            Some(other) => panic!("unknown stop {other}"),
        };
        for key in [cell_of(tr), "overall".to_string()] {
            let row = want.entry(key).or_default();
            row[0] += 1;
            row[col] += 1;
        }
    }
    let got: std::collections::BTreeMap<String, [u64; 6]> = loops["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (
                r["cell"].as_str().unwrap().to_string(),
                [
                    n("trials"),
                    n("answered"),
                    n("max_rounds"),
                    n("max_tool_calls"),
                    n("repeated_call"),
                    n("error"),
                ],
            )
        })
        .collect();
    assert_eq!(got, want);
    // The fixture's script stops each way (max_rounds twice); the failing target's 5
    // loop trials end as errors (its single-turn trial has no episode).
    assert_eq!(want["overall"], [10, 1, 2, 1, 1, 5]);

    // Each cell's chart has one point per round index its trials reached: 1 to 12 for the
    // script's cell; none for the failing target's (no round got an answer).
    for chart in loops["charts"].as_array().unwrap() {
        let cell = chart["cell"].as_str().unwrap();
        let reached = trials
            .iter()
            .filter(|tr| cell_of(tr) == cell)
            .filter_map(|tr| tr["episode"]["rounds"].as_array().map(Vec::len))
            .max()
            .unwrap_or(0) as u64;
        let rounds: Vec<u64> = chart["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        assert_eq!(rounds, (1..=reached).collect::<Vec<_>>(), "{cell}");
    }
    assert_eq!(loops["charts"].as_array().unwrap().len(), 2);
    assert_eq!(loops["charts"][0]["rounds"].as_array().unwrap().len(), 12);
    assert_eq!(loops["charts"][1]["rounds"], serde_json::json!([]));

    // Every transcript, opened: one block per round of the journal, an injected-error
    // marker where a `fail:` rule answered, the approval answers, a "not executed" mark
    // for each call a limit stopped, and the stop line.
    let shown = loops["trials"].as_array().unwrap();
    assert_eq!(shown.len(), trials.len());
    for tr in &trials {
        let row = shown
            .iter()
            .find(|r| {
                r["case"] == tr["case_id"]
                    && r["cell"] == cell_of(tr)
                    && r["repeat"] == tr["repeat"]
            })
            .unwrap_or_else(|| panic!("no row for {}", tr["case_id"]));
        let Some(episode) = tr.get("episode") else {
            assert_eq!(row["round_blocks"], 0, "a single-turn trial has no rounds");
            continue;
        };
        let rounds = episode["rounds"].as_array().unwrap();
        assert_eq!(row["round_blocks"], rounds.len(), "{}", tr["case_id"]);
        // Issue 31: each round a reason points at is marked, with the reason inside.
        let mut flagged: Vec<u64> = tr["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| {
                r.get("rounds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .map(|n| n.as_u64().unwrap())
            .collect();
        flagged.sort_unstable();
        flagged.dedup();
        assert_eq!(
            row["flagged"],
            serde_json::json!(flagged),
            "{}",
            tr["case_id"]
        );
        let pinned: usize = tr["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                r.get("rounds")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
            })
            .sum();
        assert_eq!(row["pins"].as_array().unwrap().len(), pinned);
        // Up to 6 rounds all open; a longer episode opens its first and last two, and
        // every marked round.
        let n = rounds.len() as u64;
        let open = if n > 6 {
            4 + flagged.iter().filter(|&&k| k > 2 && k + 2 <= n).count()
        } else {
            rounds.len()
        };
        assert_eq!(row["rounds_open"], open, "{}", tr["case_id"]);
        // Each round says when it started and how long it took, in whole milliseconds.
        let mut at: f64 = 0.0;
        for (k, (head, r)) in row["heads"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rounds)
            .enumerate()
        {
            let head = head.as_str().unwrap();
            assert!(
                head.starts_with(&format!("round {} · at +{} ms · ", k + 1, at.round())),
                "{head}"
            );
            let model = r["response"]["latency_ms"].as_f64().unwrap_or(0.0);
            assert!(
                head.contains(&format!("model {} ms", model.round())),
                "{head}"
            );
            at += model + r["tool_ms"].as_f64().unwrap_or(0.0);
        }
        // The episode's checks as sentences, each marked held or not.
        for line in episode["checks"]["lines"].as_array().into_iter().flatten() {
            let mark = if line["ok"] == true { "✓" } else { "✗" };
            let text = format!("{mark}{}", line["text"].as_str().unwrap());
            assert!(
                row["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c.as_str().unwrap().starts_with(&text)),
                "{text} in {}",
                row["checks"]
            );
        }
        let outcomes = || {
            rounds.iter().flat_map(|r| {
                r.get("outcomes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
        };
        let injected = outcomes().filter(|o| o["fault"] == true).count();
        assert_eq!(row["injected"], injected, "{}", tr["case_id"]);
        let approvals: Vec<String> = outcomes()
            .filter(|o| o["approval"] != "not_required")
            .map(|o| format!("approval: {}", o["approval"].as_str().unwrap()))
            .collect();
        assert_eq!(row["approvals"], serde_json::json!(approvals));
        let unexecuted: usize = rounds
            .iter()
            .filter(|r| r.get("outcomes").is_none())
            .map(|r| r["response"]["tool_calls"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(row["not_executed"], unexecuted, "{}", tr["case_id"]);
        let stop = episode["stop"].as_str().unwrap_or("error");
        assert!(
            row["stop"]
                .as_str()
                .unwrap()
                .starts_with(&format!("Stopped: {stop}")),
            "{row}"
        );
    }
    // What the fixture holds, counted by hand: the injected rate limit of `retry`, the
    // denied and the two approved cancellations, and four calls left unexecuted (the
    // last round of retry, cancel-denied, cancel-approved and endless).
    // The repeated cancellation of `cancel-approved` marks round 2 (and the stop its
    // last round), and the check it failed says so.
    let approved = shown
        .iter()
        .find(|r| r["case"] == "cancel-approved" && r["round_blocks"] != 0)
        .unwrap();
    assert_eq!(approved["flagged"], serde_json::json!([2, 3]));
    assert!(approved["pins"][0].as_str().unwrap().starts_with(
        "duplicate_side_effect: `cancel_order` (idempotent: false) was executed again in round 2"
    ));
    assert!(approved["checks"].as_array().unwrap().iter().any(|c| c
        == "✗does not repeat a call that may have taken effect (`cancel_order`) with the same arguments — round 2"));
    let sum = |k: &str| shown.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("injected"), 1);
    assert_eq!(sum("not_executed"), 4);
    assert_eq!(
        shown
            .iter()
            .flat_map(|r| r["approvals"].as_array().unwrap())
            .collect::<Vec<_>>(),
        [
            "approval: denied",
            "approval: approved",
            "approval: approved"
        ]
    );
    // The mock result's markup is shown as text.
    let text = v["transcripts"]["text"].as_str().unwrap();
    assert!(text.contains(r#""status":"shipped <script>window.pwned=1</script>""#));
    assert!(text.contains("Hi there! <img src=x onerror=alert(1)>"));
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn behaviour_report_shows_the_matrix_and_each_trials_behaviour() {
    // The suite and answers of the behaviour end-to-end test (its figures are derived by
    // hand there): macro-F1 0.3, both hallucination rates 1/2.
    let t = Toolgauge::new();
    t.write("s.yaml", crate::behaviour_metrics::SUITE);
    t.write("answers.yaml", crate::behaviour_metrics::ANSWERS);
    t.run(&["run", "s.yaml", "--out", "out", "--quiet"])
        .assert_code(crate::support::THRESHOLD_FAILED);
    let dir = t.path().join("out");
    let Some(v) = open(&dir.join("report.html"), &shots_dir("behaviour")) else {
        return;
    };
    assert_quiet(&v);
    let page = &v["page"];
    assert!(
        page["sections"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("behaviour")),
        "{}",
        page["sections"]
    );
    let text = page["body_text"].as_str().unwrap();
    assert!(text.contains("macro-F1 0.300"), "{text}");
    assert!(text.contains("tool hallucination 50.0%"), "{text}");
    // Every transcript open: each behaviour trial says what it showed and who decided.
    let shown = v["transcripts"]["text"].as_str().unwrap();
    assert_eq!(v["transcripts"]["open"], 7);
    assert!(
        shown.contains("observed tool_call (decided by call), expected cannot_answer"),
        "{shown}"
    );
    assert!(
        shown.contains("observed direct (decided by classifier), expected request_for_info"),
        "{shown}"
    );
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn improve_page_tells_the_story_and_runs_no_payload() {
    let t = Toolgauge::new();
    // The example's planted wording, with payloads in its description and rationale: a
    // proposer's text is model output, shown and never run.
    let payload = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=1</script>";
    let script = serde_json::json!({"rounds": [{"candidates": [{
        "rationale": format!("forecasts {payload}"),
        "tools": {"get_weather": {"description": format!(
            "Weather forecast for one city: temperature, rain, snow, wind, sunny skies, umbrella, tomorrow, tonight, weekend. 气象预报：气温、下雨、刮风、带伞、今晚、周末。 {payload}"
        )}}
    }]}]});
    t.write("proposer.json", script.to_string());
    let proposer = format!("scripted:{}", t.path().join("proposer.json").display());
    let out = t.path().join("search");
    let out_arg = out.display().to_string();
    t.run_in(
        &repo_root(),
        &[
            "improve",
            "examples/improve/weather.yaml",
            "--target",
            "scripted:lexical",
            "--proposer",
            &proposer,
            "--out",
            &out_arg,
            "-q",
        ],
    )
    .assert_code(OK);
    let Some(v) = open(&out.join("improve.html"), &shots_dir("improve")) else {
        return;
    };
    assert_quiet(&v);
    let page = &v["page"];
    assert_eq!(page["scripts"], 0, "improve.html needs no script");
    assert_eq!(page["images"], 0, "the payload's <img> is text");
    assert!(page["svg_charts"].as_u64().unwrap() >= 1, "the score chart");
    let shown = page["body_text"].as_str().unwrap();
    assert!(shown.contains(payload), "the payload is shown as text");
    assert!(shown.contains("1 wording accepted"), "{shown}");
    // The diff marks the new words of the accepted wording.
    let inserted = page["inserted"].as_array().unwrap();
    assert!(
        inserted
            .iter()
            .any(|w| w.as_str().unwrap().contains("forecast")),
        "{inserted:?}"
    );
    assert!(!page["deleted"].as_array().unwrap().is_empty());
}
