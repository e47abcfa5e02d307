//! Python's `ast.unparse`, for nested calls and subscripts that BFCL turns into text.

use super::ast::{BinOp, CmpOp, CompKind, Const, Expr, Kind, Lambda, UnOp, op_symbol};
use super::repr::{bytes_repr, complex_repr, float_repr, str_repr};
use super::{INT_MAX_STR_DIGITS, PResult, int_limit_message};

/// `ast.unparse` precedences (`ast._Precedence`).
const P_NAMED: u8 = 1;
const P_TUPLE: u8 = 2;
const P_YIELD: u8 = 3;
const P_TEST: u8 = 4;
const P_OR: u8 = 5;
const P_AND: u8 = 6;
const P_NOT: u8 = 7;
const P_CMP: u8 = 8;
const P_EXPR: u8 = 9;
const P_BXOR: u8 = 10;
const P_BAND: u8 = 11;
const P_SHIFT: u8 = 12;
const P_ARITH: u8 = 13;
const P_TERM: u8 = 14;
const P_FACTOR: u8 = 15;
const P_POWER: u8 = 16;
const P_AWAIT: u8 = 17;
const P_ATOM: u8 = 18;

fn next_p(p: u8) -> u8 {
    (p + 1).min(P_ATOM)
}

/// `ast.unparse(e)`.
pub(super) fn unparse_text(e: &Expr) -> PResult<String> {
    let mut out = String::new();
    unparse(e, P_TEST, &mut out)?;
    Ok(out)
}

/// CPython's `ast.unparse` writes floats with `repr`, with inf spelled `1e309`.
fn float_literal(repr: String) -> String {
    repr.replace("inf", "1e309").replace("nan", "(1e309-1e309)")
}

fn unparse_const(c: &Const, out: &mut String) -> PResult<()> {
    match c {
        Const::None => out.push_str("None"),
        Const::Bool(true) => out.push_str("True"),
        Const::Bool(false) => out.push_str("False"),
        Const::Ellipsis => out.push_str("..."),
        Const::Int(i) => {
            let s = i.to_string();
            if s.len() > INT_MAX_STR_DIGITS {
                return Err(int_limit_message(s.len()));
            }
            out.push_str(&s);
        }
        Const::Float(f) => out.push_str(&float_literal(float_repr(*f, true))),
        Const::Imag(f) => out.push_str(&float_literal(complex_repr(0.0, *f))),
        Const::Str { value, u } => {
            if *u {
                out.push('u');
            }
            out.push_str(&str_repr(value));
        }
        Const::Bytes(b) => out.push_str(&bytes_repr(b)),
    }
    Ok(())
}

/// Writes `items` separated by `, `, with a trailing comma for a single item.
fn items_view(items: &[Expr], out: &mut String) -> PResult<()> {
    if let [only] = items {
        unparse(only, P_TEST, out)?;
        out.push(',');
        return Ok(());
    }
    join(items, out)
}

fn join(items: &[Expr], out: &mut String) -> PResult<()> {
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        unparse(item, P_TEST, out)?;
    }
    Ok(())
}

fn bin_precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Add | BinOp::Sub => P_ARITH,
        BinOp::Mult | BinOp::MatMult | BinOp::Div | BinOp::Mod | BinOp::FloorDiv => P_TERM,
        BinOp::LShift | BinOp::RShift => P_SHIFT,
        BinOp::BitOr => P_EXPR,
        BinOp::BitXor => P_BXOR,
        BinOp::BitAnd => P_BAND,
        BinOp::Pow => P_POWER,
    }
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::NotEq => "!=",
        CmpOp::Lt => "<",
        CmpOp::LtE => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtE => ">=",
        CmpOp::Is => "is",
        CmpOp::IsNot => "is not",
        CmpOp::In => "in",
        CmpOp::NotIn => "not in",
    }
}

fn unparse_param(name: &str, default: &Option<Expr>, out: &mut String) -> PResult<()> {
    out.push_str(name);
    if let Some(d) = default {
        out.push('=');
        unparse(d, P_TEST, out)?;
    }
    Ok(())
}

/// `visit_arguments` of `ast._Unparser`.
fn unparse_lambda_args(l: &Lambda, out: &mut String) -> PResult<()> {
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(", ");
        }
        first = false;
    };
    let positional = l.posonly.iter().chain(&l.args);
    for (k, (name, default)) in positional.enumerate() {
        sep(out);
        unparse_param(name, default, out)?;
        if k + 1 == l.posonly.len() {
            out.push_str(", /");
        }
    }
    if l.vararg.is_some() || !l.kwonly.is_empty() {
        sep(out);
        out.push('*');
        if let Some(v) = &l.vararg {
            out.push_str(v);
        }
    }
    for (name, default) in &l.kwonly {
        out.push_str(", ");
        unparse_param(name, default, out)?;
    }
    if let Some(k) = &l.kwarg {
        sep(out);
        out.push_str("**");
        out.push_str(k);
    }
    Ok(())
}

