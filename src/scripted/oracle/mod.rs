//! The scripted oracle (`scripted:oracle`): the answer a perfect model would give, so a
//! run against it is a self-test of a suite.
//!
//! For each trial the oracle takes the expectation in force under the trial's
//! tool_choice mode ([`crate::suite::Case::effective`]) and honours the mode as an API
//! does: under `none` it never calls, under `required` it always calls, under
//! `function:NAME` it calls NAME. Among the acceptable outcomes the mode allows it builds
//! the first one it can satisfy: calls whose every argument satisfies both its matcher
//! and the tool's JSON Schema ([`value`]), with required arguments the expectation
//! leaves open filled from the conversation ([`ground`]); or a text answer that holds
//! every `contains` and `regex` check (and asks a question for `clarify`). Every answer
//! is scored with the real scorer before it is given.
//!
//! What it cannot satisfy (a regex no string matches, a matcher the schema forbids, an
//! expectation the tool_choice mode makes impossible) is named: in the answer's text,
//! and, through [`unmet`] and [`warning`], in the run output, so a suite author learns
//! which cases no model can pass.

pub mod episode;
pub mod ground;
pub mod history;
mod loop_steps;
mod loop_text;
pub mod regex_gen;
pub mod selftest;
pub mod value;

#[cfg(test)]
mod loop_tests;

use std::fmt::Write as _;

use serde_json::Value;

use self::ground::Grounding;
use self::regex_gen::{intersect, samples, seed_of};
use self::value::Values;
use crate::behaviour::{Behaviour, classify};
use crate::judge::calls::CaseScorer;
use crate::provider::{Response, ToolCall, ToolChoice, ToolDefinition};
use crate::suite::{CallsExpectation, Case, Expectation, Normalizer, Outcome, Suite, TextChecks};

/// The oracle's answer to one trial.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The response to give.
    pub response: Response,
    /// What could not be satisfied (empty when the response passes).
    pub unmet: Vec<String>,
}

/// An acceptable outcome, as the oracle builds it.
enum Want<'e> {
    Calls(&'e CallsExpectation),
    Text {
        checks: &'e TextChecks,
        /// The behaviour the text must show (`None`: any text).
        behaviour: Option<Behaviour>,
    },
}

impl Want<'_> {
    fn describe(&self) -> String {
        match self {
            Want::Calls(e) if e.calls.is_empty() => "a call to any tool".to_string(),
            Want::Calls(e) => format!(
                "calls to {}",
                e.calls
                    .iter()
                    .map(|c| format!("`{}`", c.tool))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Want::Text { behaviour, .. } => match behaviour {
                Some(Behaviour::RequestForInfo) => "a clarifying question",
                Some(Behaviour::CannotAnswer) => "an answer that says it cannot help",
                Some(Behaviour::Direct) => "a direct answer",
                Some(Behaviour::ToolCall) | None => "no call",
            }
            .to_string(),
        }
    }

    /// Whether an API honouring `mode` can give this outcome.
    fn allowed_under(&self, mode: &ToolChoice) -> bool {
        match (self, mode) {
            (Want::Text { .. }, ToolChoice::None | ToolChoice::Auto) => true,
            (Want::Text { .. }, _) => false,
            (Want::Calls(_), ToolChoice::None) => false,
            (Want::Calls(e), ToolChoice::Function(name)) => e.calls.iter().all(|c| c.tool == *name),
            (Want::Calls(_), _) => true,
        }
    }
}

/// The oracle's answer to `case` under `mode`, offered `tools` (their schemas are those
/// the request carries, so a variant's schema is honoured).
pub fn answer(suite: &Suite, case: &Case, mode: &ToolChoice, tools: &[ToolDefinition]) -> Answer {
    answer_in(suite, case, None, mode, tools)
}

/// [`answer`] in a trial of `variant`: checked against the schemas the variant offers,
/// and grounded in the conversation it sends.
pub fn answer_variant(
    suite: &Suite,
    case: &Case,
    variant: &str,
    mode: &ToolChoice,
    tools: &[ToolDefinition],
) -> Answer {
    answer_in(suite, case, Some(variant), mode, tools)
}

fn answer_in(
    suite: &Suite,
    case: &Case,
    variant: Option<&str>,
    mode: &ToolChoice,
    tools: &[ToolDefinition],
) -> Answer {
    let (_, expect) = case.effective(mode);
    let wants: Vec<Want<'_>> = match expect {
        Expectation::Calls(e) => vec![Want::Calls(e)],
        Expectation::NoCall(t) => vec![Want::Text {
            checks: t,
            behaviour: t.behaviour,
        }],
        Expectation::AnyOf(outcomes) => outcomes
            .iter()
            .map(|o| match o {
                Outcome::Calls(e) => Want::Calls(e),
                Outcome::Clarify(t)
                | Outcome::CannotAnswer(t)
                | Outcome::Direct(t)
                | Outcome::NoCall(t) => Want::Text {
                    checks: t,
                    behaviour: o.behaviour(),
                },
            })
            .collect(),
    };
    let messages = match variant {
        Some(v) => suite.messages_in(case, v),
        None => std::borrow::Cow::Borrowed(case.messages.as_slice()),
    };
    let oracle = Oracle {
        suite,
        mode,
        variant,
        tools,
        ground: Grounding::new(&messages),
        seed: seed_of(&[&case.id]),
        scorer: CaseScorer::new(suite, case),
    };
    let mut first: Option<(Response, Vec<String>)> = None;
    for want in wants.iter().filter(|w| w.allowed_under(mode)) {
        for (response, problems) in oracle.builds(want) {
            let reasons = oracle.reasons(&response);
            if reasons.is_empty() {
                return Answer {
                    response,
                    unmet: Vec::new(),
                };
            }
            if first.is_none() {
                first = Some((response, merge(problems, reasons)));
            }
        }
    }
    let (response, unmet) = match first {
        Some(found) => found,
        None => {
            // No acceptable outcome is possible under this mode: answer as the mode
            // forces, and say why the case can not pass.
            let expected = wants
                .iter()
                .map(Want::describe)
                .collect::<Vec<_>>()
                .join(" or ");
            let why = format!(
                "tool_choice `{mode}` {}, but the case expects {expected} under `{mode}` (state what the mode should produce with `per_mode`, or leave the mode out with `modes`)",
                match mode {
                    ToolChoice::None => "forbids calls".to_string(),
                    ToolChoice::Required => "forces a call".to_string(),
                    ToolChoice::Function(n) => format!("forces a call to `{n}`"),
                    ToolChoice::Auto => "allows anything".to_string(),
                }
            );
            // The scorer's reasons would only repeat `why`.
            let (response, problems) = oracle.forced(&wants);
            (response, merge(vec![why], problems))
        }
    };
    Answer {
        response: with_note(response, &unmet),
        unmet,
    }
}

