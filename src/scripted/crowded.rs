//! `scripted:crowded`: a simulated model whose tool selection degrades as the tool list
//! grows, so the tool-count chart of an offline example has a curve to show. It is a
//! simulation that demonstrates the chart, not any model's result.
//!
//! It answers as the oracle, except that with chance `p = (T - 1) / (T - 1 + K)` for a
//! request offering `T` tools (`K` = [`HALF_AT`]) it is "confused":
//! - where the oracle calls, its first call names the offered tool (other than the
//!   expected ones) whose name and description share the most words with the user's
//!   last message (ties: the first by name), keeping the oracle's arguments;
//! - where the oracle answers in text in a `should_not_call` trial, with chance `p / 2`
//!   it calls that most similar tool with `{}`.
//!
//! The draw is one seeded number per trial (case, variant, tool_choice, repeat) that does
//! not depend on the tool count, and `p` grows with it: a trial confused at N=10 is
//! confused at N=50 too, so the simulated curve falls monotonically as N grows.

use std::collections::HashSet;

use crate::provider::{Message, Request, Response, TrialKey};
use crate::suite::distractors::pick::unit;

/// The number of extra tools at which the chance of confusion is one half.
pub const HALF_AT: f64 = 60.0;

/// The chance of confusion for a request offering `tools` tools.
pub fn confusion_chance(tools: usize) -> f64 {
    let extra = tools.saturating_sub(1) as f64;
    extra / (extra + HALF_AT)
}

fn words(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// The offered tool, other than `exclude`, most like the user's last message.
fn most_similar<'a>(request: &'a Request, exclude: &[&str]) -> Option<&'a str> {
    let prompt = request
        .messages
        .iter()
        .rev()
        .find(|m| matches!(m, Message::User { .. }))
        .and_then(Message::text)
        .map(words)
        .unwrap_or_default();
    let mut best: Option<(usize, &str)> = None;
    for t in request.tools.iter() {
        if exclude.contains(&t.name.as_str()) {
            continue;
        }
        let mut w = words(&t.name.replace('_', " "));
        w.extend(words(&t.description));
        let score = w.intersection(&prompt).count();
        let better = match best {
            None => true,
            Some((s, n)) => score > s || (score == s && t.name.as_str() < n),
        };
        if better {
            best = Some((score, &t.name));
        }
    }
    best.map(|(_, n)| n)
}

/// Turn the oracle's `answer` into the crowded model's, for trial `key` whose expected
/// tools are `expected`; `should_not_call` says the trial expects no call.
pub fn answer(
    mut answer: Response,
    request: &Request,
    key: &TrialKey,
    expected: &[&str],
    should_not_call: bool,
) -> Response {
    let p = confusion_chance(request.tools.len());
    let mode = key.tool_choice.to_string();
    let draw = unit(
        0,
        &[&key.case_id, &key.variant, &mode, &key.repeat.to_string()],
    );
    if draw >= p {
        return answer;
    }
    if let Some(first) = answer.tool_calls.first_mut() {
        if let Some(other) = most_similar(request, expected) {
            first.name = other.to_string();
        }
    } else if should_not_call
        && draw < p / 2.0
        && let Some(other) = most_similar(request, expected)
    {
        answer.text = None;
        answer.tool_calls.push(crate::provider::ToolCall {
            id: Some("call_1".into()),
            name: other.to_string(),
            arguments: "{}".into(),
        });
        answer.finish_reason = Some("tool_calls".into());
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chance_grows_with_the_tool_count() {
        assert_eq!(confusion_chance(1), 0.0);
        // By hand: 60 / (60 + 60) = 0.5; 10 / 70.
        assert_eq!(confusion_chance(61), 0.5);
        assert!((confusion_chance(11) - 10.0 / 70.0).abs() < 1e-12);
        assert!(confusion_chance(101) > confusion_chance(51));
    }
}
