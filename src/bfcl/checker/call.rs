//! One model call against one expected call: BFCL's `simple_function_checker` (name,
//! required and unexpected parameters, missing optional ones) and, per parameter, its
//! `type_checker` and the conversions BFCL makes first.

use std::borrow::Cow;

use super::fault::{CRASH_INT, CRASH_SCHEMA, Fault, Step, crash, mismatch};
use super::schema::{DeclType, Function, GroundTruthCall};
use super::values::{dict_checker, list_checker, list_dict_checker, string_checker};
use super::{Call, Options};
use crate::bfcl::value::PyValue;

/// Whether a dict key is the str `name` (dict membership: only a str equals a str).
pub(super) fn key_is(key: &PyValue, name: &str) -> bool {
    matches!(key, PyValue::Str(k) if k == name)
}

/// Whether `v` is the str `""` (an answer's mark for "may be omitted").
pub(super) fn is_empty_str(v: &PyValue) -> bool {
    matches!(v, PyValue::Str(s) if s.is_empty())
}

/// BFCL's `simple_function_checker` for one model call against one expected call.
pub(super) fn check_call(
    func: &Function,
    call: &Call<'_>,
    gt: &GroundTruthCall,
    opts: &Options,
) -> Step {
    // 1. Name, compared exactly after the FC-model rewrite.
    let expected_name: Cow<'_, str> = if opts.underscore_names && func.name.contains('.') {
        Cow::Owned(func.name.replace('.', "_"))
    } else {
        Cow::Borrowed(&func.name)
    };
    if call.name != expected_name {
        return Err(mismatch(
            "simple_function_checker:wrong_func_name",
            format!("Function name {expected_name:?} not found in model output."),
        ));
    }

    // 2. Required parameters, in schema order, even where the answer allows omission.
    for param in &func.required {
        if !call.args.iter().any(|(k, _)| key_is(k, param)) {
            return Err(mismatch(
                "simple_function_checker:missing_required",
                format!("Missing required parameter: {param:?}."),
            ));
        }
    }

    // 3. Each supplied parameter, in the model's order.
    for (key, value) in call.args {
        let name = match key {
            PyValue::Str(s) => Some(s.as_str()),
            _ => None,
        };
        let schema = name.and_then(|n| func.properties.get(n));
        let options = name.and_then(|n| gt.options(n));
        let (Some(name), Some(schema), Some(options)) = (name, schema, options) else {
            return Err(mismatch(
                "simple_function_checker:unexpected_param",
                format!("Unexpected parameter: {key}."),
            ));
        };
        let (decl, nested) = schema
            .types
            .clone()
            .map_err(|why| crash(CRASH_SCHEMA, why))?;
        check_param(name, value, options, decl, nested)?;
    }

    // 4. Expected parameters the model left out must be optional in the answer.
    for (param, options) in &gt.params {
        if !call.args.iter().any(|(k, _)| key_is(k, param)) && !options.iter().any(is_empty_str) {
            return Err(mismatch(
                "simple_function_checker:missing_optional",
                format!("Optional parameter {param:?} not provided and not marked as optional."),
            ));
        }
    }
    Ok(())
}

/// Type check, then value check, of one supplied parameter.
fn check_param(
    name: &str,
    value: &PyValue,
    options: &[PyValue],
    decl: DeclType,
    nested: Option<DeclType>,
) -> Step {
    // BFCL's top-level conversions only: a tuple for a tuple parameter becomes a list, an int
    // for a float parameter becomes a float.
    let converted;
    let value = match (decl, value) {
        (DeclType::Tuple, PyValue::Tuple(items)) => {
            converted = PyValue::List(items.clone());
            &converted
        }
        (DeclType::Float, v) if v.type_name() == "int" => {
            converted = PyValue::Float(int_to_float(v)?);
            &converted
        }
        _ => value,
    };

    let is_variable = type_check(
        name,
        value,
        options,
        decl.python_type(),
        nested.map(DeclType::python_type),
    )?;

    // A "variable" (options of another type than declared) skips all special handling.
    if !is_variable {
        match decl {
            DeclType::Dict => return dict_checker(name, value, options),
            DeclType::Array | DeclType::Tuple if nested == Some(DeclType::Dict) => {
                return list_dict_checker(name, value, options);
            }
            DeclType::String | DeclType::Any => return string_checker(name, value, options),
            DeclType::Array | DeclType::Tuple => return list_checker(name, value, options),
            DeclType::Integer | DeclType::Float | DeclType::Boolean => {}
        }
    }
    if value.py_in(options) {
        Ok(())
    } else {
        Err(mismatch(
            "value_error:others",
            format!(
                "Invalid value for parameter {name:?}: {value}. Expected one of {}.",
                PyValue::List(options.to_vec())
            ),
        ))
    }
}

/// Python `float(int)`: correctly rounded, OverflowError past the float range.
fn int_to_float(v: &PyValue) -> Result<f64, Fault> {
    let f = match v {
        PyValue::Int(i) => Some(*i as f64),
        // An int beyond i128 carries its decimal text (see `decode`); `num-bigint`
        // rounds it to the nearest float (ties to even), inf past the range.
        PyValue::Other { repr, .. } => repr
            .parse::<num_bigint::BigInt>()
            .ok()
            .and_then(|i| num_traits::ToPrimitive::to_f64(&i)),
        _ => None,
    };
    match f {
        Some(f) if f.is_finite() => Ok(f),
        _ => Err(crash(
            CRASH_INT,
            format!("int too large to convert to float: {v}"),
        )),
    }
}

/// Python type name of the first option that is not `""` (BFCL's `get_possible_answer_type`).
fn possible_answer_type(options: &[PyValue]) -> Option<&str> {
    options
        .iter()
        .find(|o| !is_empty_str(o))
        .map(PyValue::type_name)
}

/// BFCL's `type_checker`. Ok(is_variable) when the type is accepted.
fn type_check(
    name: &str,
    value: &PyValue,
    options: &[PyValue],
    expected: &str,
    nested: Option<&str>,
) -> Result<bool, Fault> {
    let pa_type = possible_answer_type(options);
    let is_variable = pa_type.is_some_and(|t| t != expected);
    let value_type = value.type_name();
    let mut nested_failed = false;
    if value_type == expected {
        let Some(inner) = nested else {
            return Ok(is_variable);
        };
        let items: &[PyValue] = match value {
            PyValue::List(items) | PyValue::Tuple(items) => items,
            _ => &[],
        };
        // One option suffices; an option that is not a list (e.g. "") passes unexamined.
        let any_option_fits = options.iter().any(|option| match option {
            PyValue::List(elems) => {
                let elem_type = possible_answer_type(elems);
                items.iter().all(|item| {
                    let t = item.type_name();
                    t == inner || elem_type == Some(t)
                })
            }
            _ => true,
        });
        if any_option_fits {
            return Ok(is_variable);
        }
        nested_failed = true;
    }
    // BFCL falls through here after a failed nested check too: it then reports
    // `type_error:nested` only if the value has the options' type, else `type_error:simple`.
    if pa_type == Some(value_type) {
        if nested_failed {
            return Err(mismatch(
                "type_error:nested",
                format!(
                    "Nested type checking failed for parameter {name:?}. Expected outer type {expected} with inner type {}. Parameter value: {value}.",
                    nested.unwrap_or("?")
                ),
            ));
        }
        return Ok(true);
    }
    Err(mismatch(
        "type_error:simple",
        format!(
            "Incorrect type for parameter {name:?}. Expected type {expected}, got {value_type}. Parameter value: {value}."
        ),
    ))
}
