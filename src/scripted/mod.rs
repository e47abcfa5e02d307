//! The scripted models: deterministic fake providers, chosen by name, so every scoring
//! path is reachable offline. `scripted:oracle` answers what each case expects (see
//! [`oracle`]), the other behaviours produce one kind of failure each, and
//! `scripted:PATH.yaml` answers from a script; `scripted:judge` stands in for a judge
//! model ([`judge`]) and `scripted:crowded` simulates a model that confuses similar tools
//! ([`crowded`]). Two simulate the targets of a wording search: `scripted:lexical` picks
//! tools by the words they share with the request ([`lexical`]), and `scripted:coin`
//! passes each trial by a coin toss whatever the wording says ([`coin`]).
//!
//! They are providers, but built on the layers below the runner (the suite's
//! expectations, the episode runner, the judge and the scorer), so they live here,
//! above those layers, and not in [`crate::provider`], which stays below them.
//!
//! In a loop case (one with `mocks`) the model is asked once per round with the whole
//! conversation so far. The oracle then plays the episode
//! ([`oracle::episode`]); `loop_forever`, `ignore_error`, `claim_success` and
//! `skip_confirmation` play it with one fault each; the single-turn failure behaviours
//! answer the first round as they always do and every round after a tool result in
//! plain text (so their episodes end, judged by what they did); `lexical` plays loops as
//! they do, and `coin` plays a whole episode as the oracle or as its failure. A script entry may be
//! limited to one round with `round:`.
//!
//! The same scripts generate hand-written cassettes (`toolgauge cassette write`).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value};

pub mod coin;
pub mod crowded;
pub mod judge;
pub mod lexical;
pub mod oracle;

use self::oracle::episode::{Conduct, answer_round};
use self::oracle::history::round_of;
use crate::provider::{
    Message, Provider, ProviderError, Request, Response, ToolCall, TrialKey, Usage,
};
use crate::suite::{CallsExpectation, Expectation, Outcome, Suite};

inventory::submit! {
    // First among the providers: it needs nothing but the suite.
    crate::suite::targets::OfflineProvider { name: "scripted", rank: 0 }
}

/// What `scripted:clarify` says: it asks for the missing information.
pub const CLARIFY_TEXT: &str = "Could you tell me a little more about what you need?";
/// What `scripted:cannot` says: it cannot help.
pub const CANNOT_TEXT: &str = "I'm sorry, but I can't help with that: none of my tools can do it.";
/// What `scripted:direct` says: a plain answer.
pub const DIRECT_TEXT: &str = "Here is the answer, from what I already know.";

