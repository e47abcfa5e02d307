//! The numbers every exporter writes, checked against values computed by hand from a
//! small run with repeats and prices (the snapshot fixture has neither, so pass@k,
//! pass^k and cost would show no value there).
//!
//! The run: one target priced at $0.15 / $0.60 per million input / output tokens, one
//! variant, `auto`, three repeats of three cases:
//!
//! | case | kind | repeats | output tokens | latency ms |
//! |---|---|---|---|---|
//! | `a` | should_call, calls | P F P | 20 30 40 | 100 200 300 |
//! | `b` | should_not_call, no call | P P P | 5 5 5 | 400 500 600 |
//! | `c` | should_call, no call | F F F | 50 60 70 | 700 800 900 |
//!
//! Every trial has 1000 input tokens. By hand:
//! - accuracy 5/9 = 0.555556 (56%);
//! - trigger: tp 3 (a), fn 3 (c), tn 3 (b), fp 0: precision 3/3, recall 3/6, F1 = 2 × 1 ×
//!   0.5 / 1.5 = 0.666667;
//! - pass@3 per case: a (2 of 3) 1 − C(1,3)/C(3,3) = 1, b 1, c 0: mean 2/3; pass^3:
//!   a C(2,3)/C(3,3) = 0, b 1, c 0: mean 1/3;
//! - tokens 9 × 1000 = 9000 in, 20+30+40+5+5+5+50+60+70 = 285 out;
//! - cost 9000 × 0.15/1e6 + 285 × 0.60/1e6 = 0.00135 + 0.000171 = $0.001521; trial
//!   `a#1`: 1000 × 0.15/1e6 + 30 × 0.60/1e6 = $0.000168;
//! - latency, nearest rank over 9 values: p50 rank ⌈4.5⌉ = 5 → 500 ms, p95 rank ⌈8.55⌉
//!   = 9 → 900 ms.

use indexmap::IndexMap;

use super::csv::CsvExporter;
use super::json::JsonExporter;
use super::junit::JunitExporter;
use super::markdown::MarkdownExporter;
use super::summary::Summary;
use super::terminal::{self, TerminalOptions};
use super::{
    Exporter, FILE_FORMATS, MatrixRef, ReportError, RunMeta, RunReport, RunSettings, SuiteRef,
    VariantTokens, exporter, write_files,
};
use crate::judge::calls::{Reason, TrialChecks};
use crate::provider::{Message, Response, ToolChoice, Usage};
use crate::score::{TrialRecord, Verdict};
use crate::suite::CaseKind;

const TARGET: &str = "openai:gpt-4o-mini";
const INPUT_PRICE: f64 = 0.15;
const OUTPUT_PRICE: f64 = 0.60;

fn trial(case: &str, repeat: u32, passed: bool, output: u64, latency: f64) -> TrialRecord {
    let (kind, called) = match case {
        "a" => (CaseKind::ShouldCall, true),
        "b" => (CaseKind::ShouldNotCall, false),
        _ => (CaseKind::ShouldCall, false),
    };
    TrialRecord {
        judge: Vec::new(),
        case_id: case.into(),
        kind,
        tags: Vec::new(),
        target: TARGET.into(),
        variant: "v".into(),
        tool_choice: ToolChoice::Auto,
        repeat,
        stream: false,
        messages: vec![Message::User {
            content: format!("case {case}"),
        }],
        response: Some(Response {
            usage: Some(Usage {
                input_tokens: 1000,
                output_tokens: output,
                estimated: false,
                ..Default::default()
            }),
            latency_ms: latency,
            ..Response::default()
        }),
        checks: Some(TrialChecks {
            kind,
            called,
            calls: Vec::new(),
            expected_tools: Vec::new(),
            right_tools: None,
            args_matched: 0,
            args_expected: 0,
            behaviour: None,
        }),
        verdict: if passed { Verdict::Pass } else { Verdict::Fail },
        reasons: if passed {
            Vec::new()
        } else {
            vec![Reason {
                code: "missed_call".into(),
                message: format!("expected a call in case {case}"),
                rounds: Vec::new(),
            }]
        },
        // As the runner prices a trial: tokens × USD per million tokens.
        cost_usd: Some(1000.0 * INPUT_PRICE / 1e6 + output as f64 * OUTPUT_PRICE / 1e6),
        distractors: None,
        episode: None,
    }
}

