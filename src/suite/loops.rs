//! The suite keys of tool loops: `mocks`, `limits`, `policy`, `turns`, and a tool's
//! `risk` and `idempotent`, as written (serde types) and as compiled.
//!
//! A case runs as a loop (an episode of rounds) when the suite or the case gives
//! `mocks:`. The written form only checks shape; `suite::loop_compile` checks meaning
//! (tools named, matchers, bounds) and builds the [`EpisodeSpec`] a case carries. The
//! compiled rules are read by the tool host (`crate::tools`), which answers the model's
//! calls from them.

use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::matcher::{Matcher, fields_match};
use super::model::ExtraArgs;
use super::span::Spanned;
use super::tool_error::{ToolErrorKind, declared};

/// `mocks:` as written: tool name → its rules, tried in order (the first that matches
/// answers the call).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct MocksSpec(
    #[schemars(with = "IndexMap<String, Vec<MockRuleSpec>>")]
    pub  IndexMap<Spanned<String>, Vec<Spanned<MockRuleSpec>>>,
);

/// One mock rule: an optional `when` and exactly one of `result`, `error` or `fail`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MockRuleSpec {
    /// Argument matchers by parameter name (as in `expect.calls[].args`); the rule
    /// applies to calls whose arguments match. Without `when` it applies to every call.
    #[serde(default)]
    #[schemars(with = "Option<IndexMap<String, Value>>")]
    pub when: Option<IndexMap<Spanned<String>, Spanned<Value>>>,
    /// The tool's result (any value; sent to the model as JSON text).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<Value>")]
    pub result: Option<Spanned<Value>>,
    /// The tool answers with this error.
    #[serde(default)]
    pub error: Option<ErrorSpec>,
    /// The first `times` matching calls of each trial fail with this error; later
    /// matching calls go on to the next rules.
    #[serde(default)]
    pub fail: Option<FailSpec>,
}

/// `result: null` is a result (null), not a missing key.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Spanned<Value>>, D::Error> {
    Spanned::<Value>::deserialize(d).map(Some)
}

/// A tool error a rule answers with.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    /// What went wrong (`rate_limit`, `timeout`, `server_error`, `not_found`,
    /// `permission_denied`, `invalid_arguments`, `needs_confirmation`).
    #[serde(deserialize_with = "declared")]
    pub kind: Spanned<ToolErrorKind>,
    /// The message the model reads (default: a plain sentence for the kind).
    #[serde(default)]
    pub message: Option<String>,
}

/// An injected failure: the first `times` matching calls of each trial fail.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailSpec {
    /// The error kind of the failure.
    #[serde(deserialize_with = "declared")]
    pub kind: Spanned<ToolErrorKind>,
    /// How many matching calls fail, per trial (default 1).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub times: Option<Spanned<u32>>,
    /// The message the model reads (default: a plain sentence for the kind).
    #[serde(default)]
    pub message: Option<String>,
}

/// `limits:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Most rounds (model turns) in one episode (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_rounds: Option<Spanned<u32>>,
    /// Most tool calls in one episode (default 30).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub max_tool_calls: Option<Spanned<u32>>,
    /// Most calls with the same tool and arguments in one episode (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub max_identical_calls: Option<Spanned<u32>>,
    /// Most rounds of calls answering one user turn (default: no limit beyond
    /// `max_rounds`). The round that goes over still has its calls answered, and then the
    /// episode stops at `max_rounds`: BFCL's step limit (20) works this way.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_rounds_per_turn: Option<Spanned<u32>>,
}

/// `policy:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Tools whose calls need the user's approval before they run.
    #[serde(default)]
    pub confirm: Vec<Spanned<String>>,
    /// The harness's answer, as the user, to a call of a listed tool (default `deny`).
    #[serde(default)]
    pub answer: Option<Answer>,
}

/// The simulated user's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The call is not executed; the model receives a "denied by the user" tool error.
    #[default]
    Deny,
    /// The call is executed.
    Approve,
}

/// How much harm a tool can do (`risk:` on a tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// An ordinary tool (default).
    #[default]
    Low,
    /// A tool whose calls a careful model confirms with the user first.
    High,
}

/// What a tool's calls do to the world, as the suite declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolEffects {
    /// `risk:` (default `low`).
    pub risk: Risk,
    /// `idempotent:` (default true): false when calling twice with the same arguments
    /// does the thing twice (a duplicate side effect).
    pub idempotent: bool,
}

impl Default for ToolEffects {
    fn default() -> Self {
        ToolEffects {
            risk: Risk::Low,
            idempotent: true,
        }
    }
}

/// Default `limits.max_rounds`.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;
/// Default `limits.max_tool_calls`.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 30;
/// Default `limits.max_identical_calls`.
pub const DEFAULT_MAX_IDENTICAL_CALLS: u32 = 3;
/// Largest `limits.max_rounds` accepted (a typo like 10000 would run for hours).
pub const MAX_ROUNDS: u32 = 100;
/// Largest `limits.max_tool_calls` (and `limits.max_identical_calls`, and `fail.times`).
pub const MAX_TOOL_CALLS: u32 = 1000;
/// Most scripted user follow-ups (`turns`) in one case.
pub const MAX_TURNS: usize = 50;

