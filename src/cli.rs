//! Command-line arguments (clap derive structs only; behaviour lives in [`crate::app`]).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Evaluate and benchmark how language models call tools.
#[derive(Debug, Parser)]
#[command(name = "toolgauge", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run suites against their targets (replaying cassettes) and write a run directory.
    Run(Box<RunArgs>),
    /// Check suite files and report every problem with its line.
    Validate(ValidateArgs),
    /// Print the JSON Schema of the suite format, or of `summary.json`.
    Schema(SchemaArgs),
    /// Render the reports of a finished run again, without calling any model.
    Report(ReportArgs),
    /// Compare two runs (or two description variants of one run) trial by trial, with
    /// an exact McNemar test per cell, and gate on regressions.
    Compare(CompareArgs),
    /// Work with cassettes.
    #[command(subcommand)]
    Cassette(CassetteCommand),
    /// Import a benchmark's data as suites.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Merge the run directories of `run --shard K/N` into one run directory whose
    /// reports equal an unsharded run's.
    Merge(MergeArgs),
    /// Classify a text answer as request_for_info, cannot_answer or direct (the
    /// built-in classifier), or measure the classifier on labelled answers.
    Classify(ClassifyArgs),
    /// Check tool definitions (a suite, an MCP snapshot or tools JSON file, or a live MCP
    /// server) for smells that cost accuracy or tokens; offline and deterministic.
    Lint(LintArgs),
    /// Search for better tool descriptions with a proposer model: candidates are scored
    /// on training cases and kept only when a held-out paired test shows them better.
    Improve(Box<ImproveArgs>),
    /// Look at an MCP server's tools, and pin them to a snapshot file.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// The client the official MCP conformance suite runs for each client scenario
    /// (hidden: it is a test entry, not a user command).
    #[command(hide = true)]
    McpConformance(McpConformanceArgs),
}

/// `toolgauge mcp-conformance URL`: the conformance suite appends the scenario server's
/// URL to the command and passes the scenario in its environment.
#[derive(Debug, Args)]
pub struct McpConformanceArgs {
    /// The scenario server's Streamable HTTP URL (the suite appends it).
    #[arg(value_name = "URL")]
    pub url: String,
    /// The scenario to play (the suite sets `MCP_CONFORMANCE_SCENARIO`).
    #[arg(long, env = "MCP_CONFORMANCE_SCENARIO", value_name = "NAME")]
    pub scenario: String,
    /// The scenario's context as JSON, e.g. the tool calls it expects (the suite sets
    /// `MCP_CONFORMANCE_CONTEXT` for scenarios that have one).
    #[arg(long, env = "MCP_CONFORMANCE_CONTEXT", value_name = "JSON")]
    pub context: Option<String>,
    /// Every request's timeout, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    pub timeout: u64,
}

