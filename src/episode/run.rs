//! The loop itself: request, answer, calls, results, until an answer or a limit.

use std::sync::Arc;
use std::time::Instant;

use super::limits::check_turn;
use super::{EpisodeError, EpisodeOutcome, RoundRecord};
use crate::chat::{Message, ToolChoice, ToolResult};
use crate::provider::{Provider, Request, TrialKey};
use crate::suite::loops::EpisodeSpec;
use crate::suite::trajectory::StopReason;
use crate::tools::{Session, ToolHost, run_turn};

/// Play one episode of the case whose loop spec is `spec`, starting from `first` (the
/// case's messages, tools and tool_choice), for the trial `key`.
///
/// Each round sends the conversation to `provider`, assigns ids to calls that came
/// without one (by the request's round, [`Request::round`]), appends the assistant turn
/// and, when it made calls, has `host` answer them ([`run_turn`]) and appends one tool
/// result per call, in call order. A turn without calls takes the next scripted user
/// turn (`spec.turns`), or ends the episode as answered when none is left; tools the
/// case withholds (`spec.withheld`) are offered from their turn on. Limits are checked
/// before a turn's calls are executed ([`super::limits`]), except the per-turn round
/// limit, checked after (the round that goes over is answered, then the loop stops). The trial's
/// tool_choice is sent on the first request; a forcing one (`required`, a named
/// function) becomes `auto` for the rounds after it. A provider or host
/// failure ends the episode with an [`EpisodeError`], keeping the rounds before it.
pub async fn run_episode(
    provider: &dyn Provider,
    host: &dyn ToolHost,
    spec: Arc<EpisodeSpec>,
    first: Request,
    key: &TrialKey,
) -> EpisodeOutcome {
    run_episode_observed(provider, host, spec, first, key, |_| {}).await
}

/// [`run_episode`], calling `on_round` with each round's record as soon as the round
/// is finished (its answer came and its calls were answered, or a limit stopped them):
/// what a run's progress and events are told while the episode goes on.
pub async fn run_episode_observed(
    provider: &dyn Provider,
    host: &dyn ToolHost,
    spec: Arc<EpisodeSpec>,
    first: Request,
    key: &TrialKey,
    mut on_round: impl FnMut(&RoundRecord),
) -> EpisodeOutcome {
    let context = first.messages.len();
    // Assistant turns the case's own messages hold: a round's answer belongs to round
    // `earlier + rounds so far` (what `Request::round` counts), found without rescanning
    // the growing conversation every round.
    let earlier = first.round();
    let mut request = first;
    let mut session = Session::new(spec.clone());
    // What the host needs for this episode (a server connection, a fresh server per
    // trial); if it cannot be had, no round is played and the trial is an error.
    if let Err(source) = host.open_episode(&mut session).await {
        host.close_episode(&mut session).await;
        return EpisodeOutcome {
            messages: request.messages,
            context,
            rounds: Vec::new(),
            end: Err(EpisodeError::Host { round: 1, source }),
            end_state: Vec::new(),
        };
    }
    let mut turns = spec.turns.iter();
    // Tools kept from the model until their turn (`withheld`), with that turn.
    let mut held = withhold(&mut request, &spec.withheld);
    let mut turn_number = 0usize;
    // Rounds with calls since the last user turn (`limits.max_rounds_per_turn`).
    let mut turn_rounds = 0u32;
    let mut rounds: Vec<RoundRecord> = Vec::new();
    let mut user: Option<String> = None;
    let end = loop {
        let number = rounds.len() + 1;
        let mut response = match provider.complete(&request, key).await {
            Ok(r) => r,
            Err(source) => {
                break Err(EpisodeError::Provider {
                    round: number,
                    source,
                });
            }
        };
        let sent = request.messages.len();
        // A forcing mode (`required`, a named function) applies to the first request
        // only: forced on every round, the model could never answer.
        if matches!(
            request.tool_choice,
            ToolChoice::Required | ToolChoice::Function(_)
        ) {
            request.tool_choice = ToolChoice::Auto;
        }
        response.assign_missing_ids(earlier + rounds.len());
        rename_reused_ids(
            &mut response,
            earlier + rounds.len(),
            &request.messages,
            &rounds,
        );
        request.messages.push(response.to_message());
        let mut record = RoundRecord {
            sent,
            user: user.take(),
            response,
            outcomes: Vec::new(),
            tool_ms: 0.0,
        };
        let calls = &record.response.tool_calls;
        if calls.is_empty() {
            let next = turns.next();
            on_round(&record);
            rounds.push(record);
            match next {
                None => break Ok(StopReason::Answered),
                Some(_) if number >= spec.limits.max_rounds as usize => {
                    break Ok(StopReason::MaxRounds);
                }
                Some(turn) => {
                    turn_number += 1;
                    turn_rounds = 0;
                    offer(&mut request, &mut held, turn_number);
                    request.messages.push(Message::User {
                        content: turn.clone(),
                    });
                    user = Some(turn.clone());
                    continue;
                }
            }
        }
        if let Some(stop) = check_turn(&spec.limits, session.counters(), number, calls) {
            on_round(&record);
            rounds.push(record);
            break Ok(stop);
        }
        let started = Instant::now();
        let answered = run_turn(host, &mut session, calls).await;
        record.tool_ms = started.elapsed().as_secs_f64() * 1000.0;
        match answered {
            Ok(outcomes) => {
                for (call, out) in record.response.tool_calls.iter().zip(&outcomes) {
                    request.messages.push(Message::from(ToolResult {
                        call_id: call.id.clone().unwrap_or_default(),
                        name: call.name.clone(),
                        content: out.content.clone(),
                        is_error: out.is_error,
                    }));
                }
                warn_large_results(&mut record.response, number, &outcomes);
                record.outcomes = outcomes;
                on_round(&record);
                rounds.push(record);
                // The round that goes over a turn's limit is answered, then the episode
                // stops (BFCL's step limit works this way).
                turn_rounds += 1;
                if spec
                    .limits
                    .max_rounds_per_turn
                    .is_some_and(|max| turn_rounds > max)
                {
                    break Ok(StopReason::MaxRounds);
                }
            }
            Err(source) => {
                on_round(&record);
                rounds.push(record);
                break Err(EpisodeError::Host {
                    round: number,
                    source,
                });
            }
        }
    };
    // The world as the episode left it, read on its own session before it closes. An
    // episode a failure ended has no verdict, so nothing to check.
    let end_state = if end.is_ok() {
        end_state(host, &session, &spec).await
    } else {
        Vec::new()
    };
    host.close_episode(&mut session).await;
    EpisodeOutcome {
        messages: request.messages,
        context,
        rounds,
        end,
        end_state,
    }
}

