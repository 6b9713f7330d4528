//! ANALYZE in the engine: statistics of a table read whole, a sampled table, durability
//! through the WAL (a crash image) and checkpoints (a clean restart), DROP TABLE, and
//! auto-analyze after enough changed rows.

use keel_access::{Engine, Isolation, Write, WriteState};
use keel_catalog::TableDef;
use keel_common::Settings;
use keel_types::{Datum, TypeId};
use std::path::Path;
use std::time::{Duration, Instant};

use super::common::{create_table_ff, rt};

fn settings() -> Settings {
    let mut s = Settings::default();
    s.set("shared_buffers", "4MB", true).unwrap();
    s
}

fn insert_rows(eng: &Engine, table: &TableDef, range: std::ops::Range<i32>) {
    let rt = rt();
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    for i in range {
        let row = [Datum::Int4(i), Datum::Text(format!("v{}", i % 50))];
        match eng
            .insert(&txn, table, &row, &mut WriteState::default())
            .unwrap()
        {
            Write::Done(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    rt.block_on(eng.commit(txn, true)).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else if let Err(err) = std::fs::copy(e.path(), dst) {
            assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
        }
    }
}

fn check_small(eng: &Engine, oid: u32) {
    let s = eng.table_stats(oid).expect("statistics");
    assert_eq!(s.reltuples, 3000.0);
    let id = s.column(0, TypeId::Int4).expect("id");
    assert_eq!(id.n_distinct, -1.0);
    assert_eq!(id.null_frac, 0.0);
    assert_eq!(id.histogram.len(), 101);
    assert_eq!(id.histogram[0], Datum::Int4(0));
    assert_eq!(id.histogram[100], Datum::Int4(2999));
    assert_eq!(id.correlation, Some(1.0));
    let v = s.column(1, TypeId::Text).expect("v");
    assert_eq!(v.n_distinct, 50.0);
    assert_eq!(v.mcv_values.len(), 50);
    assert!(v.mcv_freqs.iter().all(|&f| f == 0.02));
    assert!(v.histogram.is_empty());
    // "v12" is 3 bytes plus a 1-byte header; "v1" 2 plus 1: 10 of 50 values are short.
    assert_eq!(v.avg_width, 3);
}

#[test]
fn analyze_is_exact_on_a_small_table_and_survives_crash_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table_ff(&eng, false, 100);
    insert_rows(&eng, &table, 0..3000);
    assert!(eng.table_stats(table.oid).is_none());
    let s = eng.analyze(None, &table, &|| Ok(())).unwrap();
    assert_eq!(s.relpages as u64 * 8192, eng.relation_size(table.relfile));
    check_small(&eng, table.oid);

    // A crash image taken now has the statistics only in the WAL.
    let crash = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), crash.path());
    let eng2 = Engine::open(crash.path(), &settings()).unwrap();
    check_small(&eng2, table.oid);
    eng2.shutdown();

    // A clean shutdown's checkpoint saves them.
    eng.shutdown();
    eng.release_data_dir();
    let eng3 = Engine::open(dir.path(), &settings()).unwrap();
    check_small(&eng3, table.oid);

    // DROP TABLE drops them, durably.
    let rt = rt();
    let mut txn = eng3.begin(Isolation::ReadCommitted, false);
    eng3.start_statement(&txn);
    let mut cat = (*txn.catalog(&eng3)).clone();
    cat.version += 1;
    cat.tables.remove(&table.oid);
    eng3.drop_relfile_at_commit(&txn, table.relfile);
    txn.pending_catalog = Some(std::sync::Arc::new(cat));
    rt.block_on(eng3.commit(txn, true)).unwrap();
    assert!(eng3.table_stats(table.oid).is_none());
    eng3.shutdown();
    eng3.release_data_dir();
    let eng4 = Engine::open(dir.path(), &settings()).unwrap();
    assert!(eng4.table_stats(table.oid).is_none());
    eng4.shutdown();
}

#[test]
fn a_table_past_the_sample_size_is_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table_ff(&eng, false, 100);
    insert_rows(&eng, &table, 0..45_000);
    let s = eng.analyze(None, &table, &|| Ok(())).unwrap();
    // Fewer blocks than the sample size: every block is read, so the count is exact,
    // while the 30,000 rows kept are a random subset.
    assert_eq!(s.reltuples, 45_000.0);
    let id = s.column(0, TypeId::Int4).expect("id");
    assert_eq!(id.n_distinct, -1.0);
    assert!(id.mcv_values.is_empty());
    assert_eq!(id.histogram.len(), 101);
    // Kept in physical order, the sample still correlates perfectly.
    assert_eq!(id.correlation, Some(1.0));
    let v = s.column(1, TypeId::Text).expect("v");
    assert_eq!(v.n_distinct, 50.0);
    let total: f32 = v.mcv_freqs.iter().sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    eng.shutdown();
}

#[test]
fn autovacuum_analyzes_a_changed_table() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    eng.set_autovacuum_naptime(Duration::from_secs(3));
    let (table, _) = create_table_ff(&eng, false, 100);
    // 50 changes do not pass the threshold (50 + 0.1 × 0 rows)...
    insert_rows(&eng, &table, 0..50);
    std::thread::sleep(Duration::from_millis(4500));
    assert!(eng.table_stats(table.oid).is_none());
    // ...51 do.
    insert_rows(&eng, &table, 50..51);
    let start = Instant::now();
    while eng.table_stats(table.oid).is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "no auto-analyze");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(eng.table_stats(table.oid).unwrap().reltuples, 51.0);
    // Next threshold: 50 + 0.1 × 51 = 55.1 changed rows (and the naptime passed).
    insert_rows(&eng, &table, 51..100);
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(eng.table_stats(table.oid).unwrap().reltuples, 51.0);
    insert_rows(&eng, &table, 100..110);
    let start = Instant::now();
    while eng.table_stats(table.oid).unwrap().reltuples != 110.0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no second auto-analyze"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eng.shutdown();
}

/// Changes count when their transaction commits: rows an open transaction inserted do not
/// make the table due (an analyze then would see none of them and record an empty table),
/// and rows a rolled-back transaction inserted never count.
#[test]
fn autovacuum_counts_only_committed_changes() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    eng.set_autovacuum_naptime(Duration::from_secs(3));
    let (table, _) = create_table_ff(&eng, false, 100);
    let insert = |txn: &keel_access::Transaction, range: std::ops::Range<i32>| {
        eng.start_statement(txn);
        for i in range {
            let row = [Datum::Int4(i), Datum::Text(format!("v{i}"))];
            let w = eng.insert(txn, &table, &row, &mut WriteState::default());
            assert!(matches!(w.unwrap(), Write::Done(_)));
        }
    };
    let aborted = eng.begin(Isolation::ReadCommitted, false);
    insert(&aborted, 0..200);
    eng.rollback(aborted);
    let open = eng.begin(Isolation::ReadCommitted, false);
    insert(&open, 200..400);
    // Two autovacuum rounds (every 2 s): neither the aborted nor the open rows count.
    std::thread::sleep(Duration::from_millis(4500));
    assert!(eng.table_stats(table.oid).is_none());
    rt().block_on(eng.commit(open, true)).unwrap();
    let start = Instant::now();
    while eng.table_stats(table.oid).is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "no auto-analyze");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(eng.table_stats(table.oid).unwrap().reltuples, 200.0);
    eng.shutdown();
}
