use super::*;
use PruneCond::{Eq, Ge, Gt, In, IsNotNull, IsNull, Le, Lt};

fn check(t: &Table, cases: &[(Vec<PruneCond>, &str)], hash: impl Fn(&[Datum]) -> u64 + Copy) {
    for (conds, expected) in cases {
        assert_eq!(&t.prune(conds, hash), expected, "{conds:?}");
    }
}

fn ints(vs: &[i32]) -> Vec<Datum> {
    vs.iter().map(|v| int(*v)).collect()
}

// PostgreSQL 15: explain (costs off) select * from r where <conds>, on table r of
// tests/mod.rs; the expected partitions are those the plan scans ("" where the plan is a
// Result with One-Time Filter: false).
#[test]
fn range_one_column() {
    let t = table_r();
    let all = "r1 r2 r3 rd rmax rneg";
    let cases = vec![
        (vec![Eq(0, int(5))], "r1"),
        (vec![Eq(0, int(10))], "r2"),
        (vec![Eq(0, int(25))], "rd"),
        (vec![Eq(0, int(-100))], "rneg"),
        (vec![Eq(0, int(200))], "rmax"),
        (vec![Lt(0, int(5))], "r1 rd rneg"),
        (vec![Le(0, int(10))], "r1 r2 rd rneg"),
        (vec![Lt(0, int(10))], "r1 rd rneg"),
        (vec![Lt(0, int(1))], "rd rneg"),
        (vec![Le(0, int(1))], "r1 rd rneg"),
        (vec![Gt(0, int(35))], "r3 rd rmax"),
        (vec![Ge(0, int(100))], "rmax"),
        (vec![Gt(0, int(200))], "rmax"),
        // a in (1, 20), a in (5, 25)
        (vec![In(0, ints(&[1, 20]))], "r1 rd"),
        (vec![In(0, ints(&[5, 25]))], "r1 rd"),
        (vec![IsNull(0)], "rd"),
        (vec![IsNotNull(0)], all),
        (vec![Gt(0, int(5)), Lt(0, int(15))], "r1 r2"),
        (vec![Gt(0, int(12)), Lt(0, int(15))], "r2"),
        (vec![Eq(0, int(5)), Eq(0, int(6))], ""),
        (vec![Gt(0, int(20)), Lt(0, int(25))], "rd"),
        (vec![Lt(0, int(-20))], "rneg"),
        (vec![Le(0, int(-10))], "rd rneg"),
        (vec![Lt(0, int(-10))], "rneg"),
        // a between 20 and 30
        (vec![Ge(0, int(20)), Le(0, int(30))], "r3 rd"),
        (vec![Gt(0, int(5)), Lt(0, int(3))], ""),
        (vec![In(0, ints(&[1, 2])), Eq(0, int(3))], ""),
        // a = any('{NULL}'::int[]), a = any('{}'::int[]), a in (5, null)
        (vec![In(0, vec![Datum::Null])], all),
        (vec![In(0, vec![])], ""),
        (vec![In(0, vec![int(5), Datum::Null])], "r1"),
        (vec![Ge(0, int(40)), Lt(0, int(100))], "rd"),
        (vec![Gt(0, int(39))], "r3 rd rmax"),
        (vec![Ge(0, int(40))], "rd rmax"),
        (vec![Lt(0, int(30))], "r1 r2 rd rneg"),
        (vec![Ge(0, int(20)), Lt(0, int(30))], "rd"),
        (vec![Eq(0, int(5)), IsNull(0)], ""),
        (vec![IsNull(0), IsNotNull(0)], ""),
        (vec![In(0, ints(&[5, 15])), Gt(0, int(10))], "r2"),
        (vec![In(0, ints(&[5, 15])), Lt(0, int(3))], ""),
        (vec![Ge(0, int(5)), Le(0, int(5))], "r1"),
        (vec![Gt(0, int(5)), Lt(0, int(6))], "r1"),
        (vec![In(0, ints(&[1, 2, 3])), In(0, ints(&[4, 5]))], ""),
        (
            vec![
                In(0, ints(&[1, 2])),
                In(0, ints(&[2, 3])),
                In(0, ints(&[1, 3])),
            ],
            "",
        ),
        (vec![Gt(0, int(-10)), Lt(0, int(1))], "rd"),
        // a = any('{NULL}') and a = 5; ... and a is null; ... and a is not null
        (vec![In(0, vec![Datum::Null]), Eq(0, int(5))], ""),
        (vec![In(0, vec![Datum::Null, Datum::Null])], all),
        (vec![In(0, vec![Datum::Null]), IsNull(0)], ""),
        (vec![In(0, vec![Datum::Null]), IsNotNull(0)], all),
        (vec![In(0, ints(&[1, 2])), In(0, ints(&[3, 4]))], ""),
        (
            vec![In(0, ints(&[1, 50])), Gt(0, int(5)), Lt(0, int(40))],
            "",
        ),
        (vec![In(0, ints(&[1, 50])), Gt(0, int(5))], "r1 rd"),
        (vec![IsNull(0), In(0, ints(&[1, 2]))], ""),
        (
            vec![In(0, ints(&[5, 15])), Ge(0, int(10)), Lt(0, int(12))],
            "",
        ),
        (
            vec![
                In(0, vec![int(1), Datum::Null, int(50)]),
                Gt(0, int(5)),
                Lt(0, int(40)),
            ],
            "",
        ),
        (
            vec![In(0, vec![int(1), Datum::Null]), In(0, vec![Datum::Null])],
            "r1",
        ),
        (vec![In(0, vec![int(1), Datum::Null]), IsNotNull(0)], "r1"),
        // a = null folds to NULL: One-Time Filter: false.
        (vec![Eq(0, Datum::Null)], ""),
        (vec![], all),
    ];
    check(&t, &cases, no_hash);
}

