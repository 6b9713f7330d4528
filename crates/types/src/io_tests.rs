//! Expected strings below came from PostgreSQL 15 (`select '<input>'::<type>`), TimeZone UTC.
use super::*;

fn out(text: &str, ty: SqlType) -> String {
    let d = parse_text(text, ty).unwrap();
    let mut s = String::new();
    format_text(&d, ty.id, &mut s);
    s
}

fn t(id: TypeId) -> SqlType {
    SqlType::new(id)
}

fn err(text: &str, ty: SqlType) -> (String, String) {
    let e = parse_text(text, ty).unwrap_err();
    (e.code.to_string(), e.message.clone())
}

#[test]
fn integers_and_bools() {
    assert_eq!(out(" 12 ", t(TypeId::Int4)), "12");
    assert_eq!(out("-32768", t(TypeId::Int2)), "-32768");
    assert_eq!(
        out("9223372036854775807", t(TypeId::Int8)),
        "9223372036854775807"
    );
    assert_eq!(
        out("-9223372036854775808", t(TypeId::Int8)),
        "-9223372036854775808"
    );
    assert_eq!(out("yes", t(TypeId::Bool)), "t");
    assert_eq!(out(" OFF ", t(TypeId::Bool)), "f");
    assert_eq!(
        err("abc", t(TypeId::Int4)),
        (
            "22P02".into(),
            "invalid input syntax for type integer: \"abc\"".into()
        )
    );
    assert_eq!(err("1.5", t(TypeId::Int4)).0, "22P02");
    assert_eq!(
        err("", t(TypeId::Int4)).1,
        "invalid input syntax for type integer: \"\""
    );
    assert_eq!(
        err("99999999999", t(TypeId::Int4)),
        (
            "22003".into(),
            "value \"99999999999\" is out of range for type integer".into()
        )
    );
    assert_eq!(
        err("70000", t(TypeId::Int2)).1,
        "value \"70000\" is out of range for type smallint"
    );
    assert_eq!(
        err("-9223372036854775809", t(TypeId::Int8)).1,
        "value \"-9223372036854775809\" is out of range for type bigint"
    );
    assert_eq!(
        err("x", t(TypeId::Bool)).1,
        "invalid input syntax for type boolean: \"x\""
    );
    assert_eq!(out("4294967295", t(TypeId::Oid)), "4294967295");
    assert_eq!(out("-1", t(TypeId::Oid)), "4294967295");
    assert_eq!(
        err("x", t(TypeId::Oid)).1,
        "invalid input syntax for type oid: \"x\""
    );
}

#[test]
fn floats() {
    let f8 = |s: &str| out(s, t(TypeId::Float8));
    let f4 = |s: &str| out(s, t(TypeId::Float4));
    assert_eq!(f8("0.1"), "0.1");
    assert_eq!(f8("1e20"), "1e+20");
    assert_eq!(f8("1e15"), "1e+15");
    assert_eq!(f8("1e14"), "100000000000000");
    assert_eq!(f8("123456789012345678"), "1.2345678901234568e+17");
    assert_eq!(f8("1e-4"), "0.0001");
    assert_eq!(f8("1e-5"), "1e-05");
    assert_eq!(f8("1.5e-7"), "1.5e-07");
    assert_eq!(f8("1.0e-10"), "1e-10");
    assert_eq!(f8("1234567890123456.0"), "1.234567890123456e+15");
    assert_eq!(f8("0.30000000000000004"), "0.30000000000000004");
    assert_eq!(f8("  1.5e3 "), "1500");
    assert_eq!(f8("inf"), "Infinity");
    assert_eq!(f8("nan"), "NaN");
    assert_eq!(f8("-0.0"), "-0");
    assert_eq!(f4("1e6"), "1e+06");
    assert_eq!(f4("123456"), "123456");
    assert_eq!(f4("1234567"), "1.234567e+06");
    assert_eq!(f4("1.23456789"), "1.2345679");
    assert_eq!(f4("3.4e38"), "3.4e+38");
    assert_eq!(f4("-inf"), "-Infinity");
    assert_eq!(f4("0.1"), "0.1");
    assert_eq!(
        err("abc", t(TypeId::Float8)),
        (
            "22P02".into(),
            "invalid input syntax for type double precision: \"abc\"".into()
        )
    );
    assert_eq!(
        err("1e400", t(TypeId::Float8)).1,
        "\"1e400\" is out of range for type double precision"
    );
    assert_eq!(err("1e-400", t(TypeId::Float8)).0, "22003");
    assert_eq!(
        err("1e50", t(TypeId::Float4)).1,
        "\"1e50\" is out of range for type real"
    );
    assert_eq!(err("1e-50", t(TypeId::Float4)).0, "22003");
}

