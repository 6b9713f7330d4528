//! The write node's triggers (see crate::trigger): BEFORE STATEMENT when the statement
//! starts, BEFORE ROW as each row is about to be written (its answer replaces the row, or
//! skips it), AFTER ROW queued as each row is written and run once all rows are, then AFTER
//! STATEMENT, as PostgreSQL's after-trigger queue runs them at the end of the statement.
//! Each firing runs in the statement's transaction (the evaluation context gets it), once:
//! a row whose write waits for a lock does not fire again when the write resumes.

use super::ModifyExec;
use crate::eval::EvalCx;
use crate::exec::Row;
use crate::trigger::{TriggerFiring, TriggerOp, fire, fires, replica};
use keel_access::Transaction;
use keel_catalog::TriggerTiming;
use keel_common::PgResult;
use keel_planner::plan::{ModifyKind, ModifyPlan};
use keel_types::Datum;

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

/// Whether any enabled trigger of the table fires for this statement at `timing`/`row`.
pub(super) fn any(plan: &ModifyPlan, timing: TriggerTiming, row: bool, ev: &EvalCx<'_>) -> bool {
    let (op, cols) = (op_of(plan), set_columns(plan));
    let replica = replica(ev);
    plan.table
        .triggers
        .iter()
        .any(|t| fires(t, op, timing, row, &cols, replica))
}

/// Fires the triggers of `timing`/`row` in name order. For BEFORE ROW: the row to write
/// (NEW, or OLD for DELETE) after each trigger had its say, None when one skipped it. For
/// INSTEAD OF ROW: the row the write did (NEW as the trigger answered it, OLD for DELETE),
/// None when a trigger answered NULL.
pub(super) fn run(
    plan: &ModifyPlan,
    timing: TriggerTiming,
    row: bool,
    old: Option<&[Datum]>,
    mut new: Option<Row>,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Row>> {
    let (op, cols) = (op_of(plan), set_columns(plan));
    let mut cur_old = old.map(<[Datum]>::to_vec);
    let replica = replica(ev);
    for t in plan.table.triggers.iter() {
        if !fires(t, op, timing, row, &cols, replica) {
            continue;
        }
        let mut inner = ev.nested(Some(txn), &[]);
        let f = TriggerFiring {
            trigger: t,
            table: &plan.table,
            op,
            old: cur_old.as_deref(),
            new: new.as_deref(),
        };
        let r = fire(&f, &mut inner);
        let carried = inner.carried();
        ev.restore(carried);
        let out = r?;
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
    run(plan, TriggerTiming::Before, true, old, new, txn, ev)
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
            if any(plan, TriggerTiming::Before, false, ev) {
                run(plan, TriggerTiming::Before, false, None, None, txn, ev)?;
            }
        }
        Ok(())
    }

    /// Queues the AFTER ROW triggers of a written row.
    pub(super) fn queue_after_row(&mut self, old: Option<&[Datum]>, new: Option<&[Datum]>) {
        if self.triggers.after_row {
            self.triggers
                .queued
                .push((old.map(<[Datum]>::to_vec), new.map(<[Datum]>::to_vec)));
        }
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
        for (old, new) in std::mem::take(&mut self.triggers.queued) {
            run(
                plan,
                TriggerTiming::After,
                true,
                old.as_deref(),
                new,
                txn,
                ev,
            )?;
        }
        if any(plan, TriggerTiming::After, false, ev) {
            run(plan, TriggerTiming::After, false, None, None, txn, ev)?;
        }
        Ok(())
    }
}
