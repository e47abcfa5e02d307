//! The `bfcl` scoring profile: a case's verdict is BFCL's AST checker's verdict on the
//! response. The suite declares it (`profile: {bfcl: {category: ...}}`, [`BfclProfileSpec`]);
//! the case's tools and expectation are read back into BFCL's function declarations and
//! possible answer (see [`super::import`]), and the response is decoded as BFCL decodes a
//! result. The plugin registers itself in the profile registries
//! ([`crate::suite::profile::ProfileFormat`] for its settings,
//! [`crate::judge::profile::ProfileJudge`] for its judge): [`BfclProfile`] is the
//! compiled profile, [`BfclCase`] the judge of one case.
//!
//! toolgauge's own checks (valid JSON, known tool, schema, grounding) are still made and
//! feed the metrics; only the verdict and its reason come from the checker. The reason's
//! code is BFCL's error type (e.g. `value_error:string`), so failures can be put side by
//! side with BFCL's score files.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::checker::{self, Category, Function, GroundTruthCall, Options};
use super::decode;
use super::import::{inferred, options_of};
use super::import_multi::{CATEGORIES as MULTI_TURN_CATEGORIES, is_multi_turn};
use super::multi_turn_judge::MultiTurnCase;
use super::result::{RAW_KEY, STYLE_KEY};
use super::value::{Decoded, PyValue};
use crate::judge::Reason;
use crate::judge::profile::{CaseJudge, ProfileJudge, ScoringProfile};
use crate::provider::Response;
use crate::suite::profile::{
    CompiledProfile, ProfileFormat, ProfileSettings, SpecProblem, ValueProblem,
};
use crate::suite::span::Spanned;
use crate::suite::{Case, Expectation, Suite, Tool};

/// The BFCL categories `profile: {bfcl: {category}}` accepts (the single-turn ones).
pub const CATEGORIES: [&str; 11] = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
];

/// BFCL answers name parameters their schemas lack (a data defect BFCL scores as it is),
/// so the profile keeps expectations of arguments the tool does not list.
pub const READS_UNLISTED_ARGS: bool = true;

/// The profile's name: its key under `profile:`.
pub const NAME: &str = "bfcl";

/// `run.json` keys of the profile's flags (kept so `--resume` runs with the same).
pub const STRICT_KEY: &str = "bfcl_strict";
/// See [`STRICT_KEY`].
pub const UNDERSCORE_KEY: &str = "bfcl_underscore_names";

inventory::submit! {
    ProfileFormat {
        name: NAME,
        about: "Score as the Berkeley Function Calling Leaderboard's AST checker does.",
        schema: |g| g.subschema_for::<BfclProfileSpec>(),
        read: |d| {
            let spec: BfclProfileSpec = erased_serde::deserialize(d)?;
            Ok(Box::new(spec))
        },
    }
}

inventory::submit! {
    ProfileJudge {
        name: NAME,
        judge: |p| p.as_any().downcast_ref::<BfclProfile>().map(|b| b as &dyn ScoringProfile),
    }
}

/// Settings of the `bfcl` profile.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BfclProfileSpec {
    /// The BFCL category the cases come from (e.g. `simple_python`, `live_parallel`); it
    /// selects BFCL's checker (simple, multiple, parallel, irrelevance or relevance).
    pub category: Spanned<String>,
    /// Reproduce BFCL exactly, its known defects included (`--bfcl-strict`).
    #[serde(default)]
    pub strict: bool,
    /// Expect `_` where BFCL's function names have `.`, as BFCL does for function-calling
    /// APIs (`--bfcl-underscore-names`).
    #[serde(default)]
    pub underscore_names: bool,
}

