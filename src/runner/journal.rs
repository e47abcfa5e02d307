//! The trial journal: `trials.jsonl`, one line per trial, written and flushed as each
//! trial finishes so an interrupted run loses nothing it already did.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::score::TrialRecord;

/// Appends trial records to a JSONL file.
pub struct Journal {
    out: BufWriter<File>,
}

impl Journal {
    /// Create (or truncate) `path`.
    pub fn create(path: &Path) -> std::io::Result<Journal> {
        Ok(Journal {
            out: BufWriter::with_capacity(1 << 16, File::create(path)?),
        })
    }

    /// Append one record and hand it to the OS (one write call per trial; a replay of
    /// 10,000 trials spends a few milliseconds on it).
    pub fn append(&mut self, record: &TrialRecord) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// Read a journal back (for reports and tests).
pub fn read(path: &Path) -> std::io::Result<Vec<TrialRecord>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(std::io::Error::other))
        .collect()
}
