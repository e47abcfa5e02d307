//! Finding a server's protocol era: probe `server/discover` with the 2026-07-28 `_meta`
//! envelope; a DiscoverResult or a modern error code means the modern era, anything
//! else (or silence within the bound) means legacy: `initialize` +
//! `notifications/initialized`, on a respawned process if the probe killed it.
//! Also the one request helper both eras use.
//!
//! The transport learns the outcome through [`Transport::set_protocol`], called once
//! the era is settled (legacy: before `notifications/initialized`). The probe itself
//! and `initialize` go out before that: a transport that needs the version for them
//! (HTTP's `MCP-Protocol-Version`) reads it from the probe's `_meta` envelope
//! (`io.modelcontextprotocol/protocolVersion`); `initialize` carries none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Era;
use super::client::ClientOptions;
use super::jsonrpc::{self, Reply};
use super::transport::{self, Direction, Outgoing, Transport};
use super::{ExchangeLog, McpError, ServerSpec};

/// The stateless per-request protocol version (`server/discover`, `_meta` envelope).
pub const MODERN_VERSION: &str = "2026-07-28";
/// The version offered in `initialize`.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// The versions accepted back from `initialize` (newest first).
pub const LEGACY_ACCEPTED: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// `_meta` key: the protocol version of a modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for a modern request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key on modern results: the server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `clientInfo`: toolgauge and its version.
pub fn client_info() -> Value {
    json!({"name": "toolgauge", "version": env!("CARGO_PKG_VERSION")})
}

/// The capabilities a modern request declares: form elicitation, answered by the
/// suite's input policy inside `input_required` rounds (a refusal ends the call as a
/// tool error, which is what a test wants to see, rather than the server's -32021).
pub fn modern_capabilities() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// The capabilities `initialize` declares: form elicitation when the input policy
/// answers elicitations (the transport answers a legacy server's `elicitation/create`
/// by it), else none, so a server does not send what the client would refuse.
pub fn legacy_capabilities(policy: &super::InputPolicy) -> Value {
    if super::input::answers_elicitation(policy) {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    }
}

/// The `_meta` envelope every modern request carries.
pub fn envelope(version: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(META_PROTOCOL_VERSION.into(), json!(version));
    m.insert(META_CLIENT_CAPABILITIES.into(), modern_capabilities());
    m.insert(META_CLIENT_INFO.into(), client_info());
    m
}

/// How one session talks: what each request carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Wire {
    /// The era.
    pub era: Era,
    /// The agreed protocol version.
    pub version: String,
}

impl Wire {
    /// A request's `params` in this era: modern ones get the `_meta` envelope; legacy
    /// ones are sent as given (`None` for none).
    pub fn params(&self, params: Map<String, Value>) -> Option<Value> {
        match self.era {
            Era::Modern => Some(jsonrpc::with_meta(Some(params), &envelope(&self.version))),
            Era::Legacy if params.is_empty() => None,
            Era::Legacy => Some(Value::Object(params)),
        }
    }
}

