//! Which live provider serves a target, with its endpoint and key.
//!
//! | provider | endpoint (override with `MODEL@URL`) | key variable |
//! |---|---|---|
//! | `openai` | `https://api.openai.com/v1` | `OPENAI_API_KEY` |
//! | `openai-compatible` | required: `MODEL@URL` | none, or `--api-key-env NAME` |
//! | `ollama` | `http://localhost:11434/v1` (OpenAI-compatible) | none |
//! | `anthropic` | `https://api.anthropic.com/v1` | `ANTHROPIC_API_KEY` |
//! | `gemini` | `https://generativelanguage.googleapis.com/v1beta` | `GEMINI_API_KEY`, else `GOOGLE_API_KEY` |

use std::sync::Arc;

use serde_json::{Map, Value};

use super::Provider;
use super::Target;
use super::anthropic::AnthropicProvider;
use super::config::{ProviderConfig, key_from_env};
use super::gemini::GeminiProvider;
use super::headers::{HeaderEntry, headers_for};
use super::http::{Http, HttpSettings};
use super::openai::OpenAiProvider;

pub use crate::suite::targets::{LIVE_PROVIDERS, provider_names};

/// Settings shared by every live target of a run.
#[derive(Debug, Clone, Default)]
pub struct LiveSettings {
    /// Timeouts and retries.
    pub http: HttpSettings,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit.
    pub max_tokens: Option<u32>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// OpenAI `parallel_tool_calls` (Anthropic: `disable_parallel_tool_use`).
    pub parallel_tool_calls: Option<bool>,
    /// Extra request fields passed through.
    pub extra: Map<String, Value>,
    /// Key variables instead of the providers' defaults: `VAR` for every target, or
    /// `TARGET=VAR` / `PROVIDER=VAR` for one (the most specific wins).
    pub api_key_env: Vec<String>,
    /// Custom request headers (`--header`), parsed; see [`super::headers`].
    pub headers: Vec<HeaderEntry>,
    /// The targets (by spec) asked for JSON answers in their JSON mode, where the API
    /// has one (see [`super::config::ProviderConfig::json_answers`]).
    pub json_answers: Vec<String>,
}

impl LiveSettings {
    /// The target's sampling parameters as they enter the cassette key, or `None`.
    pub fn params(&self) -> Option<Value> {
        let mut p = Map::new();
        if let Some(t) = self.temperature {
            p.insert("temperature".into(), Value::from(t));
        }
        if let Some(m) = self.max_tokens {
            p.insert("max_tokens".into(), Value::from(m));
        }
        if let Some(s) = self.seed {
            p.insert("seed".into(), Value::from(s));
        }
        if let Some(b) = self.parallel_tool_calls {
            p.insert("parallel_tool_calls".into(), Value::from(b));
        }
        if !self.extra.is_empty() {
            p.insert("extra".into(), Value::Object(self.extra.clone()));
        }
        (!p.is_empty()).then_some(Value::Object(p))
    }
}

/// Why a live provider could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    /// No live provider has this name.
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    /// The key variable is unset.
    #[error("target `{target}` needs an API key in the environment variable {var}")]
    MissingKey {
        /// The target.
        target: String,
        /// The variable(s) looked at.
        var: String,
    },
    /// `openai-compatible` without a URL.
    #[error(
        "target `{0}` needs the server's URL: write `openai-compatible:MODEL@http://HOST:PORT/v1`"
    )]
    MissingUrl(String),
    /// The HTTP client could not be built.
    #[error("failed to set up HTTP: {0}")]
    Http(String),
}

/// The key variable `--api-key-env` names for `target`: a `TARGET=VAR` entry, else a
/// `PROVIDER=VAR` entry, else a plain `VAR` entry. The split is at the last `=`, since a
/// target's URL may hold `=` but a variable name does not.
pub fn key_var_for<'a>(target: &Target, entries: &'a [String]) -> Option<&'a str> {
    let scoped = |name: &str| {
        entries
            .iter()
            .filter_map(|e| e.rsplit_once('='))
            .find(|(t, _)| *t == name)
            .map(|(_, v)| v)
    };
    scoped(&target.spec)
        .or_else(|| scoped(&target.provider))
        .or_else(|| {
            entries
                .iter()
                .find(|e| !e.contains('='))
                .map(String::as_str)
        })
}

