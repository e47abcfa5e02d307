//! The judge's prompts: the built-in ones (`src/judge/prompts/*.jinja`, modelled on
//! When2Call's LLM-judge protocol: the tools offered, the conversation, the answer, and
//! a JSON verdict asked for), or a suite's own template (`judge: {prompt: FILE}`),
//! rendered with minijinja.
//!
//! A template sees the variables of [`VARIABLES`]. A suite's template replaces both
//! built-in prompts, so one that must ask both questions branches on `question`; it is
//! checked when the suite loads ([`check`], in the suite layer, which this module
//! builds on): it parses, uses no unknown variable, and uses the variables its questions
//! need.

use minijinja::Environment;
use serde::Serialize;

use super::JudgeQuestion;
use crate::chat::{Message, ToolDefinition};
use crate::suite::judge_prompt::environment;
pub use crate::suite::judge_prompt::{
    MAX_PROMPT_BYTES, Needs, PROMPT_FUEL, PromptError, VARIABLES, check,
};

/// The built-in prompt asking which behaviour a text answer shows.
pub const BEHAVIOUR_PROMPT: &str = include_str!("../prompts/behaviour.jinja");

/// The built-in prompt asking whether a final answer meets a rubric.
pub const RUBRIC_PROMPT: &str = include_str!("../prompts/rubric.jinja");

/// One offered tool, as a template sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolLine {
    /// Function name.
    pub name: String,
    /// The description of the trial's variant.
    pub description: String,
}

/// What one judge request is about: the values of [`VARIABLES`].
#[derive(Debug, Clone, Serialize)]
pub struct PromptInput {
    /// What is asked.
    pub question: JudgeQuestion,
    /// The tools offered.
    pub tools: Vec<ToolLine>,
    /// The last user message.
    pub user: String,
    /// The conversation, one line per message.
    pub conversation: String,
    /// The answer judged.
    pub answer: String,
    /// The rubric (empty for `behaviour`).
    pub rubric: String,
    /// A loop's calls and results (empty for a single turn).
    pub transcript: String,
}

impl PromptInput {
    /// The input for judging `answer` given the conversation `messages` and `tools`.
    pub fn new(
        question: JudgeQuestion,
        tools: &[ToolDefinition],
        messages: &[Message],
        answer: &str,
    ) -> PromptInput {
        PromptInput {
            question,
            tools: tools
                .iter()
                .map(|t| ToolLine {
                    name: t.name.clone(),
                    description: t.description.clone(),
                })
                .collect(),
            user: messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::User { content } => Some(content.clone()),
                    _ => None,
                })
                .unwrap_or_default(),
            conversation: conversation_text(messages),
            answer: answer.to_string(),
            rubric: String::new(),
            transcript: String::new(),
        }
    }
}

/// Longest tool result or argument text quoted in a conversation or transcript: the
/// judge needs the gist, and a huge result would crowd out the answer.
const MAX_QUOTE_CHARS: usize = 1000;

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((i, _)) => format!(
            "{}… [{} more characters]",
            &text[..i],
            text[i..].chars().count()
        ),
        None => text.to_string(),
    }
}

/// `messages` as lines a judge reads: `role: text`, an assistant's calls as
/// `assistant called NAME(ARGS)`, a tool's result as `tool NAME returned: TEXT`.
pub fn conversation_text(messages: &[Message]) -> String {
    let mut lines = Vec::with_capacity(messages.len());
    for m in messages {
        match m {
            Message::System { content } => lines.push(format!("system: {content}")),
            Message::User { content } => lines.push(format!("user: {content}")),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                    lines.push(format!("assistant: {text}"));
                }
                for c in tool_calls {
                    lines.push(format!(
                        "assistant called {}({})",
                        c.name,
                        clip(&c.arguments)
                    ));
                }
            }
            Message::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let name = if name.is_empty() { "?" } else { name };
                let verb = if *is_error { "failed" } else { "returned" };
                lines.push(format!("tool {name} {verb}: {}", clip(content)));
            }
        }
    }
    lines.join("\n")
}

/// The prompts a judge renders: the suite's template for both questions, or the
/// built-in one of each question.
#[derive(Debug)]
pub struct Prompts {
    env: Environment<'static>,
}

const BEHAVIOUR: &str = "behaviour";
const RUBRIC: &str = "rubric";

impl Prompts {
    /// The built-in prompts, or `custom` (already [`check`]ed) for both questions.
    pub fn new(custom: Option<&str>) -> Result<Prompts, PromptError> {
        let mut env = environment();
        let (behaviour, rubric) = match custom {
            Some(t) => (t.to_string(), t.to_string()),
            None => (BEHAVIOUR_PROMPT.to_string(), RUBRIC_PROMPT.to_string()),
        };
        env.add_template_owned(BEHAVIOUR, behaviour)
            .map_err(|e| PromptError::Syntax(e.to_string()))?;
        env.add_template_owned(RUBRIC, rubric)
            .map_err(|e| PromptError::Syntax(e.to_string()))?;
        Ok(Prompts { env })
    }

