//! Offline token counts with the o200k_base tokenizer (GPT-4o family).
//!
//! Used for the token size of each variant's tool definitions (what a clearer
//! description costs on every request) and to estimate usage when a response has none.
//! Counts are of the JSON tool definitions as OpenAI-style APIs send them; providers add
//! a few formatting tokens of their own, so treat them as close estimates.

use std::sync::LazyLock;

use crate::provider::{Message, Request, Response, ToolDefinition, Usage};

/// The tokenizer used for every offline count.
pub const TOKENIZER: &str = "o200k_base";

/// o200k_base's vocabulary: the bytes of every token in rank order (rank 0 first), each
/// preceded by its length in one byte. Made from tiktoken-rs's copy of OpenAI's
/// `o200k_base.tiktoken` (MIT licence; see `src/score/O200K_NOTICE.md`); the test
/// `vocabulary_is_tiktokens` checks it token by token and rewrites it when asked.
static VOCABULARY: &[u8] = include_bytes!("o200k_base.vocab");

/// o200k_base's pre-tokenizer pattern.
const PATTERN: &str = tiktoken_rs::O200K_BASE_PAT_STR;

/// What counting needs: the rank of every token (keyed by its bytes in [`VOCABULARY`],
/// so loading allocates one table and nothing per token), and the pattern that splits
/// text into pieces before byte-pair merging.
///
/// Counting is all toolgauge does with the tokenizer, so it keeps only this: loading
/// tiktoken-rs's full `CoreBPE` (an encoder, a decoder and a sorted copy of the
/// vocabulary, 600,000 allocations made from base64 text) took about 0.15 s and 45 MB,
/// more than scoring a whole imported benchmark; this loads in about 0.01 s and 10 MB.
/// tiktoken-rs's merge function needs a map keyed by owned byte vectors, so the (short,
/// standard) merge is written here.
struct Counter {
    ranks: FxHashMap<&'static [u8], u32>,
    pieces: fancy_regex::Regex,
}

type FxHashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

static COUNTER: LazyLock<Counter> = LazyLock::new(|| {
    let mut ranks = FxHashMap::with_capacity_and_hasher(200_000, Default::default());
    let mut rest = VOCABULARY;
    let mut rank = 0u32;
    while let Some((&len, tail)) = rest.split_first() {
        let (token, tail) = tail.split_at(usize::from(len).min(tail.len()));
        ranks.insert(token, rank);
        rank += 1;
        rest = tail;
    }
    Counter {
        ranks,
        // The pattern is a constant that compiles (the tests build it).
        pieces: fancy_regex::Regex::new(PATTERN).unwrap_or_else(|e| panic!("o200k pattern: {e}")),
    }
});

impl Counter {
    /// The number of tokens tiktoken's `encode_ordinary` gives `text`: each piece of the
    /// pattern is one token when it is in the vocabulary, else as many as byte-pair
    /// merging leaves.
    fn count(&self, text: &str) -> u64 {
        let mut n = 0u64;
        let mut at = 0;
        for piece in self.pieces.find_iter(text) {
            let Ok(piece) = piece else {
                // The pattern backtracks only on whitespace lookahead; should the regex
                // engine ever give up, estimate the rest at four bytes a token.
                n += (text.len() - at).div_ceil(4) as u64;
                break;
            };
            at = piece.end();
            let bytes = piece.as_str().as_bytes();
            n += if self.ranks.contains_key(bytes) {
                1
            } else {
                self.merged(bytes)
            };
        }
        n
    }

    /// The tokens byte-pair merging leaves of `piece`, as tiktoken merges: start from
    /// single bytes and join, again and again, the adjacent pair whose joined bytes have
    /// the lowest rank (the leftmost on ties), until no joined pair is a token.
    fn merged(&self, piece: &[u8]) -> u64 {
        let rank = |a: usize, b: usize| self.ranks.get(&piece[a..b]).copied().unwrap_or(u32::MAX);
        if piece.len() < 2 {
            return piece.len() as u64;
        }
        // (start of a part, rank of it joined with the next part); two sentinels close it.
        let mut parts: Vec<(usize, u32)> =
            (0..piece.len() - 1).map(|i| (i, rank(i, i + 2))).collect();
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        // The rank of part i joined with part i + 1, before part i + 1 is removed.
        let joined = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                rank(parts[i].0, parts[i + 3].0)
            } else {
                u32::MAX
            }
        };
        loop {
            let (mut best, mut at) = (u32::MAX, 0);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == u32::MAX {
                break;
            }
            if at > 0 {
                parts[at - 1].1 = joined(&parts, at - 1);
            }
            parts[at].1 = joined(&parts, at);
            parts.remove(at + 1);
        }
        (parts.len() - 1) as u64
    }
}

fn count(text: &str) -> u64 {
    COUNTER.count(text)
}

/// Load the vocabulary now, in the background, so that a run's first count does not
/// wait for it.
pub fn warm_up() {
    std::thread::spawn(|| LazyLock::force(&COUNTER));
}

/// Tokens of `tools` as sent in an OpenAI-style `tools` array.
pub fn tool_definition_tokens(tools: &[ToolDefinition]) -> u64 {
    let json: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| {
            serde_json::json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            })
        })
        .collect();
    count(&serde_json::Value::Array(json).to_string())
}

