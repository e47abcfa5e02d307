//! BFCL's `MathAPI`: stateless arithmetic with Python's int/float semantics, plus the
//! two methods that return non-JSON values (`logarithm`'s mpmath `mpf`/`mpc`,
//! `square_root`'s `Decimal`), whose results BFCL shows through `repr`.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::{Method, PyException, World, bind_method, dict, error, opt, req};
use crate::bfcl::pyfmt::py_repr;
use crate::bfcl::value::PyValue;

const CLASS: &str = "MathAPI";

const METHODS: &[Method] = &[
    ("logarithm", &[req("value"), req("base"), req("precision")]),
    ("mean", &[req("numbers")]),
    ("standard_deviation", &[req("numbers")]),
    (
        "si_unit_conversion",
        &[req("value"), req("unit_in"), req("unit_out")],
    ),
    (
        "imperial_si_conversion",
        &[req("value"), req("unit_in"), req("unit_out")],
    ),
    ("add", &[req("a"), req("b")]),
    ("subtract", &[req("a"), req("b")]),
    ("multiply", &[req("a"), req("b")]),
    ("divide", &[req("a"), req("b")]),
    ("power", &[req("base"), req("exponent")]),
    ("square_root", &[req("number"), req("precision")]),
    ("absolute_value", &[req("number")]),
    ("round_number", &[req("number"), opt("decimal_places", "0")]),
    ("percentage", &[req("part"), req("whole")]),
    ("min_value", &[req("numbers")]),
    ("max_value", &[req("numbers")]),
    ("sum_values", &[req("numbers")]),
];

/// The stateless `MathAPI` (no `_load_scenario`, no public attributes).
#[derive(Debug, Clone, Copy, Default)]
pub struct MathApi;

/// A Python int or float (bool counts as int, as `isinstance(True, int)`).
#[derive(Debug, Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

impl Num {
    fn of(v: &PyValue) -> Option<Num> {
        match v {
            PyValue::Bool(b) => Some(Num::I(i128::from(*b))),
            PyValue::Int(i) => Some(Num::I(*i)),
            PyValue::Float(f) => Some(Num::F(*f)),
            _ => None,
        }
    }

    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    fn value(self) -> PyValue {
        match self {
            Num::I(i) => PyValue::Int(i),
            Num::F(f) => PyValue::Float(f),
        }
    }

    /// `a op b` for `+ - *`: ints stay ints, any float makes a float.
    fn arith(self, other: Num, op: char) -> Num {
        match (self, other) {
            (Num::I(a), Num::I(b)) => {
                let r = match op {
                    '+' => a.checked_add(b),
                    '-' => a.checked_sub(b),
                    _ => a.checked_mul(b),
                };
                // Beyond i128 Python would keep an exact big int; a float is the
                // closest this value type holds.
                r.map_or_else(|| Num::F(float_op(a as f64, b as f64, op)), Num::I)
            }
            (a, b) => Num::F(float_op(a.f(), b.f(), op)),
        }
    }
}

fn float_op(a: f64, b: f64, op: char) -> f64 {
    match op {
        '+' => a + b,
        '-' => a - b,
        _ => a * b,
    }
}

fn result(v: PyValue) -> PyValue {
    dict([("result", v)])
}

/// The numbers of a list argument, or the method's "must be numbers" error.
fn numbers(v: &PyValue, empty: &str) -> Result<Vec<Num>, PyValue> {
    let items = match v {
        PyValue::List(a) | PyValue::Tuple(a) => a,
        _ => return Err(error("All elements in the list must be numbers")),
    };
    if items.is_empty() {
        return Err(error(empty));
    }
    items
        .iter()
        .map(Num::of)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| error("All elements in the list must be numbers"))
}

/// Python's `sum(numbers)`: left to right from int 0.
fn sum(nums: &[Num]) -> Num {
    nums.iter().fold(Num::I(0), |acc, n| acc.arith(*n, '+'))
}

