//! Suite keys whose value is `{NAME: SETTINGS}` with NAME a registered plugin (`profile:`,
//! `world:`): read as serde reads an externally tagged enum, with the plugin's own typed
//! reader for the settings (so locations, lenient scalars and messages are those of every
//! other suite field), and described in the suite schema as one variant per plugin.

use std::fmt;
use std::marker::PhantomData;

use schemars::{Schema, SchemaGenerator, json_schema};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// A registered plugin's part in the suite format.
pub trait PluginFormat: Sync + 'static {
    /// What the plugin's settings read into.
    type Settings: ?Sized;
    /// The key the plugin is named by.
    fn name(&self) -> &'static str;
    /// One line on what the plugin does, shown in the suite schema.
    fn about(&self) -> &'static str;
    /// The JSON Schema of the settings.
    fn settings_schema(&self, generator: &mut SchemaGenerator) -> Schema;
    /// Read the settings from the suite file's deserializer, erased.
    fn read_settings(
        &self,
        deserializer: &mut dyn erased_serde::Deserializer<'_>,
    ) -> Result<Box<Self::Settings>, erased_serde::Error>;
}

/// Every plugin of a kind, and how messages call them.
pub struct Registry<F: 'static> {
    /// The registered plugins, sorted by name.
    pub formats: Vec<&'static F>,
    /// Their names, for serde's "expected one of" (a `'static` list, made once per kind
    /// by the caller).
    pub names: &'static [&'static str],
    /// What a plugin of this kind is called in messages: `profile`, `world`.
    pub kind: &'static str,
}

/// Read `{NAME: SETTINGS}` with exactly one registered name: the plugin's name and its
/// settings, read by the plugin.
pub fn read<'de, D: Deserializer<'de>, F: PluginFormat>(
    deserializer: D,
    registry: Registry<F>,
) -> Result<(&'static str, Box<F::Settings>), D::Error> {
    deserializer.deserialize_map(DeclVisitor(registry))
}

/// The schema serde derives for an externally tagged enum, one variant per plugin.
pub fn schema<F: PluginFormat>(
    registry: Registry<F>,
    generator: &mut SchemaGenerator,
    description: &str,
) -> Schema {
    let variants: Vec<Value> = registry
        .formats
        .into_iter()
        .map(|f| {
            let settings = f.settings_schema(generator);
            serde_json::json!({
                "description": f.about(),
                "type": "object",
                "properties": { f.name(): settings },
                "required": [f.name()],
                "additionalProperties": false,
            })
        })
        .collect();
    json_schema!({
        "description": description,
        "oneOf": variants,
    })
}

struct DeclVisitor<F: 'static>(Registry<F>);

impl<'de, F: PluginFormat> Visitor<'de> for DeclVisitor<F> {
    type Value = (&'static str, Box<F::Settings>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map with one {} name", self.0.kind)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(name) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let Some(format) = self.0.formats.iter().copied().find(|f| f.name() == name) else {
            return Err(de::Error::unknown_variant(&name, self.0.names));
        };
        let settings = map.next_value_seed(SettingsSeed(format, PhantomData))?;
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        Ok((format.name(), settings))
    }
}

/// Hands the settings' deserializer, erased, to the plugin's reader.
struct SettingsSeed<F: 'static>(&'static F, PhantomData<F>);

impl<'de, F: PluginFormat> DeserializeSeed<'de> for SettingsSeed<F> {
    type Value = Box<F::Settings>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(deserializer);
        self.0.read_settings(&mut erased).map_err(de::Error::custom)
    }
}
