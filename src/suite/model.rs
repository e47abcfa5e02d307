//! The suite file as written by users: serde types that mirror the YAML one to one.
//!
//! These types only check shape (unknown keys, wrong types) and remember where each
//! value came from, so later stages can point at the right line. Meaning is checked in
//! [`crate::suite::compile`], which turns this model into a [`crate::suite::Suite`].
//! The JSON Schema in `docs/suite.schema.json` is generated from these types.

use std::sync::Arc;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::span::Spanned;

/// A whole suite file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Suite name; used for the run directory. Defaults to the file stem.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text shown in reports.
    #[serde(default)]
    pub description: Option<String>,
    /// Default normalisation applied by literal matchers and grounding checks.
    #[serde(default)]
    pub normalize: Vec<NormalizeRule>,
    /// A system prompt prepended to every case that has no system message of its own.
    #[serde(default)]
    pub system: Option<String>,
    /// Path of the cassette to replay, relative to the suite file.
    #[serde(default)]
    pub cassette: Option<String>,
    /// The tools offered to the model in every case (a case may offer its own instead).
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// The test cases.
    pub cases: Vec<CaseSpec>,
    /// Which cells to run: targets, variants, tool_choice modes, repeats.
    #[serde(default)]
    pub matrix: MatrixSpec,
    /// Defaults for every expected call.
    #[serde(default)]
    pub defaults: DefaultsSpec,
    /// Minimum (or maximum) metric values that decide the exit code.
    #[serde(default)]
    pub thresholds: Vec<ThresholdSpec>,
    /// Sampling parameters sent to live targets (command-line flags override each).
    #[serde(default)]
    pub sampling: SamplingSpec,
    /// How verdicts are reached: toolgauge's matchers (default), or a declared profile
    /// (see docs/suite-format.md).
    #[serde(default)]
    pub profile: Option<super::profile::ProfileDecl>,
    /// Tool loops: mock rules per tool for every case (a case's `mocks` replace a
    /// tool's rules); cases then run as episodes of rounds.
    #[serde(default)]
    pub mocks: Option<super::loops::MocksSpec>,
    /// Tool loops: round and call limits for every loop case.
    #[serde(default)]
    pub limits: Option<super::loops::LimitsSpec>,
    /// Tool loops: which tools need the user's approval, and the simulated answer.
    #[serde(default)]
    pub policy: Option<super::loops::PolicySpec>,
    /// Take the tools from an MCP server, or a pinned snapshot of its tools.
    #[serde(default)]
    pub tools_from: Option<Spanned<super::tools_from::ToolsFromSpec>>,
    /// Add N other tools to every case's tool list, as a matrix axis.
    #[serde(default)]
    pub distractors: Option<super::distractors::DistractorsSpec>,
    /// A judge model that decides the behaviour of text answers (instead of the
    /// built-in classifier) and checks `final.rubric`; `--judge TARGET` overrides it.
    #[serde(default)]
    pub judge: Option<Spanned<JudgeSpec>>,
    /// Suite-wide parts of named variants (today the system prompt), by variant name.
    /// The names join the variants the tools define.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, SuiteVariantSpec>")]
    pub variants: IndexMap<Spanned<String>, SuiteVariantSpec>,
    /// `toolgauge lint` settings: rules allowed in every tool, and thresholds (see
    /// docs/lint.md). Runs ignore it.
    #[serde(default)]
    pub lint: Option<SuiteLintSpec>,
}

/// `lint:` of a suite: what `toolgauge lint` allows and its thresholds.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteLintSpec {
    /// Rule codes not reported for any tool of the suite (docs/lint.md lists them).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// `description-too-long`: the token budget of one description (default 300).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_description_tokens: Option<u64>,
    /// `set-total-tokens`: the token budget of all tool definitions (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_total_tokens: Option<u64>,
}