/// The limits of one episode, with defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Most rounds.
    pub max_rounds: u32,
    /// Most tool calls.
    pub max_tool_calls: u32,
    /// Most calls with identical tool and arguments.
    pub max_identical_calls: u32,
    /// Most rounds of calls answering one user turn (`None`: no such limit); the round
    /// that goes over is answered, then the episode stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rounds_per_turn: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            max_identical_calls: DEFAULT_MAX_IDENTICAL_CALLS,
            max_rounds_per_turn: None,
        }
    }
}

/// The approval policy of one episode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// Tools whose calls are put to the simulated user.
    pub confirm: Vec<String>,
    /// The user's answer.
    pub answer: Answer,
}

impl Policy {
    /// The user's answer to a call of `tool`; `None` when the tool needs no approval.
    pub fn decide(&self, tool: &str) -> Option<Answer> {
        self.confirm
            .iter()
            .any(|t| t == tool)
            .then_some(self.answer)
    }
}

/// What a case needs to run as a tool loop: present on a case when the suite or the
/// case gives `mocks`.
#[derive(Debug, Clone)]
pub struct EpisodeSpec {
    /// The tools the case offers, by name (a call to another name is an unknown tool).
    pub tools: Vec<String>,
    /// The mock rules in force: the case's own per tool, else the suite's.
    pub mocks: MockTable,
    /// Round and call limits.
    pub limits: Limits,
    /// The approval policy.
    pub policy: Policy,
    /// Scripted user follow-ups, one after each text answer of the model.
    pub turns: Vec<String>,
    /// Calls made on the episode's session after it ends (`expect.end_state`), whose
    /// results the judge checks.
    pub end_state: Vec<super::end_state::EndStateCall>,
    /// The built-in world that answers the calls no mock rule pins (`world:`), opened
    /// fresh for each trial.
    pub world: Option<Arc<dyn super::world::CompiledWorld>>,
    /// Tools kept from the model until a user turn (`withheld:`): each tool's name and
    /// the turn (1-based index into `turns`) from which it is offered.
    pub withheld: Vec<(String, usize)>,
}

/// Mock rules per tool. Rules are shared: cases that do not replace a tool's rules
/// point at the suite's.
#[derive(Debug, Clone, Default)]
pub struct MockTable {
    /// Tool name → its rules.
    pub tools: IndexMap<String, Arc<ToolRules>>,
}

impl MockTable {
    /// The rules of `tool`, if it has any.
    pub fn rules(&self, tool: &str) -> Option<&ToolRules> {
        self.tools.get(tool).map(Arc::as_ref)
    }

    /// Whether the mocks answer `tool`'s calls: it has a `result` or `error` rule
    /// ([`ToolRules::pins`]). A tool with no rules, or with `fail:` rules only, is
    /// answered by whatever stands behind the mocks (an MCP server), its faults first.
    pub fn pins(&self, tool: &str) -> bool {
        self.rules(tool).is_some_and(ToolRules::pins)
    }
}

/// One tool's rules, in the order written.
#[derive(Debug, Clone, Default)]
pub struct ToolRules {
    /// The rules; the first that matches a call answers it.
    pub rules: Vec<MockRule>,
}

impl ToolRules {
    /// Whether these rules answer calls at all: some rule is a `result` or an `error`.
    /// `fail:` rules alone only put faults in front of the tool: after them, a call goes
    /// on to whatever answers the tool (an MCP server), as the docs promise that mocks,
    /// faults and the server stack.
    pub fn pins(&self) -> bool {
        self.rules.iter().any(|r| !r.is_fault())
    }

    /// The rule that answers a call with `args`: the first `result` or `error` rule
    /// whose `when` matches (`fail:` rules are the fault injector's, tried before).
    pub fn answer(&self, args: &Map<String, Value>) -> Option<&MockRule> {
        self.rules
            .iter()
            .filter(|r| !r.is_fault())
            .find(|r| r.matches(args))
    }
}

/// A compiled mock rule.
#[derive(Debug, Clone)]
pub struct MockRule {
    /// Argument matchers (`None`: the rule matches every call).
    pub when: Option<Vec<(String, Matcher)>>,
    /// What the rule does.
    pub action: RuleAction,
    /// The line the rule starts on (0 when unknown), for messages and transcripts.
    pub line: u32,
}

impl MockRule {
    /// Whether the rule applies to a call with these arguments.
    pub fn matches(&self, args: &Map<String, Value>) -> bool {
        self.when
            .as_ref()
            .is_none_or(|fields| fields_match(fields, ExtraArgs::Allow, args))
    }

    /// Whether this is a `fail:` rule (answered by the fault injector, not the mock).
    pub fn is_fault(&self) -> bool {
        matches!(self.action, RuleAction::Fail { .. })
    }
}

/// What a matching rule does.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleAction {
    /// Answer with this value.
    Result(Value),
    /// Answer with this error.
    Error {
        /// The kind.
        kind: ToolErrorKind,
        /// The message.
        message: String,
    },
    /// Fail the first `times` matching calls of each trial.
    Fail {
        /// The kind.
        kind: ToolErrorKind,
        /// How many calls fail.
        times: u32,
        /// The message.
        message: String,
    },
}
