//! Fault injection around any tool host.
//!
//! Two sources of faults, both decided when a call is prepared (in call order, so the
//! same calls fail whatever order a turn's executions finish in):
//! - the suite's `fail:` rules (from the session's mock rules): a `fail` rule whose
//!   `when` matches fails the first `times` such calls of each trial; after that, the
//!   next rules are tried. Rules keep their order: a result or error rule written
//!   before a `fail` rule and matching the call answers it, with no fault;
//! - faults set in code: "fail the Nth call (of tool T) with kind K", for tests and
//!   for hosts whose tools have no mock rules (MCP servers).

use std::sync::Arc;

use async_trait::async_trait;

use super::{Decision, HostError, Invocation, Session, ToolErrorKind, ToolHost, ToolOutcome};
use crate::suite::loops::RuleAction;

/// A fault set in code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The tool whose calls are counted (`None`: every call of the episode).
    pub tool: Option<String>,
    /// Which call fails (1-based).
    pub nth: u32,
    /// The error kind.
    pub kind: ToolErrorKind,
    /// The message (default: the kind's plain sentence).
    pub message: Option<String>,
}

impl Fault {
    /// Fail the `nth` call of the episode (1-based) with `kind`.
    pub fn nth_call(nth: u32, kind: ToolErrorKind) -> Fault {
        Fault {
            tool: None,
            nth,
            kind,
            message: None,
        }
    }

    /// Fail the `nth` call of `tool` (1-based) with `kind`.
    pub fn nth_call_of(tool: &str, nth: u32, kind: ToolErrorKind) -> Fault {
        Fault {
            tool: Some(tool.to_string()),
            ..Fault::nth_call(nth, kind)
        }
    }

    fn hits(&self, call: &Invocation) -> bool {
        match &self.tool {
            None => call.seq == self.nth,
            Some(t) => *t == call.name && call.tool_seq == self.nth,
        }
    }
}

/// Wraps a host and fails calls as the suite's `fail:` rules and the faults set in code say.
#[derive(Debug, Clone)]
pub struct Faults {
    inner: Arc<dyn ToolHost>,
    planned: Vec<Fault>,
}

impl Faults {
    /// Inject the suite's `fail:` rules in front of `inner`.
    pub fn new(inner: Arc<dyn ToolHost>) -> Faults {
        Faults {
            inner,
            planned: Vec::new(),
        }
    }

    /// Also inject `fault`.
    pub fn with(mut self, fault: Fault) -> Faults {
        self.planned.push(fault);
        self
    }

    /// The fault for `call`, if one applies; counts it in the session.
    fn inject(&self, session: &mut Session, call: &Invocation) -> Option<ToolOutcome> {
        if let Some(f) = self.planned.iter().find(|f| f.hits(call)) {
            session.record_fault(None);
            let message = f.message.as_deref().unwrap_or(f.kind.default_message());
            return Some(ToolOutcome::fault(f.kind, message));
        }
        let rules = session.spec().mocks.rules(&call.name)?;
        let mut fired = None;
        for (i, rule) in rules.rules.iter().enumerate() {
            if !rule.matches(&call.arguments) {
                continue;
            }
            let RuleAction::Fail {
                kind,
                times,
                message,
            } = &rule.action
            else {
                // A result or error rule answers first: no fault.
                break;
            };
            if session.rule_faults(&call.name, i) < *times {
                let mut out = ToolOutcome::fault(*kind, message);
                out.rule_line = Some(rule.line);
                fired = Some((i, out));
                break;
            }
        }
        let (i, out) = fired?;
        session.record_fault(Some((&call.name, i)));
        Some(out)
    }
}

