//! The page against hostile, huge and loop-heavy reports, and the trial table against
//! the template loop it replaced.

use indexmap::IndexMap;

use super::charts::{CHART_LABEL_CHARS, variant_chart};
use super::confusion::{Confusion, MAX_CONFUSION_TOOLS, NO_CALL, confusion};
use super::data::MAX_EMBEDDED_BYTES;
use super::*;
use crate::episode::RoundRecord;
use crate::judge::calls::{CallCheck, InvalidReason, Reason, TrialChecks};
use crate::provider::{Message, Response, ToolCall, ToolChoice, Usage};
use crate::report::summary::Summary;
use crate::report::{MatrixRef, RunMeta, RunSettings, SuiteRef, VariantTokens, format};
use crate::score::TrialRecord;
use crate::score::record::EpisodeRecord;
use crate::score::stats::Rate;
use crate::suite::CaseKind;
use crate::suite::trajectory::StopReason;
use crate::tools::ToolOutcome;

const SCRIPT: &str = "<script>alert(1)</script>";
const IMG: &str = "\"><img src=x onerror=alert(1)>";
const URL: &str = "https://evil.example/x.js";

fn call_check(tool: &str, invalid: Option<InvalidReason>, ungrounded: Vec<String>) -> CallCheck {
    CallCheck {
        tool: tool.into(),
        id: Some("c1".into()),
        json_ok: invalid != Some(InvalidReason::InvalidJson),
        known_tool: invalid != Some(InvalidReason::UnknownTool),
        distractor: false,
        schema_ok: Some(invalid.is_none()),
        schema_errors: if invalid == Some(InvalidReason::SchemaViolation) {
            vec![format!("\"city\" is not a string {SCRIPT}")]
        } else {
            Vec::new()
        },
        invalid,
        required_present: 1,
        required_total: 1,
        missing_required: Vec::new(),
        grounding_checked: 1,
        ungrounded,
    }
}

#[allow(clippy::too_many_arguments)]
fn trial(
    case: &str,
    kind: CaseKind,
    target: &str,
    variant: &str,
    repeat: u32,
    text: Option<&str>,
    calls: Vec<(&str, &str, Option<InvalidReason>, Vec<String>)>,
    verdict: Verdict,
) -> TrialRecord {
    let tool_calls: Vec<ToolCall> = calls
        .iter()
        .map(|(n, a, _, _)| ToolCall {
            id: Some("c1".into()),
            name: (*n).into(),
            arguments: (*a).into(),
        })
        .collect();
    let checks = (verdict != Verdict::Error).then(|| TrialChecks {
        kind,
        called: !calls.is_empty(),
        calls: calls
            .iter()
            .map(|(n, _, inv, ung)| call_check(n, *inv, ung.clone()))
            .collect(),
        expected_tools: if kind == CaseKind::ShouldNotCall {
            Vec::new()
        } else {
            vec!["get_weather".into()]
        },
        right_tools: None,
        args_matched: 1,
        args_expected: 1,
        behaviour: None,
    });
    TrialRecord {
        judge: Vec::new(),
        case_id: case.into(),
        kind,
        tags: Vec::new(),
        target: target.into(),
        variant: variant.into(),
        tool_choice: ToolChoice::Auto,
        repeat,
        stream: false,
        messages: vec![
            Message::System {
                content: "You are a helpful assistant.".into(),
            },
            Message::User {
                content: format!("What is the weather in Beijing? ({case})"),
            },
        ],
        response: (verdict != Verdict::Error).then(|| Response {
            text: text.map(str::to_string),
            tool_calls,
            usage: Some(Usage {
                input_tokens: 120,
                output_tokens: 14,
                estimated: false,
                ..Default::default()
            }),
            latency_ms: 412.0,
            ..Response::default()
        }),
        checks,
        verdict,
        reasons: match verdict {
            Verdict::Pass => Vec::new(),
            Verdict::Fail => vec![Reason {
                code: "args_mismatch".into(),
                message: format!("city: expected \"北京\", got {SCRIPT}"),
                rounds: Vec::new(),
            }],
            Verdict::Error => vec![Reason {
                code: "provider_error".into(),
                message: "HTTP 500".into(),
                rounds: Vec::new(),
            }],
        },
        cost_usd: Some(0.0002),
        distractors: None,
        episode: None,
    }
}

