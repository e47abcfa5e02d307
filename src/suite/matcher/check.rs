//! Matching values: whether what the model sent satisfies a compiled [`Matcher`], and
//! when it does not, which path failed and why ([`Mismatch`]).
//!
//! [`Matcher::matches`] answers yes or no without building an explanation (the scoring
//! hot path); [`Matcher::check`] builds the explanation only for a value that failed.

use serde_json::{Map, Value};

use super::show::show;
use super::{Matcher, MatcherKind, Mismatch, join};
use crate::suite::model::ExtraArgs;
use crate::suite::normalize::Normalizer;
use crate::util::assign;

impl Matcher {
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
