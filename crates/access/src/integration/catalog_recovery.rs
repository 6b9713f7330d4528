//! The catalog survives crashes through its deltas: random DDL (create tables with indexes,
//! alter, rename, drop tables and indexes, sequences), acknowledged one transaction at a time
//! with checkpoints in between, then a power loss or a process kill (simulated file system).
//! The recovered catalog must equal the last one installed before the crash, which the
//! in-flight DDL transaction at the crash must not have changed.

use keel_access::{Engine, Isolation, Transaction};
use keel_catalog::{Catalog, ColumnDef, IndexDef, IndexMethod, Persistence, SequenceDef, TableDef};
use keel_common::Settings;
use keel_storage::io::sim::{Rng, SimFs};
use keel_types::{SqlType, TypeId};
use std::path::Path;
use std::sync::Arc;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const DATA: &str = "/keel";

fn open(fs: &SimFs) -> Arc<Engine> {
    let mut s = Settings::default();
    s.set("shared_buffers", "1MB", true).unwrap();
    s.set("checkpoint_timeout", "3600", true).unwrap();
    s.set("log_checkpoints", "off", true).unwrap();
    Engine::open_on(Arc::new(fs.clone()), Path::new(DATA), &s)
        .unwrap_or_else(|e| panic!("recovery failed: {e}"))
}

fn column(name: &str, ty: TypeId) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: SqlType::new(ty),
        not_null: false,
        default: None,
    }
}

/// One DDL transaction, as keel-sql runs them: clone, bump the version, change, install.
fn ddl(eng: &Engine, change: impl FnOnce(&Engine, &mut Transaction, &mut Catalog)) -> Transaction {
    let mut txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let mut cat = (*txn.catalog(eng)).clone();
    cat.version += 1;
    change(eng, &mut txn, &mut cat);
    txn.pending_catalog = Some(Arc::new(cat));
    txn
}

fn create_table(eng: &Engine, txn: &mut Transaction, cat: &mut Catalog, n: u32) {
    let oid = cat.new_oid();
    let relfile = cat.new_oid();
    let table = Arc::new(TableDef {
        oid,
        name: format!("t{n}"),
        columns: vec![column("id", TypeId::Int4), column("v", TypeId::Text)],
        relfile,
        persistence: Persistence::Permanent,
        fillfactor: 100,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: vec![],
        partition: None,
    });
    eng.create_relfile(txn, relfile, false).unwrap();
    cat.tables.insert(oid, table.clone());
    for (i, col) in [(0usize, "pkey"), (1, "v_idx")] {
        let ioid = cat.new_oid();
        let irel = cat.new_oid();
        let idx = Arc::new(IndexDef {
            parent: None,
            constraint: false,
            oid: ioid,
            name: format!("t{n}_{col}"),
            table: oid,
            columns: vec![i],
            unique: i == 0,
            primary: i == 0,
            method: IndexMethod::Btree,
            relfile: irel,
            opclasses: vec![],
        });
        eng.create_relfile(txn, irel, false).unwrap();
        eng.build_index(txn, &table, &idx, &|| Ok(())).unwrap();
        cat.indexes.insert(ioid, idx);
    }
    let soid = cat.new_oid();
    cat.sequences.insert(
        soid,
        Arc::new(SequenceDef {
            oid: soid,
            name: format!("t{n}_id_seq"),
            start: 1,
            increment: 1,
            min: 1,
            max: i64::MAX,
            cycle: false,
            owned_by: Some((oid, 0)),
        }),
    );
}

fn drop_table(eng: &Engine, txn: &mut Transaction, cat: &mut Catalog, oid: u32) {
    if let Some(t) = cat.tables.remove(&oid) {
        eng.drop_relfile_at_commit(txn, t.relfile);
    }
    let idx: Vec<u32> = cat.indexes_of(oid).map(|i| i.oid).collect();
    for i in idx {
        if let Some(ix) = cat.indexes.remove(&i) {
            eng.drop_relfile_at_commit(txn, ix.relfile);
        }
    }
    let seqs: Vec<u32> = cat.sequences_of(oid).map(|s| s.oid).collect();
    for s in seqs {
        cat.sequences.remove(&s);
    }
}

