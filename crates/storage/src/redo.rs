//! Redo of page records during crash recovery.

use crate::buffer::BufferPool;
use crate::page::{PAGE_SIZE, PageRead};
use crate::wal::WalRecord;
use crate::wal::record::{COMPACT, parse_pages};
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
                if *off == COMPACT {
                    page.compact_in_place();
                } else {
                    page.apply(*off as usize, bytes);
                }
            }
        }
        debug_assert!(page.data().len() == PAGE_SIZE);
        page.set_lsn(rec.end_lsn);
        page.mark_dirty();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::LinePointer;
    use crate::smgr::Smgr;
    use crate::wal::Wal;
    use crate::wal::WalReader;
    use std::sync::Arc;

    fn item(i: usize) -> Vec<u8> {
        (0..40 + i * 7 % 90).map(|b| (b * 31 + i) as u8).collect()
    }

    /// Changes before, between and after compactions, logged as records, must replay to the
    /// same bytes; a compaction is logged as an operation, not as the page's moved bytes.
    #[test]
    fn redo_of_ranges_and_compactions_rebuilds_the_page_exactly() {
        let live_dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(live_dir.path()).unwrap());
        let wal = Wal::open(live_dir.path(), 0, 0, false).unwrap();
        let pool = BufferPool::new(smgr.clone(), wal.clone(), 16);
        let rel = smgr.open(7, true).unwrap();
        let mut sizes = Vec::new();
        {
            let mut page = pool.extend(&rel).unwrap();
            page.init(1, 0);
            for i in 0..50 {
                page.add_item(&item(i)).unwrap();
            }
            wal.log_pages(1, &mut [&mut page]);

            for s in (0..50).filter(|s| s % 3 == 0) {
                page.set_lp(s, LinePointer::Unused);
            }
            page.set_lp(49, LinePointer::Unused);
            page.trim_slots();
            page.compact();
            page.add_item(&item(100)).unwrap();
            page.write_in_item(4, 2, &[9, 9, 9]);
            page.set_lp(7, LinePointer::Dead);
            page.compact();
            assert!(page.replace_item(5, &item(200)));
            let before = wal.insert_lsn();
            wal.log_pages(2, &mut [&mut page]);
            sizes.push(wal.insert_lsn() - before);
        }
        wal.flush_blocking(wal.insert_lsn()).unwrap();
        let live = *pool.read(&rel, 0).unwrap().data();

        let redo_dir = tempfile::tempdir().unwrap();
        let rsmgr = Arc::new(Smgr::new(redo_dir.path()).unwrap());
        let rpool = BufferPool::new(rsmgr.clone(), Wal::recovery_stub(redo_dir.path()), 16);
        let mut reader = WalReader::new(wal.dir(), 0);
        let mut records = 0;
        while let Some(rec) = reader.next_record() {
            redo_pages(&rpool, &rec, &|_| false).unwrap();
            records += 1;
        }
        assert_eq!(records, 2);
        let rrel = rsmgr.open(7, false).unwrap();
        let replayed = *rpool.read(&rrel, 0).unwrap().data();
        let first_diff = (0..PAGE_SIZE).find(|&i| live[i] != replayed[i]);
        assert_eq!(first_diff, None, "replayed page differs from the live one");
        assert!(
            sizes[0] < 1024,
            "the compacting record took {} bytes",
            sizes[0]
        );
        wal.shutdown();
    }
}
