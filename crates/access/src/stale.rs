//! Stale index entries. An UPDATE that changes a row's key adds an entry for the new key and
//! leaves the old one pointing at the row's root: readers of the old key skip it (the
//! version they see does not hold that key), but each still pays a heap fetch for it. A job
//! queue that moves rows from `state = 'new'` to `'done'` would make every later scan of the
//! new jobs walk past all the finished ones.
//!
//! So an index scan that meets a stale entry checks whether any snapshot may still need it:
//! every version of the row that holds the entry's key was replaced by a transaction that
//! committed at or below the vacuum horizon. If so, it removes the entry when the scan ends
//! (PostgreSQL marks such entries LP_DEAD, "killed tuples", and skips them after that), asking
//! again with the entry's leaf latched: an UPDATE that gives the row that key back places its
//! version before its index entry, so either the check sees the version, or the insert comes
//! after the removal and adds the entry anew.

use crate::am::AmIndex;
use crate::heap::Heap;
use keel_common::{PgResult, Tid};
use keel_txn::XidStatus;

/// Entries a scan will try to remove when it ends; more are not collected.
pub(crate) const MAX_PER_SCAN: usize = 64;

/// Whether no snapshot can need the entry of `root` whose key `has_key` recognizes in a
/// version's stored row: each such version was deleted or replaced by a transaction
/// committed at or below `horizon`. Decoding errors count as holding the key.
pub(crate) fn stale_for_all(
    heap: &Heap<'_>,
    root: Tid,
    horizon: u64,
    has_key: &dyn Fn(&[u8]) -> bool,
) -> PgResult<bool> {
    let mut stale = true;
    heap.walk_all(root, |_, h, row| {
        if has_key(row) {
            let d = h.deleter();
            let gone =
                d != 0 && matches!(heap.txns.status(d), XidStatus::Committed(c) if c <= horizon);
            if !gone {
                stale = false;
                return false;
            }
        }
        true
    })?;
    Ok(stale)
}

/// Removes the entries `found` from `am` where, checked again under the leaf latch, they are
/// still stale for every snapshot. `key_of_row` gives the encoded index key of a stored row
/// (None if it cannot be decoded).
pub(crate) fn remove(
    am: &dyn AmIndex<'_>,
    heap: &Heap<'_>,
    horizon: u64,
    found: &[(Vec<u8>, Tid)],
    key_of_row: &dyn Fn(&[u8]) -> Option<Vec<u8>>,
) -> PgResult<u64> {
    let mut removed = 0;
    for (key, root) in found {
        let has_key = |row: &[u8]| key_of_row(row).is_none_or(|k| k == *key);
        let still = || stale_for_all(heap, *root, horizon, &has_key).unwrap_or(false);
        if am.remove_stale(key, *root, &still)? {
            removed += 1;
        }
    }
    Ok(removed)
}
