//! Settings: the suite's matrix with command-line overrides, where each target's
//! answers come from (replay, live, record), and the providers that give them.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::AppError;
use crate::cli::RunArgs;
use crate::provider::cassette::{Cassette, ReplayProvider};
use crate::provider::http::HttpSettings;
use crate::provider::limit::RateLimited;
use crate::provider::record::{Recorder, RecordingProvider};
use crate::provider::registry::{self, LiveSettings, RegistryError};
use crate::provider::{Provider, Target, ToolChoice};
use crate::scripted::ScriptedProvider;
use crate::suite::model::SamplingSpec;
use crate::suite::{self, Suite};
use crate::util::limits::MAX_REPEATS;

/// The matrix after command-line overrides, checked against the suite.
pub(crate) struct Resolved {
    pub targets: Vec<Target>,
    pub variants: Vec<String>,
    pub modes: Vec<ToolChoice>,
    pub repeats: u32,
}

pub(crate) fn resolve(
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
                if suite.profile.name() == Some(crate::bfcl::profile::NAME) {
                    "replay a model's BFCL results with --target bfcl-result:FILE (or its result directory)"
                } else {
                    "add `matrix: {targets: [openai:gpt-4o-mini]}` to the suite, or pass --target scripted:oracle to try it offline"
                },
            ),
        ));
    }
    let targets = target_specs
        .iter()
        .map(|t| {
            suite::targets::check_target(t).map_err(|e| AppError::bad(e.message, Some(&e.hint)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let variants = if variants.is_empty() {
        suite.matrix.variants.clone()
    } else {
        variants.to_vec()
    };
    for v in &variants {
        // A variant declared nowhere would silently run every tool's default wording.
        if !suite.variants.contains(v) {
            let known = suite.variants.iter().map(String::as_str);
            return Err(AppError::bad(
                format!("unknown variant `{v}`"),
                Some(&format!(
                    "{}the suite's variants are: {}",
                    crate::util::suggest::closest(v, known)
                        .map_or(String::new(), |s| format!("did you mean `{s}`? ")),
                    suite.variants.join(", ")
                )),
            ));
        }
        for t in suite
            .tools
            .iter()
            .chain(suite.cases.iter().flat_map(|c| c.tools.iter().flatten()))
        {
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
            && !suite
                .tools
                .iter()
                .chain(suite.cases.iter().flat_map(|c| c.tools.iter().flatten()))
                .any(|t| &t.name == f)
        {
            return Err(AppError::bad(
                format!("--tool-choice names unknown function `{f}`"),
                Some("name one of the suite's tools"),
            ));
        }
    }
    let repeats = repeats.unwrap_or(suite.matrix.repeats);
    if repeats == 0 || repeats > MAX_REPEATS {
        return Err(AppError::bad(
            format!(
                "--repeats must be between 1 and {}, got {repeats}",
                MAX_REPEATS
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

/// Where non-scripted targets get their answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// From the cassette (strict: a missing entry is an error).
    Replay,
    /// From the live API.
    Live,
    /// From the live API, each exchange appended to the cassette.
    Record,
}

impl Source {
    /// The name stored in run.json.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Replay => "replay",
            Source::Live => "live",
            Source::Record => "record",
        }
    }

    /// The source named in a run.json.
    pub(crate) fn parse(s: &str) -> Option<Source> {
        match s {
            "replay" => Some(Source::Replay),
            "live" => Some(Source::Live),
            "record" => Some(Source::Record),
            _ => None,
        }
    }
}

/// Replay when a cassette is given, unless `--live` or `--record`; live without one.
pub(crate) fn source_for(args_live: bool, args_record: bool, cassette: Option<&Path>) -> Source {
    if args_record {
        Source::Record
    } else if args_live || cassette.is_none() {
        Source::Live
    } else {
        Source::Replay
    }
}

/// Refuse a temperature or output token limit outside its range
/// ([`crate::suite::sampling`]); `names` are how the user gave them (flags, or a
/// `run.json`'s fields).
pub(crate) fn check_sampling(
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    names: [&str; 2],
) -> Result<(), AppError> {
    use crate::suite::sampling::{
        MAX_OUTPUT_TOKENS_HINT, TEMPERATURE_HINT, max_output_tokens_problem, temperature_problem,
    };
    if let Some(why) = temperature.and_then(|t| temperature_problem(names[0], t)) {
        return Err(AppError::bad(why, Some(TEMPERATURE_HINT)));
    }
    if let Some(why) = max_tokens.and_then(|n| max_output_tokens_problem(names[1], n)) {
        return Err(AppError::bad(why, Some(MAX_OUTPUT_TOKENS_HINT)));
    }
    Ok(())
}

/// Live settings: each flag, else the suite's `sampling` value; `--extra` fields go on
/// top of the suite's.
pub(crate) fn live_settings(
    args: &RunArgs,
    sampling: &SamplingSpec,
) -> Result<LiveSettings, AppError> {
    let mut extra = sampling.extra.clone().unwrap_or_default();
    match &args.extra {
        None => {}
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(m)) => extra.extend(m),
            _ => {
                return Err(AppError::bad(
                    format!("--extra must be a JSON object, got `{text}`"),
                    Some("e.g. --extra '{\"top_p\": 0.9}'"),
                ));
            }
        },
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(AppError::bad(
            format!(
                "--timeout must be a positive number of seconds, got {}",
                args.timeout
            ),
            None,
        ));
    }
    check_sampling(
        args.temperature,
        args.max_output_tokens,
        ["--temperature", "--max-output-tokens"],
    )?;
    if !(0.0..=1.0).contains(&args.max_error_rate) {
        return Err(AppError::bad(
            format!(
                "--max-error-rate must be between 0 and 1, got {}",
                args.max_error_rate
            ),
            None,
        ));
    }
    Ok(LiveSettings {
        http: HttpSettings {
            timeout: Duration::from_secs_f64(args.timeout),
            max_attempts: args.max_attempts.max(1),
            ..HttpSettings::default()
        },
        temperature: args
            .temperature
            .or(sampling.temperature.as_ref().map(|t| t.value)),
        max_tokens: args
            .max_output_tokens
            .or(sampling.max_output_tokens.as_ref().map(|n| n.value)),
        seed: args.seed.or(sampling.seed),
        parallel_tool_calls: args.parallel_tool_calls.or(sampling.parallel_tool_calls),
        extra,
        json_answers: Vec::new(),
        api_key_env: args.api_key_env.clone(),
        headers: args
            .headers
            .iter()
            .map(|h| crate::provider::headers::parse_entry(h))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some("write `--header 'NAME: VALUE'` or `--header 'PROVIDER=NAME: VALUE'`"),
                )
            })?,
    })
}

/// The provider of every target, and of the judge target `judge` when it is not one
/// of them (a judge that is a run target shares its provider, so its rate limits).
/// The judge's provider is built as the targets' are: it replays from and records
/// into the same cassette.
#[allow(clippy::too_many_arguments)]
pub(crate) fn providers_for(
    suite: &Arc<Suite>,
    targets: &[Target],
    judge: Option<&Target>,
    cassette_flag: Option<&Path>,
    source: Source,
    live: &LiveSettings,
    limits: (Option<NonZeroU32>, Option<NonZeroU32>),
    bfcl_style: Option<crate::bfcl::result::ResultStyle>,
) -> Result<HashMap<String, Arc<dyn Provider>>, AppError> {
    let mut out: HashMap<String, Arc<dyn Provider>> = HashMap::new();
    let cassette_path = cassette_flag
        .map(Path::to_path_buf)
        .or_else(|| suite.cassette.clone());
    let mut cassette: Option<Arc<Cassette>> = None;
    let mut recorder: Option<Arc<Recorder>> = None;
    // The rate limits of each target spec: its streamed and unstreamed forms share them.
    let mut limited: HashMap<String, Arc<RateLimited>> = HashMap::new();
    // A judge never streams: it shares the unstreamed form of a run target's provider.
    let judge = judge.filter(|j| !targets.iter().any(|t| t.spec == j.spec && !t.stream));
    for t in targets.iter().chain(judge) {
        let p: Arc<dyn Provider> = if t.provider == "scripted"
            && t.model == crate::scripted::judge::MODEL
        {
            Arc::new(crate::scripted::judge::ScriptedJudge)
        } else if t.provider == "bfcl-result" {
            let p = crate::bfcl::result::BfclResultProvider::open(Path::new(&t.model), bfcl_style).map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some("a BFCL result file has one JSON object per line with `id` and `result` (docs/bfcl.md)"),
                )
            })?;
            Arc::new(p)
        } else if t.provider == "scripted" {
            Arc::new(ScriptedProvider::new(&t.model, suite.clone()).map_err(|e| {
                AppError::bad(
                    e.to_string(),
                    Some(&format!(
                        "scripted models are: {}, {}, or a script file (.yaml); `coin-N` is the coin seeded with N",
                        crate::scripted::BEHAVIOURS
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", "),
                        crate::scripted::judge::MODEL
                    )),
                )
            })?)
        } else if source == Source::Replay {
            let c = match &cassette {
                Some(c) => c.clone(),
                None => {
                    // `source_for` only replays when a cassette path exists.
                    let path = cassette_path.clone().unwrap_or_default();
                    let c = Arc::new(Cassette::open(&path).map_err(|e| {
                        AppError::bad(e.to_string(), Some("see docs/cassettes.md for the format; --live calls the model instead"))
                    })?);
                    if c.torn_tail {
                        warnln!(
                            "warning: cassette `{}` ends with a torn line (an interrupted recording); it was ignored",
                            path.display()
                        );
                    }
                    cassette = Some(c.clone());
                    c
                }
            };
            Arc::new(ReplayProvider::new(c, t.clone()))
        } else {
            let live_provider = registry::live_provider(t, live).map_err(|e| {
                let hint = match &e {
                    RegistryError::UnknownProvider(_) => format!(
                        "providers are: scripted, bfcl-result, {}",
                        registry::LIVE_PROVIDERS.join(", ")
                    ),
                    RegistryError::MissingKey { .. } => "export the key, or pass --api-key-env NAME; shipped suites replay without a key (drop --live/--record)".to_string(),
                    _ => "see docs/providers.md".to_string(),
                };
                AppError::bad(e.to_string(), Some(&hint))
            })?;
            let live_provider: Arc<dyn Provider> = match limits {
                (None, None) => live_provider,
                (rpm, tpm) => {
                    let l = Arc::new(match limited.get(&t.spec) {
                        Some(first) => RateLimited::sharing(live_provider, first),
                        None => RateLimited::new(live_provider, rpm, tpm),
                    });
                    limited.entry(t.spec.clone()).or_insert_with(|| l.clone());
                    l
                }
            };
            if source == Source::Record {
                let rec = match &recorder {
                    Some(r) => r.clone(),
                    None => {
                        let path = cassette_path.clone().ok_or_else(|| {
                            AppError::bad(
                                "--record needs a cassette to write",
                                Some("set `cassette:` in the suite or pass --cassette FILE"),
                            )
                        })?;
                        // A mistyped directory would otherwise be created in silence.
                        let new_dir = path
                            .parent()
                            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
                            .map(Path::to_path_buf);
                        let r = Arc::new(
                            Recorder::open(&path, &super::stream::distinct(targets)).map_err(
                                |e| {
                                    AppError::bad(
                                        e.to_string(),
                                        Some("record into a new file with --cassette FILE"),
                                    )
                                },
                            )?,
                        );
                        if let Some(d) = new_dir {
                            warnln!(
                                "note: created the directory `{}` for the cassette `{}`",
                                d.display(),
                                path.display()
                            );
                        }
                        recorder = Some(r.clone());
                        r
                    }
                };
                Arc::new(RecordingProvider::new(live_provider, t.clone(), rec))
            } else {
                live_provider
            }
        };
        out.insert(super::stream::provider_key(t), p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn spanned<T>(value: T) -> crate::suite::span::Spanned<T> {
        crate::suite::span::Spanned {
            value,
            line: 0,
            column: 0,
        }
    }

    fn run_args(flags: &[&str]) -> Box<RunArgs> {
        let mut argv = vec!["toolgauge", "run", "s.yaml"];
        argv.extend_from_slice(flags);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Run(a) => a,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn flags_override_the_suite_sampling_and_extra_fields_merge() {
        let suite = SamplingSpec {
            temperature: Some(spanned(0.0)),
            max_output_tokens: Some(spanned(256)),
            seed: None,
            parallel_tool_calls: None,
            stream: None,
            extra: Some(
                serde_json::json!({"top_p": 1, "user": "suite"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        };
        let live = live_settings(
            &run_args(&["--temperature", "0.7", "--extra", r#"{"user": "cli"}"#]),
            &suite,
        )
        .unwrap();
        assert_eq!(live.temperature, Some(0.7));
        assert_eq!(live.max_tokens, Some(256));
        assert_eq!(live.extra["top_p"], 1);
        assert_eq!(live.extra["user"], "cli");
        let e = live_settings(&run_args(&["--extra", "[1]"]), &suite).unwrap_err();
        assert!(
            e.to_string().contains("--extra must be a JSON object"),
            "{e}"
        );
    }

    #[test]
    fn the_judge_gets_its_own_provider_unless_it_is_a_run_target() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            "name: s\ntools: [{name: f, description: d, parameters: {type: object}}]\ncases: [{id: a, kind: should_not_call, prompt: hi}]\n",
        )
        .unwrap();
        let suite = Arc::new(crate::suite::load(&path).unwrap());
        let live = live_settings(&run_args(&[]), &Default::default()).unwrap();
        let target = |s: &str| Target::parse(s).unwrap();
        let targets = [target("scripted:oracle")];
        let build = |judge: &str| {
            let mut specs: Vec<String> = providers_for(
                &suite,
                &targets,
                Some(&target(judge)),
                None,
                Source::Live,
                &live,
                (None, None),
                None,
            )
            .unwrap()
            .into_keys()
            .collect();
            specs.sort();
            specs
        };
        assert_eq!(
            build("scripted:judge"),
            ["scripted:judge", "scripted:oracle"]
        );
        // A judge that is a run target is answered by that target's provider.
        assert_eq!(build("scripted:oracle"), ["scripted:oracle"]);
    }

    #[test]
    fn a_cassette_replays_unless_live_or_record() {
        let c = Some(Path::new("c.jsonl"));
        assert_eq!(source_for(false, false, c), Source::Replay);
        assert_eq!(source_for(true, false, c), Source::Live);
        assert_eq!(source_for(false, true, c), Source::Record);
        assert_eq!(source_for(false, false, None), Source::Live);
        for s in [Source::Replay, Source::Live, Source::Record] {
            assert_eq!(Source::parse(s.as_str()), Some(s));
        }
    }
}
