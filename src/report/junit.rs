//! `junit.xml`: one testcase per trial, so CI systems show trial failures natively.
//!
//! One testsuite per cell (named `suite: target × variant × tool_choice`); each testcase
//! is named after the case id (with `#repeat` when repeated) and has the suite and cell
//! as classname. Failed trials carry their reasons, errored trials are JUnit errors.
//! A loop trial's testcase has the properties `rounds`, `tool_calls` and `stop` (absent
//! when an infrastructure failure ended it), and its failure message ends with how the
//! loop stopped: `(loop: max_rounds after 3 round(s), 6 tool call(s))`.
//! A trial with behaviour facts has the properties `expected_behaviour` (when its case
//! expects one), `observed_behaviour` and `behaviour_by`; a cell with behaviour metrics
//! has them as its testsuite's `behaviour.*` properties (macro-F1 and the two
//! hallucination rates with their intervals, the non-zero confusion counts).
//! A streamed trial has the properties `first_token_ms` and `first_tool_byte_ms` (when
//! its answer had output, a call), and a streamed cell its testsuite's
//! `stream.first_token_p50_ms`, `stream.first_token_p95_ms`,
//! `stream.first_tool_byte_p50_ms` and `stream.first_tool_byte_p95_ms`.
//!
//! The document is built with `quick-junit`'s types (from the nextest project) and
//! written by it: its element and attribute order, four-space indentation, `quick-xml`'s
//! escaping, and its cleaning of every text (ANSI escape sequences and control
//! characters other than newlines removed). A hand-written writer of the same bytes was
//! faster (1,600 trials: 2.5 to 3.3 ms against 11.5 to 15 ms, all reports side by side
//! 32 to 37 ms against 49 to 50, `cargo bench --bench report_render` on a loaded 2-core
//! machine): quick-junit cleans every text through a per-character terminal parser,
//! which the hand writer skipped for texts with nothing to remove. But it was a few
//! hundred lines whose only check was a test comparing it with quick-junit, and the
//! format is quick-junit's to keep. A test pins the bytes of a run with hostile texts,
//! and the integration tests read the file back with quick-junit.

use std::time::Duration;

use indexmap::IndexMap;
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::{Exporter, ReportError, RunReport};
use crate::score::Verdict;
use crate::score::loops::calls_made;
use crate::score::record::EpisodeRecord;

/// How a loop ended, for a failure message: `loop: max_rounds after 3 round(s), 6 tool
/// call(s)` (the stop reason, or `ended by an error`).
fn loop_end(e: &EpisodeRecord) -> String {
    format!(
        "loop: {} after {} round(s), {} tool call(s)",
        e.stop.map_or("ended by an error", |s| s.as_str()),
        e.rounds.len(),
        calls_made(e)
    )
}

/// Writes `junit.xml`.
pub struct JunitExporter;

