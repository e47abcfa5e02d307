//! BFCL's single-turn AST checker (Python categories), re-implemented.
//!
//! Given an item's function list, its possible answer and the decoded model result, [`check`]
//! decides valid/invalid and the error type the way `bfcl-eval` 2026.3.23 does for the
//! categories `simple_python`, `multiple`, `parallel`, `parallel_multiple`, `live_simple`,
//! `live_multiple`, `live_parallel`, `live_parallel_multiple` (AST checks), `irrelevance`,
//! `live_irrelevance` and `live_relevance` (call / no-call checks). Error-type strings are
//! BFCL's, byte for byte. The behaviour follows BFCL's (summarised in docs/bfcl.md),
//! including BFCL's quirks that real models hit:
//!
//! * names are compared exactly, after the optional `.` → `_` rewrite
//!   ([`Options::underscore_names`]);
//! * types are compared exactly (`True` is not an int, `5.0` is not an int) except for the
//!   top-level int → float and tuple → list conversions; options of another type make the
//!   parameter a "variable" that is then compared with plain `==` and no normalisation;
//! * strings (and the top-level strings of lists and of dict values) are normalised by
//!   deleting ` ,./-_*^`, lower-casing like Python's `str.lower()` and turning `'` into `"`;
//! * lists are order-sensitive, list-of-dict parameters are compared position by position.
//!
//! # Strict and default mode
//!
//! With [`Options::strict`] the result is BFCL's. Without it, two BFCL defects are fixed and
//! nothing else changes:
//!
//! 1. **Parallel pairing.** BFCL pairs each expected call, in answer order, with the first
//!    unused model call that passes, and never revisits a pairing. When a loose expected call
//!    takes a model call that a stricter one needed, a correct answer fails (real cases:
//!    `parallel_178`, `parallel_96`). Default mode first runs BFCL's greedy pass; only when
//!    that ends in `parallel_function_checker_no_order:cannot_find_match` does it look for a
//!    perfect bipartite matching (`util::assign`) in which every pair passes the per-call
//!    check. If one exists the item is valid, otherwise the error type stays
//!    `cannot_find_match`. So default mode can only turn that one strict failure into a pass.
//! 2. **Malformed calls on irrelevance items.** BFCL counts any decoding failure as an
//!    abstention, so an answer that tried to call a function but produced broken arguments
//!    passes an irrelevance item. Default mode treats a [`Decoded::Failed`] with
//!    `attempt: true` as a call: invalid, error type `irrelevance_error:malformed_call`
//!    (not a BFCL string). Relevance items are unchanged: a malformed attempt is still not a
//!    decodable call there, in both modes.
//!
//! # Inputs BFCL itself cannot score
//!
//! BFCL's runner has no exception handling around its checker, so some inputs abort the whole
//! evaluation. This module never panics; where BFCL would raise, the verdict is invalid with an
//! error type starting with `bfcl_crash:` that BFCL does not have:
//!
//! * `bfcl_crash:non_dict_element` — a non-dict element reaches the dict comparison of a
//!   list-of-dict parameter (the element type check lets it through when an option is not a
//!   list, such as `""`, or is a list of non-dicts);
//! * `bfcl_crash:function_not_found` — the answer names a function that is not in the list
//!   (or a simple item has no function);
//! * `bfcl_crash:empty_ground_truth` — a simple or multiple item whose answer has no call;
//! * `bfcl_crash:schema` — a used parameter has no `type`, a type BFCL does not map, or an
//!   array/tuple without `items.type`;
//! * `bfcl_crash:malformed_answer` — an answer option of a shape BFCL's dict/list checkers
//!   cannot index (e.g. a string option for a dict parameter);
//! * `bfcl_crash:int_too_large` — an int beyond the float range given for a `float` parameter.
//!
//! In strict mode a crash is reported where BFCL would raise (for parallel items: when the
//! greedy pass reaches the crashing pair). In the default mode's matching fallback a pair
//! whose check would crash simply does not match.
//!
//! # Lower-casing
//!
//! Python 3.11's `str.lower()` uses Unicode 14 data; Rust's `str::to_lowercase` uses a newer
//! Unicode version (17 in Rust 1.95). Compared over every code point, the mappings agree
//! except for the case pairs added after Unicode 14 (U+1C89, U+A7CB–U+A7DC, U+10D50–U+10D65,
//! U+16EA0–U+16EB8), which Python leaves alone; `py_lower` keeps them unchanged. Both apply
//! the same Final_Sigma rule (`Σ` → `ς` at a word end). Not covered: case pairs a future Rust
//! adds beyond Unicode 17, and Unicode-version differences in the Cased / Case_Ignorable
//! properties that steer Final_Sigma.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::Serialize;

use super::value::{Decoded, PyValue};
use crate::util::assign;

