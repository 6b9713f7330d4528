//! Per-session state that other sessions read: cache-line padded, written only by its owner.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Published while a snapshot is being taken (see the horizon protocol in lib.rs).
pub const PENDING: u64 = u64::MAX;

#[repr(align(128))]
#[derive(Default)]
pub struct Slot {
    pub pid: i32,
    /// CSN of the snapshot in use, 0 if none.
    pub snapshot_csn: AtomicU64,
    /// The session's current xid, 0 if none.
    pub xid: AtomicU64,
    /// The xid this session waits for, 0 if none.
    pub waiting_for: AtomicU64,
    /// The relation lock this session waits for ([`crate::rellock::encode_wait`]), 0 if none.
    pub waiting_rel: AtomicU64,
    /// The advisory lock this session waits for (`AdvisoryKey::wait_word`), 0 if none.
    pub waiting_adv: AtomicU64,
    /// The backend (session) pid of the transaction using this slot, 0 if unknown (pg_locks).
    pub backend_pid: std::sync::atomic::AtomicI32,
    /// Weak relation locks held on the fast path (see rellock.rs).
    pub fast: Mutex<crate::rellock::FastPath>,
    /// When the session, holding an xid, last went idle inside its transaction block
    /// ([`crate::clock_ms`]); 0 while a statement runs, and once the transaction is decided.
    pub idle_since: AtomicU64,
}

impl Slot {
    pub fn release_snapshot(&self) {
        self.snapshot_csn.store(0, Ordering::SeqCst);
    }
}

#[derive(Default)]
pub struct SlotRegistry {
    slots: Mutex<Vec<Arc<Slot>>>,
}

impl SlotRegistry {
    pub fn register(&self, pid: i32) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            pid,
            ..Slot::default()
        });
        self.slots.lock().push(slot.clone());
        slot
    }

    pub fn unregister(&self, slot: &Arc<Slot>) {
        self.slots.lock().retain(|s| !Arc::ptr_eq(s, slot));
    }

    pub fn for_each(&self, mut f: impl FnMut(&Slot)) {
        for s in self.slots.lock().iter() {
            f(s);
        }
    }

    pub fn len(&self) -> usize {
        self.slots.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
