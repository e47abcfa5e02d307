//! What a live provider needs to know about its target: model, endpoint, key and
//! sampling parameters. Keys come from the environment and live in `SecretString`s,
//! which print as `[REDACTED]` and are not serialisable.

use secrecy::{ExposeSecret, SecretString};

pub use super::headers::CustomHeader;
use serde_json::{Map, Value};

/// Settings of one live target.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Provider name as written in the target (`openai`, `anthropic`, ...).
    pub provider: String,
    /// Model name sent to the API.
    pub model: String,
    /// API base URL without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The API key, if the provider needs one.
    pub api_key: Option<SecretString>,
    /// The environment variable the key was read from (named in failure messages; the
    /// key itself never is).
    pub key_var: Option<String>,
    /// Extra request headers (`--header`), sent with every request after the
    /// provider's own.
    pub headers: Vec<CustomHeader>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit.
    pub max_tokens: Option<u32>,
    /// Sampling seed, where the API has one.
    pub seed: Option<u64>,
    /// OpenAI `parallel_tool_calls`.
    pub parallel_tool_calls: Option<bool>,
    /// Extra top-level request fields, passed through unchanged (they win over ours).
    pub extra: Map<String, Value>,
    /// Ask for a streamed answer (server-sent events) and assemble it
    /// ([`super::stream`]).
    pub stream: bool,
    /// Ask for a JSON answer where the API has a JSON mode (OpenAI-compatible
    /// `response_format: json_object`, Gemini `responseMimeType: application/json`),
    /// in requests that offer no tools: the description lab's proposer.
    pub json_answers: bool,
}

impl ProviderConfig {
    /// A config with only provider, model and base URL set.
    pub fn new(provider: &str, model: &str, base_url: &str) -> ProviderConfig {
        ProviderConfig {
            provider: provider.to_string(),
            model: model.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: None,
            key_var: None,
            headers: Vec::new(),
            temperature: None,
            max_tokens: None,
            seed: None,
            parallel_tool_calls: None,
            extra: Map::new(),
            stream: false,
            json_answers: false,
        }
    }

    /// The key as text, for building headers; never log or store the result.
    pub fn key(&self) -> Option<&str> {
        self.api_key.as_ref().map(|k| k.expose_secret())
    }

    /// Strings to scrub from error texts and stored bodies: the key and the values of
    /// secret-looking custom headers.
    pub fn secrets(&self) -> Vec<&str> {
        self.key()
            .into_iter()
            .chain(
                self.headers
                    .iter()
                    .filter(|h| h.is_secret())
                    .flat_map(|h| h.secret_parts()),
            )
            .collect()
    }

    /// Where this target sends requests, for failure messages.
    pub fn endpoint(&self) -> super::Endpoint {
        super::Endpoint {
            provider: self.provider.clone(),
            model: self.model.clone(),
            url: self.base_url.clone(),
            key_var: self.key_var.clone(),
        }
    }

    /// The custom headers as the HTTP layer sends them (secret-looking ones marked
    /// sensitive).
    pub fn custom_headers(&self) -> impl Iterator<Item = super::http::Header> + '_ {
        self.headers.iter().map(|h| super::http::Header {
            name: h.name.clone().into(),
            value: h.value.clone(),
            sensitive: h.is_secret(),
        })
    }

    /// Merge `extra` into a request body (extra fields win).
    pub fn merge_extra(&self, body: &mut Value) {
        if let Value::Object(obj) = body {
            for (k, v) in &self.extra {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Read the key from environment variable `name`; empty counts as unset.
pub fn key_from_env(name: &str) -> Option<SecretString> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| SecretString::from(v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_print() {
        let mut c = ProviderConfig::new("openai", "gpt-4o-mini", "http://x/v1/");
        c.api_key = Some(SecretString::from("sk-secret-value-123".to_string()));
        assert_eq!(c.base_url, "http://x/v1");
        assert!(!format!("{c:?}").contains("sk-secret"));
        assert_eq!(c.secrets(), vec!["sk-secret-value-123"]);
    }

    #[test]
    fn extra_fields_win() {
        let mut c = ProviderConfig::new("openai", "m", "http://x");
        c.extra.insert("temperature".into(), Value::from(0.5));
        c.extra.insert("top_p".into(), Value::from(0.9));
        let mut body = serde_json::json!({"model": "m", "temperature": 0});
        c.merge_extra(&mut body);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["top_p"], 0.9);
    }
}
