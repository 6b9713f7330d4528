//! Operators and their resolution (PostgreSQL's pg_operator and oper_select_candidate rules,
//! for the types Keel has).
#![allow(unused_variables)]

use crate::{Datum, TypeId};
use keel_common::PgResult;
use std::cmp::Ordering;

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

/// Resolves binary `op` (`+ - * / % = <> < <= > >= || ~~ !~~ ~~* ^ & | # << >>`, with `!=`
/// normalized to `<>`, LIKE to `~~`) for operand types. `Unknown` operands (untyped literals,
/// parameters) take the other side's type, as PostgreSQL does. None = 42883
/// `operator does not exist: integer + text`.
pub fn resolve_binary(op: &str, left: TypeId, right: TypeId) -> Option<Operator> {
    todo!()
}

/// Prefix operators: `-`, `+`, `@` (abs), `~` (bitwise not), NOT is handled by the executor.
pub fn resolve_unary(op: &str, operand: TypeId) -> Option<(TypeId, TypeId, fn(&Datum) -> PgResult<Datum>)> {
    todo!()
}

/// SQL comparison of two non-null values of the same type (collation "C" for text; NaN
/// greatest for floats and numeric, as PostgreSQL sorts).
pub fn compare(a: &Datum, b: &Datum) -> Ordering {
    todo!()
}
