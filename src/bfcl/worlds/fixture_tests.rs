//! Replays fixtures/bfcl_worlds/<Class>.jsonl (calls run by BFCL's own executor)
//! against the Rust backends: every result string and every state must match.

use serde_json::Value;

use super::{execute, execute_text, py_set, result_line, world};
use crate::bfcl::pyfmt::py_repr;
use crate::bfcl::value::PyValue;

/// Decodes the fixtures' tagged JSON (see fixtures/bfcl_worlds/README.md) into the
/// values the backends produce: sets in [`py_set`]'s form, non-str-keyed dicts as
/// dicts, tuples as tuples; Directory/File trees stay tagged dicts.
fn decode(v: &Value) -> PyValue {
    match v {
        Value::Array(a) => PyValue::List(a.iter().map(decode).collect()),
        Value::Object(o) => {
            let items = || {
                o.get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            match o.get("__type__").and_then(Value::as_str) {
                Some("tuple") => PyValue::Tuple(items().iter().map(decode).collect()),
                Some("set") => py_set(&items().iter().map(decode).collect::<Vec<_>>()),
                Some("dict") => PyValue::Dict(
                    items()
                        .iter()
                        .map(|kv| (decode(&kv[0]), decode(&kv[1])))
                        .collect(),
                ),
                Some("float") => PyValue::Float(match o["repr"].as_str() {
                    Some("inf") => f64::INFINITY,
                    Some("-inf") => f64::NEG_INFINITY,
                    _ => f64::NAN,
                }),
                _ => PyValue::Dict(
                    o.iter()
                        .map(|(k, v)| (PyValue::Str(k.clone()), decode(v)))
                        .collect(),
                ),
            }
        }
        other => PyValue::from_json(other),
    }
}

/// Strict equality for the state check: Python `==`, except that an int and a float
/// must also agree in type (the fixtures keep `1` and `1.0` apart, and so must we,
/// since the type shows up in later result texts).
fn same(a: &PyValue, b: &PyValue) -> bool {
    a.type_name() == b.type_name() && py_repr(a) == py_repr(b) && a.py_eq(b)
        || matches!((a, b), (PyValue::Float(x), PyValue::Float(y)) if x.is_nan() && y.is_nan())
}

/// How a fixture's calls are made: from the recorded arguments, or from the call
/// string as BFCL's executor read it.
#[derive(Clone, Copy)]
enum Via {
    Arguments,
    CallText,
}

fn replay(class: &str, text: &str) {
    replay_via(class, text, Via::Arguments);
    replay_via(class, text, Via::CallText);
}

fn replay_via(class: &str, text: &str, via: Via) {
    let mut w = None;
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let l: Value = serde_json::from_str(line).expect("fixture line is JSON");
        let seq = l["seq"].as_str().unwrap_or("?");
        let step = l["step"].as_u64().unwrap_or(0);
        let mut ctx = format!("{class} {seq} step {step} (line {})", n + 1);
        if step == 0 {
            let mut fresh = world(class).expect("class is ported");
            let config = l.get("initial_config").cloned().unwrap_or(Value::Null);
            let config = if config.is_null() {
                Value::Object(Default::default())
            } else {
                config
            };
            // Lines of a long_context item's sequence say so on step 0.
            let long_context = l["long_context"].as_bool().unwrap_or(false);
            fresh.load(&config, long_context).expect("load");
            w = Some(fresh);
        } else {
            let w = w.as_mut().expect("step 0 first");
            let call = l["call"].as_str().unwrap_or("");
            ctx = format!("{ctx}: {call}");
            let func = l["func"].as_str().expect("func");
            let args: Vec<PyValue> = l["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(decode)
                .collect();
            let kwargs: Vec<(String, PyValue)> = l["kwargs"]
                .as_object()
                .expect("kwargs")
                .iter()
                .map(|(k, v)| (k.clone(), decode(v)))
                .collect();
            let got = match via {
                Via::Arguments => result_line(execute(w.as_mut(), func, args, kwargs)),
                Via::CallText => execute_text(w.as_mut(), call),
            };
            assert_eq!(
                got,
                l["result"].as_str().expect("result"),
                "result of {ctx}"
            );
        }
        let w = w.as_ref().expect("world");
        let want: Vec<(String, PyValue)> = l["state"]
            .as_object()
            .expect("state")
            .iter()
            .map(|(k, v)| (k.clone(), decode(v)))
            .collect();
        let got = w.state();
        let names = |s: &[(String, PyValue)]| s.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(&want), "state attributes after {ctx}");
        for ((k, g), (_, e)) in got.iter().zip(&want) {
            assert!(
                same(g, e),
                "state {k} after {ctx}:\n got  {}\n want {}",
                py_repr(g),
                py_repr(e)
            );
        }
        checked += 1;
    }
    assert_eq!(checked, text.lines().count(), "every fixture line checked");
}

#[test]
fn math_api() {
    replay(
        "MathAPI",
        include_str!("../../../fixtures/bfcl_worlds/MathAPI.jsonl"),
    );
}

#[test]
fn ticket_api() {
    replay(
        "TicketAPI",
        include_str!("../../../fixtures/bfcl_worlds/TicketAPI.jsonl"),
    );
}

#[test]
fn message_api() {
    replay(
        "MessageAPI",
        include_str!("../../../fixtures/bfcl_worlds/MessageAPI.jsonl"),
    );
}

#[test]
fn twitter_api() {
    replay(
        "TwitterAPI",
        include_str!("../../../fixtures/bfcl_worlds/TwitterAPI.jsonl"),
    );
}

#[test]
fn vehicle_control_api() {
    replay(
        "VehicleControlAPI",
        include_str!("../../../fixtures/bfcl_worlds/VehicleControlAPI.jsonl"),
    );
}

#[test]
fn trading_bot() {
    replay(
        "TradingBot",
        include_str!("../../../fixtures/bfcl_worlds/TradingBot.jsonl"),
    );
}

#[test]
fn gorilla_file_system() {
    replay(
        "GorillaFileSystem",
        include_str!("../../../fixtures/bfcl_worlds/GorillaFileSystem.jsonl"),
    );
}

#[test]
fn travel_api() {
    replay(
        "TravelAPI",
        include_str!("../../../fixtures/bfcl_worlds/TravelAPI.jsonl"),
    );
}
