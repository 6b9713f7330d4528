//! On-disk row format: `[natts: u16][null bitmap: ceil(natts/8) bytes][values]`. Fixed-width
//! values are little-endian; variable-width ones are a u32 length then the bytes. No alignment.
//!
//! Details: `natts` is little-endian; bit `i % 8` of bitmap byte `i / 8` set means column `i`
//! is NULL and has no value bytes. Widths by type: bool 1; int2 2; int4, float4, date, oid 4;
//! int8, float8, timestamp, timestamptz 8; interval 16 (micros i64, days i32, months i32);
//! void 0. Variable width: text-like and bytea (raw bytes), numeric (tag byte 0 finite /
//! 1 NaN / 2 +Inf / 3 -Inf; finite adds dscale u16 then the unscaled value as a little-endian
//! two's-complement integer).

use crate::interval::Interval;
use crate::numeric::{Numeric, finite};
use crate::{Datum, TypeId};
use bigdecimal::num_bigint::BigInt;
use keel_common::{PgError, PgResult, sqlstate};

/// Fixed on-disk width of a type, None for variable width.
#[inline]
pub fn fixed_width(ty: TypeId) -> Option<usize> {
    match ty {
        TypeId::Bool => Some(1),
        TypeId::Int2 => Some(2),
        TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid | TypeId::RegClass => Some(4),
        TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::TimestampTz => Some(8),
        TypeId::Interval | TypeId::Uuid => Some(16),
        TypeId::Void => Some(0),
        TypeId::Numeric
        | TypeId::Text
        | TypeId::Varchar
        | TypeId::Bpchar
        | TypeId::Name
        | TypeId::Unknown
        | TypeId::Bytea => None,
        _ => None,
    }
}

/// Integer value of any integer-like datum (used to tolerate a narrower variant for a wider
/// column, e.g. an Int4 datum stored in an int8 column).
#[inline]
fn as_i64(d: &Datum) -> i64 {
    match d {
        Datum::Bool(b) => *b as i64,
        _ => d.int_value().unwrap_or(0),
    }
}

#[inline]
fn as_f64(d: &Datum) -> f64 {
    match d {
        Datum::Float4(v) => *v as f64,
        Datum::Float8(v) => *v,
        other => as_i64(other) as f64,
    }
}

/// Appends the encoding of `values` (of the given column types) to `out`.
/// A datum whose variant does not fit its column type is a caller bug; it is stored as NULL
/// (and asserts in debug builds) rather than corrupting the row.
pub fn encode_row(values: &[Datum], types: &[TypeId], out: &mut Vec<u8>) {
    debug_assert_eq!(values.len(), types.len());
    let natts = values.len().min(types.len());
    out.extend_from_slice(&(natts as u16).to_le_bytes());
    let bitmap_at = out.len();
    let nbytes = natts.div_ceil(8);
    out.resize(bitmap_at + nbytes, 0);
    for i in 0..natts {
        let v = &values[i];
        let ty = types[i];
        let stored = encode_value(v, ty, out);
        if !stored {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        }
    }
}

