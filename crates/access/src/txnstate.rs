//! Engine-private per-transaction state.

use keel_common::RelFileId;
use keel_txn::{Slot, Snapshot, TupleGuard, TxnManager};
use parking_lot::Mutex;
use std::sync::Arc;

/// Slots are reused across transactions so taking one costs no registry update.
#[derive(Default)]
pub struct SlotPool {
    pub free: Mutex<Vec<Arc<Slot>>>,
}

/// The part of a transaction's state its statements change while it runs. It sits behind a
/// mutex so the engine's write calls take `&Transaction`: a function called from a running
/// query writes in the same transaction as the scans that are still open. Scans copy the
/// snapshot (and command id) when they open, so what a nested statement does later is not
/// seen by them. Each guard is held for a few field reads or writes, never across a call
/// that takes it again, an await or I/O.
pub struct TxnMut {
    pub xid: Option<u64>,
    pub cid: u32,
    pub statements: u32,
    pub snapshot: Snapshot,
    pub has_snapshot: bool,
    /// Relation files created by this transaction (removed if it aborts).
    pub created: Vec<RelFileId>,
    /// Relation files to remove once it commits.
    pub drop_at_commit: Vec<RelFileId>,
    /// Sequences to restart once it commits (TRUNCATE ... RESTART IDENTITY).
    pub restart_at_commit: Vec<std::sync::Arc<keel_catalog::SequenceDef>>,
    /// Relation locks held until the transaction ends, each (relation, mode) once.
    pub(crate) rel_locks: Vec<keel_txn::HeldLock>,
    /// Open savepoints, outermost first (see savepoint.rs).
    pub(crate) subs: Vec<crate::savepoint::SubLevel>,
    /// Xids of its subtransactions that have not been rolled back, in assignment order.
    pub(crate) subxids: Vec<u64>,
    /// Its SSI record (SERIALIZABLE, from its first snapshot until it ends; see ssi.rs).
    pub(crate) sx: Option<keel_txn::ssi::SxId>,
    /// Rows it inserted, updated or deleted, per relation, added to the relations'
    /// `mods_since_analyze` when it commits (see `TxnState::count_change`).
    pub(crate) changed: Vec<(Arc<crate::relstate::RelState>, u64)>,
}

pub struct TxnState {
    pub(crate) m: Mutex<TxnMut>,
    pub slot: Arc<Slot>,
    pub(crate) txns: Arc<TxnManager>,
    pub(crate) pool: Arc<SlotPool>,
    pub(crate) finished: bool,
    /// The tuple lock held while waiting for and then retrying a write on a busy row.
    pub(crate) tuple_guard: Mutex<Option<TupleGuard>>,
    /// (root, version) of the newest version found after the last `Write::Updated`, where a
    /// following `fetch_newest` of that row starts its walk.
    pub(crate) newest_hint: Mutex<Option<(keel_common::Tid, keel_common::Tid)>>,
    /// WAL position up to which pre-committed transactions this one built on (early lock
    /// release) were logged; `Engine::settle` waits for it before a new snapshot.
    pub(crate) depends_on_lsn: std::sync::atomic::AtomicU64,
    /// Row versions where it holds a shared lock listed in `RowLockers` (pruned at its end).
    pub(crate) listed: Mutex<Vec<keel_txn::rowlock::VersionKey>>,
    /// It changed (wrote, deleted or locked rows of) a WAL-logged relation. A commit of a
    /// transaction that did not need not wait for its commit record to be durable
    /// (PostgreSQL's `wrote_xlog` rule): a crash empties the unlogged relations it wrote.
    pub(crate) wrote_logged: std::sync::atomic::AtomicBool,
}

impl TxnState {
    /// The command id the running statement writes with: its snapshot's. Statements a
    /// function starts advance the counter, but the caller's own writes keep the id it began
    /// with (PostgreSQL's es_output_cid), so they stay invisible to its scans and a row a
    /// nested statement changed is told apart from one this statement changed.
    pub(crate) fn command_id(&self) -> u32 {
        self.m.lock().snapshot.cid
    }

    /// Its commit is visible: SSI draws its commit number now (see keel_txn::ssi).
    pub(crate) fn ssi_committed(&mut self) {
        if let Some(sx) = self.m.get_mut().sx.take() {
            self.txns.ssi.release(sx, true);
        }
    }

    /// Its outcome is decided (commit logged, or aborted): it no longer counts as writing.
    pub(crate) fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.slot
                .idle_since
                .store(0, std::sync::atomic::Ordering::Relaxed);
            if self.m.get_mut().xid.is_some() {
                self.txns.done_writing();
            }
        }
    }

    /// Counts one row it inserted, updated or deleted in `rel`. The counts reach auto-analyze's
    /// trigger only when it commits, as PostgreSQL counts changes at commit: an analyze made due
    /// by rows it cannot see yet (a long INSERT still running) would record an empty table and
    /// keep that estimate for the whole naptime. An aborted transaction changes nothing.
    /// Notes a change to a row of `table` (see `wrote_logged`).
    pub(crate) fn note_write(&self, table: &keel_catalog::TableDef) {
        if table.persistence != keel_catalog::Persistence::Unlogged {
            self.wrote_logged
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub(crate) fn count_change(&self, rel: &Arc<crate::relstate::RelState>) {
        let mut m = self.m.lock();
        if let Some((_, n)) = m
            .changed
            .iter_mut()
            .rev()
            .find(|(r, _)| Arc::ptr_eq(r, rel))
        {
            *n += 1;
        } else {
            m.changed.push((rel.clone(), 1));
        }
    }

    /// Adds the rows it changed to their relations' counts; call once its commit is visible.
    pub(crate) fn publish_changes(&mut self) {
        for (rel, n) in std::mem::take(&mut self.m.get_mut().changed) {
            rel.mods_since_analyze
                .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Releases the transaction's relation locks. Called once its outcome is durable (or it
    /// aborted): a waiter that goes on then sees the catalog it installed.
    pub(crate) fn release_rel_locks(&mut self) {
        let m = self.m.get_mut();
        if !m.rel_locks.is_empty() {
            self.txns.rel_locks.release_all(&self.slot, &m.rel_locks);
            m.rel_locks.clear();
        }
    }

    /// Forgets its entries in `RowLockers`; call once its outcome is visible (or it aborted).
    pub(crate) fn prune_listed(&self) {
        let keys = std::mem::take(&mut *self.listed.lock());
        if !keys.is_empty() {
            self.txns.row_lockers.prune(&self.txns, &keys);
        }
    }

    /// Lets the next waiter for the row in line.
    pub(crate) fn release_tuple_lock(&self) {
        if let Some(g) = self.tuple_guard.lock().take() {
            self.txns.tuple_locks.release(g);
        }
    }
}

impl Drop for TxnState {
    fn drop(&mut self) {
        self.release_tuple_lock();
        self.release_rel_locks();
        if !self.finished {
            let m = self.m.get_mut();
            if let Some(xid) = m.xid {
                self.txns.mark_aborted(xid);
                self.txns.forget_subxids(&m.subxids);
            }
            self.finish();
        }
        if let Some(sx) = self.m.get_mut().sx.take() {
            self.txns.ssi.release(sx, false);
        }
        self.prune_listed();
        self.slot.release_snapshot();
        self.slot.xid.store(0, std::sync::atomic::Ordering::SeqCst);
        self.pool.free.lock().push(self.slot.clone());
    }
}
