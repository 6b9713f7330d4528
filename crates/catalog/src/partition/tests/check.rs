use super::*;
use keel_common::PgError;

fn err(t: &mut Table, name: &str, bound: PartitionBound) -> (PgError, Option<BoundItem>) {
    match t.try_add(name, bound) {
        Ok(()) => panic!("{name} was accepted"),
        Err(e) => e,
    }
}

fn assert_err(
    t: &mut Table,
    name: &str,
    bound: PartitionBound,
    code: &str,
    message: &str,
    detail: Option<&str>,
    item: Option<BoundItem>,
) {
    let (e, at) = err(t, name, bound);
    assert_eq!(
        (e.code, e.message.as_str(), e.detail.as_deref(), at),
        (code, message, detail, item),
        "{name}"
    );
}

// PostgreSQL 15:
//   create table r (a int) partition by range (a);
//   create table r1 partition of r for values from (1) to (10);
//   create table r2 partition of r for values from (5) to (15);   -- 42P17, cursor at (5)
//   create table r3 partition of r for values from (10) to (5);   -- 42P17 + DETAIL
//   create table r4 partition of r for values from (10) to (10);
//   create table r5 partition of r for values from (-5) to (0);
//   create table rd partition of r default;
//   create table rd2 partition of r default;                       -- 42P17
//   create table r6 partition of r for values from (minvalue) to (-10);
//   create table r7 partition of r for values from (-20) to (-15); -- cursor at (-20)
//   create table r8 partition of r for values from (0) to (2);     -- cursor at (2)
//   create table r9 partition of r for values from (20) to (maxvalue);
//   create table r10 partition of r for values from (15) to (25);  -- cursor at (25)
//   create table r11 partition of r for values from (null) to (25);
//   create table r12 partition of r for values from (1, 2) to (25);
#[test]
fn range_overlaps_empty_ranges_and_defaults() {
    let mut t = Table::new(PartitionStrategy::Range, &[TypeId::Int4]);
    t.add("r1", range1(1, 10));
    let overlap = "42P17";
    assert_err(
        &mut t,
        "r2",
        range1(5, 15),
        overlap,
        "partition \"r2\" would overlap partition \"r1\"",
        None,
        Some(BoundItem::Lower(0)),
    );
    assert_err(
        &mut t,
        "r3",
        range1(10, 5),
        "42P17",
        "empty range bound specified for partition \"r3\"",
        Some("Specified lower bound (10) is greater than or equal to upper bound (5)."),
        Some(BoundItem::Lower(0)),
    );
    assert_err(
        &mut t,
        "r4",
        range1(10, 10),
        "42P17",
        "empty range bound specified for partition \"r4\"",
        Some("Specified lower bound (10) is greater than or equal to upper bound (10)."),
        Some(BoundItem::Lower(0)),
    );
    t.add("r5", range1(-5, 0))
        .add("rd", PartitionBound::Default);
    assert_err(
        &mut t,
        "rd2",
        PartitionBound::Default,
        "42P17",
        "partition \"rd2\" conflicts with existing default partition \"rd\"",
        None,
        Some(BoundItem::Spec),
    );
    t.add("r6", range(vec![RangeValue::MinValue], vec![v(int(-10))]));
    assert_err(
        &mut t,
        "r7",
        range1(-20, -15),
        overlap,
        "partition \"r7\" would overlap partition \"r6\"",
        None,
        Some(BoundItem::Lower(0)),
    );
    assert_err(
        &mut t,
        "r8",
        range1(0, 2),
        overlap,
        "partition \"r8\" would overlap partition \"r1\"",
        None,
        Some(BoundItem::Upper(0)),
    );
    t.add("r9", range(vec![v(int(20))], vec![RangeValue::MaxValue]));
    assert_err(
        &mut t,
        "r10",
        range1(15, 25),
        overlap,
        "partition \"r10\" would overlap partition \"r9\"",
        None,
        Some(BoundItem::Upper(0)),
    );
    assert_err(
        &mut t,
        "r11",
        range(vec![v(Datum::Null)], vec![v(int(25))]),
        "42P17",
        "cannot specify NULL in range bound",
        None,
        None,
    );
    assert_err(
        &mut t,
        "r12",
        range(vec![v(int(1)), v(int(2))], vec![v(int(25))]),
        "42P16",
        "FROM must specify exactly one value per partitioning column",
        None,
        None,
    );
    // Gaps that fit are fine, up to touching both neighbours.
    t.add("r13", range1(10, 15)).add("r14", range1(15, 20));
    assert!(t.check("x", &range1(0, 1)).is_ok());
    assert!(t.check("x", &range1(-1, 1)).is_err());
    assert!(t.check("x", &range1(-10, -5)).is_ok());
    assert!(t.check("x", &range1(-10, -4)).is_err());
}

