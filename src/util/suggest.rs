//! "Did you mean" suggestions for names a user mistyped (providers, metrics, variants).

/// The candidate closest to `word`, when it is close enough to be a likely typo: at most
/// two edits (a swap of neighbours counts as one), and at most half the word (so `oai`
/// does not suggest `openai`, but `calz` suggests `calls`). Case and `-`/`_` are ignored.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let w = norm(word);
    let len = w.chars().count();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&w, &norm(c)), c))
        .filter(|(d, _)| *d <= 2 && *d * 2 <= len)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` did you mean `x`?` for a close candidate, else the empty string (to append to a
/// message).
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_word_and_strangers_find_nothing() {
        let providers = [
            "scripted",
            "openai",
            "openai-compatible",
            "ollama",
            "gemini",
        ];
        assert_eq!(closest("opnai", providers), Some("openai"));
        assert_eq!(closest("OpenAI", providers), Some("openai"));
        assert_eq!(closest("olama", providers), Some("ollama"));
        assert_eq!(
            closest("openai_compatible", providers),
            Some("openai-compatible")
        );
        assert_eq!(closest("oai", providers), None);
        assert_eq!(closest("mistral", providers), None);
        let metrics = ["accuracy", "trigger_recall", "tool_definition_tokens"];
        assert_eq!(closest("acuracy", metrics), Some("accuracy"));
        assert_eq!(closest("trigger_recal", metrics), Some("trigger_recall"));
        assert_eq!(
            closest("tool_defintion_tokens", metrics),
            Some("tool_definition_tokens")
        );
        assert_eq!(closest("latency", metrics), None);
        assert_eq!(closest("calz", ["calls", "count"]), Some("calls"));
        assert_eq!(closest("ab", ["abc", "xy"]), Some("abc"));
        assert_eq!(closest("x", ["y"]), None);
        assert_eq!(did_you_mean("acuracy", metrics), "did you mean `accuracy`?");
        assert_eq!(did_you_mean("speed", metrics), "");
    }
}
