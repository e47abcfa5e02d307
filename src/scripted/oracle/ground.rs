//! What a case's conversation offers for grounding: its text, its words and its numbers.
//!
//! The oracle fills arguments its expectation leaves open with values taken from the
//! conversation where it can, so a correct suite's oracle run shows no fabricated
//! (ungrounded) arguments either.

use std::sync::LazyLock;

use regex::Regex;

use crate::provider::Message;
use crate::suite::Normalizer;
use crate::suite::model::NormalizeRule;

/// Words and numbers of one conversation, in the order the oracle prefers them.
#[derive(Debug, Default)]
pub struct Grounding {
    /// Every message's text, one per line (user turns first).
    pub text: String,
    /// Words: those of user turns before the rest; among them names (a capitalised
    /// word that does not start a sentence) first, then longer words before shorter.
    pub words: Vec<String>,
    /// Numbers written in the conversation (`1,200` is 1200; full-width digits count).
    pub numbers: Vec<f64>,
}

static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d+(?:,\d{3})*(?:\.\d+)?").expect("the number pattern is valid"));

impl Grounding {
    /// The grounding of `messages`.
    pub fn new(messages: &[Message]) -> Self {
        let fullwidth = Normalizer::new(&[NormalizeRule::Fullwidth]);
        let is_user = |m: &&Message| matches!(m, Message::User { .. });
        let user = messages.iter().filter(is_user).filter_map(Message::text);
        let rest = messages
            .iter()
            .filter(|m| !is_user(m))
            .filter_map(Message::text);
        let texts: Vec<(bool, &str)> = user
            .map(|t| (true, t))
            .chain(rest.map(|t| (false, t)))
            .collect();
        let text = texts.iter().map(|(_, t)| *t).collect::<Vec<_>>().join("\n");
        // (from a user turn, a name, the word)
        let mut words: Vec<(bool, bool, String)> = Vec::new();
        for (from_user, t) in &texts {
            for (i, w) in split_words(t).into_iter().enumerate() {
                let name = i > 0 && w.chars().next().is_some_and(char::is_uppercase);
                if !words.iter().any(|(_, _, x)| *x == w) {
                    words.push((*from_user, name, w));
                }
            }
        }
        // Stable: among equals, the conversation's order.
        words.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(b.2.chars().count().cmp(&a.2.chars().count()))
        });
        let wide = fullwidth.apply(&text);
        let mut numbers: Vec<f64> = Vec::new();
        for m in NUMBER.find_iter(&wide) {
            if let Ok(x) = m.as_str().replace(',', "").parse::<f64>()
                && !numbers.contains(&x)
            {
                numbers.push(x);
            }
        }
        Grounding {
            text,
            words: words.into_iter().map(|(_, _, w)| w).collect(),
            numbers,
        }
    }
}

/// Runs of letters, digits and the joiners `'`, `-`, `_`, `.` inside a word
/// (`Xi'an`, `SKU-42`), without joiners at either end.
fn split_words(text: &str) -> Vec<String> {
    let joiner = |c: char| matches!(c, '\'' | '-' | '_' | '.');
    text.split(|c: char| !(c.is_alphanumeric() || joiner(c)))
        .map(|w| w.trim_matches(joiner))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> Message {
        Message::User {
            content: s.to_string(),
        }
    }

    #[test]
    fn names_come_first_then_longer_words() {
        let g = Grounding::new(&[user("What's the weather in Xi'an and Berlin today?")]);
        assert_eq!(
            g.words,
            [
                "Berlin", "Xi'an", "weather", "What's", "today", "the", "and", "in"
            ]
        );
    }

    #[test]
    fn numbers_read_thousands_separators_and_full_width_digits() {
        let g = Grounding::new(&[user("What's 1,200 RMB in euros? Or ５０００日元, or 2.5?")]);
        assert_eq!(g.numbers, [1200.0, 5000.0, 2.5]);
    }

    #[test]
    fn user_turns_come_before_tool_results() {
        let g = Grounding::new(&[
            Message::Tool {
                name: String::new(),
                is_error: false,
                tool_call_id: "c1".into(),
                content: "{\"temperature\": 31}".into(),
            },
            user("北京现在天气怎么样？"),
        ]);
        assert_eq!(g.words[0], "北京现在天气怎么样");
        assert!(g.text.starts_with("北京"));
        assert_eq!(g.numbers, [31.0]);
    }
}
