//! PostgreSQL 15's hash functions, bit for bit: `hash_any` (Bob Jenkins' lookup3, as
//! `src/common/hashfn.c` has it on a little-endian machine), each type's default hash
//! operator class (`hashint4`, `hash_numeric`, `hashbpchar`, `interval_hash`, `hash_array`,
//! `hash_record`, ...) and the row hash of a hash-partitioned table
//! (`compute_partition_hash_value` in `partbounds.c`).
//!
//! Bit-exactness is the point: a row of a hash-partitioned table must land in the partition
//! PostgreSQL would put it in (a dump restored into either server keeps its rows where they
//! were, `satisfies_hash_partition` agrees), and sharding proxies that route with
//! PostgreSQL's hash must find rows where keel put them.
//!
//! Every type's hash is computed once, in its extended (64-bit, seeded) form. PostgreSQL
//! requires of every hash operator class that the low 32 bits of the extended hash with seed
//! 0 are the standard hash, and its functions keep that: the float and numeric special cases
//! (`seed` for zero or NaN, `seed - 1` for numeric zero), the weight mixed in by XOR and the
//! `31 * h + e` combination of arrays and records all truncate to their 32-bit forms. So
//! [`hash_datum`] is [`hash_datum_extended`] with seed 0, truncated.
//!
//! Types: bool (`hashchar`), int2/int4/int8 (`hashint8`'s fold, so equal values of the
//! three hash alike), oid, float4/float8 (float4 widened, -0 as 0, every NaN as the
//! canonical one), numeric, text/varchar/name (collation "C": the bytes), bpchar (trailing
//! spaces ignored), bytea, date (as int4), timestamp/timestamptz (as int8), interval (its
//! comparison span, low 64 bits), oidvector (`hashoidvector`), arrays (int2vector is one,
//! as PostgreSQL's binary-coercible `array_ops` has it) and composite values. refcursor and
//! the pseudo-types have no hash function in PostgreSQL either: 42883, its message.

use crate::numeric::Numeric;
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};

#[path = "hash_sql.rs"]
mod sql;
pub(crate) use sql::resolve_function;
pub use sql::satisfies_hash_partition;

/// The seed PostgreSQL hashes every partition key column with (`HASH_PARTITION_SEED`).
pub const HASH_PARTITION_SEED: u64 = 0x7A5B22367996DCFD;

/// lookup3's initial state for a key of `len` bytes (`0x9e3779b9 + len + 3923095`).
#[inline]
fn initial(len: usize) -> u32 {
    0x9e37_79b9u32
        .wrapping_add(len as u32)
        .wrapping_add(3_923_095)
}

/// lookup3's `mix()`: reversible mixing of three words.
#[inline]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's `final()`: the last mixing, into `c` (and `b`, which the extended form keeps).
#[inline]
fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

/// The seed's perturbation of the initial state: the seed is hashed as a first 12-byte chunk
/// (high half, low half, four zero bytes). Seed 0 leaves the state alone, which is what keeps
/// the extended hash with seed 0 equal to the standard one in its low 32 bits.
#[inline]
fn seeded(a: &mut u32, b: &mut u32, c: &mut u32, seed: u64) {
    if seed != 0 {
        *a = a.wrapping_add((seed >> 32) as u32);
        *b = b.wrapping_add(seed as u32);
        mix(a, b, c);
    }
}

/// Up to four bytes as a little-endian word, missing high bytes zero.
#[inline]
fn word(bytes: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w[..bytes.len()].copy_from_slice(bytes);
    u32::from_le_bytes(w)
}

