//! Argument values that satisfy an expectation's matcher and the parameter's JSON Schema
//! at once.
//!
//! For each value the oracle lists candidates in order of preference (the matcher's own
//! value, values the schema offers such as `enum`, `const` and `default`, words and
//! numbers of the conversation, strings generated from a regex or a `pattern`, numbers
//! inside both the matcher's and the schema's bounds) and keeps the first one that the
//! compiled matcher accepts and the schema validates. What no candidate can satisfy is
//! written down as a problem, with the path and the matcher, instead of being guessed.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::ground::Grounding;
use super::regex_gen::{intersect, samples, seed_of};
use crate::suite::ExtraArgs;
use crate::suite::matcher::{JsonType, Matcher, MatcherKind};

/// Nesting depth beyond which no value is generated (recursive schemas).
const MAX_DEPTH: usize = 24;

/// How many regex samples are tried per regex.
const SAMPLES: usize = 24;

/// The state of generating the arguments of one call.
pub struct Values<'a> {
    /// The tool's parameter schema (the document `$ref`s point into).
    root: &'a Value,
    ground: &'a Grounding,
    /// Seed from the case id.
    seed: u64,
    /// Validators by the address of their sub-schema (every sub-schema lives inside
    /// `root`, which outlives this generator, so addresses are stable and unique).
    validators: HashMap<usize, Option<jsonschema::Validator>>,
    depth: usize,
    /// Whether the costly candidates (searching automata) are listed: only once the
    /// cheap ones all failed.
    deep: bool,
    /// What could not be satisfied, as `path: why`.
    pub problems: Vec<String>,
}

impl<'a> Values<'a> {
    /// Generation for a call whose tool has parameter schema `root`.
    pub fn new(root: &'a Value, ground: &'a Grounding, seed: u64) -> Self {
        Values {
            root,
            ground,
            seed,
            validators: HashMap::new(),
            depth: 0,
            deep: false,
            problems: Vec::new(),
        }
    }

