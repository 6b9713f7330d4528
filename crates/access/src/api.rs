//! The engine's public contract (see the crate docs).

use keel_catalog::{Catalog, IndexDef, SequenceDef, TableDef};
use keel_common::{PgResult, Settings, Tid, Xid};
use keel_types::Datum;
use std::future::Future;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

pub use keel_common::Isolation;

/// A row as a statement saw it: its stable root (what indexes point to) and the version read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowRef {
    pub root: Tid,
    pub version: Tid,
}

/// Another transaction holds the row (or the unique key) we need; await
/// [`Engine::wait`] and then repeat the same call with the same [`WriteState`].
#[derive(Clone, Debug)]
pub struct RowWait {
    /// The transaction to wait for; `Xid(0)` when the row is free but others queue for it,
    /// so only a place in its queue is awaited.
    pub xid: Xid,
    /// The row waited for (relation file, root), to queue on its tuple lock first.
    pub(crate) tuple: Option<(u32, Tid)>,
    /// Wait until the transaction is visible, not only pre-committed (it holds a lock only).
    pub(crate) visible: bool,
}

/// Outcome of a write.
#[derive(Debug)]
pub enum Write<T> {
    Done(T),
    /// Blocked by an in-progress transaction; nothing was lost, call again after the wait.
    Wait(RowWait),
    /// The version we targeted was updated by a transaction that committed (READ COMMITTED:
    /// re-check the newest version and retry; REPEATABLE READ: 40001). The newest version is
    /// given when the row still exists.
    Updated(RowRef),
    /// The row was deleted by a committed transaction.
    Deleted,
}

/// Progress of one row's write across waits. Start each row with `WriteState::default()`.
#[derive(Debug, Default)]
pub struct WriteState {
    pub(crate) heap_tid: Option<Tid>,
    pub(crate) indexes_done: usize,
    /// An UPDATE that changes no column of a unique index: it locks the row FOR NO KEY
    /// UPDATE, which KEY SHARE lockers (foreign-key checks) do not block.
    pub no_key: bool,
}

impl WriteState {
    /// Whether nothing of this row's write has happened yet (no wait was met mid-way).
    pub fn is_fresh(&self) -> bool {
        self.heap_tid.is_none() && self.indexes_done == 0
    }
}

/// How long a writing transaction may sit idle in its block (waiting for its client) and still
/// count as about to commit for group commit. Far above a client's round trip under load
/// (pgbench at 256 clients: a few milliseconds), far below a human's or a pooled connection's.
pub const IDLE_WRITER_MS: u64 = 100;

/// One transaction. Created by [`Engine::begin`], ended by [`Engine::commit`] or
/// [`Engine::rollback`].
pub struct Transaction {
    pub isolation: Isolation,
    pub read_only: bool,
    /// DEFERRABLE: a SERIALIZABLE READ ONLY transaction waits for a safe snapshot
    /// ([`Engine::wait_safe_snapshot`]).
    pub deferrable: bool,
    /// DDL made in this transaction, installed at commit.
    pub pending_catalog: Option<Arc<Catalog>>,
    pub(crate) inner: crate::txnstate::TxnState,
}

/// A statement's snapshot, saved across nested statements (see
/// [`Engine::statement_snapshot`]).
#[derive(Clone, Copy)]
pub struct StatementSnapshot(keel_txn::Snapshot);

/// Lower and upper bounds on a prefix of an index's columns. An equality lookup on the first
/// column is `KeyRange { lower: Included(vec![v]), upper: Included(vec![v]) }`; bounds compare
/// as prefixes.
#[derive(Clone, Debug)]
pub struct KeyRange {
    pub lower: Bound<Vec<Datum>>,
    pub upper: Bound<Vec<Datum>>,
}

/// How an index scan runs ([`Engine::index_scan_with`]).
#[derive(Clone, Debug, Default)]
pub struct IndexScanOptions {
    /// Last key first (a B-tree read backward: ORDER BY ... DESC).
    pub backward: bool,
    /// Index-only (indexonly.rs): rows come from the index entries where the visibility map
    /// allows, holding only the index's key columns (others NULL) with
    /// `RowRef::version == Tid::INVALID`; each entry looked up in the heap instead adds one
    /// to this counter.
    pub index_only: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// The columns the reader needs (None: all); the others come back NULL, never decoded.
    pub columns: Option<std::sync::Arc<[bool]>>,
    /// Equalities tested on each row's stored bytes before it is decoded.
    pub prefilter: Option<std::sync::Arc<Prefilter>>,
}

