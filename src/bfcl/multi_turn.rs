//! BFCL's multi-turn checker (`multi_turn_checker`, docs/bfcl-multi-turn.md §4): the
//! model's calls and the ground truth's run on two sets of backend instances built from
//! the same initial configuration, turn by turn, and after every turn whose ground truth
//! has calls the two must agree on every public attribute (state check), and every
//! result the ground truth's calls produced must be among the model's results so far
//! (response check).
//!
//! Calls are call strings (`cd(folder='docs')`), as BFCL's executor runs them; each is
//! sent to the involved instance that has a method of its name.

use serde::Serialize;

use super::decode::CallText;
use super::value::PyValue;
use super::worlds::{PyException, World, execute, result_line, world};

/// BFCL's verdict on one item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Whether the item passed.
    pub valid: bool,
    /// BFCL's error type (`multi_turn:instance_state_mismatch`, …) when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// BFCL's error message when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The first turn (0-based) that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// For a state mismatch: each differing attribute as `Class.attr`, with both
    /// values as Python reprs (model, ground truth). For a response mismatch: the
    /// ground truth's results the model's lack.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl Verdict {
    fn pass() -> Verdict {
        Verdict {
            valid: true,
            error_type: None,
            message: None,
            turn: None,
            details: Vec::new(),
        }
    }

    /// A failed verdict of `error_type` with BFCL's `message`.
    pub fn fail(error_type: &str, message: String, turn: Option<usize>) -> Verdict {
        Verdict {
            valid: false,
            error_type: Some(error_type.to_string()),
            message: Some(message),
            turn,
            details: Vec::new(),
        }
    }
}

/// Why an item cannot be checked at all (not a verdict on the model).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetupError {
    /// An involved class has no port.
    #[error("class `{0}` is not one of BFCL's multi-turn backends")]
    UnknownClass(String),
    /// A backend refused the initial configuration.
    #[error("class `{class}` could not load the initial configuration: {message}")]
    Load {
        /// The class.
        class: String,
        /// Its error.
        message: String,
    },
}

/// Fresh instances of `classes`, each loaded with `config`.
pub fn instances(
    classes: &[String],
    config: &serde_json::Value,
    long_context: bool,
) -> Result<Vec<Box<dyn World>>, SetupError> {
    classes
        .iter()
        .map(|c| {
            let mut w = world(c).ok_or_else(|| SetupError::UnknownClass(c.clone()))?;
            // Only a class's own part of the configuration is its scenario.
            let own = config
                .get(c)
                .cloned()
                .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
            w.load(&own, long_context).map_err(|e| SetupError::Load {
                class: c.clone(),
                message: e.to_string(),
            })?;
            Ok(w)
        })
        .collect()
}

/// One call of the model's, read: the method and its arguments, or why it could not be
/// read (its result line is then an error, as Python's `eval` of it would be).
pub type ModelCall = Result<CallText, String>;

/// Run one call string on the instance whose class has its method; BFCL's result line.
pub fn run_call(worlds: &mut [Box<dyn World>], call: &str) -> String {
    run_model_call(worlds, &read_call(call))
}

/// Read a call string into a [`ModelCall`].
pub fn read_call(call: &str) -> ModelCall {
    super::decode::parse_call_text(call)
}

/// Run one read call on the instance whose class has its method; BFCL's result line.
pub fn run_model_call(worlds: &mut [Box<dyn World>], call: &ModelCall) -> String {
    match call {
        Ok(c) => run_method(worlds, &c.name, &c.args, &c.kwargs),
        Err(why) => format!("Error during execution: {why}"),
    }
}

