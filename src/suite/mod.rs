//! Suites: the YAML (or JSON) model, loading with located errors, and the compiled form
//! the runner and scorer use.
//!
//! Loading is two stages: [`load()`] parses the file into [`model::SuiteFile`] (shape
//! only), then [`compile`] checks meaning (tools, schemas, matchers, ids) and builds a
//! [`Suite`] in which every schema and matcher is ready to use.

pub mod compile;
pub mod distractors;
pub mod end_state;
pub mod error;
pub mod judge;
pub mod judge_prompt;
pub mod load;
mod loop_compile;
pub mod loops;
pub mod matcher;
pub mod mcp;
pub mod mcp_calls;
pub mod model;
pub mod normalize;
pub mod placeholder;
pub mod plugin;
pub mod profile;
pub mod sampling;
pub mod servers;
pub mod shape;
pub mod share;
pub mod span;
pub mod stream;
pub mod targets;
pub mod tool_error;
pub mod tools_from;
pub mod trajectory;
pub mod variants;
pub mod world;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use regex::Regex;
use serde_json::Value;

pub use error::{Diagnostic, SuiteError};
pub use matcher::Matcher;
pub use model::{CaseKind, CountMode, ExtraArgs, NormalizeRule};

pub use normalize::Normalizer;

/// How a suite's verdicts are reached (a suite holds the profile it declares; each
/// profile's judge lives in the judge layer).
pub use profile::Profile;

use crate::behaviour::Behaviour;
use crate::chat::{Message, ToolChoice, ToolDefinition};

/// A loaded, checked suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Suite name (from the file or its stem).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// SHA-256 of the file bytes, recorded in runs.
    pub hash: String,
    /// Suite-wide normalisation.
    pub norm: Normalizer,
    /// Tools in file order.
    pub tools: Vec<Arc<Tool>>,
    /// Cases in file order.
    pub cases: Vec<Case>,
    /// The matrix declared in the file (the command line may override it).
    pub matrix: MatrixDefaults,
    /// Exit-code thresholds.
    pub thresholds: Vec<Threshold>,
    /// Cassette path, resolved against the suite's directory.
    pub cassette: Option<PathBuf>,
    /// Every variant name the tools define, in order of first appearance, then those
    /// only the top-level `variants` declares.
    pub variants: Vec<String>,
    /// The suite's `system` prompt.
    pub system: Option<String>,
    /// The system prompt of each variant that sets its own (top-level `variants`); `""`
    /// sends none.
    pub variant_systems: IndexMap<String, String>,
    /// Sampling parameters for live targets.
    pub sampling: model::SamplingSpec,
    /// How verdicts are reached.
    pub profile: Profile,
    /// `tools_from:` an MCP server or snapshot.
    pub mcp: Option<Arc<tools_from::McpSource>>,
    /// `distractors:`, the tool-count axis.
    pub distractors: Option<Arc<distractors::Distractors>>,
    /// `judge:`, the suite's judge model (`run --judge` overrides its target).
    pub judge: Option<judge::SuiteJudge>,
    /// Some case names a text behaviour with `behaviour:` or a `cannot_answer` or
    /// `direct` outcome: every trial of the suite then records its behaviour facts (see
    /// [`crate::judge::calls::CaseScorer::records_behaviour`]).
    pub names_behaviours: bool,
}

/// A tool with its compiled argument schema.
#[derive(Debug)]
pub struct Tool {
    /// Function name.
    pub name: String,
    /// The description of every variant that does not word the tool itself (the tool's
    /// `description`).
    pub description: Option<String>,
    /// What changes under named variants, in suite order.
    pub variants: IndexMap<String, ToolVariant>,
    /// The JSON Schema of the arguments.
    pub parameters: std::sync::Arc<Value>,
    /// The compiled validator (draft 2020-12), built when the suite loads or, in big
    /// suites, on first use (see [`Tool::validator`]).
    pub validator: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
    /// Names listed in `required`.
    pub required: Vec<String>,
    /// Tool loops: the tool's declared `risk` and `idempotent`.
    pub effects: loops::ToolEffects,
    /// The tool as its MCP server listed it (`tools_from`), raw, for reports; `None`
    /// for a tool the suite declares itself.
    pub mcp: Option<Arc<mcp::McpTool>>,
}

