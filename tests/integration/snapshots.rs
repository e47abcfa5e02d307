//! Snapshots (insta) of every exporter over one hand-built run directory:
//! `fixtures/snapshot-run/` holds the `run.json` and `trials.jsonl` of a run of
//! `weather.yaml` against a script that gets some cases right and wrong, plus a target
//! whose every call errors (two targets × two variants × two modes). `toolgauge report`
//! renders every format from it; each file is compared with its snapshot under
//! `tests/integration/snapshots/`.
//!
//! A change to any exporter shows up here as a reviewable diff: run `cargo insta review`
//! (or `INSTA_UPDATE=always cargo test`) and commit the accepted snapshots.

use std::path::Path;

use crate::support::{OK, Toolgauge, fixtures_dir};

/// Render every format of the fixture run; returns the scratch directory and stdout.
fn rendered() -> (Toolgauge, String) {
    let t = Toolgauge::new();
    let out = t.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for f in ["run.json", "trials.jsonl"] {
        std::fs::copy(fixtures_dir().join("snapshot-run").join(f), out.join(f)).unwrap();
    }
    // The suite at the path run.json names, so thresholds are checked again.
    t.fixture("weather.yaml");
    let o = t.run(&[
        "report",
        "out",
        "--format",
        "terminal,json,csv,junit,md,html",
        "--no-color",
    ]);
    // Rendering succeeds even though the run failed its threshold (the page says so).
    o.assert_code(OK);
    (t, o.stdout.clone())
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{name} was not written: {e}"))
}

/// Times and the scratch path vary between runs; nothing else may.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
        "[TIME]",
    );
    s.add_filter(r#"toolgauge \d+\.\d+\.\d+[^\s<"]*"#, "toolgauge [VERSION]");
    s.add_filter(r"/[^\s\x22']*/\.tmp[A-Za-z0-9]+", "[TMP]");
    s
}

#[test]
fn every_exporter_matches_its_snapshot() {
    let (t, stdout) = rendered();
    let dir = t.path().join("out");
    settings().bind(|| {
        insta::assert_snapshot!("terminal", stdout);
        insta::assert_snapshot!("summary.json", read(&dir, "summary.json"));
        insta::assert_snapshot!("summary.csv", read(&dir, "summary.csv"));
        insta::assert_snapshot!("trials.csv", read(&dir, "trials.csv"));
        insta::assert_snapshot!("junit.xml", read(&dir, "junit.xml"));
        insta::assert_snapshot!("summary.md", read(&dir, "summary.md"));
        insta::assert_snapshot!("report.html", read(&dir, "report.html"));
    });
}

#[test]
fn rendering_twice_gives_the_same_files() {
    let (a, out_a) = rendered();
    let (b, out_b) = rendered();
    let strip = |s: &str, t: &Toolgauge| s.replace(&t.path().display().to_string(), "");
    assert_eq!(strip(&out_a, &a), strip(&out_b, &b));
    for f in [
        "summary.json",
        "summary.csv",
        "trials.csv",
        "junit.xml",
        "summary.md",
        "report.html",
    ] {
        assert!(
            read(&a.path().join("out"), f) == read(&b.path().join("out"), f),
            "{f} differs between two renderings of the same run"
        );
    }
}