// PostgreSQL 15: the IN list is only expanded for the contradiction proof up to 100
// elements (predtest.c's MAX_SAOP_ARRAY_SIZE):
//   explain (costs off) select * from r where a = 5 and a in (1,2,3,4,6,7,...,101);  -- none
//   explain (costs off) select * from r where a = 5 and a in (1,2,3,4,6,7,...,102);  -- r1
//   explain (costs off) select * from r where a is null and a in (1,...,4,6,...,102); -- none
#[test]
fn long_in_lists() {
    let t = table_r();
    let upto = |last: i32| -> Vec<Datum> { (1..=last).filter(|v| *v != 5).map(int).collect() };
    check(
        &t,
        &[
            (vec![Eq(0, int(5)), In(0, upto(101))], ""),
            (vec![Eq(0, int(5)), In(0, upto(102))], "r1"),
            (vec![IsNull(0), In(0, upto(102))], ""),
        ],
        no_hash,
    );
}

// PostgreSQL 15: explain (costs off) select * from rn where <conds> (no default partition).
#[test]
fn range_without_default() {
    let t = table_rn();
    let cases = vec![
        (vec![Eq(0, int(25))], ""),
        (vec![Lt(0, int(5))], "rn1"),
        (vec![Gt(0, int(35))], "rn3"),
        (vec![Gt(0, int(12)), Lt(0, int(15))], "rn2"),
        (vec![Ge(0, int(20)), Lt(0, int(30))], ""),
        (vec![IsNull(0)], ""),
        (vec![IsNotNull(0)], "rn1 rn2 rn3"),
        (vec![In(0, ints(&[5, 25]))], "rn1"),
        (vec![Gt(0, int(100))], ""),
    ];
    check(&t, &cases, no_hash);
}

