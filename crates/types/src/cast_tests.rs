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
    (err.code.to_string(), err.message.clone())
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
    // int4 -> bool is `value <> 0`; smallint and bigint have no cast to boolean (42846).
    for (v, b) in [("10", "t"), ("2", "t"), ("-1", "t"), ("0", "f")] {
        assert_eq!(c(v, Int4, s(Bool), Explicit).unwrap(), b);
    }
    assert!(!can_cast(Int2, Bool, Explicit));
    assert!(!can_cast(Int8, Bool, Explicit));
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

#[test]
fn numeric_to_float_range() {
    let f8 = SqlType::new(Float8);
    let f4 = SqlType::new(Float4);
    assert_eq!(e("1e400", Numeric, Float8).0, "22003");
    assert_eq!(
        e("1e-400", Numeric, Float8).1,
        format!(
            "\"0.{}1\" is out of range for type double precision",
            "0".repeat(399)
        )
    );
    assert_eq!(
        e("1e50", Numeric, Float4).1,
        format!("\"1{}\" is out of range for type real", "0".repeat(50))
    );
    assert_eq!(e("1e-50", Numeric, Float4).0, "22003");
    // Denormals, zero and the special values convert.
    assert_eq!(c("1e-320", Numeric, f8, Explicit).unwrap(), "1e-320");
    assert_eq!(c("0", Numeric, f8, Implicit).unwrap(), "0");
    assert_eq!(c("NaN", Numeric, f4, Explicit).unwrap(), "NaN");
    assert_eq!(c("-Infinity", Numeric, f8, Explicit).unwrap(), "-Infinity");
}

#[test]
fn unknown_literal_length_rule_follows_context() {
    let v5 = SqlType::with_typmod(Varchar, 9);
    let c5 = SqlType::with_typmod(Bpchar, 9);
    assert_eq!(c("abcdef", Unknown, v5, Explicit).unwrap(), "abcde");
    assert_eq!(
        c("日本語ですか", Unknown, v5, Explicit).unwrap(),
        "日本語です"
    );
    assert_eq!(c("abcdef", Unknown, c5, Explicit).unwrap(), "abcde");
    assert_eq!(
        c("abcdef", Unknown, v5, Assignment).unwrap_err().code,
        "22001"
    );
    assert_eq!(c("abcde   ", Unknown, v5, Assignment).unwrap(), "abcde");
}