/// PostgreSQL's `hash_bytes_extended` (`hash_any_extended`): a 64-bit hash of `data`, `b`
/// of the final state in the high half and `c` in the low half.
pub fn hash_bytes_extended(data: &[u8], seed: u64) -> u64 {
    let (mut a, mut b, mut c) = (
        initial(data.len()),
        initial(data.len()),
        initial(data.len()),
    );
    seeded(&mut a, &mut b, &mut c, seed);
    let mut rest = data;
    while rest.len() >= 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    // The last 0-11 bytes: the first four into a, the next four into b, the rest into c
    // shifted up one byte, its lowest byte being "reserved for the length" in lookup3.
    // Nothing is mixed when no bytes remain; final() runs regardless.
    let n = rest.len();
    a = a.wrapping_add(word(&rest[..n.min(4)]));
    if n > 4 {
        b = b.wrapping_add(word(&rest[4..n.min(8)]));
    }
    if n > 8 {
        c = c.wrapping_add(word(&rest[8..n]) << 8);
    }
    finish(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// PostgreSQL's `hash_bytes` (`hash_any`): the 32-bit hash of `data`.
pub fn hash_bytes(data: &[u8]) -> u32 {
    hash_bytes_extended(data, 0) as u32
}

/// PostgreSQL's `hash_bytes_uint32_extended` (`hash_uint32_extended`): the same as
/// hashing the four little-endian bytes of `k`.
pub fn hash_uint32_extended(k: u32, seed: u64) -> u64 {
    let (mut a, mut b, mut c) = (initial(4), initial(4), initial(4));
    seeded(&mut a, &mut b, &mut c, seed);
    a = a.wrapping_add(k);
    finish(&mut a, &mut b, &mut c);
    (u64::from(b) << 32) | u64::from(c)
}

/// PostgreSQL's `hash_bytes_uint32` (`hash_uint32`).
pub fn hash_uint32(k: u32) -> u32 {
    hash_uint32_extended(k, 0) as u32
}

/// PostgreSQL's `hash_combine64` (`common/hashfn.h`), boost's `hash_combine` widened.
#[inline]
pub fn hash_combine64(a: u64, b: u64) -> u64 {
    a ^ b
        .wrapping_add(0x49a0_f4dd_15e5_a8e3)
        .wrapping_add(a << 54)
        .wrapping_add(a >> 7)
}

/// The standard (32-bit) hash PostgreSQL's default hash operator class for `ty` gives `d`,
/// the value of `hashint4(x)`, `hashtext(x)`, `hash_array(x)`, ... as a u32. NULL hashes to
/// 0, as it does inside an array or a record. 42883 (PostgreSQL's `could not identify a hash
/// function for type ...`) for a type without one.
pub fn hash_datum(d: &Datum, ty: TypeId) -> PgResult<u32> {
    hash_value(d, ty, 0, false).map(|h| h as u32)
}

/// The extended (64-bit, seeded) hash PostgreSQL's default hash operator class for `ty`
/// gives `d`: `hashint4extended(x, seed)`, `hash_numeric_extended(x, seed)`, ... as a u64.
/// NULL hashes to 0; 42883 for a type without a hash function.
pub fn hash_datum_extended(d: &Datum, ty: TypeId, seed: u64) -> PgResult<u64> {
    hash_value(d, ty, seed, true)
}

/// The hash of a row's partition key (`compute_partition_hash_value`): each non-NULL key
/// column's extended hash with [`HASH_PARTITION_SEED`] is folded in with
/// [`hash_combine64`], starting from 0; NULL columns are skipped (an all-NULL key hashes to
/// 0). The row belongs to the partition `FOR VALUES WITH (MODULUS m, REMAINDER r)` where
/// `partition_hash % m == r`.
pub fn partition_hash(values: &[Datum], types: &[TypeId]) -> PgResult<u64> {
    if values.len() != types.len() {
        return Err(PgError::internal(
            "partition_hash: one type per key column expected",
        ));
    }
    let mut row = 0u64;
    for (v, &t) in values.iter().zip(types) {
        if !v.is_null() {
            row = hash_combine64(row, hash_datum_extended(v, t, HASH_PARTITION_SEED)?);
        }
    }
    Ok(row)
}

/// Whether PostgreSQL has a default hash operator class for `ty`, which hash partitioning
/// needs of each key column (for a composite type, whether its fields have one is only known
/// from a value, as in PostgreSQL).
pub fn is_hashable(ty: TypeId) -> bool {
    use TypeId::*;
    match ty {
        Bool | Int2 | Int4 | Int8 | Float4 | Float8 | Numeric | Text | Varchar | Bpchar | Name
        | Bytea | Date | Timestamp | TimestampTz | Interval | Oid | Int2Vector | OidVector
        | Uuid | Record | Composite(_) | AnyArray => true,
        Unknown
        | Void
        | Trigger
        | AnyElement
        | AnyNonArray
        | AnyCompatible
        | AnyCompatibleArray
        | AnyCompatibleNonArray
        | Refcursor => false,
        t => t.elem().is_some_and(is_hashable),
    }
}

/// Whether PostgreSQL's type cache finds a hash function for the type of an array element
/// or a record field: an anonymous record has none there (nor has an array of them), since
/// which fields it has is only known from a value.
fn nested_hashable(ty: TypeId) -> bool {
    !matches!(ty, TypeId::Record | TypeId::RecordArray) && is_hashable(ty)
}

/// The error PostgreSQL's `hash_array` / `hash_record` raise for an element or field type
/// without a hash function.
fn no_hash_function(ty: TypeId, extended: bool) -> PgError {
    let which = if extended {
        "an extended hash"
    } else {
        "a hash"
    };
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("could not identify {which} function for type {}", ty.name()),
    )
}

fn mismatch(ty: TypeId) -> PgError {
    PgError::internal(format!("hash: value does not match type {}", ty.name()))
}

/// `hashint8`'s fold of an integer into 32 bits: the high half is XORed in (complemented
/// for a negative value), so a value in int4 range folds to itself and int2, int4 and int8
/// hash alike.
#[inline]
fn fold_int8(v: i64) -> u32 {
    let lo = v as u32;
    let hi = (v >> 32) as u32;
    lo ^ if v >= 0 { hi } else { !hi }
}

/// `hashfloat8extended`: zero (either sign) hashes to the seed, every NaN as the canonical
/// quiet NaN (`get_float8_nan()`), anything else as its eight bytes.
fn hash_float8(v: f64, seed: u64) -> u64 {
    if v == 0.0 {
        return seed;
    }
    let v = if v.is_nan() {
        f64::from_bits(0x7FF8_0000_0000_0000)
    } else {
        v
    };
    hash_bytes_extended(&v.to_le_bytes(), seed)
}

/// `hash_numeric_extended`: NaN and ±Infinity hash to the seed, zero to `seed - 1`; any
/// other value hashes its base-10000 digits as PostgreSQL stores them (int16 each, leading
/// and trailing zero digits stripped, so 1.1 and 1.10 agree) XOR its weight, sign-extended.
/// The sign and the display scale are not hashed: -3.5 and 3.5 collide.
fn hash_numeric(n: &Numeric, seed: u64) -> u64 {
    // An i64's digits span at most 6 base-10000 digits: a `Small` value stays on the stack.
    let mut stack = [0u8; 32];
    let mut heap: Vec<u8> = Vec::new();
    let mut len = 0usize;
    let weight = n.for_each_base10000(|digit| {
        let b = digit.to_le_bytes();
        if heap.is_empty() && len + 2 <= stack.len() {
            stack[len..len + 2].copy_from_slice(&b);
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&stack[..len]);
            }
            heap.extend_from_slice(&b);
        }
        len += 2;
    });
    let Some(weight) = weight else {
        return seed;
    };
    if len == 0 {
        return seed.wrapping_sub(1);
    }
    let digits = if heap.is_empty() {
        &stack[..len]
    } else {
        &heap[..]
    };
    hash_bytes_extended(digits, seed) ^ (weight as u64)
}

