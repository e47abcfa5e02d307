//! The stream axis of a run: which mode it runs in (`--stream`, else the suite's
//! `sampling.stream`), which targets may stream, and each target as it runs in each
//! mode.
//!
//! A streamed target keeps its spec; it carries `stream: true`, and `"stream": true`
//! joins its sampling parameters, so its cassette keys differ from the unstreamed
//! target's (a streamed recording replays only with `--stream`) while every key of a
//! run without streaming stays as it was.

use serde_json::Value;

use super::AppError;
use crate::provider::Target;
use crate::provider::registry::LIVE_PROVIDERS;
use crate::suite::Suite;
use crate::suite::stream::{FLAG_HINT, StreamMode};

/// The run's stream mode: `--stream` when given, else the suite's `sampling.stream`
/// (checked when the suite loaded), else off.
pub(crate) fn mode(flag: Option<&str>, suite: &Suite) -> Result<StreamMode, AppError> {
    match flag {
        Some(f) => StreamMode::parse_flag(f).map_err(|e| AppError::bad(e, Some(FLAG_HINT))),
        None => Ok(suite
            .sampling
            .stream
            .as_ref()
            .and_then(|s| s.value.mode().ok())
            .unwrap_or_default()),
    }
}

/// Refuse a streaming run with a target that can not stream: scripted targets and BFCL
/// result files answer from files, with no stream to time. `from_flag` says whether
/// the mode came from `--stream` (else from the suite), so the message names it.
pub(crate) fn check_targets(
    targets: &[Target],
    mode: StreamMode,
    from_flag: bool,
    suite: &Suite,
) -> Result<(), AppError> {
    if !mode.streams() {
        return Ok(());
    }
    let Some(t) = targets
        .iter()
        .find(|t| !LIVE_PROVIDERS.contains(&t.provider.as_str()))
    else {
        return Ok(());
    };
    let asked = if from_flag {
        format!("--stream={mode}")
    } else {
        format!(
            "suite `{}` sets `sampling.stream: {}`",
            suite.path.display(),
            match mode {
                StreamMode::Both => "both",
                _ => "true",
            }
        )
    };
    let hint = if from_flag {
        "only live targets stream (or replay a streamed recording with --cassette); drop --stream, or run this target in a run of its own"
    } else {
        "only live targets stream (or replay a streamed recording with --cassette); pass --stream=off to run this target without streaming"
    };
    Err(AppError::bad(
        format!(
            "{asked}, but target `{}` can not stream: it answers from {}, not from a server",
            t.spec,
            if t.provider == "scripted" {
                "the suite or a script"
            } else {
                "a file"
            }
        ),
        Some(hint),
    ))
}

/// Every target in each mode it runs in, in run order: a target's unstreamed form
/// first, then its streamed one ([`StreamMode::flags`]). Streamed targets carry
/// `"stream": true` in their parameters (and so in their cassette keys).
pub(crate) fn expand(targets: &[Target], mode: StreamMode) -> Vec<Target> {
    let mut out = Vec::with_capacity(targets.len() * mode.flags().len());
    for t in targets {
        for &stream in mode.flags() {
            let mut t = t.clone();
            t.stream = stream;
            if stream {
                t.params = Some(with_stream(t.params.take()));
            }
            out.push(t);
        }
    }
    out
}

/// `params` with `"stream": true` added (a new object when there were none).
fn with_stream(params: Option<Value>) -> Value {
    let mut map = match params {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    map.insert("stream".into(), Value::Bool(true));
    Value::Object(map)
}

/// The key of a target's provider in a run: its spec, with the stream mode joined for
/// a streamed target (a run with both modes has two providers per target).
pub(crate) fn provider_key(t: &Target) -> String {
    crate::score::stream::identity_target(&t.spec, t.stream).into_owned()
}

/// The targets once each (the first form of each spec), for what is listed per
/// target: `run.json`'s matrix, a recording's header.
pub(crate) fn distinct(targets: &[Target]) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for t in targets {
        if !out.iter().any(|o| o.spec == t.spec) {
            out.push(t.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn suite(sampling: &str) -> Suite {
        let yaml = format!(
            "name: s\n{sampling}\ntools: [{{name: f, description: d, parameters: {{type: object}}}}]\ncases: [{{id: a, kind: should_not_call, prompt: hi}}]\n"
        );
        crate::suite::load_str(&yaml, std::path::Path::new("s.yaml")).unwrap()
    }

    #[test]
    fn the_flag_overrides_the_suite() {
        let s = suite("sampling: {stream: both}");
        assert_eq!(mode(None, &s).unwrap(), StreamMode::Both);
        assert_eq!(mode(Some("off"), &s).unwrap(), StreamMode::Off);
        assert_eq!(mode(Some("on"), &s).unwrap(), StreamMode::On);
        assert_eq!(
            mode(None, &suite("sampling: {stream: true}")).unwrap(),
            StreamMode::On
        );
        assert_eq!(mode(None, &suite("")).unwrap(), StreamMode::Off);
        let e = mode(Some("always"), &s).unwrap_err();
        assert_eq!(e.code(), crate::exit::BAD_INPUT);
        assert!(e.to_string().contains("--stream is `always`"), "{e}");
    }

    #[test]
    fn both_gives_each_target_twice_and_only_the_streamed_one_a_stream_param() {
        let mut t = Target::parse("openai:gpt-4o-mini").unwrap();
        t.params = Some(json!({"temperature": 0.0}));
        let bare = Target::parse("ollama:qwen").unwrap();
        let out = expand(&[t.clone(), bare], StreamMode::Both);
        let shown: Vec<(String, bool, Option<Value>)> = out
            .iter()
            .map(|t| (t.spec.clone(), t.stream, t.params.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "openai:gpt-4o-mini".into(),
                    false,
                    Some(json!({"temperature": 0.0}))
                ),
                (
                    "openai:gpt-4o-mini".into(),
                    true,
                    Some(json!({"temperature": 0.0, "stream": true}))
                ),
                ("ollama:qwen".into(), false, None),
                ("ollama:qwen".into(), true, Some(json!({"stream": true}))),
            ]
        );
        assert_eq!(provider_key(&out[0]), "openai:gpt-4o-mini");
        assert_eq!(provider_key(&out[1]), "openai:gpt-4o-mini × stream");
        assert_eq!(distinct(&out).len(), 2);
        // Off leaves every target as it was.
        assert_eq!(expand(std::slice::from_ref(&t), StreamMode::Off), [t]);
    }

    #[test]
    fn scripted_targets_can_not_stream() {
        let s = suite("");
        let targets = [
            Target::parse("openai:m").unwrap(),
            Target::parse("scripted:oracle").unwrap(),
        ];
        assert!(check_targets(&targets, StreamMode::Off, true, &s).is_ok());
        assert!(check_targets(&targets[..1], StreamMode::Both, true, &s).is_ok());
        let e = check_targets(&targets, StreamMode::On, true, &s).unwrap_err();
        assert_eq!(e.code(), crate::exit::BAD_INPUT);
        let text = e.to_string();
        assert!(
            text.contains("--stream=on, but target `scripted:oracle` can not stream"),
            "{text}"
        );
        let e = check_targets(&targets, StreamMode::Both, false, &s).unwrap_err();
        assert!(
            e.to_string()
                .contains("suite `s.yaml` sets `sampling.stream: both`"),
            "{e}"
        );
        let bfcl = [Target::parse("bfcl-result:r.json").unwrap()];
        assert!(check_targets(&bfcl, StreamMode::On, true, &s).is_err());
    }
}
