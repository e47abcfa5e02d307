//! `toolgauge import when2call FILE --out DIR`: When2Call's items as one suite.
//!
//! | When2Call label | case |
//! |---|---|
//! | `tool_call` | `should_call`: the target tool, with the example answer's arguments |
//! | `request_for_info` | `ambiguous`: `any_of: [{clarify: true}]` (ask for what is missing) |
//! | `cannot_answer` | `should_not_call`: `behaviour: cannot_answer` (say no tool fits) |
//! | `direct` | `should_not_call`: `behaviour: direct` (answer without a tool) |
//!
//! Each case is the item's `uuid`, offers the item's own tools (converted by the BFCL
//! importer: When2Call's tools are BFCL functions), and is tagged with its label,
//! `source:…` and `source_id:…`. How strictly the example's arguments are matched is
//! [`ArgMatch`]; When2Call itself judges only the behaviour, which the behaviour metrics
//! report whatever the choice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::item::{self, Item, ItemError};
use crate::behaviour::Behaviour;

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file is not When2Call's JSONL (which line and field, and why).
    #[error(transparent)]
    Item(#[from] ItemError),
    /// The suite file exists and `--force` was not given.
    #[error("`{path}` already exists")]
    Exists {
        /// The suite file.
        path: String,
    },
    /// An item converted into something the suite format rejects (e.g. a tool schema
    /// that does not compile): the suite loader's message, with the item's line.
    #[error("{message}")]
    Check {
        /// The loader's message, located at the item.
        message: String,
    },
    /// Writing the suite.
    #[error("failed to write `{path}`: {message}")]
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// How the arguments of a `tool_call` item's example answer become argument matchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgMatch {
    /// Each argument the example gives must be given with the example's value: strings
    /// equal after the suite's normalisation (`whitespace`, `casefold`, `fullwidth`),
    /// numbers by value, lists and maps exactly (`{eq: …}`). Other arguments are allowed.
    #[default]
    Values,
    /// Each argument the example gives must be given, with any value its schema accepts.
    Names,
    /// Only the tool: any arguments its schema accepts.
    Tool,
}

/// What to import, and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How the example call's arguments are matched.
    pub args: ArgMatch,
    /// Replace an existing suite file.
    pub force: bool,
}

/// The written suite.
#[derive(Debug)]
pub struct Imported {
    /// The suite file.
    pub path: PathBuf,
    /// Cases by When2Call label, in [`Behaviour::ALL`] order (labels with no item left out).
    pub by_label: Vec<(Behaviour, usize)>,
    /// Items that offer no tool.
    pub without_tools: usize,
    /// Example arguments their own parameter's schema rejects (a defect of the data, such
    /// as an `integer` parameter whose `enum` lists strings): not demanded, since no valid
    /// call could carry them; the argument may be given (validly) or left out.
    pub unchecked: Vec<Unchecked>,
}

/// An example argument left unchecked (see [`Imported::unchecked`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Unchecked {
    /// The item's line.
    pub line: usize,
    /// The item's uuid.
    pub uuid: String,
    /// The parameter.
    pub param: String,
    /// The example's value.
    pub value: Value,
}

impl Imported {
    /// Cases written.
    pub fn cases(&self) -> usize {
        self.by_label.iter().map(|(_, n)| n).sum()
    }
}

/// One case of the written suite; tools are their converted JSON text, shared by the
/// items that offer the same function.
#[derive(Serialize)]
struct CaseOut<'a> {
    id: &'a str,
    kind: &'static str,
    prompt: &'a str,
    tags: Vec<String>,
    tools: Vec<Arc<RawValue>>,
    expect: Value,
}

/// The written suite.
#[derive(Serialize)]
struct SuiteOut<'a> {
    name: String,
    description: String,
    normalize: [&'static str; 3],
    cases: Vec<CaseOut<'a>>,
}

/// The suite file `import` writes for `file` into `out`: `<file stem>.json`.
pub fn suite_path(file: &Path, out: &Path) -> PathBuf {
    out.join(format!("{}.json", suite_name(file)))
}

fn suite_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = crate::util::file_name::safe_name(&stem);
    if name.is_empty() {
        "when2call".into()
    } else {
        name
    }
}

