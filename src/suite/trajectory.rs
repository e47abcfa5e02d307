//! Loop expectations: what a case expects of a whole episode (every round), not only of
//! the first request.
//!
//! The YAML keys live under a case's `expect:` next to `calls` (which keeps meaning the
//! first round): `trajectory: {mode, steps}`, `never: [tools]`, `final: {contains,
//! grounded, no_success_after_error}` and `stop`. This module holds their serde types
//! and compiles them (with located errors) into a [`LoopExpectation`] that
//! `crate::judge` applies to an episode's transcript.
//!
//! A step's arguments use the argument matchers of [`super::matcher`], plus
//! `{from: TOOL.result.PATH}`: the argument must equal the value at `PATH` in a result
//! that `TOOL` returned earlier in the episode (see [`FromRef`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::TextChecks;
use super::matcher::{CompileContext, Matcher};
use super::model::{ExpectedCallSpec, ExtraArgs};
use super::normalize::Normalizer;
use super::span::Spanned;

/// The most steps a trajectory may list: judging an in-order trajectory costs about
/// steps³ per round, and real tasks have a handful of steps.
pub const MAX_STEPS: usize = 100;

/// `expect.trajectory`: the tool calls the whole episode must make.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectorySpec {
    /// How the calls are compared with the steps (default `in_order`).
    #[serde(default)]
    pub mode: MatchMode,
    /// The expected calls, each `{tool, args}` as in `calls` (args may use `{from: ...}`).
    pub steps: Vec<ExpectedCallSpec>,
}

/// How an episode's calls are compared with a trajectory's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchMode {
    /// Exactly these calls, in this order (calls of one round may come in any order).
    Strict,
    /// These calls in this order, other calls allowed between them (default).
    #[default]
    InOrder,
    /// Exactly these calls, in any order.
    Unordered,
    /// Every call made is one of the steps (steps may be left out).
    Subset,
    /// Every step is called, in any order, other calls allowed.
    Superset,
}

impl MatchMode {
    /// The name used in suites and reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Strict => "strict",
            MatchMode::InOrder => "in_order",
            MatchMode::Unordered => "unordered",
            MatchMode::Subset => "subset",
            MatchMode::Superset => "superset",
        }
    }
}

/// `expect.final`: checks on the model's final answer.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalSpec {
    /// The final answer must contain these strings (after the suite's normalisation).
    #[serde(default)]
    pub contains: Vec<String>,
    /// The final answer must match this regex.
    #[serde(default)]
    pub regex: Option<Spanned<String>>,
    /// Every number, date, id and name in the final answer must appear in a tool
    /// result, the prompt or a user turn.
    #[serde(default)]
    pub grounded: bool,
    /// The final answer must not claim success when the last call of a tool failed.
    #[serde(default)]
    pub no_success_after_error: bool,
    /// A free-text rubric the judge model checks the final answer against (needs a
    /// judge: `judge:` or `--judge`).
    #[serde(default)]
    pub rubric: Option<Spanned<String>>,
}

/// Why an episode stopped: the value of `expect.stop`, and what the episode runner
/// records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered in text after the last scripted user turn.
    Answered,
    /// The `max_rounds` limit was reached.
    MaxRounds,
    /// The `max_tool_calls` limit was reached.
    MaxToolCalls,
    /// The same call was repeated more than `max_identical_calls` times.
    RepeatedCall,
}

impl StopReason {
    /// The name used in suites and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::MaxRounds => "max_rounds",
            StopReason::MaxToolCalls => "max_tool_calls",
            StopReason::RepeatedCall => "repeated_call",
        }
    }
}

/// A case's compiled loop expectations (every part given must hold).
#[derive(Clone, Debug, Default)]
pub struct LoopExpectation {
    /// The calls of the whole episode.
    pub trajectory: Option<Trajectory>,
    /// Tools that must never be called.
    pub never: Vec<String>,
    /// Checks on the final answer.
    pub final_answer: Option<FinalChecks>,
    /// How the episode must stop (`None`: it must end with an answer, as `answered`).
    pub stop: Option<StopReason>,
    /// The world the episode must leave behind (`expect.end_state`).
    pub end_state: Vec<super::end_state::EndStateCheck>,
}

