//! Checkpoints: write every page dirtied before the redo point, persist the commit log,
//! catalog and sequences, then retire the WAL before the redo point.
//!
//! A timed or WAL-triggered checkpoint spreads its writes, as PostgreSQL's does with
//! `checkpoint_completion_target`: it aims to finish after that fraction of the checkpoint
//! interval (by time, `checkpoint_timeout`, and by WAL, the `max_wal_size / 2` that triggers
//! the next one), writes the pages in file and block order, and hints the kernel to start
//! writeback every `checkpoint_flush_after` pages. Writing everything at once made the final
//! fsyncs one burst of the whole dirty set, and every commit's WAL fdatasync queued behind it.
//! A CHECKPOINT command and shutdown write at full speed, and hurry a checkpoint in progress.
//!
//! Correctness does not depend on the pace: the page list is taken after the redo point is
//! set, so it covers every change before it, and a page's first change after the redo point
//! logs a full-page image whenever the page is written.

use crate::engine::{Control, EngineInner, write_atomic};
use keel_common::{PgError, PgResult, Settings};
use keel_storage::wal::{RecordKind, SEGMENT_SIZE};
use keel_storage::writeback::Writeback;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Retired WAL segments always kept for reuse: PostgreSQL's min_wal_size default, 80 MB.
const MIN_RECYCLED: u64 = 5;

/// The longest a paced checkpoint sleeps between two writes, so that a request to hurry is
/// seen soon.
const MAX_NAP: Duration = Duration::from_millis(100);

/// A nap shorter than this is not taken: the next write is due about now.
const MIN_NAP: Duration = Duration::from_millis(1);

pub(crate) struct CheckpointSettings {
    pub(crate) timeout: Duration,
    pub(crate) max_wal_size: u64,
    pub(crate) completion_target: f64,
    /// Pages between writeback hints; 0 turns them off.
    pub(crate) flush_after: usize,
    /// log_checkpoints: a LOG line when a checkpoint starts and when it completes.
    pub(crate) log: bool,
}

impl From<&Settings> for CheckpointSettings {
    fn from(s: &Settings) -> Self {
        CheckpointSettings {
            timeout: Duration::from_secs(s.int("checkpoint_timeout").max(30) as u64),
            max_wal_size: s.bytes("max_wal_size").max(64 << 20),
            completion_target: s.real("checkpoint_completion_target").clamp(0.0, 1.0),
            flush_after: s.int("checkpoint_flush_after").max(0) as usize,
            log: s.bool("log_checkpoints"),
        }
    }
}

impl CheckpointSettings {
    /// WAL written since the last redo point that triggers the next checkpoint.
    fn wal_trigger(&self) -> u64 {
        self.max_wal_size / 2
    }
}

/// When each of a paced checkpoint's writes is due: the `done`-th of `total` pages by
/// `done / total` of the time budget, unless the WAL written since the redo point is already
/// past that share of its budget (then the checkpoint is behind and writes on at once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schedule {
    pub(crate) time_budget: Duration,
    pub(crate) wal_budget: u64,
}

impl Schedule {
    fn new(s: &CheckpointSettings) -> Schedule {
        Schedule {
            time_budget: s.timeout.mul_f64(s.completion_target),
            wal_budget: (s.wal_trigger() as f64 * s.completion_target) as u64,
        }
    }

    /// How long to wait before the next write, after `done` of `total` pages, `elapsed`
    /// since the start and `wal` bytes logged since the redo point; zero when behind.
    pub(crate) fn ahead_by(
        &self,
        done: usize,
        total: usize,
        elapsed: Duration,
        wal: u64,
    ) -> Duration {
        if total == 0 || self.time_budget.is_zero() {
            return Duration::ZERO;
        }
        let progress = done as f64 / total as f64;
        if wal as f64 >= self.wal_budget as f64 * progress {
            return Duration::ZERO;
        }
        self.time_budget.mul_f64(progress).saturating_sub(elapsed)
    }
}

/// Why a checkpoint runs; only the checkpointer's own (`Time`, `Wal`) are spread out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    /// checkpoint_timeout passed since the last one started.
    Time,
    /// max_wal_size / 2 of WAL was written since the last redo point.
    Wal,
    /// The CHECKPOINT command.
    Command,
    /// The end of start-up recovery.
    Startup,
    /// A clean shutdown: the control file says no recovery is needed.
    Shutdown,
}

impl Cause {
    fn paced(self) -> bool {
        matches!(self, Cause::Time | Cause::Wal)
    }

