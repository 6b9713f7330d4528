//! Rows kept to be read again, by number and by any number of readers (PostgreSQL's
//! random-access tuplestore): a cursor's result, a trigger's transition tables.
//!
//! The first rows stay in memory up to a byte budget (`work_mem`); the rest go to a temporary
//! file ([`tempfile`]: unlinked at creation, freed when the store is dropped) with the offset
//! of each row, so any row is one positioned read away. Reads take `&self` (positioned reads
//! share the file without a cursor), so a store behind an `Arc` serves several scans at once:
//! a query may join a transition table with itself.

use super::Row;
use super::tempfile::{self, Cursor as Bytes, file_error};
use keel_common::{PgError, PgResult};
use keel_types::datum::row_heap_bytes;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

pub struct RowStore {
    mem: Vec<Row>,
    mem_bytes: usize,
    budget: usize,
    dir: PathBuf,
    spill: Option<Spill>,
}

struct Spill {
    file: File,
    path: PathBuf,
    /// Where each spilled row starts; `end` ends the last.
    offsets: Vec<u64>,
    end: u64,
    buf: Vec<u8>,
}

impl RowStore {
    /// An empty store that keeps up to `budget` bytes of rows in memory and spills the rest
    /// to a file in `dir`.
    pub fn new(budget: usize, dir: PathBuf) -> RowStore {
        RowStore {
            mem: Vec::new(),
            mem_bytes: 0,
            budget,
            dir,
            spill: None,
        }
    }

    pub fn len(&self) -> usize {
        self.mem.len() + self.spill.as_ref().map_or(0, |s| s.offsets.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether some rows went to the file.
    pub fn spilled(&self) -> bool {
        self.spill.is_some()
    }

    pub fn push(&mut self, row: Row) -> PgResult<()> {
        if self.spill.is_none() {
            let bytes = row_heap_bytes(&row) + std::mem::size_of::<Row>();
            if self.mem_bytes + bytes <= self.budget {
                self.mem_bytes += bytes;
                self.mem.push(row);
                return Ok(());
            }
            let (file, path) = tempfile::create(&self.dir)?;
            self.spill = Some(Spill {
                file,
                path,
                offsets: Vec::new(),
                end: 0,
                buf: Vec::new(),
            });
        }
        let Some(s) = &mut self.spill else {
            return Err(PgError::internal("stored rows without their file"));
        };
        s.buf.clear();
        tempfile::encode_row(&row, &mut s.buf);
        s.file
            .write_all_at(&s.buf, s.end)
            .map_err(|e| file_error("write to", &s.path, e))?;
        s.offsets.push(s.end);
        s.end += s.buf.len() as u64;
        Ok(())
    }

    /// Row `i` (0-based).
    pub fn get(&self, i: usize) -> PgResult<Row> {
        if let Some(r) = self.mem.get(i) {
            return Ok(r.clone());
        }
        let out_of_range = || PgError::internal("stored row out of range");
        let s = self.spill.as_ref().ok_or_else(out_of_range)?;
        let k = i - self.mem.len();
        let start = *s.offsets.get(k).ok_or_else(out_of_range)?;
        let end = s.offsets.get(k + 1).copied().unwrap_or(s.end);
        let mut buf = vec![0; (end - start) as usize];
        s.file
            .read_exact_at(&mut buf, start)
            .map_err(|e| file_error("read from", &s.path, e))?;
        Bytes::new(&buf).row()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_types::Datum;

    #[test]
    fn rows_read_back_by_number_in_memory_and_spilled() {
        let dir = std::env::temp_dir().join(format!("keel-rowstore-{}", std::process::id()));
        for budget in [1 << 20, 100, 0] {
            let mut s = RowStore::new(budget, dir.clone());
            for i in 0..50 {
                s.push(vec![Datum::Int4(i), Datum::Text(format!("row {i}"))])
                    .unwrap();
            }
            assert_eq!(s.len(), 50);
            assert_eq!(s.spilled(), budget < 1 << 20);
            for i in [49, 0, 7, 7, 30] {
                let r = s.get(i).unwrap();
                assert!(matches!(r[0], Datum::Int4(v) if v == i as i32));
                assert!(matches!(&r[1], Datum::Text(t) if *t == format!("row {i}")));
            }
            assert!(s.get(50).is_err());
        }
    }
}
