//! BFCL's value checkers for one parameter: strings, lists, dicts and lists of dicts, each
//! compared after BFCL's string standardisation, and the points where BFCL would raise on
//! an answer option of an unexpected shape.

use std::borrow::Cow;

use super::call::is_empty_str;
use super::fault::{CRASH_ANSWER, CRASH_NON_DICT, Fault, Step, crash, mismatch};
use super::standardize::standardize;
use crate::bfcl::value::PyValue;

/// A standardised model value against a (not yet standardised) option, by Python `==`.
fn std_eq(model_std: &PyValue, option: &PyValue) -> bool {
    match (model_std, option) {
        (PyValue::Str(a), PyValue::Str(b)) => *a == standardize(b),
        _ => model_std.py_eq(option),
    }
}

fn standardize_value(v: &PyValue) -> Cow<'_, PyValue> {
    match v {
        PyValue::Str(s) => Cow::Owned(PyValue::Str(standardize(s))),
        other => Cow::Borrowed(other),
    }
}

/// The elements of `x` as BFCL reaches them with `range(len(x))` and `x[i]`: a list's or
/// tuple's elements, a string's characters, nothing for an empty dict. Anything else raises
/// in BFCL.
fn indexable_items(x: &PyValue) -> Result<Cow<'_, [PyValue]>, Fault> {
    match x {
        PyValue::List(items) | PyValue::Tuple(items) => Ok(Cow::Borrowed(items)),
        PyValue::Str(s) => Ok(Cow::Owned(
            s.chars().map(|c| PyValue::Str(c.to_string())).collect(),
        )),
        PyValue::Dict(d) if d.is_empty() => Ok(Cow::Borrowed(&[])),
        other => Err(crash(
            CRASH_ANSWER,
            format!("answer option {other} cannot be indexed as a list"),
        )),
    }
}

/// Python `"" in x` for an option list.
fn contains_empty_str(x: &PyValue) -> Result<bool, Fault> {
    match x {
        PyValue::List(items) | PyValue::Tuple(items) => Ok(items.iter().any(is_empty_str)),
        // "" is a substring of every string.
        PyValue::Str(_) => Ok(true),
        PyValue::Dict(d) => Ok(d.iter().any(|(k, _)| is_empty_str(k))),
        other => Err(crash(
            CRASH_ANSWER,
            format!("answer option {other} does not support `in`"),
        )),
    }
}

fn dict_get<'d>(dict: &'d [(PyValue, PyValue)], key: &PyValue) -> Option<&'d PyValue> {
    dict.iter().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

/// BFCL's `string_checker`: the standardised value must equal a standardised str option.
pub(super) fn string_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
    let PyValue::Str(s) = value else {
        // Unreachable after the type check; a non-str never equals a str option.
        return Err(string_error(name, value, options));
    };
    let model = standardize(s);
    let found = options
        .iter()
        .any(|o| matches!(o, PyValue::Str(o) if standardize(o) == model));
    if found {
        Ok(())
    } else {
        Err(string_error(name, value, options))
    }
}

fn string_error(name: &str, value: &PyValue, options: &[PyValue]) -> Fault {
    mismatch(
        "value_error:string",
        format!(
            "Invalid value for parameter {name:?}: {value}. Expected one of {}. Case insensitive.",
            PyValue::List(options.to_vec())
        ),
    )
}

/// BFCL's `list_checker`: standardise the top-level strings of the value and of every option,
/// then the value must equal one option (order-sensitive, Python `==` inside).
pub(super) fn list_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
    let items: &[PyValue] = match value {
        PyValue::List(items) | PyValue::Tuple(items) => items,
        _ => &[],
    };
    let model: Vec<Cow<'_, PyValue>> = items.iter().map(standardize_value).collect();
    // BFCL standardises every option before comparing, so a malformed later option raises
    // even when an earlier one matches.
    let option_items = options
        .iter()
        .map(indexable_items)
        .collect::<Result<Vec<_>, _>>()?;
    let found = option_items.iter().any(|opt| {
        opt.len() == model.len() && model.iter().zip(opt.iter()).all(|(m, o)| std_eq(m, o))
    });
    if found {
        Ok(())
    } else {
        Err(mismatch(
            "value_error:list/tuple",
            format!(
                "Invalid value for parameter {name:?}: {value}. Expected one of {}.",
                PyValue::List(options.to_vec())
            ),
        ))
    }
}

