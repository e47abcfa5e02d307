//! A circuit breaker per target: failures that will repeat for every trial stop the
//! target instead of costing each remaining trial its retries.
//!
//! A refused key (401, 403, or Gemini's 400 `API_KEY_INVALID`) or a model the server does
//! not know (404) is the same for every request: after [`STATUS_LIMIT`] identical ones in a
//! row, the target stops. A server that refuses connections or a host that does not
//! resolve (a local server that crashed mid-run) stops the target after
//! [`CONNECTION_LIMIT`] in a row. Any other outcome (a success, a timeout, a 500) resets
//! the count. The remaining trials of a stopped target end as errors that say why in
//! plain words; other targets keep running, and trials already scored are kept.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::provider::http::HttpError;
use crate::provider::{Endpoint, ProviderError};

/// Identical 401/403/404 answers in a row that stop a target.
pub const STATUS_LIMIT: u32 = 2;

/// Refused connections (or unresolved hosts) in a row that stop a target.
pub const CONNECTION_LIMIT: u32 = 3;

/// A failure that will repeat for every trial of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persistent {
    /// What kind, e.g. `HTTP 401` or `connection refused` (failures of one kind are
    /// "identical").
    pub kind: String,
    /// The failure in plain words, with what to check.
    pub message: String,
    /// How many in a row stop the target.
    pub limit: u32,
}

/// The failure `error` is, if it will repeat for every trial; `endpoint` (the target's
/// URL and key variable) makes the message concrete. The key itself never appears.
pub fn classify(error: &ProviderError, endpoint: Option<&Endpoint>) -> Option<Persistent> {
    let ProviderError::Http { provider, source } = error else {
        return None;
    };
    let url = endpoint.map_or("the server", |e| e.url.as_str());
    let model = endpoint.map_or("", |e| e.model.as_str());
    let check_key = match endpoint.and_then(|e| e.key_var.as_deref()) {
        Some(var) => format!("check {var}"),
        None => "this target sends no key; give one with --api-key-env VAR".to_string(),
    };
    let status = |code: u16, message: String| {
        Some(Persistent {
            kind: format!("HTTP {code}"),
            message,
            limit: STATUS_LIMIT,
        })
    };
    match source {
        HttpError::Status { status: 401, .. } => status(
            401,
            format!("401 Unauthorized from {provider}: the API key was refused; {check_key}"),
        ),
        HttpError::Status { status: 403, .. } => status(
            403,
            format!(
                "403 Forbidden from {provider}: the key may not use model `{model}`; {check_key} and the account's access"
            ),
        ),
        HttpError::Status { status: 404, .. } => status(
            404,
            format!(
                "404 Not Found from {provider} at {url}: check the model name `{model}` and the URL"
            ),
        ),
        HttpError::Status {
            status: 400,
            message,
            ..
        } if message.contains("API_KEY_INVALID") || message.contains("API key not valid") => {
            status(
                400,
                format!("the API key was refused by {provider} (API_KEY_INVALID); {check_key}"),
            )
        }
        HttpError::Connection { message, .. } => {
            let m = message.to_ascii_lowercase();
            if m.contains("connection refused") {
                Some(Persistent {
                    kind: "connection refused".into(),
                    message: format!("connection refused: is the server at {url} still running?"),
                    limit: CONNECTION_LIMIT,
                })
            } else if m.contains("dns error")
                || m.contains("failed to lookup address")
                || m.contains("name or service not known")
                || m.contains("no such host")
            {
                Some(Persistent {
                    kind: "unknown host".into(),
                    message: format!(
                        "the host of {url} could not be resolved: check the URL and the network"
                    ),
                    limit: CONNECTION_LIMIT,
                })
            } else {
                None
            }
        }
        _ => None,
    }
}

#[derive(Debug, Default)]
struct TargetState {
    /// The kind of the failures in the current run of identical ones, and how many.
    streak: Option<(String, u32)>,
    /// Why the target stopped, once it has.
    stopped: Option<String>,
}

/// The breakers of every target of a run.
#[derive(Debug, Default)]
pub struct Breakers {
    targets: Mutex<HashMap<String, TargetState>>,
}

impl Breakers {
    /// Why `target` was stopped, if it was.
    pub fn stopped(&self, target: &str) -> Option<String> {
        let targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        targets.get(target).and_then(|s| s.stopped.clone())
    }

    /// Count the outcome of one trial of `target`: `Some` for a persistent failure,
    /// `None` for anything else (which resets the count). Returns the reason when this
    /// outcome stops the target.
    pub fn record(&self, target: &str, failure: Option<&Persistent>) -> Option<String> {
        let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let state = targets.entry(target.to_string()).or_default();
        let Some(f) = failure else {
            state.streak = None;
            return None;
        };
        let n = match &state.streak {
            Some((kind, n)) if *kind == f.kind => n + 1,
            _ => 1,
        };
        state.streak = Some((f.kind.clone(), n));
        if n >= f.limit && state.stopped.is_none() {
            let why = format!(
                "target `{target}` stopped after {n} identical failures in a row: {}",
                f.message
            );
            state.stopped = Some(why.clone());
            return Some(why);
        }
        None
    }

