//! Scoring one trial: every check on every call, and the verdict with all its reasons.
//!
//! The checks are facts (did the arguments parse, is the tool known, do they validate,
//! which required parameters are present, which values are ungrounded); the verdict
//! compares the calls with the case's expectation under the trial's tool_choice mode.
//! Definitions are in `docs/metrics.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::assign;
use crate::provider::{Message, Response, ToolCall, ToolChoice};
use crate::suite::matcher::check_fields;
use crate::suite::model::NormalizeRule;
use crate::suite::{
    CallsExpectation, Case, CaseKind, Expectation, ExtraArgs, Normalizer, Outcome, Suite,
    TextChecks,
};

/// Why a call is invalid. The three are exclusive: arguments that do not parse can not
/// be validated, and an unknown tool has no schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidReason {
    /// The arguments are not valid JSON.
    InvalidJson,
    /// The tool name is not one of the suite's tools.
    UnknownTool,
    /// The arguments do not validate against the tool's schema.
    SchemaViolation,
}

/// Everything checked about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallCheck {
    /// Tool name as called.
    pub tool: String,
    /// The provider's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The arguments parsed as JSON.
    pub json_ok: bool,
    /// The tool exists in the suite.
    pub known_tool: bool,
    /// The arguments validate against the schema (`None` when not checkable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_ok: Option<bool>,
    /// The first few schema errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_errors: Vec<String>,
    /// Why the call is invalid, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<InvalidReason>,
    /// Required parameters present.
    pub required_present: u32,
    /// Required parameters declared by the tool.
    pub required_total: u32,
    /// Required parameters missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_required: Vec<String>,
    /// String values checked for grounding.
    pub grounding_checked: u32,
    /// Ungrounded values: `param = value` found nowhere in the conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ungrounded: Vec<String>,
}

/// A reason a trial failed (or errored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// Stable code, e.g. `missed_call`, `args_mismatch`.
    pub code: String,
    /// Human explanation with the values involved.
    pub message: String,
}

impl Reason {
    /// A reason with a stable `code` and a message.
    pub fn new(code: &str, message: impl Into<String>) -> Reason {
        Reason {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// The checks of one scored trial (the facts behind its verdict and the metrics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialChecks {
    /// The kind in force (after tool_choice overrides).
    pub kind: CaseKind,
    /// At least one tool call was made.
    pub called: bool,
    /// Checks per call, in call order.
    pub calls: Vec<CallCheck>,
    /// Distinct tools the expectation names (the best-matching outcome for ambiguous).
    pub expected_tools: Vec<String>,
    /// The distinct called tools equal the expected tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_tools: Option<bool>,
    /// Expected arguments matched, over calls paired with an expected call of that tool.
    pub args_matched: u32,
    /// Expected arguments checked.
    pub args_expected: u32,
}

/// What scoring a case needs, prepared once per case (the grounding text is the costly
/// part: the whole conversation, normalised).
pub struct CaseScorer<'a> {
    suite: &'a Suite,
    case: &'a Case,
    grounding: String,
    grounding_norm: Normalizer,
}

impl<'a> CaseScorer<'a> {
    /// Prepare scoring for `case` of `suite`.
    pub fn new(suite: &'a Suite, case: &'a Case) -> Self {
        let mut rules = suite.norm.rules();
        for r in [
            NormalizeRule::Casefold,
            NormalizeRule::Whitespace,
            NormalizeRule::Fullwidth,
        ] {
            if !rules.contains(&r) {
                rules.push(r);
            }
        }
        let grounding_norm = Normalizer::new(&rules);
        let mut text = String::new();
        for m in &case.messages {
            if let Some(t) = m.text() {
                text.push_str(&grounding_norm.apply(t));
                text.push('\n');
            }
            if let Message::Assistant { tool_calls, .. } = m {
                for c in tool_calls {
                    text.push_str(&grounding_norm.apply(&c.arguments));
                    text.push('\n');
                }
            }
        }
        CaseScorer {
            suite,
            case,
            grounding: text,
            grounding_norm,
        }
    }

