//! Sort: materializes its input and orders it by per-key memcomparable encodings
//! (keel_types::key), honouring DESC and NULLS FIRST/LAST per key.

use super::discard::discard;
use super::mem::MemCharge;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_common::PgResult;
use keel_planner::plan::SortKey;
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
}

impl<'a> Sort<'a> {
    pub fn new(input: BoxNode<'a>, keys: &'a [SortKey]) -> Self {
        Sort {
            input: Some(input),
            keys,
            rows: Vec::new().into_iter(),
            mem: MemCharge::new("A sort's rows"),
            held: 0,
        }
    }
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
            let mem = &mut self.mem;
            let mut row_bytes = 0;
            let mut held = 0;
            let sorted = (|| {
                while let Some(r) = input.next(ev)? {
                    ev.tick()?;
                    let k = encode(keys, &r, ev)?;
                    let bytes = row_heap_bytes(&r);
                    row_bytes += bytes;
                    // A Vec's spare capacity is not touched, so it is not counted: a slot is.
                    let n = bytes + key_heap_bytes(&k) + size_of::<Keyed>();
                    held += n;
                    mem.add(ev, n)?;
                    all.push((k, r));
                }
                // Stable: equal keys keep their input order.
                super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)
            })();
            if let Err(e) = sorted {
                discard(all.len(), all);
                return Err(e);
            }
            self.held = held;
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
        vec![format!(
            "Sort Method: quicksort  Memory: {}kB",
            self.held.max(self.mem.peak()).div_ceil(1024)
        )]
    }
}

impl Drop for Sort<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.rows);
    }
}
