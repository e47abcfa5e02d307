//! `world: {bfcl: ...}`: BFCL's multi-turn backends as a case's built-in world.
//!
//! The settings name the backend classes of a BFCL item, their initial configuration
//! (BFCL's `initial_config`), whether the item runs in BFCL's long-context mode, and the
//! item's ground truth (call strings per turn). Each trial opens fresh instances of the
//! classes loaded with the configuration; a model's call (JSON arguments, as a
//! function-calling model sends them) runs on the instance whose class has the method,
//! and the model reads BFCL's exact result line. The ground truth is what the `bfcl`
//! profile's multi-turn judge replays on its own instances to compare with
//! ([`crate::bfcl::profile`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::multi_turn::{instances, run_method};
use super::value::PyValue;
use super::worlds::{World, world};
use crate::suite::span::Spanned;
use crate::suite::world::{
    CompiledWorld, SpecProblem, WorldAnswer, WorldFormat, WorldInstance, WorldSettings,
};

/// The world's name: its key under `world:`.
pub const NAME: &str = "bfcl";

/// The classes there are, in the order BFCL's docs list them.
pub const CLASSES: [&str; 8] = [
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
];

inventory::submit! {
    WorldFormat {
        name: NAME,
        about: "BFCL's multi-turn backends (file system, math, messages, posting, tickets, trading, travel, vehicle), as BFCL runs them.",
        schema: |g| g.subschema_for::<BfclWorldSpec>(),
        read: |d| {
            let spec: BfclWorldSpec = erased_serde::deserialize(d)?;
            Ok(Box::new(spec))
        },
    }
}

/// Settings of the `bfcl` world.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BfclWorldSpec {
    /// The backend classes (BFCL's `involved_classes`), e.g. `[GorillaFileSystem,
    /// TwitterAPI]`.
    #[schemars(with = "Vec<String>")]
    pub classes: Vec<Spanned<String>>,
    /// Each class's initial configuration, by class name (BFCL's `initial_config`); a
    /// class without one starts from its defaults.
    #[serde(default)]
    pub initial_config: Option<Spanned<Value>>,
    /// BFCL's long-context mode (extra files, messages, stocks...): BFCL sets it for the
    /// `multi_turn_long_context` category.
    #[serde(default)]
    pub long_context: bool,
    /// The ground truth: BFCL's call strings per turn (`cd(folder='docs')`), one list
    /// per user turn, the prompt's first. The `bfcl` profile replays them to judge.
    #[serde(default)]
    #[schemars(with = "Vec<Vec<String>>")]
    pub ground_truth: Option<Spanned<Vec<Vec<String>>>>,
}

impl WorldSettings for BfclWorldSpec {
    fn compile(&self, problems: &mut Vec<SpecProblem>) -> Option<Arc<dyn CompiledWorld>> {
        let before = problems.len();
        if self.classes.is_empty() {
            problems.push(SpecProblem {
                at: (0, 0),
                field: "classes".into(),
                message: "no backend class is named".into(),
                hint: Some(format!("the classes are: {}", CLASSES.join(", "))),
            });
        }
        for c in &self.classes {
            if world(&c.value).is_none() {
                problems.push(SpecProblem {
                    at: c.at(),
                    field: "classes".into(),
                    message: format!("unknown BFCL backend class `{}`", c.value),
                    hint: Some(match crate::util::suggest::closest(&c.value, CLASSES) {
                        Some(s) => format!(
                            "did you mean `{s}`? the classes are: {}",
                            CLASSES.join(", ")
                        ),
                        None => format!("the classes are: {}", CLASSES.join(", ")),
                    }),
                });
            }
        }
        let config = match &self.initial_config {
            None => Value::Object(Map::new()),
            Some(v) if v.value.is_object() => v.value.clone(),
            Some(v) => {
                problems.push(SpecProblem {
                    at: v.at(),
                    field: "initial_config".into(),
                    message: format!(
                        "`initial_config` must be a map by class name, got {}",
                        v.value
                    ),
                    hint: Some("copy the item's `initial_config` as BFCL gives it".into()),
                });
                Value::Object(Map::new())
            }
        };
        let ground_truth = self
            .ground_truth
            .as_ref()
            .map(|g| g.value.clone())
            .unwrap_or_default();
        if let Some(g) = &self.ground_truth {
            for (t, turn) in g.value.iter().enumerate() {
                for (i, call) in turn.iter().enumerate() {
                    if let Err(why) = super::decode::parse_call_text(call) {
                        problems.push(SpecProblem {
                            at: g.at(),
                            field: format!("ground_truth[{t}][{i}]"),
                            message: format!("`{call}` is not a call BFCL can run: {why}"),
                            hint: Some("write a call string such as `cd(folder='docs')`".into()),
                        });
                    }
                }
            }
        }
        if problems.len() > before {
            return None;
        }
        let classes: Vec<String> = self.classes.iter().map(|c| c.value.clone()).collect();
        // Loaded once, now: a configuration a backend refuses is the suite's error, found
        // at load rather than in every trial, and each trial copies the loaded instances
        // (cheaper than loading the configuration again).
        let loaded = match instances(&classes, &config, self.long_context) {
            Ok(l) => l,
            Err(e) => {
                problems.push(SpecProblem {
                    at: self.initial_config.as_ref().map_or((0, 0), Spanned::at),
                    field: "initial_config".into(),
                    message: e.to_string(),
                    hint: Some("copy the item's `initial_config` as BFCL gives it".into()),
                });
                return None;
            }
        };
        Some(Arc::new(BfclWorld {
            classes,
            long_context: self.long_context,
            ground_truth,
            loaded: Arc::new(loaded),
        }))
    }
}

