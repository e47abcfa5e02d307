//! Suite keys whose value is `{NAME: SETTINGS}` with NAME a registered plugin (`profile:`,
//! `world:`): read as serde reads an externally tagged enum, with the plugin's own typed
//! reader for the settings (so locations, lenient scalars and messages are those of every
//! other suite field), and described in the suite schema as one variant per plugin.

use std::fmt;
use std::sync::OnceLock;

use schemars::{Schema, SchemaGenerator, json_schema};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// A plugin's part in the suite format, registered once per plugin with
/// `inventory::submit!`; `S` is what its settings read into (`dyn ProfileSettings`,
/// `dyn WorldSettings`).
pub struct Format<S: ?Sized + 'static> {
    /// The key the plugin is named by (e.g. `bfcl`).
    pub name: &'static str,
    /// One line on what the plugin does, shown in the suite schema.
    pub about: &'static str,
    /// The JSON Schema of the settings (usually `generator.subschema_for::<Settings>()`).
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// Read the settings with the plugin's own serde type (from the suite file's own
    /// deserializer, so locations and messages are the suite's).
    pub read: fn(&mut dyn erased_serde::Deserializer<'_>) -> Result<Box<S>, erased_serde::Error>,
}

/// Every plugin of a kind, and how messages call them.
pub struct Registry<S: ?Sized + 'static> {
    /// The registered plugins, sorted by name.
    pub formats: Vec<&'static Format<S>>,
    /// Their names, for serde's "expected one of".
    pub names: &'static [&'static str],
    /// What a plugin of this kind is called in messages: `profile`, `world`.
    pub kind: &'static str,
}

impl<S: ?Sized + 'static> Registry<S> {
    /// The registry of `formats` (sorted by name here), called `kind` in messages;
    /// `names` keeps the kind's `'static` list of names, made on first use.
    pub fn new(
        mut formats: Vec<&'static Format<S>>,
        names: &'static OnceLock<&'static [&'static str]>,
        kind: &'static str,
    ) -> Registry<S> {
        formats.sort_by_key(|f| f.name);
        let names = names.get_or_init(|| {
            let names: Vec<&'static str> = formats.iter().map(|f| f.name).collect();
            Box::leak(names.into_boxed_slice())
        });
        Registry {
            formats,
            names,
            kind,
        }
    }
}

/// Read `{NAME: SETTINGS}` with exactly one registered name: the plugin's name and its
/// settings, read by the plugin.
pub fn read<'de, D: Deserializer<'de>, S: ?Sized + 'static>(
    deserializer: D,
    registry: Registry<S>,
) -> Result<(&'static str, Box<S>), D::Error> {
    deserializer.deserialize_map(DeclVisitor(registry))
}

/// The schema serde derives for an externally tagged enum, one variant per plugin.
pub fn schema<S: ?Sized + 'static>(
    registry: Registry<S>,
    generator: &mut SchemaGenerator,
    description: &str,
) -> Schema {
    let variants: Vec<Value> = registry
        .formats
        .into_iter()
        .map(|f| {
            let settings = (f.schema)(generator);
            serde_json::json!({
                "description": f.about,
                "type": "object",
                "properties": { f.name: settings },
                "required": [f.name],
                "additionalProperties": false,
            })
        })
        .collect();
    json_schema!({
        "description": description,
        "oneOf": variants,
    })
}

struct DeclVisitor<S: ?Sized + 'static>(Registry<S>);

impl<'de, S: ?Sized + 'static> Visitor<'de> for DeclVisitor<S> {
    type Value = (&'static str, Box<S>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map with one {} name", self.0.kind)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(name) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let Some(format) = self.0.formats.iter().copied().find(|f| f.name == name) else {
            return Err(de::Error::unknown_variant(&name, self.0.names));
        };
        let settings = map.next_value_seed(SettingsSeed(format))?;
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        Ok((format.name, settings))
    }
}

/// Hands the settings' deserializer, erased, to the plugin's reader.
struct SettingsSeed<S: ?Sized + 'static>(&'static Format<S>);

impl<'de, S: ?Sized + 'static> DeserializeSeed<'de> for SettingsSeed<S> {
    type Value = Box<S>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(deserializer);
        (self.0.read)(&mut erased).map_err(de::Error::custom)
    }
}
