//! The tool-loop views of `report.html`, present only when a run has loop trials (records
//! with an `episode`): how each cell's episodes stopped, the mean input tokens of each
//! round (how the conversation grows from round to round) drawn as an inline SVG chart,
//! and the episode of each loop trial as embedded for the page's round-by-round
//! transcript (with, for calls executed on an MCP server, the call's exchanges with the
//! server and why a call was refused).
//!
//! The two aggregates are computed here from the trial records, so the page does not
//! depend on the shared loop metrics; they count the same things.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;

use super::html::esc;
use crate::episode::RoundRecord;
use crate::score::TrialRecord;
use crate::score::record::EpisodeRecord;
use crate::suite::trajectory::StopReason;

/// How the loop trials of a group of trials stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(super) struct StopCounts {
    /// Loop trials counted (the sum of the columns below).
    pub trials: u64,
    /// The model answered in text after the last scripted user turn.
    pub answered: u64,
    /// `max_rounds` stopped the loop.
    pub max_rounds: u64,
    /// `max_tool_calls` stopped the loop.
    pub max_tool_calls: u64,
    /// `max_identical_calls` stopped the loop (`repeated_call`).
    pub repeated_call: u64,
    /// An infrastructure failure (provider or tool host) ended the episode: no stop
    /// reason was recorded.
    pub error: u64,
}

/// Count how the loop trials among `trials` stopped; single-turn trials are skipped.
pub(super) fn stop_counts<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> StopCounts {
    let mut c = StopCounts::default();
    for e in trials.into_iter().filter_map(|t| t.episode.as_ref()) {
        c.trials += 1;
        *match e.stop {
            Some(StopReason::Answered) => &mut c.answered,
            Some(StopReason::MaxRounds) => &mut c.max_rounds,
            Some(StopReason::MaxToolCalls) => &mut c.max_tool_calls,
            Some(StopReason::RepeatedCall) => &mut c.repeated_call,
            None => &mut c.error,
        } += 1;
    }
    c
}

/// The mean input tokens of one round index over the trials that reached it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct RoundTokens {
    /// 1-based round index.
    pub round: usize,
    /// Mean input tokens of that round.
    pub mean: f64,
    /// Trials that reached the round with a usage (reported or estimated).
    pub trials: u64,
    /// How many of those usages were estimated offline.
    pub estimated: u64,
}

/// Mean input tokens at round 1, 2, 3, … over the loop trials among `trials` (each round
/// index over the trials that reached it and have a usage for it). A round index no
/// trial has a usage for is left out.
pub(super) fn tokens_per_round<'a>(
    trials: impl IntoIterator<Item = &'a TrialRecord>,
) -> Vec<RoundTokens> {
    // Per round index: (sum of input tokens, trials, estimated).
    let mut sums: Vec<(u128, u64, u64)> = Vec::new();
    for e in trials.into_iter().filter_map(|t| t.episode.as_ref()) {
        if sums.len() < e.rounds.len() {
            sums.resize(e.rounds.len(), (0, 0, 0));
        }
        for (i, r) in e.rounds.iter().enumerate() {
            if let Some(u) = r.response.usage {
                sums[i].0 += u128::from(u.input_tokens);
                sums[i].1 += 1;
                sums[i].2 += u64::from(u.estimated);
            }
        }
    }
    sums.into_iter()
        .enumerate()
        .filter(|(_, s)| s.1 > 0)
        .map(|(i, (sum, n, estimated))| RoundTokens {
            round: i + 1,
            mean: sum as f64 / n as f64,
            trials: n,
            estimated,
        })
        .collect()
}

