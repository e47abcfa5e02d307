//! The Streamable HTTP transport, driven with raw JSON-RPC messages: against the real
//! peers (server-everything and the Python SDK server, legacy and 2026-07-28 eras) and
//! against hostile local servers (wiremock) that stream notifications and server
//! requests before the answer, fail with 500, send non-JSON, stall, expire sessions,
//! drop event streams, and check the routing headers.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use toolgauge::mcp::http::HttpTransport;
use toolgauge::mcp::transport::{Outgoing, Transport};
use toolgauge::mcp::{ClientOptions, Direction, Era, ExchangeLog, McpClient, McpError, ServerSpec};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::mcp_peers::peers;
use crate::ports::{PortServer, RefusingPort, spawn_on_free_port};

const T: Duration = Duration::from_secs(30);
const MODERN: &str = "2026-07-28";

fn everything_http(node: &Path, script: &Path) -> (PortServer, String) {
    let s = spawn_on_free_port("server-everything", |port| {
        let mut cmd = Command::new(node);
        cmd.arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string());
        cmd
    });
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    (s, url)
}

fn sdk_http(python: &Path, script: &Path) -> (PortServer, String) {
    sdk_http_with(python, script, &[])
}

fn sdk_http_with(python: &Path, script: &Path, extra: &[&str]) -> (PortServer, String) {
    let s = spawn_on_free_port("the Python SDK server", |port| {
        let mut cmd = Command::new(python);
        cmd.arg(script)
            .arg("http")
            .arg(port.to_string())
            .args(extra);
        cmd
    });
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    (s, url)
}

fn transport(url: &str) -> HttpTransport {
    let spec: ServerSpec = url.parse().expect("an http spec");
    HttpTransport::new(&spec, url, ExchangeLog::new()).expect("transport")
}

fn out(body: Value) -> Outgoing {
    let method = body["method"].as_str().unwrap().to_string();
    let name = body["params"]["name"].as_str().map(str::to_string);
    Outgoing { method, name, body }
}

fn initialize(id: u64) -> Outgoing {
    out(
        json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"toolgauge-test","version":"0"}}}),
    )
}

