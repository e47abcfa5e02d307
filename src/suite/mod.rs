//! Suites: the YAML (or JSON) model, loading with located errors, and the compiled form
//! the runner and scorer use.
//!
//! Loading is two stages: [`load()`] parses the file into [`model::SuiteFile`] (shape
//! only), then [`compile`] checks meaning (tools, schemas, matchers, ids) and builds a
//! [`Suite`] in which every schema and matcher is ready to use.

pub mod compile;
pub mod error;
pub mod load;
pub mod matcher;
pub mod messages;
pub mod model;
pub mod normalize;
pub mod sampling;
pub mod shape;
pub mod share;
pub mod span;
pub mod suggest;
pub mod targets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use regex::Regex;
use serde_json::Value;

pub use error::{Diagnostic, SuiteError};
pub use matcher::Matcher;
pub use model::{CaseKind, CountMode, ExtraArgs, NormalizeRule};

/// The BFCL categories `profile: {bfcl: {category}}` accepts (the single-turn ones).
pub const BFCL_CATEGORIES: [&str; 11] = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
];
pub use normalize::Normalizer;

use crate::provider::types::{Message, ToolChoice, ToolDefinition};

/// A loaded, checked suite.
#[derive(Debug)]
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
    /// Every variant name the tools define, in order of first appearance.
    pub variants: Vec<String>,
    /// Sampling parameters for live targets.
    pub sampling: model::SamplingSpec,
    /// How verdicts are reached.
    pub profile: Profile,
}

/// How a suite's verdicts are reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Profile {
    /// toolgauge's matchers.
    #[default]
    Default,
    /// BFCL's AST checker (see `crate::bfcl`).
    Bfcl(BfclProfile),
}

/// The `bfcl` profile's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BfclProfile {
    /// The BFCL category (selects the checker).
    pub category: String,
    /// Reproduce BFCL's known defects.
    pub strict: bool,
    /// Expect `_` for `.` in function names.
    pub underscore_names: bool,
}

/// A tool with its compiled argument schema.
#[derive(Debug)]
pub struct Tool {
    /// Function name.
    pub name: String,
    /// Description per variant; a tool with one plain description has `default` only.
    pub descriptions: IndexMap<String, String>,
    /// The JSON Schema of the arguments.
    pub parameters: std::sync::Arc<Value>,
    /// The compiled validator (draft 2020-12), built when the suite loads or, in big
    /// suites, on first use (see [`Tool::validator`]).
    pub validator: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
    /// Names listed in `required`.
    pub required: Vec<String>,
    /// The tool as BFCL's checker declares it, read on first use by suites with the
    /// `bfcl` profile (see [`crate::bfcl::profile`]).
    pub bfcl: std::sync::OnceLock<Result<crate::bfcl::checker::Function, String>>,
}

impl Tool {
    /// The description used under `variant` (a tool with one description uses it everywhere).
    pub fn description(&self, variant: &str) -> Option<&str> {
        if self.descriptions.len() == 1 && self.descriptions.contains_key("default") {
            return self.descriptions.get("default").map(String::as_str);
        }
        self.descriptions.get(variant).map(String::as_str)
    }

    /// The neutral definition offered to the model under `variant`.
    pub fn definition(&self, variant: &str) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description(variant).unwrap_or_default().to_string(),
            parameters: self.parameters.clone(),
        }
    }

    /// The argument validator; `Err` with the reason when the schema does not compile
    /// (only possible for a schema first compiled here: see `compile::EAGER_SCHEMAS`).
    pub fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&self.parameters)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The schema of top-level parameter `name`, if declared.
    pub fn property(&self, name: &str) -> Option<&Value> {
        self.parameters.get("properties")?.get(name)
    }
}

/// A compiled case.
#[derive(Debug)]
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
}

impl Case {
    /// The tools this case offers: its own, or the suite's.
    pub fn tools<'a>(&'a self, suite: &'a Suite) -> &'a [Arc<Tool>] {
        self.tools.as_deref().unwrap_or(&suite.tools)
    }
}

/// A different kind and expectation under some modes.
#[derive(Debug)]
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
#[derive(Debug)]
pub enum Expectation {
    /// `should_call`: these calls.
    Calls(CallsExpectation),
    /// `should_not_call`: no call, with optional checks on the text.
    NoCall(TextChecks),
    /// `ambiguous`: any of these outcomes.
    AnyOf(Vec<Outcome>),
}

/// Expected calls and how extra calls count.
#[derive(Debug)]
pub struct CallsExpectation {
    /// The calls, matched as a multiset.
    pub calls: Vec<ExpectedCall>,
    /// Whether calls beyond these fail.
    pub count: CountMode,
}

/// One expected call.
#[derive(Debug)]
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
#[derive(Debug, Default)]
pub struct TextChecks {
    /// Substrings that must appear (after the suite's normalisation).
    pub contains: Vec<String>,
    /// A regex that must find a match.
    pub regex: Option<Regex>,
}

impl TextChecks {
    /// True when there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.contains.is_empty() && self.regex.is_none()
    }
}

/// One acceptable outcome of an ambiguous case.
#[derive(Debug)]
pub enum Outcome {
    /// No call, and the text asks a question.
    Clarify(TextChecks),
    /// No call.
    NoCall(TextChecks),
    /// These calls.
    Calls(CallsExpectation),
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

/// Load and check the suite at `path`.
pub fn load(path: &Path) -> Result<Suite, SuiteError> {
    let (model, text) = load::read_suite_file(path)?;
    compile::compile(model, &text, path)
}

/// Parse and check suite text (for tests and tools that hold the text in memory).
pub fn load_str(text: &str, path: &Path) -> Result<Suite, SuiteError> {
    let model = load::parse_yaml(text, path)?;
    compile::compile(model, text, path)
}
