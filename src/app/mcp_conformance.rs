//! `toolgauge mcp-conformance URL` (hidden): the client entry the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) runs for each client scenario.
//!
//! The suite starts a scenario server, then runs this command with the server's URL as
//! the last argument and the scenario's name (and, for some scenarios, a JSON context
//! such as the tool calls it expects) in the environment. The entry does what a
//! tool-evaluation client does against a server: connect with [`McpClient`] (era
//! discovery, legacy fallback), list the tools, call the tools the scenario expects and
//! answer input requests by policy. Everything on the wire is the library's: the entry
//! only decides *which* tools to call with *which* arguments, so a failing scenario
//! points at the client or the transport, never at special-cased protocol code here.
//!
//! Stdout carries one JSON line per step (connected, tools, each call), which the suite
//! saves as `stdout.txt` and the integration test reads; stderr carries errors and the
//! verbatim exchange log, so the suite's `stderr.txt` shows the wire when a check fails.

use std::time::Duration;

use futures::future::join_all;
use serde_json::{Map, Value, json};

use super::AppError;
use crate::cli::McpConformanceArgs;
use crate::exit;
use crate::mcp::{CallResult, ClientOptions, Direction, InputPolicy, McpClient, McpTool};

/// The non-auth, non-extension client scenarios of conformance 0.2.0-alpha.12 this entry
/// knows how to play (auth scenarios need an OAuth client, which toolgauge does not have;
/// extension scenarios are outside the core protocol).
pub(crate) const SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
];

/// One `tools/call` a scenario expects.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    tool: String,
    arguments: Map<String, Value>,
}

impl Call {
    fn new(tool: &str, arguments: Value) -> Call {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Call {
            tool: tool.to_string(),
            arguments,
        }
    }
}

/// What a scenario asks of the client after it has connected and listed the tools.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    /// Nothing more: the checks are about discovery, listing or headers on those.
    ListOnly,
    /// These calls in groups: a group's calls run at the same time (as the calls of one
    /// model turn do in a loop), the groups one after another.
    Calls(Vec<Vec<Call>>),
    /// Call every tool the client kept, one at a time, with arguments sampled from its
    /// schema (scenarios that check what the client sends with any call, or which tools
    /// it refuses to use).
    EveryTool,
    /// Pass tool `of`'s `inputSchema`, exactly as listed, to tool `via` as the argument
    /// `schema` (the scenario checks which keywords survived the client's parsing).
    EchoSchema { of: &'static str, via: &'static str },
}

/// The plan for `scenario`: the context's `toolCalls` when the suite gives them, else
/// what the scenario's server expects (read from the suite's scenario code).
fn plan_for(scenario: &str, context: Option<&Value>) -> Result<Plan, AppError> {
    if let Some(calls) = context.and_then(|c| c.get("toolCalls")) {
        let calls = calls.as_array().ok_or_else(|| {
            AppError::bad(
                format!("the scenario context's `toolCalls` is not an array: {calls}"),
                None,
            )
        })?;
        let mut groups = Vec::new();
        for call in calls {
            let tool = call.get("name").and_then(Value::as_str).ok_or_else(|| {
                AppError::bad(
                    format!(
                        "a `toolCalls` entry of the scenario context has no string `name`: {call}"
                    ),
                    None,
                )
            })?;
            let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
            groups.push(vec![Call::new(tool, arguments)]);
        }
        return Ok(Plan::Calls(groups));
    }
    let one = |tool: &str, arguments: Value| Plan::Calls(vec![vec![Call::new(tool, arguments)]]);
    Ok(match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => Plan::ListOnly,
        "tools_call" => one("add_numbers", json!({"a": 2, "b": 3})),
        "elicitation-sep1034-client-defaults" => one("test_client_elicitation_defaults", json!({})),
        "sse-retry" => one("test_reconnection", json!({})),
        // The unrelated tool runs while the echo-state call is between its rounds, so the
        // scenario sees whether one call's requestState or inputResponses leak into another.
        "sep-2322-client-request-state" => Plan::Calls(vec![
            vec![
                Call::new("test_mrtr_echo_state", json!({})),
                Call::new("test_mrtr_unrelated", json!({})),
            ],
            vec![Call::new("test_mrtr_no_state", json!({}))],
            vec![Call::new("test_mrtr_no_result_type", json!({}))],
        ]),
        "http-standard-headers" | "http-invalid-tool-headers" => Plan::EveryTool,
        "json-schema-2020-12-preservation" => Plan::EchoSchema {
            of: "json_schema_2020_12_tool",
            via: "json_schema_echo",
        },
        "http-custom-headers" => {
            return Err(AppError::bad(
                "scenario `http-custom-headers` needs its context (the tool calls to make)",
                Some(
                    "the conformance suite sets MCP_CONFORMANCE_CONTEXT; pass --context JSON when running by hand",
                ),
            ));
        }
        other => {
            return Err(AppError::bad(
                format!("unknown conformance scenario `{other}`"),
                Some(&format!("known client scenarios: {}", SCENARIOS.join(", "))),
            ));
        }
    })
}

