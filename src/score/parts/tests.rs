//! The parts of cases add up to the metrics of their trials, weighted or not.

use super::*;
use crate::behaviour::Behaviour::{
    CannotAnswer as CA, Direct as D, RequestForInfo as RFI, ToolCall as TC,
};
use crate::provider::{StreamTiming, ToolChoice};
use crate::score::record::TrialRecord;

/// Every metric a comparison computes, by name, the way thresholds read them.
fn names() -> Vec<&'static str> {
    crate::util::metric_names::threshold_metrics()
        .into_iter()
        .filter(|n| *n != "tool_definition_tokens")
        .collect()
}

fn value(m: &Metrics, name: &str) -> Option<f64> {
    m.value(name)
        .or_else(|| m.loops.as_ref().and_then(|l| l.value(name)))
        .or_else(|| m.behaviour.as_ref().and_then(|b| b.value(name)))
        .or_else(|| m.stream.as_ref().and_then(|s| s.value(name)))
}

/// Trials of every kind: the snapshot run's single-turn trials (errors, costs, calls,
/// grounding), loop trials, behaviour trials and streamed ones, some repeated.
fn trials() -> Vec<TrialRecord> {
    let journal = include_str!("../../../tests/integration/fixtures/snapshot-run/trials.jsonl");
    let mut out: Vec<TrialRecord> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    out.extend(crate::score::loops::tests::sample());
    let behaviours = [
        ("b1", 0, TC, TC),
        ("b1", 1, TC, RFI),
        ("b2", 0, RFI, D),
        ("b3", 0, CA, TC),
        ("b3", 1, CA, CA),
        ("b4", 0, RFI, RFI),
    ];
    for (case, repeat, e, o) in behaviours {
        out.push(crate::score::behaviour::tests::record(
            case,
            repeat,
            Some(e),
            o,
        ));
    }
    for (i, (token, tool)) in [(Some(40.0), Some(90.0)), (Some(10.0), None), (None, None)]
        .into_iter()
        .enumerate()
    {
        let mut t = crate::score::behaviour::tests::record("s1", i as u32, Some(TC), TC);
        t.stream = true;
        t.tool_choice = ToolChoice::Required;
        if let Some(r) = &mut t.response {
            r.latency_ms = 100.0 + i as f64;
            r.stream = Some(StreamTiming {
                first_token_ms: token,
                first_tool_byte_ms: tool,
                events: 3,
            });
        }
        out.push(t);
    }
    // Every trial priced, so the cost is defined.
    for (i, t) in out.iter_mut().enumerate() {
        t.cost_usd.get_or_insert(0.001 * i as f64);
    }
    out
}

/// The trials grouped into cases (case id and tool_choice), in order of appearance.
fn cases(trials: &[TrialRecord]) -> Vec<Vec<&TrialRecord>> {
    let mut out: indexmap::IndexMap<(String, String), Vec<&TrialRecord>> = Default::default();
    for t in trials {
        out.entry((t.case_id.clone(), t.tool_choice.to_string()))
            .or_default()
            .push(t);
    }
    out.into_values().collect()
}

#[track_caller]
fn agree(got: Option<f64>, want: Option<f64>, name: &str) {
    match (got, want) {
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{name}: {g} vs {w}"
        ),
        _ => assert_eq!(got, want, "{name}"),
    }
}

#[test]
fn the_parts_of_all_cases_give_every_metric_of_all_trials() {
    let trials = trials();
    let parts: Vec<CaseParts> = cases(&trials).into_iter().map(CaseParts::of).collect();
    let names = names();
    let got = Pool::new(&parts).values(None, &names);
    let m = Metrics::of(&trials);
    for (name, got) in names.iter().zip(got) {
        agree(got, value(&m, name), name);
    }
    // The set has something for every family of metrics.
    for name in [
        "task_success",
        "macro_f1",
        "first_token_p95_ms",
        "pass_hat_k",
        "cost_usd",
    ] {
        assert!(value(&m, name).is_some(), "{name}");
    }
}

#[test]
fn weights_count_a_case_as_often_as_it_was_drawn() {
    let trials = trials();
    let grouped = cases(&trials);
    let parts: Vec<CaseParts> = grouped
        .iter()
        .map(|c| CaseParts::of(c.iter().copied()))
        .collect();
    // Case i drawn i mod 3 times; a copy of a case is a case of its own.
    let weights: Vec<u32> = (0..parts.len() as u32).map(|i| i % 3).collect();
    let mut drawn: Vec<TrialRecord> = Vec::new();
    for (case, w) in grouped.iter().zip(&weights) {
        for copy in 0..*w {
            drawn.extend(case.iter().map(|t| {
                let mut t = (*t).clone();
                t.case_id = format!("{}#{copy}", t.case_id);
                t
            }));
        }
    }
    let names = names();
    let got = Pool::new(&parts).values(Some(&weights), &names);
    let m = Metrics::of(&drawn);
    for (name, got) in names.iter().zip(got) {
        agree(got, value(&m, name), name);
    }
}

#[test]
fn cases_that_contribute_alike_do_not_differ() {
    let trials = trials();
    let grouped = cases(&trials);
    let a = CaseParts::of(grouped[0].iter().copied());
    let same = CaseParts::of(grouped[0].iter().copied());
    let other = CaseParts::of(grouped[1].iter().copied());
    for name in names() {
        assert!(!a.differs(&same, name), "{name}");
    }
    assert!(a.measures("accuracy") && a.measures("latency_p50_ms"));
    assert!(!a.measures("task_success") && !a.measures("macro_f1"));
    // The first two cases of the snapshot run differ in latency, at least.
    assert!(a.differs(&other, "latency_p50_ms"));
    // An empty set measures nothing and has no defined rate.
    let empty = CaseParts::of([]);
    assert!(!empty.measures("accuracy"));
    let v = Pool::new(std::slice::from_ref(&empty)).values(None, &["accuracy", "input_tokens"]);
    assert_eq!(v, [None, Some(0.0)]);
}
