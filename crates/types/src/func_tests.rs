//! Expected values below came from PostgreSQL 15.
use super::*;
use crate::SqlType;
use crate::io::{parse_text, to_text};
use TypeId::*;
use keel_common::{PgError, sqlstate};
use md5::Digest;

struct Ctx;
impl FuncContext for Ctx {
    fn transaction_timestamp(&self) -> i64 {
        1_000_000
    }
    fn statement_timestamp(&self) -> i64 {
        2_000_000
    }
    fn random(&mut self) -> f64 {
        0.25
    }
}

/// Calls `name(args...)` with literal arguments of the given types.
fn call(name: &str, args: &[(&str, TypeId)]) -> PgResult<String> {
    let types: Vec<TypeId> = args.iter().map(|a| a.1).collect();
    let f = resolve_function(name, &types).unwrap_or_else(|| panic!("no function {name}{types:?}"));
    let mut vals = Vec::new();
    for (i, (text, ty)) in args.iter().enumerate() {
        let v = if *text == "NULL" {
            Datum::Null
        } else {
            parse_text(text, SqlType::new(*ty)).unwrap()
        };
        vals.push(crate::cast::cast(
            v,
            *ty,
            SqlType::new(f.args[i]),
            crate::cast::CastContext::Implicit,
        )?);
    }
    if f.strict && vals.iter().any(|v| v.is_null()) {
        return Ok("NULL".into());
    }
    (f.func)(&vals, &mut Ctx).map(|d| to_text(&d))
}

#[test]
fn string_functions() {
    let t = |s: &'static str| (s, Text);
    let i = |s: &'static str| (s, Int4);
    assert_eq!(
        call("md5", &[t("")]).unwrap(),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    assert_eq!(
        call("md5", &[t("abc")]).unwrap(),
        "900150983cd24fb0d6963f7d28e17f72"
    );
    assert_eq!(
        call("md5", &[("abc", Bytea)]).unwrap(),
        "900150983cd24fb0d6963f7d28e17f72"
    );
    assert_eq!(call("length", &[t("héllo")]).unwrap(), "5");
    assert_eq!(call("length", &[("ab  ", Bpchar)]).unwrap(), "2");
    assert_eq!(call("octet_length", &[t("héllo")]).unwrap(), "6");
    assert_eq!(call("upper", &[t("abé")]).unwrap(), "ABé");
    assert_eq!(call("lower", &[t("ÉA")]).unwrap(), "Éa");
    assert_eq!(
        call("initcap", &[t("hello wORLD foo_bar")]).unwrap(),
        "Hello World Foo_Bar"
    );
    assert_eq!(call("substr", &[t("hello"), i("2")]).unwrap(), "ello");
    assert_eq!(call("substr", &[t("hello"), i("2"), i("2")]).unwrap(), "el");
    assert_eq!(call("substr", &[t("hello"), i("-1"), i("3")]).unwrap(), "h");
    assert_eq!(call("substr", &[t("hello"), i("0"), i("3")]).unwrap(), "he");
    assert_eq!(
        call("substr", &[t("hello"), i("1"), i("-1")])
            .unwrap_err()
            .code,
        "22011"
    );
    assert_eq!(call("strpos", &[t("hello"), t("ll")]).unwrap(), "3");
    assert_eq!(
        call("replace", &[t("abcabc"), t("b"), t("X")]).unwrap(),
        "aXcaXc"
    );
    assert_eq!(call("repeat", &[t("ab"), i("3")]).unwrap(), "ababab");
    assert_eq!(
        call(
            "concat",
            &[
                t("a"),
                ("NULL", Int4),
                ("1", Int4),
                ("1.50", Numeric),
                ("t", Bool)
            ]
        )
        .unwrap(),
        "a11.50t"
    );
    assert_eq!(
        call("concat_ws", &[t("-"), i("1"), ("NULL", Int4), i("2")]).unwrap(),
        "1-2"
    );
    assert_eq!(call("left", &[t("héllo"), i("2")]).unwrap(), "hé");
    assert_eq!(call("left", &[t("hello"), i("-2")]).unwrap(), "hel");
    assert_eq!(call("right", &[t("héllo"), i("2")]).unwrap(), "lo");
    assert_eq!(call("right", &[t("hello"), i("-2")]).unwrap(), "llo");
    assert_eq!(call("btrim", &[t("  hi  ")]).unwrap(), "hi");
    assert_eq!(call("btrim", &[t("xxhixx"), t("x")]).unwrap(), "hi");
    assert_eq!(call("ltrim", &[t("xxhi"), t("x")]).unwrap(), "hi");
    assert_eq!(call("lpad", &[t("hi"), i("5")]).unwrap(), "   hi");
    assert_eq!(call("lpad", &[t("hi"), i("5"), t("xy")]).unwrap(), "xyxhi");
    assert_eq!(call("rpad", &[t("hi"), i("5"), t("ab")]).unwrap(), "hiaba");
    assert_eq!(call("rpad", &[t("hi"), i("1")]).unwrap(), "h");
    assert_eq!(call("to_hex", &[i("255")]).unwrap(), "ff");
    assert_eq!(call("to_hex", &[i("-1")]).unwrap(), "ffffffff");
    assert_eq!(
        call("to_hex", &[("9223372036854775807", Int8)]).unwrap(),
        "7fffffffffffffff"
    );
    assert_eq!(call("chr", &[i("233")]).unwrap(), "é");
    assert_eq!(call("ascii", &[t("é")]).unwrap(), "233");
    assert_eq!(call("reverse", &[t("abc")]).unwrap(), "cba");
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), i("2")]).unwrap(),
        "b"
    );
    assert_eq!(
        call("split_part", &[t("a,b,c"), t(","), i("-1")]).unwrap(),
        "c"
    );
    assert_eq!(call("split_part", &[t("a,b"), t(","), i("5")]).unwrap(), "");
    assert_eq!(call("starts_with", &[t("abc"), t("ab")]).unwrap(), "t");
}

