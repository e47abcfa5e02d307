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