/// The built-in behaviours, by model name.
pub const BEHAVIOURS: &[(&str, &str)] = &[
    (
        "oracle",
        "answers as a perfect model would: every expectation it can satisfy, under the tool_choice mode; names the ones it cannot",
    ),
    ("no_call", "always answers in text, never calls"),
    (
        "clarify",
        "always asks for the missing information (`clarify`), never calls",
    ),
    (
        "cannot",
        "always says it cannot help (`cannot_answer`), never calls",
    ),
    (
        "direct",
        "always answers directly in text (`direct`), never calls",
    ),
    ("wrong_tool", "calls a tool other than the expected one"),
    ("unknown_tool", "calls a tool that does not exist"),
    (
        "bad_json",
        "calls the expected tool with unparseable arguments",
    ),
    (
        "schema_violation",
        "calls the expected tool with arguments of the wrong types",
    ),
    ("duplicate", "makes every expected call twice in one turn"),
    ("error", "fails every request (a provider error)"),
    (
        "loop_forever",
        "in a loop, makes the oracle's first call again every round (where the oracle makes none, a call of the first offered tool with valid arguments), never answering (a limit stops it)",
    ),
    (
        "ignore_error",
        "in a loop, goes on after a tool error as if nothing happened: no retry, no word of it (without an error, the oracle)",
    ),
    (
        "claim_success",
        "in a loop, claims in its final answer that everything succeeded after a tool error (without an error, the oracle)",
    ),
    (
        "skip_confirmation",
        "in a loop, calls risky tools without asking the user first (without a risky call, the oracle)",
    ),
    (
        "crowded",
        "answers as the oracle, but picks a lexically similar wrong tool with a seeded chance that grows with the number of tools offered (a simulation for tool-count charts; see docs/distractors.md)",
    ),
    (
        "lexical",
        "calls the offered tool whose name, description and parameter descriptions share the most words with the last user message (the oracle's arguments where it expects that tool), answers in text when none shares a word: a better wording changes its answers (a simulation for `improve`)",
    ),
    (
        "coin",
        "ignores meaning: per trial a fair coin, seeded by the case, the repeat and the tool definitions, gives the oracle's answer or a failure (no call, or another tool); `coin-N` seeds it with N. For testing a wording search's false-acceptance rate",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    Oracle,
    NoCall,
    Clarify,
    Cannot,
    Direct,
    WrongTool,
    UnknownTool,
    BadJson,
    SchemaViolation,
    Duplicate,
    Error,
    LoopForever,
    IgnoreError,
    ClaimSuccess,
    SkipConfirmation,
    Crowded,
    Lexical,
    /// A coin of this seed.
    Coin(u64),
    /// The coin's wrong-tool failure (no name of its own): like `WrongTool`, but with
    /// arguments that fit the tool's schema, so the failure is the choice of tool alone
    /// and the invalid-call figures stay clean.
    OtherTool,
}

impl Behaviour {
    /// How this behaviour plays a loop, when it plays it as the oracle does (with or
    /// without a fault); `None` for the single-turn failures.
    fn conduct(self) -> Option<Conduct> {
        match self {
            Behaviour::Oracle => Some(Conduct::Oracle),
            Behaviour::LoopForever => Some(Conduct::LoopForever),
            Behaviour::IgnoreError => Some(Conduct::IgnoreError),
            Behaviour::ClaimSuccess => Some(Conduct::ClaimSuccess),
            Behaviour::SkipConfirmation => Some(Conduct::SkipConfirmation),
            // In loops the simulated confusion is not modelled: it plays the oracle.
            Behaviour::Crowded => Some(Conduct::Oracle),
            _ => None,
        }
    }
}

/// One scripted response and the trials it applies to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptEntry {
    /// Case id.
    pub case: String,
    /// Only this variant (default: any).
    #[serde(default)]
    pub variant: Option<String>,
    /// Only this tool_choice mode, e.g. `auto` or `function:get_weather` (default: any).
    #[serde(default)]
    pub tool_choice: Option<String>,
    /// Only this repeat (default: any).
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Only this round of a loop case, 1-based (default: every round; a single-turn
    /// trial is round 1).
    #[serde(default)]
    pub round: Option<u32>,
    /// Text answer.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls.
    #[serde(default)]
    pub calls: Vec<ScriptCall>,
    /// Reported usage.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Reported latency.
    #[serde(default)]
    pub latency_ms: Option<f64>,
    /// Reported stop reason.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// A scripted call; `arguments` is an object, or a string sent verbatim (to script bad JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    /// Call id (default `call_N`).
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments.
    #[serde(default)]
    pub arguments: Value,
}

/// A script file: responses, first match wins.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The responses.
    pub responses: Vec<ScriptEntry>,
}

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// Unknown behaviour name.
    #[error("unknown scripted behaviour `{0}`")]
    UnknownBehaviour(String),
    /// The file could not be read.
    #[error("failed to read script `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a valid script.
    #[error("invalid script `{path}`: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The scripted provider.
pub struct ScriptedProvider {
    suite: Arc<Suite>,
    mode: Mode,
}

enum Mode {
    Builtin(Behaviour),
    Script(String, Script),
}

impl ScriptedProvider {
    /// A provider for `scripted:MODEL`: a behaviour name, or a path to a script file.
    pub fn new(model: &str, suite: Arc<Suite>) -> Result<Self, ScriptError> {
        let behaviour = match model {
            "oracle" => Behaviour::Oracle,
            "no_call" => Behaviour::NoCall,
            "clarify" => Behaviour::Clarify,
            "cannot" => Behaviour::Cannot,
            "direct" => Behaviour::Direct,
            "wrong_tool" => Behaviour::WrongTool,
            "unknown_tool" => Behaviour::UnknownTool,
            "bad_json" => Behaviour::BadJson,
            "schema_violation" => Behaviour::SchemaViolation,
            "duplicate" => Behaviour::Duplicate,
            "error" => Behaviour::Error,
            "loop_forever" => Behaviour::LoopForever,
            "ignore_error" => Behaviour::IgnoreError,
            "claim_success" => Behaviour::ClaimSuccess,
            "skip_confirmation" => Behaviour::SkipConfirmation,
            "crowded" => Behaviour::Crowded,
            "lexical" => Behaviour::Lexical,
            coin if coin::seed_of(coin).is_some() => {
                Behaviour::Coin(coin::seed_of(coin).unwrap_or_default())
            }
            path if path.ends_with(".yaml")
                || path.ends_with(".yml")
                || path.ends_with(".json") =>
            {
                let script = load_script(Path::new(path))?;
                return Ok(ScriptedProvider {
                    suite,
                    mode: Mode::Script(path.to_string(), script),
                });
            }
            other => return Err(ScriptError::UnknownBehaviour(other.to_string())),
        };
        Ok(ScriptedProvider {
            suite,
            mode: Mode::Builtin(behaviour),
        })
    }

