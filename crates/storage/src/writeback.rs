//! Writeback hints for checkpoint writes (PostgreSQL's `checkpoint_flush_after`).
//!
//! A checkpoint's `pwrite`s only fill the kernel's page cache; without a hint the kernel
//! writes them back in one burst when the checkpoint's fsync comes (or 30 s later), and a WAL
//! fdatasync issued during that burst queues behind it. Telling the kernel to start writeback
//! after every `flush_after` pages keeps the device queue short, so commits keep their latency
//! while a checkpoint runs and the final fsync finds little left to do.

use crate::smgr::Smgr;
use keel_common::{BlockNo, RelFileId};

/// Collects the blocks written since the last hint as runs of adjacent blocks, and hints
/// them every `flush_after` pages.
pub struct Writeback<'a> {
    smgr: &'a Smgr,
    flush_after: usize,
    /// (relation, first block, number of blocks): adjacent writes extend the last run.
    runs: Vec<(RelFileId, BlockNo, u32)>,
    pending: usize,
}

impl<'a> Writeback<'a> {
    /// `flush_after` 0 turns the hints off.
    pub fn new(smgr: &'a Smgr, flush_after: usize) -> Writeback<'a> {
        Writeback {
            smgr,
            flush_after,
            runs: Vec::new(),
            pending: 0,
        }
    }

    /// Notes that `block` of `rel` was written.
    pub fn wrote(&mut self, rel: RelFileId, block: BlockNo) {
        if self.flush_after == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some((r, first, n)) if *r == rel && first.checked_add(*n) == Some(block) => *n += 1,
            _ => self.runs.push((rel, block, 1)),
        }
        self.pending += 1;
        if self.pending >= self.flush_after {
            self.issue();
        }
    }

    /// Hints every run collected so far.
    pub fn issue(&mut self) {
        for (rel, first, n) in self.runs.drain(..) {
            // A relation dropped meanwhile needs no writeback.
            if let Ok(f) = self.smgr.open(rel, false) {
                f.start_writeback(first, n);
            }
        }
        self.pending = 0;
    }

    /// The runs not hinted yet (for tests).
    pub fn pending_runs(&self) -> &[(RelFileId, BlockNo, u32)] {
        &self.runs
    }
}

impl Drop for Writeback<'_> {
    fn drop(&mut self) {
        self.issue();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_blocks_form_runs_and_are_hinted_every_flush_after_pages() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Smgr::new(dir.path()).unwrap();
        smgr.open(7, true).unwrap();
        let mut wb = Writeback::new(&smgr, 4);
        wb.wrote(7, 10);
        wb.wrote(7, 11);
        wb.wrote(7, 13);
        assert_eq!(wb.pending_runs(), &[(7, 10, 2), (7, 13, 1)]);
        wb.wrote(8, 14); // another relation: a new run (and not open: skipped when hinted)
        assert!(
            wb.pending_runs().is_empty(),
            "the 4th page issues the hints"
        );
        let mut off = Writeback::new(&smgr, 0);
        off.wrote(7, 1);
        assert!(off.pending_runs().is_empty());
    }
}
