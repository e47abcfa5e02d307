//! Scoring profiles: the judge a suite declares (`profile:`) in place of toolgauge's own
//! checks, one plugin per benchmark.
//!
//! Today's checks (`crate::judge::calls::CaseScorer`) are the default judge: every suite
//! gets them, and they feed the metrics. A profile adds three things, each answered by
//! the plugin's own module so that `suite` and `score` know no benchmark:
//! - what its settings are ([`ProfileSpec`], part of the suite format and its schema) and
//!   how they are checked when the suite compiles ([`Profile::compile`]);
//! - how it reads expectations ([`Profile::reads_unlisted_args`],
//!   [`Profile::check_expected_value`]): a benchmark's answers may be written in a way
//!   toolgauge's matchers alone would refuse;
//! - the verdict of each case ([`Profile::case_judge`], a [`CaseJudge`] prepared once per
//!   case), with the per-tool work done ahead of scoring ([`Profile::prepare`]).
//!
//! Adding a profile is a variant in [`ProfileSpec`] and [`Profile`] and a match arm in
//! each method here; its logic lives in its own module (BFCL's: [`crate::bfcl::profile`]).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::judge::calls::Reason;
use crate::provider::Response;
use crate::suite::{Case, Suite};

/// A scoring profile.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum ProfileSpec {
    /// Score as the Berkeley Function Calling Leaderboard's AST checker does.
    Bfcl(crate::bfcl::profile::BfclProfileSpec),
}

/// How a suite's verdicts are reached: the compiled profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Profile {
    /// toolgauge's matchers.
    #[default]
    Default,
    /// BFCL's AST checker (see `crate::bfcl`).
    Bfcl(crate::bfcl::profile::BfclProfile),
}

/// A problem with a declared profile's settings, located in the suite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProblem {
    /// Line and column of the offending value.
    pub at: (u32, u32),
    /// The field's path, e.g. `profile.bfcl.category`.
    pub field: String,
    /// What is wrong, with the value.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// Why a profile can not read an expected argument value: the message and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProblem {
    /// What is wrong.
    pub message: String,
    /// How to write it instead.
    pub hint: String,
}

/// A profile's judge of one case, prepared once per case and asked once per trial.
///
/// The default checks still run on every response (they feed the metrics); a case judge
/// decides the verdict and its reasons.
pub trait CaseJudge: Send + Sync {
    /// The reasons `response` fails (none when it passes).
    fn reasons(&self, response: &Response) -> Vec<Reason>;

    /// The tool a call named `called` means, when the profile lets models name tools
    /// otherwise than the suite does (e.g. `_` for `.`); `None`: the name as called.
    /// The default checks (known tool, schema, tool selection) then see the tool meant.
    fn tool_meant(&self, called: &str) -> Option<&str> {
        let _ = called;
        None
    }
}

impl Profile {
    /// Check the declared `spec` (`None`: no `profile:`) and build the profile; problems
    /// are pushed to `problems` (the profile is still returned, so later checks go on).
    pub fn compile(spec: Option<&ProfileSpec>, problems: &mut Vec<SpecProblem>) -> Profile {
        match spec {
            None => Profile::Default,
            Some(ProfileSpec::Bfcl(b)) => Profile::Bfcl(b.compile(problems)),
        }
    }

    /// Expectations may name arguments the tool's schema does not list (a benchmark's
    /// answers can, and it scores them as they are).
    pub fn reads_unlisted_args(&self) -> bool {
        match self {
            Profile::Default => false,
            Profile::Bfcl(_) => crate::bfcl::profile::READS_UNLISTED_ARGS,
        }
    }

    /// Whether the profile can read `value`, an expected argument's matcher as written.
    pub fn check_expected_value(&self, value: &Value) -> Result<(), ValueProblem> {
        match self {
            Profile::Default => Ok(()),
            Profile::Bfcl(_) => crate::bfcl::profile::check_expected_value(value),
        }
    }

    /// Do now the per-tool work that judging `suite`'s cases will need (a run calls this
    /// on the thread that loads the next suite).
    pub fn prepare(&self, suite: &Suite) {
        match self {
            Profile::Default => {}
            Profile::Bfcl(p) => p.prepare(suite),
        }
    }

    /// The judge of `case` of `suite`; `None` under the default profile (the default
    /// checks decide).
    pub fn case_judge(&self, suite: &Suite, case: &Case) -> Option<Box<dyn CaseJudge>> {
        match self {
            Profile::Default => None,
            Profile::Bfcl(p) => Some(Box::new(p.case_judge(suite, case))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::judge::calls::{CaseScorer, InvalidReason};
    use crate::provider::{ToolCall, ToolChoice};

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
        assert_eq!(default.profile, Profile::Default);
        assert!(matches!(&bfcl.profile, Profile::Bfcl(p) if p.category == "simple_python"));

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
        assert!(!Profile::Default.reads_unlisted_args());
        assert_eq!(
            Profile::Default.check_expected_value(&serde_json::json!({"regex": "a+"})),
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
