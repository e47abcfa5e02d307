//! JSON for a `<script type="application/json">` block of `report.html`, written
//! straight from `Serialize` values by serde_json, byte for byte what minijinja's
//! `tojson` filter writes for the same value.
//!
//! Why not the filter: it first converts the value into a tree of template values (an
//! allocation per string, map and list) and then walks that tree. For a run's trial data
//! (2 MB for 1,600 trials) that was most of the page's rendering time, and the page is
//! rendered between a run's last answer and its exit.
//!
//! What the filter writes, and so what this writes: `", "` between items and `": "`
//! after keys (its spaced style); maps and structs in their serialisation order; floats
//! in the shortest form that reads back (`410.0`, `1e+16`; serde_json and minijinja both
//! format them as zmij does), non-finite ones as `null`; strings with `"`, `\` and
//! control characters escaped (`\n`, `\t`, `\r`, `\b`, `\f`, otherwise `\u00XX` in
//! lowercase hex) and, so that no text can end the script block or open a comment, `<`,
//! `>`, `&` and `'` as `\u003c`, `\u003e`, `\u0026` and `\u0027`. A test compares the two
//! on values with every such character.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, Serializer};

/// `value` as minijinja's `tojson` writes it (see the module documentation), as text.
#[cfg(test)]
pub(crate) fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    to_writer(&mut out, value)?;
    // serde_json writes UTF-8: every fragment comes from a `&str`, every escape is ASCII.
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// `value` as minijinja's `tojson` writes it, written into `out` (no copy of the whole
/// text is held: a run's trial data is megabytes).
pub(crate) fn to_writer<W: Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
) -> Result<(), serde_json::Error> {
    let mut ser = Serializer::with_formatter(out, Spaced);
    value.serialize(&mut ser)
}

/// serde_json's compact formatter with minijinja's spacing and HTML-safe strings.
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    /// A run of characters serde_json does not escape itself: `<`, `>`, `&` and `'` are
    /// escaped here.
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if matches!(b, b'<' | b'>' | b'&' | b'\'') {
                w.write_all(&bytes[start..i])?;
                write_hex_escape(w, b)?;
                start = i + 1;
            }
        }
        w.write_all(&bytes[start..])
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        match escape {
            CharEscape::Quote => w.write_all(b"\\\""),
            CharEscape::ReverseSolidus => w.write_all(b"\\\\"),
            CharEscape::Solidus => w.write_all(b"\\/"),
            CharEscape::Backspace => w.write_all(b"\\b"),
            CharEscape::FormFeed => w.write_all(b"\\f"),
            CharEscape::LineFeed => w.write_all(b"\\n"),
            CharEscape::CarriageReturn => w.write_all(b"\\r"),
            CharEscape::Tab => w.write_all(b"\\t"),
            CharEscape::AsciiControl(b) => write_hex_escape(w, b),
        }
    }
}

/// `\u00XX` with lowercase hex digits.
fn write_hex_escape<W: ?Sized + Write>(w: &mut W, b: u8) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    w.write_all(&[
        b'\\',
        b'u',
        b'0',
        b'0',
        HEX[usize::from(b >> 4)],
        HEX[usize::from(b & 0xf)],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::value::{Serde, Value};
    use serde_json::json;

    /// What the template filter writes for `value`.
    fn filter(value: &impl Serialize) -> String {
        let mut env = minijinja::Environment::new();
        env.add_template("t.html.j2", "{{ v|tojson }}").unwrap();
        env.get_template("t.html.j2")
            .unwrap()
            .render(minijinja::context! { v => Value::from(Serde(value)) })
            .unwrap()
    }

    fn same(value: &impl Serialize) {
        assert_eq!(to_string(value).unwrap(), filter(value));
    }

    #[test]
    fn strings_with_every_escaped_character_match_the_filter() {
        let mut all_ascii = String::new();
        for b in 0u8..=0x7f {
            all_ascii.push(char::from(b));
        }
        same(&all_ascii);
        same(&"</script><!-- it's a & b -->");
        same(&"北京 \u{2028} \u{2029} \u{feff} 😀 \u{85} \u{9b}[31m");
        same(&"");
        same(&json!({"<key>": "a'b", "k\n": ["\u{1b}[0m", "\\", "\"", "/"]}));
    }

    #[test]
    fn numbers_match_the_filter() {
        for v in [
            0.0,
            -0.0,
            410.0,
            0.1,
            1.0 / 3.0,
            59.334179,
            1e16,
            1.5e-7,
            1e21,
            123456789.125,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::NAN,
            f64::INFINITY,
        ] {
            same(&v);
            same(&json!([v]));
        }
        same(&json!([0, -1, u64::MAX, i64::MIN, 1.5]));
        same(&(u64::MAX, i64::MIN, 7u8, -7i16));
    }

    #[test]
    fn containers_and_structs_match_the_filter() {
        #[derive(Serialize, Clone)]
        #[serde(rename_all = "snake_case")]
        enum Kind {
            ShouldCall,
            Other(u32),
        }
        #[derive(Serialize, Clone)]
        struct Row<'a> {
            case_id: &'a str,
            kind: Kind,
            other: Kind,
            #[serde(skip_serializing_if = "Option::is_none")]
            absent: Option<u32>,
            none: Option<u32>,
            empty: Vec<u32>,
            empty_map: std::collections::BTreeMap<String, u32>,
            nested: Vec<Vec<&'a str>>,
            unit: (),
            flag: bool,
            bytes: &'a [u8],
            ch: char,
        }
        let rows = vec![
            Row {
                case_id: "a<b>",
                kind: Kind::ShouldCall,
                other: Kind::Other(3),
                absent: None,
                none: None,
                empty: vec![],
                empty_map: Default::default(),
                nested: vec![vec![], vec!["x", "y'"]],
                unit: (),
                flag: true,
                bytes: b"\x00\xff",
                ch: '&',
            };
            2
        ];
        same(&rows);
        same(&json!({}));
        same(&json!([]));
        same(&json!({"a": {"b": [1, {"c": null}]}, "z": [true, false]}));
    }
}