// PostgreSQL 15:
//   create table h (a int) partition by hash (a);
//   create table h0 partition of h for values with (modulus 4, remainder 0);
//   create table h1 partition of h for values with (modulus 8, remainder 4);
//   create table h2 partition of h for values with (modulus 3, remainder 1);
//   create table h3 partition of h for values with (modulus 2, remainder 1);
//   create table h4 partition of h for values with (modulus 16, remainder 1);
//   create table h5 partition of h for values with (modulus 0, remainder 0);
//   create table h6 partition of h for values with (modulus 4, remainder 4);
//   create table hd partition of h default;
//   create table h8 partition of h for values with (modulus 8, remainder 0);
//   create table h9 partition of h for values with (modulus 6, remainder 0);
#[test]
fn hash_modulus_rules_and_overlaps() {
    let mut t = Table::new(PartitionStrategy::Hash, &[TypeId::Int4]);
    t.add("h0", hash(4, 0));
    assert_err(
        &mut t,
        "h1",
        hash(8, 4),
        "42P17",
        "partition \"h1\" would overlap partition \"h0\"",
        None,
        Some(BoundItem::Spec),
    );
    let factor = "every hash partition modulus must be a factor of the next larger modulus";
    assert_err(
        &mut t,
        "h2",
        hash(3, 1),
        "42P17",
        factor,
        Some("The new modulus 3 is not a factor of 4, the modulus of existing partition \"h0\"."),
        None,
    );
    t.add("h3", hash(2, 1));
    assert_err(
        &mut t,
        "h4",
        hash(16, 1),
        "42P17",
        "partition \"h4\" would overlap partition \"h3\"",
        None,
        Some(BoundItem::Spec),
    );
    assert_err(
        &mut t,
        "h5",
        hash(0, 0),
        "42P16",
        "modulus for hash partition must be an integer value greater than zero",
        None,
        None,
    );
    assert_err(
        &mut t,
        "h6",
        hash(4, 4),
        "42P16",
        "remainder for hash partition must be less than modulus",
        None,
        None,
    );
    assert_err(
        &mut t,
        "hd",
        PartitionBound::Default,
        "42P16",
        "a hash-partitioned table may not have a default partition",
        None,
        None,
    );
    assert_err(
        &mut t,
        "h8",
        hash(8, 0),
        "42P17",
        "partition \"h8\" would overlap partition \"h0\"",
        None,
        Some(BoundItem::Spec),
    );
    assert_err(
        &mut t,
        "h9",
        hash(6, 0),
        "42P17",
        factor,
        Some("The new modulus 6 is not divisible by 4, the modulus of existing partition \"h0\"."),
        None,
    );
    // The free remainder of modulus 4 still fits; then every remainder is taken.
    t.add("h10", hash(4, 2));
    for (m, r) in [(8, 2), (8, 6), (4, 3), (16, 15)] {
        assert!(t.check("x", &hash(m, r)).is_err(), "({m}, {r})");
    }
    assert_eq!(t.desc().len(), 3);
}