impl ProfileSettings for BfclProfileSpec {
    /// The profile these settings declare; an unknown category is a problem (the
    /// profile is still built, so the rest of the suite is checked too).
    fn compile(&self, problems: &mut Vec<SpecProblem>) -> Arc<dyn CompiledProfile> {
        let c = self.category.value.as_str();
        if !CATEGORIES.contains(&c) && !MULTI_TURN_CATEGORIES.contains(&c) {
            problems.push(SpecProblem {
                at: self.category.at(),
                field: "profile.bfcl.category".into(),
                message: format!("unknown BFCL category `{}`", self.category.value),
                hint: Some(format!(
                    "the categories are: {}, {}",
                    CATEGORIES.join(", "),
                    MULTI_TURN_CATEGORIES.join(", ")
                )),
            });
        }
        Arc::new(BfclProfile {
            category: self.category.value.clone(),
            strict: self.strict,
            underscore_names: self.underscore_names,
            functions: FunctionCache::default(),
        })
    }
}

impl CompiledProfile for BfclProfile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn reads_unlisted_args(&self) -> bool {
        READS_UNLISTED_ARGS
    }

    fn check_expected_value(&self, value: &Value) -> Result<(), ValueProblem> {
        check_expected_value(value)
    }

    /// BFCL reads each expected value as its list of acceptable answers.
    fn reads_values_as_options(&self) -> bool {
        true
    }

    fn run_settings(&self) -> serde_json::Map<String, Value> {
        let mut out = serde_json::Map::new();
        if self.strict {
            out.insert(STRICT_KEY.into(), Value::Bool(true));
        }
        if self.underscore_names {
            out.insert(UNDERSCORE_KEY.into(), Value::Bool(true));
        }
        out
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl ScoringProfile for BfclProfile {
    fn prepare(&self, suite: &Suite) {
        BfclProfile::prepare(self, suite);
    }

    fn case_judge(&self, suite: &Suite, case: &Case) -> Box<dyn CaseJudge> {
        if is_multi_turn(&self.category) {
            return Box::new(MultiTurnCase::new(case, self.strict));
        }
        Box::new(BfclProfile::case_judge(self, suite, case))
    }
}

/// The `bfcl` profile's settings, and its per-tool work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BfclProfile {
    /// The BFCL category (selects the checker).
    pub category: String,
    /// Reproduce BFCL's known defects.
    pub strict: bool,
    /// Expect `_` for `.` in function names.
    pub underscore_names: bool,
    /// Each tool's BFCL declaration, read once per tool of the suite.
    functions: FunctionCache,
}

impl BfclProfile {
    /// The profile of `category` with these settings.
    pub fn new(category: &str, strict: bool, underscore_names: bool) -> BfclProfile {
        BfclProfile {
            category: category.to_string(),
            strict,
            underscore_names,
            functions: FunctionCache::default(),
        }
    }

    /// Read every tool of `suite` as BFCL's checker declares it, now rather than while
    /// scoring.
    pub fn prepare(&self, suite: &Suite) {
        for entry in self.functions.of(suite).values() {
            let _ = entry.function();
        }
    }

    /// The judge of `case` of `suite`.
    pub fn case_judge(&self, suite: &Suite, case: &Case) -> BfclCase {
        BfclCase::new(suite, case, self)
    }

    /// `tool` (one of `suite`'s) as BFCL's checker declares it, or why it can not be.
    pub fn function(&self, suite: &Suite, tool: &Arc<Tool>) -> Result<Function, String> {
        match self.functions.of(suite).get(&key(tool)) {
            Some(entry) => entry.function().clone(),
            // Not one of the suite's tools: read it without keeping it.
            None => declare(tool),
        }
    }
}

/// Whether the profile can read `value`, an expected argument's matcher: the profile
/// reads each matcher as BFCL's list of acceptable values.
pub fn check_expected_value(value: &Value) -> Result<(), ValueProblem> {
    options_of(value).map(|_| ()).map_err(|e| ValueProblem {
        message: format!("the bfcl profile can not read this matcher: {e}"),
        hint: "under `profile: {bfcl: ...}` write a value, `{eq: V}`, `{one_of: [...]}` (with `optional: true` for BFCL's \"\") or `{absent: true}`".into(),
    })
}

/// The BFCL declaration of every tool of one suite, keyed by the tool's address (cases
/// that declare the same tool share one [`Tool`], see `suite::model::CaseTools`). Built
/// on first use from the suite; each declaration is read on first use, once.
#[derive(Default)]
struct FunctionCache(OnceLock<HashMap<usize, CachedFunction>>);

