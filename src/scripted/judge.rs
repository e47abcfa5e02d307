//! `scripted:judge`: an offline stand-in for a judge model. It is a SIMULATION, not a
//! model: it reads the answer out of the judge prompt and answers what the built-in
//! rules decide, in the JSON a judge is asked for, so suites with `judge:` and
//! `final.rubric` run (and their judge plumbing is tested) with no network and no key.
//!
//! - The behaviour question: the built-in classifier ([`crate::behaviour::classify()`])
//!   on the answer, `{"behaviour": LABEL, "rationale": "…"}`.
//! - The rubric question: it can not understand a rubric. It passes the answer when
//!   every phrase the rubric quotes (in `"…"`, `“…”` or `「…」`) appears in it
//!   (ignoring case), and fails it otherwise; a rubric that quotes nothing is an error
//!   (the trial is then an error, `judge_error`), never a guess.
//!
//! It finds the answer between `<answer>` and `</answer>` and the rubric between
//! `<rubric>` and `</rubric>`, as the built-in prompts write them: a suite's own prompt
//! must keep those tags for it. It reports no usage (the run estimates the tokens).

use async_trait::async_trait;
use serde_json::json;

use crate::behaviour::classify;
use crate::provider::{Message, Provider, ProviderError, Request, Response, TrialKey};

/// The scripted judge's model name (`scripted:judge`).
pub const MODEL: &str = "judge";

/// What `scripted:judge` does, for the list of scripted models.
pub const DESCRIPTION: &str = "a simulated judge model for offline runs: the built-in classifier decides behaviours; a rubric passes when every phrase it quotes appears in the answer";

/// The simulated judge.
#[derive(Debug, Default)]
pub struct ScriptedJudge;

fn unsupported(message: String) -> ProviderError {
    ProviderError::Unsupported {
        provider: "scripted:judge".into(),
        message,
    }
}

/// The text between the last `<tag>` block's tags: from the first `<tag>` after
/// `after` to the last `</tag>`.
fn block<'a>(prompt: &'a str, tag: &str, after: usize) -> Option<&'a str> {
    let close = format!("</{tag}>");
    let open = format!("<{tag}>");
    let end = prompt.rfind(&close)?;
    let start = prompt[..end].get(after..)?.find(&open)? + after + open.len();
    Some(prompt[start..end].trim_matches('\n'))
}

/// The phrases `rubric` quotes.
fn quoted(rubric: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('「', '」')] {
        let mut rest = rubric;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            let Some(j) = after.find(close) else { break };
            let phrase = after[..j].trim();
            if !phrase.is_empty() {
                out.push(phrase);
            }
            rest = &after[j + close.len_utf8()..];
        }
    }
    out
}

/// The scripted judge's answer to `prompt`.
fn judge(prompt: &str) -> Result<String, ProviderError> {
    // The conversation (quoted before the answer) may itself hold the tags.
    let after = prompt.rfind("</conversation>").unwrap_or(0);
    let answer = block(prompt, "answer", after).ok_or_else(|| {
        unsupported(
            "the prompt has no `<answer>…</answer>` block; a suite's own judge prompt must keep the built-in prompts' tags for the scripted judge".into(),
        )
    })?;
    let answer_end = prompt.rfind("</answer>").unwrap_or(0);
    if let Some(rubric) = block(prompt, "rubric", answer_end) {
        let phrases = quoted(rubric);
        if phrases.is_empty() {
            return Err(unsupported(format!(
                "the scripted judge can not read a rubric; it checks only the phrases a rubric quotes, and `{rubric}` quotes none (quote the words the answer must contain, or use a model as the judge)"
            )));
        }
        let lower = answer.to_lowercase();
        let missing: Vec<&str> = phrases
            .iter()
            .copied()
            .filter(|p| !lower.contains(&p.to_lowercase()))
            .collect();
        let verdict = if missing.is_empty() {
            json!({"pass": true, "rationale": format!("the answer contains every quoted phrase: {}", phrases.join(", "))})
        } else {
            json!({"pass": false, "rationale": format!("the answer lacks: {}", missing.join(", "))})
        };
        return Ok(verdict.to_string());
    }
    let c = classify(answer);
    let rationale = match &c.cue {
        Some(cue) => format!("the built-in classifier keyed on `{cue}`"),
        None => "the built-in classifier found no cue of a question or a refusal".into(),
    };
    Ok(json!({"behaviour": c.behaviour.label(), "rationale": rationale}).to_string())
}

#[async_trait]
impl Provider for ScriptedJudge {
    async fn complete(&self, request: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
        let prompt = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { content } => Some(content.as_str()),
                _ => None,
            })
            .unwrap_or_default();
        Ok(Response {
            text: Some(judge(prompt)?),
            finish_reason: Some("stop".into()),
            ..Response::default()
        })
    }

    fn source(&self) -> String {
        "scripted judge (a simulation: the built-in classifier and quoted rubric phrases, not a model)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::model::JudgeQuestion;
    use crate::judge::model::prompt::{PromptInput, Prompts};
    use crate::judge::model::verdict::{parse_behaviour, parse_rubric};

    fn prompt(question: JudgeQuestion, user: &str, answer: &str, rubric: &str) -> String {
        let mut input = PromptInput::new(
            question,
            &[],
            &[Message::User {
                content: user.into(),
            }],
            answer,
        );
        input.rubric = rubric.into();
        Prompts::new(None).unwrap().render(&input).unwrap()
    }

    #[test]
    fn the_behaviour_is_the_classifiers_on_the_answer_alone() {
        // The question in the conversation is not the answer's: only the answer counts.
        let p = prompt(
            JudgeQuestion::Behaviour,
            "Is it raining? <answer>?</answer>",
            "It is sunny.",
            "",
        );
        let (b, _) = parse_behaviour(&judge(&p).unwrap()).unwrap();
        assert_eq!(b, classify("It is sunny.").behaviour);
        let p = prompt(JudgeQuestion::Behaviour, "Weather?", "Which city?", "");
        let (b, _) = parse_behaviour(&judge(&p).unwrap()).unwrap();
        assert_eq!(b, classify("Which city?").behaviour);
    }

    #[test]
    fn a_rubric_passes_when_every_quoted_phrase_appears() {
        let rubric = r#"Mentions "Paris" and “18 °C”."#;
        let p = prompt(
            JudgeQuestion::Rubric,
            "Weather?",
            "In paris it is 18 °C.",
            rubric,
        );
        assert_eq!(
            parse_rubric(&judge(&p).unwrap()),
            Ok((
                true,
                "the answer contains every quoted phrase: Paris, 18 °C".into()
            ))
        );
        let p = prompt(JudgeQuestion::Rubric, "Weather?", "It is 18 °C.", rubric);
        assert_eq!(
            parse_rubric(&judge(&p).unwrap()),
            Ok((false, "the answer lacks: Paris".into()))
        );
        let p = prompt(JudgeQuestion::Rubric, "Weather?", "Sunny.", "Is polite.");
        let e = judge(&p).unwrap_err().to_string();
        assert!(e.contains("`Is polite.` quotes none"), "{e}");
    }

    #[test]
    fn a_prompt_without_the_tags_is_refused() {
        let e = judge("Judge this: hello").unwrap_err().to_string();
        assert!(e.contains("no `<answer>…</answer>` block"), "{e}");
    }
}
