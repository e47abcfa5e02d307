//! Decoding a BFCL model result into calls, exactly as BFCL (bfcl-eval 2026.3.23) does
//! in its `decode_ast` step, before any checking happens.
//!
//! * [`decode_fc`]: function-calling models (the OpenAI-style handlers). The result
//!   must be a list of one-key objects whose values are JSON strings, and each string
//!   goes through Python's `json.loads`, which [`python_json_loads`] reproduces.
//! * [`decode_prompt`]: prompt models (`default_decode_ast_prompting`). The text is
//!   parsed as a Python expression (`ast.parse(mode="eval")`) and each call is resolved
//!   the way BFCL's `resolve_ast_by_type` does. That keeps its quirks: positional
//!   arguments are dropped, a bare name becomes a string, a unary operator negates its
//!   operand (in strict mode), a binary operation is evaluated, and a nested call
//!   without keywords becomes its `ast.unparse` text.
//!
//! No crate parses Python, so this module has its own tokenizer, a recursive-descent
//! parser for Python 3.11 expressions, an evaluator for binary operations, an
//! `ast.unparse` port and a small big-integer type.
//!
//! # Stack use
//! Nothing here can overflow the caller's stack, even on hostile input in a debug
//! build. The JSON parser is iterative. The Python tokenizer is iterative, and from its
//! tokens an upper bound of the parser's recursion is known. Ordinary outputs are
//! parsed in place (well under 0.5 MiB of stack). Deeper ones are parsed on a scoped
//! thread with a 64 MiB reserved stack. Expression trees are bounded, so every
//! recursive walk of them is bounded too.
//!
//! # `attempt` on failure
//! [`Decoded::Failed::attempt`](Decoded::Failed) separates "tried to call a function
//! but BFCL could not decode it" from "answered in prose". BFCL scores both as "no
//! call"; toolgauge's default (non-strict) checker counts an attempt as a call on
//! irrelevance items (see `checker`).
//! * FC: the result is a list with at least one object whose first key is a non-empty
//!   string (a function name), e.g. `[{"f": "{bad json"}]` or `[{"f": {"a": 1}}]`.
//!   A text result, `[{}]` or `["x"]` is not an attempt.
//! * Prompt: the text, after BFCL's strip of `` ` ``, `\n` and space, matches
//!   `^\[?\s*NAME(\.NAME)*\(`: an optional `[`, optional whitespace, then a dotted
//!   identifier followed directly by `(`. `I can't help with that` is not an attempt.
//!
//! # Limits and known differences from BFCL
//! Limits guard against hostile input. Where they bite, decoding fails and BFCL might
//! not:
//! * More than 200 nested brackets fail, as in CPython's tokenizer (exact).
//!   Expression trees deeper than 300 fail (long operator, attribute or unary chains):
//!   BFCL's own limit there comes from Python's recursion limit and its call stack,
//!   about 300 to 350 for operator chains, about 2,500 for unary chains in positional
//!   arguments. JSON nested deeper than 900 fails (CPython: about 990).
//! * Integers beyond 32,768 bits and sequence repetitions beyond 2^20 items fail.
//! * `\N{...}` string escapes fail (no Unicode name table).
//! * Identifiers are not NFKC-normalised (CPython normalises non-ASCII names).
//! * Python strings can hold lone surrogates (`"\ud800"`); here each becomes U+FFFD.
//! * A binary operation is evaluated only over literals, containers, unary and binary
//!   operations. BFCL runs `eval`, so names from its module (builtins, constants),
//!   calls, subscripts, comparisons, conditionals, f-strings, `%` formatting and
//!   complex `**` (also a negative float to a fractional power) can succeed there and
//!   fail here.
//! * f-strings are accepted, without checking their contents, only where BFCL never
//!   looks at them (positional arguments). Anywhere else they fail, as they do in BFCL,
//!   except inside the `ast.unparse` text of a nested call, where BFCL succeeds.
//! * `repr` of non-ASCII characters follows the `regex` crate's Unicode tables, which
//!   may be newer than CPython 3.11's Unicode 14.

use std::cmp::Ordering;
use std::sync::LazyLock;

use indexmap::IndexMap;
use regex::Regex;
use serde_json::Value;

use super::value::{Decoded, PyValue};

/// Deepest JSON nesting accepted. CPython raises RecursionError at about 990, which
/// depends on its call stack. No real answer comes close.
const JSON_MAX_DEPTH: usize = 900;
/// CPython's tokenizer allows at most 200 open brackets (`MAXLEVEL`).
const MAX_BRACKETS: usize = 200;
/// Deepest expression tree accepted: above the ~200 levels that 200 brackets allow, and
/// close to where BFCL's own recursion in `ast.unparse`/`eval` gives up on long operator
/// or attribute chains (about 300 to 350). Bounding the tree keeps every recursive walk
/// of it (resolver, evaluator, unparser, drop) stack-safe.
const MAX_DEPTH: u32 = 300;
/// Deepest parser recursion accepted (each bracket level costs about two).
const MAX_PARSE_RECURSION: u32 = 1000;
/// Texts whose [`recursion_bound`] is at most this are decoded on the caller's stack
/// (well under 0.5 MiB even in debug builds); deeper ones on a thread of their own.
const SMALL_NESTING: usize = 32;
/// Stack of that thread (reserved, committed only as used). The worst accepted input
/// needs about 5 MiB in a debug build, under 1 MiB in release.
const BIG_STACK: usize = 64 << 20;
/// Largest integer handled, in bits. The decimal literal limit below is far smaller.
const MAX_INT_BITS: u64 = 1 << 15;
/// Longest sequence a repetition (`"a" * n`, `[0] * n`) may build.
const MAX_SEQ_LEN: usize = 1 << 20;
/// CPython 3.11's `sys.get_int_max_str_digits()` default, which limits decimal
/// literals, `json.loads` integers and `repr(int)`.
const INT_MAX_STR_DIGITS: usize = 4300;

type PResult<T> = Result<T, String>;

fn failed(reason: impl Into<String>, attempt: bool) -> Decoded {
    Decoded::Failed {
        reason: reason.into(),
        attempt,
    }
}

// ======================================================================================
// FC models
// ======================================================================================

/// Decodes an FC model's result (the `result` field of a BFCL result line, any JSON
/// value) the way BFCL's OpenAI-style `decode_ast` does.
///
/// BFCL iterates over the result. Each element must be an object: its first key is the
/// function name and its value must be a JSON string, parsed with `json.loads`. So:
/// * a non-empty string (a text answer), a number, a bool, `null` or a non-empty object
///   fails; `""` and `{}` iterate over nothing and give `Calls([])`;
/// * an element that is not an object, or is `{}`, fails;
/// * a value that is not a string (e.g. an object) fails, as does malformed JSON;
/// * JSON that is not an object (`"[1]"`, `"5"`) decodes to that value, which then fails
///   BFCL's shape check ([`Decoded::has_call_shape`]).
///
/// `attempt` is set on failure when the list holds at least one object whose first key
/// is a non-empty function name (see the module docs).
pub fn decode_fc(result: &Value) -> Decoded {
    let items = match result {
        Value::Array(items) => items,
        Value::String(s) if s.is_empty() => return Decoded::Calls(Vec::new()),
        Value::Object(o) if o.is_empty() => return Decoded::Calls(Vec::new()),
        Value::String(_) => return failed("the result is text, not a list of calls", false),
        // Iterating a dict yields its keys, strings without `.keys()`.
        Value::Object(_) => {
            return failed("the result is an object, not a list of calls", false);
        }
        other => {
            return failed(
                format!("the result is {}, which is not iterable", json_kind(other)),
                false,
            );
        }
    };
    let mut calls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let call = match item {
            Value::Object(obj) => match obj.iter().next() {
                None => Err(format!("element {i} is an empty object")),
                Some((name, Value::String(args))) => python_json_loads(args)
                    .map(|v| (name.clone(), v))
                    .map_err(|e| format!("arguments of `{name}` (element {i}): {e}")),
                Some((name, other)) => Err(format!(
                    "arguments of `{name}` (element {i}) are {}, not a JSON string",
                    json_kind(other)
                )),
            },
            other => Err(format!(
                "element {i} is {}, not an object",
                json_kind(other)
            )),
        };
        match call {
            Ok(call) => calls.push(call),
            Err(reason) => return failed(reason, fc_attempt(items)),
        }
    }
    Decoded::Calls(calls)
}

/// Whether a list that failed to decode still names a function somewhere.
fn fc_attempt(items: &[Value]) -> bool {
    items.iter().any(
        |item| matches!(item, Value::Object(o) if o.keys().next().is_some_and(|k| !k.is_empty())),
    )
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ======================================================================================
// json.loads
// ======================================================================================

/// Python's `json.loads(s)` (CPython 3.11's C scanner, `strict=True`) as a
/// [`PyValue`].
///
/// * `NaN`, `Infinity` and `-Infinity` are accepted.
/// * An integer is an `Int`, or `Other { type_name: "int" }` with its decimal text
///   beyond i128. More than 4,300 digits is an error, as in CPython 3.11.
/// * A number with a fraction or exponent is a `Float` (`1.0`, `1e2`); `1e400` is inf.
/// * For a duplicate key the last value wins, at the first key's position (Python's
///   dict assignment).
/// * Control characters inside strings are rejected. `\u` escapes that form a
///   surrogate pair are joined; a lone surrogate becomes U+FFFD (Rust strings cannot
///   hold it).
/// * Leading and trailing whitespace (space, tab, CR, LF) is allowed. A leading BOM is
///   an error.
///
/// Errors carry CPython's message, e.g. `Expecting value: line 1 column 1 (char 0)`.
pub fn python_json_loads(s: &str) -> Result<PyValue, String> {
    if s.starts_with('\u{feff}') {
        return Err(json_message(
            s,
            0,
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
        ));
    }
    let parser = JsonParser { b: s.as_bytes(), s };
    let start = parser.skip_ws(0);
    let parsed = parser.document(start).and_then(|(v, end)| {
        let end = parser.skip_ws(end);
        if end == s.len() {
            Ok(v)
        } else {
            Err(JsonError::Decode("Extra data", end))
        }
    });
    parsed.map_err(|e| match e {
        JsonError::Decode(msg, pos) => json_message(s, pos, msg),
        JsonError::Other(msg) => msg,
    })
}

enum JsonError {
    /// A `JSONDecodeError`: message and byte offset.
    Decode(&'static str, usize),
    /// Another exception (ValueError, RecursionError), message complete.
    Other(String),
}

/// `JSONDecodeError.__str__`: positions count characters, not bytes.
fn json_message(s: &str, byte_pos: usize, msg: &str) -> String {
    let before = &s.as_bytes()[..byte_pos.min(s.len())];
    // Count characters by their first byte, so a position inside a character is safe.
    let pos = before.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => pos - before[..nl].iter().filter(|&&b| (b & 0xC0) != 0x80).count(),
        None => pos + 1,
    };
    format!("{msg}: line {line} column {col} (char {pos})")
}

/// An array or object still open while parsing.
enum Open {
    Array(Vec<PyValue>),
    /// The entries so far and the key whose value comes next.
    Object(IndexMap<String, PyValue>, String),
}

/// What the C scanner's recursive `scan_once` does, with an explicit stack of open
/// containers instead of recursion, so nesting costs no call stack.
struct JsonParser<'a> {
    b: &'a [u8],
    s: &'a str,
}

impl JsonParser<'_> {
    fn skip_ws(&self, mut i: usize) -> usize {
        while i < self.b.len() && matches!(self.b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    /// Parses one value starting at `i`; returns it and the offset after it.
    fn document(&self, mut i: usize) -> Result<(PyValue, usize), JsonError> {
        let b = self.b;
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // A value is expected at `i`.
            let mut value = match b.get(i) {
                Some(&c @ (b'{' | b'[')) => {
                    if stack.len() >= JSON_MAX_DEPTH {
                        let what = if c == b'{' { "object" } else { "array" };
                        return Err(JsonError::Other(format!(
                            "maximum recursion depth exceeded while decoding a JSON {what} from a unicode string"
                        )));
                    }
                    i = self.skip_ws(i + 1);
                    if c == b'[' {
                        if b.get(i) == Some(&b']') {
                            i += 1;
                            PyValue::List(Vec::new())
                        } else {
                            stack.push(Open::Array(Vec::new()));
                            continue;
                        }
                    } else if b.get(i) == Some(&b'}') {
                        i += 1;
                        PyValue::Dict(Vec::new())
                    } else {
                        let (key, next) = self.key(i)?;
                        stack.push(Open::Object(IndexMap::new(), key));
                        i = next;
                        continue;
                    }
                }
                _ => {
                    let (v, next) = self.scalar(i)?;
                    i = next;
                    v
                }
            };
            // Hand the value to the innermost open container, closing containers
            // while their closing bracket follows.
            loop {
                let Some(open) = stack.last_mut() else {
                    return Ok((value, i));
                };
                i = self.skip_ws(i);
                let close = match open {
                    Open::Array(items) => {
                        items.push(value);
                        b']'
                    }
                    Open::Object(map, key) => {
                        // IndexMap keeps the first position and takes the new value,
                        // as a dict does for a repeated key.
                        map.insert(std::mem::take(key), value);
                        b'}'
                    }
                };
                if b.get(i) == Some(&close) {
                    i += 1;
                    value = match stack.pop() {
                        Some(Open::Array(items)) => PyValue::List(items),
                        Some(Open::Object(map, _)) => PyValue::Dict(
                            map.into_iter().map(|(k, v)| (PyValue::Str(k), v)).collect(),
                        ),
                        None => return Err(JsonError::Decode("Expecting value", i)),
                    };
                    continue;
                }
                if b.get(i) != Some(&b',') {
                    return Err(JsonError::Decode("Expecting ',' delimiter", i));
                }
                i = self.skip_ws(i + 1);
                if let Some(Open::Object(_, key)) = stack.last_mut() {
                    let (k, next) = self.key(i)?;
                    *key = k;
                    i = next;
                }
                break;
            }
        }
    }

    /// An object key and its `:`; returns the key and the offset of the value.
    fn key(&self, i: usize) -> Result<(String, usize), JsonError> {
        if self.b.get(i) != Some(&b'"') {
            return Err(JsonError::Decode(
                "Expecting property name enclosed in double quotes",
                i,
            ));
        }
        let (key, next) = self.string(i + 1)?;
        let i = self.skip_ws(next);
        if self.b.get(i) != Some(&b':') {
            return Err(JsonError::Decode("Expecting ':' delimiter", i));
        }
        Ok((key, self.skip_ws(i + 1)))
    }

    /// A string, constant or number at `i`.
    fn scalar(&self, i: usize) -> Result<(PyValue, usize), JsonError> {
        let Some(&c) = self.b.get(i) else {
            return Err(JsonError::Decode("Expecting value", i));
        };
        let rest = &self.b[i..];
        match c {
            b'"' => self.string(i + 1).map(|(s, end)| (PyValue::Str(s), end)),
            b'n' if rest.starts_with(b"null") => Ok((PyValue::None, i + 4)),
            b't' if rest.starts_with(b"true") => Ok((PyValue::Bool(true), i + 4)),
            b'f' if rest.starts_with(b"false") => Ok((PyValue::Bool(false), i + 5)),
            b'N' if rest.starts_with(b"NaN") => Ok((PyValue::Float(f64::NAN), i + 3)),
            b'I' if rest.starts_with(b"Infinity") => Ok((PyValue::Float(f64::INFINITY), i + 8)),
            b'-' if rest.starts_with(b"-Infinity") => {
                Ok((PyValue::Float(f64::NEG_INFINITY), i + 9))
            }
            _ => self.number(i),
        }
    }

    /// The C scanner's `_match_number_unicode`: an integer part without leading zeros,
    /// then a fraction only if a digit follows the `.`, then an exponent only if it has
    /// digits (otherwise the number ends before the `e`).
    fn number(&self, start: usize) -> Result<(PyValue, usize), JsonError> {
        let b = self.b;
        let digit = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
        let mut i = start;
        if b[i] == b'-' {
            i += 1;
        }
        match b.get(i) {
            Some(b'1'..=b'9') => {
                while digit(i) {
                    i += 1;
                }
            }
            Some(b'0') => i += 1,
            _ => return Err(JsonError::Decode("Expecting value", start)),
        }
        let mut is_float = false;
        if b.get(i) == Some(&b'.') && digit(i + 1) {
            is_float = true;
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        // The C code needs a character after the `e` and after its sign.
        if i + 1 < b.len() && matches!(b[i], b'e' | b'E') {
            let e_start = i;
            i += 1;
            if i + 1 < b.len() && matches!(b[i], b'-' | b'+') {
                i += 1;
            }
            while digit(i) {
                i += 1;
            }
            if b[i - 1].is_ascii_digit() {
                is_float = true;
            } else {
                i = e_start;
            }
        }
        let text = &self.s[start..i];
        if is_float {
            // Rust's parser is correctly rounded like CPython's and gives inf on overflow.
            let f = text.parse::<f64>().unwrap_or(f64::NAN);
            return Ok((PyValue::Float(f), i));
        }
        let digits = text.trim_start_matches('-').len();
        if digits > INT_MAX_STR_DIGITS {
            return Err(JsonError::Other(int_limit_message(digits)));
        }
        let value = match text.parse::<i128>() {
            Ok(v) => PyValue::Int(v),
            Err(_) => PyValue::Other {
                type_name: "int".into(),
                repr: text.to_string(),
            },
        };
        Ok((value, i))
    }

    /// The C scanner's `scanstring_unicode`; `start` is just after the opening quote.
    fn string(&self, start: usize) -> Result<(String, usize), JsonError> {
        let b = self.b;
        let begin = start - 1;
        let mut out = String::new();
        let mut i = start;
        loop {
            let chunk = i;
            while i < b.len() && b[i] != b'"' && b[i] != b'\\' {
                if b[i] < 0x20 {
                    return Err(JsonError::Decode("Invalid control character at", i));
                }
                i += 1;
            }
            if i >= b.len() {
                return Err(JsonError::Decode("Unterminated string starting at", begin));
            }
            // Stops only at ASCII bytes, so both ends are character boundaries.
            out.push_str(&self.s[chunk..i]);
            if b[i] == b'"' {
                return Ok((out, i + 1));
            }
            i += 1;
            let Some(&esc) = b.get(i) else {
                return Err(JsonError::Decode("Unterminated string starting at", begin));
            };
            if esc != b'u' {
                out.push(match esc {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    _ => return Err(JsonError::Decode("Invalid \\escape", i - 1)),
                });
                i += 1;
                continue;
            }
            let u_pos = i;
            let end = i + 5;
            if end >= b.len() {
                return Err(JsonError::Decode("Invalid \\uXXXX escape", u_pos));
            }
            let Some(c1) = hex4(&b[i + 1..end]) else {
                return Err(JsonError::Decode("Invalid \\uXXXX escape", u_pos));
            };
            i = end;
            if (0xD800..0xDC00).contains(&c1)
                && end + 6 < b.len()
                && b[end] == b'\\'
                && b[end + 1] == b'u'
            {
                let Some(c2) = hex4(&b[end + 2..end + 6]) else {
                    return Err(JsonError::Decode("Invalid \\uXXXX escape", end + 1));
                };
                if (0xDC00..0xE000).contains(&c2) {
                    let joined = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
                    out.push(char::from_u32(joined).unwrap_or('\u{FFFD}'));
                    i = end + 6;
                    continue;
                }
                // Not a pair: CPython re-reads the second escape on its own.
            }
            out.push(char::from_u32(c1).unwrap_or('\u{FFFD}'));
        }
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &d| {
        char::from(d).to_digit(16).map(|v| (acc << 4) | v)
    })
}

fn int_limit_message(digits: usize) -> String {
    format!(
        "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
         value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
    )
}

// ======================================================================================
// Prompt models: entry point
// ======================================================================================

/// Decodes a prompt model's text the way BFCL's `default_decode_ast_prompting` does
/// (prompt models).
///
/// 1. Strip `` ` ``, `\n` and space from both ends; add `[` and `]` where missing.
/// 2. Parse as a Python 3.11 expression. The body must be one call, or a list or tuple
///    whose elements are all calls.
/// 3. Each call gives `(dotted name, kwargs dict)`; positional arguments are dropped
///    (they must still be valid Python). A `**expr` keyword is stored under key `None`.
/// 4. Keyword values, recursively:
///    * literals: str (all quote styles, prefixes, escapes, implicit concatenation),
///      int (any base, underscores), float, True/False/None; bytes and complex become
///      [`PyValue::Other`] (`bytes`, `complex`) with their Python `repr`, ints beyond
///      i128 `Other { type_name: "int" }` with their decimal text; `...` → `"..."`;
///    * list, tuple, dict (keys must be hashable; equal keys merge as in Python);
///    * a unary operator on a literal: see `strict` below; on anything else it fails;
///    * a binary operation is evaluated (numbers, `+` and `*` on sequences, `|` on
///      dicts); any name in it fails;
///    * a bare name → its identifier as a string (`true` → `"true"`);
///    * a call with keywords → `{name: {kwargs}}`; without → its `ast.unparse` text;
///    * a subscript → `ast.unparse(value) + "[" + ast.unparse(slice) + "]"`;
///    * anything else (attribute, set, f-string, comparison, lambda, ...) fails.
///
/// `strict` reproduces BFCL's defect that every unary operator yields the negated
/// operand: `+5` → -5, `~5` → -5, `not 5` → -5, `-True` → -1, `not "x"` fails.
/// Without `strict`, the operator means what Python means (`+5` → 5, `~5` → -6,
/// `not "x"` → False). Everything else is identical in both modes, including the rule
/// that the operand must be a literal, and Python semantics inside binary operations.
///
/// On failure, `attempt` is set when the stripped text starts like a call (module docs).
pub fn decode_prompt(text: &str, strict: bool) -> Decoded {
    let stripped = text.trim_matches(|c| matches!(c, '`' | '\n' | ' '));
    match decode_prompt_text(stripped, strict) {
        Ok(calls) => Decoded::Calls(calls),
        Err(reason) => failed(reason, looks_like_call(stripped)),
    }
}

static CALL_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[?\s*[\p{XID_Start}_]\p{XID_Continue}*(?:\.[\p{XID_Start}_]\p{XID_Continue}*)*\(",
    )
    .expect("the call-start pattern is valid")
});

