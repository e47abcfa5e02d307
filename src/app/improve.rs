//! `toolgauge improve SUITE --target T --proposer P`: set a search up (the suite and its
//! held-out cases, the target's and the proposer's providers sharing one cassette, the
//! search's directory and journal), run it ([`crate::improve::search`]), and write
//! `improve.json`, `improve.html` and, with `--write`, a copy of the suite with the
//! result as a new variant.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::settings::{live_settings, providers_for, resolve, source_for};
use super::{AppError, load_suite, rundir};
use crate::cli::ImproveArgs;
use crate::exit;
use crate::improve::bench::{Bench, BenchSetup};
use crate::improve::proposer::{Logged, ModelProposer, PromptTemplate, Propose, ScriptedProposer};
use crate::improve::report::{ImproveReport, Sets};
use crate::improve::search::{CaseSets, Names, SearchLog, SearchSettings, search};
use crate::improve::wording::{Wording, fingerprint};
use crate::improve::{decide, split};
use crate::provider::{Target, ToolChoice};
use crate::report::progress::ProgressMode;
use crate::runner::RunOptions;
use crate::runner::journal::{self, Journal};
use crate::score::prices::PriceTable;
use crate::suite::Suite;

/// The files a search writes into its directory.
pub(crate) const IMPROVE_FILES: &[&str] = &[
    "trials.jsonl",
    "wordings.json",
    "proposer.jsonl",
    "improve.json",
    "improve.html",
];

