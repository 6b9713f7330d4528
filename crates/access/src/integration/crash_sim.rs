//! Crash and fault tests of the engine on the simulated file system (`keel_storage::io::sim`):
//! - a power loss keeps every acknowledged commit and nothing else (unsynced writes lost,
//!   landed or torn, drawn from a seed);
//! - a page torn by a power loss is repaired by recovery from its full-page image;
//! - ENOSPC on relation extension is 53100; ENOSPC on the WAL is a PANIC; a start on the
//!   still-full disk fails without growing anything; once space is back, recovery succeeds
//!   with every acknowledged row;
//! - a failed fsync (WAL or checkpoint) is a PANIC and loses no acknowledged commit.
//!
//! Each scenario is driven by one thread from a seed; the engine's own threads (WAL writer,
//! checkpointer, autovacuum) run as usual, so a crash is taken only where the driver waits for
//! nothing (after a commit returned).

use keel_access::{Engine, Isolation, KeyRange, RowRef, Write, WriteState};
use keel_catalog::{IndexDef, TableDef};
use keel_common::Settings;
use keel_storage::PAGE_SIZE;
use keel_storage::io::Fs;
use keel_storage::io::sim::{Fault, Landing, Op, Rng, SimFs};
use keel_storage::wal::SEGMENT_SIZE;
use keel_types::Datum;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use super::common::{create_table_ff, rt};

const DATA: &str = "/keel";

type Model = BTreeMap<i32, String>;

/// A small buffer pool (pages are evicted, i.e. written, during the scenario) and no timed
/// checkpoint while it runs.
fn settings() -> Settings {
    let mut s = Settings::default();
    s.set("shared_buffers", "1MB", true).unwrap();
    s.set("checkpoint_timeout", "3600", true).unwrap();
    s.set("log_checkpoints", "off", true).unwrap();
    s
}

fn open(fs: &SimFs) -> keel_common::PgResult<Arc<Engine>> {
    Engine::open_on(Arc::new(fs.clone()), Path::new(DATA), &settings())
}

struct Db {
    eng: Arc<Engine>,
    table: Arc<TableDef>,
    index: Arc<IndexDef>,
}

impl Db {
    /// A fresh engine with table `t (id int4 primary key, v text)`.
    fn create(fs: &SimFs) -> Db {
        let eng = open(fs).unwrap();
        let (table, index) = create_table_ff(&eng, true, 100);
        let index = index.unwrap_or_else(|| panic!("no index"));
        Db { eng, table, index }
    }

    /// The engine recovered from `fs`.
    fn reopen(fs: &SimFs) -> Db {
        let eng = open(fs).unwrap_or_else(|e| panic!("recovery failed: {e}"));
        let cat = eng.catalog();
        let table = cat.table("t").unwrap().clone();
        let index = cat.indexes.values().next().unwrap().clone();
        Db { eng, table, index }
    }

    /// Every visible row, by a heap scan and by a full index scan; they must agree.
    fn rows(&self) -> Model {
        let txn = self.eng.begin(Isolation::ReadCommitted, true);
        self.eng.start_statement(&txn);
        let decode = |r: keel_common::PgResult<(RowRef, Vec<Datum>)>| match r {
            Ok((_, row)) => match (&row[0], &row[1]) {
                (Datum::Int4(id), Datum::Text(v)) => (*id, v.clone()),
                other => panic!("unexpected row {other:?}"),
            },
            Err(e) => panic!("scan: {e}"),
        };
        let heap: Model = self.eng.scan(&txn, &self.table).map(decode).collect();
        let all = KeyRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        };
        let by_index: Model = self
            .eng
            .index_scan(&txn, &self.table, &self.index, all)
            .map(decode)
            .collect();
        self.eng.rollback(txn);
        assert_eq!(heap.len(), by_index.len(), "heap and index disagree");
        assert!(heap == by_index, "heap and index disagree");
        heap
    }

    /// Visible rows with their row references.
    fn refs(&self, txn: &keel_access::Transaction) -> Vec<(RowRef, i32)> {
        self.eng
            .scan(txn, &self.table)
            .map(|r| {
                let (rr, row) = r.unwrap_or_else(|e| panic!("scan: {e}"));
                match row[0] {
                    Datum::Int4(id) => (rr, id),
                    _ => panic!("bad id"),
                }
            })
            .collect()
    }
}

