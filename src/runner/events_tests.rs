//! The order of run events, told to observers by `execute`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::provider::{Target, ToolChoice};
use crate::scripted::ScriptedProvider;

/// The tool every suite of these tests has.
const TOOLS: &str = r#"
tools:
  - name: ping
    description: Ping a host.
    parameters: {type: object, properties: {host: {type: string}}}
"#;

/// One single-turn case and two loop cases.
const CASES: &str = r#"
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

    fn may_stop(&self) -> bool {
        false
    }
}

/// Stops the run when the first trial finishes.
struct StopAtFirst;

impl RunObserver for StopAtFirst {
    fn on_event(&mut self, event: &RunEvent<'_>, control: &RunControl) {
        if let RunEvent::TrialFinished { .. } = event {
            control.stop(RunStop::Budget("test budget".into()));
        }
    }
}

/// The plan of [`TOOLS`] with `cases` for `scripted:loop_forever`, and that scripted model.
fn plan_of(cases: &str) -> (Plan, ScriptedProvider) {
    let text = format!("{TOOLS}{cases}");
    let suite = Arc::new(crate::suite::load_str(&text, std::path::Path::new("e.yaml")).unwrap());
    let targets = [Target::parse("scripted:loop_forever").unwrap()];
    let plan = Plan::new(
        suite.clone(),
        &targets,
        &["default".into()],
        &[ToolChoice::Auto],
        1,
    );
    (plan, ScriptedProvider::new("loop_forever", suite).unwrap())
}

/// `provider` answering the target of [`plan_of`].
fn answering(provider: Arc<dyn Provider>) -> HashMap<String, Arc<dyn Provider>> {
    HashMap::from([("scripted:loop_forever".to_string(), provider)])
}

fn setup() -> (Plan, HashMap<String, Arc<dyn Provider>>) {
    let (plan, model) = plan_of(CASES);
    (plan, answering(Arc::new(model)))
}

fn options(concurrency: usize) -> RunOptions {
    RunOptions {
        concurrency,
        prices: crate::score::prices::PriceTable::default(),
        judge: None,
    }
}

/// Every trial of `plan`, `concurrency` at a time, told to `observers`.
async fn run_all(
    plan: &Plan,
    providers: &HashMap<String, Arc<dyn Provider>>,
    concurrency: usize,
    control: &Arc<RunControl>,
    observers: &mut [&mut dyn RunObserver],
) -> Vec<(usize, TrialRecord)> {
    execute(
        plan,
        plan.trials(),
        providers,
        &options(concurrency),
        control,
        observers,
    )
    .await
}

#[tokio::test]
async fn each_trial_starts_then_tells_its_rounds_in_order_then_finishes() {
    let (plan, providers) = setup();
    let control = Arc::new(RunControl::default());
    let mut log = Log::default();
    let done = run_all(&plan, &providers, 3, &control, &mut [&mut log]).await;
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
    let control = Arc::new(RunControl::default());
    let mut log = Log::default();
    let mut stop = StopAtFirst;
    // One at a time: the first trial finishes before the second would start.
    let done = run_all(&plan, &providers, 1, &control, &mut [&mut stop, &mut log]).await;
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

/// Three single-turn cases.
const SINGLE_TURN_CASES: &str = r#"
cases:
  - {id: one, kind: should_not_call, prompt: hi}
  - {id: two, kind: should_not_call, prompt: hello}
  - {id: three, kind: should_not_call, prompt: hey}
"#;

/// Counts the requests that reached the provider and answers each after 20 ms; stops
/// the run at the first one when `stop_at_first` (as Ctrl-C would, from outside the
/// observers).
struct Counting {
    inner: Arc<dyn Provider>,
    calls: Arc<AtomicUsize>,
    stop_at_first: Option<Arc<RunControl>>,
}

#[async_trait::async_trait]
impl Provider for Counting {
    async fn complete(
        &self,
        request: &crate::provider::Request,
        key: &crate::provider::TrialKey,
    ) -> Result<crate::provider::Response, crate::provider::ProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(control) = &self.stop_at_first {
            control.stop(RunStop::Interrupted);
        }
        // An answer takes a while, as over a network: the trials waiting for a slot
        // are prepared meanwhile.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.inner.complete(request, key).await
    }

    fn source(&self) -> String {
        self.inner.source()
    }
}

