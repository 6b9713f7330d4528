//! Operators and their resolution (PostgreSQL's pg_operator and oper_select_candidate rules,
//! for the types Keel has).
//!
//! Mixed-type operands are resolved the way PostgreSQL's candidates end up behaving: integers
//! widen to the wider integer (int2+int4 -> int4), integer with numeric -> numeric, anything
//! with a float -> float8 (float4 op float4 stays float4), date with timestamp -> timestamp.
//! The returned [`Operator`] lists the types the caller must coerce the operands to; the
//! implementations still accept any integer variant for an integer slot, so a missing
//! widening cast is harmless.

use crate::datetime::{self, USECS_PER_DAY};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

#[path = "ops_impl.rs"]
mod imp;
pub(crate) use imp::float_overflow as imp_float_overflow;
pub(crate) use imp::numeric_arg;
pub(crate) use imp::{float_overflow, float_underflow};
pub use imp::{like_match, to_f64, to_numeric};

/// A resolved operator: the argument types to coerce operands to, the result type, and the
/// implementation (never called with NULL operands for strict operators; the caller handles
/// NULL -> NULL).
#[derive(Clone, Copy)]
pub struct Operator {
    pub left: TypeId,
    pub right: TypeId,
    pub result: TypeId,
    pub func: fn(&Datum, &Datum) -> PgResult<Datum>,
}

fn is_int(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}

fn is_numberish(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Numeric
            | TypeId::Float4
            | TypeId::Float8
    )
}

fn is_textish(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Text | TypeId::Varchar | TypeId::Name | TypeId::Bpchar | TypeId::Unknown
    )
}

fn is_datetime(t: TypeId) -> bool {
    matches!(t, TypeId::Date | TypeId::Timestamp | TypeId::TimestampTz)
}

/// The common type of two number-family types.
fn promote_number(a: TypeId, b: TypeId) -> TypeId {
    use TypeId::*;
    match (a, b) {
        (Float4, Float4) => Float4,
        (Float4 | Float8, _) | (_, Float4 | Float8) => Float8,
        (Numeric, _) | (_, Numeric) => Numeric,
        (Int8, _) | (_, Int8) => Int8,
        (Int4, _) | (_, Int4) => Int4,
        _ => Int2,
    }
}

fn op(
    left: TypeId,
    right: TypeId,
    result: TypeId,
    func: fn(&Datum, &Datum) -> PgResult<Datum>,
) -> Option<Operator> {
    Some(Operator {
        left,
        right,
        result,
        func,
    })
}

fn comparison(op: &str) -> Option<fn(&Datum, &Datum) -> PgResult<Datum>> {
    Some(match op {
        "=" => imp::cmp_fn::<0>,
        "<>" => imp::cmp_fn::<1>,
        "<" => imp::cmp_fn::<2>,
        "<=" => imp::cmp_fn::<3>,
        ">" => imp::cmp_fn::<4>,
        ">=" => imp::cmp_fn::<5>,
        _ => return None,
    })
}

fn bpchar_comparison(op: &str) -> Option<fn(&Datum, &Datum) -> PgResult<Datum>> {
    Some(match op {
        "=" => imp::bpcmp_fn::<0>,
        "<>" => imp::bpcmp_fn::<1>,
        "<" => imp::bpcmp_fn::<2>,
        "<=" => imp::bpcmp_fn::<3>,
        ">" => imp::bpcmp_fn::<4>,
        ">=" => imp::bpcmp_fn::<5>,
        _ => return None,
    })
}

