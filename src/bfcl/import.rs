//! `toolgauge import bfcl`: BFCL's single-turn categories as toolgauge suites, one per
//! category, scored by the `bfcl` profile.
//!
//! Each BFCL item becomes a case with BFCL's id, its messages, and its own tools (BFCL
//! items each come with their functions). BFCL parameter types become JSON Schema
//! (`dict` → `object`, `float` → `number`, `tuple` → `array`, `any` → no type); a node
//! whose JSON type does not say which BFCL type it was (`tuple`, `any`) keeps it as
//! `x-bfcl-type`, so the profile scores with BFCL's type rules exactly. Each distinct
//! function is converted once (the live categories repeat them across hundreds of
//! items) and written on one line. Possible answers become matchers: one acceptable value is a
//! literal (`{eq: V}` for lists and maps), several are `{one_of: [...]}`, and `""` among
//! them (BFCL's "may be omitted") is `optional: true`; an empty list (no value can pass,
//! a defect of a few BFCL items) is `{absent: true}`. Irrelevance items become
//! `should_not_call` cases; relevance items `should_call` with `any_call: true`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::data::{self, DataError, Item};
pub use crate::functions::{inferred, matcher, options_of, to_json_schema, tool};

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading BFCL's files.
    #[error(transparent)]
    Data(#[from] DataError),
    /// An item is not what BFCL writes.
    #[error("item `{id}`: {message}")]
    Item {
        /// The item id.
        id: String,
        /// What is wrong.
        message: String,
    },
    /// A written suite does not load (a defect of the importer).
    #[error("the imported suite `{path}` does not load: {message}")]
    Check {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// Writing a suite.
    #[error("failed to write `{path}`: {message}")]
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// One written suite.
#[derive(Debug)]
pub struct Imported {
    /// The category.
    pub category: String,
    /// The suite file written.
    pub path: PathBuf,
    /// Cases in it.
    pub cases: usize,
}

/// The file format of imported suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteFormat {
    /// `.json`: read about ten times faster than YAML (the default for imports).
    Json,
    /// `.yaml`: easier to read.
    Yaml,
}

/// Import `categories` from BFCL's data directory `dir` into `out` (created if
/// missing): one suite `bfcl_<category>.json` (or `.yaml`) per category, each loaded
/// back as a check. Single-turn and multi-turn categories ([`super::import_multi`]) may
/// be mixed.
pub fn import(
    dir: &Path,
    categories: &[String],
    out: &Path,
    format: SuiteFormat,
) -> Result<Vec<Imported>, ImportError> {
    std::fs::create_dir_all(out).map_err(|e| ImportError::Write {
        path: out.display().to_string(),
        message: e.to_string(),
    })?;
    // Every question file is found first, so a missing one is reported before any work.
    let files = categories
        .iter()
        .map(|c| data::question_file(dir, c))
        .collect::<Result<Vec<_>, _>>()?;
    // Categories are independent: convert them on every core, two at most (memory grows
    // with the categories in flight), biggest first so that no big one is left for the
    // end, and report them in the order asked.
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, 2)
        .min(categories.len().max(1));
    let mut order: Vec<usize> = (0..categories.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(std::fs::metadata(&files[i]).map_or(0, |m| m.len())));
    let next = AtomicUsize::new(0);
    let results: Vec<Vec<(usize, Result<Imported, ImportError>)>> = std::thread::scope(|scope| {
        let work = || {
            let mut done = Vec::new();
            while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                let r = import_one(&files[i], &categories[i], out, format);
                let failed = r.is_err();
                done.push((i, r));
                if failed {
                    // Stop taking new categories.
                    next.store(order.len(), Ordering::Relaxed);
                    break;
                }
            }
            done
        };
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut all = vec![work()];
        all.extend(helpers.into_iter().map(|h| h.join().unwrap_or_default()));
        all
    });
    let mut slots: Vec<Option<Result<Imported, ImportError>>> =
        categories.iter().map(|_| None).collect();
    for (i, r) in results.into_iter().flatten() {
        slots[i] = Some(r);
    }
    // The first error in the order asked wins; a category no worker finished (a worker
    // that panicked) is an error too, never a silent gap.
    let mut written = Vec::with_capacity(slots.len());
    let mut unfinished = None;
    for (slot, category) in slots.into_iter().zip(categories) {
        match slot {
            Some(Ok(w)) => written.push(w),
            Some(Err(e)) => return Err(e),
            None => unfinished = unfinished.or(Some(category)),
        }
    }
    match unfinished {
        Some(category) => Err(ImportError::Write {
            path: category.clone(),
            message: "the import of this category did not finish".into(),
        }),
        None => Ok(written),
    }
}