#[test]
fn math_functions() {
    let n = |s: &'static str| (s, Numeric);
    let f = |s: &'static str| (s, Float8);
    let i = |s: &'static str| (s, Int4);
    assert_eq!(resolve_function("round", &[Int4]).unwrap().result, Float8);
    assert_eq!(resolve_function("abs", &[Int4]).unwrap().result, Int4);
    assert_eq!(resolve_function("mod", &[Int4, Int4]).unwrap().result, Int4);
    assert_eq!(resolve_function("sqrt", &[Unknown]).unwrap().result, Float8);
    assert_eq!(call("abs", &[i("-5")]).unwrap(), "5");
    assert_eq!(call("round", &[n("2.567")]).unwrap(), "3");
    assert_eq!(call("round", &[n("2.567"), i("2")]).unwrap(), "2.57");
    assert_eq!(call("round", &[n("1234.5"), i("-2")]).unwrap(), "1200");
    assert_eq!(call("round", &[f("2.5")]).unwrap(), "2");
    assert_eq!(call("round", &[f("3.5")]).unwrap(), "4");
    assert_eq!(call("round", &[f("-2.5")]).unwrap(), "-2");
    assert_eq!(call("trunc", &[n("-2.7")]).unwrap(), "-2");
    assert_eq!(call("trunc", &[n("2.567"), i("1")]).unwrap(), "2.5");
    assert_eq!(call("floor", &[n("-2.5")]).unwrap(), "-3");
    assert_eq!(call("ceil", &[n("-2.5")]).unwrap(), "-2");
    assert_eq!(call("ceil", &[n("2.1")]).unwrap(), "3");
    assert_eq!(call("mod", &[i("-7"), i("3")]).unwrap(), "-1");
    assert_eq!(call("mod", &[n("7.5"), i("2")]).unwrap(), "1.5");
    assert_eq!(call("power", &[i("2"), i("10")]).unwrap(), "1024");
    assert_eq!(
        call("power", &[n("2.0"), i("3")]).unwrap(),
        "8.0000000000000000"
    );
    assert_eq!(call("sqrt", &[f("2")]).unwrap(), "1.4142135623730951");
    assert_eq!(call("sqrt", &[n("2")]).unwrap(), "1.414213562373095");
    assert_eq!(call("sqrt", &[n("16")]).unwrap(), "4.000000000000000");
    assert_eq!(call("sqrt", &[n("100.00")]).unwrap(), "10.000000000000000");
    assert_eq!(call("sqrt", &[f("-1")]).unwrap_err().code, "2201F");
    assert_eq!(call("exp", &[f("1")]).unwrap(), "2.718281828459045");
    assert_eq!(call("ln", &[f("2")]).unwrap(), "0.6931471805599453");
    assert_eq!(call("ln", &[n("2.0")]).unwrap(), "0.6931471805599453");
    assert_eq!(call("log", &[f("100")]).unwrap(), "2");
    assert_eq!(call("log", &[n("100.0")]).unwrap(), "2.0000000000000000");
    assert_eq!(
        call("log", &[i("2"), i("8")]).unwrap(),
        "3.0000000000000000"
    );
    assert_eq!(call("ln", &[f("0")]).unwrap_err().code, "2201E");
    assert_eq!(call("sign", &[n("-2.5")]).unwrap(), "-1");
    assert_eq!(call("sign", &[f("-2.5")]).unwrap(), "-1");
    assert_eq!(call("pi", &[]).unwrap(), "3.141592653589793");
}