/// A tool under one named variant.
#[derive(Debug, Default)]
pub struct ToolVariant {
    /// The description under this variant (`None`: the tool's).
    pub description: Option<String>,
    /// The parameter paths whose description this variant sets, in suite order.
    pub parameter_descriptions: Vec<String>,
    /// The variant replaces the tool's schema with its own.
    pub replaces_schema: bool,
    /// The schema sent under this variant (its own, or the tool's, with the parameter
    /// descriptions applied); `None` when it is the tool's, unchanged.
    pub parameters: Option<std::sync::Arc<Value>>,
    /// The validator of a replaced schema (built like [`Tool::validator`]); unused
    /// otherwise, as descriptions do not change what validates.
    pub validator: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
    /// `required` of a replaced schema.
    pub required: Vec<String>,
}

/// Build the draft 2020-12 validator of `schema` (the suite's tools, and the schema of a
/// distractor a call names).
pub fn build_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .map_err(|e| e.to_string())
}

impl Tool {
    /// The description used under `variant`: the variant's own wording, else the tool's
    /// `description`; `None` when the tool has neither.
    pub fn description(&self, variant: &str) -> Option<&str> {
        self.variants
            .get(variant)
            .and_then(|v| v.description.as_deref())
            .or(self.description.as_deref())
    }

    /// The tool's parts under `variant` (`None`: the variant changes nothing of it).
    pub fn variant(&self, variant: &str) -> Option<&ToolVariant> {
        self.variants.get(variant)
    }

    /// The schema sent under `variant`.
    pub fn parameters_in(&self, variant: &str) -> &std::sync::Arc<Value> {
        self.variant(variant)
            .and_then(|v| v.parameters.as_ref())
            .unwrap_or(&self.parameters)
    }

    /// The neutral definition offered to the model under `variant`.
    pub fn definition(&self, variant: &str) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description(variant).unwrap_or_default().to_string(),
            parameters: self.parameters_in(variant).clone(),
        }
    }

    /// The argument validator; `Err` with the reason when the schema does not compile
    /// (only possible for a schema first compiled here: see `compile::EAGER_SCHEMAS`).
    pub fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| build_validator(&self.parameters))
            .as_ref()
            .map_err(String::as_str)
    }

    /// The validator of the schema offered under `variant` (`None`: the tool's own).
    pub fn validator_in(&self, variant: Option<&str>) -> Result<&jsonschema::Validator, &str> {
        match variant.and_then(|v| self.variant(v)) {
            Some(v) if v.replaces_schema => {
                let schema = v.parameters.as_deref().unwrap_or(&self.parameters);
                v.validator
                    .get_or_init(|| build_validator(schema))
                    .as_ref()
                    .map_err(String::as_str)
            }
            _ => self.validator(),
        }
    }

    /// The `required` names of the schema offered under `variant` (`None`: the tool's).
    pub fn required_in(&self, variant: Option<&str>) -> &[String] {
        match variant.and_then(|v| self.variant(v)) {
            Some(v) if v.replaces_schema => &v.required,
            _ => &self.required,
        }
    }

    /// The schema of top-level parameter `name`, if declared.
    pub fn property(&self, name: &str) -> Option<&Value> {
        self.parameters.get("properties")?.get(name)
    }

    /// The schema of top-level parameter `name` as offered under `variant` (`None`: the
    /// tool's own).
    pub fn property_in(&self, variant: Option<&str>, name: &str) -> Option<&Value> {
        match variant {
            Some(v) => self.parameters_in(v).get("properties")?.get(name),
            None => self.property(name),
        }
    }
}

