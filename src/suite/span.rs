//! A value with the line and column it was read from, for error messages.
//!
//! Wraps `serde_saphyr::Spanned` so the suite model can derive `JsonSchema` and be used
//! as a map key; equality and hashing look at the value only.

use std::cell::Cell;
use std::hash::{Hash, Hasher};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value and where it starts in the suite file (1-based; 0 when unknown).
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
}

impl<T> Spanned<T> {
    /// The location as `(line, column)`.
    pub fn at(&self) -> (u32, u32) {
        (self.line, self.column)
    }
}

thread_local! {
    /// Set while a suite is read by a deserializer without locations (JSON).
    static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` (a deserialization by a format other than YAML) with [`Spanned`] values read
/// as plain values at location 0:0.
pub fn without_spans<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            PLAIN.set(self.0);
        }
    }
    let _reset = Reset(PLAIN.replace(true));
    f()
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if PLAIN.get() {
            return T::deserialize(deserializer).map(|value| Spanned {
                value,
                line: 0,
                column: 0,
            });
        }
        let inner = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        Ok(Spanned {
            value: inner.value,
            line: u32::try_from(inner.referenced.line()).unwrap_or(u32::MAX),
            column: u32::try_from(inner.referenced.column()).unwrap_or(u32::MAX),
        })
    }
}

/// Serialised as the bare value (the location is for messages only); this also lets the
/// JSON Schema show a field's default.
impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Spanned<T> {}

impl<T: Hash> Hash for Spanned<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl<T: JsonSchema> JsonSchema for Spanned<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}
