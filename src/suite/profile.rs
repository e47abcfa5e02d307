//! Scoring profiles as the suite sees them: `profile: {NAME: SETTINGS}`, read and checked
//! through a registry of named plugins, so the suite layer knows no benchmark.
//!
//! A profile plugin (BFCL's lives in `crate::bfcl::profile`) registers a
//! [`ProfileFormat`] with [`inventory::submit!`]: its name, its settings' JSON Schema and
//! how to read them. The suite's serde model ([`ProfileDecl`]) looks the name up and hands
//! the settings to the plugin's own typed reader, so locations, lenient scalars and
//! messages are those of every other suite field. Compiling the settings gives a
//! [`CompiledProfile`], which the suite holds ([`Profile`]) and which answers the few
//! questions compiling the rest of the suite asks (may expectations name unlisted
//! arguments, can a matcher be read). How a profile judges lives in the judge layer
//! (`crate::judge::profile`), which finds the same plugin by name.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::{Map, Value};

/// A profile plugin's part in the suite format: registered once per plugin with
/// `inventory::submit! { ProfileFormat { .. } }` (the shared [`super::plugin::Format`]).
pub type ProfileFormat = super::plugin::Format<dyn ProfileSettings>;

inventory::collect!(ProfileFormat);

/// Every registered profile, by name.
pub fn formats() -> Vec<&'static ProfileFormat> {
    registry().formats
}

/// A profile's settings as read from the suite file, not yet checked.
pub trait ProfileSettings: fmt::Debug + Send + Sync {
    /// Check the settings and build the profile; problems are pushed to `problems` (the
    /// profile is still returned, so later checks of the suite go on).
    fn compile(&self, problems: &mut Vec<SpecProblem>) -> Arc<dyn CompiledProfile>;
}

/// A compiled profile, held by the suite; its judge is in the judge layer.
pub trait CompiledProfile: fmt::Debug + Send + Sync + Any {
    /// The profile's name (its key under `profile:`).
    fn name(&self) -> &'static str;

    /// Expectations may name arguments the tool's schema does not list (a benchmark's
    /// answers can, and it scores them as they are).
    fn reads_unlisted_args(&self) -> bool {
        false
    }

    /// Whether the profile can read `value`, an expected argument's matcher as written.
    fn check_expected_value(&self, value: &Value) -> Result<(), ValueProblem> {
        let _ = value;
        Ok(())
    }

    /// Whether each expected argument is read as a list of acceptable values (a value,
    /// `eq`, `one_of`, `optional`, `absent`) rather than by toolgauge's matchers; the
    /// scripted oracle then answers with the first acceptable value.
    fn reads_values_as_options(&self) -> bool {
        false
    }

    /// The settings a run records in `run.json` (keys of the plugin's choosing), so
    /// `--resume` runs with the same.
    fn run_settings(&self) -> Map<String, Value> {
        Map::new()
    }

    /// The profile as `Any`, for its own judge to get its type back.
    fn as_any(&self) -> &dyn Any;
}

/// How a suite's verdicts are reached: toolgauge's own checks (no profile), or a
/// declared profile's judge.
#[derive(Debug, Clone, Default)]
pub struct Profile(Option<Arc<dyn CompiledProfile>>);

impl Profile {
    /// A suite with a declared profile.
    pub fn declared(profile: Arc<dyn CompiledProfile>) -> Profile {
        Profile(Some(profile))
    }

    /// The declared profile, if any.
    pub fn get(&self) -> Option<&dyn CompiledProfile> {
        self.0.as_deref()
    }

    /// The declared profile's name (`None`: toolgauge's own checks).
    pub fn name(&self) -> Option<&'static str> {
        self.get().map(CompiledProfile::name)
    }

    /// The declared profile as its own type `T` (for its judge and its flags).
    pub fn downcast<T: CompiledProfile>(&self) -> Option<&T> {
        self.get().and_then(|p| p.as_any().downcast_ref::<T>())
    }

    /// See [`CompiledProfile::reads_unlisted_args`].
    pub fn reads_unlisted_args(&self) -> bool {
        self.get().is_some_and(CompiledProfile::reads_unlisted_args)
    }

    /// See [`CompiledProfile::check_expected_value`].
    pub fn check_expected_value(&self, value: &Value) -> Result<(), ValueProblem> {
        self.get().map_or(Ok(()), |p| p.check_expected_value(value))
    }

    /// See [`CompiledProfile::reads_values_as_options`].
    pub fn reads_values_as_options(&self) -> bool {
        self.get()
            .is_some_and(CompiledProfile::reads_values_as_options)
    }

    /// See [`CompiledProfile::run_settings`].
    pub fn run_settings(&self) -> Map<String, Value> {
        self.get()
            .map(CompiledProfile::run_settings)
            .unwrap_or_default()
    }
}

/// A problem with a declared profile's settings, located in the suite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProblem {
    /// Line and column of the offending value.
    pub at: (u32, u32),
    /// The field's path, e.g. `profile.bfcl.category`.
    pub field: String,
    /// What is wrong, with the value.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// Why a profile can not read an expected argument value: the message and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProblem {
    /// What is wrong.
    pub message: String,
    /// How to write it instead.
    pub hint: String,
}

/// `profile:` as written: one registered profile's name and its settings, read by the
/// plugin's own type.
#[derive(Debug)]
pub struct ProfileDecl {
    /// The profile's name.
    pub name: &'static str,
    /// Its settings, read by the plugin.
    pub settings: Box<dyn ProfileSettings>,
}

impl<'de> Deserialize<'de> for ProfileDecl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (name, settings) = super::plugin::read(deserializer, registry())?;
        Ok(ProfileDecl { name, settings })
    }
}

/// Every registered profile, for the shared reader ([`super::plugin`]).
fn registry() -> super::plugin::Registry<dyn ProfileSettings> {
    static NAMES: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    super::plugin::Registry::new(
        inventory::iter::<ProfileFormat>().collect(),
        &NAMES,
        "profile",
    )
}

/// One variant per registered profile, as serde derives for an externally tagged enum
/// (named `ProfileSpec`).
impl JsonSchema for ProfileDecl {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProfileSpec".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        super::plugin::schema(registry(), generator, "A scoring profile.")
    }
}

/// Compile the declared profile (`None`: none declared).
pub fn compile(decl: Option<&ProfileDecl>, problems: &mut Vec<SpecProblem>) -> Profile {
    match decl {
        None => Profile::default(),
        Some(d) => Profile::declared(d.settings.compile(problems)),
    }
}
