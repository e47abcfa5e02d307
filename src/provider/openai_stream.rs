//! Streamed Chat Completions answers: assembling `chat.completion.chunk` events into the
//! same [`Response`] the non-streamed answer gives.
//!
//! The request asks for `"stream": true` and `"stream_options": {"include_usage":
//! true}` ([`super::openai`]); the server then sends one `data:` event per chunk and ends
//! with `data: [DONE]`. Each chunk's `choices[0].delta` carries fragments of the
//! message: `content` and `refusal` text, reasoning fields, and `tool_calls[]` entries.
//! The first entry of a call holds its `index`, `id`, `type` and `function.name`; later
//! entries only its `index` and a `function.arguments` fragment. Fragments are
//! concatenated byte for byte (never re-serialised), and the finished message is read
//! by [`super::openai::parse_response`], so every rule of the non-streamed reader
//! (whitespace-only text is none, a refusal stands in for missing text, reasoning fields
//! become the turn's state, usage is checked, ids are assigned where missing) applies
//! unchanged.
//!
//! Quirks of compatible servers, each seen in the wild:
//!
//! - a call entry without `index` (Ollama before 0.4.7): one that carries an `id` other
//!   than the last call's, or a name when the last call already has one, starts a new
//!   call; one with neither continues the last call.
//! - every call sent with `index` 0 (Ollama's `/v1`, ollama/ollama#15457): an entry
//!   whose non-empty `id` differs from the id of the call at its index, or whose name
//!   differs from that call's name, starts a new call instead of merging two argument
//!   objects into `{..}{..}`.
//! - the whole `arguments` in one entry (Ollama, vLLM), or given as a JSON object
//!   instead of a string: the value's JSON text is appended, as the non-streamed reader
//!   does; `null` fragments add nothing, but a call whose only arguments were `null`
//!   keeps the text `null`, again as non-streamed.
//! - usage only in a last chunk with `choices: []`, in `x_groq.usage` (Groq), or
//!   nowhere (no usage, not zero).
//! - `finish_reason: "stop"` after tool calls (kept as sent, as non-streamed).
//! - a first delta with `content: ""` and `refusal: null`: no text, and no token.
//!
//! Only choice index 0 is read (toolgauge never asks for `n` > 1; the non-streamed
//! reader also reads the first choice); chunks for other choices are skipped.
//!
//! What ends the trial as an error: an event that is not JSON, a chunk that is not an
//! object, a chunk with an `error` object (servers that fail mid-stream send one as a
//! data event) or an event named `error`, `choices`, a choice, its `delta` or `tool_calls` of the wrong JSON
//! type, an argument fragment before any call; and at the end, a body that stops before
//! `data: [DONE]` (even after a `finish_reason`: the usage chunk and the terminal event
//! may still be missing, so the answer is not known to be whole), a stream with no
//! chunk for choice 0, or a call that never got a function name.

use serde_json::{Map, Value, json};

use super::Response;
use super::openai::{REASONING_FIELDS, embedded_error, parse_response};
use super::stream::{Assembler, Marks, SseEvent, Step};
use crate::util::json_kind::json_kind;

/// The assembler of one streamed Chat Completions answer.
#[derive(Debug, Default)]
pub(crate) struct OpenAiAssembler {
    /// Assistant turns already in the conversation, for ids assigned to calls without one.
    round: usize,
    /// Whether a chunk for choice 0 arrived.
    choice_seen: bool,
    /// `content` fragments, joined; `None` until one arrives.
    content: Option<String>,
    /// `refusal` fragments, joined.
    refusal: Option<String>,
    /// The reasoning fields ([`REASONING_FIELDS`]) as far as assembled.
    reasoning: Map<String, Value>,
    /// The calls, in the order they first appeared.
    calls: Vec<PartialCall>,
    /// A legacy `function_call`, read only when there are no `tool_calls` (as
    /// non-streamed).
    legacy: Option<PartialCall>,
    /// The last `finish_reason` given.
    finish_reason: Option<String>,
    /// The last non-null `usage` given.
    usage: Option<Value>,
    /// The last `x_groq.usage` (Groq streams its usage there, not in `usage`); used
    /// only when no `usage` came.
    groq_usage: Option<Value>,
}

/// A call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    /// The API `index` its entries carry; `None` from servers that send none.
    index: Option<u64>,
    id: Option<String>,
    name: Option<String>,
    /// The argument fragments, joined byte for byte.
    arguments: String,
    /// Some entry had an `arguments` field (else the text is empty, as non-streamed).
    has_arguments: bool,
    /// Some fragment was text or a value other than `null`.
    has_fragment: bool,
}