// PostgreSQL 15: explain (costs off) select * from m where <conds>. Equality on a prefix of
// the key, then one range on the next column; an inequality on a column ends the prefix;
// IS NULL on any column leaves only the default partition.
#[test]
fn range_two_columns() {
    let t = table_m();
    let all = "m1 m2 m3 m4 m5 md";
    let cases = vec![
        (vec![Eq(0, int(1))], "m1 m2 m3 md"),
        (vec![Eq(0, int(1)), Eq(1, int(15))], "m2"),
        (vec![Eq(0, int(1)), Lt(1, int(15))], "m1 m2"),
        (vec![Eq(0, int(1)), Gt(1, int(15))], "m2 m3"),
        (vec![Eq(0, int(1)), Le(1, int(10))], "m1 m2"),
        (vec![Lt(0, int(1))], "m1 md"),
        (vec![Le(0, int(1))], "m1 m2 m3 md"),
        (vec![Gt(0, int(1))], "m3 m4 m5 md"),
        (vec![Ge(0, int(2))], "m3 m4 m5 md"),
        (vec![Eq(1, int(5))], all),
        (vec![Eq(0, int(2)), Eq(1, int(5))], "m4"),
        (vec![Ge(0, int(1)), Le(1, int(5))], all),
        (vec![Gt(0, int(1)), Eq(1, int(5))], "m3 m4 m5 md"),
        (vec![In(0, ints(&[1, 2])), Eq(1, int(5))], "m1 m2 m3 m4 md"),
        (vec![Eq(0, int(3))], "md"),
        (vec![Eq(0, int(5))], "m5 md"),
        (vec![Eq(0, int(4))], "md"),
        (vec![IsNull(0)], "md"),
        (vec![IsNull(1)], "md"),
        (vec![Eq(0, int(1)), IsNull(1)], "md"),
        (vec![Eq(0, int(5)), Gt(1, int(100))], "m5"),
        (vec![Eq(0, int(5)), Lt(1, int(0))], "md"),
        (vec![Lt(0, int(3))], "m1 m2 m3 m4 md"),
        (vec![Le(0, int(3))], "m1 m2 m3 m4 md"),
        (vec![Ge(0, int(3))], "m4 m5 md"),
        (vec![Gt(0, int(4))], "m5 md"),
        (vec![Ge(0, int(5))], "m5 md"),
        (vec![Gt(0, int(5))], "md"),
        (vec![Eq(0, int(1)), In(1, ints(&[5, 15]))], "m1 m2 m3 md"),
        (vec![Ge(0, int(1)), Ge(1, int(15))], "m2 m3 m4 m5 md"),
        (vec![Le(0, int(1)), Lt(1, int(15))], "m1 m2"),
        (vec![Lt(0, int(2)), Lt(1, int(15))], "m1 m2 m3 md"),
        (vec![Eq(0, int(2)), Lt(1, int(0))], "m3"),
        (vec![Eq(0, int(0))], "m1 md"),
        (vec![IsNotNull(0)], all),
        (vec![IsNotNull(0), IsNotNull(1)], all),
        (vec![Eq(0, int(1)), Eq(1, int(10))], "m2"),
        (vec![Eq(0, int(1)), Ge(1, int(20))], "m3"),
    ];
    check(&t, &cases, no_hash);
}

// PostgreSQL 15:
//   create table q (a int, b int) partition by range (a, b);
//   create table q1 partition of q for values from (1, 0) to (1, 10);
//   create table q3 (a int, b int) partition by range (a, b);
//   create table q31 partition of q3 for values from (1, 0) to (1, 10);
//   create table q32 partition of q3 for values from (1, 10) to (1, 20);
//   explain (costs off) select * from q where a > 1;   -- scans q1 (!)
//   explain (costs off) select * from q3 where a > 1;  -- scans nothing
// With two bounds PostgreSQL's binary search stops on the first one, and its walk along the
// bounds equal to the prefix never leaves offset 0, so q1 is kept: a superset, kept as is.
#[test]
fn range_prefix_walk_quirk() {
    use RangeValue::Value;
    let b = |a0: i32, b0: i32, a1: i32, b1: i32| {
        range(
            vec![Value(int(a0)), Value(int(b0))],
            vec![Value(int(a1)), Value(int(b1))],
        )
    };
    let mut q = Table::new(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Int4]);
    q.add("q1", b(1, 0, 1, 10));
    check(
        &q,
        &[
            (vec![Gt(0, int(1))], "q1"),
            (vec![Ge(0, int(1))], "q1"),
            (vec![Lt(0, int(1))], ""),
            (vec![Le(0, int(1))], "q1"),
            (vec![Eq(0, int(1))], "q1"),
        ],
        no_hash,
    );
    let mut q3 = Table::new(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Int4]);
    q3.add("q31", b(1, 0, 1, 10)).add("q32", b(1, 10, 1, 20));
    check(
        &q3,
        &[
            (vec![Gt(0, int(1))], ""),
            (vec![Lt(0, int(1))], ""),
            (vec![Le(0, int(1))], "q31 q32"),
            (vec![Ge(0, int(1))], "q31 q32"),
        ],
        no_hash,
    );
}

