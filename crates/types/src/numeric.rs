//! PostgreSQL `numeric`: arbitrary precision decimal with NaN and ±Infinity.
//!
//! A finite value is a `BigDecimal` whose scale is the PostgreSQL *display scale* (dscale):
//! `1.50` keeps scale 2 and prints as `1.50`. The scale is never negative (constructors
//! normalize `1e3` to `1000` with scale 0), which keeps text output and key encoding simple.

use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::num_traits::{Signed, ToPrimitive, Zero};
use bigdecimal::{BigDecimal, RoundingMode};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

/// A numeric value. `Finite` holds the exact decimal with its display scale.
#[derive(Clone, Debug, PartialEq)]
pub enum Numeric {
    NaN,
    PosInf,
    NegInf,
    Finite(bigdecimal::BigDecimal),
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
pub fn finite(digits: BigInt, scale: i64) -> Numeric {
    if scale < 0 {
        let f = BigInt::from(10u8).pow((-scale) as u32);
        Numeric::Finite(BigDecimal::new(digits * f, 0))
    } else {
        Numeric::Finite(BigDecimal::new(digits, scale))
    }
}

/// `n * 10^k` for `k > 0`.
fn shift_left(n: BigInt, k: i64) -> BigInt {
    n * BigInt::from(10u8).pow(k as u32)
}

impl Numeric {
    /// The value, or PostgreSQL's 22003 "value overflows numeric format" when its integer part
    /// has more digits than a numeric can store (make_result's weight check). Arithmetic results
    /// pass through here, so a chain of products cannot grow numbers without bound.
    pub fn check_range(self) -> PgResult<Numeric> {
        let Numeric::Finite(bd) = &self else {
            return Ok(self);
        };
        let (digits, scale) = bd.as_bigint_and_exponent();
        // Decimal digits of the unscaled integer, from its bit length (off by at most one).
        let approx = (digits.bits() as f64 * std::f64::consts::LOG10_2) as i64 + 1;
        let int_digits = if (approx - scale - MAX_INTEGER_DIGITS).abs() <= 2 {
            digits.magnitude().to_string().len() as i64 - scale
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
        Numeric::Finite(BigDecimal::new(BigInt::from(v), 0))
    }

    pub fn from_i128(v: i128) -> Numeric {
        Numeric::Finite(BigDecimal::new(BigInt::from(v), 0))
    }

    pub fn zero() -> Numeric {
        Numeric::from_i64(0)
    }

    /// Parses PostgreSQL's numeric text syntax (surrounding whitespace allowed).
    /// None means invalid syntax.
    pub fn parse(s: &str) -> Option<Numeric> {
        let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "nan" => return Some(Numeric::NaN),
            "infinity" | "+infinity" | "inf" | "+inf" => return Some(Numeric::PosInf),
            "-infinity" | "-inf" => return Some(Numeric::NegInf),
            _ => {}
        }
        let b = t.as_bytes();
        let mut i = 0;
        let mut neg = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            neg = b[i] == b'-';
            i += 1;
        }
        let mut digits = String::with_capacity(b.len());
        let mut frac = 0i64;
        let mut seen_digit = false;
        let mut seen_point = false;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                digits.push(c as char);
                seen_digit = true;
                if seen_point {
                    frac += 1;
                }
            } else if c == b'.' && !seen_point {
                seen_point = true;
            } else {
                break;
            }
            i += 1;
        }
        if !seen_digit {
            return None;
        }
        let mut exp = 0i64;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let mut eneg = false;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                eneg = b[i] == b'-';
                i += 1;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = exp.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
                i += 1;
            }
            if start == i || exp > 100_000 {
                return None;
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return None;
        }
        let mut n: BigInt = digits.parse().ok()?;
        if neg {
            n = -n;
        }
        Some(finite(n, frac - exp))
    }

    /// Appends the text form PostgreSQL prints.
    pub fn write_text(&self, out: &mut String) {
        match self {
            Numeric::NaN => out.push_str("NaN"),
            Numeric::PosInf => out.push_str("Infinity"),
            Numeric::NegInf => out.push_str("-Infinity"),
            Numeric::Finite(d) => write_decimal(d, out),
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }

    /// The display scale of a finite value (0 for special values).
    pub fn scale(&self) -> i64 {
        match self {
            Numeric::Finite(d) => d.as_bigint_and_exponent().1.max(0),
            _ => 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Numeric::Finite(d) if d.is_zero())
    }

    /// Total order: -Infinity < finite < Infinity < NaN (NaN equals NaN), as PostgreSQL sorts.
    pub fn cmp_total(&self, other: &Numeric) -> Ordering {
        fn rank(n: &Numeric) -> u8 {
            match n {
                Numeric::NegInf => 0,
                Numeric::Finite(_) => 1,
                Numeric::PosInf => 2,
                Numeric::NaN => 3,
            }
        }
        match (self, other) {
            (Numeric::Finite(a), Numeric::Finite(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }

    pub fn to_f64(&self) -> f64 {
        match self {
            Numeric::NaN => f64::NAN,
            Numeric::PosInf => f64::INFINITY,
            Numeric::NegInf => f64::NEG_INFINITY,
            // Through the decimal text, so the nearest double is chosen (strtod semantics).
            Numeric::Finite(d) => {
                let mut s = String::new();
                write_decimal(d, &mut s);
                s.parse().unwrap_or(f64::NAN)
            }
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
            Numeric::Finite(d) => d
                .with_scale_round(0, RoundingMode::HalfUp)
                .as_bigint_and_exponent()
                .0
                .to_i128(),
            _ => None,
        }
    }

    /// Rounds to `scale` decimal places, half away from zero (negative scale rounds to tens...).
    pub fn round(&self, scale: i64) -> Numeric {
        match self {
            Numeric::Finite(d) => {
                let r = d.with_scale_round(scale, RoundingMode::HalfUp);
                let (n, s) = r.as_bigint_and_exponent();
                finite(n, s)
            }
            other => other.clone(),
        }
    }

    /// Truncates toward zero to `scale` decimal places.
    pub fn trunc(&self, scale: i64) -> Numeric {
        match self {
            Numeric::Finite(d) => {
                let r = d.with_scale_round(scale, RoundingMode::Down);
                let (n, s) = r.as_bigint_and_exponent();
                finite(n, s)
            }
            other => other.clone(),
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
            Numeric::Finite(_) => {
                let r = self.round(scale as i64);
                if let Numeric::Finite(d) = &r {
                    let (n, s) = d.as_bigint_and_exponent();
                    if !n.is_zero() {
                        let ndigits = n.abs().to_string().len() as i64;
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
            Numeric::Finite(d) => Numeric::Finite(-d),
        }
    }

    pub fn abs(&self) -> Numeric {
        match self {
            Numeric::NegInf => Numeric::PosInf,
            Numeric::Finite(d) => Numeric::Finite(d.abs()),
            other => other.clone(),
        }
    }

    /// Sign: -1, 0, 1 (None for NaN).
    pub fn signum(&self) -> Option<i32> {
        match self {
            Numeric::NaN => None,
            Numeric::PosInf => Some(1),
            Numeric::NegInf => Some(-1),
            Numeric::Finite(d) => Some(match d.sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            }),
        }
    }

    pub fn add(&self, other: &Numeric) -> Numeric {
        use Numeric::*;
        match (self, other) {
            // Aligned on the integer digits: bigdecimal's `+` caps the scale it keeps when one
            // side is zero, while PostgreSQL's add_var keeps max(dscale1, dscale2).
            (Finite(a), Finite(b)) => {
                let (na, sa) = a.as_bigint_and_scale();
                let (nb, sb) = b.as_bigint_and_scale();
                let s = sa.max(sb);
                let sum = match sa.cmp(&sb) {
                    Ordering::Equal => na.as_ref() + nb.as_ref(),
                    Ordering::Less => shift_left(na.into_owned(), sb - sa) + nb.as_ref(),
                    Ordering::Greater => na.as_ref() + shift_left(nb.into_owned(), sa - sb),
                };
                finite(sum, s)
            }
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
        match (self, other) {
            // The exact product at scale dscale1 + dscale2 (PostgreSQL's numeric_mul), rounded
            // only past NUMERIC_DSCALE_MAX. bigdecimal's `*` returns the other operand normalized
            // when one side equals 1, which would print 1.00 * 2 as 2.
            (Finite(a), Finite(b)) => {
                let (na, sa) = a.as_bigint_and_scale();
                let (nb, sb) = b.as_bigint_and_scale();
                let product = finite(na.as_ref() * nb.as_ref(), sa + sb);
                if sa + sb > DSCALE_MAX {
                    product.round(DSCALE_MAX)
                } else {
                    product
                }
            }
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
        Ok(match (self, other) {
            (Finite(a), Finite(b)) => {
                let rscale = div_scale(a, b);
                div_round(a, b, rscale)
            }
            (NaN, _) | (_, NaN) => NaN,
            (PosInf | NegInf, PosInf | NegInf) => NaN,
            (Finite(_), _) => Numeric::zero(),
            _ => {
                let s = self.signum().unwrap_or(0) * other.signum().unwrap_or(0);
                if s > 0 { PosInf } else { NegInf }
            }
        })
    }

    /// Division rounded to an explicit scale.
    pub fn div_scale(&self, other: &Numeric, scale: i64) -> PgResult<Numeric> {
        match (self, other) {
            (Numeric::Finite(a), Numeric::Finite(b)) => {
                if b.is_zero() {
                    return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
                }
                Ok(div_round(a, b, scale))
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
        Ok(match (self, other) {
            (Finite(a), Finite(b)) => {
                let q = (a / b).with_scale_round(0, RoundingMode::Down);
                let r = a - q * b;
                let s = self.scale().max(other.scale());
                let (n, sc) = r.with_scale(s).as_bigint_and_exponent();
                finite(n, sc)
            }
            (NaN, _) | (_, NaN) => NaN,
            (PosInf | NegInf, _) => NaN,
            (Finite(_), _) => self.clone(),
        })
    }

    /// Base-10000 weight and first base-10000 digit of a finite non-zero value, as
    /// PostgreSQL's NumericVar sees it (used for its scale heuristics).
    fn weight_and_first(d: &BigDecimal) -> (i64, i64) {
        let (n, scale) = d.as_bigint_and_exponent();
        if n.is_zero() {
            return (0, 0);
        }
        let digits = n.abs().to_string();
        let e = digits.len() as i64 - 1 - scale; // decimal exponent of the leading digit
        let w = e.div_euclid(4);
        let take = (e - 4 * w + 1) as usize;
        let mut first = 0i64;
        for i in 0..take {
            let dgt = digits
                .as_bytes()
                .get(i)
                .map(|c| (c - b'0') as i64)
                .unwrap_or(0);
            first = first * 10 + dgt;
        }
        (w, first)
    }

    /// Binary send format: ndigits, weight, sign, dscale, then base-10000 digits (all i16 BE).
    pub fn write_binary(&self, out: &mut Vec<u8>) {
        let (sign, d) = match self {
            Numeric::NaN => (0xC000u16, None),
            Numeric::PosInf => (0xD000, None),
            Numeric::NegInf => (0xF000, None),
            Numeric::Finite(d) => (if d.is_negative() { 0x4000 } else { 0 }, Some(d)),
        };
        let Some(d) = d else {
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(&sign.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            return;
        };
        let (n, scale) = d.as_bigint_and_exponent();
        let scale = scale.max(0);
        let s = n.abs().to_string();
        // Split into integer and fraction decimal digits, then group by 4 around the point.
        let (ip, fp) = if (s.len() as i64) > scale {
            let cut = s.len() - scale as usize;
            (s[..cut].to_string(), s[cut..].to_string())
        } else {
            (
                String::new(),
                format!("{}{}", "0".repeat(scale as usize - s.len()), s),
            )
        };
        let ip = ip.trim_start_matches('0');
        let ipad = (4 - ip.len() % 4) % 4;
        let ip_full = format!("{}{}", "0".repeat(ipad), ip);
        let fpad = (4 - fp.len() % 4) % 4;
        let fp_full = format!("{}{}", fp, "0".repeat(fpad));
        let mut groups: Vec<i16> = Vec::new();
        for c in ip_full
            .as_bytes()
            .chunks(4)
            .chain(fp_full.as_bytes().chunks(4))
        {
            let mut v = 0i16;
            for &b in c {
                v = v * 10 + (b - b'0') as i16;
            }
            groups.push(v);
        }
        let mut weight = (ip_full.len() / 4) as i64 - 1;
        // Strip leading and trailing zero groups.
        let lead = groups.iter().take_while(|&&g| g == 0).count();
        groups.drain(..lead);
        weight -= lead as i64;
        while groups.last() == Some(&0) {
            groups.pop();
        }
        if groups.is_empty() {
            weight = 0;
        }
        out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
        out.extend_from_slice(&(weight as i16).to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&(scale as u16).to_be_bytes());
        for g in groups {
            out.extend_from_slice(&g.to_be_bytes());
        }
    }

    /// Binary receive format (see [`Numeric::write_binary`]).
    pub fn read_binary(b: &[u8]) -> PgResult<Numeric> {
        let bad = || {
            PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "invalid numeric binary data",
            )
        };
        if b.len() < 8 {
            return Err(bad());
        }
        let nd = i16::from_be_bytes([b[0], b[1]]);
        let weight = i16::from_be_bytes([b[2], b[3]]) as i64;
        let sign = u16::from_be_bytes([b[4], b[5]]);
        let dscale = u16::from_be_bytes([b[6], b[7]]) as i64;
        match sign {
            0xC000 => return Ok(Numeric::NaN),
            0xD000 => return Ok(Numeric::PosInf),
            0xF000 => return Ok(Numeric::NegInf),
            0 | 0x4000 => {}
            _ => {
                return Err(PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    "invalid sign in external \"numeric\" value",
                ));
            }
        }
        if nd < 0 || b.len() != 8 + 2 * nd as usize {
            return Err(bad());
        }
        let mut n = BigInt::zero();
        for i in 0..nd as usize {
            let g = i16::from_be_bytes([b[8 + 2 * i], b[9 + 2 * i]]);
            if !(0..10000).contains(&g) {
                return Err(PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    "invalid digit in external \"numeric\" value",
                ));
            }
            n = n * 10000 + g;
        }
        if sign == 0x4000 {
            n = -n;
        }
        // value = n * 10000^(weight - nd + 1)
        let exp10 = 4 * (weight - nd as i64 + 1);
        let v = BigDecimal::new(n, -exp10);
        let v = v.with_scale_round(dscale, RoundingMode::HalfUp);
        let (n, s) = v.as_bigint_and_exponent();
        Ok(finite(n, s))
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

pub(crate) fn write_decimal(d: &BigDecimal, out: &mut String) {
    let (n, scale) = d.as_bigint_and_exponent();
    if scale <= 0 {
        out.push_str(&n.to_string());
        if scale < 0 && !n.is_zero() {
            for _ in 0..(-scale) {
                out.push('0');
            }
        }
        return;
    }
    let s = n.abs().to_string();
    if n.is_negative() {
        out.push('-');
    }
    let scale = scale as usize;
    if s.len() > scale {
        out.push_str(&s[..s.len() - scale]);
        out.push('.');
        out.push_str(&s[s.len() - scale..]);
    } else {
        out.push_str("0.");
        for _ in 0..(scale - s.len()) {
            out.push('0');
        }
        out.push_str(&s);
    }
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
