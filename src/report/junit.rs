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
//! Written with `quick-junit` (from the nextest project), which escapes all text.

use std::time::Duration;

use indexmap::IndexMap;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

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

impl Exporter for JunitExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
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
                    let kind = if t.verdict == Verdict::Fail {
                        NonSuccessKind::Failure
                    } else {
                        NonSuccessKind::Error
                    };
                    let mut s = TestCaseStatus::non_success(kind);
                    if let Some(first) = t.reasons.first() {
                        s.set_message(match &t.episode {
                            Some(e) => format!("{} ({})", first.message, loop_end(e)),
                            None => first.message.clone(),
                        });
                        s.set_type(first.code.clone());
                    }
                    s.set_description(
                        t.reasons
                            .iter()
                            .map(|r| format!("{}: {}", r.code, r.message))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    );
                    s
                }
            };
            let mut case = TestCase::new(name, status);
            case.set_classname(format!("{suite}.{cell}"));
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
            if let Some(latency) = t.latency_ms() {
                case.set_time(Duration::from_secs_f64(latency.max(0.0) / 1000.0));
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
                .entry(cell.clone())
                .or_insert_with(|| TestSuite::new(format!("{suite}: {cell}")))
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
            let label = c.label();
            if let Some(s) = suites.get_mut(&label) {
                s.add_properties(super::behaviour::junit_properties(b, |v| {
                    v.map_or_else(String::new, |x| format!("{x:.6}"))
                }));
            }
        }
        let mut junit = Report::new(format!("toolgauge {suite}"));
        junit.add_test_suites(suites.into_values());
        let xml = junit.to_string().map_err(|e| ReportError::Render {
            format: "junit",
            message: e.to_string(),
        })?;
        Ok(vec![("junit.xml".to_string(), xml.into_bytes())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::trajectory::StopReason;

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
