//! Scoring the behaviour of a text answer: `clarify`, `cannot_answer` and `direct`
//! outcomes, `behaviour:` of `should_not_call` cases, the judge's verdicts, and the
//! behaviour facts every trial of such a suite records.

use std::path::Path;

use super::*;
use crate::behaviour::{Behaviour, BehaviourFacts, ObservedBy};
use crate::judge::model::JudgeVerdicts;

const SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - id: call
    kind: should_call
    prompt: Weather in Paris?
    expect: {calls: [{tool: get_weather, args: {city: Paris}}]}
  - id: cannot
    kind: should_not_call
    prompt: Book me a flight to Rome.
    expect: {behaviour: cannot_answer}
  - id: direct_hello
    kind: should_not_call
    prompt: Say hello.
    expect: {behaviour: direct, contains: [hello]}
  - id: plain
    kind: should_not_call
    prompt: Hi
  - id: vague
    kind: ambiguous
    prompt: What's the weather?
    expect:
      any_of:
        - {clarify: true, contains: [city]}
        - calls: [{tool: get_weather, args: {city: Paris}}]
  - id: text_only
    kind: ambiguous
    prompt: What's the weather on Mars?
    expect: {any_of: [{cannot_answer: true}, {direct: true}]}
  - id: ask_only
    kind: ambiguous
    prompt: What's the weather?
    expect: {any_of: [{clarify: true, contains: [city]}, {clarify: true, contains: [town]}]}
"#;

/// The same case kinds in a suite that uses none of the issue-13 keys.
const OLD_SUITE: &str = r#"
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - id: call
    kind: should_call
    prompt: Weather in Paris?
    expect: {calls: [{tool: get_weather, args: {city: Paris}}]}
  - id: plain
    kind: should_not_call
    prompt: Hi
  - id: vague
    kind: ambiguous
    prompt: What's the weather?
    expect:
      any_of:
        - clarify: true
        - calls: [{tool: get_weather, args: {city: Paris}}]
"#;

fn load(text: &str) -> Suite {
    crate::suite::load_str(text, Path::new("t.yaml")).unwrap()
}

fn judged(
    suite: &Suite,
    case: &str,
    mode: ToolChoice,
    r: &Response,
    verdicts: Option<&JudgeVerdicts>,
) -> (TrialChecks, Vec<Reason>) {
    let case = suite
        .cases
        .iter()
        .find(|c| c.id == case)
        .unwrap_or_else(|| panic!("no case {case}"));
    CaseScorer::new(suite, case).score_judged("default", &mode, r, verdicts)
}

fn judge_says(b: Behaviour, why: &str) -> JudgeVerdicts {
    JudgeVerdicts {
        behaviour: Some((b, why.to_string())),
        rubric: None,
    }
}

fn text(t: &str) -> Response {
    Response {
        text: Some(t.to_string()),
        ..Response::default()
    }
}

fn paris() -> Response {
    Response {
        tool_calls: vec![ToolCall {
            id: Some("c1".into()),
            name: "get_weather".into(),
            arguments: r#"{"city": "Paris"}"#.into(),
        }],
        ..Response::default()
    }
}

fn codes(reasons: &[Reason]) -> Vec<&str> {
    reasons.iter().map(|r| r.code.as_str()).collect()
}

fn facts(
    expected: Option<Behaviour>,
    observed: Behaviour,
    by: ObservedBy,
    why: Option<&str>,
) -> Option<BehaviourFacts> {
    Some(BehaviourFacts {
        expected,
        observed,
        by,
        why: why.map(str::to_string),
    })
}

#[test]
fn should_not_call_behaviour_passes_on_the_judges_matching_verdict() {
    let s = load(SUITE);
    let v = judge_says(Behaviour::CannotAnswer, "It says no tool can book flights.");
    let (c, reasons) = judged(
        &s,
        "cannot",
        ToolChoice::Auto,
        &text("I can't book flights."),
        Some(&v),
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::CannotAnswer),
            Behaviour::CannotAnswer,
            ObservedBy::Judge,
            Some("It says no tool can book flights.")
        )
    );
}

