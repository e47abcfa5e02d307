//! The `bfcl` profile's judge of a multi-turn case: a played episode in, BFCL's verdict
//! out.
//!
//! The episode's rounds are split into BFCL's turns (a round that follows a scripted
//! user turn starts a new one) and steps (one round each). Each round's calls are read
//! as BFCL's evaluation decodes them: a replayed BFCL result step is decoded from the
//! original (`raw`), a live model's calls from their JSON arguments. The calls then run
//! again, with the ground truth's, on fresh instances of the case's `bfcl` world
//! ([`super::multi_turn::check_calls`]), so the verdict never depends on what the host
//! answered during the episode. An episode that a limit stopped before the last user
//! turn has fewer turns than the ground truth: BFCL's `multi_turn:force_terminated`.

use serde_json::Value;

use super::decode::CallText;
use super::multi_turn::{ModelCall, Verdict, check_loaded};
use super::profile::decode_response;
use super::result_multi::{INFERENCE_ERROR_KEY, TURNS_RECORDED_KEY};
use super::value::{Decoded, PyValue};
use super::world::BfclWorld;
use crate::episode::EpisodeOutcome;
use crate::judge::calls::Reason;
use crate::judge::profile::CaseJudge;
use crate::provider::Response;
use crate::suite::Case;

/// The judge of one multi-turn case.
pub struct MultiTurnCase {
    /// The case's world (a `bfcl` one, checked when judging), shared with the case.
    world: Result<std::sync::Arc<dyn crate::suite::world::CompiledWorld>, String>,
    strict: bool,
}

impl MultiTurnCase {
    /// Prepare `case` (its `world: {bfcl: ...}` holds the item); `strict` as
    /// `--bfcl-strict` (it changes how prompt-mode text decodes).
    pub fn new(case: &Case, strict: bool) -> MultiTurnCase {
        let world = case
            .episode
            .as_ref()
            .and_then(|e| e.world.clone())
            .filter(|w| w.as_any().is::<BfclWorld>())
            .ok_or_else(|| {
                format!(
                    "case `{}` is in a BFCL multi-turn suite but has no `world: {{bfcl: ...}}` (import it with `toolgauge import bfcl`)",
                    case.id
                )
            });
        MultiTurnCase { world, strict }
    }

    /// BFCL's verdict on `outcome`.
    pub fn verdict(&self, outcome: &EpisodeOutcome) -> Result<Verdict, String> {
        let world = self.world.as_ref().map_err(Clone::clone)?;
        let Some(world) = world.as_any().downcast_ref::<BfclWorld>() else {
            return Err("the case's world is not a `bfcl` one".into());
        };
        let mut turns: Vec<Vec<Vec<ModelCall>>> = vec![Vec::new()];
        let mut recorded: Option<usize> = None;
        for (i, round) in outcome.rounds.iter().enumerate() {
            if i > 0 && round.user.is_some() {
                turns.push(Vec::new());
            }
            if let Some(raw) = &round.response.raw {
                if raw
                    .get(INFERENCE_ERROR_KEY)
                    .is_some_and(|v| v == &Value::Bool(true))
                {
                    return Ok(Verdict::fail(
                        "multi_turn:inference_error",
                        "Error during inference phase. Model did not output a list of model responses.".into(),
                        None,
                    ));
                }
                if let Some(n) = raw.get(TURNS_RECORDED_KEY).and_then(Value::as_u64) {
                    recorded.get_or_insert(n as usize);
                }
            }
            if let Some(last) = turns.last_mut() {
                last.push(step_calls(&round.response, self.strict));
            }
        }
        if let Some(n) = recorded {
            turns.truncate(n);
        }
        Ok(check_loaded(&world.loaded, &turns, &world.ground_truth))
    }
}

/// The calls of one round as BFCL's evaluation reads them; none when the answer does
/// not decode to calls (BFCL drops such a step).
fn step_calls(response: &Response, strict: bool) -> Vec<ModelCall> {
    match decode_response(response, strict) {
        Decoded::Calls(calls) => calls
            .into_iter()
            .map(|(name, args)| {
                let kwargs = match args {
                    PyValue::Dict(items) => items
                        .into_iter()
                        .map(|(k, v)| match k {
                            PyValue::Str(k) => Ok((k, v)),
                            other => Err(format!(
                                "keyword argument name {} of `{name}` is not a string",
                                super::pyfmt::py_repr(&other)
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    other => {
                        return Err(format!(
                            "the arguments of `{name}` are {}, not a mapping",
                            super::pyfmt::py_repr(&other)
                        ));
                    }
                };
                Ok(CallText {
                    name,
                    args: Vec::new(),
                    kwargs,
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// BFCL's verdict as reasons: none when valid, else one whose code is BFCL's error type
/// and whose message is BFCL's, with the first differing details.
pub fn reasons(v: &Verdict) -> Vec<Reason> {
    if v.valid {
        return Vec::new();
    }
    let code = v.error_type.as_deref().unwrap_or("multi_turn:invalid");
    let mut message = v.message.clone().unwrap_or_else(|| code.to_string());
    if !v.details.is_empty() {
        const SHOWN: usize = 3;
        let mut shown: Vec<String> = v.details.iter().take(SHOWN).map(|d| short(d)).collect();
        if v.details.len() > SHOWN {
            shown.push(format!("and {} more", v.details.len() - SHOWN));
        }
        let label = if code == "multi_turn:execution_response_mismatch" {
            "missing results"
        } else {
            "differences"
        };
        message = format!("{message} {label}: {}", shown.join("; "));
    }
    vec![Reason::new(code, message)]
}

/// `text` cut to 300 characters (a file system's state can be long).
fn short(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl CaseJudge for MultiTurnCase {
    /// A multi-turn case is judged on its whole episode, never on one response.
    fn reasons(&self, _response: &Response) -> Vec<Reason> {
        Vec::new()
    }

    fn episode_reasons(&self, outcome: &EpisodeOutcome) -> Option<Vec<Reason>> {
        Some(match self.verdict(outcome) {
            Ok(v) => reasons(&v),
            Err(why) => vec![Reason::new(
                "bfcl_profile",
                format!("the case can not be scored by the bfcl profile: {why}"),
            )],
        })
    }
}
