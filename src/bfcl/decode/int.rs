//! Python's int on top of `num_bigint::BigInt`: literals read with the decoder's size
//! limit, floor division, powers and shifts as CPython computes them, and the
//! conversions to float that CPython rounds correctly or refuses with an
//! `OverflowError`.
//!
//! `num-bigint` already has Python's semantics where they matter: `>>` rounds toward
//! negative infinity, `&`, `|` and `^` act on the infinite two's complement, and
//! `div_mod_floor` gives the quotient and remainder of Python's `divmod`.

pub(super) use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{FromPrimitive, ToPrimitive, Zero};

use super::{MAX_INT_BITS, PResult};

/// Parses digits (no sign, no underscores) in `radix`, refusing literals far beyond
/// [`MAX_INT_BITS`] before doing any arithmetic on them.
pub(super) fn parse(digits: &str, radix: u32) -> PResult<BigInt> {
    // An upper bound of the bits per digit (4 for decimal: 3.32 rounded up).
    let bits_per_digit = match radix {
        2 => 1,
        8 => 3,
        _ => 4,
    };
    if digits.trim_start_matches('0').len() as u64 * bits_per_digit > MAX_INT_BITS + 4 {
        return Err("integer literal too large".into());
    }
    // `parse_bytes` would skip underscores and accept a sign; the lexer gives neither.
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return Err("invalid digit".into());
    }
    BigInt::parse_bytes(digits.as_bytes(), radix).ok_or_else(|| "invalid digit".into())
}

/// Whether `i` is negative.
pub(super) fn is_negative(i: &BigInt) -> bool {
    i.sign() == Sign::Minus
}

/// The value of an integral, finite float, exactly (`int(1e30)` is
/// 1000000000000000019884624838656).
pub(super) fn from_integral_f64(f: f64) -> BigInt {
    BigInt::from_f64(f).unwrap_or_default()
}

/// The value as an i128, when it fits.
pub(super) fn to_i128(i: &BigInt) -> Option<i128> {
    i.to_i128()
}

/// The value as a u64, when it fits (shift counts).
pub(super) fn to_u64(i: &BigInt) -> Option<u64> {
    i.to_u64()
}

/// Python's `float(int)`: correctly rounded (ties to even), `OverflowError` when the
/// rounded value is beyond the largest float.
pub(super) fn to_f64(i: &BigInt) -> PResult<f64> {
    match i.to_f64() {
        Some(f) if f.is_finite() => Ok(f),
        _ => Err("int too large to convert to float".into()),
    }
}

/// Python's `divmod(x, y)` on ints (floor division; the remainder has the divisor's
/// sign); `None` when dividing by zero.
pub(super) fn divmod_floor(x: &BigInt, y: &BigInt) -> Option<(BigInt, BigInt)> {
    (!y.is_zero()).then(|| x.div_mod_floor(y))
}

/// `x ** e` for `e >= 0`, refused when the result would exceed [`MAX_INT_BITS`].
pub(super) fn pow(x: &BigInt, e: &BigInt) -> PResult<BigInt> {
    if e.is_zero() {
        return Ok(BigInt::from(1));
    }
    // 0, 1 and -1 stay small whatever the exponent; only its parity matters.
    if x.magnitude() <= &1u32.into() {
        return Ok(if is_negative(x) && e.is_even() {
            BigInt::from(1)
        } else {
            x.clone()
        });
    }
    let e = e.to_u32().unwrap_or(u32::MAX);
    if u64::from(e).saturating_mul(x.bits()) > MAX_INT_BITS {
        return Err("integer result too large".into());
    }
    Ok(x.pow(e))
}

/// Python's `x >> n` for `n >= 0` (rounds toward negative infinity).
pub(super) fn shr(x: &BigInt, n: &BigInt) -> BigInt {
    // Beyond u64::MAX bits every int shifts to 0 or -1, as it does at u64::MAX.
    x >> to_u64(n).unwrap_or(u64::MAX)
}

