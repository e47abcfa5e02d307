//! Rust ports of BFCL's stateful multi-turn backends (issue 33): the [`World`] trait each
//! backend implements, Python-style argument binding with CPython 3.11's exact
//! `TypeError` texts ([`bind`]), and BFCL's step result text ([`result_line`]).
//! Behaviour follows docs/bfcl-multi-turn.md and is pinned by fixtures/bfcl_worlds.

use std::fmt;

use super::pyfmt::{py_repr, result_text};
use super::value::PyValue;

mod filesystem;
mod math;
mod message;
mod tables;
mod ticket;
mod trading;
mod travel;
mod twitter;
mod vehicle;

#[cfg(test)]
mod fixture_tests;

pub use filesystem::GorillaFileSystem;
pub use math::MathApi;
pub use message::MessageApi;
pub use ticket::TicketApi;
pub use trading::TradingBot;
pub use travel::TravelApi;
pub use twitter::TwitterApi;
pub use vehicle::VehicleControlApi;

/// An exception raised by a backend method (or by the call itself), as Python would
/// raise it: BFCL shows only `str(e)`, kept here as `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyException {
    /// Python exception class name, e.g. `TypeError`, `KeyError`.
    pub type_name: String,
    /// `str(e)`: for a `KeyError` that is the repr of the key.
    pub message: String,
}

impl PyException {
    /// An exception of the given Python type with `str(e) == message`.
    pub fn new(type_name: &str, message: impl Into<String>) -> PyException {
        PyException {
            type_name: type_name.to_string(),
            message: message.into(),
        }
    }

    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> PyException {
        PyException::new("TypeError", message)
    }

    /// A `KeyError` for `key`, whose `str` is the key's repr (`'trunk'`).
    pub fn key_error(key: &PyValue) -> PyException {
        PyException::new("KeyError", py_repr(key))
    }

    /// The `AttributeError` of calling a method a value's type lacks, e.g.
    /// `'int' object has no attribute 'lower'`.
    pub fn no_attribute(value: &PyValue, attribute: &str) -> PyException {
        PyException::new(
            "AttributeError",
            format!(
                "'{}' object has no attribute '{attribute}'",
                value.type_name()
            ),
        )
    }

    /// The `TypeError` of an ordering comparison between unorderable types.
    pub fn not_orderable(op: &str, a: &PyValue, b: &PyValue) -> PyException {
        PyException::type_error(format!(
            "'{op}' not supported between instances of '{}' and '{}'",
            a.type_name(),
            b.type_name()
        ))
    }
}

impl fmt::Display for PyException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PyException {}

/// One backend class instance: BFCL's Python object, reduced to what the executor and
/// the state check use.
pub trait World: Send + Sync + fmt::Debug + WorldClone {
    /// The Python class name, e.g. `MathAPI`.
    fn class(&self) -> &'static str;
    /// BFCL's `_load_scenario(config, long_context)` (a no-op for stateless classes).
    fn load(&mut self, config: &serde_json::Value, long_context: bool) -> Result<(), PyException>;
    /// Calls a public method with Python's argument binding; an unknown name gives
    /// Python's `NameError` text, as BFCL's `eval` would.
    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException>;
    /// Public attributes (`vars(obj)` without `_` names) in Python's order, as BFCL's
    /// state check compares them.
    fn state(&self) -> Vec<(String, PyValue)>;
}

/// A copy of an instance as it is now: loading a configuration once and copying the
/// loaded instance for every trial is cheaper than loading it again.
pub trait WorldClone {
    /// The copy.
    fn clone_box(&self) -> Box<dyn World>;
}

impl<T: World + Clone + 'static> WorldClone for T {
    fn clone_box(&self) -> Box<dyn World> {
        Box::new(self.clone())
    }
}

/// A fresh, unloaded instance of the backend class `class`, `None` for an unknown or
/// not yet ported class.
pub fn world(class: &str) -> Option<Box<dyn World>> {
    Some(match class {
        "GorillaFileSystem" => Box::new(GorillaFileSystem::default()),
        "MathAPI" => Box::new(MathApi),
        "TicketAPI" => Box::new(TicketApi::default()),
        "MessageAPI" => Box::new(MessageApi::default()),
        "TwitterAPI" => Box::new(TwitterApi::default()),
        "TradingBot" => Box::new(TradingBot::default()),
        "TravelAPI" => Box::new(TravelApi::default()),
        "VehicleControlAPI" => Box::new(VehicleControlApi::default()),
        _ => return None,
    })
}

/// Names BFCL's executor refuses to run (compared with the call's function name).
const FORBIDDEN: &[&str] = &[
    "kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run",
];

