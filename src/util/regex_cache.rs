//! Suite regexes compiled once per pattern. Generated and imported suites repeat the
//! same pattern across cases (a date, an id format), and compiling each copy again was
//! a quarter of loading such a suite; a compiled `Regex` is shared by cloning it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::{Regex, RegexBuilder};

/// Patterns kept at most; past that the cache starts again (a long run of imported
/// suites should not keep every pattern it ever saw).
const MAX_KEPT: usize = 4096;

/// Compiled size allowed for a suite's regex (the `regex` crate's `size_limit`).
pub const SIZE_LIMIT: usize = 1 << 20;

/// Compiled patterns, by whether they fold case and then by pattern.
static CACHE: LazyLock<Mutex<[HashMap<String, Regex>; 2]>> =
    LazyLock::new(|| Mutex::new([HashMap::new(), HashMap::new()]));

/// `pattern` compiled with [`SIZE_LIMIT`], case-insensitively when `fold_case`: the
/// one compiled before for the same pattern and folding, or a new one. Errors are
/// returned as the `regex` crate gives them, and not kept.
pub fn build(pattern: &str, fold_case: bool) -> Result<Regex, regex::Error> {
    let slot = usize::from(fold_case);
    let kept = |cache: &[HashMap<String, Regex>; 2]| cache[slot].get(pattern).cloned();
    if let Some(re) = kept(&CACHE.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(re);
    }
    // Compiled outside the lock: suites loaded side by side do not wait on each other.
    let re = RegexBuilder::new(pattern)
        .case_insensitive(fold_case)
        .size_limit(SIZE_LIMIT)
        .build()?;
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if cache[slot].len() >= MAX_KEPT {
        cache[slot].clear();
    }
    cache[slot].insert(pattern.to_string(), re.clone());
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_per_folding_and_matches_as_compiled() {
        let a = build(r"^tg-cache-test-\d{4}$", false).unwrap();
        assert!(
            CACHE.lock().unwrap()[0].contains_key(r"^tg-cache-test-\d{4}$"),
            "kept after the first build"
        );
        // A second build is answered from the cache: a stand-in kept under the pattern
        // comes back instead of a new compilation.
        let stand_in = Regex::new("^stand-in$").unwrap();
        CACHE.lock().unwrap()[0].insert("tg-cache-test-stand-in".into(), stand_in);
        assert_eq!(
            build("tg-cache-test-stand-in", false).unwrap().as_str(),
            "^stand-in$"
        );
        let b = build(r"^tg-cache-test-\d{4}$", false).unwrap();
        assert!(a.is_match("tg-cache-test-2024"));
        assert!(!a.is_match("TG-CACHE-TEST-2024"));
        // Folding case is a different regex under the same pattern.
        let folded = build(r"^tg-cache-test-\d{4}$", true).unwrap();
        assert!(folded.is_match("TG-CACHE-TEST-2024"));
        assert!(!b.is_match("TG-CACHE-TEST-2024"));
    }

    #[test]
    fn errors_are_the_regex_crates_and_are_not_kept() {
        let e = build("tg-cache-test-(", false).unwrap_err();
        assert!(e.to_string().contains("unclosed group"), "{e}");
        assert!(!CACHE.lock().unwrap()[0].contains_key("tg-cache-test-("));
        // Over the size limit, as before the cache.
        assert!(build(r"\w{1000}\w{1000}", false).is_err());
    }
}