fn looks_like_call(stripped: &str) -> bool {
    CALL_START.is_match(stripped)
}

fn decode_prompt_text(stripped: &str, strict: bool) -> PResult<Vec<(String, PyValue)>> {
    let mut src = String::with_capacity(stripped.len() + 2);
    if !stripped.starts_with('[') {
        src.push('[');
    }
    src.push_str(stripped);
    if !src.ends_with(']') {
        src.push(']');
    }
    // `ast_parse` then strips whitespace and `'`: a no-op on text that starts with `[`
    // and ends with `]`.
    if src.contains('\0') {
        return Err("invalid Python: source code string cannot contain null bytes".into());
    }
    // CPython's tokenizer reads `\r\n` and `\r` as `\n`, inside string literals too.
    let src = if src.contains('\r') {
        src.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        src
    };
    let toks = tokenize(&src).map_err(|e| format!("invalid Python: {e}"))?;
    if recursion_bound(&toks) <= SMALL_NESTING {
        parse_and_resolve(toks, strict)
    } else {
        on_big_stack(move || parse_and_resolve(toks, strict))
    }
}

/// An upper bound on the parser's recursion for these tokens: about two levels per open
/// bracket, plus one for every token that can start a nested chain (prefix operators,
/// `**`, `else`, `lambda`...). Binary operator chains are parsed in a loop.
fn recursion_bound(toks: &[Tok]) -> usize {
    let mut depth = 0usize;
    let mut max_depth = 0;
    let mut chains = 0;
    for t in toks {
        match t {
            Tok::Op("(" | "[" | "{") => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
            Tok::Op("-" | "+" | "~" | "*" | "**") => chains += 1,
            Tok::Name(n) if matches!(n.as_str(), "not" | "else" | "lambda" | "yield" | "await") => {
                chains += 1;
            }
            _ => {}
        }
    }
    2 * (max_depth + 1) + chains
}

/// Runs `f` on a scoped thread with a [`BIG_STACK`] stack (reserved, not committed), so
/// that deeply nested input cannot overflow the caller's stack, debug builds included.
fn on_big_stack<T: Send>(f: impl FnOnce() -> PResult<T> + Send) -> PResult<T> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("bfcl-decode".into())
            .stack_size(BIG_STACK)
            .spawn_scoped(scope, f)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| Err("the decoding thread failed".into())),
            Err(e) => Err(format!("cannot start a decoding thread: {e}")),
        }
    })
}

fn parse_and_resolve(toks: Vec<Tok>, strict: bool) -> PResult<Vec<(String, PyValue)>> {
    let body = Parser::new(toks)
        .parse_eval()
        .map_err(|e| format!("invalid Python: {e}"))?;
    let calls: Vec<&Call> = match &body.kind {
        Kind::Call(call) => vec![call],
        Kind::List(elts) | Kind::Tuple(elts) => elts
            .iter()
            .map(|e| match &e.kind {
                Kind::Call(call) => Ok(&**call),
                other => Err(format!(
                    "element is not a function call but {}",
                    other.type_name()
                )),
            })
            .collect::<PResult<_>>()?,
        other => {
            return Err(format!(
                "the text is not a list of calls but {}",
                other.type_name()
            ));
        }
    };
    let resolver = Resolver { strict };
    calls
        .into_iter()
        .map(|call| {
            let (name, args) = resolver
                .call(call)
                .map_err(|e| format!("cannot decode an argument: {e}"))?;
            Ok((name, args.into_py()))
        })
        .collect()
}

// ======================================================================================
// Tokenizer
// ======================================================================================

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// An identifier or keyword.
    Name(String),
    Int(BigInt),
    Float(f64),
    /// An imaginary literal (`5j`): the imaginary part.
    Imag(f64),
    Str(StrLit),
    Op(&'static str),
    /// A logical newline outside brackets.
    Newline,
    End,
}

/// One string literal token, decoded.
#[derive(Debug, Clone, PartialEq)]
enum StrLit {
    /// A str; `u` records a `u` prefix, which `ast.unparse` writes back.
    Str {
        value: String,
        u: bool,
    },
    Bytes(Vec<u8>),
    /// An f-string (contents not kept: BFCL rejects them wherever it looks).
    FStr,
}

const OPS3: [&str; 5] = ["**=", "//=", ">>=", "<<=", "..."];
const OPS2: [&str; 19] = [
    "!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=", ":=", "<<", "<=", "==", ">=", ">>",
    "@=", "^=", "|=",
];
const OPS1: [&str; 23] = [
    "(", ")", "[", "]", "{", "}", ":", ",", ";", "+", "-", "*", "/", "|", "&", "<", ">", "=", ".",
    "%", "~", "^", "@",
];

static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[\p{XID_Start}_]\p{XID_Continue}*$").expect("the identifier pattern is valid")
});

/// Splits source text into tokens, following CPython 3.11's tokenizer: implicit line
/// joining inside brackets, `\` continuations, comments, and its error cases.
fn tokenize(src: &str) -> PResult<Vec<Tok>> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut brackets: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\x0c' => i += 1,
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' => {
                if b.get(i + 1) == Some(&b'\n') {
                    i += 2;
                } else {
                    return Err("unexpected character after line continuation character".into());
                }
            }
            b'\n' => {
                if brackets.is_empty() && toks.last() != Some(&Tok::Newline) {
                    toks.push(Tok::Newline);
                }
                i += 1;
            }
            b'0'..=b'9' => {
                let (tok, end) = lex_number(src, i)?;
                toks.push(tok);
                i = end;
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let (tok, end) = lex_number(src, i)?;
                toks.push(tok);
                i = end;
            }
            b'\'' | b'"' => {
                let (tok, end) = lex_string(src, "", i)?;
                toks.push(tok);
                i = end;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let mut j = i;
                while j < b.len() {
                    let d = b[j];
                    if d.is_ascii_alphanumeric() || d == b'_' {
                        j += 1;
                    } else if d >= 0x80 {
                        j += src[j..].chars().next().map_or(1, char::len_utf8);
                    } else {
                        break;
                    }
                }
                let word = &src[i..j];
                if matches!(b.get(j), Some(b'\'' | b'"')) && is_string_prefix(word) {
                    let (tok, end) = lex_string(src, word, j)?;
                    toks.push(tok);
                    i = end;
                    continue;
                }
                if !word.is_ascii() && !IDENTIFIER.is_match(word) {
                    return Err(format!("invalid character in identifier {word:?}"));
                }
                toks.push(Tok::Name(word.to_string()));
                i = j;
            }
            b'(' | b'[' | b'{' => {
                if brackets.len() >= MAX_BRACKETS {
                    return Err("too many nested parentheses".into());
                }
                brackets.push(c);
                toks.push(Tok::Op(bracket(c)));
                i += 1;
            }
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match brackets.pop() {
                    None => return Err(format!("unmatched '{}'", c as char)),
                    Some(o) if o != open => {
                        return Err(format!(
                            "closing parenthesis '{}' does not match opening parenthesis '{}'",
                            c as char, o as char
                        ));
                    }
                    Some(_) => {}
                }
                toks.push(Tok::Op(bracket(c)));
                i += 1;
            }
            _ => {
                let rest = &b[i..];
                let op = OPS3
                    .iter()
                    .chain(OPS2.iter())
                    .chain(OPS1.iter())
                    .find(|o| rest.starts_with(o.as_bytes()));
                match op {
                    Some(op) => {
                        toks.push(Tok::Op(op));
                        i += op.len();
                    }
                    None => {
                        let ch = src[i..].chars().next().unwrap_or('?');
                        return Err(format!("invalid character {ch:?}"));
                    }
                }
            }
        }
    }
    if let Some(&open) = brackets.last() {
        return Err(format!("'{}' was never closed", open as char));
    }
    if toks.last() != Some(&Tok::Newline) {
        toks.push(Tok::Newline);
    }
    toks.push(Tok::End);
    Ok(toks)
}

fn bracket(c: u8) -> &'static str {
    match c {
        b'(' => "(",
        b')' => ")",
        b'[' => "[",
        b']' => "]",
        b'{' => "{",
        _ => "}",
    }
}

fn is_string_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "f" | "b" | "br" | "rb" | "fr" | "rf"
    )
}

/// CPython's `verify_end_of_number`: a number may touch a following keyword that can
/// legally follow it (`1if x else 2`), but not another identifier character.
fn verify_end_of_number(b: &[u8], i: usize, kind: &str) -> PResult<()> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let rest = b.get(i + 1..).unwrap_or(&[]);
    let keyword_follows = match at(i) {
        b'a' => rest.starts_with(b"nd"),
        b'e' => rest.starts_with(b"lse"),
        b'f' => rest.starts_with(b"or"),
        b'i' => matches!(at(i + 1), b'f' | b'n' | b's'),
        b'o' => rest.starts_with(b"r"),
        b'n' => rest.starts_with(b"ot"),
        _ => false,
    };
    let c = at(i);
    if !keyword_follows && (c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80) {
        return Err(format!("invalid {kind} literal"));
    }
    Ok(())
}

/// Digits with single underscores between them; `i` is at a digit.
fn decimal_tail(b: &[u8], mut i: usize) -> PResult<usize> {
    loop {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if b.get(i) != Some(&b'_') {
            return Ok(i);
        }
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return Err("invalid decimal literal".into());
        }
    }
}

/// A number token, following CPython 3.11's tokenizer state by state.
fn lex_number(src: &str, start: usize) -> PResult<(Tok, usize)> {
    let b = src.as_bytes();
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let mut i = start;
    if at(i) == b'0' && matches!(at(i + 1) | 0x20, b'x' | b'o' | b'b') {
        let (radix, kind) = match at(i + 1) | 0x20 {
            b'x' => (16, "hexadecimal"),
            b'o' => (8, "octal"),
            _ => (2, "binary"),
        };
        let is_digit = |c: u8| char::from(c).is_digit(radix);
        i += 2;
        let mut digits = String::new();
        loop {
            if at(i) == b'_' {
                i += 1;
            }
            if !is_digit(at(i)) {
                if radix != 16 && at(i).is_ascii_digit() {
                    return Err(format!(
                        "invalid digit '{}' in {kind} literal",
                        at(i) as char
                    ));
                }
                return Err(format!("invalid {kind} literal"));
            }
            while is_digit(at(i)) {
                digits.push(at(i) as char);
                i += 1;
            }
            if at(i) != b'_' {
                break;
            }
        }
        if radix != 16 && at(i).is_ascii_digit() {
            return Err(format!(
                "invalid digit '{}' in {kind} literal",
                at(i) as char
            ));
        }
        verify_end_of_number(b, i, kind)?;
        return Ok((Tok::Int(BigInt::from_radix(&digits, radix)?), i));
    }

    let mut is_int = true;
    if at(i) == b'.' {
        is_int = false;
        i = decimal_tail(b, i + 1)?;
    } else if at(i) == b'0' {
        // Zeros only (with underscores) are an int; other digits after a leading zero
        // are allowed only in floats and imaginary literals.
        i += 1;
        loop {
            if at(i) == b'_' {
                i += 1;
                if !at(i).is_ascii_digit() {
                    return Err("invalid decimal literal".into());
                }
            }
            if at(i) != b'0' {
                break;
            }
            i += 1;
        }
        let nonzero = at(i).is_ascii_digit();
        if nonzero {
            i = decimal_tail(b, i)?;
        }
        match at(i) {
            b'.' => {
                is_int = false;
                i += 1;
                if at(i).is_ascii_digit() {
                    i = decimal_tail(b, i)?;
                }
            }
            b'e' | b'E' | b'j' | b'J' => {}
            _ if nonzero => {
                return Err(
                    "leading zeros in decimal integer literals are not permitted; \
                            use an 0o prefix for octal integers"
                        .into(),
                );
            }
            _ => {
                verify_end_of_number(b, i, "decimal")?;
                return Ok((Tok::Int(BigInt::default()), i));
            }
        }
    } else {
        i = decimal_tail(b, i)?;
        if at(i) == b'.' {
            is_int = false;
            i += 1;
            if at(i).is_ascii_digit() {
                i = decimal_tail(b, i)?;
            }
        }
    }
    if matches!(at(i), b'e' | b'E') {
        let e = i;
        i += 1;
        if matches!(at(i), b'+' | b'-') {
            i += 1;
            if !at(i).is_ascii_digit() {
                return Err("invalid decimal literal".into());
            }
        } else if !at(i).is_ascii_digit() {
            // `1else`: the number ends before the `e`; `1e` alone is an error.
            verify_end_of_number(b, e, "decimal")?;
            return number_token(&src[start..e], is_int, false).map(|t| (t, e));
        }
        i = decimal_tail(b, i)?;
        is_int = false;
    }
    if matches!(at(i), b'j' | b'J') {
        verify_end_of_number(b, i + 1, "imaginary")?;
        return number_token(&src[start..i], false, true).map(|t| (t, i + 1));
    }
    verify_end_of_number(b, i, "decimal")?;
    number_token(&src[start..i], is_int, false).map(|t| (t, i))
}

fn number_token(text: &str, is_int: bool, imag: bool) -> PResult<Tok> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    if is_int {
        if clean.len() > INT_MAX_STR_DIGITS {
            return Err(int_limit_message(clean.len()));
        }
        return BigInt::from_radix(&clean, 10).map(Tok::Int);
    }
    // Rust accepts every form the tokenizer lets through (`5.`, `.5`, `1.e5`).
    let f = clean
        .parse::<f64>()
        .map_err(|_| format!("invalid number {text:?}"))?;
    Ok(if imag { Tok::Imag(f) } else { Tok::Float(f) })
}

/// A string literal starting at the quote at `q`, with `prefix` before it.
fn lex_string(src: &str, prefix: &str, q: usize) -> PResult<(Tok, usize)> {
    let b = src.as_bytes();
    let quote = b[q];
    let triple = b.get(q + 1) == Some(&quote) && b.get(q + 2) == Some(&quote);
    let body_start = if triple { q + 3 } else { q + 1 };
    let mut i = body_start;
    let body_end;
    loop {
        let Some(&c) = b.get(i) else {
            return Err(if triple {
                "unterminated triple-quoted string literal".into()
            } else {
                "unterminated string literal".into()
            });
        };
        if c == b'\\' {
            // A backslash always takes the next character, in raw strings too. The next
            // character may be multi-byte; its continuation bytes never match below.
            if i + 1 >= b.len() {
                return Err("unterminated string literal".into());
            }
            i += 2;
            continue;
        }
        if c == b'\n' && !triple {
            return Err("unterminated string literal".into());
        }
        if c == quote {
            if !triple {
                body_end = i;
                i += 1;
                break;
            }
            if b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote) {
                body_end = i;
                i += 3;
                break;
            }
        }
        i += 1;
    }
    let body = &src[body_start..body_end];
    let p = prefix.to_ascii_lowercase();
    let raw = p.contains('r');
    let lit = if p.contains('f') {
        StrLit::FStr
    } else if p.contains('b') {
        if !body.is_ascii() {
            return Err("bytes can only contain ASCII literal characters".into());
        }
        StrLit::Bytes(if raw {
            body.as_bytes().to_vec()
        } else {
            decode_bytes_escapes(body)?
        })
    } else {
        StrLit::Str {
            value: if raw {
                body.to_string()
            } else {
                decode_str_escapes(body)?
            },
            u: p == "u",
        }
    };
    Ok((Tok::Str(lit), i))
}

/// Reads up to `max` digits of `radix` from `chars`; returns the value and count.
fn take_digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
) -> (u32, usize) {
    let mut value = 0u32;
    let mut n = 0;
    while n < max {
        match chars.peek().and_then(|c| c.to_digit(radix)) {
            Some(d) => {
                value = value.wrapping_mul(radix).wrapping_add(d);
                chars.next();
                n += 1;
            }
            None => break,
        }
    }
    (value, n)
}