/// Python's `int / int`, correctly rounded; `ZeroDivisionError` and `OverflowError`
/// as CPython reports them.
pub(super) fn true_div(x: &BigInt, y: &BigInt) -> PResult<f64> {
    if y.is_zero() {
        return Err("division by zero".into());
    }
    const EXACT: u64 = 53;
    if x.bits() <= EXACT && y.bits() <= EXACT {
        // Both convert exactly, and one IEEE division rounds once.
        return Ok(to_f64(x)? / to_f64(y)?);
    }
    // Scale so the quotient has at least 55 bits, fold the remainder into a sticky bit,
    // and let the u64 → f64 conversion round once.
    let shift = y.bits() as i64 - x.bits() as i64 + 55;
    let (a, b) = if shift > 0 {
        (x.magnitude() << shift as u64, y.magnitude().clone())
    } else {
        (x.magnitude().clone(), y.magnitude() << shift.unsigned_abs())
    };
    let (q, r) = a.div_rem(&b);
    // The quotient has 55 or 56 bits.
    let q = q.to_u64().unwrap_or(u64::MAX);
    let f = ldexp((q | u64::from(!r.is_zero())) as f64, -shift);
    if f.is_infinite() {
        return Err("integer division result too large for a float".into());
    }
    Ok(if is_negative(x) != is_negative(y) {
        -f
    } else {
        f
    })
}

