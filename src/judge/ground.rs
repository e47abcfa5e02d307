//! Grounding of a final answer: every number, date, id and name it states must come
//! from a tool result, the prompt (the case's messages) or a user turn.
//!
//! What counts as a stated fact, and when it is grounded:
//! - a token of ASCII letters and digits (joined by `-`, `_`, `.`, `/` or `:`) that
//!   holds a digit: with a letter it is an id (`A123`, `INV-7`) and must appear in the
//!   sources as a whole token; digits only, it is a number, date or time (`12`,
//!   `2026-12-03`, `14:30`, `3.5`) and every run of digits in it must be a run of digits
//!   in the sources, leading zeros ignored (so `12月3日` is grounded by `2026-12-03`).
//!   Thousands separators (`1,299`) are dropped first; list markers (`1.` at the start
//!   of a line) are not facts.
//! - a capitalised Latin word that does not start a sentence (`Paris`, `DHL`): a name,
//!   grounded when it appears in the sources ignoring case. Month and weekday names and
//!   `I` are not checked.
//!
//! Limits: numbers the model derives (a sum, a count, a converted unit) are reported as
//! ungrounded, which is the point of the check but may be stricter than a reader; names
//! in scripts without capitals (Chinese, Japanese) are not recognised, so only their
//! numbers and ids are checked.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::episode::view::Episode;
use crate::suite::Normalizer;
use crate::suite::model::NormalizeRule;

static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)*").expect("valid token regex")
});
static THOUSANDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d),(\d{3})\b").expect("valid thousands regex"));
static DIGITS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+").expect("valid digits regex"));
static NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Z][A-Za-z]+\b").expect("valid name regex"));

/// Capitalised words that are not names of anything a tool could return.
const NOT_NAMES: &[&str] = &[
    "I",
    "OK",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The sources an answer may draw on, normalised once.
pub struct Sources {
    text: String,
    /// The runs of digits in `text`, leading zeros stripped, as ranges of `text` sorted
    /// by their digits and without repeats (one vector, no string per run).
    runs: Vec<Range<usize>>,
    norm: Normalizer,
}

impl Sources {
    /// The sources of `episode`: its context, user turns and every tool result
    /// (errors included), with JSON results also read as their decoded values.
    pub fn of(episode: &Episode) -> Sources {
        let norm = Normalizer::new(&[
            NormalizeRule::Fullwidth,
            NormalizeRule::Casefold,
            NormalizeRule::Whitespace,
        ]);
        let mut text = String::new();
        let mut push = |s: &str| {
            let s = norm.apply(s);
            // The separator rule needs a comma: most sources have none.
            if s.contains(',') {
                text.push_str(&THOUSANDS.replace_all(&s, "$1$2"));
            } else {
                text.push_str(&s);
            }
            text.push('\n');
        };
        for c in &episode.context {
            push(c);
        }
        for r in &episode.rounds {
            if let Some(u) = &r.user {
                push(u);
            }
            for c in &r.calls {
                if let Some(o) = &c.outcome {
                    push(&o.content);
                    if let Ok(v) = serde_json::from_str::<Value>(&o.content) {
                        walk(&v, &mut push);
                    }
                }
            }
        }
        // `strip_zeros` keeps a suffix of the run (a run of zeros keeps its last one).
        let mut runs: Vec<Range<usize>> = DIGITS
            .find_iter(&text)
            .map(|m| m.end() - strip_zeros(m.as_str()).len()..m.end())
            .collect();
        runs.sort_unstable_by(|a, b| text[a.clone()].cmp(&text[b.clone()]));
        runs.dedup_by(|a, b| text[a.clone()] == text[b.clone()]);
        Sources { text, runs, norm }
    }

    /// The facts `answer` states that no source holds, in order of first appearance.
    pub fn ungrounded(&self, answer: &str) -> Vec<String> {
        // Case is kept for messages and names; comparisons fold it.
        let answer = answer_raw_width(answer);
        let answer = THOUSANDS.replace_all(&answer, "$1$2");
        let mut out: Vec<String> = Vec::new();
        let mut push = |s: &str| {
            if !out.iter().any(|o| o == s) {
                out.push(s.to_string());
            }
        };
        for m in TOKEN.find_iter(&answer) {
            let token = m.as_str();
            if !token.chars().any(|c| c.is_ascii_digit())
                || list_marker(&answer, m.start(), m.end())
            {
                continue;
            }
            let grounded = if token.chars().any(|c| c.is_ascii_alphabetic()) {
                self.has_token(token)
            } else {
                DIGITS
                    .find_iter(token)
                    .all(|d| self.has_run(strip_zeros(d.as_str())))
            };
            if !grounded {
                push(token);
            }
        }
        for name in self.ungrounded_names(&answer) {
            push(&name);
        }
        out
    }

    /// Whether `digits` (leading zeros stripped) is a run of digits in the sources.
    fn has_run(&self, digits: &str) -> bool {
        self.runs
            .binary_search_by(|r| self.text[r.clone()].cmp(digits))
            .is_ok()
    }

    /// Names (capitalised words not starting a sentence) in `answer` that no source holds.
    fn ungrounded_names(&self, answer: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in NAME.find_iter(answer) {
            let word = m.as_str();
            if NOT_NAMES.contains(&word) || starts_sentence(&answer[..m.start()]) {
                continue;
            }
            if !self.has_token(word) && !out.iter().any(|o| o == word) {
                out.push(word.to_string());
            }
        }
        out
    }

    /// Whether `token` (normalised) occurs in the sources with no letter or digit
    /// directly before or after it.
    fn has_token(&self, token: &str) -> bool {
        let token = self.norm.apply(token);
        self.text.match_indices(token.as_ref()).any(|(i, t)| {
            let before = self.text[..i].chars().next_back();
            let after = self.text[i + t.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric())
                && !after.is_some_and(|c| c.is_ascii_alphanumeric())
        })
    }
}

fn walk(v: &Value, push: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => push(s),
        Value::Number(n) => push(&n.to_string()),
        Value::Array(items) => items.iter().for_each(|x| walk(x, push)),
        Value::Object(map) => map.values().for_each(|x| walk(x, push)),
        _ => {}
    }
}

