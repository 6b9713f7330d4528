//! On-disk row format: `[natts: u16][null bitmap: ceil(natts/8) bytes][values]`. Fixed-width
//! values are little-endian; variable-width ones are a u32 length then the bytes. No alignment.
#![allow(unused_variables)]

use crate::{Datum, TypeId};
use keel_common::PgResult;

/// Appends the encoding of `values` (of the given column types) to `out`.
pub fn encode_row(values: &[Datum], types: &[TypeId], out: &mut Vec<u8>) {
    todo!()
}

/// Decodes a whole row. A row written with fewer columns than `types` (an old row after
/// ALTER TABLE ADD COLUMN) yields NULL for the missing ones. Errors are XX001 (corrupt data).
pub fn decode_row(bytes: &[u8], types: &[TypeId]) -> PgResult<Vec<Datum>> {
    todo!()
}

/// Decodes only column `index`.
pub fn decode_column(bytes: &[u8], types: &[TypeId], index: usize) -> PgResult<Datum> {
    todo!()
}