fn initialized() -> Outgoing {
    out(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
}

/// The 2026-07-28 `_meta` envelope every modern request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name":"toolgauge-test","version":"0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn modern(id: u64, method: &str, mut params: Value) -> Outgoing {
    params["_meta"] = meta();
    out(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
}

fn tool_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["result"]["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn logged(t: &HttpTransport, dir: Direction) -> Vec<String> {
    t.log()
        .since(0)
        .into_iter()
        .filter(|e| e.direction == dir)
        .map(|e| e.text)
        .collect()
}

/// Legacy handshake over HTTP: initialize (capturing the session), the negotiated
/// version, then `notifications/initialized`.
async fn legacy_handshake(t: &HttpTransport) -> Value {
    let init = t.request(&initialize(1), T).await.expect("initialize");
    let version = init["result"]["protocolVersion"]
        .as_str()
        .expect("a version");
    t.set_protocol(version, false);
    t.notify(&initialized()).await.expect("initialized");
    init
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn server_everything_over_streamable_http() {
    let Some(p) = peers() else { return };
    let (_server, url) = everything_http(&p.node, &p.everything());
    let t = transport(&url);
    let init = legacy_handshake(&t).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let session = t
        .session_id()
        .expect("server-everything hands out a session");
    assert!(!session.is_empty());

    let list = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
            T,
        )
        .await
        .expect("tools/list");
    let names = tool_names(&list);
    assert!(names.contains(&"echo".to_string()), "{names:?}");

    let call = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
                        "params":{"name":"echo","arguments":{"message":"héllo"}}})),
            T,
        )
        .await
        .expect("tools/call");
    assert_eq!(call["id"], 3);
    assert_eq!(call["result"]["content"][0]["text"], "Echo: héllo");

    // Every message sent is in the log verbatim, and every reply body too.
    let sent = logged(&t, Direction::Sent);
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&sent[3]).unwrap(),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
               "params":{"name":"echo","arguments":{"message":"héllo"}}})
    );
    let received = logged(&t, Direction::Received);
    assert!(
        received.iter().any(|r| r.contains("Echo: héllo")),
        "{received:?}"
    );

    assert!(t.alive());
    t.close().await;
    assert!(!t.alive());
    let notes = logged(&t, Direction::Note);
    assert!(
        notes.iter().any(|n| n == "session ended (DELETE)"),
        "{notes:?}"
    );
    let after = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":4,"method":"tools/list"})),
            T,
        )
        .await;
    assert!(matches!(after, Err(McpError::Closed { .. })), "{after:?}");
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn python_sdk_server_legacy_era_over_http() {
    let Some(p) = peers() else { return };
    let (_server, url) = sdk_http(&p.python, &p.server_script("sdk_server.py"));
    let t = transport(&url);
    let init = legacy_handshake(&t).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "toolgauge-sdk-peer");
    assert!(t.session_id().is_some());
    let list = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
            T,
        )
        .await
        .expect("tools/list");
    assert_eq!(
        tool_names(&list),
        [
            "add",
            "ask_forever",
            "confirm_delete",
            "delete_record",
            "echo",
            "fail"
        ]
    );
    let call = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
                        "params":{"name":"add","arguments":{"a":2,"b":40}}})),
            T,
        )
        .await
        .expect("tools/call");
    assert_eq!(call["result"]["content"][0]["text"], "42");
    assert_eq!(call["result"]["isError"], false);
    t.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn python_sdk_server_modern_era_over_http() {
    let Some(p) = peers() else { return };
    let (_server, url) = sdk_http(&p.python, &p.server_script("sdk_server.py"));
    let t = transport(&url);
    // The probe goes out before any version is agreed: its headers come from its body.
    let discover = t
        .request(&modern(1, "server/discover", json!({})), T)
        .await
        .expect("discover");
    assert_eq!(discover["result"]["supportedVersions"], json!([MODERN]));
    t.set_protocol(MODERN, true);
    assert_eq!(t.session_id(), None);
    let list = t
        .request(&modern(2, "tools/list", json!({})), T)
        .await
        .expect("tools/list");
    assert_eq!(
        tool_names(&list),
        [
            "add",
            "ask_forever",
            "confirm_delete",
            "delete_record",
            "echo",
            "fail"
        ]
    );
    // The server checks Mcp-Method/Mcp-Name against the body (-32020 otherwise), so a
    // result here proves the headers agreed; a non-ASCII argument travels in the body.
    let call = t
        .request(
            &modern(
                3,
                "tools/call",
                json!({"name":"echo","arguments":{"text":"naïve ☃"}}),
            ),
            T,
        )
        .await
        .expect("tools/call");
    assert_eq!(call["result"]["content"][0]["text"], "naïve ☃");
    let fail = t
        .request(
            &modern(
                4,
                "tools/call",
                json!({"name":"fail","arguments":{"reason":"nope"}}),
            ),
            T,
        )
        .await
        .expect("tools/call fail");
    assert_eq!(fail["result"]["isError"], true);
    // An unknown method is a JSON-RPC error at HTTP 404: still the server's answer.
    let unknown = t
        .request(&modern(5, "no/such", json!({})), T)
        .await
        .expect("an error answer");
    assert_eq!(unknown["id"], 5);
    assert_eq!(unknown["error"]["code"], -32601);
}

// ---- end to end through the client ----------------------------------------------