/// Resolves binary `op` (`+ - * / % = <> < <= > >= || ~~ !~~ ~~* ~ ~* !~ !~* ^ & | # << >>`, with `!=`
/// normalized to `<>`, LIKE to `~~`) for operand types. `Unknown` operands (untyped literals,
/// parameters) take the other side's type, as PostgreSQL does. None = 42883
/// `operator does not exist: integer + text`.
pub fn resolve_binary(op_name: &str, left: TypeId, right: TypeId) -> Option<Operator> {
    use TypeId::*;
    let opn = if op_name == "!=" { "<>" } else { op_name };
    if left.is_vector() || right.is_vector() {
        // A vector's operators are its plain array's (`int2vector = int2vector`, `||`).
        return crate::array_ops::resolve_binary(opn, left.devector(), right.devector());
    }
    if left.is_array() || right.is_array() {
        return crate::array_ops::resolve_binary(opn, left, right);
    }
    if matches!(opn, "~" | "~*" | "!~" | "!~*") {
        return crate::regex::resolve_operator(opn, left, right);
    }
    // String operators treat unknown as text regardless of the other side.
    if matches!(opn, "||" | "~~" | "!~~" | "~~*" | "!~~*") {
        return resolve_string_op(opn, left, right);
    }
    let (l, r) = match (left, right) {
        (Unknown, Unknown) => (Text, Text),
        (Unknown, t) => (t, t),
        (t, Unknown) => (t, t),
        lr => lr,
    };
    if let Some(cmp) = comparison(opn) {
        if l == Bpchar && r == Bpchar {
            return op(Bpchar, Bpchar, Bool, bpchar_comparison(opn)?);
        }
        // record op record: each side keeps its composite type, compared field by field.
        let composite = |t: TypeId| matches!(t, Record | Composite(_));
        if composite(l) && composite(r) {
            return op(l, r, Bool, cmp);
        }
        let common = if l == r {
            l
        } else if is_numberish(l) && is_numberish(r) {
            promote_number(l, r)
        } else if is_textish(l) && is_textish(r) {
            Text
        } else if is_datetime(l) && is_datetime(r) {
            if l == TimestampTz || r == TimestampTz {
                TimestampTz
            } else {
                Timestamp
            }
        } else if (l == Oid && is_int(r)) || (r == Oid && is_int(l)) {
            Oid
        } else {
            return None;
        };
        let common = match common {
            Varchar | Name | Unknown => Text,
            c => c,
        };
        if common == Void {
            return None;
        }
        return op(common, common, Bool, cmp);
    }
    if is_numberish(l) && is_numberish(r) {
        let t = promote_number(l, r);
        let f: fn(&Datum, &Datum) -> PgResult<Datum> = match (opn, t) {
            ("+", Int2) => imp::int2_add,
            ("-", Int2) => imp::int2_sub,
            ("*", Int2) => imp::int2_mul,
            ("/", Int2) => imp::int2_div,
            ("%", Int2) => imp::int2_mod,
            ("+", Int4) => imp::int4_add,
            ("-", Int4) => imp::int4_sub,
            ("*", Int4) => imp::int4_mul,
            ("/", Int4) => imp::int4_div,
            ("%", Int4) => imp::int4_mod,
            ("+", Int8) => imp::int8_add,
            ("-", Int8) => imp::int8_sub,
            ("*", Int8) => imp::int8_mul,
            ("/", Int8) => imp::int8_div,
            ("%", Int8) => imp::int8_mod,
            ("&" | "|" | "#", Int2 | Int4 | Int8) => return bitwise(opn, t),
            ("<<" | ">>", Int2 | Int4 | Int8) => {
                let f = if opn == "<<" { imp::shl } else { imp::shr };
                return op(l.max_int(), Int4, l.max_int(), f);
            }
            ("+", Numeric) => imp::num_add,
            ("-", Numeric) => imp::num_sub,
            ("*", Numeric) => imp::num_mul,
            ("/", Numeric) => imp::num_div,
            ("%", Numeric) => imp::num_mod,
            ("^", Numeric) => imp::num_pow,
            ("^", _) => return op(Float8, Float8, Float8, imp::f8_pow),
            ("+", Float4) => imp::f4_add,
            ("-", Float4) => imp::f4_sub,
            ("*", Float4) => imp::f4_mul,
            ("/", Float4) => imp::f4_div,
            ("+", Float8) => imp::f8_add,
            ("-", Float8) => imp::f8_sub,
            ("*", Float8) => imp::f8_mul,
            ("/", Float8) => imp::f8_div,
            _ => return None,
        };
        return op(t, t, t, f);
    }
    match (opn, l, r) {
        ("+", Date, Int2 | Int4) => op(Date, Int4, Date, imp::date_pl_int),
        ("+", Int2 | Int4, Date) => op(Int4, Date, Date, imp::int_pl_date),
        ("-", Date, Int2 | Int4) => op(Date, Int4, Date, imp::date_mi_int),
        ("-", Date, Date) => op(Date, Date, Int4, imp::date_mi_date),
        ("+", Date | Timestamp, Interval) => op(Timestamp, Interval, Timestamp, imp::ts_pl_iv),
        ("-", Date | Timestamp, Interval) => op(Timestamp, Interval, Timestamp, imp::ts_mi_iv),
        ("+", Interval, Date | Timestamp) => op(Interval, Timestamp, Timestamp, imp::iv_pl_ts),
        ("+", TimestampTz, Interval) => op(TimestampTz, Interval, TimestampTz, imp::ts_pl_iv),
        ("-", TimestampTz, Interval) => op(TimestampTz, Interval, TimestampTz, imp::ts_mi_iv),
        ("+", Interval, TimestampTz) => op(Interval, TimestampTz, TimestampTz, imp::iv_pl_ts),
        ("-", Timestamp, Timestamp | Date) | ("-", Date, Timestamp) => {
            op(Timestamp, Timestamp, Interval, imp::ts_mi_ts)
        }
        ("-", TimestampTz, Date | Timestamp | TimestampTz)
        | ("-", Date | Timestamp, TimestampTz) => {
            op(TimestampTz, TimestampTz, Interval, imp::ts_mi_ts)
        }
        ("+", Interval, Interval) => op(Interval, Interval, Interval, imp::iv_pl_iv),
        ("-", Interval, Interval) => op(Interval, Interval, Interval, imp::iv_mi_iv),
        ("*", Interval, t) if is_numberish(t) => op(Interval, Float8, Interval, imp::iv_mul),
        ("*", t, Interval) if is_numberish(t) => op(Float8, Interval, Interval, imp::f8_mul_iv),
        ("/", Interval, t) if is_numberish(t) => op(Interval, Float8, Interval, imp::iv_div),
        ("&" | "|" | "#", Bool, Bool) => None,
        _ => None,
    }
}

