//! SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE: locking one row version.
//!
//! The lock is written into the version's header (`xmax` with `LOCK_ONLY` and the strength),
//! WAL-logged with its page like a delete, and lasts until the transaction (or the
//! subtransaction that took it) ends: a lock-only `xmax` whose transaction is over is no lock.
//! A second transaction's compatible lock is listed beside it in `RowLockers`. Readers never
//! look at locks; writers wait for conflicting ones exactly as for another writer (the same
//! tuple-lock queue and xid wait, so deadlock detection sees them).

use crate::api::{Engine, RowRef, RowWait, Transaction, Write};
use crate::heap::{Heap, LockOutcome};
use keel_catalog::TableDef;
use keel_common::{PgResult, Xid};
use keel_txn::Strength;

impl Engine {
    /// The xid a statement's row locks are taken with, assigned now (the innermost
    /// subtransaction's): a locking query takes it before it reads, so that locking a row
    /// needs only a shared borrow of the transaction.
    pub fn row_lock_xid(&self, txn: &Transaction) -> PgResult<u64> {
        self.inner.xid(txn)
    }

    /// Locks `target` (a version the statement's snapshot sees) with `strength` for `xid`
    /// (from [`Engine::row_lock_xid`]). `Done` when locked (or already held as strongly);
    /// `Wait` when another transaction holds a conflicting lock, or others queue for the
    /// row (xid 0); `Updated` with the newest version when a committed transaction replaced
    /// it; `Deleted` when one deleted it.
    pub fn lock_row(
        &self,
        txn: &Transaction,
        xid: u64,
        table: &TableDef,
        target: RowRef,
        strength: Strength,
    ) -> PgResult<Write<()>> {
        let e = &self.inner;
        txn.inner.note_write(table);
        let rel = e.rel(table.relfile)?;
        let heap = Heap::new(&e.pool, &e.txns, &rel);
        let must_queue = || e.others_queue(txn, &rel, target.root);
        let cid = txn.inner.command_id();
        let out = heap.lock_row(target.version, target.root, xid, cid, strength, &must_queue)?;
        let r = match out {
            LockOutcome::Locked | LockOutcome::Held => Write::Done(()),
            LockOutcome::Listed => {
                txn.inner
                    .listed
                    .lock()
                    .push((rel.file.id, target.version.to_u64()));
                Write::Done(())
            }
            LockOutcome::Queue => Write::Wait(RowWait {
                xid: Xid(0),
                tuple: Some((rel.file.id, target.root)),
                visible: false,
            }),
            other => match e.lock_failure(txn, &heap, target, xid, other)? {
                Write::Wait(w) => Write::Wait(w),
                Write::Updated(r) => Write::Updated(r),
                _ => Write::Deleted,
            },
        };
        if matches!(r, Write::Done(_)) {
            e.note_precommitted_dependency(txn, heap.built_on_precommit.get());
            txn.leave_row_queue();
        }
        Ok(r)
    }
}

impl Engine {
    /// The xid `txn` writes with now (its innermost subtransaction's), if assigned.
    pub fn current_write_xid(&self, txn: &Transaction) -> Option<u64> {
        let m = txn.inner.m.lock();
        match m.subs.last() {
            Some(level) => level.xid,
            None => m.xid,
        }
    }
}

impl Engine {
    /// The advisory lock table (pg_advisory_lock and friends; see keel_txn::advisory).
    pub fn advisory(&self) -> &keel_txn::advisory::AdvisoryLocks {
        &self.inner.txns.advisory
    }

    /// Takes advisory lock `key` for session `pid`, blocking the thread while another session
    /// holds a conflicting mode; deadlocks with any other kind of lock are found after
    /// deadlock_timeout (40P01). `stop` is asked between waits (cancel, statement_timeout).
    pub fn advisory_lock(
        &self,
        txn: &Transaction,
        pid: i32,
        key: keel_txn::advisory::AdvisoryKey,
        (shared, level): (bool, keel_txn::advisory::Level),
        stop: impl FnMut() -> PgResult<()>,
    ) -> PgResult<()> {
        let e = &self.inner;
        e.txns.advisory_lock(
            &txn.inner.slot,
            pid,
            key,
            shared,
            level,
            e.deadlock_timeout,
            stop,
        )
    }
}

impl Engine {
    /// READ COMMITTED: the rest of the statement reads through a new snapshot (same command
    /// id). Referential checks take one after their write, as PostgreSQL's run after it:
    /// every row committed before the write was locked is then seen, and any later one had
    /// to wait for the write's lock. Under REPEATABLE READ nothing changes.
    pub fn refresh_snapshot(&self, txn: &Transaction) {
        if txn.isolation != crate::api::Isolation::ReadCommitted {
            return;
        }
        let st = &txn.inner;
        let mut m = st.m.lock();
        let xid = m.xid.unwrap_or(0);
        m.snapshot = self.inner.txns.snapshot(&st.slot, xid, m.cid);
    }
}