/// Arguments for calling `schema`'s tool without a model: every required property gets
/// its `default`, first `examples` entry, `const` or first `enum` value, else a value of
/// its type. Optional properties are left out, as a careful caller would.
fn sample_arguments(schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let mut out = Map::new();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        out.insert(name.to_string(), sample_value(property));
    }
    out
}

fn sample_value(property: &Value) -> Value {
    if let Some(v) = property.get("default") {
        return v.clone();
    }
    if let Some(v) = property.get("examples").and_then(|e| e.get(0)) {
        return v.clone();
    }
    if let Some(v) = property.get("const") {
        return v.clone();
    }
    if let Some(v) = property.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    // `type` may be a list; the first non-null type is the useful one.
    let ty = match property.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    match ty {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        "null" => Value::Null,
        _ => json!("example"),
    }
}

/// The calls `plan` makes against the tools the client listed.
fn calls_of(plan: &Plan, tools: &[McpTool]) -> Result<Vec<Vec<Call>>, String> {
    match plan {
        Plan::ListOnly => Ok(Vec::new()),
        Plan::Calls(groups) => Ok(groups.clone()),
        Plan::EveryTool => Ok(tools
            .iter()
            .map(|t| {
                vec![Call {
                    tool: t.name().to_string(),
                    arguments: sample_arguments(&t.input_schema()),
                }]
            })
            .collect()),
        Plan::EchoSchema { of, via } => {
            let focal = tools
                .iter()
                .find(|t| t.name() == *of)
                .ok_or_else(|| format!("the server listed no tool `{of}`"))?;
            // The raw `inputSchema`, not `input_schema()`: that one substitutes an empty
            // schema for a missing one, and the point is to send back what arrived.
            let schema = focal.raw.get("inputSchema").cloned().unwrap_or(Value::Null);
            Ok(vec![vec![Call::new(via, json!({ "schema": schema }))]])
        }
    }
}

