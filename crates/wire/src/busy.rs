//! Response batching under load.
//!
//! A session is *busy* from the first message of a command cycle until its ReadyForQuery is
//! flushed. When many more sessions are busy than the runtime has worker threads, clients are
//! queueing for the server anyway; a session that has its response ready then yields once to
//! the other runnable sessions before it sends. Responses leave in bursts, so a client that
//! multiplexes many connections (pgbench with 128 per thread) finds several ready per poll
//! instead of one (pgbench at 256 clients: 0.23 polls per request instead of 0.32). With few
//! busy sessions responses go out at once: there, the added latency would cost throughput.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Busy-session count shared by all connections, and the level above which they batch.
pub(crate) struct Busy {
    count: AtomicUsize,
    batch_above: usize,
}

impl Busy {
    pub(crate) fn new() -> Busy {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Busy {
            count: AtomicUsize::new(0),
            batch_above: 4 * workers,
        }
    }

    fn crowded(&self) -> bool {
        self.count.load(Ordering::Relaxed) > self.batch_above
    }
}

/// One connection's command cycle; ends (uncounts) on drop too.
pub(crate) struct Cycle<'a> {
    busy: &'a Busy,
    active: bool,
}

impl<'a> Cycle<'a> {
    pub(crate) fn new(busy: &'a Busy) -> Cycle<'a> {
        Cycle {
            busy,
            active: false,
        }
    }

    /// Between ReadyForQuery and the first message of the next cycle.
    pub(crate) fn idle(&self) -> bool {
        !self.active
    }

    pub(crate) fn start(&mut self) {
        if !self.active {
            self.active = true;
            self.busy.count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Called with ReadyForQuery buffered, before it is flushed.
    pub(crate) async fn finish(&mut self) {
        if self.active {
            if self.busy.crowded() {
                tokio::task::yield_now().await;
            }
            self.end();
        }
    }

    fn end(&mut self) {
        if self.active {
            self.active = false;
            self.busy.count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Cycle<'_> {
    fn drop(&mut self) {
        self.end();
    }
}
