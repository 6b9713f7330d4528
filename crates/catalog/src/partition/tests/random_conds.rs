//! Random AND-ed conditions on the tables of tests/mod.rs. Each line is `<where clause> =>
//! <partitions>`, the partitions PostgreSQL 15.18 scans for
//! `explain (costs off) select * from <table> where <where clause>` (nothing after `=>`: a
//! Result with One-Time Filter: false). The clauses are read the way PostgreSQL's parser
//! reads them: `x in (v)` with one value is `x = v`, a longer list is `x = ANY(...)`.

use super::*;

/// One condition of the tiny where-clause language above; column `a` is key column 0 and
/// `b` key column 1, values are int4 or 'text' literals.
fn cond(text: &str) -> PruneCond {
    let value = |s: &str| match s.trim() {
        "null" => Datum::Null,
        s if s.starts_with('\'') => txt(s.trim_matches('\'')),
        s => int(s.parse().unwrap()),
    };
    let (col, rest) = text.split_once(' ').unwrap();
    let k = match col {
        "a" => 0,
        "b" => 1,
        _ => panic!("{text}"),
    };
    if rest == "is null" {
        return PruneCond::IsNull(k);
    }
    if rest == "is not null" {
        return PruneCond::IsNotNull(k);
    }
    if let Some(list) = rest.strip_prefix("in (") {
        let values: Vec<Datum> = list.trim_end_matches(')').split(", ").map(value).collect();
        return match values.as_slice() {
            [one] if !one.is_null() => PruneCond::Eq(k, one.clone()),
            _ => PruneCond::In(k, values),
        };
    }
    let (op, v) = rest.split_once(' ').unwrap();
    let v = value(v);
    match op {
        "=" => PruneCond::Eq(k, v),
        "<" => PruneCond::Lt(k, v),
        "<=" => PruneCond::Le(k, v),
        ">" => PruneCond::Gt(k, v),
        ">=" => PruneCond::Ge(k, v),
        _ => panic!("{text}"),
    }
}

