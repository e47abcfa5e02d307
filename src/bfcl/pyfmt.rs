//! Python's text forms of a [`PyValue`], byte for byte as CPython 3.11 writes them:
//! `repr`, `str`, `json.dumps` with its default arguments, and the text BFCL's multi-turn
//! executor makes of a function's return value ([`result_text`]). BFCL compares those
//! result strings as strings, so "close" is not enough. Checked against fixtures that
//! CPython itself produced (tests/bfcl_py/generate_fixtures.py).

mod unprintable;

use std::fmt::Write as _;

use super::value::PyValue;

/// Why `json.dumps` raises, with Python's `TypeError` text as the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonDumpsError {
    /// A dict key of a type JSON keys cannot be made from (a tuple, bytes...).
    #[error("keys must be str, int, float, bool or None, not {0}")]
    Key(String),
    /// A value of a type the encoder does not know (bytes, complex...).
    #[error("Object of type {0} is not JSON serializable")]
    Value(String),
}

/// Python's `repr(v)`.
pub fn py_repr(v: &PyValue) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

/// Python's `str(v)`: the string itself for a str, `repr` for everything else (a
/// container's `str` shows its items' `repr`, so only the top level differs).
pub fn py_str(v: &PyValue) -> String {
    match v {
        PyValue::Str(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `json.dumps(v)` with the default arguments: separators `", "` and `": "`,
/// `ensure_ascii=True`, NaN and the infinities allowed, keys in insertion order, tuples
/// as arrays, int/float/bool/None keys turned into strings.
pub fn json_dumps(v: &PyValue) -> Result<String, JsonDumpsError> {
    let mut out = String::new();
    write_json(&mut out, v)?;
    Ok(out)
}

/// The text BFCL's multi-turn executor makes of a function's return value: a str as is,
/// a dict through `json.dumps` (falling back to `str()` when that raises, as BFCL
/// does), anything else through `str()`.
pub fn result_text(v: &PyValue) -> String {
    match v {
        PyValue::Str(s) => s.clone(),
        PyValue::Dict(_) => json_dumps(v).unwrap_or_else(|_| py_repr(v)),
        other => py_str(other),
    }
}

/// Python's `repr(x)` of a float (`str(x)` is the same): the shortest digits that read
/// back as `x`, in positional notation for exponents from -5 to 15 (`1e-05` and
/// `1e+16` switch to exponent notation), always with a fractional part or an exponent.
pub fn float_repr(x: f64) -> String {
    // Backends return the same floats over and over (BFCL's long-context padding is
    // thousands of fixed prices in every answer), and finding Python's digits formats
    // each one twice: each thread keeps the texts it made, up to a bound.
    thread_local! {
        static MADE: std::cell::RefCell<rustc_hash::FxHashMap<u64, String>> =
            std::cell::RefCell::new(rustc_hash::FxHashMap::default());
    }
    MADE.with(|made| {
        if let Some(text) = made.borrow().get(&x.to_bits()) {
            return text.clone();
        }
        let text = float_repr_uncached(x);
        let mut made = made.borrow_mut();
        if made.len() < 1 << 16 {
            made.insert(x.to_bits(), text.clone());
        }
        text
    })
}

fn float_repr_uncached(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let sci = shortest_digits(x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if x.is_sign_negative() {
        out.push('-');
    }
    // Python's repr: positional notation when -4 <= exponent < 16.
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point as usize >= digits.len() {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            out.push_str(".0");
        } else {
            let (int, frac) = digits.split_at(point as usize);
            out.push_str(int);
            out.push('.');
            out.push_str(frac);
        }
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// The shortest digits that read back as `x` (finite, not negative), as Rust's `{:e}`
/// writes them (`d.ddde[-]N`), with Python's choice between two equally short
/// candidates.
fn shortest_digits(x: f64) -> String {
    // Rust's `{:e}` gives the shortest round-trip digit count, but when the value lies
    // exactly halfway between two shortest candidates (961224003834359.25) it may take
    // the upper one, where Python's repr takes the nearest with ties to even. The
    // correctly rounded decimal of that many digits (Rust's precision formatting
    // rounds ties to even) is Python's pick whenever it reads back as `x`.
    let shortest = format!("{x:e}");
    let digits = shortest
        .split('e')
        .next()
        .map_or(0, |m| m.chars().filter(char::is_ascii_digit).count());
    let nearest = format!("{:.*e}", digits.saturating_sub(1), x);
    if nearest.parse::<f64>() == Ok(x) {
        nearest
    } else {
        shortest
    }
}

/// Python's `repr(s)` of a str: single quotes unless the text has a single quote and
/// no double quote; backslash escapes for the quote, `\\`, `\t`, `\n`, `\r`; `\xXX`,
/// `\uXXXX` or `\UXXXXXXXX` for what `str.isprintable()` rejects; every other
/// character (non-ASCII included) as is.
pub fn str_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str_repr(&mut out, s);
    out
}

/// Python's `str.isprintable()` for one character (Python 3.11's Unicode 14 table).
pub fn is_printable(c: char) -> bool {
    let cp = u32::from(c);
    // ASCII first: it is nearly all of what BFCL's backends print.
    if cp < 0x7F {
        return cp >= 0x20;
    }
    let table = unprintable::UNPRINTABLE;
    let i = table.partition_point(|&(_, hi)| hi < cp);
    table.get(i).is_none_or(|&(lo, _)| lo > cp)
}

fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let cp = u32::from(c);
                let _ = if cp <= 0xFF {
                    write!(out, "\\x{cp:02x}")
                } else if cp <= 0xFFFF {
                    write!(out, "\\u{cp:04x}")
                } else {
                    write!(out, "\\U{cp:08x}")
                };
            }
        }
    }
    out.push(quote);
}

