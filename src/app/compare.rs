//! `toolgauge compare`: two runs (or two variants of one run) trial by trial, with the
//! paired test and the regression gates of [`crate::compare`]. The failing gate is named
//! in the last line of output and the exit code is 1.
//!
//! A comparison that compares nothing must never pass. Flags naming what is not there
//! (a variant, target or tool_choice mode neither run has), rates out of range and runs of
//! different suites are bad input (exit 2) before anything is compared; a comparison that
//! ran but paired no scored trial fails its gate (exit 1, see
//! [`crate::compare::GateFailure::NoPairs`]).

use std::path::{Path, PathBuf};

use super::AppError;
use super::report::read_journal;
use crate::cli::CompareArgs;
use std::collections::HashMap;

use indexmap::IndexSet;
use serde::Deserialize;

use crate::compare::{self, CellKey, Comparison, Gate, Side};

mod limits;
use crate::exit;
use crate::report::RunMeta;
use crate::report::summary::{CellSummary, SUMMARY_VERSION};
use crate::score::TrialRecord;

/// The run directory a path names: the directory itself, or the one holding a
/// `summary.json` / `trials.jsonl` given directly.
fn run_dir(path: &Path) -> PathBuf {
    if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    }
}

/// One side as loaded: every trial from the journal when there is one (full metrics for
/// any pairing), else the cells of a `summary.json`.
enum Loaded {
    Trials(Vec<TrialRecord>),
    Cells(Vec<CellSummary>),
}

/// A dimension of the matrix, as compare's flags name it.
#[derive(Debug, Clone, Copy)]
enum Dim {
    Target,
    Variant,
    ToolChoice,
}

impl Loaded {
    fn side(&self) -> Side<'_> {
        match self {
            Loaded::Trials(t) => Side::Trials(t),
            Loaded::Cells(c) => Side::Cells(c),
        }
    }

    /// Add this side's values of `dim` to `out`.
    fn values(&self, dim: Dim, out: &mut IndexSet<String>) {
        let mut add = |v: &str| {
            if !out.contains(v) {
                out.insert(v.to_string());
            }
        };
        match self {
            Loaded::Trials(trials) => {
                for t in trials {
                    match dim {
                        Dim::Target => add(&t.target),
                        Dim::Variant => add(&t.variant),
                        Dim::ToolChoice => add(&t.tool_choice.to_string()),
                    }
                }
            }
            Loaded::Cells(cells) => {
                for c in cells {
                    match dim {
                        Dim::Target => add(&c.target),
                        Dim::Variant => add(&c.variant),
                        Dim::ToolChoice => add(&c.tool_choice),
                    }
                }
            }
        }
    }

    /// Keep only the given targets and tool_choice modes (an empty list keeps all).
    fn retain(&mut self, targets: &[String], modes: &[String]) {
        let keep = |target: &str, mode: &str| {
            (targets.is_empty() || targets.iter().any(|t| t == target))
                && (modes.is_empty() || modes.iter().any(|m| m == mode))
        };
        match self {
            Loaded::Trials(trials) => {
                trials.retain(|t| keep(&t.target, &t.tool_choice.to_string()));
            }
            Loaded::Cells(cells) => cells.retain(|c| keep(&c.target, &c.tool_choice)),
        }
    }
}

/// The parts of `summary.json` compare reads.
#[derive(Deserialize)]
struct SummaryFile {
    summary_version: u32,
    /// The suite's name (absent only in hand-made files).
    #[serde(default)]
    suite: Option<String>,
    cells: Vec<CellSummary>,
    /// The suite's thresholds as checked (only their metrics are read).
    #[serde(default)]
    thresholds: Vec<ThresholdName>,
}

/// A threshold of `summary.json`, by its metric.
#[derive(Deserialize)]
struct ThresholdName {
    metric: String,
}

/// The metrics the thresholds of `summary.json` in `dir` name, in order, once each;
/// empty when there is no readable summary (the trials are enough to compare).
fn threshold_metrics_of(file: Option<&SummaryFile>) -> Vec<String> {
    let mut out: IndexSet<String> = IndexSet::new();
    for t in file.map(|f| f.thresholds.as_slice()).unwrap_or_default() {
        out.insert(t.metric.clone());
    }
    out.into_iter().collect()
}

/// Which suite a side ran: its name, and the hash of the suite file when `run.json` is
/// there to say.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SuiteId {
    name: String,
    hash: Option<String>,
}

/// One side as loaded, with the suite it ran and its thresholds' metrics when known.
struct Run {
    data: Loaded,
    suite: Option<SuiteId>,
    thresholds: Vec<String>,
}

