//! Compiling expectations as written: what each case kind may expect (calls, a text
//! answer and its behaviour, acceptable outcomes), and the loop expectations of a case
//! whose episode runs tools.

use super::Checker;
use super::calls::compile_calls;
use super::case::CaseContext;
use crate::suite::model::{CaseKind, CountMode, ExpectSpec, OutcomeSpec};
use crate::suite::normalize::Normalizer;
use crate::suite::span::Spanned;
use crate::suite::{CallsExpectation, Case, Expectation, Outcome, TextChecks};
use crate::util::suggest;

/// The expectation of a case (or of one `per_mode` entry) of `kind`, written as `e`;
/// `missing`: the case wrote no `expect` at all. `None` (with the problems reported)
/// when it can not be used.
pub(super) fn compile_expect(
    c: &mut Checker<'_>,
    kind: CaseKind,
    e: &ExpectSpec,
    missing: bool,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Expectation> {
    if misplaced_behaviour(c, kind, e, field) {
        return None;
    }
    match kind {
        CaseKind::ShouldCall => expect_calls(c, e, missing, field, at, ctx),
        CaseKind::ShouldNotCall => expect_no_call(c, e, field, at, ctx),
        CaseKind::Ambiguous => expect_any_of(c, e, field, at, ctx),
    }
}

/// Whether `e` checks the text answer (`contains` or `regex`).
fn has_text(e: &ExpectSpec) -> bool {
    !e.contains.is_empty() || e.regex.is_some()
}

/// Whether `behaviour:` is given to a case that is not `should_not_call` (reported).
fn misplaced_behaviour(c: &mut Checker<'_>, kind: CaseKind, e: &ExpectSpec, field: &str) -> bool {
    let Some(b) = e
        .behaviour
        .as_ref()
        .filter(|_| kind != CaseKind::ShouldNotCall)
    else {
        return false;
    };
    c.report(
        b.at(),
        format!("{field}.behaviour"),
        format!(
            "`behaviour` applies to `should_not_call` cases, not to `{}` ones",
            kind.as_str()
        ),
        Some(if kind == CaseKind::Ambiguous {
            "list the acceptable answers in `any_of`: `{clarify: true}`, `{cannot_answer: true}` or `{direct: true}`".into()
        } else {
            "a `should_call` case expects a call; use kind `should_not_call` with `behaviour: direct | cannot_answer | clarify` for a text answer".into()
        }),
    );
    true
}

/// A `should_call` case: `any_call: true`, only loop keys (some call in the first round),
/// or `calls` with at least one call.
fn expect_calls(
    c: &mut Checker<'_>,
    e: &ExpectSpec,
    missing: bool,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Expectation> {
    let has_text = has_text(e);
    if e.any_call {
        if e.calls.is_some() || e.any_of.is_some() || e.count.is_some() || has_text {
            c.report(
                at,
                field,
                "`any_call: true` takes no other expectation",
                Some("use `calls` to expect particular calls".into()),
            );
            return None;
        }
        return Some(Expectation::Calls(CallsExpectation {
            calls: Vec::new(),
            count: CountMode::AtLeast,
        }));
    }
    // A loop case may leave the first round open: it must make some call.
    if e.calls.is_none() && crate::suite::trajectory::given(e) {
        if e.any_of.is_some() || e.count.is_some() || has_text {
            c.report(
                at,
                field,
                "a `should_call` case takes only `calls`, `count` and the loop keys",
                Some("put checks on the final answer under `final:`".into()),
            );
        }
        return Some(Expectation::Calls(CallsExpectation {
            calls: Vec::new(),
            count: CountMode::AtLeast,
        }));
    }
    if missing || e.calls.as_ref().is_none_or(Vec::is_empty) {
        c.report(
            at,
            format!("{field}.calls"),
            "a `should_call` case needs `expect.calls` with at least one call",
            Some("list the expected calls: `calls: [{tool: NAME, args: {...}}]`".into()),
        );
        return None;
    }
    if e.any_of.is_some() || has_text {
        c.report(
            at,
            field,
            "a `should_call` case takes only `calls` and `count`",
            Some("use kind `ambiguous` with `any_of` for several acceptable outcomes".into()),
        );
    }
    let calls = compile_calls(
        c,
        e.calls.as_deref().unwrap_or_default(),
        e.count,
        field,
        ctx,
    )?;
    Some(Expectation::Calls(calls))
}

/// A `should_not_call` case: checks on the text answer, and the behaviour it names.
fn expect_no_call(
    c: &mut Checker<'_>,
    e: &ExpectSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Expectation> {
    if e.calls.is_some() || e.any_of.is_some() || e.count.is_some() || e.any_call {
        c.report(at, field, "a `should_not_call` case takes only `behaviour`, `contains` and `regex` (checks on the text answer)", Some("use kind `should_call` or `ambiguous` to expect calls".into()));
        return None;
    }
    let behaviour = match &e.behaviour {
        Some(b) => Some(compile_behaviour(c, b, field)?),
        None => None,
    };
    let mut text = compile_text_checks(c, &e.contains, &e.regex, field, ctx.norm);
    text.behaviour = behaviour;
    Some(Expectation::NoCall(text))
}

/// An `ambiguous` case: the acceptable outcomes, each compiled (and reported) on its own.
fn expect_any_of(
    c: &mut Checker<'_>,
    e: &ExpectSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Expectation> {
    let Some(options) = e.any_of.as_ref().filter(|o| !o.is_empty()) else {
        c.report(
            at,
            format!("{field}.any_of"),
            "an `ambiguous` case needs `expect.any_of` with at least one outcome",
            Some("e.g. `any_of: [{clarify: true}, {calls: [...]}]`; the text outcomes are `clarify`, `cannot_answer`, `direct` and `no_call`".into()),
        );
        return None;
    };
    if e.calls.is_some() || has_text(e) || e.count.is_some() || e.any_call {
        c.report(
            at,
            field,
            "an `ambiguous` case takes only `any_of`",
            Some("put calls and text checks inside the outcomes".into()),
        );
    }
    let mut outcomes = Vec::new();
    for (i, o) in options.iter().enumerate() {
        if let Some(out) = compile_outcome(c, o, &format!("{field}.any_of[{i}]"), at, ctx) {
            outcomes.push(out);
        }
    }
    (outcomes.len() == options.len()).then_some(Expectation::AnyOf(outcomes))
}

/// The loop expectations of a case (see [`crate::suite::trajectory`]).
pub(super) fn compile_episode(
    c: &mut Checker<'_>,
    kind: CaseKind,
    e: &ExpectSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<crate::suite::trajectory::LoopExpectation> {
    use crate::suite::trajectory::{
        FinalChecks, LoopContext, LoopExpectation, compile_never, compile_trajectory,
    };
    let lookup = |n: &str| ctx.tools.get(n).map(|t| t.parameters.as_ref());
    let lctx = LoopContext {
        tools: &lookup,
        tool_names: ctx.tools.keys().copied().collect(),
        broken: ctx.broken,
        norm: ctx.norm,
        extra: ctx.extra,
        at,
    };
    let mut problems = Vec::new();
    if kind == CaseKind::ShouldNotCall && e.trajectory.is_some() {
        c.report(
            at,
            format!("{field}.trajectory"),
            "a `should_not_call` case expects no calls, so it has no trajectory",
            Some("use kind `should_call` for a case whose episode calls tools".into()),
        );
    }
    let trajectory = e
        .trajectory
        .as_ref()
        .map(|t| compile_trajectory(t, &format!("{field}.trajectory"), &lctx, &mut problems));
    let never = compile_never(&e.never, &format!("{field}.never"), &lctx, &mut problems);
    let end_state = match crate::suite::end_state::compile(
        &e.end_state,
        &format!("{field}.end_state"),
        &lctx.tool_names,
        ctx.norm,
        at,
    ) {
        Ok(checks) => checks,
        Err(found) => {
            for p in found {
                problems.push(crate::suite::trajectory::LoopProblem {
                    at: p.at,
                    field: p.field,
                    message: p.message,
                    hint: p.hint,
                });
            }
            Vec::new()
        }
    };
    let ok = problems.is_empty();
    for p in problems {
        c.report(p.at, p.field, p.message, p.hint);
    }
    let final_answer = e.final_answer.as_ref().map(|f| FinalChecks {
        text: compile_text_checks(
            c,
            &f.contains,
            &f.regex,
            &format!("{field}.final"),
            ctx.norm,
        ),
        grounded: f.grounded,
        no_success_after_error: f.no_success_after_error,
    });
    Some(LoopExpectation {
        trajectory: match trajectory {
            Some(Some(t)) => Some(t),
            Some(None) => return None,
            None => None,
        },
        never,
        final_answer,
        stop: e.stop,
        end_state,
    })
    .filter(|_| ok)
}

/// One outcome of an `ambiguous` case: exactly one of the text outcomes or `calls`.
fn compile_outcome(
    c: &mut Checker<'_>,
    o: &OutcomeSpec,
    field: &str,
    at: (u32, u32),
    ctx: &CaseContext<'_>,
) -> Option<Outcome> {
    let named: Vec<&str> = [
        (o.clarify, "clarify"),
        (o.cannot_answer, "cannot_answer"),
        (o.direct, "direct"),
        (o.no_call, "no_call"),
        (o.calls.is_some(), "calls"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if named.len() != 1 {
        c.report(
            at,
            field,
            if named.is_empty() {
                "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, and names none".to_string()
            } else {
                format!(
                    "an outcome needs exactly one of `clarify: true`, `cannot_answer: true`, `direct: true`, `no_call: true` or `calls`, but names {}",
                    named
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                )
            },
            Some(if named.is_empty() {
                "`clarify` asks for the missing information, `cannot_answer` says it cannot help, `direct` answers without a tool, `no_call` accepts any text answer, `calls` lists the calls".into()
            } else {
                "give each acceptable answer its own `any_of` entry, e.g. `any_of: [{clarify: true}, {cannot_answer: true}]`".into()
            }),
        );
        return None;
    }
    let text = compile_text_checks(c, &o.contains, &o.regex, field, ctx.norm);
    if let Some(calls) = &o.calls {
        if !text.is_empty() {
            c.report(
                at,
                field,
                "text checks apply to the text outcomes (`clarify`, `cannot_answer`, `direct`, `no_call`)",
                Some("check a call's arguments in `calls` instead".into()),
            );
        }
        if calls.is_empty() {
            c.report(
                at,
                format!("{field}.calls"),
                "`calls` is empty",
                Some("use `no_call: true` for an outcome without calls".into()),
            );
            return None;
        }
        return compile_calls(c, calls, o.count, field, ctx).map(Outcome::Calls);
    }
    Some(if o.clarify {
        Outcome::Clarify(text)
    } else if o.cannot_answer {
        Outcome::CannotAnswer(text)
    } else if o.direct {
        Outcome::Direct(text)
    } else {
        Outcome::NoCall(text)
    })
}

/// Text checks; the regex is matched against the normalised answer, case-insensitively
/// when the suite folds case.
fn compile_text_checks(
    c: &mut Checker<'_>,
    contains: &[String],
    regex: &Option<Spanned<String>>,
    field: &str,
    norm: Normalizer,
) -> TextChecks {
    let regex = regex.as_ref().and_then(|r| {
        match crate::util::regex_cache::build(&r.value, norm.casefolds()) {
            Ok(re) => Some(re),
            Err(e) => {
                c.report(
                    r.at(),
                    format!("{field}.regex"),
                    format!(
                        "invalid regex `{}`: {}",
                        r.value,
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                    Some("the syntax is Rust's `regex` crate".into()),
                );
                None
            }
        }
    });
    TextChecks {
        contains: contains.to_vec(),
        regex,
        behaviour: None,
    }
}

/// Whether any expectation of `cases` (per mode too) makes the whole suite record
/// behaviour facts (see [`names_behaviour`]).
pub(super) fn names_behaviours(cases: &[Case]) -> bool {
    cases.iter().any(|k| {
        std::iter::once(&k.expect)
            .chain(k.per_mode.iter().map(|o| &o.expect))
            .any(names_behaviour)
    })
}

/// Whether `e` uses a key that makes the whole suite record behaviour facts:
/// `behaviour:`, or a `cannot_answer` or `direct` outcome (`clarify` outcomes predate
/// them and record facts for their own case only, so existing suites keep their records).
fn names_behaviour(e: &Expectation) -> bool {
    match e {
        Expectation::NoCall(t) => t.behaviour.is_some(),
        Expectation::AnyOf(o) => o
            .iter()
            .any(|o| matches!(o, Outcome::CannotAnswer(_) | Outcome::Direct(_))),
        Expectation::Calls(_) => false,
    }
}

/// The names `behaviour:` takes, as suites write them.
const BEHAVIOUR_NAMES: [&str; 3] = ["direct", "cannot_answer", "clarify"];

/// `behaviour:` of a `should_not_call` case: one of [`BEHAVIOUR_NAMES`].
fn compile_behaviour(
    c: &mut Checker<'_>,
    b: &Spanned<String>,
    field: &str,
) -> Option<crate::behaviour::Behaviour> {
    use crate::behaviour::Behaviour;
    let name = b.value.as_str();
    let found = match name {
        "direct" => Some(Behaviour::Direct),
        "cannot_answer" => Some(Behaviour::CannotAnswer),
        "clarify" => Some(Behaviour::RequestForInfo),
        _ => None,
    };
    if found.is_none() {
        let hint = match Behaviour::parse(name) {
            Some(Behaviour::ToolCall) => {
                "a `should_not_call` case expects no call: use kind `should_call` to expect one"
                    .to_string()
            }
            Some(Behaviour::RequestForInfo) => "suites write it `clarify`".to_string(),
            _ => {
                let mean = suggest::did_you_mean(name, BEHAVIOUR_NAMES);
                format!(
                    "use `direct` (answers without a tool), `cannot_answer` (says it cannot help) or `clarify` (asks for the missing information){}",
                    if mean.is_empty() {
                        String::new()
                    } else {
                        format!("; {mean}")
                    }
                )
            }
        };
        c.report(
            b.at(),
            format!("{field}.behaviour"),
            format!("unknown behaviour `{name}`"),
            Some(hint),
        );
    }
    found
}
