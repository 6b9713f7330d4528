//! The SQL-callable hash functions, with PostgreSQL 15's names and signatures: each
//! `f(type) -> int4` and its `fextended(type, int8 seed) -> int8` (the u32 / u64 hash
//! reinterpreted as signed). Each name has one signature, so a call matches when its
//! arguments cast to it implicitly (`hashint4(int2)`, `hashtext(varchar)`,
//! `timestamp_hash(date)`; not `hashint2(int4)` nor `timestamp_hash(timestamptz)`).
//!
//! Not here because PostgreSQL 15 has no SQL-callable form: bytea (`hashvarlena` takes
//! `internal`), bool and `"char"` (`hashchar` takes `"char"`, a type keel does not have).
//! Their hashes are reachable through `hash_array` and `hash_record`.

use super::{hash_datum, hash_datum_extended};
use crate::cast::{CastContext, can_cast};
use crate::func::{FuncContext, Function, Volatility, intern_types};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult};

type F = fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>;

fn function(args: &[TypeId], result: TypeId, func: F) -> Function {
    Function {
        name: "",
        args: intern_types(args),
        result,
        volatility: Volatility::Immutable,
        strict: true,
        func,
    }
}

fn seed_of(d: &Datum) -> PgResult<u64> {
    d.int_value()
        .map(|s| s as u64)
        .ok_or_else(|| PgError::internal("hash seed is not an integer"))
}

fn standard(d: &Datum, ty: TypeId) -> PgResult<Datum> {
    Ok(Datum::Int4(hash_datum(d, ty)? as i32))
}

fn extended(d: &[Datum], ty: TypeId) -> PgResult<Datum> {
    Ok(Datum::Int8(
        hash_datum_extended(&d[0], ty, seed_of(&d[1])?)? as i64,
    ))
}

/// One standard / extended pair over a fixed parameter type: (standard name, extended
/// name, parameter type, standard function, extended function).
type Pair = (&'static str, &'static str, TypeId, F, F);

macro_rules! pair {
    ($std:literal, $ext:literal, $ty:expr) => {
        (
            $std,
            $ext,
            $ty,
            |a: &[Datum], _: &mut dyn FuncContext| standard(&a[0], $ty),
            |a: &[Datum], _: &mut dyn FuncContext| extended(a, $ty),
        )
    };
}

const PAIRS: &[Pair] = &[
    pair!("hashint2", "hashint2extended", TypeId::Int2),
    pair!("hashint4", "hashint4extended", TypeId::Int4),
    pair!("hashint8", "hashint8extended", TypeId::Int8),
    pair!("hashoid", "hashoidextended", TypeId::Oid),
    pair!("hashfloat4", "hashfloat4extended", TypeId::Float4),
    pair!("hashfloat8", "hashfloat8extended", TypeId::Float8),
    pair!("hash_numeric", "hash_numeric_extended", TypeId::Numeric),
    pair!("hashtext", "hashtextextended", TypeId::Text),
    pair!("hashbpchar", "hashbpcharextended", TypeId::Bpchar),
    pair!("hashname", "hashnameextended", TypeId::Name),
    pair!("hashoidvector", "hashoidvectorextended", TypeId::OidVector),
    pair!(
        "timestamp_hash",
        "timestamp_hash_extended",
        TypeId::Timestamp
    ),
    pair!("interval_hash", "interval_hash_extended", TypeId::Interval),
    pair!("uuid_hash", "uuid_hash_extended", TypeId::Uuid),
];

fn implicit(from: TypeId, to: TypeId) -> bool {
    can_cast(from, to, CastContext::Implicit)
}

/// Resolves a hash function call (`name` lower case); None when `name` is not one or the
/// arguments do not fit its signature.
pub(crate) fn resolve_function(name: &str, args: &[TypeId]) -> Option<Function> {
    if !name.contains("hash") {
        return None;
    }
    use TypeId::*;
    for &(std_name, ext_name, ty, std_fn, ext_fn) in PAIRS {
        if name == std_name && args.len() == 1 && implicit(args[0], ty) {
            return Some(function(&[ty], Int4, std_fn));
        }
        if name == ext_name && args.len() == 2 && implicit(args[0], ty) && implicit(args[1], Int8) {
            return Some(function(&[ty, Int8], Int8, ext_fn));
        }
    }
    // hash_array(anyarray) / hash_record(record): the argument keeps its own type; a vector
    // is its plain array (the implicit int2vector -> int2[] cast), as for the other array
    // functions.
    let poly = |t: TypeId| -> Option<TypeId> {
        match name {
            "hash_array" | "hash_array_extended" => {
                let t = t.devector();
                t.is_array().then_some(t)
            }
            _ => matches!(t, Record | Composite(_)).then_some(t),
        }
    };
    match (name, args) {
        ("hash_array", [t]) => Some(function(&[poly(*t)?], Int4, |a, _| {
            standard(&a[0], AnyArray)
        })),
        ("hash_array_extended", [t, s]) if implicit(*s, Int8) => {
            Some(function(&[poly(*t)?, Int8], Int8, |a, _| {
                extended(a, AnyArray)
            }))
        }
        ("hash_record", [t]) => Some(function(&[poly(*t)?], Int4, |a, _| standard(&a[0], Record))),
        ("hash_record_extended", [t, s]) if implicit(*s, Int8) => {
            Some(function(&[poly(*t)?, Int8], Int8, |a, _| {
                extended(a, Record)
            }))
        }
        _ => None,
    }
}

/// `satisfies_hash_partition(parent, modulus, remainder, values...)` once the binder has read
/// the parent's key types: the function over (modulus, remainder, then each value behind its
/// key type's oid). Whether the values' partition hash (hash_combine64 of each non-NULL
/// value's extended hash, seeded with HASH_PARTITION_SEED) modulo `modulus` is `remainder`;
/// false when modulus or remainder is NULL, as in PostgreSQL.
pub fn satisfies_hash_partition(key_types: &[TypeId]) -> Function {
    let mut args = vec![TypeId::Int4, TypeId::Int4];
    for &t in key_types {
        args.extend([TypeId::Oid, t]);
    }
    Function {
        name: "satisfies_hash_partition",
        args: intern_types(&args),
        result: TypeId::Bool,
        volatility: Volatility::Immutable,
        strict: false,
        func: |a, _| {
            let (Some(m), Some(r)) = (a[0].int_value(), a[1].int_value()) else {
                return Ok(Datum::Bool(false));
            };
            let bad = |msg: &str| {
                PgError::new(
                    keel_common::sqlstate::INVALID_PARAMETER_VALUE,
                    msg.to_string(),
                )
            };
            if m <= 0 {
                return Err(bad(
                    "modulus for hash partition must be an integer value greater than zero",
                ));
            }
            if r < 0 {
                return Err(bad(
                    "remainder for hash partition must be an integer value greater than or equal to zero",
                ));
            }
            if r >= m {
                return Err(bad(
                    "remainder for hash partition must be less than modulus",
                ));
            }
            let mut values = Vec::with_capacity(a.len() / 2);
            let mut types = Vec::with_capacity(a.len() / 2);
            for pair in a[2..].chunks(2) {
                let Datum::Oid(t) = pair[0] else {
                    return Err(PgError::internal(
                        "satisfies_hash_partition: type oid expected",
                    ));
                };
                types.push(
                    TypeId::from_oid(t).ok_or_else(|| PgError::internal("unknown key type"))?,
                );
                values.push(pair[1].clone());
            }
            let hash = super::partition_hash(&values, &types)?;
            Ok(Datum::Bool(hash % m as u64 == r as u64))
        },
    }
}