/// Run `name(*args, **kwargs)` on the instance whose class has the method (the first
/// that does not answer with `NameError` for it); BFCL's result line.
pub fn run_method(
    worlds: &mut [Box<dyn World>],
    name: &str,
    args: &[PyValue],
    kwargs: &[(String, PyValue)],
) -> String {
    let unknown = format!("name '{name}' is not defined");
    let mut last: Option<Result<PyValue, PyException>> = None;
    for w in worlds.iter_mut() {
        let r = execute(w.as_mut(), name, args.to_vec(), kwargs.to_vec());
        match &r {
            Err(e) if e.type_name == "NameError" && e.message == unknown => last = Some(r),
            _ => return result_line(r),
        }
    }
    result_line(last.unwrap_or_else(|| Err(PyException::new("NameError", unknown))))
}

/// Check one item: `model` holds, per turn, the calls of each step (steps without
/// calls are dropped, as BFCL drops steps that decode to nothing); `truth` the ground
/// truth's calls per turn.
pub fn check(
    classes: &[String],
    config: &serde_json::Value,
    long_context: bool,
    model: &[Vec<Vec<String>>],
    truth: &[Vec<String>],
) -> Result<Verdict, SetupError> {
    let model: Vec<Vec<Vec<ModelCall>>> = model
        .iter()
        .map(|t| {
            t.iter()
                .map(|s| s.iter().map(|c| read_call(c)).collect())
                .collect()
        })
        .collect();
    check_calls(classes, config, long_context, &model, truth)
}

/// [`check`] with the model's calls already read (from call strings, or from a
/// function-calling model's JSON arguments).
pub fn check_calls(
    classes: &[String],
    config: &serde_json::Value,
    long_context: bool,
    model: &[Vec<Vec<ModelCall>>],
    truth: &[Vec<String>],
) -> Result<Verdict, SetupError> {
    // BFCL's runner reports a turn-count mismatch before any instance is built.
    if model.len() != truth.len() {
        return Ok(check_loaded(&[], model, truth));
    }
    let loaded = instances(classes, config, long_context)?;
    Ok(check_loaded(&loaded, model, truth))
}

/// [`check_calls`] on copies of `loaded`, the instances as loaded from the item's
/// configuration (made once, copied for each side).
pub fn check_loaded(
    loaded: &[Box<dyn World>],
    model: &[Vec<Vec<ModelCall>>],
    truth: &[Vec<String>],
) -> Verdict {
    if model.len() != truth.len() {
        return Verdict::fail(
            "multi_turn:force_terminated",
            format!(
                "Model was force-terminated during inference phase. The length of the model result turns ({}) does not match the length of the ground truth turns ({}).",
                model.len(),
                truth.len()
            ),
            None,
        );
    }
    let copy = || -> Vec<Box<dyn World>> { loaded.iter().map(|w| w.clone_box()).collect() };
    let mut mine = copy();
    let mut theirs = copy();
    let mut model_results: Vec<String> = Vec::new();
    for (i, (steps, gt)) in model.iter().zip(truth).enumerate() {
        let steps: Vec<&Vec<ModelCall>> = steps.iter().filter(|s| !s.is_empty()).collect();
        for step in &steps {
            for call in step.iter() {
                model_results.push(run_model_call(&mut mine, call));
            }
        }
        let gt_results: Vec<String> = gt.iter().map(|c| run_call(&mut theirs, c)).collect();
        if gt.is_empty() {
            continue;
        }
        if steps.is_empty() {
            return Verdict::fail(
                "multi_turn:empty_turn_model_response",
                format!("Model response list is empty for turn {i}"),
                Some(i),
            );
        }
        for (m, t) in mine.iter().zip(&theirs) {
            let diffs = state_diffs(m.as_ref(), t.as_ref());
            if !diffs.is_empty() {
                let mut v = Verdict::fail(
                    "multi_turn:instance_state_mismatch",
                    format!(
                        "Model instance for {} does not match the state with ground truth instance.",
                        t.class()
                    ),
                    Some(i),
                );
                v.details = diffs;
                return v;
            }
        }
        let missing = missing_results(&model_results, &gt_results);
        if !missing.is_empty() {
            let mut v = Verdict::fail(
                "multi_turn:execution_response_mismatch",
                format!(
                    "Model response execution results so far does not contain all the ground truth response execution results for turn {i}."
                ),
                Some(i),
            );
            v.details = missing;
            return v;
        }
    }
    Verdict::pass()
}

