//! Operator implementations. Each takes non-null operands already coerced to the types the
//! resolver chose; integer slots also accept narrower integer variants.

use super::{cmp_f64, compare, date_to_ts, div_zero, int_out_of_range};
use crate::datetime;
use crate::interval::Interval;
use crate::numeric::Numeric;
use crate::scalar::{Arith, float8_arith};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

fn mismatch() -> PgError {
    PgError::internal("operator called with operands of unexpected types")
}

#[inline]
fn int_of(d: &Datum) -> PgResult<i64> {
    match d {
        Datum::Int4(v) => Ok(*v as i64),
        Datum::Int8(v) => Ok(*v),
        Datum::Int2(v) => Ok(*v as i64),
        Datum::Oid(v) => Ok(*v as i64),
        _ => Err(mismatch()),
    }
}

/// Any number-family datum as f64.
pub fn to_f64(d: &Datum) -> PgResult<f64> {
    match d {
        Datum::Float8(v) => Ok(*v),
        Datum::Float4(v) => Ok(*v as f64),
        Datum::Numeric(n) => Ok(n.to_f64()),
        other => Ok(int_of(other)? as f64),
    }
}

/// Any number-family datum as numeric.
pub fn to_numeric(d: &Datum) -> PgResult<Numeric> {
    match d {
        Datum::Numeric(n) => Ok((**n).clone()),
        Datum::Float8(v) => Ok(Numeric::from_f64(*v)),
        Datum::Float4(v) => Ok(Numeric::from_f32(*v)),
        other => Ok(Numeric::from_i64(int_of(other)?)),
    }
}

macro_rules! int_arith {
    ($name:ident, $ty:ty, $variant:ident, $tid:expr, $method:ident) => {
        pub(super) fn $name(a: &Datum, b: &Datum) -> PgResult<Datum> {
            if let (Datum::$variant(x), Datum::$variant(y)) = (a, b) {
                return x
                    .$method(*y)
                    .map(Datum::$variant)
                    .ok_or_else(|| int_out_of_range($tid));
            }
            let (x, y) = (int_of(a)?, int_of(b)?);
            let x = <$ty>::try_from(x).map_err(|_| int_out_of_range($tid))?;
            let y = <$ty>::try_from(y).map_err(|_| int_out_of_range($tid))?;
            x.$method(y)
                .map(Datum::$variant)
                .ok_or_else(|| int_out_of_range($tid))
        }
    };
}

macro_rules! int_divmod {
    ($div:ident, $rem:ident, $ty:ty, $variant:ident, $tid:expr) => {
        pub(super) fn $div(a: &Datum, b: &Datum) -> PgResult<Datum> {
            let x = <$ty>::try_from(int_of(a)?).map_err(|_| int_out_of_range($tid))?;
            let y = <$ty>::try_from(int_of(b)?).map_err(|_| int_out_of_range($tid))?;
            if y == 0 {
                return Err(div_zero());
            }
            x.checked_div(y)
                .map(Datum::$variant)
                .ok_or_else(|| int_out_of_range($tid))
        }
        pub(super) fn $rem(a: &Datum, b: &Datum) -> PgResult<Datum> {
            let x = <$ty>::try_from(int_of(a)?).map_err(|_| int_out_of_range($tid))?;
            let y = <$ty>::try_from(int_of(b)?).map_err(|_| int_out_of_range($tid))?;
            if y == 0 {
                return Err(div_zero());
            }
            // MIN % -1 is 0 in PostgreSQL rather than an overflow.
            Ok(Datum::$variant(x.checked_rem(y).unwrap_or(0)))
        }
    };
}

int_arith!(int2_add, i16, Int2, TypeId::Int2, checked_add);
int_arith!(int2_sub, i16, Int2, TypeId::Int2, checked_sub);
int_arith!(int2_mul, i16, Int2, TypeId::Int2, checked_mul);
int_arith!(int4_add, i32, Int4, TypeId::Int4, checked_add);
int_arith!(int4_sub, i32, Int4, TypeId::Int4, checked_sub);
int_arith!(int4_mul, i32, Int4, TypeId::Int4, checked_mul);
int_arith!(int8_add, i64, Int8, TypeId::Int8, checked_add);
int_arith!(int8_sub, i64, Int8, TypeId::Int8, checked_sub);
int_arith!(int8_mul, i64, Int8, TypeId::Int8, checked_mul);
int_divmod!(int2_div, int2_mod, i16, Int2, TypeId::Int2);
int_divmod!(int4_div, int4_mod, i32, Int4, TypeId::Int4);
int_divmod!(int8_div, int8_mod, i64, Int8, TypeId::Int8);