/// Runs one call the way BFCL's executor does once the call string is parsed: the
/// forbidden-name check first, then the method.
pub fn execute(
    world: &mut dyn World,
    method: &str,
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
) -> Result<PyValue, PyException> {
    if FORBIDDEN.contains(&method) {
        return Err(PyException::new(
            "Exception",
            format!("Function call {method} is not allowed."),
        ));
    }
    world.call(method, args, kwargs)
}

/// Runs one call string (`cd(folder='docs')`) the way BFCL's executor does, and gives
/// its result line: a string that does not read as one call of a method with literal
/// arguments is an error line too, as Python's `eval` of it would be.
pub fn execute_text(world: &mut dyn World, call: &str) -> String {
    match crate::bfcl::decode::parse_call_text(call) {
        Ok(c) => result_line(execute(world, &c.name, c.args, c.kwargs)),
        Err(why) => format!("Error during execution: {why}"),
    }
}

/// BFCL's text for one executed call: the formatted return value, or
/// `Error during execution: ` and `str(exception)`.
pub fn result_line(r: Result<PyValue, PyException>) -> String {
    match r {
        Ok(v) => result_text(&v),
        Err(e) => format!("Error during execution: {e}"),
    }
}

/// One parameter of a method signature (after `self`).
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Parameter name.
    pub name: &'static str,
    /// Default value as a Python literal (`None`, `True`, `0`, `'l'`, `[]`), if any.
    pub default: Option<&'static str>,
}

/// A required parameter.
pub const fn req(name: &'static str) -> Param {
    Param {
        name,
        default: None,
    }
}

/// A parameter with a default, given as a Python literal.
pub const fn opt(name: &'static str, default: &'static str) -> Param {
    Param {
        name,
        default: Some(default),
    }
}

/// A method table entry: name and parameters.
pub type Method = (&'static str, &'static [Param]);

