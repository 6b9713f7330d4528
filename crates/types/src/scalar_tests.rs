//! The unboxed operators against the Datum operators the resolver hands out: same results,
//! same errors, over the edges of every type.

use super::*;
use crate::Datum;
use crate::ops::resolve_binary;

fn datum(t: TypeId, v: i64) -> Datum {
    match t {
        TypeId::Int2 => Datum::Int2(v as i16),
        TypeId::Int4 => Datum::Int4(v as i32),
        _ => Datum::Int8(v),
    }
}

fn outcome(r: PgResult<i64>) -> Result<i64, (String, String)> {
    r.map_err(|e| (e.code.to_string(), e.message.clone()))
}

#[test]
fn integer_arithmetic_matches_the_datum_operators() {
    let edges = |t: TypeId| -> Vec<i64> {
        let (lo, hi) = match t {
            TypeId::Int2 => (i16::MIN as i64, i16::MAX as i64),
            TypeId::Int4 => (i32::MIN as i64, i32::MAX as i64),
            _ => (i64::MIN, i64::MAX),
        };
        vec![lo, lo + 1, -7, -1, 0, 1, 2, 7, hi - 1, hi]
    };
    for t in [TypeId::Int2, TypeId::Int4, TypeId::Int8] {
        for (name, op) in [
            ("+", Arith::Add),
            ("-", Arith::Sub),
            ("*", Arith::Mul),
            ("/", Arith::Div),
            ("%", Arith::Mod),
        ] {
            let f = resolve_binary(name, t, t).expect("operator").func;
            for &x in &edges(t) {
                for &y in &edges(t) {
                    let want = outcome(
                        f(&datum(t, x), &datum(t, y))
                            .map(|d| d.int_value().expect("an integer result")),
                    );
                    assert_eq!(
                        outcome(int_arith(op, t, x, y)),
                        want,
                        "{x} {name} {y} ({t:?})"
                    );
                }
            }
        }
    }
}

#[test]
fn float8_arithmetic_matches_the_datum_operators() {
    let vals = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        1e-300,
        1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for (name, op) in [
        ("+", Arith::Add),
        ("-", Arith::Sub),
        ("*", Arith::Mul),
        ("/", Arith::Div),
    ] {
        let f = resolve_binary(name, TypeId::Float8, TypeId::Float8)
            .expect("operator")
            .func;
        for &x in &vals {
            for &y in &vals {
                let want = f(&Datum::Float8(x), &Datum::Float8(y)).map(|d| match d {
                    Datum::Float8(v) => v.to_bits(),
                    _ => unreachable!(),
                });
                let got = float8_arith(op, x, y).map(f64::to_bits);
                assert_eq!(
                    got.map_err(|e| e.message.clone()),
                    want.map_err(|e| e.message.clone()),
                    "{x} {name} {y}"
                );
            }
        }
    }
}

#[test]
fn casts_round_half_to_even_and_check_ranges() {
    assert_eq!(float_to_int(2.5, TypeId::Int4).ok(), Some(2));
    assert_eq!(float_to_int(3.5, TypeId::Int4).ok(), Some(4));
    assert_eq!(float_to_int(-0.5, TypeId::Int4).ok(), Some(0));
    assert_eq!(
        float_to_int(2147483647.5, TypeId::Int4).map_err(|e| e.message.clone()),
        Err("integer out of range".to_string())
    );
    assert_eq!(
        float_to_int(f64::NAN, TypeId::Int8).map_err(|e| e.message.clone()),
        Err("bigint out of range".to_string())
    );
    assert_eq!(
        int_to_int(32768, TypeId::Int2).map_err(|e| e.message.clone()),
        Err("smallint out of range".to_string())
    );
    assert_eq!(int_to_int(-32768, TypeId::Int2).ok(), Some(-32768));
}

#[test]
fn comparisons_order_nan_above_every_number() {
    assert!(Compare::Eq.floats(f64::NAN, f64::NAN));
    assert!(Compare::Gt.floats(f64::NAN, f64::INFINITY));
    assert!(Compare::Lt.floats(1.0, 2.0));
    assert!(Compare::Ne.holds(1.cmp(&2)));
}
