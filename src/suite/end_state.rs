//! `expect.end_state`: the world an episode must leave behind, checked after it ends.
//!
//! For a suite whose loop calls run on an MCP server (`tools_from.mcp`), each entry is a
//! call made on the episode's own session once the episode is over (the model sees none
//! of them), with the result it must return, written with the usual matchers:
//!
//! ```yaml
//! end_state:
//!   - {call: get_balance, args: {account: ACC-2}, result: {balance: 220}}
//! ```
//!
//! The result a server returns is read as JSON when it is JSON (structured content, or
//! text that parses), else as its text; a mismatch names the path and both values
//! (`end_state_mismatch`). With `tools_from.isolation: trial` each episode has a fresh
//! server, so a small MCP server is a stateful world of the suite's own. A case with a
//! built-in `world` can also check the world's state itself: `{state: {...}}`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::matcher::{CompileContext, Matcher};
use super::model::ExtraArgs;
use super::normalize::Normalizer;
use super::span::Spanned;

/// Most `end_state` entries of one case.
pub const MAX_END_STATE: usize = 50;

/// One `expect.end_state` entry as written: a call and the result it must return, or
/// (for a case with a built-in `world`) the state the world must be in.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndStateSpec {
    /// The tool to call on the episode's session once it has ended.
    #[serde(default)]
    pub call: Option<Spanned<String>>,
    /// Its arguments (default none).
    #[serde(default)]
    pub args: Map<String, Value>,
    /// What it must return: a value, or matchers (`{balance: {range: {min: 200}}}`); fields of
    /// an object the result has beyond those listed are allowed.
    #[serde(default)]
    pub result: Option<Value>,
    /// Instead of a call: what the case's built-in world's state must hold, with matchers
    /// at any depth (`{TwitterAPI: {tweet_counter: 3}}`); fields not listed are allowed.
    #[serde(default)]
    pub state: Option<Value>,
}

/// A call the episode runner makes after the episode (what [`EndStateSpec`] asks), or a
/// read of the world's state.
#[derive(Debug, Clone, PartialEq)]
pub struct EndStateCall {
    /// The tool (empty for a state read).
    pub tool: String,
    /// Its arguments.
    pub args: Map<String, Value>,
    /// Read the built-in world's state instead of calling a tool.
    pub state: bool,
}

/// A compiled `end_state` entry: the call and the matcher of its result.
#[derive(Debug, Clone)]
pub struct EndStateCheck {
    /// The call.
    pub call: EndStateCall,
    /// The result it must return.
    pub result: Matcher,
}

/// A problem with an `end_state` entry: the field and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct EndStateProblem {
    /// Line and column.
    pub at: (u32, u32),
    /// The field path.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// Compile `specs` (at `field`): each call must name one of `tools`.
pub fn compile(
    specs: &[EndStateSpec],
    field: &str,
    tools: &[&str],
    norm: Normalizer,
    at: (u32, u32),
) -> Result<Vec<EndStateCheck>, Vec<EndStateProblem>> {
    let mut problems = Vec::new();
    if specs.len() > MAX_END_STATE {
        problems.push(EndStateProblem {
            at,
            field: field.to_string(),
            message: format!(
                "`end_state` lists {} calls, more than the {MAX_END_STATE} allowed",
                specs.len()
            ),
            hint: Some("check the state that matters to the task".into()),
        });
        return Err(problems);
    }
    let mut checks = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let ctx = CompileContext {
            norm,
            extra: ExtraArgs::Allow,
            schema: None,
        };
        let at = s.call.as_ref().map_or(at, Spanned::at);
        let (call, expected, name) = match (&s.call, &s.result, &s.state) {
            (None, None, Some(state)) if s.args.is_empty() => (
                EndStateCall {
                    tool: String::new(),
                    args: Map::new(),
                    state: true,
                },
                state,
                "state",
            ),
            (Some(call), Some(result), None) => {
                if !tools.contains(&call.value.as_str()) {
                    let mut names: Vec<&str> = tools.to_vec();
                    names.sort_unstable();
                    let hint =
                        match crate::util::suggest::closest(&call.value, names.iter().copied()) {
                            Some(c) => {
                                format!("did you mean `{c}`? the tools are: {}", names.join(", "))
                            }
                            None => format!("the tools are: {}", names.join(", ")),
                        };
                    problems.push(EndStateProblem {
                        at,
                        field: format!("{f}.call"),
                        message: format!(
                            "`end_state` calls `{}`, which is not a tool of the suite",
                            call.value
                        ),
                        hint: Some(hint),
                    });
                    continue;
                }
                (
                    EndStateCall {
                        tool: call.value.clone(),
                        args: s.args.clone(),
                        state: false,
                    },
                    result,
                    "result",
                )
            }
            _ => {
                problems.push(EndStateProblem {
                    at,
                    field: f,
                    message: "an `end_state` entry is either a call with its result (`call`, `args`, `result`) or the world's `state`, alone".into(),
                    hint: Some("write `{call: get_balance, args: {...}, result: {...}}` or `{state: {...}}`".into()),
                });
                continue;
            }
        };
        match Matcher::compile(expected, name, ctx) {
            Ok(result) => checks.push(EndStateCheck { call, result }),
            Err(e) => problems.push(EndStateProblem {
                at,
                field: format!("{f}.{}", e.path),
                message: e.message,
                hint: e.hint,
            }),
        }
    }
    if problems.is_empty() {
        Ok(checks)
    } else {
        Err(problems)
    }
}

/// The value a tool result is checked as: its JSON when the text is JSON, else the text.
pub fn result_value(content: &str) -> Value {
    serde_json::from_str(content.trim()).unwrap_or_else(|_| Value::String(content.to_string()))
}
