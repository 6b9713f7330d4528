//! What DDL pays to copy the catalog, and what a row write pays to find its table's indexes,
//! at 10 and 10,000 tables of 2 indexes each: `cargo run --release -p keel-catalog --example
//! clone_cost`. Beside it, the same with the `BTreeMap`s the catalog used before (a clone
//! copies every node and bumps every entry's reference count; `indexes_of` filters all
//! indexes).

use keel_catalog::{Catalog, ColumnDef, IndexDef, IndexMethod, Persistence, TableDef};
use keel_types::{SqlType, TypeId};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

fn build(n: u32) -> Catalog {
    let mut cat = Catalog::default();
    for k in 0..n {
        let oid = cat.new_oid();
        let relfile = cat.new_oid();
        let t = TableDef {
            oid,
            name: format!("t{k}"),
            columns: vec![ColumnDef {
                name: "id".into(),
                ty: SqlType::new(TypeId::Int4),
                not_null: true,
                default: None,
            }],
            relfile,
            persistence: Persistence::Permanent,
            fillfactor: 100,
            foreign_keys: vec![],
            checks: vec![],
            identity_always: vec![],
            triggers: vec![],
            partition: None,
        };
        cat.tables.insert(oid, Arc::new(t));
        for j in 0..2 {
            let ioid = cat.new_oid();
            let irel = cat.new_oid();
            let i = IndexDef {
                parent: None,
                constraint: false,
                oid: ioid,
                name: format!("t{k}_i{j}"),
                table: oid,
                columns: vec![0],
                unique: j == 0,
                primary: j == 0,
                method: IndexMethod::Btree,
                relfile: irel,
                opclasses: vec![],
            };
            cat.indexes.insert(ioid, Arc::new(i));
        }
    }
    cat.clear_changes();
    cat
}

fn per_op(iters: u32, mut f: impl FnMut(u32)) -> f64 {
    let t = Instant::now();
    for i in 0..iters {
        f(i);
    }
    t.elapsed().as_nanos() as f64 / iters as f64
}

fn main() {
    for n in [10u32, 10_000] {
        let cat = build(n);
        let first = cat.tables.keys().next().copied().unwrap_or(0);
        let clone_ns = per_op(2000, |_| {
            black_box(cat.clone());
        });
        // A CREATE TABLE's catalog work: clone, name check, add a table and two indexes.
        let ddl_ns = per_op(2000, |i| {
            let mut c = cat.clone();
            let name = format!("new{i}");
            black_box(c.name_taken(&name));
            let t = (**cat.tables.get(&first).unwrap()).clone();
            let oid = c.new_oid();
            c.tables.insert(oid, Arc::new(TableDef { oid, name, ..t }));
            black_box(c.delta().to_bytes());
        });
        let lookup_ns = per_op(100_000, |i| {
            black_box(cat.table(&format!("t{}", i % n)).is_ok());
        });
        let idx_ns = per_op(100_000, |_| {
            black_box(cat.indexes_of(first).count());
        });
        // The former representation.
        let tables: BTreeMap<_, _> = cat.tables.iter().map(|(k, v)| (*k, v.clone())).collect();
        let indexes: BTreeMap<_, _> = cat.indexes.iter().map(|(k, v)| (*k, v.clone())).collect();
        let old_clone_ns = per_op(200, |_| {
            black_box((tables.clone(), indexes.clone()));
        });
        let old_idx_ns = per_op(200, |_| {
            black_box(indexes.values().filter(|i| i.table == first).count());
        });
        let full_json = cat.to_bytes().len();
        println!(
            "tables={n:>6}: clone {clone_ns:>8.0} ns (BTreeMap {old_clone_ns:>10.0} ns), \
             create-table catalog work {ddl_ns:>8.0} ns, table by name {lookup_ns:>6.0} ns, \
             indexes_of {idx_ns:>6.0} ns (filter {old_idx_ns:>10.0} ns), \
             whole catalog JSON {full_json} bytes"
        );
    }
}