/// One tool and its declaration once read. Holding the tool keeps its address from
/// being reused while the cache lives.
struct CachedFunction {
    tool: Arc<Tool>,
    function: OnceLock<Result<Function, String>>,
}

impl CachedFunction {
    fn function(&self) -> &Result<Function, String> {
        self.function.get_or_init(|| declare(&self.tool))
    }
}

/// The cache's key of `tool`.
fn key(tool: &Arc<Tool>) -> usize {
    Arc::as_ptr(tool) as usize
}

impl FunctionCache {
    /// The declarations of `suite`'s tools (the suite's and every case's own).
    fn of(&self, suite: &Suite) -> &HashMap<usize, CachedFunction> {
        self.0.get_or_init(|| {
            let mut map = HashMap::new();
            let own = suite.cases.iter().filter_map(|c| c.tools.as_deref());
            for tool in std::iter::once(suite.tools.as_slice()).chain(own).flatten() {
                map.entry(key(tool)).or_insert_with(|| CachedFunction {
                    tool: tool.clone(),
                    function: OnceLock::new(),
                });
            }
            map
        })
    }
}

impl Clone for FunctionCache {
    /// A copy of the profile may go with another suite: it starts empty.
    fn clone(&self) -> Self {
        FunctionCache::default()
    }
}

impl PartialEq for FunctionCache {
    /// A cache is not part of what a profile is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for FunctionCache {}

impl std::fmt::Debug for FunctionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let read = self.0.get().map_or(0, HashMap::len);
        write!(f, "FunctionCache({read} tools)")
    }
}

/// What scoring one case under the profile needs, prepared once per case.
pub struct BfclCase {
    category: Category,
    functions: Vec<Function>,
    ground_truth: Vec<GroundTruthCall>,
    options: Options,
    /// Set when the case could not be read back (its verdict is then a failure that
    /// says why, rather than a guess).
    problem: Option<String>,
    /// Under `underscore_names`: the case's dotted tool names by the underscored names
    /// models call them (see [`CaseJudge::tool_meant`]).
    dotted: Vec<(String, String)>,
}

/// `tool` as BFCL's checker declares it, or why it can not be.
fn declare(tool: &Tool) -> Result<Function, String> {
    let decl = json!({"name": tool.name, "parameters": checked_part(&tool.parameters)});
    Function::from_bfcl(&decl).map_err(|e| format!("tool `{}`: {e}", tool.name))
}