/// A compiled `bfcl` world: what each trial's instances start from.
#[derive(Debug, Clone)]
pub struct BfclWorld {
    /// The backend classes, in order (a method is looked up in this order).
    pub classes: Vec<String>,
    /// BFCL's long-context mode.
    pub long_context: bool,
    /// The ground truth's call strings per turn.
    pub ground_truth: Vec<Vec<String>>,
    /// The classes' instances loaded with the initial configuration, never called:
    /// each trial and each judge replay starts from copies.
    pub loaded: Arc<Vec<Box<dyn World>>>,
}

impl BfclWorld {
    /// Fresh copies of the loaded instances.
    pub fn instances(&self) -> Vec<Box<dyn World>> {
        self.loaded.iter().map(|w| w.clone_box()).collect()
    }
}

impl CompiledWorld for BfclWorld {
    fn name(&self) -> &'static str {
        NAME
    }

    fn open(&self) -> Result<Box<dyn WorldInstance>, String> {
        Ok(Box::new(BfclInstance {
            worlds: self.instances(),
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// One trial's instances.
struct BfclInstance {
    worlds: Vec<Box<dyn World>>,
}

/// The prefix of BFCL's result line for a call that raised.
const ERROR_PREFIX: &str = "Error during execution: ";

/// The keyword arguments BFCL's function-calling handlers make of a model's JSON
/// arguments: each value as `json.loads` gives it, in the order written.
pub fn kwargs_of(arguments: &Map<String, Value>) -> Vec<(String, PyValue)> {
    arguments
        .iter()
        .map(|(k, v)| (k.clone(), PyValue::from_json(v)))
        .collect()
}

impl WorldInstance for BfclInstance {
    fn call(&mut self, tool: &str, arguments: &Map<String, Value>) -> WorldAnswer {
        let content = run_method(&mut self.worlds, tool, &[], &kwargs_of(arguments));
        WorldAnswer {
            is_error: content.starts_with(ERROR_PREFIX),
            content,
        }
    }

    /// Every public attribute of every instance, by class, as JSON.
    fn state(&self) -> Value {
        let mut out = Map::new();
        for w in &self.worlds {
            let attrs: Map<String, Value> = w
                .state()
                .into_iter()
                .map(|(k, v)| (k, v.to_json()))
                .collect();
            out.insert(w.class().to_string(), Value::Object(attrs));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(spec: Value) -> Result<Arc<dyn CompiledWorld>, Vec<SpecProblem>> {
        let spec: BfclWorldSpec = serde_json::from_value(spec).unwrap();
        let mut problems = Vec::new();
        spec.compile(&mut problems).ok_or(problems)
    }

    #[test]
    fn calls_change_the_trials_own_instances_and_read_bfcls_result_lines() {
        let w = compiled(json!({
            "classes": ["GorillaFileSystem", "MathAPI"],
            "initial_config": {"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {}}}}},
        }))
        .unwrap();
        let mut one = w.open().unwrap();
        let mut two = w.open().unwrap();
        let args = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            one.call("mkdir", &args(json!({"dir_name": "docs"}))),
            WorldAnswer {
                content: "None".into(),
                is_error: false
            }
        );
        assert_eq!(
            one.call("add", &args(json!({"a": 1, "b": 2.5}))).content,
            r#"{"result": 3.5}"#
        );
        let missing = one.call("add", &args(json!({"a": 1})));
        assert!(missing.is_error);
        assert_eq!(
            missing.content,
            "Error during execution: MathAPI.add() missing 1 required positional argument: 'b'"
        );
        assert_eq!(
            one.call("fly", &Map::new()).content,
            "Error during execution: name 'fly' is not defined"
        );
        // The second trial's instance did not see the first one's directory.
        let ls = |w: &mut Box<dyn WorldInstance>| w.call("ls", &Map::new()).content;
        assert_eq!(ls(&mut one), r#"{"current_directory_content": ["docs"]}"#);
        assert_eq!(ls(&mut two), r#"{"current_directory_content": []}"#);
        assert!(one.state()["GorillaFileSystem"].is_object());
    }

    #[test]
    fn bad_settings_are_refused_with_the_field() {
        let p =
            compiled(json!({"classes": ["GorillaFileSytem"], "ground_truth": [["cd(folder="]]}))
                .unwrap_err();
        assert_eq!(p[0].field, "classes");
        assert!(
            p[0].hint
                .as_deref()
                .unwrap()
                .contains("did you mean `GorillaFileSystem`")
        );
        assert_eq!(p[1].field, "ground_truth[0][0]");
        let p = compiled(json!({"classes": ["MathAPI"], "initial_config": [1]})).unwrap_err();
        assert_eq!(p[0].field, "initial_config");
    }
}