/// `x * 2^e` in steps that cannot overflow or underflow the scale factor.
fn ldexp(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

#[cfg(test)]
mod tests {
    //! Expected values are CPython 3.11's (`divmod`, `float`, `/`, `**`, `>>`, `int`).

    use super::*;

    fn big(s: &str) -> BigInt {
        parse(s, 10).expect("digits")
    }

    fn neg(s: &str) -> BigInt {
        -big(s)
    }

    /// 2 ** n.
    fn two(n: u32) -> BigInt {
        BigInt::from(1) << n
    }

    #[test]
    fn big_integers() {
        let a = big("123456789012345678901234567890123456789");
        let b = big("987654321987654321");
        let (q, r) = divmod_floor(&a, &b).expect("non-zero");
        assert_eq!(&q * &b + &r, a);
        assert_eq!(q.to_string(), "124999998748437501153");
        assert_eq!(
            divmod_floor(&-a.clone(), &b).map(|(q, _)| q.to_string()),
            Some("-124999998748437501154".into())
        );
        assert_eq!(to_i128(&BigInt::from(i128::MIN)), Some(i128::MIN));
        assert_eq!(
            to_i128(&big("170141183460469231731687303715884105728")),
            None
        );
        assert_eq!(to_f64(&big("9007199254740993")), Ok(9007199254740992.0));
        assert_eq!(
            from_integral_f64(1e30).to_string(),
            "1000000000000000019884624838656"
        );
    }

    #[test]
    fn floor_division_takes_the_divisor_sign() {
        let a = "123456789012345678901234567890123456789";
        let b = "987654321987654321";
        let cases = [
            // (x, y, x // y, x % y)
            (
                neg(a),
                big(b),
                "-124999998748437501154",
                "844908557067129645",
            ),
            (
                big(a),
                neg(b),
                "-124999998748437501154",
                "-844908557067129645",
            ),
            (
                neg(a),
                neg(b),
                "124999998748437501153",
                "-142745764920524676",
            ),
            (BigInt::from(-7), BigInt::from(2), "-4", "1"),
            (BigInt::from(7), BigInt::from(-2), "-4", "-1"),
            (BigInt::from(-7), BigInt::from(-2), "3", "-1"),
            (BigInt::from(-6), BigInt::from(3), "-2", "0"),
            (
                -(BigInt::from(1) << 200u32),
                (BigInt::from(1) << 100u32) + 1,
                "-1267650600228229401496703205376",
                "1267650600228229401496703205376",
            ),
        ];
        for (x, y, q, r) in cases {
            let (got_q, got_r) = divmod_floor(&x, &y).expect("non-zero");
            assert_eq!(
                (got_q.to_string(), got_r.to_string()),
                (q.into(), r.into()),
                "{x} divmod {y}"
            );
        }
        assert_eq!(divmod_floor(&BigInt::from(1), &BigInt::ZERO), None);
    }

    #[test]
    fn float_conversion_rounds_to_even_and_overflows_like_python() {
        // Ties go to the even neighbour; anything above a tie goes up.
        assert_eq!(to_f64(&(two(53) + 1)), Ok(9007199254740992.0));
        assert_eq!(to_f64(&(two(53) + 3)), Ok(9007199254740996.0));
        assert_eq!(to_f64(&-(two(53) + 3u8)), Ok(-9007199254740996.0));
        assert_eq!(to_f64(&(two(200) + 1)), Ok(2f64.powi(200)));
        // The largest float, and the first int that rounds past it.
        assert_eq!(to_f64(&(two(1024) - two(970) - 1)), Ok(f64::MAX));
        assert_eq!(to_f64(&(two(1024) - two(971))), Ok(f64::MAX));
        for too_big in [two(1024) - two(970), two(1024), -two(1024), two(5000)] {
            assert_eq!(
                to_f64(&too_big),
                Err("int too large to convert to float".into())
            );
        }
        assert_eq!(
            from_integral_f64(-1e30).to_string(),
            "-1000000000000000019884624838656"
        );
        assert_eq!(from_integral_f64(2f64.powi(1023)), two(1023));
        assert_eq!(from_integral_f64(-0.0), BigInt::ZERO);
    }

    #[test]
    fn true_division_is_correctly_rounded() {
        let ten = |n: u32| BigInt::from(10).pow(n);
        assert_eq!(true_div(&(ten(40) + 1), &ten(20)), Ok(1e20));
        assert_eq!(
            true_div(&(two(200) + 1), &BigInt::from(3)),
            Ok(5.356460147529967e59)
        );
        assert_eq!(
            true_div(&-ten(30), &BigInt::from(7)),
            Ok(-1.4285714285714285e29)
        );
        assert_eq!(
            true_div(&BigInt::from(1), &(two(64) + 1)),
            Ok(5.421010862427522e-20)
        );
        assert_eq!(true_div(&BigInt::ZERO, &two(100)), Ok(0.0));
        assert!(
            true_div(&BigInt::ZERO, &-two(100)).is_ok_and(|f| f == 0.0 && f.is_sign_negative())
        );
        assert_eq!(
            true_div(&two(1100), &BigInt::from(3)),
            Err("integer division result too large for a float".into())
        );
        assert_eq!(
            true_div(&BigInt::from(1), &BigInt::ZERO),
            Err("division by zero".into())
        );
    }

    #[test]
    fn powers_and_shifts() {
        let e = |s: &str| big(s);
        let huge = "100000000000000000000000000000000000000000000000000";
        assert_eq!(pow(&BigInt::from(-1), &e(huge)), Ok(BigInt::from(1)));
        assert_eq!(pow(&BigInt::from(-1), &(e(huge) + 1)), Ok(BigInt::from(-1)));
        assert_eq!(pow(&BigInt::ZERO, &e(huge)), Ok(BigInt::ZERO));
        assert_eq!(pow(&BigInt::ZERO, &BigInt::ZERO), Ok(BigInt::from(1)));
        assert_eq!(
            pow(&BigInt::from(-3), &BigInt::from(3)),
            Ok(BigInt::from(-27))
        );
        // The limit is on bits × exponent: 2 (2 bits) ** 16384 is within it.
        assert_eq!(pow(&BigInt::from(2), &BigInt::from(16384)), Ok(two(16384)));
        assert!(pow(&BigInt::from(2), &BigInt::from(16385)).is_err());
        assert!(pow(&BigInt::from(2), &e(huge)).is_err());
        // `>>` rounds toward negative infinity, whatever the count.
        assert_eq!(shr(&BigInt::from(-5), &BigInt::from(1)), BigInt::from(-3));
        assert_eq!(shr(&BigInt::from(5), &BigInt::from(1)), BigInt::from(2));
        assert_eq!(shr(&-two(200), &BigInt::from(199)), BigInt::from(-2));
        assert_eq!(
            shr(&-(two(200) + 1u8), &BigInt::from(200)),
            BigInt::from(-2)
        );
        assert_eq!(shr(&BigInt::from(-1), &e(huge)), BigInt::from(-1));
        assert_eq!(shr(&two(300), &e(huge)), BigInt::ZERO);
    }

    #[test]
    fn literals_are_read_with_a_size_limit() {
        assert_eq!(parse("ff", 16), Ok(BigInt::from(255)));
        assert_eq!(parse("777", 8), Ok(BigInt::from(511)));
        assert_eq!(parse("101", 2), Ok(BigInt::from(5)));
        assert_eq!(parse("0", 10), Ok(BigInt::ZERO));
        // Leading zeros cost nothing.
        assert_eq!(
            parse(&format!("{}1", "0".repeat(100_000)), 10),
            Ok(BigInt::from(1))
        );
        // 8,194 hex digits are more than the 32,768 bits (plus slack) handled.
        assert!(parse(&"f".repeat(8194), 16).is_err());
        assert_eq!(
            parse(&"f".repeat(8192), 16),
            Ok((BigInt::from(1) << 32768u32) - 1)
        );
        assert!(parse(&"1".repeat(32_773), 2).is_err());
        // Underscores and signs are the lexer's business, never accepted here.
        assert!(parse("1_0", 10).is_err());
        assert!(parse("+1", 10).is_err());
        assert!(parse("12", 2).is_err());
    }
}
