//! Relation locks: PostgreSQL's eight table lock modes, held by a transaction until it ends.
//!
//! Two places hold a granted lock:
//! - **The fast path**, for the weak modes (ACCESS SHARE, ROW SHARE, ROW EXCLUSIVE) that every
//!   SELECT and DML statement takes: a few entries in the holder's own [`Slot`], behind its
//!   own mutex. Taking such a lock writes no shared cache line, so sessions that all touch
//!   one table never serialize on it.
//! - **The shared table**, sharded by relation: every other lock, its wait queue, and weak
//!   locks taken while a strong lock exists.
//!
//! A weak lock may go to the fast path only while no strong lock (SHARE and above, the modes
//! that conflict with weak ones) exists on relations of its `strong` partition. A strong
//! locker first counts itself in that partition, then moves every fast-path entry for its
//! relation into the shared table, and only then checks conflicts there. Both sides read the
//! count and the entries under the holder's slot mutex, so either the weak locker sees the
//! count and goes to the shared table, or its entry is in the slot before the strong locker
//! scans it (PostgreSQL's FastPathStrongRelationLocks).
//!
//! Lock order: a slot's fast-path mutex before a shard mutex; the slot registry's mutex
//! before either. Nothing waits while holding any of them.
//!
//! A request is granted when it conflicts with no mode another holder has and, unless the
//! requester already holds a lock on the relation, with no request waiting before it (a
//! stream of readers cannot starve a waiting ACCESS EXCLUSIVE). A release grants waiters in
//! queue order, each against the holders and the waiters still ahead of it.

use crate::slots::{Slot, SlotRegistry};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// PostgreSQL's relation lock modes, weakest first (`LOCKMODE` 1..=8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    AccessShare = 1,
    RowShare = 2,
    RowExclusive = 3,
    ShareUpdateExclusive = 4,
    Share = 5,
    ShareRowExclusive = 6,
    Exclusive = 7,
    AccessExclusive = 8,
}

impl LockMode {
    pub const ALL: [LockMode; 8] = [
        LockMode::AccessShare,
        LockMode::RowShare,
        LockMode::RowExclusive,
        LockMode::ShareUpdateExclusive,
        LockMode::Share,
        LockMode::ShareRowExclusive,
        LockMode::Exclusive,
        LockMode::AccessExclusive,
    ];

    fn bit(self) -> u16 {
        1 << self as u16
    }

    /// The modes this one conflicts with, as bits (PostgreSQL's conflict table).
    fn conflicts(self) -> u16 {
        use LockMode::*;
        let set: &[LockMode] = match self {
            AccessShare => &[AccessExclusive],
            RowShare => &[Exclusive, AccessExclusive],
            RowExclusive => &[Share, ShareRowExclusive, Exclusive, AccessExclusive],
            ShareUpdateExclusive => &[
                ShareUpdateExclusive,
                Share,
                ShareRowExclusive,
                Exclusive,
                AccessExclusive,
            ],
            Share => &[
                RowExclusive,
                ShareUpdateExclusive,
                ShareRowExclusive,
                Exclusive,
                AccessExclusive,
            ],
            ShareRowExclusive => &[
                RowExclusive,
                ShareUpdateExclusive,
                Share,
                ShareRowExclusive,
                Exclusive,
                AccessExclusive,
            ],
            Exclusive => &[
                RowShare,
                RowExclusive,
                ShareUpdateExclusive,
                Share,
                ShareRowExclusive,
                Exclusive,
                AccessExclusive,
            ],
            AccessExclusive => &LockMode::ALL,
        };
        set.iter().fold(0, |m, l| m | l.bit())
    }

    /// Taken by plain reads and writes: eligible for the fast path.
    fn is_weak(self) -> bool {
        self <= LockMode::RowExclusive
    }

    /// Conflicts with a weak mode: fast-path holders must be found before it is granted.
    fn is_strong(self) -> bool {
        self >= LockMode::Share
    }

