//! The protocol: era discovery (`server/discover`, else legacy `initialize`),
//! `tools/list` with pagination, `tools/call` with `input_required` rounds.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::http_headers;
use super::input::{self, RoundAnswer};
use super::jsonrpc;
use super::lifecycle::{self, Wire};
use super::transport::{Direction, Transport};
use super::{Era, ExchangeLog, InputPolicy, McpError, McpTool, ServerSpec};

/// The most `tools/list` pages followed before the listing is called a loop.
pub const MAX_TOOL_PAGES: usize = 10_000;

/// What answered one `input_required` round (logged in the trial).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputAnswer {
    /// The round (1-based).
    pub round: u32,
    /// Who answered: `policy` or `refused`.
    pub by: String,
    /// The answers sent, as sent (`null` when refused).
    pub answers: Value,
    /// The server's `inputRequests` of that round, as it sent them.
    pub asked: Value,
}

/// Bounds and identity of a client.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// Every request's timeout.
    pub request_timeout: Duration,
    /// How long to wait for `server/discover` before falling back to legacy.
    pub discover_timeout: Duration,
    /// How many `input_required` rounds one call may take.
    pub max_input_rounds: u32,
    /// How `input_required` is answered.
    pub input: InputPolicy,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            request_timeout: Duration::from_secs(30),
            discover_timeout: Duration::from_secs(3),
            max_input_rounds: 3,
            input: InputPolicy::Refuse,
        }
    }
}

/// The result of one `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallResult {
    /// The final result object, raw.
    pub raw: Value,
    /// `content` blocks.
    pub content: Vec<Value>,
    /// `structuredContent`, if any.
    pub structured: Option<Value>,
    /// `isError`.
    pub is_error: bool,
    /// Why `structuredContent` does not satisfy the tool's `outputSchema`, when it has one.
    pub schema_error: Option<String>,
    /// The `input_required` rounds it took.
    pub input_rounds: Vec<InputAnswer>,
}

impl CallResult {
    /// What the model reads: the text blocks joined, other blocks as JSON, or the
    /// structured content when there are no blocks.
    pub fn text_for_model(&self) -> String {
        if self.content.is_empty() {
            return self
                .structured
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
        }
        let parts: Vec<String> = self
            .content
            .iter()
            .map(|block| match (block.get("type"), block.get("text")) {
                (Some(t), Some(Value::String(text))) if t == "text" => text.clone(),
                _ => block.to_string(),
            })
            .collect();
        parts.join("\n")
    }

    /// A result that ends the call as a tool error with `text` (the harness decided,
    /// e.g. it refused the server's request for input); `raw` is the server's last result.
    fn harness_error(raw: Value, text: String, input_rounds: Vec<InputAnswer>) -> CallResult {
        CallResult {
            raw,
            content: vec![json!({"type": "text", "text": text})],
            structured: None,
            is_error: true,
            schema_error: None,
            input_rounds,
        }
    }
}

/// A tool's `outputSchema`, compiled on first use.
struct OutputSchema {
    schema: Value,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .finish()
    }
}

impl OutputSchema {
    /// Why `value` does not satisfy the schema (`None` when it does).
    fn check(&self, tool: &str, value: &Value) -> Option<String> {
        let compiled = self.compiled.get_or_init(|| {
            // `$schema` picks the draft; MCP's default is 2020-12.
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&self.schema)
                .or_else(|_| jsonschema::validator_for(&self.schema))
                .map_err(|e| e.to_string())
        });
        let validator = match compiled {
            Ok(v) => v,
            Err(e) => {
                return Some(format!(
                    "the outputSchema of `{tool}` does not compile: {e}"
                ));
            }
        };
        let errors: Vec<String> = validator
            .iter_errors(value)
            .take(3)
            .map(|e| {
                let at = e.instance_path().as_str().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at `{at}`: {e}")
                }
            })
            .collect();
        if errors.is_empty() {
            None
        } else {
            Some(format!(
                "structuredContent does not match the outputSchema of `{tool}`: {}",
                errors.join("; ")
            ))
        }
    }
}

/// A connected MCP client.
#[derive(Debug)]
pub struct McpClient {
    spec: ServerSpec,
    /// The spec as text (every error names the server this way).
    server: String,
    transport: Box<dyn Transport>,
    wire: Wire,
    server_info: Option<Value>,
    handshake: Option<Value>,
    options: ClientOptions,
    ids: AtomicU64,
    /// The `outputSchema` of each listed tool, by name, for checking call results.
    output_schemas: Mutex<HashMap<String, Arc<OutputSchema>>>,
}

