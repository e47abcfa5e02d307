//! Setting a run up: the suite's providers, answers and judge, and its plan, from the
//! resolved matrix and settings (what `run` and `--resume` share), and the BFCL flags.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;

use super::AppError;
use super::paths;
use super::settings::{Source, providers_for};
use crate::bfcl::profile::BfclProfile;
use crate::bfcl::result::ResultStyle;
use crate::cli::RunArgs;
use crate::provider::registry::LiveSettings;
use crate::provider::{Provider, Target};
use crate::report::{self, MatrixRef, RunMeta, RunPaths, RunSettings, SuiteRef};
use crate::runner::Plan;
use crate::suite::{Profile, Suite};

/// Everything a run needs once it is set up.
pub(super) struct Prepared {
    pub(super) suite: Arc<Suite>,
    pub(super) plan: Plan,
    pub(super) providers: HashMap<String, Arc<dyn Provider>>,
    /// The judge target and its provider, when the run has a judge.
    pub(super) judge: Option<(Target, Arc<dyn Provider>)>,
    pub(super) dir: PathBuf,
    pub(super) meta: RunMeta,
}

/// Names the suite in a setting error: with several suites a flag alone is ambiguous.
pub(super) fn in_suite(path: &Path) -> impl Fn(AppError) -> AppError + '_ {
    move |e| match e {
        AppError::BadInput { message, hint } => AppError::BadInput {
            message: format!("{}: {message}", path.display()),
            hint,
        },
        other => other,
    }
}

/// Where a run's non-scripted targets get their answers, with what settings.
pub(super) struct Answers {
    pub(super) live: LiveSettings,
    pub(super) source: Source,
    pub(super) cassette: Option<PathBuf>,
    /// `--bfcl-style` for `bfcl-result` targets (`None`: detected per file).
    pub(super) bfcl_style: Option<ResultStyle>,
    /// The judge target as written (`--judge`, else the suite's `judge:`).
    pub(super) judge: Option<String>,
    /// Whether live targets stream (`--stream`, else the suite's `sampling.stream`).
    pub(super) stream: crate::suite::stream::StreamMode,
}

/// Set up providers and the plan for `suite` with the resolved matrix and settings.
pub(super) fn prepare(
    path: &Path,
    suite: Arc<Suite>,
    mut r: super::settings::Resolved,
    answers: Answers,
    args: &RunArgs,
    dir: PathBuf,
) -> Result<Prepared, AppError> {
    let Answers {
        live,
        source,
        cassette,
        bfcl_style,
        judge,
        stream,
    } = answers;
    let live = &live;
    let in_suite = in_suite(path);
    let mut judge = super::judge::judge_target(&suite, judge.as_deref(), path)?;
    // Sampling parameters belong to every non-scripted target (and so to its cassette
    // keys), whether it replays, records or runs live.
    for t in r.targets.iter_mut().chain(judge.as_mut()) {
        if t.provider != "scripted" && t.provider != "bfcl-result" {
            t.params = live.params();
        }
    }
    // Each target in each stream mode of the run (once, unstreamed, without the axis).
    let targets = super::stream::expand(&r.targets, stream);
    let providers = providers_for(
        &suite,
        &targets,
        judge.as_ref(),
        cassette.as_deref(),
        source,
        live,
        (args.rpm, args.tpm),
        bfcl_style,
    )
    .map_err(in_suite)?;
    let judge = judge.map(|t| {
        let p = providers[&t.spec].clone();
        (t, p)
    });
    if let Some(d) = &suite.distractors {
        for w in d.warnings(&suite.cases) {
            warnln!("warning: {w}");
        }
    }
    let plan = Plan::new(suite.clone(), &targets, &r.variants, &r.modes, r.repeats);
    let locations = RunPaths {
        suite: Some(paths::locate(path, &dir)),
        cassette: cassette.as_deref().map(|c| paths::locate(c, &dir)),
        working_dir: paths::working_dir(),
        prices: args.prices.as_deref().map(|p| paths::locate(p, &dir)),
    };
    let meta = RunMeta {
        run_format: report::RUN_FORMAT,
        toolgauge_version: env!("CARGO_PKG_VERSION").to_string(),
        suite: SuiteRef {
            name: suite.name.clone(),
            path: path.display().to_string(),
            hash: suite.hash.clone(),
            description: suite.description.clone(),
        },
        matrix: MatrixRef {
            targets: r.targets.iter().map(|t| t.spec.clone()).collect(),
            variants: r.variants.clone(),
            tool_choice: r.modes.iter().map(ToString::to_string).collect(),
            repeats: r.repeats,
        },
        sources: targets
            .iter()
            .map(|t| {
                let key = super::stream::provider_key(t);
                (t.spec.clone(), providers[&key].source())
            })
            .collect(),
        tools: r
            .variants
            .iter()
            .map(|v| (v.clone(), plan.tools_for(v).as_ref().clone()))
            .collect::<IndexMap<_, _>>(),
        // Filled in at the end (counted while the trials run).
        tool_definition_tokens: IndexMap::new(),
        variant_details: IndexMap::new(),
        trials_planned: 0,
        trials_written: 0,
        started_at: jiff::Timestamp::now().to_string(),
        finished_at: None,
        status: "running".into(),
        stop_reason: None,
        settings: RunSettings {
            source: source.as_str().into(),
            cassette: cassette.map(|c| c.display().to_string()),
            temperature: live.temperature,
            max_tokens: live.max_tokens,
            seed: live.seed,
            parallel_tool_calls: live.parallel_tool_calls,
            extra: live.extra.clone(),
            api_key_env: live.api_key_env.clone(),
            plugins: plugin_settings(&suite, bfcl_style),
            paths: locations,
            // Filled in by `execute`, from the table it charges.
            prices: None,
            judge: judge.as_ref().map(|(t, _)| t.spec.clone()),
            stream: stream.streams().then(|| stream.as_str().to_string()),
        },
        selection: None,
        merged_from: Vec::new(),
    };
    Ok(Prepared {
        suite,
        plan,
        providers,
        judge,
        dir,
        meta,
    })
}

