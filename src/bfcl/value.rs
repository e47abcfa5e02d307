//! Python values as BFCL's checker sees them: what `json.loads` or BFCL's prompt-mode
//! decoder produce, with Python's equality (`1 == 1.0 == True`, a list is never equal to
//! a tuple) and Python's exact type names (`type(v) == int`).

use std::fmt;

/// A Python value. Dicts keep insertion order (Python 3.7+), as BFCL iterates them.
#[derive(Debug, Clone)]
pub enum PyValue {
    /// `None`.
    None,
    /// `True` / `False` (a distinct type from int for `type(v) == T`, equal to 1/0 for `==`).
    Bool(bool),
    /// An int. Python ints are unbounded; BFCL data and answers fit in i128.
    Int(i128),
    /// A float (NaN and the infinities included, as `json.loads` accepts them).
    Float(f64),
    /// A str.
    Str(String),
    /// A list.
    List(Vec<PyValue>),
    /// A tuple (only from prompt-mode text; JSON has none).
    Tuple(Vec<PyValue>),
    /// A dict, in insertion order; keys are any values (JSON keys are always str).
    Dict(Vec<(PyValue, PyValue)>),
    /// Any other Python value the decoder can produce (bytes, complex, an int beyond
    /// i128): its type name and source text. Equal only to the same type and text.
    Other {
        /// Python type name, e.g. `bytes`.
        type_name: String,
        /// Source text.
        repr: String,
    },
}

