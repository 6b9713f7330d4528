//! Row estimates from the statistics of testdata/s1.sql, compared with the `rows=` of
//! PostgreSQL 15's EXPLAIN for the same predicates on the same analyzed table (no indexes).

use crate::select::*;
use crate::tests::{analyze, s1_rows};
use crate::{ColumnStats, TableStats};
use keel_types::{Datum, TypeId};

fn table() -> (Vec<(String, TypeId)>, TableStats) {
    let (cols, rows) = s1_rows();
    let stats = analyze(&cols, &rows);
    (cols, stats)
}

fn col<'a>(cols: &[(String, TypeId)], stats: &'a TableStats, name: &str) -> Column<'a> {
    let i = cols.iter().position(|c| c.0 == name).expect("column");
    let ty = cols[i].1;
    Column {
        ty,
        stats: stats.column(i, ty),
        tuples: stats.reltuples,
        unique: false,
    }
}

fn rows(sel: f64) -> f64 {
    clamp_row_est(5000.0 * sel)
}

fn int(v: i32) -> Datum {
    Datum::Int4(v)
}

fn text(v: &str) -> Datum {
    Datum::Text(v.into())
}

#[test]
fn equality_and_inequality_estimates_match_postgres() {
    let (cols, st) = table();
    let c = |n| col(&cols, &st, n);
    let num = |s: &str| {
        Datum::Numeric(Box::new(
            keel_types::numeric::Numeric::parse(s).expect("numeric"),
        ))
    };
    let cases: Vec<(&str, f64, f64)> = vec![
        ("a = 100", rows(eq_sel(&c("a"), &int(100))), 1.0),
        ("b = 3", rows(eq_sel(&c("b"), &int(3))), 500.0),
        ("c = 'v5'", rows(eq_sel(&c("c"), &text("v5"))), 116.0),
        ("c = 'zzz'", rows(eq_sel(&c("c"), &text("zzz"))), 1.0),
        ("g = 1", rows(eq_sel(&c("g"), &int(1))), 2000.0),
        ("g = 5000", rows(eq_sel(&c("g"), &int(5000))), 1.0),
        ("h = 7", rows(eq_sel(&c("h"), &int(7))), 2.0),
        (
            "a < 1234",
            rows(ineq_sel(&c("a"), Ineq::Lt, &int(1234))),
            1233.0,
        ),
        (
            "a <= 1234",
            rows(ineq_sel(&c("a"), Ineq::Le, &int(1234))),
            1234.0,
        ),
        (
            "a > 4990",
            rows(ineq_sel(&c("a"), Ineq::Gt, &int(4990))),
            10.0,
        ),
        (
            "a >= 4990",
            rows(ineq_sel(&c("a"), Ineq::Ge, &int(4990))),
            11.0,
        ),
        ("a < 0", rows(ineq_sel(&c("a"), Ineq::Lt, &int(0))), 1.0),
        (
            "g < 2750",
            rows(ineq_sel(&c("g"), Ineq::Lt, &int(2750))),
            2749.0,
        ),
        (
            "g > 3000",
            rows(ineq_sel(&c("g"), Ineq::Gt, &int(3000))),
            2000.0,
        ),
        ("g <= 1", rows(ineq_sel(&c("g"), Ineq::Le, &int(1))), 2000.0),
        (
            "c < 'v2'",
            rows(ineq_sel(&c("c"), Ineq::Lt, &text("v2"))),
            1390.0,
        ),
        (
            "c > 'v35a'",
            rows(ineq_sel(&c("c"), Ineq::Gt, &text("v35a"))),
            812.0,
        ),
        (
            "e < 100",
            rows(ineq_sel(&c("e"), Ineq::Lt, &Datum::Float8(100.0))),
            1500.0,
        ),
        (
            "d >= 12.3",
            rows(ineq_sel(&c("d"), Ineq::Ge, &num("12.3"))),
            2500.0,
        ),
        ("c is null", rows(null_test_sel(&c("c"), true)), 714.0),
        ("c is not null", rows(null_test_sel(&c("c"), false)), 4286.0),
        ("a <> 5", rows(neq_sel(&c("a"), &int(5))), 4999.0),
        ("g <> 1", rows(neq_sel(&c("g"), &int(1))), 3000.0),
        ("f", rows(eq_sel(&c("f"), &Datum::Bool(true))), 1666.0),
    ];
    let a = c("a");
    let range = range_sel(
        &a,
        ineq_sel(&a, Ineq::Gt, &int(100)),
        ineq_sel(&a, Ineq::Lt, &int(200)),
    );
    let mut bad = Vec::new();
    for (what, got, want) in cases
        .into_iter()
        .chain([("a > 100 and a < 200", rows(range), 99.0)])
    {
        if got != want {
            bad.push(format!("{what}: keel {got}, PostgreSQL {want}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn join_estimates_match_postgres() {
    let (cols, st) = table();
    let join = |x: &str, y: &str| {
        let (a, b) = (col(&cols, &st, x), col(&cols, &st, y));
        clamp_row_est(5000.0 * 5000.0 * eqjoin_sel(&a, &b))
    };
    // Both sides with MCV lists: matched pairs plus the spread-out rest.
    assert_eq!(join("b", "h"), 9310.0);
    assert_eq!(join("g", "b"), 1353500.0);
    // `a` has no MCVs: the basic form, 1 / max(nd1, nd2).
    assert_eq!(join("a", "h"), 5000.0);
}

#[test]
fn defaults_without_statistics() {
    let none = |ty| Column {
        ty,
        stats: None,
        tuples: 5000.0,
        unique: false,
    };
    let c = none(TypeId::Int4);
    assert_eq!(eq_sel(&c, &int(1)), DEFAULT_EQ_SEL);
    assert_eq!(ineq_sel(&c, Ineq::Lt, &int(1)), DEFAULT_INEQ_SEL);
    let lo = ineq_sel(&c, Ineq::Gt, &int(1));
    let hi = ineq_sel(&c, Ineq::Lt, &int(9));
    assert_eq!(range_sel(&c, lo, hi), DEFAULT_RANGE_INEQ_SEL);
    assert_eq!(null_test_sel(&c, true), DEFAULT_UNK_SEL);
    // A small table: as many distinct values as rows.
    let small = Column { tuples: 50.0, ..c };
    assert_eq!(eq_sel(&small, &int(1)), 1.0 / 50.0);
    // Booleans have two values.
    assert_eq!(eq_sel(&none(TypeId::Bool), &Datum::Bool(true)), 0.5);
    // Comparisons with NULL never hold.
    assert_eq!(eq_sel(&c, &Datum::Null), 0.0);
    // A unique column: one row.
    let unique = Column { unique: true, ..c };
    assert_eq!(eq_sel(&unique, &int(1)), 1.0 / 5000.0);
}

#[test]
fn tuples_follow_density_and_pages() {
    let st = TableStats {
        reltuples: 5000.0,
        relpages: 46,
        columns: Vec::<Option<ColumnStats>>::new(),
    };
    assert_eq!(estimate_tuples(Some(&st), 46, 0.0), 5000.0);
    // The table doubled since: same density, twice the pages.
    assert_eq!(estimate_tuples(Some(&st), 92, 0.0), 10000.0);
    // Never analyzed, empty: 10 pages of 40-byte rows assumed.
    assert_eq!(
        estimate_tuples(None, 0, 40.0),
        ((8192.0 - 24.0) / 68.0 * 10.0f64).round()
    );
}
