//! Offline token counts with the o200k_base tokenizer (GPT-4o family).
//!
//! Used for the token size of each variant's tool definitions (what a clearer
//! description costs on every request) and to estimate usage when a response has none.
//! Counts are of the JSON tool definitions as OpenAI-style APIs send them; providers add
//! a few formatting tokens of their own, so treat them as close estimates.

use std::sync::LazyLock;

use crate::provider::{Message, Request, Response, ToolDefinition, Usage};

mod pieces;

use pieces::Pretokenizer;

/// The tokenizer used for every offline count.
pub const TOKENIZER: &str = "o200k_base";

/// o200k_base's vocabulary: the bytes of every token in rank order (rank 0 first), each
/// preceded by its length in one byte. Made from tiktoken-rs's copy of OpenAI's
/// `o200k_base.tiktoken` (MIT licence; see `src/score/O200K_NOTICE.md`); the test
/// `vocabulary_is_tiktokens` checks it token by token and rewrites it when asked.
static VOCABULARY: &[u8] = include_bytes!("o200k_base.vocab");

/// What counting needs: the rank of every token (keyed by its bytes in [`VOCABULARY`],
/// so loading allocates one table and nothing per token), and the pre-tokenizer that
/// splits text into pieces before byte-pair merging.
///
/// Counting is all toolgauge does with the tokenizer, so it keeps only this: loading
/// tiktoken-rs's full `CoreBPE` (an encoder, a decoder and a sorted copy of the
/// vocabulary, 600,000 allocations made from base64 text) took about 0.15 s and 45 MB,
/// more than scoring a whole imported benchmark; this loads in about 0.01 s and 10 MB.
/// tiktoken-rs's merge function needs a map keyed by owned byte vectors, so the (short,
/// standard) merge is written here.
struct Counter {
    ranks: FxHashMap<&'static [u8], u32>,
    /// The length of the longest token (128 bytes): longer bytes need no lookup.
    longest: usize,
    pieces: Pretokenizer,
}

type FxHashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

static COUNTER: LazyLock<Counter> = LazyLock::new(load);

/// Build the counter from [`VOCABULARY`] and o200k's pattern.
fn load() -> Counter {
    let mut ranks = FxHashMap::with_capacity_and_hasher(200_000, Default::default());
    let mut rest = VOCABULARY;
    let (mut rank, mut longest) = (0u32, 0);
    while let Some((&len, tail)) = rest.split_first() {
        let (token, tail) = tail.split_at(usize::from(len).min(tail.len()));
        ranks.insert(token, rank);
        longest = token.len().max(longest);
        rank += 1;
        rest = tail;
    }
    Counter {
        ranks,
        longest,
        pieces: Pretokenizer::new(),
    }
}

/// Load the tokenizer's tables afresh (apart from the one copy counting uses) and
/// return how many tokens they hold; `benches/tokens.rs` times this and measures its
/// memory.
#[doc(hidden)]
pub fn load_fresh() -> usize {
    load().ranks.len()
}

impl Counter {
    /// The number of tokens tiktoken's `encode_ordinary` gives `text`: each piece of the
    /// pattern is one token when it is in the vocabulary, else as many as byte-pair
    /// merging leaves.
    fn count(&self, text: &str) -> u64 {
        self.pieces
            .pieces(text)
            .map(|piece| {
                let bytes = piece.as_bytes();
                if self.rank(bytes) != NO_RANK {
                    1
                } else {
                    self.merged(bytes)
                }
            })
            .sum()
    }

    /// The tokens byte-pair merging leaves of `piece`, as tiktoken merges: start from
    /// single bytes and join, again and again, the adjacent pair whose joined bytes have
    /// the lowest rank (the leftmost on ties), until no joined pair is a token.
    ///
    /// Short pieces (nearly all of ordinary text) rescan their few parts after each
    /// merge; longer ones use [`Counter::merged_long`], whose cost grows as m log m, so
    /// that one unbroken word of megabytes (a repeated letter, an encoded blob) costs
    /// seconds, not hours. Both give tiktoken's merges exactly.
    fn merged(&self, piece: &[u8]) -> u64 {
        if piece.len() < 2 {
            return piece.len() as u64;
        }
        if piece.len() > SHORT_PIECE {
            self.merged_long(piece)
        } else {
            self.merged_short(piece)
        }
    }