/// Three single-turn trials against `scripted:loop_forever`, counted.
fn single_turn(
    stop_at_first: Option<Arc<RunControl>>,
) -> (Plan, HashMap<String, Arc<dyn Provider>>, Arc<AtomicUsize>) {
    let (plan, model) = plan_of(SINGLE_TURN_CASES);
    let calls = Arc::new(AtomicUsize::new(0));
    let providers = answering(Arc::new(Counting {
        inner: Arc::new(model),
        calls: calls.clone(),
        stop_at_first,
    }));
    (plan, providers, calls)
}

/// At each finished trial, notes how many requests had reached the provider: at once
/// when it may stop the run, else after waiting (up to 10 s) for the next trial's request.
struct Requests {
    calls: Arc<AtomicUsize>,
    may_stop: bool,
    seen: Vec<usize>,
}

impl RunObserver for Requests {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        if !matches!(event, RunEvent::TrialFinished { .. }) {
            return;
        }
        let finished = self.seen.len() + 1;
        let waited = std::time::Instant::now();
        let wait = if self.may_stop {
            // Long enough for a request that leaked past the slot to be seen.
            std::time::Duration::from_millis(50)
        } else {
            std::time::Duration::from_secs(10)
        };
        while self.calls.load(Ordering::SeqCst) <= finished.min(2) && waited.elapsed() < wait {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.seen.push(self.calls.load(Ordering::SeqCst));
    }

    fn may_stop(&self) -> bool {
        self.may_stop
    }
}

/// Run the three single-turn trials one at a time with a [`Requests`] observer; the
/// number of trials written, and the requests seen at each finished trial.
async fn requests_seen(may_stop: bool) -> (usize, Vec<usize>) {
    let (plan, providers, calls) = single_turn(None);
    let control = Arc::new(RunControl::default());
    let mut requests = Requests {
        calls: calls.clone(),
        may_stop,
        seen: Vec::new(),
    };
    let done = run_all(&plan, &providers, 1, &control, &mut [&mut requests]).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    (done.len(), requests.seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_frees_its_slot_before_it_is_scored_and_told() {
    let (done, seen) = requests_seen(false).await;
    assert_eq!(done, 3);
    // One slot: while the first answer is told, the second request is already out.
    assert_eq!(seen[0], 2, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observer_that_may_stop_sees_each_answer_before_the_next_request() {
    let (done, seen) = requests_seen(true).await;
    assert_eq!(done, 3);
    assert_eq!(seen, [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_stop_on_the_first_answer_sends_no_other_request() {
    let (plan, providers, calls) = single_turn(None);
    let control = Arc::new(RunControl::default());
    let mut log = Log::default();
    let mut stop = StopAtFirst;
    let done = run_all(&plan, &providers, 1, &control, &mut [&mut stop, &mut log]).await;
    assert_eq!(done.len(), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        log.0,
        [
            "start 0",
            "finish 0 one",
            "stopped: budget exceeded: test budget"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_trial_that_finds_the_run_stopped_neither_starts_nor_is_written() {
    let control = Arc::new(RunControl::default());
    let (plan, providers, calls) = single_turn(Some(control.clone()));
    let mut log = Log::default();
    let done = run_all(&plan, &providers, 1, &control, &mut [&mut log]).await;
    // The second trial was prepared, waiting for the slot, when the first request
    // stopped the run: it got the slot, saw the stop, and left no trace.
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(done.len(), 1);
    // The stop is told at the first event after it: here the trial's start or finish.
    let (stops, trial): (Vec<_>, Vec<_>) = log.0.iter().partition(|e| e.starts_with("stopped"));
    assert_eq!(trial, ["start 0", "finish 0 one"]);
    assert_eq!(stops, ["stopped: interrupted (Ctrl-C)"]);
}