    /// Score `response` to this case under `mode`: the checks, and the reasons it
    /// failed (none when it passed).
    pub fn score(&self, mode: &ToolChoice, response: &Response) -> (TrialChecks, Vec<Reason>) {
        let (kind, expect) = self.case.effective(mode);
        let parsed: Vec<Option<Value>> = response
            .tool_calls
            .iter()
            .map(|c| serde_json::from_str::<Value>(&c.arguments).ok())
            .collect();
        let calls: Vec<CallCheck> = response
            .tool_calls
            .iter()
            .zip(&parsed)
            .map(|(c, p)| self.check_call(c, p.as_ref()))
            .collect();
        let mut reasons = Vec::new();
        for c in &calls {
            match c.invalid {
                Some(InvalidReason::InvalidJson) => reasons.push(Reason::new(
                    "invalid_json",
                    format!("call to `{}` has arguments that are not valid JSON", c.tool),
                )),
                Some(InvalidReason::UnknownTool) => reasons.push(Reason::new(
                    "unknown_tool",
                    format!("called `{}`, which is not one of the tools", c.tool),
                )),
                Some(InvalidReason::SchemaViolation) => reasons.push(Reason::new(
                    "schema_violation",
                    format!(
                        "call to `{}` violates its schema: {}",
                        c.tool,
                        c.schema_errors.join("; ")
                    ),
                )),
                None => {}
            }
        }
        let called = !response.tool_calls.is_empty();
        let text = response.text.as_deref().unwrap_or("");
        let mut args_matched = 0;
        let mut args_expected = 0;
        let mut expected_tools = Vec::new();
        match expect {
            Expectation::Calls(e) => {
                let r = self.match_calls(e, &response.tool_calls, &parsed);
                args_matched = r.args_matched;
                args_expected = r.args_expected;
                expected_tools = distinct_tools(e);
                reasons.extend(r.reasons);
            }
            Expectation::NoCall(t) => {
                if called {
                    let why = if *mode == ToolChoice::None {
                        " although tool_choice was `none`"
                    } else {
                        ""
                    };
                    reasons.push(Reason::new(
                        "unexpected_call",
                        format!(
                            "called {}{why}; no call was expected",
                            names(&response.tool_calls)
                        ),
                    ));
                } else {
                    reasons.extend(self.check_text(t, text));
                }
            }
            Expectation::AnyOf(outcomes) => {
                let mut why = Vec::new();
                let mut best: Option<CallsResult> = None;
                let mut passed_any = false;
                for o in outcomes {
                    let r = match o {
                        Outcome::Calls(e) => {
                            let r = self.match_calls(e, &response.tool_calls, &parsed);
                            let ok = r.reasons.is_empty();
                            let msg = r
                                .reasons
                                .iter()
                                .map(|x| x.message.clone())
                                .collect::<Vec<_>>()
                                .join("; ");
                            if best
                                .as_ref()
                                .is_none_or(|b| ok || r.args_matched > b.args_matched)
                                && !passed_any
                            {
                                expected_tools = distinct_tools(e);
                                best = Some(r);
                            }
                            if ok {
                                Ok(())
                            } else {
                                Err(format!("calls: {msg}"))
                            }
                        }
                        Outcome::Clarify(t) => {
                            if called {
                                Err("clarify: a tool was called".to_string())
                            } else if !(text.contains('?') || text.contains('？')) {
                                Err("clarify: the answer asks no question".to_string())
                            } else {
                                join_text_reasons("clarify", self.check_text(t, text))
                            }
                        }
                        Outcome::NoCall(t) => {
                            if called {
                                Err("no_call: a tool was called".to_string())
                            } else {
                                join_text_reasons("no_call", self.check_text(t, text))
                            }
                        }
                    };
                    match r {
                        Ok(()) => {
                            passed_any = true;
                            if let Outcome::Calls(e) = o {
                                expected_tools = distinct_tools(e);
                            }
                        }
                        Err(m) => why.push(m),
                    }
                }
                if let Some(b) = best {
                    args_matched = b.args_matched;
                    args_expected = b.args_expected;
                }
                if !passed_any {
                    reasons.push(Reason::new(
                        "no_acceptable_outcome",
                        format!("no acceptable outcome held: {}", why.join(" | ")),
                    ));
                }
            }
        }
        let right_tools = (kind == CaseKind::ShouldCall && called && !expected_tools.is_empty())
            .then(|| {
                let mut called_tools: Vec<&str> = response
                    .tool_calls
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect();
                called_tools.sort_unstable();
                called_tools.dedup();
                called_tools
                    == expected_tools
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
            });
        let checks = TrialChecks {
            kind,
            called,
            calls,
            expected_tools,
            right_tools,
            args_matched,
            args_expected,
        };
        (checks, reasons)
    }

