//! The access-method contract as tests, run against every method: each `#[test]` at the end
//! calls one check with each method of pg_am (`ACCESS_METHODS`), so a new method is under
//! test as soon as it is listed, and must pass them all (checks for capabilities it lacks are
//! skipped by the check itself).
//!
//! The checks drive an index through the traits alone, on real storage (temp dir, WAL, buffer
//! pool), with table `t (k int4, v text)` and the expected results computed from a plain list.

use super::{
    AmIndex, BuildResult, BuildTuple, CostInput, CostParams, Existing, IndexAm, IndexRelation,
    InsertResult, ScanKey,
};
use crate::api::KeyRange;
use keel_catalog::am::{
    ACCESS_METHODS, BT_EQUAL, BT_GREATER, BT_GREATER_EQUAL, BT_LESS, BT_LESS_EQUAL, default_opclass,
};
use keel_catalog::{ColumnDef, IndexDef, IndexMethod, Persistence, TableDef};
use keel_common::{PgResult, Tid};
use keel_storage::BufferPool;
use keel_storage::smgr::{RelFile, Smgr};
use keel_storage::wal::{FIRST_LSN, Wal};
use keel_types::{Datum, SqlType, TypeId};
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

const REL: u32 = 16400;

struct Env {
    dir: tempfile::TempDir,
    /// WAL of the current pool: a fresh directory per `reopen`.
    _wal_dir: tempfile::TempDir,
    pool: Arc<BufferPool>,
    file: Arc<RelFile>,
    table: TableDef,
    index: IndexDef,
}

fn column(name: &str, ty: TypeId) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: SqlType::new(ty),
        not_null: false,
        default: None,
    }
}

/// An empty index relation of method `m` on `t (k int4, v text)`, over `columns`.
fn env(m: IndexMethod, columns: Vec<usize>, unique: bool) -> Env {
    let table = TableDef {
        oid: 16384,
        name: "t".into(),
        columns: vec![column("k", TypeId::Int4), column("v", TypeId::Text)],
        relfile: 16385,
        persistence: Persistence::Permanent,
        fillfactor: 100,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: vec![],
        partition: None,
    };
    let opclasses = columns
        .iter()
        .map(|&c| default_opclass(m, table.columns[c].ty.id).unwrap().oid)
        .collect();
    let index = IndexDef {
        parent: None,
        constraint: false,
        oid: 16386,
        name: "t_idx".into(),
        table: table.oid,
        columns,
        unique,
        primary: false,
        method: m,
        relfile: REL,
        opclasses,
    };
    let dir = tempfile::tempdir().unwrap();
    let wal_dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path()).unwrap());
    let wal = Wal::open(wal_dir.path(), FIRST_LSN, 0, false).unwrap();
    let pool = Arc::new(BufferPool::new(smgr.clone(), wal, 64));
    let file = smgr.open(REL, true).unwrap();
    Env {
        dir,
        _wal_dir: wal_dir,
        pool,
        file,
        table,
        index,
    }
}

impl Env {
    fn am(&self) -> &'static dyn IndexAm {
        super::method(self.index.method)
    }

    fn open(&self) -> Box<dyn AmIndex<'_> + '_> {
        self.am().open(IndexRelation {
            pool: &self.pool,
            file: self.file.clone(),
            table: &self.table,
            index: &self.index,
        })
    }

    /// Writes every page, then opens the relation again with a new pool and log, as a restart
    /// after a checkpoint does.
    fn reopen(&mut self) {
        self.pool.flush_all().unwrap();
        let smgr = Arc::new(Smgr::new(self.dir.path()).unwrap());
        let wal_dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(wal_dir.path(), FIRST_LSN, 0, false).unwrap();
        self.pool = Arc::new(BufferPool::new(smgr.clone(), wal, 64));
        self.file = smgr.open(REL, false).unwrap();
        self._wal_dir = wal_dir;
    }
}

/// Row `n`: key `n % 500`, text `v<n % 37>`, at root tid n.
fn row(n: u32) -> (Tid, Vec<Datum>) {
    (
        Tid::new(n / 100 + 1, (n % 100) as u16),
        vec![
            Datum::Int4((n % 500) as i32),
            Datum::Text(format!("v{}", n % 37)),
        ],
    )
}

fn key_of(index: &IndexDef, values: &[Datum]) -> Vec<Datum> {
    index.columns.iter().map(|&c| values[c].clone()).collect()
}