/// `toolgauge improve`.
#[derive(Debug, Args)]
pub struct ImproveArgs {
    /// The suite whose tool descriptions to improve.
    #[arg(value_name = "SUITE")]
    pub suite: PathBuf,
    /// The model whose tool calls are scored (PROVIDER:MODEL; default: the suite's
    /// first target).
    #[arg(short, long = "target", value_name = "TARGET")]
    pub target: Option<String>,
    /// The model that proposes new wordings (PROVIDER:MODEL), or `scripted:FILE` with
    /// each round's answers written in FILE.
    #[arg(long, value_name = "PROPOSER")]
    pub proposer: String,
    /// Candidate wordings asked for per round.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub candidates: usize,
    /// Fraction of each kind's cases held out to decide acceptance (seeded split).
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.3,
        conflicts_with = "holdout_suite"
    )]
    pub holdout: f64,
    /// Held-out cases from this suite file (same tools) instead of a split: every case
    /// of SUITE trains.
    #[arg(long, value_name = "FILE")]
    pub holdout_suite: Option<PathBuf>,
    /// Significance level of the whole search (round r tests at ALPHA/2^r).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// The metric to improve (any metric `compare` reports).
    #[arg(long, value_name = "METRIC", default_value = "accuracy")]
    pub objective: String,
    /// Metrics that may not get worse (repeat or separate with commas; default:
    /// false_call_rate, invalid_call_rate, task_success).
    #[arg(long = "guard", value_name = "METRIC", value_delimiter = ',')]
    pub guards: Vec<String>,
    /// How much worse a guard may get, in its unit (0.02 = 2 points of a rate).
    #[arg(long, value_name = "AMOUNT", default_value_t = 0.0)]
    pub tolerance: f64,
    /// Rounds at most.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// Stop after this many rounds in a row that kept nothing.
    #[arg(long, default_value_t = 2)]
    pub patience: u32,
    /// Stop once the search (target and proposer) has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Seed of the training/held-out split.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The description variant the search starts from (default: the suite's first).
    #[arg(long = "variant", value_name = "NAME")]
    pub variant: Option<String>,
    /// The tool_choice mode trials run under (default: the suite's first).
    #[arg(long = "tool-choice", value_name = "MODE")]
    pub tool_choice: Option<String>,
    /// Repeats per trial, replacing the suite's.
    #[arg(long)]
    pub repeats: Option<u32>,
    /// A prompt template (minijinja) for the proposer instead of the built-in one
    /// (docs/improve.md lists its variables).
    #[arg(long, value_name = "FILE")]
    pub proposer_prompt: Option<PathBuf>,
    /// Write a copy of the suite with the final wording as a new variant to FILE.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// The new variant's name in the --write copy.
    #[arg(long, value_name = "NAME", default_value = "improved")]
    pub write_variant: String,
    /// The search's directory (default: REPORTS_DIR/SUITE-improve-TIMESTAMP).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Go on with the search in --out DIR: trials and proposer answers it holds are
    /// reused, not paid again.
    #[arg(long, requires = "out", conflicts_with = "overwrite")]
    pub resume: bool,
    /// With --out: replace a search or run already in DIR.
    #[arg(long, requires = "out")]
    pub overwrite: bool,
    /// Where search directories are created.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports_dir: PathBuf,
    /// Cassette to replay (and to record into with --record), for the target and the
    /// proposer alike, replacing the suite's `cassette`.
    #[arg(long, value_name = "FILE")]
    pub cassette: Option<PathBuf>,
    /// Call live models even where a cassette could replay.
    #[arg(long, conflicts_with = "record")]
    pub live: bool,
    /// Call live models and append every exchange to the cassette as it finishes.
    #[arg(long)]
    pub record: bool,
    /// Price table (YAML or JSON) overriding the built-in prices.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Trials in flight at once.
    #[arg(short = 'j', long, default_value_t = 8)]
    pub concurrency: usize,
    /// Seconds allowed for one HTTP attempt.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// HTTP attempts per request (retries on 429, 5xx, timeouts and broken connections).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_attempts: u32,
    /// Sampling temperature for live models, from 0 to 2.
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// Output token limit per request for live models, at least 1.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_output_tokens: Option<u32>,
    /// Client-side limit of requests per minute, per live model.
    #[arg(long, value_name = "N")]
    pub rpm: Option<std::num::NonZeroU32>,
    /// Client-side limit of tokens per minute, per live model.
    #[arg(long, value_name = "N")]
    pub tpm: Option<std::num::NonZeroU32>,
    /// Extra request fields as a JSON object, passed through to every live request.
    #[arg(long, value_name = "JSON")]
    pub extra: Option<String>,
    /// Read API keys from this environment variable instead of the provider's default:
    /// `VAR` for every live model, or `TARGET=VAR` / `PROVIDER=VAR` for one (repeatable).
    #[arg(long, value_name = "[TARGET=]VAR")]
    pub api_key_env: Vec<String>,
    /// Send this request header to every live model, or with `TARGET=` / `PROVIDER=`
    /// to some (repeatable).
    #[arg(long = "header", value_name = "[TARGET=]NAME: VALUE")]
    pub headers: Vec<String>,
    /// No progress display; only the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