/// Largest `summary.json` read (the 10,000-trial run's is well under 1 MB).
const MAX_SUMMARY_BYTES: u64 = 256 * 1024 * 1024;

fn read_summary(path: &Path) -> Result<SummaryFile, AppError> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| AppError::bad(format!("failed to read `{shown}`: {e}"), None))?
        .len();
    if size > MAX_SUMMARY_BYTES {
        return Err(AppError::bad(
            format!("`{shown}` is {size} bytes, more than a summary.json can be"),
            None,
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| AppError::bad(format!("failed to read `{shown}`: {e}"), None))?;
    let file: SummaryFile = serde_json::from_str(&text).map_err(|e| {
        AppError::bad(
            format!(
                "`{shown}` is not a toolgauge summary.json (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
            Some("give a run directory or the summary.json that `toolgauge run` wrote"),
        )
    })?;
    if file.summary_version < SUMMARY_VERSION {
        return Err(AppError::bad(
            format!(
                "`{shown}` is summary version {}, which has no per-trial outcomes to pair",
                file.summary_version
            ),
            Some(
                "regenerate it with `toolgauge report RUN_DIR --format json` (needs the run's trials.jsonl), or compare the run directories",
            ),
        ));
    }
    if file.summary_version > SUMMARY_VERSION {
        return Err(AppError::bad(
            format!(
                "`{shown}` is summary version {}; this toolgauge reads up to {SUMMARY_VERSION}",
                file.summary_version
            ),
            Some("use the toolgauge version that wrote it, or a newer one"),
        ));
    }
    Ok(file)
}

/// The run's `run.json`, if it is there and readable.
fn read_meta(dir: &Path) -> Option<RunMeta> {
    std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<RunMeta>(&t).ok())
}

/// The journal is in completion order, which varies from run to run; cells are compared
/// and listed in the matrix order of the run's `run.json` (as its summary lists them).
/// Without a readable `run.json` the journal order stays.
fn in_matrix_order(trials: &mut [TrialRecord], meta: Option<&RunMeta>) {
    let Some(meta) = meta else {
        return;
    };
    let mut order: HashMap<(String, String, String), usize> = HashMap::new();
    for cell in meta.matrix.cells() {
        let next = order.len();
        order.entry(cell).or_insert(next);
    }
    // Stable: within a cell the journal order stays.
    trials.sort_by_cached_key(|t| {
        let cell = (
            t.target.clone(),
            t.variant.clone(),
            t.tool_choice.to_string(),
        );
        // A streamed cell after its unstreamed twin, as the summary lists them.
        (order.get(&cell).copied().unwrap_or(usize::MAX), t.stream)
    });
}

/// Say so when the run in `dir` covers part of its suite (`--case`, `--tag`, `--shard`):
/// only the trials both sides hold are paired, the rest are counted as unpaired.
fn note_partial(dir: &Path, meta: Option<&RunMeta>) {
    let part = meta
        .and_then(|m| m.selection.as_ref())
        .and_then(|s| s.describe());
    if let Some(part) = part {
        warnln!(
            "note: `{}` is a partial run ({part}); only trials both runs hold are paired",
            dir.display()
        );
    }
}

fn load(path: &Path) -> Result<Run, AppError> {
    let dir = run_dir(path);
    let meta = read_meta(&dir);
    note_partial(&dir, meta.as_ref());
    let from_meta = meta.as_ref().map(|m| SuiteId {
        name: m.suite.name.clone(),
        hash: Some(m.suite.hash.clone()),
    });
    let journal = dir.join("trials.jsonl");
    if journal.is_file() {
        let mut trials = read_journal(&journal)?;
        in_matrix_order(&mut trials, meta.as_ref());
        // The summary beside the journal says which thresholds the suite declares; a
        // missing or unreadable one only leaves them unknown.
        let beside = dir.join("summary.json");
        let summary = beside
            .is_file()
            .then(|| read_summary(&beside).ok())
            .flatten();
        return Ok(Run {
            data: Loaded::Trials(trials),
            suite: from_meta,
            thresholds: threshold_metrics_of(summary.as_ref()),
        });
    }
    let summary = if path.is_file() {
        path.to_path_buf()
    } else {
        dir.join("summary.json")
    };
    if summary.is_file() {
        let file = read_summary(&summary)?;
        let thresholds = threshold_metrics_of(Some(&file));
        let suite = from_meta.or_else(|| file.suite.map(|name| SuiteId { name, hash: None }));
        return Ok(Run {
            data: Loaded::Cells(file.cells),
            suite,
            thresholds,
        });
    }
    Err(AppError::bad(
        format!(
            "`{}` holds neither trials.jsonl nor summary.json",
            path.display()
        ),
        Some("compare takes run directories written by `toolgauge run`, or their summary.json"),
    ))
}

/// `--min-accuracy` and any other flag taking a rate: a fraction in [0, 1]. A percentage
/// (`80`) is refused with the fraction it probably meant, never read as 8000%.
fn check_fraction(flag: &str, value: f64) -> Result<f64, AppError> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        return Ok(value);
    }
    let message = if value.is_finite() && value > 1.0 && value <= 100.0 {
        format!(
            "{flag} takes a fraction in [0, 1]; did you mean {}?",
            value / 100.0
        )
    } else {
        format!("{flag} takes a fraction in [0, 1]; {value} is not one")
    };
    Err(AppError::bad(message, None))
}