impl PyValue {
    /// Python's `type(v).__name__`.
    pub fn type_name(&self) -> &str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Tuple(_) => "tuple",
            PyValue::Dict(_) => "dict",
            PyValue::Other { type_name, .. } => type_name,
        }
    }

    /// The number a bool, int or float stands for in `==`; `None` for other types.
    fn number(&self) -> Option<Num> {
        match self {
            PyValue::Bool(b) => Some(Num::Int(i128::from(*b))),
            PyValue::Int(i) => Some(Num::Int(*i)),
            PyValue::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }

    /// Python `==`.
    pub fn py_eq(&self, other: &PyValue) -> bool {
        if let (Some(a), Some(b)) = (self.number(), other.number()) {
            return a.eq(b);
        }
        match (self, other) {
            (PyValue::None, PyValue::None) => true,
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            (PyValue::List(a), PyValue::List(b)) | (PyValue::Tuple(a), PyValue::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            (PyValue::Dict(a), PyValue::Dict(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(k2, _)| k2.py_eq(k))
                            .is_some_and(|(_, v2)| v2.py_eq(v))
                    })
            }
            (
                PyValue::Other {
                    type_name: t1,
                    repr: r1,
                },
                PyValue::Other {
                    type_name: t2,
                    repr: r2,
                },
            ) => t1 == t2 && r1 == r2,
            _ => false,
        }
    }

    /// Python `self in options` (by `==`).
    pub fn py_in(&self, options: &[PyValue]) -> bool {
        options.iter().any(|o| self.py_eq(o))
    }

    /// The value a JSON document holds, as `json.loads` would give it (integers that
    /// fit i128 stay ints, numbers with a fraction or exponent are floats).
    pub fn from_json(v: &serde_json::Value) -> PyValue {
        use serde_json::Value;
        match v {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    PyValue::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    PyValue::Int(i128::from(u))
                } else {
                    PyValue::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => PyValue::Str(s.clone()),
            Value::Array(a) => PyValue::List(a.iter().map(PyValue::from_json).collect()),
            Value::Object(o) => PyValue::Dict(
                o.iter()
                    .map(|(k, v)| (PyValue::Str(k.clone()), PyValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The closest JSON value (tuples become arrays, non-str keys their text, NaN and
    /// the infinities `null`), for tool-call arguments and reports.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            PyValue::None => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .unwrap_or_else(|_| Value::from(*i as f64)),
            PyValue::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            PyValue::Str(s) => Value::String(s.clone()),
            PyValue::List(a) | PyValue::Tuple(a) => {
                Value::Array(a.iter().map(PyValue::to_json).collect())
            }
            PyValue::Dict(d) => Value::Object(
                d.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            PyValue::Str(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (key, v.to_json())
                    })
                    .collect(),
            ),
            PyValue::Other { repr, .. } => Value::String(repr.clone()),
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn eq(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Float(b)) => a == b,
            // Python compares int and float exactly (no rounding of the int).
            (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => {
                f.is_finite() && f.fract() == 0.0 && (f as i128) == i && (i as f64) == f
            }
        }
    }
}

/// Python `repr`-like text, for messages.
impl fmt::Display for PyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(
            f: &mut fmt::Formatter<'_>,
            items: &[PyValue],
            open: &str,
            close: &str,
        ) -> fmt::Result {
            f.write_str(open)?;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            if open == "(" && items.len() == 1 {
                f.write_str(",")?;
            }
            f.write_str(close)
        }
        match self {
            PyValue::None => f.write_str("None"),
            PyValue::Bool(true) => f.write_str("True"),
            PyValue::Bool(false) => f.write_str("False"),
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) if x.is_nan() => f.write_str("nan"),
            PyValue::Float(x) if x.is_infinite() => {
                f.write_str(if *x > 0.0 { "inf" } else { "-inf" })
            }
            PyValue::Float(x) if x.fract() == 0.0 && x.abs() < 1e16 => write!(f, "{x:.1}"),
            PyValue::Float(x) => write!(f, "{x}"),
            PyValue::Str(s) => write!(f, "{s:?}"),
            PyValue::List(a) => seq(f, a, "[", "]"),
            PyValue::Tuple(a) => seq(f, a, "(", ")"),
            PyValue::Dict(d) => {
                f.write_str("{")?;
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            PyValue::Other { repr, .. } => f.write_str(repr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_equality() {
        use PyValue::*;
        assert!(Int(1).py_eq(&Float(1.0)));
        assert!(Bool(true).py_eq(&Int(1)));
        assert!(Bool(false).py_eq(&Float(0.0)));
        assert!(!Float(f64::NAN).py_eq(&Float(f64::NAN)));
        assert!(!List(vec![Int(1)]).py_eq(&Tuple(vec![Int(1)])));
        assert!(
            List(vec![Int(1), Str("a".into())]).py_eq(&List(vec![Float(1.0), Str("a".into())]))
        );
        let d1 = Dict(vec![(Str("a".into()), Int(1)), (Str("b".into()), Int(2))]);
        let d2 = Dict(vec![
            (Str("b".into()), Float(2.0)),
            (Str("a".into()), Bool(true)),
        ]);
        assert!(d1.py_eq(&d2));
        assert!(!Str("1".into()).py_eq(&Int(1)));
        assert!(None.py_eq(&None) && !None.py_eq(&Int(0)));
        assert!(!Int(9_007_199_254_740_993).py_eq(&Float(9_007_199_254_740_992.0)));
    }

    #[test]
    fn json_numbers_keep_their_python_type() {
        let v: serde_json::Value =
            serde_json::from_str(r#"[1, 1.0, 1e2, -3, 18446744073709551615]"#).unwrap();
        let PyValue::List(items) = PyValue::from_json(&v) else {
            panic!()
        };
        let types: Vec<&str> = items.iter().map(PyValue::type_name).collect();
        assert_eq!(types, ["int", "float", "float", "int", "int"]);
    }
}

/// A model result after BFCL's decoding step (`decode_ast`).
#[derive(Debug, Clone)]
pub enum Decoded {
    /// Decoding succeeded: one `(function name, decoded arguments)` per element, in the
    /// model's order. The arguments are a `Dict` for a well-formed call; anything else
    /// (FC arguments that are JSON but not an object) fails BFCL's shape check.
    Calls(Vec<(String, PyValue)>),
    /// Decoding raised (text from an FC model, malformed JSON, a syntax error...).
    Failed {
        /// What went wrong, for messages.
        reason: String,
        /// The result is recognisably an attempt to call a function (e.g. an FC entry
        /// with a name but broken JSON arguments, or text shaped like `[name(...`),
        /// as opposed to a plain text answer. BFCL treats both as "no call".
        attempt: bool,
    },
}

impl Decoded {
    /// BFCL's shape check (`is_function_calling_format_output`): every element's
    /// arguments are a dict. An empty list passes.
    pub fn has_call_shape(&self) -> bool {
        match self {
            Decoded::Calls(calls) => calls.iter().all(|(_, a)| matches!(a, PyValue::Dict(_))),
            Decoded::Failed { .. } => false,
        }
    }

    /// BFCL's "the model called a function" for the relevance categories: decoding
    /// succeeded, the shape holds, and the output is not `[]` or `[{}]`.
    pub fn contains_call(&self) -> bool {
        match self {
            Decoded::Calls(calls) => self.has_call_shape() && !calls.is_empty(),
            Decoded::Failed { .. } => false,
        }
    }
}
