//! Sort: materializes its input and orders it by per-key memcomparable encodings
//! (keel_types::key), honouring DESC and NULLS FIRST/LAST per key.
//!
//! Bounded (a LIMIT above asked for at most `n` rows, [`Node::set_bound`]), it holds at most
//! `2n` rows: whenever that many are held it sorts them and drops all but the first `n`, so a
//! `ORDER BY ... LIMIT 10` over a million rows keeps 20 rows, not a million, in
//! O(rows · log n) time. As PostgreSQL's tuplesort, it switches to that mode only once more
//! than `2n` rows arrived, and EXPLAIN ANALYZE then reports `top-N heapsort`.
//!
//! Unbounded, it holds rows up to work_mem: whenever the rows held pass it, they (with keys) are
//! sorted and written to a temporary file as a sorted run, and their memory is given back
//! ([`super::sort_spill`]). If any run was written, the last rows become a run too once the
//! input ends, and the runs are merged as rows are pulled; EXPLAIN ANALYZE then reports
//! `external merge  Disk: NkB` (the bytes written). A bounded sort never spills: it holds
//! `2n` rows at most.

use super::discard::discard;
use super::mem::MemCharge;
use super::sort_spill::{Merge, SpillFile};
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
    /// At most this many rows will be pulled (a LIMIT above).
    bound: Option<usize>,
    /// The bound cut rows (EXPLAIN ANALYZE: `top-N heapsort`).
    bounded: bool,
    /// When the rows passed work_mem: the merge of the runs written, which returns the rows.
    merge: Option<Merge<'a>>,
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
            merge: None,
        }
    }
}

/// One row's sort-key encodings ([`encode`]).
pub(super) type Key = Vec<(bool, Vec<u8>)>;

/// A row with its sort key.
pub(super) type Keyed = (Key, Row);

/// Heap bytes of one row's sort-key encodings (see [`encode`]).
pub(crate) fn key_heap_bytes(k: &Key) -> usize {
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
) -> PgResult<Key> {
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

/// Drops the rows after the first `keep`, giving back their memory; returns the heap bytes of
/// the rows dropped and the bytes (rows, keys, slots) given back.
fn cut(all: &mut Vec<Keyed>, keep: usize, mem: &mut MemCharge) -> (usize, usize) {
    let (mut rows, mut total) = (0, 0);
    for (k, r) in all.drain(keep.min(all.len())..) {
        let bytes = row_heap_bytes(&r);
        rows += bytes;
        let n = bytes + key_heap_bytes(&k) + size_of::<Keyed>();
        total += n;
        mem.sub(n);
    }
    (rows, total)
}

impl<'a> Node<'a> for Sort<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut all: Vec<Keyed> = Vec::new();
            let keys = self.keys;
            let mem = &mut self.mem;
            let mut row_bytes = 0;
            let mut held = 0;
            let mut peak = 0;
            let bound = self.bound;
            let mut bounded = false;
            let work_mem = ev.settings.work_mem_bytes();
            let mut spill: Option<SpillFile> = None;
            let sorted = (|| {
                // Once cut: the key of the last row kept. A row that does not sort before it
                // can never be among the first `bound` (equal keys keep input order).
                let mut worst: Option<Key> = None;
                while let Some(r) = input.next(ev)? {
                    ev.tick()?;
                    let k = encode(keys, &r, ev)?;
                    if worst
                        .as_ref()
                        .is_some_and(|w| compare(keys, &k, w) != Ordering::Less)
                    {
                        continue;
                    }
                    let bytes = row_heap_bytes(&r);
                    row_bytes += bytes;
                    // A Vec's spare capacity is not touched, so it is not counted: a slot is.
                    let n = bytes + key_heap_bytes(&k) + size_of::<Keyed>();
                    held += n;
                    peak = peak.max(held);
                    mem.add(ev, n)?;
                    all.push((k, r));
                    if let Some(b) = bound {
                        if all.len() > b.saturating_mul(2) {
                            // Stable, so among equal keys the earliest rows stay.
                            super::runs::sort_checked(
                                &mut all,
                                |a, b| compare(keys, &a.0, &b.0),
                                ev,
                            )?;
                            let (r, h) = cut(&mut all, b, mem);
                            row_bytes -= r;
                            held -= h;
                            worst = all.last().map(|(k, _)| k.clone());
                            bounded = true;
                        }
                    } else if row_bytes + all.len() * size_of::<Keyed>() > work_mem {
                        // Past work_mem: what is held becomes a sorted run on disk. work_mem
                        // bounds the rows and their slots, as PostgreSQL's bounds its tuples
                        // and SortTuples; the key encodings, keel's own derived copy of the
                        // sort columns (up to as large again), are charged to the statement
                        // but not weighed here, so a sort spills when PostgreSQL's would.
                        super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)?;
                        let file = match &mut spill {
                            Some(f) => f,
                            None => spill.insert(SpillFile::create(&ev.engine.temp_dir())?),
                        };
                        file.write_run(&mut all, ev)?;
                        mem.sub(held);
                        (held, row_bytes) = (0, 0);
                    }
                }
                // Stable: equal keys keep their input order.
                super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)?;
                if let Some(b) = bound {
                    row_bytes -= cut(&mut all, b, mem).0;
                }
                if let Some(file) = &mut spill
                    && !all.is_empty()
                {
                    file.write_run(&mut all, ev)?;
                    mem.sub(held);
                    row_bytes = 0;
                }
                Ok(())
            })();
            if let Err(e) = sorted {
                discard(all.len(), all);
                return Err(e);
            }
            self.bounded = bounded;
            self.held = peak;
            if let Some(file) = spill {
                drop(input);
                self.merge = Some(file.into_merge(keys, work_mem, ev)?);
            }
            let rows = all.into_iter().map(|(_, r)| r).collect::<Vec<_>>();
            // The keys are gone; what stays is the rows.
            self.mem.keep_rows(&rows, row_bytes);
            self.rows = rows.into_iter();
        }
        if let Some(m) = &mut self.merge {
            return Ok(m.pop(ev)?.map(|(_, row)| row));
        }
        Ok(self.mem.row_out(self.rows.next()))
    }

    /// PostgreSQL's names: an in-memory sort of all rows is a quicksort (its figure the peak
    /// memory held), one that wrote runs an external merge (its figure the bytes written).
    fn explain_lines(&self) -> Vec<String> {
        if let Some(bytes) = self.merge.as_ref().and_then(Merge::bytes) {
            return vec![format!(
                "Sort Method: external merge  Disk: {}kB",
                bytes.div_ceil(1024)
            )];
        }
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

    fn set_bound(&mut self, n: u64) {
        self.bound = Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
}

impl Drop for Sort<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.rows);
    }
}
