//! The description lab's search for better tool wordings (`toolgauge improve`, issue 32):
//! the pieces that decide without calling a model. [`proposal`] reads a proposer's answer
//! (the contract JSON), [`split`] divides a suite's cases into a training and a held-out
//! set, [`alpha`] spends the search's significance level across its rounds, and [`decide`]
//! accepts a candidate only on a significant held-out gain that no guard metric pays for.
//!
//! [`report`] holds what a search leaves behind; [`html`] renders it as `improve.html`
//! and [`text`] as the terminal summary.
//!
//! The command that plays rounds against a target and a proposer builds on these; each
//! piece is deterministic, so a search replays the same from its cassettes.

pub mod alpha;
pub mod bench;
pub mod decide;
pub mod html;
pub mod proposal;
pub mod proposer;
pub mod report;
pub mod search;
pub mod split;
pub mod text;
pub mod wording;
pub mod write;
