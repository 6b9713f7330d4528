//! Sort's external merge, for a sort whose rows do not fit in work_mem (PostgreSQL's
//! tuplesort over logical tapes, in keel's own shape).
//!
//! The Sort node hands over its held rows, sorted, whenever they pass work_mem; each batch
//! becomes a *run*: a stretch of one temporary file ([`super::tempfile`]) holding its rows in
//! order, each record the row's sort-key encodings (so merging compares bytes, as the
//! in-memory sort does, and evaluates nothing) followed by the row. Once the input ends, the
//! runs are merged: one reader per run, each with a buffer of [`READ_BUF`] bytes, and a binary
//! heap of each run's next row. A merge reads at most [`fan_in`] runs at once; with more runs,
//! consecutive groups of them are first merged into longer runs written at the end of the same
//! file, until one pass can read them all.
//!
//! Invariants:
//! - Runs are numbered in input order (a run holds rows that came after every row of the runs
//!   before it), and a merged group of consecutive runs takes the group's place. The heap
//!   breaks ties between equal keys by run number, and each run is stable itself, so equal
//!   keys come out in input order, as the in-memory sort gives them.
//! - Records are written and read at explicit offsets (`pwrite`/`pread`): the readers of
//!   older runs and the writer of a merged run share one file handle without a shared seek
//!   position.
//! - What a merge holds in memory (its buffers and each run's head row) is charged to the
//!   statement's memory; the held rows written to a run are given back by the caller.
//! - Blocks of 8 kB read and written count as `temp read` / `temp written` in this thread's
//!   buffer usage (EXPLAIN's `Buffers:`), as PostgreSQL counts its temporary files.

use super::Row;
use super::mem::MemCharge;
use super::sort::{Key, Keyed, compare, key_heap_bytes};
use super::tempfile::{self, Cursor};
use crate::eval::EvalCx;
use keel_common::PgResult;
use keel_planner::plan::SortKey;
use keel_storage::usage;
use keel_types::datum::row_heap_bytes;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes a merge buffers per run it reads.
const READ_BUF: usize = 32 << 10;

/// The fewest runs one merge pass reads at once, however small work_mem is (PostgreSQL's
/// minimum merge order is 6 too): fewer would mean many passes over the data.
const MIN_FAN_IN: usize = 6;

/// The block size temporary-file usage is counted in.
const BLOCK: u64 = 8192;

/// How many runs one merge pass reads at once: as many buffers as fit in `work_mem`.
fn fan_in(work_mem: usize) -> usize {
    (work_mem / READ_BUF).max(MIN_FAN_IN)
}

/// Blocks newly touched when a sequential transfer went from offset `from` to `to`.
fn blocks(from: u64, to: u64) -> u64 {
    to.div_ceil(BLOCK) - from.div_ceil(BLOCK)
}

/// One sorted run: the byte range of its records in the file.
#[derive(Clone, Copy)]
struct Run {
    start: u64,
    end: u64,
}

/// Appends at the file's end with positional writes, counting the blocks written.
struct Appender {
    file: Arc<File>,
    at: u64,
}

impl Write for Appender {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write_at(b, self.at)?;
        let from = self.at;
        self.at += n as u64;
        usage::count_temp_written(blocks(from, self.at));
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The temporary file of one sort and the runs written to it.
pub(super) struct SpillFile {
    file: Arc<File>,
    path: PathBuf,
    out: BufWriter<Appender>,
    /// Bytes handed to `out` (the file's length once flushed).
    written: u64,
    runs: Vec<Run>,
    record: Vec<u8>,
}

impl SpillFile {
    pub fn create(dir: &Path) -> PgResult<SpillFile> {
        let (file, path) = tempfile::create(dir)?;
        let file = Arc::new(file);
        Ok(SpillFile {
            out: BufWriter::with_capacity(
                64 << 10,
                Appender {
                    file: file.clone(),
                    at: 0,
                },
            ),
            file,
            path,
            written: 0,
            runs: Vec::new(),
            record: Vec::new(),
        })
    }

    /// Bytes written to the file so far (runs of every pass).
    pub fn bytes(&self) -> u64 {
        self.written
    }