pub(super) fn report() -> RunReport {
    let mut trials = Vec::new();
    let plan = [
        ("a", [true, false, true], [20, 30, 40]),
        ("b", [true, true, true], [5, 5, 5]),
        ("c", [false, false, false], [50, 60, 70]),
    ];
    let mut latency = 0.0;
    for (case, passed, output) in plan {
        for r in 0..3 {
            latency += 100.0;
            trials.push(trial(case, r as u32, passed[r], output[r], latency));
        }
    }
    let cells = vec![(TARGET.to_string(), "v".to_string(), "auto".to_string())];
    let variants = vec![VariantTokens {
        variant: "v".into(),
        tool_definition_tokens: 42,
        ..VariantTokens::default()
    }];
    let summary = Summary::build("priced", &cells, &variants, &trials, &[]);
    let mut meta = meta_for("priced", 3, 9);
    meta.sources = [(TARGET.to_string(), "replay".to_string())]
        .into_iter()
        .collect();
    meta.tool_definition_tokens = [("v".to_string(), 42)].into_iter().collect();
    RunReport {
        meta,
        trials,
        summary,
    }
}

/// The one file `exporter` writes under `name`, as text.
fn file(exporter: &dyn Exporter, report: &RunReport, name: &str) -> String {
    let files = exporter.render(report).unwrap();
    let (_, bytes) = files
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} was not rendered"));
    String::from_utf8(bytes).unwrap()
}

/// The rows of a CSV text as maps from column name to value.
fn csv_rows(text: &str) -> Vec<IndexMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn summary_csv_has_the_hand_computed_numbers() {
    let report = report();
    let rows = csv_rows(&file(&CsvExporter, &report, "summary.csv"));
    assert_eq!(rows.len(), 2, "one cell, then overall");
    for (row, def_tokens) in rows.iter().zip(["42", ""]) {
        let expected = [
            ("trials", "9"),
            ("scored", "9"),
            ("errors", "0"),
            ("passed", "5"),
            ("accuracy", "0.555556"),
            ("trigger_precision", "1"),
            ("trigger_recall", "0.5"),
            ("trigger_f1", "0.666667"),
            ("false_call_rate", "0"),
            ("miss_rate", "0.5"),
            ("invalid_call_rate", ""),
            ("input_tokens", "9000"),
            ("output_tokens", "285"),
            ("cost_usd", "0.001521"),
            ("latency_p50_ms", "500"),
            ("latency_p95_ms", "900"),
            ("tool_definition_tokens", def_tokens),
            ("pass_at_k", "0.666667"),
            ("pass_hat_k", "0.333333"),
        ];
        for (column, value) in expected {
            assert_eq!(row[column], value, "{column} of the {} row", row["target"]);
        }
    }
    assert_eq!(rows[0]["target"], TARGET);
    assert_eq!(rows[1]["target"], "overall");
}

#[test]
fn trials_csv_has_each_trials_tokens_cost_and_latency() {
    let report = report();
    let rows = csv_rows(&file(&CsvExporter, &report, "trials.csv"));
    assert_eq!(rows.len(), 9);
    let a1 = &rows[1];
    let expected = [
        ("case_id", "a"),
        ("repeat", "1"),
        ("passed", "false"),
        ("verdict", "fail"),
        ("reasons", "missed_call: expected a call in case a"),
        ("input_tokens", "1000"),
        ("output_tokens", "30"),
        ("usage_estimated", "false"),
        ("cost_usd", "0.000168"),
        ("latency_ms", "200"),
    ];
    for (column, value) in expected {
        assert_eq!(a1[column], value, "{column} of a#1");
    }
    // c#2: 1000 × 0.15/1e6 + 70 × 0.60/1e6 = 0.000192.
    assert_eq!(rows[8]["cost_usd"], "0.000192");
    // The costs add up to the summary's, digit for digit.
    let sum: f64 = rows
        .iter()
        .map(|r| r["cost_usd"].parse::<f64>().unwrap())
        .sum();
    assert!((sum - 0.001521).abs() < 1e-12, "{sum}");
}

