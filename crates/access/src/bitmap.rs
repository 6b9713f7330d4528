//! Bitmap heap scans: the index gives every row root that may match (`AmIndex::bitmap_scan`,
//! sorted by block and without duplicates), and the heap is then read in that physical order,
//! each page once for all its matching rows, instead of in index order. The rows returned are
//! the versions the statement's snapshot sees; the caller rechecks its whole condition on each
//! (an entry may be stale, and a method may use only part of the keys).

use crate::am::ScanKey;
use crate::api::*;
use crate::engine::EngineInner;
use crate::heap::Heap;
use crate::relstate::RelState;
use crate::rows::Decoder;
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgResult, Tid};
use keel_txn::Snapshot;
use std::sync::Arc;

impl EngineInner {
    pub fn bitmap_heap_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        keys: &[ScanKey],
        matched: &std::sync::atomic::AtomicU64,
        columns: Option<Arc<[bool]>>,
    ) -> RowIter<'a> {
        let setup = || -> PgResult<BitmapHeapScan<'a>> {
            let rel = self.rel(table.relfile)?;
            let irel = self.rel(index.relfile)?;
            let ssi = crate::ssi::Reader::of(self, txn);
            if let Some(r) = &ssi {
                r.lock_relation(table.relfile)?;
            }
            let roots = self.open_index(&irel, table, index).bitmap_scan(keys)?;
            matched.fetch_add(roots.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(BitmapHeapScan {
                engine: self,
                ssi,
                rel,
                snap: self.snapshot(txn),
                decoder: Decoder::new(table, columns, &[]),
                roots: roots.into_iter(),
            })
        };
        match setup() {
            Ok(s) => Box::new(s),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }
}

struct BitmapHeapScan<'a> {
    engine: &'a EngineInner,
    ssi: Option<crate::ssi::Reader<'a>>,
    rel: Arc<RelState>,
    snap: Snapshot,
    decoder: Decoder,
    roots: std::vec::IntoIter<Tid>,
}

impl RowSource for BitmapHeapScan<'_> {}

impl Iterator for BitmapHeapScan<'_> {
    type Item = PgResult<(RowRef, Vec<keel_types::Datum>)>;

    fn next(&mut self) -> Option<Self::Item> {
        for root in self.roots.by_ref() {
            let heap = Heap::new(&self.engine.pool, &self.engine.txns, &self.rel);
            let decoder = &self.decoder;
            let found = heap
                .fetch_visible(root, &self.snap, |tid, h, row| {
                    (tid, *h, decoder.decode(row))
                })
                .and_then(|found| {
                    if let Some(r) = &self.ssi {
                        r.fetched(&heap, root, &self.snap, found.as_ref().map(|f| &f.1))?;
                    }
                    Ok(found)
                });
            match found {
                Ok(Some((tid, _, values))) => {
                    return Some(values.map(|values| (RowRef { root, version: tid }, values)));
                }
                Ok(None) => continue,
                Err(e) => {
                    self.roots = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
        None
    }
}