trait MaxInt {
    fn max_int(self) -> TypeId;
}

impl MaxInt for TypeId {
    fn max_int(self) -> TypeId {
        if is_int(self) { self } else { TypeId::Int8 }
    }
}

fn bitwise(opn: &str, t: TypeId) -> Option<Operator> {
    let f: fn(&Datum, &Datum) -> PgResult<Datum> = match opn {
        "&" => imp::bit_and,
        "|" => imp::bit_or,
        _ => imp::bit_xor,
    };
    op(t, t, t, f)
}

fn resolve_string_op(opn: &str, left: TypeId, right: TypeId) -> Option<Operator> {
    use TypeId::*;
    let tl = |t: TypeId| {
        if is_textish(t) || t == Unknown {
            Text
        } else {
            t
        }
    };
    match opn {
        "||" => {
            let byteaish = |t: TypeId| t == Bytea || t == Unknown;
            if byteaish(left) && byteaish(right) && (left == Bytea || right == Bytea) {
                return op(Bytea, Bytea, Bytea, imp::bytea_concat);
            }
            // An untyped literal is text here ('l' || 1 is textanycat), as in PostgreSQL.
            let lt = is_textish(left) || left == Unknown;
            let rt = is_textish(right) || right == Unknown;
            if lt || rt {
                // text || text, or text || anynonarray (the other side goes through its output
                // function). Bpchar casts to text, losing trailing spaces, as in PostgreSQL.
                if !lt && (left == Void) || !rt && (right == Void) {
                    return None;
                }
                return op(tl(left), tl(right), Text, imp::text_concat);
            }
            None
        }
        _ => {
            let f: fn(&Datum, &Datum) -> PgResult<Datum> = match opn {
                "~~" => imp::like_fn::<false, false>,
                "!~~" => imp::like_fn::<true, false>,
                "~~*" => imp::like_fn::<false, true>,
                _ => imp::like_fn::<true, true>,
            };
            if left == Bytea && (right == Bytea || right == Unknown) && !opn.contains('*') {
                return op(Bytea, Bytea, Bool, f);
            }
            if !is_textish(left) || !is_textish(right) {
                return None;
            }
            // bpchar LIKE keeps the padding (bpcharlike), so it is not cast to text.
            let l = if left == Bpchar { Bpchar } else { Text };
            op(l, Text, Bool, f)
        }
    }
}

