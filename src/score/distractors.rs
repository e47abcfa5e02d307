//! What a trial of the tool-count axis (`distractors:`) adds to its record: its count,
//! the size of the tool definitions it sent, and the two selection facts the report
//! charts against the count.
//!
//! - *Selection*: in a `should_call` trial, whether the first call of the (first)
//!   response names one of the tools the case expects.
//! - *False call*: a trial has one when its (first) response calls a distractor, or
//!   calls anything at all in a `should_not_call` trial.
//!
//! Both read the first response only (the one `expect.calls` is scored on), so a loop
//! case counts as a single-turn case does.

use serde::{Deserialize, Serialize};

use crate::provider::Response;
use crate::suite::{CaseKind, Expectation, Outcome};

/// The tool-count facts of one trial (absent from records of suites without
/// `distractors:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistractorFacts {
    /// How many distractors the request offered on top of the case's own tools.
    pub n: u32,
    /// The o200k_base token size of all tool definitions the request offered.
    pub tool_definition_tokens: u64,
    /// `should_call` trials with a response: whether the first call named an expected
    /// tool (`false` when there was no call). Absent for other trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
    /// Calls of the response that named a distractor.
    #[serde(default)]
    pub distractor_calls: u32,
    /// The response called a distractor, or called anything in a `should_not_call`
    /// trial.
    #[serde(default)]
    pub false_call: bool,
}

/// The tools an expectation names: every expected call's, in every outcome.
pub fn expected_tools(e: &Expectation) -> Vec<&str> {
    match e {
        Expectation::Calls(c) => c.calls.iter().map(|c| c.tool.as_str()).collect(),
        Expectation::AnyOf(o) => o
            .iter()
            .flat_map(|o| match o {
                Outcome::Calls(c) => c.calls.iter().map(|c| c.tool.as_str()).collect(),
                _ => Vec::new(),
            })
            .collect(),
        Expectation::NoCall(_) => Vec::new(),
    }
}

/// The facts of a trial at count `n` whose response (if any) is `response`;
/// `is_distractor` tells the distractors' names from the case's own.
pub fn facts(
    n: u32,
    tool_definition_tokens: u64,
    kind: CaseKind,
    expect: &Expectation,
    response: Option<&Response>,
    is_distractor: impl Fn(&str) -> bool,
) -> DistractorFacts {
    let mut out = DistractorFacts {
        n,
        tool_definition_tokens,
        selected: None,
        distractor_calls: 0,
        false_call: false,
    };
    let Some(r) = response else {
        return out;
    };
    if kind == CaseKind::ShouldCall {
        let expected = expected_tools(expect);
        out.selected = Some(
            r.tool_calls
                .first()
                .is_some_and(|c| expected.contains(&c.name.as_str())),
        );
    }
    out.distractor_calls = r
        .tool_calls
        .iter()
        .filter(|c| is_distractor(&c.name))
        .count() as u32;
    out.false_call =
        out.distractor_calls > 0 || (kind == CaseKind::ShouldNotCall && !r.tool_calls.is_empty());
    out
}

/// The variant part of a trial's identity (journal, shards, merge): the variant, with
/// the count joined when the trial has one, so trials at two counts are two trials,
/// and trials of suites without the axis keep the identity they always had.
pub fn identity_variant(variant: &str, n: Option<u32>) -> std::borrow::Cow<'_, str> {
    match n {
        Some(n) => std::borrow::Cow::Owned(format!("{variant} × N={n}")),
        None => std::borrow::Cow::Borrowed(variant),
    }
}

/// The count of a record, if it has one.
pub fn record_n(t: &crate::score::TrialRecord) -> Option<u32> {
    t.distractors.map(|d| d.n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCall;

    fn response(calls: &[&str]) -> Response {
        Response {
            tool_calls: calls
                .iter()
                .enumerate()
                .map(|(i, n)| ToolCall {
                    id: Some(format!("c{i}")),
                    name: (*n).to_string(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..Response::default()
        }
    }

    fn suite() -> crate::suite::Suite {
        crate::suite::load_str(
            r#"
tools:
  - {name: get_weather, description: "Weather.", parameters: {type: object}}
  - {name: get_time, description: "Time.", parameters: {type: object}}
cases:
  - {id: call, kind: should_call, prompt: "w", expect: {calls: [{tool: get_weather}, {tool: get_time}]}}
  - {id: quiet, kind: should_not_call, prompt: "hi"}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
    }

    #[test]
    fn selection_reads_the_first_call_and_false_calls_count_distractors_and_unwanted_calls() {
        let s = suite();
        let (kind, expect) = s.cases[0].effective(&crate::provider::ToolChoice::Auto);
        let is_d = |n: &str| n.starts_with("pool_");
        let f = |calls: &[&str]| facts(3, 100, kind, expect, Some(&response(calls)), is_d);
        // The first call names an expected tool (the second one counts too).
        assert_eq!(f(&["get_time", "pool_a"]).selected, Some(true));
        assert_eq!(f(&["get_time", "pool_a"]).distractor_calls, 1);
        assert!(f(&["get_time", "pool_a"]).false_call);
        // A distractor first: not selected, even if the expected tool follows.
        let d = f(&["pool_a", "get_weather"]);
        assert_eq!(
            (d.selected, d.false_call, d.distractor_calls),
            (Some(false), true, 1)
        );
        // No call: not selected, no false call.
        let none = f(&[]);
        assert_eq!((none.selected, none.false_call), (Some(false), false));
        // should_not_call: any call is a false call, distractor or not; no selection.
        let (kind, expect) = s.cases[1].effective(&crate::provider::ToolChoice::Auto);
        let q = facts(
            3,
            100,
            kind,
            expect,
            Some(&response(&["get_weather"])),
            is_d,
        );
        assert_eq!(
            (q.selected, q.false_call, q.distractor_calls),
            (None, true, 0)
        );
        // No response (an error): only the count and the size.
        let e = facts(3, 100, kind, expect, None, is_d);
        assert_eq!(
            (e.n, e.tool_definition_tokens, e.false_call),
            (3, 100, false)
        );
    }
}
