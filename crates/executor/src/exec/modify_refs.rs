//! Foreign keys of a write (see the crate README's "Foreign keys").
//!
//! - A written row's keys must exist in the referenced tables (`check_fks`), the referenced
//!   row locked FOR KEY SHARE. A key of the table itself that is not there yet may be one
//!   a later row of the same statement writes: it is checked again once every row is
//!   written (`check_deferred_fks`), with a snapshot that sees them, as PostgreSQL checks
//!   NO ACTION at the end of the statement.
//! - Referential actions (ON DELETE / ON UPDATE CASCADE, SET NULL, SET DEFAULT): the
//!   referencing rows of a deleted or changed key are deleted or updated by a statement of
//!   their own on the referencing table (`internal_sql`), as PostgreSQL's RI triggers run
//!   theirs through SPI, so that table's triggers, constraints and actions apply in turn. It
//!   runs after the referenced row was written, with a refreshed snapshot (see `check_refs`).

use super::ModifyExec;
use super::lock_first_match;
use crate::eval::{EvalCx, row_text};
use keel_access::{Engine, KeyRange, RowWait, Transaction};
use keel_analyzer::query::FkCheck;
use keel_catalog::FkAction;
use keel_common::{PgError, PgResult, sqlstate};
use keel_planner::plan::ModifyPlan;
use keel_types::{Datum, TypeId};
use std::ops::Bound;

/// 23503 for a written row whose key `vals` of `fk` is not in the referenced table.
fn missing_key(plan: &ModifyPlan, fk: &FkCheck, vals: &[Datum]) -> PgError {
    let names: Vec<&str> = fk
        .columns
        .iter()
        .map(|&c| plan.table.columns[c].name.as_str())
        .collect();
    let tys: Vec<_> = fk.columns.iter().map(|&c| plan.types[c]).collect();
    PgError::new(
        sqlstate::FOREIGN_KEY_VIOLATION,
        format!(
            "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
            plan.table.name, fk.name
        ),
    )
    .with_detail(format!(
        "Key ({})=({}) is not present in table \"{}\".",
        names.join(", "),
        row_text(vals, &tys),
        fk.ref_table.name
    ))
    .with_table(plan.table.name.clone())
    .with_constraint(fk.name.clone())
}

