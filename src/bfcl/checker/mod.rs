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
//! # Layout
//!
//! [`check`] dispatches on the category (this file); `schema` parses the item, `call`
//! checks one model call against one expected call, `values` holds BFCL's value checkers
//! and `standardize` its string normalisation, `parallel` pairs the calls of parallel
//! items, and `fault` says how a check fails.

mod call;
mod fault;
mod parallel;
mod schema;
mod standardize;
mod values;

use serde::Serialize;

use self::call::check_call;
use self::fault::{CRASH_NO_FUNCTION, CRASH_NO_GT, Fault, Step, crash, mismatch};
use self::parallel::check_parallel;
pub use self::schema::{Function, GroundTruthCall, ground_truth_from_bfcl};
use super::value::{Decoded, PyValue};

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
    ground_truth: &[GroundTruthCall],
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

/// The AST categories: the decoded calls in the right shape, then the category's check.
fn check_ast(
    category: Category,
    functions: &[Function],
    ground_truth: &[GroundTruthCall],
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

/// A mismatch for a wrong number of calls.
fn wrong_count(error_type: &'static str, got: usize, expected: usize) -> Fault {
    mismatch(
        error_type,
        format!("Wrong number of functions: {got} call(s), expected {expected}."),
    )
}

/// BFCL's simple checker: exactly one call, against the item's first function.
fn check_simple(
    functions: &[Function],
    ground_truth: &[GroundTruthCall],
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

/// BFCL's multiple checker: as many calls as expected, the first checked against the
/// function the answer names.
fn check_multiple(
    functions: &[Function],
    ground_truth: &[GroundTruthCall],
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

/// The crash of an answer naming a function the item does not declare.
fn missing_function(name: &str) -> Fault {
    crash(
        CRASH_NO_FUNCTION,
        format!("the answer's function {name:?} is not in the function list"),
    )
}

#[cfg(test)]
mod tests;