/// A compiled case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Unique id.
    pub id: String,
    /// The kind as written.
    pub kind: CaseKind,
    /// The conversation sent to the model.
    pub messages: Vec<Message>,
    /// Labels.
    pub tags: Vec<String>,
    /// The case's own tools, offered instead of the suite's (`None`: the suite's);
    /// cases declaring identical tools share them.
    pub tools: Option<Vec<Arc<Tool>>>,
    /// The expectation as written.
    pub expect: Expectation,
    /// Modes this case runs under (`None`: all).
    pub modes: Option<Vec<ToolChoice>>,
    /// Overrides per mode.
    pub per_mode: Vec<ModeOverride>,
    /// Tool loops: present when the suite or the case gives `mocks` (the case then
    /// runs as an episode of rounds).
    pub episode: Option<Arc<loops::EpisodeSpec>>,
    /// `messages` starts with the suite's `system` prompt (the case has no system
    /// message of its own), which a variant's system prompt replaces.
    pub suite_system: bool,
    /// What the whole episode must do when the case runs as a loop (`None`: the case
    /// gives no loop expectation).
    pub loop_expect: Option<trajectory::LoopExpectation>,
    /// `final.rubric`: what the judge model checks the final answer against.
    pub rubric: Option<judge::Rubric>,
}

impl Suite {
    /// The conversation `case` sends under `variant`: its messages, with the variant's
    /// system prompt in place of the suite's when the variant sets one and the case has
    /// no system message of its own.
    pub fn messages_in<'a>(&self, case: &'a Case, variant: &str) -> Cow<'a, [Message]> {
        let Some(system) = self.variant_systems.get(variant) else {
            return Cow::Borrowed(&case.messages);
        };
        let own = case
            .messages
            .iter()
            .any(|m| matches!(m, Message::System { .. }))
            && !case.suite_system;
        if own || (case.suite_system && self.system.as_deref() == Some(system.as_str())) {
            return Cow::Borrowed(&case.messages);
        }
        let rest = &case.messages[usize::from(case.suite_system)..];
        let mut out = Vec::with_capacity(rest.len() + 1);
        if !system.is_empty() {
            out.push(Message::System {
                content: system.clone(),
            });
        }
        out.extend_from_slice(rest);
        Cow::Owned(out)
    }

    /// The system prompt sent under `variant` to cases without one of their own.
    pub fn system_in(&self, variant: &str) -> Option<&str> {
        match self.variant_systems.get(variant) {
            Some(s) if s.is_empty() => None,
            Some(s) => Some(s),
            None => self.system.as_deref(),
        }
    }
}

impl Case {
    /// The tools this case offers: its own, or the suite's.
    pub fn tools<'a>(&'a self, suite: &'a Suite) -> &'a [Arc<Tool>] {
        self.tools.as_deref().unwrap_or(&suite.tools)
    }
}

/// A different kind and expectation under some modes.
#[derive(Clone, Debug)]
pub struct ModeOverride {
    /// The modes.
    pub modes: Vec<ToolChoice>,
    /// The kind under them.
    pub kind: CaseKind,
    /// The expectation under them.
    pub expect: Expectation,
}

/// The expectation that no tool is called (what every case means under `tool_choice: none`).
pub static NO_CALL: Expectation = Expectation::NoCall(TextChecks {
    contains: Vec::new(),
    regex: None,
    behaviour: None,
});

impl Case {
    /// Whether the case runs under `mode`.
    pub fn applies_to(&self, mode: &ToolChoice) -> bool {
        self.modes.as_ref().is_none_or(|m| m.contains(mode))
    }

