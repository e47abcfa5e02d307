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
//! The XML is written here, in exactly the form `quick-junit` (from the nextest project)
//! writes: its element and attribute order, four-space indentation, `quick-xml`'s
//! escaping of `<`, `>`, `&`, `'` and `"`, and its cleaning of every text (ANSI escape
//! sequences and control characters other than newlines removed). `quick-junit` builds
//! each text through a per-character terminal parser, which cost 25 ms of the 65 ms a
//! run's reports took for 1,600 trials (`cargo bench --bench report_render`); here a text without anything to remove is used as it is, and only
//! the rest goes through the same parser (`strip-ansi-escapes`). A test renders reports
//! with hostile texts both ways and compares the bytes; `quick-junit` reads the file
//! back in the integration tests.

use std::fmt::Write as _;
use std::time::Duration;

use indexmap::IndexMap;

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

/// A testcase's outcome.
#[derive(Debug, Clone, PartialEq)]
enum Status {
    Success,
    /// A `<failure>` (or, when `error`, an `<error>`) with its attributes and text.
    NonSuccess {
        error: bool,
        message: Option<String>,
        ty: Option<String>,
        description: String,
    },
}

/// One testcase, its texts as given (cleaned and escaped when written).
#[derive(Debug, Clone)]
struct Case {
    name: String,
    /// Index into [`Doc::classnames`]: a cell's testcases share theirs.
    classname: usize,
    time: Option<Duration>,
    properties: Vec<(String, String)>,
    status: Status,
}

/// One testsuite (a cell).
#[derive(Debug, Clone, Default)]
struct Suite {
    name: String,
    properties: Vec<(String, String)>,
    cases: Vec<Case>,
}

/// The document: `<testsuites name=…>` and its suites.
#[derive(Debug, Clone)]
struct Doc {
    name: String,
    classnames: Vec<String>,
    suites: Vec<Suite>,
}

