//! Page pruning: reclaim versions no snapshot can see.
//!
//! For every row root on the page, the chain is followed while it stays on this page. The
//! leading versions that are dead to everyone (deleted by a transaction whose CSN is at or
//! below the horizon, or created by an aborted one) are unlinked: the root's line pointer
//! becomes a redirect to the first surviving version (which may be on another page), or DEAD
//! when the whole row is gone (index entries may still point at it). Unlinked non-root slots
//! become unused and the page is compacted. Versions on this page whose root lives elsewhere
//! are left for a prune of their root's page.

use super::tuple::Header;
use keel_common::Tid;
use keel_storage::PageMut;
use keel_storage::page::{LinePointer, PageRead};
use keel_txn::{TxnManager, XidStatus};

/// The smallest vacuum horizon at which version `h` is dead to every snapshot: 0 when its
/// creator aborted, its deleter's CSN when that committed, and otherwise `latest + 1`, since a
/// deleter that has not committed (or a deleter still to come) gets a CSN above `latest`, the
/// newest CSN drawn before the caller looked. A version is dead to all at `horizon` exactly
/// when this is at most `horizon` (a horizon never exceeds the newest CSN).
fn dead_from(txns: &TxnManager, h: &Header, latest: u64) -> u64 {
    if matches!(txns.status(h.xmin), XidStatus::Aborted) {
        return 0;
    }
    if h.deleter() == 0 {
        return latest + 1;
    }
    match txns.status(h.xmax) {
        XidStatus::Committed(c) => c,
        _ => latest + 1,
    }
}

/// What a prune did, and when the next one can do anything.
pub struct Pruned {
    /// Versions reclaimed on this page.
    pub reclaimed: usize,
    /// Unlinked versions on other pages, for [`free_garbage`].
    pub garbage: Vec<Garbage>,
    /// Until the horizon reaches this CSN, pruning the page again reclaims nothing: every
    /// chain on it starts with a version that is not dead before then. New versions and new
    /// deletions on the page do not lower it, since their CSNs will be above the newest one
    /// drawn before this prune looked. (A row inserted by a transaction that then aborts waits
    /// until then too; VACUUM does not.) 0 when some chain could not be followed.
    pub next_at: u64,
}

/// A dead version on another page, unlinked by a prune; free it with [`free_garbage`] once
/// no latch is held.
#[derive(Clone, Copy, Debug)]
pub struct Garbage {
    pub tid: Tid,
    pub xmin: u64,
    pub root: Tid,
}

/// Prunes `page` (latched exclusively by the caller) and WAL-logs nothing itself: the caller
/// logs the page with its own change. `other` reads a version's header on another page
/// without waiting (None if that page is busy).
pub fn prune_page(
    page: &mut PageMut<'_>,
    txns: &TxnManager,
    horizon: u64,
    other: &dyn Fn(Tid) -> Option<Header>,
) -> Pruned {
    // Read before any status: see `dead_from`.
    let latest = txns.latest_csn();
    let mut next_at = u64::MAX;
    let mut garbage = Vec::new();
    let block = page.block();
    let n = page.slot_count();
    let mut reclaimed = 0;
    for slot in 0..n {
        let root = Tid::new(block, slot);
        let start = match page.lp(slot) {
            LinePointer::Redirect { block: b, slot: s } => Tid::new(b, s),
            LinePointer::Normal { .. } => {
                let h = Header::read(page.item(slot));
                if h.root != root {
                    continue; // a non-root version; handled with its root
                }
                root
            }
            _ => continue,
        };
        let mut cur = start;
        let mut prev_xmax: Option<u64> = None;
        let mut passed: Vec<u16> = Vec::new();
        let mut remote: Vec<Garbage> = Vec::new();
        let survivor: Option<Tid> = loop {
            let h = if cur.block != block {
                match other(cur) {
                    Some(h) => h,
                    None => {
                        next_at = 0; // not looked at: try again next time
                        break Some(cur);
                    }
                }
            } else {
                match page.lp(cur.slot) {
                    LinePointer::Normal { .. } => Header::read(page.item(cur.slot)),
                    _ => {
                        passed.clear();
                        remote.clear();
                        next_at = 0;
                        break None;
                    }
                }
            };
            if h.root != root || prev_xmax.is_some_and(|x| x != h.xmin) {
                // Not a chain we can vouch for: leave it alone.
                passed.clear();
                remote.clear();
                next_at = 0;
                break None;
            }
            let dead_at = dead_from(txns, &h, latest);
            if dead_at > horizon {
                next_at = next_at.min(dead_at);
                break Some(cur);
            }
            if cur.block == block {
                passed.push(cur.slot);
            } else {
                remote.push(Garbage {
                    tid: cur,
                    xmin: h.xmin,
                    root,
                });
            }
            if !h.has_next() {
                break None;
            }
            prev_xmax = Some(h.xmax);
            cur = h.next;
        };
        if passed.is_empty() && remote.is_empty() {
            continue;
        }
        garbage.append(&mut remote);
        for &s in &passed {
            if s != slot {
                page.set_lp(s, LinePointer::Unused);
            }
        }
        reclaimed += passed.len();
        match survivor {
            Some(t) if t == root => {}
            Some(t) => page.set_lp(
                slot,
                LinePointer::Redirect {
                    block: t.block,
                    slot: t.slot,
                },
            ),
            None => page.set_lp(slot, LinePointer::Dead),
        }
    }
    if reclaimed > 0 {
        page.trim_slots();
        page.compact();
    }
    Pruned {
        reclaimed,
        garbage,
        next_at,
    }
}