/// The oracle is a suite's self-test: name the expectations no answer can satisfy, and
/// the loops it can not judge offline (their calls run on the suite's MCP server). Only
/// for the trials `p`'s plan runs on `scripted:oracle` (after `--case`, `--tag` and
/// `--shard`), under the run's variants: a case the run leaves out is not its concern.
pub(super) fn self_test_warnings(p: &Prepared) {
    let oracle =
        |c: &crate::runner::Cell| c.target.provider == "scripted" && c.target.model == "oracle";
    let mut trials: Vec<(usize, crate::provider::ToolChoice)> = Vec::new();
    for t in p.plan.trials() {
        let cell = &p.plan.cells[t.cell];
        let pair = (t.case, cell.tool_choice.clone());
        if oracle(cell) && !trials.contains(&pair) {
            trials.push(pair);
        }
    }
    if trials.is_empty() {
        return;
    }
    // Case by case, in the suite's order, as the warnings have always listed them.
    trials.sort_by_key(|(case, _)| *case);
    let found = crate::scripted::oracle::self_test(&p.suite, &trials, &p.meta.matrix.variants);
    if let Some(w) = crate::scripted::oracle::warning(&p.suite.name, &found.unmet) {
        warnln!("warning: {w}");
    }
    let server = p.suite.mcp.as_ref().and_then(|m| m.server.as_ref());
    if let Some(server) = server
        && let Some(w) =
            crate::scripted::oracle::live_warning(&p.suite.name, &server.to_string(), &found.live)
    {
        warnln!("warning: {w}");
    }
}

/// What `run.json` keeps of the plugins' settings: the profile's flags and the style
/// `bfcl-result` targets read, sorted by key.
fn plugin_settings(
    suite: &Suite,
    bfcl_style: Option<ResultStyle>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = suite.profile.run_settings();
    if let Some(s) = bfcl_style {
        out.insert(crate::bfcl::result::STYLE_KEY.into(), s.as_str().into());
    }
    out.sort_keys();
    out
}

/// `--bfcl-style`, checked.
pub(super) fn bfcl_style(flag: Option<&str>) -> Result<Option<ResultStyle>, AppError> {
    flag.map(|f| {
        f.parse::<ResultStyle>()
            .map_err(|e| AppError::bad(e, Some("--bfcl-style is fc or prompt")))
    })
    .transpose()
}

/// `--bfcl-strict` and `--bfcl-underscore-names` on a suite with the `bfcl` profile.
pub(super) fn apply_bfcl_flags(
    suite: &mut Suite,
    strict: bool,
    underscore: bool,
) -> Result<(), AppError> {
    if !(strict || underscore) {
        return Ok(());
    }
    match suite.profile.downcast::<BfclProfile>() {
        Some(p) => {
            let mut p = p.clone();
            p.strict |= strict;
            p.underscore_names |= underscore;
            suite.profile = Profile::declared(Arc::new(p));
            Ok(())
        }
        None => Err(AppError::bad(
            format!(
                "--bfcl-strict and --bfcl-underscore-names apply to suites with the bfcl profile; `{}` has none",
                suite.path.display()
            ),
            Some("import BFCL suites with `toolgauge import bfcl`, or drop the flags"),
        )),
    }
}
