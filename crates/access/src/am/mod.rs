//! The index access-method interface: the one place where an index kind plugs into the engine,
//! as PostgreSQL's `amapi.h` (an `IndexAmRoutine` per method, operations on an opened index
//! relation). See docs/access-methods.md for the contract and how to add a method.
//!
//! Two traits, as in PostgreSQL:
//! - [`IndexAm`] is the method itself (what `bthandler` returns): its capabilities, which the
//!   planner reads, its cost estimate, and `open`, which binds it to one index relation. One
//!   static value per method; [`method`] maps an [`IndexMethod`] to it.
//! - [`AmIndex`] is one opened index: build, insert (with the unique check), bulk delete for
//!   vacuum, an ordered scan with bounds (`amgettuple`) and a bitmap scan (`amgetbitmap`).
//!
//! The engine (rows.rs, ddl.rs) only ever goes through these traits; it knows nothing of page
//! formats or key encodings. What it does know is MVCC: index entries point at a row's root
//! (stable for the row's life), entries are never updated in place, and an entry whose row no
//! longer holds its key is stale. So every scan result is rechecked against the visible version
//! (`IndexScan::recheck` for ordered scans; the caller re-evaluates its quals for bitmap scans).

mod btree;
pub mod cost;
#[cfg(test)]
mod suite;

pub use cost::{CostInput, CostParams, IndexCost};

use crate::api::KeyRange;
use keel_catalog::{IndexDef, IndexMethod, TableDef};
use keel_common::{PgResult, Tid};
use keel_storage::BufferPool;
use keel_storage::smgr::RelFile;
use keel_types::Datum;
use std::sync::Arc;

/// What a method can do (PostgreSQL's `amcanorder`, `amcanunique`, `amcanmulticol`,
/// `amgettuple`/`amgetbitmap` being set, `amstrategies`). The planner reads these to decide
/// which paths an index can offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmCapabilities {
    /// Scans return entries in key order, so an index scan can satisfy ORDER BY and merge
    /// joins (`amcanorder`).
    pub can_order: bool,
    /// Unique indexes can be built and enforce uniqueness at insert (`amcanunique`).
    pub can_unique: bool,
    /// More than one key column (`amcanmulticol`).
    pub can_multi_col: bool,
    /// An ordered, row-at-a-time scan with bounds exists ([`AmIndex::scan`]; `amgettuple`).
    pub has_ordered_scan: bool,
    /// A "give me every matching row id" scan exists ([`AmIndex::bitmap_scan`];
    /// `amgetbitmap`).
    pub has_bitmap_scan: bool,
    /// Number of fixed strategies (5 for B-tree; 0 when operator classes define their own,
    /// as GIN's do).
    pub strategies: u16,
}

/// The index relation an [`AmIndex`] works on, for [`IndexAm::open`]: its file and its
/// definitions (name, key columns and their types, operator classes), borrowed, so that
/// opening an index for one operation allocates nothing but the returned box.
pub struct IndexRelation<'a> {
    pub pool: &'a Arc<BufferPool>,
    pub file: Arc<RelFile>,
    pub table: &'a TableDef,
    pub index: &'a IndexDef,
}

/// An index access method (PostgreSQL's `IndexAmRoutine`).
pub trait IndexAm: Send + Sync {
    fn method(&self) -> IndexMethod;

    fn capabilities(&self) -> AmCapabilities;

    /// Cost of a scan through an index of this method that selects `input.selectivity` of its
    /// entries, heap fetches included, in PostgreSQL's cost units (see cost.rs).
    fn cost_estimate(&self, input: &CostInput, params: &CostParams) -> IndexCost;

    /// Binds the method to one index relation. Cheap (no I/O): the engine opens an index for
    /// every operation that needs it.
    fn open<'a>(&self, rel: IndexRelation<'a>) -> Box<dyn AmIndex<'a> + 'a>;

    /// Whether a row version whose key columns hold `new` needs other entries in `index` than
    /// one holding `old`. When it does not, an UPDATE leaves the index alone (the old entries
    /// point at the row's root, which leads to the new version), and the unique check counts
    /// the version as holding the key. Asked on every UPDATE: no I/O, no relation needed.
    fn key_changed(&self, table: &TableDef, index: &IndexDef, old: &[Datum], new: &[Datum])
    -> bool;

    /// Whether a scan can give back the stored value of a key column of type `ty`
    /// ([`IndexScan::key`]), so that an index-only scan can answer from the index alone
    /// (PostgreSQL's `amcanreturn`).
    fn can_return(&self, _ty: keel_types::TypeId) -> bool {
        false
    }
}

