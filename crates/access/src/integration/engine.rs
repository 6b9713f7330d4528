//! Engine-level tests on real files: rows, versions, commit/abort visibility, crash recovery
//! from a copy of a live data directory.

use keel_access::{Engine, Isolation, KeyRange, RowRef, Write, WriteState};
use keel_catalog::{IndexDef, TableDef};
use keel_common::Settings;
use keel_types::Datum;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use super::common::{create_table_ff, rt};

fn settings() -> Settings {
    let mut s = Settings::default();
    s.set("shared_buffers", "1MB", true).unwrap();
    s
}

fn create_table(eng: &Engine, with_index: bool) -> (Arc<TableDef>, Option<Arc<IndexDef>>) {
    create_table_ff(eng, with_index, 100)
}

fn insert_rows(eng: &Engine, table: &TableDef, range: std::ops::Range<i32>) {
    let rt = rt();
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    for i in range {
        let row = [Datum::Int4(i), Datum::Text(format!("row {i}"))];
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

fn all_rows(eng: &Engine, table: &TableDef) -> Vec<(RowRef, Vec<Datum>)> {
    let txn = eng.begin(Isolation::ReadCommitted, true);
    eng.start_statement(&txn);
    let mut rows: Vec<_> = eng.scan(&txn, table).map(|r| r.unwrap()).collect();
    rows.sort_by_key(|(_, r)| match r[0] {
        Datum::Int4(i) => i,
        _ => 0,
    });
    eng.rollback(txn);
    rows
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else if let Err(err) = std::fs::copy(e.path(), dst) {
            // A WAL segment being created ahead is renamed from its temporary name meanwhile.
            assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
        }
    }
}

#[test]
fn rows_survive_updates_and_a_crash_image() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table(&eng, false);
    insert_rows(&eng, &table, 0..2000);
    assert_eq!(all_rows(&eng, &table).len(), 2000);

    // Update every row twice, in two transactions, then abort a third update.
    let rt = rt();
    for round in 0..2 {
        let txn = eng.begin(Isolation::ReadCommitted, false);
        eng.start_statement(&txn);
        let rows: Vec<_> = eng.scan(&txn, &table).map(|r| r.unwrap()).collect();
        for (r, row) in rows {
            let new = [row[0].clone(), Datum::Text(format!("round {round}"))];
            assert!(matches!(
                eng.update(&txn, &table, r, &new, &mut WriteState::default())
                    .unwrap(),
                Write::Done(_)
            ));
        }
        rt.block_on(eng.commit(txn, true)).unwrap();
    }
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let rows: Vec<_> = eng.scan(&txn, &table).map(|r| r.unwrap()).collect();
    for (r, row) in rows {
        let new = [row[0].clone(), Datum::Text("aborted".into())];
        eng.update(&txn, &table, r, &new, &mut WriteState::default())
            .unwrap();
    }
    eng.rollback(txn);

    let rows = all_rows(&eng, &table);
    assert_eq!(rows.len(), 2000);
    assert!(
        rows.iter()
            .all(|(_, r)| r[1] == Datum::Text("round 1".into()))
    );

    // A copy of the live directory is what a crash would leave: recovery must rebuild it.
    let crash = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), crash.path());
    let eng2 = Engine::open(crash.path(), &settings()).unwrap();
    let table2 = eng2.catalog().table("t").unwrap().clone();
    let rows = all_rows(&eng2, &table2);
    assert_eq!(rows.len(), 2000);
    assert!(
        rows.iter()
            .all(|(_, r)| r[1] == Datum::Text("round 1".into()))
    );
    eng2.shutdown();

    // Vacuum reclaims the dead versions; the rows stay.
    let stats = eng.vacuum(&table, &|| Ok(())).unwrap();
    assert!(stats.removed_versions >= 2000, "{stats:?}");
    assert_eq!(all_rows(&eng, &table).len(), 2000);
    eng.shutdown();
    eng.release_data_dir();
    let eng3 = Engine::open(dir.path(), &settings()).unwrap();
    let table3 = eng3.catalog().table("t").unwrap().clone();
    assert_eq!(all_rows(&eng3, &table3).len(), 2000);
    eng3.shutdown();
}

