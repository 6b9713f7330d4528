//! Memcomparable index keys: encoded so that `memcmp` order equals SQL `<` order (collation
//! "C", NULLS LAST, as a default B-tree), SQL-equal values encode to equal bytes (1.0 and 1.00,
//! -0.0 and 0.0), and each column's encoding is self-delimiting, so a key of the first k
//! columns is a byte prefix of every full key with those values.
//!
//! Per column: a tag byte, 0x01 for a value and 0x02 for NULL (so NULL sorts last), then
//! - bool: one byte 0/1;
//! - int2/int4/int8/date/timestamp/timestamptz/oid: big-endian of the column's width with the
//!   sign bit flipped (oid is unsigned: plain big-endian); a datum of another integer width is
//!   converted to the column's width first;
//! - float4/float8: IEEE bits, all bits flipped for negatives, sign bit flipped otherwise;
//!   -0.0 becomes 0.0 and every NaN the canonical one, greatest of all;
//! - numeric: class byte (1 -Inf, 2 negative, 3 zero, 4 positive, 5 +Inf, 6 NaN); finite
//!   non-zero values add the decimal exponent of the leading digit (i32, sign-flipped BE) and
//!   the significant digits without trailing zeros, two per byte as `10*a + b + 1`, then 0x00;
//!   negative values store all those bytes inverted;
//! - text-like and bytea: the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x00; bpchar
//!   drops trailing spaces first (its comparison ignores them);
//! - interval: PostgreSQL's comparison key (months*30 days + days, in microseconds) as a
//!   sign-flipped big-endian i128.

use crate::numeric::Numeric;
use crate::{Datum, TypeId};

pub const TAG_VALUE: u8 = 0x01;
pub const TAG_NULL: u8 = 0x02;

/// Appends the key encoding of `values` (column types given) to `out`.
pub fn encode_key(values: &[Datum], types: &[TypeId], out: &mut Vec<u8>) {
    for (v, &ty) in values.iter().zip(types) {
        encode_key_value(v, ty, out);
    }
}

fn int_of(v: &Datum) -> i64 {
    if let Some(x) = v.int_value() {
        return x;
    }
    match v {
        Datum::Bool(b) => *b as i64,
        Datum::Float4(f) => *f as i64,
        Datum::Float8(f) => *f as i64,
        Datum::Numeric(n) => n
            .round_to_i128()
            .unwrap_or(0)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64,
        _ => 0,
    }
}