/// Escapes in a non-raw str literal (CPython's `unicode_escape` decoder).
fn decode_str_escapes(body: &str) -> PResult<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let (rest, n) = take_digits(&mut chars, 8, 2);
                let first = e.to_digit(8).unwrap_or(0);
                let value = first * 8u32.pow(n as u32) + rest;
                // At most 0o777, always a valid scalar value.
                out.push(char::from_u32(value).unwrap_or('\u{FFFD}'));
            }
            'x' | 'u' | 'U' => {
                let (len, name) = match e {
                    'x' => (2, "\\xXX"),
                    'u' => (4, "\\uXXXX"),
                    _ => (8, "\\UXXXXXXXX"),
                };
                let (value, n) = take_digits(&mut chars, 16, len);
                if n < len {
                    return Err(format!("(unicode error) truncated {name} escape"));
                }
                if value > 0x10FFFF {
                    return Err("(unicode error) illegal Unicode character".into());
                }
                // A surrogate is a valid Python str character but not a Rust char.
                out.push(char::from_u32(value).unwrap_or('\u{FFFD}'));
            }
            'N' => return Err("\\N{...} escapes are not supported".into()),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// Escapes in a non-raw bytes literal (CPython's `_PyBytes_DecodeEscape`).
fn decode_bytes_escapes(body: &str) -> PResult<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c as u8);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push(b'\\');
            break;
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e as u8),
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(11),
            '0'..='7' => {
                let (rest, n) = take_digits(&mut chars, 8, 2);
                let first = e.to_digit(8).unwrap_or(0);
                // CPython keeps the low byte of escapes above 0o377.
                out.push(((first * 8u32.pow(n as u32) + rest) & 0xFF) as u8);
            }
            'x' => {
                let (value, n) = take_digits(&mut chars, 16, 2);
                if n < 2 {
                    return Err("invalid \\x escape".into());
                }
                out.push(value as u8);
            }
            other => {
                out.push(b'\\');
                out.push(other as u8);
            }
        }
    }
    Ok(out)
}

// ======================================================================================
// Syntax tree
// ======================================================================================

/// An expression node, with the depth of its subtree (bounded by [`MAX_DEPTH`], so every
/// recursive walk, and dropping the tree, is stack-safe).
#[derive(Debug)]
struct Expr {
    kind: Kind,
    depth: u32,
}

