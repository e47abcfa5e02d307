//! The text helpers the rules share: words of descriptions and identifiers, stop words,
//! a crude stemmer, CJK detection and edit distance. All deterministic and explainable:
//! each rule's doc says which of these it uses and how.

/// Words that carry no meaning of their own in a tool description.
pub const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "of",
    "to",
    "for",
    "in",
    "on",
    "at",
    "by",
    "with",
    "from",
    "and",
    "or",
    "is",
    "are",
    "be",
    "it",
    "its",
    "as",
    "tool",
    "tools",
    "function",
    "mcp",
    "api",
    "via",
    "using",
    "use",
    "your",
    "you",
    "can",
    "will",
    "which",
    "some",
    "any",
    "all",
    "one",
    "given",
    "specified",
    "provided",
    "based",
    "e",
    "g",
    "i",
];

/// Verbs (base forms) that say what a tool does or returns. A description with none of
/// them, in any inflection, does not state its purpose (`description-no-purpose`).
pub const VERBS: &[&str] = &[
    "get",
    "fetch",
    "return",
    "retrieve",
    "list",
    "search",
    "find",
    "look",
    "lookup",
    "query",
    "create",
    "make",
    "add",
    "insert",
    "post",
    "put",
    "write",
    "save",
    "store",
    "update",
    "edit",
    "modify",
    "change",
    "set",
    "patch",
    "delete",
    "remove",
    "drop",
    "clear",
    "send",
    "submit",
    "publish",
    "upload",
    "download",
    "read",
    "open",
    "close",
    "load",
    "run",
    "execute",
    "call",
    "invoke",
    "start",
    "stop",
    "restart",
    "cancel",
    "convert",
    "translate",
    "calculate",
    "compute",
    "count",
    "sum",
    "generate",
    "render",
    "draw",
    "plot",
    "show",
    "display",
    "print",
    "check",
    "validate",
    "verify",
    "test",
    "compare",
    "analyze",
    "analyse",
    "parse",
    "extract",
    "summarize",
    "summarise",
    "format",
    "sort",
    "filter",
    "merge",
    "split",
    "copy",
    "move",
    "rename",
    "navigate",
    "click",
    "type",
    "scroll",
    "take",
    "capture",
    "record",
    "play",
    "pause",
    "book",
    "reserve",
    "schedule",
    "order",
    "buy",
    "sell",
    "pay",
    "transfer",
    "subscribe",
    "unsubscribe",
    "connect",
    "disconnect",
    "login",
    "logout",
    "authenticate",
    "register",
    "install",
    "uninstall",
    "deploy",
    "build",
    "compile",
    "index",
    "scan",
    "crawl",
    "scrape",
    "browse",
    "visit",
    "monitor",
    "track",
    "watch",
    "notify",
    "remind",
    "echo",
    "ping",
    "resolve",
    "match",
    "predict",
    "classify",
    "detect",
    "recognize",
    "recognise",
    "transcribe",
    "encode",
    "decode",
    "encrypt",
    "decrypt",
    "sign",
    "hash",
    "provide",
    "give",
    "report",
    "describe",
    "explain",
    "answer",
    "estimate",
    "measure",
    "evaluate",
    "reply",
    "tell",
    "fill",
    "select",
    "choose",
    "assign",
    "invite",
    "share",
    "archive",
    "restore",
    "backup",
    "sync",
    "refresh",
    "reset",
    "enable",
    "disable",
    "apply",
    "map",
    "geocode",
    "route",
    "forecast",
    "wait",
    "sleep",
    "greet",
    "append",
    "attach",
    "comment",
    "review",
    "approve",
    "reject",
    "lock",
    "unlock",
    "mark",
    "tag",
    "view",
    "inspect",
    "explore",
    "discover",
    "identify",
    "determine",
    "obtain",
    "access",
    "manage",
    "handle",
    "process",
    "perform",
    "trigger",
    "hover",
    "drag",
    "press",
    "populate",
    "tap",
    "zoom",
    "resize",
    "crop",
    "rotate",
    "highlight",
    "emit",
    "log",
    "ask",
    "think",
    "plan",
];

