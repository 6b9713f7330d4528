//! Casts between types, with PostgreSQL's implicit / assignment / explicit contexts.

use crate::io::{apply_char_typmod, format_text, parse_text, truncate_name};
use crate::numeric::Numeric;
use crate::ops::{date_to_ts, int_out_of_range, to_f64, to_numeric};
use crate::{Datum, SqlType, TypeId};
use keel_common::{PgError, PgResult, sqlstate};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CastContext {
    Implicit,
    Assignment,
    Explicit,
}

fn is_string(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name
    )
}

/// The context a pg_cast entry (or I/O conversion) allows, None if no cast exists.
fn cast_context(from: TypeId, to: TypeId) -> Option<CastContext> {
    use CastContext::*;
    use TypeId::*;
    if from == to || from == Unknown {
        return Some(Implicit);
    }
    if to == Unknown || to == Void || from == Void || to == Record {
        return None;
    }
    // A composite's text is an I/O conversion cast, allowed on assignment; the reverse
    // needs the type's fields and is bound as a read of the text (`record_in`).
    if matches!(from, Record | Composite(_)) {
        return matches!(to, Text | Varchar | Bpchar | Name).then_some(Assignment);
    }
    Some(match (from, to) {
        // String types among themselves.
        (Name, Varchar | Bpchar) => Assignment,
        (Text | Varchar | Bpchar | Name, Text | Varchar | Bpchar | Name) => Implicit,
        // Anything to a string type is an I/O conversion cast, allowed on assignment.
        (_, Text | Varchar | Bpchar | Name) => Assignment,
        // A string type to anything else only explicitly (I/O conversion).
        (Text | Varchar | Bpchar | Name, _) => Explicit,
        (Int2, Int4 | Int8 | Float4 | Float8 | Numeric | Oid) => Implicit,
        (Int4, Int8 | Float4 | Float8 | Numeric | Oid) => Implicit,
        (Int4, Int2) => Assignment,
        (Int4, Bool) | (Bool, Int4) => Explicit,
        (Int8, Float4 | Float8 | Numeric | Oid) => Implicit,
        (Int8, Int2 | Int4) => Assignment,
        (Float4, Float8) => Implicit,
        (Float4, Int2 | Int4 | Int8 | Numeric) => Assignment,
        (Float8, Float4 | Int2 | Int4 | Int8 | Numeric) => Assignment,
        (Numeric, Float4 | Float8) => Implicit,
        (Numeric, Int2 | Int4 | Int8) => Assignment,
        (Oid, Int4 | Int8) => Assignment,
        (Int2 | Int4 | Int8 | Oid, RegClass) | (RegClass, Oid) => Implicit,
        (RegClass, Int4 | Int8) => Assignment,
        (Date, Timestamp | TimestampTz) => Implicit,
        (Timestamp, TimestampTz) => Implicit,
        (TimestampTz, Timestamp) => Assignment,
        (Timestamp | TimestampTz, Date) => Assignment,
        // pg_cast's binary-coercible int2vector -> int2[] and oidvector -> oid[]; the
        // reverse has no cast (only `ARRAY[...]::int2vector` builds one).
        (Int2Vector, Int2Array) | (OidVector, OidArray) => Implicit,
        // An array converts element by element, in the element cast's context.
        (f, t) if f.is_array() && t.is_array() => return cast_context(f.elem()?, t.elem()?),
        _ => return None,
    })
}

/// Whether a cast from `from` to `to` exists in `context` (pg_cast's castcontext rules).
pub fn can_cast(from: TypeId, to: TypeId, context: CastContext) -> bool {
    cast_context(from, to).is_some_and(|c| c <= context)
}

