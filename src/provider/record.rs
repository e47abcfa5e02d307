//! Recording live exchanges into a cassette as each trial finishes (`--record`).
//!
//! Entries are appended and flushed one line at a time, so a crash loses at most the
//! line being written; a torn last line from an earlier crash is cut off before
//! appending (otherwise the next entry would be glued to it). Recording into a
//! hand-written cassette is refused: its header would then misdescribe live entries.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::cassette::{
    CASSETTE_VERSION, CassetteEntry, CassetteHeader, CassetteSource, CassetteWriter, RequestHasher,
};
use super::{Provider, ProviderError, Request, Response, Target, TrialKey};

/// Why recording could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// I/O failure.
    #[error("failed to open cassette `{path}` for recording: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The cassette exists and is not a live recording.
    #[error("cassette `{0}` is hand-written; recording live answers into it would mislabel them")]
    HandWritten(PathBuf),
    /// The cassette's first line is not a header.
    #[error("cassette `{path}` has no valid header: {message}")]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Appends recorded exchanges to one cassette; shared by every recording target.
pub struct Recorder {
    writer: Mutex<CassetteWriter>,
    hasher: RequestHasher,
    /// Entries written so far.
    pub written: std::sync::atomic::AtomicU64,
}

impl Recorder {
    /// Open `path` for appending (creating it with a live header for `targets`).
    pub fn open(path: &Path, targets: &[Target]) -> Result<Recorder, RecordError> {
        let io = |source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        };
        let writer = if path.exists() {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(io)?;
            let mut text = Vec::new();
            file.read_to_end(&mut text).map_err(io)?;
            let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
            let header: CassetteHeader =
                serde_json::from_slice(first).map_err(|e| RecordError::BadHeader {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?;
            if header.source != CassetteSource::Live {
                return Err(RecordError::HandWritten(path.to_path_buf()));
            }
            // Cut a torn last line (no trailing newline) left by an interrupted append.
            if text.last() != Some(&b'\n') {
                let keep = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                file.set_len(keep as u64).map_err(io)?;
            }
            file.seek(SeekFrom::End(0)).map_err(io)?;
            CassetteWriter::from_file(file)
        } else {
            let single = (targets.len() == 1).then(|| &targets[0]);
            let header = CassetteHeader {
                toolgauge_cassette: CASSETTE_VERSION,
                source: CassetteSource::Live,
                provider: single.map(|t| t.provider.clone()),
                model: single.map(|t| t.model.clone()),
                recorded_at: Some(jiff::Timestamp::now().to_string()),
                note: Some("recorded from live models with toolgauge --record".into()),
            };
            CassetteWriter::create(path, &header).map_err(io)?
        };
        Ok(Recorder {
            writer: Mutex::new(writer),
            hasher: RequestHasher::default(),
            written: Default::default(),
        })
    }

    fn append(
        &self,
        target: &Target,
        request: &Request,
        key: &TrialKey,
        response: &Response,
    ) -> std::io::Result<()> {
        let entry = CassetteEntry {
            key: self.hasher.hash(target, request),
            repeat: key.repeat,
            case_id: key.case_id.clone(),
            target: key.target.clone(),
            variant: key.variant.clone(),
            tool_choice: key.tool_choice.to_string(),
            request: Some(request.clone()),
            response: Response {
                raw: None,
                ..response.clone()
            },
            raw: response.raw.clone(),
        };
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.append(&entry)?;
        self.written
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// A live provider whose every successful exchange is recorded.
pub struct RecordingProvider {
    inner: Arc<dyn Provider>,
    target: Target,
    recorder: Arc<Recorder>,
}

impl RecordingProvider {
    /// Record `inner`'s answers for `target` with `recorder`.
    pub fn new(inner: Arc<dyn Provider>, target: Target, recorder: Arc<Recorder>) -> Self {
        RecordingProvider {
            inner,
            target,
            recorder,
        }
    }
}

#[async_trait]
impl Provider for RecordingProvider {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        let response = self.inner.complete(request, key).await?;
        // A response that can not be recorded ends the trial as an error naming why, so
        // a run never claims a recording it does not have.
        if let Err(e) = self.recorder.append(&self.target, request, key, &response) {
            return Err(ProviderError::Decode {
                provider: self.target.provider.clone(),
                message: format!("the response arrived but could not be recorded: {e}"),
            });
        }
        Ok(response)
    }

    fn source(&self) -> String {
        format!("{}, recording", self.inner.source())
    }

    fn endpoint(&self) -> Option<super::Endpoint> {
        self.inner.endpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::cassette::Cassette;
    use crate::provider::{Message, ToolChoice};

    fn key(case: &str) -> TrialKey {
        TrialKey {
            case_id: case.into(),
            target: "openai:gpt-4o-mini".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        }
    }

    fn request(prompt: &str) -> Request {
        Request {
            messages: vec![Message::User {
                content: prompt.into(),
            }],
            tools: Arc::new(vec![]),
            tool_choice: ToolChoice::Auto,
        }
    }

    #[test]
    fn recording_creates_a_live_cassette_and_appends_after_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let target = Target::parse("openai:gpt-4o-mini").unwrap();
        let answer = |t: &str| Response {
            text: Some(t.into()),
            raw: Some(serde_json::json!({"id": "x"})),
            ..Response::default()
        };
        let rec = Recorder::open(&path, std::slice::from_ref(&target)).unwrap();
        rec.append(&target, &request("a"), &key("a"), &answer("first"))
            .unwrap();
        drop(rec);
        // An interrupted append leaves half a line; the next recording cuts it off.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"key\":\"half"))
            .unwrap();
        let rec = Recorder::open(&path, std::slice::from_ref(&target)).unwrap();
        rec.append(&target, &request("b"), &key("b"), &answer("second"))
            .unwrap();
        drop(rec);
        let c = Cassette::open(&path).unwrap();
        assert_eq!(c.header.source, CassetteSource::Live);
        assert!(!c.torn_tail);
        assert_eq!(c.len(), 2);
        let hash = crate::provider::cassette::request_hash(&target, &request("b"));
        assert_eq!(
            c.get(&hash, 0, "b").and_then(|r| r.text.as_deref()),
            Some("second")
        );
        // The raw body is stored at entry level, not inside the response.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"raw\":{\"id\":\"x\"}"));
    }

    #[test]
    fn recording_into_a_hand_written_cassette_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hand.jsonl");
        std::fs::write(
            &path,
            "{\"toolgauge_cassette\":1,\"source\":\"hand-written\"}\n",
        )
        .unwrap();
        let e = Recorder::open(&path, &[]).err().unwrap();
        assert!(matches!(e, RecordError::HandWritten(_)), "{e}");
    }
}
