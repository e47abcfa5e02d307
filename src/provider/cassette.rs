//! Cassettes: recorded request/response pairs that replay a run with no network.
//!
//! A cassette is JSONL. The first line is a [`CassetteHeader`]; every other line is a
//! [`CassetteEntry`] keyed by the SHA-256 of the canonical request (target, messages,
//! tools with the variant's descriptions, tool_choice) plus the repeat index. A changed
//! prompt, description or schema therefore misses the cassette instead of replaying a
//! stale answer. Keys hash a canonical form (object keys sorted, compact numbers) so
//! map order in memory never changes them. A torn last line (a crash mid-append) is
//! ignored; any other bad line is an error naming the line.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Provider, ProviderError, Request, Response, Target, ToolDefinition, TrialKey};
use crate::util::digest::hex;

/// The format version written in headers.
///
/// The version covers the canonical form of entry keys ([`request_hash`]): which fields
/// of the target and request are hashed, how they are serialised (object keys sorted at
/// every level, compact, `params` only when set) and the hash function. Every recorded
/// cassette is looked up by those keys, so changing the form orphans every user's
/// recordings: it needs a new version (and a reader or migration for the old one). The
/// test `keys_of_known_requests_are_pinned_for_this_version` pins the keys of known
/// requests, derived by hand from the documented form (docs/cassettes.md), and fails on
/// any change of the form made without a version bump.
pub const CASSETTE_VERSION: u32 = 1;

/// Where a cassette's responses came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CassetteSource {
    /// Recorded from a live model.
    Live,
    /// Written by hand (or generated from a script), not by a model.
    HandWritten,
}

/// The first line of a cassette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CassetteHeader {
    /// Format version.
    pub toolgauge_cassette: u32,
    /// Live or hand-written.
    pub source: CassetteSource,
    /// Provider of the recorded target(s), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model of the recorded target(s), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When it was recorded or generated (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    /// Free text, e.g. how to re-record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One recorded exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CassetteEntry {
    /// SHA-256 of the canonical request (see [`request_hash`]).
    pub key: String,
    /// Repeat index the response was recorded for.
    #[serde(default)]
    pub repeat: u32,
    /// Case id (informational).
    #[serde(default)]
    pub case_id: String,
    /// Target (informational; part of the key).
    #[serde(default)]
    pub target: String,
    /// Variant (informational; its descriptions are part of the key).
    #[serde(default)]
    pub variant: String,
    /// tool_choice (informational; part of the key).
    #[serde(default)]
    pub tool_choice: String,
    /// The request, for people reading the cassette.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
    /// The response replayed.
    pub response: Response,
    /// The provider's raw response body, when recorded live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

/// The fields replay needs from an entry; the rest (the stored request, the raw body)
/// is skipped without being built.
#[derive(Deserialize)]
struct ReplayEntry {
    key: String,
    #[serde(default)]
    repeat: u32,
    #[serde(default)]
    case_id: String,
    response: Response,
}

/// Why a cassette could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// I/O failure.
    #[error("failed to read cassette `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line that is not what the format requires.
    #[error("cassette `{path}` line {line}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A cassette loaded for replay.
#[derive(Debug)]
pub struct Cassette {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: CassetteHeader,
    /// Responses by (request hash, repeat), each with the case id it was recorded for.
    entries: HashMap<(String, u32), Vec<(String, Response)>>,
    /// True when a torn last line was skipped.
    pub torn_tail: bool,
}

/// Cassette lines longer than this are refused (a recorded response is a few KiB).
const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

