//! Custom request headers for gateways and proxies: `--header 'NAME: VALUE'`, for every
//! live target, or `--header 'SCOPE=NAME: VALUE'` for the targets of one provider or one
//! target (the scope is written as in `--api-key-env`).
//!
//! An entry is split at its header colon: the first `": "`, or without one the first
//! `:` after the last `=` (or the first `:` when there is no `=`). Before that colon, the
//! text up to the last `=` is the scope, the rest the header name. So
//! `openai-compatible:qwen@http://h/v1?a=b=X-Gateway: t=1` scopes `X-Gateway: t=1` to
//! that target, and `X-Team: a=b` is one header for all.
//!
//! Headers whose name looks secret (`Authorization`, `Proxy-Authorization`, `Cookie`, or a
//! name containing `key`, `token`, `secret`, `auth`, `password`, `signature`,
//! `credential`, `session`) are treated like API keys: marked sensitive for the HTTP
//! stack and scrubbed from every error text and stored body. No header is ever written
//! to `run.json`, a cassette or a report; `--resume` needs the flags again.

use reqwest::header::{HeaderName, HeaderValue};

use super::Target;

/// One custom header.
#[derive(Clone, PartialEq, Eq)]
pub struct CustomHeader {
    /// The name, lower case.
    pub name: String,
    /// The value.
    pub value: String,
}

impl std::fmt::Debug for CustomHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = if self.is_secret() {
            "[REDACTED]"
        } else {
            &self.value
        };
        write!(f, "{}: {value}", self.name)
    }
}

/// Name fragments that mark a header as a credential.
const SECRET_PARTS: &[&str] = &[
    "key",
    "token",
    "secret",
    "auth",
    "password",
    "signature",
    "credential",
    "session",
    "cookie",
];

impl CustomHeader {
    /// True when the name looks like it carries a credential.
    pub fn is_secret(&self) -> bool {
        SECRET_PARTS.iter().any(|p| self.name.contains(p))
    }

    /// The strings to scrub for this header: the whole value, and its last word (the
    /// credential of `Bearer abc…`, which a server may echo alone).
    pub fn secret_parts(&self) -> Vec<&str> {
        let mut parts = vec![self.value.as_str()];
        if let Some((_, last)) = self.value.rsplit_once(' ') {
            parts.push(last);
        }
        parts
    }
}

/// A `--header` entry that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid --header `{entry}`: {reason}")]
pub struct HeaderError {
    /// The entry, its value hidden when the name looks secret.
    pub entry: String,
    /// Why.
    pub reason: String,
}

/// A parsed entry: its scope (`None`: every live target) and the header.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderEntry {
    /// Provider name or target, as written.
    pub scope: Option<String>,
    /// The header.
    pub header: CustomHeader,
}

/// Headers the HTTP layer or the providers set themselves: a custom one would clash.
const RESERVED: &[&str] = &[
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
];

/// Parse one `--header` entry (see the module docs).
pub fn parse_entry(entry: &str) -> Result<HeaderEntry, HeaderError> {
    let colon = entry.find(": ").or_else(|| match entry.rfind('=') {
        Some(eq) => entry[eq..].find(':').map(|i| eq + i),
        None => entry.find(':'),
    });
    let shown = |name: &str| {
        let h = CustomHeader {
            name: name.trim().to_ascii_lowercase(),
            value: String::new(),
        };
        if h.is_secret() {
            format!("{}: [REDACTED]", name.trim())
        } else {
            entry.to_string()
        }
    };
    let Some(colon) = colon else {
        return Err(HeaderError {
            entry: entry.to_string(),
            reason: "expected `NAME: VALUE` or `TARGET=NAME: VALUE`".into(),
        });
    };
    let head = &entry[..colon];
    let value = entry[colon + 1..].trim();
    let (scope, name) = match head.rfind('=') {
        Some(eq) => (Some(head[..eq].trim()), head[eq + 1..].trim()),
        None => (None, head.trim()),
    };
    let fail = |reason: String| HeaderError {
        entry: shown(name),
        reason,
    };
    if scope == Some("") {
        return Err(fail("the scope before `=` is empty".into()));
    }
    if HeaderName::from_bytes(name.as_bytes()).is_err() || name.is_empty() {
        return Err(fail(format!(
            "`{name}` is not a header name (letters, digits and `-`, no spaces)"
        )));
    }
    let name = name.to_ascii_lowercase();
    if RESERVED.contains(&name.as_str()) {
        return Err(fail(format!(
            "`{name}` is set by toolgauge itself and can not be replaced"
        )));
    }
    if HeaderValue::from_str(value).is_err() {
        return Err(fail(
            "the value holds characters a header can not carry (control characters or non-ASCII)"
                .into(),
        ));
    }
    Ok(HeaderEntry {
        scope: scope.map(str::to_string),
        header: CustomHeader {
            name,
            value: value.to_string(),
        },
    })
}

