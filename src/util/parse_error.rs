//! Parser errors (serde-saphyr for YAML, serde_json for JSON) in plain words, with the
//! place a syntax error really starts: the `{` that was never closed, the first of two
//! duplicate keys; and the line of source text shown under an error.
//!
//! The libraries' own texts name their options and internals ("set DuplicateKeyPolicy in
//! Options", "budget breached: Depth { depth: 65 }"); none of that reaches a user.

use serde_saphyr::Error as YamlError;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::granit_parser::{Event, Parser, StructureStyle};

use super::yaml::MAX_DEPTH;

/// What kind of problem a parser error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The text is not YAML (or JSON): nothing after it can be read.
    Syntax,
    /// The document is readable but refused as a whole (too deep, duplicate keys, ...).
    Document,
    /// A value of the wrong shape for the suite model: the file is checked further.
    Shape,
}

/// A parser error as a user reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plain {
    /// What kind of problem it is.
    pub kind: Kind,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

fn plain(kind: Kind, message: impl Into<String>, hint: impl Into<String>) -> Plain {
    Plain {
        kind,
        message: message.into(),
        hint: hint.into(),
    }
}

const QUOTING: &str = "check indentation, that `-` items sit under a key, and quoting (quote text containing `: ` or starting with `{`, `[`, `*`, `&`)";