/// A compiled trajectory.
#[derive(Clone, Debug)]
pub struct Trajectory {
    /// The match mode.
    pub mode: MatchMode,
    /// The steps in suite order.
    pub steps: Vec<Step>,
}

/// One expected call of a trajectory.
#[derive(Debug, Clone)]
pub struct Step {
    /// Tool name.
    pub tool: String,
    /// Argument matchers by parameter name, in suite order.
    pub args: Vec<(String, StepArg)>,
    /// Whether arguments not listed fail the step.
    pub extra: ExtraArgs,
}

/// How one argument (or a part of one) of a step is checked.
#[derive(Clone, Debug)]
pub enum StepArg {
    /// An ordinary matcher.
    Match(Matcher),
    /// Equal to a value from an earlier tool result.
    From(FromRef),
    /// An object some of whose fields (at any depth) use `from`.
    Object {
        /// Field checks in suite order.
        fields: Vec<(String, StepArg)>,
        /// Whether fields not listed fail.
        extra: ExtraArgs,
    },
    /// A list some of whose elements use `from`, compared element by element in order.
    Array(Vec<StepArg>),
}

impl StepArg {
    /// Whether this check (or a part of it) refers to an earlier result.
    pub fn uses_from(&self) -> bool {
        match self {
            StepArg::Match(_) => false,
            StepArg::From(_) => true,
            StepArg::Object { fields, .. } => fields.iter().any(|(_, a)| a.uses_from()),
            StepArg::Array(items) => items.iter().any(StepArg::uses_from),
        }
    }
}

/// `{from: TOOL.result.PATH}`: a value taken from an earlier result of `TOOL`.
///
/// `PATH` is a chain of `.segment`s, e.g. `get_order.result.items.0.id`; `TOOL.result`
/// alone is the whole result. A segment of digits is a list index (from 0) where the
/// value is a list, and a key where it is an object; any other segment is a key. Dots
/// were chosen over `items[0]` because `[` and `]` end a plain scalar in YAML flow
/// style (`{from: a.result.items[0]}` does not parse unquoted). Keys containing `.`
/// can not be addressed.
#[derive(Debug, Clone)]
pub struct FromRef {
    /// The tool whose result is read.
    pub tool: String,
    /// The path inside the result.
    pub path: Vec<PathSegment>,
    /// The reference as written, for messages.
    pub text: String,
    /// Normalisation for comparing strings.
    pub norm: Normalizer,
}

/// One segment of a [`FromRef`] path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object field.
    Key(String),
    /// A list element, or the field of that name in an object.
    Index(usize),
}

impl FromRef {
    /// The value at this path in `result`, if there is one.
    pub fn lookup<'v>(&self, result: &'v Value) -> Option<&'v Value> {
        self.path.iter().try_fold(result, |v, seg| match (seg, v) {
            (PathSegment::Key(k), Value::Object(o)) => o.get(k),
            (PathSegment::Index(i), Value::Array(a)) => a.get(*i),
            (PathSegment::Index(i), Value::Object(o)) => o.get(&i.to_string()),
            _ => None,
        })
    }
}

/// Compiled `expect.final`.
#[derive(Clone, Debug, Default)]
pub struct FinalChecks {
    /// `contains` and `regex`.
    pub text: TextChecks,
    /// Every stated number, date, id and name must be grounded.
    pub grounded: bool,
    /// No claim of success when the last call of a tool failed.
    pub no_success_after_error: bool,
}

/// A problem found while compiling loop expectations: where, which field, what, and a hint.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopProblem {
    /// Line and column (0 when unknown).
    pub at: (u32, u32),
    /// Field path, e.g. `cases[0].expect.trajectory.steps[1].args.id`.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// What compiling loop expectations needs from the case.
