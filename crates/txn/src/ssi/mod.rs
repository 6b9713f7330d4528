//! Serializable Snapshot Isolation (Ports & Grittner, VLDB 2012), as PostgreSQL has it: each
//! SERIALIZABLE transaction is a `Sxact`; reads leave SIREAD locks (locks.rs), writes that
//! meet them and reads that meet concurrent writes in the heap record rw-conflicts, and a
//! transaction that would become the pivot of a dangerous structure is cancelled with 40001.
//! See the crate README for the design (granularity, key ranges, memory bounds).
//!
//! One mutex guards the whole state. Only SERIALIZABLE transactions ever take it: every
//! entry point is reached through a transaction's `SxId`, so other levels pay nothing.

mod locks;

pub use locks::Target;

use keel_common::{PgError, PgResult, sqlstate};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

/// A serializable transaction's handle.
pub type SxId = u64;

/// Predicate locks one transaction may take on one relation (tuples) or one index (key
/// ranges) before they are promoted to a lock on the whole relation or index.
pub const PROMOTE_AFTER: u32 = 32;
/// Predicate locks per connection slot (PostgreSQL's max_pred_locks_per_transaction default):
/// the table holds at most this many times `max_connections` locks, then answers 53200.
pub const LOCKS_PER_CONNECTION: usize = 64;

#[derive(Default)]
struct Sxact {
    /// Its top-level xid once it wrote (0 before).
    top_xid: u64,
    /// Declared READ ONLY, or committed without writing.
    read_only: bool,
    /// The last commit sequence number drawn before its snapshot was taken.
    before_snapshot: u64,
    /// Sequence number drawn when it passed its pre-commit check (0: not yet).
    prepared: u64,
    /// Sequence number drawn once its commit was visible (0: not committed).
    committed: u64,
    /// Committed with an rw-conflict out to a transaction that committed before it (whose
    /// earliest pre-commit number is `earliest_out`).
    conflict_out: bool,
    earliest_out: u64,
    doomed: bool,
    wrote: bool,
    /// Read-only and no concurrent read-write transaction can make its snapshot unsafe
    /// (it takes no more locks and records no conflicts); or one did (`unsafe_`).
    safe: bool,
    unsafe_: bool,
    /// T ->rw me: transactions that read what I then wrote.
    ins: Vec<SxId>,
    /// me ->rw T: transactions that wrote what I read.
    outs: Vec<SxId>,
    /// For a read-only transaction: the concurrent read-write ones that could still make it
    /// unsafe. For a read-write one: the read-only transactions listing it.
    possible_unsafe: Vec<SxId>,
    locks: locks::Held,
}

#[derive(Default)]
struct State {
    next_id: SxId,
    /// The last sequence number drawn (PostgreSQL's LastSxactCommitSeqNo).
    seq: u64,
    xacts: FxHashMap<SxId, Sxact>,
    by_xid: FxHashMap<u64, SxId>,
    table: locks::Table,
}

/// Where a read-only DEFERRABLE transaction's snapshot stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safety {
    Safe,
    Unsafe,
    Pending,
}

pub struct Ssi {
    state: Mutex<State>,
    /// Fired whenever a read-only transaction's safety is decided.
    pub safety_changed: tokio::sync::Notify,
    max_locks: std::sync::atomic::AtomicUsize,
}

impl Default for Ssi {
    fn default() -> Self {
        Ssi {
            state: Mutex::new(State::default()),
            safety_changed: tokio::sync::Notify::new(),
            max_locks: std::sync::atomic::AtomicUsize::new(LOCKS_PER_CONNECTION * 100),
        }
    }
}

/// Records `holder ->rw id` for each of `holders` still concurrent with `id` (who writes what
/// they read), under the state's lock.
fn flag_holders(st: &mut State, id: SxId, holders: Vec<SxId>) -> PgResult<()> {
    let me = st.xm(id);
    if me.doomed {
        return Err(failure(
            "Canceled on identification as a pivot, during conflict in checking.",
        ));
    }
    me.wrote = true;
    let mine = me.before_snapshot;
    for h in holders {
        if h == id {
            continue;
        }
        let hs = st.x(h);
        if hs.doomed || hs.safe || (hs.committed != 0 && hs.committed <= mine) {
            continue;
        }
        st.flag(id, h, id)?;
    }
    Ok(())
}

fn failure(reason: &str) -> PgError {
    PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "could not serialize access due to read/write dependencies among transactions",
    )
    .with_detail(format!("Reason code: {reason}"))
    .with_hint("The transaction might succeed if retried.")
}

impl State {
    fn x(&self, id: SxId) -> &Sxact {
        &self.xacts[&id]
    }

