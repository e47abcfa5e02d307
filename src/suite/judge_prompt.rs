//! Checking a suite's judge prompt template (`judge: {prompt: FILE}`) when the suite
//! loads: it parses, uses no unknown variable, and uses the variables its questions need.
//!
//! The check is part of compiling a suite, so it lives in the suite layer; the judge
//! (`judge::model::prompt`) renders the same templates in the same [`environment`].

use std::collections::BTreeSet;

use minijinja::{Environment, UndefinedBehavior};

/// Every variable a judge template can use, with what it holds.
pub const VARIABLES: &[(&str, &str)] = &[
    (
        "question",
        "what the judge is asked: `behaviour` or `rubric`",
    ),
    (
        "tools",
        "the tools offered to the model, each with `name` and `description` (the trial's variant wording)",
    ),
    ("user", "the text of the last user message"),
    (
        "conversation",
        "the conversation the model answered, one `role: text` line per message",
    ),
    (
        "answer",
        "the text answer judged (a loop case's final answer)",
    ),
    (
        "rubric",
        "the case's `final.rubric` (empty for `behaviour`)",
    ),
    (
        "transcript",
        "a loop case's tool calls and results before its final answer, one per line (empty otherwise)",
    ),
];

/// Functions minijinja defines itself, which a template may call.
const BUILT_IN_GLOBALS: &[&str] = &["range", "dict", "namespace", "debug"];

/// The most work (minijinja fuel: about one unit per instruction) rendering one prompt
/// may take.
pub const PROMPT_FUEL: u64 = 5_000_000;

/// Longest prompt template accepted (a prompt is a page of text).
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;

/// Why a judge prompt can not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PromptError {
    /// The template is not valid minijinja.
    #[error("the judge prompt is not a valid template: {0}")]
    Syntax(String),
    /// It names variables that do not exist.
    #[error("the judge prompt uses unknown variable(s) {}", quoted(.0))]
    Unknown(Vec<String>),
    /// It never uses a variable its questions need.
    #[error("the judge prompt never uses {}: {why}", quoted(.missing))]
    Missing {
        /// The variables it lacks.
        missing: Vec<String>,
        /// Why they are needed.
        why: String,
    },
    /// Rendering failed (a filter given a wrong value).
    #[error("failed to render the judge prompt: {0}")]
    Render(String),
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a suite will ask its judge, so a template can be checked for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Some case names a text behaviour.
    pub behaviour: bool,
    /// Some case has a `final.rubric`.
    pub rubric: bool,
}

/// The variables a template uses that are not its own (set or looped over inside it).
fn used(env: &Environment<'_>, text: &str) -> Result<BTreeSet<String>, PromptError> {
    let template = env
        .template_from_str(text)
        .map_err(|e| PromptError::Syntax(e.to_string()))?;
    Ok(template.undeclared_variables(false).into_iter().collect())
}

/// Check a suite's template for what it will be asked.
pub fn check(text: &str, needs: Needs) -> Result<(), PromptError> {
    let env = environment();
    let used = used(&env, text)?;
    let unknown: Vec<String> = used
        .iter()
        .filter(|v| {
            !VARIABLES.iter().any(|(n, _)| n == v) && !BUILT_IN_GLOBALS.contains(&v.as_str())
        })
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(PromptError::Unknown(unknown));
    }
    let mut missing = Vec::new();
    let mut why = Vec::new();
    if !used.contains("answer") {
        missing.push("answer".to_string());
        why.push("the judge must see the answer it judges");
    }
    if needs.rubric && !used.contains("rubric") {
        missing.push("rubric".to_string());
        why.push("cases have `final.rubric`, which the judge must see");
    }
    if needs.rubric && needs.behaviour && !used.contains("question") {
        missing.push("question".to_string());
        why.push("the suite asks both questions (behaviour and rubric) with this one prompt, which must branch on `question`");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(PromptError::Missing {
            missing,
            why: why.join("; "),
        })
    }
}

/// The template environment every judge prompt is checked and rendered in.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    // Every variable is always given; a typo is caught at load, and any other
    // undefined value must fail loudly rather than render as nothing.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A suite's template runs on every judged trial: a runaway loop in it must fail
    // the judge call, not hang the run. The built-in prompts use a few hundred units.
    env.set_fuel(Some(PROMPT_FUEL));
    env
}
