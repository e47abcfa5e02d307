//! One call's checks: what is recorded about it ([`CallCheck`], [`InvalidReason`]), which
//! offered tool it names ([`Named`]: one of the case's tools, or a distractor the trial
//! offered beside them), and the reasons a call fails on its own ([`call_reasons`]).
//!
//! A call is *invalid* when it could not execute: its arguments are not JSON, it names a
//! tool the trial did not offer, or its arguments violate the schema of the tool it
//! names. A call of a distractor (`distractors:`) names a tool the trial offered, so it
//! is not invalid for that: it is a wrong tool, with a reason of its own
//! (`distractor_call`), and it is still invalid when its arguments are not JSON or do
//! not fit the distractor's schema.

use std::ops::Deref;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::Reason;
use crate::chat::ToolDefinition;
use crate::suite::Tool;

/// Why a call is invalid. The three are exclusive: arguments that do not parse can not
/// be validated, and an unknown tool has no schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidReason {
    /// The arguments are not valid JSON.
    InvalidJson,
    /// The tool name is not one of the tools the trial offered (the case's tools, and
    /// in a cell with distractors its distractors).
    UnknownTool,
    /// The arguments do not validate against the tool's schema.
    SchemaViolation,
}

/// Everything checked about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallCheck {
    /// Tool name as called.
    pub tool: String,
    /// The provider's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The arguments parsed as JSON.
    pub json_ok: bool,
    /// The tool was offered: one of the case's tools, or a distractor of the trial.
    pub known_tool: bool,
    /// The tool is a distractor the trial offered (`distractors:`), not one of the
    /// case's tools: a wrong tool. Absent (false) in records of every other call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distractor: bool,
    /// The arguments validate against the schema (`None` when not checkable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_ok: Option<bool>,
    /// The first few schema errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_errors: Vec<String>,
    /// Why the call is invalid, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<InvalidReason>,
    /// Required parameters present.
    pub required_present: u32,
    /// Required parameters declared by the tool.
    pub required_total: u32,
    /// Required parameters missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_required: Vec<String>,
    /// String values checked for grounding.
    pub grounding_checked: u32,
    /// Ungrounded values: `param = value` found nowhere in the conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ungrounded: Vec<String>,
}

/// The offered tool a call names.
#[derive(Clone, Copy)]
pub enum Named<'t> {
    /// One of the case's tools (as the suite compiled it, with its variants).
    Case(&'t Tool),
    /// A distractor the trial offered beside them, as it was sent.
    Distractor(&'t ToolDefinition),
}

/// A compiled validator: the suite's own (compiled once), or one built for a
/// distractor's schema when a call names it (distractors are many and rarely called).
pub enum Validator<'t> {
    /// The case tool's validator.
    Shared(&'t jsonschema::Validator),
    /// Built for this call.
    Built(jsonschema::Validator),
}

impl Deref for Validator<'_> {
    type Target = jsonschema::Validator;

    fn deref(&self) -> &jsonschema::Validator {
        match self {
            Validator::Shared(v) => v,
            Validator::Built(v) => v,
        }
    }
}

impl<'t> Named<'t> {
    /// The tool `name` among the case's `tools`, else among the trial's `distractors`.
    pub fn find(
        name: &str,
        tools: &'t [std::sync::Arc<Tool>],
        distractors: &[&'t ToolDefinition],
    ) -> Option<Self> {
        if let Some(t) = tools.iter().find(|t| t.name == name) {
            return Some(Named::Case(t));
        }
        distractors
            .iter()
            .find(|d| d.name == name)
            .map(|d| Named::Distractor(d))
    }

    /// The tool's name.
    pub fn name(&self) -> &'t str {
        match self {
            Named::Case(t) => &t.name,
            Named::Distractor(d) => &d.name,
        }
    }

    /// The validator of the schema offered under `variant` (a distractor has one).
    pub fn validator(&self, variant: Option<&str>) -> Result<Validator<'t>, String> {
        match self {
            Named::Case(t) => t
                .validator_in(variant)
                .map(Validator::Shared)
                .map_err(str::to_string),
            Named::Distractor(d) => {
                crate::suite::build_validator(&d.parameters).map(Validator::Built)
            }
        }
    }

    /// The `required` names of the schema offered under `variant`.
    pub fn required(&self, variant: Option<&str>) -> Vec<String> {
        match self {
            Named::Case(t) => t.required_in(variant).to_vec(),
            Named::Distractor(d) => d
                .parameters
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The schema of top-level parameter `name` as offered under `variant`.
    pub fn property(&self, variant: Option<&str>, name: &str) -> Option<&'t Value> {
        match self {
            Named::Case(t) => t.property_in(variant, name),
            Named::Distractor(d) => d.parameters.get("properties")?.get(name),
        }
    }
}

/// The reasons `calls` fail on their own, one per call at most each, in call order:
/// arguments that are not JSON, a tool the trial did not offer, a schema violation
/// (the call is invalid), and a call of a distractor (a wrong tool).
pub fn call_reasons(calls: &[CallCheck]) -> Vec<Reason> {
    let mut reasons = Vec::new();
    for c in calls {
        match c.invalid {
            Some(InvalidReason::InvalidJson) => reasons.push(Reason::new(
                "invalid_json",
                format!("call to `{}` has arguments that are not valid JSON", c.tool),
            )),
            Some(InvalidReason::UnknownTool) => reasons.push(Reason::new(
                "unknown_tool",
                format!("called `{}`, which is not one of the tools", c.tool),
            )),
            Some(InvalidReason::SchemaViolation) => reasons.push(Reason::new(
                "schema_violation",
                format!(
                    "call to `{}` violates its schema: {}",
                    c.tool,
                    c.schema_errors.join("; ")
                ),
            )),
            None => {}
        }
        if c.distractor {
            reasons.push(Reason::new(
                "distractor_call",
                format!(
                    "called `{}`, a distractor offered beside the case's tools (a wrong tool)",
                    c.tool
                ),
            ));
        }
    }
    reasons
}
