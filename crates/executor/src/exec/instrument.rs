//! EXPLAIN ANALYZE's instrumentation: a wrapper around each operator that counts the rows it
//! returns, whether it ran, and (with TIMING) the time spent inside it, first row and total.
//!
//! Nodes are numbered in the planner's preorder ([`keel_planner::explain::node_ids`]'s
//! order): a node takes its number before its inputs are built, inputs in field order. The
//! counters are atomics behind an `Arc` so the wrapped nodes stay `Send` and the session reads
//! them after the statement ran.

use super::{BoxNode, Node, Row};
use crate::eval::EvalCx;
use keel_common::PgResult;
use keel_planner::explain::{BufferCounts, NodeActual};
use keel_storage::usage::{self, BufferUsage};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// The counters of one plan node.
#[derive(Default)]
pub struct Counters {
    started: AtomicBool,
    rows: AtomicU64,
    /// Rows the node's input returned before its own filter (scans whose filter runs as a
    /// separate step when instrumented): `Rows Removed by Filter` is the difference.
    input_rows: AtomicU64,
    first_ns: AtomicU64,
    total_ns: AtomicU64,
    /// The node's own lines (`Sort Method`), taken when it returned its last row.
    lines: std::sync::Mutex<Vec<String>>,
    /// Shared-buffer pages and temporary-file blocks touched inside the node's calls (its
    /// inputs' included, as PostgreSQL counts them), from this thread's counters read around
    /// each call (`keel_storage::usage`): hit, read, dirtied, written, temp read, temp
    /// written. Only the statement's thread writes them (a load and a store, no RMW).
    buffers: [AtomicU64; 6],
    /// Whether the buffers were measured for this node.
    buffers_seen: AtomicBool,
}

impl Counters {
    fn add_buffers(&self, pages: &BufferUsage) {
        self.buffers_seen.store(true, Relaxed);
        let add = |c: &AtomicU64, n: u64| {
            if n != 0 {
                c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
            }
        };
        add(&self.buffers[0], pages.hit);
        add(&self.buffers[1], pages.read);
        add(&self.buffers[2], pages.dirtied);
        add(&self.buffers[3], pages.written);
        add(&self.buffers[4], pages.temp_read);
        add(&self.buffers[5], pages.temp_written);
    }
}

/// The counters of every node of one statement's plan.
pub struct Instrumentation {
    nodes: Vec<Counters>,
    next: AtomicU64,
    timing: bool,
}

impl Instrumentation {
    /// Counters for a plan of `nodes` nodes (`keel_planner::explain::count_nodes`).
    pub fn new(nodes: usize, timing: bool) -> Arc<Instrumentation> {
        Arc::new(Instrumentation {
            nodes: (0..nodes).map(|_| Counters::default()).collect(),
            next: AtomicU64::new(0),
            timing,
        })
    }

    /// The next node number in build order.
    pub(super) fn take_id(&self) -> usize {
        self.next.fetch_add(1, Relaxed) as usize
    }

    /// What node `id` did, or None when it never ran (or the plan has no such node).
    pub fn actual(&self, id: usize) -> Option<NodeActual> {
        let c = self.nodes.get(id)?;
        if !c.started.load(Relaxed) {
            return None;
        }
        let rows = c.rows.load(Relaxed);
        let input = c.input_rows.load(Relaxed);
        Some(NodeActual {
            rows,
            loops: 1,
            first_ms: c.first_ns.load(Relaxed) as f64 / 1e6,
            total_ms: c.total_ns.load(Relaxed) as f64 / 1e6,
            removed_by_filter: input.saturating_sub(rows),
            lines: c.lines.lock().map(|l| l.clone()).unwrap_or_default(),
            buffers: c.buffers_seen.load(Relaxed).then(|| BufferCounts {
                hit: c.buffers[0].load(Relaxed),
                read: c.buffers[1].load(Relaxed),
                dirtied: c.buffers[2].load(Relaxed),
                written: c.buffers[3].load(Relaxed),
                temp_read: c.buffers[4].load(Relaxed),
                temp_written: c.buffers[5].load(Relaxed),
            }),
        })
    }

    /// Adds `pages` to node `id`'s buffer counts.
    pub fn add_buffers(&self, id: usize, pages: BufferUsage) {
        if let Some(c) = self.nodes.get(id) {
            c.add_buffers(&pages);
        }
    }

