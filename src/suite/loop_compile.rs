//! Checking the tool-loop keys of a suite (`mocks`, `limits`, `policy`, `turns`) and
//! building each loop case's [`EpisodeSpec`].
//!
//! A case is a loop when its calls have something to answer them: `mocks` (the suite's
//! or its own), or an MCP server named by `tools_from.mcp` for a case that asks for a loop
//! (loop expectations, `turns`, its own `limits` or `policy`): its unmocked calls are
//! executed on the server ([`crate::mcp::host::McpHost`]).
//!
//! Suite-level values are compiled once; a case's `limits` and `policy` replace the
//! suite's whole, and its `mocks` replace the suite's rules tool by tool (a tool the case
//! does not mention keeps the suite's rules, shared rather than copied). Every problem
//! is reported with its place, like the rest of the suite.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::Tool;
use super::compile::Checker;
use super::loops::{
    EpisodeSpec, LimitsSpec, MAX_ROUNDS, MAX_TOOL_CALLS, MAX_TURNS, MockRule, MockRuleSpec,
    MockTable, MocksSpec, Policy, PolicySpec, RuleAction, ToolRules,
};
use super::loops::{Limits, Risk, ToolEffects};
use super::matcher::{CompileContext, Matcher, closest_keyword};
use super::model::{CaseSpec, ExtraArgs, SuiteFile, ToolSpec};
use super::normalize::Normalizer;
use super::span::Spanned;
use crate::util::suggest;

/// The tools a list of mocks or a policy may name.
pub(super) struct ToolScope<'a> {
    /// Compiled tools by name.
    pub tools: &'a HashMap<&'a str, &'a Tool>,
    /// Names of tools whose schemas did not compile (already reported).
    pub broken: &'a [String],
    /// Whose tools these are, for messages: `suite's` or `case's`.
    pub owner: &'static str,
}

