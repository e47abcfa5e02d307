//! A proposer's answer: new wordings for some tools, in the contract JSON
//!
//! ```json
//! {"candidates": [{"rationale": "…",
//!                  "tools": {"TOOL": {"description": "…", "parameters": {"PARAM": "…"}}}}]}
//! ```
//!
//! `parameters` is optional, and so is `description` when `parameters` rewords
//! something. Models wrap JSON in prose or a fenced block even when asked not to, so
//! [`parse`] takes the whole answer as JSON, else the first fenced block that parses,
//! else the outermost `{…}`. What does not fit is a [`ProposalError`] that says what
//! was wrong with the proposer's own text, for the search's record (it retries once, then
//! skips the round's proposal: a bad answer never stops a search). [`Proposal::check`]
//! then holds each candidate to the suite: a tool or parameter that does not exist, or an
//! empty wording, makes that candidate unusable, not the others.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A proposer's answer: candidate wordings, in the proposer's order.
///
/// Keys beyond the contract's are ignored (models add notes and scores); a missing
/// `candidates` or `tools`, or a value of the wrong type, is an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// The candidates.
    pub candidates: Vec<Candidate>,
}

/// One candidate: new wordings of some tools, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Why the proposer expects it to do better (kept for the report; may be empty).
    #[serde(default)]
    pub rationale: String,
    /// The new wording of each tool it changes, by tool name.
    pub tools: IndexMap<String, ToolWording>,
}

/// The new wording of one tool: its description, and descriptions of some parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolWording {
    /// The tool's new description; absent keeps the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// New descriptions of parameters, by parameter name (top-level properties).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameters: IndexMap<String, String>,
}

/// Why a proposer's answer could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProposalError {
    /// The answer holds no JSON object at all.
    #[error("the proposer's answer holds no JSON object (it starts: {start:?})")]
    NoJson {
        /// The first characters of the answer.
        start: String,
    },
    /// JSON was found but is not the contract's shape (or not valid JSON).
    #[error("the proposer's answer is not the expected JSON: {message}")]
    Shape {
        /// What the JSON reader said, with line and column in the JSON that was read.
        message: String,
    },
}

impl ProposalError {
    /// How to fix the proposer's prompt or model.
    pub fn hint(&self) -> &'static str {
        "the answer must be one JSON object {\"candidates\": [{\"rationale\": \"…\", \"tools\": {\"TOOL\": {\"description\": \"…\", \"parameters\": {\"PARAM\": \"…\"}}}}]}; use a proposer that supports JSON output, or say so in --proposer-prompt"
    }
}

/// A candidate the suite cannot use, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The candidate's index in the proposal (from 0).
    pub index: usize,
    /// Every problem, in the candidate's order.
    pub problems: Vec<String>,
}

/// The first characters of `text`, for a message.
fn start_of(text: &str) -> String {
    let t = text.trim_start();
    match t.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    }
}

/// The contents of each fenced block (```` ``` ```` or `~~~`, any info string), in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut open: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        match open {
            None => {
                for fence in ["```", "~~~"] {
                    if trimmed.starts_with(fence) {
                        open = Some((fence, offset + line.len()));
                        break;
                    }
                }
            }
            Some((fence, start)) => {
                if trimmed.trim_end() == fence {
                    blocks.push(&text[start..offset]);
                    open = None;
                }
            }
        }
        offset += line.len();
    }
    blocks
}

/// Read a proposer's answer (see the module documentation for what is accepted).
pub fn parse(answer: &str) -> Result<Proposal, ProposalError> {
    let whole = answer.trim();
    let first_error = match serde_json::from_str::<Proposal>(whole) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    // Where the answer did not even start as JSON, look for it inside.
    let mut tried_inner = None;
    if !whole.starts_with('{') {
        for block in fenced_blocks(answer) {
            match serde_json::from_str::<Proposal>(block.trim()) {
                Ok(p) => return Ok(p),
                Err(e) => {
                    tried_inner.get_or_insert(e);
                }
            }
        }
        if let (Some(a), Some(b)) = (whole.find('{'), whole.rfind('}'))
            && a < b
        {
            match serde_json::from_str::<Proposal>(&whole[a..=b]) {
                Ok(p) => return Ok(p),
                Err(e) => {
                    tried_inner.get_or_insert(e);
                }
            }
        }
        if tried_inner.is_none() {
            return Err(ProposalError::NoJson {
                start: start_of(answer),
            });
        }
    }
    let e = tried_inner.unwrap_or(first_error);
    Err(ProposalError::Shape {
        message: e.to_string(),
    })
}

