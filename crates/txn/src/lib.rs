//! Transactions: 64-bit transaction ids, commit sequence numbers, O(1) snapshots, waiting for
//! another transaction to finish, and deadlock detection.
//!
//! Snapshot protocol (seed 002): a snapshot is the value of one padded atomic, the latest
//! commit sequence number (CSN). A transaction's effects are visible to a snapshot `s` iff it
//! committed with `csn <= s`. Committing sets the xid's entry to COMMITTING, draws the next
//! CSN, then stores it; a reader that meets COMMITTING spins the few instructions until the
//! CSN appears. Taking a snapshot writes only the session's own padded slot.
//!
//! Horizon protocol (vacuum): a session publishes PENDING in its slot, reads the CSN, then
//! publishes it. `horizon()` reads the CSN first and then every slot, waiting out PENDING ones,
//! so no snapshot in use can be older than the horizon it returns. A version deleted by a
//! transaction with `csn <= horizon` is invisible to every present and future snapshot.
//!
//! See README.md for the wait and deadlock protocol.

pub mod advisory;
pub mod rellock;
mod relwait;
pub mod rowlock;
mod slots;
pub mod ssi;
mod tuplelock;
mod xidmap;

pub use rellock::{HeldLock, LockMode, RelLocks};
pub use relwait::{LockLimits, Locked};
pub use rowlock::{RowLockers, Strength};
pub use slots::{Slot, SlotRegistry};
pub use tuplelock::{TupleGuard, TupleKey, TupleLocks};
pub use xidmap::{CommitLog, Lookup, XidStatus};

/// The oid of the one database, as deadlock reports name it.
pub const DATABASE_OID: u32 = 5;

/// Milliseconds on a monotonic clock that starts at the first call; never 0.
pub fn clock_ms() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
        + 1
}

use keel_common::{PgError, PgResult, sqlstate};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A snapshot: everything committed at or before `csn`, plus the owning transaction's own
/// changes made by earlier commands (`cid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub csn: u64,
    /// The owning transaction's xid, 0 if it has none yet.
    pub xid: u64,
    /// Own changes with a command id below this are visible.
    pub cid: u32,
}

#[repr(align(128))]
struct Padded(AtomicU64);

pub struct TxnManager {
    next_xid: Padded,
    latest_csn: Padded,
    /// Transactions holding an xid whose commit (or abort) is not yet logged: the load the
    /// WAL writer's group commit reads (`writing`).
    writing: Padded,
    pub clog: CommitLog,
    pub slots: SlotRegistry,
    waiters: Mutex<HashMap<u64, tokio::sync::watch::Sender<u8>>>,
    pub tuple_locks: TupleLocks,
    pub rel_locks: RelLocks,
    pub row_lockers: RowLockers,
    pub advisory: advisory::AdvisoryLocks,
    pub ssi: ssi::Ssi,
}

/// Progress of a transaction as its waiters see it.
const RUNNING: u8 = 0;
/// Its commit record is in the WAL (pre-committed, see `CommitLog::is_logged`).
const LOGGED: u8 = 1;
/// Committed (visible) or aborted.
const FINISHED: u8 = 2;

/// CSN of transactions that committed before the last restart: visible to everyone.
pub const CSN_FROZEN: u64 = 1;

impl TxnManager {
    /// `next_xid`: first xid to hand out. `clog` holds the recovered commit states.
    pub fn new(next_xid: u64, clog: CommitLog) -> TxnManager {
        TxnManager {
            next_xid: Padded(AtomicU64::new(next_xid.max(3))),
            latest_csn: Padded(AtomicU64::new(CSN_FROZEN + 1)),
            writing: Padded(AtomicU64::new(0)),
            clog,
            slots: SlotRegistry::default(),
            waiters: Mutex::new(HashMap::new()),
            tuple_locks: TupleLocks::default(),
            rel_locks: RelLocks::default(),
            row_lockers: RowLockers::default(),
            advisory: advisory::AdvisoryLocks::default(),
            ssi: ssi::Ssi::default(),
        }
    }

    pub fn next_xid(&self) -> u64 {
        self.next_xid.0.load(Ordering::Acquire)
    }