/// `--fail-on-regression`: percentage points in [0, 100].
pub(super) fn check_points(flag: &str, value: f64) -> Result<f64, AppError> {
    if value.is_finite() && (0.0..=100.0).contains(&value) {
        if value > 0.0 && value < 1.0 {
            warnln!(
                "note: {flag} {value} is {value} percentage points (a drop from 90% to {}%); for {} points write {flag} {}",
                90.0 - value,
                value * 100.0,
                value * 100.0
            );
        }
        return Ok(value);
    }
    let message = if (-100.0..0.0).contains(&value) {
        format!(
            "{flag} takes the largest allowed drop in percentage points, in [0, 100]; did you mean {}?",
            -value
        )
    } else {
        format!("{flag} takes percentage points in [0, 100]; {value} is not one")
    };
    Err(AppError::bad(message, None))
}

/// `--streamed` compares a run made with `--stream both`: refuse a run without both
/// modes, which would compare its trials with nothing.
fn check_both_modes(run: &Loaded, path: &Path) -> Result<(), AppError> {
    let modes: Vec<bool> = match run {
        Loaded::Trials(t) => t.iter().map(|t| t.stream).collect(),
        Loaded::Cells(c) => c.iter().map(|c| c.stream).collect(),
    };
    let (off, on) = (modes.iter().any(|s| !s), modes.iter().any(|s| *s));
    if off && on {
        return Ok(());
    }
    Err(AppError::bad(
        format!(
            "--streamed compares a run's unstreamed trials with its streamed ones, but `{}` has {} trials only",
            path.display(),
            if on { "streamed" } else { "unstreamed" }
        ),
        Some(
            "run the suite with --stream=both (each live target once each way), or compare two runs: toolgauge compare PLAIN STREAMED --across-stream",
        ),
    ))
}

/// The distinct values of one dimension over the given sides, in order of appearance.
fn values_of(sides: &[&Loaded], dim: Dim) -> Vec<String> {
    let mut out: IndexSet<String> = IndexSet::new();
    for side in sides {
        side.values(dim, &mut out);
    }
    out.into_iter().collect()
}

/// The names a flag gives that none of the sides has, in one clause naming every one
/// (each with a "did you mean" when one of `known` is close) and what the runs have;
/// `None` when all are known. `what` is singular (`variant`, `tool_choice mode`).
fn unknown_names(flag: &str, what: &str, named: &[String], known: &[String]) -> Option<String> {
    let missing: IndexSet<&str> = named
        .iter()
        .map(String::as_str)
        .filter(|n| !known.iter().any(|k| k == n))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let shown: Vec<String> = missing
        .iter()
        .map(
            |n| match crate::util::suggest::closest(n, known.iter().map(String::as_str)) {
                Some(c) => format!("`{n}` (did you mean `{c}`?)"),
                None => format!("`{n}`"),
            },
        )
        .collect();
    let list = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    Some(match shown.as_slice() {
        [one] => format!(
            "{flag} names {what} {one}, which is not in the compared runs (they have: {list})"
        ),
        [init @ .., last] => format!(
            "{flag} names {what}s {} and {last}, which are not in the compared runs (they have: {list})",
            init.join(", ")
        ),
        [] => unreachable!("missing is not empty"),
    })
}

