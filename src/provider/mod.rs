//! Providers: anything that answers a [`Request`] with a [`Response`].
//!
//! Live APIs ([`openai`] and every OpenAI-compatible server, [`anthropic`],
//! [`gemini`]) over the shared [`http`] layer; cassette replay and recording
//! ([`cassette`], [`record`]); rate limits ([`limit`]). The scripted models (the oracle
//! among them) are built on the layers above this one and live in [`crate::scripted`].
//! [`registry`] picks the live provider for a target; [`usage`] checks the token counts
//! every answer reports.

pub mod anthropic;
pub mod anthropic_stream;
pub mod cassette;
pub mod config;
pub mod gemini;
pub mod gemini_stream;
pub mod headers;
pub mod http;
pub mod limit;
#[cfg(test)]
mod loop_tests;
pub mod openai;
pub(crate) mod openai_stream;
pub mod record;
pub mod registry;
pub mod stream;
pub mod types;
pub mod usage;

use std::fmt;

use async_trait::async_trait;

pub use crate::suite::targets::{Target, TargetError};
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
