//! `scripted:coin` and `scripted:coin-N`: a simulated model that ignores meaning and
//! passes or fails each trial by a fair coin. It is for testing a search's
//! false-acceptance rate: no wording is better than another for it, so every wording
//! `toolgauge improve` accepts against it is a false acceptance.
//!
//! Each trial draws one number in [0, 1) from a SHA-256 hash of the seed `N` (0 for
//! `scripted:coin`), the case id, the repeat index and the request's tool definitions
//! (names, descriptions and parameters, as canonical JSON). Below 1/2 it answers as the
//! oracle; below 3/4 it fails by answering without a call; otherwise it fails by calling
//! another tool ([`Toss`]). Hashing the definitions gives every wording its own
//! independent coin, as a model whose answers vary from run to run but not with what a
//! wording says; the draw does not depend on the round, so a loop episode is played
//! wholly as the oracle or wholly as the failure.

use sha2::{Digest, Sha256};

use crate::provider::cassette::write_canonical;
use crate::provider::{Request, TrialKey};

/// The model name prefix of a seeded coin (`coin-7`).
pub const PREFIX: &str = "coin-";

/// The seed of model name `model` (`coin` is seed 0, `coin-N` seed N), or `None` when it
/// is not a coin's name.
pub fn seed_of(model: &str) -> Option<u64> {
    if model == "coin" {
        return Some(0);
    }
    let n = model.strip_prefix(PREFIX)?;
    // Digits only: `coin-+7` and `coin- 7` are typos, not seeds.
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// What the coin does in one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toss {
    /// Answer as the oracle.
    Oracle,
    /// Fail by answering in text without a call.
    NoCall,
    /// Fail by calling a tool other than the expected one (the first offered, with
    /// arguments that fit its schema).
    OtherTool,
}

