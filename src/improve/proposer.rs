//! The proposer: the prompt it is asked (a built-in minijinja template, or the user's
//! with `--proposer-prompt`), and the two kinds of proposer: a model (any target, its
//! answers recorded in and replayed from a cassette like a target's) and `scripted:FILE`
//! (the answers of each round written in a file, for tests and offline examples).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::provider::{Message, Provider, Request, ToolChoice, TrialKey};
use crate::score::prices::Price;

/// The built-in prompt.
pub const BUILTIN_PROMPT: &str = include_str!("proposer.j2");

/// Failures listed in a prompt at most (the rest are counted).
pub const MAX_FAILURES: usize = 25;

/// A parameter as the prompt shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptParameter {
    /// Its name.
    pub name: String,
    /// Its JSON Schema type (`any` when not declared).
    #[serde(rename = "type")]
    pub kind: String,
    /// Whether the schema requires it.
    pub required: bool,
    /// Its description now.
    pub description: Option<String>,
}

/// A tool as the prompt shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptTool {
    /// Its name.
    pub name: String,
    /// Its description now.
    pub description: String,
    /// Its top-level parameters.
    pub parameters: Vec<PromptParameter>,
}

/// A failed training trial as the prompt shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptFailure {
    /// Case id.
    pub case: String,
    /// Case kind (`should_call`, …).
    pub kind: String,
    /// The user's last message.
    pub prompt: String,
    /// The calls the model made, as `tool(args)`.
    pub called: Vec<String>,
    /// The tools the case expected.
    pub expected: Vec<String>,
    /// The failure reasons, as `code: message`.
    pub reasons: Vec<String>,
}

/// Everything a proposer prompt template can use (the docs list these names).
#[derive(Debug, Clone, Serialize)]
pub struct PromptContext {
    /// The suite's name.
    pub suite: String,
    /// The round, from 1.
    pub round: u32,
    /// The objective metric.
    pub objective: String,
    /// The current wording's objective on the training cases, as text.
    pub current_score: String,
    /// How many candidates to propose.
    pub candidates: usize,
    /// The tools, worded as now.
    pub tools: Vec<PromptTool>,
    /// Failed training trials (at most [`MAX_FAILURES`]).
    pub failures: Vec<PromptFailure>,
    /// Training trials in all.
    pub trials: usize,
    /// Static findings on the current wording, as `tool: message`.
    pub lint: Vec<String>,
    /// Wordings tried earlier and not kept, one line each with its score.
    pub tried: Vec<String>,
}

/// A prompt template that does not compile or render.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the proposer prompt {origin} cannot be used: {message}")]
pub struct PromptError {
    /// `built in` or the file.
    pub origin: String,
    /// What minijinja said, with the line.
    pub message: String,
}

/// A checked prompt template.
pub struct PromptTemplate {
    source: String,
    origin: String,
}

impl PromptTemplate {
    /// The built-in template.
    pub fn builtin() -> PromptTemplate {
        PromptTemplate {
            source: BUILTIN_PROMPT.to_string(),
            origin: "built in".into(),
        }
    }

    /// The template in `path`, checked by rendering it once with a sample context (an
    /// unknown variable or a syntax error is found before any model is paid).
    pub fn from_file(path: &Path) -> Result<PromptTemplate, PromptError> {
        let origin = format!("`{}`", path.display());
        let source = std::fs::read_to_string(path).map_err(|e| PromptError {
            origin: origin.clone(),
            message: format!("failed to read it: {e}"),
        })?;
        let t = PromptTemplate { source, origin };
        t.render(&PromptContext::sample())?;
        Ok(t)
    }

    /// The prompt for `ctx`.
    pub fn render(&self, ctx: &PromptContext) -> Result<String, PromptError> {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        // A hostile template must not loop forever.
        env.set_fuel(Some(5_000_000));
        let err = |e: minijinja::Error| PromptError {
            origin: self.origin.clone(),
            message: match e.line() {
                Some(l) => format!("line {l}: {e}"),
                None => e.to_string(),
            },
        };
        env.add_template("proposer", &self.source).map_err(err)?;
        env.get_template("proposer")
            .and_then(|t| t.render(minijinja::value::Serde(ctx)))
            .map_err(err)
    }
}

