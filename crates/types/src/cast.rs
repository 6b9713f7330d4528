//! Casts between types, with PostgreSQL's implicit / assignment / explicit contexts.
#![allow(unused_variables)]

use crate::{Datum, SqlType, TypeId};
use keel_common::PgResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CastContext {
    Implicit,
    Assignment,
    Explicit,
}

/// Whether a cast from `from` to `to` exists in `context` (pg_cast's castcontext rules).
pub fn can_cast(from: TypeId, to: TypeId, context: CastContext) -> bool {
    todo!()
}

/// Converts `value` to `to`, applying `to.typmod` (e.g. varchar(n) truncation on explicit cast,
/// error 22001 on assignment). Errors as PostgreSQL: 22003, 22P02, ...
pub fn cast(value: Datum, from: TypeId, to: SqlType, context: CastContext) -> PgResult<Datum> {
    todo!()
}