/// `lint:` of one tool: rule codes `toolgauge lint` does not report for it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolLintSpec {
    /// Rule codes not reported for this tool (docs/lint.md lists them).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
}

/// The suite-wide parts of one variant (`variants.NAME`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteVariantSpec {
    /// The system prompt under this variant, instead of the suite's `system`, for every
    /// case without a system message of its own; `""` sends none.
    #[serde(default)]
    pub system: Option<String>,
}

/// Sampling parameters for live targets; part of the cassette key when set.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplingSpec {
    /// Sampling temperature, from 0 to 2.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<Spanned<f64>>,
    /// Output token limit per request, at least 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_output_tokens: Option<Spanned<u32>>,
    /// Sampling seed, where the API has one.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Allow several calls in one turn (OpenAI `parallel_tool_calls`).
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    /// Extra request fields passed through to every live request.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub extra: Option<serde_json::Map<String, Value>>,
    /// Stream live answers: `true`, `false`, or `both` (each live target runs once
    /// each way); `--stream` overrides it.
    #[serde(default)]
    #[schemars(with = "Option<super::stream::StreamSpec>")]
    pub stream: Option<Spanned<super::stream::StreamSpec>>,
}

/// A normalisation rule, applied before comparing strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NormalizeRule {
    /// Unicode lower-casing (`Beijing` = `beijing`).
    Casefold,
    /// Trim, and collapse runs of whitespace to one space.
    Whitespace,
    /// Remove Unicode punctuation (`St. Louis` = `St Louis`, `北京。` = `北京`).
    Punctuation,
    /// Full-width ASCII forms and the ideographic space to their half-width forms.
    Fullwidth,
    /// Unicode canonical composition (NFC): `Zürich` typed with a combining diaeresis
    /// (NFD, as some systems send it) equals the precomposed `Zürich`.
    Nfc,
}

/// One tool offered to the model.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Function name as the model sees it.
    pub name: Spanned<String>,
    /// The description; with `variants`, the wording of every variant that does not
    /// word the tool itself. Alone, the tool has one variant, `default`.
    #[serde(default)]
    pub description: Option<String>,
    /// What changes under named variants: a description (a string), or a map with any
    /// of `description`, `parameter_descriptions` and `parameters`.
    #[serde(default)]
    pub variants: Option<Spanned<IndexMap<String, ToolVariantSpec>>>,
    /// JSON Schema (draft 2020-12) of the arguments object.
    #[schemars(with = "Value")]
    pub parameters: Spanned<Arc<Value>>,
    /// Tool loops: `high` for a tool whose calls a careful model confirms first.
    #[serde(default)]
    pub risk: Option<super::loops::Risk>,
    /// Tool loops: `false` when calling twice with the same arguments acts twice.
    #[serde(default)]
    pub idempotent: Option<bool>,
    /// `toolgauge lint` settings of this tool (`allow: [CODE, …]`); runs ignore it.
    #[serde(default)]
    pub lint: Option<ToolLintSpec>,
    /// The MCP tool this spec was made from (`tools_from`), raw; never read from a file.
    #[serde(skip)]
    #[schemars(skip)]
    pub mcp: Option<Arc<super::mcp::McpTool>>,
}

/// A tool under one variant: its description, or the parts that change.
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum ToolVariantSpec {
    /// The tool's description under this variant.
    Description(String),
    /// The parts of the tool that change under this variant.
    Parts(ToolVariantParts),
}

