//! Errors from loading a suite: where (file, line, column, field), what, and a hint.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 when the problem has no single place, e.g. an empty file).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The field path, e.g. `cases[2].expect.calls[0].args.city`.
    pub field: String,
    /// What is wrong, with the user's values.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// The source line, for the caret display.
    pub source_line: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        if self.line > 0 {
            writeln!(f, "{file}:{}:{}: {}", self.line, self.column, self.message)?;
        } else {
            writeln!(f, "{file}: {}", self.message)?;
        }
        if let Some(src) = &self.source_line {
            let gutter = self.line.to_string().len();
            writeln!(f, "{:gutter$} |", "")?;
            writeln!(f, "{} | {}", self.line, src)?;
            let caret_at = src
                .chars()
                .take(self.column.saturating_sub(1) as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect::<String>();
            writeln!(f, "{:gutter$} | {caret_at}^", "")?;
        }
        if !self.field.is_empty() {
            writeln!(f, "  field: {}", self.field)?;
        }
        if let Some(hint) = &self.hint {
            writeln!(f, "  hint: {hint}")?;
        }
        Ok(())
    }
}

/// Why a suite could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("failed to read suite `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file was read but is not a valid suite.
    #[error("{}", render(.0))]
    Invalid(Vec<Diagnostic>),
}

fn render(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for (i, d) in diags.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&d.to_string());
    }
    let n = diags.len();
    out.push_str(&format!(
        "{n} problem{} found; the suite was not loaded",
        if n == 1 { "" } else { "s" }
    ));
    out
}
