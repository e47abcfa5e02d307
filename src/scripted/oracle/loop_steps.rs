//! Trajectory steps in the oracle's hands: whether an earlier call satisfies a step
//! (the judge's check, `from:` values included) and the arguments of a new call for it.

use serde_json::{Map, Value};

use super::history::Past;
use super::value::{Values, join};
use crate::judge::steps::same;
use crate::suite::ExtraArgs;
use crate::suite::matcher::MatcherKind;
use crate::suite::trajectory::{FromRef, StepArg};

/// What building one call's arguments needs besides the value generator.
pub(super) struct ArgCtx<'c, 'p> {
    /// Every call of the episode so far.
    pub past: &'c [Past<'p>],
    /// `from` values already given to calls of this turn, by reference text.
    pub batch_used: &'c mut Vec<(String, Value)>,
    /// The tool being called.
    pub tool: &'c str,
    /// What could not be built.
    pub problems: Vec<String>,
}

/// The object `fields` describe, valid against `schema`: listed fields built (optional
/// and `absent` ones left out unless required), required fields not listed from the
/// schema alone.
pub(super) fn build_object<'a>(
    fields: &[(String, StepArg)],
    extra: ExtraArgs,
    schema: Option<&'a Value>,
    path: &str,
    values: &mut Values<'a>,
    ctx: &mut ArgCtx<'_, '_>,
) -> Map<String, Value> {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    for (name, arg) in fields {
        let at = join(path, name);
        let sub = props.and_then(|p| p.get(name));
        if let StepArg::Match(m) = arg
            && (matches!(m.kind, MatcherKind::Absent)
                || (m.optional && !required.contains(&name.as_str())))
        {
            continue;
        }
        if let Some(v) = build_value(arg, sub, &at, values, ctx) {
            out.insert(name.clone(), v);
        }
    }
    for r in required {
        if out.contains_key(r) || fields.iter().any(|(n, _)| n == r) {
            continue;
        }
        let at = join(path, r);
        if extra == ExtraArgs::Deny {
            ctx.problems.push(format!(
                "`{at}`: the schema requires it, but the step does not list it and `extra_args: deny` forbids unlisted arguments"
            ));
            continue;
        }
        if let Some(v) = values.schema_value(props.and_then(|p| p.get(r)), &at) {
            out.insert(r.to_string(), v);
        }
    }
    out
}

pub(super) fn build_value<'a>(
    arg: &StepArg,
    schema: Option<&'a Value>,
    path: &str,
    values: &mut Values<'a>,
    ctx: &mut ArgCtx<'_, '_>,
) -> Option<Value> {
    match arg {
        StepArg::Match(m) => values.matching(m, schema, path),
        StepArg::From(r) => {
            let found = from_values(r, ctx.past, usize::MAX);
            // Prefer a value no call has used yet (two orders, then their two
            // shipments), else the latest.
            let used = |v: &Value| {
                ctx.batch_used.iter().any(|(t, u)| *t == r.text && u == v)
                    || (!path.contains(['.', '[']))
                        && ctx.past.iter().any(|p| {
                            p.call.name == ctx.tool
                                && p.args().and_then(|a| a.get(path).cloned()).as_ref() == Some(v)
                        })
            };
            let Some(v) = found.iter().find(|v| !used(v)).or(found.last()).cloned() else {
                ctx.problems.push(format!(
                    "`{path}`: no result of `{}` so far has `{}`",
                    r.tool, r.text
                ));
                return None;
            };
            ctx.batch_used.push((r.text.clone(), v.clone()));
            Some(as_schema_type(v, schema))
        }
        StepArg::Object { fields, extra } => Some(Value::Object(build_object(
            fields, *extra, schema, path, values, ctx,
        ))),
        StepArg::Array(items) => {
            let item = schema.and_then(|s| s.get("items"));
            Some(Value::Array(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, a)| build_value(a, item, &format!("{path}[{i}]"), values, ctx))
                    .collect(),
            ))
        }
    }
}

/// A value read from a result, in the type the parameter's schema declares when it
/// holds the same value (`42` for a string parameter is `"42"`); the judge compares
/// them as equal either way.
pub(super) fn as_schema_type(v: Value, schema: Option<&Value>) -> Value {
    let ty = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    match (ty, &v) {
        (Some("string"), Value::Number(n)) => Value::String(n.to_string()),
        (Some("integer"), Value::String(s)) => {
            s.trim().parse::<i64>().map(Value::from).unwrap_or(v)
        }
        (Some("number"), Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(super::value::number)
            .unwrap_or(v),
        _ => v,
    }
}

/// Whether `actual` satisfies `arg`, with `from` values read from results of rounds
/// before `round`.
pub(super) fn holds(
    arg: &StepArg,
    actual: Option<&Value>,
    round: usize,
    past: &[Past<'_>],
) -> bool {
    match arg {
        StepArg::Match(m) => m.matches(actual),
        StepArg::From(r) => {
            actual.is_some_and(|a| from_values(r, past, round).iter().any(|v| same(r, v, a)))
        }
        StepArg::Object { fields, extra } => {
            let Some(obj) = actual.and_then(Value::as_object) else {
                return false;
            };
            (*extra == ExtraArgs::Allow || obj.keys().all(|k| fields.iter().any(|(n, _)| n == k)))
                && fields
                    .iter()
                    .all(|(n, a)| holds(a, obj.get(n), round, past))
        }
        StepArg::Array(items) => actual.and_then(Value::as_array).is_some_and(|list| {
            list.len() == items.len()
                && items
                    .iter()
                    .zip(list)
                    .all(|(a, v)| holds(a, Some(v), round, past))
        }),
    }
}

/// The values `r` names in successful results of rounds before `before`, in order.
pub(super) fn from_values(r: &FromRef, past: &[Past<'_>], before: usize) -> Vec<Value> {
    past.iter()
        .filter(|p| p.round < before && p.call.name == r.tool)
        .filter_map(|p| p.result())
        .filter_map(|v| r.lookup(&v).cloned())
        .collect()
}

/// The `from:` references of a step argument, nested ones included.
pub(super) fn refs_of<'s>(arg: &'s StepArg, out: &mut Vec<&'s FromRef>) {
    match arg {
        StepArg::Match(_) => {}
        StepArg::From(r) => out.push(r),
        StepArg::Object { fields, .. } => fields.iter().for_each(|(_, a)| refs_of(a, out)),
        StepArg::Array(items) => items.iter().for_each(|a| refs_of(a, out)),
    }
}
