//! Reports: one [`Exporter`] per file format, all rendering the same [`RunReport`].
//!
//! A run directory holds `run.json` (what ran), `trials.jsonl` (the journal, written
//! during the run) and the exporters' files, refreshed while the run goes on and written
//! again when it ends.

pub mod behaviour;
mod behaviour_view;
pub mod csv;
pub mod distractors;
#[cfg(test)]
mod exporter_tests;
pub mod format;
pub mod html;
mod html_json;
pub mod json;
pub mod junit;
pub mod loop_text;
mod loop_view;
pub mod markdown;
pub mod progress;
pub mod stream;
pub mod summary;
pub mod terminal;
#[cfg(test)]
mod warnings_tests;

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use summary::{Summary, VariantChanges, VariantDetails, VariantTokens};

use crate::provider::ToolDefinition;
use crate::score::TrialRecord;

/// Version of the `run.json` format.
pub const RUN_FORMAT: u32 = 1;

/// The suite a run used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteRef {
    /// Name.
    pub name: String,
    /// Path as given.
    pub path: String,
    /// SHA-256 of the file.
    pub hash: String,
    /// The suite's `description`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The matrix a run used, after command-line overrides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixRef {
    /// Targets.
    pub targets: Vec<String>,
    /// Variants.
    pub variants: Vec<String>,
    /// tool_choice modes.
    pub tool_choice: Vec<String>,
    /// Repeats.
    pub repeats: u32,
}

impl MatrixRef {
    /// The cells `(target, variant, tool_choice)` in plan order: target, then variant,
    /// then tool_choice.
    pub fn cells(&self) -> Vec<(String, String, String)> {
        let mut cells = Vec::new();
        for t in &self.targets {
            for v in &self.variants {
                for c in &self.tool_choice {
                    cells.push((t.clone(), v.clone(), c.clone()));
                }
            }
        }
        cells
    }
}

/// How a run's non-scripted targets were answered, kept so `--resume` continues the
/// same way. Holds the name of the key variable, never a key.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunSettings {
    /// `replay`, `live` or `record`.
    pub source: String,
    /// The cassette replayed or recorded into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `parallel_tool_calls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Extra request fields.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// `--api-key-env` values (variable names, never keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_key_env: Vec<String>,
    /// Settings of plugins (a scoring profile's flags, a replay target's reading), under
    /// keys of each plugin's choosing, sorted (e.g. `bfcl_strict`, `bfcl_style`): kept
    /// so `--resume` runs with the same.
    #[serde(flatten)]
    pub plugins: serde_json::Map<String, serde_json::Value>,
    /// Where the suite and the cassette were, so `report` and `--resume` find them from
    /// any working directory (`suite.path` and `cassette` are the paths as given).
    #[serde(default, skip_serializing_if = "RunPaths::is_empty")]
    pub paths: RunPaths,
    /// The prices the run charged (each target's, and the `--prices` file's path and
    /// SHA-256), so `--resume` charges the same; absent in run.json files written before
    /// prices were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<crate::score::prices::RunPrices>,
    /// The judge model the run asked (`judge:` or `--judge`), so `--resume` asks the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// How live targets answered: `on` (streamed) or `both` (each target once each
    /// way), from `--stream` or the suite's `sampling.stream`; absent when not
    /// streamed, so run.json files of other runs are as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
}

/// A file a run used, located two ways: `report` and `--resume` try the path relative
/// to the run directory first (it survives moving a checkout with its run directories),
/// then the absolute one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLocation {
    /// The absolute path (symbolic links resolved) when the run began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute: Option<String>,
    /// The path relative to the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_run_dir: Option<String>,
}

/// Where a run's suite and cassette were (see [`FileLocation`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPaths {
    /// The suite file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<FileLocation>,
    /// The cassette replayed or recorded into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<FileLocation>,
    /// The absolute working directory of the run: paths given relative to it (a
    /// `bfcl-result:FILE` or `scripted:FILE` target) are found from it on `--resume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// The `--prices` file (its prices are kept in `settings.prices`; this says where the
    /// file was, so `--resume` can tell when it changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<FileLocation>,
}

