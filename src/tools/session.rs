//! The state of one episode's tool calls: call counts and fault counters.
//!
//! A session belongs to one trial, so counters start from zero in every trial: a
//! `fail: {times: 1}` rule fails the first matching call of each trial, repeats included.
//!
//! Counting a call costs the same however long the episode has run: identical calls
//! are found through a hash of (tool, arguments) that ignores key order
//! (`IdenticalIndex`), not by comparing with every earlier call, which made a round
//! cost grow with the rounds before it (`cargo bench --bench episode_memory`).

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHasher};
use serde_json::{Map, Value};

use crate::suite::loops::EpisodeSpec;

/// One episode's tool state.
#[derive(Debug, Clone)]
pub struct Session {
    spec: Arc<EpisodeSpec>,
    counters: Counters,
    state: Option<EpisodeState>,
}

/// What a host set up for one episode ([`super::ToolHost::open_episode`]), kept in the
/// session so its calls reach it; type-erased because each host keeps its own kind.
#[derive(Clone)]
pub struct EpisodeState(pub Arc<dyn Any + Send + Sync>);

impl fmt::Debug for EpisodeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EpisodeState(..)")
    }
}

/// The counters of a session (compared in tests: they must not depend on timing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Calls made so far.
    pub calls: u32,
    /// Calls made so far, per tool.
    pub per_tool: HashMap<String, u32>,
    /// Failures injected so far by each `fail:` rule, by (tool, rule index).
    pub rule_faults: HashMap<(String, usize), u32>,
    /// Failures injected so far, all sources.
    pub faults: u32,
    /// Each distinct (tool, arguments) called so far and how many times, in first-call
    /// order (arguments compare as JSON values: key order does not matter).
    pub identical: Vec<(String, Map<String, Value>, u32)>,
    /// The most times one (tool, arguments) was called (what `max_identical_calls` bounds).
    pub most_identical: u32,
    /// Where each entry of `identical` is, by its hash.
    index: IdenticalIndex,
}

/// The positions in [`Counters::identical`] by a hash of (tool, arguments) that ignores
/// key order ([`call_hash`]). Derived from `identical`, so it takes no part in
/// comparisons and is left out of debug output.
#[derive(Clone, Default)]
struct IdenticalIndex(FxHashMap<u64, Vec<usize>>);

impl PartialEq for IdenticalIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for IdenticalIndex {}

impl fmt::Debug for IdenticalIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("..")
    }
}

impl Counters {
    /// How many times `tool` has been called with `arguments` so far (compared as JSON
    /// values: key order does not matter).
    pub fn identical_count(&self, tool: &str, arguments: &Map<String, Value>) -> u32 {
        self.find_identical(call_hash(tool, arguments), tool, arguments)
            .map_or(0, |i| self.identical[i].2)
    }

    fn find_identical(
        &self,
        hash: u64,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<usize> {
        self.index.0.get(&hash)?.iter().copied().find(|&i| {
            let (t, a, _) = &self.identical[i];
            t == tool && a == arguments
        })
    }
}

/// A hash of a call that equal calls share: the tool, then the arguments with object
/// entries combined in an order-free way (JSON objects compare without key order).
fn call_hash(tool: &str, arguments: &Map<String, Value>) -> u64 {
    let mut h = FxHasher::default();
    tool.hash(&mut h);
    h.write_u64(object_hash(arguments));
    h.finish()
}

fn object_hash(map: &Map<String, Value>) -> u64 {
    // Each entry hashed on its own, summed: the same for any key order.
    map.iter().fold(map.len() as u64, |sum, (k, v)| {
        let mut h = FxHasher::default();
        k.hash(&mut h);
        value_hash(v, &mut h);
        sum.wrapping_add(h.finish())
    })
}

fn value_hash(v: &Value, h: &mut FxHasher) {
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => {
            h.write_u8(1);
            b.hash(h);
        }
        Value::Number(n) => {
            h.write_u8(2);
            // Numbers equal as JSON values hash alike: an integer is never equal to a
            // float, and 0.0 equals -0.0.
            if let Some(u) = n.as_u64() {
                h.write_u64(u);
            } else if let Some(i) = n.as_i64() {
                h.write_i64(i);
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                h.write_u64(if f == 0.0 { 0 } else { f.to_bits() });
            }
        }
        Value::String(s) => {
            h.write_u8(3);
            s.hash(h);
        }
        Value::Array(items) => {
            h.write_u8(4);
            h.write_usize(items.len());
            items.iter().for_each(|x| value_hash(x, h));
        }
        Value::Object(map) => {
            h.write_u8(5);
            h.write_u64(object_hash(map));
        }
    }
}

impl Session {
    /// A fresh session for an episode of the case whose loop spec is `spec`.
    pub fn new(spec: Arc<EpisodeSpec>) -> Session {
        Session {
            spec,
            counters: Counters::default(),
            state: None,
        }
    }

    /// Keep what the host set up for this episode (replacing what was kept before).
    pub fn set_state(&mut self, state: EpisodeState) {
        self.state = Some(state);
    }