fn same_int_variant(a: &Datum, v: i64) -> Datum {
    match a {
        Datum::Int2(_) => Datum::Int2(v as i16),
        Datum::Int4(_) => Datum::Int4(v as i32),
        _ => Datum::Int8(v),
    }
}

pub(super) fn bit_and(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(same_int_variant(a, int_of(a)? & int_of(b)?))
}
pub(super) fn bit_or(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(same_int_variant(a, int_of(a)? | int_of(b)?))
}
pub(super) fn bit_xor(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(same_int_variant(a, int_of(a)? ^ int_of(b)?))
}
pub(super) fn shl(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let s = int_of(b)? as u32;
    Ok(match a {
        Datum::Int2(x) => Datum::Int2(x.wrapping_shl(s)),
        Datum::Int4(x) => Datum::Int4(x.wrapping_shl(s)),
        _ => Datum::Int8(int_of(a)?.wrapping_shl(s)),
    })
}
pub(super) fn shr(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let s = int_of(b)? as u32;
    Ok(match a {
        Datum::Int2(x) => Datum::Int2(x.wrapping_shr(s)),
        Datum::Int4(x) => Datum::Int4(x.wrapping_shr(s)),
        _ => Datum::Int8(int_of(a)?.wrapping_shr(s)),
    })
}

/// A numeric operand, borrowed when it is one already (no copy of its digits per call).
pub(crate) fn numeric_arg(d: &Datum) -> PgResult<std::borrow::Cow<'_, Numeric>> {
    match d {
        Datum::Numeric(n) => Ok(std::borrow::Cow::Borrowed(&**n)),
        other => to_numeric(other).map(std::borrow::Cow::Owned),
    }
}

pub(super) fn num_add(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Numeric(Box::new(
        numeric_arg(a)?.add(&*numeric_arg(b)?).check_range()?,
    )))
}
pub(super) fn num_sub(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Numeric(Box::new(
        numeric_arg(a)?.sub(&*numeric_arg(b)?).check_range()?,
    )))
}
pub(super) fn num_mul(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Numeric(Box::new(
        numeric_arg(a)?.mul(&*numeric_arg(b)?).check_range()?,
    )))
}
pub(super) fn num_div(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Numeric(Box::new(
        to_numeric(a)?.div(&to_numeric(b)?)?.check_range()?,
    )))
}
pub(super) fn num_mod(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Numeric(Box::new(
        to_numeric(a)?.rem(&to_numeric(b)?)?.check_range()?,
    )))
}
pub(super) fn num_pow(a: &Datum, b: &Datum) -> PgResult<Datum> {
    crate::func::numeric_power(&to_numeric(a)?, &to_numeric(b)?)
        .map(|n| Datum::Numeric(Box::new(n)))
}

pub(crate) fn float_overflow() -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: overflow",
    )
}
pub(crate) fn float_underflow() -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: underflow",
    )
}

#[inline]
fn check_f4(r: f32, x: f32, y: f32, zero_ok: bool) -> PgResult<f32> {
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(float_overflow());
    }
    if r == 0.0 && !zero_ok && x != 0.0 && y.is_finite() {
        return Err(float_underflow());
    }
    Ok(r)
}

fn f4_of(d: &Datum) -> PgResult<f32> {
    match d {
        Datum::Float4(v) => Ok(*v),
        other => Ok(to_f64(other)? as f32),
    }
}

