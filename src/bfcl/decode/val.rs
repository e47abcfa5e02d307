//! Python values while decoding, and dicts built with Python's key equality (`1`,
//! `1.0` and `True` are one key; an int and a float are equal only when exactly equal).

use indexmap::IndexMap;
use num_traits::Zero;

use super::PResult;
use super::ast::Const;
use super::int::{self, BigInt};
use super::repr::{bytes_repr, complex_repr};
use crate::bfcl::value::PyValue;

/// A Python value while decoding: like [`PyValue`] but with unbounded ints, complex,
/// bytes and Ellipsis as real values, so that arithmetic is exact.
#[derive(Debug, Clone)]
pub(super) enum Val {
    None,
    Bool(bool),
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
    List(Vec<Val>),
    Tuple(Vec<Val>),
    Dict(Vec<(Val, Val)>),
}

impl Val {
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Val::None => "NoneType",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Complex(..) => "complex",
            Val::Str(_) => "str",
            Val::Bytes(_) => "bytes",
            Val::Ellipsis => "ellipsis",
            Val::List(_) => "list",
            Val::Tuple(_) => "tuple",
            Val::Dict(_) => "dict",
        }
    }

    /// Python truthiness.
    pub(super) fn truthy(&self) -> bool {
        match self {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => !i.is_zero(),
            Val::Float(f) => *f != 0.0,
            Val::Complex(re, im) => *re != 0.0 || *im != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::Bytes(b) => !b.is_empty(),
            Val::Ellipsis => true,
            Val::List(v) | Val::Tuple(v) => !v.is_empty(),
            Val::Dict(d) => !d.is_empty(),
        }
    }

    pub(super) fn into_py(self) -> PyValue {
        match self {
            Val::None => PyValue::None,
            Val::Bool(b) => PyValue::Bool(b),
            Val::Int(i) => match int::to_i128(&i) {
                Some(v) => PyValue::Int(v),
                None => PyValue::Other {
                    type_name: "int".into(),
                    repr: i.to_string(),
                },
            },
            Val::Float(f) => PyValue::Float(f),
            Val::Complex(re, im) => PyValue::Other {
                type_name: "complex".into(),
                repr: complex_repr(re, im),
            },
            Val::Str(s) => PyValue::Str(s),
            Val::Bytes(b) => PyValue::Other {
                type_name: "bytes".into(),
                repr: bytes_repr(&b),
            },
            Val::Ellipsis => PyValue::Other {
                type_name: "ellipsis".into(),
                repr: "Ellipsis".into(),
            },
            Val::List(v) => PyValue::List(v.into_iter().map(Val::into_py).collect()),
            Val::Tuple(v) => PyValue::Tuple(v.into_iter().map(Val::into_py).collect()),
            Val::Dict(d) => PyValue::Dict(
                d.into_iter()
                    .map(|(k, v)| (k.into_py(), v.into_py()))
                    .collect(),
            ),
        }
    }
}

/// A dict key as Python hashes and compares it: `1`, `1.0` and `True` are one key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HashKey {
    None,
    Ellipsis,
    Int(BigInt),
    /// A float that is not an integer (bits, with -0.0 folded into 0).
    Float(u64),
    Complex(u64, u64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(Vec<HashKey>),
    /// NaN: equal only to itself (a fresh NaN object each time here).
    Unique(usize),
}

fn float_key(f: f64, unique: &mut usize) -> HashKey {
    if f.is_nan() {
        *unique += 1;
        return HashKey::Unique(*unique);
    }
    if f.is_finite() && f.fract() == 0.0 {
        return HashKey::Int(int::from_integral_f64(f));
    }
    HashKey::Float(f.to_bits())
}

fn hash_key(v: &Val, unique: &mut usize) -> PResult<HashKey> {
    Ok(match v {
        Val::None => HashKey::None,
        Val::Ellipsis => HashKey::Ellipsis,
        Val::Bool(b) => HashKey::Int(BigInt::from(u8::from(*b))),
        Val::Int(i) => HashKey::Int(i.clone()),
        Val::Float(f) => float_key(*f, unique),
        Val::Complex(re, im) if *im == 0.0 => float_key(*re, unique),
        Val::Complex(re, im) => HashKey::Complex((re + 0.0).to_bits(), (im + 0.0).to_bits()),
        Val::Str(s) => HashKey::Str(s.clone()),
        Val::Bytes(b) => HashKey::Bytes(b.clone()),
        Val::Tuple(items) => HashKey::Tuple(
            items
                .iter()
                .map(|x| hash_key(x, unique))
                .collect::<PResult<_>>()?,
        ),
        Val::List(_) | Val::Dict(_) => {
            return Err(format!("unhashable type: '{}'", v.type_name()));
        }
    })
}

/// Builds a dict with Python's rules: an equal key keeps its first position and
/// takes the new value.
#[derive(Default)]
pub(super) struct DictBuilder {
    map: IndexMap<HashKey, (Val, Val)>,
    unique: usize,
}

impl DictBuilder {
    pub(super) fn insert(&mut self, k: Val, v: Val) -> PResult<()> {
        let key = hash_key(&k, &mut self.unique)?;
        match self.map.get_mut(&key) {
            Some(slot) => slot.1 = v,
            None => {
                self.map.insert(key, (k, v));
            }
        }
        Ok(())
    }

    pub(super) fn finish(self) -> Vec<(Val, Val)> {
        self.map.into_values().collect()
    }
}

/// The value of a literal.
pub(super) fn const_value(c: &Const) -> Val {
    match c {
        Const::None => Val::None,
        Const::Bool(b) => Val::Bool(*b),
        Const::Ellipsis => Val::Ellipsis,
        Const::Int(i) => Val::Int(i.clone()),
        Const::Float(f) => Val::Float(*f),
        Const::Imag(f) => Val::Complex(0.0, *f),
        Const::Str { value, .. } => Val::Str(value.clone()),
        Const::Bytes(b) => Val::Bytes(b.clone()),
    }
}