/// Writes one non-null value; false means it was NULL (or did not fit the type).
#[inline]
fn encode_value(v: &Datum, ty: TypeId, out: &mut Vec<u8>) -> bool {
    match (ty, v) {
        (_, Datum::Null) => return false,
        (TypeId::Int4, Datum::Int4(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeId::Int8, Datum::Int8(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (
            TypeId::Text
            | TypeId::Varchar
            | TypeId::Bpchar
            | TypeId::Name
            | TypeId::Unknown
            | TypeId::Refcursor,
            Datum::Text(s),
        ) => {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        (TypeId::Bytea, Datum::Bytea(b)) => {
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        (TypeId::Bool, Datum::Bool(b)) => out.push(*b as u8),
        (TypeId::Int2, d @ (Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_))) => {
            out.extend_from_slice(&(as_i64(d) as i16).to_le_bytes())
        }
        (
            TypeId::Int4 | TypeId::Date,
            d @ (Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) | Datum::Date(_)),
        ) => out.extend_from_slice(&(as_i64(d) as i32).to_le_bytes()),
        (
            TypeId::Int8 | TypeId::Timestamp | TypeId::TimestampTz,
            d @ (Datum::Int2(_)
            | Datum::Int4(_)
            | Datum::Int8(_)
            | Datum::Timestamp(_)
            | Datum::TimestampTz(_)),
        ) => out.extend_from_slice(&as_i64(d).to_le_bytes()),
        (TypeId::Oid | TypeId::RegClass, d @ (Datum::Oid(_) | Datum::Int4(_) | Datum::Int8(_))) => {
            out.extend_from_slice(&(as_i64(d) as u32).to_le_bytes())
        }
        (TypeId::Float4, d @ (Datum::Float4(_) | Datum::Float8(_))) => {
            out.extend_from_slice(&(as_f64(d) as f32).to_le_bytes())
        }
        (TypeId::Float8, d @ (Datum::Float4(_) | Datum::Float8(_))) => {
            out.extend_from_slice(&as_f64(d).to_le_bytes())
        }
        (TypeId::Uuid, Datum::Uuid(u)) => out.extend_from_slice(u),
        (TypeId::Interval, Datum::Interval(iv)) => {
            out.extend_from_slice(&iv.micros.to_le_bytes());
            out.extend_from_slice(&iv.days.to_le_bytes());
            out.extend_from_slice(&iv.months.to_le_bytes());
        }
        (TypeId::Numeric, Datum::Numeric(n)) => {
            let len_at = out.len();
            out.extend_from_slice(&[0, 0, 0, 0]);
            match &**n {
                Numeric::NaN => out.push(1),
                Numeric::PosInf => out.push(2),
                Numeric::NegInf => out.push(3),
                Numeric::Small(digits, scale) => {
                    out.push(0);
                    out.extend_from_slice(&scale.to_le_bytes());
                    crate::numeric_small::signed_bytes_le(*digits, out);
                }
                Numeric::Finite(d) => {
                    out.push(0);
                    let (digits, scale) = d.as_bigint_and_exponent();
                    out.extend_from_slice(&(scale.clamp(0, u16::MAX as i64) as u16).to_le_bytes());
                    out.extend_from_slice(&digits.to_signed_bytes_le());
                }
            }
            let len = (out.len() - len_at - 4) as u32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
        }
        (t, Datum::Array(a)) if t.elem().is_some() => {
            let len_at = out.len();
            out.extend_from_slice(&[0, 0, 0, 0]);
            crate::array::encode_stored(a, out);
            let len = (out.len() - len_at - 4) as u32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
        }
        (TypeId::Composite(_) | TypeId::Record, Datum::Record(r)) => {
            let len_at = out.len();
            out.extend_from_slice(&[0, 0, 0, 0]);
            crate::record::encode_stored(r, out);
            let len = (out.len() - len_at - 4) as u32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
        }
        _ => {
            debug_assert!(false, "datum {v:?} does not match column type {ty:?}");
            return false;
        }
    }
    true
}

fn corrupt() -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, "corrupt row data")
}

struct Header {
    natts: usize,
    bitmap: usize, // offset of the bitmap
    data: usize,   // offset of the first value
}

#[inline]
fn header(bytes: &[u8]) -> PgResult<Header> {
    if bytes.len() < 2 {
        return Err(corrupt());
    }
    let natts = u16::from_le_bytes([bytes[0], bytes[1]]) as usize;
    let data = 2 + natts.div_ceil(8);
    if bytes.len() < data {
        return Err(corrupt());
    }
    Ok(Header {
        natts,
        bitmap: 2,
        data,
    })
}

#[inline]
fn is_null(bytes: &[u8], h: &Header, i: usize) -> bool {
    bytes[h.bitmap + i / 8] & (1 << (i % 8)) != 0
}

#[inline]
fn take<'a>(bytes: &'a [u8], pos: &mut usize, n: usize) -> PgResult<&'a [u8]> {
    let end = pos.checked_add(n).ok_or_else(corrupt)?;
    let s = bytes.get(*pos..end).ok_or_else(corrupt)?;
    *pos = end;
    Ok(s)
}

#[inline]
fn arr<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&s[..N]);
    a
}

/// Length of the value at `pos` (for skipping).
#[inline]
fn value_len(bytes: &[u8], pos: usize, ty: TypeId) -> PgResult<usize> {
    match fixed_width(ty) {
        Some(w) => Ok(w),
        None => {
            let l = bytes.get(pos..pos + 4).ok_or_else(corrupt)?;
            Ok(4 + u32::from_le_bytes(arr(l)) as usize)
        }
    }
}

