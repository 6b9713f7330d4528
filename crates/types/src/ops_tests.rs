//! Expected values below came from PostgreSQL 15.
use super::*;
use crate::SqlType;
use crate::io::{parse_text, to_text};

fn lit(s: &str, ty: TypeId) -> Datum {
    parse_text(s, SqlType::new(ty)).unwrap()
}

/// Resolves `l op r`, coercing the literals through the resolved operand types' input.
fn eval(l: &str, lt: TypeId, op_name: &str, r: &str, rt: TypeId) -> PgResult<String> {
    let o = resolve_binary(op_name, lt, rt)
        .unwrap_or_else(|| panic!("no operator {lt:?} {op_name} {rt:?}"));
    let a = crate::cast::cast(
        lit(l, lt),
        lt,
        SqlType::new(o.left),
        crate::cast::CastContext::Implicit,
    )?;
    let b = crate::cast::cast(
        lit(r, rt),
        rt,
        SqlType::new(o.right),
        crate::cast::CastContext::Implicit,
    )?;
    let v = (o.func)(&a, &b)?;
    assert_eq!(
        v.natural_type()
            .map(|t| t == o.result || (o.result == TypeId::Text)),
        Some(true),
        "{v:?} vs {:?}",
        o.result
    );
    Ok(to_text(&v))
}

use TypeId::*;

#[test]
fn arithmetic() {
    assert_eq!(eval("1", Int2, "+", "1", Int2).unwrap(), "2");
    assert_eq!(resolve_binary("+", Int2, Int2).unwrap().result, Int2);
    assert_eq!(resolve_binary("+", Int2, Int4).unwrap().result, Int4);
    assert_eq!(resolve_binary("+", Int4, Int8).unwrap().result, Int8);
    assert_eq!(resolve_binary("+", Int4, Numeric).unwrap().result, Numeric);
    assert_eq!(resolve_binary("+", Numeric, Float4).unwrap().result, Float8);
    assert_eq!(resolve_binary("+", Int8, Float4).unwrap().result, Float8);
    assert_eq!(resolve_binary("^", Int4, Int4).unwrap().result, Float8);
    assert_eq!(
        resolve_binary("-", TimestampTz, Unknown).unwrap().result,
        Interval
    );
    assert!(resolve_binary("+", Int4, Text).is_none());
    assert_eq!(eval("7", Int4, "%", "-3", Int4).unwrap(), "1");
    assert_eq!(eval("-7", Int4, "/", "2", Int4).unwrap(), "-3");
    assert_eq!(
        eval("10", Numeric, "/", "4", Int4).unwrap(),
        "2.5000000000000000"
    );
    assert_eq!(eval("1.5", Numeric, "*", "2.25", Numeric).unwrap(), "3.375");
    assert_eq!(eval("5", Int4, "#", "3", Int4).unwrap(), "6");
    assert_eq!(eval("2", Int4, "^", "10", Int4).unwrap(), "1024");
    let e = eval("2147483647", Int4, "+", "1", Int4).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22003", "integer out of range")
    );
    assert_eq!(
        eval("9223372036854775807", Int8, "+", "1", Int4)
            .unwrap_err()
            .message,
        "bigint out of range"
    );
    assert_eq!(
        eval("-32768", Int2, "*", "-1", Int2).unwrap_err().message,
        "smallint out of range"
    );
    assert_eq!(
        eval("-2147483648", Int4, "/", "-1", Int4)
            .unwrap_err()
            .message,
        "integer out of range"
    );
    assert_eq!(eval("-2147483648", Int4, "%", "-1", Int4).unwrap(), "0");
    assert_eq!(eval("1", Int4, "/", "0", Int4).unwrap_err().code, "22012");
    assert_eq!(
        eval("1.0", Numeric, "/", "0", Numeric).unwrap_err().code,
        "22012"
    );
    assert_eq!(
        eval("1", Float8, "/", "0", Float8).unwrap_err().code,
        "22012"
    );
    let e = eval("1e308", Float8, "*", "10", Float8).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22003", "value out of range: overflow")
    );
    assert_eq!(
        eval("0.0", Numeric, "^", "-1", Numeric).unwrap_err().code,
        "2201F"
    );
    assert_eq!(
        eval("-8", Float8, "^", "0.5", Float8).unwrap_err().code,
        "2201F"
    );
}

#[test]
fn numeric_display_scale() {
    // The product's scale is the sum of the operands' display scales, also when one side is 1;
    // a sum keeps the larger scale, also when one side is zero.
    for (l, lt, r, rt, want) in [
        ("1.00", Numeric, "2", Int4, "2.00"),
        ("1.0", Numeric, "1.0", Numeric, "1.00"),
        ("3.000", Numeric, "1", Int4, "3.000"),
        ("1", Int4, "3.000", Numeric, "3.000"),
        ("0.00", Numeric, "5", Int4, "0.00"),
        ("-1.0", Numeric, "1", Numeric, "-1.0"),
        ("12.50", Numeric, "2", Int4, "25.00"),
    ] {
        assert_eq!(eval(l, lt, "*", r, rt).unwrap(), want, "{l} * {r}");
    }
    assert_eq!(
        eval("0.0000000000000000000000", Numeric, "+", "1", Int4).unwrap(),
        "1.0000000000000000000000"
    );
    assert_eq!(
        eval("1", Int4, "-", "0.0000000000000000000000", Numeric).unwrap(),
        "1.0000000000000000000000"
    );
    assert_eq!(eval("1", Int4, "+", "0.00", Numeric).unwrap(), "1.00");
    assert_eq!(
        eval("0.000", Numeric, "-", "0.0", Numeric).unwrap(),
        "0.000"
    );
}

