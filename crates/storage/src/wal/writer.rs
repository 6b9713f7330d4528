//! Record insertion, the group-commit writer thread, and flush waits.

use super::gather::{Gather, LoadGauge};
use super::record::{PAGE_FULL, PAGE_INIT, RecordKind};
use super::segment::{Segments, shown, zero_fill};
use super::{RECORD_HEADER, SEGMENT_SIZE};
use crate::buffer::PageMut;
use crate::io::{Fs, FsFile, OsFs};
use crate::page::PageRead;
use keel_common::{PgError, PgResult, sqlstate};
use parking_lot::{Condvar, Mutex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Writes happen in the background once this much WAL is buffered.
const BACKGROUND_WRITE: usize = 1 << 20;
/// Inserters wait for the writer when this much is buffered (bounded memory).
const MAX_BUFFERED: usize = 64 << 20;

struct Insert {
    buf: Vec<u8>,
    /// LSN of `buf[0]`.
    buf_start: u64,
    /// LSN the next record gets.
    next: u64,
    /// Redo point of the latest checkpoint: a page whose LSN is not after it gets a
    /// full-page image with its next change.
    redo: u64,
}

pub struct Wal {
    dir: PathBuf,
    segments: Segments,
    insert: Mutex<Insert>,
    flushed: AtomicU64,
    flushed_tx: tokio::sync::watch::Sender<u64>,
    /// Highest LSN someone waits to see flushed.
    request: Mutex<u64>,
    wake_writer: Condvar,
    flushed_cv: Condvar,
    flushed_mx: Mutex<()>,
    fsync: bool,
    shutdown: AtomicBool,
    /// A WAL write or fsync failed (PANIC): nothing more is flushed, waiters get an error.
    failed: AtomicBool,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Called by the writer thread with the new flushed LSN after each flush, before any flush
    /// waiter can see it (commits become visible there, in log order).
    durable_hook: std::sync::OnceLock<DurableHook>,
    gather: Gather,
}

/// See `Wal::on_durable`.
pub type DurableHook = Box<dyn Fn(u64) + Send + Sync>;

impl Wal {
    /// Opens the log of `data_dir` on the operating system's file system (see `open_on`).
    pub fn open(data_dir: &Path, end: u64, redo: u64, fsync: bool) -> PgResult<Arc<Wal>> {
        Wal::open_on(Arc::new(OsFs), data_dir, end, redo, fsync)
    }

    /// Opens the log for appending at `end` (the end found by recovery). Bytes after `end` in
    /// its segment are zeroed and later segments removed, so no stale record can follow.
    /// Writes go over the segment's allocated bytes; only a missing or short segment (never
    /// created, or its size lost to a power loss) takes new space, and a failure leaves it as
    /// it was.
    pub fn open_on(
        fs: Arc<dyn Fs>,
        data_dir: &Path,
        end: u64,
        redo: u64,
        fsync: bool,
    ) -> PgResult<Arc<Wal>> {
        let dir = data_dir.join("wal");
        fs.create_dir_all(&dir)
            .map_err(|e| PgError::io("could not create directory \"wal\"", e))?;
        let segments = Segments::new(fs, dir.clone());
        segments.remove_temp_files()?;
        let seg = end / SEGMENT_SIZE;
        for n in segments.list()?.into_iter().filter(|&n| n > seg) {
            segments.remove(n)?;
        }
        let path = segments.path(seg);
        let created = !segments.fs.exists(&path);
        let file = segments.open(seg)?;
        if !created {
            let from = end % SEGMENT_SIZE;
            zero_fill(&*file, &path, from, SEGMENT_SIZE - from)?;
        }
        file.sync_data()
            .map_err(|e| PgError::io(format!("could not fsync file \"{}\"", shown(&path)), e))?;
        if fsync {
            segments.sync_dir()?;
        }
        let (flushed_tx, _) = tokio::sync::watch::channel(end);
        let wal = Arc::new(Wal {
            dir,
            segments,
            insert: Mutex::new(Insert {
                buf: Vec::with_capacity(BACKGROUND_WRITE * 2),
                buf_start: end,
                next: end,
                redo,
            }),
            flushed: AtomicU64::new(end),
            flushed_tx,
            request: Mutex::new(0),
            wake_writer: Condvar::new(),
            flushed_cv: Condvar::new(),
            flushed_mx: Mutex::new(()),
            fsync,
            shutdown: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            writer: Mutex::new(None),
            durable_hook: std::sync::OnceLock::new(),
            gather: Gather::default(),
        });
        let w = wal.clone();
        let handle = std::thread::Builder::new()
            .name("keel-walwriter".into())
            .spawn(move || {
                raise_priority();
                w.writer_loop(seg, file)
            })
            .map_err(|e| PgError::io("could not start the WAL writer", e))?;
        *wal.writer.lock() = Some(handle);
        Ok(wal)
    }

    /// A log that accepts no records and reports everything flushed: for the buffer pool
    /// used during redo, whose pages' LSNs are all in the log already.
    pub fn recovery_stub(dir: &Path) -> Arc<Wal> {
        let (flushed_tx, _) = tokio::sync::watch::channel(u64::MAX);
        Arc::new(Wal {
            dir: dir.to_path_buf(),
            segments: Segments::new(Arc::new(OsFs), dir.to_path_buf()),
            insert: Mutex::new(Insert {
                buf: Vec::new(),
                buf_start: 0,
                next: 0,
                redo: 0,
            }),
            flushed: AtomicU64::new(u64::MAX),
            flushed_tx,
            request: Mutex::new(0),
            wake_writer: Condvar::new(),
            flushed_cv: Condvar::new(),
            flushed_mx: Mutex::new(()),
            fsync: false,
            shutdown: AtomicBool::new(true),
            failed: AtomicBool::new(false),
            writer: Mutex::new(None),
            durable_hook: std::sync::OnceLock::new(),
            gather: Gather::default(),
        })
    }

    /// Installs the hook the writer thread calls with the flushed LSN after every flush, before
    /// `flush` callers are released (set once, at engine start).
    pub fn on_durable(&self, hook: DurableHook) {
        let _ = self.durable_hook.set(hook);
    }

    /// Installs the gauge of writing transactions that group commit waits in proportion to
    /// (set once, at engine start; without it the writer never waits).
    pub fn on_load(&self, gauge: LoadGauge) {
        self.gather.set_gauge(gauge);
    }

    /// Retires the segment files wholly before `lsn` (after a checkpoint with that redo point).
    /// Up to `ahead` of them are recycled: renamed to the numbers the log reaches next (the
    /// segment being inserted into, if the writer has not created it yet, then the ones after
    /// it), so the writer finds them full-length and allocated and never zero-fills 16 MB for a
    /// new one (that doubled the bytes written to the disk per commit, and needs free space
    /// the disk may not have). The rest are removed. A recycled file still holds its old
    /// records, whose LSN fields name their old positions, so none of them can be read as a
    /// record at its new position.
    ///
    /// The rename never replaces a file (`RENAME_NOREPLACE`): the writer or the thread that
    /// creates segments ahead may have created that segment meanwhile, and then the next
    /// number is tried. It is atomic, so a crash never leaves one file under two names (a later
    /// recycling of the old name would then overwrite live WAL).
    pub fn recycle_segments_before(&self, lsn: u64, ahead: u64) {
        let keep_from = lsn / SEGMENT_SIZE;
        let Ok(mut segs) = self.segments.list() else {
            return;
        };
        segs.sort_unstable();
        let mut existing: std::collections::BTreeSet<u64> = segs.iter().copied().collect();
        let current = self.insert_lsn() / SEGMENT_SIZE;
        let mut next = current;
        let mut changed = false;
        let fs = &self.segments.fs;
        for &old in segs.iter().take_while(|&&n| n < keep_from) {
            let from = self.segments.path(old);
            let mut recycled = false;
            while !recycled && next <= current + ahead {
                let to = next;
                next += 1;
                if existing.contains(&to) {
                    continue;
                }
                match fs.rename_noreplace(&from, &self.segments.path(to)) {
                    Ok(()) => {
                        recycled = true;
                        existing.insert(to);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(_) => break,
                }
            }
            if !recycled {
                let _ = self.segments.remove(old);
            }
            changed = true;
        }
        if changed && self.fsync {
            let _ = self.segments.sync_dir();
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The LSN the next record will get.
    pub fn insert_lsn(&self) -> u64 {
        self.insert.lock().next
    }

    pub fn flushed_lsn(&self) -> u64 {
        self.flushed.load(Ordering::Acquire)
    }

    /// Sets the redo point of a starting checkpoint and returns it.
    pub fn begin_checkpoint(&self) -> u64 {
        let mut ins = self.insert.lock();
        ins.redo = ins.next;
        ins.redo
    }

    /// Logs the recorded changes of `pages` (WAL-logged relations only) as one atomic
    /// record, stamps their LSNs and marks them dirty. Returns the record's end LSN, or 0 when
    /// every page belongs to an unlogged relation.
    pub fn log_pages(&self, xid: u64, pages: &mut [&mut PageMut<'_>]) -> u64 {
        let logged: Vec<usize> = (0..pages.len())
            .filter(|&i| !pages[i].is_unlogged())
            .collect();
        for p in pages.iter_mut().filter(|p| p.is_unlogged()) {
            p.clear_changes();
            p.mark_dirty();
        }
        if logged.is_empty() {
            return 0;
        }
        self.backpressure();
        let mut ins = self.insert.lock();
        let start = ins.next;
        let redo = ins.redo;
        let at = ins.buf.len();
        ins.buf.resize(at + RECORD_HEADER, 0);
        ins.buf
            .extend_from_slice(&(logged.len() as u16).to_le_bytes());
        for &i in &logged {
            let p = &mut *pages[i];
            ins.buf.extend_from_slice(&p.rel_id().to_le_bytes());
            ins.buf.extend_from_slice(&p.block().to_le_bytes());
            if !p.fresh && p.lsn() <= redo {
                ins.buf.push(PAGE_FULL);
                // The image is taken before its LSN is stamped; redo stamps the LSN itself.
                ins.buf.extend_from_slice(&p.raw()[..]);
            } else {
                ins.buf.push(if p.fresh { PAGE_INIT } else { 0 });
                let ops = p.settled_ops + p.changes.len() as u16;
                ins.buf.extend_from_slice(&ops.to_le_bytes());
                ins.buf.extend_from_slice(&p.settled);
                crate::buffer::encode_ranges(p.raw(), &p.changes, &mut ins.buf);
            }
        }
        let end = finish_record(&mut ins, at, start, xid, RecordKind::Pages);
        drop(ins);
        for &i in &logged {
            let p = &mut *pages[i];
            p.clear_changes();
            p.set_lsn(end);
            p.mark_dirty();
        }
        if self.buffered() >= BACKGROUND_WRITE {
            self.wake_writer.notify_one();
        }
        end
    }

    /// Appends a non-page record and returns its end LSN.
    pub fn log(&self, kind: RecordKind, xid: u64, payload: &[u8]) -> u64 {
        self.log_then(kind, xid, payload, |_| {})
    }

    /// Appends a record and runs `under_lock` with its end LSN before the insert lock is
    /// released, so the effect is ordered with checkpoint redo points and with other records
    /// (used to mark commits as logged and queue them in log order).
    pub fn log_then(
        &self,
        kind: RecordKind,
        xid: u64,
        payload: &[u8],
        under_lock: impl FnOnce(u64),
    ) -> u64 {
        self.backpressure();
        let mut ins = self.insert.lock();
        let start = ins.next;
        let at = ins.buf.len();
        ins.buf.resize(at + RECORD_HEADER, 0);
        ins.buf.extend_from_slice(payload);
        let end = finish_record(&mut ins, at, start, xid, kind);
        under_lock(end);
        end
    }

    fn buffered(&self) -> usize {
        self.insert.lock().buf.len()
    }

    fn backpressure(&self) {
        loop {
            let (len, next) = {
                let ins = self.insert.lock();
                (ins.buf.len(), ins.next)
            };
            if len < MAX_BUFFERED {
                return;
            }
            if self.flush_blocking(next).is_err() {
                return;
            }
        }
    }

    /// Awaits durability of everything up to `lsn` without blocking the async runtime.
    pub async fn flush(&self, lsn: u64) -> PgResult<()> {
        if self.flushed.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut rx = self.flushed_tx.subscribe();
        self.request_flush(lsn);
        let done = rx
            .wait_for(|&f| f >= lsn || self.failed.load(Ordering::Acquire))
            .await
            .map(|f| *f >= lsn);
        match done {
            Ok(true) => Ok(()),
            _ => Err(writer_stopped()),
        }
    }

    /// Whether a WAL write or fsync failed (after which nothing more becomes durable).
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Blocks the calling thread until `lsn` is durable (buffer eviction, checkpoints).
    pub fn flush_blocking(&self, lsn: u64) -> PgResult<()> {
        if self.flushed.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        self.request_flush(lsn);
        self.gather.hurry(&self.request);
        let mut g = self.flushed_mx.lock();
        while self.flushed.load(Ordering::Acquire) < lsn {
            if self.failed.load(Ordering::Acquire)
                || (self.shutdown.load(Ordering::Acquire) && self.writer.lock().is_none())
            {
                return Err(writer_stopped());
            }
            self.flushed_cv.wait_for(&mut g, Duration::from_millis(50));
        }
        Ok(())
    }

    fn request_flush(&self, lsn: u64) {
        let mut r = self.request.lock();
        if *r < lsn {
            *r = lsn;
        }
        self.wake_writer.notify_one();
    }

    /// Flushes everything and stops the writer thread.
    pub fn shutdown(&self) {
        let end = self.insert_lsn();
        let _ = self.flush_blocking(end);
        self.shutdown.store(true, Ordering::Release);
        {
            let _r = self.request.lock();
            self.wake_writer.notify_one();
        }
        if let Some(h) = self.writer.lock().take() {
            let _ = h.join();
        }
    }

    fn writer_loop(&self, mut seg: u64, mut file: Box<dyn FsFile>) {
        let mut spare: Vec<u8> = Vec::with_capacity(BACKGROUND_WRITE * 2);
        let mut prep: Option<Prep> = None;
        // No segment is created ahead before the log is written to: a start-up that fails
        // (say, on a full disk) before logging anything leaves no new file behind.
        let mut wrote = false;
        loop {
            {
                let mut r = self.request.lock();
                if *r <= self.flushed.load(Ordering::Acquire)
                    && !self.shutdown.load(Ordering::Acquire)
                {
                    self.wake_writer
                        .wait_for(&mut r, Duration::from_millis(100));
                }
            }
            self.gather.wait(
                &self.request,
                self.flushed.load(Ordering::Acquire),
                &self.shutdown,
            );
            self.gather.taken();
            let (start, mut data) = {
                let mut ins = self.insert.lock();
                let start = ins.buf_start;
                std::mem::swap(&mut ins.buf, &mut spare);
                ins.buf_start = ins.next;
                (start, std::mem::take(&mut spare))
            };
            if !data.is_empty() {
                if let Err(e) = self.write_out(start, &data, &mut seg, &mut file, &mut prep) {
                    // As PostgreSQL does on a failed WAL write or fsync: nothing after this
                    // point could be trusted to be durable, so stop the server (the real file
                    // system aborts the process; the simulator lets this thread end).
                    self.segments.fs.panic(&e.message);
                    self.failed.store(true, Ordering::Release);
                    self.flushed_tx.send_modify(|_| {});
                    {
                        let _g = self.flushed_mx.lock();
                        self.flushed_cv.notify_all();
                    }
                    finish_prep(prep);
                    return;
                }
                wrote = true;
                let end = start + data.len() as u64;
                if let Some(hook) = self.durable_hook.get() {
                    hook(end);
                }
                self.flushed.store(end, Ordering::Release);
                self.flushed_tx.send_replace(end);
                let _g = self.flushed_mx.lock();
                self.flushed_cv.notify_all();
            } else if self.shutdown.load(Ordering::Acquire) {
                finish_prep(prep);
                return;
            }
            if wrote && prep.as_ref().is_none_or(|p| p.seg != seg + 1) {
                // Create the next segment ahead of time, in another thread, so no commit waits
                // for the zeroing. If that fails (a full disk), the writer tries again when
                // it needs the segment, and PANICs if it still cannot.
                let segments = Segments::new(self.segments.fs.clone(), self.dir.clone());
                let next = seg + 1;
                let handle = std::thread::Builder::new()
                    .name("keel-walprep".into())
                    .spawn(move || {
                        if segments.fs.exists(&segments.path(next)) {
                            Ok(())
                        } else {
                            segments.create(next)
                        }
                    })
                    .ok();
                prep = Some(Prep { seg: next, handle });
            }
            data.clear();
            spare = data;
        }
    }

    fn write_out(
        &self,
        start: u64,
        data: &[u8],
        seg: &mut u64,
        file: &mut Box<dyn FsFile>,
        prep: &mut Option<Prep>,
    ) -> PgResult<()> {
        let fsync_err =
            |s: u64| move |e| PgError::io(format!("could not fsync file \"{}\"", seg_name(s)), e);
        let mut pos = start;
        let mut rest = data;
        while !rest.is_empty() {
            let s = pos / SEGMENT_SIZE;
            if s != *seg {
                if self.fsync {
                    file.sync_data().map_err(fsync_err(*seg))?;
                }
                // Wait for the creation ahead, if it was for this segment; `open` creates the
                // segment itself if that failed or was for another one.
                if let Some(Prep {
                    seg: p,
                    handle: Some(h),
                }) = prep.take()
                    && p == s
                {
                    let _ = h.join();
                }
                *file = self.segments.open(s)?;
                // The file may be new, or recycled a moment ago: its directory entry must be
                // durable before a commit in it is acknowledged (fdatasync does not cover it).
                if self.fsync {
                    self.segments.sync_dir()?;
                }
                *seg = s;
            }
            let off = pos % SEGMENT_SIZE;
            let n = rest.len().min((SEGMENT_SIZE - off) as usize);
            file.write_all_at(&rest[..n], off).map_err(|e| {
                PgError::io(format!("could not write to file \"{}\"", seg_name(s)), e)
            })?;
            pos += n as u64;
            rest = &rest[n..];
        }
        if self.fsync {
            file.sync_data().map_err(fsync_err(*seg))?;
        }
        Ok(())
    }
}

/// Every commit waits for this thread, so on a busy machine it should not queue behind
/// other runnable threads: ask for a higher scheduling priority (works when permitted,
/// e.g. as root or with CAP_SYS_NICE; otherwise nothing changes).
fn raise_priority() {
    // SAFETY: plain syscalls on the calling thread; failure is harmless.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, -10);
    }
}

/// Waits for a creation ahead still running: once the writer has stopped, no thread of this
/// log touches the directory any more (a server started on it next must not find a file
/// appearing or vanishing under it).
fn finish_prep(prep: Option<Prep>) {
    if let Some(Prep {
        handle: Some(h), ..
    }) = prep
    {
        let _ = h.join();
    }
}

/// A segment being zero-filled in the background.
struct Prep {
    seg: u64,
    handle: Option<std::thread::JoinHandle<PgResult<()>>>,
}

fn finish_record(ins: &mut Insert, at: usize, start: u64, xid: u64, kind: RecordKind) -> u64 {
    let len = ins.buf.len() - at;
    let rec = &mut ins.buf[at..];
    rec[0..4].copy_from_slice(&(len as u32).to_le_bytes());
    rec[8..16].copy_from_slice(&start.to_le_bytes());
    rec[16..24].copy_from_slice(&xid.to_le_bytes());
    rec[24] = kind as u8;
    let crc = crc32c::crc32c(&rec[8..]);
    rec[4..8].copy_from_slice(&crc.to_le_bytes());
    ins.next = start + len as u64;
    ins.next
}

/// A segment as errors name it.
fn seg_name(seg: u64) -> String {
    format!("wal/{seg:016X}")
}

fn writer_stopped() -> PgError {
    PgError::new(
        sqlstate::IO_ERROR,
        "could not flush the WAL: the WAL writer stopped after a failed write",
    )
}