#[derive(Debug)]
enum Kind {
    Const(Const),
    /// `JoinedStr`.
    FStr,
    Name(String),
    Attribute(Box<Expr>, String),
    Subscript(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Call>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    /// A `None` key is a `**mapping` entry.
    Dict(Vec<(Option<Expr>, Expr)>),
    Unary(UnOp, Box<Expr>),
    Bin(Box<Expr>, BinOp, Box<Expr>),
    /// `true` for `and`.
    BoolOp(bool, Vec<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// body, test, orelse.
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    Lambda(Box<Lambda>),
    Starred(Box<Expr>),
    NamedExpr(String, Box<Expr>),
    Comp(Box<Comp>),
    Await(Box<Expr>),
    Yield(Option<Box<Expr>>),
    YieldFrom(Box<Expr>),
}

#[derive(Debug)]
enum Const {
    None,
    Bool(bool),
    Ellipsis,
    Int(BigInt),
    Float(f64),
    Imag(f64),
    Str { value: String, u: bool },
    Bytes(Vec<u8>),
}

#[derive(Debug)]
struct Call {
    func: Expr,
    args: Vec<Expr>,
    /// `None` name: `**mapping`.
    keywords: Vec<(Option<String>, Expr)>,
}

#[derive(Debug, Default)]
struct Lambda {
    posonly: Vec<(String, Option<Expr>)>,
    args: Vec<(String, Option<Expr>)>,
    vararg: Option<String>,
    kwonly: Vec<(String, Option<Expr>)>,
    kwarg: Option<String>,
    body: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CompKind {
    List,
    Set,
    Gen,
    Dict,
}

#[derive(Debug)]
struct Comp {
    kind: CompKind,
    elt: Expr,
    /// The value of a dict comprehension.
    value: Option<Expr>,
    generators: Vec<Generator>,
}

#[derive(Debug)]
struct Generator {
    target: Expr,
    iter: Expr,
    ifs: Vec<Expr>,
    is_async: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum UnOp {
    Not,
    Neg,
    Pos,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum BinOp {
    Add,
    Sub,
    Mult,
    MatMult,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitOr,
    BitXor,
    BitAnd,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

impl Kind {
    /// The `ast` class name, for messages.
    fn type_name(&self) -> &'static str {
        match self {
            Kind::Const(_) => "Constant",
            Kind::FStr => "JoinedStr",
            Kind::Name(_) => "Name",
            Kind::Attribute(..) => "Attribute",
            Kind::Subscript(..) => "Subscript",
            Kind::Slice(..) => "Slice",
            Kind::Call(_) => "Call",
            Kind::List(_) => "List",
            Kind::Tuple(_) => "Tuple",
            Kind::Set(_) => "Set",
            Kind::Dict(_) => "Dict",
            Kind::Unary(..) => "UnaryOp",
            Kind::Bin(..) => "BinOp",
            Kind::BoolOp(..) => "BoolOp",
            Kind::Compare(..) => "Compare",
            Kind::IfExp(..) => "IfExp",
            Kind::Lambda(_) => "Lambda",
            Kind::Starred(_) => "Starred",
            Kind::NamedExpr(..) => "NamedExpr",
            Kind::Comp(c) => match c.kind {
                CompKind::List => "ListComp",
                CompKind::Set => "SetComp",
                CompKind::Gen => "GeneratorExp",
                CompKind::Dict => "DictComp",
            },
            Kind::Await(_) => "Await",
            Kind::Yield(_) => "Yield",
            Kind::YieldFrom(_) => "YieldFrom",
        }
    }

    /// Depth of the deepest child (0 for a leaf).
    fn child_depth(&self) -> u32 {
        fn d(e: &Expr) -> u32 {
            e.depth
        }
        fn od(e: &Option<Box<Expr>>) -> u32 {
            e.as_deref().map_or(0, d)
        }
        fn all<'a>(it: impl IntoIterator<Item = &'a Expr>) -> u32 {
            it.into_iter().map(d).max().unwrap_or(0)
        }
        match self {
            Kind::Const(_) | Kind::FStr | Kind::Name(_) => 0,
            Kind::Attribute(v, _)
            | Kind::Unary(_, v)
            | Kind::Starred(v)
            | Kind::NamedExpr(_, v)
            | Kind::Await(v)
            | Kind::YieldFrom(v) => d(v),
            Kind::Yield(v) => od(v),
            Kind::Subscript(a, b) | Kind::Bin(a, _, b) => d(a).max(d(b)),
            Kind::Slice(a, b, c) => od(a).max(od(b)).max(od(c)),
            Kind::Call(c) => d(&c.func)
                .max(all(&c.args))
                .max(all(c.keywords.iter().map(|(_, v)| v))),
            Kind::List(v) | Kind::Tuple(v) | Kind::Set(v) | Kind::BoolOp(_, v) => all(v),
            Kind::Dict(items) => items
                .iter()
                .map(|(k, v)| k.as_ref().map_or(0, d).max(d(v)))
                .max()
                .unwrap_or(0),
            Kind::Compare(l, rest) => d(l).max(all(rest.iter().map(|(_, e)| e))),
            Kind::IfExp(a, b, c) => d(a).max(d(b)).max(d(c)),
            Kind::Lambda(l) => {
                let params = l.posonly.iter().chain(&l.args).chain(&l.kwonly);
                all(params.filter_map(|(_, v)| v.as_ref())).max(l.body.as_ref().map_or(0, d))
            }
            Kind::Comp(c) => {
                let gens = c
                    .generators
                    .iter()
                    .map(|g| d(&g.target).max(d(&g.iter)).max(all(&g.ifs)));
                d(&c.elt)
                    .max(c.value.as_ref().map_or(0, d))
                    .max(gens.max().unwrap_or(0))
            }
        }
    }
}

/// Builds a node, refusing trees deeper than [`MAX_DEPTH`].
fn node(kind: Kind) -> PResult<Expr> {
    let depth = kind.child_depth() + 1;
    if depth > MAX_DEPTH {
        return Err("expression nested too deeply".into());
    }
    Ok(Expr { kind, depth })
}

// ======================================================================================
// Parser (Python 3.11 expression grammar)
// ======================================================================================

/// Binding powers for the operator-precedence part of the grammar (`disjunction`).
const BP_OR: u8 = 1;
const BP_AND: u8 = 2;
const BP_NOT: u8 = 3;
const BP_CMP: u8 = 4;
const BP_BOR: u8 = 5;
const BP_FACTOR: u8 = 11;

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

enum Infix {
    Or,
    And,
    Cmp,
    Bin(BinOp),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Current recursion depth of the parse functions.
    rec: u32,
}

const SYNTAX: &str = "invalid syntax";

impl Parser {
    fn new(toks: Vec<Tok>) -> Self {
        Parser {
            toks,
            pos: 0,
            rec: 0,
        }
    }

    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).unwrap_or(&Tok::End)
    }

    fn peek2(&self) -> &Tok {
        self.toks.get(self.pos + 1).unwrap_or(&Tok::End)
    }

    /// Takes the current token (each is read once, so it is moved out).
    fn bump(&mut self) -> Tok {
        match self.toks.get_mut(self.pos) {
            Some(t) if *t != Tok::End => {
                self.pos += 1;
                std::mem::replace(t, Tok::Newline)
            }
            _ => Tok::End,
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let hit = self.is_op(op);
        if hit {
            self.bump();
        }
        hit
    }

    fn expect_op(&mut self, op: &str) -> PResult<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("{SYNTAX}: expected '{op}'"))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.is_kw(kw) {
            self.bump();
            Ok(())
        } else {
            Err(format!("{SYNTAX}: expected '{kw}'"))
        }
    }

    /// A name that is not a keyword.
    fn expect_name(&mut self) -> PResult<String> {
        match self.peek() {
            Tok::Name(n) if !is_keyword(n) => match self.bump() {
                Tok::Name(n) => Ok(n),
                _ => Err(SYNTAX.into()),
            },
            _ => Err(format!("{SYNTAX}: expected a name")),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.rec += 1;
        if self.rec > MAX_PARSE_RECURSION {
            return Err("expression nested too deeply".into());
        }
        Ok(())
    }

    /// `eval_input: expressions NEWLINE* ENDMARKER`.
    fn parse_eval(&mut self) -> PResult<Expr> {
        let body = self.expressions()?;
        while *self.peek() == Tok::Newline {
            self.bump();
        }
        if *self.peek() != Tok::End {
            return Err(SYNTAX.into());
        }
        Ok(body)
    }

    /// `expressions: expression (',' expression)* [',']`.
    fn expressions(&mut self) -> PResult<Expr> {
        let first = self.test()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut elts = vec![first];
        while self.eat_op(",") {
            if matches!(self.peek(), Tok::Newline | Tok::End) {
                break;
            }
            elts.push(self.test()?);
        }
        node(Kind::Tuple(elts))
    }

    /// `expression`: a conditional expression, a lambda or a disjunction.
    fn test(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.test_inner();
        self.rec -= 1;
        r
    }

    fn test_inner(&mut self) -> PResult<Expr> {
        if self.is_kw("lambda") {
            return self.lambda();
        }
        let body = self.expr_bp(BP_OR)?;
        if !self.is_kw("if") {
            return Ok(body);
        }
        self.bump();
        let cond = self.expr_bp(BP_OR)?;
        self.expect_kw("else")?;
        let orelse = self.test()?;
        node(Kind::IfExp(
            Box::new(body),
            Box::new(cond),
            Box::new(orelse),
        ))
    }

    /// `named_expression`: `NAME := expression` or an expression.
    fn named_expression(&mut self) -> PResult<Expr> {
        if matches!(self.peek(), Tok::Name(n) if !is_keyword(n))
            && matches!(self.peek2(), Tok::Op(":="))
        {
            let name = self.expect_name()?;
            self.bump();
            let value = self.test()?;
            return node(Kind::NamedExpr(name, Box::new(value)));
        }
        let e = self.test()?;
        if self.is_op(":=") {
            return Err(format!(
                "cannot use assignment expressions with {}",
                e.kind.type_name()
            ));
        }
        Ok(e)
    }

    /// `star_named_expression: '*' bitwise_or | named_expression`.
    fn star_named_expression(&mut self) -> PResult<Expr> {
        if self.eat_op("*") {
            let value = self.expr_bp(BP_BOR)?;
            return node(Kind::Starred(Box::new(value)));
        }
        self.named_expression()
    }

    fn infix(&self) -> Option<(u8, Infix)> {
        let bin = |bp, op| Some((bp, Infix::Bin(op)));
        match self.peek() {
            Tok::Name(n) => match n.as_str() {
                "or" => Some((BP_OR, Infix::Or)),
                "and" => Some((BP_AND, Infix::And)),
                "in" | "is" => Some((BP_CMP, Infix::Cmp)),
                "not" if matches!(self.peek2(), Tok::Name(m) if m == "in") => {
                    Some((BP_CMP, Infix::Cmp))
                }
                _ => None,
            },
            Tok::Op(op) => match *op {
                "<" | ">" | "==" | ">=" | "<=" | "!=" => Some((BP_CMP, Infix::Cmp)),
                "|" => bin(5, BinOp::BitOr),
                "^" => bin(6, BinOp::BitXor),
                "&" => bin(7, BinOp::BitAnd),
                "<<" => bin(8, BinOp::LShift),
                ">>" => bin(8, BinOp::RShift),
                "+" => bin(9, BinOp::Add),
                "-" => bin(9, BinOp::Sub),
                "*" => bin(10, BinOp::Mult),
                "/" => bin(10, BinOp::Div),
                "//" => bin(10, BinOp::FloorDiv),
                "%" => bin(10, BinOp::Mod),
                "@" => bin(10, BinOp::MatMult),
                "**" => bin(12, BinOp::Pow),
                _ => None,
            },
            _ => None,
        }
    }

    /// Consumes a comparison operator if one is next.
    fn cmp_op(&mut self) -> Option<CmpOp> {
        let op = match self.peek() {
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::NotEq,
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::LtE,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::GtE,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "not" && matches!(self.peek2(), Tok::Name(m) if m == "in") => {
                self.bump();
                CmpOp::NotIn
            }
            Tok::Name(n) if n == "is" => {
                if matches!(self.peek2(), Tok::Name(m) if m == "not") {
                    self.bump();
                    CmpOp::IsNot
                } else {
                    CmpOp::Is
                }
            }
            _ => return None,
        };
        self.bump();
        Some(op)
    }

    /// Operator-precedence parsing from `disjunction` down to `power`, one function
    /// instead of one per grammar level, so deep nesting uses less stack.
    fn expr_bp(&mut self, min: u8) -> PResult<Expr> {
        self.enter()?;
        let r = self.expr_bp_inner(min);
        self.rec -= 1;
        r
    }

    fn expr_bp_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut left = if self.is_kw("not") {
            // `not` is an inversion: it cannot be an operand of a tighter operator.
            if min > BP_NOT {
                return Err(SYNTAX.into());
            }
            self.bump();
            let operand = self.expr_bp(BP_NOT)?;
            node(Kind::Unary(UnOp::Not, Box::new(operand)))?
        } else if let Tok::Op(op @ ("-" | "+" | "~")) = *self.peek() {
            let op = match op {
                "-" => UnOp::Neg,
                "+" => UnOp::Pos,
                _ => UnOp::Invert,
            };
            self.bump();
            let operand = self.expr_bp(BP_FACTOR)?;
            node(Kind::Unary(op, Box::new(operand)))?
        } else {
            self.await_primary()?
        };
        while let Some((bp, infix)) = self.infix() {
            if bp < min {
                break;
            }
            left = match infix {
                Infix::Or | Infix::And => {
                    let word = if matches!(infix, Infix::And) {
                        "and"
                    } else {
                        "or"
                    };
                    let mut values = vec![left];
                    while self.is_kw(word) {
                        self.bump();
                        values.push(self.expr_bp(bp + 1)?);
                    }
                    node(Kind::BoolOp(matches!(infix, Infix::And), values))?
                }
                Infix::Cmp => {
                    let mut rest = Vec::new();
                    while let Some(op) = self.cmp_op() {
                        rest.push((op, self.expr_bp(BP_CMP + 1)?));
                    }
                    node(Kind::Compare(Box::new(left), rest))?
                }
                Infix::Bin(op) => {
                    self.bump();
                    // `**` binds its right operand as a factor (`2 ** -1`).
                    let right_bp = if op == BinOp::Pow { BP_FACTOR } else { bp + 1 };
                    let right = self.expr_bp(right_bp)?;
                    node(Kind::Bin(Box::new(left), op, Box::new(right)))?
                }
            };
        }
        Ok(left)
    }

    fn await_primary(&mut self) -> PResult<Expr> {
        if self.is_kw("await") {
            self.bump();
            let value = self.primary()?;
            return node(Kind::Await(Box::new(value)));
        }
        self.primary()
    }

    /// An atom followed by `.name`, `(args)` and `[slices]` trailers.
    fn primary(&mut self) -> PResult<Expr> {
        let mut e = self.atom()?;
        loop {
            if self.eat_op(".") {
                let name = self.expect_name()?;
                e = node(Kind::Attribute(Box::new(e), name))?;
            } else if self.eat_op("(") {
                e = self.call(e)?;
            } else if self.eat_op("[") {
                let slice = self.slices()?;
                self.expect_op("]")?;
                e = node(Kind::Subscript(Box::new(e), Box::new(slice)))?;
            } else {
                return Ok(e);
            }
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Str(_) => return self.strings(),
            Tok::Name(n) if is_keyword(n) && !matches!(n.as_str(), "True" | "False" | "None") => {
                return Err(format!("{SYNTAX}: unexpected '{n}'"));
            }
            _ => {}
        }
        match self.bump() {
            Tok::Name(n) => node(match n.as_str() {
                "True" => Kind::Const(Const::Bool(true)),
                "False" => Kind::Const(Const::Bool(false)),
                "None" => Kind::Const(Const::None),
                _ => Kind::Name(n),
            }),
            Tok::Int(v) => node(Kind::Const(Const::Int(v))),
            Tok::Float(f) => node(Kind::Const(Const::Float(f))),
            Tok::Imag(f) => node(Kind::Const(Const::Imag(f))),
            Tok::Op("...") => node(Kind::Const(Const::Ellipsis)),
            Tok::Op("(") => self.paren_atom(),
            Tok::Op("[") => self.list_atom(),
            Tok::Op("{") => self.brace_atom(),
            _ => Err(SYNTAX.into()),
        }
    }

    /// Adjacent string literals are one constant (or one f-string).
    fn strings(&mut self) -> PResult<Expr> {
        let mut parts = Vec::new();
        while let Tok::Str(_) = self.peek() {
            if let Tok::Str(lit) = self.bump() {
                parts.push(lit);
            }
        }
        let bytes = parts
            .iter()
            .filter(|p| matches!(p, StrLit::Bytes(_)))
            .count();
        if bytes != 0 && bytes != parts.len() {
            return Err("cannot mix bytes and nonbytes literals".into());
        }
        if parts.iter().any(|p| matches!(p, StrLit::FStr)) {
            return node(Kind::FStr);
        }
        if bytes != 0 {
            let mut all = Vec::new();
            for p in parts {
                if let StrLit::Bytes(b) = p {
                    all.extend(b);
                }
            }
            return node(Kind::Const(Const::Bytes(all)));
        }
        // `ast` records the `u` prefix of the first piece only.
        let u = matches!(parts.first(), Some(StrLit::Str { u: true, .. }));
        let mut value = String::new();
        for p in parts {
            if let StrLit::Str { value: v, .. } = p {
                value.push_str(&v);
            }
        }
        node(Kind::Const(Const::Str { value, u }))
    }

    fn is_comp_for(&self) -> bool {
        self.is_kw("for")
            || (self.is_kw("async") && matches!(self.peek2(), Tok::Name(n) if n == "for"))
    }

    fn comp(&mut self, kind: CompKind, elt: Expr, value: Option<Expr>) -> PResult<Expr> {
        if matches!(elt.kind, Kind::Starred(_)) {
            return Err("iterable unpacking cannot be used in comprehension".into());
        }
        let mut generators = Vec::new();
        while self.is_comp_for() {
            let is_async = self.is_kw("async");
            if is_async {
                self.bump();
            }
            self.bump();
            let target = self.targets()?;
            self.expect_kw("in")?;
            let iter = self.expr_bp(BP_OR)?;
            let mut ifs = Vec::new();
            while self.is_kw("if") {
                self.bump();
                ifs.push(self.expr_bp(BP_OR)?);
            }
            generators.push(Generator {
                target,
                iter,
                ifs,
                is_async,
            });
        }
        node(Kind::Comp(Box::new(Comp {
            kind,
            elt,
            value,
            generators,
        })))
    }

    /// `star_targets` of a `for` clause.
    fn targets(&mut self) -> PResult<Expr> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            let t = if self.eat_op("*") {
                let v = self.expr_bp(BP_BOR)?;
                node(Kind::Starred(Box::new(v)))?
            } else {
                self.expr_bp(BP_BOR)?
            };
            check_target(&t)?;
            items.push(t);
            if !self.eat_op(",") {
                break;
            }
            comma = true;
            if self.is_kw("in") {
                break;
            }
        }
        if !comma && items.len() == 1 {
            return items.pop().ok_or_else(|| SYNTAX.to_string());
        }
        node(Kind::Tuple(items))
    }

    fn paren_atom(&mut self) -> PResult<Expr> {
        if self.eat_op(")") {
            return node(Kind::Tuple(Vec::new()));
        }
        if self.is_kw("yield") {
            let y = self.yield_expr()?;
            self.expect_op(")")?;
            return Ok(y);
        }
        let first = self.star_named_expression()?;
        if self.is_comp_for() {
            let g = self.comp(CompKind::Gen, first, None)?;
            self.expect_op(")")?;
            return Ok(g);
        }
        if self.eat_op(",") {
            let mut elts = vec![first];
            while !self.is_op(")") {
                elts.push(self.star_named_expression()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
            return node(Kind::Tuple(elts));
        }
        self.expect_op(")")?;
        if matches!(first.kind, Kind::Starred(_)) {
            return Err("cannot use starred expression here".into());
        }
        // A parenthesised expression is not a node of its own.
        Ok(first)
    }

    fn list_atom(&mut self) -> PResult<Expr> {
        if self.eat_op("]") {
            return node(Kind::List(Vec::new()));
        }
        let first = self.star_named_expression()?;
        if self.is_comp_for() {
            let c = self.comp(CompKind::List, first, None)?;
            self.expect_op("]")?;
            return Ok(c);
        }
        let mut elts = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            elts.push(self.star_named_expression()?);
        }
        self.expect_op("]")?;
        node(Kind::List(elts))
    }

    fn brace_atom(&mut self) -> PResult<Expr> {
        if self.eat_op("}") {
            return node(Kind::Dict(Vec::new()));
        }
        let mut items = Vec::new();
        if self.eat_op("**") {
            items.push((None, self.expr_bp(BP_BOR)?));
        } else if self.is_op("*") {
            let first = self.star_named_expression()?;
            return self.set_rest(first);
        } else {
            let first = self.named_expression()?;
            if !self.eat_op(":") {
                if self.is_comp_for() {
                    let c = self.comp(CompKind::Set, first, None)?;
                    self.expect_op("}")?;
                    return Ok(c);
                }
                return self.set_rest(first);
            }
            if matches!(first.kind, Kind::NamedExpr(..)) {
                return Err(SYNTAX.into());
            }
            let value = self.test()?;
            if self.is_comp_for() {
                let c = self.comp(CompKind::Dict, first, Some(value))?;
                self.expect_op("}")?;
                return Ok(c);
            }
            items.push((Some(first), value));
        }
        while self.eat_op(",") {
            if self.is_op("}") {
                break;
            }
            if self.eat_op("**") {
                items.push((None, self.expr_bp(BP_BOR)?));
            } else {
                let k = self.test()?;
                self.expect_op(":")?;
                items.push((Some(k), self.test()?));
            }
        }
        self.expect_op("}")?;
        node(Kind::Dict(items))
    }

    fn set_rest(&mut self, first: Expr) -> PResult<Expr> {
        let mut elts = vec![first];
        while self.eat_op(",") {
            if self.is_op("}") {
                break;
            }
            elts.push(self.star_named_expression()?);
        }
        self.expect_op("}")?;
        node(Kind::Set(elts))
    }

    /// `yield_expr`, only inside parentheses in an expression.
    fn yield_expr(&mut self) -> PResult<Expr> {
        self.bump();
        if self.is_kw("from") {
            self.bump();
            let v = self.test()?;
            return node(Kind::YieldFrom(Box::new(v)));
        }
        if self.is_op(")") {
            return node(Kind::Yield(None));
        }
        let mut elts = Vec::new();
        let mut comma = false;
        loop {
            elts.push(if self.eat_op("*") {
                let v = self.expr_bp(BP_BOR)?;
                node(Kind::Starred(Box::new(v)))?
            } else {
                self.test()?
            });
            if !self.eat_op(",") {
                break;
            }
            comma = true;
            if self.is_op(")") {
                break;
            }
        }
        let value = if comma || matches!(elts[0].kind, Kind::Starred(_)) {
            node(Kind::Tuple(elts))?
        } else {
            elts.pop().ok_or_else(|| SYNTAX.to_string())?
        };
        node(Kind::Yield(Some(Box::new(value))))
    }

    /// Call arguments after `(`, with CPython's ordering rules.
    fn call(&mut self, func: Expr) -> PResult<Expr> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        let mut seen_keyword = false;
        let mut seen_unpack = false;
        while !self.is_op(")") {
            if self.eat_op("*") {
                if seen_unpack {
                    return Err(
                        "iterable argument unpacking follows keyword argument unpacking".into(),
                    );
                }
                let v = self.test()?;
                args.push(node(Kind::Starred(Box::new(v)))?);
            } else if self.eat_op("**") {
                keywords.push((None, self.test()?));
                seen_unpack = true;
            } else if matches!(self.peek(), Tok::Name(n) if !is_keyword(n))
                && matches!(self.peek2(), Tok::Op("="))
            {
                let name = self.expect_name()?;
                self.bump();
                keywords.push((Some(name), self.test()?));
                seen_keyword = true;
            } else {
                let e = self.named_expression()?;
                if self.is_comp_for() {
                    let g = self.comp(CompKind::Gen, e, None)?;
                    // A bare generator expression must be the only argument.
                    if !args.is_empty() || !keywords.is_empty() || !self.is_op(")") {
                        return Err("Generator expression must be parenthesized".into());
                    }
                    args.push(g);
                    break;
                }
                if self.is_op("=") {
                    return Err(
                        "expression cannot contain assignment, perhaps you meant \"==\"?".into(),
                    );
                }
                if seen_unpack {
                    return Err("positional argument follows keyword argument unpacking".into());
                }
                if seen_keyword {
                    return Err("positional argument follows keyword argument".into());
                }
                args.push(e);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        node(Kind::Call(Box::new(Call {
            func,
            args,
            keywords,
        })))
    }

    /// `slices`: one slice or expression, or a tuple of them.
    fn slices(&mut self) -> PResult<Expr> {
        let mut items = Vec::new();
        let mut tuple = false;
        loop {
            if self.eat_op("*") {
                let v = self.test()?;
                items.push(node(Kind::Starred(Box::new(v)))?);
                tuple = true;
            } else {
                items.push(self.slice_item()?);
            }
            if !self.eat_op(",") {
                break;
            }
            tuple = true;
            if self.is_op("]") {
                break;
            }
        }
        if tuple {
            return node(Kind::Tuple(items));
        }
        items.pop().ok_or_else(|| SYNTAX.to_string())
    }

    fn slice_item(&mut self) -> PResult<Expr> {
        let lower = if self.is_op(":") {
            None
        } else {
            let e = self.named_expression()?;
            if !self.is_op(":") {
                return Ok(e);
            }
            if matches!(e.kind, Kind::NamedExpr(..)) {
                return Err(SYNTAX.into());
            }
            Some(Box::new(e))
        };
        self.expect_op(":")?;
        let ends = |p: &Parser| p.is_op(":") || p.is_op(",") || p.is_op("]");
        let upper = if ends(self) {
            None
        } else {
            Some(Box::new(self.test()?))
        };
        let mut step = None;
        if self.eat_op(":") && !(self.is_op(",") || self.is_op("]")) {
            step = Some(Box::new(self.test()?));
        }
        node(Kind::Slice(lower, upper, step))
    }

    /// `lambda [params]: expression`.
    fn lambda(&mut self) -> PResult<Expr> {
        self.bump();
        let mut l = Lambda::default();
        let mut seen_default = false;
        let mut seen_star = false;
        let mut seen_slash = false;
        while !self.is_op(":") {
            if self.eat_op("/") {
                if seen_slash || seen_star || l.args.is_empty() {
                    return Err(SYNTAX.into());
                }
                seen_slash = true;
                l.posonly = std::mem::take(&mut l.args);
            } else if self.eat_op("**") {
                l.kwarg = Some(self.expect_name()?);
                self.eat_op(",");
                if !self.is_op(":") {
                    return Err("arguments cannot follow var-keyword argument".into());
                }
                break;
            } else if self.eat_op("*") {
                if seen_star {
                    return Err("* argument may appear only once".into());
                }
                seen_star = true;
                if matches!(self.peek(), Tok::Name(_)) {
                    l.vararg = Some(self.expect_name()?);
                }
            } else {
                let name = self.expect_name()?;
                let default = if self.eat_op("=") {
                    Some(self.test()?)
                } else {
                    None
                };
                if seen_star {
                    l.kwonly.push((name, default));
                } else {
                    if default.is_none() && seen_default {
                        return Err("non-default argument follows default argument".into());
                    }
                    seen_default |= default.is_some();
                    l.args.push((name, default));
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        if seen_star && l.vararg.is_none() && l.kwonly.is_empty() {
            return Err("named arguments must follow bare *".into());
        }
        self.expect_op(":")?;
        l.body = Some(self.test()?);
        node(Kind::Lambda(Box::new(l)))
    }
}

/// Whether a `for` target can be assigned to.
fn check_target(e: &Expr) -> PResult<()> {
    match &e.kind {
        Kind::Name(_) | Kind::Attribute(..) | Kind::Subscript(..) => Ok(()),
        Kind::Starred(inner) => check_target(inner),
        Kind::Tuple(items) | Kind::List(items) => items.iter().try_for_each(check_target),
        other => Err(format!("cannot assign to {}", other.type_name())),
    }
}

// ======================================================================================
// Resolution (BFCL's resolve_ast_call / resolve_ast_by_type)
// ======================================================================================

/// A Python value while decoding: like [`PyValue`] but with unbounded ints, complex,
/// bytes and Ellipsis as real values, so that arithmetic is exact.
#[derive(Debug, Clone)]
enum Val {
    None,
    Bool(bool),
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
    List(Vec<Val>),
    Tuple(Vec<Val>),
    Dict(Vec<(Val, Val)>),
}

impl Val {
    fn type_name(&self) -> &'static str {
        match self {
            Val::None => "NoneType",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Complex(..) => "complex",
            Val::Str(_) => "str",
            Val::Bytes(_) => "bytes",
            Val::Ellipsis => "ellipsis",
            Val::List(_) => "list",
            Val::Tuple(_) => "tuple",
            Val::Dict(_) => "dict",
        }
    }

    /// Python truthiness.
    fn truthy(&self) -> bool {
        match self {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => !i.is_zero(),
            Val::Float(f) => *f != 0.0,
            Val::Complex(re, im) => *re != 0.0 || *im != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::Bytes(b) => !b.is_empty(),
            Val::Ellipsis => true,
            Val::List(v) | Val::Tuple(v) => !v.is_empty(),
            Val::Dict(d) => !d.is_empty(),
        }
    }

    fn into_py(self) -> PyValue {
        match self {
            Val::None => PyValue::None,
            Val::Bool(b) => PyValue::Bool(b),
            Val::Int(i) => match i.to_i128() {
                Some(v) => PyValue::Int(v),
                None => PyValue::Other {
                    type_name: "int".into(),
                    repr: i.to_decimal(),
                },
            },
            Val::Float(f) => PyValue::Float(f),
            Val::Complex(re, im) => PyValue::Other {
                type_name: "complex".into(),
                repr: complex_repr(re, im),
            },
            Val::Str(s) => PyValue::Str(s),
            Val::Bytes(b) => PyValue::Other {
                type_name: "bytes".into(),
                repr: bytes_repr(&b),
            },
            Val::Ellipsis => PyValue::Other {
                type_name: "ellipsis".into(),
                repr: "Ellipsis".into(),
            },
            Val::List(v) => PyValue::List(v.into_iter().map(Val::into_py).collect()),
            Val::Tuple(v) => PyValue::Tuple(v.into_iter().map(Val::into_py).collect()),
            Val::Dict(d) => PyValue::Dict(
                d.into_iter()
                    .map(|(k, v)| (k.into_py(), v.into_py()))
                    .collect(),
            ),
        }
    }
}

/// A dict key as Python hashes and compares it: `1`, `1.0` and `True` are one key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HashKey {
    None,
    Ellipsis,
    Int(BigInt),
    /// A float that is not an integer (bits, with -0.0 folded into 0).
    Float(u64),
    Complex(u64, u64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(Vec<HashKey>),
    /// NaN: equal only to itself (a fresh NaN object each time here).
    Unique(usize),
}

fn float_key(f: f64, unique: &mut usize) -> HashKey {
    if f.is_nan() {
        *unique += 1;
        return HashKey::Unique(*unique);
    }
    if f.is_finite() && f.fract() == 0.0 {
        return HashKey::Int(BigInt::from_integral_f64(f));
    }
    HashKey::Float(f.to_bits())
}

fn hash_key(v: &Val, unique: &mut usize) -> PResult<HashKey> {
    Ok(match v {
        Val::None => HashKey::None,
        Val::Ellipsis => HashKey::Ellipsis,
        Val::Bool(b) => HashKey::Int(BigInt::from_i128(i128::from(*b))),
        Val::Int(i) => HashKey::Int(i.clone()),
        Val::Float(f) => float_key(*f, unique),
        Val::Complex(re, im) if *im == 0.0 => float_key(*re, unique),
        Val::Complex(re, im) => HashKey::Complex((re + 0.0).to_bits(), (im + 0.0).to_bits()),
        Val::Str(s) => HashKey::Str(s.clone()),
        Val::Bytes(b) => HashKey::Bytes(b.clone()),
        Val::Tuple(items) => HashKey::Tuple(
            items
                .iter()
                .map(|x| hash_key(x, unique))
                .collect::<PResult<_>>()?,
        ),
        Val::List(_) | Val::Dict(_) => {
            return Err(format!("unhashable type: '{}'", v.type_name()));
        }
    })
}

/// Builds a dict with Python's rules: an equal key keeps its first position and
/// takes the new value.
#[derive(Default)]
struct DictBuilder {
    map: IndexMap<HashKey, (Val, Val)>,
    unique: usize,
}

impl DictBuilder {
    fn insert(&mut self, k: Val, v: Val) -> PResult<()> {
        let key = hash_key(&k, &mut self.unique)?;
        match self.map.get_mut(&key) {
            Some(slot) => slot.1 = v,
            None => {
                self.map.insert(key, (k, v));
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<(Val, Val)> {
        self.map.into_values().collect()
    }
}

struct Resolver {
    strict: bool,
}

impl Resolver {
    /// `resolve_ast_call`: the dotted name and the keyword arguments.
    fn call(&self, call: &Call) -> PResult<(String, Val)> {
        let mut parts = Vec::new();
        let mut f = &call.func;
        while let Kind::Attribute(value, attr) = &f.kind {
            parts.push(attr.as_str());
            f = value;
        }
        if let Kind::Name(id) = &f.kind {
            parts.push(id);
        }
        parts.reverse();
        let mut args = DictBuilder::default();
        for (name, value) in &call.keywords {
            let key = name.as_ref().map_or(Val::None, |n| Val::Str(n.clone()));
            args.insert(key, self.value(value)?)?;
        }
        Ok((parts.join("."), Val::Dict(args.finish())))
    }

    /// `resolve_ast_by_type`.
    fn value(&self, e: &Expr) -> PResult<Val> {
        match &e.kind {
            Kind::Const(Const::Ellipsis) => Ok(Val::Str("...".into())),
            Kind::Const(c) => Ok(const_value(c)),
            Kind::Unary(op, operand) => {
                // BFCL reads `operand.value`: only a constant has a plain value there.
                let Kind::Const(c) = &operand.kind else {
                    return Err(format!(
                        "unary operator on {}, not a literal",
                        operand.kind.type_name()
                    ));
                };
                let v = const_value(c);
                if self.strict {
                    unary(UnOp::Neg, v)
                } else {
                    unary(*op, v)
                }
            }
            Kind::List(elts) => elts
                .iter()
                .map(|x| self.value(x))
                .collect::<PResult<_>>()
                .map(Val::List),
            Kind::Tuple(elts) => elts
                .iter()
                .map(|x| self.value(x))
                .collect::<PResult<_>>()
                .map(Val::Tuple),
            Kind::Dict(items) => {
                let mut d = DictBuilder::default();
                for (k, v) in items {
                    let Some(k) = k else {
                        return Err("Unsupported AST type: NoneType (a ** entry)".into());
                    };
                    let k = self.value(k)?;
                    d.insert(k, self.value(v)?)?;
                }
                Ok(Val::Dict(d.finish()))
            }
            Kind::Bin(..) => eval(e),
            Kind::Name(id) => Ok(Val::Str(id.clone())),
            Kind::Call(call) if call.keywords.is_empty() => unparse_text(e).map(Val::Str),
            Kind::Call(call) => {
                let (name, args) = self.call(call)?;
                Ok(Val::Dict(vec![(Val::Str(name), args)]))
            }
            Kind::Lambda(_) => Err("a lambda cannot be decoded".into()),
            Kind::Subscript(value, slice) => Ok(Val::Str(format!(
                "{}[{}]",
                unparse_text(value)?,
                unparse_text(slice)?
            ))),
            other => Err(format!("Unsupported AST type: {}", other.type_name())),
        }
    }
}

fn const_value(c: &Const) -> Val {
    match c {
        Const::None => Val::None,
        Const::Bool(b) => Val::Bool(*b),
        Const::Ellipsis => Val::Ellipsis,
        Const::Int(i) => Val::Int(i.clone()),
        Const::Float(f) => Val::Float(*f),
        Const::Imag(f) => Val::Complex(0.0, *f),
        Const::Str { value, .. } => Val::Str(value.clone()),
        Const::Bytes(b) => Val::Bytes(b.clone()),
    }
}

// ======================================================================================
// Evaluation of binary operations (BFCL: eval(ast.unparse(node)))
// ======================================================================================

fn eval(e: &Expr) -> PResult<Val> {
    match &e.kind {
        Kind::Const(Const::Int(i)) => {
            // `ast.unparse` writes the int in decimal, which CPython 3.11 refuses beyond
            // 4,300 digits, so BFCL fails there.
            if i.bits() > 14_000
                && i.to_decimal().trim_start_matches('-').len() > INT_MAX_STR_DIGITS
            {
                return Err("Exceeds the limit (4300 digits) for integer string conversion".into());
            }
            Ok(Val::Int(i.clone()))
        }
        Kind::Const(c) => Ok(const_value(c)),
        Kind::Unary(op, operand) => unary(*op, eval(operand)?),
        Kind::Bin(l, op, r) => {
            let l = eval(l)?;
            let r = eval(r)?;
            binop(l, *op, r)
        }
        Kind::List(elts) => elts
            .iter()
            .map(eval_elt)
            .collect::<PResult<_>>()
            .map(Val::List),
        Kind::Tuple(elts) => elts
            .iter()
            .map(eval_elt)
            .collect::<PResult<_>>()
            .map(Val::Tuple),
        Kind::Dict(items) => {
            let mut d = DictBuilder::default();
            for (k, v) in items {
                match k {
                    Some(k) => {
                        let k = eval(k)?;
                        d.insert(k, eval(v)?)?;
                    }
                    None => match eval(v)? {
                        Val::Dict(entries) => {
                            for (k, v) in entries {
                                d.insert(k, v)?;
                            }
                        }
                        other => {
                            return Err(format!("'{}' object is not a mapping", other.type_name()));
                        }
                    },
                }
            }
            Ok(Val::Dict(d.finish()))
        }
        Kind::Name(id) => Err(format!("name '{id}' cannot be evaluated")),
        other => Err(format!(
            "{} inside a binary operation cannot be evaluated",
            other.type_name()
        )),
    }
}

fn eval_elt(e: &Expr) -> PResult<Val> {
    if matches!(e.kind, Kind::Starred(_)) {
        return Err("unpacking inside a binary operation cannot be evaluated".into());
    }
    eval(e)
}

/// A number as Python's numeric tower sees it (bool is an int).
enum Num {
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
}

fn as_num(v: &Val) -> Option<Num> {
    match v {
        Val::Bool(b) => Some(Num::Int(BigInt::from_i128(i128::from(*b)))),
        Val::Int(i) => Some(Num::Int(i.clone())),
        Val::Float(f) => Some(Num::Float(*f)),
        Val::Complex(re, im) => Some(Num::Complex(*re, *im)),
        _ => None,
    }
}

fn unary(op: UnOp, v: Val) -> PResult<Val> {
    let symbol = match op {
        UnOp::Not => return Ok(Val::Bool(!v.truthy())),
        UnOp::Neg => "-",
        UnOp::Pos => "+",
        UnOp::Invert => "~",
    };
    let bad = || format!("bad operand type for unary {symbol}: '{}'", v.type_name());
    match (op, as_num(&v).ok_or_else(bad)?) {
        (UnOp::Neg, Num::Int(i)) => Ok(Val::Int(i.negate())),
        (UnOp::Neg, Num::Float(f)) => Ok(Val::Float(-f)),
        (UnOp::Neg, Num::Complex(re, im)) => Ok(Val::Complex(-re, -im)),
        (UnOp::Pos, Num::Int(i)) => Ok(Val::Int(i)),
        (UnOp::Pos, Num::Float(f)) => Ok(Val::Float(f)),
        (UnOp::Pos, Num::Complex(re, im)) => Ok(Val::Complex(re, im)),
        (UnOp::Invert, Num::Int(i)) => Ok(Val::Int(i.negate().sub(&BigInt::from_i128(1)))),
        _ => Err(bad()),
    }
}

fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mult => "*",
        BinOp::MatMult => "@",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
        BinOp::LShift => "<<",
        BinOp::RShift => ">>",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::BitAnd => "&",
    }
}

/// The count of a sequence repetition, if `v` is an int; `Err` when CPython cannot fit
/// it in a `Py_ssize_t`.
fn repeat_count(v: &Val) -> Option<PResult<i128>> {
    let n = match v {
        Val::Bool(b) => i128::from(*b),
        Val::Int(i) => i.to_i128().unwrap_or(i128::MAX),
        _ => return None,
    };
    Some(if i64::try_from(n).is_ok() {
        Ok(n)
    } else {
        Err("cannot fit 'int' into an index-sized integer".into())
    })
}

fn repeat<T: Clone>(items: &[T], n: i128) -> PResult<Vec<T>> {
    if n <= 0 || items.is_empty() {
        return Ok(Vec::new());
    }
    let total = (items.len() as i128).saturating_mul(n);
    if total > MAX_SEQ_LEN as i128 {
        return Err("repetition result too large".into());
    }
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..n {
        out.extend_from_slice(items);
    }
    Ok(out)
}

fn binop(a: Val, op: BinOp, b: Val) -> PResult<Val> {
    let type_error = |a: &Val, b: &Val| {
        format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            op_symbol(op),
            a.type_name(),
            b.type_name()
        )
    };
    match (op, &a, &b) {
        (BinOp::Add, Val::Str(x), Val::Str(y)) => return Ok(Val::Str(format!("{x}{y}"))),
        (BinOp::Add, Val::Bytes(x), Val::Bytes(y)) => return Ok(Val::Bytes([&x[..], y].concat())),
        (BinOp::Add, Val::List(x), Val::List(y)) => return Ok(Val::List([&x[..], y].concat())),
        (BinOp::Add, Val::Tuple(x), Val::Tuple(y)) => return Ok(Val::Tuple([&x[..], y].concat())),
        (BinOp::BitOr, Val::Dict(x), Val::Dict(y)) => {
            let mut d = DictBuilder::default();
            for (k, v) in x.iter().chain(y) {
                d.insert(k.clone(), v.clone())?;
            }
            return Ok(Val::Dict(d.finish()));
        }
        (BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor, Val::Bool(x), Val::Bool(y)) => {
            return Ok(Val::Bool(match op {
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                _ => x ^ y,
            }));
        }
        (BinOp::Mod, Val::Str(_) | Val::Bytes(_), _) => {
            return Err("%-formatting cannot be evaluated".into());
        }
        (BinOp::Mult, seq, n) | (BinOp::Mult, n, seq)
            if matches!(
                seq,
                Val::Str(_) | Val::Bytes(_) | Val::List(_) | Val::Tuple(_)
            ) && repeat_count(n).is_some() =>
        {
            let n = repeat_count(n).unwrap_or(Ok(0))?;
            return match seq {
                Val::Str(s) => {
                    if n > 0 && (s.len() as i128).saturating_mul(n) > MAX_SEQ_LEN as i128 {
                        return Err("repetition result too large".into());
                    }
                    Ok(Val::Str(if n > 0 {
                        s.repeat(n as usize)
                    } else {
                        String::new()
                    }))
                }
                Val::Bytes(x) => repeat(x, n).map(Val::Bytes),
                Val::List(x) => repeat(x, n).map(Val::List),
                Val::Tuple(x) => repeat(x, n).map(Val::Tuple),
                _ => Err(type_error(&a, &b)),
            };
        }
        _ => {}
    }
    let (Some(x), Some(y)) = (as_num(&a), as_num(&b)) else {
        return Err(type_error(&a, &b));
    };
    match (x, y) {
        (Num::Int(x), Num::Int(y)) => int_binop(&x, op, &y),
        (Num::Complex(xr, xi), y) => complex_binop((xr, xi), op, complex_of(y)?),
        (x, Num::Complex(yr, yi)) => complex_binop(complex_of(x)?, op, (yr, yi)),
        (x, y) => {
            let (x, y) = (float_of(x)?, float_of(y)?);
            float_binop(x, op, y).map(Val::Float)
        }
    }
    .map_err(|e| if e.is_empty() { type_error(&a, &b) } else { e })
}

fn float_of(n: Num) -> PResult<f64> {
    match n {
        Num::Int(i) => i.to_f64(),
        Num::Float(f) => Ok(f),
        Num::Complex(..) => Err(String::new()),
    }
}

fn complex_of(n: Num) -> PResult<(f64, f64)> {
    match n {
        Num::Complex(re, im) => Ok((re, im)),
        other => Ok((float_of(other)?, 0.0)),
    }
}

/// Complex `+ - *` (CPython's `_Py_c_sum`, `_Py_c_diff`, `_Py_c_prod`).
fn complex_binop(x: (f64, f64), op: BinOp, y: (f64, f64)) -> PResult<Val> {
    let (a, b, c, d) = (x.0, x.1, y.0, y.1);
    Ok(match op {
        BinOp::Add => Val::Complex(a + c, b + d),
        BinOp::Sub => Val::Complex(a - c, b - d),
        BinOp::Mult => Val::Complex(a * c - b * d, a * d + b * c),
        BinOp::Div => {
            // `_Py_c_quot`: scale by the larger part of the divisor.
            let (abs_c, abs_d) = (c.abs(), d.abs());
            if abs_c >= abs_d {
                if abs_c == 0.0 {
                    return Err("complex division by zero".into());
                }
                let ratio = d / c;
                let denom = c + d * ratio;
                Val::Complex((a + b * ratio) / denom, (b - a * ratio) / denom)
            } else if abs_d >= abs_c {
                let ratio = c / d;
                let denom = c * ratio + d;
                Val::Complex((a * ratio + b) / denom, (b * ratio - a) / denom)
            } else {
                Val::Complex(f64::NAN, f64::NAN)
            }
        }
        BinOp::Pow => return Err("complex ** cannot be evaluated".into()),
        // An empty message becomes Python's "unsupported operand type(s)".
        _ => return Err(String::new()),
    })
}

/// CPython's float `divmod`: the floor quotient and a remainder with the divisor's sign.
fn float_divmod(vx: f64, wx: f64) -> PResult<(f64, f64)> {
    if wx == 0.0 {
        return Err("float divmod()".into());
    }
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(vx / wx)
    };
    Ok((floordiv, m))
}

fn is_odd_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && (f % 2.0).abs() == 1.0
}

/// CPython's `float_pow`, without the complex result of a negative base.
fn float_pow(iv: f64, iw: f64) -> PResult<f64> {
    if iw == 0.0 {
        return Ok(1.0);
    }
    if iv.is_nan() {
        return Ok(if iv == 1.0 { 1.0 } else { iv });
    }
    if iw.is_nan() {
        return Ok(if iv == 1.0 { 1.0 } else { iw });
    }
    if iw.is_infinite() {
        let av = iv.abs();
        return Ok(if av == 1.0 {
            1.0
        } else if (iw > 0.0) == (av > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if iv.is_infinite() {
        let odd = is_odd_integer(iw);
        return Ok(if iw > 0.0 {
            if odd { iv } else { iv.abs() }
        } else if odd {
            0.0f64.copysign(iv)
        } else {
            0.0
        });
    }
    if iv == 0.0 {
        if iw < 0.0 {
            return Err("0.0 cannot be raised to a negative power".into());
        }
        return Ok(if is_odd_integer(iw) { iv } else { 0.0 });
    }
    let mut base = iv;
    let mut negate = false;
    if iv < 0.0 {
        if iw != iw.floor() {
            return Err("a negative number to a fractional power is complex".into());
        }
        base = -iv;
        negate = is_odd_integer(iw);
    }
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let r = base.powf(iw);
    if r.is_infinite() {
        return Err("(34, 'Numerical result out of range')".into());
    }
    Ok(if negate { -r } else { r })
}

fn float_binop(x: f64, op: BinOp, y: f64) -> PResult<f64> {
    match op {
        BinOp::Add => Ok(x + y),
        BinOp::Sub => Ok(x - y),
        BinOp::Mult => Ok(x * y),
        BinOp::Div => {
            if y == 0.0 {
                Err("float division by zero".into())
            } else {
                Ok(x / y)
            }
        }
        BinOp::FloorDiv => float_divmod(x, y).map(|(q, _)| q),
        BinOp::Mod => float_divmod(x, y).map(|(_, r)| r),
        BinOp::Pow => float_pow(x, y),
        _ => Err(String::new()),
    }
}

fn checked(i: BigInt) -> PResult<Val> {
    if i.bits() > MAX_INT_BITS {
        return Err("integer result too large".into());
    }
    Ok(Val::Int(i))
}

fn int_binop(x: &BigInt, op: BinOp, y: &BigInt) -> PResult<Val> {
    match op {
        BinOp::Add => checked(x.add(y)),
        BinOp::Sub => checked(x.sub(y)),
        BinOp::Mult => {
            if x.bits() + y.bits() > MAX_INT_BITS + 1 {
                return Err("integer result too large".into());
            }
            checked(x.mul(y))
        }
        BinOp::Div => x.true_div(y).map(Val::Float),
        BinOp::FloorDiv | BinOp::Mod => {
            let (q, r) = x
                .divmod_floor(y)
                .ok_or("integer division or modulo by zero")?;
            Ok(Val::Int(if op == BinOp::FloorDiv { q } else { r }))
        }
        BinOp::Pow => {
            if y.neg {
                // A negative exponent makes CPython compute in floats.
                return float_pow(x.to_f64()?, y.to_f64()?).map(Val::Float);
            }
            x.pow(y).and_then(checked)
        }
        BinOp::LShift | BinOp::RShift => {
            if y.neg {
                return Err("negative shift count".into());
            }
            let n = y.to_i128().unwrap_or(i128::MAX);
            if op == BinOp::RShift {
                return x.shr(n).map(Val::Int);
            }
            if !x.is_zero() && x.bits() as i128 + n > MAX_INT_BITS as i128 {
                return Err("integer result too large".into());
            }
            Ok(Val::Int(x.shl(n as u64)))
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            let (Some(a), Some(b)) = (x.to_i128(), y.to_i128()) else {
                return Err("bitwise operations beyond 128 bits cannot be evaluated".into());
            };
            Ok(Val::Int(BigInt::from_i128(match op {
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                _ => a ^ b,
            })))
        }
        BinOp::MatMult => Err(String::new()),
    }
}

// ======================================================================================
// Big integers (just what the decoder needs)
// ======================================================================================

/// A sign-magnitude integer; `mag` is little-endian 32-bit limbs without leading zero
/// limbs, and zero is `mag == []` with `neg == false`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

fn trim(mag: &mut Vec<u32>) {
    while mag.last() == Some(&0) {
        mag.pop();
    }
}

fn mag_cmp(a: &[u32], b: &[u32]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn mag_add(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u64;
    for (k, &x) in a.iter().enumerate() {
        let s = u64::from(x) + u64::from(b.get(k).copied().unwrap_or(0)) + carry;
        out.push(s as u32);
        carry = s >> 32;
    }
    if carry != 0 {
        out.push(carry as u32);
    }
    out
}

/// `a - b` for `a >= b`.
fn mag_sub(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (k, &x) in a.iter().enumerate() {
        let mut d = i64::from(x) - i64::from(b.get(k).copied().unwrap_or(0)) - borrow;
        borrow = i64::from(d < 0);
        if d < 0 {
            d += 1 << 32;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

fn mag_mul(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = u64::from(x) * u64::from(y) + u64::from(out[i + j]) + carry;
            out[i + j] = t as u32;
            carry = t >> 32;
        }
        let mut k = i + b.len();
        while carry != 0 {
            let t = u64::from(out[k]) + carry;
            out[k] = t as u32;
            carry = t >> 32;
            k += 1;
        }
    }
    trim(&mut out);
    out
}

fn mag_shl(a: &[u32], n: u64) -> Vec<u32> {
    if a.is_empty() {
        return Vec::new();
    }
    let limbs = (n / 32) as usize;
    let bits = (n % 32) as u32;
    let mut out = vec![0u32; limbs];
    let mut carry = 0u32;
    for &x in a {
        if bits == 0 {
            out.push(x);
        } else {
            out.push((x << bits) | carry);
            carry = x >> (32 - bits);
        }
    }
    if carry != 0 {
        out.push(carry);
    }
    out
}

fn mag_shr(a: &[u32], n: u64) -> Vec<u32> {
    let limbs = (n / 32) as usize;
    if limbs >= a.len() {
        return Vec::new();
    }
    let bits = (n % 32) as u32;
    let src = &a[limbs..];
    let mut out: Vec<u32> = src
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            if bits == 0 {
                x
            } else {
                (x >> bits) | (src.get(k + 1).copied().unwrap_or(0) << (32 - bits))
            }
        })
        .collect();
    trim(&mut out);
    out
}

fn mag_bits(a: &[u32]) -> u64 {
    a.last().map_or(0, |&top| {
        (a.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros())
    })
}

fn mag_divmod_small(a: &[u32], d: u32) -> (Vec<u32>, u32) {
    let mut q = vec![0u32; a.len()];
    let mut r = 0u64;
    for k in (0..a.len()).rev() {
        let cur = (r << 32) | u64::from(a[k]);
        q[k] = (cur / u64::from(d)) as u32;
        r = cur % u64::from(d);
    }
    trim(&mut q);
    (q, r as u32)
}

/// Quotient and remainder of magnitudes (`b` non-zero), by binary long division.
fn mag_divmod(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    if b.len() == 1 {
        let (q, r) = mag_divmod_small(a, b[0]);
        let mut r = vec![r];
        trim(&mut r);
        return (q, r);
    }
    if mag_cmp(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    let mut q = vec![0u32; a.len()];
    let mut r: Vec<u32> = Vec::new();
    for bit in (0..mag_bits(a)).rev() {
        r = mag_shl(&r, 1);
        if (a[(bit / 32) as usize] >> (bit % 32)) & 1 == 1 {
            if r.is_empty() {
                r.push(1);
            } else {
                r[0] |= 1;
            }
        }
        if mag_cmp(&r, b) != Ordering::Less {
            r = mag_sub(&r, b);
            q[(bit / 32) as usize] |= 1 << (bit % 32);
        }
    }
    trim(&mut q);
    (q, r)
}

/// Magnitude to the nearest double (ties to even); inf when too large.
fn mag_to_f64(a: &[u32]) -> f64 {
    let bits = mag_bits(a);
    if bits <= 64 {
        let v = a
            .iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 32) | u64::from(x));
        return v as f64;
    }
    let shift = bits - 64;
    let top = mag_shr(a, shift)
        .iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 32) | u64::from(x));
    // Fold the dropped bits into a sticky bit far below the rounding position.
    let sticky = mag_cmp(&mag_shl(&mag_shr(a, shift), shift), a) != Ordering::Equal;
    ldexp((top | u64::from(sticky)) as f64, shift as i64)
}

/// `x * 2^e` in steps that cannot overflow or underflow the scale factor.
fn ldexp(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

impl BigInt {
    fn from_mag(neg: bool, mut mag: Vec<u32>) -> Self {
        trim(&mut mag);
        BigInt {
            neg: neg && !mag.is_empty(),
            mag,
        }
    }

    fn from_i128(v: i128) -> Self {
        let mut u = v.unsigned_abs();
        let mut mag = Vec::new();
        while u != 0 {
            mag.push(u as u32);
            u >>= 32;
        }
        BigInt { neg: v < 0, mag }
    }

    /// An integral, finite float, exactly.
    fn from_integral_f64(f: f64) -> Self {
        if f.abs() < 1e38 {
            return BigInt::from_i128(f as i128);
        }
        let bits = f.to_bits();
        let exp = ((bits >> 52) & 0x7FF) as i64 - 1075;
        let mant = (bits & ((1 << 52) - 1)) | (1 << 52);
        let m = BigInt::from_i128(i128::from(mant)).shl(exp.max(0) as u64);
        if f < 0.0 { m.negate() } else { m }
    }

    fn to_i128(&self) -> Option<i128> {
        if self.mag.len() > 4 {
            return None;
        }
        let u = self
            .mag
            .iter()
            .rev()
            .fold(0u128, |acc, &x| (acc << 32) | u128::from(x));
        if self.neg {
            (u <= 1u128 << 127).then(|| 0i128.wrapping_sub(u as i128))
        } else {
            i128::try_from(u).ok()
        }
    }

    fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    fn bits(&self) -> u64 {
        mag_bits(&self.mag)
    }

    /// Parses digits (no sign, no underscores) in `radix`.
    fn from_radix(digits: &str, radix: u32) -> PResult<Self> {
        let bits_per_digit = match radix {
            2 => 1,
            8 => 3,
            16 => 4,
            _ => 4,
        };
        if digits.trim_start_matches('0').len() as u64 * bits_per_digit > MAX_INT_BITS + 4 {
            return Err("integer literal too large".into());
        }
        let mut mag: Vec<u32> = Vec::new();
        for c in digits.chars() {
            let d = c.to_digit(radix).ok_or("invalid digit")?;
            let mut carry = u64::from(d);
            for limb in &mut mag {
                let t = u64::from(*limb) * u64::from(radix) + carry;
                *limb = t as u32;
                carry = t >> 32;
            }
            if carry != 0 {
                mag.push(carry as u32);
            }
        }
        Ok(BigInt::from_mag(false, mag))
    }

    fn to_decimal(&self) -> String {
        if self.mag.is_empty() {
            return "0".into();
        }
        let mut chunks = Vec::new();
        let mut cur = self.mag.clone();
        while !cur.is_empty() {
            let (q, r) = mag_divmod_small(&cur, 1_000_000_000);
            chunks.push(r);
            cur = q;
        }
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        let mut it = chunks.iter().rev();
        if let Some(first) = it.next() {
            s.push_str(&first.to_string());
        }
        for c in it {
            s.push_str(&format!("{c:09}"));
        }
        s
    }

    fn negate(self) -> Self {
        let neg = !self.neg;
        BigInt::from_mag(neg, self.mag)
    }

    fn add(&self, o: &BigInt) -> BigInt {
        if self.neg == o.neg {
            return BigInt::from_mag(self.neg, mag_add(&self.mag, &o.mag));
        }
        match mag_cmp(&self.mag, &o.mag) {
            Ordering::Less => BigInt::from_mag(o.neg, mag_sub(&o.mag, &self.mag)),
            _ => BigInt::from_mag(self.neg, mag_sub(&self.mag, &o.mag)),
        }
    }

    fn sub(&self, o: &BigInt) -> BigInt {
        self.add(&o.clone().negate())
    }

    fn mul(&self, o: &BigInt) -> BigInt {
        BigInt::from_mag(self.neg != o.neg, mag_mul(&self.mag, &o.mag))
    }

    /// Python's `divmod` (floor division); `None` when dividing by zero.
    fn divmod_floor(&self, o: &BigInt) -> Option<(BigInt, BigInt)> {
        if o.is_zero() {
            return None;
        }
        let (q, r) = mag_divmod(&self.mag, &o.mag);
        let mut q = BigInt::from_mag(self.neg != o.neg, q);
        let mut r = BigInt::from_mag(self.neg, r);
        if !r.is_zero() && self.neg != o.neg {
            q = q.sub(&BigInt::from_i128(1));
            r = r.add(o);
        }
        Some((q, r))
    }

    /// `self ** e` for `e >= 0`.
    fn pow(&self, e: &BigInt) -> PResult<BigInt> {
        if e.is_zero() {
            return Ok(BigInt::from_i128(1));
        }
        // 0, 1 and -1 stay small whatever the exponent; only its parity matters.
        if self.mag.len() <= 1 && self.mag.first().copied().unwrap_or(0) <= 1 {
            let odd = e.mag.first().is_some_and(|l| l & 1 == 1);
            return Ok(if self.neg && !odd {
                BigInt::from_i128(1)
            } else {
                self.clone()
            });
        }
        let e = e.to_i128().unwrap_or(i128::MAX);
        if (self.bits() as i128).saturating_mul(e) > MAX_INT_BITS as i128 {
            return Err("integer result too large".into());
        }
        let mut result = BigInt::from_i128(1);
        let mut base = self.clone();
        let mut e = e;
        while e > 0 {
            if e & 1 == 1 {
                result = result.mul(&base);
            }
            e >>= 1;
            if e > 0 {
                base = base.mul(&base);
            }
        }
        Ok(result)
    }

    fn shl(&self, n: u64) -> BigInt {
        BigInt::from_mag(self.neg, mag_shl(&self.mag, n))
    }

    /// Floor shift right.
    fn shr(&self, n: i128) -> PResult<BigInt> {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        if !self.neg {
            return Ok(BigInt::from_mag(false, mag_shr(&self.mag, n)));
        }
        // -((|x| - 1) >> n) - 1 rounds toward negative infinity.
        let m = mag_sub(&self.mag, &[1]);
        Ok(BigInt::from_mag(false, mag_shr(&m, n))
            .negate()
            .sub(&BigInt::from_i128(1)))
    }

    /// Python's `float(int)`.
    fn to_f64(&self) -> PResult<f64> {
        let f = mag_to_f64(&self.mag);
        if f.is_infinite() {
            return Err("int too large to convert to float".into());
        }
        Ok(if self.neg { -f } else { f })
    }

    /// Python's `int / int`, correctly rounded.
    fn true_div(&self, o: &BigInt) -> PResult<f64> {
        if o.is_zero() {
            return Err("division by zero".into());
        }
        const EXACT: u64 = 53;
        if self.bits() <= EXACT && o.bits() <= EXACT {
            return Ok(self.to_f64()? / o.to_f64()?);
        }
        // Scale so the quotient has at least 55 bits, fold the remainder into a sticky
        // bit, and let the u64 → f64 conversion round once.
        let shift = o.bits() as i64 - self.bits() as i64 + 55;
        let (a, b) = if shift > 0 {
            (mag_shl(&self.mag, shift as u64), o.mag.clone())
        } else {
            (self.mag.clone(), mag_shl(&o.mag, (-shift) as u64))
        };
        let (q, r) = mag_divmod(&a, &b);
        let q = q
            .iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 32) | u64::from(x));
        let f = ldexp((q | u64::from(!r.is_empty())) as f64, -shift);
        if f.is_infinite() {
            return Err("integer division result too large for a float".into());
        }
        Ok(if self.neg != o.neg { -f } else { f })
    }
}