fn report_of(trials: Vec<TrialRecord>, variants: &[(&str, u64)]) -> RunReport {
    let targets: Vec<String> = {
        let mut t: Vec<String> = trials.iter().map(|t| t.target.clone()).collect();
        t.dedup();
        t.sort();
        t.dedup();
        t
    };
    let variant_tokens: Vec<VariantTokens> = variants
        .iter()
        .map(|(v, n)| VariantTokens {
            variant: (*v).into(),
            tool_definition_tokens: *n,
            ..VariantTokens::default()
        })
        .collect();
    let cells: Vec<(String, String, String)> = targets
        .iter()
        .flat_map(|t| {
            variants
                .iter()
                .map(move |(v, _)| (t.clone(), (*v).to_string(), "auto".to_string()))
        })
        .collect();
    let summary = Summary::build(
        &format!("weather {SCRIPT}"),
        &cells,
        &variant_tokens,
        &trials,
        &[],
    );
    let meta = RunMeta {
        run_format: 1,
        toolgauge_version: "0.1.0".into(),
        suite: SuiteRef {
            name: "weather".into(),
            path: "suites/weather.yaml".into(),
            hash: "0123456789abcdef0123".into(),
            description: None,
        },
        matrix: MatrixRef {
            targets: targets.clone(),
            variants: variants.iter().map(|v| v.0.to_string()).collect(),
            tool_choice: vec!["auto".into()],
            repeats: 2,
        },
        sources: targets
            .iter()
            .map(|t| (t.clone(), "replay".to_string()))
            .collect(),
        tools: IndexMap::new(),
        tool_definition_tokens: variants.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
        variant_details: IndexMap::new(),
        trials_planned: trials.len() as u64,
        trials_written: trials.len() as u64,
        started_at: "2025-01-01T00:00:00Z".into(),
        finished_at: Some("2025-01-01T00:01:00Z".into()),
        status: "complete".into(),
        stop_reason: None,
        settings: RunSettings::default(),
        selection: None,
        merged_from: Vec::new(),
    };
    RunReport {
        meta,
        trials,
        summary,
    }
}

