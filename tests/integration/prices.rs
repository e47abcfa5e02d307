//! `--prices FILE` is kept by the run: `run.json` stores the price each target was
//! charged with the file's path and SHA-256, so `run --resume` (and `report`) from
//! another working directory give the cost of the uninterrupted run, a moved or changed
//! file changes nothing (a changed one gets a note), and `--prices` given again with
//! other prices is refused.

use std::path::Path;

use serde_json::Value;

use crate::support::{BAD_INPUT, OK, Toolgauge, repo_root};

const PRICES: &str = "gpt-4o-mini: {input_per_mtok: 1, output_per_mtok: 2}\n";

/// The shipped weather suite and cassette (52 trials of `openai:gpt-4o-mini`, each with
/// usage) under `project/`, with `project/prices/p.yaml` pricing the model at $1 / $2
/// per million input / output tokens.
fn project(t: &Toolgauge) -> std::path::PathBuf {
    let p = t.path().join("project");
    for d in ["suites", "fixtures", "prices"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::copy(
        repo_root().join("suites/weather.yaml"),
        p.join("suites/weather.yaml"),
    )
    .unwrap();
    std::fs::copy(
        repo_root().join("fixtures/weather.cassette.jsonl"),
        p.join("fixtures/weather.cassette.jsonl"),
    )
    .unwrap();
    std::fs::write(p.join("prices/p.yaml"), PRICES).unwrap();
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    p
}

fn run_priced(t: &Toolgauge, project: &Path, out: &str) {
    t.run_in(
        project,
        &[
            "run",
            "suites/weather.yaml",
            "--out",
            out,
            "--prices",
            "prices/p.yaml",
            "--quiet",
        ],
    )
    .assert_code(OK);
}

fn cost(t: &Toolgauge, dir: &str) -> f64 {
    t.run_dir(dir).json("summary.json")["overall"]["cost_usd"]
        .as_f64()
        .unwrap()
}

/// Keep the first `n` lines of a run's journal: the rest of its trials run on resume.
fn cut_journal(t: &Toolgauge, dir: &str, n: usize) {
    let name = format!("{dir}/trials.jsonl");
    let text = t.read(&name);
    let kept: Vec<&str> = text.lines().take(n).collect();
    assert!(kept.len() == n && text.lines().count() > n);
    t.write(&name, kept.join("\n") + "\n");
}

#[test]
fn resume_and_report_from_another_directory_charge_the_runs_prices() {
    let t = Toolgauge::new();
    let project = project(&t);
    run_priced(&t, &project, "runs/full");
    // The cost by hand from the journal's usage: $1 and $2 per million tokens.
    let by_hand: f64 = t
        .run_dir("project/runs/full")
        .trials()
        .iter()
        .map(|x| {
            let u = &x["response"]["usage"];
            u["input_tokens"].as_f64().unwrap() * 1e-6 + u["output_tokens"].as_f64().unwrap() * 2e-6
        })
        .sum();
    let full = cost(&t, "project/runs/full");
    assert!((full - by_hand).abs() < 1e-9, "{full} vs {by_hand}");
    // The built-in price of gpt-4o-mini is $0.15 / $0.60: a resume that lost the file
    // would charge about a quarter for the trials it ran.
    assert!(full > 0.015, "{full}");

    let meta = t.run_dir("project/runs/full").json("run.json");
    let prices = &meta["settings"]["prices"];
    assert_eq!(prices["file"], "prices/p.yaml");
    // `printf '...' | sha256sum` of PRICES.
    assert_eq!(
        prices["file_sha256"],
        "562bc3441eb2edd6bb3bd96a80abf7b91ae3be5983858b361493c9a13cf07674"
    );
    assert_eq!(
        prices["models"],
        serde_json::json!({"openai:gpt-4o-mini": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}})
    );
    let abs = project.join("prices/p.yaml").canonicalize().unwrap();
    assert_eq!(
        meta["settings"]["paths"]["prices"]["absolute"],
        abs.to_str().unwrap()
    );

    // Resume from another directory, without --prices: 22 of 52 trials run again.
    run_priced(&t, &project, "runs/cut");
    cut_journal(&t, "project/runs/cut", 30);
    let elsewhere = t.path().join("elsewhere");
    let o = t.run_in(
        &elsewhere,
        &["run", "--resume", "../project/runs/cut", "--quiet"],
    );
    o.assert_code(OK);
    assert!(!o.stderr.contains("note:"), "{}", o.stderr);
    assert_eq!(cost(&t, "project/runs/cut"), full);
    let again = t.run_dir("project/runs/cut").json("run.json");
    assert_eq!(again["settings"]["prices"], meta["settings"]["prices"]);

    // `report` from there re-renders the same cost.
    t.run_in(
        &elsewhere,
        &["report", "../project/runs/cut", "--format", "json"],
    )
    .assert_code(OK);
    assert_eq!(cost(&t, "project/runs/cut"), full);

    // The file moved away: the prices kept in run.json still apply.
    std::fs::rename(project.join("prices/p.yaml"), project.join("moved.yaml")).unwrap();
    cut_journal(&t, "project/runs/cut", 10);
    t.run_in(
        &elsewhere,
        &["run", "--resume", "../project/runs/cut", "--quiet"],
    )
    .assert_code(OK);
    assert_eq!(cost(&t, "project/runs/cut"), full);
}