/// The expected calls of `e` with arguments that satisfy their matchers and schemas
/// (for behaviours that build on correct calls, such as `duplicate`).
pub fn expected_calls(
    case: &Case,
    e: &CallsExpectation,
    tools: &[ToolDefinition],
) -> Vec<ToolCall> {
    let ground = Grounding::new(&case.messages);
    let seed = seed_of(&[&case.id]);
    let mut problems = Vec::new();
    calls_of(e, None, tools, &ground, seed, &mut problems)
}

/// One (case, mode) of a suite that the oracle cannot pass, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmet {
    /// Case id.
    pub case_id: String,
    /// The tool_choice mode.
    pub mode: ToolChoice,
    /// What could not be satisfied.
    pub what: Vec<String>,
}

/// A (case, mode) of a suite whose loop reaches the suite's live MCP server, so the
/// self-test could not judge its checks offline.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOnly {
    /// Case id.
    pub case_id: String,
    /// The tool_choice mode.
    pub mode: ToolChoice,
    /// The first call the server would answer (`round N: \`TOOL\``), and the case's
    /// episode checks left unjudged.
    pub call: String,
}

/// What the self-test found in the trials it covered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelfTest {
    /// What no model can pass.
    pub unmet: Vec<Unmet>,
    /// What it could not judge offline (loops whose calls run on the live server).
    pub live: Vec<LiveOnly>,
}

/// Every (case, mode) of `suite` under `modes` whose expectation the oracle cannot
/// satisfy (with the suite's own tool schemas, then under each variant that offers
/// another schema or system prompt, where what it cannot satisfy is prefixed with the
/// variant's name).
pub fn unmet(suite: &Suite, modes: &[ToolChoice]) -> Vec<Unmet> {
    let trials: Vec<(usize, ToolChoice)> = suite
        .cases
        .iter()
        .enumerate()
        .flat_map(|(i, case)| {
            modes
                .iter()
                .filter(|m| case.applies_to(m))
                .map(move |m| (i, m.clone()))
        })
        .collect();
    self_test(suite, &trials, &suite.variants).unmet
}

/// The self-test of the (case index, mode) pairs in `trials` (those a run selected),
/// under the run's `variants`: [`unmet`] for them, and the loops it could not judge
/// offline because their calls run on the suite's MCP server
/// ([`selftest::LoopCheck::live`]).
pub fn self_test(suite: &Suite, trials: &[(usize, ToolChoice)], variants: &[String]) -> SelfTest {
    // Variants that change what the oracle answers from (a schema, the conversation);
    // descriptions alone change nothing it reads.
    let variants: Vec<&str> = suite
        .variants
        .iter()
        .filter(|v| variants.contains(v))
        .filter(|v| {
            suite.variant_systems.contains_key(*v)
                || suite
                    .tools
                    .iter()
                    .chain(suite.cases.iter().flat_map(|c| c.tools.iter().flatten()))
                    .any(|t| t.variant(v).is_some_and(|tv| tv.replaces_schema))
        })
        .map(String::as_str)
        .collect();
    let mut out = SelfTest::default();
    for (index, mode) in trials {
        let Some(case) = suite.cases.get(*index) else {
            continue;
        };
        let tools: Vec<ToolDefinition> = case
            .tools(suite)
            .iter()
            .map(|t| t.definition("default"))
            .collect();
        // A loop case is played whole, against the suite's mocks.
        let base = if case.episode.is_some() {
            selftest::loop_check(suite, case, None, mode, &tools)
        } else {
            selftest::LoopCheck {
                unmet: answer(suite, case, mode, &tools).unmet,
                live: None,
            }
        };
        let mut what = base.unmet.clone();
        let mut live = base.live;
        for v in &variants {
            let tools: Vec<ToolDefinition> =
                case.tools(suite).iter().map(|t| t.definition(v)).collect();
            let check = if case.episode.is_some() {
                selftest::loop_check(suite, case, Some(v), mode, &tools)
            } else {
                selftest::LoopCheck {
                    unmet: answer_variant(suite, case, v, mode, &tools).unmet,
                    live: None,
                }
            };
            live = live.or(check.live);
            what.extend(
                check
                    .unmet
                    .into_iter()
                    .filter(|u| !base.unmet.contains(u))
                    .map(|u| format!("under variant `{v}`: {u}")),
            );
        }
        if !what.is_empty() {
            out.unmet.push(Unmet {
                case_id: case.id.clone(),
                mode: mode.clone(),
                what,
            });
        }
        if let Some(call) = live {
            out.live.push(LiveOnly {
                case_id: case.id.clone(),
                mode: mode.clone(),
                call,
            });
        }
    }
    out
}

