//! `toolgauge import bfcl --category multi_turn_*`: BFCL's multi-turn categories as
//! suites, one per category, each case a conversation with a BFCL world.
//!
//! A BFCL multi-turn item is a list of user turns, the backend classes it involves with
//! their initial configuration, and one list of ground-truth call strings per turn. Each
//! item becomes one case: turn 0 is its `prompt`, the later turns its `turns` (scripted
//! user messages the loop sends after each answer without tool calls), its tools are the
//! function docs of every involved class (converted as the single-turn importer converts
//! BFCL functions), and its `world: {bfcl: ...}` holds what the backends and the judge
//! need: the classes, the initial configuration verbatim, BFCL's long-context flag and
//! the ground truth verbatim. `miss_func` items withhold some functions until a turn that
//! has no user message; that turn's text is BFCL's fixed "I have updated some more
//! functions..." message and the functions go in `withheld: {name: turn}`.
//!
//! The function docs are read from `multi_turn_func_doc/` next to the question file
//! (BFCL's `data` directory layout), one file per class.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::data::{self, DataError, Message};
use super::import::{ImportError, Imported, SuiteFormat, SuiteText, tool, write_suite};

/// BFCL's multi-turn categories.
pub const CATEGORIES: [&str; 4] = [
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
];

/// The eight backend classes and their function-doc files in `multi_turn_func_doc/`
/// (BFCL's `MULTI_TURN_FUNC_DOC_FILE_MAPPING`).
pub const CLASSES: [(&str, &str); 8] = [
    ("GorillaFileSystem", "gorilla_file_system.json"),
    ("MathAPI", "math_api.json"),
    ("MessageAPI", "message_api.json"),
    ("TwitterAPI", "posting_api.json"),
    ("TicketAPI", "ticket_api.json"),
    ("TradingBot", "trading_bot.json"),
    ("TravelAPI", "travel_booking.json"),
    ("VehicleControlAPI", "vehicle_control.json"),
];

/// The user message BFCL sends at the turn where withheld functions are added
/// (`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC`).
pub const ADDITIONAL_FUNCTIONS_PROMPT: &str =
    "I have updated some more functions you can choose from. What about now?";

/// BFCL's step limit per turn (`MAXIMUM_STEP_LIMIT`).
pub const MAX_STEPS_PER_TURN: usize = 20;

/// True for BFCL's multi-turn categories.
pub fn is_multi_turn(category: &str) -> bool {
    CATEGORIES.contains(&category)
}

/// One multi-turn question item, its configuration kept as written.
#[derive(Deserialize)]
struct MultiItem<'a> {
    id: String,
    question: Vec<Vec<Message>>,
    #[serde(borrow, default)]
    initial_config: Option<&'a RawValue>,
    #[serde(default)]
    involved_classes: Vec<String>,
    /// Turn index (as a string) to the function names withheld until that turn.
    #[serde(default)]
    missed_function: Map<String, Value>,
}

/// A written case (the contract the loader reads: see docs/bfcl.md).
#[derive(Serialize)]
struct CaseOut<'a> {
    id: &'a str,
    kind: &'static str,
    prompt: String,
    turns: Vec<String>,
    tools: Vec<Arc<RawValue>>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    withheld: Map<String, Value>,
    world: WorldOut<'a>,
}

/// `world:` of a case.
#[derive(Serialize)]
struct WorldOut<'a> {
    bfcl: BfclWorldOut<'a>,
}

/// `world: {bfcl: ...}`.
#[derive(Serialize)]
struct BfclWorldOut<'a> {
    classes: &'a [String],
    initial_config: &'a RawValue,
    long_context: bool,
    ground_truth: &'a Value,
}

/// A written suite.
#[derive(Serialize)]
struct SuiteOut<'a> {
    name: String,
    description: String,
    profile: Value,
    limits: Value,
    cases: Vec<CaseOut<'a>>,
}

/// The converted function docs of one class, in file order.
type Docs = Vec<(String, Arc<RawValue>)>;

