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

fn dead_to_all(txns: &TxnManager, h: &Header, horizon: u64) -> bool {
    if matches!(txns.status(h.xmin), XidStatus::Aborted) {
        return true;
    }
    if h.xmax == 0 {
        return false;
    }
    matches!(txns.status(h.xmax), XidStatus::Committed(c) if c <= horizon)
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
/// without waiting (None if that page is busy). Returns the number of versions reclaimed on
/// this page and the unlinked versions elsewhere.
pub fn prune_page(
    page: &mut PageMut<'_>,
    txns: &TxnManager,
    horizon: u64,
    other: &dyn Fn(Tid) -> Option<Header>,
) -> (usize, Vec<Garbage>) {
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
                    None => break Some(cur),
                }
            } else {
                match page.lp(cur.slot) {
                    LinePointer::Normal { .. } => Header::read(page.item(cur.slot)),
                    _ => {
                        passed.clear();
                        remote.clear();
                        break None;
                    }
                }
            };
            if h.root != root || prev_xmax.is_some_and(|x| x != h.xmin) {
                // Not a chain we can vouch for: leave it alone.
                passed.clear();
                remote.clear();
                break None;
            }
            if !dead_to_all(txns, &h, horizon) {
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
    (reclaimed, garbage)
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