    /// A new xid; the caller now counts as writing until it calls `done_writing` (once).
    pub fn assign_xid(&self) -> u64 {
        let xid = self.next_xid.0.fetch_add(1, Ordering::AcqRel);
        self.clog.ensure(xid);
        self.writing.0.fetch_add(1, Ordering::Relaxed);
        xid
    }

    /// A new xid for a subtransaction of top-level transaction `top` (which holds an xid
    /// already). It shares `top`'s fate until it is marked aborted; it does not count as
    /// another writing transaction.
    pub fn assign_subxid(&self, top: u64) -> u64 {
        let xid = self.next_xid.0.fetch_add(1, Ordering::AcqRel);
        self.clog.set_parent(xid, top);
        xid
    }

    /// Whether `xid` is top-level transaction `top`'s own: `top` itself or one of its
    /// subtransactions that has not aborted.
    #[inline]
    pub fn is_own(&self, xid: u64, top: u64) -> bool {
        top != 0 && (xid == top || matches!(self.clog.lookup(xid), Lookup::Child(t) if t == top))
    }

    /// Whether `a` and `b` belong to the same top-level transaction (neither aborted).
    #[inline]
    pub fn same_txn(&self, a: u64, b: u64) -> bool {
        a == b || (a != 0 && b != 0 && self.clog.top_of(a) == self.clog.top_of(b))
    }

    /// The transaction that got an xid has logged its commit, or aborted.
    pub fn done_writing(&self) {
        self.writing.0.fetch_sub(1, Ordering::Relaxed);
    }

    /// How many transactions hold an xid and have not finished: a load estimate, read
    /// without ordering.
    pub fn writing(&self) -> usize {
        self.writing.0.load(Ordering::Relaxed) as usize
    }

    /// Writing transactions that may commit soon: [`Self::writing`] less those whose session
    /// has sat idle in its transaction block for `idle_limit_ms` or longer. A client holding a
    /// transaction open is not about to commit; counted, it made every other commit wait for
    /// it in group commit. Scans the sessions' slots (once per gathered flush).
    pub fn writing_soon(&self, idle_limit_ms: u64) -> usize {
        let writing = self.writing();
        if writing <= 1 {
            return writing;
        }
        let now = clock_ms();
        let mut idle = 0;
        self.slots.for_each(|s| {
            let since = s.idle_since.load(Ordering::Relaxed);
            if since != 0
                && now.saturating_sub(since) >= idle_limit_ms
                && s.xid.load(Ordering::Relaxed) != 0
            {
                idle += 1;
            }
        });
        writing.saturating_sub(idle)
    }

    /// Takes a snapshot and publishes it in `slot` for the vacuum horizon.
    pub fn snapshot(&self, slot: &Slot, xid: u64, cid: u32) -> Snapshot {
        slot.snapshot_csn.store(slots::PENDING, Ordering::SeqCst);
        let csn = self.latest_csn.0.load(Ordering::SeqCst);
        slot.snapshot_csn.store(csn, Ordering::SeqCst);
        Snapshot { csn, xid, cid }
    }

    /// The newest CSN drawn: a transaction that has not committed yet will get a greater one.
    pub fn latest_csn(&self) -> u64 {
        self.latest_csn.0.load(Ordering::SeqCst)
    }

    /// The oldest CSN any snapshot may still use.
    pub fn horizon(&self) -> u64 {
        let mut h = self.latest_csn.0.load(Ordering::SeqCst);
        self.slots.for_each(|s| {
            let v = loop {
                let v = s.snapshot_csn.load(Ordering::SeqCst);
                if v != slots::PENDING {
                    break v;
                }
                std::hint::spin_loop();
            };
            if v != 0 && v < h {
                h = v;
            }
        });
        h
    }

    pub fn status(&self, xid: u64) -> XidStatus {
        self.clog.status(xid)
    }