#[inline]
fn decode_value(bytes: &[u8], pos: &mut usize, ty: TypeId) -> PgResult<Datum> {
    Ok(match ty {
        TypeId::Int4 => Datum::Int4(i32::from_le_bytes(arr(take(bytes, pos, 4)?))),
        TypeId::Int8 => Datum::Int8(i64::from_le_bytes(arr(take(bytes, pos, 8)?))),
        TypeId::Text
        | TypeId::Varchar
        | TypeId::Bpchar
        | TypeId::Name
        | TypeId::Unknown
        | TypeId::Refcursor => {
            let len = u32::from_le_bytes(arr(take(bytes, pos, 4)?)) as usize;
            let s = take(bytes, pos, len)?;
            Datum::Text(std::str::from_utf8(s).map_err(|_| corrupt())?.to_owned())
        }
        TypeId::Bytea => {
            let len = u32::from_le_bytes(arr(take(bytes, pos, 4)?)) as usize;
            Datum::Bytea(take(bytes, pos, len)?.to_vec())
        }
        TypeId::Bool => Datum::Bool(take(bytes, pos, 1)?[0] != 0),
        TypeId::Int2 => Datum::Int2(i16::from_le_bytes(arr(take(bytes, pos, 2)?))),
        TypeId::Float4 => Datum::Float4(f32::from_le_bytes(arr(take(bytes, pos, 4)?))),
        TypeId::Float8 => Datum::Float8(f64::from_le_bytes(arr(take(bytes, pos, 8)?))),
        TypeId::Date => Datum::Date(i32::from_le_bytes(arr(take(bytes, pos, 4)?))),
        TypeId::Oid | TypeId::RegClass => Datum::Oid(u32::from_le_bytes(arr(take(bytes, pos, 4)?))),
        TypeId::Timestamp => Datum::Timestamp(i64::from_le_bytes(arr(take(bytes, pos, 8)?))),
        TypeId::TimestampTz => Datum::TimestampTz(i64::from_le_bytes(arr(take(bytes, pos, 8)?))),
        TypeId::Uuid => Datum::Uuid(arr(take(bytes, pos, 16)?)),
        TypeId::Interval => {
            let b = take(bytes, pos, 16)?;
            Datum::Interval(Interval {
                micros: i64::from_le_bytes(arr(&b[0..8])),
                days: i32::from_le_bytes(arr(&b[8..12])),
                months: i32::from_le_bytes(arr(&b[12..16])),
            })
        }
        TypeId::Numeric => {
            let len = u32::from_le_bytes(arr(take(bytes, pos, 4)?)) as usize;
            let b = take(bytes, pos, len)?;
            let n = match b.first() {
                Some(0) if b.len() >= 3 => {
                    let scale = u16::from_le_bytes([b[1], b[2]]);
                    match crate::numeric_small::from_signed_bytes_le(&b[3..]) {
                        Some(d) => Numeric::Small(d, scale),
                        None => finite(BigInt::from_signed_bytes_le(&b[3..]), scale as i64),
                    }
                }
                Some(1) => Numeric::NaN,
                Some(2) => Numeric::PosInf,
                Some(3) => Numeric::NegInf,
                _ => return Err(corrupt()),
            };
            Datum::Numeric(Box::new(n))
        }
        TypeId::Void => Datum::Null,
        t => {
            let len = u32::from_le_bytes(arr(take(bytes, pos, 4)?)) as usize;
            let b = take(bytes, pos, len)?;
            match t.elem() {
                Some(elem) => {
                    Datum::Array(std::sync::Arc::new(crate::array::decode_stored(b, elem)?))
                }
                None if matches!(t, TypeId::Composite(_) | TypeId::Record) => {
                    Datum::Record(std::sync::Arc::new(crate::record::decode_stored(b)?))
                }
                None => return Err(corrupt()),
            }
        }
    })
}

/// Writes one array element in the row form; false for NULL.
pub(crate) fn encode_element(v: &Datum, ty: TypeId, out: &mut Vec<u8>) -> bool {
    encode_value(v, ty, out)
}

/// Reads one array element written by [`encode_element`].
pub(crate) fn decode_element(bytes: &[u8], pos: &mut usize, ty: TypeId) -> PgResult<Datum> {
    decode_value(bytes, pos, ty)
}

/// Decodes a whole row. A row written with fewer columns than `types` (an old row after
/// ALTER TABLE ADD COLUMN) yields NULL for the missing ones. Errors are XX001 (corrupt data).
pub fn decode_row(bytes: &[u8], types: &[TypeId]) -> PgResult<Vec<Datum>> {
    decode_row_cols(bytes, types, &[])
}

/// As [`decode_row`], decoding only the columns `wanted` marks (a scan whose readers need
/// no others): the rest are stepped over and come back NULL, so a wide row costs no
/// allocation for text nobody reads. Columns past `wanted`'s end are decoded.
pub fn decode_row_cols(bytes: &[u8], types: &[TypeId], wanted: &[bool]) -> PgResult<Vec<Datum>> {
    let mut out = Vec::with_capacity(types.len());
    decode_row_cols_into(bytes, types, wanted, &mut out)?;
    Ok(out)
}

