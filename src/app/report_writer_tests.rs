//! The report files refreshed while a run goes on: written before it ends, marked
//! partial, and replaced by exactly the report the end of the run writes.

use std::collections::HashMap;

use super::*;
use crate::provider::{Provider, Target, ToolChoice};
use crate::runner::{self, Plan, RunOptions};
use crate::scripted::ScriptedProvider;

/// Four single-turn cases, a threshold, and a tool.
const SUITE: &str = r#"
name: refresh
tools:
  - name: ping
    description: Ping a host.
    parameters: {type: object, properties: {host: {type: string}}}
cases:
  - {id: a, kind: should_not_call, prompt: hi}
  - {id: b, kind: should_not_call, prompt: hello}
  - {id: c, kind: should_not_call, prompt: hey}
  - {id: d, kind: should_not_call, prompt: howdy}
"#;

const TARGET: &str = "scripted:no_call";

/// The plan of [`SUITE`] for [`TARGET`], and the scripted model answering it.
fn setup() -> (Plan, HashMap<String, Arc<dyn Provider>>) {
    let suite = Arc::new(crate::suite::load_str(SUITE, Path::new("refresh.yaml")).unwrap());
    let targets = [Target::parse(TARGET).unwrap()];
    let plan = Plan::new(
        suite.clone(),
        &targets,
        &["default".into()],
        &[ToolChoice::Auto],
        1,
    );
    let model: Arc<dyn Provider> = Arc::new(ScriptedProvider::new("no_call", suite).unwrap());
    (plan, HashMap::from([(TARGET.to_string(), model)]))
}

/// `run.json` as written at the start of a run of `planned` trials.
fn meta(planned: usize) -> RunMeta {
    serde_json::from_value(serde_json::json!({
        "run_format": 1,
        "toolgauge_version": "0.0.0",
        "suite": {"name": "refresh", "path": "refresh.yaml", "hash": "00"},
        "matrix": {
            "targets": [TARGET],
            "variants": ["default"],
            "tool_choice": ["auto"],
            "repeats": 1
        },
        "sources": {},
        "tools": {},
        "tool_definition_tokens": {},
        "trials_planned": planned,
        "trials_written": 0,
        "started_at": "2025-01-01T00:00:00Z",
        "finished_at": null,
        "status": "running"
    }))
    .unwrap()
}

fn cells(plan: &Plan) -> Vec<(String, String, String)> {
    plan.cells
        .iter()
        .map(|c| {
            (
                c.target.spec.clone(),
                c.variant.clone(),
                c.tool_choice.to_string(),
            )
        })
        .collect()
}

fn variants(plan: &Plan) -> Vec<VariantTokens> {
    vec![VariantTokens {
        variant: "default".into(),
        tool_definition_tokens: plan.tool_tokens("default"),
        system_prompt_tokens: None,
        changes: Default::default(),
    }]
}

fn formats() -> Vec<String> {
    report::FILE_FORMATS.iter().map(|f| f.to_string()).collect()
}

/// A writer for `plan` into `dir` that writes only when flushed (an hour between refreshes).
fn writer_for<'p>(plan: &'p Plan, dir: &Path, formats: Vec<String>) -> ReportWriter<'p> {
    let planned = plan.trials().len();
    ReportWriter::start(
        ReportWriterParams {
            dir: dir.to_path_buf(),
            formats,
            suite: plan.suite.clone(),
            cells: cells(plan),
            meta: meta(planned),
            planned,
            slot_of: (0..planned).collect(),
            every: Duration::from_secs(3600),
            collect_after: Duration::ZERO,
        },
        plan,
    )
}

fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every file of `dir` (and subdirectory) by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    all.sort();
    all
}

/// At its second finished trial, flushes the writer and keeps what the run directory
/// then holds: the run is still going on (two trials are left).
struct Peek {
    feed: ReportFeed,
    dir: PathBuf,
    finished: usize,
    seen: Option<(serde_json::Value, bool, bool)>,
}

impl RunObserver for Peek {
    fn on_event(&mut self, event: &RunEvent<'_>, _: &RunControl) {
        if let RunEvent::TrialFinished { .. } = event {
            self.finished += 1;
            if self.finished == 2 {
                self.feed.flush();
                self.seen = Some((
                    summary(&self.dir),
                    self.dir.join("report.html").is_file(),
                    self.dir.join(STAGING_DIR).exists(),
                ));
            }
        }
    }

    fn may_stop(&self) -> bool {
        false
    }
}

