//! The trial data the page's script reads: every trial with its conversation embedded
//! once, and long texts cut (the journal keeps them whole).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use crate::judge::calls::{Reason, TrialChecks};
use crate::provider::{Message, Response};
use crate::report::{RunReport, format, loop_view};
use crate::score::Verdict;
use crate::score::record::EpisodeRecord;
use crate::suite::CaseKind;

/// Bytes of a response's text or of a call's raw arguments embedded in the page; the
/// rest is left out with a note (trials.jsonl keeps every byte).
pub(super) const MAX_EMBEDDED_BYTES: usize = 64 * 1024;

/// One trial as the script sees it: its conversation by index into `convs`, its cell by
/// index into `cells`.
#[derive(Serialize)]
struct TrialData<'a> {
    case_id: &'a str,
    kind: CaseKind,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tags: &'a [String],
    cell: usize,
    repeat: u32,
    conv: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<Cow<'a, Response>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Cow<'a, TrialChecks>>,
    verdict: Verdict,
    #[serde(skip_serializing_if = "no_reasons")]
    reasons: Cow<'a, [Reason]>,
    /// The trial's cost for people (see [`format::usd`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<String>,
    /// A loop trial's rounds, stop and judge facts; its `conv` is then the context the
    /// first round sent, and `response` is left out (it is the first round's).
    #[serde(skip_serializing_if = "Option::is_none")]
    episode: Option<Cow<'a, EpisodeRecord>>,
    /// The judge model's calls (verdicts and rationales); left out when none was made.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    judge: Cow<'a, [crate::judge::model::JudgeCall]>,
}

/// The trial data embedded in the page for its script: cell labels, the distinct
/// conversations, and every trial.
#[derive(Serialize)]
pub(super) struct Data<'a> {
    cells: Vec<String>,
    convs: Vec<&'a [Message]>,
    trials: Vec<TrialData<'a>>,
}

/// Whether a trial has no reasons (they are then left out of its data).
fn no_reasons(r: &[Reason]) -> bool {
    r.is_empty()
}

/// `s` when it fits [`MAX_EMBEDDED_BYTES`]; else its start and a note of the bytes left
/// out.
fn cut_long(s: &str) -> Option<String> {
    let (head, more) = format::cut_bytes(s, MAX_EMBEDDED_BYTES);
    (more > 0).then(|| format!("{head}\n… {more} more bytes, see trials.jsonl"))
}

/// Whether `s` is over [`MAX_EMBEDDED_BYTES`].
fn too_long(s: &str) -> bool {
    s.len() > MAX_EMBEDDED_BYTES
}

/// The response as embedded in the page: an answer or raw arguments above
/// [`MAX_EMBEDDED_BYTES`] are cut with a note (a 5 MB answer would make the page
/// unusable; the journal keeps it whole). Copied only when something is cut.
fn embedded_response(r: &Response) -> Cow<'_, Response> {
    let long_text = r.text.as_deref().is_some_and(too_long);
    if !long_text
        && !r.tool_calls.iter().any(|c| too_long(&c.arguments))
        && !r.warnings.iter().any(|w| too_long(w))
    {
        return Cow::Borrowed(r);
    }
    let mut r = r.clone();
    if let Some(t) = &mut r.text
        && let Some(cut) = cut_long(t)
    {
        *t = cut;
    }
    for c in &mut r.tool_calls {
        if let Some(cut) = cut_long(&c.arguments) {
            c.arguments = cut;
        }
    }
    // A warning quotes what the server sent, which a hand-edited journal can make huge.
    for w in &mut r.warnings {
        if let Some(cut) = cut_long(w) {
            *w = cut;
        }
    }
    Cow::Owned(r)
}

/// The checks as embedded: schema errors and ungrounded values quote the arguments, so
/// they are cut like them.
fn embedded_checks(c: &TrialChecks) -> Cow<'_, TrialChecks> {
    let long = c.calls.iter().any(|x| {
        x.schema_errors
            .iter()
            .chain(&x.ungrounded)
            .any(|s| too_long(s))
    });
    // The judge's rationale for the observed behaviour can be as long as it likes.
    let long_why = c
        .behaviour
        .as_ref()
        .and_then(|b| b.why.as_deref())
        .is_some_and(too_long);
    if !long && !long_why {
        return Cow::Borrowed(c);
    }
    let mut c = c.clone();
    if let Some(why) = c.behaviour.as_mut().and_then(|b| b.why.as_mut())
        && let Some(cut) = cut_long(why)
    {
        *why = cut;
    }
    for x in &mut c.calls {
        for s in x.schema_errors.iter_mut().chain(x.ungrounded.iter_mut()) {
            if let Some(cut) = cut_long(s) {
                *s = cut;
            }
        }
    }
    Cow::Owned(c)
}

/// The reasons as embedded: a message may quote a whole argument.
fn embedded_reasons(reasons: &[Reason]) -> Cow<'_, [Reason]> {
    if !reasons.iter().any(|r| too_long(&r.message)) {
        return Cow::Borrowed(reasons);
    }
    Cow::Owned(
        reasons
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if let Some(cut) = cut_long(&r.message) {
                    r.message = cut;
                }
                r
            })
            .collect(),
    )
}

impl<'a> Data<'a> {
    /// The data of `report`'s trials, trial `i` in cell `cell_index[i]` of `cells`.
    pub(super) fn build(
        report: &'a RunReport,
        cell_index: &[usize],
        cells: Vec<String>,
    ) -> Data<'a> {
        let mut convs: Vec<&'a [Message]> = Vec::new();
        // Keyed by the conversation's JSON: equal conversations are embedded once.
        let mut seen: HashMap<String, usize> = HashMap::new();
        let trials = report
            .trials
            .iter()
            .zip(cell_index)
            .map(|(t, &cell)| {
                // A loop trial's rounds carry every message after the context, so only
                // the context is embedded (shared by the trials of the case).
                let messages = match &t.episode {
                    Some(e) => {
                        let context = e.rounds.first().map_or(t.messages.len(), |r| r.sent);
                        &t.messages[..context.min(t.messages.len())]
                    }
                    None => &t.messages[..],
                };
                let key = serde_json::to_string(messages).unwrap_or_default();
                let conv = *seen.entry(key).or_insert_with(|| {
                    convs.push(messages);
                    convs.len() - 1
                });
                TrialData {
                    case_id: &t.case_id,
                    kind: t.kind,
                    tags: &t.tags,
                    cell,
                    repeat: t.repeat,
                    conv,
                    response: t
                        .response
                        .as_ref()
                        .filter(|_| !t.is_loop())
                        .map(embedded_response),
                    checks: t.checks.as_ref().map(embedded_checks),
                    verdict: t.verdict,
                    reasons: embedded_reasons(&t.reasons),
                    cost: t.cost_usd.map(format::usd),
                    episode: t
                        .episode
                        .as_ref()
                        .map(|e| loop_view::embedded_episode(e, too_long, cut_long)),
                    judge: crate::report::behaviour_view::embedded_judge(
                        &t.judge, too_long, cut_long,
                    ),
                }
            })
            .collect();
        Data {
            cells,
            convs,
            trials,
        }
    }
}