fn power(base: Num, exp: Num) -> Result<PyValue, PyException> {
    if let (Num::I(b), Num::I(e)) = (base, exp)
        && let Some(r) = u32::try_from(e).ok().and_then(|e| b.checked_pow(e))
    {
        return Ok(PyValue::Int(r));
    }
    let (b, e) = (base.f(), exp.f());
    if b == 0.0 && e < 0.0 {
        return Err(PyException::new(
            "ZeroDivisionError",
            "0.0 cannot be raised to a negative power",
        ));
    }
    let r = b.powf(e);
    if r.is_infinite() && b.is_finite() && e.is_finite() {
        return Err(PyException::new(
            "OverflowError",
            "(34, 'Numerical result out of range')",
        ));
    }
    Ok(PyValue::Float(r))
}

/// Python's `round(x, n)` for a float: correctly rounded, ties to even (Rust's
/// formatting rounds the exact binary value the same way).
fn round_float(x: f64, n: i128) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if n >= 0 {
        let n = n.min(400) as usize;
        format!("{x:.n$}").parse().unwrap_or(x)
    } else {
        let p = 10f64.powi((-n).min(400) as i32);
        let y: f64 = format!("{:.0}", x / p).parse().unwrap_or(x);
        y * p
    }
}

/// Python's `round(i, n)` for an int: unchanged for n >= 0, else to a multiple of
/// 10**-n with ties to even.
fn round_int(i: i128, n: i128) -> i128 {
    if n >= 0 {
        return i;
    }
    let Some(p) = u32::try_from(-n).ok().and_then(|k| 10i128.checked_pow(k)) else {
        return 0;
    };
    let (q, r) = (i.div_euclid(p), i.rem_euclid(p));
    let up = 2 * r > p || (2 * r == p && q % 2 != 0);
    (q + i128::from(up)) * p
}

/// Python's `Decimal` repr from sign, coefficient digits and exponent.
fn decimal_repr(digits: &str, exp: i64) -> String {
    let len = digits.len() as i64;
    let left = exp + len;
    let dot = if exp <= 0 && left > -6 { left } else { 1 };
    let (int, frac) = if dot <= 0 {
        (
            "0".to_string(),
            format!(".{}{digits}", "0".repeat((-dot) as usize)),
        )
    } else if dot >= len {
        (
            format!("{digits}{}", "0".repeat((dot - len) as usize)),
            String::new(),
        )
    } else {
        (
            digits[..dot as usize].to_string(),
            format!(".{}", &digits[dot as usize..]),
        )
    };
    let e = if left == dot {
        String::new()
    } else {
        format!("E{:+}", left - dot)
    };
    format!("Decimal('{int}{frac}{e}')")
}

/// `Decimal(x)` for an int or float: exact coefficient and exponent.
fn to_decimal(n: Num) -> (BigUint, i64) {
    match n {
        Num::I(i) => (BigUint::from(i.unsigned_abs()), 0),
        Num::F(f) => {
            // as_integer_ratio: f = m / 2**k in lowest terms; Decimal is m*5**k e-k.
            let bits = f.abs().to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i64;
            let frac = bits & ((1 << 52) - 1);
            let (mut m, mut e) = if exp == 0 {
                (frac, -1074)
            } else {
                (frac | (1 << 52), exp - 1075)
            };
            while m != 0 && m % 2 == 0 && e < 0 {
                m /= 2;
                e += 1;
            }
            if e >= 0 {
                (BigUint::from(m) << e as usize, 0)
            } else {
                (BigUint::from(m) * BigUint::from(5u8).pow((-e) as u32), e)
            }
        }
    }
}