/// The engine's verdict on an existing entry whose key equals the one being inserted into a
/// unique index, asked for each such entry (the AM holds whatever it needs latched meanwhile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Its row holds the key in no live or in-progress version: no conflict.
    Dead,
    /// A live row holds the key: unique violation.
    Live,
    /// Transaction `xid` may still commit a version with the key: wait for it, then retry.
    InProgress(u64),
}

/// The unique check: does the row (root) `existing` still hold key `key`? Entries that point
/// at the row being inserted itself are never asked about.
pub type UniqueCheck<'a> = dyn FnMut(&[Datum], Tid) -> PgResult<Existing> + 'a;

/// Outcome of [`AmIndex::insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertResult {
    Inserted,
    /// A live row (this root) holds an equal key; nothing was inserted.
    Duplicate(Tid),
    /// Wait for this xid, then insert again; nothing was inserted.
    Wait(u64),
}

/// One entry to build: a row's root and the values of the index's key columns.
pub struct BuildTuple {
    pub tid: Tid,
    pub key: Vec<Datum>,
    /// Enforce uniqueness for this entry (a unique index, and no NULL in the key).
    pub unique: bool,
}

/// Outcome of [`AmIndex::build`].
#[derive(Clone, Debug, PartialEq)]
pub enum BuildResult {
    /// Every tuple is in the index; this many were offered.
    Built { tuples: u64 },
    /// A unique build met two rows holding this key (or one still in progress); the index is
    /// incomplete and its file must be discarded.
    Duplicate(Vec<Datum>),
}

/// One condition of a bitmap scan, PostgreSQL's ScanKey: `key column <strategy> argument`,
/// strategies as the column's operator class defines them (B-tree: 1 `<` ... 5 `>`).
#[derive(Clone, Debug)]
pub struct ScanKey {
    /// Index column (0-based, in index column order).
    pub column: usize,
    pub strategy: u16,
    pub argument: Datum,
}

/// An ordered scan (`amgettuple`): row roots in index order. Holds no latch between calls.
pub trait IndexScan: Send {
    /// The root of the next entry in range, or None at the end.
    fn next(&mut self) -> PgResult<Option<Tid>>;

    /// Whether a row version whose key columns hold `key` owns the entry `next` returned last.
    /// An entry is stale when its row's key changed since it was made (entries are never
    /// updated in place): the row is then returned through its current entry instead.
    fn recheck(&self, key: &[Datum]) -> bool;

    /// `recheck` for a whole row whose key columns are `columns` (the per-row path of a
    /// scan; a method may compare without building the key).
    fn recheck_row(&self, row: &[Datum], columns: &[usize]) -> bool {
        let key: Vec<Datum> = (columns.iter())
            .map(|&c| row.get(c).cloned().unwrap_or(Datum::Null))
            .collect();
        self.recheck(&key)
    }

    /// The key of the entry `next` returned last, as the values stored in the row (an
    /// index-only scan returns them without reading the heap). None when the method cannot
    /// give them back for these key columns ([`IndexAm::can_return`] says which can).
    fn key(&self) -> Option<Vec<Datum>> {
        None
    }

    /// The encoded key of the entry `next` returned last, for [`AmIndex::remove_stale`];
    /// None for a method that cannot remove single entries.
    fn entry(&self) -> Option<&[u8]> {
        None
    }

    /// Restarts the scan, in the same direction, on `range` (PostgreSQL's `amrescan`: an
    /// index nested loop's next probe), reusing what it holds. False when the method cannot,
    /// and the caller opens a new scan instead.
    fn rescan(&mut self, _range: &KeyRange) -> PgResult<bool> {
        Ok(false)
    }
}