#[async_trait]
impl ToolHost for Faults {
    async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
        self.inner.list(session).await
    }

    fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
        match self.inject(session, call) {
            Some(out) => Decision::Settled(out),
            None => self.inner.prepare(session, call),
        }
    }

    async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
        self.inner.execute(call).await
    }

    // The rest passes through, so faults stack on hosts with per-episode resources.
    async fn execute_in(
        &self,
        session: &Session,
        call: &Invocation,
    ) -> Result<ToolOutcome, HostError> {
        self.inner.execute_in(session, call).await
    }

    async fn open_episode(&self, session: &mut Session) -> Result<(), HostError> {
        self.inner.open_episode(session).await
    }

    async fn close_episode(&self, session: &mut Session) {
        self.inner.close_episode(session).await;
    }

    async fn shutdown(&self) {
        self.inner.shutdown().await;
    }

    fn world_state(&self, session: &Session) -> Option<serde_json::Value> {
        self.inner.world_state(session)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::testutil::{call, episode, prepare_all};
    use super::super::{MockHost, ToolErrorKind};
    use super::*;

    const SUITE: &str = r#"
tools:
  - name: get_shipment
    description: Shipment
    parameters: {type: object, properties: {shipment_id: {type: string}}}
  - name: ping
    description: Ping
    parameters: {type: object}
mocks:
  get_shipment:
    - when: {shipment_id: S1}
      result: {status: delivered}
    - fail: {kind: rate_limit, times: 2}
      when: {shipment_id: {regex: "^S"}}
    - fail: {kind: timeout, message: "took too long"}
    - when: {shipment_id: {regex: "^S"}}
      result: {status: in_transit}
    - result: {status: unknown}
  ping:
    - result: pong
cases:
  - id: c
    kind: should_not_call
    prompt: hi
"#;

    fn summary(out: &[ToolOutcome]) -> Vec<(String, bool)> {
        out.iter()
            .map(|o| {
                let what = match o.error_kind {
                    Some(k) => k.as_str().to_string(),
                    None => o.content.clone(),
                };
                (what, o.fault)
            })
            .collect()
    }

    #[test]
    fn a_fail_rule_fails_the_first_times_matching_calls_then_later_rules_answer() {
        let host = Faults::new(Arc::new(MockHost));
        let calls = [
            call("get_shipment", r#"{"shipment_id": "S9"}"#),
            // S1 is answered by the rule written before the fail rule: no fault, no count.
            call("get_shipment", r#"{"shipment_id": "S1"}"#),
            call("get_shipment", r#"{"shipment_id": "S9"}"#),
            // The rate-limit rule is spent: the catch-all timeout (times 1) fires once.
            call("get_shipment", r#"{"shipment_id": "S9"}"#),
            call("get_shipment", r#"{"shipment_id": "S9"}"#),
            // X5 never matched the rate-limit rule; the timeout rule is spent.
            call("get_shipment", r#"{"shipment_id": "X5"}"#),
            call("ping", "{}"),
        ];
        let (out, session) = prepare_all(&host, episode(SUITE, "c"), &calls);
        let s = |a: &str, f| (a.to_string(), f);
        assert_eq!(
            summary(&out),
            vec![
                s("rate_limit", true),
                s(r#"{"status":"delivered"}"#, false),
                s("rate_limit", true),
                s("timeout", true),
                s(r#"{"status":"in_transit"}"#, false),
                s(r#"{"status":"unknown"}"#, false),
                s(r#""pong""#, false),
            ]
        );
        assert_eq!(
            out[3].content,
            r#"{"error":{"kind":"timeout","message":"took too long"}}"#
        );
        assert_eq!(out[0].rule_line, Some(13));
        assert!(!out[0].executed && out[1].executed);
        let c = session.counters();
        assert_eq!(c.faults, 3);
        assert_eq!(c.rule_faults[&("get_shipment".to_string(), 1)], 2);
        assert_eq!(c.rule_faults[&("get_shipment".to_string(), 2)], 1);
    }

    #[test]
    fn a_tool_whose_rules_only_fail_is_not_pinned_and_the_mock_host_has_no_answer_after_them() {
        let text = r#"
tools:
  - name: add
    description: Add
    parameters: {type: object, properties: {a: {type: integer}}}
mocks:
  add:
    - fail: {kind: rate_limit, times: 1}
cases:
  - id: c
    kind: should_not_call
    prompt: hi
"#;
        let spec = episode(text, "c");
        // Not pinned: with an MCP server behind the mocks, the server answers `add`.
        assert!(!spec.mocks.pins("add"));
        assert!(spec.mocks.rules("add").is_some());
        let calls = [call("add", r#"{"a": 1}"#), call("add", r#"{"a": 1}"#)];
        let (out, _) = prepare_all(&Faults::new(Arc::new(MockHost)), spec, &calls);
        assert_eq!(out[0].error_kind, Some(ToolErrorKind::RateLimit));
        // With only the mocks, nothing answers the retry: the harness says why.
        assert_eq!(
            out[1].content,
            r#"{"error":{"kind":"no_mock","message":"tool `add` is not available in this test (its mocks only inject failures)"}}"#
        );
        assert!(!out[1].executed && !out[1].fault);
        // A `result` rule pins the tool, whatever `fail:` rules come before it.
        let spec = episode(SUITE, "c");
        assert!(spec.mocks.pins("get_shipment") && spec.mocks.pins("ping"));
    }

    #[test]
    fn fault_counters_start_again_in_every_trial() {
        let host = Faults::new(Arc::new(MockHost));
        let calls = [call("get_shipment", r#"{"shipment_id": "S9"}"#)];
        for _trial in 0..3 {
            let (out, _) = prepare_all(&host, episode(SUITE, "c"), &calls);
            assert_eq!(out[0].error_kind, Some(ToolErrorKind::RateLimit));
        }
    }

    #[test]
    fn faults_set_in_code_fail_the_nth_call_overall_or_of_a_tool() {
        let host = Faults::new(Arc::new(MockHost))
            .with(Fault::nth_call(2, ToolErrorKind::ServerError))
            .with(Fault {
                message: Some("no entry".into()),
                ..Fault::nth_call_of("ping", 2, ToolErrorKind::PermissionDenied)
            });
        let calls = [
            call("ping", "{}"),
            call("ping", "{}"),
            call("ping", "{}"),
            call("ping", "{}"),
        ];
        let (out, session) = prepare_all(&host, episode(SUITE, "c"), &calls);
        // Call 2 overall is also ping's 2nd: the first fault listed wins.
        assert_eq!(
            summary(&out),
            vec![
                (r#""pong""#.to_string(), false),
                ("server_error".to_string(), true),
                (r#""pong""#.to_string(), false),
                (r#""pong""#.to_string(), false),
            ]
        );
        let host = Faults::new(Arc::new(MockHost)).with(Fault {
            message: Some("no entry".into()),
            ..Fault::nth_call_of("ping", 3, ToolErrorKind::PermissionDenied)
        });
        let (out, _) = prepare_all(&host, episode(SUITE, "c"), &calls);
        assert_eq!(
            out[2].content,
            r#"{"error":{"kind":"permission_denied","message":"no entry"}}"#
        );
        assert_eq!(session.counters().faults, 1);
    }
}