impl McpClient {
    /// Connect to `spec`: spawn or reach it, find its era (discover within
    /// `discover_timeout`, else respawn if it died and `initialize`).
    pub async fn connect(spec: &ServerSpec, options: ClientOptions) -> Result<McpClient, McpError> {
        McpClient::connect_with_log(spec, options, ExchangeLog::new()).await
    }

    /// [`McpClient::connect`], logging into `log` (to keep several connections' exchanges,
    /// e.g. one per trial, in one log).
    pub async fn connect_with_log(
        spec: &ServerSpec,
        options: ClientOptions,
        log: ExchangeLog,
    ) -> Result<McpClient, McpError> {
        let transport = super::transport::open(spec, &log).await?;
        let ids = AtomicU64::new(1);
        let n = lifecycle::negotiate(spec, &log, transport, &options, &ids).await?;
        Ok(McpClient {
            spec: spec.clone(),
            server: spec.to_string(),
            transport: n.transport,
            wire: n.wire,
            server_info: n.server_info,
            handshake: n.handshake,
            options,
            ids,
            output_schemas: Mutex::new(HashMap::new()),
        })
    }

    /// The server as named.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// The era it speaks.
    pub fn era(&self) -> Era {
        self.wire.era
    }

    /// The protocol version agreed.
    pub fn protocol_version(&self) -> &str {
        &self.wire.version
    }

    /// Its `serverInfo`, raw.
    pub fn server_info(&self) -> Option<&Value> {
        self.server_info.as_ref()
    }

    /// The raw DiscoverResult (modern) or InitializeResult (legacy): capabilities,
    /// `instructions`. `None` when a modern error code told the era instead.
    pub fn handshake(&self) -> Option<&Value> {
        self.handshake.as_ref()
    }

