//! Offline token counts with the o200k_base tokenizer (GPT-4o family).
//!
//! Used for the token size of each variant's tool definitions (what a clearer
//! description costs on every request) and to estimate usage when a response has none.
//! Counts are of the JSON tool definitions as OpenAI-style APIs send them; providers add
//! a few formatting tokens of their own, so treat them as close estimates.

use crate::provider::{Message, Request, Response, ToolDefinition, Usage};

/// The tokenizer used for every offline count.
pub const TOKENIZER: &str = "o200k_base";

fn count(text: &str) -> u64 {
    // The singleton loads the vocabulary once (about 0.3 s) on first use.
    tiktoken_rs::o200k_base_singleton().count_ordinary(text) as u64
}

/// Load the tokenizer's vocabulary now, in the background, so that a run's first count
/// does not wait for it (the load takes about 0.1 s in a release build).
pub fn warm_up() {
    std::thread::spawn(|| {
        let _ = tiktoken_rs::o200k_base_singleton();
    });
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
}
