//! BFCL's `resolve_ast_call` / `resolve_ast_by_type`: a call's name and keyword
//! arguments as Python values.

use super::PResult;
use super::ast::{Call, Const, Expr, Kind, UnOp};
use super::eval::{eval, unary};
use super::unparse::unparse_text;
use super::val::{DictBuilder, Val, const_value};

/// BFCL's resolution of one call's arguments.
pub(super) struct Resolver {
    /// Every unary operator negates its operand (BFCL's defect, see `decode_prompt`).
    pub(super) strict: bool,
}

impl Resolver {
    /// `resolve_ast_call`: the dotted name and the keyword arguments.
    pub(super) fn call(&self, call: &Call) -> PResult<(String, Val)> {
        let mut parts = Vec::new();
        let mut f = &call.func;
        while let Kind::Attribute(value, attr) = &f.kind {
            parts.push(attr.as_str());
            f = value;
        }
        if let Kind::Name(id) = &f.kind {
            parts.push(id);
        }
        parts.reverse();
        let mut args = DictBuilder::default();
        for (name, value) in &call.keywords {
            let key = name.as_ref().map_or(Val::None, |n| Val::Str(n.clone()));
            args.insert(key, self.value(value)?)?;
        }
        Ok((parts.join("."), Val::Dict(args.finish())))
    }

