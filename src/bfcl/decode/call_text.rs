//! One call as BFCL's multi-turn executor runs it: the call string (`cd(folder='docs')`,
//! `sort('final_report.pdf')`) read as Python source and `eval`-ed against the backend
//! instances. Here it is read into the method's name and the values of its positional
//! and keyword arguments, with Python's own semantics for the values (a unary minus
//! negates, `1 + 2` is 3), unlike the prompt decoder's, which reproduces BFCL's AST
//! checker and drops positional arguments.

use super::ast::Kind;
use super::eval::eval;
use super::lexer::tokenize;
use super::parser::Parser;
use super::prompt::{on_big_stack, recursion_bound};
use super::{PResult, SMALL_NESTING};
use crate::bfcl::value::PyValue;

/// A call string read: the method and its arguments, in the order written.
#[derive(Debug, Clone)]
pub struct CallText {
    /// The method name.
    pub name: String,
    /// Positional arguments.
    pub args: Vec<PyValue>,
    /// Keyword arguments.
    pub kwargs: Vec<(String, PyValue)>,
}

/// Read `text`, one call of a method by its bare name with literal arguments (what
/// BFCL's handlers write: `name(k=repr(v), ...)`, or a prompt model's parsed call). A
/// name used as a value, a nested call, `*args` or `**kwargs` are refused with why:
/// BFCL would evaluate them as Python, which no backend call needs.
pub fn parse_call_text(text: &str) -> PResult<CallText> {
    let text = text.trim();
    if text.contains('\0') {
        return Err("invalid Python: source code string cannot contain null bytes".into());
    }
    let src = if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_string()
    };
    let toks = tokenize(&src).map_err(|e| format!("invalid Python: {e}"))?;
    if recursion_bound(&toks) <= SMALL_NESTING {
        read(toks)
    } else {
        on_big_stack(move || read(toks))
    }
}

fn read(toks: Vec<super::lexer::Tok>) -> PResult<CallText> {
    let body = Parser::new(toks)
        .parse_eval()
        .map_err(|e| format!("invalid Python: {e}"))?;
    let Kind::Call(call) = &body.kind else {
        return Err(format!("not a call but {}", body.kind.type_name()));
    };
    let Kind::Name(name) = &call.func.kind else {
        return Err(format!(
            "the called object is {}, not a method name",
            call.func.kind.type_name()
        ));
    };
    let value = |e: &super::ast::Expr| -> PResult<PyValue> {
        match &e.kind {
            Kind::Name(n) => Err(format!("name '{n}' is not defined")),
            Kind::Starred(_) => Err("`*args` in a call is not supported".into()),
            _ => eval(e).map(|v| v.into_py()),
        }
    };
    let args = call.args.iter().map(value).collect::<PResult<Vec<_>>>()?;
    let mut kwargs = Vec::with_capacity(call.keywords.len());
    for (k, v) in &call.keywords {
        let Some(k) = k else {
            return Err("`**kwargs` in a call is not supported".into());
        };
        kwargs.push((k.clone(), value(v)?));
    }
    Ok(CallText {
        name: name.clone(),
        args,
        kwargs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use PyValue::{Float, Int, Str};

    #[test]
    fn keyword_positional_and_python_values() {
        let c = parse_call_text("add(a=1,b=-2.5)").unwrap();
        assert_eq!(c.name, "add");
        assert!(c.args.is_empty());
        assert_eq!(c.kwargs.len(), 2);
        assert!(matches!(c.kwargs[0], (ref k, Int(1)) if k == "a"));
        assert!(matches!(c.kwargs[1], (ref k, Float(x)) if k == "b" && x == -2.5));
        let c = parse_call_text("sort('final_report.pdf')").unwrap();
        assert!(matches!(&c.args[..], [Str(s)] if s == "final_report.pdf"));
        let c = parse_call_text(" mean(numbers=[1, 2, 3]) ").unwrap();
        assert!(matches!(&c.kwargs[0].1, PyValue::List(v) if v.len() == 3));
        // Python's arithmetic, not BFCL's checker's negation of every unary operator.
        let c = parse_call_text("f(x=+5, y=1+2)").unwrap();
        assert!(matches!(c.kwargs[0].1, Int(5)));
        assert!(matches!(c.kwargs[1].1, Int(3)));
    }

    #[test]
    fn what_no_backend_call_needs_is_refused_with_why() {
        for (text, why) in [
            ("add(a=x)", "name 'x' is not defined"),
            ("add(*xs)", "`*args`"),
            ("add(**kw)", "`**kwargs`"),
            ("obj.add(a=1)", "not a method name"),
            ("[add(a=1)]", "not a call"),
            ("add(a=1", "invalid Python"),
        ] {
            let e = parse_call_text(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