#[test]
fn context_functions() {
    assert_eq!(call("now", &[]).unwrap(), "2000-01-01 00:00:01+00");
    assert_eq!(
        call("statement_timestamp", &[]).unwrap(),
        "2000-01-01 00:00:02+00"
    );
    assert_eq!(call("random", &[]).unwrap(), "0.25");
    assert_eq!(
        resolve_function("clock_timestamp", &[]).unwrap().volatility,
        Volatility::Volatile
    );
    assert_eq!(
        resolve_function("now", &[]).unwrap().volatility,
        Volatility::Stable
    );
    assert!(resolve_function("nosuch", &[]).is_none());
    assert!(resolve_function("md5", &[Int4]).is_none());
}

fn agg(name: &str, ty: &[TypeId], rows: &[&str]) -> (TypeId, String) {
    let a = resolve_aggregate(name, ty).unwrap();
    let mut acc = (a.new_accumulator)();
    for r in rows {
        let vals: Vec<Datum> = if ty.is_empty() {
            vec![]
        } else if *r == "NULL" {
            vec![Datum::Null]
        } else {
            vec![parse_text(r, SqlType::new(a.args[0])).unwrap()]
        };
        acc.update(&vals).unwrap();
    }
    (a.result, to_text(&acc.finish().unwrap()))
}

#[test]
fn aggregates() {
    assert_eq!(agg("count", &[], &["1", "2"]), (Int8, "2".into()));
    assert_eq!(agg("count", &[Int4], &["1", "NULL"]), (Int8, "1".into()));
    assert_eq!(agg("sum", &[Int4], &["1", "2"]), (Int8, "3".into()));
    assert_eq!(agg("sum", &[Int4], &[]), (Int8, "".into()));
    assert_eq!(
        agg("avg", &[Int4], &["1", "2"]),
        (Numeric, "1.5000000000000000".into())
    );
    assert_eq!(
        agg("avg", &[Int8], &["1", "2"]),
        (Numeric, "1.5000000000000000".into())
    );
    assert_eq!(
        agg("sum", &[Int8], &["9223372036854775807", "1"]),
        (Numeric, "9223372036854775808".into())
    );
    assert_eq!(
        agg("avg", &[Numeric], &["1.5", "2.5"]),
        (Numeric, "2.0000000000000000".into())
    );
    assert_eq!(agg("sum", &[Float4], &["1.5", "2.5"]), (Float4, "4".into()));
    assert_eq!(agg("avg", &[Float4], &["1.5", "2.5"]), (Float8, "2".into()));
    assert_eq!(agg("min", &[Text], &["b", "a", "NULL"]), (Text, "a".into()));
    assert_eq!(agg("max", &[Int4], &["1", "3", "2"]), (Int4, "3".into()));
    assert_eq!(agg("min", &[Int4], &["NULL"]), (Int4, "".into()));
    assert_eq!(
        agg("sum", &[Interval], &["1 day", "3 hours"]),
        (Interval, "1 day 03:00:00".into())
    );
    assert_eq!(
        agg("avg", &[Interval], &["1 day", "3 hours"]),
        (Interval, "13:30:00".into())
    );
    assert_eq!(agg("bool_and", &[Bool], &["t", "f"]), (Bool, "f".into()));
    assert_eq!(agg("bool_or", &[Bool], &["t", "f"]), (Bool, "t".into()));
    let a = resolve_aggregate("string_agg", &[Text, Unknown]).unwrap();
    let mut acc = (a.new_accumulator)();
    for v in [
        Datum::Text("a".into()),
        Datum::Null,
        Datum::Text("b".into()),
    ] {
        acc.update(&[v, Datum::Text(",".into())]).unwrap();
    }
    assert_eq!(acc.finish().unwrap(), Datum::Text("a,b".into()));
    let mut overflow = (resolve_aggregate("sum", &[Int4]).unwrap().new_accumulator)();
    let mut r = Ok(());
    for _ in 0..5 {
        r = r.and(overflow.update(&[Datum::Int4(i32::MAX)]));
    }
    assert!(r.is_ok());
}

