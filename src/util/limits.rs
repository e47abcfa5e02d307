//! Limits that more than one layer enforces or relies on, so they can not disagree.

/// Largest `repeats` accepted (a typo like 10000 would otherwise start a huge run): the
/// suite's `matrix.repeats` and `run --repeats` are refused above it, and a report never
/// sizes anything by a larger repeat index (only an edited journal can hold one).
pub const MAX_REPEATS: u32 = 1000;