/// One case of a written suite. Tools are their converted JSON text, shared by the
/// items that offer the same function (and written compactly, one per line).
#[derive(Serialize)]
struct CaseOut<'a> {
    id: &'a str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<Value>>,
    tools: Vec<Arc<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect: Option<Value>,
}

/// A written suite.
#[derive(Serialize)]
struct SuiteOut<'a> {
    name: String,
    description: String,
    profile: Value,
    cases: Vec<CaseOut<'a>>,
}

/// Import one category from its question file `qfile` into `out`.
fn import_one(
    qfile: &Path,
    category: &str,
    out: &Path,
    format: SuiteFormat,
) -> Result<Imported, ImportError> {
    if super::import_multi::is_multi_turn(category) {
        return super::import_multi::import_one(qfile, category, out, format);
    }
    let qfile = qfile.to_path_buf();
    let text = data::read(&qfile)?;
    let items = data::read_items(&text, &qfile)?;
    let answers = match data::answer_file(&qfile) {
        Some(a) => data::read_answers(&a)?,
        None => Default::default(),
    };
    let kind = Kind::of(category);
    // Converted tools by their BFCL text: each distinct function is converted once.
    let mut tools: HashMap<&str, Arc<RawValue>> = HashMap::new();
    let mut cases = Vec::with_capacity(items.len());
    for item in &items {
        let answer = answers.get(&item.id);
        if kind == Kind::Ast && answer.is_none() {
            return Err(ImportError::Item {
                id: item.id.clone(),
                message: format!(
                    "no possible answer for it in `{}`",
                    data::answer_file(&qfile)
                        .map_or_else(|| "possible_answer/".into(), |p| p.display().to_string())
                ),
            });
        }
        cases.push(case(item, kind, answer, &mut tools)?);
    }
    let source = qfile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = items.len();
    let suite = SuiteOut {
        name: format!("bfcl_{category}"),
        description: format!(
            "BFCL {category} ({n} items), imported from {source} by `toolgauge import bfcl` \
             (BFCL data: Apache License 2.0, Gorilla / Berkeley Function Calling \
             Leaderboard). Scored as BFCL's AST checker does (docs/bfcl.md). Run it \
             against a BFCL result file with --target bfcl-result:FILE."
        ),
        profile: json!({"bfcl": {"category": category}}),
        cases,
    };
    let path = write_suite(
        &suite,
        &SuiteText {
            category,
            items: n,
            source: &source,
            out,
            format,
            size_hint: text.len(),
        },
    )?;
    // A suite that does not load is a defect of the importer, not of the user's input.
    crate::suite::load(&path).map_err(|e| ImportError::Check {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(Imported {
        category: category.to_string(),
        path,
        cases: n,
    })
}

/// What [`write_suite`] needs besides the suite itself.
pub(super) struct SuiteText<'a> {
    /// The category (names the file `bfcl_<category>`).
    pub category: &'a str,
    /// Items in the suite (for the YAML header).
    pub items: usize,
    /// The question file's name (for the YAML header).
    pub source: &'a str,
    /// The output directory.
    pub out: &'a Path,
    /// JSON or YAML.
    pub format: SuiteFormat,
    /// Bytes to reserve for the JSON text.
    pub size_hint: usize,
}

/// Write `suite` as `bfcl_<category>.json` (or `.yaml`) into `t.out`; the path written.
pub(super) fn write_suite<S: Serialize>(suite: &S, t: &SuiteText) -> Result<PathBuf, ImportError> {
    let SuiteText {
        category,
        items: n,
        source,
        out,
        format,
        size_hint,
    } = *t;
    let write_err = |e: &dyn std::fmt::Display| ImportError::Write {
        path: category.to_string(),
        message: e.to_string(),
    };
    let (path, text) = match format {
        SuiteFormat::Yaml => {
            // serde_json's value serializer reads the raw tool texts back into values.
            let value = serde_json::to_value(suite).map_err(|e| write_err(&e))?;
            let yaml = serde_saphyr::to_string(&value).map_err(|e| write_err(&e))?;
            let header = format!(
                "# BFCL {category}: {n} items from {source}, imported by `toolgauge import bfcl`.\n\
                 # BFCL data: Apache License 2.0, Gorilla / Berkeley Function Calling Leaderboard.\n"
            );
            (out.join(format!("bfcl_{category}.yaml")), header + &yaml)
        }
        SuiteFormat::Json => {
            // One-space indentation: readable enough, and small.
            let mut buf = Vec::with_capacity(size_hint);
            let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
            serde::Serialize::serialize(suite, &mut ser).map_err(|e| write_err(&e))?;
            buf.push(b'\n');
            (
                out.join(format!("bfcl_{category}.json")),
                String::from_utf8(buf).unwrap_or_default(),
            )
        }
    };
    std::fs::write(&path, text).map_err(|e| ImportError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(path)
}

/// How a category's items are expected to be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Calls checked against possible answers.
    Ast,
    /// No call.
    Irrelevance,
    /// Any call.
    Relevance,
}

impl Kind {
    fn of(category: &str) -> Kind {
        if category.contains("irrelevance") {
            Kind::Irrelevance
        } else if category.contains("relevance") {
            Kind::Relevance
        } else {
            Kind::Ast
        }
    }
}

fn case<'a>(
    item: &'a Item<'a>,
    kind: Kind,
    answer: Option<&Value>,
    converted: &mut HashMap<&'a str, Arc<RawValue>>,
) -> Result<CaseOut<'a>, ImportError> {
    let bad = |message: String| ImportError::Item {
        id: item.id.clone(),
        message,
    };
    let messages: Vec<&data::Message> = item.question.iter().flatten().collect();
    let mut case = CaseOut {
        id: &item.id,
        kind: match kind {
            Kind::Irrelevance => "should_not_call",
            _ => "should_call",
        },
        prompt: None,
        messages: None,
        tools: Vec::with_capacity(item.function.len()),
        expect: None,
    };
    let text = |m: &data::Message| match &m.content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let [m] = messages.as_slice()
        && m.role == "user"
    {
        case.prompt = Some(text(m));
    } else {
        let mut out = Vec::new();
        for m in &messages {
            if !["system", "user", "assistant"].contains(&m.role.as_str()) {
                return Err(bad(format!(
                    "message role `{}` is not system, user or assistant",
                    m.role
                )));
            }
            out.push(json!({"role": m.role, "content": text(m)}));
        }
        case.messages = Some(out);
    }
    for f in &item.function {
        let t = match converted.get(f.get()) {
            Some(t) => t.clone(),
            None => {
                let t = tool(f).map_err(&bad)?;
                converted.insert(f.get(), t.clone());
                t
            }
        };
        case.tools.push(t);
    }
    match kind {
        Kind::Irrelevance => {}
        Kind::Relevance => {
            case.expect = Some(json!({"any_call": true}));
        }
        Kind::Ast => {
            let gt = answer
                .and_then(Value::as_array)
                .ok_or_else(|| bad("the possible answer's `ground_truth` is not a list".into()))?;
            let mut calls = Vec::new();
            for call in gt {
                let Some((name, params)) = call.as_object().and_then(|o| o.iter().next()) else {
                    return Err(bad(format!(
                        "ground-truth call {call} is not {{name: {{...}}}}"
                    )));
                };
                let Some(params) = params.as_object() else {
                    return Err(bad(format!(
                        "ground-truth parameters of `{name}` are not a map"
                    )));
                };
                let mut args = Map::new();
                for (p, options) in params {
                    let Some(options) = options.as_array() else {
                        return Err(bad(format!(
                            "acceptable values of `{name}.{p}` are not a list: {options}"
                        )));
                    };
                    args.insert(p.clone(), matcher(options));
                }
                calls.push(json!({"tool": name, "args": args}));
            }
            case.expect = Some(json!({"calls": calls}));
        }
    }
    Ok(case)
}