/// Which checker BFCL dispatches to, from the category name (as BFCL's runner does: name contains
/// "irrelevance" → Irrelevance, "relevance" → Relevance, "parallel" → Parallel,
/// "multiple" → Multiple, else Simple).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// `simple_python`, `live_simple`: exactly one call, checked against the first function.
    Simple,
    /// `multiple`, `live_multiple`: as many calls as expected; the first is checked against
    /// the function the answer names.
    Multiple,
    /// `parallel`, `parallel_multiple`, `live_parallel`, `live_parallel_multiple`: calls in
    /// any order, paired with the expected calls.
    Parallel,
    /// `irrelevance`, `live_irrelevance`: the model must not call anything.
    Irrelevance,
    /// `live_relevance`: the model must call something (anything).
    Relevance,
}

impl Category {
    /// The checker BFCL uses for a category name, by the same substring tests in the same
    /// order as BFCL (so "irrelevance" is tested before its substring "relevance").
    pub fn from_name(name: &str) -> Category {
        if name.contains("irrelevance") {
            Category::Irrelevance
        } else if name.contains("relevance") {
            Category::Relevance
        } else if name.contains("parallel") {
            Category::Parallel
        } else if name.contains("multiple") {
            Category::Multiple
        } else {
            Category::Simple
        }
    }
}

/// Scoring options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Reproduce BFCL exactly (greedy parallel pairing; decode failures on irrelevance items
    /// are abstentions).
    pub strict: bool,
    /// Replace every '.' in expected function names with '_' (what BFCL does for FC models
    /// with underscore_to_dot).
    pub underscore_names: bool,
}

/// A parameter type as declared in a BFCL schema (the keys of BFCL's Python type mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclType {
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
    fn python_type(self) -> &'static str {
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
struct ParamSchema {
    types: Result<(DeclType, Option<DeclType>), String>,
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
    name: String,
    properties: IndexMap<String, ParamSchema>,
    required: Vec<String>,
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

    /// The declared name (dots included; see [`Options::underscore_names`]).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One ground-truth call: function name and, per parameter in answer order, the acceptable
/// values ("" = may be omitted).
#[derive(Debug, Clone)]
pub struct ExpectedCall {
    /// The function name as the answer spells it (dotted names keep their dots).
    pub function: String,
    /// Each parameter with its list of acceptable options, in answer order.
    pub params: Vec<(String, Vec<PyValue>)>,
}

impl ExpectedCall {
    fn options(&self, param: &str) -> Option<&[PyValue]> {
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
pub fn ground_truth_from_bfcl(v: &serde_json::Value) -> Result<Vec<ExpectedCall>, String> {
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
            Ok(ExpectedCall {
                function: function.clone(),
                params,
            })
        })
        .collect()
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Whether BFCL (or the fixed checker, outside strict mode) accepts the result.
    pub valid: bool,
    /// BFCL's error type (e.g. `value_error:string`) when invalid, `None` when valid.
    pub error_type: Option<String>,
    /// Human-readable details of the failure, empty when valid. Not BFCL's exact wording.
    pub messages: Vec<String>,
}

impl Verdict {
    fn pass() -> Verdict {
        Verdict {
            valid: true,
            error_type: None,
            messages: Vec::new(),
        }
    }

    fn fail(error_type: &str, messages: Vec<String>) -> Verdict {
        Verdict {
            valid: false,
            error_type: Some(error_type.to_owned()),
            messages,
        }
    }
}

/// Score one decoded model result against an item (see the module documentation).
pub fn check(
    category: Category,
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    decoded: &Decoded,
    opts: &Options,
) -> Verdict {
    match category {
        Category::Irrelevance => {
            if decoded.contains_call() {
                Verdict::fail(
                    "irrelevance_error:decoder_success",
                    vec!["The model called a function on an item where no function fits.".into()],
                )
            } else if let Decoded::Failed {
                reason,
                attempt: true,
            } = decoded
                && !opts.strict
            {
                Verdict::fail(
                    "irrelevance_error:malformed_call",
                    vec![format!(
                        "The model attempted a function call (malformed: {reason}) on an item where no function fits."
                    )],
                )
            } else {
                Verdict::pass()
            }
        }
        Category::Relevance => {
            if decoded.contains_call() {
                Verdict::pass()
            } else {
                let why = match decoded {
                    Decoded::Failed { reason, .. } => reason.clone(),
                    Decoded::Calls(_) => "no function call in the output".into(),
                };
                Verdict::fail(
                    "relevance_error:decoder_failed",
                    vec![format!("Expected a function call: {why}")],
                )
            }
        }
        Category::Simple | Category::Multiple | Category::Parallel => {
            check_ast(category, functions, ground_truth, decoded, opts)
        }
    }
}

/// A model call after the shape check: name and argument dict.
struct Call<'a> {
    name: &'a str,
    args: &'a [(PyValue, PyValue)],
}

/// Why a check did not pass.
#[derive(Debug)]
struct Failure {
    error_type: &'static str,
    messages: Vec<String>,
}

/// A failed check: an ordinary mismatch, or a point where BFCL itself would raise. The
/// parallel checker tries the next model call after a mismatch but stops at a crash.
#[derive(Debug)]
enum Fault {
    Mismatch(Failure),
    Crash(Failure),
}

impl Fault {
    fn into_verdict(self) -> Verdict {
        let (Fault::Mismatch(f) | Fault::Crash(f)) = self;
        Verdict::fail(f.error_type, f.messages)
    }
}

type Step = Result<(), Fault>;