/// What a scan can test on a row's stored bytes before decoding it. A pre-filter: rows that
/// fail it cannot pass the reader and are not decoded; the reader still tests its WHERE (or
/// join) on every row it gets, and it may get some that fail (one in 64 goes up regardless,
/// for its interrupt checks).
#[derive(Clone, Default)]
pub struct Prefilter {
    /// Equalities (the scan keys PostgreSQL gives a heap scan): column `.0` stores exactly
    /// the bytes `.1` (`keel_types::row::value_bytes`; only for types where equal values
    /// have equal bytes, `keel_types::row::byte_equal_type`).
    pub equals: Vec<(usize, Vec<u8>)>,
    /// The probe side of an inner hash join on one integer key: column `.0` (of an integer,
    /// date or timestamp type) holds one of the build side's keys. A row whose key is NULL
    /// or absent joins nothing.
    pub join_keys: Option<(usize, std::sync::Arc<dyn IntKeys>)>,
}

impl std::fmt::Debug for Prefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefilter")
            .field("equals", &self.equals)
            .field("join_keys", &self.join_keys.as_ref().map(|(c, _)| c))
            .finish()
    }
}

impl Prefilter {
    pub fn is_empty(&self) -> bool {
        self.equals.is_empty() && self.join_keys.is_none()
    }
}

/// A set of integer keys (a hash join's build side, as `keel_types::row::int_value` gives a
/// column's value).
pub trait IntKeys: Send + Sync {
    fn contains(&self, key: i64) -> bool;
}

#[derive(Clone, Debug, Default)]
pub struct VacuumStats {
    pub pages: u64,
    pub removed_versions: u64,
    pub live_rows: u64,
    pub dead_rows: u64,
    pub index_entries_removed: u64,
}

/// Visible rows of a table or index range, each with its identity.
pub trait RowSource: Iterator<Item = PgResult<(RowRef, Vec<Datum>)>> + Send {
    /// The next row, its values appended to `out` instead of returned in a vector of their
    /// own and its identity written to `id` (true), or false at the end. A reader that
    /// reuses one buffer reads rows without allocating one per row. Sources that decode rows
    /// in place override it.
    fn next_into(&mut self, out: &mut Vec<Datum>, id: &mut RowRef) -> PgResult<bool> {
        match self.next() {
            None => Ok(false),
            Some(Err(e)) => Err(e),
            Some(Ok((rref, row))) => {
                out.extend(row);
                *id = rref;
                Ok(true)
            }
        }
    }
}

impl<T: RowSource + ?Sized> RowSource for Box<T> {
    fn next_into(&mut self, out: &mut Vec<Datum>, id: &mut RowRef) -> PgResult<bool> {
        (**self).next_into(out, id)
    }
}

impl RowRef {
    /// No row (a reader's identity slot before its first row).
    pub const NONE: RowRef = RowRef {
        root: Tid::INVALID,
        version: Tid::INVALID,
    };
}

/// A source's next row in a vector of its own (`width` values), read through `next_into`:
/// the `Iterator::next` of sources that decode rows in place.
pub(crate) fn next_row<S: RowSource + ?Sized>(
    source: &mut S,
    width: usize,
) -> Option<PgResult<(RowRef, Vec<Datum>)>> {
    let mut row = Vec::with_capacity(width);
    let mut id = RowRef::NONE;
    match source.next_into(&mut row, &mut id) {
        Ok(true) => Some(Ok((id, row))),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    }
}

/// A failed scan's one error.
pub(crate) type Failed = std::iter::Once<PgResult<(RowRef, Vec<Datum>)>>;

impl RowSource for Failed {}

/// Iterator over visible rows of a table or index range.
pub type RowIter<'a> = Box<dyn RowSource + 'a>;

/// An index scan that can be restarted on another range (PostgreSQL's `amrescan`): an index
/// nested loop probes the inner index once per outer row with one scan, keeping its opened
/// relations, decoder, snapshot and pinned heap pages.
pub trait IndexProbe: RowSource {
    /// Restarts the scan on `range`; rows of the previous range not read are dropped.
    fn rescan(&mut self, range: KeyRange) -> PgResult<()>;
}

