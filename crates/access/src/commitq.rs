//! Commits waiting for durability, made visible by the WAL writer in log order.
//!
//! Early lock release: a synchronous commit is *pre-committed* as soon as its commit record is
//! in the WAL buffer (`CommitLog::is_logged`); row-lock waiters may build on its versions from
//! then on, instead of holding their row through its flush. Visibility to snapshots still waits
//! for durability: the commit is queued here, in LSN order (pushed under the WAL insert lock),
//! and the writer thread's durable hook gives each queued xid its CSN once the WAL is flushed
//! past its record, before releasing any flush waiter. Hence
//! - an acknowledged commit is durable (the client hears back only after the flush);
//! - no snapshot sees a commit before it is durable;
//! - CSNs follow log order among these commits, so a transaction that built on a
//!   pre-committed one never becomes visible before it;
//! - once `flushed_lsn >= L`, every queued commit logged before L is visible (what
//!   `Engine::settle` relies on).

use keel_storage::Wal;
use keel_txn::TxnManager;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct CommitQueue {
    /// (end LSN of the commit record, xid), ascending LSN.
    queue: Mutex<VecDeque<(u64, u64)>>,
}

impl CommitQueue {
    /// Queues a logged commit. Must be called under the WAL insert lock (`Wal::log_then`), so
    /// the queue stays in LSN order.
    pub(crate) fn push(&self, lsn: u64, xid: u64) {
        self.queue.lock().push_back((lsn, xid));
    }

    /// Makes the WAL writer publish queued commits as it flushes them.
    pub(crate) fn attach(self: &Arc<Self>, wal: &Wal, txns: Arc<TxnManager>) {
        let q = self.clone();
        wal.on_durable(Box::new(move |flushed| q.release(flushed, &txns)));
    }

    /// Commit record end of `xid` while it waits here (logged, not yet durable).
    pub(crate) fn lsn_of(&self, xid: u64) -> Option<u64> {
        let q = self.queue.lock();
        q.iter()
            .rev()
            .find(|&&(_, x)| x == xid)
            .map(|&(lsn, _)| lsn)
    }

    fn release(&self, flushed: u64, txns: &TxnManager) {
        let mut q = self.queue.lock();
        while let Some(&(lsn, xid)) = q.front() {
            if lsn > flushed {
                break;
            }
            q.pop_front();
            txns.mark_committed(xid);
        }
    }
}
