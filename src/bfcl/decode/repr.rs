//! Python's `repr` of str, bytes, float and complex values.

use std::sync::LazyLock;

use regex::Regex;

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
pub(super) fn str_repr(s: &str) -> String {
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
pub(super) fn bytes_repr(b: &[u8]) -> String {
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
pub(super) fn float_repr(x: f64, add_dot_0: bool) -> String {
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
pub(super) fn complex_repr(re: f64, im: f64) -> String {
    let imag = float_repr(im, false);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{imag}j");
    }
    let sign = if imag.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{imag}j)", float_repr(re, false))
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use super::*;

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
}