/// The YAML error `e` in plain words.
pub fn yaml(e: &YamlError) -> Plain {
    use Kind::{Document, Shape, Syntax};
    let e = e.without_snippet();
    match e {
        YamlError::AliasError { error, .. } => yaml(error),
        YamlError::Budget { breach, .. } => budget(breach),
        YamlError::AliasReplayCounterOverflow { .. }
        | YamlError::AliasReplayLimitExceeded { .. }
        | YamlError::AliasExpansionLimitExceeded { .. }
        | YamlError::AliasReplayStackDepthExceeded { .. } => plain(
            Document,
            "anchors and aliases (`&name`, `*name`) expand into too large a document",
            "write the repeated parts out, or repeat them fewer times; a suite refuses documents that grow by expansion",
        ),
        YamlError::DuplicateMappingKey { key, .. } => plain(
            Document,
            match key {
                Some(k) => format!("duplicate key `{k}`"),
                None => "duplicate key".to_string(),
            },
            "a key may appear once in a map: remove or rename one of them",
        ),
        // Shape: the full check then lists it with every other problem of the file.
        YamlError::NonFiniteFloat { value, .. } => plain(
            Shape,
            format!("numbers must be finite: `{value}` is not"),
            "write a finite number, or quote the value to make it text",
        ),
        YamlError::MultipleDocuments { .. } => plain(
            Document,
            "the file holds more than one YAML document (separated by `---`)",
            "a suite is one document: split it into several files",
        ),
        YamlError::UnknownAnchor { .. } => plain(
            Document,
            "an alias (`*name`) refers to an anchor that is not defined before it",
            "define `&name` on a value above the alias, or write the value out",
        ),
        YamlError::MergeKeyNotAllowed { .. } | YamlError::MergeValueNotMapOrSeqOfMaps { .. } => {
            plain(
                Document,
                "a merge key (`<<`) here is not usable",
                "`<<: *name` must name a map (or a list of maps); or write the keys out",
            )
        }
        YamlError::InvalidUtf8Input => plain(Document, "the file is not valid UTF-8", "save the suite as UTF-8"),
        YamlError::Eof { .. } => plain(
            Syntax,
            "the file ends in the middle of a value",
            format!("close every `{{`, `[` and quote that is opened; {QUOTING}"),
        ),
        // The parser's own guard against deep nesting (before the budget counts it).
        YamlError::ExternalMessage { msg, .. } if msg.contains("recursion limit") => plain(
            Document,
            depth_message(),
            format!("{TOO_BIG}; flatten the structure (a tool's JSON Schema rarely needs 10 levels)"),
        ),
        YamlError::ExternalMessage { msg, .. } => plain(
            Syntax,
            first_line(msg),
            format!("fix the YAML here: {QUOTING}"),
        ),
        YamlError::SerdeUnknownField { field, expected, .. } => plain(
            Shape,
            format!("unknown field `{field}`, expected one of {}", expected.join(", ")),
            match super::suggest::closest(field, expected.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? check the spelling; see docs/suite-format.md"),
                None => "check the spelling; the accepted keys are listed above and in docs/suite-format.md".into(),
            },
        ),
        YamlError::SerdeUnknownVariant { variant, expected, .. } => plain(
            Shape,
            format!("unknown value `{variant}`, expected one of {}", expected.join(", ")),
            match super::suggest::closest(variant, expected.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "check the spelling; see docs/suite-format.md".into(),
            },
        ),
        YamlError::SerdeMissingField { field, .. } => plain(
            Shape,
            format!("missing field `{field}`"),
            "add the field; see docs/suite-format.md",
        ),
        YamlError::InvalidScalar { ty, .. } => plain(
            Shape,
            format!("invalid value: expected {}", scalar_words(ty)),
            "check the value's type against docs/suite-format.md (quote text that looks like a number or boolean)",
        ),
        YamlError::InvalidBooleanStrict { .. } => plain(
            Shape,
            "invalid value: expected true or false",
            "write `true` or `false` (YAML 1.2: `yes`, `no`, `on` and `off` are text)",
        ),
        YamlError::NullIntoString { .. } => plain(
            Shape,
            "a value is missing here (empty or `null`), expected text",
            "write the text, quoted if it is empty: `\"\"`",
        ),
        YamlError::SerdeInvalidType { unexpected, expected, .. }
        | YamlError::SerdeInvalidValue { unexpected, expected, .. } => plain(
            Shape,
            format!("invalid value: expected {}, got {unexpected}", expected_words(expected)),
            "check the value's type against docs/suite-format.md (quote text that looks like a number or boolean)",
        ),
        YamlError::SerdeInvalidLength { len, expected, .. } => plain(
            Shape,
            format!("wrong number of items ({len}), expected {}", expected_words(expected)),
            "see docs/suite-format.md",
        ),
        YamlError::Unexpected { expected, .. } => plain(
            Shape,
            format!("expected {} here", unexpected_words(expected)),
            "check the value's type and indentation against docs/suite-format.md",
        ),
        YamlError::Message { msg, .. } => plain(
            Shape,
            first_line(msg),
            "check the value against docs/suite-format.md",
        ),
        other => {
            // Shapes the suite model can not produce (tags, borrowed strings, internal
            // states): the parser's first line, without its location (shown separately).
            let raw = other.to_string();
            let first = first_line(&raw);
            let cut = first.find(" at line ").map_or(first.as_str(), |i| &first[..i]);
            plain(
                Shape,
                format!("the YAML here can not be read as a suite: {cut}"),
                format!("check the value against docs/suite-format.md; {QUOTING}"),
            )
        }
    }
}

const TOO_BIG: &str = "the file is too large or too deeply nested for a suite; anchors that expand into huge documents are refused";

fn budget(breach: &BudgetBreach) -> Plain {
    let message = match breach {
        BudgetBreach::Depth { .. } => depth_message(),
        BudgetBreach::Nodes { nodes } => format!(
            "the document is too large or too deeply nested: over {} values once anchors are expanded",
            nodes.saturating_sub(1)
        ),
        BudgetBreach::Aliases { aliases } => format!(
            "the document is too large or too deeply nested: over {} aliases (`*name`)",
            aliases.saturating_sub(1)
        ),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "the document is too large or too deeply nested: {aliases} aliases (`*name`) for {anchors} anchors would expand far beyond its size"
        ),
        BudgetBreach::Documents { .. } => {
            return plain(
                Kind::Document,
                "the file holds more than one YAML document (separated by `---`)",
                "a suite is one document: split it into several files",
            );
        }
        _ => "the document is too large or too deeply nested for a suite".to_string(),
    };
    let hint = if matches!(breach, BudgetBreach::Depth { .. }) {
        format!("{TOO_BIG}; flatten the structure (a tool's JSON Schema rarely needs 10 levels)")
    } else {
        format!("{TOO_BIG}; split a big suite into files")
    };
    plain(Kind::Document, message, hint)
}