impl ImproveArgs {
    /// The `run` settings the search's models share (target flags, limits, keys).
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            suites: vec![self.suite.clone()],
            resume: None,
            targets: self.target.iter().cloned().collect(),
            variants: self.variant.iter().cloned().collect(),
            tool_choice: self.tool_choice.iter().cloned().collect(),
            repeats: self.repeats,
            cassette: self.cassette.clone(),
            bfcl_strict: false,
            bfcl_underscore_names: false,
            bfcl_style: None,
            cases: Vec::new(),
            tags: Vec::new(),
            shard: None,
            out: self.out.clone(),
            overwrite: self.overwrite,
            reports_dir: self.reports_dir.clone(),
            format: Vec::new(),
            prices: self.prices.clone(),
            concurrency: self.concurrency,
            live: self.live,
            record: self.record,
            timeout: self.timeout,
            max_attempts: self.max_attempts,
            max_error_rate: 0.0,
            temperature: self.temperature,
            max_output_tokens: self.max_output_tokens,
            rpm: self.rpm,
            tpm: self.tpm,
            max_cost: self.max_cost,
            max_tokens: None,
            seed: None,
            parallel_tool_calls: None,
            stream: None,
            extra: self.extra.clone(),
            api_key_env: self.api_key_env.clone(),
            headers: self.headers.clone(),
            quiet: self.quiet,
            no_color: true,
            wide: false,
            allow_destructive: false,
            judge: None,
        }
    }
}

/// `toolgauge lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// A suite file (YAML or JSON), an MCP snapshot or JSON file of tools
    /// (`{"tools": [...]}`, an array, or any JSON holding tool objects), or an MCP server:
    /// `stdio:CMD ARGS…` (quoted as one argument) or an `http(s)://` URL.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// The output: text (grouped by tool), json, or sarif (SARIF 2.1.0, for code scanning).
    #[arg(long, value_enum, default_value = "text")]
    pub format: LintFormat,
    /// Exit 1 when a finding at or above this severity is reported.
    #[arg(long, value_enum, default_value = "error", value_name = "LEVEL")]
    pub deny: LintLevel,
    /// Rule codes not to report (added to the suite's `lint.allow`); repeatable.
    #[arg(long, value_name = "CODE")]
    pub allow: Vec<String>,
    /// `description-too-long`: the token budget of one description (default 300, or the
    /// suite's `lint.max_description_tokens`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_description_tokens: Option<u64>,
    /// `set-total-tokens`: the token budget of all tool definitions together (default
    /// 10000, or the suite's `lint.max_total_tokens`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_total_tokens: Option<u64>,
    /// A finished run of the suite (`toolgauge run --out DIR`): add what the model did
    /// there, the tools it confused and the parameters its calls got wrong.
    #[arg(long, value_name = "DIR")]
    pub run: Option<std::path::PathBuf>,
    /// Also report what OpenAI's strict mode (Structured Outputs, `strict: true`) would
    /// refuse: `additionalProperties: false` and every property required, on every object.
    #[arg(long)]
    pub openai_strict: bool,
}

/// `lint --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// Findings grouped by tool, for a terminal.
    Text,
    /// The findings as JSON (see docs/lint.md).
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

/// `lint --deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintLevel {
    /// Fail on errors only.
    Error,
    /// Fail on warnings and errors.
    Warning,
    /// Fail on any finding.
    Info,
}

/// `toolgauge mcp ...`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List a server's tools: era, descriptions, schemas, annotations and the token size
    /// of each definition.
    Tools(McpToolsArgs),
    /// Write a snapshot of a server's tools (or, with --check, check one is current).
    Snapshot(McpSnapshotArgs),
}