/// Estimated usage of an exchange that reported none (marked `estimated`);
/// `tool_tokens` is the size of the request's tool definitions (counted once per variant
/// by the caller, see [`tool_definition_tokens`]).
pub fn estimate_usage(request: &Request, response: &Response, tool_tokens: u64) -> Usage {
    let mut input = tool_tokens;
    for m in &request.messages {
        // About four tokens of chat framing per message.
        input += 4 + m.text().map_or(0, count);
        if let Message::Assistant { tool_calls, .. } = m {
            input += tool_calls
                .iter()
                .map(|c| count(&c.name) + count(&c.arguments))
                .sum::<u64>();
        }
    }
    let output = response.text.as_deref().map_or(0, count)
        + response
            .tool_calls
            .iter()
            .map(|c| count(&c.name) + count(&c.arguments))
            .sum::<u64>();
    Usage {
        input_tokens: input,
        output_tokens: output,
        estimated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_real_tokens() {
        assert_eq!(count("hello world"), 2);
        let vague = ToolDefinition {
            name: "get_weather".into(),
            description: "Weather.".into(),
            parameters: json!({"type": "object"}).into(),
        };
        let clear = ToolDefinition {
            description: "Current temperature (°C) and condition for one city. Use when the user asks about the weather in a named city.".into(),
            ..vague.clone()
        };
        let v = tool_definition_tokens(std::slice::from_ref(&vague));
        let c = tool_definition_tokens(std::slice::from_ref(&clear));
        assert!(v > 5 && c > v + 15, "vague {v}, clear {c}");
    }

    /// tiktoken-rs's own o200k_base, the reference for every count.
    fn reference() -> &'static tiktoken_rs::CoreBPE {
        tiktoken_rs::o200k_base_singleton()
    }

    fn assert_same(text: &str) {
        let want = reference().encode_ordinary(text).len() as u64;
        assert_eq!(
            count(text),
            want,
            "count of {:?}",
            text.chars().take(200).collect::<String>()
        );
    }

    #[test]
    fn vocabulary_is_tiktokens() {
        // Rebuild the vocabulary file from tiktoken-rs and require it to be the one
        // compiled in. TOOLGAUGE_WRITE_VOCAB=1 writes it (after a tiktoken-rs update).
        let bpe = reference();
        let mut vocab = Vec::with_capacity(VOCABULARY.len());
        let mut rank = 0;
        while let Ok(token) = bpe.decode_bytes(&[rank]) {
            vocab.push(u8::try_from(token.len()).expect("o200k tokens are at most 128 bytes"));
            vocab.extend_from_slice(&token);
            rank += 1;
        }
        assert_eq!(rank, 199_998, "o200k_base has 199,998 ordinary tokens");
        if std::env::var_os("TOOLGAUGE_WRITE_VOCAB").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/score/o200k_base.vocab");
            std::fs::write(path, &vocab).expect("write the vocabulary");
        }
        assert!(
            vocab == VOCABULARY,
            "src/score/o200k_base.vocab differs from tiktoken-rs's o200k_base"
        );
        assert_eq!(COUNTER.ranks.len(), 199_998, "every token has its own rank");
    }

    #[test]
    fn counts_equal_tiktokens_on_the_repositorys_text() {
        // Suites, docs, fixtures (wire examples, BFCL items, cassettes): whole files and
        // every line on its own.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![
            root.join("examples"),
            root.join("docs"),
            root.join("tests/integration/fixtures"),
            root.join("src/provider/testdata"),
        ];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if let Ok(text) = std::fs::read_to_string(&p) {
                    files.push(text);
                }
            }
        }
        assert!(files.len() > 20, "found {} files", files.len());
        for text in &files {
            assert_same(text);
            for line in text.lines() {
                assert_same(line);
            }
        }
    }

    #[test]
    fn counts_equal_tiktokens_on_edge_cases() {
        for text in [
            "",
            " ",
            "\n\n\n",
            "a",
            "hello world",
            "Hello WORLD it's I'M they'll we'VE",
            "   leading and trailing   ",
            "tabs\tand\r\nwindows\r\nlines\n",
            "1234567890 3.14159 -42 1e10",
            "北京明天的天气怎么样？请帮我查一下。",
            "Ünïcödé façade naïve coöperate",
            "combining: e\u{301} a\u{308}",
            "emoji 👍🏽 🇫🇷 👨‍👩‍👧",
            "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}",
            "path/to/file.rs:12:5 https://example.invalid/a?b=c",
            "====================================================================================================================================",
            "                                                                                                                                          x",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "zqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxj",
        ] {
            assert_same(text);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(512))]
        #[test]
        fn counts_equal_tiktokens_on_random_text(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::char::range('a', 'z'),
                    proptest::char::range('A', 'Z'),
                    proptest::char::range('0', '9'),
                    proptest::sample::select(vec![' ', ' ', '\n', '\r', '\t', '\'', '"', '.', ',', '/', '-', '_', '{', '}', ':', '\u{301}', '\u{a0}', '\u{3000}']),
                    proptest::char::range('\u{4e00}', '\u{4fff}'),
                    proptest::char::range('\u{00c0}', '\u{024f}'),
                    proptest::char::range('\u{0400}', '\u{04ff}'),
                    proptest::char::range('\u{1f600}', '\u{1f64f}'),
                    proptest::char::any(),
                ],
                0..300,
            )
        ) {
            let text: String = text.into_iter().collect();
            assert_same(&text);
        }
    }
}