impl Transaction {
    /// The catalog this transaction sees: its own pending DDL, or the engine's current one.
    pub fn catalog(&self, engine: &Engine) -> Arc<Catalog> {
        self.pending_catalog
            .clone()
            .unwrap_or_else(|| engine.catalog())
    }

    /// Whether `c` is the catalog this transaction sees (without cloning either).
    pub fn catalog_is(&self, engine: &Engine, c: &Arc<Catalog>) -> bool {
        match &self.pending_catalog {
            Some(p) => Arc::ptr_eq(p, c),
            None => engine.catalog_is(c),
        }
    }

    /// A write that went through, failed, or found the row gone ends any tuple-lock queueing
    /// for its row. `Wait` and `Updated` keep the place in line: a retry on the same row (its
    /// newer version, under READ COMMITTED) follows, and giving the lock up there would send
    /// this writer to the back of the queue and wake the next waiter for nothing.
    pub(crate) fn after_write<T>(&self, r: &PgResult<Write<T>>) {
        if !matches!(r, Ok(Write::Wait(_) | Write::Updated(_))) {
            self.inner.release_tuple_lock();
        }
    }

    /// Leaves the queue of the row this transaction last waited for; the end of every
    /// writing statement calls it, since a row re-checked after `Updated` may be skipped.
    pub fn leave_row_queue(&self) {
        self.inner.release_tuple_lock();
    }

