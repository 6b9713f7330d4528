//! The catalog's maps: lookups by name, oid and owner stay consistent through inserts,
//! replacements (renames, moves) and removals; deltas replay to the same catalog; the JSON
//! form is the one older catalogs have.

use keel_catalog::{
    Catalog, ColumnDef, IndexDef, IndexMethod, Persistence, Relation, SequenceDef, TableDef,
};
use keel_types::{SqlType, TypeId};
use std::sync::Arc;

fn table(cat: &mut Catalog, name: &str) -> Arc<TableDef> {
    let oid = cat.new_oid();
    let relfile = cat.new_oid();
    let t = Arc::new(TableDef {
        oid,
        name: name.into(),
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
    });
    cat.tables.insert(oid, t.clone());
    t
}

fn index(cat: &mut Catalog, t: &TableDef, name: &str) -> Arc<IndexDef> {
    let oid = cat.new_oid();
    let relfile = cat.new_oid();
    let i = Arc::new(IndexDef {
        parent: None,
        constraint: false,
        oid,
        name: name.into(),
        table: t.oid,
        columns: vec![0],
        unique: false,
        primary: false,
        method: IndexMethod::Btree,
        relfile,
        opclasses: vec![],
    });
    cat.indexes.insert(oid, i.clone());
    i
}

fn sequence(cat: &mut Catalog, name: &str, owner: Option<u32>) -> Arc<SequenceDef> {
    let oid = cat.new_oid();
    let s = Arc::new(SequenceDef {
        oid,
        name: name.into(),
        start: 1,
        increment: 1,
        min: 1,
        max: i64::MAX,
        cycle: false,
        owned_by: owner.map(|o| (o, 0)),
    });
    cat.sequences.insert(oid, s.clone());
    s
}

#[test]
fn lookups_follow_renames_moves_and_drops() {
    let mut cat = Catalog::default();
    let a = table(&mut cat, "a");
    let b = table(&mut cat, "b");
    let ai = index(&mut cat, &a, "a_idx");
    let bi = index(&mut cat, &b, "b_idx");
    let s = sequence(&mut cat, "a_id_seq", Some(a.oid));
    assert!(matches!(cat.relation("a"), Some(Relation::Table(t)) if t.oid == a.oid));
    assert!(matches!(cat.relation("b_idx"), Some(Relation::Index(i)) if i.oid == bi.oid));
    assert!(matches!(cat.relation("a_id_seq"), Some(Relation::Sequence(q)) if q.oid == s.oid));
    assert_eq!(
        cat.indexes_of(a.oid).map(|i| i.oid).collect::<Vec<_>>(),
        [ai.oid]
    );
    assert_eq!(cat.sequences_of(a.oid).count(), 1);

    // Rename a: the old name is free, the new one found.
    let mut na = (*a).clone();
    na.name = "a2".into();
    cat.tables.insert(a.oid, Arc::new(na));
    assert!(cat.relation("a").is_none() && !cat.name_taken("a"));
    assert_eq!(cat.table("a2").map(|t| t.oid).ok(), Some(a.oid));
    assert_eq!(cat.choose_name("a2"), "a21");

    // An index that moves to another table (never done by DDL, but the map must follow).
    let mut moved = (*ai).clone();
    moved.table = b.oid;
    cat.indexes.insert(ai.oid, Arc::new(moved));
    assert_eq!(cat.indexes_of(a.oid).count(), 0);
    assert_eq!(
        cat.indexes_of(b.oid).map(|i| i.oid).collect::<Vec<_>>(),
        [ai.oid, bi.oid]
    );

    cat.indexes.remove(&bi.oid);
    cat.sequences.retain(|_, q| q.owned_by.is_none());
    assert!(cat.relation("b_idx").is_none() && cat.sequence_by_name("a_id_seq").is_none());
    assert_eq!(cat.sequences_of(a.oid).count(), 0);
    assert_eq!(cat.indexes_of(b.oid).count(), 1);
    assert_eq!(cat.table("nope").map_err(|e| e.code).err(), Some("42P01"));
}

