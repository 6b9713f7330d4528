//! PostgreSQL `numeric`: arbitrary precision decimal with NaN and ±Infinity.
//!
//! A finite value is `digits × 10^-scale`, the scale being PostgreSQL's *display scale*
//! (dscale): `1.50` keeps scale 2 and prints as `1.50`. The scale is never negative
//! (constructors normalize `1e3` to `1000` with scale 0), which keeps text output and key
//! encoding simple.
//!
//! Two forms hold finite values, and the form is canonical: a value whose digits fit an i64
//! (and whose scale fits a u16) is always `Small`, any other is `Finite` (a `BigDecimal`).
//! Every constructor goes through [`finite`] or `numeric_small::make`, which choose the form.
//! `Small` values are added, multiplied, compared and printed without the heap
//! (`numeric_small`); everything else goes through `BigDecimal` ([`Numeric::big`]).

use crate::numeric_digits as digits;
use crate::numeric_small as small;
use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::num_traits::{Signed, ToPrimitive, Zero};
use keel_common::{PgError, PgResult, sqlstate};
use std::borrow::Cow;
use std::cmp::Ordering;

/// A numeric value (see the module comment for the two finite forms).
#[derive(Clone, Debug)]
pub enum Numeric {
    NaN,
    PosInf,
    NegInf,
    /// A finite value whose digits fit an i64: (digits, display scale).
    Small(i64, u16),
    /// Any other finite value, with its display scale.
    Finite(bigdecimal::BigDecimal),
}

/// Equal values are equal whatever their display scales (1.0 = 1.00), as `=` has it.
impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp_total(other) == Ordering::Equal
    }
}

/// PostgreSQL's NUMERIC_MIN_SIG_DIGITS: a quotient keeps at least this many significant digits.
const MIN_SIG_DIGITS: i64 = 16;
const MAX_DISPLAY_SCALE: i64 = 1000;
/// PostgreSQL's NUMERIC_DSCALE_MAX: the largest display scale a stored numeric can carry.
const DSCALE_MAX: i64 = 0x3FFF;

/// PostgreSQL's limit on the integer part: NUMERIC_WEIGHT_MAX (0x7FFF) base-10000 digits
/// after the first, so 131,072 decimal digits before the point.
const MAX_INTEGER_DIGITS: i64 = (0x7FFF + 1) * 4;

/// Builds a finite numeric from an unscaled integer and a scale, normalizing negative scales.
/// The form is chosen here: `Small` when the digits fit an i64.
pub fn finite(digits: BigInt, scale: i64) -> Numeric {
    if scale < 0 {
        let f = BigInt::from(10u8).pow((-scale) as u32);
        return finite(digits * f, 0);
    }
    if let (Some(d), Ok(s)) = (digits.to_i64(), u16::try_from(scale)) {
        return Numeric::Small(d, s);
    }
    Numeric::Finite(BigDecimal::new(digits, scale))
}

/// `n * 10^k` for `k > 0`.
fn shift_left(n: BigInt, k: i64) -> BigInt {
    n * BigInt::from(10u8).pow(k as u32)
}

/// `d` at `scale` decimal places: padded with zeros, or rounded half away from zero
/// (`half_up`) or truncated toward zero. One big division by a power of ten, linear in the
/// digits; bigdecimal's `with_scale_round` goes through a decimal digit vector and back,
/// which is quadratic and took seconds on a 100,000-digit product.
pub(crate) fn rescale(d: &BigDecimal, scale: i64, half_up: bool) -> BigDecimal {
    let (n, from) = d.as_bigint_and_scale();
    if scale >= from {
        return d.with_scale(scale);
    }
    let k = from - scale;
    // 10^k above the value's own digit count rounds to zero or to one unit.
    if (k as f64) * std::f64::consts::LOG2_10 > n.bits() as f64 + 4.0 {
        return BigDecimal::new(BigInt::zero(), scale);
    }
    let p = BigInt::from(10u8).pow(k as u32);
    let mut q = n.as_ref() / &p;
    let r = n.as_ref() - &q * &p;
    if half_up && r.magnitude() * 2u8 >= *p.magnitude() {
        q += if n.is_negative() { -1 } else { 1 };
    }
    BigDecimal::new(q, scale)
}