    /// As PostgreSQL's "checkpoint starting:" line names it.
    fn describe(self) -> &'static str {
        match self {
            Cause::Time => "time",
            Cause::Wal => "wal",
            Cause::Command => "immediate force wait",
            Cause::Startup => "end-of-recovery immediate wait",
            Cause::Shutdown => "shutdown immediate",
        }
    }
}

impl EngineInner {
    /// The CHECKPOINT command: at full speed, hurrying a paced checkpoint in progress.
    pub fn checkpoint(&self) -> PgResult<()> {
        self.checkpoint_hurry.store(true, Ordering::Release);
        self.checkpoint_inner(Cause::Command)
    }

    /// Flushes every page dirtied before the redo point and persists the commit log, catalog
    /// and sequences, so the log before the redo point is no longer needed. A shutdown
    /// checkpoint marks the control file clean; the checkpointer's are spread out (see the
    /// module comment).
    pub(crate) fn checkpoint_inner(&self, cause: Cause) -> PgResult<()> {
        let _g = self.checkpoint_lock.lock();
        let paced = cause.paced();
        if !paced {
            self.checkpoint_hurry.store(false, Ordering::Release);
        }
        let started = Instant::now();
        let redo = self.wal.begin_checkpoint();
        let (prev_redo, _) = *self.last_redo.lock();
        if self.checkpoint.log {
            eprintln!("LOG:  checkpoint starting: {}", cause.describe());
        }
        let written = self.write_dirty_pages(redo, started, paced)?;
        let synced_at = Instant::now();
        let files = self.smgr.open_files();
        let mut longest = Duration::ZERO;
        for f in &files {
            let t = Instant::now();
            f.sync().map_err(|e| self.sync_failed(e))?;
            longest = longest.max(t.elapsed());
        }
        self.smgr.sync_dir().map_err(|e| self.sync_failed(e))?;
        let sync = synced_at.elapsed();
        // Taken before the flush: every catalog change it holds was logged before it was
        // installed, so the flush makes all of them durable (a catalog read after the flush
        // could hold a DDL whose commit record a crash then loses).
        let catalog = self.catalog();
        // Everything logged so far must be durable before metadata claims it.
        self.wal.flush_blocking(self.wal.insert_lsn())?;
        let next_xid = self.txns.next_xid();
        let fs = &**self.smgr.fs();
        write_atomic(
            fs,
            &self.data_dir,
            "xact",
            &self.txns.clog.logged_bitmap(next_xid),
        )?;
        write_atomic(fs, &self.data_dir, "catalog.json", &catalog.to_bytes())?;
        self.seqs.persist(fs, &self.data_dir)?;
        self.stats.persist(fs, &self.data_dir, &self.catalog())?;
        let control = Control {
            redo,
            next_xid,
            clean: cause == Cause::Shutdown,
        };
        let bytes = serde_json::to_vec(&control).map_err(|e| PgError::internal(e.to_string()))?;
        write_atomic(fs, &self.data_dir, "keel.control", &bytes)?;
        // Recycled before the checkpoint record is logged: should that record start the next
        // segment, the writer then finds a recycled file there instead of needing 16 MB of
        // free space for a new one (after a disk-full PANIC, there may be none).
        let distance = redo - prev_redo.min(redo);
        self.wal
            .recycle_segments_before(redo, self.segments_to_recycle(distance));
        self.wal.log(RecordKind::Checkpoint, 0, &redo.to_le_bytes());
        if self.checkpoint.log {
            // PostgreSQL's log_checkpoints line, with the fields keel has.
            eprintln!(
                "LOG:  checkpoint complete: wrote {written} buffers ({:.1}%); write={:.3} s, \
                 sync={:.3} s, total={:.3} s; sync files={}, longest={:.3} s; distance={} kB",
                written as f64 * 100.0 / self.pool.nframes() as f64,
                (synced_at - started).as_secs_f64(),
                sync.as_secs_f64(),
                started.elapsed().as_secs_f64(),
                files.len(),
                longest.as_secs_f64(),
                distance / 1024,
            );
        }
        // The next timed checkpoint is due checkpoint_timeout after this one *started*, as in
        // PostgreSQL, so pacing over 0.9 of the interval does not stretch the cycle.
        *self.last_redo.lock() = (redo, started);
        Ok(())
    }

