//! Row operations: scans, index scans, insert, update, delete.

use crate::am::{self, Existing, InsertResult};
use crate::api::*;
use crate::engine::EngineInner;
use crate::heap::{self, Heap, LockOutcome};
use crate::index::{self, IndexKeys};
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgError, PgResult, Tid, Xid, sqlstate};
use keel_storage::page::{LinePointer, PageRead};
use keel_txn::Snapshot;
use keel_types::Datum;
use keel_types::row::decode_row as decode;
use std::sync::Arc;

pub(crate) use crate::decoder::{Decoder, column_types};

/// Bytes a page must keep free for later updates of its rows (fillfactor).
fn reserve(table: &TableDef) -> usize {
    keel_storage::PAGE_SIZE * (100 - table.fillfactor.clamp(10, 100) as usize) / 100
}

/// What adding one index entry came to.
pub(crate) enum Indexed {
    Done,
    Wait(RowWait),
    /// The key is taken in an arbiter index.
    Conflict,
}

impl EngineInner {
    pub fn scan<'a>(&'a self, txn: &'a Transaction, table: &'a TableDef) -> RowIter<'a> {
        self.scan_columns(txn, table, None)
    }

    /// [`EngineInner::scan`] decoding only `columns` (None: all; see [`Decoder`]).
    pub fn scan_columns<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        columns: Option<std::sync::Arc<[bool]>>,
    ) -> RowIter<'a> {
        self.scan_filtered(txn, table, columns, None)
    }

    /// [`EngineInner::scan_columns`] with a pre-filter on the rows' stored bytes.
    pub fn scan_filtered<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        columns: Option<std::sync::Arc<[bool]>>,
        prefilter: Option<std::sync::Arc<Prefilter>>,
    ) -> RowIter<'a> {
        let rel = match self.rel(table.relfile) {
            Ok(r) => r,
            Err(e) => return Box::new(std::iter::once(Err(e))),
        };
        let ssi = crate::ssi::Reader::of(self, txn);
        if let Some(r) = &ssi
            && let Err(e) = r.lock_relation(table.relfile)
        {
            return Box::new(std::iter::once(Err(e)));
        }
        let nblocks = rel.file.nblocks();
        Box::new(SeqScan {
            engine: self,
            ssi,
            rel,
            snap: self.snapshot(txn),
            decoder: Decoder::new(table, columns, &[]).with_prefilter(prefilter),
            block: 0,
            nblocks,
            refs: Vec::new(),
            values: Vec::new(),
            at: 0,
            seen: u64::MAX,
        })
    }

    pub fn index_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
    ) -> RowIter<'a> {
        self.index_scan_with(txn, table, index, range, IndexScanOptions::default())
    }

    /// An index scan, backward and / or index-only (see indexonly.rs) as `options` say.
    pub fn index_scan_with<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
        options: IndexScanOptions,
    ) -> RowIter<'a> {
        match self.open_index_scan(txn, table, index, range, options) {
            Ok(s) => Box::new(s),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }

    /// The scan of [`EngineInner::index_scan_with`], which [`IndexProbe::rescan`] restarts.
    pub(crate) fn open_index_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
        options: IndexScanOptions,
    ) -> PgResult<IndexScan<'a>> {
        let heap_fetches = options.index_only;
        let setup = || -> PgResult<IndexScan<'a>> {
            let rel = self.rel(table.relfile)?;
            let irel = self.rel(index.relfile)?;
            let am = self.open_index(&irel, table, index);
            let ssi = crate::ssi::Reader::of(self, txn);
            if let Some(r) = &ssi {
                r.lock_range(index.relfile, &am.predicate_range(&range))?;
            }
            let source = if options.backward {
                am.scan_backward(&range)?
            } else {
                am.scan(&range)?
            };
            Ok(IndexScan {
                engine: self,
                ssi,
                table,
                index,
                irel,
                horizon: None,
                stale: Vec::new(),
                pin: Default::default(),
                rel,
                snap: self.snapshot(txn),
                decoder: Decoder::new(table, options.columns.clone(), &index.columns)
                    .with_prefilter(options.prefilter.clone()),
                keys: IndexKeys::new(table, index),
                source,
                only: heap_fetches.map(|f| (f, index.columns.as_slice())),
                backward: options.backward,
                done: false,
            })
        };
        setup()
    }

    pub fn insert(
        &self,
        txn: &Transaction,
        table: &TableDef,
        row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        Ok(match self.insert_arbitrated(txn, table, row, state, &[])? {
            Write::Done(Some(r)) => Write::Done(r),
            Write::Done(None) => {
                return Err(PgError::internal("an insert without arbiters conflicted"));
            }
            Write::Wait(w) => Write::Wait(w),
            Write::Updated(r) => Write::Updated(r),
            Write::Deleted => Write::Deleted,
        })
    }

    /// Inserts a row and its index entries. A duplicate key in one of `arbiters` (ON
    /// CONFLICT's arbiter indexes, whose entries go in first) takes the row back
    /// (`super_delete`) and gives `Done(None)`; in any other unique index it is 23505.
    pub(crate) fn insert_arbitrated(
        &self,
        txn: &Transaction,
        table: &TableDef,
        row: &[Datum],
        state: &mut WriteState,
        arbiters: &[Arc<IndexDef>],
    ) -> PgResult<Write<Option<RowRef>>> {
        let xid = self.xid(txn)?;
        let cid = txn.inner.command_id();
        let types = column_types(table);
        let rel = self.rel(table.relfile)?;
        let tid = match state.heap_tid {
            Some(t) => t,
            None => {
                let mut bytes = Vec::with_capacity(128);
                keel_types::row::encode_row(row, &types, &mut bytes);
                let t = Heap::new(&self.pool, &self.txns, &rel).insert(
                    &bytes,
                    xid,
                    cid,
                    None,
                    reserve(table),
                    None,
                )?;
                state.heap_tid = Some(t);
                txn.inner.note_write(table);
                self.ssi_wrote_row(txn, table.relfile, None)?;
                txn.inner.count_change(&rel);
                t
            }
        };
        let catalog = txn
            .pending_catalog
            .clone()
            .unwrap_or_else(|| self.catalog());
        let others = catalog
            .indexes_of(table.oid)
            .filter(|i| !arbiters.iter().any(|a| a.oid == i.oid));
        for (i, idx) in arbiters
            .iter()
            .chain(others)
            .map(|a| &**a)
            .enumerate()
            .skip(state.indexes_done)
        {
            let arbiter = i < arbiters.len();
            match self.index_insert(txn, &rel, table, idx, row, tid, xid, arbiter)? {
                Indexed::Done => {}
                Indexed::Wait(w) => return Ok(Write::Wait(w)),
                Indexed::Conflict => {
                    Heap::new(&self.pool, &self.txns, &rel).super_delete(tid, xid)?;
                    return Ok(Write::Done(None));
                }
            }
            state.indexes_done = i + 1;
        }
        Ok(Write::Done(Some(RowRef {
            root: tid,
            version: tid,
        })))
    }

    /// Adds (key of `row`, `root`) to `idx`, enforcing uniqueness: a duplicate is 23505,
    /// or `Conflict` when `idx` is an arbiter.
    #[allow(clippy::too_many_arguments)]
    fn index_insert(
        &self,
        txn: &Transaction,
        rel: &crate::relstate::RelState,
        table: &TableDef,
        idx: &IndexDef,
        row: &[Datum],
        root: Tid,
        xid: u64,
        arbiter: bool,
    ) -> PgResult<Indexed> {
        let keys = IndexKeys::new(table, idx);
        let key = keys.key_of(row);
        let irel = self.rel(idx.relfile)?;
        let am = self.open_index(&irel, table, idx);
        let sx = txn.inner.m.lock().sx;
        let ssi_key = |am: &dyn am::AmIndex<'_>| match sx {
            Some(_) => self.ssi_wrote_key(txn, idx.relfile, &am.predicate_key(&key)),
            None => Ok(()),
        };
        if !idx.unique || keys.has_null(row) {
            am.insert(&key, root, xid, None)?;
            ssi_key(&*am)?;
            return Ok(Indexed::Done);
        }
        let heap = Heap::new(&self.pool, &self.txns, rel);
        let types = column_types(table);
        let mut check = |key: &[Datum], other: Tid| -> PgResult<Existing> {
            index::holds_key(&heap, &keys, &types, other, key, xid)
        };
        let inserted = am.insert(&key, root, xid, Some(&mut check))?;
        if !matches!(inserted, InsertResult::Wait(_)) {
            // Before a duplicate's 23505 too: a serialization failure it masks comes first.
            ssi_key(&*am)?;
        }
        match inserted {
            InsertResult::Inserted => Ok(Indexed::Done),
            InsertResult::Wait(x) => Ok(Indexed::Wait(RowWait {
                xid: Xid(x),
                tuple: None,
                visible: false,
            })),
            InsertResult::Duplicate(_) if arbiter => Ok(Indexed::Conflict),
            InsertResult::Duplicate(_) => Err(PgError::new(
                sqlstate::UNIQUE_VIOLATION,
                format!(
                    "duplicate key value violates unique constraint \"{}\"",
                    idx.name
                ),
            )
            .with_detail(format!(
                "Key ({})=({}) already exists.",
                keys.column_names(),
                keys.format_key(&key)
            ))),
        }
    }

    pub fn update(
        &self,
        txn: &Transaction,
        table: &TableDef,
        target: RowRef,
        new_row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        let xid = self.xid(txn)?;
        txn.inner.note_write(table);
        let cid = txn.inner.command_id();
        let types = column_types(table);
        let rel = self.rel(table.relfile)?;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let catalog = txn
            .pending_catalog
            .clone()
            .unwrap_or_else(|| self.catalog());
        let has_indexes = catalog.indexes_of(table.oid).next().is_some();
        let mut old_bytes = None;
        let new_tid = match state.heap_tid {
            Some(t) => t,
            None => {
                let mut bytes = Vec::with_capacity(128);
                keel_types::row::encode_row(new_row, &types, &mut bytes);
                let horizon = || self.txns.horizon();
                let (out, new) = heap.update(
                    target.version,
                    target.root,
                    &bytes,
                    xid,
                    cid,
                    has_indexes,
                    horizon,
                    &|| self.others_queue(txn, &rel, target.root),
                    if state.no_key {
                        keel_txn::Strength::NoKeyUpdate
                    } else {
                        keel_txn::Strength::Update
                    },
                )?;
                match out {
                    LockOutcome::Locked => {}
                    LockOutcome::ModifiedLater => return Err(modified_later("updated")),
                    other => return self.lock_failure(txn, &heap, target, xid, other),
                }
                let (t, old) = new.ok_or_else(|| PgError::internal("update placed no version"))?;
                rel.changes
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                txn.inner.count_change(&rel);
                state.heap_tid = Some(t);
                old_bytes = Some(old);
                self.ssi_wrote_row(txn, table.relfile, Some(target.root))?;
                t
            }
        };
        if has_indexes {
            let old = match old_bytes {
                Some(b) => b,
                None => self.read_version(&rel, target.version)?,
            };
            let old_row = decode(&old, &types)?;
            for (i, idx) in catalog
                .indexes_of(table.oid)
                .enumerate()
                .skip(state.indexes_done)
            {
                let keys = IndexKeys::new(table, idx);
                // The heart of the design: an index whose key did not change is not touched.
                if keys.changed(&keys.key_of(&old_row), &keys.key_of(new_row))
                    && let Indexed::Wait(w) =
                        self.index_insert(txn, &rel, table, idx, new_row, target.root, xid, false)?
                {
                    return Ok(Write::Wait(w));
                }
                state.indexes_done = i + 1;
            }
        }
        Ok(Write::Done(RowRef {
            root: target.root,
            version: new_tid,
        }))
    }

    pub fn delete(
        &self,
        txn: &Transaction,
        table: &TableDef,
        target: RowRef,
    ) -> PgResult<Write<()>> {
        let xid = self.xid(txn)?;
        txn.inner.note_write(table);
        let cid = txn.inner.command_id();
        let rel = self.rel(table.relfile)?;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let must_queue = || self.others_queue(txn, &rel, target.root);
        match heap.delete(target.version, target.root, xid, cid, &must_queue)? {
            LockOutcome::Locked => {
                rel.changes
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                txn.inner.count_change(&rel);
                self.ssi_wrote_row(txn, table.relfile, Some(target.root))?;
                Ok(Write::Done(()))
            }
            LockOutcome::ModifiedLater => Err(modified_later("deleted")),
            other => match self.lock_failure(txn, &heap, target, xid, other)? {
                Write::Wait(w) => Ok(Write::Wait(w)),
                Write::Updated(r) => Ok(Write::Updated(r)),
                _ => Ok(Write::Deleted),
            },
        }
    }

    /// Fair row locking: whether writers other than `txn` hold or wait for row `root`'s tuple
    /// lock. A writer that finds the row free then joins the end of that queue
    /// (`LockOutcome::Queue`) rather than taking the row: otherwise one arriving just after
    /// the row's holder pre-commits takes it ahead of the woken head of the queue, which must
    /// wait again (at 256 pgbench clients on 10 branch rows, again and again).
    pub(crate) fn others_queue(
        &self,
        txn: &Transaction,
        rel: &crate::relstate::RelState,
        root: Tid,
    ) -> bool {
        let key = (rel.file.id, root.to_u64());
        // The shared map first: without contention it answers from an atomic, no lock taken.
        self.txns.tuple_locks.is_queued(key)
            && txn.inner.tuple_guard.lock().as_ref().map(|g| g.key()) != Some(key)
    }

    pub(crate) fn lock_failure(
        &self,
        txn: &Transaction,
        heap: &Heap<'_>,
        target: RowRef,
        xid: u64,
        out: LockOutcome,
    ) -> PgResult<Write<RowRef>> {
        let root = target.root;
        let outcome = match out {
            LockOutcome::Wait(x) => Write::Wait(RowWait {
                xid: Xid(x),
                tuple: Some((heap.rel.file.id, root)),
                visible: false,
            }),
            LockOutcome::WaitVisible(x) => Write::Wait(RowWait {
                xid: Xid(x),
                tuple: Some((heap.rel.file.id, root)),
                visible: true,
            }),
            // Only a turn in the row's queue is awaited.
            LockOutcome::Queue => Write::Wait(RowWait {
                xid: Xid(0),
                tuple: Some((heap.rel.file.id, root)),
                visible: false,
            }),
            // Walk on from the version we targeted (our snapshot keeps it from being pruned)
            // rather than from the root, and remember where we got to for fetch_newest.
            LockOutcome::Updated => {
                let own = txn.inner.m.lock().xid.unwrap_or(xid);
                match heap.fetch_newest(root, target.version, own)? {
                    Some(v) => {
                        *txn.inner.newest_hint.lock() = Some((root, v.tid));
                        Write::Updated(RowRef {
                            root,
                            version: v.tid,
                        })
                    }
                    None => Write::Deleted,
                }
            }
            LockOutcome::Deleted
            | LockOutcome::SelfModified
            | LockOutcome::ModifiedLater
            | LockOutcome::Locked
            | LockOutcome::Held
            | LockOutcome::Listed => Write::Deleted,
        };
        self.note_precommitted_dependency(txn, heap.built_on_precommit.get());
        Ok(outcome)
    }

    fn read_version(&self, rel: &crate::relstate::RelState, tid: Tid) -> PgResult<Vec<u8>> {
        let page = self.pool.read(&rel.file, tid.block)?;
        match page.lp(tid.slot) {
            LinePointer::Normal { .. } => Ok(page.item(tid.slot)[heap::tuple::HEADER..].to_vec()),
            _ => Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("row version {tid} vanished"),
            )),
        }
    }

    pub fn fetch_newest(
        &self,
        txn: &Transaction,
        table: &TableDef,
        root: Tid,
    ) -> PgResult<Option<(RowRef, Vec<Datum>)>> {
        let rel = self.rel(table.relfile)?;
        let heap = Heap::new(&self.pool, &self.txns, &rel);
        let own = txn.inner.m.lock().xid.unwrap_or(0);
        let start = match *txn.inner.newest_hint.lock() {
            Some((r, v)) if r == root => v,
            _ => root,
        };
        let newest = heap.fetch_newest(root, start, own)?;
        self.note_precommitted_dependency(txn, heap.built_on_precommit.get());
        match newest {
            Some(v) => Ok(Some((
                RowRef {
                    root,
                    version: v.tid,
                },
                decode(&v.row, &column_types(table))?,
            ))),
            None => Ok(None),
        }
    }
}

