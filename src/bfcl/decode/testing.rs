//! Helpers shared by the decoder's unit tests: building expected values and decoding
//! `f(a=<expr>)` texts.

use super::{decode_prompt, python_json_loads};
use crate::bfcl::value::{Decoded, PyValue};

pub(super) fn s(x: &str) -> PyValue {
    PyValue::Str(x.into())
}

pub(super) fn dict(items: Vec<(PyValue, PyValue)>) -> PyValue {
    PyValue::Dict(items)
}

pub(super) fn other(type_name: &str, repr: &str) -> PyValue {
    PyValue::Other {
        type_name: type_name.into(),
        repr: repr.into(),
    }
}

/// Exact structural equality, types included (`1` vs `1.0` vs `True`).
pub(super) fn same(a: &PyValue, b: &PyValue) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

pub(super) fn calls_mode(text: &str, strict: bool) -> Vec<(String, PyValue)> {
    match decode_prompt(text, strict) {
        Decoded::Calls(c) => c,
        Decoded::Failed { reason, .. } => panic!("{text:?} failed: {reason}"),
    }
}

pub(super) fn calls(text: &str) -> Vec<(String, PyValue)> {
    calls_mode(text, true)
}

/// The value of keyword `a` in `f(a=<expr>)`.
pub(super) fn arg_mode(expr: &str, strict: bool) -> PyValue {
    let text = format!("f(a={expr})");
    let mut c = calls_mode(&text, strict);
    assert_eq!(c.len(), 1, "{text}");
    let (_, PyValue::Dict(mut args)) = c.remove(0) else {
        panic!("{text}: arguments are not a dict")
    };
    assert_eq!(args.len(), 1, "{text}");
    args.remove(0).1
}

pub(super) fn arg(expr: &str) -> PyValue {
    arg_mode(expr, true)
}

pub(super) fn check(expr: &str, expected: PyValue) {
    let got = arg(expr);
    assert!(
        same(&got, &expected),
        "{expr}: got {got:?}, expected {expected:?}"
    );
}

pub(super) fn fails_mode(text: &str, strict: bool) -> (String, bool) {
    match decode_prompt(text, strict) {
        Decoded::Failed { reason, attempt } => (reason, attempt),
        Decoded::Calls(c) => panic!("{text:?} decoded: {c:?}"),
    }
}

pub(super) fn fails(text: &str) -> (String, bool) {
    fails_mode(text, true)
}

pub(super) fn arg_fails(expr: &str) {
    fails(&format!("f(a={expr})"));
}

pub(super) fn loads(s: &str) -> PyValue {
    python_json_loads(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

pub(super) fn loads_err(s: &str) -> String {
    match python_json_loads(s) {
        Err(e) => e,
        Ok(v) => panic!("{s:?} decoded: {v:?}"),
    }
}
