//! Listing a server's tools from synchronous code (suite loading, the `mcp` commands):
//! connect, `tools/list`, close, on a runtime of its own, within one overall bound.
//!
//! The suite loader is synchronous and may itself run inside a tokio runtime (a run that
//! loads its suites after starting one), where blocking on another runtime panics; so the
//! listing runs on its own thread with its own current-thread runtime.

use std::time::Duration;

use serde_json::Value;

use super::{ClientOptions, Era, McpClient, McpError, McpTool, ServerSpec, Snapshot};
use crate::mcp::snapshot::SNAPSHOT_FORMAT;

/// How long a whole listing (spawn, era discovery, every `tools/list` page, shutdown) may
/// take before it is abandoned: a server that hangs must not hang `toolgauge validate`.
pub const LIST_BOUND: Duration = Duration::from_secs(60);

/// What one listing of a server found.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The era the server spoke.
    pub era: Era,
    /// The protocol version agreed.
    pub protocol_version: String,
    /// Its `serverInfo`, raw.
    pub server_info: Option<Value>,
    /// Every tool, in the server's order, raw.
    pub tools: Vec<McpTool>,
}

impl Listing {
    /// The listing as a snapshot of `server` (the spec as the user wrote it).
    pub fn snapshot(&self, server: &ServerSpec) -> Snapshot {
        Snapshot {
            format: SNAPSHOT_FORMAT,
            server: server.to_string(),
            era: self.era,
            protocol_version: self.protocol_version.clone(),
            server_info: self.server_info.clone(),
            tools: self.tools.clone(),
        }
    }

    /// A snapshot read back as a listing (offline use of the commands that list).
    pub fn from_snapshot(snapshot: &Snapshot) -> Listing {
        Listing {
            era: snapshot.era,
            protocol_version: snapshot.protocol_version.clone(),
            server_info: snapshot.server_info.clone(),
            tools: snapshot.tools.clone(),
        }
    }
}

/// Connect to `server`, list its tools and shut it down, blocking the calling thread for
/// at most `bound` (plus the time a stuck server's shutdown takes when the bound hits).
pub fn list_tools_blocking(
    server: &ServerSpec,
    options: ClientOptions,
    bound: Duration,
) -> Result<Listing, McpError> {
    let spec = server.clone();
    let worker = std::thread::Builder::new()
        .name("mcp-list".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| McpError::Connect {
                    server: spec.to_string(),
                    why: format!("cannot start an async runtime: {e}"),
                })?;
            runtime.block_on(list_within(&spec, options, bound))
        })
        .map_err(|e| McpError::Connect {
            server: server.to_string(),
            why: format!("cannot start a thread: {e}"),
        })?;
    worker.join().unwrap_or_else(|_| {
        Err(McpError::Connect {
            server: server.to_string(),
            why: "the MCP client failed unexpectedly while listing tools".into(),
        })
    })
}

/// The async listing, bounded as a whole.
async fn list_within(
    spec: &ServerSpec,
    options: ClientOptions,
    bound: Duration,
) -> Result<Listing, McpError> {
    let work = async {
        let client = McpClient::connect(spec, options).await?;
        let listed = client.list_tools().await;
        let listing = listed.map(|tools| Listing {
            era: client.era(),
            protocol_version: client.protocol_version().to_string(),
            server_info: client.server_info().cloned(),
            tools,
        });
        // Shut the server down whatever the listing gave: a spawned process must not
        // outlive the command.
        client.close().await;
        listing
    };
    tokio::time::timeout(bound, work).await.unwrap_or_else(|_| {
        Err(McpError::Timeout {
            server: spec.to_string(),
            method: "connect and tools/list".into(),
            timeout_ms: u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
        })
    })
}
