//! Checking target names (`PROVIDER:MODEL`) where they are written: a suite's
//! `matrix.targets` and `run --target`, so a mistyped provider is refused before a run
//! instead of failing every trial (or, under replay, missing every cassette entry).
//!
//! A [`Target`] belongs to the suite's matrix, so it is defined here, below the
//! providers that answer for it.

use std::fmt;

/// The live providers a target may name (see `provider::registry` for their endpoints
/// and key variables).
pub const LIVE_PROVIDERS: &[&str] = &[
    "openai",
    "openai-compatible",
    "ollama",
    "anthropic",
    "gemini",
];

/// A provider that answers without a network, registered by the module that implements
/// it with `inventory::submit! { OfflineProvider { .. } }` (`scripted` answers from the
/// suite itself; a benchmark plugin may replay its own result files).
pub struct OfflineProvider {
    /// The provider prefix of its targets.
    pub name: &'static str,
    /// Where it is listed among the providers (lower first), so messages keep one order.
    pub rank: u8,
}

inventory::collect!(OfflineProvider);

/// Every provider prefix a target may name: the registered [`OfflineProvider`]s, then
/// the [`LIVE_PROVIDERS`]. Suites and `--target` are checked against it, so a typo is
/// refused before a run.
pub fn provider_names() -> Vec<&'static str> {
    let mut offline: Vec<&OfflineProvider> = inventory::iter::<OfflineProvider>().collect();
    offline.sort_by_key(|p| (p.rank, p.name));
    offline
        .into_iter()
        .map(|p| p.name)
        .chain(LIVE_PROVIDERS.iter().copied())
        .collect()
}

/// A model to evaluate: provider and model name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// As written, e.g. `openai:gpt-4o-mini`.
    pub spec: String,
    /// Provider name, e.g. `openai`.
    pub provider: String,
    /// Model name, e.g. `gpt-4o-mini`.
    pub model: String,
    /// API base URL given after `@` (`openai-compatible:qwen2.5@http://localhost:8000/v1`).
    pub base_url: Option<String>,
    /// Sampling parameters sent with every request (temperature, max tokens, seed,
    /// extra fields), as canonical JSON; part of the cassette key when present.
    pub params: Option<serde_json::Value>,
    /// Ask this target for streamed answers (`--stream`, `sampling.stream`). A run
    /// with both modes holds the target twice, once with each value.
    pub stream: bool,
}

/// A target string that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid target `{spec}`: {reason}")]
pub struct TargetError {
    /// What was given.
    pub spec: String,
    /// Why it is wrong.
    pub reason: String,
}

impl Target {
    /// Parse `PROVIDER:MODEL`.
    pub fn parse(spec: &str) -> Result<Target, TargetError> {
        let fail = |reason: &str| TargetError {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let (provider, model) = spec
            .split_once(':')
            .ok_or_else(|| fail("expected PROVIDER:MODEL"))?;
        if provider.is_empty()
            || !provider
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(fail(
                "the provider name must be letters, digits, `-` or `_`",
            ));
        }
        // Only a URL splits off: model names themselves may hold `@` (`claude-x@20240620`).
        let (model, base_url) = match model.find("@http://").or_else(|| model.find("@https://")) {
            Some(i) => (
                &model[..i],
                Some(model[i + 1..].trim_end_matches('/').to_string()),
            ),
            None => (model, None),
        };
        if model.trim().is_empty() {
            return Err(fail("the model name is empty"));
        }
        Ok(Target {
            spec: spec.to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            base_url,
            params: None,
            stream: false,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

/// Why a target name was refused: the message and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TargetProblem {
    /// What is wrong, with the user's text.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Parse `spec` and check that its provider exists.
pub fn check_target(spec: &str) -> Result<Target, TargetProblem> {
    let target = Target::parse(spec).map_err(|e| TargetProblem {
        message: e.to_string(),
        hint: "write PROVIDER:MODEL, e.g. `openai:gpt-4o-mini` or `scripted:oracle`".into(),
    })?;
    let known = provider_names();
    if !known.contains(&target.provider.as_str()) {
        let suggestion = crate::util::suggest::closest(&target.provider, known.iter().copied());
        let hint = match suggestion {
            Some(p) => format!(
                "did you mean {p}? (`{p}:{}`); providers are: {}",
                target.model,
                known.join(", ")
            ),
            None => format!("providers are: {}", known.join(", ")),
        };
        return Err(TargetProblem {
            message: format!("unknown provider `{}` in target `{spec}`", target.provider),
            hint,
        });
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_provider_and_model() {
        let t = Target::parse("openai-compatible:qwen2.5@http://localhost:8000/v1/").unwrap();
        assert_eq!(t.provider, "openai-compatible");
        assert_eq!(t.model, "qwen2.5");
        assert_eq!(t.base_url.as_deref(), Some("http://localhost:8000/v1"));
        let t = Target::parse("anthropic:claude-3-5-sonnet@20240620").unwrap();
        assert_eq!(t.model, "claude-3-5-sonnet@20240620");
        assert_eq!(t.base_url, None);
        assert!(Target::parse("gpt-4o").is_err());
        assert!(Target::parse(":x").is_err());
        assert!(Target::parse("openai:").is_err());
    }

    #[test]
    fn known_providers_pass_and_typos_get_a_suggestion() {
        for ok in [
            "openai:gpt-4o-mini",
            "scripted:oracle",
            "ollama:qwen2.5",
            "openai-compatible:m@http://127.0.0.1:8000/v1",
            "anthropic:claude-x",
            "gemini:gemini-2.5-flash",
        ] {
            assert_eq!(check_target(ok).map(|t| t.spec), Ok(ok.to_string()));
        }
        // Every provider the registry lists passes, those replaying files included.
        for name in provider_names() {
            let spec = format!("{name}:results/x.json");
            assert_eq!(check_target(&spec).map(|t| t.spec), Ok(spec.clone()));
        }
        let e = check_target("opnai:gpt-4o-mini").unwrap_err();
        assert_eq!(
            e.message,
            "unknown provider `opnai` in target `opnai:gpt-4o-mini`"
        );
        assert_eq!(
            e.hint,
            format!(
                "did you mean openai? (`openai:gpt-4o-mini`); providers are: {}",
                provider_names().join(", ")
            )
        );
        let e = check_target("mistral:large").unwrap_err();
        assert!(e.hint.starts_with("providers are: scripted,"), "{}", e.hint);
        let e = check_target("gpt-4o").unwrap_err();
        assert!(
            e.message.contains("expected PROVIDER:MODEL"),
            "{}",
            e.message
        );
    }
}
