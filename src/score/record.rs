//! The record of one trial, as written to `trials.jsonl` and read back by reports.

use serde::{Deserialize, Serialize};

use crate::episode::RoundRecord;
use crate::judge::EpisodeChecks;
use crate::judge::{Reason, TrialChecks};
use crate::provider::{Message, Response, ToolChoice, Usage};
use crate::suite::CaseKind;
use crate::suite::trajectory::StopReason;

/// The identity of a trial within a run: what the journal, `--resume`, `merge` and the
/// shard split key trials by. The target carries ` × stream` for a streamed trial (see
/// [`crate::score::stream::identity_target`]) and the variant a distractor count (see
/// [`crate::score::distractors::identity_variant`]), so trials that differ only in those
/// stay apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrialId {
    /// Case id.
    pub case_id: String,
    /// Target as written, with the stream mode joined when streamed.
    pub target: String,
    /// Description variant, with the distractor count joined when there is one.
    pub variant: String,
    /// tool_choice mode, as written.
    pub tool_choice: String,
    /// Repeat index, from 0.
    pub repeat: u32,
}

impl TrialId {
    /// The identity of `record`.
    pub fn of(record: &TrialRecord) -> TrialId {
        TrialId {
            case_id: record.case_id.clone(),
            target: crate::score::stream::identity_target(&record.target, record.stream)
                .into_owned(),
            variant: crate::score::distractors::identity_variant(
                &record.variant,
                crate::score::distractors::record_n(record),
            )
            .into_owned(),
            tool_choice: record.tool_choice.to_string(),
            repeat: record.repeat,
        }
    }

    /// The shard (1-based) of this trial among `count` shards: the first eight bytes of
    /// the SHA-256 of the JSON array `[target, variant, tool_choice, case_id, repeat]` as
    /// a big-endian integer, modulo `count`, plus one. Stable across runs, machines and
    /// toolgauge versions; a change would scatter every sharded CI job. A `count` of 0 is
    /// read as 1.
    pub fn shard(&self, count: u32) -> u32 {
        use sha2::{Digest, Sha256};
        // A JSON array keeps the fields apart whatever characters they hold.
        let identity = serde_json::json!([
            self.target,
            self.variant,
            self.tool_choice,
            self.case_id,
            self.repeat
        ])
        .to_string();
        let digest = Sha256::digest(identity.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(first) % u64::from(count.max(1))) as u32 + 1
    }
}

impl std::fmt::Display for TrialId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case `{}` in cell {} × {} × {} (repeat {})",
            self.case_id, self.target, self.variant, self.tool_choice, self.repeat
        )
    }
}

/// The outcome of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Scored, and the expectation held.
    Pass,
    /// Scored, and it did not.
    Fail,
    /// Not scored: the provider gave no response (the reason says why).
    Error,
}

/// One trial: the cell, what was asked, what came back, the checks and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Case id.
    pub case_id: String,
    /// The kind in force under this trial's tool_choice.
    pub kind: CaseKind,
    /// The case's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Target as written.
    pub target: String,
    /// Description variant.
    pub variant: String,
    /// tool_choice mode.
    pub tool_choice: ToolChoice,
    /// Repeat index, from 0.
    pub repeat: u32,
    /// The answer was asked for as a stream (`--stream`); absent when not, so lines of
    /// runs without streaming are as before the axis existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// The conversation sent (the tools are those of `variant`, listed in `run.json`).
    /// For a loop trial, the whole conversation: every round's request is a prefix of
    /// it ([`RoundRecord::sent`]), and it ends with the last answer and its results.
    pub messages: Vec<Message>,
    /// The response, unless the trial errored. For a loop trial, the first round's
    /// (the one `expect.calls` is scored on); every round is in `episode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Response>,
    /// The checks, when scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<TrialChecks>,
    /// Pass, fail or error.
    pub verdict: Verdict,
    /// Why it failed or errored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// Cost in USD from the price table, when the model has a price (every round's
    /// tokens, for a loop trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The tool-count facts of a trial of a suite with `distractors:` (its count,
    /// tool-definition tokens, selection and false calls). Absent otherwise, so lines of
    /// other suites are as before the axis existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractors: Option<super::distractors::DistractorFacts>,
    /// The episode of a loop trial (a case with mocks): every round and how it ended.
    /// Absent for single-turn trials, whose lines are as before loops existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode: Option<EpisodeRecord>,
    /// The judge model's calls for this trial (behaviour and rubric verdicts), in order.
    /// Absent when no judge was asked, so lines of runs without one are as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<crate::judge::model::JudgeCall>,
}