/// How many unmet expectations [`warning`] details; the rest are counted.
const WARN_DETAILS: usize = 20;

/// The run-output warning for `unmet` of suite `name`: the case ids first, then one
/// line per case and mode with its first problem. `None` when everything is met.
pub fn warning(name: &str, unmet: &[Unmet]) -> Option<String> {
    if unmet.is_empty() {
        return None;
    }
    let mut ids: Vec<&str> = Vec::new();
    for u in unmet {
        if !ids.contains(&u.case_id.as_str()) {
            ids.push(&u.case_id);
        }
    }
    let mut out = format!(
        "scripted:oracle can not satisfy {} trial expectation(s) of suite `{name}`, so no model can pass them (check these cases): {}",
        unmet.len(),
        ids.join(", ")
    );
    for u in unmet.iter().take(WARN_DETAILS) {
        let _ = write!(
            out,
            "\n  - {} under {}: {}",
            u.case_id,
            u.mode,
            u.what.first().map(String::as_str).unwrap_or_default()
        );
        if u.what.len() > 1 {
            let _ = write!(out, " (and {} more)", u.what.len() - 1);
        }
    }
    if unmet.len() > WARN_DETAILS {
        let _ = write!(out, "\n  - … and {} more", unmet.len() - WARN_DETAILS);
    }
    Some(out)
}

/// The run-output note for `live` of suite `name`, whose MCP server is `server`: the
/// loops the self-test could not judge offline, case ids first, then one line per case
/// and mode with the call that needs the server. `None` when there are none.
pub fn live_warning(name: &str, server: &str, live: &[LiveOnly]) -> Option<String> {
    if live.is_empty() {
        return None;
    }
    let mut ids: Vec<&str> = Vec::new();
    for l in live {
        if !ids.contains(&l.case_id.as_str()) {
            ids.push(&l.case_id);
        }
    }
    let mut out = format!(
        "scripted:oracle can not judge offline the checks of {} loop trial expectation(s) of suite `{name}` whose calls run on MCP server `{server}` ({}): the self-test has no server, so it stopped at the first call the server answers and judged only what comes before; this run's trials of them are played on the server and judged on its real results",
        live.len(),
        ids.join(", ")
    );
    for l in live.iter().take(WARN_DETAILS) {
        let _ = write!(out, "\n  - {} under {}: {}", l.case_id, l.mode, l.call);
    }
    if live.len() > WARN_DETAILS {
        let _ = write!(out, "\n  - … and {} more", live.len() - WARN_DETAILS);
    }
    Some(out)
}

struct Oracle<'a> {
    suite: &'a Suite,
    mode: &'a ToolChoice,
    variant: Option<&'a str>,
    tools: &'a [ToolDefinition],
    ground: Grounding,
    seed: u64,
    scorer: CaseScorer<'a>,
}

impl Oracle<'_> {
    /// The scorer's reasons against `response` (empty: it passes).
    fn reasons(&self, response: &Response) -> Vec<String> {
        let (_, reasons) = match self.variant {
            Some(v) => self.scorer.score_variant(v, self.mode, response),
            None => self.scorer.score(self.mode, response),
        };
        reasons
            .into_iter()
            .map(|r| format!("{}: {}", r.code, r.message))
            .collect()
    }

    /// The answers that give `want`, to try in order: under the `bfcl` profile, BFCL's
    /// own reading of the expected values first (its checker decides those verdicts).
    fn builds(&self, want: &Want<'_>) -> Vec<(Response, Vec<String>)> {
        match want {
            Want::Calls(e) => {
                let forced = match self.mode {
                    ToolChoice::Function(n) => Some(n.as_str()),
                    _ => None,
                };
                let mut out = Vec::new();
                if self.suite.profile.reads_values_as_options() && !e.calls.is_empty() {
                    let mut problems = Vec::new();
                    let calls = bfcl_calls(
                        e,
                        forced,
                        self.tools,
                        &self.ground,
                        self.seed,
                        &mut problems,
                    );
                    out.push((calls_response(calls), problems));
                }
                let mut problems = Vec::new();
                let calls = calls_of(
                    e,
                    forced,
                    self.tools,
                    &self.ground,
                    self.seed,
                    &mut problems,
                );
                out.push((calls_response(calls), problems));
                out
            }
            Want::Text { checks, behaviour } => {
                let (text, problems) = self.text(checks, *behaviour);
                vec![(text_response(text), problems)]
            }
        }
    }

    /// What an API gives under a mode that no acceptable outcome fits: a text answer
    /// under `none`; under a forcing mode the expected calls it allows (to the forced
    /// function), or else one call with arguments from the schema alone.
    fn forced(&self, wants: &[Want<'_>]) -> (Response, Vec<String>) {
        let mut problems = Vec::new();
        let name = match self.mode {
            ToolChoice::None | ToolChoice::Auto => {
                return (
                    text_response("I will answer without using a tool.".to_string()),
                    problems,
                );
            }
            ToolChoice::Function(n) => Some(n.as_str()),
            ToolChoice::Required => None,
        };
        for w in wants {
            if let Want::Calls(e) = w {
                let calls = calls_of(e, name, self.tools, &self.ground, self.seed, &mut problems);
                if !calls.is_empty() {
                    return (calls_response(calls), problems);
                }
            }
        }
        let any = CallsExpectation {
            calls: Vec::new(),
            count: crate::suite::CountMode::AtLeast,
        };
        let calls = calls_of(
            &any,
            name,
            self.tools,
            &self.ground,
            self.seed,
            &mut problems,
        );
        (calls_response(calls), problems)
    }

    /// A text answer holding `checks` that shows `behaviour`.
    fn text(&self, checks: &TextChecks, behaviour: Option<Behaviour>) -> (String, Vec<String>) {
        text_answer(self.suite.norm, &self.ground, self.seed, checks, behaviour)
    }
}

