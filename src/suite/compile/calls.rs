//! Compiling expected calls (`calls: [{tool, args}]`): the tool each names, and each
//! argument's matcher, checked against the tool's schema and the suite's profile.

use serde_json::Value;

use super::Checker;
use super::case::CaseContext;
use crate::suite::matcher::{CompileContext, Matcher};
use crate::suite::model::{CountMode, ExpectedCallSpec};
use crate::suite::span::Spanned;
use crate::suite::{CallsExpectation, ExpectedCall, Tool};

/// The calls a case or outcome expects; `None` (with every problem reported) when one of
/// them names an unknown tool or has an argument that does not compile.
pub(super) fn compile_calls(
    c: &mut Checker<'_>,
    calls: &[ExpectedCallSpec],
    count: Option<CountMode>,
    field: &str,
    ctx: &CaseContext<'_>,
) -> Option<CallsExpectation> {
    let mut out = Vec::with_capacity(calls.len());
    let mut ok = true;
    // Every call is checked, so all their problems are reported in one pass.
    for (i, call) in calls.iter().enumerate() {
        match compile_call(c, call, &format!("{field}.calls[{i}]"), ctx) {
            Some(call) => out.push(call),
            None => ok = false,
        }
    }
    ok.then_some(CallsExpectation {
        calls: out,
        count: count.unwrap_or(ctx.count),
    })
}

/// One expected call at `cf`; `None` (with its problems reported) when it names an
/// unknown tool or one of its arguments is refused. A tool that did not compile was
/// reported with its schema, so naming it is not reported again.
fn compile_call(
    c: &mut Checker<'_>,
    call: &ExpectedCallSpec,
    cf: &str,
    ctx: &CaseContext<'_>,
) -> Option<ExpectedCall> {
    let Some(tool) = ctx.tools.get(call.tool.value.as_str()) else {
        if ctx.broken.contains(&call.tool.value) {
            return None;
        }
        let names: Vec<&str> = ctx.tools.keys().copied().collect();
        c.report(
            call.tool.at(),
            format!("{cf}.tool"),
            format!("expectation names unknown tool `{}`", call.tool.value),
            Some(format!(
                "the {} tools are: {}",
                if ctx.own_tools { "case's" } else { "suite's" },
                sorted_list(&names)
            )),
        );
        return None;
    };
    let extra = call.extra_args.unwrap_or(ctx.extra);
    let mut args = Vec::with_capacity(call.args.len());
    let mut ok = true;
    for (name, value) in &call.args {
        let af = format!("{cf}.args.{}", name.value);
        if refuse_arg(c, tool, (name, value), &af, ctx) {
            ok = false;
            continue;
        }
        let mctx = CompileContext {
            norm: ctx.norm,
            extra,
            schema: tool.property(&name.value),
        };
        match Matcher::compile(&value.value, &name.value, mctx) {
            Ok(m) => args.push((name.value.clone(), m)),
            Err(e) => {
                let path = if e.path == name.value {
                    af.clone()
                } else {
                    format!("{cf}.args.{}", e.path)
                };
                c.report(value.at(), path, e.message, e.hint);
                ok = false;
            }
        }
    }
    ok.then(|| ExpectedCall {
        tool: tool.name.clone(),
        args,
        raw_args: call
            .args
            .iter()
            .map(|(k, v)| (k.value.clone(), v.value.clone()))
            .collect(),
        extra,
    })
}

/// Whether the argument `(name, value)` at `af` is refused before its matcher is read
/// (reported): a parameter the tool does not have, a value the profile refuses, or a
/// `from:` reference to a tool result, which no call of the first round can have.
fn refuse_arg(
    c: &mut Checker<'_>,
    tool: &Tool,
    (name, value): (&Spanned<String>, &Spanned<Value>),
    af: &str,
    ctx: &CaseContext<'_>,
) -> bool {
    let props = tool.parameters.get("properties").and_then(Value::as_object);
    // A profile may read arguments the schema does not list.
    if let Some(p) = props
        && !p.contains_key(&name.value)
        && !ctx.profile.reads_unlisted_args()
    {
        let known: Vec<&str> = p.keys().map(String::as_str).collect();
        let hint = match crate::suite::matcher::closest_keyword(&name.value) {
            Some(kw) => format!(
                "`{}` looks like the matcher `{kw}`; matchers go inside a parameter: `param: {{{kw}: ...}}`",
                name.value
            ),
            None => format!("`{}` parameters are: {}", tool.name, sorted_list(&known)),
        };
        c.report(
            name.at(),
            af,
            format!(
                "expectation names unknown parameter `{}` of tool `{}`",
                name.value, tool.name
            ),
            Some(hint),
        );
        return true;
    }
    // A profile may read matchers its own way (and refuse some).
    if let Err(e) = ctx.profile.check_expected_value(&value.value) {
        c.report(value.at(), af, e.message, Some(e.hint));
        return true;
    }
    // Only a clear reference is refused: `{from: X}` was an ordinary nested
    // object matcher before loops existed.
    if crate::suite::trajectory::uses_from(&value.value, tool.property(&name.value))
        && value.value.to_string().contains(".result")
    {
        c.report(
            value.at(),
            af,
            "`from:` refers to an earlier tool result, which only `trajectory` steps have",
            Some("`calls` checks the first round, before any result; move the check to `trajectory.steps`".into()),
        );
        return true;
    }
    false
}

/// Names sorted and backticked, for a hint that lists them.
fn sorted_list(names: &[&str]) -> String {
    let mut v = names.to_vec();
    v.sort_unstable();
    v.iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