pub struct LoopContext<'a> {
    /// The case's tools: name and argument schema.
    pub tools: &'a dyn Fn(&str) -> Option<&'a Value>,
    /// Every tool name the case offers (for hints).
    pub tool_names: Vec<&'a str>,
    /// Tools whose schema did not compile (already reported).
    pub broken: &'a [String],
    /// Suite normalisation.
    pub norm: Normalizer,
    /// Default for `extra_args`.
    pub extra: ExtraArgs,
    /// Location of the case, for problems without a location of their own.
    pub at: (u32, u32),
}

/// Whether `e` gives any loop expectation.
pub fn given(e: &super::model::ExpectSpec) -> bool {
    // A `final` with only a rubric is the judge's (any case may have one), not the loop's.
    let final_checks = e.final_answer.as_ref().is_some_and(|f| {
        f.rubric.is_none()
            || !f.contains.is_empty()
            || f.regex.is_some()
            || f.grounded
            || f.no_success_after_error
    });
    e.trajectory.is_some()
        || !e.never.is_empty()
        || final_checks
        || e.stop.is_some()
        || !e.end_state.is_empty()
}

/// Compile a trajectory (`field` is the path of `expect.trajectory`).
pub fn compile_trajectory(
    spec: &TrajectorySpec,
    field: &str,
    ctx: &LoopContext<'_>,
    problems: &mut Vec<LoopProblem>,
) -> Option<Trajectory> {
    let before = problems.len();
    if spec.steps.is_empty() {
        problems.push(LoopProblem {
            at: ctx.at,
            field: format!("{field}.steps"),
            message: "`trajectory.steps` is empty".into(),
            hint: Some(
                "list the expected calls: `steps: [{tool: NAME, args: {...}}]`, or use `never: [...]` to forbid calls".into(),
            ),
        });
    }
    if spec.steps.len() > MAX_STEPS {
        problems.push(LoopProblem {
            at: ctx.at,
            field: format!("{field}.steps"),
            message: format!(
                "`trajectory.steps` lists {} steps, more than the {MAX_STEPS} allowed",
                spec.steps.len()
            ),
            hint: Some("split the task into several cases".into()),
        });
        return None;
    }
    let mut steps = Vec::with_capacity(spec.steps.len());
    for (i, s) in spec.steps.iter().enumerate() {
        let sf = format!("{field}.steps[{i}]");
        let earlier: Vec<&str> = spec.steps[..i]
            .iter()
            .map(|s| s.tool.value.as_str())
            .collect();
        if let Some(step) = compile_step(s, &sf, &earlier, ctx, problems) {
            steps.push(step);
        }
    }
    (problems.len() == before).then_some(Trajectory {
        mode: spec.mode,
        steps,
    })
}

/// Check `never:` names known tools.
pub fn compile_never(
    never: &[Spanned<String>],
    field: &str,
    ctx: &LoopContext<'_>,
    problems: &mut Vec<LoopProblem>,
) -> Vec<String> {
    for (i, t) in never.iter().enumerate() {
        if let Some(p) = unknown_tool(&t.value, t.at(), &format!("{field}[{i}]"), ctx) {
            problems.push(p);
        }
    }
    never.iter().map(|t| t.value.clone()).collect()
}

fn unknown_tool(
    name: &str,
    at: (u32, u32),
    field: &str,
    ctx: &LoopContext<'_>,
) -> Option<LoopProblem> {
    if (ctx.tools)(name).is_some() || ctx.broken.iter().any(|b| b == name) {
        return None;
    }
    let mut names = ctx.tool_names.clone();
    names.sort_unstable();
    let listed = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let hint = match crate::util::suggest::closest(name, names.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? the tools are: {listed}"),
        None => format!("the tools are: {listed}"),
    };
    Some(LoopProblem {
        at,
        field: field.to_string(),
        message: format!("unknown tool `{name}`"),
        hint: Some(hint),
    })
}

