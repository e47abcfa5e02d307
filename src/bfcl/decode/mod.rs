//! Decoding a BFCL model result into calls, exactly as BFCL (bfcl-eval 2026.3.23) does
//! in its `decode_ast` step, before any checking happens.
//!
//! * [`decode_fc`]: function-calling models (the OpenAI-style handlers). The result
//!   must be a list of one-key objects whose values are JSON strings, and each string
//!   goes through Python's `json.loads`, which [`python_json_loads`] reproduces.
//! * [`decode_prompt`]: prompt models (`default_decode_ast_prompting`). The text is
//!   parsed as a Python expression (`ast.parse(mode="eval")`) and each call is resolved
//!   the way BFCL's `resolve_ast_by_type` does. That keeps its quirks: positional
//!   arguments are dropped, a bare name becomes a string, a unary operator negates its
//!   operand (in strict mode), a binary operation is evaluated, and a nested call
//!   without keywords becomes its `ast.unparse` text.
//!
//! No crate parses Python, so this module has its own, one concern per file:
//! * `fc`: FC results; `json`: `json.loads`;
//! * `prompt`: the prompt-mode entry point (stripping, shape of the body, stack use);
//! * `lexer`: CPython 3.11's tokenizer; `ast`: the syntax tree; `parser`: a
//!   recursive-descent parser for Python 3.11 expressions;
//! * `resolve`: BFCL's `resolve_ast_by_type`; `val`: Python values and dict keys;
//! * `eval`: binary and unary operations, as Python computes them;
//! * `int`: Python's int semantics over the `num-bigint` crate;
//! * `repr`: Python's `repr` of str, bytes, float and complex;
//!   `unparse`: `ast.unparse`.
//!
//! # Stack use
//! Nothing here can overflow the caller's stack, even on hostile input in a debug
//! build. The JSON parser is iterative. The Python tokenizer is iterative, and from its
//! tokens an upper bound of the parser's recursion is known. Ordinary outputs are
//! parsed in place (well under 0.5 MiB of stack). Deeper ones are parsed on a scoped
//! thread with a 64 MiB reserved stack. Expression trees are bounded, so every
//! recursive walk of them is bounded too.
//!
//! # `attempt` on failure
//! [`Decoded::Failed::attempt`](Decoded::Failed) separates "tried to call a function
//! but BFCL could not decode it" from "answered in prose". BFCL scores both as "no
//! call"; toolgauge's default (non-strict) checker counts an attempt as a call on
//! irrelevance items (see `checker`).
//! * FC: the result is a list with at least one object whose first key is a non-empty
//!   string (a function name), e.g. `[{"f": "{bad json"}]` or `[{"f": {"a": 1}}]`.
//!   A text result, `[{}]` or `["x"]` is not an attempt.
//! * Prompt: the text, after BFCL's strip of `` ` ``, `\n` and space, matches
//!   `^\[?\s*NAME(\.NAME)*\(`: an optional `[`, optional whitespace, then a dotted
//!   identifier followed directly by `(`. `I can't help with that` is not an attempt.
//!
//! # Limits and known differences from BFCL
//! Limits guard against hostile input. Where they bite, decoding fails and BFCL might
//! not:
//! * More than 200 nested brackets fail, as in CPython's tokenizer (exact).
//!   Expression trees deeper than 300 fail (long operator, attribute or unary chains):
//!   BFCL's own limit there comes from Python's recursion limit and its call stack,
//!   about 300 to 350 for operator chains, about 2,500 for unary chains in positional
//!   arguments. JSON nested deeper than 900 fails (CPython: about 990).
//! * Integers beyond 32,768 bits and sequence repetitions beyond 2^20 items fail.
//! * `\N{...}` string escapes fail (no Unicode name table).
//! * Identifiers are not NFKC-normalised (CPython normalises non-ASCII names).
//! * Python strings can hold lone surrogates (`"\ud800"`); here each becomes U+FFFD.
//! * A binary operation is evaluated only over literals, containers, unary and binary
//!   operations. BFCL runs `eval`, so names from its module (builtins, constants),
//!   calls, subscripts, comparisons, conditionals, f-strings, `%` formatting and
//!   complex `**` (also a negative float to a fractional power) can succeed there and
//!   fail here.
//! * f-strings are accepted, without checking their contents, only where BFCL never
//!   looks at them (positional arguments). Anywhere else they fail, as they do in BFCL,
//!   except inside the `ast.unparse` text of a nested call, where BFCL succeeds.
//! * `repr` of non-ASCII characters follows the `regex` crate's Unicode tables, which
//!   may be newer than CPython 3.11's Unicode 14.

mod ast;
mod call_text;
mod eval;
mod fc;
mod int;
mod json;
mod lexer;
mod parser;
mod prompt;
mod repr;
mod resolve;
#[cfg(test)]
mod testing;
mod unparse;
mod val;

pub use call_text::{CallText, parse_call_text};
pub use fc::decode_fc;
pub use json::python_json_loads;
pub use prompt::decode_prompt;

use super::value::Decoded;

/// Deepest JSON nesting accepted. CPython raises RecursionError at about 990, which
/// depends on its call stack. No real answer comes close.
const JSON_MAX_DEPTH: usize = 900;
/// CPython's tokenizer allows at most 200 open brackets (`MAXLEVEL`).
const MAX_BRACKETS: usize = 200;
/// Deepest expression tree accepted: above the ~200 levels that 200 brackets allow, and
/// close to where BFCL's own recursion in `ast.unparse`/`eval` gives up on long operator
/// or attribute chains (about 300 to 350). Bounding the tree keeps every recursive walk
/// of it (resolver, evaluator, unparser, drop) stack-safe.
const MAX_DEPTH: u32 = 300;
/// Deepest parser recursion accepted (each bracket level costs about two).
const MAX_PARSE_RECURSION: u32 = 1000;
/// Texts whose [`recursion_bound`](prompt::recursion_bound) is at most this are decoded on the caller's stack
/// (well under 0.5 MiB even in debug builds); deeper ones on a thread of their own.
const SMALL_NESTING: usize = 32;
/// Stack of that thread (reserved, committed only as used). The worst accepted input
/// needs about 5 MiB in a debug build, under 1 MiB in release.
const BIG_STACK: usize = 64 << 20;
/// Largest integer handled, in bits. The decimal literal limit below is far smaller.
const MAX_INT_BITS: u64 = 1 << 15;
/// Longest sequence a repetition (`"a" * n`, `[0] * n`) may build.
const MAX_SEQ_LEN: usize = 1 << 20;
/// CPython 3.11's `sys.get_int_max_str_digits()` default, which limits decimal
/// literals, `json.loads` integers and `repr(int)`.
const INT_MAX_STR_DIGITS: usize = 4300;

type PResult<T> = Result<T, String>;

fn failed(reason: impl Into<String>, attempt: bool) -> Decoded {
    Decoded::Failed {
        reason: reason.into(),
        attempt,
    }
}

/// CPython's error for an int with more than [`INT_MAX_STR_DIGITS`] decimal digits.
fn int_limit_message(digits: usize) -> String {
    format!(
        "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
         value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
    )
}