// PostgreSQL 15: explain (costs off) select * from l where <conds>. Ranges over a list keep
// the default partition; equality keeps it only when the value is not listed.
#[test]
fn list_text() {
    let t = table_l();
    let s = |x: &str| txt(x);
    let cases = vec![
        (vec![Eq(0, s("a"))], "l1"),
        (vec![Eq(0, s("z"))], "ld"),
        (vec![In(0, vec![s("a"), s("c")])], "l1 l2"),
        (vec![In(0, vec![s("a"), s("z")])], "l1 ld"),
        (vec![Lt(0, s("c"))], "l1 ld"),
        (vec![Gt(0, s("x"))], "l3 ld"),
        (vec![Ge(0, s("y"))], "l3 ld"),
        (vec![Gt(0, s("y"))], "ld"),
        (vec![IsNull(0)], "lnull"),
        (vec![IsNotNull(0)], "l1 l2 l3 ld lnull"),
        (vec![Gt(0, s("b")), Lt(0, s("c"))], "ld"),
        (vec![Eq(0, s("a")), Eq(0, s("b"))], ""),
        (vec![Le(0, s("a"))], "l1 ld"),
        (vec![Lt(0, s("a"))], "ld"),
        (vec![Eq(0, s("x"))], "lnull"),
        (vec![In(0, vec![s("x"), Datum::Null])], "lnull"),
        (vec![Ge(0, s("b")), Le(0, s("c"))], "l1 l2 ld"),
        (vec![Gt(0, s("c")), Lt(0, s("x"))], "ld"),
    ];
    check(&t, &cases, no_hash);
}

// PostgreSQL 15: explain (costs off) select * from ln / lo where <conds> (no default).
#[test]
fn list_without_default() {
    let t = table_ln();
    let cases = vec![
        (vec![Eq(0, int(4))], ""),
        (vec![Lt(0, int(3))], "ln1"),
        (vec![Gt(0, int(7))], ""),
        (vec![Gt(0, int(5))], "ln5"),
        (vec![IsNull(0)], ""),
        (vec![IsNotNull(0)], "ln1 ln2 ln5"),
        (vec![Ge(0, int(3)), Le(0, int(5))], "ln2 ln5"),
        (vec![In(0, ints(&[4, 6]))], ""),
        (vec![In(0, ints(&[1, 6]))], "ln1"),
    ];
    check(&t, &cases, no_hash);
    let t = table_lo();
    let cases = vec![
        (vec![IsNull(0)], "lonull"),
        (vec![IsNotNull(0)], "lo1"),
        (vec![Eq(0, int(1))], "lo1"),
        (vec![Eq(0, int(2))], ""),
        (vec![Gt(0, int(0))], "lo1"),
    ];
    check(&t, &cases, no_hash);
}

