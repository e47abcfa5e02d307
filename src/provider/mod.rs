//! Providers: anything that answers a [`Request`] with a [`Response`].
//!
//! Live APIs ([`openai`] and every OpenAI-compatible server, [`anthropic`],
//! [`gemini`]) over the shared [`http`] layer; cassette replay and recording
//! ([`cassette`], [`record`]); a deterministic scripted model ([`scripted`], whose
//! `oracle` answers as a perfect model would: [`oracle`]); rate limits ([`limit`]).
//! [`registry`] picks the live provider for a target; [`usage`] checks the token counts
//! every answer reports.

pub mod anthropic;
pub mod cassette;
pub mod config;
pub mod crowded;
pub mod gemini;
pub mod headers;
pub mod http;
pub mod limit;
#[cfg(test)]
mod loop_tests;
pub mod openai;
pub(crate) mod openai_stream;
pub mod oracle;
pub mod record;
pub mod registry;
pub mod scripted;
pub mod scripted_judge;
pub mod stream;
pub mod types;
pub mod usage;

use std::fmt;

use async_trait::async_trait;

pub use types::{
    AssistantTurn, Message, Request, Response, StreamTiming, ToolCall, ToolChoice, ToolDefinition,
    ToolResult, Usage,
};

/// Which trial a request belongs to; providers use it for lookups and messages only
/// (it is never part of what a model sees).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrialKey {
    /// Case id.
    pub case_id: String,
    /// Target as written (`provider:model`).
    pub target: String,
    /// Description variant.
    pub variant: String,
    /// tool_choice mode.
    pub tool_choice: ToolChoice,
    /// Repeat index, from 0.
    pub repeat: u32,
}

impl fmt::Display for TrialKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "case `{}` in cell {} × {} × {} (repeat {})",
            self.case_id, self.target, self.variant, self.tool_choice, self.repeat
        )
    }
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

/// Why a provider produced no response. Every variant keeps the trial: it ends as an
/// error with this message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// Replay found no recorded response for this request.
    #[error(
        "no cassette entry for {key} (request hash {hash}); the request differs from every recorded one (changed prompt, description, schema or tool_choice?) or was never recorded; `--record` records it from the live model"
    )]
    CassetteMiss {
        /// The trial.
        key: Box<TrialKey>,
        /// The request hash looked up.
        hash: String,
    },
    /// A recorded result file (e.g. a BFCL result file) has no line for this item: the
    /// item is missing, which is not a failure of the model.
    #[error("missing: `{file}` has no result for item `{case_id}`")]
    MissingResult {
        /// The result file or directory.
        file: String,
        /// The item.
        case_id: String,
    },
    /// The scripted provider has no response for this trial.
    #[error("the script has no response for {0}")]
    NoScriptedResponse(Box<TrialKey>),
    /// A deliberate failure of the scripted `error` behaviour.
    #[error("scripted provider error for {0}")]
    Scripted(Box<TrialKey>),
    /// A live request failed (after retries where they made sense).
    #[error("{provider} request failed: {source}")]
    Http {
        /// Provider name.
        provider: String,
        /// The failure (secrets already scrubbed).
        source: http::HttpError,
    },
    /// The provider answered, but not in its documented format.
    #[error("{provider} response not understood: {message}")]
    Decode {
        /// Provider name.
        provider: String,
        /// What was missing or wrong (secrets scrubbed).
        message: String,
    },
    /// A streamed answer broke off, ended before the provider's terminal event, or
    /// held an event that is not what the API documents; the trial is an error, never
    /// a shortened answer.
    #[error("{provider} stream failed: {message}")]
    Stream {
        /// Provider name.
        provider: String,
        /// What went wrong, with the event's number (secrets scrubbed).
        message: String,
    },
    /// The request can not be expressed for this provider (e.g. a tool_choice mode it
    /// lacks); see docs/providers.md.
    #[error("{provider} can not send this request: {message}")]
    Unsupported {
        /// Provider name.
        provider: String,
        /// What is not supported.
        message: String,
    },
}

/// One live exchange: what every live provider does after building its body.
pub(crate) struct Exchange<'a> {
    /// The HTTP client.
    pub http: &'a http::Http,
    /// Provider name, for errors.
    pub provider: &'a str,
    /// Endpoint.
    pub url: &'a str,
    /// Headers (the key among them, marked sensitive).
    pub headers: &'a [http::Header],
    /// Secrets to keep out of every text.
    pub secrets: &'a [&'a str],
}

impl Exchange<'_> {
    /// POST `payload`, read the answer with `parse`, and fill latency, attempts and the
    /// raw body (already scrubbed of secrets by the HTTP layer).
    pub(crate) async fn send(
        &self,
        payload: Vec<u8>,
        parse: impl FnOnce(&serde_json::Value) -> Result<Response, String>,
    ) -> Result<Response, ProviderError> {
        let reply = self
            .http
            .post_bytes(self.url, self.headers, payload, self.secrets)
            .await
            .map_err(|source| ProviderError::Http {
                provider: self.provider.to_string(),
                source,
            })?;
        let mut response = parse(&reply.body).map_err(|message| {
            let body = reply.body.to_string();
            let start: String = body.chars().take(300).collect();
            let more = if start.len() < body.len() { "…" } else { "" };
            ProviderError::Decode {
                provider: self.provider.to_string(),
                message: http::redact(
                    &format!("{message}; body starts: {start}{more}"),
                    self.secrets,
                ),
            }
        })?;
        response.latency_ms = reply.latency.as_secs_f64() * 1000.0;
        response.attempts = reply.attempts;
        response.raw = Some(reply.body);
        Ok(response)
    }
}

/// Where a live target sends its requests, for messages about failures that will
/// repeat (a refused key, an unknown model, a server that is down).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Base URL.
    pub url: String,
    /// The environment variable the key came from, if any (never the key).
    pub key_var: Option<String>,
}

/// Something that answers requests: a live API, a cassette, a script.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Answer `request` for the trial `key`.
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError>;

    /// Where responses come from, for run metadata (`cassette (hand-written)`, `scripted`).
    fn source(&self) -> String;

    /// Where requests go, for live providers (and wrappers of one); `None` otherwise.
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
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
}
