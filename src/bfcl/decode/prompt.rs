//! Prompt models' text: BFCL's stripping, the shape of the parsed body (one call or a
//! list of calls), and where the parse runs (in place or on a thread with a big stack).

use std::sync::LazyLock;

use regex::Regex;

use super::ast::{Call, Kind};
use super::lexer::{Tok, tokenize};
use super::parser::Parser;
use super::resolve::Resolver;
use super::{BIG_STACK, PResult, SMALL_NESTING, failed};
use crate::bfcl::value::{Decoded, PyValue};

/// Decodes a prompt model's text the way BFCL's `default_decode_ast_prompting` does
/// (prompt models).
///
/// 1. Strip `` ` ``, `\n` and space from both ends; add `[` and `]` where missing.
/// 2. Parse as a Python 3.11 expression. The body must be one call, or a list or tuple
///    whose elements are all calls.
/// 3. Each call gives `(dotted name, kwargs dict)`; positional arguments are dropped
///    (they must still be valid Python). A `**expr` keyword is stored under key `None`.
/// 4. Keyword values, recursively:
///    * literals: str (all quote styles, prefixes, escapes, implicit concatenation),
///      int (any base, underscores), float, True/False/None; bytes and complex become
///      [`PyValue::Other`] (`bytes`, `complex`) with their Python `repr`, ints beyond
///      i128 `Other { type_name: "int" }` with their decimal text; `...` → `"..."`;
///    * list, tuple, dict (keys must be hashable; equal keys merge as in Python);
///    * a unary operator on a literal: see `strict` below; on anything else it fails;
///    * a binary operation is evaluated (numbers, `+` and `*` on sequences, `|` on
///      dicts); any name in it fails;
///    * a bare name → its identifier as a string (`true` → `"true"`);
///    * a call with keywords → `{name: {kwargs}}`; without → its `ast.unparse` text;
///    * a subscript → `ast.unparse(value) + "[" + ast.unparse(slice) + "]"`;
///    * anything else (attribute, set, f-string, comparison, lambda, ...) fails.
///
/// `strict` reproduces BFCL's defect that every unary operator yields the negated
/// operand: `+5` → -5, `~5` → -5, `not 5` → -5, `-True` → -1, `not "x"` fails.
/// Without `strict`, the operator means what Python means (`+5` → 5, `~5` → -6,
/// `not "x"` → False). Everything else is identical in both modes, including the rule
/// that the operand must be a literal, and Python semantics inside binary operations.
///
/// On failure, `attempt` is set when the stripped text starts like a call (module docs).
pub fn decode_prompt(text: &str, strict: bool) -> Decoded {
    let stripped = text.trim_matches(|c| matches!(c, '`' | '\n' | ' '));
    match decode_prompt_text(stripped, strict) {
        Ok(calls) => Decoded::Calls(calls),
        Err(reason) => failed(reason, looks_like_call(stripped)),
    }
}

static CALL_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[?\s*[\p{XID_Start}_]\p{XID_Continue}*(?:\.[\p{XID_Start}_]\p{XID_Continue}*)*\(",
    )
    .expect("the call-start pattern is valid")
});

fn looks_like_call(stripped: &str) -> bool {
    CALL_START.is_match(stripped)
}

fn decode_prompt_text(stripped: &str, strict: bool) -> PResult<Vec<(String, PyValue)>> {
    let mut src = String::with_capacity(stripped.len() + 2);
    if !stripped.starts_with('[') {
        src.push('[');
    }
    src.push_str(stripped);
    if !src.ends_with(']') {
        src.push(']');
    }
    // `ast_parse` then strips whitespace and `'`: a no-op on text that starts with `[`
    // and ends with `]`.
    if src.contains('\0') {
        return Err("invalid Python: source code string cannot contain null bytes".into());
    }
    // CPython's tokenizer reads `\r\n` and `\r` as `\n`, inside string literals too.
    let src = if src.contains('\r') {
        src.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        src
    };
    let toks = tokenize(&src).map_err(|e| format!("invalid Python: {e}"))?;
    if recursion_bound(&toks) <= SMALL_NESTING {
        parse_and_resolve(toks, strict)
    } else {
        on_big_stack(move || parse_and_resolve(toks, strict))
    }
}

/// An upper bound on the parser's recursion for these tokens: about two levels per open
/// bracket, plus one for every token that can start a nested chain (prefix operators,
/// `**`, `else`, `lambda`...). Binary operator chains are parsed in a loop.
pub(super) fn recursion_bound(toks: &[Tok]) -> usize {
    let mut depth = 0usize;
    let mut max_depth = 0;
    let mut chains = 0;
    for t in toks {
        match t {
            Tok::Op("(" | "[" | "{") => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
            Tok::Op("-" | "+" | "~" | "*" | "**") => chains += 1,
            Tok::Name(n) if matches!(n.as_str(), "not" | "else" | "lambda" | "yield" | "await") => {
                chains += 1;
            }
            _ => {}
        }
    }
    2 * (max_depth + 1) + chains
}