#[test]
fn should_not_call_behaviour_fails_on_another_behaviour_naming_who_decided() {
    let s = load(SUITE);
    let v = judge_says(Behaviour::Direct, "  It gives a flight time.  ");
    let (c, reasons) = judged(
        &s,
        "cannot",
        ToolChoice::Auto,
        &text("Your flight leaves at 9."),
        Some(&v),
    );
    assert_eq!(codes(&reasons), vec!["wrong_behaviour"]);
    assert_eq!(
        reasons[0].message,
        "expected a text answer that is `cannot_answer` (says it cannot help); \
         the judge read it as `direct` (answers directly): \"It gives a flight time.\""
    );
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::CannotAnswer),
            Behaviour::Direct,
            ObservedBy::Judge,
            Some("It gives a flight time.")
        )
    );
    // The text checks still count, next to the behaviour.
    let v = judge_says(Behaviour::RequestForInfo, "");
    let (_, reasons) = judged(
        &s,
        "direct_hello",
        ToolChoice::Auto,
        &text("Which language?"),
        Some(&v),
    );
    assert_eq!(codes(&reasons), vec!["wrong_behaviour", "text_mismatch"]);
    assert_eq!(
        reasons[0].message,
        "expected a text answer that is `direct` (answers directly); \
         the judge read it as `clarify` (asks for the missing information)"
    );
}

#[test]
fn a_call_on_a_behaviour_case_is_an_unexpected_call_observed_as_tool_call() {
    let s = load(SUITE);
    // The judge is not asked about a call; a verdict given anyway does not count.
    let v = judge_says(Behaviour::CannotAnswer, "ignored");
    let (c, reasons) = judged(&s, "cannot", ToolChoice::Auto, &paris(), Some(&v));
    assert_eq!(codes(&reasons), vec!["unexpected_call"]);
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::CannotAnswer),
            Behaviour::ToolCall,
            ObservedBy::Call,
            None
        )
    );
}

#[test]
fn text_outcomes_hold_on_their_behaviour_and_name_the_miss() {
    let s = load(SUITE);
    for b in [Behaviour::CannotAnswer, Behaviour::Direct] {
        let (c, reasons) = judged(
            &s,
            "text_only",
            ToolChoice::Auto,
            &text("whatever"),
            Some(&judge_says(b, "because")),
        );
        assert!(reasons.is_empty(), "{b}: {reasons:?}");
        // Two behaviours are acceptable: no one is expected.
        assert_eq!(
            c.behaviour,
            facts(None, b, ObservedBy::Judge, Some("because"))
        );
    }
    let (_, reasons) = judged(
        &s,
        "text_only",
        ToolChoice::Auto,
        &text("Which planet?"),
        Some(&judge_says(Behaviour::RequestForInfo, "asks")),
    );
    assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
    assert_eq!(
        reasons[0].message,
        "no acceptable outcome held: \
         cannot_answer: the judge read it as `clarify` (asks for the missing information): \"asks\" | \
         direct: the judge read it as `clarify` (asks for the missing information): \"asks\""
    );
    let (_, reasons) = judged(&s, "text_only", ToolChoice::Auto, &paris(), None);
    assert_eq!(
        reasons[0].message,
        "no acceptable outcome held: cannot_answer: a tool was called | direct: a tool was called"
    );
}

