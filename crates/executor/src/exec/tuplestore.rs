//! The rows a write collects before it applies them (PostgreSQL's tuplestore): held in
//! memory up to `work_mem`, the rest in a temporary file, read back once, in order.
//!
//! `ModifyExec` collects all its input before writing (so a statement never sees its own
//! writes); an `INSERT ... SELECT` of 50 million rows would otherwise hold them all in memory.
//! Rows in memory are charged to the statement's memory ([`MemCharge`]); rows past the
//! budget go to a file in the data directory's `pgsql_tmp`, unlinked as soon as it is
//! created, so its space is freed when the statement ends, or when the server dies.
//! A portal run in steps (Execute with a row limit) keeps its result in one too.
//!
//! File format, per item: its length (u32, little-endian), a flag byte (1 = a row identity
//! follows), the identity (root and version: block u32, slot u16 each, little-endian) and the
//! row ([`tempfile::encode_row`]: it reads back as the very same values).

use super::Row;
use super::mem::MemCharge;
use super::tempfile::{self, Cursor, file_error};
use crate::eval::EvalCx;
use keel_access::RowRef;
use keel_common::{PgError, PgResult, Tid};
use keel_types::datum::row_heap_bytes;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// One item: the target row version (UPDATE/DELETE) and the row.
pub type Item = (Option<RowRef>, Row);

#[derive(Default)]
pub struct Tuplestore {
    mem: VecDeque<Item>,
    /// Bytes the in-memory items hold; past `budget` new items go to the file.
    mem_bytes: usize,
    budget: usize,
    charge: Option<MemCharge>,
    spill: Option<Spill>,
    /// Items not yet taken.
    len: usize,
}

struct Spill {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    reader: Option<BufReader<File>>,
    buf: Vec<u8>,
}

impl Tuplestore {
    /// A store that keeps up to `budget` bytes of items in memory.
    pub fn new(budget: usize) -> Tuplestore {
        Tuplestore {
            budget,
            charge: Some(MemCharge::new("A write's input rows")),
            ..Tuplestore::default()
        }
    }

    /// Ready-made rows, all in memory (COPY FROM's batches, bounded by the batch size).
    pub fn from_rows(rows: Vec<Row>) -> Tuplestore {
        let len = rows.len();
        Tuplestore {
            mem: rows.into_iter().map(|r| (None, r)).collect(),
            len,
            ..Tuplestore::default()
        }
    }

    /// Items not yet taken.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(
        &mut self,
        ev: &EvalCx<'_>,
        item: Item,
        dir: impl FnOnce() -> PathBuf,
    ) -> PgResult<()> {
        self.len += 1;
        if self.spill.is_none() {
            let bytes = row_heap_bytes(&item.1) + std::mem::size_of::<Item>();
            if self.mem_bytes + bytes <= self.budget {
                self.mem_bytes += bytes;
                if let Some(c) = &mut self.charge {
                    c.add(ev, bytes)?;
                }
                self.mem.push_back(item);
                return Ok(());
            }
            self.spill = Some(Spill::create(&dir())?);
        }
        match &mut self.spill {
            Some(s) => s.write(&item),
            None => Err(PgError::internal("tuplestore without its file")),
        }
    }

    /// The next item, in the order pushed.
    pub fn pop(&mut self) -> PgResult<Option<Item>> {
        if let Some(item) = self.mem.pop_front() {
            self.len -= 1;
            let bytes = row_heap_bytes(&item.1) + std::mem::size_of::<Item>();
            if let Some(c) = &mut self.charge {
                c.sub(bytes);
            }
            return Ok(Some(item));
        }
        if self.len == 0 {
            return Ok(None);
        }
        let Some(s) = &mut self.spill else {
            return Err(PgError::internal("tuplestore lost its rows"));
        };
        self.len -= 1;
        s.read().map(Some)
    }
}

impl Spill {
    fn create(dir: &Path) -> PgResult<Spill> {
        let (file, path) = tempfile::create(dir)?;
        Ok(Spill {
            path,
            writer: Some(BufWriter::with_capacity(64 << 10, file)),
            reader: None,
            buf: Vec::new(),
        })
    }

    fn write(&mut self, (rref, row): &Item) -> PgResult<()> {
        let Some(w) = &mut self.writer else {
            return Err(PgError::internal("tuplestore written after reading began"));
        };
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(&[0; 4]);
        match rref {
            Some(r) => {
                b.push(1);
                for t in [r.root, r.version] {
                    b.extend_from_slice(&t.block.to_le_bytes());
                    b.extend_from_slice(&t.slot.to_le_bytes());
                }
            }
            None => b.push(0),
        }
        tempfile::encode_row(row, b);
        let len = (b.len() - 4) as u32;
        b[..4].copy_from_slice(&len.to_le_bytes());
        w.write_all(b)
            .map_err(|e| file_error("write to", &self.path, e))
    }

    fn read(&mut self) -> PgResult<Item> {
        if self.reader.is_none() {
            let Some(w) = self.writer.take() else {
                return Err(PgError::internal("tuplestore file missing"));
            };
            let mut f = w
                .into_inner()
                .map_err(|e| file_error("write to", &self.path, e.into_error()))?;
            f.rewind()
                .map_err(|e| file_error("seek in", &self.path, e))?;
            self.reader = Some(BufReader::with_capacity(64 << 10, f));
        }
        let Some(r) = &mut self.reader else {
            return Err(PgError::internal("tuplestore file missing"));
        };
        let path = &self.path;
        let b = &mut self.buf;
        let mut read = |n: usize, buf: &mut Vec<u8>| -> PgResult<()> {
            buf.resize(n, 0);
            r.read_exact(buf)
                .map_err(|e| file_error("read from", path, e))
        };
        read(4, b)?;
        let len = Cursor::new(b).u32()? as usize;
        read(len, b)?;
        let mut c = Cursor::new(b);
        let rref = if c.u8()? == 1 {
            let mut tid = || -> PgResult<Tid> {
                let block = c.u32()?;
                Ok(Tid {
                    block,
                    slot: c.u16()?,
                })
            };
            Some(RowRef {
                root: tid()?,
                version: tid()?,
            })
        } else {
            None
        };
        Ok((rref, c.row()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_types::{Datum, TypeId};

    #[test]
    fn spilled_items_read_back_as_the_same_values_in_order() {
        let dir = std::env::temp_dir().join(format!("keel-tuplestore-{}", std::process::id()));
        let mut s = Spill::create(&dir).unwrap();
        let num = keel_types::io::parse_text("-12.50", keel_types::SqlType::new(TypeId::Numeric))
            .unwrap();
        let items: Vec<Item> = vec![
            (
                None,
                vec![Datum::Int4(1), Datum::Text("a".into()), Datum::Null],
            ),
            (
                Some(RowRef {
                    root: Tid { block: 7, slot: 3 },
                    version: Tid { block: 9, slot: 1 },
                }),
                vec![
                    Datum::Date(-3),
                    Datum::TimestampTz(5),
                    Datum::Bytea(vec![0, 1]),
                    num,
                ],
            ),
            (None, vec![]),
        ];
        for it in &items {
            s.write(it).unwrap();
        }
        for it in &items {
            assert_eq!(&s.read().unwrap(), it);
        }
        // Unlinked when created: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
