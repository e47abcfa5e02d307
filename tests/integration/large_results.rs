//! A loop trial whose tool returns a 3 MB result (issue 31): the run warns that it was
//! sent to the model as is, the journal stores it once, and the reports read it back
//! whole.

use crate::support::{OK, Toolgauge};

/// A loop suite whose `fetch_page` mock returns `size` bytes of text.
fn suite(size: usize) -> String {
    let page = "lorem ipsum ".repeat(size / 12);
    format!(
        r#"
tools:
  - name: fetch_page
    description: Fetch a web page.
    parameters: {{type: object, properties: {{url: {{type: string}}}}, required: [url]}}
cases:
  - id: big-page
    kind: should_call
    prompt: "Summarise https://example.com"
    mocks:
      fetch_page:
        - result: {{body: "{page}"}}
    expect:
      trajectory:
        steps:
          - {{tool: fetch_page, args: {{url: "https://example.com"}}}}
      stop: answered
"#
    )
}

#[test]
fn a_3_mb_tool_result_is_warned_about_and_stored_once() {
    const SIZE: usize = 3_000_000;
    let t = Toolgauge::new();
    t.write("big.yaml", suite(SIZE));
    let o = t
        .run(&[
            "run",
            "big.yaml",
            "--target",
            "scripted:oracle",
            "--out",
            "out",
        ])
        .expect_code(OK);
    // The terminal says the result went to the model uncut, naming the call.
    o.stdout_has(&[
        "1 trial had warnings",
        "round 1: the result of call 1 (`fetch_page`) is 3000011 characters, over 100000",
        "sent to the model as is, uncut, in this and every later request",
    ]);
    let journal = t.read("out/trials.jsonl");
    assert!(
        journal.len() < 2 * SIZE,
        "trials.jsonl is {} bytes for a {SIZE}-byte result: stored more than once",
        journal.len()
    );
    let trial: serde_json::Value = serde_json::from_str(journal.trim_end()).unwrap();
    assert_eq!(trial["format"], 3);
    assert_eq!(trial["verdict"], "pass", "{}", &journal[..2000]);
    let warnings = trial["response"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // `report` reads the line back whole: the same warning, the same verdict.
    std::fs::remove_file(t.path().join("out/summary.json")).unwrap();
    let again = t
        .run(&["report", "out", "--format", "terminal,json"])
        .expect_code(OK);
    again.stdout_has(&["1 trial had warnings"]);
    let summary: serde_json::Value = serde_json::from_str(&t.read("out/summary.json")).unwrap();
    assert_eq!(summary["warnings"][0]["case_id"], "big-page");
    assert_eq!(
        summary["warnings"][0]["warnings"],
        trial["response"]["warnings"]
    );
}