    /// The root schema.
    pub fn root(&self) -> &'a Value {
        self.root
    }

    /// An object whose `fields` match and which validates against `schema`: listed fields
    /// are generated from their matchers (optional ones are left out unless the schema
    /// requires them), required fields the expectation does not list from the schema.
    pub fn object(
        &mut self,
        fields: &[(String, Matcher)],
        extra: ExtraArgs,
        schema: Option<&'a Value>,
        path: &str,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        if !self.enter(path) {
            return out;
        }
        let s = schema.map(|s| self.resolve(s));
        let props = s
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let required: Vec<&str> = s
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, m) in fields {
            let at = join(path, name);
            let required_here = required.contains(&name.as_str());
            if matches!(m.kind, MatcherKind::Absent) {
                if required_here {
                    self.problems.push(format!(
                        "`{at}`: the expectation wants it absent, but the schema requires it"
                    ));
                }
                continue;
            }
            // Leaving an optional argument out always satisfies its matcher.
            if m.optional && !required_here {
                continue;
            }
            let sub = props.and_then(|p| p.get(name));
            if let Some(v) = self.matching(m, sub, &at) {
                out.insert(name.clone(), v);
            }
        }
        for r in required {
            if out.contains_key(r) || fields.iter().any(|(n, _)| n == r) {
                continue;
            }
            let at = join(path, r);
            if extra == ExtraArgs::Deny {
                self.problems.push(format!(
                    "`{at}`: the schema requires it, but the expectation does not list it and `extra_args: deny` forbids unlisted arguments"
                ));
                continue;
            }
            let sub = props.and_then(|p| p.get(r));
            if let Some(v) = self.schema_value(sub, &at) {
                out.insert(r.to_string(), v);
            }
        }
        // `minProperties`: fill with the schema's other properties, when allowed.
        let min = s
            .and_then(|s| s.get("minProperties"))
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        if out.len() < min
            && extra == ExtraArgs::Allow
            && let Some(props) = props
        {
            for (k, sub) in props {
                if out.len() >= min {
                    break;
                }
                if out.contains_key(k) || fields.iter().any(|(n, _)| n == k) {
                    continue;
                }
                if let Some(v) = self.schema_value(Some(sub), &join(path, k)) {
                    out.insert(k.clone(), v);
                }
            }
        }
        self.leave();
        out
    }

    /// A value `m` accepts and `schema` validates; the closest value with a problem
    /// recorded when there is none; `None` when nothing can be produced.
    pub fn matching(
        &mut self,
        m: &Matcher,
        schema: Option<&'a Value>,
        path: &str,
    ) -> Option<Value> {
        if !self.enter(path) {
            return None;
        }
        let s = schema.map(|s| self.resolve(s));
        let mark = self.problems.len();
        let outer = self.deep;
        let mut candidates = Vec::new();
        let mut closest = None;
        // The cheap candidates first; the automata search only when they all fail.
        for deep in [false, true] {
            self.problems.truncate(mark);
            self.deep = deep;
            candidates = self.matcher_candidates(m, s, path);
            closest = None;
            for c in &candidates {
                if !m.matches(Some(c)) {
                    continue;
                }
                if self.schema_ok(s, c) {
                    // Problems met on the way (another `one_of` option) do not count.
                    self.problems.truncate(mark);
                    self.deep = outer;
                    self.leave();
                    return Some(c.clone());
                }
                if closest.is_none() {
                    closest = Some(c.clone());
                }
            }
        }
        self.deep = true;
        let inner_problems = self.problems.len() > mark;
        let out = match closest {
            Some(c) => {
                self.problems.push(format!(
                    "`{path}`: no value is both {} and valid against the parameter's schema",
                    m.describe()
                ));
                Some(c)
            }
            // Objects and lists were built field by field; their own problems say why.
            None if inner_problems
                && matches!(
                    m.kind,
                    MatcherKind::Object { .. } | MatcherKind::Array { .. }
                ) =>
            {
                candidates.into_iter().next()
            }
            None => {
                if !inner_problems {
                    // Tell "impossible in itself" from "impossible under this schema".
                    let alone = self
                        .matcher_candidates(m, None, path)
                        .iter()
                        .any(|c| m.matches(Some(c)));
                    self.problems.truncate(mark);
                    self.problems.push(if alone && s.is_some() {
                        format!(
                            "`{path}`: no value is both {} and valid against the parameter's schema",
                            m.describe()
                        )
                    } else {
                        format!("`{path}`: found no value that is {}", m.describe())
                    });
                }
                self.schema_value(s, path)
            }
        };
        self.deep = outer;
        self.leave();
        out
    }

    /// A value valid against `schema` alone (grounded in the conversation where it can
    /// be), for arguments the expectation leaves open.
    pub fn schema_value(&mut self, schema: Option<&'a Value>, path: &str) -> Option<Value> {
        if !self.enter(path) {
            return None;
        }
        let s = schema.map(|s| self.resolve(s));
        let outer = self.deep;
        let mark = self.problems.len();
        let mut candidates = Vec::new();
        let mut out = None;
        for deep in [false, true] {
            self.problems.truncate(mark);
            self.deep = deep;
            candidates = self.schema_candidates(s, path);
            for c in &candidates {
                if self.schema_ok(s, c) {
                    out = Some(c.clone());
                    break;
                }
            }
            if out.is_some() {
                break;
            }
        }
        self.deep = outer;
        if out.is_none() {
            self.problems
                .push(format!("`{path}`: found no value valid against its schema"));
            out = candidates.into_iter().next();
        }
        self.leave();
        out
    }

    fn enter(&mut self, path: &str) -> bool {
        if self.depth >= MAX_DEPTH {
            self.problems.push(format!(
                "`{path}`: nested more than {MAX_DEPTH} levels deep"
            ));
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Follow local `$ref`s (`#/$defs/...`) into the root schema.
    fn resolve(&self, mut s: &'a Value) -> &'a Value {
        for _ in 0..MAX_DEPTH {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                break;
            };
            match r.strip_prefix('#').and_then(|p| self.root.pointer(p)) {
                Some(target) => s = target,
                None => break,
            }
        }
        s
    }

    /// Whether `v` validates against `schema` (a sub-schema of the root: the root's
    /// definitions are carried along so its `$ref`s resolve). A schema that does not
    /// compile on its own is not held against the value; the whole call is validated
    /// with the tool's schema afterwards.
    fn schema_ok(&mut self, schema: Option<&'a Value>, v: &Value) -> bool {
        let Some(s) = schema else {
            return true;
        };
        let root = self.root;
        let validator = self
            .validators
            .entry(s as *const Value as usize)
            .or_insert_with(|| {
                let mut wrapped = s.clone();
                if let Value::Object(map) = &mut wrapped {
                    for key in ["$defs", "definitions"] {
                        if let Some(defs) = root.get(key)
                            && !map.contains_key(key)
                        {
                            map.insert(key.to_string(), defs.clone());
                        }
                    }
                }
                // Formats are checked here (the scorer does not), so a `date` is a date.
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .should_validate_formats(true)
                    .build(&wrapped)
                    .ok()
            });
        validator.as_ref().is_none_or(|val| val.is_valid(v))
    }

    fn matcher_candidates(&mut self, m: &Matcher, s: Option<&'a Value>, path: &str) -> Vec<Value> {
        match &m.kind {
            MatcherKind::Literal(v) => {
                let mut out = vec![v.clone()];
                out.extend(self.offered(s));
                out
            }
            MatcherKind::OneOf(options) => {
                let mut out = Vec::new();
                for o in options {
                    if !matches!(o.kind, MatcherKind::Absent) {
                        out.extend(self.matcher_candidates(o, s, path));
                    }
                }
                out
            }
            MatcherKind::Regex(re) => {
                let mut out: Vec<Value> = Vec::new();
                // Grounded first: what the conversation itself says.
                for hit in re.find_iter(&self.ground.text).take(8) {
                    out.push(Value::from(hit.as_str()));
                }
                for w in self.ground.words.iter().filter(|w| re.is_match(w)).take(8) {
                    out.push(Value::from(w.as_str()));
                }
                out.extend(self.offered(s));
                let own = samples(re.as_str(), self.seed ^ seed_of(&[path]), SAMPLES);
                out.extend(own.first().map(|x| Value::from(x.as_str())));
                let min = min_length(s);
                if let Some(a) = own.first()
                    && a.chars().count() < min
                {
                    out.push(Value::from(format!(
                        "{a}{}",
                        "x".repeat(min - a.chars().count())
                    )));
                }
                if !self.deep {
                    out.extend(self.strings(s, path).into_iter().map(Value::from));
                    return out;
                }
                // The shortest string the regex and the schema's pattern and lengths
                // accept together; then the seeded variations.
                let mut patterns = vec![(re.as_str(), m.norm.casefolds())];
                patterns.extend(pattern_of(s).map(|p| (p, false)));
                patterns.extend(format_pattern(s).map(|p| (p, false)));
                out.extend(intersect(&patterns, min, max_length(s)).map(Value::from));
                out.extend(own.iter().skip(1).map(|x| Value::from(x.as_str())));
                // Unanchored regexes and patterns both search: a concatenation of a
                // sample of each can satisfy both.
                let theirs = self.pattern_samples(s, path);
                for a in own.iter().take(4) {
                    for b in theirs.iter().take(4) {
                        out.push(Value::from(format!("{a}{b}")));
                        out.push(Value::from(format!("{b}{a}")));
                    }
                }
                out.extend(theirs.into_iter().map(Value::from));
                out.extend(self.strings(s, path).into_iter().map(Value::from));
                out
            }
            MatcherKind::Range { min, max } => self.numbers(*min, *max, s, false),
            MatcherKind::Approx { value, tolerance } => {
                let mut out: Vec<Value> = number(*value).into_iter().collect();
                out.extend(self.numbers(
                    Some(value - tolerance),
                    Some(value + tolerance),
                    s,
                    false,
                ));
                out
            }
            MatcherKind::Type(t) => {
                let mut out: Vec<Value> = self.schema_candidates(s, path);
                match t {
                    JsonType::String => {
                        out.extend(self.strings(s, path).into_iter().map(Value::from));
                    }
                    JsonType::Number => out.extend(self.numbers(None, None, s, false)),
                    JsonType::Integer => out.extend(self.numbers(None, None, s, true)),
                    JsonType::Boolean => out.extend([Value::Bool(true), Value::Bool(false)]),
                    JsonType::Array => out.push(Value::Array(Vec::new())),
                    JsonType::Object => out.push(Value::Object(Map::new())),
                    JsonType::Null => out.push(Value::Null),
                }
                out
            }
            MatcherKind::Any => {
                let mut out = self.schema_candidates(s, path);
                out.push(Value::from("x"));
                out
            }
            MatcherKind::Contains(needle) => {
                let mut out = vec![Value::from(needle.as_str())];
                out.extend(self.offered(s));
                let norm = m.norm;
                let n = norm.apply(needle).into_owned();
                for w in &self.ground.words {
                    if norm.apply(w).contains(&n) {
                        out.push(Value::from(w.as_str()));
                    }
                }
                for p in self.pattern_samples(s, path).iter().take(8) {
                    out.push(Value::from(format!("{needle}{p}")));
                    out.push(Value::from(format!("{p}{needle}")));
                }
                let min = min_length(s);
                let len = needle.chars().count();
                if len < min {
                    out.push(Value::from(format!("{needle}{}", "x".repeat(min - len))));
                }
                let escaped = regex::escape(needle);
                let mut patterns = vec![(escaped.as_str(), norm.casefolds())];
                patterns.extend(pattern_of(s).map(|p| (p, false)));
                patterns.extend(format_pattern(s).map(|p| (p, false)));
                if self.deep {
                    out.extend(intersect(&patterns, min_length(s), max_length(s)).map(Value::from));
                }
                out
            }
            MatcherKind::Object { fields, extra } => {
                vec![Value::Object(self.object(fields, *extra, s, path))]
            }
            MatcherKind::Array { items, .. } => {
                let mut list = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let sub = s.and_then(|s| item_schema(s, i));
                    if let Some(v) = self.matching(item, sub, &format!("{path}[{i}]")) {
                        list.push(v);
                    }
                }
                vec![Value::Array(list)]
            }
            MatcherKind::Absent => Vec::new(),
        }
    }

    /// Values valid against `s` as far as can be told without validating: what it
    /// offers, then values of each type it allows.
    fn schema_candidates(&mut self, s: Option<&'a Value>, path: &str) -> Vec<Value> {
        let Some(s) = s.map(|s| self.resolve(s)) else {
            return self.any_values();
        };
        match s {
            Value::Bool(true) => return self.any_values(),
            Value::Bool(false) => return Vec::new(),
            Value::Object(map) if map.is_empty() => return self.any_values(),
            _ => {}
        }
        let mut out = self.offered(Some(s));
        if s.get("const").is_some() || s.get("enum").is_some() {
            return out;
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                for b in branches {
                    if self.enter(path) {
                        out.extend(self.schema_candidates(Some(b), path));
                        self.leave();
                    }
                }
            }
        }
        for t in types_of(s) {
            match t {
                "string" => out.extend(self.strings(Some(s), path).into_iter().map(Value::from)),
                "integer" => out.extend(self.numbers(None, None, Some(s), true)),
                "number" => out.extend(self.numbers(None, None, Some(s), false)),
                "boolean" => out.extend([Value::Bool(true), Value::Bool(false)]),
                "null" => out.push(Value::Null),
                "array" => out.extend(self.arrays(s, path)),
                "object" => out.push(Value::Object(self.object(
                    &[],
                    ExtraArgs::Allow,
                    Some(s),
                    path,
                ))),
                _ => {}
            }
        }
        out
    }

    /// For a schema that allows anything: the conversation's words, then a placeholder.
    fn any_values(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .ground
            .words
            .iter()
            .take(4)
            .map(|w| Value::from(w.as_str()))
            .collect();
        out.push(Value::from("x"));
        out
    }

    /// Values the schema itself offers: `const`, `enum` (those the conversation names
    /// first), `default`, `examples`.
    fn offered(&self, s: Option<&Value>) -> Vec<Value> {
        let Some(s) = s else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(c) = s.get("const") {
            out.push(c.clone());
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            let named = |v: &Value| v.as_str().is_some_and(|x| self.ground.text.contains(x));
            out.extend(values.iter().filter(|v| named(v)).cloned());
            out.extend(values.iter().filter(|v| !named(v)).cloned());
        }
        if let Some(d) = s.get("default") {
            out.push(d.clone());
        }
        if let Some(examples) = s.get("examples").and_then(Value::as_array) {
            out.extend(examples.iter().cloned());
        }
        out
    }

    /// Samples of the schema's `pattern`: the conversation's matches first.
    fn pattern_samples(&self, s: Option<&Value>, path: &str) -> Vec<String> {
        let Some(p) = pattern_of(s) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Ok(re) = regex::Regex::new(p) {
            for hit in re.find_iter(&self.ground.text).take(8) {
                out.push(hit.as_str().to_string());
            }
        }
        // The plainest sample first; the seeded variations only once that failed.
        let n = if self.deep { SAMPLES } else { 1 };
        out.extend(samples(p, self.seed ^ seed_of(&[path, "pattern"]), n));
        out
    }

    /// String candidates for a string schema: a value of its `format`, samples of its
    /// `pattern`, the conversation's words (and their prefixes, for `maxLength`), and
    /// a placeholder as long as `minLength` asks.
    fn strings(&self, s: Option<&Value>, path: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(f) = s.and_then(|s| s.get("format")).and_then(Value::as_str)
            && let Some(v) = self.format_value(f)
        {
            out.push(v);
        }
        // The conversation's words first (grounded), then strings built for the pattern.
        out.extend(self.ground.words.iter().cloned());
        out.extend(self.pattern_samples(s, path));
        if let Some(p) = pattern_of(s) {
            let mut patterns = vec![(p, false)];
            patterns.extend(format_pattern(s).map(|p| (p, false)));
            if self.deep {
                out.extend(intersect(&patterns, min_length(s), max_length(s)));
            }
        }
        if let Some(max) = s.and_then(|s| s.get("maxLength")).and_then(Value::as_u64) {
            for w in self.ground.words.iter().take(8) {
                out.push(w.chars().take(max as usize).collect());
            }
        }
        out.push("x".repeat(min_length(s).max(1)));
        out
    }

    /// A value of a string `format`, from the conversation when it has one.
    fn format_value(&self, format: &str) -> Option<String> {
        let (pattern, fallback) = match format {
            "date" => (r"\d{4}-\d{2}-\d{2}", "2026-01-01"),
            "date-time" => (
                r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
                "2026-01-01T00:00:00Z",
            ),
            "time" => (r"\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})", "12:00:00Z"),
            "email" => (r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "user@example.com"),
            "uri" | "url" | "iri" | "uri-reference" => (r"https?://\S+", "https://example.com/"),
            "uuid" => (
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                "00000000-0000-4000-8000-000000000000",
            ),
            "ipv4" => (r"\d{1,3}(?:\.\d{1,3}){3}", "192.0.2.1"),
            "ipv6" => (r"[0-9a-fA-F:]*::[0-9a-fA-F:]*", "2001:db8::1"),
            "hostname" | "idn-hostname" => (r"[a-z0-9-]+(?:\.[a-z0-9-]+)+", "example.com"),
            "duration" => (r"P\w+", "P1D"),
            _ => return None,
        };
        let grounded = regex::Regex::new(pattern)
            .ok()
            .and_then(|re| re.find(&self.ground.text).map(|m| m.as_str().to_string()));
        Some(grounded.unwrap_or_else(|| fallback.to_string()))
    }

    /// Numbers within `[lo, hi]` and the schema's bounds (`minimum`, `maximum`, the
    /// exclusive ones, `multipleOf`; whole numbers for `integer`): the conversation's
    /// numbers first, then the bounds and points between them.
    fn numbers(
        &self,
        lo: Option<f64>,
        hi: Option<f64>,
        s: Option<&Value>,
        integer: bool,
    ) -> Vec<Value> {
        let get = |k: &str| s.and_then(|s| s.get(k)).and_then(Value::as_f64);
        let integer = integer || s.is_some_and(|s| types_of(s) == ["integer"]);
        let lo = max_opt(lo, get("minimum"));
        let hi = min_opt(hi, get("maximum"));
        let lo_ex = get("exclusiveMinimum");
        let hi_ex = get("exclusiveMaximum");
        let step = get("multipleOf").filter(|m| *m > 0.0);
        let inside = |x: f64| {
            x.is_finite()
                && lo.is_none_or(|l| x >= l)
                && hi.is_none_or(|h| x <= h)
                && lo_ex.is_none_or(|l| x > l)
                && hi_ex.is_none_or(|h| x < h)
                && (!integer || x.fract() == 0.0)
                && step.is_none_or(|m| ((x / m) - (x / m).round()).abs() < 1e-9)
        };
        let a = max_opt(lo, lo_ex);
        let b = min_opt(hi, hi_ex);
        let mut raw: Vec<f64> = self.ground.numbers.clone();
        if let Some(m) = step {
            let start = a.map_or(0.0, |a| (a / m).ceil() * m);
            raw.extend([start, start + m]);
            if let Some(b) = b {
                raw.push((b / m).floor() * m);
            }
        }
        match (a, b) {
            (Some(a), Some(b)) => {
                raw.extend([a, b, (a + b) / 2.0, a + (b - a) / 4.0]);
                raw.extend([a.ceil(), a.floor() + 1.0, b.floor(), b.ceil() - 1.0]);
                raw.push(((a + b) / 2.0).round());
            }
            (Some(a), None) => raw.extend([a, a.ceil(), a.floor() + 1.0, a + 1.0, a + 0.5]),
            (None, Some(b)) => raw.extend([b, b.floor(), b.ceil() - 1.0, b - 1.0, b - 0.5]),
            (None, None) => {}
        }
        raw.extend([1.0, 0.0]);
        let mut out: Vec<Value> = Vec::new();
        for x in raw {
            if inside(x)
                && let Some(v) = number(x)
                && !out.contains(&v)
            {
                out.push(v);
            }
        }
        out
    }

    /// Lists valid against an array schema: `minItems` elements (and one more), each
    /// from the item schema, distinct when `uniqueItems` asks.
    fn arrays(&mut self, s: &'a Value, path: &str) -> Vec<Value> {
        let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxItems")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let unique = s.get("uniqueItems") == Some(&Value::Bool(true));
        let mut out = Vec::new();
        for n in [min, min + 1] {
            if max.is_some_and(|m| n > m) || n > 64 {
                continue;
            }
            let mut list: Vec<Value> = Vec::with_capacity(n);
            for i in 0..n {
                let sub = item_schema(s, i).map(|x| self.resolve(x));
                let at = format!("{path}[{i}]");
                if !self.enter(&at) {
                    break;
                }
                let candidates = self.schema_candidates(sub, &at);
                let mut pick = None;
                for c in candidates {
                    if (!unique || !list.contains(&c)) && self.schema_ok(sub, &c) {
                        pick = Some(c);
                        break;
                    }
                }
                self.leave();
                match pick {
                    Some(v) => list.push(v),
                    None => break,
                }
            }
            if list.len() == n {
                out.push(Value::Array(list));
            }
        }
        out
    }
}