pub(super) fn f8_add(a: &Datum, b: &Datum) -> PgResult<Datum> {
    f8_arith(Arith::Add, a, b)
}
pub(super) fn f8_sub(a: &Datum, b: &Datum) -> PgResult<Datum> {
    f8_arith(Arith::Sub, a, b)
}
pub(super) fn f8_mul(a: &Datum, b: &Datum) -> PgResult<Datum> {
    f8_arith(Arith::Mul, a, b)
}
pub(super) fn f8_div(a: &Datum, b: &Datum) -> PgResult<Datum> {
    f8_arith(Arith::Div, a, b)
}
#[inline]
fn f8_arith(op: Arith, a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Float8(float8_arith(op, to_f64(a)?, to_f64(b)?)?))
}
pub(super) fn f4_add(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (f4_of(a)?, f4_of(b)?);
    Ok(Datum::Float4(check_f4(x + y, x, y, true)?))
}
pub(super) fn f4_sub(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (f4_of(a)?, f4_of(b)?);
    Ok(Datum::Float4(check_f4(x - y, x, y, true)?))
}
pub(super) fn f4_mul(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (f4_of(a)?, f4_of(b)?);
    Ok(Datum::Float4(check_f4(x * y, x, y, y == 0.0)?))
}
pub(super) fn f4_div(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (f4_of(a)?, f4_of(b)?);
    if y == 0.0 && !x.is_nan() {
        return Err(div_zero());
    }
    Ok(Datum::Float4(check_f4(x / y, x, y, y.is_infinite())?))
}
pub(super) fn f8_pow(a: &Datum, b: &Datum) -> PgResult<Datum> {
    crate::func::float_power(to_f64(a)?, to_f64(b)?).map(Datum::Float8)
}

/// Comparison operators; OP: 0 =, 1 <>, 2 <, 3 <=, 4 >, 5 >=.
#[inline]
fn apply_cmp<const OP: u8>(o: Ordering) -> bool {
    match OP {
        0 => o == Ordering::Equal,
        1 => o != Ordering::Equal,
        2 => o == Ordering::Less,
        3 => o != Ordering::Greater,
        4 => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

pub(super) fn cmp_fn<const OP: u8>(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Bool(apply_cmp::<OP>(compare(a, b))))
}

pub(super) fn bpcmp_fn<const OP: u8>(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Bool(apply_cmp::<OP>(super::compare_typed(
        a,
        b,
        TypeId::Bpchar,
    ))))
}

/// Compares values of different variants: numbers by value (exactly where possible).
pub(super) fn compare_mixed(a: &Datum, b: &Datum) -> Ordering {
    use Datum::*;
    let is_float = |d: &Datum| matches!(d, Float4(_) | Float8(_));
    let is_intish = |d: &Datum| matches!(d, Int2(_) | Int4(_) | Int8(_) | Oid(_));
    if is_intish(a) && is_intish(b) {
        return int_of(a).unwrap_or(0).cmp(&int_of(b).unwrap_or(0));
    }
    if (is_float(a) || is_float(b))
        && let (Ok(x), Ok(y)) = (to_f64(a), to_f64(b))
    {
        return cmp_f64(x, y);
    }
    if let (Ok(x), Ok(y)) = (to_numeric(a), to_numeric(b)) {
        return x.cmp_total(&y);
    }
    // Unrelated types: order by type so the order stays total.
    let rank = |d: &Datum| d.natural_type().map(|t| t.oid()).unwrap_or(u32::MAX);
    rank(a).cmp(&rank(b))
}

/// The text form `||` concatenates: text as it is, booleans spelled out (anynonarray goes
/// through the cast to text), anything else through its output function.
fn concat_operand(d: &Datum) -> PgResult<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    Ok(match d {
        Datum::Text(x) => Cow::Borrowed(x.as_str()),
        Datum::Bool(x) => Cow::Borrowed(if *x { "true" } else { "false" }),
        other => {
            crate::limits::text_out(other)?;
            Cow::Owned(crate::io::to_text(other))
        }
    })
}

pub(super) fn text_concat(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (concat_operand(a)?, concat_operand(b)?);
    // PostgreSQL allocates the result whole (textcat): past 1 GB that allocation fails.
    crate::limits::varlena(x.len() + y.len())?;
    let mut s = String::with_capacity(x.len() + y.len() + 16);
    s.push_str(&x);
    s.push_str(&y);
    Ok(Datum::Text(s))
}

pub(super) fn bytea_concat(a: &Datum, b: &Datum) -> PgResult<Datum> {
    match (a, b) {
        (Datum::Bytea(x), Datum::Bytea(y)) => {
            crate::limits::varlena(x.len() + y.len())?;
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend_from_slice(x);
            v.extend_from_slice(y);
            Ok(Datum::Bytea(v))
        }
        _ => Err(mismatch()),
    }
}