    /// The options it was connected with.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Bound every later request by `timeout` instead of the connect options': a
    /// handshake that must succeed can be given a patient bound and a call a short one
    /// (a test that a call's timeout fires, on a machine too busy to answer the
    /// handshake as fast).
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.options.request_timeout = timeout;
    }

    /// Whether the server still looks reachable (a stdio process that has not exited).
    pub fn alive(&self) -> bool {
        self.transport.alive()
    }

    /// One request in the session's era; its `result`.
    async fn request(
        &self,
        method: &str,
        name: Option<&str>,
        params: Map<String, Value>,
    ) -> Result<Value, McpError> {
        lifecycle::rpc(
            &*self.transport,
            &self.server,
            &self.ids,
            Some(&self.wire),
            method,
            name,
            self.wire.params(params),
            self.options.request_timeout,
        )
        .await
    }

    fn malformed(&self, method: &str, why: String) -> McpError {
        McpError::Malformed {
            server: self.server.clone(),
            method: method.to_string(),
            why,
        }
    }

    /// Every tool, following `nextCursor` (an empty string is a real cursor) until the
    /// server stops sending one; tools kept raw. Over HTTP, a tool whose `x-mcp-header`
    /// annotations are invalid is left out and the reason logged as a note (SEP-2243).
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        const METHOD: &str = "tools/list";
        let mut tools: Vec<McpTool> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen: HashSet<String> = HashSet::new();
        for page in 1..=MAX_TOOL_PAGES {
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let result = self.request(METHOD, None, params).await?;
            let Value::Object(mut obj) = result else {
                return Err(self.malformed(
                    METHOD,
                    format!(
                        "page {page}: the result is not an object: `{}`",
                        jsonrpc::excerpt(&result.to_string(), 200)
                    ),
                ));
            };
            let Some(Value::Array(listed)) = obj.remove("tools") else {
                return Err(self.malformed(
                    METHOD,
                    format!("page {page}: the result has no `tools` list"),
                ));
            };
            for (i, tool) in listed.into_iter().enumerate() {
                let index = tools.len();
                let shown = jsonrpc::excerpt(&tool.to_string(), 120);
                let tool = match tool {
                    Value::Object(raw) => McpTool::from_raw(raw),
                    _ => None,
                };
                let Some(tool) = tool else {
                    return Err(self.malformed(
                        METHOD,
                        format!(
                            "tool #{index} (page {page}, index {i}) is not an object with a string `name`: `{shown}`"
                        ),
                    ));
                };
                // SEP-2243: a client must not use a tool whose `x-mcp-header` annotations
                // are invalid, and must keep the valid ones. The annotations only mean
                // something over Streamable HTTP (they name request headers), so a stdio
                // server's tool keeps working whatever they say.
                if matches!(self.spec, ServerSpec::Http { .. })
                    && let Some(why) = http_headers::x_mcp_header_problem(&tool.input_schema())
                {
                    self.transport.log().push(
                        Direction::Note,
                        format!("dropped tool `{}`: {why}", tool.name()),
                    );
                    continue;
                }
                tools.push(tool);
            }
            match obj.remove("nextCursor") {
                None | Some(Value::Null) => {
                    self.remember_output_schemas(&tools);
                    return Ok(tools);
                }
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) {
                        return Err(self.malformed(
                            METHOD,
                            format!(
                                "page {page} sent the cursor `{}` again: the server's pagination loops",
                                jsonrpc::excerpt(&next, 80)
                            ),
                        ));
                    }
                    cursor = Some(next);
                }
                Some(other) => {
                    return Err(self.malformed(
                        METHOD,
                        format!(
                            "page {page}: `nextCursor` is not a string: `{}`",
                            jsonrpc::excerpt(&other.to_string(), 80)
                        ),
                    ));
                }
            }
        }
        Err(self.malformed(
            METHOD,
            format!("still sending `nextCursor` after {MAX_TOOL_PAGES} pages ({} tools): the listing does not end", tools.len()),
        ))
    }

    fn remember_output_schemas(&self, tools: &[McpTool]) {
        let mut map = self
            .output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.clear();
        for t in tools {
            if let Some(schema) = t.output_schema() {
                map.insert(
                    t.name().to_string(),
                    Arc::new(OutputSchema {
                        schema: schema.clone(),
                        compiled: OnceLock::new(),
                    }),
                );
            }
        }
    }

    /// Call `name` with `arguments`. A result with `isError` is `Ok` (the model reads
    /// it as a tool error); JSON-RPC errors and transport failures are `Err`.
    ///
    /// `structuredContent` is checked against the tool's `outputSchema` as last listed
    /// by [`McpClient::list_tools`] (no check for a tool not listed). An
    /// `input_required` result is answered by the options' [`InputPolicy`] for at
    /// most `max_input_rounds` rounds, `requestState` echoed verbatim; a refusal or
    /// one round too many ends the call as a tool error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallResult, McpError> {
        const METHOD: &str = "tools/call";
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), Value::Object(arguments.clone()));
        let mut rounds: Vec<InputAnswer> = Vec::new();
        let mut pause = Duration::from_millis(50);
        loop {
            let result = self.request(METHOD, Some(name), params.clone()).await?;
            let Some(obj) = result.as_object() else {
                return Err(self.malformed(
                    METHOD,
                    format!(
                        "the result is not an object: `{}`",
                        jsonrpc::excerpt(&result.to_string(), 200)
                    ),
                ));
            };
            match obj.get("resultType") {
                None | Some(Value::Null) => return self.complete(name, result, rounds),
                Some(Value::String(t)) if t == "complete" => {
                    return self.complete(name, result, rounds);
                }
                Some(Value::String(t)) if t == "input_required" => {}
                Some(other) => {
                    return Err(self.malformed(
                        METHOD,
                        format!("`resultType` {other} is not one toolgauge handles (it declared no extension that adds result types)"),
                    ));
                }
            }
            let round = u32::try_from(rounds.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1);
            let asked = obj.get("inputRequests").cloned().unwrap_or(Value::Null);
            let state = obj.get("requestState").filter(|s| !s.is_null()).cloned();
            let requests = match &asked {
                Value::Object(m) => Some(m.clone()).filter(|m| !m.is_empty()),
                Value::Null => None,
                other => {
                    return Err(self.malformed(
                        METHOD,
                        format!(
                            "`inputRequests` is not an object: `{}`",
                            jsonrpc::excerpt(&other.to_string(), 200)
                        ),
                    ));
                }
            };
            if requests.is_none() && state.is_none() {
                return Err(self.malformed(
                    METHOD,
                    "an input_required result with neither `inputRequests` nor `requestState`"
                        .into(),
                ));
            }
            if round > self.options.max_input_rounds {
                let text = format!(
                    "MCP server `{}` still asked for input after {} round(s), the limit (max_input_rounds); the call ends here",
                    self.server, self.options.max_input_rounds
                );
                self.log()
                    .push(Direction::Note, format!("tools/call `{name}`: {text}"));
                return Ok(CallResult::harness_error(result, text, rounds));
            }
            let answers = match &requests {
                // Only state: the server is still working; ask again after a pause.
                None => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                    Map::new()
                }
                Some(reqs) => match input::answer(reqs, &self.options.input) {
                    RoundAnswer::Responses(m) => m,
                    RoundAnswer::Refused(why) => {
                        let text = format!("MCP server `{}`: {why}", self.server);
                        self.log().push(
                            Direction::Note,
                            format!("tools/call `{name}`: input_required round {round} refused"),
                        );
                        rounds.push(InputAnswer {
                            round,
                            by: "refused".into(),
                            answers: Value::Null,
                            asked,
                        });
                        return Ok(CallResult::harness_error(result, text, rounds));
                    }
                },
            };
            self.log().push(
                Direction::Note,
                format!(
                    "tools/call `{name}`: input_required round {round} answered by the input policy"
                ),
            );
            rounds.push(InputAnswer {
                round,
                by: "policy".into(),
                answers: Value::Object(answers.clone()),
                asked,
            });
            params.remove("inputResponses");
            params.remove("requestState");
            if requests.is_some() {
                params.insert("inputResponses".into(), Value::Object(answers));
            }
            if let Some(state) = state {
                params.insert("requestState".into(), state);
            }
        }
    }

    /// A complete `tools/call` result.
    fn complete(
        &self,
        name: &str,
        raw: Value,
        input_rounds: Vec<InputAnswer>,
    ) -> Result<CallResult, McpError> {
        let content = match raw.get("content") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(other) => {
                return Err(self.malformed(
                    "tools/call",
                    format!(
                        "`content` is not a list: `{}`",
                        jsonrpc::excerpt(&other.to_string(), 200)
                    ),
                ));
            }
        };
        let is_error = raw.get("isError") == Some(&Value::Bool(true));
        let structured = raw
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned();
        let schema = self
            .output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned();
        // An error result need not have the declared shape (the spec asks it of
        // successful results only).
        let schema_error = match (&schema, &structured) {
            (Some(_), _) if is_error => None,
            (Some(s), Some(v)) => s.check(name, v),
            (Some(_), None) => Some(format!(
                "`{name}` declares an outputSchema but the result has no structuredContent"
            )),
            (None, _) => None,
        };
        Ok(CallResult {
            raw,
            content,
            structured,
            is_error,
            schema_error,
            input_rounds,
        })
    }

    /// The log of every exchange.
    pub fn log(&self) -> &ExchangeLog {
        self.transport.log()
    }

    /// Shut the server down (stdio: close stdin, SIGTERM, SIGKILL).
    pub async fn close(self) {
        self.transport.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(content: Vec<Value>, structured: Option<Value>) -> CallResult {
        CallResult {
            raw: Value::Null,
            content,
            structured,
            is_error: false,
            schema_error: None,
            input_rounds: Vec::new(),
        }
    }

    #[test]
    fn text_for_model_joins_text_and_shows_other_blocks_as_json() {
        let r = result(
            vec![
                json!({"type": "text", "text": "one"}),
                json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
                json!({"type": "text", "text": "two"}),
            ],
            Some(json!({"ignored": true})),
        );
        assert_eq!(
            r.text_for_model(),
            "one\n{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}\ntwo"
        );
        assert_eq!(
            result(vec![], Some(json!({"result": 3}))).text_for_model(),
            "{\"result\":3}"
        );
        assert_eq!(result(vec![], None).text_for_model(), "");
    }

    /// The client is shared across tasks (a loop runs one turn's calls concurrently).
    #[allow(dead_code)]
    fn client_and_its_futures_are_send(c: &McpClient, m: &Map<String, Value>) {
        fn send_sync<T: Send + Sync>(_: &T) {}
        fn send<T: Send>(_: T) {}
        send_sync(c);
        send(c.call_tool("x", m));
        send(c.list_tools());
        send(McpClient::connect(c.spec(), ClientOptions::default()));
    }

    #[test]
    fn output_schema_mismatches_are_described() {
        let s = OutputSchema {
            schema: json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}),
            compiled: OnceLock::new(),
        };
        assert_eq!(s.check("add", &json!({"result": 3})), None);
        assert_eq!(
            s.check("add", &json!({"result": "three"})).unwrap(),
            "structuredContent does not match the outputSchema of `add`: at `/result`: \"three\" is not of type \"integer\""
        );
        let bad = OutputSchema {
            schema: json!({"type": 12}),
            compiled: OnceLock::new(),
        };
        assert!(
            bad.check("t", &json!({}))
                .unwrap()
                .starts_with("the outputSchema of `t` does not compile")
        );
    }
}