/// `Decimal(number).sqrt()` under a context precision of `prec` digits, following
/// the decimal module's algorithm (one guard digit, ideal exponent for exact roots,
/// then round half even).
fn decimal_sqrt(number: Num, prec: u32) -> String {
    let (coef, exp) = to_decimal(number);
    if coef.is_zero() {
        return decimal_repr("0", exp.div_euclid(2));
    }
    let ndigits = coef.to_string().len() as i64;
    let p = i64::from(prec) + 1;
    let mut e = exp.div_euclid(2);
    let (c, l) = if exp.rem_euclid(2) == 1 {
        (coef * 10u8, (ndigits >> 1) + 1)
    } else {
        (coef, (ndigits + 1) >> 1)
    };
    let shift = p - l;
    let hundred = BigUint::from(100u8);
    let (c, mut exact) = if shift >= 0 {
        (c * hundred.pow(shift as u32), true)
    } else {
        let d = hundred.pow((-shift) as u32);
        let r = &c % &d;
        (c / d, r.is_zero())
    };
    e -= shift;
    let mut n = BigUint::from(10u8).pow(p as u32);
    loop {
        let q = &c / &n;
        if n <= q {
            break;
        }
        n = (n + q) >> 1;
    }
    exact = exact && &n * &n == c;
    if exact {
        if shift >= 0 {
            n /= BigUint::from(10u8).pow(shift as u32);
        } else {
            n *= BigUint::from(10u8).pow((-shift) as u32);
        }
        e += shift;
    } else if (&n % 5u8).is_zero() {
        n += BigUint::one();
    }
    // Round to `prec` digits, half even.
    let mut digits = n.to_string();
    let extra = digits.len() as i64 - i64::from(prec);
    if extra > 0 {
        let (keep, drop) = digits.split_at(prec as usize);
        let mut k: BigUint = keep.parse().unwrap_or_default();
        let first = drop.as_bytes()[0];
        let rest_zero = drop[1..].bytes().all(|b| b == b'0');
        let odd = (&k % 2u8).is_one();
        if first > b'5' || (first == b'5' && (!rest_zero || odd)) {
            k += BigUint::one();
        }
        e += extra;
        digits = k.to_string();
        if digits.len() as i64 > i64::from(prec) {
            digits.pop();
            e += 1;
        }
    }
    decimal_repr(&digits, e)
}

/// mpmath's repr digits for a working precision of `dps` decimal digits.
/// mpmath's `dps_to_prec`: the bits of working precision for `dps` decimal digits.
fn dps_to_prec(dps: i128) -> u32 {
    (((dps + 1) as f64 * 3.321_928_094_887_362_6).round_ties_even() as i64).clamp(1, 10_000) as u32
}

/// `x` rounded to the nearest number with a `bits`-bit mantissa (ties to even), as
/// mpmath rounds each result to its working precision.
fn round_bits(x: f64, bits: u32) -> f64 {
    if x == 0.0 || !x.is_finite() || bits >= 53 {
        return x;
    }
    // x = m * 2^e with 0.5 <= |m| < 1, from the exponent bits (a normal number).
    let e = ((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1022;
    let scale = 2f64.powi(bits as i32 - e);
    (x * scale).round_ties_even() / scale
}

fn mp_repr_digits(dps: i128) -> usize {
    let prec = (((dps + 1) as f64 * 3.321_928_094_887_362_6).round_ties_even() as i64).max(1);
    let back = (((prec as f64 / 3.321_928_094_887_362_6).round_ties_even() as i64) - 1).max(1);
    if back == 15 { 17 } else { (back + 3) as usize }
}

/// mpmath's `to_str(x, n)`. The value comes from f64 arithmetic, so digits past the
/// 15th are not trusted: rounding to 15 first gives `3.0`, as mpmath's exact
/// `log(1000, 10)` does, where f64 gives 2.9999999999999996.
fn mp_str(x: f64, n: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return "0.0".into();
    }
    let x: f64 = format!("{x:.14e}").parse().unwrap_or(x);
    let sci = format!("{:.*e}", n.saturating_sub(1), x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let min_fixed = (-(n as i64 / 3)).min(-5);
    let body = if min_fixed < exp && exp < n as i64 {
        let (int, frac) = if exp < 0 {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat((-exp - 1) as usize)),
            )
        } else {
            let cut = (exp + 1) as usize;
            let padded = format!("{digits:0<cut$}");
            (padded[..cut].to_string(), padded[cut..].to_string())
        };
        let frac = frac.trim_end_matches('0');
        format!("{int}.{}", if frac.is_empty() { "0" } else { frac })
    } else {
        let rest = digits[1..].trim_end_matches('0');
        let rest = if rest.is_empty() { "0" } else { rest };
        format!(
            "{}.{rest}e{}{exp}",
            &digits[..1],
            if exp >= 0 { "+" } else { "" }
        )
    };
    if neg { format!("-{body}") } else { body }
}