/// Drive a run of four trials, one at a time, with a writer refreshing the reports.
/// Returns the records in plan order and what the run directory held mid-run.
fn run_with_refreshes(plan: &Plan, dir: &Path) -> (Vec<TrialRecord>, serde_json::Value) {
    let (_, providers) = setup();
    let mut reports = writer_for(plan, dir, formats());
    reports.feed().variants(&variants(plan));
    let mut peek = Peek {
        feed: reports.feed(),
        dir: dir.to_path_buf(),
        finished: 0,
        seen: None,
    };
    let options = RunOptions {
        concurrency: 1,
        prices: crate::score::prices::PriceTable::default(),
        judge: None,
    };
    let control = Arc::new(RunControl::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut finished = runtime.block_on(runner::execute(
        plan,
        plan.trials(),
        &providers,
        &options,
        &control,
        &mut [&mut reports, &mut peek],
    ));
    reports.stop();
    finished.sort_by_key(|(i, _)| *i);
    let (summary, html, staging) = peek.seen.expect("the run finished two trials");
    assert!(html, "report.html is written before the run ends");
    assert!(
        !staging,
        "the staging directory is gone once the files are in place"
    );
    (finished.into_iter().map(|(_, r)| r).collect(), summary)
}

#[test]
fn the_reports_are_written_before_the_run_ends_and_say_they_are_partial() {
    let (plan, _) = setup();
    let dir = tempfile::tempdir().unwrap();
    let (records, mid_run) = run_with_refreshes(&plan, dir.path());
    assert_eq!(records.len(), 4);
    assert_eq!(mid_run["overall"]["trials"], 2, "{mid_run:#}");
    let stopped = mid_run["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with("in progress: 2 of 4 trials finished"),
        "{stopped}"
    );
    assert!(stopped.contains("toolgauge run --resume"), "{stopped}");
}

#[test]
fn the_final_reports_equal_those_of_a_run_without_refreshes() {
    let (plan, _) = setup();
    let refreshed = tempfile::tempdir().unwrap();
    let (records, _) = run_with_refreshes(&plan, refreshed.path());
    let reporting = Reporting {
        suite: plan.suite.clone(),
        cells: cells(&plan),
        variants: variants(&plan),
    };
    let mut final_meta = meta(4);
    reporting.note_variants(&mut final_meta);
    final_meta.trials_written = 4;
    final_meta.status = "complete".into();
    let report = reporting.report(final_meta, records, None);
    let clean = tempfile::tempdir().unwrap();
    for dir in [refreshed.path(), clean.path()] {
        report::write_files(dir, &report, &formats()).unwrap();
    }
    let (got, want) = (files(refreshed.path()), files(clean.path()));
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want));
    for ((name, a), (_, b)) in got.iter().zip(&want) {
        assert!(
            a == b,
            "{name} differs from the one written without refreshes"
        );
    }
    assert!(summary(refreshed.path()).get("stopped").is_none());
}

#[test]
fn nothing_is_written_before_the_variants_are_counted() {
    let (plan, _) = setup();
    let dir = tempfile::tempdir().unwrap();
    let mut reports = writer_for(&plan, dir.path(), formats());
    let feed = reports.feed();
    let record = {
        let (plan, providers) = setup();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let options = RunOptions {
            concurrency: 1,
            prices: crate::score::prices::PriceTable::default(),
            judge: None,
        };
        let control = Arc::new(RunControl::default());
        let trials = plan.trials()[..1].to_vec();
        let mut done = runtime.block_on(runner::execute(
            &plan,
            trials,
            &providers,
            &options,
            &control,
            &mut [&mut reports],
        ));
        done.pop().unwrap().1
    };
    assert_eq!(record.case_id, "a");
    feed.flush();
    assert!(
        files(dir.path()).is_empty(),
        "written before the tokens were known"
    );
    feed.variants(&variants(&plan));
    feed.flush();
    assert_eq!(summary(dir.path())["overall"]["trials"], 1);
    reports.stop();
}

#[test]
fn a_run_without_report_files_starts_no_writer() {
    let (plan, _) = setup();
    let dir = tempfile::tempdir().unwrap();
    let reports = writer_for(&plan, dir.path(), vec!["terminal".into()]);
    assert!(reports.worker.is_none());
    reports.feed().flush();
    assert!(files(dir.path()).is_empty());
}

#[test]
fn a_refresh_comes_due_once_the_interval_has_passed() {
    let start = Instant::now();
    let every = Duration::from_secs(5);
    assert!(!due(start, every, start));
    assert!(!due(start, every, start + Duration::from_millis(4999)));
    assert!(due(start, every, start + every));
    assert!(due(start, every, start + Duration::from_secs(60)));
    // A clock read before `last` (another thread's) is not due.
    assert!(!due(start + every, every, start));
}

#[test]
fn trials_finished_before_the_writer_collects_are_read_back_from_the_journal() {
    let (plan, providers) = setup();
    let dir = tempfile::tempdir().unwrap();
    // A whole run's records, as the runner gives them.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let options = RunOptions {
        concurrency: 1,
        prices: crate::score::prices::PriceTable::default(),
        judge: None,
    };
    let control = Arc::new(RunControl::default());
    let mut finished = runtime.block_on(runner::execute(
        &plan,
        plan.trials(),
        &providers,
        &options,
        &control,
        &mut [],
    ));
    finished.sort_by_key(|(i, _)| *i);
    // Three finished before the writer collected anything: only the journal has them.
    let mut journal =
        crate::runner::journal::Journal::append_to(&dir.path().join("trials.jsonl")).unwrap();
    for (_, r) in &finished[..3] {
        journal.append(r).unwrap();
    }
    let mut reports = writer_for(&plan, dir.path(), formats());
    reports.feed().variants(&variants(&plan));
    // The fourth finishes once it collects: the journal is read back, then the record
    // handed over joins it.
    let (index, last) = &finished[3];
    reports.on_event(
        &RunEvent::TrialFinished {
            index: *index,
            record: last,
        },
        &control,
    );
    reports.feed().flush();
    let s = summary(dir.path());
    assert_eq!(s["overall"]["trials"], 4, "{s:#}");
    reports.stop();
}
