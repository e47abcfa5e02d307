//! Reading When2Call's JSONL files: one item per line, every field the importer uses
//! checked, and every problem located by file, line and field.
//!
//! An item (`data/test/when2call_test_llm_judge.jsonl` upstream) holds `uuid`, `source`,
//! `source_id`, `question`, `correct_answer` (one of the four behaviour labels), `tools`
//! (a list of BFCL functions, each a JSON string), `target_tool` (a JSON string, or null
//! when no tool fits) and `answers` (a written example answer per behaviour; the
//! `tool_call` one is a JSON string `{"name", "arguments"}`). Other fields (`orig_tools`,
//! `orig_question`, `held_out_param`) are kept by upstream for provenance and ignored here.

use crate::util::json_kind::json_kind;
use std::collections::HashMap;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::behaviour::Behaviour;

/// Why a When2Call file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// The file could not be read, is not UTF-8 text, or holds no item.
    #[error("failed to read `{path}`: {message}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A line is not a When2Call item.
    #[error("`{path}` line {line}{}: {message}", field_part(.field))]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The field at fault (dotted path, e.g. `answers.tool_call`), when one is.
        field: Option<String>,
        /// What is wrong, and what was expected.
        message: String,
    },
}

fn field_part(field: &Option<String>) -> String {
    field
        .as_ref()
        .map(|f| format!(", field `{f}`"))
        .unwrap_or_default()
}

/// The example call of a `tool_call` item (`answers.tool_call`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExampleCall {
    /// The tool it calls (the target tool's name).
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// One When2Call item, checked.
#[derive(Debug)]
pub struct Item {
    /// 1-based line of the item in its file.
    pub line: usize,
    /// `uuid`: the case id.
    pub uuid: String,
    /// `source`: the benchmark the question was taken from (e.g. `BFCL v2 Live Multiple`).
    pub source: Option<String>,
    /// `source_id`: the question's id in that benchmark.
    pub source_id: Option<String>,
    /// `question`: the user's turn.
    pub question: String,
    /// `correct_answer`: the right behaviour.
    pub label: Behaviour,
    /// `tools`: the offered functions, each BFCL JSON text (checked to parse and to be an
    /// object with a `name`).
    pub tools: Vec<Box<RawValue>>,
    /// For a `tool_call` item: the call its example answer makes, checked to name the
    /// `target_tool`, which is one of `tools`.
    pub call: Option<ExampleCall>,
}

/// Read the When2Call JSONL file at `path`.
pub fn read(path: &Path) -> Result<Vec<Item>, ItemError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ItemError::Read {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| ItemError::Read {
        path: shown.clone(),
        message: format!(
            "not UTF-8 text (invalid byte at offset {}); When2Call files are JSONL",
            e.utf8_error().valid_up_to()
        ),
    })?;
    parse(&text, &shown)
}

/// Parse the text of a When2Call JSONL file; `path` is only for messages.
pub fn parse(text: &str, path: &str) -> Result<Vec<Item>, ItemError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut items = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item = parse_line(line, i + 1, path)?;
        if let Some(first) = seen.insert(item.uuid.clone(), item.line) {
            return Err(ItemError::Line {
                path: path.into(),
                line: item.line,
                field: Some("uuid".into()),
                message: format!(
                    "uuid `{}` is also the uuid of the item on line {first}; case ids must be unique",
                    item.uuid
                ),
            });
        }
        items.push(item);
    }
    if items.is_empty() {
        return Err(ItemError::Read {
            path: path.into(),
            message: "it holds no item (expected one JSON object per line)".into(),
        });
    }
    Ok(items)
}

/// Errors of one line.
struct LineCtx<'a> {
    path: &'a str,
    line: usize,
}

