//! Relation files for DDL, index builds, and vacuum.

use crate::api::*;
use crate::engine::EngineInner;
use crate::heap::{Heap, prune, tuple::Header};
use crate::index::{self, IndexKeys};
use crate::rows::column_types;
use keel_btree::{BTree, Existing, UniqueInsert};
use keel_catalog::{IndexDef, Persistence, TableDef};
use keel_common::{PgError, PgResult, Tid, sqlstate};
use keel_storage::page::{LinePointer, PageRead};
use keel_txn::XidStatus;
use std::collections::HashSet;
use std::sync::atomic::Ordering;

impl EngineInner {
    pub fn create_relfile(
        &self,
        txn: &mut Transaction,
        relfile: u32,
        unlogged: bool,
    ) -> PgResult<()> {
        self.xid(txn)?;
        let f = self.smgr.open(relfile, true)?;
        f.unlogged.store(unlogged, Ordering::Relaxed);
        txn.inner.created.push(relfile);
        self.smgr.sync_dir()
    }

    pub fn drop_relfile_at_commit(&self, txn: &mut Transaction, relfile: u32) {
        txn.inner.drop_at_commit.push(relfile);
    }

    /// Roots of every row stored in the table.
    fn roots(&self, table: &TableDef, check: &dyn Fn() -> PgResult<()>) -> PgResult<Vec<Tid>> {
        let rel = self.rel(table.relfile)?;
        let mut roots = Vec::new();
        for block in 0..rel.file.nblocks() {
            check()?;
            let page = self.pool.read(&rel.file, block)?;
            for slot in 0..page.slot_count() {
                let tid = Tid::new(block, slot);
                match page.lp(slot) {
                    LinePointer::Redirect { .. } => roots.push(tid),
                    LinePointer::Normal { .. } if Header::read(page.item(slot)).root == tid => {
                        roots.push(tid)
                    }
                    _ => {}
                }
            }
        }
        Ok(roots)
    }

    pub fn build_index(
        &self,
        txn: &mut Transaction,
        table: &TableDef,
        index: &IndexDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<()> {
        let xid = self.xid(txn)?;
        let irel = self.rel(index.relfile)?;
        let tree = BTree::new(self.pool.clone(), irel.file.clone());
        if irel.file.nblocks() == 0 {
            tree.create(xid)?;
        }
        let rel = self.rel(table.relfile)?;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let keys = IndexKeys::new(table, index);
        let types = column_types(table);
        let horizon = self.txns.horizon();
        let txns = &self.txns;
        for root in self.roots(table, check)? {
            check()?;
            let mut versions: Vec<Vec<keel_types::Datum>> = Vec::new();
            let mut err = None;
            heap.walk_all(root, |_, h, row| {
                if matches!(txns.status(h.xmin), XidStatus::Aborted) {
                    return false;
                }
                let dead = h.xmax != 0
                    && matches!(txns.status(h.xmax), XidStatus::Committed(c) if c <= horizon);
                if !dead {
                    match keel_types::row::decode_row(row, &types) {
                        Ok(v) => versions.push(v),
                        Err(e) => {
                            err = Some(e);
                            return false;
                        }
                    }
                }
                true
            })?;
            if let Some(e) = err {
                return Err(e);
            }
            let mut seen: HashSet<Vec<u8>> = HashSet::new();
            for values in versions {
                let key = keys.encode_row(&values);
                if !seen.insert(key.clone()) {
                    continue;
                }
                if !index.unique || keys.has_null(&values) {
                    tree.insert(&key, root, xid)?;
                    continue;
                }
                let mut check = |other: Tid| -> PgResult<Existing> {
                    if other == root {
                        return Ok(Existing::Dead);
                    }
                    index::holds_key(&heap, &keys, &types, other, &key, xid)
                };
                match tree.insert_unique(&key, root, xid, &mut check)? {
                    UniqueInsert::Inserted => {}
                    UniqueInsert::Duplicate(_) | UniqueInsert::Wait(_) => {
                        return Err(PgError::new(
                            sqlstate::UNIQUE_VIOLATION,
                            format!("could not create unique index \"{}\"", index.name),
                        )
                        .with_detail(format!(
                            "Key ({})=({}) is duplicated.",
                            keys.column_names(),
                            keys.format_values(&values)
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// After a crash, unlogged tables were emptied; their indexes need a fresh empty tree.
    pub(crate) fn reinit_unlogged_indexes(&self) -> PgResult<()> {
        let catalog = self.catalog();
        for idx in catalog.indexes.values() {
            let unlogged = catalog
                .tables
                .get(&idx.table)
                .is_some_and(|t| t.persistence == Persistence::Unlogged);
            if unlogged {
                let irel = self.rel(idx.relfile)?;
                irel.file.truncate()?;
                self.pool.discard_rel(idx.relfile);
                BTree::new(self.pool.clone(), irel.file.clone()).create(0)?;
            }
        }
        Ok(())
    }

    /// Prunes every page of the table, then removes index entries of rows that are gone.
    pub fn vacuum(
        &self,
        table: &TableDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<VacuumStats> {
        let rel = self.rel(table.relfile)?;
        let horizon = self.txns.horizon();
        let mut stats = VacuumStats::default();
        let mut dead_roots: HashSet<Tid> = HashSet::new();
        let nblocks = rel.file.nblocks();
        stats.pages = nblocks as u64;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let mut garbage = Vec::new();
        for block in 0..nblocks {
            if let Err(e) = check() {
                // The versions already unlinked are reachable from nowhere else.
                prune::free_garbage(&heap, garbage)?;
                return Err(e);
            }
            let mut page = self.pool.write(&rel.file, block)?;
            if page.is_new() {
                continue;
            }
            let pruned = prune::prune_page(&mut page, &self.txns, horizon, &|t| heap.peek(t));
            page.set_prune_after(pruned.next_at);
            let freed = pruned.reclaimed;
            garbage.extend(pruned.garbage);
            if freed > 0 || page.changed() {
                self.pool.wal.log_pages(0, &mut [&mut page]);
                stats.removed_versions += freed as u64;
            }
            for slot in 0..page.slot_count() {
                match page.lp(slot) {
                    LinePointer::Dead => {
                        dead_roots.insert(Tid::new(block, slot));
                    }
                    LinePointer::Normal { .. } => {
                        let h = Header::read(page.item(slot));
                        let live = h.xmax == 0
                            || !matches!(self.txns.status(h.xmax), XidStatus::Committed(_));
                        if live && !matches!(self.txns.status(h.xmin), XidStatus::Aborted) {
                            stats.live_rows += 1;
                        } else {
                            stats.dead_rows += 1;
                        }
                    }
                    _ => {}
                }
            }
            if page.free_space() > keel_storage::PAGE_SIZE / 5 {
                rel.page_has_room(block);
            }
        }
        stats.removed_versions += prune::free_garbage(&heap, garbage)? as u64;
        if !dead_roots.is_empty() {
            let catalog = self.catalog();
            for idx in catalog.indexes_of(table.oid) {
                let irel = self.rel(idx.relfile)?;
                let tree = BTree::new(self.pool.clone(), irel.file.clone());
                stats.index_entries_removed +=
                    tree.bulk_delete(0, &|t| dead_roots.contains(&t), check)?;
            }
            for root in &dead_roots {
                check()?;
                let mut page = self.pool.write(&rel.file, root.block)?;
                if page.lp(root.slot) == LinePointer::Dead {
                    page.set_lp(root.slot, LinePointer::Unused);
                    page.trim_slots();
                    self.pool.wal.log_pages(0, &mut [&mut page]);
                }
            }
        }
        Ok(stats)
    }
}
