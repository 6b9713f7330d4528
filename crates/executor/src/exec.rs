//! The executor: pull-based nodes, one file per operator. Read-only plans run with a shared
//! borrow of the transaction; writes run in [`ModifyExec`], which first collects its input
//! (so scans never overlap writes of the same statement) and then applies rows one at a
//! time, suspending on row locks without losing its place.

mod agg;
pub mod append;
pub mod cursor;
mod discard;
mod distinct;
mod filter;
pub mod instrument;
mod join;
mod limit;
pub mod lockrows;
pub mod mem;
mod modify;
mod nestloop;
mod project;
pub mod rowstore;
mod runs;
mod scan;
mod semijoin;
mod setop;
mod sort;
mod sort_spill;
pub mod subplan;
mod sysview;
pub mod table_func;
mod tempfile;
mod transition;
pub mod tuplestore;
mod values;

pub use modify::{ModifyExec, Step};

use crate::eval::EvalCx;
use instrument::{Instrumentation, Instrumented, Slot};
use keel_access::{Engine, Transaction};
use keel_common::PgResult;
use keel_planner::plan::{Plan, QueryPlan};
use keel_types::Datum;
use std::sync::Arc;

pub type Row = Vec<Datum>;

/// One operator. `next` returns the next row or None at the end.
pub trait Node<'a>: Send {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>>;

    /// The next row's values appended to `out` (true), or false at the end with `out`
    /// unchanged. A consumer that pulls every row into one reused buffer (an aggregate, a
    /// join's build side) then allocates nothing per row where its input writes rows in place:
    /// scans decode into `out`, joins build their joined rows there. The default moves the
    /// row `next` returns.
    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        match self.next(ev)? {
            Some(row) if out.is_empty() => *out = row,
            Some(row) => out.extend(row),
            None => return Ok(false),
        }
        Ok(true)
    }

    /// EXPLAIN ANALYZE's extra lines about how the node ran (`Sort Method: ...`), asked
    /// once the node has returned its last row.
    fn explain_lines(&self) -> Vec<String> {
        Vec::new()
    }

    /// The node above will pull at most `n` rows (PostgreSQL's `ExecSetTupleBound`): a sort
    /// then keeps only the first `n`. Called before the first `next`; nodes that pass rows
    /// through one for one forward it.
    fn set_bound(&mut self, _n: u64) {}

    /// The node above appends `extra` values to each row this node returns (a join adds
    /// its other side's columns): a node that builds its rows may give them that much more
    /// room, so the append does not reallocate and copy the row. Joins forward it.
    fn reserve_output(&mut self, _extra: usize) {}

    /// The node above is an inner hash join on one integer key that reads only rows whose
    /// column `column` holds one of `keys` (its build side's; NULL joins nothing): the node
    /// may drop the others before decoding them. Called before the first `next`. A scan
    /// does (true); other nodes do not (false).
    fn restrict_to_keys(&mut self, _column: usize, _keys: &Arc<dyn keel_access::IntKeys>) -> bool {
        false
    }

    /// After `next` failed with [`lockrows::is_row_wait`]: the row lock to await before
    /// pulling again. Nodes that can sit above a `LockRows` (projection, limit) forward it.
    fn take_row_wait(&mut self) -> Option<keel_access::RowWait> {
        None
    }
}

pub type BoxNode<'a> = Box<dyn Node<'a> + 'a>;

/// Builds the node tree for `plan` (54001 when it is nested deeper than the stack allows).
pub fn build<'a>(
    plan: &'a Plan,
    engine: &'a Engine,
    txn: &'a Transaction,
) -> PgResult<BoxNode<'a>> {
    build_node(plan, engine, txn, None)
}

/// [`build`] with every node wrapped in EXPLAIN ANALYZE's counters.
pub fn build_instrumented<'a>(
    plan: &'a Plan,
    engine: &'a Engine,
    txn: &'a Transaction,
    ins: &Arc<Instrumentation>,
) -> PgResult<BoxNode<'a>> {
    build_node(plan, engine, txn, Some(ins))
}

