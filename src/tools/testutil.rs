//! Helpers for the tool host tests: a loop spec from suite text, calls, and preparing
//! a list of calls in order.

use std::path::Path;
use std::sync::Arc;

use super::{Decision, Invocation, Session, ToolHost, ToolOutcome};
use crate::chat::ToolCall;
use crate::suite::loops::EpisodeSpec;

/// The loop spec of case `id` of the suite `text`.
pub fn episode(text: &str, id: &str) -> Arc<EpisodeSpec> {
    let suite = crate::suite::load_str(text, Path::new("s.yaml"))
        .unwrap_or_else(|e| panic!("test suite does not load: {e}"));
    let case = suite.cases.iter().find(|c| c.id == id).expect("case");
    case.episode.clone().expect("a loop case")
}

/// A call of `name` with raw `arguments`.
pub fn call(name: &str, arguments: &str) -> ToolCall {
    // Built from JSON so the helper holds whether the id is optional or always set.
    let id = format!("call_{name}");
    serde_json::from_value(serde_json::json!({"id": id, "name": name, "arguments": arguments}))
        .expect("a tool call")
}

/// Prepare `calls` one after another in a new session (hosts that settle every call).
pub fn prepare_all(
    host: &dyn ToolHost,
    spec: Arc<EpisodeSpec>,
    calls: &[ToolCall],
) -> (Vec<ToolOutcome>, Session) {
    let mut session = Session::new(spec);
    let out = calls
        .iter()
        .map(|c| {
            let (seq, tool_seq) = session.next_call(&c.name);
            let arguments = serde_json::from_str(&c.arguments).expect("object arguments");
            let repeat = session.record_arguments(&c.name, &arguments);
            let inv = Invocation {
                seq,
                tool_seq,
                repeat,
                name: c.name.clone(),
                arguments,
            };
            match host.prepare(&mut session, &inv) {
                Decision::Settled(o) => o,
                Decision::Execute => panic!("expected a settled answer for {inv:?}"),
            }
        })
        .collect();
    (out, session)
}