impl Doc {
    fn build(report: &RunReport) -> Doc {
        let suite = &report.summary.suite;
        let repeated = report.meta.matrix.repeats > 1;
        let mut classnames = Vec::new();
        let mut suites: IndexMap<String, Suite> = IndexMap::new();
        for t in &report.trials {
            let cell = super::summary::cell_label(t);
            let name = if repeated {
                format!("{}#{}", t.case_id, t.repeat)
            } else {
                t.case_id.clone()
            };
            let status = match t.verdict {
                Verdict::Pass => Status::Success,
                Verdict::Fail | Verdict::Error => {
                    let first = t.reasons.first();
                    Status::NonSuccess {
                        error: t.verdict == Verdict::Error,
                        message: first.map(|first| match &t.episode {
                            Some(e) => format!("{} ({})", first.message, loop_end(e)),
                            None => first.message.clone(),
                        }),
                        ty: first.map(|first| first.code.clone()),
                        description: t
                            .reasons
                            .iter()
                            .map(|r| format!("{}: {}", r.code, r.message))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    }
                }
            };
            let mut properties = Vec::new();
            if let Some(e) = &t.episode {
                properties.push(("rounds".into(), e.rounds.len().to_string()));
                properties.push(("tool_calls".into(), calls_made(e).to_string()));
                if let Some(stop) = e.stop {
                    properties.push(("stop".into(), stop.as_str().into()));
                }
            }
            if let Some(f) = t.checks.as_ref().and_then(|c| c.behaviour.as_ref()) {
                if let Some(e) = f.expected {
                    properties.push(("expected_behaviour".into(), e.label().into()));
                }
                properties.push(("observed_behaviour".into(), f.observed.label().into()));
                properties.push((
                    "behaviour_by".into(),
                    super::behaviour::by_label(f.by).into(),
                ));
            }
            let time = t
                .latency_ms()
                .map(|latency| Duration::from_secs_f64(latency.max(0.0) / 1000.0));
            // A streamed answer's timing, next to its time (the total latency).
            if let Some(s) = t.response.as_ref().and_then(|r| r.stream.as_ref()) {
                for (name, v) in [
                    ("first_token_ms", s.first_token_ms),
                    ("first_tool_byte_ms", s.first_tool_byte_ms),
                ] {
                    if let Some(v) = v {
                        properties.push((name.into(), format!("{v:.1}")));
                    }
                }
            }
            let entry = suites.entry(cell);
            let index = entry.index();
            let s = entry.or_insert_with_key(|cell| {
                classnames.push(format!("{suite}.{cell}"));
                Suite {
                    name: format!("{suite}: {cell}"),
                    ..Suite::default()
                }
            });
            s.cases.push(Case {
                name,
                classname: index,
                time,
                properties,
                status,
            });
        }
        // Each streamed cell's timing as its testsuite's `stream.*` properties.
        for c in &report.summary.cells {
            let Some(m) = &c.metrics.stream else {
                continue;
            };
            if let Some(s) = suites.get_mut(&c.label()) {
                s.properties
                    .extend(
                        crate::score::stream::STREAM_METRICS
                            .iter()
                            .filter_map(|name| {
                                m.value(name)
                                    .map(|v| (format!("stream.{name}"), format!("{v:.1}")))
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
                s.properties
                    .extend(super::behaviour::junit_properties(b, |v| {
                        v.map_or_else(String::new, |x| format!("{x:.6}"))
                    }));
            }
        }
        Doc {
            name: format!("toolgauge {suite}"),
            classnames,
            suites: suites.into_values().collect(),
        }
    }

    /// The XML.
    /// The document as text.
    #[cfg(test)]
    fn write(&self) -> String {
        let mut out = Vec::new();
        self.write_to(&mut out).expect("a Vec takes every write");
        String::from_utf8(out).expect("the document is UTF-8")
    }

    /// Write the document to `sink` as it is put together, a few test cases at a time:
    /// the writer's buffer is handed on whenever it passes [`Doc::CHUNK`], so it stays
    /// that small however many trials the run had.
    fn write_to(&self, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
        let count = |s: &Suite, error: bool| {
            s.cases
                .iter()
                .filter(|c| matches!(c.status, Status::NonSuccess { error: e, .. } if e == error))
                .count()
        };
        let classnames: Vec<String> = self.classnames.iter().map(|c| clean(c).into()).collect();
        let mut x = Xml::default();
        x.out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        x.line_break = true;
        let total = |error: bool| self.suites.iter().map(|s| count(s, error)).sum::<usize>();
        let tests: usize = self.suites.iter().map(|s| s.cases.len()).sum();
        x.start(
            "testsuites",
            &[
                ("name", &clean(&self.name)),
                ("tests", &tests.to_string()),
                ("skipped", "0"),
                ("failures", &total(false).to_string()),
                ("errors", &total(true).to_string()),
            ],
        );
        for s in &self.suites {
            let attributes = [
                ("name", &*clean(&s.name)),
                ("tests", &s.cases.len().to_string()),
                ("skipped", "0"),
                ("errors", &count(s, true).to_string()),
                ("failures", &count(s, false).to_string()),
            ];
            if s.properties.is_empty() && s.cases.is_empty() {
                x.empty("testsuite", &attributes);
                continue;
            }
            x.start("testsuite", &attributes);
            x.properties(&s.properties);
            for c in &s.cases {
                x.case(c, &classnames[c.classname]);
                if x.out.len() >= Self::CHUNK {
                    sink.write_all(x.out.as_bytes())?;
                    x.out.clear();
                }
            }
            x.end("testsuite");
        }
        x.end("testsuites");
        // quick-junit ends the file with a newline.
        x.out.push('\n');
        sink.write_all(x.out.as_bytes())
    }

    /// Bytes the writer gathers before handing them on.
    const CHUNK: usize = 64 * 1024;
}

/// `text` as quick-junit keeps it: ANSI escape sequences and control characters other
/// than `\n` removed (`\t` and `\r` included), by the same parser. Text with none of
/// them (nearly all) is returned as it is, which is what that parser would give.
fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    let plain = !text.bytes().any(|b| b < 0x20 && b != b'\n')
        // C1 controls (U+0080..U+009F), which the parser also drops.
        && !text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c));
    if plain {
        return std::borrow::Cow::Borrowed(text);
    }
    let stripped = strip_ansi_escapes::strip_str(text);
    std::borrow::Cow::Owned(stripped.replace(
        |c| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f'),
        "",
    ))
}

/// A small XML writer with quick-xml's indentation: each tag on its own line, indented
/// four spaces a level, except an end tag right after text.
#[derive(Default)]
struct Xml {
    out: String,
    depth: usize,
    /// False right after text (and at the start): the next tag stays on the line.
    line_break: bool,
}

impl Xml {
    fn open_tag(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.new_line();
        self.out.push('<');
        self.out.push_str(name);
        for (k, v) in attributes {
            self.out.push(' ');
            self.out.push_str(k);
            self.out.push_str("=\"");
            escape(&mut self.out, v);
            self.out.push('"');
        }
    }

    fn new_line(&mut self) {
        if self.line_break {
            self.out.push('\n');
            for _ in 0..self.depth * 4 {
                self.out.push(' ');
            }
        }
        self.line_break = true;
    }

    fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.open_tag(name, attributes);
        self.out.push('>');
        self.depth += 1;
    }

    fn empty(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.open_tag(name, attributes);
        self.out.push_str("/>");
    }

    fn end(&mut self, name: &str) {
        self.depth -= 1;
        self.new_line();
        let _ = write!(self.out, "</{name}>");
    }

    fn text(&mut self, text: &str) {
        escape(&mut self.out, text);
        self.line_break = false;
    }

    fn properties(&mut self, properties: &[(String, String)]) {
        if properties.is_empty() {
            return;
        }
        self.start("properties", &[]);
        for (k, v) in properties {
            self.empty("property", &[("name", &clean(k)), ("value", &clean(v))]);
        }
        self.end("properties");
    }

    fn case(&mut self, c: &Case, classname: &str) {
        let name = clean(&c.name);
        let time = c.time.map(|t| format!("{:.3}", t.as_secs_f64()));
        let mut attributes = vec![("name", &*name), ("classname", classname)];
        if let Some(time) = &time {
            attributes.push(("time", time));
        }
        if c.properties.is_empty() && c.status == Status::Success {
            self.empty("testcase", &attributes);
            return;
        }
        self.start("testcase", &attributes);
        self.properties(&c.properties);
        if let Status::NonSuccess {
            error,
            message,
            ty,
            description,
        } = &c.status
        {
            let tag = if *error { "error" } else { "failure" };
            let message = message.as_deref().map(clean);
            let ty = ty.as_deref().map(clean);
            let mut attributes = Vec::new();
            if let Some(m) = &message {
                attributes.push(("message", &**m));
            }
            if let Some(t) = &ty {
                attributes.push(("type", &**t));
            }
            self.start(tag, &attributes);
            self.text(&clean(description));
            self.end(tag);
        }
        self.end("testcase");
    }
}

