//! Buffer usage counters for `EXPLAIN (BUFFERS)`: shared pages found in the pool (hit), read
//! from disk (read), made dirty (dirtied) and written out by this thread (written), as
//! PostgreSQL's `BufferUsage` counts them.
//!
//! The counters are per thread and never shared: a statement's operators run on one thread
//! for the duration of each call into them, so the difference of two [`current`] readings
//! taken around a call is exactly what that call did. Counting costs a thread-local add per
//! page access, with no atomic read-modify-write and no shared cache line, so the hot path
//! (pgbench's point lookups) pays nothing measurable. Background threads (checkpointer,
//! autovacuum) count into their own counters, which nothing reads, as PostgreSQL's background
//! writer does not count into a backend's usage.

use std::cell::Cell;
use std::ops::Sub;

/// Shared-buffer page counts, as `Buffers: shared hit=... read=... dirtied=... written=...`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferUsage {
    pub hit: u64,
    pub read: u64,
    pub dirtied: u64,
    pub written: u64,
}

impl BufferUsage {
    pub fn is_zero(&self) -> bool {
        *self == BufferUsage::default()
    }

    pub fn add(&mut self, other: &BufferUsage) {
        self.hit += other.hit;
        self.read += other.read;
        self.dirtied += other.dirtied;
        self.written += other.written;
    }
}

impl Sub for BufferUsage {
    type Output = BufferUsage;

    fn sub(self, o: BufferUsage) -> BufferUsage {
        BufferUsage {
            hit: self.hit.wrapping_sub(o.hit),
            read: self.read.wrapping_sub(o.read),
            dirtied: self.dirtied.wrapping_sub(o.dirtied),
            written: self.written.wrapping_sub(o.written),
        }
    }
}

struct Counters {
    hit: Cell<u64>,
    read: Cell<u64>,
    dirtied: Cell<u64>,
    written: Cell<u64>,
}

thread_local! {
    static USAGE: Counters = const {
        Counters {
            hit: Cell::new(0),
            read: Cell::new(0),
            dirtied: Cell::new(0),
            written: Cell::new(0),
        }
    };
}

/// This thread's counts since it started (take two readings and subtract).
pub fn current() -> BufferUsage {
    USAGE.with(|u| BufferUsage {
        hit: u.hit.get(),
        read: u.read.get(),
        dirtied: u.dirtied.get(),
        written: u.written.get(),
    })
}

fn bump(f: impl FnOnce(&Counters) -> &Cell<u64>) {
    USAGE.with(|u| {
        let c = f(u);
        c.set(c.get().wrapping_add(1));
    });
}

pub(crate) fn count_hit() {
    bump(|u| &u.hit);
}

pub(crate) fn count_read() {
    bump(|u| &u.read);
}

pub(crate) fn count_dirtied() {
    bump(|u| &u.dirtied);
}

pub(crate) fn count_written() {
    bump(|u| &u.written);
}
