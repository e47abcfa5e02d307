//! `summary.json`: the summary with a versioned schema (`summary_version`).

use super::{Exporter, ReportError, RunReport};

/// Writes `summary.json`.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &RunReport) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let bytes =
            serde_json::to_vec_pretty(&report.summary).map_err(|e| ReportError::Render {
                format: "json",
                message: e.to_string(),
            })?;
        Ok(vec![("summary.json".to_string(), bytes)])
    }
}