/// Port of `ast._Unparser`: `prec` is the precedence the parent set on this node
/// (`P_TEST` when it set none), and decides the parentheses.
fn unparse(e: &Expr, prec: u8, out: &mut String) -> PResult<()> {
    let open = |needed: bool, out: &mut String| {
        if needed {
            out.push('(');
        }
    };
    let close = |needed: bool, out: &mut String| {
        if needed {
            out.push(')');
        }
    };
    match &e.kind {
        Kind::Const(c) => unparse_const(c, out)?,
        Kind::FStr => return Err("f-strings cannot be unparsed here".into()),
        Kind::Name(id) => out.push_str(id),
        Kind::Attribute(value, attr) => {
            unparse(value, P_ATOM, out)?;
            // `1 .real`: `1.real` would read as a float.
            if matches!(value.kind, Kind::Const(Const::Int(_))) {
                out.push(' ');
            }
            out.push('.');
            out.push_str(attr);
        }
        Kind::Call(call) => {
            unparse(&call.func, P_ATOM, out)?;
            out.push('(');
            let mut first = true;
            for arg in &call.args {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                unparse(arg, P_TEST, out)?;
            }
            for (name, value) in &call.keywords {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                match name {
                    Some(n) => {
                        out.push_str(n);
                        out.push('=');
                    }
                    None => out.push_str("**"),
                }
                unparse(value, P_TEST, out)?;
            }
            out.push(')');
        }
        Kind::Subscript(value, slice) => {
            unparse(value, P_ATOM, out)?;
            out.push('[');
            match &slice.kind {
                Kind::Tuple(items) if !items.is_empty() => items_view(items, out)?,
                _ => unparse(slice, P_TEST, out)?,
            }
            out.push(']');
        }
        Kind::Slice(lower, upper, step) => {
            if let Some(l) = lower {
                unparse(l, P_TEST, out)?;
            }
            out.push(':');
            if let Some(u) = upper {
                unparse(u, P_TEST, out)?;
            }
            if let Some(s) = step {
                out.push(':');
                unparse(s, P_TEST, out)?;
            }
        }
        Kind::Starred(value) => {
            out.push('*');
            unparse(value, P_EXPR, out)?;
        }
        Kind::List(items) => {
            out.push('[');
            join(items, out)?;
            out.push(']');
        }
        Kind::Tuple(items) => {
            let parens = items.is_empty() || prec > P_TUPLE;
            open(parens, out);
            items_view(items, out)?;
            close(parens, out);
        }
        Kind::Set(items) => {
            out.push('{');
            join(items, out)?;
            out.push('}');
        }
        Kind::Dict(items) => {
            out.push('{');
            for (k, (key, value)) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                match key {
                    Some(key) => {
                        unparse(key, P_TEST, out)?;
                        out.push_str(": ");
                        unparse(value, P_TEST, out)?;
                    }
                    None => {
                        out.push_str("**");
                        unparse(value, P_EXPR, out)?;
                    }
                }
            }
            out.push('}');
        }
        Kind::Unary(op, operand) => {
            let (symbol, p) = match op {
                UnOp::Not => ("not ", P_NOT),
                UnOp::Neg => ("-", P_FACTOR),
                UnOp::Pos => ("+", P_FACTOR),
                UnOp::Invert => ("~", P_FACTOR),
            };
            let parens = prec > p;
            open(parens, out);
            out.push_str(symbol);
            unparse(operand, p, out)?;
            close(parens, out);
        }
        Kind::Bin(left, op, right) => {
            let p = bin_precedence(*op);
            let parens = prec > p;
            let (lp, rp) = if *op == BinOp::Pow {
                (next_p(p), p)
            } else {
                (p, next_p(p))
            };
            open(parens, out);
            unparse(left, lp, out)?;
            out.push(' ');
            out.push_str(op_symbol(*op));
            out.push(' ');
            unparse(right, rp, out)?;
            close(parens, out);
        }
        Kind::Compare(left, rest) => {
            let parens = prec > P_CMP;
            open(parens, out);
            unparse(left, next_p(P_CMP), out)?;
            for (op, right) in rest {
                out.push(' ');
                out.push_str(cmp_symbol(*op));
                out.push(' ');
                unparse(right, next_p(P_CMP), out)?;
            }
            close(parens, out);
        }
        Kind::BoolOp(is_and, values) => {
            let (word, mut p) = if *is_and {
                (" and ", P_AND)
            } else {
                (" or ", P_OR)
            };
            let parens = prec > p;
            open(parens, out);
            // CPython raises the precedence for each further operand (a quirk kept here:
            // `a or b or not c` unparses as `a or b or (not c)`).
            for (k, v) in values.iter().enumerate() {
                if k > 0 {
                    out.push_str(word);
                }
                p = next_p(p);
                unparse(v, p, out)?;
            }
            close(parens, out);
        }
        Kind::IfExp(body, test, orelse) => {
            let parens = prec > P_TEST;
            open(parens, out);
            unparse(body, next_p(P_TEST), out)?;
            out.push_str(" if ");
            unparse(test, next_p(P_TEST), out)?;
            out.push_str(" else ");
            unparse(orelse, P_TEST, out)?;
            close(parens, out);
        }
        Kind::Lambda(l) => {
            let parens = prec > P_TEST;
            open(parens, out);
            out.push_str("lambda");
            let mut params = String::new();
            unparse_lambda_args(l, &mut params)?;
            if !params.is_empty() {
                out.push(' ');
                out.push_str(&params);
            }
            out.push_str(": ");
            if let Some(body) = &l.body {
                unparse(body, P_TEST, out)?;
            }
            close(parens, out);
        }
        Kind::NamedExpr(target, value) => {
            let parens = prec > P_NAMED;
            open(parens, out);
            out.push_str(target);
            out.push_str(" := ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
        Kind::Comp(c) => {
            let (l, r) = match c.kind {
                CompKind::List => ('[', ']'),
                CompKind::Gen => ('(', ')'),
                CompKind::Set | CompKind::Dict => ('{', '}'),
            };
            out.push(l);
            unparse(&c.elt, P_TEST, out)?;
            if let Some(v) = &c.value {
                out.push_str(": ");
                unparse(v, P_TEST, out)?;
            }
            for g in &c.generators {
                out.push_str(if g.is_async { " async for " } else { " for " });
                unparse(&g.target, P_TUPLE, out)?;
                out.push_str(" in ");
                unparse(&g.iter, next_p(P_TEST), out)?;
                for cond in &g.ifs {
                    out.push_str(" if ");
                    unparse(cond, next_p(P_TEST), out)?;
                }
            }
            out.push(r);
        }
        Kind::Await(value) => {
            let parens = prec > P_AWAIT;
            open(parens, out);
            out.push_str("await ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
        Kind::Yield(value) => {
            let parens = prec > P_YIELD;
            open(parens, out);
            out.push_str("yield");
            if let Some(v) = value {
                out.push(' ');
                unparse(v, P_ATOM, out)?;
            }
            close(parens, out);
        }
        Kind::YieldFrom(value) => {
            let parens = prec > P_YIELD;
            open(parens, out);
            out.push_str("yield from ");
            unparse(value, P_ATOM, out)?;
            close(parens, out);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use crate::bfcl::decode::testing::*;
    use crate::bfcl::value::PyValue;
    use PyValue::Int;

    #[test]
    fn nested_calls_and_subscripts() {
        check(
            "g(x=1, y='a')",
            dict(vec![(
                s("g"),
                dict(vec![(s("x"), Int(1)), (s("y"), s("a"))]),
            )]),
        );
        check(
            "m.g(1, x=1)",
            dict(vec![(s("m.g"), dict(vec![(s("x"), Int(1))]))]),
        );
        check(
            "g(**k)",
            dict(vec![(s("g"), dict(vec![(PyValue::None, s("k"))]))]),
        );
        // Without keywords: `ast.unparse` text, normalised.
        check("g()", s("g()"));
        check(
            "g( 1 ,\"a\" , [ 1,2 ] ,{ 'k' :1} ,(1,),-1 ,+1 ,~1, not 1)",
            s("g(1, 'a', [1, 2], {'k': 1}, (1,), -1, +1, ~1, not 1)"),
        );
        check(
            "g(1e5, 1E-7, 0x10, 1e16, 5j, 1e309, u'y', b'x', -0.0)",
            s("g(100000.0, 1e-07, 16, 1e+16, 5j, 1e309, u'y', b'x', -0.0)"),
        );
        check(
            r#"g('a"b', "a'b", 'a\'b"', '\xa0\u200b\x7f')"#,
            s(r#"g('a"b', "a'b", 'a\'b"', '\xa0\u200b\x7f')"#),
        );
        check(
            "g(a or b or not c, not a == b, -(-1), (a, b), a if b else c)",
            s("g(a or b or (not c), not a == b, --1, (a, b), a if b else c)"),
        );
        check(
            "g(a + b * c, (a + b) * c, a - (b - c), a ** b ** c, (a ** b) ** c, (-a) ** b)",
            s("g(a + b * c, (a + b) * c, a - (b - c), a ** b ** c, (a ** b) ** c, (-a) ** b)"),
        );
        check(
            "g(lambda a, /, b=1, *c, d, e=2, **k: 0)",
            s("g(lambda a, /, b=1, *c, d, e=2, **k: 0)"),
        );
        check("g(x for x in y)", s("g((x for x in y))"));
        check(
            "g([x for x in y if z], {k: v for k, v in y})",
            s("g([x for x in y if z], {k: v for k, v in y})"),
        );
        check(
            "g(1 .real, x.y, *a, await x ** 2, (yield))",
            s("g(1 .real, x.y, *a, await x ** 2, (yield))"),
        );
        // Subscripts: unparse(value) + "[" + unparse(slice) + "]", BFCL's own way.
        check("x[0]", s("x[0]"));
        check("x[1:2, 3]", s("x[(1:2, 3)]"));
        check("x[1,2]", s("x[(1, 2)]"));
        check("x[::2]", s("x[::2]"));
        check("x[*a]", s("x[(*a,)]"));
        check("(a+b)[0]", s("a + b[0]"));
        check("[1,2][0]", s("[1, 2][0]"));
        // Nested-call text cannot hold f-strings here (BFCL can).
        arg_fails("g(f'x')");
    }
}
