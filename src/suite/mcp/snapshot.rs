//! A pinned copy of a server's tools (`toolgauge mcp snapshot`), so suites that take
//! their tools from a server replay offline, and a run can say when the live server's
//! tools drifted from the pin.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Era, McpError, McpTool};

/// The snapshot file's format version.
pub const SNAPSHOT_FORMAT: u32 = 1;

/// A server's tools as listed once, with where and how they were listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`SNAPSHOT_FORMAT`].
    pub format: u32,
    /// The server as the user named it (`stdio:…` or a URL).
    pub server: String,
    /// The protocol era the server spoke.
    pub era: Era,
    /// The protocol version agreed.
    pub protocol_version: String,
    /// The server's `serverInfo` (name, version), as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<serde_json::Value>,
    /// The tools, in the server's order, raw.
    pub tools: Vec<McpTool>,
}

impl Snapshot {
    /// Read a snapshot file.
    pub fn read(path: &Path) -> Result<Snapshot, McpError> {
        let err = |why: String| McpError::Snapshot {
            path: path.display().to_string(),
            why,
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            err(format!(
                "cannot read it ({e}); write one with `toolgauge mcp snapshot SERVER {}`",
                path.display()
            ))
        })?;
        let snap: Snapshot = serde_json::from_str(&text)
            .map_err(|e| err(format!("not a toolgauge MCP snapshot: {e}")))?;
        if snap.format > SNAPSHOT_FORMAT {
            return Err(err(format!(
                "format {} is newer than this toolgauge reads ({SNAPSHOT_FORMAT}); upgrade toolgauge",
                snap.format
            )));
        }
        if let Some(i) = snap
            .tools
            .iter()
            .position(|t| t.raw.get("name").and_then(|n| n.as_str()).is_none())
        {
            return Err(err(format!("tool #{} has no string `name`", i + 1)));
        }
        Ok(snap)
    }

    /// Write it as pretty JSON (stable: the server's order, keys as sent).
    pub fn write(&self, path: &Path) -> Result<(), McpError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| McpError::Snapshot {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        std::fs::write(path, text + "\n").map_err(|e| McpError::Snapshot {
            path: path.display().to_string(),
            why: format!("cannot write it: {e}"),
        })
    }

    /// How `live` differs from this snapshot, one line per tool added, removed or
    /// changed (any byte of its raw JSON); empty when they are the same.
    pub fn drift(&self, live: &[McpTool]) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.tools {
            match live.iter().find(|l| l.name() == t.name()) {
                None => out.push(format!("tool `{}` is gone from the server", t.name())),
                Some(l) if l.raw != t.raw => {
                    let mut keys: Vec<&str> = t
                        .raw
                        .keys()
                        .chain(l.raw.keys())
                        .filter(|k| t.raw.get(*k) != l.raw.get(*k))
                        .map(String::as_str)
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    out.push(format!("tool `{}` changed: {}", t.name(), keys.join(", ")));
                }
                Some(_) => {}
            }
        }
        for l in live {
            if !self.tools.iter().any(|t| t.name() == l.name()) {
                out.push(format!("tool `{}` is new on the server", l.name()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: serde_json::Value) -> McpTool {
        McpTool::from_raw(v.as_object().unwrap().clone()).unwrap()
    }

    #[test]
    fn drift_names_added_removed_and_changed_tools() {
        let snap = Snapshot {
            format: 1,
            server: "stdio:srv".into(),
            era: Era::Legacy,
            protocol_version: "2025-06-18".into(),
            server_info: None,
            tools: vec![
                tool(json!({"name": "a", "description": "x"})),
                tool(json!({"name": "b"})),
            ],
        };
        assert!(snap.drift(&snap.tools.clone()).is_empty());
        let live = vec![
            tool(json!({"name": "a", "description": "y"})),
            tool(json!({"name": "c"})),
        ];
        assert_eq!(
            snap.drift(&live),
            vec![
                "tool `a` changed: description",
                "tool `b` is gone from the server",
                "tool `c` is new on the server"
            ]
        );
    }

    #[test]
    fn round_trip_and_newer_format_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let snap = Snapshot {
            format: 1,
            server: "http://127.0.0.1:1/mcp".into(),
            era: Era::Modern,
            protocol_version: "2026-07-28".into(),
            server_info: Some(json!({"name": "s", "version": "1"})),
            tools: vec![tool(json!({"name": "a", "x-extra": [1]}))],
        };
        snap.write(&p).unwrap();
        assert_eq!(Snapshot::read(&p).unwrap(), snap);
        std::fs::write(
            &p,
            r#"{"format":9,"server":"s","era":"modern","protocol_version":"x","tools":[]}"#,
        )
        .unwrap();
        assert!(
            Snapshot::read(&p)
                .unwrap_err()
                .to_string()
                .contains("newer")
        );
    }
}