/// `31 * acc + h`, the combination `hash_array` and `hash_record` use.
#[inline]
fn fold31(acc: u64, h: u64) -> u64 {
    acc.wrapping_mul(31).wrapping_add(h)
}

fn hash_value(d: &Datum, ty: TypeId, seed: u64, extended: bool) -> PgResult<u64> {
    use TypeId::*;
    if d.is_null() {
        return Ok(0);
    }
    Ok(match ty {
        Bool => match d {
            Datum::Bool(b) => hash_uint32_extended(u32::from(*b), seed),
            _ => return Err(mismatch(ty)),
        },
        Int2 | Int4 | Int8 | Date | Timestamp | TimestampTz => {
            let v = d.int_value().ok_or_else(|| mismatch(ty))?;
            hash_uint32_extended(fold_int8(v), seed)
        }
        Oid => match d {
            Datum::Oid(o) => hash_uint32_extended(*o, seed),
            _ => return Err(mismatch(ty)),
        },
        Float4 | Float8 => match d {
            Datum::Float4(f) => hash_float8(f64::from(*f), seed),
            Datum::Float8(f) => hash_float8(*f, seed),
            _ => return Err(mismatch(ty)),
        },
        Numeric => match d {
            Datum::Numeric(n) => hash_numeric(n, seed),
            _ => return Err(mismatch(ty)),
        },
        Text | Varchar | Name => match d {
            Datum::Text(s) => hash_bytes_extended(s.as_bytes(), seed),
            _ => return Err(mismatch(ty)),
        },
        Bpchar => match d {
            Datum::Text(s) => hash_bytes_extended(s.trim_end_matches(' ').as_bytes(), seed),
            _ => return Err(mismatch(ty)),
        },
        Bytea => match d {
            Datum::Bytea(b) => hash_bytes_extended(b, seed),
            _ => return Err(mismatch(ty)),
        },
        // uuid_hash: hash_any over the 16 bytes.
        Uuid => match d {
            Datum::Uuid(u) => hash_bytes_extended(u, seed),
            _ => return Err(mismatch(ty)),
        },
        // The span interval_cmp compares (a month is 30 days, a day 24 hours), truncated to
        // its low 64 bits, hashed as an int8.
        Interval => match d {
            Datum::Interval(iv) => hash_uint32_extended(fold_int8(iv.cmp_key() as i64), seed),
            _ => return Err(mismatch(ty)),
        },
        // hashoidvector: the oids' bytes, not hash_array (which an oid[] gets).
        OidVector => match d {
            Datum::Array(a) => {
                let mut bytes = Vec::with_capacity(4 * a.items.len());
                for item in &a.items {
                    match item {
                        Datum::Oid(o) => bytes.extend_from_slice(&o.to_le_bytes()),
                        _ => return Err(mismatch(ty)),
                    }
                }
                hash_bytes_extended(&bytes, seed)
            }
            _ => return Err(mismatch(ty)),
        },
        Record | Composite(_) => match d {
            // hash_record: fields combined from 0 (hash_array starts from 1), NULL as 0; each
            // field type's hash function is looked up before its value is read.
            Datum::Record(r) => {
                let mut acc = 0u64;
                for (v, &t) in r.values.iter().zip(r.types.iter()) {
                    if !nested_hashable(t) {
                        return Err(no_hash_function(t, extended));
                    }
                    acc = fold31(acc, hash_value(v, t, seed, extended)?);
                }
                acc
            }
            _ => return Err(mismatch(ty)),
        },
        t if t == AnyArray || t == Int2Vector || t.elem().is_some() => match d {
            // hash_array: elements in storage order from 1, NULL as 0; dimensions and
            // bounds are not hashed ('{{1,2},{3,4}}' and '[0:3]={1,2,3,4}' collide). The
            // element type's hash function is looked up before any element is read. Of
            // PostgreSQL 15's two, only hash_array takes anonymous records (as hash_record);
            // hash_array_extended finds no function for them.
            Datum::Array(a) => {
                let ok = if a.elem == Record {
                    !extended
                } else {
                    nested_hashable(a.elem)
                };
                if !ok {
                    return Err(no_hash_function(a.elem, extended));
                }
                let mut acc = 1u64;
                for item in &a.items {
                    acc = fold31(acc, hash_value(item, a.elem, seed, extended)?);
                }
                acc
            }
            _ => return Err(mismatch(ty)),
        },
        t => return Err(no_hash_function(t, extended)),
    })
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