impl PartialCall {
    /// The call as a non-streamed `tool_calls` entry: `arguments` is the joined text,
    /// `null` when only `null` was sent, absent when nothing was.
    fn entry(&self) -> Value {
        let mut function = Map::new();
        if let Some(name) = &self.name {
            function.insert("name".into(), Value::from(name.clone()));
        }
        if self.has_arguments {
            let arguments = if self.has_fragment {
                Value::from(self.arguments.clone())
            } else {
                Value::Null
            };
            function.insert("arguments".into(), arguments);
        }
        let mut entry = Map::new();
        if let Some(id) = &self.id {
            entry.insert("id".into(), Value::from(id.clone()));
        }
        entry.insert("type".into(), Value::from("function"));
        entry.insert("function".into(), Value::Object(function));
        Value::Object(entry)
    }

    /// Add one entry's name and argument fragment.
    fn take(&mut self, name: Option<&str>, arguments: Option<&Value>) {
        if let Some(name) = name
            && self.name.is_none()
        {
            self.name = Some(name.to_string());
        }
        if let Some(arguments) = arguments {
            self.has_arguments = true;
            match arguments {
                Value::Null => {}
                Value::String(s) => {
                    self.arguments.push_str(s);
                    self.has_fragment = true;
                }
                // A JSON value instead of text: its JSON, as non-streamed.
                other => {
                    self.arguments.push_str(&other.to_string());
                    self.has_fragment = true;
                }
            }
        }
    }
}

/// The parts of one `tool_calls[]` entry (or legacy `function_call`) that assembly reads.
struct Entry<'a> {
    index: Option<u64>,
    id: Option<&'a str>,
    name: Option<&'a str>,
    arguments: Option<&'a Value>,
}

impl<'a> Entry<'a> {
    /// Read `value` (found at `at`).
    fn read(value: &'a Value, at: &str) -> Result<Entry<'a>, String> {
        let obj = value
            .as_object()
            .ok_or_else(|| format!("`{at}` is {} instead of an object", json_kind(value)))?;
        let index = match obj.get("index") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                format!("`{at}.index` is {v} instead of a non-negative whole number")
            })?),
        };
        let function = match obj.get("function") {
            None | Some(Value::Null) => None,
            Some(Value::Object(f)) => Some(f),
            Some(other) => {
                return Err(format!(
                    "`{at}.function` is {} instead of an object",
                    json_kind(other)
                ));
            }
        };
        // A legacy `function_call` holds name and arguments itself.
        let fields = function.unwrap_or(obj);
        Ok(Entry {
            index,
            id: obj
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty()),
            name: fields
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty()),
            arguments: fields.get("arguments"),
        })
    }

    /// Whether this entry carries a byte of a call (for the time to first tool byte).
    fn carries_output(&self) -> bool {
        self.id.is_some()
            || self.name.is_some()
            || match self.arguments {
                None | Some(Value::Null) => false,
                Some(Value::String(s)) => !s.is_empty(),
                Some(_) => true,
            }
    }
}

impl OpenAiAssembler {
    /// An assembler for an answer in round `round` (the number of assistant turns
    /// already in the conversation; calls without ids get ids by it, as non-streamed).
    pub(crate) fn new(round: usize) -> OpenAiAssembler {
        OpenAiAssembler {
            round,
            ..OpenAiAssembler::default()
        }
    }

