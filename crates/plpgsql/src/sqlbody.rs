//! SQL function bodies that write (INSERT, UPDATE, DELETE): the executor plans them
//! (`keel_sql::sqlfunc`) and this crate runs them, statement by statement, through the same
//! host as a PL/pgSQL function's statements: relation locks taken and waited for, row locks
//! awaited, and each statement started as one of its own, so a later one sees what an earlier
//! one wrote.

use crate::call::{ExecHost, PlanRef};
use keel_catalog::FuncVolatility;
use keel_common::{PgError, PgResult};
use keel_sql::expr::{EvalCx, UserCall};
use keel_sql::sqlfunc::BodyStmt;
use keel_types::Datum;

/// The executor's [`keel_sql::sqlfunc::SqlBodyHandler`]: runs `stmts` with the call's
/// argument values as parameters, in the caller's transaction; the last statement's rows.
pub(crate) fn run_sql_body(
    call: &UserCall,
    stmts: &[BodyStmt],
    values: &[Datum],
    cx: &mut EvalCx<'_>,
) -> PgResult<Vec<Vec<Datum>>> {
    let txn = cx
        .txn
        .ok_or_else(|| PgError::unsupported("a SQL function that writes in this position"))?;
    let engine = cx.engine;
    let volatile = call.def.volatility == FuncVolatility::Volatile;
    let saved = engine.statement_snapshot(txn);
    let r = (|| -> PgResult<Vec<Vec<Datum>>> {
        let mut host = ExecHost::new(cx, txn, call.catalog.clone(), volatile);
        let mut last = Vec::new();
        for (i, s) in stmts.iter().enumerate() {
            let (plan, locks) = match s {
                BodyStmt::Query(q) => (PlanRef::Query(q), keel_sql::query_locks(q)),
                BodyStmt::Modify(m) => (PlanRef::Modify(m), keel_sql::modify_locks(m)),
            };
            // PostgreSQL's CONTEXT for a statement of a SQL function counts from 1.
            let context = |e: PgError| {
                let line = format!("SQL function \"{}\" statement {}", call.def.proname, i + 1);
                e.with_context_line(line)
            };
            last = host.run_plan(plan, &locks, values).map_err(context)?.0;
        }
        Ok(last)
    })();
    engine.resume_statement(txn, saved);
    r
}
