//! Placeholders left to fill in: `toolgauge import mcp` writes cases whose prompts and
//! arguments are `TODO(fill in): …` values, and loading reports each one, with its line,
//! until it is replaced, so a half-written suite can never be run and scored.

use super::compile::Checker;
use super::error::Diagnostic;

/// The marker that starts a placeholder value.
pub const PLACEHOLDER: &str = "TODO(fill in)";

/// The start of every placeholder message (how [`is_placeholder`] knows them).
const MESSAGE: &str = "placeholder to fill in";

/// Report every line of `text` holding a placeholder outside a comment.
pub(super) fn report(c: &mut Checker<'_>, text: &str) {
    if !text.contains(PLACEHOLDER) {
        return;
    }
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find(PLACEHOLDER) else {
            continue;
        };
        // A YAML comment starts the line or follows a space; a `#` inside a quoted
        // value before the marker is rare enough to read as a comment here too.
        let before = &line[..at];
        if before.trim_start().starts_with('#') || before.contains(" #") {
            continue;
        }
        let key = before
            .trim()
            .trim_start_matches("- ")
            .trim_end_matches(|ch: char| ch == '"' || ch == '\'' || ch.is_whitespace())
            .trim_end_matches(':')
            .trim_matches(|ch: char| ch == '"' || ch == '\'')
            .to_string();
        let value: String = line[at..]
            .trim_end()
            .trim_end_matches(['"', '\''])
            .chars()
            .take(160)
            .collect();
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // The value starts at its opening quote, where a YAML parser would point.
        let start = if before.ends_with(['"', '\'']) {
            at - 1
        } else {
            at
        };
        let column = u32::try_from(line[..start].chars().count() + 1).unwrap_or(u32::MAX);
        c.report(
            (line_no, column),
            key,
            format!("{MESSAGE}: {value}"),
            Some("replace the whole value with the real one (a prompt, or the argument the model should pass)".into()),
        );
    }
}

/// Whether `d` is a placeholder report.
pub fn is_placeholder(d: &Diagnostic) -> bool {
    d.message.starts_with(MESSAGE)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn placeholders_in_values_are_reported_and_comments_are_not() {
        let text = "# TODO(fill in): a comment\ntools:\n  - name: t\n    description: d # TODO(fill in) here too\n    parameters: {type: object}\ncases:\n  - id: c\n    kind: should_call\n    prompt: \"TODO(fill in): a request\"\n    expect:\n      calls:\n        - tool: t\n          args:\n            x: TODO(fill in) plain\n";
        let Err(crate::suite::SuiteError::Invalid(diags)) =
            crate::suite::load_str(text, Path::new("s.yaml"))
        else {
            panic!("placeholders must refuse the suite");
        };
        let found: Vec<(u32, u32, &str, &str)> = diags
            .iter()
            .map(|d| (d.line, d.column, d.field.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    9,
                    13,
                    "prompt",
                    "placeholder to fill in: TODO(fill in): a request"
                ),
                (14, 16, "x", "placeholder to fill in: TODO(fill in) plain"),
            ]
        );
        assert!(diags.iter().all(super::is_placeholder));
    }
}
