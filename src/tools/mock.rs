//! The mock host: answers calls from a suite's `mocks` rules.
//!
//! Rules are tried in the order written; the first whose `when` matches answers (a rule
//! without `when` matches every call). `fail:` rules are skipped here: the [`Faults`]
//! wrapper applies them before a call reaches this host, so the same rules can put
//! faults in front of any host. A call no rule answers gets the harness's `no_mock`
//! error; a trial that would pass after one has no verdict (the judge stage says so),
//! since the tool never ran.
//!
//! [`Faults`]: super::Faults

use async_trait::async_trait;

use super::{Decision, HostError, Invocation, Session, ToolErrorKind, ToolHost, ToolOutcome};
use crate::suite::loops::RuleAction;

/// Answers from the session's mock rules; every answer is settled when prepared.
#[derive(Debug, Clone, Copy, Default)]
pub struct MockHost;

#[async_trait]
impl ToolHost for MockHost {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        Ok(session.spec().tools.clone())
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        Decision::Settled(answer(session, call))
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        // `prepare` settles every call, so nothing is left to execute; a caller that
        // executes anyway gets an error, not a made-up answer.
        Err(HostError::Failed {
            host: "mock",
            tool: call.name.clone(),
            message: "the mock host answers every call when it is prepared".into(),
        })
    }
}

/// The answer of the first matching rule.
fn answer(session: &Session, call: &Invocation) -> ToolOutcome {
    let spec = session.spec();
    if !spec.tools.contains(&call.name) {
        return ToolOutcome::error(
            ToolErrorKind::UnknownTool,
            &format!("there is no tool named `{}`", call.name),
            false,
        );
    }
    let Some(rules) = spec.mocks.rules(&call.name) else {
        return ToolOutcome::error(
            ToolErrorKind::NoMock,
            &format!(
                "tool `{}` is not available in this test (it has no mocks)",
                call.name
            ),
            false,
        );
    };
    if !rules.pins() {
        // Only `fail:` rules, spent: they put faults in front of the tool, and nothing
        // behind them answers here (no MCP server).
        return ToolOutcome::error(
            ToolErrorKind::NoMock,
            &format!(
                "tool `{}` is not available in this test (its mocks only inject failures)",
                call.name
            ),
            false,
        );
    }
    let Some(rule) = rules.answer(&call.arguments) else {
        return ToolOutcome::error(
            ToolErrorKind::NoMock,
            &format!(
                "tool `{}` has no answer for these arguments in this test",
                call.name
            ),
            false,
        );
    };
    let mut out = match &rule.action {
        RuleAction::Result(v) => ToolOutcome::result(v),
        RuleAction::Error { kind, message } => ToolOutcome::error(*kind, message, true),
        RuleAction::Fail { .. } => unreachable!("fail rules are filtered out above"),
    };
    out.rule_line = Some(rule.line);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testutil::{call, episode, prepare_all};
    use super::*;

    const SUITE: &str = r#"
tools:
  - name: get_order
    description: Look up an order
    parameters: {type: object, properties: {order_id: {type: string}, verbose: {type: boolean}}}
  - name: get_weather
    description: Weather
    parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}}
  - name: cancel_order
    description: Cancel
    parameters: {type: object, properties: {order_id: {type: string}}}
mocks:
  get_order:
    - when: {order_id: A123}
      result: {order_id: A123, shipment_id: S9}
    - when: {order_id: {regex: "^B"}}
      error: {kind: permission_denied, message: "B orders belong to another shop"}
    - error: {kind: not_found}
  get_weather:
    - when: {city: {one_of: [北京, Beijing]}, days: {range: {min: 1, max: 3}}}
      result: 晴
    - when: {city: 北京}
      result: null
cases:
  - id: c
    kind: should_not_call
    prompt: hi
"#;

    #[test]
    fn the_first_matching_rule_answers_and_a_rule_without_when_is_the_fallback() {
        let ep = episode(SUITE, "c");
        let calls = [
            call("get_order", r#"{"order_id": "A123", "verbose": true}"#),
            call("get_order", r#"{"order_id": "B7"}"#),
            call("get_order", r#"{"order_id": "Z1"}"#),
            call("get_weather", r#"{"city": "Beijing", "days": 2}"#),
            call("get_weather", r#"{"city": "北京", "days": 9}"#),
            call("get_weather", r#"{"city": "Paris"}"#),
            call("cancel_order", r#"{"order_id": "A123"}"#),
            call("get_ordr", "{}"),
        ];
        let (out, session) = prepare_all(&MockHost, ep, &calls);
        type Row<'a> = (&'a str, bool, Option<ToolErrorKind>, bool, Option<u32>);
        let got: Vec<Row> = out
            .iter()
            .map(|o| {
                (
                    o.content.as_str(),
                    o.is_error,
                    o.error_kind,
                    o.executed,
                    o.rule_line,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    r#"{"order_id":"A123","shipment_id":"S9"}"#,
                    false,
                    None,
                    true,
                    Some(14)
                ),
                (
                    r#"{"error":{"kind":"permission_denied","message":"B orders belong to another shop"}}"#,
                    true,
                    Some(ToolErrorKind::PermissionDenied),
                    true,
                    Some(16)
                ),
                // No message given: the kind's plain sentence.
                (
                    r#"{"error":{"kind":"not_found","message":"not found"}}"#,
                    true,
                    Some(ToolErrorKind::NotFound),
                    true,
                    Some(18)
                ),
                (r#""晴""#, false, None, true, Some(20)),
                // `days: 9` is out of the first rule's range; the second answers null.
                ("null", false, None, true, Some(22)),
                (
                    r#"{"error":{"kind":"no_mock","message":"tool `get_weather` has no answer for these arguments in this test"}}"#,
                    true,
                    Some(ToolErrorKind::NoMock),
                    false,
                    None
                ),
                (
                    r#"{"error":{"kind":"no_mock","message":"tool `cancel_order` is not available in this test (it has no mocks)"}}"#,
                    true,
                    Some(ToolErrorKind::NoMock),
                    false,
                    None
                ),
                (
                    r#"{"error":{"kind":"unknown_tool","message":"there is no tool named `get_ordr`"}}"#,
                    true,
                    Some(ToolErrorKind::UnknownTool),
                    false,
                    None
                ),
            ]
        );
        assert_eq!(session.counters().calls, 8);
        assert_eq!(session.counters().per_tool["get_weather"], 3);
        assert_eq!(session.counters().faults, 0);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&out[0].content).unwrap(),
            json!({"order_id": "A123", "shipment_id": "S9"})
        );
    }

    #[tokio::test]
    async fn the_mock_lists_the_case_tools_and_never_executes() {
        let ep = episode(SUITE, "c");
        let session = Session::new(ep);
        assert_eq!(
            MockHost.list(&session).await.unwrap(),
            vec!["cancel_order", "get_order", "get_weather"]
        );
        let inv = Invocation {
            seq: 1,
            tool_seq: 1,
            repeat: 1,
            name: "get_order".into(),
            arguments: serde_json::Map::new(),
        };
        assert!(MockHost.execute(&inv).await.is_err());
    }
}