/// Import one multi-turn category from its question file `qfile` into `out`.
pub(super) fn import_one(
    qfile: &Path,
    category: &str,
    out: &Path,
    format: SuiteFormat,
) -> Result<Imported, ImportError> {
    let text = data::read(qfile)?;
    let items: Vec<MultiItem> = data::lines(&text, qfile)?;
    let answer_path = data::answer_file(qfile);
    let answers = match &answer_path {
        Some(a) => data::read_answers(a)?,
        None => HashMap::new(),
    };
    let doc_dir = qfile
        .parent()
        .unwrap_or(Path::new("."))
        .join("multi_turn_func_doc");
    let mut docs: HashMap<&str, Docs> = HashMap::new();
    // BFCL's rule (`is_long_context`): the category's name says it.
    let long_context = category.contains("long_context");
    let empty_config = RawValue::from_string("{}".into()).map_err(|e| ImportError::Write {
        path: category.to_string(),
        message: e.to_string(),
    })?;
    let mut cases = Vec::with_capacity(items.len());
    for item in &items {
        let Some(ground_truth) = answers.get(&item.id) else {
            return Err(ImportError::Item {
                id: item.id.clone(),
                message: format!(
                    "no ground truth for it in `{}`",
                    answer_path.as_ref().map_or_else(
                        || "possible_answer/ (no such file)".into(),
                        |p| p.display().to_string()
                    )
                ),
            });
        };
        for class in &item.involved_classes {
            if !docs.contains_key(class.as_str()) {
                let Some(&(name, file)) = CLASSES.iter().find(|(c, _)| c == class) else {
                    return Err(ImportError::Item {
                        id: item.id.clone(),
                        message: format!(
                            "unknown class `{class}` in `involved_classes`; the known classes are {}",
                            CLASSES.map(|(c, _)| c).join(", ")
                        ),
                    });
                };
                docs.insert(name, read_docs(&doc_dir.join(file))?);
            }
        }
        let config = item.initial_config.unwrap_or(&empty_config);
        cases.push(case(item, ground_truth, config, long_context, &docs)?);
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
             Leaderboard). Each case is a multi-turn conversation with BFCL's stateful \
             backends, scored as BFCL's multi-turn checker does (docs/bfcl.md). Run it \
             against a BFCL result directory with --target bfcl-result:DIR."
        ),
        profile: json!({"bfcl": {"category": category}}),
        limits: json!({
            "max_rounds": 100,
            "max_tool_calls": 1000,
            "max_identical_calls": 1000,
            "max_rounds_per_turn": MAX_STEPS_PER_TURN,
        }),
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
            size_hint: text.len() * 4,
        },
    )?;
    // TODO(lead): load-check multi-turn suites once world:/withheld: exist
    Ok(Imported {
        category: category.to_string(),
        path,
        cases: n,
    })
}

/// The function docs of one `multi_turn_func_doc/` file, converted, in file order.
fn read_docs(path: &Path) -> Result<Docs, ImportError> {
    let text = data::read(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| {
            ImportError::Data(DataError::Line {
                path: path.display().to_string(),
                line: i + 1,
                message,
            })
        };
        let raw: &RawValue = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let name = serde_json::from_str::<Value>(raw.get())
            .ok()
            .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
            .ok_or_else(|| bad("a function doc has no `name`".into()))?;
        out.push((name, tool(raw).map_err(bad)?));
    }
    Ok(out)
}

