//! `toolgauge lint`: checks on tool definitions before a run, and evidence from a run.

pub mod evidence;
pub mod providers;