/// LIKE with `%`, `_` and backslash escape. `ci` folds case (ILIKE, simple lowercase).
pub fn like_match(s: &[u8], p: &[u8]) -> PgResult<bool> {
    // Iterative wildcard matching with backtracking to the last `%`.
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                b'%' => {
                    pi += 1;
                    star = Some((pi, si));
                    continue;
                }
                b'_' if si < s.len() => {
                    // `_` matches one character, not one byte.
                    si += utf8_len(s[si]);
                    pi += 1;
                    continue;
                }
                b'\\' => {
                    if pi + 1 >= p.len() {
                        return Err(PgError::new(
                            sqlstate::INVALID_ESCAPE_SEQUENCE,
                            "LIKE pattern must not end with escape character",
                        ));
                    }
                    if si < s.len() && s[si] == p[pi + 1] {
                        si += 1;
                        pi += 2;
                        continue;
                    }
                }
                c if c != b'_' && si < s.len() && s[si] == c => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                _ => {}
            }
        } else if si == s.len() {
            return Ok(true);
        }
        // Mismatch: backtrack to the last `%`, consuming one more character of s.
        match star {
            Some((sp, ss)) if ss < s.len() => {
                let ns = ss + utf8_len(s[ss]);
                star = Some((sp, ns));
                pi = sp;
                si = ns;
            }
            _ => return Ok(false),
        }
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        _ => 1,
    }
}

pub(super) fn like_fn<const NEG: bool, const CI: bool>(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let r = match (a, b) {
        (Datum::Text(s), Datum::Text(p)) => {
            if CI {
                like_match(s.to_lowercase().as_bytes(), p.to_lowercase().as_bytes())?
            } else {
                like_match(s.as_bytes(), p.as_bytes())?
            }
        }
        (Datum::Bytea(s), Datum::Bytea(p)) => like_match(s, p)?,
        (Datum::Bytea(s), Datum::Text(p)) => like_match(s, p.as_bytes())?,
        _ => return Err(mismatch()),
    };
    Ok(Datum::Bool(r != NEG))
}

fn date_of(d: &Datum) -> PgResult<i32> {
    match d {
        Datum::Date(v) => Ok(*v),
        _ => Err(mismatch()),
    }
}

fn ts_of(d: &Datum) -> PgResult<i64> {
    match d {
        Datum::Timestamp(v) | Datum::TimestampTz(v) => Ok(*v),
        Datum::Date(v) => Ok(date_to_ts(*v)),
        _ => Err(mismatch()),
    }
}

fn iv_of(d: &Datum) -> PgResult<Interval> {
    match d {
        Datum::Interval(v) => Ok(*v),
        _ => Err(mismatch()),
    }
}

fn date_out_of_range() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range")
}

fn date_add(d: i32, n: i64) -> PgResult<Datum> {
    if d == datetime::DATE_NEG_INF || d == datetime::DATE_POS_INF {
        return Ok(Datum::Date(d));
    }
    let r = d as i64 + n;
    if !(datetime::DATE_MIN_DAYS..datetime::DATE_END_DAYS).contains(&r) {
        return Err(date_out_of_range());
    }
    Ok(Datum::Date(r as i32))
}

pub(super) fn date_pl_int(a: &Datum, b: &Datum) -> PgResult<Datum> {
    date_add(date_of(a)?, int_of(b)?)
}
pub(super) fn int_pl_date(a: &Datum, b: &Datum) -> PgResult<Datum> {
    date_add(date_of(b)?, int_of(a)?)
}
pub(super) fn date_mi_int(a: &Datum, b: &Datum) -> PgResult<Datum> {
    date_add(date_of(a)?, -int_of(b)?)
}
pub(super) fn date_mi_date(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let (x, y) = (date_of(a)?, date_of(b)?);
    if [x, y]
        .iter()
        .any(|d| *d == datetime::DATE_NEG_INF || *d == datetime::DATE_POS_INF)
    {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite dates",
        ));
    }
    Ok(Datum::Int4(x - y))
}

/// Keeps the timestamp flavour of the left (or only) timestamp operand.
fn ts_like(a: &Datum, v: i64) -> Datum {
    if matches!(a, Datum::TimestampTz(_)) {
        Datum::TimestampTz(v)
    } else {
        Datum::Timestamp(v)
    }
}