impl Cassette {
    /// Read the cassette at `path`.
    pub fn open(path: &Path) -> Result<Cassette, CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let fmt = |line: usize, message: String| CassetteError::Format {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut reader = BufReader::new(File::open(path).map_err(io)?);
        let mut header: Option<CassetteHeader> = None;
        let mut entries = HashMap::new();
        let mut torn_tail = false;
        let mut buf = Vec::new();
        let mut line_no = 0;
        loop {
            buf.clear();
            let n = Read::by_ref(&mut reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(io)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if buf.len() > MAX_LINE_BYTES {
                return Err(fmt(line_no, format!("line is over {MAX_LINE_BYTES} bytes")));
            }
            let complete = buf.last() == Some(&b'\n');
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => t.trim(),
                Err(_) if !complete => {
                    torn_tail = true;
                    break;
                }
                Err(_) => return Err(fmt(line_no, "not valid UTF-8".into())),
            };
            if text.is_empty() {
                continue;
            }
            if header.is_none() {
                let h: CassetteHeader = serde_json::from_str(text).map_err(|e| {
                    fmt(line_no, format!("expected the header line ({{\"toolgauge_cassette\": 1, \"source\": \"live\"|\"hand-written\", ...}}): {e}"))
                })?;
                if h.toolgauge_cassette != CASSETTE_VERSION {
                    return Err(fmt(
                        line_no,
                        format!(
                            "unsupported cassette version {} (this toolgauge reads version {CASSETTE_VERSION})",
                            h.toolgauge_cassette
                        ),
                    ));
                }
                header = Some(h);
                continue;
            }
            match serde_json::from_str::<ReplayEntry>(text) {
                Ok(e) => {
                    let slot: &mut Vec<(String, Response)> =
                        entries.entry((e.key, e.repeat)).or_default();
                    // A later line for the same case replaces an earlier one (re-recording).
                    slot.retain(|(case, _)| *case != e.case_id);
                    slot.push((e.case_id, e.response));
                }
                // A crash while appending leaves a partial last line with no newline.
                Err(_) if !complete => {
                    torn_tail = true;
                    break;
                }
                Err(e) => return Err(fmt(line_no, format!("invalid entry: {e}"))),
            }
        }
        let header =
            header.ok_or_else(|| fmt(1, "the cassette is empty (no header line)".into()))?;
        Ok(Cassette {
            path: path.to_path_buf(),
            header,
            entries,
            torn_tail,
        })
    }

    /// The recorded response for `hash` and `repeat`, preferring the entry recorded for
    /// `case_id`: two cases can send identical requests (same prompt, tools, mode), and
    /// each must replay its own answer. Another case's entry for the same request is
    /// used only when none was recorded under this case id (a renamed case); it answered
    /// exactly this request, so it is never stale.
    pub fn get(&self, hash: &str, repeat: u32, case_id: &str) -> Option<&Response> {
        let slot = self.entries.get(&(hash.to_string(), repeat))?;
        slot.iter()
            .find(|(case, _)| case == case_id)
            .or_else(|| slot.first())
            .map(|(_, r)| r)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    /// True when the cassette has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Replays a cassette for one target.
pub struct ReplayProvider {
    cassette: Arc<Cassette>,
    target: Target,
    hasher: RequestHasher,
}

impl ReplayProvider {
    /// Replay `cassette` for `target`.
    pub fn new(cassette: Arc<Cassette>, target: Target) -> Self {
        ReplayProvider {
            cassette,
            target,
            hasher: RequestHasher::default(),
        }
    }
}

#[async_trait]
impl Provider for ReplayProvider {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        let hash = self.hasher.hash(&self.target, request);
        self.cassette
            .get(&hash, key.repeat, &key.case_id)
            .cloned()
            .ok_or_else(|| ProviderError::CassetteMiss {
                key: Box::new(key.clone()),
                hash: hash[..12].to_string(),
            })
    }

    fn source(&self) -> String {
        let kind = match self.cassette.header.source {
            CassetteSource::Live => "recorded from a live model",
            CassetteSource::HandWritten => "hand-written, not recorded from a model",
        };
        format!("cassette {} ({kind})", self.cassette.path.display())
    }
}

/// The cassette key of `request` sent to `target`: the SHA-256 of the canonical JSON of
/// `{"provider", "model", "request"}` (object keys sorted at every level, compact).
pub fn request_hash(target: &Target, request: &Request) -> String {
    RequestHasher::default().hash(target, request)
}

/// Computes [`request_hash`] for many requests, caching the canonical text of each set of
/// tool definitions: every trial of a variant sends the same (shared) set, and writing
/// its schemas canonically is most of the work of a hash.
#[derive(Default)]
pub struct RequestHasher {
    tools: Mutex<HashMap<usize, CachedTools>>,
}

/// A set of tool definitions (held so its address stays unique) and its canonical text.
type CachedTools = (Arc<Vec<ToolDefinition>>, Arc<str>);

impl RequestHasher {
    /// The cassette key of `request` sent to `target` (the same value as [`request_hash`]).
    pub fn hash(&self, target: &Target, request: &Request) -> String {
        let tools = self.tools_text(&request.tools);
        let mut messages = String::with_capacity(256);
        write_canonical(
            &serde_json::to_value(&request.messages).unwrap_or(Value::Null),
            &mut messages,
        );
        // Keys in sorted order: model < params < provider < request; messages <
        // tool_choice < tools. `params` is present only when the target sets any.
        let mut h = Sha256::new();
        h.update(b"{\"model\":");
        h.update(Value::from(target.model.as_str()).to_string());
        if let Some(params) = &target.params {
            let mut text = String::new();
            write_canonical(params, &mut text);
            h.update(b",\"params\":");
            h.update(text);
        }
        h.update(b",\"provider\":");
        h.update(Value::from(target.provider.as_str()).to_string());
        h.update(b",\"request\":{\"messages\":");
        h.update(messages);
        h.update(b",\"tool_choice\":");
        h.update(Value::from(request.tool_choice.to_string()).to_string());
        h.update(b",\"tools\":");
        h.update(tools.as_bytes());
        h.update(b"}}");
        hex(&h.finalize())
    }