/// A round axis step (1, 2 or 5 times a power of ten) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.max(1.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// The "tokens per round" chart of one cell: mean input tokens (y, from 0) against the
/// round index (x), one point per round index in `points`, joined by a line. Built from
/// numbers and the `esc`aped `label` only.
pub(super) fn tokens_chart(label: &str, points: &[RoundTokens]) -> String {
    let (w, h) = (380.0, 190.0);
    let (ml, mr, mt, mb) = (58.0, 14.0, 12.0, 40.0);
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let last = points.last().map_or(1, |p| p.round).max(1);
    let top = points.iter().map(|p| p.mean).fold(0.0, f64::max).max(1.0);
    let step = nice_step(top / 4.0);
    let y_max = (top / step).ceil() * step;
    let x = |round: usize| {
        if last == 1 {
            ml + pw / 2.0
        } else {
            ml + (round - 1) as f64 / (last - 1) as f64 * pw
        }
    };
    let y = |v: f64| mt + (1.0 - v / y_max) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart tokens" role="img" aria-label="Mean input tokens per round: {}" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}">"#,
        esc(label)
    );
    let _ = write!(
        s,
        "<title>Mean input tokens per round: {}</title>",
        esc(label)
    );
    let mut t = 0.0;
    while t <= y_max + step / 2.0 {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{ml:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{t:.0}</text>"#,
            ml + pw,
            ml - 6.0,
            y(t) + 4.0,
            yy = y(t)
        );
        t += step;
    }
    // At most about ten labelled rounds on the axis, whatever the number of rounds.
    let every = last.div_ceil(10);
    for p in points.iter().filter(|p| (p.round - 1) % every == 0) {
        let _ = write!(
            s,
            r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(p.round),
            mt + ph + 15.0,
            p.round
        );
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">round</text><text class="axis" transform="translate(12 {:.1}) rotate(-90)" text-anchor="middle">input tokens</text>"#,
        ml + pw / 2.0,
        h - 6.0,
        mt + ph / 2.0
    );
    if points.len() > 1 {
        let line: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.round), y(p.mean)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="series" points="{}"/>"#,
            line.join(" ")
        );
    }
    for p in points {
        let estimated = if p.estimated > 0 {
            format!(", {} estimated", p.estimated)
        } else {
            String::new()
        };
        let _ = write!(
            s,
            r#"<g class="pt" data-round="{}"><title>round {}: {:.0} input tokens on average over {} trial(s){estimated}</title><circle cx="{:.1}" cy="{:.1}" r="3.5"/></g>"#,
            p.round,
            p.round,
            p.mean,
            p.trials,
            x(p.round),
            y(p.mean)
        );
    }
    s.push_str("</svg>");
    s
}

/// The episode as embedded in the page: texts, arguments, warnings, scripted user
/// turns and tool results longer than `max` bytes are cut by `cut` (which adds the
/// note). Borrowed when nothing is that long.
pub(super) fn embedded_episode<'a>(
    e: &'a EpisodeRecord,
    too_long: impl Fn(&str) -> bool,
    cut: impl Fn(&str) -> Option<String>,
) -> Cow<'a, EpisodeRecord> {
    let long_round = |r: &RoundRecord| {
        r.user.as_deref().is_some_and(&too_long)
            || r.response.text.as_deref().is_some_and(&too_long)
            || r.response.tool_calls.iter().any(|c| too_long(&c.arguments))
            || r.response.warnings.iter().any(|w| too_long(w))
            || r.outcomes.iter().any(|o| too_long(&o.content))
            || r.outcomes.iter().any(|o| mcp_texts(o).any(&too_long))
    };
    if !e.rounds.iter().any(long_round) {
        return Cow::Borrowed(e);
    }
    let mut e = e.clone();
    for r in &mut e.rounds {
        let texts = r
            .user
            .iter_mut()
            .chain(r.response.text.iter_mut())
            .chain(r.response.tool_calls.iter_mut().map(|c| &mut c.arguments))
            .chain(r.response.warnings.iter_mut())
            .chain(r.outcomes.iter_mut().map(|o| &mut o.content));
        for t in texts {
            if let Some(short) = cut(t) {
                *t = short;
            }
        }
        // An MCP call's transcript: each exchange cut on its own, as the content is.
        let exchanges = r
            .outcomes
            .iter_mut()
            .filter_map(|o| o.mcp.as_mut())
            .flat_map(|m| m.exchanges.iter_mut().map(|x| &mut x.text));
        for t in exchanges {
            if let Some(short) = cut(t) {
                *t = short;
            }
        }
    }
    Cow::Owned(e)
}