fn mismatch(error_type: &'static str, message: String) -> Fault {
    Fault::Mismatch(Failure {
        error_type,
        messages: vec![message],
    })
}

fn crash(error_type: &'static str, message: String) -> Fault {
    Fault::Crash(Failure {
        error_type,
        messages: vec![format!("BFCL's checker would raise here: {message}")],
    })
}

const CRASH_NON_DICT: &str = "bfcl_crash:non_dict_element";
const CRASH_NO_FUNCTION: &str = "bfcl_crash:function_not_found";
const CRASH_NO_GT: &str = "bfcl_crash:empty_ground_truth";
const CRASH_SCHEMA: &str = "bfcl_crash:schema";
const CRASH_ANSWER: &str = "bfcl_crash:malformed_answer";
const CRASH_INT: &str = "bfcl_crash:int_too_large";

const CANNOT_FIND_MATCH: &str = "parallel_function_checker_no_order:cannot_find_match";

fn check_ast(
    category: Category,
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    decoded: &Decoded,
    opts: &Options,
) -> Verdict {
    let raw = match decoded {
        Decoded::Failed { reason, .. } => {
            return Verdict::fail(
                "ast_decoder:decoder_failed",
                vec![format!("Invalid syntax. Failed to decode AST. {reason}")],
            );
        }
        Decoded::Calls(calls) => calls,
    };
    if !decoded.has_call_shape() {
        return Verdict::fail(
            "ast_decoder:decoder_wrong_output_format",
            vec!["Did not output in the specified format.".into()],
        );
    }
    // The shape check guarantees every argument value is a dict.
    let calls: Vec<Call<'_>> = raw
        .iter()
        .filter_map(|(name, args)| match args {
            PyValue::Dict(d) => Some(Call { name, args: d }),
            _ => None,
        })
        .collect();

    let outcome = match category {
        Category::Parallel => check_parallel(functions, ground_truth, &calls, opts),
        Category::Multiple => check_multiple(functions, ground_truth, &calls, opts),
        _ => check_simple(functions, ground_truth, &calls, opts),
    };
    match outcome {
        Ok(()) => Verdict::pass(),
        Err(fault) => fault.into_verdict(),
    }
}

fn wrong_count(error_type: &'static str, got: usize, expected: usize) -> Fault {
    mismatch(
        error_type,
        format!("Wrong number of functions: {got} call(s), expected {expected}."),
    )
}

fn check_simple(
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    calls: &[Call<'_>],
    opts: &Options,
) -> Step {
    let [call] = calls else {
        return Err(wrong_count(
            "simple_function_checker:wrong_count",
            calls.len(),
            1,
        ));
    };
    // BFCL checks against the item's first function, whatever name the answer uses.
    let func = functions
        .first()
        .ok_or_else(|| crash(CRASH_NO_FUNCTION, "the item has no function".into()))?;
    let gt = ground_truth
        .first()
        .ok_or_else(|| crash(CRASH_NO_GT, "the answer has no call".into()))?;
    check_call(func, call, gt, opts)
}

fn check_multiple(
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    calls: &[Call<'_>],
    opts: &Options,
) -> Step {
    if calls.len() != ground_truth.len() {
        return Err(wrong_count(
            "multiple_function_checker:wrong_count",
            calls.len(),
            ground_truth.len(),
        ));
    }
    // Only the first call is checked (every shipped item expects exactly one).
    let (Some(gt), Some(call)) = (ground_truth.first(), calls.first()) else {
        return Err(crash(CRASH_NO_GT, "the answer has no call".into()));
    };
    let func = find_function(functions, &gt.function)?;
    check_call(func, call, gt, opts)
}

/// The first function with the answer's name (BFCL's `find_description`).
fn find_function<'f>(functions: &'f [Function], name: &str) -> Result<&'f Function, Fault> {
    functions
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| missing_function(name))
}

fn missing_function(name: &str) -> Fault {
    crash(
        CRASH_NO_FUNCTION,
        format!("the answer's function {name:?} is not in the function list"),
    )
}