    /// Every stopped target with its reason, sorted by target.
    pub fn all_stopped(&self) -> Vec<(String, String)> {
        let targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<(String, String)> = targets
            .iter()
            .filter_map(|(t, s)| s.stopped.clone().map(|why| (t.clone(), why)))
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(key_var: Option<&str>) -> Endpoint {
        Endpoint {
            provider: "openai".into(),
            model: "gpt-4o-mini".into(),
            url: "http://127.0.0.1:9/v1".into(),
            key_var: key_var.map(str::to_string),
        }
    }

    fn status(code: u16, message: &str) -> ProviderError {
        ProviderError::Http {
            provider: "openai".into(),
            source: HttpError::Status {
                status: code,
                message: message.into(),
                attempts: 1,
            },
        }
    }

    fn connection(message: &str) -> ProviderError {
        ProviderError::Http {
            provider: "openai".into(),
            source: HttpError::Connection {
                message: message.into(),
                attempts: 4,
            },
        }
    }

    #[test]
    fn repeating_failures_are_named_in_plain_words() {
        let e = endpoint(Some("OPENAI_API_KEY"));
        let msg = |err: ProviderError| classify(&err, Some(&e)).map(|p| (p.message, p.limit));
        assert_eq!(
            msg(status(401, "Incorrect API key provided: [REDACTED]")),
            Some((
                "401 Unauthorized from openai: the API key was refused; check OPENAI_API_KEY"
                    .into(),
                2
            ))
        );
        assert_eq!(
            msg(status(404, "The model `gpt-4o-mini` does not exist")),
            Some((
                "404 Not Found from openai at http://127.0.0.1:9/v1: check the model name `gpt-4o-mini` and the URL".into(),
                2
            ))
        );
        assert!(
            msg(status(403, ""))
                .unwrap()
                .0
                .starts_with("403 Forbidden from openai")
        );
        assert_eq!(
            msg(connection(
                "error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)"
            )),
            Some((
                "connection refused: is the server at http://127.0.0.1:9/v1 still running?".into(),
                3
            ))
        );
        assert!(
            msg(connection(
                "client error (Connect): dns error: failed to lookup address"
            ))
            .unwrap()
            .0
            .contains("could not be resolved")
        );
        assert!(
            msg(status(400, r#"{"error": {"status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}}"#))
                .unwrap()
                .0
                .contains("check OPENAI_API_KEY")
        );
        // Without a key variable the message says how to give one.
        let none = classify(&status(401, ""), Some(&endpoint(None))).unwrap();
        assert!(
            none.message.ends_with("give one with --api-key-env VAR"),
            "{}",
            none.message
        );
        // Failures that may pass next time are not persistent.
        for err in [
            status(500, "oops"),
            status(429, "slow down"),
            status(400, "bad schema"),
            connection("connection reset by peer"),
            ProviderError::Http {
                provider: "openai".into(),
                source: HttpError::Timeout {
                    timeout_s: 60.0,
                    attempts: 4,
                },
            },
        ] {
            assert_eq!(classify(&err, Some(&e)), None, "{err}");
        }
    }

    #[test]
    fn a_target_stops_after_its_limit_of_identical_failures_in_a_row() {
        let e = endpoint(Some("OPENAI_API_KEY"));
        let unauthorized = classify(&status(401, ""), Some(&e)).unwrap();
        let not_found = classify(&status(404, ""), Some(&e)).unwrap();
        let refused = classify(&connection("Connection refused"), Some(&e)).unwrap();
        let b = Breakers::default();
        // A different kind, or a success, restarts the count.
        assert_eq!(b.record("a", Some(&unauthorized)), None);
        assert_eq!(b.record("a", Some(&not_found)), None);
        assert_eq!(b.record("a", None), None);
        assert_eq!(b.record("a", Some(&not_found)), None);
        let why = b.record("a", Some(&not_found)).unwrap();
        assert!(why.starts_with("target `a` stopped after 2 identical failures in a row: 404"));
        assert_eq!(b.stopped("a"), Some(why.clone()));
        // Reported once; other targets are unaffected.
        assert_eq!(b.record("a", Some(&not_found)), None);
        assert_eq!(b.stopped("b"), None);
        assert_eq!(b.record("b", Some(&refused)), None);
        assert_eq!(b.record("b", Some(&refused)), None);
        assert!(b.record("b", Some(&refused)).is_some());
        let stopped: Vec<String> = b.all_stopped().into_iter().map(|(t, _)| t).collect();
        assert_eq!(stopped, ["a", "b"]);
    }
}