/// The suite's JSON Schema back in BFCL's form (what [`to_json_schema`] converted).
pub fn to_bfcl_schema(node: &Value) -> Value {
    let Value::Object(o) = node else {
        return node.clone();
    };
    let bfcl_type = o.get("x-bfcl-type").cloned().or_else(|| {
        inferred(o.get("type").and_then(Value::as_str)).map(|t| Value::String(t.into()))
    });
    let mut out = Map::new();
    for (k, v) in o {
        match k.as_str() {
            "x-bfcl-type" => {}
            "type" => {
                out.insert(k.clone(), bfcl_type.clone().unwrap_or_else(|| v.clone()));
            }
            "x-bfcl-required" | "x-bfcl-optional" => {
                out.insert(k.trim_start_matches("x-bfcl-").to_string(), v.clone());
            }
            "properties" => {
                let props = v
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(n, s)| (n.clone(), to_bfcl_schema(s)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(k.clone(), to_bfcl_schema(v));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(t) = bfcl_type
        && !out.contains_key("type")
    {
        out.insert("type".into(), t);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfcl_types_become_json_schema_and_back() {
        let bfcl = json!({
            "type": "dict",
            "properties": {
                "x": {"type": "float", "description": "a"},
                "pair": {"type": "tuple", "items": {"type": "integer"}},
                "any": {"type": "any"},
                "opts": {"type": "dict", "properties": {"k": {"type": "string"}}, "required": ["k"]},
                "flag": {"type": "boolean", "optional": true, "default": false}
            },
            "required": ["x"]
        });
        let schema = to_json_schema(&bfcl);
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["x"]["type"], "number");
        assert_eq!(schema["properties"]["pair"]["type"], "array");
        assert_eq!(schema["properties"]["pair"]["items"]["type"], "integer");
        assert!(schema["properties"]["any"].get("type").is_none());
        assert_eq!(schema["properties"]["any"]["x-bfcl-type"], "any");
        assert_eq!(schema["properties"]["pair"]["x-bfcl-type"], "tuple");
        assert!(
            schema["properties"]["x"].get("x-bfcl-type").is_none(),
            "float is implied"
        );
        assert_eq!(schema["properties"]["flag"]["x-bfcl-optional"], true);
        assert!(jsonschema::validator_for(&schema).is_ok());
        assert_eq!(to_bfcl_schema(&schema), bfcl);
    }

    #[test]
    fn possible_answers_round_trip_through_matchers() {
        for options in [
            json!([10]),
            json!(["units", ""]),
            json!(["", 0]),
            json!([""]),
            json!([]),
            json!([[1, 2], [2, 1]]),
            json!([{"a": 1}, ""]),
            json!([null, "x"]),
            json!([1.5, 2]),
        ] {
            let opts = options.as_array().unwrap();
            let m = matcher(opts);
            let mut back = options_of(&m).unwrap();
            let mut want = opts.clone();
            // `""` moves to the end; its position never matters to BFCL.
            let key = |v: &Value| (v.as_str() == Some(""), v.to_string());
            back.sort_by_key(key);
            want.sort_by_key(key);
            assert_eq!(back, want, "{m}");
        }
        assert!(options_of(&json!({"regex": "x"})).is_err());
        assert!(options_of(&json!([1, 2])).is_err());
    }
}