    /// Writes `rows`, already sorted, as the next run, leaving `rows` empty (its capacity
    /// kept for the next batch). Ticks per row.
    pub fn write_run(&mut self, rows: &mut Vec<Keyed>, ev: &mut EvalCx<'_>) -> PgResult<()> {
        let start = self.written;
        for (key, row) in rows.drain(..) {
            ev.tick()?;
            self.write_record(&key, &row)?;
        }
        self.finish_run(start)
    }

    /// Record: its length (u32), then per sort key a flag byte (1: NULL) and, for a value,
    /// the encoding's length (u32) and bytes; then the row ([`tempfile::encode_row`]).
    fn write_record(&mut self, key: &Key, row: &Row) -> PgResult<()> {
        let b = &mut self.record;
        b.clear();
        b.extend_from_slice(&[0; 4]);
        for (null, bytes) in key {
            b.push(u8::from(*null));
            if !null {
                b.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                b.extend_from_slice(bytes);
            }
        }
        tempfile::encode_row(row, b);
        let len = (b.len() - 4) as u32;
        b[..4].copy_from_slice(&len.to_le_bytes());
        self.written += b.len() as u64;
        self.out
            .write_all(b)
            .map_err(|e| tempfile::file_error("write to", &self.path, e))
    }

    fn finish_run(&mut self, start: u64) -> PgResult<()> {
        self.out
            .flush()
            .map_err(|e| tempfile::file_error("write to", &self.path, e))?;
        self.runs.push(Run {
            start,
            end: self.written,
        });
        Ok(())
    }

    /// Merges the runs written into one ordered stream, first merging groups of consecutive
    /// runs into longer ones while there are more than one pass reads at once.
    pub fn into_merge<'k>(
        mut self,
        keys: &'k [SortKey],
        work_mem: usize,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Merge<'k>> {
        let order = fan_in(work_mem);
        while self.runs.len() > order {
            let runs = std::mem::take(&mut self.runs);
            // Merge just enough runs, from the front, for the next pass to read them all; when
            // one pass cannot get there, all of them in groups of `order`.
            let mut excess = runs.len() - order;
            let mut rest = &runs[..];
            while !rest.is_empty() {
                let n = if excess == 0 {
                    1
                } else {
                    (excess + 1).min(order)
                };
                let (group, after) = rest.split_at(n.min(rest.len()));
                rest = after;
                if let [run] = group {
                    self.runs.push(*run);
                    continue;
                }
                excess = excess.saturating_sub(group.len() - 1);
                let mut merge = Merge::start(keys, &self, group, ev)?;
                let start = self.written;
                while let Some((key, row)) = merge.pop(ev)? {
                    self.write_record(&key, &row)?;
                }
                self.finish_run(start)?;
            }
        }
        let runs = std::mem::take(&mut self.runs);
        let mut merge = Merge::start(keys, &self, &runs, ev)?;
        merge.spill = Some(self);
        Ok(merge)
    }
}

/// Reads one run's records in order through a buffer.
struct RunReader {
    file: Arc<File>,
    /// Where the next read from the file starts, and where the run ends.
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    /// The unread bytes are `buf[at..filled]`.
    at: usize,
    filled: usize,
    /// Bytes the buffer grew by for a record larger than it, not yet charged.
    grown: usize,
}

impl RunReader {
    fn new(file: Arc<File>, run: Run) -> RunReader {
        RunReader {
            file,
            pos: run.start,
            end: run.end,
            buf: vec![0; READ_BUF],
            at: 0,
            filled: 0,
            grown: 0,
        }
    }

