//! Arithmetic on `Numeric::Small`: finite values whose unscaled digits fit an `i64`, which is
//! what almost every stored price, quantity and sum is. They are added, multiplied, compared,
//! rounded and printed in machine integers, without the heap; a result that does not fit falls
//! back to `BigDecimal` in the caller (each function here returns None then).
//!
//! A value is `digits × 10^-scale`, `scale` being its display scale (`1.50` is (150, 2)).

use crate::numeric::Numeric;
use std::cmp::Ordering;

/// 10^k for k ≤ 38, the powers an i128 holds.
fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `digits × 10^-scale` as a `Numeric`: `Small` when the digits fit an i64, else `Finite`.
pub(crate) fn make(digits: i128, scale: u16) -> Numeric {
    match i64::try_from(digits) {
        Ok(d) => Numeric::Small(d, scale),
        Err(_) => Numeric::Finite(bigdecimal::BigDecimal::new(digits.into(), scale as i64)),
    }
}

/// `v × 10^(to - from)` for `to ≥ from`; None on overflow.
fn rescale(v: i64, from: u16, to: u16) -> Option<i128> {
    (v as i128).checked_mul(pow10(u32::from(to - from))?)
}

/// a + b at the larger display scale, as PostgreSQL's add_var keeps it.
pub(crate) fn add(a: i64, sa: u16, b: i64, sb: u16) -> Option<Numeric> {
    let s = sa.max(sb);
    let sum = rescale(a, sa, s)?.checked_add(rescale(b, sb, s)?)?;
    Some(make(sum, s))
}

/// a × b at scale sa + sb (exact; i64 × i64 always fits an i128).
pub(crate) fn mul(a: i64, sa: u16, b: i64, sb: u16, max_scale: i64) -> Option<Numeric> {
    let s = u32::from(sa) + u32::from(sb);
    if i64::from(s) > max_scale {
        return None;
    }
    Some(make(a as i128 * b as i128, s as u16))
}

/// Orders two values by magnitude; None when aligning their scales overflows.
pub(crate) fn cmp(a: i64, sa: u16, b: i64, sb: u16) -> Option<Ordering> {
    if sa == sb {
        return Some(a.cmp(&b));
    }
    let s = sa.max(sb);
    Some(rescale(a, sa, s)?.cmp(&rescale(b, sb, s)?))
}

/// Rounds (half away from zero) or truncates to `to` places, `to ≥ 0`.
pub(crate) fn round(d: i64, s: u16, to: i64, half_up: bool) -> Option<Numeric> {
    let to = u16::try_from(to).ok()?;
    if to >= s {
        return Some(make(rescale(d, s, to)?, to));
    }
    let Some(p) = pow10(u32::from(s - to)) else {
        // More than 38 places dropped from an i64: the value rounds to zero.
        return Some(Numeric::Small(0, to));
    };
    let (d, p) = (d as i128, p);
    let mut q = d / p;
    let r = d % p;
    if half_up && r.abs() * 2 >= p {
        q += d.signum();
    }
    Some(make(q, to))
}

/// Decimal digits of |d| (1 for zero).
pub(crate) fn digit_count(d: i64) -> i64 {
    d.unsigned_abs()
        .checked_ilog10()
        .map_or(1, |l| l as i64 + 1)
}

/// The nearest double: exact when the digits and the power of ten are both exact doubles,
/// since IEEE division rounds correctly; None otherwise (the caller goes through text).
pub(crate) fn to_f64(d: i64, s: u16) -> Option<f64> {
    const EXACT: u64 = 1 << 53;
    if d.unsigned_abs() > EXACT || s > 22 {
        return None;
    }
    Some(d as f64 / 10f64.powi(i32::from(s)))
}

/// PostgreSQL's text form: the digits with the point `s` places from the right.
pub(crate) fn write_text(d: i64, s: u16, out: &mut String) {
    use std::fmt::Write;
    if d < 0 {
        out.push('-');
    }
    let mut buf = String::with_capacity(24);
    let _ = write!(buf, "{}", d.unsigned_abs());
    let s = s as usize;
    if s == 0 {
        out.push_str(&buf);
    } else if buf.len() > s {
        out.push_str(&buf[..buf.len() - s]);
        out.push('.');
        out.push_str(&buf[buf.len() - s..]);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', s - buf.len()));
        out.push_str(&buf);
    }
}

