//! Tests of the partition bound logic. Expected results come from PostgreSQL 15.18: each
//! group says which statements were run there. Partitioned tables are built here the way
//! PostgreSQL builds them, one `CREATE TABLE ... PARTITION OF` at a time
//! ([`Table::add`]: [`check_new_partition`], then the canonical bound is recorded).

mod check;
mod prune;
mod random_conds;
mod route;
mod serde;
mod text;

use super::*;
use keel_common::{Oid, PgResult};
use keel_types::{Datum, SqlType, TypeId};

pub(super) fn int(v: i32) -> Datum {
    Datum::Int4(v)
}

pub(super) fn txt(s: &str) -> Datum {
    Datum::Text(s.to_string())
}

/// A value of `ty` from its text form, as the type's input function reads it.
pub(super) fn val(ty: TypeId, text: &str) -> Datum {
    keel_types::io::parse_text(text, SqlType::new(ty)).expect("valid literal")
}

pub(super) fn v(d: Datum) -> RangeValue {
    RangeValue::Value(d)
}

pub(super) fn range(lower: Vec<RangeValue>, upper: Vec<RangeValue>) -> PartitionBound {
    PartitionBound::Range { lower, upper }
}

/// `FOR VALUES FROM (lo) TO (hi)` of an int4 key.
pub(super) fn range1(lo: i32, hi: i32) -> PartitionBound {
    range(vec![v(int(lo))], vec![v(int(hi))])
}

pub(super) fn list(values: Vec<Datum>) -> PartitionBound {
    PartitionBound::List { values }
}

pub(super) fn hash(modulus: u32, remainder: u32) -> PartitionBound {
    PartitionBound::Hash { modulus, remainder }
}

pub(super) fn key(strategy: PartitionStrategy, types: &[TypeId]) -> PartitionKey {
    PartitionKey::new(strategy, (0..types.len()).collect(), types.to_vec()).unwrap()
}

/// PostgreSQL's int4 partition hash modulo 8 for the values the tests use, from
/// `satisfies_hash_partition('h'::regclass, 8, r, v)` on PostgreSQL 15 (a table hash
/// partitioned on one int4 column): 0→0, 1→0, 2→2, 3→1, 4→3, 5→5, 6→3, 7→7, 8→5, NULL→0.
/// Its value modulo 4 and 2 is then PostgreSQL's too, so routing and pruning with moduli 2, 4
/// and 8 land where PostgreSQL's do.
pub(super) fn int4_hash(row: &[Datum]) -> u64 {
    match row {
        [Datum::Null] => 0,
        [Datum::Int4(v)] => [0, 0, 2, 1, 3, 5, 3, 7, 5][*v as usize],
        _ => panic!("no PostgreSQL hash recorded for {row:?}"),
    }
}

/// A partitioned table: its partitions' names and canonical bounds, in creation order.
pub(super) struct Table {
    pub key: PartitionKey,
    pub names: Vec<String>,
    pub bounds: Vec<PartitionBound>,
}

impl Table {
    pub fn new(strategy: PartitionStrategy, types: &[TypeId]) -> Table {
        Table {
            key: key(strategy, types),
            names: Vec::new(),
            bounds: Vec::new(),
        }
    }

    /// Partition `i` has oid 1000 + i.
    pub fn desc(&self) -> PartitionDesc {
        let parts: Vec<(Oid, PartitionBound)> = self
            .bounds
            .iter()
            .enumerate()
            .map(|(i, b)| (1000 + i as Oid, b.clone()))
            .collect();
        PartitionDesc::new(&self.key, &parts).unwrap()
    }

    fn name_of(&self, oid: Oid) -> String {
        self.names[(oid - 1000) as usize].clone()
    }

