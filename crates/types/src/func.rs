//! Scalar functions and aggregates, resolved by name and argument types.
#![allow(unused_variables)]

use crate::{Datum, TypeId};
use keel_common::PgResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volatility {
    Immutable,
    Stable,
    Volatile,
}

/// What a function may need from its caller: the statement/transaction start time for now(),
/// and a random generator seeded per session.
pub trait FuncContext {
    /// Transaction start time, microseconds since 2000-01-01 UTC (now(), CURRENT_TIMESTAMP).
    fn transaction_timestamp(&self) -> i64;
    /// Statement start time (statement_timestamp()).
    fn statement_timestamp(&self) -> i64;
    /// A uniformly distributed float in [0, 1) (random()).
    fn random(&mut self) -> f64;
}

/// A resolved scalar function.
#[derive(Clone, Copy)]
pub struct Function {
    /// Types to coerce the arguments to (for variadic functions, one entry per actual argument).
    pub args: &'static [TypeId],
    pub result: TypeId,
    pub volatility: Volatility,
    /// Strict: any NULL argument gives NULL without calling `func`.
    pub strict: bool,
    pub func: fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>,
}

/// Resolves a scalar function call: now, clock_timestamp, statement_timestamp,
/// transaction_timestamp, random, md5, abs, length/char_length/octet_length, lower, upper,
/// substr/substring, position/strpos, replace, repeat, concat, left, right, btrim/ltrim/rtrim,
/// lpad/rpad, round, trunc, floor, ceil/ceiling, mod, power, sqrt, sign, greatest/least are
/// handled by the binder. `args` are the actual argument types (Unknown for untyped literals).
/// None = 42883 `function f(integer) does not exist`.
pub fn resolve_function(name: &str, args: &[TypeId]) -> Option<Function> {
    todo!()
}

/// An aggregate's transition state. `count`, `sum`, `avg`, `min`, `max`, `string_agg`,
/// `bool_and`, `bool_or`.
pub trait Accumulator: Send {
    /// Adds one input row's arguments (already coerced). Called for NULL inputs too; the
    /// accumulator ignores them where the aggregate is strict.
    fn update(&mut self, args: &[Datum]) -> PgResult<()>;
    /// The final value (sum of no rows = NULL, count of no rows = 0, ...).
    fn finish(&self) -> PgResult<Datum>;
}

#[derive(Clone, Copy)]
pub struct Aggregate {
    pub args: &'static [TypeId],
    /// Result type as PostgreSQL gives it: sum(int4) -> int8, sum(int8) -> numeric,
    /// avg(int) -> numeric, count -> int8, ...
    pub result: TypeId,
    pub new_accumulator: fn() -> Box<dyn Accumulator>,
}

/// Resolves an aggregate by name and argument types; `count(*)` is `("count", &[])`.
pub fn resolve_aggregate(name: &str, args: &[TypeId]) -> Option<Aggregate> {
    todo!()
}