/// Run the scenario against `args.url`; exit 0 when every step worked, 3 when the client
/// could not connect, list or call (the suite then reports the client's error).
pub(crate) fn mcp_conformance(args: &McpConformanceArgs) -> Result<u8, AppError> {
    let context = match &args.context {
        Some(text) => Some(serde_json::from_str::<Value>(text).map_err(|e| {
            AppError::bad(
                format!("the scenario context is not JSON ({e}): {text}"),
                None,
            )
        })?),
        None => None,
    };
    let plan = plan_for(&args.scenario, context.as_ref())?;
    let spec = args.url.parse().map_err(|e: crate::mcp::McpError| {
        AppError::bad(
            e.to_string(),
            Some("the conformance suite passes the scenario server's URL as the last argument"),
        )
    })?;
    let options = ClientOptions {
        request_timeout: Duration::from_secs(args.timeout.max(1)),
        // Accept with no content of our own: the client fills the requested schema's
        // defaults, as a tool-evaluation run that answers input requests by policy does.
        input: InputPolicy::Accept(Map::new()),
        ..ClientOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?;
    let ok = runtime.block_on(play(&spec, options, &plan));
    Ok(if ok { exit::OK } else { exit::RUN_INCOMPLETE })
}

/// Connect, list, make the plan's calls; print each step; false when one failed.
async fn play(spec: &crate::mcp::ServerSpec, options: ClientOptions, plan: &Plan) -> bool {
    let client = match McpClient::connect(spec, options).await {
        Ok(c) => c,
        Err(e) => {
            warnln!("error: {e}");
            return false;
        }
    };
    sayln!(
        "{}",
        json!({
            "step": "connected",
            "era": client.era(),
            "protocol_version": client.protocol_version(),
            "server_info": client.server_info(),
        })
    );
    let ok = calls(&client, plan).await;
    for entry in client.log().since(0) {
        let way = match entry.direction {
            Direction::Sent => "->",
            Direction::Received => "<-",
            Direction::Stderr => "stderr",
            Direction::Note => "note",
        };
        warnln!("{way} {}", entry.text);
    }
    client.close().await;
    ok
}

async fn calls(client: &McpClient, plan: &Plan) -> bool {
    let tools = match client.list_tools().await {
        Ok(t) => t,
        Err(e) => {
            warnln!("error: {e}");
            return false;
        }
    };
    let names: Vec<&str> = tools.iter().map(McpTool::name).collect();
    sayln!("{}", json!({"step": "tools", "names": names}));
    let groups = match calls_of(plan, &tools) {
        Ok(g) => g,
        Err(why) => {
            warnln!("error: {why}");
            return false;
        }
    };
    let mut ok = true;
    for group in groups {
        let results = join_all(
            group
                .iter()
                .map(|c| client.call_tool(&c.tool, &c.arguments)),
        )
        .await;
        for (call, result) in group.iter().zip(results) {
            match result {
                Ok(r) => sayln!("{}", call_line(&call.tool, &r)),
                Err(e) => {
                    warnln!("error: calling `{}`: {e}", call.tool);
                    ok = false;
                }
            }
        }
    }
    ok
}

/// One call's step line: what the model would read, and who answered input requests.
fn call_line(tool: &str, result: &CallResult) -> Value {
    json!({
        "step": "call",
        "tool": tool,
        "is_error": result.is_error,
        "text": result.text_for_model(),
        "input_rounds": result.input_rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(raw: Value) -> McpTool {
        McpTool::from_raw(raw.as_object().unwrap().clone()).unwrap()
    }

    #[test]
    fn context_tool_calls_win_and_run_one_at_a_time() {
        let context = json!({"name": "http-custom-headers", "toolCalls": [
            {"name": "a", "arguments": {"x": 1}},
            {"name": "b"},
        ]});
        let plan = plan_for("http-custom-headers", Some(&context)).unwrap();
        assert_eq!(
            plan,
            Plan::Calls(vec![
                vec![Call::new("a", json!({"x": 1}))],
                vec![Call::new("b", json!({}))],
            ])
        );
        let bad = json!({"toolCalls": [{"arguments": {}}]});
        let e = plan_for("x", Some(&bad)).unwrap_err();
        assert!(e.to_string().contains("no string `name`"), "{e}");
    }

    #[test]
    fn every_listed_scenario_has_a_plan_and_unknown_ones_are_bad_input() {
        for s in SCENARIOS.iter().filter(|s| **s != "http-custom-headers") {
            plan_for(s, None).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let e = plan_for("auth/metadata-default", None).unwrap_err();
        assert_eq!(e.code(), exit::BAD_INPUT);
        assert!(e.to_string().contains("`auth/metadata-default`"), "{e}");
        let e = plan_for("http-custom-headers", None).unwrap_err();
        assert!(e.to_string().contains("needs its context"), "{e}");
    }

    #[test]
    fn sampled_arguments_fill_required_properties_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string"},
                "n": {"type": "integer"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "tag": {"type": ["null", "boolean"]},
                "level": {"type": "number", "default": 2.5},
                "optional": {"type": "string"},
            },
            "required": ["region", "n", "mode", "tag", "level", "undeclared"],
        });
        assert_eq!(
            Value::Object(sample_arguments(&schema)),
            json!({
                "region": "example",
                "n": 1,
                "mode": "fast",
                "tag": true,
                "level": 2.5,
                "undeclared": "example",
            })
        );
        assert!(sample_arguments(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn echo_schema_sends_the_raw_input_schema_back() {
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                            "type": "object", "if": {"required": ["a"]}, "then": {}, "x-vendor": 1});
        let tools = vec![
            tool(json!({"name": "focal", "inputSchema": schema})),
            tool(json!({"name": "echo", "inputSchema": {"type": "object"}})),
        ];
        let plan = Plan::EchoSchema {
            of: "focal",
            via: "echo",
        };
        assert_eq!(
            calls_of(&plan, &tools).unwrap(),
            vec![vec![Call::new("echo", json!({ "schema": schema }))]]
        );
        let missing = Plan::EchoSchema {
            of: "nope",
            via: "echo",
        };
        assert!(calls_of(&missing, &tools).unwrap_err().contains("`nope`"));
    }

    #[test]
    fn every_tool_calls_each_listed_tool_in_order() {
        let tools = vec![
            tool(
                json!({"name": "t1", "inputSchema": {"type": "object", "properties": {"r": {"type": "string"}}, "required": ["r"]}}),
            ),
            tool(json!({"name": "t2"})),
        ];
        assert_eq!(
            calls_of(&Plan::EveryTool, &tools).unwrap(),
            vec![
                vec![Call::new("t1", json!({"r": "example"}))],
                vec![Call::new("t2", json!({}))],
            ]
        );
    }
}