    /// The prompt text for `input`.
    pub fn render(&self, input: &PromptInput) -> Result<String, PromptError> {
        let name = match input.question {
            JudgeQuestion::Behaviour => BEHAVIOUR,
            JudgeQuestion::Rubric => RUBRIC,
        };
        self.env
            .get_template(name)
            .and_then(|t| t.render(minijinja::Value::from(minijinja::value::Serde(input))))
            .map_err(|e| PromptError::Render(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(question: JudgeQuestion) -> PromptInput {
        let tools = [ToolDefinition {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: std::sync::Arc::new(serde_json::json!({"type": "object"})),
        }];
        let messages = [
            Message::System {
                content: "Be brief.".into(),
            },
            Message::User {
                content: "What's the weather?".into(),
            },
        ];
        PromptInput::new(question, &tools, &messages, "Which city?")
    }

    #[test]
    fn the_built_in_prompts_show_tools_conversation_and_answer() {
        let p = Prompts::new(None).unwrap();
        let text = p.render(&input(JudgeQuestion::Behaviour)).unwrap();
        assert!(
            text.contains("- get_weather: Current weather for a city.\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "<conversation>\nsystem: Be brief.\nuser: What's the weather?\n</conversation>"
            ),
            "{text}"
        );
        assert!(text.contains("<answer>\nWhich city?\n</answer>"), "{text}");
        assert!(
            text.contains(r#""behaviour": "request_for_info""#),
            "{text}"
        );
        let mut rubric = input(JudgeQuestion::Rubric);
        rubric.rubric = "Names the city.".into();
        let text = p.render(&rubric).unwrap();
        assert!(
            text.contains("<rubric>\nNames the city.\n</rubric>"),
            "{text}"
        );
        // Without a transcript the block is left out.
        assert!(!text.contains("<transcript>"), "{text}");
        assert!(text.contains(r#"{"pass": true or false"#), "{text}");
    }

    #[test]
    fn the_built_in_prompts_pass_their_own_check() {
        let both = Needs {
            behaviour: true,
            rubric: true,
        };
        assert_eq!(check(RUBRIC_PROMPT, both), Err(PromptError::Missing {
            missing: vec!["question".into()],
            why: "the suite asks both questions (behaviour and rubric) with this one prompt, which must branch on `question`".into(),
        }));
        assert_eq!(check(BEHAVIOUR_PROMPT, Needs::default()), Ok(()));
        assert_eq!(
            check(
                RUBRIC_PROMPT,
                Needs {
                    behaviour: false,
                    rubric: true
                }
            ),
            Ok(())
        );
    }

    #[test]
    fn a_custom_template_is_checked_for_what_it_is_asked() {
        let rubric_only = Needs {
            behaviour: false,
            rubric: true,
        };
        assert_eq!(
            check("Judge {{ anser }} by {{ rubric }}", rubric_only),
            Err(PromptError::Unknown(vec!["anser".into()]))
        );
        let e = check("Judge {{ answer }}", rubric_only).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the judge prompt never uses `rubric`: cases have `final.rubric`, which the judge must see"
        );
        let e = check("Judge {{ answer }", Needs::default()).unwrap_err();
        assert!(matches!(e, PromptError::Syntax(_)), "{e}");
        // Loop variables and minijinja's own functions are not unknown.
        assert_eq!(
            check(
                "{% for t in tools %}{{ t.name }}{% endfor %}{% for i in range(2) %}{{ i }}{% endfor %}{{ answer }}",
                Needs::default()
            ),
            Ok(())
        );
        let custom =
            "{% if question == 'rubric' %}R: {{ rubric }}{% else %}B{% endif %}: {{ answer }}";
        let p = Prompts::new(Some(custom)).unwrap();
        assert_eq!(
            p.render(&input(JudgeQuestion::Behaviour)).unwrap(),
            "B: Which city?"
        );
        let mut r = input(JudgeQuestion::Rubric);
        r.rubric = "x".into();
        assert_eq!(p.render(&r).unwrap(), "R: x: Which city?");
    }

    #[test]
    fn a_runaway_template_fails_instead_of_hanging() {
        let p = Prompts::new(Some(
            "{% for a in range(10000) %}{% for b in range(10000) %}.{% endfor %}{% endfor %}{{ answer }}",
        ))
        .unwrap();
        let e = p.render(&input(JudgeQuestion::Behaviour)).unwrap_err();
        assert!(e.to_string().contains("fuel"), "{e}");
    }

    #[test]
    fn long_tool_results_are_clipped_in_the_conversation() {
        let long = "x".repeat(MAX_QUOTE_CHARS + 5);
        let text = conversation_text(&[Message::Tool {
            tool_call_id: "c1".into(),
            name: "search".into(),
            content: long,
            is_error: true,
        }]);
        assert_eq!(
            text,
            format!(
                "tool search failed: {}… [5 more characters]",
                "x".repeat(MAX_QUOTE_CHARS)
            )
        );
    }
}
