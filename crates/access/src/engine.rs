//! The engine's shared state, start-up (crash recovery), commit and rollback, checkpoints.

use crate::api::*;
use crate::commitrec::CatalogChange;
use crate::relstate::RelState;
use crate::seq::Sequences;
use crate::txnstate::{SlotPool, TxnMut, TxnState};
use keel_catalog::{Catalog, Persistence};
use keel_common::{PgError, PgResult, RelFileId, Settings, sqlstate};
use keel_storage::io::{Fs, OsFs};
use keel_storage::smgr::Smgr;
use keel_storage::wal::{FIRST_LSN, RecordKind, WalReader};
use keel_storage::{BufferPool, Wal};
use keel_txn::{CommitLog, Snapshot, TxnManager};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct EngineInner {
    pub(crate) data_dir: PathBuf,
    pub(crate) pool: Arc<BufferPool>,
    pub(crate) wal: Arc<Wal>,
    pub(crate) smgr: Arc<Smgr>,
    pub(crate) txns: Arc<TxnManager>,
    catalog: RwLock<Arc<Catalog>>,
    /// Address of the catalog in `catalog`, for `catalog_is` (no lock, no reference count).
    /// Always the address of a live catalog: it changes before the old one can be freed.
    catalog_addr: AtomicUsize,
    catalog_install: Mutex<()>,
    rels: RwLock<HashMap<RelFileId, Arc<RelState>>>,
    pub(crate) seqs: Sequences,
    /// Planner statistics (ANALYZE), see stats.rs.
    pub(crate) stats: crate::stats::StatsStore,
    slot_pool: Arc<SlotPool>,
    pub(crate) checkpoint_lock: Mutex<()>,
    /// The redo point of the last completed checkpoint, and when that checkpoint started.
    pub(crate) last_redo: Mutex<(u64, Instant)>,
    pub(crate) deadlock_timeout: Duration,
    pub(crate) checkpoint: crate::checkpoint::CheckpointSettings,
    /// Set by a CHECKPOINT command: the checkpoint in progress stops pacing its writes.
    pub(crate) checkpoint_hurry: AtomicBool,
    stopping: AtomicBool,
    next_pid: std::sync::atomic::AtomicI32,
    commits: Arc<crate::commitq::CommitQueue>,
    /// Ownership of the data directory (postmaster.pid); given up by `release_data_dir`.
    dir_lock: Mutex<Option<crate::dirlock::DirLock>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Control {
    pub(crate) redo: u64,
    pub(crate) next_xid: u64,
    pub(crate) clean: bool,
}

fn io(ctx: &str) -> impl FnOnce(std::io::Error) -> PgError + '_ {
    move |e| PgError::io(ctx, e)
}

/// Writes a file atomically: temp file, fsync, rename, fsync the directory; a failure (a full
/// disk) leaves the old file and no temp file.
pub(crate) fn write_atomic(fs: &dyn Fs, dir: &Path, name: &str, bytes: &[u8]) -> PgResult<()> {
    keel_storage::io::write_atomic(fs, dir, name, bytes)
        .map_err(|e| PgError::io(format!("could not write file \"{name}\""), e))
}

/// Opens the engine on the data directory `data_dir`, after taking its lock.
pub fn open(data_dir: &Path, settings: &Settings) -> PgResult<Arc<Engine>> {
    std::fs::create_dir_all(data_dir).map_err(io("could not create data directory"))?;
    let dir_lock = crate::dirlock::DirLock::acquire(
        data_dir,
        settings.int("port"),
        settings.raw("listen_addresses"),
    )?;
    open_with(Arc::new(OsFs), data_dir, settings, Some(dir_lock))
}

/// Opens the engine on `data_dir` in the file system `fs` (the crash simulator's, in tests)
/// without locking the directory: the caller makes sure nothing else uses it.
pub fn open_on(fs: Arc<dyn Fs>, data_dir: &Path, settings: &Settings) -> PgResult<Arc<Engine>> {
    open_with(fs, data_dir, settings, None)
}