    fn builtin(
        &self,
        b: Behaviour,
        request: &Request,
        key: &TrialKey,
    ) -> Result<Response, ProviderError> {
        let case = self.suite.cases.iter().find(|c| c.id == key.case_id);
        // The coin decides first, once per trial, what the rest of the trial plays.
        let b = match b {
            Behaviour::Coin(seed) => coin_behaviour(seed, case, request, key),
            b => b,
        };
        if let Some(c) = case.filter(|c| c.episode.is_some()) {
            if let Some(conduct) = b.conduct() {
                return Ok(
                    answer_round(&self.suite, c, &key.variant, request, conduct, true).response,
                );
            }
            // The single-turn failures read what their calls got, then answer.
            if matches!(request.messages.last(), Some(Message::Tool { .. }))
                && self.round(request, key) > 1
                && b != Behaviour::Error
            {
                return Ok(Response {
                    text: Some("Here is what I found.".into()),
                    finish_reason: Some("stop".into()),
                    ..Response::default()
                });
            }
        }
        let expected = case.map(|c| c.effective(&key.tool_choice).1);
        let expected_calls = expected.and_then(first_calls);
        let expected_tool = expected_calls
            .and_then(|c| c.calls.first())
            .map(|c| c.tool.clone())
            .or_else(|| request.tools.first().map(|t| t.name.clone()));
        let text = |s: &str| Response {
            text: Some(s.to_string()),
            finish_reason: Some("stop".into()),
            ..Response::default()
        };
        let calls = |calls: Vec<(String, String)>| Response {
            tool_calls: calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| ToolCall {
                    id: Some(format!("call_{}", i + 1)),
                    name,
                    arguments,
                })
                .collect(),
            finish_reason: Some("tool_calls".into()),
            ..Response::default()
        };
        let oracle_calls = |e: &CallsExpectation| -> Vec<(String, String)> {
            match case {
                Some(c) => self::oracle::expected_calls(c, e, &request.tools)
                    .into_iter()
                    .map(|c| (c.name, c.arguments))
                    .collect(),
                None => Vec::new(),
            }
        };
        let response = match b {
            Behaviour::Error => return Err(ProviderError::Scripted(Box::new(key.clone()))),
            Behaviour::NoCall => text("I can answer that without a tool."),
            Behaviour::Clarify => text(CLARIFY_TEXT),
            Behaviour::Cannot => text(CANNOT_TEXT),
            Behaviour::Direct => text(DIRECT_TEXT),
            Behaviour::Oracle
            | Behaviour::LoopForever
            | Behaviour::IgnoreError
            | Behaviour::ClaimSuccess
            | Behaviour::SkipConfirmation => match case {
                Some(c) => {
                    self::oracle::answer_variant(
                        &self.suite,
                        c,
                        &key.variant,
                        &key.tool_choice,
                        &request.tools,
                    )
                    .response
                }
                None => text("OK."),
            },
            Behaviour::Crowded => match case {
                Some(c) => {
                    let oracle = self::oracle::answer_variant(
                        &self.suite,
                        c,
                        &key.variant,
                        &key.tool_choice,
                        &request.tools,
                    )
                    .response;
                    let (kind, expect) = c.effective(&key.tool_choice);
                    let tools = crate::score::distractors::expected_tools(expect);
                    self::crowded::answer(
                        oracle,
                        request,
                        key,
                        &tools,
                        kind == crate::suite::CaseKind::ShouldNotCall,
                    )
                }
                None => text("OK."),
            },
            Behaviour::Lexical => self::lexical::answer(&self.suite, case, &key.variant, request),
            // Replaced by the behaviour its toss chose, above.
            Behaviour::Coin(_) => text("OK."),
            Behaviour::Duplicate => match expected_calls {
                Some(e) => {
                    let mut c = oracle_calls(e);
                    c.extend(oracle_calls(e));
                    calls(c)
                }
                None => calls(vec![(expected_tool.unwrap_or_default(), "{}".into())]),
            },
            Behaviour::WrongTool => {
                let wrong = request
                    .tools
                    .iter()
                    .map(|t| t.name.clone())
                    .find(|n| Some(n) != expected_tool.as_ref())
                    .unwrap_or_else(|| "some_other_tool".into());
                calls(vec![(wrong, "{}".into())])
            }
            Behaviour::OtherTool => {
                let other = request
                    .tools
                    .iter()
                    .find(|t| Some(&t.name) != expected_tool.as_ref());
                match other {
                    Some(t) => calls(vec![(
                        t.name.clone(),
                        self::lexical::fitting_arguments(t, request, case),
                    )]),
                    // One tool, and it is the expected one: a name no tool has.
                    None => calls(vec![("some_other_tool".into(), "{}".into())]),
                }
            }
            Behaviour::UnknownTool => calls(vec![("nonexistent_tool".into(), "{}".into())]),
            Behaviour::BadJson => calls(vec![(
                expected_tool.unwrap_or_default(),
                "{\"city\": \"北京\"".into(),
            )]),
            Behaviour::SchemaViolation => {
                let tool = expected_tool.unwrap_or_default();
                let schema = request
                    .tools
                    .iter()
                    .find(|t| t.name == tool)
                    .map(|t| &*t.parameters);
                calls(vec![(tool, wrong_types(schema).to_string())])
            }
        };
        Ok(response)
    }
}

