//! Where each value of a suite (YAML) or a JSON file was written, by JSON pointer.
//!
//! serde_json keeps no locations and the suite model keeps only a few, so the linter
//! reads the file a second time into a map from JSON pointer (`/tools/0/parameters/
//! properties/city`) to the position of the value, or of its key for a member of a
//! mapping (`city:` in YAML, `"city":` in JSON), which is where a reader looks.

use std::collections::HashMap;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::model::Position;

/// Positions by JSON pointer (`""` is the whole document).
pub type Positions = HashMap<String, Position>;

/// The positions of every value of YAML `text` (JSON is YAML too). A text that does
/// not parse gives no positions: the suite loader reports its errors.
pub fn yaml_positions(text: &str) -> Positions {
    let mut out = Positions::new();
    if let Ok(root) = serde_saphyr::from_str::<Node>(text) {
        root.collect("", &mut out);
    }
    out
}

/// The positions of every value of JSON `text`; `None` when it is not JSON.
pub fn json_positions(text: &str) -> Option<Positions> {
    let mut s = Scanner {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        column: 1,
        out: Positions::new(),
    };
    s.skip_ws();
    let at = s.here();
    s.value("", at)?;
    Some(s.out)
}

/// A pointer step: `~` and `/` escaped.
pub fn escape(step: &str) -> String {
    step.replace('~', "~0").replace('/', "~1")
}

/// A YAML node and where it starts.
struct Node {
    at: Position,
    kind: Kind,
}

/// A YAML node's content (scalars are not kept: only positions are wanted).
enum Kind {
    Map(Vec<(String, Position, Node)>),
    Seq(Vec<Node>),
    Scalar,
}

impl Node {
    fn collect(&self, pointer: &str, out: &mut Positions) {
        out.entry(pointer.to_string()).or_insert(self.at);
        match &self.kind {
            Kind::Map(members) => {
                for (key, at, value) in members {
                    let p = format!("{pointer}/{}", escape(key));
                    out.insert(p.clone(), *at);
                    value.collect_inner(&p, out);
                }
            }
            Kind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    item.collect(&format!("{pointer}/{i}"), out);
                }
            }
            Kind::Scalar => {}
        }
    }

    /// Like [`Node::collect`], for a member value whose own pointer is already set to
    /// its key.
    fn collect_inner(&self, pointer: &str, out: &mut Positions) {
        let key = out.get(pointer).copied();
        self.collect(pointer, out);
        if let Some(k) = key {
            out.insert(pointer.to_string(), k);
        }
    }
}

fn position(line: u64, column: u64) -> Position {
    Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<Kind>::deserialize(deserializer)?;
        Ok(Node {
            at: position(s.referenced.line(), s.referenced.column()),
            kind: s.value,
        })
    }
}

