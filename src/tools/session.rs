//! The state of one episode's tool calls: call counts and fault counters.
//!
//! A session belongs to one trial, so counters start from zero in every trial: a
//! `fail: {times: 1}` rule fails the first matching call of each trial, repeats included.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::suite::loops::EpisodeSpec;

/// One episode's tool state.
#[derive(Debug, Clone)]
pub struct Session {
    spec: Arc<EpisodeSpec>,
    counters: Counters,
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
}

impl Session {
    /// A fresh session for an episode of the case whose loop spec is `spec`.
    pub fn new(spec: Arc<EpisodeSpec>) -> Session {
        Session {
            spec,
            counters: Counters::default(),
        }
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
        let n = self.counters.per_tool.entry(tool.to_string()).or_default();
        *n += 1;
        (self.counters.calls, *n)
    }

    /// Count a call of `tool` with `arguments` among identical calls: how many times
    /// this exact call has now been made.
    pub fn record_arguments(&mut self, tool: &str, arguments: &Map<String, Value>) -> u32 {
        let c = &mut self.counters;
        let n = match c
            .identical
            .iter_mut()
            .find(|(t, a, _)| t == tool && a == arguments)
        {
            Some((_, _, n)) => {
                *n += 1;
                *n
            }
            None => {
                c.identical.push((tool.to_string(), arguments.clone(), 1));
                1
            }
        };
        c.most_identical = c.most_identical.max(n);
        n
    }

    /// Failures rule `rule` of `tool` has injected so far.
    pub fn rule_faults(&self, tool: &str, rule: usize) -> u32 {
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
