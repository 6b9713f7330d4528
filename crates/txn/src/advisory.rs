//! Advisory locks (pg_advisory_lock and friends): application-defined keys locked in share
//! or exclusive mode, at session level (held until unlocked or the session ends, counted:
//! each lock needs its own unlock) or transaction level (held until the transaction ends).
//!
//! Owners are sessions (backend pids): a session's own locks never conflict with each other,
//! whatever their level or mode, as PostgreSQL's locks of one backend do not. A request is
//! granted when no other session holds a conflicting mode (exclusive conflicts with both,
//! share with exclusive); there is no queue, so a waiting exclusive request does not hold
//! back later share requests (PostgreSQL's does).
//!
//! Waiting blocks the calling thread (the caller hands its async worker's other sessions to
//! another thread first, as pg_sleep does) on a condition variable, in slices, so that a
//! cancel request, statement_timeout or a deadlock (found through `TxnManager::closes_cycle`,
//! which follows `Slot::waiting_adv` to the slots of the holding sessions) ends it.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;

/// A key: pg_advisory_lock(bigint) and pg_advisory_lock(int, int) are separate spaces
/// (pg_locks: objsubid 1 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdvisoryKey {
    pub key: u64,
    /// 1: one bigint key; 2: two int keys (high and low 32 bits).
    pub space: u8,
}

impl AdvisoryKey {
    pub fn int8(k: i64) -> AdvisoryKey {
        AdvisoryKey {
            key: k as u64,
            space: 1,
        }
    }

    pub fn pair(a: i32, b: i32) -> AdvisoryKey {
        AdvisoryKey {
            key: ((a as u32 as u64) << 32) | b as u32 as u64,
            space: 2,
        }
    }

    /// The word a waiting slot publishes: never 0.
    pub(crate) fn wait_word(self) -> u64 {
        (self.key.rotate_left(1) ^ u64::from(self.space)) | 1 << 63 | u64::from(self.space) << 61
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Session,
    Xact,
}

#[derive(Clone, Copy, Debug, Default)]
struct Holder {
    pid: i32,
    /// Counts per (level, mode): [session share, session exclusive, xact share, xact excl].
    counts: [u32; 4],
}

impl Holder {
    fn holds(&self) -> bool {
        self.counts.iter().any(|&c| c > 0)
    }

    fn exclusive(&self) -> bool {
        self.counts[1] > 0 || self.counts[3] > 0
    }
}

fn slot_of(level: Level, shared: bool) -> usize {
    match (level, shared) {
        (Level::Session, true) => 0,
        (Level::Session, false) => 1,
        (Level::Xact, true) => 2,
        (Level::Xact, false) => 3,
    }
}

/// One held lock as pg_locks shows it.
#[derive(Clone, Debug)]
pub struct AdvisoryHeld {
    pub key: AdvisoryKey,
    pub pid: i32,
    pub exclusive: bool,
}

#[derive(Default)]
pub struct AdvisoryLocks {
    table: Mutex<HashMap<AdvisoryKey, Vec<Holder>>>,
    released: Condvar,
    /// Requests waiting now, (pid, key, exclusive), for pg_locks and deadlock detection.
    waiting: Mutex<Vec<(i32, AdvisoryKey, bool)>>,
    /// Holds in the table (each counted lock once): every transaction end asks to release
    /// its session's transaction-level locks, and with none held anywhere that costs one
    /// load instead of the table's mutex.
    held: std::sync::atomic::AtomicUsize,
}

/// What a blocking acquire ended with.
pub enum AdvisoryWait {
    Granted,
    /// Asked to stop (cancel, timeout, deadlock): the error the caller reports.
    Stopped(keel_common::PgError),
}

impl AdvisoryLocks {
    fn conflicts(holders: &[Holder], pid: i32, shared: bool) -> bool {
        holders
            .iter()
            .any(|h| h.pid != pid && h.holds() && (h.exclusive() || !shared))
    }

