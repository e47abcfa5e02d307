//! When2Call (NVIDIA, NAACL 2025, Apache-2.0): importing its JSONL items as one suite
//! ([`import`]), each item read and checked by [`item`]. See docs/when2call.md.
//!
//! When2Call asks, for each question, which of four behaviours is right: call a tool
//! (`tool_call`), ask for the missing information (`request_for_info`), say that no tool
//! fits (`cannot_answer`) or answer directly (`direct`). The importer maps them onto the
//! suite kinds and the behaviour keys (`clarify`, `behaviour: cannot_answer | direct`);
//! the tools are BFCL functions, converted by the BFCL importer's own conversion.

pub mod import;
pub mod item;