#[test]
fn summary_json_has_the_hand_computed_numbers_without_float_noise() {
    let report = report();
    let text = file(&JsonExporter, &report, "summary.json");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    for m in [&json["cells"][0]["metrics"], &json["overall"]] {
        assert_eq!(m["accuracy"]["num"], 5);
        assert_eq!(m["accuracy"]["den"], 9);
        assert_eq!(m["trigger"]["tp"], 3);
        assert_eq!(m["trigger"]["fn"], 3);
        assert_eq!(m["trigger"]["tn"], 3);
        assert_eq!(m["trigger"]["fp"], 0);
        assert_eq!(m["tokens"]["input"], 9000);
        assert_eq!(m["tokens"]["output"], 285);
        assert_eq!(m["cost_usd"], 0.001521);
        assert_eq!(m["latency"]["p50_ms"], 500.0);
        assert_eq!(m["latency"]["p95_ms"], 900.0);
        assert_eq!(m["consistency"]["k"], 3);
        assert_eq!(m["consistency"]["cases"], 3);
        assert_eq!(m["consistency"]["pass_at_k"], 2.0 / 3.0);
        assert_eq!(m["consistency"]["pass_hat_k"], 1.0 / 3.0);
    }
    assert_eq!(json["cells"][0]["tool_definition_tokens"], 42);
    assert_eq!(
        json["cells"][0]["outcomes"],
        serde_json::json!({"a": "PFP", "b": "PPP", "c": "FFF"})
    );
    // The text holds the rounded number, not the sum's noise.
    assert_eq!(text.matches("\"cost_usd\": 0.001521,").count(), 2, "{text}");
    assert_eq!(json["failures"].as_array().unwrap().len(), 4);
}

