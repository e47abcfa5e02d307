//! Argument matchers: how an expected argument is compared with what the model sent.
//!
//! A matcher is written in YAML as a literal (`city: 北京`), a list (ordered elements), a
//! map of parameter names (a nested object), or a map of matcher keywords
//! (`{one_of: [北京, Beijing]}`). A map is read as keywords when any of its keys is a
//! keyword; then every key must be one. Compiling checks all of this once, when the
//! suite loads, so matching a trial is a walk over prepared data.

use std::fmt;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{ExtraArgs, NormalizeRule};
use super::normalize::Normalizer;
use crate::util::assign;

/// Keywords that make a map a matcher rather than a nested object.
pub const KEYWORDS: &[&str] = &[
    "eq",
    "one_of",
    "regex",
    "range",
    "approx",
    "tolerance",
    "type",
    "any",
    "absent",
    "optional",
    "contains",
    "unordered",
    "normalize",
];

/// JSON types a `type` matcher can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonType {
    /// A string.
    String,
    /// Any number.
    Number,
    /// A number with no fractional part.
    Integer,
    /// true or false.
    Boolean,
    /// A list.
    Array,
    /// A map.
    Object,
    /// null.
    Null,
}

impl JsonType {
    fn parse(s: &str) -> Option<JsonType> {
        Some(match s {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    fn holds(self, v: &Value) -> bool {
        match self {
            JsonType::String => v.is_string(),
            JsonType::Number => v.is_number(),
            JsonType::Integer => v.as_f64().is_some_and(|f| f.fract() == 0.0),
            JsonType::Boolean => v.is_boolean(),
            JsonType::Array => v.is_array(),
            JsonType::Object => v.is_object(),
            JsonType::Null => v.is_null(),
        }
    }
}

/// A compiled matcher for one value.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// What the value must satisfy.
    pub kind: MatcherKind,
    /// The value may be omitted.
    pub optional: bool,
    /// Normalisation used for string comparisons.
    pub norm: Normalizer,
}

/// The test a matcher applies.
#[derive(Debug, Clone)]
pub enum MatcherKind {
    /// Equal to this scalar after normalisation (numbers compare by value).
    Literal(Value),
    /// Any of these matchers holds.
    OneOf(Vec<Matcher>),
    /// A string in which this regex finds a match.
    Regex(Regex),
    /// A number within `[min, max]`.
    Range {
        /// Lower bound, inclusive.
        min: Option<f64>,
        /// Upper bound, inclusive.
        max: Option<f64>,
    },
    /// A number within `tolerance` of `value`.
    Approx {
        /// Target value.
        value: f64,
        /// Largest accepted absolute difference.
        tolerance: f64,
    },
    /// A value of this JSON type.
    Type(JsonType),
    /// Present, with any value.
    Any,
    /// Must be omitted.
    Absent,
    /// A string containing this text after normalisation.
    Contains(String),
    /// An object whose named fields match.
    Object {
        /// Field matchers in suite order.
        fields: Vec<(String, Matcher)>,
        /// Whether fields not listed are allowed.
        extra: ExtraArgs,
    },
    /// A list whose elements match, in order or as a multiset.
    Array {
        /// Element matchers.
        items: Vec<Matcher>,
        /// Whether order matters.
        ordered: bool,
    },
}

/// Why a value did not match.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Where in the arguments, e.g. `city` or `stops[1].name`.
    pub path: String,
    /// What was expected, in suite terms.
    pub expected: String,
    /// What the model sent (`<absent>` when omitted).
    pub actual: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`: expected {}, got {}",
            self.path, self.expected, self.actual
        )
    }
}

/// A matcher that failed to compile, with the path inside the expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherError {
    /// Path inside the argument, e.g. `city.one_of[1]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// What compiling a matcher needs to know besides the YAML value.
#[derive(Debug, Clone, Copy)]
pub struct CompileContext<'a> {
    /// The normalisation in force (suite default or an enclosing `normalize`).
    pub norm: Normalizer,
    /// Policy for unlisted object fields.
    pub extra: ExtraArgs,
    /// The JSON Schema of the value being matched, when known.
    pub schema: Option<&'a Value>,
}

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