// PostgreSQL 15:
//   create table l (a text) partition by list (a);
//   create table l1 partition of l for values in ('a', 'b');
//   create table l2 partition of l for values in ('c', 'b');   -- cursor at 'b'
//   create table l3 partition of l for values in (null, 'x');
//   create table l4 partition of l for values in ('y', null);  -- cursor at null
//   create table l5 partition of l for values in ('z', 'z');
//   select pg_get_expr(relpartbound, oid) from pg_class where relname = 'l5';
//     FOR VALUES IN ('z')
#[test]
fn list_overlaps_and_duplicates() {
    let mut t = Table::new(PartitionStrategy::List, &[TypeId::Text]);
    t.add("l1", list(vec![txt("a"), txt("b")]));
    assert_err(
        &mut t,
        "l2",
        list(vec![txt("c"), txt("b")]),
        "42P17",
        "partition \"l2\" would overlap partition \"l1\"",
        None,
        Some(BoundItem::Value(1)),
    );
    t.add("l3", list(vec![Datum::Null, txt("x")]));
    assert_err(
        &mut t,
        "l4",
        list(vec![txt("y"), Datum::Null]),
        "42P17",
        "partition \"l4\" would overlap partition \"l3\"",
        None,
        Some(BoundItem::Value(1)),
    );
    t.add("l5", list(vec![txt("z"), txt("z")]));
    assert_eq!(bound_text(&t.bounds[2], &t.key), "FOR VALUES IN ('z')");
    // create table lz partition of l for values in ('z', 'a', 'z', null, null, ...) keeps
    // the first of each, in order.
    let b = list(vec![txt("q"), txt("p"), txt("q"), Datum::Null, Datum::Null]).canonical();
    assert_eq!(b, list(vec![txt("q"), txt("p"), Datum::Null]));
}

// PostgreSQL 15:
//   create table m (a int, b int) partition by range (a, b);
//   create table m1 partition of m for values from (minvalue, 1) to (10, maxvalue);  -- 42804
//   create table m2 partition of m for values from (minvalue, minvalue) to (10, maxvalue);
//   create table m3 partition of m for values from (1, 1) to (1, 0);
//   create table m4 partition of m for values from (1, maxvalue) to (2, minvalue);
//   create table m5 partition of m for values from (1, 2) to (1, 2);
//   create table m6 ... from (1, minvalue) to (maxvalue, 1);                         -- 42804
//   create table m7 ... from (minvalue, minvalue) to (minvalue, maxvalue);          -- 42804
//   create table m8 ... from (1) to (2, 3);  create table m9 ... from (1, 2) to (3);
#[test]
fn multi_column_range_bounds() {
    use RangeValue::{MaxValue, MinValue};
    let mut t = Table::new(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Int4]);
    assert_err(
        &mut t,
        "m1",
        range(vec![MinValue, v(int(1))], vec![v(int(10)), MaxValue]),
        "42804",
        "every bound following MINVALUE must also be MINVALUE",
        None,
        Some(BoundItem::Lower(1)),
    );
    t.add(
        "m2",
        range(vec![MinValue, MinValue], vec![v(int(10)), MaxValue]),
    );
    assert_err(
        &mut t,
        "m3",
        range(vec![v(int(1)), v(int(1))], vec![v(int(1)), v(int(0))]),
        "42P17",
        "empty range bound specified for partition \"m3\"",
        Some("Specified lower bound (1, 1) is greater than or equal to upper bound (1, 0)."),
        Some(BoundItem::Lower(1)),
    );
    assert_err(
        &mut t,
        "m4",
        range(vec![v(int(1)), MaxValue], vec![v(int(2)), MinValue]),
        "42P17",
        "partition \"m4\" would overlap partition \"m2\"",
        None,
        Some(BoundItem::Lower(0)),
    );
    assert_err(
        &mut t,
        "m5",
        range(vec![v(int(1)), v(int(2))], vec![v(int(1)), v(int(2))]),
        "42P17",
        "empty range bound specified for partition \"m5\"",
        Some("Specified lower bound (1, 2) is greater than or equal to upper bound (1, 2)."),
        Some(BoundItem::Lower(1)),
    );
    assert_err(
        &mut t,
        "m6",
        range(vec![v(int(1)), MinValue], vec![MaxValue, v(int(1))]),
        "42804",
        "every bound following MAXVALUE must also be MAXVALUE",
        None,
        Some(BoundItem::Upper(1)),
    );
    assert_err(
        &mut t,
        "m7",
        range(vec![MinValue, MinValue], vec![MinValue, MaxValue]),
        "42804",
        "every bound following MINVALUE must also be MINVALUE",
        None,
        Some(BoundItem::Upper(1)),
    );
    assert_err(
        &mut t,
        "m8",
        range(vec![v(int(1))], vec![v(int(2)), v(int(3))]),
        "42P16",
        "FROM must specify exactly one value per partitioning column",
        None,
        None,
    );
    assert_err(
        &mut t,
        "m9",
        range(vec![v(int(1)), v(int(2))], vec![v(int(3))]),
        "42P16",
        "TO must specify exactly one value per partitioning column",
        None,
        None,
    );
    // Right after m2's (10, MAXVALUE): (11, x) starts a new partition.
    t.add(
        "m10",
        range(vec![v(int(10)), MaxValue], vec![v(int(20)), v(int(0))]),
    );
    assert!(
        t.check(
            "x",
            &range(vec![v(int(15)), v(int(0))], vec![v(int(30)), v(int(0))])
        )
        .is_err()
    );
}