/// Only implicit casts count when matching a call: float8 -> numeric is assignment-only, so
/// round(float8, int4) has no candidate (42883), and a float argument makes power() float8.
#[test]
fn resolution_uses_implicit_casts_only() {
    assert!(resolve_function("round", &[Float8, Int4]).is_none());
    assert!(resolve_function("trunc", &[Float4, Int4]).is_none());
    assert!(resolve_function("mod", &[Int4, Float8]).is_none());
    assert!(resolve_function("log", &[Float8, Numeric]).is_none());
    assert!(resolve_function("div", &[Float8, Int4]).is_none());
    assert_eq!(
        resolve_function("round", &[Int8, Unknown]).unwrap().result,
        Numeric
    );
    assert_eq!(
        resolve_function("power", &[Float8, Numeric])
            .unwrap()
            .result,
        Float8
    );
    assert_eq!(
        resolve_function("power", &[Int4, Numeric]).unwrap().result,
        Numeric
    );
}

#[test]
fn div_and_overlay() {
    let n = |s: &'static str| (s, Numeric);
    let t = |s: &'static str| (s, Text);
    let i = |s: &'static str| (s, Int4);
    assert_eq!(call("div", &[n("7.5"), n("2")]).unwrap(), "3");
    assert_eq!(call("div", &[n("-7"), n("2")]).unwrap(), "-3");
    assert_eq!(call("div", &[n("9"), n("0.4")]).unwrap(), "22");
    assert_eq!(call("div", &[n("1"), n("0")]).unwrap_err().code, "22012");
    assert_eq!(
        call("overlay", &[t("abcdef"), t("XY"), i("2"), i("3")]).unwrap(),
        "aXYef"
    );
    assert_eq!(
        call("overlay", &[t("abcdef"), t("XY"), i("2")]).unwrap(),
        "aXYdef"
    );
    assert_eq!(
        call("overlay", &[t("abc"), t("Z"), i("1"), i("-1")]).unwrap(),
        "Zabc"
    );
    assert_eq!(
        call("overlay", &[t("abc"), t("Z"), i("0")])
            .unwrap_err()
            .code,
        "22011"
    );
}

/// A context whose interrupt check fails after `allowed` calls.
struct Interrupting {
    checks: u32,
    allowed: u32,
}

impl FuncContext for Interrupting {
    fn transaction_timestamp(&self) -> i64 {
        0
    }
    fn statement_timestamp(&self) -> i64 {
        0
    }
    fn random(&mut self) -> f64 {
        0.0
    }
    fn check_interrupts(&mut self) -> PgResult<()> {
        self.checks += 1;
        if self.checks > self.allowed {
            return Err(PgError::new(sqlstate::QUERY_CANCELED, "interrupted"));
        }
        Ok(())
    }
}

fn call_with(name: &str, args: &[Datum], ctx: &mut Interrupting) -> PgResult<Datum> {
    let types: Vec<TypeId> = args
        .iter()
        .map(|d| d.natural_type().unwrap_or(Text))
        .collect();
    let f = resolve_function(name, &types).unwrap_or_else(|| panic!("no function {name}"));
    (f.func)(args, ctx)
}

