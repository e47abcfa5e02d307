//! Strings that a regex matches: samples read from the pattern's syntax tree
//! (regex-syntax's HIR), and the shortest string several regexes match at once.
//!
//! Sample 0 takes the first choice everywhere (first alternative, fewest repetitions,
//! a plain ASCII letter or digit from each class), so the usual answer is short and
//! readable; later samples vary the choices with a seeded generator. Look-around
//! assertions (`^`, `$`, `\b`) produce nothing: callers check every sample against the
//! compiled regex before using it.
//!
//! When a string must satisfy two patterns (an expectation's `regex` and the schema's
//! `pattern`) and a length, sampling one rarely satisfies the other, so [`intersect`]
//! searches the product of their lazy DFAs (regex-automata) breadth first for the
//! shortest printable-ASCII string all of them accept.

use std::collections::{HashSet, VecDeque};

use regex_automata::hybrid::LazyStateID;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

use regex_syntax::hir::{Class, Hir, HirKind};

/// A small deterministic generator (SplitMix64): the same seed gives the same samples on
/// every platform and toolgauge version, which a standard library hasher does not promise.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// FNV-1a of `s`: a stable seed from a case id (and a path inside it).
pub fn seed_of(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The longest string a sample may grow to; a pattern that needs more (`a{100000}`)
/// gets no sample rather than a huge one.
const MAX_LEN: usize = 4096;

/// Characters preferred from a class, in order, so samples stay readable.
const PREFERRED: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ -_.,:/@";

/// Up to `n` distinct samples of `pattern` (in Rust `regex` syntax): sample 0 with the
/// first choices, then seeded variations. Empty when the pattern does not parse or can
/// match nothing (an empty class such as `[^\s\S]`).
pub fn samples(pattern: &str, seed: u64, n: usize) -> Vec<String> {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut rng = Rng::new(seed);
    // A few more tries than samples: variations often coincide on small patterns.
    for attempt in 0..n * 3 {
        if out.len() >= n {
            break;
        }
        let mut s = String::new();
        let ok = if attempt == 0 {
            generate(&hir, None, &mut s)
        } else {
            generate(&hir, Some(&mut rng), &mut s)
        };
        if ok && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Append a string `hir` matches to `out`; false when there is none (or it is too long).
fn generate(hir: &Hir, mut rng: Option<&mut Rng>, out: &mut String) -> bool {
    if out.len() > MAX_LEN {
        return false;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0) {
            Ok(s) => {
                out.push_str(s);
                true
            }
            Err(_) => false,
        },
        HirKind::Class(Class::Unicode(class)) => {
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect();
            match pick_char(&ranges, rng) {
                Some(c) => {
                    out.push(c);
                    true
                }
                None => false,
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            // Only ASCII bytes make valid UTF-8 on their own.
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .filter(|r| r.start() < 0x80)
                .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
                .collect();
            match pick_char(&ranges, rng) {
                Some(c) => {
                    out.push(c);
                    true
                }
                None => false,
            }
        }
        HirKind::Repetition(rep) => {
            let count = match rng.as_deref_mut() {
                None => rep.min,
                Some(r) => {
                    let spread = rep.max.map_or(3, |max| (max - rep.min).min(3));
                    rep.min + r.below(u64::from(spread) + 1) as u32
                }
            };
            if count as usize > MAX_LEN {
                return false;
            }
            (0..count).all(|_| generate(&rep.sub, rng.as_deref_mut(), out))
        }
        HirKind::Capture(cap) => generate(&cap.sub, rng, out),
        HirKind::Concat(parts) => parts.iter().all(|p| generate(p, rng.as_deref_mut(), out)),
        HirKind::Alternation(branches) => {
            let start = match rng.as_deref_mut() {
                None => 0,
                Some(r) => r.below(branches.len() as u64) as usize,
            };
            // A branch that can match nothing falls through to the next one.
            let mark = out.len();
            for i in 0..branches.len() {
                out.truncate(mark);
                if generate(
                    &branches[(start + i) % branches.len()],
                    rng.as_deref_mut(),
                    out,
                ) {
                    return true;
                }
            }
            false
        }
    }
}

/// A printable character from `ranges`: the first preferred one, or (with a generator)
/// a random member, avoiding control characters.
fn pick_char(ranges: &[(char, char)], rng: Option<&mut Rng>) -> Option<char> {
    let contains = |c: char| ranges.iter().any(|(a, b)| *a <= c && c <= *b);
    let preferred: Vec<char> = PREFERRED.chars().filter(|c| contains(*c)).collect();
    if let Some(r) = rng {
        // Half the time a preferred character, otherwise any printable one.
        if !preferred.is_empty() && r.below(2) == 0 {
            return Some(preferred[r.below(preferred.len() as u64) as usize]);
        }
        let (a, b) = ranges.get(r.below(ranges.len().max(1) as u64) as usize)?;
        let width = u64::from(*b as u32 - *a as u32) + 1;
        for _ in 0..8 {
            let c = char::from_u32(*a as u32 + r.below(width) as u32);
            if let Some(c) = c.filter(|c| !c.is_control()) {
                return Some(c);
            }
        }
    }
    if let Some(c) = preferred.first() {
        return Some(*c);
    }
    ranges.iter().find_map(|(a, b)| {
        (*a as u32..=*b as u32)
            .take(256)
            .filter_map(char::from_u32)
            .find(|c| !c.is_control())
    })
}

/// How many search states [`intersect`] explores before giving up.
const MAX_STATES: usize = 20_000;

/// The shortest printable-ASCII string, at least `min_len` and at most `max_len`
/// characters long, in which every regex of `patterns` (pattern, case-insensitive)
/// finds a match, preferring letters and digits. `None` when there is none within the
/// search budget, or a pattern does not compile.
pub fn intersect(
    patterns: &[(&str, bool)],
    min_len: usize,
    max_len: Option<usize>,
) -> Option<String> {
    let max_len = max_len.unwrap_or(MAX_LEN).min(MAX_LEN);
    if min_len > max_len {
        return None;
    }
    let mut dfas: Vec<(DFA, Cache)> = Vec::with_capacity(patterns.len());
    for (p, ci) in patterns {
        // Anchored at both ends with anything around it: the whole string is accepted
        // exactly when the pattern finds a match somewhere in it, as `is_match` does.
        // The search only spells ASCII, so ASCII classes suffice and keep the automata
        // small (`\d` and `\w` span thousands of code points otherwise); a pattern that
        // needs Unicode (`\p{Han}`) is compiled as written.
        let build = |unicode: bool| {
            DFA::builder()
                .syntax(syntax::Config::new().case_insensitive(*ci).unicode(unicode))
                .configure(
                    DFA::config()
                        .match_kind(MatchKind::All)
                        .cache_capacity(8 << 20),
                )
                .build(&format!("[\\x00-\\x7f]*(?:{p})[\\x00-\\x7f]*"))
                .ok()
        };
        let dfa = build(false).or_else(|| build(true))?;
        let cache = dfa.create_cache();
        dfas.push((dfa, cache));
    }
    let input = Input::new("").anchored(Anchored::Yes);
    let mut start = Vec::with_capacity(dfas.len());
    for (dfa, cache) in &mut dfas {
        start.push(dfa.start_state_forward(cache, &input).ok()?);
    }
    let alphabet: Vec<u8> = PREFERRED
        .bytes()
        .chain((0x20u8..0x7f).filter(|b| !PREFERRED.as_bytes().contains(b)))
        .collect();
    // Nodes: (states, length, parent, byte); the string is read back through parents.
    let mut nodes: Vec<(Vec<LazyStateID>, usize, usize, u8)> = vec![(start.clone(), 0, 0, 0)];
    let mut seen: HashSet<(Vec<LazyStateID>, usize)> = HashSet::new();
    seen.insert((start, 0));
    let mut queue = VecDeque::from([0usize]);
    while let Some(i) = queue.pop_front() {
        let (states, len) = (nodes[i].0.clone(), nodes[i].1);
        if len >= min_len {
            let mut all = true;
            for ((dfa, cache), s) in dfas.iter_mut().zip(&states) {
                all &= dfa.next_eoi_state(cache, *s).ok()?.is_match();
            }
            if all {
                let mut bytes = Vec::with_capacity(len);
                let mut at = i;
                while at != 0 {
                    bytes.push(nodes[at].3);
                    at = nodes[at].2;
                }
                bytes.reverse();
                return String::from_utf8(bytes).ok();
            }
        }
        if len >= max_len {
            continue;
        }
        'bytes: for &b in &alphabet {
            let mut next = Vec::with_capacity(states.len());
            for ((dfa, cache), s) in dfas.iter_mut().zip(&states) {
                let n = dfa.next_state(cache, *s, b).ok()?;
                if n.is_dead() || n.is_quit() {
                    continue 'bytes;
                }
                next.push(n);
            }
            // Past `min_len` the length no longer matters to acceptance.
            let key = (next, (len + 1).min(min_len));
            if seen.contains(&key) {
                continue;
            }
            if nodes.len() >= MAX_STATES {
                return None;
            }
            nodes.push((key.0.clone(), len + 1, i, b));
            seen.insert(key);
            queue.push_back(nodes.len() - 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_match(pattern: &str) {
        let re = regex::Regex::new(pattern).unwrap();
        let got = samples(pattern, 7, 8);
        assert!(!got.is_empty(), "no sample for /{pattern}/");
        for s in &got {
            assert!(re.is_match(s), "/{pattern}/ does not match {s:?}");
        }
    }

    #[test]
    fn first_sample_takes_the_first_choices() {
        assert_eq!(samples(r"^\d{4}-\d{2}-\d{2}$", 1, 1), ["0000-00-00"]);
        assert_eq!(samples("不支持|无法|只支持", 1, 1), ["不支持"]);
        assert_eq!(samples("GBP|[Pp]ound", 1, 1), ["GBP"]);
        assert_eq!(samples("^[A-Z]{3}$", 1, 1), ["AAA"]);
        assert_eq!(samples("x*y+", 1, 1), ["y"]);
    }

    #[test]
    fn every_sample_matches_its_pattern() {
        for p in [
            r"^\d{4}-\d{2}-\d{2}$",
            r"(?i)not supported|only (support|convert|handle)|can't|cannot",
            r"^[A-Z]{2,4}\.[a-z]+@example\.(com|org)$",
            r"^\p{Han}{2,3}市$",
            r"^(?:[01]\d|2[0-3]):[0-5]\d$",
            r"\bSKU-[0-9A-F]{6}\b",
            r"^[^aeiou\s]{3,5}$",
        ] {
            all_match(p);
        }
    }

    #[test]
    fn samples_vary_and_repeat_with_the_seed() {
        let a = samples(r"^[a-z]{1,8}$", 42, 5);
        assert_eq!(a.len(), 5, "{a:?}");
        assert_eq!(a, samples(r"^[a-z]{1,8}$", 42, 5));
    }

    #[test]
    fn impossible_or_invalid_patterns_give_nothing() {
        assert!(samples(r"[^\s\S]", 1, 4).is_empty());
        assert!(samples(r"(", 1, 4).is_empty());
        assert!(samples(r"a{100000}", 1, 4).is_empty());
    }

    #[test]
    fn intersection_satisfies_every_pattern() {
        // Sampling `^[A-Z]{3}$` almost never ends in X; the product search does.
        assert_eq!(
            intersect(&[("X$", false), ("^[A-Z]{3}$", false)], 0, None).as_deref(),
            Some("AAX")
        );
        assert_eq!(
            intersect(
                &[("^2026-08-", false), (r"^\d{4}-\d{2}-\d{2}$", false)],
                0,
                None
            )
            .as_deref(),
            Some("2026-08-00")
        );
        // Lengths, and case-insensitive patterns.
        assert_eq!(
            intersect(&[("b", false)], 3, Some(4)).as_deref(),
            Some("aab")
        );
        assert_eq!(intersect(&[("^q$", true)], 0, None).as_deref(), Some("q"));
        assert_eq!(
            intersect(&[("(?i)^Q$", false)], 0, None).as_deref(),
            Some("q")
        );
        // Contradictions have no answer.
        assert_eq!(intersect(&[("^a$", false), ("^b$", false)], 0, None), None);
        assert_eq!(intersect(&[("^a{5}$", false)], 0, Some(3)), None);
        assert_eq!(intersect(&[("(", false)], 0, None), None);
    }

    #[test]
    fn seeds_are_stable() {
        // FNV-1a and SplitMix64 are fixed algorithms: these values never change.
        assert_eq!(seed_of(&[]), 0xcbf2_9ce4_8422_2325);
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
    }
}
