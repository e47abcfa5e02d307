//! The `bfcl` scoring profile: a case's verdict is BFCL's AST checker's verdict on the
//! response. The suite declares it (`profile: {bfcl: {category: ...}}`); the case's tools
//! and expectation are read back into BFCL's function declarations and possible answer
//! (see [`super::import`]), and the response is decoded as BFCL decodes a result.
//!
//! toolgauge's own checks (valid JSON, known tool, schema, grounding) are still made and
//! feed the metrics; only the verdict and its reason come from the checker. The reason's
//! code is BFCL's error type (e.g. `value_error:string`), so failures can be put side by
//! side with BFCL's score files.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::checker::{self, Category, ExpectedCall, Function, Options};
use super::decode;
use super::import::{options_of, to_bfcl_schema};
use super::result::{RAW_KEY, STYLE_KEY};
use super::value::{Decoded, PyValue};
use crate::provider::Response;
use crate::score::Reason;
use crate::suite::{BfclProfile, Case, Expectation, Suite, Tool};

/// What scoring one case under the profile needs, prepared once per case.
pub struct BfclCase {
    category: Category,
    functions: Vec<Function>,
    ground_truth: Vec<ExpectedCall>,
    options: Options,
    /// Set when the case could not be read back (its verdict is then a failure that
    /// says why, rather than a guess).
    problem: Option<String>,
}

/// BFCL function declarations read back from a suite's tools, once per distinct tool:
/// cases that declare the same tool share it (see `suite::model::CaseTools`), and BFCL's
/// live categories offer the same functions in hundreds of items.
#[derive(Default)]
pub struct Functions(HashMap<*const Tool, Result<Function, String>>);

impl Functions {
    /// `tool` as BFCL's checker declares it, or why it can not be.
    fn of(&mut self, tool: &Arc<Tool>) -> Result<Function, String> {
        self.0
            .entry(Arc::as_ptr(tool))
            .or_insert_with(|| {
                let decl = json!({
                    "name": tool.name,
                    "description": tool.description("default").unwrap_or_default(),
                    "parameters": to_bfcl_schema(&tool.parameters),
                });
                Function::from_bfcl(&decl).map_err(|e| format!("tool `{}`: {e}", tool.name))
            })
            .clone()
    }
}

impl BfclCase {
    /// Prepare `case` of `suite` under profile `p`; `functions` carries the declarations
    /// read for earlier cases of the same suite.
    pub fn new(suite: &Suite, case: &Case, p: &BfclProfile, functions: &mut Functions) -> BfclCase {
        let mut problem = None;
        let functions = case
            .tools(suite)
            .iter()
            .filter_map(|t| functions.of(t).map_err(|e| problem = Some(e)).ok())
            .collect();
        let mut ground_truth = Vec::new();
        if let Expectation::Calls(e) = &case.expect {
            for call in &e.calls {
                let mut params = Vec::with_capacity(call.raw_args.len());
                for (name, m) in &call.raw_args {
                    match options_of(m) {
                        Ok(opts) => params
                            .push((name.clone(), opts.iter().map(PyValue::from_json).collect())),
                        Err(e) => problem = Some(format!("`{}.{name}`: {e}", call.tool)),
                    }
                }
                ground_truth.push(ExpectedCall {
                    function: call.tool.clone(),
                    params,
                });
            }
        }
        BfclCase {
            category: Category::from_name(&p.category),
            functions,
            ground_truth,
            options: Options {
                strict: p.strict,
                underscore_names: p.underscore_names,
            },
            problem,
        }
    }

    /// The reasons `response` fails (none when BFCL's checker accepts it).
    pub fn reasons(&self, response: &Response) -> Vec<Reason> {
        if let Some(p) = &self.problem {
            return vec![Reason::new(
                "bfcl_profile",
                format!("the case can not be scored by the bfcl profile: {p}"),
            )];
        }
        let decoded = decode_response(response, self.options.strict);
        let v = checker::check(
            self.category,
            &self.functions,
            &self.ground_truth,
            &decoded,
            &self.options,
        );
        if v.valid {
            return Vec::new();
        }
        let code = v.error_type.unwrap_or_else(|| "bfcl_invalid".to_string());
        let message = if v.messages.is_empty() {
            code.clone()
        } else {
            v.messages.join("; ")
        };
        vec![Reason::new(&code, message)]
    }
}

/// A response as BFCL's decoding step sees it: the original BFCL `result` when the
/// response replays one, else the tool calls (a function-calling answer: arguments
/// parsed as Python's `json.loads` does), else the text (a prompt-mode answer).
pub fn decode_response(response: &Response, strict: bool) -> Decoded {
    if let Some(raw) = &response.raw
        && let Some(result) = raw.get(RAW_KEY)
    {
        let prompt = raw.get(STYLE_KEY).and_then(Value::as_str) == Some("prompt");
        return match result {
            Value::String(text) if prompt => decode::decode_prompt(text, strict),
            other => decode::decode_fc(other),
        };
    }
    if !response.tool_calls.is_empty() {
        let mut calls = Vec::with_capacity(response.tool_calls.len());
        for c in &response.tool_calls {
            match decode::python_json_loads(&c.arguments) {
                Ok(args) => calls.push((c.name.clone(), args)),
                Err(e) => {
                    return Decoded::Failed {
                        reason: format!("arguments of `{}` are not JSON: {e}", c.name),
                        attempt: true,
                    };
                }
            }
        }
        return Decoded::Calls(calls);
    }
    match response.text.as_deref() {
        Some(text) if !text.trim().is_empty() => decode::decode_prompt(text, strict),
        _ => Decoded::Calls(Vec::new()),
    }
}