impl PromptContext {
    /// A context with one of everything, to check a user's template.
    pub fn sample() -> PromptContext {
        PromptContext {
            suite: "sample".into(),
            round: 1,
            objective: "accuracy".into(),
            current_score: "50.0%".into(),
            candidates: 3,
            tools: vec![PromptTool {
                name: "get_weather".into(),
                description: "Weather.".into(),
                parameters: vec![PromptParameter {
                    name: "city".into(),
                    kind: "string".into(),
                    required: true,
                    description: None,
                }],
            }],
            failures: vec![PromptFailure {
                case: "c1".into(),
                kind: "should_call".into(),
                prompt: "Do I need an umbrella in Paris?".into(),
                called: vec![],
                expected: vec!["get_weather".into()],
                reasons: vec!["no_call: no tool was called".into()],
            }],
            trials: 2,
            lint: vec!["get_weather: the description is one word".into()],
            tried: vec!["round 1, r1c1: 40.0% on training".into()],
        }
    }
}

/// The prompt's view of a tool definition.
pub fn prompt_tool(def: &crate::chat::ToolDefinition) -> PromptTool {
    let required: Vec<&str> = def
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parameters = def
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| PromptParameter {
                    name: name.clone(),
                    kind: match p.get("type") {
                        Some(Value::String(t)) => t.clone(),
                        Some(Value::Array(ts)) => ts
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" or "),
                        _ => "any".into(),
                    },
                    required: required.contains(&name.as_str()),
                    description: p
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default();
    PromptTool {
        name: def.name.clone(),
        description: def.description.clone(),
        parameters,
    }
}

/// One answer of a proposer.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The answer's text.
    pub text: String,
    /// What it cost, in USD, when priced.
    pub cost_usd: Option<f64>,
}

/// Why a proposer gave no answer at all (a malformed answer is an answer).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProposerError {
    /// The model's provider failed (after its own retries).
    #[error("the proposer `{spec}` failed: {message}")]
    Provider {
        /// The proposer as written.
        spec: String,
        /// The provider's error.
        message: String,
    },
    /// A scripted proposer's file has no answer for this round.
    #[error("the scripted proposer `{}` has no answer for round {round} (it has {rounds})", path.display())]
    Exhausted {
        /// Its file.
        path: PathBuf,
        /// The round asked for.
        round: u32,
        /// Rounds the file answers.
        rounds: usize,
    },
}

/// A source of candidate wordings.
pub trait Propose {
    /// The answer to `prompt` in `round`; `attempt` 1 is the retry after an unreadable
    /// answer (`prompt` then carries the error).
    fn propose(&mut self, round: u32, attempt: u32, prompt: &str) -> Result<Answer, ProposerError>;
}

/// `scripted:FILE`: the answers of each round from a YAML or JSON file,
/// `rounds: [ANSWER, …]`, where an answer is the contract object, or a string (the
/// answer's text as a model would give it, malformed or not), or a list of those (the
/// first attempt's, then the retry's).
#[derive(Debug, Clone)]
pub struct ScriptedProposer {
    path: PathBuf,
    rounds: Vec<Vec<String>>,
}

/// A scripted proposer's file that cannot be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("scripted proposer `{}`: {message}", path.display())]
pub struct ScriptError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, with the line where known.
    pub message: String,
}

impl ScriptedProposer {
    /// Read `path`.
    pub fn open(path: &Path) -> Result<ScriptedProposer, ScriptError> {
        let err = |message: String| ScriptError {
            path: path.to_path_buf(),
            message,
        };
        let text =
            std::fs::read_to_string(path).map_err(|e| err(format!("failed to read it: {e}")))?;
        let doc: Value = serde_saphyr::from_str_with_options(&text, crate::util::yaml::options())
            .map_err(|e| err(e.to_string()))?;
        let rounds = doc.get("rounds").and_then(Value::as_array).ok_or_else(|| {
            err("expected a mapping with `rounds:`, a list of each round's answer".into())
        })?;
        let text_of = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let rounds = rounds
            .iter()
            .map(|r| match r {
                Value::Array(attempts) => attempts.iter().map(text_of).collect(),
                one => vec![text_of(one)],
            })
            .collect();
        Ok(ScriptedProposer {
            path: path.to_path_buf(),
            rounds,
        })
    }
}