#[test]
fn unique_index_lookups_and_violations() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, index) = create_table(&eng, true);
    let index = index.unwrap();
    insert_rows(&eng, &table, 0..5000);
    let rt = rt();
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let err = eng
        .insert(
            &txn,
            &table,
            &[Datum::Int4(42), Datum::Null],
            &mut WriteState::default(),
        )
        .unwrap_err();
    assert_eq!(err.code, "23505");
    eng.rollback(txn);

    let lookup = |eng: &Engine, k: i32| -> Vec<Vec<Datum>> {
        let txn = eng.begin(Isolation::ReadCommitted, true);
        eng.start_statement(&txn);
        let range = KeyRange {
            lower: Bound::Included(vec![Datum::Int4(k)]),
            upper: Bound::Included(vec![Datum::Int4(k)]),
        };
        let out = eng
            .index_scan(&txn, &table, &index, range)
            .map(|r| r.unwrap().1)
            .collect();
        eng.rollback(txn);
        out
    };
    assert_eq!(
        lookup(&eng, 4321),
        vec![vec![Datum::Int4(4321), Datum::Text("row 4321".into())]]
    );
    assert!(lookup(&eng, 9999).is_empty());

    // Finds the row with key `k` through the index and replaces it with `new`.
    let update_by_key = |k: i32, new: [Datum; 2]| {
        let txn = eng.begin(Isolation::ReadCommitted, false);
        eng.start_statement(&txn);
        let key = vec![Datum::Int4(k)];
        let range = KeyRange {
            lower: Bound::Included(key.clone()),
            upper: Bound::Included(key),
        };
        let (r, _) = eng
            .index_scan(&txn, &table, &index, range)
            .next()
            .unwrap()
            .unwrap();
        eng.update(&txn, &table, r, &new, &mut WriteState::default())
            .unwrap();
        rt.block_on(eng.commit(txn, true)).unwrap();
    };

    // Non-key update: found through the same index entry.
    update_by_key(7, [Datum::Int4(7), Datum::Text("seven".into())]);
    assert_eq!(
        lookup(&eng, 7),
        vec![vec![Datum::Int4(7), Datum::Text("seven".into())]]
    );

    // Key update: old key no longer finds it, new key does.
    update_by_key(8, [Datum::Int4(80000), Datum::Text("moved".into())]);
    assert!(lookup(&eng, 8).is_empty());
    assert_eq!(lookup(&eng, 80000).len(), 1);
    eng.shutdown();
}

/// Fair row locking: a writer that arrives when a row is free but another writer is queued
/// for it goes behind that writer instead of taking the row first.
#[test]
fn a_writer_arriving_after_a_queued_one_waits_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table(&eng, false);
    insert_rows(&eng, &table, 0..1);
    let rt = rt();
    let _in_runtime = rt.enter();
    let value = |s: &str| [Datum::Int4(0), Datum::Text(s.into())];
    let target = all_rows(&eng, &table)[0].0;
    let update = |txn: &mut keel_access::Transaction, at: RowRef, s: &str| {
        eng.update(txn, &table, at, &value(s), &mut WriteState::default())
            .unwrap()
    };

    let mut t1 = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&t1);
    assert!(matches!(update(&mut t1, target, "t1"), Write::Done(_)));

    // t2 finds the row held by t1: it takes its place in the row's queue and waits.
    let mut t2 = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&t2);
    let Write::Wait(w2) = update(&mut t2, target, "t2") else {
        panic!("t2 should wait for t1");
    };
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut wait2 = Box::pin(eng.wait(&t2, w2, std::future::pending()));
    assert!(wait2.as_mut().poll(&mut cx).is_pending());
    rt.block_on(eng.commit(t1, true)).unwrap();

    // The row is free now, but t3 arrived after t2 and must queue behind it.
    let mut t3 = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&t3);
    let t3_target = all_rows(&eng, &table)[0].0;
    let Write::Wait(w3) = update(&mut t3, t3_target, "t3") else {
        panic!("t3 took the row ahead of t2, which was queued for it");
    };

    // t2's wait ends with t1; it updates t1's version (READ COMMITTED) and commits.
    assert!(matches!(
        wait2.as_mut().poll(&mut cx),
        std::task::Poll::Ready(Ok(()))
    ));
    drop(wait2);
    let Write::Updated(newest) = update(&mut t2, target, "t2") else {
        panic!("t2 should find t1's newer version");
    };
    assert!(matches!(update(&mut t2, newest, "t2"), Write::Done(_)));
    rt.block_on(eng.commit(t2, true)).unwrap();

    // Then t3's turn comes, and it builds on t2's version.
    rt.block_on(eng.wait(&t3, w3, std::future::pending()))
        .unwrap();
    let mut at = t3_target;
    loop {
        match update(&mut t3, at, "t3") {
            Write::Done(_) => break,
            Write::Updated(r) => at = r,
            other => panic!("unexpected {other:?}"),
        }
    }
    rt.block_on(eng.commit(t3, true)).unwrap();
    assert_eq!(all_rows(&eng, &table)[0].1, value("t3").to_vec());
    eng.shutdown();
}