/// Run `toolgauge improve`.
pub(crate) fn improve(args: &ImproveArgs) -> Result<u8, AppError> {
    check_flags(args)?;
    let mut suite = load_suite(&args.suite)?;
    if let Some(h) = &args.holdout_suite {
        add_held_out(&mut suite, h)?;
    }
    let run_args = args.run_args();
    let r = resolve(
        &suite,
        &run_args.targets,
        &run_args.variants,
        &run_args.tool_choice,
        args.repeats,
    )?;
    let mut target = r.targets[0].clone();
    let base_variant = r.variants[0].clone();
    let mode: ToolChoice = r.modes[0].clone();
    let mut live = live_settings(&run_args, &suite.sampling)?;
    let cassette = args.cassette.clone().or_else(|| suite.cassette.clone());
    let source = source_for(args.live, args.record, cassette.as_deref());
    let scripted_proposer = args
        .proposer
        .strip_prefix("scripted:")
        .filter(|m| m.ends_with(".yaml") || m.ends_with(".yml") || m.ends_with(".json"));
    let mut proposer_target = match scripted_proposer {
        Some(_) => None,
        None => Some(Target::parse(&args.proposer).map_err(|e| {
            AppError::bad(
                format!("--proposer: {e}"),
                Some("write PROVIDER:MODEL (e.g. `openai:gpt-4o`), or `scripted:FILE.yaml` with each round's answers"),
            )
        })?),
    };
    for t in std::iter::once(&mut target).chain(proposer_target.as_mut()) {
        if t.provider != "scripted" && t.provider != "bfcl-result" {
            t.params = live.params();
        }
    }
    // The proposer answers in its API's JSON mode where it has one; that is part of its
    // requests, so of their cassette keys.
    if let Some(p) = proposer_target.as_mut()
        && p.provider != "scripted"
    {
        live.json_answers.push(p.spec.clone());
        let mut params = p.params.take().unwrap_or_else(|| serde_json::json!({}));
        params["json_answers"] = serde_json::Value::Bool(true);
        p.params = Some(params);
        // One model as both: one provider, built once, with one set of parameters (JSON
        // mode only ever applies to requests without tools, so never to a trial's).
        if p.spec == target.spec {
            target.params = p.params.clone();
        }
    }
    // One call builds every provider: the target and the proposer share the cassette
    // (and its recorder, with --record).
    let suite_arc = Arc::new(suite.clone());
    let mut wanted = vec![target.clone()];
    wanted.extend(proposer_target.clone().filter(|p| p.spec != target.spec));
    let providers = providers_for(
        &suite_arc,
        &wanted,
        None,
        cassette.as_deref(),
        source,
        &live,
        (args.rpm, args.tpm),
        None,
    )?;
    drop(suite_arc);
    let prices = match &args.prices {
        Some(p) => PriceTable::with_file(p).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("write a map: MODEL: {input_per_mtok: 0.15, output_per_mtok: 0.6}"),
            )
        })?,
        None => PriceTable::default(),
    };
    let template = match &args.proposer_prompt {
        Some(p) => PromptTemplate::from_file(p).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("docs/improve.md lists the variables a proposer prompt can use"),
            )
        })?,
        None => PromptTemplate::builtin(),
    };
    let sets = case_sets(&suite, args)?;
    if let Some(out) = &args.write {
        check_write_target(args, out)?;
    }
    // Read before the directory is made: a bad script is bad input, and leaves nothing.
    let mut scripted = scripted_proposer
        .map(|path| {
            ScriptedProposer::open(Path::new(path)).map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some("write `rounds:` with each round's answer: the contract object `{candidates: [...]}` or the answer's text"),
                )
            })
        })
        .transpose()?;

    // The directory, its journal and what a resumed search left.
    let dir = search_dir(args, &suite.name)?;
    let journal_path = dir.join("trials.jsonl");
    let (journal, done) = open_journal(&journal_path, args.resume)?;
    let known = if args.resume {
        read_wordings(&dir.join("wordings.json"))?
    } else {
        IndexMapWordings::new()
    };
    let runtime = Arc::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?,
    );
    let mut model;
    let inner: &mut dyn Propose = match (scripted.as_mut(), &proposer_target) {
        (Some(s), _) => s,
        (None, Some(t)) => {
            model = ModelProposer {
                spec: t.spec.clone(),
                provider: providers[&super::stream::provider_key(t)].clone(),
                price: prices.lookup(&t.provider, &t.model),
                runtime: runtime.clone(),
                suite: suite.name.clone(),
            };
            &mut model
        }
        (None, None) => {
            return Err(AppError::bad(
                format!(
                    "--proposer `{}` is neither a model nor a script",
                    args.proposer
                ),
                Some("write PROVIDER:MODEL, or scripted:FILE.yaml"),
            ));
        }
    };
    let mut proposer = Logged::open(inner, &dir.join("proposer.jsonl")).map_err(|e| {
        AppError::Incomplete(format!(
            "failed to open `{}`: {e}",
            dir.join("proposer.jsonl").display()
        ))
    })?;
    let progress = if args.quiet {
        ProgressMode::Off
    } else if std::io::stderr().is_terminal() {
        ProgressMode::Bar
    } else {
        ProgressMode::Lines
    };
    let mut bench = Bench::new(BenchSetup {
        suite,
        targets: vec![target.clone()],
        modes: vec![mode],
        repeats: r.repeats,
        providers,
        options: RunOptions {
            concurrency: args.concurrency,
            prices,
            judge: None,
        },
        journal,
        journal_path: journal_path.display().to_string(),
        done,
        runtime,
        progress,
    });
    let settings = SearchSettings {
        base_variant,
        objective: args.objective.clone(),
        guards: guards(args),
        tolerance: args.tolerance,
        alpha: args.alpha,
        rounds: args.rounds,
        patience: args.patience,
        candidates: args.candidates,
        max_cost: args.max_cost,
        seed: args.seed,
    };
    let names = Names {
        suite_path: args.suite.display().to_string(),
        target: target.spec.clone(),
        proposer: args.proposer.clone(),
    };
    let mut log = DirLog {
        dir: dir.clone(),
        wordings: known.clone(),
        error: None,
    };
    let known_fp: HashMap<String, String> = known
        .iter()
        .map(|(n, w)| (n.clone(), fingerprint(w)))
        .collect();
    let report = search(
        &mut bench,
        &mut proposer,
        &template,
        &settings,
        &sets,
        &names,
        &known_fp,
        &mut log,
    )
    .map_err(|e| {
        AppError::Incomplete(format!(
            "{e}; what was done is in `{}`: go on with --resume --out {}",
            dir.display(),
            dir.display()
        ))
    })?;
    if let Some(e) = log.error {
        return Err(AppError::Incomplete(e));
    }
    let html =
        crate::improve::html::render(&report).map_err(|e| AppError::Incomplete(e.to_string()))?;
    write_file(&dir.join("improve.html"), html.as_bytes())?;
    if !args.quiet {
        print!("{}", crate::improve::text::summary(&report));
    }
    println!(
        "improve: {} round(s), {} accepted; improve.json and improve.html in {}",
        report.rounds.len(),
        report.accepted.len(),
        dir.display()
    );
    if let Some(out) = &args.write {
        write_copy(args, &report, out)?;
    }
    Ok(exit::OK)
}

