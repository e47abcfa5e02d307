//! Trial warnings (a response's `warnings`, e.g. an implausible usage that was ignored)
//! in every report that shows them: a count and the first few distinct ones in the
//! terminal, a count and the first in `summary.md`, each trial's in `summary.json` and
//! in `report.html`'s trial detail.
//!
//! The run: one target, one variant, `auto`, two repeats of three cases. `a#0` and `a#1`
//! got the same warning (a server that sends the same absurd count every time), `b#1` a
//! different one, `c#0` two; the other trials none. So 4 trials had warnings, with 4
//! distinct texts, the first of which two trials share.

use super::json::JsonExporter;
use super::markdown::MarkdownExporter;
use super::summary::Summary;
use super::terminal::{self, TerminalOptions};
use super::{Exporter, RunReport};
use crate::provider::{Response, ToolChoice};
use crate::score::{TrialRecord, Verdict};
use crate::suite::CaseKind;

const TARGET: &str = "openai:gpt-4o-mini";
const HUGE: &str = "implausible usage from the server ignored: `completion_tokens` is 1e+30, above the cap of 1000000000 tokens per request";
const NEGATIVE: &str =
    "implausible usage from the server ignored: `prompt_tokens` is -5, a negative count";
const STRING: &str = "implausible usage from a stored response ignored: `output_tokens` is \"12\", a string, not a number";
const OTHER: &str = "something else";

fn trial(case: &str, repeat: u32, warnings: &[&str]) -> TrialRecord {
    TrialRecord {
        judge: Vec::new(),
        case_id: case.into(),
        kind: CaseKind::ShouldNotCall,
        tags: Vec::new(),
        target: TARGET.into(),
        variant: "v".into(),
        tool_choice: ToolChoice::Auto,
        repeat,
        stream: false,
        messages: Vec::new(),
        response: Some(Response {
            text: Some("no".into()),
            warnings: warnings.iter().map(|w| w.to_string()).collect(),
            ..Response::default()
        }),
        checks: None,
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        cost_usd: None,
        distractors: None,
        episode: None,
    }
}

fn report_of(trials: Vec<TrialRecord>) -> RunReport {
    let cells = vec![(TARGET.to_string(), "v".to_string(), "auto".to_string())];
    let summary = Summary::build("warned", &cells, &[], &trials, &[]);
    let meta = super::exporter_tests::meta_for("warned", 2, trials.len() as u64);
    RunReport {
        meta,
        trials,
        summary,
    }
}

fn report() -> RunReport {
    report_of(vec![
        trial("a", 0, &[HUGE]),
        trial("a", 1, &[HUGE]),
        trial("b", 0, &[]),
        trial("b", 1, &[NEGATIVE]),
        trial("c", 0, &[STRING, OTHER]),
        trial("c", 1, &[]),
    ])
}

fn terminal_text(report: &RunReport, width: u16) -> String {
    terminal::render(
        report,
        TerminalOptions {
            color: false,
            max_failures: 20,
            width,
            wide: false,
        },
    )
}

/// The lines of `out` from the one starting with `start` up to the next blank line.
fn block<'a>(out: &'a str, start: &str) -> Vec<&'a str> {
    out.lines()
        .skip_while(|l| !l.starts_with(start))
        .take_while(|l| !l.is_empty())
        .collect()
}