fn check_parallel(
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    calls: &[Call<'_>],
    opts: &Options,
) -> Step {
    if calls.len() != ground_truth.len() {
        return Err(wrong_count(
            "parallel_function_checker_no_order:wrong_count",
            calls.len(),
            ground_truth.len(),
        ));
    }
    match greedy_pairing(functions, ground_truth, calls, opts) {
        Err(Fault::Mismatch(f)) if !opts.strict && f.error_type == CANNOT_FIND_MATCH => {
            optimal_pairing(functions, ground_truth, calls, opts, f)
        }
        other => other,
    }
}

/// BFCL's `parallel_function_checker_no_order`: each expected call, in answer order, takes the
/// first unused model call that passes.
fn greedy_pairing(
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    calls: &[Call<'_>],
    opts: &Options,
) -> Step {
    let mut used = vec![false; calls.len()];
    for (i, gt) in ground_truth.iter().enumerate() {
        // BFCL looks the function up first but only fails on it once it runs a check.
        let func = functions.iter().find(|f| f.name == gt.function);
        let mut errors = Vec::new();
        let mut found = false;
        for (j, call) in calls.iter().enumerate() {
            if used[j] {
                continue;
            }
            let func = func.ok_or_else(|| missing_function(&gt.function))?;
            match check_call(func, call, gt, opts) {
                Ok(()) => {
                    used[j] = true;
                    found = true;
                    break;
                }
                Err(Fault::Mismatch(f)) => errors.push(format!(
                    "model call {j}: {}: {}",
                    f.error_type,
                    f.messages.join(" ")
                )),
                Err(crash) => return Err(crash),
            }
        }
        if !found {
            let unused: Vec<usize> = (0..calls.len()).filter(|&j| !used[j]).collect();
            let mut messages = vec![format!(
                "Could not find a matching function among index {unused:?} of model output for index {i} of possible answers."
            )];
            messages.extend(errors);
            return Err(Fault::Mismatch(Failure {
                error_type: CANNOT_FIND_MATCH,
                messages,
            }));
        }
    }
    Ok(())
}

/// Default mode's fix for greedy pairing: a perfect matching of expected to model calls in
/// which every pair passes ([`assign::max_matching`]). Every pair is checked once; a pair
/// whose check would crash BFCL counts as not passing.
fn optimal_pairing(
    functions: &[Function],
    ground_truth: &[ExpectedCall],
    calls: &[Call<'_>],
    opts: &Options,
    greedy_failure: Failure,
) -> Step {
    // Row-major: expected call × model call.
    let passes: Vec<bool> = ground_truth
        .iter()
        .flat_map(|gt| {
            let func = find_function(functions, &gt.function).ok();
            calls
                .iter()
                .map(move |call| func.is_some_and(|f| check_call(f, call, gt, opts).is_ok()))
        })
        .collect();
    let fits = |i: usize, j: usize| passes[i * calls.len() + j];
    // Whether the first `n` expected calls can all be paired at once.
    let pairable = |n: usize| {
        assign::max_matching(n, calls.len(), fits)
            .iter()
            .all(Option::is_some)
    };
    if pairable(ground_truth.len()) {
        return Ok(());
    }
    // The message names the first expected call that cannot be paired together with the
    // ones before it: the last of the shortest prefix without a complete pairing.
    let i = (1..=ground_truth.len())
        .find(|&n| !pairable(n))
        .map_or(0, |n| n - 1);
    let mut messages = vec![format!(
        "No pairing of model calls with expected calls passes: expected call {i} cannot be paired together with the ones before it."
    )];
    messages.extend(greedy_failure.messages);
    Err(Fault::Mismatch(Failure {
        error_type: CANNOT_FIND_MATCH,
        messages,
    }))
}

/// Whether a dict key is the str `name` (dict membership: only a str equals a str).
fn key_is(key: &PyValue, name: &str) -> bool {
    matches!(key, PyValue::Str(k) if k == name)
}

fn is_empty_str(v: &PyValue) -> bool {
    matches!(v, PyValue::Str(s) if s.is_empty())
}

/// BFCL's `simple_function_checker` for one model call against one expected call.
fn check_call(func: &Function, call: &Call<'_>, gt: &ExpectedCall, opts: &Options) -> Step {
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

/// BFCL's `standardize_string`: delete ` ,./-_*^`, lower-case like Python, `'` → `"`.
pub(crate) fn standardize(s: &str) -> String {
    let kept: String = s
        .chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect();
    py_lower(&kept).replace('\'', "\"")
}

/// Code points that Rust lower-cases but Python 3.11 (Unicode 14) does not: case pairs
/// added in Unicode 15–17. Inclusive ranges, sorted. Generated by comparing
/// `chr(c).lower()` under Python 3.11.7 with `char::to_lowercase` for every code point.
const NOT_LOWERED_BY_PYTHON: &[(char, char)] = &[
    ('\u{1C89}', '\u{1C89}'),
    ('\u{A7CB}', '\u{A7CC}'),
    ('\u{A7CE}', '\u{A7CE}'),
    ('\u{A7D2}', '\u{A7D2}'),
    ('\u{A7D4}', '\u{A7D4}'),
    ('\u{A7DA}', '\u{A7DA}'),
    ('\u{A7DC}', '\u{A7DC}'),
    ('\u{10D50}', '\u{10D65}'),
    ('\u{16EA0}', '\u{16EB8}'),
];

fn not_lowered_by_python(c: char) -> bool {
    NOT_LOWERED_BY_PYTHON
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Python 3.11's `str.lower()`.
pub(crate) fn py_lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    if !s.chars().any(not_lowered_by_python) {
        return s.to_lowercase();
    }
    // Lower-case the stretches between the excluded code points separately. To Python those
    // code points are unassigned (neither cased nor case-ignorable), so a `Σ` next to one
    // sees the same Final_Sigma context as at a string boundary in Rust.
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((at, c)) = rest.char_indices().find(|&(_, c)| not_lowered_by_python(c)) {
        out.push_str(&rest[..at].to_lowercase());
        out.push(c);
        rest = &rest[at + c.len_utf8()..];
    }
    out.push_str(&rest.to_lowercase());
    out
}

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
fn string_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
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
fn list_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
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
fn dict_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
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
fn list_dict_checker(name: &str, value: &PyValue, options: &[PyValue]) -> Step {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn funcs(v: serde_json::Value) -> Vec<Function> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| Function::from_bfcl(f).unwrap())
            .collect()
    }

    fn calls(v: serde_json::Value) -> Decoded {
        Decoded::Calls(
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let (name, args) = c.as_object().unwrap().iter().next().unwrap();
                    (name.clone(), PyValue::from_json(args))
                })
                .collect(),
        )
    }

    const STRICT: Options = Options {
        strict: true,
        underscore_names: false,
    };
    const DEFAULT: Options = Options {
        strict: false,
        underscore_names: false,
    };

    fn err(v: &Verdict) -> Option<&str> {
        v.error_type.as_deref()
    }

    #[test]
    fn category_names() {
        use Category::*;
        let cases = [
            ("simple_python", Simple),
            ("live_simple", Simple),
            ("multiple", Multiple),
            ("live_multiple", Multiple),
            ("parallel", Parallel),
            ("parallel_multiple", Parallel),
            ("live_parallel_multiple", Parallel),
            ("irrelevance", Irrelevance),
            ("live_irrelevance", Irrelevance),
            ("live_relevance", Relevance),
        ];
        for (name, cat) in cases {
            assert_eq!(Category::from_name(name), cat, "{name}");
        }
    }

    /// parallel_178 from the BFCL data (functions and answer verbatim in shape).
    fn parallel_178() -> (Vec<Function>, Vec<ExpectedCall>) {
        let f = funcs(
            json!([{"name": "get_stock_price", "description": "", "parameters": {"type": "dict", "properties": {
            "company_name": {"type": "string"}, "date": {"type": "string"},
            "exchange": {"type": "string", "default": "NASDAQ"}}, "required": ["company_name", "date"]}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([
            {"get_stock_price": {"company_name": ["Microsoft", "Apple"], "date": ["2022-01-01"], "exchange": ["NASDAQ", ""]}},
            {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"], "exchange": ["NASDAQ", ""]}},
            {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"], "exchange": ["NASDAQ", ""]}},
            {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-02-01"], "exchange": ["NASDAQ", ""]}}
        ]))
        .unwrap();
        (f, gt)
    }

    #[test]
    fn parallel_178_greedy_fails_matching_passes() {
        let (f, gt) = parallel_178();
        let bad_order = calls(json!([
            {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
            {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
        ]));
        let good_order = calls(json!([
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
            {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
        ]));
        let strict = check(Category::Parallel, &f, &gt, &bad_order, &STRICT);
        assert_eq!(err(&strict), Some(CANNOT_FIND_MATCH));
        assert!(check(Category::Parallel, &f, &gt, &good_order, &STRICT).valid);
        assert!(check(Category::Parallel, &f, &gt, &bad_order, &DEFAULT).valid);
        assert!(check(Category::Parallel, &f, &gt, &good_order, &DEFAULT).valid);
        // A genuinely wrong answer still fails in default mode, with BFCL's error type.
        let wrong = calls(json!([
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
            {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
        ]));
        let v = check(Category::Parallel, &f, &gt, &wrong, &DEFAULT);
        assert_eq!(err(&v), Some(CANNOT_FIND_MATCH));
    }

    #[test]
    fn a_failed_pairing_names_the_first_expected_call_left_out() {
        let (f, _) = parallel_178();
        // Expected calls 0 and 1 both need the one Apple call: 1 is the first that cannot
        // be paired together with the calls before it.
        let gt = ground_truth_from_bfcl(&json!([
            {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"]}},
            {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"]}},
            {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"]}},
            {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"]}}
        ]))
        .unwrap();
        let answer = calls(json!([
            {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
            {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}}
        ]));
        let v = check(Category::Parallel, &f, &gt, &answer, &DEFAULT);
        assert_eq!(err(&v), Some(CANNOT_FIND_MATCH));
        assert_eq!(
            v.messages[0],
            "No pairing of model calls with expected calls passes: expected call 1 cannot be paired together with the ones before it."
        );
        // The greedy pass's messages follow.
        assert!(v.messages[1].starts_with("Could not find a matching function"));
    }

    #[test]
    fn parallel_96_optional_param_order() {
        let f = funcs(
            json!([{"name": "calculate_electric_field_strength", "description": "", "parameters": {"type": "dict", "properties": {
            "charge": {"type": "float"}, "distance": {"type": "float"},
            "medium_permittivity": {"type": "float"}}, "required": ["charge", "distance"]}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([
            {"calculate_electric_field_strength": {"charge": [0.01], "distance": [4.0], "medium_permittivity": [8.854e-12, ""]}},
            {"calculate_electric_field_strength": {"charge": [0.01], "distance": [4.0], "medium_permittivity": [5e-12, ""]}}
        ]))
        .unwrap();
        let fails = calls(json!([
            {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4}},
            {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4, "medium_permittivity": 8.854e-12}}
        ]));
        let passes = calls(json!([
            {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4, "medium_permittivity": 8.854e-12}},
            {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4}}
        ]));
        assert_eq!(
            err(&check(Category::Parallel, &f, &gt, &fails, &STRICT)),
            Some(CANNOT_FIND_MATCH)
        );
        assert!(check(Category::Parallel, &f, &gt, &passes, &STRICT).valid);
        assert!(check(Category::Parallel, &f, &gt, &fails, &DEFAULT).valid);
        assert!(check(Category::Parallel, &f, &gt, &passes, &DEFAULT).valid);
    }

    fn triangle() -> (Vec<Function>, Vec<ExpectedCall>) {
        let f = funcs(
            json!([{"name": "geo.calculate_triangle_area", "description": "", "parameters": {"type": "dict", "properties": {
            "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}},
            "required": ["base", "height"]}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([
            {"geo.calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}
        ]))
        .unwrap();
        (f, gt)
    }

    #[test]
    fn simple_checks_and_precedence() {
        let (f, gt) = triangle();
        let run =
            |v: serde_json::Value, o: &Options| check(Category::Simple, &f, &gt, &calls(v), o);
        assert!(
            run(
                json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5}}]),
                &STRICT
            )
            .valid
        );
        assert!(run(json!([{"geo.calculate_triangle_area": {"height": 5, "base": 10, "unit": "U-nits"}}]), &STRICT).valid);
        let us = Options {
            strict: true,
            underscore_names: true,
        };
        assert!(
            run(
                json!([{"geo_calculate_triangle_area": {"base": 10, "height": 5}}]),
                &us
            )
            .valid
        );
        let cases = [
            (
                json!([{"geo_calculate_triangle_area": {"base": 10, "height": 5}}]),
                "simple_function_checker:wrong_func_name",
            ),
            (
                json!([{"geo.calculate_triangle_area": {"base": 10}}]),
                "simple_function_checker:missing_required",
            ),
            (
                json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5, "x": 1}}]),
                "simple_function_checker:unexpected_param",
            ),
            // The first bad parameter in the model's order decides.
            (
                json!([{"geo.calculate_triangle_area": {"height": 5.0, "base": 11}}]),
                "type_error:simple",
            ),
            (
                json!([{"geo.calculate_triangle_area": {"base": 11, "height": 5.0}}]),
                "value_error:others",
            ),
            (
                json!([{"geo.calculate_triangle_area": {"base": true, "height": 5}}]),
                "type_error:simple",
            ),
            (
                json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5, "unit": "cm"}}]),
                "value_error:string",
            ),
            (json!([]), "simple_function_checker:wrong_count"),
        ];
        for (v, want) in cases {
            assert_eq!(err(&run(v.clone(), &STRICT)), Some(want), "{v}");
        }
        let fmt = Decoded::Calls(vec![("f".into(), PyValue::List(vec![]))]);
        assert_eq!(
            err(&check(Category::Simple, &f, &gt, &fmt, &STRICT)),
            Some("ast_decoder:decoder_wrong_output_format")
        );
        let failed = Decoded::Failed {
            reason: "text".into(),
            attempt: false,
        };
        assert_eq!(
            err(&check(Category::Simple, &f, &gt, &failed, &STRICT)),
            Some("ast_decoder:decoder_failed")
        );
    }

    #[test]
    fn missing_optional_and_variables() {
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
            "a": {"type": "integer"}, "b": {"type": "float"}, "c": {"type": "string"}}, "required": []}}]),
        );
        let gt = ground_truth_from_bfcl(
            &json!([{"f": {"a": ["", "dontcare"], "b": [2.0], "c": [null, ""]}}]),
        )
        .unwrap();
        let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
        assert_eq!(
            err(&run(json!([{"f": {}}]))),
            Some("simple_function_checker:missing_optional")
        );
        assert!(
            run(json!([{"f": {"b": 2}}])).valid,
            "int accepted for float"
        );
        assert!(
            run(json!([{"f": {"b": 2, "a": "dontcare"}}])).valid,
            "variable of the option type"
        );
        assert_eq!(
            err(&run(json!([{"f": {"b": 2, "a": "DontCare"}}]))),
            Some("value_error:others")
        );
        assert!(
            run(json!([{"f": {"b": 2, "c": null}}])).valid,
            "None accepted via options"
        );
        assert_eq!(
            err(&run(json!([{"f": {"b": 2, "c": "x"}}]))),
            Some("value_error:others")
        );
    }

    #[test]
    fn nested_types_and_lists() {
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
            "xs": {"type": "array", "items": {"type": "float"}},
            "ys": {"type": "array", "items": {"type": "string"}},
            "zs": {"type": "array", "items": {"type": "integer"}}}, "required": []}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([{"f": {
            "xs": [[1.0, 2.5]], "ys": [["New York", "LA"], ""], "zs": [[1, 2], ""]}}]))
        .unwrap();
        let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
        assert!(run(json!([{"f": {"xs": [1.0, 2.5]}}])).valid);
        assert_eq!(
            err(&run(json!([{"f": {"xs": [1, 2.5]}}]))),
            Some("type_error:nested")
        );
        assert!(run(json!([{"f": {"xs": [1.0, 2.5], "ys": ["new-york", "l.a."]}}])).valid);
        assert_eq!(
            err(&run(
                json!([{"f": {"xs": [1.0, 2.5], "ys": ["LA", "New York"]}}])
            )),
            Some("value_error:list/tuple")
        );
        assert!(
            run(json!([{"f": {"xs": [1.0, 2.5], "ys": []}}])).valid,
            "[] matches the \"\" option"
        );
        assert!(
            run(json!([{"f": {"xs": [1.0, 2.5], "zs": [1.0, 2]}}])).valid,
            "\"\" option skips the nested type check"
        );
        assert_eq!(
            err(&run(json!([{"f": {"xs": "1,2"}}]))),
            Some("type_error:simple")
        );
    }

    #[test]
    fn empty_option_list_reports_simple_type_error() {
        // live_simple_106-63-0 ships `[]` option lists; BFCL then says type_error:simple.
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
            "xs": {"type": "array", "items": {"type": "string"}}}, "required": ["xs"]}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([{"f": {"xs": []}}])).unwrap();
        let v = check(
            Category::Simple,
            &f,
            &gt,
            &calls(json!([{"f": {"xs": []}}])),
            &STRICT,
        );
        assert_eq!(err(&v), Some("type_error:simple"));
    }

    #[test]
    fn dicts_and_lists_of_dicts() {
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
            "d": {"type": "dict", "properties": {}},
            "ld": {"type": "array", "items": {"type": "dict"}}}, "required": []}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([{"f": {
            "d": [{"city": ["New York", "NYC"], "zip": ["", "10001"]}, ""],
            "ld": [[{"k": ["A"]}, {"k": ["B"], "n": [1, ""]}], ""]}}]))
        .unwrap();
        let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
        assert!(run(json!([{"f": {"d": {"city": "new york"}}}])).valid);
        assert_eq!(
            err(&run(json!([{"f": {"d": {"town": "NYC"}}}]))),
            Some("value_error:dict_key")
        );
        assert_eq!(
            err(&run(json!([{"f": {"d": {"city": "Boston"}}}]))),
            Some("value_error:dict_value")
        );
        assert_eq!(
            err(&run(json!([{"f": {"d": {}}}]))),
            Some("value_error:dict_key")
        );
        assert!(run(json!([{"f": {"ld": [{"k": "a"}, {"k": "b", "n": 1}]}}])).valid);
        assert!(run(json!([{"f": {"ld": []}}])).valid);
        // The last option ("") decides the error type.
        assert_eq!(
            err(&run(json!([{"f": {"ld": [{"k": "b"}, {"k": "a"}]}}]))),
            Some("value_error:list_dict_count")
        );
        assert_eq!(
            err(&run(json!([{"f": {"ld": [{"k": "a"}]}}]))),
            Some("value_error:list_dict_count")
        );
        assert_eq!(
            err(&run(json!([{"f": {"ld": ["a", "b"]}}]))),
            Some(CRASH_NON_DICT)
        );
    }

    #[test]
    fn relevance_and_irrelevance() {
        let none: [Function; 0] = [];
        let attempt = Decoded::Failed {
            reason: "bad json".into(),
            attempt: true,
        };
        let text = Decoded::Failed {
            reason: "text".into(),
            attempt: false,
        };
        let call = calls(json!([{"anything": {}}]));
        let empty = calls(json!([]));
        let irr = |d: &Decoded, o: &Options| check(Category::Irrelevance, &none, &[], d, o);
        let rel = |d: &Decoded, o: &Options| check(Category::Relevance, &none, &[], d, o);
        for o in [&STRICT, &DEFAULT] {
            assert!(irr(&text, o).valid);
            assert!(irr(&empty, o).valid);
            assert_eq!(
                err(&irr(&call, o)),
                Some("irrelevance_error:decoder_success")
            );
            assert!(rel(&call, o).valid);
            assert_eq!(
                err(&rel(&attempt, o)),
                Some("relevance_error:decoder_failed")
            );
            assert_eq!(err(&rel(&empty, o)), Some("relevance_error:decoder_failed"));
        }
        assert!(irr(&attempt, &STRICT).valid);
        assert_eq!(
            err(&irr(&attempt, &DEFAULT)),
            Some("irrelevance_error:malformed_call")
        );
    }

    #[test]
    fn multiple_uses_the_answers_function() {
        let f = funcs(json!([
            {"name": "a", "description": "", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
            {"name": "b", "description": "", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
        ]));
        let gt = ground_truth_from_bfcl(&json!([{"b": {"x": [1]}}])).unwrap();
        let run = |v: serde_json::Value| check(Category::Multiple, &f, &gt, &calls(v), &STRICT);
        assert!(run(json!([{"b": {"x": 1}}])).valid);
        assert_eq!(
            err(&run(json!([{"a": {"x": 1}}]))),
            Some("simple_function_checker:wrong_func_name")
        );
        assert_eq!(
            err(&run(json!([{"b": {"x": 1}}, {"b": {"x": 1}}]))),
            Some("multiple_function_checker:wrong_count")
        );
        let missing = ground_truth_from_bfcl(&json!([{"c": {"x": [1]}}])).unwrap();
        let v = check(
            Category::Multiple,
            &f,
            &missing,
            &calls(json!([{"c": {"x": 1}}])),
            &STRICT,
        );
        assert_eq!(err(&v), Some(CRASH_NO_FUNCTION));
    }

    #[test]
    fn standardize_matches_python() {
        // Expected values printed by bfcl_eval's standardize_string under Python 3.11.7.
        let cases = [
            ("New York, NY", "newyorkny"),
            ("ΟΔΟΣ", "οδος"),
            ("ΟΔΟΣ.Α", "οδοσα"),
            ("Σ", "σ"),
            ("AΣ'B", "aσ\"b"),
            ("ÉCOLE İstanbul", "écolei\u{307}stanbul"),
            ("it's", "it\"s"),
            ("a\tB\n", "a\tb\n"),
            ("ß ẞ", "ßß"),
            ("ǅ", "ǆ"),
            ("Ⅻ", "ⅻ"),
            ("\u{A7CB}\u{A7CC}", "\u{A7CB}\u{A7CC}"),
            ("ΑΣ\u{301}", "ας\u{301}"),
            ("ΑΣ\u{301}Β", "ασ\u{301}β"),
            ("x\u{1C89}Σ", "x\u{1C89}σ"),
            ("AΣ\u{1C89}", "aς\u{1C89}"),
        ];
        for (input, want) in cases {
            assert_eq!(standardize(input), want, "{input:?}");
        }
    }

    #[test]
    fn ints_beyond_i128_become_the_nearest_float() {
        // Python: float(2**130 + 1) == float(2**130 + 2**77) == 2.0**130 (a tie goes to
        // the even neighbour), float(2**130 + 2**77 + 1) == 1.3611294676837542e39.
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict",
            "properties": {"x": {"type": "float"}}, "required": ["x"]}}]),
        );
        let gt = ground_truth_from_bfcl(&json!([{"f": {"x": [1.361129467683754e39]}}])).unwrap();
        let call = |repr: &str| {
            Decoded::Calls(vec![(
                "f".into(),
                PyValue::Dict(vec![(
                    PyValue::Str("x".into()),
                    PyValue::Other {
                        type_name: "int".into(),
                        repr: repr.into(),
                    },
                )]),
            )])
        };
        let run = |repr: &str| check(Category::Simple, &f, &gt, &call(repr), &STRICT);
        assert_eq!(err(&run("1361129467683753853853498429727072845825")), None);
        assert_eq!(err(&run("1361129467683754004969225881555719684096")), None);
        assert_eq!(
            err(&run("1361129467683754004969225881555719684097")),
            Some("value_error:others")
        );
        assert_eq!(
            err(&run(&format!("-1{}", "0".repeat(308)))),
            Some("value_error:others")
        );
        assert_eq!(
            err(&run(&format!("-1{}", "0".repeat(309)))),
            Some(CRASH_INT)
        );
    }

    #[test]
    fn malformed_inputs_do_not_panic() {
        let f = funcs(
            json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
            "u": {"type": "number"}, "a": {"type": "array"}, "d": {"type": "dict"}, "x": {"type": "float"}}, "required": []}}]),
        );
        let gt = ground_truth_from_bfcl(
            &json!([{"f": {"u": [1], "a": [[1]], "d": ["junk"], "x": [1.0]}}]),
        )
        .unwrap();
        let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
        assert_eq!(err(&run(json!([{"f": {"u": 1}}]))), Some(CRASH_SCHEMA));
        assert_eq!(err(&run(json!([{"f": {"a": [1]}}]))), Some(CRASH_SCHEMA));
        // "junk" as first option makes the dict a variable: plain `in`, no crash.
        assert_eq!(
            err(&run(json!([{"f": {"d": {}}}]))),
            Some("value_error:others")
        );
        let big = Decoded::Calls(vec![(
            "f".into(),
            PyValue::Dict(vec![(
                PyValue::Str("x".into()),
                PyValue::Other {
                    type_name: "int".into(),
                    repr: format!("1{}", "0".repeat(400)),
                },
            )]),
        )]);
        assert_eq!(
            err(&check(Category::Simple, &f, &gt, &big, &STRICT)),
            Some(CRASH_INT)
        );
        assert_eq!(
            err(&check(
                Category::Simple,
                &[],
                &gt,
                &calls(json!([{"f": {}}])),
                &STRICT
            )),
            Some(CRASH_NO_FUNCTION)
        );
        assert_eq!(
            err(&check(
                Category::Simple,
                &f,
                &[],
                &calls(json!([{"f": {}}])),
                &STRICT
            )),
            Some(CRASH_NO_GT)
        );
        assert!(Function::from_bfcl(&json!({"name": "f"})).is_err());
        assert!(
            Function::from_bfcl(&json!({"name": "f", "parameters": {"required": "x"}})).is_err()
        );
        let bare =
            Function::from_bfcl(&json!({"name": "f", "parameters": {"type": "dict"}})).unwrap();
        assert!(bare.properties.is_empty() && bare.required.is_empty());
        assert!(ground_truth_from_bfcl(&json!([{"f": {"a": 1}}])).is_err());
        assert!(ground_truth_from_bfcl(&json!([{"f": {}, "g": {}}])).is_err());
    }
}