    /// [`Counter::merged`] for a short piece (of two bytes or more): rescan every part
    /// for the lowest rank after each merge, O(m²), cheap for the handful of bytes of a
    /// word.
    fn merged_short(&self, piece: &[u8]) -> u64 {
        let rank = |a: usize, b: usize| self.rank(&piece[a..b]);
        // (start of a part, rank of it joined with the next part); two sentinels close it.
        let mut parts: Vec<(usize, u32)> =
            (0..piece.len() - 1).map(|i| (i, rank(i, i + 2))).collect();
        parts.push((piece.len() - 1, NO_RANK));
        parts.push((piece.len(), NO_RANK));
        // The rank of part i joined with part i + 1, before part i + 1 is removed.
        let joined = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                rank(parts[i].0, parts[i + 3].0)
            } else {
                NO_RANK
            }
        };
        loop {
            let (mut best, mut at) = (NO_RANK, 0);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == NO_RANK {
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

    /// [`Counter::merged`] for a long piece, the same merges in O(m log m) time and about
    /// seven bytes of memory per byte of the piece.
    ///
    /// Parts are kept in place: `len[i]` is the length of the part starting at byte i
    /// (0 inside a part) and `back[e]` the length of the part ending at byte e, so the
    /// next and the previous part are found in one step (a part is a token, at most
    /// [`Counter::longest`] ≤ 255 bytes). `pair[i]` is the rank of the part at i joined
    /// with the next ([`NO_RANK`] when it is not a token or i starts no part), and a
    /// [`MinTree`] over `pair` finds the lowest, leftmost on ties, in log m steps.
    fn merged_long(&self, piece: &[u8]) -> u64 {
        let m = piece.len();
        let mut len = vec![1u8; m];
        let mut back = vec![1u8; m];
        let mut pair: Vec<u32> = (0..m)
            .map(|i| {
                if i + 1 < m {
                    self.rank(&piece[i..i + 2])
                } else {
                    NO_RANK
                }
            })
            .collect();
        let mut tree = MinTree::new(&pair);
        let mut parts = m as u64;
        while let Some(i) = tree.lowest(&pair) {
            let j = i + usize::from(len[i]);
            let joined = usize::from(len[i]) + usize::from(len[j]);
            // A pair has a rank only if its bytes are a token, so `joined` fits a byte.
            len[i] = joined as u8;
            len[j] = 0;
            back[i + joined - 1] = joined as u8;
            parts -= 1;
            pair[j] = NO_RANK;
            tree.update(&pair, j);
            let next = i + joined;
            pair[i] = if next < m {
                self.rank(&piece[i..next + usize::from(len[next])])
            } else {
                NO_RANK
            };
            tree.update(&pair, i);
            if i > 0 {
                let before = usize::from(back[i - 1]);
                let p = i - before;
                pair[p] = self.rank(&piece[p..i + joined]);
                tree.update(&pair, p);
            }
        }
        parts
    }

    /// The rank of `bytes`, [`NO_RANK`] when they are not a token.
    fn rank(&self, bytes: &[u8]) -> u32 {
        if bytes.len() > self.longest {
            return NO_RANK;
        }
        self.ranks.get(bytes).copied().unwrap_or(NO_RANK)
    }
}

/// No rank: the bytes are not a token (or there is no pair).
const NO_RANK: u32 = u32::MAX;

/// Pieces up to this many bytes are merged by rescanning their parts, which is faster
/// than keeping a [`MinTree`] for the few parts of a word (tiktoken-rs switches at 100
/// bytes too).
const SHORT_PIECE: usize = 100;

/// The lowest value of a `u32` array, leftmost on ties, kept as values change: a
/// binary tree of minima over blocks of [`MinTree::BLOCK`] entries (the blocks keep the
/// tree small: about one byte per entry).
struct MinTree {
    /// The tree in heap order: node 1 is the root, node k has children 2k and 2k + 1,
    /// the leaves (`leaves..2 * leaves`) are the minima of the blocks, in order.
    nodes: Vec<u32>,
    leaves: usize,
}

impl MinTree {
    const BLOCK: usize = 16;

    fn new(values: &[u32]) -> MinTree {
        let leaves = values.len().div_ceil(Self::BLOCK).next_power_of_two();
        let mut nodes = vec![NO_RANK; 2 * leaves];
        for (b, block) in values.chunks(Self::BLOCK).enumerate() {
            nodes[leaves + b] = block.iter().copied().min().unwrap_or(NO_RANK);
        }
        for k in (1..leaves).rev() {
            nodes[k] = nodes[2 * k].min(nodes[2 * k + 1]);
        }
        MinTree { nodes, leaves }
    }

    /// The index of the lowest value below [`NO_RANK`], the leftmost on ties.
    fn lowest(&self, values: &[u32]) -> Option<usize> {
        let low = self.nodes[1];
        if low == NO_RANK {
            return None;
        }
        let mut k = 1;
        while k < self.leaves {
            // Left first: every value of the left subtree is left of the right one's.
            k = if self.nodes[2 * k] == low {
                2 * k
            } else {
                2 * k + 1
            };
        }
        let start = (k - self.leaves) * Self::BLOCK;
        let end = (start + Self::BLOCK).min(values.len());
        values[start..end]
            .iter()
            .position(|&v| v == low)
            .map(|p| start + p)
    }

    /// Take in a change of `values[i]`.
    fn update(&mut self, values: &[u32], i: usize) {
        let start = i / Self::BLOCK * Self::BLOCK;
        let end = (start + Self::BLOCK).min(values.len());
        let mut k = self.leaves + i / Self::BLOCK;
        let mut low = values[start..end].iter().copied().min().unwrap_or(NO_RANK);
        while self.nodes[k] != low {
            self.nodes[k] = low;
            if k == 1 {
                break;
            }
            k /= 2;
            low = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
        }
    }
}

/// The number of o200k_base tokens of `text` (what tiktoken's `encode_ordinary` gives),
/// in time that grows as n log n at worst, whatever the text.
pub fn count(text: &str) -> u64 {
    COUNTER.count(text)
}

/// The number of pieces o200k's pre-tokenizer cuts `text` into; `benches/tokens.rs` times
/// it against fancy-regex (tiktoken's engine).
#[doc(hidden)]
pub fn pieces(text: &str) -> usize {
    COUNTER.pieces.pieces(text).count()
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
    estimate_usage_of(&request.messages, response, tool_tokens)
}

/// [`estimate_usage`] for a request that sent `messages` (a round of a loop, whose
/// request is a prefix of the conversation).
pub fn estimate_usage_of(messages: &[Message], response: &Response, tool_tokens: u64) -> Usage {
    let mut input = tool_tokens;
    for m in messages {
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
        ..Default::default()
    }
}

/// About `n` bytes of one of the texts that make long pieces (or long runs of short
/// ones): what the unit tests compare with tiktoken-rs and `benches/tokens.rs` times on
/// 10 MB, from one generator so both use the same text.
#[doc(hidden)]
pub fn long_text(kind: &str, n: usize) -> String {
    // A fixed pseudo-random sequence (xorshift), so every run tests the same text.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    // Line breaks, Unicode spaces (no-break, ideographic, em, next line) and plain ones.
    const WHITESPACE: [char; 10] = [
        ' ', ' ', ' ', '\t', '\n', '\r', '\u{a0}', '\u{3000}', '\u{2003}', '\u{85}',
    ];
    // What follows a run of spaces: each takes the run's last space differently.
    const AFTER_RUN: [&str; 7] = ["word", "Word", "42", ".", "\u{4e00}", "\n", "\u{301}"];
    let mut out = String::with_capacity(n + 8);
    while out.len() < n {
        match kind {
            "letter" => out.push('a'),
            "upper" => out.push('A'),
            "pair" => out.push_str("ab"),
            "base64" => out.push(char::from(B64[(next() % 64) as usize])),
            "letters" => out.push(char::from(b'a' + (next() % 26) as u8)),
            "digits" => out.push(char::from(b'0' + (next() % 10) as u8)),
            "cjk" => out.push(char::from_u32(0x4e00 + (next() % 2000) as u32).unwrap_or('一')),
            "spaces" => out.push(' '),
            "tabs" => out.push('\t'),
            "newlines" => out.push('\n'),
            "whitespace" => out.push(WHITESPACE[(next() % WHITESPACE.len() as u64) as usize]),
            "space_runs" => {
                // Runs of up to 100,000 spaces or tabs, each followed by a word, a
                // number, punctuation, CJK, a line break or a combining mark.
                let left = (n - out.len()) as u64;
                let run = 1 + next() % left.min(100_000);
                let c = if next() % 2 == 0 { ' ' } else { '\t' };
                out.extend(std::iter::repeat_n(c, run as usize));
                out.push_str(AFTER_RUN[(next() % AFTER_RUN.len() as u64) as usize]);
            }
            "punct" => out.push_str("=-"),
            "accents" => out.push_str("e\u{301}"),
            other => panic!("no text kind {other}"),
        }
    }
    out
}

/// The kinds of [`long_text`].
#[doc(hidden)]
pub const LONG_KINDS: [&str; 14] = [
    "letter",
    "upper",
    "pair",
    "base64",
    "letters",
    "digits",
    "cjk",
    "spaces",
    "tabs",
    "newlines",
    "whitespace",
    "space_runs",
    "punct",
    "accents",
];

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
        // The JSON as OpenAI-style APIs receive it, counted by tiktoken-rs: 24 and 47
        // tokens, so the clear wording costs 23 more on every request.
        let wire = r#"[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object"}}}]"#;
        assert_eq!(reference().encode_ordinary(wire).len(), 24);
        assert_eq!((v, c), (24, 47));
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
    fn the_pattern_is_tiktokens() {
        // The pre-tokenizer's copy of the pattern (see `pieces::PATTERN`).
        assert_eq!(pieces::PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
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
        // Suites, docs, fixtures (cassettes and scripts of the shipped suites, wire
        // examples, benchmark items, recorded runs): whole files and every line on its own.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for top in [
            "suites",
            "docs",
            "fixtures",
            "tests/integration/fixtures",
            "src/provider/testdata",
        ] {
            let before = files.len();
            let mut dirs = vec![root.join(top)];
            while let Some(d) = dirs.pop() {
                let entries = std::fs::read_dir(&d)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", d.display()));
                for e in entries {
                    let p = e.expect("a directory entry").path();
                    if p.is_dir() {
                        dirs.push(p);
                    } else if let Ok(text) = std::fs::read_to_string(&p) {
                        files.push(text);
                    }
                }
            }
            // Each folder holds text files (the four shipped suites, nine docs, ...):
            // a renamed or emptied folder must fail here, not shrink the test.
            assert!(files.len() > before, "no text files under {top}");
        }
        assert!(files.len() > 80, "found {} files", files.len());
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
            "it'\u{17f} IT'S we'LL",
            "  \u{85}x \u{3000}\u{3000}\u{4e00} a\u{a0}\u{a0}b \u{2003}\t\u{301}",
            "x \n \n  y \r\n\r\n  . \t\t1 \t\t\n",
            "zqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxjzqxj",
        ] {
            assert_same(text);
        }
    }

    #[test]
    fn counts_equal_tiktokens_on_long_unbroken_text() {
        // Each kind at lengths around the switch to the long merge and well past it,
        // alone and with ordinary text around it.
        for kind in LONG_KINDS {
            for n in [SHORT_PIECE - 1, SHORT_PIECE, SHORT_PIECE + 1, 1_000, 30_000] {
                let text = long_text(kind, n);
                assert_same(&text);
                assert_same(&format!("The blob is {text}, said the model.\n"));
            }
        }
        // The largest case tiktoken-rs itself counts quickly in a debug build; whitespace
        // runs of up to 100,000 characters (fancy-regex, tiktoken's engine, gives up on
        // runs of about a million).
        for kind in ["letter", "cjk", "spaces", "whitespace", "space_runs"] {
            assert_same(&long_text(kind, 300_000));
        }
    }

    /// The pieces of `text` as tiktoken's pattern cuts it, by fancy-regex (tiktoken's
    /// engine) without its limit of a million backtracking steps per match.
    fn reference_pieces(text: &str) -> Vec<&str> {
        static UNLIMITED: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
            fancy_regex::RegexBuilder::new(pieces::PATTERN)
                .backtrack_limit(usize::MAX)
                .build()
                .expect("o200k's pattern compiles")
        });
        UNLIMITED
            .find_iter(text)
            .map(|m| m.expect("no backtracking limit").as_str())
            .collect()
    }

    fn assert_same_pieces(text: &str) {
        let ours: Vec<&str> = COUNTER.pieces.pieces(text).collect();
        let want = reference_pieces(text);
        if ours != want {
            let at = ours.iter().zip(&want).take_while(|(a, b)| a == b).count();
            let show = |p: Option<&&str>| p.map(|p| p.chars().take(40).collect::<String>());
            panic!(
                "{} pieces, tiktoken's pattern {}; first difference at piece {at}: {:?} against {:?}",
                ours.len(),
                want.len(),
                show(ours.get(at)),
                show(want.get(at)),
            );
        }
    }

    /// Texts of one long whitespace run, each ending and starting differently, with the
    /// pieces o200k's pattern cuts them into, worked out by hand from the pattern for a
    /// run of `n` characters (`n` ≥ 2).
    fn long_runs(n: usize) -> Vec<(String, Vec<String>)> {
        let run = |c: &str, n: usize| c.repeat(n);
        vec![
            // `\s+(?!\S)` leaves the last space to the word: ` x`.
            (run(" ", n) + "x", vec![run(" ", n - 1), " x".into()]),
            // Nothing follows: the whole run.
            (run(" ", n), vec![run(" ", n)]),
            // No word takes a tab before a digit: `\s+` takes it alone.
            (
                run("\t", n) + "1",
                vec![run("\t", n - 1), "\t".into(), "1".into()],
            ),
            // Punctuation takes the line breaks after it (`[\r\n/]*`).
            (
                ".".to_string() + &run("\n", n) + &run(" ", n) + "word",
                vec![
                    ".".to_string() + &run("\n", n),
                    run(" ", n - 1),
                    " word".into(),
                ],
            ),
            // `\s*[\r\n]+` ends at the last line break; a combining mark is a word.
            (
                run(" ", n) + "\n" + &run(" ", n) + "\u{301}",
                vec![run(" ", n) + "\n", run(" ", n - 1), " \u{301}".into()],
            ),
            // An ideographic space starts the CJK word after it.
            (
                run("\u{3000}", n) + "\u{4e00}",
                vec![run("\u{3000}", n - 1), "\u{3000}\u{4e00}".into()],
            ),
            (
                "x ".to_string() + &run("\r\n", n) + " ",
                vec!["x".into(), " ".to_string() + &run("\r\n", n), " ".into()],
            ),
        ]
    }

    #[test]
    fn pieces_of_long_runs_past_fancy_regexs_limits() {
        // The pieces worked out by hand are tiktoken's pattern's, as fancy-regex finds
        // them for runs it can take.
        for (text, want) in long_runs(1_000) {
            assert_same_pieces(&text);
            let ours: Vec<&str> = COUNTER.pieces.pieces(&text).collect();
            assert_eq!(ours, want);
        }
        // Runs of 1.2 million characters: fancy-regex, so tiktoken, gives up on each
        // (a million backtracking steps, and a stack of a million entries even with no
        // step limit); the rewritten pattern cuts them as the pattern says.
        for (text, want) in long_runs(1_200_000) {
            let ours: Vec<&str> = COUNTER.pieces.pieces(&text).collect();
            assert!(ours == want, "{:?}", &text[..20]);
        }
        // Many runs of up to 100,000 characters in 1.2 million: fancy-regex takes those.
        for kind in ["whitespace", "space_runs"] {
            assert_same_pieces(&long_text(kind, 1_200_000));
        }
    }

    /// Bytes over a small alphabet (so that many pairs merge), and any bytes.
    fn piece_bytes() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        proptest::prop_oneof![
            proptest::collection::vec(
                proptest::sample::select(vec![
                    b'a', b'a', b'b', b'e', b'n', b' ', b'=', b'1', 0xe4, 0xb8, 0x80, 0xcc
                ]),
                2..700,
            ),
            proptest::collection::vec(proptest::num::u8::ANY, 2..300),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(512))]
        #[test]
        fn long_merge_equals_short_merge(piece in piece_bytes()) {
            proptest::prop_assert_eq!(COUNTER.merged_long(&piece), COUNTER.merged_short(&piece));
        }
    }

    /// Spaces, tabs, line breaks and Unicode spaces.
    fn whitespace() -> impl proptest::strategy::Strategy<Value = char> {
        proptest::sample::select(vec![
            ' ', ' ', ' ', '\t', '\n', '\r', '\u{a0}', '\u{3000}', '\u{2003}', '\u{85}', '\u{b}',
        ])
    }

    /// Text with whitespace runs of every shape, up to 100,000 characters, between words,
    /// numbers, punctuation, contractions, CJK and combining marks.
    fn spaced_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let short = proptest::collection::vec(whitespace(), 1..12);
        let long = (whitespace(), 1..100_000usize, whitespace(), 0..1_000usize)
            .prop_map(|(a, n, b, m)| std::iter::repeat_n(a, n).chain(std::iter::repeat_n(b, m)));
        let segment = prop_oneof![
            6 => short.prop_map(String::from_iter),
            1 => long.prop_map(String::from_iter),
            2 => "[a-zA-Z]{1,8}",
            1 => "[\u{4e00}-\u{4fff}]{1,6}",
            1 => "[0-9]{1,7}",
            1 => "[.,;:!?\"(){}/=_-]{1,3}",
            1 => "('s|'T|'ll|'ve|'\u{17f}|\u{301})",
        ];
        proptest::collection::vec(segment, 0..12).prop_map(|s| s.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(96))]
        #[test]
        fn counts_and_pieces_equal_tiktokens_around_whitespace(text in spaced_text()) {
            assert_same_pieces(&text);
            assert_same(&text);
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
            assert_same_pieces(&text);
            assert_same(&text);
        }
    }
}
