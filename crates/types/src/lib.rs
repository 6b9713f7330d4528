//! SQL types and values: the [`Datum`] every layer passes around, the [`TypeId`]s PostgreSQL
//! clients see (with their OIDs), and everything that turns values into text, binary wire
//! format, on-disk row bytes and memcomparable index keys.
//!
//! Invariants:
//! - A `Datum` of a given `TypeId` always has the matching variant (`Int4` for int4, ...);
//!   `Datum::Null` is the only variant valid for every type.
//! - Text output matches PostgreSQL 15 byte for byte (DateStyle ISO, extra_float_digits = 1).
//! - Index keys ([`key`]) compare with `memcmp` in the same order as the SQL `<` operator under
//!   collation "C", and values that are SQL-equal encode to equal bytes.

pub mod agg;
pub mod array;
pub mod array_build;
pub mod array_ops;
pub mod cast;
pub mod common_type;
pub mod datetime;
pub mod datum;
pub mod func;
mod func_format;
pub mod hash;
pub mod interval;
pub mod io;
pub mod key;
pub mod keywords;
pub mod limits;
pub mod numeric;
mod numeric_digits;
mod numeric_io;
mod numeric_small;
pub mod ops;
pub mod record;
pub mod regex;
pub mod row;
pub mod scalar;
pub mod typeid;
pub mod uuid;

pub use datum::Datum;
pub use typeid::{SqlType, TypeId};