impl Numeric {
    /// The value, or PostgreSQL's 22003 "value overflows numeric format" when its integer part
    /// has more digits than a numeric can store (make_result's weight check). Arithmetic results
    /// pass through here, so a chain of products cannot grow numbers without bound.
    pub fn check_range(self) -> PgResult<Numeric> {
        // A Small value has at most 19 integer digits.
        let Numeric::Finite(bd) = &self else {
            return Ok(self);
        };
        let (digits, scale) = bd.as_bigint_and_exponent();
        // Decimal digits of the unscaled integer, from its bit length (off by at most one).
        let approx = (digits.bits() as f64 * std::f64::consts::LOG10_2) as i64 + 1;
        let int_digits = if (approx - scale - MAX_INTEGER_DIGITS).abs() <= 2 {
            digits::digit_count(digits.magnitude()) - scale
        } else {
            approx - scale
        };
        if int_digits > MAX_INTEGER_DIGITS {
            return Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "value overflows numeric format",
            ));
        }
        Ok(self)
    }

    pub fn from_i64(v: i64) -> Numeric {
        Numeric::Small(v, 0)
    }

    pub fn from_i128(v: i128) -> Numeric {
        small::make(v, 0)
    }

    /// A finite value as a `BigDecimal` (borrowed when it is one); None for NaN and ±Infinity.
    pub fn big(&self) -> Option<Cow<'_, BigDecimal>> {
        match self {
            Numeric::Small(d, s) => Some(Cow::Owned(BigDecimal::new((*d).into(), *s as i64))),
            Numeric::Finite(d) => Some(Cow::Borrowed(d)),
            _ => None,
        }
    }

    /// Hands `f` a finite value's sign (true: negative), the decimal digits of its unscaled
    /// magnitude (`b"0"` for zero, otherwise no leading zero) and its scale; None for NaN and
    /// ±Infinity. A `Small` value's digits are written on the stack, so the key, binary and
    /// width encodings that read digits do not touch the heap for it.
    pub fn with_digits<R>(&self, f: impl FnOnce(bool, &[u8], i64) -> R) -> Option<R> {
        match self {
            Numeric::Small(d, s) => {
                let mut buf = [0u8; 20];
                let mut at = buf.len();
                let mut m = d.unsigned_abs();
                loop {
                    at -= 1;
                    buf[at] = b'0' + (m % 10) as u8;
                    m /= 10;
                    if m == 0 {
                        break;
                    }
                }
                Some(f(*d < 0, &buf[at..], i64::from(*s)))
            }
            Numeric::Finite(b) => {
                let (n, s) = b.as_bigint_and_exponent();
                let text = n.magnitude().to_str_radix(10);
                Some(f(n.sign() == Sign::Minus, text.as_bytes(), s))
            }
            _ => None,
        }
    }

    /// A finite `BigDecimal` result in its canonical form.
    pub fn from_big(d: BigDecimal) -> Numeric {
        let (n, s) = d.into_bigint_and_exponent();
        finite(n, s)
    }

    pub fn is_finite(&self) -> bool {
        matches!(self, Numeric::Small(..) | Numeric::Finite(_))
    }

    pub fn zero() -> Numeric {
        Numeric::from_i64(0)
    }

    /// The display scale of a finite value (0 for special values).
    pub fn scale(&self) -> i64 {
        match self {
            Numeric::Small(_, s) => *s as i64,
            Numeric::Finite(d) => d.as_bigint_and_exponent().1.max(0),
            _ => 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Numeric::Small(d, _) => *d == 0,
            Numeric::Finite(d) => d.is_zero(),
            _ => false,
        }
    }

    /// Total order: -Infinity < finite < Infinity < NaN (NaN equals NaN), as PostgreSQL sorts.
    pub fn cmp_total(&self, other: &Numeric) -> Ordering {
        fn rank(n: &Numeric) -> u8 {
            match n {
                Numeric::NegInf => 0,
                Numeric::Small(..) | Numeric::Finite(_) => 1,
                Numeric::PosInf => 2,
                Numeric::NaN => 3,
            }
        }
        if let (Numeric::Small(a, sa), Numeric::Small(b, sb)) = (self, other)
            && let Some(o) = small::cmp(*a, *sa, *b, *sb)
        {
            return o;
        }
        match (self.big(), other.big()) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => rank(self).cmp(&rank(other)),
        }
    }

    pub fn to_f64(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::PosInf => f64::INFINITY,
            Numeric::NegInf => f64::NEG_INFINITY,
            // Through the decimal text, so the nearest double is chosen (strtod semantics),
            // unless the division is exact enough to give it directly.
            Numeric::Small(d, s) => {
                small::to_f64(*d, *s).unwrap_or_else(|| self.to_text().parse().unwrap_or(f64::NAN))
            }
            Numeric::Finite(_) => self.to_text().parse().unwrap_or(f64::NAN),
        }
    }

    /// float8 -> numeric as PostgreSQL does it: through 15 significant digits (DBL_DIG).
    pub fn from_f64(v: f64) -> Numeric {
        Numeric::from_float_digits(v, 15)
    }

    /// float4 -> numeric: 6 significant digits (FLT_DIG).
    pub fn from_f32(v: f32) -> Numeric {
        Numeric::from_float_digits(v as f64, 6)
    }

    fn from_float_digits(v: f64, digits: usize) -> Numeric {
        if v.is_nan() {
            return Numeric::NaN;
        }
        if v.is_infinite() {
            return if v > 0.0 {
                Numeric::PosInf
            } else {
                Numeric::NegInf
            };
        }
        // `%.{digits}g`: round to `digits` significant digits, then drop trailing zeros.
        let s = format!("{:.*e}", digits - 1, v);
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i64 = exp.parse().unwrap_or(0);
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        let neg = mant.starts_with('-');
        let m = mant.trim_start_matches('-');
        let (ip, fp) = m.split_once('.').unwrap_or((m, ""));
        let all: String = format!("{ip}{fp}");
        let mut n: BigInt = all.parse().unwrap_or_default();
        if neg {
            n = -n;
        }
        finite(n, fp.len() as i64 - exp)
    }

    /// Rounds (half away from zero) to an integer; None for NaN/Inf.
    pub fn round_to_i128(&self) -> Option<i128> {
        match self {
            Numeric::Small(d, s) => match small::round(*d, *s, 0, true)? {
                Numeric::Small(q, _) => Some(q as i128),
                other => other.round_to_i128(),
            },
            Numeric::Finite(d) => rescale(d, 0, true).as_bigint_and_exponent().0.to_i128(),
            _ => None,
        }
    }

    /// Rounds to `scale` decimal places, half away from zero (negative scale rounds to tens...).
    pub fn round(&self, scale: i64) -> Numeric {
        if let Numeric::Small(d, s) = self
            && let Some(r) = small::round(*d, *s, scale, true)
        {
            return r;
        }
        match self.big() {
            Some(d) => {
                let r = rescale(&d, scale, true);
                Numeric::from_big(r)
            }
            None => self.clone(),
        }
    }

    /// Truncates toward zero to `scale` decimal places.
    pub fn trunc(&self, scale: i64) -> Numeric {
        if let Numeric::Small(d, s) = self
            && let Some(r) = small::round(*d, *s, scale, false)
        {
            return r;
        }
        match self.big() {
            Some(d) => {
                let r = rescale(&d, scale, false);
                Numeric::from_big(r)
            }
            None => self.clone(),
        }
    }

    /// Applies a numeric(p,s) typmod ((p << 16 | s) + 4): rounds to s and checks the precision.
    pub fn apply_typmod(&self, typmod: i32) -> PgResult<Numeric> {
        if typmod < 4 {
            return Ok(self.clone());
        }
        let tm = typmod - 4;
        let precision = (tm >> 16) & 0xffff;
        let scale = ((tm & 0x7ff) ^ 1024) - 1024;
        match self {
            Numeric::NaN => Ok(Numeric::NaN),
            Numeric::PosInf | Numeric::NegInf => Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "numeric field overflow",
            )
            .with_detail(format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            ))),
            Numeric::Small(..) | Numeric::Finite(_) => {
                let r = self.round(scale as i64);
                // Decimal digits of the rounded value's digits, and its scale.
                let digits = match &r {
                    Numeric::Small(0, _) => None,
                    Numeric::Small(d, s) => Some((small::digit_count(*d), *s as i64)),
                    Numeric::Finite(d) => {
                        let (n, s) = d.as_bigint_and_exponent();
                        (!n.is_zero()).then(|| (n.abs().to_string().len() as i64, s))
                    }
                    _ => None,
                };
                {
                    if let Some((ndigits, s)) = digits {
                        let int_digits = ndigits - s;
                        if int_digits > (precision - scale) as i64 {
                            return Err(PgError::new(
                                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                                "numeric field overflow",
                            )
                            .with_detail(format!(
                                "A field with precision {precision}, scale {scale} must round to an absolute value less than {}.",
                                if precision - scale == 0 { "1".to_string() } else { format!("10^{}", precision - scale) }
                            )));
                        }
                    }
                }
                Ok(r)
            }
        }
    }

    pub fn neg(&self) -> Numeric {
        match self {
            Numeric::NaN => Numeric::NaN,
            Numeric::PosInf => Numeric::NegInf,
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Small(d, s) => small::make(-(*d as i128), *s),
            Numeric::Finite(d) => Numeric::from_big(-d),
        }
    }

    pub fn abs(&self) -> Numeric {
        match self {
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Small(d, s) => small::make((*d as i128).abs(), *s),
            Numeric::Finite(d) => Numeric::from_big(d.abs()),
            other => other.clone(),
        }
    }

    /// Sign: -1, 0, 1 (None for NaN).
    pub fn signum(&self) -> Option<i32> {
        match self {
            Numeric::NaN => None,
            Numeric::PosInf => Some(1),
            Numeric::NegInf => Some(-1),
            Numeric::Small(d, _) => Some(d.signum() as i32),
            Numeric::Finite(d) => Some(match d.sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            }),
        }
    }

    pub fn add(&self, other: &Numeric) -> Numeric {
        use Numeric::*;
        if let (Small(a, sa), Small(b, sb)) = (self, other)
            && let Some(r) = small::add(*a, *sa, *b, *sb)
        {
            return r;
        }
        if let (Some(a), Some(b)) = (self.big(), other.big()) {
            // Aligned on the integer digits: bigdecimal's `+` caps the scale it keeps when one
            // side is zero, while PostgreSQL's add_var keeps max(dscale1, dscale2).
            let (na, sa) = a.as_bigint_and_scale();
            let (nb, sb) = b.as_bigint_and_scale();
            let s = sa.max(sb);
            let sum = match sa.cmp(&sb) {
                Ordering::Equal => na.as_ref() + nb.as_ref(),
                Ordering::Less => shift_left(na.into_owned(), sb - sa) + nb.as_ref(),
                Ordering::Greater => na.as_ref() + shift_left(nb.into_owned(), sa - sb),
            };
            return finite(sum, s);
        }
        match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf, NegInf) | (NegInf, PosInf) => NaN,
            (PosInf, _) | (_, PosInf) => PosInf,
            _ => NegInf,
        }
    }

    pub fn sub(&self, other: &Numeric) -> Numeric {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Numeric) -> Numeric {
        use Numeric::*;
        if let (Small(a, sa), Small(b, sb)) = (self, other)
            && let Some(r) = small::mul(*a, *sa, *b, *sb, DSCALE_MAX)
        {
            return r;
        }
        if let (Some(a), Some(b)) = (self.big(), other.big()) {
            // The exact product at scale dscale1 + dscale2 (PostgreSQL's numeric_mul), rounded
            // only past NUMERIC_DSCALE_MAX. bigdecimal's `*` returns the other operand
            // normalized when one side equals 1, which would print 1.00 * 2 as 2.
            let (na, sa) = a.as_bigint_and_scale();
            let (nb, sb) = b.as_bigint_and_scale();
            let product = finite(na.as_ref() * nb.as_ref(), sa + sb);
            return if sa + sb > DSCALE_MAX {
                product.round(DSCALE_MAX)
            } else {
                product
            };
        }
        match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            _ => {
                let s = self.signum().unwrap_or(0) * other.signum().unwrap_or(0);
                match s {
                    0 => NaN,
                    1 => PosInf,
                    _ => NegInf,
                }
            }
        }
    }

    /// Division with PostgreSQL's result scale (select_div_scale), rounded half away from zero.
    pub fn div(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        if other.is_zero() && !matches!(self, NaN) {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        if let (Some(a), Some(b)) = (self.big(), other.big()) {
            let rscale = div_scale(&a, &b);
            return Ok(div_round(&a, &b, rscale));
        }
        Ok(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf | NegInf, PosInf | NegInf) => NaN,
            _ if self.is_finite() => Numeric::zero(),
            _ => {
                let s = self.signum().unwrap_or(0) * other.signum().unwrap_or(0);
                if s > 0 { PosInf } else { NegInf }
            }
        })
    }

    /// Division rounded to an explicit scale.
    pub fn div_scale(&self, other: &Numeric, scale: i64) -> PgResult<Numeric> {
        match (self.big(), other.big()) {
            (Some(a), Some(b)) => {
                if b.is_zero() {
                    return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
                }
                Ok(div_round(&a, &b, scale))
            }
            _ => self.div(other),
        }
    }

    /// Remainder with the sign of the dividend; scale = max of the operands' scales.
    pub fn rem(&self, other: &Numeric) -> PgResult<Numeric> {
        use Numeric::*;
        if other.is_zero() && !matches!(self, NaN) {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        if let (Some(a), Some(b)) = (self.big(), other.big()) {
            let (a, b) = (a.as_ref(), b.as_ref());
            let q = rescale(&(a / b), 0, false);
            let r = a - q * b;
            let s = self.scale().max(other.scale());
            return Ok(Numeric::from_big(r.with_scale(s)));
        }
        Ok(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf | NegInf, _) => NaN,
            _ => self.clone(),
        })
    }

    /// Base-10000 weight and first base-10000 digit of a finite non-zero value, as
    /// PostgreSQL's NumericVar sees it (used for its scale heuristics).
    fn weight_and_first(d: &BigDecimal) -> (i64, i64) {
        let (n, scale) = d.as_bigint_and_exponent();
        if n.is_zero() {
            return (0, 0);
        }
        let mag = n.magnitude();
        let lg = digits::log10_floor(mag);
        let e = lg - scale; // decimal exponent of the leading digit
        let w = e.div_euclid(4);
        let take = e - 4 * w + 1;
        let first = digits::leading(mag, lg + 1 - take) as i64;
        (w, first)
    }
}