fn file(exporter: &dyn Exporter, report: &RunReport, name: &str) -> String {
    let files = exporter.render(report).unwrap();
    let (_, bytes) = files.into_iter().find(|(n, _)| n == name).unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn terminal_counts_trials_and_lists_the_first_distinct_warnings() {
    let out = terminal_text(&report(), 200);
    // One target: the cell is variant × tool_choice; repeats are named (2 repeats).
    assert_eq!(
        block(&out, "4 trials had warnings"),
        [
            "4 trials had warnings (report.html shows each trial's):",
            &format!("  a [v × auto #0] and 1 other: {HUGE}"),
            &format!("  b [v × auto #1]: {NEGATIVE}"),
            &format!("  c [v × auto #0]: {STRING}"),
            "  ... and 1 more distinct (see trials.jsonl)",
        ]
    );
}

#[test]
fn terminal_warning_lines_wrap_to_the_width_keeping_the_value() {
    let out = terminal_text(&report(), 80);
    let lines = block(&out, "4 trials had warnings");
    for l in &lines {
        assert!(super::format::width(l) <= 80, "{l:?}");
    }
    assert_eq!(
        lines[..3],
        [
            "4 trials had warnings (report.html shows each trial's):",
            "  a [v × auto #0] and 1 other: implausible usage from the server ignored:",
            // Exactly 80 columns.
            "    `completion_tokens` is 1e+30, above the cap of 1000000000 tokens per request",
        ]
    );
    assert_eq!(
        lines[3],
        "  b [v × auto #1]: implausible usage from the server ignored: `prompt_tokens` is"
    );
    assert_eq!(
        lines.last(),
        Some(&"  ... and 1 more distinct (see trials.jsonl)")
    );
}

#[test]
fn no_warnings_no_line_and_one_trial_is_singular() {
    let clean = report_of(vec![trial("a", 0, &[]), trial("b", 0, &[])]);
    let out = terminal_text(&clean, 200);
    assert!(!out.contains("warning"), "{out}");
    assert!(!file(&MarkdownExporter, &clean, "summary.md").contains("warning"));
    let json: serde_json::Value =
        serde_json::from_str(&file(&JsonExporter, &clean, "summary.json")).unwrap();
    assert!(json.get("warnings").is_none(), "{json}");
    let html = super::html::render_html(&clean).unwrap();
    assert!(!html.contains("had warnings"));
    assert!(!html.contains(r#"<option value="warn">"#));

    let one = report_of(vec![trial("a", 0, &[NEGATIVE]), trial("b", 0, &[])]);
    let out = terminal_text(&one, 200);
    assert_eq!(
        block(&out, "1 trial had"),
        [
            "1 trial had warnings (report.html shows each trial's):",
            &format!("  a [v × auto #0]: {NEGATIVE}"),
        ]
    );
}

#[test]
fn summary_md_counts_trials_and_quotes_the_first() {
    let md = file(&MarkdownExporter, &report(), "summary.md");
    let line = md.lines().find(|l| l.contains("had warnings")).unwrap();
    assert_eq!(
        line,
        format!(
            "⚠️ 4 trials had warnings (report.html shows each trial's); the first, `a` ({TARGET} × v × auto): {HUGE}"
        )
    );
}

#[test]
fn summary_json_lists_each_trial_with_its_warnings() {
    let json: serde_json::Value =
        serde_json::from_str(&file(&JsonExporter, &report(), "summary.json")).unwrap();
    let w = json["warnings"].as_array().unwrap();
    let got: Vec<(String, u64, Vec<String>)> = w
        .iter()
        .map(|x| {
            (
                x["case_id"].as_str().unwrap().to_string(),
                x["repeat"].as_u64().unwrap(),
                x["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        [
            ("a".to_string(), 0, s(&[HUGE])),
            ("a".to_string(), 1, s(&[HUGE])),
            ("b".to_string(), 1, s(&[NEGATIVE])),
            ("c".to_string(), 0, s(&[STRING, OTHER])),
        ]
    );
    assert_eq!(w[0]["cell"], format!("{TARGET} × v × auto"));
}

#[test]
fn report_html_counts_marks_rows_and_embeds_each_trials_warnings() {
    let mut r = report();
    // A hand-edited journal can make a warning huge: the page keeps its start.
    let huge = format!("implausible usage: {}", "9".repeat(200_000));
    r.trials[5].response.as_mut().unwrap().warnings = vec![huge.clone()];
    r.summary = Summary::build(
        "warned",
        &[(TARGET.to_string(), "v".to_string(), "auto".to_string())],
        &[],
        &r.trials,
        &[],
    );
    let html = super::html::render_html(&r).unwrap();
    assert!(html.contains("⚠ 5 trials had warnings"), "headline count");
    assert!(html.contains(r#"<option value="warn">with warnings</option>"#));
    // Rows with warnings carry the mark: a#0, a#1, b#1, c#0, c#1.
    let marked: Vec<&str> = html
        .lines()
        .filter(|l| l.starts_with(r#"<tr class="trow""#))
        .map(|l| l.contains(r#"title="this trial has warnings""#))
        .zip(["a0", "a1", "b0", "b1", "c0", "c1"])
        .filter(|(m, _)| *m)
        .map(|(_, t)| t)
        .collect();
    assert_eq!(marked, ["a0", "a1", "b1", "c0", "c1"]);

    let open = r#"<script type="application/json" id="tg-data">"#;
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let trials = data["trials"].as_array().unwrap();
    assert_eq!(trials[0]["response"]["warnings"][0], HUGE);
    assert!(trials[2]["response"].get("warnings").is_none());
    assert_eq!(trials[4]["response"]["warnings"][1], OTHER);
    let cut = trials[5]["response"]["warnings"][0].as_str().unwrap();
    assert!(cut.len() < 70_000, "{}", cut.len());
    assert!(cut.starts_with("implausible usage: 999"));
    assert!(
        cut.ends_with("more bytes, see trials.jsonl"),
        "{}",
        &cut[cut.len() - 60..]
    );
}
