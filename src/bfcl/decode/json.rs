//! Python's `json.loads`, as CPython 3.11's C scanner parses (iteratively here).

use indexmap::IndexMap;

use super::{INT_MAX_STR_DIGITS, JSON_MAX_DEPTH, int_limit_message};
use crate::bfcl::value::PyValue;

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

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use crate::bfcl::decode::testing::*;
    use crate::bfcl::value::PyValue;
    use PyValue::{Bool, Float, Int, List};

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
}
