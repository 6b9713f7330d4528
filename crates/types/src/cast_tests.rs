//! Expected values below came from PostgreSQL 15.
use super::*;
use crate::io::to_text;
use CastContext::*;
use TypeId::*;

fn c(text: &str, from: TypeId, to: SqlType, ctx: CastContext) -> PgResult<String> {
    let v = parse_text(text, SqlType::new(from))?;
    cast(v, from, to, ctx).map(|d| to_text(&d))
}

fn e(text: &str, from: TypeId, to: TypeId) -> (String, String) {
    let err = c(text, from, SqlType::new(to), Explicit).unwrap_err();
    (err.code.to_string(), err.message)
}

#[test]
fn contexts() {
    assert!(can_cast(Int4, Int8, Implicit));
    assert!(!can_cast(Int8, Int4, Implicit));
    assert!(can_cast(Int8, Int4, Assignment));
    assert!(!can_cast(Text, Int4, Assignment));
    assert!(can_cast(Text, Int4, Explicit));
    assert!(can_cast(Int4, Text, Assignment));
    assert!(!can_cast(Int4, Text, Implicit));
    assert!(can_cast(Unknown, Timestamp, Implicit));
    assert!(can_cast(Varchar, Text, Implicit));
    assert!(can_cast(Numeric, Float8, Implicit));
    assert!(!can_cast(Float8, Numeric, Implicit));
    assert!(can_cast(Date, TimestampTz, Implicit));
    assert!(!can_cast(Int4, Bool, Assignment));
    assert!(can_cast(Int4, Bool, Explicit));
    assert!(!can_cast(Interval, Int4, Explicit));
}

#[test]
fn values() {
    let s = SqlType::new;
    assert_eq!(c("t", Bool, s(Text), Explicit).unwrap(), "true");
    assert_eq!(
        c("t", Bool, SqlType::with_typmod(Varchar, -1), Explicit).unwrap(),
        "true"
    );
    assert_eq!(c("3.7", Numeric, s(Int4), Explicit).unwrap(), "4");
    assert_eq!(c("2.5", Float8, s(Int4), Explicit).unwrap(), "2");
    assert_eq!(c("-2.5", Float8, s(Int4), Explicit).unwrap(), "-2");
    assert_eq!(c("3.5", Float8, s(Int4), Explicit).unwrap(), "4");
    assert_eq!(c("300", Int2, s(Int8), Implicit).unwrap(), "300");
    assert_eq!(c("1.5", Float8, s(Numeric), Explicit).unwrap(), "1.5");
    assert_eq!(
        c(
            "12.345",
            Numeric,
            SqlType::with_typmod(Numeric, ((4 << 16) | 1) + 4),
            Explicit
        )
        .unwrap(),
        "12.3"
    );
    assert_eq!(
        c(
            "abcdef",
            Unknown,
            SqlType::with_typmod(Varchar, 7),
            Explicit
        )
        .unwrap(),
        "abc"
    );
    assert_eq!(
        c(
            "abcdef",
            Unknown,
            SqlType::with_typmod(Varchar, 7),
            Assignment
        )
        .unwrap_err()
        .code,
        "22001"
    );
    assert_eq!(c("ab  ", Bpchar, s(Text), Implicit).unwrap(), "ab");
    assert_eq!(c("1", Int4, s(Bool), Explicit).unwrap(), "t");
    assert_eq!(c("t", Bool, s(Int4), Explicit).unwrap(), "1");
    assert_eq!(
        c("2020-01-01 10:00", Timestamp, s(Date), Assignment).unwrap(),
        "2020-01-01"
    );
    assert_eq!(
        c("2020-01-01", Date, s(TimestampTz), Implicit).unwrap(),
        "2020-01-01 00:00:00+00"
    );
    assert_eq!(c("1e10", Float8, s(Float4), Assignment).unwrap(), "1e+10");
    assert_eq!(c("5", Text, s(Int4), Explicit).unwrap(), "5");
    assert_eq!(
        e("NaN", Numeric, Int4),
        ("0A000".into(), "cannot convert NaN to integer".into())
    );
    assert_eq!(
        e("1e39", Float8, Float4),
        ("22003".into(), "value out of range: overflow".into())
    );
    assert_eq!(
        e("x", Text, Int4),
        (
            "22P02".into(),
            "invalid input syntax for type integer: \"x\"".into()
        )
    );
    assert_eq!(
        e("32768", Int4, Int2),
        ("22003".into(), "smallint out of range".into())
    );
    assert_eq!(
        e("1e10", Float8, Int4),
        ("22003".into(), "integer out of range".into())
    );
    assert_eq!(
        e("70000", Unknown, Int2).1,
        "value \"70000\" is out of range for type smallint"
    );
}