/// The schema of element `i` of an array schema (`prefixItems`, then `items`; a draft-4
/// list under `items` too).
fn item_schema(s: &Value, i: usize) -> Option<&Value> {
    if let Some(p) = s.get("prefixItems").and_then(Value::as_array)
        && let Some(x) = p.get(i)
    {
        return Some(x);
    }
    match s.get("items") {
        Some(Value::Array(list)) => list.get(i),
        other => other,
    }
}

/// The JSON types a schema allows: its `type` (null last), or what its keywords imply.
fn types_of(s: &Value) -> Vec<&str> {
    match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => {
            let mut v: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            v.sort_by_key(|t| *t == "null");
            v
        }
        _ => {
            let has = |keys: &[&str]| keys.iter().any(|k| s.get(*k).is_some());
            if has(&[
                "properties",
                "required",
                "additionalProperties",
                "minProperties",
            ]) {
                vec!["object"]
            } else if has(&[
                "items",
                "prefixItems",
                "minItems",
                "maxItems",
                "uniqueItems",
            ]) {
                vec!["array"]
            } else if has(&["pattern", "minLength", "maxLength", "format"]) {
                vec!["string"]
            } else if has(&[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ]) {
                vec!["number"]
            } else if has(&["anyOf", "oneOf", "allOf"]) {
                Vec::new()
            } else {
                vec!["string", "number", "boolean", "object", "array", "null"]
            }
        }
    }
}