/// A mapping key of any scalar type, as text.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(Key(s.to_string()))
            }
            fn visit_bool<E>(self, b: bool) -> Result<Key, E> {
                Ok(Key(b.to_string()))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Key, E> {
                Ok(Key(i.to_string()))
            }
            fn visit_u64<E>(self, u: u64) -> Result<Key, E> {
                Ok(Key(u.to_string()))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Key, E> {
                Ok(Key(f.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Key, E> {
                Ok(Key("null".into()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Kind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_none<E>(self) -> Result<Kind, E> {
                Ok(Kind::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
                let mut items = Vec::new();
                while let Some(n) = seq.next_element::<Node>()? {
                    items.push(n);
                }
                Ok(Kind::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
                let mut members = Vec::new();
                while let Some(k) = map.next_key::<serde_saphyr::Spanned<Key>>()? {
                    let at = position(k.referenced.line(), k.referenced.column());
                    let v = map.next_value::<Node>()?;
                    members.push((k.value.0, at, v));
                }
                Ok(Kind::Map(members))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A JSON reader that keeps only positions.
struct Scanner {
    chars: Vec<char>,
    i: usize,
    line: u32,
    column: u32,
    out: Positions,
}

impl Scanner {
    fn here(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = *self.chars.get(self.i)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn expect(&mut self, c: char) -> Option<()> {
        self.skip_ws();
        (self.bump()? == c).then_some(())
    }

    /// Read a string (at its opening quote) and return it unescaped enough for keys
    /// (`\uXXXX` escapes decoded, surrogate pairs too).
    fn string(&mut self) -> Option<String> {
        self.expect('"')?;
        let mut s = String::new();
        loop {
            match self.bump()? {
                '"' => return Some(s),
                '\\' => match self.bump()? {
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| self.bump()).collect();
                        let mut code = u32::from_str_radix(&hex, 16).ok()?;
                        if (0xD800..0xDC00).contains(&code) && self.peek() == Some('\\') {
                            self.bump();
                            self.bump();
                            let low: String = (0..4).filter_map(|_| self.bump()).collect();
                            let low = u32::from_str_radix(&low, 16).ok()?;
                            code = 0x10000 + ((code - 0xD800) << 10) + (low.saturating_sub(0xDC00));
                        }
                        s.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    }
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'b' => s.push('\u{8}'),
                    'f' => s.push('\u{c}'),
                    other => s.push(other),
                },
                c => s.push(c),
            }
        }
    }

    /// Read the value at the cursor, recorded at `pointer` (at `at`, its key's position
    /// for a member).
    fn value(&mut self, pointer: &str, at: Position) -> Option<()> {
        self.skip_ws();
        self.out.insert(pointer.to_string(), at);
        match self.peek()? {
            '{' => {
                self.bump();
                self.skip_ws();
                if self.peek() == Some('}') {
                    self.bump();
                    return Some(());
                }
                loop {
                    self.skip_ws();
                    let key_at = self.here();
                    let key = self.string()?;
                    self.expect(':')?;
                    self.value(&format!("{pointer}/{}", escape(&key)), key_at)?;
                    self.skip_ws();
                    match self.bump()? {
                        ',' => {}
                        '}' => return Some(()),
                        _ => return None,
                    }
                }
            }
            '[' => {
                self.bump();
                self.skip_ws();
                if self.peek() == Some(']') {
                    self.bump();
                    return Some(());
                }
                let mut i = 0;
                loop {
                    self.skip_ws();
                    let item_at = self.here();
                    self.value(&format!("{pointer}/{i}"), item_at)?;
                    i += 1;
                    self.skip_ws();
                    match self.bump()? {
                        ',' => {}
                        ']' => return Some(()),
                        _ => return None,
                    }
                }
            }
            '"' => self.string().map(|_| ()),
            _ => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                {
                    self.bump();
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(p: &Positions, pointer: &str) -> (u32, u32) {
        let x = p[pointer];
        (x.line, x.column)
    }

    #[test]
    fn yaml_members_are_at_their_keys() {
        let text = "name: s\ntools:\n  - name: get_weather\n    description: Weather.\n    parameters:\n      type: object\n      properties:\n        city: { type: string }\n";
        let p = yaml_positions(text);
        assert_eq!(at(&p, "/tools/0/name"), (3, 5));
        assert_eq!(at(&p, "/tools/0/description"), (4, 5));
        assert_eq!(at(&p, "/tools/0/parameters/properties/city"), (8, 9));
        assert_eq!(at(&p, "/tools/0/parameters/properties/city/type"), (8, 17));
    }

    #[test]
    fn json_members_are_at_their_keys() {
        let text = "{\"tools\": [\n  {\"name\": \"a\\u00e9\", \"inputSchema\": {\"properties\": {\"x/y\": {}}}}\n]}";
        let p = json_positions(text).unwrap();
        assert_eq!(at(&p, "/tools/0"), (2, 3));
        assert_eq!(at(&p, "/tools/0/name"), (2, 4));
        assert_eq!(at(&p, "/tools/0/inputSchema/properties/x~1y"), (2, 54));
        assert!(json_positions("{\"a\": ").is_none());
    }
}
