//! Sort: materializes its input and orders it by per-key memcomparable encodings
//! (keel_types::key), honouring DESC and NULLS FIRST/LAST per key.
//!
//! Under a LIMIT (`bound`: limit + offset rows are all that will be read) the sort keeps only
//! that many rows: whenever its buffer holds twice the bound it sorts the buffer and drops all
//! but the first `bound` rows (PostgreSQL's bounded "top-N heapsort"). The sort is stable and
//! the rows kept came before the rows added after them, so the result is the same rows in the
//! same order as a full sort's first `bound`, at O(n log bound) time and O(bound) memory.

use super::discard::discard;
use super::mem::MemCharge;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_planner::plan::SortKey;
use keel_types::Datum;
use keel_types::datum::{alloc_size, row_heap_bytes};
use std::cmp::Ordering;
use std::mem::size_of;

pub struct Sort<'a> {
    input: Option<BoxNode<'a>>,
    keys: &'a [SortKey],
    rows: std::vec::IntoIter<Row>,
    /// The rows and keys held; rows are given back as they are returned.
    mem: MemCharge,
    /// Bytes of rows and keys held once the input was read (EXPLAIN ANALYZE).
    held: usize,
    /// The LIMIT and OFFSET above the sort (see the module doc).
    bound: Option<(&'a Expr, Option<&'a Expr>)>,
    /// Whether the bound dropped rows (EXPLAIN ANALYZE's `top-N heapsort`).
    bounded: bool,
}

impl<'a> Sort<'a> {
    pub fn new(input: BoxNode<'a>, keys: &'a [SortKey]) -> Self {
        Sort {
            input: Some(input),
            keys,
            rows: Vec::new().into_iter(),
            mem: MemCharge::new("A sort's rows"),
            held: 0,
            bound: None,
            bounded: false,
        }
    }

    /// A sort whose reader stops after `limit` rows past `offset` (both evaluated without a
    /// row when the sort starts: constants or parameters, as LIMIT's are).
    pub fn bounded(
        input: BoxNode<'a>,
        keys: &'a [SortKey],
        limit: &'a Expr,
        offset: Option<&'a Expr>,
    ) -> Self {
        let mut s = Sort::new(input, keys);
        s.bound = Some((limit, offset));
        s
    }

    /// The number of rows the reader takes, if known and valid (an invalid LIMIT or OFFSET
    /// is the Limit node's error to raise: it evaluates them before it reads a row).
    fn bound_rows(&self, ev: &mut EvalCx<'_>) -> Option<usize> {
        let (limit, offset) = self.bound?;
        let count = |e: &Expr, ev: &mut EvalCx<'_>| match e.eval(&[], ev) {
            Ok(Datum::Int8(n)) if n >= 0 => Some(n as u64),
            _ => None,
        };
        let lim = count(limit, ev)?;
        let off = match offset {
            Some(o) => count(o, ev)?,
            None => 0,
        };
        usize::try_from(lim.saturating_add(off)).ok()
    }
}

/// Heap bytes charged for one buffered row with its keys.
fn keyed_bytes(k: &Keyed) -> (usize, usize) {
    let row = row_heap_bytes(&k.1);
    (row, row + key_heap_bytes(&k.0) + size_of::<Keyed>())
}

type Keyed = (Vec<(bool, Vec<u8>)>, Row);

/// Heap bytes of one row's sort-key encodings (see [`encode`]).
pub(crate) fn key_heap_bytes(k: &Vec<(bool, Vec<u8>)>) -> usize {
    let mut n = alloc_size(k.capacity() * size_of::<(bool, Vec<u8>)>());
    for (_, b) in k {
        n += alloc_size(b.capacity());
    }
    n
}

/// The per-key encodings of `row` under `keys` (also used for aggregate ORDER BY).
pub(crate) fn encode(
    keys: &[SortKey],
    row: &[keel_types::Datum],
    ev: &mut EvalCx<'_>,
) -> PgResult<Vec<(bool, Vec<u8>)>> {
    let mut k = Vec::with_capacity(keys.len());
    for key in keys {
        let v = key.expr.eval(row, ev)?;
        let mut b = Vec::new();
        let null = v.is_null();
        if !null {
            keel_types::key::encode_key(std::slice::from_ref(&v), &[key.expr.ty()], &mut b);
        }
        k.push((null, b));
    }
    Ok(k)
}

/// Orders two encodings from [`encode`]: DESC reverses the bytes' order; NULLS FIRST/LAST is
/// decided before the bytes are compared.
pub(crate) fn compare(keys: &[SortKey], a: &[(bool, Vec<u8>)], b: &[(bool, Vec<u8>)]) -> Ordering {
    for (i, key) in keys.iter().enumerate() {
        let (an, ab) = &a[i];
        let (bn, bb) = &b[i];
        let o = match (an, bn) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if key.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if key.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let o = ab.cmp(bb);
                if key.desc { o.reverse() } else { o }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl<'a> Node<'a> for Sort<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut all: Vec<Keyed> = Vec::new();
            let keys = self.keys;
            let bound = self.bound_rows(ev);
            let mem = &mut self.mem;
            let mut row_bytes = 0;
            let mut held = 0;
            let mut seen = 0usize;
            let sorted = (|| {
                while let Some(r) = input.next(ev)? {
                    ev.tick()?;
                    seen += 1;
                    let k = (encode(keys, &r, ev)?, r);
                    let (bytes, n) = keyed_bytes(&k);
                    row_bytes += bytes;
                    // A Vec's spare capacity is not touched, so it is not counted: a slot is.
                    held += n;
                    mem.add(ev, n)?;
                    all.push(k);
                    if let Some(b) = bound
                        && all.len() >= b.saturating_mul(2).max(64)
                    {
                        super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)?;
                        for gone in all.drain(b..) {
                            let (bytes, n) = keyed_bytes(&gone);
                            row_bytes -= bytes;
                            held -= n;
                            mem.sub(n);
                        }
                    }
                }
                // Stable: equal keys keep their input order.
                super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)?;
                if let Some(b) = bound
                    && all.len() > b
                {
                    for gone in all.drain(b..) {
                        let (bytes, n) = keyed_bytes(&gone);
                        row_bytes -= bytes;
                        held -= n;
                        mem.sub(n);
                    }
                }
                Ok(())
            })();
            if let Err(e) = sorted {
                discard(all.len(), all);
                return Err(e);
            }
            self.held = held;
            // PostgreSQL reports a top-N heapsort once the input passed twice the bound.
            self.bounded = bound.is_some_and(|b| seen > b.saturating_mul(2));
            let rows = all.into_iter().map(|(_, r)| r).collect::<Vec<_>>();
            // The keys are gone; what stays is the rows.
            self.mem.keep_rows(&rows, row_bytes);
            self.rows = rows.into_iter();
        }
        Ok(self.mem.row_out(self.rows.next()))
    }

    /// Keel sorts in memory (the statement's memory limit bounds it): PostgreSQL's name for
    /// an in-memory sort of all rows is quicksort.
    fn explain_lines(&self) -> Vec<String> {
        let method = if self.bounded {
            "top-N heapsort"
        } else {
            "quicksort"
        };
        vec![format!(
            "Sort Method: {method}  Memory: {}kB",
            self.held.max(self.mem.peak()).div_ceil(1024)
        )]
    }
}

impl Drop for Sort<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.rows);
    }
}