/// Functions that make one pass over a huge string check for interrupts between pieces of
/// CHECK_BYTES, and their results do not depend on where the pieces are cut (multibyte
/// characters straddle the cuts here). Small inputs cost no check.
#[test]
fn long_string_functions_check_for_interrupts() {
    let unit = "aé€😀 Xy";
    let big = unit.repeat(3 * CHECK_BYTES / unit.len() + 7);
    let text = |s: &str| Datum::Text(s.to_string());
    let expected: Vec<(&str, Vec<Datum>, Datum)> = vec![
        (
            "length",
            vec![text(&big)],
            Datum::Int4(big.chars().count() as i32),
        ),
        ("upper", vec![text(&big)], text(&big.to_ascii_uppercase())),
        ("lower", vec![text(&big)], text(&big.to_ascii_lowercase())),
        (
            "reverse",
            vec![text(&big)],
            text(&big.chars().rev().collect::<String>()),
        ),
        (
            "replace",
            vec![text(&big), text("é"), text("[e]")],
            text(&big.replace('é', "[e]")),
        ),
        (
            "md5",
            vec![text(&big)],
            text(&format!("{:x}", md5::Md5::digest(big.as_bytes()))),
        ),
        (
            "repeat",
            vec![text(unit), Datum::Int4(400_000)],
            text(&unit.repeat(400_000)),
        ),
        (
            "rpad",
            vec![text("x"), Datum::Int4(3_000_000), text("ab")],
            text(
                &format!("x{}", "ab".repeat(1_500_000))
                    .chars()
                    .take(3_000_000)
                    .collect::<String>(),
            ),
        ),
    ];
    for (name, args, want) in &expected {
        let mut ctx = Interrupting {
            checks: 0,
            allowed: u32::MAX,
        };
        assert_eq!(&call_with(name, args, &mut ctx).unwrap(), want, "{name}");
        assert!(ctx.checks >= 2, "{name}: {} checks", ctx.checks);
        let mut ctx = Interrupting {
            checks: 0,
            allowed: 1,
        };
        let e = call_with(name, args, &mut ctx).unwrap_err();
        assert_eq!(e.code, sqlstate::QUERY_CANCELED, "{name}");
    }
    let mut ctx = Interrupting {
        checks: 0,
        allowed: 0,
    };
    assert_eq!(
        call_with("length", &[text(unit)], &mut ctx).unwrap(),
        Datum::Int4(7)
    );
    assert_eq!(ctx.checks, 0);
}

#[test]
fn date_trunc_units_and_errors() {
    use crate::datetime::{format_timestamp, parse_timestamp};
    let ts = |s: &str| Datum::Timestamp(parse_timestamp(s, false).unwrap());
    let trunc = |u: &str, s: &str| {
        let f = resolve_function("date_trunc", &[TypeId::Text, TypeId::Timestamp]).unwrap();
        let Datum::Timestamp(v) = (f.func)(&[Datum::Text(u.into()), ts(s)], &mut Ctx).unwrap()
        else {
            panic!("not a timestamp")
        };
        let mut out = String::new();
        format_timestamp(v, false, &mut out);
        out
    };
    // Expected values from PostgreSQL 15.
    assert_eq!(
        trunc("month", "2024-03-15 10:11:12.345678"),
        "2024-03-01 00:00:00"
    );
    assert_eq!(trunc("WEEK", "2024-03-15 10:11:12"), "2024-03-11 00:00:00");
    assert_eq!(
        trunc("microseconds", "2024-03-15 10:11:12.345678"),
        "2024-03-15 10:11:12.345678"
    );
    assert_eq!(
        trunc("milliseconds", "2024-03-15 10:11:12.345678"),
        "2024-03-15 10:11:12.345"
    );
    assert_eq!(
        trunc("quarter", "2024-08-15 10:11:12"),
        "2024-07-01 00:00:00"
    );
    assert_eq!(trunc("millennium", "2001-01-01"), "2001-01-01 00:00:00");
    assert_eq!(trunc("century", "0050-06-01 BC"), "0100-01-01 00:00:00 BC");
    assert_eq!(trunc("decade", "0005-01-01 BC"), "0011-01-01 00:00:00 BC");
    let f = resolve_function("date_trunc", &[TypeId::Text, TypeId::Timestamp]).unwrap();
    let err = |u: &str| {
        (f.func)(&[Datum::Text(u.into()), ts("2024-01-01")], &mut Ctx)
            .unwrap_err()
            .code
    };
    assert_eq!(err("epoch"), "22023");
    assert_eq!(err("timezone"), "0A000");
}