    fn check_call(&self, call: &ToolCall, args: Option<&Value>) -> CallCheck {
        let tool = self.suite.tools.iter().find(|t| t.name == call.name);
        let mut check = CallCheck {
            tool: call.name.clone(),
            id: call.id.clone(),
            json_ok: args.is_some(),
            known_tool: tool.is_some(),
            schema_ok: None,
            schema_errors: Vec::new(),
            invalid: None,
            required_present: 0,
            required_total: 0,
            missing_required: Vec::new(),
            grounding_checked: 0,
            ungrounded: Vec::new(),
        };
        let Some(args) = args else {
            check.invalid = Some(InvalidReason::InvalidJson);
            return check;
        };
        let Some(tool) = tool else {
            check.invalid = Some(InvalidReason::UnknownTool);
            return check;
        };
        let valid = tool.validator.is_valid(args);
        check.schema_ok = Some(valid);
        if !valid {
            check.invalid = Some(InvalidReason::SchemaViolation);
            check.schema_errors = tool
                .validator
                .iter_errors(args)
                .take(3)
                .map(|e| {
                    let at = e.instance_path().to_string();
                    if at.is_empty() {
                        e.to_string()
                    } else {
                        format!("{at}: {e}")
                    }
                })
                .collect();
        }
        check.required_total = tool.required.len() as u32;
        if let Some(obj) = args.as_object() {
            for r in &tool.required {
                if obj.contains_key(r) {
                    check.required_present += 1;
                } else {
                    check.missing_required.push(r.clone());
                }
            }
            for (k, v) in obj {
                self.ground(k, v, tool.property(k), &mut check);
            }
        } else {
            check.missing_required = tool.required.clone();
        }
        check
    }

    /// Record string values under `path` that appear nowhere in the conversation,
    /// skipping parameters whose schema offers the value (enum, const, default).
    fn ground(&self, path: &str, v: &Value, schema: Option<&Value>, check: &mut CallCheck) {
        if schema.is_some_and(|s| {
            s.get("enum").is_some() || s.get("const").is_some() || s.get("default").is_some()
        }) {
            return;
        }
        match v {
            Value::String(s) => {
                let n = self.grounding_norm.apply(s);
                let n = n.trim();
                if n.is_empty() {
                    return;
                }
                check.grounding_checked += 1;
                if !self.grounding.contains(n) {
                    check
                        .ungrounded
                        .push(format!("{path} = {}", crate::suite::matcher::show(v)));
                }
            }
            Value::Array(items) => {
                let item = schema.and_then(|s| s.get("items"));
                for (i, x) in items.iter().enumerate() {
                    self.ground(&format!("{path}[{i}]"), x, item, check);
                }
            }
            Value::Object(map) => {
                let props = schema.and_then(|s| s.get("properties"));
                for (k, x) in map {
                    self.ground(
                        &format!("{path}.{k}"),
                        x,
                        props.and_then(|p| p.get(k)),
                        check,
                    );
                }
            }
            _ => {}
        }
    }

    fn check_text(&self, t: &TextChecks, text: &str) -> Vec<Reason> {
        let mut out = Vec::new();
        let norm = &self.suite.norm;
        let hay = norm.apply(text);
        for c in &t.contains {
            if !hay.contains(norm.apply(c).as_ref()) {
                out.push(Reason::new(
                    "text_mismatch",
                    format!("the answer does not contain {:?}", c),
                ));
            }
        }
        if let Some(re) = &t.regex
            && !re.is_match(text)
        {
            out.push(Reason::new(
                "text_mismatch",
                format!("the answer does not match /{}/", re.as_str()),
            ));
        }
        out
    }

