//! o200k_base's pre-tokenizer: the pieces tiktoken cuts text into before byte-pair
//! merging, found in time linear in the text and in constant memory.
//!
//! tiktoken runs o200k's pattern with fancy-regex, a backtracking engine, because one of
//! its alternatives, `\s+(?!\S)`, has a lookahead. Backtracking costs a step for each
//! character of a whitespace run, and fancy-regex gives up after a million steps
//! (tiktoken then panics; counting here fell back to a guess); raising that limit keeps
//! the steps linear but makes the engine keep a backtracking state per character, so
//! memory grows with the run (and it stops at a million entries all the same). Here the
//! lookahead is rewritten away (see [`LOOKAHEAD`]) and the pattern runs on
//! regex-automata's meta engine, whose automata need neither.
//!
//! Each piece is searched for anchored where the last one ended: the pattern matches at
//! every character, so the piece starts there, and an anchored search needs no second,
//! backward pass to find where the match starts (unanchored, `regex::Regex::find_at` was
//! 20 to 150 times slower on this pattern).

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// o200k_base's pre-tokenizer pattern, as tiktoken-rs (and tiktoken) give it.
///
/// A copy of `tiktoken_rs::O200K_BASE_PAT_STR`, like the vocabulary next to it, so
/// tiktoken-rs is needed by the tests only (with its own copy of the full vocabulary);
/// the test `the_pattern_is_tiktokens` requires the two to be the same.
pub(super) const PATTERN: &str = concat!(
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"\p{N}{1,3}"#,
    "|",
    r#" ?[^\s\p{L}\p{N}]+[\r\n/]*"#,
    "|",
    r#"\s*[\r\n]+"#,
    "|",
    r#"\s+(?!\S)"#,
    "|",
    r#"\s+"#
);

/// The one alternative of [`PATTERN`] with a lookahead, and what it is rewritten to.
///
/// `\s+(?!\S)` at position p of a whitespace run that ends at e (the run is as long as
/// it goes) matches p..e when nothing follows the run, p..e-1 (one character less) when
/// text follows and at least two characters are left, and nothing otherwise. `\s+\s`
/// matches p..e whenever at least two characters are left, so giving back the last
/// character when text follows gives the same match. The two fail at the same places
/// but one: a single whitespace character at the very end, where `\s+(?!\S)` matches it
/// and `\s+\s` does not, and the next alternative, `\s+`, matches the same character.
/// So the alternative chosen, and the piece, are the same everywhere.
///
/// Which matches give a character back: a piece the rewritten alternative matched is
/// whitespace only, two characters or more, and has no `\r` or `\n` (the alternative
/// before it, `\s*[\r\n]+`, takes any run that has one). No other alternative matches
/// such text: the ones before it need a letter, a digit or a character that is not
/// whitespace; `\s*[\r\n]+` ends in a line break; `\s+` after it is reached only for one
/// character.
pub(super) const LOOKAHEAD: (&str, &str) = (r"\s+(?!\S)", r"\s+\s");

/// The compiled pattern without lookahead.
pub(super) struct Pretokenizer {
    regex: Regex,
}

impl Pretokenizer {
    /// Compile the rewritten [`PATTERN`].
    pub(super) fn new() -> Pretokenizer {
        let (from, to) = LOOKAHEAD;
        assert!(
            PATTERN.matches(from).count() == 1,
            "tiktoken-rs's o200k pattern changed: {PATTERN}"
        );
        let pattern = PATTERN.replacen(from, to, 1);
        // A constant pattern that compiles (every test builds it).
        let regex = Regex::new(&pattern).unwrap_or_else(|e| panic!("o200k pattern: {e}"));
        Pretokenizer { regex }
    }

    /// The pieces of `text`, in order, as tiktoken's pattern finds them.
    pub(super) fn pieces<'t>(&'t self, text: &'t str) -> Pieces<'t> {
        Pieces {
            regex: &self.regex,
            text,
            at: 0,
        }
    }
}

/// The pieces of a text (see [`Pretokenizer::pieces`]).
pub(super) struct Pieces<'t> {
    regex: &'t Regex,
    text: &'t str,
    /// Where the next search starts: the end of the last piece.
    at: usize,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let input = Input::new(self.text).range(self.at..);
        // Should a character ever match no alternative, tiktoken skips it: so does the
        // unanchored search.
        let m = self
            .regex
            .search(&input.clone().anchored(Anchored::Yes))
            .or_else(|| self.regex.search(&input))?;
        let matched = &self.text[m.range()];
        let mut end = m.end();
        if end < self.text.len() && gives_back(matched) {
            end -= matched.chars().next_back().map_or(0, char::len_utf8);
        }
        self.at = end;
        Some(&self.text[m.start()..end])
    }
}

/// Whether a match came from the rewritten alternative (see [`LOOKAHEAD`]) and so gives
/// its last character back when text follows.
fn gives_back(matched: &str) -> bool {
    let mut chars = matched.chars();
    chars.next().is_some()
        && chars.next().is_some()
        && matched
            .chars()
            .all(|c| c.is_whitespace() && c != '\r' && c != '\n')
}
