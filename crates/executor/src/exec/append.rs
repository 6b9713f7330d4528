//! Append: a partitioned table's rows, one partition's scan after another. With run-time
//! pruning the children to run are chosen when the first row is asked for, from the
//! statement's parameters; a child is built only when it is reached, so a statement that
//! reads one partition of thousands builds one scan.

use super::{BoxNode, Row, build};
use crate::eval::{Eval, EvalCx};
use keel_access::{Engine, Transaction};
use keel_common::PgResult;
use keel_planner::plan::{Plan, PruneExpr, RunPrune};

pub(super) struct Append<'a> {
    plans: &'a [Plan],
    engine: &'a Engine,
    txn: &'a Transaction,
    /// Children built ahead (EXPLAIN ANALYZE numbers every node when the tree is built).
    built: Vec<Option<BoxNode<'a>>>,
    prune: Option<&'a RunPrune>,
    /// The children that run, in order; decided at the first row.
    order: Option<Vec<usize>>,
    pos: usize,
    cur: Option<BoxNode<'a>>,
}

impl<'a> Append<'a> {
    pub(super) fn new(
        plans: &'a [Plan],
        prune: Option<&'a RunPrune>,
        engine: &'a Engine,
        txn: &'a Transaction,
        built: Vec<Option<BoxNode<'a>>>,
    ) -> Append<'a> {
        Append {
            plans,
            engine,
            txn,
            built,
            prune,
            order: None,
            pos: 0,
            cur: None,
        }
    }

    /// The children whose partitions the pruning conditions keep.
    fn chosen(&self, ev: &mut EvalCx<'_>) -> PgResult<Vec<usize>> {
        match self.prune {
            Some(p) => run_pruned(p, ev),
            None => Ok((0..self.plans.len()).collect()),
        }
    }
}

/// The children of an Append that run under its run-time pruning `p`, in order: those of the
/// partitions its conditions, evaluated now, keep (EXPLAIN shows the same choice).
pub fn run_pruned(p: &RunPrune, ev: &mut EvalCx<'_>) -> PgResult<Vec<usize>> {
    let mut kept = match p.conds.is_empty() {
        true => None,
        false => Some(partitions_kept(p, &p.conds, ev)?),
    };
    for or in &p.ors {
        let mut union = Vec::new();
        for arm in or {
            union.extend(partitions_kept(p, arm, ev)?);
        }
        kept = Some(keel_planner::partition::and_or(kept, union));
    }
    let all = || (0..p.child_of.len()).collect();
    Ok(kept
        .unwrap_or_else(all)
        .iter()
        .filter_map(|&i| p.child_of.get(i).copied().flatten())
        .collect())
}

/// The partitions of `p.desc` (ascending) that AND-ed conditions `conds` keep.
fn partitions_kept(p: &RunPrune, conds: &[PruneExpr], ev: &mut EvalCx<'_>) -> PgResult<Vec<usize>> {
    let mut values = Vec::with_capacity(conds.len());
    for c in conds {
        let v = c.value.eval(&[], ev)?;
        // A comparison with NULL holds for no row.
        if v.is_null() {
            return Ok(Vec::new());
        }
        values.push(keel_planner::partition::cond(c.op, c.col, v));
    }
    let key = p.desc.key();
    Ok(p.desc
        .prune(&values, keel_planner::partition::row_hash(key))
        .partitions)
}

impl<'a> super::Node<'a> for Append<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if self.order.is_none() {
            self.order = Some(self.chosen(ev)?);
        }
        loop {
            if self.cur.is_none() {
                let order = self.order.as_deref().unwrap_or_default();
                let Some(&i) = order.get(self.pos) else {
                    return Ok(None);
                };
                self.pos += 1;
                self.cur = Some(match self.built.get_mut(i).and_then(Option::take) {
                    Some(n) => n,
                    None => build(&self.plans[i], self.engine, self.txn)?,
                });
            }
            if let Some(cur) = self.cur.as_mut() {
                match cur.next(ev)? {
                    Some(r) => return Ok(Some(r)),
                    None => self.cur = None,
                }
            }
        }
    }
}