    /// Whether the effects of `xid` (made by command `cid` when it is the snapshot's own
    /// transaction) are visible to `snap`.
    #[inline]
    pub fn sees(&self, snap: &Snapshot, xid: u64, cid: u32) -> bool {
        if xid == snap.xid && xid != 0 {
            return cid < snap.cid;
        }
        match self.clog.lookup(xid) {
            Lookup::Status(XidStatus::Committed(csn)) => csn <= snap.csn,
            Lookup::Status(_) => false,
            Lookup::Child(top) if top == snap.xid => cid < snap.cid,
            Lookup::Child(top) => {
                matches!(self.clog.status(top), XidStatus::Committed(csn) if csn <= snap.csn)
            }
        }
    }

    /// Whether `xid` is a top-level transaction that committed before `snap` was taken: all
    /// its versions are visible to `snap`, whatever their command ids, and stay so.
    #[inline]
    pub fn committed_before(&self, snap: &Snapshot, xid: u64) -> bool {
        xid != snap.xid
            && matches!(self.clog.lookup(xid), Lookup::Status(XidStatus::Committed(csn)) if csn <= snap.csn)
    }

    /// Makes a committed transaction visible (after its commit record is durable when
    /// synchronous_commit is on) and wakes its waiters.
    pub fn mark_committed(&self, xid: u64) {
        self.clog.set_committing(xid);
        let csn = self.latest_csn.0.fetch_add(1, Ordering::SeqCst) + 1;
        self.clog.set_csn(xid, csn);
        self.wake(xid);
    }

    pub fn mark_aborted(&self, xid: u64) {
        self.clog.set_aborted(xid);
        self.wake(xid);
    }

    /// Marks a subtransaction's xid aborted (ROLLBACK TO SAVEPOINT): its versions die and
    /// the row locks it took are free. Waiters for it wake.
    pub fn mark_sub_aborted(&self, xid: u64) {
        self.mark_aborted(xid);
    }

    /// Wakes and forgets whoever waited on the xids of the subtransactions of a transaction
    /// that has just become visible, or aborted (their waits also watch the top-level xid;
    /// this drops the channels).
    pub fn forget_subxids(&self, xids: &[u64]) {
        if xids.is_empty() {
            return;
        }
        let mut w = self.waiters.lock();
        for x in xids {
            if let Some(tx) = w.remove(x) {
                tx.send_replace(FINISHED);
            }
        }
    }

    fn wake(&self, xid: u64) {
        if let Some(tx) = self.waiters.lock().remove(&xid) {
            tx.send_replace(FINISHED);
        }
    }

    /// Wakes the row-lock waiters of `xid`, whose commit record was just logged (the caller
    /// set its logged bit first). Waiters that need it visible keep waiting.
    pub fn wake_logged(&self, xid: u64) {
        if let Some(tx) = self.waiters.lock().get(&xid) {
            tx.send_replace(LOGGED);
        }
    }

    /// Awaits the end of transaction `xid`, or only its pre-commit when `precommit_enough`
    /// (row-lock waits: early lock release, see crates/access/README.md). `me` is the waiting
    /// session's slot (its `xid` must be published there). Runs deadlock detection after `deadlock_timeout`; fails
    /// with 40P01 if this wait closes a cycle and 57014 if `cancelled` resolves first.
    pub async fn wait_for(
        &self,
        me: &Slot,
        xid: u64,
        precommit_enough: bool,
        deadlock_timeout: Duration,
        cancelled: impl Future<Output = ()>,
    ) -> PgResult<()> {
        // A live subtransaction's xid ends with its top-level transaction (whose channel is
        // watched too) unless it aborts first (its own channel fires).
        let top = self.clog.top_of(xid);
        let (mut rx, mut rx_top) = {
            let mut w = self.waiters.lock();
            let mut sub = |x: u64| {
                w.entry(x)
                    .or_insert_with(|| tokio::sync::watch::channel(RUNNING).0)
                    .subscribe()
            };
            let rx = sub(xid);
            let rx_top = (top != xid).then(|| sub(top));
            (rx, rx_top)
        };
        if !matches!(self.status(xid), XidStatus::InProgress) {
            // Ended between its wake and our registration: drop channels nobody else awaits.
            let mut w = self.waiters.lock();
            for x in [xid, top] {
                if w.get(&x).is_some_and(|tx| tx.receiver_count() <= 1) {
                    w.remove(&x);
                }
            }
            return Ok(());
        }
        if precommit_enough && self.clog.is_logged(xid) {
            return Ok(());
        }
        let enough = if precommit_enough { LOGGED } else { FINISHED };
        me.waiting_for.store(xid, Ordering::SeqCst);
        let result = {
            let done = async {
                match rx_top.as_mut() {
                    None => drop(rx.wait_for(|&d| d >= enough).await),
                    Some(t) => {
                        tokio::select! {
                            _ = rx.wait_for(|&d| d >= FINISHED) => {}
                            _ = t.wait_for(|&d| d >= enough) => {}
                        }
                    }
                }
            };
            tokio::pin!(done);
            tokio::pin!(cancelled);
            let mut checked = false;
            loop {
                tokio::select! {
                    _ = &mut done => break Ok(()),
                    _ = &mut cancelled => break Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request")),
                    _ = tokio::time::sleep(deadlock_timeout), if !checked => {
                        checked = true;
                        if self.closes_cycle(me).is_some() {
                            break Err(PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
                                .with_detail(format!("Process {} waits for ShareLock on transaction {}; blocked by another process.", me.pid, xid))
                                .with_hint("See server log for query details."));
                        }
                    }
                }
            }
        };
        me.waiting_for.store(0, Ordering::SeqCst);
        result
    }