fn depth_message() -> String {
    format!("nesting deeper than {MAX_DEPTH} levels")
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

fn scalar_words(ty: &str) -> &'static str {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => {
            "a whole number"
        }
        "f32" | "f64" => "a number",
        "bool" => "true or false",
        "char" => "one character",
        _ => "another kind of value",
    }
}

/// The parser's "expected mapping start" in the suite's words.
fn unexpected_words(expected: &str) -> String {
    match expected {
        "mapping start" | "mapping" => "a map (`key: value`)".into(),
        "sequence start" | "sequence" => "a list".into(),
        "scalar" => "a single value (text, number or true/false)".into(),
        other => other.replace('_', " "),
    }
}

/// serde's "expected ..." texts in the suite's words.
fn expected_words(expected: &str) -> String {
    match expected {
        "u32" | "u64" | "usize" | "i64" => "a whole number".into(),
        "f64" => "a number".into(),
        "a string" => "text".into(),
        "a sequence" => "a list".into(),
        "a map" => "a map (`key: value`)".into(),
        "a boolean" => "true or false".into(),
        other if other.starts_with("struct ") => "a map (`key: value`)".into(),
        other if other.starts_with("enum ") || other.starts_with("variant ") => {
            "one of the names listed in docs/suite-format.md".into()
        }
        other => other.into(),
    }
}

/// The `{` or `[` (1-based line and column, and the character) that is still open at
/// `line:column`, where a YAML parser stopped: a syntax error is often noticed lines after
/// the bracket that was never closed.
pub fn unclosed_yaml(text: &str, line: u32, column: u32) -> Option<(u32, u32, char)> {
    let mut open: Vec<(u32, u32, char)> = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        let start = (span.start.line() as u32, span.start.col() as u32 + 1);
        if start >= (line, column) {
            break;
        }
        match event {
            Event::MappingStart(style, ..) => {
                open.push((start.0, start.1, flow(style, '{')));
            }
            Event::SequenceStart(style, ..) => {
                open.push((start.0, start.1, flow(style, '[')));
            }
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
            }
            _ => {}
        }
    }
    open.into_iter().rev().find(|(.., c)| *c != ' ')
}

fn flow(style: StructureStyle, bracket: char) -> char {
    match style {
        StructureStyle::Flow => bracket,
        StructureStyle::Block => ' ',
    }
}