#[test]
fn a_changed_price_file_gets_a_note_and_other_prices_are_refused_on_resume() {
    let t = Toolgauge::new();
    let project = project(&t);
    run_priced(&t, &project, "runs/a");
    let full = cost(&t, "project/runs/a");
    cut_journal(&t, "project/runs/a", 20);
    let journal = t.read("project/runs/a/trials.jsonl");
    std::fs::write(
        project.join("prices/p.yaml"),
        "gpt-4o-mini: {input_per_mtok: 3, output_per_mtok: 4}\n",
    )
    .unwrap();
    let elsewhere = t.path().join("elsewhere");

    // Given again, the changed file is refused, naming the model and both prices; the
    // journal is left as it was.
    let o = t.run_in(
        &elsewhere,
        &[
            "run",
            "--resume",
            "../project/runs/a",
            "--prices",
            "../project/prices/p.yaml",
        ],
    );
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "--prices `../project/prices/p.yaml` charges the run in `../project/runs/a` differently from the prices of `prices/p.yaml` as the run began: `openai:gpt-4o-mini`: input 1 / output 2 USD per million tokens → input 3 / output 4 USD per million tokens",
        "hint: a resumed run charges its new trials what it charged the first ones",
    ]);
    assert_eq!(t.read("project/runs/a/trials.jsonl"), journal);

    // Not given: the run's prices, with a note that the file changed.
    let o = t.run_in(
        &elsewhere,
        &["run", "--resume", "../project/runs/a", "--quiet"],
    );
    o.assert_code(OK);
    let abs = project.join("prices/p.yaml").canonicalize().unwrap();
    o.stderr_has(&[&format!(
        "note: price file `{}` changed since the run began; the resumed trials are charged the prices the run began with",
        abs.display()
    )]);
    assert_eq!(cost(&t, "project/runs/a"), full);

    // A file with the same prices for the run's model (another model added) is fine.
    std::fs::write(
        project.join("prices/same.yaml"),
        format!("{PRICES}other-model: {{input_per_mtok: 9, output_per_mtok: 9}}\n"),
    )
    .unwrap();
    cut_journal(&t, "project/runs/a", 20);
    t.run_in(
        &elsewhere,
        &[
            "run",
            "--resume",
            "../project/runs/a",
            "--prices",
            "../project/prices/same.yaml",
            "--quiet",
        ],
    )
    .assert_code(OK);
    assert_eq!(cost(&t, "project/runs/a"), full);
}

#[test]
fn resume_refuses_an_edited_price_in_run_json_and_other_prices_than_the_built_in() {
    let t = Toolgauge::new();
    let project = project(&t);
    // A run without --prices keeps the built-in price it charged.
    t.run_in(
        &project,
        &["run", "suites/weather.yaml", "--out", "runs/b", "--quiet"],
    )
    .assert_code(OK);
    let meta: Value = t.run_dir("project/runs/b").json("run.json");
    assert_eq!(
        meta["settings"]["prices"],
        // The list price carries its cached-input rate (issue 31).
        serde_json::json!({"models": {"openai:gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6, "cached_input_per_mtok": 0.075}}})
    );
    cut_journal(&t, "project/runs/b", 20);
    let o = t.run_in(
        &project,
        &["run", "--resume", "runs/b", "--prices", "prices/p.yaml"],
    );
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["differently from the built-in prices: `openai:gpt-4o-mini`: input 0.15 / output 0.6 USD per million tokens → input 1 / output 2"]);

    // An edited run.json with a negative price is refused, naming the field.
    let text = t.read("project/runs/b/run.json");
    t.write(
        "project/runs/b/run.json",
        text.replacen("\"input_per_mtok\": 0.15", "\"input_per_mtok\": -0.15", 1),
    );
    let o = t.run_in(&project, &["run", "--resume", "runs/b"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "holds prices that are not prices: `openai:gpt-4o-mini` field `input_per_mtok` is -0.15: a price can not be negative",
    ]);
}
