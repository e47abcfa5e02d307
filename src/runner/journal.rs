//! The trial journal: `trials.jsonl`, one line per trial, written and flushed as each
//! trial finishes so an interrupted run loses nothing it already did.
//!
//! [`load`] is the one reader of journals: `report`, `compare` and `run --resume` all go
//! through it, so they agree on what a journal holds ([`read`] is the same without the
//! warnings). Its rules:
//!
//! - **Torn last line.** A last line with no newline that is not a whole trial record
//!   is a write cut short by a crash: it is skipped and reported
//!   ([`JournalContents::torn_line`]); `run --resume` runs that trial again.
//! - **Damaged line.** Any other line that is not a trial record (bad JSON, invalid
//!   UTF-8, a record missing fields) is an error naming its line number: a journal that
//!   was edited or corrupted is never silently shortened.
//! - **Duplicates.** Two lines with the same trial identity ([`TrialId`]: case, target,
//!   variant, tool_choice and repeat) are one trial. The later line wins, since the
//!   journal is append-only and the later line is the newer result (a re-run of an
//!   errored trial), except that an error never replaces a scored (pass or fail)
//!   trial, so no scored trial is lost. The trial keeps the position of its first line.
//!   Duplicates are reported ([`JournalContents::duplicates`]).
//!
//! - **Format.** Every line this version writes starts with `"format": N`: 2
//!   ([`TRIALS_FORMAT`]; format 2 added loop trials, `episode`), or 3 for a loop trial
//!   whose conversation is stored once ([`line::COMPACT_FORMAT`]: its `messages` keep
//!   the case's own, the rest is rebuilt from its rounds on reading; see
//!   [`crate::score::line`]). A line without it is format 1, written before loops
//!   existed, and reads as a single-turn trial. A line of a newer format is an error
//!   naming its line and saying to upgrade, never misread.
//!
//! [`rewrite`] replaces a journal atomically (a temporary file renamed over it), so a
//! crash while `run --resume` compacts the journal leaves the old one or the new one,
//! never a truncated one.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::score::{TrialRecord, Verdict, line};

/// The format of the lines this version writes (see the module documentation).
pub const TRIALS_FORMAT: u32 = 2;

/// The format a line declares as its first key (`{"format":N,...`); 1 when it declares
/// none (a line written before formats were numbered).
fn line_format(text: &str) -> Result<u32, String> {
    let Some(rest) = text.strip_prefix("{\"format\":") else {
        return Ok(1);
    };
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse::<u32>().map_err(|_| {
        format!(
            "its `format` is not a whole number: `{}`",
            &rest[..rest.len().min(20)]
        )
    })
}

pub use crate::score::record::TrialId;

/// The identity of `t` (see [`TrialId`]).
pub fn trial_id(t: &TrialRecord) -> TrialId {
    TrialId::of(t)
}