    /// The name PostgreSQL prints (pg_locks.mode, deadlock reports).
    pub fn name(self) -> &'static str {
        use LockMode::*;
        match self {
            AccessShare => "AccessShareLock",
            RowShare => "RowShareLock",
            RowExclusive => "RowExclusiveLock",
            ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            Share => "ShareLock",
            ShareRowExclusive => "ShareRowExclusiveLock",
            Exclusive => "ExclusiveLock",
            AccessExclusive => "AccessExclusiveLock",
        }
    }

    fn from_u8(m: u8) -> Option<LockMode> {
        LockMode::ALL.get((m as usize).wrapping_sub(1)).copied()
    }
}

/// Fast-path entries one slot can hold (PostgreSQL's FP_LOCK_SLOTS_PER_BACKEND).
pub const FAST_PATH_SLOTS: usize = 16;
const STRONG_PARTITIONS: usize = 1024;
const SHARDS: usize = 16;

/// A slot's fast-path entries: relation oid and the bits of the weak modes held on it.
#[derive(Default)]
pub struct FastPath {
    entries: Vec<(u32, u16)>,
}

/// Who holds or waits for a lock: the transaction's slot, by its pid.
pub type Owner = i32;

struct Waiter {
    owner: Owner,
    mode: LockMode,
    granted: AtomicBool,
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct Entry {
    /// Holders other than fast-path ones, with the bits of the modes each holds.
    granted: Vec<(Owner, u16)>,
    waiting: VecDeque<Arc<Waiter>>,
}

impl Entry {
    fn held_by_others(&self, owner: Owner) -> u16 {
        self.granted
            .iter()
            .filter(|g| g.0 != owner)
            .fold(0, |m, g| m | g.1)
    }

    fn grant(&mut self, owner: Owner, mode: LockMode) {
        match self.granted.iter_mut().find(|g| g.0 == owner) {
            Some(g) => g.1 |= mode.bit(),
            None => self.granted.push((owner, mode.bit())),
        }
    }

    /// Whether `owner`'s request for `mode` can be granted now (see the module comment).
    fn grantable(&self, owner: Owner, mode: LockMode) -> bool {
        if self.held_by_others(owner) & mode.conflicts() != 0 {
            return false;
        }
        let holds = self.granted.iter().any(|g| g.0 == owner);
        holds
            || !self
                .waiting
                .iter()
                .any(|w| w.mode.conflicts() & mode.bit() != 0)
    }

    /// Grants waiters in queue order while they are compatible with the holders and with the
    /// requests still waiting ahead of them.
    fn wake_waiters(&mut self) {
        let mut ahead: u16 = 0;
        let mut i = 0;
        while i < self.waiting.len() {
            let w = self.waiting[i].clone();
            let free = self.held_by_others(w.owner) & w.mode.conflicts() == 0
                && ahead & w.mode.conflicts() == 0;
            if free {
                self.grant(w.owner, w.mode);
                self.waiting.remove(i);
                w.granted.store(true, Ordering::Release);
                w.wake.notify_one();
            } else {
                ahead |= w.mode.bit();
                i += 1;
            }
        }
    }
}

/// How a granted lock is held, for its release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldLock {
    pub rel: u32,
    pub mode: LockMode,
    fast: bool,
}

/// What `RelLocks::try_lock` answered.
pub enum Acquire {
    Granted(HeldLock),
    /// Queued: await [`Wait::granted`], or give the place up with [`RelLocks::cancel_wait`].
    Queued(Wait),
}

/// A queued request.
pub struct Wait {
    pub rel: u32,
    pub mode: LockMode,
    waiter: Arc<Waiter>,
}

impl Wait {
    /// Resolves once a release granted the lock.
    pub async fn granted(&self) {
        loop {
            if self.waiter.granted.load(Ordering::Acquire) {
                return;
            }
            self.waiter.wake.notified().await;
        }
    }

    pub fn held(&self) -> HeldLock {
        HeldLock {
            rel: self.rel,
            mode: self.mode,
            fast: false,
        }
    }
}

pub struct RelLocks {
    /// Strong locks granted or requested, per partition of relation oids.
    strong: Box<[AtomicU32]>,
    shards: Box<[Mutex<HashMap<u32, Entry>>]>,
}

