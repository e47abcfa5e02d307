//! Reading a map of matcher keywords (`{one_of: [...]}`, `{range: {min, max}}`...): which
//! keys it may combine, the modifiers (`normalize`, `optional`), and each test's own value.

use serde_json::{Map, Value};

use super::parse::{closest_keyword, declared_fields, declares_field, err};
use super::show::show;
use super::{CompileContext, JsonType, KEYWORDS, Matcher, MatcherError, MatcherKind, join};
use crate::suite::model::NormalizeRule;
use crate::suite::normalize::Normalizer;

/// The keywords that name a test; a matcher takes exactly one (the others modify it).
const PRIMARY: &[&str] = &[
    "eq",
    "one_of",
    "regex",
    "range",
    "approx",
    "type",
    "any",
    "absent",
    "contains",
    "unordered",
];

/// Compile a map that [`super::parse`] read as matcher keywords.
pub(super) fn compile_keywords(
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<Matcher, MatcherError> {
    check_keys(map, path, ctx)?;
    let (norm, optional) = modifiers(map, path, ctx)?;
    let ctx = CompileContext { norm, ..ctx };
    let primaries: Vec<&str> = PRIMARY
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    if map.contains_key("tolerance") && !map.contains_key("approx") {
        return Err(err(path, "`tolerance` is only valid with `approx`", None));
    }
    let kind = match primaries.as_slice() {
        [] if optional => MatcherKind::Any,
        [] => {
            return Err(err(
                path,
                "this matcher names no test",
                Some(format!("add one of: {}", PRIMARY.join(", "))),
            ));
        }
        [one] => compile_primary(one, &map[*one], map, path, ctx)?,
        many => {
            return Err(err(
                path,
                format!("a matcher takes one test, found {}", many.join(" and ")),
                Some("use `one_of` to accept several alternatives".into()),
            ));
        }
    };
    Ok(Matcher {
        kind,
        optional,
        norm,
    })
}

/// Every key is a keyword, and none is a field the schema declares (a map that mixes
/// them is ambiguous, so it is refused with both lists).
fn check_keys(
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<(), MatcherError> {
    let fields: Vec<&str> = map
        .keys()
        .filter(|k| declares_field(ctx.schema, k))
        .map(String::as_str)
        .collect();
    if !fields.is_empty() {
        let keywords: Vec<&str> = map
            .keys()
            .filter(|k| !declares_field(ctx.schema, k))
            .map(String::as_str)
            .collect();
        return Err(err(
            path,
            format!(
                "this map mixes fields of the object ({}) with matcher keywords ({})",
                tick_list(&fields),
                tick_list(&keywords)
            ),
            Some(format!(
                "list only the object's fields to match them one by one, or write one matcher \
                 for the whole value; `{{eq: {{...}}}}` takes an object literally. Fields are: {}",
                tick_list(&declared_fields(ctx.schema))
            )),
        ));
    }
    if let Some(k) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
        let hint = closest_keyword(k)
            .map(|kw| format!("did you mean `{kw}`?"))
            .unwrap_or_else(|| format!("matcher keys are: {}", KEYWORDS.join(", ")));
        return Err(err(
            path,
            format!("unknown matcher key `{k}` next to matcher keywords"),
            Some(hint),
        ));
    }
    Ok(())
}

/// The modifiers: the normalisation in force (`normalize` replaces the enclosing one)
/// and whether the value may be omitted (`optional`).
fn modifiers(
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<(Normalizer, bool), MatcherError> {
    let mut norm = ctx.norm;
    if let Some(rules) = map.get("normalize") {
        let rules: Vec<NormalizeRule> = serde_json::from_value(rules.clone()).map_err(|_| {
            err(
                &join(path, "normalize"),
                format!("`normalize` must be a list of rules, got {}", show(rules)),
                Some("rules are: casefold, whitespace, punctuation, fullwidth".into()),
            )
        })?;
        norm = Normalizer::new(&rules);
    }
    let optional = match map.get("optional") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(err(
                &join(path, "optional"),
                format!("`optional` must be true or false, got {}", show(other)),
                None,
            ));
        }
    };
    Ok((norm, optional))
}