/// The value of a default literal. Each call gets a new value; Python shares one
/// default object between calls, which matters only where a method mutates it
/// (TwitterAPI's `post_tweet`, handled there).
fn default_value(lit: &str) -> PyValue {
    match lit {
        "None" => PyValue::None,
        "True" => PyValue::Bool(true),
        "False" => PyValue::Bool(false),
        "[]" => PyValue::List(Vec::new()),
        s if s.starts_with('\'') => PyValue::Str(s[1..s.len() - 1].to_string()),
        s if s.contains('.') => PyValue::Float(s.parse().unwrap_or(f64::NAN)),
        s => PyValue::Int(s.parse().unwrap_or(0)),
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`: how CPython lists missing names.
fn name_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.len() {
        0 | 1 => quoted.concat(),
        2 => format!("{} and {}", quoted[0], quoted[1]),
        n => format!("{}, and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// Binds a call's arguments to `params` as CPython 3.11 does for a method (so counts
/// include `self`), with its error texts and their order: unknown or duplicated
/// keywords first, then too many positionals, then missing arguments.
pub fn bind(
    class: &str,
    method: &str,
    params: &[Param],
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
) -> Result<Vec<PyValue>, PyException> {
    let qual = format!("{class}.{method}()");
    let given = args.len();
    let mut slots: Vec<Option<PyValue>> = vec![None; params.len()];
    for (slot, a) in slots.iter_mut().zip(args) {
        *slot = Some(a);
    }
    for (k, v) in kwargs {
        let Some(i) = params.iter().position(|p| p.name == k) else {
            return Err(PyException::type_error(format!(
                "{qual} got an unexpected keyword argument '{k}'"
            )));
        };
        if slots[i].is_some() {
            return Err(PyException::type_error(format!(
                "{qual} got multiple values for argument '{k}'"
            )));
        }
        slots[i] = Some(v);
    }
    if given > params.len() {
        let max = params.len() + 1;
        let min = params.iter().filter(|p| p.default.is_none()).count() + 1;
        let takes = if min == max {
            format!(
                "{max} positional argument{}",
                if max == 1 { "" } else { "s" }
            )
        } else {
            format!("from {min} to {max} positional arguments")
        };
        let m = given + 1;
        let verb = if m == 1 { "was" } else { "were" };
        return Err(PyException::type_error(format!(
            "{qual} takes {takes} but {m} {verb} given"
        )));
    }
    let missing: Vec<&str> = params
        .iter()
        .zip(&slots)
        .filter(|(p, s)| s.is_none() && p.default.is_none())
        .map(|(p, _)| p.name)
        .collect();
    if !missing.is_empty() {
        let n = missing.len();
        return Err(PyException::type_error(format!(
            "{qual} missing {n} required positional argument{}: {}",
            if n == 1 { "" } else { "s" },
            name_list(&missing)
        )));
    }
    Ok(params
        .iter()
        .zip(slots)
        .map(|(p, s)| s.unwrap_or_else(|| default_value(p.default.unwrap_or("None"))))
        .collect())
}

/// Looks `method` up in a class's table and binds the arguments; an unknown name is
/// Python's `NameError`, as BFCL's `eval` of an unmapped name gives.
pub fn bind_method(
    class: &str,
    table: &[Method],
    method: &str,
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
) -> Result<(&'static str, Vec<PyValue>), PyException> {
    let Some((name, params)) = table.iter().find(|(n, _)| *n == method) else {
        return Err(PyException::new(
            "NameError",
            format!("name '{method}' is not defined"),
        ));
    };
    Ok((name, bind(class, method, params, args, kwargs)?))
}

/// A Python set, for state comparison only: items sorted by repr (Python's own
/// iteration order depends on hashing, and set equality ignores order), shown as
/// `{a, b}` or `set()`.
pub fn py_set<'a>(items: impl IntoIterator<Item = &'a PyValue>) -> PyValue {
    let mut reprs: Vec<String> = items.into_iter().map(py_repr).collect();
    reprs.sort();
    reprs.dedup();
    let repr = if reprs.is_empty() {
        "set()".to_string()
    } else {
        format!("{{{}}}", reprs.join(", "))
    };
    PyValue::Other {
        type_name: "set".into(),
        repr,
    }
}

/// Shorthand for a dict with str keys, in the given order.
pub fn dict<const N: usize>(items: [(&str, PyValue); N]) -> PyValue {
    PyValue::Dict(
        items
            .into_iter()
            .map(|(k, v)| (PyValue::Str(k.to_string()), v))
            .collect(),
    )
}

/// Shorthand for a str value.
pub fn s(text: impl Into<String>) -> PyValue {
    PyValue::Str(text.into())
}

/// `{"error": message}`, the error dict most backends return.
pub fn error(message: impl Into<String>) -> PyValue {
    dict([("error", s(message))])
}

/// Python truthiness.
pub fn truthy(v: &PyValue) -> bool {
    match v {
        PyValue::None => false,
        PyValue::Bool(b) => *b,
        PyValue::Int(i) => *i != 0,
        PyValue::Float(f) => *f != 0.0,
        PyValue::Str(s) => !s.is_empty(),
        PyValue::List(a) | PyValue::Tuple(a) => !a.is_empty(),
        PyValue::Dict(d) => !d.is_empty(),
        PyValue::Other { .. } => true,
    }
}

/// `d.get(key)` on a dict value with a str key.
pub fn get<'a>(d: &'a PyValue, key: &str) -> Option<&'a PyValue> {
    match d {
        PyValue::Dict(items) => items
            .iter()
            .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// Mutable `d[key]` on a dict value with a str key.
pub fn get_mut<'a>(d: &'a mut PyValue, key: &str) -> Option<&'a mut PyValue> {
    match d {
        PyValue::Dict(items) => items
            .iter_mut()
            .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// `d[key] = value` on a dict value with a str key (kept in place if present).
pub fn set_key(d: &mut PyValue, key: &str, value: PyValue) {
    if let Some(slot) = get_mut(d, key) {
        *slot = value;
    } else if let PyValue::Dict(items) = d {
        items.push((s(key), value));
    }
}

/// `scenario.get(key)` on a config, converted as `json.loads` would.
pub fn config_get(config: &serde_json::Value, key: &str) -> Option<PyValue> {
    config.get(key).map(PyValue::from_json)
}

/// The backend's generator as `_load_scenario` builds it: `random.Random(seed)` with the
/// config's `random_seed`, else the class's default seed.
pub fn seeded_random(
    config: &serde_json::Value,
    default_seed: i128,
) -> crate::bfcl::pyrandom::Random {
    let seed = match config_get(config, "random_seed") {
        Some(PyValue::Int(i)) => i,
        _ => default_seed,
    };
    crate::bfcl::pyrandom::Random::cached(seed)
}

/// A Python int or float as f64 (bool counts as int); `None` for other types.
pub fn num(v: &PyValue) -> Option<f64> {
    match v {
        PyValue::Bool(b) => Some(f64::from(u8::from(*b))),
        PyValue::Int(i) => Some(*i as f64),
        PyValue::Float(f) => Some(*f),
        _ => None,
    }
}

/// Python `a < b` (`op` `<`, `>`, `<=`, `>=`) for numbers and for strs, with the
/// `TypeError` text for other pairs.
pub fn py_cmp(a: &PyValue, op: &str, b: &PyValue) -> Result<bool, PyException> {
    let ord = match (num(a), num(b), a, b) {
        (Some(x), Some(y), _, _) => x.partial_cmp(&y),
        (_, _, PyValue::Str(x), PyValue::Str(y)) => Some(x.cmp(y)),
        _ => return Err(PyException::not_orderable(op, a, b)),
    };
    use std::cmp::Ordering::*;
    Ok(match (op, ord) {
        (_, None) => false,
        ("<", Some(o)) => o == Less,
        (">", Some(o)) => o == Greater,
        ("<=", Some(o)) => o != Greater,
        (_, Some(o)) => o != Less,
    })
}

/// Python `a + b`, `a - b`, `a * b` on numbers: int with int stays int, otherwise a
/// float; `unsupported operand` `TypeError` for other types.
pub fn py_arith(a: &PyValue, op: char, b: &PyValue) -> Result<PyValue, PyException> {
    let ints = |v: &PyValue| match v {
        PyValue::Bool(x) => Some(i128::from(*x)),
        PyValue::Int(i) => Some(*i),
        _ => None,
    };
    if let (Some(x), Some(y)) = (ints(a), ints(b)) {
        let r = match op {
            '+' => x.checked_add(y),
            '-' => x.checked_sub(y),
            _ => x.checked_mul(y),
        };
        if let Some(r) = r {
            return Ok(PyValue::Int(r));
        }
    }
    match (num(a), num(b)) {
        (Some(x), Some(y)) => Ok(PyValue::Float(match op {
            '+' => x + y,
            '-' => x - y,
            _ => x * y,
        })),
        _ => Err(PyException::type_error(format!(
            "unsupported operand type(s) for {op}: '{}' and '{}'",
            a.type_name(),
            b.type_name()
        ))),
    }
}

/// Python `float(v)` for a number or a numeric str.
pub fn py_float(v: &PyValue) -> Result<f64, PyException> {
    if let Some(x) = num(v) {
        return Ok(x);
    }
    match v {
        PyValue::Str(t) => t.trim().parse().map_err(|_| {
            PyException::new(
                "ValueError",
                format!("could not convert string to float: {}", py_repr(v)),
            )
        }),
        other => Err(PyException::type_error(format!(
            "float() argument must be a string or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(params: &[Param], args: Vec<PyValue>, kwargs: &[&str]) -> String {
        let kwargs = kwargs
            .iter()
            .map(|k| (k.to_string(), PyValue::Int(0)))
            .collect();
        bind("C", "m", params, args, kwargs).unwrap_err().message
    }

    #[test]
    fn type_error_texts_match_cpython() {
        let abc = [req("a"), req("b"), req("c"), opt("d", "None")];
        assert_eq!(
            err(&abc, vec![], &[]),
            "C.m() missing 3 required positional arguments: 'a', 'b', and 'c'"
        );
        assert_eq!(
            err(&abc, vec![PyValue::Int(1)], &["c"]),
            "C.m() missing 1 required positional argument: 'b'"
        );
        assert_eq!(
            err(&abc[..2], vec![], &[]),
            "C.m() missing 2 required positional arguments: 'a' and 'b'"
        );
        assert_eq!(
            err(&abc, vec![PyValue::Int(1)], &["a"]),
            "C.m() got multiple values for argument 'a'"
        );
        assert_eq!(
            err(&abc, vec![PyValue::Int(1); 5], &[]),
            "C.m() takes from 4 to 5 positional arguments but 6 were given"
        );
        assert_eq!(
            err(&[], vec![PyValue::Int(1)], &[]),
            "C.m() takes 1 positional argument but 2 were given"
        );
        // Keyword problems are reported before surplus positionals.
        assert_eq!(
            err(&abc[..1], vec![PyValue::Int(1); 3], &["z"]),
            "C.m() got an unexpected keyword argument 'z'"
        );
        let ok = bind(
            "C",
            "m",
            &abc,
            vec![PyValue::Int(1)],
            vec![("c".into(), s("x"))],
        );
        assert!(ok.is_err());
        let ok = bind(
            "C",
            "m",
            &[req("a"), opt("b", "'l'")],
            vec![PyValue::Int(1)],
            vec![],
        );
        assert_eq!(ok.unwrap()[1].to_string(), "\"l\"");
    }

    #[test]
    fn results_and_forbidden_names() {
        let mut w = world("MathAPI").unwrap();
        let r = execute(w.as_mut(), "exit", vec![], vec![]);
        assert_eq!(
            result_line(r),
            "Error during execution: Function call exit is not allowed."
        );
        assert!(world("NoSuchAPI").is_none());
    }
}