fn compile_step(
    s: &ExpectedCallSpec,
    field: &str,
    earlier: &[&str],
    ctx: &LoopContext<'_>,
    problems: &mut Vec<LoopProblem>,
) -> Option<Step> {
    let tool = &s.tool.value;
    if let Some(p) = unknown_tool(tool, s.tool.at(), &format!("{field}.tool"), ctx) {
        problems.push(p);
        return None;
    }
    let schema = (ctx.tools)(tool);
    let extra = s.extra_args.unwrap_or(ctx.extra);
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let mut args = Vec::with_capacity(s.args.len());
    for (name, value) in &s.args {
        let af = format!("{field}.args.{}", name.value);
        if let Some(p) = props
            && !p.contains_key(&name.value)
        {
            let mut known: Vec<&str> = p.keys().map(String::as_str).collect();
            known.sort_unstable();
            problems.push(LoopProblem {
                at: name.at(),
                field: af,
                message: format!(
                    "step names unknown parameter `{}` of tool `{tool}`",
                    name.value
                ),
                hint: Some(format!("`{tool}` parameters are: {}", known.join(", "))),
            });
            continue;
        }
        let prop = props.and_then(|p| p.get(&name.value));
        let cctx = ArgContext {
            earlier,
            tools: ctx,
            extra,
            at: value.at(),
        };
        match compile_arg(&value.value, &name.value, prop, &cctx) {
            Ok(a) => args.push((name.value.clone(), a)),
            Err(p) => problems.push(LoopProblem {
                field: format!("{field}.args.{}", p.field),
                ..p
            }),
        }
    }
    Some(Step {
        tool: tool.clone(),
        args,
        extra,
    })
}

struct ArgContext<'a, 'b> {
    earlier: &'a [&'a str],
    tools: &'a LoopContext<'b>,
    extra: ExtraArgs,
    at: (u32, u32),
}

/// Compile one argument; a problem's `field` is relative to `args`.
fn compile_arg(
    value: &Value,
    path: &str,
    schema: Option<&Value>,
    ctx: &ArgContext<'_, '_>,
) -> Result<StepArg, LoopProblem> {
    if !uses_from(value, schema) {
        let mctx = CompileContext {
            norm: ctx.tools.norm,
            extra: ctx.extra,
            schema,
        };
        return Matcher::compile(value, path, mctx)
            .map(StepArg::Match)
            .map_err(|e| LoopProblem {
                at: ctx.at,
                field: e.path,
                message: e.message,
                hint: e.hint,
            });
    }
    // `uses_from` found a reference, so `value` is an object or a list.
    match value {
        Value::Object(map) if is_reference(map, schema) => {
            let problem = |message: String, hint: &str| LoopProblem {
                at: ctx.at,
                field: format!("{path}.from"),
                message,
                hint: Some(hint.to_string()),
            };
            if map.len() != 1 {
                return Err(problem(
                    "`from` takes no other keys".into(),
                    "write `{from: TOOL.result.PATH}` alone; the argument must equal that value",
                ));
            }
            let Some(text) = map["from"].as_str() else {
                return Err(problem(
                    format!(
                        "`from` must be a string, got {}",
                        super::matcher::show(&map["from"])
                    ),
                    "e.g. `{from: get_order.result.shipment_id}`",
                ));
            };
            parse_from(text, ctx)
                .map(StepArg::From)
                .map_err(|(message, hint)| LoopProblem {
                    at: ctx.at,
                    field: format!("{path}.from"),
                    message,
                    hint: Some(hint),
                })
        }
        Value::Object(map) => {
            let props = schema.and_then(|s| s.get("properties"));
            let fields = map
                .iter()
                .map(|(k, v)| {
                    compile_arg(v, &format!("{path}.{k}"), props.and_then(|p| p.get(k)), ctx)
                        .map(|a| (k.clone(), a))
                })
                .collect::<Result<_, _>>()?;
            Ok(StepArg::Object {
                fields,
                extra: ctx.extra,
            })
        }
        Value::Array(items) => {
            let item = schema.and_then(|s| s.get("items"));
            items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_arg(v, &format!("{path}[{i}]"), item, ctx))
                .collect::<Result<_, _>>()
                .map(StepArg::Array)
        }
        _ => Err(LoopProblem {
            at: ctx.at,
            field: path.to_string(),
            message: format!("can not read {} as a matcher", super::matcher::show(value)),
            hint: None,
        }),
    }
}