/// Import the When2Call JSONL `file` as one suite in `out` (created if missing), and load
/// it back as a check.
pub fn import(file: &Path, out: &Path, opts: &Options) -> Result<Imported, ImportError> {
    let path = suite_path(file, out);
    if path.exists() && !opts.force {
        return Err(ImportError::Exists {
            path: path.display().to_string(),
        });
    }
    let items = item::read(file)?;
    let source = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (suite, unchecked) = suite_of(&items, &source, &suite_name(file), opts.args)?;

    let write_err = |p: &Path, e: &dyn std::fmt::Display| ImportError::Write {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(out).map_err(|e| write_err(out, &e))?;
    // One-space indentation, as BFCL imports: readable enough, and small.
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    Serialize::serialize(&suite, &mut ser).map_err(|e| write_err(&path, &e))?;
    buf.push(b'\n');
    // Written beside, then renamed: a failed import never leaves half a suite behind.
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, &buf).map_err(|e| write_err(&tmp, &e))?;
    if let Err(e) = crate::suite::load(&tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(ImportError::Check {
            message: located(&e.to_string(), &items, file),
        });
    }
    std::fs::rename(&tmp, &path).map_err(|e| write_err(&path, &e))?;

    let by_label = Behaviour::ALL
        .into_iter()
        .map(|b| (b, items.iter().filter(|i| i.label == b).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    Ok(Imported {
        path,
        by_label,
        without_tools: items.iter().filter(|i| i.tools.is_empty()).count(),
        unchecked,
    })
}

/// The suite loader's message about the written suite, with `cases[N]` traced back to the
/// item's line of `file`, since the user knows their file and not our suite.
fn located(message: &str, items: &[Item], file: &Path) -> String {
    let case = message
        .split("cases[")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| items.get(n));
    match case {
        Some(it) => format!(
            "`{}` line {} (uuid `{}`) does not convert into a valid case: {}",
            file.display(),
            it.line,
            it.uuid,
            message.trim_end()
        ),
        None => format!(
            "`{}` does not convert into a valid suite: {}",
            file.display(),
            message.trim_end()
        ),
    }
}

fn suite_of<'a>(
    items: &'a [Item],
    source: &str,
    name: &str,
    args: ArgMatch,
) -> Result<(SuiteOut<'a>, Vec<Unchecked>), ImportError> {
    let mut unchecked = Vec::new();
    // Converted tools by their text: the same function is converted once and shared.
    let mut converted: HashMap<&str, Arc<RawValue>> = HashMap::new();
    let mut cases = Vec::with_capacity(items.len());
    for it in items {
        let mut tools = Vec::with_capacity(it.tools.len());
        for (i, raw) in it.tools.iter().enumerate() {
            let t = match converted.get(raw.get()) {
                Some(t) => t.clone(),
                None => {
                    let t = crate::functions::tool(raw).map_err(|e| {
                        ImportError::Item(ItemError::Line {
                            path: source.to_string(),
                            line: it.line,
                            field: Some(format!("tools[{i}]")),
                            message: e,
                        })
                    })?;
                    converted.insert(raw.get(), t.clone());
                    t
                }
            };
            tools.push(t);
        }
        let mut tags = vec![it.label.label().to_string()];
        tags.extend(it.source.as_ref().map(|s| format!("source:{s}")));
        tags.extend(it.source_id.as_ref().map(|s| format!("source_id:{s}")));
        let target = it.call.as_ref().and_then(|c| {
            tools
                .iter()
                .filter_map(|t| serde_json::from_str::<Value>(t.get()).ok())
                .find(|t| t["name"] == c.name.as_str())
        });
        let (kind, expect) = expectation(it, args, target.as_ref(), &mut unchecked);
        cases.push(CaseOut {
            id: &it.uuid,
            kind,
            prompt: &it.question,
            tags,
            tools,
            expect,
        });
    }
    let n = items.len();
    let suite = SuiteOut {
        name: name.to_string(),
        description: format!(
            "When2Call ({n} items), imported from {source} by `toolgauge import when2call`. \
             When2Call: NVIDIA, \"When2Call: When (not) to Call Tools\" (NAACL 2025), \
             Apache License 2.0. Labels: tool_call -> should_call, request_for_info -> \
             ambiguous (clarify), cannot_answer / direct -> should_not_call with that \
             behaviour (docs/when2call.md)."
        ),
        normalize: ["whitespace", "casefold", "fullwidth"],
        cases,
    };
    Ok((suite, unchecked))
}

/// Whether `value` fits the converted `target` tool's schema of parameter `param`.
fn fits(target: Option<&Value>, param: &str, value: &Value) -> bool {
    let Some(schema) = target.and_then(|t| {
        t.pointer(&format!(
            "/parameters/properties/{}",
            param.replace('~', "~0").replace('/', "~1")
        ))
    }) else {
        return true;
    };
    jsonschema::validator_for(schema).map_or(true, |v| v.is_valid(value))
}