/// Runs of different suites can not be paired; a changed suite file is worth a note.
fn check_same_suite(
    base: &Run,
    cand: &Run,
    args: &CompareArgs,
    cand_path: &Path,
) -> Result<(), AppError> {
    let (Some(b), Some(c)) = (&base.suite, &cand.suite) else {
        return Ok(());
    };
    if b.name != c.name {
        return Err(AppError::bad(
            format!(
                "the runs are of different suites: baseline `{}` ran suite `{}`, candidate `{}` ran suite `{}`; trials of different suites can not be paired",
                args.baseline.display(),
                b.name,
                cand_path.display(),
                c.name
            ),
            None,
        ));
    }
    if let (Some(hb), Some(hc)) = (&b.hash, &c.hash)
        && hb != hc
    {
        warnln!(
            "note: suite `{}` changed between the runs (its file's hash differs); only trials present in both are paired",
            b.name
        );
    }
    Ok(())
}

/// A gate on a metric other than accuracy tests it case by case, which needs every
/// trial: a side that is a bare `summary.json` can not give that.
fn check_per_trial(
    limits: &[compare::Limit],
    baseline: &Run,
    candidate: Option<&Run>,
    args: &CompareArgs,
) -> Result<(), AppError> {
    let Some(metric) = limits.iter().find(|l| l.metric != "accuracy") else {
        return Ok(());
    };
    let sides = [
        Some((baseline, &args.baseline)),
        candidate.zip(args.candidate.as_ref()),
    ];
    for (run, path) in sides.into_iter().flatten() {
        if matches!(run.data, Loaded::Cells(_)) {
            return Err(AppError::bad(
                format!(
                    "--fail-on-regression {} tests the metric case by case, which needs every trial, but `{}` is a summary.json without its run's trials.jsonl",
                    metric.metric,
                    path.display()
                ),
                Some(
                    "compare the run directories (they hold trials.jsonl), or gate accuracy alone: a summary's per-trial outcomes are enough for that",
                ),
            ));
        }
    }
    Ok(())
}