/// Crash recovery, then the end-of-recovery checkpoint.
fn open_with(
    fs: Arc<dyn Fs>,
    data_dir: &Path,
    settings: &Settings,
    dir_lock: Option<crate::dirlock::DirLock>,
) -> PgResult<Arc<Engine>> {
    fs.create_dir_all(data_dir)
        .map_err(io("could not create data directory"))?;
    let control: Control = match fs.read(&data_dir.join("keel.control")) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| {
            PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("control file is corrupt: {e}"),
            )
        })?,
        Err(_) => Control {
            redo: FIRST_LSN,
            next_xid: keel_common::Xid::FIRST_NORMAL.0,
            clean: true,
        },
    };
    let mut catalog = match fs.read(&data_dir.join("catalog.json")) {
        Ok(b) => Catalog::from_bytes(&b)?,
        Err(_) => Catalog::default(),
    };
    let mut clog = CommitLog::new(control.next_xid);
    if let Ok(bitmap) = fs.read(&data_dir.join("xact")) {
        clog.load_bitmap(&bitmap);
    }
    let seqs = Sequences::load(&*fs, data_dir)?;
    let stats = crate::stats::StatsStore::load(&*fs, data_dir)?;
    let smgr = Arc::new(Smgr::on(fs.clone(), data_dir)?);
    let fsync = settings.bool("fsync");

    // Redo: read the log from the last checkpoint's redo point. A recovery-only pool reads
    // torn pages as new; every such page gets a full-page image before any other change.
    let wal_dir = data_dir.join("wal");
    let nframes = (settings.bytes("shared_buffers") / keel_storage::PAGE_SIZE as u64) as usize;
    let pool = BufferPool::new(smgr.clone(), Wal::recovery_stub(&wal_dir), nframes);
    pool.set_recovery(true);
    let mut reader = WalReader::on(fs.clone(), &wal_dir, control.redo);
    let mut next_xid = control.next_xid;
    let mut replayed = 0u64;
    while let Some(rec) = reader.next_record() {
        let top = replay(&pool, &clog, &mut catalog, &seqs, &stats, &rec)?;
        next_xid = next_xid.max(rec.xid.max(top) + 1);
        replayed += 1;
    }
    let end = reader.end();
    clog.set_boot_xid(next_xid);
    stats.retain(&catalog);
    if replayed > 0 {
        eprintln!(
            "LOG:  redo done at {} ({} records)",
            keel_common::Lsn(end),
            replayed
        );
    }
    pool.flush_all()?;
    for f in smgr.open_files() {
        f.sync()?;
    }
    drop(pool);
    let wal = Wal::open_on(fs, data_dir, end, end, fsync)?;
    let started = start(
        data_dir,
        settings,
        dir_lock,
        smgr,
        wal.clone(),
        StartState {
            catalog,
            clog,
            seqs,
            stats,
            next_xid,
            end,
            crashed: !control.clean,
            nframes,
        },
    );
    if started.is_err() {
        // Nothing runs on this log any more: stop its writer thread.
        wal.shutdown();
    }
    started
}

/// What recovery found, for `start`.
struct StartState {
    catalog: Catalog,
    clog: CommitLog,
    seqs: Sequences,
    stats: crate::stats::StatsStore,
    next_xid: u64,
    /// The end of the log: where new records go.
    end: u64,
    /// The last shutdown was not clean.
    crashed: bool,
    nframes: usize,
}