/// The live provider for `target`.
pub fn live_provider(
    target: &Target,
    settings: &LiveSettings,
) -> Result<Arc<dyn Provider>, RegistryError> {
    let (default_url, key_vars): (Option<&str>, &[&str]) = match target.provider.as_str() {
        "openai" => (Some("https://api.openai.com/v1"), &["OPENAI_API_KEY"]),
        "openai-compatible" => (None, &[]),
        "ollama" => (Some("http://localhost:11434/v1"), &[]),
        "anthropic" => (Some("https://api.anthropic.com/v1"), &["ANTHROPIC_API_KEY"]),
        "gemini" => (
            Some("https://generativelanguage.googleapis.com/v1beta"),
            &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        ),
        other => return Err(RegistryError::UnknownProvider(other.to_string())),
    };
    let url = target
        .base_url
        .as_deref()
        .or(default_url)
        .ok_or_else(|| RegistryError::MissingUrl(target.spec.clone()))?;
    let mut config = ProviderConfig::new(&target.provider, &target.model, url);
    (config.api_key, config.key_var) = match key_var_for(target, &settings.api_key_env) {
        Some(var) => (
            Some(key_from_env(var).ok_or_else(|| RegistryError::MissingKey {
                target: target.spec.clone(),
                var: var.to_string(),
            })?),
            Some(var.to_string()),
        ),
        None if key_vars.is_empty() => (None, None),
        None => key_vars
            .iter()
            .find_map(|v| key_from_env(v).map(|k| (Some(k), Some(v.to_string()))))
            .ok_or_else(|| RegistryError::MissingKey {
                target: target.spec.clone(),
                var: key_vars.join(" or "),
            })?,
    };
    config.headers = headers_for(target, &settings.headers);
    config.temperature = settings.temperature;
    config.max_tokens = settings.max_tokens;
    config.seed = settings.seed;
    config.parallel_tool_calls = settings.parallel_tool_calls;
    config.extra = settings.extra.clone();
    config.stream = target.stream;
    config.json_answers = settings.json_answers.contains(&target.spec);
    let http = Http::for_url(settings.http.clone(), url)
        .map_err(|e| RegistryError::Http(e.to_string()))?;
    Ok(match target.provider.as_str() {
        "anthropic" => Arc::new(AnthropicProvider::new(config, http)),
        "gemini" => Arc::new(GeminiProvider::new(config, http)),
        _ => Arc::new(OpenAiProvider::new(config, http)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_providers_and_missing_urls_are_named() {
        let s = LiveSettings::default();
        let t = Target::parse("mystery:model").unwrap();
        assert_eq!(
            live_provider(&t, &s).err(),
            Some(RegistryError::UnknownProvider("mystery".into()))
        );
        let t = Target::parse("openai-compatible:qwen2.5").unwrap();
        assert!(matches!(
            live_provider(&t, &s),
            Err(RegistryError::MissingUrl(_))
        ));
        let t = Target::parse("openai-compatible:qwen2.5@http://127.0.0.1:9/v1").unwrap();
        assert!(live_provider(&t, &s).is_ok());
    }

    #[test]
    fn a_missing_key_names_the_variable() {
        let s = LiveSettings {
            api_key_env: vec!["TOOLGAUGE_TEST_SURELY_UNSET_KEY".into()],
            ..LiveSettings::default()
        };
        let t = Target::parse("openai:gpt-4o-mini").unwrap();
        let e = live_provider(&t, &s).err().unwrap().to_string();
        assert!(e.contains("TOOLGAUGE_TEST_SURELY_UNSET_KEY"), "{e}");
    }

    #[test]
    fn key_variables_per_target_provider_or_all() {
        let entries: Vec<String> = [
            "ALL_KEY",
            "anthropic=ANTHROPIC_WORK_KEY",
            "openai-compatible:qwen@http://h/v1?a=b=DASHSCOPE_KEY",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = |s: &str| Target::parse(s).unwrap();
        assert_eq!(
            key_var_for(&t("anthropic:claude-x"), &entries),
            Some("ANTHROPIC_WORK_KEY")
        );
        assert_eq!(
            key_var_for(&t("openai-compatible:qwen@http://h/v1?a=b"), &entries),
            Some("DASHSCOPE_KEY")
        );
        assert_eq!(key_var_for(&t("openai:gpt-4o"), &entries), Some("ALL_KEY"));
        assert_eq!(key_var_for(&t("openai:gpt-4o"), &[]), None);
    }

    #[test]
    fn params_enter_the_key_only_when_set() {
        assert_eq!(LiveSettings::default().params(), None);
        let s = LiveSettings {
            temperature: Some(0.0),
            seed: Some(7),
            ..LiveSettings::default()
        };
        assert_eq!(
            s.params(),
            Some(serde_json::json!({"temperature": 0.0, "seed": 7}))
        );
    }
}
