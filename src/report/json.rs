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

impl Exporter for JsonExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
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
        let bytes = serde_json::to_vec_pretty(&summary).map_err(|e| ReportError::Render {
            format: "json",
            message: e.to_string(),
        })?;
        Ok(vec![("summary.json".to_string(), bytes)])
    }
}