    fn match_calls(
        &self,
        e: &CallsExpectation,
        actual: &[ToolCall],
        parsed: &[Option<Value>],
    ) -> CallsResult {
        // Weight: a full match outweighs any number of partial ones; a partial match
        // (right tool, some arguments right) lets us report the closest call's mismatches.
        let max_args = e.calls.iter().map(|c| c.args.len()).max().unwrap_or(0) as i64;
        let partial_cap = 1 + max_args + 1;
        let full = partial_cap * (e.calls.len().max(actual.len()) as i64 + 1) + 1;
        let mut matched_args = vec![vec![0u32; actual.len()]; e.calls.len()];
        let assignment = assign::best_assignment(e.calls.len(), actual.len(), |i, j| {
            let exp = &e.calls[i];
            if actual[j].name != exp.tool {
                return 0;
            }
            let Some(Value::Object(obj)) = &parsed[j] else {
                return 1;
            };
            let ok = exp
                .args
                .iter()
                .filter(|(n, m)| m.check(obj.get(n), n).is_ok())
                .count() as u32;
            matched_args[i][j] = ok;
            let extra_ok = exp.extra == ExtraArgs::Allow
                || check_fields(&exp.args, exp.extra, obj, "").is_ok();
            if ok as usize == exp.args.len() && extra_ok {
                full
            } else {
                1 + i64::from(ok)
            }
        });
        let mut r = CallsResult::default();
        let mut used = vec![false; actual.len()];
        for (i, exp) in e.calls.iter().enumerate() {
            let Some(j) = assignment[i] else {
                r.reasons.push(Reason::new(
                    "missed_call",
                    format!(
                        "expected a call to `{}`{}, none matched",
                        exp.tool,
                        if actual.is_empty() {
                            String::new()
                        } else {
                            format!(" (calls made: {})", names(actual))
                        }
                    ),
                ));
                continue;
            };
            used[j] = true;
            r.args_expected += exp.args.len() as u32;
            r.args_matched += matched_args[i][j];
            match &parsed[j] {
                Some(Value::Object(obj)) => {
                    if let Err(m) = check_fields(&exp.args, exp.extra, obj, "") {
                        r.reasons
                            .push(Reason::new("args_mismatch", format!("`{}`: {m}", exp.tool)));
                    }
                }
                Some(other) => r.reasons.push(Reason::new(
                    "args_mismatch",
                    format!(
                        "`{}`: arguments are {}, not an object",
                        exp.tool,
                        crate::suite::matcher::show(other)
                    ),
                )),
                None => r.reasons.push(Reason::new(
                    "args_mismatch",
                    format!("`{}`: arguments could not be parsed", exp.tool),
                )),
            }
        }
        if e.count == crate::suite::CountMode::Exact {
            let extra: Vec<&ToolCall> = actual
                .iter()
                .zip(&used)
                .filter(|(_, u)| !**u)
                .map(|(c, _)| c)
                .collect();
            if !extra.is_empty() {
                r.reasons.push(Reason::new(
                    "extra_calls",
                    format!(
                        "{} call(s) beyond the {} expected: {}",
                        extra.len(),
                        e.calls.len(),
                        extra
                            .iter()
                            .map(|c| format!("`{}`", c.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        r
    }
}

#[derive(Default)]
struct CallsResult {
    reasons: Vec<Reason>,
    args_matched: u32,
    args_expected: u32,
}

fn join_text_reasons(label: &str, reasons: Vec<Reason>) -> Result<(), String> {
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{label}: {}",
            reasons
                .into_iter()
                .map(|r| r.message)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    }
}

fn distinct_tools(e: &CallsExpectation) -> Vec<String> {
    let mut v: Vec<String> = e.calls.iter().map(|c| c.tool.clone()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn names(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|c| format!("`{}`", c.name))
        .collect::<Vec<_>>()
        .join(", ")
}
