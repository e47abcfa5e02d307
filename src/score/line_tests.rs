//! A loop trial's line keeps its conversation once and reads back as the record that
//! was written; other lines are as before.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::chat::ToolCall;
use crate::runner::journal::{Journal, parse};
use crate::tools::ToolOutcome;

const BIG: &str = "the same long result, ";

/// A loop trial of two rounds: a call answered by a long result, then a scripted user
/// turn and a text answer.
fn looped() -> TrialRecord {
    let call = ToolCall {
        id: Some("c1".into()),
        name: "fetch".into(),
        arguments: "{}".into(),
    };
    let first = Response {
        tool_calls: vec![call],
        latency_ms: 5.0,
        ..Response::default()
    };
    let result = ToolOutcome::result(&json!({ "page": BIG.repeat(200) }));
    let second = Response {
        text: Some("done".into()),
        state: Some(json!({"gemini": [{"thoughtSignature": "x"}]})),
        ..Response::default()
    };
    let rounds = vec![
        RoundRecord {
            sent: 2,
            user: None,
            response: first.clone(),
            outcomes: vec![result.clone()],
            tool_ms: 1.0,
        },
        RoundRecord {
            sent: 5,
            user: Some("and then?".into()),
            response: second.clone(),
            outcomes: Vec::new(),
            tool_ms: 0.0,
        },
    ];
    let messages = vec![
        Message::System {
            content: "be brief".into(),
        },
        Message::User {
            content: "fetch it".into(),
        },
        first.to_message(),
        Message::Tool {
            tool_call_id: "c1".into(),
            name: "fetch".into(),
            content: result.content.clone(),
            is_error: false,
        },
        Message::User {
            content: "and then?".into(),
        },
        second.to_message(),
    ];
    TrialRecord {
        case_id: "fetch-page".into(),
        kind: CaseKind::ShouldCall,
        tags: vec!["big".into()],
        target: "openai:m".into(),
        variant: "v".into(),
        tool_choice: ToolChoice::Auto,
        repeat: 1,
        stream: true,
        messages,
        response: Some(first),
        checks: None,
        verdict: Verdict::Fail,
        reasons: vec![Reason::new("wrong_answer", "no".to_string())],
        cost_usd: Some(0.5),
        distractors: None,
        episode: Some(EpisodeRecord {
            end_state: Vec::new(),
            rounds,
            stop: Some(crate::suite::trajectory::StopReason::Answered),
            checks: None,
        }),
        judge: Vec::new(),
    }
}

fn journal_of(records: &[TrialRecord]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trials.jsonl");
    let mut j = Journal::create(&path).unwrap();
    for r in records {
        j.append(r).unwrap();
    }
    drop(j);
    std::fs::read_to_string(&path).unwrap()
}

fn read_back(text: &str) -> Vec<TrialRecord> {
    parse(text.as_bytes(), Path::new("trials.jsonl"))
        .unwrap()
        .trials
}

#[test]
fn a_line_with_every_message_is_the_record_as_serialised() {
    let r = looped();
    assert_eq!(
        serde_json::to_string(&TrialLine::new(&r, r.messages.len())).unwrap(),
        serde_json::to_string(&r).unwrap()
    );
}

#[test]
fn a_loop_trial_stores_its_result_once_and_reads_back_whole() {
    let r = looped();
    let text = journal_of(std::slice::from_ref(&r));
    assert!(
        text.starts_with("{\"format\":3,\"case_id\":\"fetch-page\""),
        "{text}"
    );
    assert_eq!(text.matches(BIG).count(), 200, "the result is stored once");
    let line: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(line["messages"].as_array().unwrap().len(), 2);
    assert_eq!(read_back(&text), vec![r]);
}

#[test]
fn a_conversation_the_rounds_do_not_rebuild_is_written_whole_as_format_2() {
    // A scripted user turn after which the provider failed: no round holds it.
    let mut r = looped();
    r.messages.push(Message::User {
        content: "one more".into(),
    });
    assert_eq!(compact_context(&r), None);
    let text = journal_of(std::slice::from_ref(&r));
    assert!(text.starts_with("{\"format\":2,"), "{text}");
    assert_eq!(read_back(&text), vec![r]);
}

#[test]
fn old_lines_with_the_whole_conversation_read_as_before() {
    let r = looped();
    let json = serde_json::to_string(&r).unwrap();
    // Format 2 (and a format-3 line that kept every message) is read as it is.
    for format in [2, 3] {
        let text = format!("{{\"format\":{format},{}\n", &json[1..]);
        assert_eq!(read_back(&text), vec![r.clone()]);
    }
}

#[test]
fn single_turn_and_round_less_loop_lines_are_as_before() {
    let mut single = looped();
    single.episode = None;
    single.messages.truncate(2);
    let mut failed = looped();
    failed.episode.as_mut().unwrap().rounds.clear();
    failed.messages.truncate(2);
    for r in [single, failed] {
        let text = journal_of(std::slice::from_ref(&r));
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(text, format!("{{\"format\":2,{}\n", &json[1..]));
        assert_eq!(read_back(&text), vec![r]);
    }
}