impl Propose for ScriptedProposer {
    fn propose(
        &mut self,
        round: u32,
        attempt: u32,
        _prompt: &str,
    ) -> Result<Answer, ProposerError> {
        let answers =
            self.rounds
                .get(round as usize - 1)
                .ok_or_else(|| ProposerError::Exhausted {
                    path: self.path.clone(),
                    round,
                    rounds: self.rounds.len(),
                })?;
        // Past its last attempt a round answers its last again.
        let text = answers
            .get(attempt as usize)
            .or(answers.last())
            .cloned()
            .unwrap_or_default();
        Ok(Answer {
            text,
            cost_usd: None,
        })
    }
}

/// A model proposer: one request per attempt, with no tools, through the provider the
/// run's settings built (so it is recorded in, and replayed from, the cassette).
pub struct ModelProposer {
    /// The proposer as written.
    pub spec: String,
    /// Its provider.
    pub provider: Arc<dyn Provider>,
    /// Its price, when known.
    pub price: Option<Price>,
    /// The runtime its requests run on.
    pub runtime: Arc<tokio::runtime::Runtime>,
    /// The suite's name (in the cassette key).
    pub suite: String,
}

impl Propose for ModelProposer {
    fn propose(&mut self, round: u32, attempt: u32, prompt: &str) -> Result<Answer, ProposerError> {
        let request = Request {
            messages: vec![Message::User {
                content: prompt.to_string(),
            }],
            tools: Arc::new(Vec::new()),
            tool_choice: ToolChoice::Auto,
        };
        let key = TrialKey {
            case_id: format!("improve-{}-round-{round}", self.suite),
            target: self.spec.clone(),
            variant: "proposer".into(),
            tool_choice: ToolChoice::Auto,
            repeat: attempt,
        };
        let provider = self.provider.clone();
        let response = self
            .runtime
            .block_on(async move { provider.complete(&request, &key).await })
            .map_err(|e| ProposerError::Provider {
                spec: self.spec.clone(),
                message: e.to_string(),
            })?;
        let cost_usd = match (&self.price, &response.usage) {
            (Some(p), Some(u)) => Some(p.cost_of(u)),
            _ => None,
        };
        Ok(Answer {
            text: response.text.unwrap_or_default(),
            cost_usd,
        })
    }
}

