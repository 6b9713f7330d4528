//! Waiting for a relation lock, and deadlock detection over every kind of wait.

use crate::rellock::{Acquire, HeldLock, LockMode, Owner, Wait, decode_wait, encode_wait};
use crate::{Slot, TxnManager};
use keel_common::{PgError, PgResult, sqlstate};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Limits on one relation-lock wait.
pub struct LockLimits {
    /// NOWAIT: fail at once instead of queueing.
    pub nowait: bool,
    pub deadlock_timeout: Duration,
    /// `lock_timeout`, if set.
    pub lock_timeout: Option<Duration>,
    /// The statement's `statement_timeout` deadline, if any.
    pub statement_deadline: Option<tokio::time::Instant>,
}

/// What a relation-lock request ended with, short of an error.
pub enum Locked {
    Granted(HeldLock),
    /// NOWAIT and the lock was not free.
    Busy,
}

/// A queued request that gives its place up (or, if granted meanwhile, the lock) when
/// dropped before it resolved: a statement abandoned mid-wait never leaves a stale entry.
struct Pending<'a> {
    txns: &'a TxnManager,
    me: &'a Slot,
    wait: Option<Wait>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.wait.take()
            && self.txns.rel_locks.cancel_wait(&w)
        {
            self.txns.rel_locks.release_all(self.me, &[w.held()]);
        }
        self.me.waiting_rel.store(0, Ordering::SeqCst);
    }
}

impl TxnManager {
    /// Takes `mode` on relation `rel` for the transaction of slot `me`, waiting as long as the
    /// limits allow. Fails with 55P03 on `lock_timeout`, 57014 on statement timeout or
    /// cancellation, and 40P01 when the wait closes a cycle of waits.
    pub async fn lock_relation(
        &self,
        me: &Slot,
        rel: u32,
        mode: LockMode,
        limits: &LockLimits,
        cancelled: impl Future<Output = ()>,
    ) -> PgResult<Locked> {
        let wait = match self
            .rel_locks
            .try_lock(&self.slots, me, rel, mode, limits.nowait)
        {
            None => return Ok(Locked::Busy),
            Some(Acquire::Granted(h)) => return Ok(Locked::Granted(h)),
            Some(Acquire::Queued(w)) => w,
        };
        me.waiting_rel
            .store(encode_wait(rel, mode), Ordering::SeqCst);
        let mut pending = Pending {
            txns: self,
            me,
            wait: Some(wait),
        };
        let lock_deadline = limits.lock_timeout.map(|d| tokio::time::Instant::now() + d);
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        let result = {
            let Some(w) = pending.wait.as_ref() else {
                return Err(PgError::internal("relation lock wait lost"));
            };
            let granted = w.granted();
            tokio::pin!(granted);
            tokio::pin!(cancelled);
            let mut checked = false;
            loop {
                tokio::select! {
                    _ = &mut granted => break Ok(()),
                    _ = &mut cancelled => break Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to user request")),
                    _ = tokio::time::sleep_until(lock_deadline.unwrap_or(far)), if lock_deadline.is_some() => {
                        break Err(PgError::new(sqlstate::LOCK_NOT_AVAILABLE, "canceling statement due to lock timeout"));
                    }
                    _ = tokio::time::sleep_until(limits.statement_deadline.unwrap_or(far)), if limits.statement_deadline.is_some() => {
                        break Err(PgError::new(sqlstate::QUERY_CANCELED, "canceling statement due to statement timeout"));
                    }
                    _ = tokio::time::sleep(limits.deadlock_timeout), if !checked => {
                        checked = true;
                        if let Some(other) = self.closes_cycle(me) {
                            break Err(PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
                                .with_detail(format!("Process {} waits for {} on relation {rel} of database {}; blocked by process {other}.", me.pid, mode.name(), crate::DATABASE_OID))
                                .with_hint("See server log for query details."));
                        }
                    }
                }
            }
        };
        let Some(w) = pending.wait.take() else {
            return Err(PgError::internal("relation lock wait lost"));
        };
        me.waiting_rel.store(0, Ordering::SeqCst);
        match result {
            Ok(()) => Ok(Locked::Granted(w.held())),
            // Granted while failing: the lock is held (and released with the transaction).
            Err(_) if self.rel_locks.cancel_wait(&w) => Ok(Locked::Granted(w.held())),
            Err(e) => Err(e),
        }
    }