/// PostgreSQL's select_div_scale for finite operands.
pub(crate) fn div_scale(a: &BigDecimal, b: &BigDecimal) -> i64 {
    let (w1, f1) = Numeric::weight_and_first(a);
    let (w2, f2) = Numeric::weight_and_first(b);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let s1 = a.as_bigint_and_exponent().1.max(0);
    let s2 = b.as_bigint_and_exponent().1.max(0);
    let rscale = (MIN_SIG_DIGITS - qweight * 4).max(s1).max(s2).max(0);
    rscale.min(MAX_DISPLAY_SCALE)
}

/// a / b rounded half away from zero to `scale` places (b non-zero).
fn div_round(a: &BigDecimal, b: &BigDecimal, scale: i64) -> Numeric {
    let (na, sa) = a.as_bigint_and_exponent();
    let (nb, sb) = b.as_bigint_and_exponent();
    // q = na*10^-sa / (nb*10^-sb), wanted as integer Q with q ≈ Q*10^-scale:
    // Q = na * 10^(scale + sb - sa) / nb, computed with one extra digit for rounding.
    let shift = scale + sb - sa + 1;
    let (num, den) = if shift >= 0 {
        (na * BigInt::from(10u8).pow(shift as u32), nb)
    } else {
        (na, nb * BigInt::from(10u8).pow((-shift) as u32))
    };
    let q = &num / &den; // truncates toward zero
    let last = (&q % 10i32).to_i32().unwrap_or(0);
    let mut q = q / 10i32;
    if last >= 5 {
        q += 1;
    } else if last <= -5 {
        q -= 1;
    }
    finite(q, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).unwrap()
    }

    #[test]
    fn parse_and_print() {
        // Expected values from PostgreSQL 15.
        assert_eq!(n("1e3").to_text(), "1000");
        assert_eq!(n("1.50e1").to_text(), "15.0");
        assert_eq!(n("-0.000").to_text(), "0.000");
        assert_eq!(n(" 1.50 ").to_text(), "1.50");
        assert_eq!(n(".5").to_text(), "0.5");
        assert_eq!(n("inf").to_text(), "Infinity");
        assert_eq!(n("-Infinity").to_text(), "-Infinity");
        assert_eq!(n("nan").to_text(), "NaN");
        assert!(Numeric::parse("abc").is_none());
        assert!(Numeric::parse("1e").is_none());
        assert!(Numeric::parse("").is_none());
    }

    #[test]
    fn division_scale() {
        // From PostgreSQL 15: 10/4, 1/3, 12345/7, 0.5/3, 2/0.0003.
        assert_eq!(
            n("10").div(&n("4")).unwrap().to_text(),
            "2.5000000000000000"
        );
        assert_eq!(
            n("1").div(&n("3")).unwrap().to_text(),
            "0.33333333333333333333"
        );
        assert_eq!(
            n("12345").div(&n("7")).unwrap().to_text(),
            "1763.5714285714285714"
        );
        assert_eq!(
            n("0.5").div(&n("3")).unwrap().to_text(),
            "0.16666666666666666667"
        );
        assert_eq!(
            n("2").div(&n("0.0003")).unwrap().to_text(),
            "6666.6666666666666667"
        );
        assert_eq!(n("1").div(&n("0")).unwrap_err().code, "22012");
        // From PostgreSQL 15: -1/3, 5 % 0.3, 9.99::numeric(3,1).
        assert_eq!(
            n("-1").div(&n("3")).unwrap().to_text(),
            "-0.33333333333333333333"
        );
        assert_eq!(n("5").rem(&n("0.3")).unwrap().to_text(), "0.2");
        assert_eq!(
            n("9.99")
                .apply_typmod(((3 << 16) | 1) + 4)
                .unwrap()
                .to_text(),
            "10.0"
        );
    }

    #[test]
    fn arithmetic() {
        // From PostgreSQL 15: 1.5*2.25 = 3.375, 7.5 % 2 = 1.5, -7.5 % 2 = -1.5.
        assert_eq!(n("1.5").mul(&n("2.25")).to_text(), "3.375");
        assert_eq!(n("7.5").rem(&n("2")).unwrap().to_text(), "1.5");
        assert_eq!(n("-7.5").rem(&n("2")).unwrap().to_text(), "-1.5");
        assert_eq!(n("2.5").round(0).to_text(), "3");
        assert_eq!(n("-2.5").round(0).to_text(), "-3");
        assert_eq!(
            n("12.345")
                .apply_typmod(((4 << 16) | 2) + 4)
                .unwrap()
                .to_text(),
            "12.35"
        );
        assert_eq!(
            n("123.4")
                .apply_typmod(((4 << 16) | 2) + 4)
                .unwrap_err()
                .code,
            "22003"
        );
    }

    #[test]
    fn from_float() {
        // From PostgreSQL 15: 0.1::float8::numeric, (1/3::float8)::numeric, 1e20::float8::numeric.
        assert_eq!(Numeric::from_f64(0.1).to_text(), "0.1");
        assert_eq!(Numeric::from_f64(1.0 / 3.0).to_text(), "0.333333333333333");
        assert_eq!(Numeric::from_f64(1e20).to_text(), "100000000000000000000");
        assert_eq!(Numeric::from_f32(123.456).to_text(), "123.456");
    }

    #[test]
    fn binary_round_trip() {
        for s in [
            "0",
            "1",
            "-1.50",
            "12345.6789",
            "0.0001",
            "100000000",
            "NaN",
            "Infinity",
            "0.000",
        ] {
            let v = n(s);
            let mut b = Vec::new();
            v.write_binary(&mut b);
            assert_eq!(
                Numeric::read_binary(&b).unwrap().to_text(),
                v.to_text(),
                "{s}"
            );
        }
        // 12345.678 in PostgreSQL's format: ndigits 3, weight 1, sign 0, dscale 3, 1 2345 6780.
        let mut b = Vec::new();
        n("12345.678").write_binary(&mut b);
        assert_eq!(
            b,
            vec![0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]
        );
    }
}
