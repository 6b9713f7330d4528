//! Statement memory: what a statement's operators hold, against the statement's limit.
//!
//! Every operator that accumulates rows or state (sort buffers, hash-aggregate groups and
//! aggregate states, DISTINCT and set-operation hash sets, hash-join and nested-loop inner
//! rows, subquery results, RETURNING rows, a materialized result) holds a [`MemCharge`] and
//! adds the heap bytes it keeps (`keel_types::datum::alloc_size` estimates: what the allocator
//! really hands out). The charges of one statement add up in its [`StatementMem`]; one that
//! would pass the limit fails with 53200 `out of memory` naming what was being built, instead
//! of growing until the operating system kills the server. A charge is given back when its
//! operator drops its state (and, where rows flow on to the next operator, as they leave),
//! so a correlated subquery that sorts once per outer row does not add up across rows.
//!
//! The limit is `work_mem × statement_mem_multiplier` (keel's setting, see keel-common's
//! settings), read when the statement starts. Cost on a per-row path: one add and one compare
//! on the operator's own counter and one on the statement's (no atomic read-modify-write: a
//! statement runs on one thread at a time, so a load and a store suffice).

use super::Row;
use crate::eval::EvalCx;
use keel_common::{PgError, PgResult, sqlstate};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// One session's statement memory: bytes its current statement holds, and the limit.
#[derive(Debug)]
pub struct StatementMem {
    used: AtomicUsize,
    limit: AtomicUsize,
}

impl StatementMem {
    pub fn new(limit: usize) -> Arc<StatementMem> {
        Arc::new(StatementMem {
            used: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
        })
    }

    /// For contexts that run no user query (DDL validation, tests): no limit.
    pub fn unlimited() -> &'static Arc<StatementMem> {
        static UNLIMITED: std::sync::OnceLock<Arc<StatementMem>> = std::sync::OnceLock::new();
        UNLIMITED.get_or_init(|| StatementMem::new(usize::MAX))
    }

    /// The limit for the statement about to start (work_mem × statement_mem_multiplier).
    pub fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Relaxed);
    }

    pub fn limit(&self) -> usize {
        self.limit.load(Relaxed)
    }

    /// Bytes held now by the session's operators.
    pub fn used(&self) -> usize {
        self.used.load(Relaxed)
    }

    #[inline]
    fn charge(&self, bytes: usize, what: &'static str) -> PgResult<()> {
        let used = self.used.load(Relaxed).saturating_add(bytes);
        self.used.store(used, Relaxed);
        if used > self.limit.load(Relaxed) {
            return Err(out_of_memory(what, self.limit.load(Relaxed)));
        }
        Ok(())
    }

    #[inline]
    fn release(&self, bytes: usize) {
        let used = self.used.load(Relaxed).saturating_sub(bytes);
        self.used.store(used, Relaxed);
    }
}

/// 53200, as PostgreSQL's allocator reports a failed allocation, with what was being built.
fn out_of_memory(what: &str, limit: usize) -> PgError {
    PgError::new(sqlstate::OUT_OF_MEMORY, "out of memory")
        .with_detail(format!(
            "{what} would exceed the statement memory limit of {} (work_mem × statement_mem_multiplier).",
            show_bytes(limit)
        ))
        .with_hint("Raise work_mem or statement_mem_multiplier, or make the statement hold fewer rows at once.")
}

/// Memory as SHOW prints it: kB, MB or GB, whichever divides evenly.
fn show_bytes(bytes: usize) -> String {
    let kb = bytes / 1024;
    if kb.is_multiple_of(1024 * 1024) && kb > 0 {
        format!("{}GB", kb / (1024 * 1024))
    } else if kb.is_multiple_of(1024) && kb > 0 {
        format!("{}MB", kb / 1024)
    } else {
        format!("{kb}kB")
    }
}

/// What one operator holds, charged to its statement's [`StatementMem`] and given back when
/// dropped. `what` names it in the error (`A sort's rows`).
pub struct MemCharge {
    mem: Option<Arc<StatementMem>>,
    bytes: usize,
    /// The most bytes held at once (EXPLAIN ANALYZE's memory figures).
    peak: usize,
    what: &'static str,
}

