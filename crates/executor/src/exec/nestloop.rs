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
    /// The outer row being joined (pulled into this one buffer), whether there is one, and
    /// whether `probe` is on its key (false: its key was NULL, nothing can match).
    cur: Row,
    has_cur: bool,
    probing: bool,
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
            cur: Vec::new(),
            has_cur: false,
            probing: false,
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
        let width = self.cur.len().max(1) + self.table.columns.len() + self.extra;
        let mut row = Vec::with_capacity(width);
        Ok(self.next_into(ev, &mut row)?.then_some(row))
    }

    /// Builds each joined row in `out`: the outer row's values, then the probed row decoded
    /// in place after them.
    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        let start = out.len();
        loop {
            if self.has_cur {
                if let Some(probe) = self.probe.as_mut().filter(|_| self.probing) {
                    out.extend_from_slice(&self.cur);
                    let inner = out.len();
                    let mut id = keel_access::RowRef::NONE;
                    while probe.next_into(out, &mut id)? {
                        ev.tick()?;
                        let passes = match (self.inner_filter, self.join_filter) {
                            (Some(f), _) if !f.test(&out[inner..], ev)? => false,
                            (_, Some(f)) => f.test(&out[start..], ev)?,
                            _ => true,
                        };
                        if passes {
                            self.matched = true;
                            return Ok(true);
                        }
                        out.truncate(inner);
                    }
                    out.truncate(start);
                }
                self.has_cur = false;
                if self.left_join && !self.matched {
                    out.append(&mut self.cur);
                    out.extend(std::iter::repeat_n(
                        keel_types::Datum::Null,
                        self.table.columns.len(),
                    ));
                    return Ok(true);
                }
            }
            self.cur.clear();
            if !self.outer.next_into(ev, &mut self.cur)? {
                return Ok(false);
            }
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
            let probing = match key_range_on(self.access, &self.cur, ev)? {
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
            self.has_cur = true;
            self.probing = probing;
        }
    }
}
