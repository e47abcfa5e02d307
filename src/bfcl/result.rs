//! `bfcl-result:FILE`: a BFCL result file replayed as a recorded target.
//!
//! A result file has one JSON object per line: `id`, `result`, and optionally
//! `input_token_count`, `output_token_count` and `latency` (seconds). `result` is what
//! the model produced in one of BFCL's two forms: a list of `{name: "<JSON arguments>"}`
//! (function-calling models) or text such as `[f(a=1, b='x')]` (prompt-mode models, and
//! function-calling models that answered in text). The response shows the calls decoded
//! as BFCL decodes them; the original `result` travels with it (in `raw`) so the `bfcl`
//! profile scores exactly what BFCL would. An item with no line is an error trial that
//! says so ("missing"), never a failure. Multi-turn lines (a `result` of turns of steps)
//! are replayed one step per request by [`super::result_multi`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::decode;
use super::result_multi::{self, StepUsage};
use super::value::Decoded;
use crate::provider::usage::{self, UsageReading};
use crate::provider::{Provider, ProviderError, Request, Response, ToolCall, TrialKey, Usage};

/// The key under which a response's `raw` carries the BFCL `result`.
pub const RAW_KEY: &str = "bfcl_result";
/// The key under which it carries the [`ResultStyle`].
pub const STYLE_KEY: &str = "bfcl_style";

/// The provider prefix of result-file targets (`bfcl-result:FILE`).
pub const PROVIDER: &str = "bfcl-result";

inventory::submit! {
    crate::suite::targets::OfflineProvider { name: PROVIDER, rank: 1 }
}

/// How a model wrote its results, which decides how BFCL decodes a text `result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultStyle {
    /// A function-calling model: calls are `[{name: "<JSON>"}]`, text is a plain answer
    /// (BFCL's decoding of it fails: no call).
    Fc,
    /// A prompt-mode model: text is a Python list of calls.
    Prompt,
}

impl ResultStyle {
    /// `fc` or `prompt`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultStyle::Fc => "fc",
            ResultStyle::Prompt => "prompt",
        }
    }
}

impl std::str::FromStr for ResultStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<ResultStyle, String> {
        match s {
            "fc" => Ok(ResultStyle::Fc),
            "prompt" => Ok(ResultStyle::Prompt),
            other => Err(format!("unknown BFCL result style `{other}`")),
        }
    }
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultFileError {
    /// The file could not be read.
    #[error("failed to read BFCL result file `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A line is not a BFCL result line.
    #[error("BFCL result file `{path}` line {line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One line of a result file.
#[derive(Debug, Clone)]
struct Line {
    result: Value,
    usage: UsageReading,
    latency_s: Option<f64>,
    /// Per-turn, per-step counts of a multi-turn line (none for single-turn lines).
    steps: Option<StepUsage>,
}

/// The provider.
pub struct BfclResultProvider {
    path: PathBuf,
    lines: Arc<Lines>,
    style: ResultStyle,
}

/// Result files already read in this process, by path: `toolgauge run suites/*.yaml -t
/// bfcl-result:DIR` reads a model's whole result directory once, not once per suite.
static READ: Mutex<Vec<(PathBuf, Arc<Lines>)>> = Mutex::new(Vec::new());

/// A result file's lines by item id.
type Lines = HashMap<String, Line>;

/// A token count BFCL stored as a number (or a list of numbers, one per step, possibly
/// nested), each checked as a server's count is ([`usage::count`]) and summed without
/// wrapping.
fn count(v: Option<&Value>, field: &str) -> Result<Option<u64>, String> {
    match v {
        Some(Value::Array(a)) => {
            let mut total = 0u64;
            for (i, x) in a.iter().enumerate() {
                if let Some(n) = count(Some(x), &format!("{field}[{i}]"))? {
                    total = total.saturating_add(n);
                }
            }
            Ok(Some(total))
        }
        other => usage::count(other, field),
    }
}

/// The usage of a line: both counts, or none; an implausible count drops both.
fn line_usage(v: &Value) -> UsageReading {
    let input = count(v.get("input_token_count"), "input_token_count");
    let output = count(v.get("output_token_count"), "output_token_count");
    match (input, output) {
        (Ok(Some(i)), Ok(Some(o))) => UsageReading::Counted(Usage {
            input_tokens: i,
            output_tokens: o,
            estimated: false,
            ..Default::default()
        }),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
        _ => UsageReading::Absent,
    }
}

impl BfclResultProvider {
    /// Read `path`, written by a model of `style` (`None`: `fc` when any result is a
    /// list, or any step of a multi-turn result, else `prompt`). `path` is a result file, or a directory in BFCL's layout
    /// (`result/<model>/`), whose `*_result.json` files are all read. A later line with
    /// an id already seen replaces it (as a re-run appended to a file would).
    pub fn open(
        path: &Path,
        style: Option<ResultStyle>,
    ) -> Result<BfclResultProvider, ResultFileError> {
        let cached = READ
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, l)| l.clone());
        let lines = match cached {
            Some(l) => l,
            None => {
                let l = Arc::new(read_path(path)?);
                READ.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((path.to_path_buf(), l.clone()));
                l
            }
        };
        let style = style.unwrap_or_else(|| {
            if lines.values().any(|l| result_multi::shows_fc(&l.result)) {
                ResultStyle::Fc
            } else {
                ResultStyle::Prompt
            }
        });
        Ok(BfclResultProvider {
            path: path.to_path_buf(),
            lines,
            style,
        })
    }

    /// Result lines read.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when the file has no result line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// Every line of the result file or directory at `path`, by id.
