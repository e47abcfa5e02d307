//! Compiling the keys that name a text answer's behaviour: `clarify`, `cannot_answer`
//! and `direct` outcomes of `ambiguous` cases, and `behaviour:` of `should_not_call`
//! cases; bad names and conflicting keys are located errors.

use std::path::Path;

use crate::behaviour::Behaviour;
use crate::suite::{Expectation, Outcome, Suite, SuiteError, ToolChoice};

const TOOLS: &str = "\
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
";

fn load(cases: &str) -> Result<Suite, SuiteError> {
    crate::suite::load_str(&format!("{TOOLS}{cases}"), Path::new("s.yaml"))
}

/// The problems of a suite with these cases, as (line, column, field, message, hint).
fn problems(cases: &str) -> Vec<(u32, u32, String, String, String)> {
    match load(cases) {
        Ok(_) => panic!("the suite must be refused"),
        Err(SuiteError::Invalid(d)) => d
            .into_iter()
            .map(|d| {
                (
                    d.line,
                    d.column,
                    d.field,
                    d.message,
                    d.hint.unwrap_or_default(),
                )
            })
            .collect(),
        Err(e) => panic!("unexpected error: {e}"),
    }
}

#[test]
fn the_three_text_outcomes_compile_with_their_text_checks() {
    let s = load(
        "  - id: a
    kind: ambiguous
    prompt: Weather?
    expect:
      any_of:
        - {clarify: true, contains: [city]}
        - {cannot_answer: true, regex: 'sorry'}
        - direct: true
        - no_call: true
        - calls: [{tool: get_weather}]
",
    )
    .unwrap();
    let Expectation::AnyOf(o) = &s.cases[0].expect else {
        panic!("an ambiguous case compiles to AnyOf");
    };
    assert_eq!(
        o.iter().map(Outcome::name).collect::<Vec<_>>(),
        vec!["clarify", "cannot_answer", "direct", "no_call", "calls"]
    );
    assert!(matches!(&o[0], Outcome::Clarify(t) if t.contains == ["city"]));
    assert!(
        matches!(&o[1], Outcome::CannotAnswer(t) if t.regex.as_ref().unwrap().as_str() == "sorry")
    );
    assert!(matches!(&o[2], Outcome::Direct(t) if t.is_empty()));
    assert_eq!(
        o.iter().map(Outcome::behaviour).collect::<Vec<_>>(),
        vec![
            Some(Behaviour::RequestForInfo),
            Some(Behaviour::CannotAnswer),
            Some(Behaviour::Direct),
            None,
            Some(Behaviour::ToolCall)
        ]
    );
    // A `no_call` outcome accepts any text: no one behaviour is expected.
    assert_eq!(s.cases[0].expect.expected_behaviour(), None);
    assert!(s.cases[0].expect.names_text_behaviour());
    assert!(s.names_behaviours);
}

#[test]
fn should_not_call_behaviour_compiles_to_the_text_checks() {
    for (name, want) in [
        ("direct", Behaviour::Direct),
        ("cannot_answer", Behaviour::CannotAnswer),
        ("clarify", Behaviour::RequestForInfo),
    ] {
        let s = load(&format!(
            "  - id: n
    kind: should_not_call
    prompt: Tell me a joke.
    expect: {{behaviour: {name}, contains: [x]}}
"
        ))
        .unwrap();
        let Expectation::NoCall(t) = &s.cases[0].expect else {
            panic!("should_not_call compiles to NoCall");
        };
        assert_eq!(t.behaviour, Some(want), "{name}");
        assert_eq!(t.contains, ["x"]);
        assert_eq!(s.cases[0].expect.expected_behaviour(), Some(want));
        assert!(s.names_behaviours);
    }
}

#[test]
fn which_expectations_name_one_behaviour() {
    let s = load(
        "  - id: call
    kind: should_call
    prompt: Weather in Paris?
    expect: {calls: [{tool: get_weather, args: {city: Paris}}]}
  - id: plain
    kind: should_not_call
    prompt: Hi
  - id: clarify_only
    kind: ambiguous
    prompt: Weather?
    expect: {any_of: [{clarify: true, contains: [city]}, {clarify: true, contains: [town]}]}
  - id: calls_only
    kind: ambiguous
    prompt: Weather?
    expect: {any_of: [{calls: [{tool: get_weather, args: {city: Paris}}]}, {calls: [{tool: get_weather, args: {city: Rome}}]}]}
  - id: two
    kind: ambiguous
    prompt: Weather?
    expect: {any_of: [{clarify: true}, {calls: [{tool: get_weather}]}]}
",
    )
    .unwrap();
    let expected: Vec<Option<Behaviour>> = s
        .cases
        .iter()
        .map(|c| c.expect.expected_behaviour())
        .collect();
    assert_eq!(
        expected,
        vec![
            Some(Behaviour::ToolCall),
            None,
            Some(Behaviour::RequestForInfo),
            Some(Behaviour::ToolCall),
            None
        ]
    );
    assert_eq!(
        s.cases[4].expect.behaviours(),
        Some(vec![Behaviour::ToolCall, Behaviour::RequestForInfo])
    );
    // `clarify` alone does not make the whole suite record behaviours.
    assert!(!s.names_behaviours);
    // Under `none` a case that expects a call expects no call, whatever it names.
    assert_eq!(
        s.cases[4]
            .effective(&ToolChoice::None)
            .1
            .expected_behaviour(),
        None
    );
}

