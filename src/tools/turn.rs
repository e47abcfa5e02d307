//! Answering one assistant turn's tool calls: the approval policy, then the host, with
//! the calls that need real work executed concurrently and the outcomes returned in
//! the order of the calls.

use std::time::Instant;

use futures::future::join_all;
use serde_json::{Map, Value};

use super::{
    Approval, Decision, HostError, Invocation, Session, ToolErrorKind, ToolHost, ToolOutcome,
};
use crate::chat::ToolCall;
use crate::suite::loops::Answer;

/// Answer `calls` (one assistant turn, in the model's order) with `host`.
///
/// Every call is first decided in order: counted in the session, put to the approval
/// policy (a denied call is not executed and the model reads a "denied by the user"
/// error), checked for arguments that are not a JSON object, then prepared by the
/// host. Calls the host left to execute then run concurrently. The outcomes, in call
/// order, are therefore the same whatever order the executions finish in.
pub async fn run_turn(
    host: &dyn ToolHost,
    session: &mut Session,
    calls: &[ToolCall],
) -> Result<Vec<ToolOutcome>, HostError> {
    let mut decided: Vec<(Invocation, Approval, Decision, f64)> = Vec::with_capacity(calls.len());
    for call in calls {
        let started = Instant::now();
        let (seq, tool_seq) = session.next_call(&call.name);
        let approval = match session.spec().policy.decide(&call.name) {
            None => Approval::NotRequired,
            Some(Answer::Approve) => Approval::Approved,
            Some(Answer::Deny) => Approval::Denied,
        };
        let (arguments, refused) = match parse_arguments(&call.arguments) {
            Ok(a) => (a, None),
            Err(why) => (Map::new(), Some(why)),
        };
        let repeat = if refused.is_none() {
            session.record_arguments(&call.name, &arguments)
        } else {
            1
        };
        let inv = Invocation {
            seq,
            tool_seq,
            repeat,
            name: call.name.clone(),
            arguments,
        };
        let decision = if approval == Approval::Denied {
            Decision::Settled(ToolOutcome::error(
                ToolErrorKind::Denied,
                &format!(
                    "denied by the user: the call of `{}` was not executed",
                    call.name
                ),
                false,
            ))
        } else if let Some(why) = refused {
            Decision::Settled(ToolOutcome::error(
                ToolErrorKind::InvalidArguments,
                &why,
                false,
            ))
        } else {
            host.prepare(session, &inv)
        };
        decided.push((inv, approval, decision, ms(started)));
    }
    // Every decision is made: the executions only read the session (what the host set
    // up for the episode), so they can share it.
    let session: &Session = session;
    let answered = join_all(decided.into_iter().map(
        |(inv, approval, decision, spent)| async move {
            let mut out = match decision {
                Decision::Settled(out) => out,
                Decision::Execute => {
                    let started = Instant::now();
                    let mut out = host.execute_in(session, &inv).await?;
                    out.elapsed_ms = ms(started);
                    out
                }
            };
            out.elapsed_ms += spent;
            out.approval = approval;
            Ok(out)
        },
    ))
    .await;
    answered.into_iter().collect()
}

/// The arguments as a JSON object; an empty string is no arguments (some providers send
/// it for tools without parameters).
fn parse_arguments(raw: &str) -> Result<Map<String, Value>, String> {
    if raw.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, got {}",
            crate::suite::matcher::show(&other)
        )),
        Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use tokio::sync::Notify;

    use super::super::testutil::{call, episode};
    use super::super::{Faults, MockHost, suite_host};
    use super::*;

    const SUITE: &str = r#"
tools:
  - name: weather
    description: Weather
    parameters: {type: object, properties: {city: {type: string}}}
  - name: stock
    description: Stock price
    parameters: {type: object, properties: {symbol: {type: string}}}
  - name: cancel_order
    description: Cancel
    risk: high
    idempotent: false
    parameters: {type: object, properties: {order_id: {type: string}}}
mocks:
  weather:
    - fail: {kind: rate_limit, times: 1}
      when: {city: Paris}
    - when: {city: Paris}
      result: {temp: 18}
    - when: {city: Tokyo}
      result: {temp: 25}
  stock:
    - fail: {kind: server_error, times: 2}
    - result: {price: 101.5}
  cancel_order:
    - result: {cancelled: true}
