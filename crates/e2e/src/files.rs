//! Finding and damaging a relation's data file, for torn-page and checksum tests.
//!
//! Keel: `<data>/catalog.json` (written by each checkpoint) maps a table name to its
//! `relfile`; the file is `<data>/base/<relfile>`. PostgreSQL: `pg_relation_filepath()`.
//! Call these only while the server is stopped or killed.

use crate::server::{Engine, Server};
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;

pub const BLOCK: usize = 8192;

/// The data file of `table`. For keel, the table must have existed at the last checkpoint;
/// for PostgreSQL the server must be running.
pub fn relation_file(srv: &Server, table: &str) -> PathBuf {
    match srv.engine {
        Engine::Pg => {
            let rel = srv.query(&format!("select pg_relation_filepath('{table}')"));
            srv.data_dir().join(rel)
        }
        Engine::Keel => {
            let path = srv.data_dir().join("catalog.json");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            let key = format!("\"name\":\"{table}\",\"columns\"");
            let at = text
                .find(&key)
                .unwrap_or_else(|| panic!("table {table} not in {}", path.display()));
            let rest = &text[at..];
            let rf = rest
                .find("\"relfile\":")
                .map(|i| &rest[i + "\"relfile\":".len()..])
                .and_then(|s| {
                    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
                    digits.parse::<u32>().ok()
                })
                .unwrap_or_else(|| panic!("no relfile for {table} in {}", path.display()));
            srv.data_dir().join("base").join(rf.to_string())
        }
    }
}

/// Overwrites bytes `[from, to)` of every 8 kB block of `file` with a deterministic non-zero
/// pattern (so a page cannot pass as all-zero / new). Returns the number of blocks damaged.
pub fn scribble_blocks(
    file: &std::path::Path,
    blocks: Option<&[u64]>,
    from: usize,
    to: usize,
) -> u64 {
    let len = std::fs::metadata(file)
        .unwrap_or_else(|e| panic!("stat {}: {e}", file.display()))
        .len();
    let nblocks = len / BLOCK as u64;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .unwrap_or_else(|e| panic!("open {}: {e}", file.display()));
    let junk: Vec<u8> = (0..to - from)
        .map(|i| 0xA5 ^ (i as u8).wrapping_mul(31) | 1)
        .collect();
    let all: Vec<u64> = (0..nblocks).collect();
    let which = blocks.unwrap_or(&all);
    for &b in which {
        assert!(
            b < nblocks,
            "block {b} beyond {nblocks} blocks of {}",
            file.display()
        );
        let off = b * BLOCK as u64 + from as u64;
        f.seek(SeekFrom::Start(off))
            .and_then(|_| f.write_all(&junk))
            .unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
    }
    f.sync_all()
        .unwrap_or_else(|e| panic!("fsync {}: {e}", file.display()));
    which.len() as u64
}