impl LineCtx<'_> {
    fn err(&self, field: Option<&str>, message: impl Into<String>) -> ItemError {
        ItemError::Line {
            path: self.path.into(),
            line: self.line,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    /// A required string field.
    fn string(&self, o: &Map<String, Value>, field: &str) -> Result<String, ItemError> {
        match o.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::String(_)) => Err(self.err(Some(field), "is empty")),
            Some(other) => Err(self.err(
                Some(field),
                format!("must be a string, got {}", json_kind(other)),
            )),
            None => Err(self.err(Some(field), "is missing")),
        }
    }

    /// An optional string field (absent or null is `None`).
    fn opt_string(&self, o: &Map<String, Value>, field: &str) -> Result<Option<String>, ItemError> {
        match o.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(
                Some(field),
                format!("must be a string, got {}", json_kind(other)),
            )),
        }
    }

    /// A JSON object given as JSON text (When2Call's way) or written inline.
    fn object_text(&self, v: &Value, field: &str) -> Result<Map<String, Value>, ItemError> {
        let parsed = match v {
            Value::String(s) => serde_json::from_str::<Value>(s)
                .map_err(|e| self.err(Some(field), format!("is not valid JSON text: {e}")))?,
            other => other.clone(),
        };
        match parsed {
            Value::Object(o) => Ok(o),
            other => Err(self.err(
                Some(field),
                format!("must be a JSON object, got {}", json_kind(&other)),
            )),
        }
    }
}

/// A function's `name`, checked to be a non-empty string.
fn function_name(ctx: &LineCtx, f: &Map<String, Value>, field: &str) -> Result<String, ItemError> {
    match f.get("name") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(ctx.err(
            Some(&format!("{field}.name")),
            "is missing or not a non-empty string (every function needs a name)",
        )),
    }
}

fn parse_line(line: &str, number: usize, path: &str) -> Result<Item, ItemError> {
    let ctx = LineCtx { path, line: number };
    let value: Value = serde_json::from_str(line).map_err(|e| {
        ctx.err(
            None,
            format!(
                "not a JSON object ({e}); When2Call files hold one JSON object per line (JSONL)"
            ),
        )
    })?;
    let Value::Object(o) = value else {
        return Err(ctx.err(
            None,
            format!(
                "{} is not an item; When2Call files hold one JSON object per line (JSONL)",
                json_kind(&value)
            ),
        ));
    };
    let uuid = ctx.string(&o, "uuid")?;
    let source = ctx.opt_string(&o, "source")?;
    let source_id = ctx.opt_string(&o, "source_id")?;
    let question = ctx.string(&o, "question")?;
    let label_text = ctx.string(&o, "correct_answer")?;
    let label = Behaviour::ALL
        .into_iter()
        .find(|b| b.label() == label_text)
        .ok_or_else(|| {
            ctx.err(
                Some("correct_answer"),
                format!(
                    "unknown label `{label_text}`; When2Call's labels are tool_call, request_for_info, cannot_answer and direct"
                ),
            )
        })?;

    // Tools: each a JSON string holding one BFCL function.
    let raw_tools = match o.get("tools") {
        Some(Value::Array(a)) => a.as_slice(),
        Some(Value::Null) | None => {
            return Err(ctx.err(
                Some("tools"),
                "is missing (write `\"tools\": []` for an item that offers none)",
            ));
        }
        Some(other) => {
            return Err(ctx.err(
                Some("tools"),
                format!("must be a list of functions, got {}", json_kind(other)),
            ));
        }
    };
    let mut tools = Vec::with_capacity(raw_tools.len());
    let mut names = Vec::with_capacity(raw_tools.len());
    for (i, t) in raw_tools.iter().enumerate() {
        let field = format!("tools[{i}]");
        let f = ctx.object_text(t, &field)?;
        let name = function_name(&ctx, &f, &field)?;
        if let Some(p) = f.get("parameters")
            && !p.is_object()
        {
            return Err(ctx.err(
                Some(&format!("{field}.parameters")),
                format!("must be an object (a `dict` schema), got {}", json_kind(p)),
            ));
        }
        if names.contains(&name) {
            return Err(ctx.err(
                Some(&format!("{field}.name")),
                format!("function `{name}` is offered twice"),
            ));
        }
        let text = serde_json::to_string(&Value::Object(f)).unwrap_or_default();
        let raw = RawValue::from_string(text)
            .map_err(|e| ctx.err(Some(&field), format!("is not valid JSON text: {e}")))?;
        tools.push(raw);
        names.push(name);
    }

    let call = if label == Behaviour::ToolCall {
        Some(example_call(&ctx, &o, &names)?)
    } else {
        if let Some(a) = o.get("answers")
            && !a.is_object()
        {
            return Err(ctx.err(
                Some("answers"),
                format!("must be an object of example answers, got {}", json_kind(a)),
            ));
        }
        None
    };
    Ok(Item {
        line: number,
        uuid,
        source,
        source_id,
        question,
        label,
        tools,
        call,
    })
}