struct SeqScan<'a> {
    engine: &'a EngineInner,
    ssi: Option<crate::ssi::Reader<'a>>,
    rel: std::sync::Arc<crate::relstate::RelState>,
    snap: Snapshot,
    decoder: Decoder,
    block: u32,
    nblocks: u32,
    /// The visible rows of the last page read, decoded while it was pinned (no copy of
    /// their bytes): their identities, and their values one row after another in one
    /// buffer that every page reuses.
    refs: Vec<RowRef>,
    values: Vec<Datum>,
    /// The batch's next row.
    at: usize,
    /// The creator last found visible (`heap::visible_to_scan`).
    seen: u64,
}

impl SeqScan<'_> {
    fn load_page(&mut self) -> PgResult<()> {
        self.refs.clear();
        self.values.clear();
        self.at = 0;
        let page = self.engine.pool.read(&self.rel.file, self.block)?;
        let txns = &self.engine.txns;
        for slot in 0..page.slot_count() {
            if let LinePointer::Normal { .. } = page.lp(slot) {
                let item = page.item(slot);
                let h = heap::tuple::Header::read(item);
                let visible = heap::visible_to_scan(txns, &self.snap, &h, &mut self.seen);
                if let Some(r) = &self.ssi {
                    r.examined(&self.snap, &h, visible)?;
                }
                if visible
                    && self
                        .decoder
                        .decode_passing_into(&item[heap::tuple::HEADER..], &mut self.values)?
                {
                    self.refs.push(RowRef {
                        root: h.root,
                        version: Tid::new(self.block, slot),
                    });
                }
            }
        }
        Ok(())
    }
}