    /// Takes the tuple lock of row `key` for transaction `me`, waiting in line (FIFO). While
    /// waiting, `me` is published as waiting for the lock holder's xid, so deadlocks through
    /// tuple locks are found like any other.
    pub async fn lock_tuple(
        &self,
        me: &Slot,
        key: TupleKey,
        deadlock_timeout: Duration,
        cancelled: impl Future<Output = ()>,
    ) -> PgResult<TupleGuard> {
        let lock = self.tuple_locks.entry(key);
        let my_xid = me.xid.load(Ordering::SeqCst);
        let acquire = self.tuple_locks.acquire(key, lock.clone(), my_xid);
        tokio::pin!(acquire);
        tokio::pin!(cancelled);
        // The holder changes as the line moves (and is 0 while the lock passes from one to
        // the next), so the published edge is refreshed and the check repeated every
        // deadlock_timeout rather than done once.
        let result = loop {
            me.waiting_for
                .store(lock.holder.load(Ordering::SeqCst), Ordering::SeqCst);
            tokio::select! {
                g = &mut acquire => break Ok(g),
                _ = &mut cancelled => break Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request")),
                _ = tokio::time::sleep(deadlock_timeout) => {
                    me.waiting_for
                        .store(lock.holder.load(Ordering::SeqCst), Ordering::SeqCst);
                    if self.closes_cycle(me).is_some() {
                        break Err(PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
                            .with_detail(format!("Process {} waits for ExclusiveLock on tuple of relation {}; blocked by another process.", me.pid, key.0))
                            .with_hint("See server log for query details."));
                    }
                }
            }
        };
        me.waiting_for.store(0, Ordering::SeqCst);
        result
    }
}

/// Registers a session's slot for its lifetime.
pub fn register_slot(mgr: &Arc<TxnManager>, pid: i32) -> Arc<Slot> {
    mgr.slots.register(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_soon_leaves_out_transactions_idle_past_the_limit() {
        let txns = TxnManager::new(10, CommitLog::new(10));
        let slots: Vec<_> = (0..3).map(|pid| txns.slots.register(pid)).collect();
        for s in &slots {
            s.xid.store(txns.assign_xid(), Ordering::Relaxed);
        }
        assert_eq!(txns.writing_soon(0), 3);
        slots[0].idle_since.store(clock_ms(), Ordering::Relaxed);
        slots[1].idle_since.store(clock_ms(), Ordering::Relaxed);
        // Idle, but not yet for the limit: still expected to commit soon.
        assert_eq!(txns.writing_soon(60_000), 3);
        assert_eq!(txns.writing_soon(0), 1);
        // A slot without an xid (its transaction ended) is not subtracted.
        slots[1].xid.store(0, Ordering::Relaxed);
        txns.done_writing();
        assert_eq!(txns.writing(), 2);
        assert_eq!(txns.writing_soon(0), 1);
    }
}