/// Generous bounds: a slow machine must not turn a modern server into a legacy one in a
/// test that asserts the era.
fn patient() -> ClientOptions {
    ClientOptions {
        discover_timeout: Duration::from_secs(60),
        request_timeout: Duration::from_secs(60),
        ..ClientOptions::default()
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn client_sent(client: &McpClient, method: &str) -> Vec<Value> {
    client
        .log()
        .since(0)
        .into_iter()
        .filter(|e| e.direction == Direction::Sent)
        .filter_map(|e| serde_json::from_str::<Value>(&e.text).ok())
        .filter(|v| v["method"] == method)
        .collect()
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn client_over_http_modern_era_with_the_sdk_server() {
    let Some(p) = peers() else { return };
    let (_server, url) = sdk_http(&p.python, &p.server_script("sdk_server.py"));
    let spec: ServerSpec = url.parse().unwrap();
    let client = McpClient::connect(&spec, patient()).await.expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), MODERN);
    assert!(client_sent(&client, "initialize").is_empty());
    let tools = client.list_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for want in ["add", "echo", "fail", "delete_record"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let add = client
        .call_tool("add", &args(json!({"a": 20, "b": 22})))
        .await
        .expect("add");
    assert_eq!(add.structured, Some(json!({"result": 42})));
    assert!(!add.is_error);
    let fail = client
        .call_tool("fail", &args(json!({"reason": "on purpose"})))
        .await
        .expect("a tool error is a result");
    assert!(fail.is_error);
    assert!(
        fail.text_for_model().contains("on purpose"),
        "{}",
        fail.text_for_model()
    );
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn client_over_http_legacy_era_with_the_sdk_server() {
    let Some(p) = peers() else { return };
    let (_server, url) = sdk_http_with(&p.python, &p.server_script("sdk_server.py"), &["--legacy"]);
    let spec: ServerSpec = url.parse().unwrap();
    let client = McpClient::connect(&spec, patient()).await.expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    // The probe was refused with HTTP 400, then the handshake went through.
    assert_eq!(client_sent(&client, "server/discover").len(), 1);
    assert_eq!(client_sent(&client, "initialize").len(), 1);
    let echo = client
        .call_tool("echo", &args(json!({"text": "ünïcode"})))
        .await
        .expect("echo");
    assert_eq!(echo.text_for_model(), "ünïcode");
    client.close().await;
}

#[tokio::test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
async fn client_over_http_legacy_era_with_server_everything() {
    let Some(p) = peers() else { return };
    let (_server, url) = everything_http(&p.node, &p.everything());
    let spec: ServerSpec = url.parse().unwrap();
    let client = McpClient::connect(&spec, patient()).await.expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    let tools = client.list_tools().await.expect("tools");
    assert!(tools.iter().any(|t| t.name() == "echo"));
    let echo = client
        .call_tool("echo", &args(json!({"message": "over http"})))
        .await
        .expect("echo");
    assert_eq!(echo.text_for_model(), "Echo: over http");
    assert!(!echo.is_error);
    client.close().await;
}

// ---- hostile servers -------------------------------------------------------------

fn sse(events: &[&str]) -> ResponseTemplate {
    let body: String = events.iter().map(|e| format!("{e}\n\n")).collect();
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn json_reply(v: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(v)
}

async fn mock(server: &MockServer, rpc_method: &str, reply: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/mcp"))
        .and(body_partial_json(json!({"method": rpc_method})))
        .respond_with(reply)
        .mount(server)
        .await;
}

fn list(id: u64) -> Outgoing {
    out(json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}))
}

async fn posts(server: &MockServer) -> Vec<Request> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .collect()
}

fn hdr(r: &Request, name: &str) -> Option<String> {
    r.headers.get(name).map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test]
async fn sse_notifications_and_server_requests_come_before_the_answer() {
    let server = MockServer::start().await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#;
    let sampling = r#"{"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{}}"#;
    let stray = r#"{"jsonrpc":"2.0","id":99,"result":{}}"#;
    let answer = r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"t","x-vendor":1}]}}"#;
    mock(
        &server,
        "tools/list",
        sse(&[
            ": a comment line",
            &format!("event: message\ndata: {note}"),
            "event: keepalive\ndata: tick",
            &format!("id: 1\ndata: {ping}"),
            &format!("data: {sampling}"),
            &format!("data: {stray}"),
            &format!("data: {answer}"),
        ]),
    )
    .await;
    // Answers to server requests are POSTed back and accepted.
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"id": "srv-1"})))
        .respond_with(ResponseTemplate::new(202))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"id": 77})))
        .respond_with(ResponseTemplate::new(202))
        .mount(&server)
        .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    let got = t.request(&list(5), T).await.expect("the answer");
    assert_eq!(got, serde_json::from_str::<Value>(answer).unwrap());

    // Each event's data is logged verbatim, in order.
    // A non-message event (a keep-alive) is logged but not read as JSON-RPC.
    assert_eq!(
        logged(&t, Direction::Received),
        [note, "tick", ping, sampling, stray, answer]
    );
    let answers: Vec<Value> = posts(&server)
        .await
        .iter()
        .skip(1)
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            json!({"jsonrpc":"2.0","id":"srv-1","result":{}}),
            json!({"jsonrpc":"2.0","id":77,"error":{"code":-32601,
                   "message":"toolgauge's MCP client does not serve `sampling/createMessage`"}}),
        ]
    );
}

