//! Compiling cases: ids, the tools each offers, its conversation (`prompt` or
//! `messages`), tool-choice modes and `per_mode` entries; expectations are read in
//! [`super::expect`].

use std::collections::HashMap;

use serde_json::Value;

use super::Checker;
use super::expect::{compile_episode, compile_expect};
use super::matrix::check_modes;
use super::tools::ToolList;
use crate::chat::{Message, ToolCall};
use crate::suite::Profile;
use crate::suite::loop_compile::{SuiteLoops, ToolScope, case_episode};
use crate::suite::model::{
    CaseSpec, CountMode, ExpectSpec, ExtraArgs, MessageSpec, Role, SuiteFile,
};
use crate::suite::normalize::Normalizer;
use crate::suite::{Case, CaseKind, ModeOverride, Tool};

/// What compiling a case's expectations needs from the suite (or from the case's own
/// tool list).
#[derive(Clone, Copy)]
pub(super) struct CaseContext<'a> {
    /// The tools the case offers, by name.
    pub(super) tools: &'a HashMap<&'a str, &'a Tool>,
    /// The suite's profile (how it reads expectations).
    pub(super) profile: &'a Profile,
    /// The tools are the case's own (for messages).
    pub(super) own_tools: bool,
    /// Names of the offered tools that did not compile (already reported).
    pub(super) broken: &'a [String],
    /// The suite's normalisation.
    pub(super) norm: Normalizer,
    /// The suite's `defaults.count`.
    pub(super) count: CountMode,
    /// The suite's `defaults.extra_args`.
    pub(super) extra: ExtraArgs,
}

/// Every case in file order, with its own tools (`case_tools`, from
/// [`super::tools::compile_tool_lists`]) and its episode; a case with problems is
/// reported and left out.
pub(super) fn compile_cases(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    ctx: &CaseContext<'_>,
    loops: &SuiteLoops,
    case_tools: Vec<Option<ToolList>>,
) -> Vec<Case> {
    let mut cases = Vec::with_capacity(model.cases.len());
    let mut seen: HashMap<String, u32> = HashMap::new();
    for ((i, spec), own) in model.cases.iter().enumerate().zip(case_tools) {
        let field = format!("cases[{i}]");
        check_case_id(c, spec, &field, &mut seen);
        let own_index: Option<HashMap<&str, &Tool>> = own
            .as_ref()
            .map(|(t, _)| t.iter().map(|t| (t.name.as_str(), &**t)).collect());
        let scope = match (&own, &own_index) {
            (Some((_, b)), Some(index)) => ToolScope {
                tools: index,
                broken: b,
                owner: "case's",
            },
            _ => ToolScope {
                tools: ctx.tools,
                broken: ctx.broken,
                owner: "suite's",
            },
        };
        let episode = case_episode(c, spec, &field, loops, &scope, ctx.norm);
        let compiled = match (&own, &own_index) {
            (Some((own_tools, own_broken)), Some(index)) => {
                if own_tools.is_empty() && own_broken.is_empty() {
                    check_offers_tools(c, spec, &field);
                }
                let own_ctx = CaseContext {
                    tools: index,
                    own_tools: true,
                    broken: own_broken,
                    ..*ctx
                };
                compile_case(c, spec, &field, &own_ctx, model.system.as_deref())
            }
            _ => compile_case(c, spec, &field, ctx, model.system.as_deref()),
        };
        if let Some(mut case) = compiled {
            // Loop expectations judge an episode, which only a case with a tool host
            // plays: without one they could never be checked.
            if episode.is_none() && case.loop_expect.is_some() {
                c.report(
                    spec.id.at(),
                    format!("{field}.expect"),
                    format!(
                        "case `{}` has loop expectations (trajectory, never, final or stop) but no tool loop: neither the suite nor the case gives `mocks`",
                        spec.id.value
                    ),
                    Some("add `mocks:` for the tools it calls (suite-wide or in the case), or drop the loop expectations and use `calls`".into()),
                );
            }
            case.tools = own.map(|(t, _)| t);
            case.episode = episode;
            cases.push(case);
        }
    }
    cases
}