/// Whether `map` is a `{from: ...}` reference rather than an object with a field
/// `from`: it is a field when the schema declares such a property, or when the map has
/// other keys and its `from` names no tool result (`{from: 2020, to: 2021}`).
fn is_reference(map: &serde_json::Map<String, Value>, schema: Option<&Value>) -> bool {
    let Some(from) = map.get("from") else {
        return false;
    };
    let declared = schema
        .and_then(|s| s.get("properties"))
        .is_some_and(|p| p.get("from").is_some());
    let names_result = from.as_str().is_some_and(|f| f.contains(".result"));
    !declared && (map.len() == 1 || names_result)
}

/// Whether `value` (matched against `schema`) holds a `{from: ...}` reference anywhere:
/// what only trajectory steps can use.
pub fn uses_from(value: &Value, schema: Option<&Value>) -> bool {
    match value {
        Value::Object(map) if is_reference(map, schema) => true,
        Value::Object(map)
            if !map
                .keys()
                .any(|k| super::matcher::KEYWORDS.contains(&k.as_str())) =>
        {
            let props = schema.and_then(|s| s.get("properties"));
            map.iter()
                .any(|(k, v)| uses_from(v, props.and_then(|p| p.get(k))))
        }
        Value::Array(items) => {
            let item = schema.and_then(|s| s.get("items"));
            items.iter().any(|v| uses_from(v, item))
        }
        _ => false,
    }
}

/// Parse `TOOL.result[.PATH]`; the tool must be called by an earlier step.
fn parse_from(text: &str, ctx: &ArgContext<'_, '_>) -> Result<FromRef, (String, String)> {
    const SYNTAX: &str = "write `TOOL.result` then `.key` and `.N` (list index) segments, e.g. `get_order.result.items.0.id`";
    // Tool names may contain `.`: the tool is the prefix before a `.result` that names
    // a tool of the case.
    let split = text
        .match_indices(".result")
        .map(|(i, _)| (&text[..i], &text[i + ".result".len()..]))
        .filter(|(_, rest)| rest.is_empty() || rest.starts_with(['.', '[']))
        .find(|(tool, _)| (ctx.tools.tools)(tool).is_some())
        .or_else(|| {
            text.find(".result")
                .map(|i| (&text[..i], &text[i + ".result".len()..]))
        });
    let Some((tool, rest)) = split else {
        return Err((
            format!("`from: {text}` does not name a tool result"),
            SYNTAX.into(),
        ));
    };
    if (ctx.tools.tools)(tool).is_none() && !ctx.tools.broken.iter().any(|b| b == tool) {
        let hint = match crate::util::suggest::closest(tool, ctx.tools.tool_names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("the tools are: {}", ctx.tools.tool_names.join(", ")),
        };
        return Err((format!("`from: {text}` names unknown tool `{tool}`"), hint));
    }
    if !ctx.earlier.contains(&tool) {
        return Err((
            format!(
                "`from: {text}` reads a result of `{tool}`, but no earlier step calls `{tool}`"
            ),
            format!("add a step calling `{tool}` before this one"),
        ));
    }
    let path =
        parse_path(rest).map_err(|e| (format!("`from: {text}`: {e}"), SYNTAX.to_string()))?;
    Ok(FromRef {
        tool: tool.to_string(),
        path,
        text: text.to_string(),
        norm: ctx.tools.norm,
    })
}