/// Read by hand rather than as an untagged enum: serde buffers an untagged value, which
/// would lose the locations of the values inside the map.
impl<'de> Deserialize<'de> for ToolVariantSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ToolVariantSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a description, or a map of `description`, `parameter_descriptions` and `parameters`")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(s.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(s))
            }
            // A YAML scalar written for text is text, as everywhere in a suite.
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(b.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(i.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(u.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Self::Value, E> {
                Ok(ToolVariantSpec::Description(f.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                ToolVariantParts::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ToolVariantSpec::Parts)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The parts of a tool one variant changes.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolVariantParts {
    /// The description under this variant (default: the tool's `description`).
    #[serde(default)]
    pub description: Option<String>,
    /// Descriptions of parameters by path (`city`, `address.street`, `stops[].city`),
    /// replacing or adding the `description` of each in the schema sent.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub parameter_descriptions: IndexMap<Spanned<String>, String>,
    /// A whole JSON Schema of the arguments object that replaces the tool's under this
    /// variant.
    #[serde(default)]
    #[schemars(with = "Option<Value>")]
    pub parameters: Option<Spanned<Arc<Value>>>,
}

/// A case's own tools (`cases[].tools`).
///
/// Imported benchmarks repeat the same tool definitions across hundreds of cases (an
/// imported category declares 4,178 tools, 1,073 of them distinct). In a JSON suite read by
/// [`crate::suite::load::parse_json`], a tool whose JSON text equals one already read is
/// not parsed again: the cases share one [`ToolSpec`], and later stages (compiling,
/// scoring) do their work once per distinct tool. YAML suites read every tool.
#[derive(Debug, Default)]
pub struct CaseTools(pub Vec<Arc<ToolSpec>>);

impl<'de> Deserialize<'de> for CaseTools {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if !super::share::active() {
            return Vec::<ToolSpec>::deserialize(deserializer)
                .map(|v| CaseTools(v.into_iter().map(Arc::new).collect()));
        }
        let raw = Vec::<&'de serde_json::value::RawValue>::deserialize(deserializer)?;
        raw.into_iter()
            .map(|r| super::share::tool(r.get()).map_err(serde::de::Error::custom))
            .collect::<Result<_, _>>()
            .map(CaseTools)
    }
}

impl JsonSchema for CaseTools {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Vec<ToolSpec>>::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        <Vec<ToolSpec>>::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<ToolSpec>>::json_schema(generator)
    }

    fn inline_schema() -> bool {
        <Vec<ToolSpec>>::inline_schema()
    }
}

/// How a case's expectation is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    /// The expected call(s) must be made with matching arguments.
    ShouldCall,
    /// No tool call may be made.
    ShouldNotCall,
    /// Any one of the listed outcomes passes.
    Ambiguous,
}

impl CaseKind {
    /// The name used in suites and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::ShouldCall => "should_call",
            CaseKind::ShouldNotCall => "should_not_call",
            CaseKind::Ambiguous => "ambiguous",
        }
    }
}

/// One test case.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Unique id, used in reports and cassettes.
    pub id: Spanned<String>,
    /// What the case tests.
    pub kind: CaseKind,
    /// A single user turn. Exactly one of `prompt` and `messages` is required.
    #[serde(default)]
    pub prompt: Option<String>,
    /// A whole conversation, for cases that start after earlier turns.
    #[serde(default)]
    pub messages: Option<Vec<MessageSpec>>,
    /// Free labels for filtering reports.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The tools offered in this case instead of the suite's `tools` (same format), for
    /// suites whose cases each come with their own functions (e.g. imported benchmarks).
    #[serde(default)]
    pub tools: Option<CaseTools>,
    /// The expectation (required for `should_call` and `ambiguous`).
    #[serde(default)]
    pub expect: Option<ExpectSpec>,
    /// Run this case only under these tool_choice modes.
    #[serde(default)]
    pub modes: Option<Vec<Spanned<ToolChoiceSpec>>>,
    /// A different kind and expectation under particular tool_choice modes.
    #[serde(default)]
    pub per_mode: Vec<PerModeSpec>,
    /// Tool loops: this case's mock rules, replacing the suite's tool by tool.
    #[serde(default)]
    pub mocks: Option<super::loops::MocksSpec>,
    /// Tool loops: this case's limits, replacing the suite's.
    #[serde(default)]
    pub limits: Option<super::loops::LimitsSpec>,
    /// Tool loops: this case's approval policy, replacing the suite's.
    #[serde(default)]
    pub policy: Option<super::loops::PolicySpec>,
    /// Tool loops: scripted user follow-ups, one after each text answer of the model.
    #[serde(default)]
    pub turns: Option<Spanned<Vec<String>>>,
    /// Tool loops: a built-in stateful world that answers the case's calls (e.g.
    /// `{bfcl: {...}}`); the case runs as a loop, with a fresh world per trial.
    #[serde(default)]
    pub world: Option<super::world::WorldDecl>,
    /// Tool loops: tools kept from the model until a user turn, by name: the turn from
    /// which each is offered (1 is the first entry of `turns`).
    #[serde(default)]
    #[schemars(with = "Option<IndexMap<String, u32>>")]
    pub withheld: Option<Spanned<IndexMap<Spanned<String>, Spanned<u32>>>>,
}

