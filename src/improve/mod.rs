//! The description lab's search for better tool wordings (`toolgauge improve`, issue 32):
//! the pieces that decide without calling a model. [`proposal`] reads a proposer's answer
//! (the contract JSON), [`split`] divides a suite's cases into a training and a held-out
//! set, and [`alpha`] spends the search's significance level across its rounds.
//!
//! The command that plays rounds against a target and a proposer builds on these; each
//! piece is deterministic, so a search replays the same from its cassettes.

pub mod alpha;
pub mod proposal;
pub mod split;