/// Whether a row of `fk`'s referenced table holds `vals`; with `lock`, it is locked FOR KEY
/// SHARE (`Err` when another transaction's lock must be waited for).
fn referenced(
    fk: &FkCheck,
    vals: &[Datum],
    engine: &Engine,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Result<bool, RowWait>> {
    let matches = |r: &[Datum]| {
        fk.ref_columns
            .iter()
            .zip(vals)
            .all(|(&c, v)| !r[c].is_null() && keel_types::ops::compare(&r[c], v).is_eq())
    };
    match &fk.ref_index {
        Some(idx) => {
            let range = KeyRange {
                lower: Bound::Included(vals.to_vec()),
                upper: Bound::Included(vals.to_vec()),
            };
            let rows = engine.index_scan(txn, &fk.ref_table, idx, range);
            lock_first_match(engine, txn, &fk.ref_table, rows, &matches, &mut || Ok(()))
        }
        None => {
            let rows = engine.scan(txn, &fk.ref_table);
            lock_first_match(engine, txn, &fk.ref_table, rows, &matches, &mut || {
                ev.tick()
            })
        }
    }
}

impl ModifyExec {
    /// The written `row`'s foreign keys: each key (without NULLs, MATCH SIMPLE) must be in
    /// the referenced table. A missing key of the table itself goes to `deferred`.
    pub(super) fn check_fks(
        plan: &ModifyPlan,
        row: &[Datum],
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
        deferred: &mut Vec<(usize, Vec<Datum>)>,
    ) -> PgResult<Option<RowWait>> {
        // A replica session's rows are checked where they came from.
        if crate::trigger::replica(ev) {
            return Ok(None);
        }
        for (i, fk) in plan.fks.iter().enumerate() {
            let vals: Vec<Datum> = fk.columns.iter().map(|&c| row[c].clone()).collect();
            if vals.iter().any(Datum::is_null) {
                continue;
            }
            match referenced(fk, &vals, engine, txn, ev)? {
                Ok(true) => {}
                Ok(false) if fk.ref_table.oid == plan.table.oid => deferred.push((i, vals)),
                Ok(false) => return Err(missing_key(plan, fk, &vals)),
                Err(w) => return Ok(Some(w)),
            }
        }
        Ok(None)
    }

    /// The deferred keys, once every row of the statement is written: looked up with a
    /// snapshot of a new command, which sees those rows; the statement's own snapshot is
    /// restored after.
    pub(super) fn check_deferred_fks(
        &mut self,
        plan: &ModifyPlan,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        if self.deferred_fks.is_empty() {
            return Ok(());
        }
        let saved = engine.statement_snapshot(txn);
        engine.start_statement(txn);
        let mut result = Ok(());
        for (i, vals) in std::mem::take(&mut self.deferred_fks) {
            let fk = &plan.fks[i];
            result = match referenced(fk, &vals, engine, txn, ev) {
                // A matching row another transaction has locked is there all the same.
                Ok(Ok(true) | Err(_)) => Ok(()),
                Ok(Ok(false)) => Err(missing_key(plan, fk, &vals)),
                Err(e) => Err(e),
            };
            if result.is_err() {
                break;
            }
        }
        engine.resume_statement(txn, saved);
        result
    }

    /// ON DELETE / ON UPDATE CASCADE, SET NULL or SET DEFAULT of foreign key `r`: the
    /// referencing rows of the deleted or changed key `old_key` are deleted or updated by a
    /// statement of their own, whose triggers, constraints and actions apply in turn.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn referential_action(
        plan: &ModifyPlan,
        r: &keel_analyzer::query::RefCheck,
        action: FkAction,
        old_key: &[Datum],
        new: Option<&[Datum]>,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        let quote = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
        let child_col = |k: usize| quote(&r.child.columns[r.child_columns[k]].name);
        let mut types: Vec<TypeId> = r.columns.iter().map(|&c| plan.types[c]).collect();
        let mut values = old_key.to_vec();
        let filter: Vec<String> = (0..r.columns.len())
            .map(|k| format!("{} = ${}", child_col(k), k + 1))
            .collect();
        let table = quote(&r.child.name);
        let set = |value: &dyn Fn(usize) -> String| -> String {
            (0..r.columns.len())
                .map(|k| format!("{} = {}", child_col(k), value(k)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let n = r.columns.len();
        let text = match (action, new) {
            (FkAction::Cascade, None) => {
                format!("DELETE FROM {table} WHERE {}", filter.join(" AND "))
            }
            (FkAction::Cascade, Some(new)) => {
                types.extend(r.columns.iter().map(|&c| plan.types[c]));
                values.extend(r.columns.iter().map(|&c| new[c].clone()));
                format!(
                    "UPDATE {table} SET {} WHERE {}",
                    set(&|k| format!("${}", n + k + 1)),
                    filter.join(" AND ")
                )
            }
            (FkAction::SetNull, _) => format!(
                "UPDATE {table} SET {} WHERE {}",
                set(&|_| "NULL".into()),
                filter.join(" AND ")
            ),
            (FkAction::SetDefault, _) => format!(
                "UPDATE {table} SET {} WHERE {}",
                set(&|_| "DEFAULT".into()),
                filter.join(" AND ")
            ),
            (FkAction::NoAction | FkAction::Restrict, _) => return Ok(()),
        };
        // The statement as PostgreSQL's ri_triggers.c writes it, for the CONTEXT line.
        let qualified = format!("ONLY \"public\".{table}");
        let eq = |k: usize, p: usize| format!("${p} OPERATOR(pg_catalog.=) {}", child_col(k));
        let shown = match (action, new) {
            (FkAction::Cascade, None) => format!(
                "DELETE FROM {qualified} WHERE {}",
                (0..n)
                    .map(|k| eq(k, k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            (FkAction::Cascade, Some(_)) => format!(
                "UPDATE {qualified} SET {} WHERE {}",
                set(&|k| format!("${}", k + 1)),
                (0..n)
                    .map(|k| eq(k, n + k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            _ => format!(
                "UPDATE {qualified} SET {} WHERE {}",
                set(&|_| if action == FkAction::SetNull {
                    "NULL"
                } else {
                    "DEFAULT"
                }
                .into()),
                (0..n)
                    .map(|k| eq(k, k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
        };
        let catalog = txn.catalog(engine);
        let mut inner = ev.nested(Some(txn), &[]);
        let r = crate::internal_sql::run_write(&text, &shown, &types, &values, catalog, &mut inner);
        let carried = inner.carried();
        ev.restore(carried);
        r
    }
}
