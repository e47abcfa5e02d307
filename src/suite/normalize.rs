//! String normalisation declared by suites and matchers (never applied silently).
//!
//! A [`Normalizer`] is a set of [`NormalizeRule`]s applied in a fixed order: full-width
//! forms first (so `，` becomes `,` before punctuation is removed), then punctuation,
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
        rules
    }

    /// Apply the rules to `s`; borrows when nothing changes.
    pub fn apply<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.is_identity() {
            return Cow::Borrowed(s);
        }
        let mut out = String::with_capacity(s.len());
        let mut pending_space = false;
        for c in s.chars() {
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
    fn rules_compose_in_a_fixed_order() {
        let n = Normalizer::new(&[Whitespace, Casefold, Punctuation, Fullwidth]);
        assert_eq!(n.apply(" ＳＴ． Louis ， MO "), "st louis mo");
        assert_eq!(n.rules().len(), 4);
    }
}