/// Runs `f` on a scoped thread with a [`BIG_STACK`] stack (reserved, not committed), so
/// that deeply nested input cannot overflow the caller's stack, debug builds included.
pub(super) fn on_big_stack<T: Send>(f: impl FnOnce() -> PResult<T> + Send) -> PResult<T> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("bfcl-decode".into())
            .stack_size(BIG_STACK)
            .spawn_scoped(scope, f)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| Err("the decoding thread failed".into())),
            Err(e) => Err(format!("cannot start a decoding thread: {e}")),
        }
    })
}

fn parse_and_resolve(toks: Vec<Tok>, strict: bool) -> PResult<Vec<(String, PyValue)>> {
    let body = Parser::new(toks)
        .parse_eval()
        .map_err(|e| format!("invalid Python: {e}"))?;
    let calls: Vec<&Call> = match &body.kind {
        Kind::Call(call) => vec![call],
        Kind::List(elts) | Kind::Tuple(elts) => elts
            .iter()
            .map(|e| match &e.kind {
                Kind::Call(call) => Ok(&**call),
                other => Err(format!(
                    "element is not a function call but {}",
                    other.type_name()
                )),
            })
            .collect::<PResult<_>>()?,
        other => {
            return Err(format!(
                "the text is not a list of calls but {}",
                other.type_name()
            ));
        }
    };
    let resolver = Resolver { strict };
    calls
        .into_iter()
        .map(|call| {
            let (name, args) = resolver
                .call(call)
                .map_err(|e| format!("cannot decode an argument: {e}"))?;
            Ok((name, args.into_py()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use super::*;
    use crate::bfcl::decode::testing::*;
    use crate::bfcl::decode::{decode_fc, python_json_loads};
    use crate::bfcl::value::PyValue;
    use PyValue::Int;
    use serde_json::json;

    #[test]
    fn top_level_shapes() {
        assert_eq!(calls("").len(), 0);
        assert_eq!(calls("[]").len(), 0);
        assert_eq!(calls("``````").len(), 0);
        assert_eq!(calls("f(a=1), g(b=2)").len(), 2);
        assert_eq!(calls("[f(a=1),]").len(), 1);
        assert_eq!(calls("\n\nf(a=1)\n\n").len(), 1);
        assert_eq!(calls("`f(a=1)`").len(), 1);
        assert_eq!(calls("f(a=1)\r\n").len(), 1);
        // The comment swallows the `]` BFCL appends.
        assert_eq!(calls("[f(a=1)] # done").len(), 1);
        assert_eq!(calls("[f(a=1)]\n  # indented comment").len(), 1);
        for text in [
            "[f(a=1)][0]",
            "[1, f(a=1)]",
            "[f, g(a=1)]",
            "[f(a=1) for f in x]",
            "{f(a=1)}",
            "[f(a=1)], [g(b=2)]",
            "(f(a=1), g(b=2))",
            "'f(a=1)'",
            "f(a=1)\ng(b=2)",
            "42",
            "None",
        ] {
            fails(text);
        }
    }

    #[test]
    fn code_fence_with_language_tag() {
        // BFCL strips the backticks, leaving `python\n[...]`: a subscript, so it fails.
        let (_, attempt) = fails("```python\n[get_weather(city='Paris')]\n```");
        assert!(!attempt);
    }

    #[test]
    fn prompt_attempt_rule() {
        for text in [
            "get_weather(city='Paris'",
            "[get_weather(city='Paris')] Let me know!",
            "[ get.weather(x=1) and",
            "[\n  f(a=x.y)]",
            "f(a=1)(b=2",
        ] {
            let (_, attempt) = fails(text);
            assert!(attempt, "{text}");
        }
        for text in [
            "I cannot help with that.",
            "Sure! [get_weather(city='Paris')]",
            "get weather(city='x')",
            "[1, f(a=1)]",
            "None",
            "```python\n[get_weather(city='Paris')]\n```",
        ] {
            let (_, attempt) = fails(text);
            assert!(!attempt, "{text}");
        }
    }

    #[test]
    fn nesting_limits() {
        // CPython's tokenizer allows 200 open brackets, the added `[` included.
        let nested = |n: usize| format!("f(a={}1{})", "[".repeat(n), "]".repeat(n));
        assert!(matches!(
            decode_prompt(&nested(198), true),
            Decoded::Calls(_)
        ));
        let (reason, attempt) = fails(&nested(199));
        assert!(reason.contains("too many nested parentheses") && attempt);
        assert!(matches!(
            decode_prompt(&"[".repeat(200), true),
            Decoded::Failed { .. }
        ));
        let dicts = |n: usize| format!("f(a={}1{})", "{'k': ".repeat(n), "}".repeat(n));
        assert!(matches!(
            decode_prompt(&dicts(198), true),
            Decoded::Calls(_)
        ));
        fails(&dicts(199));
        // Long chains build deep trees.
        fails(&format!("f(a={})", vec!["1"; 400].join("+")));
        assert!(matches!(arg(&vec!["1"; 250].join("+")), Int(250)));
        fails(&format!("f({}1)", "-".repeat(100_000)));
        fails(&format!("f(a=g{}(1))", ".x".repeat(100_000)));
        fails(&format!("f(a={})", "not ".repeat(100_000)));
        // JSON.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(python_json_loads(&deep(900)).is_ok());
        assert!(loads_err(&deep(901)).contains("maximum recursion depth"));
    }

    #[test]
    fn huge_inputs_fail_fast() {
        let megabyte_of_brackets = "[".repeat(1 << 20);
        fails(&megabyte_of_brackets);
        assert!(python_json_loads(&megabyte_of_brackets).is_err());
        assert!(python_json_loads(&"{\"a\":".repeat(1 << 18)).is_err());
        fails(&format!("f(a='{}", "x".repeat(1 << 20)));
        fails(&format!("f(a='''{}", "x\n".repeat(1 << 19)));
        assert!(python_json_loads(&format!("\"{}", "x".repeat(1 << 20))).is_err());
        fails(&format!("f(a=0x{})", "f".repeat(1 << 20)));
        fails(&format!("f(a={})", "9".repeat(1 << 20)));
        fails("f(a=2**10**9)");
        fails("f(a=1<<10**9)");
        fails("f(a='x'*10**9)");
        fails("f(a=[0]*10**9)");
        fails("f(a=10**10**10)");
        assert!(python_json_loads(&"9".repeat(1 << 20)).is_err());
        // Large but well-formed input decodes.
        let many = format!(
            "[{}]",
            (0..5000)
                .map(|i| format!("f{i}(a={i})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert_eq!(calls(&many).len(), 5000);
        let wide = format!(
            "f(a={{{}}})",
            (0..20000)
                .map(|i| format!("{i}: {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(matches!(arg(&wide[4..wide.len() - 1]), PyValue::Dict(d) if d.len() == 20000));
    }

    #[test]
    fn worst_cases_fit_a_small_stack() {
        // On a stack far below the 2 MiB of spawned or tokio threads, debug build
        // included: deep input moves to a thread of its own, JSON parsing is iterative,
        // and what stays on the caller's stack is bounded.
        let run = || {
            let nested = |open: &str, close: &str, n: usize| {
                format!("f(a={}1{})", open.repeat(n), close.repeat(n))
            };
            let chain = |op: &str, n: usize| vec!["x"; n].join(op);
            let inputs = [
                nested("[", "]", 197),
                nested("(", ")", 197),
                nested("{'k': ", "}", 197),
                nested("g(x=", ")", 197),
                format!("f(a=g({}))", nested("[", "]", 195)),
                // Just under the in-place threshold.
                nested("[", "]", 14),
                format!("f(a=g({}))", nested("(", ")", 13)),
                format!("f(a={}1)", "-".repeat(28)),
                // Chains the parser reads in a loop, walked recursively afterwards.
                format!("f(a=1/{})", chain("/", 298)),
                format!("f(a=g({}))", chain("|", 298)),
                format!("f(a=g{}(1))", ".x".repeat(298)),
                format!("f(a=x{})", "[0]".repeat(298)),
                format!("f({}1)", "-".repeat(100_000)),
                format!("f(a={})", "not ".repeat(100_000)),
                "[".repeat(1 << 20),
            ];
            // The first seven are within the limits (under 200 brackets) and decode; the
            // rest fail, each for a reason of its own: nested unary minus (the operand
            // must be a literal), arithmetic on names, an attribute call, subscripts, and
            // the three beyond every limit.
            let decoded: Vec<bool> = inputs
                .iter()
                .map(|text| matches!(decode_prompt(text, true), Decoded::Calls(_)))
                .collect();
            let mut want = vec![true; 7];
            want.resize(inputs.len(), false);
            assert_eq!(decoded, want);
            let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
            assert!(python_json_loads(&deep(900)).is_ok());
            // 900 objects opened and none given a value: Python stops at the end.
            assert_eq!(
                python_json_loads(&"{\"a\":".repeat(900)).err().as_deref(),
                Some("Expecting value: line 1 column 4501 (char 4500)")
            );
            assert!(matches!(
                decode_fc(&json!([{"f": format!("{{\"a\": {}}}", deep(899))}])),
                Decoded::Calls(c) if c.len() == 1
            ));
        };
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(run)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
    }
}