fn write_items<'a>(
    out: &mut String,
    items: impl Iterator<Item = &'a PyValue>,
    mut each: impl FnMut(&mut String, &PyValue),
) -> usize {
    let mut n = 0;
    for v in items {
        if n > 0 {
            out.push_str(", ");
        }
        each(out, v);
        n += 1;
    }
    n
}

fn write_repr(out: &mut String, v: &PyValue) {
    match v {
        PyValue::None => out.push_str("None"),
        PyValue::Bool(true) => out.push_str("True"),
        PyValue::Bool(false) => out.push_str("False"),
        PyValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        PyValue::Float(x) => out.push_str(&float_repr(*x)),
        PyValue::Str(s) => write_str_repr(out, s),
        PyValue::List(items) => {
            out.push('[');
            write_items(out, items.iter(), write_repr);
            out.push(']');
        }
        PyValue::Tuple(items) => {
            out.push('(');
            // A one-item tuple keeps its comma: `(1,)`.
            if write_items(out, items.iter(), write_repr) == 1 {
                out.push(',');
            }
            out.push(')');
        }
        PyValue::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
        PyValue::Other { repr, .. } => out.push_str(repr),
    }
}

/// JSON's text for a float as Python's encoder writes it: `float.__repr__`, except
/// NaN and the infinities, which it writes as JavaScript names.
fn json_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        float_repr(x)
    }
}

/// A JSON string with `ensure_ascii`: only printable ASCII stays as is; astral
/// characters become a UTF-16 surrogate pair of lower-case `\uXXXX` escapes.
fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn write_json(out: &mut String, v: &PyValue) -> Result<(), JsonDumpsError> {
    match v {
        PyValue::None => out.push_str("null"),
        PyValue::Bool(true) => out.push_str("true"),
        PyValue::Bool(false) => out.push_str("false"),
        PyValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        PyValue::Float(x) => out.push_str(&json_float(*x)),
        PyValue::Str(s) => write_json_str(out, s),
        PyValue::List(items) | PyValue::Tuple(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item)?;
            }
            out.push(']');
        }
        PyValue::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_key(out, k)?;
                out.push_str(": ");
                write_json(out, v)?;
            }
            out.push('}');
        }
        // An int beyond i128 is still an int to the encoder.
        PyValue::Other { type_name, repr } if type_name == "int" => out.push_str(repr),
        PyValue::Other { type_name, .. } => return Err(JsonDumpsError::Value(type_name.clone())),
    }
    Ok(())
}

/// A dict key as Python's encoder converts it: a str as is; a float, bool, None or int
/// to the text it would have as a value, then quoted.
fn write_json_key(out: &mut String, k: &PyValue) -> Result<(), JsonDumpsError> {
    let text = match k {
        PyValue::Str(s) => {
            write_json_str(out, s);
            return Ok(());
        }
        PyValue::Float(x) => json_float(*x),
        PyValue::Bool(b) => b.to_string(),
        PyValue::None => "null".to_owned(),
        PyValue::Int(i) => i.to_string(),
        PyValue::Other { type_name, repr } if type_name == "int" => repr.clone(),
        other => return Err(JsonDumpsError::Key(other.type_name().to_owned())),
    };
    // The converted text is plain ASCII without quotes or backslashes.
    out.push('"');
    out.push_str(&text);
    out.push('"');
    Ok(())
}

#[cfg(test)]
pub(super) mod tests;
