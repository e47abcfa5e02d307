//! Evidence from a finished run.