#[test]
fn junit_counts_every_repeat_with_its_time() {
    let report = report();
    let xml = file(&JunitExporter, &report, "junit.xml");
    assert!(
        xml.contains(
            r#"<testsuites name="toolgauge priced" tests="9" skipped="0" failures="4" errors="0">"#
        ),
        "{xml}"
    );
    // Repeated: each testcase is named case#repeat, and its time is its latency.
    assert!(
        xml.contains(&format!(
            r#"<testcase name="a#0" classname="priced.{TARGET} × v × auto" time="0.100"/>"#
        )),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            r#"<testcase name="a#1" classname="priced.{TARGET} × v × auto" time="0.200">"#
        )),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<failure message="expected a call in case a" type="missed_call">"#),
        "{xml}"
    );
    for name in ["a#2", "b#0", "b#1", "b#2", "c#0", "c#1", "c#2"] {
        assert!(xml.contains(&format!(r#"name="{name}""#)), "{name}: {xml}");
    }
}

#[test]
fn markdown_shows_tokens_cost_and_the_repeat_of_each_failure() {
    let report = report();
    let md = file(&MarkdownExporter, &report, "summary.md");
    assert!(
        md.contains("9 trials: 5 passed, 4 failed, 0 errors; accuracy 56% ("),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {TARGET} | v | auto | 9 | 56% (")))
        .unwrap_or_else(|| panic!("the cell's row: {md}"));
    assert!(
        row.ends_with("| 100% | 50% | – | – | 9000/285 | $0.00152 |"),
        "{row}"
    );
    assert!(
        md.contains(&format!(
            "- `a` ({TARGET} × v × auto, repeat 1): expected a call in case a\n"
        )),
        "{md}"
    );
    for r in 0..3 {
        assert!(
            md.contains(&format!("- `c` ({TARGET} × v × auto, repeat {r}): ")),
            "{md}"
        );
    }
}

/// The header and the one body row of the terminal table, as cells.
fn terminal_row(out: &str) -> IndexMap<String, String> {
    let lines: Vec<&str> = out.lines().collect();
    let top = lines.iter().position(|l| l.starts_with('┌')).unwrap();
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect()
    };
    // Two header lines (joined with a space), the separator, the row.
    let (h1, h2) = (cells(lines[top + 1]), cells(lines[top + 2]));
    let row = cells(lines[top + 4]);
    assert!(lines[top + 5].starts_with('└'), "one cell, one row:\n{out}");
    h1.iter()
        .zip(&h2)
        .map(|(a, b)| format!("{a} {b}").trim().to_string())
        .zip(row)
        .collect()
}

#[test]
fn terminal_shows_the_hand_computed_numbers_and_names_each_repeat() {
    let report = report();
    let out = terminal::render(
        &report,
        TerminalOptions {
            color: false,
            max_failures: 20,
            width: 100,
            wide: true,
        },
    );
    let row = terminal_row(&out);
    let expected = [
        ("variant", "v"),
        ("tool choice", "auto"),
        ("n", "9"),
        ("F1", "0.67"),
        ("tokens in/out", "9000/285"),
        ("cost", "$0.00152"),
        ("p50/p95 ms", "500/900"),
        ("pass@k pass^k", "67%/33%"),
        ("invalid", "-"),
    ];
    for (column, value) in expected {
        assert_eq!(row[column], value, "{column}:\n{out}");
    }
    assert!(row["accuracy [95% CI]"].starts_with("56% ["), "{out}");
    assert!(row["precision"].starts_with("100% ["), "{out}");
    assert!(row["recall"].starts_with("50% ["), "{out}");
    assert!(
        out.starts_with("priced: 9 trials, 5 passed, 4 failed, 0 errors\n"),
        "{out}"
    );
    // One target: failures name the variant and tool_choice, and every repeat.
    assert!(
        out.contains("\n  a [v × auto #1] expected a call in case a\n"),
        "{out}"
    );
    for r in 0..3 {
        assert!(out.contains(&format!("\n  c [v × auto #{r}] ")), "{out}");
    }
    // Narrow: the headline columns stay; the cut line ends with `…`.
    let narrow = terminal::render(
        &report,
        TerminalOptions {
            color: false,
            max_failures: 20,
            width: 40,
            wide: false,
        },
    );
    let row = terminal_row(&narrow);
    assert_eq!(row["n"], "9", "{narrow}");
    assert!(row.get("cost").is_none(), "{narrow}");
    assert!(
        narrow.contains("\n  a [v × auto #1] expected a call in ca…\n"),
        "{narrow}"
    );
}

/// The run.json of a finished one-cell run of suite `name` (target [`TARGET`], variant
/// `v`, `auto`) with `repeats` repeats and `trials` trials, as exporter tests need it.
pub(super) fn meta_for(name: &str, repeats: u32, trials: u64) -> RunMeta {
    RunMeta {
        run_format: 1,
        toolgauge_version: "0.1.0".into(),
        suite: SuiteRef {
            name: name.into(),
            path: format!("{name}.yaml"),
            hash: "00".into(),
            description: None,
        },
        matrix: MatrixRef {
            targets: vec![TARGET.into()],
            variants: vec!["v".into()],
            tool_choice: vec!["auto".into()],
            repeats,
        },
        sources: IndexMap::new(),
        tools: IndexMap::new(),
        tool_definition_tokens: IndexMap::new(),
        variant_details: IndexMap::new(),
        trials_planned: trials,
        trials_written: trials,
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: Some("2026-01-01T00:01:00Z".into()),
        status: "complete".into(),
        stop_reason: None,
        settings: RunSettings::default(),
        selection: None,
        merged_from: Vec::new(),
    }
}

/// What `write_files` leaves on disk is, byte for byte, what each exporter renders: the
/// HTML page is written as it is put together rather than rendered whole, and must not
/// differ from the whole page (the trial data in the middle, the parts around it).
#[test]
fn written_files_are_the_rendered_files() {
    let report = report();
    let dir = tempfile::tempdir().unwrap();
    let formats: Vec<String> = FILE_FORMATS.iter().map(|f| f.to_string()).collect();
    let written = write_files(dir.path(), &report, &formats).unwrap();
    let mut expected = Vec::new();
    for f in FILE_FORMATS {
        expected.extend(exporter(f).unwrap().render(&report).unwrap());
    }
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let expected_names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, expected_names);
    for (path, (name, bytes)) in written.iter().zip(&expected) {
        let on_disk = std::fs::read(path).unwrap();
        assert!(
            on_disk == *bytes,
            "{name} on disk differs from its rendering"
        );
    }
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        page.contains("\"case_id\": \"a\""),
        "the trial data is in the page"
    );
    assert!(page.trim_end().ends_with("</html>"));
}

/// A file that can not be created names itself, for every format.
#[test]
fn an_unwritable_file_names_itself() {
    let report = report();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    for (format, file) in [
        ("html", "report.html"),
        ("csv", "trials.csv"),
        ("junit", "junit.xml"),
        ("json", "summary.json"),
        ("md", "summary.md"),
    ] {
        let e = exporter(format)
            .unwrap()
            .write_into(&report, &missing)
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(file), "{format}: {text}");
        assert!(matches!(e, ReportError::Io { .. }), "{format}: {e:?}");
    }
}

/// A write that fails half-way (a full disk: each file is a link to `/dev/full`, which
/// opens but refuses every byte) is an I/O error naming the file, for the formats
/// written as they render, never a silently short file.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error_naming_the_file() {
    let report = report();
    let dir = tempfile::tempdir().unwrap();
    for (format, file) in [
        ("html", "report.html"),
        ("csv", "trials.csv"),
        ("junit", "junit.xml"),
        ("json", "summary.json"),
    ] {
        std::os::unix::fs::symlink("/dev/full", dir.path().join(file)).unwrap();
        let e = exporter(format)
            .unwrap()
            .write_into(&report, dir.path())
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(file), "{format}: {text}");
        match e {
            ReportError::Io { source, .. } => {
                assert_eq!(
                    source.raw_os_error(),
                    Some(28),
                    "{format}: ENOSPC, {source}"
                )
            }
            other => panic!("{format}: {other:?}"),
        }
    }
}