impl RunPaths {
    /// True when nothing is recorded (run.json files written before paths were kept).
    pub fn is_empty(&self) -> bool {
        self.suite.is_none()
            && self.cassette.is_none()
            && self.working_dir.is_none()
            && self.prices.is_none()
    }
}

/// `run.json`: what ran, when, and with which tools.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeta {
    /// Format version.
    pub run_format: u32,
    /// toolgauge version.
    pub toolgauge_version: String,
    /// The suite.
    pub suite: SuiteRef,
    /// The matrix.
    pub matrix: MatrixRef,
    /// Where each target's responses came from.
    pub sources: IndexMap<String, String>,
    /// Tool definitions per variant, as sent.
    pub tools: IndexMap<String, Vec<ToolDefinition>>,
    /// Token size of each variant's tool definitions.
    pub tool_definition_tokens: IndexMap<String, u64>,
    /// Each variant's system prompt and what it changes; absent when no variant
    /// changes anything (and in runs written before variants recorded it).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub variant_details: IndexMap<String, VariantDetails>,
    /// Trials planned.
    pub trials_planned: u64,
    /// Trials written to the journal.
    pub trials_written: u64,
    /// Start (RFC 3339).
    pub started_at: String,
    /// End (RFC 3339), when finished.
    pub finished_at: Option<String>,
    /// `running`, `complete`, or `stopped` (see `stop_reason`).
    #[serde(default)]
    pub status: String,
    /// Why the run stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// How targets were answered (for `--resume`).
    #[serde(default)]
    pub settings: RunSettings,
    /// The part of the suite the run covers (`--case`, `--tag`, `--shard`); absent for a
    /// run of every trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<crate::runner::select::Selection>,
    /// The shard runs `toolgauge merge` joined into this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<crate::runner::select::MergedShard>,
}

/// Everything an exporter may show.
pub struct RunReport {
    /// Run metadata.
    pub meta: RunMeta,
    /// Every trial.
    pub trials: Vec<TrialRecord>,
    /// The summary.
    pub summary: Summary,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Writing a file failed.
    #[error("failed to write `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Rendering failed.
    #[error("failed to render the {format} report: {message}")]
    Render {
        /// Format.
        format: &'static str,
        /// What failed.
        message: String,
    },
}

/// One report format.
pub trait Exporter {
    /// Files this exporter writes, with their bytes.
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError>;

    /// Write this exporter's files into `dir` and return their paths, in `render`'s
    /// order. The default renders every file whole and then writes it; an exporter whose
    /// file is megabytes (the HTML page of a big run) writes it as it renders instead.
    fn write_into(&self, report: &RunReport, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let mut written = Vec::new();
        for (name, bytes) in self.render(report)? {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|source| ReportError::Io {
                path: path.clone(),
                source,
            })?;
            written.push(path);
        }
        Ok(written)
    }
}

/// A file of the run directory written through a buffer as it is rendered, for the
/// exporters whose files grow with the trials (`report.html`, `trials.csv`, `junit.xml`,
/// `summary.json`): they are written between a run's last answer and its exit, and
/// rendering one whole first touched as many megabytes of fresh memory (a page fault and
/// a zeroed page each, more copies as the buffer grew) before writing it.
pub(crate) struct ReportFile {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl ReportFile {
    /// Create (or truncate) `name` in `dir`.
    pub(crate) fn create(dir: &Path, name: &str) -> Result<ReportFile, ReportError> {
        let path = dir.join(name);
        match std::fs::File::create(&path) {
            Ok(file) => Ok(ReportFile {
                path,
                out: std::io::BufWriter::with_capacity(256 * 1024, file),
            }),
            Err(source) => Err(ReportError::Io { path, source }),
        }
    }

    /// Where the bytes go.
    pub(crate) fn out(&mut self) -> &mut std::io::BufWriter<std::fs::File> {
        &mut self.out
    }