/// The canonical answers of a text behaviour, in the order tried when the case gives
/// no words of its own: each is read as its behaviour by [`classify`].
fn canonical(behaviour: Option<Behaviour>) -> &'static [&'static str] {
    match behaviour {
        Some(Behaviour::RequestForInfo) => &[
            "Could you tell me which one you mean?",
            "Please tell me which one you mean.",
        ],
        Some(Behaviour::CannotAnswer) => &[
            "Sorry, I can't help with that: none of my tools can do it.",
            "I am unable to do that.",
        ],
        Some(Behaviour::Direct | Behaviour::ToolCall) | None => &["Here is the answer."],
    }
}

/// The sentences added after the words a case requires so that the answer shows
/// `behaviour`, in the order tried (`None`: the words alone).
fn suffixes(behaviour: Option<Behaviour>, parts: &[String]) -> Vec<Option<&'static str>> {
    match behaviour {
        Some(Behaviour::RequestForInfo) => {
            let asks = parts.iter().any(|p| p.contains('?') || p.contains('？'));
            let mut out = vec![(!asks).then_some("Which one do you mean?")];
            out.extend(canonical(behaviour).iter().copied().map(Some));
            out
        }
        Some(Behaviour::CannotAnswer) => canonical(behaviour).iter().copied().map(Some).collect(),
        Some(Behaviour::Direct) => vec![None, Some("Here is the answer.")],
        Some(Behaviour::ToolCall) | None => vec![None],
    }
}

