//! The write node's triggers (see crate::trigger): BEFORE STATEMENT when the statement
//! starts, BEFORE ROW as each row is about to be written (its answer replaces the row, or
//! skips it), AFTER ROW queued as each row is written and run once all rows are, then AFTER
//! STATEMENT, as PostgreSQL's after-trigger queue runs them at the end of the statement.
//! Each firing runs in the statement's transaction (the evaluation context gets it), once:
//! a row whose write waits for a lock does not fire again when the write resumes.
//!
//! When an AFTER trigger of the statement's event has transition tables (REFERENCING OLD /
//! NEW TABLE), every row written is also kept, as written (after BEFORE ROW triggers), in a
//! [`RowStore`] per side: in memory up to work_mem, the rest in a temporary file. Once the
//! last row is written the stores are shared, read-only, with every AFTER firing (row and
//! statement level alike see the whole statement's rows, as in PostgreSQL), under the names
//! each trigger gave them.

use super::ModifyExec;
use crate::eval::EvalCx;
use crate::exec::Row;
use crate::exec::rowstore::RowStore;
use crate::trigger::{TransitionTable, TriggerFiring, TriggerOp, fire_nested, fires, replica};
use keel_access::Transaction;
use keel_catalog::TriggerTiming;
use keel_common::PgResult;
use keel_planner::plan::{ModifyKind, ModifyPlan};
use keel_types::Datum;
use std::sync::Arc;

/// The statement's transition rows once all are written: OLD (rows replaced or deleted) and
/// NEW (rows inserted or updated to), each kept when some trigger names it.
#[derive(Default)]
pub(super) struct Transition {
    old: Option<Arc<RowStore>>,
    new: Option<Arc<RowStore>>,
}