    /// Records `rows` input rows for node `id` (a scan counted outside a wrapper).
    pub fn add_input_rows(&self, id: usize, rows: u64) {
        if let Some(c) = self.nodes.get(id) {
            c.input_rows.fetch_add(rows, Relaxed);
        }
    }

    /// Records the time node `id` took to its first row and in total (a node timed outside
    /// a wrapper: a write, or the scan collecting its rows).
    pub fn set_time(&self, id: usize, first: std::time::Duration, total: std::time::Duration) {
        if let Some(c) = self.nodes.get(id)
            && self.timing
        {
            c.first_ns.store(first.as_nanos() as u64, Relaxed);
            c.total_ns.store(total.as_nanos() as u64, Relaxed);
        }
    }

    /// Records `rows` output rows for node `id` and marks it as run.
    pub fn add_rows(&self, id: usize, rows: u64) {
        if let Some(c) = self.nodes.get(id) {
            c.started.store(true, Relaxed);
            c.rows.fetch_add(rows, Relaxed);
        }
    }
}

/// Which counter of its node a wrapper feeds.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    /// The node's own output.
    Output,
    /// The rows entering the node's filter.
    Input,
}

/// Takes the node's own lines when the tree is dropped after the run (a node above may stop
/// pulling before this one ends, as a Limit does).
impl Drop for Instrumented<'_> {
    fn drop(&mut self) {
        if let (Slot::Output, Some(c)) = (self.slot, self.ins.nodes.get(self.id))
            && c.started.load(Relaxed)
            && let Ok(mut l) = c.lines.lock()
        {
            *l = self.inner.explain_lines();
        }
    }
}

/// Counts what `inner` returns into node `id`'s counters.
pub(super) struct Instrumented<'a> {
    pub inner: BoxNode<'a>,
    pub ins: Arc<Instrumentation>,
    pub id: usize,
    pub slot: Slot,
}

impl<'a> Node<'a> for Instrumented<'a> {
    fn explain_lines(&self) -> Vec<String> {
        self.inner.explain_lines()
    }

    fn take_row_wait(&mut self) -> Option<keel_access::RowWait> {
        self.inner.take_row_wait()
    }

    fn set_bound(&mut self, n: u64) {
        self.inner.set_bound(n)
    }

    fn reserve_output(&mut self, extra: usize) {
        self.inner.reserve_output(extra)
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let mut r = None;
        self.counted(ev, |inner, ev| {
            r = inner.next(ev)?;
            Ok(r.is_some())
        })?;
        Ok(r)
    }

    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        self.counted(ev, |inner, ev| inner.next_into(ev, out))
    }
}

impl<'a> Instrumented<'a> {
    /// Runs `pull` (which says whether it got a row) on the inner node, counting its time,
    /// pages and row into the node's counters.
    fn counted(
        &mut self,
        ev: &mut EvalCx<'_>,
        pull: impl FnOnce(&mut BoxNode<'a>, &mut EvalCx<'_>) -> PgResult<bool>,
    ) -> PgResult<bool> {
        let Some(c) = self.ins.nodes.get(self.id) else {
            return pull(&mut self.inner, ev);
        };
        let output = matches!(self.slot, Slot::Output);
        let timing = self.ins.timing && output;
        let start = timing.then(Instant::now);
        // The call runs on this thread from start to end: the counters' difference is the
        // node's (and its inputs') pages.
        let pages = output.then(usage::current);
        let got = pull(&mut self.inner, ev)?;
        if let Some(before) = pages {
            c.add_buffers(&(usage::current() - before));
        }
        match self.slot {
            Slot::Output => {
                c.started.store(true, Relaxed);
                if let Some(s) = start {
                    let ns = s.elapsed().as_nanos() as u64;
                    let total = c.total_ns.fetch_add(ns, Relaxed) + ns;
                    // Until the first row (or the end, for a node without rows) the time
                    // so far is the startup time.
                    if c.rows.load(Relaxed) == 0 {
                        c.first_ns.store(total, Relaxed);
                    }
                }
                if got {
                    c.rows.fetch_add(1, Relaxed);
                }
            }
            Slot::Input => {
                if got {
                    c.input_rows.fetch_add(1, Relaxed);
                }
            }
        }
        Ok(got)
    }
}