/// One opened index (PostgreSQL's index `Relation` with the AM's routines). Holds no latch
/// between calls; every call may run concurrently with every other, on any thread.
pub trait AmIndex<'a>: Send + Sync {
    /// Initializes an empty index in an empty relation file (`ambuildempty`), WAL-logged
    /// with `xid`. Also used to re-create an unlogged index after a crash.
    fn create_empty(&self, xid: u64) -> PgResult<()>;

    /// Fills the index from `tuples` (`ambuild`), creating it first if the file is empty.
    /// `unique` is asked about equal keys of tuples marked `unique` (`amcanunique` methods
    /// only). `check` is the statement's interrupt check, called per tuple.
    fn build(
        &self,
        xid: u64,
        tuples: &mut dyn Iterator<Item = PgResult<BuildTuple>>,
        unique: &mut UniqueCheck<'_>,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<BuildResult>;

    /// Adds `key` -> `tid` (`aminsert`). With `unique` (`amcanunique` methods only) nothing is
    /// inserted while an equal key's row is live or in progress. Inserting an entry that is
    /// already there is a no-op.
    fn insert(
        &self,
        key: &[Datum],
        tid: Tid,
        xid: u64,
        unique: Option<&mut UniqueCheck<'_>>,
    ) -> PgResult<InsertResult>;

    /// Removes every entry whose root `dead` reports gone (`ambulkdelete`); returns how many.
    /// `check` runs between pages; its error stops the walk, later entries stay.
    fn bulk_delete(
        &self,
        xid: u64,
        dead: &dyn Fn(Tid) -> bool,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<u64>;

    /// After every `bulk_delete` of a VACUUM (`amvacuumcleanup`): work a method defers to
    /// vacuum (GIN will merge its pending list here). Nothing for B-tree.
    fn vacuum_cleanup(&self, _xid: u64, _check: &dyn Fn() -> PgResult<()>) -> PgResult<()> {
        Ok(())
    }

    /// An ordered scan of the entries in `range` (`amgettuple`; `can_order` methods).
    fn scan(&self, range: &KeyRange) -> PgResult<Box<dyn IndexScan + 'a>>;

    /// As [`AmIndex::scan`], last entry first (a backward scan: ORDER BY ... DESC). Only
    /// for methods with `can_order`.
    fn scan_backward(&self, _range: &KeyRange) -> PgResult<Box<dyn IndexScan + 'a>> {
        Err(keel_common::PgError::new(
            keel_common::sqlstate::FEATURE_NOT_SUPPORTED,
            "this index access method cannot scan backward",
        ))
    }

    /// Every root that may satisfy all of `keys` (`amgetbitmap`), sorted and without
    /// duplicates. A superset: the caller re-evaluates its conditions on the visible row
    /// (stale entries, and keys the method could only use partly).
    fn bitmap_scan(&self, keys: &[ScanKey]) -> PgResult<Vec<Tid>>;

    /// Number of entries (tests, VACUUM VERBOSE).
    fn count(&self) -> PgResult<u64>;

    /// Removes the entry (`key`, `root`) if `stale()` still says no snapshot needs it, asked
    /// with the entry's page latched so no insert of the same entry slips in between
    /// (PostgreSQL's killed index tuples, removed at once). Returns whether it was removed.
    fn remove_stale(&self, _key: &[u8], _root: Tid, _stale: &dyn Fn() -> bool) -> PgResult<bool> {
        Ok(false)
    }

    /// SERIALIZABLE predicate locking (keel_txn::ssi): the byte key an insert of `key`
    /// covers, compared with [`AmIndex::predicate_range`]s. A method without an order
    /// answers the empty key, which every whole-index range covers.
    fn predicate_key(&self, _key: &[Datum]) -> Vec<u8> {
        Vec::new()
    }

    /// The byte interval `[lo, hi)` (`hi` None: unbounded) of keys a scan of `range` reads;
    /// by default the whole index.
    fn predicate_range(&self, _range: &KeyRange) -> (Vec<u8>, Option<Vec<u8>>) {
        (Vec::new(), None)
    }
}

/// The access method implementing `m`: the one dispatch point from catalog to code.
pub fn method(m: IndexMethod) -> &'static dyn IndexAm {
    match m {
        IndexMethod::Btree => &btree::BtreeAm,
    }
}
