//! `toolgauge mcp tools`, `mcp snapshot [--check]`, `import mcp` and suites with
//! `tools_from`: offline against snapshot files, and against the real peers
//! (server-everything and the Python SDK server over stdio).

use serde_json::Value;

use crate::mcp_peers::peers;
use crate::support::{BAD_INPUT, OK, THRESHOLD_FAILED, Toolgauge};

/// A snapshot of a made-up server: one tool with a title, annotations and a required
/// pair of arguments, one with vendor fields a typed SDK would drop.
const SNAPSHOT: &str = r#"{
  "format": 1,
  "server": "stdio:python3 calc_server.py",
  "era": "modern",
  "protocol_version": "2026-07-28",
  "server_info": {"name": "calc", "version": "0.3.1"},
  "tools": [
    {
      "name": "add",
      "title": "Add numbers",
      "description": "Add two integers.",
      "inputSchema": {"type": "object", "properties": {"a": {"type": "integer", "description": "First addend"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
      "annotations": {"readOnlyHint": true, "openWorldHint": false}
    },
    {
      "name": "lookup",
      "description": "Look up a word in the dictionary.",
      "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
      "_meta": {"com.example/rank": 3},
      "x-vendor": [1, 2]
    }
  ]
}"#;

/// The same two tools declared by hand in `tools:` (name, description, inputSchema as
/// parameters): what a `tools_from` suite must compile to.
const INLINE_SUITE: &str = r#"name: inline
tools:
  - name: add
    description: "Add two integers."
    parameters: {"type": "object", "properties": {"a": {"type": "integer", "description": "First addend"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
  - name: lookup
    description: "Look up a word in the dictionary."
    parameters: {"type": "object", "properties": {"word": {"type": "string"}}}
cases:
  - id: sum
    kind: should_call
    prompt: "What is 2 + 3?"
    expect:
      calls:
        - tool: add
          args: { a: 2, b: 3 }
  - id: greet
    kind: should_not_call
    prompt: "Say hello."
"#;

/// A `tools_from` suite over `srv.snapshot.json` with the cases of [`INLINE_SUITE`].
fn from_snapshot_suite() -> String {
    let cases = &INLINE_SUITE[INLINE_SUITE.find("cases:").unwrap()..];
    format!(
        "name: fromsnap\ntools_from:\n  mcp: \"stdio:python3 calc_server.py\"\n  snapshot: srv.snapshot.json\n{cases}"
    )
}

fn with_snapshot() -> Toolgauge {
    let t = Toolgauge::new();
    t.write("srv.snapshot.json", SNAPSHOT);
    t
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The tool-definition tokens a run records for its only variant.
fn run_tokens(t: &Toolgauge, dir: &str) -> u64 {
    let meta = t.run_dir(dir).json("run.json");
    let tokens = meta["tool_definition_tokens"].as_object().unwrap();
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    tokens.values().next().unwrap().as_u64().unwrap()
}

#[test]
fn tools_of_a_snapshot_prints_era_info_hints_and_the_tokens_a_run_counts() {
    let t = with_snapshot();
    let o = t
        .run(&["mcp", "tools", "srv.snapshot.json"])
        .expect_code(OK);
    o.stdout_has(&[
        "server: stdio:python3 calc_server.py (snapshot srv.snapshot.json)\n",
        "era: 2026-07-28 (modern: server/discover), protocol version 2026-07-28\n",
        "server info: calc 0.3.1\n",
        "add (Add numbers): ",
        "  Add two integers.\n",
        "  input: {\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"description\":\"First addend\"},\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}\n",
        "  annotations (the server's hints, not verified): readOnlyHint=true, openWorldHint=false\n",
        "lookup: ",
    ]);
    // `lookup` has no annotations: no hint line after it.
    let lookup = &o.stdout[o.stdout.find("lookup: ").unwrap()..];
    assert!(!lookup.contains("annotations"), "{lookup}");

    // The JSON form: each tool raw (vendor fields kept), and the token figures.
    let j = json_of(
        &t.run(&["mcp", "tools", "srv.snapshot.json", "--json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["era"], "modern");
    assert_eq!(j["source"], "snapshot");
    assert_eq!(j["server_info"]["name"], "calc");
    let snap = json_of(SNAPSHOT);
    assert_eq!(j["tools"][0]["raw"], snap["tools"][0]);
    assert_eq!(j["tools"][1]["raw"], snap["tools"][1]);
    assert_eq!(j["tools"][1]["raw"]["_meta"]["com.example/rank"], 3);
    let total = j["total_tokens"].as_u64().unwrap();
    let per: Vec<u64> = (0..2)
        .map(|i| j["tools"][i]["tokens"].as_u64().unwrap())
        .collect();
    assert!(
        o.stdout
            .contains(&format!("2 tools, {total} tokens of tool definitions"))
    );
    assert!(
        o.stdout
            .contains(&format!("add (Add numbers): {} tokens", per[0]))
    );
    assert!(o.stdout.contains(&format!("lookup: {} tokens", per[1])));

    // The total is what a run of the same tools reports, whether they are declared by
    // hand or taken from the snapshot.
    t.write("inline.yaml", INLINE_SUITE);
    t.write("fromsnap.yaml", from_snapshot_suite());
    for (suite, dir) in [("inline.yaml", "r1"), ("fromsnap.yaml", "r2")] {
        t.run(&[
            "run",
            suite,
            "-t",
            "scripted:oracle",
            "--out",
            dir,
            "--format",
            "json",
        ])
        .expect_code(OK);
        assert_eq!(run_tokens(&t, dir), total, "{suite}");
    }
    // Each tool alone: a one-element array costs less than the pair together.
    assert!(per[0] < total && per[1] < total && per[0] + per[1] >= total - 2);
}

#[test]
fn a_tools_from_snapshot_suite_runs_offline_and_keeps_the_raw_tools() {
    let t = with_snapshot();
    t.write("fromsnap.yaml", from_snapshot_suite());
    t.run(&["validate", "fromsnap.yaml"])
        .expect_code(OK)
        .stdout_has(&["fromsnap.yaml: ok (2 tools, 2 cases: 2 single-turn; variants: default)"]);
    t.run(&[
        "run",
        "fromsnap.yaml",
        "-t",
        "scripted:oracle",
        "--out",
        "run",
        "--format",
        "json",
    ])
    .expect_code(OK);
    let run = t.run_dir("run");
    let meta = run.json("run.json");
    let defs = &meta["tools"]["default"];
    assert_eq!(defs[0]["name"], "add");
    assert_eq!(defs[0]["description"], "Add two integers.");
    assert_eq!(
        defs[1]["parameters"],
        json_of(r#"{"type": "object", "properties": {"word": {"type": "string"}}}"#)
    );
    // The server's tools as listed, vendor fields included, beside the run.
    let kept = run.json("mcp_tools.json");
    assert_eq!(kept["origin"], "snapshot");
    assert_eq!(kept["server"], "stdio:python3 calc_server.py");
    assert_eq!(kept["tools"], json_of(SNAPSHOT)["tools"]);
    let trials = run.trials();
    assert_eq!(trials.len(), 2);
    assert!(trials.iter().all(|t| t["verdict"] == "pass"), "{trials:?}");
}

#[test]
fn tools_from_variants_word_server_tools_beside_the_server_wording() {
    let t = with_snapshot();
    let suite = from_snapshot_suite().replace(
        "  snapshot: srv.snapshot.json\n",
        "  snapshot: srv.snapshot.json\n  variants:\n    add:\n      mine: \"Return a + b for two integers a and b.\"\nvariants:\n  server: {}\n",
    );
    t.write("worded.yaml", &suite);
    t.run(&["validate", "worded.yaml"])
        .expect_code(OK)
        .stdout_has(&["worded.yaml: ok (2 tools, 2 cases: 2 single-turn; variants: mine, server)"]);
    t.run(&[
        "run",
        "worded.yaml",
        "-t",
        "scripted:oracle",
        "--out",
        "run",
        "--format",
        "json",
    ])
    .expect_code(OK);
    let meta = t.run_dir("run").json("run.json");
    assert_eq!(
        meta["tools"]["server"][0]["description"],
        "Add two integers."
    );
    assert_eq!(
        meta["tools"]["mine"][0]["description"],
        "Return a + b for two integers a and b."
    );
    // A tool the variant does not word keeps the server's text.
    assert_eq!(
        meta["tools"]["mine"][1]["description"],
        "Look up a word in the dictionary."
    );
}

/// Write `suite` as `s.yaml` next to the snapshot and validate it: exit 2, stderr.
fn refused(t: &Toolgauge, suite: &str) -> String {
    t.write("s.yaml", suite);
    let o = t.run(&["validate", "s.yaml"]).expect_code(BAD_INPUT);
    o.stderr
}

const CASES: &str = "cases:\n  - id: a\n    kind: should_not_call\n    prompt: hi\n";

#[test]
fn bad_tools_from_is_a_located_error() {
    let t = with_snapshot();
    let e = refused(&t, &format!("tools_from: {{}}\n{CASES}"));
    assert!(
        e.contains("error: s.yaml:1:13: `tools_from` names no tools: it needs `mcp: SERVER`, `snapshot: FILE`, or both\n"),
        "{e}"
    );
    assert!(e.contains("  field: tools_from\n"), "{e}");

    let e = refused(&t, &format!("tools_from:\n  mcp: \"ftp://nope\"\n{CASES}"));
    assert!(
        e.contains("error: s.yaml:2:8: `ftp://nope` is not an MCP server: write `stdio:CMD ARGS…` to spawn a server, or an `http://`/`https://` URL of a Streamable HTTP endpoint\n"),
        "{e}"
    );
    assert!(e.contains("  field: tools_from.mcp\n"), "{e}");

    let e = refused(
        &t,
        &format!("tools_from:\n  snapshot: missing.json\n{CASES}"),
    );
    assert!(
        e.contains("error: s.yaml:2:13: MCP snapshot `missing.json`: cannot read it ("),
        "{e}"
    );
    assert!(
        e.contains("  hint: write it with `toolgauge mcp snapshot SERVER missing.json` (the path is relative to the suite)\n"),
        "{e}"
    );

    t.write("corrupt.json", "{\"format\": 1,");
    let e = refused(
        &t,
        &format!("tools_from:\n  snapshot: corrupt.json\n{CASES}"),
    );
    assert!(
        e.contains("error: s.yaml:2:13: MCP snapshot `corrupt.json`: not a toolgauge MCP snapshot: EOF while parsing"),
        "{e}"
    );
    t.write(
        "noname.json",
        r#"{"format":1,"server":"s","era":"legacy","protocol_version":"2025-06-18","tools":[{"description":"x"}]}"#,
    );
    let e = refused(
        &t,
        &format!("tools_from:\n  snapshot: noname.json\n{CASES}"),
    );
    assert!(e.contains("MCP snapshot `noname.json`: "), "{e}");

    // A suite tool with a server tool's name, and a wording of a tool the server lacks.
    let e = refused(
        &t,
        &format!(
            "tools:\n  - name: add\n    description: mine\n    parameters: {{type: object}}\ntools_from:\n  snapshot: srv.snapshot.json\n  variants:\n    lokup:\n      mine: \"Find a word.\"\n{CASES}"
        ),
    );
    assert!(
        e.contains("s.yaml:2:11: tool `add` is declared in `tools` and also comes from `tools_from` (the MCP server lists a tool of that name)\n"),
        "{e}"
    );
    assert!(e.contains("  field: tools[0].name\n"), "{e}");
    assert!(
        e.contains(
            "s.yaml:8:5: `tools_from.variants` words tool `lokup`, which the server does not list\n"
        ),
        "{e}"
    );
    assert!(
        e.contains(
            "  hint: did you mean `lookup`? word only tools the server lists: add, lookup\n"
        ),
        "{e}"
    );
    assert!(e.contains("2 problems found"), "{e}");
}

#[test]
fn bad_servers_on_the_command_line_exit_2() {
    let t = with_snapshot();
    for args in [
        &["mcp", "tools", "server-everything"][..],
        &["mcp", "snapshot", "srv.snapshot.json", "out.json"][..],
        &["import", "mcp", "stdio:", "--out", "x.yaml"][..],
    ] {
        let o = t.run(args).expect_code(BAD_INPUT);
        assert!(o.stderr.contains("is not an MCP server"), "{}", o.stderr);
        assert!(
            o.stderr.contains("hint: quote the whole server"),
            "{}",
            o.stderr
        );
    }
    // A corrupt snapshot given where a server may be a file.
    t.write("corrupt.json", "[]");
    t.run(&["mcp", "tools", "corrupt.json"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["error: MCP snapshot `corrupt.json`: not a toolgauge MCP snapshot"]);
    // --check against a pin that does not exist fails before any server is started.
    t.run(&[
        "mcp",
        "snapshot",
        "--check",
        "stdio:no-such-command-xyz",
        "none.json",
    ])
    .expect_code(BAD_INPUT)
    .stderr_has(&["error: MCP snapshot `none.json`: cannot read it"]);
    assert!(!t.path().join("out.json").exists());
}

#[test]
fn import_from_a_snapshot_writes_a_suite_that_names_what_to_fill_in() {
    let t = with_snapshot();
    let o = t
        .run(&[
            "import",
            "mcp",
            "srv.snapshot.json",
            "--out",
            "calc/calc.yaml",
        ])
        .expect_code(OK);
    o.stdout_has(&[
        "calc/calc.yaml: 2 tools of stdio:python3 calc_server.py, 3 placeholder cases; tools pinned in calc/calc.snapshot.json\n",
        "fill in the 5 `TODO(fill in)` values, then `toolgauge validate calc/calc.yaml`\n",
    ]);
    // The pin keeps every raw tool.
    let pinned = json_of(&t.read("calc/calc.snapshot.json"));
    assert_eq!(pinned["tools"], json_of(SNAPSHOT)["tools"]);
    let suite = t.read("calc/calc.yaml");
    for line in [
        "tools_from:\n  mcp: \"stdio:python3 calc_server.py\"\n  snapshot: \"calc.snapshot.json\"\n",
        "variants:\n  server: {}\n",
        "  - id: \"call-add\"\n    kind: should_call\n",
        "        - tool: \"add\"\n          args:\n            \"a\": \"TODO(fill in): the integer `a` the request implies (First addend)\"\n            \"b\": \"TODO(fill in): the integer `b` the request implies\"\n",
        "  - id: \"call-lookup\"\n",
        "  - id: no-tool-needed\n    kind: should_not_call\n",
    ] {
        assert!(suite.contains(line), "{line:?} missing from:\n{suite}");
    }
    // `lookup` requires nothing: its expected call has no arguments.
    let lookup = &suite[suite.find("call-lookup").unwrap()..suite.find("no-tool-needed").unwrap()];
    assert!(!lookup.contains("args:"), "{lookup}");

    // Validate names each placeholder, with its line, and nothing else.
    let e = t
        .run(&["validate", "calc/calc.yaml"])
        .expect_code(BAD_INPUT)
        .stderr;
    assert_eq!(
        e.matches("placeholder to fill in: TODO(fill in)").count(),
        5,
        "{e}"
    );
    assert!(e.contains("5 problems found"), "{e}");
    let line_of = |needle: &str| suite.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let a = line_of("\"a\": \"TODO");
    assert!(
        e.contains(&format!("calc/calc.yaml:{a}:18: placeholder to fill in: TODO(fill in): the integer `a` the request implies (First addend)\n")),
        "{e}"
    );

    // Filled in, it validates and runs.
    let filled = suite
        .replace(
            "\"TODO(fill in): a request that needs `add` (Add two integers.)\"",
            "\"What is 2 + 3?\"",
        )
        .replace(
            "\"TODO(fill in): the integer `a` the request implies (First addend)\"",
            "2",
        )
        .replace(
            "\"TODO(fill in): the integer `b` the request implies\"",
            "3",
        )
        .replace(
            "\"TODO(fill in): a request that needs `lookup` (Look up a word in the dictionary.)\"",
            "\"What does 'ephemeral' mean?\"",
        )
        .replace(
            "\"TODO(fill in): a request none of the server's tools should answer\"",
            "\"Say hello.\"",
        );
    t.write("calc/calc.yaml", &filled);
    t.run(&["validate", "calc/calc.yaml"])
        .expect_code(OK)
        .stdout_has(&["calc/calc.yaml: ok (2 tools, 3 cases: 3 single-turn; variants: server)"]);
    t.run(&[
        "run",
        "calc/calc.yaml",
        "-t",
        "scripted:oracle",
        "--out",
        "run",
        "--format",
        "json",
    ])
    .expect_code(OK);

    // Existing files are kept unless --force.
    t.run(&[
        "import",
        "mcp",
        "srv.snapshot.json",
        "--out",
        "calc/calc.yaml",
    ])
    .expect_code(BAD_INPUT)
    .stderr_has(&[
        "error: calc/calc.yaml exists",
        "hint: give --force to replace it",
    ]);
    assert_eq!(t.read("calc/calc.yaml"), filled);
    t.run(&[
        "import",
        "mcp",
        "srv.snapshot.json",
        "--out",
        "calc/calc.yaml",
        "--force",
    ])
    .expect_code(OK);
    assert_eq!(t.read("calc/calc.yaml"), suite);
}

// ---- real peers ----------------------------------------------------------------------

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn tools_of_live_servers_over_stdio() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let sdk = p.sdk_stdio();
    let o = t.run(&["mcp", "tools", &sdk]).expect_code(OK);
    o.stdout_has(&[
        &format!("server: {sdk} (live)\n"),
        "server info: toolgauge-sdk-peer 1.0.0\n",
        "6 tools, ",
        "add: ",
        "  Add two integers and return the sum.\n",
        "  annotations (the server's hints, not verified): readOnlyHint=true\n",
        "delete_record: ",
        "  annotations (the server's hints, not verified): destructiveHint=true\n",
    ]);
    let j = json_of(
        &t.run(&["mcp", "tools", &sdk, "--json"])
            .expect_code(OK)
            .stdout,
    );
    let names: Vec<&str> = j["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
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
    assert_eq!(j["source"], "live");
    assert_eq!(
        j["tools"][0]["raw"]["inputSchema"]["required"],
        serde_json::json!(["a", "b"])
    );

    // server-everything speaks the legacy era.
    let everything = p.everything_stdio();
    let j = json_of(
        &t.run(&["mcp", "tools", &everything, "--json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["era"], "legacy");
    let names: Vec<&str> = j["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn snapshot_of_a_live_server_replays_offline_and_check_finds_drift() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let sdk = p.sdk_stdio();
    t.run(&["mcp", "snapshot", &sdk, "sdk.json"])
        .expect_code(OK)
        .stdout_has(&["wrote 6 tools of ", " to sdk.json\n"]);
    let snap = json_of(&t.read("sdk.json"));
    assert_eq!(snap["format"], 1);
    assert_eq!(snap["server"], sdk.as_str());
    assert_eq!(snap["server_info"]["name"], "toolgauge-sdk-peer");
    assert_eq!(snap["tools"][3]["annotations"]["destructiveHint"], true);

    // The live listing and the snapshot print the same tools and tokens.
    let live = json_of(
        &t.run(&["mcp", "tools", &sdk, "--json"])
            .expect_code(OK)
            .stdout,
    );
    let pinned = json_of(
        &t.run(&["mcp", "tools", "sdk.json", "--json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(live["tools"], pinned["tools"]);
    assert_eq!(live["total_tokens"], pinned["total_tokens"]);

    t.run(&["mcp", "snapshot", "--check", &sdk, "sdk.json"])
        .expect_code(OK)
        .stdout_has(&["sdk.json: up to date with ", "(6 tools)"]);

    // A stale pin: one description edited, one tool removed, one invented.
    let mut stale = snap.clone();
    stale["tools"][0]["description"] = "Adds.".into();
    let tools = stale["tools"].as_array_mut().unwrap();
    tools.remove(1);
    tools.push(serde_json::json!({"name": "gone_tool", "inputSchema": {"type": "object"}}));
    t.write("stale.json", serde_json::to_string_pretty(&stale).unwrap());
    let o = t
        .run(&["mcp", "snapshot", "--check", &sdk, "stale.json"])
        .expect_code(THRESHOLD_FAILED);
    o.stdout_has(&[
        "stale.json: stale, ",
        "  tool `add` changed: description\n",
        "  tool `gone_tool` is gone from the server\n",
        "  tool `echo` is new on the server\n",
        "refresh it with `toolgauge mcp snapshot ",
    ]);
    // --check never writes.
    assert_eq!(json_of(&t.read("stale.json")), stale);
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn import_and_tools_from_against_a_live_server() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let sdk = p.sdk_stdio();
    t.run(&["import", "mcp", &sdk, "--out", "sdk.yaml"])
        .expect_code(OK)
        .stdout_has(&[
            "sdk.yaml: 6 tools of ",
            "7 placeholder cases; tools pinned in sdk.snapshot.json\n",
        ]);
    let suite = t.read("sdk.yaml");
    assert!(
        suite.contains("  - id: \"call-delete_record\"\n"),
        "{suite}"
    );
    assert!(
        suite.contains(
            "\"record_id\": \"TODO(fill in): the string `record_id` the request implies\""
        ),
        "{suite}"
    );

    // Without a snapshot, the suite's tools are listed from the live server at load time.
    t.write(
        "live.yaml",
        format!("tools_from:\n  mcp: {}\n{}", serde_json::to_string(&sdk).unwrap(), "cases:\n  - id: sum\n    kind: should_call\n    prompt: \"2+3?\"\n    expect:\n      calls:\n        - tool: add\n          args: { a: 2, b: 3 }\n"),
    );
    t.run(&["validate", "live.yaml"])
        .expect_code(OK)
        .stdout_has(&["live.yaml: ok (6 tools, 1 case: 1 single-turn; variants: default)"]);
    t.run(&[
        "run",
        "live.yaml",
        "-t",
        "scripted:oracle",
        "--out",
        "run",
        "--format",
        "json",
    ])
    .expect_code(OK);
    assert_eq!(t.run_dir("run").json("mcp_tools.json")["origin"], "live");
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn an_unreachable_server_is_bad_input() {
    let Some(_) = peers() else { return };
    let t = Toolgauge::new();
    t.run(&["mcp", "tools", "stdio:./no-such-server-xyz --stdio"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["error: could not reach MCP server `stdio:./no-such-server-xyz --stdio`: "]);
    // A URL nothing listens on (a port held, never listening, to the end of the test).
    let refusing = crate::ports::RefusingPort::new();
    let url = format!("http://127.0.0.1:{}/mcp", refusing.port);
    t.run(&["mcp", "snapshot", &url, "x.json"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[&format!("error: could not reach MCP server `{url}`: ")]);
    assert!(!t.path().join("x.json").exists());
    t.write(
        "s.yaml",
        format!("tools_from:\n  mcp: \"stdio:./no-such-server-xyz\"\n{CASES}"),
    );
    let e = t.run(&["validate", "s.yaml"]).expect_code(BAD_INPUT).stderr;
    assert!(
        e.contains("error: s.yaml:2:8: could not list the tools of the suite's MCP server: could not reach MCP server `stdio:./no-such-server-xyz`: "),
        "{e}"
    );
    assert!(
        e.contains("hint: start the server (or fix the command), or pin its tools once with `toolgauge mcp snapshot stdio:./no-such-server-xyz FILE` and add `snapshot: FILE` so the suite loads offline"),
        "{e}"
    );
}

#[test]
fn server_tools_toolgauge_cannot_offer_are_errors_at_the_snapshot() {
    let t = Toolgauge::new();
    t.write(
        "odd.json",
        r#"{"format":1,"server":"stdio:x","era":"legacy","protocol_version":"2025-06-18","tools":[
 {"name":"ok","description":"fine","inputSchema":{"type":"object"}},
 {"name":"bad/name","description":"slash","inputSchema":{"type":"object"}},
 {"name":"badschema","description":"s","inputSchema":{"type":"object","properties":{"x":{"type":5}}}},
 {"name":"ok","description":"dup","inputSchema":{"type":"object"}}
]}"#,
    );
    let e = refused(&t, &format!("tools_from:\n  snapshot: odd.json\n{CASES}"));
    for (field, message) in [
        ("tools_from.tools[1].name", "invalid tool name `bad/name`"),
        (
            "tools_from.tools[2].parameters.properties.x.type",
            "the parameter schema of `badschema` does not compile",
        ),
        ("tools_from.tools[3].name", "duplicate tool name `ok`"),
    ] {
        assert!(e.contains(&format!("s.yaml:2:13: {message}")), "{e}");
        assert!(e.contains(&format!("  field: {field}\n")), "{e}");
    }
    assert!(e.contains("3 problems found"), "{e}");
}

#[test]
fn the_shipped_mcp_suite_replays_offline_with_the_server_wording_failing_twice() {
    let t = Toolgauge::new();
    let out = t.path().join("run");
    let out = out.to_str().unwrap();
    t.run_in(
        &crate::support::repo_root(),
        &[
            "run",
            "suites/mcp_tools.yaml",
            "--out",
            out,
            "--format",
            "json",
        ],
    )
    .expect_code(OK);
    let run = t.run_dir("run");
    // The journal is in finishing order: sort.
    let mut failed: Vec<(String, String)> = run
        .trials()
        .iter()
        .filter(|t| t["verdict"] != "pass")
        .map(|t| {
            (
                t["case_id"].as_str().unwrap().to_string(),
                t["variant"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            ("clean-up-vague".to_string(), "server".to_string()),
            ("upload-failed".to_string(), "server".to_string())
        ]
    );
    assert_eq!(run.trials().len(), 12);
    assert_eq!(
        run.json("mcp_tools.json")["tools"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
}

/// The Python SDK server over Streamable HTTP on a free port, killed when dropped (even
/// when the test panics).
struct HttpServer {
    _server: crate::ports::PortServer,
    url: String,
}

/// Start `sdk_server.py http PORT` and wait until it accepts connections (bounded, so a
/// server that never listens fails the test instead of hanging it; one that lost its
/// port to another process is started again on another, see [`crate::ports`]).
fn sdk_over_http(p: &crate::mcp_peers::Peers) -> HttpServer {
    let server = crate::ports::spawn_on_free_port("the SDK server", |port| {
        let mut cmd = std::process::Command::new(&p.python);
        cmd.arg(p.server_script("sdk_server.py"))
            .args(["http", &port.to_string()]);
        cmd
    });
    HttpServer {
        url: format!("http://127.0.0.1:{}/mcp", server.port),
        _server: server,
    }
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn commands_and_tools_from_over_streamable_http() {
    let Some(p) = peers() else { return };
    let server = sdk_over_http(&p);
    let t = Toolgauge::new();
    let j = json_of(
        &t.run(&["mcp", "tools", &server.url, "--json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["server"], server.url.as_str());
    assert_eq!(j["source"], "live");
    assert_eq!(j["era"], "modern");
    assert_eq!(j["tools"][0]["name"], "add");
    // The same tools as over stdio: the same definitions, so the same tokens.
    let stdio = json_of(
        &t.run(&["mcp", "tools", &p.sdk_stdio(), "--json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["total_tokens"], stdio["total_tokens"]);

    t.run(&["mcp", "snapshot", &server.url, "http.json"])
        .expect_code(OK);
    t.run(&["mcp", "snapshot", "--check", &server.url, "http.json"])
        .expect_code(OK);
    t.write(
        "live.yaml",
        format!("tools_from:\n  mcp: {}\n{CASES}", server.url),
    );
    t.run(&["validate", "live.yaml"])
        .expect_code(OK)
        .stdout_has(&["live.yaml: ok (6 tools, 1 case: 1 single-turn; variants: default)"]);
}
