//! A write to a view (see keel_analyzer::bind::view): each row goes to the view's INSTEAD
//! OF row triggers instead of a heap, as PostgreSQL's ModifyTable calls
//! ExecIR{Insert,Update,Delete}Triggers for a view target. A row counts (and is RETURNING's)
//! when a trigger answers it: INSERT and UPDATE return the row the trigger answered, DELETE
//! the view's row. Statement triggers of the view fire around it as for a table; a view has
//! no BEFORE or AFTER row triggers, no constraints and nothing to wait for.

use super::triggers;
use super::{ModifyExec, Step};
use crate::eval::{Eval, EvalCx};
use crate::exec::Row;
use keel_access::{Engine, Transaction};
use keel_catalog::TriggerTiming;
use keel_common::PgResult;
use keel_planner::plan::{ModifyKind, ModifyPlan};

impl ModifyExec {
    /// Runs the whole write to a view.
    pub(super) fn step_instead_of(
        &mut self,
        plan: &ModifyPlan,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Step> {
        if !self.collected {
            self.collect(plan, engine, txn, ev)?;
        }
        while let Some((_, row)) = self.work.pop()? {
            ev.tick()?;
            let (old, new) = match &plan.kind {
                ModifyKind::Insert { .. } => (None, Some(row)),
                ModifyKind::Update { set, .. } => {
                    let new = Self::updated(&row, set, txn, ev)?;
                    (Some(row), Some(new))
                }
                ModifyKind::Delete { .. } => (Some(row), None),
            };
            let answer = triggers::run(
                plan,
                (TriggerTiming::InsteadOf, true),
                old.as_deref(),
                new,
                &Default::default(),
                txn,
                ev,
            )?;
            if let Some(r) = answer {
                self.emit(plan, &r, ev)?;
            }
        }
        self.after_statement(plan, txn, ev)?;
        Ok(Step::Done)
    }

    /// UPDATE's NEW for a row: the row with the SET expressions (over the old row)
    /// assigned.
    pub(super) fn updated(
        old: &Row,
        set: &[(usize, keel_analyzer::expr::Expr)],
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Row> {
        let mut new = old.clone();
        let mut inner = ev.nested(Some(txn), &[]);
        let r: PgResult<()> = set.iter().try_for_each(|(c, e)| {
            new[*c] = e.eval(old, &mut inner)?;
            Ok(())
        });
        let carried = inner.carried();
        ev.restore(carried);
        r.map(|()| new)
    }
}
