//! `toolgauge lint`: findings with their rule, tool, parameter and location; `--deny`
//! exit codes; allow lists; JSON and SARIF; snapshots, tools files and live servers.

use serde_json::Value;

use crate::mcp_peers::peers;
use crate::support::{BAD_INPUT, OK, THRESHOLD_FAILED, Toolgauge, repo_root};

/// A suite with known smells, at known lines.
const SMELLY: &str = "\
name: smelly
lint:
  allow: [param-default-undocumented]
tools:
  - name: get_weather
    description: Get weather.
    parameters:
      type: object
      properties:
        city: { type: string }
        date: { type: string, description: \"The day.\" }
      required: [city, date]
  - name: get_weathers
    description: Returns the weather of several cities at once; see `city_list`.
    lint:
      allow: [param-required-unmentioned]
    parameters:
      type: object
      properties:
        cities: { type: array, items: { type: string }, description: \"City names, e.g. Paris\" }
      required: [cities]
cases:
  - id: one
    kind: should_not_call
    prompt: hi
";

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// (rule, tool, parameter, line, column) of every finding.
fn rows(j: &Value) -> Vec<(String, String, String, u64, u64)> {
    j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["tool"].as_str().unwrap_or("").to_string(),
                f["parameter"].as_str().unwrap_or("").to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["column"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn row(
    rule: &str,
    tool: &str,
    param: &str,
    line: u64,
    column: u64,
) -> (String, String, String, u64, u64) {
    (rule.into(), tool.into(), param.into(), line, column)
}

#[test]
fn lint_a_smelly_suite_gives_exact_json_findings() {
    let t = Toolgauge::new();
    t.write("smelly.yaml", SMELLY);
    let o = t
        .run(&["lint", "smelly.yaml", "--format", "json"])
        .expect_code(OK);
    let j = json_of(&o.stdout);
    assert_eq!(
        rows(&j),
        [
            row("description-no-when-to-use", "get_weather", "", 6, 5),
            row("description-restates-name", "get_weather", "", 6, 5),
            row("param-no-description", "get_weather", "city", 10, 9),
            row("param-required-unmentioned", "get_weather", "city", 10, 9),
            row("param-format-missing", "get_weather", "date", 11, 9),
            row("param-required-unmentioned", "get_weather", "date", 11, 9),
            row("set-confusable", "get_weathers", "", 13, 5),
            row("description-names-unknown-param", "get_weathers", "", 14, 5),
            row("description-no-when-to-use", "get_weathers", "", 14, 5),
        ],
        "{}",
        o.stdout
    );
    let first = &j["findings"][1];
    assert_eq!(first["severity"], "warning");
    assert_eq!(first["file"], "smelly.yaml");
    assert_eq!(
        first["message"],
        "the description of `get_weather` only restates its name: \"Get weather.\""
    );
    assert!(first["hint"].as_str().unwrap().contains("what it returns"));
    assert!(
        first.get("parameter").is_none(),
        "no parameter key: {first}"
    );
    assert_eq!(j["tools"], 2);
    assert_eq!(j["counts"]["warning"], 7);
    assert_eq!(j["counts"]["info"], 2);
}

#[test]
fn lint_text_groups_findings_by_tool() {
    let t = Toolgauge::new();
    t.write("smelly.yaml", SMELLY);
    let o = t.run(&["lint", "smelly.yaml"]).expect_code(OK);
    o.stdout_has(&[
        "get_weather:\n  smelly.yaml:6:5: warning[description-no-when-to-use]:",
        "  smelly.yaml:10:9: warning[param-no-description]: `get_weather` parameter `city` has no description\n    hint: ",
        "get_weathers:\n  smelly.yaml:13:5: warning[set-confusable]: `get_weathers` and `get_weather` are easy to confuse: names 92% alike",
        "smelly.yaml: 2 tools, 9 findings (0 errors, 7 warnings, 2 info)",
    ]);
}

#[test]
fn lint_deny_sets_the_exit_code() {
    let t = Toolgauge::new();
    t.write("smelly.yaml", SMELLY);
    t.run(&["lint", "smelly.yaml", "--deny", "error"])
        .expect_code(OK);
    t.run(&["lint", "smelly.yaml", "--deny", "warning"])
        .expect_code(THRESHOLD_FAILED);
    t.run(&["lint", "smelly.yaml", "--deny", "info"])
        .expect_code(THRESHOLD_FAILED);
    // Only info findings left: warning passes, info fails.
    let allowed = [
        "lint",
        "smelly.yaml",
        "--deny",
        "warning",
        "--allow",
        "description-no-when-to-use",
        "--allow",
        "description-restates-name",
        "--allow",
        "param-no-description",
        "--allow",
        "param-format-missing",
        "--allow",
        "set-confusable",
        "--allow",
        "description-names-unknown-param",
    ];
    t.run(&allowed).expect_code(OK);
    let mut info = allowed.to_vec();
    info[3] = "info";
    t.run(&info).expect_code(THRESHOLD_FAILED);
    // A duplicate name is an error: the default --deny fails. (A suite refuses two
    // tools of one name when it loads; a JSON file of tools is linted as it is.)
    t.write(
        "dup.json",
        r#"[{"name": "f", "description": "Returns the time.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "f", "description": "Returns the date.", "inputSchema": {"type": "object", "properties": {}}}]"#,
    );
    let j = json_of(
        &t.run(&["lint", "dup.json", "--format", "json"])
            .expect_code(THRESHOLD_FAILED)
            .stdout,
    );
    assert_eq!(rows(&j), [row("set-duplicate-name", "f", "", 2, 3)]);
}

#[test]
fn lint_allow_lists_in_the_suite_and_per_tool() {
    let t = Toolgauge::new();
    let both = SMELLY.replace(
        "  allow: [param-default-undocumented]",
        "  allow: [param-default-undocumented, set-confusable]",
    );
    t.write("s.yaml", both);
    let j = json_of(
        &t.run(&["lint", "s.yaml", "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    let rules: Vec<String> = rows(&j).into_iter().map(|r| r.0).collect();
    assert!(!rules.contains(&"set-confusable".to_string()), "{rules:?}");
    // Without the suite's allow, param-default-undocumented is back? No optional
    // parameter here; and without the tool's allow, get_weathers' required parameter is
    // mentioned anyway. The tool's allow is checked for known codes:
    let bad = SMELLY.replace(
        "allow: [param-required-unmentioned]",
        "allow: [param-required-unmentoned]",
    );
    t.write("bad.yaml", bad);
    t.run(&["lint", "bad.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "error: unknown rule code `param-required-unmentoned` in a tool's `lint.allow` at bad.yaml:16:15",
            "hint: did you mean `param-required-unmentioned`?",
        ]);
    t.run(&["lint", "s.yaml", "--allow", "set-confusible"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "unknown rule code `set-confusible` in `--allow`",
            "did you mean `set-confusable`?",
        ]);
}

#[test]
fn lint_bad_input_exits_2_with_a_hint() {
    let t = Toolgauge::new();
    t.run(&["lint", "missing.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&[
            "error: failed to read `missing.yaml`: no such file",
            "hint: ",
        ]);
    t.write("broken.yaml", "name: x\ntools: [\n");
    t.run(&["lint", "broken.yaml"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["error: "]);
    t.write("empty.json", "{\"a\": 1}");
    t.run(&["lint", "empty.json"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["holds no tool definitions", "hint: "]);
    t.write("smelly.yaml", SMELLY);
    t.run(&["lint", "smelly.yaml", "--deny", "fatal"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["invalid value 'fatal'"]);
}

#[test]
fn lint_sarif_has_the_required_structure() {
    let t = Toolgauge::new();
    t.write("smelly.yaml", SMELLY);
    let j = json_of(
        &t.run(&["lint", "smelly.yaml", "--format", "sarif"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["version"], "2.1.0");
    assert!(j["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &j["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "toolgauge");
    let rules = driver["rules"].as_array().unwrap();
    assert!(rules.len() >= 16);
    for r in rules {
        assert!(
            r["id"].is_string() && r["shortDescription"]["text"].is_string(),
            "{r}"
        );
        let level = r["defaultConfiguration"]["level"].as_str().unwrap();
        assert!(["error", "warning", "note"].contains(&level), "{r}");
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    for r in results {
        let id = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], id);
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        assert!(r["message"]["text"].is_string());
        let phys = &r["locations"][0]["physicalLocation"];
        assert_eq!(phys["artifactLocation"]["uri"], "smelly.yaml");
        assert!(phys["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(phys["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
    let info = results
        .iter()
        .find(|r| r["ruleId"] == "param-required-unmentioned")
        .unwrap();
    assert_eq!(info["level"], "note");
    assert_eq!(
        info["locations"][0]["logicalLocations"][0]["name"],
        "get_weather.city"
    );
}

#[test]
fn lint_a_snapshot_locates_findings_in_the_json() {
    let t = Toolgauge::new();
    let snap = repo_root().join("fixtures/mcp_sdk.snapshot.json");
    std::fs::copy(&snap, t.path().join("sdk.json")).unwrap();
    let j = json_of(
        &t.run(&["lint", "sdk.json", "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    let r = rows(&j);
    assert!(
        r.contains(&row("param-no-description", "add", "a", 19, 11)),
        "{r:?}"
    );
    assert_eq!(j["findings"][0]["file"], "sdk.json");
}

#[test]
fn lint_a_tools_list_file_and_a_plain_array() {
    let t = Toolgauge::new();
    t.write(
        "tools.json",
        r#"{"tools": [
  {"name": "search_files", "description": "", "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "description": "Words to find"}}, "required": ["query"]}}
]}"#,
    );
    let j = json_of(
        &t.run(&["lint", "tools.json", "--format", "json"])
            .expect_code(THRESHOLD_FAILED)
            .stdout,
    );
    assert_eq!(
        rows(&j),
        [row("description-missing", "search_files", "", 2, 28)]
    );
    assert_eq!(j["findings"][0]["severity"], "error");
    t.write(
        "array.json",
        r#"[{"type": "function", "function": {"name": "f", "description": "Returns the time.", "parameters": {"type": "object", "properties": {}}}}]"#,
    );
    let j = json_of(
        &t.run(&["lint", "array.json", "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(rows(&j), []);
}

#[test]
fn lint_a_chinese_suite_is_not_flagged_for_lacking_english_verbs() {
    let t = Toolgauge::new();
    t.write(
        "zh.yaml",
        "name: zh\ntools:\n  - name: bing_search\n    description: 使用必应搜索指定的关键词，并返回搜索结果列表\n    parameters:\n      type: object\n      properties:\n        query: { type: string, description: 搜索关键词 }\n      required: [query]\ncases:\n  - id: one\n    kind: should_not_call\n    prompt: 你好\n",
    );
    let j = json_of(
        &t.run(&["lint", "zh.yaml", "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(rows(&j), []);
}

#[test]
fn lint_a_suite_whose_cases_offer_their_own_tools() {
    let t = Toolgauge::new();
    t.write(
        "cases.yaml",
        "name: c\ncases:\n  - id: one\n    kind: should_not_call\n    prompt: hi\n    tools:\n      - name: f\n        description: Returns the time.\n        parameters: { type: object, properties: {} }\n  - id: two\n    kind: should_not_call\n    prompt: hi\n    tools:\n      - name: f\n        description: Returns the time.\n        parameters: { type: object, properties: {} }\n      - name: g\n        description: Weather.\n        parameters: { type: object, properties: {} }\n",
    );
    let j = json_of(
        &t.run(&["lint", "cases.yaml", "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    assert_eq!(j["tools"], 2);
    assert_eq!(rows(&j), [row("description-no-purpose", "g", "", 0, 0)]);
}

#[test]
fn lint_a_shipped_suite() {
    let t = Toolgauge::new();
    let suite = repo_root().join("suites/weather.yaml");
    let o = t
        .run(&["lint", suite.to_str().unwrap(), "--format", "json"])
        .expect_code(OK);
    let j = json_of(&o.stdout);
    let rules: Vec<String> = rows(&j).into_iter().map(|r| r.0).collect();
    // The vague variant restates the name, on purpose: the suite measures it.
    assert!(
        rules.contains(&"description-restates-name".to_string()),
        "{rules:?}"
    );
    let vague = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "description-restates-name")
        .unwrap();
    assert_eq!(vague["variants"], serde_json::json!(["vague"]));
    assert_eq!(j["counts"]["error"], 0);
}

#[test]
fn lint_the_livemcptool_catalogue() {
    let t = Toolgauge::new();
    let catalogue = repo_root().join("datasets/livemcptool/tools.json");
    let o = t
        .run(&["lint", catalogue.to_str().unwrap(), "--format", "json"])
        .expect_code(THRESHOLD_FAILED);
    let j = json_of(&o.stdout);
    assert_eq!(j["tools"], 527);
    let count = |rule: &str| {
        j["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == rule)
            .count()
    };
    // The figures of docs/lint.md.
    assert_eq!(count("description-missing"), 19);
    assert_eq!(count("set-duplicate-name"), 17);
    assert_eq!(count("set-total-tokens"), 1);
    // Chinese descriptions are not flagged for lacking English verbs.
    let zh = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "description-no-purpose" && f["tool"] == "bing_search");
    assert!(!zh);
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn lint_a_live_server_over_stdio() {
    let Some(p) = peers() else { return };
    let t = Toolgauge::new();
    let sdk = p.sdk_stdio();
    let j = json_of(
        &t.run(&["lint", &sdk, "--format", "json"])
            .expect_code(OK)
            .stdout,
    );
    let f = j["findings"].as_array().unwrap();
    assert!(!f.is_empty());
    let add = f
        .iter()
        .find(|f| f["rule"] == "param-no-description" && f["tool"] == "add")
        .unwrap();
    assert_eq!(add["file"], Value::Null);
    assert_eq!(add["line"], Value::Null);
    let sarif = json_of(
        &t.run(&["lint", &sdk, "--format", "sarif"])
            .expect_code(OK)
            .stdout,
    );
    let r = &sarif["runs"][0]["results"][0];
    assert!(r["locations"][0].get("physicalLocation").is_none());
    assert!(r["locations"][0]["logicalLocations"][0]["name"].is_string());
}

/// Provider acceptance: a root object without `properties` is refused by OpenAI (an
/// error on the tool's line), and what OpenAI's strict mode would refuse is reported only
/// with `--openai-strict`.
#[test]
fn lint_reports_what_a_provider_refuses_and_strict_mode_on_request() {
    let t = Toolgauge::new();
    t.write(
        "p.json",
        r#"[{"name": "get time", "description": "Returns the current time in a time zone.", "inputSchema": {"type": "object"}}]"#,
    );
    let out = t
        .run(&["lint", "p.json", "--format", "json"])
        .expect_code(THRESHOLD_FAILED);
    let j = json_of(&out.stdout);
    let codes: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for code in [
        "provider-openai-name",
        "provider-anthropic-name",
        "provider-gemini-name",
        "provider-openai-parameters-properties",
    ] {
        assert!(codes.contains(&code), "{code} missing: {codes:?}");
    }
    assert!(
        !codes
            .iter()
            .any(|c| c.starts_with("provider-openai-strict-")),
        "strict mode only on request: {codes:?}"
    );
    let name = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "provider-openai-name")
        .unwrap();
    assert_eq!(name["severity"], "error");
    assert!(
        name["message"].as_str().unwrap().contains("`get time`"),
        "{name}"
    );
    let strict = t.run(&["lint", "p.json", "--format", "json", "--openai-strict"]);
    assert!(
        strict
            .stdout
            .contains("provider-openai-strict-additional-properties"),
        "{}",
        strict.stdout
    );
    // The SARIF rules list the provider catalogue too, so a result's rule is described.
    let sarif = t.run(&["lint", "p.json", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_str(&sarif.stdout).unwrap();
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for r in log["runs"][0]["results"].as_array().unwrap() {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"], "{r}");
    }
}
