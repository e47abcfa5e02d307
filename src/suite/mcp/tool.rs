//! One MCP tool, kept as the server sent it: its raw JSON object, with typed accessors
//! for the fields toolgauge reads. Fields it does not know (vendor `_meta`, future
//! keys) survive into suites, snapshots and reports.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool of an MCP server, raw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct McpTool {
    /// The tool object exactly as `tools/list` returned it.
    pub raw: Map<String, Value>,
}

/// A tool's annotations. The protocol calls them hints, and servers are untrusted: they
/// steer what toolgauge lets a loop execute, never what it reports as fact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotations {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Whether the tool may change the world: the protocol's defaults are
    /// `readOnlyHint: false` and `destructiveHint: true`, so only a tool that says it is
    /// read-only, or says it is not destructive, is taken as safe to execute.
    pub fn may_destroy(&self) -> bool {
        self.read_only != Some(true) && self.destructive != Some(false)
    }
}

impl McpTool {
    /// Wrap a tool object; `None` when it has no string `name`.
    pub fn from_raw(raw: Map<String, Value>) -> Option<McpTool> {
        raw.get("name")?.as_str()?;
        Some(McpTool { raw })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.raw.get("name").and_then(Value::as_str).unwrap_or("")
    }

    /// Its `description`, if a string.
    pub fn description(&self) -> Option<&str> {
        self.raw.get("description").and_then(Value::as_str)
    }

    /// Its `title` (or `annotations.title`), if any.
    pub fn title(&self) -> Option<&str> {
        self.raw.get("title").and_then(Value::as_str).or_else(|| {
            self.raw
                .get("annotations")?
                .get("title")
                .and_then(Value::as_str)
        })
    }

    /// Its `inputSchema`; an absent or non-object schema reads as an empty object schema.
    pub fn input_schema(&self) -> Value {
        match self.raw.get("inputSchema") {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => serde_json::json!({"type": "object", "properties": {}}),
        }
    }

    /// Its `outputSchema`, if an object.
    pub fn output_schema(&self) -> Option<&Value> {
        self.raw.get("outputSchema").filter(|v| v.is_object())
    }

    /// Its annotations; fields that are not booleans read as absent.
    pub fn annotations(&self) -> Annotations {
        let a = self.raw.get("annotations");
        let flag = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_bool);
        Annotations {
            read_only: flag("readOnlyHint"),
            destructive: flag("destructiveHint"),
            idempotent: flag("idempotentHint"),
            open_world: flag("openWorldHint"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: Value) -> McpTool {
        McpTool::from_raw(v.as_object().unwrap().clone()).unwrap()
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let t = tool(json!({"name": "x", "x-vendor": {"a": 1}, "_meta": {"k": "v"}}));
        let back: McpTool = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back.raw["x-vendor"], json!({"a": 1}));
        assert_eq!(back.raw["_meta"], json!({"k": "v"}));
    }

    #[test]
    fn annotations_follow_the_protocol_defaults() {
        assert!(tool(json!({"name": "a"})).annotations().may_destroy());
        assert!(
            !tool(json!({"name": "a", "annotations": {"readOnlyHint": true}}))
                .annotations()
                .may_destroy()
        );
        assert!(
            !tool(json!({"name": "a", "annotations": {"destructiveHint": false}}))
                .annotations()
                .may_destroy()
        );
        let odd = tool(json!({"name": "a", "annotations": {"readOnlyHint": "yes"}}));
        assert_eq!(odd.annotations().read_only, None);
        assert!(McpTool::from_raw(Map::new()).is_none());
    }
}