// PostgreSQL 15 (k8 is int8, kt timestamp, kn2 numeric, m text second column):
//   create table k81 partition of k8 for values from (1) to (-10);
//     DETAIL:  Specified lower bound ('1') is greater than or equal to upper bound ('-10').
//   create table kt2 partition of kt for values from ('2022-01-01') to ('2021-01-01');
//     DETAIL:  Specified lower bound ('2022-01-01 00:00:00') is greater than or equal to
//              upper bound ('2021-01-01 00:00:00').
//   create table kn21 partition of kn2 for values from (1.5) to (1);
//     DETAIL:  Specified lower bound (1.5) is greater than or equal to upper bound ('1').
//   create table m3 partition of m for values from (10, 'z') to (10, 'y');
//     DETAIL:  Specified lower bound (10, 'z') is greater than or equal to upper bound (10, 'y').
#[test]
fn empty_range_details_quote_values_by_type() {
    type Case = (
        &'static [TypeId],
        Vec<RangeValue>,
        Vec<RangeValue>,
        &'static str,
    );
    let cases: [Case; 4] = [
        (
            &[TypeId::Int8],
            vec![v(Datum::Int8(1))],
            vec![v(Datum::Int8(-10))],
            "Specified lower bound ('1') is greater than or equal to upper bound ('-10').",
        ),
        (
            &[TypeId::Timestamp],
            vec![v(val(TypeId::Timestamp, "2022-01-01"))],
            vec![v(val(TypeId::Timestamp, "2021-01-01"))],
            "Specified lower bound ('2022-01-01 00:00:00') is greater than or equal to upper bound ('2021-01-01 00:00:00').",
        ),
        (
            &[TypeId::Numeric],
            vec![v(val(TypeId::Numeric, "1.5"))],
            vec![v(val(TypeId::Numeric, "1"))],
            "Specified lower bound (1.5) is greater than or equal to upper bound ('1').",
        ),
        (
            &[TypeId::Int4, TypeId::Text],
            vec![v(int(10)), v(txt("z"))],
            vec![v(int(10)), v(txt("y"))],
            "Specified lower bound (10, 'z') is greater than or equal to upper bound (10, 'y').",
        ),
    ];
    for (types, lower, upper, detail) in cases {
        let t = Table::new(PartitionStrategy::Range, types);
        let e = t.check("p", &range(lower, upper)).unwrap_err();
        assert_eq!(e.detail.as_deref(), Some(detail));
    }
}

// PostgreSQL 15:
//   create table lr partition of l for values from ('a') to ('b');        -- list table
//   create table lh partition of l for values with (modulus 2, remainder 0);
//   create table ri partition of r for values in (1);                      -- range table
//   create table rh partition of r for values with (modulus 2, remainder 0);
//   create table hi partition of h for values in (1);                      -- hash table
//   create table hr partition of h for values from (1) to (2);
//     42P16 invalid bound specification for a {list|range|hash} partition, cursor at FOR
#[test]
fn bound_of_another_strategy() {
    let cases = [
        (PartitionStrategy::List, range1(1, 2), "list"),
        (PartitionStrategy::List, hash(2, 0), "list"),
        (PartitionStrategy::Range, list(vec![int(1)]), "range"),
        (PartitionStrategy::Range, hash(2, 0), "range"),
        (PartitionStrategy::Hash, list(vec![int(1)]), "hash"),
        (PartitionStrategy::Hash, range1(1, 2), "hash"),
    ];
    for (strategy, bound, name) in cases {
        let mut t = Table::new(strategy, &[TypeId::Int4]);
        assert_err(
            &mut t,
            "p",
            bound,
            "42P16",
            &format!("invalid bound specification for a {name} partition"),
            None,
            Some(BoundItem::Spec),
        );
    }
}

