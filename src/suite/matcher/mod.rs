//! Argument matchers: how an expected argument is compared with what the model sent.
//!
//! A matcher is written in YAML as a literal (`city: 北京`), a list (ordered elements), a
//! map of parameter names (a nested object), or a map of matcher keywords
//! (`{one_of: [北京, Beijing]}`). A map is read as keywords when any of its keys is a
//! keyword; then every key must be one. Compiling checks all of this once, when the
//! suite loads, so matching a trial is a walk over prepared data.
//!
//! This file holds the types; reading a matcher as written is in `parse` (keyword maps in
//! `keywords`), matching a value in `check`, and showing values and matchers in `show`.

mod check;
mod keywords;
mod parse;
mod show;

use std::fmt;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use super::model::ExtraArgs;
use super::normalize::Normalizer;

pub use check::{check_fields, field_mismatches, fields_match};
pub use parse::closest_keyword;
pub use show::show;

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
        )?;
        // "expected Zürich, got Zürich" says nothing: say what differs.
        if let Some(why) = super::normalize::look_alike(&self.expected, &self.actual) {
            write!(f, " ({why})")?;
        }
        Ok(())
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

/// `key` under `path` (`stops[1].name`), the form every matcher path and mismatch takes.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests;