/// BFCL's `dict_checker`: some non-"" option must accept the dict; the last option's error is
/// reported.
pub(super) fn dict_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
    let mut last = mismatch(
        "dict_checker:unclear",
        format!("No usable answer option for dict parameter {name:?}."),
    );
    for option in options {
        if is_empty_str(option) {
            continue;
        }
        let PyValue::Dict(model) = value else {
            return Err(crash(
                CRASH_NON_DICT,
                format!("parameter {name:?}: element {value} is not a dict"),
            ));
        };
        let PyValue::Dict(option) = option else {
            return Err(crash(
                CRASH_ANSWER,
                format!("parameter {name:?}: answer option {option} is not a dict"),
            ));
        };
        match dict_option_check(model, option)? {
            None => return Ok(()),
            Some(fault) => last = fault,
        }
    }
    Err(last)
}

/// One option of `dict_checker`: `Ok(None)` if it accepts the dict, `Ok(Some(mismatch))` if not.
fn dict_option_check(
    model: &[(PyValue, PyValue)],
    option: &[(PyValue, PyValue)],
) -> Result<Option<Fault>, Fault> {
    let mut error = None;
    for (key, value) in model {
        let Some(allowed) = dict_get(option, key) else {
            error = Some(mismatch(
                "value_error:dict_key",
                format!("Unexpected dict key parameter: {key}."),
            ));
            break;
        };
        let model_std = standardize_value(value);
        let allowed_items = indexable_items(allowed)?;
        if !allowed_items.iter().any(|o| std_eq(&model_std, o)) {
            error = Some(mismatch(
                "value_error:dict_value",
                format!("Invalid value for parameter {key}: {value}. Expected one of {allowed}."),
            ));
            break;
        }
    }
    // BFCL runs this pass even after a failure above, and its error then replaces the first.
    for (key, allowed) in option {
        if dict_get(model, key).is_none() && !contains_empty_str(allowed)? {
            error = Some(mismatch(
                "value_error:dict_key",
                format!("Missing dict key parameter: {key}."),
            ));
            break;
        }
    }
    Ok(error)
}

/// BFCL's `list_dict_checker`: an option of the same length whose dicts accept the value's
/// dicts position by position.
pub(super) fn list_dict_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
    let items: &[PyValue] = match value {
        PyValue::List(items) | PyValue::Tuple(items) => items,
        _ => &[],
    };
    let mut last = mismatch(
        "list_dict_checker:unclear",
        format!("No answer option for list parameter {name:?}."),
    );
    'options: for option in options {
        let option_len = match option {
            PyValue::List(o) | PyValue::Tuple(o) => o.len(),
            PyValue::Str(s) => s.chars().count(),
            PyValue::Dict(d) => d.len(),
            other => {
                return Err(crash(
                    CRASH_ANSWER,
                    format!("parameter {name:?}: answer option {other} has no length"),
                ));
            }
        };
        if option_len != items.len() {
            last = mismatch(
                "value_error:list_dict_count",
                "Wrong number of dictionaries in the list.".into(),
            );
            continue;
        }
        let option_items = indexable_items(option)?;
        for (item, expected) in items.iter().zip(option_items.iter()) {
            match dict_checker(name, item, std::slice::from_ref(expected)) {
                Ok(()) => {}
                Err(Fault::Mismatch(f)) => {
                    last = Fault::Mismatch(f);
                    continue 'options;
                }
                Err(crash) => return Err(crash),
            }
        }
        return Ok(());
    }
    Err(last)
}