/// Flags that need checking beyond their types.
fn check_flags(args: &ImproveArgs) -> Result<(), AppError> {
    if args.candidates == 0 {
        return Err(AppError::bad("--candidates must be at least 1", None));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(AppError::bad(
            format!(
                "--alpha must be between 0 and 1 (exclusive), got {}",
                args.alpha
            ),
            Some("0.05 is usual"),
        ));
    }
    if args.rounds == 0 {
        return Err(AppError::bad("--rounds must be at least 1", None));
    }
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(AppError::bad(
            format!(
                "--tolerance must be a non-negative number, got {}",
                args.tolerance
            ),
            None,
        ));
    }
    if let Some(v) = args.max_cost
        && !(v.is_finite() && v >= 0.0)
    {
        return Err(AppError::bad(
            format!("--max-cost must be a non-negative number, got {v}"),
            None,
        ));
    }
    for (flag, name) in std::iter::once(("--objective", args.objective.as_str()))
        .chain(args.guards.iter().map(|g| ("--guard", g.as_str())))
    {
        check_metric(flag, name)?;
    }
    Ok(())
}

fn known_metrics() -> Vec<&'static str> {
    crate::util::metric_names::METRIC_NAMES
        .iter()
        .chain(crate::score::loops::LOOP_METRICS)
        .chain(crate::score::behaviour::BEHAVIOUR_METRICS)
        .copied()
        .collect()
}

fn check_metric(flag: &str, name: &str) -> Result<(), AppError> {
    let known = known_metrics();
    if known.contains(&name) {
        return Ok(());
    }
    let hint = match crate::util::suggest::closest(name, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? metrics are: {}", known.join(", ")),
        None => format!("metrics are: {}", known.join(", ")),
    };
    Err(AppError::bad(
        format!("{flag}: unknown metric `{name}`"),
        Some(&hint),
    ))
}

fn guards(args: &ImproveArgs) -> Vec<String> {
    if args.guards.is_empty() {
        decide::DEFAULT_GUARDS
            .iter()
            .map(|g| g.to_string())
            .collect()
    } else {
        args.guards.clone()
    }
}

/// Add the cases of the `--holdout-suite` file to `suite`: the same tools by name, case
/// ids of their own.
fn add_held_out(suite: &mut Suite, path: &Path) -> Result<(), AppError> {
    let other = load_suite(path)?;
    let names = |s: &Suite| s.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    let (mine, theirs) = (names(suite), names(&other));
    let mut a = mine.clone();
    let mut b = theirs.clone();
    a.sort();
    b.sort();
    if a != b {
        return Err(AppError::bad(
            format!(
                "--holdout-suite `{}` has tools {}, but `{}` has {}",
                path.display(),
                theirs.join(", "),
                suite.path.display(),
                mine.join(", ")
            ),
            Some(
                "the held-out suite must declare the same tools (their wording is taken from the suite being improved)",
            ),
        ));
    }
    for c in other.cases {
        if suite.cases.iter().any(|m| m.id == c.id) {
            return Err(AppError::bad(
                format!(
                    "case `{}` of --holdout-suite `{}` has the id of a case of `{}`",
                    c.id,
                    path.display(),
                    suite.path.display()
                ),
                Some("give the held-out cases ids of their own"),
            ));
        }
        suite.cases.push(c);
    }
    Ok(())
}