/// A random DDL change of `cat`; `n` numbers new names.
fn random_change(
    eng: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    rng: &mut Rng,
    n: &mut u32,
) {
    let tables: Vec<u32> = cat.tables.keys().copied().collect();
    let pick = |rng: &mut Rng| tables[rng.below(tables.len() as u64) as usize];
    match rng.below(6) {
        _ if tables.is_empty() => {
            *n += 1;
            create_table(eng, txn, cat, *n);
        }
        0 | 1 => {
            *n += 1;
            create_table(eng, txn, cat, *n);
        }
        2 => {
            // ALTER TABLE ADD COLUMN
            let t = cat.tables.get(&pick(rng)).unwrap().clone();
            let mut nt = (*t).clone();
            nt.columns
                .push(column(&format!("c{}", nt.columns.len()), TypeId::Int8));
            cat.tables.insert(nt.oid, Arc::new(nt));
        }
        3 => {
            // ALTER TABLE RENAME
            let t = cat.tables.get(&pick(rng)).unwrap().clone();
            let mut nt = (*t).clone();
            *n += 1;
            nt.name = format!("r{n}");
            cat.tables.insert(nt.oid, Arc::new(nt));
        }
        4 => {
            // DROP INDEX (the non-unique one, if still there)
            let t = pick(rng);
            let victim = cat.indexes_of(t).find(|i| !i.unique).map(|i| i.oid);
            if let Some(i) = victim
                && let Some(ix) = cat.indexes.remove(&i)
            {
                eng.drop_relfile_at_commit(txn, ix.relfile);
            }
        }
        _ => drop_table(eng, txn, cat, pick(rng)),
    }
}

fn scenario(seed: u64, power_loss: bool) {
    let mut rng = Rng::new(seed);
    let mut fs = SimFs::new();
    let mut eng = open(&fs);
    let mut n = 0;
    for round in 0..3 {
        for step in 0..30 {
            let txn = ddl(&eng, |eng, txn, cat| {
                for _ in 0..1 + rng.below(3) {
                    random_change(eng, txn, cat, &mut rng, &mut n);
                }
            });
            if rng.below(6) == 0 {
                eng.rollback(txn);
                continue;
            }
            // Changes that create or drop no relation file (ALTER, RENAME) commit without an
            // xid (`install_catalog`); the others with one: both paths log deltas.
            rt().block_on(eng.commit(txn, true))
                .unwrap_or_else(|e| panic!("seed {seed} round {round} step {step}: {e}"));
            if rng.below(10) == 0 {
                eng.checkpoint().unwrap();
            }
        }
        let before = eng.catalog();
        assert!(!before.tables.is_empty(), "the scenario made no tables");
        // A DDL transaction in flight at the crash: its changes must not survive.
        let open_txn = ddl(&eng, |eng, txn, cat| {
            n += 1;
            create_table(eng, txn, cat, n);
        });
        let after = if power_loss {
            fs.power_loss_seeded(seed * 100 + round)
        } else {
            fs.crash()
        };
        eng.rollback(open_txn);
        eng.shutdown();
        fs = after;
        eng = open(&fs);
        let got = eng.catalog();
        assert!(
            *got == *before,
            "seed {seed} round {round}: the recovered catalog differs\nbefore: {before:?}\nafter: {got:?}"
        );
        for t in got.tables.values() {
            assert!(
                got.table(&t.name).is_ok(),
                "table {} not found by name",
                t.name
            );
            for i in got.indexes_of(t.oid) {
                assert_eq!(i.table, t.oid);
            }
        }
    }
    // A clean restart keeps it too.
    let before = eng.catalog();
    eng.shutdown();
    let eng = open(&fs);
    assert!(
        *eng.catalog() == *before,
        "seed {seed}: differs after a clean restart"
    );
    eng.shutdown();
}

#[test]
fn ddl_survives_a_power_loss() {
    for seed in 1..=3 {
        scenario(seed, true);
    }
}

#[test]
fn ddl_survives_a_process_kill() {
    for seed in 11..=13 {
        scenario(seed, false);
    }
}

/// A commit record logs only the DDL's own changes: creating one table among many logs the
/// same few entries as creating it alone.
#[test]
fn a_commit_logs_only_its_delta() {
    let fs = SimFs::new();
    let eng = open(&fs);
    let mut n = 0;
    let txn = ddl(&eng, |eng, txn, cat| {
        for _ in 0..200 {
            n += 1;
            create_table(eng, txn, cat, n);
        }
    });
    rt().block_on(eng.commit(txn, true)).unwrap();
    let installed = eng.catalog();
    assert!(
        !installed.has_changes(),
        "the installed catalog keeps no change set"
    );
    let mut cat = (*installed).clone();
    cat.version += 1;
    let mut txn = eng.begin(Isolation::ReadCommitted, false);
    n += 1;
    create_table(&eng, &mut txn, &mut cat, n);
    let d = cat.delta();
    assert_eq!(
        (d.tables.len(), d.indexes.len(), d.sequences.len()),
        (1, 2, 1)
    );
    assert!(d.dropped_tables.is_empty() && d.dropped_indexes.is_empty());
    eng.rollback(txn);
    eng.shutdown();
}