/// The test named by the primary keyword `key`, written as `v` (`map` is the whole
/// matcher, for `approx`'s `tolerance`).
fn compile_primary(
    key: &str,
    v: &Value,
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<MatcherKind, MatcherError> {
    let at = join(path, key);
    Ok(match key {
        "eq" => super::parse::compile_literal(v, ctx),
        "one_of" => compile_one_of(v, &at, ctx)?,
        "regex" => compile_regex(v, &at, ctx)?,
        "range" => compile_range(v, &at)?,
        "approx" => compile_approx(v, map, &at)?,
        "type" => {
            let t = v.as_str().and_then(JsonType::parse).ok_or_else(|| {
                err(
                    &at,
                    format!("unknown type {}", show(v)),
                    Some("types are: string, number, integer, boolean, array, object, null".into()),
                )
            })?;
            MatcherKind::Type(t)
        }
        "any" => {
            want_true(v, key, &at)?;
            MatcherKind::Any
        }
        "absent" => {
            want_true(v, key, &at)?;
            MatcherKind::Absent
        }
        "contains" => match v.as_str() {
            Some(s) => MatcherKind::Contains(s.to_string()),
            None => {
                return Err(err(
                    &at,
                    format!("`contains` takes a string, got {}", show(v)),
                    None,
                ));
            }
        },
        "unordered" => compile_unordered(v, &at, ctx)?,
        _ => unreachable!("compile_primary is only called with primary keywords"),
    })
}

/// `any: true` and `absent: true` take `true` and nothing else.
fn want_true(v: &Value, key: &str, at: &str) -> Result<(), MatcherError> {
    if v == &Value::Bool(true) {
        Ok(())
    } else {
        Err(err(
            at,
            format!("`{key}` takes `true`, got {}", show(v)),
            None,
        ))
    }
}

/// A number, or an error naming `what` (a keyword or a bound, backticked).
fn want_number(v: &Value, what: &str, at: &str) -> Result<f64, MatcherError> {
    v.as_f64().ok_or_else(|| {
        err(
            at,
            format!("{what} must be a number, got {}", show(v)),
            None,
        )
    })
}

/// `one_of`: a non-empty list of matchers, any of which may hold.
fn compile_one_of(
    v: &Value,
    at: &str,
    ctx: CompileContext<'_>,
) -> Result<MatcherKind, MatcherError> {
    let Some(options) = v.as_array().filter(|a| !a.is_empty()) else {
        return Err(err(
            at,
            format!("`one_of` takes a non-empty list, got {}", show(v)),
            None,
        ));
    };
    Ok(MatcherKind::OneOf(
        options
            .iter()
            .enumerate()
            .map(|(i, o)| Matcher::compile(o, &format!("{at}[{i}]"), ctx))
            .collect::<Result<_, _>>()?,
    ))
}

/// `regex`: a pattern, case-insensitive when the normalisation folds case.
fn compile_regex(
    v: &Value,
    at: &str,
    ctx: CompileContext<'_>,
) -> Result<MatcherKind, MatcherError> {
    let Some(pattern) = v.as_str() else {
        return Err(err(
            at,
            format!("`regex` takes a string, got {}", show(v)),
            None,
        ));
    };
    let re = crate::util::regex_cache::build(pattern, ctx.norm.casefolds()).map_err(|e| {
        err(
            at,
            format!("invalid regex `{pattern}`: {}", first_line(&e.to_string())),
            Some("the syntax is Rust's `regex` crate (no look-around)".into()),
        )
    })?;
    Ok(MatcherKind::Regex(re))
}

/// `range`: `{min, max}`, either bound optional, `min` not above `max`.
fn compile_range(v: &Value, at: &str) -> Result<MatcherKind, MatcherError> {
    let Some(bounds) = v.as_object() else {
        return Err(err(
            at,
            format!("`range` takes {{min, max}}, got {}", show(v)),
            Some("write `range: {min: 1, max: 5}`".into()),
        ));
    };
    if let Some(k) = bounds.keys().find(|k| *k != "min" && *k != "max") {
        return Err(err(
            at,
            format!("unknown range bound `{k}`"),
            Some("use `min` and `max`".into()),
        ));
    }
    let min = bounds
        .get("min")
        .map(|b| want_number(b, "`min`", at))
        .transpose()?;
    let max = bounds
        .get("max")
        .map(|b| want_number(b, "`max`", at))
        .transpose()?;
    if let (Some(a), Some(b)) = (min, max)
        && a > b
    {
        return Err(err(at, format!("range min {a} is above max {b}"), None));
    }
    Ok(MatcherKind::Range { min, max })
}

/// `approx`: a number, within `tolerance` (by default a relative 1e-9, so a value
/// written in the suite matches the same value sent back).
fn compile_approx(
    v: &Value,
    map: &Map<String, Value>,
    at: &str,
) -> Result<MatcherKind, MatcherError> {
    let value = want_number(v, "`approx`", at)?;
    let tolerance = match map.get("tolerance") {
        Some(t) => want_number(t, "`tolerance`", at)?,
        None => 1e-9 * value.abs().max(1.0),
    };
    if tolerance < 0.0 {
        return Err(err(at, "`tolerance` must not be negative", None));
    }
    Ok(MatcherKind::Approx { value, tolerance })
}

/// `unordered`: a list of element matchers, paired with the elements in any order.
fn compile_unordered(
    v: &Value,
    at: &str,
    ctx: CompileContext<'_>,
) -> Result<MatcherKind, MatcherError> {
    let Some(items) = v.as_array() else {
        return Err(err(
            at,
            format!("`unordered` takes a list, got {}", show(v)),
            None,
        ));
    };
    let item_schema = ctx.schema.and_then(|s| s.get("items"));
    Ok(MatcherKind::Array {
        items: items
            .iter()
            .enumerate()
            .map(|(i, o)| {
                Matcher::compile(
                    o,
                    &format!("{at}[{i}]"),
                    CompileContext {
                        schema: item_schema,
                        ..ctx
                    },
                )
            })
            .collect::<Result<_, _>>()?,
        ordered: false,
    })
}

/// Names as a list of backticked words.
fn tick_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The last line of a regex error (the line that says what is wrong), trimmed.
fn first_line(s: &str) -> &str {
    s.lines().last().unwrap_or(s).trim()
}