/// `toolgauge mcp tools`.
#[derive(Debug, Args)]
pub struct McpToolsArgs {
    /// The server: `stdio:CMD ARGS…` (quoted as one argument), an `http(s)://` URL, or a
    /// snapshot file written by `toolgauge mcp snapshot` (offline).
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// Print JSON (each tool's raw definition as the server sent it) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `toolgauge mcp snapshot`.
#[derive(Debug, Args)]
pub struct McpSnapshotArgs {
    /// The server: `stdio:CMD ARGS…` (quoted as one argument) or an `http(s)://` URL.
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// The snapshot file (JSON).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Do not write: compare the server's tools with FILE and exit 1, listing the
    /// differences, when they differ (for CI).
    #[arg(long)]
    pub check: bool,
}

/// `toolgauge import mcp`.
#[derive(Debug, Args)]
pub struct ImportMcpArgs {
    /// The server: `stdio:CMD ARGS…` (quoted as one argument), an `http(s)://` URL, or a
    /// snapshot file (offline).
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// The suite to write (YAML); its tools' snapshot is written next to it as
    /// `NAME.snapshot.json`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace the suite and snapshot files if they exist.
    #[arg(long)]
    pub force: bool,
}

/// `toolgauge classify`: one text, or a labelled file to measure on.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["text", "when2call", "jsonl"])))]
pub struct ClassifyArgs {
    /// The answer to classify (`-` reads it from standard input).
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,
    /// Measure on the example text answers of a When2Call file (answers.direct,
    /// answers.request_for_info and answers.cannot_answer of each item).
    #[arg(long, value_name = "FILE")]
    pub when2call: Option<PathBuf>,
    /// Which When2Call items: `dev` (even 0-based index, the half the classifier's cues
    /// were written on), `held-out` (odd index) or `all` (the default).
    #[arg(long, value_name = "HALF", requires = "when2call", value_parser = ["dev", "held-out", "all"])]
    pub half: Option<String>,
    /// Measure on a JSON Lines file of `{"text": ..., "label": ...}` (labels
    /// request_for_info or clarify, cannot_answer, direct).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Also list every answer classified otherwise than labelled.
    #[arg(long)]
    pub misses: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `toolgauge merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories (any order).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The merged run directory to create (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Merge even when shards are missing or stopped early: the result is recorded and
    /// reported as a partial run.
    #[arg(long)]
    pub allow_partial: bool,
    /// Outputs: terminal, json, csv, junit, md, html.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "terminal,json,csv,junit,md,html"
    )]
    pub format: Vec<String>,
    /// Fail (exit 3) when more than this fraction of trials ended in errors.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    pub max_error_rate: f64,
    /// Print only a one-line summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Never use colour.
    #[arg(long)]
    pub no_color: bool,
}

/// `toolgauge import ...`.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// The Berkeley Function Calling Leaderboard's categories (single-turn and multi-turn),
    /// one suite each.
    Bfcl(ImportBfclArgs),
    /// An MCP server's tools, as a suite with placeholder cases to fill in.
    Mcp(ImportMcpArgs),
    /// When2Call's items (NVIDIA; JSONL) as one suite: should call, should not call
    /// (cannot answer / answer directly) and ambiguous (ask for what is missing).
    When2call(ImportWhen2CallArgs),
}

/// `toolgauge import when2call`.
#[derive(Debug, Args)]
pub struct ImportWhen2CallArgs {
    /// A When2Call JSONL file, e.g. datasets/when2call/when2call_test_llm_judge.jsonl, or
    /// a directory holding it (the dataset's own layout, `data/test/`, is searched).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Directory the suite is written to (created if missing), as `<FILE stem>.json`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace the suite file if it exists.
    #[arg(long)]
    pub force: bool,
    /// How a `tool_call` item's example arguments are matched: `values` (each given
    /// argument with the example's value, strings after whitespace/case/full-width
    /// normalisation), `names` (each given argument, any valid value) or `tool` (the
    /// tool only).
    #[arg(long, value_enum, value_name = "HOW", default_value = "values")]
    pub args: When2CallArgMatch,
}

/// `--args` of `toolgauge import when2call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When2CallArgMatch {
    /// Each argument of the example, with its value.
    Values,
    /// Each argument of the example, any value its schema accepts.
    Names,
    /// The target tool only, any arguments its schema accepts.
    Tool,
}

/// `toolgauge import bfcl`.
#[derive(Debug, Args)]
pub struct ImportBfclArgs {
    /// BFCL's data directory (holding `BFCL_v4_<category>.json` and `possible_answer/`).
    #[arg(value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// Categories to import (default: all single-turn ones), single-turn or multi-turn
    /// (`multi_turn_base`, `multi_turn_miss_func`, `multi_turn_miss_param`,
    /// `multi_turn_long_context`); repeat or separate with commas.
    #[arg(long = "category", value_name = "NAME", value_delimiter = ',')]
    pub categories: Vec<String>,
    /// Directory the suites are written to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write YAML suites (`.yaml`) instead of JSON (`.json`, read about ten times faster).
    #[arg(long)]
    pub yaml: bool,
}

/// `toolgauge run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite files; each gets its own run directory.
    #[arg(required_unless_present = "resume", value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// Finish an interrupted run in DIR: trials already in its journal are not repeated
    /// (errored ones are retried); the suite, matrix and settings come from its run.json.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["suites", "out"])]
    pub resume: Option<PathBuf>,
    /// Targets (PROVIDER:MODEL), replacing the suite's; repeat for several.
    #[arg(short, long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Description variants to run, replacing the suite's; repeat or separate with commas.
    #[arg(long = "variant", value_name = "NAME", value_delimiter = ',')]
    pub variants: Vec<String>,
    /// tool_choice modes (none, auto, required, function:NAME), replacing the suite's.
    #[arg(long = "tool-choice", value_name = "MODE", value_delimiter = ',')]
    pub tool_choice: Vec<String>,
    /// Repeats per trial, replacing the suite's.
    #[arg(long)]
    pub repeats: Option<u32>,
    /// Cassette to replay, replacing the suite's `cassette`.
    #[arg(long, value_name = "FILE")]
    pub cassette: Option<PathBuf>,
    /// Suites with the bfcl profile: reproduce BFCL's checker exactly, its known defects
    /// included (greedy pairing of parallel calls; broken calls on irrelevance items
    /// count as abstaining). See docs/bfcl.md.
    #[arg(long)]
    pub bfcl_strict: bool,
    /// Suites with the bfcl profile: expect `_` where BFCL function names have `.`, as
    /// BFCL does for function-calling models.
    #[arg(long)]
    pub bfcl_underscore_names: bool,
    /// `bfcl-result` targets: the model's style, `fc` (function calling: text results
    /// are plain answers) or `prompt` (text results are Python call lists). Default:
    /// `fc` for a file with any list result, else `prompt`.
    #[arg(long, value_name = "STYLE")]
    pub bfcl_style: Option<String>,
    /// Run only the cases whose id matches: an id or a glob (`beijing-*`); repeat or
    /// separate with commas. With --tag, a case must match both.
    #[arg(
        long = "case",
        value_name = "ID",
        value_delimiter = ',',
        conflicts_with = "resume"
    )]
    pub cases: Vec<String>,
    /// Run only the cases with this tag (any of them when repeated).
    #[arg(
        long = "tag",
        value_name = "NAME",
        value_delimiter = ',',
        conflicts_with = "resume"
    )]
    pub tags: Vec<String>,
    /// Run only shard K of N (1-based): a fixed split of the trials by their identity;
    /// `toolgauge merge` joins the shards' run directories.
    #[arg(long, value_name = "K/N", conflicts_with = "resume")]
    pub shard: Option<crate::runner::select::Shard>,
    /// Run directory (default: REPORTS_DIR/SUITE-TIMESTAMP). Only with a single suite.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --out: replace the run already in DIR (its run files are deleted first;
    /// other files are never touched). Without it, a DIR holding a run is refused.
    #[arg(long, requires = "out")]
    pub overwrite: bool,
    /// Where run directories are created.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports_dir: PathBuf,
    /// Outputs: terminal, json, csv, junit, md, html (the journal and run.json are
    /// always written).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "terminal,json,csv,junit,md,html"
    )]
    pub format: Vec<String>,
    /// Price table (YAML or JSON) overriding the built-in prices.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Trials in flight at once.
    #[arg(short = 'j', long, default_value_t = 8)]
    pub concurrency: usize,
    /// Call live models even where a cassette could replay.
    #[arg(long, conflicts_with = "record")]
    pub live: bool,
    /// Call live models and append every exchange to the cassette as it finishes.
    #[arg(long)]
    pub record: bool,
    /// Seconds allowed for one HTTP attempt.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// HTTP attempts per request (retries on 429, 5xx, timeouts and broken connections).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_attempts: u32,
    /// Fail the run (exit 3) when more than this fraction of trials end in errors.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    pub max_error_rate: f64,
    /// Sampling temperature for live targets, from 0 to 2.
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// Output token limit per request for live targets, at least 1.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_output_tokens: Option<u32>,
    /// Client-side limit of requests per minute, per live target.
    #[arg(long, value_name = "N")]
    pub rpm: Option<std::num::NonZeroU32>,
    /// Client-side limit of tokens per minute, per live target.
    #[arg(long, value_name = "N")]
    pub tpm: Option<std::num::NonZeroU32>,
    /// Stop starting trials once the run has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Stop starting trials once the run has used this many tokens (input + output).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Sampling seed for live targets (where the API has one).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Allow several calls in one turn (OpenAI `parallel_tool_calls`; Anthropic
    /// `disable_parallel_tool_use` when false).
    #[arg(long, value_name = "BOOL")]
    pub parallel_tool_calls: Option<bool>,
    /// Ask live targets for streamed answers (server-sent events) and time the first
    /// token and the first tool-call byte: `--stream` (= on), `--stream=off`, or
    /// `--stream=both` (each live target runs once each way; compare them with
    /// `toolgauge compare RUN --streamed`). Overrides the suite's `sampling.stream`.
    #[arg(
        long,
        value_name = "on|off|both",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on"
    )]
    pub stream: Option<String>,
    /// Extra request fields as a JSON object, passed through to every live request.
    #[arg(long, value_name = "JSON")]
    pub extra: Option<String>,
    /// Read API keys from this environment variable instead of the provider's default:
    /// `VAR` for every live target, or `TARGET=VAR` / `PROVIDER=VAR` for one (repeatable).
    #[arg(long, value_name = "[TARGET=]VAR")]
    pub api_key_env: Vec<String>,
    /// Send this request header to every live target, or with `TARGET=` / `PROVIDER=`
    /// to some (repeatable; for gateways and proxies). Never written to run files;
    /// give it again with `--resume`.
    #[arg(long = "header", value_name = "[TARGET=]NAME: VALUE")]
    pub headers: Vec<String>,
    /// Print only a one-line summary per suite.
    #[arg(short, long)]
    pub quiet: bool,
    /// Never use colour.
    #[arg(long)]
    pub no_color: bool,
    /// Show every column of the terminal table, whatever the terminal's width (by
    /// default columns that do not fit are left out, least important first).
    #[arg(long)]
    pub wide: bool,
    /// Let loop cases execute every tool of the suite's MCP server (`tools_from.mcp`),
    /// even those whose annotations say they may change the world (refused by default).
    #[arg(long)]
    pub allow_destructive: bool,
    /// A judge model (`provider:model`) that decides the behaviour of text answers and
    /// checks `final.rubric`, instead of the suite's `judge:` (and of the built-in
    /// classifier).
    #[arg(long, value_name = "TARGET")]
    pub judge: Option<String>,
}

