//! Reading BFCL's data files: question files (`BFCL_v<N>_<category>.json`, one JSON object
//! per line: `id`, `question` turns, `function` list) and possible answers
//! (`possible_answer/BFCL_v<N>_<category>.json`: `id`, `ground_truth`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Why BFCL data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// No question file for a category.
    #[error(
        "no BFCL question file for category `{category}` in `{dir}` (looked for BFCL_v*_{category}.json)"
    )]
    Missing {
        /// The category.
        category: String,
        /// The directory searched.
        dir: String,
    },
    /// A file could not be read.
    #[error("failed to read `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A line is not what BFCL writes.
    #[error("`{path}` line {line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One message of a question turn.
#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// Text.
    #[serde(default)]
    pub content: Value,
}

/// One question item, borrowing from the file's text.
#[derive(Debug, Deserialize)]
pub struct Item<'a> {
    /// BFCL's id, e.g. `simple_python_0`, `live_multiple_12-4-1`.
    pub id: String,
    /// Turns of messages (single-turn categories have one).
    pub question: Vec<Vec<Message>>,
    /// The functions offered, in BFCL's format, as their JSON text (BFCL's live
    /// categories repeat the same functions across hundreds of items; the importer
    /// converts each distinct text once).
    #[serde(default, borrow)]
    pub function: Vec<&'a RawValue>,
}

/// The question file of `category` under `dir`: `BFCL_v<N>_<category>.json` with the
/// highest N. `dir` may be BFCL's `data` directory or a directory holding it.
pub fn question_file(dir: &Path, category: &str) -> Result<PathBuf, DataError> {
    for base in [dir.to_path_buf(), dir.join("data")] {
        if let Some(p) = newest(&base, category) {
            return Ok(p);
        }
    }
    Err(DataError::Missing {
        category: category.to_string(),
        dir: dir.display().to_string(),
    })
}

/// The possible-answer file next to question file `question` (`possible_answer/<same name>`),
/// if there is one (irrelevance and relevance categories have none).
pub fn answer_file(question: &Path) -> Option<PathBuf> {
    let p = question
        .parent()?
        .join("possible_answer")
        .join(question.file_name()?);
    p.is_file().then_some(p)
}

fn newest(dir: &Path, category: &str) -> Option<PathBuf> {
    let suffix = format!("_{category}.json");
    let mut best: Option<(u32, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("BFCL_v") else {
            continue;
        };
        let Some(version) = rest.strip_suffix(&suffix) else {
            continue;
        };
        let Ok(v) = version.parse::<u32>() else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, entry.path()));
        }
    }
    best.map(|(_, p)| p)
}

/// The text of `path`.
pub fn read(path: &Path) -> Result<String, DataError> {
    std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Every non-empty line of JSON-lines `text` (read from `path`), parsed.
pub fn lines<'a, T: Deserialize<'a>>(text: &'a str, path: &Path) -> Result<Vec<T>, DataError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).map_err(|e| DataError::Line {
            path: path.display().to_string(),
            line: i + 1,
            message: e.to_string(),
        })?);
    }
    Ok(out)
}

/// The items of question file `text` (read from `path`).
pub fn read_items<'a>(text: &'a str, path: &Path) -> Result<Vec<Item<'a>>, DataError> {
    lines(text, path)
}

#[derive(Deserialize)]
struct AnswerLine {
    id: String,
    ground_truth: Value,
}

/// The ground truth of each item of a possible-answer file, by id.
pub fn read_answers(path: &Path) -> Result<HashMap<String, Value>, DataError> {
    let text = read(path)?;
    Ok(lines::<AnswerLine>(&text, path)?
        .into_iter()
        .map(|a| (a.id, a.ground_truth))
        .collect())
}
