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

use crate::support::{OK, Toolgauge, fixtures_dir, loop_run};

/// Render every format of the fixture run; returns the scratch directory and stdout.
/// The terminal is 120 columns wide (`COLUMNS`), the width assumed when stdout is not a
/// terminal, so the snapshot does not depend on the developer's shell.
fn rendered() -> (Toolgauge, String) {
    rendered_with(&[("COLUMNS", "120")], &[])
}

/// Render every format of the fixture run with the variables `env` and the extra
/// `report` arguments `extra`.
fn rendered_with(env: &[(&str, &str)], extra: &[&str]) -> (Toolgauge, String) {
    let t = Toolgauge::new();
    let out = t.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for f in ["run.json", "trials.jsonl"] {
        std::fs::copy(fixtures_dir().join("snapshot-run").join(f), out.join(f)).unwrap();
    }
    // The suite at the path run.json names, so thresholds are checked again.
    t.fixture("weather.yaml");
    let mut args = vec![
        "report",
        "out",
        "--format",
        "terminal,json,csv,junit,md,html",
        "--no-color",
    ];
    args.extend_from_slice(extra);
    let o = t.run_env(env, &args);
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
fn wide_terminal_output_matches_its_snapshot() {
    // Every column, whatever the width: the numbers of every metric column are checked.
    let (_, stdout) = rendered_with(&[("COLUMNS", "80")], &["--wide"]);
    settings().bind(|| insta::assert_snapshot!("terminal-wide", stdout));
}

/// The lines of the summary table: from its top border to its bottom border.
fn table_lines(stdout: &str) -> Vec<&str> {
    let lines: Vec<&str> = stdout.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with('┌'))
        .expect("a table");
    let bottom = lines
        .iter()
        .position(|l| l.starts_with('└'))
        .expect("its end");
    lines[top..=bottom].to_vec()
}

/// The cells of one table line, trimmed.
fn cells(line: &str) -> Vec<&str> {
    line.trim_matches('│').split('┆').map(str::trim).collect()
}

#[test]
fn the_table_fits_80_100_and_160_columns_and_never_splits_a_number() {
    let percent = regex::Regex::new(r"^(-|\d{1,3}%)$").unwrap();
    let interval = regex::Regex::new(r"^(-|\d{1,3}% \[\d{1,3}-\d{1,3}\])$").unwrap();
    let count = regex::Regex::new(r"^\d+$").unwrap();
    let mut shown_at = Vec::new();
    for width in [80usize, 100, 160] {
        let (_, stdout) = rendered_with(&[("COLUMNS", &width.to_string())], &[]);
        for line in stdout.lines() {
            assert!(
                unicode_width::UnicodeWidthStr::width(line) <= width,
                "a line wider than {width} columns:\n{line}\n\n{stdout}"
            );
        }
        let table = table_lines(&stdout);
        // Top border, two header lines, the separator, 8 cells and overall, the bottom
        // border: each row is one line, so no cell was wrapped.
        assert_eq!(
            table.len(),
            1 + 2 + 1 + 9 + 1,
            "at {width} columns:\n{stdout}"
        );
        let header: Vec<&str> = cells(table[1]);
        let rows: Vec<Vec<&str>> = table[4..13].iter().map(|l| cells(l)).collect();
        let column = |name: &str| header.iter().position(|h| *h == name);
        for (name, pattern) in [
            ("n", &count),
            ("errors", &count),
            ("accuracy", &interval),
            ("precision", &percent),
            ("recall", &percent),
        ] {
            let Some(i) = column(name) else { continue };
            for r in &rows {
                assert!(
                    pattern.is_match(r[i]),
                    "{name} `{}` at {width}:\n{stdout}",
                    r[i]
                );
            }
        }
        // The most important columns come first; the note names the rest.
        for name in ["variant", "n", "errors", "accuracy", "precision"] {
            assert!(column(name).is_some(), "{name} at {width}:\n{stdout}");
        }
        if column("ungrounded").is_none() {
            assert!(
                stdout.contains(&format!("left out to fit {width} columns: ")),
                "{stdout}"
            );
        }
        // The overall row is one line with its totals.
        assert_eq!(rows[8][0], "overall");
        assert_eq!(rows[8][column("n").unwrap()], "16");
        assert_eq!(rows[8][column("accuracy").unwrap()], "75% [51-90]");
        shown_at.push(header.len());
    }
    // A wider terminal shows more columns.
    assert!(shown_at.windows(2).all(|w| w[0] < w[1]), "{shown_at:?}");
}

#[test]
fn failure_lines_cut_to_the_width_end_with_an_ellipsis() {
    let (_, stdout) = rendered_with(&[("COLUMNS", "100")], &[]);
    let failures: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("failures ("))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(failures.len(), 20, "{stdout}");
    // `two-cities`' reason is longer than the line: it is cut, and says so.
    let cut = failures
        .iter()
        .find(|l| l.contains("two-cities [scripted:weather_script.yaml × vague × auto]"))
        .expect("the failure of two-cities");
    assert!(cut.ends_with('…'), "{cut}");
    assert_eq!(unicode_width::UnicodeWidthStr::width(*cut), 100, "{cut}");
    // A line that fits is whole, without the mark.
    let (_, wide) = rendered_with(&[("COLUMNS", "160")], &[]);
    assert!(
        wide.lines().any(|l| l
            == "  capital-of-france [scripted:weather_script.yaml × vague × auto] called `get_weather`; no call was expected"),
        "{wide}"
    );
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

#[test]
fn loop_report_matches_its_snapshot() {
    // The loop fixture run (`fixtures/loops/`, see `loop_run`): the tool-loop section, the
    // trial table's rounds / calls / stop columns and each loop trial's embedded episode.
    // Tool times are measured, so they are the only numbers filtered out.
    let t = loop_run();
    let mut s = settings();
    s.add_filter(r#""(elapsed_ms|tool_ms)": ?[0-9.eE+-]+"#, r#""$1":[MS]"#);
    s.bind(|| {
        insta::assert_snapshot!(
            "loops-report.html",
            read(&t.path().join("out"), "report.html")
        );
    });
}
