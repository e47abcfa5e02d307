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
    /// `{any_call: true}`: the verdict is the profile's, on the whole episode.
    expect: Value,
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
        // Every entry must be a name: `None` as soon as one is not.
        let listed: Option<Vec<&str>> = names
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        let Some(listed) = listed else {
            return Err(bad(format!(
                "`missed_function` of turn {t} is not a list of names: {names}"
            )));
        };
        missed.insert(t, listed);
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
        expect: serde_json::json!({"any_call": true}),
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
mod tests;
