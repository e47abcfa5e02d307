//! Built-in tool worlds as the suite sees them: `world: {NAME: SETTINGS}` on a case, read
//! and checked through a registry of named plugins, as `profile:` is, so the suite layer
//! knows no benchmark.
//!
//! A world is a stateful tool host written in Rust (BFCL's eight backends are the
//! built-in ones, in `crate::bfcl::world`). A case that declares one runs as a tool
//! loop: each trial opens a fresh [`WorldInstance`] from the case's settings, the
//! model's calls change it as the episode goes on, and `expect.end_state` can read its
//! state afterwards. A world plugin registers a [`WorldFormat`] with
//! [`inventory::submit!`]: its name, its settings' JSON Schema and how to read them.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::{Map, Value};

pub use super::profile::SpecProblem;

/// A world plugin's part in the suite format: registered once per plugin with
/// `inventory::submit! { WorldFormat { .. } }` (the shared [`super::plugin::Format`]).
pub type WorldFormat = super::plugin::Format<dyn WorldSettings>;

inventory::collect!(WorldFormat);

/// A world's settings as read from the suite file, not yet checked.
pub trait WorldSettings: fmt::Debug + Send + Sync {
    /// Check the settings and build the world; problems are pushed to `problems` with
    /// fields relative to the settings (the caller prefixes the case's path). `None`
    /// when the settings can not make a world.
    fn compile(&self, problems: &mut Vec<SpecProblem>) -> Option<Arc<dyn CompiledWorld>>;
}

/// A compiled world of one case: what each of its trials starts from.
pub trait CompiledWorld: fmt::Debug + Send + Sync + Any {
    /// The world's name (its key under `world:`).
    fn name(&self) -> &'static str;

    /// A fresh instance in the case's initial state, for one trial.
    fn open(&self) -> Result<Box<dyn WorldInstance>, String>;

    /// The world as `Any`, for its plugin (e.g. its judge) to get its type back.
    fn as_any(&self) -> &dyn Any;
}

/// One trial's world: answers calls in order and changes as they run.
pub trait WorldInstance: Send {
    /// Run the call of `tool` with `arguments` (the model's JSON object).
    fn call(&mut self, tool: &str, arguments: &Map<String, Value>) -> WorldAnswer;

    /// The world's state as JSON, for `expect.end_state` and transcripts.
    fn state(&self) -> Value;
}

/// What a world answered to one call: the text the model reads, and whether it is an
/// error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldAnswer {
    /// The result text, sent to the model as is.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
}

/// `world:` as written: one registered world's name and its settings.
#[derive(Debug)]
pub struct WorldDecl {
    /// The world's name.
    pub name: &'static str,
    /// Its settings, read by the plugin.
    pub settings: Box<dyn WorldSettings>,
}

impl<'de> Deserialize<'de> for WorldDecl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (name, settings) = super::plugin::read(deserializer, registry())?;
        Ok(WorldDecl { name, settings })
    }
}

/// Every registered world, for the shared reader ([`super::plugin`]).
fn registry() -> super::plugin::Registry<dyn WorldSettings> {
    static NAMES: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    super::plugin::Registry::new(inventory::iter::<WorldFormat>().collect(), &NAMES, "world")
}

/// One variant per registered world, as serde derives for an externally tagged enum
/// (named `WorldSpec`).
impl JsonSchema for WorldDecl {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WorldSpec".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        super::plugin::schema(registry(), generator, "A built-in stateful tool world.")
    }
}