    /// Writes the pages dirty at the redo point, in file and block order; when `paced`, naps
    /// while ahead of the schedule, unless asked to hurry (CHECKPOINT, shutdown).
    /// Returns the number of pages written.
    fn write_dirty_pages(&self, redo: u64, started: Instant, paced: bool) -> PgResult<usize> {
        let pages = self.pool.dirty_pages();
        let schedule = Schedule::new(&self.checkpoint);
        let mut writeback = Writeback::new(&self.smgr, self.checkpoint.flush_after);
        let mut written = 0;
        for (done, &page) in pages.iter().enumerate() {
            if self.pool.write_dirty(page)? {
                writeback.wrote(page.rel(), page.block());
                written += 1;
            }
            while paced && !self.hurry() {
                let wal = self.wal.insert_lsn().saturating_sub(redo);
                let nap = schedule.ahead_by(done + 1, pages.len(), started.elapsed(), wal);
                if nap < MIN_NAP {
                    break;
                }
                std::thread::sleep(nap.min(MAX_NAP));
            }
        }
        Ok(written)
    }

    /// A failed fsync of a relation file is a PANIC, as in PostgreSQL (data_sync_retry off):
    /// the kernel may have dropped the pages it could not write, so retrying could "succeed"
    /// without them; only redo from the WAL, after a restart, can be trusted to rewrite them.
    fn sync_failed(&self, e: PgError) -> PgError {
        self.smgr.fs().panic(&e.message);
        e
    }

    fn hurry(&self) -> bool {
        self.checkpoint_hurry.load(Ordering::Acquire) || self.is_stopping()
    }

    /// How many retired WAL segments to keep for reuse: enough for another checkpoint cycle as
    /// long as the last (`cycle` bytes of WAL), at least PostgreSQL's min_wal_size (80 MB, 5
    /// segments), at most max_wal_size.
    fn segments_to_recycle(&self, cycle: u64) -> u64 {
        let most = (self.checkpoint.max_wal_size / SEGMENT_SIZE).max(MIN_RECYCLED);
        (cycle.div_ceil(SEGMENT_SIZE) + 1).clamp(MIN_RECYCLED, most)
    }

    /// Whether enough WAL or time passed since the last checkpoint, and which.
    pub(crate) fn checkpoint_due(&self) -> Option<Cause> {
        let (redo, at) = *self.last_redo.lock();
        if self.wal.insert_lsn().saturating_sub(redo) >= self.checkpoint.wal_trigger() {
            Some(Cause::Wal)
        } else {
            (at.elapsed() >= self.checkpoint.timeout).then_some(Cause::Time)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> Schedule {
        Schedule::new(&CheckpointSettings {
            timeout: Duration::from_secs(100),
            max_wal_size: 1000,
            completion_target: 0.9,
            flush_after: 32,
            log: false,
        })
    }

    #[test]
    fn a_write_waits_for_its_share_of_the_time_budget() {
        let s = schedule();
        assert_eq!(s.time_budget, Duration::from_secs(90));
        assert_eq!(s.wal_budget, 450);
        // Half the pages written after 10 s, little WAL: due at 45 s.
        assert_eq!(
            s.ahead_by(50, 100, Duration::from_secs(10), 0),
            Duration::from_secs(35)
        );
        // Behind on time: write on.
        assert_eq!(
            s.ahead_by(50, 100, Duration::from_secs(60), 0),
            Duration::ZERO
        );
        // The last page is due at the end of the budget.
        assert_eq!(
            s.ahead_by(100, 100, Duration::from_secs(80), 0),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn wal_past_its_share_means_behind() {
        let s = schedule();
        // Half the pages written, but 60 % of the WAL budget used: no nap.
        assert_eq!(
            s.ahead_by(50, 100, Duration::from_secs(1), 270),
            Duration::ZERO
        );
        assert!(s.ahead_by(50, 100, Duration::from_secs(1), 200) > Duration::ZERO);
    }

    #[test]
    fn target_zero_or_nothing_to_write_never_naps() {
        let mut st = CheckpointSettings {
            timeout: Duration::from_secs(100),
            max_wal_size: 1000,
            completion_target: 0.0,
            flush_after: 0,
            log: false,
        };
        assert_eq!(
            Schedule::new(&st).ahead_by(1, 100, Duration::ZERO, 0),
            Duration::ZERO
        );
        st.completion_target = 0.9;
        assert_eq!(
            Schedule::new(&st).ahead_by(0, 0, Duration::ZERO, 0),
            Duration::ZERO
        );
    }
}
