//! Compiling `judge:` (the suite's judge model) and `final.rubric` (a free-text check
//! the judge makes of a case's final answer).
//!
//! The judge's target is checked as every target is ([`super::targets::check_target`]);
//! its prompt file is read relative to the suite and checked for the variables the
//! suite's questions need ([`super::judge_prompt::check`]). Whether a judge is
//! set at all is known only when the run starts (`run --judge TARGET` can supply one), so
//! a rubric keeps the located error the run reports when none is ([`Rubric::unjudged`]).

use std::path::{Path, PathBuf};

use super::compile::{Checker, lexical_join};
use super::error::Diagnostic;
use super::judge_prompt::{self as prompt, MAX_PROMPT_BYTES, Needs};
use super::model::{CaseSpec, ExpectSpec, JudgeSpec};
use super::span::Spanned;
use super::{Case, Expectation, Suite};

/// The suite's judge model (`judge:`).
#[derive(Debug, Clone)]
pub struct SuiteJudge {
    /// The target as written (`provider:model`), checked.
    pub target: String,
    /// The suite's own prompt template, when `prompt:` is given.
    pub prompt: Option<JudgePrompt>,
}

/// A judge prompt template read from a file.
#[derive(Debug, Clone)]
pub struct JudgePrompt {
    /// The file, resolved against the suite's directory.
    pub path: PathBuf,
    /// Its text (a minijinja template).
    pub text: String,
}

/// A case's `final.rubric`.
#[derive(Debug, Clone)]
pub struct Rubric {
    /// The rubric as written.
    pub text: String,
    /// The located error a run reports when neither `judge:` nor `--judge` gives a
    /// judge to check it.
    pub unjudged: Diagnostic,
}

/// Whether `expect` names the behaviour of a text answer, which the judge (when one is
/// set) decides instead of the built-in classifier.
pub fn names_behaviour(expect: &Expectation) -> bool {
    expect.names_text_behaviour()
}

impl Suite {
    /// The first rubric of the suite, whose error a run without a judge reports.
    pub fn first_rubric(&self) -> Option<&Rubric> {
        self.cases.iter().find_map(|c| c.rubric.as_ref())
    }

    /// What the suite asks a judge.
    pub fn judge_needs(&self) -> Needs {
        needs(&self.cases)
    }
}

fn needs(cases: &[Case]) -> Needs {
    Needs {
        behaviour: cases.iter().any(|k| {
            names_behaviour(&k.expect) || k.per_mode.iter().any(|o| names_behaviour(&o.expect))
        }),
        rubric: cases.iter().any(|k| k.rubric.is_some()),
    }
}

/// The case's `final.rubric`, checked: not empty, and not per mode (a rubric judges the
/// case's final answer under every mode).
pub(super) fn compile_rubric(c: &mut Checker<'_>, spec: &CaseSpec, field: &str) -> Option<Rubric> {
    for (j, o) in spec.per_mode.iter().enumerate() {
        if let Some(r) = o.expect.as_ref().and_then(rubric_of) {
            c.report(
                r.at(),
                format!("{field}.per_mode[{j}].expect.final.rubric"),
                "a rubric can not differ per mode",
                Some("put `final.rubric` in the case's own `expect`".into()),
            );
        }
    }
    let r = spec.expect.as_ref().and_then(rubric_of)?;
    let rfield = format!("{field}.expect.final.rubric");
    if r.value.trim().is_empty() {
        c.report(
            r.at(),
            rfield,
            "`final.rubric` is empty",
            Some(
                "write what the final answer must do, e.g. \"names the city and the temperature\""
                    .into(),
            ),
        );
        return None;
    }
    let unjudged = c.diagnostic(
        r.at(),
        rfield,
        format!(
            "case `{}` has `final.rubric`, which needs a judge model, but none is set",
            spec.id.value
        ),
        Some("set `judge: {target: PROVIDER:MODEL}` in the suite or pass --judge TARGET (offline: --judge scripted:judge)".into()),
    );
    Some(Rubric {
        text: r.value.clone(),
        unjudged,
    })
}

fn rubric_of(e: &ExpectSpec) -> Option<&Spanned<String>> {
    e.final_answer.as_ref().and_then(|f| f.rubric.as_ref())
}