/// mpmath's conversion of an argument to a real number.
fn mp_arg(v: &PyValue) -> Result<f64, String> {
    if let Some(n) = Num::of(v) {
        return Ok(n.f());
    }
    if let PyValue::Str(s) = v
        && let Ok(x) = s.trim().parse::<f64>()
    {
        return Ok(x);
    }
    Err(format!("cannot create mpf from {}", py_repr(v)))
}

/// `mpmath.log(value, base)` at `precision` digits: an `mpf`, or an `mpc` when a
/// logarithm is complex (a negative argument).
fn logarithm(value: &PyValue, base: &PyValue, precision: &PyValue) -> PyValue {
    let (v, b) = match (mp_arg(value), mp_arg(base)) {
        (Ok(v), Ok(b)) => (v, b),
        (Err(e), _) | (_, Err(e)) => return error(e),
    };
    let dps = match precision {
        PyValue::Int(p) => *p,
        _ => 15,
    };
    let n = mp_repr_digits(dps);
    // ln of a real as (re, im): ln|x| + i*pi for x < 0.
    let ln = |x: f64| -> (f64, f64) {
        if x < 0.0 {
            ((-x).ln(), std::f64::consts::PI)
        } else {
            (x.ln(), 0.0)
        }
    };
    let (mut vr, vi) = ln(v);
    let (mut br, bi) = ln(b);
    // mpmath works at `prec` bits: each logarithm and the quotient are rounded to it,
    // so a low precision changes the last digits (`log(20)/log(10)` at 2 digits is
    // 1.3027, not 1.301). f64 carries 53 bits: rounding its results to `prec` bits
    // reproduces mpmath up to that; a higher precision keeps f64's digits.
    let prec = dps_to_prec(dps);
    let real = vi == 0.0 && bi == 0.0;
    if real && prec <= 50 {
        vr = round_bits(vr, prec);
        br = round_bits(br, prec);
    }
    let denom = br * br + bi * bi;
    if denom == 0.0 {
        // mpmath raises ZeroDivisionError with no message.
        return error("");
    }
    let (mut re, im) = if bi == 0.0 {
        (vr / br, vi / br)
    } else {
        ((vr * br + vi * bi) / denom, (vi * br - vr * bi) / denom)
    };
    if real && prec <= 50 {
        re = round_bits(re, prec);
    }
    let repr = if vi == 0.0 && bi == 0.0 {
        format!("mpf('{}')", mp_str(re, n))
    } else {
        format!("mpc(real='{}', imag='{}')", mp_str(re, n), mp_str(im, n))
    };
    let type_name = if repr.starts_with("mpf") {
        "mpf"
    } else {
        "mpc"
    };
    result(PyValue::Other {
        type_name: type_name.into(),
        repr,
    })
}

/// SI length units per meter (the fixtures' last bits show the conversion divides
/// by the input's factor, then multiplies by the output's).
fn si_factor(unit: &PyValue) -> Option<f64> {
    let PyValue::Str(u) = unit else { return None };
    Some(match u.as_str() {
        "km" => 0.001,
        "m" => 1.0,
        "cm" => 100.0,
        "mm" => 1000.0,
        "um" => 1e6,
        "nm" => 1e9,
        _ => return None,
    })
}

/// Multiplier for an imperial/SI unit pair (temperatures are handled apart).
fn imperial_factor(from: &str, to: &str) -> Option<f64> {
    Some(match (from, to) {
        ("cm", "in") => 0.393701,
        ("in", "cm") => 2.54,
        ("m", "ft") => 3.28084,
        ("ft", "m") => 0.3048,
        ("m", "yd") => 1.09361,
        ("yd", "m") => 0.9144,
        ("km", "miles") => 0.621371,
        ("miles", "km") => 1.60934,
        ("kg", "lb") => 2.20462,
        ("lb", "kg") => 0.453592,
        _ => return None,
    })
}

