//! Provider acceptance: what each provider refuses or silently changes in a tool
//! definition (name patterns, schema keywords, sizes).
//!
//! PLACEHOLDER: the branch `lint-rules` fills this file in (issue 32). Only the body of
//! [`check`] and [`CODES`] change when it merges; the shape of [`ProviderIssue`] and the
//! adapter in [`super::provider_findings`] stay as they are.

use serde_json::Value;

/// One thing a provider does not accept in a tool definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderIssue {
    /// The rule's stable code (`provider-…`).
    pub code: &'static str,
    /// The provider (`openai`, `anthropic`, `gemini`, …).
    pub provider: &'static str,
    /// `error`, `warning` or `info`.
    pub severity: &'static str,
    /// A JSON pointer into the parameters schema; `""` for the tool itself.
    pub pointer: String,
    /// What is wrong, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: String,
    /// Where the rule comes from (the provider's documentation, named in words).
    pub source: &'static str,
}

/// The codes of the provider rules, for `lint: {allow: […]}`.
pub const CODES: &[&str] = &[];

/// The provider issues of one tool definition (none until `lint-rules` merges).
pub fn check(_name: &str, _description: &str, _parameters: &Value) -> Vec<ProviderIssue> {
    Vec::new()
}
