//! The Berkeley Function Calling Leaderboard (BFCL): importing its single-turn categories
//! as suites ([`import`]) and its multi-turn ones ([`import_multi`]), replaying its result
//! files as a recorded target ([`result`]; multi-turn results step by step:
//! [`result_multi`]), and scoring them exactly as BFCL's AST checker does (the `bfcl`
//! profile, [`profile`] with [`checker`] and [`decode`]). See docs/bfcl.md. For the
//! multi-turn backends: Python's exact text forms of values ([`pyfmt`]), Python's
//! `random.Random` ([`pyrandom`]), the ported backend classes themselves ([`worlds`]),
//! the `bfcl` world a case runs them as ([`world`]), BFCL's multi-turn checker
//! ([`multi_turn`]) and the profile's judge of a multi-turn episode ([`multi_turn_judge`]).

pub mod checker;
pub mod data;
pub mod decode;
pub mod import;
pub mod import_multi;
pub mod multi_turn;
pub mod multi_turn_judge;
pub mod profile;
pub mod pyfmt;
pub mod pyrandom;
pub mod result;
pub mod result_multi;
pub mod value;
pub mod world;
pub mod worlds;
