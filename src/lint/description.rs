//! The description family: a tool's description is missing, only restates the name,
//! does not say what the tool does, or is longer than the token budget.
//!
//! `description-no-when-to-use` needs the confusable pairs of the set, so it lives in
//! [`super::set`].

use super::model::{Finding, LintConfig, LintTool};
use super::text::{
    STOP_WORDS, content_stems, excerpt, has_verb, identifier_words, mostly_cjk, stem,
};

/// `description-no-purpose` fires on a description with no verb of
/// [`super::text::VERBS`] and fewer content words than this: a longer noun phrase
/// ("Latest trading price of one stock, by ticker symbol.") names what the tool returns.
pub const PURPOSE_WORDS: usize = 6;

/// Every description finding of `tool`.
pub fn check(tool: &LintTool, config: &LintConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    let text = tool.description.as_deref().unwrap_or("").trim();
    if text.is_empty() {
        let what = if tool.description.is_some() {
            "an empty description"
        } else {
            "no description"
        };
        out.push(
            Finding::new(
                "description-missing",
                format!("`{}` has {what}", tool.name),
                "say in a sentence or two what the tool does, what it returns and when to use it",
            )
            .on(tool, tool.description_pos()),
        );
        return out;
    }
    if restates_name(&tool.name, text) {
        out.push(
            Finding::new(
                "description-restates-name",
                format!(
                    "the description of `{}` only restates its name: \"{}\"",
                    tool.name,
                    excerpt(text, 60)
                ),
                "say what the tool does with its inputs, what it returns, and when to use it",
            )
            .on(tool, tool.description_pos()),
        );
    } else if !mostly_cjk(text) && !has_verb(text) && content_stems(text).len() < PURPOSE_WORDS {
        out.push(
            Finding::new(
                "description-no-purpose",
                format!(
                    "the description of `{}` does not say what the tool does or returns: \"{}\"",
                    tool.name,
                    excerpt(text, 60)
                ),
                "start with a verb that says what it does and what it returns, e.g. \"Returns the current temperature for one city.\"",
            )
            .on(tool, tool.description_pos()),
        );
    }
    let tokens = crate::score::tokens::count(text);
    if tokens > config.max_description_tokens {
        out.push(
            Finding::new(
                "description-too-long",
                format!(
                    "the description of `{}` is {tokens} tokens, over the budget of {}",
                    tool.name, config.max_description_tokens
                ),
                "keep what the model needs to choose and call the tool; move background elsewhere, or raise the budget (`--max-description-tokens`, `lint: {max_description_tokens: N}`)",
            )
            .on(tool, tool.description_pos()),
        );
    }
    out
}

/// Whether the content words of `description` (stop words dropped, stemmed) are all
/// words of `name`: "Get weather." for `get_weather`. Mostly-CJK text never restates an
/// English name; a CJK name is compared by its characters' bigrams as words.
pub fn restates_name(name: &str, description: &str) -> bool {
    let name_words: Vec<String> = identifier_words(name)
        .iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(w))
        .chain(content_stems(name))
        .collect();
    let words = content_stems(description);
    !words.is_empty() && words.iter().all(|w| name_words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: Option<&str>) -> LintTool {
        LintTool {
            name: name.into(),
            description: description.map(str::to_string),
            parameters: json!({"type": "object"}),
            ..LintTool::default()
        }
    }

    fn rules(t: &LintTool) -> Vec<&'static str> {
        check(t, &LintConfig::default())
            .iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn missing_and_empty_descriptions() {
        assert_eq!(rules(&tool("get_weather", None)), ["description-missing"]);
        assert_eq!(
            rules(&tool("get_weather", Some("  "))),
            ["description-missing"]
        );
    }

    #[test]
    fn restating_the_name() {
        assert_eq!(
            rules(&tool("get_weather", Some("Get weather."))),
            ["description-restates-name"]
        );
        assert_eq!(
            rules(&tool("getWeather", Some("Gets the weather"))),
            ["description-restates-name"]
        );
        assert!(rules(&tool("get_weather", Some("Get the weather for one city."))).is_empty());
    }

    #[test]
    fn no_purpose_in_english_but_not_in_chinese() {
        // A noun phrase long enough to name what comes back is not flagged.
        let price = tool(
            "price",
            Some("Latest trading price of one stock, by ticker symbol."),
        );
        assert!(rules(&price).is_empty());
        assert_eq!(
            rules(&tool("weather", Some("Weather data for cities."))),
            ["description-no-purpose"]
        );
        assert!(rules(&tool("weather", Some("Returns weather data for a city."))).is_empty());
        // No English verb, but Chinese: not flagged.
        assert!(
            rules(&tool(
                "bing_search",
                Some("必应中文搜索工具，关键词与结果列表")
            ))
            .is_empty()
        );
    }

    #[test]
    fn too_long_counts_tokens_against_the_budget() {
        let long = "Returns the weather. ".repeat(100);
        let t = tool("get_weather", Some(&long));
        assert_eq!(rules(&t), ["description-too-long"]);
        let lax = LintConfig {
            max_description_tokens: 1000,
            ..LintConfig::default()
        };
        assert!(check(&t, &lax).is_empty());
    }
}
