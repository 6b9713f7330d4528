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

/// Prunes `page` (latched exclusively by the caller) and WAL-logs nothing itself: the caller
/// logs the page with its own change. Returns the number of versions reclaimed.
pub fn prune_page(page: &mut PageMut<'_>, txns: &TxnManager, horizon: u64) -> usize {
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
        let survivor: Option<Tid> = loop {
            if cur.block != block {
                break Some(cur);
            }
            let h = match page.lp(cur.slot) {
                LinePointer::Normal { .. } => Header::read(page.item(cur.slot)),
                _ => {
                    passed.clear();
                    break None;
                }
            };
            if h.root != root || prev_xmax.is_some_and(|x| x != h.xmin) {
                // Not a chain we can vouch for: leave it alone.
                passed.clear();
                break None;
            }
            if !dead_to_all(txns, &h, horizon) {
                break Some(cur);
            }
            passed.push(cur.slot);
            if !h.has_next() {
                break None;
            }
            prev_xmax = Some(h.xmax);
            cur = h.next;
        };
        if passed.is_empty() {
            continue;
        }
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
    reclaimed
}
