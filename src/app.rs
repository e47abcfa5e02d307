//! The command-line glue: resolve settings (suite + flags), build providers, run, write
//! the run directory, print, and map every outcome to an exit code in one place.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;

use crate::cli::{CassetteCommand, CassetteWriteArgs, Cli, Command, RunArgs, ValidateArgs};
use crate::exit;
use crate::provider::cassette::{
    Cassette, CassetteEntry, CassetteHeader, CassetteSource, CassetteWriter, ReplayProvider,
    RequestHasher,
};
use crate::provider::scripted::ScriptedProvider;
use crate::provider::{Provider, Target, ToolChoice};
use crate::report::terminal::{self, TerminalOptions};
use crate::report::{self, MatrixRef, RunMeta, RunReport, SuiteRef, Summary, VariantTokens};
use crate::runner::{self, Plan, RunOptions};
use crate::score::prices::PriceTable;
use crate::score::{TrialRecord, Verdict};
use crate::suite::{self, Suite};

/// An error that ends a command, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad input (suite, flags, cassette, script): exit 2.
    #[error("{message}")]
    BadInput {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
    /// The run could not be carried out or written: exit 3.
    #[error("{0}")]
    Incomplete(String),
}

impl AppError {
    fn bad(message: impl Into<String>, hint: Option<&str>) -> AppError {
        AppError::BadInput {
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }

    /// The exit code.
    pub fn code(&self) -> u8 {
        match self {
            AppError::BadInput { .. } => exit::BAD_INPUT,
            AppError::Incomplete(_) => exit::RUN_INCOMPLETE,
        }
    }

    fn print(&self) {
        eprintln!("error: {self}");
        if let AppError::BadInput { hint: Some(h), .. } = self {
            eprintln!("hint: {h}");
        }
    }
}

/// Run the parsed command line; returns the exit code.
pub fn main(cli: Cli) -> u8 {
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Validate(args) => Ok(validate(&args)),
        Command::Schema => {
            println!("{}", suite_schema());
            Ok(exit::OK)
        }
        Command::Cassette(CassetteCommand::Write(args)) => cassette_write(&args).map(|()| exit::OK),
    };
    result.unwrap_or_else(|e| {
        e.print();
        e.code()
    })
}