/// The example call of a `tool_call` item, checked against its `target_tool`.
fn example_call(
    ctx: &LineCtx,
    o: &Map<String, Value>,
    offered: &[String],
) -> Result<ExampleCall, ItemError> {
    let target = match o.get("target_tool") {
        None | Some(Value::Null) => {
            return Err(ctx.err(
                Some("target_tool"),
                "is missing; a `tool_call` item names the tool to call",
            ));
        }
        Some(t) => ctx.object_text(t, "target_tool")?,
    };
    let target_name = function_name(ctx, &target, "target_tool")?;
    if !offered.contains(&target_name) {
        return Err(ctx.err(
            Some("target_tool"),
            format!(
                "names `{target_name}`, which is not among the item's tools ({}); a call to it could never be right",
                if offered.is_empty() {
                    "it offers none".to_string()
                } else {
                    offered.join(", ")
                }
            ),
        ));
    }
    let answers = match o.get("answers") {
        Some(Value::Object(a)) => a,
        Some(other) => {
            return Err(ctx.err(
                Some("answers"),
                format!(
                    "must be an object of example answers, got {}",
                    json_kind(other)
                ),
            ));
        }
        None => {
            return Err(ctx.err(
                Some("answers"),
                "is missing; a `tool_call` item's `answers.tool_call` gives the expected arguments",
            ));
        }
    };
    let example = match answers.get("tool_call") {
        None | Some(Value::Null) => {
            return Err(ctx.err(
                Some("answers.tool_call"),
                "is missing; it gives the expected call as {\"name\", \"arguments\"}",
            ));
        }
        Some(v) => ctx.object_text(v, "answers.tool_call")?,
    };
    let name = match example.get("name") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(ctx.err(Some("answers.tool_call.name"), "is missing or not a string"));
        }
    };
    if name != target_name {
        return Err(ctx.err(
            Some("answers.tool_call.name"),
            format!("calls `{name}`, but `target_tool` is `{target_name}`"),
        ));
    }
    let arguments = match example.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(v) => ctx.object_text(v, "answers.tool_call.arguments")?,
    };
    // Every argument must be a declared parameter of the target: the expectation names
    // them, and an undeclared one could never be matched.
    let declared = target
        .get("parameters")
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object);
    if let Some(declared) = declared {
        for k in arguments.keys() {
            if !declared.contains_key(k) {
                let mut known: Vec<&str> = declared.keys().map(String::as_str).collect();
                known.sort_unstable();
                return Err(ctx.err(
                    Some(&format!("answers.tool_call.arguments.{k}")),
                    format!(
                        "`{target_name}` declares no parameter `{k}` (it declares: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
    } else if let Some(k) = arguments.keys().next() {
        return Err(ctx.err(
            Some(&format!("answers.tool_call.arguments.{k}")),
            format!("`{target_name}` declares no parameters"),
        ));
    }
    Ok(ExampleCall { name, arguments })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> String {
        json!({"name": name, "description": "d", "parameters": {"type": "dict",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}})
        .to_string()
    }

    fn line(v: Value) -> String {
        v.to_string()
    }

    fn call_item() -> Value {
        json!({
            "uuid": "u1", "source": "BFCL v2 Live Multiple", "source_id": "live_1",
            "question": "Weather in Paris?", "correct_answer": "tool_call",
            "answers": {"tool_call": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
                        "direct": "d", "request_for_info": "r", "cannot_answer": "c"},
            "target_tool": tool("get_weather"),
            "tools": [tool("get_weather"), tool("get_time")]
        })
    }

    fn err_of(v: Value) -> String {
        parse(&line(v), "f.jsonl").unwrap_err().to_string()
    }

    #[test]
    fn a_tool_call_item_keeps_its_example_call_and_tools() {
        let items = parse(&format!("\u{feff}{}\n\n", line(call_item())), "f.jsonl").unwrap();
        assert_eq!(items.len(), 1);
        let it = &items[0];
        assert_eq!(it.line, 1);
        assert_eq!(it.uuid, "u1");
        assert_eq!(it.label, Behaviour::ToolCall);
        assert_eq!(it.source.as_deref(), Some("BFCL v2 Live Multiple"));
        assert_eq!(it.source_id.as_deref(), Some("live_1"));
        assert_eq!(it.tools.len(), 2);
        let call = it.call.as_ref().unwrap();
        assert_eq!(call.name, "get_weather");
        assert_eq!(call.arguments.get("city"), Some(&json!("Paris")));
    }

    #[test]
    fn bad_lines_name_file_line_and_field() {
        let two = format!("{}\nnot json\n", line(call_item()));
        let e = parse(&two, "f.jsonl").unwrap_err().to_string();
        assert!(e.starts_with("`f.jsonl` line 2: not a JSON object"), "{e}");

        let e = parse("[1, 2]", "f.jsonl").unwrap_err().to_string();
        assert!(e.contains("line 1: an array is not an item"), "{e}");

        let mut v = call_item();
        v.as_object_mut().unwrap().remove("question");
        assert_eq!(err_of(v), "`f.jsonl` line 1, field `question`: is missing");

        let mut v = call_item();
        v["correct_answer"] = json!("maybe");
        let e = err_of(v);
        assert!(
            e.contains("field `correct_answer`: unknown label `maybe`"),
            "{e}"
        );

        let mut v = call_item();
        v["tools"][1] = json!("{\"name\": ");
        let e = err_of(v);
        assert!(
            e.contains("field `tools[1]`: is not valid JSON text"),
            "{e}"
        );

        let mut v = call_item();
        v["tools"] = json!("x");
        assert!(err_of(v).contains("field `tools`: must be a list"));

        let mut v = call_item();
        v["answers"]["tool_call"] = json!("{\"name\": \"get_time\", \"arguments\": {}}");
        assert!(err_of(v).contains(
            "field `answers.tool_call.name`: calls `get_time`, but `target_tool` is `get_weather`"
        ));

        let mut v = call_item();
        v["answers"]["tool_call"] =
            json!("{\"name\": \"get_weather\", \"arguments\": {\"town\": \"Paris\"}}");
        let e = err_of(v);
        assert!(
            e.contains("field `answers.tool_call.arguments.town`: `get_weather` declares no parameter `town` (it declares: city)"),
            "{e}"
        );

        let mut v = call_item();
        v["tools"] = json!([tool("get_time")]);
        let e = err_of(v);
        assert!(
            e.contains("field `target_tool`: names `get_weather`, which is not among"),
            "{e}"
        );

        let mut v = call_item();
        v["target_tool"] = Value::Null;
        assert!(err_of(v).contains("field `target_tool`: is missing"));

        let mut v = call_item();
        v.as_object_mut().unwrap().remove("answers");
        assert!(err_of(v).contains("field `answers`: is missing"));

        let mut v = call_item();
        v["uuid"] = json!(7);
        assert!(err_of(v).contains("field `uuid`: must be a string, got a number"));
    }

    #[test]
    fn duplicate_uuids_and_empty_files_are_errors() {
        let two = format!("{}\n{}\n", line(call_item()), line(call_item()));
        let e = parse(&two, "f.jsonl").unwrap_err().to_string();
        assert!(
            e.contains("line 2, field `uuid`: uuid `u1` is also the uuid of the item on line 1"),
            "{e}"
        );
        let e = parse("\n  \n", "f.jsonl").unwrap_err().to_string();
        assert!(e.contains("holds no item"), "{e}");
    }

    #[test]
    fn items_without_a_call_need_no_target_nor_example() {
        let v = json!({"uuid": "u2", "question": "Q?", "correct_answer": "cannot_answer",
            "target_tool": null, "tools": []});
        let items = parse(&line(v), "f.jsonl").unwrap();
        assert_eq!(items[0].label, Behaviour::CannotAnswer);
        assert!(items[0].tools.is_empty());
        assert!(items[0].call.is_none());
        assert!(items[0].source.is_none());
    }
}