    /// What the host set up for this episode, if it is of type `T`.
    pub fn state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.state.as_ref()?.0.clone().downcast::<T>().ok()
    }

    /// Take what the host set up out of the session (to release it).
    pub fn take_state(&mut self) -> Option<EpisodeState> {
        self.state.take()
    }

    /// The case's loop spec (rules, policy, limits).
    pub fn spec(&self) -> &EpisodeSpec {
        &self.spec
    }

    /// The counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Count a new call of `tool`: its 1-based numbers among all calls and among the
    /// tool's calls.
    pub fn next_call(&mut self, tool: &str) -> (u32, u32) {
        self.counters.calls += 1;
        let per_tool = &mut self.counters.per_tool;
        // Look up before inserting, so a tool called before costs no new key.
        let n = match per_tool.get_mut(tool) {
            Some(n) => n,
            None => per_tool.entry(tool.to_string()).or_default(),
        };
        *n += 1;
        (self.counters.calls, *n)
    }

    /// Count a call of `tool` with `arguments` among identical calls: how many times
    /// this exact call has now been made.
    pub fn record_arguments(&mut self, tool: &str, arguments: &Map<String, Value>) -> u32 {
        let hash = call_hash(tool, arguments);
        let n = match self.counters.find_identical(hash, tool, arguments) {
            Some(i) => {
                let n = &mut self.counters.identical[i].2;
                *n += 1;
                *n
            }
            None => {
                let c = &mut self.counters;
                c.index.0.entry(hash).or_default().push(c.identical.len());
                c.identical.push((tool.to_string(), arguments.clone(), 1));
                1
            }
        };
        let c = &mut self.counters;
        c.most_identical = c.most_identical.max(n);
        n
    }

    /// Failures rule `rule` of `tool` has injected so far.
    pub fn rule_faults(&self, tool: &str, rule: usize) -> u32 {
        if self.counters.rule_faults.is_empty() {
            // No fault injected yet: skip building the key.
            return 0;
        }
        self.counters
            .rule_faults
            .get(&(tool.to_string(), rule))
            .copied()
            .unwrap_or(0)
    }

    /// Record a failure injected by rule `rule` of `tool` (`None`: a fault set in code).
    pub fn record_fault(&mut self, rule: Option<(&str, usize)>) {
        self.counters.faults += 1;
        if let Some((tool, i)) = rule {
            *self
                .counters
                .rule_faults
                .entry((tool.to_string(), i))
                .or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::testutil::episode;
    use super::*;

    const SUITE: &str = r#"
tools:
  - name: search
    description: Search
    parameters: {type: object}
mocks:
  search:
    - result: ok
cases:
  - id: c
    kind: should_not_call
    prompt: hi
"#;

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn identical_calls_are_found_by_json_equality_not_by_text() {
        let mut s = Session::new(episode(SUITE, "c"));
        let nested = args(json!({"q": "x", "opts": {"a": 1, "b": [1, 2]}}));
        assert_eq!(s.record_arguments("search", &nested), 1);
        // Key order ignored at every depth; the same call again.
        let reordered = args(json!({"opts": {"b": [1, 2], "a": 1}, "q": "x"}));
        assert_eq!(s.record_arguments("search", &reordered), 2);
        // List order counts; 1 and 1.0 are different JSON values; so is another tool.
        for (tool, other) in [
            ("search", json!({"q": "x", "opts": {"a": 1, "b": [2, 1]}})),
            ("search", json!({"q": "x", "opts": {"a": 1.0, "b": [1, 2]}})),
            (
                "search",
                json!({"q": "x", "opts": {"a": 1, "b": [1, 2], "c": null}}),
            ),
            ("find", json!({"q": "x", "opts": {"a": 1, "b": [1, 2]}})),
        ] {
            assert_eq!(s.record_arguments(tool, &args(other)), 1, "{tool}");
        }
        // 0.0 equals -0.0 as a JSON value, so they are one call.
        assert_eq!(s.record_arguments("search", &args(json!({"t": 0.0}))), 1);
        assert_eq!(s.record_arguments("search", &args(json!({"t": -0.0}))), 2);
        let c = s.counters();
        assert_eq!(c.identical_count("search", &reordered), 2);
        assert_eq!(c.identical_count("search", &args(json!({"t": -0.0}))), 2);
        assert_eq!(c.identical_count("search", &args(json!({"q": "y"}))), 0);
        assert_eq!(c.identical_count("find", &nested), 1);
        assert_eq!(c.identical.len(), 6);
        assert_eq!(c.most_identical, 2);
    }

    #[test]
    fn counts_stay_right_over_many_distinct_calls() {
        // Many entries share the index: each is still counted on its own.
        let mut s = Session::new(episode(SUITE, "c"));
        for round in 0..3 {
            for i in 0..500 {
                let a = args(json!({"page": i, "q": format!("w{}", i % 7)}));
                assert_eq!(s.record_arguments("search", &a), round + 1);
            }
        }
        assert_eq!(s.counters().identical.len(), 500);
        assert_eq!(s.counters().most_identical, 3);
        assert_eq!(
            s.counters()
                .identical_count("search", &args(json!({"q": "w3", "page": 10}))),
            3
        );
    }
}