/// Take the `withheld` tools out of `request`'s tools: each with the turn it is offered
/// from, in the order the request listed them.
fn withhold(
    request: &mut Request,
    withheld: &[(String, usize)],
) -> Vec<(usize, crate::chat::ToolDefinition)> {
    if withheld.is_empty() {
        return Vec::new();
    }
    let mut held = Vec::new();
    let mut kept = Vec::with_capacity(request.tools.len());
    for t in request.tools.iter() {
        match withheld.iter().find(|(name, _)| *name == t.name) {
            Some((_, turn)) => held.push((*turn, t.clone())),
            None => kept.push(t.clone()),
        }
    }
    request.tools = Arc::new(kept);
    held
}

/// Offer the tools withheld until user turn `turn` from now on, after the others (as
/// BFCL adds a held-out function's doc at the end of the list).
fn offer(request: &mut Request, held: &mut Vec<(usize, crate::chat::ToolDefinition)>, turn: usize) {
    if !held.iter().any(|(t, _)| *t == turn) {
        return;
    }
    let mut tools = request.tools.as_ref().clone();
    held.retain(|(t, def)| {
        if *t == turn {
            tools.push(def.clone());
            false
        } else {
            true
        }
    });
    request.tools = Arc::new(tools);
}

/// Give each call of `response` whose id an earlier turn of the conversation (`sent`:
/// the case's messages and the rounds so far, `rounds`) already used an id of its own
/// ([`crate::provider::Response::rename_reused_ids`], `round` as
/// [`Request::round`] counts), and say so in the answer's warnings: a model that reuses
/// `c1` in round 2 would have its results sent back under an id two calls share, which
/// real APIs pair with the wrong call or refuse.
fn rename_reused_ids(
    response: &mut crate::provider::Response,
    round: usize,
    sent: &[Message],
    rounds: &[RoundRecord],
) {
    let used: Vec<&str> = sent
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().filter_map(|c| c.id.as_deref()).collect()
            }
            Message::Tool { tool_call_id, .. } => vec![tool_call_id.as_str()],
            _ => Vec::new(),
        })
        .collect();
    for (i, old) in response.rename_reused_ids(round, &used) {
        let first = rounds
            .iter()
            .position(|r| {
                r.response
                    .tool_calls
                    .iter()
                    .any(|c| c.id.as_deref() == Some(old.as_str()))
            })
            .map_or_else(
                || "in the case's messages".to_string(),
                |r| format!("in round {}", r + 1),
            );
        let new = response.tool_calls[i].id.clone().unwrap_or_default();
        response.warnings.push(format!(
            "round {}: call id `{}` was already used {first}; call {} (`{}`) was given the id `{}` so that its result is not paired with the earlier call",
            rounds.len() + 1,
            short(&old),
            i + 1,
            short(&response.tool_calls[i].name),
            short(&new),
        ));
    }
}

