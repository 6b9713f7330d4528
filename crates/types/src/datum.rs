//! The in-memory value of one SQL datum.

use crate::TypeId;

/// One SQL value. Timestamps are microseconds since 2000-01-01 00:00:00 (UTC for
/// `TimestampTz`), dates are days since 2000-01-01, as in PostgreSQL.
#[derive(Debug, PartialEq)]
pub enum Datum {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Box<crate::numeric::Numeric>),
    /// text, varchar, bpchar (blank-padded to its length), name, and unknown literals.
    Text(String),
    Bytea(Vec<u8>),
    Date(i32),
    Timestamp(i64),
    TimestampTz(i64),
    Interval(crate::interval::Interval),
    Oid(u32),
    /// A value of any array type; the element type travels with it. Shared: a copy (a
    /// constant read per row, a joined row, a sort key) is a reference count, and a writer
    /// takes its own copy first (`Arc::make_mut`).
    Array(std::sync::Arc<crate::array::Array>),
    /// A composite value (a row type's or an anonymous `ROW(...)`), shared as arrays are.
    Record(std::sync::Arc<crate::record::Record>),
    /// A uuid's 16 bytes, most significant first.
    Uuid([u8; 16]),
}

impl Clone for Datum {
    /// Values without heap parts are copied whole, as one 32-byte move. The derived clone
    /// wrote the tag byte and the payload separately, and a row copy then read the datum back
    /// across both stores: a store-forwarding stall on every value of every joined row.
    #[inline]
    fn clone(&self) -> Self {
        match self {
            Datum::Numeric(n) => Datum::Numeric(n.clone()),
            Datum::Text(s) => Datum::Text(s.clone()),
            Datum::Bytea(b) => Datum::Bytea(b.clone()),
            Datum::Array(a) => Datum::Array(a.clone()),
            Datum::Record(r) => Datum::Record(r.clone()),
            // SAFETY: these variants hold only `Copy` fields (integers, floats, bool,
            // `Interval`, byte arrays), so a bitwise copy is a valid, independent value with nothing to
            // drop twice. The list is exhaustive: a new variant must be placed here or above.
            Datum::Null
            | Datum::Bool(_)
            | Datum::Int2(_)
            | Datum::Int4(_)
            | Datum::Int8(_)
            | Datum::Float4(_)
            | Datum::Float8(_)
            | Datum::Date(_)
            | Datum::Timestamp(_)
            | Datum::TimestampTz(_)
            | Datum::Interval(_)
            | Datum::Oid(_)
            | Datum::Uuid(_) => unsafe { std::ptr::read(self) },
        }
    }
}

impl Datum {
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// The integer a value of a one-integer type holds (integers, oid, date, timestamps),
    /// as hash joins key on it; None for NULL and every other type.
    #[inline]
    pub fn int_value(&self) -> Option<i64> {
        match self {
            Datum::Int2(x) => Some(*x as i64),
            Datum::Int4(x) | Datum::Date(x) => Some(*x as i64),
            Datum::Int8(x) | Datum::Timestamp(x) | Datum::TimestampTz(x) => Some(*x),
            Datum::Oid(x) => Some(*x as i64),
            _ => None,
        }
    }

    /// The type a non-null datum naturally has (text-like values report `Text`).
    pub fn natural_type(&self) -> Option<TypeId> {
        Some(match self {
            Datum::Null => return None,
            Datum::Bool(_) => TypeId::Bool,
            Datum::Int2(_) => TypeId::Int2,
            Datum::Int4(_) => TypeId::Int4,
            Datum::Int8(_) => TypeId::Int8,
            Datum::Float4(_) => TypeId::Float4,
            Datum::Float8(_) => TypeId::Float8,
            Datum::Numeric(_) => TypeId::Numeric,
            Datum::Text(_) => TypeId::Text,
            Datum::Bytea(_) => TypeId::Bytea,
            Datum::Date(_) => TypeId::Date,
            Datum::Timestamp(_) => TypeId::Timestamp,
            Datum::TimestampTz(_) => TypeId::TimestampTz,
            Datum::Interval(_) => TypeId::Interval,
            Datum::Oid(_) => TypeId::Oid,
            Datum::Array(a) => a.elem.array_of()?,
            Datum::Record(r) => r.ty,
            Datum::Uuid(_) => TypeId::Uuid,
        })
    }
}

/// Bytes the allocator hands out for a request of `size` bytes (glibc malloc: an 8-byte
/// header, 16-byte granules, 32 bytes at least); 0 for no allocation. An estimate for memory
/// accounting, which must follow what the process really holds, not what it asked for.
#[inline]
pub fn alloc_size(size: usize) -> usize {
    if size == 0 {
        0
    } else {
        ((size + 8 + 15) & !15).max(32)
    }
}

impl Datum {
    /// Heap bytes the value owns beyond the `Datum` itself (see [`alloc_size`]).
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        match self {
            Datum::Text(s) => alloc_size(s.capacity()),
            Datum::Bytea(b) => alloc_size(b.capacity()),
            // The box, the big integer's header and a few digits.
            Datum::Numeric(_) => 64,
            Datum::Array(a) => a.heap_bytes(),
            Datum::Record(r) => r.heap_bytes(),
            _ => 0,
        }
    }

    /// Gives a shared array or record a reference count of its own (a copy of the value).
    /// Plans are shared by all sessions, so a constant's `Arc` is too: a node that keeps such
    /// a value for many rows (a join's inner row) copies it once, and its per-row clones then
    /// count on a cache line of its own core instead of contending with every other session
    /// running the same plan.
    #[inline]
    pub fn unshare(&mut self) {
        match self {
            Datum::Array(a) => {
                std::sync::Arc::make_mut(a);
            }
            Datum::Record(r) => {
                std::sync::Arc::make_mut(r);
            }
            _ => {}
        }
    }
}

/// Heap bytes a row of datums holds: its slots and what each value owns.
#[inline]
pub fn row_heap_bytes(row: &Vec<Datum>) -> usize {
    let mut n = alloc_size(row.capacity() * std::mem::size_of::<Datum>());
    for d in row {
        n += d.heap_bytes();
    }
    n
}
