//! Examples of invalid calls and of ungrounded arguments, each with its trial, and how
//! many there are in all.

use serde::Serialize;

use super::truncate;
use crate::judge::calls::InvalidReason;
use crate::report::RunReport;

/// Examples of invalid calls and of ungrounded arguments listed, each.
const MAX_EXAMPLES: usize = 200;
/// Characters of raw arguments shown in an invalid-call example.
const ARGS_CHARS: usize = 240;

/// A call that was invalid (bad JSON, unknown tool, schema violation), with its trial.
#[derive(Serialize)]
pub(super) struct InvalidExample {
    i: usize,
    case: String,
    cell: String,
    repeat: u32,
    tool: String,
    reason: &'static str,
    detail: String,
    arguments: String,
}

/// A call with argument values found nowhere in the conversation, with its trial.
#[derive(Serialize)]
pub(super) struct UngroundedExample {
    i: usize,
    case: String,
    cell: String,
    repeat: u32,
    tool: String,
    values: Vec<String>,
}

/// The first [`MAX_EXAMPLES`] of each kind, and the totals.
pub(super) struct Examples {
    pub(super) invalid: Vec<InvalidExample>,
    pub(super) invalid_total: usize,
    pub(super) ungrounded: Vec<UngroundedExample>,
    pub(super) ungrounded_total: usize,
}

impl Examples {
    /// The examples of `report`'s trials, trial `i` in the cell labelled
    /// `cell_labels[cell_index[i]]`.
    pub(super) fn collect(
        report: &RunReport,
        cell_labels: &[String],
        cell_index: &[usize],
    ) -> Examples {
        let mut invalid_examples = Vec::new();
        let mut invalid_total = 0;
        let mut ungrounded_examples = Vec::new();
        let mut ungrounded_total = 0;
        for (i, t) in report.trials.iter().enumerate() {
            let Some(checks) = &t.checks else { continue };
            let label = &cell_labels[cell_index[i]];
            for (j, call) in checks.calls.iter().enumerate() {
                if let Some(reason) = call.invalid {
                    invalid_total += 1;
                    if invalid_examples.len() < MAX_EXAMPLES {
                        let raw = t
                            .response
                            .as_ref()
                            .and_then(|r| r.tool_calls.get(j))
                            .map_or("", |c| c.arguments.as_str());
                        invalid_examples.push(InvalidExample {
                            i,
                            case: t.case_id.clone(),
                            cell: label.clone(),
                            repeat: t.repeat,
                            tool: call.tool.clone(),
                            reason: invalid_str(reason),
                            detail: truncate(&call.schema_errors.join("; "), ARGS_CHARS),
                            arguments: truncate(raw, ARGS_CHARS),
                        });
                    }
                }
                if !call.ungrounded.is_empty() {
                    ungrounded_total += 1;
                    if ungrounded_examples.len() < MAX_EXAMPLES {
                        ungrounded_examples.push(UngroundedExample {
                            i,
                            case: t.case_id.clone(),
                            cell: label.clone(),
                            repeat: t.repeat,
                            tool: call.tool.clone(),
                            values: call.ungrounded.clone(),
                        });
                    }
                }
            }
        }
        Examples {
            invalid: invalid_examples,
            invalid_total,
            ungrounded: ungrounded_examples,
            ungrounded_total,
        }
    }
}

/// An invalid call's reason as the page names it.
fn invalid_str(r: InvalidReason) -> &'static str {
    match r {
        InvalidReason::InvalidJson => "invalid_json",
        InvalidReason::UnknownTool => "unknown_tool",
        InvalidReason::SchemaViolation => "schema_violation",
    }
}