    /// The kind and expectation in force under `mode`.
    ///
    /// An explicit `per_mode` entry wins. Otherwise, under `none` a case that expects a
    /// call becomes `should_not_call`: the request forbids calls, so the right behaviour
    /// is a text answer.
    pub fn effective(&self, mode: &ToolChoice) -> (CaseKind, &Expectation) {
        if let Some(o) = self.per_mode.iter().find(|o| o.modes.contains(mode)) {
            return (o.kind, &o.expect);
        }
        if *mode == ToolChoice::None && self.kind != CaseKind::ShouldNotCall {
            return (CaseKind::ShouldNotCall, &NO_CALL);
        }
        (self.kind, &self.expect)
    }
}

/// What a case expects.
#[derive(Clone, Debug)]
pub enum Expectation {
    /// `should_call`: these calls.
    Calls(CallsExpectation),
    /// `should_not_call`: no call, with optional checks on the text (and, with
    /// `behaviour:`, the behaviour the text must show: [`TextChecks::behaviour`]).
    NoCall(TextChecks),
    /// `ambiguous`: any of these outcomes.
    AnyOf(Vec<Outcome>),
}

impl Expectation {
    /// The behaviours that satisfy this expectation, in [`Behaviour::ALL`] order;
    /// `None` when any text answer may (a `should_not_call` case without
    /// `behaviour:`, or a `no_call` outcome).
    pub fn behaviours(&self) -> Option<Vec<Behaviour>> {
        let mut out = match self {
            Expectation::Calls(_) => vec![Behaviour::ToolCall],
            Expectation::NoCall(t) => vec![t.behaviour?],
            Expectation::AnyOf(outcomes) => outcomes
                .iter()
                .map(Outcome::behaviour)
                .collect::<Option<Vec<_>>>()?,
        };
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// The one behaviour this expectation asks for (`tool_call` for calls), `None`
    /// when it accepts several or any text: the `expected` of the trial's
    /// [`crate::behaviour::BehaviourFacts`].
    pub fn expected_behaviour(&self) -> Option<Behaviour> {
        match self.behaviours()?.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// Whether the verdict on a text answer depends on its behaviour (`behaviour:`, or
    /// a `clarify`, `cannot_answer` or `direct` outcome): a judge model, when one is
    /// set, is asked about the text answers of such expectations.
    pub fn names_text_behaviour(&self) -> bool {
        match self {
            Expectation::Calls(_) => false,
            Expectation::NoCall(t) => t.behaviour.is_some(),
            Expectation::AnyOf(outcomes) => outcomes
                .iter()
                .any(|o| o.behaviour().is_some_and(|b| b != Behaviour::ToolCall)),
        }
    }
}

/// Expected calls and how extra calls count.
#[derive(Clone, Debug)]
pub struct CallsExpectation {
    /// The calls, matched as a multiset.
    pub calls: Vec<ExpectedCall>,
    /// Whether calls beyond these fail.
    pub count: CountMode,
}

/// One expected call.
#[derive(Clone, Debug)]
pub struct ExpectedCall {
    /// Tool name.
    pub tool: String,
    /// Argument matchers in suite order.
    pub args: Vec<(String, Matcher)>,
    /// The matchers as written, in suite order (profiles read them their own way).
    pub raw_args: Vec<(String, Value)>,
    /// Whether unlisted arguments fail.
    pub extra: ExtraArgs,
}

/// Checks on a text answer.
#[derive(Clone, Debug, Default)]
pub struct TextChecks {
    /// Substrings that must appear (after the suite's normalisation).
    pub contains: Vec<String>,
    /// A regex that must find a match.
    pub regex: Option<Regex>,
    /// The behaviour the answer must show (`behaviour:` of a `should_not_call` case),
    /// as the judge model or else the built-in classifier decides. Always `None` in an
    /// [`Outcome`], whose variant names its behaviour, and in `final:` checks.
    pub behaviour: Option<Behaviour>,
}

impl TextChecks {
    /// True when there is nothing to check on the words (`contains`, `regex`).
    pub fn is_empty(&self) -> bool {
        self.contains.is_empty() && self.regex.is_none()
    }
}

/// One acceptable outcome of an ambiguous case.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// No call, and the text asks for the missing information (`request_for_info`).
    Clarify(TextChecks),
    /// No call, and the text says it cannot help (`cannot_answer`).
    CannotAnswer(TextChecks),
    /// No call, and the text answers directly (`direct`).
    Direct(TextChecks),
    /// No call (any text).
    NoCall(TextChecks),
    /// These calls.
    Calls(CallsExpectation),
}

impl Outcome {
    /// The behaviour this outcome names (`tool_call` for calls); `None` for `no_call`,
    /// which any text answer satisfies.
    pub fn behaviour(&self) -> Option<Behaviour> {
        match self {
            Outcome::Clarify(_) => Some(Behaviour::RequestForInfo),
            Outcome::CannotAnswer(_) => Some(Behaviour::CannotAnswer),
            Outcome::Direct(_) => Some(Behaviour::Direct),
            Outcome::NoCall(_) => None,
            Outcome::Calls(_) => Some(Behaviour::ToolCall),
        }
    }