/// What a loop trial adds to its record: every round, why the loop stopped, and the
/// facts its verdict rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRecord {
    /// Every round that got an answer, in order (the first is also the record's
    /// `response`).
    pub rounds: Vec<RoundRecord>,
    /// Why the loop stopped; absent when an infrastructure failure ended it (the
    /// record is then an error, and its reason says which round failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopReason>,
    /// The judge's facts (rounds, calls, trajectory, errors and recovery, duplicate
    /// side effects, grounding); absent when the episode was not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<EpisodeChecks>,
    /// The `expect.end_state` calls made after the episode and what they returned;
    /// absent when the case has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end_state: Vec<crate::episode::view::EndStateResult>,
}

impl EpisodeRecord {
    /// Tool calls answered in the episode (executed, denied or refused).
    pub fn tool_calls(&self) -> usize {
        self.rounds.iter().map(|r| r.outcomes.len()).sum()
    }

    /// Time spent waiting for the model and for the tools, in milliseconds.
    pub fn times_ms(&self) -> (f64, f64) {
        self.rounds.iter().fold((0.0, 0.0), |(m, t), r| {
            (m + r.response.latency_ms, t + r.tool_ms)
        })
    }
}

impl TrialRecord {
    /// True when the trial passed.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// True for a loop trial (one with an episode).
    pub fn is_loop(&self) -> bool {
        self.episode.is_some()
    }

    /// The tokens of the whole trial: every round's for a loop trial, else the
    /// response's. `None` when no round reported (or estimated) usage.
    pub fn usage(&self) -> Option<Usage> {
        match &self.episode {
            Some(e) => e
                .rounds
                .iter()
                .filter_map(|r| r.response.usage)
                .reduce(Usage::plus),
            None => self.response.as_ref().and_then(|r| r.usage),
        }
    }

    /// The time the trial waited for the model in milliseconds: every round's for a
    /// loop trial. `None` when there was no response.
    pub fn latency_ms(&self) -> Option<f64> {
        match &self.episode {
            Some(e) if !e.rounds.is_empty() => Some(e.times_ms().0),
            _ => self.response.as_ref().map(|r| r.latency_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(target: &str, variant: &str, tool_choice: &str, case_id: &str, repeat: u32) -> TrialId {
        TrialId {
            case_id: case_id.into(),
            target: target.into(),
            variant: variant.into(),
            tool_choice: tool_choice.into(),
            repeat,
        }
    }

    #[test]
    fn a_trial_shard_is_a_pinned_function_of_its_identity() {
        // Pinned (a change would move trials between the shards of jobs already run):
        // `printf %s '["openai:gpt-4o-mini","vague","auto","tokyo-now",0]' | sha256sum`
        // starts 847cca5f19afb358 = 9546727819920257880, which is 0 mod 3 and 4 mod 7.
        assert_eq!(
            id("openai:gpt-4o-mini", "vague", "auto", "tokyo-now", 0).shard(3),
            1
        );
        assert_eq!(
            id("openai:gpt-4o-mini", "vague", "auto", "tokyo-now", 0).shard(7),
            5
        );
        for n in 1..=5 {
            let k = id("t", "v", "auto", "c", 1).shard(n);
            assert!((1..=n).contains(&k));
        }
        assert_eq!(id("t", "v", "auto", "c", 1).shard(1), 1);
    }
}
