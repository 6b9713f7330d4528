//! B-tree indexes over memcomparable keys (being built; see README.md when it lands).
#![allow(unused_variables)]

use keel_common::{PgResult, Tid};
use keel_storage::BufferPool;
use keel_storage::smgr::RelFile;
use std::ops::Bound;
use std::sync::Arc;

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
}

impl BTree {
    pub fn new(pool: Arc<BufferPool>, rel: Arc<RelFile>) -> BTree {
        BTree { pool, rel }
    }

    /// Initializes an empty index in an empty relation file (meta page and root leaf),
    /// WAL-logged with `xid`.
    pub fn create(&self, xid: u64) -> PgResult<()> {
        todo!()
    }

    /// Inserts (key, tid). Entries are ordered by key bytes, then tid; the same (key, tid)
    /// twice is a no-op.
    pub fn insert(&self, key: &[u8], tid: Tid, xid: u64) -> PgResult<()> {
        todo!()
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
        todo!()
    }

    /// Entries with `lower <= key <= upper` in order, bounds compared as prefixes: an
    /// `Included(p)` upper bound admits every key that starts with `p`.
    pub fn scan(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> BTreeScan {
        todo!()
    }

    /// Removes the entries whose tid `dead` says is gone (vacuum). Returns how many.
    pub fn bulk_delete(&self, xid: u64, dead: &dyn Fn(Tid) -> bool) -> PgResult<u64> {
        todo!()
    }

    /// Number of entries (tests, VACUUM VERBOSE).
    pub fn count(&self) -> PgResult<u64> {
        todo!()
    }
}

/// A forward scan; yields (key, tid). Holds no latch between calls.
pub struct BTreeScan {}

impl Iterator for BTreeScan {
    type Item = PgResult<(Vec<u8>, Tid)>;
    fn next(&mut self) -> Option<Self::Item> {
        todo!()
    }
}
