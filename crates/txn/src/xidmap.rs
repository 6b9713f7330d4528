//! The commit log: xid -> state/CSN, lock-free to read.
//!
//! A fixed top-level table of lazily allocated segments of 65,536 entries each. An entry is
//! 0 (in progress, or never used), `ABORTED`, `COMMITTING`, the CSN, or `CHILD | parent` for
//! a subtransaction's xid that has not aborted (pg_subtrans): its state is its top-level
//! transaction's, and the parent is always a top-level xid, so one hop resolves it. Xids
//! below the boot xid that have no entry committed before the restart are aborted (they were
//! in progress at the crash). A separate bitmap of "commit record logged" bits is what
//! checkpoints persist; a commit sets it for its subtransactions' xids too.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

const SEG_BITS: u32 = 16;
const SEG_LEN: usize = 1 << SEG_BITS;
const TOP_LEN: usize = 1 << 20;

const ABORTED: u64 = u64::MAX;
const COMMITTING: u64 = u64::MAX - 1;
/// Tag of a subtransaction's entry; the low bits hold its top-level xid. CSNs stay far below.
const CHILD: u64 = 1 << 62;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidStatus {
    InProgress,
    Committed(u64),
    Aborted,
}

/// A commit log entry as stored (`CommitLog::lookup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Status(XidStatus),
    /// A subtransaction that has not aborted: its fate is that of this top-level xid.
    Child(u64),
}

struct Segment {
    csn: Box<[AtomicU64]>,
    /// One bit per xid: its commit record is in the WAL.
    logged: Box<[AtomicU64]>,
}

pub struct CommitLog {
    top: Box<[AtomicPtr<Segment>]>,
    /// Xids below this were handed out before the last restart.
    boot_xid: u64,
}

impl CommitLog {
    /// `committed` lists the xids (below `boot_xid`) whose commit survived the restart.
    pub fn new(boot_xid: u64) -> CommitLog {
        let top = (0..TOP_LEN)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        CommitLog { top, boot_xid }
    }

    /// After redo: every xid below `next_xid` was handed out before the restart, so one
    /// without a commit by now was in progress at the crash and is aborted. (The boot xid
    /// given to `new` is only the last checkpoint's next xid; the log after it used more.)
    pub fn set_boot_xid(&mut self, next_xid: u64) {
        self.boot_xid = self.boot_xid.max(next_xid);
    }

    fn segment(&self, xid: u64) -> Option<&Segment> {
        let i = (xid >> SEG_BITS) as usize;
        let p = self.top.get(i)?.load(Ordering::Acquire);
        // SAFETY: segments are allocated once, published with Release, and freed only in
        // Drop, when no reader can exist.
        unsafe { p.as_ref() }
    }

