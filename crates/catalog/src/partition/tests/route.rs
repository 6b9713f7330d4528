use super::*;

// PostgreSQL 15, on the tables of tests/mod.rs:
//   insert into r values (-11),(-10),(-9),(0),(1),(9),(10),(19),(20),(29),(30),(39),(40),
//     (99),(100),(2147483647),(-2147483648),(null);
//   select tableoid::regclass, a from r;
#[test]
fn range_one_column() {
    let t = table_r();
    let cases = [
        (int(-11), "rneg"),
        (int(i32::MIN), "rneg"),
        (int(-10), "rd"),
        (int(-9), "rd"),
        (int(0), "rd"),
        (int(1), "r1"),
        (int(9), "r1"),
        (int(10), "r2"),
        (int(19), "r2"),
        (int(20), "rd"),
        (int(29), "rd"),
        (int(30), "r3"),
        (int(39), "r3"),
        (int(40), "rd"),
        (int(99), "rd"),
        (int(100), "rmax"),
        (int(i32::MAX), "rmax"),
        (Datum::Null, "rd"),
    ];
    for (value, part) in cases {
        assert_eq!(
            t.route(std::slice::from_ref(&value), no_hash),
            Some(part),
            "{value:?}"
        );
    }
    // insert into rn values (25);  -- ERROR: no partition of relation "rn" found for row
    assert_eq!(table_rn().route(&[int(25)], no_hash), None);
    assert_eq!(table_rn().route(&[Datum::Null], no_hash), None);
}

// PostgreSQL 15:
//   insert into m values (1,5),(1,10),(1,25),(2,-5),(2,0),(2,100),(3,-1000),(5,0),
//     (5,1000000),(6,0),(null,1),(0,null),(-100,-100),(1,null),(2147483647,2147483647),
//     (-2147483648,-2147483648);
//   select tableoid::regclass, a, b from m;
#[test]
fn range_two_columns_with_minvalue_and_maxvalue() {
    let t = table_m();
    let n = Datum::Null;
    let cases = [
        ([int(1), int(5)], "m1"),
        ([int(-100), int(-100)], "m1"),
        ([int(i32::MIN), int(i32::MIN)], "m1"),
        ([int(1), int(10)], "m2"),
        ([int(1), int(25)], "m3"),
        ([int(2), int(-5)], "m3"),
        ([int(2), int(0)], "m4"),
        ([int(2), int(100)], "m4"),
        ([int(5), int(0)], "m5"),
        ([int(5), int(1_000_000)], "m5"),
        ([int(3), int(-1000)], "md"),
        ([int(6), int(0)], "md"),
        ([n.clone(), int(1)], "md"),
        ([int(0), n.clone()], "md"),
        ([int(1), n.clone()], "md"),
        ([int(i32::MAX), int(i32::MAX)], "md"),
    ];
    for (values, part) in cases {
        assert_eq!(t.route(&values, no_hash), Some(part), "{values:?}");
    }
}

// PostgreSQL 15:
//   insert into l values ('a'),('b'),('c'),('x'),('y'),(null),('z'),(''),('A'),('ab');
//   select tableoid::regclass, a from l;
//   insert into ln values (4);     -- ERROR: no partition of relation "ln" found for row
//   insert into lo values (null);  -- lonull
#[test]
fn list() {
    let t = table_l();
    let cases = [
        ("a", "l1"),
        ("b", "l1"),
        ("c", "l2"),
        ("x", "lnull"),
        ("y", "l3"),
        ("z", "ld"),
        ("", "ld"),
        ("A", "ld"),
        ("ab", "ld"),
    ];
    for (value, part) in cases {
        assert_eq!(t.route(&[txt(value)], no_hash), Some(part), "{value:?}");
    }
    assert_eq!(t.route(&[Datum::Null], no_hash), Some("lnull"));
    assert_eq!(table_ln().route(&[int(4)], no_hash), None);
    assert_eq!(table_ln().route(&[Datum::Null], no_hash), None);
    assert_eq!(table_ln().route(&[int(7)], no_hash), Some("ln5"));
    assert_eq!(table_lo().route(&[Datum::Null], no_hash), Some("lonull"));
}

// PostgreSQL 15: explain (costs off) select * from h where a = v, for v in 0..8, shows the
// partition each value hashes to (a = 4, 6, 7: none, remainder 3 mod 4 / 7 mod 8 has no
// partition); insert into h values (4) fails with "no partition of relation "h" found for row".
#[test]
fn hash_with_mixed_moduli() {
    let t = table_h();
    let cases = [
        (0, Some("h0")),
        (1, Some("h0")),
        (2, Some("h2")),
        (3, Some("h1")),
        (4, None),
        (5, Some("h1")),
        (6, None),
        (7, None),
        (8, Some("h1")),
    ];
    for (value, part) in cases {
        assert_eq!(t.route(&[int(value)], int4_hash), part, "{value}");
    }
    assert_eq!(t.route(&[Datum::Null], int4_hash), Some("h0"));
    // A hash-partitioned table without partitions accepts no row.
    let empty = Table::new(PartitionStrategy::Hash, &[TypeId::Int4]);
    assert_eq!(empty.route(&[int(1)], int4_hash), None);
}

// 8,192 range partitions [10 i, 10 i + 10): routing is a binary search.
#[test]
fn many_partitions() {
    let k = key(PartitionStrategy::Range, &[TypeId::Int4]);
    let parts: Vec<(Oid, PartitionBound)> = (0..8192)
        .rev()
        .map(|i| (i as Oid, range1(i * 10, i * 10 + 10)))
        .collect();
    let desc = PartitionDesc::new(&k, &parts).unwrap();
    for value in [0, 9, 10, 40_000, 81_919] {
        let idx = desc.route(&[int(value)], no_hash).unwrap();
        assert_eq!(desc.oids()[idx], (value / 10) as Oid);
    }
    assert_eq!(desc.route(&[int(81_920)], no_hash), None);
    let r = desc.prune(&[PruneCond::Eq(0, int(40_005))], no_hash);
    assert_eq!(r.partitions.len(), 1);
    assert_eq!(desc.oids()[r.partitions[0]], 4000);
}
