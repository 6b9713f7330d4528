//! Tuple locks: a FIFO queue per row, so that when a row's holder commits only the next
//! waiter wakes instead of every waiter (PostgreSQL's LockTuple before XactLockTableWait).
//!
//! A writer that finds a row held by another transaction first takes the row's tuple lock
//! (waiting in line behind other waiters), then waits for the holder's xid, then retries its
//! write and releases the tuple lock. The tuple lock's holder publishes its xid so waiters in
//! line can report who they wait for to deadlock detection.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A row: (relation file, root tid as u64).
pub type TupleKey = (u32, u64);

pub struct TupleLock {
    queue: Arc<tokio::sync::Mutex<()>>,
    /// Xid of the transaction holding the lock (0 when free).
    pub holder: AtomicU64,
}

#[derive(Default)]
pub struct TupleLocks {
    map: Mutex<HashMap<TupleKey, Arc<TupleLock>>>,
    /// Entries in `map`, readable without its mutex (zero on an uncontended server).
    len: AtomicUsize,
}

/// A held tuple lock; releasing it lets the next waiter in.
pub struct TupleGuard {
    key: TupleKey,
    lock: Arc<TupleLock>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl TupleGuard {
    pub fn key(&self) -> TupleKey {
        self.key
    }
}

impl TupleLocks {
    pub(crate) fn entry(&self, key: TupleKey) -> Arc<TupleLock> {
        let mut map = self.map.lock();
        let lock = map
            .entry(key)
            .or_insert_with(|| {
                Arc::new(TupleLock {
                    queue: Arc::new(tokio::sync::Mutex::new(())),
                    holder: AtomicU64::new(0),
                })
            })
            .clone();
        self.len.store(map.len(), Ordering::Relaxed);
        lock
    }

    /// Whether some writer holds or waits for row `key`'s tuple lock. A writer that finds
    /// such a row free must still queue (fairness: see `Engine::wait`).
    pub fn is_queued(&self, key: TupleKey) -> bool {
        self.len.load(Ordering::Relaxed) != 0 && self.map.lock().contains_key(&key)
    }

    pub(crate) async fn acquire(
        &self,
        key: TupleKey,
        lock: Arc<TupleLock>,
        xid: u64,
    ) -> TupleGuard {
        let guard = lock.queue.clone().lock_owned().await;
        lock.holder.store(xid, Ordering::SeqCst);
        TupleGuard {
            key,
            lock,
            guard: Some(guard),
        }
    }

    /// Releases a tuple lock and forgets the row's entry when nobody else refers to it.
    pub fn release(&self, mut g: TupleGuard) {
        g.lock.holder.store(0, Ordering::SeqCst);
        g.guard.take();
        let mut map = self.map.lock();
        // One reference in the map, one in `g`: nobody waits.
        if Arc::strong_count(&g.lock) == 2 {
            map.remove(&g.key);
            self.len.store(map.len(), Ordering::Relaxed);
        }
    }
}