impl RowSource for SeqScan<'_> {
    /// Moves the batch's next row into `out` (its slots in the batch are left NULL).
    fn next_into(&mut self, out: &mut Vec<Datum>, id: &mut RowRef) -> PgResult<bool> {
        loop {
            if let Some(rref) = self.refs.get(self.at) {
                *id = *rref;
                let w = self.decoder.width();
                let row = &mut self.values[self.at * w..(self.at + 1) * w];
                out.extend(row.iter_mut().map(|v| std::mem::replace(v, Datum::Null)));
                self.at += 1;
                return Ok(true);
            }
            if self.block >= self.nblocks {
                return Ok(false);
            }
            let loaded = self.load_page();
            self.block += 1;
            if let Err(e) = loaded {
                self.block = self.nblocks;
                self.refs.clear();
                return Err(e);
            }
        }
    }
}

impl Iterator for SeqScan<'_> {
    type Item = PgResult<(RowRef, Vec<Datum>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let width = self.decoder.width();
        next_row(self, width)
    }
}

pub(crate) struct IndexScan<'a> {
    engine: &'a EngineInner,
    ssi: Option<crate::ssi::Reader<'a>>,
    table: &'a TableDef,
    index: &'a IndexDef,
    irel: std::sync::Arc<crate::relstate::RelState>,
    /// The vacuum horizon, taken at the first stale entry met (see stale.rs).
    horizon: Option<u64>,
    /// Stale entries no snapshot needs, removed when the scan ends.
    stale: Vec<(Vec<u8>, Tid)>,
    /// The heap page read last, kept pinned for the next row (released when the scan ends).
    pin: heap::PagePin,
    rel: std::sync::Arc<crate::relstate::RelState>,
    snap: Snapshot,
    decoder: Decoder,
    keys: IndexKeys<'a>,
    source: Box<dyn am::IndexScan + 'a>,
    /// An index-only scan: its heap lookups counter and the index's key columns.
    only: Option<(std::sync::Arc<std::sync::atomic::AtomicU64>, &'a [usize])>,
    backward: bool,
    done: bool,
}