/// Send one request and return its `result`; a JSON-RPC error is [`McpError::Rpc`]. A
/// timed-out request is cancelled (`notifications/cancelled`, best effort) unless it is
/// a negotiation request, which the spec says must not be cancelled.
#[allow(clippy::too_many_arguments)]
pub async fn rpc(
    transport: &dyn Transport,
    server: &str,
    ids: &AtomicU64,
    wire: Option<&Wire>,
    method: &str,
    name: Option<&str>,
    params: Option<Value>,
    timeout: Duration,
) -> Result<Value, McpError> {
    let id = ids.fetch_add(1, Ordering::Relaxed);
    let out = Outgoing {
        method: method.to_string(),
        name: name.map(str::to_string),
        body: jsonrpc::request(id, method, params),
    };
    let response = match transport.request(&out, timeout).await {
        Ok(r) => r,
        Err(e @ McpError::Timeout { .. }) => {
            if let Some(wire) = wire
                && method != "initialize"
                && method != "server/discover"
            {
                let mut p = Map::new();
                p.insert("requestId".into(), json!(id));
                p.insert(
                    "reason".into(),
                    json!(format!("no answer within {} ms", timeout.as_millis())),
                );
                let note = Outgoing {
                    method: "notifications/cancelled".into(),
                    name: None,
                    body: jsonrpc::notification("notifications/cancelled", wire.params(p)),
                };
                let _ = transport.notify(&note).await;
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    match jsonrpc::reply(&response) {
        Some(Reply::Result(r)) => Ok(r),
        Some(Reply::Error(e)) => Err(McpError::Rpc {
            server: server.to_string(),
            method: method.to_string(),
            code: e.code,
            message: e.message,
            data: e.data.map(Box::new),
        }),
        None => Err(McpError::Malformed {
            server: server.to_string(),
            method: method.to_string(),
            why: format!(
                "the response has neither `result` nor `error`: `{}`",
                jsonrpc::excerpt(&response.to_string(), 200)
            ),
        }),
    }
}

/// What the negotiation settled.
#[derive(Debug)]
pub struct Negotiated {
    /// The transport to use from now on (a respawned one after a fatal probe).
    pub transport: Box<dyn Transport>,
    /// Era and version.
    pub wire: Wire,
    /// `serverInfo` (legacy: from `initialize`; modern: the discover result's `_meta`).
    pub server_info: Option<Value>,
    /// The DiscoverResult or InitializeResult, raw (`None` when the era was told by a
    /// modern error code instead).
    pub handshake: Option<Value>,
}

/// What the `server/discover` probe says.
enum Probe {
    /// A 2026-07-28 server; its DiscoverResult when it gave one.
    Modern(Option<Value>),
    /// Not evidence of one: fall back to `initialize`, for this reason (logged).
    Legacy(String),
}

/// Find `spec`'s era over `transport` and prepare the session.
pub async fn negotiate(
    spec: &ServerSpec,
    log: &ExchangeLog,
    mut transport: Box<dyn Transport>,
    options: &ClientOptions,
    ids: &AtomicU64,
) -> Result<Negotiated, McpError> {
    transport.set_input_policy(&options.input);
    let server = spec.to_string();
    let probe = discover(&*transport, &server, ids, spec, options.discover_timeout).await?;
    let why_legacy = match probe {
        Probe::Modern(result) => return modern(transport, log, result),
        Probe::Legacy(why) => why,
    };
    log.push(
        Direction::Note,
        format!("not a {MODERN_VERSION} server: {why_legacy}; falling back to `initialize`"),
    );
    if !transport.alive() {
        // Some legacy servers exit on a method they do not know: start a fresh one.
        log.push(
            Direction::Note,
            "the server process is gone after `server/discover`: respawning it for `initialize`",
        );
        transport.close().await;
        transport = transport::open(spec, log).await?;
        transport.set_input_policy(&options.input);
    }
    let params = json!({
        "protocolVersion": LEGACY_VERSION,
        "capabilities": legacy_capabilities(&options.input),
        "clientInfo": client_info(),
    });
    let init = rpc(
        &*transport,
        &server,
        ids,
        None,
        "initialize",
        None,
        Some(params),
        options.request_timeout,
    )
    .await;
    let result = match init {
        Ok(r) => r,
        // A probe that timed out here but reached a slow-starting server has locked it
        // into the modern era; it says so with -32022 naming its versions. Probe again,
        // now with the request timeout.
        Err(McpError::Rpc {
            code: jsonrpc::UNSUPPORTED_PROTOCOL_VERSION,
            data,
            ..
        }) if supported(data.as_deref()).is_some_and(|s| s.iter().any(|v| v == MODERN_VERSION)) => {
            log.push(
                Direction::Note,
                format!("`initialize` refused with -32022 listing {MODERN_VERSION}: probing `server/discover` again"),
            );
            return match discover(&*transport, &server, ids, spec, options.request_timeout).await? {
                Probe::Modern(result) => modern(transport, log, result),
                Probe::Legacy(why) => Err(McpError::Incompatible {
                    server,
                    why: format!(
                        "it refused `initialize` as a {MODERN_VERSION} server, then answered `server/discover` unlike one ({why})"
                    ),
                }),
            };
        }
        Err(e) => return Err(e),
    };
    let malformed = |why: String| McpError::Malformed {
        server: server.clone(),
        method: "initialize".into(),
        why,
    };
    let obj = result.as_object().ok_or_else(|| {
        malformed(format!(
            "the result is not an object: `{}`",
            jsonrpc::excerpt(&result.to_string(), 200)
        ))
    })?;
    let version = obj
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the result has no string `protocolVersion`".into()))?;
    if !LEGACY_ACCEPTED.contains(&version) {
        return Err(McpError::Incompatible {
            server,
            why: format!(
                "it answered `initialize` with protocol version `{version}`; toolgauge speaks {MODERN_VERSION} (server/discover) and {} (initialize): update the server or its SDK",
                LEGACY_ACCEPTED.join(", ")
            ),
        });
    }
    let wire = Wire {
        era: Era::Legacy,
        version: version.to_string(),
    };
    let initialized = Outgoing {
        method: "notifications/initialized".into(),
        name: None,
        body: jsonrpc::notification("notifications/initialized", None),
    };
    transport.set_protocol(&wire.version, false);
    transport.notify(&initialized).await?;
    log.push(
        Direction::Note,
        format!("legacy era: protocol version {version} via initialize"),
    );
    Ok(Negotiated {
        transport,
        server_info: obj.get("serverInfo").cloned(),
        handshake: Some(result.clone()),
        wire,
    })
}

fn modern(
    transport: Box<dyn Transport>,
    log: &ExchangeLog,
    result: Option<Value>,
) -> Result<Negotiated, McpError> {
    transport.set_protocol(MODERN_VERSION, true);
    log.push(
        Direction::Note,
        format!("modern era: protocol version {MODERN_VERSION} via server/discover"),
    );
    let server_info = result
        .as_ref()
        .and_then(|r| r.get("_meta"))
        .and_then(|m| m.get(META_SERVER_INFO))
        .cloned()
        .or_else(|| result.as_ref().and_then(|r| r.get("serverInfo")).cloned());
    Ok(Negotiated {
        transport,
        wire: Wire {
            era: Era::Modern,
            version: MODERN_VERSION.into(),
        },
        server_info,
        handshake: result,
    })
}

/// `data.supported` of a -32022 error, when it is a list of strings.
fn supported(data: Option<&Value>) -> Option<Vec<String>> {
    let list = data?.get("supported")?.as_array()?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Send the `server/discover` probe and read what its outcome says about the era.
async fn discover(
    transport: &dyn Transport,
    server: &str,
    ids: &AtomicU64,
    spec: &ServerSpec,
    bound: Duration,
) -> Result<Probe, McpError> {
    let params = jsonrpc::with_meta(None, &envelope(MODERN_VERSION));
    let outcome = rpc(
        transport,
        server,
        ids,
        None,
        "server/discover",
        None,
        Some(params),
        bound,
    )
    .await;
    read_probe(outcome, server, matches!(spec, ServerSpec::Http { .. }))
}

/// The era verdict of one probe outcome (pure, so every branch is unit-tested).
fn read_probe(
    outcome: Result<Value, McpError>,
    server: &str,
    http: bool,
) -> Result<Probe, McpError> {
    match outcome {
        Ok(result) => {
            let versions: Option<Vec<&str>> = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .and_then(|l| l.iter().map(Value::as_str).collect());
            Ok(match versions {
                Some(v) if v.contains(&MODERN_VERSION) => Probe::Modern(Some(result)),
                Some(v) => Probe::Legacy(format!(
                    "its DiscoverResult lists only {}",
                    if v.is_empty() {
                        "no versions".into()
                    } else {
                        v.join(", ")
                    }
                )),
                None => Probe::Legacy(format!(
                    "its answer to `server/discover` is not a DiscoverResult: `{}`",
                    jsonrpc::excerpt(&result.to_string(), 120)
                )),
            })
        }
        Err(McpError::Rpc {
            code,
            message,
            data,
            ..
        }) => match code {
            jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => match supported(data.as_deref()) {
                Some(s) if s.iter().any(|v| v == MODERN_VERSION) => Ok(Probe::Modern(None)),
                Some(s) if s.iter().any(|v| LEGACY_ACCEPTED.contains(&v.as_str())) => {
                    Ok(Probe::Legacy(format!(
                        "it refused {MODERN_VERSION} (-32022) and supports {}",
                        s.join(", ")
                    )))
                }
                Some(s) => Err(McpError::Incompatible {
                    server: server.to_string(),
                    why: format!(
                        "it supports only {} (-32022 to `server/discover`); toolgauge speaks {MODERN_VERSION}, {}: update toolgauge or pin the server to a version it speaks",
                        if s.is_empty() {
                            "no versions".into()
                        } else {
                            s.join(", ")
                        },
                        LEGACY_ACCEPTED.join(", ")
                    ),
                }),
                None => Ok(Probe::Legacy(format!(
                    "it answered `server/discover` with -32022 ({message}) without `data.supported`"
                ))),
            },
            jsonrpc::HEADER_MISMATCH | jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                Ok(Probe::Modern(None))
            }
            _ => Ok(Probe::Legacy(format!(
                "it answered `server/discover` with JSON-RPC error {code} ({message})"
            ))),
        },
        Err(McpError::Timeout { timeout_ms, .. }) => Ok(Probe::Legacy(format!(
            "no answer to `server/discover` within {timeout_ms} ms"
        ))),
        Err(McpError::Closed { why, .. }) => Ok(Probe::Legacy(format!(
            "the connection closed after `server/discover` ({why})"
        ))),
        // Over HTTP a legacy endpoint may answer an unknown method with a bare 4xx page;
        // over stdio a line that is not JSON breaks the protocol outright.
        Err(McpError::Malformed { why, .. }) if http => Ok(Probe::Legacy(format!(
            "its answer to `server/discover` is not JSON-RPC ({why})"
        ))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc_err(code: i64, data: Option<Value>) -> Result<Value, McpError> {
        Err(McpError::Rpc {
            server: "s".into(),
            method: "server/discover".into(),
            code,
            message: "m".into(),
            data: data.map(Box::new),
        })
    }

    fn verdict(outcome: Result<Value, McpError>) -> Result<Option<String>, McpError> {
        read_probe(outcome, "s", false).map(|p| match p {
            Probe::Modern(_) => None,
            Probe::Legacy(why) => Some(why),
        })
    }

    #[test]
    fn modern_evidence() {
        let ok = json!({"supportedVersions": ["2026-07-28"], "capabilities": {}});
        assert_eq!(verdict(Ok(ok)).unwrap(), None);
        assert_eq!(verdict(rpc_err(-32020, None)).unwrap(), None);
        assert_eq!(verdict(rpc_err(-32021, None)).unwrap(), None);
        let modern = Some(json!({"supported": ["2026-07-28"], "requested": "x"}));
        assert_eq!(verdict(rpc_err(-32022, modern)).unwrap(), None);
    }

    #[test]
    fn legacy_evidence() {
        let why = |o| verdict(o).unwrap().unwrap();
        assert_eq!(
            why(rpc_err(-32601, None)),
            "it answered `server/discover` with JSON-RPC error -32601 (m)"
        );
        assert_eq!(
            why(Ok(json!({"supportedVersions": ["2025-11-25"]}))),
            "its DiscoverResult lists only 2025-11-25"
        );
        assert!(
            why(Ok(json!({"tools": []})))
                .starts_with("its answer to `server/discover` is not a DiscoverResult")
        );
        assert_eq!(
            why(rpc_err(-32022, Some(json!({"supported": ["2025-06-18"]})))),
            "it refused 2026-07-28 (-32022) and supports 2025-06-18"
        );
        assert_eq!(
            why(Err(McpError::Timeout {
                server: "s".into(),
                method: "server/discover".into(),
                timeout_ms: 300
            })),
            "no answer to `server/discover` within 300 ms"
        );
    }

    #[test]
    fn a_disjoint_server_is_an_error_and_junk_on_stdio_too() {
        let e = verdict(rpc_err(-32022, Some(json!({"supported": ["2030-01-01"]})))).unwrap_err();
        assert!(matches!(e, McpError::Incompatible { .. }), "{e}");
        assert!(e.to_string().contains("2030-01-01"), "{e}");
        let junk = || {
            Err(McpError::Malformed {
                server: "s".into(),
                method: "server/discover".into(),
                why: "x".into(),
            })
        };
        assert!(read_probe(junk(), "s", false).is_err());
        assert!(matches!(
            read_probe(junk(), "s", true),
            Ok(Probe::Legacy(_))
        ));
    }

    #[test]
    fn modern_params_carry_the_envelope_and_legacy_ones_do_not() {
        let modern = Wire {
            era: Era::Modern,
            version: MODERN_VERSION.into(),
        };
        let p = modern.params(Map::new()).unwrap();
        assert_eq!(p["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(p["_meta"][META_CLIENT_INFO]["name"], "toolgauge");
        assert_eq!(
            p["_meta"][META_CLIENT_INFO]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert!(p["_meta"][META_CLIENT_CAPABILITIES].is_object());
        let legacy = Wire {
            era: Era::Legacy,
            version: "2025-06-18".into(),
        };
        assert_eq!(legacy.params(Map::new()), None);
        let mut m = Map::new();
        m.insert("cursor".into(), json!(""));
        assert_eq!(legacy.params(m), Some(json!({"cursor": ""})));
    }
}
