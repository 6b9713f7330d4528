//! INSERT ... ON CONFLICT: one proposed row through the engine's protocol (probe, act on a
//! conflict, or insert speculatively; keel-access `upsert.rs`).
//!
//! Across waits: a speculative insertion under way is `ModifyExec::state` (not fresh); an
//! update of the conflicting row under way is `ModifyExec::upsert` with `state`. Anything
//! else starts again at the probe, as PostgreSQL restarts after any wait.

use super::{ModifyExec, route, serialization_failure, triggers};
use crate::eval::{Eval, EvalCx};
use crate::exec::Row;
use keel_access::{Conflict, Engine, Isolation, RowRef, RowWait, Strength, Transaction, Write};
use keel_analyzer::query::OnConflict;
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_planner::plan::ModifyPlan;
use std::sync::Arc;

/// DO UPDATE of a conflicting row, kept while its write waits.
pub(super) struct PendingUpdate {
    target: RowRef,
    old: Row,
    new: Row,
}

fn second_time() -> PgError {
    PgError::new(
        sqlstate::CARDINALITY_VIOLATION,
        "ON CONFLICT DO UPDATE command cannot affect row a second time",
    )
    .with_hint(
        "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
    )
}

impl ModifyExec {
    /// Writes the current row. `Some(wait)`: call again after the wait. None: the row is
    /// done (inserted, updated or skipped) and the next one is current.
    pub(super) fn upsert_row(
        &mut self,
        plan: &ModifyPlan,
        oc: &OnConflict,
        (table, arbiters): (&Arc<TableDef>, &[Arc<IndexDef>]),
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Option<RowWait>> {
        let rc = txn.isolation == Isolation::ReadCommitted;
        let proposed = match &self.cur {
            Some((_, r)) => r.clone(),
            None => return Ok(None),
        };
        loop {
            ev.tick()?;
            if let Some(u) = self.upsert.take() {
                match super::name_objects_in(
                    engine.update(txn, table, u.target, &u.new, &mut self.state),
                    table,
                )? {
                    Write::Done(_) => {
                        self.queue_after_row(Some(&u.old), Some(&u.new))?;
                        self.emit(plan, &u.new, ev)?;
                        self.advance();
                        return Ok(None);
                    }
                    Write::Wait(w) => {
                        self.upsert = Some(u);
                        return Ok(Some(w));
                    }
                    Write::Updated(_) | Write::Deleted if !rc => {
                        return Err(serialization_failure());
                    }
                    Write::Updated(_) | Write::Deleted => {
                        self.state = Default::default();
                        continue;
                    }
                }
            }
            if self.state.is_fresh() {
                match engine.find_conflict(txn, table, arbiters, &proposed)? {
                    Conflict::Wait(w) => return Ok(Some(w)),
                    Conflict::None => {}
                    Conflict::Found {
                        row,
                        values,
                        this_command,
                        visible,
                    } => {
                        let Some(update) = &oc.update else {
                            if !visible && !rc {
                                return Err(serialization_failure());
                            }
                            self.advance();
                            return Ok(None);
                        };
                        if this_command {
                            return Err(second_time());
                        }
                        let xid = engine.row_lock_xid(txn)?;
                        match engine.lock_row(txn, xid, table, row, Strength::Update)? {
                            Write::Done(()) => {}
                            Write::Wait(w) => return Ok(Some(w)),
                            Write::Updated(_) | Write::Deleted if !rc => {
                                return Err(serialization_failure());
                            }
                            // Replaced or deleted meanwhile: probe again.
                            Write::Updated(_) | Write::Deleted => continue,
                        }
                        if !visible && !rc {
                            return Err(serialization_failure());
                        }
                        // The existing row, then EXCLUDED.
                        let mut both = values.clone();
                        both.extend(proposed.iter().cloned());
                        if let Some(f) = &update.filter
                            && !f.test(&both, ev)?
                        {
                            // The row stays locked, as in PostgreSQL.
                            self.advance();
                            return Ok(None);
                        }
                        let mut new = Self::updated(&both, &update.set, txn, ev)?;
                        new.truncate(values.len());
                        if self.triggers.before_update_row {
                            match triggers::run_before_update(plan, &values, new, txn, ev)? {
                                Some(n) => new = n,
                                None => {
                                    self.advance();
                                    return Ok(None);
                                }
                            }
                        }
                        // The row must stay in its partition (PostgreSQL does not move it).
                        if let Some(r) = &plan.routing
                            && route::route(r, &new)?.0.oid != table.oid
                        {
                            return Err(PgError::new(
                                sqlstate::FEATURE_NOT_SUPPORTED,
                                "invalid ON UPDATE specification",
                            )
                            .with_detail(
                                "The result tuple would appear in a different partition than the original tuple.",
                            ));
                        }
                        if let Some(w) =
                            Self::check_row(plan, &new, engine, txn, ev, &mut self.deferred_fks)?
                        {
                            return Ok(Some(w));
                        }
                        self.state.no_key = super::keys_kept(engine, txn, table, &values, &new);
                        self.upsert = Some(PendingUpdate {
                            target: row,
                            old: values,
                            new,
                        });
                        continue;
                    }
                }
            }
            match super::name_objects_in(
                engine.insert_speculative(txn, table, &proposed, &mut self.state, arbiters),
                table,
            )? {
                Write::Done(Some(_)) => {
                    self.queue_after_row(None, Some(&proposed))?;
                    self.emit(plan, &proposed, ev)?;
                    self.advance();
                    return Ok(None);
                }
                // Another transaction took the key: probe again.
                Write::Done(None) => self.state = Default::default(),
                Write::Wait(w) => return Ok(Some(w)),
                Write::Updated(_) | Write::Deleted => {
                    return Err(PgError::internal("insert reported a concurrent update"));
                }
            }
        }
    }
}
