//! The committed snapshot of the Python SDK server (`fixtures/mcp_sdk.snapshot.json`,
//! which `suites/mcp_tools.yaml` and its cassette replay offline) against the live
//! server: a change to `tests/mcp/servers/sdk_server.py` or an SDK upgrade that changes
//! what the server lists fails here, instead of leaving the pinned suite testing tools
//! the server no longer has.

use serde_json::Value;

use crate::mcp_peers::peers;
use crate::support::{OK, Toolgauge, repo_root};

/// The committed snapshot, relative to the repository root.
const SNAPSHOT: &str = "fixtures/mcp_sdk.snapshot.json";

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
#[ignore = "needs real peers: run tests/install-peers.sh, then cargo test -- --include-ignored"]
fn the_committed_sdk_snapshot_matches_a_fresh_one_from_the_live_server() {
    let Some(_) = peers() else { return };
    let root = repo_root();
    let committed = json_of(&std::fs::read_to_string(root.join(SNAPSHOT)).unwrap());
    // The server exactly as the snapshot names it, run from the repository root as its
    // relative paths (and the refresh command in suites/mcp_tools.yaml) expect.
    let server = committed["server"].as_str().unwrap().to_string();
    assert!(
        server.starts_with("stdio:tests/mcp/.venv/bin/python tests/mcp/servers/sdk_server.py"),
        "{server}"
    );
    let t = Toolgauge::new();
    let fresh_path = t.path().join("fresh.json");
    let fresh_file = fresh_path.to_str().unwrap();
    let refresh = format!("toolgauge mcp snapshot \"{server}\" {SNAPSHOT}");

    // The command CI would run: the live tools against the pin, byte for byte per tool.
    let check = t.run_in(&root, &["mcp", "snapshot", "--check", &server, SNAPSHOT]);
    assert_eq!(
        check.code,
        Some(OK),
        "the SDK server's tools drifted from {SNAPSHOT}; refresh it with `{refresh}` (from the repository root), then check that suites/mcp_tools.yaml still replays:\n{}{}",
        check.stdout,
        check.stderr
    );

    // A fresh snapshot: the same server, era, protocol version, server info and tools.
    t.run_in(&root, &["mcp", "snapshot", &server, fresh_file])
        .expect_code(OK);
    let fresh = json_of(&t.read("fresh.json"));
    for field in ["format", "server", "era", "protocol_version", "server_info"] {
        assert_eq!(
            fresh[field], committed[field],
            "`{field}` of a fresh snapshot differs from {SNAPSHOT}; refresh it with `{refresh}`"
        );
    }
    assert_eq!(
        fresh["tools"], committed["tools"],
        "the tools of a fresh snapshot differ from {SNAPSHOT}; refresh it with `{refresh}`"
    );
    // Nothing else: a field the snapshot format gains is compared from then on.
    assert_eq!(fresh, committed);
}