fn build_node<'a>(
    plan: &'a Plan,
    engine: &'a Engine,
    txn: &'a Transaction,
    ins: Option<&Arc<Instrumentation>>,
) -> PgResult<BoxNode<'a>> {
    keel_common::stack::check()?;
    // The node's number is taken before its inputs are built: preorder, as the planner's
    // EXPLAIN numbers them.
    let id = ins.map(|i| i.take_id());
    let build =
        |p: &'a Plan, engine: &'a Engine, txn: &'a Transaction| build_node(p, engine, txn, ins);
    let node: BoxNode<'a> = match plan {
        Plan::Scan {
            table,
            access,
            filter,
            run,
            ..
        } if ins.is_some() && run.check(filter.as_ref()).is_some() => {
            // Instrumented, the filter runs as its own step so the rows it removes are
            // counted (`Rows Removed by Filter`); the rows that pass are the same.
            let Some(pred) = run.check(filter.as_ref()) else {
                return Err(keel_common::PgError::internal("scan filter vanished"));
            };
            let scan: BoxNode<'a> = Box::new(
                scan::Scan::new(engine, txn, table, access, None)
                    .columns(run.columns.as_ref())
                    .row_ids(run.row_ids),
            );
            let (Some(ins), Some(id)) = (ins, id) else {
                return Err(keel_common::PgError::internal(
                    "instrumentation without a node id",
                ));
            };
            Box::new(filter::Filter {
                input: Box::new(Instrumented {
                    inner: scan,
                    ins: ins.clone(),
                    id,
                    slot: Slot::Input,
                }),
                pred,
            })
        }
        Plan::Scan {
            table,
            access,
            filter,
            run,
            ..
        } => Box::new(
            scan::Scan::new(engine, txn, table, access, run.check(filter.as_ref()))
                .columns(run.columns.as_ref())
                .row_ids(run.row_ids),
        ),
        Plan::Values { rows } => Box::new(values::Values::new(rows)),
        Plan::SystemView(view) => Box::new(sysview::SystemViewScan::new(*view, engine, txn)),
        Plan::NamedRows { name, .. } => Box::new(transition::TransitionScan::new(name)),
        Plan::Function { funcs, ordinality } => {
            Box::new(table_func::FunctionScan::new(funcs, *ordinality))
        }
        Plan::Filter { input, pred } => Box::new(filter::Filter {
            input: build(input, engine, txn)?,
            pred,
        }),
        Plan::Project { input, exprs, srf } => Box::new(project::Project::new(
            build(input, engine, txn)?,
            exprs,
            srf.as_ref(),
        )),
        Plan::Join {
            left,
            right,
            on,
            left_join,
            right_join,
            left_width,
            right_width,
            hash,
            ..
        } => Box::new(join::Join::new(
            build(left, engine, txn)?,
            build(right, engine, txn)?,
            on.as_ref(),
            (*left_join, *right_join),
            (*left_width, *right_width),
            hash.as_ref(),
            scan_columns(right, *right_width),
        )),
        Plan::Agg {
            input,
            group,
            aggs,
            dependent,
        } => Box::new(agg::Agg::new(
            build(input, engine, txn)?,
            group,
            aggs,
            dependent,
        )),
        Plan::Sort { input, keys } => Box::new(sort::Sort::new(build(input, engine, txn)?, keys)),
        Plan::LockRows {
            input,
            table,
            recheck,
            strength,
            wait,
        } => Box::new(lockrows::LockRows::new(
            build(input, engine, txn)?,
            engine,
            txn,
            table,
            recheck.as_ref(),
            (*strength, *wait),
        )),
        Plan::Limit {
            input,
            limit,
            offset,
        } => Box::new(limit::Limit::new(
            build(input, engine, txn)?,
            limit.as_ref(),
            offset.as_ref(),
        )),
        Plan::Append {
            children, prune, ..
        } => {
            let built = match ins {
                Some(_) => children
                    .iter()
                    .map(|c| build(c, engine, txn).map(Some))
                    .collect::<PgResult<Vec<_>>>()?,
                None => Vec::new(),
            };
            Box::new(append::Append::new(
                children,
                prune.as_deref(),
                engine,
                txn,
                built,
            ))
        }
        Plan::SetOp {
            left,
            right,
            kind,
            all,
            types,
        } => Box::new(setop::SetOp::new(
            build(left, engine, txn)?,
            build(right, engine, txn)?,
            *kind,
            *all,
            types,
        )),
        Plan::Distinct { input, types, on } => Box::new(distinct::Distinct::new(
            build(input, engine, txn)?,
            types,
            on,
        )),
        Plan::SemiJoin {
            input,
            inner,
            outer_keys,
            inner_keys,
            anti,
        } => Box::new(semijoin::SemiJoin::new(
            build(input, engine, txn)?,
            build(inner, engine, txn)?,
            (outer_keys, inner_keys),
            *anti,
        )),
        Plan::IndexNestLoop {
            outer,
            table,
            access,
            inner_filter,
            join_filter,
            left_join,
            inner_columns,
            ..
        } => Box::new(nestloop::IndexNestLoop::new(
            build(outer, engine, txn)?,
            engine,
            txn,
            (table, access, inner_columns.as_ref()),
            (inner_filter.as_ref(), join_filter.as_ref()),
            *left_join,
        )),
    };
    Ok(match (ins, id) {
        (Some(ins), Some(id)) => Box::new(Instrumented {
            inner: node,
            ins: ins.clone(),
            id,
            slot: Slot::Output,
        }),
        _ => node,
    })
}