/// Parse `.key.0.key...` (the part after `TOOL.result`).
fn parse_path(rest: &str) -> Result<Vec<PathSegment>, String> {
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    if rest.contains(['[', ']']) {
        return Err("list indices are written as dotted numbers (`items.0.id`), not `[0]`".into());
    }
    let Some(rest) = rest.strip_prefix('.') else {
        return Err(format!("unexpected `{rest}` after `result`"));
    };
    rest.split('.')
        .map(|seg| {
            if seg.is_empty() {
                Err("a `.` must be followed by a key or an index".to_string())
            } else if seg.bytes().all(|b| b.is_ascii_digit()) {
                seg.parse()
                    .map(PathSegment::Index)
                    .map_err(|_| format!("index `{seg}` is too large"))
            } else {
                Ok(PathSegment::Key(seg.to_string()))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_dotted_keys_and_indices() {
        assert_eq!(parse_path(""), Ok(vec![]));
        assert_eq!(
            parse_path(".items.0.id"),
            Ok(vec![
                PathSegment::Key("items".into()),
                PathSegment::Index(0),
                PathSegment::Key("id".into()),
            ])
        );
        assert!(parse_path(".items[0]").unwrap_err().contains("items.0.id"));
        assert!(parse_path("..a").is_err());
        assert!(parse_path(".a.").is_err());
        assert!(parse_path("x").is_err());
        assert!(parse_path(".99999999999999999999999").is_err());
    }

    #[test]
    fn lookup_walks_objects_and_lists() {
        let r = FromRef {
            tool: "t".into(),
            path: parse_path(".items.1.id").unwrap(),
            text: String::new(),
            norm: Normalizer::default(),
        };
        let v = serde_json::json!({"items": [{"id": "a"}, {"id": "b"}]});
        assert_eq!(r.lookup(&v), Some(&Value::from("b")));
        assert_eq!(r.lookup(&serde_json::json!({"items": [{"id": "a"}]})), None);
        // A number names a key of an object.
        assert_eq!(
            r.lookup(&serde_json::json!({"items": {"1": {"id": "c"}}})),
            Some(&Value::from("c"))
        );
        assert_eq!(r.lookup(&serde_json::json!({"items": "x"})), None);
    }

    const TOOLS: &str = "tools:
  - {name: get_order, description: d, parameters: {type: object, properties: {order_id: {type: string}}}}
  - {name: get_shipment, description: d, parameters: {type: object, properties: {shipment_id: {type: string}}}}
cases:
  - id: c
    kind: should_call
    prompt: 订单 A123
    expect:
";
    /// Loop expectations need a tool loop: a suite-wide mock, appended last.
    const MOCKS: &str = "mocks: {get_order: [{result: {}}]}\n";

    /// The diagnostics of a suite whose case expects `expect`: (line, field, message, hint).
    fn problems(expect: &str) -> Vec<(u32, String, String, String)> {
        // The suite-wide mock (after the case, so line numbers stay) makes it a loop.
        let text = format!("{TOOLS}{expect}{MOCKS}");
        match crate::suite::load_str(&text, std::path::Path::new("s.yaml")) {
            Ok(_) => Vec::new(),
            Err(crate::suite::SuiteError::Invalid(d)) => d
                .into_iter()
                .map(|d| (d.line, d.field, d.message, d.hint.unwrap_or_default()))
                .collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_issue_example_compiles() {
        let text = format!(
            "{TOOLS}      trajectory:
        mode: in_order
        steps:
          - {{tool: get_order, args: {{order_id: A123}}}}
          - {{tool: get_shipment, args: {{shipment_id: {{from: get_order.result.shipment_id}}}}}}
      never: [get_shipment]
      final: {{contains: [\"12-03\"], grounded: true, no_success_after_error: true}}
      stop: max_rounds
{MOCKS}"
        );
        let suite = crate::suite::load_str(&text, std::path::Path::new("s.yaml")).unwrap();
        let case = &suite.cases[0];
        let e = case.loop_expect.as_ref().unwrap();
        let t = e.trajectory.as_ref().unwrap();
        assert_eq!(t.mode, MatchMode::InOrder);
        assert_eq!(t.steps.len(), 2);
        match &t.steps[1].args[0].1 {
            StepArg::From(r) => {
                assert_eq!(r.tool, "get_order");
                assert_eq!(r.path, vec![PathSegment::Key("shipment_id".into())]);
            }
            other => panic!("expected a from reference, got {other:?}"),
        }
        assert_eq!(e.never, vec!["get_shipment".to_string()]);
        let f = e.final_answer.as_ref().unwrap();
        assert_eq!(f.text.contains, vec!["12-03".to_string()]);
        assert!(f.grounded && f.no_success_after_error);
        assert_eq!(e.stop, Some(StopReason::MaxRounds));
        // Without `calls`, the first round must make some call.
        match &case.expect {
            crate::suite::Expectation::Calls(c) => {
                assert!(c.calls.is_empty());
                assert_eq!(c.count, crate::suite::CountMode::AtLeast);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_case_without_loop_keys_has_no_episode_expectation() {
        let text = format!("{TOOLS}      calls: [{{tool: get_order, args: {{order_id: A123}}}}]\n");
        let suite = crate::suite::load_str(&text, std::path::Path::new("s.yaml")).unwrap();
        assert!(suite.cases[0].loop_expect.is_none());
    }

    #[test]
    fn unknown_tools_in_steps_and_never_are_located_with_a_suggestion() {
        let p = problems(
            "      trajectory:
        steps:
          - {tool: get_ordr}
      never: [cancel_order]
",
        );
        assert_eq!(
            p,
            vec![
                (
                    11,
                    "cases[0].expect.trajectory.steps[0].tool".into(),
                    "unknown tool `get_ordr`".into(),
                    "did you mean `get_order`? the tools are: `get_order`, `get_shipment`".into()
                ),
                (
                    12,
                    "cases[0].expect.never[0]".into(),
                    "unknown tool `cancel_order`".into(),
                    "the tools are: `get_order`, `get_shipment`".into()
                ),
            ]
        );
    }

    #[test]
    fn from_must_name_a_tool_an_earlier_step_calls() {
        let p = problems(
            "      trajectory:
        steps:
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.shipment_id}}}
          - {tool: get_order}
",
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].0, 11);
        assert_eq!(
            p[0].1,
            "cases[0].expect.trajectory.steps[0].args.shipment_id.from"
        );
        assert_eq!(
            p[0].2,
            "`from: get_order.result.shipment_id` reads a result of `get_order`, but no earlier step calls `get_order`"
        );
        let p = problems(
            "      trajectory:
        steps:
          - {tool: get_order}
          - {tool: get_shipment, args: {shipment_id: {from: get_ordr.result.id}}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.shipment_id}}}
          - {tool: get_shipment, args: {shipment_id: {from: get_order.result.id, eq: x}}}
          - {tool: get_shipment, args: {shipment_id: {from: \"get_order.result.items[0]\"}}}
",
        );
        let messages: Vec<(&str, &str)> = p.iter().map(|x| (x.2.as_str(), x.3.as_str())).collect();
        assert_eq!(
            messages,
            vec![
                (
                    "`from: get_ordr.result.id` names unknown tool `get_ordr`",
                    "did you mean `get_order`?"
                ),
                (
                    "`from: get_order.shipment_id` does not name a tool result",
                    "write `TOOL.result` then `.key` and `.N` (list index) segments, e.g. `get_order.result.items.0.id`"
                ),
                (
                    "`from` takes no other keys",
                    "write `{from: TOOL.result.PATH}` alone; the argument must equal that value"
                ),
                (
                    "`from: get_order.result.items[0]`: list indices are written as dotted numbers (`items.0.id`), not `[0]`",
                    "write `TOOL.result` then `.key` and `.N` (list index) segments, e.g. `get_order.result.items.0.id`"
                ),
            ]
        );
    }

    #[test]
    fn an_unknown_mode_or_stop_suggests_the_closest() {
        let p = problems(
            "      trajectory:
        mode: in_ordr
        steps: [{tool: get_order}]
",
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].0, 10);
        assert!(p[0].2.contains("in_ordr"), "{p:?}");
        assert!(p[0].3.contains("did you mean `in_order`?"), "{p:?}");
        let p = problems("      stop: answerd\n");
        assert!(p[0].3.contains("did you mean `answered`?"), "{p:?}");
    }

    #[test]
    fn a_declared_field_named_from_is_a_field_and_calls_can_not_use_references() {
        let text = "tools:
  - name: send_email
    description: d
    parameters: {type: object, properties: {header: {type: object, properties: {from: {type: string}}}}}
cases:
  - id: c
    kind: should_call
    prompt: hi
    expect:
      calls: [{tool: send_email, args: {header: {from: {from: send_email.result.x}}}}]
      trajectory:
        steps:
          - {tool: send_email, args: {header: {from: a@x.org}}}
          - {tool: send_email, args: {header: {from: {from: send_email.result.sender}}}}
mocks: {send_email: [{result: {}}]}
";
        let Err(crate::suite::SuiteError::Invalid(d)) =
            crate::suite::load_str(text, std::path::Path::new("s.yaml"))
        else {
            panic!("`from` in calls must be refused");
        };
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].field, "cases[0].expect.calls[0].args.header");
        assert_eq!(d[0].line, 10);
        assert_eq!(
            d[0].message,
            "`from:` refers to an earlier tool result, which only `trajectory` steps have"
        );
        let ok = text.replace("{from: {from: send_email.result.x}}", "{from: b@x.org}");
        let suite = crate::suite::load_str(&ok, std::path::Path::new("s.yaml")).unwrap();
        let t = suite.cases[0]
            .loop_expect
            .as_ref()
            .unwrap()
            .trajectory
            .as_ref()
            .unwrap();
        // Step 1: `from` is the declared field, matched by an ordinary matcher.
        assert!(matches!(t.steps[0].args[0].1, StepArg::Match(_)));
        // Step 2: the field `from` holds a reference.
        match &t.steps[1].args[0].1 {
            StepArg::Object { fields, .. } => {
                assert_eq!(fields[0].0, "from");
                assert!(
                    matches!(&fields[0].1, StepArg::From(r) if r.text == "send_email.result.sender")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_from_key_beside_others_that_names_no_result_is_a_plain_field() {
        let text = "tools:
  - {name: report, description: d, parameters: {type: object, properties: {range: {type: object}}}}
cases:
  - id: c
    kind: should_call
    prompt: hi
    expect:
      calls: [{tool: report, args: {range: {from: 2020, to: 2021}}}]
      trajectory: {steps: [{tool: report, args: {range: {from: 2020, to: 2021}}}]}
mocks: {report: [{result: {}}]}
";
        let suite = crate::suite::load_str(text, std::path::Path::new("s.yaml")).unwrap();
        let t = suite.cases[0]
            .loop_expect
            .as_ref()
            .unwrap()
            .trajectory
            .as_ref()
            .unwrap();
        assert!(matches!(t.steps[0].args[0].1, StepArg::Match(_)));
    }

    #[test]
    fn step_arguments_are_checked_like_calls() {
        let p = problems(
            "      trajectory:
        steps:
          - {tool: get_order, args: {id: A1}}
          - {tool: get_order, args: {order_id: {regex: \"(\"}}}
      final: {regex: \"[\"}
",
        );
        let fields: Vec<&str> = p.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "cases[0].expect.trajectory.steps[0].args.id",
                "cases[0].expect.trajectory.steps[1].args.order_id.regex",
                "cases[0].expect.final.regex",
            ],
            "{p:?}"
        );
        assert_eq!(
            p[0].2,
            "step names unknown parameter `id` of tool `get_order`"
        );
    }

    #[test]
    fn empty_steps_a_trajectory_without_calls_and_per_mode_loop_keys_are_refused() {
        let p = problems("      trajectory: {steps: []}\n");
        assert_eq!(p[0].2, "`trajectory.steps` is empty");
        let text = "tools:
  - {name: t, description: d, parameters: {type: object}}
cases:
  - id: c
    kind: should_not_call
    prompt: hi
    expect: {trajectory: {steps: [{tool: t}]}}
  - id: d
    kind: should_call
    prompt: hi
    expect: {calls: [{tool: t}]}
    per_mode: [{modes: [required], kind: should_call, expect: {calls: [{tool: t}], never: [t]}}]
mocks: {t: [{result: {}}]}
";
        let Err(crate::suite::SuiteError::Invalid(d)) =
            crate::suite::load_str(text, std::path::Path::new("s.yaml"))
        else {
            panic!("must be refused");
        };
        let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            vec![
                "a `should_not_call` case expects no calls, so it has no trajectory",
                "loop expectations (`trajectory`, `never`, `final`, `stop`) can not differ per mode",
            ]
        );
    }
}