/// Every key that appears twice in one YAML map: `(key, line, column, first_line)`.
pub fn duplicate_keys(text: &str) -> Vec<(String, u32, u32, u32)> {
    use std::collections::HashMap;
    // Per open collection: for a map, the keys seen and whether the next scalar is a key.
    enum Open {
        Map {
            seen: HashMap<String, u32>,
            key_next: bool,
        },
        Seq,
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut out = Vec::new();
    // After a value completes inside a map, the next node is a key again.
    fn value_done(stack: &mut [Open]) {
        if let Some(Open::Map { key_next, .. }) = stack.last_mut() {
            *key_next = !*key_next;
        }
    }
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        match event {
            Event::MappingStart(..) => {
                value_done(&mut stack);
                stack.push(Open::Map {
                    seen: HashMap::new(),
                    key_next: true,
                });
            }
            Event::SequenceStart(..) => {
                value_done(&mut stack);
                stack.push(Open::Seq);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            Event::Scalar(value, ..) => {
                if let Some(Open::Map { seen, key_next }) = stack.last_mut()
                    && *key_next
                {
                    let at = (span.start.line() as u32, span.start.col() as u32 + 1);
                    match seen.get(value.as_ref()) {
                        Some(first) => out.push((value.to_string(), at.0, at.1, *first)),
                        None => {
                            seen.insert(value.to_string(), at.0);
                        }
                    }
                }
                value_done(&mut stack);
            }
            Event::Alias(..) => value_done(&mut stack),
            _ => {}
        }
    }
    out
}

/// Why a tool's parameter schema is not valid JSON Schema, in plain words (jsonschema's
/// own texts speak of "any of the given schemas").
pub fn json_schema(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let path = e.instance_path().as_str();
    let key = path.rsplit('/').next().unwrap_or("");
    let value = e.instance();
    let shown = match value.as_ref() {
        serde_json::Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    };
    match e.kind() {
        K::AnyOf { .. } | K::OneOfNotValid { .. } | K::Enum { .. } if key == "type" => format!(
            "{shown} is not a JSON Schema type; types are string, number, integer, boolean, array, object and null"
        ),
        K::Type { kind } => {
            let words: Vec<String> = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect(),
            };
            let words: Vec<&str> = words
                .iter()
                .map(|t| match t.as_str() {
                    "array" => "a list",
                    "object" => "a map",
                    "string" => "text",
                    "integer" => "a whole number",
                    "number" => "a number",
                    "boolean" => "true or false",
                    _ => "another kind of value",
                })
                .collect();
            format!("`{key}` must be {}, got {shown}", words.join(" or "))
        }
        K::Enum { options } => format!("`{key}` must be one of {options}, got {shown}"),
        K::Minimum { limit } => format!("`{key}` must be at least {limit}, got {shown}"),
        K::UniqueItems => format!("`{key}` lists a value twice"),
        K::Format { format } => format!("`{key}` must be a valid {format}, got {shown}"),
        _ => format!("`{key}` has a value JSON Schema does not accept here: {shown}"),
    }
}

/// A serde_json error in plain words (its location is shown separately).
pub fn json(e: &serde_json::Error) -> Plain {
    use serde_json::error::Category;
    let raw = e.to_string();
    let msg = raw
        .rsplit_once(" at line ")
        .map_or(raw.as_str(), |(m, _)| m);
    let kind = match e.classify() {
        Category::Syntax | Category::Eof | Category::Io => Kind::Syntax,
        Category::Data => Kind::Shape,
    };
    let message = if msg == "recursion limit exceeded" {
        "nesting deeper than 128 levels".to_string()
    } else if msg.starts_with("EOF while parsing") {
        "the file ends in the middle of a value".to_string()
    } else if msg == "key must be a string" {
        "a key must be text in quotes (`\"key\": value`)".to_string()
    } else if msg.starts_with("control character") {
        "a string holds a raw control character (a tab or line break): write it as `\\t` or `\\n`"
            .to_string()
    } else {
        msg.to_string()
    };
    let hint = if kind == Kind::Syntax {
        "the file is read as JSON (it ends in .json): check commas, brackets and quotes; see docs/suite-format.md"
    } else {
        "the file is read as JSON (it ends in .json); see docs/suite-format.md"
    };
    plain(kind, message, hint)
}

/// The `{` or `[` still open at 1-based `line:column` of JSON `text`.
pub fn unclosed_json(text: &str, line: u32, column: u32) -> Option<(u32, u32, char)> {
    let mut open: Vec<(u32, u32, char)> = Vec::new();
    let (mut l, mut c) = (1u32, 0u32);
    let (mut in_string, mut escaped) = (false, false);
    for ch in text.chars() {
        if ch == '\n' {
            l += 1;
            c = 0;
        } else {
            c += 1;
        }
        if (l, c) >= (line, column) {
            break;
        }
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_string = true,
            '{' | '[' => open.push((l, c, ch)),
            '}' | ']' => {
                open.pop();
            }
            _ => {}
        }
    }
    open.pop()
}