/// Rows 0..n in a scrambled order.
fn scrambled(n: u32) -> impl Iterator<Item = u32> {
    (0..n).map(move |i| (i as u64 * 7919 % n as u64) as u32)
}

fn no_unique(_: &[Datum], _: Tid) -> PgResult<Existing> {
    unreachable!("no unique check expected")
}

fn build_rows(e: &Env, n: u32) -> BuildResult {
    let idx = e.open();
    let mut tuples = scrambled(n).map(|i| {
        let (tid, values) = row(i);
        Ok(BuildTuple {
            tid,
            key: key_of(&e.index, &values),
            unique: false,
        })
    });
    idx.build(1, &mut tuples, &mut no_unique, &|| Ok(()))
        .unwrap()
}

/// Every root an ordered scan of `range` returns, each checked with `recheck` against the
/// key it was stored under.
fn scan(e: &Env, range: KeyRange, keys: &HashMap<Tid, Vec<Datum>>) -> Vec<Tid> {
    let idx = e.open();
    let mut s = idx.scan(&range).unwrap();
    let mut out = Vec::new();
    while let Some(t) = s.next().unwrap() {
        assert!(s.recheck(&keys[&t]), "entry of {t} does not recheck");
        out.push(t);
    }
    out
}

fn keys_by_root(e: &Env, n: u32) -> HashMap<Tid, Vec<Datum>> {
    (0..n)
        .map(|i| {
            let (tid, values) = row(i);
            (tid, key_of(&e.index, &values))
        })
        .collect()
}

fn int_range(lower: Bound<i32>, upper: Bound<i32>) -> KeyRange {
    let b = |x: Bound<i32>| match x {
        Bound::Included(v) => Bound::Included(vec![Datum::Int4(v)]),
        Bound::Excluded(v) => Bound::Excluded(vec![Datum::Int4(v)]),
        Bound::Unbounded => Bound::Unbounded,
    };
    KeyRange {
        lower: b(lower),
        upper: b(upper),
    }
}

/// Roots of rows 0..n whose key `k` satisfies `pred`, sorted by (k, tid) — index order.
fn expected(n: u32, pred: impl Fn(i32) -> bool) -> Vec<Tid> {
    let mut v: Vec<(i32, Tid)> = (0..n)
        .map(row)
        .filter_map(|(t, vals)| match vals[0] {
            Datum::Int4(k) if pred(k) => Some((k, t)),
            _ => None,
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, t)| t).collect()
}

fn sorted(mut v: Vec<Tid>) -> Vec<Tid> {
    v.sort();
    v
}

fn build_insert_scan(m: IndexMethod) {
    let e = env(m, vec![0], false);
    let caps = e.am().capabilities();
    let n = 3000;
    assert_eq!(build_rows(&e, n), BuildResult::Built { tuples: n as u64 });
    let idx = e.open();
    // Entries added after the build, and one offered twice (a no-op).
    for i in n..n + 500 {
        let (tid, values) = row(i);
        let key = key_of(&e.index, &values);
        assert_eq!(
            idx.insert(&key, tid, 2, None).unwrap(),
            InsertResult::Inserted
        );
    }
    let (tid, values) = row(7);
    idx.insert(&key_of(&e.index, &values), tid, 2, None)
        .unwrap();
    let total = n + 500;
    assert_eq!(idx.count().unwrap(), total as u64);
    let keys = keys_by_root(&e, total);
    if caps.has_ordered_scan {
        let all = expected(total, |_| true);
        let got = scan(&e, int_range(Bound::Unbounded, Bound::Unbounded), &keys);
        if caps.can_order {
            assert_eq!(got, all);
        } else {
            assert_eq!(sorted(got), sorted(all));
        }
        for (lo, hi) in [
            (Bound::Included(42), Bound::Included(42)),
            (Bound::Included(10), Bound::Excluded(20)),
            (Bound::Excluded(10), Bound::Included(20)),
            (Bound::Excluded(498), Bound::Unbounded),
            (Bound::Unbounded, Bound::Excluded(3)),
            (Bound::Included(600), Bound::Unbounded),
        ] {
            let want = expected(total, |k| {
                (match lo {
                    Bound::Included(l) => k >= l,
                    Bound::Excluded(l) => k > l,
                    Bound::Unbounded => true,
                }) && (match hi {
                    Bound::Included(h) => k <= h,
                    Bound::Excluded(h) => k < h,
                    Bound::Unbounded => true,
                })
            });
            assert_eq!(scan(&e, int_range(lo, hi), &keys), want, "{lo:?}..{hi:?}");
        }
        // An entry does not recheck against another key (a stale entry).
        let mut s = idx
            .scan(&int_range(Bound::Included(5), Bound::Included(5)))
            .unwrap();
        assert!(s.next().unwrap().is_some());
        assert!(!s.recheck(&[Datum::Int4(6)]));
        assert!(s.recheck(&[Datum::Int4(5)]));
    }
    if caps.has_bitmap_scan {
        let key = |column, strategy, v| ScanKey {
            column,
            strategy,
            argument: Datum::Int4(v),
        };
        type Case = (Vec<ScanKey>, Box<dyn Fn(i32) -> bool>);
        let cases: Vec<Case> = vec![
            (vec![key(0, BT_EQUAL, 42)], Box::new(|k| k == 42)),
            (
                vec![key(0, BT_GREATER, 10), key(0, BT_LESS_EQUAL, 20)],
                Box::new(|k| k > 10 && k <= 20),
            ),
            (
                vec![key(0, BT_GREATER_EQUAL, 490), key(0, BT_LESS, 1000)],
                Box::new(|k| k >= 490),
            ),
            (vec![], Box::new(|_| true)),
        ];
        for (keys, pred) in cases {
            let got = idx.bitmap_scan(&keys).unwrap();
            assert_eq!(got, sorted(expected(total, pred)), "{keys:?}");
        }
        let null = ScanKey {
            column: 0,
            strategy: BT_EQUAL,
            argument: Datum::Null,
        };
        assert_eq!(idx.bitmap_scan(&[null]).unwrap(), vec![]);
    }
}