/// The part of a tool's parameter schema that BFCL's checker reads, in BFCL's form: each
/// top-level property's type and its items' type, and `required`. Reading it gives the
/// same declaration as reading the whole schema converted by
/// [`to_bfcl_schema`](super::import::to_bfcl_schema), without
/// copying descriptions, enums and nested properties (a test holds the two equal).
fn checked_part(parameters: &Value) -> Value {
    // A node's BFCL type as `import::to_bfcl_schema` writes it.
    fn typed(node: &Value) -> Value {
        let Value::Object(o) = node else {
            return Value::Null;
        };
        let mut out = serde_json::Map::new();
        // As `to_bfcl_schema` writes `type`: the BFCL type a JSON type stands for, else
        // the value as it is (without building the converted node).
        let ty = o.get("x-bfcl-type").cloned().or_else(|| {
            let t = o.get("type")?;
            Some(inferred(t.as_str()).map_or_else(|| t.clone(), |b| Value::String(b.into())))
        });
        if let Some(t) = ty {
            out.insert("type".into(), t);
        }
        if let Some(items) = o.get("items") {
            out.insert("items".into(), typed(items));
        }
        Value::Object(out)
    }
    let Value::Object(o) = parameters else {
        return parameters.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in o {
        match k.as_str() {
            "properties" => {
                let props = v
                    .as_object()
                    .map(|p| p.iter().map(|(n, s)| (n.clone(), typed(s))).collect())
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Object(props));
            }
            "required" | "x-bfcl-required" => {
                out.insert("required".into(), v.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

impl BfclCase {
    /// Prepare `case` of `suite` under profile `p`.
    pub fn new(suite: &Suite, case: &Case, p: &BfclProfile) -> BfclCase {
        let mut problem = None;
        let functions = case
            .tools(suite)
            .iter()
            .filter_map(|t| p.function(suite, t).map_err(|e| problem = Some(e)).ok())
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
                ground_truth.push(GroundTruthCall {
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
            dotted: if p.underscore_names {
                case.tools(suite)
                    .iter()
                    .filter(|t| t.name.contains('.'))
                    .map(|t| (t.name.replace('.', "_"), t.name.clone()))
                    .collect()
            } else {
                Vec::new()
            },
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

impl CaseJudge for BfclCase {
    fn reasons(&self, response: &Response) -> Vec<Reason> {
        BfclCase::reasons(self, response)
    }

    /// Under `underscore_names`, `a_b` means the case's tool `a.b`, so toolgauge's own
    /// checks (known tool, schema, tool selection) see the tool that was meant.
    fn tool_meant(&self, called: &str) -> Option<&str> {
        self.dotted
            .iter()
            .find(|(u, _)| u == called)
            .map(|(_, d)| d.as_str())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::import::{to_bfcl_schema, to_json_schema};

    /// The declaration read from the checked part equals the one read from the whole
    /// converted schema.
    fn assert_same_declaration(parameters: &Value) {
        let read = |p: Value| {
            format!(
                "{:?}",
                Function::from_bfcl(&json!({"name": "f", "parameters": p}))
            )
        };
        assert_eq!(
            read(checked_part(parameters)),
            read(to_bfcl_schema(parameters)),
            "{parameters}"
        );
    }

    #[test]
    fn the_checked_part_declares_what_the_whole_schema_does() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/fixtures/bfcl/data"
        );
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue; // possible_answer/
            };
            for line in text.lines().filter(|l| l.contains("\"function\"")) {
                let item: Value = serde_json::from_str(line).unwrap();
                for f in item["function"].as_array().into_iter().flatten() {
                    assert_same_declaration(&to_json_schema(&f["parameters"]));
                    n += 1;
                }
            }
        }
        assert!(n > 100, "only {n} functions in the sample");
        for odd in [
            json!({"type": "object", "properties": {"a": {"type": "array"}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": "x"}}}),
            json!({"type": "object", "properties": {"a": {"x-bfcl-type": "tuple", "type": "array", "items": {"type": "number"}}}}),
            json!({"type": "object", "properties": {"a": {"x-bfcl-type": "any"}, "b": {}, "c": 3}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            json!({"type": "object", "properties": {"a": {"type": "mystery"}}}),
            json!({"type": "object", "properties": [1, 2]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-bfcl-required": true}),
            json!({"type": "object", "required": ["a", 3]}),
            json!({"type": "object"}),
            json!("not a schema"),
        ] {
            assert_same_declaration(&odd);
        }
    }
}

/// The profile seam as the judge sees it (moved from `judge/profile.rs` with the seam).
#[cfg(test)]
mod seam_tests {
    use std::path::Path;

    use super::*;
    use crate::judge::calls::{CaseScorer, InvalidReason};
    use crate::provider::{ToolCall, ToolChoice};
    use crate::suite::Profile;

    /// Two cases, each offering one tool (BFCL's simple category checks an item's only
    /// function), under the profile `profile` (`""`: none, the default judge).
    fn suite(profile: &str) -> Suite {
        let text = format!(
            r#"
name: seam
{profile}
cases:
  - id: factorial
    kind: should_call
    prompt: "What is 5 factorial?"
    tools:
      - name: math.factorial
        description: n!
        parameters: {{ type: object, properties: {{ number: {{ type: integer }} }}, required: [number] }}
    expect: {{ calls: [{{ tool: math.factorial, args: {{ number: 5 }} }}] }}
  - id: weather
    kind: should_call
    prompt: "Weather in San Francisco?"
    tools:
      - name: weather
        description: The weather in a city.
        parameters: {{ type: object, properties: {{ city: {{ type: string }} }}, required: [city] }}
    expect: {{ calls: [{{ tool: weather, args: {{ city: "San Francisco" }} }}] }}
"#
        );
        crate::suite::load_str(&text, Path::new("seam.yaml")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn call(name: &str, arguments: &str) -> Response {
        Response {
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: name.into(),
                arguments: arguments.into(),
            }],
            ..Response::default()
        }
    }

    /// The reason codes of `response` to case `id`, and whether its first call was to a
    /// tool the default checks know.
    fn judged(suite: &Suite, id: &str, response: &Response) -> (Vec<String>, bool) {
        let case = suite.cases.iter().find(|c| c.id == id).unwrap();
        let (checks, reasons) = CaseScorer::new(suite, case).score(&ToolChoice::Auto, response);
        let known = checks.calls.first().is_some_and(|c| c.known_tool);
        (reasons.into_iter().map(|r| r.code).collect(), known)
    }

    #[test]
    fn the_declared_profile_judges_and_the_default_judge_does_without_one() {
        let default = suite("");
        let bfcl = suite("profile: { bfcl: { category: simple_python, underscore_names: true } }");
        assert!(default.profile.get().is_none());
        assert!(
            matches!(bfcl.profile.downcast::<BfclProfile>(), Some(p) if p.category == "simple_python")
        );

        // A function-calling API can not send `.`: BFCL expects `_`. The default judge
        // sees an unknown tool; the bfcl judge passes the call and tells the default
        // checks which tool was meant, so they see it as known.
        let underscored = call("math_factorial", r#"{"number": 5}"#);
        assert_eq!(
            judged(&default, "factorial", &underscored),
            (
                vec![
                    "unknown_tool".to_string(),
                    "missed_call".to_string(),
                    "extra_calls".to_string()
                ],
                false
            )
        );
        assert_eq!(judged(&bfcl, "factorial", &underscored), (vec![], true));

        // BFCL compares strings after lowercasing them and dropping spaces and
        // punctuation; toolgauge's matcher compares them as written.
        let lower = call("weather", r#"{"city": "san francisco"}"#);
        assert_eq!(
            judged(&default, "weather", &lower),
            (vec!["args_mismatch".to_string()], true)
        );
        assert_eq!(judged(&bfcl, "weather", &lower), (vec![], true));

        // A float where BFCL declares an integer: BFCL's type error, which the default
        // judge (JSON Schema and its matcher: 5.0 is the integer 5) does not see.
        assert_eq!(
            judged(
                &default,
                "factorial",
                &call("math.factorial", r#"{"number": 5.0}"#)
            ),
            (vec![], true)
        );
        assert_eq!(
            judged(
                &bfcl,
                "factorial",
                &call("math_factorial", r#"{"number": 5.0}"#)
            ),
            (vec!["type_error:simple".to_string()], true)
        );
        // Under `underscore_names`, BFCL refuses the dotted name itself.
        assert_eq!(
            judged(
                &bfcl,
                "factorial",
                &call("math.factorial", r#"{"number": 5}"#)
            ),
            (
                vec!["simple_function_checker:wrong_func_name".to_string()],
                true
            )
        );

        // The default checks still run under the profile (they feed the metrics).
        let case = &bfcl.cases[0];
        let (checks, _) = CaseScorer::new(&bfcl, case)
            .score(&ToolChoice::Auto, &call("math.factorial", "{not json"));
        assert_eq!(checks.calls[0].invalid, Some(InvalidReason::InvalidJson));
    }

    #[test]
    fn a_profile_reads_expectations_its_own_way_when_the_suite_compiles() {
        assert!(!Profile::default().reads_unlisted_args());
        assert_eq!(
            Profile::default().check_expected_value(&serde_json::json!({"regex": "a+"})),
            Ok(())
        );
        let bfcl = suite("profile: { bfcl: { category: simple_python } }").profile;
        assert!(bfcl.reads_unlisted_args());
        let e = bfcl
            .check_expected_value(&serde_json::json!({"regex": "a+"}))
            .unwrap_err();
        assert!(
            e.message
                .starts_with("the bfcl profile can not read this matcher: "),
            "{e:?}"
        );
        assert_eq!(
            bfcl.check_expected_value(&serde_json::json!({"one_of": [1, 2]})),
            Ok(())
        );
    }
}
