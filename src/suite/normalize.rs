//! String normalisation declared by suites and matchers (never applied silently).
//!
//! A [`Normalizer`] is a set of [`NormalizeRule`]s applied in a fixed order: Unicode
//! composition (NFC) first, so every later rule sees one form of each letter; full-width
//! forms next (so `，` becomes `,` before punctuation is removed), then punctuation,
//! case folding, and whitespace last (so removed punctuation leaves no double spaces).

use std::borrow::Cow;

use super::model::NormalizeRule;

/// A fixed set of normalisation rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Normalizer {
    casefold: bool,
    whitespace: bool,
    punctuation: bool,
    fullwidth: bool,
    /// Written only when set, so records of suites without it are as before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    nfc: bool,
}

impl Normalizer {
    /// A normaliser applying `rules`.
    pub fn new(rules: &[NormalizeRule]) -> Self {
        let mut n = Normalizer::default();
        for rule in rules {
            match rule {
                NormalizeRule::Casefold => n.casefold = true,
                NormalizeRule::Whitespace => n.whitespace = true,
                NormalizeRule::Punctuation => n.punctuation = true,
                NormalizeRule::Fullwidth => n.fullwidth = true,
                NormalizeRule::Nfc => n.nfc = true,
            }
        }
        n
    }

    /// True when no rule is set, so strings compare as written.
    pub fn is_identity(&self) -> bool {
        *self == Normalizer::default()
    }

    /// True when case is folded: regexes are then matched case-insensitively too.
    pub fn casefolds(&self) -> bool {
        self.casefold
    }

    /// The rules this normaliser applies, for reports.
    pub fn rules(&self) -> Vec<NormalizeRule> {
        let mut rules = Vec::new();
        if self.casefold {
            rules.push(NormalizeRule::Casefold);
        }
        if self.whitespace {
            rules.push(NormalizeRule::Whitespace);
        }
        if self.punctuation {
            rules.push(NormalizeRule::Punctuation);
        }
        if self.fullwidth {
            rules.push(NormalizeRule::Fullwidth);
        }
        if self.nfc {
            rules.push(NormalizeRule::Nfc);
        }
        rules
    }

    /// Apply the rules to `s`; borrows when nothing changes.
    pub fn apply<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.is_identity() {
            return Cow::Borrowed(s);
        }
        let composed = if self.nfc { nfc(s) } else { Cow::Borrowed(s) };
        if self.is_only_nfc() {
            return composed;
        }
        let mut out = String::with_capacity(composed.len());
        let mut pending_space = false;
        for c in composed.chars() {
            let c = if self.fullwidth { to_halfwidth(c) } else { c };
            if self.punctuation && is_punctuation(c) {
                continue;
            }
            if self.whitespace && c.is_whitespace() {
                pending_space = !out.is_empty();
                continue;
            }
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            if self.casefold {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
        Cow::Owned(out)
    }
}

impl Normalizer {
    /// True when NFC is the only rule (its result needs no second pass).
    fn is_only_nfc(&self) -> bool {
        *self
            == Normalizer {
                nfc: true,
                ..Normalizer::default()
            }
    }
}

/// `s` in Unicode normalisation form C (borrowed when it already is).
pub fn nfc(s: &str) -> Cow<'_, str> {
    icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(s)
}

