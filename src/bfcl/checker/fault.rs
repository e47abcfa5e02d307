//! How a check fails: a [`Fault`] is a mismatch (BFCL's own verdict) or a crash (a point
//! where BFCL's checker would raise), with the error-type strings both use.

use super::Verdict;

/// Why a check did not pass.
#[derive(Debug)]
pub(super) struct Failure {
    /// The error type: BFCL's string, or a `bfcl_crash:` one where BFCL would raise.
    pub(super) error_type: &'static str,
    /// What went wrong, in sentences.
    pub(super) messages: Vec<String>,
}

/// A failed check: an ordinary mismatch, or a point where BFCL itself would raise. The
/// parallel checker tries the next model call after a mismatch but stops at a crash.
#[derive(Debug)]
pub(super) enum Fault {
    /// The value does not fit: the verdict is BFCL's.
    Mismatch(Failure),
    /// BFCL's checker would raise here.
    Crash(Failure),
}

impl Fault {
    /// The invalid verdict this fault gives.
    pub(super) fn into_verdict(self) -> Verdict {
        let (Fault::Mismatch(f) | Fault::Crash(f)) = self;
        Verdict::fail(f.error_type, f.messages)
    }
}

/// The outcome of one check.
pub(super) type Step = Result<(), Fault>;

/// A mismatch of one message.
pub(super) fn mismatch(error_type: &'static str, message: String) -> Fault {
    Fault::Mismatch(Failure {
        error_type,
        messages: vec![message],
    })
}

/// A crash of one message, marked as where BFCL would raise.
pub(super) fn crash(error_type: &'static str, message: String) -> Fault {
    Fault::Crash(Failure {
        error_type,
        messages: vec![format!("BFCL's checker would raise here: {message}")],
    })
}

/// The `bfcl_crash:` error types (see the module documentation of `checker`).
pub(super) const CRASH_NON_DICT: &str = "bfcl_crash:non_dict_element";
pub(super) const CRASH_NO_FUNCTION: &str = "bfcl_crash:function_not_found";
pub(super) const CRASH_NO_GT: &str = "bfcl_crash:empty_ground_truth";
pub(super) const CRASH_SCHEMA: &str = "bfcl_crash:schema";
pub(super) const CRASH_ANSWER: &str = "bfcl_crash:malformed_answer";
pub(super) const CRASH_INT: &str = "bfcl_crash:int_too_large";

/// BFCL's error type when a parallel answer's calls cannot be paired with the expected ones.
pub(super) const CANNOT_FIND_MATCH: &str = "parallel_function_checker_no_order:cannot_find_match";