/// Why a journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be read or written.
    #[error("failed to {action} `{path}`: {source}")]
    Io {
        /// What was being done ("read", "write", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line other than a torn last one is not a trial record.
    #[error("`{path}` line {line} is damaged: {message}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

impl JournalError {
    /// True when the journal does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, JournalError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// What [`load`] found in a journal.
#[derive(Debug, Default)]
pub struct JournalContents {
    /// One record per trial identity, in the order of each trial's first line.
    pub trials: Vec<TrialRecord>,
    /// The line number of a torn last line that was skipped.
    pub torn_line: Option<usize>,
    /// Lines whose trial identity an earlier line already had: `(line, identity)`.
    pub duplicates: Vec<(usize, TrialId)>,
}

impl JournalContents {
    /// One sentence per irregularity (torn last line, duplicate lines), naming `path`;
    /// empty for a clean journal. The commands print them as warnings.
    pub fn warnings(&self, path: &Path) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(line) = self.torn_line {
            out.push(format!(
                "`{}` ends with a torn line (line {line}, a write cut short); that trial is not counted and `toolgauge run --resume` runs it again",
                path.display()
            ));
        }
        if let Some((line, id)) = self.duplicates.first() {
            out.push(format!(
                "`{}` has {} duplicate line(s) (first: line {line}, trial {} × {} × {} × {} #{}); each trial is counted once: the later line wins, but an error never replaces a scored trial",
                path.display(),
                self.duplicates.len(),
                id.case_id,
                id.target,
                id.variant,
                id.tool_choice,
                id.repeat
            ));
        }
        out
    }
}

/// Read the journal at `path` by the rules in the module documentation, with what was
/// irregular about it ([`JournalContents::warnings`]).
pub fn load(path: &Path) -> Result<JournalContents, JournalError> {
    let bytes = std::fs::read(path).map_err(|source| JournalError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes, path)
}

/// The trials of the journal at `path` ([`load`] without its warnings): one record per
/// trial, a torn last line skipped, a damaged line an `InvalidData` error naming it.
pub fn read(path: &Path) -> std::io::Result<Vec<TrialRecord>> {
    load(path).map(|c| c.trials).map_err(|e| match e {
        JournalError::Io { source, .. } => source,
        damaged => std::io::Error::new(std::io::ErrorKind::InvalidData, damaged.to_string()),
    })
}

/// [`load`] on bytes already in memory (`path` names them in errors).
pub fn parse(bytes: &[u8], path: &Path) -> Result<JournalContents, JournalError> {
    let mut out = JournalContents::default();
    let mut index: HashMap<TrialId, usize> = HashMap::new();
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((i, raw)) = lines.next() {
        let line = i + 1;
        // The segment after the last newline: empty for a whole journal, else a last
        // line whose newline was never written.
        let unterminated = lines.peek().is_none();
        let damaged = |message: String| JournalError::Damaged {
            path: path.to_path_buf(),
            line,
            message,
        };
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| format!("not valid UTF-8 ({e})"))
            .and_then(|text| {
                let text = text.trim();
                if text.is_empty() {
                    return Ok(None);
                }
                let format = line_format(text)?;
                if format > line::COMPACT_FORMAT {
                    return Err(format!(
                        "written in trials format {format} by a newer toolgauge; this version reads formats 1 to {}: upgrade toolgauge to read it",
                        line::COMPACT_FORMAT
                    ));
                }
                let mut record = serde_json::from_str::<TrialRecord>(text)
                    .map_err(|e| format!("not a trial record: {e}"))?;
                if format >= line::COMPACT_FORMAT {
                    line::rebuild_conversation(&mut record);
                }
                Ok(Some(record))
            });
        let record = match parsed {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) if unterminated => {
                out.torn_line = Some(line);
                break;
            }
            Err(message) => return Err(damaged(message)),
        };
        let id = trial_id(&record);
        match index.get(&id) {
            None => {
                index.insert(id, out.trials.len());
                out.trials.push(record);
            }
            Some(&at) => {
                let kept = &mut out.trials[at];
                let scored = |t: &TrialRecord| t.verdict != Verdict::Error;
                if scored(&record) || !scored(kept) {
                    *kept = record;
                }
                out.duplicates.push((line, id));
            }
        }
    }
    Ok(out)
}

/// Appends trial records to a JSONL file.
#[derive(Debug)]
pub struct Journal {
    out: BufWriter<File>,
    /// The record being written, serialised: kept from trial to trial so appending
    /// allocates nothing once it has grown to the size of a record.
    line: Vec<u8>,
}

impl Journal {
    /// Create (or truncate) `path`.
    pub fn create(path: &Path) -> std::io::Result<Journal> {
        Ok(Journal::over(File::create(path)?))
    }

    /// Create `path`, which must not exist: the exclusive claim of a run directory by
    /// the run that writes it.
    pub fn create_new(path: &Path) -> std::io::Result<Journal> {
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Journal::over(file))
    }

    /// Open `path` for appending (creating it if missing).
    pub fn append_to(path: &Path) -> std::io::Result<Journal> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Journal::over(file))
    }

    fn over(file: File) -> Journal {
        Journal {
            out: BufWriter::with_capacity(1 << 16, file),
            line: Vec::new(),
        }
    }

    /// Append one record and hand it to the OS (one write call per trial; a replay of
    /// 10,000 trials spends a few milliseconds on it).
    pub fn append(&mut self, record: &TrialRecord) -> std::io::Result<()> {
        // The format is the line's first key, so a reader can tell it without parsing
        // the record: `{"format":2,` then the record's own fields.
        self.line.clear();
        // A loop trial's conversation is stored once: its line keeps the case's
        // messages, and `parse` rebuilds the rest from the rounds (`score::line`).
        let format = match line::compact_context(record) {
            Some(keep) => {
                serde_json::to_writer(&mut self.line, &line::TrialLine::new(record, keep))?;
                line::COMPACT_FORMAT
            }
            None => {
                serde_json::to_writer(&mut self.line, record)?;
                TRIALS_FORMAT
            }
        };
        write!(self.out, "{{\"format\":{format},")?;
        self.out.write_all(self.line.get(1..).unwrap_or_default())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// Flush and hand the file to the disk (`fsync`).
    fn sync(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }
}