#[test]
fn per_mode_expectations_take_the_keys_too() {
    let s = load(
        "  - id: p
    kind: should_call
    prompt: Weather in Paris?
    expect: {calls: [{tool: get_weather, args: {city: Paris}}]}
    per_mode:
      - {modes: [none], kind: should_not_call, expect: {behaviour: cannot_answer}}
",
    )
    .unwrap();
    assert!(s.names_behaviours);
    let (_, e) = s.cases[0].effective(&ToolChoice::None);
    assert_eq!(e.expected_behaviour(), Some(Behaviour::CannotAnswer));
    let (_, e) = s.cases[0].effective(&ToolChoice::Auto);
    assert_eq!(e.expected_behaviour(), Some(Behaviour::ToolCall));
}

#[test]
fn an_unknown_behaviour_is_a_located_error_listing_the_three_names() {
    let p = problems(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect: {behaviour: refuse}
",
    );
    assert_eq!(
        p,
        vec![(
            9,
            25,
            "cases[0].expect.behaviour".to_string(),
            "unknown behaviour `refuse`".to_string(),
            "use `direct` (answers without a tool), `cannot_answer` (says it cannot help) or `clarify` (asks for the missing information)".to_string()
        )]
    );
    // A typo is named.
    let p = problems(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect: {behaviour: cannot_anwser}
",
    );
    assert!(p[0].4.ends_with("; did you mean `cannot_answer`?"), "{p:?}");
    // The When2Call labels that suites spell otherwise.
    let p = problems(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect: {behaviour: request_for_info}
",
    );
    assert_eq!(p[0].4, "suites write it `clarify`");
    let p = problems(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect: {behaviour: tool_call}
",
    );
    assert_eq!(
        p[0].4,
        "a `should_not_call` case expects no call: use kind `should_call` to expect one"
    );
}

#[test]
fn behaviour_on_a_case_that_is_not_should_not_call_is_refused() {
    let p = problems(
        "  - id: c
    kind: should_call
    prompt: Weather in Paris?
    expect:
      calls: [{tool: get_weather, args: {city: Paris}}]
      behaviour: direct
",
    );
    assert_eq!(
        p,
        vec![(
            11,
            18,
            "cases[0].expect.behaviour".to_string(),
            "`behaviour` applies to `should_not_call` cases, not to `should_call` ones".to_string(),
            "a `should_call` case expects a call; use kind `should_not_call` with `behaviour: direct | cannot_answer | clarify` for a text answer".to_string()
        )]
    );
    let p = problems(
        "  - id: a
    kind: ambiguous
    prompt: Weather?
    expect:
      any_of: [{clarify: true}]
      behaviour: clarify
",
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (p[0].0, p[0].2.as_str(), p[0].3.as_str()),
        (
            11,
            "cases[0].expect.behaviour",
            "`behaviour` applies to `should_not_call` cases, not to `ambiguous` ones"
        )
    );
    assert!(p[0].4.contains("`{cannot_answer: true}`"), "{p:?}");
}

#[test]
fn behaviour_with_any_of_on_should_not_call_is_refused() {
    let p = problems(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect:
      behaviour: direct
      any_of: [{direct: true}]
",
    );
    assert_eq!(
        p.iter()
            .map(|p| (p.2.as_str(), p.3.as_str()))
            .collect::<Vec<_>>(),
        vec![(
            "cases[0].expect",
            "a `should_not_call` case takes only `behaviour`, `contains` and `regex` (checks on the text answer)"
        )]
    );
}

#[test]
fn an_outcome_names_exactly_one_behaviour() {
    let p = problems(
        "  - id: a
    kind: ambiguous
    prompt: Weather?
    expect:
      any_of:
        - {clarify: true, cannot_answer: true}
        - {direct: true, calls: [{tool: get_weather}]}
        - {contains: [x]}
",
    );
    assert_eq!(
        p.iter()
            .map(|p| (p.2.as_str(), p.3.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "cases[0].expect.any_of[0]",
                "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, but names `clarify` and `cannot_answer`"
            ),
            (
                "cases[0].expect.any_of[1]",
                "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, but names `direct` and `calls`"
            ),
            (
                "cases[0].expect.any_of[2]",
                "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, and names none"
            ),
        ]
    );
    assert_eq!(
        p[0].4,
        "give each acceptable answer its own `any_of` entry, e.g. `any_of: [{clarify: true}, {cannot_answer: true}]`"
    );
    assert!(
        p[2].4
            .starts_with("`clarify` asks for the missing information")
    );
    // The error is on the case's line (outcomes carry no position of their own).
    assert_eq!(p[0].0, 6);
}

#[test]
fn a_bad_behaviour_renders_with_its_file_line_and_field() {
    // The error renders with the file, line, field and hint.
    let Err(e) = load(
        "  - id: n
    kind: should_not_call
    prompt: Hi
    expect: {behaviour: polite}
",
    ) else {
        panic!("must be refused");
    };
    let shown = e.to_string();
    assert!(shown.contains("s.yaml:9:25"), "{shown}");
    assert!(shown.contains("cases[0].expect.behaviour"), "{shown}");
    assert!(shown.contains("unknown behaviour `polite`"), "{shown}");
}
