//! The MCP client against real servers over stdio (server-everything: legacy; the
//! Python SDK server: modern, and legacy with `--legacy`) and against the hostile fakes
//! in `tests/mcp/fakes/hostile.py` (plain `python3`, no peers needed).

use std::time::Duration;

use serde_json::{Map, Value, json};
use toolgauge::mcp::{ClientOptions, Direction, Era, InputPolicy, McpClient, McpError, ServerSpec};

use crate::mcp_peers::peers;
use crate::support::repo_root;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// A hostile fake server in `mode`.
fn fake(mode: &str) -> ServerSpec {
    ServerSpec::Stdio {
        program: "python3".into(),
        args: vec![
            repo_root()
                .join("tests/mcp/fakes/hostile.py")
                .display()
                .to_string(),
            mode.into(),
        ],
        dir: None,
    }
}

async fn connect(spec: &ServerSpec) -> McpClient {
    McpClient::connect(spec, ClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("connect {spec}: {e}"))
}

/// Options whose discover bound is generous: a slow machine must not turn a modern
/// server into a legacy one in a test that asserts the era.
fn patient() -> ClientOptions {
    ClientOptions {
        discover_timeout: Duration::from_secs(60),
        request_timeout: Duration::from_secs(60),
        ..ClientOptions::default()
    }
}

/// The texts of the log entries in `direction`.
fn logged(client: &McpClient, direction: Direction) -> Vec<String> {
    client
        .log()
        .since(0)
        .into_iter()
        .filter(|e| e.direction == direction)
        .map(|e| e.text)
        .collect()
}