/// `toolgauge report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory (holding run.json and trials.jsonl).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// Outputs: terminal, json, csv, junit, md, html.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "terminal,json,csv,junit,md,html"
    )]
    pub format: Vec<String>,
    /// Never use colour.
    #[arg(long)]
    pub no_color: bool,
    /// Show every column of the terminal table, whatever the terminal's width.
    #[arg(long)]
    pub wide: bool,
}

/// `toolgauge compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run directory (or a summary.json / trials.jsonl inside it).
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,
    /// The candidate run directory; omit it with --variants or --streamed.
    #[arg(value_name = "CANDIDATE", required_unless_present_any = ["variants", "streamed"])]
    pub candidate: Option<PathBuf>,
    /// Compare two description variants A,B inside the baseline run instead.
    #[arg(
        long,
        value_name = "A,B",
        value_delimiter = ',',
        conflicts_with = "candidate"
    )]
    pub variants: Vec<String>,
    /// Pair trials across different targets (a new model against the old one).
    #[arg(long)]
    pub across_targets: bool,
    /// Pair trials across stream modes: a run with --stream against one without
    /// (cells match on target, variant and tool_choice only).
    #[arg(long)]
    pub across_stream: bool,
    /// Compare inside the baseline run, made with `--stream both`: its non-streamed
    /// trials (baseline) against its streamed ones (candidate).
    #[arg(long, conflicts_with_all = ["candidate", "variants"])]
    pub streamed: bool,
    /// Compare only these targets (on both sides); repeat or separate with commas.
    #[arg(long = "target", value_name = "TARGET", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Compare only these tool_choice modes (on both sides); repeat or separate with commas.
    #[arg(long = "tool-choice", value_name = "MODE", value_delimiter = ',')]
    pub tool_choice: Vec<String>,
    /// Fail (exit 1) when a cell's accuracy drops by more than POINTS (0-100) and the
    /// drop is significant (paired test by case, 95%). METRIC=POINTS gates another rate
    /// as summary.json names it (task_success=5, recovery=10, error_rate=2: a rise is a
    /// regression where lower is better); thresholds=POINTS every rate the suite's
    /// thresholds name. Repeat the flag or separate with commas.
    #[arg(long, value_name = "[METRIC=]POINTS", value_delimiter = ',')]
    pub fail_on_regression: Vec<String>,
    /// Count drops beyond --fail-on-regression even when not significant.
    #[arg(long)]
    pub strict: bool,
    /// Fail (exit 1) a gated metric measured in fewer than N cases on both sides (per
    /// cell, and pooled): a comparison too small to detect the drop fails instead of
    /// passing.
    #[arg(long, value_name = "N", requires = "fail_on_regression")]
    pub min_cases: Option<u64>,
    /// Fail (exit 1) when a candidate cell's accuracy is below this fraction (0.8 = 80%).
    #[arg(long, value_name = "FRACTION")]
    pub min_accuracy: Option<f64>,
    /// Outputs printed in order: terminal, md, json, html.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "terminal"
    )]
    pub format: Vec<String>,
    /// Also write the comparison as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Which format `toolgauge schema` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    /// The suite file format (docs/suite.schema.json).
    Suite,
    /// A run's summary.json (docs/summary.schema.json).
    Summary,
}

/// `toolgauge schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The format.
    #[arg(value_enum, default_value = "suite")]
    pub kind: SchemaKind,
}

/// `toolgauge validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Suite files.
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
}

/// `toolgauge cassette ...`.
#[derive(Debug, Subcommand)]
pub enum CassetteCommand {
    /// Write a hand-written cassette for a suite from a response script.
    Write(CassetteWriteArgs),
}

/// `toolgauge cassette write`.
#[derive(Debug, Args)]
pub struct CassetteWriteArgs {
    /// The suite.
    #[arg(value_name = "SUITE")]
    pub suite: PathBuf,
    /// The script of responses (see docs/cassettes.md).
    #[arg(long, value_name = "FILE")]
    pub script: PathBuf,
    /// The cassette to write (default: the suite's `cassette`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Targets to key the entries for (default: the suite's targets).
    #[arg(short, long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// A note stored in the cassette header.
    #[arg(long)]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