fn hostile_report() -> RunReport {
    use CaseKind::*;
    use Verdict::*;
    let xss_case = format!("case {SCRIPT} {IMG}");
    let both = format!("{SCRIPT} {IMG}");
    let t = "openai:gpt-x";
    let trials = vec![
        // The text answer carries both payloads and a URL.
        trial(
            "chat",
            ShouldNotCall,
            t,
            "terse",
            0,
            Some(&format!("{both} see {URL}")),
            vec![],
            Pass,
        ),
        trial(
            "chat",
            ShouldNotCall,
            t,
            "verbose",
            0,
            Some("Hello"),
            vec![],
            Pass,
        ),
        // A tool-call argument carries them; ungrounded too.
        trial(
            "weather",
            ShouldCall,
            t,
            "terse",
            0,
            None,
            vec![(
                "get_weather",
                &format!(r#"{{"city": "{}"}}"#, both.replace('"', "\\\"")),
                None,
                vec![format!("city = {IMG}")],
            )],
            Fail,
        ),
        trial(
            "weather",
            ShouldCall,
            t,
            "verbose",
            0,
            None,
            vec![("get_weather", r#"{"city": "北京"}"#, None, vec![])],
            Pass,
        ),
        // The case id carries them; an invalid call with broken JSON.
        trial(
            &xss_case,
            ShouldCall,
            t,
            "terse",
            0,
            None,
            vec![(
                &format!("send_{IMG}"),
                &format!("{{not json {SCRIPT}"),
                Some(InvalidReason::UnknownTool),
                vec![],
            )],
            Fail,
        ),
        trial(
            &xss_case,
            ShouldCall,
            t,
            "verbose",
            0,
            None,
            vec![(
                "get_weather",
                r#"{"city": 3}"#,
                Some(InvalidReason::SchemaViolation),
                vec![],
            )],
            Fail,
        ),
        trial("weather", ShouldCall, t, "terse", 1, None, vec![], Error),
    ];
    report_of(trials, &[("terse", 180), ("verbose", 420)])
}

/// The embedded JSON block and the page without it.
fn split_data(html: &str) -> (&str, String) {
    let open = r#"<script type="application/json" id="tg-data">"#;
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").expect("end of data block");
    let rest = format!("{}{}", &html[..start], &html[end..]);
    (&html[start..end], rest)
}

/// The visible text of each row label of the cell chart, in row order.
fn chart_row_labels(html: &str) -> Vec<String> {
    html.split(r#"<text class="label""#)
        .skip(1)
        .map(|t| {
            let after_title = &t[t.find("</title>").unwrap() + "</title>".len()..];
            // As a reader sees it: `/` is escaped in the page (`&#x2f;`).
            after_title[..after_title.find("</text>").unwrap()].replace("&#x2f;", "/")
        })
        .collect()
}

#[test]
fn chart_labels_keep_variant_and_tool_choice_and_what_tells_targets_apart() {
    let long = |n: u32| format!("openai-compatible:fake-{n}@http://127.0.0.1:8080/v1");
    let trials = vec![
        trial(
            "a",
            CaseKind::ShouldCall,
            &long(1),
            "terse",
            0,
            None,
            vec![],
            Verdict::Fail,
        ),
        trial(
            "a",
            CaseKind::ShouldCall,
            &long(1),
            "verbose",
            0,
            None,
            vec![],
            Verdict::Fail,
        ),
        trial(
            "a",
            CaseKind::ShouldCall,
            &long(2),
            "terse",
            0,
            None,
            vec![],
            Verdict::Fail,
        ),
        trial(
            "a",
            CaseKind::ShouldCall,
            &long(2),
            "verbose",
            0,
            None,
            vec![],
            Verdict::Fail,
        ),
    ];
    let report = report_of(trials, &[("terse", 10), ("verbose", 20)]);
    let html = render_html(&report).unwrap();
    let labels = chart_row_labels(&html);
    assert_eq!(labels.len(), 5, "{labels:?}");
    assert_eq!(labels[4], "overall");
    for (label, (n, variant)) in
        labels
            .iter()
            .zip([(1, "terse"), (1, "verbose"), (2, "terse"), (2, "verbose")])
    {
        assert!(
            label.ends_with(&format!(" × {variant} × auto")),
            "variant × tool_choice whole: {label}"
        );
        assert!(
            label.contains(&format!("fake-{n}")),
            "the differing part: {label}"
        );
        assert!(format::width(label) <= CHART_LABEL_CHARS, "{label}");
        // The tooltip has the whole label.
        let whole = esc(&format!("{} × {variant} × auto", long(n)));
        assert!(html.contains(&format!("<title>{whole}</title>")));
    }
    // One target: its name is in the headline, the rows are variant × tool_choice.
    let one = report_of(
        vec![
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(1),
                "terse",
                0,
                None,
                vec![],
                Verdict::Pass,
            ),
            trial(
                "a",
                CaseKind::ShouldCall,
                &long(1),
                "verbose",
                0,
                None,
                vec![],
                Verdict::Pass,
            ),
        ],
        &[("terse", 10), ("verbose", 20)],
    );
    assert_eq!(
        chart_row_labels(&render_html(&one).unwrap()),
        ["terse × auto", "verbose × auto", "overall"]
    );
}

#[test]
fn huge_answers_and_arguments_are_cut_in_the_page_with_a_note() {
    let text = "a".repeat(MAX_EMBEDDED_BYTES + 1000);
    // A multi-byte character across the cut: the cut falls before it.
    let args = format!(
        "{{\"q\": \"{}北{}\"}}",
        "b".repeat(MAX_EMBEDDED_BYTES - 8),
        "c".repeat(5000)
    );
    let t = trial(
        "huge",
        CaseKind::ShouldCall,
        "openai:gpt-4o-mini",
        "v",
        0,
        Some(&text),
        vec![("get_weather", args.as_str(), None, vec![])],
        Verdict::Pass,
    );
    let report = report_of(vec![t], &[("v", 10)]);
    let html = render_html(&report).unwrap();
    let (data, _) = split_data(&html);
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    let response = &data["trials"][0]["response"];
    let shown = response["text"].as_str().unwrap();
    assert_eq!(
        shown,
        format!(
            "{}\n… 1000 more bytes, see trials.jsonl",
            "a".repeat(MAX_EMBEDDED_BYTES)
        )
    );
    let shown = response["tool_calls"][0]["arguments"].as_str().unwrap();
    // 7 bytes of `{"q": "` and the b's fill 65535 bytes; `北` (3 bytes) does not fit.
    let kept = 7 + MAX_EMBEDDED_BYTES - 8;
    assert_eq!(
        shown,
        format!(
            "{}\n… {} more bytes, see trials.jsonl",
            &args[..kept],
            args.len() - kept
        )
    );
    // The page stays near the limit, not the size of the answer.
    assert!(
        html.len() < 3 * MAX_EMBEDDED_BYTES + 200_000,
        "{}",
        html.len()
    );
    // Small responses are embedded whole.
    let small = trial(
        "s",
        CaseKind::ShouldCall,
        "t",
        "v",
        0,
        Some("fine"),
        vec![],
        Verdict::Pass,
    );
    let html = render_html(&report_of(vec![small], &[("v", 10)])).unwrap();
    let (data, _) = split_data(&html);
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(data["trials"][0]["response"]["text"], "fine");
    assert_eq!(data["trials"][0]["cost"], "$0.0002");
}

#[test]
fn hostile_text_renders_as_text_and_data_round_trips() {
    let report = hostile_report();
    let html = render_html(&report).unwrap();
    // No payload survives unescaped, anywhere (data block included).
    assert!(!html.contains("<script>alert(1)"));
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("<img"));
    // ... but they are shown, escaped, as text (minijinja also escapes `/`).
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
    // Only the page's own scripts: the data block and the inline script.
    assert_eq!(html.matches("<script").count(), 2, "{html}");
    assert!(!html.contains("<script src"));
    assert!(!html.contains("<link"));
    assert!(!html.contains("innerHTML"));

    let (data, rest) = split_data(&html);
    // No URL outside the (escaped) data.
    assert!(!rest.contains("http://") && !rest.contains("https://"));
    assert!(!rest.contains("url("));
    assert!(!rest.contains("@import"));
    // Within the data block nothing can close it or open a tag.
    assert!(!data.contains('<') && !data.contains('>'));

    // Content.
    assert!(rest.contains("<svg"), "SVG charts");
    assert!(rest.contains(r#"id="confusion""#));
    assert!(rest.contains(r#"id="trials""#));
    assert!(rest.contains(r#"id="flips""#));
    assert_eq!(
        rest.matches(r#"<tr class="trow""#).count(),
        report.trials.len()
    );
    assert!(rest.contains("replay"));
    assert!(rest.contains("openai:gpt-x"));
    // Cases flipping between variants: chat passes under both, weather flips.
    let flips = &rest[rest.find(r#"id="flips""#).unwrap()..];
    let flips = &flips[..flips.find("</table>").unwrap()];
    assert!(flips.contains("weather"));
    assert!(!flips.contains(">chat<"));

    // The data parses back and holds the payloads verbatim.
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), report.trials.len());
    assert_eq!(
        trials[0]["response"]["text"].as_str().unwrap(),
        format!("{SCRIPT} {IMG} see {URL}")
    );
    let args = trials[2]["response"]["tool_calls"][0]["arguments"]
        .as_str()
        .unwrap();
    assert!(args.contains(SCRIPT) && args.contains(IMG), "{args}");
    assert_eq!(
        trials[4]["case_id"].as_str().unwrap(),
        format!("case {SCRIPT} {IMG}")
    );
    assert_eq!(
        trials[4]["checks"]["calls"][0]["invalid"].as_str(),
        Some("unknown_tool")
    );
    // Conversations are shared: two per case, three cases.
    assert_eq!(v["convs"].as_array().unwrap().len(), 3);
    assert_eq!(trials[1]["conv"], trials[0]["conv"]);
    assert_eq!(
        v["cells"][trials[0]["cell"].as_u64().unwrap() as usize],
        "openai:gpt-x × terse × auto"
    );
}

#[test]
fn confusion_matrix_counts_expected_against_called() {
    use CaseKind::*;
    use Verdict::*;
    let t = "m";
    let trials = vec![
        trial(
            "a",
            ShouldCall,
            t,
            "v",
            0,
            None,
            vec![("get_weather", "{}", None, vec![])],
            Pass,
        ),
        trial(
            "b",
            ShouldCall,
            t,
            "v",
            0,
            None,
            vec![("send_email", "{}", None, vec![])],
            Fail,
        ),
        trial("c", ShouldCall, t, "v", 0, Some("no"), vec![], Fail),
        trial("d", ShouldNotCall, t, "v", 0, Some("hi"), vec![], Pass),
        trial(
            "e",
            ShouldNotCall,
            t,
            "v",
            0,
            None,
            vec![("get_weather", "{}", None, vec![])],
            Fail,
        ),
        trial("f", ShouldCall, t, "v", 0, None, vec![], Error),
    ];
    let Confusion {
        labels,
        rows,
        others,
        ..
    } = confusion(&trials);
    assert_eq!(others, 0);
    assert_eq!(labels, vec!["get_weather", "send_email", "no call"]);
    let grid: Vec<Vec<u64>> = rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.n).collect())
        .collect();
    assert_eq!(grid, vec![vec![1, 1, 1], vec![0, 0, 0], vec![1, 0, 1]]);
}

#[test]
fn a_confusion_matrix_of_many_tools_keeps_the_frequent_ones_and_names_the_rest() {
    // 60 tools (an imported benchmark offers hundreds): tool i is expected in i + 1
    // trials and called right, except one rare confusion and one missed call.
    let mut trials = Vec::new();
    for i in 0..60 {
        let name = format!("tool_{i:02}");
        for _ in 0..=i {
            let mut t = trial(
                "a",
                CaseKind::ShouldCall,
                "m",
                "v",
                0,
                None,
                vec![(name.as_str(), "{}", None, vec![])],
                Verdict::Pass,
            );
            t.checks.as_mut().unwrap().expected_tools = vec![name.clone()];
            trials.push(t);
        }
    }
    let mut rare = trial(
        "r",
        CaseKind::ShouldCall,
        "m",
        "v",
        0,
        None,
        vec![("tool_01", "{}", None, vec![])],
        Verdict::Fail,
    );
    rare.checks.as_mut().unwrap().expected_tools = vec!["tool_00".into()];
    let mut missed = trial(
        "s",
        CaseKind::ShouldCall,
        "m",
        "v",
        0,
        Some("no"),
        vec![],
        Verdict::Fail,
    );
    missed.checks.as_mut().unwrap().expected_tools = vec!["tool_59".into()];
    trials.extend([rare, missed]);
    let c = confusion(&trials);
    assert_eq!(c.others, 60 - (MAX_CONFUSION_TOOLS - 1));
    assert_eq!(c.labels.len(), MAX_CONFUSION_TOOLS + 1, "{:?}", c.labels);
    assert_eq!(
        c.labels[MAX_CONFUSION_TOOLS - 1],
        format!("other ({} tools)", c.others)
    );
    assert_eq!(c.labels.last().map(String::as_str), Some(NO_CALL));
    // The most frequent tools keep their own row: tool_59 (60 trials) down to tool_37.
    assert!(c.labels.contains(&"tool_59".to_string()) && c.labels.contains(&"tool_37".to_string()));
    assert!(!c.labels.contains(&"tool_36".to_string()));
    // Nothing is lost: the cells add up to every pair counted.
    let cells: u64 = c.rows.iter().map(|r| r.total).sum();
    assert_eq!(cells, (1..=60).sum::<u64>() + 2);
    // "other" against "other" is not a diagonal (tool_00 called as tool_01 is in it).
    let other = &c.rows[MAX_CONFUSION_TOOLS - 1];
    assert!(!other.cells[MAX_CONFUSION_TOOLS - 1].diagonal);
    // tool_00 to tool_36 called right (1 + 2 + ... + 37 trials), and the rare one.
    assert_eq!(
        other.cells[MAX_CONFUSION_TOOLS - 1].n,
        (1..=37).sum::<u64>() + 1
    );
    // The confusions by name include the rare one.
    let named: Vec<(&str, &str, u64)> = c
        .top
        .iter()
        .map(|t| (t.expected.as_str(), t.called.as_str(), t.n))
        .collect();
    assert_eq!(
        named,
        vec![("tool_00", "tool_01", 1), ("tool_59", NO_CALL, 1)]
    );
    assert_eq!(c.top_total, 2);
}

fn big_report() -> RunReport {
    use CaseKind::*;
    use Verdict::*;
    let variants = [("terse", 180), ("plain", 260), ("verbose", 420)];
    let targets = ["openai:gpt-4.1-mini", "anthropic:claude-haiku"];
    let mut trials = Vec::with_capacity(10_000);
    let mut k = 0usize;
    'outer: for case in 0.. {
        for target in targets {
            for (variant, _) in variants {
                for repeat in 0..3 {
                    if trials.len() == 10_000 {
                        break 'outer;
                    }
                    k += 1;
                    let id = format!("case_{case:04}");
                    let t = match k % 7 {
                        0 => trial(
                            &id,
                            ShouldNotCall,
                            target,
                            variant,
                            repeat,
                            Some("Sure, no tool is needed here."),
                            vec![],
                            Pass,
                        ),
                        1 => trial(&id, ShouldCall, target, variant, repeat, None, vec![], Fail),
                        2 => trial(
                            &id,
                            ShouldCall,
                            target,
                            variant,
                            repeat,
                            None,
                            vec![(
                                "get_weather",
                                r#"{"city": "Shanghai", "date": "2024-05-01"}"#,
                                None,
                                vec![r#"date = "2024-05-01""#.into()],
                            )],
                            Pass,
                        ),
                        3 => trial(
                            &id,
                            ShouldCall,
                            target,
                            variant,
                            repeat,
                            None,
                            vec![(
                                "get_weather",
                                r#"{"city": 3}"#,
                                Some(InvalidReason::SchemaViolation),
                                vec![],
                            )],
                            Fail,
                        ),
                        _ => trial(
                            &id,
                            ShouldCall,
                            target,
                            variant,
                            repeat,
                            None,
                            vec![(
                                "get_weather",
                                r#"{"city": "Beijing", "unit": "c"}"#,
                                None,
                                vec![],
                            )],
                            Pass,
                        ),
                    };
                    trials.push(t);
                }
            }
        }
    }
    report_of(trials, &variants)
}

#[test]
fn ten_thousand_trials_render_small() {
    let report = big_report();
    let start = std::time::Instant::now();
    let html = render_html(&report).unwrap();
    let took = start.elapsed();
    let (data, _) = split_data(&html);
    println!(
        "10,000 trials: report.html {:.2} MB (data {:.2} MB), rendered in {:.0} ms",
        html.len() as f64 / 1e6,
        data.len() as f64 / 1e6,
        took.as_secs_f64() * 1e3
    );
    assert!(html.len() < 10_000_000, "{} bytes", html.len());
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["trials"].as_array().unwrap().len(), 10_000);
}

/// `t` turned into a loop trial of two rounds: a call answered by an injected
/// failure whose message carries markup, then a text answer after a scripted turn.
fn as_loop(mut t: TrialRecord, stop: Option<StopReason>) -> TrialRecord {
    let call = ToolCall {
        id: Some("c1".into()),
        name: "get_weather".into(),
        arguments: r#"{"city": "Paris"}"#.into(),
    };
    let usage = |input_tokens| {
        Some(Usage {
            input_tokens,
            output_tokens: 5,
            estimated: false,
            ..Default::default()
        })
    };
    let first = Response {
        tool_calls: vec![call.clone()],
        usage: usage(100),
        ..Response::default()
    };
    let context = t.messages.len();
    t.messages.extend([
        Message::Assistant {
            content: None,
            tool_calls: vec![call],
            state: None,
        },
        Message::Tool {
            tool_call_id: "c1".into(),
            name: "get_weather".into(),
            content: format!("down {SCRIPT}"),
            is_error: true,
        },
        Message::User {
            content: "and now?".into(),
        },
    ]);
    t.response = Some(first.clone());
    t.episode = Some(EpisodeRecord {
        end_state: Vec::new(),
        rounds: vec![
            RoundRecord {
                sent: context,
                user: None,
                response: first,
                outcomes: vec![ToolOutcome::fault(
                    crate::suite::tool_error::ToolErrorKind::ServerError,
                    &format!("down {SCRIPT}"),
                )],
                tool_ms: 1.5,
            },
            RoundRecord {
                sent: context + 3,
                user: Some("and now?".into()),
                response: Response {
                    text: Some(format!("Sorry {IMG}")),
                    usage: usage(160),
                    ..Response::default()
                },
                outcomes: Vec::new(),
                tool_ms: 0.0,
            },
        ],
        stop,
        checks: None,
    });
    t
}

#[test]
fn loop_trials_add_the_loop_section_columns_and_their_episode() {
    use CaseKind::*;
    use Verdict::*;
    let single = trial("chat", ShouldNotCall, "m", "v", 0, Some("hi"), vec![], Pass);
    let looped = |repeat, stop| {
        as_loop(
            trial("w", ShouldCall, "m", "v", repeat, None, vec![], Fail),
            stop,
        )
    };
    let report = report_of(
        vec![
            single.clone(),
            looped(0, Some(StopReason::Answered)),
            looped(1, None),
        ],
        &[("v", 10)],
    );
    let html = render_html(&report).unwrap();
    let (data, rest) = split_data(&html);
    // Nothing of the tool results or answers is markup, and the script count holds.
    assert!(!html.contains("<script>alert") && !html.contains("<img"));
    assert_eq!(html.matches("<script").count(), 2);
    // The section: one cell row and overall, each 2 loop trials, 1 answered, 1 error.
    assert!(rest.contains(r##"<a href="#loops">Tool loops</a>"##));
    let stops = &rest[rest.find(r#"<table id="stops">"#).unwrap()..];
    let stops = &stops[..stops.find("</table>").unwrap()];
    let counts = r#"<td class="n">2</td><td class="n">1</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n">1</td>"#;
    assert_eq!(stops.matches(counts).count(), 2, "{stops}");
    // The chart: rounds 1 and 2, means 100 and 160 over 2 trials each.
    assert!(rest.contains("round 1: 100 input tokens on average over 2 trial(s)"));
    assert!(rest.contains("round 2: 160 input tokens on average over 2 trial(s)"));
    // The table's loop columns: rounds, calls, stop; dashes for the single-turn trial.
    assert!(rest.contains(r#"<td class="n">2</td><td class="n">1</td><td>answered</td>"#));
    assert!(rest.contains(r#"<td class="n">2</td><td class="n">1</td><td>error</td>"#));
    assert!(rest.contains(r#"<td class="n">–</td><td class="n">–</td><td>–</td>"#));
    // The data: the episode whole, the context as the conversation (shared by both
    // loop trials), no separate first response.
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    let t = &v["trials"][1];
    assert!(t.get("response").is_none());
    assert_eq!(t["conv"], v["trials"][2]["conv"]);
    assert_eq!(
        v["convs"][t["conv"].as_u64().unwrap() as usize]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let rounds = t["episode"]["rounds"].as_array().unwrap();
    assert_eq!(rounds[0]["outcomes"][0]["fault"], true);
    assert!(
        rounds[0]["outcomes"][0]["content"]
            .as_str()
            .unwrap()
            .contains(SCRIPT)
    );
    assert_eq!(rounds[1]["user"], "and now?");
    assert_eq!(rounds[1]["response"]["text"], format!("Sorry {IMG}"));
    assert_eq!(t["episode"]["stop"], "answered");
    assert!(v["trials"][2]["episode"].get("stop").is_none());
    // Without loop trials none of it is there (the page is as before loops existed).
    let html = render_html(&report_of(vec![single], &[("v", 10)])).unwrap();
    for loop_only in [
        "id=\"loops\"",
        "Tool loops",
        "details.round",
        "singleTranscript",
        "episode",
    ] {
        assert!(!html.contains(loop_only), "{loop_only}");
    }
}

#[test]
fn behaviour_trials_add_their_matrix_rates_and_each_trials_facts_and_judge() {
    use crate::judge::model::{JudgeCall, JudgeQuestion};
    // The sample of score::behaviour (12 trials with an expected behaviour).
    let mut trials = crate::score::behaviour::tests::sample();
    // A judge decided #12 (CA expected, direct observed), with a hostile rationale.
    let last = trials.iter_mut().find(|t| t.case_id == "c12").unwrap();
    let facts = last.checks.as_mut().unwrap().behaviour.as_mut().unwrap();
    facts.by = crate::behaviour::ObservedBy::Judge;
    facts.why = Some(format!("answers the capital {SCRIPT}"));
    last.judge = vec![JudgeCall {
        question: JudgeQuestion::Behaviour,
        target: "openai:judge".into(),
        behaviour: Some(crate::behaviour::Behaviour::Direct),
        pass: None,
        rationale: format!("it answers {IMG}"),
        error: None,
        usage: None,
        cost_usd: None,
        latency_ms: 1.0,
    }];
    let report = report_of(trials, &[("default", 10)]);
    let html = render_html(&report).unwrap();
    let (data, rest) = split_data(&html);
    assert!(!html.contains("<img") && !html.contains("<script>alert"));
    assert!(rest.contains(r##"<a href="#behaviour">Behaviour</a>"##));
    let section = &rest[rest.find(r#"<section id="behaviour">"#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    // One cell and overall (the same trials): macro-F1 53/84 = 0.631 with the pinned
    // bootstrap interval, both hallucination rates 1/4 = 25.0% [5–70%].
    assert_eq!(section.matches(r#"<h3 class="mono">"#).count(), 2);
    assert!(
        section.contains(r#"<b class="macro-f1">0.631</b><span class="ci">0.293–0.896</span>"#),
        "{section}"
    );
    assert_eq!(
        section
            .matches(r#"<b title="1&#x2f;4">25.0%</b><span class="ci">5–70%</span> (1&#x2f;4)"#)
            .count(),
        4,
        "{section}"
    );
    // The cannot_answer row: 1 call (25%), 0, 2 right (50%), 1 direct (25%), n 4.
    assert!(section.contains(r#"<tr><td class="mono">cannot_answer</td><td class="n fail">1 <span class="ci">25%</span></td><td class="n">0 <span class="ci">0%</span></td><td class="n pass">2 <span class="ci">50%</span></td><td class="n fail">1 <span class="ci">25%</span></td><td class="n">4</td></tr>"#), "{section}");
    // No trial expected direct: no such row, but its scores (shown twice) are listed.
    let matrix = &section[section.find(r#"<table class="bmatrix">"#).unwrap()..];
    let matrix = &matrix[..matrix.find("</table>").unwrap()];
    assert!(!matrix.contains(r#"mono">direct<"#), "{matrix}");
    assert!(section.contains(r#"<tr><td class="mono">direct</td><td class="n">0</td>"#));
    assert!(
        section.contains("Decided by: 4 call, 7 classifier, 1 judge."),
        "{section}"
    );
    // The detail script and each trial's facts and judge calls in the data.
    assert!(html.contains("plainTranscript"));
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    let t = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["case_id"] == "c12")
        .unwrap();
    assert_eq!(t["checks"]["behaviour"]["by"], "judge");
    assert_eq!(t["judge"][0]["rationale"], format!("it answers {IMG}"));
    assert_eq!(t["judge"][0]["behaviour"], "direct");
    // Without behaviour facts none of it is there.
    let plain = trial(
        "chat",
        CaseKind::ShouldNotCall,
        "m",
        "v",
        0,
        Some("hi"),
        vec![],
        Verdict::Pass,
    );
    let html = render_html(&report_of(vec![plain], &[("v", 10)])).unwrap();
    for only in ["id=\"behaviour\"", "plainTranscript", "\"judge\""] {
        assert!(!html.contains(only), "{only}");
    }
}

#[test]
fn svg_labels_are_escaped() {
    let r = Rate::new(3, 4);
    let svg = variant_chart(&[(IMG.to_string(), 10, r)]);
    assert!(!svg.contains("<img"));
    assert!(svg.contains("&lt;img"));
    assert_eq!(truncate("北京abc", 2), "北京…");
    assert_eq!(truncate("ab", 2), "ab");
}

/// The trial table as the template wrote it before `write_trial_rows` (the loop this
/// function replaced), kept here as the reference for its bytes.
const ROWS_TEMPLATE: &str = r#"{% for t in trials %}
<tr class="trow" id="t-{{ t.i }}"><td><details><summary>{{ t.case }}</summary></details></td><td>{{ t.kind }}</td><td>{{ t.cell }}</td><td>{{ t.repeat }}</td><td class="{{ t.verdict }}">{{ t.verdict }}{% if t.warn %} <span class="warn" title="this trial has warnings">⚠</span>{% endif %}</td>{% if loops %}{% if t.stop %}<td class="n">{{ t.rounds }}</td><td class="n">{{ t.calls }}</td><td>{{ t.stop }}</td>{% else %}<td class="n">–</td><td class="n">–</td><td>–</td>{% endif %}{% endif %}<td>{{ t.reason }}</td></tr>
{% endfor %}"#;

/// `report`'s trial table through [`ROWS_TEMPLATE`], with the page's settings.
fn rows_by_template(report: &RunReport) -> String {
    let view = View::build(report);
    let trials: Vec<serde_json::Value> = report
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let summary = loop_view::trial_summary(t);
            serde_json::json!({
                "i": i,
                "case": t.case_id,
                "kind": t.kind.as_str(),
                "cell": view.cell_labels[view.cell_index[i]],
                "repeat": t.repeat,
                "verdict": verdict_str(t.verdict),
                "reason": t.reasons.first().map_or(String::new(), |r| {
                    truncate(&format!("{}: {}", r.code, r.message), REASON_CHARS)
                }),
                "warn": t.response.as_ref().is_some_and(|r| !r.warnings.is_empty())
                    || t.episode.as_ref().is_some_and(|e| {
                        e.rounds.iter().any(|r| !r.response.warnings.is_empty())
                    }),
                "rounds": summary.map(|s| s.0),
                "calls": summary.map(|s| s.1),
                "stop": summary.map(|s| s.2),
            })
        })
        .collect();
    let mut env = page_environment().unwrap();
    env.add_template("rows.html.j2", ROWS_TEMPLATE).unwrap();
    env.get_template("rows.html.j2")
        .unwrap()
        .render(context! { trials => Value::from(Serde(&trials)), loops => view.loops.is_some() })
        .unwrap()
}

fn rows_written(report: &RunReport) -> String {
    let mut out = Vec::new();
    write_trial_rows(&mut out, report, &View::build(report)).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn trial_rows_are_what_the_template_loop_wrote() {
    use CaseKind::*;
    use Verdict::*;
    // Markup in case ids, targets, variants and reasons; a reason over the cut, in
    // characters of several bytes; warnings on a response and on a loop round.
    let mut hostile = hostile_report();
    let long = format!("{}{SCRIPT}", "北".repeat(REASON_CHARS));
    hostile.trials[0].reasons = vec![Reason {
        code: "x&y".into(),
        message: long,
        rounds: Vec::new(),
    }];
    if let Some(r) = hostile.trials[0].response.as_mut() {
        r.warnings.push("usage looked implausible".into());
    }
    let rows = rows_written(&hostile);
    assert_eq!(rows, rows_by_template(&hostile));
    assert_eq!(rows.lines().count(), hostile.trials.len());
    assert!(rows.contains("this trial has warnings") && !rows.contains("<script>"));

    let single = trial(
        "<b>",
        ShouldNotCall,
        "m",
        "v'\"",
        0,
        Some("hi"),
        vec![],
        Pass,
    );
    let mut looped = as_loop(
        trial("w", ShouldCall, "m", "v'\"", 1, None, vec![], Fail),
        Some(StopReason::Answered),
    );
    if let Some(e) = looped.episode.as_mut() {
        e.rounds[0].response.warnings.push("late usage".into());
    }
    let errored = as_loop(
        trial("w", ShouldCall, "m", "v'\"", 2, None, vec![], Error),
        None,
    );
    let loops = report_of(vec![single, looped, errored], &[("v'\"", 10)]);
    let rows = rows_written(&loops);
    assert_eq!(rows, rows_by_template(&loops));
    assert_eq!(rows.matches("<td class=\"n\">").count(), 6);

    // No trial: no row, as the loop wrote none.
    let empty = report_of(Vec::new(), &[("v", 10)]);
    assert_eq!(rows_written(&empty), "");
    assert_eq!(rows_by_template(&empty), "");
}