/// A case id is not empty and not used before (`seen`: each id's first line).
fn check_case_id(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    seen: &mut HashMap<String, u32>,
) {
    if spec.id.value.trim().is_empty() {
        c.report(
            spec.id.at(),
            format!("{field}.id"),
            "case id is empty",
            Some("give every case a short unique id".into()),
        );
    }
    if let Some(first) = seen.get(&spec.id.value) {
        c.report(
            spec.id.at(),
            format!("{field}.id"),
            format!("duplicate case id `{}`", spec.id.value),
            Some(format!(
                "the id is first used on line {first}; case ids must be unique"
            )),
        );
    } else {
        seen.insert(spec.id.value.clone(), spec.id.line);
    }
}

/// A case whose own tool list is empty: it may offer no tools at all (e.g. an
/// irrelevance item), but then nothing can be expected of a call.
fn check_offers_tools(c: &mut Checker<'_>, spec: &CaseSpec, field: &str) {
    if spec.kind == CaseKind::ShouldCall {
        c.report(
            spec.id.at(),
            format!("{field}.tools"),
            format!(
                "case `{}` expects a call but offers no tools",
                spec.id.value
            ),
            Some("list the tools this case offers, or drop `tools:` to offer the suite's".into()),
        );
    }
}

/// One case: its conversation (the suite's `system` prompt first unless the case gives
/// its own), tool-choice modes, expectations (per mode too), loop expectations and
/// rubric; `None` (with the problems reported) when it can not be used.
fn compile_case(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    ctx: &CaseContext<'_>,
    system: Option<&str>,
) -> Option<Case> {
    let at = spec.id.at();
    let (messages, suite_system) = case_messages(c, spec, field, system)?;
    let known = |f: &str| ctx.tools.contains_key(f);
    let modes = spec
        .modes
        .as_ref()
        .map(|m| check_modes(c, m, &known, &format!("{field}.modes")));
    let empty = ExpectSpec::default();
    let expect = compile_expect(
        c,
        spec.kind,
        spec.expect.as_ref().unwrap_or(&empty),
        spec.expect.is_none(),
        &format!("{field}.expect"),
        at,
        ctx,
    )?;
    let per_mode = compile_per_mode(c, spec, field, ctx)?;
    let loop_expect = match &spec.expect {
        Some(e) if crate::suite::trajectory::given(e) => Some(compile_episode(
            c,
            spec.kind,
            e,
            &format!("{field}.expect"),
            at,
            ctx,
        )?),
        _ => None,
    };
    Some(Case {
        id: spec.id.value.clone(),
        kind: spec.kind,
        messages,
        tags: spec.tags.clone(),
        tools: None,
        expect,
        modes,
        per_mode,
        episode: None,
        suite_system,
        loop_expect,
        rubric: crate::suite::judge::compile_rubric(c, spec, field),
    })
}

/// The case's conversation from `prompt` or `messages` (exactly one), with the suite's
/// `system` prompt put first when the case gives none; the flag says it was.
fn case_messages(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    system: Option<&str>,
) -> Option<(Vec<Message>, bool)> {
    let at = spec.id.at();
    let mut messages = match (&spec.prompt, &spec.messages) {
        (Some(p), None) => vec![Message::User { content: p.clone() }],
        (None, Some(m)) if !m.is_empty() => compile_messages(c, m, field, at)?,
        (None, Some(_)) => {
            c.report(
                at,
                format!("{field}.messages"),
                "`messages` is empty",
                Some("give at least one user message".into()),
            );
            return None;
        }
        (Some(_), Some(_)) => {
            c.report(
                at,
                field,
                format!("case `{}` has both `prompt` and `messages`", spec.id.value),
                Some("use `prompt` for one user turn or `messages` for a conversation".into()),
            );
            return None;
        }
        (None, None) => {
            c.report(
                at,
                field,
                format!("case `{}` has no `prompt` or `messages`", spec.id.value),
                Some("add `prompt: ...`".into()),
            );
            return None;
        }
    };
    let suite_system =
        system.is_some() && !messages.iter().any(|m| matches!(m, Message::System { .. }));
    if let Some(sys) = system
        && suite_system
    {
        messages.insert(
            0,
            Message::System {
                content: sys.to_string(),
            },
        );
    }
    Some((messages, suite_system))
}

