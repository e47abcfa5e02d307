//! An answer cut into sentences for the classifier, with quoted text and code blanked:
//! a question inside quotes (`the French for 'What is your name?' is …`) or a code span
//! is something the answer talks about, not something it asks.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// One sentence of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// The sentence, trimmed, with its final punctuation; quoted spans replaced by `_`.
    pub text: String,
    /// It ends with `?` or `？` (ignoring closing quotes, brackets and spaces), or, in
    /// Chinese, with the question particle 吗 or 呢.
    pub question: bool,
    /// It speaks to the user (you, your, 您, 你).
    pub second_person: bool,
}

/// Quoted spans and code, in the order they are blanked.
static QUOTED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"```[\s\S]*?```",
        r"`[^`\n]*`",
        r#""[^"\n]{0,400}""#,
        r"“[^”\n]{0,400}”",
        r"‘[^’\n]{0,400}’",
        r"「[^」\n]{0,400}」",
        r"『[^』\n]{0,400}』",
        r"《[^》\n]{0,100}》",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("the quote pattern is valid"))
    .collect()
});

/// A single-quoted span: the quote must follow the start, a space or an opening
/// punctuation mark and precede the end, a space or punctuation, so that apostrophes
/// (`you'd`, `Adriel's`) are left alone.
static SINGLE_QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|[\s(\[:=,])'([^'\n]{1,200}?)'($|[\s.,;:!?)\]])")
        .expect("the single-quote pattern is valid")
});

/// Second-person words.
static SECOND_PERSON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\byou(?:r|rs|rself|'d|'re|'ll|'ve)?\b|您|你").expect("the pattern is valid")
});

/// Abbreviations whose full stop does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "st", "vs", "e.g", "i.e", "etc", "no", "approx", "jr", "sr",
];

/// `text` with curly apostrophes made straight, quoted spans and code blanked (a
/// text wholly inside one pair of quotes is unwrapped first), cut into sentences.
pub fn sentences(text: &str) -> Vec<Sentence> {
    let mut t = unwrap_quotes(text.trim()).to_string();
    for re in QUOTED.iter() {
        t = re.replace_all(&t, "_").into_owned();
    }
    t = t.replace(['’', 'ʼ'], "'");
    // Twice: a quote that closes one span can open the next ('a' or 'b').
    for _ in 0..2 {
        t = SINGLE_QUOTED
            .replace_all(&t, |c: &Captures<'_>| format!("{}_{}", &c[1], &c[3]))
            .into_owned();
    }
    split(&t)
        .into_iter()
        .map(|s| Sentence {
            question: is_question(&s),
            second_person: SECOND_PERSON.is_match(&s),
            text: s,
        })
        .collect()
}

/// The text inside one pair of quotes wrapping the whole answer, or the answer.
fn unwrap_quotes(text: &str) -> &str {
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\''), ('「', '」')] {
        if let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close))
            && !inner.contains(open)
            && !inner.contains(close)
        {
            return inner.trim();
        }
    }
    text
}

/// Whether a sentence asks: it ends with a question mark (or 吗/呢), closing quotes,
/// brackets and spaces aside.
fn is_question(s: &str) -> bool {
    let end = s.trim_end_matches(|c: char| {
        c.is_whitespace() || "\"'”’」』)]）】*_~".contains(c) || is_symbol(c)
    });
    end.ends_with(['?', '？']) || end.ends_with(['吗', '呢'])
}

/// Emoji and other pictographs that may follow the final punctuation.
fn is_symbol(c: char) -> bool {
    matches!(c as u32, 0x2600..=0x27BF | 0x1F000..=0x1FAFF | 0xFE0F)
}

/// Cut at `?`, `!`, `。`, `？`, `！`, `;`, `；` and line breaks, and at a full stop
/// followed by a space (not after a digit or an abbreviation); closing quotes and
/// brackets stay with their sentence.
fn split(t: &str) -> Vec<String> {
    let chars: Vec<char> = t.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        cur.push(c);
        let next = chars.get(i + 1).copied();
        let ends = match c {
            '?' | '!' | '。' | '？' | '！' | ';' | '；' | '\n' => {
                !matches!(next, Some('?' | '!' | '？' | '！'))
            }
            '.' => {
                next.is_none_or(char::is_whitespace)
                    && !matches!(next, Some('.'))
                    && !after_abbreviation(&cur)
            }
            _ => false,
        };
        if ends {
            // Keep closing quotes and brackets with the sentence they close.
            while let Some(&n) = chars.get(i + 1) {
                if "\"'”’」』)]）】".contains(n) {
                    cur.push(n);
                    i += 1;
                } else {
                    break;
                }
            }
            push(&mut out, &mut cur);
        }
        i += 1;
    }
    push(&mut out, &mut cur);
    out
}

fn push(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_string());
    }
    cur.clear();
}

/// Whether the full stop just pushed ends an abbreviation or a number ("Dr.", "3.").
fn after_abbreviation(cur: &str) -> bool {
    let body = cur.trim_end_matches('.');
    let word: String = body
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let lower = word.to_lowercase();
    (!word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) && word.len() <= 2)
        || ABBREVIATIONS.contains(&lower.as_str())
        || (word.chars().count() == 1 && word.chars().all(char::is_uppercase))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &str) -> Vec<String> {
        sentences(t).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn cuts_at_end_marks_but_not_decimals_abbreviations_or_list_numbers() {
        assert_eq!(
            texts("It costs $2.50 at Dr. Smith's. Which size?Done! 好的。哪个城市？"),
            vec![
                "It costs $2.50 at Dr. Smith's.",
                "Which size?",
                "Done!",
                "好的。",
                "哪个城市？"
            ]
        );
        assert_eq!(
            texts("Options: 1. red 2. blue."),
            vec!["Options: 1. red 2. blue."]
        );
    }

    #[test]
    fn questions_inside_quotes_and_code_are_blanked() {
        let s = sentences("The French for 'What is your name?' is 'Comment vous appelez-vous ?'.");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].text, "The French for _ is _.");
        assert!(!s[0].question);
        let s = sentences("Run `ls -la | grep ?` now. He said “Why?” and left.");
        assert!(s.iter().all(|s| !s.question), "{s:?}");
        // Apostrophes are not quotes.
        assert_eq!(
            texts("You're right, it's Adriel's."),
            vec!["You're right, it's Adriel's."]
        );
    }

    #[test]
    fn a_wholly_quoted_answer_is_unwrapped() {
        let s = sentences("\"Which city do you mean?\"");
        assert_eq!(s.len(), 1);
        assert!(s[0].question && s[0].second_person);
    }

    #[test]
    fn questions_end_with_a_question_mark_or_a_chinese_particle() {
        let q: Vec<bool> =
            sentences("Which one? 请问是哪天？ 你要去北京吗\nFine. (Really?) 😀 Ok?🙂")
                .iter()
                .map(|s| s.question)
                .collect();
        assert_eq!(q, vec![true, true, true, false, true, true]);
    }
}
