//! The call checks: every check on every call of a turn, and the verdict of a case's
//! expectation with all its reasons. This is the judge of single-turn trials and of an
//! episode's first round (it lives in `judge/`, where every verdict is decided; the
//! metrics in `score/` only read what it found).
//!
//! The checks are facts (did the arguments parse, is the tool known, do they validate,
//! which required parameters are present, which values are ungrounded); the verdict
//! compares the calls with the case's expectation under the trial's tool_choice mode.
//! Definitions are in `docs/metrics.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::call_check::{CallCheck, InvalidReason};
use super::call_check::{Named, call_reasons};
use super::observed::{Observed, meaning};
use crate::behaviour::{Behaviour, BehaviourFacts};
use crate::chat::ToolDefinition;
use crate::judge::model::JudgeVerdicts;
use crate::judge::profile::CaseJudge;
use crate::provider::{Message, Response, ToolCall, ToolChoice};
use crate::suite::matcher::field_mismatches;
use crate::suite::model::NormalizeRule;
use crate::suite::{
    CallsExpectation, Case, CaseKind, Expectation, ExtraArgs, Normalizer, Outcome, Suite,
    TextChecks,
};
use crate::util::assign;

/// A reason a trial failed (or errored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// Stable code, e.g. `missed_call`, `args_mismatch`.
    pub code: String,
    /// Human explanation with the values involved.
    pub message: String,
    /// The rounds of a loop trial (1-based, ascending) the reason points at: where the
    /// call it is about was made, or the round of the final answer it judged. The report's
    /// round view marks those rounds with it. Empty for single-turn reasons and for
    /// reasons about the episode as a whole (a missing step, a wrong order); absent from
    /// records then, so those read as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
}

impl Reason {
    /// A reason with a stable `code` and a message.
    pub fn new(code: &str, message: impl Into<String>) -> Reason {
        Reason {
            code: code.to_string(),
            message: message.into(),
            rounds: Vec::new(),
        }
    }

    /// The reason pinned to `rounds` (0-based round indices, as `Placed::round`): kept
    /// 1-based, sorted and without repeats.
    pub fn in_rounds(mut self, rounds: impl IntoIterator<Item = usize>) -> Reason {
        self.rounds = rounds.into_iter().map(|r| r as u32 + 1).collect();
        self.rounds.sort_unstable();
        self.rounds.dedup();
        self
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
    /// What the text answer did against the behaviour the case names (absent when the
    /// case names no text behaviour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<crate::behaviour::BehaviourFacts>,
}

/// Do now the per-tool work that scoring `suite` will need: the declared profile's (see
/// [`crate::judge::profile::prepare`]) and the argument validators of the tools
/// the cases expect to be called (compiled on first use otherwise). A run of several
/// suites calls this on the thread that loads the next suite, so the one running does not
/// wait for it.
pub fn prepare_ahead(suite: &Suite) {
    crate::judge::profile::prepare(suite);
    for case in &suite.cases {
        let tools = case.tools(suite);
        let expected: Vec<&str> = match &case.expect {
            Expectation::Calls(c) => c.calls.iter().map(|c| c.tool.as_str()).collect(),
            _ => Vec::new(),
        };
        for t in tools.iter().filter(|t| expected.contains(&t.name.as_str())) {
            let _ = t.validator();
        }
    }
}

/// The text values are grounded in: every message's text and earlier call arguments
/// (with the strings inside JSON results and arguments), normalised.
fn grounding_text(messages: &[Message], norm: &Normalizer) -> String {
    let mut text = String::new();
    for m in messages {
        if let Some(t) = m.text() {
            text.push_str(&norm.apply(t));
            text.push('\n');
            if matches!(m, Message::Tool { .. }) {
                push_json_strings(&mut text, t, norm);
            }
        }
        if let Message::Assistant { tool_calls, .. } = m {
            for c in tool_calls {
                text.push_str(&norm.apply(&c.arguments));
                text.push('\n');
                push_json_strings(&mut text, &c.arguments, norm);
            }
        }
    }
    text
}

/// What scoring a case needs, prepared once per case (the grounding text is the costly
/// part: the whole conversation, normalised).
pub struct CaseScorer<'a> {
    suite: &'a Suite,
    case: &'a Case,
    grounding: String,
    /// The grounding text of each variant that sends this case another conversation
    /// (a system prompt of its own).
    variant_grounding: Vec<(String, String)>,
    grounding_norm: Normalizer,
    /// The judge of the profile the suite declares (`None`: these checks decide).
    judge: Option<Box<dyn CaseJudge>>,
    /// Its trials record [`TrialChecks::behaviour`] (see [`CaseScorer::records_behaviour`]).
    records_behaviour: bool,
}

