//! What answering one tool call produced: the content the model reads and the facts a
//! transcript and the judges need (error kind, injected fault, approval, timing).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::suite::tool_error::ToolErrorKind;

/// Whether a call went through the approval policy, and what the simulated user said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// The tool is not in `policy.confirm`.
    #[default]
    NotRequired,
    /// Put to the user, who approved: the call was executed.
    Approved,
    /// Put to the user, who denied: the call was not executed.
    Denied,
}

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// What the model reads: JSON text (a result value, or `{"error": {kind, message}}`).
    pub content: String,
    /// True when the content is an error (sent as the provider's tool error).
    pub is_error: bool,
    /// The error's kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ToolErrorKind>,
    /// True when the error was injected (a `fail:` rule or a programmatic fault).
    #[serde(default)]
    pub fault: bool,
    /// The approval policy's part.
    #[serde(default)]
    pub approval: Approval,
    /// True when the tool itself answered (a mock rule's result or error, a server's
    /// reply); false when the call was denied, refused before reaching the tool, or
    /// failed by an injected fault.
    pub executed: bool,
    /// The line of the mock rule that answered, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_line: Option<u32>,
    /// Time spent answering, in milliseconds.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// For a call an MCP server host handled: the exchanges with the server, verbatim,
    /// and why the call was refused or how its requests for input were answered.
    /// Absent for every other host, so their records are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Box<super::call_log::McpCallLog>>,
}

impl ToolOutcome {
    /// A successful result, executed.
    pub fn result(value: &Value) -> ToolOutcome {
        ToolOutcome {
            content: value.to_string(),
            is_error: false,
            error_kind: None,
            fault: false,
            approval: Approval::NotRequired,
            executed: true,
            rule_line: None,
            elapsed_ms: 0.0,
            mcp: None,
        }
    }

    /// An error answer; `executed` says whether the tool itself gave it.
    pub fn error(kind: ToolErrorKind, message: &str, executed: bool) -> ToolOutcome {
        ToolOutcome {
            content: json!({"error": {"kind": kind.as_str(), "message": message}}).to_string(),
            is_error: true,
            error_kind: Some(kind),
            fault: false,
            approval: Approval::NotRequired,
            executed,
            rule_line: None,
            elapsed_ms: 0.0,
            mcp: None,
        }
    }

    /// An injected failure (never executed).
    pub fn fault(kind: ToolErrorKind, message: &str) -> ToolOutcome {
        ToolOutcome {
            fault: true,
            ..ToolOutcome::error(kind, message, false)
        }
    }

    /// The same outcome, stripped of its timing (for comparing runs).
    pub fn untimed(&self) -> ToolOutcome {
        ToolOutcome {
            elapsed_ms: 0.0,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_content_is_json_with_kind_and_message() {
        let o = ToolOutcome::error(ToolErrorKind::NotFound, "no such \"order\"", true);
        assert_eq!(
            o.content,
            r#"{"error":{"kind":"not_found","message":"no such \"order\""}}"#
        );
        assert!(o.is_error && o.executed && !o.fault);
        let f = ToolOutcome::fault(ToolErrorKind::RateLimit, "slow down");
        assert_eq!(
            f.content,
            r#"{"error":{"kind":"rate_limit","message":"slow down"}}"#
        );
        assert!(f.fault && !f.executed);
        assert_eq!(f.error_kind, Some(ToolErrorKind::RateLimit));
    }
}