/// The case's `per_mode` entries: each one's modes and expectation (loop expectations
/// belong to the case, so they can not differ per mode).
fn compile_per_mode(
    c: &mut Checker<'_>,
    spec: &CaseSpec,
    field: &str,
    ctx: &CaseContext<'_>,
) -> Option<Vec<ModeOverride>> {
    let at = spec.id.at();
    let known = |f: &str| ctx.tools.contains_key(f);
    let empty = ExpectSpec::default();
    let mut per_mode = Vec::new();
    for (j, o) in spec.per_mode.iter().enumerate() {
        let pf = format!("{field}.per_mode[{j}]");
        let modes = check_modes(c, &o.modes, &known, &format!("{pf}.modes"));
        if modes.is_empty() {
            c.report(
                at,
                format!("{pf}.modes"),
                "`per_mode` entry lists no modes",
                None,
            );
        }
        let e = compile_expect(
            c,
            o.kind,
            o.expect.as_ref().unwrap_or(&empty),
            o.expect.is_none(),
            &format!("{pf}.expect"),
            at,
            ctx,
        )?;
        if let Some(e) = &o.expect
            && crate::suite::trajectory::given(e)
        {
            c.report(
                at,
                format!("{pf}.expect"),
                "loop expectations (`trajectory`, `never`, `final`, `stop`) can not differ per mode",
                Some("put them in the case's own `expect`".into()),
            );
        }
        per_mode.push(ModeOverride {
            modes,
            kind: o.kind,
            expect: e,
        });
    }
    Some(per_mode)
}

/// A case's `messages`: roles, tool calls and tool results, each result answering an
/// earlier call by its id; `None` (with the problems reported) when one is malformed.
fn compile_messages(
    c: &mut Checker<'_>,
    specs: &[MessageSpec],
    field: &str,
    at: (u32, u32),
) -> Option<Vec<Message>> {
    let mut out = Vec::with_capacity(specs.len());
    let mut ok = true;
    for (i, m) in specs.iter().enumerate() {
        let mf = format!("{field}.messages[{i}]");
        let content = m.content.clone();
        let msg = match m.role {
            Role::System | Role::User => {
                if !m.tool_calls.is_empty() || m.tool_call_id.is_some() {
                    c.report(at, &mf, "only assistant messages carry `tool_calls`, and only tool messages carry `tool_call_id`", None);
                    ok = false;
                }
                let content = content.unwrap_or_default();
                if m.role == Role::System {
                    Message::System { content }
                } else {
                    Message::User { content }
                }
            }
            Role::Assistant => {
                let mut calls = Vec::new();
                for tc in &m.tool_calls {
                    let arguments = match &tc.arguments {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".to_string(),
                        other => other.to_string(),
                    };
                    calls.push(ToolCall {
                        id: Some(tc.id.clone()),
                        name: tc.name.clone(),
                        arguments,
                    });
                }
                Message::Assistant {
                    content,
                    tool_calls: calls,
                    state: None,
                }
            }
            Role::Tool => {
                let Some(written) = m.tool_call_id.as_ref() else {
                    c.report(
                        at,
                        format!("{mf}.tool_call_id"),
                        "a tool message needs `tool_call_id`",
                        Some("name the id of the assistant tool call it answers".into()),
                    );
                    ok = false;
                    continue;
                };
                let id = written.value.clone();
                let answered = out.iter().any(|prev: &Message| match prev {
                    Message::Assistant { tool_calls, .. } => {
                        tool_calls.iter().any(|t| t.id.as_deref() == Some(&id))
                    }
                    _ => false,
                });
                if !answered {
                    c.report(
                        written.at(),
                        format!("{mf}.tool_call_id"),
                        format!(
                            "tool message answers `{id}`, but no earlier assistant call has that id"
                        ),
                        Some("results must be matched to calls by tool_call_id".into()),
                    );
                    ok = false;
                }
                Message::Tool {
                    tool_call_id: id,
                    name: String::new(),
                    content: content.unwrap_or_default(),
                    is_error: false,
                }
            }
        };
        out.push(msg);
    }
    ok.then_some(out)
}