// ======================================================================================
// repr and ast.unparse
// ======================================================================================

static NON_PRINTABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$")
        .expect("the non-printable pattern is valid")
});

/// Python's `str.isprintable()` for one character.
fn is_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    let mut buf = [0u8; 4];
    !NON_PRINTABLE.is_match(c.encode_utf8(&mut buf))
}

/// Python's `repr(str)`.
fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(c);
            }
            _ if is_printable(c) => out.push(c),
            _ => {
                let v = c as u32;
                if v <= 0xFF {
                    out.push_str(&format!("\\x{v:02x}"));
                } else if v <= 0xFFFF {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Python's `repr(bytes)`.
fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::with_capacity(b.len() + 3);
    out.push('b');
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7E => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// Python's `repr(float)` (`add_dot_0`) or the `r` format without `.0` (as used by
/// `repr(complex)`): shortest round-trip digits, exponent form below 1e-4 and from 1e16.
fn float_repr(x: f64, add_dot_0: bool) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as CPython's repr does.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let decpt = exp.parse::<i32>().unwrap_or(0) + 1;
    let mut out = String::new();
    if x.is_sign_negative() {
        out.push('-');
    }
    if !(-4 < decpt && decpt <= 16) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push_str(&format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-decpt) as usize));
        out.push_str(&digits);
    } else if decpt as usize >= digits.len() {
        out.push_str(&digits);
        out.push_str(&"0".repeat(decpt as usize - digits.len()));
        if add_dot_0 {
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

/// Python's `repr(complex)`.
fn complex_repr(re: f64, im: f64) -> String {
    let imag = float_repr(im, false);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{imag}j");
    }
    let sign = if imag.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{imag}j)", float_repr(re, false))
}

