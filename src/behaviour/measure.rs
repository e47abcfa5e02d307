//! Measuring the classifier on labelled answers: the example text answers of a
//! When2Call file (`answers.direct`, `answers.request_for_info`, `answers.cannot_answer`
//! of each item) or a JSON Lines file of `{"text", "label"}`, into a 3 × 3 confusion
//! matrix (rows expected, columns observed) and the accuracy of each class.
//!
//! The When2Call items are split in two halves by their index in the file (0-based):
//! the classifier's cue lexicons were written looking only at the even items (the
//! development half); the odd items are held out.

use crate::util::json_kind::json_kind;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::{Behaviour, Classified, classify};

/// Which When2Call items to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Half {
    /// Items with an even 0-based index: the half the lexicons were written on.
    Dev,
    /// Items with an odd index: never looked at while writing the lexicons.
    HeldOut,
    /// Every item.
    All,
}

impl Half {
    /// Parse `dev`, `held-out` or `all`.
    pub fn parse(s: &str) -> Option<Half> {
        match s {
            "dev" => Some(Half::Dev),
            "held-out" | "heldout" | "held_out" => Some(Half::HeldOut),
            "all" => Some(Half::All),
            _ => None,
        }
    }

    /// Whether the item at 0-based `index` belongs to this half.
    pub fn holds(self, index: usize) -> bool {
        match self {
            Half::Dev => index.is_multiple_of(2),
            Half::HeldOut => !index.is_multiple_of(2),
            Half::All => true,
        }
    }
}

/// One labelled answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// Where it comes from: `LINE:answers.LABEL` (When2Call) or `LINE` (JSON Lines),
    /// 1-based lines.
    pub source: String,
    /// The answer.
    pub text: String,
    /// The behaviour it shows.
    pub label: Behaviour,
}

/// Why labelled answers could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a JSON object.
    #[error("{path}:{line}: not a JSON object: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A field is missing or has the wrong type or value.
    #[error("{path}:{line}: field `{field}`: {problem}")]
    Field {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// The field.
        field: String,
        /// What is wrong and what was expected.
        problem: String,
    },
    /// The file holds no answers to measure.
    #[error("{path}: no labelled answers found")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// A JSON object of a JSON Lines file, with its 1-based line.
type Line = (usize, serde_json::Map<String, Value>);

/// The JSON objects of a JSON Lines file (blank lines skipped).
fn objects(path: &Path) -> Result<Vec<Line>, MeasureError> {
    let text = std::fs::read_to_string(path).map_err(|source| MeasureError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let json = |message: String| MeasureError::Json {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(o)) => out.push((i + 1, o)),
            Ok(other) => return Err(json(format!("found {}", json_kind(&other)))),
            Err(e) => return Err(json(e.to_string())),
        }
    }
    Ok(out)
}