/// Order-preserving bits of a float8 (also used for float4 widened: widening is exact).
#[inline]
pub fn float_key_bits(f: f64) -> u64 {
    let f = if f == 0.0 {
        0.0
    } else if f.is_nan() {
        f64::NAN
    } else {
        f
    };
    let bits = f.to_bits();
    if bits & (1 << 63) != 0 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[inline]
fn float32_key_bits(f: f32) -> u32 {
    let f = if f == 0.0 {
        0.0
    } else if f.is_nan() {
        f32::NAN
    } else {
        f
    };
    let bits = f.to_bits();
    if bits & (1 << 31) != 0 {
        !bits
    } else {
        bits | (1 << 31)
    }
}

/// Appends one column's key encoding.
pub fn encode_key_value(v: &Datum, ty: TypeId, out: &mut Vec<u8>) {
    if v.is_null() {
        out.push(TAG_NULL);
        return;
    }
    out.push(TAG_VALUE);
    match ty {
        TypeId::Int4 | TypeId::Date => {
            let x = int_of(v).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            out.extend_from_slice(&((x as u32) ^ (1 << 31)).to_be_bytes());
        }
        TypeId::Int8 | TypeId::Timestamp | TypeId::TimestampTz => {
            out.extend_from_slice(&((int_of(v) as u64) ^ (1 << 63)).to_be_bytes());
        }
        TypeId::Int2 => {
            let x = int_of(v).clamp(i16::MIN as i64, i16::MAX as i64) as i16;
            out.extend_from_slice(&((x as u16) ^ (1 << 15)).to_be_bytes());
        }
        TypeId::Oid | TypeId::RegClass => {
            out.extend_from_slice(&(int_of(v).clamp(0, u32::MAX as i64) as u32).to_be_bytes())
        }
        TypeId::Bool => out.push(matches!(v, Datum::Bool(true)) as u8),
        TypeId::Float8 => {
            let f = match v {
                Datum::Float8(f) => *f,
                Datum::Float4(f) => *f as f64,
                Datum::Numeric(n) => n.to_f64(),
                other => int_of(other) as f64,
            };
            out.extend_from_slice(&float_key_bits(f).to_be_bytes());
        }
        TypeId::Float4 => {
            let f = match v {
                Datum::Float4(f) => *f,
                Datum::Float8(f) => *f as f32,
                other => int_of(other) as f32,
            };
            out.extend_from_slice(&float32_key_bits(f).to_be_bytes());
        }
        TypeId::Text | TypeId::Varchar | TypeId::Name | TypeId::Unknown => {
            if let Datum::Text(s) = v {
                encode_bytes(s.as_bytes(), out)
            } else {
                encode_bytes(crate::io::to_text(v).as_bytes(), out)
            }
        }
        TypeId::Bpchar => {
            if let Datum::Text(s) = v {
                encode_bytes(s.trim_end_matches(' ').as_bytes(), out)
            }
        }
        TypeId::Bytea => {
            if let Datum::Bytea(b) = v {
                encode_bytes(b, out)
            }
        }
        TypeId::Numeric => match v {
            Datum::Numeric(n) => encode_numeric(n, out),
            other => encode_numeric(&Numeric::from_i64(int_of(other)), out),
        },
        TypeId::Interval => {
            let k = if let Datum::Interval(iv) = v {
                iv.cmp_key()
            } else {
                0
            };
            out.extend_from_slice(&((k as u128) ^ (1 << 127)).to_be_bytes());
        }
        // Fixed width and compared bytewise: the bytes themselves order as uuid_cmp.
        TypeId::Uuid => {
            if let Datum::Uuid(u) = v {
                out.extend_from_slice(u)
            }
        }
        TypeId::Void => {}
        _ => match v {
            Datum::Array(a) => crate::array::encode_key(a, out),
            Datum::Record(r) => crate::record::encode_key(r, out),
            _ => {}
        },
    }
}

#[inline]
fn encode_bytes(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len() + 2);
    let mut rest = b;
    while let Some(p) = rest.iter().position(|&c| c == 0) {
        out.extend_from_slice(&rest[..p]);
        out.extend_from_slice(&[0x00, 0xFF]);
        rest = &rest[p + 1..];
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(&[0x00, 0x00]);
}

fn encode_numeric(n: &Numeric, out: &mut Vec<u8>) {
    match n {
        Numeric::NegInf => return out.push(1),
        Numeric::PosInf => return out.push(5),
        Numeric::NaN => return out.push(6),
        Numeric::Small(..) | Numeric::Finite(_) => {}
    }
    n.with_digits(|neg, digits, scale| {
        if digits == b"0" {
            return out.push(3);
        }
        out.push(if neg { 2 } else { 4 });
        let end = digits.iter().rposition(|&c| c != b'0').map_or(0, |i| i + 1);
        let sig = &digits[..end];
        let exp = digits.len() as i64 - 1 - scale;
        let start = out.len();
        let e = exp.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        out.extend_from_slice(&((e as u32) ^ (1 << 31)).to_be_bytes());
        for pair in sig.chunks(2) {
            let a = pair[0] - b'0';
            let b = pair.get(1).map(|c| c - b'0').unwrap_or(0);
            out.push(10 * a + b + 1);
        }
        out.push(0);
        if neg {
            for byte in &mut out[start..] {
                *byte = !*byte;
            }
        }
    });
}

/// Whether a column of type `ty` can be read back from its key encoding exactly as it was
/// stored (PostgreSQL's `amcanreturn`): integers, dates, timestamps, oids, booleans, text and
/// bytea. Floats (-0 and NaN payloads are folded), numeric (scale is dropped), bpchar (trailing
/// spaces are dropped) and interval (only its comparison key is kept) cannot.
pub fn key_returns(ty: TypeId) -> bool {
    matches!(
        ty,
        TypeId::Bool
            | TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Date
            | TypeId::Timestamp
            | TypeId::TimestampTz
            | TypeId::Oid
            | TypeId::RegClass
            | TypeId::Text
            | TypeId::Varchar
            | TypeId::Name
            | TypeId::Bytea
    )
}

/// The values of the key `bytes` of columns typed `types` (each [`key_returns`]), or None if
/// the bytes are not such a key. The inverse of [`encode_key`] for those types.
pub fn decode_key(bytes: &[u8], types: &[TypeId]) -> Option<Vec<Datum>> {
    let mut rest = bytes;
    let mut out = Vec::with_capacity(types.len());
    for &ty in types {
        let (&tag, after) = rest.split_first()?;
        rest = after;
        if tag == TAG_NULL {
            out.push(Datum::Null);
            continue;
        }
        if tag != TAG_VALUE {
            return None;
        }
        let (v, after) = decode_value(rest, ty)?;
        out.push(v);
        rest = after;
    }
    Some(out)
}

fn take<const N: usize>(b: &[u8]) -> Option<([u8; N], &[u8])> {
    let (head, rest) = b.split_at_checked(N)?;
    Some((head.try_into().ok()?, rest))
}

fn decode_value(b: &[u8], ty: TypeId) -> Option<(Datum, &[u8])> {
    Some(match ty {
        TypeId::Int4 | TypeId::Date => {
            let (x, rest) = take::<4>(b)?;
            let v = (u32::from_be_bytes(x) ^ (1 << 31)) as i32;
            let d = if ty == TypeId::Date {
                Datum::Date(v)
            } else {
                Datum::Int4(v)
            };
            (d, rest)
        }
        TypeId::Int8 | TypeId::Timestamp | TypeId::TimestampTz => {
            let (x, rest) = take::<8>(b)?;
            let v = (u64::from_be_bytes(x) ^ (1 << 63)) as i64;
            let d = match ty {
                TypeId::Int8 => Datum::Int8(v),
                TypeId::Timestamp => Datum::Timestamp(v),
                _ => Datum::TimestampTz(v),
            };
            (d, rest)
        }
        TypeId::Int2 => {
            let (x, rest) = take::<2>(b)?;
            (
                Datum::Int2((u16::from_be_bytes(x) ^ (1 << 15)) as i16),
                rest,
            )
        }
        TypeId::Oid | TypeId::RegClass => {
            let (x, rest) = take::<4>(b)?;
            (Datum::Oid(u32::from_be_bytes(x)), rest)
        }
        TypeId::Bool => {
            let (x, rest) = take::<1>(b)?;
            (Datum::Bool(x[0] != 0), rest)
        }
        TypeId::Text | TypeId::Varchar | TypeId::Name | TypeId::Bytea => {
            let (raw, rest) = decode_bytes(b)?;
            let d = if ty == TypeId::Bytea {
                Datum::Bytea(raw)
            } else {
                Datum::Text(String::from_utf8(raw).ok()?)
            };
            (d, rest)
        }
        _ => return None,
    })
}

/// The bytes escaped by `encode_bytes` and what follows their terminator.
fn decode_bytes(b: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    loop {
        let p = i + b[i..].iter().position(|&c| c == 0)?;
        out.extend_from_slice(&b[i..p]);
        match b.get(p + 1)? {
            0x00 => return Some((out, &b[p + 2..])),
            0xFF => {
                out.push(0);
                i = p + 2;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