/// The trial's number in [0, 1) (module docs).
pub fn draw(seed: u64, request: &Request, key: &TrialKey) -> f64 {
    let mut tools = String::new();
    write_canonical(
        &serde_json::to_value(&*request.tools).unwrap_or_default(),
        &mut tools,
    );
    let mut h = Sha256::new();
    // Lengths before the variable parts, so no two inputs share one byte string.
    h.update(b"toolgauge scripted:coin\0");
    h.update(seed.to_le_bytes());
    h.update((key.case_id.len() as u64).to_le_bytes());
    h.update(key.case_id.as_bytes());
    h.update(key.repeat.to_le_bytes());
    h.update(tools.as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // 53 bits: every value is an exact f64.
    (u64::from_le_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

/// What the coin does in trial `key` of `request`.
pub fn toss(seed: u64, request: &Request, key: &TrialKey) -> Toss {
    match draw(seed, request, key) {
        d if d < 0.5 => Toss::Oracle,
        d if d < 0.75 => Toss::NoCall,
        _ => Toss::OtherTool,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::provider::{Message, Provider, Response, ToolChoice, ToolDefinition};
    use crate::scripted::ScriptedProvider;
    use crate::suite::Suite;

    #[test]
    fn the_seed_comes_from_the_name() {
        assert_eq!(seed_of("coin"), Some(0));
        assert_eq!(seed_of("coin-7"), Some(7));
        assert_eq!(seed_of("coin-18446744073709551615"), Some(u64::MAX));
        for bad in ["coin-", "coin-x", "coin-+7", "coin--1", "coins", "coin-7a"] {
            assert_eq!(seed_of(bad), None, "{bad}");
        }
    }

    const CASES: usize = 200;

    /// A suite of 200 should_call cases of one tool, with two wordings of it.
    fn suite() -> Arc<Suite> {
        let mut yaml = String::from(
            "tools:\n\
             \x20 - name: get_weather\n\
             \x20   variants: {a: \"Weather for a city.\", b: \"Weather forecast for a city.\"}\n\
             \x20   parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n\
             \x20 - name: get_time\n\
             \x20   description: Local time.\n\
             \x20   parameters: {type: object}\n\
             cases:\n",
        );
        for i in 0..CASES {
            yaml.push_str(&format!(
                "  - {{id: c{i}, kind: should_call, prompt: \"Weather in Paris?\", expect: {{calls: [{{tool: get_weather, args: {{city: Paris}}}}]}}}}\n"
            ));
        }
        Arc::new(crate::suite::load_str(&yaml, Path::new("s.yaml")).unwrap())
    }

    fn tools(suite: &Suite, variant: &str) -> Arc<Vec<ToolDefinition>> {
        Arc::new(
            suite.cases[0]
                .tools(suite)
                .iter()
                .map(|t| t.definition(variant))
                .collect(),
        )
    }

    /// Whether each case's answer passes (the oracle's call), under `model` and `variant`.
    async fn passes(suite: &Arc<Suite>, model: &str, variant: &str) -> Vec<bool> {
        let p = ScriptedProvider::new(model, suite.clone()).unwrap();
        let tools = tools(suite, variant);
        let mut out = Vec::new();
        for c in &suite.cases {
            let request = Request {
                messages: c.messages.clone(),
                tools: tools.clone(),
                tool_choice: ToolChoice::Auto,
            };
            let key = TrialKey {
                case_id: c.id.clone(),
                target: format!("scripted:{model}"),
                variant: variant.into(),
                tool_choice: ToolChoice::Auto,
                repeat: 0,
            };
            let r: Response = p.complete(&request, &key).await.unwrap();
            let pass = r.tool_calls.len() == 1
                && r.tool_calls[0].name == "get_weather"
                && r.tool_calls[0].arguments == r#"{"city":"Paris"}"#;
            if !pass {
                // A failure is one of the two kinds, never a call of the right tool.
                assert!(
                    r.tool_calls.is_empty() || r.tool_calls[0].name == "get_time",
                    "{r:?}"
                );
            }
            out.push(pass);
        }
        out
    }

    fn count(v: &[bool]) -> usize {
        v.iter().filter(|p| **p).count()
    }

    fn disagree(a: &[bool], b: &[bool]) -> usize {
        a.iter().zip(b).filter(|(x, y)| x != y).count()
    }

    #[tokio::test]
    async fn the_same_request_gets_the_same_answer() {
        let s = suite();
        let first = passes(&s, "coin", "a").await;
        assert_eq!(first, passes(&s, "coin", "a").await);
        assert_eq!(first, passes(&s, "coin-0", "a").await, "coin is coin-0");
    }

    #[tokio::test]
    async fn each_wording_gets_its_own_fair_coin() {
        let s = suite();
        let a = passes(&s, "coin", "a").await;
        let b = passes(&s, "coin", "b").await;
        // Binomial(200, 1/2): 70..130 is more than 4 standard deviations (7.07) wide.
        assert!((70..=130).contains(&count(&a)), "{}", count(&a));
        assert!((70..=130).contains(&count(&b)), "{}", count(&b));
        // Independent coins disagree with chance 1/2.
        assert!(
            (70..=130).contains(&disagree(&a, &b)),
            "{}",
            disagree(&a, &b)
        );
    }

    #[tokio::test]
    async fn each_seed_is_another_coin() {
        let s = suite();
        let zero = passes(&s, "coin", "a").await;
        let seven = passes(&s, "coin-7", "a").await;
        assert!((70..=130).contains(&count(&seven)), "{}", count(&seven));
        assert!(
            (70..=130).contains(&disagree(&zero, &seven)),
            "{}",
            disagree(&zero, &seven)
        );
    }

    #[test]
    fn the_draw_reads_the_repeat_and_the_tools_not_the_variant_name() {
        let s = suite();
        let request = Request {
            messages: vec![Message::User {
                content: "hi".into(),
            }],
            tools: tools(&s, "a"),
            tool_choice: ToolChoice::Auto,
        };
        let key = |variant: &str, repeat: u32| TrialKey {
            case_id: "c0".into(),
            target: "scripted:coin".into(),
            variant: variant.into(),
            tool_choice: ToolChoice::Auto,
            repeat,
        };
        let d = draw(0, &request, &key("a", 0));
        assert_eq!(d, draw(0, &request, &key("renamed", 0)));
        let repeats: Vec<f64> = (0..4).map(|r| draw(0, &request, &key("a", r))).collect();
        assert!(repeats.windows(2).all(|w| w[0] != w[1]), "{repeats:?}");
    }
}
