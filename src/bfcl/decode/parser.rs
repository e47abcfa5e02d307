//! A recursive-descent parser for Python 3.11's expression grammar
//! (`ast.parse(mode="eval")`), with CPython's error cases.

use super::ast::{
    BinOp, Call, CmpOp, Comp, CompKind, Const, Expr, Generator, Kind, Lambda, UnOp, node,
};
use super::lexer::{StrLit, Tok};
use super::{MAX_PARSE_RECURSION, PResult};

/// Binding powers for the operator-precedence part of the grammar (`disjunction`).
const BP_OR: u8 = 1;
const BP_AND: u8 = 2;
const BP_NOT: u8 = 3;
const BP_CMP: u8 = 4;
const BP_BOR: u8 = 5;
const BP_FACTOR: u8 = 11;

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

enum Infix {
    Or,
    And,
    Cmp,
    Bin(BinOp),
}

pub(super) struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Current recursion depth of the parse functions.
    rec: u32,
}

const SYNTAX: &str = "invalid syntax";

impl Parser {
    pub(super) fn new(toks: Vec<Tok>) -> Self {
        Parser {
            toks,
            pos: 0,
            rec: 0,
        }
    }

    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).unwrap_or(&Tok::End)
    }

    fn peek2(&self) -> &Tok {
        self.toks.get(self.pos + 1).unwrap_or(&Tok::End)
    }

    /// Takes the current token (each is read once, so it is moved out).
    fn bump(&mut self) -> Tok {
        match self.toks.get_mut(self.pos) {
            Some(t) if *t != Tok::End => {
                self.pos += 1;
                std::mem::replace(t, Tok::Newline)
            }
            _ => Tok::End,
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let hit = self.is_op(op);
        if hit {
            self.bump();
        }
        hit
    }

    fn expect_op(&mut self, op: &str) -> PResult<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("{SYNTAX}: expected '{op}'"))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.is_kw(kw) {
            self.bump();
            Ok(())
        } else {
            Err(format!("{SYNTAX}: expected '{kw}'"))
        }
    }

    /// A name that is not a keyword.
    fn expect_name(&mut self) -> PResult<String> {
        match self.peek() {
            Tok::Name(n) if !is_keyword(n) => match self.bump() {
                Tok::Name(n) => Ok(n),
                _ => Err(SYNTAX.into()),
            },
            _ => Err(format!("{SYNTAX}: expected a name")),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.rec += 1;
        if self.rec > MAX_PARSE_RECURSION {
            return Err("expression nested too deeply".into());
        }
        Ok(())
    }

    /// `eval_input: expressions NEWLINE* ENDMARKER`.
    pub(super) fn parse_eval(&mut self) -> PResult<Expr> {
        let body = self.expressions()?;
        while *self.peek() == Tok::Newline {
            self.bump();
        }
        if *self.peek() != Tok::End {
            return Err(SYNTAX.into());
        }
        Ok(body)
    }

    /// `expressions: expression (',' expression)* [',']`.
    fn expressions(&mut self) -> PResult<Expr> {
        let first = self.test()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut elts = vec![first];
        while self.eat_op(",") {
            if matches!(self.peek(), Tok::Newline | Tok::End) {
                break;
            }
            elts.push(self.test()?);
        }
        node(Kind::Tuple(elts))
    }

    /// `expression`: a conditional expression, a lambda or a disjunction.
    fn test(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.test_inner();
        self.rec -= 1;
        r
    }

    fn test_inner(&mut self) -> PResult<Expr> {
        if self.is_kw("lambda") {
            return self.lambda();
        }
        let body = self.expr_bp(BP_OR)?;
        if !self.is_kw("if") {
            return Ok(body);
        }
        self.bump();
        let cond = self.expr_bp(BP_OR)?;
        self.expect_kw("else")?;
        let orelse = self.test()?;
        node(Kind::IfExp(
            Box::new(body),
            Box::new(cond),
            Box::new(orelse),
        ))
    }

    /// `named_expression`: `NAME := expression` or an expression.
    fn named_expression(&mut self) -> PResult<Expr> {
        if matches!(self.peek(), Tok::Name(n) if !is_keyword(n))
            && matches!(self.peek2(), Tok::Op(":="))
        {
            let name = self.expect_name()?;
            self.bump();
            let value = self.test()?;
            return node(Kind::NamedExpr(name, Box::new(value)));
        }
        let e = self.test()?;
        if self.is_op(":=") {
            return Err(format!(
                "cannot use assignment expressions with {}",
                e.kind.type_name()
            ));
        }
        Ok(e)
    }

    /// `star_named_expression: '*' bitwise_or | named_expression`.
    fn star_named_expression(&mut self) -> PResult<Expr> {
        if self.eat_op("*") {
            let value = self.expr_bp(BP_BOR)?;
            return node(Kind::Starred(Box::new(value)));
        }
        self.named_expression()
    }

    fn infix(&self) -> Option<(u8, Infix)> {
        let bin = |bp, op| Some((bp, Infix::Bin(op)));
        match self.peek() {
            Tok::Name(n) => match n.as_str() {
                "or" => Some((BP_OR, Infix::Or)),
                "and" => Some((BP_AND, Infix::And)),
                "in" | "is" => Some((BP_CMP, Infix::Cmp)),
                "not" if matches!(self.peek2(), Tok::Name(m) if m == "in") => {
                    Some((BP_CMP, Infix::Cmp))
                }
                _ => None,
            },
            Tok::Op(op) => match *op {
                "<" | ">" | "==" | ">=" | "<=" | "!=" => Some((BP_CMP, Infix::Cmp)),
                "|" => bin(5, BinOp::BitOr),
                "^" => bin(6, BinOp::BitXor),
                "&" => bin(7, BinOp::BitAnd),
                "<<" => bin(8, BinOp::LShift),
                ">>" => bin(8, BinOp::RShift),
                "+" => bin(9, BinOp::Add),
                "-" => bin(9, BinOp::Sub),
                "*" => bin(10, BinOp::Mult),
                "/" => bin(10, BinOp::Div),
                "//" => bin(10, BinOp::FloorDiv),
                "%" => bin(10, BinOp::Mod),
                "@" => bin(10, BinOp::MatMult),
                "**" => bin(12, BinOp::Pow),
                _ => None,
            },
            _ => None,
        }
    }

    /// Consumes a comparison operator if one is next.
    fn cmp_op(&mut self) -> Option<CmpOp> {
        let op = match self.peek() {
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::NotEq,
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::LtE,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::GtE,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "not" && matches!(self.peek2(), Tok::Name(m) if m == "in") => {
                self.bump();
                CmpOp::NotIn
            }
            Tok::Name(n) if n == "is" => {
                if matches!(self.peek2(), Tok::Name(m) if m == "not") {
                    self.bump();
                    CmpOp::IsNot
                } else {
                    CmpOp::Is
                }
            }
            _ => return None,
        };
        self.bump();
        Some(op)
    }

    /// Operator-precedence parsing from `disjunction` down to `power`, one function
    /// instead of one per grammar level, so deep nesting uses less stack.
    fn expr_bp(&mut self, min: u8) -> PResult<Expr> {
        self.enter()?;
        let r = self.expr_bp_inner(min);
        self.rec -= 1;
        r
    }

    fn expr_bp_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut left = if self.is_kw("not") {
            // `not` is an inversion: it cannot be an operand of a tighter operator.
            if min > BP_NOT {
                return Err(SYNTAX.into());
            }
            self.bump();
            let operand = self.expr_bp(BP_NOT)?;
            node(Kind::Unary(UnOp::Not, Box::new(operand)))?
        } else if let Tok::Op(op @ ("-" | "+" | "~")) = *self.peek() {
            let op = match op {
                "-" => UnOp::Neg,
                "+" => UnOp::Pos,
                _ => UnOp::Invert,
            };
            self.bump();
            let operand = self.expr_bp(BP_FACTOR)?;
            node(Kind::Unary(op, Box::new(operand)))?
        } else {
            self.await_primary()?
        };
        while let Some((bp, infix)) = self.infix() {
            if bp < min {
                break;
            }
            left = match infix {
                Infix::Or | Infix::And => {
                    let word = if matches!(infix, Infix::And) {
                        "and"
                    } else {
                        "or"
                    };
                    let mut values = vec![left];
                    while self.is_kw(word) {
                        self.bump();
                        values.push(self.expr_bp(bp + 1)?);
                    }
                    node(Kind::BoolOp(matches!(infix, Infix::And), values))?
                }
                Infix::Cmp => {
                    let mut rest = Vec::new();
                    while let Some(op) = self.cmp_op() {
                        rest.push((op, self.expr_bp(BP_CMP + 1)?));
                    }
                    node(Kind::Compare(Box::new(left), rest))?
                }
                Infix::Bin(op) => {
                    self.bump();
                    // `**` binds its right operand as a factor (`2 ** -1`).
                    let right_bp = if op == BinOp::Pow { BP_FACTOR } else { bp + 1 };
                    let right = self.expr_bp(right_bp)?;
                    node(Kind::Bin(Box::new(left), op, Box::new(right)))?
                }
            };
        }
        Ok(left)
    }

    fn await_primary(&mut self) -> PResult<Expr> {
        if self.is_kw("await") {
            self.bump();
            let value = self.primary()?;
            return node(Kind::Await(Box::new(value)));
        }
        self.primary()
    }

    /// An atom followed by `.name`, `(args)` and `[slices]` trailers.
    fn primary(&mut self) -> PResult<Expr> {
        let mut e = self.atom()?;
        loop {
            if self.eat_op(".") {
                let name = self.expect_name()?;
                e = node(Kind::Attribute(Box::new(e), name))?;
            } else if self.eat_op("(") {
                e = self.call(e)?;
            } else if self.eat_op("[") {
                let slice = self.slices()?;
                self.expect_op("]")?;
                e = node(Kind::Subscript(Box::new(e), Box::new(slice)))?;
            } else {
                return Ok(e);
            }
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Str(_) => return self.strings(),
            Tok::Name(n) if is_keyword(n) && !matches!(n.as_str(), "True" | "False" | "None") => {
                return Err(format!("{SYNTAX}: unexpected '{n}'"));
            }
            _ => {}
        }
        match self.bump() {
            Tok::Name(n) => node(match n.as_str() {
                "True" => Kind::Const(Const::Bool(true)),
                "False" => Kind::Const(Const::Bool(false)),
                "None" => Kind::Const(Const::None),
                _ => Kind::Name(n),
            }),
            Tok::Int(v) => node(Kind::Const(Const::Int(v))),
            Tok::Float(f) => node(Kind::Const(Const::Float(f))),
            Tok::Imag(f) => node(Kind::Const(Const::Imag(f))),
            Tok::Op("...") => node(Kind::Const(Const::Ellipsis)),
            Tok::Op("(") => self.paren_atom(),
            Tok::Op("[") => self.list_atom(),
            Tok::Op("{") => self.brace_atom(),
            _ => Err(SYNTAX.into()),
        }
    }

    /// Adjacent string literals are one constant (or one f-string).
    fn strings(&mut self) -> PResult<Expr> {
        let mut parts = Vec::new();
        while let Tok::Str(_) = self.peek() {
            if let Tok::Str(lit) = self.bump() {
                parts.push(lit);
            }
        }
        let bytes = parts
            .iter()
            .filter(|p| matches!(p, StrLit::Bytes(_)))
            .count();
        if bytes != 0 && bytes != parts.len() {
            return Err("cannot mix bytes and nonbytes literals".into());
        }
        if parts.iter().any(|p| matches!(p, StrLit::FStr)) {
            return node(Kind::FStr);
        }
        if bytes != 0 {
            let mut all = Vec::new();
            for p in parts {
                if let StrLit::Bytes(b) = p {
                    all.extend(b);
                }
            }
            return node(Kind::Const(Const::Bytes(all)));
        }
        // `ast` records the `u` prefix of the first piece only.
        let u = matches!(parts.first(), Some(StrLit::Str { u: true, .. }));
        let mut value = String::new();
        for p in parts {
            if let StrLit::Str { value: v, .. } = p {
                value.push_str(&v);
            }
        }
        node(Kind::Const(Const::Str { value, u }))
    }

    fn is_comp_for(&self) -> bool {
        self.is_kw("for")
            || (self.is_kw("async") && matches!(self.peek2(), Tok::Name(n) if n == "for"))
    }

    fn comp(&mut self, kind: CompKind, elt: Expr, value: Option<Expr>) -> PResult<Expr> {
        if matches!(elt.kind, Kind::Starred(_)) {
            return Err("iterable unpacking cannot be used in comprehension".into());
        }
        let mut generators = Vec::new();
        while self.is_comp_for() {
            let is_async = self.is_kw("async");
            if is_async {
                self.bump();
            }
            self.bump();
            let target = self.targets()?;
            self.expect_kw("in")?;
            let iter = self.expr_bp(BP_OR)?;
            let mut ifs = Vec::new();
            while self.is_kw("if") {
                self.bump();
                ifs.push(self.expr_bp(BP_OR)?);
            }
            generators.push(Generator {
                target,
                iter,
                ifs,
                is_async,
            });
        }
        node(Kind::Comp(Box::new(Comp {
            kind,
            elt,
            value,
            generators,
        })))
    }

    /// `star_targets` of a `for` clause.
    fn targets(&mut self) -> PResult<Expr> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            let t = if self.eat_op("*") {
                let v = self.expr_bp(BP_BOR)?;
                node(Kind::Starred(Box::new(v)))?
            } else {
                self.expr_bp(BP_BOR)?
            };
            check_target(&t)?;
            items.push(t);
            if !self.eat_op(",") {
                break;
            }
            comma = true;
            if self.is_kw("in") {
                break;
            }
        }
        if !comma && items.len() == 1 {
            return items.pop().ok_or_else(|| SYNTAX.to_string());
        }
        node(Kind::Tuple(items))
    }

    fn paren_atom(&mut self) -> PResult<Expr> {
        if self.eat_op(")") {
            return node(Kind::Tuple(Vec::new()));
        }
        if self.is_kw("yield") {
            let y = self.yield_expr()?;
            self.expect_op(")")?;
            return Ok(y);
        }
        let first = self.star_named_expression()?;
        if self.is_comp_for() {
            let g = self.comp(CompKind::Gen, first, None)?;
            self.expect_op(")")?;
            return Ok(g);
        }
        if self.eat_op(",") {
            let mut elts = vec![first];
            while !self.is_op(")") {
                elts.push(self.star_named_expression()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
            return node(Kind::Tuple(elts));
        }
        self.expect_op(")")?;
        if matches!(first.kind, Kind::Starred(_)) {
            return Err("cannot use starred expression here".into());
        }
        // A parenthesised expression is not a node of its own.
        Ok(first)
    }

    fn list_atom(&mut self) -> PResult<Expr> {
        if self.eat_op("]") {
            return node(Kind::List(Vec::new()));
        }
        let first = self.star_named_expression()?;
        if self.is_comp_for() {
            let c = self.comp(CompKind::List, first, None)?;
            self.expect_op("]")?;
            return Ok(c);
        }
        let mut elts = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            elts.push(self.star_named_expression()?);
        }
        self.expect_op("]")?;
        node(Kind::List(elts))
    }

    fn brace_atom(&mut self) -> PResult<Expr> {
        if self.eat_op("}") {
            return node(Kind::Dict(Vec::new()));
        }
        let mut items = Vec::new();
        if self.eat_op("**") {
            items.push((None, self.expr_bp(BP_BOR)?));
        } else if self.is_op("*") {
            let first = self.star_named_expression()?;
            return self.set_rest(first);
        } else {
            let first = self.named_expression()?;
            if !self.eat_op(":") {
                if self.is_comp_for() {
                    let c = self.comp(CompKind::Set, first, None)?;
                    self.expect_op("}")?;
                    return Ok(c);
                }
                return self.set_rest(first);
            }
            if matches!(first.kind, Kind::NamedExpr(..)) {
                return Err(SYNTAX.into());
            }
            let value = self.test()?;
            if self.is_comp_for() {
                let c = self.comp(CompKind::Dict, first, Some(value))?;
                self.expect_op("}")?;
                return Ok(c);
            }
            items.push((Some(first), value));
        }
        while self.eat_op(",") {
            if self.is_op("}") {
                break;
            }
            if self.eat_op("**") {
                items.push((None, self.expr_bp(BP_BOR)?));
            } else {
                let k = self.test()?;
                self.expect_op(":")?;
                items.push((Some(k), self.test()?));
            }
        }
        self.expect_op("}")?;
        node(Kind::Dict(items))
    }

    fn set_rest(&mut self, first: Expr) -> PResult<Expr> {
        let mut elts = vec![first];
        while self.eat_op(",") {
            if self.is_op("}") {
                break;
            }
            elts.push(self.star_named_expression()?);
        }
        self.expect_op("}")?;
        node(Kind::Set(elts))
    }

    /// `yield_expr`, only inside parentheses in an expression.
    fn yield_expr(&mut self) -> PResult<Expr> {
        self.bump();
        if self.is_kw("from") {
            self.bump();
            let v = self.test()?;
            return node(Kind::YieldFrom(Box::new(v)));
        }
        if self.is_op(")") {
            return node(Kind::Yield(None));
        }
        let mut elts = Vec::new();
        let mut comma = false;
        loop {
            elts.push(if self.eat_op("*") {
                let v = self.expr_bp(BP_BOR)?;
                node(Kind::Starred(Box::new(v)))?
            } else {
                self.test()?
            });
            if !self.eat_op(",") {
                break;
            }
            comma = true;
            if self.is_op(")") {
                break;
            }
        }
        let value = if comma || matches!(elts[0].kind, Kind::Starred(_)) {
            node(Kind::Tuple(elts))?
        } else {
            elts.pop().ok_or_else(|| SYNTAX.to_string())?
        };
        node(Kind::Yield(Some(Box::new(value))))
    }

    /// Call arguments after `(`, with CPython's ordering rules.
    fn call(&mut self, func: Expr) -> PResult<Expr> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        let mut seen_keyword = false;
        let mut seen_unpack = false;
        while !self.is_op(")") {
            if self.eat_op("*") {
                if seen_unpack {
                    return Err(
                        "iterable argument unpacking follows keyword argument unpacking".into(),
                    );
                }
                let v = self.test()?;
                args.push(node(Kind::Starred(Box::new(v)))?);
            } else if self.eat_op("**") {
                keywords.push((None, self.test()?));
                seen_unpack = true;
            } else if matches!(self.peek(), Tok::Name(n) if !is_keyword(n))
                && matches!(self.peek2(), Tok::Op("="))
            {
                let name = self.expect_name()?;
                self.bump();
                keywords.push((Some(name), self.test()?));
                seen_keyword = true;
            } else {
                let e = self.named_expression()?;
                if self.is_comp_for() {
                    let g = self.comp(CompKind::Gen, e, None)?;
                    // A bare generator expression must be the only argument.
                    if !args.is_empty() || !keywords.is_empty() || !self.is_op(")") {
                        return Err("Generator expression must be parenthesized".into());
                    }
                    args.push(g);
                    break;
                }
                if self.is_op("=") {
                    return Err(
                        "expression cannot contain assignment, perhaps you meant \"==\"?".into(),
                    );
                }
                if seen_unpack {
                    return Err("positional argument follows keyword argument unpacking".into());
                }
                if seen_keyword {
                    return Err("positional argument follows keyword argument".into());
                }
                args.push(e);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        node(Kind::Call(Box::new(Call {
            func,
            args,
            keywords,
        })))
    }

    /// `slices`: one slice or expression, or a tuple of them.
    fn slices(&mut self) -> PResult<Expr> {
        let mut items = Vec::new();
        let mut tuple = false;
        loop {
            if self.eat_op("*") {
                let v = self.test()?;
                items.push(node(Kind::Starred(Box::new(v)))?);
                tuple = true;
            } else {
                items.push(self.slice_item()?);
            }
            if !self.eat_op(",") {
                break;
            }
            tuple = true;
            if self.is_op("]") {
                break;
            }
        }
        if tuple {
            return node(Kind::Tuple(items));
        }
        items.pop().ok_or_else(|| SYNTAX.to_string())
    }

    fn slice_item(&mut self) -> PResult<Expr> {
        let lower = if self.is_op(":") {
            None
        } else {
            let e = self.named_expression()?;
            if !self.is_op(":") {
                return Ok(e);
            }
            if matches!(e.kind, Kind::NamedExpr(..)) {
                return Err(SYNTAX.into());
            }
            Some(Box::new(e))
        };
        self.expect_op(":")?;
        let ends = |p: &Parser| p.is_op(":") || p.is_op(",") || p.is_op("]");
        let upper = if ends(self) {
            None
        } else {
            Some(Box::new(self.test()?))
        };
        let mut step = None;
        if self.eat_op(":") && !(self.is_op(",") || self.is_op("]")) {
            step = Some(Box::new(self.test()?));
        }
        node(Kind::Slice(lower, upper, step))
    }

    /// `lambda [params]: expression`.
    fn lambda(&mut self) -> PResult<Expr> {
        self.bump();
        let mut l = Lambda::default();
        let mut seen_default = false;
        let mut seen_star = false;
        let mut seen_slash = false;
        while !self.is_op(":") {
            if self.eat_op("/") {
                if seen_slash || seen_star || l.args.is_empty() {
                    return Err(SYNTAX.into());
                }
                seen_slash = true;
                l.posonly = std::mem::take(&mut l.args);
            } else if self.eat_op("**") {
                l.kwarg = Some(self.expect_name()?);
                self.eat_op(",");
                if !self.is_op(":") {
                    return Err("arguments cannot follow var-keyword argument".into());
                }
                break;
            } else if self.eat_op("*") {
                if seen_star {
                    return Err("* argument may appear only once".into());
                }
                seen_star = true;
                if matches!(self.peek(), Tok::Name(_)) {
                    l.vararg = Some(self.expect_name()?);
                }
            } else {
                let name = self.expect_name()?;
                let default = if self.eat_op("=") {
                    Some(self.test()?)
                } else {
                    None
                };
                if seen_star {
                    l.kwonly.push((name, default));
                } else {
                    if default.is_none() && seen_default {
                        return Err("non-default argument follows default argument".into());
                    }
                    seen_default |= default.is_some();
                    l.args.push((name, default));
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        if seen_star && l.vararg.is_none() && l.kwonly.is_empty() {
            return Err("named arguments must follow bare *".into());
        }
        self.expect_op(":")?;
        l.body = Some(self.test()?);
        node(Kind::Lambda(Box::new(l)))
    }
}

/// Whether a `for` target can be assigned to.
fn check_target(e: &Expr) -> PResult<()> {
    match &e.kind {
        Kind::Name(_) | Kind::Attribute(..) | Kind::Subscript(..) => Ok(()),
        Kind::Starred(inner) => check_target(inner),
        Kind::Tuple(items) | Kind::List(items) => items.iter().try_for_each(check_target),
        other => Err(format!("cannot assign to {}", other.type_name())),
    }
}

#[cfg(test)]
mod tests {
    //! Expected values were produced by BFCL's own decoders (bfcl-eval 2026.3.23,
    //! CPython 3.11.7).

    use crate::bfcl::decode::testing::*;

    #[test]
    fn syntax_follows_python() {
        for text in [
            "f(a=1, 2)",
            "f(**k, 2)",
            "f(**k, *a)",
            "f(1=2)",
            "f(True=1)",
            "f(if=1)",
            "f(a=1,,b=2)",
            "f(a=)",
            "f(x for x in y, 1)",
            "f(*)",
            "f(a=(*b))",
            "[f(a=1)]\n[g()]",
            "f(a=1); g()",
            "[f(a=1)\n  g()]",
            "f(a=1 b=2)",
            "f(a=x?)",
            "f(a=“quoted”)",
            "f(a=😀)",
            "f(a=x\u{a0}y)",
            "[f(a=1}]",
            "[f(a=1))]",
            "f(a=1)\0",
            "f(a=1)\\",
            "\u{feff}[f(a=1)]",
        ] {
            fails(text);
        }
        // Valid forms.
        assert_eq!(calls("f(a=1, *b)").len(), 1);
        // `a==1` is a positional comparison, dropped.
        assert!(same(&calls("f(a==1)")[0].1, &dict(vec![])));
        assert_eq!(calls("f(match=1, case=2, _=3, type=4)").len(), 1);
        assert_eq!(
            calls("f(\n    a=1,\n    b=[\n        1,\n    ],\n)").len(),
            1
        );
        assert_eq!(calls("[f(a=1),  # one\n g(b=2)  # two\n]").len(), 2);
        assert_eq!(calls("[f(a=\\\n1)]").len(), 1);
        assert_eq!(calls("[f . g (a=1)]")[0].0, "f.g");
    }
}