/// The public attributes of `truth` that `model` does not equal (Python `==`).
fn state_diffs(model: &dyn World, truth: &dyn World) -> Vec<String> {
    let mine = model.state();
    let repr = super::pyfmt::py_repr;
    truth
        .state()
        .iter()
        .filter_map(|(k, t)| {
            let m = mine.iter().find(|(n, _)| n == k).map(|(_, v)| v);
            match m {
                Some(m) if m.py_eq(t) => None,
                Some(m) => Some(format!(
                    "{}.{k}: model {}, ground truth {}",
                    truth.class(),
                    repr(m),
                    repr(t)
                )),
                None => Some(format!("{}.{k}: missing from the model's", truth.class())),
            }
        })
        .collect()
}

/// The ground truth's results not found among the model's, as a multiset: each model
/// result stands for one ground-truth result.
fn missing_results(model: &[String], truth: &[String]) -> Vec<String> {
    let mut pool: Vec<&str> = model.iter().map(String::as_str).collect();
    let mut missing = Vec::new();
    for t in truth {
        match pool.iter().position(|m| m == t) {
            Some(i) => {
                pool.swap_remove(i);
            }
            None => missing.push(t.clone()),
        }
    }
    missing
}

#[cfg(test)]
mod fixture_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turns(calls: &[&[&str]]) -> Vec<Vec<String>> {
        calls
            .iter()
            .map(|t| t.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    fn one_step(calls: &[&[&str]]) -> Vec<Vec<Vec<String>>> {
        turns(calls).into_iter().map(|t| vec![t]).collect()
    }

    #[test]
    fn the_ground_truth_passes_and_each_failure_is_named() {
        let classes = vec!["MathAPI".to_string()];
        let cfg = json!({});
        let truth = turns(&[&["add(a=1,b=2)"], &[]]);
        let ok = check(
            &classes,
            &cfg,
            false,
            &one_step(&[&["add(a=1,b=2)"], &[]]),
            &truth,
        )
        .unwrap();
        assert!(ok.valid, "{ok:?}");
        // The same result among the model's is enough, in any turn so far.
        let wrong = check(
            &classes,
            &cfg,
            false,
            &one_step(&[&["add(a=2,b=2)"], &[]]),
            &truth,
        )
        .unwrap();
        assert_eq!(
            wrong.error_type.as_deref(),
            Some("multi_turn:execution_response_mismatch")
        );
        assert_eq!(wrong.details, [r#"{"result": 3}"#]);
        let empty = check(&classes, &cfg, false, &[vec![], vec![]], &truth).unwrap();
        assert_eq!(
            empty.message.as_deref(),
            Some("Model response list is empty for turn 0")
        );
        let short = check(
            &classes,
            &cfg,
            false,
            &one_step(&[&["add(a=1,b=2)"]]),
            &truth,
        )
        .unwrap();
        assert_eq!(
            short.error_type.as_deref(),
            Some("multi_turn:force_terminated")
        );
        assert!(
            short
                .message
                .unwrap()
                .contains("turns (1) does not match the length of the ground truth turns (2)")
        );
        assert!(matches!(
            check(&["Nope".to_string()], &cfg, false, &[], &[]),
            Err(SetupError::UnknownClass(c)) if c == "Nope"
        ));
    }

    #[test]
    fn calls_go_to_the_instance_with_the_method() {
        let classes = vec!["MathAPI".to_string(), "TicketAPI".to_string()];
        let mut ws = instances(&classes, &json!({}), false).unwrap();
        assert_eq!(run_call(&mut ws, "add(a=1,b=2)"), r#"{"result": 3}"#);
        assert_eq!(
            run_call(&mut ws, "fly(to='moon')"),
            "Error during execution: name 'fly' is not defined"
        );
        assert_eq!(
            run_call(&mut ws, "kill(pid=1)"),
            "Error during execution: Function call kill is not allowed."
        );
    }
}