    fn tools_text(&self, tools: &Arc<Vec<ToolDefinition>>) -> Arc<str> {
        // Keyed by the allocation's address; the cache holds a clone of the Arc, so the
        // address can not be reused by another set while the entry exists.
        let key = Arc::as_ptr(tools) as usize;
        let mut cache = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, text)) = cache.get(&key) {
            return text.clone();
        }
        let mut text = String::new();
        write_canonical(
            &serde_json::to_value(tools.as_ref()).unwrap_or(Value::Null),
            &mut text,
        );
        let text: Arc<str> = text.into();
        cache.insert(key, (tools.clone(), text.clone()));
        text
    }
}

/// Serialise `v` with object keys sorted at every level, so the text (and hash) does not
/// depend on insertion order.
pub fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Appends entries to a cassette file, one line each, flushed as written.
pub struct CassetteWriter {
    out: BufWriter<File>,
}

impl CassetteWriter {
    /// Create `path` (replacing it) and write `header`.
    pub fn create(path: &Path, header: &CassetteHeader) -> std::io::Result<CassetteWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut w = CassetteWriter {
            out: BufWriter::new(File::create(path)?),
        };
        w.line(header)?;
        Ok(w)
    }

    /// Append to an open file positioned at its end (its header already written).
    pub fn from_file(file: File) -> CassetteWriter {
        CassetteWriter {
            out: BufWriter::new(file),
        }
    }

    /// Append one entry.
    pub fn append(&mut self, entry: &CassetteEntry) -> std::io::Result<()> {
        self.line(entry)
    }

    fn line<T: Serialize>(&mut self, v: &T) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ToolChoice, ToolDefinition};
    use serde_json::json;

    fn request(desc: &str) -> Request {
        Request {
            messages: vec![Message::User {
                content: "北京今天多少度？".into(),
            }],
            tools: std::sync::Arc::new(vec![ToolDefinition {
                name: "get_weather".into(),
                description: desc.into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                    .into(),
            }]),
            tool_choice: ToolChoice::Auto,
        }
    }

    #[test]
    fn canonical_form_ignores_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"q":2,"p":1}],"x":null}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"p":1,"q":2}]},"b":1}"#).unwrap();
        let (mut sa, mut sb) = (String::new(), String::new());
        write_canonical(&a, &mut sa);
        write_canonical(&b, &mut sb);
        assert_eq!(sa, sb);
        assert_eq!(sa, r#"{"a":{"x":null,"y":[1,{"p":1,"q":2}]},"b":1}"#);
    }

    /// The definition of the key, written plainly: the streaming hasher must agree.
    fn reference_hash(target: &Target, request: &Request) -> String {
        let mut value =
            json!({"provider": target.provider, "model": target.model, "request": request});
        if let Some(p) = &target.params {
            value["params"] = p.clone();
        }
        let mut canon = String::new();
        write_canonical(&value, &mut canon);
        hex(&Sha256::digest(canon.as_bytes()))
    }

    #[test]
    fn the_streaming_hasher_equals_the_definition() {
        let t = Target::parse("openai:gpt-4o-mini").unwrap();
        let hasher = RequestHasher::default();
        let mut r = request("Weather.");
        r.messages.push(Message::Assistant {
            state: None,
            content: None,
            tool_calls: vec![crate::provider::ToolCall {
                id: Some("call_1".into()),
                name: "get_weather".into(),
                arguments: "{\"city\":\"北京\"}".into(),
            }],
        });
        r.messages.push(Message::Tool {
            name: String::new(),
            is_error: false,
            tool_call_id: "call_1".into(),
            content: "{\"t\": 32}".into(),
        });
        for choice in [
            ToolChoice::None,
            ToolChoice::Required,
            ToolChoice::Function("get_weather".into()),
        ] {
            r.tool_choice = choice;
            assert_eq!(hasher.hash(&t, &r), reference_hash(&t, &r));
            // Twice: the second time the tools' text comes from the cache.
            assert_eq!(hasher.hash(&t, &r), reference_hash(&t, &r));
        }
        // Sampling parameters are part of the key when set.
        let mut hot = t.clone();
        hot.params = Some(json!({"temperature": 1.0, "seed": 7}));
        assert_eq!(hasher.hash(&hot, &r), reference_hash(&hot, &r));
        assert_ne!(hasher.hash(&hot, &r), hasher.hash(&t, &r));
    }

    #[test]
    fn a_changed_description_or_target_changes_the_key() {
        let t = Target::parse("openai:gpt-4o-mini").unwrap();
        let base = request_hash(&t, &request("Weather."));
        assert_eq!(base, request_hash(&t, &request("Weather.")));
        assert_ne!(base, request_hash(&t, &request("Weather for one city.")));
        let other = Target::parse("openai:gpt-4o").unwrap();
        assert_ne!(base, request_hash(&other, &request("Weather.")));
    }

    /// A request with the `get_weather` tool as the shipped suites send it.
    fn pinned_request(messages: Vec<Message>, tool_choice: ToolChoice) -> Request {
        Request {
            messages,
            tools: std::sync::Arc::new(vec![ToolDefinition {
                name: "get_weather".into(),
                description: "Weather.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                })
                .into(),
            }]),
            tool_choice,
        }
    }

    /// The keys of known requests, one per provider shape, pinned as literal digests.
    /// Each was computed outside this code from the form docs/cassettes.md documents
    /// (Python: `sha256(json.dumps(v, ensure_ascii=False, separators=(",", ":"),
    /// sort_keys=True))`), e.g. for the first:
    /// `{"model":"gpt-4o-mini","provider":"openai","request":{"messages":[{"content":
    /// "北京今天多少度？","role":"user"}],"tool_choice":"auto","tools":[{"description":
    /// "Weather.","name":"get_weather","parameters":{"properties":{"city":{"type":
    /// "string"}},"required":["city"],"type":"object"}}]}}`.
    ///
    /// If this test fails, the canonical form changed: every recorded cassette would
    /// miss. Restore the form, or bump [`CASSETTE_VERSION`] (with a way to read version
    /// 1 cassettes) and pin the new keys under the new version.
    #[test]
    fn keys_of_known_requests_are_pinned_for_this_version() {
        assert_eq!(
            CASSETTE_VERSION, 1,
            "the keys below are those of cassette format 1; pin the new version's keys"
        );
        let hasher = RequestHasher::default();
        let check = |spec: &str, params: Option<Value>, request: &Request, pinned: &str| {
            let mut target = Target::parse(spec).unwrap();
            target.params = params;
            assert_eq!(request_hash(&target, request), pinned, "{spec}");
            // The cached streaming hasher (replay, record) gives the same key, twice.
            assert_eq!(hasher.hash(&target, request), pinned, "{spec}");
            assert_eq!(hasher.hash(&target, request), pinned, "{spec}");
        };
        let beijing = pinned_request(
            vec![Message::User {
                content: "北京今天多少度？".into(),
            }],
            ToolChoice::Auto,
        );
        // OpenAI Chat Completions; no sampling parameters.
        check(
            "openai:gpt-4o-mini",
            None,
            &beijing,
            "20e12bab77ba7835937d40b4cb052ebd4479ab2a31cf292a025884344b57d969",
        );
        // Anthropic Messages: a system prompt, tool_choice required, sampling params.
        check(
            "anthropic:claude-sonnet-4-5",
            Some(json!({"temperature": 0.0, "max_tokens": 256})),
            &pinned_request(
                vec![
                    Message::System {
                        content: "You are a helpful assistant.".into(),
                    },
                    Message::User {
                        content: "Weather in Paris?".into(),
                    },
                ],
                ToolChoice::Required,
            ),
            "a2b4cae5c71878c609dce45bffcc3eeeea0f0eda645601a2f261b5bf736c2b57",
        );
        // Gemini generateContent: a tool call and its result in the history, a forced
        // function, a seed and an extra request field.
        check(
            "gemini:gemini-2.5-flash",
            Some(json!({"seed": 7, "extra": {"top_p": 0.9}})),
            &pinned_request(
                vec![
                    Message::User {
                        content: "And in Rome?".into(),
                    },
                    Message::Assistant {
                        state: None,
                        content: None,
                        tool_calls: vec![crate::provider::ToolCall {
                            id: Some("call_1".into()),
                            name: "get_weather".into(),
                            arguments: "{\"city\":\"Rome\"}".into(),
                        }],
                    },
                    Message::Tool {
                        name: String::new(),
                        is_error: false,
                        tool_call_id: "call_1".into(),
                        content: "{\"t\": 31}".into(),
                    },
                ],
                ToolChoice::Function("get_weather".into()),
            ),
            "c5f886824b0a79c78e13380e4eeba1312cb8d351df6abf35ae316f4527494cf6",
        );
        // An OpenAI-compatible server: the URL is not part of the key, so the same
        // model served elsewhere replays the same entries.
        let compat = "77d1dc4cc7ae8f3f15e1e1782617bfce19fbc3a4dcbc5629f4efcd27cbc201b6";
        for spec in [
            "openai-compatible:qwen2.5@http://127.0.0.1:9/v1",
            "openai-compatible:qwen2.5@https://llm.example.com/v1/",
        ] {
            check(
                spec,
                Some(json!({"parallel_tool_calls": false})),
                &beijing,
                compat,
            );
        }
    }

    #[test]
    fn round_trip_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let t = Target::parse("openai:gpt-4o-mini").unwrap();
        let header = CassetteHeader {
            toolgauge_cassette: 1,
            source: CassetteSource::HandWritten,
            provider: None,
            model: None,
            recorded_at: None,
            note: None,
        };
        let mut w = CassetteWriter::create(&path, &header).unwrap();
        let key = request_hash(&t, &request("Weather."));
        let response = Response {
            text: Some("32°C".into()),
            ..Response::default()
        };
        w.append(&CassetteEntry {
            key: key.clone(),
            repeat: 0,
            case_id: "a".into(),
            target: t.spec.clone(),
            variant: "v".into(),
            tool_choice: "auto".into(),
            request: None,
            response: response.clone(),
            raw: None,
        })
        .unwrap();
        drop(w);
        // Simulate a crash mid-append.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(br#"{"key":"abc","resp"#).unwrap();
        let c = Cassette::open(&path).unwrap();
        assert!(c.torn_tail);
        assert_eq!(c.get(&key, 0, "a"), Some(&response));
        assert_eq!(c.get(&key, 1, "a"), None);
    }

    #[test]
    fn identical_requests_of_two_cases_replay_their_own_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let line = |case: &str, text: &str| {
            format!(
                "{{\"key\":\"k\",\"repeat\":0,\"case_id\":\"{case}\",\"response\":{{\"text\":\"{text}\"}}}}\n"
            )
        };
        let body = format!(
            "{{\"toolgauge_cassette\":1,\"source\":\"hand-written\"}}\n{}{}{}",
            line("a", "first"),
            line("b", "second"),
            line("a", "re-recorded")
        );
        std::fs::write(&path, body).unwrap();
        let c = Cassette::open(&path).unwrap();
        assert_eq!(c.len(), 2);
        let text = |case| c.get("k", 0, case).and_then(|r| r.text.clone());
        assert_eq!(text("a").as_deref(), Some("re-recorded"));
        assert_eq!(text("b").as_deref(), Some("second"));
        // A renamed case finds the answer to the identical request.
        assert_eq!(text("renamed").as_deref(), Some("second"));
    }

    #[test]
    fn a_bad_middle_line_is_an_error_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(
            &path,
            "{\"toolgauge_cassette\":1,\"source\":\"live\"}\nnot json\n{\"key\":\"k\",\"response\":{}}\n",
        )
        .unwrap();
        let e = Cassette::open(&path).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