    /// Read one chunk (already parsed).
    fn chunk(&mut self, chunk: &Map<String, Value>, marks: &mut Marks) -> Result<(), String> {
        if let Some(e) = embedded_error(chunk) {
            return Err(format!("the server sent an error inside the stream: {e}"));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        if let Some(usage) = chunk
            .get("x_groq")
            .and_then(|x| x.get("usage"))
            .filter(|u| !u.is_null())
        {
            self.groq_usage = Some(usage.clone());
        }
        let choices = match chunk.get("choices") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(choices)) => choices,
            Some(other) => {
                return Err(format!(
                    "`choices` is {} instead of an array",
                    json_kind(other)
                ));
            }
        };
        for (i, choice) in choices.iter().enumerate() {
            let choice = choice.as_object().ok_or_else(|| {
                format!(
                    "`choices[{i}]` is {} instead of an object",
                    json_kind(choice)
                )
            })?;
            // Only the first choice is read, as non-streamed (a missing index is 0).
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            self.choice_seen = true;
            self.choice(choice, i, marks)?;
        }
        Ok(())
    }

    /// Read choice 0 of a chunk (at `choices[i]`).
    fn choice(
        &mut self,
        choice: &Map<String, Value>,
        i: usize,
        marks: &mut Marks,
    ) -> Result<(), String> {
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let delta = match choice.get("delta") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(delta)) => delta,
            Some(other) => {
                return Err(format!(
                    "`choices[{i}].delta` is {} instead of an object",
                    json_kind(other)
                ));
            }
        };
        if append_text(&mut self.content, delta.get("content")) {
            marks.token();
        }
        if append_text(&mut self.refusal, delta.get("refusal")) {
            marks.token();
        }
        for field in REASONING_FIELDS {
            if let Some(v) = delta.get(*field) {
                append_reasoning(&mut self.reasoning, field, v);
            }
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(entries)) => {
                for (j, entry) in entries.iter().enumerate() {
                    let at = format!("choices[{i}].delta.tool_calls[{j}]");
                    let entry = Entry::read(entry, &at)?;
                    if entry.carries_output() {
                        marks.tool();
                    }
                    self.add(entry, &at)?;
                }
            }
            Some(other) => {
                return Err(format!(
                    "`choices[{i}].delta.tool_calls` is {} instead of an array",
                    json_kind(other)
                ));
            }
        }
        if let Some(legacy) = delta.get("function_call").filter(|f| !f.is_null()) {
            let entry = Entry::read(legacy, &format!("choices[{i}].delta.function_call"))?;
            if entry.carries_output() {
                marks.tool();
            }
            self.legacy
                .get_or_insert_with(PartialCall::default)
                .take(entry.name, entry.arguments);
        }
        Ok(())
    }

    /// Add one `tool_calls[]` entry (found at `at`) to the call it belongs to, or start
    /// a new call (see the module docs for the rules).
    fn add(&mut self, entry: Entry<'_>, at: &str) -> Result<(), String> {
        // The call this entry continues, if any.
        let current =
            match entry.index {
                // The last call at this index (calls of one index are consecutive).
                Some(index) => self
                    .calls
                    .iter()
                    .rposition(|c| c.index == Some(index))
                    .filter(|&k| continues(&self.calls[k], &entry)),
                None => self.calls.len().checked_sub(1).filter(|&k| {
                    self.calls[k].index.is_none() && continues(&self.calls[k], &entry)
                }),
            };
        let k = match current {
            Some(k) => k,
            None => {
                if entry.id.is_none() && entry.name.is_none() {
                    return Err(format!(
                        "`{at}` continues a tool call (no id, no name) but no call {} was started",
                        match entry.index {
                            Some(index) => format!("at index {index}"),
                            None => "without index".to_string(),
                        }
                    ));
                }
                self.calls.push(PartialCall {
                    index: entry.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[k];
        if call.id.is_none() {
            call.id = entry.id.map(str::to_string);
        }
        call.take(entry.name, entry.arguments);
        Ok(())
    }

    /// The answer as a non-streamed Chat Completions body, for [`parse_response`].
    fn body(&self) -> Value {
        let mut message = self.reasoning.clone();
        message.insert("role".into(), Value::from("assistant"));
        message.insert(
            "content".into(),
            self.content.clone().map_or(Value::Null, Value::from),
        );
        if let Some(refusal) = &self.refusal {
            message.insert("refusal".into(), Value::from(refusal.clone()));
        }
        if !self.calls.is_empty() {
            message.insert(
                "tool_calls".into(),
                Value::Array(self.calls.iter().map(PartialCall::entry).collect()),
            );
        } else if let Some(legacy) = &self.legacy {
            let mut entry = legacy.entry();
            if let Some(function) = entry.get_mut("function").and_then(Value::as_object_mut) {
                entry = Value::Object(std::mem::take(function));
            }
            message.insert("function_call".into(), entry);
        }
        let mut body = json!({
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": self.finish_reason,
            }],
        });
        if let Some(usage) = self.usage.as_ref().or(self.groq_usage.as_ref()) {
            body["usage"] = usage.clone();
        }
        body
    }
}

/// Whether `entry` continues `call` rather than starting another call at its place: it
/// does unless it names an id other than the call's, or a name when the call already
/// has another one (or, without an index, has one at all: there every call arrives
/// whole).
fn continues(call: &PartialCall, entry: &Entry<'_>) -> bool {
    if let (Some(id), Some(known)) = (entry.id, call.id.as_deref()) {
        return id == known;
    }
    match (entry.name, call.name.as_deref()) {
        (Some(name), Some(known)) => entry.index.is_some() && name == known,
        _ => true,
    }
}

/// Append a `content` or `refusal` fragment (a string, or an array of text parts) to
/// `text`; true when it held any text.
fn append_text(text: &mut Option<String>, fragment: Option<&Value>) -> bool {
    let piece = match fragment {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect(),
        // `null` and other kinds carry no text (non-streamed reads them as none too).
        _ => return false,
    };
    text.get_or_insert_with(String::new).push_str(&piece);
    !piece.is_empty()
}

/// Add a reasoning fragment: text is joined, arrays (OpenRouter's `reasoning_details`)
/// are extended, an object is appended to an array, `null` adds nothing.
fn append_reasoning(reasoning: &mut Map<String, Value>, field: &str, fragment: &Value) {
    match (reasoning.get_mut(field), fragment) {
        (_, Value::Null) => {}
        (Some(Value::String(text)), Value::String(more)) => text.push_str(more),
        (Some(Value::Array(items)), Value::Array(more)) => items.extend(more.iter().cloned()),
        (Some(Value::Array(items)), more @ Value::Object(_)) => items.push(more.clone()),
        (None, more @ Value::Object(_)) if field == "reasoning_details" => {
            reasoning.insert(field.into(), Value::Array(vec![more.clone()]));
        }
        (_, more) => {
            reasoning.insert(field.into(), more.clone());
        }
    }
}

impl Assembler for OpenAiAssembler {
    fn event(&mut self, event: &SseEvent, marks: &mut Marks) -> Result<Step, String> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Step::Done);
        }
        // Some servers name a failure's event (`event: error`) and put plain text in it.
        if event.event.as_deref() == Some("error") {
            let reason = serde_json::from_str::<Value>(data)
                .ok()
                .and_then(|v| v.as_object().and_then(embedded_error))
                .unwrap_or_else(|| data.to_string());
            return Err(format!("the server sent an error event: {reason}"));
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|e| format!("the event is not JSON ({e})"))?;
        let chunk = chunk.as_object().ok_or_else(|| {
            format!(
                "the chunk is {} instead of a `chat.completion.chunk` object",
                json_kind(&chunk)
            )
        })?;
        self.chunk(chunk, marks)?;
        Ok(Step::More)
    }

    fn finish(self, terminated: bool) -> Result<Response, String> {
        if !terminated {
            return Err(match &self.finish_reason {
                Some(reason) => format!(
                    "the stream ended before `data: [DONE]` (a finish_reason `{reason}` had \
                     arrived, but the terminal event did not, so the answer is not known to be \
                     whole)"
                ),
                None if self.choice_seen => "the stream ended before `data: [DONE]` and \
                     before any finish_reason: the answer was cut off"
                    .to_string(),
                None => format!(
                    "the stream ended before `data: [DONE]` without a single chunk for \
                     choice 0; {NO_CHUNK_HINT}"
                ),
            });
        }
        if !self.choice_seen {
            return Err(format!(
                "the stream ended with `data: [DONE]` but held no chunk for choice 0 (no \
                 completion returned); {NO_CHUNK_HINT}"
            ));
        }
        if let Some((i, call)) = self
            .calls
            .iter()
            .enumerate()
            .find(|(_, c)| c.name.is_none())
        {
            return Err(format!(
                "tool call {i} ({}) never got a function name",
                match (&call.id, call.index) {
                    (Some(id), _) => format!("id `{id}`"),
                    (None, Some(index)) => format!("index {index}"),
                    (None, None) => "without index or id".to_string(),
                }
            ));
        }
        let mut response = parse_response(&self.body())?;
        response.assign_missing_ids(self.round);
        Ok(response)
    }
}

/// The likely cause of a stream without a chunk, and what to try: a compatible server
/// that can not stream tool calls unless a function is named (llama-cpp-python's
/// `chatml-function-calling` under `tool_choice: auto`) closes the stream at once.
const NO_CHUNK_HINT: &str = "a server that can not stream tool calls (llama-cpp-python's \
    chatml-function-calling under tool_choice auto or required) ends the stream like this: \
    run the target without --stream, or name the function (--tool-choice function:NAME)";

#[cfg(test)]
#[path = "openai_stream_tests.rs"]
mod tests;