/// Prefix operators: `-`, `+`, `@` (abs), `~` (bitwise not), NOT is handled by the executor.
#[allow(clippy::type_complexity)]
pub fn resolve_unary(
    op_name: &str,
    operand: TypeId,
) -> Option<(TypeId, TypeId, fn(&Datum) -> PgResult<Datum>)> {
    use TypeId::*;
    let t = if operand == Unknown {
        return None;
    } else {
        operand
    };
    // Square and cube root exist for float8 only; other numbers convert implicitly.
    if matches!(t, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric) {
        match op_name {
            "|/" => return Some((Float8, Float8, imp::f8_sqrt)),
            "||/" => return Some((Float8, Float8, imp::f8_cbrt)),
            _ => {}
        }
    }
    let f: fn(&Datum) -> PgResult<Datum> = match (op_name, t) {
        ("-", Int2 | Int4 | Int8 | Float4 | Float8 | Numeric | Interval) => imp::neg,
        ("+", Int2 | Int4 | Int8 | Float4 | Float8 | Numeric | Interval) => imp::pos,
        ("@", Int2 | Int4 | Int8 | Float4 | Float8 | Numeric) => imp::abs,
        ("~", Int2 | Int4 | Int8) => imp::bit_not,
        _ => return None,
    };
    Some((t, t, f))
}

/// SQL comparison of two non-null values of the same type (collation "C" for text; NaN
/// greatest for floats and numeric, as PostgreSQL sorts). Mixed number variants compare by
/// value; NULL sorts after everything (NULLS LAST), matching the key encoding.
pub fn compare(a: &Datum, b: &Datum) -> Ordering {
    use Datum::*;
    match (a, b) {
        (Int4(x), Int4(y)) => x.cmp(y),
        (Int8(x), Int8(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Int2(x), Int2(y)) => x.cmp(y),
        (Float8(x), Float8(y)) => cmp_f64(*x, *y),
        (Float4(x), Float4(y)) => cmp_f64(*x as f64, *y as f64),
        (Numeric(x), Numeric(y)) => x.cmp_total(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Timestamp(x) | TimestampTz(x), Timestamp(y) | TimestampTz(y)) => x.cmp(y),
        (Interval(x), Interval(y)) => x.cmp_key().cmp(&y.cmp_key()),
        (Oid(x), Oid(y)) => x.cmp(y),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (Array(x), Array(y)) => crate::array::compare(x, y),
        (Record(x), Record(y)) => crate::record::compare(x, y),
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (Date(d), Timestamp(t) | TimestampTz(t)) => date_to_ts(*d).cmp(t),
        (Timestamp(t) | TimestampTz(t), Date(d)) => t.cmp(&date_to_ts(*d)),
        _ => imp::compare_mixed(a, b),
    }
}

/// [`compare`] with the column type known: bpchar ignores trailing spaces.
pub fn compare_typed(a: &Datum, b: &Datum, ty: TypeId) -> Ordering {
    if ty == TypeId::Bpchar
        && let (Datum::Text(x), Datum::Text(y)) = (a, b)
    {
        return x
            .trim_end_matches(' ')
            .as_bytes()
            .cmp(y.trim_end_matches(' ').as_bytes());
    }
    compare(a, b)
}

#[inline]
pub fn cmp_f64(x: f64, y: f64) -> Ordering {
    match x.partial_cmp(&y) {
        Some(o) => o,
        None => x.is_nan().cmp(&y.is_nan()),
    }
}

pub(crate) fn date_to_ts(d: i32) -> i64 {
    match d {
        datetime::DATE_NEG_INF => datetime::TS_NEG_INF,
        datetime::DATE_POS_INF => datetime::TS_POS_INF,
        _ => d as i64 * USECS_PER_DAY,
    }
}

pub(crate) fn int_out_of_range(t: TypeId) -> PgError {
    let msg = match t {
        TypeId::Int2 => "smallint out of range",
        TypeId::Int8 => "bigint out of range",
        _ => "integer out of range",
    };
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, msg)
}

pub(crate) fn div_zero() -> PgError {
    PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero")
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
