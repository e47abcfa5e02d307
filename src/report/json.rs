//! `summary.json`: the summary with a versioned schema (`summary_version`).
//!
//! Costs are rounded to [`MACHINE_DIGITS`] significant digits: still numbers, without
//! the noise of summed floating-point prices (`7.17e-5`, not `7.170000000000001e-5`).

use super::format::{MACHINE_DIGITS, round_sig};
use super::{Exporter, ReportError, RunReport};
use crate::score::metrics::Metrics;

/// Writes `summary.json`.
pub struct JsonExporter;

fn round_costs(m: &mut Metrics) {
    m.cost_usd = m.cost_usd.map(|c| round_sig(c, MACHINE_DIGITS));
}

/// The file the JSON exporter writes.
const FILE_NAME: &str = "summary.json";

/// The summary as written: costs rounded.
fn rounded(report: &RunReport) -> super::Summary {
    let mut summary = report.summary.clone();
    round_costs(&mut summary.overall);
    for c in &mut summary.cells {
        round_costs(&mut c.metrics);
    }
    for t in summary
        .thresholds
        .iter_mut()
        .filter(|t| t.metric == "cost_usd")
    {
        t.value = t.value.map(|v| round_sig(v, MACHINE_DIGITS));
    }
    summary
}

fn render_error(e: serde_json::Error) -> ReportError {
    ReportError::Render {
        format: "json",
        message: e.to_string(),
    }
}

impl Exporter for JsonExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let bytes = serde_json::to_vec_pretty(&rounded(report)).map_err(render_error)?;
        Ok(vec![(FILE_NAME.to_string(), bytes)])
    }

    /// Writes the file as it is serialised (see `report::ReportFile`).
    fn write_into(
        &self,
        report: &RunReport,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, ReportError> {
        let summary = rounded(report);
        let mut file = super::ReportFile::create(dir, FILE_NAME)?;
        serde_json::to_writer_pretty(file.out(), &summary).map_err(|e| {
            if e.is_io() {
                file.io_error(e.into())
            } else {
                render_error(e)
            }
        })?;
        Ok(vec![file.finish()?])
    }
}