/// A regex for the common string formats, so a string built to satisfy a pattern and
/// a matcher is also a well-formed date, time or address.
fn format_pattern(s: Option<&Value>) -> Option<&'static str> {
    const DATE: &str = r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])";
    const TIME: &str = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)";
    static DATE_TIME: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("^{DATE}T{TIME}$"));
    static DATE_ONLY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("^{DATE}$"));
    static TIME_ONLY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("^{TIME}$"));
    Some(match s?.get("format")?.as_str()? {
        "date" => DATE_ONLY.as_str(),
        "date-time" => DATE_TIME.as_str(),
        "time" => TIME_ONLY.as_str(),
        "email" => r"^[a-z0-9._+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$",
        "uuid" => r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        "ipv4" => {
            r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$"
        }
        "hostname" => {
            r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$"
        }
        _ => return None,
    })
}

fn pattern_of(s: Option<&Value>) -> Option<&str> {
    s.and_then(|s| s.get("pattern")).and_then(Value::as_str)
}

fn max_length(s: Option<&Value>) -> Option<usize> {
    s.and_then(|s| s.get("maxLength"))
        .and_then(Value::as_u64)
        .map(|n| n as usize)
}

fn min_length(s: Option<&Value>) -> usize {
    s.and_then(|s| s.get("minLength"))
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn min_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// A JSON number, written as an integer when it is one.
pub fn number(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(Value::from(f as i64))
    } else {
        serde_json::Number::from_f64(f).map(Value::Number)
    }
}

/// `path.key`, or `key` at the top.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}