/// `ast.unparse` precedences (`ast._Precedence`).
const P_NAMED: u8 = 1;
const P_TUPLE: u8 = 2;
const P_YIELD: u8 = 3;
const P_TEST: u8 = 4;
const P_OR: u8 = 5;
const P_AND: u8 = 6;
const P_NOT: u8 = 7;
const P_CMP: u8 = 8;
const P_EXPR: u8 = 9;
const P_BXOR: u8 = 10;
const P_BAND: u8 = 11;
const P_SHIFT: u8 = 12;
const P_ARITH: u8 = 13;
const P_TERM: u8 = 14;
const P_FACTOR: u8 = 15;
const P_POWER: u8 = 16;
const P_AWAIT: u8 = 17;
const P_ATOM: u8 = 18;

fn next_p(p: u8) -> u8 {
    (p + 1).min(P_ATOM)
}

/// `ast.unparse(e)`.
fn unparse_text(e: &Expr) -> PResult<String> {
    let mut out = String::new();
    unparse(e, P_TEST, &mut out)?;
    Ok(out)
}

/// CPython's `ast.unparse` writes floats with `repr`, with inf spelled `1e309`.
fn float_literal(repr: String) -> String {
    repr.replace("inf", "1e309").replace("nan", "(1e309-1e309)")
}

fn unparse_const(c: &Const, out: &mut String) -> PResult<()> {
    match c {
        Const::None => out.push_str("None"),
        Const::Bool(true) => out.push_str("True"),
        Const::Bool(false) => out.push_str("False"),
        Const::Ellipsis => out.push_str("..."),
        Const::Int(i) => {
            let s = i.to_decimal();
            if s.len() > INT_MAX_STR_DIGITS {
                return Err(int_limit_message(s.len()));
            }
            out.push_str(&s);
        }
        Const::Float(f) => out.push_str(&float_literal(float_repr(*f, true))),
        Const::Imag(f) => out.push_str(&float_literal(complex_repr(0.0, *f))),
        Const::Str { value, u } => {
            if *u {
                out.push('u');
            }
            out.push_str(&str_repr(value));
        }
        Const::Bytes(b) => out.push_str(&bytes_repr(b)),
    }
    Ok(())
}

/// Writes `items` separated by `, `, with a trailing comma for a single item.
fn items_view(items: &[Expr], out: &mut String) -> PResult<()> {
    if let [only] = items {
        unparse(only, P_TEST, out)?;
        out.push(',');
        return Ok(());
    }
    join(items, out)
}

fn join(items: &[Expr], out: &mut String) -> PResult<()> {
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        unparse(item, P_TEST, out)?;
    }
    Ok(())
}

fn bin_precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Add | BinOp::Sub => P_ARITH,
        BinOp::Mult | BinOp::MatMult | BinOp::Div | BinOp::Mod | BinOp::FloorDiv => P_TERM,
        BinOp::LShift | BinOp::RShift => P_SHIFT,
        BinOp::BitOr => P_EXPR,
        BinOp::BitXor => P_BXOR,
        BinOp::BitAnd => P_BAND,
        BinOp::Pow => P_POWER,
    }
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::NotEq => "!=",
        CmpOp::Lt => "<",
        CmpOp::LtE => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtE => ">=",
        CmpOp::Is => "is",
        CmpOp::IsNot => "is not",
        CmpOp::In => "in",
        CmpOp::NotIn => "not in",
    }
}

fn unparse_param(name: &str, default: &Option<Expr>, out: &mut String) -> PResult<()> {
    out.push_str(name);
    if let Some(d) = default {
        out.push('=');
        unparse(d, P_TEST, out)?;
    }
    Ok(())
}

/// `visit_arguments` of `ast._Unparser`.
fn unparse_lambda_args(l: &Lambda, out: &mut String) -> PResult<()> {
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(", ");
        }
        first = false;
    };
    let positional = l.posonly.iter().chain(&l.args);
    for (k, (name, default)) in positional.enumerate() {
        sep(out);
        unparse_param(name, default, out)?;
        if k + 1 == l.posonly.len() {
            out.push_str(", /");
        }
    }
    if l.vararg.is_some() || !l.kwonly.is_empty() {
        sep(out);
        out.push('*');
        if let Some(v) = &l.vararg {
            out.push_str(v);
        }
    }
    for (name, default) in &l.kwonly {
        out.push_str(", ");
        unparse_param(name, default, out)?;
    }
    if let Some(k) = &l.kwarg {
        sep(out);
        out.push_str("**");
        out.push_str(k);
    }
    Ok(())
}