#[test]
fn unary() {
    let (_, _, neg) = resolve_unary("-", Int4).unwrap();
    assert_eq!(neg(&Datum::Int4(-5)).unwrap(), Datum::Int4(5));
    assert_eq!(
        neg(&Datum::Int4(i32::MIN)).unwrap_err().message,
        "integer out of range"
    );
    let (_, _, abs) = resolve_unary("@", Int4).unwrap();
    assert_eq!(abs(&Datum::Int4(-5)).unwrap(), Datum::Int4(5));
    let (_, _, not) = resolve_unary("~", Int4).unwrap();
    assert_eq!(not(&Datum::Int4(5)).unwrap(), Datum::Int4(-6));
}

#[test]
fn comparisons() {
    assert_eq!(eval("abc", Text, "<", "abd", Text).unwrap(), "t");
    assert_eq!(eval("B", Text, "<", "a", Unknown).unwrap(), "t");
    assert_eq!(eval("ab", Bpchar, "=", "ab  ", Bpchar).unwrap(), "t");
    assert_eq!(eval("ab ", Text, "=", "ab", Text).unwrap(), "f");
    assert_eq!(eval("1", Int4, "=", "1.0", Numeric).unwrap(), "t");
    assert_eq!(eval("1", Int4, "<", "1.5", Float8).unwrap(), "t");
    assert_eq!(eval("NaN", Float8, "=", "NaN", Float8).unwrap(), "t");
    assert_eq!(eval("NaN", Float8, ">", "Infinity", Float8).unwrap(), "t");
    assert_eq!(
        eval("2020-01-01", Date, "=", "2020-01-01", Timestamp).unwrap(),
        "t"
    );
    assert_eq!(eval("t", Bool, ">", "f", Bool).unwrap(), "t");
    assert_eq!(eval("\\x01", Bytea, "<", "\\x0100", Bytea).unwrap(), "t");
    assert_eq!(eval("1", Oid, "=", "1", Int4).unwrap(), "t");
    assert_eq!(eval("3", Int4, "<>", "4", Int8).unwrap(), "t");
    assert_eq!(compare(&Datum::Null, &Datum::Int4(1)), Ordering::Greater);
    assert_eq!(compare(&Datum::Int4(2), &Datum::Int8(10)), Ordering::Less);
}

#[test]
fn strings_and_like() {
    assert_eq!(eval("hello", Text, "~~", "h%o", Unknown).unwrap(), "t");
    assert_eq!(eval("hello", Text, "~~", "H%", Unknown).unwrap(), "f");
    assert_eq!(eval("hello", Text, "~~*", "H%", Unknown).unwrap(), "t");
    assert_eq!(eval("hello", Text, "!~~", "H%", Unknown).unwrap(), "t");
    assert_eq!(eval("a_c", Text, "~~", "a\\_c", Unknown).unwrap(), "t");
    assert_eq!(eval("abc", Text, "~~", "a\\_c", Unknown).unwrap(), "f");
    assert_eq!(eval("ab", Bpchar, "~~", "ab", Unknown).unwrap(), "t");
    assert_eq!(
        eval("ab%", Text, "~~", "ab\\", Unknown).unwrap_err().code,
        "22025"
    );
    assert_eq!(eval("é", Text, "~~", "_", Unknown).unwrap(), "t");
    assert_eq!(eval("a", Unknown, "||", "1", Int4).unwrap(), "a1");
    assert_eq!(eval("a", Text, "||", "t", Bool).unwrap(), "atrue");
    assert_eq!(
        eval("\\x01", Bytea, "||", "\\x02", Bytea).unwrap(),
        "\\x0102"
    );
    assert!(like_match(b"aaa", b"%a%a%a%").unwrap());
    assert!(!like_match(b"aa", b"%a%a%a%").unwrap());
}

#[test]
fn datetime_arithmetic() {
    assert_eq!(
        eval("2020-01-31 10:00", Timestamp, "+", "1 month", Interval).unwrap(),
        "2020-02-29 10:00:00"
    );
    assert_eq!(
        eval("2020-03-01", Timestamp, "-", "2020-02-28 12:00", Timestamp).unwrap(),
        "1 day 12:00:00"
    );
    assert_eq!(
        eval("2020-02-28", Date, "+", "2", Int4).unwrap(),
        "2020-03-01"
    );
    assert_eq!(
        eval("2020-03-01", Date, "-", "1", Int4).unwrap(),
        "2020-02-29"
    );
    assert_eq!(
        eval("2020-03-01", Date, "-", "2020-02-01", Date).unwrap(),
        "29"
    );
    assert_eq!(
        eval("2020-01-01", Timestamp, "-", "1 day 1 hour", Interval).unwrap(),
        "2019-12-30 23:00:00"
    );
    assert_eq!(
        eval("1 day", Interval, "+", "2 hours", Interval).unwrap(),
        "1 day 02:00:00"
    );
    assert_eq!(
        eval("3 days", Interval, "/", "2", Int4).unwrap(),
        "1 day 12:00:00"
    );
    assert_eq!(
        eval("2020-01-01", Date, "+", "1 day", Interval).unwrap(),
        "2020-01-02 00:00:00"
    );
}