/// As [`decode_row_cols`], appending the row's values to `out` (a reader's reused buffer, or
/// a page's batch of rows); on an error `out` is left as it was.
pub fn decode_row_cols_into(
    bytes: &[u8],
    types: &[TypeId],
    wanted: &[bool],
    out: &mut Vec<Datum>,
) -> PgResult<()> {
    let h = header(bytes)?;
    // Every slot starts NULL, written in place: a NULL built on the stack and copied into the
    // vector stalls the copy's load on the one-byte store of its tag (store forwarding),
    // which cost a quarter of a COUNT(*) scan.
    let start = out.len();
    out.resize_with(start + types.len(), || Datum::Null);
    let row = &mut out[start..];
    let mut pos = h.data;
    // Columns after the last wanted one are not read at all (not even their lengths: a
    // filter on the first columns then touches only the row's first bytes).
    let end = if wanted.len() < types.len() {
        types.len()
    } else {
        wanted.iter().rposition(|&w| w).map_or(0, |i| i + 1)
    };
    for (i, &ty) in types.iter().enumerate().take(end.min(h.natts)) {
        if is_null(bytes, &h, i) {
            continue;
        }
        let read = if wanted.get(i).copied().unwrap_or(true) {
            decode_value(bytes, &mut pos, ty).map(|v| row[i] = v)
        } else {
            value_len(bytes, pos, ty).map(|n| pos += n)
        };
        if let Err(e) = read {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

/// The stored bytes of column `index` (a varlena's with its length word), or None when it is
/// NULL or missing. Two values of one type whose stored bytes are equal are equal; see
/// [`byte_equal_type`] for the types where the converse holds too.
pub fn column_bytes<'a>(
    bytes: &'a [u8],
    types: &[TypeId],
    index: usize,
) -> PgResult<Option<&'a [u8]>> {
    let h = header(bytes)?;
    if index >= h.natts || index >= types.len() || is_null(bytes, &h, index) {
        return Ok(None);
    }
    let mut pos = h.data;
    for (i, &ty) in types.iter().enumerate().take(index) {
        if !is_null(bytes, &h, i) {
            pos += value_len(bytes, pos, ty)?;
        }
    }
    let len = value_len(bytes, pos, types[index])?;
    let mut at = pos;
    take(bytes, &mut at, len).map(Some)
}

/// Whether `=` on two values of `ty` holds exactly when their stored bytes are equal: the
/// types with one stored form per value, the same ones whose key encoding gives the value back
/// ([`crate::key::key_returns`]). Not floats (-0 = 0), numeric (1.0 = 1.00), bpchar
/// (trailing blanks) or interval (1 day = 24 hours).
pub fn byte_equal_type(ty: TypeId) -> bool {
    crate::key::key_returns(ty)
}

/// The stored bytes of `v` as a column of type `ty` (see [`column_bytes`]); None for NULL
/// or a value the type cannot store as given.
pub fn value_bytes(v: &Datum, ty: TypeId) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    encode_value(v, ty, &mut out).then_some(out)
}

/// Column `index` as the integer it holds, for the types whose values are one integer
/// (integers, oid, date, timestamps), read from its stored bytes without building a datum;
/// None for NULL or another type. Agrees with [`Datum::int_value`] on the decoded column.
pub fn int_value(bytes: &[u8], types: &[TypeId], index: usize) -> PgResult<Option<i64>> {
    use TypeId::*;
    let Some(&ty) = types.get(index) else {
        return Ok(None);
    };
    if !matches!(
        ty,
        Int2 | Int4 | Int8 | Oid | Date | Timestamp | TimestampTz
    ) {
        return Ok(None);
    }
    let Some(b) = column_bytes(bytes, types, index)? else {
        return Ok(None);
    };
    Ok(Some(match (ty, b.len()) {
        (Int2, 2) => i16::from_le_bytes(arr(b)) as i64,
        (Int4 | Date, 4) => i32::from_le_bytes(arr(b)) as i64,
        (Oid, 4) => u32::from_le_bytes(arr(b)) as i64,
        (Int8 | Timestamp | TimestampTz, 8) => i64::from_le_bytes(arr(b)),
        _ => return Err(corrupt()),
    }))
}

/// Decodes only column `index`.
pub fn decode_column(bytes: &[u8], types: &[TypeId], index: usize) -> PgResult<Datum> {
    let h = header(bytes)?;
    if index >= h.natts || index >= types.len() {
        return Ok(Datum::Null);
    }
    if is_null(bytes, &h, index) {
        return Ok(Datum::Null);
    }
    let mut pos = h.data;
    for (i, &ty) in types.iter().enumerate().take(index) {
        if !is_null(bytes, &h, i) {
            pos += value_len(bytes, pos, ty)?;
        }
    }
    decode_value(bytes, &mut pos, types[index])
}

#[cfg(test)]
#[path = "row_tests.rs"]
pub(crate) mod tests_support;