#[test]
fn strings() {
    assert_eq!(out("ab", SqlType::with_typmod(TypeId::Bpchar, 8)), "ab  ");
    assert_eq!(
        out("abc  ", SqlType::with_typmod(TypeId::Varchar, 7)),
        "abc"
    );
    assert_eq!(
        err("abcd", SqlType::with_typmod(TypeId::Varchar, 7)),
        (
            "22001".into(),
            "value too long for type character varying(3)".into()
        )
    );
    assert_eq!(
        err("abcd", SqlType::with_typmod(TypeId::Bpchar, 7)).1,
        "value too long for type character(3)"
    );
    assert_eq!(
        out("héllo", SqlType::with_typmod(TypeId::Varchar, 9)),
        "héllo"
    );
    assert_eq!(out(&"x".repeat(70), t(TypeId::Name)).len(), 63);
    assert_eq!(out("\\x0aFF", t(TypeId::Bytea)), "\\x0aff");
    assert_eq!(out("a\\\\b\\001", t(TypeId::Bytea)), "\\x615c6201");
    assert_eq!(out("abc", t(TypeId::Bytea)), "\\x616263");
    assert_eq!(
        err("\\xzz", t(TypeId::Bytea)),
        ("22023".into(), "invalid hexadecimal digit: \"z\"".into())
    );
    assert_eq!(
        err("\\x123", t(TypeId::Bytea)).1,
        "invalid hexadecimal data: odd number of digits"
    );
    assert_eq!(
        err("a\\q", t(TypeId::Bytea)),
        ("22P02".into(), "invalid input syntax for type bytea".into())
    );
}

#[test]
fn numerics_and_datetimes() {
    assert_eq!(out("1.50", t(TypeId::Numeric)), "1.50");
    assert_eq!(
        out(
            "12.345",
            SqlType::with_typmod(TypeId::Numeric, ((4 << 16) | 2) + 4)
        ),
        "12.35"
    );
    assert_eq!(
        err("abc", t(TypeId::Numeric)).1,
        "invalid input syntax for type numeric: \"abc\""
    );
    assert_eq!(out("2024-02-29", t(TypeId::Date)), "2024-02-29");
    assert_eq!(
        out("1999-01-08 04:05:06.999999", t(TypeId::Timestamp)),
        "1999-01-08 04:05:06.999999"
    );
    assert_eq!(
        out("2020-01-01 00:00:00+05:30", t(TypeId::TimestampTz)),
        "2019-12-31 18:30:00+00"
    );
    assert_eq!(
        err("2020-13-01", t(TypeId::Date)).1,
        "date/time field value out of range: \"2020-13-01\""
    );
    assert_eq!(
        err("12:00", t(TypeId::Timestamp)),
        (
            "22007".into(),
            "invalid input syntax for type timestamp: \"12:00\"".into()
        )
    );
    assert_eq!(out("1 day 02:00", t(TypeId::Interval)), "1 day 02:00:00");
}