    /// `source` as the error of writing this file.
    pub(crate) fn io_error(&self, source: std::io::Error) -> ReportError {
        ReportError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Write what is buffered and return the file's path.
    pub(crate) fn finish(mut self) -> Result<PathBuf, ReportError> {
        use std::io::Write;
        match self.out.flush() {
            Ok(()) => Ok(self.path),
            Err(source) => Err(self.io_error(source)),
        }
    }
}

/// The formats `--format` accepts, besides `terminal`.
pub const FILE_FORMATS: &[&str] = &["json", "csv", "junit", "md", "html"];

/// The exporter for `format`.
pub fn exporter(format: &str) -> Option<Box<dyn Exporter + Send>> {
    match format {
        "json" => Some(Box::new(json::JsonExporter)),
        "csv" => Some(Box::new(csv::CsvExporter)),
        "junit" => Some(Box::new(junit::JunitExporter)),
        "md" => Some(Box::new(markdown::MarkdownExporter)),
        "html" => Some(Box::new(html::HtmlExporter)),
        _ => None,
    }
}

/// Render `formats` into `dir`.
///
/// The formats are rendered and written side by side, one thread each: they only read
/// the report, and for a large run (thousands of trials) rendering JUnit, Markdown and
/// HTML one after another is most of the time between the last answer and the end of the
/// command. The costliest format starts first, so it has a core from the start and the
/// others share what is left. The paths come back in the order of `formats`, and the
/// first error in that order wins.
pub fn write_files(
    dir: &Path,
    report: &RunReport,
    formats: &[String],
) -> Result<Vec<PathBuf>, ReportError> {
    let mut jobs: Vec<(usize, &str, Box<dyn Exporter + Send>)> = formats
        .iter()
        .enumerate()
        .filter_map(|(i, f)| exporter(f).map(|e| (i, f.as_str(), e)))
        .collect();
    jobs.sort_by_key(|(i, f, _)| (cost_rank(f), *i));
    let mut per_format: Vec<(usize, Result<Vec<PathBuf>, ReportError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|(i, _, e)| (i, s.spawn(move || e.write_into(report, dir))))
            .collect();
        handles
            .into_iter()
            .map(|(i, h)| {
                let paths = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                (i, paths)
            })
            .collect()
    });
    per_format.sort_by_key(|(i, _)| *i);
    let mut written = Vec::new();
    for (_, paths) in per_format {
        written.extend(paths?);
    }
    Ok(written)
}

/// Where `format` starts among the formats rendered side by side: the costliest first
/// (for 1,600 trials: HTML about 26 ms, the CSV files 7, JUnit 5, JSON 1).
fn cost_rank(format: &str) -> u8 {
    match format {
        "html" => 0,
        "csv" => 1,
        "junit" => 2,
        "json" => 3,
        _ => 4,
    }
}

/// Write `run.json` into `dir`.
pub fn write_meta(dir: &Path, meta: &RunMeta) -> Result<(), ReportError> {
    let path = dir.join("run.json");
    let bytes = serde_json::to_vec_pretty(meta).map_err(|e| ReportError::Render {
        format: "run.json",
        message: e.to_string(),
    })?;
    std::fs::write(&path, bytes).map_err(|source| ReportError::Io { path, source })
}

#[cfg(test)]
mod run_settings_tests {
    use super::RunSettings;

    #[test]
    fn plugin_settings_keep_their_keys_and_place_in_run_json() {
        // A run.json written when the BFCL flags were fields of their own: read, its
        // plugin keys are kept and written back in the same place, byte for byte.
        let text = r#"{"source":"replay","api_key_env":["K"],"bfcl_strict":true,"bfcl_style":"fc","bfcl_underscore_names":true,"judge":"scripted:judge"}"#;
        let s: RunSettings = serde_json::from_str(text).unwrap();
        assert_eq!(s.plugins.len(), 3);
        assert_eq!(s.plugins["bfcl_strict"], serde_json::json!(true));
        assert_eq!(s.judge.as_deref(), Some("scripted:judge"));
        assert_eq!(serde_json::to_string(&s).unwrap(), text);
        // None: no key at all, as before.
        let plain: RunSettings = serde_json::from_str(r#"{"source":"live"}"#).unwrap();
        assert!(plain.plugins.is_empty());
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"source":"live"}"#
        );
    }
}