/// A different expectation under some tool_choice modes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerModeSpec {
    /// The modes this override applies to.
    pub modes: Vec<Spanned<ToolChoiceSpec>>,
    /// The kind under these modes.
    pub kind: CaseKind,
    /// The expectation under these modes.
    #[serde(default)]
    pub expect: Option<ExpectSpec>,
}

/// One message of a conversation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// Text content (a tool message's result; may be omitted on assistant turns with calls).
    #[serde(default)]
    pub content: Option<String>,
    /// Earlier tool calls made by the assistant.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallSpec>,
    /// The call a `tool` message answers.
    #[serde(default)]
    // Located, so a wrong id is shown where it is written.
    pub tool_call_id: Option<Spanned<String>>,
}

/// The role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// An earlier tool call in a conversation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Call id, referenced by the tool message that answers it.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, as an object (serialised to JSON) or a raw JSON string.
    #[serde(default)]
    #[schemars(with = "Value")]
    pub arguments: Value,
}

/// `judge:`: the judge model of a suite.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    /// The judge target, as a target is written (`provider:model`).
    pub target: Spanned<String>,
    /// A prompt template file for the judge (relative to the suite); the built-in
    /// prompt otherwise.
    #[serde(default)]
    pub prompt: Option<Spanned<String>>,
}

/// The expectation of a case.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSpec {
    /// `should_call`: the calls that must be made.
    #[serde(default)]
    pub calls: Option<Vec<ExpectedCallSpec>>,
    /// `should_call`: `exact` (no other calls) or `at_least` (other calls allowed).
    #[serde(default)]
    pub count: Option<CountMode>,
    /// `should_call`: any call to any tool passes (instead of `calls`).
    #[serde(default)]
    pub any_call: bool,
    /// `should_not_call` (or an outcome): the text answer must contain these strings.
    #[serde(default)]
    pub contains: Vec<String>,
    /// `should_not_call` (or an outcome): the text answer must match this regex.
    #[serde(default)]
    pub regex: Option<Spanned<String>>,
    /// `ambiguous`: acceptable outcomes; one must hold.
    #[serde(default)]
    pub any_of: Option<Vec<OutcomeSpec>>,
    /// `should_not_call`: the behaviour the text answer must show (`direct`,
    /// `cannot_answer` or `clarify`), decided by the classifier or the judge.
    #[serde(default)]
    pub behaviour: Option<Spanned<String>>,
    /// Loops: the tool calls of the whole episode (`calls` checks the first round only).
    #[serde(default)]
    pub trajectory: Option<super::trajectory::TrajectorySpec>,
    /// Loops: tools that must not be called in any round.
    #[serde(default)]
    pub never: Vec<Spanned<String>>,
    /// Loops: checks on the final answer.
    #[serde(default, rename = "final")]
    pub final_answer: Option<super::trajectory::FinalSpec>,
    /// Loops: how the episode must stop (default `answered`).
    #[serde(default)]
    pub stop: Option<super::trajectory::StopReason>,
    /// Loop cases on an MCP server: calls made on the episode's session after it ends,
    /// each with the result it must return (see [`super::end_state`]).
    #[serde(default)]
    pub end_state: Vec<super::end_state::EndStateSpec>,
}