/// `text` with `<`, `>`, `&`, `'` and `"` escaped, as quick-xml escapes attribute values
/// and text.
fn escape(out: &mut String, text: &str) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let entity = match b {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'\'' => "&apos;",
            b'"' => "&quot;",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        out.push_str(entity);
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

/// The file the JUnit exporter writes.
const FILE_NAME: &str = "junit.xml";

impl Exporter for JunitExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let mut xml = Vec::new();
        Doc::build(report)
            .write_to(&mut xml)
            .expect("a Vec takes every write");
        Ok(vec![(FILE_NAME.to_string(), xml)])
    }

    /// Writes the file as it is put together (see `report::ReportFile`).
    fn write_into(
        &self,
        report: &RunReport,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, ReportError> {
        let doc = Doc::build(report);
        let mut file = super::ReportFile::create(dir, FILE_NAME)?;
        doc.write_to(file.out()).map_err(|e| file.io_error(e))?;
        Ok(vec![file.finish()?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::trajectory::StopReason;

    /// `doc` written by quick-junit, the reference for [`Doc::write`].
    fn by_quick_junit(doc: &Doc) -> String {
        use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
        let mut report = Report::new(doc.name.as_str());
        for s in &doc.suites {
            let mut suite = TestSuite::new(s.name.as_str());
            suite.add_properties(
                s.properties
                    .iter()
                    .map(|(k, v)| Property::new(k.as_str(), v.as_str())),
            );
            for c in &s.cases {
                let status = match &c.status {
                    Status::Success => TestCaseStatus::success(),
                    Status::NonSuccess {
                        error,
                        message,
                        ty,
                        description,
                    } => {
                        let mut st = TestCaseStatus::non_success(if *error {
                            NonSuccessKind::Error
                        } else {
                            NonSuccessKind::Failure
                        });
                        if let Some(m) = message {
                            st.set_message(m.as_str());
                        }
                        if let Some(t) = ty {
                            st.set_type(t.as_str());
                        }
                        st.set_description(description.as_str());
                        st
                    }
                };
                let mut case = TestCase::new(c.name.as_str(), status);
                case.set_classname(doc.classnames[c.classname].as_str());
                if let Some(t) = c.time {
                    case.set_time(t);
                }
                for (k, v) in &c.properties {
                    case.add_property(Property::new(k.as_str(), v.as_str()));
                }
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        report.to_string().unwrap()
    }

    /// Texts that need escaping, cleaning, or both.
    const HOSTILE: &[&str] = &[
        "",
        "plain",
        "<tag attr='x' other=\"y\"> & </tag>",
        "line one\nline two\n",
        "tab\there, carriage\rreturn, bell\x07, nul\0, del\x7f",
        "\x1b[31mred\x1b[0m and \x1b]0;title\x07 and \x1bP dcs \x1b\\ end",
        "C1: \u{85} next line, \u{9b}31m csi, \u{9c} st",
        "北京 😀 \u{2028} \u{feff} &amp; already",
        "\x1b",
        "cut escape \x1b[",
        "\x18 cancel \x1a sub",
    ];

    fn hostile_doc() -> Doc {
        let text = |i: usize| HOSTILE[i % HOSTILE.len()].to_string();
        let mut suites = Vec::new();
        let mut i = 0;
        for s in 0..3 {
            let mut cases = Vec::new();
            for c in 0..HOSTILE.len() + 2 {
                i += 1;
                let status = match c % 4 {
                    0 => Status::Success,
                    1 => Status::NonSuccess {
                        error: false,
                        message: Some(text(i)),
                        ty: Some(text(i + 1)),
                        description: format!("{}\n{}", text(i + 2), text(i + 3)),
                    },
                    2 => Status::NonSuccess {
                        error: true,
                        message: Some(text(i + 4)),
                        ty: None,
                        description: text(i + 5),
                    },
                    _ => Status::NonSuccess {
                        error: c % 2 == 0,
                        message: None,
                        ty: None,
                        description: String::new(),
                    },
                };
                cases.push(Case {
                    name: text(i + 6),
                    classname: s,
                    time: (c % 3 != 0).then(|| Duration::from_secs_f64(c as f64 * 0.1234567)),
                    properties: (0..c % 3).map(|k| (text(i + k), text(i + k + 7))).collect(),
                    status,
                });
            }
            suites.push(Suite {
                name: text(s + 2),
                properties: (0..s).map(|k| (text(k + 3), text(k + 5))).collect(),
                cases,
            });
        }
        suites.push(Suite {
            name: "an empty suite".into(),
            ..Suite::default()
        });
        Doc {
            name: HOSTILE[5].into(),
            classnames: (0..3).map(|s| text(s + 4)).collect(),
            suites,
        }
    }

    #[test]
    fn the_xml_is_byte_for_byte_quick_junits() {
        let doc = hostile_doc();
        let ours = doc.write();
        assert_eq!(ours, by_quick_junit(&doc));
        // The texts really were cleaned and escaped.
        assert!(!ours.contains('\x1b') && !ours.contains('\t'), "{ours}");
        assert!(ours.contains("&lt;tag attr=&apos;x&apos;"), "{ours}");
    }

    /// A document of many times [`Doc::CHUNK`] (the writer hands its buffer on as it
    /// goes) is still quick-junit's byte for byte, whole in a `Vec` or through a small
    /// buffered writer.
    #[test]
    fn a_document_written_in_chunks_is_quick_junits() {
        let mut doc = hostile_doc();
        let first = doc.suites[0].cases.clone();
        for round in 0..400 {
            doc.suites[0]
                .cases
                .extend(first.iter().cloned().map(|mut c| {
                    c.name = format!("{} #{round}", c.name);
                    c
                }));
        }
        let ours = doc.write();
        assert!(ours.len() > 10 * Doc::CHUNK, "{} bytes", ours.len());
        assert_eq!(ours, by_quick_junit(&doc));
        let mut small = std::io::BufWriter::with_capacity(1000, Vec::new());
        doc.write_to(&mut small).unwrap();
        assert_eq!(small.into_inner().unwrap(), ours.as_bytes());
    }

    #[test]
    fn plain_text_is_kept_and_the_rest_is_cleaned_as_quick_junit_does() {
        for t in HOSTILE {
            let reference: String = quick_junit::XmlString::new(t).into();
            assert_eq!(clean(t), reference, "{t:?}");
        }
        assert!(matches!(clean("a < b\nc"), std::borrow::Cow::Borrowed(_)));
        assert!(matches!(clean("a\tb"), std::borrow::Cow::Owned(_)));
    }

    /// A run of two cells whose texts need escaping, cleaning, or both: a failure, an
    /// error without reasons and without an answer, two loops (one ended by an error),
    /// a streamed answer.
    fn hostile_report() -> RunReport {
        use crate::provider::StreamTiming;
        use crate::score::trial::Reason;
        let mut report = crate::report::exporter_tests::report();
        report.summary.suite = "pri\x1b[1mced <&>".into();
        let reason = |code: &str, message: &str| Reason {
            code: code.into(),
            message: message.into(),
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

    #[test]
    fn the_loop_end_names_the_stop_reason_or_the_error() {
        let mut e = EpisodeRecord {
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