#[test]
fn a_spread_checkpoint_paces_its_writes_and_a_checkpoint_command_hurries_it() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table(&eng, false);
    insert_rows(&eng, &table, 0..3000);

    // checkpoint_timeout is 5 min: the spread checkpoint aims to write its pages over 4.5 min.
    let spread = {
        let eng = eng.clone();
        std::thread::spawn(move || {
            let t = std::time::Instant::now();
            eng.checkpoint_spread().unwrap();
            t.elapsed()
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        !spread.is_finished(),
        "a spread checkpoint wrote everything at once"
    );

    // CHECKPOINT waits for it, hurrying it, then runs its own.
    let t = std::time::Instant::now();
    eng.checkpoint().unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    let took = spread.join().unwrap();
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");

    // Shutdown hurries one too, and what it wrote survives a restart.
    insert_rows(&eng, &table, 3000..4000);
    let spread = {
        let eng = eng.clone();
        std::thread::spawn(move || eng.checkpoint_spread())
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t = std::time::Instant::now();
    eng.shutdown();
    spread.join().unwrap().unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    eng.release_data_dir();
    let eng2 = Engine::open(dir.path(), &settings()).unwrap();
    let table2 = eng2.catalog().table("t").unwrap().clone();
    assert_eq!(all_rows(&eng2, &table2).len(), 4000);
    eng2.shutdown();
}

fn insert_text(eng: &Engine, table: &TableDef, id: i32, len: usize) -> Result<(), String> {
    let rt = rt();
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let row = [Datum::Int4(id), Datum::Text("a".repeat(len))];
    match eng.insert(&txn, table, &row, &mut WriteState::default()) {
        Ok(Write::Done(_)) => {}
        Ok(other) => panic!("unexpected {other:?}"),
        Err(e) => {
            eng.rollback(txn);
            return Err(format!("{} {}", e.code, e.message));
        }
    }
    rt.block_on(eng.commit(txn, true)).unwrap();
    Ok(())
}

/// A row that cannot leave the fillfactor's reserve free on any page goes to an empty page
/// (it used to extend the file forever); one page per such row, as in PostgreSQL.
#[test]
fn rows_larger_than_the_fillfactor_allows_take_one_page_each() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, _) = create_table_ff(&eng, true, 10);
    insert_text(&eng, &table, 0, 0).unwrap();
    for i in 1..=20 {
        insert_text(&eng, &table, i, 1000).unwrap();
    }
    assert_eq!(all_rows(&eng, &table).len(), 21);
    // The first 1000-byte row shares the nearly empty first page with the small one.
    assert_eq!(eng.relation_size(table.relfile), 20 * 8192);
    // Largest and too large.
    insert_text(&eng, &table, 21, 8105).unwrap();
    assert_eq!(
        insert_text(&eng, &table, 22, 8106),
        Err("54000 row is too big: size 8161, maximum size 8160".to_string())
    );
    assert_eq!(all_rows(&eng, &table).len(), 22);
    assert_eq!(eng.relation_size(table.relfile), 21 * 8192);
}

/// An index scan that meets an entry whose row no longer holds its key removes it once no
/// snapshot can need it (stale.rs), and never while one can; a key given back is found again.
#[test]
fn stale_index_entries_are_removed_once_no_snapshot_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let eng = Engine::open(dir.path(), &settings()).unwrap();
    let (table, index) = create_table(&eng, true);
    let index = index.unwrap();
    insert_rows(&eng, &table, 0..100);
    let rt = rt();
    let range = |k: i32| KeyRange {
        lower: Bound::Included(vec![Datum::Int4(k)]),
        upper: Bound::Included(vec![Datum::Int4(k)]),
    };
    let lookup = |txn: &keel_access::Transaction, k: i32| -> Vec<Vec<Datum>> {
        eng.index_scan(txn, &table, &index, range(k))
            .map(|r| r.unwrap().1)
            .collect()
    };
    let fresh_lookup = |k: i32| {
        let txn = eng.begin(Isolation::ReadCommitted, true);
        eng.start_statement(&txn);
        let out = lookup(&txn, k);
        eng.rollback(txn);
        out
    };
    let set_key = |from: i32, to: i32| {
        let txn = eng.begin(Isolation::ReadCommitted, false);
        eng.start_statement(&txn);
        let (r, _) = eng
            .index_scan(&txn, &table, &index, range(from))
            .next()
            .unwrap()
            .unwrap();
        let row = [Datum::Int4(to), Datum::Text(format!("was {from}"))];
        eng.update(&txn, &table, r, &row, &mut WriteState::default())
            .unwrap();
        rt.block_on(eng.commit(txn, true)).unwrap();
    };
    let entries = || eng.index_entries(&table, &index).unwrap();
    assert_eq!(entries(), 100);

    // Key 8 moves to 800: the entry for 8 is stale, and no snapshot predates the move.
    set_key(8, 800);
    assert_eq!(entries(), 101);
    assert!(fresh_lookup(8).is_empty());
    assert_eq!(entries(), 100, "the stale entry of key 8 was not removed");
    // The row takes key 8 back: found again through a new entry.
    set_key(800, 8);
    assert_eq!(fresh_lookup(8).len(), 1);
    assert!(fresh_lookup(800).is_empty());
    assert_eq!(entries(), 100);

    // A snapshot older than the move keeps the old entry alive, and still finds the row.
    let old = eng.begin(Isolation::RepeatableRead, true);
    eng.start_statement(&old);
    assert_eq!(lookup(&old, 9).len(), 1);
    set_key(9, 900);
    assert!(fresh_lookup(9).is_empty());
    assert_eq!(
        entries(),
        101,
        "an entry an open snapshot needs was removed"
    );
    assert_eq!(
        lookup(&old, 9),
        vec![vec![Datum::Int4(9), Datum::Text("row 9".into())]]
    );
    eng.rollback(old);
    assert!(fresh_lookup(9).is_empty());
    assert_eq!(entries(), 100);
    eng.shutdown();
}