/// Characters that change a string without showing: zero-width spaces and joiners, the
/// byte-order mark, soft hyphens, bidirectional marks.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// When `expected` and `actual` differ but would show the same on screen (another
/// Unicode form of the same letters, or invisible characters), what differs, as code
/// points, and the rule that makes them equal; `None` when they differ visibly.
pub fn look_alike(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let visible = |s: &str| -> String { nfc(s).chars().filter(|c| !is_invisible(*c)).collect() };
    if visible(expected) != visible(actual) {
        return None;
    }
    let points = |s: &str| -> String {
        let all: Vec<String> = s.chars().map(|c| format!("U+{:04X}", c as u32)).collect();
        if all.len() > 6 {
            format!("{} …", all[..6].join(" "))
        } else {
            all.join(" ")
        }
    };
    // Show only where they part: the common start and end are the same text.
    let e: Vec<char> = expected.chars().collect();
    let a: Vec<char> = actual.chars().collect();
    let start = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let end = e[start..]
        .iter()
        .rev()
        .zip(a[start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let part = |v: &[char]| -> String { v.iter().collect() };
    let (de, da) = (
        part(&e[start..e.len() - end]),
        part(&a[start..a.len() - end]),
    );
    let fix = if nfc(expected) == nfc(actual) {
        "they are two Unicode forms of the same text; `normalize: [nfc]` makes them equal"
    } else {
        "one holds invisible characters"
    };
    Some(format!(
        "they look alike but differ: expected [{}], got [{}]; {fix}",
        points(&de),
        points(&da)
    ))
}

/// Full-width ASCII variants (U+FF01..U+FF5E) and the ideographic space to ASCII.
fn to_halfwidth(c: char) -> char {
    match c {
        '\u{3000}' => ' ',
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

/// Unicode punctuation: ASCII punctuation plus the general categories P* outside ASCII
/// that appear in practice (CJK and general punctuation blocks, full-width forms).
fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(c as u32,
        0x00A1 | 0x00A7 | 0x00AB | 0x00B6 | 0x00B7 | 0x00BB | 0x00BF
        | 0x2010..=0x2027 | 0x2030..=0x205E
        | 0x3001..=0x3003 | 0x3008..=0x3011 | 0x3014..=0x301F | 0x30FB
        | 0xFE10..=0xFE19 | 0xFE30..=0xFE4F | 0xFE50..=0xFE6B
        | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

#[cfg(test)]
mod tests {
    use super::*;
    use NormalizeRule::*;

    #[test]
    fn identity_borrows() {
        let n = Normalizer::new(&[]);
        assert!(matches!(n.apply("北京 "), Cow::Borrowed("北京 ")));
    }

    #[test]
    fn whitespace_trims_and_collapses() {
        let n = Normalizer::new(&[Whitespace]);
        assert_eq!(n.apply("  New \t York  "), "New York");
        assert_eq!(n.apply("北京 "), "北京");
    }

    #[test]
    fn fullwidth_to_halfwidth() {
        let n = Normalizer::new(&[Fullwidth]);
        assert_eq!(n.apply("ＡＡＰＬ　１２３"), "AAPL 123");
    }

    #[test]
    fn punctuation_removes_ascii_and_cjk() {
        let n = Normalizer::new(&[Punctuation]);
        assert_eq!(n.apply("St. Louis!"), "St Louis");
        assert_eq!(n.apply("北京。"), "北京");
        assert_eq!(n.apply("「上海」，"), "上海");
    }

    #[test]
    fn casefold_is_unicode() {
        let n = Normalizer::new(&[Casefold]);
        assert_eq!(n.apply("BEIJING Ärger"), "beijing ärger");
    }

    #[test]
    fn nfc_makes_the_two_forms_of_a_letter_one() {
        let decomposed = "Zu\u{0308}rich";
        assert_ne!(decomposed, "Zürich");
        let n = Normalizer::new(&[Nfc]);
        assert_eq!(n.apply(decomposed), "Zürich");
        assert!(matches!(n.apply("Zürich"), Cow::Borrowed(_)));
        // With other rules, NFC comes first: case folding sees one letter.
        let n = Normalizer::new(&[Nfc, Casefold]);
        assert_eq!(n.apply("ZU\u{0308}RICH"), "zürich");
        assert_eq!(n.rules(), vec![Casefold, Nfc]);
        // Not set: records of suites without it serialise as before.
        let plain = serde_json::to_string(&Normalizer::new(&[Casefold])).unwrap();
        assert!(!plain.contains("nfc"), "{plain}");
    }

    #[test]
    fn look_alike_strings_are_told_apart_by_code_point() {
        let why = look_alike("Zürich", "Zu\u{0308}rich").unwrap();
        assert_eq!(
            why,
            "they look alike but differ: expected [U+00FC], got [U+0075 U+0308]; they are two Unicode forms of the same text; `normalize: [nfc]` makes them equal"
        );
        let why = look_alike("Paris", "Par\u{200B}is").unwrap();
        assert!(
            why.contains("got [U+200B]") && why.contains("invisible"),
            "{why}"
        );
        assert_eq!(look_alike("Paris", "Rome"), None);
        assert_eq!(look_alike("Paris", "Paris"), None);
    }

    #[test]
    fn rules_compose_in_a_fixed_order() {
        let n = Normalizer::new(&[Whitespace, Casefold, Punctuation, Fullwidth]);
        assert_eq!(n.apply(" ＳＴ． Louis ， MO "), "st louis mo");
        assert_eq!(n.rules().len(), 4);
    }
}