/// The kind and `expect` of an item's case; `target` is the converted target tool.
fn expectation(
    it: &Item,
    args: ArgMatch,
    target: Option<&Value>,
    unchecked: &mut Vec<Unchecked>,
) -> (&'static str, Value) {
    match (it.label, &it.call) {
        (Behaviour::ToolCall, Some(call)) => {
            let matchers: Map<String, Value> = match args {
                ArgMatch::Values => call
                    .arguments
                    .iter()
                    .map(|(k, v)| {
                        if fits(target, k, v) {
                            (
                                k.clone(),
                                crate::functions::matcher(std::slice::from_ref(v)),
                            )
                        } else {
                            unchecked.push(Unchecked {
                                line: it.line,
                                uuid: it.uuid.clone(),
                                param: k.clone(),
                                value: v.clone(),
                            });
                            (k.clone(), json!({"optional": true}))
                        }
                    })
                    .collect(),
                ArgMatch::Names => call
                    .arguments
                    .keys()
                    .map(|k| (k.clone(), json!({"any": true})))
                    .collect(),
                ArgMatch::Tool => Map::new(),
            };
            (
                "should_call",
                json!({"calls": [{"tool": call.name, "args": matchers}]}),
            )
        }
        // `item` gives every tool_call item its call; a call-less one would be a defect
        // there, so it falls back to any call rather than failing the import.
        (Behaviour::ToolCall, None) => ("should_call", json!({"any_call": true})),
        (Behaviour::RequestForInfo, _) => ("ambiguous", json!({"any_of": [{"clarify": true}]})),
        (b, _) => ("should_not_call", json!({"behaviour": b.suite_name()})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, props: Value) -> String {
        json!({"name": name, "description": format!("{name} tool"),
            "parameters": {"type": "dict", "properties": props, "required": []}})
        .to_string()
    }

    /// Four hand-made items, one per label; the `direct` one offers no tool.
    fn lines() -> String {
        let weather = tool(
            "get_weather",
            json!({"city": {"type": "string"}, "days": {"type": "integer"},
                   "units": {"type": "tuple", "items": {"type": "string"}}}),
        );
        let rows = [
            json!({"uuid": "a-call", "source": "BFCL v2 Live Multiple", "source_id": "live_multiple_1",
                "question": "Weather in Paris for 3 days?", "correct_answer": "tool_call",
                "answers": {"tool_call": json!({"name": "get_weather",
                    "arguments": {"city": "Paris", "days": 3, "units": ["C"]}}).to_string()},
                "target_tool": weather, "tools": [weather, tool("get_time", json!({}))]}),
            json!({"uuid": "b-ask", "source": "BFCL v2 Live Multiple", "source_id": "live_multiple_2",
                "question": "What's the weather?", "correct_answer": "request_for_info",
                "answers": {"request_for_info": "Which city?"},
                "target_tool": weather, "tools": [weather]}),
            json!({"uuid": "c-cannot", "source": "BFCL v2 Irrelevance", "source_id": "irrelevance_9",
                "question": "Book me a flight.", "correct_answer": "cannot_answer",
                "target_tool": null, "tools": [weather]}),
            json!({"uuid": "d-direct", "question": "What is 2+2?", "correct_answer": "direct",
                "target_tool": null, "tools": []}),
        ];
        rows.iter().map(|r| r.to_string() + "\n").collect()
    }

    fn suite(args: ArgMatch) -> Value {
        let items = item::parse(&lines(), "t.jsonl").unwrap();
        let (s, unchecked) = suite_of(&items, "t.jsonl", "t", args).ok().unwrap();
        assert!(unchecked.is_empty());
        serde_json::to_value(&s).unwrap()
    }

    #[test]
    fn each_label_maps_to_its_kind_and_expectation() {
        let s = suite(ArgMatch::Values);
        let cases = s["cases"].as_array().unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["a-call", "b-ask", "c-cannot", "d-direct"]);
        let kinds: Vec<&str> = cases.iter().map(|c| c["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "should_call",
                "ambiguous",
                "should_not_call",
                "should_not_call"
            ]
        );
        assert_eq!(
            cases[0]["expect"],
            json!({"calls": [{"tool": "get_weather",
                "args": {"city": "Paris", "days": 3, "units": {"eq": ["C"]}}}]})
        );
        assert_eq!(cases[1]["expect"], json!({"any_of": [{"clarify": true}]}));
        assert_eq!(cases[2]["expect"], json!({"behaviour": "cannot_answer"}));
        assert_eq!(cases[3]["expect"], json!({"behaviour": "direct"}));
        assert_eq!(cases[0]["prompt"], "Weather in Paris for 3 days?");
    }

    #[test]
    fn tools_are_converted_as_bfcl_functions_and_sources_kept_as_tags() {
        let s = suite(ArgMatch::Values);
        let c = &s["cases"][0];
        assert_eq!(c["tools"].as_array().unwrap().len(), 2);
        let w = &c["tools"][0];
        assert_eq!(w["name"], "get_weather");
        assert_eq!(w["parameters"]["type"], "object");
        assert_eq!(w["parameters"]["properties"]["units"]["type"], "array");
        assert_eq!(
            w["parameters"]["properties"]["units"]["x-bfcl-type"],
            "tuple"
        );
        assert_eq!(
            c["tags"],
            json!([
                "tool_call",
                "source:BFCL v2 Live Multiple",
                "source_id:live_multiple_1"
            ])
        );
        // No source given: only the label.
        assert_eq!(s["cases"][3]["tags"], json!(["direct"]));
        assert_eq!(s["cases"][3]["tools"], json!([]));
    }

    #[test]
    fn argument_strictness_is_chosen() {
        let names = suite(ArgMatch::Names);
        assert_eq!(
            names["cases"][0]["expect"]["calls"][0]["args"],
            json!({"city": {"any": true}, "days": {"any": true}, "units": {"any": true}})
        );
        let tool = suite(ArgMatch::Tool);
        assert_eq!(
            tool["cases"][0]["expect"],
            json!({"calls": [{"tool": "get_weather", "args": {}}]})
        );
    }

    #[test]
    fn an_example_value_its_own_schema_rejects_is_not_demanded() {
        // As in When2Call's `Music_3_LookupMusic`: an integer `year` whose enum lists strings.
        let music = tool(
            "lookup",
            json!({"album": {"type": "string"},
                   "year": {"type": "integer", "enum": ["2011", "2012", "dontcare"]}}),
        );
        let row = json!({"uuid": "m", "question": "Songs of Halcyon from 2012?",
            "correct_answer": "tool_call", "target_tool": music, "tools": [music],
            "answers": {"tool_call": json!({"name": "lookup",
                "arguments": {"album": "Halcyon", "year": 2012}}).to_string()}});
        let items = item::parse(&row.to_string(), "t.jsonl").unwrap();
        let (s, unchecked) = suite_of(&items, "t.jsonl", "t", ArgMatch::Values)
            .ok()
            .unwrap();
        let s = serde_json::to_value(&s).unwrap();
        assert_eq!(
            s["cases"][0]["expect"]["calls"][0]["args"],
            json!({"album": "Halcyon", "year": {"optional": true}})
        );
        assert_eq!(
            unchecked,
            vec![Unchecked {
                line: 1,
                uuid: "m".into(),
                param: "year".into(),
                value: json!(2012)
            }]
        );
    }

    #[test]
    fn import_writes_one_loadable_suite_and_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mini.jsonl");
        std::fs::write(&file, lines()).unwrap();
        let out = dir.path().join("out");
        let r = import(&file, &out, &Options::default()).unwrap();
        assert_eq!(r.path, out.join("mini.json"));
        assert_eq!(r.cases(), 4);
        assert_eq!(r.without_tools, 1);
        assert_eq!(
            r.by_label,
            vec![
                (Behaviour::ToolCall, 1),
                (Behaviour::RequestForInfo, 1),
                (Behaviour::CannotAnswer, 1),
                (Behaviour::Direct, 1)
            ]
        );
        let suite = crate::suite::load(&r.path).unwrap();
        assert_eq!(suite.cases.len(), 4);
        assert!(!out.join("mini.json.partial").exists());

        let e = import(&file, &out, &Options::default()).unwrap_err();
        assert!(matches!(e, ImportError::Exists { .. }), "{e}");
        let forced = Options {
            force: true,
            ..Options::default()
        };
        assert!(import(&file, &out, &forced).is_ok());
    }

    #[test]
    fn a_schema_the_suite_rejects_is_traced_to_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.jsonl");
        let bad_tool = json!({"name": "f", "description": "d",
            "parameters": {"type": "dict", "properties": {"x": {"type": "string", "pattern": "("}}}})
        .to_string();
        let good = lines();
        let bad = json!({"uuid": "z", "question": "q", "correct_answer": "cannot_answer",
            "tools": [bad_tool]});
        std::fs::write(&file, format!("{good}{bad}\n")).unwrap();
        let out = dir.path().join("out");
        let e = import(&file, &out, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 5 (uuid `z`) does not convert into a valid case"),
            "{e}"
        );
        assert!(!out.join("bad.json").exists(), "no suite is left behind");
        assert!(!out.join("bad.json.partial").exists());
    }
}
