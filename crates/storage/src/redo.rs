//! Redo of page records during crash recovery.

use crate::buffer::BufferPool;
use crate::page::{PAGE_SIZE, PageRead};
use crate::wal::WalRecord;
use crate::wal::record::parse_pages;
use keel_common::PgResult;

/// Applies a `Pages` record: a full-page image always, ranges only to pages older than the
/// record. `skip(rel)` filters out relations that no longer exist (dropped later in the log).
pub fn redo_pages(pool: &BufferPool, rec: &WalRecord, skip: &dyn Fn(u32) -> bool) -> PgResult<()> {
    for img in parse_pages(&rec.payload)? {
        if skip(img.rel) {
            continue;
        }
        let rel = pool.smgr.open(img.rel, true)?;
        rel.ensure_nblocks(img.block + 1);
        let mut page = pool.write(&rel, img.block)?;
        if let Some(full) = img.full {
            page.restore(full);
        } else {
            if page.lsn() >= rec.end_lsn {
                continue;
            }
            if img.init {
                page.zero_for_redo();
            }
            for (off, bytes) in &img.ranges {
                page.apply(*off as usize, bytes);
            }
        }
        debug_assert!(page.data().len() == PAGE_SIZE);
        page.set_lsn(rec.end_lsn);
        page.mark_dirty();
    }
    Ok(())
}