/// The requests sent with `method`, parsed.
fn sent(client: &McpClient, method: &str) -> Vec<Value> {
    logged(client, Direction::Sent)
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap())
        .filter(|v| v["method"] == method)
        .collect()
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn server_everything_is_legacy_and_its_raw_tools_survive() {
    let Some(p) = peers() else { return };
    let spec: ServerSpec = p.everything_stdio().parse().unwrap();
    let client = connect(&spec).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(
        client.server_info().unwrap()["name"],
        "mcp-servers/everything"
    );
    // It answered the probe with "method not found", then the handshake ran.
    let notes = logged(&client, Direction::Note).join("\n");
    assert!(
        notes.contains("JSON-RPC error -32601"),
        "the fallback says why: {notes}"
    );
    assert_eq!(sent(&client, "notifications/initialized").len(), 1);

    let tools = client.list_tools().await.unwrap();
    // server-everything 2026.8.31 (pinned by tests/mcp/package-lock.json) offers 13
    // tools to a client that declares no capabilities.
    assert_eq!(
        tools.len(),
        13,
        "{:?}",
        tools.iter().map(|t| t.name()).collect::<Vec<_>>()
    );
    let echo = tools.iter().find(|t| t.name() == "echo").unwrap();
    assert_eq!(echo.title(), Some("Echo Tool"));
    assert_eq!(echo.description(), Some("Echoes back the input string"));
    // Fields no typed model of ours knows survive raw.
    assert_eq!(echo.raw["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(
        echo.input_schema()["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    assert_eq!(echo.annotations().read_only, Some(true));
    assert!(!echo.annotations().may_destroy());

    let r = client
        .call_tool("echo", &args(json!({"message": "hi there"})))
        .await
        .unwrap();
    assert!(!r.is_error);
    assert_eq!(r.text_for_model(), "Echo: hi there");
    assert_eq!(r.schema_error, None);

    // Its structured tool satisfies its own outputSchema.
    let s = client
        .call_tool(
            "get-structured-content",
            &args(json!({"location": "New York"})),
        )
        .await
        .unwrap();
    assert!(s.structured.is_some(), "{:?}", s.raw);
    assert_eq!(s.schema_error, None, "{:?}", s.raw);

    // An unknown tool is a tool error the model reads, not a harness failure.
    let u = client.call_tool("nope", &Map::new()).await.unwrap();
    assert!(u.is_error);
    assert!(
        u.text_for_model().contains("nope"),
        "{}",
        u.text_for_model()
    );
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn sdk_server_over_stdio_is_modern_and_every_request_carries_the_envelope() {
    let Some(p) = peers() else { return };
    let spec: ServerSpec = p.sdk_stdio().parse().unwrap();
    let client = McpClient::connect(&spec, patient()).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(
        client.server_info().unwrap(),
        &json!({"name": "toolgauge-sdk-peer", "version": "1.0.0"})
    );
    assert_eq!(
        client.handshake().unwrap()["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert!(sent(&client, "initialize").is_empty());

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "add",
            "echo",
            "fail",
            "delete_record",
            "confirm_delete",
            "ask_forever"
        ]
    );
    let add = client
        .call_tool("add", &args(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert!(!add.is_error);
    assert_eq!(add.structured, Some(json!({"result": 42})));
    assert_eq!(add.schema_error, None);
    assert_eq!(add.text_for_model(), "42");

    let fail = client
        .call_tool("fail", &args(json!({"reason": "disk full"})))
        .await
        .unwrap();
    assert!(fail.is_error);
    assert_eq!(
        fail.text_for_model(),
        "Error executing tool fail: disk full"
    );

    for request in sent(&client, "server/discover")
        .into_iter()
        .chain(sent(&client, "tools/list"))
        .chain(sent(&client, "tools/call"))
    {
        let meta = &request["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "toolgauge"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    }
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn sdk_server_legacy_only_falls_back_to_initialize() {
    let Some(p) = peers() else { return };
    let spec: ServerSpec = format!("{} --legacy", p.sdk_stdio()).parse().unwrap();
    let client = McpClient::connect(&spec, patient()).await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().unwrap()["name"], "toolgauge-sdk-peer");
    assert_eq!(sent(&client, "server/discover").len(), 1);
    assert_eq!(sent(&client, "initialize").len(), 1);
    let add = client
        .call_tool("add", &args(json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    assert_eq!(add.structured, Some(json!({"result": 3})));
    // Legacy requests carry no modern envelope.
    let call = &sent(&client, "tools/call")[0];
    assert!(call["params"].get("_meta").is_none(), "{call}");
    client.close().await;
}

async fn confirm_delete(input: InputPolicy) -> (McpClient, toolgauge::mcp::CallResult) {
    let p = peers().unwrap();
    let spec: ServerSpec = p.sdk_stdio().parse().unwrap();
    let options = ClientOptions { input, ..patient() };
    let client = McpClient::connect(&spec, options).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    let r = client
        .call_tool("confirm_delete", &args(json!({"record_id": "r1"})))
        .await
        .unwrap();
    (client, r)
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn input_required_refused_by_default_is_a_tool_error() {
    if peers().is_none() {
        return;
    }
    let (client, r) = confirm_delete(InputPolicy::Refuse).await;
    assert!(r.is_error);
    assert_eq!(
        r.text_for_model(),
        format!(
            "MCP server `{}`: the server asked for input that the test does not give (elicitation/create: \"Really delete record r1?\"); set an input policy that declines or accepts to answer it",
            client.spec()
        )
    );
    assert_eq!(r.input_rounds.len(), 1);
    assert_eq!(r.input_rounds[0].by, "refused");
    assert_eq!(r.input_rounds[0].answers, Value::Null);
    assert_eq!(
        r.input_rounds[0].asked["confirm"]["method"],
        "elicitation/create"
    );
    assert_eq!(sent(&client, "tools/call").len(), 1);
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn input_required_declined_and_accepted_echo_the_request_state() {
    if peers().is_none() {
        return;
    }
    let (client, r) = confirm_delete(InputPolicy::Decline).await;
    assert!(!r.is_error, "{:?}", r.raw);
    assert_eq!(r.text_for_model(), "kept r1: the confirmation was decline");
    assert_eq!(r.input_rounds.len(), 1);
    assert_eq!(r.input_rounds[0].by, "policy");
    assert_eq!(
        r.input_rounds[0].answers,
        json!({"confirm": {"action": "decline"}})
    );
    client.close().await;

    let yes = args(json!({"confirm": true}));
    let (client, r) = confirm_delete(InputPolicy::Accept(yes)).await;
    assert!(!r.is_error, "{:?}", r.raw);
    assert_eq!(r.text_for_model(), "deleted r1 (confirmed)");
    // The retry echoed the (sealed) requestState of the first answer byte for byte.
    let received: Vec<Value> = logged(&client, Direction::Received)
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    let first = received
        .iter()
        .find(|m| m["result"]["resultType"] == "input_required")
        .unwrap();
    let calls = sent(&client, "tools/call");
    assert_eq!(calls.len(), 2);
    assert!(first["result"]["requestState"].is_string());
    assert_eq!(
        calls[1]["params"]["requestState"],
        first["result"]["requestState"]
    );
    assert_eq!(
        calls[1]["params"]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
    );
    assert_eq!(calls[1]["params"]["arguments"], json!({"record_id": "r1"}));
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn input_required_rounds_are_capped() {
    let Some(p) = peers() else { return };
    let spec: ServerSpec = p.sdk_stdio().parse().unwrap();
    let options = ClientOptions {
        input: InputPolicy::Decline,
        max_input_rounds: 2,
        ..patient()
    };
    let client = McpClient::connect(&spec, options).await.unwrap();
    let r = client.call_tool("ask_forever", &Map::new()).await.unwrap();
    assert!(r.is_error);
    assert_eq!(
        r.text_for_model(),
        format!(
            "MCP server `{spec}` still asked for input after 2 round(s), the limit (max_input_rounds); the call ends here"
        )
    );
    assert_eq!(r.input_rounds.len(), 2);
    assert_eq!(
        r.input_rounds[1].answers,
        json!({"q2": {"action": "decline"}})
    );
    // One first call and two answered rounds.
    assert_eq!(sent(&client, "tools/call").len(), 3);
    client.close().await;
}

#[tokio::test]
async fn a_server_silent_on_discover_falls_back_within_the_bound() {
    let spec = fake("silent-discover");
    let options = ClientOptions {
        discover_timeout: Duration::from_millis(500),
        ..ClientOptions::default()
    };
    let client = McpClient::connect(&spec, options).await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-06-18");
    assert_eq!(
        client.server_info().unwrap()["name"],
        "hostile-silent-discover"
    );
    let notes = logged(&client, Direction::Note).join("\n");
    assert!(
        notes
            .contains("no answer to `server/discover` within 500 ms; falling back to `initialize`"),
        "{notes}"
    );
    // The probe is not cancelled (the spec forbids cancelling negotiation requests).
    assert!(sent(&client, "notifications/cancelled").is_empty());
    let r = client
        .call_tool("echo", &args(json!({"text": "still here"})))
        .await
        .unwrap();
    assert_eq!(r.text_for_model(), "still here");
    client.close().await;
}

#[tokio::test]
async fn a_server_that_dies_on_discover_is_respawned_for_initialize() {
    let client = connect(&fake("die-on-discover")).await;
    assert_eq!(client.era(), Era::Legacy);
    let notes = logged(&client, Direction::Note);
    assert_eq!(
        notes.iter().filter(|n| n.starts_with("spawned ")).count(),
        2,
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("respawning it")),
        "{notes:?}"
    );
    assert!(
        logged(&client, Direction::Stderr)
            .contains(&"unknown method server/discover, exiting".to_string())
    );
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    client.close().await;
}

#[tokio::test]
async fn a_server_dying_mid_call_fails_the_call_with_its_exit_and_stderr() {
    let spec = fake("die-mid-call");
    let client = connect(&spec).await;
    let e = client
        .call_tool("echo", &args(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, McpError::Closed { method, .. } if method == "tools/call"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server `{spec}` went away during `tools/call`: the server process exited with status 7; its last stderr lines: `fatal: the tool crashed the server`"
        )
    );
    assert!(!client.alive());
    // Later requests fail at once with the same reason.
    let again = client.list_tools().await.unwrap_err();
    assert!(matches!(again, McpError::Closed { .. }), "{again:?}");
    client.close().await;
}

#[tokio::test]
async fn a_line_that_is_not_json_is_a_malformed_answer_naming_it() {
    let spec = fake("malformed");
    let client = connect(&spec).await;
    let e = client.call_tool("echo", &Map::new()).await.unwrap_err();
    let McpError::Malformed {
        server,
        method,
        why,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(server, &spec.to_string());
    assert_eq!(method, "tools/call");
    assert!(
        why.contains("`Traceback (most recent call last): oops {not json`"),
        "{why}"
    );
    assert!(why.contains("only JSON-RPC messages to stdout"), "{why}");
    // The junk is in the log verbatim, and the stream goes on.
    assert!(
        logged(&client, Direction::Received)
            .contains(&"Traceback (most recent call last): oops {not json".to_string())
    );
    assert_eq!(client.list_tools().await.unwrap().len(), 2);

    let other = connect(&fake("not-jsonrpc")).await;
    let e = other.call_tool("echo", &Map::new()).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("a stdout line is JSON but not a JSON-RPC message: `{\"hello\":\"world\"}`"),
        "{e}"
    );
    client.close().await;
    other.close().await;
}

#[tokio::test]
async fn is_error_results_and_unknown_tools() {
    let client = connect(&fake("is-error")).await;
    let r = client
        .call_tool("echo", &args(json!({"text": "r9"})))
        .await
        .unwrap();
    assert!(r.is_error);
    assert_eq!(r.text_for_model(), "no such record: r9");
    client.close().await;

    // An unknown tool answered as a tool result...
    let client = connect(&fake("stderr-junk")).await;
    let r = client.call_tool("nope", &Map::new()).await.unwrap();
    assert!(r.is_error);
    assert_eq!(r.text_for_model(), "Unknown tool: nope");
    client.close().await;

    // ...or as a JSON-RPC error: the harness's error, with the server's words.
    let spec = fake("unknown-tool");
    let client = connect(&spec).await;
    let e = client.call_tool("nope", &Map::new()).await.unwrap_err();
    assert_eq!(
        e,
        McpError::Rpc {
            server: spec.to_string(),
            method: "tools/call".into(),
            code: -32602,
            message: "Unknown tool: nope".into(),
            data: None,
        }
    );
    client.close().await;
}

#[tokio::test]
async fn ten_thousand_tools_over_five_pages_including_an_empty_cursor() {
    let client = connect(&fake("huge")).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 10_000);
    assert_eq!(tools[0].name(), "tool_00000");
    assert_eq!(tools[2000].name(), "tool_02000");
    assert_eq!(tools[9999].name(), "tool_09999");
    let cursors: Vec<Value> = sent(&client, "tools/list")
        .iter()
        .map(|r| r["params"]["cursor"].clone())
        .collect();
    assert_eq!(
        cursors,
        [
            Value::Null,
            json!(""),
            json!("p3"),
            json!("p4"),
            json!("p5")
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn a_looping_cursor_and_a_nameless_tool_are_errors() {
    let spec = fake("loop-cursor");
    let client = connect(&spec).await;
    let e = client.list_tools().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server `{spec}` sent a malformed answer to `tools/list`: page 2 sent the cursor `again` again: the server's pagination loops"
        )
    );
    client.close().await;

    let client = connect(&fake("bad-tool")).await;
    let e = client.list_tools().await.unwrap_err();
    assert!(
        e.to_string().contains(
            "tool #2 (page 1, index 2) is not an object with a string `name`: `{\"description\":\"nameless\"}`"
        ),
        "{e}"
    );
    client.close().await;
}

#[tokio::test]
async fn stderr_junk_is_logged_and_never_parsed() {
    let client = connect(&fake("stderr-junk")).await;
    let r = client
        .call_tool("echo", &args(json!({"text": "fine"})))
        .await
        .unwrap();
    assert_eq!(r.text_for_model(), "fine");
    // The last stderr line has no newline: wait for the end of the process to see it.
    let log = client.log().clone();
    client.close().await;
    let stderr: Vec<String> = log
        .since(0)
        .into_iter()
        .filter(|e| e.direction == Direction::Stderr)
        .map(|e| e.text)
        .collect();
    assert_eq!(stderr[0], "\u{1b}[31mred warning\u{1b}[0m");
    assert_eq!(stderr[1], "bytes \u{fffd}\u{fffd} not utf-8");
    // A JSON-RPC response on stderr is only a log line.
    assert_eq!(
        stderr[2],
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}"
    );
    // A 100 kB line is kept up to 16 KiB, and says it was cut.
    assert_eq!(stderr[3], format!("{}… (line cut)", "x".repeat(16 << 10)));
    assert_eq!(stderr[4], "last junk line");
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let client = connect(&fake("schema-mismatch")).await;
    client.list_tools().await.unwrap();
    let r = client.call_tool("shape", &Map::new()).await.unwrap();
    assert!(!r.is_error, "a mismatch does not fail the call");
    assert_eq!(r.structured, Some(json!({"count": "many"})));
    assert_eq!(
        r.schema_error.as_deref(),
        Some(
            "structuredContent does not match the outputSchema of `shape`: at `/count`: \"many\" is not of type \"integer\""
        )
    );
    client.close().await;

    let client = connect(&fake("plain")).await;
    client.list_tools().await.unwrap();
    let r = client.call_tool("shape", &Map::new()).await.unwrap();
    assert_eq!(r.schema_error, None);
    assert_eq!(r.text_for_model(), "{\"count\":3}");
    client.close().await;
}

#[tokio::test]
async fn server_requests_during_a_call_are_answered_by_the_client() {
    let client = connect(&fake("server-requests")).await;
    let r = client.call_tool("echo", &Map::new()).await.unwrap();
    let answers: Value = serde_json::from_str(&r.text_for_model()).unwrap();
    assert_eq!(answers["srv-1"], json!({}), "ping gets an empty result");
    assert_eq!(answers["srv-2"]["code"], -32601);
    assert_eq!(
        answers["srv-2"]["message"],
        "toolgauge's MCP client does not serve `elicitation/create`"
    );
    client.close().await;
}

#[tokio::test]
async fn servers_without_a_common_version_are_refused() {
    let spec = fake("old-version");
    let e = McpClient::connect(&spec, ClientOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::Incompatible { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("it answered `initialize` with protocol version `2024-11-05`"),
        "{e}"
    );
    let e = McpClient::connect(&fake("future-only"), ClientOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::Incompatible { .. }), "{e:?}");
    assert!(e.to_string().contains("it supports only 2031-01-01"), "{e}");
}

#[tokio::test]
async fn modern_fakes_sampling_is_refused_and_state_only_rounds_are_followed() {
    let options = ClientOptions {
        input: InputPolicy::Decline,
        ..ClientOptions::default()
    };
    let client = McpClient::connect(&fake("modern-sampling"), options.clone())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(
        client.server_info().unwrap()["name"],
        "hostile-modern-sampling"
    );
    let r = client.call_tool("echo", &Map::new()).await.unwrap();
    assert!(r.is_error);
    assert!(
        r.text_for_model()
            .contains("asked the client's model for a completion (sampling/createMessage)"),
        "{}",
        r.text_for_model()
    );
    client.close().await;

    let client = McpClient::connect(&fake("modern-state"), options)
        .await
        .unwrap();
    let r = client.call_tool("echo", &Map::new()).await.unwrap();
    assert!(!r.is_error, "{:?}", r.raw);
    assert_eq!(r.text_for_model(), "done after step-2");
    assert_eq!(r.input_rounds.len(), 2);
    let states: Vec<Value> = sent(&client, "tools/call")
        .iter()
        .map(|c| c["params"]["requestState"].clone())
        .collect();
    assert_eq!(states, [Value::Null, json!("step-1"), json!("step-2")]);
    client.close().await;
}

#[tokio::test]
async fn close_escalates_to_sigkill_for_a_server_that_ignores_eof_and_sigterm() {
    let client = connect(&fake("stubborn")).await;
    let log = client.log().clone();
    client.close().await;
    let notes: Vec<String> = log
        .since(0)
        .into_iter()
        .filter(|e| e.direction == Direction::Note)
        .map(|e| e.text)
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("sending SIGTERM")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("sending SIGKILL")),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"the server process was killed by signal 9".to_string()),
        "{notes:?}"
    );

    // A well-behaved server exits on stdin EOF: no signal needed.
    let client = connect(&fake("is-error")).await;
    let log = client.log().clone();
    client.close().await;
    let notes: Vec<String> = log.since(0).into_iter().map(|e| e.text).collect();
    assert!(!notes.iter().any(|n| n.contains("SIGTERM")), "{notes:?}");
    assert!(
        notes.contains(&"the server process exited with status 0".to_string()),
        "{notes:?}"
    );
}

#[tokio::test]
async fn a_command_that_does_not_exist_is_a_connect_error() {
    let spec: ServerSpec = "stdio:/nonexistent/mcp-server --flag".parse().unwrap();
    let e = McpClient::connect(&spec, ClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "could not reach MCP server `stdio:/nonexistent/mcp-server --flag`: cannot start `/nonexistent/mcp-server`: no such program; is it installed and on PATH (or give its full path)?"
    );
}

#[tokio::test]
async fn a_request_without_answer_times_out_and_is_cancelled() {
    let spec = fake("hang-call");
    // The handshake must succeed, so it gets the patient default; only the call that
    // never gets an answer is bounded by 300 ms.
    let mut client = connect(&spec).await;
    client.set_request_timeout(Duration::from_millis(300));
    let e = client.call_tool("echo", &Map::new()).await.unwrap_err();
    assert_eq!(
        e,
        McpError::Timeout {
            server: spec.to_string(),
            method: "tools/call".into(),
            timeout_ms: 300,
        }
    );
    let call = &sent(&client, "tools/call")[0];
    let cancel = &sent(&client, "notifications/cancelled")[0];
    assert_eq!(cancel["params"]["requestId"], call["id"]);
    assert!(client.alive(), "a slow answer is not a dead server");
    client.close().await;
}

#[tokio::test]
async fn concurrent_calls_get_their_own_answers_in_any_order() {
    let client = connect(&fake("reverse")).await;
    let (first, second) = (
        args(json!({"text": "first"})),
        args(json!({"text": "second"})),
    );
    let (a, b) = tokio::join!(
        client.call_tool("echo", &first),
        client.call_tool("echo", &second),
    );
    assert_eq!(a.unwrap().text_for_model(), "first");
    assert_eq!(b.unwrap().text_for_model(), "second");
    // The server answered the later request first.
    let answered: Vec<Value> = logged(&client, Direction::Received)
        .iter()
        .map(|t| serde_json::from_str::<Value>(t).unwrap())
        .filter(|m| m["result"]["content"].is_array())
        .map(|m| m["result"]["content"][0]["text"].clone())
        .collect();
    assert_eq!(answered, [json!("second"), json!("first")]);
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn a_modern_server_slower_than_the_probe_bound_is_still_found_modern() {
    let Some(p) = peers() else { return };
    let spec: ServerSpec = p.sdk_stdio().parse().unwrap();
    // No Python process answers within 1 ms: the probe always times out, the server
    // reads it later and locks itself modern, refuses `initialize` with -32022 naming
    // 2026-07-28, and the client probes again.
    let options = ClientOptions {
        discover_timeout: Duration::from_millis(1),
        ..patient()
    };
    let client = McpClient::connect(&spec, options).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(sent(&client, "server/discover").len(), 2);
    assert_eq!(sent(&client, "initialize").len(), 1);
    let r = client
        .call_tool("echo", &args(json!({"text": "late"})))
        .await
        .unwrap();
    assert_eq!(r.text_for_model(), "late");
    client.close().await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_says_why_after_one_respawn() {
    let spec = ServerSpec::Stdio {
        program: "python3".into(),
        args: vec![
            "-c".into(),
            "import sys; sys.stderr.write('usage: server --root DIR\\n'); sys.exit(2)".into(),
        ],
        dir: None,
    };
    let e = McpClient::connect(&spec, ClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server `{spec}` went away during `initialize`: the server process exited with status 2; its last stderr lines: `usage: server --root DIR`"
        )
    );
}

#[tokio::test]
async fn answers_whose_numeric_ids_came_back_as_strings_still_match() {
    let client = connect(&fake("string-ids")).await;
    assert_eq!(client.era(), Era::Legacy);
    let r = client
        .call_tool("echo", &args(json!({"text": "matched"})))
        .await
        .unwrap();
    assert_eq!(r.text_for_model(), "matched");
    client.close().await;
}