/// The example text answers of the When2Call items of `half` in `path` (three per item:
/// `answers.request_for_info`, `answers.cannot_answer`, `answers.direct`; the
/// `tool_call` answer is a call, not text).
pub fn when2call_examples(path: &Path, half: Half) -> Result<Vec<Example>, MeasureError> {
    let mut out = Vec::new();
    for (index, (line, o)) in objects(path)?.into_iter().enumerate() {
        if !half.holds(index) {
            continue;
        }
        let field = |field: &str, problem: String| MeasureError::Field {
            path: path.to_path_buf(),
            line,
            field: field.to_string(),
            problem,
        };
        let answers = match o.get("answers") {
            Some(Value::Object(a)) => a,
            Some(other) => {
                return Err(field(
                    "answers",
                    format!(
                        "expected an object of answers by behaviour, found {}",
                        json_kind(other)
                    ),
                ));
            }
            None => {
                return Err(field(
                    "answers",
                    "missing (is this a When2Call LLM-judge file? its items carry an example answer per behaviour)".to_string(),
                ));
            }
        };
        for b in Behaviour::TEXT {
            let name = format!("answers.{}", b.label());
            match answers.get(b.label()) {
                Some(Value::String(text)) => out.push(Example {
                    source: format!("{line}:{name}"),
                    text: text.clone(),
                    label: b,
                }),
                Some(other) => {
                    return Err(field(
                        &name,
                        format!("expected a string, found {}", json_kind(other)),
                    ));
                }
                None => return Err(field(&name, "missing".to_string())),
            }
        }
    }
    if out.is_empty() {
        return Err(MeasureError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// The answers of a JSON Lines file of `{"text": "...", "label": "..."}` (labels
/// `request_for_info` or `clarify`, `cannot_answer`, `direct`; other fields ignored).
pub fn labelled_examples(path: &Path) -> Result<Vec<Example>, MeasureError> {
    let mut out = Vec::new();
    for (line, o) in objects(path)? {
        let field = |field: &str, problem: String| MeasureError::Field {
            path: path.to_path_buf(),
            line,
            field: field.to_string(),
            problem,
        };
        let text = match o.get("text") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => {
                return Err(field(
                    "text",
                    format!("expected a string, found {}", json_kind(other)),
                ));
            }
            None => return Err(field("text", "missing".to_string())),
        };
        let label = match o.get("label") {
            Some(Value::String(l)) => match Behaviour::parse(l) {
                Some(b) if b != Behaviour::ToolCall => b,
                _ => {
                    return Err(field(
                        "label",
                        format!(
                            "unknown label {l:?}: expected request_for_info (or clarify), cannot_answer or direct"
                        ),
                    ));
                }
            },
            Some(other) => {
                return Err(field(
                    "label",
                    format!("expected a string, found {}", json_kind(other)),
                ));
            }
            None => return Err(field("label", "missing".to_string())),
        };
        out.push(Example {
            source: line.to_string(),
            text,
            label,
        });
    }
    if out.is_empty() {
        return Err(MeasureError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Counts of expected (rows) against observed (columns) behaviour, both in the order
/// of [`Behaviour::TEXT`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// `counts[expected][observed]`.
    pub counts: [[usize; 3]; 3],
}

/// The row or column of a text behaviour.
fn slot(b: Behaviour) -> Option<usize> {
    Behaviour::TEXT.iter().position(|t| *t == b)
}

impl Confusion {
    /// How many answers labelled `b` there are, and how many of them were classified `b`.
    pub fn class(&self, b: Behaviour) -> (usize, usize) {
        slot(b).map_or((0, 0), |i| (self.counts[i][i], self.counts[i].iter().sum()))
    }

    /// The share of answers labelled `b` classified `b`, in percent (None without any).
    pub fn accuracy(&self, b: Behaviour) -> Option<f64> {
        let (hit, total) = self.class(b);
        (total > 0).then(|| 100.0 * hit as f64 / total as f64)
    }

    /// The share of all answers classified as labelled, in percent.
    pub fn overall(&self) -> Option<f64> {
        let total: usize = self.counts.iter().flatten().sum();
        let hit: usize = (0..3).map(|i| self.counts[i][i]).sum();
        (total > 0).then(|| 100.0 * hit as f64 / total as f64)
    }
}

/// The classifier's verdicts on a set of labelled answers.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// Expected against observed.
    pub confusion: Confusion,
    /// Every answer classified otherwise than labelled, with the verdict.
    pub misses: Vec<Miss>,
}

/// An answer the classifier got wrong.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// The answer and its label.
    pub example: Example,
    /// What the classifier said.
    pub observed: Behaviour,
    /// The cue it keyed on.
    pub cue: Option<String>,
}

/// Classify every example and count.
pub fn measure(examples: &[Example]) -> Measurement {
    let mut m = Measurement {
        confusion: Confusion::default(),
        misses: Vec::new(),
    };
    for e in examples {
        let Classified { behaviour, cue } = classify(&e.text);
        if let (Some(r), Some(c)) = (slot(e.label), slot(behaviour)) {
            m.confusion.counts[r][c] += 1;
        }
        if behaviour != e.label {
            m.misses.push(Miss {
                example: e.clone(),
                observed: behaviour,
                cue,
            });
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, body: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolgauge-measure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn halves_split_items_by_parity_and_each_item_gives_three_answers() {
        let item = |d: &str| {
            format!(
                r#"{{"answers": {{"direct": "{d}", "tool_call": "{{}}", "request_for_info": "Which city?", "cannot_answer": "I can't."}}}}"#
            )
        };
        let p = write(
            "w2c.jsonl",
            &format!(
                "{}\n\n{}\n{}\n",
                item("It is 5."),
                item("It is 6."),
                item("It is 7.")
            ),
        );
        let dev = when2call_examples(&p, Half::Dev).unwrap();
        assert_eq!(dev.len(), 6);
        assert_eq!(dev[0].source, "1:answers.request_for_info");
        assert_eq!(dev[5].source, "4:answers.direct");
        assert_eq!(dev[5].text, "It is 7.");
        let held = when2call_examples(&p, Half::HeldOut).unwrap();
        assert_eq!(
            held.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(),
            ["Which city?", "I can't.", "It is 6."]
        );
        let m = measure(&when2call_examples(&p, Half::All).unwrap());
        assert_eq!(m.confusion.counts, [[3, 0, 0], [0, 3, 0], [0, 0, 3]]);
        assert_eq!(m.confusion.accuracy(Behaviour::Direct), Some(100.0));
    }

    #[test]
    fn the_confusion_matrix_counts_rows_expected_and_columns_observed() {
        let e = |text: &str, label| Example {
            source: String::new(),
            text: text.into(),
            label,
        };
        let m = measure(&[
            e("Which city do you mean?", Behaviour::RequestForInfo),
            e("Which city do you mean?", Behaviour::Direct),
            e("I cannot do that.", Behaviour::CannotAnswer),
            e("It is 5 °C.", Behaviour::Direct),
        ]);
        assert_eq!(m.confusion.counts, [[1, 0, 0], [0, 1, 0], [1, 0, 1]]);
        assert_eq!(m.confusion.class(Behaviour::Direct), (1, 2));
        assert_eq!(m.confusion.accuracy(Behaviour::Direct), Some(50.0));
        assert_eq!(m.confusion.overall(), Some(75.0));
        assert_eq!(m.misses.len(), 1);
        assert_eq!(m.misses[0].observed, Behaviour::RequestForInfo);
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let p = write(
            "bad1.jsonl",
            "{\"text\": \"hi\", \"label\": \"direct\"}\n{\"text\": \"x\", \"label\": \"maybe\"}\n",
        );
        let e = labelled_examples(&p).unwrap_err().to_string();
        assert!(e.ends_with("bad1.jsonl:2: field `label`: unknown label \"maybe\": expected request_for_info (or clarify), cannot_answer or direct"), "{e}");
        let p = write("bad2.jsonl", "{\"label\": \"direct\"}\n");
        assert!(
            labelled_examples(&p)
                .unwrap_err()
                .to_string()
                .ends_with("bad2.jsonl:1: field `text`: missing")
        );
        let p = write("bad3.jsonl", "[1]\n");
        assert!(
            labelled_examples(&p)
                .unwrap_err()
                .to_string()
                .ends_with("bad3.jsonl:1: not a JSON object: found an array")
        );
        let p = write("bad4.jsonl", "{\"uuid\": 1}\n");
        let e = when2call_examples(&p, Half::All).unwrap_err().to_string();
        assert!(e.contains("bad4.jsonl:1: field `answers`: missing"), "{e}");
        let p = write("empty.jsonl", "\n");
        assert!(matches!(
            labelled_examples(&p),
            Err(MeasureError::Empty { .. })
        ));
        assert!(matches!(
            labelled_examples(Path::new("/nonexistent/x.jsonl")),
            Err(MeasureError::Read { .. })
        ));
    }
}
