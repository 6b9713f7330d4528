//! Per-relation runtime state: the open file and where inserts should go next.

use keel_common::{BlockNo, Tid};
use keel_storage::smgr::RelFile;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

const NONE: u32 = u32::MAX;

pub struct RelState {
    pub file: Arc<RelFile>,
    /// The page inserts try first (the last one extended or found to have room).
    target: AtomicU32,
    /// Pages that pruning left with room, tried after the target.
    free: Mutex<Vec<BlockNo>>,
    /// Versions made dead since the last vacuum (updates and deletes).
    pub changes: std::sync::atomic::AtomicU64,
    /// Rows inserted, updated or deleted by transactions that committed since the last ANALYZE
    /// (auto-analyze's trigger).
    pub mods_since_analyze: std::sync::atomic::AtomicU64,
    /// A hint of root -> newest version for recently updated rows, where reads of a hot row
    /// start (walking back through `prev` links) instead of walking the whole chain. Lossy
    /// and lock-free: see `latest`.
    latest: std::sync::OnceLock<Box<[std::sync::atomic::AtomicU64]>>,
    /// The heap's visibility map (vismap.rs), made by the first VACUUM that sets a bit.
    vm: std::sync::OnceLock<Box<crate::vismap::VisibilityMap>>,
}

/// Slots of the newest-version hint, made at a relation's first update: 64 per page the
/// relation has then (8 bytes each, 6% of the heap's size), at least 4,096 (32 kB) and at
/// most 2^20 (8 MB). A hint that misses costs a walk from the root, one more page latch per
/// row, so a scan over many recently updated rows wants most of them to hit.
const LATEST_MIN: usize = 4096;
const LATEST_MAX: usize = 1 << 20;
const LATEST_PER_PAGE: usize = 64;
const TID_BITS: u32 = 48;

/// The hint slot of `root` in a table of `len` slots (a power of two), and the tag that tells
/// its entry apart from other roots'. Slots follow the roots' order (64 per page), so a scan
/// in heap order or in the order rows were loaded reads the table sequentially rather than
/// missing the cache on every row.
fn latest_slot(root: Tid, len: usize) -> (usize, u64) {
    let at = (root.block as usize)
        .wrapping_mul(LATEST_PER_PAGE)
        .wrapping_add(root.slot as usize);
    let h = root.to_u64().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (at & (len - 1), (h >> 48) | 1)
}

impl RelState {
    pub fn new(file: Arc<RelFile>) -> RelState {
        let n = file.nblocks();
        RelState {
            file,
            target: AtomicU32::new(if n > 0 { n - 1 } else { NONE }),
            free: Mutex::new(Vec::new()),
            changes: Default::default(),
            mods_since_analyze: Default::default(),
            latest: std::sync::OnceLock::new(),
            vm: std::sync::OnceLock::new(),
        }
    }

    /// The visibility map, if a VACUUM ever set a bit of it.
    #[inline]
    pub fn vm(&self) -> Option<&crate::vismap::VisibilityMap> {
        self.vm.get().map(|b| &**b)
    }

    /// The visibility map, made if needed (VACUUM).
    pub fn vm_for_vacuum(&self) -> &crate::vismap::VisibilityMap {
        self.vm.get_or_init(Default::default)
    }

    /// Clears `block`'s visibility bit: called with the page latched exclusively, by every
    /// change to its items.
    #[inline]
    pub fn page_changed(&self, block: BlockNo) {
        if let Some(vm) = self.vm() {
            vm.clear(block);
        }
    }

    /// Records the newest version of row `root`.
    pub fn note_latest(&self, root: Tid, version: Tid) {
        let slots = self.latest.get_or_init(|| {
            let pages = self.file.nblocks() as usize;
            let len = (pages.saturating_mul(LATEST_PER_PAGE))
                .clamp(LATEST_MIN, LATEST_MAX)
                .next_power_of_two();
            (0..len)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect()
        });
        let (i, tag) = latest_slot(root, slots.len());
        slots[i].store(
            version.to_u64() | (tag << TID_BITS),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// A version of row `root` recorded recently, if its slot still holds it. A hint only:
    /// one load, no lock (every reader of a row consults it, and a lock here was where
    /// sessions scanning the same rows queued). Another root whose tag collides gives a
    /// version of another row, which the reader's walk rejects (`Header::root`), as it does
    /// a version pruned and reused since.
    pub fn latest(&self, root: Tid) -> Option<Tid> {
        let slots = self.latest.get()?;
        let (i, tag) = latest_slot(root, slots.len());
        let v = slots[i].load(std::sync::atomic::Ordering::Relaxed);
        (v >> TID_BITS == tag).then(|| Tid::from_u64(v & ((1 << TID_BITS) - 1)))
    }

    /// A page to try an insert on, or None to extend the relation.
    pub fn insert_candidate(&self, avoid: Option<BlockNo>) -> Option<BlockNo> {
        let t = self.target.load(Ordering::Relaxed);
        if t != NONE && Some(t) != avoid {
            return Some(t);
        }
        let mut free = self.free.lock();
        while let Some(b) = free.pop() {
            if Some(b) != avoid {
                self.target.store(b, Ordering::Relaxed);
                return Some(b);
            }
        }
        None
    }

    pub fn set_insert_target(&self, block: BlockNo) {
        self.target.store(block, Ordering::Relaxed);
    }

    /// The page has no room for the insert that tried it.
    pub fn page_full(&self, block: BlockNo) {
        let _ = self
            .target
            .compare_exchange(block, NONE, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Pruning made room on `block`.
    pub fn page_has_room(&self, block: BlockNo) {
        let mut free = self.free.lock();
        if free.len() < 4096 && !free.contains(&block) {
            free.push(block);
        }
    }
}