impl<'a> CaseScorer<'a> {
    /// Prepare scoring for every case of `suite`, in case order.
    pub fn for_suite(suite: &'a Suite) -> Vec<Self> {
        suite.cases.iter().map(|c| Self::new(suite, c)).collect()
    }

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
        let text = grounding_text(&case.messages, &grounding_norm);
        // Variants with a system prompt of their own send another conversation: values
        // are grounded in what each sent.
        let variant_grounding = suite
            .variant_systems
            .keys()
            .filter_map(|v| match suite.messages_in(case, v) {
                std::borrow::Cow::Owned(m) => {
                    Some((v.clone(), grounding_text(&m, &grounding_norm)))
                }
                std::borrow::Cow::Borrowed(_) => None,
            })
            .collect();
        let judge = crate::judge::profile::case_judge(suite, case);
        let records_behaviour = suite.names_behaviours
            || std::iter::once(&case.expect)
                .chain(case.per_mode.iter().map(|o| &o.expect))
                .any(Expectation::names_text_behaviour);
        CaseScorer {
            suite,
            case,
            grounding: text,
            variant_grounding,
            grounding_norm,
            judge,
            records_behaviour,
        }
    }

    /// The declared profile's verdict on a played tool loop of this case
    /// ([`CaseJudge::episode_reasons`]); `None` under the default checks.
    pub fn episode_reasons(&self, outcome: &crate::episode::EpisodeOutcome) -> Option<Vec<Reason>> {
        self.judge.as_ref()?.episode_reasons(outcome)
    }

    /// Whether this case's trials record their behaviour facts
    /// ([`TrialChecks::behaviour`]): when the suite names a text behaviour with the
    /// issue-13 keys (`behaviour:` or a `cannot_answer` or `direct` outcome, anywhere in
    /// the suite: every case then counts in the confusion matrix, a `should_call` case
    /// as `tool_call`), or when this case's own expectation names one (also a `clarify`
    /// outcome). Other suites keep their records as they were.
    pub fn records_behaviour(&self) -> bool {
        self.records_behaviour
    }

    /// Whether the verdict on a text answer to this case under `mode` depends on the
    /// answer's behaviour (`behaviour:`, or a `clarify`, `cannot_answer` or `direct`
    /// outcome in force): the text answers a judge model is asked about.
    pub fn needs_behaviour(&self, mode: &ToolChoice) -> bool {
        self.case.effective(mode).1.names_text_behaviour()
    }

    /// Whether a judge model, when the suite has one, should be asked the behaviour of
    /// `response` under `mode`: it made no call (a call is `tool_call`, no one need
    /// read it), and either the verdict depends on it ([`CaseScorer::needs_behaviour`])
    /// or the trial records its behaviour ([`CaseScorer::records_behaviour`]).
    pub fn wants_judged_behaviour(&self, mode: &ToolChoice, response: &Response) -> bool {
        response.tool_calls.is_empty() && (self.records_behaviour || self.needs_behaviour(mode))
    }

    /// The normalised conversation values are grounded in under `variant`.
    fn grounding_in(&self, variant: Option<&str>) -> &str {
        variant
            .and_then(|v| self.variant_grounding.iter().find(|(name, _)| name == v))
            .map_or(&self.grounding, |(_, g)| g)
    }

    /// `response` with each call naming the tool the judge says it means (see
    /// [`CaseJudge::tool_meant`]); `None` when nothing needs renaming.
    fn renamed(&self, response: &Response) -> Option<Response> {
        let judge = self.judge.as_ref()?;
        let rename = |name: &str| judge.tool_meant(name).map(str::to_string);
        if !response
            .tool_calls
            .iter()
            .any(|c| rename(&c.name).is_some())
        {
            return None;
        }
        let mut r = response.clone();
        for c in &mut r.tool_calls {
            if let Some(d) = rename(&c.name) {
                c.name = d;
            }
        }
        Some(r)
    }

    /// Score `response` to this case under `mode`: the checks, and the reasons it
    /// failed (none when it passed). Arguments are checked against the tools' own
    /// schemas; see [`CaseScorer::score_variant`].
    pub fn score(&self, mode: &ToolChoice, response: &Response) -> (TrialChecks, Vec<Reason>) {
        self.score_in(None, &[], mode, response, None)
    }

    /// Score `response` to this case under `variant` and `mode`: arguments are checked
    /// against the schemas the variant offered, and grounded in the conversation it sent.
    pub fn score_variant(
        &self,
        variant: &str,
        mode: &ToolChoice,
        response: &Response,
    ) -> (TrialChecks, Vec<Reason>) {
        self.score_in(Some(variant), &[], mode, response, None)
    }

    /// [`CaseScorer::score_variant`] with the judge model's verdicts.
    ///
    /// The observed behaviour of the response is `tool_call` when it made any call,
    /// else the judge's behaviour verdict when `judged` holds one, else what the
    /// built-in [`classify()`](crate::behaviour::classify()) reads in the text. `clarify`, `cannot_answer` and `direct`
    /// outcomes, and `behaviour:` of a `should_not_call` case, hold when the observed
    /// behaviour is theirs (`wrong_behaviour` names the miss of `behaviour:`). A rubric
    /// verdict of `false` adds `rubric_failed` with the judge's rationale.
    /// `judged: None` is [`CaseScorer::score_variant`].
    pub fn score_judged(
        &self,
        variant: &str,
        mode: &ToolChoice,
        response: &Response,
        judged: Option<&JudgeVerdicts>,
    ) -> (TrialChecks, Vec<Reason>) {
        self.score_in(Some(variant), &[], mode, response, judged)
    }

    /// [`CaseScorer::score_judged`] for a trial that offered `distractors` beside the
    /// case's tools (a cell of `distractors:`): a call of one of them is a known tool,
    /// checked against its own schema, and a wrong one (`distractor_call`), not an
    /// unknown tool.
    pub fn score_offered(
        &self,
        variant: &str,
        distractors: &[&ToolDefinition],
        mode: &ToolChoice,
        response: &Response,
        judged: Option<&JudgeVerdicts>,
    ) -> (TrialChecks, Vec<Reason>) {
        self.score_in(Some(variant), distractors, mode, response, judged)
    }

    /// The reasons the calls of a later round of a loop fail on their own (not JSON, an
    /// unknown tool, a schema violation, a distractor), checked against the schemas
    /// `variant` offered and the trial's `distractors`: calls inside a loop are scored
    /// per call, as in the first round.
    pub fn invalid_calls(
        &self,
        variant: &str,
        distractors: &[&ToolDefinition],
        calls: &[ToolCall],
    ) -> Vec<Reason> {
        let response = Response {
            tool_calls: calls.to_vec(),
            ..Response::default()
        };
        let renamed = self.renamed(&response);
        let response = renamed.as_ref().unwrap_or(&response);
        let checks: Vec<CallCheck> = response
            .tool_calls
            .iter()
            .map(|c| {
                let parsed = serde_json::from_str::<Value>(&c.arguments).ok();
                self.check_call(Some(variant), distractors, c, parsed.as_ref())
            })
            .collect();
        call_reasons(&checks)
    }

    fn score_in(
        &self,
        variant: Option<&str>,
        distractors: &[&ToolDefinition],
        mode: &ToolChoice,
        response: &Response,
        judged: Option<&JudgeVerdicts>,
    ) -> (TrialChecks, Vec<Reason>) {
        let original = response;
        let renamed = self.renamed(response);
        let response = renamed.as_ref().unwrap_or(response);
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
            .map(|(c, p)| self.check_call(variant, distractors, c, p.as_ref()))
            .collect();
        let mut reasons = call_reasons(&calls);
        let called = !response.tool_calls.is_empty();
        let text = response.text.as_deref().unwrap_or("");
        let judged_behaviour = judged.and_then(|j| j.behaviour.as_ref());
        // Classify only what a verdict or a record reads (most suites name no behaviour).
        let observed =
            (self.records_behaviour || judged_behaviour.is_some() || expect.names_text_behaviour())
                .then(|| Observed::of(called, judged_behaviour, text));
        let mut args_matched = 0;
        let mut args_expected = 0;
        let mut expected_tools = Vec::new();
        match expect {
            // `any_call`: some call, to any tool.
            Expectation::Calls(e) if e.calls.is_empty() => {
                if !called {
                    reasons.push(Reason::new(
                        "missed_call",
                        "expected a call to any tool; none was made",
                    ));
                }
            }
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
                    if let (Some(want), Some(o)) = (t.behaviour, &observed)
                        && o.behaviour != want
                    {
                        reasons.push(Reason::new(
                            "wrong_behaviour",
                            format!(
                                "expected a text answer that is `{}` ({}); {}",
                                want.suite_name(),
                                meaning(want),
                                o.describe()
                            ),
                        ));
                    }
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
                            // Closest: most arguments matched, then most expected
                            // calls paired with a call of their tool.
                            if best.as_ref().is_none_or(|b| {
                                ok || (r.args_matched, r.paired) > (b.args_matched, b.paired)
                            }) && !passed_any
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
                        Outcome::Clarify(t) | Outcome::CannotAnswer(t) | Outcome::Direct(t) => {
                            let name = o.name();
                            let want = o.behaviour().unwrap_or(Behaviour::Direct);
                            match &observed {
                                _ if called => Err(format!("{name}: a tool was called")),
                                Some(seen) if seen.behaviour != want => {
                                    Err(format!("{name}: {}", seen.describe()))
                                }
                                _ => join_text_reasons(name, self.check_text(t, text)),
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
        // A declared profile decides the verdict; the checks above still feed the metrics.
        if let Some(judge) = &self.judge {
            reasons = judge.reasons(original);
        }
        if let Some((false, why)) = judged.and_then(|j| j.rubric.as_ref()) {
            reasons.push(Reason::new(
                "rubric_failed",
                format!(
                    "the judge found that the answer does not meet the rubric: {}",
                    if why.trim().is_empty() {
                        "(it gave no reason)".to_string()
                    } else {
                        clip(why.trim())
                    }
                ),
            ));
        }
        let behaviour = observed
            .filter(|_| self.records_behaviour || judged_behaviour.is_some())
            .map(|o| BehaviourFacts {
                expected: expect.expected_behaviour(),
                observed: o.behaviour,
                by: o.by,
                why: o.why,
            });
        let checks = TrialChecks {
            kind,
            called,
            calls,
            expected_tools,
            right_tools,
            args_matched,
            args_expected,
            behaviour,
        };
        (checks, reasons)
    }

    /// The checks of `call` (arguments `args`, parsed when they are JSON) against the
    /// case's tools and the trial's `distractors`, under `variant`.
    fn check_call(
        &self,
        variant: Option<&str>,
        distractors: &[&ToolDefinition],
        call: &ToolCall,
        args: Option<&Value>,
    ) -> CallCheck {
        let tool = Named::find(&call.name, self.case.tools(self.suite), distractors);
        let mut check = CallCheck {
            tool: clip(&call.name),
            id: call.id.as_deref().map(clip),
            json_ok: args.is_some(),
            known_tool: tool.is_some(),
            distractor: matches!(tool, Some(Named::Distractor(_))),
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
        let validator = match tool.validator(variant) {
            Ok(v) => v,
            Err(e) => {
                // Not checkable: the schema itself is broken (reported, not guessed).
                check.schema_errors = vec![format!(
                    "the schema of `{}` does not compile: {e}",
                    tool.name()
                )];
                return check;
            }
        };
        let valid = validator.is_valid(args);
        check.schema_ok = Some(valid);
        if !valid {
            check.invalid = Some(InvalidReason::SchemaViolation);
            check.schema_errors = validator
                .iter_errors(args)
                .take(3)
                .map(|e| {
                    // The message quotes the offending value, which may be the whole
                    // arguments: clipped, so that the journal keeps them once.
                    let at = e.instance_path().to_string();
                    if at.is_empty() {
                        clip(&e.to_string())
                    } else {
                        clip(&format!("{at}: {e}"))
                    }
                })
                .collect();
        }
        let required = tool.required(variant);
        check.required_total = required.len() as u32;
        if let Some(obj) = args.as_object() {
            for r in required {
                if obj.contains_key(&r) {
                    check.required_present += 1;
                } else {
                    check.missing_required.push(r);
                }
            }
            for (k, v) in obj {
                self.ground(variant, k, v, tool.property(variant, k), &mut check);
            }
        } else {
            check.missing_required = required;
        }
        check
    }

    /// Record string values under `path` that appear nowhere in the conversation,
    /// skipping parameters whose schema offers the value (enum, const, default).
    fn ground(
        &self,
        variant: Option<&str>,
        path: &str,
        v: &Value,
        schema: Option<&Value>,
        check: &mut CallCheck,
    ) {
        // Parameters with an enum, const or default offer their values in the tool
        // definition, so a value there is not a fabrication of missing information (an
        // out-of-enum value is caught as a schema violation instead).
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
                if !self.grounding_in(variant).contains(n) {
                    check
                        .ungrounded
                        .push(format!("{path} = {}", crate::suite::matcher::show(v)));
                }
            }
            Value::Array(items) => {
                let item = schema.and_then(|s| s.get("items"));
                for (i, x) in items.iter().enumerate() {
                    self.ground(variant, &format!("{path}[{i}]"), x, item, check);
                }
            }
            Value::Object(map) => {
                let props = schema.and_then(|s| s.get("properties"));
                for (k, x) in map {
                    self.ground(
                        variant,
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
            && !re.is_match(&hay)
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
                .filter(|(n, m)| m.matches(obj.get(n)))
                .count() as u32;
            matched_args[i][j] = ok;
            let extra_ok = exp.extra == ExtraArgs::Allow
                || obj.keys().all(|k| exp.args.iter().any(|(n, _)| n == k));
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
                        "expected a call to `{}`{}{}, none matched",
                        exp.tool,
                        if exp.args.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " with {{{}}}",
                                exp.args
                                    .iter()
                                    .map(|(n, m)| format!("{n}: {}", m.describe()))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        },
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
            r.paired += 1;
            r.args_expected += exp.args.len() as u32;
            r.args_matched += matched_args[i][j];
            match &parsed[j] {
                Some(Value::Object(obj)) => {
                    // Every mismatching argument, in one reason per call.
                    let all = field_mismatches(&exp.args, exp.extra, obj, "");
                    if !all.is_empty() {
                        let listed: Vec<String> = all.iter().map(ToString::to_string).collect();
                        r.reasons.push(Reason::new(
                            "args_mismatch",
                            format!("`{}`: {}", exp.tool, listed.join("; ")),
                        ));
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
                            .map(|c| format!("`{}`", clip(&c.name)))
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
    /// Expected calls paired with a call of their tool.
    paired: u32,
}

/// Append the string values of `raw` when it is JSON with escapes (`\"`, `\n`,
/// `\uXXXX`), so values copied from a tool result or an earlier call ground as the
/// model reads them, not as they are spelled in JSON.
fn push_json_strings(text: &mut String, raw: &str, norm: &Normalizer) {
    fn walk(v: &Value, text: &mut String, norm: &Normalizer) {
        match v {
            Value::String(s) => {
                text.push_str(&norm.apply(s));
                text.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, text, norm)),
            Value::Object(map) => map.values().for_each(|x| walk(x, text, norm)),
            _ => {}
        }
    }
    if raw.contains('\\')
        && let Ok(v) = serde_json::from_str::<Value>(raw)
    {
        walk(&v, text, norm);
    }
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

/// `text` whole up to [`CLIP_CHARS`] characters, else its start and end around a note of
/// what was cut. Checks and reasons quote names and values from the response, which the
/// trial record already holds in full; a response of megabytes must not be stored again
/// in each quote (trials.jsonl keeps it once).
pub(super) fn clip(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= CLIP_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(CLIP_HEAD).collect();
    let tail: String = text.chars().skip(chars - CLIP_TAIL).collect();
    let cut = chars - CLIP_HEAD - CLIP_TAIL;
    format!("{head} … ({cut} characters cut) … {tail}")
}

/// The most characters a quote from the response keeps whole; longer ones keep the
/// first [`CLIP_HEAD`] and the last [`CLIP_TAIL`] (where a schema error says what is
/// wrong with the value it quotes).
const CLIP_CHARS: usize = 240;
const CLIP_HEAD: usize = 120;
const CLIP_TAIL: usize = 100;

fn names(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|c| format!("`{}`", clip(&c.name)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "calls_behaviour_tests.rs"]
mod behaviour_tests;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    const SUITE: &str = r#"
normalize: [whitespace, fullwidth, casefold]
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters:
      type: object
      properties:
        city: {type: string}
        unit: {type: string, enum: [c, f]}
        date: {type: string, pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'}
        lang: {type: string, default: zh}
        kind: {type: string, const: current}
        places: {type: array, items: {type: string}}
        where:
          type: object
          properties:
            district: {type: string}
            country: {type: string, enum: [CN, US]}
      required: [city]
  - name: send_email
    description: Send an email.
    parameters:
      type: object
      properties:
        to: {type: string}
        subject: {type: string}
        body: {type: string}
      required: [to, subject, body]
cases:
  - id: weather
    kind: should_call
    prompt: 北京今天天气怎么样？
    expect: {calls: [{tool: get_weather, args: {city: 北京}}]}
  - id: email
    kind: should_call
    prompt: Email bob@example.com that I am late.
    expect: {calls: [{tool: send_email, args: {to: bob@example.com}}]}
  - id: chat
    kind: should_not_call
    prompt: 你好
    expect: {contains: [Hello], regex: '^(Hi|Hello)\b'}
  - id: two_cities
    kind: should_call
    prompt: 北京和上海的天气
    expect: {calls: [{tool: get_weather, args: {city: 北京}}, {tool: get_weather, args: {city: 上海}}]}
  - id: any_and_beijing
    kind: should_call
    prompt: 北京和上海的天气
    expect: {calls: [{tool: get_weather, args: {city: {type: string}}}, {tool: get_weather, args: {city: 北京}}]}
  - id: at_least
    kind: should_call
    prompt: 北京的天气
    expect: {count: at_least, calls: [{tool: get_weather, args: {city: 北京}}]}
  - id: deny
    kind: should_call
    prompt: 北京的天气
    expect: {calls: [{tool: get_weather, extra_args: deny, args: {city: 北京}}]}
  - id: vague
    kind: ambiguous
    prompt: 天气怎么样
    expect:
      any_of:
        - clarify: true
        - calls: [{tool: get_weather, args: {city: 北京}}]
  - id: vague_text
    kind: ambiguous
    prompt: 天气怎么样
    expect:
      any_of:
        - {no_call: true, contains: [sunny]}
        - {clarify: true, regex: 城市}
  - id: beijing_en
    kind: should_call
    prompt: What is the weather in Beijing?
    expect: {calls: [{tool: get_weather, args: {city: beijing}}]}
  - id: followup
    kind: should_call
    messages:
      - {role: user, content: 杭州天气}
      - {role: assistant, tool_calls: [{id: c1, name: get_weather, arguments: {city: 杭州}}]}
      - {role: tool, tool_call_id: c1, content: '{"temp": 21, "district": "西湖区"}'}
      - {role: user, content: 那明天呢？}
    expect: {calls: [{tool: get_weather, args: {city: 杭州}}]}
  - id: escaped
    kind: should_call
    messages:
      - {role: user, content: 查一下那家店}
      - {role: assistant, tool_calls: [{id: c1, name: send_email, arguments: {to: a@b.c, subject: 'Re: "Best" café', body: x}}]}
      - {role: tool, tool_call_id: c1, content: '{"district": "\u897f\u6e56\u533a", "note": "line1\nline2"}'}
    expect: {calls: [{tool: get_weather}]}
  - id: two_outcomes
    kind: ambiguous
    prompt: 北京
    expect:
      any_of:
        - calls: [{tool: get_weather, args: {city: 北京}}]
        - calls: [{tool: send_email, args: {to: bob@example.com}}]
"#;

    fn suite() -> Suite {
        crate::suite::load_str(SUITE, Path::new("t.yaml")).unwrap()
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: Some(format!("call_{name}")),
            name: name.to_string(),
            arguments: arguments.to_string(),
        }
    }

    fn calls(c: Vec<ToolCall>) -> Response {
        Response {
            tool_calls: c,
            ..Response::default()
        }
    }

    fn text(t: &str) -> Response {
        Response {
            text: Some(t.to_string()),
            ..Response::default()
        }
    }

    fn score_in(
        suite: &Suite,
        case: &str,
        mode: ToolChoice,
        r: &Response,
    ) -> (TrialChecks, Vec<Reason>) {
        let case = suite
            .cases
            .iter()
            .find(|c| c.id == case)
            .unwrap_or_else(|| panic!("no case {case}"));
        CaseScorer::new(suite, case).score(&mode, r)
    }

    fn score(case: &str, mode: ToolChoice, r: &Response) -> (TrialChecks, Vec<Reason>) {
        score_in(&suite(), case, mode, r)
    }

    fn codes(reasons: &[Reason]) -> Vec<&str> {
        reasons.iter().map(|r| r.code.as_str()).collect()
    }

    #[test]
    fn the_right_call_passes_with_every_check_recorded() {
        let (c, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "北京"}"#)]),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.kind, CaseKind::ShouldCall);
        assert!(c.called);
        assert_eq!(c.expected_tools, vec!["get_weather"]);
        assert_eq!(c.right_tools, Some(true));
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        assert_eq!(
            c.calls,
            vec![CallCheck {
                tool: "get_weather".into(),
                id: Some("call_get_weather".into()),
                json_ok: true,
                known_tool: true,
                distractor: false,
                schema_ok: Some(true),
                schema_errors: vec![],
                invalid: None,
                required_present: 1,
                required_total: 1,
                missing_required: vec![],
                grounding_checked: 1,
                ungrounded: vec![],
            }]
        );
    }

    #[test]
    fn the_wrong_tool_is_a_missed_call_and_an_extra_call() {
        let (c, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "send_email",
                r#"{"to": "a@b.c", "subject": "北京", "body": "天气"}"#,
            )]),
        );
        assert_eq!(codes(&reasons), vec!["missed_call", "extra_calls"]);
        assert_eq!(
            reasons[0].message,
            "expected a call to `get_weather` with {city: \"北京\"} (calls made: `send_email`), none matched"
        );
        assert_eq!(
            reasons[1].message,
            "1 call(s) beyond the 1 expected: `send_email`"
        );
        assert_eq!(c.right_tools, Some(false));
        assert_eq!(c.expected_tools, vec!["get_weather"]);
        // The unpaired call contributes no expected arguments.
        assert_eq!((c.args_matched, c.args_expected), (0, 0));
        // The call itself is valid and complete.
        assert_eq!(c.calls[0].invalid, None);
        assert_eq!(
            (c.calls[0].required_present, c.calls[0].required_total),
            (3, 3)
        );
    }

    #[test]
    fn no_call_on_should_call_is_a_missed_call() {
        let (c, reasons) = score("weather", ToolChoice::Auto, &text("北京今天晴。"));
        assert_eq!(codes(&reasons), vec!["missed_call"]);
        assert_eq!(
            reasons[0].message,
            "expected a call to `get_weather` with {city: \"北京\"}, none matched"
        );
        assert!(!c.called);
        assert!(c.calls.is_empty());
        assert_eq!(c.right_tools, None);
        assert_eq!((c.args_matched, c.args_expected), (0, 0));
    }

    #[test]
    fn a_call_on_should_not_call_is_unexpected() {
        let r = calls(vec![call("get_weather", r#"{"city": "北京"}"#)]);
        let (c, reasons) = score("chat", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["unexpected_call"]);
        assert_eq!(
            reasons[0].message,
            "called `get_weather`; no call was expected"
        );
        assert_eq!(c.kind, CaseKind::ShouldNotCall);
        assert!(c.called);
        assert_eq!(c.right_tools, None);
        assert!(c.expected_tools.is_empty());
    }

    #[test]
    fn under_tool_choice_none_every_case_expects_no_call() {
        let r = calls(vec![
            call("get_weather", r#"{"city": "北京"}"#),
            call("send_email", "{}"),
        ]);
        let (c, reasons) = score("weather", ToolChoice::None, &r);
        assert_eq!(c.kind, CaseKind::ShouldNotCall);
        assert_eq!(codes(&reasons), vec!["schema_violation", "unexpected_call"]);
        assert_eq!(
            reasons[1].message,
            "called `get_weather`, `send_email` although tool_choice was `none`; no call was expected"
        );
        assert!(reasons[1].message.contains("none"));
        // A text answer is right under `none`, even for a should_call case.
        let (c, reasons) = score("weather", ToolChoice::None, &text("晴"));
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.kind, CaseKind::ShouldNotCall);
        // Ambiguous too.
        let (c, reasons) = score("vague", ToolChoice::None, &text("晴"));
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.kind, CaseKind::ShouldNotCall);
    }

    #[test]
    fn invalid_json_arguments() {
        let (c, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "北京""#)]),
        );
        // The call is invalid, and the paired expectation can not check its arguments.
        assert_eq!(codes(&reasons), vec!["invalid_json", "args_mismatch"]);
        assert_eq!(
            reasons[0].message,
            "call to `get_weather` has arguments that are not valid JSON"
        );
        assert_eq!(
            reasons[1].message,
            "`get_weather`: arguments could not be parsed"
        );
        let k = &c.calls[0];
        assert!(!k.json_ok);
        assert!(k.known_tool);
        assert_eq!(k.invalid, Some(InvalidReason::InvalidJson));
        assert_eq!(k.schema_ok, None);
        assert_eq!((k.required_present, k.required_total), (0, 0));
        assert_eq!(k.grounding_checked, 0);
        // The right tool was called, with broken arguments.
        assert_eq!(c.right_tools, Some(true));
        assert_eq!((c.args_matched, c.args_expected), (0, 1));
    }

    #[test]
    fn unknown_tool() {
        let (c, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_wether", r#"{"city": "北京"}"#)]),
        );
        assert_eq!(
            codes(&reasons),
            vec!["unknown_tool", "missed_call", "extra_calls"]
        );
        assert_eq!(
            reasons[0].message,
            "called `get_wether`, which is not one of the tools"
        );
        let k = &c.calls[0];
        assert!(k.json_ok);
        assert!(!k.known_tool);
        assert_eq!(k.invalid, Some(InvalidReason::UnknownTool));
        assert_eq!(k.schema_ok, None);
        assert!(k.schema_errors.is_empty());
        assert_eq!(c.right_tools, Some(false));
    }

    /// Issue 31: a call of a distractor the trial offered is a wrong tool
    /// (`distractor_call`), not "not one of the tools": it is known, checked against its
    /// own schema, and invalid only when malformed (bad JSON, a schema violation).
    #[test]
    fn a_call_of_an_offered_distractor_is_a_wrong_tool_not_an_invalid_call() {
        let s = suite();
        let case = s.cases.iter().find(|c| c.id == "weather").unwrap();
        let scorer = CaseScorer::new(&s, case);
        let lookup = ToolDefinition {
            name: "lookup_city".into(),
            description: "Look up a city.".into(),
            parameters: std::sync::Arc::new(json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            })),
        };
        let offered = [&lookup];
        let score = |args: &str| {
            scorer.score_offered(
                "default",
                &offered,
                &ToolChoice::Auto,
                &calls(vec![call("lookup_city", args)]),
                None,
            )
        };
        let (c, reasons) = score(r#"{"name": "北京"}"#);
        assert_eq!(
            codes(&reasons),
            vec!["distractor_call", "missed_call", "extra_calls"]
        );
        assert_eq!(
            reasons[0].message,
            "called `lookup_city`, a distractor offered beside the case's tools (a wrong tool)"
        );
        let k = &c.calls[0];
        assert!(k.known_tool && k.distractor);
        assert_eq!((k.invalid, k.schema_ok), (None, Some(true)));
        assert_eq!((k.required_present, k.required_total), (1, 1));
        // A wrong tool for tool selection, as any other.
        assert_eq!(c.right_tools, Some(false));
        // Malformed calls of it are still invalid, by the distractor's own schema.
        let (c, reasons) = score(r#"{"city": "北京"}"#);
        assert_eq!(c.calls[0].invalid, Some(InvalidReason::SchemaViolation));
        assert_eq!(
            &codes(&reasons)[..2],
            ["schema_violation", "distractor_call"]
        );
        let (c, reasons) = score(r#"{"name": "#);
        assert_eq!(c.calls[0].invalid, Some(InvalidReason::InvalidJson));
        assert_eq!(&codes(&reasons)[..2], ["invalid_json", "distractor_call"]);
        // A tool the trial did not offer stays unknown; without the distractors the same
        // call is unknown too (a cell at N=0, or a suite without `distractors:`).
        let (c, reasons) = scorer.score_offered(
            "default",
            &offered,
            &ToolChoice::Auto,
            &calls(vec![call("lookup_town", r#"{"name": "北京"}"#)]),
            None,
        );
        assert_eq!(c.calls[0].invalid, Some(InvalidReason::UnknownTool));
        assert!(!c.calls[0].distractor);
        assert_eq!(codes(&reasons)[0], "unknown_tool");
        let (c, _) = scorer.score(
            &ToolChoice::Auto,
            &calls(vec![call("lookup_city", r#"{"name": "北京"}"#)]),
        );
        assert_eq!(c.calls[0].invalid, Some(InvalidReason::UnknownTool));
        // Later rounds of a loop give the same per-call reasons.
        assert_eq!(
            codes(&scorer.invalid_calls(
                "default",
                &offered,
                &[call("lookup_city", r#"{"name": "北京"}"#)]
            )),
            vec!["distractor_call"]
        );
    }

    #[test]
    fn huge_values_and_names_are_quoted_clipped() {
        // The response keeps a megabyte argument and a long tool name in full (the trial
        // record stores it once); the checks and reasons that quote them keep 220
        // characters of each, so the record does not hold the megabyte four times.
        let s = suite();
        let n = 1_000_000;
        let args = format!(r#"{{"city": "北京", "date": "{}"}}"#, "x".repeat(n));
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", &args)]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation"]);
        // `/date: "` (8 characters), the value, and `" does not match "<pattern>"` (47).
        let want = format!(
            r#"/date: "{} … ({} characters cut) … {}" does not match "^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}$""#,
            "x".repeat(112),
            8 + n + 47 - 220,
            "x".repeat(53)
        );
        assert_eq!(c.calls[0].schema_errors, vec![want.clone()]);
        assert_eq!(
            reasons[0].message,
            format!("call to `get_weather` violates its schema: {want}")
        );

        let name = "n".repeat(300);
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(&name, "{}")]),
        );
        let clipped = format!(
            "{} … (80 characters cut) … {}",
            "n".repeat(120),
            "n".repeat(100)
        );
        assert_eq!(c.calls[0].tool, clipped);
        assert_eq!(
            reasons[0].message,
            format!("called `{clipped}`, which is not one of the tools")
        );
        // Up to 240 characters are quoted whole.
        let name = "n".repeat(240);
        let (c, _) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(&name, "{}")]),
        );
        assert_eq!(c.calls[0].tool, name);
    }

    #[test]
    fn schema_violations_wrong_type_enum_and_pattern() {
        let s = suite();
        // Wrong type: the value also fails the expected literal.
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": 42}"#)]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation", "args_mismatch"]);
        let k = &c.calls[0];
        assert_eq!(k.invalid, Some(InvalidReason::SchemaViolation));
        assert_eq!(k.schema_ok, Some(false));
        assert_eq!(k.schema_errors.len(), 1);
        assert!(k.schema_errors[0].starts_with("/city: "), "{k:?}");
        assert!(reasons[0].message.contains("/city"), "{reasons:?}");
        // Schema-violating calls still count their required parameters.
        assert_eq!((k.required_present, k.required_total), (1, 1));

        // Enum mismatch: the expected argument matches, the schema does not.
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "北京", "unit": "kelvin"}"#,
            )]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation"]);
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        assert_eq!(c.calls[0].schema_errors.len(), 1);
        assert!(c.calls[0].schema_errors[0].starts_with("/unit: "));
        assert!(c.calls[0].schema_errors[0].contains("kelvin"));

        // Pattern mismatch.
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "北京", "date": "tomorrow"}"#,
            )]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation"]);
        assert!(c.calls[0].schema_errors[0].starts_with("/date: "));
        assert!(c.calls[0].schema_errors[0].contains("tomorrow"));

        // Several errors are all reported (up to three).
        let (c, _) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": 1, "unit": "k", "date": "x", "lang": 2}"#,
            )]),
        );
        assert_eq!(c.calls[0].schema_errors.len(), 3);
    }

    #[test]
    fn missing_required_parameters_are_counted() {
        let s = suite();
        let (c, reasons) = score_in(
            &s,
            "email",
            ToolChoice::Auto,
            &calls(vec![call("send_email", r#"{"to": "bob@example.com"}"#)]),
        );
        // The expected argument matches; the schema's `required` fails.
        assert_eq!(codes(&reasons), vec!["schema_violation"]);
        assert!(reasons[0].message.contains("subject"), "{reasons:?}");
        let k = &c.calls[0];
        assert_eq!((k.required_present, k.required_total), (1, 3));
        assert_eq!(k.missing_required, vec!["subject", "body"]);
        assert_eq!((c.args_matched, c.args_expected), (1, 1));

        // Arguments that are not an object miss every required parameter.
        let (c, reasons) = score_in(
            &s,
            "email",
            ToolChoice::Auto,
            &calls(vec![call("send_email", r#"["bob@example.com"]"#)]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation", "args_mismatch"]);
        assert_eq!(
            reasons[1].message,
            r#"`send_email`: arguments are ["bob@example.com"], not an object"#
        );
        let k = &c.calls[0];
        assert_eq!((k.required_present, k.required_total), (0, 3));
        assert_eq!(k.missing_required, vec!["to", "subject", "body"]);
        assert_eq!(k.grounding_checked, 0);
    }

    #[test]
    fn every_mismatching_argument_is_reported() {
        let s = crate::suite::load_str(
            r#"
name: many
tools:
  - name: book
    description: Book a flight.
    parameters:
      type: object
      properties:
        from: { type: string }
        to: { type: string }
        seats: { type: integer }
        note: { type: string }
cases:
  - id: trip
    kind: should_call
    prompt: "Two seats from Paris to Rome."
    expect:
      calls:
        - tool: book
          args: { from: Paris, to: Rome, seats: 2 }
          extra_args: deny
"#,
            Path::new("many.yaml"),
        )
        .unwrap();
        let r = calls(vec![call(
            "book",
            r#"{"from": "Paris", "to": "Milan", "seats": 3, "note": "x"}"#,
        )]);
        let (c, reasons) = score_in(&s, "trip", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["args_mismatch"]);
        assert_eq!(
            reasons[0].message,
            r#"`book`: `to`: expected "Rome", got "Milan"; `seats`: expected 2, got 3; `note`: expected no such argument (extra_args: deny), got "x""#
        );
        assert_eq!((c.args_matched, c.args_expected), (1, 3));
    }

    #[test]
    fn args_mismatch_names_the_argument_and_both_values() {
        let (c, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "上海"}"#)]),
        );
        assert_eq!(codes(&reasons), vec!["args_mismatch"]);
        assert_eq!(
            reasons[0].message,
            r#"`get_weather`: `city`: expected "北京", got "上海""#
        );
        assert_eq!(c.right_tools, Some(true));
        assert_eq!((c.args_matched, c.args_expected), (0, 1));
        // An omitted argument is shown as absent.
        let (_, reasons) = score(
            "weather",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"unit": "c"}"#)]),
        );
        assert_eq!(codes(&reasons), vec!["schema_violation", "args_mismatch"]);
        assert_eq!(
            reasons[1].message,
            r#"`get_weather`: `city`: expected "北京", got <absent>"#
        );
    }

    #[test]
    fn several_calls_match_as_a_multiset() {
        let s = suite();
        for order in [["北京", "上海"], ["上海", "北京"]] {
            let r = calls(
                order
                    .iter()
                    .map(|c| call("get_weather", &json!({ "city": c }).to_string()))
                    .collect(),
            );
            let (c, reasons) = score_in(&s, "two_cities", ToolChoice::Auto, &r);
            assert!(reasons.is_empty(), "{order:?}: {reasons:?}");
            assert_eq!((c.args_matched, c.args_expected), (2, 2));
            assert_eq!(c.right_tools, Some(true));
            assert_eq!(c.calls.len(), 2);
        }
        // One of two: the unmatched expectation is paired with the wrong call.
        let r = calls(vec![
            call("get_weather", r#"{"city": "北京"}"#),
            call("get_weather", r#"{"city": "广州"}"#),
        ]);
        let (c, reasons) = score_in(&s, "two_cities", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["args_mismatch"]);
        assert!(
            reasons[0]
                .message
                .contains(r#"expected "上海", got "广州""#)
        );
        assert_eq!((c.args_matched, c.args_expected), (1, 2));
        // Only one call for two expected: a missed call.
        let r = calls(vec![call("get_weather", r#"{"city": "上海"}"#)]);
        let (c, reasons) = score_in(&s, "two_cities", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["missed_call"]);
        assert!(
            reasons[0]
                .message
                .starts_with("expected a call to `get_weather`")
        );
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
    }

    #[test]
    fn the_optimal_assignment_passes_where_greedy_pairing_fails() {
        // Expected [{city: any string}, {city: 北京}], actual [北京, 上海]: greedy pairs the
        // first expectation with 北京 and strands the second; the optimum pairs it with 上海.
        let r = calls(vec![
            call("get_weather", r#"{"city": "北京"}"#),
            call("get_weather", r#"{"city": "上海"}"#),
        ]);
        let (c, reasons) = score("any_and_beijing", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!((c.args_matched, c.args_expected), (2, 2));
    }

    #[test]
    fn count_exact_fails_an_extra_call_and_at_least_allows_it() {
        let r = calls(vec![
            call("get_weather", r#"{"city": "上海"}"#),
            call("get_weather", r#"{"city": "北京"}"#),
        ]);
        let s = suite();
        let (c, reasons) = score_in(&s, "weather", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["extra_calls"]);
        assert_eq!(
            reasons[0].message,
            "1 call(s) beyond the 1 expected: `get_weather`"
        );
        // The full match was chosen over the partial one.
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        let (c, reasons) = score_in(&s, "at_least", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        // An extra call to another tool: at_least still passes, but the called tools
        // differ from the expected ones.
        let r = calls(vec![
            call("get_weather", r#"{"city": "北京"}"#),
            call(
                "send_email",
                r#"{"to": "a@b.c", "subject": "s", "body": "b"}"#,
            ),
        ]);
        let (c, reasons) = score_in(&s, "at_least", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.right_tools, Some(false));
    }

    #[test]
    fn extra_args_deny_fails_an_unlisted_argument() {
        let s = suite();
        let r = calls(vec![call(
            "get_weather",
            r#"{"city": "北京", "unit": "c"}"#,
        )]);
        let (c, reasons) = score_in(&s, "deny", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["args_mismatch"]);
        assert_eq!(
            reasons[0].message,
            r#"`get_weather`: `unit`: expected no such argument (extra_args: deny), got "c""#
        );
        // The listed argument did match.
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        // The default (allow) ignores it.
        let (_, reasons) = score_in(&s, "weather", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
        // And deny passes without it.
        let r = calls(vec![call("get_weather", r#"{"city": "北京"}"#)]);
        let (_, reasons) = score_in(&s, "deny", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
    }

    #[test]
    fn ambiguous_clarify_calls_or_neither() {
        let s = suite();
        for q in ["你想查哪个城市？", "Which city?"] {
            let (c, reasons) = score_in(&s, "vague", ToolChoice::Auto, &text(q));
            assert!(reasons.is_empty(), "{q}: {reasons:?}");
            assert_eq!(c.kind, CaseKind::Ambiguous);
            assert!(!c.called);
            assert_eq!(c.right_tools, None);
        }
        let (c, reasons) = score_in(
            &s,
            "vague",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "北京"}"#)]),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.expected_tools, vec!["get_weather"]);
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        // Ambiguous trials do not judge tool selection.
        assert_eq!(c.right_tools, None);

        // A statement, no question, no call.
        let (_, reasons) = score_in(&s, "vague", ToolChoice::Auto, &text("天气很好。"));
        assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
        assert_eq!(
            reasons[0].message,
            "no acceptable outcome held: clarify: the classifier read it as `direct` \
             (answers directly) | calls: expected a call to `get_weather` with {city: \"北京\"}, none matched"
        );
        // A wrong call.
        let (c, reasons) = score_in(
            &s,
            "vague",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "上海"}"#)]),
        );
        assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
        assert!(reasons[0].message.contains("clarify: a tool was called"));
        assert!(
            reasons[0]
                .message
                .contains(r#"expected "北京", got "上海""#)
        );
        assert_eq!((c.args_matched, c.args_expected), (0, 1));
        assert_eq!(c.expected_tools, vec!["get_weather"]);
    }

    #[test]
    fn ambiguous_outcomes_check_their_text() {
        let s = suite();
        let (_, reasons) = score_in(&s, "vague_text", ToolChoice::Auto, &text("It is SUNNY."));
        assert!(reasons.is_empty(), "{reasons:?}");
        let (_, reasons) = score_in(&s, "vague_text", ToolChoice::Auto, &text("哪个城市？"));
        assert!(reasons.is_empty(), "{reasons:?}");
        let (_, reasons) = score_in(&s, "vague_text", ToolChoice::Auto, &text("哪一天？"));
        assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
        assert_eq!(
            reasons[0].message,
            "no acceptable outcome held: no_call: the answer does not contain \"sunny\" | \
             clarify: the answer does not match /城市/"
        );
        let (_, reasons) = score_in(
            &s,
            "vague_text",
            ToolChoice::Auto,
            &calls(vec![call("get_weather", r#"{"city": "北京"}"#)]),
        );
        assert_eq!(
            reasons[0].message,
            "no acceptable outcome held: no_call: a tool was called | clarify: a tool was called"
        );
    }

    #[test]
    fn should_not_call_text_checks() {
        let s = suite();
        let (_, reasons) = score_in(&s, "chat", ToolChoice::Auto, &text("Hello there"));
        assert!(reasons.is_empty(), "{reasons:?}");
        let (_, reasons) = score_in(&s, "chat", ToolChoice::Auto, &text("Hey"));
        assert_eq!(codes(&reasons), vec!["text_mismatch", "text_mismatch"]);
        assert_eq!(reasons[0].message, "the answer does not contain \"Hello\"");
        assert_eq!(
            reasons[1].message,
            r"the answer does not match /^(Hi|Hello)\b/"
        );
        // Both checks see the text after the suite's normalisation (whitespace, fullwidth,
        // casefold): "  ＨＥＬＬＯ  " becomes "hello"; with casefold the regex ignores case.
        let (_, reasons) = score_in(&s, "chat", ToolChoice::Auto, &text("  ＨＥＬＬＯ  "));
        assert!(reasons.is_empty(), "{reasons:?}");
        let (_, reasons) = score_in(&s, "chat", ToolChoice::Auto, &text("  Ｈｉ there"));
        assert_eq!(codes(&reasons), vec!["text_mismatch"]);
        assert!(reasons[0].message.contains("does not contain"));
        // No text at all.
        let (_, reasons) = score_in(&s, "chat", ToolChoice::Auto, &Response::default());
        assert_eq!(codes(&reasons), vec!["text_mismatch", "text_mismatch"]);
    }

    #[test]
    fn normalisation_makes_fullwidth_padded_capitals_equal() {
        let r = calls(vec![call("get_weather", r#"{"city": " ＢＥＩＪＩＮＧ "}"#)]);
        let (c, reasons) = score("beijing_en", ToolChoice::Auto, &r);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
        // Grounding normalises the same way: "beijing" is in the prompt.
        assert_eq!(c.calls[0].grounding_checked, 1);
        assert!(c.calls[0].ungrounded.is_empty());

        // Without the suite's normalisation the literal compares as written.
        let plain = SUITE.replace("normalize: [whitespace, fullwidth, casefold]\n", "");
        let s = crate::suite::load_str(&plain, Path::new("t.yaml")).unwrap();
        let (_, reasons) = score_in(&s, "beijing_en", ToolChoice::Auto, &r);
        assert_eq!(codes(&reasons), vec!["args_mismatch"]);
        // Grounding always normalises case, width and whitespace.
        let (c, _) = score_in(&s, "beijing_en", ToolChoice::Auto, &r);
        assert!(c.calls[0].ungrounded.is_empty());
    }

    #[test]
    fn ungrounded_values_are_listed() {
        let s = suite();
        // A forced call on a case whose prompt names no city invents one.
        let (c, reasons) = score_in(
            &s,
            "chat",
            ToolChoice::Function("get_weather".into()),
            &calls(vec![call("get_weather", r#"{"city": "上海"}"#)]),
        );
        assert_eq!(codes(&reasons), vec!["unexpected_call"]);
        assert_eq!(c.calls[0].grounding_checked, 1);
        assert_eq!(c.calls[0].ungrounded, vec![r#"city = "上海""#]);

        // A made-up date passes the expectation but is ungrounded; the city is not.
        let (c, reasons) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "北京", "date": "2024-05-01"}"#,
            )]),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.calls[0].grounding_checked, 2);
        assert_eq!(c.calls[0].ungrounded, vec![r#"date = "2024-05-01""#]);

        // enum, default and const parameters are skipped; so are empty strings.
        let (c, _) = score_in(
            &s,
            "weather",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "北京", "unit": "f", "lang": "en", "kind": "current", "date": "  "}"#,
            )]),
        );
        assert_eq!(c.calls[0].grounding_checked, 1);
        assert!(c.calls[0].ungrounded.is_empty(), "{:?}", c.calls[0]);

        // Nested values: list items and object fields, with their schemas.
        let (c, _) = score_in(
            &s,
            "two_cities",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "北京", "places": ["上海", "深圳"],
                    "where": {"district": "朝阳区", "country": "CN"}, "extra": "上海"}"#,
            )]),
        );
        // Checked: city, places[0], places[1], where.district, extra (country is an enum).
        assert_eq!(c.calls[0].grounding_checked, 5);
        assert_eq!(
            c.calls[0].ungrounded,
            vec![r#"places[1] = "深圳""#, r#"where.district = "朝阳区""#]
        );
    }

    #[test]
    fn grounding_sees_the_whole_conversation() {
        // 杭州 comes from an earlier call's arguments, 西湖区 from a tool result.
        let (c, reasons) = score(
            "followup",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "杭州", "where": {"district": "西湖区"}, "date": "2025-01-02"}"#,
            )]),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.calls[0].grounding_checked, 3);
        assert_eq!(c.calls[0].ungrounded, vec![r#"date = "2025-01-02""#]);
    }

    #[test]
    fn grounding_decodes_json_in_tool_results_and_earlier_calls() {
        // The tool result spells 西湖区 as \u escapes (as Python's json.dumps does) and the
        // earlier call's subject holds quotes, escaped in its JSON text: the values are
        // still in the conversation.
        let (c, _) = score(
            "escaped",
            ToolChoice::Auto,
            &calls(vec![call(
                "get_weather",
                r#"{"city": "西湖区", "where": {"district": "Re: \"Best\" café"}, "date": "line1\nline2"}"#,
            )]),
        );
        assert_eq!(c.calls[0].grounding_checked, 3);
        assert!(
            c.calls[0].ungrounded.is_empty(),
            "{:?}",
            c.calls[0].ungrounded
        );
    }

    #[test]
    fn ambiguous_checks_follow_the_outcome_whose_tool_was_called() {
        // Neither outcome holds; the call is to send_email with a wrong address, so the
        // closest outcome is the send_email one: its argument is counted as mismatched
        // and its tool is the expected one.
        let (c, reasons) = score(
            "two_outcomes",
            ToolChoice::Auto,
            &calls(vec![call(
                "send_email",
                r#"{"to": "eve@example.com", "subject": "s", "body": "b"}"#,
            )]),
        );
        assert_eq!(codes(&reasons), vec!["no_acceptable_outcome"]);
        assert_eq!(c.expected_tools, vec!["send_email"]);
        assert_eq!((c.args_matched, c.args_expected), (0, 1));
        // When an outcome holds, its calls are the ones counted.
        let (c, reasons) = score(
            "two_outcomes",
            ToolChoice::Auto,
            &calls(vec![call(
                "send_email",
                r#"{"to": "bob@example.com", "subject": "s", "body": "b"}"#,
            )]),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(c.expected_tools, vec!["send_email"]);
        assert_eq!((c.args_matched, c.args_expected), (1, 1));
    }

    #[test]
    fn deep_nesting_and_huge_numbers_do_not_break_scoring() {
        let s = suite();
        for depth in [1, 64, 120, 127, 128, 129, 300, 1000] {
            let args = format!(
                r#"{{"city": "北京", "where": {}, "places": {}}}"#,
                nested(depth, true, "where"),
                nested(depth, false, "")
            );
            let r = calls(vec![call("get_weather", &args)]);
            for case in &s.cases {
                let (c, _) = CaseScorer::new(&s, case).score(&ToolChoice::Auto, &r);
                assert_eq!(c.calls.len(), 1);
            }
            let (c, reasons) = score_in(&s, "weather", ToolChoice::Auto, &r);
            // serde_json stops at 128 levels: shallow enough parses, deeper is invalid JSON.
            if depth <= 64 {
                assert!(c.calls[0].json_ok, "{depth}");
                // `places` items must be strings: `[]` passes, `[[]]` and deeper do not.
                let want = if depth == 1 {
                    vec![]
                } else {
                    vec!["schema_violation"]
                };
                assert_eq!(codes(&reasons), want, "{depth}");
            }
            if depth >= 300 {
                assert_eq!(c.calls[0].invalid, Some(InvalidReason::InvalidJson));
            }
        }
        for args in [
            r#"{"city": 1e400}"#,
            r#"{"city": -1e400}"#,
            r#"{"city": 1.7976931348623157e308}"#,
            r#"{"city": 123456789012345678901234567890}"#,
            r#"{"city": "\ud800"}"#,
        ] {
            let (c, reasons) = score_in(
                &s,
                "weather",
                ToolChoice::Auto,
                &calls(vec![call("get_weather", args)]),
            );
            assert!(c.calls[0].invalid.is_some(), "{args}: {c:?}");
            assert!(!reasons.is_empty());
        }
    }

    // ---- property: scoring never panics, and checks one CallCheck per call ----

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            prop_oneof![
                Just("北京"),
                Just("上海"),
                Just(" ＢＥＩＪＩＮＧ "),
                Just("c")
            ]
            .prop_map(|s| Value::String(s.into())),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("city".to_string()),
                            Just("unit".to_string()),
                            Just("places".to_string()),
                            Just("where".to_string()),
                            Just("to".to_string()),
                            any::<String>(),
                        ],
                        inner
                    ),
                    0..6
                )
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn nested(depth: usize, object: bool, key: &str) -> String {
        if object {
            format!(
                "{}\"北京\"{}",
                format!("{{\"{key}\": ").repeat(depth),
                "}".repeat(depth)
            )
        } else {
            format!("{}{}", "[".repeat(depth), "]".repeat(depth))
        }
    }

    fn arguments() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            prop::collection::vec(any::<u8>(), 0..64)
                .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
            json_value().prop_map(|v| v.to_string()),
            (
                1usize..400,
                any::<bool>(),
                prop_oneof![Just("city"), Just("where")]
            )
                .prop_map(|(d, o, k)| nested(d, o, k)),
            (1usize..400).prop_map(|d| format!(
                "{{\"city\": \"北京\", \"places\": {}}}",
                nested(d, false, "")
            )),
            prop_oneof![
                Just("1e400".to_string()),
                Just("-1e400".to_string()),
                Just(format!("{{\"city\": {}}}", "9".repeat(500))),
                Just(r#"{"city": 1.7976931348623157e308, "unit": -0.0}"#.to_string()),
                Just(r#"{"city": "\ud800"}"#.to_string()),
                Just(r#"{"city": "\u0000𝔘𝔫𝔦𝔠𝔬𝔡𝔢\u200b"}"#.to_string()),
                Just(String::new()),
                Just("null".to_string()),
            ],
        ]
    }

    fn tool_call() -> impl Strategy<Value = ToolCall> {
        (
            prop_oneof![
                Just("get_weather".to_string()),
                Just("send_email".to_string()),
                any::<String>(),
            ],
            arguments(),
            proptest::option::of(any::<String>()),
        )
            .prop_map(|(name, arguments, id)| ToolCall {
                id,
                name,
                arguments,
            })
    }

    fn mode() -> impl Strategy<Value = ToolChoice> {
        prop_oneof![
            Just(ToolChoice::Auto),
            Just(ToolChoice::None),
            Just(ToolChoice::Required),
            Just(ToolChoice::Function("get_weather".into())),
        ]
    }

    proptest! {
        #[test]
        fn scoring_never_panics_and_checks_every_call(
            tool_calls in prop::collection::vec(tool_call(), 0..5),
            text in proptest::option::of(any::<String>()),
            mode in mode(),
        ) {
            let s = suite();
            let response = Response { text, tool_calls, ..Response::default() };
            for case in &s.cases {
                let (checks, reasons) = CaseScorer::new(&s, case).score(&mode, &response);
                prop_assert_eq!(checks.calls.len(), response.tool_calls.len());
                prop_assert_eq!(checks.called, !response.tool_calls.is_empty());
                prop_assert!(checks.args_matched <= checks.args_expected);
                for (k, c) in checks.calls.iter().zip(&response.tool_calls) {
                    prop_assert_eq!(&k.tool, &c.name);
                    prop_assert_eq!(k.invalid.is_some(), k.schema_ok != Some(true));
                    if k.json_ok && k.known_tool {
                        prop_assert_eq!(
                            k.required_present as usize + k.missing_required.len(),
                            k.required_total as usize
                        );
                    }
                    prop_assert!(k.ungrounded.len() <= k.grounding_checked as usize);
                }
                let invalid = checks.calls.iter().filter(|c| c.invalid.is_some()).count();
                let invalid_reasons = reasons
                    .iter()
                    .filter(|r| {
                        matches!(
                            r.code.as_str(),
                            "invalid_json" | "unknown_tool" | "schema_violation"
                        )
                    })
                    .count();
                prop_assert_eq!(invalid, invalid_reasons);
            }
        }
    }
}