impl Default for RelLocks {
    fn default() -> Self {
        RelLocks {
            strong: (0..STRONG_PARTITIONS).map(|_| AtomicU32::new(0)).collect(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

fn partition(rel: u32) -> usize {
    (rel.wrapping_mul(0x9E37_79B9) >> 22) as usize % STRONG_PARTITIONS
}

impl RelLocks {
    fn shard(&self, rel: u32) -> &Mutex<HashMap<u32, Entry>> {
        &self.shards[rel as usize % SHARDS]
    }

    /// Takes `mode` on `rel` for `me` if it is free, else queues the request (or, with
    /// `nowait`, answers None without queueing).
    pub fn try_lock(
        &self,
        slots: &SlotRegistry,
        me: &Slot,
        rel: u32,
        mode: LockMode,
        nowait: bool,
    ) -> Option<Acquire> {
        let held = |fast| HeldLock { rel, mode, fast };
        if mode.is_weak() {
            let mut fp = me.fast.lock();
            if self.strong[partition(rel)].load(Ordering::SeqCst) == 0 {
                if let Some(e) = fp.entries.iter_mut().find(|e| e.0 == rel) {
                    e.1 |= mode.bit();
                    return Some(Acquire::Granted(held(true)));
                }
                if fp.entries.len() < FAST_PATH_SLOTS {
                    fp.entries.push((rel, mode.bit()));
                    return Some(Acquire::Granted(held(true)));
                }
            }
        }
        if mode.is_strong() {
            self.strong[partition(rel)].fetch_add(1, Ordering::SeqCst);
            self.transfer_fast_path(slots, rel);
        }
        let mut shard = self.shard(rel).lock();
        let entry = shard.entry(rel).or_default();
        if entry.grantable(me.pid, mode) {
            entry.grant(me.pid, mode);
            return Some(Acquire::Granted(held(false)));
        }
        if nowait {
            if entry.granted.is_empty() && entry.waiting.is_empty() {
                shard.remove(&rel);
            }
            drop(shard);
            if mode.is_strong() {
                self.strong[partition(rel)].fetch_sub(1, Ordering::SeqCst);
            }
            return None;
        }
        let waiter = Arc::new(Waiter {
            owner: me.pid,
            mode,
            granted: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        });
        entry.waiting.push_back(waiter.clone());
        Some(Acquire::Queued(Wait { rel, mode, waiter }))
    }

    /// Moves every fast-path lock on `rel` into the shared table, where a strong request
    /// sees it.
    fn transfer_fast_path(&self, slots: &SlotRegistry, rel: u32) {
        slots.for_each(|s| {
            let mut fp = s.fast.lock();
            if let Some(i) = fp.entries.iter().position(|e| e.0 == rel) {
                let (_, bits) = fp.entries.swap_remove(i);
                let mut shard = self.shard(rel).lock();
                let entry = shard.entry(rel).or_default();
                match entry.granted.iter_mut().find(|g| g.0 == s.pid) {
                    Some(g) => g.1 |= bits,
                    None => entry.granted.push((s.pid, bits)),
                }
            }
        });
    }

    /// Gives up a queued request (timeout, cancel, deadlock). True if it was granted
    /// meanwhile: the caller then holds the lock.
    pub fn cancel_wait(&self, wait: &Wait) -> bool {
        let mut shard = self.shard(wait.rel).lock();
        if wait.waiter.granted.load(Ordering::Acquire) {
            return true;
        }
        if let Some(entry) = shard.get_mut(&wait.rel) {
            entry.waiting.retain(|w| !Arc::ptr_eq(w, &wait.waiter));
            // Requests queued behind this one may be free now.
            entry.wake_waiters();
            if entry.granted.is_empty() && entry.waiting.is_empty() {
                shard.remove(&wait.rel);
            }
        }
        drop(shard);
        if wait.mode.is_strong() {
            self.strong[partition(wait.rel)].fetch_sub(1, Ordering::SeqCst);
        }
        false
    }

    /// Releases every lock in `held` (all of one owner's, at its transaction's end).
    pub fn release_all(&self, me: &Slot, held: &[HeldLock]) {
        // Relations whose locks are in the shared table: taken there, or taken on the fast
        // path and moved there by a strong locker since.
        let mut shared: Vec<u32> = Vec::new();
        if held.iter().any(|h| h.fast) {
            // Mode by mode, as each was granted: the entry may have been moved and a later
            // weak lock on the same relation taken on the fast path again.
            let mut fp = me.fast.lock();
            for h in held.iter().filter(|h| h.fast) {
                match fp
                    .entries
                    .iter()
                    .position(|e| e.0 == h.rel && e.1 & h.mode.bit() != 0)
                {
                    Some(i) => {
                        fp.entries[i].1 &= !h.mode.bit();
                        if fp.entries[i].1 == 0 {
                            fp.entries.swap_remove(i);
                        }
                    }
                    None => shared.push(h.rel),
                }
            }
        }
        shared.extend(held.iter().filter(|h| !h.fast).map(|h| h.rel));
        shared.sort_unstable();
        shared.dedup();
        for rel in shared {
            // The owner's whole entry: every mode it held on the relation.
            let mut shard = self.shard(rel).lock();
            if let Some(entry) = shard.get_mut(&rel)
                && let Some(i) = entry.granted.iter().position(|g| g.0 == me.pid)
            {
                entry.granted.swap_remove(i);
                entry.wake_waiters();
                if entry.granted.is_empty() && entry.waiting.is_empty() {
                    shard.remove(&rel);
                }
            }
        }
        for h in held.iter().filter(|h| h.mode.is_strong()) {
            self.strong[partition(h.rel)].fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The owners a request of `owner` for `mode` on `rel` waits for: holders of conflicting
    /// modes and conflicting requests queued before it (deadlock detection).
    pub fn blockers(&self, rel: u32, owner: Owner, mode: LockMode) -> Vec<Owner> {
        let shard = self.shard(rel).lock();
        let Some(entry) = shard.get(&rel) else {
            return Vec::new();
        };
        let mut out: Vec<Owner> = entry
            .granted
            .iter()
            .filter(|g| g.0 != owner && g.1 & mode.conflicts() != 0)
            .map(|g| g.0)
            .collect();
        for w in &entry.waiting {
            if w.owner == owner {
                break;
            }
            if w.mode.conflicts() & mode.bit() != 0 {
                out.push(w.owner);
            }
        }
        out
    }
}

/// One lock or request as pg_locks shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    pub rel: u32,
    /// The holder's or requester's backend pid.
    pub pid: i32,
    pub mode: LockMode,
    pub granted: bool,
    pub fastpath: bool,
}

impl RelLocks {
    /// Every relation lock held or requested now: fast-path entries, then the shared
    /// table's holders and queues. Not one atomic picture (as PostgreSQL's is not either
    /// for fast-path locks): each slot and shard is read under its own mutex.
    pub fn snapshot(&self, slots: &SlotRegistry) -> Vec<LockInfo> {
        let mut backend: HashMap<Owner, i32> = HashMap::new();
        let mut out = Vec::new();
        slots.for_each(|s| {
            let pid = s.backend_pid.load(Ordering::Relaxed);
            backend.insert(s.pid, pid);
            for &(rel, bits) in &s.fast.lock().entries {
                for mode in LockMode::ALL.iter().filter(|m| bits & m.bit() != 0) {
                    out.push(LockInfo {
                        rel,
                        pid,
                        mode: *mode,
                        granted: true,
                        fastpath: true,
                    });
                }
            }
        });
        let pid_of = |o: Owner| backend.get(&o).copied().unwrap_or(0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            for (&rel, e) in shard.iter() {
                for &(owner, bits) in &e.granted {
                    for mode in LockMode::ALL.iter().filter(|m| bits & m.bit() != 0) {
                        out.push(LockInfo {
                            rel,
                            pid: pid_of(owner),
                            mode: *mode,
                            granted: true,
                            fastpath: false,
                        });
                    }
                }
                for w in &e.waiting {
                    out.push(LockInfo {
                        rel,
                        pid: pid_of(w.owner),
                        mode: w.mode,
                        granted: false,
                        fastpath: false,
                    });
                }
            }
        }
        out
    }
}

/// A relation wait as published in a slot: `rel << 8 | mode`, 0 when none.
pub fn encode_wait(rel: u32, mode: LockMode) -> u64 {
    (rel as u64) << 8 | mode as u64
}

pub fn decode_wait(w: u64) -> Option<(u32, LockMode)> {
    Some(((w >> 8) as u32, LockMode::from_u8((w & 0xff) as u8)?))
}
