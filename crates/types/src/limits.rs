//! The 1 GB ceiling on one value, and the errors PostgreSQL raises where a builder would pass it.
//!
//! PostgreSQL allocates every value whole, and one allocation may not exceed `MaxAllocSize`
//! (1 GB - 1). Builders meet that limit in one of three ways, each with its own error, and
//! keel raises the same one at the same length:
//! - a function that sizes its result first (`repeat`, `lpad`, `rpad`): 54000 `requested length
//!   too large` ([`requested_length_too_large`]);
//! - a builder that appends to a growing buffer (`string_agg`, `concat`, `concat_ws`,
//!   `replace`, a DataRow or a COPY line): 54000 `out of memory` with DETAIL `Cannot enlarge
//!   string buffer containing N bytes by M more bytes.` ([`enlarge`]), PostgreSQL's
//!   `enlargeStringInfo`; the buffer is then copied into a value of its length, which may still
//!   be too large by up to 4 bytes ([`varlena`]);
//! - an operator that allocates its result at once (`||` on text and bytea, `overlay`, the
//!   text form of a bytea): XX000 `invalid memory alloc request size N`, PostgreSQL's `palloc`
//!   check, where N counts the 4-byte varlena header ([`varlena`], [`alloc`]).
//!
//! No value keel builds is therefore longer than [`MAX_VALUE_LEN`] bytes, whatever the query.

use crate::Datum;
use keel_common::{PgError, PgResult, sqlstate};

/// PostgreSQL's `MaxAllocSize`: the largest single allocation, 1 GB - 1.
pub const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// The 4-byte length header of a PostgreSQL varlena value.
const VARHDRSZ: usize = 4;

/// The longest text or bytea value: its data plus the varlena header fill one allocation.
pub const MAX_VALUE_LEN: usize = MAX_ALLOC_SIZE - VARHDRSZ;

/// `palloc(size)`: XX000 past [`MAX_ALLOC_SIZE`], as PostgreSQL's `invalid memory alloc
/// request size`.
pub fn alloc(size: usize) -> PgResult<()> {
    if size > MAX_ALLOC_SIZE {
        return Err(PgError::new(
            sqlstate::INTERNAL_ERROR,
            format!("invalid memory alloc request size {size}"),
        ));
    }
    Ok(())
}

/// A text or bytea value of `len` data bytes allocated whole (`palloc(len + VARHDRSZ)`).
pub fn varlena(len: usize) -> PgResult<()> {
    alloc(len.saturating_add(VARHDRSZ))
}

/// `enlargeStringInfo(buf, more)` for a buffer holding `len` bytes: the buffer keeps a
/// terminating NUL, so it may grow to `MAX_ALLOC_SIZE - 1` bytes of data.
pub fn enlarge(len: usize, more: usize) -> PgResult<()> {
    if more >= MAX_ALLOC_SIZE.saturating_sub(len) {
        return Err(
            PgError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(format!(
                "Cannot enlarge string buffer containing {len} bytes by {more} more bytes."
            )),
        );
    }
    Ok(())
}

/// 54000 `requested length too large` (repeat, lpad, rpad).
pub fn requested_length_too_large() -> PgError {
    PgError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        "requested length too large",
    )
}

/// The length of `value`'s text form, checked as PostgreSQL's output function allocates it:
/// only bytea's text form (`\x` and two hex digits a byte) outgrows the value itself.
pub fn text_out(value: &Datum) -> PgResult<()> {
    if let Datum::Bytea(b) = value {
        alloc(b.len().saturating_mul(2).saturating_add(3))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_fall_where_postgres_puts_them() {
        // PostgreSQL 15: repeat('x', 1073741819) works, text || text of 1073741820 bytes
        // fails with size 1073741824.
        assert!(varlena(1_073_741_819).is_ok());
        let e = varlena(1_073_741_820).unwrap_err();
        assert_eq!(e.code, "XX000");
        assert_eq!(e.message, "invalid memory alloc request size 1073741824");
        // concat(600000000 bytes, 473741822 bytes) fits the buffer; one more byte does not.
        assert!(enlarge(600_000_000, 473_741_822).is_ok());
        let e = enlarge(600_000_000, 473_741_823).unwrap_err();
        assert_eq!(e.code, "54000");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "Cannot enlarge string buffer containing 600000000 bytes by 473741823 more bytes."
            )
        );
        assert!(text_out(&Datum::Bytea(vec![])).is_ok());
    }
}
