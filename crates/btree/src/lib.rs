//! B-tree indexes over memcomparable keys: a Lehman–Yao B-link tree (right-links and high
//! keys on every node) so readers never couple latches. See README.md for the page layout,
//! the latch protocol and why it is deadlock-free.

mod backscan;
mod insert;
mod node;
mod scan;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_concurrency;
#[cfg(test)]
mod tests_prop;

use keel_common::{BlockNo, PgError, PgResult, Tid, sqlstate};
use keel_storage::smgr::RelFile;
use keel_storage::{BufferPool, PageMut, PageRead};
use node::{NO_BLOCK, NodeInfo, Target};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use backscan::BTreeBackScan;
pub use node::MAX_ROW_SIZE;
pub use scan::{BTreeScan, key_interval};

/// What the unique check's callback says about an existing entry with an equal key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// The row it points to has no live or in-progress version with this key: ignore it.
    Dead,
    /// A live row holds the key: unique violation.
    Live,
    /// An in-progress transaction (this xid) may still commit the key: wait, then retry.
    InProgress(u64),
}

/// Outcome of a unique insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniqueInsert {
    Inserted,
    /// An equal key belongs to a live row (pointing at this tid); nothing was inserted.
    Duplicate(Tid),
    /// Wait for this xid, then call again; nothing was inserted.
    Wait(u64),
}

/// One B-tree index stored in one relation file. Cheap to create; holds no latches.
pub struct BTree {
    pool: Arc<BufferPool>,
    rel: Arc<RelFile>,
    /// Cached `(level << 32) | root block`, or 0 when not yet read. May be stale: any former
    /// root is still a valid node of its level, and searches move right from it.
    root_hint: AtomicU64,
}

const HINT_VALID: u64 = 1 << 63;

impl BTree {
    pub fn new(pool: Arc<BufferPool>, rel: Arc<RelFile>) -> BTree {
        BTree {
            pool,
            rel,
            root_hint: AtomicU64::new(0),
        }
    }

    /// Whether the relation file holds a tree (`create` ran); false for a new, empty file.
    pub fn is_created(&self) -> bool {
        self.rel.nblocks() != 0
    }

    /// Initializes an empty index in an empty relation file (meta page and root leaf),
    /// WAL-logged with `xid`.
    pub fn create(&self, xid: u64) -> PgResult<()> {
        if self.rel.nblocks() != 0 {
            return Err(PgError::new(
                sqlstate::INTERNAL_ERROR,
                format!(
                    "cannot create a btree in non-empty relation {}",
                    self.rel.id
                ),
            ));
        }
        let mut meta = self.pool.extend(&self.rel)?;
        let mut root = self.pool.extend(&self.rel)?;
        if meta.block() != node::META_BLOCK {
            return Err(PgError::new(
                sqlstate::INTERNAL_ERROR,
                "btree meta page is not block 0",
            ));
        }
        let ni = NodeInfo {
            flags: node::FLAG_ROOT,
            level: 0,
            right: NO_BLOCK,
        };
        node::init_node(&mut root, ni, &[]);
        node::write_meta(&mut meta, root.block(), 0, true);
        self.pool.wal.log_pages(xid, &mut [&mut meta, &mut root]);
        self.set_root_hint(root.block(), 0);
        Ok(())
    }

    /// Inserts (key, tid). Entries are ordered by key bytes, then tid; the same (key, tid)
    /// twice is a no-op.
    pub fn insert(&self, key: &[u8], tid: Tid, xid: u64) -> PgResult<()> {
        insert::insert(self, key, tid, xid)
    }

    /// Inserts (key, tid) unless an entry with an equal key is `Live` or `InProgress` per
    /// `check`, which is called with the leaf latched for every entry whose key equals `key`
    /// (it may latch heap pages; it must not touch this index).
    pub fn insert_unique(
        &self,
        key: &[u8],
        tid: Tid,
        xid: u64,
        check: &mut dyn FnMut(Tid) -> PgResult<Existing>,
    ) -> PgResult<UniqueInsert> {
        insert::insert_unique(self, key, tid, xid, check)
    }