#[tokio::test]
async fn the_wire_headers_of_a_request() {
    let server = MockServer::start().await;
    mock(
        &server,
        "tools/list",
        json_reply(json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})),
    )
    .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    t.request(&list(1), T).await.unwrap();
    let r = &posts(&server).await[0];
    assert_eq!(hdr(r, "content-type").as_deref(), Some("application/json"));
    assert_eq!(
        hdr(r, "accept").as_deref(),
        Some("application/json, text/event-stream")
    );
    // Nothing negotiated yet, legacy: no version, no routing headers.
    assert_eq!(hdr(r, "mcp-protocol-version"), None);
    assert_eq!(hdr(r, "mcp-method"), None);
    // The body sent is the body logged.
    assert_eq!(
        std::str::from_utf8(&r.body).unwrap(),
        logged(&t, Direction::Sent)[0]
    );
}

#[tokio::test]
async fn modern_requests_carry_routing_headers_consistent_with_the_body() {
    let server = MockServer::start().await;
    mock(
        &server,
        "server/discover",
        json_reply(json!({"jsonrpc":"2.0","id":1,"result":{"supportedVersions":[MODERN]}})),
    )
    .await;
    mock(
        &server,
        "tools/list",
        json_reply(json!({"jsonrpc":"2.0","id":2,"result":{"tools":[
            {"name":"route","inputSchema":{"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"},
                "priority":{"type":"integer","x-mcp-header":"Priority"},
                "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
                "query":{"type":"string"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{
                "score":{"type":"number","x-mcp-header":"Score"}}}}
        ]}})),
    )
    .await;
    for id in [3, 4] {
        Mock::given(method("POST"))
            .and(body_partial_json(json!({"method": "tools/call", "id": id})))
            .respond_with(json_reply(
                json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}}),
            ))
            .mount(&server)
            .await;
    }
    mock(
        &server,
        "resources/read",
        json_reply(json!({"jsonrpc":"2.0","id":5,"result":{"contents":[]}})),
    )
    .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    t.request(&modern(1, "server/discover", json!({})), T)
        .await
        .unwrap();
    t.set_protocol(MODERN, true);
    t.request(&modern(2, "tools/list", json!({})), T)
        .await
        .unwrap();
    t.request(
        &modern(
            3,
            "tools/call",
            json!({"name":"route","arguments":{
            "region":"Zürich","priority":7,"verbose":null,"query":"SELECT 1"}}),
        ),
        T,
    )
    .await
    .unwrap();
    t.request(
        &modern(
            4,
            "tools/call",
            json!({"name":"bad","arguments":{"score":1.5}}),
        ),
        T,
    )
    .await
    .unwrap();
    t.request(
        &modern(5, "resources/read", json!({"uri":"file:///a b.txt"})),
        T,
    )
    .await
    .unwrap();

    let r = posts(&server).await;
    assert_eq!(r.len(), 5);
    for req in &r {
        assert_eq!(hdr(req, "mcp-protocol-version").as_deref(), Some(MODERN));
        assert_eq!(hdr(req, "mcp-session-id"), None);
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        assert_eq!(hdr(req, "mcp-method").as_deref(), body["method"].as_str());
    }
    assert_eq!(hdr(&r[0], "mcp-name"), None);
    assert_eq!(hdr(&r[1], "mcp-name"), None);
    assert_eq!(hdr(&r[2], "mcp-name").as_deref(), Some("route"));
    // "Zürich" is not ASCII: Base64 of its UTF-8 bytes, wrapped.
    assert_eq!(
        hdr(&r[2], "mcp-param-region").as_deref(),
        Some("=?base64?WsO8cmljaA==?=")
    );
    assert_eq!(hdr(&r[2], "mcp-param-priority").as_deref(), Some("7"));
    assert_eq!(
        hdr(&r[2], "mcp-param-verbose"),
        None,
        "null values get no header"
    );
    assert_eq!(hdr(&r[2], "mcp-param-query"), None, "unannotated");
    assert_eq!(hdr(&r[3], "mcp-name").as_deref(), Some("bad"));
    assert_eq!(
        hdr(&r[3], "mcp-param-score"),
        None,
        "invalid annotation ignored"
    );
    assert_eq!(hdr(&r[4], "mcp-name").as_deref(), Some("file:///a b.txt"));
}

