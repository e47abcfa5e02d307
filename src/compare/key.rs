//! Which cells of the two sides match: the [`CellKey`] of dimensions that must be equal,
//! and the [`CellId`] each side's cell shows.

use std::fmt;

use serde::Serialize;

/// Which dimensions must be equal for a baseline cell to match a candidate cell. A
/// dimension left out is the one being compared: its values may differ between the sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct CellKey {
    /// Match on target.
    pub target: bool,
    /// Match on description variant.
    pub variant: bool,
    /// Match on tool_choice.
    pub tool_choice: bool,
    /// Match on the stream mode (streamed or not); left out of the JSON when kept, so
    /// comparisons of runs without streaming print as before.
    #[serde(skip_serializing_if = "is_true")]
    pub stream: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl CellKey {
    /// Match on all three dimensions (two runs of the same matrix).
    pub const ALL: CellKey = CellKey {
        target: true,
        variant: true,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the target (a model against another model).
    pub const IGNORE_TARGET: CellKey = CellKey {
        target: false,
        variant: true,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the variant (one description variant against another).
    pub const IGNORE_VARIANT: CellKey = CellKey {
        target: true,
        variant: false,
        tool_choice: true,
        stream: true,
    };
    /// Ignore the stream mode (streamed answers against unstreamed ones).
    pub const IGNORE_STREAM: CellKey = CellKey {
        target: true,
        variant: true,
        tool_choice: true,
        stream: false,
    };

    /// This key, ignoring the stream mode as well.
    pub fn across_stream(self) -> CellKey {
        CellKey {
            stream: false,
            ..self
        }
    }
}

impl Default for CellKey {
    fn default() -> Self {
        CellKey::ALL
    }
}

/// One side's cell. A dimension the [`CellKey`] ignores shows that side's values, joined
/// with `+` if the cell holds several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellId {
    /// Target(s).
    pub target: String,
    /// Variant(s).
    pub variant: String,
    /// tool_choice(s).
    pub tool_choice: String,
    /// `stream` when the cell's trials were streamed, `no stream` when not, both joined
    /// with `+` when the cell holds both; empty (and absent from the JSON) when no
    /// trial on this side was streamed, as before the axis existed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stream: String,
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} × {} × {}",
            self.target, self.variant, self.tool_choice
        )?;
        if !self.stream.is_empty() {
            write!(f, " × {}", self.stream)?;
        }
        Ok(())
    }
}