    fn xm(&mut self, id: SxId) -> &mut Sxact {
        self.xacts.get_mut(&id).expect("live sxact")
    }

    fn active(&self, s: &Sxact) -> bool {
        s.committed == 0
    }

    /// PostgreSQL's OnConflict_CheckForSerializationFailure: before adding `reader ->rw
    /// writer`, whether that closes a dangerous structure (Tin ->rw Tpivot ->rw Tout with Tout
    /// committing first). Returns the error for `me`, or dooms the writer.
    fn check_new_edge(&mut self, me: SxId, reader: SxId, writer: SxId) -> PgResult<()> {
        let (r, w) = (self.x(reader), self.x(writer));
        // R ->rw W(committed) ->rw T2 where T2 committed before W.
        let mut fail = w.committed != 0 && w.conflict_out;
        // W becomes a pivot with an out-conflict to T2 that committed (prepared) first.
        if !fail {
            fail = w.outs.iter().any(|t2| {
                let t2 = self.x(*t2);
                t2.prepared != 0
                    && (r.committed == 0 || t2.prepared <= r.committed)
                    && (w.committed == 0 || t2.prepared <= w.committed)
                    && (!r.read_only || t2.prepared <= r.before_snapshot)
            });
        }
        // R becomes a pivot: T0 ->rw R ->rw W with W committed (prepared) first.
        if !fail && w.prepared != 0 && !r.read_only {
            fail = r.ins.iter().any(|t0| {
                let t0 = self.x(*t0);
                !t0.doomed
                    && (t0.committed == 0 || t0.committed >= w.prepared)
                    && (!t0.read_only || t0.before_snapshot >= w.prepared)
            });
        }
        if !fail {
            return Ok(());
        }
        if writer == me {
            return Err(failure(
                "Canceled on identification as a pivot, during write.",
            ));
        }
        if w.prepared != 0 {
            return Err(failure(&format!(
                "Canceled on conflict out to pivot {}, during read.",
                w.top_xid
            )));
        }
        self.xm(writer).doomed = true;
        Ok(())
    }

    /// Records `reader ->rw writer` unless it exists, checking first (see `check_new_edge`).
    fn flag(&mut self, me: SxId, reader: SxId, writer: SxId) -> PgResult<()> {
        if self.x(reader).outs.contains(&writer) {
            return Ok(());
        }
        self.check_new_edge(me, reader, writer)?;
        self.xm(reader).outs.push(writer);
        self.xm(writer).ins.push(reader);
        Ok(())
    }

    /// Forgets `id` entirely: its locks, its edges, its xid.
    fn remove(&mut self, id: SxId) {
        let Some(s) = self.xacts.remove(&id) else {
            return;
        };
        self.table.release_all(id, &s.locks);
        for o in s.outs {
            if let Some(t) = self.xacts.get_mut(&o) {
                t.ins.retain(|&x| x != id);
            }
        }
        for i in s.ins {
            if let Some(t) = self.xacts.get_mut(&i) {
                t.outs.retain(|&x| x != id);
            }
        }
        for p in s.possible_unsafe {
            if let Some(t) = self.xacts.get_mut(&p) {
                t.possible_unsafe.retain(|&x| x != id);
            }
        }
        if s.top_xid != 0 {
            self.by_xid.remove(&s.top_xid);
        }
    }

    /// Drops committed transactions no active one overlaps: every active transaction took its
    /// snapshot after they committed, so no new edge can reach them, and the dangerous
    /// structures they could still be part of are summed up in the flags of the transactions
    /// that overlapped them (`conflict_out`).
    fn clear_old(&mut self) {
        let oldest = self
            .xacts
            .values()
            .filter(|s| self.active(s))
            .map(|s| s.before_snapshot)
            .min();
        let old: Vec<SxId> = self
            .xacts
            .iter()
            .filter(|(_, s)| s.committed != 0 && oldest.is_none_or(|o| s.committed <= o))
            .map(|(&id, _)| id)
            .collect();
        for id in old {
            self.remove(id);
        }
    }

    fn mark_safe(&mut self, ro: SxId) {
        let s = self.xm(ro);
        s.safe = true;
        let held = std::mem::take(&mut s.locks);
        self.table.release_all(ro, &held);
    }
}

