//! Memcomparable index keys: encoded so that `memcmp` order equals SQL `<` order (collation
//! "C", NULLS LAST, as a default B-tree), SQL-equal values encode to equal bytes (1.0 and 1.00,
//! -0.0 and 0.0), and each column's encoding is self-delimiting, so a key of the first k
//! columns is a byte prefix of every full key with those values.
#![allow(unused_variables)]

use crate::{Datum, TypeId};

/// Appends the key encoding of `values` (column types given) to `out`.
pub fn encode_key(values: &[Datum], types: &[TypeId], out: &mut Vec<u8>) {
    todo!()
}