// PostgreSQL 15: explain (costs off) select * from h where <conds>. Only equality (or IS
// NULL) prunes hash partitions; a remainder no partition owns leaves nothing.
#[test]
fn hash_one_column() {
    let t = table_h();
    let all = "h0 h1 h2 h6";
    let mut cases = vec![
        (vec![In(0, ints(&[1, 2]))], "h0 h2"),
        (vec![IsNull(0)], "h0"),
        (vec![Lt(0, int(5))], all),
        (vec![Eq(0, int(1)), Eq(0, int(2))], ""),
        (vec![IsNotNull(0)], all),
        (vec![In(0, ints(&[0, 3]))], "h0 h1"),
        (vec![In(0, ints(&[3, 5]))], "h1"),
    ];
    for (value, part) in [
        (0, "h0"),
        (1, "h0"),
        (2, "h2"),
        (3, "h1"),
        (4, ""),
        (5, "h1"),
        (6, ""),
        (7, ""),
        (8, "h1"),
    ] {
        cases.push((vec![Eq(0, int(value))], part));
    }
    check(&t, &cases, int4_hash);
}

// PostgreSQL 15: explain (costs off) select * from hh where <conds>. Every key column needs
// an equality or IS NULL; an IN list's elements are pruned one by one on their own, so they
// never combine with the other column's equality.
#[test]
fn hash_two_columns() {
    let t = table_hh();
    let all = "hh0 hh1 hh2";
    let cases = vec![
        (vec![Eq(0, int(1)), Eq(1, txt("x"))], "hh1"),
        (vec![Eq(0, int(1))], all),
        (vec![Eq(0, int(1)), IsNull(1)], "hh2"),
        (vec![IsNull(0), IsNull(1)], "hh0"),
        (vec![In(0, ints(&[1, 2])), Eq(1, txt("x"))], all),
        (vec![Eq(0, int(1)), In(1, vec![txt("x"), txt("y")])], all),
        (vec![IsNull(0)], all),
        (vec![Eq(0, int(1)), Eq(0, int(2)), Eq(1, txt("x"))], ""),
    ];
    check(&t, &cases, int4_text_hash);
}

#[test]
fn no_partitions() {
    let t = Table::new(PartitionStrategy::Range, &[TypeId::Int4]);
    assert_eq!(t.prune(&[Eq(0, int(1))], no_hash), "");
    assert_eq!(t.prune(&[], no_hash), "");
    // A condition past the key's width is ignored.
    assert_eq!(table_rn().prune(&[Eq(3, int(1))], no_hash), "rn1 rn2 rn3");
}

// 8,192 hash partitions of modulus 8192 and 8,192 list partitions: point lookups touch one.
#[test]
fn many_partitions() {
    let h = key(PartitionStrategy::Hash, &[TypeId::Int4]);
    let parts: Vec<(Oid, PartitionBound)> = (0..8192).map(|r| (r as Oid, hash(8192, r))).collect();
    let desc = PartitionDesc::new(&h, &parts).unwrap();
    let by_value = |row: &[Datum]| match row {
        [Datum::Int4(v)] => *v as u64 * 7,
        _ => 0,
    };
    let r = desc.prune(&[Eq(0, int(1000))], by_value);
    assert_eq!(r.partitions, vec![7000]);
    assert_eq!(desc.route(&[int(1000)], by_value), Some(7000));
    assert_eq!(
        desc.prune(&[Lt(0, int(3))], by_value).partitions.len(),
        8192
    );
    let l = key(PartitionStrategy::List, &[TypeId::Int4]);
    let parts: Vec<(Oid, PartitionBound)> = (0..8192)
        .map(|i| (i as Oid, list(vec![int(2 * i), int(2 * i + 1)])))
        .collect();
    let desc = PartitionDesc::new(&l, &parts).unwrap();
    assert_eq!(
        desc.prune(&[Eq(0, int(9001))], no_hash).partitions,
        vec![4500]
    );
    assert_eq!(
        desc.prune(&[In(0, ints(&[1, 9001, 16383]))], no_hash)
            .partitions,
        vec![0, 4500, 8191]
    );
    assert_eq!(
        desc.prune(&[Ge(0, int(16380))], no_hash).partitions,
        vec![8190, 8191]
    );
}