#[tokio::test]
async fn the_session_is_echoed_and_a_404_means_it_expired() {
    let server = MockServer::start().await;
    mock(
        &server,
        "initialize",
        json_reply(json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}))
            .insert_header("mcp-session-id", "sess-42"),
    )
    .await;
    Mock::given(method("POST"))
        .and(body_partial_json(
            json!({"method":"notifications/initialized"}),
        ))
        .and(header("mcp-session-id", "sess-42"))
        .respond_with(ResponseTemplate::new(202))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method":"tools/list"})))
        .and(header("mcp-session-id", "sess-42"))
        .respond_with(json_reply(
            json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}}),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method":"tools/list"})))
        .respond_with(ResponseTemplate::new(404).set_body_json(
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"method":"no/such"})))
        .respond_with(ResponseTemplate::new(404).set_body_json(
            json!({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .respond_with(ResponseTemplate::new(405))
        .mount(&server)
        .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    legacy_handshake(&t).await;
    assert_eq!(t.session_id().as_deref(), Some("sess-42"));
    t.request(&list(2), T).await.expect("first list");
    // A 404 that answers this very request (its id) is the server's answer, not expiry.
    let unknown = t
        .request(&out(json!({"jsonrpc":"2.0","id":9,"method":"no/such"})), T)
        .await
        .expect("an error answer");
    assert_eq!(unknown["error"]["code"], -32601);
    let expired = t.request(&list(3), T).await.unwrap_err();
    match &expired {
        McpError::Closed { method, why, .. } => {
            assert_eq!(method, "tools/list");
            assert!(why.contains("session expired"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let r = posts(&server).await;
    assert_eq!(
        hdr(&r[0], "mcp-session-id"),
        None,
        "initialize goes without one"
    );
    assert_eq!(hdr(&r[0], "mcp-protocol-version"), None);
    for req in &r[1..] {
        assert_eq!(hdr(req, "mcp-session-id").as_deref(), Some("sess-42"));
        assert_eq!(
            hdr(req, "mcp-protocol-version").as_deref(),
            Some("2025-06-18")
        );
        assert_eq!(hdr(req, "mcp-method"), None, "legacy: no routing headers");
    }
    // close() ends the session with DELETE; the 405 is tolerated.
    t.close().await;
    let all = server.received_requests().await.unwrap();
    let delete = all
        .iter()
        .find(|r| r.method.as_str() == "DELETE")
        .expect("a DELETE");
    assert_eq!(hdr(delete, "mcp-session-id").as_deref(), Some("sess-42"));
    assert!(
        logged(&t, Direction::Note)
            .iter()
            .any(|n| n.contains("405"))
    );
}

#[tokio::test]
async fn a_dropped_stream_is_resumed_with_last_event_id() {
    let server = MockServer::start().await;
    // The POST's stream primes an event id and a retry, then ends without the answer.
    mock(&server, "tools/call", sse(&["id: ev-1\nretry: 20\ndata: "])).await;
    Mock::given(method("GET"))
        .and(header("last-event-id", "ev-1"))
        .respond_with(sse(&[
            "id: ev-2\ndata: ",
            r#"id: ev-3
data: {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"resumed"}]}}"#,
        ]))
        .mount(&server)
        .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    let got = t
        .request(
            &out(json!({"jsonrpc":"2.0","id":8,"method":"tools/call",
                        "params":{"name":"slow","arguments":{}}})),
            T,
        )
        .await
        .expect("the answer after resuming");
    assert_eq!(got["result"]["content"][0]["text"], "resumed");
    let gets: Vec<Request> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "GET")
        .collect();
    assert_eq!(gets.len(), 1);
    assert_eq!(
        hdr(&gets[0], "accept").as_deref(),
        Some("text/event-stream")
    );
    assert!(
        logged(&t, Direction::Note)
            .iter()
            .any(|n| n.contains("resuming from event `ev-1` in 20 ms"))
    );
}

#[tokio::test]
async fn a_stream_that_ends_without_an_event_id_is_a_closed_error() {
    let server = MockServer::start().await;
    mock(
        &server,
        "tools/list",
        sse(&[r#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#]),
    )
    .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    let err = t.request(&list(1), T).await.unwrap_err();
    assert!(
        matches!(&err, McpError::Closed { why, .. } if why.contains("ended before the response")),
        "{err:?}"
    );
}

#[tokio::test]
async fn http_failures_become_clear_harness_errors() {
    let server = MockServer::start().await;
    mock(
        &server,
        "fail/text",
        ResponseTemplate::new(500).set_body_string("<html><body>upstream exploded</body></html>"),
    )
    .await;
    mock(
        &server,
        "fail/rpc",
        ResponseTemplate::new(500).set_body_json(
            json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}),
        ),
    )
    .await;
    mock(
        &server,
        "fail/notjson",
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/plain")
            .set_body_string("hello, I am not JSON"),
    )
    .await;
    mock(&server, "fail/badevent", sse(&["data: {not json"])).await;
    mock(
        &server,
        "fail/wrongid",
        json_reply(json!({"jsonrpc":"2.0","id":999,"result":{}})),
    )
    .await;
    mock(
        &server,
        "fail/stall",
        json_reply(json!({"jsonrpc":"2.0","id":6,"result":{}})).set_delay(Duration::from_secs(60)),
    )
    .await;
    mock(
        &server,
        "fail/auth",
        ResponseTemplate::new(401).set_body_string("unauthorized"),
    )
    .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    let call = |id: u64, m: &str| out(json!({"jsonrpc":"2.0","id":id,"method":m}));
    match t.request(&call(8, "fail/auth"), T).await.unwrap_err() {
        McpError::Connect { why, .. } => {
            assert!(why.contains("HTTP 401"), "{why}");
            assert!(why.contains("wants authorization"), "{why}");
        }
        other => panic!("{other:?}"),
    }

    match t.request(&call(1, "fail/text"), T).await.unwrap_err() {
        McpError::Closed { method, why, .. } => {
            assert_eq!(method, "fail/text");
            assert!(why.contains("HTTP 500"), "{why}");
            assert!(why.contains("upstream exploded"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // A JSON-RPC error at HTTP 500 is the server's answer, handed over as such.
    let rpc = t.request(&call(2, "fail/rpc"), T).await.unwrap();
    assert_eq!(rpc["error"]["code"], -32603);
    match t.request(&call(3, "fail/notjson"), T).await.unwrap_err() {
        McpError::Malformed { why, .. } => {
            assert!(why.contains("not JSON"), "{why}");
            assert!(why.contains("hello, I am not JSON"), "{why}");
            assert!(why.contains("text/plain"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let bad = t.request(&call(4, "fail/badevent"), T).await.unwrap_err();
    assert!(
        matches!(&bad, McpError::Malformed { why, .. } if why.contains("{not json")),
        "{bad:?}"
    );
    let wrong = t.request(&call(5, "fail/wrongid"), T).await.unwrap_err();
    assert!(
        matches!(&wrong, McpError::Malformed { why, .. } if why.contains("no response with id 5")),
        "{wrong:?}"
    );
    let stalled = t
        .request(&call(6, "fail/stall"), Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(
        stalled,
        McpError::Timeout {
            server: format!("{}/mcp", server.uri()),
            method: "fail/stall".into(),
            timeout_ms: 300
        }
    );
    // Unmatched methods get wiremock's 404 with an empty body: a wrong endpoint, or a
    // legacy server that does not know the method (not JSON-RPC either way).
    match t.request(&call(7, "nothing/here"), T).await.unwrap_err() {
        McpError::Malformed { why, .. } => {
            assert!(why.contains("HTTP 404"), "{why}");
            assert!(why.contains("MCP endpoint"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_refused_connection_names_the_url() {
    // Held to the end: nothing can take the port and answer.
    let refusing = RefusingPort::new();
    let url = format!("http://127.0.0.1:{}/mcp", refusing.port);
    let t = transport(&url);
    match t.request(&initialize(1), T).await.unwrap_err() {
        McpError::Connect { server, why } => {
            assert_eq!(server, url);
            assert!(why.contains(&url), "{why}");
            assert!(why.contains("is the server running"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // The attempt is still in the log.
    assert_eq!(logged(&t, Direction::Sent).len(), 1);
}

#[tokio::test]
async fn resuming_is_bounded_and_a_refused_resume_is_an_error() {
    let server = MockServer::start().await;
    // A stream that ends at the same event every time: no progress, so give up.
    mock(&server, "tools/list", sse(&["id: same\nretry: 1\ndata: "])).await;
    Mock::given(method("GET"))
        .and(header("last-event-id", "same"))
        .respond_with(sse(&["id: same\ndata: "]))
        .mount(&server)
        .await;
    // A server that cannot resume at all.
    mock(&server, "tools/call", sse(&["id: x1\nretry: 1\ndata: "])).await;
    Mock::given(method("GET"))
        .and(header("last-event-id", "x1"))
        .respond_with(ResponseTemplate::new(405))
        .mount(&server)
        .await;
    let t = transport(&format!("{}/mcp", server.uri()));
    match t.request(&list(1), T).await.unwrap_err() {
        McpError::Closed { why, .. } => assert!(why.contains("3 times in a row"), "{why}"),
        other => panic!("{other:?}"),
    }
    let gets = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "GET")
        .count();
    assert_eq!(gets, 3);
    let call = out(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
                          "params":{"name":"t","arguments":{}}}));
    match t.request(&call, T).await.unwrap_err() {
        McpError::Closed { why, .. } => {
            assert!(why.contains("resuming it was refused"), "{why}");
            assert!(why.contains("HTTP 405"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

/// A legacy server that sends `elicitation/create` on the standalone GET stream (as the
/// TypeScript SDK does for a request not tied to a POST) and lists one tool with an
/// invalid `x-mcp-header`: the client declares the capability, opens the stream with
/// the session, answers by its policy with the schema's defaults filled, and drops the
/// invalid tool with a note.
#[tokio::test]
async fn legacy_standalone_stream_elicitation_is_answered_and_invalid_tools_dropped() {
    let server = MockServer::start().await;
    mock(
        &server,
        "server/discover",
        json_reply(json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}})),
    )
    .await;
    mock(
        &server,
        "initialize",
        json_reply(
            json!({"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25",
            "capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"0"}}}),
        )
        .insert_header("mcp-session-id", "sess-9"),
    )
    .await;
    mock(
        &server,
        "notifications/initialized",
        ResponseTemplate::new(202),
    )
    .await;
    let elicit = json!({"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{
        "message":"fill in","requestedSchema":{"type":"object","properties":{
            "name":{"type":"string","default":"John"},
            "age":{"type":"integer","default":30}}}}});
    Mock::given(method("GET"))
        .and(path("/mcp"))
        .and(header("mcp-session-id", "sess-9"))
        .and(header("accept", "text/event-stream"))
        .respond_with(sse(&[&format!("data: {elicit}")]))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"id": "e1"})))
        .respond_with(ResponseTemplate::new(202))
        .mount(&server)
        .await;
    mock(
        &server,
        "tools/list",
        json_reply(json!({"jsonrpc":"2.0","id":3,"result":{"tools":[
            {"name":"good","inputSchema":{"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{
                "v":{"type":"string","x-mcp-header":""}}}}]}})),
    )
    .await;

    let spec: ServerSpec = format!("{}/mcp", server.uri()).parse().unwrap();
    let options = ClientOptions {
        input: toolgauge::mcp::InputPolicy::Accept(args(json!({"name": "Ada"}))),
        ..patient()
    };
    let client = McpClient::connect(&spec, options).await.expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    let init = client_sent(&client, "initialize");
    assert_eq!(
        init[0]["params"]["capabilities"],
        json!({"elicitation": {"form": {}}})
    );

    let tools = client.list_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["good"]);
    let notes: Vec<String> = client
        .log()
        .since(0)
        .into_iter()
        .filter(|e| e.direction == Direction::Note)
        .map(|e| e.text)
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with("dropped tool `bad`: ")),
        "{notes:?}"
    );

    // The answer is POSTed by the stream's background task: wait for it (bounded).
    let want = json!({"jsonrpc":"2.0","id":"e1","result":{"action":"accept",
        "content":{"name":"Ada","age":30}}});
    let mut answered = None;
    for _ in 0..200 {
        answered = posts(&server).await.into_iter().find_map(|r| {
            let v: Value = serde_json::from_slice(&r.body).ok()?;
            (v["id"] == "e1").then_some((v, hdr(&r, "mcp-session-id")))
        });
        if answered.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(answered, Some((want, Some("sess-9".to_string()))));
    client.close().await;
}