fn unsupported(from: &PyValue, to: &PyValue) -> PyValue {
    let name = |v: &PyValue| match v {
        PyValue::Str(s) => s.clone(),
        other => py_repr(other),
    };
    error(format!(
        "Conversion from '{}' to '{}' is not supported",
        name(from),
        name(to)
    ))
}

fn dispatch(m: &str, a: &[PyValue]) -> Result<PyValue, PyException> {
    const BOTH: &str = "Both inputs must be numbers";
    let pair = || Num::of(&a[0]).zip(Num::of(&a[1]));
    Ok(match m {
        "add" => match (&a[0], &a[1]) {
            // Only TypeError is caught, so str + str concatenates.
            (PyValue::Str(x), PyValue::Str(y)) => result(PyValue::Str(format!("{x}{y}"))),
            (PyValue::List(x), PyValue::List(y)) => {
                result(PyValue::List(x.iter().chain(y).cloned().collect()))
            }
            _ => match pair() {
                Some((x, y)) => result(x.arith(y, '+').value()),
                None => error(BOTH),
            },
        },
        "subtract" | "multiply" => match pair() {
            Some((x, y)) => result(x.arith(y, if m == "subtract" { '-' } else { '*' }).value()),
            None => error(BOTH),
        },
        "divide" => match pair() {
            None => error(BOTH),
            Some((_, y)) if y.f() == 0.0 => error("Cannot divide by zero"),
            Some((x, y)) => result(PyValue::Float(x.f() / y.f())),
        },
        "power" => match pair() {
            None => error(BOTH),
            Some((x, y)) => result(power(x, y)?),
        },
        "absolute_value" => match Num::of(&a[0]) {
            Some(Num::I(i)) => result(PyValue::Int(i.abs())),
            Some(Num::F(f)) => result(PyValue::Float(f.abs())),
            None => error("Input must be a number"),
        },
        "round_number" => match (Num::of(&a[0]), &a[1]) {
            (Some(n), PyValue::Int(d)) => result(match n {
                Num::I(i) => PyValue::Int(round_int(i, *d)),
                Num::F(f) => PyValue::Float(round_float(f, *d)),
            }),
            _ => error("First input must be a number, second input must be an integer"),
        },
        "percentage" => match pair() {
            None => error(BOTH),
            Some((_, w)) if w.f() == 0.0 => error("Whole value cannot be zero"),
            Some((p, w)) => result(PyValue::Float(p.f() / w.f() * 100.0)),
        },
        "square_root" => {
            let Some(n) = Num::of(&a[0]) else {
                return Ok(error(
                    "Input must be a number or computation resulted in an invalid operation",
                ));
            };
            if n.f() < 0.0 {
                return Ok(error("Cannot calculate square root of a negative number"));
            }
            let prec = match &a[1] {
                PyValue::Int(p) if *p >= 1 => u32::try_from(*p).unwrap_or(u32::MAX),
                _ => {
                    return Ok(error(
                        "Input must be a number or computation resulted in an invalid operation",
                    ));
                }
            };
            let repr = decimal_sqrt(n, prec);
            result(PyValue::Other {
                type_name: "Decimal".into(),
                repr,
            })
        }
        "logarithm" => logarithm(&a[0], &a[1], &a[2]),
        "mean" => match numbers(&a[0], "Cannot calculate mean of an empty list") {
            Err(e) => e,
            Ok(ns) => result(PyValue::Float(sum(&ns).f() / ns.len() as f64)),
        },
        "standard_deviation" => {
            match numbers(
                &a[0],
                "Cannot calculate standard deviation of an empty list",
            ) {
                Err(e) => e,
                Ok(ns) => {
                    let len = ns.len() as f64;
                    let mean = sum(&ns).f() / len;
                    let var = ns
                        .iter()
                        .map(|x| (x.f() - mean).powi(2))
                        .fold(0.0, |s, x| s + x)
                        / len;
                    result(PyValue::Float(var.sqrt()))
                }
            }
        }
        "min_value" | "max_value" => {
            let empty = if m == "min_value" {
                "Cannot find minimum of an empty list"
            } else {
                "Cannot find maximum of an empty list"
            };
            match numbers(&a[0], empty) {
                Err(e) => e,
                Ok(ns) => {
                    // Python's min/max keep the first of equal extremes.
                    let best = ns.iter().copied().reduce(|b, x| {
                        let better = if m == "min_value" {
                            x.f() < b.f()
                        } else {
                            x.f() > b.f()
                        };
                        if better { x } else { b }
                    });
                    result(best.map_or(PyValue::None, Num::value))
                }
            }
        }
        "sum_values" => match numbers(&a[0], "Cannot calculate sum of an empty list") {
            Err(e) => e,
            Ok(ns) => result(sum(&ns).value()),
        },
        "si_unit_conversion" => {
            let Some(v) = Num::of(&a[0]) else {
                return Ok(error("Value must be a number"));
            };
            match (si_factor(&a[1]), si_factor(&a[2])) {
                (Some(fi), Some(fo)) => result(PyValue::Float(v.f() / fi * fo)),
                _ => unsupported(&a[1], &a[2]),
            }
        }
        "imperial_si_conversion" => {
            let Some(v) = Num::of(&a[0]) else {
                return Ok(error("Value must be a number"));
            };
            let (PyValue::Str(from), PyValue::Str(to)) = (&a[1], &a[2]) else {
                return Ok(unsupported(&a[1], &a[2]));
            };
            if from == to {
                return Ok(result(a[0].clone()));
            }
            match (from.as_str(), to.as_str()) {
                ("celsius", "fahrenheit") => result(PyValue::Float(v.f() * 9.0 / 5.0 + 32.0)),
                ("fahrenheit", "celsius") => result(PyValue::Float((v.f() - 32.0) * 5.0 / 9.0)),
                (f, t) => match imperial_factor(f, t) {
                    Some(k) => result(PyValue::Float(v.f() * k)),
                    None => unsupported(&a[1], &a[2]),
                },
            }
        }
        _ => unreachable!("method table and dispatch agree"),
    })
}