impl IndexProbe for IndexScan<'_> {
    fn rescan(&mut self, range: KeyRange) -> PgResult<()> {
        if let Some(r) = &self.ssi {
            let am = self.engine.open_index(&self.irel, self.table, self.index);
            r.lock_range(self.index.relfile, &am.predicate_range(&range))?;
        }
        self.done = false;
        if self.source.rescan(&range)? {
            return Ok(());
        }
        let am = self.engine.open_index(&self.irel, self.table, self.index);
        let source = if self.backward {
            am.scan_backward(&range)?
        } else {
            am.scan(&range)?
        };
        drop(am);
        self.source = source;
        Ok(())
    }
}

impl IndexScan<'_> {
    /// The next row, its values appended to `out`.
    fn step_into(&mut self, out: &mut Vec<Datum>) -> PgResult<Option<RowRef>> {
        let start = out.len();
        while let Some(root) = self.source.next()? {
            if let Some(r) = &self.ssi {
                r.lock_row(self.rel.file.id, root)?;
            }
            if let Some((fetches, columns)) = &self.only {
                if let Some((rref, row)) = crate::indexonly::from_index(
                    &self.rel,
                    &*self.source,
                    columns,
                    root,
                    self.decoder.width(),
                )? {
                    out.extend(row);
                    return Ok(Some(rref));
                }
                fetches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let heap =
                Heap::new(&self.engine.pool, &self.engine.txns, &self.rel).with_pin(&self.pin);
            let decoder = &self.decoder;
            let found = heap.fetch_visible(root, &self.snap, |tid, h, row| {
                (tid, *h, decoder.decode_passing_into(row, out))
            })?;
            if let Some(r) = &self.ssi {
                r.fetched(&heap, root, &self.snap, found.as_ref().map(|f| &f.1))?;
            }
            let Some((tid, _, decoded)) = found else {
                continue;
            };
            if !decoded? {
                continue;
            }
            // Entries are never updated in place: an entry whose key differs from the version
            // this snapshot sees is stale, and the version is reached through its own entry.
            if !self.source.recheck_row(&out[start..], self.keys.columns()) {
                out.truncate(start);
                self.note_stale(root)?;
                continue;
            }
            return Ok(Some(RowRef { root, version: tid }));
        }
        self.done = true;
        Ok(None)
    }
}