fn unique_checks(m: IndexMethod) {
    let e = env(m, vec![0], true);
    if !e.am().capabilities().can_unique {
        return;
    }
    let idx = e.open();
    idx.create_empty(1).unwrap();
    let k = |v| vec![Datum::Int4(v)];
    let a = Tid::new(1, 1);
    let b = Tid::new(1, 2);
    let c = Tid::new(1, 3);
    // The engine's verdict on each existing row; the row being inserted is never asked about.
    let verdicts: HashMap<Tid, Existing> =
        [(a, Existing::Live), (b, Existing::InProgress(77))].into();
    let mut asked = Vec::new();
    let mut check = |key: &[Datum], t: Tid| -> PgResult<Existing> {
        assert_eq!(key, &k(1)[..]);
        asked.push(t);
        Ok(verdicts.get(&t).copied().unwrap_or(Existing::Dead))
    };
    assert_eq!(
        idx.insert(&k(1), a, 2, Some(&mut check)).unwrap(),
        InsertResult::Inserted
    );
    assert_eq!(
        idx.insert(&k(1), a, 2, Some(&mut check)).unwrap(),
        InsertResult::Inserted
    );
    assert_eq!(
        idx.insert(&k(1), c, 2, Some(&mut check)).unwrap(),
        InsertResult::Duplicate(a)
    );
    assert_eq!(asked, vec![a]);
    // Row a's key is gone (dead); row b holds it in progress: wait for b's transaction.
    let mut check = |_: &[Datum], t: Tid| -> PgResult<Existing> {
        Ok(if t == b {
            Existing::InProgress(77)
        } else {
            Existing::Dead
        })
    };
    assert_eq!(
        idx.insert(&k(1), b, 3, Some(&mut check)).unwrap(),
        InsertResult::Inserted
    );
    assert_eq!(
        idx.insert(&k(1), c, 4, Some(&mut check)).unwrap(),
        InsertResult::Wait(77)
    );
    // Nothing was inserted by the refused attempts.
    assert_eq!(idx.count().unwrap(), 2);

    // A unique build stops at the first key two live rows hold.
    let e = env(m, vec![0], true);
    let idx = e.open();
    let mut tuples = [(a, 5), (b, 6), (c, 5)].into_iter().map(|(t, v)| {
        Ok(BuildTuple {
            tid: t,
            key: k(v),
            unique: true,
        })
    });
    let mut live = |_: &[Datum], _: Tid| Ok(Existing::Live);
    assert_eq!(
        idx.build(1, &mut tuples, &mut live, &|| Ok(())).unwrap(),
        BuildResult::Duplicate(k(5))
    );
}