    /// `CREATE TABLE name PARTITION OF t bound`, errors reported with the part of the bound
    /// they are about (as [`BoundItem`]'s debug text, in place of PostgreSQL's cursor).
    pub fn try_add(
        &mut self,
        name: &str,
        bound: PartitionBound,
    ) -> Result<(), (PgError, Option<BoundItem>)> {
        let desc = self.desc();
        let item = std::cell::Cell::new(None);
        check_new_partition_located(
            &desc,
            name,
            &bound,
            |o| self.name_of(o),
            |i| {
                item.set(Some(i));
                None
            },
        )
        .map_err(|e| (e, item.get()))?;
        self.names.push(name.to_string());
        self.bounds.push(bound.canonical());
        Ok(())
    }

    pub fn add(&mut self, name: &str, bound: PartitionBound) -> &mut Table {
        if let Err((e, _)) = self.try_add(name, bound) {
            panic!("{name}: {e} {:?}", e.detail);
        }
        self
    }

    pub fn check(&self, name: &str, bound: &PartitionBound) -> PgResult<()> {
        check_new_partition(&self.desc(), name, bound, |o| self.name_of(o))
    }

    /// The names of the partitions `conds` keep, sorted, space-separated ("" for none).
    pub fn prune(&self, conds: &[PruneCond], hash: impl Fn(&[Datum]) -> u64) -> String {
        let kept = self.desc().prune(conds, hash).partitions;
        let mut names: Vec<&str> = kept.iter().map(|&i| self.names[i].as_str()).collect();
        names.sort_unstable();
        names.join(" ")
    }

    pub fn route(&self, values: &[Datum], hash: impl Fn(&[Datum]) -> u64) -> Option<&str> {
        self.desc()
            .route(values, hash)
            .map(|i| self.names[i].as_str())
    }
}

pub(super) fn no_hash(_: &[Datum]) -> u64 {
    panic!("range and list partitioning never hash")
}

// The tables the routing and pruning tests share, as created on PostgreSQL 15:
//   create table r (a int) partition by range (a);
//   create table rneg partition of r for values from (minvalue) to (-10);
//   create table r1 partition of r for values from (1) to (10);
//   create table r2 partition of r for values from (10) to (20);
//   create table r3 partition of r for values from (30) to (40);
//   create table rmax partition of r for values from (100) to (maxvalue);
//   create table rd partition of r default;
//   create table rn (a int) partition by range (a);   -- rn1, rn2, rn3 as r1, r2, r3
//   create table m (a int, b int) partition by range (a, b);
//   create table m1 partition of m for values from (minvalue, minvalue) to (1, 10);
//   create table m2 partition of m for values from (1, 10) to (1, 20);
//   create table m3 partition of m for values from (1, 20) to (2, 0);
//   create table m4 partition of m for values from (2, 0) to (3, minvalue);
//   create table m5 partition of m for values from (5, 0) to (5, maxvalue);
//   create table md partition of m default;
//   create table l (a text) partition by list (a);
//   create table l1 partition of l for values in ('a', 'b');
//   create table l2 partition of l for values in ('c');
//   create table lnull partition of l for values in (null, 'x');
//   create table l3 partition of l for values in ('y');
//   create table ld partition of l default;
//   create table ln (a int) partition by list (a);
//   create table ln1 partition of ln for values in (1, 2);
//   create table ln2 partition of ln for values in (3);
//   create table ln5 partition of ln for values in (5, 7);
//   create table lo (a int) partition by list (a);
//   create table lo1 partition of lo for values in (1);
//   create table lonull partition of lo for values in (null);
//   create table h (a int) partition by hash (a);
//   create table h0 partition of h for values with (modulus 4, remainder 0);
//   create table h1 partition of h for values with (modulus 4, remainder 1);
//   create table h2 partition of h for values with (modulus 8, remainder 2);
//   create table h6 partition of h for values with (modulus 8, remainder 6);
//   create table hh (a int, b text) partition by hash (a, b);   -- hh0, hh1, hh2: modulus 3