impl MemCharge {
    pub const fn new(what: &'static str) -> MemCharge {
        MemCharge {
            mem: None,
            bytes: 0,
            peak: 0,
            what,
        }
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Adds `bytes`; 53200 when the statement would pass its limit (the bytes stay charged
    /// until the operator is dropped, as the memory stays held until then).
    #[inline]
    pub fn add(&mut self, ev: &EvalCx<'_>, bytes: usize) -> PgResult<()> {
        self.bytes += bytes;
        self.peak = self.peak.max(self.bytes);
        match &self.mem {
            Some(m) => m.charge(bytes, self.what),
            None => {
                let m = self.mem.insert(ev.mem.clone());
                m.charge(bytes, self.what)
            }
        }
    }

    /// Gives back `bytes` (rows that moved on to the next operator, a state freed).
    #[inline]
    pub fn sub(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        if let Some(m) = &self.mem {
            m.release(bytes);
        }
    }

    /// Makes room for one more entry of `elem` bytes in hash table `t`, charging a larger
    /// table before it is allocated: a full table doubles, and while its entries move both
    /// tables are held. Call before each insert of a new key.
    #[inline]
    pub fn room_for_one<T: HashTable>(
        &mut self,
        ev: &EvalCx<'_>,
        t: &mut T,
        elem: usize,
    ) -> PgResult<()> {
        let (len, cap) = (t.entries(), t.capacity());
        if len < cap {
            return Ok(());
        }
        // hashbrown keeps 1/8 of its buckets free; each bucket is the entry and a control byte.
        let per = (elem + 1) * 8 / 7;
        let want = (cap * 2).max(4);
        self.add(ev, want * per)?;
        t.reserve(want - len);
        self.sub(cap * per);
        let got = t.capacity();
        if got > want {
            self.add(ev, (got - want) * per)?;
        } else {
            self.sub((want - got) * per);
        }
        Ok(())
    }

    /// The operator now holds only `rows`, whose values own `heap` bytes (Sort's sorted rows,
    /// Agg's result): the rest of the charge (keys, tables, states) is given back.
    pub fn keep_rows(&mut self, rows: &[Row], heap: usize) {
        let held = heap + std::mem::size_of_val(rows);
        self.sub(self.bytes.saturating_sub(held));
    }

    /// A row leaves the operator for the next one: its bytes are given back.
    #[inline]
    pub fn row_out(&mut self, row: Option<Row>) -> Option<Row> {
        if let Some(r) = &row {
            self.sub(keel_types::datum::row_heap_bytes(r));
        }
        row
    }
}

impl Drop for MemCharge {
    fn drop(&mut self) {
        if let Some(m) = &self.mem {
            m.release(self.bytes);
        }
    }
}

/// A hash table whose growth [`MemCharge::room_for_one`] charges.
pub trait HashTable {
    fn entries(&self) -> usize;
    fn capacity(&self) -> usize;
    fn reserve(&mut self, additional: usize);
}

impl<K: Hash + Eq, S: BuildHasher> HashTable for HashSet<K, S> {
    fn entries(&self) -> usize {
        HashSet::len(self)
    }
    fn capacity(&self) -> usize {
        HashSet::capacity(self)
    }
    fn reserve(&mut self, additional: usize) {
        HashSet::reserve(self, additional)
    }
}

impl<K: Hash + Eq, V, S: BuildHasher> HashTable for HashMap<K, V, S> {
    fn entries(&self) -> usize {
        HashMap::len(self)
    }
    fn capacity(&self) -> usize {
        HashMap::capacity(self)
    }
    fn reserve(&mut self, additional: usize) {
        HashMap::reserve(self, additional)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_shown_in_the_largest_even_unit() {
        assert_eq!(show_bytes(256 << 20), "256MB");
        assert_eq!(show_bytes(4 << 30), "4GB");
        assert_eq!(show_bytes(64 * 1024 * 3 / 2), "96kB");
    }
}