impl Ssi {
    /// Sets the lock table's bound from max_connections.
    pub fn set_max_connections(&self, n: usize) {
        self.max_locks.store(
            LOCKS_PER_CONNECTION * n.max(1),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Registers a serializable transaction, taking its snapshot with `take` under the same
    /// lock as the sequence number it is compared with. A read-only transaction with no
    /// concurrent read-write serializable transaction is safe from the start: None, it runs
    /// as snapshot isolation.
    pub fn register<S>(&self, read_only: bool, take: impl FnOnce() -> S) -> (Option<SxId>, S) {
        let mut st = self.state.lock();
        let before_snapshot = st.seq;
        let snap = take();
        let writers: Vec<SxId> = if read_only {
            st.xacts
                .iter()
                .filter(|(_, s)| s.committed == 0 && !s.read_only && !s.doomed)
                .map(|(&id, _)| id)
                .collect()
        } else {
            Vec::new()
        };
        if read_only && writers.is_empty() {
            return (None, snap);
        }
        st.next_id += 1;
        let id = st.next_id;
        for w in &writers {
            st.xm(*w).possible_unsafe.push(id);
        }
        st.xacts.insert(
            id,
            Sxact {
                read_only,
                before_snapshot,
                possible_unsafe: writers,
                ..Sxact::default()
            },
        );
        (Some(id), snap)
    }

    /// Notes the top-level xid `id` writes with, so readers meeting it find `id`.
    pub fn set_xid(&self, id: SxId, top_xid: u64) {
        let mut st = self.state.lock();
        st.xm(id).top_xid = top_xid;
        st.by_xid.insert(top_xid, id);
    }

    /// For a read-only DEFERRABLE transaction: whether its snapshot is safe yet.
    pub fn safety(&self, id: SxId) -> Safety {
        let st = self.state.lock();
        let s = st.x(id);
        if s.unsafe_ {
            Safety::Unsafe
        } else if s.safe {
            Safety::Safe
        } else {
            Safety::Pending
        }
    }

    /// Runs `f` on the lock table and `id`'s held locks, with the table's bound; nothing
    /// once `id` is safe (it needs no more locks).
    fn with_locks(
        &self,
        id: SxId,
        f: impl FnOnce(&mut locks::Table, &mut locks::Held, usize) -> PgResult<()>,
    ) -> PgResult<()> {
        let mut st = self.state.lock();
        if st.x(id).safe {
            return Ok(());
        }
        let max = self.max_locks.load(std::sync::atomic::Ordering::Relaxed);
        let State { xacts, table, .. } = &mut *st;
        let s = xacts.get_mut(&id).expect("live sxact");
        f(table, &mut s.locks, max)
    }

    /// A SIREAD lock on `target` for `id` (a tuple read, a relation scanned).
    pub fn lock(&self, id: SxId, target: Target) -> PgResult<()> {
        self.with_locks(id, |table, held, max| table.lock(id, held, target, max))
    }

    /// A SIREAD lock on the keys `[lo, hi)` of index `index` (`hi` None: no upper end).
    pub fn lock_range(&self, id: SxId, index: u32, lo: &[u8], hi: Option<&[u8]>) -> PgResult<()> {
        self.with_locks(id, |table, held, max| {
            table.lock_range(id, held, index, lo, hi, max)
        })
    }

    /// `id` read a version whose creator or deleter (top-level xid `writer`) is concurrent:
    /// its write is not in `id`'s snapshot. Records `id ->rw writer`.
    pub fn conflict_out(&self, id: SxId, writer: u64) -> PgResult<()> {
        let mut st = self.state.lock();
        let me = st.x(id);
        if me.safe {
            return Ok(());
        }
        if me.doomed {
            return Err(failure(
                "Canceled on identification as a pivot, during conflict out checking.",
            ));
        }
        let Some(&w) = st.by_xid.get(&writer) else {
            // Not serializable, or long gone.
            return Ok(());
        };
        let ws = st.x(w);
        if w == id || ws.doomed {
            return Ok(());
        }
        if me.read_only
            && ws.committed != 0
            && (!ws.conflict_out || me.before_snapshot < ws.earliest_out)
        {
            // A read-only transaction appears to run before the writer: no conflict.
            return Ok(());
        }
        st.flag(id, id, w)
    }

    /// `id` wrote `targets` (a tuple and its relation), or the index key `key` of index
    /// `index` (`targets` empty then): every concurrent holder of a SIREAD lock covering it
    /// gets `holder ->rw id`.
    pub fn conflict_in(
        &self,
        id: SxId,
        targets: &[Target],
        key: Option<(u32, &[u8])>,
    ) -> PgResult<()> {
        let mut st = self.state.lock();
        let mut holders = st.table.holders(targets, key);
        holders.sort_unstable();
        holders.dedup();
        flag_holders(&mut st, id, holders)
    }

    /// `id` writes every row of relation `rel` at once (TRUNCATE, DROP TABLE): every
    /// concurrent holder of a SIREAD lock on it, one of its rows or a key range of one of
    /// its `indexes` gets `holder ->rw id` (PostgreSQL's
    /// `CheckTableForSerializableConflictIn`).
    pub fn conflict_in_relation(&self, id: SxId, rel: u32, indexes: &[u32]) -> PgResult<()> {
        let mut st = self.state.lock();
        let holders = st.table.holders_of_relation(rel, indexes);
        flag_holders(&mut st, id, holders)
    }

    /// The rows of relation `rel` move to relation file `to` (TRUNCATE gives the table a new
    /// file): every holder of a lock on `rel`, its rows or its `indexes` gets a lock on all of
    /// `to`, so a write there still finds who read the rows it replaces. Coarser than what
    /// was held (PostgreSQL's `TransferPredicateLocksToHeapRelation`): never too few
    /// conflicts, at worst more. Not bounded by `max_pred_locks`: one lock per holder.
    pub fn transfer_relation(&self, rel: u32, indexes: &[u32], to: u32) {
        let mut st = self.state.lock();
        let holders = st.table.holders_of_relation(rel, indexes);
        let State { xacts, table, .. } = &mut *st;
        for h in holders {
            if let Some(s) = xacts.get_mut(&h) {
                // A relation lock never fails (it only replaces tuple locks).
                let _ = table.lock(h, &mut s.locks, Target::Relation(to), usize::MAX);
            }
        }
    }

    /// PostgreSQL's PreCommit_CheckForSerializationFailure: fails if `id` was doomed; dooms
    /// the pivot of any dangerous structure in which `id`, committing first, is Tout.
    pub fn pre_commit(&self, id: SxId) -> PgResult<()> {
        let mut st = self.state.lock();
        if st.x(id).doomed {
            return Err(failure(
                "Canceled on identification as a pivot, during commit attempt.",
            ));
        }
        let near: Vec<SxId> = st.x(id).ins.clone();
        for n in near {
            let ns = st.x(n);
            if ns.committed != 0 || ns.doomed {
                continue;
            }
            let dangerous = ns.ins.iter().any(|&f| {
                let fs = st.x(f);
                f == id || (fs.committed == 0 && !fs.read_only && !fs.doomed)
            });
            if dangerous {
                if ns.prepared != 0 {
                    return Err(failure(
                        "Canceled on commit attempt with conflict in from prepared pivot.",
                    ));
                }
                st.xm(n).doomed = true;
            }
        }
        st.seq += 1;
        let seq = st.seq;
        st.xm(id).prepared = seq;
        Ok(())
    }

    /// The transaction ended: committed (its commit is visible) or rolled back.
    pub fn release(&self, id: SxId, committed: bool) {
        let mut st = self.state.lock();
        let mut decided = false;
        if !committed {
            let ros = st.x(id).possible_unsafe.clone();
            let read_only = st.x(id).read_only;
            st.remove(id);
            if !read_only {
                for ro in ros {
                    if st
                        .xacts
                        .get(&ro)
                        .is_some_and(|r| r.possible_unsafe.is_empty() && !r.unsafe_)
                    {
                        st.mark_safe(ro);
                        decided = true;
                    }
                }
            }
        } else {
            st.seq += 1;
            let seq = st.seq;
            let s = st.x(id);
            let declared_read_only = s.read_only;
            let read_only = s.read_only || !s.wrote;
            let outs = s.outs.clone();
            let (mut flag, mut earliest) = (false, u64::MAX);
            if !read_only {
                for o in &outs {
                    let os = st.x(*o);
                    if os.committed != 0 {
                        flag = true;
                        earliest = earliest.min(os.prepared);
                    }
                }
            }
            let s = st.xm(id);
            s.committed = seq;
            if s.prepared == 0 {
                s.prepared = seq;
            }
            s.read_only = read_only;
            s.conflict_out = flag;
            s.earliest_out = if flag { earliest } else { 0 };
            let ros = std::mem::take(&mut s.possible_unsafe);
            if declared_read_only {
                for w in ros {
                    if let Some(ws) = st.xacts.get_mut(&w) {
                        ws.possible_unsafe.retain(|&x| x != id);
                    }
                }
            } else {
                for ro in ros {
                    let Some(r) = st.xacts.get_mut(&ro) else {
                        continue;
                    };
                    if flag && earliest <= r.before_snapshot {
                        r.unsafe_ = true;
                        decided = true;
                    } else {
                        r.possible_unsafe.retain(|&x| x != id);
                        if r.possible_unsafe.is_empty() && !r.unsafe_ {
                            st.mark_safe(ro);
                            decided = true;
                        }
                    }
                }
            }
        }
        st.clear_old();
        drop(st);
        if decided {
            self.safety_changed.notify_waiters();
        }
    }

    /// Serializable transactions known (active or kept after commit) and predicate locks
    /// held, for tests and monitoring.
    pub fn counts(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.xacts.len(), st.table.len())
    }
}

#[cfg(test)]
mod tests;