    /// Takes the lock if no other session holds a conflicting mode.
    pub fn try_lock(&self, pid: i32, key: AdvisoryKey, shared: bool, level: Level) -> bool {
        let mut t = self.table.lock();
        let holders = t.entry(key).or_default();
        if Self::conflicts(holders, pid, shared) {
            if holders.is_empty() {
                t.remove(&key);
            }
            return false;
        }
        let i = match holders.iter().position(|h| h.pid == pid) {
            Some(i) => i,
            None => {
                holders.push(Holder {
                    pid,
                    counts: [0; 4],
                });
                holders.len() - 1
            }
        };
        holders[i].counts[slot_of(level, shared)] += 1;
        self.held.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        true
    }

    /// Takes the lock, waiting while another session holds a conflicting mode. `stop` is
    /// asked between slices of `slice`: an error ends the wait. The caller publishes the
    /// wait for deadlock detection around this call (`publish`).
    pub fn lock(
        &self,
        pid: i32,
        key: AdvisoryKey,
        shared: bool,
        level: Level,
        slice: std::time::Duration,
        mut stop: impl FnMut() -> Result<(), keel_common::PgError>,
    ) -> AdvisoryWait {
        if self.try_lock(pid, key, shared, level) {
            return AdvisoryWait::Granted;
        }
        self.waiting.lock().push((pid, key, !shared));
        let out = loop {
            {
                let mut t = self.table.lock();
                let busy = t.get(&key).is_some_and(|h| Self::conflicts(h, pid, shared));
                if busy {
                    self.released.wait_for(&mut t, slice);
                }
            }
            if self.try_lock(pid, key, shared, level) {
                break AdvisoryWait::Granted;
            }
            if let Err(e) = stop() {
                break AdvisoryWait::Stopped(e);
            }
        };
        let mut w = self.waiting.lock();
        if let Some(i) = w.iter().position(|x| x.0 == pid && x.1 == key) {
            w.swap_remove(i);
        }
        out
    }

    /// Releases one hold of (`level`, `shared`); false when there was none.
    pub fn unlock(&self, pid: i32, key: AdvisoryKey, shared: bool, level: Level) -> bool {
        let mut t = self.table.lock();
        let Some(holders) = t.get_mut(&key) else {
            return false;
        };
        let Some(h) = holders.iter_mut().find(|h| h.pid == pid) else {
            return false;
        };
        let c = &mut h.counts[slot_of(level, shared)];
        if *c == 0 {
            return false;
        }
        *c -= 1;
        self.held.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        holders.retain(Holder::holds);
        if holders.is_empty() {
            t.remove(&key);
        }
        drop(t);
        self.released.notify_all();
        true
    }

    /// Releases every lock `pid` holds at `level` (transaction end; session end for both).
    pub fn release_all(&self, pid: i32, level: Level) {
        if self.held.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            return;
        }
        let mut t = self.table.lock();
        let mut released = 0;
        t.retain(|_, holders| {
            for h in holders.iter_mut().filter(|h| h.pid == pid) {
                let (a, b) = match level {
                    Level::Session => (0, 1),
                    Level::Xact => (2, 3),
                };
                released += (h.counts[a] + h.counts[b]) as usize;
                h.counts[a] = 0;
                h.counts[b] = 0;
            }
            holders.retain(Holder::holds);
            !holders.is_empty()
        });
        drop(t);
        if released > 0 {
            self.held
                .fetch_sub(released, std::sync::atomic::Ordering::SeqCst);
            self.released.notify_all();
        }
    }

    /// Whether `pid` holds any lock at `level` (cheap: one lock of the table).
    pub fn holds_any(&self, pid: i32, level: Level) -> bool {
        let (a, b) = match level {
            Level::Session => (0, 1),
            Level::Xact => (2, 3),
        };
        self.table.lock().values().any(|hs| {
            hs.iter()
                .any(|h| h.pid == pid && h.counts[a] + h.counts[b] > 0)
        })
    }