/// Compare as `args` asks; 1 when a gate fails (or nothing was paired), 2 for flags or
/// inputs that can not be compared.
pub(crate) fn compare(args: &CompareArgs) -> Result<u8, AppError> {
    for f in &args.format {
        if !["terminal", "md", "json", "html"].contains(&f.as_str()) {
            return Err(AppError::bad(
                format!("unknown format `{f}`"),
                Some("formats are: terminal, md, json, html"),
            ));
        }
    }
    let min_accuracy = args
        .min_accuracy
        .map(|v| check_fraction("--min-accuracy", v))
        .transpose()?;
    let asked = limits::parse(&args.fail_on_regression)?;
    if args.min_cases == Some(0) {
        return Err(AppError::bad(
            "--min-cases takes the fewest cases a gated metric must be measured in, at least 1",
            Some("e.g. --min-cases 20; the output says how many cases a drop of your limit needs"),
        ));
    }
    // Every problem with the names the flags give is told in one error (the last line),
    // after the runs are loaded so unknown names can be named with the arity.
    let mut problems: Vec<String> = Vec::new();
    let variants = match (&args.candidate, args.variants.as_slice()) {
        // `--streamed` compares within the run (clap refuses it with either).
        (None, []) if args.streamed => None,
        (None, [a, b]) if a == b => {
            problems.push(format!(
                "--variants names `{a}` twice; give two different variants, e.g. --variants vague,clear"
            ));
            None
        }
        (None, [a, b]) => Some((a.clone(), b.clone())),
        (None, named) => {
            problems.push(format!(
                "--variants takes two variant names (e.g. --variants vague,clear), got {}",
                named.len()
            ));
            None
        }
        (Some(_), _) => None,
    };
    let mut baseline = load(&args.baseline)?;
    let mut candidate = match &args.candidate {
        Some(path) => {
            let run = load(path)?;
            check_same_suite(&baseline, &run, args, path)?;
            Some(run)
        }
        None => None,
    };
    // Every name a flag gives must exist on some side: a typo would otherwise filter
    // everything away (or compare a variant with nothing) and pass.
    {
        let mut sides = vec![&baseline.data];
        sides.extend(candidate.as_ref().map(|c| &c.data));
        let checks = [
            ("--variants", "variant", &args.variants, Dim::Variant),
            ("--target", "target", &args.targets, Dim::Target),
            (
                "--tool-choice",
                "tool_choice mode",
                &args.tool_choice,
                Dim::ToolChoice,
            ),
        ];
        for (flag, what, named, dim) in checks {
            problems.extend(unknown_names(flag, what, named, &values_of(&sides, dim)));
        }
    }
    if !problems.is_empty() {
        return Err(AppError::bad(problems.join("; "), None));
    }
    if args.streamed {
        check_both_modes(&baseline.data, &args.baseline)?;
    }
    let mut suite_thresholds: IndexSet<String> = baseline.thresholds.iter().cloned().collect();
    suite_thresholds.extend(candidate.iter().flat_map(|c| c.thresholds.iter().cloned()));
    let suite_thresholds: Vec<String> = suite_thresholds.into_iter().collect();
    let fail_on_regression = limits::limits(&asked, &suite_thresholds)?;
    check_per_trial(&fail_on_regression, &baseline, candidate.as_ref(), args)?;
    baseline.data.retain(&args.targets, &args.tool_choice);
    if let Some(c) = &mut candidate {
        c.data.retain(&args.targets, &args.tool_choice);
    }
    // Said with the failing gate when nothing paired but pairing across stream modes
    // would have.
    let mut stream_hint: Option<String> = None;
    let comparison: Comparison = match (&candidate, &variants) {
        (None, _) if args.streamed => match &baseline.data {
            Loaded::Trials(t) => compare::compare_streamed(t),
            Loaded::Cells(c) => compare::compare_streamed_cells(c),
        },
        (None, Some((a, b))) => match &baseline.data {
            Loaded::Trials(t) => compare::compare_variants(t, a, b),
            Loaded::Cells(c) => compare::compare_variants_of_cells(c, a, b),
        },
        (Some(candidate), _) => {
            let (baseline, candidate) = (baseline.data.side(), candidate.data.side());
            let stream_key = |k: CellKey| {
                if args.across_stream {
                    k.across_stream()
                } else {
                    k
                }
            };
            let key = stream_key(if args.across_targets {
                CellKey::IGNORE_TARGET
            } else {
                CellKey::ALL
            });
            let c = compare::compare_sides(baseline, candidate, key);
            // Runs of different models share no target: pair across targets then.
            let c = if !args.across_targets && c.overall.n == 0 {
                let across =
                    compare::compare_sides(baseline, candidate, stream_key(CellKey::IGNORE_TARGET));
                if across.overall.n > 0 {
                    warnln!("note: the runs share no target; trials are paired across targets");
                    across
                } else {
                    c
                }
            } else {
                c
            };
            // Never paired across stream modes unasked (a streamed run is not the same
            // measurement), but a comparison that pairs nothing says when that would.
            if !args.across_stream && c.overall.n == 0 {
                let across = compare::compare_sides(baseline, candidate, c.key.across_stream());
                if across.overall.n > 0 {
                    stream_hint = Some(format!(
                        "the runs pair only across stream modes ({} scored pairs): one was run with --stream and the other without; pass --across-stream to compare them",
                        across.overall.n
                    ));
                }
            }
            c
        }
        (None, None) => unreachable!("checked above"),
    };
    let gate = Gate {
        fail_on_regression,
        strict: args.strict,
        min_accuracy,
        min_cases: args.min_cases,
    };
    let mut comparison = comparison;
    comparison.suite_thresholds = suite_thresholds;
    comparison.gates = compare::gate_checks(&comparison, &gate);
    let failures = compare::check_gates(&comparison, &gate);
    let (base_name, cand_name) = match (&args.candidate, &variants) {
        (None, _) if args.streamed => (
            format!("{} not streamed", args.baseline.display()),
            "streamed".to_string(),
        ),
        (Some(c), _) => (args.baseline.display().to_string(), c.display().to_string()),
        (None, Some((a, b))) => (
            format!("{} variant {a}", args.baseline.display()),
            format!("variant {b}"),
        ),
        (None, None) => unreachable!("checked above"),
    };
    let html = || {
        compare::html::render_html(&comparison, &base_name, &cand_name, &failures)
            .map_err(|e| AppError::Incomplete(e.to_string()))
    };
    if let Some(path) = &args.html {
        std::fs::write(path, html()?).map_err(|e| {
            AppError::bad(
                format!("failed to write `{}`: {e}", path.display()),
                Some("check that the directory exists and is writable"),
            )
        })?;
    }
    for f in &args.format {
        match f.as_str() {
            "terminal" => say!("{}", compare::render_terminal(&comparison)),
            "md" => say!("{}", compare::render_markdown(&comparison)),
            "html" => say!("{}", html()?),
            _ => sayln!(
                "{}",
                serde_json::to_string_pretty(&comparison)
                    .map_err(|e| AppError::Incomplete(e.to_string()))?
            ),
        }
    }
    if failures.is_empty() {
        return Ok(exit::OK);
    }
    for f in &failures {
        match (f, &stream_hint) {
            (compare::GateFailure::NoPairs { .. }, Some(hint)) => {
                warnln!("gate failed: {f}; {hint}")
            }
            _ => warnln!("gate failed: {f}"),
        }
    }
    Ok(exit::THRESHOLD_FAILED)
}
