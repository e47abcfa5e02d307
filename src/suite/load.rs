//! Reading a suite file: size and encoding checks, YAML parsing with budgets, and
//! turning parser errors into [`Diagnostic`]s.
//!
//! Hostile input is refused before it can cost much: files over [`MAX_SUITE_BYTES`],
//! invalid UTF-8, alias-expansion bombs and deep nesting (serde-saphyr budgets).

use std::path::Path;

use super::error::{Diagnostic, SuiteError};
use super::model::SuiteFile;
use crate::util::parse_error::{self, Kind, source_line};
use crate::util::yaml;

/// The largest suite file accepted (16 MiB; real suites are a few hundred KiB at most).
pub const MAX_SUITE_BYTES: u64 = 16 * 1024 * 1024;

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
        .map_err(|e| SuiteError::Invalid(json_problems(&e, text, path)))
}

/// Every problem of a JSON suite that serde_json refused with `e`.
fn json_problems(e: &serde_json::Error, text: &str, path: &Path) -> Vec<Diagnostic> {
    let (line, column) = (e.line() as u32, e.column() as u32);
    let plain = parse_error::json(e);
    let mut message = plain.message.clone();
    if plain.kind == Kind::Syntax
        && let Some(note) = unclosed_note(parse_error::unclosed_json(text, line, column), line)
    {
        message.push_str(&note);
    }
    let first = Diagnostic {
        file: path.to_path_buf(),
        line,
        column,
        field: String::new(),
        message,
        hint: Some(plain.hint),
        source_line: text
            .lines()
            .nth((line as usize).saturating_sub(1))
            .map(|l| l.chars().take(200).collect()),
    };
    if plain.kind == Kind::Shape {
        return with_shape_problems(first, text, path);
    }
    vec![first]
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
    serde_saphyr::from_str_with_options(text, yaml::options_for(text.len()))
        .map_err(|e| SuiteError::Invalid(yaml_problems(&e, text, path)))
}

/// Every problem of a YAML suite that the parser refused with `e`: a syntax error with
/// the bracket it is inside of, every duplicate key, or every shape problem of the file.
fn yaml_problems(e: &serde_saphyr::Error, text: &str, path: &Path) -> Vec<Diagnostic> {
    let (line, column) = e
        .location()
        .map(|l| (l.line() as u32, l.column() as u32))
        .unwrap_or((0, 0));
    let plain = parse_error::yaml(e);
    let diag = |line: u32, column: u32, message: String| Diagnostic {
        file: path.to_path_buf(),
        line,
        column,
        field: String::new(),
        message,
        hint: Some(plain.hint.clone()),
        source_line: source_line(text, line),
    };
    match plain.kind {
        Kind::Syntax => {
            let mut message = plain.message.clone();
            if let Some(note) = unclosed_note(parse_error::unclosed_yaml(text, line, column), line)
            {
                message.push_str(&note);
            }
            vec![diag(line, column, message)]
        }
        Kind::Document
            if matches!(
                e.without_snippet(),
                serde_saphyr::Error::DuplicateMappingKey { .. }
            ) =>
        {
            let dups = parse_error::duplicate_keys(text);
            if dups.is_empty() {
                return vec![diag(line, column, plain.message.clone())];
            }
            dups.into_iter()
                .map(|(key, l, c, first)| {
                    diag(
                        l,
                        c,
                        format!("duplicate key `{key}` (first at line {first})"),
                    )
                })
                .collect()
        }
        Kind::Document => vec![diag(line, column, plain.message.clone())],
        Kind::Shape => with_shape_problems(diag(line, column, plain.message.clone()), text, path),
    }
}

/// ` (inside the `{` opened on line 8, column 13: is it closed?)` when the bracket that is
/// open where the parser stopped was opened on an earlier line.
fn unclosed_note(open: Option<(u32, u32, char)>, line: u32) -> Option<String> {
    let (l, c, ch) = open?;
    (l < line)
        .then(|| format!(" (inside the `{ch}` opened on line {l}, column {c}: is it closed?)"))
}

/// The parser's first shape problem `first` and every other one the schema check finds;
/// `first` is kept unless a schema problem stands at the same place.
fn with_shape_problems(first: Diagnostic, text: &str, path: &Path) -> Vec<Diagnostic> {
    let Some(mut all) = super::shape::shape_problems(text, path) else {
        return vec![first];
    };
    if !all.iter().any(|d| d.line == first.line && d.line > 0) {
        all.push(first);
        all.sort_by_key(|d| (d.line, d.column));
    }
    all
}