/// Whether `page` may have its visibility-map bit set (vismap.rs): every row rooted on it is
/// one version, created at or below `horizon` and never locked, updated or deleted. Versions
/// of rows rooted elsewhere do not matter; a redirect or DEAD root fails it.
pub fn all_visible(page: &impl PageRead, block: u32, txns: &TxnManager, horizon: u64) -> bool {
    (0..page.slot_count()).all(|slot| match page.lp(slot) {
        LinePointer::Unused => true,
        LinePointer::Redirect { .. } | LinePointer::Dead => false,
        LinePointer::Normal { .. } => {
            let item = page.item(slot);
            if item.len() < super::tuple::HEADER {
                return false;
            }
            let h = Header::read(item);
            if h.root != Tid::new(block, slot) {
                return true;
            }
            // A lock whose transaction is over (a foreign-key check's KEY SHARE, a FOR
            // UPDATE) leaves the version as it was.
            let unlocked = h.xmax == 0
                || (h.lock_only() && !matches!(txns.status(h.xmax), XidStatus::InProgress));
            unlocked
                && !h.has_next()
                && matches!(txns.status(h.xmin), XidStatus::Committed(c) if c <= horizon)
        }
    })
}

/// Frees unlinked versions on other pages, one page latch at a time, checking each slot still
/// holds the version that was unlinked. Returns how many were freed.
pub fn free_garbage(
    heap: &super::Heap<'_>,
    mut garbage: Vec<Garbage>,
) -> keel_common::PgResult<usize> {
    garbage.sort_by_key(|g| g.tid);
    let mut freed = 0;
    let mut i = 0;
    while i < garbage.len() {
        let block = garbage[i].tid.block;
        let mut page = heap.pool.write(&heap.rel.file, block)?;
        let mut changed = false;
        while i < garbage.len() && garbage[i].tid.block == block {
            let g = garbage[i];
            i += 1;
            if let LinePointer::Normal { .. } = page.lp(g.tid.slot) {
                let h = Header::read(page.item(g.tid.slot));
                if h.xmin == g.xmin && h.root == g.root && h.root != g.tid {
                    page.set_lp(g.tid.slot, LinePointer::Unused);
                    changed = true;
                    freed += 1;
                }
            }
        }
        if changed {
            page.trim_slots();
            page.compact();
            heap.pool.wal.log_pages(0, &mut [&mut page]);
            if page.free_space() > keel_storage::PAGE_SIZE / 5 {
                heap.rel.page_has_room(block);
            }
        }
    }
    Ok(freed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::Heap;
    use crate::relstate::RelState;
    use keel_storage::BufferPool;
    use keel_storage::smgr::Smgr;
    use keel_storage::wal::{FIRST_LSN, Wal};
    use keel_txn::CommitLog;
    use std::sync::Arc;

    #[test]
    fn next_at_is_the_first_csn_at_which_a_chain_head_dies() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(dir.path()).unwrap());
        let wal = Wal::open(dir.path(), FIRST_LSN, FIRST_LSN, false).unwrap();
        let pool = BufferPool::new(smgr.clone(), wal, 64);
        let txns = TxnManager::new(10, CommitLog::new(10));
        let rel = RelState::new(smgr.open(1, true).unwrap());
        let heap = Heap::new(&pool, &txns, &rel);

        // Row a: three versions (a0 -> a1 -> a2); row b: never updated.
        let xa = txns.assign_xid();
        let root = heap.insert(b"a0", xa, 0, None, 0, None).unwrap();
        let xb = txns.assign_xid();
        heap.insert(b"b0", xb, 0, None, 0, None).unwrap();
        txns.mark_committed(xa);
        txns.mark_committed(xb);
        let mut version = root;
        let mut csns = Vec::new();
        for row in [b"a1", b"a2"] {
            let xid = txns.assign_xid();
            let (_, new) = heap
                .update(
                    version,
                    root,
                    row,
                    xid,
                    0,
                    false,
                    || 0,
                    &|| false,
                    keel_txn::Strength::Update,
                )
                .unwrap();
            version = new.unwrap().0;
            txns.mark_committed(xid);
            csns.push(txns.latest_csn());
        }
        let other = |_| None;
        let mut page = pool.write(&rel.file, root.block).unwrap();

        // Before a0's deleter committed in every snapshot's eyes: nothing to reclaim, and
        // nothing until the horizon reaches that deleter's CSN.
        let p = prune_page(&mut page, &txns, csns[0] - 1, &other);
        assert_eq!((p.reclaimed, p.next_at), (0, csns[0]));
        // At it, a0 goes; a1 dies at the next deleter's CSN.
        let p = prune_page(&mut page, &txns, csns[0], &other);
        assert_eq!((p.reclaimed, p.next_at), (1, csns[1]));
        // Then a1 goes; a2 and b0 have no deleter: a future one commits above the newest CSN.
        let p = prune_page(&mut page, &txns, csns[1], &other);
        assert_eq!((p.reclaimed, p.next_at), (1, txns.latest_csn() + 1));
    }
}
