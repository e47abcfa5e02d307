//! The order of run events, told to observers by `execute`.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::provider::scripted::ScriptedProvider;
use crate::provider::{Target, ToolChoice};

const SUITE: &str = r#"
tools:
  - name: ping
    description: Ping a host.
    parameters: {type: object, properties: {host: {type: string}}}
cases:
  - {id: plain, kind: should_not_call, prompt: hi}
  - id: looped
    kind: should_call
    prompt: ping example.org
    mocks: {ping: [{result: pong}]}
    limits: {max_rounds: 3, max_identical_calls: 10}
    expect: {calls: [{tool: ping}], stop: max_rounds}
  - id: looped-again
    kind: should_call
    prompt: ping example.com
    mocks: {ping: [{result: pong}]}
    limits: {max_rounds: 2, max_identical_calls: 10}
    expect: {calls: [{tool: ping}], stop: max_rounds}
"#;

/// Writes down every event, as text.
#[derive(Default)]
struct Log(Vec<String>);

impl RunObserver for Log {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        self.0.push(match event {
            RunEvent::TrialStarted { index } => format!("start {index}"),
            RunEvent::RoundFinished {
                index,
                round,
                calls,
                errors,
                ..
            } => format!("round {index}.{round} calls {calls} errors {errors}"),
            RunEvent::TrialFinished { index, record } => {
                format!("finish {index} {}", record.case_id)
            }
            RunEvent::Stopped { reason } => format!("stopped: {reason}"),
        });
    }
}

/// Stops the run when the first trial finishes.
struct StopAtFirst;

impl RunObserver for StopAtFirst {
    fn on_event(&mut self, event: &RunEvent<'_>, control: &RunControl) {
        if let RunEvent::TrialFinished { .. } = event {
            control.stop(StopReason::Budget("test budget".into()));
        }
    }
}

fn setup() -> (Plan, HashMap<String, Arc<dyn Provider>>) {
    let suite = Arc::new(crate::suite::load_str(SUITE, std::path::Path::new("e.yaml")).unwrap());
    let targets = [Target::parse("scripted:loop_forever").unwrap()];
    let plan = Plan::new(
        suite.clone(),
        &targets,
        &["default".into()],
        &[ToolChoice::Auto],
        1,
    );
    let provider: Arc<dyn Provider> =
        Arc::new(ScriptedProvider::new("loop_forever", suite).unwrap());
    let providers = HashMap::from([("scripted:loop_forever".to_string(), provider)]);
    (plan, providers)
}

fn options(concurrency: usize) -> RunOptions {
    RunOptions {
        concurrency,
        prices: crate::score::prices::PriceTable::default(),
        judge: None,
    }
}

#[tokio::test]
async fn each_trial_starts_then_tells_its_rounds_in_order_then_finishes() {
    let (plan, providers) = setup();
    let trials = plan.trials();
    let control = RunControl::default();
    let mut log = Log::default();
    let done = execute(
        &plan,
        trials,
        &providers,
        &options(3),
        &control,
        &mut [&mut log],
    )
    .await;
    assert_eq!(done.len(), 3);
    // Per trial: the events that concern it, in the order told.
    let of = |i: usize| -> Vec<String> {
        log.0
            .iter()
            .filter(|e| {
                e.starts_with(&format!("start {i}"))
                    || e.starts_with(&format!("round {i}."))
                    || e.starts_with(&format!("finish {i} "))
            })
            .cloned()
            .collect()
    };
    assert_eq!(of(0), ["start 0", "finish 0 plain"]);
    // `loop_forever` makes the same call every round; the last round's call is not
    // run (max_rounds): it counts as made, and not as an error.
    assert_eq!(
        of(1),
        [
            "start 1",
            "round 1.1 calls 1 errors 0",
            "round 1.2 calls 1 errors 0",
            "round 1.3 calls 1 errors 0",
            "finish 1 looped"
        ]
    );
    assert_eq!(
        of(2),
        [
            "start 2",
            "round 2.1 calls 1 errors 0",
            "round 2.2 calls 1 errors 0",
            "finish 2 looped-again"
        ]
    );
    assert_eq!(log.0.len(), 2 + 5 + 4, "{:?}", log.0);
    assert!(!log.0.iter().any(|e| e.starts_with("stopped")));
}

#[tokio::test]
async fn a_stop_is_told_once_and_no_trial_starts_after_it() {
    let (plan, providers) = setup();
    let trials = plan.trials();
    let control = RunControl::default();
    let mut log = Log::default();
    let mut stop = StopAtFirst;
    // One at a time: the first trial finishes before the second would start.
    let done = execute(
        &plan,
        trials,
        &providers,
        &options(1),
        &control,
        &mut [&mut stop, &mut log],
    )
    .await;
    assert_eq!(done.len(), 1, "only the trial in flight finished");
    assert_eq!(
        log.0,
        [
            "start 0",
            "finish 0 plain",
            "stopped: budget exceeded: test budget"
        ]
    );
}
