//! `toolgauge schema` and the committed `docs/suite.schema.json`.

use serde_json::Value;

use crate::support::{OK, Toolgauge, repo_root};

const REGENERATE: &str = "cargo run -- schema > docs/suite.schema.json";

#[test]
fn docs_suite_schema_json_is_current_else_regenerate_with_cargo_run_schema() {
    let t = Toolgauge::new();
    let o = t.run(&["schema"]).expect_code(OK);
    let printed: Value = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("`toolgauge schema` printed invalid JSON: {e}"));
    assert!(printed["properties"]["cases"].is_object(), "{printed}");
    let path = repo_root().join("docs/suite.schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}); generate it with `{REGENERATE}`",
            path.display()
        )
    });
    let committed: Value = serde_json::from_str(&committed).unwrap_or_else(|e| {
        panic!("docs/suite.schema.json is not valid JSON ({e}); regenerate it with `{REGENERATE}`")
    });
    assert!(
        committed == printed,
        "docs/suite.schema.json differs from `toolgauge schema`: the suite model changed. \
         Regenerate it with `{REGENERATE}` and commit the result."
    );
}

const REGENERATE_SUMMARY: &str = "cargo run -- schema summary > docs/summary.schema.json";

#[test]
fn docs_summary_schema_json_is_current_and_validates_a_real_summary() {
    let t = Toolgauge::new();
    let o = t.run(&["schema", "summary"]).expect_code(OK);
    let printed: Value = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("`toolgauge schema summary` printed invalid JSON: {e}"));
    let path = repo_root().join("docs/summary.schema.json");
    let committed: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| {
            panic!(
                "{} is missing or invalid; generate it with `{REGENERATE_SUMMARY}`",
                path.display()
            )
        });
    assert!(
        committed == printed,
        "docs/summary.schema.json differs from `toolgauge schema summary`: the summary types \
         changed. Regenerate it with `{REGENERATE_SUMMARY}`, and bump SUMMARY_VERSION if \
         a reader of the old format would break."
    );
    assert!(
        printed["$comment"]
            .as_str()
            .unwrap()
            .contains("summary.json version"),
        "the schema names the version it describes"
    );

    // Every summary.json a run writes is valid against it, and the schema is strict
    // enough to refuse a broken one.
    let validator = jsonschema::validator_for(&printed).expect("a valid JSON Schema");
    let suite = repo_root().join("suites/weather.yaml");
    t.run(&["run", suite.to_str().unwrap(), "--out", "out", "--quiet"])
        .assert_code(OK);
    let summary: Value =
        serde_json::from_str(&t.read("out/summary.json")).expect("summary.json is JSON");
    let errors: Vec<String> = validator
        .iter_errors(&summary)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "summary.json does not match its schema: {errors:?}"
    );
    let mut broken = summary.clone();
    broken["cells"][0]["metrics"]["accuracy"] = Value::String("high".into());
    assert!(!validator.is_valid(&broken));
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgauge"))
        .arg("schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgauge starts");
    // Close the reading end before the schema is printed, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("toolgauge ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(OK), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Every property key anywhere in a JSON Schema, with the path of one place it appears.
fn property_keys(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for k in props.keys() {
                    if !out.iter().any(|(key, _)| key == k) {
                        out.push((k.clone(), format!("{at}/properties/{k}")));
                    }
                }
            }
            for (k, v) in map {
                property_keys(v, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                property_keys(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_key_of_the_suite_schema_is_documented_in_suite_format_md() {
    let t = Toolgauge::new();
    let o = t.run(&["schema"]).expect_code(OK);
    let schema: Value = serde_json::from_str(&o.stdout).unwrap();
    let mut keys = Vec::new();
    property_keys(&schema, "#", &mut keys);
    // The walk finds the suite's keys at every depth (sanity: a few of each level).
    for k in [
        "cases",
        "any_call",
        "tool_call_id",
        "underscore_names",
        "parallel_tool_calls",
    ] {
        assert!(
            keys.iter().any(|(key, _)| key == k),
            "{k} not found in {keys:?}"
        );
    }
    let doc = std::fs::read_to_string(repo_root().join("docs/suite-format.md")).unwrap();
    let missing: Vec<String> = keys
        .iter()
        .filter(|(k, _)| !doc.contains(&format!("`{k}`")))
        .map(|(k, at)| format!("`{k}` ({at})"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/suite-format.md does not mention these suite keys (written as `key`): {}",
        missing.join(", ")
    );
}
