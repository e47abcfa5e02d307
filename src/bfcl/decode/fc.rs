//! FC models' results: a list of one-key objects whose values are JSON arguments.

use crate::util::json_kind::json_kind;
use serde_json::Value;

use super::{failed, python_json_loads};
use crate::bfcl::value::Decoded;

/// Decodes an FC model's result (the `result` field of a BFCL result line, any JSON
/// value) the way BFCL's OpenAI-style `decode_ast` does.
///
/// BFCL iterates over the result. Each element must be an object: its first key is the
/// function name and its value must be a JSON string, parsed with `json.loads`. So:
/// * a non-empty string (a text answer), a number, a bool, `null` or a non-empty object
///   fails; `""` and `{}` iterate over nothing and give `Calls([])`;
/// * an element that is not an object, or is `{}`, fails;
/// * a value that is not a string (e.g. an object) fails, as does malformed JSON;
/// * JSON that is not an object (`"[1]"`, `"5"`) decodes to that value, which then fails
///   BFCL's shape check ([`Decoded::has_call_shape`]).
///
/// `attempt` is set on failure when the list holds at least one object whose first key
/// is a non-empty function name (see the module docs).
pub fn decode_fc(result: &Value) -> Decoded {
    let items = match result {
        Value::Array(items) => items,
        Value::String(s) if s.is_empty() => return Decoded::Calls(Vec::new()),
        Value::Object(o) if o.is_empty() => return Decoded::Calls(Vec::new()),
        Value::String(_) => return failed("the result is text, not a list of calls", false),
        // Iterating a dict yields its keys, strings without `.keys()`.
        Value::Object(_) => {
            return failed("the result is an object, not a list of calls", false);
        }
        other => {
            return failed(
                format!("the result is {}, which is not iterable", json_kind(other)),
                false,
            );
        }
    };
    let mut calls = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let call = match item {
            Value::Object(obj) => match obj.iter().next() {
                None => Err(format!("element {i} is an empty object")),
                Some((name, Value::String(args))) => python_json_loads(args)
                    .map(|v| (name.clone(), v))
                    .map_err(|e| format!("arguments of `{name}` (element {i}): {e}")),
                Some((name, other)) => Err(format!(
                    "arguments of `{name}` (element {i}) are {}, not a JSON string",
                    json_kind(other)
                )),
            },
            other => Err(format!(
                "element {i} is {}, not an object",
                json_kind(other)
            )),
        };
        match call {
            Ok(call) => calls.push(call),
            Err(reason) => return failed(reason, fc_attempt(items)),
        }
    }
    Decoded::Calls(calls)
}

/// Whether a list that failed to decode still names a function somewhere.
fn fc_attempt(items: &[Value]) -> bool {
    items.iter().any(
        |item| matches!(item, Value::Object(o) if o.keys().next().is_some_and(|k| !k.is_empty())),
    )
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use super::*;
    use crate::bfcl::decode::testing::*;
    use crate::bfcl::value::PyValue;
    use PyValue::{Float, Int, List};
    use serde_json::json;

    fn fc(v: serde_json::Value) -> Decoded {
        decode_fc(&v)
    }

    fn fc_calls(v: serde_json::Value) -> Vec<(String, PyValue)> {
        match fc(v.clone()) {
            Decoded::Calls(c) => c,
            Decoded::Failed { reason, .. } => panic!("{v} failed: {reason}"),
        }
    }

    fn fc_fails(v: serde_json::Value) -> bool {
        match fc(v.clone()) {
            Decoded::Failed { attempt, .. } => attempt,
            Decoded::Calls(c) => panic!("{v} decoded: {c:?}"),
        }
    }

    #[test]
    fn fc_results() {
        assert!(fc_calls(json!("")).is_empty());
        assert!(fc_calls(json!({})).is_empty());
        assert!(fc_calls(json!([])).is_empty());
        let c = fc_calls(json!([{"f": "{\"a\": 1, \"b\": [1.0, null]}"}, {"m.g": " {} \n"}]));
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].0, "m.g");
        assert!(same(
            &c[0].1,
            &dict(vec![
                (s("a"), Int(1)),
                (s("b"), List(vec![Float(1.0), PyValue::None]))
            ])
        ));
        // Only the first key counts.
        let c = fc_calls(json!([{"f": "{}", "g": "not json"}]));
        assert_eq!(c[0].0, "f");
        // JSON that is not an object decodes, and fails the shape check later.
        let d = fc(json!([{"f": "[1]"}]));
        assert!(matches!(&d, Decoded::Calls(c) if same(&c[0].1, &List(vec![Int(1)]))));
        assert!(!d.has_call_shape());
        assert!(same(&fc_calls(json!([{"f": "5"}]))[0].1, &Int(5)));
        assert!(same(&fc_calls(json!([{"": "{}"}]))[0].1, &dict(vec![])));
    }

    #[test]
    fn fc_failures_and_attempts() {
        // Not a list of calls: never an attempt.
        for v in [
            json!("I can't help with that"),
            json!({"a": "b"}),
            json!(null),
            json!(5),
            json!(true),
            json!([{}]),
            json!(["f"]),
            json!([[1]]),
            json!([{"": "{bad"}]),
        ] {
            assert!(!fc_fails(v.clone()), "{v}");
        }
        // A named call whose arguments do not decode: an attempt.
        for v in [
            json!([{"f": "{bad"}]),
            json!([{"f": {"a": 1}}]),
            json!([{"f": null}]),
            json!([{"f": ["{}"]}]),
            json!([{"f": "{'a': 1}"}]),
            json!([{"f": ""}]),
            json!([{"f": "{}"}, {}]),
            json!([{"f": "{}"}, "x"]),
        ] {
            assert!(fc_fails(v.clone()), "{v}");
        }
    }
}
