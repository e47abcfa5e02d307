//! The rule catalogue: every rule's stable code, family, default severity and one-line
//! summary. Codes are part of the contract (`lint: {allow: […]}`, JSON, SARIF): a code is
//! never renamed or reused. docs/lint.md gives each rule's rationale and source.

use super::model::Severity;

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The stable code: `FAMILY-what`, lowercase, words joined by `-`.
    pub code: &'static str,
    /// The family (`description`, `param`, `set`, `run`; provider rules are in
    /// [`crate::lint::providers::catalogue`]).
    pub family: &'static str,
    /// The default severity.
    pub severity: Severity,
    /// What it finds, in one line.
    pub summary: &'static str,
}

const fn rule(
    code: &'static str,
    family: &'static str,
    severity: Severity,
    summary: &'static str,
) -> Rule {
    Rule {
        code,
        family,
        severity,
        summary,
    }
}

use Severity::{Error, Info, Warning};

/// Every rule, in the order of docs/lint.md.
pub const RULES: &[Rule] = &[
    rule(
        "description-missing",
        "description",
        Error,
        "The tool has no description, or an empty one.",
    ),
    rule(
        "description-restates-name",
        "description",
        Warning,
        "The description only restates the tool's name.",
    ),
    rule(
        "description-no-purpose",
        "description",
        Warning,
        "The description does not say what the tool does or returns.",
    ),
    rule(
        "description-too-long",
        "description",
        Warning,
        "The description is longer than the token budget.",
    ),
    rule(
        "description-no-when-to-use",
        "description",
        Warning,
        "A sibling tool looks alike and the description does not say when to use this one.",
    ),
    rule(
        "description-names-unknown-param",
        "param",
        Warning,
        "The description names a parameter the schema does not have.",
    ),
    rule(
        "param-no-description",
        "param",
        Warning,
        "A parameter has no description.",
    ),
    rule(
        "param-enum-unexplained",
        "param",
        Info,
        "An enum parameter's description explains none of its values.",
    ),
    rule(
        "param-format-missing",
        "param",
        Warning,
        "A parameter holds a formatted value (date, id, e-mail, URL, code…) but gives no format or example.",
    ),
    rule(
        "param-required-unmentioned",
        "param",
        Info,
        "A required parameter the tool's description never mentions.",
    ),
    rule(
        "param-missing-type",
        "param",
        Warning,
        "A parameter (or the arguments object) has no `type`.",
    ),
    rule(
        "param-free-form-object",
        "param",
        Warning,
        "An object parameter with no properties: the model must guess its keys.",
    ),
    rule(
        "param-default-undocumented",
        "param",
        Info,
        "An optional parameter that does not say what happens when it is left out.",
    ),
    rule(
        "set-duplicate-name",
        "set",
        Error,
        "Two tools have the same name.",
    ),
    rule(
        "set-confusable",
        "set",
        Warning,
        "Two tools whose names or descriptions are too alike.",
    ),
    rule(
        "set-total-tokens",
        "set",
        Warning,
        "The tool definitions together are over the token budget.",
    ),
    rule(
        "run-confused-tools",
        "run",
        Warning,
        "In a finished run the model called one tool where the case expected another.",
    ),
    rule(
        "run-param-trouble",
        "run",
        Warning,
        "In a finished run the model's calls often left a parameter missing, invalid or ungrounded.",
    ),
];

/// The rule with `code`, if there is one. Provider-acceptance rules
/// (`provider-…`) are in [`crate::lint::providers::catalogue`], not in [`RULES`].
pub fn find(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// Whether `code` names a rule (a catalogue rule, or a provider rule's `provider-` code).
pub fn is_known(code: &str) -> bool {
    find(code).is_some() || provider_rule(code).is_some()
}

/// The provider-acceptance rule with `code`, if there is one.
pub fn provider_rule(code: &str) -> Option<&'static super::providers::ProviderRule> {
    super::providers::catalogue()
        .iter()
        .find(|r| r.code == code)
}

/// The default severity of `code` (warning for a code in neither catalogue).
pub fn severity_of(code: &str) -> Severity {
    find(code).map(|r| r.severity).unwrap_or_else(|| {
        provider_rule(code)
            .and_then(|r| Severity::parse(r.severity))
            .unwrap_or(Severity::Warning)
    })
}

/// The known code closest to `code` (edit distance at most a third of its length), for
/// "did you mean".
pub fn closest(code: &str) -> Option<&'static str> {
    RULES
        .iter()
        .map(|r| r.code)
        .chain(super::providers::catalogue().iter().map(|r| r.code))
        .map(|c| (super::text::edit_distance(code, c), c))
        .filter(|(d, c)| *d <= c.len().max(3) / 3)
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/lint.md is the catalogue users read: every code, of both catalogues, is in it.
    #[test]
    fn every_code_is_documented_in_the_catalogue() {
        let doc = include_str!("../../docs/lint.md");
        let codes = RULES
            .iter()
            .map(|r| r.code)
            .chain(crate::lint::providers::catalogue().iter().map(|r| r.code));
        for code in codes {
            assert!(
                doc.contains(&format!("| `{code}` |")),
                "`{code}` has no row in docs/lint.md"
            );
        }
    }

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RULES {
            assert!(seen.insert(r.code), "{} twice", r.code);
            assert!(
                r.code.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                r.code
            );
        }
    }

    #[test]
    fn did_you_mean_finds_a_close_code() {
        assert_eq!(closest("param-no-descripton"), Some("param-no-description"));
        assert_eq!(closest("set-confusible"), Some("set-confusable"));
        assert_eq!(closest("nothing-like-it-at-all"), None);
    }
}
