//! What the checker reads from a BFCL item: the function declarations ([`Function`], with
//! each parameter's declared type) and the possible answer ([`GroundTruthCall`]s), parsed
//! from BFCL's JSON.

use indexmap::IndexMap;

use crate::bfcl::value::PyValue;

/// A parameter type as declared in a BFCL schema (the keys of BFCL's Python type mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeclType {
    String,
    Integer,
    Float,
    Boolean,
    Array,
    Tuple,
    Dict,
    Any,
}

impl DeclType {
    fn parse(s: &str) -> Option<DeclType> {
        Some(match s {
            "string" => DeclType::String,
            "integer" => DeclType::Integer,
            "float" => DeclType::Float,
            "boolean" => DeclType::Boolean,
            "array" => DeclType::Array,
            "tuple" => DeclType::Tuple,
            "dict" => DeclType::Dict,
            "any" => DeclType::Any,
            _ => return None,
        })
    }

    /// The Python type BFCL maps the declared type to (`tuple` → list and `any` → str are
    /// BFCL's choices), as `PyValue::type_name` spells it.
    pub(super) fn python_type(self) -> &'static str {
        match self {
            DeclType::String | DeclType::Any => "str",
            DeclType::Integer => "int",
            DeclType::Float => "float",
            DeclType::Boolean => "bool",
            DeclType::Array | DeclType::Tuple => "list",
            DeclType::Dict => "dict",
        }
    }
}

/// What the checker reads from one property schema: the declared type and, for array/tuple,
/// the item type. `Err` holds why BFCL would raise when it reads them; that only matters
/// (as a `bfcl_crash:schema` verdict) if the model actually supplies the parameter.
#[derive(Debug, Clone)]
pub(super) struct ParamSchema {
    /// The declared type and the item type, or why BFCL would raise reading them.
    pub(super) types: Result<(DeclType, Option<DeclType>), String>,
}

impl ParamSchema {
    fn from_bfcl(name: &str, v: &serde_json::Value) -> ParamSchema {
        let type_of = |v: &serde_json::Value, what: &str| -> Result<DeclType, String> {
            match v.get("type") {
                Some(serde_json::Value::String(t)) => DeclType::parse(t)
                    .ok_or_else(|| format!("{what} of parameter {name:?} has unknown type {t:?}")),
                Some(other) => Err(format!("{what} of parameter {name:?} has type {other}")),
                None => Err(format!("{what} of parameter {name:?} has no type")),
            }
        };
        let types = type_of(v, "schema").and_then(|t| match t {
            DeclType::Array | DeclType::Tuple => match v.get("items") {
                Some(items) => type_of(items, "items").map(|inner| (t, Some(inner))),
                None => Err(format!("{t:?} parameter {name:?} has no items")),
            },
            _ => Ok((t, None)),
        });
        ParamSchema { types }
    }
}

/// One BFCL function declaration, parsed from the item's `function` entry (BFCL JSON: name,
/// description, parameters{type:"dict", properties{name:{type, items?, properties?, ...}},
/// required}).
///
/// Only what BFCL's checker reads is kept: the name, each property's `type` (and `items.type`
/// for arrays and tuples) and the top-level `required` list. Enums, defaults, nested
/// `properties` and nested `required` are ignored, as BFCL ignores them.
#[derive(Debug, Clone)]
pub struct Function {
    pub(super) name: String,
    pub(super) properties: IndexMap<String, ParamSchema>,
    pub(super) required: Vec<String>,
}

impl Function {
    /// Parse one element of a BFCL item's `function` list.
    ///
    /// Fails when the entry is not an object with a string `name` and a `parameters` object,
    /// or when `parameters.properties` is not an object or `parameters.required` not an array
    /// of strings. An absent `properties` or `required` counts as empty, as in JSON Schema
    /// (every shipped BFCL function has both; BFCL itself would raise on a missing one). A
    /// property without a usable `type` is accepted; checking a call that supplies it gives
    /// `bfcl_crash:schema`, as BFCL raises only then.
    pub fn from_bfcl(v: &serde_json::Value) -> Result<Function, String> {
        let obj = v.as_object().ok_or("function entry is not an object")?;
        let name = obj
            .get("name")
            .and_then(serde_json::Value::as_str)
            .ok_or("function entry has no string \"name\"")?;
        let params = obj
            .get("parameters")
            .and_then(serde_json::Value::as_object)
            .ok_or_else(|| format!("function {name:?} has no \"parameters\" object"))?;
        let properties = match params.get("properties") {
            None => IndexMap::new(),
            Some(serde_json::Value::Object(props)) => props
                .iter()
                .map(|(k, schema)| (k.clone(), ParamSchema::from_bfcl(k, schema)))
                .collect(),
            Some(_) => {
                return Err(format!(
                    "function {name:?}: \"parameters.properties\" is not an object"
                ));
            }
        };
        let required = match params.get("required") {
            None => &[][..],
            Some(serde_json::Value::Array(r)) => r.as_slice(),
            Some(_) => {
                return Err(format!(
                    "function {name:?}: \"parameters.required\" is not an array"
                ));
            }
        };
        let required = required
            .iter()
            .map(|r| {
                r.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("function {name:?}: required entry {r} is not a string"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Function {
            name: name.to_owned(),
            properties,
            required,
        })
    }

    /// The declared name (dots included; see [`Options::underscore_names`](super::Options::underscore_names)).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One ground-truth call: function name and, per parameter in answer order, the acceptable
/// values ("" = may be omitted).
#[derive(Debug, Clone)]
pub struct GroundTruthCall {
    /// The function name as the answer spells it (dotted names keep their dots).
    pub function: String,
    /// Each parameter with its list of acceptable options, in answer order.
    pub params: Vec<(String, Vec<PyValue>)>,
}

impl GroundTruthCall {
    /// The acceptable options of `param`, if the answer names it.
    pub(super) fn options(&self, param: &str) -> Option<&[PyValue]> {
        self.params
            .iter()
            .find(|(p, _)| p == param)
            .map(|(_, o)| o.as_slice())
    }
}

/// Parse a possible-answer line's `ground_truth` array.
///
/// Each element must be an object with exactly one key (the function name) whose value maps
/// every parameter to an array of options; anything else is an error. The options themselves
/// are kept as they are (nested dict and list-of-dict options included). Parameters keep
/// their JSON order (serde_json's `preserve_order`), which decides which missing parameter
/// BFCL reports first.
pub fn ground_truth_from_bfcl(v: &serde_json::Value) -> Result<Vec<GroundTruthCall>, String> {
    let calls = v.as_array().ok_or("ground_truth is not an array")?;
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let obj = call
                .as_object()
                .ok_or_else(|| format!("ground_truth[{i}] is not an object"))?;
            let mut entries = obj.iter();
            let (Some((function, params)), None) = (entries.next(), entries.next()) else {
                return Err(format!("ground_truth[{i}] does not have exactly one key"));
            };
            let params = params
                .as_object()
                .ok_or_else(|| format!("ground_truth[{i}].{function} is not an object"))?
                .iter()
                .map(|(p, opts)| match opts {
                    serde_json::Value::Array(a) => {
                        Ok((p.clone(), a.iter().map(PyValue::from_json).collect()))
                    }
                    _ => Err(format!(
                        "ground_truth[{i}].{function}.{p} is not an array of options"
                    )),
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(GroundTruthCall {
                function: function.clone(),
                params,
            })
        })
        .collect()
}