    /// The text checks of a text outcome (`None` for calls).
    pub fn text_checks(&self) -> Option<&TextChecks> {
        match self {
            Outcome::Clarify(t)
            | Outcome::CannotAnswer(t)
            | Outcome::Direct(t)
            | Outcome::NoCall(t) => Some(t),
            Outcome::Calls(_) => None,
        }
    }

    /// The outcome's name in a suite (`clarify`, `cannot_answer`, `direct`, `no_call`,
    /// `calls`).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Clarify(_) => "clarify",
            Outcome::CannotAnswer(_) => "cannot_answer",
            Outcome::Direct(_) => "direct",
            Outcome::NoCall(_) => "no_call",
            Outcome::Calls(_) => "calls",
        }
    }
}

/// The matrix as declared in the suite.
#[derive(Debug, Clone, Default)]
pub struct MatrixDefaults {
    /// Targets as written.
    pub targets: Vec<String>,
    /// Variants to run.
    pub variants: Vec<String>,
    /// Modes to run.
    pub tool_choice: Vec<ToolChoice>,
    /// Repeats per trial.
    pub repeats: u32,
}

/// A bound on a metric.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Threshold {
    /// Metric name (see `docs/metrics.md`).
    pub metric: String,
    /// Lower bound.
    pub min: Option<f64>,
    /// Upper bound.
    pub max: Option<f64>,
    /// Restrict to cells of this variant.
    pub variant: Option<String>,
    /// Restrict to cells of this mode.
    pub tool_choice: Option<ToolChoice>,
    /// Restrict to cells of this target.
    pub target: Option<String>,
}

impl Threshold {
    /// True when the threshold applies to cells rather than the overall figure.
    pub fn is_per_cell(&self) -> bool {
        self.variant.is_some() || self.tool_choice.is_some() || self.target.is_some()
    }
}

/// Load and check the suite at `path`, which names no live MCP server (one that does
/// needs [`load_with`]).
pub fn load(path: &Path) -> Result<Suite, SuiteError> {
    load_with(path, &servers::ServerTools::none())
}

/// [`load()`], with the tool lists of the MCP servers the suite names, listed before
/// compiling ([`servers::servers_to_list`] says which; the suite layer opens no
/// connection).
pub fn load_with(path: &Path, servers: &servers::ServerTools) -> Result<Suite, SuiteError> {
    let (model, text) = load::read_suite_file(path)?;
    compile::compile(model, &text, path, servers)
}

/// Parse and check suite text (for tests and tools that hold the text in memory).
pub fn load_str(text: &str, path: &Path) -> Result<Suite, SuiteError> {
    let model = load::parse_yaml(text, path)?;
    compile::compile(model, text, path, &servers::ServerTools::none())
}
