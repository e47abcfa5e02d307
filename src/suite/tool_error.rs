//! The kinds of tool error: those a suite declares in its mock rules, and those only the
//! harness answers with.
//!
//! One type for both, so a kind means the same from the suite file to the tool host, the
//! record and the judge. It lives in the suite layer because that is the lowest layer
//! that names kinds (`error:` and `fail:` rules); the tool hosts above answer with it.
//! The suite format accepts only the [declarable](ToolErrorKind::DECLARABLE) kinds: the
//! JSON Schema leaves the others out, and [`declared`] refuses them when a suite is read.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, de};

use super::span::Spanned;

/// The kind of a tool error: the kinds a suite can declare (the first seven), and those
/// the harness itself answers with. Records, journals and the content the model reads
/// name it in snake_case ([`ToolErrorKind::as_str`]).
///
/// The JSON Schema shows the suite's view of it: the definition keeps its name
/// (`ErrorKind`) and description, and leaves the harness's kinds out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    rename = "ErrorKind",
    description = "The kinds of tool error a suite can declare."
)]
pub enum ToolErrorKind {
    // The kinds a suite can declare. Their doc comments are the schema's descriptions.
    /// Too many requests; a retry later may succeed.
    RateLimit,
    /// The tool did not answer in time.
    Timeout,
    /// The tool failed internally.
    ServerError,
    /// The thing asked for does not exist.
    NotFound,
    /// The caller may not do this.
    PermissionDenied,
    // Also the harness's answer to arguments that are not a JSON object.
    /// The arguments were refused.
    InvalidArguments,
    /// The action needs the user's confirmation first.
    NeedsConfirmation,
    // The harness's own kinds: not in the suite format.
    /// The approval policy answered `deny`: the call was not executed.
    #[schemars(skip)]
    Denied,
    /// The model called a tool the case does not offer.
    #[schemars(skip)]
    UnknownTool,
    /// No mock rule answers this call (the suite gives none that matches).
    #[schemars(skip)]
    NoMock,
    /// The harness refused to execute the call on the MCP server (the tool may change
    /// the world and the suite does not allow it, or the server does not offer it).
    #[schemars(skip)]
    Refused,
    /// The MCP server's tool answered with `isError: true`.
    #[schemars(skip)]
    ToolReported,
    /// The MCP server's `structuredContent` does not satisfy the tool's `outputSchema`.
    #[schemars(skip)]
    OutputSchema,
}

impl ToolErrorKind {
    /// Every kind: the declarable ones in documentation order, then the harness's own.
    pub const ALL: [ToolErrorKind; 13] = [
        ToolErrorKind::RateLimit,
        ToolErrorKind::Timeout,
        ToolErrorKind::ServerError,
        ToolErrorKind::NotFound,
        ToolErrorKind::PermissionDenied,
        ToolErrorKind::InvalidArguments,
        ToolErrorKind::NeedsConfirmation,
        ToolErrorKind::Denied,
        ToolErrorKind::UnknownTool,
        ToolErrorKind::NoMock,
        ToolErrorKind::Refused,
        ToolErrorKind::ToolReported,
        ToolErrorKind::OutputSchema,
    ];

    /// The kinds a suite can declare (`error:` and `fail:` rules), in documentation order.
    pub const DECLARABLE: [ToolErrorKind; 7] = [
        ToolErrorKind::RateLimit,
        ToolErrorKind::Timeout,
        ToolErrorKind::ServerError,
        ToolErrorKind::NotFound,
        ToolErrorKind::PermissionDenied,
        ToolErrorKind::InvalidArguments,
        ToolErrorKind::NeedsConfirmation,
    ];

    /// The name used in suites, results and records.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::RateLimit => "rate_limit",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::ServerError => "server_error",
            ToolErrorKind::NotFound => "not_found",
            ToolErrorKind::PermissionDenied => "permission_denied",
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::NeedsConfirmation => "needs_confirmation",
            ToolErrorKind::Denied => "denied",
            ToolErrorKind::UnknownTool => "unknown_tool",
            ToolErrorKind::NoMock => "no_mock",
            ToolErrorKind::Refused => "refused",
            ToolErrorKind::ToolReported => "tool_reported",
            ToolErrorKind::OutputSchema => "output_schema",
        }
    }

    /// Whether a suite can declare this kind.
    pub fn declarable(self) -> bool {
        ToolErrorKind::DECLARABLE.contains(&self)
    }

    /// The message sent when a rule or a fault gives none. The harness's own kinds
    /// always come with a message of their own (naming the tool); theirs here are only
    /// for a fault set in code with one of them.
    pub fn default_message(self) -> &'static str {
        match self {
            ToolErrorKind::RateLimit => "rate limit exceeded; retry later",
            ToolErrorKind::Timeout => "the tool timed out",
            ToolErrorKind::ServerError => "internal server error",
            ToolErrorKind::NotFound => "not found",
            ToolErrorKind::PermissionDenied => "permission denied",
            ToolErrorKind::InvalidArguments => "invalid arguments",
            ToolErrorKind::NeedsConfirmation => "this action needs the user's confirmation",
            ToolErrorKind::Denied => "denied by the user: the call was not executed",
            ToolErrorKind::UnknownTool => "there is no such tool",
            ToolErrorKind::NoMock => "the tool has no answer for these arguments in this test",
            ToolErrorKind::Refused => "the call was refused; it was not executed",
            ToolErrorKind::ToolReported => "the tool reported an error",
            ToolErrorKind::OutputSchema => {
                "the tool's structured result does not match its output schema"
            }
        }
    }
}

/// The names of the declarable kinds, for serde's "unknown variant" error.
const DECLARABLE_NAMES: &[&str] = &[
    "rate_limit",
    "timeout",
    "server_error",
    "not_found",
    "permission_denied",
    "invalid_arguments",
    "needs_confirmation",
];

/// Reads the `kind` of an `error:` or `fail:` rule: a declarable kind, with where it
/// was written. A harness kind fails here as an unknown word would, so serde stops and
/// the suite's schema check (which does not list those kinds) tells the user which
/// kinds there are, as for any other unknown kind.
pub fn declared<'de, D: Deserializer<'de>>(d: D) -> Result<Spanned<ToolErrorKind>, D::Error> {
    let kind = Spanned::<ToolErrorKind>::deserialize(d)?;
    if kind.value.declarable() {
        Ok(kind)
    } else {
        Err(de::Error::unknown_variant(
            kind.value.as_str(),
            DECLARABLE_NAMES,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names_and_the_declarable_ones_are_listed() {
        for k in ToolErrorKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(
                serde_json::from_value::<ToolErrorKind>(k.as_str().into()).unwrap(),
                k
            );
        }
        let names: Vec<&str> = ToolErrorKind::DECLARABLE
            .iter()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(names, DECLARABLE_NAMES);
    }
}