/// The headers `entries` give `target`: unscoped ones, then those scoped to its provider,
/// then those scoped to the target itself; a later header of the same name replaces an
/// earlier one, so the most specific wins.
pub fn headers_for(target: &Target, entries: &[HeaderEntry]) -> Vec<CustomHeader> {
    let mut out: Vec<CustomHeader> = Vec::new();
    let levels = [
        None,
        Some(target.provider.as_str()),
        Some(target.spec.as_str()),
    ];
    for level in levels {
        for e in entries.iter().filter(|e| e.scope.as_deref() == level) {
            out.retain(|h| h.name != e.header.name);
            out.push(e.header.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, value: &str) -> CustomHeader {
        CustomHeader {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn entries_split_into_scope_name_and_value() {
        let cases = [
            ("X-Team: a=b", None, h("x-team", "a=b")),
            ("X-Team:plain", None, h("x-team", "plain")),
            ("x-url: http://h:1/x", None, h("x-url", "http://h:1/x")),
            ("openai=X-Org: o-1", Some("openai"), h("x-org", "o-1")),
            (
                "openai:gpt-4o=X-Org: o:2",
                Some("openai:gpt-4o"),
                h("x-org", "o:2"),
            ),
            (
                "openai-compatible:qwen@http://h/v1?a=b=X-Gateway: t=1",
                Some("openai-compatible:qwen@http://h/v1?a=b"),
                h("x-gateway", "t=1"),
            ),
            ("ollama=X-A:1", Some("ollama"), h("x-a", "1")),
        ];
        for (entry, scope, header) in cases {
            let e = parse_entry(entry).unwrap();
            assert_eq!(e.scope.as_deref(), scope, "{entry}");
            assert_eq!(e.header, header, "{entry}");
        }
    }

    #[test]
    fn bad_entries_say_why_without_showing_secrets() {
        for (entry, want) in [
            ("no colon", "expected `NAME: VALUE`"),
            ("Bad Name: x", "`Bad Name` is not a header name"),
            ("=X-A: 1", "the scope before `=` is empty"),
            ("Content-Type: text/plain", "set by toolgauge itself"),
            ("X-A: line\nbreak", "can not carry"),
        ] {
            let e = parse_entry(entry).unwrap_err().to_string();
            assert!(e.contains(want), "{entry}: {e}");
        }
        let e = parse_entry("X-Api-Key: s3cr3t-value\u{7}")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cr3t"), "{e}");
        assert!(e.contains("X-Api-Key: [REDACTED]"), "{e}");
    }

    #[test]
    fn secret_looking_names_are_recognised() {
        for name in [
            "authorization",
            "x-api-key",
            "x-auth-token",
            "cookie",
            "x-session-id",
        ] {
            assert!(h(name, "v").is_secret(), "{name}");
        }
        for name in ["x-team", "x-org", "user-agent", "x-request-id"] {
            assert!(!h(name, "v").is_secret(), "{name}");
        }
        assert_eq!(
            format!("{:?}", h("authorization", "Bearer abcdefgh12345")),
            "authorization: [REDACTED]"
        );
        assert_eq!(
            h("authorization", "Bearer abcdefgh12345").secret_parts(),
            vec!["Bearer abcdefgh12345", "abcdefgh12345"]
        );
    }

    #[test]
    fn the_most_specific_scope_wins() {
        let entries: Vec<HeaderEntry> = [
            "openai:gpt-4o=X-Org: target",
            "X-Org: all",
            "openai=X-Org: provider",
            "X-Team: t",
            "anthropic=X-Other: no",
        ]
        .iter()
        .map(|e| parse_entry(e).unwrap())
        .collect();
        let t = Target::parse("openai:gpt-4o").unwrap();
        assert_eq!(
            headers_for(&t, &entries),
            vec![h("x-team", "t"), h("x-org", "target")]
        );
        let t = Target::parse("openai:gpt-4o-mini").unwrap();
        assert_eq!(
            headers_for(&t, &entries),
            vec![h("x-team", "t"), h("x-org", "provider")]
        );
        let t = Target::parse("gemini:g").unwrap();
        assert_eq!(
            headers_for(&t, &entries),
            vec![h("x-org", "all"), h("x-team", "t")]
        );
    }
}