    /// Makes `n` unread bytes available in the buffer; XX001 when the run ends first.
    fn fill(&mut self, n: usize, path: &Path) -> PgResult<()> {
        if self.filled - self.at >= n {
            return Ok(());
        }
        self.buf.copy_within(self.at..self.filled, 0);
        self.filled -= self.at;
        self.at = 0;
        if self.buf.len() < n {
            self.grown += n - self.buf.len();
            self.buf.resize(n, 0);
        }
        let from = self.pos;
        while self.filled < n {
            let room = self.buf.len() - self.filled;
            let want = room.min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
            if want == 0 {
                break;
            }
            let got = self
                .file
                .read_at(&mut self.buf[self.filled..self.filled + want], self.pos)
                .map_err(|e| tempfile::file_error("read from", path, e))?;
            if got == 0 {
                break;
            }
            self.filled += got;
            self.pos += got as u64;
        }
        usage::count_temp_read(blocks(from, self.pos));
        // The run holds whole records: ending inside one means the file lost data.
        if self.filled < n {
            return Err(tempfile::truncated());
        }
        Ok(())
    }

    /// The run's next record, None at its end.
    fn next(&mut self, keys: usize, path: &Path) -> PgResult<Option<(Key, Row)>> {
        if self.at == self.filled && self.pos == self.end {
            return Ok(None);
        }
        self.fill(4, path)?;
        let len = Cursor::new(&self.buf[self.at..]).u32()? as usize;
        self.at += 4;
        self.fill(len, path)?;
        let mut c = Cursor::new(&self.buf[self.at..self.at + len]);
        self.at += len;
        let mut key = Vec::with_capacity(keys);
        for _ in 0..keys {
            if c.u8()? == 1 {
                key.push((true, Vec::new()));
            } else {
                let n = c.u32()? as usize;
                key.push((false, c.take(n)?.to_vec()));
            }
        }
        Ok(Some((key, c.row()?)))
    }
}

/// One run's next row in the merge heap. `BinaryHeap` pops its greatest element, so the
/// order is reversed: the smallest key, then the earliest run, is the greatest.
struct Head<'k> {
    keys: &'k [SortKey],
    key: Key,
    row: Row,
    run: usize,
}

impl Head<'_> {
    fn heap_bytes(&self) -> usize {
        key_heap_bytes(&self.key) + row_heap_bytes(&self.row)
    }
}

impl Ord for Head<'_> {
    fn cmp(&self, o: &Self) -> Ordering {
        compare(self.keys, &o.key, &self.key).then_with(|| o.run.cmp(&self.run))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

/// A k-way merge of sorted runs, returning rows one at a time.
pub(super) struct Merge<'k> {
    keys: &'k [SortKey],
    path: PathBuf,
    readers: Vec<RunReader>,
    heap: BinaryHeap<Head<'k>>,
    /// The buffers and head rows held.
    mem: MemCharge,
    /// The final merge keeps the file open (and its figures for EXPLAIN).
    spill: Option<SpillFile>,
}

impl<'k> Merge<'k> {
    fn start(
        keys: &'k [SortKey],
        file: &SpillFile,
        runs: &[Run],
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Merge<'k>> {
        let mut m = Merge {
            keys,
            path: file.path.clone(),
            readers: Vec::with_capacity(runs.len()),
            heap: BinaryHeap::with_capacity(runs.len()),
            mem: MemCharge::new("A sort's merge buffers"),
            spill: None,
        };
        for (i, run) in runs.iter().enumerate() {
            m.mem.add(ev, READ_BUF)?;
            m.readers.push(RunReader::new(file.file.clone(), *run));
            if let Some(head) = m.read(i, ev)? {
                m.heap.push(head);
            }
        }
        Ok(m)
    }