/// After redo: sets up the engine on the opened log, tidies the relation files and takes the
/// end-of-recovery checkpoint.
fn start(
    data_dir: &Path,
    settings: &Settings,
    dir_lock: Option<crate::dirlock::DirLock>,
    smgr: Arc<Smgr>,
    wal: Arc<Wal>,
    st: StartState,
) -> PgResult<Arc<Engine>> {
    let StartState {
        catalog,
        clog,
        seqs,
        stats,
        next_xid,
        end,
        crashed,
        nframes,
    } = st;
    let pool = Arc::new(BufferPool::new(smgr.clone(), wal.clone(), nframes));
    let clog_next = next_xid;
    let txns = Arc::new(TxnManager::new(clog_next, clog));
    txns.ssi
        .set_max_connections(settings.int("max_connections").max(1) as usize);

    // Relation files: mark unlogged ones; after a crash, empty them; remove orphans.
    let live: HashMap<RelFileId, Persistence> = catalog.relfiles().into_iter().collect();
    for id in smgr.list_on_disk()? {
        if !live.contains_key(&id) {
            smgr.remove(id)?;
        }
    }
    // Only unlogged files (flagged, emptied after a crash) and missing ones (created empty)
    // are opened here; the others open on first use. Opening all of them kept one descriptor
    // per relation file from start-up on: at 10,000 tables of 2 indexes, past the process's
    // limit, so the server could not start.
    for (&id, &persistence) in &live {
        if persistence == Persistence::Permanent && smgr.exists(id) {
            continue;
        }
        let f = smgr.open(id, true)?;
        if persistence == Persistence::Unlogged {
            f.unlogged.store(true, Ordering::Relaxed);
            if crashed {
                f.truncate()?;
            }
        }
    }
    let catalog = Arc::new(catalog);
    let inner = EngineInner {
        data_dir: data_dir.to_path_buf(),
        pool,
        wal,
        smgr,
        txns,
        catalog_addr: AtomicUsize::new(Arc::as_ptr(&catalog) as usize),
        catalog: RwLock::new(catalog),
        catalog_install: Mutex::new(()),
        rels: RwLock::new(HashMap::new()),
        seqs,
        stats,
        slot_pool: Arc::new(SlotPool::default()),
        checkpoint_lock: Mutex::new(()),
        last_redo: Mutex::new((end, Instant::now())),
        deadlock_timeout: Duration::from_millis(settings.int("deadlock_timeout").max(1) as u64),
        checkpoint: crate::checkpoint::CheckpointSettings::from(settings),
        checkpoint_hurry: AtomicBool::new(false),
        stopping: AtomicBool::new(false),
        next_pid: std::sync::atomic::AtomicI32::new(1),
        commits: Arc::default(),
        dir_lock: Mutex::new(dir_lock),
    };
    inner.commits.attach(&inner.wal, inner.txns.clone());
    // Group commit waits in proportion to the transactions still writing (wal/gather.rs),
    // leaving out those idle in their transaction block for IDLE_WRITER_MS.
    let txns = inner.txns.clone();
    inner
        .wal
        .on_load(Box::new(move || txns.writing_soon(IDLE_WRITER_MS)));
    if crashed {
        inner.reinit_unlogged_indexes()?;
    }
    inner.checkpoint_inner(crate::checkpoint::Cause::Startup)?;
    let engine = Arc::new(Engine { inner });
    crate::background::start(&engine);
    Ok(engine)
}

/// `c` with its change sets cleared, for installation: the next DDL clones the installed
/// catalog, and its delta must hold only its own changes. Usually `c` is not shared (the
/// pending catalog leaves the transaction) and is cleared in place; otherwise the clone is
/// O(1) (persistent maps).
fn without_changes(mut c: Arc<Catalog>) -> Arc<Catalog> {
    if c.has_changes() {
        Arc::make_mut(&mut c).clear_changes();
    }
    c
}

fn replay(
    pool: &BufferPool,
    clog: &CommitLog,
    catalog: &mut Catalog,
    seqs: &Sequences,
    stats: &crate::stats::StatsStore,
    rec: &keel_storage::WalRecord,
) -> PgResult<u64> {
    // The highest xid the record names besides its own (a commit's subtransactions): the
    // xid counter resumes above it, even for a subtransaction that logged nothing else.
    let mut highest = 0;
    match rec.kind {
        RecordKind::Pages => keel_storage::redo::redo_pages(pool, rec, &|_| false)?,
        RecordKind::Commit => {
            clog.set_logged(rec.xid);
            clog.set_csn(rec.xid, keel_txn::CSN_FROZEN);
            let commit = crate::commitrec::CommitRecord::decode(&rec.payload)?;
            for &s in &commit.subxids {
                clog.set_logged(s);
                clog.set_csn(s, keel_txn::CSN_FROZEN);
                highest = highest.max(s);
            }
            match commit.catalog {
                Some(CatalogChange::Full(c)) => *catalog = *c,
                Some(CatalogChange::Delta(d)) => {
                    catalog.apply_delta(&d)?;
                }
                None => {}
            }
            for id in commit.drops {
                pool.discard_rel(id);
                pool.smgr.remove(id)?;
            }
        }
        RecordKind::Abort | RecordKind::Checkpoint => {}
        RecordKind::Sequence => seqs.redo(&rec.payload)?,
        RecordKind::Statistics => stats.redo(&rec.payload)?,
    }
    Ok(highest)
}

