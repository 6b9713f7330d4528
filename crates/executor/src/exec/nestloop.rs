//! Index nested loop: each outer row's key values probe the inner table's index. As a LEFT
//! JOIN, an outer row that no probed row joins (after both filters) is emitted once,
//! NULL-extended, when its probe ends.

use super::scan::key_range_on;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_access::{Engine, IndexProbe, Transaction};
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;
use keel_common::PgResult;
use keel_planner::plan::Access;
use std::sync::Arc;

pub struct IndexNestLoop<'a> {
    outer: BoxNode<'a>,
    engine: &'a Engine,
    txn: &'a Transaction,
    table: &'a TableDef,
    access: &'a Access,
    /// The inner table's columns read above (None: all).
    columns: Option<&'a Arc<[bool]>>,
    inner_filter: Option<&'a Expr>,
    join_filter: Option<&'a Expr>,
    /// The outer row being joined, and whether `probe` is on its key (false: its key was
    /// NULL, nothing can match).
    cur: Option<(Row, bool)>,
    /// The scan of the inner index, restarted on each outer row's key (made at the first).
    probe: Option<Box<dyn IndexProbe + 'a>>,
    left_join: bool,
    /// The current outer row has joined a probed row.
    matched: bool,
    /// Entries an index-only probe looked up in the heap, over all probes.
    heap_fetches: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Room each joined row leaves for the values the node above appends.
    extra: usize,
}

impl<'a> IndexNestLoop<'a> {
    pub fn new(
        outer: BoxNode<'a>,
        engine: &'a Engine,
        txn: &'a Transaction,
        (table, access, columns): (&'a TableDef, &'a Access, Option<&'a Arc<[bool]>>),
        filters: (Option<&'a Expr>, Option<&'a Expr>),
        left_join: bool,
    ) -> Self {
        let mut outer = outer;
        outer.reserve_output(table.columns.len());
        IndexNestLoop {
            outer,
            engine,
            txn,
            table,
            access,
            columns,
            inner_filter: filters.0,
            join_filter: filters.1,
            heap_fetches: Default::default(),
            cur: None,
            probe: None,
            left_join,
            matched: false,
            extra: 0,
        }
    }
}

impl<'a> Node<'a> for IndexNestLoop<'a> {
    fn reserve_output(&mut self, extra: usize) {
        self.extra = extra;
        self.outer.reserve_output(self.table.columns.len() + extra);
    }

    fn explain_lines(&self) -> Vec<String> {
        match self.access {
            Access::Index {
                index_only: true, ..
            } => vec![format!(
                "{}Heap Fetches: {}",
                keel_planner::explain::INNER_LINE,
                self.heap_fetches.load(std::sync::atomic::Ordering::Relaxed)
            )],
            _ => Vec::new(),
        }
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        loop {
            if let Some((outer, probing)) = &mut self.cur {
                let probe = self.probe.as_mut().filter(|_| *probing);
                for item in probe.into_iter().flatten() {
                    let (_, inner) = item?;
                    ev.tick()?;
                    if let Some(f) = self.inner_filter
                        && !f.test(&inner, ev)?
                    {
                        continue;
                    }
                    let mut joined = Vec::with_capacity(outer.len() + inner.len() + self.extra);
                    joined.extend_from_slice(outer);
                    joined.extend(inner);
                    if let Some(f) = self.join_filter
                        && !f.test(&joined, ev)?
                    {
                        continue;
                    }
                    self.matched = true;
                    return Ok(Some(joined));
                }
                if let Some((mut outer, _)) = self.cur.take()
                    && self.left_join
                    && !self.matched
                {
                    outer.extend(std::iter::repeat_n(
                        keel_types::Datum::Null,
                        self.table.columns.len(),
                    ));
                    return Ok(Some(outer));
                }
            }
            let Some(outer) = self.outer.next(ev)? else {
                return Ok(None);
            };
            ev.tick()?;
            let Access::Index {
                index, index_only, ..
            } = self.access
            else {
                return Err(keel_common::PgError::internal(
                    "index nested loop without an index",
                ));
            };
            // A NULL key matches nothing.
            let probing = match key_range_on(self.access, &outer, ev)? {
                None => false,
                Some(range) => {
                    match &mut self.probe {
                        Some(p) => p.rescan(range)?,
                        None => {
                            let options = keel_access::IndexScanOptions {
                                backward: false,
                                index_only: index_only.then(|| self.heap_fetches.clone()),
                                columns: self.columns.cloned(),
                                prefilter: None,
                            };
                            self.probe = Some(
                                (self.engine)
                                    .index_probe(self.txn, self.table, index, range, options)?,
                            );
                        }
                    }
                    true
                }
            };
            self.matched = false;
            self.cur = Some((outer, probing));
        }
    }
}