    /// Whether `me`'s wait closes a cycle of waits; if so, the owner `me` waits for on it.
    /// Edges: a wait for an xid points to the slot holding that xid; a relation-lock wait to
    /// the holders of conflicting modes and conflicting requests queued before it.
    pub(crate) fn closes_cycle(&self, me: &Slot) -> Option<Owner> {
        let mut nodes: Vec<(Owner, u64, u64, u64)> = Vec::new();
        self.slots.for_each(|s| {
            nodes.push((
                s.pid,
                s.xid.load(Ordering::SeqCst),
                // A wait for a subtransaction's xid is a wait for its top-level owner.
                self.clog.top_of(s.waiting_for.load(Ordering::SeqCst)),
                s.waiting_rel.load(Ordering::SeqCst),
            ))
        });
        let by_xid: HashMap<u64, Owner> = nodes
            .iter()
            .filter(|n| n.1 != 0)
            .map(|n| (n.1, n.0))
            .collect();
        let mut edges: HashMap<Owner, Vec<Owner>> = HashMap::new();
        // Advisory waits point to the slots of the sessions holding the key.
        let mut by_backend: HashMap<i32, Vec<Owner>> = HashMap::new();
        let mut adv_waits: Vec<(Owner, i32, u64)> = Vec::new();
        self.slots.for_each(|s| {
            let backend = s.backend_pid.load(Ordering::SeqCst);
            by_backend.entry(backend).or_default().push(s.pid);
            let w = s.waiting_adv.load(Ordering::SeqCst);
            if w != 0 {
                adv_waits.push((s.pid, backend, w));
            }
        });
        for (slot, backend, word) in adv_waits {
            let out = edges.entry(slot).or_default();
            for holder in self.advisory.blockers(backend, word) {
                out.extend(by_backend.get(&holder).into_iter().flatten());
            }
        }
        for &(pid, _, xid_wait, rel_wait) in &nodes {
            let out = edges.entry(pid).or_default();
            if let Some(&holder) = by_xid.get(&xid_wait)
                && xid_wait != 0
            {
                out.push(holder);
            }
            if let Some((rel, mode)) = decode_wait(rel_wait) {
                out.extend(self.rel_locks.blockers(rel, pid, mode));
            }
        }
        // Depth-first from each of my successors; reaching me again closes a cycle.
        let first = edges.get(&me.pid)?.clone();
        for start in first {
            let mut seen: Vec<Owner> = Vec::new();
            let mut todo = vec![start];
            while let Some(n) = todo.pop() {
                if n == me.pid {
                    return Some(start);
                }
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                if let Some(next) = edges.get(&n) {
                    todo.extend(next);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::rellock::{Acquire, LockMode};
    use crate::{CommitLog, TxnManager};

    #[test]
    fn weak_locks_share_and_strong_ones_queue() {
        let txns = TxnManager::new(10, CommitLog::new(10));
        let a = txns.slots.register(1);
        let b = txns.slots.register(2);
        let c = txns.slots.register(3);
        let locks = &txns.rel_locks;
        let Some(Acquire::Granted(ha)) =
            locks.try_lock(&txns.slots, &a, 100, LockMode::RowExclusive, false)
        else {
            panic!("a's ROW EXCLUSIVE should be free");
        };
        assert!(matches!(
            locks.try_lock(&txns.slots, &b, 100, LockMode::AccessShare, false),
            Some(Acquire::Granted(_))
        ));
        // SHARE conflicts with a's fast-path ROW EXCLUSIVE: found, and queued behind it.
        assert!(
            locks
                .try_lock(&txns.slots, &c, 100, LockMode::Share, true)
                .is_none()
        );
        let Some(Acquire::Queued(w)) = locks.try_lock(&txns.slots, &c, 100, LockMode::Share, false)
        else {
            panic!("c's SHARE should wait");
        };
        assert_eq!(locks.blockers(100, 3, LockMode::Share), vec![1]);
        locks.release_all(&a, &[ha]);
        assert!(!locks.cancel_wait(&w) || locks.blockers(100, 3, LockMode::Share).is_empty());
    }

    #[test]
    fn a_cycle_through_relation_locks_is_found() {
        let txns = TxnManager::new(10, CommitLog::new(10));
        let a = txns.slots.register(1);
        let b = txns.slots.register(2);
        let locks = &txns.rel_locks;
        let take =
            |s, rel| match locks.try_lock(&txns.slots, s, rel, LockMode::AccessExclusive, false) {
                Some(Acquire::Granted(_)) => None,
                Some(Acquire::Queued(w)) => Some(w),
                None => panic!("not nowait"),
            };
        assert!(take(&a, 100).is_none());
        assert!(take(&b, 200).is_none());
        let wa = take(&a, 200).expect("a waits for b");
        a.waiting_rel.store(
            crate::rellock::encode_wait(200, LockMode::AccessExclusive),
            std::sync::atomic::Ordering::SeqCst,
        );
        assert_eq!(txns.closes_cycle(&a), None);
        let wb = take(&b, 100).expect("b waits for a");
        b.waiting_rel.store(
            crate::rellock::encode_wait(100, LockMode::AccessExclusive),
            std::sync::atomic::Ordering::SeqCst,
        );
        assert_eq!(txns.closes_cycle(&a), Some(2));
        assert!(!locks.cancel_wait(&wa));
        assert!(!locks.cancel_wait(&wb));
    }
}