#[test]
fn a_clarify_outcome_needs_the_behaviour_and_its_text_checks() {
    let s = load(SUITE);
    let asks = judge_says(Behaviour::RequestForInfo, "asks for the city");
    let (c, reasons) = judged(
        &s,
        "vague",
        ToolChoice::Auto,
        &text("Which city?"),
        Some(&asks),
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    // clarify or a call: two behaviours, none expected.
    assert_eq!(
        c.behaviour,
        facts(
            None,
            Behaviour::RequestForInfo,
            ObservedBy::Judge,
            Some("asks for the city")
        )
    );
    let (_, reasons) = judged(
        &s,
        "vague",
        ToolChoice::Auto,
        &text("Which day?"),
        Some(&asks),
    );
    assert_eq!(
        reasons[0].message,
        "no acceptable outcome held: clarify: the answer does not contain \"city\" | \
         calls: expected a call to `get_weather` with {city: \"Paris\"}, none matched"
    );
    // Only clarify outcomes: request_for_info is expected.
    let (c, _) = judged(
        &s,
        "ask_only",
        ToolChoice::Auto,
        &text("Which town?"),
        Some(&asks),
    );
    assert_eq!(
        c.behaviour.and_then(|b| b.expected),
        Some(Behaviour::RequestForInfo)
    );
}

#[test]
fn every_trial_of_a_behaviour_suite_records_its_facts() {
    let s = load(SUITE);
    let (c, reasons) = judged(&s, "call", ToolChoice::Auto, &paris(), None);
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::ToolCall),
            Behaviour::ToolCall,
            ObservedBy::Call,
            None
        )
    );
    // A should_call case answered in text: observed by the judge when it is asked.
    let (c, reasons) = judged(
        &s,
        "call",
        ToolChoice::Auto,
        &text("Which Paris?"),
        Some(&judge_says(Behaviour::RequestForInfo, "asks")),
    );
    assert_eq!(codes(&reasons), vec!["missed_call"]);
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::ToolCall),
            Behaviour::RequestForInfo,
            ObservedBy::Judge,
            Some("asks")
        )
    );
    // A plain should_not_call case accepts any text: observed, nothing expected.
    let (c, reasons) = judged(
        &s,
        "plain",
        ToolChoice::Auto,
        &text("Hello!"),
        Some(&judge_says(Behaviour::Direct, "greets")),
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour,
        facts(None, Behaviour::Direct, ObservedBy::Judge, Some("greets"))
    );
    // Without a judge the classifier reads the text.
    let (c, _) = judged(&s, "plain", ToolChoice::Auto, &text("Hello!"), None);
    let f = c.behaviour.expect("recorded");
    assert_eq!((f.expected, f.by), (None, ObservedBy::Classifier));
    assert_eq!(f.observed, crate::behaviour::classify("Hello!").behaviour);
}

