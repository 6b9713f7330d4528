//! Constant folding of operators and casts whose operands are constants, as PostgreSQL's
//! `eval_const_expressions` folds immutable ones: `timestamp '2024-01-01' + 100 * interval
//! '1 day'` becomes the timestamp it denotes, so estimates read the statistics with it and
//! EXPLAIN prints it as PostgreSQL does.
//!
//! Only operands and results of types whose operators and casts do not depend on a setting
//! are folded: anything involving `timestamptz` (TimeZone) or text (DateStyle and friends
//! in its casts) is left to run time. An operator that fails on its constants (division by
//! zero, overflow) is not folded: it fails when it runs, with the same error and, as
//! PostgreSQL's, no position. PostgreSQL's planner raises it even where it would not run
//! (under a false WHERE, in a CASE branch not taken); keel does not.

use crate::expr::Expr;
use keel_common::PgResult;
use keel_types::{Datum, TypeId};

/// Types whose operators among themselves are immutable.
fn settled(ty: TypeId) -> bool {
    matches!(
        ty,
        TypeId::Bool
            | TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Float4
            | TypeId::Float8
            | TypeId::Numeric
            | TypeId::Date
            | TypeId::Timestamp
            | TypeId::Interval
    )
}

/// `l op r` as a constant when both are constants (or casts of constants) of settled types
/// and `f` succeeds. Looks only at the two operands, never below them: a long chain of
/// operators that does not fold costs one look per operator.
pub(crate) fn fold_binary(
    f: fn(&Datum, &Datum) -> PgResult<Datum>,
    l: &Expr,
    r: &Expr,
    types: [TypeId; 3],
) -> Option<Expr> {
    if !types.iter().all(|t| settled(*t)) {
        return None;
    }
    let (a, b) = (constant(l)?, constant(r)?);
    let v = if a.is_null() || b.is_null() {
        Datum::Null
    } else {
        f(&a, &b).ok()?
    };
    Some(Expr::Const(v, types[2]))
}

/// The value of a constant, or of a cast of a constant between settled types (`None` when
/// it is neither, or the cast fails: the operator above then does not fold either).
fn constant(e: &Expr) -> Option<Datum> {
    match e {
        Expr::Const(v, _) => Some(v.clone()),
        Expr::Cast { arg, from, to, ctx } => match arg.as_ref() {
            Expr::Const(v, _) if settled(*from) && settled(to.id) && to.typmod < 0 => {
                if v.is_null() {
                    Some(Datum::Null)
                } else {
                    keel_types::cast::cast(v.clone(), *from, *to, *ctx).ok()
                }
            }
            _ => None,
        },
        _ => None,
    }
}