fn value(rng: &mut Rng, id: i32) -> String {
    let len = 20 + rng.below(400) as usize;
    format!("{id}:{}", "abcdefghij".repeat(len / 10 + 1))[..len].to_string()
}

fn done<T: std::fmt::Debug>(w: keel_common::PgResult<Write<T>>) -> keel_common::PgResult<()> {
    match w? {
        Write::Done(_) => Ok(()),
        other => panic!("single-session scenario got {other:?}"),
    }
}

/// One transaction of random inserts, updates and deletes; committed (and applied to
/// `model`) or rolled back. Returns the first error, with the model unchanged.
fn random_txn(
    db: &Db,
    rng: &mut Rng,
    model: &mut Model,
    next_id: &mut i32,
) -> keel_common::PgResult<()> {
    let eng = &db.eng;
    let txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let mut after = model.clone();
    let refs = db.refs(&txn);
    // Rows this transaction changed: their references from the scan are stale.
    let mut touched = std::collections::HashSet::new();
    for _ in 0..1 + rng.below(40) {
        match rng.below(4) {
            0 | 1 => {
                let id = *next_id;
                *next_id += 1;
                let v = value(rng, id);
                let row = [Datum::Int4(id), Datum::Text(v.clone())];
                done(eng.insert(&txn, &db.table, &row, &mut WriteState::default()))?;
                after.insert(id, v);
            }
            2 if !refs.is_empty() => {
                let (rr, id) = refs[rng.below(refs.len() as u64) as usize];
                if touched.insert(id) {
                    let v = format!("u{}", value(rng, id));
                    let row = [Datum::Int4(id), Datum::Text(v.clone())];
                    done(eng.update(&txn, &db.table, rr, &row, &mut WriteState::default()))?;
                    after.insert(id, v);
                }
            }
            _ if !refs.is_empty() => {
                let (rr, id) = refs[rng.below(refs.len() as u64) as usize];
                if touched.insert(id) {
                    done(eng.delete(&txn, &db.table, rr))?;
                    after.remove(&id);
                }
            }
            _ => {}
        }
    }
    if rng.below(5) == 0 {
        eng.rollback(txn);
        return Ok(());
    }
    rt().block_on(eng.commit(txn, true))?;
    *model = after;
    Ok(())
}

/// Rows `ids` with `value`, in one committed transaction.
fn insert_committed(db: &Db, ids: std::ops::Range<i32>, len: usize) -> keel_common::PgResult<()> {
    let txn = db.eng.begin(Isolation::ReadCommitted, false);
    db.eng.start_statement(&txn);
    for id in ids {
        let row = [Datum::Int4(id), Datum::Text(format!("{id:>len$}"))];
        if let Err(e) = done(
            db.eng
                .insert(&txn, &db.table, &row, &mut WriteState::default()),
        ) {
            db.eng.rollback(txn);
            return Err(e);
        }
    }
    rt().block_on(db.eng.commit(txn, true))
}

/// Ends an engine whose disk was taken away (its world lives on, unseen).
fn abandon(db: Db) {
    db.eng.shutdown();
}

#[test]
fn a_power_loss_keeps_every_acknowledged_commit_and_nothing_else() {
    for seed in 1..=4u64 {
        let mut rng = Rng::new(seed);
        let mut fs = SimFs::new();
        let mut db = Db::create(&fs);
        let mut model = Model::new();
        let mut next_id = 1;
        for round in 0..3 {
            for step in 0..25 {
                random_txn(&db, &mut rng, &mut model, &mut next_id)
                    .unwrap_or_else(|e| panic!("seed {seed} round {round} step {step}: {e}"));
                if rng.below(12) == 0 {
                    db.eng.checkpoint().unwrap();
                }
            }
            // A transaction still running at the power loss: its rows must not survive.
            let open_txn = db.eng.begin(Isolation::ReadCommitted, false);
            db.eng.start_statement(&open_txn);
            for id in next_id..next_id + 30 {
                let row = [Datum::Int4(id), Datum::Text("in flight".into())];
                done(
                    db.eng
                        .insert(&open_txn, &db.table, &row, &mut WriteState::default()),
                )
                .unwrap();
            }
            next_id += 30;
            let after = fs.power_loss_seeded(seed * 100 + round);
            db.eng.rollback(open_txn);
            abandon(db);
            fs = after;
            db = Db::reopen(&fs);
            let got = db.rows();
            assert_eq!(
                got.len(),
                model.len(),
                "seed {seed} round {round}: row count after the power loss"
            );
            assert!(
                got == model,
                "seed {seed} round {round}: rows differ after the power loss"
            );
        }
        // The recovered engine works on: a clean shutdown and restart keep everything.
        random_txn(&db, &mut rng, &mut model, &mut next_id).unwrap();
        db.eng.shutdown();
        let db = Db::reopen(&fs);
        assert!(
            db.rows() == model,
            "seed {seed}: rows differ after a clean restart"
        );
        db.eng.shutdown();
    }
}