fn bulk_delete_and_reopen(m: IndexMethod) {
    let multi = e_multi(m);
    let mut e = env(m, if multi { vec![1, 0] } else { vec![0] }, false);
    let n = 4000;
    build_rows(&e, n);
    let dead = |t: Tid| t.slot.is_multiple_of(3);
    let interrupted = e
        .open()
        .bulk_delete(2, &dead, &|| Err(keel_common::PgError::internal("stop")));
    assert!(interrupted.is_err());
    assert_eq!(e.open().count().unwrap(), n as u64);
    let removed = e.open().bulk_delete(2, &dead, &|| Ok(())).unwrap();
    let survivors: Vec<Tid> = (0..n).map(|i| row(i).0).filter(|&t| !dead(t)).collect();
    assert_eq!(removed, (n as usize - survivors.len()) as u64);
    e.reopen();
    let idx = e.open();
    assert_eq!(idx.count().unwrap(), survivors.len() as u64);
    if e.am().capabilities().has_bitmap_scan {
        assert_eq!(idx.bitmap_scan(&[]).unwrap(), sorted(survivors.clone()));
    }
    // The reopened index takes new entries.
    let (tid, values) = row(n);
    idx.insert(&key_of(&e.index, &values), tid, 3, None)
        .unwrap();
    assert_eq!(idx.count().unwrap(), survivors.len() as u64 + 1);
    if multi {
        // Equality on the leading column only: a prefix of the key.
        let keys = keys_by_root(&e, n + 1);
        let v7 = Bound::Included(vec![Datum::Text("v7".into())]);
        let got = scan(
            &e,
            KeyRange {
                lower: v7.clone(),
                upper: v7,
            },
            &keys,
        );
        let mut want: Vec<(i32, Tid)> = (0..=n)
            .map(row)
            .filter(|(t, v)| (*t == tid || !dead(*t)) && v[1] == Datum::Text("v7".into()))
            .map(|(t, v)| match v[0] {
                Datum::Int4(k) => (k, t),
                _ => unreachable!(),
            })
            .collect();
        want.sort();
        assert_eq!(got, want.into_iter().map(|(_, t)| t).collect::<Vec<_>>());
    }
}

fn e_multi(m: IndexMethod) -> bool {
    super::method(m).capabilities().can_multi_col
}

fn key_changes_and_costs(m: IndexMethod) {
    let e = env(m, vec![0], false);
    let am = e.am();
    assert_eq!(am.method(), m);
    let k = |v| [Datum::Int4(v)];
    assert!(!am.key_changed(&e.table, &e.index, &k(1), &k(1)));
    assert!(am.key_changed(&e.table, &e.index, &k(1), &k(2)));
    let p = CostParams::default();
    let input = |selectivity| CostInput {
        index_pages: 300.0,
        index_tuples: 100_000.0,
        tree_height: None,
        heap_pages: 1600.0,
        heap_tuples: 100_000.0,
        selectivity,
        index_quals: 1,
        unique_equality: false,
        correlation: 0.3,
        ..Default::default()
    };
    let mut last = 0.0;
    for s in [0.0, 0.0001, 0.01, 0.1, 0.5, 1.0] {
        let c = am.cost_estimate(&input(s), &p);
        assert!(c.startup >= 0.0 && c.startup <= c.total, "{c:?}");
        assert!(c.total >= last, "cost falls with selectivity {s}: {c:?}");
        last = c.total;
    }
}

/// Runs `check` with every access method the catalog lists (pg_am): a method is tested by
/// this suite as soon as it exists.
fn for_each_method(check: fn(IndexMethod)) {
    for am in ACCESS_METHODS {
        check(am.method);
    }
}

#[test]
fn am_build_insert_and_scans() {
    for_each_method(build_insert_scan);
}

#[test]
fn am_unique_checks() {
    for_each_method(unique_checks);
}

#[test]
fn am_bulk_delete_and_reopen_after_flush() {
    for_each_method(bulk_delete_and_reopen);
}

#[test]
fn am_key_changes_and_costs() {
    for_each_method(key_changes_and_costs);
}

#[test]
fn btree_row_size_error_names_the_index() {
    let e = env(IndexMethod::Btree, vec![1], false);
    let idx = e.open();
    idx.create_empty(1).unwrap();
    let err = idx
        .insert(&[Datum::Text("x".repeat(3000))], Tid::new(1, 1), 2, None)
        .unwrap_err();
    assert_eq!(err.code, keel_common::sqlstate::PROGRAM_LIMIT_EXCEEDED);
    assert!(
        err.message.ends_with("maximum 2704 for index \"t_idx\""),
        "{}",
        err.message
    );
}