/// `judge:`, checked against the compiled cases (what they will ask the judge).
pub(super) fn compile_judge(
    c: &mut Checker<'_>,
    spec: Option<&Spanned<JudgeSpec>>,
    path: &Path,
    cases: &[Case],
) -> Option<SuiteJudge> {
    let spec = spec?;
    let target = &spec.value.target;
    if let Err(e) = super::targets::check_target(&target.value) {
        c.report(target.at(), "judge.target", e.message, Some(e.hint));
    }
    let prompt = spec.value.prompt.as_ref().and_then(|p| {
        let file = lexical_join(path.parent().unwrap_or_else(|| Path::new("")), &p.value);
        let text = match read_prompt(&file) {
            Ok(t) => t,
            Err(why) => {
                c.report(
                    p.at(),
                    "judge.prompt",
                    format!("failed to read the judge prompt `{}`: {why}", file.display()),
                    Some("give a UTF-8 text file, relative to the suite's directory; drop `prompt:` to use the built-in prompts (docs/judge.md)".into()),
                );
                return None;
            }
        };
        if let Err(e) = prompt::check(&text, needs(cases)) {
            c.report(
                p.at(),
                "judge.prompt",
                format!("`{}`: {e}", file.display()),
                Some(format!(
                    "a judge prompt can use {}; see docs/judge.md",
                    prompt::VARIABLES
                        .iter()
                        .map(|(n, _)| format!("`{{{{ {n} }}}}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return None;
        }
        Some(JudgePrompt { path: file, text })
    });
    Some(SuiteJudge {
        target: target.value.clone(),
        prompt,
    })
}

fn read_prompt(file: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > MAX_PROMPT_BYTES as u64 {
        return Err(format!(
            "{} bytes is over the {MAX_PROMPT_BYTES}-byte limit for a prompt",
            meta.len()
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::error::SuiteError;

    const TOOLS: &str = r#"
tools:
  - name: get_weather
    description: Current weather for one city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
"#;

    fn load(dir: &Path, text: &str) -> Result<Suite, SuiteError> {
        let path = dir.join("s.yaml");
        std::fs::write(&path, format!("name: s\n{TOOLS}{text}")).unwrap();
        crate::suite::load(&path)
    }

    fn problems(dir: &Path, text: &str) -> Vec<(u32, String, String, Option<String>)> {
        match load(dir, text) {
            Err(SuiteError::Invalid(d)) => d
                .into_iter()
                .map(|d| (d.line, d.field, d.message, d.hint))
                .collect(),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("the suite loaded"),
        }
    }

    const CLARIFY: &str = r#"
cases:
  - id: vague
    kind: ambiguous
    prompt: "Weather?"
    expect: {any_of: [{clarify: true}]}
  - id: capital
    kind: should_not_call
    prompt: "Capital of France?"
    expect:
      final: {rubric: 'Says "Paris".'}
"#;

    #[test]
    fn a_judge_and_rubrics_compile_on_single_turn_cases() {
        let dir = tempfile::tempdir().unwrap();
        let s = load(
            dir.path(),
            &format!("judge: {{target: openai:gpt-4o-mini}}\n{CLARIFY}"),
        )
        .unwrap();
        let j = s.judge.as_ref().unwrap();
        assert_eq!(j.target, "openai:gpt-4o-mini");
        assert!(j.prompt.is_none());
        assert!(s.cases[0].rubric.is_none());
        let r = s.cases[1].rubric.as_ref().unwrap();
        assert_eq!(r.text, r#"Says "Paris"."#);
        // A rubric alone is no loop expectation: the single-turn case loads.
        assert!(s.cases[1].loop_expect.is_none());
        assert_eq!(
            s.judge_needs(),
            Needs {
                behaviour: true,
                rubric: true
            }
        );
        // Without `judge:` the suite loads; the run reports the rubric's location.
        let s = load(dir.path(), CLARIFY).unwrap();
        let d = &s.first_rubric().unwrap().unjudged;
        assert_eq!(
            (d.line, d.field.as_str()),
            (17, "cases[1].expect.final.rubric")
        );
        assert_eq!(
            d.message,
            "case `capital` has `final.rubric`, which needs a judge model, but none is set"
        );
        assert!(d.hint.as_deref().unwrap().contains("pass --judge TARGET"));
    }

    #[test]
    fn a_bad_judge_target_prompt_or_rubric_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = problems(
            dir.path(),
            &format!("judge: {{target: opnai:gpt-4o, prompt: missing.txt}}\n{CLARIFY}"),
        );
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(
            (p[0].0, p[0].1.as_str(), p[0].2.as_str()),
            (
                7,
                "judge.target",
                "unknown provider `opnai` in target `opnai:gpt-4o`"
            )
        );
        assert_eq!(p[1].1, "judge.prompt");
        assert!(
            p[1].2.starts_with(&format!(
                "failed to read the judge prompt `{}`",
                dir.path().join("missing.txt").display()
            )),
            "{}",
            p[1].2
        );
        // A prompt that never shows the rubric, for a suite with rubrics.
        std::fs::write(dir.path().join("p.txt"), "Judge {{ answer }}.").unwrap();
        let p = problems(
            dir.path(),
            &format!("judge: {{target: scripted:judge, prompt: p.txt}}\n{CLARIFY}"),
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].2,
            format!(
                "`{}`: the judge prompt never uses `rubric`, `question`: cases have `final.rubric`, which the judge must see; the suite asks both questions (behaviour and rubric) with this one prompt, which must branch on `question`",
                dir.path().join("p.txt").display()
            )
        );
        // One that does loads, with its text.
        let good = "{% if question == 'rubric' %}{{ rubric }}{% endif %} {{ answer }}";
        std::fs::write(dir.path().join("p.txt"), good).unwrap();
        let s = load(
            dir.path(),
            &format!("judge: {{target: scripted:judge, prompt: p.txt}}\n{CLARIFY}"),
        )
        .unwrap();
        assert_eq!(s.judge.unwrap().prompt.unwrap().text, good);
        // An empty rubric, and one per mode.
        let p = problems(
            dir.path(),
            r#"
cases:
  - id: a
    kind: should_not_call
    prompt: "Hi"
    expect: {final: {rubric: " "}}
    per_mode:
      - modes: [none]
        kind: should_not_call
        expect: {final: {rubric: "x"}}
"#,
        );
        let fields: Vec<&str> = p.iter().map(|p| p.1.as_str()).collect();
        assert_eq!(
            fields,
            [
                "cases[0].per_mode[0].expect.final.rubric",
                "cases[0].expect.final.rubric"
            ],
            "{p:?}"
        );
        assert_eq!(p[1].2, "`final.rubric` is empty");
    }
}