/// Port of `ast._Unparser`: `prec` is the precedence the parent set on this node
/// (`P_TEST` when it set none), and decides the parentheses.
fn unparse(e: &Expr, prec: u8, out: &mut String) -> PResult<()> {
    let open = |needed: bool, out: &mut String| {
        if needed {
            out.push('(');
        }
    };
    let close = |needed: bool, out: &mut String| {
        if needed {
            out.push(')');
        }
    };
    match &e.kind {
        Kind::Const(c) => unparse_const(c, out)?,
        Kind::FStr => return Err("f-strings cannot be unparsed here".into()),
        Kind::Name(id) => out.push_str(id),
        Kind::Attribute(value, attr) => {
            unparse(value, P_ATOM, out)?;
            // `1 .real`: `1.real` would read as a float.
            if matches!(value.kind, Kind::Const(Const::Int(_))) {
                out.push(' ');
            }
            out.push('.');
            out.push_str(attr);
        }
        Kind::Call(call) => {
            unparse(&call.func, P_ATOM, out)?;
            out.push('(');
            let mut first = true;
            for arg in &call.args {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                unparse(arg, P_TEST, out)?;
            }
            for (name, value) in &call.keywords {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                match name {
                    Some(n) => {
                        out.push_str(n);
                        out.push('=');
                    }
                    None => out.push_str("**"),
                }
                unparse(value, P_TEST, out)?;
            }
            out.push(')');
        }
        Kind::Subscript(value, slice) => {
            unparse(value, P_ATOM, out)?;
            out.push('[');
            match &slice.kind {
                Kind::Tuple(items) if !items.is_empty() => items_view(items, out)?,
                _ => unparse(slice, P_TEST, out)?,
            }
            out.push(']');
        }
        Kind::Slice(lower, upper, step) => {
            if let Some(l) = lower {
                unparse(l, P_TEST, out)?;
            }
            out.push(':');
            if let Some(u) = upper {
                unparse(u, P_TEST, out)?;
            }
            if let Some(s) = step {
                out.push(':');
                unparse(s, P_TEST, out)?;
            }
        }
        Kind::Starred(value) => {
            out.push('*');
            unparse(value, P_EXPR, out)?;
        }
        Kind::List(items) => {
            out.push('[');
            join(items, out)?;
            out.push(']');
        }
        Kind::Tuple(items) => {
            let parens = items.is_empty() || prec > P_TUPLE;
            open(parens, out);
            items_view(items, out)?;
            close(parens, out);
        }
        Kind::Set(items) => {
            out.push('{');
            join(items, out)?;
            out.push('}');
        }
        Kind::Dict(items) => {
            out.push('{');
            for (k, (key, value)) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                match key {
                    Some(key) => {
                        unparse(key, P_TEST, out)?;
                        out.push_str(": ");
                        unparse(value, P_TEST, out)?;
                    }
                    None => {
                        out.push_str("**");
                        unparse(value, P_EXPR, out)?;
                    }
                }
            }
            out.push('}');
        }
        Kind::Unary(op, operand) => {
            let (symbol, p) = match op {
                UnOp::Not => ("not ", P_NOT),
                UnOp::Neg => ("-", P_FACTOR),
                UnOp::Pos => ("+", P_FACTOR),
                UnOp::Invert => ("~", P_FACTOR),
            };
            let parens = prec > p;
            open(parens, out);
            out.push_str(symbol);
            unparse(operand, p, out)?;
            close(parens, out);
        }
        Kind::Bin(left, op, right) => {
            let p = bin_precedence(*op);
            let parens = prec > p;
            let (lp, rp) = if *op == BinOp::Pow {
                (next_p(p), p)
            } else {
                (p, next_p(p))
            };
            open(parens, out);
            unparse(left, lp, out)?;
            out.push(' ');
            out.push_str(op_symbol(*op));
            out.push(' ');
            unparse(right, rp, out)?;
            close(parens, out);
        }
        Kind::Compare(left, rest) => {
            let parens = prec > P_CMP;
            open(parens, out);
            unparse(left, next_p(P_CMP), out)?;
            for (op, right) in rest {
                out.push(' ');
                out.push_str(cmp_symbol(*op));
                out.push(' ');
                unparse(right, next_p(P_CMP), out)?;
            }
            close(parens, out);
        }
        Kind::BoolOp(is_and, values) => {
            let (word, mut p) = if *is_and {
                (" and ", P_AND)
            } else {
                (" or ", P_OR)
            };
            let parens = prec > p;
            open(parens, out);
            // CPython raises the precedence for each further operand (a quirk kept here:
            // `a or b or not c` unparses as `a or b or (not c)`).
            for (k, v) in values.iter().enumerate() {
                if k > 0 {
                    out.push_str(word);
                }
                p = next_p(p);
                unparse(v, p, out)?;
            }
            close(parens, out);
        }
        Kind::IfExp(body, test, orelse) => {
            let parens = prec > P_TEST;
            open(parens, out);
            unparse(body, next_p(P_TEST), out)?;
            out.push_str(" if ");
            unparse(test, next_p(P_TEST), out)?;
            out.push_str(" else ");
            unparse(orelse, P_TEST, out)?;
            close(parens, out);
        }
        Kind::Lambda(l) => {
            let parens = prec > P_TEST;
            open(parens, out);
            out.push_str("lambda");
            let mut params = String::new();
            unparse_lambda_args(l, &mut params)?;
            if !params.is_empty() {
                out.push(' ');
                out.push_str(&params);
            }
            out.push_str(": ");
            if let Some(body) = &l.body {
                unparse(body, P_TEST, out)?;
            }
            close(parens, out);
        }
        Kind::NamedExpr(target, value) => {
            let parens = prec > P_NAMED;
            open(parens, out);
            out.push_str(target);
            out.push_str(" := ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
        Kind::Comp(c) => {
            let (l, r) = match c.kind {
                CompKind::List => ('[', ']'),
                CompKind::Gen => ('(', ')'),
                CompKind::Set | CompKind::Dict => ('{', '}'),
            };
            out.push(l);
            unparse(&c.elt, P_TEST, out)?;
            if let Some(v) = &c.value {
                out.push_str(": ");
                unparse(v, P_TEST, out)?;
            }
            for g in &c.generators {
                out.push_str(if g.is_async { " async for " } else { " for " });
                unparse(&g.target, P_TUPLE, out)?;
                out.push_str(" in ");
                unparse(&g.iter, next_p(P_TEST), out)?;
                for cond in &g.ifs {
                    out.push_str(" if ");
                    unparse(cond, next_p(P_TEST), out)?;
                }
            }
            out.push(r);
        }
        Kind::Await(value) => {
            let parens = prec > P_AWAIT;
            open(parens, out);
            out.push_str("await ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
        Kind::Yield(value) => {
            let parens = prec > P_YIELD;
            open(parens, out);
            out.push_str("yield");
            if let Some(v) = value {
                out.push(' ');
                unparse(v, P_ATOM, out)?;
            }
            close(parens, out);
        }
        Kind::YieldFrom(value) => {
            let parens = prec > P_YIELD;
            open(parens, out);
            out.push_str("yield from ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7); see also the comparison harness in the scratch crate.

    use super::*;
    use serde_json::json;

    use PyValue::{Bool, Float, Int, List, Tuple};

    fn s(x: &str) -> PyValue {
        PyValue::Str(x.into())
    }

    fn dict(items: Vec<(PyValue, PyValue)>) -> PyValue {
        PyValue::Dict(items)
    }

    fn other(type_name: &str, repr: &str) -> PyValue {
        PyValue::Other {
            type_name: type_name.into(),
            repr: repr.into(),
        }
    }

    /// Exact structural equality, types included (`1` vs `1.0` vs `True`).
    fn same(a: &PyValue, b: &PyValue) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    fn calls_mode(text: &str, strict: bool) -> Vec<(String, PyValue)> {
        match decode_prompt(text, strict) {
            Decoded::Calls(c) => c,
            Decoded::Failed { reason, .. } => panic!("{text:?} failed: {reason}"),
        }
    }

    fn calls(text: &str) -> Vec<(String, PyValue)> {
        calls_mode(text, true)
    }

    /// The value of keyword `a` in `f(a=<expr>)`.
    fn arg_mode(expr: &str, strict: bool) -> PyValue {
        let text = format!("f(a={expr})");
        let mut c = calls_mode(&text, strict);
        assert_eq!(c.len(), 1, "{text}");
        let (_, PyValue::Dict(mut args)) = c.remove(0) else {
            panic!("{text}: arguments are not a dict")
        };
        assert_eq!(args.len(), 1, "{text}");
        args.remove(0).1
    }

    fn arg(expr: &str) -> PyValue {
        arg_mode(expr, true)
    }

    fn check(expr: &str, expected: PyValue) {
        let got = arg(expr);
        assert!(
            same(&got, &expected),
            "{expr}: got {got:?}, expected {expected:?}"
        );
    }

    fn fails_mode(text: &str, strict: bool) -> (String, bool) {
        match decode_prompt(text, strict) {
            Decoded::Failed { reason, attempt } => (reason, attempt),
            Decoded::Calls(c) => panic!("{text:?} decoded: {c:?}"),
        }
    }

    fn fails(text: &str) -> (String, bool) {
        fails_mode(text, true)
    }

    fn arg_fails(expr: &str) {
        fails(&format!("f(a={expr})"));
    }

    // --------------------------------------------------------------- prompt: literals

    #[test]
    fn string_literals() {
        check("'x'", s("x"));
        check("\"x\"", s("x"));
        check("'''x\ny'''", s("x\ny"));
        check("\"\"\"x\"\"\"", s("x"));
        check("'a' \"b\" '''c'''", s("abc"));
        check("u'x'", s("x"));
        check("r'\\n\\d'", s("\\n\\d"));
        check("R\"\\t\"", s("\\t"));
        check(
            r#"'\n\t\\\'\"\a\b\f\v\r'"#,
            s("\n\t\\'\"\u{7}\u{8}\u{c}\u{b}\r"),
        );
        check(r"'\101\7\0\777'", s("A\u{7}\0\u{1ff}"));
        check(r"'\x41\u00e9\U0001F600'", s("Aé😀"));
        check(r"'\d\q'", s("\\d\\q"));
        check("'x\\\ny'", s("xy"));
        check("r'x\\\ny'", s("x\\\ny"));
        check("'😀名前'", s("😀名前"));
        // Lone surrogates cannot live in a Rust string.
        check(r"'\ud83d\ude00'", s("\u{FFFD}\u{FFFD}"));
        // `\r\n` in the source is read as `\n`, inside strings too.
        check("'''x\r\ny'''", s("x\ny"));
    }

    #[test]
    fn bad_string_literals_fail() {
        for expr in [
            r"'\x4'",
            r"'\u12'",
            r"'\U00110000'",
            r"'\N{BULLET}'",
            "'x",
            "'''x",
            "'x\ny'",
            "'a' b'b'",
            "b'é'",
            "ub'x'",
            "f'x'",
            "rf'{x}'",
        ] {
            arg_fails(expr);
        }
    }

    #[test]
    fn bytes_literals_are_other() {
        check("b'x'", other("bytes", "b'x'"));
        check("rb'\\n'", other("bytes", "b'\\\\n'"));
        check(
            r"b'\x00\xff\n\t' b'\777'",
            other("bytes", r"b'\x00\xff\n\t\xff'"),
        );
        check(r#"b'"\''"#, other("bytes", r#"b'"\''"#));
        check(r"b'\u1234'", other("bytes", r"b'\\u1234'"));
    }

    #[test]
    fn number_literals() {
        check("1", Int(1));
        check("-1", Int(-1));
        check("0x1F", Int(31));
        check("0o17", Int(15));
        check("0b101", Int(5));
        check("1_000_000", Int(1_000_000));
        check("0_0", Int(0));
        check("00", Int(0));
        check("1.5", Float(1.5));
        check("1e-05", Float(1e-5));
        check("1E5", Float(1e5));
        check(".5", Float(0.5));
        check("5.", Float(5.0));
        check("1_0.5_0e1_0", Float(10.5e10));
        check("09.5", Float(9.5));
        check("0e0", Float(0.0));
        check("1e309", Float(f64::INFINITY));
        check("170141183460469231731687303715884105727", Int(i128::MAX));
        check("-170141183460469231731687303715884105728", Int(i128::MIN));
        check(
            "123456789012345678901234567890123456789012",
            other("int", "123456789012345678901234567890123456789012"),
        );
        check("5j", other("complex", "5j"));
        check("1.5J", other("complex", "1.5j"));
        check("09j", other("complex", "9j"));
        check("-5j", other("complex", "(-0-5j)"));
        check("1e309j", other("complex", "infj"));
        // A number may touch a keyword: `1if x else y` is a conditional (which fails).
        assert_eq!(calls("f(1if 1 else 2, a=1)").len(), 1);
    }

    #[test]
    fn bad_number_literals_fail() {
        for expr in [
            "01", "1e", "1e+", "1_", "1__0", "0x", "0b2", "0o8", "0b1_", "1._5", "1abc", "1é",
            "5L", "0x1for",
        ] {
            arg_fails(expr);
        }
        // CPython 3.11 refuses decimal literals beyond 4,300 digits.
        assert!(matches!(arg(&"1".repeat(4300)), PyValue::Other { .. }));
        arg_fails(&"1".repeat(4301));
    }

    #[test]
    fn constants_and_names() {
        check("True", Bool(true));
        check("False", Bool(false));
        check("None", PyValue::None);
        check("...", s("..."));
        check("x", s("x"));
        check("true", s("true"));
        check("null", s("null"));
        check("match", s("match"));
        check("café", s("café"));
        check("Ellipsis", s("Ellipsis"));
    }

    #[test]
    fn containers() {
        check("[]", List(vec![]));
        check("()", Tuple(vec![]));
        check("{}", dict(vec![]));
        check("(1,)", Tuple(vec![Int(1)]));
        check("(1, 'a')", Tuple(vec![Int(1), s("a")]));
        check("(1)", Int(1));
        check(
            "[1, [2, (3,)]]",
            List(vec![Int(1), List(vec![Int(2), Tuple(vec![Int(3)])])]),
        );
        check(
            "{'a': {'b': [1, 2.5]}}",
            dict(vec![(
                s("a"),
                dict(vec![(s("b"), List(vec![Int(1), Float(2.5)]))]),
            )]),
        );
        // Equal keys merge: first key, last value.
        check(
            "{1: 'a', 1.0: 'b', True: 'c'}",
            dict(vec![(Int(1), s("c"))]),
        );
        check(
            "{'k': 1, 'j': 0, 'k': 2}",
            dict(vec![(s("k"), Int(2)), (s("j"), Int(0))]),
        );
        check(
            "{(1, 2): 3, None: 4}",
            dict(vec![
                (Tuple(vec![Int(1), Int(2)]), Int(3)),
                (PyValue::None, Int(4)),
            ]),
        );
        for expr in [
            "{[1]: 2}",
            "{{}: 2}",
            "{**b}",
            "{1, 2}",
            "[*a]",
            "{g(x=1): 2}",
        ] {
            arg_fails(expr);
        }
    }

    // --------------------------------------------------------------- prompt: operators

    #[test]
    fn unary_strict_negates_whatever_the_operator() {
        check("+5", Int(-5));
        check("-5", Int(-5));
        check("~5", Int(-5));
        check("not 5", Int(-5));
        check("not 0", Int(0));
        check("-True", Int(-1));
        check("+True", Int(-1));
        check("+1.5", Float(-1.5));
        check("-(5)", Int(-5));
        check("-0.0", Float(-0.0));
        check("+5j", other("complex", "(-0-5j)"));
        for expr in [
            "not 'x'", "-'x'", "-None", "-...", "-b'x'", "--5", "-x", "-(1+2)", "-[1]", "-a.b",
        ] {
            arg_fails(expr);
        }
    }

    #[test]
    fn unary_lenient_means_what_python_means() {
        let lenient = |e| arg_mode(e, false);
        assert!(same(&lenient("+5"), &Int(5)));
        assert!(same(&lenient("-5"), &Int(-5)));
        assert!(same(&lenient("~5"), &Int(-6)));
        assert!(same(&lenient("not 5"), &Bool(false)));
        assert!(same(&lenient("not 'x'"), &Bool(false)));
        assert!(same(&lenient("not None"), &Bool(true)));
        assert!(same(&lenient("+True"), &Int(1)));
        assert!(same(&lenient("~True"), &Int(-2)));
        assert!(same(&lenient("+1.5"), &Float(1.5)));
        // The operand must still be a literal.
        fails_mode("f(a=--5)", false);
        fails_mode("f(a=~1.5)", false);
        fails_mode("f(a=-'x')", false);
        // Only unary operators differ.
        assert!(same(&lenient("1 - -1"), &Int(2)));
        assert!(same(&lenient("[+5, x]"), &List(vec![Int(5), s("x")])));
    }

    #[test]
    fn binary_operations_are_evaluated() {
        check("1+2", Int(3));
        check("2*3", Int(6));
        check("7/2", Float(3.5));
        check("7//2", Int(3));
        check("-7//2", Int(-4));
        check("7//-2", Int(-4));
        check("-7%3", Int(2));
        check("7%-3", Int(-2));
        check("2**10", Int(1024));
        check("2**-1", Float(0.5));
        check("(-2)**2", Int(4));
        check("0-2**2", Int(-4));
        check("1 - -1", Int(2));
        check("1 + +1", Int(2));
        check("1.5+1", Float(2.5));
        check("0.1+0.2", Float(0.30000000000000004));
        check("-7.5//2", Float(-4.0));
        check("-7.5%2", Float(0.5));
        check("7.5%-2", Float(-0.5));
        check("1e308*10", Float(f64::INFINITY));
        check("2**0.5", Float(std::f64::consts::SQRT_2));
        check("10**30", Int(10i128.pow(30)));
        check(
            "10**40",
            other("int", "10000000000000000000000000000000000000000"),
        );
        check(
            "2**127 - 1 + 2**127",
            other("int", "340282366920938463463374607431768211455"),
        );
        check("0-2**127", Int(i128::MIN));
        check("10**30 // 7", Int(142857142857142857142857142857));
        check(
            "10**40 // 7",
            other("int", "1428571428571428571428571428571428571428"),
        );
        check("-(10**30) % 7", Int(6));
        check("10**30 / 3", Float(3.333333333333333e29));
        check("2**200 / 2**100", Float(1.2676506002282294e30));
        check("1<<100", Int(1 << 100));
        check(
            "1<<130",
            other("int", "1361129467683753853853498429727072845824"),
        );
        check("-1>>1", Int(-1));
        check("5&3", Int(1));
        check("5|3", Int(7));
        check("5^3", Int(6));
        check("-5&3", Int(3));
        check("True&True", Bool(true));
        check("True+True", Int(2));
        check("True/2", Float(0.5));
        check("'a'+'b'", s("ab"));
        check("'ab'*2", s("abab"));
        check("3*'x'", s("xxx"));
        check("'x'*-1", s(""));
        check("'x' * -(2**63)", s(""));
        check("(-1)**(10**50)", Int(1));
        check("(-1)**(10**50+1)", Int(-1));
        check("3**16384 % 7", Int(4));
        check("-1 >> 10**50", Int(-1));
        check("0 << 10**50", Int(0));
        check("[1]+[2]", List(vec![Int(1), Int(2)]));
        check("[0]*2", List(vec![Int(0), Int(0)]));
        check("(1,)+(2,)", Tuple(vec![Int(1), Int(2)]));
        check("b'a'+b'b'", other("bytes", "b'ab'"));
        check(
            "{'a': 1} | {'b': 2, 'a': 3}",
            dict(vec![(s("a"), Int(3)), (s("b"), Int(2))]),
        );
        check("[-1, not 1] + []", List(vec![Int(-1), Bool(false)]));
        check("(1+2j)*(3-1j)", other("complex", "(5+5j)"));
        check("1j/1", other("complex", "1j"));
        check(
            "[...] + [1]",
            List(vec![other("ellipsis", "Ellipsis"), Int(1)]),
        );
        for expr in [
            "-2**2",
            "x+1",
            "[x]+[1]",
            "1/0",
            "1//0",
            "1.0%0",
            "0**-1",
            "0.0**-1",
            "10.0**400",
            "'a'+1",
            "[1]+(2,)",
            "1@2",
            "None+1",
            "1<<-1",
            "1.5<<1",
            "1j//1",
            "'x' * -(2**70)",
            "[1] * -(2**63 + 1)",
            // Limits (BFCL would compute these).
            "'x'*10**7",
            "2**10**6",
        ] {
            arg_fails(expr);
        }
    }

    // --------------------------------------------------------------- prompt: calls

    #[test]
    fn calls_names_and_arguments() {
        let c = calls("[f(a=1), m.n.g(b='x'), f(a=1)]");
        let names: Vec<&str> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f", "m.n.g", "f"]);
        // Positional arguments are dropped (but must be valid Python).
        let c = calls("f(1, x, *y, lambda q: q, (x for x in y), a=3)");
        assert!(same(&c[0].1, &dict(vec![(s("a"), Int(3))])));
        // A repeated keyword keeps the last value.
        assert!(same(
            &calls("f(a=1, b=0, a=2)")[0].1,
            &dict(vec![(s("a"), Int(2)), (s("b"), Int(0))])
        ));
        // `**mapping` is stored under None.
        assert!(same(
            &calls("f(**{'a': 1})")[0].1,
            &dict(vec![(PyValue::None, dict(vec![(s("a"), Int(1))]))])
        ));
        // The name is the attribute chain up to the first non-name.
        assert_eq!(calls("g()(x=1)")[0].0, "");
        assert_eq!(calls("a[0].b(x=1)")[0].0, "b");
        assert_eq!(calls("(f)(x=1)")[0].0, "f");
        assert_eq!(calls("café.naïve(x=1)")[0].0, "café.naïve");
        assert!(same(&calls("f()")[0].1, &dict(vec![])));
    }

    #[test]
    fn nested_calls_and_subscripts() {
        check(
            "g(x=1, y='a')",
            dict(vec![(
                s("g"),
                dict(vec![(s("x"), Int(1)), (s("y"), s("a"))]),
            )]),
        );
        check(
            "m.g(1, x=1)",
            dict(vec![(s("m.g"), dict(vec![(s("x"), Int(1))]))]),
        );
        check(
            "g(**k)",
            dict(vec![(s("g"), dict(vec![(PyValue::None, s("k"))]))]),
        );
        // Without keywords: `ast.unparse` text, normalised.
        check("g()", s("g()"));
        check(
            "g( 1 ,\"a\" , [ 1,2 ] ,{ 'k' :1} ,(1,),-1 ,+1 ,~1, not 1)",
            s("g(1, 'a', [1, 2], {'k': 1}, (1,), -1, +1, ~1, not 1)"),
        );
        check(
            "g(1e5, 1E-7, 0x10, 1e16, 5j, 1e309, u'y', b'x', -0.0)",
            s("g(100000.0, 1e-07, 16, 1e+16, 5j, 1e309, u'y', b'x', -0.0)"),
        );
        check(
            r#"g('a"b', "a'b", 'a\'b"', '\xa0\u200b\x7f')"#,
            s(r#"g('a"b', "a'b", 'a\'b"', '\xa0\u200b\x7f')"#),
        );
        check(
            "g(a or b or not c, not a == b, -(-1), (a, b), a if b else c)",
            s("g(a or b or (not c), not a == b, --1, (a, b), a if b else c)"),
        );
        check(
            "g(a + b * c, (a + b) * c, a - (b - c), a ** b ** c, (a ** b) ** c, (-a) ** b)",
            s("g(a + b * c, (a + b) * c, a - (b - c), a ** b ** c, (a ** b) ** c, (-a) ** b)"),
        );
        check(
            "g(lambda a, /, b=1, *c, d, e=2, **k: 0)",
            s("g(lambda a, /, b=1, *c, d, e=2, **k: 0)"),
        );
        check("g(x for x in y)", s("g((x for x in y))"));
        check(
            "g([x for x in y if z], {k: v for k, v in y})",
            s("g([x for x in y if z], {k: v for k, v in y})"),
        );
        check(
            "g(1 .real, x.y, *a, await x ** 2, (yield))",
            s("g(1 .real, x.y, *a, await x ** 2, (yield))"),
        );
        // Subscripts: unparse(value) + "[" + unparse(slice) + "]", BFCL's own way.
        check("x[0]", s("x[0]"));
        check("x[1:2, 3]", s("x[(1:2, 3)]"));
        check("x[1,2]", s("x[(1, 2)]"));
        check("x[::2]", s("x[::2]"));
        check("x[*a]", s("x[(*a,)]"));
        check("(a+b)[0]", s("a + b[0]"));
        check("[1,2][0]", s("[1, 2][0]"));
        // Nested-call text cannot hold f-strings here (BFCL can).
        arg_fails("g(f'x')");
    }

    #[test]
    fn unsupported_values_fail() {
        for expr in [
            "x.y",
            "{1}",
            "f'{x}'",
            "a == b",
            "a and b",
            "a if b else c",
            "lambda: 1",
            "[x for x in y]",
            "(x for x in y)",
            "(b := 1)",
            "await x",
            "*b",
        ] {
            arg_fails(expr);
        }
    }

    #[test]
    fn syntax_follows_python() {
        for text in [
            "f(a=1, 2)",
            "f(**k, 2)",
            "f(**k, *a)",
            "f(1=2)",
            "f(True=1)",
            "f(if=1)",
            "f(a=1,,b=2)",
            "f(a=)",
            "f(x for x in y, 1)",
            "f(*)",
            "f(a=(*b))",
            "[f(a=1)]\n[g()]",
            "f(a=1); g()",
            "[f(a=1)\n  g()]",
            "f(a=1 b=2)",
            "f(a=x?)",
            "f(a=“quoted”)",
            "f(a=😀)",
            "f(a=x\u{a0}y)",
            "[f(a=1}]",
            "[f(a=1))]",
            "f(a=1)\0",
            "f(a=1)\\",
            "\u{feff}[f(a=1)]",
        ] {
            fails(text);
        }
        // Valid forms.
        assert_eq!(calls("f(a=1, *b)").len(), 1);
        // `a==1` is a positional comparison, dropped.
        assert!(same(&calls("f(a==1)")[0].1, &dict(vec![])));
        assert_eq!(calls("f(match=1, case=2, _=3, type=4)").len(), 1);
        assert_eq!(
            calls("f(\n    a=1,\n    b=[\n        1,\n    ],\n)").len(),
            1
        );
        assert_eq!(calls("[f(a=1),  # one\n g(b=2)  # two\n]").len(), 2);
        assert_eq!(calls("[f(a=\\\n1)]").len(), 1);
        assert_eq!(calls("[f . g (a=1)]")[0].0, "f.g");
    }

    #[test]
    fn top_level_shapes() {
        assert_eq!(calls("").len(), 0);
        assert_eq!(calls("[]").len(), 0);
        assert_eq!(calls("``````").len(), 0);
        assert_eq!(calls("f(a=1), g(b=2)").len(), 2);
        assert_eq!(calls("[f(a=1),]").len(), 1);
        assert_eq!(calls("\n\nf(a=1)\n\n").len(), 1);
        assert_eq!(calls("`f(a=1)`").len(), 1);
        assert_eq!(calls("f(a=1)\r\n").len(), 1);
        // The comment swallows the `]` BFCL appends.
        assert_eq!(calls("[f(a=1)] # done").len(), 1);
        assert_eq!(calls("[f(a=1)]\n  # indented comment").len(), 1);
        for text in [
            "[f(a=1)][0]",
            "[1, f(a=1)]",
            "[f, g(a=1)]",
            "[f(a=1) for f in x]",
            "{f(a=1)}",
            "[f(a=1)], [g(b=2)]",
            "(f(a=1), g(b=2))",
            "'f(a=1)'",
            "f(a=1)\ng(b=2)",
            "42",
            "None",
        ] {
            fails(text);
        }
    }

    #[test]
    fn code_fence_with_language_tag() {
        // BFCL strips the backticks, leaving `python\n[...]`: a subscript, so it fails.
        let (_, attempt) = fails("```python\n[get_weather(city='Paris')]\n```");
        assert!(!attempt);
    }

    #[test]
    fn prompt_attempt_rule() {
        for text in [
            "get_weather(city='Paris'",
            "[get_weather(city='Paris')] Let me know!",
            "[ get.weather(x=1) and",
            "[\n  f(a=x.y)]",
            "f(a=1)(b=2",
        ] {
            let (_, attempt) = fails(text);
            assert!(attempt, "{text}");
        }
        for text in [
            "I cannot help with that.",
            "Sure! [get_weather(city='Paris')]",
            "get weather(city='x')",
            "[1, f(a=1)]",
            "None",
            "```python\n[get_weather(city='Paris')]\n```",
        ] {
            let (_, attempt) = fails(text);
            assert!(!attempt, "{text}");
        }
    }

    // --------------------------------------------------------------- FC

    fn fc(v: serde_json::Value) -> Decoded {
        decode_fc(&v)
    }

    fn fc_calls(v: serde_json::Value) -> Vec<(String, PyValue)> {
        match fc(v.clone()) {
            Decoded::Calls(c) => c,
            Decoded::Failed { reason, .. } => panic!("{v} failed: {reason}"),
        }
    }

    fn fc_fails(v: serde_json::Value) -> bool {
        match fc(v.clone()) {
            Decoded::Failed { attempt, .. } => attempt,
            Decoded::Calls(c) => panic!("{v} decoded: {c:?}"),
        }
    }

    #[test]
    fn fc_results() {
        assert!(fc_calls(json!("")).is_empty());
        assert!(fc_calls(json!({})).is_empty());
        assert!(fc_calls(json!([])).is_empty());
        let c = fc_calls(json!([{"f": "{\"a\": 1, \"b\": [1.0, null]}"}, {"m.g": " {} \n"}]));
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].0, "m.g");
        assert!(same(
            &c[0].1,
            &dict(vec![
                (s("a"), Int(1)),
                (s("b"), List(vec![Float(1.0), PyValue::None]))
            ])
        ));
        // Only the first key counts.
        let c = fc_calls(json!([{"f": "{}", "g": "not json"}]));
        assert_eq!(c[0].0, "f");
        // JSON that is not an object decodes, and fails the shape check later.
        let d = fc(json!([{"f": "[1]"}]));
        assert!(matches!(&d, Decoded::Calls(c) if same(&c[0].1, &List(vec![Int(1)]))));
        assert!(!d.has_call_shape());
        assert!(same(&fc_calls(json!([{"f": "5"}]))[0].1, &Int(5)));
        assert!(same(&fc_calls(json!([{"": "{}"}]))[0].1, &dict(vec![])));
    }

    #[test]
    fn fc_failures_and_attempts() {
        // Not a list of calls: never an attempt.
        for v in [
            json!("I can't help with that"),
            json!({"a": "b"}),
            json!(null),
            json!(5),
            json!(true),
            json!([{}]),
            json!(["f"]),
            json!([[1]]),
            json!([{"": "{bad"}]),
        ] {
            assert!(!fc_fails(v.clone()), "{v}");
        }
        // A named call whose arguments do not decode: an attempt.
        for v in [
            json!([{"f": "{bad"}]),
            json!([{"f": {"a": 1}}]),
            json!([{"f": null}]),
            json!([{"f": ["{}"]}]),
            json!([{"f": "{'a': 1}"}]),
            json!([{"f": ""}]),
            json!([{"f": "{}"}, {}]),
            json!([{"f": "{}"}, "x"]),
        ] {
            assert!(fc_fails(v.clone()), "{v}");
        }
    }

    // --------------------------------------------------------------- json.loads

    fn loads(s: &str) -> PyValue {
        python_json_loads(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn loads_err(s: &str) -> String {
        match python_json_loads(s) {
            Err(e) => e,
            Ok(v) => panic!("{s:?} decoded: {v:?}"),
        }
    }

    #[test]
    fn json_values() {
        assert!(same(
            &loads(" \t\r\n{\"a\": [1, 1.0, 1e2, -0, -0.0, true, null]} \n"),
            &dict(vec![(
                s("a"),
                List(vec![
                    Int(1),
                    Float(1.0),
                    Float(100.0),
                    Int(0),
                    Float(-0.0),
                    Bool(true),
                    PyValue::None
                ])
            )])
        ));
        assert!(matches!(loads("NaN"), Float(f) if f.is_nan()));
        assert!(same(
            &loads("[Infinity, -Infinity, 1e400]"),
            &List(vec![
                Float(f64::INFINITY),
                Float(f64::NEG_INFINITY),
                Float(f64::INFINITY)
            ])
        ));
        assert!(same(
            &loads("170141183460469231731687303715884105727"),
            &Int(i128::MAX)
        ));
        assert!(same(
            &loads("-170141183460469231731687303715884105729"),
            &other("int", "-170141183460469231731687303715884105729")
        ));
        assert!(matches!(loads(&"1".repeat(4300)), PyValue::Other { .. }));
        assert!(matches!(
            loads(&format!("-{}", "1".repeat(4300))),
            PyValue::Other { .. }
        ));
        // Duplicate keys: last value, first position.
        assert!(same(
            &loads("{\"a\":1,\"b\":2,\"a\":3}"),
            &dict(vec![(s("a"), Int(3)), (s("b"), Int(2))])
        ));
        assert!(same(
            &loads(r#""\ud83d\ude00 \u00e9 \/ \b\f\n\r\t""#),
            &s("😀 é / \u{8}\u{c}\n\r\t")
        ));
        assert!(same(&loads(r#""\ud800\u0041""#), &s("\u{FFFD}A")));
        assert!(same(&loads(r#""\udc00\ud800""#), &s("\u{FFFD}\u{FFFD}")));
        assert!(same(&loads("\"é😀\u{7f}\""), &s("é😀\u{7f}")));
    }

    #[test]
    fn json_errors_have_python_messages() {
        let cases = [
            ("", "Expecting value: line 1 column 1 (char 0)"),
            ("  ", "Expecting value: line 1 column 3 (char 2)"),
            (
                "{\"a\":1,}",
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                "\u{feff}{}",
                "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            ),
            (
                "\"\u{1}\"",
                "Invalid control character at: line 1 column 2 (char 1)",
            ),
            (
                "\"a\tb\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            ("\"\\x\"", "Invalid \\escape: line 1 column 2 (char 1)"),
            (
                "\"\\u12\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "\"abc",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            ("-NaN", "Expecting value: line 1 column 1 (char 0)"),
            ("+1", "Expecting value: line 1 column 1 (char 0)"),
            ("01", "Extra data: line 1 column 2 (char 1)"),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("1e", "Extra data: line 1 column 2 (char 1)"),
            ("nulls", "Extra data: line 1 column 5 (char 4)"),
            ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
            (
                "{\"a\" 1}",
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            (
                "{1:2}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                "[\n1,\n2\n}",
                "Expecting ',' delimiter: line 4 column 1 (char 7)",
            ),
            ("{\"é\": x}", "Expecting value: line 1 column 7 (char 6)"),
            (
                "{'a': 1}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            ("True", "Expecting value: line 1 column 1 (char 0)"),
        ];
        for (input, msg) in cases {
            assert_eq!(loads_err(input), msg, "{input:?}");
        }
        assert_eq!(
            loads_err(&"1".repeat(4301)),
            "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 \
             digits; use sys.set_int_max_str_digits() to increase the limit"
        );
    }

    // --------------------------------------------------------------- hostile input

    #[test]
    fn nesting_limits() {
        // CPython's tokenizer allows 200 open brackets, the added `[` included.
        let nested = |n: usize| format!("f(a={}1{})", "[".repeat(n), "]".repeat(n));
        assert!(matches!(
            decode_prompt(&nested(198), true),
            Decoded::Calls(_)
        ));
        let (reason, attempt) = fails(&nested(199));
        assert!(reason.contains("too many nested parentheses") && attempt);
        assert!(matches!(
            decode_prompt(&"[".repeat(200), true),
            Decoded::Failed { .. }
        ));
        let dicts = |n: usize| format!("f(a={}1{})", "{'k': ".repeat(n), "}".repeat(n));
        assert!(matches!(
            decode_prompt(&dicts(198), true),
            Decoded::Calls(_)
        ));
        fails(&dicts(199));
        // Long chains build deep trees.
        fails(&format!("f(a={})", vec!["1"; 400].join("+")));
        assert!(matches!(arg(&vec!["1"; 250].join("+")), Int(250)));
        fails(&format!("f({}1)", "-".repeat(100_000)));
        fails(&format!("f(a=g{}(1))", ".x".repeat(100_000)));
        fails(&format!("f(a={})", "not ".repeat(100_000)));
        // JSON.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(python_json_loads(&deep(900)).is_ok());
        assert!(loads_err(&deep(901)).contains("maximum recursion depth"));
    }

    #[test]
    fn huge_inputs_fail_fast() {
        let megabyte_of_brackets = "[".repeat(1 << 20);
        fails(&megabyte_of_brackets);
        assert!(python_json_loads(&megabyte_of_brackets).is_err());
        assert!(python_json_loads(&"{\"a\":".repeat(1 << 18)).is_err());
        fails(&format!("f(a='{}", "x".repeat(1 << 20)));
        fails(&format!("f(a='''{}", "x\n".repeat(1 << 19)));
        assert!(python_json_loads(&format!("\"{}", "x".repeat(1 << 20))).is_err());
        fails(&format!("f(a=0x{})", "f".repeat(1 << 20)));
        fails(&format!("f(a={})", "9".repeat(1 << 20)));
        fails("f(a=2**10**9)");
        fails("f(a=1<<10**9)");
        fails("f(a='x'*10**9)");
        fails("f(a=[0]*10**9)");
        fails("f(a=10**10**10)");
        assert!(python_json_loads(&"9".repeat(1 << 20)).is_err());
        // Large but well-formed input decodes.
        let many = format!(
            "[{}]",
            (0..5000)
                .map(|i| format!("f{i}(a={i})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert_eq!(calls(&many).len(), 5000);
        let wide = format!(
            "f(a={{{}}})",
            (0..20000)
                .map(|i| format!("{i}: {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(matches!(arg(&wide[4..wide.len() - 1]), PyValue::Dict(d) if d.len() == 20000));
    }

    #[test]
    fn worst_cases_fit_a_small_stack() {
        // On a stack far below the 2 MiB of spawned or tokio threads, debug build
        // included: deep input moves to a thread of its own, JSON parsing is iterative,
        // and what stays on the caller's stack is bounded.
        let run = || {
            let nested = |open: &str, close: &str, n: usize| {
                format!("f(a={}1{})", open.repeat(n), close.repeat(n))
            };
            let chain = |op: &str, n: usize| vec!["x"; n].join(op);
            let inputs = [
                nested("[", "]", 197),
                nested("(", ")", 197),
                nested("{'k': ", "}", 197),
                nested("g(x=", ")", 197),
                format!("f(a=g({}))", nested("[", "]", 195)),
                // Just under the in-place threshold.
                nested("[", "]", 14),
                format!("f(a=g({}))", nested("(", ")", 13)),
                format!("f(a={}1)", "-".repeat(28)),
                // Chains the parser reads in a loop, walked recursively afterwards.
                format!("f(a=1/{})", chain("/", 298)),
                format!("f(a=g({}))", chain("|", 298)),
                format!("f(a=g{}(1))", ".x".repeat(298)),
                format!("f(a=x{})", "[0]".repeat(298)),
                format!("f({}1)", "-".repeat(100_000)),
                format!("f(a={})", "not ".repeat(100_000)),
                "[".repeat(1 << 20),
            ];
            // The first seven are within the limits (under 200 brackets) and decode; the
            // rest fail, each for a reason of its own: nested unary minus (the operand
            // must be a literal), arithmetic on names, an attribute call, subscripts, and
            // the three beyond every limit.
            let decoded: Vec<bool> = inputs
                .iter()
                .map(|text| matches!(decode_prompt(text, true), Decoded::Calls(_)))
                .collect();
            let mut want = vec![true; 7];
            want.resize(inputs.len(), false);
            assert_eq!(decoded, want);
            let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
            assert!(python_json_loads(&deep(900)).is_ok());
            // 900 objects opened and none given a value: Python stops at the end.
            assert_eq!(
                python_json_loads(&"{\"a\":".repeat(900)).err().as_deref(),
                Some("Expecting value: line 1 column 4501 (char 4500)")
            );
            assert!(matches!(
                decode_fc(&json!([{"f": format!("{{\"a\": {}}}", deep(899))}])),
                Decoded::Calls(c) if c.len() == 1
            ));
        };
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(run)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
    }

    // --------------------------------------------------------------- repr helpers

    #[test]
    fn python_reprs() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (0.1, "0.1"),
            (123456789.123, "123456789.123"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "nan"),
        ];
        for (x, repr) in cases {
            assert_eq!(float_repr(x, true), repr);
        }
        assert_eq!(complex_repr(0.0, 5.0), "5j");
        assert_eq!(complex_repr(-0.0, -5.0), "(-0-5j)");
        assert_eq!(complex_repr(1.0, f64::NAN), "(1+nanj)");
        assert_eq!(str_repr("a'b"), "\"a'b\"");
        assert_eq!(str_repr("a'b\""), "'a\\'b\"'");
        assert_eq!(str_repr("\u{0}\u{ad}é😀\u{2028}"), "'\\x00\\xadé😀\\u2028'");
        assert_eq!(bytes_repr(b"\x00'\"\x7f"), "b'\\x00\\'\"\\x7f'");
    }

    #[test]
    fn big_integers() {
        let big = |s: &str| BigInt::from_radix(s, 10).expect("digits");
        let a = big("123456789012345678901234567890123456789");
        let b = big("987654321987654321");
        let (q, r) = a.divmod_floor(&b).expect("non-zero");
        assert_eq!(q.mul(&b).add(&r), a);
        assert_eq!(q.to_decimal(), "124999998748437501153");
        assert_eq!(
            a.clone()
                .negate()
                .divmod_floor(&b)
                .map(|(q, _)| q.to_decimal()),
            Some("-124999998748437501154".into())
        );
        assert_eq!(BigInt::from_i128(i128::MIN).to_i128(), Some(i128::MIN));
        assert_eq!(
            big("170141183460469231731687303715884105728").to_i128(),
            None
        );
        assert_eq!(big("9007199254740993").to_f64(), Ok(9007199254740992.0));
        assert_eq!(
            BigInt::from_integral_f64(1e30).to_decimal(),
            "1000000000000000019884624838656"
        );
    }
}