    /// Allocates the segment holding `xid` if needed.
    pub fn ensure(&self, xid: u64) {
        let i = (xid >> SEG_BITS) as usize;
        let Some(slot) = self.top.get(i) else { return };
        if !slot.load(Ordering::Acquire).is_null() {
            return;
        }
        let seg = Box::into_raw(Box::new(Segment {
            csn: (0..SEG_LEN).map(|_| AtomicU64::new(0)).collect(),
            logged: (0..SEG_LEN / 64).map(|_| AtomicU64::new(0)).collect(),
        }));
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                seg,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: we created it and lost the race; nobody else saw it.
            drop(unsafe { Box::from_raw(seg) });
        }
    }

    fn entry(&self, xid: u64) -> Option<&AtomicU64> {
        self.segment(xid)
            .map(|s| &s.csn[(xid as usize) & (SEG_LEN - 1)])
    }

    #[inline]
    pub fn status(&self, xid: u64) -> XidStatus {
        match self.lookup(xid) {
            Lookup::Status(s) => s,
            Lookup::Child(top) => match self.lookup(top) {
                Lookup::Status(s) => s,
                // Parents are top-level xids; a corrupt chain reads as in progress.
                Lookup::Child(_) => XidStatus::InProgress,
            },
        }
    }

    /// The entry of `xid` as stored: its own state, or the top-level transaction a live
    /// subtransaction belongs to.
    #[inline]
    pub fn lookup(&self, xid: u64) -> Lookup {
        if xid == keel_common::Xid::FROZEN.0 {
            return Lookup::Status(XidStatus::Committed(crate::CSN_FROZEN));
        }
        if xid == keel_common::Xid::ABORTED.0 {
            return Lookup::Status(XidStatus::Aborted);
        }
        let in_progress = || {
            Lookup::Status(if xid < self.boot_xid {
                XidStatus::Aborted
            } else {
                XidStatus::InProgress
            })
        };
        let Some(e) = self.entry(xid) else {
            return in_progress();
        };
        loop {
            match e.load(Ordering::Acquire) {
                0 => return in_progress(),
                ABORTED => return Lookup::Status(XidStatus::Aborted),
                COMMITTING => std::hint::spin_loop(),
                v if v & CHILD != 0 => return Lookup::Child(v & !CHILD),
                csn => return Lookup::Status(XidStatus::Committed(csn)),
            }
        }
    }

    /// The top-level transaction `xid` belongs to: `xid` itself unless it is a live
    /// subtransaction's.
    #[inline]
    pub fn top_of(&self, xid: u64) -> u64 {
        match self.lookup(xid) {
            Lookup::Child(top) => top,
            Lookup::Status(_) => xid,
        }
    }

    /// Records `xid` as a subtransaction of top-level transaction `top`.
    pub fn set_parent(&self, xid: u64, top: u64) {
        self.ensure(xid);
        if let Some(e) = self.entry(xid) {
            e.store(CHILD | top, Ordering::SeqCst);
        }
    }

    pub fn set_committing(&self, xid: u64) {
        self.ensure(xid);
        if let Some(e) = self.entry(xid) {
            e.store(COMMITTING, Ordering::SeqCst);
        }
    }

    pub fn set_csn(&self, xid: u64, csn: u64) {
        self.ensure(xid);
        if let Some(e) = self.entry(xid) {
            e.store(csn, Ordering::SeqCst);
        }
    }

    pub fn set_aborted(&self, xid: u64) {
        self.ensure(xid);
        if let Some(e) = self.entry(xid) {
            e.store(ABORTED, Ordering::SeqCst);
        }
    }

    /// Records that `xid`'s commit record is in the WAL (called under the WAL insert lock, so
    /// a checkpoint's redo point and this bitmap agree).
    pub fn set_logged(&self, xid: u64) {
        self.ensure(xid);
        if let Some(s) = self.segment(xid) {
            let i = (xid as usize) & (SEG_LEN - 1);
            s.logged[i / 64].fetch_or(1 << (i % 64), Ordering::SeqCst);
        }
    }

    /// Whether `xid`'s commit record is in the WAL. While its status is still InProgress, the
    /// transaction is *pre-committed*: it commits once the WAL is flushed that far, or the server
    /// crashes, losing it together with everything logged after it.
    #[inline]
    pub fn is_logged(&self, xid: u64) -> bool {
        self.bit_logged(xid)
            || matches!(self.lookup(xid), Lookup::Child(top) if self.bit_logged(top))
    }

    #[inline]
    fn bit_logged(&self, xid: u64) -> bool {
        self.segment(xid).is_some_and(|s| {
            let i = (xid as usize) & (SEG_LEN - 1);
            s.logged[i / 64].load(Ordering::Acquire) & (1 << (i % 64)) != 0
        })
    }

    /// The "commit logged" bitmap for xids `0..end`, 1 bit per xid (checkpoints persist it).
    pub fn logged_bitmap(&self, end: u64) -> Vec<u8> {
        let mut out = vec![0u8; end.div_ceil(8) as usize];
        let mut xid = 0u64;
        while xid < end {
            if let Some(s) = self.segment(xid) {
                for (w, word) in s.logged.iter().enumerate() {
                    let v = word.load(Ordering::SeqCst);
                    if v == 0 {
                        continue;
                    }
                    for b in 0..64 {
                        let x = xid + (w * 64 + b) as u64;
                        if v & (1 << b) != 0 && x < end {
                            out[(x / 8) as usize] |= 1 << (x % 8);
                        }
                    }
                }
            }
            xid += SEG_LEN as u64;
        }
        out
    }

    /// Loads a persisted bitmap: those xids committed before the restart.
    pub fn load_bitmap(&self, bitmap: &[u8]) {
        for (byte_i, &byte) in bitmap.iter().enumerate() {
            if byte == 0 {
                continue;
            }
            for b in 0..8 {
                if byte & (1 << b) != 0 {
                    let xid = byte_i as u64 * 8 + b;
                    self.set_logged(xid);
                    self.set_csn(xid, crate::CSN_FROZEN);
                }
            }
        }
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        for p in self.top.iter() {
            let p = p.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: allocated by `ensure` with Box::into_raw; no readers remain.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_bitmap_round_trip() {
        let log = CommitLog::new(10);
        assert_eq!(log.status(5), XidStatus::Aborted);
        assert_eq!(log.status(12), XidStatus::InProgress);
        log.set_csn(12, 7);
        log.set_logged(12);
        assert_eq!(log.status(12), XidStatus::Committed(7));
        log.set_aborted(13);
        assert_eq!(log.status(13), XidStatus::Aborted);
        let bm = log.logged_bitmap(100_000);
        let again = CommitLog::new(100_000);
        again.load_bitmap(&bm);
        assert_eq!(again.status(12), XidStatus::Committed(crate::CSN_FROZEN));
        assert_eq!(again.status(13), XidStatus::Aborted);
        assert_eq!(again.status(70_000), XidStatus::Aborted);
    }

    #[test]
    fn a_subtransaction_shares_its_parents_fate_until_it_aborts() {
        let log = CommitLog::new(10);
        log.set_parent(21, 20);
        log.set_parent(22, 20);
        assert_eq!(log.status(21), XidStatus::InProgress);
        assert_eq!(log.top_of(21), 20);
        assert_eq!(log.top_of(20), 20);
        log.set_aborted(22);
        assert_eq!(log.top_of(22), 22);
        log.set_logged(20);
        assert!(log.is_logged(21));
        assert!(!log.is_logged(22));
        log.set_csn(20, 9);
        assert_eq!(log.status(21), XidStatus::Committed(9));
        assert_eq!(log.status(22), XidStatus::Aborted);
    }

    #[test]
    fn xids_used_after_the_checkpoint_and_never_committed_are_aborted() {
        let mut log = CommitLog::new(10);
        log.ensure(15);
        log.set_logged(14);
        log.set_csn(14, crate::CSN_FROZEN);
        assert_eq!(log.status(15), XidStatus::InProgress);
        log.set_boot_xid(20);
        assert_eq!(log.status(14), XidStatus::Committed(crate::CSN_FROZEN));
        assert_eq!(log.status(15), XidStatus::Aborted);
        assert_eq!(log.status(19), XidStatus::Aborted);
        assert_eq!(log.status(20), XidStatus::InProgress);
    }
}
