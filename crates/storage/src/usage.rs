//! Buffer usage counters for `EXPLAIN (BUFFERS)`: shared pages found in the pool (hit), read
//! from disk (read), made dirty (dirtied) and written out by this thread (written), and 8 kB
//! blocks of temporary files read and written (a sort's spilled runs), as PostgreSQL's
//! `BufferUsage` counts them.
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

/// Shared-buffer page counts, as `Buffers: shared hit=... read=... dirtied=... written=...`,
/// and temporary-file blocks, as `temp read=... written=...`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferUsage {
    pub hit: u64,
    pub read: u64,
    pub dirtied: u64,
    pub written: u64,
    pub temp_read: u64,
    pub temp_written: u64,
}

impl Sub for BufferUsage {
    type Output = BufferUsage;

    fn sub(self, o: BufferUsage) -> BufferUsage {
        BufferUsage {
            hit: self.hit.wrapping_sub(o.hit),
            read: self.read.wrapping_sub(o.read),
            dirtied: self.dirtied.wrapping_sub(o.dirtied),
            written: self.written.wrapping_sub(o.written),
            temp_read: self.temp_read.wrapping_sub(o.temp_read),
            temp_written: self.temp_written.wrapping_sub(o.temp_written),
        }
    }
}

struct Counters {
    hit: Cell<u64>,
    read: Cell<u64>,
    dirtied: Cell<u64>,
    written: Cell<u64>,
    temp_read: Cell<u64>,
    temp_written: Cell<u64>,
}

thread_local! {
    static USAGE: Counters = const {
        Counters {
            hit: Cell::new(0),
            read: Cell::new(0),
            dirtied: Cell::new(0),
            written: Cell::new(0),
            temp_read: Cell::new(0),
            temp_written: Cell::new(0),
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
        temp_read: u.temp_read.get(),
        temp_written: u.temp_written.get(),
    })
}

fn bump(f: impl FnOnce(&Counters) -> &Cell<u64>) {
    bump_by(f, 1);
}

fn bump_by(f: impl FnOnce(&Counters) -> &Cell<u64>, n: u64) {
    USAGE.with(|u| {
        let c = f(u);
        c.set(c.get().wrapping_add(n));
    });
}

/// `blocks` 8 kB blocks of a temporary file read by this thread.
pub fn count_temp_read(blocks: u64) {
    bump_by(|u| &u.temp_read, blocks);
}

/// `blocks` 8 kB blocks of a temporary file written by this thread.
pub fn count_temp_written(blocks: u64) {
    bump_by(|u| &u.temp_written, blocks);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BufferPool;
    use crate::smgr::Smgr;
    use crate::wal::Wal;
    use std::sync::Arc;

    /// An extension counts as a write, a page found in the pool as a hit, a page read back
    /// after eviction as a read, a clean page turning dirty once as dirtied, and evicting a
    /// dirty page as a write; the counts are this thread's only.
    #[test]
    fn counts_hits_reads_dirtied_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::new(dir.path()).unwrap());
        let wal = Wal::open(dir.path(), 0, 0, false).unwrap();
        // 16 frames (the pool's minimum): 40 pages cannot all stay.
        let pool = BufferPool::new(smgr.clone(), wal.clone(), 16);
        let rel = smgr.open(9, true).unwrap();
        let start = current();
        for _ in 0..40 {
            let mut page = pool.extend(&rel).unwrap();
            page.init(1, 0);
            page.add_item(&[1, 2, 3]).unwrap();
            wal.log_pages(1, &mut [&mut page]);
        }
        let made = current() - start;
        assert_eq!((made.hit, made.read, made.dirtied), (0, 0, 40), "{made:?}");
        // 40 extensions, and at least 24 evictions of dirty pages written by this thread.
        assert!(made.written >= 64, "{made:?}");
        let before = current();
        drop(pool.read(&rel, 39).unwrap());
        drop(pool.read(&rel, 39).unwrap());
        let d = current() - before;
        assert_eq!((d.hit, d.read), (2, 0), "{d:?}");
        let before = current();
        drop(pool.read(&rel, 0).unwrap());
        let d = current() - before;
        assert_eq!((d.hit, d.read), (0, 1), "{d:?}");
        // Another thread's accesses are its own.
        let before = current();
        std::thread::scope(|s| {
            s.spawn(|| drop(pool.read(&rel, 1).unwrap()));
        });
        assert_eq!(current() - before, BufferUsage::default());
    }
}