/// Blocks of `path` whose checksum does not verify.
fn torn_blocks(fs: &SimFs, path: &Path) -> usize {
    let data = fs.read(path).unwrap();
    data.chunks_exact(PAGE_SIZE)
        .enumerate()
        .filter(|(b, page)| {
            let page: &[u8; PAGE_SIZE] = (*page).try_into().unwrap();
            page.iter().any(|&x| x != 0) && !keel_storage::page::verify_checksum(page, *b as u32)
        })
        .count()
}

#[test]
fn a_page_torn_by_a_power_loss_is_repaired_from_its_full_page_image() {
    let fs = SimFs::new();
    let db = Db::create(&fs);
    insert_committed(&db, 0..3000, 300).unwrap();
    db.eng.checkpoint().unwrap();
    // Every page's first change after the checkpoint logs its full image; the buffer pool
    // (1 MB) cannot hold the grown table, so pages are written out (unsynced) meanwhile.
    let txn = db.eng.begin(Isolation::ReadCommitted, false);
    db.eng.start_statement(&txn);
    for (rr, id) in db.refs(&txn) {
        let row = [Datum::Int4(id), Datum::Text(format!("updated {id}"))];
        done(
            db.eng
                .update(&txn, &db.table, rr, &row, &mut WriteState::default()),
        )
        .unwrap();
    }
    rt().block_on(db.eng.commit(txn, true)).unwrap();
    // Power loss: every unsynced 8 kB page write of the table lands half (the first 4 kB).
    let heap = Path::new(DATA)
        .join("base")
        .join(db.table.relfile.to_string());
    let mut torn = 0;
    let after = fs.power_loss(|u| {
        if u.path == heap.as_path() && u.len == PAGE_SIZE {
            torn += 1;
            Landing::Torn(PAGE_SIZE / 2)
        } else {
            Landing::Lost
        }
    });
    abandon(db);
    assert!(torn > 0, "no page write was in flight at the power loss");
    let bad = torn_blocks(&after, &heap);
    assert!(bad > 0, "no torn page on disk ({torn} torn writes)");
    let db = Db::reopen(&after);
    let rows = db.rows();
    assert_eq!(rows.len(), 3000);
    assert!(rows.iter().all(|(id, v)| *v == format!("updated {id}")));
    // Recovery's checkpoint rewrote the repaired pages.
    assert_eq!(torn_blocks(&after, &heap), 0);
    db.eng.shutdown();
}