impl EngineInner {
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// Whether `c` is the current catalog. Every Bind and Execute asks; unlike `catalog()` it
    /// writes no shared cache line (no lock word, no reference count). Sound because `c` is
    /// alive (the caller holds it) and `catalog_addr` only ever holds a live catalog's address,
    /// so equal addresses are the same catalog.
    pub fn catalog_is(&self, c: &Arc<Catalog>) -> bool {
        self.catalog_addr.load(Ordering::Acquire) == Arc::as_ptr(c) as usize
    }

    /// Installs `c` as the current catalog (caller holds `catalog_install`).
    /// `pending` (a transaction's catalog) as the direct successor of the installed one:
    /// itself, or rebased onto what other transactions installed since its base.
    fn onto_current(&self, pending: Arc<Catalog>) -> PgResult<Arc<Catalog>> {
        let current = self.catalog.read().clone();
        if pending.version == current.version + 1 {
            return Ok(pending);
        }
        Ok(Arc::new(pending.rebased_onto(&current)?))
    }

    /// Brings `txn`'s pending catalog up to the installed one when other transactions
    /// installed DDL since it was cloned. Called once a statement holds its relation locks,
    /// so it reads the tables it locked as they are now.
    pub fn refresh_pending_catalog(&self, txn: &mut Transaction) -> PgResult<()> {
        if let Some(p) = &txn.pending_catalog
            && !self.catalog_is_base_of(p)
        {
            let p = self.onto_current(p.clone())?;
            txn.pending_catalog = Some(p);
        }
        Ok(())
    }

    fn catalog_is_base_of(&self, pending: &Catalog) -> bool {
        self.catalog.read().version + 1 == pending.version
    }

    fn set_catalog(&self, c: Arc<Catalog>) {
        let mut cur = self.catalog.write();
        self.catalog_addr
            .store(Arc::as_ptr(&c) as usize, Ordering::Release);
        let old = std::mem::replace(&mut *cur, c);
        drop(cur);
        // DROP TABLE drops its statistics.
        self.stats.retain(&self.catalog.read());
        // Freed (if this was the last reference) only after `catalog_addr` moved on.
        drop(old);
    }

