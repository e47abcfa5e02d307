//! Reading a suite file: size and encoding checks, YAML parsing with budgets, and
//! turning parser errors into [`Diagnostic`]s.
//!
//! Hostile input is refused before it can cost much: files over [`MAX_SUITE_BYTES`],
//! invalid UTF-8, alias-expansion bombs and deep nesting (serde-saphyr budgets).

use std::path::Path;

use serde_saphyr::{Budget, Options};

use super::error::{Diagnostic, SuiteError};
use super::model::SuiteFile;

/// The largest suite file accepted (16 MiB; real suites are a few hundred KiB at most).
pub const MAX_SUITE_BYTES: u64 = 16 * 1024 * 1024;

/// Deepest YAML nesting accepted; JSON Schemas of real tools stay far below it.
pub const MAX_DEPTH: usize = 64;

/// Read `path` and parse it into the raw model, with the source text kept for messages
/// (and hashed: it is the file's bytes).
pub fn read_suite_file(path: &Path) -> Result<(SuiteFile, String), SuiteError> {
    let read_err = |source| SuiteError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if meta.len() > MAX_SUITE_BYTES {
        return Err(SuiteError::Invalid(vec![Diagnostic {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: String::new(),
            message: format!(
                "suite file is {} bytes, over the limit of {} bytes",
                meta.len(),
                MAX_SUITE_BYTES
            ),
            hint: Some("split the suite into several files".into()),
            source_line: None,
        }]));
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let good = &e.as_bytes()[..valid];
            let line = good.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
            let column = String::from_utf8_lossy(&good[line_start..]).chars().count() as u32 + 1;
            return Err(SuiteError::Invalid(vec![Diagnostic {
                file: path.to_path_buf(),
                line,
                column,
                field: String::new(),
                message: format!("the file is not valid UTF-8 (byte offset {valid})"),
                hint: Some("save the suite as UTF-8".into()),
                source_line: None,
            }]));
        }
    };
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let model = if is_json {
        parse_json(&text, path)?
    } else {
        parse_yaml(&text, path)?
    };
    Ok((model, text))
}

/// Parse a suite written as JSON (`.json`; what `toolgauge import` writes for big
/// benchmarks, read ten times faster than YAML). serde_json locates syntax and shape
/// errors; checks of meaning report the field path without a line.
pub fn parse_json(text: &str, path: &Path) -> Result<SuiteFile, SuiteError> {
    let read = || super::span::without_spans(|| serde_json::from_str::<SuiteFile>(text));
    // Identical case tools are read once (see `model::CaseTools`). A tool that does not
    // parse is then reported without its position, so the file is read again without
    // sharing to say where the error is.
    super::share::sharing(read)
        .or_else(|_| read())
        .map_err(|e| {
            let (line, column) = (e.line() as u32, e.column() as u32);
            let msg = e.to_string();
            // serde_json appends " at line L column C"; the diagnostic shows it already.
            let message = msg
                .rsplit_once(" at line ")
                .map_or(msg.as_str(), |(m, _)| m)
                .to_string();
            SuiteError::Invalid(vec![Diagnostic {
                file: path.to_path_buf(),
                line,
                column,
                field: String::new(),
                message,
                hint: Some(
                    "the file is read as JSON (it ends in .json); see docs/suite-format.md".into(),
                ),
                source_line: text
                    .lines()
                    .nth((line as usize).saturating_sub(1))
                    .map(|l| l.chars().take(200).collect()),
            }])
        })
}

/// Parse suite YAML text; `path` is only used in messages.
pub fn parse_yaml(text: &str, path: &Path) -> Result<SuiteFile, SuiteError> {
    if text.trim().is_empty() {
        return Err(SuiteError::Invalid(vec![Diagnostic {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: String::new(),
            message: "the suite file is empty".into(),
            hint: Some(
                "a suite needs at least `tools:` and `cases:`; see docs/suite-format.md".into(),
            ),
            source_line: None,
        }]));
    }
    serde_saphyr::from_str_with_options(text, yaml_options_for(text.len()))
        .map_err(|e| SuiteError::Invalid(vec![yaml_diagnostic(&e, text, path)]))
}

/// YAML options: strict booleans and leading zeros kept as text, so `country: NO` and
/// `zip: 010` stay strings; budgets refuse bombs and deep nesting.
pub fn yaml_options() -> Options {
    yaml_options_for(0)
}

/// [`yaml_options`] for a document of `len` bytes. The node budget is what stops an
/// alias bomb (a few bytes that expand into millions of nodes), so it stays at 250,000
/// for small files and grows only with the text: a node takes at least two bytes of
/// plain YAML, so `len / 2` nodes can not come from expansion. Imported benchmarks are
/// big plain documents (BFCL's live_multiple is about 5 MB).
pub fn yaml_options_for(len: usize) -> Options {
    let mut budget = Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.max_aliases = 10_000;
    let nodes = (len / 2).max(250_000);
    budget.max_nodes = nodes;
    budget.max_events = nodes.saturating_mul(4);
    let mut options = Options::default();
    options.budget = Some(budget);
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.with_snippet = false;
    options
}

fn yaml_diagnostic(e: &serde_saphyr::Error, text: &str, path: &Path) -> Diagnostic {
    let (line, column) = e
        .location()
        .map(|l| (l.line() as u32, l.column() as u32))
        .unwrap_or((0, 0));
    let raw = e.without_snippet().to_string();
    let first = raw.lines().next().unwrap_or("invalid YAML").trim();
    // The location is shown separately; drop the parser's " at line N, column M ..." tail.
    let message = first
        .find(" at line ")
        .map_or(first, |i| &first[..i])
        .to_string();
    let message = if message.starts_with("budget breached") {
        format!("the document is too large or too deeply nested ({message})")
    } else if let Some(ty) = message.strip_prefix("invalid ") {
        let want = match ty {
            "u32" | "u64" | "usize" | "i64" => "a whole number",
            "f64" => "a number",
            "bool" => "true or false",
            other => other,
        };
        format!("invalid value: expected {want}")
    } else {
        message
    };
    let hint = hint_for(&message);
    Diagnostic {
        file: path.to_path_buf(),
        line,
        column,
        field: String::new(),
        message,
        hint,
        source_line: source_line(text, line),
    }
}

fn hint_for(message: &str) -> Option<String> {
    let m = message.to_lowercase();
    if m.contains("unknown field") || m.contains("unknown variant") {
        Some(
            "check the spelling; the accepted keys are listed above and in docs/suite-format.md"
                .into(),
        )
    } else if m.contains("budget")
        || m.contains("alias")
        || m.contains("depth")
        || m.contains("recursion")
    {
        Some("the file is too large or too deeply nested for a suite; anchors that expand into huge documents are refused".into())
    } else if m.contains("missing field") {
        Some("add the field; see docs/suite-format.md".into())
    } else if m.contains("invalid type") || m.contains("invalid value") {
        Some("check the value's type against docs/suite-format.md (quote text that looks like a number or boolean)".into())
    } else {
        Some("fix the YAML here: check indentation, that `-` items sit under a key, and quoting (quote text containing `: ` or starting with `{`, `[`, `*`, `&`)".into())
    }
}

/// The text of 1-based `line`, if it exists and is short enough to show.
pub fn source_line(text: &str, line: u32) -> Option<String> {
    if line == 0 {
        return None;
    }
    text.lines()
        .nth(line as usize - 1)
        .filter(|l| l.len() <= 400)
        .map(str::to_string)
}