impl ScriptedProvider {
    /// The round of its episode `request` asks for (1-based; a single-turn trial is
    /// round 1): one more than the assistant turns after the case's own messages.
    fn round(&self, request: &Request, key: &TrialKey) -> usize {
        let context = self
            .suite
            .cases
            .iter()
            .find(|c| c.id == key.case_id)
            .map_or(request.messages.len(), |c| {
                self.suite.messages_in(c, &key.variant).len()
            });
        round_of(&request.messages, context)
    }
}

/// The behaviour the coin of `seed` plays in trial `key`: the oracle, or a failure.
/// Where the trial expects no call, answering without one would pass, so the failure
/// calls instead; under `none`, where no API returns a call, it answers in text (which
/// may then pass: the mode leaves nothing else to do).
fn coin_behaviour(
    seed: u64,
    case: Option<&crate::suite::Case>,
    request: &Request,
    key: &TrialKey,
) -> Behaviour {
    let expects_calls = case
        .map(|c| c.effective(&key.tool_choice).1)
        .and_then(first_calls)
        .is_some();
    match coin::toss(seed, request, key) {
        coin::Toss::Oracle => Behaviour::Oracle,
        _ if key.tool_choice == crate::provider::ToolChoice::None => Behaviour::NoCall,
        coin::Toss::NoCall if expects_calls => Behaviour::NoCall,
        _ => Behaviour::OtherTool,
    }
}

fn first_calls(e: &Expectation) -> Option<&CallsExpectation> {
    match e {
        Expectation::Calls(c) => Some(c),
        Expectation::AnyOf(o) => o.iter().find_map(|o| match o {
            Outcome::Calls(c) => Some(c),
            _ => None,
        }),
        Expectation::NoCall(_) => None,
    }
}

/// Arguments that violate `schema`: every property with a value of the wrong type (or
/// a non-object when the schema names no properties). Public for benches and tests that
/// need schema violations.
pub fn wrong_types(schema: Option<&Value>) -> Value {
    let Some(props) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Value::Array(vec![]);
    };
    if props.is_empty() {
        return Value::Array(vec![]);
    }
    let mut out = Map::new();
    for (name, p) in props {
        let v = match p.get("type").and_then(Value::as_str) {
            Some("string") => Value::from(12345),
            Some("number") | Some("integer") => Value::from("not a number"),
            Some("boolean") => Value::from("yes"),
            Some("array") => Value::from("not a list"),
            _ => Value::from(false),
        };
        out.insert(name.clone(), v);
    }
    Value::Object(out)
}

fn load_script(path: &Path) -> Result<Script, ScriptError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Io {
        path: shown.clone(),
        source,
    })?;
    let script: Script = serde_saphyr::from_str_with_options(&text, crate::util::yaml::options())
        .map_err(|e| {
        // In plain words, as a suite's errors are (no parser jargon).
        let plain = crate::util::parse_error::yaml(&e);
        let at = e
            .location()
            .map(|l| format!("line {}, column {}: ", l.line(), l.column()))
            .unwrap_or_default();
        ScriptError::Parse {
            path: shown.clone(),
            message: format!("{at}{} ({})", plain.message, plain.hint),
        }
    })?;
    // `round: 0` would never match: rounds count from 1.
    if let Some(i) = script.responses.iter().position(|e| e.round == Some(0)) {
        return Err(ScriptError::Parse {
            path: shown,
            message: format!(
                "responses[{i}] (case `{}`): `round: 0` never matches (rounds count from 1: the first request of a trial is round 1)",
                script.responses[i].case
            ),
        });
    }
    Ok(script)
}