    pub(crate) fn rel(&self, id: RelFileId) -> PgResult<Arc<RelState>> {
        if let Some(r) = self.rels.read().get(&id) {
            return Ok(r.clone());
        }
        let file = self.smgr.open(id, false).map_err(|_| {
            PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("could not open relation with relfile {id}"),
            )
        })?;
        let mut rels = self.rels.write();
        Ok(rels
            .entry(id)
            .or_insert_with(|| Arc::new(RelState::new(file)))
            .clone())
    }

    /// Whether enough versions died since the last vacuum (as autovacuum's threshold:
    /// 50 plus about 20% of the table's rows).
    pub(crate) fn take_vacuum_due(&self, relfile: RelFileId) -> bool {
        let Some(rel) = self.rels.read().get(&relfile).cloned() else {
            return false;
        };
        let threshold = 50 + rel.file.nblocks() as u64 * 8;
        if rel.changes.load(Ordering::Relaxed) >= threshold {
            rel.changes.store(0, Ordering::Relaxed);
            return true;
        }
        false
    }

    pub(crate) fn forget_rel(&self, id: RelFileId) {
        self.rels.write().remove(&id);
        self.pool.discard_rel(id);
    }

    pub fn begin(&self, isolation: Isolation, read_only: bool) -> Transaction {
        let slot = self.slot_pool.free.lock().pop().unwrap_or_else(|| {
            self.txns
                .slots
                .register(self.next_pid.fetch_add(1, Ordering::Relaxed))
        });
        Transaction {
            isolation,
            read_only,
            deferrable: false,
            pending_catalog: None,
            inner: TxnState {
                m: Mutex::new(TxnMut {
                    xid: None,
                    cid: 0,
                    statements: 0,
                    snapshot: Snapshot {
                        csn: 0,
                        xid: 0,
                        cid: 0,
                    },
                    has_snapshot: false,
                    created: Vec::new(),
                    drop_at_commit: Vec::new(),
                    restart_at_commit: Vec::new(),
                    rel_locks: Vec::new(),
                    subs: Vec::new(),
                    subxids: Vec::new(),
                    sx: None,
                    changed: Vec::new(),
                }),
                slot,
                txns: self.txns.clone(),
                pool: self.slot_pool.clone(),
                finished: false,
                tuple_guard: Mutex::new(None),
                newest_hint: Mutex::new(None),
                depends_on_lsn: std::sync::atomic::AtomicU64::new(0),
                wrote_logged: Default::default(),
                listed: Mutex::new(Vec::new()),
            },
        }
    }

    pub fn start_statement(&self, txn: &Transaction) {
        let st = &txn.inner;
        st.slot
            .idle_since
            .store(0, std::sync::atomic::Ordering::Relaxed);
        let mut m = st.m.lock();
        if m.statements > 0 {
            m.cid += 1;
        }
        m.statements += 1;
        if !m.has_snapshot {
            drop(m);
            self.first_snapshot(txn);
        } else if txn.isolation == Isolation::ReadCommitted {
            let xid = m.xid.unwrap_or(0);
            m.snapshot = self.txns.snapshot(&st.slot, xid, m.cid);
        } else {
            m.snapshot.cid = m.cid;
        }
    }

    /// The xid a write is made with: the innermost open subtransaction's, else the
    /// transaction's. Each is assigned on its first write, the top-level one first.
    pub(crate) fn xid(&self, txn: &Transaction) -> PgResult<u64> {
        let top = self.top_xid(txn)?;
        let mut m = txn.inner.m.lock();
        let m = &mut *m;
        match m.subs.last_mut() {
            None => Ok(top),
            Some(level) => Ok(match level.xid {
                Some(x) => x,
                None => {
                    let x = self.txns.assign_subxid(top);
                    level.xid = Some(x);
                    m.subxids.push(x);
                    x
                }
            }),
        }
    }

    /// The top-level transaction's xid, assigned if it has none.
    fn top_xid(&self, txn: &Transaction) -> PgResult<u64> {
        if txn.read_only {
            return Err(PgError::new(
                sqlstate::READ_ONLY_SQL_TRANSACTION,
                "cannot execute this statement in a read-only transaction",
            ));
        }
        let mut m = txn.inner.m.lock();
        if let Some(x) = m.xid {
            return Ok(x);
        }
        let x = self.txns.assign_xid();
        txn.inner.slot.xid.store(x, Ordering::SeqCst);
        m.xid = Some(x);
        m.snapshot.xid = x;
        if !m.has_snapshot {
            drop(m);
            self.first_snapshot(txn);
            m = txn.inner.m.lock();
        }
        if let Some(sx) = m.sx {
            self.txns.ssi.set_xid(sx, x);
        }
        Ok(x)
    }

    pub(crate) fn snapshot(&self, txn: &Transaction) -> Snapshot {
        txn.inner.m.lock().snapshot
    }

    pub async fn commit(&self, mut txn: Transaction, sync: bool) -> PgResult<()> {
        if let Some(sx) = txn.inner.m.get_mut().sx
            && let Err(e) = self.txns.ssi.pre_commit(sx)
        {
            self.rollback(txn);
            return Err(e);
        }
        let pending = txn.pending_catalog.take();
        let Some(xid) = txn.inner.m.get_mut().xid else {
            if let Some(c) = pending {
                let lsn = self.install_catalog(c)?;
                txn.inner.finish();
                // Acknowledged DDL (ALTER, RENAME: no relation file, so no xid) must be as
                // durable as any commit; without this flush a crash lost the last one.
                if sync {
                    self.wal.flush(lsn).await?;
                }
                txn.inner.release_rel_locks();
                txn.inner.ssi_committed();
                return Ok(());
            }
            txn.inner.finish();
            txn.inner.release_rel_locks();
            txn.inner.ssi_committed();
            return Ok(());
        };
        // Only unlogged relations written (no DDL, no files to drop, no sequence value
        // still to be made durable): the commit record need not be waited for, as
        // PostgreSQL does not flush for a transaction that wrote no WAL.
        let sync = sync
            && (pending.is_some()
                || !txn.inner.m.get_mut().drop_at_commit.is_empty()
                || txn.inner.wrote_logged.load(Ordering::Relaxed)
                || self.seqs.last_lsn.load(Ordering::Acquire) > self.wal.flushed_lsn());
        if !sync {
            // Visible at once: what it built on must be visible first (see commitq).
            self.settle(&txn).await?;
        }
        let lsn = {
            let _g = self.catalog_install.lock();
            let pending = match pending.map(|c| self.onto_current(c)).transpose() {
                Ok(p) => p,
                Err(e) => {
                    drop(_g);
                    self.rollback(txn);
                    return Err(e);
                }
            };
            // Only what this transaction changed is logged: O(its changes), not O(catalog).
            let rec = crate::commitrec::CommitRecord {
                catalog: pending
                    .as_ref()
                    .map(|c| CatalogChange::Delta(Box::new(c.delta()))),
                drops: txn.inner.m.get_mut().drop_at_commit.clone(),
                subxids: txn.inner.m.get_mut().subxids.clone(),
            };
            let subxids = &txn.inner.m.get_mut().subxids;
            let lsn = self
                .wal
                .log_then(RecordKind::Commit, xid, &rec.encode(), |end| {
                    // Queued before the logged bit is set: whoever sees the bit finds the
                    // entry (or, once durable, the commit) in `note_precommitted_dependency`.
                    if sync {
                        self.commits.push(end, xid);
                    }
                    // The subtransactions' bits first: a checkpoint that persists the
                    // top-level bit persists theirs.
                    for &s in subxids {
                        self.txns.clog.set_logged(s);
                    }
                    self.txns.clog.set_logged(xid);
                });
            if let Some(c) = pending {
                self.set_catalog(without_changes(c));
            }
            lsn
        };
        // Logged: from here on it commits (or the server crashes); never mark it aborted.
        txn.inner.finish();
        if sync {
            // Early lock release: row writers queued behind us go on now; the WAL writer makes
            // us visible once durable, before `flush` returns (see commitq).
            self.txns.wake_logged(xid);
            self.wal.flush(lsn).await?;
        } else {
            self.txns.mark_committed(xid);
        }
        self.txns.forget_subxids(&txn.inner.m.get_mut().subxids);
        txn.inner.ssi_committed();
        txn.inner.publish_changes();
        // Durable and visible: statements queued behind its locks see what it did.
        txn.inner.release_rel_locks();
        for id in std::mem::take(&mut txn.inner.m.get_mut().drop_at_commit) {
            self.forget_rel(id);
            self.smgr.remove(id)?;
        }
        // Logged after the commit record: a crash in between keeps the old position, which
        // only skips values; logged before it, a lost commit would restart a full table.
        for seq in std::mem::take(&mut txn.inner.m.get_mut().restart_at_commit) {
            self.setval(&seq, seq.start, false)?;
        }
        Ok(())
    }

    /// Waits until every pre-committed transaction this one built on is visible, so its next
    /// snapshot sees what its own versions replaced (see commitq).
    pub async fn settle(&self, txn: &Transaction) -> PgResult<()> {
        let dep = txn
            .inner
            .depends_on_lsn
            .load(std::sync::atomic::Ordering::Acquire);
        if dep > self.wal.flushed_lsn() {
            self.wal.flush(dep).await?;
        }
        Ok(())
    }

    /// Notes that `txn` just built on pre-committed transactions, the last of which (in chain
    /// order) is `precommitted`: the log up to that commit record, which follows the commit
    /// records of everything that one built on in turn, must be durable (and so visible)
    /// before `txn`'s next snapshot. Waiting for exactly that record rather than the end of
    /// the log lets a flush already under way cover it more often. Once the
    /// commit is durable (gone from the queue and marked committed) there is nothing to wait
    /// for; an asynchronous commit between its logged bit and its CSN falls back to the log's
    /// end. `precommitted` 0 (nothing pre-committed was relied on) notes nothing.
    pub(crate) fn note_precommitted_dependency(&self, txn: &Transaction, precommitted: u64) {
        if precommitted == 0 {
            return;
        }
        let at = match self.commits.lsn_of(precommitted) {
            Some(lsn) => lsn,
            None if matches!(
                self.txns.status(precommitted),
                keel_txn::XidStatus::Committed(_)
            ) =>
            {
                return;
            }
            None => self.wal.insert_lsn(),
        };
        txn.inner
            .depends_on_lsn
            .fetch_max(at, std::sync::atomic::Ordering::AcqRel);
    }

    /// Logs and installs the DDL of a transaction without an xid; returns the record's end.
    fn install_catalog(&self, c: Arc<Catalog>) -> PgResult<u64> {
        let _g = self.catalog_install.lock();
        let c = self.onto_current(c)?;
        let rec = crate::commitrec::CommitRecord {
            catalog: Some(CatalogChange::Delta(Box::new(c.delta()))),
            drops: Vec::new(),
            subxids: Vec::new(),
        };
        let lsn = self.wal.log(RecordKind::Commit, 0, &rec.encode());
        self.set_catalog(without_changes(c));
        Ok(lsn)
    }

    pub fn rollback(&self, mut txn: Transaction) {
        let m = txn.inner.m.get_mut();
        if let Some(sx) = m.sx.take() {
            self.txns.ssi.release(sx, false);
        }
        if let Some(xid) = m.xid {
            self.txns.mark_aborted(xid);
            self.txns.forget_subxids(&m.subxids);
        }
        txn.inner.finish();
        txn.inner.release_rel_locks();
        for id in std::mem::take(&mut txn.inner.m.get_mut().created) {
            self.forget_rel(id);
            let _ = self.smgr.remove(id);
        }
    }

    /// Takes relation lock `mode` on `rel` for `txn` until it ends (see keel_txn::rellock);
    /// a lock the transaction already holds in that mode costs nothing.
    pub async fn lock_relation(
        &self,
        txn: &Transaction,
        rel: u32,
        mode: keel_txn::LockMode,
        limits: &keel_txn::LockLimits,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> PgResult<keel_txn::Locked> {
        let st = &txn.inner;
        let held = (st.m.lock().rel_locks.iter())
            .find(|h| h.rel == rel && h.mode == mode)
            .copied();
        if let Some(h) = held {
            return Ok(keel_txn::Locked::Granted(h));
        }
        let r = self
            .txns
            .lock_relation(&st.slot, rel, mode, limits, cancelled)
            .await?;
        if let keel_txn::Locked::Granted(h) = r {
            st.m.lock().rel_locks.push(h);
        }
        Ok(r)
    }

    /// As `lock_relation` when the lock is free (or held already): true. Never queues.
    pub fn try_lock_relation(&self, txn: &Transaction, rel: u32, mode: keel_txn::LockMode) -> bool {
        let st = &txn.inner;
        let mut m = st.m.lock();
        if m.rel_locks.iter().any(|h| h.rel == rel && h.mode == mode) {
            return true;
        }
        match self
            .txns
            .rel_locks
            .try_lock(&self.txns.slots, &st.slot, rel, mode, true)
        {
            Some(keel_txn::rellock::Acquire::Granted(h)) => {
                m.rel_locks.push(h);
                true
            }
            _ => false,
        }
    }

    pub async fn wait(
        &self,
        txn: &Transaction,
        wait: RowWait,
        cancelled: impl std::future::Future<Output = ()> + Send,
    ) -> PgResult<()> {
        tokio::pin!(cancelled);
        let slot = &txn.inner.slot;
        if let Some((rel, root)) = wait.tuple {
            let key = (rel, root.to_u64());
            let held = txn.inner.tuple_guard.lock().as_ref().map(|g| g.key());
            if held != Some(key) {
                txn.inner.release_tuple_lock();
                let g = self
                    .txns
                    .lock_tuple(slot, key, self.deadlock_timeout, cancelled.as_mut())
                    .await?;
                *txn.inner.tuple_guard.lock() = Some(g);
            }
        }
        if wait.xid.0 == 0 {
            // Only a place in the row's queue was awaited (`Rows::queue_first`).
            return Ok(());
        }
        self.txns
            .wait_for(
                slot,
                wait.xid.0,
                wait.tuple.is_some() && !wait.visible,
                self.deadlock_timeout,
                cancelled.as_mut(),
            )
            .await
    }

    pub fn relation_size(&self, relfile: u32) -> u64 {
        self.smgr
            .open(relfile, false)
            .map(|f| f.size_bytes())
            .unwrap_or(0)
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    pub fn shutdown(&self) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Err(e) = self.checkpoint_inner(crate::checkpoint::Cause::Shutdown) {
            eprintln!("WARNING:  shutdown checkpoint failed: {e}");
        }
        self.wal.shutdown();
    }

    /// Deletes postmaster.pid, then unlocks it. Dropping the engine only unlocks, and so does
    /// process exit, SIGKILL included.
    pub(crate) fn release_data_dir(&self) {
        if let Some(lock) = self.dir_lock.lock().take() {
            lock.release();
        }
    }
}
