//! The values every lint rule reads and writes: the tool view the rules look at, the
//! finding they report, its severity, and the thresholds a suite or the flags set.

use std::collections::BTreeMap;

use serde_json::Value;

/// How serious a finding is. Ordered: `Info < Warning < Error`, so `--deny LEVEL` fails
/// on every finding at or above LEVEL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; often a matter of taste.
    Info,
    /// Likely to cost accuracy or tokens.
    Warning,
    /// Wrong: a model cannot use the tool as meant (or a provider refuses it).
    Error,
}

impl Severity {
    /// The level as written (`error`, `warning`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Read a level as written; `None` for any other word.
    pub fn parse(text: &str) -> Option<Severity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "info" | "note" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// A 1-based line and column in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl Position {
    /// The position, or `None` for an unknown one (line 0, as spans read from JSON
    /// suites are).
    pub fn known(line: u32, column: u32) -> Option<Position> {
        (line > 0).then_some(Position { line, column })
    }
}

/// One tool as the rules see it: what a model is sent (name, description, parameters),
/// and where each part was written when it came from a file.
#[derive(Debug, Clone, Default)]
pub struct LintTool {
    /// The function name.
    pub name: String,
    /// The description (`None` when the tool has none).
    pub description: Option<String>,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// Rule codes allowed for this tool (its own `lint: {allow: […]}`).
    pub allow: Vec<String>,
    /// Where the tool starts (its `name`).
    pub at: Option<Position>,
    /// Where its description is written.
    pub description_at: Option<Position>,
    /// Where each parameter is written, by path (`city`, `address.street`, `stops[].city`).
    pub parameter_at: BTreeMap<String, Position>,
}

impl LintTool {
    /// The location of the description, else of the tool.
    pub fn description_pos(&self) -> Option<Position> {
        self.description_at.or(self.at)
    }

    /// The location of parameter `path`, else of the tool.
    pub fn parameter_pos(&self, path: &str) -> Option<Position> {
        self.parameter_at.get(path).copied().or(self.at)
    }
}

/// One problem a rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's stable code (see [`crate::lint::rules::RULES`]).
    pub rule: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// The tool it is about (`None` for the whole set).
    pub tool: Option<String>,
    /// The parameter path it is about, when it is about one.
    pub parameter: Option<String>,
    /// What is wrong, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: String,
    /// Where: line and column in the linted file, when known.
    pub at: Option<Position>,
    /// The description variants it holds under, when not all of the suite's (a suite
    /// with several variants is linted once per variant).
    pub variants: Vec<String>,
}

impl Finding {
    /// A finding of `rule` at its catalogue severity.
    pub fn new(rule: &'static str, message: String, hint: impl Into<String>) -> Finding {
        Finding {
            rule,
            severity: crate::lint::rules::severity_of(rule),
            tool: None,
            parameter: None,
            message,
            hint: hint.into(),
            at: None,
            variants: Vec::new(),
        }
    }

    /// About `tool`, at `at`.
    pub fn on(mut self, tool: &LintTool, at: Option<Position>) -> Finding {
        self.tool = Some(tool.name.clone());
        self.at = at;
        self
    }

    /// About parameter `path`.
    pub fn param(mut self, path: &str) -> Finding {
        self.parameter = Some(path.to_string());
        self
    }
}

/// The thresholds of the rules that have one (flags override the suite's `lint:`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LintConfig {
    /// `description-too-long`: o200k tokens of one tool's description.
    pub max_description_tokens: u64,
    /// `set-total-tokens`: o200k tokens of every tool definition together.
    pub max_total_tokens: u64,
    /// `set-confusable`: normalized name similarity (1 - edit distance / longer length)
    /// at or above which two names are confusable.
    pub name_similarity: f64,
    /// `set-confusable`: Jaccard similarity of two descriptions' word sets at or above
    /// which they are confusable.
    pub description_similarity: f64,
    /// Report what OpenAI's strict mode (Structured Outputs) would refuse
    /// (`provider-openai-strict-…`, `--openai-strict`).
    pub openai_strict: bool,
}

impl Default for LintConfig {
    fn default() -> LintConfig {
        LintConfig {
            max_description_tokens: 300,
            max_total_tokens: 10_000,
            name_similarity: 0.85,
            description_similarity: 0.6,
            openai_strict: false,
        }
    }
}