/// One acceptable outcome of an ambiguous case.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeSpec {
    /// No tool call and a text answer that asks for the missing information.
    #[serde(default)]
    pub clarify: bool,
    /// No tool call and a text answer that says it cannot help.
    #[serde(default)]
    pub cannot_answer: bool,
    /// No tool call and a text answer that answers directly.
    #[serde(default)]
    pub direct: bool,
    /// No tool call at all (any text).
    #[serde(default)]
    pub no_call: bool,
    /// These calls are made.
    #[serde(default)]
    pub calls: Option<Vec<ExpectedCallSpec>>,
    /// Count semantics for `calls`.
    #[serde(default)]
    pub count: Option<CountMode>,
    /// The text answer contains these strings.
    #[serde(default)]
    pub contains: Vec<String>,
    /// The text answer matches this regex.
    #[serde(default)]
    pub regex: Option<Spanned<String>>,
}

/// Whether calls beyond the expected ones are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CountMode {
    /// Exactly the expected calls, no others (default).
    #[default]
    Exact,
    /// The expected calls, and possibly others.
    AtLeast,
}

/// Whether arguments not named in an expectation are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtraArgs {
    /// Arguments not named in the expectation are ignored (default).
    #[default]
    Allow,
    /// Any argument not named in the expectation fails the match.
    Deny,
}

/// One expected call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCallSpec {
    /// The tool that must be called.
    pub tool: Spanned<String>,
    /// Argument matchers by parameter name.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, Value>")]
    pub args: IndexMap<Spanned<String>, Spanned<Value>>,
    /// Overrides the suite's `defaults.extra_args` for this call.
    #[serde(default)]
    pub extra_args: Option<ExtraArgs>,
}

/// Suite-wide defaults.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultsSpec {
    /// Count semantics for expected calls (default `exact`).
    #[serde(default)]
    pub count: Option<CountMode>,
    /// Whether unexpected arguments are allowed (default `allow`).
    #[serde(default)]
    pub extra_args: Option<ExtraArgs>,
}

/// A tool_choice mode as written in suites: `none`, `auto`, `required` or `{function: NAME}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolChoiceSpec {
    /// Calls are forbidden.
    None,
    /// The model decides.
    Auto,
    /// At least one call is required.
    Required,
    /// This function must be called.
    Function(String),
}

/// The matrix of cells to run.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    /// Targets such as `openai:gpt-4o-mini` or `scripted:oracle`.
    #[serde(default)]
    pub targets: Vec<Spanned<String>>,
    /// Description variants (default: every variant the tools define).
    #[serde(default)]
    pub variants: Vec<Spanned<String>>,
    /// tool_choice modes (default: `[auto]`).
    #[serde(default)]
    pub tool_choice: Vec<Spanned<ToolChoiceSpec>>,
    /// How many times each trial is repeated (default 1).
    #[serde(default)]
    pub repeats: Option<Spanned<u32>>,
}

/// A metric bound that decides the exit code.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThresholdSpec {
    /// Metric name, e.g. `accuracy`, `trigger_recall`, `invalid_call_rate`.
    pub metric: Spanned<String>,
    /// The metric must be at least this.
    #[serde(default)]
    pub min: Option<Spanned<f64>>,
    /// The metric must be at most this.
    #[serde(default)]
    pub max: Option<Spanned<f64>>,
    /// Check each cell of this variant instead of the overall value.
    #[serde(default)]
    pub variant: Option<Spanned<String>>,
    /// Check each cell of this tool_choice mode instead of the overall value.
    #[serde(default)]
    pub tool_choice: Option<Spanned<ToolChoiceSpec>>,
    /// Check each cell of this target instead of the overall value.
    #[serde(default)]
    pub target: Option<Spanned<String>>,
}
