//! The set family: rules about the tools together. Duplicate names; confusable pairs
//! (names or descriptions too alike, computed without a model); a confusable tool whose
//! description does not say when to use it (`description-no-when-to-use`); the total
//! token size of the definitions.
//!
//! Pairs are compared in O(n²) but cheaply: each tool's normalized name and its sorted
//! description word ids are computed once, and a pair is skipped early when the lengths
//! alone rule similarity out (500 tools are 125k pairs, a few milliseconds).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::model::{Finding, LintConfig, LintTool};
use super::text::{content_stems, edit_distance, identifier_words};
use crate::provider::ToolDefinition;

/// Text that says when to use a tool (or when not to).
const WHEN_CUES: &[&str] = &[
    "use when",
    "use this",
    "use for",
    "use it",
    "when ",
    "only ",
    "not for",
    "instead",
    "rather than",
    "unlike",
    "prefer",
    "if the user",
    "if you",
    "用于",
    "当",
    "适用",
    "不要",
    "仅",
    "而不是",
    "如果",
    "时使用",
];

/// A confusable pair: indices into the tool list, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The earlier tool.
    pub first: usize,
    /// The later tool.
    pub second: usize,
    /// Name similarity (1 - edit distance / longer length of the normalized names).
    pub name: f64,
    /// Jaccard similarity of the descriptions' content words.
    pub description: f64,
}

/// Every set finding of `tools`.
pub fn check(tools: &[LintTool], config: &LintConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    for (i, t) in tools.iter().enumerate() {
        if let Some(&j) = first_of.get(t.name.as_str()) {
            let other = tools[j]
                .at
                .map(|p| format!(" (first at line {})", p.line))
                .unwrap_or_default();
            out.push(
                Finding::new(
                    "set-duplicate-name",
                    format!("two tools are named `{}`{other}", t.name),
                    "give every tool a distinct name: a model (and most providers) cannot tell them apart",
                )
                .on(t, t.at),
            );
        } else {
            first_of.insert(&t.name, i);
        }
    }
    let pairs = confusable_pairs(tools, config);
    let mut siblings: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for p in &pairs {
        let (a, b) = (&tools[p.first], &tools[p.second]);
        let why = if p.name >= config.name_similarity {
            format!("names {:.0}% alike", p.name * 100.0)
        } else {
            format!(
                "descriptions share {:.0}% of their words",
                p.description * 100.0
            )
        };
        out.push(
            Finding::new(
                "set-confusable",
                format!("`{}` and `{}` are easy to confuse: {why}", b.name, a.name),
                "make the names say what differs, and say in each description when to use it rather than the other",
            )
            .on(b, b.at),
        );
        siblings.entry(p.first).or_default().push(p.second);
        siblings.entry(p.second).or_default().push(p.first);
    }
    for (i, others) in siblings {
        let t = &tools[i];
        let text = t.description.as_deref().unwrap_or("").to_lowercase();
        if text.trim().is_empty() || WHEN_CUES.iter().any(|c| text.contains(c)) {
            continue;
        }
        let names: Vec<String> = others
            .iter()
            .map(|&j| format!("`{}`", tools[j].name))
            .collect();
        out.push(
            Finding::new(
                "description-no-when-to-use",
                format!(
                    "`{}` looks like {} but its description does not say when to use it",
                    t.name,
                    names.join(", ")
                ),
                "add a sentence such as \"Use when …; for … use `other_tool` instead.\"",
            )
            .on(t, t.description_pos()),
        );
    }
    let defs: Vec<ToolDefinition> = tools
        .iter()
        .map(|t| ToolDefinition {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            parameters: Arc::new(t.parameters.clone()),
        })
        .collect();
    let total = crate::score::tokens::tool_definition_tokens(&defs);
    if total > config.max_total_tokens {
        out.push(Finding::new(
            "set-total-tokens",
            format!(
                "the {} tool definitions are {total} tokens together (o200k_base), over the budget of {}",
                tools.len(),
                config.max_total_tokens
            ),
            "offer fewer tools per request (split the server, or load tools on demand), shorten descriptions, or raise the budget (`--max-total-tokens`)",
        ));
    }
    out
}