/// The document: `<testsuites name=…>` with a testsuite per cell, in the order of the
/// cells' first trials.
fn build(report: &RunReport) -> quick_junit::Report {
    let suite = &report.summary.suite;
    let repeated = report.meta.matrix.repeats > 1;
    let mut suites: IndexMap<String, TestSuite> = IndexMap::new();
    for t in &report.trials {
        let cell = super::summary::cell_label(t);
        let name = if repeated {
            format!("{}#{}", t.case_id, t.repeat)
        } else {
            t.case_id.clone()
        };
        let status = match t.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Fail | Verdict::Error => {
                let mut status = TestCaseStatus::non_success(if t.verdict == Verdict::Error {
                    NonSuccessKind::Error
                } else {
                    NonSuccessKind::Failure
                });
                if let Some(first) = t.reasons.first() {
                    status.set_message(match &t.episode {
                        Some(e) => format!("{} ({})", first.message, loop_end(e)),
                        None => first.message.clone(),
                    });
                    status.set_type(first.code.as_str());
                }
                // Set even when empty: the element is then written `<error></error>`.
                status.set_description(
                    t.reasons
                        .iter()
                        .map(|r| format!("{}: {}", r.code, r.message))
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
                status
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(format!("{suite}.{cell}"));
        if let Some(latency) = t.latency_ms() {
            case.set_time(Duration::from_secs_f64(latency.max(0.0) / 1000.0));
        }
        if let Some(e) = &t.episode {
            case.add_property(Property::new("rounds", e.rounds.len().to_string()));
            case.add_property(Property::new("tool_calls", calls_made(e).to_string()));
            if let Some(stop) = e.stop {
                case.add_property(Property::new("stop", stop.as_str()));
            }
        }
        if let Some(f) = t.checks.as_ref().and_then(|c| c.behaviour.as_ref()) {
            if let Some(e) = f.expected {
                case.add_property(Property::new("expected_behaviour", e.label()));
            }
            case.add_property(Property::new("observed_behaviour", f.observed.label()));
            case.add_property(Property::new(
                "behaviour_by",
                super::behaviour::by_label(f.by),
            ));
        }
        // A streamed answer's timing, next to its time (the total latency).
        if let Some(s) = t.response.as_ref().and_then(|r| r.stream.as_ref()) {
            for (name, v) in [
                ("first_token_ms", s.first_token_ms),
                ("first_tool_byte_ms", s.first_tool_byte_ms),
            ] {
                if let Some(v) = v {
                    case.add_property(Property::new(name, format!("{v:.1}")));
                }
            }
        }
        suites
            .entry(cell)
            .or_insert_with_key(|cell| TestSuite::new(format!("{suite}: {cell}")))
            .add_test_case(case);
    }
    // Each streamed cell's timing as its testsuite's `stream.*` properties.
    for c in &report.summary.cells {
        let Some(m) = &c.metrics.stream else {
            continue;
        };
        if let Some(s) = suites.get_mut(&c.label()) {
            s.add_properties(
                crate::score::stream::STREAM_METRICS
                    .iter()
                    .filter_map(|name| {
                        m.value(name)
                            .map(|v| Property::new(format!("stream.{name}"), format!("{v:.1}")))
                    }),
            );
        }
    }
    // Each cell's behaviour metrics as its testsuite's properties.
    for c in &report.summary.cells {
        let Some(b) = &c.metrics.behaviour else {
            continue;
        };
        if let Some(s) = suites.get_mut(&c.label()) {
            s.add_properties(
                super::behaviour::junit_properties(b, |v| {
                    v.map_or_else(String::new, |x| format!("{x:.6}"))
                })
                .into_iter()
                .map(|(k, v)| Property::new(k, v)),
            );
        }
    }
    let mut doc = quick_junit::Report::new(format!("toolgauge {suite}"));
    doc.add_test_suites(suites.into_values());
    doc
}

fn render_error(e: quick_junit::SerializeError) -> ReportError {
    ReportError::Render {
        format: "junit",
        message: e.to_string(),
    }
}

/// Serialise `doc` into `out`; a failed write is `io`'s error for it. quick-junit wraps
/// an I/O error in its own `SerializeError`, which does not hand it back, so `out` is
/// wrapped in a writer that keeps it.
fn serialize(
    doc: &quick_junit::Report,
    out: impl std::io::Write,
    io: impl FnOnce(std::io::Error) -> ReportError,
) -> Result<(), ReportError> {
    let mut out = KeepError {
        inner: out,
        error: None,
    };
    doc.serialize(&mut out).map_err(|e| match out.error.take() {
        Some(source) => io(source),
        None => render_error(e),
    })
}

/// A writer that keeps the first error of the one it wraps (see [`serialize`]).
struct KeepError<W> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W> KeepError<W> {
    /// Keep `e` (unless one is kept already) and return a copy for the caller.
    fn keep(&mut self, e: std::io::Error) -> std::io::Error {
        let copy = std::io::Error::new(e.kind(), e.to_string());
        self.error.get_or_insert(e);
        copy
    }
}

impl<W: std::io::Write> std::io::Write for KeepError<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.inner.write(buf) {
            // Retried by `write_all`, so not the error.
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Err(self.keep(e)),
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.keep(e))
    }
}