/// A tool result above this many characters draws a warning (on the answer whose call
/// it answers, by `warn_large_results`). 100,000 characters is about 25,000 tokens at the
/// usual 3 to 4 characters a token: a fifth of a 128k-token context window for one
/// result, which every later round of the episode sends again. Real agent harnesses cut
/// or page results long before that, so a result this large almost always means a mock
/// or a server that returns a whole document where a harness would not, and the trial's
/// tokens, cost and latency measure that rather than the model.
pub const LARGE_RESULT_CHARS: usize = 100_000;

/// Say in `response`'s warnings which of its calls (answered by `outcomes`, in call
/// order) got a result longer than [`LARGE_RESULT_CHARS`]: the result is sent to the
/// model as is, uncut, so the run should show that it did.
fn warn_large_results(
    response: &mut crate::provider::Response,
    round: usize,
    outcomes: &[crate::tools::ToolOutcome],
) {
    for (i, out) in outcomes.iter().enumerate() {
        // Bytes bound characters from above: count characters only when it can matter.
        if out.content.len() <= LARGE_RESULT_CHARS {
            continue;
        }
        let chars = out.content.chars().count();
        if chars <= LARGE_RESULT_CHARS {
            continue;
        }
        let name = response.tool_calls.get(i).map_or("", |c| c.name.as_str());
        response.warnings.push(format!(
            "round {round}: the result of call {} (`{}`) is {chars} characters, over {LARGE_RESULT_CHARS}: it was sent to the model as is, uncut, in this and every later request",
            i + 1,
            short(name),
        ));
    }
}

/// `text` cut to 80 characters: a warning quotes ids and names the server chose, which
/// the record keeps whole elsewhere.
fn short(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Make `spec`'s `end_state` calls on `session`, in order. They bypass the host's
/// preparation: no fault rule, approval or call limit applies to the suite's own
/// checks, and they count in no call statistic.
async fn end_state(
    host: &dyn ToolHost,
    session: &Session,
    spec: &EpisodeSpec,
) -> Vec<super::view::EndStateResult> {
    let mut out = Vec::with_capacity(spec.end_state.len());
    for call in &spec.end_state {
        let invocation = crate::tools::Invocation {
            seq: 0,
            tool_seq: 0,
            repeat: 0,
            name: call.tool.clone(),
            arguments: call.args.clone(),
        };
        let mut r = super::view::EndStateResult {
            tool: call.tool.clone(),
            args: call.args.clone(),
            ..Default::default()
        };
        if call.state {
            r.state = true;
            match host.world_state(session) {
                Some(state) => r.content = Some(state.to_string()),
                None => r.failure = Some("the tool host has no built-in world to read".into()),
            }
            out.push(r);
            continue;
        }
        match host.execute_in(session, &invocation).await {
            Ok(o) => {
                r.content = Some(o.content);
                r.is_error = o.is_error;
            }
            Err(e) => r.failure = Some(e.to_string()),
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;
    use crate::provider::Response;
    use crate::tools::ToolOutcome;

    fn outcome(content: String) -> ToolOutcome {
        let mut o = ToolOutcome::result(&serde_json::Value::Null);
        o.content = content;
        o
    }

    fn answer(names: &[&str]) -> Response {
        Response {
            tool_calls: names
                .iter()
                .map(|n| ToolCall {
                    id: None,
                    name: n.to_string(),
                    arguments: "{}".into(),
                })
                .collect(),
            ..Response::default()
        }
    }

    #[test]
    fn a_result_over_the_limit_in_characters_is_warned_about_by_its_call() {
        let mut response = answer(&["small", "wide", "big"]);
        let outcomes = [
            outcome("x".repeat(10)),
            // Three bytes a character: over the limit in bytes, at it in characters.
            outcome("中".repeat(LARGE_RESULT_CHARS)),
            outcome("y".repeat(LARGE_RESULT_CHARS + 1)),
        ];
        warn_large_results(&mut response, 2, &outcomes);
        assert_eq!(
            response.warnings,
            [
                "round 2: the result of call 3 (`big`) is 100001 characters, over 100000: it was sent to the model as is, uncut, in this and every later request"
            ]
        );
    }
}