/// The texts of an MCP call's transcript (none for other hosts' outcomes).
fn mcp_texts(o: &crate::tools::ToolOutcome) -> impl Iterator<Item = &str> {
    o.mcp
        .iter()
        .flat_map(|m| m.exchanges.iter().map(|x| x.text.as_str()))
}

/// The loop row of the trial table: rounds played, tool calls answered and how it
/// stopped (`error` when an infrastructure failure ended it); `None` for a single-turn
/// trial.
pub(super) fn trial_summary(t: &TrialRecord) -> Option<(usize, usize, &'static str)> {
    let e = t.episode.as_ref()?;
    let calls = e.rounds.iter().map(|r| r.response.tool_calls.len()).sum();
    Some((
        e.rounds.len(),
        calls,
        e.stop.map_or("error", StopReason::as_str),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, Response, ToolCall, ToolChoice, Usage};
    use crate::score::Verdict;
    use crate::suite::CaseKind;
    use crate::tools::ToolOutcome;

    fn round(input: u64, estimated: bool, calls: usize, executed: bool) -> RoundRecord {
        let tool_calls: Vec<ToolCall> = (0..calls)
            .map(|i| ToolCall {
                id: Some(format!("call_{i}")),
                name: "ping".into(),
                arguments: "{}".into(),
            })
            .collect();
        RoundRecord {
            sent: 1,
            user: None,
            response: Response {
                tool_calls,
                usage: Some(Usage {
                    input_tokens: input,
                    output_tokens: 5,
                    estimated,
                    ..Default::default()
                }),
                ..Response::default()
            },
            outcomes: if executed {
                (0..calls)
                    .map(|_| ToolOutcome::result(&serde_json::json!("pong")))
                    .collect()
            } else {
                Vec::new()
            },
            tool_ms: 0.0,
        }
    }

    fn looped(rounds: Vec<RoundRecord>, stop: Option<StopReason>) -> TrialRecord {
        TrialRecord {
            judge: Vec::new(),
            case_id: "c".into(),
            kind: CaseKind::ShouldCall,
            tags: Vec::new(),
            target: "t".into(),
            variant: "v".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
            stream: false,
            messages: vec![Message::User {
                content: "ping".into(),
            }],
            response: None,
            checks: None,
            verdict: if stop.is_some() {
                Verdict::Pass
            } else {
                Verdict::Error
            },
            reasons: Vec::new(),
            cost_usd: None,
            distractors: None,
            episode: Some(EpisodeRecord {
                end_state: Vec::new(),
                rounds,
                stop,
                checks: None,
            }),
        }
    }

    fn single() -> TrialRecord {
        TrialRecord {
            distractors: None,
            episode: None,
            ..looped(Vec::new(), None)
        }
    }

    #[test]
    fn stops_are_counted_per_reason_and_single_turn_trials_are_skipped() {
        use StopReason::*;
        let trials = vec![
            looped(vec![round(10, false, 0, false)], Some(Answered)),
            looped(vec![round(10, false, 0, false)], Some(Answered)),
            looped(vec![round(10, false, 1, false)], Some(MaxRounds)),
            looped(vec![round(10, false, 2, false)], Some(MaxToolCalls)),
            looped(vec![round(10, false, 1, true)], Some(RepeatedCall)),
            looped(Vec::new(), None),
            single(),
        ];
        assert_eq!(
            stop_counts(&trials),
            StopCounts {
                trials: 6,
                answered: 2,
                max_rounds: 1,
                max_tool_calls: 1,
                repeated_call: 1,
                error: 1,
            }
        );
        assert_eq!(stop_counts(&trials[6..]), StopCounts::default());
    }

    #[test]
    fn tokens_per_round_averages_each_round_over_the_trials_that_reached_it() {
        // Trial A: 100, 250, 400 tokens; trial B: 120, 290; a single-turn trial is
        // ignored; trial C's round 1 has no usage (left out of round 1 only).
        let mut c = looped(
            vec![round(0, false, 1, true), round(330, true, 0, false)],
            Some(StopReason::Answered),
        );
        c.episode.as_mut().unwrap().rounds[0].response.usage = None;
        let trials = vec![
            looped(
                vec![
                    round(100, false, 1, true),
                    round(250, false, 1, true),
                    round(400, false, 1, false),
                ],
                Some(StopReason::MaxRounds),
            ),
            looped(
                vec![round(120, false, 1, true), round(290, false, 0, false)],
                Some(StopReason::Answered),
            ),
            single(),
            c,
        ];
        let got = tokens_per_round(&trials);
        assert_eq!(
            got,
            vec![
                RoundTokens {
                    round: 1,
                    mean: 110.0,
                    trials: 2,
                    estimated: 0
                },
                // (250 + 290 + 330) / 3
                RoundTokens {
                    round: 2,
                    mean: 290.0,
                    trials: 3,
                    estimated: 1
                },
                RoundTokens {
                    round: 3,
                    mean: 400.0,
                    trials: 1,
                    estimated: 0
                },
            ]
        );
        assert!(tokens_per_round(&[single()]).is_empty());
    }

    #[test]
    fn the_chart_has_one_point_per_round_index_and_escapes_its_label() {
        let points: Vec<RoundTokens> = (1..=12)
            .map(|round| RoundTokens {
                round,
                mean: 100.0 * round as f64,
                trials: 3,
                estimated: 0,
            })
            .collect();
        let svg = tokens_chart("<script>alert(1)</script>", &points);
        assert_eq!(svg.matches(r#"<g class="pt""#).count(), 12);
        for round in 1..=12 {
            assert!(svg.contains(&format!(r#"data-round="{round}""#)), "{round}");
        }
        assert!(svg.contains("round 12: 1200 input tokens on average over 3 trial(s)"));
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;"));
        // 12 rounds: every second one is labelled on the axis (1, 3, …, 11).
        assert!(svg.contains(r#"text-anchor="middle">11</text>"#));
        assert!(!svg.contains(r#"text-anchor="middle">12</text>"#));
        // The first point sits on the left edge, the last on the right edge; y grows down
        // from a 0 baseline to a round 1200 on top (step 500: 0, 500, 1000, 1500).
        assert!(svg.contains(r#"<circle cx="58.0" cy="#));
        assert!(svg.contains(r#"<circle cx="366.0" cy="#));
        assert!(svg.contains(">1500</text>"));
        // One round: one point, no line.
        let one = tokens_chart("c", &points[..1]);
        assert_eq!(one.matches(r#"<g class="pt""#).count(), 1);
        assert!(!one.contains("<polyline"));
    }

    #[test]
    fn long_texts_of_an_episode_are_cut_and_short_ones_borrowed() {
        let mut t = looped(
            vec![round(1, false, 1, true), round(2, false, 0, false)],
            None,
        );
        let e = t.episode.as_ref().unwrap();
        let too_long = |s: &str| s.len() > 8;
        let cut = |s: &str| too_long(s).then(|| format!("{}…", &s[..8]));
        assert!(matches!(
            embedded_episode(e, too_long, cut),
            Cow::Borrowed(_)
        ));
        let e = t.episode.as_mut().unwrap();
        e.rounds[0].outcomes[0].content = "0123456789".into();
        e.rounds[1].user = Some("abcdefghij".into());
        let shown = embedded_episode(e, too_long, cut);
        assert_eq!(shown.rounds[0].outcomes[0].content, "01234567…");
        assert_eq!(shown.rounds[1].user.as_deref(), Some("abcdefgh…"));
        assert_eq!(shown.rounds[0].response.tool_calls[0].arguments, "{}");
    }

    #[test]
    fn the_trial_row_counts_rounds_calls_and_names_the_stop() {
        let t = looped(
            vec![round(1, false, 2, true), round(2, false, 2, false)],
            Some(StopReason::RepeatedCall),
        );
        assert_eq!(trial_summary(&t), Some((2, 4, "repeated_call")));
        assert_eq!(
            trial_summary(&looped(Vec::new(), None)),
            Some((0, 0, "error"))
        );
        assert_eq!(trial_summary(&single()), None);
    }
}