fn read_path(path: &Path) -> Result<Lines, ResultFileError> {
    let files = if path.is_dir() {
        let mut found = Vec::new();
        result_files(path, &mut found, 0).map_err(|source| ResultFileError::Io {
            path: path.display().to_string(),
            source,
        })?;
        found.sort();
        if found.is_empty() {
            return Err(ResultFileError::Io {
                path: path.display().to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the directory holds no *_result.json file",
                ),
            });
        }
        found
    } else {
        vec![path.to_path_buf()]
    };
    let mut lines = HashMap::new();
    for file in &files {
        read_file(file, &mut lines)?;
    }
    Ok(lines)
}

/// The `*_result.json` files under `dir` (BFCL writes them a level or two down).
fn result_files(dir: &Path, out: &mut Vec<PathBuf>, depth: u32) -> std::io::Result<()> {
    if depth > 8 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() {
            result_files(&p, out, depth + 1)?;
        } else if p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("_result.json"))
        {
            out.push(p);
        }
    }
    Ok(())
}

/// The lines of one result file, into `lines` by id.
fn read_file(path: &Path, lines: &mut Lines) -> Result<(), ResultFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ResultFileError::Io {
        path: shown.clone(),
        source,
    })?;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let bad = |message: String| ResultFileError::Line {
            path: shown.clone(),
            line: i + 1,
            message,
        };
        let v: Value = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no string `id`".into()))?
            .to_string();
        let result = v
            .get("result")
            .cloned()
            .ok_or_else(|| bad(format!("item `{id}` has no `result`")))?;
        let latency_s = match v.get("latency") {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::Array(a)) => Some(a.iter().filter_map(Value::as_f64).sum()),
            _ => None,
        };
        let steps = (id.starts_with("multi_turn_")
            || result
                .as_array()
                .is_some_and(|t| t.iter().any(Value::is_array)))
        .then(|| StepUsage::of_line(&v));
        lines.insert(
            id,
            Line {
                result,
                usage: line_usage(&v),
                latency_s,
                steps,
            },
        );
    }
    Ok(())
}

/// The calls a `result` of a `style` model shows, decoded as BFCL decodes it (the
/// profile re-decodes the original for scoring; these are for reports and toolgauge's
/// own checks).
pub fn response_of(result: &Value, style: ResultStyle) -> Response {
    let mut response = Response::default();
    match result {
        Value::Array(items) => {
            for item in items {
                let Some((name, args)) = item.as_object().and_then(|o| o.iter().next()) else {
                    continue;
                };
                response.tool_calls.push(ToolCall {
                    id: None,
                    name: name.clone(),
                    arguments: match args {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    },
                });
            }
        }
        Value::String(text) => {
            // Prompt-mode text: the calls it decodes to, with the text kept.
            if style == ResultStyle::Prompt
                && let Decoded::Calls(calls) = decode::decode_prompt(text, false)
            {
                response.tool_calls = calls
                    .into_iter()
                    .map(|(name, args)| ToolCall {
                        id: None,
                        name,
                        arguments: args.to_json().to_string(),
                    })
                    .collect();
            }
            response.text = Some(text.clone());
        }
        other => response.text = Some(other.to_string()),
    }
    response.raw = Some(json!({ RAW_KEY: result, STYLE_KEY: style.as_str() }));
    response
}

#[async_trait]
impl Provider for BfclResultProvider {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        let Some(line) = self.lines.get(&key.case_id) else {
            return Err(ProviderError::MissingResult {
                file: self.path.display().to_string(),
                case_id: key.case_id.clone(),
            });
        };
        if result_multi::is_multi_turn(&key.case_id, &line.result, &request.messages) {
            let none = StepUsage::default();
            return Ok(result_multi::respond(
                &line.result,
                line.steps.as_ref().unwrap_or(&none),
                self.style,
                &request.messages,
            ));
        }
        let mut response = response_of(&line.result, self.style);
        line.usage.clone().apply(&mut response, "the result file");
        response.latency_ms = line.latency_s.map_or(0.0, |s| s * 1000.0);
        Ok(response)
    }

    fn source(&self) -> String {
        format!(
            "BFCL result file {} ({} items, {} style)",
            self.path.display(),
            self.lines.len(),
            self.style.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_checked_and_summed_without_wrapping() {
        let usage = |v: Value| {
            let mut r = Response::default();
            line_usage(&v).apply(&mut r, "the result file");
            (
                r.usage.map(|u| (u.input_tokens, u.output_tokens)),
                r.warnings,
            )
        };
        // Per-step lists (multi-turn items) are summed.
        assert_eq!(
            usage(json!({"input_token_count": [10, [5, 5]], "output_token_count": 7})),
            (Some((20, 7)), vec![])
        );
        // One count alone gives no usage (it is estimated instead).
        assert_eq!(usage(json!({"input_token_count": 10})), (None, vec![]));
        for (v, why) in [
            (json!(-3), "`output_token_count` is -3, a negative count"),
            (
                json!([1, 1e30]),
                "`output_token_count[1]` is 1e+30, above the cap",
            ),
            (json!("9"), "`output_token_count` is \"9\", a string"),
        ] {
            let (u, warnings) = usage(json!({"input_token_count": 10, "output_token_count": v}));
            assert_eq!(u, None);
            assert_eq!(warnings.len(), 1);
            assert!(
                warnings[0].starts_with("implausible usage from the result file ignored: ")
                    && warnings[0].contains(why),
                "{warnings:?}"
            );
        }
    }
}
