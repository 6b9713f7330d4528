//! Group commit under load: when many transactions are writing, the WAL writer waits a little
//! before it takes the buffer, so that one fdatasync covers more commits.
//!
//! Why: on this kind of machine a flush costs CPU, not just disk time (the syscall, the block
//! layer, the virtual disk's doorbell, and waking the writer and every committer). Flushing as
//! soon as anyone asks gave about 0.7 fdatasync per pgbench tpcb-like transaction at 16 and at
//! 256 clients alike: with the CPU saturated, commits trickle in one or two per flush. Waiting
//! in proportion to the number of writing transactions gathers more of them per flush where
//! that is cheap: with 256 clients a transaction takes tens of milliseconds anyway, while with
//! fewer than `SIBLINGS` writers (PostgreSQL's commit_siblings default) nothing waits at all.
//!
//! Durability is unchanged: a commit is still acknowledged only after its own flush. Flushes
//! that someone blocks on outside a commit (buffer eviction, checkpoints, shutdown) cut the
//! wait short (`hurry`).

use parking_lot::{Condvar, Mutex};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Reports how many transactions are writing (hold an xid, outcome not yet logged).
pub type LoadGauge = Box<dyn Fn() -> usize + Send + Sync>;

/// With fewer writing transactions than this, flush at once.
const SIBLINGS: usize = 5;
/// Wait per writing transaction, up to `MAX_WAIT`.
const PER_WRITER: Duration = Duration::from_micros(40);
const MAX_WAIT: Duration = Duration::from_micros(1200);

/// How long the writer gathers commits with `writing` transactions in progress.
pub(crate) fn gather_time(writing: usize) -> Duration {
    if writing < SIBLINGS {
        return Duration::ZERO;
    }
    PER_WRITER
        .saturating_mul(writing.min(u32::MAX as usize) as u32)
        .min(MAX_WAIT)
}

#[derive(Default)]
pub(super) struct Gather {
    load: OnceLock<LoadGauge>,
    /// A flush someone blocks on is pending: stop gathering.
    urgent: AtomicBool,
    /// Signalled (under the writer's request mutex) when `urgent` is set.
    cv: Condvar,
}

impl Gather {
    pub(super) fn set_gauge(&self, gauge: LoadGauge) {
        let _ = self.load.set(gauge);
    }

    /// Called by the writer thread before it takes the buffer: waits only when a flush past
    /// `flushed` was requested (not for a periodic background write).
    pub(super) fn wait(&self, request: &Mutex<u64>, flushed: u64, shutdown: &AtomicBool) {
        let Some(load) = self.load.get() else {
            return;
        };
        if *request.lock() <= flushed {
            return;
        }
        // The gauge may scan the sessions; committers queue on the request lock, so it is
        // read outside it.
        let time = gather_time(load());
        if time.is_zero() {
            return;
        }
        let deadline = Instant::now() + time;
        let mut r = request.lock();
        while !self.urgent.load(Ordering::Acquire) && !shutdown.load(Ordering::Acquire) {
            if self.cv.wait_until(&mut r, deadline).timed_out() {
                break;
            }
        }
    }

    /// The writer is about to take the buffer: whatever was urgent is in it.
    pub(super) fn taken(&self) {
        self.urgent.store(false, Ordering::Release);
    }

    /// Ends a gathering wait now (a blocking flush was requested).
    pub(super) fn hurry(&self, request: &Mutex<u64>) {
        let _r = request.lock();
        self.urgent.store(true, Ordering::Release);
        self.cv.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_only_under_load_and_never_long() {
        assert_eq!(gather_time(0), Duration::ZERO);
        assert_eq!(gather_time(SIBLINGS - 1), Duration::ZERO);
        assert_eq!(gather_time(10), Duration::from_micros(400));
        assert_eq!(gather_time(256), MAX_WAIT);
        assert_eq!(gather_time(usize::MAX), MAX_WAIT);
    }
}