/// Waits (up to 5 s) until no segment is being created ahead: no temporary file in wal/.
fn wal_temp_gone(fs: &SimFs) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while fs
        .files_under(&Path::new(DATA).join("wal"))
        .iter()
        .any(|(p, _)| p.to_string_lossy().contains("xlogtemp"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "a WAL temporary file stayed for 5 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn after_enospc_a_start_on_the_full_disk_leaves_no_trace_and_recovery_succeeds_once_space_is_back()
{
    // Room for one WAL segment and about 2 MB more: the next segment cannot be created
    // ahead, and rows go in until the relation cannot be extended.
    let fs = SimFs::new();
    fs.set_capacity(Some(SEGMENT_SIZE + (2 << 20)));
    let db = Db::create(&fs);
    let mut acked = 0;
    let mut tries = 0;
    let err = loop {
        match insert_committed(&db, acked..acked + 100, 200) {
            Ok(()) => acked += 100,
            // The WAL writer's attempt to create the next segment ahead fills the disk with
            // its temporary file until it fails and removes it; a first batch that came
            // meanwhile found no room. Once that file is gone, the batch fits.
            Err(e) if acked == 0 && tries < 50 => {
                assert_eq!(e.code, "53100", "{e:?}");
                tries += 1;
                wal_temp_gone(&fs);
            }
            Err(e) => break e,
        }
    };
    // PostgreSQL's mdextend errors: ENOSPC, or a short write when part of a block fit.
    assert_eq!(err.code, "53100", "{err:?}");
    assert!(
        err.message.starts_with("could not extend file \"base/")
            && (err.message.ends_with("\": No space left on device")
                || err.message.contains("\": wrote only ")),
        "{err:?}"
    );
    assert_eq!(err.hint.as_deref(), Some("Check free disk space."));
    assert!(acked > 0);
    // A failed extension leaves no partial block behind.
    for (path, len) in fs.files_under(&Path::new(DATA).join("base")) {
        assert_eq!(
            len % PAGE_SIZE as u64,
            0,
            "{} is {len} bytes",
            path.display()
        );
    }
    // Reads still work on the full disk.
    assert_eq!(db.rows().len(), acked as usize);
    // The next WAL write finds no space: PANIC. (A DELETE needs no new page.)
    fs.fail(Op::Write, "/wal/", 0, Fault::NoSpace, true);
    let txn = db.eng.begin(Isolation::ReadCommitted, false);
    db.eng.start_statement(&txn);
    let (rr, _) = db.refs(&txn)[0];
    done(db.eng.delete(&txn, &db.table, rr)).unwrap();
    assert!(
        rt().block_on(db.eng.commit(txn, true)).is_err(),
        "a commit was acknowledged after the WAL write failed"
    );
    let panics = fs.panics();
    assert!(
        panics.iter().any(|p| p.contains("No space left on device")),
        "{panics:?}"
    );
    // The process dies; its disk keeps whatever it wrote (still full). The attempt to create
    // the next segment ahead failed and left nothing.
    let wal_files = |fs: &SimFs| fs.files_under(&Path::new(DATA).join("wal"));
    wal_temp_gone(&fs);
    assert_eq!(wal_files(&fs).len(), 1, "{:?}", wal_files(&fs));
    let disk = fs.crash();
    abandon(db);
    disk.set_capacity(Some(disk.used()));
    let files = disk.files_under(Path::new(DATA));
    let used = disk.used();
    let start = open(&disk);
    assert!(start.is_err(), "started on a full disk");
    assert_eq!(disk.used(), used, "a failed start changed the space in use");
    assert_eq!(
        disk.files_under(Path::new(DATA)),
        files,
        "a failed start changed files"
    );
    // A second attempt fails the same way (nothing was used up by the first).
    assert!(open(&disk).is_err());
    assert_eq!(disk.used(), used);

    disk.set_capacity(None);
    let db = Db::reopen(&disk);
    let rows = db.rows();
    assert_eq!(rows.len(), acked as usize);
    assert!(rows.keys().copied().eq(0..acked));
    insert_committed(&db, acked..acked + 100, 200).unwrap();
    db.eng.shutdown();
}

#[test]
fn a_failed_wal_fsync_panics_and_loses_no_acknowledged_commit() {
    let fs = SimFs::new();
    let db = Db::create(&fs);
    insert_committed(&db, 0..100, 50).unwrap();
    // The next fsync of the segment the commits go to fails: the kernel may have dropped
    // those writes. (Not any file under wal/: the writer may be syncing the next segment,
    // created ahead, whose failure only discards that file.)
    fs.fail(Op::Sync, "/wal/0000000000000000", 0, Fault::Io, false);
    let failed = insert_committed(&db, 100..200, 50);
    assert!(failed.is_err(), "acknowledged a commit whose fsync failed");
    assert!(fs.panics().iter().any(|p| p.contains("Input/output error")));
    // Nothing more is acknowledged after the PANIC, even though fsync works again.
    assert!(insert_committed(&db, 200..300, 50).is_err());
    let after = fs.power_loss_strict();
    abandon(db);
    let db = Db::reopen(&after);
    let ids: Vec<i32> = db.rows().into_keys().collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
    db.eng.shutdown();
}

#[test]
fn a_failed_fsync_of_a_relation_file_in_a_checkpoint_panics() {
    let fs = SimFs::new();
    let db = Db::create(&fs);
    insert_committed(&db, 0..2000, 100).unwrap();
    fs.fail(Op::Sync, "/base/", 0, Fault::Io, false);
    let r = db.eng.checkpoint();
    assert!(r.is_err(), "a checkpoint whose fsync failed completed");
    assert!(!fs.panics().is_empty(), "no PANIC for the failed fsync");
    // The control file still names the old redo point: recovery replays what the failed
    // fsync may have lost.
    let after = fs.power_loss_strict();
    abandon(db);
    let db = Db::reopen(&after);
    assert_eq!(db.rows().len(), 2000);
    db.eng.shutdown();
}