// PostgreSQL 15:
//   create table l2 (a int, b int) partition by list (a, b);
//     42P17 cannot use "list" partition strategy with more than one column
//   create table toomany (c1 int, ..., c33 int) partition by range (c1, ..., c33);
//     54011 cannot partition using more than 32 columns
#[test]
fn key_shape() {
    let e = PartitionKey::new(
        PartitionStrategy::List,
        vec![0, 1],
        vec![TypeId::Int4, TypeId::Int4],
    )
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "42P17",
            "cannot use \"list\" partition strategy with more than one column"
        )
    );
    let e = PartitionKey::new(
        PartitionStrategy::Range,
        (0..33).collect(),
        vec![TypeId::Int4; 33],
    )
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("54011", "cannot partition using more than 32 columns")
    );
    assert!(PartitionKey::new(PartitionStrategy::Hash, vec![0, 1], vec![TypeId::Int4; 2]).is_ok());
}

// PostgreSQL 15:
//   create table bigh (a int) partition by hash (a);
//   create table bigh1 partition of bigh for values with (modulus 1000000000, remainder 3);
//     CREATE TABLE (nothing to compare with yet)
//   create table bigh2 partition of bigh for values with (modulus 2147483647, remainder 3);
//     ERROR:  XX000: invalid memory alloc request size 4000000000 (building the descriptor)
#[test]
fn greatest_modulus_memory_limit() {
    let t = Table::new(PartitionStrategy::Hash, &[TypeId::Int4]);
    assert!(t.check("bigh1", &hash(1_000_000_000, 3)).is_ok());
    let e = PartitionDesc::new(&t.key, &[(1, hash(1_000_000_000, 3))]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("XX000", "invalid memory alloc request size 4000000000")
    );
    // A large modulus within the limit is laid out.
    assert!(PartitionDesc::new(&t.key, &[(1, hash(1 << 20, 3))]).is_ok());
}

#[test]
fn descriptor_refuses_malformed_bounds() {
    let k = key(PartitionStrategy::Range, &[TypeId::Int4]);
    assert!(PartitionDesc::new(&k, &[(1, list(vec![int(1)]))]).is_err());
    assert!(
        PartitionDesc::new(
            &k,
            &[(1, PartitionBound::Default), (2, PartitionBound::Default)]
        )
        .is_err()
    );
    assert!(PartitionDesc::new(&k, &[(1, range(vec![v(int(1))], vec![]))]).is_err());
    let h = key(PartitionStrategy::Hash, &[TypeId::Int4]);
    assert!(PartitionDesc::new(&h, &[(1, PartitionBound::Default)]).is_err());
    assert!(PartitionDesc::new(&h, &[(1, hash(4, 1)), (2, hash(8, 5))]).is_err());
}

// PostgreSQL 15:
//   create table ll (a int) partition by list (a);
//   create table ll1 partition of ll for values in (1);
//   create table lld partition of ll default;
//   insert into lld values (3);
//   create table ll3 partition of ll for values in (3);
//     ERROR:  23514: updated partition constraint for default partition "lld" would be
//             violated by some row
// (the scan of the default partition is the caller's; the error is provided.)
#[test]
fn default_partition_violation_error() {
    let e = default_partition_violation("lld");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "23514",
            "updated partition constraint for default partition \"lld\" would be violated by some row"
        )
    );
    let mut t = Table::new(PartitionStrategy::List, &[TypeId::Int4]);
    t.add("ll1", list(vec![int(1)]))
        .add("lld", PartitionBound::Default);
    assert!(t.check("ll3", &list(vec![int(3)])).is_ok());
}