    /// Entries with `lower <= key <= upper` in order, bounds compared as prefixes: an
    /// `Included(p)` upper bound admits every key that starts with `p`, and an `Excluded(p)`
    /// lower bound skips every key that starts with `p`.
    pub fn scan(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> BTreeScan {
        let tree = BTree {
            pool: self.pool.clone(),
            rel: self.rel.clone(),
            root_hint: AtomicU64::new(self.root_hint()),
        };
        BTreeScan::new(tree, lower, upper)
    }

    /// As [`Self::scan`], greatest entry first.
    pub fn scan_backward(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> BTreeBackScan {
        let tree = BTree {
            pool: self.pool.clone(),
            rel: self.rel.clone(),
            root_hint: AtomicU64::new(self.root_hint()),
        };
        BTreeBackScan::new(tree, lower, upper)
    }

    /// The tids of every entry whose key equals `key`, in tid order: the point lookup of an
    /// equality search, without the scan's per-entry key copies. Holds one shared latch at a
    /// time, moving right while the run of equal keys reaches a page's high key.
    pub fn lookup(&self, key: &[u8]) -> PgResult<Vec<Tid>> {
        let probe = Target { key, tid: None };
        let block = self.descend(&probe, 0, &mut Vec::new())?;
        let (mut page, mut ni) = self.read_moving_right(block, &probe)?;
        let mut out = Vec::new();
        let mut hops = 0;
        loop {
            let n = page.slot_count();
            let mut s = node::lower_bound(&page, true, &probe);
            while s < n {
                let e = page.item(s);
                if node::entry_key(e) != key {
                    return Ok(out);
                }
                out.push(node::tid_from(&e[e.len() - node::TID_LEN..]));
                s += 1;
            }
            if ni.is_rightmost() || node::entry_key(page.item(node::HIGH_KEY)) != key {
                return Ok(out);
            }
            let right = ni.right;
            self.hop(&mut hops, right)?;
            drop(page);
            page = self.pool.read(&self.rel, right)?;
            ni = node::info(&page, right)?;
        }
    }

    /// Removes the entries whose tid `dead` says is gone (vacuum). Returns how many.
    /// Leaves are visited left to right through their right-links, each latched exclusively
    /// on its own; emptied pages stay in the tree (no page deletion). `check` runs before each
    /// leaf (the caller's interrupt check); its error stops the walk, leaving the entries not
    /// yet visited in place.
    pub fn bulk_delete(
        &self,
        xid: u64,
        dead: &dyn Fn(Tid) -> bool,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<u64> {
        let mut stack = Vec::new();
        let mut block = self.descend(
            &Target {
                key: &[],
                tid: None,
            },
            0,
            &mut stack,
        )?;
        let mut removed = 0u64;
        let mut victims: Vec<u16> = Vec::new();
        let mut hops = 0;
        loop {
            check()?;
            let mut page = self.pool.write(&self.rel, block)?;
            let ni = node::info(&page, block)?;
            victims.clear();
            for s in node::FIRST_DATA..page.slot_count() {
                let item = page.item(s);
                if dead(node::tid_from(&item[item.len() - node::TID_LEN..])) {
                    victims.push(s);
                }
            }
            if !victims.is_empty() {
                for &s in victims.iter().rev() {
                    page.remove_item_at(s);
                }
                page.compact();
                self.pool.wal.log_pages(xid, &mut [&mut page]);
                removed += victims.len() as u64;
            }
            if ni.is_rightmost() {
                return Ok(removed);
            }
            block = ni.right;
            self.hop(&mut hops, block)?;
        }
    }

    /// Removes the entry (`key`, `tid`) if it is there and `stale()`, asked with the entry's
    /// leaf latched exclusively (so an insert of the same entry either comes after the
    /// removal, and adds it back, or before `stale` looks, which then sees why it is needed).
    /// Returns whether it was removed. The item's bytes stay as garbage until the page is
    /// next compacted or split; the WAL records the line-pointer shift only.
    pub fn remove_entry(&self, key: &[u8], tid: Tid, stale: &dyn Fn() -> bool) -> PgResult<bool> {
        let probe = Target {
            key,
            tid: Some(node::tid_bytes(tid)),
        };
        let block = self.descend(&probe, 0, &mut Vec::new())?;
        let (mut page, _) = self.write_moving_right(block, &probe)?;
        let s = node::lower_bound(&page, true, &probe);
        if s >= page.slot_count() || page.item(s) != node::leaf_item(key, tid).as_slice() {
            return Ok(false);
        }
        if !stale() {
            return Ok(false);
        }
        page.remove_item_at(s);
        self.pool.wal.log_pages(0, &mut [&mut page]);
        Ok(true)
    }

    /// Number of entries (tests, VACUUM VERBOSE).
    pub fn count(&self) -> PgResult<u64> {
        let mut n = 0;
        for e in self.scan(Bound::Unbounded, Bound::Unbounded) {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// Counts one step along a right-link, to `to`. A walk of more steps than the file has
    /// blocks must be going round a cycle (a corrupt index): it fails instead of spinning.
    pub(crate) fn hop(&self, hops: &mut u32, to: BlockNo) -> PgResult<()> {
        *hops += 1;
        if *hops > self.rel.nblocks() || to == NO_BLOCK {
            return Err(PgError::new(
                sqlstate::INDEX_CORRUPTED,
                format!(
                    "btree right-links of relation {} go round a cycle or off the end at block {to}",
                    self.rel.id
                ),
            ));
        }
        Ok(())
    }

    fn root_hint(&self) -> u64 {
        self.root_hint.load(Ordering::Relaxed)
    }

    fn set_root_hint(&self, root: BlockNo, level: u16) {
        self.root_hint.store(
            HINT_VALID | ((level as u64) << 32) | root as u64,
            Ordering::Relaxed,
        );
    }

    /// Root block and level: the cached hint, or the meta page.
    fn root(&self, fresh: bool) -> PgResult<(BlockNo, u16)> {
        let h = self.root_hint();
        if !fresh && h & HINT_VALID != 0 {
            return Ok((h as u32, ((h >> 32) & 0xffff) as u16));
        }
        let (root, level) = {
            let meta = self.pool.read(&self.rel, node::META_BLOCK)?;
            node::read_meta(&meta)?
        };
        self.set_root_hint(root, level);
        Ok((root, level))
    }

    /// Descends to the page at `level` whose key range covered `target` when its parent was
    /// read, holding one shared latch at a time. Pushes the internal pages passed on the way
    /// (parents last) onto `stack`. The caller latches the result and moves right if needed.
    fn descend(
        &self,
        target: &Target<'_>,
        level: u16,
        stack: &mut Vec<BlockNo>,
    ) -> PgResult<BlockNo> {
        let (mut block, mut cur) = self.root(false)?;
        if cur < level {
            // A stale hint: the tree grew since. The meta page knows.
            (block, cur) = self.root(true)?;
            if cur < level {
                return Err(PgError::new(
                    sqlstate::INDEX_CORRUPTED,
                    "btree is shallower than expected",
                ));
            }
        }
        while cur > level {
            let (page, ni) = self.read_moving_right(block, target)?;
            if ni.level != cur {
                return Err(PgError::new(
                    sqlstate::INDEX_CORRUPTED,
                    format!(
                        "btree block {} has level {}, expected {cur}",
                        page.block(),
                        ni.level
                    ),
                ));
            }
            stack.push(page.block());
            block = node::child_of(page.item(node::child_slot(&page, target)));
            cur -= 1;
        }
        Ok(block)
    }

    /// Share-latches `block`, then follows right-links while `target` is beyond the high key
    /// (a split moved its range right), holding one latch at a time.
    fn read_moving_right(
        &self,
        mut block: BlockNo,
        target: &Target<'_>,
    ) -> PgResult<(keel_storage::PageRef<'_>, NodeInfo)> {
        let mut hops = 0;
        loop {
            let page = self.pool.read(&self.rel, block)?;
            let ni = node::info(&page, block)?;
            if node::beyond_high_key(&page, &ni, target) {
                block = ni.right;
                self.hop(&mut hops, block)?;
                continue;
            }
            return Ok((page, ni));
        }
    }

    /// As [`Self::read_moving_right`] with exclusive latches.
    fn write_moving_right(
        &self,
        mut block: BlockNo,
        target: &Target<'_>,
    ) -> PgResult<(PageMut<'_>, NodeInfo)> {
        let mut hops = 0;
        loop {
            let page = self.pool.write(&self.rel, block)?;
            let ni = node::info(&page, block)?;
            if node::beyond_high_key(&page, &ni, target) {
                block = ni.right;
                self.hop(&mut hops, block)?;
                continue;
            }
            return Ok((page, ni));
        }
    }
}