policy: {confirm: [cancel_order], answer: deny}
cases:
  - id: deny
    kind: should_not_call
    prompt: hi
  - id: approve
    kind: should_not_call
    prompt: hi
    policy: {confirm: [cancel_order], answer: approve}
"#;

    fn turn() -> Vec<ToolCall> {
        vec![
            call("weather", r#"{"city": "Paris"}"#),
            call("stock", r#"{"symbol": "ACME"}"#),
            call("weather", r#"{"city": "Tokyo"}"#),
            call("stock", r#"{"symbol": "ACME"}"#),
            call("weather", r#"{"city": "Paris"}"#),
            call("stock", r#"{"symbol": "ACME"}"#),
        ]
    }

    /// Settles nothing itself: the inner host's answer is held back until `execute`,
    /// which finishes in the order `release` says (each call waits for the one released
    /// before it), so a turn's executions finish out of call order.
    #[derive(Debug)]
    struct Gated {
        inner: Arc<dyn ToolHost>,
        held: Mutex<HashMap<u32, ToolOutcome>>,
        release: Vec<u32>,
        gates: HashMap<u32, Arc<Notify>>,
        finished: Mutex<Vec<u32>>,
    }

    impl Gated {
        fn new(inner: Arc<dyn ToolHost>, release: Vec<u32>) -> Gated {
            let gates = release
                .iter()
                .map(|s| (*s, Arc::new(Notify::new())))
                .collect();
            Gated {
                inner,
                held: Mutex::default(),
                release,
                gates,
                finished: Mutex::default(),
            }
        }
    }

    #[async_trait]
    impl ToolHost for Gated {
        async fn list(&self, session: &Session) -> Result<Vec<String>, HostError> {
            self.inner.list(session).await
        }

        fn prepare(&self, session: &mut Session, call: &Invocation) -> Decision {
            match self.inner.prepare(session, call) {
                Decision::Settled(out) => {
                    self.held.lock().unwrap().insert(call.seq, out);
                    Decision::Execute
                }
                Decision::Execute => Decision::Execute,
            }
        }

        async fn execute(&self, call: &Invocation) -> Result<ToolOutcome, HostError> {
            let pos = self.release.iter().position(|s| *s == call.seq).unwrap();
            if pos > 0 {
                // `notify_one` stores a permit, so the wait can not miss an earlier release.
                self.gates[&self.release[pos - 1]].notified().await;
            }
            tokio::task::yield_now().await;
            self.finished.lock().unwrap().push(call.seq);
            self.gates[&call.seq].notify_one();
            Ok(self.held.lock().unwrap().remove(&call.seq).unwrap())
        }
    }

    #[tokio::test]
    async fn concurrent_executions_finishing_out_of_order_give_the_sequential_outcomes() {
        let calls = turn();
        // Sequentially: one call per turn, each finished before the next is decided.
        let host = suite_host();
        let mut seq_session = Session::new(episode(SUITE, "deny"));
        let mut sequential = Vec::new();
        for c in &calls {
            let out = run_turn(host.as_ref(), &mut seq_session, std::slice::from_ref(c))
                .await
                .unwrap();
            sequential.extend(out.iter().map(ToolOutcome::untimed));
        }
        // Concurrently, one turn, executions finishing last call first.
        let gated = Gated::new(suite_host(), vec![6, 5, 4, 3, 2, 1]);
        let mut session = Session::new(episode(SUITE, "deny"));
        let concurrent = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            run_turn(&gated, &mut session, &calls),
        )
        .await
        .expect("the executions of one turn run concurrently (sequential ones wait forever)")
        .unwrap();
        assert_eq!(*gated.finished.lock().unwrap(), vec![6, 5, 4, 3, 2, 1]);
        let concurrent: Vec<ToolOutcome> = concurrent.iter().map(ToolOutcome::untimed).collect();
        assert_eq!(concurrent, sequential);
        assert_eq!(session.counters(), seq_session.counters());
        // And the outcomes are the ones the rules give, in call order.
        let kinds: Vec<String> = concurrent
            .iter()
            .map(|o| {
                o.error_kind
                    .map_or(o.content.clone(), |k| k.as_str().to_string())
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "rate_limit",
                "server_error",
                r#"{"temp":25}"#,
                "server_error",
                r#"{"temp":18}"#,
                r#"{"price":101.5}"#,
            ]
        );
        assert_eq!(session.counters().faults, 3);
    }

    #[tokio::test]
    async fn a_denied_call_is_not_executed_and_an_approved_one_is() {
        let host = suite_host();
        let calls = [
            call("cancel_order", r#"{"order_id": "A1"}"#),
            call("weather", r#"{"city": "Tokyo"}"#),
        ];
        let mut session = Session::new(episode(SUITE, "deny"));
        let out = run_turn(host.as_ref(), &mut session, &calls).await.unwrap();
        assert_eq!(
            out[0].content,
            r#"{"error":{"kind":"denied","message":"denied by the user: the call of `cancel_order` was not executed"}}"#
        );
        assert!(out[0].is_error && !out[0].executed);
        assert_eq!(out[0].approval, Approval::Denied);
        assert_eq!(out[1].approval, Approval::NotRequired);
        assert_eq!(out[1].content, r#"{"temp":25}"#);
        // The denied call still counts as a call of the episode.
        assert_eq!(session.counters().calls, 2);

        let mut session = Session::new(episode(SUITE, "approve"));
        let out = run_turn(host.as_ref(), &mut session, &calls).await.unwrap();
        assert_eq!(out[0].content, r#"{"cancelled":true}"#);
        assert!(!out[0].is_error && out[0].executed);
        assert_eq!(out[0].approval, Approval::Approved);
    }

    #[tokio::test]
    async fn arguments_that_are_not_an_object_are_refused_before_the_host() {
        let host = Faults::new(Arc::new(MockHost));
        let calls = [
            call("weather", r#"{"city": "Pari"#),
            call("weather", r#"["Paris"]"#),
            call("weather", r#"{"city": "Paris"}"#),
            call("cancel_order", ""),
        ];
        let mut session = Session::new(episode(SUITE, "approve"));
        let out = run_turn(&host, &mut session, &calls).await.unwrap();
        assert_eq!(out[0].error_kind, Some(ToolErrorKind::InvalidArguments));
        assert!(
            out[0].content.contains("not valid JSON"),
            "{}",
            out[0].content
        );
        assert_eq!(
            out[1].content,
            r#"{"error":{"kind":"invalid_arguments","message":"the arguments must be a JSON object, got [\"Paris\"]"}}"#
        );
        assert!(!out[0].executed && !out[1].executed);
        // The refused calls did not use up the fail rule: the first good call fails.
        assert_eq!(out[2].error_kind, Some(ToolErrorKind::RateLimit));
        // Empty arguments are no arguments.
        assert_eq!(out[3].content, r#"{"cancelled":true}"#);
    }

    #[tokio::test]
    async fn identical_calls_are_counted_whatever_the_key_order() {
        let host = suite_host();
        let calls = [
            call("weather", r#"{"city": "Tokyo", "unit": "c"}"#),
            call("weather", r#"{"unit": "c", "city": "Tokyo"}"#),
            call("weather", r#"{"city": "Tokyo"}"#),
            call("stock", r#"{"unit": "c", "city": "Tokyo"}"#),
        ];
        let mut session = Session::new(episode(SUITE, "deny"));
        run_turn(host.as_ref(), &mut session, &calls).await.unwrap();
        run_turn(host.as_ref(), &mut session, &calls[1..2])
            .await
            .unwrap();
        let c = session.counters();
        let counts: Vec<(&str, usize, u32)> = c
            .identical
            .iter()
            .map(|(t, a, n)| (t.as_str(), a.len(), *n))
            .collect();
        assert_eq!(
            counts,
            vec![("weather", 2, 3), ("weather", 1, 1), ("stock", 2, 1)]
        );
        assert_eq!(c.most_identical, 3);
        assert_eq!((c.calls, c.per_tool["weather"]), (5, 4));
    }
}