#[test]
fn under_tool_choice_none_a_call_case_expects_no_one_behaviour() {
    let s = load(SUITE);
    let (c, reasons) = judged(
        &s,
        "call",
        ToolChoice::None,
        &text("It is sunny in Paris."),
        Some(&judge_says(Behaviour::Direct, "answers")),
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(c.kind, CaseKind::ShouldNotCall);
    assert_eq!(
        c.behaviour,
        facts(None, Behaviour::Direct, ObservedBy::Judge, Some("answers"))
    );
    // A case that expects a behaviour keeps it under `none`.
    let (c, reasons) = judged(
        &s,
        "cannot",
        ToolChoice::None,
        &text("Done."),
        Some(&judge_says(Behaviour::Direct, "")),
    );
    assert_eq!(codes(&reasons), vec!["wrong_behaviour"]);
    assert_eq!(
        c.behaviour.and_then(|b| b.expected),
        Some(Behaviour::CannotAnswer)
    );
}

#[test]
fn suites_without_the_new_keys_keep_their_records() {
    let s = load(OLD_SUITE);
    assert!(!s.names_behaviours);
    let (c, _) = judged(&s, "call", ToolChoice::Auto, &paris(), None);
    assert_eq!(c.behaviour, None);
    let (c, _) = judged(&s, "plain", ToolChoice::Auto, &text("Hi!"), None);
    assert_eq!(c.behaviour, None);
    // A case with a `clarify` outcome records what it saw, with nothing expected.
    let (c, _) = judged(&s, "vague", ToolChoice::Auto, &paris(), None);
    assert_eq!(
        c.behaviour,
        facts(None, Behaviour::ToolCall, ObservedBy::Call, None)
    );
    // A judge's verdict is recorded wherever it was given.
    let (c, _) = judged(
        &s,
        "plain",
        ToolChoice::Auto,
        &text("Hi!"),
        Some(&judge_says(Behaviour::Direct, "greets")),
    );
    assert_eq!(
        c.behaviour,
        facts(None, Behaviour::Direct, ObservedBy::Judge, Some("greets"))
    );
    // The scorer says which cases a judge must read.
    let scorers = CaseScorer::for_suite(&s);
    assert_eq!(
        scorers
            .iter()
            .map(|k| (k.records_behaviour(), k.needs_behaviour(&ToolChoice::Auto)))
            .collect::<Vec<_>>(),
        vec![(false, false), (false, false), (true, true)]
    );
    // Under `none` the ambiguous case expects no call: no behaviour to read.
    assert!(!scorers[2].needs_behaviour(&ToolChoice::None));
}

#[test]
fn score_judged_without_verdicts_is_score_variant() {
    let s = load(SUITE);
    for (case, r) in [
        ("cannot", text("Sorry, I can't do that.")),
        ("vague", text("Which city?")),
        ("call", paris()),
        ("text_only", text("42")),
    ] {
        let k = s.cases.iter().find(|c| c.id == case).unwrap();
        let scorer = CaseScorer::new(&s, k);
        assert_eq!(
            scorer.score_judged("default", &ToolChoice::Auto, &r, None),
            scorer.score_variant("default", &ToolChoice::Auto, &r),
            "{case}"
        );
        assert_eq!(
            scorer.score_judged(
                "default",
                &ToolChoice::Auto,
                &r,
                Some(&JudgeVerdicts::default())
            ),
            scorer.score_variant("default", &ToolChoice::Auto, &r),
            "{case}"
        );
    }
}

#[test]
fn a_failed_rubric_is_a_reason_with_the_judges_rationale() {
    let s = load(SUITE);
    let failed = JudgeVerdicts {
        behaviour: None,
        rubric: Some((false, "It never gives the temperature.".into())),
    };
    let (_, reasons) = judged(&s, "call", ToolChoice::Auto, &paris(), Some(&failed));
    assert_eq!(codes(&reasons), vec!["rubric_failed"]);
    assert_eq!(
        reasons[0].message,
        "the judge found that the answer does not meet the rubric: It never gives the temperature."
    );
    let silent = JudgeVerdicts {
        behaviour: None,
        rubric: Some((false, " ".into())),
    };
    let (_, reasons) = judged(&s, "call", ToolChoice::Auto, &paris(), Some(&silent));
    assert_eq!(
        reasons[0].message,
        "the judge found that the answer does not meet the rubric: (it gave no reason)"
    );
    let passed = JudgeVerdicts {
        behaviour: None,
        rubric: Some((true, "Gives it.".into())),
    };
    let (_, reasons) = judged(&s, "call", ToolChoice::Auto, &paris(), Some(&passed));
    assert!(reasons.is_empty(), "{reasons:?}");
}

#[test]
fn the_classifier_decides_without_a_judge_and_a_question_mark_is_not_enough() {
    let s = load(SUITE);
    // The issue's examples: a polite refusal ending in "anything else?" does not
    // clarify; "Please tell me which city." does, with no question mark at all.
    let (c, reasons) = judged(
        &s,
        "vague",
        ToolChoice::Auto,
        &text("Please tell me which city."),
        None,
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour,
        facts(
            None,
            Behaviour::RequestForInfo,
            ObservedBy::Classifier,
            Some("Please tell")
        )
    );
    let refusal = "I'm sorry, I can't help with the city weather. Anything else?";
    let (c, reasons) = judged(&s, "vague", ToolChoice::Auto, &text(refusal), None);
    assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
    assert_eq!(
        reasons[0].message,
        "no acceptable outcome held: clarify: the classifier read it as `cannot_answer` \
         (says it cannot help) on the words \"I can't\" | \
         calls: expected a call to `get_weather` with {city: \"Paris\"}, none matched"
    );
    assert_eq!(
        c.behaviour.map(|f| (f.observed, f.by)),
        Some((Behaviour::CannotAnswer, ObservedBy::Classifier))
    );
    // The same refusal is what a `cannot_answer` case wants.
    let (c, reasons) = judged(&s, "cannot", ToolChoice::Auto, &text(refusal), None);
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour,
        facts(
            Some(Behaviour::CannotAnswer),
            Behaviour::CannotAnswer,
            ObservedBy::Classifier,
            Some("I can't")
        )
    );
    // And a clarifying question is not.
    let (_, reasons) = judged(
        &s,
        "cannot",
        ToolChoice::Auto,
        &text("Which airline do you prefer?"),
        None,
    );
    assert_eq!(codes(&reasons), vec!["wrong_behaviour"]);
    assert!(
        reasons[0].message.starts_with(
            "expected a text answer that is `cannot_answer` (says it cannot help); \
             the classifier read it as `clarify` (asks for the missing information)"
        ),
        "{}",
        reasons[0].message
    );
    // `direct` with its words: a plain greeting passes, a refusal does not.
    let (_, reasons) = judged(
        &s,
        "direct_hello",
        ToolChoice::Auto,
        &text("Well, hello there!"),
        None,
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    let (_, reasons) = judged(
        &s,
        "direct_hello",
        ToolChoice::Auto,
        &text("Sorry, I cannot say hello."),
        None,
    );
    assert_eq!(codes(&reasons), vec!["wrong_behaviour"]);
}

#[test]
fn chinese_answers_are_classified_too() {
    let s = load(SUITE);
    let (_, reasons) = judged(
        &s,
        "cannot",
        ToolChoice::Auto,
        &text("抱歉，我无法为您预订机票。"),
        None,
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    let (c, reasons) = judged(
        &s,
        "ask_only",
        ToolChoice::Auto,
        &text("请问您想查哪个城市（city）？"),
        None,
    );
    assert!(reasons.is_empty(), "{reasons:?}");
    assert_eq!(
        c.behaviour.map(|f| (f.expected, f.observed)),
        Some((Some(Behaviour::RequestForInfo), Behaviour::RequestForInfo))
    );
}

#[test]
fn an_empty_answer_is_named_as_such() {
    let s = load(SUITE);
    let (_, reasons) = judged(&s, "cannot", ToolChoice::Auto, &Response::default(), None);
    assert_eq!(codes(&reasons), vec!["wrong_behaviour"]);
    assert_eq!(
        reasons[0].message,
        "expected a text answer that is `cannot_answer` (says it cannot help); \
         the classifier read it as `direct` (answers directly): the answer is empty"
    );
}

#[test]
fn the_judge_is_asked_about_text_answers_that_count() {
    let s = load(SUITE);
    let scorer = |id: &str| CaseScorer::new(&s, s.cases.iter().find(|c| c.id == id).unwrap());
    // A behaviour suite: every text answer counts, a call never needs reading.
    for id in ["call", "cannot", "plain", "vague", "text_only"] {
        assert!(
            scorer(id).wants_judged_behaviour(&ToolChoice::Auto, &text("x")),
            "{id}"
        );
        assert!(
            !scorer(id).wants_judged_behaviour(&ToolChoice::Auto, &paris()),
            "{id}"
        );
    }
    let old = load(OLD_SUITE);
    let scorer = |id: &str| CaseScorer::new(&old, old.cases.iter().find(|c| c.id == id).unwrap());
    assert!(!scorer("plain").wants_judged_behaviour(&ToolChoice::Auto, &text("x")));
    assert!(scorer("vague").wants_judged_behaviour(&ToolChoice::Auto, &text("x")));
}