/// The answer with full-width forms made half-width but case kept (names need capitals).
fn answer_raw_width(answer: &str) -> String {
    Normalizer::new(&[NormalizeRule::Fullwidth])
        .apply(answer)
        .into_owned()
}

fn strip_zeros(run: &str) -> &str {
    let s = run.trim_start_matches('0');
    if s.is_empty() { "0" } else { s }
}

/// `1.` or `2)` at the start of a line (after spaces or a bullet): a list marker.
fn list_marker(text: &str, start: usize, end: usize) -> bool {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..start]
        .trim_matches(|c: char| c.is_whitespace() || "-*#>".contains(c))
        .is_empty()
        && text[end..].starts_with(['.', ')', '、'])
        && end - start <= 3
}

/// Whether a word after `before` starts a sentence (or a line, a list item, a quote).
fn starts_sentence(before: &str) -> bool {
    let trimmed =
        before.trim_end_matches(|c: char| c.is_whitespace() || "*_#>`\"'“‘(-[".contains(c));
    trimmed.is_empty()
        || trimmed.ends_with(['.', '!', '?', ':', '。', '！', '？', '：', '\n'])
        || before[trimmed.len()..].contains('\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::StopReason;

    fn sources(context: &str) -> Sources {
        Sources::of(&Episode {
            end_state: Vec::new(),
            context: vec![context.to_string()],
            rounds: vec![],
            stop: StopReason::Answered,
        })
    }

    #[test]
    fn runs_of_digits_compare_without_leading_zeros() {
        let s = sources("Ticket 007 of 0; 000 left; 100 boxes, 1,250 kg, 19:05 and 100 again");
        let stated = |a: &str| s.ungrounded(a);
        // 7 from 007, 0 from 0 and 000, 100 once though written twice, 1250 without the
        // separator, 19 and 5 from 19:05.
        assert_eq!(
            stated("7, 0, 00, 100, 1250 and 19.05"),
            Vec::<String>::new()
        );
        assert_eq!(stated("1,250 and 0100 and 005"), Vec::<String>::new());
        assert_eq!(stated("10 or 1000 or 25"), vec!["10", "1000", "25"]);
        // A source with no digits grounds no number.
        assert_eq!(sources("no numbers here").ungrounded("1"), vec!["1"]);
    }
}