impl ToolScope<'_> {
    fn knows(&self, name: &str) -> bool {
        self.tools.contains_key(name) || self.broken.iter().any(|b| b == name)
    }

    fn unknown_hint(&self, name: &str) -> String {
        let mut names: Vec<&str> = self.tools.keys().copied().collect();
        names.sort_unstable();
        let list = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        match suggest::closest(name, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`? the {} tools are: {list}", self.owner),
            None => format!("the {} tools are: {list}", self.owner),
        }
    }
}

/// The suite-level loop keys, compiled.
#[derive(Debug, Default)]
pub(super) struct SuiteLoops {
    /// `mocks` (`None`: not given).
    mocks: Option<IndexMap<String, Arc<ToolRules>>>,
    /// `limits` (`None`: not given).
    limits: Option<Limits>,
    /// `policy` (`None`: not given).
    policy: Option<Policy>,
    /// `tools_from.mcp` names a server: cases that ask for a loop are loops whose calls
    /// the server executes (`mocks`, if any, still answer the tools they name).
    server: bool,
}

/// A tool's `risk` and `idempotent`.
pub(super) fn effects(t: &ToolSpec) -> ToolEffects {
    ToolEffects {
        risk: t.risk.unwrap_or(Risk::Low),
        idempotent: t.idempotent.unwrap_or(true),
    }
}

/// Check the suite's own `mocks`, `limits` and `policy`; `scope` holds every tool the
/// suite or any case offers; `server`: `tools_from.mcp` names a server.
pub(super) fn suite_loops(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    scope: &ToolScope<'_>,
    norm: Normalizer,
    server: bool,
) -> SuiteLoops {
    let any_case_mocks = model
        .cases
        .iter()
        .any(|k| k.mocks.is_some() || k.world.is_some());
    let mocks = model
        .mocks
        .as_ref()
        .map(|m| compile_mocks(c, m, "mocks", scope, norm));
    // Limits with errors are left out (not clamped), so cases are not checked against
    // values the user never wrote.
    let limits = model
        .limits
        .as_ref()
        .and_then(|l| compile_limits(c, l, "limits"));
    let policy = model
        .policy
        .as_ref()
        .map(|p| compile_policy(c, p, "policy", scope));
    if mocks.is_none() && !any_case_mocks && !server {
        for (key, given) in [("limits", limits.is_some()), ("policy", policy.is_some())] {
            if given {
                c.report(
                    (1, 1),
                    key,
                    format!("`{key}` applies to tool loops, but no case is one (the suite and its cases give no `mocks` or `world`)"),
                    Some("add `mocks:` (tool name → rules) to the suite or to the cases that run as loops; see docs/suite-format.md".into()),
                );
            }
        }
    }
    SuiteLoops {
        mocks,
        limits,
        policy,
        server,
    }
}

/// Check a case's loop keys and build its episode; `None` when the case is not a loop
/// (or its loop keys have errors, which are reported).
pub(super) fn case_episode(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    suite: &SuiteLoops,
    scope: &ToolScope<'_>,
    norm: Normalizer,
) -> Option<Arc<EpisodeSpec>> {
    // A case is a loop when something answers its calls: mock rules, or the server for
    // a case that asks for a loop (loop expectations, turns, its own limits or policy);
    // the other cases of a server's suite stay single-turn (tool selection only).
    let asks_for_loop = spec.expect.as_ref().is_some_and(super::trajectory::given)
        || spec.turns.is_some()
        || spec.limits.is_some()
        || spec.policy.is_some();
    let is_loop = suite.mocks.is_some()
        || spec.mocks.is_some()
        || spec.world.is_some()
        || (suite.server && asks_for_loop);
    if !is_loop {
        let keys = [
            ("limits", spec.limits.is_some()),
            ("policy", spec.policy.is_some()),
            ("turns", spec.turns.is_some()),
            ("withheld", spec.withheld.is_some()),
        ];
        for (key, _) in keys.iter().filter(|(_, given)| *given) {
            c.report(
                spec.id.at(),
                format!("{field}.{key}"),
                format!(
                    "`{key}` applies to tool loops, but case `{}` is not one (neither it nor the suite gives `mocks`)",
                    spec.id.value
                ),
                Some("add `mocks:` to the case (or the suite) so its tool calls are answered; see docs/suite-format.md".into()),
            );
        }
        return None;
    }
    let errors = c.diag_count();
    let mut tools: Vec<String> = scope.tools.keys().map(|s| s.to_string()).collect();
    tools.extend(scope.broken.iter().cloned());
    tools.sort_unstable();
    // The suite's rules for the tools this case offers, then the case's own per tool.
    let mut table: IndexMap<String, Arc<ToolRules>> = suite
        .mocks
        .iter()
        .flatten()
        .filter(|(name, _)| scope.knows(name))
        .map(|(name, rules)| (name.clone(), rules.clone()))
        .collect();
    if let Some(own) = &spec.mocks {
        let own = compile_mocks(c, own, &format!("{field}.mocks"), scope, norm);
        table.extend(own);
    }
    let limits = match &spec.limits {
        Some(l) => compile_limits(c, l, &format!("{field}.limits")),
        None => Some(suite.limits.unwrap_or_default()),
    };
    let policy = match &spec.policy {
        Some(p) => compile_policy(c, p, &format!("{field}.policy"), scope),
        None => {
            let mut p = suite.policy.clone().unwrap_or_default();
            // A suite-wide policy applies to the tools this case offers.
            p.confirm.retain(|t| scope.knows(t));
            p
        }
    };
    let turns = compile_turns(c, spec, field, limits.as_ref());
    let limits = limits.unwrap_or_default();
    let world = compile_world(c, spec, field, suite.server);
    let withheld = compile_withheld(c, spec, field, scope, turns.len());
    let end_state = end_state_calls(c, spec, field, suite.server, world.is_some());
    (c.diag_count() == errors).then(|| {
        Arc::new(EpisodeSpec {
            tools,
            mocks: MockTable { tools: table },
            limits,
            policy,
            turns,
            end_state,
            world,
            withheld,
        })
    })
}

/// The case's `world`, compiled by its plugin; its problems are reported under the
/// case's `world.NAME` field. An MCP server's suite answers calls on its server, so a
/// world there is refused.
fn compile_world(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    server: bool,
) -> Option<Arc<dyn crate::suite::world::CompiledWorld>> {
    let decl = spec.world.as_ref()?;
    if server {
        c.report(
            spec.id.at(),
            format!("{field}.world"),
            format!(
                "case `{}` gives a `world`, but the suite's tools come from an MCP server (`tools_from.mcp`), which answers its calls",
                spec.id.value
            ),
            Some("put world cases in a suite of their own, without `tools_from.mcp`".into()),
        );
        return None;
    }
    let mut problems = Vec::new();
    let world = decl.settings.compile(&mut problems);
    for p in problems {
        c.report(
            if p.at == (0, 0) { spec.id.at() } else { p.at },
            format!("{field}.world.{}.{}", decl.name, p.field),
            p.message,
            p.hint,
        );
    }
    world
}

/// The case's `withheld` tools: each must be one the case offers, and its turn one of
/// the case's scripted user turns.
fn compile_withheld(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    scope: &ToolScope<'_>,
    turns: usize,
) -> Vec<(String, usize)> {
    let Some(w) = &spec.withheld else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(w.value.len());
    for (tool, turn) in &w.value {
        let f = format!("{field}.withheld.{}", tool.value);
        if !scope.knows(&tool.value) {
            c.report(
                tool.at(),
                &f,
                format!(
                    "`withheld` names `{}`, which the case does not offer",
                    tool.value
                ),
                Some(scope.unknown_hint(&tool.value)),
            );
            continue;
        }
        if turn.value == 0 || turn.value as usize > turns {
            c.report(
                turn.at(),
                &f,
                format!(
                    "`{}` is withheld until turn {}, but the case has {turns} scripted user turn(s)",
                    tool.value, turn.value
                ),
                Some(format!(
                    "turn 1 is the first entry of `turns`; give a turn from 1 to {turns}"
                )),
            );
            continue;
        }
        out.push((tool.value.clone(), turn.value as usize));
    }
    out
}

/// The calls of the case's `expect.end_state`, made after its episode: only a server
/// or a built-in world keeps the state they read (mock rules answer from the suite, not
/// from a world), and only a world has a `state` to read.
fn end_state_calls(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    server: bool,
    world: bool,
) -> Vec<crate::suite::end_state::EndStateCall> {
    let Some(e) = spec.expect.as_ref().filter(|e| !e.end_state.is_empty()) else {
        return Vec::new();
    };
    if !server && !world {
        c.report(
            spec.id.at(),
            format!("{field}.expect.end_state"),
            format!(
                "`end_state` calls tools after the episode on its MCP server, but case `{}` has none: its calls are answered by `mocks`, which keep no state, and it has no built-in `world`",
                spec.id.value
            ),
            Some("give the suite `tools_from: {mcp: SERVER, isolation: trial}` (a small MCP server can be the world; see docs/suite-format.md), or the case a `world`".into()),
        );
        return Vec::new();
    }
    if !world && let Some(i) = e.end_state.iter().position(|s| s.state.is_some()) {
        c.report(
            spec.id.at(),
            format!("{field}.expect.end_state[{i}].state"),
            format!(
                "`state` reads a built-in world, but case `{}` has none (its tools run on an MCP server)",
                spec.id.value
            ),
            Some("check a server's state with a call: `{call: TOOL, args: {...}, result: {...}}`".into()),
        );
        return Vec::new();
    }
    e.end_state
        .iter()
        .map(|s| crate::suite::end_state::EndStateCall {
            tool: s.call.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
            args: s.args.clone(),
            state: s.state.is_some(),
        })
        .collect()
}

/// The case's `turns`, checked against its limits (`None`: the limits had errors, so
/// the number of turns is not checked against them).
fn compile_turns(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    limits: Option<&Limits>,
) -> Vec<String> {
    let Some(turns) = &spec.turns else {
        return Vec::new();
    };
    let tf = format!("{field}.turns");
    for (i, t) in turns.value.iter().enumerate() {
        if t.trim().is_empty() {
            c.report(
                turns.at(),
                format!("{tf}[{i}]"),
                "a scripted user turn is empty",
                Some("write what the user says next, or remove the entry".into()),
            );
        }
    }
    if turns.value.len() > MAX_TURNS {
        c.report(
            turns.at(),
            &tf,
            format!(
                "{} scripted user turns, over the limit of {MAX_TURNS}",
                turns.value.len()
            ),
            Some("split the conversation into several cases".into()),
        );
    } else if let Some(limits) = limits
        && turns.value.len() as u64 >= u64::from(limits.max_rounds)
    {
        c.report(
            turns.at(),
            &tf,
            format!(
                "{} scripted user turns need at least {} rounds, but `max_rounds` is {}",
                turns.value.len(),
                turns.value.len() + 1,
                limits.max_rounds
            ),
            Some("each user turn needs its own model answer: raise `limits.max_rounds` or drop turns".into()),
        );
    }
    turns.value.clone()
}

/// The limits; `None` (with the problems reported) when a value is out of range.
fn compile_limits(c: &mut Checker<'_>, l: &LimitsSpec, field: &str) -> Option<Limits> {
    let d = Limits::default();
    let before = c.diag_count();
    let mut check = |key: &str, v: &Option<Spanned<u32>>, default: u32, max: u32| -> u32 {
        let Some(v) = v else { return default };
        if v.value == 0 || v.value > max {
            c.report(
                v.at(),
                format!("{field}.{key}"),
                format!("`{key}` must be between 1 and {max}, got {}", v.value),
                Some(format!("the default is {default}")),
            );
        }
        v.value.clamp(1, max)
    };
    let max_rounds = check("max_rounds", &l.max_rounds, d.max_rounds, MAX_ROUNDS);
    let max_tool_calls = check(
        "max_tool_calls",
        &l.max_tool_calls,
        d.max_tool_calls,
        MAX_TOOL_CALLS,
    );
    let max_identical_calls = check(
        "max_identical_calls",
        &l.max_identical_calls,
        d.max_identical_calls,
        MAX_TOOL_CALLS,
    );
    let max_rounds_per_turn = l.max_rounds_per_turn.is_some().then(|| {
        check(
            "max_rounds_per_turn",
            &l.max_rounds_per_turn,
            MAX_ROUNDS,
            MAX_ROUNDS,
        )
    });
    (c.diag_count() == before).then_some(Limits {
        max_rounds,
        max_tool_calls,
        max_identical_calls,
        max_rounds_per_turn,
    })
}

fn compile_policy(
    c: &mut Checker<'_>,
    p: &PolicySpec,
    field: &str,
    scope: &ToolScope<'_>,
) -> Policy {
    let mut confirm: Vec<String> = Vec::with_capacity(p.confirm.len());
    for (i, t) in p.confirm.iter().enumerate() {
        if !scope.knows(&t.value) {
            c.report(
                t.at(),
                format!("{field}.confirm[{i}]"),
                format!("`confirm` names unknown tool `{}`", t.value),
                Some(scope.unknown_hint(&t.value)),
            );
        } else if !confirm.contains(&t.value) {
            confirm.push(t.value.clone());
        }
    }
    Policy {
        confirm,
        answer: p.answer.unwrap_or_default(),
    }
}

/// Compile a `mocks:` map; tools it names that are unknown are reported and left out.
fn compile_mocks(
    c: &mut Checker<'_>,
    m: &MocksSpec,
    field: &str,
    scope: &ToolScope<'_>,
    norm: Normalizer,
) -> IndexMap<String, Arc<ToolRules>> {
    let mut out = IndexMap::with_capacity(m.0.len());
    for (name, rules) in &m.0 {
        let tf = format!("{field}.{}", name.value);
        if !scope.knows(&name.value) {
            c.report(
                name.at(),
                &tf,
                format!("`mocks` names unknown tool `{}`", name.value),
                Some(scope.unknown_hint(&name.value)),
            );
            continue;
        }
        let tool = scope.tools.get(name.value.as_str()).copied();
        let mut compiled = Vec::with_capacity(rules.len());
        // The first rule that answers every call (no `when`, not a `fail`): any rule
        // after it can never be reached.
        let mut catch_all: Option<(usize, u32)> = None;
        for (i, rule) in rules.iter().enumerate() {
            let rf = format!("{tf}[{i}]");
            if let Some((j, line)) = catch_all {
                c.report(
                    rule.at(),
                    &rf,
                    format!(
                        "this rule of `{}` is never used: rule {j} (line {line}) has no `when` and answers every call first",
                        name.value
                    ),
                    Some("rules are tried in order and the first that matches answers; move the rule without `when` to the end".into()),
                );
            }
            if let Some(r) = compile_rule(c, &rule.value, rule.at(), &rf, tool, norm) {
                if r.when.is_none() && !r.is_fault() && catch_all.is_none() {
                    catch_all = Some((i, rule.line));
                }
                compiled.push(r);
            }
        }
        out.insert(name.value.clone(), Arc::new(ToolRules { rules: compiled }));
    }
    out
}

fn compile_rule(
    c: &mut Checker<'_>,
    r: &MockRuleSpec,
    at: (u32, u32),
    field: &str,
    tool: Option<&Tool>,
    norm: Normalizer,
) -> Option<MockRule> {
    let given = [r.result.is_some(), r.error.is_some(), r.fail.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        c.report(
            at,
            field,
            if given.contains(&true) {
                "a mock rule has more than one of `result`, `error` and `fail`"
            } else {
                "a mock rule needs one of `result`, `error` or `fail`"
            },
            Some("e.g. `- when: {order_id: A1}` then `result: {...}`, or `error: {kind: not_found}`, or `fail: {kind: rate_limit, times: 1}`".into()),
        );
        return None;
    }
    let when = match &r.when {
        None => None,
        Some(w) => Some(compile_when(c, w, field, tool, norm)?),
    };
    let action = if let Some(v) = &r.result {
        RuleAction::Result(v.value.clone())
    } else if let Some(e) = &r.error {
        RuleAction::Error {
            kind: e.kind.value,
            message: e
                .message
                .clone()
                .unwrap_or_else(|| e.kind.value.default_message().to_string()),
        }
    } else {
        let f = r.fail.as_ref()?;
        let times = f.times.as_ref().map_or(1, |t| t.value);
        if times == 0 || times > MAX_TOOL_CALLS {
            c.report(
                f.times.as_ref().map_or(at, Spanned::at),
                format!("{field}.fail.times"),
                format!("`times` must be between 1 and {MAX_TOOL_CALLS}, got {times}"),
                Some("`times: N` fails the first N matching calls of each trial; for a tool that always fails write `error:` instead".into()),
            );
            return None;
        }
        RuleAction::Fail {
            kind: f.kind.value,
            times,
            message: f
                .message
                .clone()
                .unwrap_or_else(|| f.kind.value.default_message().to_string()),
        }
    };
    Some(MockRule {
        when,
        action,
        line: at.0,
    })
}

/// Compile `when:` matchers as expectations' `args` are compiled (unlisted arguments are
/// allowed: a rule names only what selects it).
fn compile_when(
    c: &mut Checker<'_>,
    when: &IndexMap<Spanned<String>, Spanned<Value>>,
    field: &str,
    tool: Option<&Tool>,
    norm: Normalizer,
) -> Option<Vec<(String, Matcher)>> {
    let props = tool
        .and_then(|t| t.parameters.get("properties"))
        .and_then(Value::as_object);
    let mut out = Vec::with_capacity(when.len());
    let mut ok = true;
    for (name, value) in when {
        let af = format!("{field}.when.{}", name.value);
        if let (Some(t), Some(p)) = (tool, props)
            && !p.contains_key(&name.value)
        {
            let mut known: Vec<&str> = p.keys().map(String::as_str).collect();
            known.sort_unstable();
            let hint = match closest_keyword(&name.value) {
                Some(kw) => format!(
                    "`{}` looks like the matcher `{kw}`; matchers go inside a parameter: `param: {{{kw}: ...}}`",
                    name.value
                ),
                None => match suggest::closest(&name.value, known.iter().copied()) {
                    Some(s) => format!(
                        "did you mean `{s}`? `{}` parameters are: {}",
                        t.name,
                        known.join(", ")
                    ),
                    None => format!("`{}` parameters are: {}", t.name, known.join(", ")),
                },
            };
            c.report(
                name.at(),
                &af,
                format!(
                    "`when` names unknown parameter `{}` of tool `{}`",
                    name.value, t.name
                ),
                Some(hint),
            );
            ok = false;
            continue;
        }
        let ctx = CompileContext {
            norm,
            extra: ExtraArgs::Allow,
            schema: tool.and_then(|t| t.property(&name.value)),
        };
        match Matcher::compile(&value.value, &name.value, ctx) {
            Ok(m) => out.push((name.value.clone(), m)),
            Err(e) => {
                let path = if e.path == name.value {
                    af
                } else {
                    format!("{field}.when.{}", e.path)
                };
                c.report(value.at(), path, e.message, e.hint);
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::super::loops::{Answer, Risk};
    use super::super::tool_error::ToolErrorKind;
    use super::super::{Suite, SuiteError};
    use super::*;

    const TOOLS: &str = r#"
tools:
  - name: get_order
    description: Look up an order
    parameters: {type: object, properties: {order_id: {type: string}}}
  - name: get_shipment
    description: Shipment
    parameters: {type: object, properties: {shipment_id: {type: string}}}
  - name: cancel_order
    description: Cancel
    risk: high
    idempotent: false
    parameters: {type: object, properties: {order_id: {type: string}}}
"#;

    fn load(rest: &str) -> Result<Suite, SuiteError> {
        crate::suite::load_str(&format!("{TOOLS}{rest}"), Path::new("s.yaml"))
    }

    /// (line, field, message) of every problem.
    fn problems(rest: &str) -> Vec<(u32, String, String)> {
        match load(rest) {
            Ok(_) => panic!("the suite should be refused"),
            Err(SuiteError::Invalid(d)) => d
                .into_iter()
                .map(|d| (d.line, d.field, d.message))
                .collect(),
            Err(e) => panic!("{e}"),
        }
    }

    fn results(e: &EpisodeSpec, tool: &str) -> Vec<Value> {
        e.mocks
            .rules(tool)
            .unwrap()
            .rules
            .iter()
            .map(|r| match &r.action {
                RuleAction::Result(v) => v.clone(),
                other => json!(format!("{other:?}")),
            })
            .collect()
    }

    #[test]
    fn a_case_replaces_the_suite_rules_tool_by_tool_and_limits_and_policy_whole() {
        let suite = load(
            r#"
mocks:
  get_order: [{result: suite-order}]
  get_shipment: [{result: suite-shipment}]
limits: {max_rounds: 6, max_tool_calls: 9}
policy: {confirm: [cancel_order], answer: approve}
cases:
  - id: inherits
    kind: should_not_call
    prompt: hi
  - id: own
    kind: should_not_call
    prompt: hi
    turns: [and then?]
    mocks:
      get_order: [{when: {order_id: A1}, result: case-order}, {result: fallback}]
    limits: {max_identical_calls: 1}
    policy: {confirm: []}
"#,
        );
        let suite = match suite {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        let inherits = suite.cases[0].episode.as_deref().unwrap();
        assert_eq!(results(inherits, "get_order"), vec![json!("suite-order")]);
        assert_eq!(
            inherits.limits,
            Limits {
                max_rounds: 6,
                max_tool_calls: 9,
                max_identical_calls: 3,
                max_rounds_per_turn: None,
            }
        );
        assert_eq!(
            inherits.policy.decide("cancel_order"),
            Some(Answer::Approve)
        );
        assert_eq!(inherits.policy.decide("get_order"), None);
        assert!(inherits.turns.is_empty());
        assert_eq!(
            inherits.tools,
            vec!["cancel_order", "get_order", "get_shipment"]
        );

        let own = suite.cases[1].episode.as_deref().unwrap();
        assert_eq!(own.mocks.tools.len(), 2);
        // get_order: the case's rules; get_shipment: the suite's, shared.
        assert!(own.mocks.rules("get_order").unwrap().rules.len() == 2);
        assert_eq!(results(own, "get_shipment"), vec![json!("suite-shipment")]);
        assert!(Arc::ptr_eq(
            &own.mocks.tools["get_shipment"],
            &inherits.mocks.tools["get_shipment"]
        ));
        // The case's limits replace the suite's whole: unset keys take the defaults.
        assert_eq!(
            own.limits,
            Limits {
                max_rounds: 10,
                max_tool_calls: 30,
                max_identical_calls: 1,
                max_rounds_per_turn: None,
            }
        );
        assert_eq!(own.policy.decide("cancel_order"), None);
        assert_eq!(own.turns, vec!["and then?"]);

        let cancel = suite
            .tools
            .iter()
            .find(|t| t.name == "cancel_order")
            .unwrap();
        assert_eq!(cancel.effects.risk, Risk::High);
        assert!(!cancel.effects.idempotent);
        assert_eq!(suite.tools[0].effects, ToolEffects::default());
    }

    #[test]
    fn a_case_is_a_loop_only_when_the_suite_or_the_case_gives_mocks() {
        let suite = load(
            r#"
cases:
  - id: single
    kind: should_not_call
    prompt: hi
  - id: looped
    kind: should_not_call
    prompt: hi
    mocks:
      get_order:
        - when: {order_id: {regex: "^A"}}
          fail: {kind: timeout, times: 3, message: slow}
        - error: {kind: not_found}
"#,
        )
        .unwrap();
        assert!(suite.cases[0].episode.is_none());
        let e = suite.cases[1].episode.as_deref().unwrap();
        let rules = &e.mocks.rules("get_order").unwrap().rules;
        assert_eq!(
            rules[0].action,
            RuleAction::Fail {
                kind: ToolErrorKind::Timeout,
                times: 3,
                message: "slow".into()
            }
        );
        assert!(rules[0].matches(json!({"order_id": "A1"}).as_object().unwrap()));
        assert!(!rules[0].matches(json!({"order_id": "B1"}).as_object().unwrap()));
        assert_eq!(
            rules[1].action,
            RuleAction::Error {
                kind: ToolErrorKind::NotFound,
                message: "not found".into()
            }
        );
        assert_eq!(rules[1].line, 26);
    }

    #[test]
    fn loop_keys_without_mocks_and_bad_values_are_located() {
        let got = problems(
            r#"
limits: {max_rounds: 3}
cases:
  - id: c
    kind: should_not_call
    prompt: hi
    turns: [more]
    policy: {confirm: [cancel_ordr]}
"#,
        );
        let fields: Vec<&str> = got.iter().map(|(_, f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            vec!["limits", "cases[0].policy", "cases[0].turns"],
            "{got:?}"
        );
        assert!(got[1].2.contains("case `c` is not one"), "{got:?}");

        let got = problems(
            r#"
mocks:
  get_order:
    - when: {order_id: {one_of: []}}
      result: 1
    - result: 2
      error: {kind: timeout}
  get_shipment:
    - result: 1
    - when: {shipment_id: S1}
      result: 2
limits: {max_identical_calls: 1001}
cases:
  - id: c
    kind: should_not_call
    prompt: hi
    mocks:
      cancel_ordr: [{result: 1}]
    policy: {confirm: [get_order, nope], answer: deny}
"#,
        );
        let got: Vec<(u32, &str)> = got.iter().map(|(l, f, _)| (*l, f.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (17, "mocks.get_order[0].when.order_id.one_of"),
                (19, "mocks.get_order[1]"),
                (23, "mocks.get_shipment[1]"),
                (25, "limits.max_identical_calls"),
                (31, "cases[0].mocks.cancel_ordr"),
                (32, "cases[0].policy.confirm[1]"),
            ]
        );
    }

    #[test]
    fn a_kind_only_the_harness_answers_with_is_not_declarable() {
        // `ToolErrorKind` also holds the harness's own kinds; a suite may name none of
        // them, and is told so as for any unknown word.
        for kind in ToolErrorKind::ALL.into_iter().filter(|k| !k.declarable()) {
            let got = problems(&format!(
                "mocks:\n  get_order:\n    - fail: {{kind: {0}}}\n    - error: {{kind: {0}}}\n\
                 cases: [{{id: c, kind: should_not_call, prompt: hi}}]\n",
                kind.as_str()
            ));
            let fields: Vec<&str> = got.iter().map(|(_, f, _)| f.as_str()).collect();
            assert_eq!(
                fields,
                vec![
                    "mocks.get_order[0].fail.kind",
                    "mocks.get_order[1].error.kind"
                ],
                "{got:?}"
            );
            for (_, _, message) in &got {
                assert_eq!(message, &format!("unknown kind `{}`", kind.as_str()));
            }
        }
        for kind in ToolErrorKind::DECLARABLE {
            let suite = load(&format!(
                "mocks:\n  get_order:\n    - fail: {{kind: {0}}}\n    - error: {{kind: {0}}}\n\
                 cases: [{{id: c, kind: should_not_call, prompt: hi}}]\n",
                kind.as_str()
            ));
            assert!(suite.is_ok(), "{kind:?}: {:?}", suite.err());
        }
    }

    #[test]
    fn an_unknown_tool_in_mocks_suggests_the_close_name() {
        let got = load(
            r#"
mocks:
  get_shipmnt: [{result: 1}]
cases: [{id: c, kind: should_not_call, prompt: hi}]
"#,
        );
        let Err(SuiteError::Invalid(d)) = got else {
            panic!("refused")
        };
        assert_eq!(d[0].message, "`mocks` names unknown tool `get_shipmnt`");
        assert_eq!(
            d[0].hint.as_deref(),
            Some(
                "did you mean `get_shipment`? the suite's tools are: `cancel_order`, `get_order`, `get_shipment`"
            )
        );
    }
}
