//! Streaming as a matrix axis: `sampling.stream` in a suite and `--stream` on the
//! command line say whether live targets answer as one body, as server-sent events, or
//! both ways (each target then runs twice, and `compare RUN --streamed` tests the
//! difference).
//!
//! The value is read leniently (any YAML scalar) and checked when the suite compiles,
//! so a wrong value is an error at its own line with the accepted forms, as the other
//! sampling keys are.

use std::fmt;

use schemars::JsonSchema;

/// How live targets are asked to answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum StreamMode {
    /// One response body (the default).
    #[default]
    Off,
    /// Server-sent events, assembled into the same response.
    On,
    /// Both: every live target runs once each way.
    Both,
}

/// How to write a stream mode in a suite.
pub const SUITE_HINT: &str = "write `stream: true` (stream every request), `stream: false` or `stream: both` (run each target both ways)";

/// How to write a stream mode on the command line.
pub const FLAG_HINT: &str = "write --stream (stream every request), --stream=off, --stream=on or --stream=both (run each target both ways)";

impl StreamMode {
    /// The stream flags a target runs with, in run order: not streamed first.
    pub fn flags(self) -> &'static [bool] {
        match self {
            StreamMode::Off => &[false],
            StreamMode::On => &[true],
            StreamMode::Both => &[false, true],
        }
    }

    /// True unless [`StreamMode::Off`].
    pub fn streams(self) -> bool {
        self != StreamMode::Off
    }

    /// The name used on the command line and in `run.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamMode::Off => "off",
            StreamMode::On => "on",
            StreamMode::Both => "both",
        }
    }

    /// The mode a `--stream` value (or `run.json`'s `settings.stream`) names: `on`,
    /// `off` or `both` (`true` and `false` too, as a suite writes them).
    pub fn parse_flag(s: &str) -> Result<StreamMode, String> {
        match s.trim() {
            "on" | "true" => Ok(StreamMode::On),
            "off" | "false" => Ok(StreamMode::Off),
            "both" => Ok(StreamMode::Both),
            other => Err(format!("--stream is `{other}`: not one of on, off, both")),
        }
    }
}

impl fmt::Display for StreamMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `sampling.stream` as written: `true`, `false`, `both`, or anything else (kept so the
/// compile step can say where it is and what to write instead).
#[derive(Debug, Clone, PartialEq)]
pub enum StreamSpec {
    /// `true` or `false`.
    Bool(bool),
    /// Any other scalar, as text (`both` is the one accepted).
    Word(String),
}

impl StreamSpec {
    /// The mode it names, or why it names none.
    pub fn mode(&self) -> Result<StreamMode, String> {
        match self {
            StreamSpec::Bool(true) => Ok(StreamMode::On),
            StreamSpec::Bool(false) => Ok(StreamMode::Off),
            StreamSpec::Word(w) if w == "both" => Ok(StreamMode::Both),
            StreamSpec::Word(w) => Err(format!("`stream` is `{w}`: not true, false or both")),
        }
    }
}

impl<'de> serde::Deserialize<'de> for StreamSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = StreamSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false or both")
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Bool(b))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Word(s.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Word(i.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Word(u.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Word(f.to_string()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<StreamSpec, E> {
                Ok(StreamSpec::Word("null".into()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl serde::Serialize for StreamSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StreamSpec::Bool(b) => s.serialize_bool(*b),
            StreamSpec::Word(w) => s.serialize_str(w),
        }
    }
}

impl JsonSchema for StreamSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StreamSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Stream live answers (server-sent events): true, false, or both (each live target runs once each way).",
            "anyOf": [{"type": "boolean"}, {"const": "both"}]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_the_three_modes_and_refuse_anything_else() {
        for (s, m) in [
            ("on", StreamMode::On),
            ("true", StreamMode::On),
            ("off", StreamMode::Off),
            ("false", StreamMode::Off),
            ("both", StreamMode::Both),
        ] {
            assert_eq!(StreamMode::parse_flag(s), Ok(m), "{s}");
        }
        assert_eq!(
            StreamMode::parse_flag("yes"),
            Err("--stream is `yes`: not one of on, off, both".to_string())
        );
        for m in [StreamMode::Off, StreamMode::On, StreamMode::Both] {
            assert_eq!(StreamMode::parse_flag(m.as_str()), Ok(m));
        }
    }

    #[test]
    fn both_runs_each_target_unstreamed_then_streamed() {
        assert_eq!(StreamMode::Off.flags(), [false]);
        assert_eq!(StreamMode::On.flags(), [true]);
        assert_eq!(StreamMode::Both.flags(), [false, true]);
        assert!(!StreamMode::Off.streams());
        assert!(StreamMode::Both.streams());
    }

    #[test]
    fn a_suite_writes_true_false_or_both() {
        let read = |yaml: &str| serde_saphyr::from_str::<StreamSpec>(yaml).unwrap();
        assert_eq!(read("true").mode(), Ok(StreamMode::On));
        assert_eq!(read("false").mode(), Ok(StreamMode::Off));
        assert_eq!(read("both").mode(), Ok(StreamMode::Both));
        assert_eq!(
            read("sometimes").mode(),
            Err("`stream` is `sometimes`: not true, false or both".to_string())
        );
        assert_eq!(
            read("2").mode(),
            Err("`stream` is `2`: not true, false or both".to_string())
        );
    }
}