/// The text of a message, as the single-turn importer takes it.
fn text(m: &Message) -> String {
    match &m.content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One item as a case.
fn case<'a>(
    item: &'a MultiItem<'a>,
    ground_truth: &'a Value,
    initial_config: &'a RawValue,
    long_context: bool,
    docs: &HashMap<&str, Docs>,
) -> Result<CaseOut<'a>, ImportError> {
    let bad = |message: String| ImportError::Item {
        id: item.id.clone(),
        message,
    };
    // Withheld functions by turn.
    let mut missed: HashMap<usize, Vec<&str>> = HashMap::new();
    for (turn, names) in &item.missed_function {
        let Some(t) = turn
            .parse::<usize>()
            .ok()
            .filter(|&t| t < item.question.len())
        else {
            return Err(bad(format!(
                "`missed_function` names turn `{turn}`, but the item has turns 0 to {}",
                item.question.len().saturating_sub(1)
            )));
        };
        let names = names
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
            .filter(|n| n.len() == names.as_array().map_or(0, Vec::len))
            .ok_or_else(|| {
                bad(format!(
                    "`missed_function` of turn {t} is not a list of names: {names}"
                ))
            })?;
        missed.insert(t, names);
    }
    let mut texts = Vec::with_capacity(item.question.len());
    for (t, messages) in item.question.iter().enumerate() {
        match (messages.as_slice(), missed.contains_key(&t)) {
            ([], true) => texts.push(ADDITIONAL_FUNCTIONS_PROMPT.to_string()),
            ([], false) => {
                return Err(bad(format!(
                    "turn {t} has no message and no functions are added at it \
                     (`missed_function` has no entry `{t}`)"
                )));
            }
            ([m], false) if m.role == "user" => texts.push(text(m)),
            ([m], false) => {
                return Err(bad(format!(
                    "turn {t}: the message's role is `{}`; multi-turn turns are one user message",
                    m.role
                )));
            }
            (_, true) => {
                return Err(bad(format!(
                    "turn {t} adds withheld functions, so it must have no message, but it has {}",
                    messages.len()
                )));
            }
            (more, false) => {
                return Err(bad(format!(
                    "turn {t} has {} messages; multi-turn turns are one user message",
                    more.len()
                )));
            }
        }
    }
    let Some(gt_turns) = ground_truth.as_array() else {
        return Err(bad(format!(
            "the ground truth is not a list of turns: {ground_truth}"
        )));
    };
    if gt_turns.len() != item.question.len() {
        return Err(bad(format!(
            "the ground truth has {} turns, the question {}",
            gt_turns.len(),
            item.question.len()
        )));
    }
    if let Some((t, _)) = gt_turns.iter().enumerate().find(|(_, calls)| {
        !calls
            .as_array()
            .is_some_and(|c| c.iter().all(Value::is_string))
    }) {
        return Err(bad(format!(
            "the ground truth of turn {t} is not a list of call strings"
        )));
    }
    let mut tools = Vec::new();
    let mut offered: Vec<&str> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for class in &item.involved_classes {
        if seen.contains(&class.as_str()) {
            continue;
        }
        seen.push(class);
        for (name, t) in docs.get(class.as_str()).into_iter().flatten() {
            tools.push(t.clone());
            offered.push(name);
        }
    }
    let mut withheld = Map::new();
    let mut turns_in_order: Vec<_> = missed.iter().collect();
    turns_in_order.sort();
    for (&t, names) in turns_in_order {
        for &name in names {
            if !offered.contains(&name) {
                return Err(bad(format!(
                    "`missed_function` withholds `{name}` until turn {t}, but no involved \
                     class ({}) has a function of that name",
                    item.involved_classes.join(", ")
                )));
            }
            withheld.insert(name.to_string(), json!(t));
        }
    }
    let mut texts = texts.into_iter();
    Ok(CaseOut {
        id: &item.id,
        kind: "should_call",
        prompt: texts.next().unwrap_or_default(),
        turns: texts.collect(),
        tools,
        withheld,
        world: WorldOut {
            bfcl: BfclWorldOut {
                classes: &item.involved_classes,
                initial_config,
                long_context,
                ground_truth,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/bfcl/data")
    }

    fn import_to(dir: &Path, category: &str) -> Value {
        let q = data::question_file(&sample_dir(), category).unwrap();
        let w = import_one(&q, category, dir, SuiteFormat::Json).unwrap();
        serde_json::from_str(&std::fs::read_to_string(w.path).unwrap()).unwrap()
    }

    /// The question and ground-truth lines of the sample, parsed, by id.
    fn sample(category: &str) -> Vec<(Value, Value)> {
        let q = data::question_file(&sample_dir(), category).unwrap();
        let answers = data::read_answers(&data::answer_file(&q).unwrap()).unwrap();
        std::fs::read_to_string(&q)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let gt = answers[v["id"].as_str().unwrap()].clone();
                (v, gt)
            })
            .collect()
    }

    #[test]
    fn every_sample_item_becomes_a_case_in_the_contract_shape() {
        let dir = tempfile::tempdir().unwrap();
        let mut withheld_seen = 0;
        for category in CATEGORIES {
            let suite = import_to(dir.path(), category);
            assert_eq!(suite["name"], format!("bfcl_{category}"));
            assert_eq!(suite["profile"], json!({"bfcl": {"category": category}}));
            assert_eq!(suite["limits"]["max_rounds_per_turn"], 20);
            let items = sample(category);
            let cases = suite["cases"].as_array().unwrap();
            assert_eq!(cases.len(), items.len());
            for (case, (item, gt)) in cases.iter().zip(&items) {
                let id = item["id"].as_str().unwrap();
                assert_eq!(case["id"], id);
                assert_eq!(case["kind"], "should_call");
                let question = item["question"].as_array().unwrap();
                let turns = case["turns"].as_array().unwrap();
                assert_eq!(turns.len() + 1, question.len(), "{id}");
                for (t, q) in question.iter().enumerate() {
                    let shown = if t == 0 {
                        &case["prompt"]
                    } else {
                        &turns[t - 1]
                    };
                    match q.as_array().unwrap().as_slice() {
                        [m] => assert_eq!(shown, &m["content"], "{id} turn {t}"),
                        [] => assert_eq!(shown, ADDITIONAL_FUNCTIONS_PROMPT, "{id} turn {t}"),
                        _ => panic!("{id}: a turn of several messages in the sample"),
                    }
                }
                let world = &case["world"]["bfcl"];
                assert_eq!(world["classes"], item["involved_classes"]);
                assert_eq!(world["initial_config"], item["initial_config"]);
                assert_eq!(world["long_context"], category.contains("long_context"));
                assert_eq!(&world["ground_truth"], gt);
                assert_eq!(gt.as_array().unwrap().len(), question.len());
                // Every function of every involved class, in class then file order.
                let names: Vec<&str> = case["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["name"].as_str().unwrap())
                    .collect();
                let mut want = Vec::new();
                for class in item["involved_classes"].as_array().unwrap() {
                    let file = CLASSES.iter().find(|(c, _)| c == class).unwrap().1;
                    let text = std::fs::read_to_string(
                        sample_dir().join("multi_turn_func_doc").join(file),
                    )
                    .unwrap();
                    for l in text.lines() {
                        let f: Value = serde_json::from_str(l).unwrap();
                        want.push(f["name"].as_str().unwrap().to_string());
                    }
                }
                assert_eq!(names, want, "{id}");
                // Withheld functions: exactly BFCL's missed functions, at their turn.
                match item.get("missed_function").and_then(Value::as_object) {
                    Some(missed) => {
                        let mut expected = Map::new();
                        for (t, names) in missed {
                            for n in names.as_array().unwrap() {
                                let turn: usize = t.parse().unwrap();
                                assert!(question[turn].as_array().unwrap().is_empty());
                                expected.insert(n.as_str().unwrap().into(), json!(turn));
                            }
                        }
                        assert_eq!(case["withheld"], Value::Object(expected), "{id}");
                        withheld_seen += 1;
                    }
                    None => assert!(case.get("withheld").is_none(), "{id}"),
                }
            }
        }
        assert!(withheld_seen >= 6, "{withheld_seen}");
    }

    #[test]
    fn tools_are_converted_as_the_single_turn_importer_converts_functions() {
        let dir = tempfile::tempdir().unwrap();
        let suite = import_to(dir.path(), "multi_turn_base");
        let tool = &suite["cases"][0]["tools"][0];
        assert_eq!(tool["parameters"]["type"], "object");
        let text = std::fs::read_to_string(
            sample_dir().join("multi_turn_func_doc/gorilla_file_system.json"),
        )
        .unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        if suite["cases"][0]["world"]["bfcl"]["classes"][0] == "GorillaFileSystem" {
            assert_eq!(tool["name"], first["name"]);
            assert_eq!(tool["description"], first["description"]);
            assert_eq!(
                tool["parameters"],
                crate::functions::to_json_schema(&first["parameters"])
            );
        }
    }

    /// Write a one-item category `multi_turn_base` into a data directory copy and import it.
    fn import_item(question: Value, ground_truth: Value) -> Result<Value, String> {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("possible_answer")).unwrap();
        std::fs::create_dir_all(data.join("multi_turn_func_doc")).unwrap();
        for (_, f) in CLASSES {
            std::fs::copy(
                sample_dir().join("multi_turn_func_doc").join(f),
                data.join("multi_turn_func_doc").join(f),
            )
            .unwrap();
        }
        let name = "BFCL_v4_multi_turn_base.json";
        std::fs::write(data.join(name), format!("{question}\n")).unwrap();
        std::fs::write(
            data.join("possible_answer").join(name),
            format!(
                "{}\n",
                json!({"id": question["id"], "ground_truth": ground_truth})
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let w = import_one(&data.join(name), "multi_turn_base", &out, SuiteFormat::Json)
            .map_err(|e| e.to_string())?;
        Ok(serde_json::from_str(&std::fs::read_to_string(w.path).unwrap()).unwrap())
    }

    #[test]
    fn malformed_items_are_import_errors_naming_the_item_and_turn() {
        let user = |s: &str| json!([{"role": "user", "content": s}]);
        let item = |question: Value, classes: Value| {
            json!({"id": "multi_turn_base_7", "question": question,
                   "initial_config": {}, "involved_classes": classes})
        };
        // A valid item, with a class absent from initial_config.
        let ok = import_item(
            item(json!([user("a"), user("b")]), json!(["MathAPI"])),
            json!([["add(a=1,b=2)"], []]),
        )
        .unwrap();
        assert_eq!(ok["cases"][0]["turns"], json!(["b"]));
        assert_eq!(ok["cases"][0]["world"]["bfcl"]["initial_config"], json!({}));

        for (question, classes, gt, want) in [
            (
                json!([user("a")]),
                json!(["MathAPI", "Weather"]),
                json!([[]]),
                "item `multi_turn_base_7`: unknown class `Weather` in `involved_classes`; \
                 the known classes are GorillaFileSystem, MathAPI",
            ),
            (
                json!([user("a"), []]),
                json!(["MathAPI"]),
                json!([[], []]),
                "item `multi_turn_base_7`: turn 1 has no message",
            ),
            (
                json!([user("a"), [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]]),
                json!(["MathAPI"]),
                json!([[], []]),
                "item `multi_turn_base_7`: turn 1 has 2 messages",
            ),
            (
                json!([[{"role": "system", "content": "x"}]]),
                json!(["MathAPI"]),
                json!([[]]),
                "item `multi_turn_base_7`: turn 0: the message's role is `system`",
            ),
            (
                json!([user("a"), user("b")]),
                json!(["MathAPI"]),
                json!([[]]),
                "item `multi_turn_base_7`: the ground truth has 1 turns, the question 2",
            ),
        ] {
            let e = import_item(item(question, classes), gt).unwrap_err();
            assert!(e.starts_with(want), "{e}\nwant: {want}");
        }
        let mut missed = item(json!([user("a"), user("b")]), json!(["MathAPI"]));
        missed["missed_function"] = json!({"1": ["add"]});
        let e = import_item(missed, json!([[], []])).unwrap_err();
        assert!(
            e.contains("turn 1 adds withheld functions, so it must have no message"),
            "{e}"
        );
        let mut missed = item(json!([user("a"), []]), json!(["MathAPI"]));
        missed["missed_function"] = json!({"1": ["cd"]});
        let e = import_item(missed, json!([[], []])).unwrap_err();
        assert!(e.contains("withholds `cd` until turn 1"), "{e}");
    }
}