/// The confusable pairs of `tools`, in order: names whose normalized forms are at least
/// `config.name_similarity` alike, or descriptions (both of at least 4 content words)
/// whose word sets have a Jaccard similarity of at least `config.description_similarity`.
/// Tools of the same name are duplicates, not pairs.
pub fn confusable_pairs(tools: &[LintTool], config: &LintConfig) -> Vec<Pair> {
    let names: Vec<Vec<char>> = tools
        .iter()
        .map(|t| identifier_words(&t.name).join("_").chars().collect())
        .collect();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let sets: Vec<Vec<u32>> = tools
        .iter()
        .map(|t| {
            let mut v: Vec<u32> = content_stems(t.description.as_deref().unwrap_or(""))
                .into_iter()
                .map(|w| {
                    let n = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                    *ids.entry(w).or_insert(n)
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let mut out = Vec::new();
    for i in 0..tools.len() {
        for j in i + 1..tools.len() {
            if tools[i].name == tools[j].name {
                continue;
            }
            let name = name_similarity(&names[i], &names[j], config.name_similarity);
            let description = jaccard(&sets[i], &sets[j], config.description_similarity);
            if name >= config.name_similarity || description >= config.description_similarity {
                out.push(Pair {
                    first: i,
                    second: j,
                    name,
                    description,
                });
            }
        }
    }
    out
}

/// 1 - edit distance / longer length, or 0 when the lengths alone keep it under `floor`.
fn name_similarity(a: &[char], b: &[char], floor: f64) -> f64 {
    let (la, lb) = (a.len(), b.len());
    let longer = la.max(lb);
    if longer == 0 || (la.min(lb) as f64) < floor * longer as f64 {
        return 0.0;
    }
    let a: String = a.iter().collect();
    let b: String = b.iter().collect();
    1.0 - edit_distance(&a, &b) as f64 / longer as f64
}

/// |A ∩ B| / |A ∪ B| of two sorted sets of at least 4 words, or 0 when the sizes alone
/// keep it under `floor`.
fn jaccard(a: &[u32], b: &[u32], floor: f64) -> f64 {
    let (la, lb) = (a.len(), b.len());
    if la < 4 || lb < 4 || (la.min(lb) as f64) < floor * la.max(lb) as f64 {
        return 0.0;
    }
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < la && j < lb {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    both as f64 / (la + lb - both) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> LintTool {
        LintTool {
            name: name.into(),
            description: Some(description.into()),
            parameters: json!({"type": "object"}),
            ..LintTool::default()
        }
    }

    fn rules(tools: &[LintTool]) -> Vec<(&'static str, String)> {
        check(tools, &LintConfig::default())
            .into_iter()
            .map(|f| (f.rule, f.tool.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn duplicates_are_errors() {
        let t = [
            tool("search", "Searches the web."),
            tool("search", "Searches files."),
        ];
        assert_eq!(rules(&t), [("set-duplicate-name", "search".to_string())]);
    }

    #[test]
    fn alike_names_are_confusable_and_need_when_to_use() {
        let t = [
            tool("get_user", "Returns one user by id."),
            tool(
                "get_users",
                "Returns users. Use when you need several at once.",
            ),
        ];
        assert_eq!(
            rules(&t),
            [
                ("set-confusable", "get_users".to_string()),
                ("description-no-when-to-use", "get_user".to_string()),
            ]
        );
    }

    #[test]
    fn alike_descriptions_are_confusable_in_chinese_too() {
        let t = [
            tool("bing_search", "使用必应搜索指定的关键词并返回搜索结果列表"),
            tool("web_lookup", "使用必应搜索指定关键词并返回结果列表"),
        ];
        let found = rules(&t);
        assert!(
            found.contains(&("set-confusable", "web_lookup".to_string())),
            "{found:?}"
        );
    }

    #[test]
    fn different_tools_are_not_confusable() {
        let t = [
            tool("get_weather", "Returns the current weather for one city."),
            tool(
                "book_flight",
                "Books a flight between two airports on a date.",
            ),
        ];
        assert_eq!(rules(&t), []);
    }

    #[test]
    fn total_tokens_over_the_budget() {
        let t = [tool(
            "get_weather",
            "Returns the current weather for one city.",
        )];
        let tight = LintConfig {
            max_total_tokens: 10,
            ..LintConfig::default()
        };
        let f = check(&t, &tight);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].rule, "set-total-tokens");
        assert_eq!(f[0].tool, None);
    }
}
