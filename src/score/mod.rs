//! Scoring: per-trial checks and verdicts, optimal call assignment, aggregate metrics
//! with intervals (behaviour metrics too), thresholds, token counts and prices.

pub mod behaviour;
pub mod distractors;
pub mod line;
pub mod loops;
pub mod metrics;
pub mod parts;
pub mod prices;
pub mod record;
pub mod resample;
pub mod stats;
pub mod stream;
pub mod thresholds;
pub mod tokens;

pub use metrics::Metrics;
pub use record::{TrialRecord, Verdict};