/// The text of 1-based `line`, if it exists and is short enough to show.
pub fn source_line(text: &str, line: u32) -> Option<String> {
    if line == 0 {
        return None;
    }
    text.lines()
        .nth(line as usize - 1)
        .filter(|l| l.len() <= 400)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unclosed_bracket_is_found_where_it_opened() {
        let text = "a:\n  b: {c: 1, d: [1, 2]\n  e: 3\n";
        assert_eq!(unclosed_yaml(text, 3, 3), Some((2, 6, '{')));
        let text = "a: [1, {b: 2}\nc: 1\n";
        assert_eq!(unclosed_yaml(text, 2, 1), Some((1, 4, '[')));
        // Nothing open in flow style.
        assert_eq!(unclosed_yaml("a:\n  - 1\n", 2, 5), None);
        let json = "{\n  \"a\": [1, {\"b\": \"}\"},\n  \"c\": 1\n";
        assert_eq!(unclosed_json(json, 3, 3), Some((2, 8, '[')));
    }

    fn json_message(text: &str) -> (Kind, String) {
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let p = json(&e);
        (p.kind, p.message)
    }

    #[test]
    fn json_errors_are_plain() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            json_message(&deep),
            (Kind::Syntax, "nesting deeper than 128 levels".to_string())
        );
        assert_eq!(
            json_message("{\"a\": [1,"),
            (
                Kind::Syntax,
                "the file ends in the middle of a value".to_string()
            )
        );
        assert_eq!(
            json_message("{a: 1}"),
            (
                Kind::Syntax,
                "a key must be text in quotes (`\"key\": value`)".to_string()
            )
        );
        assert!(
            json_message("{\"a\": \"x\ty\"}")
                .1
                .starts_with("a string holds a raw control character")
        );
        // Shape errors are serde's own words about the model read (a list given a number
        // here), checked further.
        #[derive(Debug, serde::Deserialize)]
        struct File {
            #[allow(dead_code)]
            cases: Vec<String>,
        }
        let e = serde_json::from_str::<File>("{\"cases\": 5}").unwrap_err();
        assert_eq!(json(&e).kind, Kind::Shape);
    }

    #[test]
    fn yaml_budget_and_policy_errors_are_plain() {
        let yaml = |text: &str| {
            let e = serde_saphyr::from_str_with_options::<serde_json::Value>(
                text,
                crate::util::yaml::options(),
            )
            .unwrap_err();
            yaml(&e)
        };
        let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
        let p = yaml(&deep);
        assert_eq!(
            (p.kind, p.message.as_str()),
            (Kind::Document, "nesting deeper than 64 levels")
        );
        let p = yaml("a: 1\na: 2\n");
        assert_eq!(
            (p.kind, p.message.as_str()),
            (Kind::Document, "duplicate key `a`")
        );
        let p = yaml("a: .inf\n");
        assert_eq!(p.message, "numbers must be finite: `.inf` is not");
        for p in [
            p,
            yaml("a: [1, 2\n"),
            yaml("a: *nothing\n"),
            yaml("a: 1\n---\nb: 2\n"),
        ] {
            for jargon in ["Options", "Policy", "policy", "budget", "Budget", "{ "] {
                assert!(
                    !p.message.contains(jargon) && !p.hint.contains(jargon),
                    "{p:?}"
                );
            }
        }
    }

    #[test]
    fn duplicate_keys_name_both_places() {
        let text = "a: 1\nb:\n  c: 1\n  d: [x, {c: 1, c: 2}]\n  c: 3\na: 2\n";
        assert_eq!(
            duplicate_keys(text),
            vec![
                ("c".to_string(), 4, 17, 4),
                ("c".to_string(), 5, 3, 3),
                ("a".to_string(), 6, 1, 1)
            ]
        );
        // A value equal to a key is not a key.
        assert!(duplicate_keys("a: b\nb: a\n").is_empty());
    }
}