    /// Sessions holding a mode that conflicts with `pid`'s request waiting on the key `word`
    /// stands for (deadlock detection).
    pub(crate) fn blockers(&self, pid: i32, word: u64) -> Vec<i32> {
        let waiting = self.waiting.lock().clone();
        let Some(&(_, key, exclusive)) = waiting
            .iter()
            .find(|w| w.0 == pid && w.1.wait_word() == word)
        else {
            return Vec::new();
        };
        let t = self.table.lock();
        t.get(&key)
            .map(|hs| {
                hs.iter()
                    .filter(|h| h.pid != pid && h.holds() && (h.exclusive() || exclusive))
                    .map(|h| h.pid)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Locks held and awaited now: (held, waiting) for pg_locks.
    pub fn snapshot(&self) -> (Vec<AdvisoryHeld>, Vec<AdvisoryHeld>) {
        let t = self.table.lock();
        let mut held = Vec::new();
        for (key, hs) in t.iter() {
            for h in hs {
                if h.counts[0] + h.counts[2] > 0 {
                    held.push(AdvisoryHeld {
                        key: *key,
                        pid: h.pid,
                        exclusive: false,
                    });
                }
                if h.exclusive() {
                    held.push(AdvisoryHeld {
                        key: *key,
                        pid: h.pid,
                        exclusive: true,
                    });
                }
            }
        }
        drop(t);
        let waiting = self
            .waiting
            .lock()
            .iter()
            .map(|&(pid, key, exclusive)| AdvisoryHeld {
                key,
                pid,
                exclusive,
            })
            .collect();
        (held, waiting)
    }
}

impl crate::TxnManager {
    /// Takes advisory lock `key` for session `pid`, waiting (blocking the thread) while
    /// another session holds a conflicting mode. `me` is the slot of the session's running
    /// transaction: the wait is published there, and after `deadlock_timeout` a wait that
    /// closes a cycle fails with 40P01. `stop` (cancel, statement_timeout) is asked between
    /// slices.
    #[allow(clippy::too_many_arguments)]
    pub fn advisory_lock(
        &self,
        me: &crate::Slot,
        pid: i32,
        key: AdvisoryKey,
        shared: bool,
        level: Level,
        deadlock_timeout: std::time::Duration,
        mut stop: impl FnMut() -> Result<(), keel_common::PgError>,
    ) -> Result<(), keel_common::PgError> {
        use std::sync::atomic::Ordering;
        if self.advisory.try_lock(pid, key, shared, level) {
            return Ok(());
        }
        me.waiting_adv.store(key.wait_word(), Ordering::SeqCst);
        let started = std::time::Instant::now();
        let mut checked = false;
        let slice = std::time::Duration::from_millis(10);
        let out = self.advisory.lock(pid, key, shared, level, slice, || {
            stop()?;
            if !checked && started.elapsed() >= deadlock_timeout {
                checked = true;
                if self.closes_cycle(me).is_some() {
                    let (hi, lo) = ((key.key >> 32) as u32, key.key as u32);
                    let mode = if shared { "ShareLock" } else { "ExclusiveLock" };
                    return Err(keel_common::PgError::new(
                        keel_common::sqlstate::DEADLOCK_DETECTED,
                        "deadlock detected",
                    )
                    .with_detail(format!(
                        "Process {pid} waits for {mode} on advisory lock [{},{hi},{lo},{}]; blocked by another process.",
                        crate::DATABASE_OID,
                        key.space
                    ))
                    .with_hint("See server log for query details."));
                }
            }
            Ok(())
        });
        me.waiting_adv.store(0, Ordering::SeqCst);
        match out {
            AdvisoryWait::Granted => Ok(()),
            AdvisoryWait::Stopped(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_conflict_and_own_locks_do_not() {
        let a = AdvisoryLocks::default();
        let k = AdvisoryKey::int8(7);
        assert!(a.try_lock(1, k, false, Level::Session));
        assert!(a.try_lock(1, k, true, Level::Xact));
        assert!(!a.try_lock(2, k, true, Level::Session));
        assert!(a.unlock(1, k, false, Level::Session));
        assert!(!a.unlock(1, k, false, Level::Session));
        // Still held shared at transaction level: a share request goes through.
        assert!(a.try_lock(2, k, true, Level::Session));
        assert!(!a.try_lock(3, k, false, Level::Session));
        a.release_all(1, Level::Xact);
        a.release_all(2, Level::Session);
        assert!(a.try_lock(3, k, false, Level::Session));
        assert_ne!(AdvisoryKey::int8(1), AdvisoryKey::pair(0, 1));
    }
}
