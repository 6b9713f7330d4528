//! Index-only scans: rows answered from index entries alone where the visibility map says the
//! root's page holds only rows every snapshot sees (vismap.rs), from the heap otherwise.
//!
//! A row from the index is the table's width with the index's key columns filled in and every
//! other column NULL: the planner chooses an index-only scan only when nothing above reads
//! another column. Its `RowRef::version` is `Tid::INVALID` (no version was read). Every entry
//! whose row had to be looked up in the heap, visible or not, adds one to the scan's
//! `heap_fetches` (EXPLAIN ANALYZE's `Heap Fetches`); that lookup is the index scan's own
//! (rows.rs: fetch the visible version, recheck the entry's key).

use crate::am;
use crate::api::RowRef;
use crate::relstate::RelState;
use keel_common::{PgError, PgResult, Tid};
use keel_types::Datum;

/// The row of the entry `source` returned last (for `root`), from the entry alone, when the
/// visibility map allows; None when the heap must be read.
pub(crate) fn from_index(
    rel: &RelState,
    source: &dyn am::IndexScan,
    columns: &[usize],
    root: Tid,
    width: usize,
) -> PgResult<Option<(RowRef, Vec<Datum>)>> {
    if !rel.vm().is_some_and(|vm| vm.all_visible(root.block)) {
        return Ok(None);
    }
    let key = source.key().ok_or_else(|| {
        PgError::internal("index-only scan of an index that cannot return its keys")
    })?;
    let mut row = vec![Datum::Null; width];
    for (&c, v) in columns.iter().zip(key) {
        row[c] = v;
    }
    let rref = RowRef {
        root,
        version: Tid::INVALID,
    };
    Ok(Some((rref, row)))
}