/// Replace the journal at `path` with `trials`, atomically: they are written to a
/// temporary file beside it, synced, and renamed over it. Returns the journal opened
/// for appending the trials still to run.
pub fn rewrite(path: &Path, trials: &[TrialRecord]) -> Result<Journal, JournalError> {
    let io = |action, source| JournalError::Io {
        action,
        path: path.to_path_buf(),
        source,
    };
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let mut journal = Journal::create(&tmp)?;
        for t in trials {
            journal.append(t)?;
        }
        journal.sync()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("rewrite", e));
    }
    // The rename is durable once the directory is synced (best effort: not every
    // platform lets a directory be opened).
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Journal::append_to(path).map_err(|e| io("open", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::calls::Reason;
    use crate::provider::ToolChoice;

    fn record(case: &str, repeat: u32, verdict: Verdict) -> TrialRecord {
        let mut reasons = Vec::new();
        if verdict == Verdict::Error {
            reasons.push(Reason::new("provider_error", "timed out".to_string()));
        }
        TrialRecord {
            judge: Vec::new(),
            case_id: case.into(),
            kind: crate::suite::CaseKind::ShouldCall,
            tags: Vec::new(),
            target: "scripted:oracle".into(),
            variant: "v".into(),
            tool_choice: ToolChoice::Auto,
            repeat,
            stream: false,
            messages: Vec::new(),
            response: None,
            checks: None,
            verdict,
            reasons,
            cost_usd: None,
            distractors: None,
            episode: None,
        }
    }

    /// A line as journals before formats were numbered wrote it (format 1).
    fn line(t: &TrialRecord) -> String {
        serde_json::to_string(t).unwrap() + "\n"
    }

    /// A line as this version writes it: the format first, then the record's fields.
    fn line2(t: &TrialRecord) -> String {
        let json = serde_json::to_string(t).unwrap();
        format!("{{\"format\":2,{}\n", &json[1..])
    }

    #[test]
    fn lines_carry_the_format_first_and_old_lines_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trials.jsonl");
        let a = record("a", 0, Verdict::Pass);
        let b = record("b", 0, Verdict::Fail);
        let mut j = Journal::create(&path).unwrap();
        j.append(&a).unwrap();
        drop(j);
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written.starts_with("{\"format\":2,\"case_id\":\"a\""),
            "{written}"
        );
        // A format-1 line (no `format`) and a format-2 line read alike.
        let mixed = line(&b) + &written;
        let got = parse_str(&mixed).unwrap().trials;
        assert_eq!(got, vec![b, a]);
    }

    #[test]
    fn a_newer_format_is_refused_with_its_line_and_how_to_fix() {
        let a = record("a", 0, Verdict::Pass);
        let json = serde_json::to_string(&a).unwrap();
        let newer = format!("{}{{\"format\":4,{}\n", line(&a), &json[1..]);
        let e = parse_str(&newer).unwrap_err().to_string();
        assert!(
            e.contains("line 2 is damaged: written in trials format 4 by a newer toolgauge; this version reads formats 1 to 3: upgrade toolgauge"),
            "{e}"
        );
        let bad = format!("{{\"format\":x,{}\n", &json[1..]);
        let e = parse_str(&bad).unwrap_err().to_string();
        assert!(
            e.contains("line 1 is damaged: its `format` is not a whole number"),
            "{e}"
        );
    }

    fn parse_str(text: &str) -> Result<JournalContents, JournalError> {
        parse(text.as_bytes(), Path::new("trials.jsonl"))
    }

    #[test]
    fn an_empty_journal_holds_no_trial() {
        let c = parse_str("").unwrap();
        assert!(c.trials.is_empty() && c.torn_line.is_none() && c.duplicates.is_empty());
        assert!(c.warnings(Path::new("j")).is_empty());
    }

    #[test]
    fn a_torn_tail_is_skipped_and_reported_with_its_line() {
        let a = record("a", 0, Verdict::Pass);
        let text = line(&a) + "{\"case_id\": \"b\", \"kin";
        let c = parse_str(&text).unwrap();
        assert_eq!(c.trials.len(), 1);
        assert_eq!(c.torn_line, Some(2));
        let w = c.warnings(Path::new("out/trials.jsonl"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("`out/trials.jsonl` ends with a torn line (line 2"),
            "{w:?}"
        );
        // A tail cut inside a multi-byte character is torn too, not damaged.
        let mut bytes = line(&a).into_bytes();
        bytes.extend_from_slice(&"{\"case_id\": \"北".as_bytes()[..15]);
        let c = parse(&bytes, Path::new("j")).unwrap();
        assert_eq!((c.trials.len(), c.torn_line), (1, Some(2)));
        // A whole record whose newline was not written yet is a trial, not torn.
        let text = line(&a) + line(&record("b", 0, Verdict::Fail)).trim_end();
        let c = parse_str(&text).unwrap();
        assert_eq!((c.trials.len(), c.torn_line), (2, None));
    }

    #[test]
    fn a_bad_middle_line_is_an_error_with_its_number() {
        let a = line(&record("a", 0, Verdict::Pass));
        let e = parse_str(&format!("{a}\nnot json\n{a}")).unwrap_err();
        assert!(matches!(e, JournalError::Damaged { line: 3, .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("`trials.jsonl` line 3 is damaged: not a trial record"),
            "{e}"
        );
        // A terminated bad last line was written whole: damaged, not torn.
        let e = parse_str(&format!("{a}{{\"case_id\": 1}}\n")).unwrap_err();
        assert!(matches!(e, JournalError::Damaged { line: 2, .. }), "{e}");
        let mut bytes = a.clone().into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(a.as_bytes());
        let e = parse(&bytes, Path::new("j")).unwrap_err();
        assert!(
            e.to_string().contains("line 2 is damaged: not valid UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn duplicates_count_once_the_later_wins_but_never_an_error_over_a_score() {
        let pass = record("a", 0, Verdict::Pass);
        let fail = record("a", 0, Verdict::Fail);
        let error = record("a", 0, Verdict::Error);
        let other = record("a", 1, Verdict::Pass);
        // error, then other, then a re-run that failed: the failure replaces the error
        // in the first trial's place.
        let c = parse_str(&(line(&error) + &line(&other) + &line(&fail))).unwrap();
        assert_eq!(c.trials.len(), 2);
        assert_eq!(c.trials[0].verdict, Verdict::Fail);
        assert_eq!(c.trials[1].repeat, 1);
        assert_eq!(c.duplicates.len(), 1);
        assert_eq!(c.duplicates[0].0, 3);
        // A later scored copy wins over an earlier one.
        let c = parse_str(&(line(&pass) + &line(&fail))).unwrap();
        assert_eq!(c.trials[0].verdict, Verdict::Fail);
        // A later error never replaces a score.
        let c = parse_str(&(line(&pass) + &line(&error) + &line(&error))).unwrap();
        assert_eq!(c.trials.len(), 1);
        assert_eq!(c.trials[0].verdict, Verdict::Pass);
        let w = c.warnings(Path::new("j"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with(
                "`j` has 2 duplicate line(s) (first: line 2, trial a × scripted:oracle × v × auto #0)"
            ),
            "{w:?}"
        );
    }

    #[test]
    fn read_gives_the_same_trials_and_errors_as_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trials.jsonl");
        let a = line(&record("a", 0, Verdict::Error));
        let b = line(&record("a", 0, Verdict::Pass));
        std::fs::write(&path, format!("{a}{b}{{\"torn")).unwrap();
        let trials = read(&path).unwrap();
        assert_eq!(trials, load(&path).unwrap().trials);
        assert_eq!(trials.len(), 1);
        assert_eq!(trials[0].verdict, Verdict::Pass);
        std::fs::write(&path, format!("{a}oops\n{b}")).unwrap();
        let e = read(&path).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("line 2 is damaged"), "{e}");
        let e = read(&dir.path().join("missing")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn rewrite_replaces_the_journal_and_appends_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trials.jsonl");
        std::fs::write(&path, "old contents that are not a journal\n").unwrap();
        let a = record("a", 0, Verdict::Pass);
        let b = record("b", 0, Verdict::Fail);
        let mut j = rewrite(&path, std::slice::from_ref(&a)).unwrap();
        j.append(&b).unwrap();
        drop(j);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            line2(&a) + &line2(&b)
        );
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["trials.jsonl"]);
        let e = rewrite(&dir.path().join("missing/trials.jsonl"), &[]).unwrap_err();
        assert!(e.to_string().starts_with("failed to rewrite `"), "{e}");
    }
}
