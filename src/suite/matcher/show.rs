//! Showing values and matchers in messages: a value shortened for a report, what a
//! matcher accepts in words, and a value that satisfies it (for the scripted oracle).

use serde_json::{Map, Value};

use super::{JsonType, Matcher, MatcherKind};

impl Matcher {
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