/// A text answer holding `checks` that shows `behaviour` (a question for `clarify`, a
/// "cannot" sentence for `cannot_answer`, a plain answer for `direct`), preferring what
/// `ground` says for a regex; with the problem when no text holds them all.
fn text_answer(
    norm: Normalizer,
    ground: &Grounding,
    seed: u64,
    checks: &TextChecks,
    behaviour: Option<Behaviour>,
) -> (String, Vec<String>) {
    let parts: Vec<String> = checks.contains.clone();
    let mut candidates: Vec<String> = Vec::new();
    if parts.is_empty() && checks.regex.is_none() {
        candidates.extend(canonical(behaviour).iter().map(|s| s.to_string()));
    }
    let join = |xs: &[&str]| {
        xs.iter()
            .filter(|x| !x.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let base = join(&parts.iter().map(String::as_str).collect::<Vec<_>>());
    let asks = behaviour == Some(Behaviour::RequestForInfo);
    for q in suffixes(behaviour, &parts) {
        let q = q.unwrap_or_default();
        let around = |s: &str, out: &mut Vec<String>| {
            out.push(join(&[&base, s, q]));
            out.push(join(&[s, &base, q]));
            out.push(join(&[s, q]));
            out.push(format!("{s}{q}"));
            out.push(s.to_string());
        };
        match &checks.regex {
            None if !candidates.is_empty() => {}
            None => candidates.push(join(&[&base, q])),
            Some(re) => {
                // What the conversation says, the regex's plainest string, the shortest
                // text every check accepts at once, then seeded variations.
                let grounded: Vec<&str> = re
                    .find_iter(&ground.text)
                    .take(4)
                    .map(|m| m.as_str())
                    .collect();
                let own = samples(re.as_str(), seed ^ seed_of(&["text"]), 32);
                for s in grounded
                    .iter()
                    .copied()
                    .chain(own.first().map(String::as_str))
                {
                    around(s, &mut candidates);
                }
                let escaped: Vec<String> = checks
                    .contains
                    .iter()
                    .map(|c| regex::escape(&norm.apply(c)))
                    .chain(asks.then(|| "[?？]".to_string()))
                    .collect();
                let mut patterns: Vec<(&str, bool)> = escaped
                    .iter()
                    .map(|e| (e.as_str(), norm.casefolds()))
                    .collect();
                patterns.push((re.as_str(), norm.casefolds()));
                if let Some(found) = intersect(&patterns, 0, None) {
                    let with_q = (!q.is_empty()).then(|| join(&[&found, q]));
                    candidates.push(found);
                    candidates.extend(with_q);
                }
                for s in own.iter().skip(1) {
                    around(s, &mut candidates);
                }
            }
        }
        // Each suffix only when the plainer texts before it do not hold.
        if let Some(c) = candidates
            .iter()
            .find(|c| text_holds(checks, behaviour, &norm, c))
        {
            return (c.clone(), Vec::new());
        }
    }
    let mut what = Vec::new();
    if !checks.contains.is_empty() {
        what.push(format!(
            "contains {}",
            checks
                .contains
                .iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(re) = &checks.regex {
        what.push(format!("matches /{}/", re.as_str()));
    }
    if let Some(b) = behaviour {
        what.push(format!("the classifier reads as `{}`", b.suite_name()));
    }
    let problem = format!("the text answer: found no text that {}", what.join(" and "));
    (candidates.into_iter().next().unwrap_or(base), vec![problem])
}

/// Whether `text` passes `checks` as the scorer reads them: after the suite's
/// normalisation, and, for a `behaviour`, as the built-in classifier reads it.
fn text_holds(
    checks: &TextChecks,
    behaviour: Option<Behaviour>,
    norm: &Normalizer,
    text: &str,
) -> bool {
    let hay = norm.apply(text);
    checks
        .contains
        .iter()
        .all(|c| hay.contains(norm.apply(c).as_ref()))
        && checks.regex.as_ref().is_none_or(|re| re.is_match(&hay))
        && behaviour.is_none_or(|b| classify(text).behaviour == b)
}

/// The calls of `e` (only those to `forced` when a function is forced; one call to it,
/// or to the first tool, for `any_call`), with their arguments.
fn calls_of(
    e: &CallsExpectation,
    forced: Option<&str>,
    tools: &[ToolDefinition],
    ground: &Grounding,
    seed: u64,
    problems: &mut Vec<String>,
) -> Vec<ToolCall> {
    let empty = Value::Object(serde_json::Map::new());
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| &*t.parameters)
    };
    let mut out = Vec::new();
    if e.calls.is_empty() {
        let Some(name) = forced.or_else(|| tools.first().map(|t| t.name.as_str())) else {
            problems.push("a call is expected, but the case offers no tools".to_string());
            return out;
        };
        let schema = schema_of(name).unwrap_or(&empty);
        let mut values = Values::new(schema, ground, seed);
        let args = values.object(&[], crate::suite::ExtraArgs::Allow, Some(schema), "");
        problems.extend(
            values
                .problems
                .into_iter()
                .map(|p| format!("`{name}` call: {p}")),
        );
        out.push(call(out.len(), name, &Value::Object(args)));
        return out;
    }
    for c in &e.calls {
        if forced.is_some_and(|f| f != c.tool) {
            continue;
        }
        let schema = match schema_of(&c.tool) {
            Some(s) => s,
            None => {
                problems.push(format!("`{}` is not among the tools offered", c.tool));
                &empty
            }
        };
        let mut values = Values::new(schema, ground, seed);
        let args = values.object(&c.args, c.extra, Some(schema), "");
        problems.extend(
            values
                .problems
                .into_iter()
                .map(|p| format!("`{}` call: {p}", c.tool)),
        );
        out.push(call(out.len(), &c.tool, &Value::Object(args)));
    }
    out
}

/// The calls of `e` as BFCL reads its expected values (the `bfcl` profile): each
/// argument the first acceptable option that is not `""` (BFCL's "may be omitted"),
/// nested dicts read the same way; required parameters BFCL leaves out from the schema.
fn bfcl_calls(
    e: &CallsExpectation,
    forced: Option<&str>,
    tools: &[ToolDefinition],
    ground: &Grounding,
    seed: u64,
    problems: &mut Vec<String>,
) -> Vec<ToolCall> {
    fn pick(options: &[Value]) -> Option<Value> {
        options.iter().find(|v| v.as_str() != Some("")).map(read)
    }
    fn read(v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter_map(|(k, x)| {
                        let options = match x {
                            Value::Array(a) => a.clone(),
                            other => vec![other.clone()],
                        };
                        pick(&options).map(|p| (k.clone(), p))
                    })
                    .collect(),
            ),
            // A list of dicts holds dicts of option lists too.
            Value::Array(items) => Value::Array(items.iter().map(read).collect()),
            other => other.clone(),
        }
    }
    let empty = Value::Object(serde_json::Map::new());
    let mut out = Vec::new();
    for c in e
        .calls
        .iter()
        .filter(|c| forced.is_none_or(|f| f == c.tool))
    {
        let schema = tools
            .iter()
            .find(|t| t.name == c.tool)
            .map_or(&empty, |t| &*t.parameters);
        let props = schema.get("properties").and_then(Value::as_object);
        let mut args = serde_json::Map::new();
        for (name, raw) in &c.raw_args {
            // BFCL answers name parameters some functions lack; its checker refuses them.
            if props.is_some_and(|p| !p.contains_key(name)) {
                continue;
            }
            match crate::functions::options_of(raw) {
                Ok(options) => {
                    if let Some(v) = pick(&options) {
                        args.insert(name.clone(), v);
                    }
                }
                Err(why) => problems.push(format!("`{}` call: `{name}`: {why}", c.tool)),
            }
        }
        let mut values = Values::new(schema, ground, seed);
        let required = schema.get("required").and_then(Value::as_array);
        for r in required.into_iter().flatten().filter_map(Value::as_str) {
            if args.contains_key(r) || c.raw_args.iter().any(|(n, _)| n == r) {
                continue;
            }
            let sub = props.and_then(|p| p.get(r));
            if let Some(v) = values.schema_value(sub, r) {
                args.insert(r.to_string(), v);
            }
        }
        out.push(call(out.len(), &c.tool, &Value::Object(args)));
    }
    out
}

fn call(i: usize, name: &str, args: &Value) -> ToolCall {
    ToolCall {
        id: Some(format!("call_{}", i + 1)),
        name: name.to_string(),
        arguments: args.to_string(),
    }
}

fn calls_response(calls: Vec<ToolCall>) -> Response {
    Response {
        finish_reason: Some(
            if calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .into(),
        ),
        tool_calls: calls,
        ..Response::default()
    }
}

fn text_response(text: String) -> Response {
    Response {
        text: Some(text),
        finish_reason: Some("stop".into()),
        ..Response::default()
    }
}

/// `a` then the items of `b` it lacks.
fn merge(mut a: Vec<String>, b: Vec<String>) -> Vec<String> {
    for x in b {
        if !a.contains(&x) {
            a.push(x);
        }
    }
    a
}

/// `response` with what the oracle could not satisfy written into its text, so the
/// trial record itself says why it failed.
fn with_note(mut response: Response, unmet: &[String]) -> Response {
    if unmet.is_empty() {
        return response;
    }
    let note = format!(
        "[scripted:oracle could not satisfy this expectation: {}]",
        unmet.join("; ")
    );
    response.text = Some(match response.text.take() {
        Some(t) if !t.is_empty() => format!("{t}\n\n{note}"),
        _ => note,
    });
    response
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    const MATCHERS: &str = include_str!("../../../tests/integration/fixtures/oracle/matchers.yaml");
    const KINDS: &str = include_str!("../../../tests/integration/fixtures/oracle/kinds.yaml");
    const UNSATISFIABLE: &str =
        include_str!("../../../tests/integration/fixtures/oracle/unsatisfiable.yaml");

    fn load(name: &str, text: &str) -> Suite {
        crate::suite::load_str(text, Path::new(name)).unwrap_or_else(|e| panic!("{e}"))
    }

    fn tools(suite: &Suite, case: &Case) -> Vec<ToolDefinition> {
        case.tools(suite)
            .iter()
            .map(|t| t.definition("default"))
            .collect()
    }

    /// Every (case, mode) of the suite's matrix with the oracle's answer.
    fn trials(suite: &Suite) -> Vec<(&Case, ToolChoice, Answer)> {
        let mut out = Vec::new();
        for case in &suite.cases {
            for mode in suite
                .matrix
                .tool_choice
                .iter()
                .filter(|m| case.applies_to(m))
            {
                let a = answer(suite, case, mode, &tools(suite, case));
                out.push((case, mode.clone(), a));
            }
        }
        out
    }

    fn assert_all_pass(suite: &Suite, expected_trials: usize) {
        let trials = trials(suite);
        assert_eq!(trials.len(), expected_trials);
        for (case, mode, a) in &trials {
            assert!(
                a.unmet.is_empty(),
                "{} under {mode}: {:?}",
                case.id,
                a.unmet
            );
            let (checks, reasons) = CaseScorer::new(suite, case).score(mode, &a.response);
            assert!(reasons.is_empty(), "{} under {mode}: {reasons:?}", case.id);
            assert!(
                checks.calls.iter().all(|c| c.invalid.is_none()),
                "{} under {mode}: {checks:?}",
                case.id
            );
        }
        assert!(unmet(suite, &suite.matrix.tool_choice).is_empty());
    }

    fn args_of(suite: &Suite, id: &str, mode: &ToolChoice) -> Value {
        let case = suite.cases.iter().find(|c| c.id == id).unwrap();
        let a = answer(suite, case, mode, &tools(suite, case));
        assert!(a.unmet.is_empty(), "{id}: {:?}", a.unmet);
        serde_json::from_str(&a.response.tool_calls[0].arguments).unwrap()
    }

    #[test]
    fn passes_every_matcher_kind_under_every_calling_mode() {
        // 14 cases × 3 modes.
        assert_all_pass(&load("matchers.yaml", MATCHERS), 42);
    }

    #[test]
    fn passes_every_case_kind_under_every_tool_choice_mode() {
        // call-one 4, parallel-exact 3, at-least 4, any-call 5, text-checks 5,
        // clarify-first 4, no-call-first 4, forced-other-tool 3, per-mode-everywhere 5,
        // answer-after-tool 2.
        assert_all_pass(&load("kinds.yaml", KINDS), 39);
    }

    const BEHAVIOURS: &str = r#"
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
matrix: {tool_choice: [auto, none]}
cases:
  - {id: cannot, kind: should_not_call, prompt: Book a flight., expect: {behaviour: cannot_answer}}
  - {id: cannot-rome, kind: should_not_call, prompt: Book a flight to Rome., expect: {behaviour: cannot_answer, contains: [Rome]}}
  - {id: direct-paris, kind: should_not_call, prompt: Capital of France?, expect: {behaviour: direct, contains: [Paris]}}
  - {id: direct, kind: should_not_call, prompt: Hi, expect: {behaviour: direct}}
  - {id: ask-date, kind: should_not_call, prompt: Book it., expect: {behaviour: clarify, regex: 'date'}}
  - id: text-only
    kind: ambiguous
    prompt: Weather on Mars?
    expect: {any_of: [{cannot_answer: true}, {direct: true}]}
  - id: ask-or-call
    kind: ambiguous
    prompt: Weather?
    expect: {any_of: [{clarify: true, contains: [city]}, {calls: [{tool: get_weather}]}]}
"#;

    #[test]
    fn behaviour_cases_get_canonical_answers_the_classifier_reads_as_theirs() {
        let s = load("behaviours.yaml", BEHAVIOURS);
        // 7 cases × 2 modes.
        assert_all_pass(&s, 14);
        let said = |id: &str| {
            let case = s.cases.iter().find(|c| c.id == id).unwrap();
            answer(&s, case, &ToolChoice::Auto, &tools(&s, case))
                .response
                .text
                .unwrap_or_default()
        };
        assert_eq!(
            said("cannot"),
            "Sorry, I can't help with that: none of my tools can do it."
        );
        assert_eq!(
            said("cannot-rome"),
            "Rome Sorry, I can't help with that: none of my tools can do it."
        );
        assert_eq!(said("direct-paris"), "Paris");
        assert_eq!(said("direct"), "Here is the answer.");
        assert_eq!(
            said("text-only"),
            "Sorry, I can't help with that: none of my tools can do it."
        );
        assert_eq!(said("ask-or-call"), "city Which one do you mean?");
        for text in canonical(Some(Behaviour::RequestForInfo)) {
            assert_eq!(
                classify(text).behaviour,
                Behaviour::RequestForInfo,
                "{text}"
            );
        }
        for text in canonical(Some(Behaviour::CannotAnswer)) {
            assert_eq!(classify(text).behaviour, Behaviour::CannotAnswer, "{text}");
        }
        assert_eq!(classify(canonical(None)[0]).behaviour, Behaviour::Direct);
    }

    #[test]
    fn values_satisfy_the_matcher_and_the_schema_together() {
        let s = load("matchers.yaml", MATCHERS);
        let auto = ToolChoice::Auto;
        let a = args_of(&s, "regex-and-pattern", &auto);
        // `X$` within `^[A-Z]{3}$`; `^2026-1[0-2]-` within the pattern and a real date.
        assert_eq!(a["to"], "AAX");
        assert_eq!(a["date"], "2026-10-01");
        let a = args_of(&s, "ranges", &auto);
        // The first whole number in [2.5, 4.2]; the first multiple of 0.5 in [100.2, 101].
        assert_eq!(a["passengers"], 3);
        assert_eq!(a["budget"], 100.5);
        let a = args_of(&s, "one-of-outside-the-enum-first", &auto);
        assert_eq!(
            (&a["from"], &a["cabin"]),
            (&json!("PEK"), &json!("business"))
        );
        let a = args_of(&s, "nested-object", &auto);
        assert_eq!(
            a["traveller"],
            json!({"name": "Li", "age": 30, "contact": {"phone": "+860000"}})
        );
        let a = args_of(&s, "arrays", &auto);
        assert_eq!(a["stops"], json!(["XAA", "HKG"]));
        assert_eq!(a["seats"], json!(["12A", "0C"]));
        let a = args_of(&s, "nullable-pattern", &auto);
        assert_eq!(a["loyalty"], "LY0007");
        let a = args_of(&s, "eq-and-normalize", &auto);
        assert_eq!(
            a["from"], "PEK",
            "the enum's spelling of `pek` under casefold"
        );
        let a = args_of(&s, "absent-and-optional", &auto);
        assert_eq!(a.get("loyalty"), None);
        assert_eq!(
            a["cabin"], "business",
            "optional, but the schema requires it"
        );
        let a = args_of(&s, "contains-with-lengths", &auto);
        assert_eq!(a["note"], "aislexxxxxxx", "padded to minLength 12");
    }

    #[test]
    fn arguments_the_expectation_leaves_open_come_from_the_prompt() {
        let s = load("matchers.yaml", MATCHERS);
        let a = args_of(&s, "grounded-required", &ToolChoice::Auto);
        assert_eq!(
            a,
            json!({"from": "PEK", "to": "PEK", "date": "2026-10-12", "passengers": 3, "cabin": "business"})
        );
        let case = s
            .cases
            .iter()
            .find(|c| c.id == "grounded-required")
            .unwrap();
        let r = answer(&s, case, &ToolChoice::Auto, &tools(&s, case)).response;
        let (checks, _) = CaseScorer::new(&s, case).score(&ToolChoice::Auto, &r);
        assert!(checks.calls[0].ungrounded.is_empty(), "{checks:?}");
    }

    #[test]
    fn honours_the_tool_choice_mode() {
        let s = load("kinds.yaml", KINDS);
        for (case, mode, a) in trials(&s) {
            let names: Vec<&str> = a
                .response
                .tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            match &mode {
                ToolChoice::None => assert!(names.is_empty(), "{} under none: {names:?}", case.id),
                ToolChoice::Required => assert!(!names.is_empty(), "{} under required", case.id),
                ToolChoice::Function(f) => assert!(
                    !names.is_empty() && names.iter().all(|n| n == f),
                    "{} under {mode}: {names:?}",
                    case.id
                ),
                ToolChoice::Auto => {}
            }
        }
        // The outcomes chosen: the first acceptable one the mode allows.
        let clarify = s.cases.iter().find(|c| c.id == "clarify-first").unwrap();
        let a = answer(&s, clarify, &ToolChoice::Auto, &tools(&s, clarify));
        assert_eq!(
            a.response.text.as_deref(),
            Some("city which Which one do you mean?")
        );
        let a = answer(&s, clarify, &ToolChoice::Required, &tools(&s, clarify));
        assert_eq!(a.response.tool_calls.len(), 1);
        let text = s.cases.iter().find(|c| c.id == "text-checks").unwrap();
        let a = answer(&s, text, &ToolChoice::Auto, &tools(&s, text));
        assert_eq!(a.response.text.as_deref(), Some("the answer is 4"));
        let parallel = s.cases.iter().find(|c| c.id == "parallel-exact").unwrap();
        let a = answer(&s, parallel, &ToolChoice::Auto, &tools(&s, parallel));
        let calls: Vec<(&str, &str)> = a
            .response
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("get_weather", r#"{"city":"Paris","unit":"celsius"}"#),
                (
                    "get_weather",
                    r#"{"city":"Rome","days":2,"unit":"celsius"}"#
                ),
                ("get_time", r#"{"city":"Tokyo","format":"24h"}"#),
            ]
        );
    }

    #[test]
    fn under_the_bfcl_profile_nested_dicts_are_read_as_bfcl_reads_them() {
        // BFCL writes a nested dict's values as lists of acceptable values: `李雷`, not
        // the list `["李雷"]` a plain matcher would read; `""` means "may be omitted".
        let s = load(
            "bfcl.yaml",
            r#"
name: bfcl-nested
profile: { bfcl: { category: simple_python } }
tools:
  - name: add_person
    description: Add a person.
    parameters:
      type: object
      properties:
        person:
          type: object
          properties: { name: { type: string }, age: { type: integer }, note: { type: string } }
        tags: { type: array, items: { type: string } }
      required: [person]
cases:
  - id: nested
    kind: should_call
    prompt: "Add 李雷, 30."
    expect:
      calls:
        - tool: add_person
          args:
            person: { eq: { name: ["李雷"], age: [30, ""], note: [""] } }
            tags: { optional: true, one_of: [{ eq: [a, b] }] }
"#,
        );
        assert_all_pass(&s, 1);
        assert_eq!(
            args_of(&s, "nested", &ToolChoice::Auto),
            json!({"person": {"name": "李雷", "age": 30}, "tags": ["a", "b"]})
        );
    }

    #[test]
    fn names_what_a_variant_schema_makes_impossible_and_passes_the_rest() {
        let s = load(
            "variants.yaml",
            r#"
tools:
  - name: book
    description: Book a seat.
    variants:
      strict: { parameters: { type: object, properties: { seat: { type: string, enum: [first] } }, required: [seat], additionalProperties: false } }
      doc: { parameter_descriptions: { seat: "first or second" } }
    parameters: { type: object, properties: { seat: { type: string, enum: [first, second] } }, required: [seat] }
cases:
  - { id: second, kind: should_call, prompt: "second class", expect: { calls: [{ tool: book, args: { seat: second } }] } }
  - { id: first, kind: should_call, prompt: "first class", expect: { calls: [{ tool: book, args: { seat: first } }] } }
"#,
        );
        let unmet = unmet(&s, &s.matrix.tool_choice);
        assert_eq!(unmet.len(), 1, "{unmet:?}");
        assert_eq!(unmet[0].case_id, "second");
        assert_eq!(
            unmet[0].what,
            [
                "under variant `strict`: `book` call: `seat`: no value is both \"second\" and valid against the parameter's schema",
                // The scorer, checking against the variant's schema, agrees.
                "under variant `strict`: schema_violation: call to `book` violates its schema: /seat: \"second\" is not one of \"first\""
            ]
        );
        // Under the strict variant the answer to `first` validates against its schema.
        let case = &s.cases[1];
        let tools: Vec<ToolDefinition> = case
            .tools(&s)
            .iter()
            .map(|t| t.definition("strict"))
            .collect();
        let a = answer_variant(&s, case, "strict", &ToolChoice::Auto, &tools);
        assert!(a.unmet.is_empty(), "{:?}", a.unmet);
        assert_eq!(a.response.tool_calls[0].arguments, r#"{"seat":"first"}"#);
    }

    #[test]
    fn answers_are_deterministic() {
        let s = load("matchers.yaml", MATCHERS);
        let first: Vec<Response> = trials(&s).into_iter().map(|(_, _, a)| a.response).collect();
        let again: Vec<Response> = trials(&s).into_iter().map(|(_, _, a)| a.response).collect();
        assert_eq!(first, again);
    }

    #[test]
    fn names_every_expectation_it_cannot_satisfy() {
        let s = load("unsatisfiable.yaml", UNSATISFIABLE);
        let unmet = unmet(&s, &s.matrix.tool_choice);
        let got: Vec<(&str, String, &str)> = unmet
            .iter()
            .map(|u| (u.case_id.as_str(), u.mode.to_string(), u.what[0].as_str()))
            .collect();
        let mode_msg = "tool_choice `required` forces a call, but the case expects no call under `required` (state what the mode should produce with `per_mode`, or leave the mode out with `modes`)";
        let empty = "`set_mode` call: `mode`: found no value that is a string matching /[^\\s\\S]/";
        let turbo = "`set_mode` call: `mode`: no value is both a string matching /^turbo$/ and valid against the parameter's schema";
        let code = "`set_mode` call: `code`: no value is both a string matching /^[a-z]+$/ and valid against the parameter's schema";
        let level = "`set_mode` call: `level`: no value is both a number in [4, 6] and valid against the parameter's schema";
        let absent =
            "`set_mode` call: `mode`: the expectation wants it absent, but the schema requires it";
        let text = "the text answer: found no text that contains \"hello\" and matches /^bye$/";
        let expected: Vec<(&str, &str, &str)> = vec![
            ("empty-regex", "auto", empty),
            ("empty-regex", "required", empty),
            ("regex-outside-enum", "auto", turbo),
            ("regex-outside-enum", "required", turbo),
            ("regex-against-pattern", "auto", code),
            ("regex-against-pattern", "required", code),
            ("range-outside-schema", "auto", level),
            ("range-outside-schema", "required", level),
            ("absent-but-required", "auto", absent),
            ("absent-but-required", "required", absent),
            ("text-contradiction", "auto", text),
            ("text-contradiction", "required", mode_msg),
            ("no-call-forced", "required", mode_msg),
        ];
        assert_eq!(
            got,
            expected
                .iter()
                .map(|(a, b, c)| (*a, b.to_string(), *c))
                .collect::<Vec<_>>()
        );
        // The trial itself says why.
        let case = s
            .cases
            .iter()
            .find(|c| c.id == "regex-outside-enum")
            .unwrap();
        let a = answer(&s, case, &ToolChoice::Auto, &tools(&s, case));
        let text = a.response.text.unwrap();
        assert!(
            text.starts_with("[scripted:oracle could not satisfy this expectation: ")
                && text.contains(turbo),
            "{text}"
        );
        let w = warning(&s.name, &unmet).unwrap();
        assert!(
            w.starts_with("scripted:oracle can not satisfy 13 trial expectation(s) of suite `oracle-unsatisfiable`, so no model can pass them (check these cases): empty-regex, regex-outside-enum, regex-against-pattern, range-outside-schema, absent-but-required, text-contradiction, no-call-forced\n  - empty-regex under auto: "),
            "{w}"
        );
        assert_eq!(w.lines().count(), 14);
        assert_eq!(warning("x", &[]), None);
    }
}