/// Whether `c` is a CJK ideograph, kana or hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF
        | 0x20000..=0x2FA1F)
}

/// Whether most of the letters of `text` are CJK (at least 30%: a Chinese sentence with
/// a few English names in it is Chinese). English-word heuristics are skipped for it.
pub fn mostly_cjk(text: &str) -> bool {
    let (mut cjk, mut letters) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        if is_cjk(c) {
            cjk += 1;
        }
    }
    letters > 0 && cjk * 10 >= letters * 3
}

/// The words of an identifier, lowercase: `getWeather`, `get_weather`, `get-weather` and
/// `GetWeather` all give `get`, `weather`; `HTTPServer` gives `http`, `server`.
pub fn identifier_words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let boundary = i > 0
                && c.is_uppercase()
                && (chars[i - 1].is_lowercase()
                    || chars[i - 1].is_ascii_digit()
                    || chars.get(i + 1).is_some_and(|n| n.is_lowercase()));
            if boundary && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// The words of prose, lowercase, split at every character that is not a letter or digit;
/// a run of CJK characters gives its character bigrams (a single character alone), so
/// that Chinese text can be compared without a word segmenter.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        if cjk.len() == 1 {
            out.push(cjk[0].to_string());
        }
        for w in cjk.windows(2) {
            out.push(w.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            word.extend(c.to_lowercase());
        } else {
            flush_cjk(&mut cjk, &mut out);
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    flush_cjk(&mut cjk, &mut out);
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// A crude English stem: drops `ies`→`y`, `es`, `s`, `ing`, `ed` endings of words longer
/// than four letters (and the `s` of four-letter ones: `gets`), so `returns`, `returned`
/// and `returning` meet `return`.
pub fn stem(word: &str) -> String {
    let w = word;
    if w.len() == 4 && w.is_ascii() && w.ends_with('s') && !w.ends_with("ss") {
        return w[..3].to_string();
    }
    if w.len() > 4 && w.is_ascii() {
        if let Some(s) = w.strip_suffix("ies") {
            return format!("{s}y");
        }
        for suffix in ["ing", "ed", "es", "s"] {
            if let Some(s) = w.strip_suffix(suffix)
                && s.len() >= 3
            {
                return s.to_string();
            }
        }
    }
    w.to_string()
}

/// The content words of `text`, stemmed: its [`words`] without [`STOP_WORDS`].
pub fn content_stems(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// Whether `text` has a verb of [`VERBS`] in any inflection.
pub fn has_verb(text: &str) -> bool {
    words(text).iter().any(|w| {
        let s = stem(w);
        VERBS.iter().any(|v| {
            *v == w
                || *v == s
                || stem(v) == s
                || v.strip_suffix('e') == Some(s.as_str())
                || w.strip_suffix('s') == Some(v)
        })
    })
}

/// The Levenshtein distance of `a` and `b`, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The first `n` characters of `text` on one line, with `…` when cut (for messages).
pub fn excerpt(text: &str, n: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_at_every_convention() {
        assert_eq!(identifier_words("getWeather"), ["get", "weather"]);
        assert_eq!(identifier_words("get_weather"), ["get", "weather"]);
        assert_eq!(
            identifier_words("HTTPServer-list"),
            ["http", "server", "list"]
        );
    }

    #[test]
    fn chinese_text_gives_bigrams() {
        assert_eq!(words("查询天气 now"), ["查询", "询天", "天气", "now"]);
        assert!(mostly_cjk("使用必应搜索指定的关键词 (Bing)"));
        assert!(!mostly_cjk("Search the web with Bing (必应)"));
    }

    #[test]
    fn verbs_are_found_in_any_inflection() {
        assert!(has_verb("Returns the current weather."));
        assert!(has_verb("Searching the web."));
        assert!(has_verb("Tool for retrieving items."));
        assert!(!has_verb("Weather data for cities."));
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("天气", "天气预报"), 2);
    }
}