/// The training and held-out cases: a seeded split stratified by kind, or the suite's
/// cases against those `--holdout-suite` added after them.
fn case_sets(suite: &Suite, args: &ImproveArgs) -> Result<CaseSets, AppError> {
    let n = suite.cases.len();
    let (training, held_out, source) = match &args.holdout_suite {
        Some(p) => {
            let own = load_suite(&args.suite)?.cases.len();
            let training: Vec<bool> = (0..n).map(|i| i < own).collect();
            let held: Vec<bool> = training.iter().map(|t| !t).collect();
            (training, held, format!("--holdout-suite {}", p.display()))
        }
        None => {
            let cases: Vec<(&str, crate::suite::CaseKind)> = suite
                .cases
                .iter()
                .map(|c| (c.id.as_str(), c.kind))
                .collect();
            let s = split::split(&cases, args.holdout, args.seed).map_err(|e| {
                AppError::bad(format!("{}: {e}", args.suite.display()), Some(e.hint()))
            })?;
            let held: Vec<bool> = suite
                .cases
                .iter()
                .map(|c| s.holdout.contains(&c.id))
                .collect();
            let training = held.iter().map(|h| !h).collect();
            (
                training,
                held,
                format!("split (--holdout {}, --seed {})", args.holdout, args.seed),
            )
        }
    };
    let ids = |mask: &[bool]| -> Vec<String> {
        suite
            .cases
            .iter()
            .zip(mask)
            .filter(|(_, m)| **m)
            .map(|(c, _)| c.id.clone())
            .collect()
    };
    Ok(CaseSets {
        ids: Sets {
            training: ids(&training),
            held_out: ids(&held_out),
            source,
        },
        training,
        held_out,
    })
}

/// The search's directory: `--out` (existing with `--resume`), else a new one under
/// `--reports-dir`.
fn search_dir(args: &ImproveArgs, suite: &str) -> Result<PathBuf, AppError> {
    match &args.out {
        Some(d) if args.resume => {
            if !d.join("trials.jsonl").is_file() {
                return Err(AppError::bad(
                    format!(
                        "--resume: `{}` holds no search (no trials.jsonl)",
                        d.display()
                    ),
                    Some("give the --out of the search to go on with, or drop --resume"),
                ));
            }
            Ok(d.clone())
        }
        Some(d) => {
            claim_out(d, args.overwrite)?;
            Ok(d.clone())
        }
        None => {
            let safe = crate::util::file_name::safe_name(suite);
            let stamp = jiff::Timestamp::now()
                .strftime("%Y%m%dT%H%M%SZ")
                .to_string();
            Ok(rundir::claim_fresh(&args.reports_dir, &format!("{safe}-improve-{stamp}"))?.path)
        }
    }
}

/// Claim `--out DIR` for a new search: created if missing; a search already in it is
/// replaced only with `--overwrite`, and a directory holding other files is refused.
fn claim_out(dir: &Path, overwrite: bool) -> Result<(), AppError> {
    let io = |e: std::io::Error| {
        AppError::bad(
            format!(
                "failed to use `{}` as the search's directory: {e}",
                dir.display()
            ),
            Some("check that it is a writable directory, or choose another --out"),
        )
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut ours = Vec::new();
    let mut other = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let name = entry
            .map_err(io)?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if IMPROVE_FILES.contains(&name.as_str()) {
            ours.push(name);
        } else {
            other.push(name);
        }
    }
    if ours.is_empty() && other.is_empty() {
        return Ok(());
    }
    if !other.is_empty() {
        other.sort();
        return Err(AppError::bad(
            format!(
                "--out `{}` holds files no search wrote ({})",
                dir.display(),
                other.join(", ")
            ),
            Some("choose an empty or new directory for --out"),
        ));
    }
    if !overwrite {
        return Err(AppError::bad(
            format!("`{}` already holds a search", dir.display()),
            Some(
                "go on with it with --resume, replace it with --overwrite, or choose another --out",
            ),
        ));
    }
    for name in ours {
        let p = dir.join(&name);
        std::fs::remove_file(&p).map_err(io)?;
    }
    Ok(())
}

/// The journal to append to, and the trials it holds (a resumed search's; errored ones
/// are run again).
fn open_journal(
    path: &Path,
    resume: bool,
) -> Result<(Journal, Vec<crate::score::TrialRecord>), AppError> {
    let bad = |e: &dyn std::fmt::Display| AppError::Incomplete(format!("{e}"));
    if !resume {
        let j = Journal::create(path)
            .map_err(|e| bad(&format!("failed to create `{}`: {e}", path.display())))?;
        return Ok((j, Vec::new()));
    }
    let contents = journal::load(path).map_err(|e| bad(&e))?;
    for w in contents.warnings(path) {
        warnln!("warning: {w}");
    }
    let kept: Vec<_> = contents
        .trials
        .into_iter()
        .filter(|t| t.verdict != crate::score::record::Verdict::Error)
        .collect();
    // Rewritten whole: a torn last line is not appended to.
    let j = journal::rewrite(path, &kept).map_err(|e| bad(&e))?;
    Ok((j, kept))
}