    /// Whether this matcher accepts an omitted value.
    pub fn accepts_absent(&self) -> bool {
        self.optional || matches!(self.kind, MatcherKind::Absent)
    }

    /// Check `actual` (`None` when the argument was omitted), explaining a mismatch.
    pub fn check(&self, actual: Option<&Value>, path: &str) -> Result<(), Mismatch> {
        if self.matches(actual) {
            return Ok(());
        }
        let explained = self.explain(actual, path);
        debug_assert!(
            explained.is_err(),
            "`matches` and `explain` disagree at `{path}`"
        );
        explained
    }

    /// Whether `actual` matches, without building an explanation (the scoring hot path:
    /// pairing calls tries every expected call against every actual one).
    pub fn matches(&self, actual: Option<&Value>) -> bool {
        let Some(actual) = actual else {
            return self.accepts_absent();
        };
        match &self.kind {
            MatcherKind::Literal(want) => literal_eq(want, actual, &self.norm),
            MatcherKind::OneOf(options) => options.iter().any(|m| m.matches(Some(actual))),
            MatcherKind::Regex(re) => actual
                .as_str()
                .is_some_and(|s| re.is_match(&self.norm.apply(s))),
            MatcherKind::Range { min, max } => actual
                .as_f64()
                .is_some_and(|x| min.is_none_or(|m| x >= m) && max.is_none_or(|m| x <= m)),
            MatcherKind::Approx { value, tolerance } => actual
                .as_f64()
                .is_some_and(|x| (x - value).abs() <= *tolerance),
            MatcherKind::Type(t) => t.holds(actual),
            MatcherKind::Any => true,
            MatcherKind::Absent => false,
            MatcherKind::Contains(needle) => actual.as_str().is_some_and(|s| {
                self.norm
                    .apply(s)
                    .contains(self.norm.apply(needle).as_ref())
            }),
            MatcherKind::Object { fields, extra } => actual
                .as_object()
                .is_some_and(|obj| fields_match(fields, *extra, obj)),
            MatcherKind::Array { items, ordered } => actual.as_array().is_some_and(|list| {
                if items.len() != list.len() {
                    false
                } else if *ordered {
                    items.iter().zip(list).all(|(m, v)| m.matches(Some(v)))
                } else {
                    assign::max_matching(items.len(), list.len(), |i, j| {
                        items[i].matches(Some(&list[j]))
                    })
                    .iter()
                    .all(Option::is_some)
                }
            }),
        }
    }

    /// The mismatch of a value that does not match, with the innermost path that failed.
    fn explain(&self, actual: Option<&Value>, path: &str) -> Result<(), Mismatch> {
        let Some(actual) = actual else {
            if self.accepts_absent() {
                return Ok(());
            }
            return Err(Mismatch {
                path: path.to_string(),
                expected: self.describe(),
                actual: "<absent>".to_string(),
            });
        };
        let fail = || Mismatch {
            path: path.to_string(),
            expected: self.describe(),
            actual: show(actual),
        };
        // Objects and lists explain the innermost failing field or element; every other
        // matcher is explained by what it expected and what came.
        match &self.kind {
            MatcherKind::Object { fields, extra } => match actual.as_object() {
                Some(obj) => check_fields(fields, *extra, obj, path),
                None => Err(fail()),
            },
            MatcherKind::Array { items, ordered } => match actual.as_array() {
                Some(list) => {
                    check_array(items, *ordered, list, path).map_err(|m| m.unwrap_or_else(fail))
                }
                None => Err(fail()),
            },
            _ if self.matches(Some(actual)) => Ok(()),
            _ => Err(fail()),
        }
    }

