//! CPython 3.11's tokenizer for one expression: numbers, strings with their escapes,
//! names, operators, brackets, and its error messages.

use std::sync::LazyLock;

use regex::Regex;

use super::int::{self, BigInt};
use super::{INT_MAX_STR_DIGITS, MAX_BRACKETS, PResult, int_limit_message};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
pub(super) enum StrLit {
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
pub(super) fn tokenize(src: &str) -> PResult<Vec<Tok>> {
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
        return Ok((Tok::Int(int::parse(&digits, radix)?), i));
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
                return Ok((Tok::Int(BigInt::ZERO), i));
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
        return int::parse(&clean, 10).map(Tok::Int);
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

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use crate::bfcl::decode::testing::*;
    use crate::bfcl::value::PyValue;
    use PyValue::{Float, Int};

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
}
