//! What the stream axis adds to scoring: the identity of a streamed trial, and the
//! timing of streamed answers (time to first token, time to first tool-call byte) next
//! to total latency.
//!
//! A streamed trial keeps its target string; its identity (journal, shards, merge,
//! resume, the providers of a run) is the target with ` × stream` joined, so a run with
//! `--stream both` holds each trial twice without the two colliding, and trials of
//! runs without streaming keep the identity they always had.
//!
//! The timings come from each answer's [`crate::provider::StreamTiming`], for a loop
//! trial from its first round (the answer a user waits for first). Both are summarised
//! as latency is, over scored trials: median and 95th percentile. A trial whose answer
//! made no call has no time to first tool-call byte and is left out of that figure.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::metrics::Latency;
use super::record::{TrialRecord, Verdict};
use super::stats::percentile;

/// The word that names a streamed cell or trial in labels (`T × v × auto × stream`).
pub const STREAM_LABEL: &str = "stream";

/// The word that names the non-streamed side when labels have to tell both apart
/// (`compare --streamed`).
pub const NO_STREAM_LABEL: &str = "no stream";

/// The timing metrics of streamed answers, as thresholds and comparisons name them.
pub const STREAM_METRICS: &[&str] = &[
    "first_token_p50_ms",
    "first_token_p95_ms",
    "first_tool_byte_p50_ms",
    "first_tool_byte_p95_ms",
];

/// The target part of a trial's identity: the target as written, with ` × stream`
/// joined when the trial was streamed.
pub fn identity_target(target: &str, stream: bool) -> Cow<'_, str> {
    if stream {
        Cow::Owned(format!("{target} × {STREAM_LABEL}"))
    } else {
        Cow::Borrowed(target)
    }
}

/// The timing of the streamed answers of a set of trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamMetrics {
    /// Scored trials whose (first) answer was streamed and timed.
    pub trials: u64,
    /// Milliseconds from the request to the first output (a text fragment or any part
    /// of a tool call): median and 95th percentile over those trials.
    pub first_token: Latency,
    /// Milliseconds from the request to the first byte of a tool call, over the
    /// streamed trials whose answer made a call.
    pub first_tool_byte: Latency,
}

impl StreamMetrics {
    /// The timing of `trials`' streamed answers; `None` when none was streamed (so the
    /// metrics of non-streamed sets are as before the axis existed).
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Option<StreamMetrics> {
        let mut n = 0;
        let mut first_token = Vec::new();
        let mut first_tool = Vec::new();
        for t in trials {
            if t.verdict == Verdict::Error {
                continue;
            }
            let Some(timing) = t.response.as_ref().and_then(|r| r.stream.as_ref()) else {
                continue;
            };
            n += 1;
            // A value only an edited journal holds (negative, NaN) measures nothing.
            let ok = |v: &f64| v.is_finite() && *v >= 0.0;
            first_token.extend(timing.first_token_ms.filter(ok));
            first_tool.extend(timing.first_tool_byte_ms.filter(ok));
        }
        (n > 0).then(|| StreamMetrics {
            trials: n,
            first_token: Latency {
                p50_ms: percentile(&mut first_token, 50.0),
                p95_ms: percentile(&mut first_token, 95.0),
            },
            first_tool_byte: Latency {
                p50_ms: percentile(&mut first_tool, 50.0),
                p95_ms: percentile(&mut first_tool, 95.0),
            },
        })
    }

    /// The value of a metric of [`STREAM_METRICS`].
    pub fn value(&self, name: &str) -> Option<f64> {
        match name {
            "first_token_p50_ms" => self.first_token.p50_ms,
            "first_token_p95_ms" => self.first_token.p95_ms,
            "first_tool_byte_p50_ms" => self.first_tool_byte.p50_ms,
            "first_tool_byte_p95_ms" => self.first_tool_byte.p95_ms,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Response, StreamTiming, ToolChoice};
    use crate::suite::CaseKind;

    fn trial(verdict: Verdict, timing: Option<(Option<f64>, Option<f64>)>) -> TrialRecord {
        TrialRecord {
            case_id: "a".into(),
            kind: CaseKind::ShouldCall,
            tags: vec![],
            target: "openai:m".into(),
            variant: "default".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: timing.is_some(),
            messages: vec![],
            response: Some(Response {
                latency_ms: 100.0,
                stream: timing.map(|(token, tool)| StreamTiming {
                    first_token_ms: token,
                    first_tool_byte_ms: tool,
                    events: 5,
                }),
                ..Response::default()
            }),
            checks: None,
            verdict,
            reasons: vec![],
            cost_usd: None,
            distractors: None,
            episode: None,
            judge: vec![],
        }
    }

    #[test]
    fn identity_joins_the_mode_only_for_streamed_trials() {
        assert_eq!(identity_target("openai:m", false), "openai:m");
        assert_eq!(identity_target("openai:m", true), "openai:m × stream");
    }

    #[test]
    fn timings_are_summarised_over_scored_streamed_trials() {
        // Time to first token 10, 20, 30, 40 (the error's 1 is left out); the
        // text-only answer has no tool byte, so that figure is over 25, 35, 45.
        let trials = [
            trial(Verdict::Pass, Some((Some(10.0), Some(25.0)))),
            trial(Verdict::Fail, Some((Some(20.0), Some(35.0)))),
            trial(Verdict::Pass, Some((Some(30.0), None))),
            trial(Verdict::Pass, Some((Some(40.0), Some(45.0)))),
            trial(Verdict::Error, Some((Some(1.0), Some(1.0)))),
            trial(Verdict::Pass, None),
        ];
        let m = StreamMetrics::of(&trials).unwrap();
        assert_eq!(m.trials, 4);
        // Nearest rank (score::stats::percentile): of 10..40 the median is the 2nd
        // value, the 95th percentile the ceil(0.95 × 4) = 4th; of 25, 35, 45 the 2nd and
        // the ceil(0.95 × 3) = 3rd.
        assert_eq!(m.first_token.p50_ms, Some(20.0));
        assert_eq!(m.first_token.p95_ms, Some(40.0));
        assert_eq!(m.first_tool_byte.p50_ms, Some(35.0));
        assert_eq!(m.first_tool_byte.p95_ms, Some(45.0));
        assert_eq!(m.value("first_token_p50_ms"), Some(20.0));
        assert_eq!(m.value("first_tool_byte_p95_ms"), Some(45.0));
        assert_eq!(m.value("latency_p50_ms"), None);
    }

    #[test]
    fn sets_without_streamed_answers_have_no_timing() {
        assert_eq!(StreamMetrics::of(&[trial(Verdict::Pass, None)]), None);
        assert_eq!(StreamMetrics::of(&[]), None);
        // A streamed answer that made no output at all still counts as streamed.
        let m = StreamMetrics::of(&[trial(Verdict::Pass, Some((None, None)))]).unwrap();
        assert_eq!(m.trials, 1);
        assert_eq!(m.first_token, Latency::default());
    }
}