fn check(t: &Table, hash: impl Fn(&[Datum]) -> u64 + Copy, cases: &str) {
    let mut wrong = Vec::new();
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let (clause, expected) = line.split_once("=>").unwrap();
        let conds: Vec<PruneCond> = clause.trim().split(" and ").map(cond).collect();
        let got = t.prune(&conds, hash);
        if got != expected.trim() {
            wrong.push(format!(
                "{clause}=> {got} (PostgreSQL: {})",
                expected.trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn on_r() {
    check(
        &table_r(),
        no_hash,
        "
a >= 5 and a >= 99 and a is not null and a > 15 => rd rmax
a > 35 and a > 30 and a in (-9, 0, 19) =>
a in (19, 100, 5) and a > 5 and a > -20 => r1 r2 rmax
a is null and a in (9, 35) and a in (0, 10, 25, 19) =>
a <= 19 and a < -9 and a = 0 and a > 20 =>
a > 15 and a is not null => r2 r3 rd rmax
a is null and a < 15 and a >= 0 =>
a is not null and a is null and a in (-11, 100, 99, 25) =>
a > -11 => r1 r2 r3 rd rmax rneg
a < 40 and a > 39 => r3
a < 0 and a = 150 =>
a in (10, -20) => r2 rneg
a > 5 => r1 r2 r3 rd rmax
a is not null and a is not null and a is null and a is null =>
a <= 15 and a > 1 => r1 r2
a = -9 and a = 9 and a = 5 =>
a = 30 and a = 40 and a >= 1 and a < 30 =>
a <= -20 => rneg
a >= 39 and a in (39, 19, 1, null) and a < 20 =>
a < -11 and a = 10 and a < 19 and a > 100 =>
a < 150 => r1 r2 r3 rd rmax rneg
a <= 9 and a < 5 and a is null =>
a >= 10 and a is not null => r2 r3 rd rmax
a >= 19 and a > 20 and a is null and a >= 5 =>
a >= 25 and a >= 30 and a in (99, 0, -10, 40) and a >= 9 => rd
a <= 39 and a = 150 and a < 0 and a is null =>
a < 100 and a = 10 and a is null =>
a >= -10 and a < -9 => rd
a is null and a > 100 and a <= 15 =>
a < 0 and a is null =>
a = 150 and a is null and a <= 40 =>
a <= 30 and a <= 0 and a >= -20 => rd rneg
a is null => rd
a >= 20 and a in (100, 35, 99) and a <= 25 and a in (20, 1, -10) =>
a <= 35 and a in (0, -9) and a < -10 =>
a > 40 and a in (15, 39, 150, -11) and a > 15 and a >= 19 => rmax
a >= 20 => r3 rd rmax
a = 20 and a in (1, 15) and a <= -9 =>
a is null and a > 0 and a in (20, 30, 9, null) and a in (150, 40, 30, 35) =>
a is not null => r1 r2 r3 rd rmax rneg
a > -11 and a < 10 and a in (-10, 19, 39) and a >= 30 =>
a < -20 and a is null and a > -20 and a >= -11 =>
a <= 9 => r1 rd rneg
a < 0 and a >= 20 =>
a <= -9 => rd rneg
a = 100 and a is not null and a = 0 =>
a = 35 and a in (0, 5) and a is not null =>
a = -10 => rd
a > 5 and a is not null => r1 r2 r3 rd rmax
a is null => rd
a > 20 and a <= 39 and a <= 10 =>
a is null and a is null and a < 10 and a <= 19 =>
a < 20 => r1 r2 rd rneg
a > 0 and a is not null and a is not null and a is not null => r1 r2 r3 rd rmax
a > 1 and a is null and a in (1, 100, 10) =>
a in (-10, 35, 40, 15) and a > 39 and a >= 35 and a < 0 =>
a >= 10 and a < 0 and a < 99 and a is not null =>
a < 10 and a <= 99 => r1 rd rneg
a in (1, 35, 9) and a < 40 and a = 30 =>
a > -11 and a <= 5 and a <= -9 => rd rneg
a = -9 => rd
a > 39 and a = 15 =>
a >= -20 and a is not null and a is null =>
a <= -10 and a < 1 => rd rneg
a > 25 and a in (25, -10) =>
a < 100 => r1 r2 r3 rd rneg
a in (-11, 150) and a is not null => rmax rneg
a > -10 and a is not null => r1 r2 r3 rd rmax
a in (-11, 35, 30, 19) and a < 1 and a >= 0 and a in (-20, 25) =>
a <= -11 and a <= 20 and a > 9 and a <= 15 =>
a in (20, -11, -20) => rd rneg
a > 40 and a > 40 and a <= 100 and a < -9 =>
a is not null => r1 r2 r3 rd rmax rneg
a is null and a = 99 and a > 100 =>
a = -10 and a < -9 and a is null and a < 100 =>
a is not null and a < 25 and a <= 5 and a <= 39 => r1 rd rneg
a > -11 and a >= 25 => r3 rd rmax
a in (150, 39, -11, -20) => r3 rmax rneg
a in (-20, 0, 15) and a is null and a is not null =>
a = -20 and a is null =>
a is null => rd
a is null and a is null => rd
a = 1 => r1
a < 39 and a > 1 and a is null and a in (30, 15, 25) =>
a is not null => r1 r2 r3 rd rmax rneg
a is not null and a is not null and a = -10 => rd
a in (-20, -10, null) => rd rneg
a in (9, -9, -11, -20) => r1 rd rneg
a in (-11, 5, 10, 99, null) => r1 r2 rd rneg
a < 99 and a is not null and a > 35 and a < 35 =>
a is not null => r1 r2 r3 rd rmax rneg
a <= 1 and a <= 5 and a in (25, -20) and a is not null => rneg
a in (10, 20, 5) and a <= -20 and a >= 40 and a in (40, 30, 150, 10) =>
a is null and a is null => rd
a is not null => r1 r2 r3 rd rmax rneg
a in (15, -9) and a in (150, 19, 35, 30, null) and a is null and a is null =>
a is null and a > 9 and a in (100, 1) =>
a in (-20, 35, 5, 150) and a is null =>
a is not null and a is null and a > -20 =>
a <= 15 and a in (1, 150, 19) and a <= 39 and a < 150 => r1 r2
a < 20 => r1 r2 rd rneg
a is not null and a >= 0 and a is null =>
a < 100 => r1 r2 r3 rd rneg
a = 5 and a < -10 and a is null =>
a = -9 and a < 9 and a >= -10 and a < 100 => rd
a >= -10 => r1 r2 r3 rd rmax
a is not null and a > 40 => rd rmax
a = 9 => r1
a < -9 and a >= 25 =>
a = 19 and a < 15 and a is not null =>
a <= 99 and a is null and a >= 150 and a > 100 =>
a = 40 and a >= 150 and a is not null =>
a is not null and a <= 40 and a in (5, 99, null) and a in (-20, 150, -9) =>
a is not null and a >= 5 and a = 30 => r3
a > -11 and a > 25 => r3 rd rmax
a < 39 and a >= -10 => r1 r2 r3 rd
a > 39 and a > 5 and a >= 100 => rmax
a < 100 => r1 r2 r3 rd rneg
a is null and a <= -9 and a is null and a > 30 =>
a in (19, 99) and a <= 0 and a = 19 =>
",
    );
}

#[test]
fn on_rn() {
    check(
        &table_rn(),
        no_hash,
        "
a >= -11 and a >= 9 => rn1 rn2 rn3
a = 99 and a > -11 and a <= 1 =>
a <= 30 => rn1 rn2 rn3
a >= -20 => rn1 rn2 rn3
a in (-10, 100, 99, 150) and a is null and a < 30 =>
a is not null and a is not null and a < 5 => rn1
a = -11 and a < 0 =>
a <= 20 and a = 150 and a <= 0 and a < 5 =>
a = 39 and a >= 25 => rn3
a is null and a < 9 and a <= 25 =>
a = 5 => rn1
a < -9 =>
a = 40 =>
a >= 15 and a <= 15 => rn2
a = -10 and a is null and a is null =>
a < -11 and a < 0 =>
a > 15 and a = 19 and a is null and a >= -9 =>
a < 150 and a is not null and a >= 19 and a is not null => rn2 rn3
a > 30 => rn3
a <= -11 and a in (15, 5, -10) and a >= 9 and a > 35 =>
a is null =>
a < 19 and a > 40 and a < -10 =>
a >= 1 and a >= 5 and a in (-10, 30) and a <= 40 => rn3
a >= -9 and a > 25 and a <= 39 => rn3
a > 15 and a <= 150 and a = 99 and a <= 15 =>
a <= 39 and a < 19 and a in (5, 20, 0, -20) and a is not null => rn1
a = 20 =>
a is null and a is not null =>
a = 25 and a <= 99 =>
a is null and a is not null =>
a = -11 and a in (19, 20, 30, -11) =>
a is not null => rn1 rn2 rn3
a > -11 and a >= 99 and a is null and a is null =>
a >= 25 and a is not null and a = -10 =>
a = 15 => rn2
a < 150 and a = 100 and a is null =>
a <= 9 and a is not null and a is null and a < -10 =>
a is not null and a <= 1 and a >= 25 =>
a <= 0 =>
a = 35 and a is null and a >= -9 and a < 35 =>
a < 10 => rn1
a is not null and a is not null and a <= 1 and a > 150 =>
a > -20 and a is not null and a is null and a is not null =>
a <= 35 => rn1 rn2 rn3
a < 25 => rn1 rn2
a < 39 and a < 20 => rn1 rn2
a is null =>
a = 99 and a is null =>
a is null and a in (20, -20) and a is not null and a in (150, -20, 100, null) =>
a >= -11 and a is not null and a > 10 and a > 40 =>
a is not null and a >= 30 and a <= 99 and a = 0 =>
a >= 20 => rn3
a in (9, 1) and a > 0 and a is null and a in (9, 150) =>
a is not null and a is not null and a is not null => rn1 rn2 rn3
a = 9 and a < 25 and a >= 40 =>
a in (150, 100, 15, 35) and a is not null and a = 10 and a < 5 =>
a is null and a >= 19 and a <= -11 and a in (19, 35) =>
a is null and a > 20 =>
a in (25, 19, 1) => rn1 rn2
a > 39 => rn3
",
    );
}

#[test]
fn on_m() {
    check(
        &table_m(),
        no_hash,
        "
a in (2, 100) and b <= 0 and b is null and a < 6 =>
a in (20, -1, 5, 3) and b >= 1 and b in (1, 4, 15) and b is not null => m1 m5 md
a <= 10 and a < -1 => m1 md
a in (3, 1, 0, 2) and a > 5 and a > 5 =>
b < 15 => m1 m2 m3 m4 m5 md
a <= 3 and a <= 1 and b <= 20 and b < 3 => m1
b <= 2 => m1 m2 m3 m4 m5 md
a > 15 => md
a = 2 and a <= -1 =>
a > 4 and a in (0, 2, 10, 3) => md
b is null and b is null and a is not null and b < 15 =>
a = 2 and a > -1 and a in (4, 3, null) and b > 15 =>
b = 10 and b < 1 =>
a in (20, -1, 10, 4) and b < 3 and b <= 100 => m1 md
a in (0, 1, 5, 20) => m1 m2 m3 m5 md
b >= 0 and a <= 20 and a >= 10 and a is not null =>
a in (15, 0, 1, 5) and a >= 6 and b <= 20 and b <= 20 => md
a > 2 => m4 m5 md
a in (20, 2, 10) => m3 m4 md
a > -1 => m1 m2 m3 m4 m5 md
b is not null => m1 m2 m3 m4 m5 md
a = 5 and a > 0 => m5 md
b is null => md
a in (4, 20, null) and a < 3 and a is null and b in (20, 3, null) =>
b >= 0 and a >= 2 and a >= 3 and b > 1 => m5 md
a > 2 and a <= 2 =>
a <= 4 => m1 m2 m3 m4 md
b = 100 and b is null =>
b is null and b >= 4 and a is null and a > 5 =>
a in (15, 10) => md
a in (1, 100, 10, 6) and a = 4 and a >= 3 =>
b = -1 and b > 6 and b = -1 =>
b in (10, 2) and b is not null => m1 m2 m3 m4 m5 md
a < 20 and a is not null and b > 0 and a > 0 => m1 m2 m3 m4 m5 md
b <= 10 and a <= -1 => m1
a < 2 and a is not null and b in (100, -1, 15, 20, null) => m1 m2 m3 md
b >= 10 and b = 15 => m1 m2 m3 m4 m5 md
b < 10 => m1 m2 m3 m4 m5 md
a is not null => m1 m2 m3 m4 m5 md
a < 4 and b < 15 => m1 m2 m3 m4 md
b > 15 and a <= 0 and b = 4 and b is null =>
a < 0 and a < 1 and b <= 3 and b in (0, 4, 5) => m1 md
a in (3, 100) and a <= 2 =>
a >= 6 => md
a is not null and a > 4 => m5 md
b = 3 and a >= 10 and a is not null => md
a is null => md
a < 6 and a >= 1 and b <= -1 and a in (20, 10) =>
b in (-1, 1, 0, 100) and a >= 2 => m3 m4 m5 md
a in (1, 4) => m1 m2 m3 md
b >= 1 and b is null =>
a <= 1 and b >= 1 => m1 m2 m3 md
b = 1 => m1 m2 m3 m4 m5 md
a in (2, 4, -1, 0) and b is not null and b >= 6 => m1 m3 m4 md
b is null and b = 20 =>
a is null and a in (6, 4, 2, 15) =>
a is null and a >= 0 =>
a = 5 => m5 md
a < 10 and b < 3 and b <= 4 => m1 m2 m3 m4 m5 md
b is not null and a = 2 and b > 3 and a > 3 =>
b in (100, 6, 0) and a in (3, 20, 6, null) and b = 10 and a > 0 =>
b is not null => m1 m2 m3 m4 m5 md
b >= 20 and b is null =>
b in (10, 100, 5, 20) => m1 m2 m3 m4 m5 md
b > 6 and b is not null => m1 m2 m3 m4 m5 md
a is not null => m1 m2 m3 m4 m5 md
a < 5 and b in (4, 2, 1, 20) and a >= 5 and b >= -1 =>
b = 2 and a is not null and a in (6, -1, 100) => m1 md
b = 20 and b = 1 =>
a in (20, -1, 15, 10) and a = 10 => md
a >= 100 and b < 5 => md
a is not null and a < 10 => m1 m2 m3 m4 m5 md
a in (0, -1, 1, null) and a > 1 and b < 0 and a is null =>
b > 6 and a < 6 and a < 5 => m1 m2 m3 m4 md
b <= 6 and a is not null and a in (10, 15, 100, 20) and b in (2, 6, 3) => md
a is not null => m1 m2 m3 m4 m5 md
b >= 15 => m1 m2 m3 m4 m5 md
a = -1 => m1 md
a <= 1 and b > 5 => m1 m2 m3 md
a is null => md
a is not null and b = -1 => m1 m2 m3 m4 m5 md
b = 5 and a < 4 => m1 m2 m3 m4 md
b <= 5 and b > 20 and b <= 6 =>
b <= 10 and b is not null => m1 m2 m3 m4 m5 md
b < 0 and b > 2 and a > 6 =>
b = 0 and b is null =>
a < -1 => m1 md
b >= 0 and b >= 20 and a > 0 and b < 3 =>
b = 1 and a >= -1 and b < 10 and a is not null => m1 m2 m3 m4 m5 md
a is null and a in (1, -1, 5, null) =>
b is not null and a <= 100 => m1 m2 m3 m4 m5 md
a is null and b = 1 and b <= 2 and b is not null => md
b >= 10 => m1 m2 m3 m4 m5 md
a in (6, 15) and b > 20 => md
a <= 3 and b >= 10 and b <= 4 and a > 100 =>
a < 100 and a >= 1 and b is null => md
b is null and a in (100, 0, 3, 10) => md
a >= 1 => m1 m2 m3 m4 m5 md
b <= 6 and a = -1 and a is not null and a > 10 =>
a is not null and a is null and b is null =>
b > -1 and b >= 4 and b <= 0 =>
b <= 6 and a >= 20 => md
b is not null and a is null and b <= 100 => md
b is null and a > 20 and a is not null and a >= 10 => md
b > 6 and b <= -1 and a < -1 and a is null =>
b is not null and a is null and b < 2 and a is not null =>
b > 100 and a < 1 and b = 1 and b = 5 =>
a = 15 and b <= 5 and b < 100 and b >= 4 =>
b is not null and a in (0, 1, -1, 100) and b > 0 => m1 m2 m3 md
a in (-1, 100, 20) and b > -1 and b = 20 and b < 20 =>
a = 100 and a in (5, 10) and a is null =>
b >= 3 and a is not null and a is null =>
b in (10, 2, 0) and a is not null => m1 m2 m3 m4 m5 md
a is not null and a = -1 => m1 md
b >= 15 and b = 6 and a in (15, 2, 5) and a <= 15 =>
b < 0 and b >= 10 =>
b is not null and a > 3 => m5 md
b < 10 and a is null and b >= 10 and a is not null =>
a is not null and b is not null and a < 2 => m1 m2 m3 md
b < 1 => m1 m2 m3 m4 m5 md
a >= 2 and b is null and b > 5 =>
a <= 6 and b is null and b > 4 =>
b is not null and b is null and b > 100 =>
a is null and a = -1 and b = 20 =>
b is null and b <= 100 and b > 6 and a is null =>
a >= 4 and b in (15, 10, 2) and b <= 10 and b >= 1 => m5 md
a <= 20 and a < 2 and b > 0 => m1 m2 m3 md
a is not null and a >= 2 => m3 m4 m5 md
a <= 1 => m1 m2 m3 md
b > 3 and a >= 4 and b > 1 => m5 md
a <= 4 => m1 m2 m3 m4 md
a is null and b is null and b is null => md
b < 1 and a is not null => m1 m2 m3 m4 m5 md
b = 6 and b < 100 and a <= 5 and a is null =>
b >= 5 and a in (10, 20) => md
b < 20 and a < 5 => m1 m2 m3 m4 md
a <= 5 and a < 15 and a < 6 and a is not null => m1 m2 m3 m4 m5 md
b is null => md
b >= 6 and b = 15 and b <= 1 =>
b <= 100 and a > 4 and a < 15 => m5 md
b < 6 => m1 m2 m3 m4 m5 md
a is not null and a < 15 => m1 m2 m3 m4 m5 md
b in (-1, 3, 1) and a is not null => m1 m2 m3 m4 m5 md
a = 5 and a > 3 and a <= 10 => m5 md
a is not null and a = 3 => md
a >= 6 and b <= 1 and b <= 4 => md
b < 1 and a <= 6 and b >= 3 =>
a > 15 => md
b in (1, 6, 0) and a <= 20 and a >= 1 and b is not null => m1 m2 m3 m4 m5 md
a > 3 and b >= 20 and a in (15, 20, 1, 0, null) => md
",
    );
}

#[test]
fn on_l() {
    check(
        &table_l(),
        no_hash,
        "
a in ('', 'a', 'y', null) => l1 l3 ld
a < 'd' and a is null =>
a is not null and a is not null and a is null and a in ('x', 'b', 'a', 'y') =>
a in ('', 'x') and a in ('c', 'z', 'b') and a >= '' =>
a <= 'y' and a <= '' => ld
a = 'a' => l1
a = 'a' and a is null =>
a < 'c' and a is null and a > '' =>
a is not null and a = 'c' and a is null =>
a < 'y' => l1 l2 ld lnull
a in ('c', 'd', 'z', 'b') and a is not null => l1 l2 ld
a in ('c', '', 'x') => l2 ld lnull
a <= 'z' => l1 l2 l3 ld lnull
a = '' and a is not null and a is not null and a is not null => ld
a < '' => ld
a in ('b', '') and a < 'y' and a is null and a is null =>
a in ('y', 'a', 'c', 'z', null) and a in ('', 'z', 'd', 'y', null) and a <= 'b' =>
a is not null and a > 'y' => ld
a in ('b', 'y') and a = '' =>
a = 'd' => ld
a < 'x' => l1 l2 ld
a > 'x' => l3 ld
a in ('x', 'c', 'z') => l2 ld lnull
a <= 'x' and a is null and a is not null and a <= 'x' =>
a = 'a' => l1
a is null and a is null => lnull
a < '' => ld
a > 'b' => l2 l3 ld lnull
a < 'z' and a <= 'b' and a <= 'z' => l1 ld
a = 'a' and a >= 'y' and a <= 'y' and a >= 'y' =>
a = 'a' and a < 'd' and a < 'd' and a = '' =>
a > 'b' => l2 l3 ld lnull
a in ('', 'd', 'z', 'y') => l3 ld
a in ('c', 'y', 'x', 'z') => l2 l3 ld lnull
a <= 'a' and a >= 'c' and a < 'd' =>
a < 'y' and a = 'x' and a > 'd' => lnull
a >= 'z' and a is not null and a < 'x' =>
a >= 'b' and a < 'b' and a in ('d', '') =>
a is not null and a < 'd' => l1 l2 ld
a < 'x' and a >= 'z' and a is null and a is null =>
a is null and a is null and a < '' =>
a is null => lnull
a >= 'y' and a = 'a' and a = 'x' =>
a is null => lnull
a in ('y', 'c') and a >= 'b' and a > 'd' => l3
a is null and a is not null and a <= '' =>
a is null and a < 'c' =>
a is not null and a = 'z' and a < 'b' =>
a = 'b' and a >= 'z' and a <= 'y' and a in ('d', 'c', null) =>
a >= 'z' and a < 'z' and a is not null and a is null =>
a > 'd' => l3 ld lnull
a <= 'y' and a < 'd' and a is null and a <= 'y' =>
a = '' and a in ('b', 'a') and a = 'd' =>
a <= 'd' => l1 l2 ld
a < 'y' => l1 l2 ld lnull
a is null and a in ('b', 'd') and a >= 'x' and a = 'a' =>
a in ('d', 'x', 'y', 'z') and a <= 'y' and a is not null and a is not null => l3 ld lnull
a <= 'b' and a in ('c', 'z') =>
a is null and a is not null and a is not null and a >= 'a' =>
a <= 'x' and a <= 'y' => l1 l2 ld lnull
a < 'z' and a is null and a is null =>
a >= 'x' and a >= 'z' and a = 'y' =>
a is not null and a is null and a < 'c' and a < 'y' =>
a > 'z' and a < '' =>
a < 'c' and a = 'x' =>
a <= 'c' => l1 l2 ld
a > 'd' and a in ('d', 'b', 'c', '', null) =>
a < 'x' and a is not null and a = 'x' and a is not null =>
a < '' and a in ('y', 'c') =>
a < 'x' and a in ('b', 'd') and a = 'y' =>
a = 'y' => l3
a < 'y' and a > 'a' and a > 'b' => l2 ld lnull
a > 'y' and a = '' and a <= 'd' and a in ('b', 'c', 'd') =>
a <= 'a' and a is not null => l1 ld
a is null and a <= 'z' and a is null =>
a in ('a', 'd') => l1 ld
a < 'z' and a in ('z', 'd') and a < 'd' =>
a >= 'b' and a is null and a > 'y' =>
a in ('', 'x', 'y') and a <= 'c' and a < 'z' => ld
a <= 'z' and a <= 'z' and a is null =>
a < 'z' and a <= 'c' and a > 'd' and a >= 'b' =>
a is not null => l1 l2 l3 ld lnull
a in ('x', '', 'b', 'a', null) and a <= 'a' and a is null and a > 'a' =>
a is null and a > 'x' and a = 'd' and a < 'y' =>
a is not null and a <= 'd' => l1 l2 ld
a <= 'x' => l1 l2 ld lnull
a < 'b' and a in ('d', 'z', 'a', 'x') and a <= 'x' and a > 'y' =>
a = 'z' and a <= '' =>
a is not null and a = 'a' and a < 'a' and a is null =>
a > 'z' and a <= 'd' and a is not null =>
a > 'z' => ld
a is null and a <= 'd' and a <= 'a' and a < 'y' =>
a is not null and a in ('a', '', 'z') and a in ('d', 'b', 'y') and a < 'b' =>
a >= 'd' and a in ('a', 'c', 'y', 'x') => l3 lnull
a <= 'a' and a < 'b' => l1 ld
a > 'b' and a < '' =>
a in ('a', '', 'b', 'x') and a > 'd' => ld lnull
a in ('a', 'y', 'c') and a < 'd' and a is null =>
a >= 'a' => l1 l2 l3 ld lnull
a in ('y', 'c', 'z', null) and a >= '' and a <= 'd' and a in ('z', '') =>
",
    );
}

#[test]
fn on_ln() {
    check(
        &table_ln(),
        no_hash,
        "
a > 0 and a is null and a in (0, 6, 4, 3) =>
a < 0 and a <= 0 =>
a is not null => ln1 ln2 ln5
a > 2 and a = 8 =>
a is not null and a = 1 and a is not null => ln1
a is null and a >= 2 and a >= 4 and a = 0 =>
a > 1 and a >= 0 and a = 8 =>
a is not null and a is null and a is not null =>
a is null and a > 7 and a is not null =>
a < 3 => ln1
a is null and a <= 8 and a < 2 =>
a is null and a in (5, 4, 2, null) =>
a < 6 and a > 2 and a = 6 =>
a is not null and a > 6 => ln5
a <= 2 and a = 5 and a > 7 =>
a is null and a is not null and a >= 0 and a >= 4 =>
a < 1 =>
a is null and a is not null and a in (2, 4, 1) and a >= 4 =>
a = 1 and a < 8 and a < 8 and a >= 3 =>
a = 2 => ln1
a is null and a >= 3 and a >= 8 and a = 2 =>
a in (4, 2, 3, 1) => ln1 ln2
a in (3, 8, 6) and a in (4, 5) =>
a in (1, 2, 6, 3) => ln1 ln2
a is null and a = 1 and a <= 3 =>
a is null and a >= 4 and a > 0 =>
a <= 2 and a >= 2 => ln1
a >= 4 => ln5
a in (6, 0, 3, 7) and a is null and a is null =>
a <= 4 and a in (7, 0) and a < 7 =>
a >= 2 and a = 7 and a is null =>
a = 7 and a <= 1 and a is null and a < 7 =>
a <= 5 and a <= 5 and a >= 4 => ln5
a is null and a > 3 =>
a > 7 and a > 4 and a < 7 =>
a in (8, 0, 2, 5) and a < 1 and a is not null and a is null =>
a > 0 and a < 2 and a is not null => ln1
a <= 6 => ln1 ln2 ln5
a = 0 and a is not null and a is not null and a > 6 =>
a is not null and a is null and a is null =>
a >= 2 and a is not null => ln1 ln2 ln5
a is not null and a = 0 and a is not null =>
a <= 3 => ln1 ln2
a < 7 and a = 4 =>
a < 7 and a < 6 => ln1 ln2 ln5
a = 1 and a > 8 =>
a <= 4 and a > 4 =>
a is null and a < 3 and a = 6 =>
a is not null and a >= 4 => ln5
a <= 8 and a in (1, 7) => ln1 ln5
a > 1 => ln1 ln2 ln5
a <= 5 and a = 0 and a >= 8 and a > 6 =>
a is null and a = 6 and a <= 0 and a > 7 =>
a < 7 => ln1 ln2 ln5
a <= 5 => ln1 ln2 ln5
a < 3 and a > 6 and a >= 1 =>
a <= 1 => ln1
a is not null and a < 8 and a <= 4 => ln1 ln2
a = 0 and a is null =>
a = 3 and a <= 2 and a in (8, 7, 3, 1) =>
",
    );
}

#[test]
fn on_h() {
    check(
        &table_h(),
        int4_hash,
        "
a is not null and a is null =>
a >= 7 => h0 h1 h2 h6
a > 4 and a = 6 and a <= 2 and a in (2, 5, 1) =>
a in (1, 2, 4) and a > 2 and a <= 4 => h0 h2
a is null => h0
a is not null and a is not null => h0 h1 h2 h6
a is not null => h0 h1 h2 h6
a > 8 and a is null and a = 4 =>
a >= 6 and a >= 5 and a = 5 =>
a >= 5 => h0 h1 h2 h6
a is null and a < 0 and a >= 3 and a > 7 =>
a is null and a < 4 =>
a >= 7 => h0 h1 h2 h6
a <= 7 and a is null and a is not null =>
a >= 8 and a <= 7 =>
a > 2 and a < 3 and a < 6 => h0 h1 h2 h6
a <= 4 and a <= 3 and a is null =>
a < 2 and a is null =>
a <= 8 and a in (0, 3, 7, null) and a >= 7 => h0 h1
a = 1 and a < 8 and a > 5 =>
a is not null and a <= 2 and a <= 1 => h0 h1 h2 h6
a is null => h0
a <= 0 and a > 3 and a > 1 =>
a < 1 and a = 6 and a is null and a is not null =>
a is not null => h0 h1 h2 h6
a in (8, 6, 3, 2) and a >= 1 and a <= 3 and a >= 8 =>
a >= 3 and a < 8 and a is not null => h0 h1 h2 h6
a < 0 => h0 h1 h2 h6
a is null => h0
a is not null and a in (3, 2) and a >= 0 and a is not null => h1 h2
a < 6 and a is not null and a in (3, 6, 0, 2) and a in (0, 8, 4) => h0
a > 8 and a is not null and a is not null and a < 5 =>
a < 1 and a > 2 and a is not null and a >= 5 =>
a is null and a < 6 and a = 8 =>
a is null and a = 3 =>
a <= 6 and a >= 3 and a < 0 =>
a <= 3 and a >= 7 and a is not null =>
a > 5 and a = 1 =>
a >= 1 and a is null and a <= 1 =>
a >= 2 and a > 7 and a in (3, 4) =>
a > 6 and a is not null and a is not null and a = 4 =>
a > 4 and a is null and a > 7 =>
a is null => h0
a in (1, 4, null) => h0
a >= 6 and a is null =>
a is not null and a >= 8 and a > 3 and a <= 0 =>
a >= 0 and a <= 1 and a in (5, 8, 2, 3) =>
a = 1 and a = 4 and a is null and a <= 3 =>
a is null => h0
a is null and a <= 2 and a < 3 and a = 6 =>
a > 2 and a is not null and a = 6 =>
a in (7, 5, 3, 4) => h1
a = 1 and a = 8 =>
a = 7 and a = 1 and a in (8, 3) =>
a is not null and a is not null and a in (4, 6) =>
a >= 8 and a = 7 and a in (2, 5, 8, 0) and a >= 2 =>
a is null and a in (7, 8, 0, 5) and a in (8, 5, 4, 2, null) =>
a = 4 and a is null and a = 4 =>
a is null => h0
a = 2 and a < 4 and a is not null => h2
",
    );
}