/// The shortest two's-complement little-endian bytes of `d`, as `BigInt::to_signed_bytes_le`
/// gives them (the stored row format's digits).
pub(crate) fn signed_bytes_le(d: i64, out: &mut Vec<u8>) {
    let b = d.to_le_bytes();
    let mut n = 8;
    // Drop a top byte that only repeats the sign of the byte below it.
    while n > 1 {
        let (top, below) = (b[n - 1], b[n - 2]);
        let redundant = (top == 0 && below & 0x80 == 0) || (top == 0xff && below & 0x80 != 0);
        if !redundant {
            break;
        }
        n -= 1;
    }
    out.extend_from_slice(&b[..n]);
}

/// The inverse of [`signed_bytes_le`] for up to 8 bytes.
pub(crate) fn from_signed_bytes_le(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 8 {
        return None;
    }
    let fill = if b[b.len() - 1] & 0x80 != 0 { 0xff } else { 0 };
    let mut a = [fill; 8];
    a[..b.len()].copy_from_slice(b);
    Some(i64::from_le_bytes(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigdecimal::num_bigint::BigInt;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn stored_bytes_match_bigint(d in any::<i64>()) {
            let mut out = Vec::new();
            signed_bytes_le(d, &mut out);
            prop_assert_eq!(&out, &BigInt::from(d).to_signed_bytes_le());
            prop_assert_eq!(from_signed_bytes_le(&out), Some(d));
        }

        #[test]
        fn small_arithmetic_matches_bigdecimal(a in any::<i64>(), sa in 0u16..24, b in any::<i64>(), sb in 0u16..24) {
            let big = |d: i64, s: u16| Numeric::Finite(bigdecimal::BigDecimal::new(d.into(), s as i64));
            let (x, y) = (big(a, sa), big(b, sb));
            if let Some(sum) = add(a, sa, b, sb) {
                prop_assert_eq!(sum.to_text(), x.add(&y).to_text());
            }
            let product = mul(a, sa, b, sb, 0x3FFF).unwrap();
            prop_assert_eq!(product.to_text(), x.mul(&y).to_text());
            if let Some(o) = cmp(a, sa, b, sb) {
                prop_assert_eq!(o, x.cmp_total(&y));
            }
            let mut text = String::new();
            write_text(a, sa, &mut text);
            prop_assert_eq!(text, x.to_text());
            // Rounding to more places than an i128 can scale to is left to BigDecimal.
            for to in 0..26 {
                if let Some(r) = round(a, sa, to, true) {
                    prop_assert_eq!(r.to_text(), x.round(to).to_text());
                }
                if let Some(r) = round(a, sa, to, false) {
                    prop_assert_eq!(r.to_text(), x.trunc(to).to_text());
                }
            }
            prop_assert!(round(a, sa, i64::from(sa), true).is_some());
        }

        /// The key, binary and stored-width encodings read a `Small` value's digits from the
        /// stack: they must give the bytes its `BigDecimal` form gives, keys must order as the
        /// values do, and the binary form must read back as the same value.
        #[test]
        fn encodings_match_bigdecimal(a in any::<i64>(), sa in 0u16..24, b in any::<i64>(), sb in 0u16..24) {
            use crate::{Datum, TypeId};
            let big = |d: i64, s: u16| Numeric::Finite(bigdecimal::BigDecimal::new(d.into(), s as i64));
            let key = |n: &Numeric| {
                let mut k = Vec::new();
                crate::key::encode_key_value(&Datum::Numeric(Box::new(n.clone())), TypeId::Numeric, &mut k);
                k
            };
            let binary = |n: &Numeric| {
                let mut out = Vec::new();
                n.write_binary(&mut out);
                out
            };
            let (x, y) = (Numeric::Small(a, sa), Numeric::Small(b, sb));
            prop_assert_eq!(key(&x), key(&big(a, sa)));
            prop_assert_eq!(binary(&x), binary(&big(a, sa)));
            prop_assert_eq!(x.base10000_shape(), big(a, sa).base10000_shape());
            prop_assert_eq!(key(&x).cmp(&key(&y)), x.cmp_total(&y));
            let back = Numeric::read_binary(&binary(&x)).unwrap();
            prop_assert_eq!(back.to_text(), x.to_text());
        }
    }
}
