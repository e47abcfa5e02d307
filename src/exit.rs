//! Exit codes, in one place.

/// Every threshold held.
pub const OK: u8 = 0;
/// A threshold failed.
pub const THRESHOLD_FAILED: u8 = 1;
/// Bad input: suite, flags, cassette or script.
pub const BAD_INPUT: u8 = 2;
/// The run could not complete: trials ended in errors (e.g. a cassette miss).
pub const RUN_INCOMPLETE: u8 = 3;