type IndexMapWordings = indexmap::IndexMap<String, Wording>;

fn read_wordings(path: &Path) -> Result<IndexMapWordings, AppError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            AppError::bad(
                format!("`{}` is damaged: {e}", path.display()),
                Some("delete it to run every wording again"),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(IndexMapWordings::new()),
        Err(e) => Err(AppError::Incomplete(format!(
            "failed to read `{}`: {e}",
            path.display()
        ))),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), AppError> {
    std::fs::write(path, bytes)
        .map_err(|e| AppError::Incomplete(format!("failed to write `{}`: {e}", path.display())))
}

/// Keeps the search's files up to date as it goes: the wordings it named, and
/// `improve.json` after every round.
struct DirLog {
    dir: PathBuf,
    wordings: IndexMapWordings,
    error: Option<String>,
}

impl DirLog {
    fn save<T: serde::Serialize>(&mut self, name: &str, value: &T) {
        let path = self.dir.join(name);
        let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
        if let Err(e) = std::fs::write(&path, text)
            && self.error.is_none()
        {
            self.error = Some(format!("failed to write `{}`: {e}", path.display()));
        }
    }
}

impl SearchLog for DirLog {
    fn named(&mut self, name: &str, wording: &Wording) {
        self.wordings.insert(name.to_string(), wording.clone());
        let w = self.wordings.clone();
        self.save("wordings.json", &w);
    }

    fn round_done(&mut self, report: &ImproveReport) {
        self.save("improve.json", report);
    }
}

/// `--write FILE` before the search: a copy outside the suite's directory would lose the
/// files the suite names relative to itself, and a file that exists is not replaced.
fn check_write_target(args: &ImproveArgs, out: &Path) -> Result<(), AppError> {
    let dir_of = |p: &Path| {
        let d = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        d.canonicalize().unwrap_or_else(|_| d.to_path_buf())
    };
    let text = std::fs::read_to_string(&args.suite).map_err(|e| {
        AppError::Incomplete(format!("failed to read `{}`: {e}", args.suite.display()))
    })?;
    let relative = crate::improve::write::relative_paths(&text, &args.suite);
    if !relative.is_empty() && dir_of(out) != dir_of(&args.suite) {
        return Err(AppError::bad(
            format!(
                "--write `{}` is not in the directory of `{}`, which names files relative to itself ({})",
                out.display(),
                args.suite.display(),
                relative.join(", ")
            ),
            Some("write the copy next to the suite, e.g. --write SUITE_DIR/NAME.improved.yaml"),
        ));
    }
    if out.exists() && !args.overwrite {
        return Err(AppError::bad(
            format!("--write `{}` exists", out.display()),
            Some("name a new file, or replace it with --overwrite (with --out)"),
        ));
    }
    Ok(())
}

/// `--write FILE`: the suite with the final wording as a new variant.
fn write_copy(args: &ImproveArgs, report: &ImproveReport, out: &Path) -> Result<(), AppError> {
    if report.accepted.is_empty() {
        warnln!(
            "note: no wording was accepted, so `{}` was not written",
            out.display()
        );
        return Ok(());
    }
    let text = std::fs::read_to_string(&args.suite).map_err(|e| {
        AppError::Incomplete(format!("failed to read `{}`: {e}", args.suite.display()))
    })?;
    let copy = crate::improve::write::with_variant(
        &text,
        &args.suite,
        &args.write_variant,
        &report.base_variant,
        &report.original,
        &report.final_wording,
    )
    .map_err(|e| AppError::bad(e.to_string(), Some(e.hint())))?;
    write_file(out, copy.as_bytes())?;
    // The copy must load as the suite did, with the new variant worded as found.
    let loaded = load_suite(out).map_err(|e| {
        AppError::Incomplete(format!(
            "the copy written to `{}` does not load ({e}); please report this",
            out.display()
        ))
    })?;
    let got = crate::improve::wording::of_suite(&loaded, &args.write_variant);
    if got != report.final_wording {
        return Err(AppError::Incomplete(format!(
            "the copy written to `{}` does not word variant `{}` as the search found; please report this",
            out.display(),
            args.write_variant
        )));
    }
    println!(
        "wrote `{}` with the final wording as variant `{}`: toolgauge compare can check it again",
        out.display(),
        args.write_variant
    );
    Ok(())
}