impl IndexScan<'_> {
    /// The entry just returned for `root` is stale for this snapshot; keeps it for removal if
    /// no snapshot needs it (stale.rs).
    fn note_stale(&mut self, root: Tid) -> PgResult<()> {
        if self.stale.len() >= crate::stale::MAX_PER_SCAN {
            return Ok(());
        }
        let Some(key) = self.source.entry().map(<[u8]>::to_vec) else {
            return Ok(());
        };
        let horizon = *self
            .horizon
            .get_or_insert_with(|| self.engine.txns.horizon());
        let (decoder, keys, source) = (&self.decoder, &self.keys, &self.source);
        let heap = Heap::new(&self.engine.pool, &self.engine.txns, &self.rel);
        let has_key = |row: &[u8]| {
            decoder
                .decode(row)
                .map(|v| source.recheck(&keys.key_of(&v)))
                .unwrap_or(true)
        };
        let stale = crate::stale::stale_for_all(&heap, root, horizon, &has_key)?;
        drop(heap);
        if stale {
            self.stale.push((key, root));
        }
        Ok(())
    }
}

impl Drop for IndexScan<'_> {
    fn drop(&mut self) {
        self.pin.release(&self.engine.pool);
        let (Some(horizon), false) = (self.horizon, self.stale.is_empty()) else {
            return;
        };
        let am = self.engine.open_index(&self.irel, self.table, self.index);
        let heap = Heap::new(&self.engine.pool, &self.engine.txns, &self.rel);
        let (decoder, keys) = (&self.decoder, &self.keys);
        let key_of_row = |row: &[u8]| {
            let v = decoder.decode(row).ok()?;
            Some(am.predicate_key(&keys.key_of(&v)))
        };
        // A hint: an error leaves the entries for a later scan or VACUUM.
        let _ = crate::stale::remove(&*am, &heap, horizon, &self.stale, &key_of_row);
    }
}

impl RowSource for IndexScan<'_> {
    fn next_into(&mut self, out: &mut Vec<Datum>, id: &mut RowRef) -> PgResult<bool> {
        if self.done {
            return Ok(false);
        }
        match self.step_into(out) {
            Ok(Some(r)) => {
                *id = r;
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }
}

impl Iterator for IndexScan<'_> {
    type Item = PgResult<(RowRef, Vec<Datum>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let width = self.decoder.width();
        next_row(self, width)
    }
}

/// A row the statement is about to update or delete was changed by a statement it started
/// (a function it called): PostgreSQL's 27000.
fn modified_later(what: &str) -> PgError {
    PgError::new(
        keel_common::sqlstate::TRIGGERED_DATA_CHANGE_VIOLATION,
        format!(
            "tuple to be {what} was already modified by an operation triggered by the current command"
        ),
    )
    .with_hint("Consider using an AFTER trigger instead of a BEFORE trigger to propagate changes to other rows.")
}
