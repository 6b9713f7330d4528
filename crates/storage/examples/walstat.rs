//! Summarizes a WAL directory: bytes and records per kind, and for `Pages` records the
//! full-page images, initialized pages and range bytes per relation. A diagnostic for WAL
//! volume (what a commit costs in log bytes), in the spirit of `pg_waldump --stats`.
//!
//!   cargo run --release -p keel-storage --example walstat -- DATA_DIR/wal [START_LSN]

use keel_storage::wal::{RecordKind, WalReader, parse_pages};
use std::collections::BTreeMap;

#[derive(Default)]
struct PerRel {
    touches: u64,
    full: u64,
    init: u64,
    ranges: u64,
    range_bytes: u64,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: walstat WAL_DIR [START_LSN]"));
    let start = match args.next() {
        Some(s) => s.parse().expect("START_LSN is a number"),
        None => first_lsn(&dir),
    };
    let mut reader = WalReader::new(&dir, start);
    let mut kinds: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut rels: BTreeMap<u32, PerRel> = BTreeMap::new();
    let (mut first, mut last) = (None, start);
    while let Some(rec) = reader.next_record() {
        first.get_or_insert(rec.lsn);
        if rec.kind == RecordKind::Checkpoint {
            println!(
                "checkpoint record at LSN {} (ends {})",
                rec.lsn, rec.end_lsn
            );
        }
        last = rec.end_lsn;
        let k = kinds.entry(format!("{:?}", rec.kind)).or_default();
        k.0 += 1;
        k.1 += rec.end_lsn - rec.lsn;
        if rec.kind == RecordKind::Pages {
            for img in parse_pages(&rec.payload).expect("parsable Pages record") {
                let r = rels.entry(img.rel).or_default();
                r.touches += 1;
                r.full += u64::from(img.full.is_some());
                r.init += u64::from(img.init);
                r.ranges += img.ranges.len() as u64;
                r.range_bytes += img.ranges.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
            }
        }
    }
    let commits = kinds.get("Commit").map_or(0, |k| k.0).max(1);
    println!(
        "LSN {}..{last}: {} bytes, {commits} commits, {:.0} bytes/commit",
        first.unwrap_or(start),
        last - first.unwrap_or(start),
        (last - first.unwrap_or(start)) as f64 / commits as f64
    );
    for (kind, (n, bytes)) in &kinds {
        println!(
            "{kind:>10}: {n:>9} records {bytes:>12} bytes  {:>8.1} per commit",
            *bytes as f64 / commits as f64
        );
    }
    println!(
        "{:>8} {:>9} {:>8} {:>8} {:>9} {:>12}  (per commit: touches, images)",
        "rel", "touches", "images", "init", "ranges", "range bytes"
    );
    for (rel, r) in &rels {
        println!(
            "{rel:>8} {:>9} {:>8} {:>8} {:>9} {:>12}  {:.2} {:.2}",
            r.touches,
            r.full,
            r.init,
            r.ranges,
            r.range_bytes,
            r.touches as f64 / commits as f64,
            r.full as f64 / commits as f64
        );
    }
}

/// The first record in the oldest segment present: the first position whose LSN field names
/// itself and that reads as a whole record.
fn first_lsn(dir: &std::path::Path) -> u64 {
    let seg = std::fs::read_dir(dir)
        .expect("readable WAL dir")
        .flatten()
        .filter_map(|e| u64::from_str_radix(e.file_name().to_str()?, 16).ok())
        .min()
        .expect("a WAL segment");
    let base = seg * keel_storage::wal::SEGMENT_SIZE;
    let bytes = std::fs::read(dir.join(format!("{seg:016X}"))).expect("readable segment");
    (0..bytes.len().saturating_sub(16))
        .map(|off| (off, base + off as u64))
        .find(|&(off, pos)| {
            pos >= keel_storage::wal::FIRST_LSN
                && bytes[off + 8..off + 16] == pos.to_le_bytes()
                && WalReader::new(dir, pos).next_record().is_some()
        })
        .map_or(base, |(_, pos)| pos)
}