    /// Names the session running this transaction (pg_locks' pid).
    pub fn set_backend_pid(&self, pid: i32) {
        self.inner
            .slot
            .backend_pid
            .store(pid, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the transaction has written anything (has an xid).
    pub fn has_writes(&self) -> bool {
        self.inner.m.lock().xid.is_some()
    }
}

pub struct Engine {
    pub(crate) inner: crate::engine::EngineInner,
}

impl Engine {
    /// Opens (creating if needed) the data directory, runs crash recovery, and starts the
    /// background WAL writer, checkpointer and vacuum workers.
    pub fn open(data_dir: &Path, settings: &Settings) -> PgResult<Arc<Engine>> {
        crate::engine::open(data_dir, settings)
    }

    /// Opens the engine on a data directory in `fs` (the crash simulator's, in tests), without
    /// the data directory lock: the caller makes sure nothing else uses the directory.
    pub fn open_on(
        fs: Arc<dyn keel_storage::io::Fs>,
        data_dir: &Path,
        settings: &Settings,
    ) -> PgResult<Arc<Engine>> {
        crate::engine::open_on(fs, data_dir, settings)
    }

    /// The current committed catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog()
    }

    /// The data directory (relative server-side file names, as COPY's, are read from it).
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// Whether `c` is the current committed catalog (see `EngineInner::catalog_is`).
    pub fn catalog_is(&self, c: &Arc<Catalog>) -> bool {
        self.inner.catalog_is(c)
    }

    pub fn begin(&self, isolation: Isolation, read_only: bool) -> Transaction {
        self.inner.begin(isolation, read_only)
    }

    /// SERIALIZABLE READ ONLY DEFERRABLE: waits for a safe snapshot before the first
    /// statement (see ssi.rs); `check` reports cancellation and timeouts.
    pub async fn wait_safe_snapshot(
        &self,
        txn: &Transaction,
        check: impl Fn() -> PgResult<()>,
    ) -> PgResult<()> {
        self.inner.wait_safe_snapshot(txn, check).await
    }

    /// Called at the start of each statement: under READ COMMITTED takes a new snapshot.
    pub fn start_statement(&self, txn: &Transaction) {
        self.inner.start_statement(txn)
    }

    /// The running statement's snapshot, to hand back with [`Engine::resume_statement`] once
    /// statements nested in it (a function's) have started and ended: the caller's later
    /// scans then read as it began, not as the nested statements did.
    pub fn statement_snapshot(&self, txn: &Transaction) -> StatementSnapshot {
        StatementSnapshot(self.inner.snapshot(txn))
    }

    /// Restores a snapshot [`Engine::statement_snapshot`] gave. The command counter stays
    /// where the nested statements left it, so the caller's own later writes are still
    /// invisible to its scans.
    pub fn resume_statement(&self, txn: &Transaction, s: StatementSnapshot) {
        txn.inner.m.lock().snapshot = s.0;
    }

    /// The session now waits for its client inside the transaction block (`idle` true), or
    /// its client has sent the next command (false). Once it has waited [`IDLE_WRITER_MS`],
    /// group commit stops expecting this transaction's commit. `start_statement` and the
    /// transaction's end also clear the mark.
    pub fn idle_in_transaction(&self, txn: &Transaction, idle: bool) {
        let st = &txn.inner;
        let since = if idle && st.m.lock().xid.is_some() && !st.finished {
            keel_txn::clock_ms()
        } else {
            0
        };
        st.slot
            .idle_since
            .store(since, std::sync::atomic::Ordering::Relaxed);
    }

    /// Before a statement that reads through its snapshot: waits until the pre-committed
    /// transactions this one built on (early lock release, see commitq.rs) are visible. Free
    /// when there are none. Statements that read no table (INSERT ... VALUES) may skip it.
    pub fn settle<'a>(
        &'a self,
        txn: &'a Transaction,
    ) -> impl Future<Output = PgResult<()>> + Send + 'a {
        self.inner.settle(txn)
    }

    /// Commits: installs pending DDL, writes the commit record, and (when `sync` is true, i.e.
    /// synchronous_commit is on) releases its row-lock waiters at once (early lock release),
    /// then awaits its WAL flush, after which the WAL writer has made it visible.
    pub fn commit(
        &self,
        txn: Transaction,
        sync: bool,
    ) -> impl Future<Output = PgResult<()>> + Send + '_ {
        self.inner.commit(txn, sync)
    }

    /// Aborts: the transaction's writes stay invisible forever; files it created are removed.
    pub fn rollback(&self, txn: Transaction) {
        self.inner.rollback(txn)
    }

    /// Awaits the end of the transaction in `wait` (or, for a row others queue for, this
    /// writer's turn in that queue). Fails with 40P01 on deadlock and 57014 when `cancelled`
    /// resolves first.
    pub fn wait<'a>(
        &'a self,
        txn: &'a Transaction,
        wait: RowWait,
        cancelled: impl Future<Output = ()> + Send + 'a,
    ) -> impl Future<Output = PgResult<()>> + Send + 'a {
        self.inner.wait(txn, wait, cancelled)
    }

    /// Takes relation lock `mode` on table `rel` until `txn` ends (keel_txn::rellock): at
    /// once, or after waiting within `limits`; `Busy` under NOWAIT when it is not free.
    pub fn lock_relation<'a>(
        &'a self,
        txn: &'a Transaction,
        rel: u32,
        mode: keel_txn::LockMode,
        limits: &'a keel_txn::LockLimits,
        cancelled: impl Future<Output = ()> + Send + 'a,
    ) -> impl Future<Output = PgResult<keel_txn::Locked>> + Send + 'a {
        self.inner.lock_relation(txn, rel, mode, limits, cancelled)
    }

    /// Takes relation lock `mode` on `rel` for `txn` if it is free (or held already), without
    /// waiting: the path every plain read and write takes.
    pub fn try_lock_relation(&self, txn: &Transaction, rel: u32, mode: keel_txn::LockMode) -> bool {
        self.inner.try_lock_relation(txn, rel, mode)
    }

    /// Rebases `txn`'s pending DDL onto the catalog installed since (see
    /// `Catalog::rebased_onto`); nothing when it is current or there is none.
    pub fn refresh_pending_catalog(&self, txn: &mut Transaction) -> PgResult<()> {
        self.inner.refresh_pending_catalog(txn)
    }

    /// Every relation lock held or requested now (pg_locks).
    pub fn relation_locks(&self) -> Vec<keel_txn::rellock::LockInfo> {
        self.inner.txns.rel_locks.snapshot(&self.inner.txns.slots)
    }

    /// Transaction-id locks as pg_locks shows them: (xid, backend pid, granted). Every
    /// transaction holding an xid holds it (ExclusiveLock); a session waiting for another's
    /// row or key asks for it (ShareLock, not granted).
    pub fn xid_locks(&self) -> Vec<(u64, i32, bool)> {
        let txns = &self.inner.txns;
        let mut out = Vec::new();
        txns.slots.for_each(|s| {
            let pid = s.backend_pid.load(std::sync::atomic::Ordering::SeqCst);
            let xid = s.xid.load(std::sync::atomic::Ordering::SeqCst);
            if xid != 0 && pid != 0 {
                out.push((xid, pid, true));
            }
            let waits = s.waiting_for.load(std::sync::atomic::Ordering::SeqCst);
            if waits != 0 && pid != 0 {
                out.push((waits, pid, false));
            }
        });
        out
    }

    // ---- DDL support -------------------------------------------------------------------

    /// Creates an empty relation file for a new table or index (or a TRUNCATE). It is removed
    /// if `txn` rolls back.
    pub fn create_relfile(&self, txn: &Transaction, relfile: u32, unlogged: bool) -> PgResult<()> {
        self.inner.create_relfile(txn, relfile, unlogged)
    }

    /// Schedules `seq` to restart at its start value once `txn` commits (TRUNCATE ... RESTART
    /// IDENTITY). Until then every session, `txn` included, goes on with the old values, so
    /// the caller must keep `txn` from using the sequence itself (see the session's check).
    pub fn restart_sequence_at_commit(
        &self,
        txn: &Transaction,
        seq: std::sync::Arc<keel_catalog::SequenceDef>,
    ) {
        txn.inner.m.lock().restart_at_commit.push(seq);
    }

    /// SERIALIZABLE bookkeeping for a TRUNCATE (`to`: the table's new file) or a DROP
    /// (`to` None) of the table in file `rel` with index files `indexes`: called before the
    /// files are replaced; see `keel_txn::ssi::Ssi::conflict_in_relation`.
    pub fn ssi_replace_relation(
        &self,
        txn: &Transaction,
        rel: u32,
        indexes: &[u32],
        to: Option<u32>,
    ) -> PgResult<()> {
        self.inner.ssi_replace_relation(txn, rel, indexes, to)
    }

    /// Schedules a relation file for removal once `txn` commits (DROP, TRUNCATE).
    pub fn drop_relfile_at_commit(&self, txn: &Transaction, relfile: u32) {
        self.inner.drop_relfile_at_commit(txn, relfile)
    }

    /// Fills a new index from the table's rows; fails with 23505 when a unique index finds
    /// duplicates among live rows. `check` is called for every heap page and every row
    /// (PostgreSQL's CHECK_FOR_INTERRUPTS); its error (57014) abandons the build, whose file
    /// the transaction's rollback removes.
    pub fn build_index(
        &self,
        txn: &Transaction,
        table: &TableDef,
        index: &IndexDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<()> {
        self.inner.build_index(txn, table, index, check)
    }

    // ---- rows --------------------------------------------------------------------------

    /// All rows of `table` visible to the current statement's snapshot.
    pub fn scan<'a>(&'a self, txn: &'a Transaction, table: &'a TableDef) -> RowIter<'a> {
        self.inner.scan(txn, table)
    }

    /// As [`Engine::scan`], decoding only `columns` (None: all); the others come back NULL.
    pub fn scan_columns<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        columns: Option<std::sync::Arc<[bool]>>,
    ) -> RowIter<'a> {
        self.inner.scan_columns(txn, table, columns)
    }

    /// As [`Engine::scan_columns`], testing `prefilter` on each row's stored bytes first.
    pub fn scan_filtered<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        columns: Option<std::sync::Arc<[bool]>>,
        prefilter: Option<std::sync::Arc<Prefilter>>,
    ) -> RowIter<'a> {
        self.inner.scan_filtered(txn, table, columns, prefilter)
    }

    /// Visible rows whose index key lies in `range`, in index order.
    pub fn index_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
    ) -> RowIter<'a> {
        self.inner.index_scan(txn, table, index, range)
    }

    /// As [`Engine::index_scan`], read backward (last key first) and / or index-only as
    /// `options` say.
    pub fn index_scan_with<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
        options: IndexScanOptions,
    ) -> RowIter<'a> {
        self.inner
            .index_scan_with(txn, table, index, range, options)
    }

    /// An index scan over `range` that [`IndexProbe::rescan`] restarts on other ranges.
    pub fn index_probe<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
        options: IndexScanOptions,
    ) -> PgResult<Box<dyn IndexProbe + 'a>> {
        Ok(Box::new(
            self.inner
                .open_index_scan(txn, table, index, range, options)?,
        ))
    }

    /// Visible rows whose roots `index` gives for `keys` (its bitmap scan), in heap order.
    /// A superset: the caller rechecks its condition on every row. The number of roots the
    /// index gave is added to `matched` (the Bitmap Index Scan's rows). Only `columns` are
    /// decoded (None: all); the others come back NULL.
    pub fn bitmap_heap_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        keys: &[crate::am::ScanKey],
        matched: &std::sync::atomic::AtomicU64,
        columns: Option<std::sync::Arc<[bool]>>,
    ) -> RowIter<'a> {
        self.inner
            .bitmap_heap_scan(txn, table, index, keys, matched, columns)
    }

    /// Inserts a row (values in column order, already coerced to the column types) and its
    /// index entries, enforcing unique indexes (23505).
    pub fn insert(
        &self,
        txn: &Transaction,
        table: &TableDef,
        row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        let r = self.inner.insert(txn, table, row, state);
        txn.after_write(&r);
        r
    }

    /// Replaces the row version `target` with `new_row`.
    pub fn update(
        &self,
        txn: &Transaction,
        table: &TableDef,
        target: RowRef,
        new_row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        let r = self.inner.update(txn, table, target, new_row, state);
        txn.after_write(&r);
        r
    }

    pub fn delete(
        &self,
        txn: &Transaction,
        table: &TableDef,
        target: RowRef,
    ) -> PgResult<Write<()>> {
        let r = self.inner.delete(txn, table, target);
        txn.after_write(&r);
        r
    }

    /// The newest committed (or own) version of the row with root `root`, for READ COMMITTED
    /// re-checks after a concurrent update. None if the row was deleted.
    pub fn fetch_newest(
        &self,
        txn: &Transaction,
        table: &TableDef,
        root: Tid,
    ) -> PgResult<Option<(RowRef, Vec<Datum>)>> {
        self.inner.fetch_newest(txn, table, root)
    }

    // ---- maintenance and sizes ---------------------------------------------------------

    /// Prunes the table and removes index entries of rows that are gone. `check` is called
    /// for every heap page, every index leaf and every dead line pointer freed; when it
    /// fails, vacuum stops there, frees the versions it has already unlinked, and returns its
    /// error: what it did not reach (dead line pointers, and their index entries) is left for
    /// the next vacuum, which finds them again.
    /// Number of entries in `index` (tests, monitoring).
    pub fn index_entries(&self, table: &TableDef, index: &IndexDef) -> PgResult<u64> {
        let irel = self.inner.rel(index.relfile)?;
        self.inner.open_index(&irel, table, index).count()
    }

    pub fn vacuum(
        &self,
        table: &TableDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<VacuumStats> {
        self.inner.vacuum(table, check)
    }

    /// Pages of a table whose visibility-map bit is set (PostgreSQL's `relallvisible`).
    pub fn pages_all_visible(&self, relfile: u32) -> u64 {
        self.inner
            .rel(relfile)
            .ok()
            .and_then(|r| r.vm().map(|vm| vm.pages_all_visible()))
            .unwrap_or(0)
    }

    /// Size in bytes of a relation file (pg_relation_size).
    pub fn relation_size(&self, relfile: u32) -> u64 {
        self.inner.relation_size(relfile)
    }

    /// Where statements spill rows they hold past work_mem (`pgsql_tmp` in the data
    /// directory). Created on first use; files there are unlinked as soon as they are opened.
    pub fn temp_dir(&self) -> std::path::PathBuf {
        self.inner.data_dir.join("pgsql_tmp")
    }

    /// Next value of a sequence (not transactional, as in PostgreSQL).
    pub fn nextval(&self, seq: &SequenceDef) -> PgResult<i64> {
        self.inner.nextval(seq)
    }

    pub fn setval(&self, seq: &SequenceDef, value: i64, is_called: bool) -> PgResult<()> {
        self.inner.setval(seq, value, is_called)
    }

    /// Forces a checkpoint (the CHECKPOINT command).
    pub fn checkpoint(&self) -> PgResult<()> {
        self.inner.checkpoint()
    }

    /// A checkpoint spread over checkpoint_completion_target of the interval, as the
    /// checkpointer runs it when one is due.
    pub fn checkpoint_spread(&self) -> PgResult<()> {
        self.inner.checkpoint_inner(crate::checkpoint::Cause::Time)
    }

    /// Clean shutdown: checkpoint and stop background workers. The data directory stays locked
    /// (see `release_data_dir`).
    pub fn shutdown(&self) {
        self.inner.shutdown()
    }

    /// Gives up the data directory after `shutdown`, once nothing in this process writes to
    /// it: another server may open it from then on.
    pub fn release_data_dir(&self) {
        self.inner.release_data_dir()
    }
}
