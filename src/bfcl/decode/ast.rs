//! The syntax tree of a Python expression (the `ast` module's expression nodes), with
//! each subtree's depth, bounded so that walking or dropping a tree is stack-safe.

use super::int::BigInt;
use super::{MAX_DEPTH, PResult};

/// An expression node, with the depth of its subtree (bounded by [`MAX_DEPTH`], so every
/// recursive walk, and dropping the tree, is stack-safe).
#[derive(Debug)]
pub(super) struct Expr {
    pub(super) kind: Kind,
    pub(super) depth: u32,
}

#[derive(Debug)]
pub(super) enum Kind {
    Const(Const),
    /// `JoinedStr`.
    FStr,
    Name(String),
    Attribute(Box<Expr>, String),
    Subscript(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Call>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    /// A `None` key is a `**mapping` entry.
    Dict(Vec<(Option<Expr>, Expr)>),
    Unary(UnOp, Box<Expr>),
    Bin(Box<Expr>, BinOp, Box<Expr>),
    /// `true` for `and`.
    BoolOp(bool, Vec<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// body, test, orelse.
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    Lambda(Box<Lambda>),
    Starred(Box<Expr>),
    NamedExpr(String, Box<Expr>),
    Comp(Box<Comp>),
    Await(Box<Expr>),
    Yield(Option<Box<Expr>>),
    YieldFrom(Box<Expr>),
}

#[derive(Debug)]
pub(super) enum Const {
    None,
    Bool(bool),
    Ellipsis,
    Int(BigInt),
    Float(f64),
    Imag(f64),
    Str { value: String, u: bool },
    Bytes(Vec<u8>),
}

#[derive(Debug)]
pub(super) struct Call {
    pub(super) func: Expr,
    pub(super) args: Vec<Expr>,
    /// `None` name: `**mapping`.
    pub(super) keywords: Vec<(Option<String>, Expr)>,
}

#[derive(Debug, Default)]
pub(super) struct Lambda {
    pub(super) posonly: Vec<(String, Option<Expr>)>,
    pub(super) args: Vec<(String, Option<Expr>)>,
    pub(super) vararg: Option<String>,
    pub(super) kwonly: Vec<(String, Option<Expr>)>,
    pub(super) kwarg: Option<String>,
    pub(super) body: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum CompKind {
    List,
    Set,
    Gen,
    Dict,
}

#[derive(Debug)]
pub(super) struct Comp {
    pub(super) kind: CompKind,
    pub(super) elt: Expr,
    /// The value of a dict comprehension.
    pub(super) value: Option<Expr>,
    pub(super) generators: Vec<Generator>,
}

#[derive(Debug)]
pub(super) struct Generator {
    pub(super) target: Expr,
    pub(super) iter: Expr,
    pub(super) ifs: Vec<Expr>,
    pub(super) is_async: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum UnOp {
    Not,
    Neg,
    Pos,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mult,
    MatMult,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitOr,
    BitXor,
    BitAnd,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

impl Kind {
    /// The `ast` class name, for messages.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Kind::Const(_) => "Constant",
            Kind::FStr => "JoinedStr",
            Kind::Name(_) => "Name",
            Kind::Attribute(..) => "Attribute",
            Kind::Subscript(..) => "Subscript",
            Kind::Slice(..) => "Slice",
            Kind::Call(_) => "Call",
            Kind::List(_) => "List",
            Kind::Tuple(_) => "Tuple",
            Kind::Set(_) => "Set",
            Kind::Dict(_) => "Dict",
            Kind::Unary(..) => "UnaryOp",
            Kind::Bin(..) => "BinOp",
            Kind::BoolOp(..) => "BoolOp",
            Kind::Compare(..) => "Compare",
            Kind::IfExp(..) => "IfExp",
            Kind::Lambda(_) => "Lambda",
            Kind::Starred(_) => "Starred",
            Kind::NamedExpr(..) => "NamedExpr",
            Kind::Comp(c) => match c.kind {
                CompKind::List => "ListComp",
                CompKind::Set => "SetComp",
                CompKind::Gen => "GeneratorExp",
                CompKind::Dict => "DictComp",
            },
            Kind::Await(_) => "Await",
            Kind::Yield(_) => "Yield",
            Kind::YieldFrom(_) => "YieldFrom",
        }
    }

    /// Depth of the deepest child (0 for a leaf).
    pub(super) fn child_depth(&self) -> u32 {
        fn d(e: &Expr) -> u32 {
            e.depth
        }
        fn od(e: &Option<Box<Expr>>) -> u32 {
            e.as_deref().map_or(0, d)
        }
        fn all<'a>(it: impl IntoIterator<Item = &'a Expr>) -> u32 {
            it.into_iter().map(d).max().unwrap_or(0)
        }
        match self {
            Kind::Const(_) | Kind::FStr | Kind::Name(_) => 0,
            Kind::Attribute(v, _)
            | Kind::Unary(_, v)
            | Kind::Starred(v)
            | Kind::NamedExpr(_, v)
            | Kind::Await(v)
            | Kind::YieldFrom(v) => d(v),
            Kind::Yield(v) => od(v),
            Kind::Subscript(a, b) | Kind::Bin(a, _, b) => d(a).max(d(b)),
            Kind::Slice(a, b, c) => od(a).max(od(b)).max(od(c)),
            Kind::Call(c) => d(&c.func)
                .max(all(&c.args))
                .max(all(c.keywords.iter().map(|(_, v)| v))),
            Kind::List(v) | Kind::Tuple(v) | Kind::Set(v) | Kind::BoolOp(_, v) => all(v),
            Kind::Dict(items) => items
                .iter()
                .map(|(k, v)| k.as_ref().map_or(0, d).max(d(v)))
                .max()
                .unwrap_or(0),
            Kind::Compare(l, rest) => d(l).max(all(rest.iter().map(|(_, e)| e))),
            Kind::IfExp(a, b, c) => d(a).max(d(b)).max(d(c)),
            Kind::Lambda(l) => {
                let params = l.posonly.iter().chain(&l.args).chain(&l.kwonly);
                all(params.filter_map(|(_, v)| v.as_ref())).max(l.body.as_ref().map_or(0, d))
            }
            Kind::Comp(c) => {
                let gens = c
                    .generators
                    .iter()
                    .map(|g| d(&g.target).max(d(&g.iter)).max(all(&g.ifs)));
                d(&c.elt)
                    .max(c.value.as_ref().map_or(0, d))
                    .max(gens.max().unwrap_or(0))
            }
        }
    }
}

/// Builds a node, refusing trees deeper than [`MAX_DEPTH`].
pub(super) fn node(kind: Kind) -> PResult<Expr> {
    let depth = kind.child_depth() + 1;
    if depth > MAX_DEPTH {
        return Err("expression nested too deeply".into());
    }
    Ok(Expr { kind, depth })
}

/// The source spelling of a binary operator.
pub(super) fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mult => "*",
        BinOp::MatMult => "@",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
        BinOp::LShift => "<<",
        BinOp::RShift => ">>",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::BitAnd => "&",
    }
}