fn text_of(value: Datum, from: TypeId) -> PgResult<String> {
    crate::limits::text_out(&value)?;
    Ok(match value {
        // bpchar -> text/varchar/name drops the padding (rtrim), as PostgreSQL's text(bpchar).
        Datum::Text(s) if from == TypeId::Bpchar => {
            let t = s.trim_end_matches(' ');
            if t.len() == s.len() { s } else { t.to_owned() }
        }
        Datum::Text(s) => s,
        // The bool -> text cast spells the words out (unlike boolout's t/f).
        Datum::Bool(b) => (if b { "true" } else { "false" }).to_owned(),
        other => {
            let mut s = String::new();
            format_text(&other, from, &mut s);
            s
        }
    })
}

fn int_range(v: i64, to: TypeId) -> PgResult<Datum> {
    Ok(match to {
        TypeId::Int2 => Datum::Int2(i16::try_from(v).map_err(|_| int_out_of_range(to))?),
        TypeId::Int4 => Datum::Int4(i32::try_from(v).map_err(|_| int_out_of_range(to))?),
        TypeId::Int8 => Datum::Int8(v),
        TypeId::Oid => Datum::Oid(v as u32),
        _ => return Err(PgError::internal("int_range: not an integer type")),
    })
}

fn float_to_int(f: f64, to: TypeId) -> PgResult<Datum> {
    int_range(crate::scalar::float_to_int(f, to)?, to)
}

fn numeric_to_int(n: &Numeric, to: TypeId) -> PgResult<Datum> {
    let what = match to {
        TypeId::Int2 => "smallint",
        TypeId::Int4 => "integer",
        _ => "bigint",
    };
    match n {
        Numeric::NaN => Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("cannot convert NaN to {what}"),
        )),
        Numeric::PosInf | Numeric::NegInf => Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("cannot convert infinity to {what}"),
        )),
        Numeric::Small(..) | Numeric::Finite(_) => {
            let v = n.round_to_i128().ok_or_else(|| int_out_of_range(to))?;
            int_range(i64::try_from(v).map_err(|_| int_out_of_range(to))?, to)
        }
    }
}

