//! The collector of located problems: every check reports into one [`Checker`], so a
//! suite's problems come out together, each with its file, line, column, field and hint.

use std::path::Path;

use crate::suite::error::Diagnostic;
use crate::util::parse_error::source_line;

/// Collects the located problems of one suite file while it compiles.
pub(in crate::suite) struct Checker<'a> {
    /// The suite file, named in every problem.
    pub(super) path: &'a Path,
    /// Its text, for the source line each problem shows and for locating keys.
    pub(super) text: &'a str,
    /// The problems so far, in the order they were found.
    pub(super) diags: Vec<Diagnostic>,
    /// The tool lists of the MCP servers the suite names, listed before compiling.
    pub(in crate::suite) servers: &'a crate::suite::servers::ServerTools,
}

impl Checker<'_> {
    /// How many problems were reported so far.
    pub(in crate::suite) fn diag_count(&self) -> usize {
        self.diags.len()
    }

    pub(in crate::suite) fn report(
        &mut self,
        at: (u32, u32),
        field: impl Into<String>,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.diags.push(Diagnostic {
            file: self.path.to_path_buf(),
            line: at.0,
            column: at.1,
            field: field.into(),
            message: message.into(),
            hint,
            source_line: source_line(self.text, at.0),
        });
    }

    /// A located problem to report later (when the run knows whether it is one).
    pub(in crate::suite) fn diagnostic(
        &self,
        at: (u32, u32),
        field: impl Into<String>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Diagnostic {
        Diagnostic {
            file: self.path.to_path_buf(),
            line: at.0,
            column: at.1,
            field: field.into(),
            message: message.into(),
            hint,
            source_line: source_line(self.text, at.0),
        }
    }
}