/// The prompt of the retry: the first prompt, the unreadable answer, and what was wrong.
pub fn retry_prompt(prompt: &str, answer: &str, problem: &str) -> String {
    let shown: String = answer.chars().take(2_000).collect();
    format!(
        "{prompt}\n\n## Your previous answer could not be used\n{problem}\n\nIt was:\n{shown}\n\nAnswer again with the JSON object only."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_prompt_shows_tools_failures_and_the_contract() {
        let p = PromptTemplate::builtin()
            .render(&PromptContext::sample())
            .unwrap();
        assert!(p.contains("### get_weather\nDescription: Weather."), "{p}");
        assert!(
            p.contains("- `city` (string, required): (no description)"),
            "{p}"
        );
        assert!(
            p.contains("- case `c1` (should_call): \"Do I need an umbrella in Paris?\""),
            "{p}"
        );
        assert!(
            p.contains("the model called no tool; expected get_weather"),
            "{p}"
        );
        assert!(p.contains("Propose 3 different new wordings"), "{p}");
        assert!(p.contains(r#"{"candidates": [{"rationale""#), "{p}");
        assert!(p.contains("round 1, r1c1: 40.0% on training"), "{p}");
    }

    #[test]
    fn a_user_template_is_checked_before_use() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.j2");
        std::fs::write(
            &good,
            "{{ suite }}: {% for t in tools %}{{ t.name }}{% endfor %}",
        )
        .unwrap();
        let t = PromptTemplate::from_file(&good).unwrap();
        assert_eq!(
            t.render(&PromptContext::sample()).unwrap(),
            "sample: get_weather"
        );
        let bad = dir.path().join("bad.j2");
        std::fs::write(&bad, "line one\n{{ no_such_thing }}").unwrap();
        let e = PromptTemplate::from_file(&bad).err().unwrap().to_string();
        assert!(e.contains("bad.j2"), "{e}");
        assert!(e.contains("line 2"), "{e}");
        let broken = dir.path().join("broken.j2");
        std::fs::write(&broken, "{% for %}").unwrap();
        assert!(PromptTemplate::from_file(&broken).is_err());
    }

    #[test]
    fn a_scripted_proposer_answers_each_round_and_its_retry() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.yaml");
        std::fs::write(
            &f,
            r#"rounds:
  - candidates: [{rationale: r, tools: {get_weather: {description: Forecast.}}}]
  - ["not json", {candidates: []}]
"#,
        )
        .unwrap();
        let mut p = ScriptedProposer::open(&f).unwrap();
        let a = p.propose(1, 0, "").unwrap().text;
        let v: Value = serde_json::from_str(&a).unwrap();
        assert_eq!(
            v["candidates"][0]["tools"]["get_weather"]["description"],
            "Forecast."
        );
        assert_eq!(p.propose(2, 0, "").unwrap().text, "not json");
        assert_eq!(p.propose(2, 1, "").unwrap().text, r#"{"candidates":[]}"#);
        let e = p.propose(3, 0, "").unwrap_err().to_string();
        assert!(e.contains("no answer for round 3 (it has 2)"), "{e}");
        std::fs::write(&f, "answers: []").unwrap();
        let e = ScriptedProposer::open(&f).unwrap_err().to_string();
        assert!(e.contains("`rounds:`"), "{e}");
    }
}

/// One proposer answer kept in the search's directory (`proposer.jsonl`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LoggedAnswer {
    /// The round.
    pub round: u32,
    /// The attempt (0, or 1 for the retry).
    pub attempt: u32,
    /// SHA-256 of the prompt, hex: a resumed search reuses the answer only to the same
    /// prompt.
    pub prompt_sha256: String,
    /// The answer's text.
    pub text: String,
    /// Its cost in USD, when priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A proposer whose answers are appended to a log as they come, and taken from it when
/// a resumed search asks the same prompt again (so a resumed search pays no proposer
/// request twice, and plays the same rounds).
pub struct Logged<'p> {
    inner: &'p mut dyn Propose,
    kept: Vec<LoggedAnswer>,
    out: std::fs::File,
}

impl<'p> Logged<'p> {
    /// Log `inner`'s answers to `path`, reusing those it already holds (unreadable lines,
    /// a torn last one, are skipped: those answers are asked again).
    pub fn open(inner: &'p mut dyn Propose, path: &Path) -> std::io::Result<Logged<'p>> {
        let kept = match std::fs::read_to_string(path) {
            Ok(text) => text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Logged { inner, kept, out })
    }
}

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Propose for Logged<'_> {
    fn propose(&mut self, round: u32, attempt: u32, prompt: &str) -> Result<Answer, ProposerError> {
        use std::io::Write;
        let sha = sha256_hex(prompt);
        if let Some(a) = self
            .kept
            .iter()
            .find(|a| a.round == round && a.attempt == attempt && a.prompt_sha256 == sha)
        {
            // Paid once, by the search this one resumes: its cost is still the search's.
            return Ok(Answer {
                text: a.text.clone(),
                cost_usd: a.cost_usd,
            });
        }
        let answer = self.inner.propose(round, attempt, prompt)?;
        let line = LoggedAnswer {
            round,
            attempt,
            prompt_sha256: sha,
            text: answer.text.clone(),
            cost_usd: answer.cost_usd,
        };
        // The log only saves money on a resume: a failed write is not worth a stop.
        if let Ok(mut l) = serde_json::to_string(&line) {
            l.push('\n');
            let _ = self.out.write_all(l.as_bytes());
        }
        Ok(answer)
    }
}