#[test]
fn binary_round_trip() {
    let cases: Vec<(Datum, TypeId)> = vec![
        (Datum::Bool(true), TypeId::Bool),
        (Datum::Int2(-5), TypeId::Int2),
        (Datum::Int4(123456), TypeId::Int4),
        (Datum::Int8(-1), TypeId::Int8),
        (Datum::Float4(1.5), TypeId::Float4),
        (Datum::Float8(-2.25), TypeId::Float8),
        (Datum::Text("héllo".into()), TypeId::Text),
        (Datum::Bytea(vec![0, 1, 255]), TypeId::Bytea),
        (Datum::Date(-3), TypeId::Date),
        (Datum::Timestamp(1234567), TypeId::Timestamp),
        (Datum::TimestampTz(-1234567), TypeId::TimestampTz),
        (
            Datum::Interval(Interval {
                months: 1,
                days: -2,
                micros: 3,
            }),
            TypeId::Interval,
        ),
        (Datum::Oid(42), TypeId::Oid),
        (
            Datum::Numeric(Box::new(Numeric::parse("-12345.678").unwrap())),
            TypeId::Numeric,
        ),
    ];
    for (d, ty) in cases {
        let mut b = Vec::new();
        format_binary(&d, ty, &mut b);
        assert_eq!(parse_binary(&b, SqlType::new(ty)).unwrap(), d, "{ty:?}");
    }
    assert_eq!(
        parse_binary(&[0, 1], SqlType::new(TypeId::Int4))
            .unwrap_err()
            .code,
        "08P01"
    );
    assert_eq!(
        parse_binary(&[0, 0, 0, 0, 1], SqlType::new(TypeId::Int4))
            .unwrap_err()
            .code,
        "22P03"
    );
    assert_eq!(
        parse_binary(&[0xff], SqlType::new(TypeId::Text))
            .unwrap_err()
            .code,
        "22021"
    );
}

/// `array_send` bytes of an int4[]: `dims` as (length, lower bound), `elems` as raw element
/// bytes (None = NULL).
fn int4_array(oid: u32, dims: &[(i32, i32)], elems: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(dims.len() as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&oid.to_be_bytes());
    for (len, lower) in dims {
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&lower.to_be_bytes());
    }
    for e in elems {
        match e {
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    b
}

/// Messages and SQLSTATEs taken from PostgreSQL 15's array_recv for the same bytes.
#[test]
fn array_binary_receive_errors_match_postgres() {
    let ty = t(TypeId::Int4Array);
    let one = 1i32.to_be_bytes();
    let fail = |b: &[u8]| {
        let e = parse_binary(b, ty).unwrap_err();
        (e.code.to_string(), e.message.clone())
    };
    let e = |code: &str, msg: &str| (code.to_string(), msg.to_string());
    assert_eq!(
        fail(&int4_array(0, &[(1, 1)], &[Some(&one)])),
        e(
            "42804",
            "binary data has array element type 0 (-) instead of expected 23 (integer)"
        )
    );
    assert_eq!(
        fail(&int4_array(9999, &[(1, 1)], &[Some(&one)])),
        e(
            "42804",
            "binary data has array element type 9999 (???) instead of expected 23 (integer)"
        )
    );
    // Past the built-in OIDs the element type is not checked: the data is read as int4.
    let v = parse_binary(&int4_array(12000, &[(1, 1)], &[Some(&one)]), ty).unwrap();
    assert_eq!(to_text(&v), "{1}");
    let size = e(
        "54000",
        "array size exceeds the maximum allowed (134217727)",
    );
    assert_eq!(fail(&int4_array(23, &[(-1, 1)], &[])), size);
    assert_eq!(fail(&int4_array(23, &[(65536, 1), (65536, 1)], &[])), size);
    assert_eq!(
        fail(&int4_array(
            23,
            &[(2, i32::MAX - 1)],
            &[Some(&one), Some(&one)]
        )),
        e("54000", "array lower bound is too large: 2147483646")
    );
    assert_eq!(
        fail(&int4_array(23, &[(2, 1)], &[Some(&one)])),
        e("08P01", "insufficient data left in message")
    );
    assert_eq!(
        fail(&int4_array(23, &[(1, 1)], &[Some(&[0, 1])])),
        e("08P01", "insufficient data left in message")
    );
    assert_eq!(
        fail(&int4_array(23, &[(2, 1)], &[None, Some(&[0; 8])])),
        e("22P03", "improper binary format in array element 2")
    );
    let mut trailing = int4_array(23, &[(1, 1)], &[Some(&one)]);
    trailing.push(0);
    assert_eq!(fail(&trailing), e("22P03", "incorrect binary data format"));
    let v = parse_binary(&int4_array(23, &[(2, -1)], &[Some(&one), None]), ty).unwrap();
    assert_eq!(to_text(&v), "[-1:0]={1,NULL}");
}