pub(super) fn ts_pl_iv(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(ts_like(
        a,
        datetime::timestamp_add_interval(ts_of(a)?, &iv_of(b)?)?,
    ))
}
pub(super) fn ts_mi_iv(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(ts_like(
        a,
        datetime::timestamp_add_interval(ts_of(a)?, &iv_of(b)?.neg()?)?,
    ))
}
pub(super) fn iv_pl_ts(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(ts_like(
        b,
        datetime::timestamp_add_interval(ts_of(b)?, &iv_of(a)?)?,
    ))
}
pub(super) fn ts_mi_ts(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Interval(datetime::timestamp_diff(
        ts_of(a)?,
        ts_of(b)?,
    )?))
}
pub(super) fn iv_pl_iv(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Interval(iv_of(a)?.add(&iv_of(b)?)?))
}
pub(super) fn iv_mi_iv(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Interval(iv_of(a)?.sub(&iv_of(b)?)?))
}
pub(super) fn iv_mul(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Interval(iv_of(a)?.mul_f64(to_f64(b)?)?))
}
pub(super) fn f8_mul_iv(a: &Datum, b: &Datum) -> PgResult<Datum> {
    Ok(Datum::Interval(iv_of(b)?.mul_f64(to_f64(a)?)?))
}
pub(super) fn iv_div(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let f = to_f64(b)?;
    if f == 0.0 {
        return Err(div_zero());
    }
    Ok(Datum::Interval(iv_of(a)?.mul_f64(1.0 / f)?))
}

pub(super) fn neg(a: &Datum) -> PgResult<Datum> {
    Ok(match a {
        Datum::Int2(v) => Datum::Int2(
            v.checked_neg()
                .ok_or_else(|| int_out_of_range(TypeId::Int2))?,
        ),
        Datum::Int4(v) => Datum::Int4(
            v.checked_neg()
                .ok_or_else(|| int_out_of_range(TypeId::Int4))?,
        ),
        Datum::Int8(v) => Datum::Int8(
            v.checked_neg()
                .ok_or_else(|| int_out_of_range(TypeId::Int8))?,
        ),
        Datum::Float4(v) => Datum::Float4(-v),
        Datum::Float8(v) => Datum::Float8(-v),
        Datum::Numeric(n) => Datum::Numeric(Box::new(n.neg())),
        Datum::Interval(iv) => Datum::Interval(iv.neg()?),
        _ => return Err(mismatch()),
    })
}

pub(super) fn pos(a: &Datum) -> PgResult<Datum> {
    Ok(a.clone())
}

pub(super) fn abs(a: &Datum) -> PgResult<Datum> {
    Ok(match a {
        Datum::Int2(v) => Datum::Int2(
            v.checked_abs()
                .ok_or_else(|| int_out_of_range(TypeId::Int2))?,
        ),
        Datum::Int4(v) => Datum::Int4(
            v.checked_abs()
                .ok_or_else(|| int_out_of_range(TypeId::Int4))?,
        ),
        Datum::Int8(v) => Datum::Int8(
            v.checked_abs()
                .ok_or_else(|| int_out_of_range(TypeId::Int8))?,
        ),
        Datum::Float4(v) => Datum::Float4(v.abs()),
        Datum::Float8(v) => Datum::Float8(v.abs()),
        Datum::Numeric(n) => Datum::Numeric(Box::new(n.abs())),
        _ => return Err(mismatch()),
    })
}

/// `|/ x` (float8 square root).
pub(super) fn f8_sqrt(a: &Datum) -> PgResult<Datum> {
    let x = to_f64(a)?;
    if x < 0.0 {
        // 2201F invalid_argument_for_power_function, as PostgreSQL's dsqrt.
        return Err(PgError::new(
            "2201F",
            "cannot take square root of a negative number",
        ));
    }
    Ok(Datum::Float8(x.sqrt()))
}

/// `||/ x` (float8 cube root).
pub(super) fn f8_cbrt(a: &Datum) -> PgResult<Datum> {
    Ok(Datum::Float8(to_f64(a)?.cbrt()))
}

pub(super) fn bit_not(a: &Datum) -> PgResult<Datum> {
    Ok(match a {
        Datum::Int2(v) => Datum::Int2(!v),
        Datum::Int4(v) => Datum::Int4(!v),
        Datum::Int8(v) => Datum::Int8(!v),
        _ => return Err(mismatch()),
    })
}