/// The suite format's JSON Schema, generated from the serde model.
pub fn suite_schema() -> String {
    let schema = schemars::schema_for!(crate::suite::model::SuiteFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

fn load_suite(path: &Path) -> Result<Suite, AppError> {
    suite::load(path).map_err(|e| AppError::BadInput {
        message: e.to_string().trim_end().to_string(),
        hint: None,
    })
}

fn validate(args: &ValidateArgs) -> u8 {
    let mut code = exit::OK;
    for path in &args.suites {
        match suite::load(path) {
            Ok(s) => println!(
                "{}: ok ({} tools, {} cases, variants: {})",
                path.display(),
                s.tools.len(),
                s.cases.len(),
                s.variants.join(", ")
            ),
            Err(e) => {
                eprintln!("error: {}", e.to_string().trim_end());
                code = exit::BAD_INPUT;
            }
        }
    }
    code
}

/// The matrix after command-line overrides, checked against the suite.
struct Resolved {
    targets: Vec<Target>,
    variants: Vec<String>,
    modes: Vec<ToolChoice>,
    repeats: u32,
}

fn resolve(
    suite: &Suite,
    targets: &[String],
    variants: &[String],
    modes: &[String],
    repeats: Option<u32>,
) -> Result<Resolved, AppError> {
    let target_specs = if targets.is_empty() {
        &suite.matrix.targets
    } else {
        targets
    };
    if target_specs.is_empty() {
        return Err(AppError::bad(
            format!(
                "suite `{}` names no target and no --target was given",
                suite.path.display()
            ),
            Some(
                "add `matrix: {targets: [openai:gpt-4o-mini]}` to the suite, or pass --target scripted:oracle to try it offline",
            ),
        ));
    }
    let targets = target_specs
        .iter()
        .map(|t| {
            Target::parse(t).map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some("write PROVIDER:MODEL, e.g. openai:gpt-4o-mini or scripted:oracle"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let variants = if variants.is_empty() {
        suite.matrix.variants.clone()
    } else {
        variants.to_vec()
    };
    for v in &variants {
        for t in &suite.tools {
            if t.description(v).is_none() {
                return Err(AppError::bad(
                    format!("tool `{}` has no description variant `{v}`", t.name),
                    Some(&format!(
                        "the suite's variants are: {}",
                        suite.variants.join(", ")
                    )),
                ));
            }
        }
    }
    let modes = if modes.is_empty() {
        suite.matrix.tool_choice.clone()
    } else {
        modes
            .iter()
            .map(|m| {
                m.parse::<ToolChoice>().map_err(|e| {
                    AppError::bad(e, Some("modes are none, auto, required and function:NAME"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    for m in &modes {
        if let ToolChoice::Function(f) = m
            && !suite.tools.iter().any(|t| &t.name == f)
        {
            return Err(AppError::bad(
                format!("--tool-choice names unknown function `{f}`"),
                Some("name one of the suite's tools"),
            ));
        }
    }
    let repeats = repeats.unwrap_or(suite.matrix.repeats);
    if repeats == 0 || repeats > suite::compile::MAX_REPEATS {
        return Err(AppError::bad(
            format!(
                "--repeats must be between 1 and {}, got {repeats}",
                suite::compile::MAX_REPEATS
            ),
            None,
        ));
    }
    Ok(Resolved {
        targets,
        variants,
        modes,
        repeats,
    })
}

fn providers_for(
    suite: &Arc<Suite>,
    targets: &[Target],
    cassette_flag: Option<&Path>,
) -> Result<HashMap<String, Arc<dyn Provider>>, AppError> {
    let mut out: HashMap<String, Arc<dyn Provider>> = HashMap::new();
    let mut cassette: Option<Arc<Cassette>> = None;
    for t in targets {
        let p: Arc<dyn Provider> = if t.provider == "scripted" {
            Arc::new(ScriptedProvider::new(&t.model, suite.clone()).map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some(&format!(
                        "scripted models are: {}, or a script file (.yaml)",
                        crate::provider::scripted::BEHAVIOURS
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                )
            })?)
        } else {
            let c = match &cassette {
                Some(c) => c.clone(),
                None => {
                    let path = cassette_flag.map(Path::to_path_buf).or_else(|| suite.cassette.clone()).ok_or_else(|| {
                        AppError::bad(
                            format!("target `{t}` needs a cassette to replay, and live calls are not available in this build"),
                            Some("set `cassette:` in the suite or pass --cassette FILE; try --target scripted:oracle for an offline run"),
                        )
                    })?;
                    let c = Arc::new(Cassette::open(&path).map_err(|e| {
                        AppError::bad(e.to_string(), Some("see docs/cassettes.md for the format"))
                    })?);
                    if c.torn_tail {
                        eprintln!(
                            "warning: cassette `{}` ends with a torn line (an interrupted recording); it was ignored",
                            path.display()
                        );
                    }
                    cassette = Some(c.clone());
                    c
                }
            };
            Arc::new(ReplayProvider::new(c, t.clone()))
        };
        out.insert(t.spec.clone(), p);
    }
    Ok(out)
}

fn run_dir_name(suite: &str) -> String {
    let safe: String = suite
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    format!("{safe}-{stamp}")
}

fn fresh_dir(base: &Path, name: &str) -> PathBuf {
    let first = base.join(name);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|i| base.join(format!("{name}-{i}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

fn run(args: &RunArgs) -> Result<u8, AppError> {
    for f in &args.format {
        if f != "terminal" && !report::FILE_FORMATS.contains(&f.as_str()) {
            return Err(AppError::bad(
                format!("unknown format `{f}`"),
                Some("formats are: terminal, json, csv"),
            ));
        }
    }
    if args.out.is_some() && args.suites.len() > 1 {
        return Err(AppError::bad(
            "--out names one run directory, but several suites were given",
            Some("drop --out to get one directory per suite under --reports-dir"),
        ));
    }
    let prices = match &args.prices {
        Some(p) => PriceTable::with_file(p).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("write a map: MODEL: {input_per_mtok: 0.15, output_per_mtok: 0.6}"),
            )
        })?,
        None => PriceTable::default(),
    };
    let options = RunOptions {
        concurrency: args.concurrency,
        prices,
    };
    let mut code = exit::OK;
    for path in &args.suites {
        let c = match run_suite(path, args, &options) {
            Ok(c) => c,
            Err(e) => {
                e.print();
                e.code()
            }
        };
        code = worst(code, c);
    }
    Ok(code)
}

/// The more serious of two exit codes (2 and 3 outrank 1, which outranks 0).
fn worst(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        exit::OK => 0,
        exit::THRESHOLD_FAILED => 1,
        _ => 2 + c,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn run_suite(path: &Path, args: &RunArgs, options: &RunOptions) -> Result<u8, AppError> {
    let suite = Arc::new(load_suite(path)?);
    let r = resolve(
        &suite,
        &args.targets,
        &args.variants,
        &args.tool_choice,
        args.repeats,
    )?;
    let providers = providers_for(&suite, &r.targets, args.cassette.as_deref())?;
    let plan = Plan::new(suite.clone(), &r.targets, &r.variants, &r.modes, r.repeats);
    let trials = plan.trials();

    let dir = match &args.out {
        Some(d) => d.clone(),
        None => fresh_dir(&args.reports_dir, &run_dir_name(&suite.name)),
    };
    let io = |what: &str, e: std::io::Error| {
        AppError::Incomplete(format!("failed to {what} `{}`: {e}", dir.display()))
    };
    std::fs::create_dir_all(&dir).map_err(|e| io("create the run directory", e))?;

    // Loading the tokenizer takes a noticeable fraction of a second: count the variants'
    // tool-definition tokens on another thread while the trials run.
    let variant_tokens = |plan: &Plan| -> Vec<VariantTokens> {
        r.variants
            .iter()
            .map(|v| VariantTokens {
                variant: v.clone(),
                tool_definition_tokens: plan.tool_tokens(v),
            })
            .collect()
    };
    let mut meta = RunMeta {
        run_format: report::RUN_FORMAT,
        toolgauge_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: SuiteRef {
            name: suite.name.clone(),
            path: path.display().to_string(),
            hash: suite.hash.clone(),
        },
        matrix: MatrixRef {
            targets: r.targets.iter().map(|t| t.spec.clone()).collect(),
            variants: r.variants.clone(),
            tool_choice: r.modes.iter().map(ToString::to_string).collect(),
            repeats: r.repeats,
        },
        sources: r
            .targets
            .iter()
            .map(|t| (t.spec.clone(), providers[&t.spec].source()))
            .collect(),
        tools: r
            .variants
            .iter()
            .map(|v| (v.clone(), plan.tools_for(v).as_ref().clone()))
            .collect::<IndexMap<_, _>>(),
        // Filled in when the run ends (counted while the trials run).
        tool_definition_tokens: IndexMap::new(),
        trials_planned: trials.len() as u64,
        trials_written: 0,
        started_at: jiff::Timestamp::now().to_string(),
        finished_at: None,
    };
    report::write_meta(&dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;

    let journal_path = dir.join("trials.jsonl");
    let mut journal = runner::journal::Journal::create(&journal_path)
        .map_err(|e| io("create the journal in", e))?;
    let mut records: Vec<Option<TrialRecord>> = vec![None; trials.len()];
    let mut journal_error: Option<std::io::Error> = None;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?;
    let variant_tokens = std::thread::scope(|scope| {
        let counting = scope.spawn(|| variant_tokens(&plan));
        runtime.block_on(runner::execute(
            &plan,
            trials,
            &providers,
            options,
            |i, record| {
                if journal_error.is_none()
                    && let Err(e) = journal.append(&record)
                {
                    journal_error = Some(e);
                }
                records[i] = Some(record);
            },
        ));
        // The counting thread only tokenizes; should it ever panic, count again here.
        counting.join().unwrap_or_else(|_| variant_tokens(&plan))
    });
    meta.tool_definition_tokens = variant_tokens
        .iter()
        .map(|v| (v.variant.clone(), v.tool_definition_tokens))
        .collect();
    if let Some(e) = journal_error {
        return Err(io("write the journal in", e));
    }
    let records: Vec<TrialRecord> = records.into_iter().flatten().collect();
    meta.trials_written = records.len() as u64;
    meta.finished_at = Some(jiff::Timestamp::now().to_string());
    report::write_meta(&dir, &meta).map_err(|e| AppError::Incomplete(e.to_string()))?;

    let cells: Vec<(String, String, String)> = plan
        .cells
        .iter()
        .map(|c| {
            (
                c.target.spec.clone(),
                c.variant.clone(),
                c.tool_choice.to_string(),
            )
        })
        .collect();
    let summary = Summary::build(
        &suite.name,
        &cells,
        &variant_tokens,
        &records,
        &suite.thresholds,
    );
    let report = RunReport {
        meta,
        trials: records,
        summary,
    };
    report::write_files(&dir, &report, &args.format)
        .map_err(|e| AppError::Incomplete(e.to_string()))?;

    let color =
        !args.no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    if args.quiet {
        println!("{}", terminal::one_line(&report, &dir));
    } else if args.format.iter().any(|f| f == "terminal") {
        print!(
            "{}",
            terminal::render(
                &report,
                TerminalOptions {
                    color,
                    max_failures: 20,
                    width: 200,
                }
            )
        );
        println!("\nrun written to {}", dir.display());
    }
    let errors = report
        .trials
        .iter()
        .filter(|t| t.verdict == Verdict::Error)
        .count();
    if errors > 0 {
        let first = report
            .trials
            .iter()
            .find(|t| t.verdict == Verdict::Error)
            .and_then(|t| t.reasons.first())
            .map(|r| r.message.clone())
            .unwrap_or_default();
        eprintln!(
            "error: {errors} of {} trials could not be completed; first: {first}",
            report.trials.len()
        );
        return Ok(exit::RUN_INCOMPLETE);
    }
    if !report.summary.thresholds_ok() {
        let failed: Vec<String> = report
            .summary
            .thresholds
            .iter()
            .filter(|t| !t.ok)
            .map(|t| format!("{} ({})", t.metric, t.scope))
            .collect();
        eprintln!("threshold failed: {}", failed.join(", "));
        return Ok(exit::THRESHOLD_FAILED);
    }
    Ok(exit::OK)
}

fn cassette_write(args: &CassetteWriteArgs) -> Result<(), AppError> {
    let suite = Arc::new(load_suite(&args.suite)?);
    let r = resolve(&suite, &args.targets, &[], &[], None)?;
    let out = args
        .out
        .clone()
        .or_else(|| suite.cassette.clone())
        .ok_or_else(|| {
            AppError::bad(
                "no cassette path: the suite has no `cassette:` and no --out was given",
                None,
            )
        })?;
    let script = args.script.display().to_string();
    if !(script.ends_with(".yaml") || script.ends_with(".yml") || script.ends_with(".json")) {
        return Err(AppError::bad(
            format!("script `{script}` must be a .yaml, .yml or .json file"),
            None,
        ));
    }
    let scripted = ScriptedProvider::new(&script, suite.clone())
        .map_err(|e| AppError::bad(e.to_string(), Some("see docs/cassettes.md")))?;
    let plan = Plan::new(suite.clone(), &r.targets, &r.variants, &r.modes, r.repeats);
    let single = (r.targets.len() == 1).then(|| &r.targets[0]);
    let header = CassetteHeader {
        toolgauge_cassette: crate::provider::cassette::CASSETTE_VERSION,
        source: CassetteSource::HandWritten,
        provider: single.map(|t| t.provider.clone()),
        model: single.map(|t| t.model.clone()),
        recorded_at: Some(jiff::Timestamp::now().to_string()),
        note: args.note.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?;
    // Entries stream to a temporary file beside the cassette, which replaces the old one
    // only when every trial had a response: memory stays flat for large suites, and a
    // failed write never leaves a half cassette behind.
    let tmp = out.with_extension("jsonl.partial");
    let write_err = |e: std::io::Error| {
        AppError::Incomplete(format!("failed to write `{}`: {e}", tmp.display()))
    };
    let mut w = CassetteWriter::create(&tmp, &header).map_err(write_err)?;
    let hasher = RequestHasher::default();
    let mut written = 0usize;
    let mut missing = Vec::new();
    for t in plan.trials() {
        let (request, key) = plan.request(t);
        let target = &plan.cells[t.cell].target;
        match runtime.block_on(scripted.complete(&request, &key)) {
            Ok(response) => {
                let entry = CassetteEntry {
                    key: hasher.hash(target, &request),
                    repeat: key.repeat,
                    case_id: key.case_id.clone(),
                    target: key.target.clone(),
                    variant: key.variant.clone(),
                    tool_choice: key.tool_choice.to_string(),
                    request: Some(request),
                    response,
                    raw: None,
                };
                w.append(&entry).map_err(write_err)?;
                written += 1;
            }
            Err(e) => missing.push(e.to_string()),
        }
    }
    drop(w);
    if !missing.is_empty() {
        let _ = std::fs::remove_file(&tmp);
        return Err(AppError::bad(
            format!(
                "{} trial(s) have no scripted response; first: {}",
                missing.len(),
                missing[0]
            ),
            Some(
                "add a `responses` entry for each case (filters by variant, tool_choice and repeat are optional)",
            ),
        ));
    }
    std::fs::rename(&tmp, &out)
        .map_err(|e| AppError::Incomplete(format!("failed to write `{}`: {e}", out.display())))?;
    println!("wrote {written} entries to {}", out.display());
    Ok(())
}