    /// A short human description of what this matcher accepts.
    pub fn describe(&self) -> String {
        let base = match &self.kind {
            MatcherKind::Literal(v) => show(v),
            MatcherKind::OneOf(options) => format!(
                "one of [{}]",
                options
                    .iter()
                    .map(Matcher::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            MatcherKind::Regex(re) => format!("a string matching /{}/", re.as_str()),
            MatcherKind::Range { min, max } => match (min, max) {
                (Some(a), Some(b)) => format!("a number in [{a}, {b}]"),
                (Some(a), None) => format!("a number >= {a}"),
                (None, Some(b)) => format!("a number <= {b}"),
                (None, None) => "a number".to_string(),
            },
            MatcherKind::Approx { value, tolerance } => format!("{value} ± {tolerance}"),
            MatcherKind::Type(t) => format!(
                "a value of type {}",
                serde_json::to_string(t)
                    .unwrap_or_default()
                    .trim_matches('"')
            ),
            MatcherKind::Any => "any value".to_string(),
            MatcherKind::Absent => "no value (absent)".to_string(),
            MatcherKind::Contains(s) => {
                format!("a string containing {}", show(&Value::String(s.clone())))
            }
            MatcherKind::Object { fields, .. } => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(k, m)| format!("{k}: {}", m.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            MatcherKind::Array { items, ordered } => format!(
                "{}[{}]",
                if *ordered { "" } else { "unordered " },
                items
                    .iter()
                    .map(Matcher::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if self.optional && !matches!(self.kind, MatcherKind::Any) {
            format!("{base} (or absent)")
        } else {
            base
        }
    }

    /// A representative value satisfying this matcher, if one is easy to name.
    ///
    /// Used by the scripted `oracle` provider to produce a correct call.
    pub fn example(&self) -> Option<Value> {
        match &self.kind {
            MatcherKind::Literal(v) => Some(v.clone()),
            MatcherKind::OneOf(options) => options.iter().find_map(Matcher::example),
            MatcherKind::Range { min, max } => min.or(*max).or(Some(0.0)).and_then(number),
            MatcherKind::Approx { value, .. } => number(*value),
            MatcherKind::Type(t) => Some(match t {
                JsonType::String => Value::String("x".into()),
                JsonType::Number | JsonType::Integer => Value::from(1),
                JsonType::Boolean => Value::Bool(true),
                JsonType::Array => Value::Array(vec![]),
                JsonType::Object => Value::Object(Map::new()),
                JsonType::Null => Value::Null,
            }),
            MatcherKind::Any => Some(Value::String("x".into())),
            MatcherKind::Contains(s) => Some(Value::String(s.clone())),
            MatcherKind::Regex(_) | MatcherKind::Absent => None,
            MatcherKind::Object { fields, .. } => {
                let mut obj = Map::new();
                for (k, m) in fields {
                    if m.optional || matches!(m.kind, MatcherKind::Absent) {
                        continue;
                    }
                    obj.insert(k.clone(), m.example()?);
                }
                Some(Value::Object(obj))
            }
            MatcherKind::Array { items, .. } => items
                .iter()
                .map(Matcher::example)
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
        }
    }
}

fn number(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(Value::from(f as i64))
    } else {
        serde_json::Number::from_f64(f).map(Value::Number)
    }
}

impl CompileContext<'_> {
    fn plain(&self, kind: MatcherKind) -> Matcher {
        Matcher {
            kind,
            optional: false,
            norm: self.norm,
        }
    }
}

/// Whether named fields of an object match, without explanations.
pub fn fields_match(
    fields: &[(String, Matcher)],
    extra: ExtraArgs,
    obj: &Map<String, Value>,
) -> bool {
    fields.iter().all(|(name, m)| m.matches(obj.get(name)))
        && (extra == ExtraArgs::Allow || obj.keys().all(|k| fields.iter().any(|(n, _)| n == k)))
}

/// Check named fields of an object (also used for a call's top-level arguments).
pub fn check_fields(
    fields: &[(String, Matcher)],
    extra: ExtraArgs,
    obj: &Map<String, Value>,
    path: &str,
) -> Result<(), Mismatch> {
    for (name, m) in fields {
        let sub = join(path, name);
        m.check(obj.get(name), &sub)?;
    }
    if extra == ExtraArgs::Deny
        && let Some(k) = obj.keys().find(|k| !fields.iter().any(|(n, _)| n == *k))
    {
        return Err(Mismatch {
            path: join(path, k),
            expected: "no such argument (extra_args: deny)".to_string(),
            actual: show(&obj[k]),
        });
    }
    Ok(())
}

/// Every expected field of `obj` that does not match (the first mismatch inside each),
/// then, under `extra_args: deny`, every argument that was not expected, in the call's
/// order: what a failure report lists, where [`check_fields`] stops at the first.
pub fn field_mismatches(
    fields: &[(String, Matcher)],
    extra: ExtraArgs,
    obj: &Map<String, Value>,
    path: &str,
) -> Vec<Mismatch> {
    let mut out: Vec<Mismatch> = fields
        .iter()
        .filter_map(|(name, m)| m.check(obj.get(name), &join(path, name)).err())
        .collect();
    if extra == ExtraArgs::Deny {
        out.extend(
            obj.iter()
                .filter(|(k, _)| !fields.iter().any(|(n, _)| n == *k))
                .map(|(k, v)| Mismatch {
                    path: join(path, k),
                    expected: "no such argument (extra_args: deny)".to_string(),
                    actual: show(v),
                }),
        );
    }
    out
}

fn check_array(
    items: &[Matcher],
    ordered: bool,
    list: &[Value],
    path: &str,
) -> Result<(), Option<Mismatch>> {
    if items.len() != list.len() {
        return Err(None);
    }
    if ordered {
        for (i, (m, v)) in items.iter().zip(list).enumerate() {
            m.check(Some(v), &format!("{path}[{i}]")).map_err(Some)?;
        }
        return Ok(());
    }
    let matched = assign::max_matching(items.len(), list.len(), |i, j| {
        items[i].matches(Some(&list[j]))
    });
    if matched.iter().all(Option::is_some) {
        Ok(())
    } else {
        Err(None)
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Literal equality: strings after normalisation, numbers by value, the rest exactly.
fn literal_eq(want: &Value, got: &Value, norm: &Normalizer) -> bool {
    match (want, got) {
        (Value::String(a), Value::String(b)) => norm.apply(a) == norm.apply(b),
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
        _ => want == got,
    }
}

/// A value as it would appear in a message, shortened for long strings.
pub fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn err(path: &str, message: impl Into<String>, hint: Option<String>) -> MatcherError {
    MatcherError {
        path: path.to_string(),
        message: message.into(),
        hint,
    }
}

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
fn declares_field(schema: Option<&Value>, key: &str) -> bool {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(key))
}

fn additional_forbidden(schema: Option<&Value>) -> bool {
    schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false))
}

/// The property names `schema` declares.
fn declared_fields(schema: Option<&Value>) -> Vec<&str> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn tick_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
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

fn compile_keywords(
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<Matcher, MatcherError> {
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
    let ctx = CompileContext { norm, ..ctx };
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

fn compile_primary(
    key: &str,
    v: &Value,
    map: &Map<String, Value>,
    path: &str,
    ctx: CompileContext<'_>,
) -> Result<MatcherKind, MatcherError> {
    let at = join(path, key);
    let want_bool = |v: &Value| -> Result<(), MatcherError> {
        if v == &Value::Bool(true) {
            Ok(())
        } else {
            Err(err(
                &at,
                format!("`{key}` takes `true`, got {}", show(v)),
                None,
            ))
        }
    };
    let want_number = |v: &Value, what: &str| -> Result<f64, MatcherError> {
        v.as_f64().ok_or_else(|| {
            err(
                &at,
                format!("{what} must be a number, got {}", show(v)),
                None,
            )
        })
    };
    Ok(match key {
        "eq" => compile_literal(v, ctx),
        "one_of" => {
            let Some(options) = v.as_array().filter(|a| !a.is_empty()) else {
                return Err(err(
                    &at,
                    format!("`one_of` takes a non-empty list, got {}", show(v)),
                    None,
                ));
            };
            MatcherKind::OneOf(
                options
                    .iter()
                    .enumerate()
                    .map(|(i, o)| Matcher::compile(o, &format!("{at}[{i}]"), ctx))
                    .collect::<Result<_, _>>()?,
            )
        }
        "regex" => {
            let Some(pattern) = v.as_str() else {
                return Err(err(
                    &at,
                    format!("`regex` takes a string, got {}", show(v)),
                    None,
                ));
            };
            let re =
                crate::util::regex_cache::build(pattern, ctx.norm.casefolds()).map_err(|e| {
                    err(
                        &at,
                        format!("invalid regex `{pattern}`: {}", first_line(&e.to_string())),
                        Some("the syntax is Rust's `regex` crate (no look-around)".into()),
                    )
                })?;
            MatcherKind::Regex(re)
        }
        "range" => {
            let Some(bounds) = v.as_object() else {
                return Err(err(
                    &at,
                    format!("`range` takes {{min, max}}, got {}", show(v)),
                    Some("write `range: {min: 1, max: 5}`".into()),
                ));
            };
            if let Some(k) = bounds.keys().find(|k| *k != "min" && *k != "max") {
                return Err(err(
                    &at,
                    format!("unknown range bound `{k}`"),
                    Some("use `min` and `max`".into()),
                ));
            }
            let min = bounds
                .get("min")
                .map(|b| want_number(b, "`min`"))
                .transpose()?;
            let max = bounds
                .get("max")
                .map(|b| want_number(b, "`max`"))
                .transpose()?;
            if let (Some(a), Some(b)) = (min, max)
                && a > b
            {
                return Err(err(&at, format!("range min {a} is above max {b}"), None));
            }
            MatcherKind::Range { min, max }
        }
        "approx" => {
            let value = want_number(v, "`approx`")?;
            let tolerance = match map.get("tolerance") {
                Some(t) => want_number(t, "`tolerance`")?,
                None => 1e-9 * value.abs().max(1.0),
            };
            if tolerance < 0.0 {
                return Err(err(&at, "`tolerance` must not be negative", None));
            }
            MatcherKind::Approx { value, tolerance }
        }
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
            want_bool(v)?;
            MatcherKind::Any
        }
        "absent" => {
            want_bool(v)?;
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
        "unordered" => {
            let Some(items) = v.as_array() else {
                return Err(err(
                    &at,
                    format!("`unordered` takes a list, got {}", show(v)),
                    None,
                ));
            };
            let item_schema = ctx.schema.and_then(|s| s.get("items"));
            MatcherKind::Array {
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
            }
        }
        _ => unreachable!("compile_primary is only called with primary keywords"),
    })
}

/// `eq`: the value taken literally, maps and lists included (exact key sets).
fn compile_literal(v: &Value, ctx: CompileContext<'_>) -> MatcherKind {
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

fn first_line(s: &str) -> &str {
    s.lines().last().unwrap_or(s).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> CompileContext<'static> {
        CompileContext {
            norm: Normalizer::default(),
            extra: ExtraArgs::Allow,
            schema: None,
        }
    }

    fn m(v: Value) -> Matcher {
        Matcher::compile(&v, "x", ctx()).unwrap()
    }

    fn ok(mm: &Matcher, v: Value) -> bool {
        mm.check(Some(&v), "x").is_ok()
    }

    #[test]
    fn literal_strings_use_normalisation() {
        let plain = m(json!("北京"));
        assert!(ok(&plain, json!("北京")));
        assert!(!ok(&plain, json!("北京 ")));
        let n = Matcher::compile(
            &json!("北京"),
            "x",
            CompileContext {
                norm: Normalizer::new(&[NormalizeRule::Whitespace]),
                ..ctx()
            },
        )
        .unwrap();
        assert!(ok(&n, json!("北京 ")));
    }

    #[test]
    fn literal_numbers_compare_by_value_not_type_of_json() {
        let five = m(json!(5));
        assert!(ok(&five, json!(5.0)));
        assert!(!ok(&five, json!("5")));
        assert!(!ok(&five, json!(5.1)));
    }

    #[test]
    fn one_of_regex_range_approx_type() {
        assert!(ok(
            &m(json!({"one_of": ["北京", "Beijing"]})),
            json!("Beijing")
        ));
        assert!(!ok(
            &m(json!({"one_of": ["北京", "Beijing"]})),
            json!("上海")
        ));
        let date = m(json!({"regex": "^\\d{4}-\\d{2}-\\d{2}$"}));
        assert!(ok(&date, json!("2026-08-09")));
        assert!(!ok(&date, json!("tomorrow")));
        assert!(!ok(&date, json!(20260809)));
        let r = m(json!({"range": {"min": 1, "max": 5}}));
        assert!(ok(&r, json!(1)) && ok(&r, json!(5)) && !ok(&r, json!(5.5)));
        let a = m(json!({"approx": 3.2, "tolerance": 0.05}));
        assert!(ok(&a, json!(3.24)) && !ok(&a, json!(3.3)));
        let t = m(json!({"type": "integer"}));
        assert!(ok(&t, json!(3)) && !ok(&t, json!(3.5)) && !ok(&t, json!("3")));
    }

    #[test]
    fn any_absent_optional() {
        let any = m(json!({"any": true}));
        assert!(ok(&any, json!(null)));
        assert!(any.check(None, "x").is_err());
        let absent = m(json!({"absent": true}));
        assert!(absent.check(None, "x").is_ok());
        assert!(!ok(&absent, json!(1)));
        let opt = m(json!({"optional": true, "regex": "^a"}));
        assert!(opt.check(None, "x").is_ok());
        assert!(ok(&opt, json!("abc")));
        assert!(!ok(&opt, json!("bcd")));
        let bare = m(json!({"optional": true}));
        assert!(bare.check(None, "x").is_ok() && ok(&bare, json!(42)));
    }

    #[test]
    fn nested_objects_and_arrays() {
        let obj = m(json!({"from": "北京", "to": {"one_of": ["上海", "Shanghai"]}}));
        assert!(ok(
            &obj,
            json!({"from": "北京", "to": "Shanghai", "class": "economy"})
        ));
        assert!(!ok(&obj, json!({"from": "北京"})));
        let ordered = m(json!([1, 2]));
        assert!(ok(&ordered, json!([1, 2])) && !ok(&ordered, json!([2, 1])));
        let unordered = m(json!({"unordered": [1, 2]}));
        assert!(ok(&unordered, json!([2, 1])) && !ok(&unordered, json!([2, 2])));
        assert!(!ok(&unordered, json!([1, 2, 3])));
    }

    #[test]
    fn unordered_needs_optimal_not_greedy_assignment() {
        // Greedy pairing of element 0 (any string) with "a" leaves element 1 (only "a")
        // unmatched; the optimal assignment pairs 0 with "b" and 1 with "a".
        let u = m(json!({"unordered": [{"type": "string"}, "a"]}));
        assert!(ok(&u, json!(["a", "b"])));
    }

    #[test]
    fn eq_takes_maps_literally() {
        let e = m(json!({"eq": {"type": "x"}}));
        assert!(ok(&e, json!({"type": "x"})));
        assert!(!ok(&e, json!({"type": "x", "more": 1})));
    }

    fn with_schema(v: Value, schema: &Value) -> Result<Matcher, MatcherError> {
        Matcher::compile(
            &v,
            "person",
            CompileContext {
                schema: Some(schema),
                ..ctx()
            },
        )
    }

    #[test]
    fn a_field_named_like_a_matcher_is_a_field_when_the_schema_declares_it() {
        let schema = json!({"type": "object", "properties": {
            "type": {"type": "string", "enum": ["adult", "child"]},
            "range": {"type": "string"}, "contains": {"type": "string"},
            "any": {"type": "boolean"}, "regex": {"type": "string"}, "name": {"type": "string"}}});
        let person = with_schema(json!({"type": "adult"}), &schema).unwrap();
        assert!(ok(&person, json!({"type": "adult", "name": "Ann"})));
        assert!(!ok(&person, json!({"type": "child"})));
        // Not a `type` matcher: an object is not enough.
        assert!(!ok(&person, json!({"name": "Ann"})));
        let many = with_schema(
            json!({"range": "near", "contains": "nuts", "any": true, "regex": "^a$"}),
            &schema,
        )
        .unwrap();
        assert!(ok(
            &many,
            json!({"range": "near", "contains": "nuts", "any": true, "regex": "^a$"})
        ));
        assert!(!ok(
            &many,
            json!({"range": "far", "contains": "nuts", "any": true, "regex": "^a$"})
        ));
        // A field's value can itself be a matcher.
        let nested = with_schema(json!({"type": {"one_of": ["adult", "child"]}}), &schema).unwrap();
        assert!(ok(&nested, json!({"type": "child"})));
        assert!(!ok(&nested, json!({"type": "senior"})));
    }

    #[test]
    fn a_keyword_the_schema_does_not_declare_is_a_matcher() {
        // The object's schema has no `type` property: `{type: object}` is a type matcher.
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let typed = with_schema(json!({"type": "object"}), &schema).unwrap();
        assert!(ok(&typed, json!({"name": "x"})));
        assert!(!ok(&typed, json!("x")));
        // Without a schema, as before.
        assert!(ok(&m(json!({"type": "string"})), json!("x")));
        // Mixing a declared field with a keyword that is not one is named.
        let schema = json!({"type": "object", "properties": {"type": {"type": "string"}}});
        let e = with_schema(json!({"type": "adult", "optional": true}), &schema).unwrap_err();
        assert_eq!(
            e.message,
            "this map mixes fields of the object (`type`) with matcher keywords (`optional`)"
        );
        assert!(e.hint.unwrap().contains("Fields are: `type`"));
    }

    #[test]
    fn eq_is_the_literal_form_whatever_the_keys() {
        // No schema says `type` is a field; `eq` takes the object as it is written.
        let e = m(json!({"eq": {"type": "adult", "range": [1, 2]}}));
        assert!(ok(&e, json!({"type": "adult", "range": [1, 2]})));
        assert!(!ok(&e, json!({"type": "adult", "range": [2, 1]})));
        assert!(!ok(&e, json!("adult")));
    }

    #[test]
    fn compile_errors_name_the_problem() {
        let e = Matcher::compile(&json!({"one_of": [], "x": 1}), "city", ctx()).unwrap_err();
        assert!(e.message.contains("unknown matcher key `x`"), "{e:?}");
        let e = Matcher::compile(&json!({"regex": "("}), "city", ctx()).unwrap_err();
        assert!(e.message.contains("invalid regex"), "{e:?}");
        let e = Matcher::compile(&json!({"one_of": [1], "regex": "a"}), "c", ctx()).unwrap_err();
        assert!(e.message.contains("one test"), "{e:?}");
        let schema = json!({"type": "string"});
        let e = Matcher::compile(
            &json!({"oneof": ["a"]}),
            "city",
            CompileContext {
                schema: Some(&schema),
                ..ctx()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("unknown matcher `oneof`"), "{e:?}");
        assert_eq!(
            e.hint.as_deref(),
            Some("`oneof` is not a matcher; did you mean `one_of`?")
        );
    }

    #[test]
    fn mismatch_says_expected_and_actual() {
        let e = m(json!({"one_of": ["北京", "Beijing"]}))
            .check(Some(&json!("上海")), "city")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`city`: expected one of [\"北京\", \"Beijing\"], got \"上海\""
        );
    }

    #[test]
    fn examples_satisfy_their_matchers() {
        for v in [
            json!("北京"),
            json!({"one_of": ["a", "b"]}),
            json!({"range": {"min": 2, "max": 4}}),
            json!({"type": "boolean"}),
            json!({"a": 1, "b": {"optional": true}}),
            json!({"unordered": [1, 2]}),
        ] {
            let mm = m(v.clone());
            let ex = mm.example().unwrap();
            assert!(ok(&mm, ex.clone()), "{v} vs {ex}");
        }
    }
}
