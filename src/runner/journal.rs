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

/// Read a journal back (reports, compare, resume). A torn last line (a write cut short
/// by a crash) is skipped; any other line that is not a trial record is an error naming
/// its line number, so a damaged journal is never silently shortened.
pub fn read(path: &Path) -> std::io::Result<Vec<TrialRecord>> {
    let text = std::fs::read_to_string(path)?;
    let torn_tail = !text.is_empty() && !text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TrialRecord>(line) {
            Ok(t) => out.push(t),
            Err(_) if torn_tail && i + 1 == lines.len() => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("line {}: not a trial record: {e}", i + 1),
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_tail_is_skipped_and_a_bad_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trials.jsonl");
        std::fs::write(&path, "").unwrap();
        assert!(read(&path).unwrap().is_empty());
        std::fs::write(&path, "{\"case_id\": \"a\", \"kin").unwrap();
        assert!(read(&path).unwrap().is_empty());
        std::fs::write(&path, "\nnot json\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.starts_with("line 2: not a trial record"), "{e}");
    }
}