/// The file the JUnit exporter writes.
const FILE_NAME: &str = "junit.xml";

impl Exporter for JunitExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let mut xml = Vec::new();
        // A `Vec` takes every write.
        serialize(&build(report), &mut xml, |e| ReportError::Render {
            format: "junit",
            message: e.to_string(),
        })?;
        Ok(vec![(FILE_NAME.to_string(), xml)])
    }

    /// Writes the file as it is serialised (see `report::ReportFile`).
    fn write_into(
        &self,
        report: &RunReport,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, ReportError> {
        let doc = build(report);
        let mut file = super::ReportFile::create(dir, FILE_NAME)?;
        let path = dir.join(FILE_NAME);
        serialize(&doc, file.out(), |source| ReportError::Io { path, source })?;
        Ok(vec![file.finish()?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::trajectory::StopReason;

    /// A run of two cells whose texts need escaping, cleaning, or both: a failure, an
    /// error without reasons and without an answer, two loops (one ended by an error),
    /// a streamed answer.
    fn hostile_report() -> RunReport {
        use crate::judge::calls::Reason;
        use crate::provider::StreamTiming;
        let mut report = crate::report::exporter_tests::report();
        report.summary.suite = "pri\x1b[1mced <&>".into();
        let reason = |code: &str, message: &str| Reason {
            code: code.into(),
            message: message.into(),
            rounds: Vec::new(),
        };
        let t = &mut report.trials;
        t[1].reasons = vec![
            reason("bad\ttype", "<tag attr='x' other=\"y\"> & </tag>"),
            reason(
                "two",
                "\x1b[31mred\x1b[0m, bell\x07, nul\0, C1 \u{85}\u{9b}31m, 北京 😀",
            ),
        ];
        t[2].case_id = "a\rb\x1b".into();
        t[4].verdict = Verdict::Error;
        t[4].reasons.clear();
        t[4].response = None;
        t[5].response.as_mut().unwrap().stream = Some(StreamTiming {
            first_token_ms: Some(12.34),
            first_tool_byte_ms: None,
            events: 3,
        });
        for (i, stop) in [(7, Some(StopReason::MaxRounds)), (8, None)] {
            t[i].episode = Some(EpisodeRecord {
                end_state: Vec::new(),
                rounds: vec![],
                stop,
                checks: None,
            });
        }
        t[8].verdict = Verdict::Error;
        for trial in &mut t[6..] {
            trial.variant = "w\x1b]0;title\x07 & x".into();
        }
        report
    }

    /// The bytes of a run with hostile texts, pinned: the form quick-junit writes (its
    /// element and attribute order, four-space indentation, escaping, and its cleaning
    /// of ANSI escapes and control characters), which CI systems already read.
    #[test]
    fn the_xml_of_hostile_texts_is_pinned() {
        let files = JunitExporter.render(&hostile_report()).unwrap();
        let [(name, bytes)] = &files[..] else {
            panic!("one file: {files:?}");
        };
        assert_eq!(name, "junit.xml");
        let xml = std::str::from_utf8(bytes).unwrap();
        assert_eq!(xml, HOSTILE_XML);
        let back = quick_junit::Report::deserialize_from_str(xml).expect("junit.xml parses back");
        assert_eq!((back.tests, back.failures, back.errors), (9, 3, 2));
        assert_eq!(back.test_suites.len(), 2);
    }

    /// What [`hostile_report`] renders to.
    const HOSTILE_XML: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="toolgauge priced &lt;&amp;&gt;" tests="9" skipped="0" failures="3" errors="2">
    <testsuite name="priced &lt;&amp;&gt;: openai:gpt-4o-mini × v × auto" tests="6" skipped="0" errors="1" failures="1">
        <testcase name="a#0" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto" time="0.100"/>
        <testcase name="a#1" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto" time="0.200">
            <failure message="&lt;tag attr=&apos;x&apos; other=&quot;y&quot;&gt; &amp; &lt;/tag&gt;" type="badtype">badtype: &lt;tag attr=&apos;x&apos; other=&quot;y&quot;&gt; &amp; &lt;/tag&gt;
two: red, bell, nul, C1 31m, 北京 😀</failure>
        </testcase>
        <testcase name="ab" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto" time="0.300"/>
        <testcase name="b#0" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto" time="0.400"/>
        <testcase name="b#1" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto">
            <error></error>
        </testcase>
        <testcase name="b#2" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × v × auto" time="0.600">
            <properties>
                <property name="first_token_ms" value="12.3"/>
            </properties>
        </testcase>
    </testsuite>
    <testsuite name="priced &lt;&amp;&gt;: openai:gpt-4o-mini × w &amp; x × auto" tests="3" skipped="0" errors="1" failures="2">
        <testcase name="c#0" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × w &amp; x × auto" time="0.700">
            <failure message="expected a call in case c" type="missed_call">missed_call: expected a call in case c</failure>
        </testcase>
        <testcase name="c#1" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × w &amp; x × auto" time="0.800">
            <properties>
                <property name="rounds" value="0"/>
                <property name="tool_calls" value="0"/>
                <property name="stop" value="max_rounds"/>
            </properties>
            <failure message="expected a call in case c (loop: max_rounds after 0 round(s), 0 tool call(s))" type="missed_call">missed_call: expected a call in case c</failure>
        </testcase>
        <testcase name="c#2" classname="priced &lt;&amp;&gt;.openai:gpt-4o-mini × w &amp; x × auto" time="0.900">
            <properties>
                <property name="rounds" value="0"/>
                <property name="tool_calls" value="0"/>
            </properties>
            <error message="expected a call in case c (loop: ended by an error after 0 round(s), 0 tool call(s))" type="missed_call">missed_call: expected a call in case c</error>
        </testcase>
    </testsuite>
</testsuites>
"##;

    /// A run of many times the file's write buffer (see `report::ReportFile`).
    fn big_report() -> RunReport {
        let mut report = hostile_report();
        let trials = report.trials.clone();
        for round in 0..400 {
            report.trials.extend(trials.iter().cloned().map(|mut t| {
                t.case_id = format!("{} #{round}", t.case_id);
                t
            }));
        }
        report
    }

    /// The file written as it is serialised holds the bytes `render` gives.
    #[test]
    fn the_file_written_holds_the_rendered_bytes() {
        let report = big_report();
        let dir = tempfile::tempdir().unwrap();
        let written = JunitExporter.write_into(&report, dir.path()).unwrap();
        assert_eq!(written, vec![dir.path().join("junit.xml")]);
        let bytes = std::fs::read(&written[0]).unwrap();
        // Several times the 256 KiB buffer.
        assert!(bytes.len() > 768 * 1024, "{} bytes", bytes.len());
        let [(_, rendered)] = &JunitExporter.render(&report).unwrap()[..] else {
            panic!("one file");
        };
        assert!(bytes == *rendered);
    }

    /// A write that fails as the document is serialised is the writer's own error
    /// (for a file, an I/O error with its path), not quick-junit's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_the_writers_error() {
        // `/dev/full` refuses every write: "No space left on device".
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let result = serialize(&build(&hostile_report()), full, |source| ReportError::Io {
            path: "/dev/full".into(),
            source,
        });
        let Err(ReportError::Io { source, .. }) = result else {
            panic!("writing to /dev/full must fail: {result:?}");
        };
        assert_eq!(source.kind(), std::io::ErrorKind::StorageFull, "{source}");
    }

    #[test]
    fn the_loop_end_names_the_stop_reason_or_the_error() {
        let mut e = EpisodeRecord {
            end_state: Vec::new(),
            rounds: vec![],
            stop: Some(StopReason::RepeatedCall),
            checks: None,
        };
        assert_eq!(
            loop_end(&e),
            "loop: repeated_call after 0 round(s), 0 tool call(s)"
        );
        e.stop = None;
        assert_eq!(
            loop_end(&e),
            "loop: ended by an error after 0 round(s), 0 tool call(s)"
        );
    }
}