impl World for MathApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(
        &mut self,
        _config: &serde_json::Value,
        _long_context: bool,
    ) -> Result<(), PyException> {
        // BFCL skips `_load_scenario` for MathAPI: the config is ignored.
        Ok(())
    }

    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException> {
        let (m, a) = bind_method(CLASS, METHODS, method, args, kwargs)?;
        dispatch(m, &a)
    }

    fn state(&self) -> Vec<(String, PyValue)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_sqrt_matches_python() {
        assert_eq!(decimal_sqrt(Num::I(2), 10), "Decimal('1.414213562')");
        assert_eq!(decimal_sqrt(Num::I(16), 3), "Decimal('4')");
        assert_eq!(decimal_sqrt(Num::F(0.25), 5), "Decimal('0.5')");
        assert_eq!(decimal_sqrt(Num::I(100), 28), "Decimal('10')");
    }

    #[test]
    fn mpmath_repr_digits() {
        assert_eq!(mp_repr_digits(10), 13);
        assert_eq!(mp_repr_digits(15), 17);
    }

    /// BFCL's results (mpmath 1.3.0) of the logarithms its multi-turn ground truth
    /// computes: at a low precision the last digits are mpmath's rounding, not the
    /// true value's.
    #[test]
    fn logarithms_round_at_mpmaths_working_precision() {
        let log = |v: PyValue, b: PyValue, p: i128| {
            crate::bfcl::pyfmt::result_text(&logarithm(&v, &b, &PyValue::Int(p)))
        };
        assert_eq!(
            log(PyValue::Int(20), PyValue::Int(10), 2),
            "{'result': mpf('1.3027')}"
        );
        assert_eq!(
            log(PyValue::Float(630.0), PyValue::Int(10), 5),
            "{'result': mpf('2.7993393')}"
        );
        assert_eq!(
            log(PyValue::Float(980.0), PyValue::Int(20), 10),
            "{'result': mpf('2.299121531134')}"
        );
        assert_eq!(
            log(PyValue::Int(1000), PyValue::Int(10), 3),
            "{'result': mpf('3.0')}"
        );
    }
}