/// The node tree of a query, ready to pull rows from with `ev`, which is pointed at the
/// query's subplans (the plans its expression subqueries run).
pub fn open_query<'a>(
    plan: &'a QueryPlan,
    engine: &'a Engine,
    txn: &'a Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<BoxNode<'a>> {
    ev.subplans = plan.subplans.clone();
    build(&plan.root, engine, txn)
}

/// Runs a query to completion and returns its rows, held whole: while they are collected
/// they count against the statement's memory limit (the charge ends with this call, when the
/// rows pass to the caller).
pub fn run_query(
    plan: &QueryPlan,
    engine: &Engine,
    txn: &Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Vec<Row>> {
    let mut root = open_query(plan, engine, txn, ev)?;
    let mut out = Vec::new();
    let mut mem = mem::MemCharge::new("The query's result");
    let pulled = (|| {
        while let Some(r) = root.next(ev)? {
            ev.tick()?;
            mem.add(
                ev,
                keel_types::datum::row_heap_bytes(&r) + std::mem::size_of::<Row>(),
            )?;
            out.push(r);
        }
        Ok(())
    })();
    match pulled {
        Ok(()) => Ok(out),
        Err(e) => {
            discard::discard(out.len(), out);
            Err(e)
        }
    }
}

/// The memcomparable key of `values` (for hashing, grouping and sorting).
pub fn key_of(values: &[Datum], types: &[keel_types::TypeId], out: &mut Vec<u8>) {
    out.clear();
    keel_types::key::encode_key(values, types, out);
}

/// The columns a scan plan of rows `width` wide reads (None: all, or not a plain scan): the
/// others come back NULL in every row it returns.
fn scan_columns(plan: &Plan, width: usize) -> Option<Vec<usize>> {
    let Plan::Scan { run, .. } = plan else {
        return None;
    };
    if run.row_ids {
        return None;
    }
    let mask = run.columns.as_ref().filter(|m| m.len() == width)?;
    Some((0..mask.len()).filter(|&c| mask[c]).collect())
}
