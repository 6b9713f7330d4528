//! Helpers shared by the engine test files: a runtime for `commit`, and table `t (id int4,
//! v text)` with an optional unique index `t_pkey` on `id`.

use keel_access::{Engine, Isolation};
use keel_catalog::{ColumnDef, IndexDef, IndexMethod, Persistence, TableDef};
use keel_types::{SqlType, TypeId};
use std::sync::Arc;

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

pub fn create_table_ff(
    eng: &Engine,
    with_index: bool,
    fillfactor: u8,
) -> (Arc<TableDef>, Option<Arc<IndexDef>>) {
    let rt = rt();
    let mut txn = eng.begin(Isolation::ReadCommitted, false);
    eng.start_statement(&txn);
    let mut cat = (*txn.catalog(eng)).clone();
    cat.version += 1;
    let oid = cat.new_oid();
    let relfile = cat.new_oid();
    let table = Arc::new(TableDef {
        oid,
        name: "t".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: SqlType::new(TypeId::Int4),
                not_null: true,
                default: None,
            },
            ColumnDef {
                name: "v".into(),
                ty: SqlType::new(TypeId::Text),
                not_null: false,
                default: None,
            },
        ],
        relfile,
        persistence: Persistence::Permanent,
        fillfactor,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: vec![],
        partition: None,
    });
    eng.create_relfile(&txn, relfile, false).unwrap();
    cat.tables.insert(oid, table.clone());
    let mut index = None;
    if with_index {
        let ioid = cat.new_oid();
        let irel = cat.new_oid();
        let idx = Arc::new(IndexDef {
            parent: None,
            constraint: false,
            oid: ioid,
            name: "t_pkey".into(),
            table: oid,
            columns: vec![0],
            unique: true,
            primary: true,
            method: IndexMethod::Btree,
            relfile: irel,
            // int4_ops, as PostgreSQL records for an int4 column.
            opclasses: vec![1978],
        });
        eng.create_relfile(&txn, irel, false).unwrap();
        eng.build_index(&txn, &table, &idx, &|| Ok(())).unwrap();
        cat.indexes.insert(ioid, idx.clone());
        index = Some(idx);
    }
    txn.pending_catalog = Some(Arc::new(cat));
    rt.block_on(eng.commit(txn, true)).unwrap();
    (table, index)
}
