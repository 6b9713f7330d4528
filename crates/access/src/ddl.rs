//! Relation files for DDL, index builds, and vacuum.

use crate::am::{self, BuildResult, BuildTuple, Existing};
use crate::api::*;
use crate::engine::EngineInner;
use crate::heap::{Heap, prune, tuple::Header};
use crate::index::{self, IndexKeys};
use crate::rows::column_types;
use keel_catalog::{IndexDef, Persistence, TableDef};
use keel_common::{PgError, PgResult, Tid, sqlstate};
use keel_storage::page::{LinePointer, PageRead};
use keel_txn::XidStatus;
use std::collections::HashSet;
use std::sync::atomic::Ordering;

impl EngineInner {
    pub fn create_relfile(&self, txn: &Transaction, relfile: u32, unlogged: bool) -> PgResult<()> {
        self.xid(txn)?;
        let f = self.smgr.open(relfile, true)?;
        f.unlogged.store(unlogged, Ordering::Relaxed);
        txn.inner.m.lock().created.push(relfile);
        self.smgr.sync_dir()
    }

    pub fn drop_relfile_at_commit(&self, txn: &Transaction, relfile: u32) {
        txn.inner.m.lock().drop_at_commit.push(relfile);
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
        txn: &Transaction,
        table: &TableDef,
        index: &IndexDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<()> {
        let xid = self.xid(txn)?;
        let caps = am::method(index.method).capabilities();
        if index.unique && !caps.can_unique {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "access method \"{}\" does not support unique indexes",
                    index.method.am().name
                ),
            ));
        }
        let irel = self.rel(index.relfile)?;
        let am = self.open_index(&irel, table, index);
        let rel = self.rel(table.relfile)?;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let keys = IndexKeys::new(table, index);
        let types = column_types(table);
        let mut tuples = BuildTuples {
            engine: self,
            heap: &heap,
            keys: &keys,
            types: &types,
            unique: index.unique,
            horizon: self.txns.horizon(),
            roots: self.roots(table, check)?.into_iter(),
            pending: Vec::new(),
        };
        let mut unique = |key: &[keel_types::Datum], other: Tid| -> PgResult<Existing> {
            index::holds_key(&heap, &keys, &types, other, key, xid)
        };
        match am.build(xid, &mut tuples, &mut unique, check)? {
            BuildResult::Built { .. } => Ok(()),
            BuildResult::Duplicate(key) => Err(PgError::new(
                sqlstate::UNIQUE_VIOLATION,
                format!("could not create unique index \"{}\"", index.name),
            )
            .with_detail(format!(
                "Key ({})=({}) is duplicated.",
                keys.column_names(),
                keys.format_key(&key)
            ))),
        }
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
                let table = catalog.tables.get(&idx.table).ok_or_else(|| {
                    PgError::internal(format!("index \"{}\" has no table", idx.name))
                })?;
                self.open_index(&irel, table, idx).create_empty(0)?;
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
                        let live = h.deleter() == 0
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
            if prune::all_visible(&page, block, &self.txns, horizon) {
                rel.vm_for_vacuum().set(block);
            }
        }
        stats.removed_versions += prune::free_garbage(&heap, garbage)? as u64;
        let catalog = self.catalog();
        for idx in catalog.indexes_of(table.oid) {
            let irel = self.rel(idx.relfile)?;
            let am = self.open_index(&irel, table, idx);
            if !dead_roots.is_empty() {
                stats.index_entries_removed +=
                    am.bulk_delete(0, &|t| dead_roots.contains(&t), check)?;
            }
            am.vacuum_cleanup(0, check)?;
        }
        if !dead_roots.is_empty() {
            for root in &dead_roots {
                check()?;
                let mut page = self.pool.write(&rel.file, root.block)?;
                if page.lp(root.slot) == LinePointer::Dead {
                    page.set_lp(root.slot, LinePointer::Unused);
                    page.trim_slots();
                    self.pool.wal.log_pages(0, &mut [&mut page]);
                    // The last DEAD root of a page may have been what kept its bit clear.
                    if prune::all_visible(&page, root.block, &self.txns, horizon) {
                        rel.vm_for_vacuum().set(root.block);
                    }
                }
            }
        }
        Ok(stats)
    }
}

/// The entries of an index build: for each row (root), its versions that some snapshot may
/// still see, each with its key (duplicate keys of one row are the AM's no-op re-inserts).
struct BuildTuples<'a> {
    engine: &'a EngineInner,
    heap: &'a Heap<'a>,
    keys: &'a IndexKeys<'a>,
    types: &'a [keel_types::TypeId],
    unique: bool,
    /// Versions deleted by a transaction committed at or below it are dead to every snapshot.
    horizon: u64,
    roots: std::vec::IntoIter<Tid>,
    /// Versions of the current root not yet handed out, last first.
    pending: Vec<BuildTuple>,
}

impl BuildTuples<'_> {
    fn versions(&mut self, root: Tid) -> PgResult<()> {
        let txns = &self.engine.txns;
        let horizon = self.horizon;
        let mut err = None;
        let mut rows = Vec::new();
        self.heap.walk_all(root, |_, h, row| {
            if matches!(txns.status(h.xmin), XidStatus::Aborted) {
                return false;
            }
            let dead = h.deleter() != 0
                && matches!(txns.status(h.xmax), XidStatus::Committed(c) if c <= horizon);
            if !dead {
                match keel_types::row::decode_row(row, self.types) {
                    Ok(v) => rows.push(v),
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
        for values in rows.into_iter().rev() {
            self.pending.push(BuildTuple {
                tid: root,
                key: self.keys.key_of(&values),
                unique: self.unique && !self.keys.has_null(&values),
            });
        }
        Ok(())
    }
}

impl Iterator for BuildTuples<'_> {
    type Item = PgResult<BuildTuple>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(t) = self.pending.pop() {
                return Some(Ok(t));
            }
            let root = self.roots.next()?;
            if let Err(e) = self.versions(root) {
                self.roots = Vec::new().into_iter();
                return Some(Err(e));
            }
        }
    }
}
