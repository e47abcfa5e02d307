//! Parallel items: pairing the model's calls with the expected calls in any order, BFCL's
//! greedy way and, outside strict mode, by a perfect matching when the greedy pass fails.

use super::call::check_call;
use super::fault::{CANNOT_FIND_MATCH, Failure, Fault, Step};
use super::schema::{Function, GroundTruthCall};
use super::{Call, Options, find_function, missing_function, wrong_count};
use crate::util::assign;

/// BFCL's parallel checker: as many calls as expected, paired in any order (see
/// "Parallel pairing" in the module documentation of `checker`).
pub(super) fn check_parallel(
    functions: &[Function],
    ground_truth: &[GroundTruthCall],
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
    ground_truth: &[GroundTruthCall],
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
    ground_truth: &[GroundTruthCall],
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
