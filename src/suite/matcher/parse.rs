//! Reading matchers as written: a literal, a list, a nested object or a map of keywords,
//! told apart with the value's JSON Schema when it is known. Keyword maps are read in
//! [`super::keywords`].

use serde_json::{Map, Value};

use super::keywords::compile_keywords;
use super::{CompileContext, KEYWORDS, Matcher, MatcherError, MatcherKind, join};
use crate::suite::model::ExtraArgs;

impl Matcher {
    /// Compile the matcher written as `value` at `path`.
    pub fn compile(
        value: &Value,
        path: &str,
        ctx: CompileContext<'_>,
    ) -> Result<Matcher, MatcherError> {
        match value {
            Value::Object(map) if reads_as_matcher(map, ctx.schema) => {
                compile_keywords(map, path, ctx)
            }
            Value::Object(map) => compile_object(map, path, ctx),
            Value::Array(items) => {
                let item_schema = ctx.schema.and_then(|s| s.get("items"));
                let items = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        Matcher::compile(
                            v,
                            &format!("{path}[{i}]"),
                            CompileContext {
                                schema: item_schema,
                                ..ctx
                            },
                        )
                    })
                    .collect::<Result<_, _>>()?;
                Ok(ctx.plain(MatcherKind::Array {
                    items,
                    ordered: true,
                }))
            }
            scalar => Ok(ctx.plain(MatcherKind::Literal(scalar.clone()))),
        }
    }
}

impl CompileContext<'_> {
    /// A matcher of `kind` that must be present, under the normalisation in force.
    fn plain(&self, kind: MatcherKind) -> Matcher {
        Matcher {
            kind,
            optional: false,
            norm: self.norm,
        }
    }
}

/// A compile error at `path`.
pub(super) fn err(path: &str, message: impl Into<String>, hint: Option<String>) -> MatcherError {
    MatcherError {
        path: path.to_string(),
        message: message.into(),
        hint,
    }
}

/// A map of fields: a nested object whose named fields must match (checked against
/// the schema's properties when it lists them).
fn compile_object(
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<Matcher, MatcherError> {
    let props = ctx
        .schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let schema_type = ctx
        .schema
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str);
    if let Some(t) = schema_type
        && t != "object"
    {
        let typo = map
            .keys()
            .find_map(|k| closest_keyword(k).map(|kw| (k, kw)));
        let hint = match typo {
            Some((k, kw)) => Some(format!("`{k}` is not a matcher; did you mean `{kw}`?")),
            None => Some(format!(
                "matchers are: {}; a plain map is read as a nested object",
                KEYWORDS.join(", ")
            )),
        };
        let keys = map
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(err(
            path,
            format!("unknown matcher {keys}: this parameter is of type `{t}`, not an object"),
            hint,
        ));
    }
    let mut fields = Vec::with_capacity(map.len());
    for (k, v) in map {
        let sub = join(path, k);
        let sub_schema = match props {
            Some(p) => match p.get(k) {
                Some(s) => Some(s),
                None if additional_forbidden(ctx.schema) => {
                    let known = p
                        .keys()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let hint = closest_keyword(k)
                        .map(|kw| format!("`{k}` is not a matcher; did you mean `{kw}`?"))
                        .unwrap_or_else(|| format!("known fields: {known}"));
                    return Err(err(&sub, format!("unknown field `{k}`"), Some(hint)));
                }
                None => None,
            },
            None => None,
        };
        let m = Matcher::compile(
            v,
            &sub,
            CompileContext {
                schema: sub_schema,
                ..ctx
            },
        )?;
        fields.push((k.clone(), m));
    }
    Ok(ctx.plain(MatcherKind::Object {
        fields,
        extra: ctx.extra,
    }))
}

/// Whether `map` is a matcher (keywords) rather than a nested object (fields).
///
/// A key named like a keyword (`type`, `range`, `contains`, `any`...) is a field when
/// the value's schema is an object that declares a property of that name: then
/// `{type: adult}` expects the field `type` to be `adult`. Otherwise any keyword makes
/// the map a matcher. A map that mixes declared fields with keywords that are not
/// fields is read as a matcher, and [`compile_keywords`] says what is mixed.
fn reads_as_matcher(map: &Map<String, Value>, schema: Option<&Value>) -> bool {
    map.keys()
        .any(|k| KEYWORDS.contains(&k.as_str()) && !declares_field(schema, k))
}

/// Whether `schema` declares a property named `key`.
pub(super) fn declares_field(schema: Option<&Value>, key: &str) -> bool {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(key))
}

/// Whether `schema` refuses properties it does not list.
fn additional_forbidden(schema: Option<&Value>) -> bool {
    schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false))
}

/// The property names `schema` declares.
pub(super) fn declared_fields(schema: Option<&Value>) -> Vec<&str> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The keyword a mistyped key most likely meant (edit distance at most 2).
pub fn closest_keyword(key: &str) -> Option<&'static str> {
    let k = key.to_lowercase().replace('-', "_");
    KEYWORDS
        .iter()
        .map(|kw| (strsim::levenshtein(&k, kw), *kw))
        .filter(|(d, _)| *d <= 2 && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, kw)| kw)
}

/// `eq`: the value taken literally, maps and lists included (exact key sets).
pub(super) fn compile_literal(v: &Value, ctx: CompileContext<'_>) -> MatcherKind {
    match v {
        Value::Object(map) => MatcherKind::Object {
            fields: map
                .iter()
                .map(|(k, v)| (k.clone(), ctx.plain(compile_literal(v, ctx))))
                .collect(),
            extra: ExtraArgs::Deny,
        },
        Value::Array(items) => MatcherKind::Array {
            items: items
                .iter()
                .map(|v| ctx.plain(compile_literal(v, ctx)))
                .collect(),
            ordered: true,
        },
        scalar => MatcherKind::Literal(scalar.clone()),
    }
}