    /// Run `run`'s next row as a heap entry, charged.
    fn read(&mut self, run: usize, ev: &mut EvalCx<'_>) -> PgResult<Option<Head<'k>>> {
        let Some(reader) = self.readers.get_mut(run) else {
            return Ok(None);
        };
        let next = reader.next(self.keys.len(), &self.path)?;
        let grown = std::mem::take(&mut reader.grown);
        self.mem.add(ev, grown)?;
        let Some((key, row)) = next else {
            return Ok(None);
        };
        let head = Head {
            keys: self.keys,
            key,
            row,
            run,
        };
        self.mem.add(ev, head.heap_bytes())?;
        Ok(Some(head))
    }

    /// Bytes the sort wrote to its file (None for an intermediate pass's merge).
    pub fn bytes(&self) -> Option<u64> {
        self.spill.as_ref().map(SpillFile::bytes)
    }

    /// The next row in sort order with its key, None when all runs are read. Ticks per row.
    pub fn pop(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<(Key, Row)>> {
        ev.tick()?;
        let Some(run) = self.heap.peek().map(|h| h.run) else {
            return Ok(None);
        };
        let next = self.read(run, ev)?;
        let Some(mut top) = self.heap.peek_mut() else {
            return Ok(None);
        };
        let out = match next {
            // The run's next row takes its place; the heap restores its order when `top`
            // goes out of scope.
            Some(h) => std::mem::replace(&mut *top, h),
            None => PeekMut::pop(top),
        };
        self.mem.sub(out.heap_bytes());
        Ok(Some((out.key, out.row)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::runs::tests::with_cx;
    use super::super::sort::encode;
    use super::*;
    use keel_analyzer::expr::Expr;
    use keel_types::{Datum, TypeId};

    /// `ORDER BY a DESC NULLS FIRST, b`: many duplicates and NULLs; `c` records input order.
    fn keys() -> Vec<SortKey> {
        vec![
            SortKey {
                expr: Expr::Col(0, TypeId::Int4),
                desc: true,
                nulls_first: true,
            },
            SortKey {
                expr: Expr::Col(1, TypeId::Text),
                desc: false,
                nulls_first: false,
            },
        ]
    }

    fn input() -> Vec<Row> {
        (0..5000_i64)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761);
                let a = if h.is_multiple_of(11) {
                    Datum::Null
                } else {
                    Datum::Int4((h % 37) as i32)
                };
                vec![a, Datum::Text(format!("k{}", h % 3)), Datum::Int8(i)]
            })
            .collect()
    }

    /// Writes the input as sorted runs of 100 rows (50 runs: more than one pass of a 64 kB
    /// work_mem reads) and merges them.
    /// Returns the merge and the bytes the first runs took.
    fn spill(keys: &[SortKey], ev: &mut EvalCx<'_>) -> PgResult<(Merge<'static>, u64)> {
        let keys: &'static [SortKey] = Box::leak(keys.to_vec().into_boxed_slice());
        let mut file = SpillFile::create(&ev.engine.temp_dir())?;
        let rows = input();
        for chunk in rows.chunks(100) {
            let mut run = Vec::new();
            for r in chunk {
                run.push((encode(keys, r, ev)?, r.clone()));
            }
            run.sort_by(|a, b| compare(keys, &a.0, &b.0));
            file.write_run(&mut run, ev)?;
        }
        assert_eq!(file.runs.len(), 50);
        let first = file.bytes();
        Ok((file.into_merge(keys, 64 << 10, ev)?, first))
    }

    #[test]
    fn merged_runs_give_the_stable_sort_of_the_input() {
        let keys = keys();
        with_cx(0, |ev| {
            let mut expected: Vec<Keyed> = input()
                .into_iter()
                .map(|r| (encode(&keys, &r, ev).unwrap(), r))
                .collect();
            expected.sort_by(|a, b| compare(&keys, &a.0, &b.0));
            let (mut merge, first) = spill(&keys, ev).unwrap();
            let mut got = Vec::new();
            while let Some(kr) = merge.pop(ev).unwrap() {
                got.push(kr);
            }
            assert_eq!(got, expected);
            // 50 runs, merged into 9 (all the data again), then the first 4 of those into one
            // (part of it once more), for a last pass over 6.
            let bytes = merge.bytes().unwrap();
            assert!(bytes > first * 2 && bytes < first * 3, "{bytes} {first}");
        });
    }

    #[test]
    fn a_cancel_stops_the_merge() {
        let keys = keys();
        let mut merge = None;
        with_cx(0, |ev| merge = Some(spill(&keys, ev).unwrap().0));
        let mut merge = merge.unwrap();
        // The merge owns its file and buffers: it goes on under another statement context,
        // whose first check finds the cancel.
        with_cx(1, |ev| {
            let e = loop {
                match merge.pop(ev) {
                    Err(e) => break e,
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("not cancelled"),
                }
            };
            assert_eq!(e.code, keel_common::sqlstate::QUERY_CANCELED);
        });
    }
}