/// The response of a script entry in round `round` (1-based) of its trial: calls
/// without an id get `call_N`, or `call_R_N` after the first round so ids stay unique
/// in a loop's conversation.
fn script_response(entry: &ScriptEntry, round: usize) -> Response {
    let id = |i: usize| {
        if round <= 1 {
            format!("call_{}", i + 1)
        } else {
            format!("call_{round}_{}", i + 1)
        }
    };
    Response {
        text: entry.text.clone(),
        tool_calls: entry
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: Some(c.id.clone().unwrap_or_else(|| id(i))),
                name: c.name.clone(),
                arguments: match &c.arguments {
                    Value::String(s) => s.clone(),
                    Value::Null => "{}".into(),
                    v => v.to_string(),
                },
            })
            .collect(),
        usage: entry.usage,
        latency_ms: entry.latency_ms.unwrap_or(0.0),
        finish_reason: entry.finish_reason.clone().or_else(|| {
            Some(
                if entry.calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                }
                .into(),
            )
        }),
        ..Response::default()
    }
}

/// A deterministic usage and latency for built-in behaviours, from the request size, so
/// cost and latency columns have plausible, repeatable numbers.
fn synthetic_usage(request: &Request, response: &mut Response) {
    let input_chars: usize = request
        .messages
        .iter()
        .filter_map(|m| m.text())
        .map(str::len)
        .sum::<usize>()
        + request
            .tools
            .iter()
            .map(|t| t.description.len() + t.parameters.to_string().len() + t.name.len())
            .sum::<usize>();
    let output_chars: usize = response.text.as_deref().map_or(0, str::len)
        + response
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    response.usage = Some(Usage {
        input_tokens: (input_chars / 4 + 8) as u64,
        output_tokens: (output_chars / 4 + 2) as u64,
        estimated: false,
        ..Default::default()
    });
    response.latency_ms = 200.0 + (input_chars % 97) as f64 + 3.0 * (output_chars % 53) as f64;
}

#[async_trait]
impl Provider for ScriptedProvider {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        match &self.mode {
            Mode::Builtin(b) => {
                let mut r = self.builtin(*b, request, key)?;
                synthetic_usage(request, &mut r);
                Ok(r)
            }
            Mode::Script(_, script) => {
                let mode = key.tool_choice.to_string();
                let round = self.round(request, key);
                script
                    .responses
                    .iter()
                    .find(|e| {
                        e.case == key.case_id
                            && e.variant.as_ref().is_none_or(|v| *v == key.variant)
                            && e.tool_choice.as_ref().is_none_or(|m| *m == mode)
                            && e.repeat.is_none_or(|r| r == key.repeat)
                            && e.round.is_none_or(|r| r as usize == round)
                    })
                    .map(|e| script_response(e, round))
                    .ok_or_else(|| ProviderError::NoScriptedResponse(Box::new(key.clone())))
            }
        }
    }

    fn source(&self) -> String {
        match &self.mode {
            Mode::Builtin(_) => "scripted (deterministic fake model)".into(),
            Mode::Script(path, _) => format!("scripted from {path}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::{Behaviour as Shown, classify};

    #[test]
    fn the_text_behaviours_say_what_the_classifier_reads_as_theirs() {
        assert_eq!(classify(CLARIFY_TEXT).behaviour, Shown::RequestForInfo);
        assert_eq!(classify(CANNOT_TEXT).behaviour, Shown::CannotAnswer);
        assert_eq!(classify(DIRECT_TEXT).behaviour, Shown::Direct);
    }

    #[test]
    fn every_builtin_name_is_listed_with_a_description() {
        let suite = Arc::new(
            crate::suite::load_str(
                "tools: [{name: t, description: d, parameters: {type: object}}]\n\
                 cases: [{id: hi, kind: should_not_call, prompt: Hi}]\n",
                Path::new("s.yaml"),
            )
            .expect("a suite of one case"),
        );
        for (name, description) in BEHAVIOURS {
            assert!(!description.is_empty(), "{name}");
            assert!(
                ScriptedProvider::new(name, suite.clone()).is_ok(),
                "{name} is listed but not known"
            );
        }
        assert!(ScriptedProvider::new("refuse", suite).is_err());
    }
}
