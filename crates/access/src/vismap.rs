//! The visibility map: one bit per heap page, set when every row rooted on the page is one
//! version that every snapshot sees and whose index entries are exactly its own. An index-only
//! scan returns an entry's key without reading the heap when the bit of its root's page is set
//! (PostgreSQL's visibility map, all-visible bits only).
//!
//! **When a bit is set.** VACUUM sets it, holding the page's exclusive latch, when every line
//! pointer on the page is unused, or a normal item that is either a version of a row rooted on
//! another page, or a root that (1) was created by a transaction committed at or below the
//! vacuum horizon (visible to every snapshot, now and later), (2) was never updated or deleted
//! (`xmax == 0`, or a lock-only `xmax` whose transaction is over; no next version). A redirect or a DEAD root fails it. Such a root holds
//! its row's first and only version, so every index entry pointing at it was made from that
//! version's key: no entry of it is stale.
//!
//! **When a bit is cleared.** Every change to a heap page's items (insert, lock, update,
//! delete) clears the page's bit while holding the page's exclusive latch, before the latch is
//! released, so (a) VACUUM's check and set cannot straddle a change, and (b) an index entry a
//! writer adds after its heap change is seen by a reader only after the clear (the B-tree
//! page latch orders them).
//!
//! **Not persisted.** The map lives in memory with the relation's runtime state and starts
//! empty when the server starts (and for a new relation file: TRUNCATE, rewrites). Until the
//! next VACUUM, index-only scans then read the heap for every row. A lost bit costs heap
//! reads, never a wrong answer; nothing else reads the map.
//!
//! Layout: lock-free segments of doubling size (4,096 pages, then 8,192, ...), each allocated
//! the first time a bit in it is set, so a relation that is never vacuumed costs one pointer.

use keel_common::BlockNo;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

const FIRST: u64 = 4096;
const SEGMENTS: usize = 21;

#[derive(Default)]
pub struct VisibilityMap {
    segments: [OnceLock<Box<[AtomicU64]>>; SEGMENTS],
    /// Pages whose bit is set (PostgreSQL's `relallvisible`, kept exact).
    set: AtomicU64,
}

/// Segment, word and bit of `block`.
fn locate(block: BlockNo) -> (usize, usize, u64) {
    let n = block as u64 / FIRST + 1;
    let seg = (63 - n.leading_zeros()) as usize;
    let offset = block as u64 - FIRST * ((1u64 << seg) - 1);
    (seg, (offset / 64) as usize, 1u64 << (offset % 64))
}

impl VisibilityMap {
    /// Whether every row rooted on `block` is visible to every snapshot, with no stale index
    /// entries (see the module comment).
    pub fn all_visible(&self, block: BlockNo) -> bool {
        let (seg, word, bit) = locate(block);
        match self.segments.get(seg).and_then(OnceLock::get) {
            Some(words) => words[word].load(Ordering::Acquire) & bit != 0,
            None => false,
        }
    }

    /// Sets `block`'s bit; the caller holds the page's exclusive latch and has checked it.
    pub fn set(&self, block: BlockNo) {
        let (seg, word, bit) = locate(block);
        let Some(slot) = self.segments.get(seg) else {
            return;
        };
        let words = slot.get_or_init(|| {
            (0..(FIRST << seg) / 64)
                .map(|_| AtomicU64::new(0))
                .collect()
        });
        if words[word].fetch_or(bit, Ordering::AcqRel) & bit == 0 {
            self.set.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Clears `block`'s bit; the caller holds the page's exclusive latch and changes it. A
    /// load first: on a page whose bit is clear (nearly always, between vacuums) no cache line
    /// is written.
    #[inline]
    pub fn clear(&self, block: BlockNo) {
        let (seg, word, bit) = locate(block);
        if let Some(words) = self.segments.get(seg).and_then(OnceLock::get)
            && words[word].load(Ordering::Acquire) & bit != 0
            && words[word].fetch_and(!bit, Ordering::AcqRel) & bit != 0
        {
            self.set.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// How many pages have their bit set.
    pub fn pages_all_visible(&self) -> u64 {
        self.set.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_every_block_once() {
        let mut seen = std::collections::HashSet::new();
        for block in (0..200_000u32).chain([u32::MAX - 1, u32::MAX]) {
            let (seg, word, bit) = locate(block);
            assert!(seg < SEGMENTS, "block {block}");
            assert!((word as u64) < (FIRST << seg) / 64, "block {block}");
            assert!(seen.insert((seg, word, bit)), "block {block} shares a bit");
        }
    }

    #[test]
    fn set_clear_and_count() {
        let vm = VisibilityMap::default();
        assert!(!vm.all_visible(7));
        vm.clear(7);
        vm.set(7);
        vm.set(7);
        vm.set(5000);
        vm.set(u32::MAX);
        assert!(vm.all_visible(7) && vm.all_visible(5000) && vm.all_visible(u32::MAX));
        assert!(!vm.all_visible(8));
        assert_eq!(vm.pages_all_visible(), 3);
        vm.clear(7);
        vm.clear(7);
        assert!(!vm.all_visible(7));
        assert_eq!(vm.pages_all_visible(), 2);
    }
}