impl Proposal {
    /// Hold each candidate to the suite's tools: `tools` gives each tool's name and its
    /// parameter names. Returns the candidates that cannot be used, each with every
    /// problem; the others are usable as they are.
    pub fn check(&self, tools: &[(&str, Vec<&str>)]) -> Vec<Rejected> {
        let names: Vec<&str> = tools.iter().map(|(n, _)| *n).collect();
        let mut rejected = Vec::new();
        for (index, c) in self.candidates.iter().enumerate() {
            let mut problems = Vec::new();
            if c.tools.is_empty() {
                problems.push("it changes no tool".to_string());
            }
            for (tool, wording) in &c.tools {
                let Some((_, params)) = tools.iter().find(|(n, _)| n == tool) else {
                    problems.push(format!(
                        "tool `{tool}` is not in the suite (its tools: {})",
                        names.join(", ")
                    ));
                    continue;
                };
                if wording.description.is_none() && wording.parameters.is_empty() {
                    problems.push(format!(
                        "tool `{tool}`: neither a description nor a parameter is reworded"
                    ));
                }
                if wording
                    .description
                    .as_deref()
                    .is_some_and(|d| d.trim().is_empty())
                {
                    problems.push(format!("tool `{tool}`: the new description is empty"));
                }
                for (param, text) in &wording.parameters {
                    if !params.contains(&param.as_str()) {
                        let known = if params.is_empty() {
                            "it has none".to_string()
                        } else {
                            format!("its parameters: {}", params.join(", "))
                        };
                        problems.push(format!(
                            "tool `{tool}` has no parameter `{param}` ({known})"
                        ));
                    } else if text.trim().is_empty() {
                        problems.push(format!(
                            "tool `{tool}`: the new description of `{param}` is empty"
                        ));
                    }
                }
            }
            if !problems.is_empty() {
                rejected.push(Rejected { index, problems });
            }
        }
        rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRACT: &str = r#"{"candidates": [
        {"rationale": "say when to use it", "tools": {"get_weather": {"description": "Current weather in one city. Use for weather questions only.", "parameters": {"city": "City name, e.g. Paris."}}}},
        {"rationale": "shorter", "tools": {"get_weather": {"description": "Weather now, by city."}}}
    ]}"#;

    fn tools() -> Vec<(&'static str, Vec<&'static str>)> {
        vec![
            ("get_weather", vec!["city", "unit"]),
            ("get_stock_price", vec!["symbol"]),
        ]
    }

    #[test]
    fn the_contract_reads_as_is_in_the_proposers_order() {
        let p = parse(CONTRACT).unwrap();
        assert_eq!(p.candidates.len(), 2);
        let first = &p.candidates[0];
        assert_eq!(first.rationale, "say when to use it");
        let w = &first.tools["get_weather"];
        assert_eq!(
            w.description.as_deref(),
            Some("Current weather in one city. Use for weather questions only.")
        );
        assert_eq!(w.parameters["city"], "City name, e.g. Paris.");
        assert!(p.candidates[1].tools["get_weather"].parameters.is_empty());
        assert!(p.check(&tools()).is_empty());
    }

    #[test]
    fn json_in_a_fenced_block_or_in_prose_is_found() {
        let fenced = format!("Here are my ideas:\n\n```json\n{CONTRACT}\n```\nHope it helps.");
        assert_eq!(parse(&fenced).unwrap(), parse(CONTRACT).unwrap());
        let tilde = format!("~~~\n{CONTRACT}\n~~~");
        assert_eq!(parse(&tilde).unwrap(), parse(CONTRACT).unwrap());
        let prose = format!("Sure! {CONTRACT} Let me know.");
        assert_eq!(parse(&prose).unwrap(), parse(CONTRACT).unwrap());
        // A block that is not the contract is passed over for one that is.
        let two = format!("```\n{{\"note\": 1}}\n```\n```json\n{CONTRACT}\n```");
        assert_eq!(parse(&two).unwrap(), parse(CONTRACT).unwrap());
    }

    #[test]
    fn an_answer_without_json_or_of_another_shape_says_what_it_was() {
        let e = parse("I cannot help with that.").unwrap_err();
        assert!(
            matches!(&e, ProposalError::NoJson { start } if start == "I cannot help with that."),
            "{e:?}"
        );
        assert!(e.to_string().contains("holds no JSON object"), "{e}");
        assert!(e.hint().contains("\"candidates\""));

        let e = parse(r#"{"ideas": []}"#).unwrap_err();
        assert!(
            e.to_string().contains("missing field `candidates`"),
            "the reader's own words: {e}"
        );
        let e = parse(r#"{"candidates": [{"tools": {"get_weather": {"description": 5}}}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("expected a string"), "{e}");
        // Truncated output (a model cut off by its token limit) is a shape error.
        let e = parse(&CONTRACT[..CONTRACT.len() - 10]).unwrap_err();
        assert!(matches!(e, ProposalError::Shape { .. }), "{e:?}");
    }

    #[test]
    fn a_long_answer_is_quoted_by_its_start_only() {
        let e = parse(&"no json here ".repeat(100)).unwrap_err();
        let ProposalError::NoJson { start } = e else {
            panic!("{e:?}")
        };
        assert_eq!(start.chars().count(), 81, "80 characters and an ellipsis");
        assert!(start.ends_with('…'));
    }

    #[test]
    fn a_candidate_naming_what_the_suite_lacks_is_rejected_alone() {
        let p = parse(
            r#"{"candidates": [
                {"tools": {"get_wether": {"description": "typo"}}},
                {"tools": {"get_weather": {"parameters": {"country": "ISO code"}}}},
                {"tools": {"get_weather": {"description": "  "}, "get_stock_price": {}}},
                {"tools": {}},
                {"rationale": "fine", "tools": {"get_stock_price": {"parameters": {"symbol": "Ticker, e.g. AAPL."}}}}
            ]}"#,
        )
        .unwrap();
        let rejected = p.check(&tools());
        let indexes: Vec<usize> = rejected.iter().map(|r| r.index).collect();
        assert_eq!(indexes, [0, 1, 2, 3], "the last candidate is usable");
        assert_eq!(
            rejected[0].problems,
            ["tool `get_wether` is not in the suite (its tools: get_weather, get_stock_price)"]
        );
        assert_eq!(
            rejected[1].problems,
            ["tool `get_weather` has no parameter `country` (its parameters: city, unit)"]
        );
        assert_eq!(
            rejected[2].problems,
            [
                "tool `get_weather`: the new description is empty",
                "tool `get_stock_price`: neither a description nor a parameter is reworded"
            ]
        );
        assert_eq!(rejected[3].problems, ["it changes no tool"]);
    }
}
