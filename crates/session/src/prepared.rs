//! SQL-level prepared statements: PREPARE, EXECUTE and EXPLAIN EXECUTE. They share the
//! session's statement map with the protocol's Parse (PostgreSQL's one namespace: a
//! statement PREPAREd in SQL can be bound by name, and DEALLOCATE closes either kind), and
//! their plans come from the shared plan cache, as Parse's do.
//!
//! Keel runs a prepared statement's one plan (PostgreSQL's generic plan) at every
//! execution, whatever plan_cache_mode says: partitions are pruned from the parameters when
//! the statement starts, so the plan costs nothing per partition pruned.

use crate::exec::{eval_cx, stmt_env};
use crate::session::{Session, StmtEntry, prepared_room};
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::expr::Eval;
use keel_sql::prepare_stmt::TypeText;
use keel_sql::utility::Utility;
use keel_sql::{Prepared, Stmt};
use keel_types::Datum;
use std::sync::Arc;

pub(crate) fn unknown_prepared(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_SQL_STATEMENT_NAME,
        format!("prepared statement \"{name}\" does not exist"),
    )
}

impl Session {
    /// `PREPARE name [(types)] AS query`; `at` is the character offset of the PREPARE
    /// statement in the query string, `query_at` the query's in the query string.
    pub(crate) fn sql_prepare(
        &mut self,
        name: &str,
        types: &[TypeText],
        query: &str,
        (at, query_at): (usize, usize),
    ) -> PgResult<String> {
        if self.stmts.contains_key(name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        prepared_room(&self.stmts, query)?;
        let catalog = self.catalog();
        let mut declared = Vec::with_capacity(types.len());
        for t in types {
            let ty = keel_sql::bind::types::type_from_name_in(&t.name, &catalog).map_err(|e| {
                let position = (at + t.offset + 1) as u32;
                e.or_position(position)
            })?;
            declared.push(ty.id);
        }
        self.stack_limit();
        let prep = self.plans.prepare(
            catalog,
            &keel_sql::EngineSizes(&self.engine),
            query,
            query_at,
            &declared,
        )?;
        self.stmts
            .insert(name.to_string(), StmtEntry { prep, declared });
        Ok("PREPARE".to_string())
    }

    /// For an EXECUTE statement `stmt` (at character `at` of the query string), the
    /// statement it runs and the parameters' values ([`Session::execute_target`]); None for
    /// any other statement.
    pub(crate) fn executed(
        &mut self,
        stmt: &Stmt,
        at: usize,
    ) -> PgResult<Option<(Arc<Prepared>, Vec<Datum>)>> {
        let Stmt::Utility(Utility::Execute {
            name,
            args,
            args_offset,
        }) = stmt
        else {
            return Ok(None);
        };
        // The arguments are evaluated as part of the statement (its timestamp, its deadline).
        self.statement_started();
        self.execute_target(name, args, at + args_offset).map(Some)
    }

    /// The statement `EXECUTE name (args)` runs, planned again if its plan is stale, and its
    /// parameters' values: the arguments (at character `at` of the query string) bound,
    /// coerced to the parameters' types and evaluated.
    fn execute_target(
        &mut self,
        name: &str,
        args: &str,
        at: usize,
    ) -> PgResult<(Arc<Prepared>, Vec<Datum>)> {
        let entry = self.stmts.get(name).ok_or_else(|| unknown_prepared(name))?;
        let prep = match self.replanned(&entry.prep, &entry.declared)? {
            Some(p) => {
                same_result(&entry.prep, &p)?;
                if let Some(e) = self.stmts.get_mut(name) {
                    e.prep = p.clone();
                }
                p
            }
            None => entry.prep.clone(),
        };
        if !matches!(prep.stmt, Stmt::Query(_) | Stmt::Modify(_)) {
            // A protocol-level statement of another kind (PostgreSQL runs any).
            return Err(PgError::unsupported(
                "EXECUTE of a prepared statement other than SELECT, INSERT, UPDATE or DELETE",
            ));
        }
        let exprs = keel_sql::execute_args::bind_execute_args(
            &self.catalog(),
            name,
            args,
            at,
            &prep.params,
        )?;
        if exprs.is_empty() {
            return Ok((prep, Vec::new()));
        }
        self.ensure_txn();
        let cf = self.cancel_check();
        let txn = self.txn.as_ref();
        let mut ev = eval_cx(stmt_env!(self), &[], &cf, txn);
        let mut values = Vec::with_capacity(exprs.len());
        for e in &exprs {
            values.push(e.eval(&[], &mut ev)?);
        }
        Ok((prep, values))
    }
}

/// A prepared statement planned again (after DDL) must return rows of the same shape, as
/// PostgreSQL's plan cache requires: a client that described it reads them by that shape.
pub(crate) fn same_result(old: &Prepared, new: &Prepared) -> PgResult<()> {
    let shape = |p: &Prepared| -> Vec<(String, keel_types::TypeId, i32)> {
        (p.columns().unwrap_or_default().iter())
            .map(|c| (c.name.clone(), c.ty, c.typmod))
            .collect()
    };
    if shape(old) != shape(new) {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "cached plan must not change result type",
        ));
    }
    Ok(())
}