#[test]
fn a_clone_is_independent_of_its_original() {
    let mut cat = Catalog::default();
    let a = table(&mut cat, "a");
    let snapshot = cat.clone();
    index(&mut cat, &a, "a_idx");
    cat.tables.remove(&a.oid);
    assert!(snapshot.table("a").is_ok() && snapshot.indexes.is_empty());
    assert!(cat.table("a").is_err() && cat.indexes.len() == 1);
}

#[test]
fn deltas_replay_to_the_same_catalog() {
    // A base catalog, installed (change sets cleared).
    let mut base = Catalog::default();
    let a = table(&mut base, "a");
    index(&mut base, &a, "a_idx");
    let gone = table(&mut base, "gone");
    base.clear_changes();

    // One DDL transaction: create, alter, drop.
    let mut next = base.clone();
    next.version += 1;
    let c = table(&mut next, "c");
    index(&mut next, &c, "c_idx");
    sequence(&mut next, "c_id_seq", Some(c.oid));
    let mut na = (*a).clone();
    na.fillfactor = 50;
    next.tables.insert(a.oid, Arc::new(na));
    next.tables.remove(&gone.oid);
    let t = table(&mut next, "temp");
    next.tables.remove(&t.oid);

    let d = next.delta();
    assert_eq!(d.tables.len(), 2, "c and the altered a");
    assert_eq!(
        d.dropped_tables.len(),
        2,
        "gone, and temp (never in the base)"
    );

    // Through its bytes, replayed on the base: the same catalog.
    let d = keel_catalog::CatalogDelta::from_bytes(&d.to_bytes()).unwrap();
    let mut replayed = base.clone();
    assert!(replayed.apply_delta(&d).unwrap());
    assert!(replayed == next);
    assert_eq!(replayed.indexes_of(c.oid).count(), 1);
    assert!(replayed.table("gone").is_err());
    // Already contained: skipped.
    assert!(!replayed.apply_delta(&d).unwrap());
    assert!(replayed == next);
    // A gap is corruption.
    let mut gap = d.clone();
    gap.version += 5;
    assert_eq!(
        replayed.apply_delta(&gap).map_err(|e| e.code).err(),
        Some("XX001")
    );
}

#[test]
fn json_keeps_the_older_form() {
    let mut cat = Catalog::default();
    let a = table(&mut cat, "a");
    index(&mut cat, &a, "a_idx");
    let json: serde_json::Value = serde_json::from_slice(&cat.to_bytes()).unwrap();
    // Maps oid -> entry, as when the catalog held BTreeMaps.
    assert_eq!(json["tables"][a.oid.to_string()]["name"], "a");
    assert_eq!(json["indexes"].as_object().map(|o| o.len()), Some(1));
    let back = Catalog::from_bytes(&cat.to_bytes()).unwrap();
    assert!(back == cat);
    assert!(!back.has_changes());
    assert_eq!(back.indexes_of(a.oid).count(), 1);
    assert!(back.relation("a_idx").is_some());
}

/// Two transactions clone the same installed catalog; the second to commit is rebased onto
/// the first's: both changes survive, oids never collide, a name both created fails.
#[test]
fn a_pending_catalog_rebases_onto_what_was_installed_since() {
    let mut base = Catalog::default();
    table(&mut base, "x");
    base.clear_changes();
    let (mut t1, mut t2) = (base.clone(), base.clone());
    t1.version += 1;
    t2.version += 1;
    let a = table(&mut t1, "a");
    let b = table(&mut t2, "b");
    assert_ne!(a.oid, b.oid, "clones share the oid allocator");
    assert!(a.relfile != b.relfile && a.relfile != b.oid && b.relfile != a.oid);
    // t2 installs first; t1 follows it.
    let mut installed = t2.clone();
    installed.clear_changes();
    let rebased = t1.rebased_onto(&installed).expect("no conflict");
    assert_eq!(rebased.version, installed.version + 1);
    assert!(rebased.table_by_name("a").is_some() && rebased.table_by_name("b").is_some());
    assert!(rebased.table_by_name("x").is_some());
    let d = rebased.delta();
    assert_eq!(
        d.tables.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    // The same name created by both: the later one fails as CREATE TABLE would.
    let mut t3 = base.clone();
    t3.version += 1;
    table(&mut t3, "b");
    let e = t3.rebased_onto(&installed).expect_err("b exists");
    assert_eq!(e.code, "42P07");
}