impl Transition {
    /// Trigger `t`'s transition tables, under its names.
    fn tables_of(
        &self,
        t: &keel_catalog::TriggerDef,
        table: &Arc<keel_catalog::TableDef>,
    ) -> Vec<TransitionTable> {
        let named = |name: &Option<String>, rows: &Option<Arc<RowStore>>| {
            Some(TransitionTable {
                name: name.clone()?,
                table: table.clone(),
                rows: rows.clone()?,
            })
        };
        [
            named(&t.old_table, &self.old),
            named(&t.new_table, &self.new),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

pub(super) fn op_of(plan: &ModifyPlan) -> TriggerOp {
    match plan.kind {
        ModifyKind::Insert { .. } => TriggerOp::Insert,
        ModifyKind::Update { .. } => TriggerOp::Update,
        ModifyKind::Delete { .. } => TriggerOp::Delete,
    }
}

fn set_columns(plan: &ModifyPlan) -> Vec<usize> {
    match &plan.kind {
        ModifyKind::Update { set, .. } => set.iter().map(|(c, _)| *c).collect(),
        _ => Vec::new(),
    }
}

/// The UPDATE an INSERT ... ON CONFLICT DO UPDATE also is, for its triggers: the columns
/// its SET assigns. None for any other statement.
fn conflict_update(plan: &ModifyPlan) -> Option<(TriggerOp, Vec<usize>)> {
    let u = plan.on_conflict.as_ref()?.update.as_ref()?;
    Some((TriggerOp::Update, u.set.iter().map(|(c, _)| *c).collect()))
}

/// Whether any enabled trigger of the table fires for this statement at `timing`/`row`.
pub(super) fn any(plan: &ModifyPlan, timing: TriggerTiming, row: bool, ev: &EvalCx<'_>) -> bool {
    any_as(plan, (op_of(plan), set_columns(plan)), timing, row, ev)
}

fn any_as(
    plan: &ModifyPlan,
    (op, cols): (TriggerOp, Vec<usize>),
    timing: TriggerTiming,
    row: bool,
    ev: &EvalCx<'_>,
) -> bool {
    let replica = replica(ev);
    plan.table
        .triggers
        .iter()
        .any(|t| fires(t, op, timing, row, &cols, replica))
}

/// Whether the statement keeps its OLD / NEW rows: an AFTER trigger (of either level) that
/// fires for it names that transition table.
fn captures(plan: &ModifyPlan, ev: &EvalCx<'_>) -> (bool, bool) {
    let (op, cols, replica) = (op_of(plan), set_columns(plan), replica(ev));
    let (mut old, mut new) = (false, false);
    for t in plan.table.triggers.iter() {
        if [true, false]
            .into_iter()
            .any(|row| fires(t, op, TriggerTiming::After, row, &cols, replica))
        {
            old |= t.old_table.is_some();
            new |= t.new_table.is_some();
        }
    }
    (old, new)
}

/// Fires the triggers of `timing`/`row` in name order. For BEFORE ROW: the row to write
/// (NEW, or OLD for DELETE) after each trigger had its say, None when one skipped it. For
/// INSTEAD OF ROW: the row the write did (NEW as the trigger answered it, OLD for DELETE),
/// None when a trigger answered NULL.
pub(super) fn run(
    plan: &ModifyPlan,
    when: (TriggerTiming, bool),
    old: Option<&[Datum]>,
    new: Option<Row>,
    transition: &Transition,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Row>> {
    let as_op = (op_of(plan), set_columns(plan));
    run_as(plan, as_op, when, (old, new), transition, txn, ev)
}

fn run_as(
    plan: &ModifyPlan,
    (op, cols): (TriggerOp, Vec<usize>),
    (timing, row): (TriggerTiming, bool),
    (old, mut new): (Option<&[Datum]>, Option<Row>),
    transition: &Transition,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Row>> {
    let mut cur_old = old.map(<[Datum]>::to_vec);
    let replica = replica(ev);
    for t in plan.table.triggers.iter() {
        if !fires(t, op, timing, row, &cols, replica) {
            continue;
        }
        let tables = transition.tables_of(t, &plan.table);
        let f = TriggerFiring {
            trigger: t,
            table: &plan.table,
            op,
            old: cur_old.as_deref(),
            new: new.as_deref(),
            transition: &tables,
        };
        let out = fire_nested(&f, txn, ev)?;
        match (timing, row) {
            (TriggerTiming::Before, true) => match (op, out) {
                (_, None) => return Ok(None),
                (TriggerOp::Delete, Some(r)) => cur_old = Some(r),
                (_, Some(r)) => new = Some(r),
            },
            // The row counts when the trigger answers one; DELETE's is the view's row.
            (TriggerTiming::InsteadOf, true) => match (op, out) {
                (_, None) => return Ok(None),
                (TriggerOp::Delete, Some(_)) => {}
                (_, Some(r)) => new = Some(r),
            },
            _ => {}
        }
    }
    Ok(match op {
        TriggerOp::Delete => cur_old,
        _ => new,
    })
}

/// BEFORE ROW triggers for the row about to be written: INSERT's new row, UPDATE's new row
/// (`old` the version it replaces), DELETE's old row. None: a trigger skipped it.
pub(super) fn run_before_row(
    plan: &ModifyPlan,
    old: Option<&[Datum]>,
    new: Option<Row>,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Row>> {
    let none = Transition::default();
    run(
        plan,
        (TriggerTiming::Before, true),
        old,
        new,
        &none,
        txn,
        ev,
    )
}

/// BEFORE UPDATE ROW triggers of ON CONFLICT DO UPDATE's update of `old` to `new`.
pub(super) fn run_before_update(
    plan: &ModifyPlan,
    old: &[Datum],
    new: Row,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Row>> {
    let Some(as_op) = conflict_update(plan) else {
        return Ok(Some(new));
    };
    let none = Transition::default();
    let when = (TriggerTiming::Before, true);
    run_as(plan, as_op, when, (Some(old), Some(new)), &none, txn, ev)
}

impl ModifyExec {
    /// BEFORE STATEMENT triggers, once, before the statement reads anything.
    pub(super) fn before_statement(
        &mut self,
        plan: &ModifyPlan,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        if !self.triggers.statement_started {
            self.triggers.statement_started = true;
            self.triggers.before_row = any(plan, TriggerTiming::Before, true, ev);
            self.triggers.after_row = any(plan, TriggerTiming::After, true, ev);
            if let Some(as_op) = conflict_update(plan) {
                self.triggers.upsert = true;
                let before = any_as(plan, as_op.clone(), TriggerTiming::Before, true, ev);
                self.triggers.before_update_row = before;
                let after = any_as(plan, as_op, TriggerTiming::After, true, ev);
                self.triggers.after_update_row = after;
            }
            let (old, new) = captures(plan, ev);
            let store = || RowStore::new(ev.settings.work_mem_bytes(), ev.engine.temp_dir());
            self.triggers.old_rows = old.then(store);
            self.triggers.new_rows = new.then(store);
            if any(plan, TriggerTiming::Before, false, ev) {
                let none = Transition::default();
                run(
                    plan,
                    (TriggerTiming::Before, false),
                    None,
                    None,
                    &none,
                    txn,
                    ev,
                )?;
            }
            // ON CONFLICT DO UPDATE is an UPDATE too: its statement triggers fire as well.
            if let Some(as_op) = conflict_update(plan)
                && any_as(plan, as_op.clone(), TriggerTiming::Before, false, ev)
            {
                let none = Transition::default();
                let when = (TriggerTiming::Before, false);
                run_as(plan, as_op, when, (None, None), &none, txn, ev)?;
            }
        }
        Ok(())
    }

    /// Queues the AFTER ROW triggers of a written row, and keeps it for the transition
    /// tables.
    pub(super) fn queue_after_row(
        &mut self,
        old: Option<&[Datum]>,
        new: Option<&[Datum]>,
    ) -> PgResult<()> {
        let queue = match (old, new) {
            (Some(_), Some(_)) if self.triggers.upsert => self.triggers.after_update_row,
            _ => self.triggers.after_row,
        };
        if queue {
            self.triggers
                .queued
                .push((old.map(<[Datum]>::to_vec), new.map(<[Datum]>::to_vec)));
        }
        for (store, row) in [
            (&mut self.triggers.old_rows, old),
            (&mut self.triggers.new_rows, new),
        ] {
            if let (Some(store), Some(row)) = (store, row) {
                store.push(row.to_vec())?;
            }
        }
        Ok(())
    }

    /// Once every row is written: the queued AFTER ROW triggers, then AFTER STATEMENT.
    pub(super) fn after_statement(
        &mut self,
        plan: &ModifyPlan,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        if self.triggers.statement_done {
            return Ok(());
        }
        self.triggers.statement_done = true;
        let transition = Transition {
            old: self.triggers.old_rows.take().map(Arc::new),
            new: self.triggers.new_rows.take().map(Arc::new),
        };
        let upsert = conflict_update(plan);
        for (old, new) in std::mem::take(&mut self.triggers.queued) {
            let as_op = match (&upsert, &old) {
                (Some(u), Some(_)) => u.clone(),
                _ => (op_of(plan), set_columns(plan)),
            };
            let when = (TriggerTiming::After, true);
            run_as(
                plan,
                as_op,
                when,
                (old.as_deref(), new),
                &transition,
                txn,
                ev,
            )?;
        }
        if let Some(as_op) = upsert
            && any_as(plan, as_op.clone(), TriggerTiming::After, false, ev)
        {
            let when = (TriggerTiming::After, false);
            run_as(plan, as_op, when, (None, None), &transition, txn, ev)?;
        }
        if any(plan, TriggerTiming::After, false, ev) {
            run(
                plan,
                (TriggerTiming::After, false),
                None,
                None,
                &transition,
                txn,
                ev,
            )?;
        }
        Ok(())
    }
}
