//! Text and binary input/output, byte-compatible with PostgreSQL 15 (DateStyle ISO, MDY;
//! TimeZone UTC; extra_float_digits 1).
#![allow(unused_variables)]

use crate::{Datum, SqlType, TypeId};
use keel_common::PgResult;

/// Input function: parses the text form of a value of type `ty`, applying its typmod
/// (varchar(n)/char(n) length checks and padding, numeric(p,s) rounding).
/// Errors: 22P02 invalid input syntax, 22003 out of range, 22001 too long, 22007/22008 datetime.
pub fn parse_text(text: &str, ty: SqlType) -> PgResult<Datum> {
    todo!()
}

/// Output function: appends the text form PostgreSQL prints. `Datum::Null` appends nothing.
pub fn format_text(value: &Datum, ty: TypeId, out: &mut String) {
    todo!()
}

/// Binary receive function (the wire's format code 1).
pub fn parse_binary(bytes: &[u8], ty: SqlType) -> PgResult<Datum> {
    todo!()
}

/// Binary send function (the wire's format code 1).
pub fn format_binary(value: &Datum, ty: TypeId, out: &mut Vec<u8>) {
    todo!()
}