/// Converts `value` to `to`, applying `to.typmod` (e.g. varchar(n) truncation on explicit cast,
/// error 22001 on assignment). Errors as PostgreSQL: 22003, 22P02, ...
pub fn cast(value: Datum, from: TypeId, to: SqlType, context: CastContext) -> PgResult<Datum> {
    use TypeId::*;
    if value.is_null() {
        return Ok(Datum::Null);
    }
    let explicit = context == CastContext::Explicit;
    // Targets that are strings: produce the text, then apply length rules.
    if is_string(to.id) {
        let s = text_of(value, from)?;
        return Ok(Datum::Text(match to.id {
            Name => truncate_name(&s).to_owned(),
            Text => s,
            _ => apply_char_typmod(&s, to, explicit)?,
        }));
    }
    if from == Unknown || is_string(from) {
        let s = text_of(value, from)?;
        return parse_text(&s, to);
    }
    if from.is_vector() && to.id == from.devector() {
        return Ok(value);
    }
    if to.id.is_vector() && from == to.id.devector() {
        // Only `ARRAY[...]::int2vector` gets here (no cast exists otherwise): a vector is one
        // dimension without NULLs, as PostgreSQL's check_valid_int2vector.
        let valid = matches!(&value, Datum::Array(a) if a.dims.len() == 1 && !a.has_nulls());
        if !valid {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("array is not a valid {}", to.id.name()),
            ));
        }
        return Ok(value);
    }
    if let (Some(fe), Some(te)) = (from.elem(), to.id.elem())
        && fe != te
        && let Datum::Array(mut shared) = value
    {
        let target = SqlType::with_typmod(te, to.typmod);
        let a = std::sync::Arc::make_mut(&mut shared);
        for item in a.items.iter_mut() {
            let v = std::mem::replace(item, Datum::Null);
            *item = cast(v, fe, target, context)?;
        }
        a.elem = te;
        return Ok(Datum::Array(shared));
    }
    let out = match (to.id, &value) {
        (t, _) if t == from && !matches!(t, Numeric) => value,
        (Int2 | Int4 | Int8, Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_)) => {
            int_range(int_of(&value), to.id)?
        }
        (Int2 | Int4 | Int8, Datum::Oid(v)) => int_range(*v as i64, to.id)?,
        (Oid | RegClass, Datum::Oid(_)) => value,
        (Oid | RegClass, Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_)) => {
            let v = int_of(&value);
            if !(i32::MIN as i64..=u32::MAX as i64).contains(&v) {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "OID out of range",
                ));
            }
            Datum::Oid(v as u32)
        }
        (Int2 | Int4 | Int8, Datum::Float4(f)) => float_to_int(*f as f64, to.id)?,
        (Int2 | Int4 | Int8, Datum::Float8(f)) => float_to_int(*f, to.id)?,
        (Int2 | Int4 | Int8, Datum::Numeric(n)) => numeric_to_int(n, to.id)?,
        (Int4, Datum::Bool(b)) => Datum::Int4(*b as i32),
        (Bool, Datum::Int4(v)) => Datum::Bool(*v != 0),
        (Float8, Datum::Numeric(n)) => Datum::Float8(numeric_to_float(n, false)?),
        (Float4, Datum::Numeric(n)) => Datum::Float4(numeric_to_float(n, true)? as f32),
        (Float8, _) => Datum::Float8(to_f64(&value)?),
        (Float4, Datum::Float8(f)) => {
            let r = *f as f32;
            if r.is_infinite() && f.is_finite() {
                return Err(crate::ops::imp_float_overflow());
            }
            if r == 0.0 && *f != 0.0 {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: underflow",
                ));
            }
            Datum::Float4(r)
        }
        (Float4, _) => Datum::Float4(to_f64(&value)? as f32),
        (Numeric, _) => {
            let n = to_numeric(&value)?;
            // Without a typmod there is nothing to apply (and no copy to make).
            Datum::Numeric(Box::new(if to.typmod < 4 {
                n
            } else {
                n.apply_typmod(to.typmod)?
            }))
        }
        (Timestamp | TimestampTz, Datum::Date(d)) => {
            let ts = date_to_ts(*d);
            if to.id == Timestamp {
                Datum::Timestamp(ts)
            } else {
                Datum::TimestampTz(ts)
            }
        }
        (Timestamp, Datum::TimestampTz(t)) => Datum::Timestamp(*t),
        (TimestampTz, Datum::Timestamp(t)) => Datum::TimestampTz(*t),
        (Date, Datum::Timestamp(t) | Datum::TimestampTz(t)) => Datum::Date(match *t {
            crate::datetime::TS_NEG_INF => crate::datetime::DATE_NEG_INF,
            crate::datetime::TS_POS_INF => crate::datetime::DATE_POS_INF,
            t => t.div_euclid(crate::datetime::USECS_PER_DAY) as i32,
        }),
        _ => {
            return Err(PgError::new(
                sqlstate::CANNOT_COERCE,
                format!("cannot cast type {} to {}", from.name(), to.id.name()),
            ));
        }
    };
    Ok(out)
}

/// numeric -> float8/float4 as PostgreSQL does it, through the text form and the float input
/// function: a finite, nonzero value that overflows or underflows to zero is 22003
/// (denormals are kept).
fn numeric_to_float(n: &Numeric, float4: bool) -> PgResult<f64> {
    let v = n.to_f64();
    if !n.is_finite() {
        return Ok(v);
    }
    let (lost, tyname) = if float4 {
        let r = v as f32;
        (r.is_infinite() || r == 0.0, "real")
    } else {
        (v.is_infinite() || v == 0.0, "double precision")
    };
    if lost && !n.is_zero() {
        let text = n.to_text();
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("\"{text}\" is out of range for type {tyname}"),
        ));
    }
    Ok(v)
}

fn int_of(d: &Datum) -> i64 {
    match d {
        Datum::Int2(v) => *v as i64,
        Datum::Int4(v) => *v as i64,
        Datum::Int8(v) => *v,
        _ => 0,
    }
}

#[cfg(test)]
#[path = "cast_tests.rs"]
mod tests;