pub(super) fn table_r() -> Table {
    let mut t = Table::new(PartitionStrategy::Range, &[TypeId::Int4]);
    t.add("rneg", range(vec![RangeValue::MinValue], vec![v(int(-10))]))
        .add("r1", range1(1, 10))
        .add("r2", range1(10, 20))
        .add("r3", range1(30, 40))
        .add("rmax", range(vec![v(int(100))], vec![RangeValue::MaxValue]))
        .add("rd", PartitionBound::Default);
    t
}

pub(super) fn table_rn() -> Table {
    let mut t = Table::new(PartitionStrategy::Range, &[TypeId::Int4]);
    t.add("rn1", range1(1, 10))
        .add("rn2", range1(10, 20))
        .add("rn3", range1(30, 40));
    t
}

pub(super) fn table_m() -> Table {
    use RangeValue::{MaxValue, MinValue};
    let b = |l: Vec<RangeValue>, u: Vec<RangeValue>| range(l, u);
    let mut t = Table::new(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Int4]);
    t.add(
        "m1",
        b(vec![MinValue, MinValue], vec![v(int(1)), v(int(10))]),
    )
    .add(
        "m2",
        b(vec![v(int(1)), v(int(10))], vec![v(int(1)), v(int(20))]),
    )
    .add(
        "m3",
        b(vec![v(int(1)), v(int(20))], vec![v(int(2)), v(int(0))]),
    )
    .add(
        "m4",
        b(vec![v(int(2)), v(int(0))], vec![v(int(3)), MinValue]),
    )
    .add(
        "m5",
        b(vec![v(int(5)), v(int(0))], vec![v(int(5)), MaxValue]),
    )
    .add("md", PartitionBound::Default);
    t
}

pub(super) fn table_l() -> Table {
    let mut t = Table::new(PartitionStrategy::List, &[TypeId::Text]);
    t.add("l1", list(vec![txt("a"), txt("b")]))
        .add("l2", list(vec![txt("c")]))
        .add("lnull", list(vec![Datum::Null, txt("x")]))
        .add("l3", list(vec![txt("y")]))
        .add("ld", PartitionBound::Default);
    t
}

pub(super) fn table_ln() -> Table {
    let mut t = Table::new(PartitionStrategy::List, &[TypeId::Int4]);
    t.add("ln1", list(vec![int(1), int(2)]))
        .add("ln2", list(vec![int(3)]))
        .add("ln5", list(vec![int(5), int(7)]));
    t
}

pub(super) fn table_lo() -> Table {
    let mut t = Table::new(PartitionStrategy::List, &[TypeId::Int4]);
    t.add("lo1", list(vec![int(1)]))
        .add("lonull", list(vec![Datum::Null]));
    t
}

pub(super) fn table_h() -> Table {
    let mut t = Table::new(PartitionStrategy::Hash, &[TypeId::Int4]);
    t.add("h0", hash(4, 0))
        .add("h1", hash(4, 1))
        .add("h2", hash(8, 2))
        .add("h6", hash(8, 6));
    t
}

pub(super) fn table_hh() -> Table {
    let mut t = Table::new(PartitionStrategy::Hash, &[TypeId::Int4, TypeId::Text]);
    t.add("hh0", hash(3, 0))
        .add("hh1", hash(3, 1))
        .add("hh2", hash(3, 2));
    t
}

/// PostgreSQL's (int4, text) hash modulo 3 for the rows the hh tests use, as its pruning
/// chose: (1, 'x') → hh1, (1, NULL) → hh2, (NULL, NULL) → hh0.
pub(super) fn int4_text_hash(row: &[Datum]) -> u64 {
    match row {
        [Datum::Int4(1), Datum::Text(b)] if b == "x" => 1,
        [Datum::Int4(1), Datum::Null] => 2,
        [Datum::Null, Datum::Null] => 0,
        _ => panic!("no PostgreSQL hash recorded for {row:?}"),
    }
}