    /// `resolve_ast_by_type`.
    fn value(&self, e: &Expr) -> PResult<Val> {
        match &e.kind {
            Kind::Const(Const::Ellipsis) => Ok(Val::Str("...".into())),
            Kind::Const(c) => Ok(const_value(c)),
            Kind::Unary(op, operand) => {
                // BFCL reads `operand.value`: only a constant has a plain value there.
                let Kind::Const(c) = &operand.kind else {
                    return Err(format!(
                        "unary operator on {}, not a literal",
                        operand.kind.type_name()
                    ));
                };
                let v = const_value(c);
                if self.strict {
                    unary(UnOp::Neg, v)
                } else {
                    unary(*op, v)
                }
            }
            Kind::List(elts) => elts
                .iter()
                .map(|x| self.value(x))
                .collect::<PResult<_>>()
                .map(Val::List),
            Kind::Tuple(elts) => elts
                .iter()
                .map(|x| self.value(x))
                .collect::<PResult<_>>()
                .map(Val::Tuple),
            Kind::Dict(items) => {
                let mut d = DictBuilder::default();
                for (k, v) in items {
                    let Some(k) = k else {
                        return Err("Unsupported AST type: NoneType (a ** entry)".into());
                    };
                    let k = self.value(k)?;
                    d.insert(k, self.value(v)?)?;
                }
                Ok(Val::Dict(d.finish()))
            }
            Kind::Bin(..) => eval(e),
            Kind::Name(id) => Ok(Val::Str(id.clone())),
            Kind::Call(call) if call.keywords.is_empty() => unparse_text(e).map(Val::Str),
            Kind::Call(call) => {
                let (name, args) = self.call(call)?;
                Ok(Val::Dict(vec![(Val::Str(name), args)]))
            }
            Kind::Lambda(_) => Err("a lambda cannot be decoded".into()),
            Kind::Subscript(value, slice) => Ok(Val::Str(format!(
                "{}[{}]",
                unparse_text(value)?,
                unparse_text(slice)?
            ))),
            other => Err(format!("Unsupported AST type: {}", other.type_name())),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use crate::bfcl::decode::testing::*;
    use crate::bfcl::value::PyValue;
    use PyValue::{Bool, Float, Int, List, Tuple};

    #[test]
    fn constants_and_names() {
        check("True", Bool(true));
        check("False", Bool(false));
        check("None", PyValue::None);
        check("...", s("..."));
        check("x", s("x"));
        check("true", s("true"));
        check("null", s("null"));
        check("match", s("match"));
        check("café", s("café"));
        check("Ellipsis", s("Ellipsis"));
    }

    #[test]
    fn containers() {
        check("[]", List(vec![]));
        check("()", Tuple(vec![]));
        check("{}", dict(vec![]));
        check("(1,)", Tuple(vec![Int(1)]));
        check("(1, 'a')", Tuple(vec![Int(1), s("a")]));
        check("(1)", Int(1));
        check(
            "[1, [2, (3,)]]",
            List(vec![Int(1), List(vec![Int(2), Tuple(vec![Int(3)])])]),
        );
        check(
            "{'a': {'b': [1, 2.5]}}",
            dict(vec![(
                s("a"),
                dict(vec![(s("b"), List(vec![Int(1), Float(2.5)]))]),
            )]),
        );
        // Equal keys merge: first key, last value.
        check(
            "{1: 'a', 1.0: 'b', True: 'c'}",
            dict(vec![(Int(1), s("c"))]),
        );
        check(
            "{'k': 1, 'j': 0, 'k': 2}",
            dict(vec![(s("k"), Int(2)), (s("j"), Int(0))]),
        );
        check(
            "{(1, 2): 3, None: 4}",
            dict(vec![
                (Tuple(vec![Int(1), Int(2)]), Int(3)),
                (PyValue::None, Int(4)),
            ]),
        );
        for expr in [
            "{[1]: 2}",
            "{{}: 2}",
            "{**b}",
            "{1, 2}",
            "[*a]",
            "{g(x=1): 2}",
        ] {
            arg_fails(expr);
        }
    }

    #[test]
    fn unary_strict_negates_whatever_the_operator() {
        check("+5", Int(-5));
        check("-5", Int(-5));
        check("~5", Int(-5));
        check("not 5", Int(-5));
        check("not 0", Int(0));
        check("-True", Int(-1));
        check("+True", Int(-1));
        check("+1.5", Float(-1.5));
        check("-(5)", Int(-5));
        check("-0.0", Float(-0.0));
        check("+5j", other("complex", "(-0-5j)"));
        for expr in [
            "not 'x'", "-'x'", "-None", "-...", "-b'x'", "--5", "-x", "-(1+2)", "-[1]", "-a.b",
        ] {
            arg_fails(expr);
        }
    }

    #[test]
    fn unary_lenient_means_what_python_means() {
        let lenient = |e| arg_mode(e, false);
        assert!(same(&lenient("+5"), &Int(5)));
        assert!(same(&lenient("-5"), &Int(-5)));
        assert!(same(&lenient("~5"), &Int(-6)));
        assert!(same(&lenient("not 5"), &Bool(false)));
        assert!(same(&lenient("not 'x'"), &Bool(false)));
        assert!(same(&lenient("not None"), &Bool(true)));
        assert!(same(&lenient("+True"), &Int(1)));
        assert!(same(&lenient("~True"), &Int(-2)));
        assert!(same(&lenient("+1.5"), &Float(1.5)));
        // The operand must still be a literal.
        fails_mode("f(a=--5)", false);
        fails_mode("f(a=~1.5)", false);
        fails_mode("f(a=-'x')", false);
        // Only unary operators differ.
        assert!(same(&lenient("1 - -1"), &Int(2)));
        assert!(same(&lenient("[+5, x]"), &List(vec![Int(5), s("x")])));
    }

    #[test]
    fn calls_names_and_arguments() {
        let c = calls("[f(a=1), m.n.g(b='x'), f(a=1)]");
        let names: Vec<&str> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f", "m.n.g", "f"]);
        // Positional arguments are dropped (but must be valid Python).
        let c = calls("f(1, x, *y, lambda q: q, (x for x in y), a=3)");
        assert!(same(&c[0].1, &dict(vec![(s("a"), Int(3))])));
        // A repeated keyword keeps the last value.
        assert!(same(
            &calls("f(a=1, b=0, a=2)")[0].1,
            &dict(vec![(s("a"), Int(2)), (s("b"), Int(0))])
        ));
        // `**mapping` is stored under None.
        assert!(same(
            &calls("f(**{'a': 1})")[0].1,
            &dict(vec![(PyValue::None, dict(vec![(s("a"), Int(1))]))])
        ));
        // The name is the attribute chain up to the first non-name.
        assert_eq!(calls("g()(x=1)")[0].0, "");
        assert_eq!(calls("a[0].b(x=1)")[0].0, "b");
        assert_eq!(calls("(f)(x=1)")[0].0, "f");
        assert_eq!(calls("café.naïve(x=1)")[0].0, "café.naïve");
        assert!(same(&calls("f()")[0].1, &dict(vec![])));
    }

    #[test]
    fn unsupported_values_fail() {
        for expr in [
            "x.y",
            "{1}",
            "f'{x}'",
            "a == b",
            "a and b",
            "a if b else c",
            "lambda: 1",
            "[x for x in y]",
            "(x for x in y)",
            "(b := 1)",
            "await x",
            "*b",
        ] {
            arg_fails(expr);
        }
    }
}
